"""MWUMKL: trace-constrained l1 MKL by matrix multiplicative weights, without SVM calls.

Moeller, Raman, Saha and Venkatasubramanian, "A Geometric Algorithm for Scalable Multiple Kernel
Learning", AISTATS 2014 (section 4, Algorithms 2 and 3); ALGORITHMS.md section 3. The QCQP of
Lanckriet et al. (P-4.1), ``max 2 * 1'alpha - s`` s.t. ``s >= alpha' G_i alpha / r_i``,
``G_i = Y K_i Y``, ``r_i = tr K_i``, is written with ``1'alpha = 1`` (the paper's "avoiding binary
search"): find the closest points of the two class hulls in the kernel that maximises their
distance. Every iteration t

1. FIND-alpha (P-Alg. 2): one positive and one negative point with the largest
   ``g_j = sum_i 2 p_i^12 (G_i alpha)_j / sqrt(r_i alpha' G_i alpha)`` get 1/2 each; as
   ``p_i^12 < 0`` these are the points of smallest margin ``y_j f_d(x_j)`` under the current
   kernel weights d (the most violating points of each class);
2. ``G_i alpha`` (m x n numbers) is updated from the two new kernel rows, and
   ``alpha' G_i alpha`` from their entries;
3. the accumulated event matrix ``sum_t M_i^(t) = [[a I, u_i], [u_i', a]]`` with
   ``|u_i| = ||A_i alpha|| / (2 rho)`` is exponentiated in closed form (P-Lemma 4.1); only
   ``p_i^12 = -e^a sinh(eps' |u_i|) / Z`` matters, and since the common factor ``e^a / Z``
   cancels in FIND-alpha and in the normalised weights, ``sinh`` is evaluated with the largest
   exponent subtracted (footnote 3): ``e^-M sinh(x) = e^(x - M) (1 - e^(-2x)) / 2``;
4. after ``T = ceil(8 rho^2 ln(n) / eps^2)`` iterations (``rho^2 = 3/2``,
   ``eps' = -ln(1 - eps / (2 rho))``), the kernel weights are extracted by P-4.4/4.5,
   ``mu_i ∝ |p_i^12| / sqrt(r_i alpha' G_i alpha)``, and alpha is the average of the
   FIND-alpha picks.

State: ``G_i alpha`` for every kernel (m x n floats), ``alpha' G_i alpha`` (m), alpha (n); the two
new rows per iteration come from a column provider through an LRU
:class:`~mklearn.kernels.cache.RowCache`, so no n x n matrix is formed.

Our changes to the paper (``variant="adaptive"``, the default; ``variant="paper"`` runs Algorithm
3 as printed). Each was measured against the exact optimum (tests/test_mwu.py, docs/mwumkl.md):

- **Exponent scale.** The paper fixes the SDP's value guess to ``omega = 1``; with unit-trace
  kernels ``||A_i alpha||`` stays far below 1 per unit of ``1'alpha``, so ``eps' |u_i|`` stays
  below about 1 and the weights stay uniform to three digits (the paper variant returns the
  UNIFORM kernel). We take ``omega`` from the current iterate, ``1 / max_i alpha' G_i alpha``
  at ``1'alpha = 1``: the exponent becomes ``eps' t ||A_i alpha|| / (2 rho max_k ||A_k
  alpha||)``, the multiplicative-weights learning rate relative to the size of the gains.
- **Averaged weights.** MWU guarantees the *average* of the weight player's strategies, not
  its last one: mu is the average of the normalised weights over the second half of the run.
- **1-norm soft margin with the C-SVC's C.** The C-SVC dual at the optimum is ``t beta`` with
  ``beta`` a point of the *reduced* class hulls ``beta <= c`` (Bennett and Bredensteiner, ICML
  2000); its bounded support vectors carry ``beta_j = c``, so ``c`` is about one over twice
  the number of margin violators per class. About 50 times along the run we fit the C-SVC
  primal along the current direction (scale and bias, a convex 1-D search), count the
  violators (larger class count ``v``) and let FIND-alpha pick only points whose average
  alpha stays at most ``c = 1 / (2 v)``; when no point of a class is below the cap, the
  smallest margin is taken anyway (counted as ``forced``). With no violator (or ``C = inf``)
  there is no cap: the hard margin. The paper's footnote 1 instead bounds the normalised
  alpha by C directly (kept in the paper variant).
- **Scale and bias** (the paper gives neither for the soft margin): alpha = ``s * alpha_bar``
  and b minimise the C-SVC primal along the MWU direction (``s`` by bounded search, b the
  weighted-median hinge bias, so alpha may exceed C: it is a primal scaling, not a dual
  point). With ``C = inf`` (and in the paper variant) ``alpha = alpha_bar / alpha_bar' G(mu)
  alpha_bar`` and b puts the two hull points at equal and opposite decision values, as in
  the authors' code.
- **Certificate.** ``L``: the l1-MKL dual ``1'alpha - max_i alpha' G_i alpha / (2 r_i)`` at
  the best feasible multiple of alpha_bar, a lower bound on the optimum; ``U``: the C-SVC
  primal of the returned model with kernel ``K(mu)``, an upper bound on ``J(mu)`` and so on
  the optimum (the SVM primal of the exact solve when ``J(mu)`` is evaluated, if smaller).
  ``duality_gap = U - L``; NaN with ``C = inf`` when the model leaves a margin violation
  (the hard-margin primal is then infinite).
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
from numba import njit
from scipy.optimize import minimize_scalar
from sklearn.exceptions import ConvergenceWarning

from mklearn._sizes import OBJECTIVE_BLOCK_BYTES
from mklearn.extending import is_l1_simplex
from mklearn.formulation.losses import svm_primal
from mklearn.kernels.base import check_operator, prepare
from mklearn.solvers._renamed import former_operator_name
from mklearn.solvers.mwu_blocks import MWUBlocks
from mklearn.solvers.result import HistoryRecord, MKLResult, relative_gap
from mklearn.svm import svc_dual

RHO = math.sqrt(1.5)  # width of the SDP: rho^2 <= 3/2 (paper, appendix A.3)
VARIANTS = ("adaptive", "paper")
OBJECTIVE_MAX_N = 3000  # evaluate J(mu) exactly (an n x n SVM) up to this many samples
HISTORY_POINTS = 50  # records of bounds along the run
LOOSE_GAP = 0.1  # a run ending above this relative gap is far from the optimum: warned


def iteration_count(n_samples: int, epsilon: float) -> int:
    """``T = ceil(8 rho^2 ln(n) / epsilon^2)`` with ``rho^2 = 3/2`` (paper, section 4.2)."""
    return max(1, math.ceil(8.0 * RHO**2 * math.log(max(n_samples, 2)) / epsilon**2))


@njit(cache=True)
def _most_violating_pair(margin, y, acc, limit):
    """FIND-alpha: in each class the smallest margin among points with ``acc + 1/2 <= limit``.

    Returns ``(j_pos, j_neg, forced)``; ``forced`` counts the classes in which no point was
    below the cap, so that the overall smallest margin was taken.
    """
    best_pos, best_neg = np.inf, np.inf
    j_pos, j_neg = -1, -1
    any_pos, any_neg = np.inf, np.inf
    k_pos, k_neg = -1, -1
    for j in range(margin.shape[0]):
        v = margin[j]
        eligible = acc[j] + 0.5 <= limit
        if y[j] > 0:
            if v < any_pos:
                any_pos, k_pos = v, j
            if eligible and v < best_pos:
                best_pos, j_pos = v, j
        else:
            if v < any_neg:
                any_neg, k_neg = v, j
            if eligible and v < best_neg:
                best_neg, j_neg = v, j
    forced = 0
    if j_pos < 0:
        j_pos = k_pos
        forced += 1
    if j_neg < 0:
        j_neg = k_neg
        forced += 1
    return j_pos, j_neg, forced


def _check_inputs(operator, y, C, regularizer, epsilon, variant):
    check_operator(operator, "mwu")
    if not (regularizer == "l1" or is_l1_simplex(regularizer)):
        raise ValueError(
            "MWUMKL solves the trace-constrained l1 MKL only (regularizer 'l1'); "
            f"got {regularizer!r}."
        )
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating)):
        raise ValueError(f"epsilon must be a number in (0, 1); got {epsilon!r}.")
    if not 0.0 < epsilon < 1.0:
        raise ValueError(
            f"epsilon must be in (0, 1) (the MWUMKL approximation factor is 1 + epsilon); "
            f"got {epsilon!r}."
        )
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}; got {variant!r}.")
    if not C > 0:
        raise ValueError(f"C must be > 0 (C = inf is the hard margin); got {C!r}.")
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (operator.n_samples,):
        raise ValueError(
            f"y has shape {y.shape}; expected ({operator.n_samples},) for the provider."
        )
    if not np.all(np.abs(y) == 1.0):
        raise ValueError("y must hold labels in {-1, +1}.")
    if not ((y > 0).any() and (y < 0).any()):
        raise ValueError(
            "MWUMKL needs labels of both classes (+1 and -1): it looks for the closest points "
            "of the two class hulls; y has one class only."
        )
    return np.ascontiguousarray(y)


def _blocks(operator, y, inv_trace, valid, cache_size):
    """The per-kernel state: on Dask workers when the provider offers it
    (``mwu_blocks``, :class:`mklearn.distributed.DaskColumns`), else in this process."""
    if operator.capabilities.mwu_blocks:
        return operator.mwu_blocks(y, inv_trace, valid, cache_size)
    return MWUBlocks(operator, y, inv_trace, valid, cache_size)


def _learned_kernel(operator, mu):
    """``sum_i mu_i K_i`` (n x n), built from blocks of provider rows."""
    n = operator.n_samples
    active = np.flatnonzero(mu)
    block = max(1, int(OBJECTIVE_BLOCK_BYTES // (8 * n * max(active.size, 1))))
    K = np.empty((n, n))
    for start in range(0, n, block):
        rows = np.arange(start, min(start + block, n))
        K[rows] = np.tensordot(mu[active], operator.rows(rows, kernels=active), axes=1)
    return 0.5 * (K + K.T)


class _ScaledHinge:
    """``min_b sum_i max(0, 1 - y_i (s phi_i + b))`` for many scales ``s > 0``, one sort.

    The hinge of point i kinks at ``b = y_i - s phi_i``; within a class these keep their order
    as s varies, so each class is sorted once and the best bias (the weighted median of
    :func:`~mklearn.formulation.losses.best_hinge_bias`, uniform costs: the smallest kink where the
    right slope ``#neg kinks <= b - #pos kinks > b`` turns non-negative) is found by binary
    search over each class's kinks in O(log^2 n) instead of a sort per s.
    """

    def __init__(self, phi, y):
        self.phi, self.y = phi, y
        self.phi_pos = np.sort(phi[y > 0])[::-1]  # kinks 1 - s phi ascending
        self.phi_neg = np.sort(phi[y < 0])[::-1]  # kinks -1 - s phi ascending

    def _slope(self, b, kinks_pos, kinks_neg):
        below_neg = np.searchsorted(kinks_neg, b, side="right")
        above_pos = kinks_pos.size - np.searchsorted(kinks_pos, b, side="right")
        return below_neg - above_pos

    def _first_nonnegative(self, kinks, kinks_pos, kinks_neg):
        low, high = 0, kinks.size  # the slope is non-decreasing along the sorted kinks
        while low < high:
            mid = (low + high) // 2
            if self._slope(kinks[mid], kinks_pos, kinks_neg) >= 0:
                high = mid
            else:
                low = mid + 1
        return kinks[low] if low < kinks.size else math.inf

    def fit(self, s):
        """(best bias, hinge sum) for decision values ``s * phi``."""
        kinks_pos, kinks_neg = 1.0 - s * self.phi_pos, -1.0 - s * self.phi_neg
        bias = min(
            self._first_nonnegative(kinks_pos, kinks_pos, kinks_neg),
            self._first_nonnegative(kinks_neg, kinks_pos, kinks_neg),
        )
        hinge = np.maximum(0.0, 1.0 - self.y * (s * self.phi + bias))
        return float(bias), float(hinge.sum())


def _primal_scale(phi, y, lam, C):
    """Scale s and bias b minimising the C-SVC primal ``s^2 lam / 2 + C sum hinge`` along the
    direction with unit decision values ``phi`` and ``||w||^2 = lam``; returns (s, b, value).

    The primal is jointly convex in (s, b), so its minimum over b is convex in s (unimodal in
    log s): a bounded scalar search over ``log s``.
    """
    scale = max(float(np.abs(phi).max()), 1e-300)
    low = math.log(1e-6 / scale)
    high = math.log(max(1e6 / scale, 10.0 / lam if lam > 0 else 0.0))
    hinge = _ScaledHinge(phi, y)

    def primal(log_s):
        s = math.exp(log_s)
        return 0.5 * s * s * lam + C * hinge.fit(s)[1]

    found = minimize_scalar(primal, bounds=(low, high), method="bounded", options={"xatol": 1e-4})
    s = math.exp(found.x)
    bias, total = hinge.fit(s)
    return s, bias, 0.5 * s * s * lam + C * total


def _midpoint_model(beta, phi, y, lam, C):
    """Hard margin: ``alpha = beta / lam`` and the bias that puts the two hull points at equal
    and opposite decision values (as the authors' code, github.com/fishcorn/mwumkl2, does:
    ``b = (navg - pavg) / (pavg + navg)``); the C-SVC primal of that model."""
    s = 1.0 / lam
    f = s * phi
    pos, neg = y > 0, y < 0
    bias = -(float(beta[pos] @ f[pos]) + float(beta[neg] @ f[neg])) / float(beta.sum())
    hinge = np.maximum(0.0, 1.0 - y * (f + bias))
    if math.isinf(C):
        return s, bias, (0.5 * s * s * lam if hinge.max() <= 1e-9 else math.inf)
    return s, bias, 0.5 * s * s * lam + C * float(hinge.sum())


def _lower_bound(beta, lam_max, C):
    """The l1-MKL dual ``1'alpha - max_i alpha' G_i alpha / (2 r_i)`` at the best feasible
    multiple ``alpha = s beta`` (``0 <= alpha <= C``): a lower bound on the optimum."""
    s = min(1.0 / lam_max if lam_max > 0 else math.inf, C / float(beta.max()))
    return s - 0.5 * s * s * lam_max


def _model(acc, t, weighted_quad, margin, y, C, midpoint):
    """Model (alpha, bias) at the average pick ``acc / t`` with kernel weights d (through
    ``weighted_quad = sum_i d_i acc' G_i acc / r_i`` and ``margin = G(d) acc``), its primal
    value (upper bound) and the margin violators."""
    beta = acc / t
    lam = weighted_quad / t**2  # beta' G(d) beta
    phi = y * margin / t  # decision values of alpha = beta: sum_j beta_j y_j K(d)(x_j, x_i)
    if midpoint or lam <= 0:
        s, bias, upper = _midpoint_model(beta, phi, y, lam if lam > 0 else 1.0, C)
    else:
        s, bias, upper = _primal_scale(phi, y, lam, C)
    violators = y * (s * phi + bias) < 1.0
    return s * beta, bias, upper, violators


@former_operator_name('combination')
def mwu_mkl(
    operator,
    y,
    C,
    regularizer="l1",
    *,
    tol=None,
    max_iter=None,
    callback=None,
    epsilon=0.2,
    cache_size=200.0,
    variant="adaptive",
    iterations=None,
    evaluate_objective=None,
):
    """MWUMKL (Moeller et al., AISTATS 2014, Algorithm 3) for trace-constrained l1 MKL.

    Parameters
    ----------
    operator : KernelColumns or StackColumns
        Column provider of the m base kernels on the n training points.
    y : ndarray of shape (n,)
        Labels in {-1, +1}, both present.
    C : float > 0
        C-SVC cost (module notes: how the normalised algorithm honours it); ``np.inf`` is the
        hard margin. With ``variant="paper"``, C is the paper's bound on the normalised alpha
        (no bound when ``C >= 1/2``).
    regularizer : "l1" or L1Simplex
        Only the l1 (simplex / trace) constraint is supported.
    tol : ignored
        MWUMKL runs the fixed number of iterations set by ``epsilon`` (``iterations``
        overrides it) and does not stop on the gap: ``epsilon`` sets its precision, and the
        relative duality gap it reaches (often a few percent) is reported, not compared.
    max_iter : int, optional
        Checks at the most (outer iterations: the run is checked about
        ``HISTORY_POINTS`` = 50 times, every ``T // 50`` iterations); a run cut short by it
        has ``stop_reason="max_iter"`` and ``converged=False``. None: no cap.
    callback : callable, optional
        Called with each history record (about 50 along the run; keys below plus
        ``objective`` = the upper bound and ``n_svm_solves``, 1 in the last record when
        J(mu) was evaluated, else 0).
    epsilon : float in (0, 1), default=0.2
        Approximation parameter; ``T = ceil(12 ln(n) / epsilon^2)`` iterations.
    cache_size : float, default=200
        Megabytes of kernel rows (all m kernels of one sample each) kept in an LRU cache;
        at least one row (``8 m n`` bytes).
    variant : {"adaptive", "paper"}, default="adaptive"
        "adaptive": our version (module notes: value-scaled exponent, soft-margin cap from the
        margin violators, weights averaged over the second half, primal-optimal scale and
        bias); "paper": Algorithm 3 as printed (``omega = 1``, final weights, alpha scaled by
        ``1 / alpha' G(mu) alpha`` with the midpoint bias of the authors' code).
    iterations : int, optional
        Run this many iterations instead of T.
    evaluate_objective : bool, optional
        Evaluate ``J(mu)`` exactly by one SVM solve on the learned ``n x n`` kernel (default:
        when ``n <= 3000``). It does not change the model.

    Returns
    -------
    MKLResult
        ``kernel_weights`` mu: the model's kernel is ``sum_i mu_i K_i`` with
        ``sum_i mu_i tr(K_i) = 1``. ``alpha`` and ``intercept`` come from the MWU iterate (no
        SVM). ``objective`` is ``J(mu) = max 1'alpha - alpha' Y K(mu) Y alpha / 2`` over
        ``0 <= alpha <= C, y'alpha = 0``, by SMO to 1e-8, when evaluated, else NaN.
        ``duality_gap`` is ``U - L`` (module notes; NaN when U is infinite) and
        ``relative_duality_gap`` its :func:`~mklearn.solvers.result.relative_gap`, both
        those of the last history record, which certifies the returned model.
        ``n_iter`` counts the checks (one history record each); ``converged`` is whether
        the run made its ``T`` iterations. ``n_svm_solves`` is 1 if J(mu) was evaluated,
        else 0. ``history`` records ``iteration`` (the MWU iteration t), ``iterations_planned``
        (T), ``lower`` (L), ``upper`` (U at the current weights; the last record: at the
        returned weights), ``duality_gap``, ``relative_duality_gap``, ``max_weight``, ``cap``
        (normalised bound on alpha), ``forced`` (picks made above the cap so far),
        ``cache_hits``, ``cache_misses`` and ``time``.

    Raises
    ------
    ValueError
        If epsilon is not in (0, 1), y has one class only or values other than +-1, C <= 0,
        the regulariser is not l1, or ``operator`` is not a column provider.
    """
    prepare(operator, "mwu")
    y = _check_inputs(operator, y, C, regularizer, epsilon, variant)
    C = float(C)
    adaptive = variant == "adaptive"
    start = time.perf_counter()
    n = operator.n_samples
    traces = operator.diagonal().sum(axis=1, dtype=np.float64)  # float32 sums overflow
    trace_ok = np.isfinite(traces) & (traces > 0)
    if not trace_ok.any():
        raise ValueError("every base kernel has zero trace; MWUMKL needs a non-zero kernel.")
    inv_trace = np.where(trace_ok, 1.0 / np.where(trace_ok, traces, 1.0), 0.0)
    T = iteration_count(n, epsilon) if iterations is None else int(iterations)
    if T < 1:
        raise ValueError(f"iterations must be >= 1; got {iterations!r}.")
    kappa = -math.log1p(-epsilon / (2.0 * RHO)) / (2.0 * RHO)  # eps' / (2 rho)
    blocks = _blocks(operator, y, inv_trace, trace_ok, cache_size)
    hard = math.isinf(C)
    if adaptive:
        cap = math.inf  # set from the margin violators at each record
    else:
        cap = C if C < 0.5 else math.inf  # the paper's bound on the normalised alpha

    acc = np.zeros(n)  # FIND-alpha picks, 1/2 each (sum = t)
    margin = np.zeros(n)  # G(d) acc for the current weights d
    last_total, accumulate = 1.0, False  # weights d = ratio / total; in the average?
    every = max(1, T // HISTORY_POINTS)
    cap_checks = math.inf if max_iter is None else max_iter
    history, forced = [], 0
    for t in range(1, T + 1):
        j_pos, j_neg, n_forced = _most_violating_pair(margin, y, acc, cap * t)
        forced += n_forced
        top = blocks.update(j_pos, j_neg, last_total, accumulate)  # max ||A_i alpha||
        acc[j_pos] += 0.5
        acc[j_neg] += 0.5
        c = kappa  # the exponent's scale: the paper's, or relative to the largest gain
        if adaptive:
            c = kappa * t / top if top > 0.0 else 0.0
        total, weighted_quad, largest, margin = blocks.combine(c, c * top)
        margin /= total
        last_total, accumulate = total, t > T // 2  # the MWU guarantee is on the average
        if t % every and t < T:
            continue
        if t == T or len(history) + 1 >= cap_checks:
            break  # the last check is the returned model's (below)
        _, _, upper, violators = _model(
            acc, t, weighted_quad / total, margin, y, C, hard or not adaptive
        )
        if adaptive and not hard:
            worst = max(int(violators[y > 0].sum()), int(violators[y < 0].sum()))
            cap = 0.5 / worst if worst > 0 else math.inf
        lower = _lower_bound(acc / t, top**2 / t**2, C)
        _check(history, callback, start, t, T, lower, upper, largest / total, cap, forced,
               blocks.counts())

    counts = blocks.counts()  # before finish, which may free the blocks' state
    # averaged over the second half of the run (the last weights if it stopped before)
    weights, weighted_quad, margin = blocks.finish(last_total, accumulate,
                                                   adaptive and accumulate)
    norm = weights.sum()
    weights /= norm
    margin /= norm
    alpha, bias, upper, _ = _model(acc, t, weighted_quad / norm, margin, y, C,
                                   hard or not adaptive)
    lower = _lower_bound(acc / t, top**2 / t**2, C)
    mu = weights * inv_trace  # weights of the raw kernels: sum_i mu_i r_i = 1
    objective, n_svm = math.nan, 0
    if evaluate_objective is None:
        evaluate_objective = n <= OBJECTIVE_MAX_N
    if evaluate_objective:
        K = _learned_kernel(operator, mu)
        qp = svc_dual(K, y, C, tol=1e-8)
        objective, n_svm = -qp.objective, 1
        if not hard:
            upper = min(upper, svm_primal(K, qp.alpha, y, np.full(n, C))[0])
    record = _check(history, callback, start, t, T, lower, upper, weights.max(), cap, forced,
                    counts, n_svm)
    finished = t == T
    if finished:
        _warn_if_loose(record["relative_duality_gap"], T, epsilon)
    return MKLResult(
        kernel_weights=mu,
        alpha=alpha,
        intercept=float(bias),
        objective=float(objective),
        duality_gap=record["duality_gap"],
        relative_duality_gap=record["relative_duality_gap"],
        n_iter=len(history),
        n_svm_solves=n_svm,
        converged=finished,
        history=history,
        stop_reason="converged" if finished else "max_iter",
    )


def _warn_if_loose(relative, T, epsilon):
    """A ``ConvergenceWarning`` when the ``T`` iterations that ``epsilon`` sets end above
    ``LOOSE_GAP``: the weights are far from the MKL optimum (the model may be near constant)."""
    if relative > LOOSE_GAP:
        warnings.warn(
            f"MWUMKL made its {T} iterations (epsilon={epsilon:g}) and ended at relative "
            f"duality gap {relative:.2g}, above {LOOSE_GAP:g}: the kernel weights are far from "
            "the MKL optimum; a smaller solver_options['epsilon'] narrows the gap (the "
            "iterations grow as 1/epsilon^2), or solver='spg' solves to tol",
            ConvergenceWarning, stacklevel=3)


def _check(history, callback, start, t, T, lower, upper, max_weight, cap, forced, counts,
           n_svm_solves=0):
    """Append (and pass to ``callback``) the record of a check at iteration ``t`` of ``T``:
    the bounds ``lower`` and ``upper`` (an infinite ``upper``: no gap, NaN); ``counts`` the
    row cache's (hits, misses)."""
    finite = math.isfinite(upper)
    hits, misses = counts
    record = HistoryRecord({
        "iteration": t,
        "iterations_planned": T,
        "lower": lower,
        "upper": upper,
        "duality_gap": max(float(upper - lower), 0.0) if finite else math.nan,
        "relative_duality_gap": relative_gap(upper, lower) if finite else math.nan,
        "objective": upper,
        "max_weight": max_weight,
        "cap": cap,
        "forced": forced,
        "cache_hits": hits,
        "cache_misses": misses,
        "n_svm_solves": n_svm_solves,
        "time": time.perf_counter() - start,
    })
    history.append(record)
    if callback is not None:
        callback(record)
    return record
