"""Sequential minimal optimisation with second-order working-set selection (WSS2).

One solver for LIBSVM's generic dual (Chang and Lin, "LIBSVM", ACM TIST 2011, section 4.1)::

    min_a  1/2 a' Q a + p' a   s.t.  y' a = const,  0 <= a_i <= upper_i,
    Q_ij = y_i y_j K[index_i, index_j],  y_i in {-1, +1}.

C-SVC, epsilon-SVR and one-class SVM differ only in ``K``'s index map, ``y``, ``p`` and
``upper`` (LIBSVM's Q-matrix trick). The working set is chosen by WSS2 of Fan, Chen and Lin
(JMLR 6, 2005, Algorithm 2): ``i`` maximally violating, ``j`` maximising the second-order gain
``b_ij^2 / a_ij``. The column provider here is a dense kernel matrix ``K`` (the combined
precomputed kernel); columns are read as rows of the symmetric ``K``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

_TAU = 1e-12  # curvature used when a_ij <= 0 (Fan, Chen and Lin 2005, eq. 19)


class QPResult(NamedTuple):
    """Solution of the generic dual QP.

    Attributes
    ----------
    alpha : ndarray of shape (l,)
        Dual variables.
    grad : ndarray of shape (l,)
        Gradient ``Q alpha + p`` at ``alpha``.
    rho : float
        Offset; the decision function is ``sum_i y_i alpha_i K(x_i, x) - rho``.
    objective : float
        ``1/2 alpha' Q alpha + p' alpha`` (to be minimised).
    violation : float
        Maximal KKT violation ``m(alpha) - M(alpha)`` at exit.
    n_iter : int
        Number of two-variable steps taken.
    converged : bool
        Whether ``violation <= tol`` was reached before ``max_iter``.
    """

    alpha: np.ndarray
    grad: np.ndarray
    rho: float
    objective: float
    violation: float
    n_iter: int
    converged: bool


@njit(cache=True)
def _smo_loop(K, index, y, upper, alpha, grad, tol, max_iter):
    """Run WSS2-SMO in place on ``alpha`` and ``grad``; return (n_iter, violation)."""
    n_var = alpha.shape[0]
    diag = np.empty(n_var)
    for t in range(n_var):
        diag[t] = K[index[t], index[t]]
    n_iter = 0
    violation = np.inf
    while n_iter < max_iter:
        # i: maximal violating index in I_up, by m(alpha) = max_{I_up} -y_t G_t
        m_up = -np.inf
        i = -1
        for t in range(n_var):
            in_up = alpha[t] < upper[t] if y[t] > 0 else alpha[t] > 0.0
            if in_up:
                v = -y[t] * grad[t]
                if v >= m_up:
                    m_up = v
                    i = t
        if i < 0:
            violation = 0.0
            break
        row_i = K[index[i]]
        # j: in I_low with -y_j G_j < m, maximising b^2 / a (second-order gain)
        m_low = np.inf
        best_gain = 0.0
        j = -1
        for t in range(n_var):
            in_low = alpha[t] > 0.0 if y[t] > 0 else alpha[t] < upper[t]
            if not in_low:
                continue
            v = -y[t] * grad[t]
            if v < m_low:
                m_low = v
            b = m_up - v
            if b > 0.0:
                a = diag[i] + diag[t] - 2.0 * row_i[index[t]]
                if a <= 0.0:
                    a = _TAU
                gain = b * b / a
                if gain > best_gain:
                    best_gain = gain
                    j = t
        violation = m_up - m_low
        if violation <= tol or j < 0:
            break
        # Step t >= 0 along d_i = y_i, d_j = -y_j keeps y'alpha fixed.
        row_j = K[index[j]]
        a = diag[i] + diag[j] - 2.0 * row_i[index[j]]
        if a <= 0.0:
            a = _TAU
        step = (m_up + y[j] * grad[j]) / a
        room_i = upper[i] - alpha[i] if y[i] > 0 else alpha[i]
        room_j = alpha[j] if y[j] > 0 else upper[j] - alpha[j]
        hit_i = room_i <= step
        hit_j = room_j <= step
        if hit_i or hit_j:
            step = min(room_i, room_j)
        alpha[i] += y[i] * step
        alpha[j] -= y[j] * step
        if hit_i and room_i <= room_j:  # snap exactly onto the bound that was hit
            alpha[i] = upper[i] if y[i] > 0 else 0.0
        if hit_j and room_j <= room_i:
            alpha[j] = 0.0 if y[j] > 0 else upper[j]
        for t in range(n_var):
            grad[t] += y[t] * step * (row_i[index[t]] - row_j[index[t]])
        n_iter += 1
    return n_iter, violation


def _offset(alpha, grad, y, upper):
    """LIBSVM's rho: mean of y_t G_t over free variables, else the midpoint of its bounds."""
    y_grad = y * grad
    at_upper = alpha >= upper
    at_lower = alpha <= 0.0
    free = ~(at_upper | at_lower)
    if free.any():
        return float(y_grad[free].mean())
    # bounds of rho from variables at a bound (KKT conditions of the dual)
    ub_mask = (at_upper & (y < 0)) | (at_lower & (y > 0))
    lb_mask = (at_upper & (y > 0)) | (at_lower & (y < 0))
    ub = y_grad[ub_mask].min() if ub_mask.any() else np.inf
    lb = y_grad[lb_mask].max() if lb_mask.any() else -np.inf
    if np.isfinite(ub) and np.isfinite(lb):
        return float((ub + lb) / 2)
    return float(ub if np.isfinite(ub) else lb)


def solve_qp(K, y, p, upper, *, index=None, alpha0=None, tol=1e-3, max_iter=None):
    """Solve LIBSVM's generic dual QP by WSS2-SMO.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric PSD kernel matrix, C-contiguous float64.
    y : ndarray of shape (l,)
        Signs in {-1, +1}: the equality-constraint coefficients, also the sign pattern of Q.
    p : ndarray of shape (l,)
        Linear term.
    upper : ndarray of shape (l,)
        Upper bounds (lower bounds are 0).
    index : ndarray of shape (l,), optional
        Row of ``K`` for each variable (``arange(n)`` by default; SVR maps 2n variables onto
        n rows).
    alpha0 : ndarray of shape (l,), optional
        Feasible starting point (warm start); zeros by default. ``y' alpha0`` is kept.
    tol : float
        Stopping tolerance on the maximal KKT violation ``m(alpha) - M(alpha)``.
    max_iter : int, optional
        Cap on the number of two-variable steps; default ``max(10**7, 100 l)``.

    Returns
    -------
    QPResult
    """
    K = np.ascontiguousarray(K, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    p = np.ascontiguousarray(p, dtype=np.float64)
    upper = np.ascontiguousarray(upper, dtype=np.float64)
    n_var = y.shape[0]
    index = np.arange(n_var, dtype=np.int64) if index is None else np.asarray(index, np.int64)
    if alpha0 is None:
        alpha = np.zeros(n_var)
        grad = p.copy()
    else:
        alpha = np.clip(np.asarray(alpha0, dtype=np.float64), 0.0, upper)
        grad = p + _q_times(K, index, y, alpha)
    if max_iter is None:
        max_iter = max(10**7, 100 * n_var)
    n_iter, violation = _smo_loop(K, index, y, upper, alpha, grad, float(tol), int(max_iter))
    objective = 0.5 * float(alpha @ (grad + p))
    rho = _offset(alpha, grad, y, upper)
    return QPResult(
        alpha, grad, rho, objective, float(violation), int(n_iter), bool(violation <= tol)
    )


def _q_times(K, index, y, alpha):
    """``Q alpha`` using only the columns of non-zero alpha."""
    nz = np.flatnonzero(alpha)
    if nz.size == 0:
        return np.zeros_like(alpha)
    if nz.size * 4 >= alpha.size:  # dense enough: one matrix-vector product, no gather
        weights = np.bincount(index[nz], y[nz] * alpha[nz], minlength=K.shape[0])
        return y * (K @ weights)[index]
    return y * (K[np.ix_(index, index[nz])] @ (y[nz] * alpha[nz]))


def svc_dual(K, y, C, *, alpha0=None, tol=1e-3, max_iter=None):
    """C-SVC dual ``max 1'a - 1/2 a' Y K Y a`` over ``0 <= a <= C``, ``y'a = 0``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float or ndarray of shape (n,)
        Box constraint (per-sample costs allowed, e.g. ``C * sample_weight``).
    alpha0, tol, max_iter
        As in :func:`solve_qp`.

    Returns
    -------
    QPResult
        ``objective`` is minus the SVM dual value; the intercept is ``-rho``.
    """
    y = np.asarray(y, dtype=np.float64)
    upper = np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape).copy()
    return solve_qp(K, y, -np.ones_like(y), upper, alpha0=alpha0, tol=tol, max_iter=max_iter)


def svr_dual(K, y, C, epsilon, *, alpha0=None, tol=1e-3, max_iter=None):
    """epsilon-SVR dual in LIBSVM's form with 2n variables ``[a+; a-]``.

    ``min 1/2 beta' K beta + epsilon 1'(a+ + a-) - y' beta``, ``beta = a+ - a-``,
    ``0 <= a+, a- <= C``, ``1'beta = 0`` (Chang and Lin, LIBSVM, section 2.3): signs
    ``[+1, -1]``, rows ``[0..n-1, 0..n-1]``, linear term ``[epsilon - y, epsilon + y]``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix.
    y : ndarray of shape (n,)
        Real targets.
    C : float or ndarray of shape (n,)
        Box constraint.
    epsilon : float >= 0
        Half-width of the insensitive tube.
    alpha0 : ndarray of shape (2n,), optional
        Feasible warm start ``[a+; a-]``.
    tol, max_iter
        As in :func:`solve_qp`.

    Returns
    -------
    QPResult
        Over the 2n variables; ``beta = alpha[:n] - alpha[n:]`` and the prediction is
        ``K(x, X) @ beta - rho``.
    """
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    cost = np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape)
    signs = np.concatenate([np.ones(n), -np.ones(n)])
    linear = np.concatenate([epsilon - y, epsilon + y])
    index = np.concatenate([np.arange(n), np.arange(n)])
    return solve_qp(K, signs, linear, np.concatenate([cost, cost]), index=index, alpha0=alpha0,
                    tol=tol, max_iter=max_iter)


def one_class_dual(K, nu, *, alpha0=None, tol=1e-3, max_iter=None):
    """One-class SVM dual ``min 1/2 a' K a`` over ``0 <= a <= 1``, ``1'a = nu n``.

    Schoelkopf et al. (2001) in LIBSVM's scaling (Chang and Lin, LIBSVM, section 2.2); started,
    as LIBSVM does, from ``a_i = 1`` for the first ``floor(nu n)`` points and the remainder on
    the next one.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix.
    nu : float in (0, 1]
        Upper bound on the fraction of outliers, lower bound on that of support vectors.
    alpha0 : ndarray of shape (n,), optional
        Feasible warm start (``1'alpha0 = nu n``).
    tol, max_iter
        As in :func:`solve_qp`.

    Returns
    -------
    QPResult
        The decision function is ``K(x, X) @ alpha - rho`` (positive inside).

    Raises
    ------
    ValueError
        If ``nu`` is not in (0, 1].
    """
    if not 0.0 < nu <= 1.0:
        raise ValueError(f"nu must lie in (0, 1], got {nu}")
    n = K.shape[0]
    if alpha0 is None:
        total = nu * n
        alpha0 = np.zeros(n)
        whole = int(np.floor(total))
        alpha0[:whole] = 1.0
        if whole < n:
            alpha0[whole] = total - whole
    return solve_qp(K, np.ones(n), np.zeros(n), np.ones(n), alpha0=alpha0, tol=tol,
                    max_iter=max_iter)
