"""Kernel rows on demand (KernelColumns, StackColumns) and the LRU row cache."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from sklearn.svm import SVC

from mklearn import MKLClassifier
from mklearn.extending import Capabilities
from mklearn.kernels import RBF, KernelBank, Laplacian, Linear, Polynomial, simple_mkl_kernels
from mklearn.kernels import columns as columns_module
from mklearn.kernels.cache import RowCache
from mklearn.kernels.columns import KernelColumns, StackColumns
from mklearn.solvers import SOLVERS, MKLResult, SolverInfo
from mklearn.svm import svc_dual

RNG = np.random.default_rng(0)
X = RNG.normal(size=(23, 5)) * np.array([1.0, 3.0, 0.1, 10.0, 1.0])

SPEC_SETS = {
    "linear": [Linear()],
    "polynomial": [Polynomial(degree=3, coef0=1.0), Polynomial(degree=2, gamma=0.3, coef0=0.0)],
    "rbf": [RBF(sigma=2.0), RBF(gamma=0.05)],
    "laplacian": [Laplacian(gamma=0.2)],
    "single_features": [
        RBF(sigma=1.0, features=2),
        Polynomial(degree=2, features=4),
        Linear(features=0),
        Laplacian(gamma=1.0, features=3),
    ],
    "feature_subsets": [
        RBF(sigma=1.5, features=(0, 3)),
        Linear(features=(0, 3)),
        Laplacian(gamma=0.1, features=(1, 2, 4)),
        Polynomial(degree=2, features=(4, 1)),
    ],
    "mixed_blocks": [
        RBF(sigma=3.0),
        Linear(features=1),
        RBF(sigma=0.7, features=(2, 3)),
        Polynomial(degree=3, features=1),
        Laplacian(gamma=0.3),
        Linear(features=(2, 3)),
    ],
}


def _close(actual, expected):
    scale = np.abs(expected).max()
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12 * scale)


@pytest.mark.parametrize("standardize", [False, True])
@pytest.mark.parametrize("name", list(SPEC_SETS))
def test_rows_match_full_stack(name, standardize):
    bank = KernelBank(SPEC_SETS[name], standardize=standardize)
    stack = bank.fit_transform(X)
    columns = KernelColumns(bank)
    assert (columns.n_samples, columns.n_kernels) == (23, len(SPEC_SETS[name]))
    assert columns.kernel_names == bank.kernel_names
    indices = np.array([5, 0, 22, 5])
    out = columns.rows(indices)
    assert out.shape == (bank.n_kernels, 4, 23)
    assert out.dtype == np.float64 and out.flags.c_contiguous
    _close(out, stack.transpose(2, 0, 1)[:, indices, :])
    diagonal = columns.diagonal()
    _close(diagonal, np.einsum("iik->ki", stack))
    # unit diagonals (RBF, Laplacian): each kernel's scale repeated, no 8 m n bytes
    assert (diagonal.strides[1] == 0) == (name in ("rbf", "laplacian"))


@pytest.mark.parametrize("name", list(SPEC_SETS))
def test_float32_bank_rows_are_single_precision_values(name):
    """A float32 bank's rows: RBF values from the vectorised single-precision exp, others
    rounded to single precision; every entry within single-precision rounding of the float64
    stack, and a float32 number (a row cache keeps it exactly in 4 bytes)."""
    stack = KernelBank(SPEC_SETS[name]).fit_transform(X)
    columns = KernelColumns(KernelBank(SPEC_SETS[name], dtype=np.float32).fit(X))
    indices = np.array([5, 0, 22])
    out = columns.rows(indices)
    assert out.dtype == np.float64
    expected = stack.transpose(2, 0, 1)[:, indices, :]
    np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-7 * np.abs(expected).max())
    assert np.array_equal(out, out.astype(np.float32))
    picked = columns.rows([7], kernels=[len(SPEC_SETS[name]) - 1, 0])
    np.testing.assert_array_equal(picked, columns.rows([7])[[len(SPEC_SETS[name]) - 1, 0]])


@pytest.mark.parametrize("name", list(SPEC_SETS))
def test_float32_stack_and_rows_are_the_same_numbers(name):
    """A float32 bank's stack and its rows computed on the fly hold the same numbers, bit for
    bit (the same single-precision exp): the stack path and the row path solve one problem."""
    bank = KernelBank(SPEC_SETS[name], dtype=np.float32).fit(X)
    stack = bank.fit_transform(X).transpose(2, 0, 1)
    rows = KernelColumns(bank).rows(np.arange(X.shape[0]))
    assert np.array_equal(stack, rows)


def test_rows_of_selected_kernels_in_requested_order():
    specs = SPEC_SETS["mixed_blocks"]
    bank = KernelBank(specs, standardize=True)
    stack = bank.fit_transform(X).transpose(2, 0, 1)
    columns = KernelColumns(bank)
    for kernels in ([4, 0, 2], [3], [5, 1, 3, 0, 2, 4], [4, 0, 2]):
        out = columns.rows([7, 1], kernels=kernels)
        _close(out, stack[kernels][:, [7, 1], :])


def test_subset_plans_equal_plans_built_from_the_specs():
    """A subset's plan is sliced from the full plan's arrays: it must be the plan built from
    the subset's specs, array for array (so rows are the same bit for bit)."""
    from mklearn.kernels.bank import _build_plan, _subset_plan

    specs = [s for name in SPEC_SETS for s in SPEC_SETS[name]]
    full = _build_plan(specs, X.shape[1])
    rng = np.random.default_rng(3)
    for size in (1, 3, len(specs) // 2, len(specs)):
        kernels = rng.permutation(len(specs))[:size]
        built = _build_plan([specs[k] for k in kernels], X.shape[1])
        sliced = _subset_plan(full, kernels)
        for field in ("block_cols", "block_multi", "block_ptr", "kinds", "gammas", "coef0s",
                      "degrees", "out_index"):
            np.testing.assert_array_equal(getattr(sliced, field), getattr(built, field))
            assert getattr(sliced, field).dtype == getattr(built, field).dtype
        assert sliced.multi_needs_sq == built.multi_needs_sq
        assert sliced.multi_needs_l1 == built.multi_needs_l1
        assert len(sliced.multi_columns) == len(built.multi_columns)
        for a, b in zip(sliced.multi_columns, built.multi_columns, strict=True):
            assert (a is None and b is None) or np.array_equal(a, b)


def test_recipe_rows_and_unit_trace():
    bank = KernelBank(simple_mkl_kernels().expand(X), standardize=True)
    stack = bank.fit_transform(X)
    columns = KernelColumns(bank)
    _close(columns.rows(np.arange(23)), stack.transpose(2, 0, 1))
    np.testing.assert_allclose(columns.diagonal().sum(axis=1), 1.0, rtol=1e-12)


def test_fit_only_bank_and_explicit_points():
    """A bank fitted (diagonals only) gives the same rows; X= re-applies its standardisation."""
    specs = SPEC_SETS["mixed_blocks"]
    stack = KernelBank(specs, standardize=True).fit_transform(X).transpose(2, 0, 1)
    bank = KernelBank(specs, standardize=True).fit(X)
    _close(KernelColumns(bank).rows([3, 4]), stack[:, [3, 4]])
    _close(KernelColumns(bank, X=X).rows([3, 4]), stack[:, [3, 4]])
    # rows over other points, with the fitted scales: a bank holding those points
    other = X[:10] + 0.5
    state = bank.fitted_state()
    state["X_fit"] = (other - state["mean"]) / state["scale"]
    held = KernelBank.from_fitted(
        specs, standardize=True, normalize="trace", dtype=np.float64, **state
    )
    expected = held.transform(other).transpose(2, 0, 1)
    _close(KernelColumns(bank, X=other).rows(np.arange(10)), expected)


def test_stack_columns_match_stack():
    bank = KernelBank(SPEC_SETS["mixed_blocks"])
    stack = bank.fit_transform(X)
    columns = StackColumns(stack)
    assert columns.n_kernels == 6 and columns.kernel_names[2] == "kernel[2]"
    np.testing.assert_array_equal(columns.rows([2, 9]), stack.transpose(2, 0, 1)[:, [2, 9]])
    np.testing.assert_array_equal(
        columns.rows([2, 9], kernels=[5, 1]), stack.transpose(2, 0, 1)[[5, 1]][:, [2, 9]]
    )
    np.testing.assert_array_equal(columns.diagonal(), np.einsum("iik->ki", stack))
    out32 = StackColumns(stack.astype(np.float32)).rows([0])
    assert out32.dtype == np.float64 and out32.flags.c_contiguous


@pytest.mark.parametrize("layout", ["kernel-major view", "C-contiguous", "Fortran", "float32"])
def test_stack_columns_read_any_layout_alike(layout):
    stack = KernelBank(SPEC_SETS["mixed_blocks"]).fit_transform(X)  # a kernel-major view
    given = {"kernel-major view": stack, "C-contiguous": np.ascontiguousarray(stack),
             "Fortran": np.asfortranarray(stack), "float32": stack.astype(np.float32)}[layout]
    expected = given.astype(np.float64)
    columns = StackColumns(given, kernel_sum=expected.sum(axis=2))
    points, d = np.array([1, 4, 9, 17]), np.array([0.1, 0.0, 0.3, 0.2, 0.0, 0.4])
    block = expected[np.ix_(points, points)]
    np.testing.assert_allclose(columns.combined_block(points, np.arange(6), np.full(6, 0.5)),
                               block.sum(axis=2) / 2, rtol=1e-12)  # from the kernel sum
    np.testing.assert_allclose(columns.combined_block(points, [0, 2, 3, 5], d[[0, 2, 3, 5]]),
                               block @ d, rtol=1e-12)
    part = columns.restricted(points)
    np.testing.assert_array_equal(part.rows(np.arange(4)), block.transpose(2, 0, 1))
    np.testing.assert_allclose(part.matrix(np.full(6, 0.5)), block.sum(axis=2) / 2, rtol=1e-12)
    np.testing.assert_array_equal(columns.diagonal(), np.einsum("iik->ki", expected))
    np.testing.assert_allclose(columns.matrix(d), expected @ d, rtol=1e-12)
    np.testing.assert_array_equal(columns.rows([2, 9]), expected.transpose(2, 0, 1)[:, [2, 9]])
    assert columns.kernel_major.flags.c_contiguous


def test_a_c_contiguous_stack_is_read_in_place_without_a_kernel_major_copy():
    stack = np.ascontiguousarray(KernelBank(SPEC_SETS["mixed_blocks"]).fit_transform(X))
    n, m = stack.shape[0], stack.shape[2]
    columns = StackColumns(stack)
    kernel_major = stack.transpose(2, 0, 1)
    np.testing.assert_array_equal(columns.rows([2, 9]), kernel_major[:, [2, 9]])
    np.testing.assert_array_equal(columns.rows([9, 2], kernels=[5, 1]),
                                  kernel_major[[5, 1]][:, [9, 2]])
    d = np.array([0.1, 0.0, 0.3, 0.2, 0.0, 0.4])
    np.testing.assert_allclose(columns.matrix(d), stack @ d, rtol=1e-12)
    # two rows of every kernel, two of two kernels, four kernels' values: no copy's pass
    assert columns.reads.values == 2 * m * n + 2 * 2 * n + 4 * n * n
    assert columns.kernel_view.base is stack or columns.kernel_view.base is stack.base
    assert not columns.kernel_view.flags.c_contiguous  # still the caller's layout


def test_bad_input():
    bank = KernelBank([Linear()])
    with pytest.raises(ValueError, match="fitted KernelBank"):
        KernelColumns(bank)
    bank.fit(X)
    with pytest.raises(ValueError, match="features"):
        KernelColumns(bank, X=X[:, :3])
    columns = KernelColumns(bank)
    with pytest.raises(ValueError, match=r"indices must be indices in \[0, 23\)"):
        columns.rows([23])
    with pytest.raises(ValueError, match="kernels must be indices"):
        columns.rows([0], kernels=[1])
    with pytest.raises(ValueError, match="integer"):
        columns.rows([0.5])
    with pytest.raises(ValueError, match="shape"):
        StackColumns(np.ones((3, 4, 2)))


class _CountingProvider:
    """A provider whose rows are recognisable and whose calls are counted."""

    n_samples = 50
    n_kernels = 4
    capabilities = Capabilities()  # no fast path: rows() returns new arrays
    value_dtype = np.dtype(np.float64)
    rows_per_call = 1

    def __init__(self):
        self.calls = []

    def rows(self, indices, kernels=None):
        self.calls.append(list(indices))
        out = np.empty((self.n_kernels, len(indices), self.n_samples))
        for a, i in enumerate(indices):
            out[:, a, :] = i
        return out


def test_cache_lru_eviction_and_byte_bound():
    provider = _CountingProvider()
    row_bytes = 8 * 4 * 50
    cache = RowCache(provider, cache_size=3.5 * row_bytes / 2**20)
    assert cache.capacity == 3
    for i in (0, 1, 2):
        assert cache.get(i)[0, 0] == i
    assert cache.get(0)[2, 7] == 0  # hit: 0 becomes most recent, 1 the least
    cache.get(3)  # evicts 1
    assert 1 not in cache and all(i in cache for i in (0, 2, 3))
    cache.get(1)  # miss, evicts 2
    assert 2 not in cache
    assert provider.calls == [[0], [1], [2], [3], [1]]
    assert (cache.hits, cache.misses) == (1, 5)
    assert cache.nbytes == 3 * row_bytes <= 3.5 * row_bytes
    row = cache.get(3)
    assert row.shape == (4, 50) and not row.flags.writeable
    assert cache.hits == 2


def test_cache_loads_rows_together_for_a_provider_paying_per_call():
    provider = _CountingProvider()
    provider.rows_per_call = 4
    row_bytes = 8 * 4 * 50
    cache = RowCache(provider, cache_size=50 * row_bytes / 2**20)  # every row fits
    assert cache.get(47)[0, 0] == 47
    assert provider.calls == [[47, 48, 49, 0]]  # the next missing rows, wrapping
    assert cache.get(48)[1, 3] == 48 and cache.get(0)[0, 0] == 0
    cache.get(1)
    assert provider.calls[-1] == [1, 2, 3, 4]
    cache.get(46)
    assert provider.calls[-1] == [46, 5, 6, 7]  # 47-49 and 0-4 are held
    assert cache.misses == 12 and cache.hits == 2 and len(cache) == 12
    for i in range(50):
        assert cache.get(i)[3, 49] == i
    # a cache that cannot hold every row loads one row per call (nothing useful evicted)
    small = RowCache(provider, cache_size=3.5 * row_bytes / 2**20)
    provider.calls.clear()
    small.get(10)
    small.get(11)
    assert provider.calls == [[10], [11]]


class _TouchingProvider(_CountingProvider):
    """Rows that cost ``compute`` seconds of a fake clock, plus ``touch`` when written into a
    slot never written before (a fresh slot's page faults)."""

    capabilities = Capabilities(fills_out=True)

    def __init__(self, compute, touch):
        super().__init__()
        self.compute, self.touch, self.now, self.seen = compute, touch, 0.0, set()

    def clock(self):
        return self.now

    def rows(self, indices, kernels=None, out=None):
        self.calls.append(list(indices))
        if out is None:  # rows copied into their slots by the cache
            out = np.empty((self.n_kernels, len(indices), self.n_samples))
        address = out.__array_interface__["data"][0]
        self.now += self.compute * len(indices) + self.touch * (address not in self.seen)
        self.seen.add(address)
        for a, i in enumerate(indices):
            out[:, a, :] = i
        return out


def _growing_cache(monkeypatch, compute, touch, start_rows=2, most_rows=20):
    from mklearn.kernels import cache as cache_module

    provider = _TouchingProvider(compute, touch)
    monkeypatch.setattr(cache_module.time, "perf_counter", provider.clock)
    row_mb = 8 * 4 * 50 / 2**20
    return provider, RowCache(provider, cache_size=(most_rows + 0.5) * row_mb,
                              start=(start_rows + 0.5) * row_mb)


def test_a_growing_cache_grows_at_once_where_most_rows_come_back(monkeypatch):
    """With ``start``, the cache holds the rows ``start`` MB hold. Rows read once never grow
    it; rows read again that twice its slots would have held, ``DENSE_SHARE`` of its loads
    in a window of ``GROWTH_WINDOW`` times its rows, double it whatever fresh slots cost;
    its rows stay right throughout."""
    from mklearn.kernels.cache import DENSE_SHARE, GROWTH_WINDOW

    provider, cache = _growing_cache(monkeypatch, compute=1.0, touch=50.0)
    assert cache.capacity == 2
    for i in range(10):  # each row read once: no row comes back
        assert cache.get(i)[0, 0] == i
    assert cache.capacity == 2 and len(cache) == 2 and cache.misses == 10
    reads = 0
    while cache.capacity == 2:  # rows 7-9 cycled through 2 slots: each read computes again
        assert cache.get(7 + reads % 3)[2, 9] == 7 + reads % 3
        reads += 1
    assert cache.capacity == 4 and cache.evicted_reads == 0  # not 8 or 16: 4 hold them
    assert 10 + reads >= GROWTH_WINDOW and reads >= DENSE_SHARE * (10 + reads)
    for read in range(9):  # rows 0-2: long evicted, then cycled through 4 slots
        assert cache.get(read % 3)[1, 1] == read % 3
    misses = cache.misses
    for _ in range(5):  # 3 rows now fit: nothing computed again, no growth
        for i in range(3):
            assert cache.get(i)[1, 5] == i
    assert cache.misses <= misses + 1 and cache.capacity == 4
    for _ in range(12):  # 25 rows through 4 slots: 8 would not hold them, no growth
        for i in range(25):
            assert cache.get(i)[3, 1] == i
    assert cache.capacity == 4
    # doubles up to cache_size, never for rows that cycle through more than it can hold
    for rows, grown in ((7, 8), (14, 16), (30, 16), (18, 20)):
        for _ in range(30):
            for i in range(rows):
                assert cache.get(i)[3, 1] == i
        assert cache.capacity == grown
    assert len(cache) == 18


def test_a_growing_cache_grows_past_twice_its_rows_when_twice_would_not_hold_them(monkeypatch):
    """Rows cycled through an LRU cache too small for them are all computed again, and so
    they would be with twice the slots: the cache grows by the least factor that holds
    them (here four)."""
    provider, cache = _growing_cache(monkeypatch, compute=1.0, touch=0.5, start_rows=4,
                                     most_rows=40)
    for _ in range(10):
        for i in range(14):
            assert cache.get(i)[2, 3] == i
    assert cache.capacity == 16 and len(cache) == 14
    misses = cache.misses
    for i in range(14):
        cache.get(i)
    assert cache.misses == misses


def test_a_growing_cache_grows_only_where_doubling_saves_a_share_of_its_loads(monkeypatch):
    """Fresh slots cost nothing more here, so the time rule alone would double the cache at
    the first row read again; it doubles only once the rows twice its slots would have
    held are ``GROWTH_SHARE`` of the rows computed since it last grew."""
    from mklearn.kernels.cache import GROWTH_SHARE

    provider, cache = _growing_cache(monkeypatch, compute=1.0, touch=0.0)
    for i in range(45):  # each row read once
        cache.get(i)
    cache.get(42)  # evicted two rows ago: four slots would have held it
    assert cache.capacity == 2 and 1 < GROWTH_SHARE * cache.misses
    reads = 0
    while cache.capacity == 2:  # 3 rows cycled through 2 slots
        assert cache.get(reads % 3)[1, 7] == reads % 3
        reads += 1
        assert reads < 20
    assert cache.capacity == 4 and reads >= GROWTH_SHARE * 45


def test_a_growing_cache_grows_where_rows_read_again_cost_more_than_fresh_slots(monkeypatch):
    """A sixth of the loads comes back one eviction later, below ``DENSE_SHARE``: the cache
    doubles once those rows' seconds (1 s each) reach the first touch of the two slots it
    adds (3 s each), after six of them; rows read again further back never grow it."""
    provider, cache = _growing_cache(monkeypatch, compute=1.0, touch=3.0)
    fresh, blocks = iter(range(10**6)), 0
    while cache.capacity == 2:
        rows = [next(fresh) % 50 for _ in range(5)]  # back only 45 evictions later
        for i in rows:
            assert cache.get(i)[0, 1] == i
        cache.get(rows[2])  # evicted one row ago
        blocks += 1
        assert blocks < 30
    assert cache.capacity == 4 and blocks == 6


def test_a_growing_cache_grows_at_once_when_fresh_slots_cost_nothing_more(monkeypatch):
    from mklearn.kernels.cache import GROWTH_WINDOW

    provider, cache = _growing_cache(monkeypatch, compute=1.0, touch=0.0)
    for i in range(3):
        cache.get(i)  # 0 evicted
    cache.get(0)
    assert cache.capacity == 2  # too few loads yet to weigh
    reads = 0
    while cache.capacity == 2:
        cache.get(1 + reads % 3)
        reads += 1
    assert cache.capacity == 4 and 4 + reads == GROWTH_WINDOW + 2  # two loads were fresh
    # rows loaded together count alike
    many = RowCache(provider, cache_size=10.5 * 8 * 4 * 50 / 2**20,
                    start=2.5 * 8 * 4 * 50 / 2**20)
    for read in range(GROWTH_WINDOW):
        many.get(read % 4)  # rows 0-3 through two slots
    assert many.capacity == 2
    last_evicted = [(GROWTH_WINDOW - 4) % 4, (GROWTH_WINDOW - 3) % 4]
    many.load_many(last_evicted)
    assert many.capacity == 4 and all(i in many for i in last_evicted)
    # never above cache_size, nor below two rows; without start, cache_size at once
    row_mb = 8 * 4 * 50 / 2**20
    assert RowCache(provider, cache_size=3.5 * row_mb, start=100 * row_mb).capacity == 3
    assert RowCache(provider, cache_size=3.5 * row_mb, start=0.0).capacity == 2
    assert RowCache(provider, cache_size=3.5 * row_mb).capacity == 3


def test_cache_with_kernel_columns_and_bad_budget():
    bank = KernelBank(SPEC_SETS["mixed_blocks"])
    stack = bank.fit_transform(X).transpose(2, 0, 1)
    cache = RowCache(KernelColumns(bank), cache_size=200)
    assert cache.capacity == 23  # never more rows than samples
    _close(cache.get(4), stack[:, 4, :])
    with pytest.raises(ValueError, match=r"at least 0.00210571 MB"):
        RowCache(KernelColumns(bank), cache_size=0.001)
    with pytest.raises(ValueError, match="at least"):
        RowCache(KernelColumns(bank), cache_size=float("nan"))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cache_refills_evicted_rows_in_place(dtype):
    bank = KernelBank(SPEC_SETS["mixed_blocks"], dtype=dtype).fit(X)
    provider = KernelColumns(bank)
    assert provider.value_dtype == dtype  # a float32 bank's rows are kept in 4 bytes
    row_mb = provider.value_dtype.itemsize * provider.n_kernels * provider.n_samples / 2**20
    cache = RowCache(provider, cache_size=2.5 * row_mb)
    assert cache.capacity == 2 and cache.store.dtype == dtype
    first = cache.get(0)
    cache.get(1)
    third = cache.get(2)  # evicts row 0 and refills its memory
    assert np.shares_memory(first, third) and not third.flags.writeable
    np.testing.assert_array_equal(third, provider.rows([2])[:, 0, :])
    np.testing.assert_array_equal(cache.get(0), provider.rows([0])[:, 0, :])
    with pytest.raises(ValueError, match="out must be"):
        provider.rows([1], out=np.empty((provider.n_kernels, 2, provider.n_samples)))


def _uniform_columns_solver(
    combination, y, C, regularizer, *, tol, max_iter, callback, cache_size, **options
):
    """A stand-in columns solver: the SVM on the average kernel, built from the provider."""
    _uniform_columns_solver.seen = (type(combination).__name__, cache_size)
    m, n = combination.n_kernels, combination.n_samples
    K = combination.rows(np.arange(n)).sum(axis=0) / m
    qp = svc_dual(K, y, C, tol=1e-8)
    return MKLResult(np.full(m, 1.0 / m), qp.alpha, -qp.rho, -qp.objective, np.nan, 1, 1, True)


@pytest.mark.parametrize("precomputed", [False, True])
def test_estimator_passes_a_column_provider(monkeypatch, precomputed):
    info = SolverInfo(
        _uniform_columns_solver, lambda regularizer: True, "anything", frozenset({"sum"}),
        input="columns",
    )
    monkeypatch.setitem(SOLVERS, "pgd", info)
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, 0)
    specs = SPEC_SETS["mixed_blocks"]
    bank = KernelBank(specs)
    stack = bank.fit_transform(X)
    kernels, train = ("precomputed", stack) if precomputed else (specs, X)
    model = MKLClassifier(kernels=kernels, solver="pgd", C=10.0, cache_size=7.0,
                          kernel_normalization="trace").fit(train, y)
    provider = "StackColumns" if precomputed else "KernelColumns"
    assert _uniform_columns_solver.seen == (provider, 7.0)
    reference = SVC(kernel="precomputed", C=10.0, tol=1e-8).fit(stack.mean(axis=2), y)
    X_test = RNG.normal(size=(6, 5))
    test_stack = bank.transform(X_test)
    test_input = test_stack if precomputed else X_test
    np.testing.assert_allclose(
        model.decision_function(test_input),
        reference.decision_function(test_stack.mean(axis=2)),
        rtol=1e-5,
        atol=1e-6,
    )


@pytest.mark.parametrize("name", ["rbf", "polynomial", "feature_subsets", "mixed_blocks"])
def test_sparse_points_use_csc_and_match_full_stack(name):
    """Mostly-zero data (as LIBSVM's a9a) takes the CSC inner products; same entries."""
    rng = np.random.default_rng(5)
    X_sparse = (rng.uniform(size=(40, 5)) < 0.15) * rng.uniform(1, 2, size=(40, 5))
    bank = KernelBank(SPEC_SETS[name])
    stack = bank.fit_transform(X_sparse)
    columns = KernelColumns(bank)
    _close(columns.rows([3, 17, 39]), stack.transpose(2, 0, 1)[:, [3, 17, 39], :])
    assert all(sparse for _, _, sparse in columns._blocks.values())
    assert columns._csc_blocks.keys() == columns._blocks.keys()  # the scatter pass ran


def test_rbf_kernels_by_table_build_no_csc_copy_of_the_blocks():
    """On integer sparse points the RBF rows come from tables, which read their own packed
    arrays: the blocks' CSC arrays (the scatter pass's) are never built."""
    rng = np.random.default_rng(7)
    X_counts = (rng.uniform(size=(50, 6)) < 0.2) * rng.integers(1, 4, size=(50, 6))
    bank = KernelBank([RBF(sigma=s) for s in (0.5, 2.0)] + [RBF(sigma=1.0, features=[0, 2, 4])])
    stack = bank.fit_transform(X_counts.astype(float))
    columns = KernelColumns(bank)
    assert columns.tabulated()
    # every row at once: enough values for the tables to pay (TABLE_MIN_USE)
    _close(columns.rows(np.arange(50)), stack.transpose(2, 0, 1))
    assert columns._blocks and all(sparse for _, _, sparse in columns._blocks.values())
    assert not columns._csc_blocks
    # one copy of each block's non-zeros: the CSR matrices are views of the packed arrays
    _, indices, data = columns._tables._csr_arrays
    position, csr, _ = columns._tables.sparse_parts()
    assert len(csr) == 2
    for part in csr:
        assert np.shares_memory(part.data, data) and np.shares_memory(part.indices, indices)
    held = [points for points, _, _ in columns._blocks.values() if scipy.sparse.issparse(points)]
    assert held and all(any(p is part for part in csr) for p in held)


def test_sparse_feature_blocks_keep_no_dense_copy():
    """A mostly-zero block of some features is kept as its non-zeros (CSR), not as a dense
    copy of those columns; rows and L1 distances (Laplacian) still match the stack."""
    rng = np.random.default_rng(6)
    X_sparse = (rng.uniform(size=(60, 8)) < 0.1) * rng.integers(1, 3, size=(60, 8))
    specs = [RBF(sigma=1.5, features=[0, 2, 5, 7]), RBF(sigma=0.7, features=[1, 2, 3]),
             Laplacian(gamma=0.3, features=[1, 2, 3])]
    bank = KernelBank(specs)
    stack = bank.fit_transform(X_sparse)
    columns = KernelColumns(bank)
    _close(columns.rows([0, 11, 59]), stack.transpose(2, 0, 1)[:, [0, 11, 59], :])
    points = [block[0] for block in columns._blocks.values()]
    assert points and all(scipy.sparse.issparse(p) for p in points)
    assert all(p.nnz == np.count_nonzero(p.toarray()) for p in points)


@pytest.mark.parametrize("size", [1, 2, 9, 23])
def test_quadratic_terms_in_bands_match_the_whole_block(size, monkeypatch):
    """The upper triangle in bands of rows (off-diagonal entries twice) equals v' K_k v
    over the whole support's block, for every kernel or a subset, with any band size."""
    from mklearn.kernels import passes

    bank = KernelBank(SPEC_SETS["mixed_blocks"] + SPEC_SETS["single_features"]).fit(X)
    provider = KernelColumns(bank)
    rng = np.random.default_rng(size)
    support = np.sort(rng.choice(X.shape[0], size, replace=False))
    v = rng.normal(size=size)
    stack = bank.fit_transform(X)[np.ix_(support, support)]
    expected = np.einsum("abk,a,b->k", stack, v, v)
    monkeypatch.setattr(passes, "SYMMETRIC_MIN_SUPPORT", 0)
    for bands in (1, 3, 8, 50):
        monkeypatch.setattr(passes, "SYMMETRIC_BANDS", bands)
        _close(passes.quadratic_terms(provider, support, v), expected)
        full = passes.quadratic_terms(provider, support, v)
        part = passes.quadratic_terms(provider, support, v, np.array([7, 0, 3]))
        assert np.array_equal(part, full[[7, 0, 3]])  # bit for bit, whatever the call holds
    # a provider that cannot restrict itself: the whole rows, columns picked
    whole = StackColumns(bank.fit_transform(X))
    _close(passes.quadratic_terms(whole, support, v), expected)


@pytest.mark.parametrize("parallel", [False, True])
def test_vectorised_exp_of_the_float64_rbf_rows(parallel):
    """``factor * exp(-gamma sq)`` by the arithmetic exp LLVM vectorises: within 2 units in
    the last place of numpy's exp over the whole range, 0 below exp(-708), exact at 0."""
    from mklearn.kernels._numba import rbf_rows, rbf_rows_parallel

    rng = np.random.default_rng(3)
    sq = np.concatenate([[0.0, 1e-300, 1e-12], rng.uniform(0, 1, 500), rng.uniform(0, 800, 500),
                         [707.9, 708.0, 708.1, 745.2, 1e6]]).reshape(1, 1, -1)
    neg_gammas = np.array([-1.0, -0.37, -1e-3])
    factors = np.array([1.0, 0.25, 3.0])
    out = np.full((3, 1, sq.shape[2]), np.nan)
    run = rbf_rows_parallel if parallel else rbf_rows
    run(sq, np.zeros(3, dtype=np.int64), neg_gammas, factors, np.array([2, 0, 1]), out,
        out.view(np.int64))
    for t, target in enumerate([2, 0, 1]):
        exponent = neg_gammas[t] * sq[0, 0]
        expected = np.where(exponent >= -708.0, factors[t] * np.exp(exponent), 0.0)
        np.testing.assert_allclose(out[target, 0], expected, rtol=4.5e-16, atol=0.0)
    assert out[2, 0, 0] == 1.0 and (out[2, 0, -3:] == 0.0).all() and out[2, 0, -4] > 0.0


@pytest.mark.parametrize("parallel", [False, True])
def test_vectorised_exp_of_the_float32_rbf_rows(parallel):
    """``factor * exp(-gamma sq)`` in float32 arithmetic: within ``1e-7 (2 + |x|)`` of the
    exact value (``x`` the exponent) down to exp(-86), 0 below it, exact at 0; written in
    place, into the targets only."""
    from mklearn.kernels._numba import EXP_MIN_F32, rbf_rows_f32, rbf_rows_f32_parallel

    rng = np.random.default_rng(5)
    sq = np.concatenate([[0.0, 1e-30, 1e-6], rng.uniform(0, 1, 500), rng.uniform(0, 100, 500),
                         [85.9, 86.0, 86.1, 104.0, 1e6]]).astype(np.float32).reshape(1, 1, -1)
    neg_gammas = np.array([-1.0, -0.37, -1e-3])
    factors = np.array([1.0, 1 / 208, 3.0])
    out = np.full((4, 1, sq.shape[2]), np.float32(7.0))
    run = rbf_rows_f32_parallel if parallel else rbf_rows_f32
    run(sq, np.zeros(3, dtype=np.int64), neg_gammas, factors, np.array([2, 0, 3]), out,
        out.view(np.int32))
    assert (out[1] == 7.0).all()  # not a target
    for t, target in enumerate([2, 0, 3]):
        exponent = np.float32(neg_gammas[t]) * sq[0, 0].astype(np.float64)
        kept = exponent > EXP_MIN_F32
        expected = factors[t] * np.exp(exponent)
        error = np.abs(out[target, 0] - expected)
        assert (error[kept] <= 1e-7 * (2 + np.abs(exponent[kept])) * expected[kept]).all()
        assert (out[target, 0, ~kept] == 0.0).all()
    assert out[2, 0, 0] == 1.0 and (out[2, 0, -3:] == 0.0).all() and out[2, 0, -6] > 0.0


@pytest.mark.parametrize("sparse", [False, True])
def test_float64_rbf_rows_on_threads_are_the_serial_rows(sparse, monkeypatch):
    """The same bits on numba's threads, for dense points and for mostly-zero ones (the CSC
    inner products and distances, split by query rows)."""
    from mklearn.kernels import threads

    rng = np.random.default_rng(4)
    points = rng.normal(size=(300, 4))
    if sparse:
        points *= rng.uniform(size=points.shape) < 0.15
    specs = [RBF(gamma=g) for g in (0.02, 1.0, 40.0)] + [
        RBF(gamma=0.5, features=1), RBF(gamma=0.3, features=(0, 2, 3)), Linear(features=(1, 2))]
    provider = KernelColumns(KernelBank(specs).fit(points))
    serial = provider.rows([0, 299, 17])
    if sparse:
        assert all(csc is not None for _, _, csc in provider._blocks.values())
    monkeypatch.setattr(threads, "PARALLEL_MIN_VALUES", 0)
    monkeypatch.setattr(threads, "PARALLEL_MIN_POINTS", 0)  # the scatter pass threaded too
    with threads.numba_threads(2):
        assert provider.rows([0, 299, 17]).tobytes() == serial.tobytes()


@pytest.mark.parametrize("threaded", [False, True])
def test_blocks_of_zeros_and_ones_count_common_features_as_the_stack_does(threaded,
                                                                          monkeypatch):
    """Dense 0/1 blocks (70 features: two words of bits, the second partial) give their
    inner products and distances by counting set bits: the stack's numbers bit for bit, on
    numba's threads too; a block with another value takes the product."""
    from mklearn.kernels import threads

    rng = np.random.default_rng(6)
    points = (rng.uniform(size=(60, 70)) < 0.4).astype(np.float64)
    points[:, 69] = 1.0  # the last bit of the partial word
    points[7, 5] = 2.0  # not 0/1: the blocks on all features and on 0-9 take the product
    specs = [RBF(gamma=0.05), Linear(features=tuple(range(10))),
             Polynomial(degree=2, features=(3, 65, 69)), RBF(gamma=0.2, features=(64, 66, 68)),
             Laplacian(gamma=0.1, features=(1, 2, 67))]
    bank = KernelBank(specs, standardize=False)
    stack = bank.fit_transform(points)
    provider = KernelColumns(bank)
    if threaded:
        monkeypatch.setattr(threads, "PARALLEL_MIN_VALUES", 0)
        monkeypatch.setattr(threads, "PARALLEL_MIN_POINTS", 0)
    with threads.numba_threads(2 if threaded else 1):
        rows = provider.rows([0, 59, 7, 31])
    np.testing.assert_array_equal(rows, stack.transpose(2, 0, 1)[:, [0, 59, 7, 31]])
    packed = [bits is not None for bits in provider._bit_blocks.values()]
    assert sum(packed) == len(packed) - 2  # every block but the two holding the 2
    part = provider.restricted([4, 9, 33])
    np.testing.assert_array_equal(part.rows([0, 2]), stack[np.ix_([4, 33], [4, 9, 33])]
                                  .transpose(2, 0, 1))


@pytest.mark.parametrize("threaded", [False, True])
def test_rbf_rows_on_one_feature_are_the_rows_by_distances(threaded, monkeypatch):
    """RBF kernels on one feature each, read straight from the points (no ``exp`` on a
    feature of two values, one a value and row on a feature of few values), give the bits of
    the path by squared distances and ``rbf_rows``:
    binary, constant, three-valued and continuous features, beside kernels on several
    features, a subset of the kernels, and the points' subsets (whose two-valued codes are
    their own)."""
    from mklearn.kernels import threads

    rng = np.random.default_rng(6)
    n = 150
    points = np.c_[rng.integers(0, 2, (n, 3)), np.full(n, 2.0), rng.integers(0, 3, n),
                   rng.normal(size=(n, 2))]
    specs = ([RBF(sigma=s, features=f) for f in range(points.shape[1]) for s in (0.3, 2.0)]
             + [RBF(sigma=3.0), Polynomial(degree=2, features=(0, 5)), RBF(gamma=0.7, features=6)])
    bank = KernelBank(specs, standardize=True, normalize="diagonal").fit(points)
    indices, kernels = [0, 149, 17, 60], [13, 2, 14, 0, 7, 16]
    by_distances = KernelColumns(bank)
    monkeypatch.setattr(by_distances, "_single_column_rbf_rows", lambda *args: False)
    expected = by_distances.rows(indices)
    provider = KernelColumns(bank)
    if threaded:
        monkeypatch.setattr(threads, "PARALLEL_MIN_VALUES", 0)
    with threads.numba_threads(2 if threaded else 1):
        assert provider.rows(indices).tobytes() == expected.tobytes()
        assert provider.rows(indices, kernels).tobytes() == expected[kernels].tobytes()
        even = np.arange(0, n, 2)
        subset = provider.restricted(even)
        _close(subset.rows([1, 5]), by_distances.rows(even[[1, 5]])[:, :, even])
    # codes of three binary features, the constant and the three-valued one (its levels)
    assert provider._single_features[2].shape == (5, n)
    np.testing.assert_array_equal(provider._single_features[5][4], np.unique(
        bank.prepare(points)[:, 4]))
    assert subset._single_features[2].shape == (5, even.size)  # its own points' codes


def test_rbf_rows_on_features_of_few_values_are_read_by_codes():
    """Features of 17 integer values (digits' pixels) and of 60 values among 200 points
    (above a quarter of them: by their values) give the bits of the path by squared
    distances; the coded ones keep a byte a point."""
    rng = np.random.default_rng(9)
    n = 200
    points = np.c_[rng.integers(0, 17, (n, 3)), rng.integers(0, 60, n), rng.normal(size=n)]
    specs = [RBF(sigma=s, features=f) for f in range(points.shape[1]) for s in (0.5, 3.0)]
    bank = KernelBank(specs, standardize=True, normalize="diagonal").fit(points)
    by_distances = KernelColumns(bank)
    by_distances._single_column_rbf_rows = lambda *args: False
    provider = KernelColumns(bank)
    indices = [0, 199, 31]
    assert provider.rows(indices).tobytes() == by_distances.rows(indices).tobytes()
    XT, row_of, codes, code_of, _, levels = provider._single_features
    assert (code_of[:3] >= 0).all() and (code_of[3:] < 0).all() and XT.shape == (2, n)
    assert codes.dtype == np.uint8 and levels.shape == (3, 17)


@pytest.mark.parametrize("threaded", [False, True])
def test_stacks_of_kernels_on_one_feature_in_one_call_are_the_block_by_block_ones(
        threaded, monkeypatch):
    """The bank's stacks (training, symmetric; test against training) take the RBF kernels
    on one feature each in one call: the bits of the block-by-block path, beside kernels on
    several features and other kinds."""
    from mklearn.kernels import bank as bank_module
    from mklearn.kernels import threads

    rng = np.random.default_rng(7)
    points, test = rng.normal(size=(90, 4)), rng.normal(size=(17, 4))
    points[:, 0] = rng.integers(0, 2, 90)
    specs = ([RBF(sigma=s, features=f) for f in range(4) for s in (0.5, 2.0)]
             + [RBF(sigma=2.0), Linear(features=1), Polynomial(degree=2, features=(0, 3))])
    bank = KernelBank(specs, standardize=True, normalize="diagonal").fit(points)
    if threaded:
        monkeypatch.setattr(threads, "PARALLEL_MIN_VALUES", 0)
    with threads.numba_threads(2 if threaded else 1):
        one_call = bank.transform(points), bank.transform(test, kernel_indices=[9, 0, 3])
        monkeypatch.setattr(bank_module, "_single_column_stack",
                            lambda plan, *args: np.zeros(plan.kinds.size, dtype=bool))
        by_block = bank.transform(points), bank.transform(test, kernel_indices=[9, 0, 3])
    for mine, theirs in zip(one_call, by_block, strict=True):
        assert mine.tobytes() == theirs.tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("threaded", [False, True])
def test_row_dots_are_each_row_against_its_own_vector(dtype, threaded, monkeypatch):
    """``row_dots`` (the RBF rows never stored; other kernels, and a float32 bank, through
    their rows) equals the rows times their vectors, for every kernel or a subset in any
    order, on one thread or several."""
    from mklearn.kernels import threads

    specs = SPEC_SETS["mixed_blocks"] + SPEC_SETS["single_features"]
    provider = KernelColumns(KernelBank(specs, dtype=dtype).fit(X))
    indices = np.array([4, 0, 22, 4, 9])
    V = np.random.default_rng(3).normal(size=(indices.size, X.shape[0]))
    if threaded:
        monkeypatch.setattr(threads, "PARALLEL_MIN_VALUES", 0)
    for kernels in (None, np.array([6, 0, 2])):
        expected = np.einsum("taj,aj->ta", provider.rows(indices, kernels), V)
        # rows stored whole, or a kernel at a time (those of a float32 bank, the non-RBF)
        for stored_bytes in (columns_module.STORED_ROWS_BYTES, 1):
            monkeypatch.setattr(columns_module, "STORED_ROWS_BYTES", stored_bytes)
            with threads.numba_threads(2 if threaded else 1):
                _close(provider.row_dots(indices, kernels, V), expected)


def test_cache_loads_many_rows_into_free_then_least_recent_slots():
    """``load_many`` fills new slots first, then recycles the least recently used ones (never
    those just loaded), in calls of at most ``LOAD_MANY_BYTES`` of rows."""
    from mklearn.kernels import cache as cache_module

    provider = _CountingProvider()
    row_bytes = 8 * 4 * 50
    cache = RowCache(provider, cache_size=5.5 * row_bytes / 2**20)
    cache.get(7)
    cache.get(8)
    cache.get(7)  # 8 is now the least recently used
    cache_module_batch = cache_module.LOAD_MANY_BYTES
    try:
        cache_module.LOAD_MANY_BYTES = 2 * row_bytes
        cache.load_many([1, 2, 3, 4])  # 3 new slots, then 8's
    finally:
        cache_module.LOAD_MANY_BYTES = cache_module_batch
    assert provider.calls[2:] == [[1, 2], [3, 4]]
    assert 8 not in cache and all(i in cache for i in (7, 1, 2, 3, 4))
    for i in (7, 1, 2, 3, 4):
        assert cache.get(i)[0, 0] == i
    assert cache.misses == 6 and len(cache) == cache.capacity == 5


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("threaded", [False, True])
def test_combined_rows_are_the_weighted_sum_of_the_rows(dtype, threaded, monkeypatch):
    """``combined_rows`` (the RBF kernels summed as evaluated, in column chunks; the others
    and a float32 bank through their rows) equals the weighted sum of the kernels' rows."""
    from mklearn.kernels import _numba, threads

    specs = SPEC_SETS["mixed_blocks"] + SPEC_SETS["single_features"]
    provider = KernelColumns(KernelBank(specs, dtype=dtype).fit(X))
    indices = np.array([4, 0, 22, 4, 9])
    kernels = np.array([6, 0, 2, 4, 9])
    weights = np.array([0.5, 0.25, 2.0, 1.0, 0.125])
    expected = np.tensordot(weights, provider.rows(indices, kernels), axes=(0, 0))
    if threaded:
        monkeypatch.setattr(threads, "PARALLEL_MIN_VALUES", 0)
    with threads.numba_threads(2 if threaded else 1):
        _close(provider.combined_rows(indices, kernels, weights), expected)
        monkeypatch.setattr(columns_module, "STORED_ROWS_BYTES", 1)  # their rows a kernel a part
        _close(provider.combined_rows(indices, kernels, weights), expected)
    # rows longer than one column chunk of the numba loop
    points = np.random.default_rng(6).normal(size=(2 * _numba.COMBINE_CHUNK + 5, 3))
    provider = KernelColumns(KernelBank([RBF(gamma=0.2), RBF(gamma=1.0, features=(0, 2)),
                                         RBF(gamma=3.0, features=1)]).fit(points))
    expected = np.tensordot(weights[:3], provider.rows([1, 7], [2, 0, 1]), axes=(0, 0))
    with threads.numba_threads(2 if threaded else 1):
        _close(provider.combined_rows([1, 7], [2, 0, 1], weights[:3]), expected)


def test_feature_block_bytes_cover_what_the_row_path_keeps_of_the_points():
    """The planner's bytes for the feature blocks (CSR and CSC non-zeros, index pointers,
    norms) cover what a tabulated provider holds of them, within a quarter."""
    from mklearn.kernels.bank import feature_block_bytes

    rng = np.random.default_rng(3)
    X_counts = ((rng.uniform(size=(400, 40)) < 0.1) * rng.integers(1, 3, size=(400, 40)))
    X_counts = X_counts.astype(float)
    halves = [np.sort(rng.choice(40, 20, replace=False)) for _ in range(2)]
    specs = ([RBF(sigma=s) for s in (1.0, 3.0)]
             + [RBF(sigma=2.0, features=tuple(h)) for h in halves])
    bank = KernelBank(specs).fit(X_counts)
    columns = KernelColumns(bank)
    columns.rows(np.arange(400))  # tables: the packed CSR and CSC arrays of the 3 blocks
    tables = columns._tables
    held = sum(a.nbytes for a in tables._packed if isinstance(a, np.ndarray))
    held += sum(part.indptr.nbytes for part in tables.sparse_parts()[1])
    held += sum(norms.nbytes for _, norms, _ in columns._blocks.values())
    planned = feature_block_bytes(specs, X_counts)
    assert held <= planned <= 1.25 * held
    # a standardised bank is dense: copies of the two half blocks, norms of all three
    assert feature_block_bytes(specs, X_counts, standardize=True) == 8 * 400 * (20 + 20 + 3)


@pytest.mark.parametrize("sparse", [False, True])
def test_single_feature_bytes_are_what_the_rows_keep_of_those_features(sparse):
    """The planner's bytes for the features of RBF kernels on one feature are the codes
    (a byte a point) with the values they index and the transposed values (eight a point)
    that the rows keep, counting a sparse column's implicit zeros as a value."""
    from mklearn.kernels.bank import feature_block_bytes

    rng = np.random.default_rng(8)
    X = np.c_[rng.integers(0, 2, (120, 2)), rng.normal(size=(120, 2)),
              rng.integers(0, 3, 120) * (rng.uniform(size=120) < 0.3)]
    specs = [RBF(sigma=1.0, features=f) for f in (0, 1, 2, 4)] + [RBF(sigma=2.0)]
    bank = KernelBank(specs, standardize=True).fit(X)
    provider = KernelColumns(bank)
    provider.rows([0, 1])
    XT, _, codes, _, _, levels = provider._single_features
    # two binary features and a three-valued one coded, one continuous; feature 3 has no kernel
    assert codes.shape == (3, 120) and XT.shape == (1, 120) and levels.shape == (3, 3)
    multi = feature_block_bytes(specs[-1:], X, standardize=True)
    points = scipy.sparse.csr_matrix(X) if sparse else X
    kept = codes.nbytes + XT.nbytes + levels.nbytes
    assert feature_block_bytes(specs, points, standardize=True) - multi == kept


def test_rows_times_of_a_c_contiguous_stack_read_only_where_v_is_not_zero():
    stack = np.ascontiguousarray(KernelBank(SPEC_SETS["mixed_blocks"]).fit_transform(X))
    n, m = stack.shape[0], stack.shape[2]
    v = np.zeros(n)
    v[[1, 5, 8]] = [0.5, -1.0, 2.0]
    kernels, rows = np.array([3, 0]), np.array([7, 2, 11])
    as_is, kernel_major = StackColumns(stack), StackColumns(stack.transpose(2, 0, 1).copy()
                                                            .transpose(1, 2, 0))
    np.testing.assert_allclose(as_is.kernel_rows_times(kernels, rows, v),
                               kernel_major.kernel_rows_times(kernels, rows, v), rtol=1e-12)
    assert as_is.reads.values == rows.size * 3 * m
