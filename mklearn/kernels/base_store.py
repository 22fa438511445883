"""Reads of the rows of every base kernel that a row cache holds, for SMO-MKL's pair step.

The step (:mod:`mklearn.svm.core`, ``STEP_MKL``) needs, for a pair of samples ``i``, ``j``
whose slots a row cache holds: ``F[k] += step (K_k[i] - K_k[j])`` for every kernel, a row of
``K(d)`` and the pair terms ``K_k[i, i] + K_k[j, j] - 2 K_k[i, j]``. A :class:`BaseStore`
holds what the slots keep, and the four functions :func:`update_outputs`,
:func:`combined_row`, :func:`pair_terms` and :func:`set_weights` read it; the SMO core sees
nothing else. Two layouts, chosen once by the row source
(:func:`mklearn.kernels.row_sources.base_rows`):

- the rows themselves, ``rows[slot]`` of shape (m, n);
- for RBF kernels on integer points (:mod:`mklearn.kernels.rbf_tables`), each point's squared
  distances on the sparse feature blocks, ``distances[slot]`` of shape (blocks, n), one or two
  bytes a value, and ``K_k[i, s] = tables[k, distances[slot_i, kernel_block[k], s]]``. The
  values are those of the base rows (the tables are made by the same arithmetic), and the
  update writes ``F`` alone: a9a, 8,000 points, 50 kernels, a step read and wrote about 13 MB
  of rows, ``F`` and ``d' F`` from memory, which two threads could not share.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

MIN_BLOCK = 2000  # samples, fewest a thread takes in the threaded passes (see the note below)


class BaseStore(NamedTuple):
    """The base rows a row cache holds: ``rows[slot]``, or (``tables`` of shape (m, size))
    distance rows ``distances[slot]`` whose values the tables give."""

    rows: np.ndarray  # (slots, m, n) float32/64, or (1, 1, 1) when read by table
    distances: np.ndarray  # (slots, blocks, n) uint8/16, or (1, 1, 1) when rows are held
    tables: np.ndarray  # (m, size) float64 kernel value of each squared distance, or (0, 1)
    kernel_block: np.ndarray  # (m,) int64, feature block of each kernel
    block_tables: np.ndarray  # (blocks, size) float64, tables of K(d) per block (set_weights)


def held_rows(store: np.ndarray) -> BaseStore:
    """A :class:`BaseStore` of the rows ``store`` (shape (slots, m, n))."""
    return BaseStore(store, np.zeros((1, 1, 1), dtype=np.uint8), np.zeros((0, 1)),
                     np.zeros(1, np.int64), np.zeros((1, 1)))


def held_distances(distances: np.ndarray, tables: np.ndarray,
                   kernel_block: np.ndarray) -> BaseStore:
    """A :class:`BaseStore` of the distance rows ``distances`` (shape (slots, blocks, n))
    read through ``tables`` (shape (m, size)) by each kernel's block ``kernel_block``."""
    return BaseStore(np.zeros((1, 1, 1)), distances,
                     np.ascontiguousarray(tables, dtype=np.float64),
                     np.ascontiguousarray(kernel_block, dtype=np.int64),
                     np.zeros((distances.shape[1], tables.shape[1])))


@njit(cache=True)
def update_outputs(F, base, slot_i, slot_j, step, d, fd, blocks):
    """``F[k] += step (K_k[i] - K_k[j])`` on every sample and ``fd = d' F`` in one pass, the
    rows of i and j in slots ``slot_i``, ``slot_j``; on numba's threads when ``blocks`` > 1."""
    if base.tables.shape[0] > 0:
        Di, Dj = base.distances[slot_i], base.distances[slot_j]
        if blocks > 1:
            _update_by_table_parallel(F, Di, Dj, base.tables, base.kernel_block, step, d, fd,
                                      blocks)
        else:
            _update_by_table(F, Di, Dj, base.tables, base.kernel_block, step, d, fd)
    elif blocks > 1:
        update_rows_parallel(F, base.rows, slot_i, slot_j, step, d, fd, blocks)
    else:
        update_rows(F, base.rows, slot_i, slot_j, step, d, fd)


@njit(cache=True)
def combined_row(base, slot, d, out, blocks):
    """Row ``out`` of ``K(d)`` of the sample in ``slot``; ``d`` the weights last given to
    :func:`set_weights`."""
    if base.tables.shape[0] == 0:
        if blocks > 1:
            weighted_sum_parallel(d, base.rows[slot], out, blocks)
        else:
            weighted_sum(d, base.rows[slot], out)
    elif blocks > 1:
        _table_weighted_sum_parallel(base.distances[slot], base.block_tables, out, blocks)
    else:
        _table_weighted_sum(base.distances[slot], base.block_tables, out)


@njit(cache=True)
def pair_terms(base, slot_i, slot_j, si, sj, a):
    """``a_k = K_k[i, i] + K_k[j, j] - 2 K_k[i, j]`` for every base kernel (samples ``si``,
    ``sj`` in slots ``slot_i``, ``slot_j``)."""
    if base.tables.shape[0] > 0:
        _table_pair_terms(base.distances[slot_i], base.distances[slot_j], si, sj, base.tables,
                          base.kernel_block, a)
    else:
        rows = base.rows
        for k in range(a.size):
            a[k] = rows[slot_i, k, si] + rows[slot_j, k, sj] - 2.0 * rows[slot_i, k, sj]


@njit(cache=True)
def set_weights(base, d):
    """Make ``d`` the weights :func:`combined_row` combines (by table: the table of ``K(d)``
    of each block)."""
    if base.tables.shape[0] > 0:
        _block_weighted_tables(d, base.tables, base.kernel_block, base.block_tables)


@njit(cache=True)
def _block_width(n, blocks):
    """Samples per block: ``n`` split into ``blocks``, a multiple of 16 (whole vectors)."""
    width = (n + blocks - 1) // blocks
    return (width + 15) // 16 * 16


# The passes below work on blocks of samples through 1-D views: contiguous views vectorise,
# also inside prange (indexing the 2-D arrays there did not, and ran slower on 2 threads).
# Each view counts a reference to its array, atomically: threads on blocks narrower than
# MIN_BLOCK spend more time on those counts than on the sums (docs/smo_mkl.md), so narrow
# problems stay serial.

@njit(cache=True, fastmath=True, inline="always")
def _add_scaled(w, x, out):
    for t in range(out.size):
        out[t] += w * x[t]


@njit(cache=True)
def _weighted_block(d, A, out, start, stop):
    block = out[start:stop]
    block[:] = 0.0
    for k in range(A.shape[0]):
        if d[k] != 0.0:
            _add_scaled(d[k], A[k, start:stop], block)


@njit(cache=True)
def weighted_sum(d, A, out):
    """``out = sum_k d_k A[k]`` over the kernels with non-zero weight (A of shape (m, n));
    with ``A = store[slot]``, a row of the combined kernel."""
    _weighted_block(d, A, out, 0, out.size)


@njit(cache=True, parallel=True)
def weighted_sum_parallel(d, A, out, blocks):
    """:func:`weighted_sum` over ``blocks`` blocks of samples on numba's threads."""
    n = out.size
    width = _block_width(n, blocks)
    for b in prange(blocks):
        _weighted_block(d, A, out, min(b * width, n), min(b * width + width, n))


@njit(cache=True, fastmath=True, inline="always")
def _update_kernel(F_k, row_i, row_j, step, w, fd):
    for s in range(F_k.size):
        value = F_k[s] + step * (row_i[s] - row_j[s])
        F_k[s] = value
        fd[s] += w * value


@njit(cache=True)
def _update_block(F, store, slot_i, slot_j, step, d, fd, start, stop):
    fd_block = fd[start:stop]
    fd_block[:] = 0.0
    for k in range(F.shape[0]):
        _update_kernel(F[k, start:stop], store[slot_i, k, start:stop],
                       store[slot_j, k, start:stop], step, d[k], fd_block)


@njit(cache=True)
def update_rows(F, store, slot_i, slot_j, step, d, fd):
    """``F[k] += step (K_k[i] - K_k[j])`` on every sample and ``fd = d' F`` in one pass
    (rows ``i``, ``j`` in ``store[slot_i]``, ``store[slot_j]``)."""
    _update_block(F, store, slot_i, slot_j, step, d, fd, 0, F.shape[1])


@njit(cache=True, parallel=True)
def update_rows_parallel(F, store, slot_i, slot_j, step, d, fd, blocks):
    """:func:`update_rows` over ``blocks`` blocks of samples on numba's threads."""
    n = F.shape[1]
    width = _block_width(n, blocks)
    for b in prange(blocks):
        _update_block(F, store, slot_i, slot_j, step, d, fd, min(b * width, n),
                      min(b * width + width, n))


# --- by table: K_k[i, s] = tables[k, D[i, kernel_block[k], s]] ---------------------------


@njit(cache=True, inline="always")
def _entry(table, distance):
    return table[min(np.int64(distance), table.size - 1)]


@njit(cache=True)
def _block_weighted_tables(d, tables, kernel_block, out):
    """``out[b] = sum_{k: kernel_block[k] = b} d_k tables[k]`` over the kernels with non-zero
    weight, in kernel order (out of shape (blocks, size)): the table of ``K(d)`` per block."""
    out[:] = 0.0
    for k in range(d.size):
        if d[k] != 0.0:
            _add_scaled(d[k], tables[k], out[kernel_block[k]])


@njit(cache=True, fastmath=True)
def _table_sum_block(Da, block_tables, out, start, stop):
    block = out[start:stop]
    block[:] = 0.0
    for b in range(block_tables.shape[0]):
        table, row = block_tables[b], Da[b, start:stop]
        for s in range(block.size):
            block[s] += _entry(table, row[s])


@njit(cache=True)
def _table_weighted_sum(Da, block_tables, out):
    """``out[s] = sum_b block_tables[b, Da[b, s]]``: the row of ``K(d)`` of the point whose
    distances are ``Da`` (shape (blocks, n))."""
    _table_sum_block(Da, block_tables, out, 0, out.size)


@njit(cache=True, parallel=True)
def _table_weighted_sum_parallel(Da, block_tables, out, blocks):
    """:func:`_table_weighted_sum` over ``blocks`` blocks of samples on numba's threads."""
    n = out.size
    width = _block_width(n, blocks)
    for b in prange(blocks):
        _table_sum_block(Da, block_tables, out, min(b * width, n), min(b * width + width, n))


@njit(cache=True)
def _table_pair_terms(Di, Dj, si, sj, tables, kernel_block, a):
    """``a_k = K_k[i, i] + K_k[j, j] - 2 K_k[i, j]`` from the distance rows ``Di``, ``Dj`` of
    samples ``si``, ``sj``."""
    for k in range(a.size):
        table, b = tables[k], kernel_block[k]
        a[k] = (_entry(table, Di[b, si]) + _entry(table, Dj[b, sj])
                - 2.0 * _entry(table, Di[b, sj]))


@njit(cache=True, fastmath=True, inline="always")
def _update_kernel_by_table(F_k, table, di, dj, step, w, fd):
    for s in range(F_k.size):
        value = F_k[s] + step * (_entry(table, di[s]) - _entry(table, dj[s]))
        F_k[s] = value
        fd[s] += w * value


@njit(cache=True)
def _update_block_by_table(F, Di, Dj, tables, kernel_block, step, d, fd, start, stop):
    fd_block = fd[start:stop]
    fd_block[:] = 0.0
    for k in range(F.shape[0]):
        b = kernel_block[k]
        _update_kernel_by_table(F[k, start:stop], tables[k], Di[b, start:stop],
                                Dj[b, start:stop], step, d[k], fd_block)


@njit(cache=True)
def _update_by_table(F, Di, Dj, tables, kernel_block, step, d, fd):
    """:func:`update_rows` with the rows of samples i and j looked up from their distance
    rows ``Di``, ``Dj`` (shape (blocks, n))."""
    _update_block_by_table(F, Di, Dj, tables, kernel_block, step, d, fd, 0, F.shape[1])


@njit(cache=True, parallel=True)
def _update_by_table_parallel(F, Di, Dj, tables, kernel_block, step, d, fd, blocks):
    """:func:`_update_by_table` over ``blocks`` blocks of samples on numba's threads."""
    n = F.shape[1]
    width = _block_width(n, blocks)
    for b in prange(blocks):
        _update_block_by_table(F, Di, Dj, tables, kernel_block, step, d, fd,
                               min(b * width, n), min(b * width + width, n))
