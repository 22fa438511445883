"""Exact convex references for small MKL problems (cvxpy with Clarabel), ALGORITHMS.md."""

from __future__ import annotations

import cvxpy as cp
import numpy as np


def _factor(K: np.ndarray) -> np.ndarray:
    """A factor L with ``L L' = K`` (K symmetric PSD), from the eigendecomposition."""
    w, V = np.linalg.eigh(0.5 * (K + K.T))
    keep = w > 1e-12 * max(w.max(), 1e-300)
    return V[:, keep] * np.sqrt(w[keep])


def _dual_setup(stack, y, C, scale=1.0):
    """``(alpha, g, constraints)`` with ``alpha = scale beta``, ``0 <= beta <= C / scale``,
    and ``g_k = scale^2 h_k >= alpha' Y K_k Y alpha`` (the solver's variables beta and h)."""
    n, _, m = stack.shape
    beta = cp.Variable(n)
    h = cp.Variable(m)
    cons = [beta >= 0, beta <= C / scale, y @ beta == 0]
    for k in range(m):
        L = _factor(stack[:, :, k])
        cons.append(cp.sum_squares(L.T @ cp.multiply(y, beta)) <= h[k])
    return scale * beta, scale**2 * h, cons


def l1_mkl_optimum(stack, y, C) -> float:
    """``max_alpha 1'alpha - 1/2 max_k alpha' Y K_k Y alpha`` (l1 simplex MKL, as an SOCP),
    solved for ``alpha / C`` (variables of order 1: on pima at C = 100, alpha itself left
    Clarabel's optimum 1.9e-6 relative below the certified one)."""
    alpha, g, cons = _dual_setup(stack, y, C, scale=C)
    t = cp.Variable()
    cons.append(g <= t)
    return C * _solve_max((cp.sum(alpha) - t / 2) / C, cons)


def lp_mkl_optimum(stack, y, C, p, lam) -> float:
    """``max_alpha 1'alpha - 1/(8 lam) ||g(alpha)||_q^2`` (SMO-MKL dual, eq. 9)."""
    q = p / (p - 1.0)
    alpha, g, cons = _dual_setup(stack, y, C)
    s = cp.Variable(nonneg=True)
    cons.append(cp.pnorm(g, q) <= s)
    return _solve_max(cp.sum(alpha) - cp.square(s) / (8 * lam), cons)


def _solve_max(objective, cons) -> float:
    prob = cp.Problem(cp.Maximize(objective), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return float(prob.value)


def l1_svr_optimum(stack, y, C, epsilon) -> float:
    """l1-MKL epsilon-SVR dual: ``max y'b - epsilon 1'(a+ + a-) - 1/2 max_k b' K_k b`` over
    ``b = a+ - a-``, ``0 <= a+, a- <= C``, ``1'b = 0`` (the max over alpha of the min over the
    simplex, with the epigraph variable t >= 1/2 b' K_k b for every k)."""
    n, _, m = stack.shape
    a_plus, a_minus, t = cp.Variable(n), cp.Variable(n), cp.Variable()
    beta = a_plus - a_minus
    cons = [a_plus >= 0, a_plus <= C, a_minus >= 0, a_minus <= C, cp.sum(beta) == 0]
    for k in range(m):
        cons.append(0.5 * cp.sum_squares(_factor(stack[:, :, k]).T @ beta) <= t)
    return _solve_max(y @ beta - epsilon * cp.sum(a_plus + a_minus) - t, cons)


def l1_one_class_optimum(stack, nu) -> float:
    """l1-MKL one-class dual in LIBSVM's scaling: ``max -1/2 max_k a' K_k a`` over
    ``0 <= a <= 1``, ``1'a = nu n``."""
    n, _, m = stack.shape
    alpha, t = cp.Variable(n), cp.Variable()
    cons = [alpha >= 0, alpha <= 1, cp.sum(alpha) == nu * n]
    for k in range(m):
        cons.append(0.5 * cp.sum_squares(_factor(stack[:, :, k]).T @ alpha) <= t)
    return _solve_max(-t, cons)


def group_mkl_optimum(stack, y, C, codes) -> float:
    """``max_alpha 1'alpha - 1/2 (sum_j max_{k in j} ||L_jk' Y alpha||)^2`` as an SOCP."""
    n, _, m = stack.shape
    alpha = cp.Variable(n)
    root = cp.Variable(codes.max() + 1)  # root_j >= sqrt(alpha' Q_jk alpha) for k in group j
    cons = [alpha >= 0, alpha <= C, y @ alpha == 0]
    for k in range(m):
        L = _factor(stack[:, :, k])
        cons.append(cp.norm(L.T @ cp.multiply(y, alpha)) <= root[codes[k]])
    prob = cp.Problem(cp.Maximize(cp.sum(alpha) - cp.square(cp.sum(root)) / 2), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return float(prob.value)
