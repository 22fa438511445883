"""The one SMO loop: WSS2, shrinking, rows read from a cache, two kinds of pair step.

LIBSVM's generic dual (Chang and Lin, "LIBSVM", ACM TIST 2011, section 4.1)::

    min_a  1/2 a' Q a + p' a   s.t.  y' a = const,  0 <= a_t <= upper_t,
    Q_ts = y_t y_s K[index_t, index_s],  y_t in {-1, +1}.

C-SVC, epsilon-SVR and one-class SVM differ only in the index map, ``y``, ``p`` and
``upper``. The working set is chosen by WSS2 (Fan, Chen and Lin, JMLR 6, 2005, Algorithm 2):
``i`` maximally violating, ``j`` maximising the second-order gain ``b^2 / a``. Shrinking
follows LIBSVM (section 5.1): every ``min(l, 1000)`` steps variables at a bound whose
gradient says they stay there leave the active set; when the violation first falls to
``10 tol``, and again before stopping, the whole gradient is reconstructed (by the caller,
from ``K v``) and every variable is active again.

Rows come from a slot store ``store[slot_of[s]]`` (see :class:`mklearn.kernels.cache.RowCache`);
on a miss the loop returns ``STATUS_NEED_ROW`` with the sample, the caller computes the row
and calls again (the state lives in the arrays, so nothing is lost).

Two pair steps share the loop:

- ``STEP_SVM``: a fixed kernel; ``store[slot, 0]`` is a row of ``K``; the step is LIBSVM's
  closed form, and the gradient ``G`` is updated from the two rows.
- ``STEP_MKL``: SMO-MKL (Vishwanathan et al., NIPS 2010; ALGORITHMS.md section 2);
  ``store[slot]`` holds the row of every base kernel, the per-kernel outputs
  ``F[k] = K_k v`` and quadratic terms ``g_k = v' K_k v`` move with the pair, the kernel
  weights are ``d = grad r*(g / 2)``, and the step maximises the MKL dual along the pair
  (:mod:`mklearn.svm.mkl_step`). ``G_t = y_t (d' F)[index_t] + p_t``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mklearn.svm.mkl_step import (
    block_weighted_tables,
    cubic_step_length,
    kernel_weights,
    newton_step_length,
    snap,
    table_pair_terms,
    table_weighted_sum,
    table_weighted_sum_parallel,
    update_outputs,
    update_outputs_by_table,
    update_outputs_by_table_parallel,
    update_outputs_parallel,
    weighted_sum,
    weighted_sum_parallel,
)

STATUS_NEED_ROW = 0  # a row is not cached: the caller loads it and calls again
STATUS_KKT = 1  # maximal KKT violation over every variable at most tol
STATUS_STEPS = 2  # the step budget is spent
STATUS_RECONSTRUCT = 3  # the caller rebuilds the gradient of every variable and calls again

# Indices loaded from ``active`` and ``index`` are cast to unsigned before use: numba then
# drops its negative-index wraparound on every access (measured, cold C-SVC solves at tol
# 1e-4 on three unseen problems: 30-37% less time per step, the same steps and optimum).

STEP_SVM = 0
STEP_MKL = 1

# state[] slots, kept between calls
N_ACTIVE = 0  # variables active[:n_active] are in the working problem
COUNTER = 1  # steps until the next shrinking
UNSHRUNK = 2  # 1 once the gradient was rebuilt at a violation of 10 tol (LIBSVM's unshrink)
READY = 3  # 1 while flags (STEP_MKL: and d, diag K(d), d'F, G) agree with alpha, g, F
COMBINED_NEXT = 4  # STEP_MKL: the slot of row_buf the next row of K(d_diag) goes to
NEXT_I = 5  # the i chosen before returning for a row (-2: none), kept for the next call
# diag K(d) and the rows of K(d) steer WSS2 only; they are of the weights d_diag, rebuilt (a
# pass over m n values for the diagonal; the rows forgotten) once d has moved by this share
# of ||d||_1. SMO steps against a rebuild every step: a9a rows 11,819 / 11,790, abalone
# 8,175 / 9,579, four small sets within 3%; a rebuild every 16 steps took 11,790 -> 17,954 on
# a9a.
DIAG_DRIFT = 0.05
SHRINK_EVERY = 1000  # LIBSVM's min(l, 1000)

_TAU = 1e-12  # curvature used when a <= 0 (Fan, Chen and Lin 2005, eq. 19)


def new_state(n_var: int):
    """``(active, state)`` with every variable active."""
    active = np.arange(n_var, dtype=np.int64)
    state = np.array([n_var, min(n_var, SHRINK_EVERY), 0, 0, 0, -2], dtype=np.int64)
    return active, state


@njit(cache=True)
def _in_up(alpha, y, upper, t):
    return alpha[t] < upper[t] if y[t] > 0 else alpha[t] > 0.0


@njit(cache=True)
def _in_low(alpha, y, upper, t):
    return alpha[t] > 0.0 if y[t] > 0 else alpha[t] < upper[t]


@njit(cache=True)
def _flag(alpha, y, upper, t):
    """1 if t is in I_up, plus 2 if t is in I_low."""
    return np.uint8(_in_up(alpha, y, upper, t)) | (np.uint8(_in_low(alpha, y, upper, t)) << 1)


@njit(cache=True)
def _shrink(alpha, G, y, upper, active, state, m_up, m_low):
    """Drop variables at a bound that cannot enter a violating pair (LIBSVM's be_shrunk with
    ``Gmax1 = m_up``, ``Gmax2 = -m_low``)."""
    kept = 0
    for a in range(state[N_ACTIVE]):
        t = active[a]
        u = np.uint64(t)
        value = -y[u] * G[u]
        drop = False
        if alpha[u] >= upper[u]:
            drop = value > m_up if y[u] > 0 else value < m_low
        elif alpha[u] <= 0.0:
            drop = value < m_low if y[u] > 0 else value > m_up
        if not drop:
            active[kept] = t
            kept += 1
    state[N_ACTIVE] = kept


@njit(cache=True)
def _combine(d, A, out, blocks):
    """``out = sum_k d_k A[k]``, on numba's threads in ``blocks`` blocks when above 1; A of
    shape (m, 1) holds one value per kernel for every sample."""
    if A.shape[1] == 1:
        value = 0.0
        for k in range(d.size):
            value += d[k] * A[k, 0]
        out[:] = value
    elif blocks > 1:
        weighted_sum_parallel(d, A, out, blocks)
    else:
        weighted_sum(d, A, out)


@njit(cache=True)
def _forget_rows(row_slot_of, row_owner):
    """Drop every row of ``K(d_diag)`` kept (``d_diag`` moved)."""
    for r in range(row_owner.size):
        if row_owner[r] >= 0:
            row_slot_of[row_owner[r]] = -1
            row_owner[r] = -1


@njit(cache=True)
def _update(F, store, lookup, slot_i, slot_j, step, d, fd, blocks):
    """:func:`~mklearn.svm.mkl_step.update_outputs` (or its version by table), on numba's
    threads when ``blocks`` > 1."""
    distances, tables, kernel_block, _ = lookup
    if tables.shape[0] > 0:
        Di, Dj = distances[slot_i], distances[slot_j]
        if blocks > 1:
            update_outputs_by_table_parallel(F, Di, Dj, tables, kernel_block, step, d, fd,
                                             blocks)
        else:
            update_outputs_by_table(F, Di, Dj, tables, kernel_block, step, d, fd)
    elif blocks > 1:
        update_outputs_parallel(F, store, slot_i, slot_j, step, d, fd, blocks)
    else:
        update_outputs(F, store, slot_i, slot_j, step, d, fd)


@njit(cache=True)
def _combined_row(store, lookup, slot, d_diag, out, blocks):
    """Row ``out`` of ``K(d_diag)`` from the base rows in ``store[slot]`` or, by table, from
    the distance row ``distances[slot]``."""
    distances, tables, _, block_tables = lookup
    if tables.shape[0] == 0:
        _combine(d_diag, store[slot], out, blocks)
    elif blocks > 1:
        table_weighted_sum_parallel(distances[slot], block_tables, out, blocks)
    else:
        table_weighted_sum(distances[slot], block_tables, out)


@njit(cache=True)
def _pair_terms(store, lookup, slot_i, slot_j, si, sj, a_k):
    """``a_k = K_k[i, i] + K_k[j, j] - 2 K_k[i, j]`` for every base kernel."""
    distances, tables, kernel_block, _ = lookup
    if tables.shape[0] > 0:
        table_pair_terms(distances[slot_i], distances[slot_j], si, sj, tables, kernel_block,
                         a_k)
    else:
        for k in range(a_k.size):
            a_k[k] = store[slot_i, k, si] + store[slot_j, k, sj] - 2.0 * store[slot_i, k, sj]


@njit(cache=True)
def _steer_by(d, base_diag, qdiag, d_diag, lookup, row_slot_of, row_owner, blocks):
    """Make ``d`` the weights the working-set search reads: ``diag K(d)``, the block tables
    of ``K(d)`` (by table), and no row of ``K(d_diag)`` kept."""
    _combine(d, base_diag, qdiag, blocks)
    d_diag[:] = d
    _, tables, kernel_block, block_tables = lookup
    if tables.shape[0] > 0:
        block_weighted_tables(d, tables, kernel_block, block_tables)
    _forget_rows(row_slot_of, row_owner)


@njit(cache=True)
def smo_loop(alpha, G, y, index, linear, upper, flags, qdiag, fd, row_buf, row_slot_of,
             row_owner, d_diag, store, lookup, slot_of, last_used, clock, active, state,
             step_kind, F, g, d, base_diag, kind, lam, q, prior, use_cubic, tol, max_steps,
             shrinking, blocks):
    """Run SMO steps in place until a row is missing, the problem is solved to ``tol``, the
    gradient must be rebuilt, or ``max_steps`` steps are taken.

    Returns ``(status, missing_sample, steps, violation)``. The work arrays keep their
    contents between the calls of one solve; ``state[READY] = 0`` (the caller's signal that
    ``alpha``, ``g`` or ``F`` changed) has them rebuilt. ``flags`` (shape (l,), uint8) holds
    each variable's membership of I_up and I_low.

    With ``STEP_SVM``, ``fd``, ``row_buf``, ``row_slot_of``, ``row_owner``, ``d_diag``,
    ``F``, ``g``, ``d``, ``base_diag`` and ``prior`` are unused; ``qdiag`` is ``diag K``.
    With ``STEP_MKL``, ``qdiag`` and ``fd`` (shape (n,)) hold ``diag K(d_diag)`` and
    ``d' F``, ``d_diag`` (shape (m,)) the weights the working-set search reads the combined
    kernel with, ``row_buf`` (shape (R, n), the store's type) rows of ``K(d_diag)``:
    ``row_slot_of[s]`` (shape (n,)) is the row of sample s (-1: none) and ``row_owner[r]``
    (shape (R,)) the sample of row r (-1: none), filled in turn; the per-kernel outputs
    ``F`` stay exact on every sample (shrinking spares only the working-set search and the
    gradient updates: the caller rebuilds ``G`` from ``d' F``). ``blocks``: the MKL step's
    per-sample passes run on numba's threads in that many blocks of samples (1: serially).

    ``lookup`` is ``(distances, tables, kernel_block, block_tables)``. With ``STEP_MKL`` and
    tables (``tables`` of shape (m, size), not (0, size)), the slots hold distance rows
    ``distances[slot]`` (shape (blocks, n), unsigned integers) in place of ``store``'s base
    rows: ``K_k[i, s] = tables[k, distances[slot_of[i], kernel_block[k], s]]``, and
    ``block_tables`` (shape (blocks, size)) holds the tables of ``K(d_diag)`` per block
    (:mod:`mklearn.svm.mkl_step`).
    """
    n_var = alpha.size
    mkl = step_kind == STEP_MKL
    # combined rows are built only by the MKL step, in the store's precision (one type for
    # row_i; with single-precision base rows the combined row only steers the working set)
    row_i = row_buf[0]
    m = F.shape[0]
    a_k = np.empty(m)
    b_k = np.empty(m)
    if state[READY] == 0:
        for t in range(n_var):
            flags[t] = _flag(alpha, y, upper, t)
        if mkl:
            kernel_weights(g, kind, lam, q, prior, d)
            _combine(d, F, fd, blocks)
            _steer_by(d, base_diag, qdiag, d_diag, lookup, row_slot_of, row_owner, blocks)
            state[COMBINED_NEXT] = 0
            for a in range(state[N_ACTIVE]):
                t = active[a]
                G[t] = y[t] * fd[index[t]] + linear[t]
        state[READY] = 1
        state[NEXT_I] = -2
    steps = 0
    violation = np.inf
    # i of the next step, found while the last step updated G (one pass less per step), or
    # before the last call returned for a row (G has not moved since)
    next_i, next_up = state[NEXT_I], -np.inf
    if next_i >= 0:
        next_up = -y[next_i] * G[next_i]
    state[NEXT_I] = -2
    while steps < max_steps:
        n_active = state[N_ACTIVE]
        if next_i > -2:
            i, m_up = next_i, next_up
        else:
            m_up = -np.inf
            i = -1
            for a in range(n_active):
                t = active[a]
                u = np.uint64(t)
                if flags[u] & 1:
                    v = -y[u] * G[u]
                    if v >= m_up:
                        m_up = v
                        i = t
        next_i = -2
        if i < 0:
            m_up = -np.inf
        si = index[i] if i >= 0 else -1
        slot_i = slot_of[si] if i >= 0 else -1
        if i >= 0 and slot_i < 0:
            state[NEXT_I] = i
            return STATUS_NEED_ROW, si, steps, violation
        if i >= 0:
            clock[0] += 1
            last_used[slot_i] = clock[0]
            if mkl:
                r = row_slot_of[si]
                if r < 0:
                    r = state[COMBINED_NEXT]
                    state[COMBINED_NEXT] = (r + 1) % row_owner.size
                    if row_owner[r] >= 0:
                        row_slot_of[row_owner[r]] = -1
                    _combined_row(store, lookup, slot_i, d_diag, row_buf[r], blocks)
                    row_owner[r] = si
                    row_slot_of[si] = r
                row_i = row_buf[r]
            else:
                row_i = store[slot_i, 0]
        m_low = np.inf
        best = 0.0
        j = -1
        v_j = 0.0
        for a in range(n_active):
            t = active[a]
            u = np.uint64(t)
            if not flags[u] & 2:
                continue
            v = -y[u] * G[u]
            if v < m_low:
                m_low = v
            gap = m_up - v
            if i >= 0 and gap > 0.0:
                s = np.uint64(index[u])
                curv = qdiag[si] + qdiag[s] - 2.0 * row_i[s]
                if curv <= 0.0:
                    curv = _TAU
                gain = gap * gap / curv
                if gain > best:
                    best = gain
                    j = t
                    v_j = v
        violation = max(m_up - m_low, 0.0) if i >= 0 and m_low < np.inf else 0.0
        if violation <= tol or j < 0:
            if n_active < n_var:
                state[COUNTER] = 1  # shrink at the next step, as LIBSVM after a full check
                return STATUS_RECONSTRUCT, -1, steps, violation
            return STATUS_KKT, -1, steps, violation
        if shrinking:
            state[COUNTER] -= 1
            if state[COUNTER] <= 0:
                state[COUNTER] = min(n_var, SHRINK_EVERY)
                if state[UNSHRUNK] == 0 and violation <= 10.0 * tol:
                    state[UNSHRUNK] = 1
                    if n_active < n_var:
                        return STATUS_RECONSTRUCT, -1, steps, violation
                _shrink(alpha, G, y, upper, active, state, m_up, m_low)
        sj = index[j]
        slot_j = slot_of[sj]
        if slot_j < 0:
            state[NEXT_I] = i
            return STATUS_NEED_ROW, sj, steps, violation
        clock[0] += 1
        last_used[slot_j] = clock[0]
        if y[i] > 0:
            lo_i, hi_i = -alpha[i], upper[i] - alpha[i]
        else:
            lo_i, hi_i = alpha[i] - upper[i], alpha[i]
        if y[j] > 0:
            lo_j, hi_j = alpha[j] - upper[j], alpha[j]
        else:
            lo_j, hi_j = -alpha[j], upper[j] - alpha[j]
        # alpha_i += y_i t, alpha_j -= y_j t keeps y'alpha; t in [lower, upper_t]
        lower = max(lo_i, lo_j)
        upper_t = min(hi_i, hi_j)
        if mkl:
            _pair_terms(store, lookup, slot_i, slot_j, si, sj, a_k)
            for k in range(m):
                b_k[k] = F[k, si] - F[k, sj]
            c1 = y[j] * linear[j] - y[i] * linear[i]
            if use_cubic:
                step = cubic_step_length(lower, upper_t, g, a_k, b_k, lam, c1)
            else:
                step = newton_step_length(lower, upper_t, g, a_k, b_k, kind, lam, q, prior, c1)
        else:
            curv = qdiag[si] + qdiag[sj] - 2.0 * row_i[sj]
            if curv <= 0.0:
                curv = _TAU
            step = min(max((m_up - v_j) / curv, lower), upper_t)
        old_i, old_j = alpha[i], alpha[j]
        alpha[i] += y[i] * step
        alpha[j] -= y[j] * step
        if step == hi_i or step == lo_i:
            snap(alpha, i, upper)
        if step == hi_j or step == lo_j:
            snap(alpha, j, upper)
        flags[i] = _flag(alpha, y, upper, i)
        flags[j] = _flag(alpha, y, upper, j)
        steps += 1
        n_active = state[N_ACTIVE]
        if mkl:
            for k in range(m):
                g[k] = max(g[k] + 2.0 * step * b_k[k] + step * step * a_k[k], 0.0)
            kernel_weights(g, kind, lam, q, prior, d)
            _update(F, store, lookup, slot_i, slot_j, step, d, fd, blocks)
            drift = 0.0
            norm = 0.0
            for k in range(m):
                drift += abs(d[k] - d_diag[k])
                norm += abs(d[k])
            if drift > DIAG_DRIFT * norm:
                _steer_by(d, base_diag, qdiag, d_diag, lookup, row_slot_of, row_owner, blocks)
            next_i, next_up = -1, -np.inf
            for a in range(n_active):
                t = active[a]
                u = np.uint64(t)
                G[u] = y[u] * fd[np.uint64(index[u])] + linear[u]
                if flags[u] & 1:
                    v = -y[u] * G[u]
                    if v >= next_up:
                        next_up = v
                        next_i = t
        else:
            change_i = y[i] * (alpha[i] - old_i)
            change_j = y[j] * (alpha[j] - old_j)
            row_j = store[slot_j, 0]
            next_i, next_up = -1, -np.inf
            for a in range(n_active):
                t = active[a]
                u = np.uint64(t)
                s = np.uint64(index[u])
                G[u] += y[u] * (change_i * row_i[s] + change_j * row_j[s])
                if flags[u] & 1:
                    v = -y[u] * G[u]
                    if v >= next_up:
                        next_up = v
                        next_i = t
    return STATUS_STEPS, -1, steps, violation
