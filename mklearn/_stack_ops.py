"""numba kernels over a kernel-major stack of shape (m, n, n), or over its packed upper
triangles of shape (m, n (n + 1) / 2): combine, quadratic terms and kernel rows.

Serial on purpose: both are memory-bound, and threads only contend with BLAS and the caller.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, fastmath=True)
def combine(stack_km, weights, active):
    """``sum_{k in active} weights[k] * stack_km[k]`` as float64 (n, n), reading active kernels."""
    n = stack_km.shape[1]
    out = np.zeros((n, n))
    for t in range(active.shape[0]):
        k = active[t]
        w = weights[k]
        K = stack_km[k]
        for i in range(n):
            row = K[i]
            target = out[i]
            for j in range(n):
                target[j] += w * row[j]
    return out


@njit(cache=True, fastmath=True)
def quadratic_terms(stack_km, v, support, kernels):
    """``g_k = v' K_k v`` for each k in ``kernels``, reading only the rows in ``support``.

    Skipping rows breaks the hardware's streaming of the stack: pass every row unless the
    support is a small part of them (measured, n = 166: all rows 7.0 ms, 65% of them 11.9 ms).
    """
    n = stack_km.shape[1]
    g = np.empty(kernels.shape[0])
    for t in range(kernels.shape[0]):
        k = kernels[t]
        total = 0.0
        for a in range(support.shape[0]):
            i = support[a]
            acc = 0.0
            for j in range(n):
                acc += stack_km[k, i, j] * v[j]
            total += v[i] * acc
        g[t] = total
    return g


@njit(cache=True, fastmath=True)
def rows_times(stack_km, kernels, rows, v):
    """``K_k[rows] @ v`` for each k in ``kernels``: float64 of shape (len(kernels), len(rows))."""
    n = stack_km.shape[1]
    out = np.empty((kernels.shape[0], rows.shape[0]))
    for t in range(kernels.shape[0]):
        k = kernels[t]
        for a in range(rows.shape[0]):
            i = rows[a]
            acc = 0.0
            for j in range(n):
                acc += stack_km[k, i, j] * v[j]
            out[t, a] = acc
    return out


# Packed upper triangles: kernel k's rows ``K_k[i, i:]`` one after the other, ``n (n + 1) / 2``
# values per kernel. Half the bytes of the square stack, so half the time of every pass.


@njit(cache=True, fastmath={"reassoc", "contract"})  # vectorised, NaN and inf kept
def pack_upper(stack_km, packed, x, u):
    """Copy each kernel's upper triangle into ``packed`` (shape (m, n (n + 1) / 2)), in the same
    pass returning the symmetry probe ``x'(K_k - K_k')u`` per kernel (zeros when x is empty)."""
    m, n = stack_km.shape[0], stack_km.shape[1]
    probe = np.zeros(m)
    for k in range(m):
        K = stack_km[k]
        P = packed[k]
        total = 0.0
        pos = 0
        for i in range(n):
            row = K[i]
            if x.shape[0] > 0:
                a = 0.0
                b = 0.0
                for j in range(n):
                    a += row[j] * u[j]
                    b += row[j] * x[j]
                total += x[i] * a - u[i] * b
            P[pos:pos + n - i] = row[i:]
            pos += n - i
        probe[k] = total
    return probe


@njit(cache=True, fastmath=True)
def combine_packed(packed, n, weights, active):
    """``sum_{k in active} weights[k] * K_k`` as a float64 (n, n) matrix from packed kernels,
    four kernels per sweep of the accumulator."""
    size = packed.shape[1]
    acc = np.zeros(size)
    t = 0
    while t + 4 <= active.shape[0]:
        k0, k1, k2, k3 = active[t], active[t + 1], active[t + 2], active[t + 3]
        w0, w1, w2, w3 = weights[k0], weights[k1], weights[k2], weights[k3]
        P0, P1, P2, P3 = packed[k0], packed[k1], packed[k2], packed[k3]
        for j in range(size):
            acc[j] += w0 * P0[j] + w1 * P1[j] + w2 * P2[j] + w3 * P3[j]
        t += 4
    for s in range(t, active.shape[0]):
        w = weights[active[s]]
        P = packed[active[s]]
        for j in range(size):
            acc[j] += w * P[j]
    out = np.empty((n, n))
    pos = 0
    for i in range(n):
        out[i, i:] = acc[pos:pos + n - i]
        for j in range(i + 1, n):
            out[j, i] = acc[pos + j - i]
        pos += n - i
    return out


@njit(cache=True, fastmath=True)
def quadratic_terms_packed(packed, n, v, support, kernels):
    """``g_k = v' K_k v`` for each k in ``kernels`` from packed kernels, reading the rows in
    ``support`` (v must be zero off it): ``sum_i v_i (K_ii v_i + 2 sum_{j > i} K_ij v_j)``."""
    starts = np.empty(n, np.int64)
    pos = 0
    for i in range(n):
        starts[i] = pos
        pos += n - i
    g = np.empty(kernels.shape[0])
    for t in range(kernels.shape[0]):
        P = packed[kernels[t]]
        total = 0.0
        for a in range(support.shape[0]):
            i = support[a]
            row = P[starts[i]:starts[i] + n - i]
            tail = v[i:]
            acc = 0.0
            for j in range(1, n - i):
                acc += row[j] * tail[j]
            total += v[i] * (row[0] * v[i] + 2.0 * acc)
        g[t] = total
    return g

