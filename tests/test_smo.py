"""The SMO core against scikit-learn's SVC (LIBSVM) on bundled real data."""

import numpy as np
import pytest
from sklearn.svm import SVC

from mklearn.datasets import load_dataset
from mklearn.kernels import RBF, KernelBank, Polynomial
from mklearn.svm import solve_qp, svc_dual

SETS = ["sonar", "ionosphere", "liver-disorders", "heart", "wpbc", "breast-cancer"]


def _dual_value(K, y, alpha):
    v = alpha * y
    return alpha.sum() - 0.5 * v @ K @ v


def _kernel(name, spec, n=200):
    X, y = load_dataset(name)
    rng = np.random.default_rng(0)
    rows = rng.choice(len(y), size=min(n, len(y)), replace=False)
    bank = KernelBank([spec], standardize=True, normalize=None)
    return bank.fit_transform(X[rows])[:, :, 0], y[rows].astype(float)


@pytest.mark.parametrize("name", SETS)
@pytest.mark.parametrize("C", [1.0, 100.0])
def test_dual_objective_and_support_match_svc(name, C):
    K, y = _kernel(name, RBF(sigma=4.0))
    ours = svc_dual(K, y, C, tol=1e-8)
    ref = SVC(kernel="precomputed", C=C, tol=1e-8).fit(K, y)
    alpha_ref = np.zeros_like(y)
    alpha_ref[ref.support_] = np.abs(ref.dual_coef_[0])
    w_ours, w_ref = -ours.objective, _dual_value(K, y, alpha_ref)
    assert ours.converged
    assert abs(w_ours - w_ref) <= 1e-6 * abs(w_ref)
    assert w_ours == pytest.approx(_dual_value(K, y, ours.alpha), rel=1e-10)
    support = np.flatnonzero(ours.alpha > 1e-8 * C)
    assert set(support) == set(ref.support_)
    # LIBSVM's bias; sklearn negates it for binary problems with classes (-1, +1)
    assert -ours.rho == pytest.approx(ref.intercept_[0], rel=1e-4, abs=1e-4)


def test_polynomial_kernel_and_warm_start():
    K, y = _kernel("heart", Polynomial(degree=2, coef0=1.0, gamma=0.05))
    cold = svc_dual(K, y, 10.0, tol=1e-8)
    perturbed = svc_dual(1.1 * K, y, 10.0, tol=1e-8)
    warm = svc_dual(K, y, 10.0, alpha0=perturbed.alpha, tol=1e-8)
    assert warm.objective == pytest.approx(cold.objective, rel=1e-9)
    assert warm.n_iter < cold.n_iter


def test_warm_product_reaches_the_same_optimum_reading_fewer_rows():
    """A warm start with its product ``K v0`` known (SPG-GMKL's products) solves the same QP
    as one whose starting gradient is computed, and on rows combined on demand it reads
    fewer of them: none for the start, only the moved variables' for a reconstruction."""
    from mklearn.kernels.row_sources import StackCombinedRows

    X, y = load_dataset("heart")
    y = y.astype(float)
    bank = KernelBank([RBF(sigma=s) for s in (1.0, 3.0, 9.0)], standardize=True,
                      normalize="diagonal")
    km = np.ascontiguousarray(bank.fit_transform(X).transpose(2, 0, 1))
    diagonals = np.ascontiguousarray(np.diagonal(km, axis1=1, axis2=2))
    d0, d1 = np.array([0.2, 0.5, 0.3]), np.array([0.1, 0.6, 0.3])
    start = svc_dual(np.tensordot(d0, km, axes=1), y, 10.0, tol=1e-3).alpha
    warm_product = np.tensordot(d1, km, axes=1) @ (start * y)
    runs = {}
    for name, product in (("computed", None), ("known", warm_product)):
        rows = StackCombinedRows(km, d1, diagonals)
        result = svc_dual(rows, y, 10.0, alpha0=start, tol=1e-8, warm_product=product)
        runs[name] = (result, int((rows.slot_of >= 0).sum()))
    (computed, rows_computed), (known, rows_known) = runs["computed"], runs["known"]
    assert known.converged and computed.converged
    assert known.objective == pytest.approx(computed.objective, rel=1e-10)
    np.testing.assert_allclose(known.grad, computed.grad, atol=1e-8)
    assert rows_known < rows_computed
    # a product at another point is never used: a start outside the box is clipped (here
    # back onto the same start, from above its bound C), and the wrong product ignored
    assert start.max() == 10.0
    outside = start + 20.0 * (start == start.max())
    clipped = svc_dual(np.tensordot(d1, km, axes=1), y, 10.0, alpha0=outside, tol=1e-8,
                       warm_product=np.zeros(y.size))
    assert clipped.objective == pytest.approx(computed.objective, rel=1e-10)


def test_feasibility_is_kept():
    K, y = _kernel("sonar", RBF(sigma=2.0))
    result = svc_dual(K, y, 5.0, tol=1e-3)
    assert np.all(result.alpha >= 0) and np.all(result.alpha <= 5.0)
    assert abs(result.alpha @ y) < 1e-9
    assert result.violation <= 1e-3


def test_per_sample_costs_match_svc_class_weights():
    K, y = _kernel("liver-disorders", RBF(sigma=2.0))
    costs = np.where(y > 0, 3.0, 1.0)
    ours = svc_dual(K, y, costs, tol=1e-8)
    ref = SVC(kernel="precomputed", C=1.0, tol=1e-8, class_weight={1.0: 3.0, -1.0: 1.0})
    ref.fit(K, y)
    alpha_ref = np.zeros_like(y)
    alpha_ref[ref.support_] = np.abs(ref.dual_coef_[0])
    assert -ours.objective == pytest.approx(_dual_value(K, y, alpha_ref), rel=1e-6)


def test_iteration_cap_reports_not_converged():
    K, y = _kernel("sonar", RBF(sigma=1.0))
    result = solve_qp(K, y, -np.ones_like(y), np.full_like(y, 100.0), tol=1e-10, max_iter=5)
    assert result.n_iter == 5
    assert not result.converged


def _rbf(X, gamma):
    from sklearn.metrics.pairwise import rbf_kernel

    return rbf_kernel(X, gamma=gamma)


@pytest.mark.parametrize("C,epsilon", [(1.0, 0.1), (100.0, 0.5)])
def test_svr_matches_libsvm(C, epsilon):
    from sklearn.svm import SVR

    from mklearn.datasets import load_dataset
    from mklearn.svm import svr_dual

    X, y = load_dataset("abalone")
    X, y = X[:200], y[:200].astype(float)
    K = _rbf(X, 0.5)
    qp = svr_dual(K, y, C, epsilon, tol=1e-8)
    beta = qp.alpha[:200] - qp.alpha[200:]
    ref = SVR(kernel="precomputed", C=C, epsilon=epsilon, tol=1e-10).fit(K, y)
    ref_beta = np.zeros(200)
    ref_beta[ref.support_] = ref.dual_coef_[0]
    def dual(b):  # the SVR dual objective (to be minimised); beta itself need not be unique
        return 0.5 * b @ K @ b + epsilon * np.abs(b).sum() - y @ b

    assert dual(beta) == pytest.approx(dual(ref_beta), rel=1e-7, abs=1e-9)
    assert abs(beta.sum()) <= 1e-9 * C * 200
    assert np.all(np.abs(beta) <= C * (1 + 1e-12))
    np.testing.assert_allclose(K @ beta - qp.rho, ref.predict(K), atol=1e-3)


@pytest.mark.parametrize("nu", [0.05, 0.3, 0.85])  # nu n not an integer: rho is unique
def test_one_class_matches_libsvm(nu):
    from sklearn.svm import OneClassSVM

    from mklearn.svm import one_class_dual

    X, _ = load_dataset("ionosphere")
    K = _rbf(X[:150], 0.1)
    qp = one_class_dual(K, nu, tol=1e-9)
    assert qp.alpha.sum() == pytest.approx(nu * 150)
    ref = OneClassSVM(kernel="precomputed", nu=nu, tol=1e-10).fit(K)
    ours = K @ qp.alpha - qp.rho
    scale = max(1.0, float(np.abs(ref.decision_function(K)).max()))
    np.testing.assert_allclose(ours, ref.decision_function(K), atol=1e-5 * scale)


def test_one_class_with_nu_one_keeps_every_point_at_the_bound():
    from mklearn.svm import one_class_dual

    qp = one_class_dual(np.eye(4) + 0.5, 1.0, tol=1e-9)
    np.testing.assert_array_equal(qp.alpha, np.ones(4))


def test_one_class_rejects_nu_outside_the_unit_interval():
    from mklearn.svm import one_class_dual

    with pytest.raises(ValueError, match=r"nu must lie in \(0, 1\]"):
        one_class_dual(np.eye(3), 0.0)


def test_cached_rows_products_load_missing_rows_or_read_the_source():
    """``K v`` through the row cache: the support's missing rows loaded together when they fit,
    the source's product otherwise; both equal the dense product."""
    from mklearn.kernels import KernelBank
    from mklearn.kernels.columns import KernelColumns
    from mklearn.kernels.operator import RowKernels
    from mklearn.kernels.row_sources import CombinedRows

    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    bank = KernelBank([RBF(gamma=0.3), RBF(gamma=2.0, features=1)]).fit(X)
    stack = bank.fit_transform(X)
    d = np.array([0.7, 0.3])
    operator = RowKernels(KernelColumns(bank), cache_size=1.0)
    v = np.zeros(40)
    v[rng.choice(40, 12, replace=False)] = rng.normal(size=12)
    for rows_mb in (1.0, 2 * 8 * 40 / 2**20):  # every row fits / two rows only
        K = CombinedRows(operator, d, rows_mb)
        K.load(3)
        np.testing.assert_allclose(K.matvec(v), stack @ d @ v, rtol=1e-12, atol=1e-12)


def test_kernel_outputs_from_the_solve_gradient_are_the_product():
    """``f = K v`` read off a solve's gradient (C-SVC, SVR's 2n variables, one-class) equals
    the product with K, and so does the primal value computed from it."""
    from mklearn.formulation.losses import kernel_outputs
    from mklearn.solvers.tasks import ClassificationTask, OneClassTask, RegressionTask

    K, y = _kernel("sonar", RBF(sigma=2.0))
    target = np.linspace(-1.0, 1.0, y.size)
    for task in (ClassificationTask(y, np.full(y.size, 3.0)),
                 RegressionTask(target, np.full(y.size, 3.0), 0.1),
                 OneClassTask(y.size, 0.3)):
        alpha0 = task.initial_alpha() if hasattr(task, "initial_alpha") else None
        qp = task.solve(K, alpha0, 1e-3)
        f = K @ task.coefficients(qp.alpha)
        np.testing.assert_allclose(kernel_outputs(task, K, qp.alpha, qp.grad), f,
                                   rtol=1e-9, atol=1e-9 * np.abs(f).max())
        np.testing.assert_allclose(task.primal(K, qp.alpha, qp.grad), task.primal(K, qp.alpha),
                                   rtol=1e-9)
