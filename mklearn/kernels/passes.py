"""Per-kernel passes over rows computed from a provider, in small chunks of kernels x rows.

The row operator (:class:`~mklearn.kernels.operator.RowKernels`) runs them on all its
kernels, a Dask worker (:mod:`mklearn.distributed`) on its block of kernels. Each kernel's
number is computed the same way whatever the call holds (kernels in chunks, rows in chunks
whose size depends on the support and n only), so the results do not depend on how kernels
are split into blocks or workers.

Chunks are small on purpose: a chunk's rows are written by the kernel loop and read back by
the product while they are still in the processor's cache. On Sonar with 10^5 RBF kernels,
4 MB chunks made a pass of the quadratic terms 1.9x and rows of ``K(d)`` 1.5-3x faster than
64 MB chunks.
"""

from __future__ import annotations

import numpy as np

from mklearn._sizes import PASS_CHUNK_BYTES
from mklearn.kernels.row_sources import combined_diagonal
from mklearn.kernels.threads import one_blas_thread

__all__ = ["quadratic_terms", "products", "weighted_rows", "weighted_diagonal",
           "weighted_products"]

# bands of rows of the support's block (the quadratic terms) from this many support vectors
# (a rule on S alone: a kernel's number must not depend on which kernels share the call):
# 1.8-2.0x faster on 10^4 Sonar kernels at S = 190, and on 103 RBF kernels at S = 300 and
# 1,500 (float64); float32 rows of those 103 kernels at S = 300 were 1.2x slower (50 ms)
SYMMETRIC_BANDS = 8
SYMMETRIC_MIN_SUPPORT = 64


class _Buffer:
    """One work array reused by every chunk of a pass: the rows are written into it
    (``rows(..., out=)`` for providers that fill a given array) instead of into fresh ones.
    Under Dask's worker default ``MALLOC_TRIM_THRESHOLD_=65536`` every array above 128 kB
    is a fresh mmap and its pages fault in again: a pass of 10^5 Sonar kernels was 4x slower
    allocating its chunks than reusing one buffer."""

    def __init__(self):
        self.flat = np.empty(0)

    def take(self, shape):
        size = int(np.prod(shape))
        if self.flat.size < size:
            self.flat = np.empty(max(size, PASS_CHUNK_BYTES // 8))
        return self.flat[:size].reshape(shape)


def _rows(source, indices, kernels, buffer):
    """``source.rows(indices, kernels)``, written into ``buffer`` when the source can."""
    if not source.capabilities.fills_out:
        return source.rows(indices, kernels)
    shape = (len(kernels), len(indices), source.n_samples)
    return source.rows(indices, kernels, out=buffer.take(shape))


def _chunks(n_kernels, n_rows, width):
    """(rows per chunk, kernels per chunk) for rows of ``width`` values within PASS_CHUNK_BYTES."""
    rows = max(1, PASS_CHUNK_BYTES // (8 * width))
    kernels = max(1, PASS_CHUNK_BYTES // (8 * width * min(n_rows, rows)))
    return rows, kernels


@one_blas_thread
def quadratic_terms(provider, support, v_s, kernels=None):
    """``g_t = v_s' K_k[S, S] v_s`` for ``k = kernels[t]`` (all kernels of ``provider`` by
    default); float64 of shape (len(kernels),).

    When the provider can restrict itself to some points (``restricted``), only the upper
    triangle of the support's block is computed, in ``SYMMETRIC_BANDS`` bands of rows (from
    ``SYMMETRIC_MIN_SUPPORT`` support vectors; one band below): each band's
    rows against the columns from the band on, off-diagonal entries counted twice. That is
    ``(1 + 1 / SYMMETRIC_BANDS) / 2`` of the kernel values of the whole block."""
    picked = np.arange(provider.n_kernels) if kernels is None else np.asarray(kernels)
    restricted = provider.restricted if provider.capabilities.restricted else None
    g = np.zeros(picked.size)
    buffer, product = _Buffer(), _Buffer()
    if restricted is None:
        step_rows, step_kernels = _chunks(picked.size, support.size, provider.n_samples)
        for k0 in range(0, picked.size, step_kernels):
            chunk = picked[k0:k0 + step_kernels]
            for r0 in range(0, support.size, step_rows):
                block = _rows(provider, support[r0:r0 + step_rows], chunk, buffer)[:, :, support]
                g[k0:k0 + step_kernels] += ((block @ v_s) * v_s[r0:r0 + step_rows]).sum(axis=1)
        return g
    bands = SYMMETRIC_BANDS if support.size >= SYMMETRIC_MIN_SUPPORT else 1
    band = max(1, -(-support.size // bands))
    for r0 in range(0, support.size, band):
        r1 = min(support.size, r0 + band)
        source = restricted(support[r0:])  # the band's rows are its first r1 - r0 points
        v_band, v_rest = v_s[r0:r1], v_s[r1:]
        columns = np.arange(r1 - r0)
        step_rows, step_kernels = _chunks(picked.size, r1 - r0, source.n_samples)
        row_dots = source.row_dots if source.capabilities.row_dots else None
        for a0 in range(0, r1 - r0, step_rows):
            rows = columns[a0:a0 + step_rows]
            # within the band: 2 above the diagonal, 1 on it, 0 below
            weight = (2.0 * (columns[None, :] > rows[:, None])
                      + (columns[None, :] == rows[:, None]))
            if row_dots is not None:  # each row against its weighted v, rows never stored
                V = np.empty((rows.size, source.n_samples))
                np.multiply(weight, v_band, out=V[:, :r1 - r0])
                V[:, r1 - r0:] = 2.0 * v_rest
                step = max(1, PASS_CHUNK_BYTES // (8 * rows.size))  # kernels: t within a chunk
                for k0 in range(0, picked.size, step):
                    chunk = picked[k0:k0 + step]
                    t = row_dots(rows, chunk, V)
                    g[k0:k0 + chunk.size] += (t * v_band[rows]).sum(axis=1)
                continue
            for k0 in range(0, picked.size, step_kernels):
                block = _rows(source, rows, picked[k0:k0 + step_kernels], buffer)
                inner = product.take((block.shape[0], rows.size, r1 - r0))
                t = np.multiply(block[:, :, :r1 - r0], weight, out=inner) @ v_band
                if v_rest.size:
                    t += 2.0 * (block[:, :, r1 - r0:] @ v_rest)
                # a row sum, not a matrix product: the same bits whatever the kernels in t
                g[k0:k0 + step_kernels] += (t * v_band[rows]).sum(axis=1)
    return g


@one_blas_thread
def products(provider, support, v_s, kernels=None):
    """``K_k v`` over the support (rows ``support`` weighted by ``v_s``) for ``k =
    kernels[t]``; float64 of shape (len(kernels), n): by the provider's ``support_products``
    when it has one that applies (tables on sparse points), else from rows in chunks."""
    found = provider.support_products(support, v_s, kernels)
    if found is not None:
        return found
    picked = np.arange(provider.n_kernels) if kernels is None else np.asarray(kernels)
    step_rows, step_kernels = _chunks(picked.size, support.size, provider.n_samples)
    out = np.zeros((picked.size, provider.n_samples))
    buffer = _Buffer()
    for k0 in range(0, picked.size, step_kernels):
        chunk = picked[k0:k0 + step_kernels]
        for r0 in range(0, support.size, step_rows):
            rows = _rows(provider, support[r0:r0 + step_rows], chunk, buffer)
            out[k0:k0 + step_kernels] += v_s[r0:r0 + step_rows] @ rows
    return out


@one_blas_thread
def weighted_rows(provider, indices, kernel_weights, restrict=False, out=None):
    """``sum_t weights[t] K_{kernels[t]}[indices, :]`` for ``kernel_weights = (kernels,
    weights)`` (kernels None: all of ``provider``): float64 of shape (len(indices), n), or
    (len(indices), len(indices)) with ``restrict`` (the points ``indices`` only); into
    ``out`` (C-contiguous, of that shape) when given."""
    kernels, weights = kernel_weights
    picked = np.arange(provider.n_kernels) if kernels is None else np.asarray(kernels)
    restricted = (provider.restricted if restrict and provider.capabilities.restricted
                  else None)
    source = provider if restricted is None else restricted(indices)
    positions = indices if restricted is None else np.arange(indices.size)
    columns = indices if restrict and restricted is None else slice(None)
    step_rows, step_kernels = _chunks(picked.size, indices.size, source.n_samples)
    width = indices.size if restrict else source.n_samples
    combined = source.combined_rows if source.capabilities.sums_rows else None
    if combined is not None and out is not None and not restrict:  # straight into out
        for r0 in range(0, indices.size, step_rows):
            combined(positions[r0:r0 + step_rows], picked, weights, out=out[r0:r0 + step_rows])
        return out
    if out is None:
        out = np.zeros((indices.size, width))
    else:
        out.fill(0.0)
    if combined is not None:  # every kernel of a row chunk at once, summed as evaluated
        for r0 in range(0, indices.size, step_rows):
            out[r0:r0 + step_rows] = combined(positions[r0:r0 + step_rows], picked,
                                              weights)[:, columns]
        return out
    buffer = _Buffer()
    for k0 in range(0, picked.size, step_kernels):
        chunk = picked[k0:k0 + step_kernels]
        for r0 in range(0, indices.size, step_rows):
            rows = _rows(source, positions[r0:r0 + step_rows], chunk, buffer)[:, :, columns]
            out[r0:r0 + step_rows] += np.tensordot(weights[k0:k0 + step_kernels], rows,
                                                   axes=(0, 0))
    return out


@one_blas_thread
def weighted_diagonal(provider, kernel_weights):
    """``sum_t weights[t] diag K_{kernels[t]}`` for ``kernel_weights = (kernels, weights)``
    (kernels None: all of ``provider``); float64 of shape (n,)."""
    kernels, weights = kernel_weights
    diagonal = np.asarray(provider.diagonal(), dtype=np.float64)
    if kernels is None:
        return weights @ diagonal
    return combined_diagonal(diagonal, np.asarray(kernels), weights)


def weighted_products(provider, support, v_s, kernel_weights):
    """``sum_t weights[t] K_{kernels[t]} v`` over the support of v; float64 of shape (n,),
    from the support's rows of the weighted sum, ``PASS_CHUNK_BYTES`` of them at a time."""
    step = max(1, PASS_CHUNK_BYTES // (8 * provider.n_samples))
    out = np.zeros(provider.n_samples)
    for r0 in range(0, support.size, step):
        out += v_s[r0:r0 + step] @ weighted_rows(provider, support[r0:r0 + step],
                                                 kernel_weights)
    return out
