"""The per-kernel state of MWUMKL, in blocks of kernels that run in process or on Dask.

Every MWUMKL iteration (:mod:`mklearn.solvers.mwu`) touches all m kernels twice: once to
update ``alpha' G_i alpha`` from the two new kernel rows (:meth:`MWUBlock.update`, which
returns the block's largest ``||A_i alpha||``), once, after the exponent's scale is known, to
weight every kernel and update ``G_i alpha`` and the block's part of the margin
(:meth:`MWUBlock.combine`). The solver only sees small numbers per block: the m x n state
``G_i alpha`` stays with its block. :class:`MWUBlocks` runs the blocks one after the other
in this process; :class:`mklearn.distributed.DaskMWUBlocks` keeps each block in a Dask actor
on a worker. Both add the blocks' numbers in block order, so their results are the same bit
for bit.
"""

from __future__ import annotations

import math
from operator import methodcaller

import numpy as np
from numba import njit

from mklearn.kernels.cache import RowCache

__all__ = ["MWUBlock", "MWUBlocks", "add_block_parts", "block_kernels", "gather_block_weights",
           "kernel_part"]


def block_kernels(n_kernels: int, n_blocks: int) -> list[np.ndarray]:
    """Kernel k in block k mod B (neighbours in a bank's order spread over every block)."""
    n_blocks = max(1, min(int(n_blocks), n_kernels))
    return [np.arange(b, n_kernels, n_blocks) for b in range(n_blocks)]


def kernel_part(operator, kernels):
    """The kernels ``kernels`` of ``operator`` as a provider of their own."""
    return operator.kernel_subset(kernels)


@njit(cache=True)
def _update_quad(g_alpha, quad, row_pos, row_neg, j_pos, j_neg, inv_trace, valid):
    """``quad_i += (G_i alpha)_{j+} + (G_i alpha)_{j-} + (K_i[j+,j+] + K_i[j-,j-] -
    2 K_i[j+,j-]) / (4 r_i)`` (from ``G_i alpha`` before its update), clipped at 0; returns
    the largest ``sqrt(quad_i)`` over the valid kernels (0 if none)."""
    top = 0.0
    for i in range(g_alpha.shape[0]):
        q = quad[i] + (
            g_alpha[i, j_pos]
            + g_alpha[i, j_neg]
            + 0.25
            * inv_trace[i]
            # float64 before the sum: float32 rows near their largest value overflow
            * (np.float64(row_pos[i, j_pos]) + row_neg[i, j_neg] - 2.0 * row_pos[i, j_neg])
        )
        quad[i] = q if q > 0.0 else 0.0
        if valid[i]:
            top = max(top, math.sqrt(quad[i]))
    return top


@njit(cache=True)
def _combine(g_alpha, quad, row_pos, row_neg, inv_trace, y, valid, c, x_top, ratio, margin):
    """Unnormalised weights ``ratio_i = e^-x_top sinh(x_i) / x_i``, ``x_i = c sqrt(quad_i)``
    (the largest exponent subtracted, footnote 3), then ``G_i alpha`` updated from the two
    rows and ``margin += sum_i ratio_i G_i alpha`` in one pass. Returns ``(sum_i ratio_i,
    sum_i ratio_i quad_i, max_i ratio_i)``."""
    m, n = g_alpha.shape
    total = 0.0
    weighted_quad = 0.0
    largest = 0.0
    for i in range(m):
        x = c * math.sqrt(quad[i])
        if not valid[i]:
            r = 0.0
        elif x > 0.0:
            r = -math.exp(x - x_top) * math.expm1(-2.0 * x) / (2.0 * x)
        else:
            r = math.exp(-x_top)
        ratio[i] = r
        total += r
        weighted_quad += r * quad[i]
        largest = max(largest, r)
    for i in range(m):
        half = 0.5 * inv_trace[i]
        w = ratio[i]
        gi = g_alpha[i]
        rp = row_pos[i]
        rn = row_neg[i]
        for j in range(n):
            v = gi[j] + half * y[j] * (rp[j] - rn[j])
            gi[j] = v
            margin[j] += w * v
    return total, weighted_quad, largest


class MWUBlock:
    """MWUMKL's state for some kernels: ``G_i alpha / r_i`` (k x n), ``alpha' G_i alpha /
    r_i`` (k), the last unnormalised weights and their running sum, and an LRU cache of the
    block's kernel rows.

    Parameters
    ----------
    operator : KernelColumns or StackColumns
        Rows of the block's kernels.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    inv_trace : ndarray of shape (k,)
        ``1 / tr K_i`` (0 for a kernel of zero trace).
    valid : ndarray of shape (k,), bool
        Kernels of non-zero finite trace.
    cache_size : float
        MB of the block's kernel rows.
    """

    def __init__(self, operator, y, inv_trace, valid, cache_size):
        k, n = operator.n_kernels, operator.n_samples
        self.cache = RowCache(operator, cache_size)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.inv_trace = np.ascontiguousarray(inv_trace, dtype=np.float64)
        self.valid = np.ascontiguousarray(valid, dtype=np.bool_)
        self.g_alpha = np.zeros((k, n))
        self.quad = np.zeros(k)
        self.ratio = np.zeros(k)
        self.weight_sum = np.zeros(k)
        self._rows = None

    def update(self, j_pos, j_neg, last_total, accumulate):
        """Add the last weights (``ratio / last_total``) to the running sum when
        ``accumulate``, read rows ``j_pos`` and ``j_neg``, update ``quad``; return the
        block's largest ``sqrt(quad_i)``."""
        if accumulate:
            self.weight_sum += self.ratio / last_total
        self._rows = (self.cache.get(j_pos), self.cache.get(j_neg))
        return _update_quad(self.g_alpha, self.quad, *self._rows, j_pos, j_neg,
                            self.inv_trace, self.valid)

    def combine(self, c, x_top):
        """Weights at exponent scale ``c`` and ``G_i alpha`` updated; returns ``(sum ratio,
        sum ratio quad, max ratio, margin part of shape (n,))``."""
        margin = np.zeros(self.g_alpha.shape[1])
        total, weighted_quad, largest = _combine(
            self.g_alpha, self.quad, *self._rows, self.inv_trace, self.y, self.valid,
            float(c), float(x_top), self.ratio, margin)
        return total, weighted_quad, largest, margin

    def finish(self, last_total, accumulate, averaged):
        """The final weights of the block, unnormalised: the running sum (``averaged``, after
        adding the last weights when ``accumulate``) or the last ratios; with
        ``weights @ quad`` and the margin part ``weights @ G alpha``."""
        if accumulate:
            self.weight_sum += self.ratio / last_total
        weights = self.weight_sum if averaged else self.ratio
        return weights.copy(), float(weights @ self.quad), weights @ self.g_alpha

    def counts(self):
        """(cache hits, cache misses)."""
        return self.cache.hits, self.cache.misses


class MWUBlocks:
    """Blocks of :class:`MWUBlock` run one after the other in this process, their numbers
    added in block order (the reference a Dask run equals bit for bit).

    Parameters
    ----------
    operator : KernelColumns or StackColumns
        Rows of all m kernels.
    y, inv_trace, valid, cache_size
        As :class:`MWUBlock`, for all m kernels (the cache budget is shared by the blocks).
    n_blocks : int, default=1
    """

    def __init__(self, operator, y, inv_trace, valid, cache_size, n_blocks=1):
        self.kernels = block_kernels(operator.n_kernels, n_blocks)
        parts = ([operator] if len(self.kernels) == 1
                 else [kernel_part(operator, k) for k in self.kernels])
        share = float(cache_size) / len(parts)
        self.blocks = [MWUBlock(part, y, inv_trace[k], valid[k], share)
                       for part, k in zip(parts, self.kernels, strict=True)]

    def _each(self, call):
        """``call(block)`` for every block (a :func:`operator.methodcaller`), in order."""
        return [call(block) for block in self.blocks]

    def update(self, j_pos, j_neg, last_total, accumulate):
        """The largest ``sqrt(quad_i)`` over every block (:meth:`MWUBlock.update`)."""
        return max(self._each(methodcaller("update", j_pos, j_neg, last_total, accumulate)))

    def combine(self, c, x_top):
        """``(sum ratio, sum ratio quad, max ratio, sum ratio G alpha)`` over the blocks,
        added in block order."""
        return add_block_parts(self._each(methodcaller("combine", c, x_top)))

    def finish(self, last_total, accumulate, averaged):
        """``(weights of all m kernels, weights @ quad, weights @ G alpha)``, unnormalised."""
        return gather_block_weights(self.kernels, self._each(
            methodcaller("finish", last_total, accumulate, averaged)))

    def counts(self):
        hits, misses = zip(*self._each(methodcaller("counts")), strict=True)
        return sum(hits), sum(misses)


def add_block_parts(parts):
    """The blocks' ``combine`` results added in block order."""
    total, weighted_quad, largest, margin = parts[0]
    margin = margin.copy()
    for t, q, r, part in parts[1:]:
        total += t
        weighted_quad += q
        largest = max(largest, r)
        margin += part
    return total, weighted_quad, largest, margin


def gather_block_weights(kernels, parts):
    """The blocks' ``finish`` results: weights in kernel order, the rest added in block
    order."""
    m = sum(k.size for k in kernels)
    weights = np.empty(m)
    weighted_quad, margin = 0.0, None
    for k, (w, q, part) in zip(kernels, parts, strict=True):
        weights[k] = w
        weighted_quad += q
        margin = part.copy() if margin is None else margin + part
    return weights, weighted_quad, margin
