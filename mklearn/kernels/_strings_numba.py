"""Numba loops of the string kernels: weighted-degree blocks and the linadd feature maps.

Sequences arrive integer-coded (``uint8`` codes ``0..a-1`` of an alphabet of size ``a``).

Weighted degree (Raetsch and Sonnenburg; SILP-MKL paper, JMLR 2006, section 4.1): for a pair
``(x, z)`` of equal length L let ``r_p`` be the length of the run of matching characters that
starts at position p. The k-mer at p matches iff ``r_p >= k``, so a sub-kernel that counts the
k-mers of lengths ``k in kmers`` starting in positions ``[lo, hi)`` with weights ``beta_k`` is
``sum_{p in [lo, hi)} T[min(r_p, d_max)]``, ``T[r] = sum_{k in kmers, k <= r} beta_k`` (one
table per sub-kernel). One pass over the pair gives every sub-kernel: ``O(L)`` per pair.

Linadd (SILP-MKL paper, section 4.2): an explicit sparse feature map stores, per example, one
column index per *slot* (a (k, position) pair for WD, a position for the spectrum kernel) into a
normal vector ``w``; ``phi(x_t)' w = sum_s c_s w[idx[s, t]]``. Adding examples to ``w`` and
looking ``w`` up for all examples costs ``O(n S)`` for S slots, independent of how many examples
were added.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def wd_block(A, B, symmetric, range_lo, range_hi, spec_range, tables, out):
    """WD sub-kernels between the rows of A and of B, written to ``out[m, i, j]``; the rows
    of A split over numba's threads.

    Parameters
    ----------
    A, B : uint8 arrays of shape (n_a, L), (n_b, L)
    symmetric : bool
        A is B: compute ``j >= i`` and mirror.
    range_lo, range_hi : int64 arrays of shape (n_ranges,)
        Distinct position ranges ``[lo, hi)`` of the sub-kernels.
    spec_range : int64 array of shape (m,)
        Range of each sub-kernel.
    tables : float64 array of shape (m, d_max + 1)
        ``T_m[r]`` as in the module docstring (already multiplied by the kernel's scale).
    out : float64 array of shape (m, n_a, n_b)
    """
    n_a, length = A.shape
    n_b = B.shape[0]
    n_ranges = range_lo.shape[0]
    n_specs, width = tables.shape
    d_max = width - 1
    for i in prange(n_a):
        run = np.zeros(length + 1, dtype=np.int64)
        hist = np.zeros((n_ranges, width), dtype=np.int64)
        x = A[i]
        start = i if symmetric else 0
        for j in range(start, n_b):
            z = B[j]
            for p in range(length - 1, -1, -1):
                run[p] = run[p + 1] + 1 if x[p] == z[p] else 0
            hist[:, :] = 0
            for r in range(n_ranges):
                for p in range(range_lo[r], range_hi[r]):
                    hist[r, min(run[p], d_max)] += 1
            for m in range(n_specs):
                h = hist[spec_range[m]]
                value = 0.0
                for t in range(1, width):
                    value += h[t] * tables[m, t]
                out[m, i, j] = value
                if symmetric:
                    out[m, j, i] = value
    return out


@njit(cache=True, parallel=True)
def kmer_codes(codes, lengths, k, alphabet_size):
    """Integer code of every k-mer: ``(n, max_len - k + 1)`` int64, -1 past a sequence's end.

    The k-mer ``s_p .. s_{p+k-1}`` has code ``sum_t s_{p+t} a^(k-1-t)``.
    """
    n, max_len = codes.shape
    width = max(max_len - k + 1, 0)
    out = np.full((n, width), -1, dtype=np.int64)
    for i in prange(n):
        for p in range(lengths[i] - k + 1):
            value = 0
            for t in range(k):
                value = value * alphabet_size + codes[i, p + t]
            out[i, p] = value
    return out


@njit(cache=True, parallel=True)
def kmer_columns(kmers, vocabulary, columns, counts, sizes):
    """Each sequence's distinct k-mers found in ``vocabulary`` (sorted codes), as ascending
    column indices into it with their counts: row i's first ``sizes[i]`` entries of
    ``columns`` and ``counts`` (each of the shape of ``kmers``, -1 codes skipped)."""
    n, width = kmers.shape
    for i in prange(n):
        row = np.sort(kmers[i])
        size = 0
        t = 0
        while t < width:
            code = row[t]
            run = 1
            while t + run < width and row[t + run] == code:
                run += 1
            if code >= 0:
                column = np.searchsorted(vocabulary, code)
                if column < vocabulary.size and vocabulary[column] == code:
                    columns[i, size] = column
                    counts[i, size] = run
                    size += 1
            t += run
        sizes[i] = size


@njit(cache=True, parallel=True)
def sparse_rows_times(indptr, indices, data, dense, out):
    """``out = A @ dense`` for the CSR matrix A (``indptr``, ``indices``, ``data``), its rows
    split over numba's threads; ``out`` of shape (n_rows, dense.shape[1])."""
    width = dense.shape[1]
    for i in prange(out.shape[0]):
        row = out[i]
        row[:] = 0.0
        for j in range(indptr[i], indptr[i + 1]):
            value, source = data[j], dense[indices[j]]
            for c in range(width):
                row[c] += value * source[c]
    return out


@njit(cache=True, parallel=True)
def kmer_squared_counts(kmers):
    """``sum_u N_u(x)^2`` of each sequence's k-mer counts (the spectrum kernel's diagonal),
    shape (n,)."""
    n, width = kmers.shape
    out = np.zeros(n)
    for i in prange(n):
        row = np.sort(kmers[i])
        total = 0.0
        t = 0
        while t < width:
            run = 1
            while t + run < width and row[t + run] == row[t]:
                run += 1
            if row[t] >= 0:
                total += run * run
            t += run
        out[i] = total
    return out


@njit(cache=True)
def linadd_add(idx, rows, amounts, w):
    """``w[idx[s, rows[a]]] += amounts[a]`` for every slot s with ``idx >= 0``.

    ``idx`` is slot-major, shape (S, n): each slot's columns form one region of w, so the
    lookups below walk w region by region (cache-friendly) instead of jumping for every slot.
    """
    n_slots = idx.shape[0]
    for a in range(rows.shape[0]):
        amount = amounts[a]
        if amount == 0.0:
            continue
        t = rows[a]
        for s in range(n_slots):
            column = idx[s, t]
            if column >= 0:
                w[column] += amount
    return w


@njit(cache=True)
def linadd_combined(idx, slot_weight, w, out):
    """``out[t] = sum_s slot_weight[s] w[idx[s, t]]`` (one output per example)."""
    n_slots, n = idx.shape
    out[:] = 0.0
    for s in range(n_slots):
        weight = slot_weight[s]
        if weight == 0.0:
            continue
        row = idx[s]
        for t in range(n):
            column = row[t]
            if column >= 0:
                out[t] += weight * w[column]
    return out


@njit(cache=True)
def linadd_per_kernel(idx, slot_ptr, slot_kernel, slot_coef, w, out):
    """``out[t, m] = sum_s coef_{s,m} w[idx[s, t]]``; slot s's kernels are a CSR row."""
    n_slots, n = idx.shape
    for s in range(n_slots):
        row = idx[s]
        for t in range(n):
            column = row[t]
            if column < 0:
                continue
            value = w[column]
            if value == 0.0:
                continue
            for e in range(slot_ptr[s], slot_ptr[s + 1]):
                out[t, slot_kernel[e]] += slot_coef[e] * value
    return out
