"""numba helpers: Euclidean projection onto the unit simplex and truncated quadratic programs on
the simplex and on the non-negative orthant."""

from __future__ import annotations

import numpy as np
from numba import njit

QP_MAX_ITER = 500
QP_TOL = 1e-10


@njit(cache=True)
def project_simplex_nb(v):
    """Euclidean projection onto ``{x >= 0, sum x = 1}``: ``max(v - theta, 0)``.

    The threshold theta by Michelot's algorithm (J. Optim. Theory Appl. 50, 1986): the mean
    of the entries above the current threshold, minus 1 / their count, repeated until it stops
    growing. Exact like the sorting method (Duchi et al., ICML 2008) in at most n passes (a
    few in practice), and without a sort, whose numba compilation took 2.4 s of a first fit.
    """
    n = v.size
    total = 0.0
    for i in range(n):
        total += v[i]
    theta = (total - 1.0) / n
    while True:  # for finite v the largest entry stays above theta: count >= 1
        total = 0.0
        count = 0
        for i in range(n):
            if v[i] > theta:
                total += v[i]
                count += 1
        if count == 0:  # NaN or infinite entries (an overflowed FISTA step): callers check
            break
        candidate = (total - 1.0) / count
        if candidate <= theta:
            break
        theta = candidate
    out = np.empty(n)
    for i in range(n):
        out[i] = max(v[i] - theta, 0.0)
    return out


@njit(cache=True)
def _project(v, simplex):
    return project_simplex_nb(v) if simplex else np.maximum(v, 0.0)


@njit(cache=True)
def fista_orthant(x0, g, H, step, max_iter=QP_MAX_ITER):
    """:func:`fista_simplex` on the non-negative orthant ``{x >= 0}``."""
    return _fista(x0, g, H, step, max_iter, False)


@njit(cache=True)
def fista_simplex(x0, g, H, step, max_iter=QP_MAX_ITER):
    """Approximately ``argmin_x g'(x - x0) + (x - x0)' H (x - x0) / 2`` over the simplex.

    FISTA (Beck and Teboulle, SIAM J. Imaging Sci. 2, 2009) from ``x0`` with step
    ``1 / lambda_max(H)``, stopped when no coordinate moves by more than ``QP_TOL`` or after
    ``max_iter`` iterations. The truncation is deliberate: along directions of tiny
    curvature relative to ``lambda_max`` the iterate moves little, which damps the step where
    the quadratic model of the MKL objective is least trustworthy (measured: exact minimisers
    of the model are rejected by the line search far more often).
    """
    return _fista(x0, g, H, step, max_iter, True)


@njit(cache=True)
def _fista(x0, g, H, step, max_iter, simplex):
    x = x0.copy()
    z = x0.copy()
    t = 1.0
    for _ in range(max_iter):
        x_new = _project(z - step * (g + H @ (z - x0)), simplex)
        moved = np.max(np.abs(x_new - x))
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        z = x_new + ((t - 1.0) / t_new) * (x_new - x)
        x = x_new
        t = t_new
        if moved <= QP_TOL:
            break
    return x
