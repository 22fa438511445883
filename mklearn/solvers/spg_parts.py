"""The parts of SPG-GMKL: step rule, line search, inner precision, screening, bounds, fallback.

Each part keeps its own constants and state; :class:`mklearn.solvers.spg.SPGGMKL` composes them
(Jain, Vishwanathan and Varma, KDD 2012, Algorithm 1). docs/spg_gmkl.md gives the measured
reasons for the additions to the paper.
"""

from __future__ import annotations

import time

import numpy as np

from mklearn.solvers.cutting_planes import MAX_KERNELS as PLANES_MAX_KERNELS
from mklearn.solvers.cutting_planes import CuttingPlaneBound
from mklearn.solvers.dual_aggregate import DualAggregate
from mklearn.solvers.mirror import mirror_descent
from mklearn.solvers.result import Certificate, HistoryRecord, MKLResult, relative_gap


class SpectralStep:
    """The spectral (Barzilai-Borwein) step length, clipped to ``[LAMBDA_MIN, LAMBDA_MAX]``
    (Birgin, Martinez and Raydan, SIAM J. Optim. 10, 2000; the paper's Algorithm 1, line 10);
    1 throughout when ``spectral`` is off (PGD).

    Two additions: the first step moves no weight by more than ``FIRST_MOVE``, and without
    curvature (``s'y <= 0``) the next step is twice the step just accepted, not
    ``LAMBDA_MAX``.
    """

    LAMBDA_MIN = 1e-10  # step length; the paper's lower clip
    LAMBDA_MAX = 1e10  # step length; the paper's upper clip
    FIRST_MOVE = 0.1  # weight; the first step's largest change (BMR's rule lands on a vertex)

    def __init__(self, spectral):
        self.spectral = spectral
        self.length = 1.0

    def restart(self, grad):
        """The first step length from ``grad`` (NaN off the live kernels)."""
        self.length = self.initial(grad) if self.spectral else 1.0

    def initial(self, grad):
        """The unprojected step moves no weight by more than ``FIRST_MOVE``. Birgin, Martinez
        and Raydan's ``1 / ||P(d - grad) - d||_inf`` assumes a well-scaled problem; MKL
        gradients are of the order of the SVM objective (1e4 at C = 100)."""
        norm = float(np.nanmax(np.abs(grad)))  # NaN off the live kernels
        if not norm > 0:
            return 1.0
        return float(np.clip(self.FIRST_MOVE / norm, self.LAMBDA_MIN, self.LAMBDA_MAX))

    def update(self, s, d_change, grad_change):
        """After a step of length ``s`` along the direction: ``s's / s'y``; without curvature
        (the gradient did not change, as on a linear piece of W between kinks) ``2 s`` times
        the current length: from ``LAMBDA_MAX`` a trial at a vertex of the simplex would cross
        the next kink and backtrack by halvings."""
        if not self.spectral:
            self.length = 1.0
            return
        sz = float(d_change @ grad_change)
        if sz <= 0.0:
            self.length = float(np.clip(2.0 * s * self.length, self.LAMBDA_MIN, self.LAMBDA_MAX))
        else:
            self.length = float(np.clip(float(d_change @ d_change) / sz, self.LAMBDA_MIN,
                                        self.LAMBDA_MAX))


class NonmonotoneSearch:
    """The non-monotone line search of Zhang and Hager (SIAM J. Optim. 14, 2004) with the
    paper's adaptive eta, or Armijo's (eta = 0) along the projection arc for PGD.

    A trial ``T`` is accepted when ``T <= C_k - ARMIJO_GAMMA s slope``, ``C_k`` the average
    ``(eta Q C + T) / (eta Q + 1)`` of the accepted values (Zhang and Hager's reference).
    Backtracking as the authors' C code (``SPGSolver``): the minimiser of the quadratic
    through the two values and the slope, halving instead when it is at least ``0.9 s`` or at
    most 0.1, and always from ``HALVE_BELOW`` down; from there a trial whose value the search
    does not use once it fails stops as soon as its SVM proves it fails.
    """

    ARMIJO_GAMMA = 1e-4  # share of the predicted decrease; the paper's sufficient decrease
    MAX_HALVINGS = 40  # trials per search; then the point is re-solved more precisely
    HALVE_BELOW = 0.1  # step; from here failed trials halve the step (the authors' code)
    MIN_MOVE = 1e-12  # weight; a trial moving no weight further is d itself
    NEGLIGIBLE = 0.001  # share of tol |T|; predicted decrease not worth a solve (live kernels)
    ETA_STEP = 0.025  # eta's move (the paper and the authors' code)
    GOOD_MODEL = 0.9  # decrease / model's decrease above which eta rises (less monotone)
    BAD_MODEL = 0.1  # ... below which it falls
    ETA_MIN, ETA_MAX = 0.1, 1.0  # eta's range (the paper)

    def __init__(self, spectral, nonmonotone, eta0, tol):
        self.spectral = spectral
        self.nonmonotone = nonmonotone
        self.tol = tol
        self.eta = eta0 if nonmonotone else 0.0
        self.ref_value, self.ref_weight = np.inf, 1.0

    def restart(self, value):
        """The reference is ``value`` alone."""
        self.ref_value, self.ref_weight = value, 1.0

    def lower_reference(self, value):
        """The reference at most ``value`` (the point re-solved more precisely)."""
        self.ref_value = min(self.ref_value, value)

    def sufficient(self, value, decrease):
        """Whether ``value`` passes the test for the predicted ``decrease`` (a Newton step)."""
        return value <= self.ref_value - self.ARMIJO_GAMMA * decrease

    def search(self, evaluator, point, direction, slope, screening, precision, rescreen):
        """Backtrack along ``d - s direction`` from ``s = 1``; (accepted point or None, last
        ``s``, the first trial's T or None). ``rescreen``: on live kernels that may be
        re-screened, give up once the predicted decrease is negligible."""
        d = point.d
        s, accepted, first = 1.0, None, None
        for halving in range(self.MAX_HALVINGS):
            trial_d = screening.project(d - s * direction)
            if self.spectral and np.max(np.abs(trial_d - d)) <= self.MIN_MOVE:
                break  # the trial is d itself, to rounding
            if rescreen and s * slope <= self.NEGLIGIBLE * self.tol * abs(self.ref_value):
                break  # the restricted problem is solved as far as the run needs: re-screen
            bound = self.ref_value - self.ARMIJO_GAMMA * s * slope
            # a trial whose value the search does not use once it fails (halvings from
            # HALVE_BELOW on; no cutting planes) stops as soon as its SVM proves it fails
            early = first is not None and s <= self.HALVE_BELOW and evaluator.planes is None
            trial = evaluator.solve(trial_d, point.qp.alpha, precision.eps, point.products,
                                    bound if early else None)
            first = trial.T if first is None else first
            if not trial.rejected and trial.T <= bound:
                accepted = trial
                break
            s = self.backtrack(s, slope, point.T, trial.T)
            precision.during_search(halving)
        return accepted, s, first

    def adapt(self, point, first, grad, change, live, step_length):
        """eta after a search from ``point`` along ``change`` whose first trial's value was
        ``first``: against the decrease of the quadratic model of the spectral step."""
        if self.nonmonotone:
            quadratic = float(change[live] @ change[live]) / (2.0 * step_length)
            predicted = float(grad[live] @ change[live]) - quadratic
            self.eta = self.adapt_eta(self.eta, point.T - first, predicted)

    def average(self, value):
        """Zhang and Hager's reference after an accepted value: ``(eta Q C + T) / (eta Q + 1)``."""
        new_weight = self.eta * self.ref_weight + 1.0
        self.ref_value = (self.eta * self.ref_weight * self.ref_value + value) / new_weight
        self.ref_weight = new_weight

    @classmethod
    def backtrack(cls, s, slope, value, trial_value):
        """The next trial step after ``s`` failed: the minimiser of the quadratic through the
        value, the slope and the failed trial, unless it is at least ``0.9 s`` or at most 0.1
        (then ``s / 2``); from ``s = HALVE_BELOW`` down always ``s / 2``, whatever the
        trial's value."""
        if s <= cls.HALVE_BELOW:
            return 0.5 * s
        curvature = trial_value - value + s * slope
        ratio = 0.5 * s * slope / curvature if curvature > 0 else 0.5
        if not ratio < 0.9:
            ratio = 0.5
        return s * ratio if s * ratio > 0.1 else 0.5 * s

    @classmethod
    def adapt_eta(cls, eta, actual, predicted):
        """Move eta by ``ETA_STEP``: more averaging (less monotone) when the first trial's
        decrease reaches ``GOOD_MODEL`` of the quadratic model's, less when it falls below
        ``BAD_MODEL`` of it."""
        ratio = actual / predicted if predicted > 0 else 1.0
        if ratio > cls.GOOD_MODEL:
            return min(cls.ETA_MAX, eta + cls.ETA_STEP)
        if ratio < cls.BAD_MODEL:
            return max(cls.ETA_MIN, eta - cls.ETA_STEP)
        return eta


class InnerPrecision:
    """The SMO tolerance following the run's gap (the paper's inner-precision tuning; its
    exact rule was lost in extraction).

    It starts at ``START`` and follows ``min(previous, max(floor, 0.1 min(relative gap,
    projected-gradient norm)))``, which keeps the SVM's error an order of magnitude below the
    outer optimality measure; tightened tenfold every third failed trial of a search, tenfold
    at once while the SVM's own duality gap ``U - T`` is over half the run's gap, and to the
    floor before a point is declared stalled; never tightened once the SVM's gap is under
    ``PRECISE_SHARE tol |U|``, where a tighter SMO cannot change the certificate (every solve
    also stops there: ``Evaluator.gap_stop``). Off, the tolerance stays ``inner_tol``.
    """

    START = 1e-1  # SMO tolerance of the first solves; far from the optimum W needs little
    PRECISE_SHARE = 0.1  # share of tol |U|; an SVM gap below it cannot change the certificate
    FOLLOW = 0.1  # share of min(relative gap, projected-gradient norm) the tolerance follows
    TIGHTEN = 10.0  # factor of each tightening; an order of magnitude below the last
    TIGHTEN_EVERY = 3  # failed trials of a search between tightenings
    SVM_GAP_SHARE = 0.5  # share of the run's gap above which the SVM's gap dominates it

    def __init__(self, tuning, inner_tol, tol, linear):
        self.tuning = tuning
        self.tol = tol
        self.linear = linear
        self.floor = min(inner_tol, tol / 100.0)  # so that the gap can reach tol
        self.eps = self.START if tuning else inner_tol
        self.precise = False  # the SVM's gap is under PRECISE_SHARE tol |U|

    def set_gap_stop(self, evaluator, upper):
        """Every solve may stop once its own duality gap cannot matter to the certificate."""
        if self.tuning and self.linear and np.isfinite(upper):
            evaluator.gap_stop = self.PRECISE_SHARE * self.tol * abs(upper)

    def follow(self, point, upper, lower, rel_gap, pg_norm):
        """The tolerance after a gap check at ``point`` (bounds ``upper``, ``lower``)."""
        svm_gap = upper - point.T
        self.precise = self.linear and svm_gap <= self.PRECISE_SHARE * self.tol * abs(upper)
        if self.tuning and not self.precise:
            target = self.FOLLOW * min(rel_gap if np.isfinite(rel_gap) else np.inf, pg_norm)
            if self.linear and svm_gap > self.SVM_GAP_SHARE * (upper - lower):
                target = min(target, point.tol / self.TIGHTEN)
            self.eps = min(self.eps, max(self.floor, target))

    def during_search(self, halving):
        """Every ``TIGHTEN_EVERY`` failed trials: the inexact objective misleads the search."""
        if (self.tuning and halving % self.TIGHTEN_EVERY == self.TIGHTEN_EVERY - 1
                and not self.precise):
            self.eps = max(self.floor, self.eps / self.TIGHTEN)

    def after_no_descent(self, point):
        """No descent direction at ``point``'s precision: tighten below it."""
        self.eps = max(self.floor, min(self.eps, point.tol) / self.TIGHTEN)

    def at_most(self, tol):
        self.eps = min(self.eps, tol)

    def to_floor(self):
        self.eps = self.floor

    def at_floor(self, point):
        """Whether ``point`` was solved at the floor (no tighter solve is left)."""
        return point.tol <= self.floor


class KernelScreening:
    """Kernel shrinking (LIBSVM's shrinking applied to kernels; our addition).

    A kernel at zero weight that the regulariser's ``screen`` flags is frozen, so most
    iterations combine and differentiate only the live kernels; every
    ``FULL_GRADIENT_EVERY`` iterations, and before any stop, the gradient over every kernel
    re-screens and gives the exact certificate. A full pass that keeps ``K_k v`` predicts
    ``g_k(v') ~ g_k(v) + 2 (K_k v)'(v' - v)`` after each step and unfreezes at once the kernels
    whose prediction reaches ``PREDICTED_RATIO`` of the largest live ``g_k``. A restricted
    start keeps the ``START_KERNELS`` most attractive kernels after the first SVM.
    """

    FULL_GRADIENT_EVERY = 10  # iterations between gradients over every kernel (re-screen)
    RESCREEN_CYCLE = 3  # iterations within which a re-screen forced by a search is not repeated
    PREDICTED_RATIO = 0.7  # predicted g_k / largest live g_k that unfreezes (likely to enter)
    START_KERNELS = 50  # kernels of the restricted start; the first steps combine tens

    def __init__(self, regularizer):
        self.regularizer = regularizer
        self.live = None  # bool (m,): kernels not frozen
        self.since_full = 0  # iterations since the last full gradient
        self.rescreened_at = -self.RESCREEN_CYCLE - 1  # iteration of the last forced re-screen

    def screen(self, point, grad):
        """Freeze the kernels that the regulariser's ``screen`` flags at ``point``."""
        self.live = ~self.regularizer.screen(point.d, grad)

    def full_pass_due(self, point, rel_gap, tol):
        """Whether the gradient over every kernel is due at ``point`` (the restricted gap
        ``rel_gap`` is met, or ``FULL_GRADIENT_EVERY`` iterations have passed)."""
        return not point.complete and (
            rel_gap <= tol or self.since_full >= self.FULL_GRADIENT_EVERY)

    def may_rescreen(self, point, n_iter):
        """Whether a search without descent on the live kernels may re-screen every kernel
        (not when the last re-screen led straight back here)."""
        return not point.complete and n_iter - self.rescreened_at > self.RESCREEN_CYCLE

    def force_rescreen(self, n_iter):
        self.since_full, self.rescreened_at = self.FULL_GRADIENT_EVERY, n_iter

    def project(self, v):
        """Project onto the feasible set with the frozen kernels held at zero."""
        if self.live.all():
            return self.regularizer.project(v)
        out = np.zeros_like(v)
        out[self.live] = self.regularizer.project(v[self.live])
        return out

    def restricted_start(self, d, grad):
        """Uniform weights on the ``START_KERNELS`` kernels of largest ``g_k`` (most negative
        gradient), when that keeps at most half of them; else ``d`` unchanged. At the l1
        optimum the kernels in use share the largest ``g_k``."""
        if self.START_KERNELS == 0 or d.size < 2 * self.START_KERNELS:  # keep at most half
            return d
        keep = np.zeros(d.size, bool)
        keep[np.argsort(grad)[:self.START_KERNELS]] = True
        return keep / keep.sum()

    def unfreeze_predicted(self, evaluator, point, grad):
        """Unfreeze the kernels whose predicted ``g_k`` at ``point`` reaches
        ``PREDICTED_RATIO`` of the largest live one; return ``grad`` with their exact
        gradients filled in (a prediction only chooses kernels)."""
        if self.live.all():
            return grad
        predicted = evaluator.predicted_terms(point)
        if predicted is None:
            return grad
        g = point.g.copy()
        extra = np.flatnonzero(~self.live & (predicted >= self.PREDICTED_RATIO
                                             * np.max(g[self.live])))
        if extra.size == 0:
            return grad
        g_extra = evaluator.partial_gradient(point, extra)
        g[extra] = g_extra
        point.g = g
        grad = grad.copy()
        grad[extra] = evaluator.regularizer.gradient(point.d)[extra] - 0.5 * g_extra
        point.grad = grad
        self.live = self.live.copy()
        self.live[extra] = True
        return grad


class DualBound:
    """The certificate: the best upper bound ``U = r(d) + P_svm(alpha, b; d)`` and the best
    lower bound on the optimum (sums of kernels; ALGORITHMS.md section 1).

    The lower bound ``L = 1'alpha - r*(g(alpha) / 2)`` of each full-gradient pass, raised by
    the aggregate dual point (:class:`~mklearn.solvers.dual_aggregate.DualAggregate`, with
    ``aggregate_bound``) and by SILP's cutting planes
    (:class:`~mklearn.solvers.cutting_planes.CuttingPlaneBound`, with ``cutting_planes``: l1
    on at most ``MAX_PLANE_KERNELS`` kernels). Both bounds hold whatever the inner precision.
    """

    MAX_PLANE_KERNELS = PLANES_MAX_KERNELS  # kernels; the master LP grows fast with them
    STALL_SHARE = 0.5  # gap / last pass's gap above which an aggregate costs a pass

    def __init__(self, evaluator, tol, aggregate_bound, cutting_planes):
        self.evaluator = evaluator
        self.tol = tol
        features = evaluator.features
        self.use_aggregate = features.linear and aggregate_bound
        self.use_planes = (cutting_planes and features.linear and features.simplex_newton
                           and features.n_kernels <= self.MAX_PLANE_KERNELS)
        self.certificate = Certificate()
        self.aggregate = None
        self.passes = []  # (certified relative gap, objective) at each full-gradient pass

    def start(self, point):
        """The bounds of the first point; the aggregate and the planes start there."""
        ev = self.evaluator
        self.certificate.update(point, *ev.bounds(point), point.complete)
        if self.use_aggregate:
            self.aggregate = DualAggregate(ev.task, ev.operator, ev.regularizer)
            self.aggregate.add(point.d, point.qp.alpha, point.g)
        if self.use_planes:
            ev.planes = CuttingPlaneBound(ev.features.n_kernels)
            if point.complete:
                ev.add_plane(point, point.g)

    def full_pass(self, point):
        """After a full-gradient pass at ``point``: the aggregate's bound (from the pass's
        products ``K_k v`` at no extra pass, else one quadratic pass, taken only while the
        gap has not halved since the previous pass); the certified relative gap."""
        certificate = self.certificate
        if self.aggregate is not None and certificate.relative_gap > self.tol:
            products = self.evaluator.products_at(point)
            stalling = bool(self.passes) and (
                certificate.relative_gap > self.STALL_SHARE * self.passes[-1][0])
            if products is not None or stalling:
                certificate.lower = max(certificate.lower, self.aggregate.add(
                    point.d, point.qp.alpha, point.g, products))
        rel_gap = certificate.relative_gap
        self.passes.append((rel_gap, point.T))
        return rel_gap

    def planes_certify(self):
        """Raise the lower bound by the planes' LP; whether that certifies the run."""
        certificate = self.certificate
        if self.evaluator.planes is None or not certificate.relative_gap > self.tol:
            return False
        certificate.lower = max(certificate.lower, self.evaluator.planes.bound())
        return certificate.relative_gap <= self.tol


class MirrorFallback:
    """Mirror descent where SPG's certificate stalls (our addition; l1 on a sum of kernels,
    C-SVC).

    At a kink of ``W`` the gradient from the SVM's solution is only a subgradient: the
    spectral step and the line search creep and that alpha bounds loosely. When the certified
    gap has not halved over ``STALL_PASSES`` full-gradient passes while the objective closed
    less than ``STALL_PROGRESS`` of the gap certified at the first of them, the run continues by
    :func:`~mklearn.solvers.mirror.mirror_descent` (which needs no smoothness: Beck and
    Teboulle, Oper. Res. Lett. 31, 2003, Thm. 4.2), ``FALLBACK_ITER`` steps in all per run, a
    phase ending once ``FALLBACK_PATIENCE`` steps have not made the gap 1% smaller (mirror descent
    too creeps then: on w8a-1000 of ``bench_unseen.py`` at C = 1 a phase took the gap from
    7.1e-3 to 3.6e-3 in 7 steps and to 3.0e-3 in the next 43; ending there took its fit
    from 165 SVM solves to 114, a8a-1500-poly's from 130 to 122); SPG then resumes, and may
    fall back again after as many stalled passes. Both runs bound the same problem, so their
    best bounds certify the result.
    """

    STALL_PASSES = 2  # full passes without halving the certified gap: the bound lags
    # share of the certified gap the objective must fall meanwhile, else a stall (a tenth of
    # tol missed runs creeping down 0.1% of the gap an iteration: 150 SPG steps on w8a)
    STALL_PROGRESS = 0.1
    FALLBACK_ITER = 50  # mirror-descent steps of all phases; SPG resumes at their weights
    FALLBACK_PATIENCE = 7  # ... or sooner, after this many without a 1% smaller gap

    def __init__(self, enabled, operator, y, cost, regularizer, *, tol, inner_tol,
                 precision_tuning, callback):
        self.enabled = enabled
        self.budget = self.FALLBACK_ITER  # mirror steps left to the run's phases
        self.operator, self.y, self.cost, self.regularizer = operator, y, cost, regularizer
        self.tol, self.inner_tol, self.precision_tuning = tol, inner_tol, precision_tuning
        self.callback = callback

    def due(self, passes, since_full):
        """Whether the fallback runs now (at a full pass, the gap stalled)."""
        return (self.enabled and self.budget > 0 and since_full == 0
                and self.stalled(passes))

    def stalled(self, passes):
        """Whether over the last ``STALL_PASSES`` passes the certified gap has not halved
        while the objective fell by less than ``STALL_PROGRESS`` of the gap certified then:
        the primal creeps (or is as good as the tolerance asks) and the dual bound does not
        follow."""
        if len(passes) <= self.STALL_PASSES:
            return False
        (gap_then, value_then), (gap_now, value_now) = passes[-1 - self.STALL_PASSES], passes[-1]
        return gap_now > 0.5 * gap_then and value_then - value_now < (
            self.STALL_PROGRESS * gap_then * abs(value_now))

    def run(self, certificate, point, history, evaluator, *, max_iter, start):
        """Up to ``max_iter`` steps of mirror descent from ``point`` (taken from the run's
        ``budget``), recorded in ``history`` and counted in ``evaluator.n_solves``; the
        result keeps the better model and the better lower bound of the two runs."""
        n_spg = history.pop()["iteration"]  # the last record is the phase's starting point
        spg_solves = evaluator.n_solves
        merged = _MergedRecords(self, certificate, history, n_spg, spg_solves, start)
        result = mirror_descent(
            self.operator, self.y, self.cost, self.regularizer, tol=self.tol,
            max_iter=max(max_iter, 1), callback=merged, inner_tol=self.inner_tol,
            precision_tuning=self.precision_tuning, d0=point.d, alpha0=point.qp.alpha,
            n_iter_no_change=self.FALLBACK_PATIENCE,
        )
        self.budget -= max(result.n_iter, 1)
        evaluator.n_solves += result.n_svm_solves
        evaluator.n_smo_steps += result.n_smo_steps
        return self._combined(certificate, result, history, n_spg, spg_solves,
                              evaluator.n_smo_steps)

    def _combined(self, certificate, result, history, n_spg, spg_solves, smo_steps):
        """The better model and the better bounds of SPG's run so far and the mirror's."""
        lower = max(certificate.lower, result.objective - result.duality_gap)
        if result.objective < certificate.upper:
            weights, alpha, bias, objective = (result.kernel_weights, result.alpha,
                                               result.intercept, result.objective)
        else:
            best = certificate.point
            weights, alpha, bias, objective = best.d, best.qp.alpha, best.bias, best.T
        upper = min(certificate.upper, result.objective)
        gap, relative = max(upper - lower, 0.0), relative_gap(upper, lower)
        converged = relative <= self.tol
        return MKLResult(
            kernel_weights=weights, alpha=alpha, intercept=bias, objective=objective,
            duality_gap=gap, relative_duality_gap=relative, n_iter=n_spg + result.n_iter,
            n_svm_solves=spg_solves + result.n_svm_solves, n_smo_steps=smo_steps,
            converged=converged,
            history=history, stop_reason="converged" if converged else result.stop_reason,
        )


class _MergedRecords:
    """The mirror phase's callback: its records in SPG's history, with the bounds of both."""

    def __init__(self, fallback, certificate, history, n_spg, spg_solves, start):
        self.fallback, self.history, self.start = fallback, history, start
        self.n_spg, self.spg_solves = n_spg, spg_solves
        self.spg_upper = certificate.upper
        self.best_lower = certificate.lower

    def __call__(self, record):
        lower = record["objective"] * (1.0 - record["relative_duality_gap"])
        self.best_lower = max(self.best_lower, lower)
        upper = min(self.spg_upper, record["objective"])
        out = HistoryRecord({
            "iteration": self.n_spg + record["iteration"],
            "objective": upper,
            "relative_duality_gap": relative_gap(upper, self.best_lower),
            "pg_norm": np.nan,
            "inner_tol": record["inner_tol"],
            "n_live": self.fallback.operator.n_kernels,
            "n_svm_solves": self.spg_solves + record["n_svm_solves"],
            "time": time.perf_counter() - self.start,
        })
        self.history.append(out)
        if self.fallback.callback is not None:
            self.fallback.callback(out)
