"""RBF values looked up by squared distance, for points whose squared distances are integers.

On binary or count features (most LIBSVM sets: a9a, w8a, text counts) every squared distance
``||x - z||^2`` is an integer below a small bound, so ``f exp(-gamma s)`` takes at most that
many values per kernel. A table of them turns each ``exp`` into one load:

- rows of a base kernel: ``out[j] = table_t[s_j]``, the same bits as the ``exp`` of
  :func:`~mklearn.kernels._numba.rbf_rows` (the table is made by the same arithmetic);
- rows of ``K(d)``: the kernels of one feature block summed into one table, so a row costs a
  load per block instead of an ``exp`` per kernel;
- a row against a vector (the quadratic terms): the vector's entries summed by distance
  first (a histogram), then one short dot product per kernel.

The distances arrive as float64 holding exact integers (``sq`` of shape (blocks, rows, n), as
the other RBF loops take them); the caller guarantees ``0 <= sq < size``, and the loops clip
to the table all the same.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._numba import COMBINE_CHUNK, _dot, _rbf_values


@njit(cache=True, fastmath={"contract"})
def rbf_tables(neg_gammas, factors, size):
    """``tables[t, s] = factors[t] * exp(neg_gammas[t] * s)`` for ``s < size``: float64 of
    shape (len(neg_gammas), size), by the arithmetic of ``rbf_rows``."""
    s = np.arange(size).astype(np.float64)
    tables = np.zeros((neg_gammas.shape[0], size))
    bits = tables.view(np.int64)
    for t in range(neg_gammas.shape[0]):
        _rbf_values(s, neg_gammas[t], factors[t], tables[t], bits[t])
    return tables


@njit(cache=True)
def block_tables(tables, block_of, blocks):
    """``out[i] = sum_{t: block_of[t] = blocks[i]} tables[t]``, summed in kernel order."""
    out = np.zeros((blocks.shape[0], tables.shape[1]))
    for i in range(blocks.shape[0]):
        for t in range(block_of.shape[0]):
            if block_of[t] == blocks[i]:
                for s in range(tables.shape[1]):
                    out[i, s] += tables[t, s]
    return out


@njit(cache=True, inline="always")
def _lookup_row(task, sq, block_of, tables, targets, out):
    t = task // sq.shape[1]
    a = task - t * sq.shape[1]
    s, table, row = sq[block_of[t], a], tables[t], out[targets[t], a]
    top = table.shape[0] - 1
    for j in range(row.shape[0]):
        row[j] = table[min(np.int64(s[j]), top)]


@njit(cache=True, nogil=True)
def table_rows(sq, block_of, tables, targets, out):
    """``out[targets[t], a, j] = tables[t, sq[block_of[t], a, j]]`` for every kernel t and
    row a."""
    for task in range(block_of.shape[0] * sq.shape[1]):
        _lookup_row(task, sq, block_of, tables, targets, out)


@njit(cache=True, nogil=True, parallel=True)
def table_rows_parallel(sq, block_of, tables, targets, out):
    """:func:`table_rows` with the (kernel, row) pairs split over numba's threads."""
    for task in prange(block_of.shape[0] * sq.shape[1]):
        _lookup_row(task, sq, block_of, tables, targets, out)


@njit(cache=True, inline="always")
def _lookup_sum(first, stop, sq, blocks, tables, out):
    """Tasks ``a * n_chunks + c`` in ``[first, stop)``: columns ``c`` (chunks of
    ``COMBINE_CHUNK``) of ``out[a] = sum_i tables[i, sq[blocks[i], a]]``."""
    n = sq.shape[2]
    n_chunks = (n + COMBINE_CHUNK - 1) // COMBINE_CHUNK
    top = tables.shape[1] - 1
    for task in range(first, stop):
        a = task // n_chunks
        c0 = (task - a * n_chunks) * COMBINE_CHUNK
        c1 = min(n, c0 + COMBINE_CHUNK)
        target = out[a, c0:c1]
        s, table = sq[blocks[0], a, c0:c1], tables[0]
        for j in range(c1 - c0):
            target[j] = table[min(np.int64(s[j]), top)]
        for i in range(1, blocks.shape[0]):
            s, table = sq[blocks[i], a, c0:c1], tables[i]
            for j in range(c1 - c0):
                target[j] += table[min(np.int64(s[j]), top)]


@njit(cache=True, nogil=True)
def table_combined_rows(sq, blocks, tables, out):
    """``out[a, j] = sum_i tables[i, sq[blocks[i], a, j]]``: rows of a weighted sum of RBF
    kernels from the summed tables of their blocks (:func:`block_tables`)."""
    n_chunks = (sq.shape[2] + COMBINE_CHUNK - 1) // COMBINE_CHUNK
    _lookup_sum(0, sq.shape[1] * n_chunks, sq, blocks, tables, out)


@njit(cache=True, nogil=True, parallel=True)
def table_combined_rows_parallel(sq, blocks, tables, out, parts):
    """:func:`table_combined_rows` with the (row, column chunk) tasks split into ``parts``
    ranges over numba's threads."""
    n_tasks = sq.shape[1] * ((sq.shape[2] + COMBINE_CHUNK - 1) // COMBINE_CHUNK)
    parts = max(1, min(n_tasks, parts))
    for part in prange(parts):
        _lookup_sum(part * n_tasks // parts, (part + 1) * n_tasks // parts, sq, blocks,
                    tables, out)


@njit(cache=True, inline="always")
def _histogram_dots(first, stop, sq, blocks, start, order, tables, V, out):
    """Tasks ``i * n_rows + a`` in ``[first, stop)``: V[a] summed by the distances of row a
    on block ``blocks[i]``, then ``out[t, a] = tables[t] @ histogram`` for its kernels
    ``order[start[i]:start[i + 1]]``."""
    size = tables.shape[1]
    histogram = np.empty(size)
    for task in range(first, stop):
        i = task // sq.shape[1]
        a = task - i * sq.shape[1]
        histogram[:] = 0.0
        s, v = sq[blocks[i], a], V[min(np.int64(a), V.shape[0] - 1)]
        for j in range(s.shape[0]):
            histogram[min(np.int64(s[j]), size - 1)] += v[j]
        for p in range(start[i], start[i + 1]):
            out[order[p], a] = _dot(tables[order[p]], histogram)


@njit(cache=True, nogil=True)
def table_row_dots(sq, blocks, start, order, tables, V, out):
    """``out[t, a] = sum_j tables[t, sq[block of t, a, j]] V[a, j]`` (each RBF row against
    its own vector, as :func:`~mklearn.kernels._numba.rbf_row_dots`; V of shape (1, n): one
    vector for every row), by histograms of V over the distances: kernels
    ``order[start[i]:start[i + 1]]`` read block ``blocks[i]``."""
    _histogram_dots(0, blocks.shape[0] * sq.shape[1], sq, blocks, start, order, tables, V,
                    out)


@njit(cache=True, nogil=True, parallel=True)
def table_row_dots_parallel(sq, blocks, start, order, tables, V, out, parts):
    """:func:`table_row_dots` with the (block, row) tasks split into ``parts`` ranges over
    numba's threads."""
    n_tasks = blocks.shape[0] * sq.shape[1]
    parts = max(1, min(n_tasks, parts))
    for part in prange(parts):
        _histogram_dots(part * n_tasks // parts, (part + 1) * n_tasks // parts, sq, blocks,
                        start, order, tables, V, out)


# --- sparse points: each distance row computed into one work row and used at once ------------
#
# ``packed`` holds the CSR and CSC arrays of every sparse feature block, concatenated:
# ``(csr_ptr, csr_cols, csr_vals, row_base, csc_ptr, csc_rows, csc_vals, col_base, z_sq)``;
# point p of block i has its features at ``csr_ptr[row_base[i] + p]:...[+ 1]`` (local
# columns), column f of block i its points at ``csc_ptr[col_base[i] + f]:...[+ 1]``, and
# ``z_sq[i]`` holds the points' squared norms on block i.


@njit(cache=True, inline="always")
def _distance_row(i, point, packed, work):
    """``work[j] = ||x_point - x_j||^2`` on block i: the point's features scatter their
    columns (as :func:`~mklearn.kernels._numba.csc_block_arrays`)."""
    csr_ptr, csr_cols, csr_vals, row_base, csc_ptr, csc_rows, csc_vals, col_base, z_sq = packed
    work[:] = 0.0
    r = row_base[i] + point
    for p in range(csr_ptr[r], csr_ptr[r + 1]):
        q = csr_vals[p]
        c = col_base[i] + csr_cols[p]
        for e in range(csc_ptr[c], csc_ptr[c + 1]):
            work[csc_rows[e]] += csc_vals[e] * q
    norm, norms = z_sq[i, point], z_sq[i]
    for j in range(work.shape[0]):
        work[j] = max(work[j] * -2.0 + norm + norms[j], 0.0)


@njit(cache=True, inline="always")
def _sparse_combine(a, indices, blocks, tables, packed, out, work):
    top = tables.shape[1] - 1
    target = out[a]
    target[:] = 0.0
    for i in range(blocks.shape[0]):
        _distance_row(blocks[i], indices[a], packed, work)
        table = tables[i]
        for j in range(work.shape[0]):
            target[j] += table[min(np.int64(work[j]), top)]


@njit(cache=True, nogil=True)
def sparse_combined_rows(indices, blocks, tables, packed, out):
    """``out[a, j] = sum_i tables[i, ||x_{indices[a]} - x_j||^2 on block blocks[i]]``: rows
    of a weighted sum of RBF kernels on sparse integer points (the distances of each row
    computed into one work row, never stored)."""
    work = np.empty(out.shape[1])
    for a in range(indices.shape[0]):
        _sparse_combine(a, indices, blocks, tables, packed, out, work)


@njit(cache=True, nogil=True, parallel=True)
def sparse_combined_rows_parallel(indices, blocks, tables, packed, out):
    """:func:`sparse_combined_rows` with the rows split over numba's threads."""
    for a in prange(indices.shape[0]):
        _sparse_combine(a, indices, blocks, tables, packed, out, np.empty(out.shape[1]))


@njit(cache=True, inline="always")
def _sparse_row(a, indices, blocks, start, order, tables, targets, packed, out, work):
    """Row a of each kernel t into ``out[targets[t], a]``."""
    top = tables.shape[1] - 1
    for i in range(blocks.shape[0]):
        _distance_row(blocks[i], indices[a], packed, work)
        for p in range(start[i], start[i + 1]):
            table, row = tables[order[p]], out[targets[order[p]], a]
            for j in range(work.shape[0]):
                row[j] = table[min(np.int64(work[j]), top)]


@njit(cache=True, nogil=True)
def sparse_rows(indices, blocks, start, order, tables, targets, packed, out):
    """``out[targets[t], a] = K_t[indices[a]]`` for RBF kernels on sparse integer points:
    kernels ``order[start[i]:start[i + 1]]`` read block ``blocks[i]``."""
    work = np.empty(out.shape[2])
    for a in range(indices.shape[0]):
        _sparse_row(a, indices, blocks, start, order, tables, targets, packed, out, work)


@njit(cache=True, nogil=True, parallel=True)
def sparse_rows_parallel(indices, blocks, start, order, tables, targets, packed, out):
    """:func:`sparse_rows` with the rows split over numba's threads."""
    for a in prange(indices.shape[0]):
        _sparse_row(a, indices, blocks, start, order, tables, targets, packed, out,
                    np.empty(out.shape[2]))


@njit(cache=True, inline="always")
def _sparse_dots(a, indices, blocks, start, order, tables, V, packed, out, work, histogram):
    """``out[t, a] = K_t[indices[a]] @ V[a]`` (V[0] when V has one row), by a histogram of
    V over the distances."""
    top = tables.shape[1] - 1
    v = V[min(np.int64(a), V.shape[0] - 1)]
    for i in range(blocks.shape[0]):
        _distance_row(blocks[i], indices[a], packed, work)
        histogram[:] = 0.0
        for j in range(work.shape[0]):
            histogram[min(np.int64(work[j]), top)] += v[j]
        for p in range(start[i], start[i + 1]):
            out[order[p], a] = _dot(tables[order[p]], histogram)


@njit(cache=True, nogil=True)
def sparse_row_dots(indices, blocks, start, order, tables, V, packed, out):
    """``out[t, a] = K_t[indices[a]] @ V[a]`` for RBF kernels on sparse integer points (V of
    shape (1, n): one vector for every row); kernels as :func:`sparse_rows`."""
    work, histogram = np.empty(V.shape[1]), np.empty(tables.shape[1])
    for a in range(indices.shape[0]):
        _sparse_dots(a, indices, blocks, start, order, tables, V, packed, out, work, histogram)


@njit(cache=True, nogil=True, parallel=True)
def sparse_row_dots_parallel(indices, blocks, start, order, tables, V, packed, out):
    """:func:`sparse_row_dots` with the rows split over numba's threads."""
    for a in prange(indices.shape[0]):
        _sparse_dots(a, indices, blocks, start, order, tables, V, packed, out,
                     np.empty(V.shape[1]), np.empty(tables.shape[1]))
