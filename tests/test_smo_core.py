"""The one SMO core: shrinking, rows read through a cache, and the same optimum on every path."""

import numpy as np
import pytest
from sklearn.svm import SVC, SVR, OneClassSVM

from mklearn.datasets import load_dataset
from mklearn.formulation.combinations import SumOfKernels
from mklearn.formulation.regularizers import KLDivergence, LpNorm
from mklearn.kernels import KernelBank, resolve_kernels
from mklearn.kernels.cache import RowCache
from mklearn.kernels.columns import KernelColumns, StackColumns
from mklearn.kernels.operator import RowKernels
from mklearn.kernels.row_sources import CombinedRows
from mklearn.solvers import smo_mkl, smo_mkl_regression
from mklearn.svm import one_class_dual, solve_qp, svc_dual, svr_dual


def _rbf_problem(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    K = np.exp(-0.3 * ((X[:, None] - X[None]) ** 2).sum(-1))
    return X, y, K


def _svc_dual_value(K, y, alpha):
    v = alpha * y
    return alpha.sum() - 0.5 * v @ K @ v


@pytest.mark.parametrize("C", [0.1, 10.0, 1000.0])
def test_shrinking_reaches_the_same_optimum_as_svc(C):
    _, y, K = _rbf_problem()
    ref = SVC(kernel="precomputed", C=C, tol=1e-10).fit(K, y)
    alpha_ref = np.zeros_like(y)
    alpha_ref[ref.support_] = np.abs(ref.dual_coef_[0])
    values = []
    for shrinking in (True, False):
        qp = solve_qp(K, y, -np.ones_like(y), np.full(y.size, C), tol=1e-8, shrinking=shrinking)
        assert qp.converged
        np.testing.assert_allclose(qp.grad, K @ (qp.alpha * y) * y - 1.0, atol=1e-9 * C)
        values.append(_svc_dual_value(K, y, qp.alpha))
        assert abs(qp.rho + ref.intercept_[0]) <= 1e-3 * max(1.0, abs(ref.intercept_[0]))
    w_ref = _svc_dual_value(K, y, alpha_ref)
    assert values[0] == pytest.approx(w_ref, rel=1e-7)
    assert values[1] == pytest.approx(w_ref, rel=1e-7)


def test_shrinking_regression_and_one_class_match_libsvm():
    X, _, K = _rbf_problem(n=200, seed=1)
    target = np.sin(X[:, 0]) + 0.1 * X[:, 1]
    for shrinking in (True, False):
        from mklearn.svm.smo import solve_qp as _solve
        n = target.size
        signs = np.r_[np.ones(n), -np.ones(n)]
        qp = _solve(K, signs, np.r_[0.1 - target, 0.1 + target], np.full(2 * n, 5.0),
                    index=np.r_[np.arange(n), np.arange(n)], tol=1e-8, shrinking=shrinking)
        beta = qp.alpha[:n] - qp.alpha[n:]
        ref = SVR(kernel="precomputed", C=5.0, epsilon=0.1, tol=1e-10).fit(K, target)
        np.testing.assert_allclose(K @ beta - qp.rho, ref.predict(K), atol=1e-5)
    ours = one_class_dual(K, 0.3, tol=1e-8)
    ref = OneClassSVM(kernel="precomputed", nu=0.3, tol=1e-10).fit(K)
    np.testing.assert_allclose(K @ ours.alpha - ours.rho, ref.decision_function(K) * 1.0,
                               atol=1e-4 * 0.3 * 200)
    assert svr_dual(K, target, 5.0, 0.1, tol=1e-8).converged


def test_rows_through_a_small_cache_give_the_dense_solution():
    X, y = load_dataset("sonar")
    specs, standardize = resolve_kernels("simple_mkl", X[:120])
    bank = KernelBank(specs[:40], standardize=standardize, normalize="trace")
    stack = bank.fit_transform(X[:120])
    combination = SumOfKernels(stack)
    d = np.random.default_rng(0).dirichlet(np.ones(40))
    y = y[:120].astype(float)
    dense = svc_dual(combination.kernel(d), y, 50.0, tol=1e-9)
    n = y.size
    rows = CombinedRows(combination, d, cache_size=3 * 8 * n / 2**20)  # three rows: misses
    assert rows.cache.capacity == 3
    cached = svc_dual(rows, y, 50.0, tol=1e-9)
    assert rows.cache.misses > n
    np.testing.assert_allclose(cached.alpha, dense.alpha, atol=1e-7 * 50)
    assert cached.objective == pytest.approx(dense.objective, rel=1e-10)
    warm = svc_dual(rows, y, 50.0, alpha0=dense.alpha, tol=1e-9)  # warm start: nothing to do
    assert warm.n_iter <= 5


def test_row_cache_refuses_a_budget_below_two_rows():
    _, _, K = _rbf_problem(n=100)
    provider = StackColumns(K[:, :, None])
    with pytest.raises(ValueError, match=r"at least 0.00152588 MB"):
        RowCache(provider, cache_size=0.001)
    with pytest.raises(ValueError, match=r"raise cache_size"):
        RowKernels(provider, cache_size=0.002)


def _ionosphere_rows():
    """150 ionosphere points, labels as floats, and rows of 64 SimpleMKL kernels on them."""
    X, y = load_dataset("ionosphere")
    specs, standardize = resolve_kernels("simple_mkl", X[:150])
    bank = KernelBank(specs[::7], standardize=standardize, normalize="trace").fit(X[:150])
    return X, y[:150].astype(float), KernelColumns(bank)


@pytest.mark.parametrize("regularizer", [LpNorm(1.5, 1.0), LpNorm(2.0, 0.5), KLDivergence(2.0)])
def test_smo_mkl_with_and_without_shrinking_reach_the_same_optimum(regularizer):
    X, y, provider = _ionosphere_rows()
    on = smo_mkl(provider, y, 20.0, regularizer, tol=1e-7, max_iter=5000, shrinking=True)
    off = smo_mkl(provider, y, 20.0, regularizer, tol=1e-7, max_iter=5000, shrinking=False)
    assert on.converged and off.converged
    assert on.objective == pytest.approx(off.objective, rel=1e-6)
    np.testing.assert_allclose(on.kernel_weights, off.kernel_weights, rtol=1e-3, atol=1e-6)
    target = X[:150, 0]
    on = smo_mkl_regression(provider, target, 5.0, regularizer, epsilon=0.05, tol=1e-7,
                            max_iter=5000, shrinking=True)
    off = smo_mkl_regression(provider, target, 5.0, regularizer, epsilon=0.05, tol=1e-7,
                             max_iter=5000, shrinking=False)
    assert on.objective == pytest.approx(off.objective, rel=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threaded_pair_step_passes_equal_the_serial_ones(dtype):
    from mklearn.kernels import base_store
    from mklearn.kernels.threads import numba_threads

    rng = np.random.default_rng(3)
    m, n = 4, 6037
    store = rng.normal(size=(3, m, n)).astype(dtype)
    F = rng.normal(size=(m, n))
    d = np.array([0.5, 0.0, 1.5, 0.25])
    outputs = []
    for blocks in (1, 2, 3, 5):  # 5: blocks of 48 samples, the last one short
        F_t, fd, combined = F.copy(), np.empty(n), np.empty(n, dtype)
        if blocks == 1:
            base_store.update_rows(F_t, store, 0, 2, 0.3, d, fd)
            base_store.weighted_sum(d, store[1], combined)
        else:
            with numba_threads(2):
                base_store.update_rows_parallel(F_t, store, 0, 2, 0.3, d, fd, blocks)
                base_store.weighted_sum_parallel(d, store[1], combined, blocks)
        outputs.append((F_t, fd, combined))
    for threaded in outputs[1:]:
        for a, b in zip(outputs[0], threaded, strict=True):
            assert a.tobytes() == b.tobytes()  # the same sums in the same order
    F_serial, fd_serial, row_serial = outputs[0]
    rows = store.astype(np.float64)
    np.testing.assert_allclose(F_serial, F + 0.3 * (rows[0] - rows[2]), atol=1e-6)
    np.testing.assert_allclose(fd_serial, d @ F_serial, atol=1e-12)
    np.testing.assert_allclose(row_serial, d @ rows[1], atol=1e-5)


def test_threaded_smo_mkl_reaches_the_serial_optimum(monkeypatch):
    from mklearn.kernels import base_store, threads

    X, y, provider = _ionosphere_rows()
    serial = smo_mkl(provider, y, 20.0, LpNorm(1.5, 1.0), tol=1e-7, max_iter=5000,
                     cache_size=0.2)
    monkeypatch.setattr(threads, "PARALLEL_MIN_VALUES", 0)
    monkeypatch.setattr(base_store, "MIN_BLOCK", 32)  # two blocks of 75 samples
    with threads.numba_threads(2):
        threaded = smo_mkl(provider, y, 20.0, LpNorm(1.5, 1.0), tol=1e-7, max_iter=5000,
                           cache_size=0.2)
    assert threaded.converged and serial.converged
    assert threaded.n_iter == serial.n_iter
    assert threaded.objective == pytest.approx(serial.objective, rel=1e-12)
    np.testing.assert_allclose(threaded.kernel_weights, serial.kernel_weights, rtol=1e-9)


def test_a_fresh_process_runs_the_cached_loop_first():
    """The SMO loop links threaded passes; loaded from numba's cache before anything else
    started numba's threading layer, it crashed (numba issue #8578). The first run may
    compile and cache it, the second loads it."""
    import subprocess
    import sys

    script = ("import numpy as np\n"
              "from mklearn.svm import solve_qp\n"
              "K = np.eye(4) + 0.5\n"
              "y = np.array([1.0, -1.0, 1.0, -1.0])\n"
              "print(solve_qp(K, y, -np.ones(4), np.ones(4)).alpha.sum())\n")
    for _ in range(2):
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]


def _svc_primal_minus_dual(K, y, C, alpha, offsets):
    """The C-SVC primal minus dual at ``alpha`` for each offset b in ``offsets``."""
    v = alpha * y
    Kv = K @ v
    hinge = np.maximum(0.0, 1.0 - y * (Kv[None, :] + offsets[:, None])).sum(axis=1)
    return 0.5 * v @ Kv + C * hinge - _svc_dual_value(K, y, alpha)


@pytest.mark.parametrize("C", [1.0, 100.0])
def test_gap_stop_bounds_the_svm_duality_gap(C):
    """Stopped on the duality gap: the bound is the C-SVC primal minus dual at its offset, it
    is met, and the dual is within it of the optimum, with or without shrinking."""
    from mklearn.svm.smo import SMOState, duality_gap_bound

    _, y, K = _rbf_problem(n=400, seed=2)
    best = _svc_dual_value(K, y, svc_dual(K, y, C, tol=1e-10).alpha)
    tight = svc_dual(K, y, C, tol=1e-6)
    for shrinking in (True, False):
        target = 1e-4 * abs(best)
        qp = solve_qp(K, y, -np.ones_like(y), np.full(y.size, C), tol=1e-6, gap=target,
                      shrinking=shrinking)
        assert qp.converged and qp.n_iter < tight.n_iter
        st = SMOState(y, np.arange(y.size), -np.ones_like(y), np.full(y.size, C), y.size,
                      qp.alpha)
        st.gradient_from(K @ (qp.alpha * y))
        np.testing.assert_allclose(qp.grad, st.G, atol=1e-9 * C)  # exact, not stale
        bound = duality_gap_bound(st)
        assert bound <= target
        assert 0.0 <= best - _svc_dual_value(K, y, qp.alpha) <= bound * (1 + 1e-9)
        # for C-SVC the bound is the primal minus the dual at some offset b
        offsets = np.linspace(-qp.rho - 1.0, -qp.rho + 1.0, 2001)
        gaps = _svc_primal_minus_dual(K, y, C, qp.alpha, offsets)
        assert gaps.min() <= bound * (1 + 1e-9) + 1e-9


@pytest.mark.parametrize("shrinking", [True, False])
def test_stop_below_ends_a_solve_whose_optimum_is_below_a_bound(shrinking):
    """A solve asked to stop below a value the optimum lies under stops early, unsolved,
    with an exact objective below it (and above the optimum); asked for a value under the
    optimum, it runs to the same solution as without."""
    _, y, K = _rbf_problem(n=400, seed=3)
    C = np.full(y.size, 10.0)
    full = solve_qp(K, y, -np.ones_like(y), C, tol=1e-8, shrinking=shrinking)
    start = svc_dual(K, y, 10.0, tol=1e-1).objective  # a loose solution: above the optimum
    for bound in (start + 0.5 * (full.objective - start), start + 0.9 * (full.objective - start)):
        qp = solve_qp(K, y, -np.ones_like(y), C, tol=1e-8, shrinking=shrinking,
                      stop_below=bound)
        assert qp.stopped_below and not qp.converged and qp.n_iter < full.n_iter
        assert full.objective <= qp.objective < bound
        v = qp.alpha * y
        assert qp.objective == pytest.approx(0.5 * v @ K @ v - qp.alpha.sum(), rel=1e-10)
    below = solve_qp(K, y, -np.ones_like(y), C, tol=1e-8, shrinking=shrinking,
                     stop_below=full.objective - 1.0)
    assert below.converged and not below.stopped_below
    assert below.objective == pytest.approx(full.objective, rel=1e-12)


def test_gap_stop_bounds_regression_and_one_class():
    """For epsilon-SVR and one-class the bound holds too: f(alpha) - min f <= bound."""
    from mklearn.svm.smo import SMOState, duality_gap_bound

    X, _, K = _rbf_problem(n=200, seed=3)
    target = np.sin(X[:, 0])
    problems = [
        (lambda **kw: svr_dual(K, target, 5.0, 0.1, **kw), 2),
        (lambda **kw: one_class_dual(K, 0.3, **kw), 1),
    ]
    for solve, copies in problems:
        optimum = solve(tol=1e-10).objective
        loose = solve(tol=1e-10, gap=1e-2 * abs(optimum))
        n = target.size
        signs = np.r_[np.ones(n), -np.ones(n)] if copies == 2 else np.ones(n)
        index = np.tile(np.arange(n), copies)
        linear = np.r_[0.1 - target, 0.1 + target] if copies == 2 else np.zeros(n)
        upper = np.full(copies * n, 5.0 if copies == 2 else 1.0)
        st = SMOState(signs, index, linear, upper, n, loose.alpha)
        st.gradient_from(K @ np.bincount(index, weights=signs * loose.alpha, minlength=n))
        assert duality_gap_bound(st) <= 1e-2 * abs(optimum)
        assert -1e-12 * abs(optimum) <= loose.objective - optimum <= duality_gap_bound(st) + 1e-9


def test_offset_ignores_variables_fixed_by_a_zero_bound():
    """A sample of weight 0 (``upper_t = 0``) bounds neither side of rho: rho with it equals
    rho without it, as scikit-learn's LIBSVM, which removes such samples."""
    from mklearn.svm.smo import _offset, kkt_bounds

    y = np.array([1.0, 1.0, 1.0, -1.0])
    grad = np.array([-0.5, -2.0, 10.0, -10.0])  # y G: -0.5, -2.0, 10.0, 10.0
    alpha = np.array([0.0, 1.0, 0.0, 0.0])  # no free variable: rho from the bounds
    upper = np.array([1.0, 1.0, 0.0, 0.0])  # the last two fixed at 0
    kept = slice(0, 2)
    assert kkt_bounds(alpha, grad, y, upper) == kkt_bounds(alpha[kept], grad[kept], y[kept],
                                                           upper[kept])
    # LIBSVM's bounds from the two others: sample 0 (at 0, y > 0) gives ub = -0.5, sample 1
    # (at C, y > 0) lb = -2; counting the fixed ones (y G = 10) would move lb to 10
    assert _offset(alpha, grad, y, upper) == pytest.approx(-1.25)
    assert _offset(alpha[kept], grad[kept], y[kept], upper[kept]) == pytest.approx(-1.25)


def test_the_kept_loop_entries_match_numbas_typing_and_tell_array_kinds_apart():
    """The compiled loop is looked up by a key of its arguments' types: a solve through the
    kept entry gives numba's own overload's result, and arrays that numba types apart
    (read-only, another layout or dtype) have other keys."""
    from mklearn.svm import core, smo

    _, y, K = _rbf_problem(n=60)
    first = svc_dual(K, y, 1.0, tol=1e-6)  # numba's typing, then the kept entry
    np.testing.assert_allclose(svc_dual(K, y, 1.0, tol=1e-6).alpha, first.alpha)
    entries = set(smo._LOOP_ENTRIES.values())
    overloads = {compiled.entry_point for compiled in core.smo_loop.overloads.values()}
    assert entries and entries <= overloads
    base = np.zeros((4, 3))
    frozen = base.copy()
    frozen.flags.writeable = False
    kinds = [base, frozen, np.asfortranarray(base), base[:, ::2], base.astype(np.float32),
             np.zeros(12)]
    assert len({smo._type_key(a) for a in kinds}) == len(kinds)
    assert smo._type_key((base, 1.0)) != smo._type_key((base, 1))
