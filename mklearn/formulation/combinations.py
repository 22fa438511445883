"""How the learned kernel K(d) is built from the base kernels, and its derivative in d."""

from __future__ import annotations

import numpy as np

from mklearn.extending import KernelParameterisation
from mklearn.formulation.support_blocks import SupportBlocks
from mklearn.kernels.base import Capabilities, KernelOperator
from mklearn.kernels.columns import StackColumns
from mklearn.kernels.held_stack import HeldStack
from mklearn.kernels.row_sources import DenseRows, StackCombinedRows
from mklearn.kernels.stack_ops import (
    quadratic_terms_support,
    quadratic_terms_support_parallel,
)
from mklearn.kernels.threads import use_threads

SPARSE_SUPPORT_FRACTION = 4  # quadratic terms from support blocks when it is under a quarter
# an SVM solve reads K(d) row by row (combined on demand) when its warm start has fewer
# support vectors than this share of the points: it then reads about those rows (measured
# along SPG-GMKL runs on unseen problems: 10-60% of the rows); above, single-row misses cost
# more than one pass over every row (dna3-500, 60% of the rows: 0.70 s against 0.37 s)
ROWS_ON_DEMAND_FRACTION = 0.5


class SumOfKernels(KernelOperator, KernelParameterisation, name="sum"):
    """``K(d) = sum_k d_k K_k`` over a precomputed stack.

    Parameters
    ----------
    stack : ndarray of shape (n, n, m)
        Base kernels, float64 or float32. Read kernel-major, ``(m, n, n)`` in memory (no copy
        when ``stack`` is already the transposed view of such an array, as
        :class:`~mklearn.kernels.KernelBank` returns), so that ``K(d)`` reads only the kernels
        with non-zero weight, each in order (numba loops, summing in float64). A
        C-contiguous ``(n, n, m)`` stack is read as it is by what reads every kernel (the
        combined kernel, the quadratic terms, rows, diagonals: EasyMKL's fit on 1,000 points
        and 100 kernels took 0.31 s and 784 MB above the stack when it was copied, 0.15 s as it
        is) and copied kernel-major once, at the first product or row of ``K(d)`` combined
        on demand (a sparse ``d`` then reads only its kernels).
    kernel_sum : ndarray of shape (n, n), optional
        ``sum_k K_k`` in float64, when known
        (:func:`~mklearn.kernels.stack_checks.check_kernel_stack` computes it): ``K(d)`` at
        uniform weights, where the solvers start, is then not recomputed; its pass over the
        stack counts in :attr:`stack_passes`.
    """

    capabilities = Capabilities(stack=True, support_products=False, trusted=True)

    def __init__(self, stack: np.ndarray, kernel_sum: np.ndarray | None = None):
        self.n_samples = stack.shape[0]
        self.n_kernels = stack.shape[2]
        self._held = HeldStack(stack, summed=kernel_sum is not None)
        self._kernel_sum = kernel_sum
        self.reads = self._held.reads
        self._diagonals = None  # (m, n), computed at the first kernel_rows
        self._support_blocks = SupportBlocks(self._held.view, self.reads)
        self._last = None  # (d, K(d)) of the last matrix: a later check reads it, not the stack

    @property
    def kernel_major(self) -> np.ndarray:
        """The base kernels as one C-contiguous ``(m, n, n)`` array: the stack itself, or its
        copy made (one pass, counted) the first time it is asked for."""
        return self._held.kernel_major

    @property
    def kernel_view(self) -> np.ndarray:
        """The base kernels as an ``(m, n, n)`` array with no copy: :attr:`kernel_major` if
        it exists, else a strided view of the ``(n, n, m)`` stack."""
        return self._held.view

    @property
    def stack_passes(self) -> float:
        """Passes over the stack read so far (:class:`~mklearn.kernels.stack_ops.StackReads`)."""
        return self.reads.passes

    def rows(self, indices, kernels=None) -> np.ndarray:
        """Rows ``indices`` of the kernels ``kernels`` (all by default): float64 of shape
        (len(kernels), len(indices), n), the row-provider interface of
        :mod:`mklearn.kernels.row_sources`."""
        indices = np.asarray(indices, dtype=np.int64)
        return self._held.rows(indices, None if kernels is None
                               else np.asarray(kernels, dtype=np.int64))

    def diagonal(self) -> np.ndarray:
        """``K_k[i, i]`` of every kernel, float64 of shape (m, n)."""
        return self._held.diagonal()

    def kernel(self, d: np.ndarray) -> DenseRows:
        """The combined kernel ``K(d)`` as a row source of the SVM solvers (``@ v``,
        ``submatrix``), dense: a :class:`~mklearn.kernels.row_sources.DenseRows` of
        :meth:`matrix`."""
        return DenseRows(self.matrix(d))

    def svm_kernel(self, d: np.ndarray, cache_size: float) -> DenseRows:
        """``K(d)`` in memory (:meth:`kernel`): the stack is here already."""
        return self.kernel(d)

    def point_subset(self, indices) -> StackColumns:
        """Every kernel on the points ``indices`` only: a copy of that part of the stack."""
        indices = np.asarray(indices, dtype=np.int64)
        return StackColumns(self._held.points_block(indices))

    def matrix(self, d: np.ndarray) -> np.ndarray:
        """The combined kernel ``K(d)``, float64 of shape (n, n).

        The last one is kept (no new memory: its caller holds it while solving) and returned
        again for the same weights, as the check of the learned kernel asks after a solve;
        callers must not change it in place.
        """
        d = np.array(d, dtype=np.float64)
        last, self._last = self._last, None  # released before a new one is allocated
        if last is not None and np.array_equal(last[0], d):
            self._last = last
            return last[1]
        del last
        self._last = (d, self._combine(d))
        return self._last[1]

    def _combine(self, d):
        if self._kernel_sum is not None and d[0] != 0.0 and np.all(d == d[0]):
            return self._kernel_sum if d[0] == 1.0 else d[0] * self._kernel_sum
        return self._held.weighted_sum(d)

    def kernel_rows(self, d: np.ndarray, expected_rows: int | None = None):
        """``K(d)`` for one SVM solve that is expected to read about ``expected_rows`` rows
        (the support of its warm start): a
        :class:`~mklearn.kernels.row_sources.StackCombinedRows`, which combines only the rows
        the solve reads, when that is under ``ROWS_ON_DEMAND_FRACTION`` of them; else the
        dense ``kernel(d)``."""
        d = np.asarray(d, dtype=np.float64)
        few = expected_rows is not None and expected_rows < ROWS_ON_DEMAND_FRACTION * self.n_samples
        if not few or (self._kernel_sum is not None and d[0] != 0.0 and np.all(d == d[0])):
            return self.kernel(d)
        if self._diagonals is None:
            self._diagonals = self.diagonal()
        return StackCombinedRows(self.kernel_major, d, self._diagonals, self.reads)

    def derivative(self, d: np.ndarray, k: int) -> np.ndarray:
        """``dK/dd_k = K_k`` (float64, shape (n, n))."""
        self.reads.add(self.n_samples ** 2)
        return self.kernel_view[k].astype(np.float64)

    def initial_weights(self) -> np.ndarray:
        """Uniform ``1 / m``."""
        return np.full(self.n_kernels, 1.0 / self.n_kernels)

    def kernel_gradient(self, d: np.ndarray, v: np.ndarray, kernels=None) -> np.ndarray:
        """``v' (dK/dd_k) v``, i.e. ``g_k = v' K_k v``, for every k or for ``kernels`` only.

        Returns an array of shape (m,), or (len(kernels),) when ``kernels`` is given. When the
        support of ``v`` is under a quarter of the points the terms come from the kernels'
        blocks on the supports seen so far
        (:class:`~mklearn.formulation.support_blocks.SupportBlocks`), else from the support's
        rows of the stack.
        """
        v = np.asarray(v, dtype=np.float64)
        kernels = np.arange(self.n_kernels) if kernels is None else np.asarray(kernels, np.int64)
        support = np.flatnonzero(v)
        g = None
        if support.size * SPARSE_SUPPORT_FRACTION <= self.n_samples:
            g = self._support_blocks.quadratic_terms(v, kernels, support,
                                                     lambda: self.kernel_major)
        return self._held.quadratic_terms(v, support, kernels) if g is None else g

    def cheap_terms(self, support_size: int) -> bool:
        """Whether :meth:`kernel_gradient` of every kernel at a support of this size reads
        the kernels' support blocks (in cache, ``m |S|^2`` values) rather than the stack."""
        return (support_size * SPARSE_SUPPORT_FRACTION <= self.n_samples
                and self._support_blocks.fits(support_size, self.n_kernels))

    def gradient_and_products(self, v: np.ndarray, kernels=None):
        """``(g, P)``: ``g_k = v' K_k v`` and ``P[t] = K_k v`` for every k (or for the t-th of
        ``kernels``), in one pass; P has shape (m or len(kernels), n).

        ``P`` predicts the quadratic terms at nearby ``v'``:
        ``g_k(v') ~ g_k(v) + 2 P[k] (v' - v)``, and gives the rows of ``K_k v`` that a Newton
        model needs. Only the rows of the support of ``v`` are read (``K_k v =
        sum_s v_s K_k[s]`` by symmetry). None when that support is under a quarter of the
        points: :meth:`kernel_gradient` then reads the support's blocks.
        """
        v = np.asarray(v, dtype=np.float64)
        support = np.flatnonzero(v)
        if support.size * SPARSE_SUPPORT_FRACTION <= self.n_samples:
            return None
        kernels = np.arange(self.n_kernels) if kernels is None else np.asarray(kernels, np.int64)
        products = np.empty((kernels.size, self.n_samples))
        self.reads.add(kernels.size * support.size * self.n_samples)
        # threads gain from the smallest sizes (n = 300, 60 kernels: 1.35-1.5x)
        run = (quadratic_terms_support_parallel
               if use_threads(kernels.size * support.size * self.n_samples)
               else quadratic_terms_support)
        return run(self.kernel_major, v, support, kernels, products), products

    def products(self, v: np.ndarray, kernels=None) -> np.ndarray:
        """``K_k v`` for ``kernels`` (all by default), reading only the rows of the support of
        ``v`` (numba loops); float64 of shape (len(kernels), n)."""
        v = np.asarray(v, dtype=np.float64)
        kernels = np.arange(self.n_kernels) if kernels is None else np.asarray(kernels, np.int64)
        products = np.zeros((kernels.size, self.n_samples))
        support = np.flatnonzero(v)
        if support.size:
            self.reads.add(kernels.size * support.size * self.n_samples)
            run = (quadratic_terms_support_parallel
                   if use_threads(kernels.size * support.size * self.n_samples)
                   else quadratic_terms_support)
            run(self.kernel_major, v, support, kernels, products)
        return products

    def combined_rows_times(self, d: np.ndarray, rows, v: np.ndarray) -> np.ndarray:
        """``K(d)[rows] @ v``: from the kept ``K(d)`` of :meth:`matrix` when it is of these
        weights (one matrix's rows, where the kernels' rows are ``m`` times as many values),
        else from the kernels' rows."""
        d = np.asarray(d, dtype=np.float64)
        if self._last is not None and np.array_equal(self._last[0], d):
            rows = np.atleast_1d(np.asarray(rows, dtype=np.int64))
            return self._last[1][rows] @ np.asarray(v, dtype=np.float64)
        return super().combined_rows_times(d, rows, v)

    def kernel_rows_times(self, kernels: np.ndarray, rows: np.ndarray, v: np.ndarray):
        """``K_k[rows] @ v`` for each k in ``kernels``; shape (len(kernels), len(rows)); a
        C-contiguous ``(n, n, m)`` stack read as it is, where ``v`` is not zero."""
        kernels = np.asarray(kernels, dtype=np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        return self._held.rows_times(kernels, rows, np.asarray(v, dtype=np.float64))
