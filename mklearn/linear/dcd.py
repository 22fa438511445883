"""Dual coordinate descent over feature blocks, at a fixed bias (numba).

The kernels are ``K_k = Phi_k Phi_k'`` with ``Phi`` of shape (n, R) cut into column blocks
``starts[k]:starts[k + 1]``, one per kernel. With ``v = alpha * signs`` the per-kernel
primal blocks are ``u_k = Phi_k' v`` (the vector ``u`` of length R), so that
``v' K_k v = ||u_k||^2`` and ``(K(d) v)_i = sum_k d_k Phi_k[i] . u_k``: a coordinate step
costs ``O(R)`` and no ``n x n`` array exists.

The problem at a fixed bias b (the linear term ``linear`` carries it) is

    max_a  -linear' a - r*(g(a) / 2),   0 <= a <= upper,   g_k = ||u_k||^2,

with ``r*`` the conjugate of the kernel-weight regulariser (``KIND_FIXED``: fixed weights d,
``r*(z) = d'z``, the plain SVM on ``K(d)``; ``KIND_LP``/``KIND_KL``: SMO-MKL's smooth lp and
KL conjugates, whose weights ``d = grad r*(g / 2)`` follow every step). One step maximises it
along one coordinate: exactly for fixed weights, by one Newton step clipped to the box for
the smooth conjugates (their derivatives along the coordinate in one pass over the kernels,
:func:`mklearn.svm.mkl_step.line_derivatives`).

Method: Hsieh, Chang, Lin, Keerthi and Sundararajan, "A Dual Coordinate Descent Method for
Large-scale Linear SVM", ICML 2008 (LIBLINEAR's solver), Algorithm 1 with the random
permutation of section 3.1 and the shrinking of Algorithm 3; stopping on the spread of the
projected gradient, ``max PG - min PG <= eps``. The bias is not a variable here: the
equality constraint ``signs' a = 0`` of an SVM with an intercept is met by the search over b
of :mod:`mklearn.linear.svm`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mklearn.svm.mkl_step import (
    KIND_KL,
    KIND_LP,
    MAX_EXPONENT,
    kernel_weights,
    line_derivatives,
)

__all__ = ["KIND_FIXED", "KIND_KL", "KIND_LP", "block_terms", "coordinate_descent"]

KIND_FIXED = 2  # fixed kernel weights d: the SVM on K(d)

_STEP_FLOOR = 1e-12  # projected gradients below this make no step
_SMALL_EXPONENT = 1e-4  # KL weights follow a step by a polynomial below this change


@njit(cache=True, nogil=True, fastmath={"contract"})
def _block_dots(Phi, i, u, starts, product, dots):
    """``dots[k] = Phi_k[i] . u_k`` for every kernel: the products in one vectorised pass
    (into ``product``, shape (R,)), then their sums by block."""
    row = Phi[i]
    for j in range(row.size):
        product[j] = row[j] * u[j]
    for k in range(starts.size - 1):
        total = 0.0
        for j in range(starts[k], starts[k + 1]):
            total += product[j]
        dots[k] = total


_FAST = {"reassoc", "contract", "nnan", "ninf", "nsz"}  # sums over finite kernel terms


@njit(cache=True, nogil=True, fastmath=_FAST)
def _follow_weights(kind, g, dots, sq_row, change, step, lam, q, prior, d, delta):
    """``g_k += 2 change dots_k + step^2 ||Phi_k[i]||^2`` after a step (``change = step *
    sign``), and the weights ``d = grad r*(g / 2)`` that follow. KL weights are scaled by
    ``exp(delta_k)``, ``delta_k`` the change of ``g_k / (2 lam)`` (into ``delta``): by its
    Taylor polynomial of degree 4 where every ``|delta_k| <= _SMALL_EXPONENT`` (relative
    error below 1e-18; the epoch's end recomputes them), else by exponentials."""
    largest, top = 0.0, 0.0
    for k in range(g.size):
        delta[k] = (change * dots[k] + 0.5 * step * step * sq_row[k]) / lam
        g[k] += 2.0 * lam * delta[k]
        largest = max(largest, abs(delta[k]))
        top = max(top, g[k])
    if kind != KIND_KL or largest > _SMALL_EXPONENT or 0.5 * top / lam >= MAX_EXPONENT:
        kernel_weights(g, kind, lam, q, prior, d)
        return
    for k in range(g.size):
        x = delta[k]
        d[k] *= 1.0 + x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0))))


@njit(cache=True, nogil=True, fastmath=_FAST)
def _kl_curvature(d, dots, sq_row, lam):
    """``sum_k d_k (||Phi_k[i]||^2 + dots_k^2 / lam)``: minus the KL dual's second
    derivative along a coordinate."""
    second = 0.0
    for k in range(d.size):
        second += d[k] * (sq_row[k] + dots[k] * dots[k] / lam)
    return second


@njit(cache=True)
def _column_ranges(starts, kernels):
    """The columns of ``kernels``' blocks as merged ``[lo, hi)`` ranges, shape (r, 2):
    one range when every kernel is read."""
    ranges = np.empty((kernels.size, 2), dtype=np.int64)
    count = 0
    for k in np.sort(kernels):
        if count > 0 and ranges[count - 1, 1] == starts[k]:
            ranges[count - 1, 1] = starts[k + 1]
        else:
            ranges[count, 0], ranges[count, 1] = starts[k], starts[k + 1]
            count += 1
    return ranges[:count]


@njit(cache=True)
def _column_weights(starts, kernels, d):
    """``d_k`` on every column of kernel k's block, for ``kernels`` (0 elsewhere)."""
    weights = np.zeros(starts[-1])
    for k in kernels:
        weights[starts[k]:starts[k + 1]] = d[k]
    return weights


@njit(cache=True)
def _curvatures(index, sq, kernels, d):
    """``K(d)_ii = sum_k d_k ||Phi_k[i]||^2`` of every variable's row."""
    curvature = np.zeros(index.size)
    for t in range(index.size):
        total = 0.0
        for k in kernels:
            total += d[k] * sq[index[t], k]
        curvature[t] = total
    return curvature


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _weighted_dot(Phi, i, u, weights, ranges):
    """``sum_k d_k Phi_k[i] . u_k`` over the ranges: one vectorised pass over the row."""
    total = 0.0
    for r in range(ranges.shape[0]):
        lo, hi = ranges[r, 0], ranges[r, 1]
        row, w, v = Phi[i, lo:hi], weights[lo:hi], u[lo:hi]  # slices: the loop vectorises
        for j in range(row.size):
            total += row[j] * (w[j] * v[j])
    return total


@njit(cache=True, nogil=True, fastmath={"contract"})
def _add_ranges(Phi, i, scale, u, ranges):
    """``u += scale * Phi[i]`` on the ranges."""
    for r in range(ranges.shape[0]):
        lo, hi = ranges[r, 0], ranges[r, 1]
        row, v = Phi[i, lo:hi], u[lo:hi]
        for j in range(row.size):
            v[j] += scale * row[j]


@njit(cache=True, inline="always")
def _projected_gradient(grad, alpha, upper):
    """The gradient projected on the box ``[0, upper]`` at ``alpha``."""
    if alpha <= 0.0:
        return min(grad, 0.0)
    if alpha >= upper:
        return max(grad, 0.0)
    return grad


@njit(cache=True)
def _fixed_step(grad, alpha, upper, curvature):
    """The exact step along one coordinate at fixed weights, clipped to the box."""
    if curvature <= 0.0:
        return upper - alpha if grad < 0.0 else -alpha
    return min(max(-grad / curvature, -alpha), upper - alpha)


@njit(cache=True, nogil=True)
def _fill_column_weights(starts, d, weights):
    """``weights[j] = d_k`` on every column j of kernel k's block."""
    for k in range(starts.size - 1):
        weights[starts[k]:starts[k + 1]] = d[k]


@njit(cache=True, nogil=True)
def _constant_weight(constant_parts, d, kernels):
    """``sum_k d_k c_k`` over ``kernels``: the weight of the kernels' constant parts."""
    total = 0.0
    for k in kernels:
        total += d[k] * constant_parts[k]
    return total


@njit(cache=True, nogil=True)
def _with_constant_parts(dots, sq_row, constant_parts, balance, out):
    """The row's ``K_k[i, i]`` into ``out`` (returned) and its dots ``(K_k v)_i`` in
    ``dots``, each with the kernels' constant parts (their columns' ``u`` entries are
    ``sqrt(c_k) balance``)."""
    for k in range(dots.size):
        dots[k] += constant_parts[k] * balance
        out[k] = sq_row[k] + constant_parts[k]
    return out


@njit(cache=True)
def block_terms(u, starts):
    """``g_k = ||u_k||^2`` of every block, shape (m,)."""
    m = starts.size - 1
    g = np.zeros(m)
    for k in range(m):
        total = 0.0
        for j in range(starts[k], starts[k + 1]):
            total += u[j] * u[j]
        g[k] = total
    return g


@njit(cache=True)
def _smooth_step(kind, i, grad, alpha, upper, signs, linear, sq_row, dots, g, d, lam, q,
                 prior, signed):
    """The change of ``alpha[i]`` along which a smooth conjugate's dual rises: one Newton
    step on the concave ``phi(t) = c1 t - r*(g(t) / 2)``, clipped to the box (one pass over
    the kernels; SMO-MKL's safeguarded line search takes one per iteration). ``grad`` is the
    gradient of the minimised negative dual before the step; ``sq_row`` the row's
    ``K_k[i, i]``; ``signed`` (shape (m,)) is scratch for the lp step's signed products."""
    lower, up = -alpha[i], upper[i] - alpha[i]
    if kind == KIND_KL:  # at t = 0 the KL weights are d itself: no exponential
        first, second = -grad, -_kl_curvature(d, dots, sq_row, lam)
    else:
        for k in range(g.size):
            signed[k] = signs[i] * dots[k]
        first, second = line_derivatives(0.0, g, sq_row, signed, kind, lam, q, prior,
                                         -linear[i])
    if second < 0.0:
        return min(max(-first / second, lower), up)
    return up if first > 0.0 else lower


@njit(cache=True, nogil=True)  # partitions descend side by side on threads
def coordinate_descent(Phi, index, starts, signs, linear, upper, alpha, u, d, sq, kernels,
                       kind, lam, q, prior, eps, max_epochs, shrinking, seed, constant_parts):
    """Epochs of dual coordinate descent until ``max PG - min PG <= eps`` over every point.

    Parameters
    ----------
    Phi : ndarray of shape (n, R), float64 or float32
        The features; kernel k's block is ``Phi[:, starts[k]:starts[k + 1]]``.
    index : int64 ndarray of shape (n_vars,)
        The row of ``Phi`` of each dual variable (epsilon-SVR has two per point).
    starts : int64 ndarray of shape (m + 1,)
    signs, linear, upper : ndarray of shape (n_vars,)
        The problem: signs, linear term (``y_i b - 1`` for C-SVC) and bounds.
    alpha : ndarray of shape (n_vars,)
        The start; updated in place.
    u : ndarray of shape (R,)
        ``Phi' (alpha * signs)`` on the blocks of ``kernels``; updated in place.
    d : ndarray of shape (m,)
        Kernel weights: fixed (``KIND_FIXED``) or the smooth conjugate's at ``u`` (updated).
    sq : ndarray of shape (n, m)
        ``||Phi_k[i]||^2`` (the kernels' diagonals, by row of ``Phi``).
    kernels : int64 ndarray
        The kernels a step reads (``d_k > 0`` for fixed weights; all for the smooth ones).
    kind : int
        ``KIND_FIXED``, ``KIND_LP`` or ``KIND_KL``.
    lam, q, prior
        The smooth conjugate's parameters (:mod:`mklearn.svm.mkl_step`).
    eps : float
        Tolerance on the spread of the projected gradient.
    max_epochs : int
    shrinking : bool
    seed : int
        Seed of the random order of each epoch.
    constant_parts : ndarray of shape (m,)
        The constant parts ``c_k`` the features left out (``K_k = Phi_k Phi_k' + c_k 1 1'``,
        :class:`mklearn.kernels.low_rank.LowRankMap`): the descent runs on K_k itself, the
        constant's column kept as the balance ``h = signs' alpha`` (its ``u`` entry is
        ``sqrt(c_k) h``). An SVM's optimum does not depend on them, but a fixed-bias
        problem does: they hold ``h`` near 0 while the bias is searched.

    Returns
    -------
    (epochs, steps, spread) : (int, int, float)
        Epochs run, coordinate steps taken, and the last full epoch's spread.
    """
    np.random.seed(seed)
    n = signs.size
    m = starts.size - 1
    dots, delta, signed, product = np.zeros(m), np.zeros(m), np.zeros(m), np.zeros(starts[-1])
    fixed = kind == KIND_FIXED
    any_constant = constant_parts.any()
    balance = 0.0
    if any_constant:
        for t in range(n):
            balance += signs[t] * alpha[t]
    row_buffer = np.zeros(m)
    g = block_terms(u, starts) + constant_parts * balance * balance if not fixed else np.zeros(m)
    if not fixed:
        kernel_weights(g, kind, lam, q, prior, d)
    ranges = _column_ranges(starts, kernels)
    weights = _column_weights(starts, kernels, d)
    rho = _constant_weight(constant_parts, d, kernels)
    curvature = _curvatures(index, sq, kernels, d) + rho if fixed else np.zeros(0)
    active = np.arange(n)
    n_active = n
    upper_bar, lower_bar = np.inf, -np.inf
    epochs, steps = 0, 0
    spread = np.inf
    while epochs < max_epochs:
        epochs += 1
        np.random.shuffle(active[:n_active])
        high, low = -np.inf, np.inf
        s = 0
        while s < n_active:
            i = active[s]
            row = index[i]
            grad = linear[i] + signs[i] * (_weighted_dot(Phi, row, u, weights, ranges)
                                           + rho * balance)
            pg = _projected_gradient(grad, alpha[i], upper[i])
            if shrinking and ((alpha[i] <= 0.0 and grad > upper_bar)
                              or (alpha[i] >= upper[i] and grad < lower_bar)):
                n_active -= 1
                active[s], active[n_active] = active[n_active], active[s]
                continue
            high, low = max(high, pg), min(low, pg)
            s += 1
            if abs(pg) <= _STEP_FLOOR:
                continue
            if fixed:
                step = _fixed_step(grad, alpha[i], upper[i], curvature[i])
            else:
                _block_dots(Phi, row, u, starts, product, dots)
                sq_row = sq[row]
                if any_constant:
                    sq_row = _with_constant_parts(dots, sq[row], constant_parts, balance,
                                                  row_buffer)
                step = _smooth_step(kind, i, grad, alpha, upper, signs, linear, sq_row, dots,
                                    g, d, lam, q, prior, signed)
            if step == 0.0:
                continue
            steps += 1
            alpha[i] += step
            if alpha[i] < 0.0 or alpha[i] <= 1e-14 * upper[i]:
                alpha[i] = 0.0
            elif alpha[i] >= upper[i] or upper[i] - alpha[i] <= 1e-14 * upper[i]:
                alpha[i] = upper[i]
            _add_ranges(Phi, row, step * signs[i], u, ranges)
            balance += step * signs[i]
            if not fixed:
                _follow_weights(kind, g, dots, sq_row, step * signs[i], step, lam, q, prior,
                                d, delta)
                _fill_column_weights(starts, d, weights)
                if any_constant:
                    rho = _constant_weight(constant_parts, d, kernels)
        if not fixed:  # no drift of the running terms
            g[:] = block_terms(u, starts) + constant_parts * balance * balance
            kernel_weights(g, kind, lam, q, prior, d)
            _fill_column_weights(starts, d, weights)
            rho = _constant_weight(constant_parts, d, kernels)
        if n_active == 0:
            high, low = 0.0, 0.0
        if high - low <= eps:
            if n_active == n:
                spread = high - low
                break
            n_active = n
            upper_bar, lower_bar = np.inf, -np.inf
            continue
        upper_bar = high if high > 0.0 else np.inf
        lower_bar = low if low < 0.0 else -np.inf
        if n_active == n:
            spread = high - low
    return epochs, steps, spread
