"""SPG-GMKL: spectral projected gradient descent for Generalized MKL, and the PGD baseline.

Jain, Vishwanathan and Varma, "SPG-GMKL: Generalized Multiple Kernel Learning with a Million
Kernels", KDD 2012, Algorithm 1; restated in ALGORITHMS.md section 1. Minimises
``T(d) = r(d) + W(d)``, ``W(d) = max_{alpha in A} 1'alpha - 1/2 alpha' Y K(d) Y alpha`` over the
feasible set of the regulariser. Each iteration solves the inner SVM at the current weights
(warm started from the last alpha), differentiates ``W`` (``dW/dd_k = -alpha' Y dK/dd_k Y
alpha / 2``), and moves along the spectral projected-gradient direction
``p = d - P(d - lambda grad)`` under a non-monotone line search.

:class:`SPGGMKL` composes these parts (:mod:`mklearn.solvers.spg_parts`,
:mod:`mklearn.solvers.spg_newton`, :mod:`mklearn.solvers.spg_evaluator`), each with its own
constants and source; the parameter of :func:`spg_gmkl` that turns each off is in brackets:

- :class:`~mklearn.solvers.spg_parts.SpectralStep`: the Barzilai-Borwein step length, clipped
  (Birgin, Martinez and Raydan, SIAM J. Optim. 10, 2000; the paper, line 10) [``spectral``];
- :class:`~mklearn.solvers.spg_parts.NonmonotoneSearch`: Zhang and Hager's non-monotone
  line search (SIAM J. Optim. 14, 2004) with the paper's adaptive eta from ``eta0``
  [``nonmonotone``];
- :class:`~mklearn.solvers.spg_parts.InnerPrecision`: the SMO tolerance following the gap
  (the paper's inner-precision tuning), down to ``inner_tol`` [``precision_tuning``];
- :class:`~mklearn.solvers.spg_newton.NewtonModel`: a projected Newton step over the live
  kernels (HessianMKL, Chapelle and Rakotomamonjy, 2008; our addition) [``second_order``];
- :class:`~mklearn.solvers.spg_parts.KernelScreening`: kernel shrinking, predicted
  re-screening and, with the Newton step, a restricted start (our addition);
- :class:`~mklearn.solvers.spg_parts.DualBound`: the duality-gap certificate, with the
  aggregate dual point and the cutting planes (our addition) [``aggregate_bound``,
  ``cutting_planes``];
- :class:`~mklearn.solvers.spg_parts.MirrorFallback`: mirror descent where the certificate
  stalls at a kink of ``W`` (our addition) [``fallback``];
- a start from the weights of a subsample's problem (:mod:`mklearn.solvers.coarse`; our
  addition) [``coarse_start``].

The run stops at the relative gap ``tol``, after ``max_iter`` iterations or ``max_time``
seconds. What the combination and the regulariser offer is read once, at the start
(:func:`~mklearn.solvers.spg_evaluator.combination_features`). docs/spg_gmkl.md gives the
measured reasons for each addition to the paper.

Each switch can be turned off; all off gives the PGD baseline of the authors' code (a LIBSVM
fork whose ``SPGSolver`` runs PGD with ``use_SPG = 0``): Armijo search (eta = 0) along the
projection arc ``P(d - s grad)`` from ``s = 1`` at every iteration, the test
``T <= T_n - gamma s ||P(d - grad) - d||^2``, a fixed inner tolerance.

Stopping (sums of kernels): the duality gap ``U - L`` relative to ``|U|``, with
``U = r(d) + P_svm(alpha, b; d)`` (the SVM primal at the current alpha and the best bias: an upper
bound on ``T(d)``) and ``L = 1'alpha - r*(g(alpha)/2)`` (the MKL dual at the same alpha: a lower
bound on the optimum). Both bounds hold whatever the inner precision, so the gap is a proof.
Products of kernels have no such dual: they stop on the projected-gradient norm.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from mklearn.kernels.base import prepare
from mklearn.solvers._renamed import former_operator_name
from mklearn.solvers.coarse import coarse_weights
from mklearn.solvers.result import HistoryRecord, MKLResult, relative_gap
from mklearn.solvers.spg_evaluator import Evaluator, Point, combination_features
from mklearn.solvers.spg_newton import NewtonModel
from mklearn.solvers.spg_parts import (
    DualBound,
    InnerPrecision,
    KernelScreening,
    MirrorFallback,
    NonmonotoneSearch,
    SpectralStep,
)

__all__ = ["SPGGMKL", "spg_gmkl"]


@dataclass(frozen=True)
class SPGSwitches:
    """The switches and settings of SPG-GMKL: the keyword arguments of :func:`spg_gmkl`
    besides ``tol``, ``max_iter``, ``callback`` and ``task`` (described there), with their
    defaults; every addition off is the PGD baseline."""

    spectral: bool = True
    nonmonotone: bool = True
    precision_tuning: bool = True
    inner_tol: float = 1e-6
    eta0: float = 0.5
    d0: Any = None
    second_order: bool = True
    max_time: float | None = None
    fallback: bool = True
    aggregate_bound: bool = True
    coarse_start: bool = True
    cutting_planes: bool = True

    @classmethod
    def of(cls, options: dict) -> SPGSwitches:
        """The switches ``options`` names (the others at their defaults); TypeError naming
        an unknown key and the known ones."""
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise TypeError(f"spg_gmkl() got unexpected keyword arguments {unknown}; its "
                            f"switches are {known}")
        return cls(**options)

    @classmethod
    def baseline(cls) -> dict:
        """Every addition off (each boolean switch False): the PGD baseline's options."""
        return {f.name: False for f in fields(cls) if f.type == "bool"}


@dataclass
class RunState:
    """Where the run is: the current point and its gradient, the iteration count, the record.

    Attributes
    ----------
    point : Point
        The current point (the SVM solved at its weights).
    grad : ndarray of shape (m,)
        Gradient of T there; NaN off the live kernels.
    n_iter : int
        Outer iterations of SPG so far.
    spent : int
        Iterations of the mirror-descent phase (counted in ``max_iter``).
    history : list of dict
        One record per iteration (:class:`~mklearn.solvers.result.MKLResult`).
    converged : bool
        The certificate (or the projected-gradient norm, for products) met ``tol``.
    stop_reason : str
        "converged", "max_iter", "max_time" or "stalled".
    result : MKLResult or None
        The mirror phase's result, when it certified the run.
    """

    point: Point
    grad: np.ndarray
    n_iter: int = 0
    spent: int = 0
    history: list = field(default_factory=list)
    converged: bool = False
    stop_reason: str = "max_iter"
    result: MKLResult | None = None


class SPGGMKL:
    """SPG-GMKL (or PGD with every addition off) on one binary problem; see :func:`spg_gmkl`
    for the parameters and the module docstring for the parts.

    :meth:`run` builds the parts, starts (coarse or restricted), iterates and returns the
    certified result.
    """

    def __init__(self, operator, y, C, regularizer, switches=None, *, tol=1e-3, max_iter=500,
                 callback=None, task=None):
        self.operator, self.regularizer, self.task = operator, regularizer, task
        self.y = np.asarray(y, dtype=np.float64)
        self.cost = np.broadcast_to(np.asarray(C, dtype=np.float64), self.y.shape).copy()
        self.tol, self.max_iter, self.callback = tol, max_iter, callback
        self.switches = SPGSwitches() if switches is None else switches

    def run(self) -> MKLResult:
        """Minimise T; the result with its certificate."""
        self.start = time.perf_counter()
        self._build()
        state = self._begin()
        self._iterate(state)
        return state.result if state.result is not None else self._finish(state)

    def _build(self):
        """The parts, from what the operator and the regulariser offer."""
        on = self.switches
        features = self.features = combination_features(self.operator, self.regularizer)
        self.evaluator = Evaluator(self.operator, features, self.regularizer, self.y,
                                   self.cost, self.task)
        self.precision = InnerPrecision(on.precision_tuning, on.inner_tol, self.tol,
                                        features.linear)
        self.step = SpectralStep(on.spectral)
        self.search = NonmonotoneSearch(on.spectral, on.nonmonotone, on.eta0, self.tol)
        self.screening = KernelScreening(self.regularizer)
        self.bound = DualBound(self.evaluator, self.tol, on.aggregate_bound, on.cutting_planes)
        self.newton = NewtonModel(
            on.second_order and (features.simplex_newton or features.orthant_newton),
            features.linear)
        self.fallback = MirrorFallback(
            on.fallback and on.spectral and self.task is None and on.max_time is None
            and features.simplex_newton, self.operator, self.y, self.cost,
            self.regularizer, tol=self.tol, inner_tol=on.inner_tol,
            precision_tuning=on.precision_tuning, callback=self.callback)

    # ------------------------------------------------------------------ start
    def _begin(self) -> RunState:
        """The first point: the SVM at the initial weights, then, for l1 on a sum of kernels
        from the default start, at the restricted start."""
        d, given = self._initial_weights()
        ev, screening, eps = self.evaluator, self.screening, self.precision.eps
        point = ev.solve(d, None, eps)
        grad = ev.gradient(point)
        self.bound.start(point)
        restricted = self.switches.second_order and not given and self.features.simplex_newton
        if restricted:  # start on the kernels that screening keeps
            d = screening.restricted_start(d, grad)
            restricted = not np.array_equal(d, point.d)  # too few kernels: d is unchanged
        if restricted:
            point = ev.solve(d, point.qp.alpha, eps, point.products)
        screening.screen(point, grad)
        if restricted:
            grad = ev.gradient(point, screening.live)
        self.search.restart(point.T)
        self.step.restart(grad)
        return RunState(point=point, grad=grad)

    def _initial_weights(self):
        """(weights, whether they were given or came from a coarse start)."""
        regularizer = self.regularizer
        coarse = None
        on = self.switches
        if (on.coarse_start and on.d0 is None and self.task is None and on.max_time is None
                and on.spectral and self.features.simplex_newton):
            # the subsample's run has this run's switches (coarse_start on, no d0, no time cap)
            coarse = coarse_weights(
                self.operator, self.y, self.cost,
                lambda part, y_part, cost_part, **k: spg_gmkl(part, y_part, cost_part,
                                                              regularizer, **k,
                                                              **asdict(self.switches)),
                tol=self.tol, max_iter=self.max_iter)
        if coarse is not None:  # feasible already (projecting again could spread rounding over
            d, self.evaluator.n_solves = coarse  # every kernel: sum(d) = 1 - 1e-16)
            return d.copy(), True
        d0 = self.switches.d0
        start = regularizer.initial_weights(self.features.n_kernels) if d0 is None else (
            np.asarray(d0, float))
        return regularizer.project(start), d0 is not None

    # ------------------------------------------------------------------ iterations
    def _iterate(self, state):
        """Iterations until a stop, ``max_iter`` (the mirror phase's included) or a result."""
        for n_iter in range(1, self.max_iter + 1):
            state.n_iter = n_iter
            if n_iter + state.spent > self.max_iter:
                state.n_iter -= 1
                return
            if self._iteration(state):
                return

    def _iteration(self, state) -> bool:
        """One iteration: certify, tune the inner precision, record, then the fallback, a
        Newton step or an SPG step; whether the run stops."""
        upper, lower, rel_gap, planes_certify = self._certify(state)
        self.precision.set_gap_stop(self.evaluator, upper)
        d = state.point.d
        pg_norm = float(np.max(np.abs(self.screening.project(d - state.grad) - d)))
        self.precision.follow(state.point, upper, lower, rel_gap, pg_norm)
        record = self._record(state, rel_gap, pg_norm)
        certified = (rel_gap <= self.tol) if np.isfinite(rel_gap) else (pg_norm <= self.tol)
        if planes_certify or (state.point.complete and certified):
            state.converged, state.stop_reason = True, "converged"
            state.n_iter -= 1
            return True
        if self.switches.max_time is not None and record["time"] > self.switches.max_time:
            state.stop_reason = "max_time"
            return True
        if self.fallback.due(self.bound.passes, self.screening.since_full):
            return self._fall_back(state)
        if self._newton_step(state, rel_gap, upper - lower):
            return False
        return self._spg_step(state)

    def _certify(self, state):
        """(upper, lower, relative gap, whether the planes certify): the bounds at the
        current point, over every kernel when a full pass is due (which re-screens)."""
        ev, point, certificate = self.evaluator, state.point, self.bound.certificate
        upper, lower = ev.bounds(point)
        rel_gap = relative_gap(upper, lower)  # restricted to live kernels
        if self.screening.full_pass_due(point, rel_gap, self.tol):
            state.grad = ev.gradient(point)  # every kernel: exact certificate
            upper, lower = ev.bounds(point)
        certificate.update(point, upper, lower, point.complete)
        if point.complete:
            rel_gap = self.bound.full_pass(point)
            self.screening.screen(point, state.grad)
            self.screening.since_full = 0
        planes_certify = self.bound.planes_certify()
        if planes_certify:
            rel_gap = certificate.relative_gap
        return upper, lower, rel_gap, planes_certify

    def _record(self, state, rel_gap, pg_norm):
        """The history record of this iteration (passed to the callback)."""
        record = HistoryRecord({
            "iteration": state.n_iter - 1 + state.spent,
            "objective": state.point.T,
            "relative_duality_gap": rel_gap,
            "pg_norm": pg_norm,
            "inner_tol": self.precision.eps,
            "n_live": int(self.screening.live.sum()),
            "n_svm_solves": self.evaluator.n_solves,
            "time": time.perf_counter() - self.start,
        })
        state.history.append(record)
        if self.callback is not None:
            self.callback(record)
        return record

    def _fall_back(self, state) -> bool:
        """The mirror phase; its result if it certifies, else SPG resumes at its weights with
        the better lower bound of the two."""
        ev, certificate = self.evaluator, self.bound.certificate
        phase = self.fallback.run(
            certificate, state.point, state.history, ev, start=self.start,
            max_iter=min(self.fallback.budget,
                         self.max_iter - state.n_iter - state.spent + 1))
        if phase.converged:
            state.result = phase
            return True
        # the next record follows the phase's last
        state.spent = state.history[-1]["iteration"] + 1 - state.n_iter
        point = ev.solve(phase.kernel_weights, phase.alpha, self.precision.eps)
        grad = ev.gradient(point)
        certificate.update(point, *ev.bounds(point))
        certificate.lower = max(certificate.lower, phase.objective - phase.duality_gap)
        self.screening.screen(point, grad)
        self.search.restart(point.T)
        self.step.restart(grad)
        self.bound.passes = []
        state.point, state.grad = point, grad
        return False

    def _newton_step(self, state, rel_gap, gap) -> bool:
        """A Newton step when one is due; whether it was taken."""
        if not self.newton.ready(rel_gap):
            return False
        ev, live, precision = self.evaluator, self.screening.live, self.precision
        precision.at_most(NewtonModel.INNER_TOL)
        point = state.point
        if point.tol > precision.eps:  # the Hessian needs the SVM's partition: solve further
            point = ev.solve(point.d, point.qp.alpha, precision.eps, point.products)
            state.point, state.grad = point, ev.gradient(point, live)
            self.search.lower_reference(point.T)
        accepted = self.newton.step(ev, point, state.grad, live, precision.eps, self.search)
        self.newton.judge(point, accepted, gap)
        if accepted is None:
            return False
        self._advance(state, accepted, 1.0)
        self.search.restart(accepted.T)
        return True

    def _spg_step(self, state) -> bool:
        """A line search along the spectral direction (PGD: the projection arc); whether the
        run stops (stalled)."""
        point, grad, live = state.point, state.grad, self.screening.live
        direction, change, slope = self._direction(point.d, grad, live)
        # re-screening every kernel is the answer to a restricted problem without descent,
        # unless the last re-screen led straight back here (then tighten the SVM as before)
        rescreen = self.screening.may_rescreen(point, state.n_iter)
        if slope <= 0.0 and rescreen:  # none on the live kernels
            self.screening.force_rescreen(state.n_iter)
            return False
        if slope <= 0.0:  # no descent left at this inner precision
            if self.precision.at_floor(point):
                state.stop_reason = "stalled"
                return True
            self.precision.after_no_descent(point)
            self._resolve(state)
            return False
        accepted, s, first = self.search.search(self.evaluator, point, direction, slope,
                                                self.screening, self.precision, rescreen)
        if accepted is None:
            return self._search_failed(state, rescreen)
        self.search.adapt(point, first, grad, change, live, self.step.length)
        self._advance(state, accepted, s)
        self.search.average(accepted.T)
        return False

    def _direction(self, d, grad, live):
        """(direction, change, slope): ``d - P(d - lambda grad)`` (SPG), or ``grad`` along
        the projection arc ``P(d - s grad)`` from ``s = 1`` (PGD, the authors' code)."""
        project = self.screening.project
        if self.switches.spectral:
            direction = change = d - project(d - self.step.length * grad)
            return direction, change, float(grad[live] @ direction[live])
        change = d - project(d - grad)
        return grad, change, float(change[live] @ change[live])

    def _search_failed(self, state, rescreen) -> bool:
        """No trial passed: re-screen every kernel (live kernels only), else re-solve the
        point at the floor tolerance, so that the search compares like with like; whether
        the run stops (stalled)."""
        if rescreen:  # the restricted problem is solved as far as this search can tell
            self.screening.force_rescreen(state.n_iter)
            return False
        if self.precision.at_floor(state.point):
            state.stop_reason = "stalled"
            return True
        self.precision.to_floor()
        self._resolve(state)
        self.search.restart(state.point.T)
        return False

    def _resolve(self, state):
        """The current point solved again at the current inner tolerance."""
        point = state.point
        point = self.evaluator.solve(point.d, point.qp.alpha, self.precision.eps,
                                     point.products)
        state.point, state.grad = point, self.evaluator.gradient(point, self.screening.live)

    def _advance(self, state, accepted, s):
        """Move to ``accepted`` (a step of length ``s`` along the direction): its gradient on
        the live kernels, the next spectral step, the predicted re-screening."""
        live = self.screening.live
        new_grad = self.evaluator.gradient(accepted, live)
        self.step.update(s, (accepted.d - state.point.d)[live], (new_grad - state.grad)[live])
        state.point, state.grad = accepted, new_grad
        self.screening.since_full += 1
        state.grad = self.screening.unfreeze_predicted(self.evaluator, accepted, new_grad)

    # ------------------------------------------------------------------ result
    def _finish(self, state) -> MKLResult:
        """The result at the best certified point (the last one for products)."""
        ev, certificate, point = self.evaluator, self.bound.certificate, state.point
        if state.stop_reason == "stalled" and np.isfinite(certificate.upper):
            ev.gradient(point)  # the last point was re-solved more precisely: certify it
            certificate.update(point, *ev.bounds(point))
            state.converged = certificate.relative_gap <= self.tol
            state.stop_reason = "converged" if state.converged else state.stop_reason
        if linear := np.isfinite(certificate.upper):
            point = certificate.point
        return MKLResult(
            kernel_weights=point.d,
            alpha=point.qp.alpha,
            intercept=point.bias if linear else -point.qp.rho,
            objective=point.T,
            duality_gap=certificate.gap if linear else np.nan,
            relative_duality_gap=certificate.relative_gap if linear else np.nan,
            n_iter=state.n_iter + state.spent,
            n_svm_solves=ev.n_solves,
            n_smo_steps=ev.n_smo_steps,
            converged=state.converged,
            history=state.history,
            stop_reason=state.stop_reason,
        )


@former_operator_name('combination')
def spg_gmkl(
    operator,
    y,
    C,
    regularizer,
    *,
    tol=1e-3,
    max_iter=500,
    callback=None,
    task=None,
    **switches,
) -> MKLResult:
    """Minimise ``T(d) = r(d) + W(d)`` by SPG-GMKL (or PGD with every switch off).

    Parameters
    ----------
    operator : SumOfKernels
        Provides ``kernel(d)`` of shape (n, n) and ``kernel_gradient(d, v)`` of shape (m,).
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float or ndarray of shape (n,)
        SVM cost (per sample allowed).
    regularizer : L1Simplex or LpNorm
        Value, gradient, projection and conjugate of r.
    tol : float
        Stop when the relative duality gap is below ``tol``.
    max_iter : int
        Maximal number of outer iterations.
    spectral, nonmonotone, precision_tuning : bool
        The three switches of the paper's ablation (Tables 7 and 11).
    inner_tol : float
        SMO tolerance when ``precision_tuning`` is off; the floor of the schedule otherwise
        (capped at ``tol / 100`` so that the gap can reach ``tol``).
    eta0 : float
        Initial non-monotonicity weight in [0.1, 1] (ignored when ``nonmonotone`` is off).
    d0 : ndarray of shape (m,), optional
        Starting weights (projected onto the feasible set); default: the regulariser's.
    callback : callable, optional
        Called as ``callback(record)`` after each outer iteration with the history record.
    second_order : bool
        Try a projected Newton step over the live kernels before each SPG step: l1 on sums
        of kernels, and combinations with ``derivative_times`` (products of RBF kernels)
        under a regulariser with ``hessian`` (l1 penalty, lp); ignored otherwise.
    max_time : float, optional
        Stop (``stop_reason="max_time"``, not converged) after this many seconds: the time
        cap of the paper's PGD runs.
    task : ClassificationTask, RegressionTask or OneClassTask, optional
        The inner problem and its loss (:mod:`mklearn.solvers.tasks`); default C-SVC on
        ``(y, C)``. With
        another task ``y`` and ``C`` are unused, ``alpha`` of the result is the task's dual
        vector and ``intercept`` the bias of the task's primal.
    fallback : bool
        Continue by mirror descent when the certified gap stalls (l1 on a sum of kernels,
        C-SVC, no ``max_time``); ignored otherwise.
    aggregate_bound : bool
        Lower bounds from convex combinations of SVM solutions
        (:class:`~mklearn.solvers.dual_aggregate.DualAggregate`; sums of kernels); off, each
        solution bounds alone (the PGD baseline).
    coarse_start : bool
        Start from the kernel weights of the problem on a subsample
        (:mod:`mklearn.solvers.coarse`: l1 on a sum of kernels, C-SVC, many points, a
        combination with ``subset``); its SVM solves count in ``n_svm_solves``. Ignored
        with ``d0``, ``max_time`` or ``spectral`` off.
    cutting_planes : bool
        Also bound the optimum from below by the cutting planes of the SVM solutions
        (:class:`~mklearn.solvers.cutting_planes.CuttingPlaneBound`, SILP's master LP): l1
        on a sum of at most ``cutting_planes.MAX_KERNELS`` kernels. The planes of every
        solve are kept when the quadratic terms of every kernel are cheap (support blocks),
        else those of full-gradient passes only.

    Returns
    -------
    MKLResult
    """
    switches = SPGSwitches.of(switches)
    prepare(operator, "spg")
    return SPGGMKL(operator, y, C, regularizer, switches, tol=tol, max_iter=max_iter,
                   callback=callback, task=task).run()
