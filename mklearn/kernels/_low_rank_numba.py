"""Numba loops of the low-rank maps' exact one-column kernels.

A kernel on one column whose training values are few is exact on those values (its
landmarks): a point's features are a row of the kernel's table ``K_LL P`` picked by the
point's value. These loops find the values' rows (``landmark_codes``) and copy the table
rows into the features (``gather_table_rows``), every point at once. Equal rows of features
or points are found by hashing them (``row_hashes``, checked by ``verified``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from mklearn.kernels._rbf_tables import first_at_least

NOT_A_LANDMARK = -1  # the code of a value that no landmark has


@njit(cache=True)
def _hash_slot(bits, mask):
    """A slot of an open-addressing table of ``mask + 1`` slots for a value's bits."""
    return ((bits * np.int64(-7046029254386353131)) >> np.int64(20)) & mask


@njit(cache=True)
def distinct_first_rows(bits, limit):
    """Rows of the first occurrence of each distinct value of a column, given as the int64
    ``bits`` of its float64 values (-0.0 made 0.0 first), in order of appearance, or an
    empty array when there are more than ``limit`` values."""
    size = 1
    while size < 4 * (limit + 1):
        size *= 2
    mask = np.int64(size - 1)
    keys = np.empty(size, dtype=np.int64)
    used = np.zeros(size, dtype=np.bool_)
    first = np.empty(limit + 1, dtype=np.int64)
    count = 0
    for i in range(bits.size):
        key = bits[i]
        slot = _hash_slot(key, mask)
        while used[slot] and keys[slot] != key:
            slot = (slot + 1) & mask
        if not used[slot]:
            if count == limit:
                return first[:0]
            used[slot] = True
            keys[slot] = key
            first[count] = i
            count += 1
    return first[:count]


@njit(cache=True, parallel=True)
def landmark_codes(points, columns, scales, values, value_starts, order, codes):
    """``codes[i, g]``: the landmark of group g whose value is point i's ``points[i,
    columns[g]] * scales[g]`` (``values[value_starts[g]:value_starts[g + 1]]`` sorted, their
    landmarks ``order``), or ``NOT_A_LANDMARK``."""
    for i in prange(points.shape[0]):
        for g in range(columns.size):
            x = points[i, columns[g]] * scales[g]
            lo = first_at_least(values, value_starts[g], value_starts[g + 1], x)
            found = lo < value_starts[g + 1] and values[lo] == x
            codes[i, g] = order[lo] if found else NOT_A_LANDMARK


@njit(cache=True, parallel=True)
def gather_table_rows(codes, group_of, tables, table_starts, widths, out_starts, out):
    """``out[i, out_starts[t]:+widths[t]]`` = row ``codes[i, group_of[t]]`` of kernel t's
    table, kept flat row by row from ``tables[table_starts[t]]``."""
    for i in prange(codes.shape[0]):
        row = out[i]
        for t in range(group_of.size):
            width = widths[t]
            source = table_starts[t] + codes[i, group_of[t]] * width
            target = out_starts[t]
            for j in range(width):
                row[target + j] = tables[source + j]


@njit(cache=True, nogil=True, parallel=True)
def row_hashes(Phi, directions):
    """Each row's products with the rows of ``directions``, shape (n, len(directions)): the
    same loop for every row, so equal rows get equal values."""
    n, width = Phi.shape[0], directions.shape[0]
    out = np.empty((n, width))
    for i in prange(n):
        for h in range(width):
            total = 0.0
            for j in range(Phi.shape[1]):
                total += Phi[i, j] * directions[h, j]
            out[i, h] = total
    return out


@njit(cache=True, nogil=True)
def verified(Phi, representative):
    """``representative`` with every row that differs from its representative made its own
    (a hash collision)."""
    for i in range(representative.size):
        r = representative[i]
        if r == i:
            continue
        for j in range(Phi.shape[1]):
            if Phi[i, j] != Phi[r, j]:
                representative[i] = i
                break
    return representative


@njit(cache=True, nogil=True, parallel=True)
def squared_block_norms(features, starts, norms):
    """``norms[i, k] = ||features[i, starts[k]:starts[k + 1]]||^2``, summed in float64."""
    for i in prange(features.shape[0]):
        for k in range(starts.size - 1):
            block = features[i, starts[k]:starts[k + 1]]
            total = 0.0
            for j in range(block.size):
                value = np.float64(block[j])
                total += value * value
            norms[i, k] = total
