"""Sequential minimal optimisation with second-order working-set selection (WSS2).

One solver for LIBSVM's generic dual (Chang and Lin, "LIBSVM", ACM TIST 2011, section 4.1)::

    min_a  1/2 a' Q a + p' a   s.t.  y' a = const,  0 <= a_i <= upper_i,
    Q_ij = y_i y_j K[index_i, index_j],  y_i in {-1, +1}.

C-SVC, epsilon-SVR and one-class SVM differ only in ``K``'s index map, ``y``, ``p`` and
``upper`` (LIBSVM's Q-matrix trick). The working set is chosen by WSS2 of Fan, Chen and Lin
(JMLR 6, 2005, Algorithm 2): ``i`` maximally violating, ``j`` maximising the second-order gain
``b_ij^2 / a_ij``. The column provider here is a dense kernel matrix ``K`` (the combined
precomputed kernel) or a row source of :mod:`mklearn.kernels.row_sources`; the loop itself is
:func:`mklearn.svm.core.smo_loop`.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from typing import NamedTuple

import numba
import numpy as np

import mklearn.svm.core as core
from mklearn.kernels import base_store
from mklearn.kernels.row_sources import row_source
from mklearn.kernels.threads import use_threads


class QPResult(NamedTuple):
    """Solution of the generic dual QP.

    Attributes
    ----------
    alpha : ndarray of shape (l,)
        Dual variables.
    grad : ndarray of shape (l,)
        Gradient ``Q alpha + p`` at ``alpha``.
    rho : float
        Offset; the decision function is ``sum_i y_i alpha_i K(x_i, x) - rho``.
    objective : float
        ``1/2 alpha' Q alpha + p' alpha`` (to be minimised).
    violation : float
        Maximal KKT violation ``m(alpha) - M(alpha)`` at exit.
    n_iter : int
        Number of two-variable steps taken.
    converged : bool
        Whether ``violation <= tol`` (or the duality gap asked for with ``gap``) was reached
        before ``max_iter``.
    stopped_below : bool
        Whether the solve stopped, unfinished, because ``objective`` fell below the
        ``stop_below`` asked for (:func:`solve_qp`).
    """

    alpha: np.ndarray
    grad: np.ndarray
    rho: float
    objective: float
    violation: float
    n_iter: int
    converged: bool
    stopped_below: bool = False


def _offset(alpha, grad, y, upper):
    """LIBSVM's rho: mean of y_t G_t over free variables, else minus the midpoint of the KKT
    bounds (:func:`kkt_bounds`). A variable fixed at 0 by ``upper_t = 0`` (sample weight 0)
    bounds nothing: as if the sample were removed, as scikit-learn's LIBSVM does."""
    free = (alpha > 0.0) & (alpha < upper)
    if free.any():
        return float((y * grad)[free].mean())
    return -_midpoint(*kkt_bounds(alpha, grad, y, upper))


def kkt_bounds(alpha, grad, y, upper):
    """``(m, M)``: the largest ``-y_t G_t`` over the variables that can move up along y
    (``I_up``) and the smallest over those that can move down (``I_low``), LIBSVM's
    ``m(alpha)`` and ``M(alpha)``; -inf / inf for an empty set. At the optimum ``m <= M``,
    and the multiplier ``b`` of ``y'alpha`` (``G + b y`` satisfies the box's KKT conditions,
    ``rho = -b``) lies between them."""
    v = -y * grad
    up, low = kkt_sets(alpha, y, upper)
    return (float(v[up].max()) if up.any() else -np.inf,
            float(v[low].min()) if low.any() else np.inf)


def kkt_sets(alpha, y, upper):
    """Boolean masks ``(I_up, I_low)``: the variables that can move up, and down, along y
    (a variable fixed by ``upper_t = 0`` is in neither)."""
    return (np.where(y > 0, alpha < upper, alpha > 0.0),
            np.where(y > 0, alpha > 0.0, alpha < upper))


def _midpoint(m, M):
    """Midway between finite bounds; the finite one alone; 0 if neither."""
    if np.isfinite(m) and np.isfinite(M):
        return 0.5 * (m + M)
    return m if np.isfinite(m) else M if np.isfinite(M) else 0.0


class SMOState:
    """Where an SMO run stands: ``alpha``, the gradient ``G = Q alpha + p`` and the active
    set, for a QP given by ``signs``, ``index``, ``linear`` and ``upper`` (see
    :func:`solve_qp`)."""

    def __init__(self, signs, index, linear, upper, n_samples, alpha):
        self.signs = np.ascontiguousarray(signs, dtype=np.float64)
        self.index = np.ascontiguousarray(index, dtype=np.int64)
        self.linear = np.ascontiguousarray(linear, dtype=np.float64)
        self.upper = np.ascontiguousarray(upper, dtype=np.float64)
        self.n_samples = int(n_samples)
        self.alpha = alpha
        self.G = self.linear.copy()
        self.active, self.state = core.new_state(self.signs.size)

    def coefficients(self):
        """``v = sum_t signs_t alpha_t e_index[t]``, shape (n_samples,)."""
        return np.bincount(self.index, weights=self.signs * self.alpha, minlength=self.n_samples)

    def activate_all(self):
        n_var = self.signs.size
        self.active[:] = np.arange(n_var)
        self.state[core.N_ACTIVE] = n_var

    def gradient_from(self, Kv):
        """``G = signs * (K v)[index] + p`` from the product ``K v`` (shape (n_samples,))."""
        self.G[:] = self.signs * Kv[self.index] + self.linear


# the core's MKL step and base rows when unused
_NO_MKL = core.MKLStep(F=np.zeros((1, 1)), g=np.zeros(1), d=np.zeros(1), fd=np.empty(1),
                       base_diag=np.zeros((1, 1)), kind=0, lam=1.0, q=2.0, prior=np.zeros(1),
                       use_cubic=False)
_NO_BASE = base_store.held_rows(np.zeros((1, 1, 1)))
GAP_CHECK_STEPS = 1000  # most SMO steps between duality-gap checks (at most l: each is O(l))
STOP_CHECK_STEPS = 100  # most SMO steps between checks of the objective against stop_below
HEARTBEAT_SECONDS = 2.0  # at most this long between two heartbeats of a long solve
HEARTBEAT_STEPS = 1000  # first steps between two looks at the clock (doubled while cheap)
_SVM_HEARTBEAT = contextvars.ContextVar("svm_heartbeat", default=None)


@contextlib.contextmanager
def svm_heartbeat(heartbeat):
    """Within this context (of the current thread), every SMO solve that is given no
    ``heartbeat`` of its own calls ``heartbeat`` with its SMO steps so far at least every
    ``HEARTBEAT_SECONDS`` (see :func:`run_smo`): a progress bar's sign of life during the long
    SVM solves of any solver, whatever its layers between the bar and the SMO core."""
    token = _SVM_HEARTBEAT.set(heartbeat)
    try:
        yield
    finally:
        _SVM_HEARTBEAT.reset(token)


def duality_gap_bound(st):
    """An upper bound on ``f(alpha) - min f`` for the generic dual at ``st`` (the SVM's
    duality gap ``P - D`` for C-SVC): ``sum_t alpha_t r_t + upper_t max(0, -r_t)`` with
    ``r = G + b y``, for the multiplier ``b`` of ``y'alpha`` midway between the KKT bounds
    (LIBSVM's offset when no variable is free). It holds for any ``b``: the linearisation of
    f at alpha, minimised over the box with ``y'alpha`` relaxed by ``b``, is below the optimum
    (Frank-Wolfe's gap). Exact only if ``st.G`` is exact for every variable."""
    y, G, alpha, upper = st.signs, st.G, st.alpha, st.upper
    b = _midpoint(*kkt_bounds(alpha, G, y, upper))
    r = G + b * y
    return float(alpha @ r + upper @ np.maximum(-r, 0.0))


def _sample_blocks(F):
    """Blocks of samples for the SMO-MKL step's passes over ``F`` (shape (m, n)): one per
    numba thread when threads are on and a step reads enough values, else 1 (serial)."""
    if not use_threads(F.size):
        return 1
    return max(1, min(numba.get_num_threads(), F.shape[1] // base_store.MIN_BLOCK))


def combined_rows_kept(n_kernels, n_samples):
    """Rows of ``K(d)`` the SMO-MKL step keeps for its working-set search: every sample's
    when they take at most an eighth of the per-kernel outputs ``F`` (``m n``), else as many
    as that holds (at least 2). Sonar with 10^5 kernels: all 208, and a row is combined from
    the base rows (83 MB read) once per sample while the weights hold, not at every step."""
    return int(min(n_samples, max(2, n_kernels // 8)))


def _objective(st):
    """``1/2 alpha' Q alpha + p' alpha = 1/2 alpha' (G + p)``; exact when ``st.G`` is exact
    for every variable with ``alpha_t != 0``."""
    return 0.5 * float(st.alpha @ (st.G + st.linear))


def _slots_and_search(rows, n_samples, mkl):
    """The core's :class:`~mklearn.svm.core.Slots` of ``rows`` and the work arrays of its
    working-set search: ``diag K`` (SVM step), or room for ``diag K(d)`` and rows of ``K(d)``
    (SMO-MKL step, ``mkl`` an :class:`~mklearn.svm.core.MKLStep`)."""
    if mkl is None:
        slots = core.Slots(rows.store, _NO_BASE, rows.slot_of, rows.last_used, rows.clock)
        search = core.Search(qdiag=np.ascontiguousarray(rows.diagonal()[0]), d_diag=np.zeros(1),
                             row_buf=np.empty((1, 1), dtype=rows.store.dtype),
                             row_slot_of=np.full(1, -1, dtype=np.int64),
                             row_owner=np.full(1, -1, dtype=np.int64))
        return slots, search
    base = rows.base_store()  # no SVM rows, in the type of the combined rows (row_i's)
    no_rows = np.zeros((1, 1, 1), dtype=base.rows.dtype)
    slots = core.Slots(no_rows, base, rows.slot_of, rows.last_used, rows.clock)
    n_rows = combined_rows_kept(*mkl.F.shape)
    search = core.Search(qdiag=np.empty(n_samples), d_diag=np.zeros(mkl.F.shape[0]),
                         row_buf=np.empty((n_rows, n_samples), dtype=base.rows.dtype),
                         row_slot_of=np.full(n_samples, -1, dtype=np.int64),
                         row_owner=np.full(n_rows, -1, dtype=np.int64))
    return slots, search


_LOOP_ENTRIES = {}  # entry point of the compiled loop for each key of its arguments' types


def _compiled_loop(*args):
    """:func:`~mklearn.svm.core.smo_loop` compiled for the types of ``args``, called without
    numba's dispatch: typing the named tuples' fields at every call (once per missing row)
    cost about 20 us, as much as a few hundred SMO steps. The entry point is kept under
    :func:`_type_key` of ``args``: numba's typing of them once a solve took 190 us, as much
    as the rest of a cold solve on 200 points (SPG-GMKL on 1,000 w8a points makes 165
    solves), the key 13 us."""
    key = _type_key(args)
    entry = _LOOP_ENTRIES.get(key)
    if entry is None:
        signature = tuple(core.smo_loop.typeof_pyval(a) for a in args)
        compiled = core.smo_loop.overloads.get(signature)
        if compiled is None:  # not loaded yet: numba's dispatch compiles or loads it
            return core.smo_loop
        entry = _LOOP_ENTRIES[key] = compiled.entry_point
    return entry


def _type_key(value):
    """All that numba's type of ``value`` depends on (and more): for an array its dtype,
    dimensions and flags (layout, read-only, aligned); for a tuple its class and the keys of
    its fields; else the Python type."""
    if isinstance(value, np.ndarray):
        flags = value.flags
        return (value.dtype.str, value.ndim, flags.c_contiguous, flags.f_contiguous,
                flags.writeable, flags.aligned)
    if isinstance(value, tuple):
        return type(value), tuple(_type_key(field) for field in value)
    return type(value)


def run_smo(rows, st, *, tol, max_steps, shrinking, reconstruct, mkl=None, gap=None,
            stop_below=None, heartbeat=None):
    """Drive :func:`mklearn.svm.core.smo_loop` on ``st`` (an :class:`SMOState`) until it is
    solved to ``tol`` or ``max_steps`` steps are spent: load missing rows into ``rows``, and
    call ``reconstruct()`` (which must refresh ``st.G`` for every variable) when the loop asks
    for the whole gradient and before returning with variables shrunk.

    ``mkl`` is the :class:`~mklearn.svm.core.MKLStep` of the SMO-MKL step (``base_diag`` of
    shape (m, n), or (m, 1) for diagonals constant along the samples); ``rows`` is then a
    :class:`~mklearn.kernels.row_sources.BaseRows`, read through its ``base_store()``.
    ``gap`` (SVM steps only): also stop, as solved, once :func:`duality_gap_bound` is at most
    ``gap``, checked every ``min(GAP_CHECK_STEPS, l)`` steps on the exact gradient (rebuilt first if
    variables are shrunk and the stale one says so; each rebuild that does not stop the run
    doubles the interval: on many points a rebuild reads every support vector's row).
    ``stop_below`` (SVM steps only): also stop, unsolved, once the objective is below it,
    checked every ``min(STOP_CHECK_STEPS, l)`` steps (one O(l) pass), on the exact gradient
    (rebuilt first if variables are shrunk and the stale one says so; a rebuild that does not
    stop the run doubles that interval); SMO steps only lower the objective, so the solve
    would have ended below it too.
    ``heartbeat``: called with the steps taken so far and the largest KKT violation (of the
    last pass) at least every ``HEARTBEAT_SECONDS``
    while the solve runs (a progress bar's sign of life between two gap checks); default
    the one of the enclosing :func:`svm_heartbeat` context, if any.
    Returns ``(converged, steps, violation, stopped_below)``.
    """
    # numba starts its threading layer when a parallel function is compiled or called from
    # Python, not when a cached serial one that calls parallel passes (smo_loop) is loaded:
    # without this, such a load crashes (numba issue #8578). get_num_threads starts it.
    numba.get_num_threads()
    qp = core.QP(st.signs, st.index, st.linear, st.upper)
    it = core.Iterate(st.alpha, st.G, np.empty(st.signs.size, dtype=np.uint8), st.active,
                      st.state)
    slots, search = _slots_and_search(rows, st.n_samples, mkl)
    settings = core.Settings(step_kind=core.STEP_SVM if mkl is None else core.STEP_MKL,
                             tol=float(tol), max_steps=0, shrinking=bool(shrinking),
                             blocks=1 if mkl is None else _sample_blocks(mkl.F))
    mkl = _NO_MKL if mkl is None else mkl
    st.state[core.READY] = 0  # the caller may have changed alpha, g or F since the last call
    total, violation, n_var = 0, np.inf, st.signs.size
    never = max_steps + 1
    gap_every = min(GAP_CHECK_STEPS, n_var)
    next_gap = gap_every if gap is not None and mkl is _NO_MKL else never
    stop_every = min(STOP_CHECK_STEPS, n_var)
    next_stop = stop_every if stop_below is not None and mkl is _NO_MKL else never
    pulse = _Pulse(_SVM_HEARTBEAT.get() if heartbeat is None else heartbeat, never)
    loop = _compiled_loop(qp, it, slots, search, mkl, settings)
    while True:
        settings = settings._replace(
            max_steps=int(min(max_steps, next_gap, next_stop, pulse.next) - total))
        status, missing, steps, violation = _run_loop(loop, qp, it, slots, search, mkl, settings)
        total += steps
        pulse.beat(total, violation)
        if status == core.STATUS_NEED_ROW:
            rows.load(int(missing))
            continue
        shrunk = st.state[core.N_ACTIVE] < n_var
        if status == core.STATUS_STEPS and total < max_steps:  # a check is due
            if total >= next_stop:
                next_stop = total + stop_every
                if _objective(st) < stop_below:
                    if shrunk:  # the stale gradients of shrunk variables may mislead
                        reconstruct()
                        st.activate_all()
                        shrunk = False
                    if _objective(st) < stop_below:
                        return False, total, float(violation), True
                    stop_every *= 2  # misled: rebuild half as often from now on
                    next_stop = total + stop_every
            if total < next_gap:
                continue
            next_gap = total + gap_every
            if duality_gap_bound(st) > gap:
                continue
            if shrunk:
                reconstruct()
                st.activate_all()
                if duality_gap_bound(st) > gap:  # the shrunk variables' stale gradients
                    gap_every *= 2  # misled: check (and rebuild) half as often from now on
                    next_gap = total + gap_every
                    continue
            return True, total, float(violation), False
        if status == core.STATUS_RECONSTRUCT or (status == core.STATUS_STEPS and shrunk):
            reconstruct()
            st.activate_all()
            if status == core.STATUS_RECONSTRUCT and total < max_steps:
                continue
        return status == core.STATUS_KKT, total, float(violation), False


def _run_loop(loop, qp, it, slots, search, mkl, settings):
    """One call of the compiled loop; a float overflow inside it (numba raises a bare
    ``OverflowError``, e.g. a power of a huge kernel value) becomes a ValueError that says
    what to do."""
    try:
        return loop(qp, it, slots, search, mkl, settings)
    except OverflowError as error:
        raise ValueError(
            "the SMO solve overflowed float64: kernel values (or their products with the "
            "dual variables) beyond its range; rescale the kernels, e.g. divide each by its "
            "mean diagonal so that its values are near 1") from error


class _Pulse:
    """When to call a solve's ``heartbeat``: the loop returns every ``next`` steps (a span
    doubled while it passes in under a tenth of ``HEARTBEAT_SECONDS``, so that a fast solve
    barely notices) and at each missing row; the clock is read then."""

    def __init__(self, heartbeat, never):
        self.heartbeat, self.span = heartbeat, HEARTBEAT_STEPS
        self.next = never if heartbeat is None else HEARTBEAT_STEPS
        self.last = self.span_start = time.perf_counter()

    def beat(self, total, violation):
        if self.heartbeat is None:
            return
        now = time.perf_counter()
        if now - self.last >= HEARTBEAT_SECONDS:
            self.heartbeat(total, float(violation))
            self.last = now
        if total >= self.next:
            if now - self.span_start < 0.1 * HEARTBEAT_SECONDS:
                self.span *= 2
            self.next, self.span_start = total + self.span, now


def solve_qp(K, y, p, upper, *, index=None, alpha0=None, tol=1e-3, max_iter=None,
             shrinking=True, gap=None, warm_product=None, stop_below=None):
    """Solve LIBSVM's generic dual QP by WSS2-SMO with shrinking.

    Parameters
    ----------
    K : ndarray of shape (n, n) or a row source
        Symmetric PSD kernel matrix (float64), or a row source of :mod:`mklearn.kernels.row_sources`
        (rows computed on demand through an LRU cache).
    y : ndarray of shape (l,)
        Signs in {-1, +1}: the equality-constraint coefficients, also the sign pattern of Q.
    p : ndarray of shape (l,)
        Linear term.
    upper : ndarray of shape (l,)
        Upper bounds (lower bounds are 0).
    index : ndarray of shape (l,), optional
        Row of ``K`` for each variable (``arange(n)`` by default; SVR maps 2n variables onto
        n rows).
    alpha0 : ndarray of shape (l,), optional
        Feasible starting point (warm start); zeros by default. ``y' alpha0`` is kept.
    tol : float
        Stopping tolerance on the maximal KKT violation ``m(alpha) - M(alpha)``.
    max_iter : int, optional
        Cap on the number of two-variable steps; default ``max(10**7, 100 l)``.
    shrinking : bool
        LIBSVM's shrinking heuristic with gradient reconstruction (same optimum, fewer
        gradient updates once most variables sit at a bound).
    gap : float, optional
        Also stop once the duality gap is at most ``gap`` (in the objective's units; see
        :func:`duality_gap_bound`), whatever the KKT violation; ``converged`` is then True.
    warm_product : ndarray of shape (n,), optional
        ``K v0`` for the coefficients ``v0 = sum_t y_t alpha0_t e_index[t]`` of the warm start,
        when the caller knows it (SPG-GMKL: ``sum_k d_k K_k v0`` from the products its
        gradient kept). The starting gradient then reads no row of ``K``, and a gradient
        reconstruction only the rows of the variables that moved, which the steps have read.
        Ignored without ``alpha0`` or when ``alpha0`` is outside the box.
    stop_below : float, optional
        Stop, unsolved (``stopped_below``), once the objective is below this value: a caller
        that only needs to know whether the optimum is above it (a line search rejecting a
        trial point) learns the answer, since the steps only lower the objective. Checked
        every ``min(STOP_CHECK_STEPS, l)`` steps.

    Returns
    -------
    QPResult
    """
    rows = row_source(K)
    y = np.ascontiguousarray(y, dtype=np.float64)
    n_var = y.shape[0]
    index = np.arange(n_var, dtype=np.int64) if index is None else np.asarray(index, np.int64)
    upper = np.ascontiguousarray(upper, dtype=np.float64)
    if alpha0 is None:
        alpha = np.zeros(n_var)
    else:
        alpha = np.clip(np.asarray(alpha0, dtype=np.float64), 0.0, upper)
        if warm_product is not None and not np.array_equal(alpha, alpha0):
            warm_product = None  # a product at another point
    st = SMOState(y, index, p, upper, rows.n_samples, alpha)
    if warm_product is not None:
        start = st.coefficients()
        st.gradient_from(np.asarray(warm_product, dtype=np.float64))

    def reconstruct():
        if warm_product is None:
            st.gradient_from(rows.matvec(st.coefficients()))
        else:  # K v = K v0 + K (v - v0): the rows of the variables that moved
            st.gradient_from(warm_product + rows.matvec(st.coefficients() - start))

    if alpha.any() and warm_product is None:
        reconstruct()
    if max_iter is None:
        max_iter = max(10**7, 100 * n_var)
    converged, n_iter, violation, below = run_smo(
        rows, st, tol=tol, max_steps=max_iter, shrinking=shrinking, reconstruct=reconstruct,
        gap=gap, stop_below=stop_below)
    rho = _offset(alpha, st.G, y, upper)
    return QPResult(alpha, st.G, rho, _objective(st), violation, n_iter, converged, below)


def svc_dual(K, y, C, *, alpha0=None, tol=1e-3, max_iter=None, gap=None,
             warm_product=None, stop_below=None):
    """C-SVC dual ``max 1'a - 1/2 a' Y K Y a`` over ``0 <= a <= C``, ``y'a = 0``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float or ndarray of shape (n,)
        Box constraint (per-sample costs allowed, e.g. ``C * sample_weight``).
    alpha0, tol, max_iter, gap, warm_product, stop_below
        As in :func:`solve_qp`.

    Returns
    -------
    QPResult
        ``objective`` is minus the SVM dual value; the intercept is ``-rho``.
    """
    y = np.asarray(y, dtype=np.float64)
    upper = np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape).copy()
    return solve_qp(K, y, -np.ones_like(y), upper, alpha0=alpha0, tol=tol, max_iter=max_iter,
                    gap=gap, warm_product=warm_product,
                    stop_below=stop_below)


def svr_dual(K, y, C, epsilon, *, alpha0=None, tol=1e-3, max_iter=None, gap=None,
             warm_product=None, stop_below=None):
    """epsilon-SVR dual in LIBSVM's form with 2n variables ``[a+; a-]``.

    ``min 1/2 beta' K beta + epsilon 1'(a+ + a-) - y' beta``, ``beta = a+ - a-``,
    ``0 <= a+, a- <= C``, ``1'beta = 0`` (Chang and Lin, LIBSVM, section 2.3): signs
    ``[+1, -1]``, rows ``[0..n-1, 0..n-1]``, linear term ``[epsilon - y, epsilon + y]``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix.
    y : ndarray of shape (n,)
        Real targets.
    C : float or ndarray of shape (n,)
        Box constraint.
    epsilon : float >= 0
        Half-width of the insensitive tube.
    alpha0 : ndarray of shape (2n,), optional
        Feasible warm start ``[a+; a-]``.
    tol, max_iter, gap, warm_product, stop_below
        As in :func:`solve_qp`.

    Returns
    -------
    QPResult
        Over the 2n variables; ``beta = alpha[:n] - alpha[n:]`` and the prediction is
        ``K(x, X) @ beta - rho``.
    """
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    cost = np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape)
    signs = np.concatenate([np.ones(n), -np.ones(n)])
    linear = np.concatenate([epsilon - y, epsilon + y])
    index = np.concatenate([np.arange(n), np.arange(n)])
    return solve_qp(K, signs, linear, np.concatenate([cost, cost]), index=index, alpha0=alpha0,
                    tol=tol, max_iter=max_iter, gap=gap, warm_product=warm_product,
                    stop_below=stop_below)


def one_class_dual(K, nu, *, alpha0=None, tol=1e-3, max_iter=None, gap=None,
                   warm_product=None, stop_below=None):
    """One-class SVM dual ``min 1/2 a' K a`` over ``0 <= a <= 1``, ``1'a = nu n``.

    Schoelkopf et al. (2001) in LIBSVM's scaling (Chang and Lin, LIBSVM, section 2.2); started,
    as LIBSVM does, from ``a_i = 1`` for the first ``floor(nu n)`` points and the remainder on
    the next one.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix.
    nu : float in (0, 1]
        Upper bound on the fraction of outliers, lower bound on that of support vectors.
    alpha0 : ndarray of shape (n,), optional
        Feasible warm start (``1'alpha0 = nu n``).
    tol, max_iter, gap, warm_product, stop_below
        As in :func:`solve_qp`.

    Returns
    -------
    QPResult
        The decision function is ``K(x, X) @ alpha - rho`` (positive inside).

    Raises
    ------
    ValueError
        If ``nu`` is not in (0, 1].
    """
    if not 0.0 < nu <= 1.0:
        raise ValueError(f"nu must lie in (0, 1], got {nu}")
    K = row_source(K)
    n = K.n_samples
    if alpha0 is None:
        total = nu * n
        alpha0 = np.zeros(n)
        whole = int(np.floor(total))
        alpha0[:whole] = 1.0
        if whole < n:
            alpha0[whole] = total - whole
    return solve_qp(K, np.ones(n), np.zeros(n), np.ones(n), alpha0=alpha0, tol=tol,
                    max_iter=max_iter, gap=gap, warm_product=warm_product,
                    stop_below=stop_below)
