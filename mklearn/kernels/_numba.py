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
from numba import njit, prange, types
from numba.extending import intrinsic

from .specs import KIND_LAPLACIAN as _LAPLACIAN
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
    if kind == _LAPLACIAN:
        return math.exp(-gamma * l1_dist)
    return math.nan  # KIND_PYTHON: the bank fills these from spec.evaluate


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


@njit(cache=True, inline="always")
def _rbf_values(s, g, f, row, row_bits):
    """``row[j] = f * exp(g * s[j])`` in three vectorisable loops (the reduced exp; 2^k added
    to the exponent bits, ``row_bits`` being ``row.view(int64)``; the factor, 0 below
    ``EXP_MIN``)."""
    n = s.shape[0]
    for j in range(n):
        row[j] = _exp_reduced(max(g * s[j], EXP_MIN))
    for j in range(n):
        k = math.floor(max(g * s[j], EXP_MIN) * _LOG2E + 0.5)
        row_bits[j] += np.int64(k) << 52
    for j in range(n):
        row[j] = row[j] * f if g * s[j] >= EXP_MIN else 0.0


@njit(cache=True, inline="always")
def _rbf_row(task, sq, block_of, neg_gammas, factors, targets, out, out_bits):
    """Row ``a`` of RBF kernel ``t`` (``task = t * n_rows + a``): ``out[targets[t], a] =
    factors[t] * exp(neg_gammas[t] * sq[block_of[t], a])``."""
    t = task // sq.shape[1]
    a = task - t * sq.shape[1]
    s, g, f = sq[block_of[t], a], neg_gammas[t], factors[t]  # scalars first:
    _rbf_values(s, g, f, out[targets[t], a], out_bits[targets[t], a])  # out may alias inputs


@njit(cache=True, nogil=True, fastmath={"contract"})
def rbf_rows(sq, block_of, neg_gammas, factors, targets, out, out_bits):
    """``out[targets[t], a] = factors[t] * exp(neg_gammas[t] * sq[block_of[t], a])`` for every
    RBF kernel t and row a (float64, to about one unit in the last place of the scalar
    ``exp``; ``out_bits`` is ``out.view(int64)``)."""
    for task in range(block_of.shape[0] * sq.shape[1]):
        _rbf_row(task, sq, block_of, neg_gammas, factors, targets, out, out_bits)


@njit(cache=True, nogil=True, fastmath={"contract"}, parallel=True)
def rbf_rows_parallel(sq, block_of, neg_gammas, factors, targets, out, out_bits):
    """:func:`rbf_rows` with the (kernel, row) pairs split over numba's threads."""
    for task in prange(block_of.shape[0] * sq.shape[1]):
        _rbf_row(task, sq, block_of, neg_gammas, factors, targets, out, out_bits)


@njit(cache=True, inline="always")
def _gap_values(columns, gaps, neg_gammas):
    """``exp(neg_gammas[t] gaps[columns[t]])`` for the kernels on a two-valued column (its
    squared gap ``gaps[c] >= 0``), by :func:`_rbf_values` (the same values as the rows'),
    -1 for the others."""
    far = np.full(columns.shape[0], -1.0)
    s, value = np.empty(1), np.empty(1)
    bits = value.view(np.int64)
    for t in range(columns.shape[0]):
        if gaps[columns[t]] >= 0.0:
            s[0] = gaps[columns[t]]
            _rbf_values(s, neg_gammas[t], 1.0, value, bits)
            far[t] = value[0]
    return far


@njit(cache=True, inline="always")
def _two_valued_rows(codes, code_of, indices, columns, far, factors, targets, out, t):
    """Kernel t's rows on a two-valued column: ``factors[t]`` where the points' codes agree,
    ``factors[t] * far[t]`` where they differ (a loop LLVM vectorises)."""
    code = codes[code_of[columns[t]]]
    near, gap = factors[t], factors[t] * far[t]
    for a in range(indices.shape[0]):
        own, row = code[indices[a]], out[targets[t], a]
        for j in range(row.shape[0]):
            row[j] = near if code[j] == own else gap


@njit(cache=True, inline="always")
def _few_valued_rows(Q, codes, code_of, levels, columns, neg_gammas, factors, targets, out, t):
    """Kernel t's rows on a column of few values (``levels[code_of[c]]``, the point's code its
    index there): per row, the kernel's value at each level by :func:`_rbf_values` (one
    ``exp`` a level, the same values as a point's), then read by the points' codes."""
    c = columns[t]
    code, values = codes[code_of[c]], levels[code_of[c]]
    s, table = np.empty(values.shape[0]), np.empty(values.shape[0])
    bits = table.view(np.int64)
    for a in range(Q.shape[0]):
        q = Q[a, c]
        for v in range(values.shape[0]):
            d = q - values[v]
            s[v] = d * d
        _rbf_values(s, neg_gammas[t], factors[t], table, bits)
        row = out[targets[t], a]
        for j in range(row.shape[0]):
            row[j] = table[code[j]]


@njit(cache=True, inline="always")
def _column_rows(Q, PT, row_of, columns, neg_gammas, factors, targets, out, out_bits, t):
    """Kernel t's rows between each point of Q and the points whose column ``c =
    columns[t]`` is ``PT[row_of[c]]`` (column-major: read in order): ``factors[t] *
    exp(neg_gammas[t] (Q[a, c] - PT[row_of[c]])^2)``."""
    c = columns[t]
    column = PT[row_of[c]]
    s = np.empty(column.shape[0])
    for a in range(Q.shape[0]):
        q = Q[a, c]
        for j in range(column.shape[0]):
            d = q - column[j]
            s[j] = d * d
        _rbf_values(s, neg_gammas[t], factors[t], out[targets[t], a], out_bits[targets[t], a])


@njit(cache=True, nogil=True)
def single_column_sq_distances(Q, PT, targets, out):
    """``out[targets[t], a, j] = (Q[a, t] - PT[t, j])^2``: squared distances on one feature
    each (Q the rows' values, PT the points' transposed columns), written in place (numpy's
    broadcast difference and square allocated two arrays of that size)."""
    for t in range(targets.shape[0]):
        for a in range(Q.shape[0]):
            q, row = Q[a, t], out[targets[t], a]
            for j in range(row.shape[0]):
                d = q - PT[t, j]
                row[j] = d * d


@njit(cache=True, nogil=True, fastmath={"contract"})
def single_column_rbf_rows(Q, XT, row_of, codes, code_of, gaps, levels, indices, columns,
                           neg_gammas, factors, targets, out, out_bits):
    """``out[targets[t], a] = factors[t] * exp(neg_gammas[t] * (Q[a, c] - X[:, c])^2)`` with
    ``c = columns[t]`` and ``Q = X[indices]`` (a copy: X itself may be read-only, which
    numba would compile for apart): rows of RBF kernels on one feature each, from the
    points.

    On a column of two values (``gaps[c] >= 0``, the squared gap between them; -1 for the
    others) a value is ``factors[t]`` where the two points agree and ``factors[t] *
    exp(neg_gammas[t] gaps[c])`` where they differ, read from the column's codes
    (``codes[code_of[c]]``, uint8, 1 at the larger value): no ``exp`` a value. On a column
    of a few more values (``gaps[c] = -1``, ``code_of[c] >= 0``) the codes index its values
    ``levels[code_of[c]]`` (padded with its last one): one ``exp`` a value and row. The other
    columns are read from ``XT[row_of[c]]``, the points' column c in order. The values equal
    :func:`rbf_rows`' on the same squared distances; ``out_bits`` is ``out.view(int64)``.
    """
    far = _gap_values(columns, gaps, neg_gammas)
    for t in range(columns.shape[0]):
        _single_column_row(Q, XT, row_of, codes, code_of, far, levels, indices, columns,
                           neg_gammas, factors, targets, out, out_bits, t)


@njit(cache=True, nogil=True, fastmath={"contract"}, parallel=True)
def single_column_rbf_rows_parallel(Q, XT, row_of, codes, code_of, gaps, levels, indices,
                                    columns, neg_gammas, factors, targets, out, out_bits):
    """:func:`single_column_rbf_rows` with the kernels split over numba's threads."""
    far = _gap_values(columns, gaps, neg_gammas)
    for t in prange(columns.shape[0]):
        _single_column_row(Q, XT, row_of, codes, code_of, far, levels, indices, columns,
                           neg_gammas, factors, targets, out, out_bits, t)


@njit(cache=True, inline="always")
def _single_column_row(Q, XT, row_of, codes, code_of, far, levels, indices, columns,
                       neg_gammas, factors, targets, out, out_bits, t):
    """Kernel t's rows of :func:`single_column_rbf_rows`: by codes on a two-valued column
    (``far[t] >= 0``) or on one of few values, else from the transposed column."""
    if far[t] >= 0.0:
        _two_valued_rows(codes, code_of, indices, columns, far, factors, targets, out, t)
    elif code_of[columns[t]] >= 0:
        _few_valued_rows(Q, codes, code_of, levels, columns, neg_gammas, factors, targets, out,
                         t)
    else:
        _column_rows(Q, XT, row_of, columns, neg_gammas, factors, targets, out, out_bits, t)


@njit(cache=True, nogil=True, fastmath={"contract"})
def single_column_rbf_cross(Q, PT, columns, neg_gammas, factors, targets, out, out_bits):
    """``out[targets[t], a, j] = factors[t] * exp(neg_gammas[t] * (Q[a, c] - PT[c, j])^2)``
    with ``c = columns[t]``: RBF kernels on one feature each between the points Q and the
    points whose transpose is PT (shape (n_features, n_points)), every kernel in one call;
    the values of :func:`rbf_rows` on the same squared distances (``out_bits``:
    ``out.view(int64)``)."""
    row_of = np.arange(PT.shape[0])
    for t in range(columns.shape[0]):
        _column_rows(Q, PT, row_of, columns, neg_gammas, factors, targets, out, out_bits, t)


@njit(cache=True, nogil=True, fastmath={"contract"}, parallel=True)
def single_column_rbf_cross_parallel(Q, PT, columns, neg_gammas, factors, targets, out,
                                     out_bits):
    """:func:`single_column_rbf_cross` with the kernels split over numba's threads."""
    row_of = np.arange(PT.shape[0])
    for t in prange(columns.shape[0]):
        _column_rows(Q, PT, row_of, columns, neg_gammas, factors, targets, out, out_bits, t)


# Single precision: the same reduction in float32 arithmetic (ln 2 in Cephes' two float32
# parts, the first exact times k), Taylor to r^7 (truncation under 6e-9, below float32's unit
# roundoff 6e-8): eight values a vector instruction, where numba's exp is a scalar call.
_F32 = np.float32
_LOG2E_F32 = _F32(_LOG2E)
_LN2_HI_F32 = _F32(0.693359375)
_LN2_LO_F32 = _F32(-2.12194440e-4)
_HALF_F32 = _F32(0.5)
_ONE_F32 = _F32(1.0)
_ZERO_F32 = _F32(0.0)
_C2, _C3, _C4, _C5, _C6, _C7 = (_F32(1.0 / math.factorial(i)) for i in range(2, 8))
# exp below it (under 4.5e-38, next to float32's subnormals) is taken as 0; above it 2^k
# stays a normal number (k >= -124), so adding k to the exponent bits is exact
EXP_MIN_F32 = _F32(-86.0)


@njit(cache=True, inline="always")
def _exp_reduced_f32(x):
    """``exp(x) / 2^k`` in float32 for ``EXP_MIN_F32 <= x <= 0``, ``k = floor(x log2(e) +
    1/2)``."""
    k = np.floor(x * _LOG2E_F32 + _HALF_F32)
    r = (x - k * _LN2_HI_F32) - k * _LN2_LO_F32
    p = _C7
    p = p * r + _C6
    p = p * r + _C5
    p = p * r + _C4
    p = p * r + _C3
    p = p * r + _C2
    p = p * r + _ONE_F32
    return p * r + _ONE_F32


@njit(cache=True, inline="always")
def _rbf_row_f32(task, sq, block_of, neg_gammas, factors, targets, out, out_bits):
    """:func:`_rbf_row` in float32 (``sq``, ``out`` float32; ``out_bits`` is
    ``out.view(int32)``)."""
    t = task // sq.shape[1]
    a = task - t * sq.shape[1]
    s, g, f = sq[block_of[t], a], _F32(neg_gammas[t]), _F32(factors[t])
    row, bits = out[targets[t], a], out_bits[targets[t], a]
    for j in range(s.shape[0]):
        row[j] = _exp_reduced_f32(max(g * s[j], EXP_MIN_F32))
    for j in range(s.shape[0]):
        k = np.floor(max(g * s[j], EXP_MIN_F32) * _LOG2E_F32 + _HALF_F32)
        bits[j] += np.int32(k) << 23
    for j in range(s.shape[0]):
        row[j] = row[j] * f if g * s[j] > EXP_MIN_F32 else _ZERO_F32


@njit(cache=True, nogil=True, fastmath={"contract"})
def rbf_rows_f32(sq, block_of, neg_gammas, factors, targets, out, out_bits):
    """:func:`rbf_rows` in single precision: ``sq`` and ``out`` float32, ``out_bits`` is
    ``out.view(int32)``; values within ``1e-7 (2 + |x|)`` relative of the exact ones, ``x``
    the exponent (most of it float32's rounding of ``neg_gammas[t] * sq``, as float32
    distances carry anyway); 0 where ``x < EXP_MIN_F32``."""
    for task in range(block_of.shape[0] * sq.shape[1]):
        _rbf_row_f32(task, sq, block_of, neg_gammas, factors, targets, out, out_bits)


@njit(cache=True, nogil=True, fastmath={"contract"}, parallel=True)
def rbf_rows_f32_parallel(sq, block_of, neg_gammas, factors, targets, out, out_bits):
    """:func:`rbf_rows_f32` with the (kernel, row) pairs split over numba's threads."""
    for task in prange(block_of.shape[0] * sq.shape[1]):
        _rbf_row_f32(task, sq, block_of, neg_gammas, factors, targets, out, out_bits)


@njit(cache=True, fastmath={"reassoc"})
def _dot(x, y):
    """``x @ y`` for 1-D float64 arrays, summed in vector lanes (reassociated: LLVM
    vectorises the sum; the same bits for the same inputs on one machine)."""
    acc = 0.0
    for j in range(x.shape[0]):
        acc += x[j] * y[j]
    return acc


@njit(cache=True, inline="always")
def _rbf_dots(first, stop, sq, block_of, neg_gammas, factors, V, out):
    """``out[t, a] = factors[t] * (exp(neg_gammas[t] * sq[block_of[t], a]) @ V[a])`` for the
    tasks ``t * n_rows + a`` in ``[first, stop)``, each row evaluated into one work row."""
    row = np.empty(sq.shape[2])
    row_bits = row.view(np.int64)
    for task in range(first, stop):
        t = task // sq.shape[1]
        a = task - t * sq.shape[1]
        _rbf_values(sq[block_of[t], a], neg_gammas[t], 1.0, row, row_bits)
        out[t, a] = factors[t] * _dot(row, V[min(np.int64(a), V.shape[0] - 1)])


@njit(cache=True, nogil=True, fastmath={"contract"})
def rbf_row_dots(sq, block_of, neg_gammas, factors, V, out):
    """``out[t, a] = factors[t] * sum_j exp(neg_gammas[t] * sq[block_of[t], a, j]) V[a, j]``:
    each RBF row against its own vector, the row never stored (shapes: sq (blocks, rows, n),
    V (rows, n) or (1, n): one vector for every row, out (kernels, rows))."""
    _rbf_dots(0, block_of.shape[0] * sq.shape[1], sq, block_of, neg_gammas, factors, V, out)


@njit(cache=True, nogil=True, fastmath={"contract"}, parallel=True)
def rbf_row_dots_parallel(sq, block_of, neg_gammas, factors, V, out, parts):
    """:func:`rbf_row_dots` with the (kernel, row) pairs split into ``parts`` ranges over
    numba's threads (the caller's count: ``get_num_threads`` here would stop the caching)."""
    n_tasks = block_of.shape[0] * sq.shape[1]
    parts = max(1, min(n_tasks, parts))
    for part in prange(parts):
        _rbf_dots(part * n_tasks // parts, (part + 1) * n_tasks // parts, sq, block_of,
                  neg_gammas, factors, V, out)


COMBINE_CHUNK = 2048  # columns of one task of rbf_combined_rows (its work row stays in cache)


@njit(cache=True, inline="always")
def _rbf_combine(first, stop, sq, block_of, neg_gammas, factors, out):
    """Tasks ``a * n_chunks + c`` in ``[first, stop)``: columns ``c`` (chunks of
    ``COMBINE_CHUNK``) of ``out[a] = sum_t factors[t] exp(neg_gammas[t] sq[block_of[t], a])``,
    each kernel evaluated into one work row and added in kernel order."""
    n = sq.shape[2]
    n_chunks = (n + COMBINE_CHUNK - 1) // COMBINE_CHUNK
    work = np.empty(COMBINE_CHUNK)
    work_bits = work.view(np.int64)
    for task in range(first, stop):
        a = task // n_chunks
        c0 = (task - a * n_chunks) * COMBINE_CHUNK
        c1 = min(n, c0 + COMBINE_CHUNK)
        target = out[a, c0:c1]
        row, row_bits = work[:c1 - c0], work_bits[:c1 - c0]
        target[:] = 0.0
        for t in range(block_of.shape[0]):
            _rbf_values(sq[block_of[t], a, c0:c1], neg_gammas[t], factors[t], row, row_bits)
            for j in range(c1 - c0):
                target[j] += row[j]


@njit(cache=True, nogil=True, fastmath={"contract"})
def rbf_combined_rows(sq, block_of, neg_gammas, factors, out):
    """``out[a, j] = sum_t factors[t] exp(neg_gammas[t] sq[block_of[t], a, j])``: rows of a
    weighted sum of RBF kernels, the kernels' own rows never stored (shapes: sq (blocks, rows,
    n), out (rows, n))."""
    n_chunks = (sq.shape[2] + COMBINE_CHUNK - 1) // COMBINE_CHUNK
    _rbf_combine(0, sq.shape[1] * n_chunks, sq, block_of, neg_gammas, factors, out)


@njit(cache=True, nogil=True, fastmath={"contract"}, parallel=True)
def rbf_combined_rows_parallel(sq, block_of, neg_gammas, factors, out, parts):
    """:func:`rbf_combined_rows` with the (row, column chunk) tasks split into ``parts``
    ranges over numba's threads (as :func:`rbf_row_dots_parallel`)."""
    n_tasks = sq.shape[1] * ((sq.shape[2] + COMBINE_CHUNK - 1) // COMBINE_CHUNK)
    parts = max(1, min(n_tasks, parts))
    for part in prange(parts):
        _rbf_combine(part * n_tasks // parts, (part + 1) * n_tasks // parts, sq, block_of,
                     neg_gammas, factors, out)


@njit(cache=True, inline="always")
def _csc_query(a, colptr, rowidx, vals, queries, q_sq, z_sq, inner, sq, want_sq):
    """Query row a against every point: ``inner[a, j] = queries[a] . z_j`` summed over the
    features both have, ascending (the order of a sparse product over the point's),
    each feature's column of points scattered; with ``want_sq``, the squared distances
    ``max((-2 x'z + ||x||^2) + ||z||^2, 0)`` (as the numpy passes of the row path)."""
    acc = inner[a]
    acc[:] = 0.0
    for f in range(queries.shape[1]):
        q = queries[a, f]
        if q != 0.0:
            for p in range(colptr[f], colptr[f + 1]):
                acc[rowidx[p]] += vals[p] * q
    if want_sq:
        _distances_from_products(acc, q_sq[a], z_sq, sq[a])


@njit(cache=True, inline="always")
def _distances_from_products(products, q_sq, z_sq, out):
    """``out[j] = max((-2 products[j] + q_sq) + z_sq[j], 0)`` (``out`` may be ``products``):
    squared distances from inner products and squared norms, clipped at 0 against rounding."""
    for j in range(products.shape[0]):
        out[j] = max(products[j] * -2.0 + q_sq + z_sq[j], 0.0)


@njit(cache=True, nogil=True)
def squared_distances_from_products(inner, q_sq, z_sq, sq):
    """``sq[a, j] = max((-2 inner[a, j] + q_sq[a]) + z_sq[j], 0)`` in one pass (``sq`` may be
    ``inner``): the numbers of numpy's multiply, two additions and maximum, which read and
    wrote a block four times."""
    for a in range(inner.shape[0]):
        _distances_from_products(inner[a], q_sq[a], z_sq, sq[a])


@intrinsic
def _popcount(typingctx, word):
    """The number of set bits of a uint64 (the processor's population count)."""
    if word != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


@njit(cache=True, inline="always")
def _bits_query(a, bits, rows, q_sq, z_sq, inner, sq, want_sq):
    """Query row ``rows[a]`` of a 0/1 block against every point: ``inner[a, j]``, the
    features both have (set bits of ``bits[rows[a]] & bits[j]``, exact), and
    (``want_sq``) the squared distances ``max((-2 x'z + ||x||^2) + ||z||^2, 0)``."""
    acc, query = inner[a], bits[rows[a]]
    for j in range(bits.shape[0]):
        count = np.uint64(0)
        for w in range(bits.shape[1]):
            count += _popcount(query[w] & bits[j, w])
        acc[j] = np.float64(count)
    if want_sq:
        _distances_from_products(acc, q_sq[a], z_sq, sq[a])


@njit(cache=True, nogil=True)
def bit_block_arrays(bits, rows, q_sq, z_sq, inner, sq, want_sq):
    """Inner products and (``want_sq``) squared distances of the points ``rows`` of a block
    whose values are all 0 or 1, given as packed bits (``bits``: (n, words) uint64, feature f
    in bit f % 64 of word f // 64), against every point (inner, sq: (len(rows), n)). The
    counts are integers, so the numbers are those of a product in floating point; a word
    holds 64 features where the product reads one."""
    for a in range(rows.shape[0]):
        _bits_query(a, bits, rows, q_sq, z_sq, inner, sq, want_sq)


@njit(cache=True, nogil=True, parallel=True)
def bit_block_arrays_parallel(bits, rows, q_sq, z_sq, inner, sq, want_sq):
    """:func:`bit_block_arrays` with the query rows split over numba's threads."""
    for a in prange(rows.shape[0]):
        _bits_query(a, bits, rows, q_sq, z_sq, inner, sq, want_sq)


@njit(cache=True, nogil=True)
def csc_block_arrays(colptr, rowidx, vals, queries, q_sq, z_sq, inner, sq, want_sq):
    """Inner products ``inner[a, j] = queries[a] . z_j`` of dense query rows with points given
    by their CSC arrays and (``want_sq``) their squared distances ``sq[a, j]``; shapes (rows,
    n). Each query row scatters the columns of its non-zero features: work ``sum_f
    nnz(column f)`` over those features, where a pass over the points reads every one's
    non-zeros."""
    for a in range(queries.shape[0]):
        _csc_query(a, colptr, rowidx, vals, queries, q_sq, z_sq, inner, sq, want_sq)


@njit(cache=True, nogil=True, parallel=True)
def csc_block_arrays_parallel(colptr, rowidx, vals, queries, q_sq, z_sq, inner, sq, want_sq):
    """:func:`csc_block_arrays` with the query rows split over numba's threads."""
    for a in prange(queries.shape[0]):
        _csc_query(a, colptr, rowidx, vals, queries, q_sq, z_sq, inner, sq, want_sq)
