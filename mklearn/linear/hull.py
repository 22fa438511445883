"""EasyMKL's and KOMD's class-hull QP on low-rank kernels, solved in feature space.

The QP of :func:`mklearn.solvers.easymkl.hull_qp` on ``K = Z Z'`` (``Z`` of shape (n, R):
the features, each kernel's block scaled by ``sqrt(d_k)``) is

    min_gamma  F(gamma) = a ||Z' Y gamma||^2 + b ||gamma||^2

over one simplex per class. With ``a ||w||^2 = max_z (z'w - ||z||^2 / (4a))`` its dual is a
concave function of ``z`` in R dimensions,

    D(z) = -||z||^2 / (4a) + sum_c min_{gamma_c in simplex} (b ||gamma_c||^2 + s_c' gamma_c),
    s = Y Z z,

whose inner minimiser is the Euclidean projection ``gamma_c = P(-s_c / (2b))`` onto the
simplex (Duchi, Shalev-Shwartz, Singer and Chandra, ICML 2008, Fig. 1) and whose gradient is
``-z / (2a) + Z' Y gamma(z)`` (Danskin). ``D`` is smooth for ``b > 0`` (the projection is
Lipschitz): it is maximised by L-BFGS (scipy), each evaluation ``O(n R + n log n)``, and every
evaluation gives a primal point ``gamma(z)`` with the certificate ``F(gamma) - D(z) >= F(gamma)
- F*`` (weak duality). No ``n x n`` array is formed.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit
from scipy.optimize import minimize

from mklearn.linear.blocks import block_outputs, block_products

__all__ = ["HullSolution", "hull_qp_features"]

@njit(cache=True)
def _onto_simplex(x, out):
    """``out = argmin_{g >= 0, sum g = 1} ||g - x||`` (Duchi et al. 2008, sort based)."""
    ordered = np.sort(x)[::-1]
    total, theta = 0.0, 0.0
    for j in range(ordered.size):
        total += ordered[j]
        candidate = (total - 1.0) / (j + 1)
        if ordered[j] - candidate > 0.0:
            theta = candidate
    for i in range(x.size):
        out[i] = max(x[i] - theta, 0.0)


class HullSolution:
    """The hull QP's solution: ``gamma``, the blocks ``u = Phi' Y gamma`` (unscaled), the
    value F, the certified gap ``F - D`` and the counts."""

    def __init__(self, gamma, u, value, gap, n_iter, converged, history):
        self.gamma, self.u, self.value, self.gap = gamma, u, value, gap
        self.n_iter, self.converged, self.history = n_iter, converged, history


class _Stop(Exception):
    """Raised inside the objective to end the search: the certified gap reached the
    tolerance (``converged``), or the gap checks ran out."""

    def __init__(self, converged):
        super().__init__()
        self.converged = converged


class _Dual:
    """``-D(z)`` and its gradient, keeping the best primal point seen."""

    def __init__(self, features, starts, y, scale, a, b, qp_tol, max_checks, callback,
                 start):
        self.features, self.starts, self.y = features, starts, y
        self.weights = scale ** 2  # d_k per block: K = sum_k d_k Phi_k Phi_k'
        self.column_scale = np.repeat(scale, np.diff(starts))
        self.kernels = np.flatnonzero(scale > 0).astype(np.int64)
        self.a, self.b, self.qp_tol, self.max_checks = a, b, qp_tol, max_checks
        self.classes = [np.flatnonzero(y > 0), np.flatnonzero(y < 0)]
        self.callback, self.start = callback, start
        self.best, self.history = None, []

    def primal(self, gamma):
        """``(u, t, F)``: the unscaled blocks ``u = Phi' Y gamma``, ``t = Z' Y gamma`` and F."""
        u = block_products(self.features, self.y * gamma)
        t = self.column_scale * u
        return u, t, self.a * float(t @ t) + self.b * float(gamma @ gamma)

    def __call__(self, z):
        if len(self.history) >= self.max_checks:
            raise _Stop(False)
        s = self.y * block_outputs(self.features, self.starts, z / np.where(
            self.column_scale > 0, self.column_scale, 1.0), self.weights, self.kernels)
        gamma = np.empty(s.size)
        for members in self.classes:
            part = np.empty(members.size)
            _onto_simplex(-s[members] / (2.0 * self.b), part)
            gamma[members] = part
        u, t, value = self.primal(gamma)
        dual = -float(z @ z) / (4.0 * self.a) + self.b * float(gamma @ gamma) + float(s @ gamma)
        gap = max(value - dual, 0.0)
        self._keep(gamma, u, value, gap)
        return -dual, z / (2.0 * self.a) - t

    def _keep(self, gamma, u, value, gap):
        """Keep the point of the smallest relative gap; record it (the records carry the
        best point's values, so the last one is the solution's)."""
        relative = _relative(value, gap)
        if self.best is None or relative < _relative(self.best[2], self.best[3]):
            self.best = (gamma, u, value, gap)
        value, relative = self.best[2], _relative(self.best[2], self.best[3])
        record = {"iteration": len(self.history) + 1, "objective": value,
                  "relative_duality_gap": relative, "n_svm_solves": 0,
                  "time": time.perf_counter() - self.start}
        self.history.append(record)
        if self.callback is not None:
            self.callback(record)
        if relative <= self.qp_tol:
            raise _Stop(True)


def _relative(value, gap):
    """The relative duality gap ``(F - D) / max(|F|, 1e-12)`` (the solvers' one definition,
    :func:`mklearn.solvers.result.relative_gap`)."""
    return gap / max(abs(value), 1e-12)


def hull_qp_features(features, starts, y, a, b, *, scale=None, qp_tol=1e-8, max_iter=500,
                     callback=None) -> HullSolution:
    """Solve ``min a v' K v + b ||gamma||^2`` (``v = y gamma``, ``K = sum_k d_k Phi_k
    Phi_k'``) over one simplex per class, by L-BFGS on the dual of the module docstring.

    Parameters
    ----------
    features : ndarray of shape (n, R), float64 or float32
        ``Phi``, kernel k's block in columns ``starts[k]:starts[k + 1]``.
    starts : int64 ndarray of shape (m + 1,)
    y : ndarray of shape (n,)
        Labels in {-1, +1}, both present.
    a, b : float
        Weights of the quadratic term (``a >= 0``; 0: gamma uniform on each class) and of
        the ridge (``b > 0``).
    scale : ndarray of shape (m,), optional
        ``sqrt(d_k)``; default all ones (the plain sum of the kernels).
    qp_tol : float
        Stop at a relative certified gap ``(F - D) / F`` at most ``qp_tol``.
    max_iter : int
        Evaluations of the dual (each a gap check) at the most.
    callback : callable, optional
        Called with each evaluation's history record.

    Returns
    -------
    HullSolution

    Raises
    ------
    ValueError
        If ``b <= 0`` (the dual is not smooth without the ridge).
    """
    if not b > 0.0:
        raise ValueError("the class-hull QP in feature space needs a ridge (EasyMKL's lam "
                         "> 0); use lam > 0 or kernel_approximation='exact'")
    y = np.asarray(y, dtype=np.float64)
    m = starts.size - 1
    scale = np.ones(m) if scale is None else np.asarray(scale, dtype=np.float64)
    dual = _Dual(features, starts, y, scale, float(a), float(b), qp_tol, max_iter, callback,
                 time.perf_counter())
    uniform = np.where(y > 0, 1.0 / np.count_nonzero(y > 0), 1.0 / np.count_nonzero(y < 0))
    u, t, value = dual.primal(uniform)
    if not a > 0.0:  # the ridge alone: gamma uniform on each class is the optimum
        return HullSolution(uniform, u, value, 0.0, 0, True, [])
    z0 = 2.0 * a * t  # the optimum when the ridge dominates
    converged = False
    try:
        minimize(dual, z0, jac=True, method="L-BFGS-B",
                 options={"maxiter": max_iter, "maxfun": max_iter, "gtol": 0.0, "ftol": 0.0})
    except _Stop as stop:
        converged = stop.converged
    gamma, u, value, gap = dual.best
    return HullSolution(gamma, u, value, gap, len(dual.history), converged, dual.history)
