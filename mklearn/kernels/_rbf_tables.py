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

The loops read the distances ``D[slots[a], block, j]`` of row a: unsigned integers kept by a
row cache or computed for the call (sparse points), or float64 holding exact integers (dense
points, the distances the other RBF loops take, seen as (rows, blocks, n)). The caller
guarantees ``0 <= D < size``; the loops clip to the table all the same.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._numba import _dot, _rbf_values


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


# --- sparse points: squared distances as small integers, then tables -------------------------
#
# ``packed`` holds the CSR and CSC arrays of every sparse feature block, concatenated:
# ``(csr_ptr, csr_cols, csr_vals, row_base, csc_ptr, csc_rows, csc_vals, col_base, z_sq)``;
# point p of block i has its features at ``csr_ptr[row_base[i] + p]:...[+ 1]`` (local
# columns), column f of block i its points at ``csc_ptr[col_base[i] + f]:...[+ 1]``, and
# ``z_sq[i]`` holds the points' squared norms on block i. Distances go into ``D`` of shape
# (rows, blocks, n), an unsigned integer type (uint8 when they are below 256): a row cache
# keeps them across changes of the kernel weights (``K(d)`` rows then cost only loads).


@njit(cache=True, inline="always")
def row_span(task, parts, n):
    """``(a, lo, hi)``: task ``task`` of the threaded loops is row a's points ``lo <= j < hi``,
    each row's n points cut into ``parts`` spans (bounds multiples of 64: no two threads
    write one cache line)."""
    size = ((n + parts - 1) // parts + 63) // 64 * 64
    lo = min((task % parts) * size, n)
    return task // parts, lo, min(lo + size, n)


@njit(cache=True, inline="always")
def first_at_least(values, e0, e1, bound):
    """The first e in ``[e0, e1)`` with ``values[e] >= bound`` (``values`` sorted there), else
    e1."""
    while e0 < e1:
        middle = (e0 + e1) // 2
        if values[middle] < bound:
            e0 = middle + 1
        else:
            e1 = middle
    return e0


@njit(cache=True, nogil=True)
def _distance_row(point, blocks, packed, work, Da, lo, hi):
    """``Da[i, j] = ||x_point - x_j||^2`` for the points ``lo <= j < hi`` on the
    blocks i in ``blocks``: the point's features scatter their columns (as
    :func:`~mklearn.kernels._numba.csc_block_arrays`), each column's entries from lo to hi
    found by bisection (its row indices are sorted)."""
    csr_ptr, csr_cols, csr_vals, row_base, csc_ptr, csc_rows, csc_vals, col_base, z_sq = packed
    n, base = Da.shape[1], np.uint64(lo)
    part = work[:hi - lo]
    for i in blocks:
        part[:] = 0.0
        r = row_base[i] + point
        for p in range(csr_ptr[r], csr_ptr[r + 1]):
            q = csr_vals[p]
            c = col_base[i] + csr_cols[p]
            e0, e1 = csc_ptr[c], csc_ptr[c + 1]
            if lo > 0:
                e0 = first_at_least(csc_rows, e0, e1, lo)
            if hi < n:
                e1 = first_at_least(csc_rows, e0, e1, hi)
            for e in range(e0, e1):
                part[np.uint64(csc_rows[e]) - base] += csc_vals[e] * q
        norm, norms, row = z_sq[i, point], z_sq[i][lo:hi], Da[i][lo:hi]
        for j in range(row.shape[0]):
            row[j] = np.int64(max(part[j] * -2.0 + norm + norms[j], 0.0))


@njit(cache=True, nogil=True)
def distance_rows(indices, blocks, packed, D):
    """Squared distances of the points ``indices`` to every point on the sparse blocks
    ``blocks``, into ``D`` (shape (len(indices), all blocks, n); other blocks untouched)."""
    work = np.empty(D.shape[2])
    for a in range(indices.shape[0]):
        _distance_row(indices[a], blocks, packed, work, D[a], 0, D.shape[2])


@njit(cache=True, nogil=True, parallel=True)
def distance_rows_parallel(indices, blocks, packed, D, parts):
    """:func:`distance_rows` over numba's threads, each row cut into ``parts`` spans of
    points (:func:`row_span`): one row of a9a's 8,000 points on two threads, not one."""
    n = D.shape[2]
    for task in prange(indices.shape[0] * parts):
        a, lo, hi = row_span(task, parts, n)
        _distance_row(indices[a], blocks, packed, np.empty(hi - lo), D[a], lo, hi)


@njit(cache=True, nogil=True)
def gather_distance_rows(store, slots, points, blocks, D):
    """``D[a, i, j] = store[slots[a], i, points[j]]`` on the blocks i in ``blocks``: kept
    distance rows restricted to the points ``points`` (other blocks of D untouched)."""
    for a in range(slots.shape[0]):
        for i in blocks:
            source, row = store[slots[a], i], D[a, i]
            for j in range(points.shape[0]):
                row[j] = source[points[j]]


@njit(cache=True, inline="always")
def _load(s, table, j, top):
    return table[min(np.int64(s[j]), top)]


@njit(cache=True, inline="always")
def _add_four(Da, blocks, tables, i, target, first, lo, hi):
    """``target[j] (+)= t_i + t_i+1 + t_i+2 + t_i+3`` (``t_b = tables[b, Da[blocks[b], j]]``),
    added in that order in one pass: the bits of four passes, without three reads and writes
    of ``target`` (rows of five blocks: 3.0-3.1 -> 2.1-2.3 ns a value)."""
    top = tables.shape[1] - 1
    s0, s1 = Da[blocks[i]][lo:hi], Da[blocks[i + 1]][lo:hi]
    s2, s3 = Da[blocks[i + 2]][lo:hi], Da[blocks[i + 3]][lo:hi]
    t0, t1, t2, t3 = tables[i], tables[i + 1], tables[i + 2], tables[i + 3]
    if first:
        for j in range(target.shape[0]):
            x = _load(s0, t0, j, top) + _load(s1, t1, j, top)
            x += _load(s2, t2, j, top)
            target[j] = x + _load(s3, t3, j, top)
    else:
        for j in range(target.shape[0]):
            x = target[j] + _load(s0, t0, j, top)
            x += _load(s1, t1, j, top)
            x += _load(s2, t2, j, top)
            target[j] = x + _load(s3, t3, j, top)


@njit(cache=True, inline="always")
def _add_two(Da, blocks, tables, i, target, first, lo, hi):
    """:func:`_add_four` for two blocks."""
    top = tables.shape[1] - 1
    s0, s1, t0, t1 = Da[blocks[i]][lo:hi], Da[blocks[i + 1]][lo:hi], tables[i], tables[i + 1]
    if first:
        for j in range(target.shape[0]):
            target[j] = _load(s0, t0, j, top) + _load(s1, t1, j, top)
    else:
        for j in range(target.shape[0]):
            x = target[j] + _load(s0, t0, j, top)
            target[j] = x + _load(s1, t1, j, top)


@njit(cache=True, inline="always")
def _add_one(Da, blocks, tables, i, target, first, lo, hi):
    """:func:`_add_four` for one block."""
    top = tables.shape[1] - 1
    s0, t0 = Da[blocks[i]][lo:hi], tables[i]
    if first:
        for j in range(target.shape[0]):
            target[j] = _load(s0, t0, j, top)
    else:
        for j in range(target.shape[0]):
            target[j] += _load(s0, t0, j, top)


@njit(cache=True, nogil=True)
def _sum_row(Da, blocks, tables, row, lo, hi):
    """``row[j] = sum_i tables[i, Da[blocks[i], j]]`` for ``lo <= j < hi``, summed in block
    order, up to four blocks a pass. The first group is called with a literal ``first``: a
    flag only known at run time left one block 60% slower."""
    count, target = blocks.shape[0], row[lo:hi]
    i = 4 if count >= 4 else (2 if count >= 2 else 1)
    if i == 4:
        _add_four(Da, blocks, tables, 0, target, True, lo, hi)
    elif i == 2:
        _add_two(Da, blocks, tables, 0, target, True, lo, hi)
    else:
        _add_one(Da, blocks, tables, 0, target, True, lo, hi)
    while i < count:
        if count - i >= 4:
            _add_four(Da, blocks, tables, i, target, False, lo, hi)
            i += 4
        elif count - i >= 2:
            _add_two(Da, blocks, tables, i, target, False, lo, hi)
            i += 2
        else:
            _add_one(Da, blocks, tables, i, target, False, lo, hi)
            i += 1


@njit(cache=True, nogil=True)
def lookup_combined_rows(D, slots, blocks, tables, out):
    """``out[a, j] = sum_i tables[i, D[slots[a], blocks[i], j]]``: rows of a weighted sum of
    RBF kernels from the summed tables of their blocks (:func:`block_tables`)."""
    for a in range(slots.shape[0]):
        _sum_row(D[slots[a]], blocks, tables, out[a], 0, out.shape[1])


@njit(cache=True, nogil=True, parallel=True)
def lookup_combined_rows_parallel(D, slots, blocks, tables, out, parts):
    """:func:`lookup_combined_rows` over numba's threads, each row cut into ``parts`` spans
    of points (:func:`row_span`)."""
    for task in prange(slots.shape[0] * parts):
        a, lo, hi = row_span(task, parts, out.shape[1])
        _sum_row(D[slots[a]], blocks, tables, out[a], lo, hi)


@njit(cache=True, nogil=True)
def _kernel_rows(a, Da, blocks, start, order, tables, targets, out, lo, hi):
    top = tables.shape[1] - 1
    for i in range(blocks.shape[0]):
        s = Da[blocks[i]][lo:hi]  # slices: loops from 0 need no negative-index checks
        for p in range(start[i], start[i + 1]):
            table, row = tables[order[p]], out[targets[order[p]], a][lo:hi]
            for j in range(row.shape[0]):
                row[j] = table[min(np.int64(s[j]), top)]


@njit(cache=True, nogil=True)
def table_rows(indices, packed, blocks, start, order, tables, targets, out, D):
    """:func:`distance_rows` then :func:`lookup_rows`, a row at a time through ``D`` (shape
    (1, all blocks, n), the distances' integer type): rows of base kernels on sparse blocks
    without a pass over a large array of distances between the two."""
    work = np.empty(out.shape[2])
    for a in range(indices.shape[0]):
        _distance_row(indices[a], blocks, packed, work, D[0], 0, out.shape[2])
        _kernel_rows(a, D[0], blocks, start, order, tables, targets, out, 0, out.shape[2])


@njit(cache=True, nogil=True, parallel=True)
def table_rows_parallel(indices, packed, blocks, start, order, tables, targets, out, D, parts):
    """:func:`table_rows` over numba's threads, each row cut into ``parts`` spans of points
    (:func:`row_span`), each task with its own ``D`` like the one given."""
    n = out.shape[2]
    for task in prange(indices.shape[0] * parts):
        a, lo, hi = row_span(task, parts, n)
        Da = np.empty_like(D[0])
        _distance_row(indices[a], blocks, packed, np.empty(hi - lo), Da, lo, hi)
        _kernel_rows(a, Da, blocks, start, order, tables, targets, out, lo, hi)


@njit(cache=True, nogil=True)
def lookup_rows(D, slots, blocks, start, order, tables, targets, out):
    """``out[targets[t], a, j] = tables[t, D[slots[a], block of t, j]]``: kernels
    ``order[start[i]:start[i + 1]]`` read block ``blocks[i]``."""
    for a in range(slots.shape[0]):
        _kernel_rows(a, D[slots[a]], blocks, start, order, tables, targets, out, 0,
                     out.shape[2])


@njit(cache=True, nogil=True, parallel=True)
def lookup_rows_parallel(D, slots, blocks, start, order, tables, targets, out, parts):
    """:func:`lookup_rows` over numba's threads, each row cut into ``parts`` spans of points
    (:func:`row_span`)."""
    for task in prange(slots.shape[0] * parts):
        a, lo, hi = row_span(task, parts, out.shape[2])
        _kernel_rows(a, D[slots[a]], blocks, start, order, tables, targets, out, lo, hi)


@njit(cache=True, inline="always")
def _kernel_dots(a, Da, blocks, start, order, tables, v, out, histogram):
    top = tables.shape[1] - 1
    for i in range(blocks.shape[0]):
        s = Da[blocks[i]]
        histogram[:] = 0.0
        for j in range(s.shape[0]):
            histogram[min(np.int64(s[j]), top)] += v[j]
        for p in range(start[i], start[i + 1]):
            out[order[p], a] = _dot(tables[order[p]], histogram)


@njit(cache=True, nogil=True)
def lookup_row_dots(D, slots, blocks, start, order, tables, V, out):
    """``out[t, a] = sum_j tables[t, D[slots[a], block of t, j]] V[a, j]`` (V of shape
    (1, n): one vector for every row), by a histogram of V over the distances; kernels as
    :func:`lookup_rows`."""
    histogram = np.empty(tables.shape[1])
    for a in range(slots.shape[0]):
        _kernel_dots(a, D[slots[a]], blocks, start, order, tables,
                     V[min(np.int64(a), V.shape[0] - 1)], out, histogram)


@njit(cache=True, nogil=True, parallel=True)
def lookup_row_dots_parallel(D, slots, blocks, start, order, tables, V, out):
    """:func:`lookup_row_dots` with the rows split over numba's threads."""
    for a in prange(slots.shape[0]):
        _kernel_dots(a, D[slots[a]], blocks, start, order, tables,
                     V[min(np.int64(a), V.shape[0] - 1)], out, np.empty(tables.shape[1]))


# --- K_k v over a support: a point shares features with few support points -----------------
#
# ``||x_j - x_a||^2 = |x_j|^2 + |x_a|^2 - 2 x_j'x_a``, and on sparse points ``x_j'x_a = 0`` for
# most pairs. So ``(K_t v)[j]`` is ``base[t, |x_j|^2]``, with ``base[t, c] = sum_a v_a
# tables[t, c + |x_a|^2]`` (one table per norm, found once), plus ``tables[t] @ H[j]``, H[j]
# the corrections of the support points that share a feature with x_j summed by distance (found
# by scattering x_j's features over the support's columns). ``support`` holds the CSC arrays of
# every sparse block restricted to the support's points, concatenated as ``packed``'s:
# ``(csc_ptr, csc_rows, csc_vals, col_base)``, rows numbered by position in the support;
# ``s_norms[i]`` the support's squared norms on block i (integers).


@njit(cache=True)
def support_bases(blocks, start, order, s_norms, v, tables):
    """``base[t, c] = sum_a v[a] tables[t, c + s_norms[block of t, a]]`` (terms past the
    table left out: no point is that far)."""
    size = tables.shape[1]
    base = np.zeros(tables.shape)
    by_norm = np.empty(size)
    for i in range(blocks.shape[0]):
        by_norm[:] = 0.0
        norms = s_norms[blocks[i]]
        for a in range(v.shape[0]):
            by_norm[min(np.int64(norms[a]), size - 1)] += v[a]
        for p in range(start[i], start[i + 1]):
            t = order[p]
            for c in range(size):
                total = 0.0
                for d in range(size - c):
                    total += tables[t, c + d] * by_norm[d]
                base[t, c] = total
    return base


@njit(cache=True, inline="always")
def _correction_row(j, b, packed, support, s_norms, v, row, work, seen, touched, stamp):
    """``row[d] = sum_a v[a] ([D(j, a) = d] - [|x_j|^2 + |x_a|^2 = d])`` on block b: the
    support points a that share a feature with x_j, found by scattering x_j's features."""
    csr_ptr, csr_cols, csr_vals, row_base, z_sq = (packed[0], packed[1], packed[2], packed[3],
                                                   packed[8])
    s_ptr, s_rows, s_vals, s_base = support
    top = row.shape[0] - 1
    n_touched = 0
    r = row_base[b] + j
    for p in range(csr_ptr[r], csr_ptr[r + 1]):
        q = csr_vals[p]
        c = s_base[b] + csr_cols[p]
        for e in range(s_ptr[c], s_ptr[c + 1]):
            a = s_rows[e]  # without a branch: first touches are unpredictable
            again = seen[a] == stamp
            touched[n_touched] = a
            n_touched += 1 - again
            seen[a] = stamp
            work[a] = work[a] * again + s_vals[e] * q
    norm, norms = z_sq[b, j], s_norms[b]
    row[:] = 0.0
    for k in range(n_touched):
        a = touched[k]
        row[min(np.int64(max(work[a] * -2.0 + norm + norms[a], 0.0)), top)] += v[a]
        row[min(np.int64(norm + norms[a]), top)] -= v[a]


@njit(cache=True, nogil=True)
def support_corrections(points, b, packed, support, s_norms, v, H):
    """``H[p] = _correction_row(points[p])`` on block b (H of shape (len(points), size))."""
    work, touched = np.zeros(v.shape[0]), np.empty(v.shape[0] + 1, dtype=np.int64)
    seen = np.zeros(v.shape[0], dtype=np.int64)
    for p in range(points.shape[0]):
        _correction_row(points[p], b, packed, support, s_norms, v, H[p], work, seen, touched,
                        p + 1)


@njit(cache=True, nogil=True, parallel=True)
def support_corrections_parallel(points, b, packed, support, s_norms, v, H, n_chunks):
    """:func:`support_corrections` with the points split into ``n_chunks`` over numba's
    threads."""
    n = points.shape[0]
    for chunk in prange(n_chunks):
        work, touched = np.zeros(v.shape[0]), np.empty(v.shape[0] + 1, dtype=np.int64)
        seen = np.zeros(v.shape[0], dtype=np.int64)
        for p in range(chunk * n // n_chunks, (chunk + 1) * n // n_chunks):
            _correction_row(points[p], b, packed, support, s_norms, v, H[p], work, seen,
                            touched, p + 1)
