"""EasyMKL (solver "easymkl"): gamma and weights against cvxpy with Clarabel, the stack and
rows-from-X paths, the final SVM against scikit-learn's SVC, KOMD, multiclass, bad input."""

import cvxpy as cp
import numpy as np
import pytest
from reference import _factor
from sklearn.svm import SVC
from sklearn.utils._param_validation import InvalidParameterError

from mklearn import MKLClassifier, MKLRegressor
from mklearn.formulation.combinations import SumOfKernels
from mklearn.kernels import RBF, KernelBank, Polynomial
from mklearn.kernels.columns import KernelColumns
from mklearn.kernels.operator import RowKernels
from mklearn.kernels.row_sources import CombinedRows, DenseRows
from mklearn.solvers.easymkl import easymkl, hull_qp

FAMILY = [RBF(sigma=0.5), RBF(sigma=2.0), Polynomial(degree=2)]


def _problem(n=40, positive_share=0.5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(np.arange(n) < int(positive_share * n), 1.0, -1.0)
    X[:, 0] += 0.8 * y
    bank = KernelBank(FAMILY, normalize="trace")
    return X, y, bank.fit_transform(X)


def _reference(stack, y, a, b):
    """gamma of ``min a v'Kv + b ||gamma||^2`` on one simplex per class (``K`` the stack's sum),
    and the weights ``v'K_k v`` normalised."""
    gamma = cp.Variable(y.size)
    L = _factor(stack.sum(axis=2))
    objective = a * cp.sum_squares(L.T @ cp.multiply(y, gamma)) + b * cp.sum_squares(gamma)
    constraints = [gamma >= 0, cp.sum(gamma[y > 0]) == 1, cp.sum(gamma[y < 0]) == 1]
    cp.Problem(cp.Minimize(objective), constraints).solve(
        solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    v = y * gamma.value
    terms = np.array([v @ stack[:, :, k] @ v for k in range(stack.shape[2])])
    return gamma.value, terms / terms.sum()


@pytest.mark.parametrize("lam", [0.0, 0.01, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("positive_share", [0.5, 0.2])
def test_gamma_and_weights_equal_the_cvxpy_reference(lam, positive_share):
    _, y, stack = _problem(positive_share=positive_share)
    gamma_ref, d_ref = _reference(stack, y, 1.0 - lam, lam)
    rows = DenseRows(stack.sum(axis=2))
    gamma, *_, converged, _ = hull_qp(rows, y, 1.0 - lam, lam, qp_tol=1e-10, max_checks=500)
    assert converged
    np.testing.assert_allclose(gamma, gamma_ref, atol=1e-4)
    result = easymkl(SumOfKernels(stack), y, 1.0, lam=lam)
    np.testing.assert_allclose(result.kernel_weights, d_ref, atol=1e-4)
    assert result.kernel_weights.sum() == pytest.approx(1.0)
    assert result.relative_duality_gap <= 1e-8


@pytest.mark.parametrize("seed, positive_share", [(0, 0.5), (2, 0.2), (1, 0.2), (3, 0.1)])
def test_ridge_dominated_qp_reaches_the_reference_inside_or_on_the_boundary(seed,
                                                                           positive_share):
    """b >= a max K_ii (KOMD's case): conjugate gradients on the simplices' affine hull end
    the solve when their minimiser keeps every point (no SMO step); when it does not (the
    last two problems), SMO reaches the same reference."""
    _, y, stack = _problem(positive_share=positive_share, seed=seed)
    K = stack.sum(axis=2)
    a, b = 0.9, 0.9 * float(np.diag(K).max())
    gamma_ref, _ = _reference(stack, y, a, b)
    gamma, _, _, _, steps, converged, _ = hull_qp(DenseRows(K), y, a, b, qp_tol=1e-10,
                                                  max_checks=500)
    assert converged
    np.testing.assert_allclose(gamma, gamma_ref, atol=1e-6)
    interior = gamma_ref.min() > 1e-6
    assert (steps == 0) == interior
    assert interior == (seed in (0, 2))


def test_gamma_from_cached_rows_equals_the_dense_sum():
    """Rows of K through an LRU cache of a few rows (evictions) reach the same gamma."""
    X, y, stack = _problem(n=60)
    provider = SumOfKernels(stack)
    dense = hull_qp(DenseRows(stack.sum(axis=2)), y, 0.9, 0.1, qp_tol=1e-10, max_checks=500)
    cached = hull_qp(CombinedRows(provider, np.ones(3), 5 * 8 * 60 / 2**20), y, 0.9, 0.1,
                     qp_tol=1e-10, max_checks=500)
    np.testing.assert_allclose(cached[0], dense[0], atol=1e-6)


def _ill_conditioned(n=400, n_features=123, n_kernels=50, seed=0):
    """Sparse binary features (densities like a1a's) and RBF kernels on random 6-feature
    subsets, summed: SMO converges slowly once it has found the support."""
    rng = np.random.default_rng(seed)
    X = (rng.random(size=(n, n_features)) < rng.beta(0.3, 2.5, size=n_features)).astype(float)
    y = np.where(X @ rng.normal(size=n_features) + rng.normal(size=n) > 0, 1.0, -1.0)
    specs = [RBF(sigma=s * np.sqrt(6),
                 features=tuple(sorted(rng.choice(n_features, 6, replace=False).tolist())))
             for _ in range(n_kernels // 5) for s in (0.25, 0.5, 1, 2, 4)]
    bank = KernelBank(specs, standardize=True, normalize="diagonal")
    return y, bank.fit_transform(X).sum(axis=2)


def test_active_set_rounds_reach_the_same_optimum_in_fewer_steps(monkeypatch):
    from mklearn.solvers import easymkl as module

    y, K = _ill_conditioned()
    monkeypatch.setattr(module, "POLISH_FLOPS_PER_SECOND", 1e30)  # always worth it
    polished = hull_qp(DenseRows(K), y, 0.9, 0.1, qp_tol=1e-10, max_checks=500)
    monkeypatch.setattr(module, "POLISH_MAX_SUPPORT", 0)  # never polish
    plain = hull_qp(DenseRows(K), y, 0.9, 0.1, qp_tol=1e-10, max_checks=500)
    assert polished[5] and plain[5]  # both converged
    assert polished[2] == pytest.approx(plain[2], rel=1e-9)  # F
    np.testing.assert_allclose(polished[0], plain[0], atol=1e-6)
    assert polished[4] < plain[4] / 2  # SMO steps


def test_active_set_rounds_from_every_point_find_the_exact_optimum(monkeypatch):
    """From gamma uniform on each class (every point in the support, where the optimum
    leaves some at zero) the rounds alone drop and add points until the minimiser: the
    reference's (cvxpy with Clarabel), with no SMO step."""
    from mklearn.solvers import easymkl as module

    y, K = _ill_conditioned(n=150, n_kernels=10)
    monkeypatch.setattr(module, "POLISH_FLOPS_PER_SECOND", 1e30)
    rows = DenseRows(K)
    uniform = module._start(y, 0.1)
    found = module._Polish(rows, y, 0.9, 0.1, 1e-12)(uniform, rows.matvec(y * uniform), 1.0)
    expected, _ = _reference(K[:, :, None], y, 0.9, 0.1)
    assert np.count_nonzero(expected > 1e-6) < y.size
    assert found is not None
    F, gap = module._gap(y, 0.9, 0.1, *found)
    assert gap <= 1e-12 * F
    np.testing.assert_allclose(found[0], expected, atol=1e-5)


@pytest.mark.parametrize("lam_start", [0.1, 0.0])
def test_rounds_from_the_last_factor_match_new_factorisations(monkeypatch, lam_start):
    """A round solved from the last factor (points left out held at zero, points added by
    their Schur complement) gives the gamma a new factorisation of its support gives: from
    every point (rounds that drop points) and from one point per class (rounds that add)."""
    from mklearn.solvers import easymkl as module

    y, K = _ill_conditioned(n=150, n_kernels=10)
    monkeypatch.setattr(module, "POLISH_FLOPS_PER_SECOND", 1e30)
    monkeypatch.setattr(module, "ACTIVE_SET_ROUNDS", 40)
    rows = DenseRows(K)
    start = module._start(y, lam_start)
    w = rows.matvec(y * start)
    solved = {}
    for gain in (0.0, np.inf):  # always from the last factor; never
        monkeypatch.setattr(module, "REUSE_GAIN", gain)
        polish = module._Polish(rows, y, 0.9, 0.1, 1e-12)
        reused = []
        original = polish._solve_from_base
        monkeypatch.setattr(polish, "_solve_from_base",
                            lambda s, f=original, out=reused: out.append(f(s)) or out[-1])
        solved[gain] = polish(start, w, 1e9), reused
    (found, reused), (fresh, none) = solved[0.0], solved[np.inf]
    assert reused and all(values is not None for values in reused) and not none
    np.testing.assert_allclose(found[0], fresh[0], atol=1e-9)
    expected, _ = _reference(K[:, :, None], y, 0.9, 0.1)
    np.testing.assert_allclose(found[0], expected, atol=1e-5)


def test_active_set_rounds_that_never_reach_the_simplices_give_nothing(monkeypatch):
    """One round from every point puts some below zero: nothing on the simplices to keep."""
    from mklearn.solvers import easymkl as module

    y, K = _ill_conditioned(n=150, n_kernels=10)
    monkeypatch.setattr(module, "POLISH_FLOPS_PER_SECOND", 1e30)
    rows = DenseRows(K)
    uniform = module._start(y, 0.1)
    monkeypatch.setattr(module, "ACTIVE_SET_ROUNDS", 1)
    assert module._Polish(rows, y, 0.9, 0.1, 1e-10)(uniform, rows.matvec(y * uniform), 1.0) is None


@pytest.mark.parametrize("seed", range(5))
def test_a_gap_at_the_rounding_floor_ends_the_solve(seed):
    """A qp_tol below rounding: the solve stops at the floor of the gap, not at max_checks."""
    _, y, stack = _problem(n=60, seed=seed)
    *_, converged, history = hull_qp(DenseRows(stack.sum(axis=2)), y, 0.9, 0.1, qp_tol=1e-17,
                                     max_checks=40)
    assert converged and len(history) < 40


def test_rows_from_x_equal_the_stack():
    X, y, stack = _problem(n=50, positive_share=0.3)
    common = dict(solver="easymkl", C=3.0, tol=1e-8, solver_options={"qp_tol": 1e-10})
    rows = MKLClassifier(kernels=FAMILY, kernel_normalization="trace", cache_size=0.01,
                         kernel_storage="rows",
                         **common).fit(X, y)
    assert rows.kernel_storage_ == "rows"
    stacked = MKLClassifier(kernels="precomputed", **common).fit(stack, y)
    np.testing.assert_allclose(rows.kernel_weights_, stacked.kernel_weights_, atol=1e-8)
    np.testing.assert_allclose(rows.decision_function(X), stacked.decision_function(stack),
                               atol=1e-6)


@pytest.mark.parametrize("class_weight", [None, {-1.0: 3.0, 1.0: 0.5}])
def test_final_svm_is_sklearn_svc_on_the_learned_kernel(class_weight):
    _, y, stack = _problem(positive_share=0.3)
    model = MKLClassifier(kernels="precomputed", solver="easymkl", C=2.0, tol=1e-8,
                          class_weight=class_weight).fit(stack, y)
    K = stack @ model.kernel_weights_
    svc = SVC(kernel="precomputed", C=2.0, tol=1e-10, class_weight=class_weight).fit(K, y)
    np.testing.assert_allclose(model.decision_function(stack), svc.decision_function(K),
                               atol=1e-5)


def test_komd_learner_is_the_midpoint_rule_on_the_learned_kernel():
    """KOMD: gamma of its QP on K(d) (ridge lam n+ n- / n), decision K(d) Y gamma - b with
    b = gamma' K(d) Y gamma / 2 (MKLpy's EasyMKL with its default KOMD(lam=0.1))."""
    _, y, stack = _problem(positive_share=0.3)
    model = MKLClassifier(kernels="precomputed", solver="easymkl",
                          solver_options={"learner": "komd", "komd_tol": 1e-11}).fit(stack, y)
    K = stack @ model.kernel_weights_
    n_pos, n = np.count_nonzero(y > 0), y.size
    gamma, _ = _reference(K[:, :, None], y, 0.9, 0.1 * n_pos * (n - n_pos) / n)
    v = y * gamma
    expected = K @ v - 0.5 * gamma @ K @ v
    np.testing.assert_allclose(model.decision_function(stack), expected, atol=1e-5)


def test_multiclass_is_one_versus_rest_with_threads():
    X, _, stack = _problem(n=45)
    y = np.repeat([0, 1, 2], 15)
    model = MKLClassifier(kernels="precomputed", solver="easymkl", n_jobs=2).fit(stack, y)
    assert model.kernel_weights_.shape == (3, 3)
    for c in range(3):
        binary = easymkl(SumOfKernels(stack), np.where(y == c, 1.0, -1.0), 1.0)
        np.testing.assert_allclose(model.kernel_weights_[c], binary.kernel_weights, atol=1e-9)


def test_a_class_of_one_point_is_its_own_hull_point():
    _, y, stack = _problem(n=20)
    y = -np.ones(20)
    y[3] = 1.0
    gamma, *_ = hull_qp(DenseRows(stack.sum(axis=2)), y, 0.9, 0.1, qp_tol=1e-10,
                        max_checks=100)
    assert gamma[3] == 1.0
    model = MKLClassifier(kernels="precomputed", solver="easymkl").fit(stack, y)
    assert np.isfinite(model.decision_function(stack)).all()


def test_lam_outside_the_unit_interval_is_refused():
    _, y, stack = _problem(n=20)
    for lam in (-0.1, 1.5):
        with pytest.raises(InvalidParameterError, match="'lam' parameter of solver 'easymkl'"):
            MKLClassifier(kernels="precomputed", solver="easymkl",
                          solver_options={"lam": lam}).fit(stack, y)


def test_zero_kernels_are_refused_naming_the_kernels():
    _, y, _ = _problem(n=20)
    with pytest.raises(ValueError, match="EasyMKL: .* zero for every base kernel"), \
            pytest.warns(UserWarning):
        MKLClassifier(kernels="precomputed", solver="easymkl").fit(np.zeros((20, 20, 2)), y)


def test_regression_is_refused():
    X, y, _ = _problem(n=20)
    with pytest.raises(InvalidParameterError, match="'solver' parameter of MKLRegressor"):
        MKLRegressor(kernels=FAMILY, solver="easymkl").fit(X, y)


def test_rows_computed_from_x_through_a_small_cache_equal_the_stack():
    X, y, stack = _problem(n=30)
    bank = KernelBank(FAMILY, normalize="trace")
    bank.fit(X)
    from_x = easymkl(RowKernels(KernelColumns(bank), cache_size=0.2), y, 1.0)
    from_stack = easymkl(SumOfKernels(stack), y, 1.0)
    np.testing.assert_allclose(from_x.kernel_weights, from_stack.kernel_weights, atol=1e-8)


def test_lam_zero_on_meeting_hulls_stops_and_says_why():
    """Linear kernels on overlapping classes: the hulls meet, every v'K_k v is 0 at the
    optimum; the hard problem (lam = 0) terminates and the error names the cause."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.where(rng.random(200) > 0.5, 1.0, -1.0)
    stack = np.stack([X[:, :1] @ X[:, :1].T, X @ X.T], axis=-1)
    with pytest.raises(ValueError, match="convex hulls meet"):
        easymkl(SumOfKernels(stack), y, 1.0, lam=0.0)
