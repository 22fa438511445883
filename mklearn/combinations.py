"""How the learned kernel K(d) is built from the base kernels, and its derivative in d."""

from __future__ import annotations

import numpy as np

from mklearn._stack_ops import combine, quadratic_terms


def kernel_major(stack: np.ndarray) -> np.ndarray:
    """The ``(m, n, n)`` C-contiguous view of an ``(n, n, m)`` stack (one copy if needed)."""
    return np.ascontiguousarray(stack.transpose(2, 0, 1))


class SumOfKernels:
    """``K(d) = sum_k d_k K_k`` over a precomputed stack.

    Parameters
    ----------
    stack : ndarray of shape (n, n, m)
        Base kernels, float64 or float32. Kept kernel-major, ``(m, n, n)`` in memory (no copy
        when ``stack`` is already the transposed view of such an array, as
        :class:`~mklearn.kernels.KernelBank` returns), so that ``K(d)`` reads only the kernels
        with non-zero weight and the quadratic terms read each kernel's upper triangle once.
    """

    name = "sum"
    linear = True  # K(d) is linear in d: the duality gap of ALGORITHMS.md section 1 applies

    def __init__(self, stack: np.ndarray):
        self.n_samples = stack.shape[0]
        self.n_kernels = stack.shape[2]
        self._km = kernel_major(stack)

    def kernel(self, d: np.ndarray) -> np.ndarray:
        """The combined kernel, float64 of shape (n, n)."""
        d = np.asarray(d, dtype=np.float64)
        return combine(self._km, d, np.flatnonzero(d))

    def kernel_gradient(self, d: np.ndarray, v: np.ndarray, kernels=None) -> np.ndarray:
        """``v' (dK/dd_k) v``, i.e. ``g_k = v' K_k v``, for every k or for ``kernels`` only.

        Returns an array of shape (m,), or (len(kernels),) when ``kernels`` is given.
        """
        v = np.asarray(v, dtype=np.float64)
        if kernels is None:
            kernels = np.arange(self.n_kernels)
        return quadratic_terms(self._km, v, np.flatnonzero(v), np.asarray(kernels, np.int64))

    def kernel_rows_times(self, kernels: np.ndarray, rows: np.ndarray, v: np.ndarray):
        """``K_k[rows] @ v`` for each k in ``kernels``; shape (len(kernels), len(rows))."""
        block = self._km[np.asarray(kernels)][:, np.asarray(rows), :]
        return (block @ np.asarray(v, dtype=block.dtype)).astype(np.float64)
