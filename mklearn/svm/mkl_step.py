"""SMO-MKL's pair step: kernel weights from alpha and the exact step along a pair (numba).

Notation of ALGORITHMS.md section 2: ``F[k] = K_k Y alpha`` (per-kernel outputs, shape (m, n)),
``g_k = alpha' Y K_k Y alpha``, ``z = g / 2``; the regulariser enters only through its convex
conjugate ``r*`` at ``z``, whose gradient gives the kernel weights ``d = grad r*(z)``:

- ``KIND_LP``: ``r(d) = lam/2 ||d||_p^2``, ``r*(z) = ||z||_q^2 / (2 lam)``,
  ``d = ||z||_q^(2-q) z^(q-1) / lam`` (Vishwanathan et al., NIPS 2010, eq. 10);
- ``KIND_KL``: ``r(d) = lam sum_k (d_k log(d_k / d0_k) - d_k + d0_k)``,
  ``r*(z) = lam sum_k d0_k (exp(z_k / lam) - 1)``, ``d = d0 exp(z / lam)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

KIND_LP = 0  # regulariser lp: r(d) = lam/2 ||d||_p^2
KIND_KL = 1  # regulariser KL: r(d) = lam sum_k (d_k log(d_k / d0_k) - d_k + d0_k)

MAX_EXPONENT = 600.0  # KL weights exp(z / lam) are capped here: products with them stay finite
_NEWTON_ITER = 60  # iterations at most: 60 halvings of the bracket reach double precision


@njit(cache=True)
def _qnorm(z, q):
    scale = 0.0
    for k in range(z.size):
        if z[k] > scale:
            scale = z[k]
    if scale == 0.0:
        return 0.0
    total = 0.0
    for k in range(z.size):
        if z[k] > 0.0:
            total += (z[k] / scale) ** q
    return scale * total ** (1.0 / q)


@njit(cache=True, fastmath=True)
def kernel_weights(g, kind, lam, q, prior, out):
    """``d = grad r*(g / 2)`` into ``out`` (shape (m,)); one power or exponential per kernel.

    lp, with ``r_k = z_k / max(z)`` and ``S = sum_k r_k^q``:
    ``d_k = max(z) S^((2-q)/q) r_k^(q-1) / lam``.
    """
    m = g.size
    if kind == KIND_LP:
        scale = 0.0
        for k in range(m):
            scale = max(scale, 0.5 * g[k])
        if scale <= 0.0:
            out[:] = 0.0
            return
        total = 0.0
        linear = q == 2.0  # p = 2: r^(q-1) = r, no power per kernel (docs/smo_mkl.md)
        for k in range(m):
            r = max(0.5 * g[k], 0.0) / scale
            if linear:
                out[k] = r
            else:
                out[k] = r ** (q - 1.0) if r > 0.0 else 0.0  # r^(q-1); r^q = r * r^(q-1)
            total += r * out[k]
        factor = scale * total ** ((2.0 - q) / q) / lam
        for k in range(m):
            out[k] *= factor
    else:
        for k in range(m):
            out[k] = prior[k] * np.exp(min(0.5 * g[k] / lam, MAX_EXPONENT))


@njit(cache=True)
def conjugate(g, kind, lam, q, prior):
    """``r*(g / 2)``."""
    if kind == KIND_LP:
        norm = _qnorm(np.maximum(0.5 * g, 0.0), q)
        return norm * norm / (2.0 * lam)
    total = 0.0
    for k in range(g.size):
        total += prior[k] * np.expm1(min(0.5 * g[k] / lam, MAX_EXPONENT))
    return lam * total


@njit(cache=True, fastmath=True)
def _line_derivatives(t, g, a, b, kind, lam, q, prior, c1):
    """First and second derivative of ``phi(t) = c1 t - r*(g(t) / 2)``,
    ``g_k(t) = g_k + 2 t b_k + t^2 a_k``, in one pass with one power (or exponential) per
    kernel and no allocation.

    lp, with ``z = g(t) / 2``, ``w = dz/dt = b + t a``, ``r = z / max(z)``, ``u = r^q``,
    ``S = sum u``: ``phi' = c1 - sum d w`` and
    ``phi'' = -sum d a - ((2-q) S^((2-2q)/q) (sum u w / r)^2 + (q-1) S^((2-q)/q) sum u w^2 / r^2)
    / lam``.
    """
    m = g.size
    first = c1
    second = 0.0
    if kind == KIND_LP:
        scale = 0.0
        for k in range(m):
            scale = max(scale, 0.5 * (g[k] + 2.0 * t * b[k] + t * t * a[k]))
        if scale <= 0.0:
            return first, second
        total = 0.0
        dw = 0.0  # sum_k r^(q-1) w_k
        da = 0.0  # sum_k r^(q-1) a_k
        uw_r = 0.0  # sum_k u w / r = sum r^(q-1) w
        uww_rr = 0.0  # sum_k u w^2 / r^2 = sum r^(q-2) w^2
        for k in range(m):
            r = max(0.5 * (g[k] + 2.0 * t * b[k] + t * t * a[k]), 0.0) / scale
            if r <= 0.0:
                continue
            w = b[k] + t * a[k]
            rq1 = r ** (q - 1.0)
            total += r * rq1
            dw += rq1 * w
            da += rq1 * a[k]
            uww_rr += rq1 / r * w * w
        uw_r = dw
        factor = scale * total ** ((2.0 - q) / q) / lam  # d_k = factor r_k^(q-1)
        first -= factor * dw
        second -= factor * da
        second -= ((2.0 - q) * total ** ((2.0 - 2.0 * q) / q) * uw_r * uw_r
                   + (q - 1.0) * total ** ((2.0 - q) / q) * uww_rr) / lam
    else:
        for k in range(m):
            z = 0.5 * (g[k] + 2.0 * t * b[k] + t * t * a[k])
            d = prior[k] * np.exp(min(z / lam, MAX_EXPONENT))
            w = b[k] + t * a[k]
            first -= d * w
            second -= d * a[k] + d * w * w / lam
    return first, second


_WIDE_BRACKET = 1e3  # ranges this many Newton steps (from their lower end) wide are narrowed


@njit(cache=True)
def _narrow_bracket(lower, upper, f_low, s_low, g, a, b, kind, lam, q, prior, c1):
    """A bracket ``(lo, hi)`` of the root of ``phi'`` within ``[lower, upper]``
    (``phi'(lower) = f_low > 0 > phi'(upper)``, ``phi''(lower) = s_low``). A range wider than
    ``_WIDE_BRACKET`` Newton steps ``f_low / -s_low`` (a large C, or kernels of large values),
    or any range when that step is not defined, is
    narrowed to ``[s + 2^(e-1), s + 2^e]`` (or its mirror below ``s``), ``s`` the point of the
    range nearest 0 and e the least integer where ``phi'`` has changed sign, found by
    bisection on e (``phi'`` decreases: about 11 evaluations).

    Without it a box of 1e10 or more left the root to 60 Newton-bisection steps that ended
    where the KL exponent is capped (``MAX_EXPONENT``): there ``phi`` is no longer the dual
    along the pair, its curvature is wrong by orders of magnitude, and the step stopped
    there with weights near 1e260.
    """
    if s_low < 0.0 and upper - lower <= _WIDE_BRACKET * (f_low / -s_low):
        return lower, upper
    start = min(max(0.0, lower), upper)
    first, _ = _line_derivatives(start, g, a, b, kind, lam, q, prior, c1)
    if first == 0.0:
        return start, start
    side = 1.0 if first > 0.0 else -1.0
    reach = upper - start if side > 0.0 else start - lower
    high_e = int(np.ceil(np.log2(reach)))  # phi' has changed sign at start + side 2^high_e
    # the least step whose squares (t^2 a in g) stay normal numbers
    low_e = min(high_e - 1, int(np.floor(0.5 * np.log2(1e-280 / max(np.max(np.abs(a)),
                                                                     1e-300)))))
    first, _ = _line_derivatives(start + side * 2.0 ** low_e, g, a, b, kind, lam, q, prior, c1)
    if side * first <= 0.0:
        high_e, low_e = low_e, -1075  # the root within 2^low_e of start
    while high_e - low_e > 1:
        mid = (low_e + high_e) // 2
        first, _ = _line_derivatives(start + side * 2.0 ** mid, g, a, b, kind, lam, q, prior,
                                     c1)
        if side * first <= 0.0:
            high_e = mid
        else:
            low_e = mid
    near = start + side * min(2.0 ** low_e, reach)
    far = start + side * min(2.0 ** high_e, reach)
    return max(lower, min(near, far)), min(upper, max(near, far))


@njit(cache=True)
def newton_step_length(lower, upper, g, a, b, kind, lam, q, prior, c1):
    """Maximiser of the concave ``phi`` on ``[lower, upper]``: Newton-Raphson on ``phi'``
    safeguarded by bisection (Press et al., Numerical Recipes, ``rtsafe``): the root stays
    bracketed, and a Newton step that leaves the bracket or does not halve the step size
    is replaced by a bisection."""
    f_low, s_low = _line_derivatives(lower, g, a, b, kind, lam, q, prior, c1)
    if f_low <= 0.0:
        return lower
    f_up, _ = _line_derivatives(upper, g, a, b, kind, lam, q, prior, c1)
    if f_up >= 0.0:
        return upper
    lo, hi = _narrow_bracket(lower, upper, f_low, s_low, g, a, b, kind, lam, q, prior, c1)
    t = 0.0 if lo < 0.0 < hi else 0.5 * (lo + hi)
    dx_old = hi - lo
    dx = dx_old
    for _ in range(_NEWTON_ITER):
        first, second = _line_derivatives(t, g, a, b, kind, lam, q, prior, c1)
        if first == 0.0:
            break
        if first > 0.0:
            lo = t
        else:
            hi = t
        newton_ok = second < 0.0 and np.isfinite(second) and np.isfinite(first)
        candidate = t - first / second if newton_ok else lo - 1.0
        if not (lo < candidate < hi) or abs(2.0 * first) > abs(dx_old * second):
            dx_old = dx
            dx = 0.5 * (hi - lo)
            candidate = lo + dx
        else:
            dx_old = dx
            dx = candidate - t
        if abs(dx) <= 1e-14 * max(1.0, abs(t)) or hi - lo <= 1e-14 * max(1.0, abs(t)):
            t = candidate
            break
        t = candidate
    return t


@njit(cache=True)
def cubic_step_length(lower, upper, g, a, b, lam, c1):
    """The p = q = 2 case in closed form: ``phi'(t) = 0`` is the cubic
    ``A3 t^3 + A2 t^2 + A1 t + A0 = 0`` with ``A3 = sum a^2``, ``A2 = 3 sum a b``,
    ``A1 = sum (g a + 2 b^2)``, ``A0 = sum g b - 2 lam c1`` (SMO-MKL paper, eq. 16), whose
    left side increases in t; its real root, clipped to the box."""
    A3 = 0.0
    A2 = 0.0
    A1 = 0.0
    A0 = -2.0 * lam * c1
    for k in range(g.size):
        A3 += a[k] * a[k]
        A2 += 3.0 * a[k] * b[k]
        A1 += g[k] * a[k] + 2.0 * b[k] * b[k]
        A0 += g[k] * b[k]
    if A3 <= 1e-300:
        root = -A0 / A1 if A1 > 0.0 else (upper if A0 < 0.0 else lower)
    else:
        # depressed cubic t = s - A2 / (3 A3): s^3 + P s + R = 0
        B2 = A2 / A3
        B1 = A1 / A3
        B0 = A0 / A3
        P = B1 - B2 * B2 / 3.0
        R = 2.0 * B2 ** 3 / 27.0 - B2 * B1 / 3.0 + B0
        disc = (R / 2.0) ** 2 + (P / 3.0) ** 3
        if disc >= 0.0:
            sq = np.sqrt(disc)
            s = np.cbrt(-R / 2.0 + sq) + np.cbrt(-R / 2.0 - sq)
        else:  # three real roots; monotone cubic means they coincide up to rounding
            rad = 2.0 * np.sqrt(-P / 3.0)
            angle = np.arccos(max(-1.0, min(1.0, 3.0 * R / (P * rad))))
            s = rad * np.cos(angle / 3.0)
        root = s - B2 / 3.0
    return min(max(root, lower), upper)


@njit(cache=True)
def snap(alpha, t, upper):
    """Put ``alpha[t]`` exactly on a bound it reached up to rounding."""
    value = min(max(alpha[t], 0.0), upper[t])
    if value <= 1e-12 * upper[t]:
        value = 0.0
    elif upper[t] - value <= 1e-12 * upper[t]:
        value = upper[t]
    alpha[t] = value


# phi' and phi'' of one step in one pass (the feature-space coordinate steps' Newton step)
line_derivatives = _line_derivatives
