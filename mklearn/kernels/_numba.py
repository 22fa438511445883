"""Numba loops that evaluate a family of base kernels into a stack.

The kernels are grouped in *blocks* of kernels sharing the same feature columns.
A block on a single column reads ``x_ic`` and ``z_jc`` directly; a block on several
columns reads its inner products, squared and L1 distances from precomputed
``(n_multi, n_x, n_z)`` arrays. For every pair (i, j) all kernels are written into
the contiguous row ``out[i, j, :]``.

Per-kernel arrays (all in the internal, block-sorted order):
``kinds`` (codes from ``specs.py``), ``gammas``, ``coef0s``, ``degrees``,
``scales`` (multiplicative normalisation) and ``out_index`` (position in the first
axis of the output). ``block_ptr[b]:block_ptr[b + 1]`` are the kernels of block b;
``block_cols[b]`` is its column for single-column blocks (else -1) and
``block_multi[b]`` its index in the precomputed arrays (else -1).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .specs import KIND_LINEAR as _LINEAR
from .specs import KIND_POLYNOMIAL as _POLYNOMIAL
from .specs import KIND_RBF as _RBF

# exp(x) = 2^k exp(r), k = round(x / ln 2), |r| <= ln 2 / 2 (Cody and Waite's reduction, ln 2
# in two parts); exp(r) by its Taylor series to r^13 (truncation below 1e-17). Only
# arithmetic: LLVM vectorises it, where numba's math.exp is a scalar call (5-7 ns a value)
_LOG2E = 1.4426950408889634
_LN2_HI = 0.693145751953125
_LN2_LO = 1.4286068203094173e-06
EXP_MIN = -708.0  # exp below it (under 3.3e-308, next to subnormal) is taken as 0


@njit(cache=True, inline="always")
def _exp_reduced(x):
    """``exp(x) / 2^k`` for ``EXP_MIN <= x <= 0``, ``k = floor(x log2(e) + 1/2)``."""
    k = math.floor(x * _LOG2E + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    return p * r + 1.0


@njit(cache=True, inline="always")
def _kernel_value(kind, gamma, coef0, degree, inner, sq_dist, l1_dist):
    if kind == _RBF:  # only on the diagonal: rows and stacks take RBF kernels from rbf_rows
        return math.exp(-gamma * sq_dist)
    if kind == _POLYNOMIAL:
        base = gamma * inner + coef0
        value = base
        for _ in range(degree - 1):
            value *= base
        return value
    if kind == _LINEAR:
        return inner
    return math.exp(-gamma * l1_dist)


@njit(cache=True, inline="always")
def _pair_terms(X, Z, i, j, col, mb, multi_inner, multi_sq_dist, multi_l1_dist, same_point):
    """(inner product, squared distance, L1 distance) of ``X[i]`` and ``Z[j]`` on a block:
    read from the points for a single column, else from the precomputed block arrays
    (distances exactly 0 for ``same_point``)."""
    if col >= 0:
        x_val = X[i, col]
        z_val = Z[j, col]
        diff = x_val - z_val
        return x_val * z_val, diff * diff, abs(diff)
    if same_point:
        return multi_inner[mb, i, j], 0.0, 0.0
    return multi_inner[mb, i, j], multi_sq_dist[mb, i, j], multi_l1_dist[mb, i, j]


@njit(cache=True)
def fill_kernel_stack(
    X,
    Z,
    symmetric,
    block_cols,
    block_multi,
    block_ptr,
    kinds,
    gammas,
    coef0s,
    degrees,
    scales,
    out_index,
    multi_inner,
    multi_sq_dist,
    multi_l1_dist,
    out,
):
    """Fill the kernel-major ``out[k, i, j]`` with every kernel between ``X[i]`` and ``Z[j]``,
    except the RBF kernels (left untouched: :func:`rbf_rows` computes them, vectorised).

    Blocks are the outer loop, so each kernel's output is written as a contiguous stream in
    ``j``. With ``symmetric=True`` (``X is Z``) only pairs ``j >= i`` are evaluated, the
    distances on the diagonal are taken as exactly 0, and the lower triangle is mirrored so
    that every kernel is exactly symmetric.
    """
    n_x = X.shape[0]
    n_z = Z.shape[0]
    n_blocks = block_cols.shape[0]
    for b in range(n_blocks):
        col = block_cols[b]
        mb = block_multi[b]
        kernels = np.empty(block_ptr[b + 1] - block_ptr[b], dtype=np.int64)
        n_eval = 0
        for k in range(block_ptr[b], block_ptr[b + 1]):
            if kinds[k] != _RBF:
                kernels[n_eval] = k
                n_eval += 1
        if n_eval == 0:
            continue
        for i in range(n_x):
            j_start = i if symmetric else 0
            for j in range(j_start, n_z):
                inner, sq_dist, l1_dist = _pair_terms(
                    X, Z, i, j, col, mb, multi_inner, multi_sq_dist, multi_l1_dist,
                    symmetric and i == j,
                )
                for t in range(n_eval):
                    k = kernels[t]
                    value = _kernel_value(
                        kinds[k], gammas[k], coef0s[k], degrees[k], inner, sq_dist, l1_dist
                    )
                    out[out_index[k], i, j] = scales[k] * value
        if symmetric:
            for t in range(n_eval):
                K = out[out_index[kernels[t]]]
                for i in range(n_x):
                    for j in range(i):
                        K[i, j] = K[j, i]


PARALLEL_CHUNK = 2048  # points per task of the parallel row loop


@njit(cache=True, parallel=True)
def fill_kernel_rows_parallel(
    X,
    Z,
    block_cols,
    block_multi,
    block_ptr,
    kinds,
    gammas,
    coef0s,
    degrees,
    scales,
    out_index,
    multi_inner,
    multi_sq_dist,
    multi_l1_dist,
    out,
):
    """:func:`fill_kernel_stack` for ``X`` against ``Z`` (not symmetric) on every thread:
    the ``(i, j)`` pairs are cut into tasks of one row of ``X`` and ``PARALLEL_CHUNK``
    points of ``Z``, each writing its own entries."""
    n_x = X.shape[0]
    n_z = Z.shape[0]
    n_blocks = block_cols.shape[0]
    n_chunks = (n_z + PARALLEL_CHUNK - 1) // PARALLEL_CHUNK
    for task in prange(n_x * n_chunks):
        i = task // n_chunks
        j_start = (task % n_chunks) * PARALLEL_CHUNK
        j_stop = min(j_start + PARALLEL_CHUNK, n_z)
        for b in range(n_blocks):
            col = block_cols[b]
            mb = block_multi[b]
            for k in range(block_ptr[b], block_ptr[b + 1]):
                if kinds[k] == _RBF:
                    continue
                target = out[out_index[k], i]
                for j in range(j_start, j_stop):
                    inner, sq_dist, l1_dist = _pair_terms(
                        X, Z, i, j, col, mb, multi_inner, multi_sq_dist, multi_l1_dist, False
                    )
                    value = _kernel_value(
                        kinds[k], gammas[k], coef0s[k], degrees[k], inner, sq_dist, l1_dist
                    )
                    target[j] = scales[k] * value


@njit(cache=True)
def kernel_diagonal(
    X,
    block_cols,
    block_multi,
    block_ptr,
    kinds,
    gammas,
    coef0s,
    degrees,
    out_index,
    multi_sq_norms,
    out,
):
    """Fill ``out[i, :]`` with every (unscaled) kernel between ``X[i]`` and itself.

    ``multi_sq_norms[mb, i]`` is the squared norm of ``X[i]`` on multi-column block
    ``mb``; distances are 0 on the diagonal.
    """
    n_x = X.shape[0]
    n_blocks = block_cols.shape[0]
    for i in range(n_x):
        for b in range(n_blocks):
            col = block_cols[b]
            if col >= 0:
                inner = X[i, col] * X[i, col]
            else:
                inner = multi_sq_norms[block_multi[b], i]
            for k in range(block_ptr[b], block_ptr[b + 1]):
                out[i, out_index[k]] = _kernel_value(
                    kinds[k], gammas[k], coef0s[k], degrees[k], inner, 0.0, 0.0
                )


@njit(cache=True)
def rbf_exponents(sq, block_of, neg_gammas, log_scales, out):
    """``out[t] = neg_gammas[t] * sq[block_of[t]] + log_scales[t]`` (float32, shape
    ``(len(block_of),) + sq.shape[1:]``): the exponents of scaled RBF values, for a vectorised
    single-precision exp."""
    n_rows, n = sq.shape[1], sq.shape[2]
    for t in range(block_of.shape[0]):
        g = np.float32(neg_gammas[t])
        c = np.float32(log_scales[t])
        block = sq[block_of[t]]
        for a in range(n_rows):
            for j in range(n):
                out[t, a, j] = g * block[a, j] + c


@njit(cache=True, inline="always")
def _rbf_row(task, sq, block_of, neg_gammas, factors, targets, out, out_bits):
    """Row ``a`` of RBF kernel ``t`` (``task = t * n_rows + a``): ``out[targets[t], a] =
    factors[t] * exp(neg_gammas[t] * sq[block_of[t], a])`` in three vectorisable loops (the
    reduced exp; 2^k added to the exponent bits, ``out_bits`` being ``out.view(int64)``; the
    factor, 0 below ``EXP_MIN``)."""
    t = task // sq.shape[1]
    a = task - t * sq.shape[1]
    s, g, f, n = sq[block_of[t], a], neg_gammas[t], factors[t], sq.shape[2]  # scalars first:
    row, row_bits = out[targets[t], a], out_bits[targets[t], a]  # out may alias the inputs
    for j in range(n):
        row[j] = _exp_reduced(max(g * s[j], EXP_MIN))
    for j in range(n):
        k = math.floor(max(g * s[j], EXP_MIN) * _LOG2E + 0.5)
        row_bits[j] += np.int64(k) << 52
    for j in range(n):
        row[j] = row[j] * f if g * s[j] >= EXP_MIN else 0.0


@njit(cache=True, nogil=True)
def rbf_rows(sq, block_of, neg_gammas, factors, targets, out, out_bits):
    """``out[targets[t], a] = factors[t] * exp(neg_gammas[t] * sq[block_of[t], a])`` for every
    RBF kernel t and row a (float64, to about one unit in the last place of the scalar
    ``exp``; ``out_bits`` is ``out.view(int64)``)."""
    for task in range(block_of.shape[0] * sq.shape[1]):
        _rbf_row(task, sq, block_of, neg_gammas, factors, targets, out, out_bits)


@njit(cache=True, nogil=True, parallel=True)
def rbf_rows_parallel(sq, block_of, neg_gammas, factors, targets, out, out_bits):
    """:func:`rbf_rows` with the (kernel, row) pairs split over numba's threads."""
    for task in prange(block_of.shape[0] * sq.shape[1]):
        _rbf_row(task, sq, block_of, neg_gammas, factors, targets, out, out_bits)


@njit(cache=True, inline="always")
def _csr_point(j, indptr, indices, data, queries, q_sq, z_sq, inner, sq, want_sq):
    """Point j (row j of the CSR points) against every query row: the inner products in the
    CSR row's order (as scipy's product) and, with ``want_sq``, the squared distances
    ``max((-2 x'z + ||x||^2) + ||z||^2, 0)`` (as the numpy passes of the row path)."""
    start, stop, zj = indptr[j], indptr[j + 1], z_sq[j]
    for a in range(queries.shape[0]):
        acc = 0.0
        for p in range(start, stop):
            acc += data[p] * queries[a, indices[p]]
        inner[a, j] = acc
        if want_sq:
            sq[a, j] = max(acc * -2.0 + q_sq[a] + zj, 0.0)


@njit(cache=True, nogil=True)
def csr_block_arrays(indptr, indices, data, queries, q_sq, z_sq, inner, sq, want_sq):
    """Inner products ``inner[a, j] = queries[a] . z_j`` of dense query rows with CSR points
    and (``want_sq``) their squared distances ``sq[a, j]``; shapes (rows, n)."""
    for j in range(indptr.shape[0] - 1):
        _csr_point(j, indptr, indices, data, queries, q_sq, z_sq, inner, sq, want_sq)


@njit(cache=True, nogil=True, parallel=True)
def csr_block_arrays_parallel(indptr, indices, data, queries, q_sq, z_sq, inner, sq, want_sq):
    """:func:`csr_block_arrays` with the points split over numba's threads."""
    for j in prange(indptr.shape[0] - 1):
        _csr_point(j, indptr, indices, data, queries, q_sq, z_sq, inner, sq, want_sq)
