"""Products with the features ``Phi`` (shape (n, R)) by blocks of rows (numba).

``Phi' v`` is summed over row blocks, ``K(d) v = sum_k d_k Phi_k u_k`` computed row by row;
both on every thread when ``Phi`` is large enough to pay for them, the GIL released (the
partitions of a Dask fit run side by side on threads).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["PARALLEL_WORK", "block_outputs", "block_products"]

PARALLEL_WORK = 1 << 18  # entries of Phi below which one thread is faster than many


@njit(cache=True, nogil=True)
def _outputs_of_rows(Phi, starts, scaled, kernels, lo, hi, f):
    """``f[i] = sum_k Phi_k[i] . scaled_k`` for the rows ``lo:hi``."""
    for i in range(lo, hi):
        total = 0.0
        for t in range(kernels.size):
            k = kernels[t]
            for j in range(starts[k], starts[k + 1]):
                total += Phi[i, j] * scaled[j]
        f[i] = total


@njit(cache=True, parallel=True, nogil=True)
def _outputs_in_parallel(Phi, starts, scaled, kernels, f):
    n = Phi.shape[0]
    n_parts = 64
    size = (n + n_parts - 1) // n_parts
    for p in prange(n_parts):
        _outputs_of_rows(Phi, starts, scaled, kernels, p * size, min(n, (p + 1) * size), f)


def block_outputs(Phi, starts, u, d, kernels):
    """``f_i = sum_k d_k Phi_k[i] . u_k`` over ``kernels``: ``K(d) v`` (shape (n,)), on
    every thread when Phi has at least ``PARALLEL_WORK`` entries."""
    scaled = np.repeat(np.asarray(d, dtype=np.float64), np.diff(starts)) * u
    f = np.empty(Phi.shape[0])
    if Phi.size >= PARALLEL_WORK:
        _outputs_in_parallel(Phi, starts, scaled, kernels, f)
    else:
        _outputs_of_rows(Phi, starts, scaled, kernels, 0, Phi.shape[0], f)
    return f


@njit(cache=True, nogil=True)
def _products_of_rows(Phi, v, lo, hi, out):
    """``out += Phi[lo:hi]' v[lo:hi]``, accumulated in float64."""
    for i in range(lo, hi):
        if v[i] != 0.0:
            for j in range(Phi.shape[1]):
                out[j] += v[i] * Phi[i, j]


@njit(cache=True, parallel=True, nogil=True)
def _products_in_parallel(Phi, v):
    n, R = Phi.shape
    n_parts = 8
    size = (n + n_parts - 1) // n_parts
    parts = np.zeros((n_parts, R))
    for p in prange(n_parts):
        _products_of_rows(Phi, v, p * size, min(n, (p + 1) * size), parts[p])
    return parts.sum(axis=0)


def block_products(Phi, v):
    """``Phi' v`` (shape (R,)), summed over row blocks on every thread when Phi has at
    least ``PARALLEL_WORK`` entries."""
    if Phi.size >= PARALLEL_WORK:
        return _products_in_parallel(Phi, v)
    out = np.zeros(Phi.shape[1])
    _products_of_rows(Phi, v, 0, Phi.shape[0], out)
    return out
