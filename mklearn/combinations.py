"""How the learned kernel K(d) is built from the base kernels, and its derivative in d."""

from __future__ import annotations

import numpy as np


class SumOfKernels:
    """``K(d) = sum_k d_k K_k`` over a precomputed stack.

    Parameters
    ----------
    stack : ndarray of shape (n, n, m)
        Base kernels, C-contiguous float64 or float32; seen as an ``(n*n, m)`` matrix so that
        both ``K(d)`` and all the per-kernel quadratic terms are one BLAS matrix-vector product.
    """

    name = "sum"
    linear = True  # K(d) is linear in d: the duality gap of ALGORITHMS.md section 1 applies

    def __init__(self, stack: np.ndarray):
        self.n_samples = stack.shape[0]
        self.n_kernels = stack.shape[2]
        self._flat = np.ascontiguousarray(stack).reshape(-1, self.n_kernels)

    def kernel(self, d: np.ndarray) -> np.ndarray:
        """The combined kernel, float64 of shape (n, n)."""
        combined = self._flat @ d.astype(self._flat.dtype, copy=False)
        return combined.reshape(self.n_samples, self.n_samples).astype(np.float64, copy=False)

    def kernel_gradient(self, d: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``v' (dK/dd_k) v`` for every k, i.e. ``g_k = v' K_k v``; shape (m,)."""
        support = np.flatnonzero(v)
        n = self.n_samples
        if support.size * 4 < n:  # few support vectors: read only their rows
            rows = self._flat.reshape(n, n, -1)[support][:, support]
            vs = v[support].astype(self._flat.dtype)
            return np.einsum("i,j,ijk->k", vs, vs, rows, optimize=True).astype(np.float64)
        outer = np.outer(v, v).astype(self._flat.dtype, copy=False).ravel()
        return (outer @ self._flat).astype(np.float64, copy=False)
