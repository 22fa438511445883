"""RBF values by table on integer points (binary or count features, as LIBSVM's a9a and w8a):
the same rows, sums of rows and row products as the arithmetic ``exp``, serial or threaded."""

from __future__ import annotations

import numpy as np
import pytest

from mklearn import MKLClassifier
from mklearn.kernels import RBF, KernelBank, Laplacian, Linear, rbf_tables, threads
from mklearn.kernels.columns import KernelColumns
from mklearn.kernels.rbf_tables import TABLE_MAX_SIZE, RBFTables
from mklearn.kernels.rbf_tables import squared_distance_bound as _squared_distance_bound


def _points(kind, n=300, d=12, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "binary_sparse":  # CSC blocks: the fused sparse loops
        return (rng.uniform(size=(n, d)) < 0.15).astype(float)
    if kind == "counts_dense":  # dense blocks: distances by BLAS, then tables
        return rng.integers(-2, 4, size=(n, d)).astype(float)
    return rng.normal(size=(n, d))


SPECS = [RBF(gamma=g) for g in (0.02, 0.3, 2.0)] + [
    RBF(gamma=0.5, features=(0, 3, 5, 7, 8)), RBF(gamma=0.05, features=(1, 2, 3, 9, 10, 11)),
    RBF(gamma=1.5, features=(0, 3, 5, 7, 8))]


def _direct(provider, monkeypatch):
    """The same provider with tables switched off."""
    monkeypatch.setattr(RBFTables, "layout", lambda self, plan, rbf: (0, None))
    return provider


def _close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-13 * np.abs(expected).max())


@pytest.mark.parametrize("kind", ["binary_sparse", "counts_dense"])
@pytest.mark.parametrize("threaded", [False, True])
@pytest.mark.parametrize("rows", [5, 1])
def test_tables_give_the_rows_of_the_arithmetic_exp(kind, threaded, rows, monkeypatch):
    """Rows bit for bit; sums of rows and rows times vectors (one per row, or one for all) to
    rounding; the table path is taken, and threads change no bit (one row: cut into spans of
    points: 192 and 108 here)."""
    X = _points(kind)
    provider = KernelColumns(KernelBank(SPECS).fit(X))
    plan, _ = provider._plan(None)
    size, sparse = provider._tables.layout(plan, np.arange(plan.kinds.size))
    assert size > 1 and (sparse is not None) == (kind == "binary_sparse")
    indices = np.array([0, 299, 17, 17, 150])[:rows]
    kernels, weights = np.array([4, 0, 2, 5]), np.array([0.5, 0.25, 2.0, 1.0])
    V = np.random.default_rng(1).normal(size=(indices.size, X.shape[0]))
    if threaded:
        monkeypatch.setattr(threads, "PARALLEL_MIN_VALUES", 0)
        monkeypatch.setattr(threads, "PARALLEL_MIN_POINTS", 0)
        monkeypatch.setattr(rbf_tables, "SUM_MIN_LOADS", 0)
        monkeypatch.setattr(rbf_tables, "SPAN_MIN_POINTS", 128)
    with threads.numba_threads(2 if threaded else 1):
        assert not threaded or rbf_tables.row_parts(1, X.shape[0]) == 2
        got = (provider.rows(indices), provider.combined_rows(indices, kernels, weights),
               provider.row_dots(indices, None, V), provider.row_dots(indices, kernels, V[:1]))
    with threads.numba_threads(1):
        serial = (provider.rows(indices), provider.combined_rows(indices, kernels, weights),
                  provider.row_dots(indices, None, V), provider.row_dots(indices, kernels, V[:1]))
    assert all(a.tobytes() == b.tobytes() for a, b in zip(got, serial, strict=True))
    direct = _direct(KernelColumns(KernelBank(SPECS).fit(X)), monkeypatch)
    rows = direct.rows(indices)
    assert got[0].tobytes() == rows.tobytes()
    _close(got[1], np.tensordot(weights, rows[kernels], axes=(0, 0)))
    _close(got[2], np.einsum("taj,aj->ta", rows, V))
    _close(got[3], rows[kernels] @ V[0])
    _close(got[1], direct.combined_rows(indices, kernels, weights))


@pytest.mark.parametrize("threaded", [False, True])
def test_row_filler_fills_the_rows_of_rows(threaded, monkeypatch):
    """A row cache fills its slots through the provider's row filler: the bits of
    ``rows([i])``; the filler declines (False) while distance rows are kept, and does not
    exist where rows are not all by tables."""
    from mklearn.kernels.cache import RowCache

    X = _points("binary_sparse")
    provider = KernelColumns(KernelBank(SPECS).fit(X))
    fill = provider.row_filler()
    assert fill is not None
    if threaded:
        monkeypatch.setattr(threads, "PARALLEL_MIN_VALUES", 0)
        monkeypatch.setattr(rbf_tables, "SPAN_MIN_POINTS", 64)
    cache = RowCache(provider, 1.0)
    with threads.numba_threads(2 if threaded else 1):
        got = np.stack([cache.get(i).copy() for i in (0, 299, 17, 150)])
        assert cache._fill is not False
    expected = np.moveaxis(provider.rows([0, 299, 17, 150]), 1, 0)
    assert got.tobytes() == expected.tobytes()
    provider.keep_distance_rows(1.0)
    assert fill(5, np.empty((len(SPECS), 1, X.shape[0]))) is False
    assert KernelColumns(KernelBank(SPECS + [Linear()]).fit(X)).row_filler() is None
    assert KernelColumns(KernelBank(SPECS).fit(_points("real"))).row_filler() is None


@pytest.mark.parametrize("threaded", [False, True])
def test_base_tables_give_the_base_rows(threaded, monkeypatch):
    """``tables[k, D_i[kernel_block[k], j]]`` (SMO-MKL's base rows by table) holds the bits of
    ``rows([i])``, and a row cache filled through the distance rows' filler holds those of
    their ``rows()``; no tables where a kernel is not RBF, the points are real, or the bank
    is float32."""
    from mklearn.kernels.cache import RowCache

    X = _points("binary_sparse")
    provider = KernelColumns(KernelBank(SPECS).fit(X))
    tables, kernel_block, distance_rows = provider.base_tables()
    indices = np.array([0, 299, 17])
    D = distance_rows.rows(indices)  # (blocks, rows, n)
    looked_up = tables[np.arange(len(SPECS))[:, None, None], D[kernel_block]]
    assert looked_up.tobytes() == provider.rows(indices).tobytes()
    if threaded:
        monkeypatch.setattr(threads, "PARALLEL_MIN_POINTS", 0)
        monkeypatch.setattr(rbf_tables, "SPAN_MIN_POINTS", 64)
    cache = RowCache(distance_rows, 0.01)
    with threads.numba_threads(2 if threaded else 1):
        got = np.stack([cache.get(i).copy() for i in indices], axis=1)
    assert cache._fill is not False
    assert got.tobytes() == D.tobytes()
    assert KernelColumns(KernelBank(SPECS + [Linear()]).fit(X)).base_tables() is None
    assert KernelColumns(KernelBank(SPECS).fit(_points("real"))).base_tables() is None
    single = KernelBank(SPECS, dtype="float32").fit(X)
    assert KernelColumns(single).base_tables() is None


def test_tables_only_for_integer_blocks_of_bounded_distance():
    """Real-valued points, a block with one real column, or distances beyond the largest
    table: no table. Mixed kernel kinds keep their own loops for the others."""
    assert _squared_distance_bound(np.array([[0.0, 1.0], [1.0, 1.0]])) == 2 * 2
    assert _squared_distance_bound(np.array([[0.0, -1.0], [2.0, 1.0]])) == 4 * 5
    assert _squared_distance_bound(np.array([[0.5, 1.0]])) == -1
    assert _squared_distance_bound(np.array([[0.0], [float(TABLE_MAX_SIZE)]])) == -1
    real = KernelColumns(KernelBank(SPECS).fit(_points("normal")))
    plan, _ = real._plan(None)
    assert real._tables.layout(plan, np.arange(plan.kinds.size)) == (0, None)
    X = _points("binary_sparse")
    X[:, 9] *= 0.5  # one block (features 1, 2, 3, 9, 10, 11) no longer integer
    mixed = KernelColumns(KernelBank(SPECS).fit(X))
    plan, _ = mixed._plan(None)
    assert mixed._tables.layout(plan, np.arange(plan.kinds.size))[0] == 0
    block = np.flatnonzero(np.isin(plan.out_index, [3, 5]))  # features 0, 3, 5, 7, 8
    assert mixed._tables.layout(plan, block)[0] > 0
    assert mixed._tables.layout(plan, np.flatnonzero(plan.out_index == 0))[0] == 0


def test_restricted_and_mixed_kinds_on_integer_points(monkeypatch):
    """A restricted copy (the support's block of a quadratic term) gives the block of the
    whole rows; Linear and Laplacian kernels next to table RBF kernels stay exact."""
    X = _points("binary_sparse", n=200)
    specs = SPECS + [Linear(), Laplacian(gamma=0.2, features=(0, 3, 5, 7, 8))]
    provider = KernelColumns(KernelBank(specs).fit(X))
    support = np.array([3, 8, 40, 41, 150, 199])
    sub = provider.restricted(support)
    _close(sub.rows(np.arange(support.size)), provider.rows(support)[:, :, support])
    V = np.random.default_rng(2).normal(size=(2, 200))
    direct = _direct(KernelColumns(KernelBank(specs).fit(X)), monkeypatch)
    _close(provider.row_dots([5, 9], None, V), direct.row_dots([5, 9], None, V))
    _close(provider.combined_rows([5, 9], [0, 6, 7], [1.0, 2.0, 0.5]),
           direct.combined_rows([5, 9], [0, 6, 7], [1.0, 2.0, 0.5]))


def test_copies_are_freed_without_the_cyclic_collector():
    """A restricted copy (made at every quadratic term) and a provider keeping distance rows
    are freed as soon as they are dropped, not when Python's cyclic collector runs: their
    tables hold no strong reference back. A pickled copy works and keeps no distance rows."""
    import gc
    import pickle
    import weakref

    X = _points("binary_sparse", n=200)
    provider = KernelColumns(KernelBank(SPECS).fit(X))
    support = np.array([3, 8, 40, 41, 150, 199])
    expected = provider.restricted(support).rows(np.arange(support.size))
    gc.disable()
    try:
        sub = provider.restricted(support)
        assert sub.rows(np.arange(support.size)).tobytes() == expected.tobytes()
        gone = weakref.ref(sub)
        del sub
        assert gone() is None
        keeper = KernelColumns(KernelBank(SPECS).fit(X))
        keeper.keep_distance_rows(1.0)
        keeper.rows([4, 9])
        gone = weakref.ref(keeper)
        del keeper
        assert gone() is None
    finally:
        gc.enable()
    provider.keep_distance_rows(1.0)
    copy = pickle.loads(pickle.dumps(provider))
    assert copy._tables._distances is None
    assert copy.rows([4, 9]).tobytes() == provider.rows([4, 9]).tobytes()
    copy.keep_distance_rows(1.0)
    assert copy.rows([4, 9]).tobytes() == provider.rows([4, 9]).tobytes()


@pytest.mark.parametrize("keep", [True, False])
def test_rows_of_k_d_by_a_row_maker_equal_the_provider_rows(keep, monkeypatch):
    """A row source of K(d) (RowKernels.kernel) fills the rows the SMO core misses through
    the provider's row maker (tables summed once per K(d)): the same bits as the
    provider's combined_rows, one row or several, distances kept or not; kernels of another
    kind get no maker and keep the general path."""
    from mklearn.kernels.operator import RowKernels

    X = _points("binary_sparse", n=200)
    provider = KernelColumns(KernelBank(SPECS).fit(X))
    operator = RowKernels(provider, cache_size=50.0)
    if not keep:
        provider.keep_distance_rows(0)
    assert (provider._tables._distances is not None) == keep
    d = np.array([0.5, 0.0, 1.5, 0.25, 0.0, 2.0])
    kernels = np.flatnonzero(d)
    expected = KernelColumns(KernelBank(SPECS).fit(X)).combined_rows(
        np.arange(200), kernels, d[kernels])
    calls = []
    combined_rows = KernelColumns.combined_rows
    monkeypatch.setattr(KernelColumns, "combined_rows",
                        lambda self, *a, **k: calls.append(1) or combined_rows(self, *a, **k))
    rows = operator.kernel(d)
    for i in (5, 0, 199, 5):
        rows.load(i)
    rows.cache.load_many(np.array([10, 11, 12, 13]))
    assert not calls  # every row through the maker
    for i in (5, 0, 199, 10, 11, 12, 13):
        assert rows.store[rows.slot_of[i], 0].tobytes() == expected[i].tobytes()
    mixed = KernelColumns(KernelBank(SPECS + [Linear()]).fit(X))
    assert mixed.combined_row_maker([0, 6], [1.0, 1.0]) is None
    assert provider.combined_row_maker([0, 2], [1.0, 1.0]) is not None
    real = KernelColumns(KernelBank(SPECS).fit(_points("normal")))
    assert real.combined_row_maker([0, 2], [1.0, 1.0]) is None


def test_a_restricted_copy_gathers_the_distances_its_parent_keeps(monkeypatch):
    """The support's block of a quadratic term (a restricted copy) reads the distance rows
    its parent keeps instead of computing them, when the parent keeps every row a chunk
    needs: the same rows and row dots as computed afresh."""
    X = _points("binary_sparse", n=200)
    support = np.arange(3, 200, 5)  # 40 points: tables pay on their block
    fresh = KernelColumns(KernelBank(SPECS).fit(X)).restricted(support)
    parent = KernelColumns(KernelBank(SPECS).fit(X))
    parent.keep_distance_rows(1.0)
    parent.rows(support)  # their distance rows now kept
    computed = []
    compute = RBFTables.compute_distances
    monkeypatch.setattr(RBFTables, "compute_distances",
                        lambda self, *a: computed.append(self) or compute(self, *a))
    sub = parent.restricted(support)
    V = np.random.default_rng(4).normal(size=(1, support.size))
    rows = np.arange(support.size)
    assert sub.rows(rows).tobytes() == fresh.rows(rows).tobytes()
    assert sub.row_dots(rows, None, V).tobytes() == fresh.row_dots(rows, None, V).tobytes()
    assert not any(t is sub._tables for t in computed)
    assert any(t is fresh._tables for t in computed)
    partly = KernelColumns(KernelBank(SPECS).fit(X))
    partly.keep_distance_rows(1.0)
    partly.rows(support[:3])  # some rows not kept: computed
    sub = partly.restricted(support)
    assert sub.rows(rows).tobytes() == fresh.rows(rows).tobytes()
    assert any(t is sub._tables for t in computed)


def test_rows_path_on_binary_data_reaches_the_stack_optimum():
    """SPG-GMKL on rows (tables) and on the precomputed stack: the same optimum."""
    rng = np.random.default_rng(3)
    X = (rng.uniform(size=(160, 20)) < 0.2).astype(float)
    y = np.where(X[:, :5].sum(axis=1) + 0.3 * rng.normal(size=160) > 1.0, 1, -1)
    specs = [RBF(gamma=g) for g in (0.05, 0.2, 1.0)] + [
        RBF(gamma=0.3, features=tuple(range(0, 20, 2)))]
    fits = [MKLClassifier(kernels=specs, C=1.0, tol=1e-8, kernel_storage=storage,
                          solver="spg").fit(X, y) for storage in ("rows", "stack")]
    rows, stack = fits
    assert abs(rows.objective_ - stack.objective_) <= 1e-6 * abs(stack.objective_)
    np.testing.assert_allclose(rows.kernel_weights_, stack.kernel_weights_, atol=1e-4)


def test_kept_distance_rows_serve_the_same_rows_and_recycle():
    """With room in the budget the row operator keeps the distances of sparse integer
    points (RowKernels); rows from them equal rows computed afresh, also when a call holds
    more rows than the cache (computed in chunks) and when rows are recycled. Without room
    (or on real-valued points) none are kept."""
    from mklearn.kernels.operator import RowKernels

    X = _points("binary_sparse", n=200)
    bank = KernelBank(SPECS).fit(X)
    kept = KernelColumns(bank)
    RowKernels(kept, cache_size=50.0)
    assert kept._tables._distances is not None and kept._tables._distances.capacity == 200
    fresh = KernelColumns(bank)
    indices = np.array([7, 3, 7, 199, 0])
    for _ in range(2):  # the second time from the cache
        assert kept.rows(indices).tobytes() == fresh.rows(indices).tobytes()
        _close(kept.combined_rows(indices, [5, 1], [0.5, 2.0]),
               fresh.combined_rows(indices, [5, 1], [0.5, 2.0]))
    small = KernelColumns(bank)
    small.keep_distance_rows(2 * small.distance_row_bytes() / 2**20)
    assert small._tables._distances.capacity == 2
    for rows in (indices, [1], [2], [1], [3, 4]):
        assert small.rows(rows).tobytes() == fresh.rows(rows).tobytes()
    none = KernelColumns(bank)
    RowKernels(none, cache_size=2 * 8 * len(SPECS) * 200 / 2**20 + 0.01)
    assert none._tables._distances is None
    real = KernelColumns(KernelBank(SPECS).fit(_points("normal")))
    assert real.distance_row_bytes() == 0


def test_distance_rows_follow_the_rows_a_solve_reads():
    """A budget too small for distances beside rows of K(d) for half the points keeps them
    once a solve has read few rows (those, with a margin, and their distances fit); a solve
    that needs more rows than fit beside them gets their room at once, for good. The rows
    stay the same."""
    from mklearn.kernels.operator import RowKernels

    X = _points("binary_sparse", n=200)
    bank = KernelBank(SPECS).fit(X)
    provider, fresh = KernelColumns(bank), KernelColumns(bank)
    operator = RowKernels(provider, cache_size=0.17)
    full = operator.combined_cache_size
    assert provider._tables._distances is None
    d = np.full(len(SPECS), 1.0 / len(SPECS))
    first = operator.kernel(d)
    full_rows = first.cache.capacity
    for i in range(30):  # a solve reading 30 rows
        first.load(i)
    second = operator.kernel(d)
    assert provider._tables._distances is not None
    assert 30 < second.cache.capacity < full_rows
    expected = np.tensordot(d, fresh.rows(np.arange(200)), axes=(0, 0))
    for i in range(full_rows):  # more rows than fit beside the distances
        second.load(i)
        np.testing.assert_allclose(second.store[second.slot_of[i], 0], expected[i],
                                   rtol=1e-12)
    assert provider._tables._distances is None and operator.combined_cache_size == full
    assert second.cache.capacity == full_rows and second.cache.misses == full_rows
    third = operator.kernel(d)
    for i in range(10):
        third.load(i)
    operator.kernel(d)
    assert provider._tables._distances is None



@pytest.mark.parametrize("values", ["binary", "signed_counts"])
@pytest.mark.parametrize("threaded", [False, True])
def test_support_products_match_the_support_rows(values, threaded, monkeypatch):
    """``K_k v`` by tables per squared norm plus the shared-feature corrections equals the
    sum of the support's rows, for all kernels or a subset."""
    rng = np.random.default_rng(3)
    mask = rng.uniform(size=(400, 12)) < 0.15
    X = mask * (1.0 if values == "binary" else rng.choice([-2.0, -1.0, 1.0, 3.0], size=mask.shape))
    provider = KernelColumns(KernelBank(SPECS).fit(X))
    support = np.sort(rng.choice(400, size=90, replace=False))
    v_s = rng.normal(size=support.size)
    if threaded:
        monkeypatch.setattr(threads, "PARALLEL_MIN_VALUES", 0)
    with threads.numba_threads(2 if threaded else 1):
        everything = provider.support_products(support, v_s)
        some = provider.support_products(support, v_s, np.array([5, 1, 3]))
    rows = provider.rows(support)
    expected = np.einsum("kbn,b->kn", rows, v_s)
    _close(everything, expected)
    _close(some, expected[[5, 1, 3]])


def test_support_products_leave_other_kernels_to_the_rows():
    """Not every kernel from tables (a linear kernel, or real-valued points): None."""
    X = _points("binary_sparse")
    support, v_s = np.arange(0, 300, 7), np.linspace(-1.0, 1.0, 43)
    mixed = KernelColumns(KernelBank(SPECS + [Linear()]).fit(X))
    real = KernelColumns(KernelBank(SPECS).fit(_points("real")))
    assert mixed.support_products(support, v_s) is None
    assert real.support_products(support, v_s) is None


@pytest.mark.parametrize("n_blocks", [1, 2, 3, 4, 5, 7, 8])
@pytest.mark.parametrize("parts", [0, 1, 3, 8])
def test_rows_of_a_sum_add_the_blocks_in_order(n_blocks, parts):
    """Serial (``parts`` 0), or threaded with each row cut into ``parts`` spans of points."""
    from mklearn.kernels import _rbf_tables as loops

    rng = np.random.default_rng(n_blocks)
    D = rng.integers(0, 40, size=(6, 9, 301)).astype(np.uint8)
    D[0, :, :3] = 60  # beyond the table: clipped to its last entry
    blocks = np.sort(rng.choice(9, size=n_blocks, replace=False)).astype(np.int64)
    tables = rng.random((n_blocks, 50)) * 10.0 ** rng.integers(-8, 8, size=(n_blocks, 1))
    slots = np.array([3, 0, 5, 5], dtype=np.int64)
    expected = np.zeros((slots.size, D.shape[2]))
    for a, slot in enumerate(slots):
        for i, b in enumerate(blocks):  # one block after the other, as float64 adds in order
            expected[a] += tables[i, np.minimum(D[slot, b], 49)]
    out = np.empty_like(expected)
    if parts:
        loops.lookup_combined_rows_parallel(D, slots, blocks, tables, out, parts)
    else:
        loops.lookup_combined_rows(D, slots, blocks, tables, out)
    np.testing.assert_array_equal(out, expected)
