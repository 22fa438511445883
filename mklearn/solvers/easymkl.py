"""EasyMKL: kernel weights from the margin between the class hulls of the sum kernel.

Aiolli and Donini, "EasyMKL: a scalable multiple kernel learning algorithm", Neurocomputing
169, 2015, section 3. With ``K = sum_k K_k`` (the base kernels as given), ``Y = diag(y)`` and
``v = Y gamma``, gamma solves

    min_gamma  F(gamma) = (1 - lam) v' K v + lam ||gamma||^2
    s.t.  gamma >= 0,  sum_{y_i = +1} gamma_i = 1,  sum_{y_i = -1} gamma_i = 1,

a distance between a point of each class's convex hull, regularised towards the class means
(``lam = 1``: gamma uniform on each class, the closed form used here). The weights are
``d_k = v' K_k v / sum_l v' K_l v`` (paper eq. 10), computed from the rows of the support of
gamma in blocks. The final model is an SVM with the estimator's costs on ``K(d)`` (the
project's SMO core, :func:`mklearn.svm.smo.svc_dual`), or, for parity with MKLpy, KOMD
(Aiolli, Da San Martino and Sperduti, ICANN 2008) on ``K(d)``: the
same QP with ridge ``lam_komd n_+ n_- / n`` and the weight ``1 - lam_komd`` on ``v'K(d)v``,
decision ``f(x) = sum_i gamma_i y_i K(d)(x_i, x) - b`` with ``b = gamma' K(d) Y gamma / 2``
(the midpoint between the two hull points).

The QP has two equality constraints (one simplex per class), so a two-variable step must
keep both: the pair is taken within one class, as in the nu-SVM solver of LIBSVM (Chang and
Lin, "Training nu-support vector classifiers", Neural Computation 13, 2001): the class with
the larger KKT violation gives ``i`` (its largest gradient among ``gamma_i > 0``), and ``j``
maximises the second-order gain over that class (Fan, Chen and Lin, JMLR 6, 2005, WSS2).
The project's SMO core (:mod:`mklearn.svm.core`) pairs variables across classes under one
constraint ``y'a = 0`` and reads ``Q = Y K Y`` without a ridge term, so this module has its
own short numba loop (with the core's ``TAU`` and ``SHRINK_EVERY``); it reads rows of ``K``
from the same row sources (:mod:`mklearn.kernels.row_sources`: the dense sum of a stack, or
:class:`~mklearn.kernels.row_sources.CombinedRows` of kernels computed from X in an LRU
cache) with the core's protocol (a missing row is returned, loaded by the caller, and the
loop called again).

Stopping: the Frank-Wolfe duality gap ``grad F' gamma - sum_c min_{i in c} grad F_i``, an
upper bound on ``F(gamma) - F*``, relative to ``F(gamma)``, at most ``qp_tol``. It is checked
on a gradient rebuilt from the rows of the support once the KKT violation falls below
``qp_tol F / 4`` (which bounds the gap by ``qp_tol F``) and at least every ``10 n`` steps.
Between checks the steps shrink as LIBSVM's (Chang and Lin, ACM TIST 2011, section 5.1):
points at zero whose gradient is above their class's support leave the passes, and every
point is back at the check.

On an ill-conditioned K (many kernels summed, a small ridge) SMO converges slowly once the
support is found (a8a, 2,000 points, 100 kernels: 40,000 steps from a relative gap of 0.5 to
1e-3). So after a first short chunk of steps (``FIRST_CHUNK n``) the QP is solved by
active-set rounds from the support SMO found, while its rows are cached (a primal-dual
active-set method: Hintermueller, Ito and Kunisch, SIAM J. Optim. 13, 2003): each round
solves the QP restricted to its support with ``gamma >= 0`` dropped (two equality
constraints, one Cholesky factorisation of the support's block; or, when the support
changed by few points since the last factorisation, that factor, with the points left out
held at zero and those added by their Schur complement), then drops the points it
put below zero and adds those outside whose gradient is below their class's level by more
than ``qp_tol F / 4``. A round that ends on the simplices with nothing to add is the
minimiser over them; the rounds keep their best point on the simplices when it lowers F,
and the gap check certifies it like any other. The rounds stop at ``ACTIVE_SET_ROUNDS`` or
when the next one would take the rounds past what the next chunk of SMO steps would cost
(the first round's cost modelled as ``|S|^3 / 3`` flops, the others' scaled from the last
factorising one's time); SMO then goes on from the best point.

When the ridge dominates (``b >= a max_i K_ii``, as in KOMD, whose ridge grows with n) the
minimiser usually keeps every point; with all rows in memory, conjugate gradients on the
simplices' affine hull are tried first and kept if they end on the simplices (KOMD at
n = 3,000: 7 products with K in 0.05 s, where SMO took 8,600 steps in 0.24 s).
"""

from __future__ import annotations

import time
from numbers import Real

import numpy as np
from numba import njit
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from sklearn.utils._param_validation import Interval, StrOptions

from mklearn.kernels.base import prepare
from mklearn.solvers._renamed import former_operator_name
from mklearn.solvers.result import HistoryRecord, MKLResult, relative_gap
from mklearn.svm.core import SHRINK_EVERY, TAU
from mklearn.svm.smo import svc_dual

_NEED_ROW = 0
_KKT = 1
_STEPS = 2
CHECK_EVERY = 10  # a gap check (w rebuilt, every point active again) every 10 n steps at most
# the polish's pace in its cost model, |S|^3 / 3 flops (measured on one core, the whole polish:
# 1.9e10 at |S| = 1,700, 1.3e10 at 600; the Cholesky alone 2.7-4e10)
POLISH_FLOPS_PER_SECOND = 2e10
POLISH_MAX_SUPPORT = 4000  # the support's block K_SS (and its factor) 128 MB each at most
# active-set rounds of a polish at most (measured on a8a-2000, 100 kernels: 6-10 rounds from
# a support SMO found in 2 n steps, 20 ms each, where SMO took 40,000 more steps in 0.2 s)
ACTIVE_SET_ROUNDS = 12
# a round solves from the last factor only when that costs under a third of a new one (a8a-2000:
# the supports of the rounds changed by 140, 90, 36, 2 and 1 points; reused at the second
# change, the old factor served the next rounds at 110 changes each)
REUSE_GAIN = 3.0
# SMO steps of the first chunk, per point (at least 1,000): the support it finds starts the
# active-set rounds (measured on six stacks of 500-2,000 points: 1 n steps 0.005-0.10 s for
# the whole QP, 2 n 0.009-0.12 s, 3 n 0.010-0.12 s)
FIRST_CHUNK = 1
# conjugate-gradient steps of the interior solve at most (measured on KOMD, n = 1,000-3,000:
# 7-9 to a relative gap of 1e-6-1e-8, where SMO took 1,200-12,000 steps)
INTERIOR_MAX_ITER = 30
_UNIT = Interval(Real, 0, 1, closed="both")
_POSITIVE = Interval(Real, 0, None, closed="neither")

OPTIONS = {
    "lam": [_UNIT],
    "learner": [StrOptions({"svm", "komd"})],
    "qp_tol": [_POSITIVE],
    "komd_lam": [_UNIT],
    "komd_tol": [_POSITIVE],
}


@njit(cache=True, nogil=True)
def _extremes(active, n_active, y, a, b, gamma, w, row_i, row_j, change):
    """On ``active[:n_active]``: ``w += change (row_j - row_i)``, then per class the largest
    gradient ``G = a y w + b gamma`` among ``gamma > 0`` with its index, and the smallest:
    ``(up+, up-, low+, low-, top+, top-)``."""
    up_p, up_n, low_p, low_n, top_p, top_n = -np.inf, -np.inf, np.inf, np.inf, -1, -1
    for s in range(n_active):
        t = active[s]
        if change != 0.0:
            w[t] += change * (row_j[t] - row_i[t])
        G = a * y[t] * w[t] + b * gamma[t]
        if y[t] > 0:
            if G > up_p and gamma[t] > 0.0:
                up_p, top_p = G, t
            low_p = min(low_p, G)
        else:
            if G > up_n and gamma[t] > 0.0:
                up_n, top_n = G, t
            low_n = min(low_n, G)
    return up_p, up_n, low_p, low_n, top_p, top_n


@njit(cache=True, nogil=True)
def _shrink(active, n_active, y, a, b, gamma, w, up_p, up_n):
    """Drop from ``active[:n_active]`` the points at zero whose gradient is above every
    gradient of their class's support (LIBSVM's shrinking, Chang and Lin 2011, section 5.1):
    they can be neither i (gamma_i > 0) nor j (``G_j < G_i``) while that holds. Returns the
    new count."""
    kept = 0
    for s in range(n_active):
        t = active[s]
        G = a * y[t] * w[t] + b * gamma[t]
        if not (gamma[t] == 0.0 and G > (up_p if y[t] > 0 else up_n)):
            active[kept] = t
            kept += 1
    return kept


@njit(cache=True, nogil=True)
def _use_row(slot_of, last_used, clock, k):
    """The cache slot of row ``k``, marked as just used; -1 if the row is not loaded."""
    slot = slot_of[k]
    if slot >= 0:
        clock[0] += 1
        last_used[slot] = clock[0]
    return slot


@njit(cache=True, nogil=True)
def _pair_steps(store, slot_of, last_used, clock, diag, y, a, b, gamma, w, tol, max_steps,
                active, state):
    """SMO steps on ``F = a v'Kv + b ||gamma||^2`` (``v = y gamma``, ``w = K v`` kept) over
    one simplex per class, in place, until a row is missing, the largest per-class KKT
    violation of ``G = a y w + b gamma`` over ``active[:state[0]]`` is at most ``tol``, or
    ``max_steps`` steps. Two passes over the active points per step: the choice of j, and
    the update of w fused with the next i's; every ``SHRINK_EVERY`` steps (``state[1]``
    counts down) the active points shrink (:func:`_shrink`; w of the others goes stale
    until the caller rebuilds it).

    Returns ``(status, missing_sample, steps, violation)``.
    """
    steps = 0
    violation = np.inf
    n_active = state[0]
    up_p, up_n, low_p, low_n, top_p, top_n = _extremes(active, n_active, y, a, b, gamma, w, w,
                                                       w, 0.0)
    while steps < max_steps:
        if up_p - low_p >= up_n - low_n:
            violation, i, G_i = up_p - low_p, top_p, up_p
        else:
            violation, i, G_i = up_n - low_n, top_n, up_n
        if violation <= tol:
            return _KKT, -1, steps, violation
        state[1] -= 1
        if state[1] <= 0:
            state[1] = SHRINK_EVERY
            n_active = _shrink(active, n_active, y, a, b, gamma, w, up_p, up_n)
            state[0] = n_active
        slot_i = _use_row(slot_of, last_used, clock, i)
        if slot_i < 0:
            return _NEED_ROW, i, steps, violation
        row_i = store[slot_i, 0]
        sign = y[i]
        best = 0.0
        j = -1
        curv_j = 1.0
        for s in range(n_active):
            t = active[s]
            if y[t] != sign:
                continue
            diff = G_i - (a * sign * w[t] + b * gamma[t])
            if diff > 0.0:
                curv = a * (diag[i] + diag[t] - 2.0 * row_i[t]) + 2.0 * b
                if curv <= 0.0:
                    curv = TAU
                gain = diff * diff / curv
                if gain > best:
                    best, j, curv_j = gain, t, curv
        if j < 0:
            return _KKT, -1, steps, violation
        slot_j = _use_row(slot_of, last_used, clock, j)
        if slot_j < 0:
            return _NEED_ROW, j, steps, violation
        row_j = store[slot_j, 0]
        step = (G_i - (a * sign * w[j] + b * gamma[j])) / curv_j
        if step >= gamma[i]:
            step = gamma[i]
            gamma[i] = 0.0
        else:
            gamma[i] -= step
        gamma[j] += step
        # v_j += sign step, v_i -= sign step
        up_p, up_n, low_p, low_n, top_p, top_n = _extremes(active, n_active, y, a, b, gamma, w,
                                                           row_i, row_j, sign * step)
        steps += 1
    return _STEPS, -1, steps, violation


def _start(y, lam):
    """gamma uniform on each class (the optimum at lam = 1) when there is a ridge (whose
    optimum then has most points in its support: fewer steps than growing it), else one
    point per class (lam = 0: a support of two, the hull points SMO grows from)."""
    positive = y > 0
    gamma = np.zeros(y.size)
    if lam > 0.0:
        gamma[positive] = 1.0 / np.count_nonzero(positive)
        gamma[~positive] = 1.0 / np.count_nonzero(~positive)
    else:
        gamma[np.argmax(positive)] = 1.0
        gamma[np.argmax(~positive)] = 1.0
    return gamma


def _gap(y, a, b, gamma, w):
    """``(F, Frank-Wolfe gap)`` at gamma, for ``w = K y gamma``."""
    G = a * y * w + b * gamma
    F = float(gamma @ G)
    return F, max(2.0 * (F - G[y > 0].min() - G[y < 0].min()), 0.0)


def _class_centred(x, positive):
    """x minus its mean over each class: the projection onto the directions that keep both
    simplices' sums."""
    out = x.copy()
    out[positive] -= x[positive].mean()
    out[~positive] -= x[~positive].mean()
    return out


def _interior(rows, y, a, b, gamma, w, qp_tol):
    """The minimiser of F over the two simplices' affine hull (``gamma >= 0`` dropped), by
    conjugate gradients from ``gamma`` (on the hull) with ``w = K y gamma``: ``(gamma, w)``
    once it has no negative entry and a relative gap at most ``qp_tol`` (then it is the
    minimiser over the simplices), None after ``INTERIOR_MAX_ITER`` steps (Nocedal and
    Wright, "Numerical Optimization", 2006, algorithm 16.2, the projection being
    :func:`_class_centred`)."""
    positive = y > 0
    gamma, w = gamma.copy(), w.copy()
    residual = -_class_centred(a * y * w + b * gamma, positive)
    direction, norm = residual.copy(), float(residual @ residual)
    for _ in range(INTERIOR_MAX_ITER):
        if gamma.min() >= 0.0 and _relative_gap(y, a, b, gamma, w) <= qp_tol:
            return gamma, np.asarray(rows.matvec(y * gamma), dtype=np.float64)
        K_direction = np.asarray(rows.matvec(y * direction), dtype=np.float64)
        curvature = a * y * K_direction + b * direction
        along = float(direction @ curvature)
        if not along > 0.0:  # no curvature left to use (rounding)
            return None
        step = norm / along
        gamma += step * direction
        w += step * K_direction
        residual -= step * _class_centred(curvature, positive)
        norm, previous = float(residual @ residual), norm
        direction = residual + (norm / previous) * direction
    return None


def _relative_gap(y, a, b, gamma, w):
    F, gap = _gap(y, a, b, gamma, w)
    return relative_gap(F, F - gap)


def hull_qp(rows, y, a, b, *, qp_tol, max_checks, callback=None, lam_hint=None):
    """Solve ``min a v'Kv + b ||gamma||^2`` (``v = y gamma``) over one simplex per class.

    Parameters
    ----------
    rows : row source
        Rows of ``K`` (:class:`~mklearn.kernels.row_sources.DenseRows` or
        :class:`~mklearn.kernels.row_sources.CombinedRows`).
    y : ndarray of shape (n,)
        Labels in {-1, +1}, both present.
    a, b : float >= 0
        Weights of the quadratic term and of the ridge (EasyMKL: ``1 - lam`` and ``lam``).
    qp_tol : float
        Stop at a relative Frank-Wolfe gap at most ``qp_tol``.
    max_checks : int
        Gap checks at most (each after at most ``CHECK_EVERY max(n, 1000)`` steps, or once
        the active points meet the KKT tolerance).
    callback : callable, optional
        Called with each gap check's history record.
    lam_hint : float, optional
        ``b / (a + b)`` choosing the start (see :func:`_start`); default from a and b.

    Returns
    -------
    gamma, w, F, gap, steps, converged, history
        ``w = K y gamma`` rebuilt from the rows of the support at the last check.
    """
    start = time.perf_counter()
    n = y.size
    lam = b / max(a + b, 1e-300) if lam_hint is None else lam_hint
    gamma = _start(y, 1.0 if a == 0.0 else lam)  # a = 0: the uniform start is optimal
    diag = np.ascontiguousarray(rows.diagonal()[0], dtype=np.float64)
    w = np.asarray(rows.matvec(y * gamma), dtype=np.float64)
    if b >= a * float(diag.max()) and (rows.slot_of >= 0).all():  # ridge-dominated, in memory
        gamma, w = _interior(rows, y, a, b, gamma, w, qp_tol) or (gamma, w)
    floor = 1e-15 * (a * max(float(diag.max()), 0.0) + b)
    steps, history = 0, []
    chunk = CHECK_EVERY * max(n, 1000)
    polish = _Polish(rows, y, a, b, qp_tol)
    while True:
        F, gap = _check(history, callback, y, a, b, gamma, w, start, steps)
        converged = history[-1]["relative_duality_gap"] <= qp_tol or gap <= floor or a == 0.0
        if converged or len(history) >= max_checks:
            return gamma, w, F, gap, steps, converged, history
        # the first chunk goes halfway (in decades) to qp_tol, then the polish may end it
        target = min(np.sqrt(qp_tol), 1.0) if len(history) == 1 else qp_tol
        # a KKT violation of tol bounds the gap by 4 tol: by target F, or by the floor
        tol = max(target * F, floor) / 4.0
        chunk_start = time.perf_counter()
        first = len(history) == 1
        taken = _smo_chunk(rows, diag, y, a, b, gamma, w, tol,
                           FIRST_CHUNK * max(n, 1000) if first else chunk)
        steps += taken
        w = np.asarray(rows.matvec(y * gamma), dtype=np.float64)  # shrunk points, rounding
        seconds = time.perf_counter() - chunk_start
        # the rounds may cost what the next chunk would, at this chunk's pace
        budget = seconds * chunk / max(taken, 1)
        better = None if _relative_gap(y, a, b, gamma, w) <= qp_tol else polish(gamma, w, budget)
        if better is not None:
            gamma, w = better
        elif taken == 0 and target == qp_tol:  # KKT met on the exact gradient: rounding
            F, gap = _check(history, callback, y, a, b, gamma, w, start, steps)
            return gamma, w, F, gap, steps, True, history


def _check(history, callback, y, a, b, gamma, w, start, steps):
    """``(F, gap)`` at gamma (:func:`_gap`), recorded in ``history`` and passed to
    ``callback``."""
    F, gap = _gap(y, a, b, gamma, w)
    record = HistoryRecord(
        iteration=len(history) + 1, objective=F, relative_duality_gap=relative_gap(F, F - gap),
        n_svm_solves=0, time=time.perf_counter() - start, smo_steps=steps)
    history.append(record)
    if callback is not None:
        callback(record)
    return F, gap


def _smo_chunk(rows, diag, y, a, b, gamma, w, tol, chunk):
    """At most ``chunk`` SMO steps from every point active (in place); the steps taken."""
    n = y.size
    active = np.arange(n, dtype=np.int64)
    state = np.array([n, min(n, SHRINK_EVERY)], dtype=np.int64)
    taken = 0
    while taken < chunk:
        status, missing, done, _ = _pair_steps(
            rows.store, rows.slot_of, rows.last_used, rows.clock, diag, y, a, b, gamma, w,
            tol, chunk - taken, active, state)
        taken += done
        if status == _NEED_ROW:
            rows.load(missing)
        elif status == _KKT:
            break
    return taken


@njit(cache=True, nogil=True)
def _support_matrix(store, slots, support, ys, a, b):
    """``a Y K_SS Y + b I`` from the cached rows (``store[slots[i], 0]`` is row
    ``support[i]``), float64 of shape (|S|, |S|)."""
    size = support.shape[0]
    Q = np.empty((size, size))
    for i in range(size):
        row = store[slots[i], 0]
        scale = a * ys[i]
        for j in range(size):
            Q[i, j] = scale * ys[j] * row[support[j]]
        Q[i, i] += b
    return Q


class _Polish:
    """The exact minimiser from the support of gamma by active-set rounds (see the module
    docstring): called with ``(gamma, w, budget in seconds)``, it returns
    ``(gamma, w)`` improved, or None when the rounds are not worth their cost, were tried
    from that support before, or do not lower F."""

    def __init__(self, rows, y, a, b, qp_tol):
        self.rows, self.y, self.a, self.b, self.qp_tol = rows, y, a, b, qp_tol
        self.tried = set()
        self.base = None  # (support, Cholesky factor of its block): the last factorised
        self.factorised = False  # whether the last round factorised its block

    def __call__(self, gamma, w, budget):
        support = np.flatnonzero(gamma > 0.0)
        key = hash(support.tobytes())
        if (self.b <= 0.0 or key in self.tried or not self._cached(support)
                or support.size > POLISH_MAX_SUPPORT or _round_seconds(support.size) >= budget):
            return None
        self.tried.add(key)
        y, a, b = self.y, self.a, self.b
        best, best_F = None, _gap(y, a, b, gamma, w)[0]
        pace = _round_seconds  # the next round's seconds: modelled, then from the last round
        for _ in range(ACTIVE_SET_ROUNDS):
            if (support.size > POLISH_MAX_SUPPORT or pace(support.size) > budget
                    or not self._cached(support)):
                break
            start = time.perf_counter()
            values = self._solve(support)
            if values is None:
                break
            candidate = np.zeros(y.size)
            candidate[support] = values
            w_new = np.asarray(self.rows.matvec(y * candidate), dtype=np.float64)
            added = self._violators(candidate, w_new, values, support)
            if values.min() >= 0.0:  # on the simplices: a point F can be compared at
                F = _gap(y, a, b, candidate, w_new)[0]
                if F < best_F:
                    best, best_F = (candidate, w_new), F
                if added.size == 0:
                    break
            seconds = time.perf_counter() - start
            budget -= seconds
            if self.factorised:
                pace = _measured_pace(seconds, support.size)
            support = np.union1d(support[values > 0.0], added)
        return best

    def _cached(self, support):
        """Whether every row of ``support`` is in the row cache (a round reads its block)."""
        return bool((self.rows.slot_of[support] >= 0).all())

    def _violators(self, gamma, w, values, support):
        """Points outside the support whose gradient is below their class's level on the
        support by more than ``qp_tol F / 4`` (gamma the exact minimiser on the support)."""
        y, a, b = self.y, self.a, self.b
        G = a * y * w + b * gamma
        on = support[values > 0.0]
        level = np.where(y > 0, _class_level(G, y, on, 1.0), _class_level(G, y, on, -1.0))
        margin = self.qp_tol * float(gamma @ G) / 4.0
        outside = np.ones(y.size, dtype=bool)
        outside[support] = False
        return np.flatnonzero(outside & (G < level - margin))

    def _solve(self, support):
        """gamma on ``support`` from ``(a Y K_SS Y + b I) gamma = mu_+ e_+ + mu_- e_-`` with
        each class summing to 1 (``gamma >= 0`` dropped); None if a class has no point there
        or the factorisation fails. From the last factorised support's factor when the
        supports differ by few points (:func:`_reuse_pays`), else by a new factorisation."""
        ys = self.y[support]
        if not ((ys > 0).any() and (ys < 0).any()):
            return None
        self.factorised = False
        if self.base is not None and _reuse_pays(self.base[0], support):
            values = self._solve_from_base(support)
            if values is not None:
                return values
        self.factorised = True
        slots = self.rows.slot_of[support]
        Q = _support_matrix(self.rows.store, slots, support, ys, self.a, self.b)
        try:  # Q symmetric: its transpose is the Fortran-order array LAPACK takes, no copy
            factor = cho_factor(Q.T, lower=True, overwrite_a=True, check_finite=False)
        except LinAlgError:
            self.base = None
            return None
        self.base = (support, factor)
        classes = np.stack([ys > 0, ys < 0], axis=1).astype(np.float64)
        Z = cho_solve(factor, classes, check_finite=False)
        mu = np.linalg.solve(classes.T @ Z, np.ones(2))
        return Z @ mu

    def _solve_from_base(self, support):
        """:meth:`_solve` from the factor of the base support ``S0``: the same equations on
        ``S0`` and the points ``A`` added to it, with ``gamma = 0`` as extra constraints on
        the points ``R`` of ``S0`` left out. One triangular solve with ``2 + |R| + |A|``
        right-hand sides, then the Schur complement of ``S0`` on ``A`` (``|A| x |A|``)
        factorised (block elimination: Golub and Van Loan, "Matrix Computations", 4th ed.,
        2013, section 3.2.11). None if a factorisation or the solve fails."""
        base, factor = self.base
        y, a, b = self.y, self.a, self.b
        dropped = np.flatnonzero(~np.isin(base, support, assume_unique=True))
        added = np.setdiff1d(support, base, assume_unique=True)
        points = np.concatenate([base, added])
        labels = y[points]
        # constraints: one simplex per class, and gamma_r = 0 for r in R
        constraints = np.zeros((points.size, 2 + dropped.size))
        constraints[:, 0], constraints[:, 1] = labels > 0, labels < 0
        constraints[dropped, 2 + np.arange(dropped.size)] = 1.0
        rows_added = self.rows.store[self.rows.slot_of[added], 0]  # (|A|, n)
        coupling = (a * y[base])[:, None] * (rows_added[:, base].T * y[added][None, :])
        head = constraints[:base.size]
        solved = cho_solve(factor, np.hstack([head, coupling]), check_finite=False)
        Z0, W = solved[:, :head.shape[1]], solved[:, head.shape[1]:]
        try:
            if added.size:
                block = (a * np.outer(y[added], y[added]) * rows_added[:, added]
                         + b * np.eye(added.size))
                schur = cho_factor(block - coupling.T @ W, lower=True, check_finite=False)
                tail = cho_solve(schur, constraints[base.size:] - coupling.T @ Z0,
                                 check_finite=False)
                solution = np.vstack([Z0 - W @ tail, tail])
            else:
                solution = Z0
            rhs = np.zeros(constraints.shape[1])
            rhs[:2] = 1.0
            gamma = solution @ np.linalg.solve(constraints.T @ solution, rhs)
        except LinAlgError:
            return None
        order = np.argsort(points)
        kept = np.isin(points[order], support, assume_unique=True)
        return gamma[order][kept]


def _reuse_pays(base, support):
    """Whether :meth:`_Polish._solve_from_base` costs under ``1 / REUSE_GAIN`` of a new
    factorisation in flops, ``2 |S0|^2 (2 + |R| + |A|) + |A|^3 / 3`` against ``|S|^3 / 3``:
    where it does not, the new factor serves the rounds after, whose supports differ less."""
    changed = np.setxor1d(base, support, assume_unique=True).size
    added = np.setdiff1d(support, base, assume_unique=True).size
    reuse = 2.0 * base.size ** 2 * (2 + changed) + added ** 3 / 3.0
    return REUSE_GAIN * reuse < support.size ** 3 / 3.0


def _round_seconds(size):
    """The modelled seconds of one active-set round on a support of ``size`` points (its
    Cholesky factorisation, ``size^3 / 3`` flops)."""
    return size ** 3 / 3.0 / POLISH_FLOPS_PER_SECOND


def _measured_pace(seconds, size):
    """The seconds of a round on ``n`` points, from one of ``size`` points that took
    ``seconds`` (the factorisation's cube)."""
    return lambda n: seconds * (n / max(size, 1)) ** 3


def _class_level(G, y, support, label):
    """The mean gradient over the support's points of class ``label`` (where the exact
    minimiser on the support makes it constant): inf when there are none."""
    inside = G[support][y[support] == label]
    return float(inside.mean()) if inside.size else np.inf


def _weights(operator, v):
    """``d_k = v' K_k v / sum_l v' K_l v`` from the rows of the support of v (in blocks);
    ValueError as :func:`normalised_weights`."""
    terms = operator.kernel_gradient(np.ones(operator.n_kernels), v)
    scale = float(np.mean(operator.diagonal().sum(axis=0))) * float(v @ v)
    return normalised_weights(terms, scale)


def normalised_weights(terms, scale):
    """EasyMKL's weights ``d_k = v' K_k v / sum_l v' K_l v`` (paper eq. 10) from the terms
    ``v' K_k v``; ``scale`` (the sum kernel's mean diagonal times ``v'v``) sets what is zero.

    Raises
    ------
    ValueError
        If every ``v' K_k v`` is zero (to rounding): every kernel is zero or constant on the
        training points, or (lam = 0) the class hulls meet in the sum kernel's feature space.
    """
    terms = np.maximum(np.asarray(terms, dtype=np.float64), 0.0)
    total = float(terms.sum())
    if not total > 1e-12 * max(scale, 1e-300):
        raise ValueError(
            "EasyMKL: (Y gamma)' K_k (Y gamma) is zero for every base kernel, so the kernel "
            "weights are undefined: the kernels are zero (or constant) on the training points, "
            "or, with lam=0, the two classes' convex hulls meet in the sum kernel's feature "
            "space; check the kernels, or use solver_options={'lam': 0.1}"
        )
    return terms / total


def _svm_on_learned_kernel(operator, d, y, C, tol):
    """The C-SVM on ``K(d)`` by the project's SMO core: ``(alpha, intercept)``."""
    result = svc_dual(operator.kernel(d), y, C, tol=tol)
    return result.alpha, -float(result.rho)


def komd_ridge(y, lam):
    """KOMD's ridge ``lam n_+ n_- / n`` (MKLpy's KOMD, Aiolli et al., ICANN 2008)."""
    n_pos = np.count_nonzero(y > 0)
    return lam * n_pos * (y.size - n_pos) / y.size


def _komd(operator, d, y, lam, komd_tol, max_checks):
    """MKLpy's KOMD learner on ``K(d)``: ``(gamma, intercept, converged)``."""
    ridge = komd_ridge(y, lam)
    rows = operator.kernel(d)
    gamma, w, _, _, _, converged, _ = hull_qp(rows, y, 1.0 - lam, ridge, qp_tol=komd_tol,
                                              max_checks=max_checks, lam_hint=lam)
    return gamma, -0.5 * float(gamma @ w), converged


@former_operator_name('provider')
def easymkl(operator, y, C, regularizer=None, *, tol=1e-3, max_iter=500, callback=None,
            lam=0.1, learner="svm", qp_tol=1e-8, komd_lam=0.1, komd_tol=1e-6) -> MKLResult:
    """EasyMKL kernel weights and the final model on ``K(d)`` (see the module docstring).

    Parameters
    ----------
    operator : KernelOperator
        The base kernels: a stack (:class:`~mklearn.formulation.combinations.SumOfKernels`,
        whose ``K`` and ``K(d)`` are dense) or rows computed on demand
        (:class:`~mklearn.kernels.operator.RowKernels`, rows of ``K`` and ``K(d)`` through
        its LRU cache); ``kernel(d)`` gives the row sources, ``kernel_gradient`` the terms
        ``v'K_k v`` from the rows of the support of v.
    y : ndarray of shape (n,)
        Labels in {-1, +1}, both present.
    C : float or ndarray of shape (n,)
        Costs of the final SVM (``learner="svm"``; the estimators' ``C`` times
        ``sample_weight`` and ``class_weight``); unused by the gamma QP, which weighs every
        training point alike (as the paper), and by KOMD.
    regularizer : optional
        Unused: the weights lie on the simplex by construction.
    tol : float
        KKT tolerance of the final SVM (as :class:`sklearn.svm.SVC`'s ``tol``).
    max_iter : int
        Gap checks of each QP at most (each after at most ``10 max(n, 1000)`` SMO steps).
    callback : callable, optional
        Called with the history record of each gap check of the gamma QP.
    lam : float in [0, 1]
        EasyMKL's regularisation (MKLpy's default 0.1); 1 gives the class means.
    learner : {"svm", "komd"}
        The final model: the SVM with costs ``C``, or KOMD as MKLpy's EasyMKL uses it.
    qp_tol : float
        Relative Frank-Wolfe gap of the gamma QP at exit.
    komd_lam : float in [0, 1]
        KOMD's own lam (MKLpy's default learner ``KOMD(lam=0.1)``).
    komd_tol : float
        Relative Frank-Wolfe gap of KOMD's QP at exit: 1e-6 by default, the relative
        duality gap at which MKLpy's KOMD stops (cvxopt's default ``reltol``); the
        Frank-Wolfe gap bounds the duality gap from above.

    Returns
    -------
    MKLResult
        ``kernel_weights`` d (sum 1); ``alpha`` the SVM's dual variables, or KOMD's gamma;
        ``objective``, ``duality_gap``, ``relative_duality_gap`` and ``history`` those of
        the gamma QP (the relative gap: the Frank-Wolfe gap over F, compared with
        ``qp_tol``); ``n_iter`` its gap checks (one history record each) and
        ``n_smo_steps`` its SMO steps.

    Raises
    ------
    ValueError
        If the weights are undefined (every ``v'K_k v`` zero, see :func:`_weights`).
    """
    prepare(operator, "easymkl")
    y = np.asarray(y, dtype=np.float64)
    rows = operator.kernel(np.ones(operator.n_kernels))
    gamma, _, F, gap, steps, converged, history = hull_qp(
        rows, y, 1.0 - lam, lam, qp_tol=qp_tol, max_checks=max_iter, callback=callback)
    del rows
    d = _weights(operator, y * gamma)
    if learner == "komd":
        alpha, intercept, fine = _komd(operator, d, y, komd_lam, komd_tol, max_iter)
        converged = converged and fine
    else:
        alpha, intercept = _svm_on_learned_kernel(operator, d, y, C, tol)
    return MKLResult(
        kernel_weights=d, alpha=alpha, intercept=intercept, objective=F, duality_gap=gap,
        n_iter=len(history), n_smo_steps=steps, n_svm_solves=1, converged=converged,
        history=history, stop_reason="converged" if converged else "max_iter",
        relative_duality_gap=history[-1]["relative_duality_gap"],
    )
