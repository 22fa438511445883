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
- ``STEP_MKL``: SMO-MKL (Vishwanathan et al., NIPS 2010; ALGORITHMS.md section 2); the
  slots hold the rows of every base kernel, read through a
  :class:`~mklearn.kernels.base_store.BaseStore`; the per-kernel outputs
  ``F[k] = K_k v`` and quadratic terms ``g_k = v' K_k v`` move with the pair, the kernel
  weights are ``d = grad r*(g / 2)``, and the step maximises the MKL dual along the pair
  (:mod:`mklearn.svm.mkl_step`). ``G_t = y_t (d' F)[index_t] + p_t``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from mklearn.kernels import base_store
from mklearn.kernels.base_store import weighted_sum, weighted_sum_parallel
from mklearn.svm.mkl_step import (
    cubic_step_length,
    kernel_weights,
    newton_step_length,
    snap,
)

STATUS_NEED_ROW = 0  # a row is not cached: the caller loads it and calls again
STATUS_KKT = 1  # maximal KKT violation over every variable at most tol
STATUS_STEPS = 2  # the step budget is spent
STATUS_RECONSTRUCT = 3  # the caller rebuilds the gradient of every variable and calls again
_GO_ON = -1  # no status: the loop takes the step
_SHRINK_NOW = -2  # no status: the loop shrinks the active set, then takes the step

STEP_SVM = 0  # pair step of a fixed kernel (LIBSVM's closed form)
STEP_MKL = 1  # pair step of SMO-MKL (mkl_step's line search along the pair)

# state[] slots, kept between calls
N_ACTIVE = 0  # variables active[:n_active] are in the working problem
COUNTER = 1  # steps until the next shrinking
UNSHRUNK = 2  # 1 once the gradient was rebuilt at a violation of 10 tol (LIBSVM's unshrink)
READY = 3  # 1 while flags (STEP_MKL: and d, diag K(d), d'F, G) agree with alpha, g, F
COMBINED_NEXT = 4  # STEP_MKL: the slot of row_buf the next row of K(d_diag) goes to
NEXT_I = 5  # the i chosen before returning for a row (-2: none), kept for the next call

# share of ||d||_1 (no unit) the weights may drift from those the search reads before diag K(d)
# is rebuilt and its rows forgotten: rarer rebuilds cost more steps (docs/smo_mkl.md)
DIAG_DRIFT = 0.05
SHRINK_EVERY = 1000  # steps between shrinkings: LIBSVM's min(l, 1000)
TAU = 1e-12  # curvature (units of K) used when a <= 0 (Fan, Chen and Lin 2005, eq. 19)
# the tightest KKT tolerance a solve is run to: below it rounding in the gradient G
# dominates the violation
KKT_TOL_FLOOR = 1e-9
# Indices read from ``active`` and ``index`` are cast to unsigned before use: numba then drops
# its negative-index wraparound on every access (docs/smo_mkl.md).


class QP(NamedTuple):
    """The dual's data: ``Q_ts = y_t y_s K[index_t, index_s]``, linear term and box."""

    y: np.ndarray  # (l,) float64, signs in {-1, +1}
    index: np.ndarray  # (l,) int64, row of K of each variable
    linear: np.ndarray  # (l,) float64, p
    upper: np.ndarray  # (l,) float64, upper bounds (lower bounds are 0)


class Iterate(NamedTuple):
    """Where the solve stands, kept between calls."""

    alpha: np.ndarray  # (l,) float64
    G: np.ndarray  # (l,) float64, gradient Q alpha + p (exact on the active variables)
    flags: np.ndarray  # (l,) uint8, 1 if in I_up plus 2 if in I_low
    active: np.ndarray  # (l,) int64, active[:state[N_ACTIVE]] the working problem
    state: np.ndarray  # (6,) int64, the slots N_ACTIVE ... NEXT_I


class Slots(NamedTuple):
    """The row cache (:class:`mklearn.kernels.cache.RowCache`): row of sample s in
    ``store[slot_of[s]]`` (-1: not cached), LRU clock."""

    store: np.ndarray  # (slots, 1, n), STEP_SVM: a row of K
    base: base_store.BaseStore  # STEP_MKL: the rows of every base kernel the slots hold
    slot_of: np.ndarray  # (n,) int64
    last_used: np.ndarray  # (slots,) int64
    clock: np.ndarray  # (1,) int64


class Search(NamedTuple):
    """The kernel the working-set search reads: ``K`` (STEP_SVM) or ``K(d_diag)`` (STEP_MKL),
    whose rows are combined on demand into ``row_buf`` and kept in turn."""

    qdiag: np.ndarray  # (n,) float64, its diagonal
    d_diag: np.ndarray  # (m,) float64, STEP_MKL: the weights it combines
    row_buf: np.ndarray  # (R, n), the store's type: rows of K(d_diag)
    row_slot_of: np.ndarray  # (n,) int64, row of row_buf of sample s (-1: none)
    row_owner: np.ndarray  # (R,) int64, sample of row r (-1: none)


class MKLStep(NamedTuple):
    """SMO-MKL's outputs and regulariser (:mod:`mklearn.svm.mkl_step`)."""

    F: np.ndarray  # (m, n) float64, per-kernel outputs K_k v, exact on every sample
    g: np.ndarray  # (m,) float64, quadratic terms v' K_k v
    d: np.ndarray  # (m,) float64, kernel weights grad r*(g / 2)
    fd: np.ndarray  # (n,) float64, d' F
    base_diag: np.ndarray  # (m, n) or (m, 1) float64, diagonals of the base kernels
    kind: int  # KIND_LP or KIND_KL
    lam: float
    q: float
    prior: np.ndarray  # (m,) or (1,) float64, the KL prior d0
    use_cubic: bool  # p = 2 by the closed-form cubic


class Settings(NamedTuple):
    """How far one call goes."""

    step_kind: int  # STEP_SVM or STEP_MKL
    tol: float  # on the maximal KKT violation, units of G
    max_steps: int
    shrinking: bool
    blocks: int  # STEP_MKL's per-sample passes on numba's threads in this many blocks (1: serial)


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
def _steer_by(mkl, slots, search, blocks):
    """Make ``mkl.d`` the weights the working-set search reads: ``diag K(d)``, the rows of
    ``K(d)`` the base store combines, and no row of ``K(d_diag)`` kept."""
    d = mkl.d
    _combine(d, mkl.base_diag, search.qdiag, blocks)
    d_diag = search.d_diag
    for k in range(d.size):  # a loop: a slice copy compiles numba's shape-mismatch error
        d_diag[k] = d[k]
    base_store.set_weights(slots.base, d)
    _forget_rows(search.row_slot_of, search.row_owner)


@njit(cache=True)
def _prepare(qp, it, slots, search, mkl, settings):
    """Bring ``flags`` (STEP_MKL: and d, d'F, the search's kernel and the active gradients)
    in line with alpha, g and F."""
    y, index, linear, upper = qp
    for t in range(y.size):
        it.flags[t] = _flag(it.alpha, y, upper, t)
    if settings.step_kind == STEP_MKL:
        kernel_weights(mkl.g, mkl.kind, mkl.lam, mkl.q, mkl.prior, mkl.d)
        _combine(mkl.d, mkl.F, mkl.fd, settings.blocks)
        _steer_by(mkl, slots, search, settings.blocks)
        it.state[COMBINED_NEXT] = 0
        fd, G, active = mkl.fd, it.G, it.active
        for a in range(it.state[N_ACTIVE]):
            t = active[a]
            G[t] = y[t] * fd[index[t]] + linear[t]
    it.state[READY] = 1
    it.state[NEXT_I] = -2


# The per-step helpers are inlined into smo_loop (inline="always"): a call passing arrays costs
# their reference counts and arguments at every step. _max_violating (run after a return for a
# row or a rebuild only) and the MKL step's helpers are called: inlined, they left the hot
# loops fewer registers (docs/smo_mkl.md).
@njit(cache=True)
def _max_violating(y, G, flags, active, n_active):
    """WSS2's ``i``: the active variable of I_up with the largest ``-y_t G_t`` (-1: none)."""
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
    return i, m_up


@njit(cache=True)
def _combined_search_row(slots, search, state, slot_i, si, blocks):
    """Row ``si`` of ``K(d_diag)``: kept, or combined into the next row of ``row_buf``
    (STEP_MKL)."""
    row_slot_of, row_owner = search.row_slot_of, search.row_owner
    r = row_slot_of[si]
    if r < 0:
        r = state[COMBINED_NEXT]
        state[COMBINED_NEXT] = (r + 1) % row_owner.size
        if row_owner[r] >= 0:
            row_slot_of[row_owner[r]] = -1
        base_store.combined_row(slots.base, slot_i, search.d_diag, search.row_buf[r], blocks)
        row_owner[r] = si
        row_slot_of[si] = r
    return search.row_buf[r]


@njit(cache=True, inline="always")
def _second_order_j(y, index, G, flags, active, qdiag, row_i, i, si, m_up, n_active):
    """WSS2's ``j`` (Fan, Chen and Lin 2005, Algorithm 2): the active variable of I_low
    with the largest gain ``b^2 / a`` over ``i`` (-1: none); also ``min -y_t G_t`` over
    I_low and ``-y_j G_j``. Returns ``(j, m_low, v_j)``."""
    m_low = np.inf
    best = 0.0
    j = np.int64(-1)  # typed as a value, not the literal -1: one compiled callee
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
                curv = TAU
            gain = gap * gap / curv
            if gain > best:
                best = gain
                j = t
                v_j = v
    return j, m_low, v_j


@njit(cache=True, inline="always")
def _stop_or_shrink(state, n_var, tol, shrinking, violation, j):
    """The status to return, ``_SHRINK_NOW`` or ``_GO_ON`` (take the step): solved, or the
    whole gradient wanted; every ``min(l, SHRINK_EVERY)`` steps, shrinking (LIBSVM, section
    5.1), after a reconstruction at the first violation of ``10 tol``."""
    n_active = state[N_ACTIVE]
    if violation <= tol or j < 0:
        if n_active < n_var:
            state[COUNTER] = 1  # shrink at the next step, as LIBSVM after a full check
            return STATUS_RECONSTRUCT
        return STATUS_KKT
    if shrinking:
        state[COUNTER] -= 1
        if state[COUNTER] <= 0:
            state[COUNTER] = min(n_var, SHRINK_EVERY)
            if state[UNSHRUNK] == 0 and violation <= 10.0 * tol:
                state[UNSHRUNK] = 1
                if n_active < n_var:
                    return STATUS_RECONSTRUCT
            return _SHRINK_NOW
    return _GO_ON


@njit(cache=True, inline="always")
def _pair_range(alpha, y, upper, i, j):
    """``(lo_i, hi_i, lo_j, hi_j)``: ``alpha_i += y_i t`` stays in its box for t in
    [lo_i, hi_i], ``alpha_j -= y_j t`` for t in [lo_j, hi_j]."""
    if y[i] > 0:
        lo_i, hi_i = -alpha[i], upper[i] - alpha[i]
    else:
        lo_i, hi_i = alpha[i] - upper[i], alpha[i]
    if y[j] > 0:
        lo_j, hi_j = alpha[j] - upper[j], alpha[j]
    else:
        lo_j, hi_j = -alpha[j], upper[j] - alpha[j]
    return lo_i, hi_i, lo_j, hi_j


@njit(cache=True)
def _mkl_step_length(qp, slots, mkl, i, j, si, sj, slot_i, slot_j, lower, upper_t, a_k, b_k):
    """SMO-MKL's step along the pair: ``a_k``, ``b_k = F[k, si] - F[k, sj]``, then the
    cubic (p = 2) or Newton's line search of :mod:`mklearn.svm.mkl_step` (whose bracket is
    narrowed first when the pair's range is wide: a large C)."""
    base_store.pair_terms(slots.base, slot_i, slot_j, si, sj, a_k)
    F = mkl.F
    for k in range(a_k.size):
        b_k[k] = F[k, si] - F[k, sj]
    y, linear = qp.y, qp.linear
    c1 = y[j] * linear[j] - y[i] * linear[i]
    if mkl.use_cubic:
        return cubic_step_length(lower, upper_t, mkl.g, a_k, b_k, mkl.lam, c1)
    return newton_step_length(lower, upper_t, mkl.g, a_k, b_k, mkl.kind, mkl.lam, mkl.q,
                              mkl.prior, c1)


@njit(cache=True, inline="always")
def _svm_step_length(qdiag, row_i, si, sj, gap, lower, upper_t):
    """LIBSVM's step for a fixed kernel: ``gap / a`` (``a = K_ii + K_jj - 2 K_ij``, ``TAU``
    when not positive) clipped to [lower, upper_t]."""
    curv = qdiag[si] + qdiag[sj] - 2.0 * row_i[sj]
    if curv <= 0.0:
        curv = TAU
    return min(max(gap / curv, lower), upper_t)


@njit(cache=True, inline="always")
def _move_pair(alpha, y, upper, flags, i, j, step, lo_i, hi_i, lo_j, hi_j):
    """``alpha_i += y_i step``, ``alpha_j -= y_j step``, snapped to a bound reached; flags
    updated."""
    alpha[i] += y[i] * step
    alpha[j] -= y[j] * step
    if step == hi_i or step == lo_i:
        snap(alpha, i, upper)
    if step == hi_j or step == lo_j:
        snap(alpha, j, upper)
    flags[i] = _flag(alpha, y, upper, i)
    flags[j] = _flag(alpha, y, upper, j)


@njit(cache=True, inline="always")
def _svm_gradient(y, index, G, flags, active, n_active, row_i, row_j, change_i, change_j):
    """``G += y (change_i K_i + change_j K_j)[index]`` on the active variables; returns the
    next ``i`` and its ``-y_i G_i`` found on the way."""
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
    return next_i, next_up


@njit(cache=True)
def _mkl_gradient(qp, it, slots, search, mkl, blocks, slot_i, slot_j, step, a_k, b_k):
    """Move g, d and F with the pair, steer the search anew once d drifted by
    ``DIAG_DRIFT``, and set ``G = y (d' F)[index] + p`` on the active variables; returns the
    next ``i`` and its ``-y_i G_i`` found on the way."""
    g, d, d_diag = mkl.g, mkl.d, search.d_diag
    for k in range(g.size):
        g[k] = max(g[k] + 2.0 * step * b_k[k] + step * step * a_k[k], 0.0)
    kernel_weights(g, mkl.kind, mkl.lam, mkl.q, mkl.prior, d)
    base_store.update_outputs(mkl.F, slots.base, slot_i, slot_j, step, d, mkl.fd, blocks)
    drift = 0.0
    norm = 0.0
    for k in range(g.size):
        drift += abs(d[k] - d_diag[k])
        norm += abs(d[k])
    if drift > DIAG_DRIFT * norm:
        _steer_by(mkl, slots, search, blocks)
    y, index, linear, _ = qp
    G, flags, active, fd = it.G, it.flags, it.active, mkl.fd
    next_i, next_up = -1, -np.inf
    for a in range(it.state[N_ACTIVE]):
        t = active[a]
        u = np.uint64(t)
        G[u] = y[u] * fd[np.uint64(index[u])] + linear[u]
        if flags[u] & 1:
            v = -y[u] * G[u]
            if v >= next_up:
                next_up = v
                next_i = t
    return next_i, next_up


@njit(cache=True)
def smo_loop(qp, it, slots, search, mkl, settings):
    """Run SMO steps in place until a row is missing, the problem is solved to
    ``settings.tol``, the gradient must be rebuilt, or ``settings.max_steps`` steps are taken.

    Parameters
    ----------
    qp : QP
    it : Iterate
        Kept between the calls of one solve; ``it.state[READY] = 0`` (the caller's signal
        that ``alpha``, ``g`` or ``F`` changed) has the work arrays rebuilt.
    slots : Slots
        The row cache: ``STEP_SVM`` reads rows of ``K`` from ``slots.store``, ``STEP_MKL``
        the base rows through ``slots.base`` (:mod:`mklearn.kernels.base_store`).
    search : Search
        ``STEP_SVM``: ``qdiag`` is ``diag K``, the rest unused. ``STEP_MKL``: the combined
        kernel ``K(d_diag)`` the working-set search reads.
    mkl : MKLStep
        ``STEP_MKL`` only. ``F`` stays exact on every sample (shrinking spares only the
        working-set search and the gradient updates: the caller rebuilds ``G`` from ``d' F``).
    settings : Settings

    Returns
    -------
    status, missing_sample, steps, violation : int, int, int, float
    """
    if it.state[READY] == 0:
        _prepare(qp, it, slots, search, mkl, settings)
    mkl_step = settings.step_kind == STEP_MKL
    y, index, _, upper = qp
    alpha, G, flags, active, state = it
    store, slot_of, last_used, clock, qdiag = slots.store, slots.slot_of, slots.last_used, \
        slots.clock, search.qdiag
    a_k = np.empty(mkl.F.shape[0])
    b_k = np.empty(mkl.F.shape[0])
    # combined rows are built only by the MKL step, in the base rows' precision (one type for
    # row_i; with single-precision base rows the combined row only steers the working set)
    row_i = search.row_buf[0]
    steps = 0
    violation = np.inf
    # i of the next step, found while the last step updated G (one pass less per step), or
    # before the last call returned for a row (G has not moved since)
    next_i, next_up = state[NEXT_I], -np.inf
    if next_i >= 0:
        next_up = -y[next_i] * G[next_i]
    state[NEXT_I] = -2
    while steps < settings.max_steps:
        n_active = state[N_ACTIVE]
        if next_i > -2:
            i, m_up = next_i, next_up
        else:
            i, m_up = _max_violating(y, G, flags, active, n_active)
        next_i = -2
        if i < 0:
            m_up = -np.inf
        si = index[i] if i >= 0 else -1
        slot_i = slot_of[si] if i >= 0 else -1
        if i >= 0:
            if slot_i < 0:
                state[NEXT_I] = i
                return STATUS_NEED_ROW, si, steps, violation
            clock[0] += 1
            last_used[slot_i] = clock[0]
            if mkl_step:
                row_i = _combined_search_row(slots, search, state, slot_i, si, settings.blocks)
            else:
                row_i = store[slot_i, 0]
        j, m_low, v_j = _second_order_j(y, index, G, flags, active, qdiag, row_i, i, si, m_up,
                                        n_active)
        violation = max(m_up - m_low, 0.0) if i >= 0 and m_low < np.inf else 0.0
        status = _stop_or_shrink(state, y.size, settings.tol, settings.shrinking, violation, j)
        if status == _SHRINK_NOW:
            _shrink(alpha, G, y, upper, active, state, m_up, m_low)
        elif status != _GO_ON:
            return status, -1, steps, violation
        sj = index[j]
        slot_j = slot_of[sj]
        if slot_j < 0:
            state[NEXT_I] = i
            return STATUS_NEED_ROW, sj, steps, violation
        clock[0] += 1
        last_used[slot_j] = clock[0]
        lo_i, hi_i, lo_j, hi_j = _pair_range(alpha, y, upper, i, j)
        lower, upper_t = max(lo_i, lo_j), min(hi_i, hi_j)  # the step t's range
        if mkl_step:
            step = _mkl_step_length(qp, slots, mkl, i, j, si, sj, slot_i, slot_j, lower,
                                    upper_t, a_k, b_k)
        else:
            step = _svm_step_length(qdiag, row_i, si, sj, m_up - v_j, lower, upper_t)
        old_i, old_j = alpha[i], alpha[j]
        _move_pair(alpha, y, upper, flags, i, j, step, lo_i, hi_i, lo_j, hi_j)
        steps += 1
        if mkl_step:
            next_i, next_up = _mkl_gradient(qp, it, slots, search, mkl, settings.blocks,
                                            slot_i, slot_j, step, a_k, b_k)
        else:
            next_i, next_up = _svm_gradient(y, index, G, flags, active, state[N_ACTIVE], row_i,
                                            store[slot_j, 0], y[i] * (alpha[i] - old_i),
                                            y[j] * (alpha[j] - old_j))
    return STATUS_STEPS, -1, steps, violation
