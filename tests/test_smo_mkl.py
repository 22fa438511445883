"""SMO-MKL against exact convex references, SPG-GMKL, SVC, and its own closed form."""

import cvxpy as cp
import numpy as np
import pytest
from reference import _dual_setup, lp_mkl_optimum
from sklearn.svm import SVC

from mklearn import MKLClassifier, MKLRegressor
from mklearn.datasets import load_dataset
from mklearn.formulation.regularizers import KLDivergence, L1Simplex, LpNorm
from mklearn.kernels import RBF, KernelBank, base_store, resolve_kernels, threads
from mklearn.kernels.columns import KernelColumns, StackColumns
from mklearn.kernels.row_sources import BaseRows, TableBaseRows, base_rows
from mklearn.solvers import smo_mkl, smo_mkl_regression, spg_gmkl
from mklearn.svm import mkl_step as core


@pytest.fixture(scope="module")
def liver():
    X, y = load_dataset("liver-disorders")
    rows = np.random.default_rng(0).choice(len(y), size=100, replace=False)
    X, y = X[rows], y[rows].astype(float)
    specs, standardize = resolve_kernels("simple_mkl", X)
    return X, KernelBank(specs, standardize=standardize).fit_transform(X), y


def _svm_dual(K, y, C):
    svc = SVC(kernel="precomputed", C=C, tol=1e-10).fit(K, y)
    alpha = np.zeros_like(y)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    v = alpha * y
    return alpha.sum() - 0.5 * v @ K @ v


@pytest.mark.parametrize("C", [1.0, 100.0])
@pytest.mark.parametrize("p", [1.1, 1.33, 2.0, 3.0])
def test_lp_reaches_the_optimum_with_an_honest_gap(liver, p, C):
    _, stack, y = liver
    regularizer = LpNorm(p, 1.0)
    result = smo_mkl(StackColumns(stack), y, C, regularizer, tol=1e-6, max_iter=2000)
    assert result.converged
    optimum = lp_mkl_optimum(stack, y, C, p, 1.0)
    assert result.objective == pytest.approx(optimum, rel=1e-4)
    # a dual value: never above the optimum, to the reference's own accuracy (C = 100 is
    # ill-conditioned: up to 2e-7 above Clarabel's optimum, depending on the CPU's rounding)
    assert result.objective <= optimum * (1 + 1e-6)
    # T(d) at the returned weights, recomputed by LIBSVM: above the optimum by at most the gap
    d = result.kernel_weights
    exact = regularizer.value(d) + _svm_dual(stack @ d, y, C)
    assert optimum * (1 - 1e-6) <= exact <= result.objective + result.duality_gap * (1 + 1e-6)


def test_smo_and_spg_reach_the_same_objective(liver):
    _, stack, y = liver
    from mklearn.formulation.combinations import SumOfKernels

    regularizer = LpNorm(2.0, 1.0)
    smo = smo_mkl(StackColumns(stack), y, 10.0, regularizer, tol=1e-7)
    spg = spg_gmkl(SumOfKernels(stack), y, 10.0, regularizer, tol=1e-7, max_iter=3000)
    assert smo.objective == pytest.approx(spg.objective, rel=1e-5)
    scale = spg.kernel_weights.max()
    np.testing.assert_allclose(smo.kernel_weights, spg.kernel_weights, rtol=0, atol=1e-3 * scale)


def _kl_optimum(stack, y, C, lam):
    n, _, m = stack.shape
    alpha, g, cons = _dual_setup(stack, y, C)
    prior = np.full(m, 1.0 / m)
    objective = cp.sum(alpha) - lam * cp.sum(cp.multiply(prior, cp.exp(g / (2 * lam)) - 1))
    prob = cp.Problem(cp.Maximize(objective), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return float(prob.value)


@pytest.mark.parametrize("lam", [1.0, 10.0])
def test_kl_reaches_the_optimum(liver, lam):
    _, stack, y = liver
    stack = stack[:, :, :30]  # keeps the exponential cone program small
    result = smo_mkl(StackColumns(stack), y, 10.0, KLDivergence(lam), tol=1e-7, max_iter=2000)
    assert result.converged
    assert result.objective == pytest.approx(_kl_optimum(stack, y, 10.0, lam), rel=1e-4)
    g = np.einsum("i,ijk,j->k", result.alpha * y, stack, result.alpha * y)
    np.testing.assert_allclose(result.kernel_weights, np.exp(g / (2 * lam)) / 30, rtol=1e-8)


def test_single_kernel_is_the_svm_on_the_learned_scale(liver):
    _, stack, y = liver
    K = stack[:, :, :1]
    result = smo_mkl(StackColumns(K), y, 10.0, LpNorm(2.0, 1.0), tol=1e-8, max_iter=5000)
    d = result.kernel_weights[0]
    svc = SVC(kernel="precomputed", C=10.0, tol=1e-10).fit(d * K[:, :, 0], y)
    alpha = np.zeros_like(y)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    np.testing.assert_allclose(result.alpha, alpha, atol=1e-4 * 10.0)
    assert -result.intercept == pytest.approx(svc.intercept_[0] * -1, abs=1e-3)


def test_cubic_equals_newton_for_p_2():
    rng = np.random.default_rng(1)
    for _ in range(200):
        m = int(rng.integers(1, 20))
        # g_k(t) = |u_k + t w_k|^2, as for g_k(alpha + t u) = (alpha + t u)' H_k (alpha + t u)
        u = rng.normal(0, 3, (m, 4))
        w = rng.normal(0, 1, (m, 4))
        g, b, a = (u * u).sum(1), (u * w).sum(1), (w * w).sum(1)
        lam = float(rng.uniform(0.1, 10))
        c1 = float(rng.choice([-2.0, 2.0]))
        lower, upper = -float(rng.uniform(0, 10)), float(rng.uniform(0, 10))
        cubic = core.cubic_step_length(lower, upper, g, a, b, lam, c1)
        newton = core.newton_step_length(
            lower, upper, g, a, b, core.KIND_LP, lam, 2.0, np.zeros(1), c1
        )
        assert cubic == pytest.approx(newton, rel=1e-8, abs=1e-10)


def test_closed_form_and_newton_give_the_same_model(liver):
    _, stack, y = liver
    provider = StackColumns(stack)
    cubic = smo_mkl(provider, y, 10.0, LpNorm(2.0, 1.0), tol=1e-6, closed_form=True)
    newton = smo_mkl(provider, y, 10.0, LpNorm(2.0, 1.0), tol=1e-6, closed_form=False)
    assert cubic.objective == pytest.approx(newton.objective, rel=1e-9)


@pytest.mark.parametrize("unit_diagonals", [False, True], ids=["simple_mkl", "rbf"])
def test_on_the_fly_rows_match_the_precomputed_stack(liver, unit_diagonals):
    X, stack, y = liver
    common = dict(solver="smo", regularizer="lp", p=1.5, C=10.0, tol=1e-6)
    kernels = "simple_mkl"
    if unit_diagonals:  # RBF kernels only: each diagonal one value per kernel, (m, 1)
        kernels = [RBF(sigma=s) for s in (0.5, 1.0, 2.0, 5.0)]
        bank = KernelBank(kernels, normalize="trace")  # explicit specs: not standardised
        stack = bank.fit_transform(X)
        assert BaseRows(KernelColumns(bank), 1.0).diagonal().shape == (4, 1)
    on_the_fly = MKLClassifier(**common, kernels=kernels, cache_size=0.5,  # evicts
                               kernel_normalization="trace").fit(X, y)
    precomputed = MKLClassifier(kernels="precomputed", **common).fit(stack, y)
    assert on_the_fly.objective_ == pytest.approx(precomputed.objective_, rel=1e-8)
    np.testing.assert_allclose(
        on_the_fly.decision_function(X), precomputed.decision_function(stack), atol=1e-6
    )


def _binary_problem(n=160, seed=0):
    """Binary points (as a9a, w8a: RBF values by table on kept distance rows)."""
    rng = np.random.default_rng(seed)
    X = (rng.uniform(size=(n, 12)) < 0.2).astype(float)
    score = X[:, 0] + X[:, 3] - X[:, 7] + X[:, 9] * X[:, 10] + 0.4 * rng.normal(size=n)
    specs = [RBF(gamma=g) for g in (0.05, 0.5)] + [
        RBF(gamma=0.3, features=(0, 3, 5, 7, 8)), RBF(gamma=1.0, features=(1, 2, 3, 9, 10, 11)),
        RBF(gamma=0.1, features=(0, 3, 5, 7, 8))]
    return X, score, KernelBank(specs, normalize="trace").fit(X)


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("threaded", [False, True])
def test_base_kernels_by_table_reach_the_optimum_of_the_rows(task, shrinking, threaded,
                                                           monkeypatch):
    """SMO-MKL reading its base kernels from tables by kept distance rows (a cache of 13
    rows: evictions) reaches the optimum of the path reading cached base rows, serial or
    threaded, with or without shrinking; and the exact optimum."""
    X, score, bank = _binary_problem()
    provider = KernelColumns(bank)
    assert isinstance(base_rows(provider, 0.01), TableBaseRows)
    regularizer = LpNorm(1.33, 1.0)
    if task == "classification":
        y = np.where(score > np.median(score), 1.0, -1.0)
        def solve(**kw):
            return smo_mkl(provider, y, 1.0, regularizer, tol=1e-8, max_iter=3000, **kw)
    else:
        y = score
        def solve(**kw):
            return smo_mkl_regression(provider, y, 10.0, regularizer, epsilon=0.2, tol=1e-8,
                                      max_iter=3000, **kw)
    if threaded:  # the per-sample passes in blocks of 16 samples on two threads
        monkeypatch.setattr(threads, "PARALLEL_MIN_VALUES", 0)
        monkeypatch.setattr(base_store, "MIN_BLOCK", 16)
    with threads.numba_threads(2 if threaded else 1):
        by_table = solve(cache_size=0.01, shrinking=shrinking)
    assert by_table.converged
    assert by_table.history[-1]["cache_bytes"] <= 0.01 * 2**20
    with monkeypatch.context() as patch:
        patch.setattr(provider, "base_tables", lambda: None)
        assert type(base_rows(provider, 1.0)) is BaseRows
        by_rows = solve(cache_size=1.0)
    assert by_rows.converged
    assert by_table.objective == pytest.approx(by_rows.objective, rel=1e-6)
    np.testing.assert_allclose(by_table.kernel_weights, by_rows.kernel_weights, rtol=1e-4,
                               atol=1e-6 * by_rows.kernel_weights.max())
    if task == "classification" and not threaded and shrinking:
        optimum = lp_mkl_optimum(bank.transform(X), y, 1.0, 1.33, 1.0)
        assert by_table.objective == pytest.approx(optimum, rel=1e-4)


def test_bad_input_is_named(liver):
    X, stack, y = liver
    with pytest.raises(ValueError, match="regularizer 'l1'"):
        MKLClassifier(solver="smo", regularizer="l1").fit(X, y)
    with pytest.raises(ValueError, match="smooth dual"):
        smo_mkl(StackColumns(stack), y, 1.0, L1Simplex())
    with pytest.raises(ValueError, match="raise cache_size"):
        smo_mkl(StackColumns(stack), y, 1.0, LpNorm(2.0, 1.0), cache_size=1e-3)
    with pytest.raises(ValueError, match="p' parameter must be > 1"):
        MKLClassifier(solver="smo", regularizer="lp", p=1.0).fit(X, y)


def _svr_lp_optimum(stack, y, C, epsilon, p, lam):
    """``max y'beta - eps |beta|_1 - ||g(beta)||_q^2 / (8 lam)``, ``1'beta = 0, |beta| <= C``."""
    from reference import _factor

    n, _, m = stack.shape
    q = p / (p - 1.0)
    beta = cp.Variable(n)
    g = cp.Variable(m)
    cons = [cp.abs(beta) <= C, cp.sum(beta) == 0]
    for k in range(m):
        cons.append(cp.sum_squares(_factor(stack[:, :, k]).T @ beta) <= g[k])
    s = cp.Variable(nonneg=True)
    cons.append(cp.pnorm(g, q) <= s)
    objective = y @ beta - epsilon * cp.norm1(beta) - cp.square(s) / (8 * lam)
    prob = cp.Problem(cp.Maximize(objective), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return float(prob.value)


@pytest.fixture(scope="module")
def abalone():
    X, y = load_dataset("abalone")
    rows = np.random.default_rng(0).choice(len(y), size=80, replace=False)
    X, y = X[rows], y[rows].astype(float)
    specs, standardize = resolve_kernels("simple_mkl", X[:, :3])
    return X[:, :3], KernelBank(specs, standardize=standardize).fit_transform(X[:, :3]), y


@pytest.mark.parametrize("p", [1.33, 2.0])
def test_regression_reaches_the_optimum_with_an_honest_gap(abalone, p):
    X, stack, y = abalone
    regularizer = LpNorm(p, 1.0)
    result = smo_mkl_regression(StackColumns(stack), y, 10.0, regularizer, epsilon=0.5,
                                tol=1e-7, max_iter=3000)
    assert result.converged
    optimum = _svr_lp_optimum(stack, y, 10.0, 0.5, p, 1.0)
    assert result.objective == pytest.approx(optimum, rel=1e-4)
    assert abs(result.alpha.sum()) <= 1e-8 * 10.0 * y.size  # 1'beta = 0
    assert np.all(np.abs(result.alpha) <= 10.0 + 1e-12)


def test_regressor_estimator_on_the_fly_equals_precomputed(abalone):
    X, stack, y = abalone
    common = dict(p=1.5, C=10.0, epsilon=0.5, tol=1e-6)
    on_the_fly = MKLRegressor(**common, kernels="simple_mkl",
                              kernel_normalization="trace").fit(X, y)
    precomputed = MKLRegressor(kernels="precomputed", **common).fit(stack, y)
    assert on_the_fly.objective_ == pytest.approx(precomputed.objective_, rel=1e-8)
    np.testing.assert_allclose(on_the_fly.predict(X), precomputed.predict(stack), atol=1e-4)
    assert on_the_fly.score(X, y) > 0.3


def test_single_kernel_regression_is_svr_on_the_learned_scale(abalone):
    from sklearn.svm import SVR

    _, stack, y = abalone
    K = stack[:, :, :1]
    model = MKLRegressor(kernels="precomputed", p=2.0, C=10.0, epsilon=0.5, tol=1e-8,
                         max_iter=5000).fit(K, y)
    d = model.kernel_weights_[0]
    svr = SVR(kernel="precomputed", C=10.0, epsilon=0.5, tol=1e-10).fit(d * K[:, :, 0], y)
    np.testing.assert_allclose(model.predict(K), svr.predict(d * K[:, :, 0]), atol=1e-3)


def test_smo_model_round_trips_through_a_model_file(liver, tmp_path):
    from mklearn import load_model, save_model

    X, _, y = liver
    model = MKLClassifier(solver="smo", regularizer="lp", p=1.5, C=10.0).fit(X, y)
    save_model(model, tmp_path / "smo.npz")
    again = load_model(tmp_path / "smo.npz")
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
