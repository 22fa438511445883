"""The row-backed kernel operator: every solver reaches the stack path's optimum from rows
computed on demand, and memory is planned before any kernel is computed."""

import time

import numpy as np
import pytest

from mklearn import MKLClassifier, MKLRegressor
from mklearn.cli import main
from mklearn.datasets import load_dataset
from mklearn.formulation.combinations import SumOfKernels
from mklearn.kernels import RBF, KernelBank, Polynomial
from mklearn.kernels.cache import MB
from mklearn.kernels.columns import KernelColumns
from mklearn.kernels.memory_limits import stack_bytes
from mklearn.kernels.operator import RowKernels
from mklearn.memory import auto_cache_size, plan_kernel_storage
from mklearn.one_class import OneClassMKL

KERNELS = [RBF(sigma=s) for s in (1.0, 3.0, 10.0)] + [
    RBF(sigma=2.0, features=[j]) for j in range(6)] + [Polynomial(degree=2)]
TIGHT = {"tol": 1e-7, "max_iter": 5000}


@pytest.fixture(scope="module")
def data():
    X, y = load_dataset("ionosphere")
    rows = np.random.default_rng(0).choice(len(y), size=90, replace=False)
    return X[rows], y[rows]


def _pair(estimator, X, y, **params):
    fits = [estimator(kernels=KERNELS, kernel_storage=storage, **params, **TIGHT).fit(X, y)
            for storage in ("stack", "rows")]
    assert [f.kernel_storage_ for f in fits] == ["stack", "rows"]
    return fits


@pytest.mark.parametrize("solver, regularizer, options", [
    ("spg", "l1", None),
    ("spg", "lp", None),
    ("pgd", "l1", None),
    ("mirror", "l1", None),
    ("silp", "l1", None),
    ("silp", "l1", {"interleaved": True}),
])
def test_classifier_rows_reach_the_stack_optimum(data, solver, regularizer, options):
    X, y = data
    stack, rows = _pair(MKLClassifier, X, y, solver=solver, regularizer=regularizer, p=1.5,
                        C=10.0, solver_options=options)
    assert rows.objective_ == pytest.approx(stack.objective_, rel=1e-6)
    np.testing.assert_allclose(rows.decision_function(X), stack.decision_function(X),
                               atol=1e-3)


@pytest.mark.parametrize("solver", ["spg", "silp"])
def test_regressor_and_one_class_rows_reach_the_stack_optimum(data, solver):
    X, _ = data
    target = X[:, 2] - X[:, 3]
    stack, rows = _pair(MKLRegressor, X, target, solver=solver, regularizer="l1", C=5.0,
                        epsilon=0.05)
    assert rows.objective_ == pytest.approx(stack.objective_, rel=1e-6)
    stack, rows = _pair(OneClassMKL, X, None, solver=solver, nu=0.2)
    assert rows.objective_ == pytest.approx(stack.objective_, rel=1e-6)


@pytest.mark.parametrize("cache_size", [0.1, 1.0])  # support rows cached, or the S x S block
def test_row_operator_quadratic_terms_match_the_stack(data, cache_size):
    X, _ = data
    bank = KernelBank(KERNELS, standardize=True, normalize="trace")
    stack = SumOfKernels(bank.fit_transform(X))
    rows = RowKernels(KernelColumns(bank), cache_size=cache_size)
    v = np.random.default_rng(1).normal(size=X.shape[0]) * (np.arange(X.shape[0]) % 3 == 0)
    d = np.random.default_rng(2).dirichlet(np.ones(len(KERNELS)))
    np.testing.assert_allclose(rows.kernel_gradient(d, v), stack.kernel_gradient(d, v),
                               rtol=1e-10)
    np.testing.assert_allclose(rows.kernel_gradient(d, v, [2, 5]),
                               stack.kernel_gradient(d, v, np.array([2, 5])), rtol=1e-10)
    P = rows.products(v, np.array([1, 4]))
    np.testing.assert_allclose(P, stack.kernel_major[[1, 4]] @ v, atol=1e-12)
    if rows.base.capacity < 30:  # the support (30 points) does not fit: no products
        assert rows.gradient_and_products(v) is None
    np.testing.assert_allclose(rows.kernel(d) @ v, stack.kernel(d) @ v, atol=1e-12)
    idx = np.array([3, 7, 11])
    np.testing.assert_allclose(rows.kernel(d).submatrix(idx), stack.matrix(d)[np.ix_(idx, idx)],
                               atol=1e-12)


def test_storage_plan_picks_rows_when_the_stack_does_not_fit():
    n, m = 20_000, 50
    assert stack_bytes(n, m, 8) > 150 * 2**30
    assert plan_kernel_storage(n, m, itemsize=8, cache_size=200, memory_budget=1024) == "rows"
    assert plan_kernel_storage(100, m, itemsize=8, cache_size=200, memory_budget=1024) == "stack"
    with pytest.raises(ValueError, match=r"kernel_storage='auto' or 'rows'"):
        plan_kernel_storage(n, m, itemsize=8, cache_size=200, storage="stack",
                            memory_budget=1024)
    with pytest.raises(ValueError, match=r"need .* MB even with rows computed on demand"):
        plan_kernel_storage(n, m, itemsize=8, cache_size=200, memory_budget=100)


def test_memory_refusal_comes_before_any_kernel_and_the_cli_exits_2(data, capsys):
    X, y = data
    model = MKLClassifier(memory_budget=0.05)
    with pytest.raises(ValueError, match=r"above the memory budget of 0.05 MB"):
        model.fit(X, y)
    assert not hasattr(model, "kernel_weights_")
    capsys.readouterr()
    assert main(["fit", "--dataset", "sonar", "--memory-budget", "0.5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "memory budget" in err[0] and "Traceback" not in err[0]


def test_verbose_output_says_which_storage(data, capsys):
    X, y = data
    MKLClassifier(kernels=KERNELS, kernel_storage="rows", verbose=1, C=10.0).fit(X, y)
    assert "as rows computed on demand" in capsys.readouterr().err


def test_threaded_kernel_rows_equal_the_serial_ones(data, monkeypatch):
    from mklearn.kernels import threads
    from mklearn.kernels.threads import numba_threads

    X, _ = data
    bank = KernelBank(KERNELS, standardize=True, normalize="trace").fit(X)
    provider = KernelColumns(bank)
    serial = provider.rows([0, 5, 17])
    monkeypatch.setattr(threads, "PARALLEL_MIN_VALUES", 0)
    with numba_threads(2) as used:
        assert used == min(2, threads.numba.config.NUMBA_NUM_THREADS)
        np.testing.assert_array_equal(provider.rows([0, 5, 17]), serial)


def test_a_fit_runs_blas_on_its_threads():
    from threadpoolctl import threadpool_info

    from mklearn.kernels.threads import blas_threads, fit_threads

    def blas():
        return {pool["num_threads"] for pool in threadpool_info()
                if pool["user_api"] == "blas"}

    before = blas()
    with fit_threads(None) as used:
        assert used == 1 and blas() <= {1}
    with blas_threads(1):
        assert blas() <= {1}
    assert blas() == before


def test_every_estimator_solves_with_blas_on_its_threads(monkeypatch):
    from contextlib import contextmanager

    from threadpoolctl import threadpool_info

    import mklearn.estimators.classifier as classifier
    import mklearn.estimators.regressor as regressor
    import mklearn.one_class as one_class
    from mklearn.kernels.threads import fit_threads

    seen = []

    @contextmanager
    def watched(n_jobs):
        with fit_threads(n_jobs) as used:
            seen.append({pool["num_threads"] for pool in threadpool_info()
                         if pool["user_api"] == "blas"})
            yield used

    for module in (classifier, regressor, one_class):
        monkeypatch.setattr(module, "fit_threads", watched)
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    MKLClassifier(kernels=KERNELS[:2]).fit(X, y)
    MKLRegressor(kernels=KERNELS[:2]).fit(X, X[:, 1])
    OneClassMKL(kernels=KERNELS[:2]).fit(X)
    assert len(seen) == 3 and all(threads <= {1} for threads in seen)


def test_rows_of_a_sparse_block_are_read_from_its_arrays():
    import scipy.sparse

    from mklearn.kernels.columns import _dense_rows

    points = scipy.sparse.random(30, 7, density=0.2, format="csr", random_state=0)
    for rows in ([4], [0, 29, 4, 4], []):
        indices = np.asarray(rows, dtype=np.int64)
        np.testing.assert_array_equal(_dense_rows(points, indices),
                                      points.toarray()[indices])


def test_sparse_input_gives_the_dense_result_and_clear_errors():
    import scipy.sparse

    X, y = load_dataset("ionosphere")
    X, y = X[:80], y[:80]
    X[np.abs(X) < 0.3] = 0.0  # mostly zero, as LIBSVM files are
    sparse = scipy.sparse.csr_matrix(X)
    for storage in ("stack", "rows"):
        params = dict(kernels=KERNELS, kernel_storage=storage, C=10.0, tol=1e-6)
        dense = MKLClassifier(**params).fit(X, y)
        model = MKLClassifier(**params).fit(sparse, y)
        assert model.objective_ == pytest.approx(dense.objective_, rel=1e-9)
        np.testing.assert_allclose(model.decision_function(sparse), dense.decision_function(X),
                                   atol=1e-9)
    bad = sparse.copy()
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MKLClassifier(kernels=KERNELS).fit(bad, y)
    bad.data[0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        MKLClassifier(kernels=KERNELS).fit(bad, y)
    wide = scipy.sparse.random(80, 10**6, density=1e-5, format="csr", random_state=0)
    with pytest.raises(ValueError, match=r"needs .* as dense points .* raise memory_budget"):
        MKLClassifier(kernels=KERNELS, memory_budget=100).fit(wide, y)


@pytest.mark.parametrize("regularizer", ["l1", "lp"])
def test_product_rows_reach_the_dense_product_point(data, regularizer):
    X, y = data
    fits = [MKLClassifier(kernels="features", combination="product", solver="spg",
                          regularizer=regularizer, lam=0.5, C=10.0, tol=1e-6, max_iter=3000,
                          kernel_storage=storage).fit(X, y) for storage in ("stack", "rows")]
    assert [f.kernel_storage_ for f in fits] == ["stack", "rows"]
    assert fits[1].objective_ == pytest.approx(fits[0].objective_, rel=1e-6)
    np.testing.assert_allclose(fits[1].kernel_weights_, fits[0].kernel_weights_, atol=1e-4)


def test_bad_groups_are_refused_before_any_kernel_is_computed(data, monkeypatch):
    from mklearn.kernels import bank

    X, y = data

    def no_kernels(*args, **kwargs):
        raise AssertionError("a kernel was computed before the groups were checked")

    monkeypatch.setattr(bank.KernelBank, "fit_transform", no_kernels)
    monkeypatch.setattr(bank.KernelBank, "fit", no_kernels)
    with pytest.raises(ValueError, match="group"):
        MKLClassifier(kernels=KERNELS, regularizer="group", solver="mirror",
                      groups=[0, 1]).fit(X, y)


def test_n_jobs_gives_the_serial_model_on_rows_and_on_the_stack(data, monkeypatch):
    from mklearn.kernels import threads

    X, y = data
    y3 = np.where(X[:, 4] > 0.5, 2, y)  # three classes: one-vs-rest
    monkeypatch.setattr(threads, "PARALLEL_MIN_VALUES", 0)  # threads even for tiny rows
    # float32 rows too: their vectorised exp writes a work array per thread
    for storage, dtype in (("stack", "float64"), ("rows", "float64"), ("rows", "float32")):
        params = dict(kernels=KERNELS, kernel_storage=storage, C=10.0, tol=1e-6,
                      kernel_dtype=dtype)
        serial = MKLClassifier(**params).fit(X, y3)
        parallel = MKLClassifier(**params, n_jobs=2).fit(X, y3)
        np.testing.assert_allclose(parallel.kernel_weights_, serial.kernel_weights_,
                                   rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(parallel.predict(X), serial.predict(X))


def test_combined_diagonal_with_few_and_with_most_kernels_active():
    from mklearn.kernels.row_sources import combined_diagonal

    rng = np.random.default_rng(0)
    diagonal = rng.random((40, 9))
    for active in (3, 39, 40):  # gathered rows, then one product over every row
        kernels = np.sort(rng.choice(40, active, replace=False))
        weights = rng.random(active)
        np.testing.assert_allclose(combined_diagonal(diagonal, kernels, weights),
                                   np.einsum("k,kn->n", weights, diagonal[kernels]),
                                   rtol=1e-13)


def test_row_operator_combined_diagonal_of_few_kernels_reads_only_theirs(data):
    X, _ = data
    provider = KernelColumns(KernelBank(KERNELS, standardize=True).fit(X))
    operator = RowKernels(provider, 50.0)
    kernels, weights = np.array([2, 0]), np.array([0.3, 1.5])
    few = operator.combined_diagonal(kernels, weights)
    assert operator._diagonal is None  # the (m, n) diagonals were not computed
    np.testing.assert_allclose(few, weights @ provider.diagonal()[kernels], rtol=1e-13)
    every = np.arange(len(KERNELS))
    np.testing.assert_allclose(operator.combined_diagonal(every, np.ones(every.size)),
                               provider.diagonal().sum(axis=0), rtol=1e-13)


def test_auto_cache_holds_every_row_within_half_the_budget(data):
    X, y = data[0], data[1]
    n, m = X.shape[0], 4
    row_mb = 8 * m * n / MB
    assert auto_cache_size(n, m, itemsize=8, memory_budget=1e6) == pytest.approx(n * row_mb)
    assert auto_cache_size(n, m, itemsize=8, memory_budget=n * row_mb) == pytest.approx(
        0.5 * n * row_mb)
    assert auto_cache_size(n, m, itemsize=4, memory_budget=1e-6) == pytest.approx(row_mb)
    specs = [RBF(sigma=s) for s in (0.5, 1.0, 2.0, 4.0)]
    fitted = {}
    for cache_size in ("auto", n * row_mb):
        model = MKLClassifier(kernels=specs, solver="smo", regularizer="lp", p=2.0,
                              cache_size=cache_size).fit(X, y)
        fitted[cache_size] = model
    auto = fitted["auto"]
    assert auto.cache_size_ == pytest.approx(n * row_mb)  # every row: a small problem
    np.testing.assert_allclose(auto.decision_function(X),
                               fitted[n * row_mb].decision_function(X), rtol=1e-12)
    small = MKLClassifier(kernels=specs, solver="smo", regularizer="lp", p=2.0,
                          memory_budget=n * row_mb).fit(X, y)
    assert small.cache_size_ == pytest.approx(0.5 * n * row_mb)


def test_cli_takes_an_auto_or_positive_cache_size(capsys):
    assert main(["fit", "--dataset", "liver-disorders", "--n-samples", "60", "--max-iter", "5",
                 "--cache-size", "auto"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["fit", "--cache-size", "many"])
    assert exit_info.value.code == 2
    assert "'auto' or a number of MB" in capsys.readouterr().err
    assert main(["fit", "--cache-size", "-1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mklearn: error: ") and "cache_size" in err[0]


def test_row_cache_stops_growing_when_the_machine_runs_short(data, monkeypatch):
    """Fits in parallel processes each plan their cache from the memory available at their
    start: the cache looks again as it grows and stops below the reserve, then recycles."""
    from mklearn.kernels import cache as cache_module
    from mklearn.kernels import memory_limits
    from mklearn.kernels.cache import RowCache

    X, y = data
    bank = KernelBank(KERNELS, standardize=True, normalize="diagonal")
    bank.fit(X)
    provider = KernelColumns(bank)
    row_bytes = 8 * provider.n_kernels * provider.n_samples
    monkeypatch.setattr(cache_module, "GROWTH_CHECK_BYTES", 3 * row_bytes)  # look every 3 rows
    looks = []

    def available():
        looks.append(len(looks))
        return 10 << 30 if len(looks) < 2 else 1 << 20  # short from the second look on

    monkeypatch.setattr(cache_module, "touched_room", available)
    cache = RowCache(provider, 1e6)
    assert cache.capacity == provider.n_samples  # planned: every row
    for i in range(provider.n_samples):
        np.testing.assert_array_equal(cache.get(i), provider.rows([i])[:, 0, :])
    assert cache.stopped_growing and cache.capacity == len(cache) == 6  # looked at 3 and 6
    for i in range(provider.n_samples - 1, -1, -1):  # recycled, least recently used first
        np.testing.assert_array_equal(cache.get(i), provider.rows([i])[:, 0, :])
    assert len(cache) == 6 and cache.misses > provider.n_samples

    monkeypatch.setattr(cache_module, "touched_room", lambda: 1 << 20)
    monkeypatch.setattr(memory_limits, "available_memory", lambda: 1 << 20)
    short = MKLClassifier(kernels=KERNELS, solver="smo", regularizer="lp", p=2.0,
                          memory_budget=1e4, **TIGHT).fit(X, y)
    monkeypatch.undo()
    full = MKLClassifier(kernels=KERNELS, solver="smo", regularizer="lp", p=2.0,
                         **TIGHT).fit(X, y)
    assert short.objective_ == pytest.approx(full.objective_, rel=1e-8)


def test_one_cache_of_combined_rows_at_a_time(data):
    """A new ``kernel(d)`` releases the rows cached by the one before (two-row cache), which
    still gives the same rows, computed; the newest keeps its share of the budget."""
    X, _ = data
    bank = KernelBank(KERNELS, standardize=True, normalize="trace")
    rows = RowKernels(KernelColumns(bank.fit(X)), cache_size=5.0)
    d1, d2 = np.full(len(KERNELS), 0.1), np.linspace(0.0, 0.2, len(KERNELS))
    first = rows.kernel(d1)
    for i in range(30):
        first.load(i)
    kept = first.store[first.slot_of[7]].copy()
    assert first.cache.capacity >= 30
    second = rows.kernel(d2)
    assert first.cache.capacity == 2 and second.cache.capacity >= 30
    first.load(7)
    np.testing.assert_array_equal(first.store[first.slot_of[7]], kept)
    for i in range(30):
        second.load(i)
    np.testing.assert_allclose(second.store[second.slot_of[np.arange(30)], 0],
                               rows.combined_rows(np.arange(30), np.arange(len(KERNELS)), d2),
                               rtol=1e-13, atol=1e-15)
    assert rows.kernel(d2) is not second and second.cache.capacity == 2


@pytest.mark.parametrize("base_cached", [False, True])
def test_rows_of_k_d_are_written_into_new_slots(data, monkeypatch, base_cached):
    """Rows of K(d) loaded several at a time are computed straight into the cache's new
    slots (no copy) and equal the weighted sum of the base kernels' rows (from the cached
    base rows too)."""
    X, _ = data
    provider = KernelColumns(KernelBank(KERNELS).fit(X))
    n, m = len(X), len(KERNELS)
    operator = RowKernels(provider, cache_size=((200 if base_cached else 2) * 8 * (m + 1) * n
                                                + 40 * 8 * n) / MB)
    if base_cached:
        for i in range(n):
            operator.base.get(i)
    targets = []
    combined_rows = KernelColumns.combined_rows

    def spy(self, indices, kernels, weights, out=None):
        targets.append(out)
        return combined_rows(self, indices, kernels, weights, out=out)

    monkeypatch.setattr(KernelColumns, "combined_rows", spy)
    d = np.linspace(0.0, 1.0, m)
    rows = operator.kernel(d)
    expected = np.tensordot(d, provider.rows(np.arange(n)), axes=(0, 0))
    assert rows.cache.capacity >= 30
    rows.cache.load_many(np.arange(0, n, 3))
    if not base_cached:
        assert targets and all(t is not None and np.shares_memory(t, rows.store)
                               for t in targets)
    for i in range(0, n, 3):
        np.testing.assert_allclose(rows.store[rows.slot_of[i], 0], expected[i], rtol=1e-12)


def test_a_new_k_d_fills_the_slots_of_the_one_released(data):
    """kernel(d) takes the slots of the K(d) it releases (pages in memory already); the
    released one keeps serving its own rows from a store of its own."""
    X, _ = data
    provider = KernelColumns(KernelBank(KERNELS).fit(X))
    n, m = len(X), len(KERNELS)
    operator = RowKernels(provider, cache_size=(2 * 8 * (m + 1) * n + 40 * 8 * n) / MB)
    d1, d2 = np.linspace(0.0, 1.0, m), np.linspace(1.0, 0.0, m)
    first = operator.kernel(d1)
    first.cache.load_many(np.arange(10))
    slots = first.store
    second = operator.kernel(d2)
    assert np.shares_memory(second.store, slots)
    assert not np.shares_memory(first.store, slots)
    second.cache.load_many(np.arange(5, 15))
    base = provider.rows(np.arange(n))
    for K, d in ((second, d2), (first, d1)):
        for i in range(5, 15):
            np.testing.assert_allclose(K.cache.get(i)[0], d @ base[:, i], rtol=1e-12)


@pytest.mark.parametrize("estimator", [MKLClassifier, MKLRegressor, OneClassMKL])
def test_the_row_path_copies_x_only_once_the_solver_is_done(data, estimator, monkeypatch):
    X, y = data
    X = np.array(X, dtype=np.float64)  # C-contiguous float64: the bank may keep it as is
    target = X[:, 2] - X[:, 3] if estimator is MKLRegressor else y
    during = []
    make = KernelColumns.__init__

    def recording(self, bank, *args):
        during.append(np.shares_memory(bank.X_fit_, X))
        make(self, bank, *args)

    monkeypatch.setattr(KernelColumns, "__init__", recording)
    model = estimator(kernels=KERNELS, kernel_storage="rows")
    model.fit(X, target) if estimator is not OneClassMKL else model.fit(X)
    assert during and all(during)  # no copy of X beside the row cache
    assert not np.shares_memory(model.bank_.X_fit_, X)
    kept = X.copy()
    score = getattr(model, "decision_function", model.predict)
    scores = score(kept)
    X[:] = 0.0  # the caller changes X: the model does not change
    np.testing.assert_array_equal(score(kept), scores)


def test_a_sparse_x_made_dense_for_the_fit_is_not_copied_again(data, monkeypatch):
    import scipy.sparse

    X, y = data
    made = []
    init = KernelColumns.__init__

    def recording(self, bank, *args):
        made.append(bank.X_fit_)
        init(self, bank, *args)

    monkeypatch.setattr(KernelColumns, "__init__", recording)
    model = MKLClassifier(kernels=KERNELS, kernel_storage="rows")
    model.fit(scipy.sparse.csr_matrix(X), y)
    assert model.bank_.X_fit_ is made[0]  # the dense copy made in fit is the model's own


def _support_vector(data, every=3):
    X, _ = data
    v = np.random.default_rng(1).normal(size=X.shape[0]) * (np.arange(X.shape[0]) % every == 0)
    return v, np.flatnonzero(v)


def test_quadratic_terms_buy_the_support_rows_once_the_block_passes_cost_as_much(
        data, monkeypatch):
    """Rent or buy: the first terms come from the support's block, rows not cached; the
    support's rows of every base kernel are bought once the block passes have cost what
    computing them costs (a slow block here), and give the products after that."""
    from mklearn.kernels import passes

    X, _ = data
    bank = KernelBank(KERNELS).fit(X)
    stack = SumOfKernels(bank.transform(X))
    operator = RowKernels(KernelColumns(bank), cache_size=5.0)
    v, support = _support_vector(data)
    block_terms = passes.quadratic_terms

    def slow_block(*args, **kwargs):
        time.sleep(0.02)
        return block_terms(*args, **kwargs)

    monkeypatch.setattr(passes, "quadratic_terms", slow_block)
    assert operator.gradient_and_products(v) is None  # nothing paid yet: rent
    g = operator.kernel_gradient(None, v)
    np.testing.assert_allclose(g, stack.kernel_gradient(None, v), rtol=1e-10)
    assert len(operator.base) == 0
    g, P = operator.gradient_and_products(v)  # 20 ms paid, the rows cost far less: buy
    assert all(i in operator.base for i in support)
    np.testing.assert_allclose(P, stack.kernel_major @ v, atol=1e-12)
    np.testing.assert_allclose(g, stack.kernel_gradient(None, v), rtol=1e-10)


def test_quadratic_terms_keep_to_blocks_while_rows_cost_more(data, monkeypatch):
    """Where computing the support's rows costs more than every block pass so far, the
    terms keep coming from blocks; only the rows that priced a row are cached."""
    from mklearn.kernels.operator import PRICE_ROWS

    X, _ = data
    bank = KernelBank(KERNELS).fit(X)
    provider = KernelColumns(bank)
    operator = RowKernels(provider, cache_size=5.0)
    v, support = _support_vector(data)
    rows = KernelColumns.rows

    def slow_rows(self, *args, **kwargs):
        time.sleep(0.02)
        return rows(self, *args, **kwargs)

    monkeypatch.setattr(KernelColumns, "rows", slow_rows)
    monkeypatch.setattr(KernelColumns, "row_filler", lambda self: None)
    expected = SumOfKernels(bank.transform(X)).kernel_gradient(None, v)
    for _ in range(5):
        assert operator.gradient_and_products(v) is None
        np.testing.assert_allclose(operator.kernel_gradient(None, v), expected, rtol=1e-10)
    assert len(operator.base) == PRICE_ROWS < support.size


def test_spare_bytes_is_the_budget_no_row_holds(data):
    X, _ = data
    n, m = X.shape[0], len(KERNELS)
    operator = RowKernels(KernelColumns(KernelBank(KERNELS).fit(X)), 5.0)
    assert operator.spare_bytes() == 5 * MB
    v = np.zeros(n)
    v[[0, 3, 5]] = 1.0
    operator.products(v)
    assert operator.base.nbytes == 3 * 8 * m * n
    assert operator.spare_bytes() == 5 * MB - operator.base.nbytes
    first = operator.kernel(np.full(m, 1.0 / m))
    first.load(0)
    first.load(1)
    assert operator.spare_bytes() == 5 * MB - operator.base.nbytes - 2 * 8 * n
    # a new K(d) reuses the released store, whose pages stay resident: still counted
    second = operator.kernel(np.linspace(1.0, 2.0, m) / m)
    assert len(second.cache) == 0
    assert operator.spare_bytes() == 5 * MB - operator.base.nbytes - 2 * 8 * n


def test_the_newton_system_may_use_the_spare_row_budget(data, monkeypatch):
    """Beyond NewtonModel.MAX_BYTES (here none) the Newton model is formed only while its system
    fits in the part of the row budget no row holds; with or without it, the same optimum."""
    from mklearn.solvers.spg_newton import NewtonModel

    X, y = data
    formed = []
    trial = NewtonModel.trial

    def recording(model, evaluator, point, grad, live):
        step = trial(model, evaluator, point, grad, live)
        formed.append(step is not None)
        return step

    monkeypatch.setattr(NewtonModel, "MAX_BYTES", 0)
    monkeypatch.setattr(NewtonModel, "trial", recording)
    params = dict(kernels=KERNELS, kernel_storage="rows", solver="spg", C=10.0, **TIGHT)
    ample = MKLClassifier(cache_size=50.0, **params).fit(X, y)
    assert any(formed)
    formed.clear()
    # 0.05 MB: 16 (f + 1)^2 bytes exceed it from 56 free support vectors on
    tight = MKLClassifier(cache_size=0.05, **params).fit(X, y)
    assert not any(formed)
    assert tight.objective_ == pytest.approx(ample.objective_, rel=1e-6)
    stack = MKLClassifier(kernels=KERNELS, kernel_storage="stack", solver="spg", C=10.0,
                          **TIGHT).fit(X, y)
    assert ample.objective_ == pytest.approx(stack.objective_, rel=1e-6)
