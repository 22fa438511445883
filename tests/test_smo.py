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
