"""numba core of interleaved SILP: SMO steps on K(d) that keep per-kernel outputs up to date.

Sonnenburg, Raetsch, Schaefer and Schoelkopf, JMLR 2006, section 2.3.2 and Algorithm 2: the
decomposition stores ``F[k] = K_k v`` (their ``g_{k,i}``, shape (m, n)), ``v`` the signed
coefficients of LIBSVM's generic dual, so that a new weighting d needs no recomputation: the
SVM gradient is ``G_t = signs_t (d' F)[index_t] + p_t``. Each step is a plain WSS2-SMO step on
the QP with kernel ``K(d)`` (Fan, Chen and Lin, JMLR 2005) that keeps ``d' F`` current from two
rows of ``K(d)`` (kernels in use only); the per-kernel outputs are brought up to date once per
chunk from the samples it touched, as in the paper's Algorithm 2, reading rows of the
kernel-major ``(m, n, n)`` stack.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mklearn.solvers._smo_mkl_core import _snap

STATUS_KKT = 1  # maximal KKT violation below the tolerance
STATUS_STEPS = 2  # the chunk's step budget is spent
_TAU = 1e-12


@njit(cache=True)
def combined_outputs(d, F, out):
    """``out = d' F`` over the kernels with non-zero weight."""
    out[:] = 0.0
    for k in range(F.shape[0]):
        if d[k] != 0.0:
            for t in range(out.size):
                out[t] += d[k] * F[k, t]


@njit(cache=True, fastmath=True)
def _combined_row(d, km, row, out):
    out[:] = 0.0
    for k in range(km.shape[0]):
        w = d[k]
        if w != 0.0:
            for t in range(out.size):
                out[t] += w * km[k, row, t]


@njit(cache=True, fastmath=True)
def _add_rows(F, km, samples, dv):
    """``F[k] += sum_s dv[s] K_k[s]`` for every k, over the changed samples only."""
    for k in range(F.shape[0]):
        for s in samples:
            w = dv[s]
            if w != 0.0:
                for t in range(F.shape[1]):
                    F[k, t] += w * km[k, s, t]


@njit(cache=True)
def interleaved_chunk(alpha, signs, index, linear, upper, F, d, km, tol, max_steps):
    """Run at most ``max_steps`` SMO steps on ``K(d)`` in place (``alpha`` and ``F``).

    Within the chunk only the combined output ``d' F`` is kept current (from rows of K(d)
    over the kernels in use); at its end every per-kernel output is updated once from the
    change of ``v`` on the samples the chunk touched, the paper's
    ``g_{k,i} += sum_q (alpha_q - alpha_q^old) y_q k_k(x_q, x_i)``: ``O(m n)`` per touched
    sample instead of per step. Returns ``(status, steps, violation)``: ``STATUS_KKT`` when
    the maximal KKT violation ``m(alpha) - M(alpha)`` fell to ``tol``, else ``STATUS_STEPS``.
    """
    m, n = F.shape
    n_var = alpha.size
    fd = np.empty(n)
    combined_outputs(d, F, fd)
    diag = np.zeros(n)
    for k in range(m):
        if d[k] != 0.0:
            for t in range(n):
                diag[t] += d[k] * km[k, t, t]
    row_i = np.empty(n)
    row_j = np.empty(n)
    dv = np.zeros(n)
    touched = np.zeros(n, dtype=np.bool_)
    steps = 0
    violation = np.inf
    status = STATUS_STEPS
    while steps < max_steps:
        m_up = -np.inf
        i = -1
        for t in range(n_var):
            in_up = alpha[t] < upper[t] if signs[t] > 0 else alpha[t] > 0.0
            if in_up:
                v = -signs[t] * (signs[t] * fd[index[t]] + linear[t])
                if v >= m_up:
                    m_up = v
                    i = t
        if i < 0:
            status, violation = STATUS_KKT, 0.0
            break
        si = index[i]
        _combined_row(d, km, si, row_i)
        m_low = np.inf
        best = 0.0
        j = -1
        v_j = 0.0
        for t in range(n_var):
            in_low = alpha[t] > 0.0 if signs[t] > 0 else alpha[t] < upper[t]
            if not in_low:
                continue
            v = -signs[t] * (signs[t] * fd[index[t]] + linear[t])
            if v < m_low:
                m_low = v
            gap = m_up - v
            if gap > 0.0:
                curv = diag[si] + diag[index[t]] - 2.0 * row_i[index[t]]
                if curv <= 0.0:
                    curv = _TAU
                gain = gap * gap / curv
                if gain > best:
                    best = gain
                    j = t
                    v_j = v
        violation = m_up - m_low
        if violation <= tol or j < 0:
            status = STATUS_KKT
            break
        sj = index[j]
        curv = diag[si] + diag[sj] - 2.0 * row_i[sj]
        if curv <= 0.0:
            curv = _TAU
        step = (m_up - v_j) / curv
        room_i = upper[i] - alpha[i] if signs[i] > 0 else alpha[i]
        room_j = alpha[j] if signs[j] > 0 else upper[j] - alpha[j]
        hit = room_i <= step or room_j <= step
        if hit:
            step = min(room_i, room_j)
        old_i, old_j = alpha[i], alpha[j]
        alpha[i] += signs[i] * step
        alpha[j] -= signs[j] * step
        if hit:
            _snap(alpha, i, upper)
            _snap(alpha, j, upper)
        # v changes by signs * (actual change of alpha) at samples si and sj
        change_i = signs[i] * (alpha[i] - old_i)
        change_j = signs[j] * (alpha[j] - old_j)
        _combined_row(d, km, sj, row_j)
        for t in range(n):
            fd[t] += change_i * row_i[t] + change_j * row_j[t]
        dv[si] += change_i
        dv[sj] += change_j
        touched[si] = True
        touched[sj] = True
        steps += 1
    _add_rows(F, km, np.flatnonzero(touched), dv)
    return status, steps, violation
