"""A precomputed stack of base kernels as its operator holds it.

The stack comes C-contiguous in one of two layouts: kernel-major (``(m, n, n)`` in memory,
as :class:`~mklearn.kernels.KernelBank` returns it, seen through its ``(n, n, m)``
transpose) or the caller's own ``(n, n, m)`` (what ``np.stack(kernels, axis=2)`` makes).
Where a fit reads every kernel (combined kernels, quadratic terms, rows, diagonals) the
caller's layout is read as it is; a reader that follows kernels one by one (products of a
sparse ``d``, rows combined on demand, the SMO core's rows of some kernels) asks for
:attr:`HeldStack.kernel_major`, copied once. Every value read is counted
(:class:`~mklearn.kernels.stack_ops.StackReads`).
"""

from __future__ import annotations

import threading

import numpy as np

from mklearn.kernels.stack_ops import (
    StackReads,
    kernel_major,
    quadratic_terms,
    quadratic_terms_last_axis,
    rows_last_axis,
    rows_times,
    rows_times_last_axis,
    weighted_sum,
    weighted_sum_last_axis,
)

_COPY_LOCK = threading.Lock()  # one kernel-major copy when classes are fitted on threads


class HeldStack:
    """An ``(n, n, m)`` stack of base kernels, read in place or kernel-major.

    Parameters
    ----------
    stack : ndarray of shape (n, n, m)
        Base kernels, float64 or float32. Any layout other than the two C-contiguous ones is
        copied kernel-major at once, in blocks.
    summed : bool
        Its sum was formed before (one pass over it, counted in :attr:`reads`).

    Attributes
    ----------
    stack : ndarray of shape (n, n, m)
        The stack, C-contiguous in one of its two layouts.
    reads : StackReads
        The values read so far (a kernel-major copy counts one pass).
    """

    def __init__(self, stack: np.ndarray, summed: bool = False) -> None:
        if not stack.flags.c_contiguous:  # a kernel-major view (no copy), or any layout copied
            stack = kernel_major(stack).transpose(1, 2, 0)
        km = stack.transpose(2, 0, 1)
        self.stack = stack
        self._km = km if km.flags.c_contiguous else None  # made on first use
        self.reads = StackReads(stack.size, stack.size if summed else 0)

    def __getstate__(self) -> dict:
        """Sent to another process: the kernel-major copy alone once it exists."""
        state = dict(self.__dict__)
        if state["_km"] is not None:
            state["stack"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        if state["stack"] is None:
            state["stack"] = state["_km"].transpose(1, 2, 0)
        self.__dict__.update(state)

    @property
    def kernel_major(self) -> np.ndarray:
        """The base kernels as one C-contiguous ``(m, n, n)`` array: the stack itself, or its
        copy made (one pass, counted) the first time it is asked for."""
        if self._km is None:
            with _COPY_LOCK:
                if self._km is None:
                    km = kernel_major(self.stack)
                    self.reads.add(km.size)
                    self._km = km
        return self._km

    @property
    def view(self) -> np.ndarray:
        """The base kernels as an ``(m, n, n)`` array with no copy: :attr:`kernel_major` if
        it exists, else a strided view of the stack."""
        return self.stack.transpose(2, 0, 1) if self._km is None else self._km

    def rows(self, indices: np.ndarray, kernels: np.ndarray | None = None) -> np.ndarray:
        """Rows ``indices`` (int64) of the kernels ``kernels`` (all by default): float64 of
        shape (len(kernels), len(indices), n)."""
        n, m = self.stack.shape[0], self.stack.shape[2]
        self.reads.add((m if kernels is None else kernels.size) * indices.size * n)
        if self._km is None:
            return rows_last_axis(self.stack, indices, np.arange(m) if kernels is None
                                  else kernels)
        # take: numpy's fancy index on the middle axis lays the rows out sample-major, and
        # making that kernel-major cost 7x the copy (100 kernels, 77 rows of 1,000)
        block = (np.take(self._km, indices, axis=1) if kernels is None
                 else self._km[np.ix_(kernels, indices)])
        return np.ascontiguousarray(block, dtype=np.float64)

    def rows_times(self, kernels: np.ndarray, rows: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``K_k[rows] @ v`` for each k in ``kernels`` (int64; ``v`` float64): shape
        (len(kernels), len(rows)); in place, only the entries where ``v`` is not zero."""
        n, m = self.stack.shape[0], self.stack.shape[2]
        if self._km is None:
            self.reads.add(rows.size * np.count_nonzero(v) * m)
            return rows_times_last_axis(self.stack, kernels, rows, v)
        self.reads.add(kernels.size * rows.size * n)
        return rows_times(self._km, kernels, rows, v)

    def quadratic_terms(self, v: np.ndarray, support: np.ndarray,
                        kernels: np.ndarray) -> np.ndarray:
        """``v' K_k v`` for each k in ``kernels`` (int64), ``support`` the sorted non-zeros
        of ``v`` (float64): kernel-major, the support's rows up to the diagonal; in place,
        the support's block below the diagonal."""
        if self._km is None:
            self.reads.add(kernels.size * support.size * (support.size + 1) // 2)
            return quadratic_terms_last_axis(self.stack, v, support, kernels)
        self.reads.add(kernels.size * (support.sum() + support.size))
        return quadratic_terms(self._km, v, support, kernels)

    def weighted_sum(self, d: np.ndarray) -> np.ndarray:
        """``K(d) = sum_k d_k K_k``, float64 of shape (n, n): kernel-major, only the kernels
        with ``d_k != 0``; in place, every entry's run of m values."""
        self.reads.add(np.count_nonzero(d) * self.stack.shape[0] ** 2)
        if self._km is None:
            return weighted_sum_last_axis(self.stack, d)
        return weighted_sum(self._km, d)

    def diagonal(self) -> np.ndarray:
        """``K_k[i, i]`` of every kernel, float64 of shape (m, n)."""
        self.reads.add(self.stack.shape[2] * self.stack.shape[0])
        return np.ascontiguousarray(np.diagonal(self.view, axis1=1, axis2=2), dtype=np.float64)

    def points_block(self, indices: np.ndarray) -> np.ndarray:
        """The stack on the points ``indices``, shape (p, p, m): whole runs of m values
        gathered in place (numpy's fancy index took 1.5x as long), m runs of p from the
        kernel-major one."""
        n, m = self.stack.shape[0], self.stack.shape[2]
        self.reads.add(m * indices.size ** 2)
        if self._km is not None:
            return self._km[:, indices[:, None], indices].transpose(1, 2, 0)
        pairs = (indices[:, None] * n + indices).ravel()
        return np.take(self.stack.reshape(n * n, m), pairs, axis=0).reshape(
            indices.size, indices.size, m)
