"""numba kernels over a kernel-major stack of shape (m, n, n): combine and quadratic terms;
:func:`kernel_major`, that layout of an ``(n, n, m)`` stack; the ``*_last_axis`` loops, the
same reads of a C-contiguous ``(n, n, m)`` stack as it is; :class:`StackReads`, the values
read.

Memory-bound: serial unless ``n_jobs`` grants threads (:func:`mklearn.kernels.threads.
use_threads`) and a pass reads enough values to pay for them; then the ``*_parallel``
variants split the output rows (combine) or the kernels (quadratic terms) over the threads,
each value computed in the same order as serially (the same results, bit for bit).
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange

from mklearn.kernels.threads import use_threads

# K(d) on threads from this many points (measured on 2 cores, quiet: n = 300 and 1,000 were
# 0.7x and 0.9-1.0x as fast on 2 threads, n = 1,500 and 2,000 1.2-1.6x)
PARALLEL_COMBINE_MIN_SAMPLES = 1500


class StackReads:
    """Values of a kernel stack read so far, counted by the operator that reads it.

    Parameters
    ----------
    stack_values : int
        Values of the stack, ``m n^2``: one pass.
    values : int
        Values read before counting starts (the check's sum of the kernels: one pass).
    """

    def __init__(self, stack_values: int, values: int = 0) -> None:
        self.stack_values = stack_values
        self.values = values

    def add(self, values: int) -> None:
        """Count ``values`` more values read."""
        self.values += int(values)

    @property
    def passes(self) -> float:
        """Values read over ``m n^2``: passes over the stack."""
        return self.values / max(self.stack_values, 1)


def kernel_major(stack: np.ndarray) -> np.ndarray:
    """The ``(m, n_a, n_b)`` C-contiguous kernel-major form of an ``(n_a, n_b, m)`` stack.

    No copy when ``stack`` already is the transposed view of a kernel-major array (what
    :class:`~mklearn.kernels.KernelBank` returns, or ``np.moveaxis(K, 0, -1)`` of a user's
    ``(m, n, n)`` array). Otherwise one blocked copy: each sample's ``(n_b, m)`` slab is
    transposed in cache, so the stack is read once in order (measured, n = 1,000, m = 100,
    800 MB: numpy's strided ``ascontiguousarray`` 3.2 s, blocked 0.5 s).
    """
    km = stack.transpose(2, 0, 1)
    if km.flags.c_contiguous:
        return km
    out = np.empty(km.shape, dtype=stack.dtype)
    for i in range(stack.shape[0]):
        out[:, i, :] = stack[i].T
    return out


def weighted_sum(stack_km, weights):
    """``K(d) = sum_k weights[k] * stack_km[k]``, float64 of shape (n, n), reading only the
    kernels of non-zero weight: :func:`combine`, or :func:`combine_parallel` where threads
    pay."""
    # numba, even over every kernel: BLAS's d @ (m, n*n) took 1.0-1.4x as long on one
    # thread (m = 100-2,000, n = 500-2,000); on two, 0.93-1.02x the serial loop (n < 1,500)
    # and 1.7x the threaded one (n = 1,500)
    active = np.flatnonzero(weights)
    n = stack_km.shape[1]
    if n >= PARALLEL_COMBINE_MIN_SAMPLES and use_threads(active.size * n * n):
        return combine_parallel(stack_km, weights, active)
    return combine(stack_km, weights, active)


@njit(cache=True, fastmath=True)
def combine(stack_km, weights, active):
    """``sum_{k in active} weights[k] * stack_km[k]`` as float64 (n, n), reading active kernels.

    Four kernels per sweep of the output (measured, n = 166, 31 kernels: 0.11 ms, one kernel
    per sweep 0.16 ms), kernels in the outer loop: at n = 1,000 a rows-outer order took 1.55x
    as long on one thread. :func:`combine_parallel` gives each thread a block of rows in the
    same order; each entry is summed in the same order either way.
    """
    n = stack_km.shape[1]
    out = np.zeros((n, n))
    t = 0
    while t + 4 <= active.shape[0]:
        k0, k1, k2, k3 = active[t], active[t + 1], active[t + 2], active[t + 3]
        w0, w1, w2, w3 = weights[k0], weights[k1], weights[k2], weights[k3]
        for i in range(n):
            a, b, c, e = stack_km[k0, i], stack_km[k1, i], stack_km[k2, i], stack_km[k3, i]
            target = out[i]
            for j in range(n):
                target[j] += w0 * a[j] + w1 * b[j] + w2 * c[j] + w3 * e[j]
        t += 4
    for k in active[t:]:
        w = weights[k]
        for i in range(n):
            row = stack_km[k, i]
            target = out[i]
            for j in range(n):
                target[j] += w * row[j]
    return out


@njit(cache=True, fastmath={"reassoc"})  # NaN and inf still propagate: the checks see them
def weighted_sum_last_axis(stack, weights):
    """``sum_k weights[k] * stack[:, :, k]`` of a C-contiguous ``(n_a, n_b, m)`` stack,
    float64 of shape (n_a, n_b): one pass in the stack's own order, no kernel-major copy
    (measured, n = 1,000, m = 100, the plain sum: 0.11 s, numpy's ``stack.mean(axis=2)``
    0.2 s, the copy alone 0.5 s). Each entry's kernels are summed in a few vectorised partial
    sums (rounding differs from :func:`combine`'s by a few units in the last place); its
    ``m`` values are one run, read whole (a sparse ``weights`` saves no reading: the
    kernel-major layout does)."""
    out = np.empty((stack.shape[0], stack.shape[1]))
    for i in range(stack.shape[0]):
        for j in range(stack.shape[1]):
            x = stack[i, j]
            total = 0.0
            for k in range(x.shape[0]):
                total += weights[k] * np.float64(x[k])
            out[i, j] = total
    return out


@njit(cache=True, fastmath=True)
def rows_times_last_axis(stack, kernels, rows, v):
    """:func:`rows_times` of a C-contiguous ``(n, n, m)`` stack read as it is:
    ``K_k[rows] @ v`` for each k in ``kernels``, shape (len(kernels), len(rows)), reading of
    each row only the entries where ``v`` is not zero (``m`` values each)."""
    m = stack.shape[2]
    support = np.flatnonzero(v)
    out = np.empty((kernels.shape[0], rows.shape[0]))
    acc = np.empty(m)
    for a in range(rows.shape[0]):
        row = stack[rows[a]]
        acc[:] = 0.0
        for b in range(support.shape[0]):
            j = support[b]
            x = row[j]
            vj = v[j]
            for k in range(m):
                acc[k] += vj * x[k]
        for t in range(kernels.shape[0]):
            out[t, a] = acc[kernels[t]]
    return out


@njit(cache=True, fastmath=True)
def quadratic_terms_last_axis(stack, v, support, kernels):
    """:func:`quadratic_terms` of a C-contiguous ``(n, n, m)`` stack read as it is:
    ``g_t = v' K_k v`` for ``k = kernels[t]`` from the support's block only (``support``
    sorted, the non-zeros of v), each entry's ``m`` values one run, below the diagonal."""
    g = np.zeros(kernels.shape[0])
    acc = np.empty(kernels.shape[0])
    for a in range(support.shape[0]):
        i = support[a]
        row = stack[i]
        acc[:] = 0.0
        for b in range(a):
            j = support[b]
            x = row[j]
            vj = v[j]
            for t in range(kernels.shape[0]):
                acc[t] += x[kernels[t]] * vj
        x = row[i]
        vi = v[i]
        for t in range(kernels.shape[0]):
            g[t] += vi * (2.0 * acc[t] + x[kernels[t]] * vi)
    return g


@njit(cache=True)
def rows_last_axis(stack, indices, kernels):
    """``out[t, a, :] = stack[indices[a], :, kernels[t]]`` of a C-contiguous ``(n, n, m)``
    stack, float64 of shape (len(kernels), len(indices), n): rows read in the stack's own
    order (each row's ``n m`` values in one run), no kernel-major copy."""
    n = stack.shape[1]
    out = np.empty((kernels.shape[0], indices.shape[0], n))
    for a in range(indices.shape[0]):
        block = stack[indices[a]]
        for j in range(n):
            x = block[j]
            for t in range(kernels.shape[0]):
                out[t, a, j] = x[kernels[t]]
    return out


def combine_parallel(stack_km, weights, active):
    """:func:`combine` with the output rows split into one block per thread (each entry
    summed as serially: four kernels at a time, in the same order)."""
    n = stack_km.shape[1]
    out = np.empty((n, n))
    combine_rows_parallel(stack_km, weights, active, np.arange(n), out)
    return out


@njit(cache=True, fastmath=True)
def quadratic_terms(stack_km, v, support, kernels):
    """``g_k = v' K_k v`` for each k in ``kernels``, reading only the rows in ``support``
    (the non-zeros of v), each up to its diagonal: ``K_k`` is symmetric (the stack's check
    and the learned kernel's check make sure of it), so the lower triangle gives the terms
    from half the values (a8a, 2,000 points, 100 kernels, a support of 1,070: 0.065 s ->
    0.035 s)."""
    g = np.empty(kernels.shape[0])
    for t in range(kernels.shape[0]):
        k = kernels[t]
        total = 0.0
        for a in range(support.shape[0]):
            i = support[a]
            acc = 0.0
            for j in range(i):
                acc += stack_km[k, i, j] * v[j]
            total += v[i] * (2.0 * acc + stack_km[k, i, i] * v[i])
        g[t] = total
    return g


@njit(cache=True, fastmath=True)
def rows_times(stack_km, kernels, rows, v):
    """``K_k[rows] @ v`` for each k in ``kernels``: float64 of shape (len(kernels), len(rows))."""
    n = stack_km.shape[1]
    out = np.empty((kernels.shape[0], rows.shape[0]))
    for t in range(kernels.shape[0]):
        k = kernels[t]
        for a in range(rows.shape[0]):
            i = rows[a]
            acc = 0.0
            for j in range(n):
                acc += stack_km[k, i, j] * v[j]
            out[t, a] = acc
    return out


@njit(cache=True, fastmath=True, inline="always")
def _support_term(stack_km, v, support, k, out):
    """``out = K_k v = sum_{s in support} v_s K_k[s]`` (by symmetry); returns ``v' K_k v``."""
    n = stack_km.shape[1]
    for j in range(n):
        out[j] = 0.0
    for a in range(support.shape[0]):
        s = support[a]
        w = v[s]
        row = stack_km[k, s]
        for j in range(n):
            out[j] += w * row[j]
    total = 0.0
    for a in range(support.shape[0]):
        total += v[support[a]] * out[support[a]]
    return total


@njit(cache=True, fastmath=True)
def quadratic_terms_support(stack_km, v, support, kernels, products):
    """``g_k = v' K_k v`` for each k in ``kernels``, keeping ``products[t] = K_k v`` (every
    entry: ``K_k`` is symmetric), reading only the rows of ``support`` (the non-zeros of v),
    each added into ``products[t]``, which stays in cache. Measured against a pass of dot
    products over every row (n = 166-2,000, supports of 30-90% of the points): 0.44-0.95x
    its time, and even with every point in the support."""
    g = np.empty(kernels.shape[0])
    for t in range(kernels.shape[0]):
        g[t] = _support_term(stack_km, v, support, kernels[t], products[t])
    return g


@njit(cache=True, fastmath=True, parallel=True)
def quadratic_terms_support_parallel(stack_km, v, support, kernels, products):
    """:func:`quadratic_terms_support` with the kernels split over numba's threads."""
    g = np.empty(kernels.shape[0])
    for t in prange(kernels.shape[0]):
        g[t] = _support_term(stack_km, v, support, kernels[t], products[t])
    return g


@njit(cache=True, fastmath=True)
def _combine_rows_range(stack_km, weights, active, rows, lo, hi, out):
    """``out[i] = sum_{k in active} weights[k] * stack_km[k, i]`` for ``i in rows[lo:hi]``:
    four kernels per sweep over those rows (each entry summed as in :func:`combine`), so that
    each kernel's rows are read in order."""
    n = stack_km.shape[1]
    for a in range(lo, hi):
        out[rows[a]] = 0.0
    t = 0
    while t + 4 <= active.shape[0]:
        k0, k1, k2, k3 = active[t], active[t + 1], active[t + 2], active[t + 3]
        w0, w1, w2, w3 = weights[k0], weights[k1], weights[k2], weights[k3]
        for a in range(lo, hi):
            i = rows[a]
            p, q, r, s = stack_km[k0, i], stack_km[k1, i], stack_km[k2, i], stack_km[k3, i]
            target = out[i]
            for j in range(n):
                target[j] += w0 * p[j] + w1 * q[j] + w2 * r[j] + w3 * s[j]
        t += 4
    for k in active[t:]:
        w = weights[k]
        for a in range(lo, hi):
            i = rows[a]
            row = stack_km[k, i]
            target = out[i]
            for j in range(n):
                target[j] += w * row[j]


@njit(cache=True, fastmath=True)
def combine_rows(stack_km, weights, active, rows, out):
    """Rows ``rows`` of K(d) into ``out`` (shape (n, n)): the rows an SVM solve reads."""
    _combine_rows_range(stack_km, weights, active, rows, 0, rows.shape[0], out)


@njit(cache=True, fastmath=True, parallel=True)
def _combine_rows_blocks(stack_km, weights, active, rows, out, blocks):
    for b in prange(blocks):
        lo = rows.shape[0] * b // blocks
        hi = rows.shape[0] * (b + 1) // blocks
        _combine_rows_range(stack_km, weights, active, rows, lo, hi, out)


def combine_rows_parallel(stack_km, weights, active, rows, out):
    """:func:`combine_rows` with the rows split into one block per thread (numba's thread
    count read here: read inside a compiled function it would keep it from being cached)."""
    blocks = min(get_num_threads(), rows.shape[0])
    if blocks > 0:
        _combine_rows_blocks(stack_km, weights, active, rows, out, blocks)


@njit(cache=True, fastmath=True)
def rows_product(rows, slots, weights):
    """``sum_a weights[a] rows[slots[a]]`` for ``rows`` of shape (r, n) (float64 or float32),
    shape (n,) float64: a product over some rows (cached rows, or the support's rows of a
    symmetric matrix), reading only them, with no copy."""
    n = rows.shape[1]
    out = np.zeros(n)
    for a in range(slots.shape[0]):
        w = weights[a]
        row = rows[slots[a]]
        for j in range(n):
            out[j] += w * row[j]
    return out


@njit(cache=True)
def fill_blocks(stack_km, kernels, slots, index, w_old, w, blocks):
    """``blocks[slots[t], a, b] = stack_km[kernels[t], index[a], index[b]]`` for ``a, b < w``
    where ``a >= w_old`` or ``b >= w_old`` (the entries already there are kept): the
    ``W x W`` blocks of :class:`~mklearn.formulation.support_blocks.SupportBlocks`, grown by
    the points ``index[w_old:w]``, each read as part of a row."""
    for t in range(kernels.shape[0]):
        k, block = kernels[t], blocks[slots[t]]
        for a in range(w):
            row = stack_km[k, index[a]]
            target = block[a]
            for b in range(w_old if a < w_old else 0, w):
                target[b] = row[index[b]]


@njit(cache=True, fastmath=True, inline="always")
def _block_term(block, v, w):
    total = 0.0
    for a in range(w):
        if v[a] != 0.0:
            row = block[a]
            acc = 0.0
            for b in range(w):
                acc += row[b] * v[b]
            total += v[a] * acc
    return total


@njit(cache=True, fastmath=True)
def block_quadratic_terms(blocks, slots, v, w):
    """``g_t = v' B v`` over the leading ``w x w`` of the block ``blocks[slots[t]]``
    (``v`` of shape (w,), on the block's points)."""
    g = np.empty(slots.shape[0])
    for t in range(slots.shape[0]):
        g[t] = _block_term(blocks[slots[t]], v, w)
    return g


@njit(cache=True, fastmath=True, parallel=True)
def block_quadratic_terms_parallel(blocks, slots, v, w):
    """:func:`block_quadratic_terms` with the kernels split over numba's threads."""
    g = np.empty(slots.shape[0])
    for t in prange(slots.shape[0]):
        g[t] = _block_term(blocks[slots[t]], v, w)
    return g
