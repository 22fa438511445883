"""MKL solvers in feature space, on low-rank kernels ``K_k = Phi_k Phi_k'``.

The operator is a :class:`~mklearn.kernels.low_rank.LowRankKernels` (capability
``feature_blocks``). With ``v = sum_t signs_t a_t e_index[t]`` and the blocks
``u_k = Phi_k' v``, every term the exact solvers read from kernel rows has an ``O(n R)`` form:
``g_k = v' K_k v = ||u_k||^2``, ``K(d) v = sum_k d_k Phi_k u_k``, and the SVM on ``K(d)`` is
the linear SVM on the columns ``sqrt(d_k) Phi_k`` (:class:`mklearn.linear.FeatureSVM`).
The formulations and certificates are those of the exact solvers (ALGORITHMS.md sections 1
and 2): the duality gap ``U - L`` with ``U = r(d) + P(alpha; d)`` (the SVM primal at
``w = sum_i v_i phi_d(x_i)`` and its best bias) and ``L = -p' alpha - r*(g / 2)``.

- :func:`spg_features`: SPG-GMKL (Jain, Vishwanathan and Varma, KDD 2012, Algorithm 1:
  spectral step, projection, non-monotone line search) for any regulariser with value,
  gradient and projection (l1 on the simplex, lp);
- :func:`smooth_dual_features`: SMO-MKL's lp and KL formulations (Vishwanathan et al.,
  NIPS 2010): coordinate ascent on the smooth MKL dual ``-p' a - r*(g(a) / 2)`` in feature
  space, the kernel weights ``d = grad r*(g / 2)`` following every step, then SPG on the
  weights from there;
- :func:`average_features`: the uniform weights ``1 / m`` and one SVM;
- :func:`easymkl_features`: EasyMKL (Aiolli and Donini, Neurocomputing 2015), its class-hull
  QP by L-BFGS on an R-dimensional dual (:mod:`mklearn.linear.hull`), then the SVM or KOMD;
- :func:`align_features`, :func:`alignf_features`, :func:`fheuristic_features`: the weights
  of :mod:`mklearn.solvers.seeds` from sums over the features
  (:func:`~mklearn.solvers.kernel_sums.feature_kernel_sums`: ``O(n R)``, or ``O(n R^2)`` for
  ALIGNF's Frobenius products, exact over every pair of points), and one SVM.
"""

from __future__ import annotations

import time

import numpy as np

from mklearn.extending import implements
from mklearn.kernels.base import require
from mklearn.linear import (
    KIND_KL,
    KIND_LP,
    FeatureProblem,
    FeatureSVM,
    block_products,
    block_terms,
    seed_of,
)
from mklearn.linear.hull import hull_qp_features
from mklearn.solvers import seeds
from mklearn.solvers.easymkl import komd_ridge, normalised_weights
from mklearn.solvers.kernel_sums import feature_kernel_sums
from mklearn.solvers.result import MKLResult, relative_gap
from mklearn.solvers.tasks import ClassificationTask
from mklearn.svm.mkl_step import kernel_weights

__all__ = ["align_features", "alignf_features", "average_features", "easymkl_features",
           "fheuristic_features", "smooth_dual_features", "spg_features"]

_KINDS = {"lp": KIND_LP, "kl": KIND_KL}
INNER_TOL = 0.1  # first spread of the projected gradient a solve stops at (LIBLINEAR's eps)
INNER_SHRINK = 0.1  # each gap check that misses tol divides the inner tolerance by this
INNER_FLOOR = 1e-9  # the tightest inner tolerance
_ARMIJO = 1e-4  # sufficient decrease of the non-monotone search
_MEMORY = 10  # objective values the non-monotone search compares with
_STEP_RANGE = (1e-10, 1e10)  # the spectral step's clip
_HALVINGS = 20  # line-search trials per iteration at the most


def _task(y, C, task):
    if task is not None:
        return task
    cost = np.broadcast_to(np.asarray(C, dtype=np.float64), np.shape(y)).copy()
    return ClassificationTask(np.asarray(y, dtype=np.float64), cost)


class _Certificate:
    """Bounds of one dual point: the SVM primal on K(d) and the MKL dual."""

    def __init__(self, operator, problem, task, regularizer):
        self.operator, self.problem, self.task = operator, problem, task
        self.regularizer = regularizer
        self.everything = np.arange(operator.n_kernels)

    def blocks(self, alpha):
        """Every block ``u_k = Phi_k' v`` (one pass) and ``g = ||u_k||^2``."""
        u = self.problem.blocks(alpha)
        return u, block_terms(u, self.operator.starts)

    def bounds(self, alpha, u, g, d):
        """``(U, L, bias)``: an upper bound on T(d), a lower bound on the optimum, and the
        bias of the primal point."""
        f = self.problem.rows.outputs(u, d, self.everything)
        loss, bias = self.task.loss(f)
        primal = 0.5 * float(d @ g) + loss
        upper = self.regularizer.value(d) + primal
        lower = self.task.linear_value(alpha) - self.regularizer.conjugate(0.5 * g)
        return upper, lower, bias


def _record(history, start, iteration, objective, upper, lower, n_solves, callback, **extra):
    record = {"iteration": iteration, "objective": float(objective),
              "relative_duality_gap": float(relative_gap(upper, lower)),
              "n_svm_solves": int(n_solves), "time": time.perf_counter() - start, **extra}
    history.append(record)
    if callback is not None:
        callback(record)


def _result(d, alpha, bias, objective, upper, lower, n_iter, n_solves, converged, history,
            u, starts, stop_reason):
    coef = np.repeat(d, np.diff(starts)) * u
    return MKLResult(kernel_weights=d, alpha=alpha, intercept=float(bias),
                     objective=float(objective), duality_gap=max(float(upper - lower), 0.0),
                     n_iter=int(n_iter), n_svm_solves=int(n_solves), converged=converged,
                     history=history, stop_reason=stop_reason,
                     relative_duality_gap=float(relative_gap(upper, lower)), feature_coef=coef)


def _start(operator, name, y, C, task, capability="feature_blocks"):
    require(operator, capability, name,
            "use kernel_approximation='nystroem' (or 'rff'), which builds LowRankKernels")
    task = _task(y, C, task)
    problem = FeatureProblem.of(operator, task)
    return task, problem


def average_features(operator, y, C, regularizer=None, *, tol=1e-3, max_iter=100,
                     callback=None, task=None, random_state=0):
    """Uniform weights ``d_k = 1/m`` and the SVM on ``K(d)`` in feature space (MKLpy's
    AverageMKL), solved until its relative duality gap is at most ``tol``.

    Parameters
    ----------
    operator : LowRankKernels
    y : ndarray of shape (n,)
        Labels in {-1, +1} (unused when ``task`` is given).
    C : float or ndarray of shape (n,)
    regularizer : ignored
    tol : float
        Relative duality gap of the SVM.
    max_iter : int
        Gap checks at the most (outer iterations: the SVM re-solved at a tenfold tighter
        inner tolerance after each check above ``tol``).
    task : RegressionTask, optional

    Returns
    -------
    MKLResult
        With ``feature_coef`` (shape (R,)): ``f(x) = Phi(x) . feature_coef + intercept``.
    """
    start = time.perf_counter()
    task, problem = _start(operator, "average", y, C, task, "feature_rows")
    d = np.full(operator.n_kernels, 1.0 / operator.n_kernels)
    return _fixed_weights(operator, problem, task, d, tol, max_iter, callback, random_state,
                          start)


def _aligned(name, operator, y, C, task, tol, max_iter, callback, random_state):
    start = time.perf_counter()
    task, problem = _start(operator, name, y, C, task)
    targets = np.asarray(task.y, dtype=np.float64)
    if np.ptp(targets) == 0:
        raise ValueError(f"solver {name!r} weighs kernels by their alignment with y y', "
                         "which is 0 for constant targets: y is constant")
    sums = feature_kernel_sums(operator, targets, frobenius=name == "alignf")
    weights = {"align": seeds.align_weights, "alignf": seeds.alignf_weights,
               "fheuristic": seeds.fheuristic_weights}[name](sums)
    return _fixed_weights(operator, problem, task, weights, tol, max_iter, callback,
                          random_state, start, weight_time=time.perf_counter() - start)


def align_features(operator, y, C, regularizer=None, *, tol=1e-3, max_iter=100,
                   callback=None, task=None, random_state=0):
    """Each kernel's centred alignment with ``y y'`` (:func:`mklearn.solvers.align_mkl`),
    summed over every pair of points through the features, then the SVM in feature space.
    Parameters and Returns as :func:`average_features`."""
    return _aligned("align", operator, y, C, task, tol, max_iter, callback, random_state)


def alignf_features(operator, y, C, regularizer=None, *, tol=1e-3, max_iter=100,
                    callback=None, task=None, random_state=0):
    """ALIGNF (:func:`mklearn.solvers.alignf_mkl`) with ``M_kl = ||Phi_k^c' Phi_l^c||_F^2``
    from one ``R x R`` Gram matrix, then the SVM in feature space. Parameters and Returns as
    :func:`average_features`."""
    return _aligned("alignf", operator, y, C, task, tol, max_iter, callback, random_state)


def fheuristic_features(operator, y, C, regularizer=None, *, tol=1e-3, max_iter=100,
                        callback=None, task=None, random_state=0):
    """FHeuristic (:func:`mklearn.solvers.fheuristic_mkl`) through the features, then the
    SVM in feature space. Parameters and Returns as :func:`average_features`."""
    return _aligned("fheuristic", operator, y, C, task, tol, max_iter, callback,
                    random_state)


def easymkl_features(operator, y, C, regularizer=None, *, tol=1e-3, max_iter=500,
                     callback=None, random_state=0, lam=0.1, learner="svm", qp_tol=1e-8,
                     komd_lam=0.1, komd_tol=1e-6):
    """EasyMKL in feature space (:func:`mklearn.solvers.easymkl.easymkl`'s formulation).

    The class-hull QP on the sum of the kernels is solved by L-BFGS on its R-dimensional
    dual (:func:`mklearn.linear.hull.hull_qp_features`), the weights are
    ``d_k = ||Phi_k' Y gamma||^2 / sum_l ||Phi_l' Y gamma||^2`` (paper eq. 10), and the final
    model is the SVM on ``K(d)`` in feature space (to the relative duality gap ``tol``) or
    KOMD (the hull QP on the columns ``sqrt(d_k) Phi_k``).

    Parameters
    ----------
    operator : LowRankKernels
    y : ndarray of shape (n,)
        Labels in {-1, +1}, both present.
    C : float or ndarray of shape (n,)
        Costs of the final SVM (``learner="svm"``).
    regularizer : ignored
    tol : float
        Relative duality gap of the final SVM.
    max_iter : int
        Gap checks (evaluations of the dual) of each hull QP at the most, and of the final
        SVM.
    callback : callable, optional
        Called with each history record of the gamma QP.
    random_state : int, RandomState or None
        Seed of the SVM's coordinate order.
    lam, learner, qp_tol, komd_lam, komd_tol
        As :func:`mklearn.solvers.easymkl.easymkl`; ``lam`` must be > 0 here.

    Returns
    -------
    MKLResult
        ``objective``, ``duality_gap`` and ``history`` of the gamma QP (its certified gap
        ``F - D``); ``n_iter`` its gap checks; ``feature_coef`` as in
        :func:`average_features`.

    Raises
    ------
    ValueError
        ``lam = 0`` (the dual needs the ridge), or weights that are undefined
        (:func:`mklearn.solvers.easymkl.normalised_weights`).
    """
    start = time.perf_counter()
    task, problem = _start(operator, "easymkl", y, C, None)
    starts, signs = operator.starts, task.signs.astype(np.float64)
    hull = hull_qp_features(operator.features, starts, signs, 1.0 - lam, lam, qp_tol=qp_tol,
                            max_iter=max_iter, callback=callback)
    v = signs * hull.gamma
    scale = float(np.mean(operator.squared_norms.sum(axis=1))) * float(v @ v)
    d = normalised_weights(block_terms(hull.u, starts), scale)
    converged = hull.converged
    if learner == "komd":
        komd = hull_qp_features(operator.features, starts, signs, 1.0 - komd_lam,
                                komd_ridge(signs, komd_lam), scale=np.sqrt(d),
                                qp_tol=komd_tol, max_iter=max_iter)
        coef = np.repeat(d, np.diff(starts)) * komd.u
        # the midpoint of the hull points p and q: b = (p + q)' (p - q) / 2
        alpha = komd.gamma
        bias = -0.5 * float(coef @ block_products(operator.features, alpha))
        converged = converged and komd.converged
    else:
        svm = _fixed_weights(operator, problem, task, d, tol, max_iter, None, random_state,
                             start)
        alpha, bias, coef = svm.alpha, svm.intercept, svm.feature_coef
        converged = converged and svm.converged
    return MKLResult(kernel_weights=d, alpha=alpha, intercept=float(bias),
                     objective=hull.value, duality_gap=hull.gap, n_iter=hull.n_iter,
                     n_svm_solves=1, converged=converged, history=hull.history,
                     stop_reason="converged" if converged else "max_iter",
                     relative_duality_gap=relative_gap(hull.value, hull.value - hull.gap),
                     feature_coef=coef)


def _fixed_weights(operator, problem, task, d, tol, max_iter, callback, random_state, start,
                   **record):
    """The SVM on ``K(d)`` for fixed weights d, its inner tolerance tightened tenfold per
    check until the SVM's relative duality gap is at most ``tol``."""
    from mklearn.formulation.regularizers import L1Simplex

    certificate = _Certificate(operator, problem, task, L1Simplex())
    svm = FeatureSVM(problem, seed=seed_of(random_state))
    history = []
    eps = INNER_TOL
    for iteration in range(1, max_iter + 1):
        alpha, _, _, _ = svm.solve(d, eps)
        u, g = certificate.blocks(alpha)
        upper, _, bias = certificate.bounds(alpha, u, g, d)
        upper -= certificate.regularizer.value(d)
        lower = task.linear_value(alpha) - 0.5 * float(d @ g)  # the SVM's own dual
        _record(history, start, iteration, upper, upper, lower, iteration, callback,
                inner_tol=eps, **record)
        converged, stalled = relative_gap(upper, lower) <= tol, eps <= INNER_FLOOR
        if converged or stalled:
            break
        eps = max(eps * INNER_SHRINK, INNER_FLOOR)
    reason = "converged" if converged else ("stalled" if stalled else "max_iter")
    return _result(d, alpha, bias, upper, upper, lower, iteration, iteration, converged,
                   history, u, operator.starts, reason)


def smooth_dual_features(operator, y, C, regularizer, *, tol=1e-3, max_iter=100,
                         callback=None, task=None, random_state=0):
    """SMO-MKL's lp or KL formulation in feature space, to the relative duality gap ``tol``.

    First coordinate ascent on the MKL dual ``max_a -p' a - r*(g(a) / 2)`` (the weights
    ``d = grad r*(g / 2)`` following every step, the intercept by the bias search) to a
    coarse tolerance (on rows whose descent takes fixed weights only, as partitions on
    Dask, SPG from the regulariser's first weights instead); where its gap misses ``tol``,
    SPG on ``T(d) = r(d) + W(d)`` from its weights, each ``W(d)`` an SVM solved exactly on
    its support pattern (``T`` is smooth and strongly convex in d there; coordinate ascent
    would need hundreds of epochs per tenfold of tolerance). ``max_iter`` bounds the gap checks.

    Parameters
    ----------
    operator : LowRankKernels
    y, C, task
        As :func:`average_features`.
    regularizer : Regularizer
        One with ``smo_dual`` ("lp" with p > 1, "kl").

    Returns
    -------
    MKLResult
        ``n_iter``: gap checks; ``feature_coef`` as in :func:`average_features`.

    Raises
    ------
    ValueError
        A regulariser without a smooth dual the core knows; an operator without features.
    """
    start = time.perf_counter()
    task, problem = _start(operator, "smo", y, C, task, "feature_rows")
    m = operator.n_kernels
    form = regularizer.smo_dual(m) if implements(regularizer, "smo_dual") else None
    if form is None or form[0] not in _KINDS:
        raise ValueError("the smooth MKL dual in feature space needs a regulariser with "
                         "smo_dual ('lp' with p > 1 or 'kl'); use solver='spg' for others")
    kind, lam, q, prior = _KINDS[form[0]], form[1], form[2], form[3]
    prior = np.ones(m) if prior is None else np.asarray(prior, dtype=np.float64)
    certificate = _Certificate(operator, problem, task, regularizer)
    svm = FeatureSVM(problem, seed=seed_of(random_state))
    history, eps, iteration = [], INNER_TOL, 0
    best, kept = [np.inf, -np.inf], None

    def check(alpha, weights=None):
        """One gap check at ``alpha``: with the weights ``d(alpha) = grad r*(g / 2)``, or
        with ``weights`` (the upper bound of the SVM solved at them)."""
        nonlocal kept, iteration
        iteration += 1
        u, g = certificate.blocks(alpha)
        d = np.empty(m)
        kernel_weights(g, kind, lam, q, prior, d)
        d = d if weights is None else weights
        upper, lower, bias = certificate.bounds(alpha, u, g, d)
        if upper < best[0]:
            best[0], kept = upper, (d, alpha, bias, u, upper)
        best[1] = max(best[1], lower)
        _record(history, start, iteration, best[0], *best, iteration, callback,
                inner_tol=eps, n_steps=svm.n_steps, svm_at_weights=weights is not None)
        return d, relative_gap(*best)

    if not problem.rows.smooth_descent:  # rows in partitions: SPG from the first weights
        run = _SPGRun(certificate, svm, _SmoothSteps(regularizer, kind, prior), callback,
                      start, history)
        return run.result(regularizer.initial_weights(m), INNER_TOL, tol, max_iter)
    alpha, _, _, d = svm.solve(np.zeros(m), INNER_TOL, kind=kind, lam=lam, q=q, prior=prior)
    d, gap = check(alpha)
    if gap <= tol or max_iter <= 1:
        d, alpha, bias, u, objective = kept
        return _result(d, alpha, bias, objective, *best, iteration, iteration, gap <= tol,
                       history, u, operator.starts, "converged" if gap <= tol else "max_iter")
    # from the coarse solve's weights on: SPG on T(d) = r(d) + W(d), each W(d) an SVM solved
    # exactly on its support pattern (coordinate ascent on the smooth dual needs hundreds
    # of epochs per tenfold of tolerance where T is smooth and strongly convex in d)
    run = _SPGRun(certificate, svm, _SmoothSteps(regularizer, kind, prior), callback, start,
                  history)
    point = _SPGPoint(kept[0], kept[1], kept[3], certificate.blocks(kept[1])[1], np.inf,
                      None)
    return run.result(d, INNER_SHRINK * gap, tol, max_iter - 1,
                      best=(best[0], best[1], (point, kept[2])))


class _SmoothSteps:
    """Gradient and projection of an lp or KL regulariser for SPG's steps. The KL gradient
    ``lam log(d / d0)`` needs ``d > 0`` (its optimum has ``d = d0 exp(g / (2 lam)) > 0``):
    the projection keeps ``d >= KL_FLOOR d0``."""

    KL_FLOOR = 1e-12

    def __init__(self, regularizer, kind, prior):
        self.regularizer, self.kind, self.prior = regularizer, kind, prior

    def gradient(self, d):
        if self.kind == KIND_KL:
            return self.regularizer.lam * np.log(np.maximum(d, self.KL_FLOOR * self.prior)
                                                 / self.prior)
        return self.regularizer.gradient(d)

    def project(self, d):
        if self.kind == KIND_KL:
            return np.maximum(d, self.KL_FLOOR * self.prior)
        return np.maximum(d, 0.0)


class _SPGPoint:
    """The SVM solved at d: its dual point, blocks and the objective's terms."""

    def __init__(self, d, alpha, u, g, objective, grad):
        self.d, self.alpha, self.u, self.g = d, alpha, u, g
        self.objective, self.grad = objective, grad


def spg_features(operator, y, C, regularizer, *, tol=1e-3, max_iter=500, callback=None,
                 task=None, random_state=0, spectral=True, nonmonotone=True):
    """SPG-GMKL in feature space: ``min_d T(d) = r(d) + W(d)`` over the regulariser's
    feasible set with the spectral projected gradient and a non-monotone search (KDD 2012,
    Algorithm 1), the inner SVM warm started and its tolerance following the gap.

    Parameters
    ----------
    operator : LowRankKernels
    y, C, task
        As :func:`average_features`.
    regularizer : Regularizer
        With value, gradient, project and conjugate (l1 simplex, lp).
    tol : float
        Relative duality gap at which the run stops.
    max_iter : int
        Outer iterations at the most.
    spectral, nonmonotone : bool
        The paper's Barzilai-Borwein step and Zhang-Hager search (off: step 1, Armijo).

    Returns
    -------
    MKLResult
        ``feature_coef`` as in :func:`average_features`.
    """
    start = time.perf_counter()
    task, problem = _start(operator, "spg", y, C, task, "feature_rows")
    certificate = _Certificate(operator, problem, task, regularizer)
    svm = FeatureSVM(problem, seed=seed_of(random_state))
    run = _SPGRun(certificate, svm, regularizer, callback, start)
    return run.result(regularizer.initial_weights(operator.n_kernels), INNER_TOL, tol,
                      max_iter, spectral, nonmonotone)


class _SPGRun:
    """SPG-GMKL's iterations (:func:`spg_features`), with ``steps`` the regulariser whose
    gradient and projection steer them (the certificate's own, or a smooth form of it)."""

    def __init__(self, certificate, svm, steps, callback, start, history=None):
        self.certificate, self.svm, self.steps = certificate, svm, steps
        self.callback, self.start = callback, start
        self.history = [] if history is None else history
        self.n_solves = 0

    def evaluate(self, d, eps):
        task, regularizer = self.certificate.task, self.certificate.regularizer
        alpha, _, _, _ = self.svm.solve(d, eps)
        self.n_solves += 1
        u, g = self.certificate.blocks(alpha)
        objective = regularizer.value(d) + task.linear_value(alpha) - 0.5 * float(d @ g)
        return _SPGPoint(d, alpha, u, g, objective, self.steps.gradient(d) - 0.5 * g)

    def result(self, d0, eps, tol, max_iter, spectral=True, nonmonotone=True, best=None):
        """Iterate from ``d0``; ``best``: ``(upper, lower, (point, bias))`` known so far."""
        certificate, steps = self.certificate, self.steps
        first = len(self.history)
        point = self.evaluate(d0, eps)
        best_upper, best_lower, kept = (np.inf, -np.inf, None) if best is None else best
        memory, step = [point.objective], _first_step(point, steps)
        converged, reason = False, "max_iter"
        iteration = first
        for iteration in range(first + 1, first + max_iter + 1):
            upper, lower, bias = certificate.bounds(point.alpha, point.u, point.g, point.d)
            if upper < best_upper:
                best_upper, kept = upper, (point, bias)
            best_lower = max(best_lower, lower)
            _record(self.history, self.start, iteration, best_upper, best_upper, best_lower,
                    self.n_solves, self.callback, inner_tol=eps)
            if relative_gap(best_upper, best_lower) <= tol:
                converged, reason = True, "converged"
                break
            eps = max(min(eps, INNER_SHRINK * relative_gap(best_upper, best_lower)), INNER_FLOOR)
            trial = _search(point, step, memory, self.evaluate, steps, eps,
                                    nonmonotone)
            if trial is None:  # no decrease: the SVMs are too coarse for the step
                if eps <= INNER_FLOOR:
                    reason = "stalled"
                    break
                eps = max(eps * INNER_SHRINK, INNER_FLOOR)
                point = self.evaluate(point.d, eps)
                continue
            step = _spectral_step(point, trial) if spectral else 1.0
            point = trial
            memory = (memory + [point.objective])[-_MEMORY:]
        best_point, bias = kept
        return _result(best_point.d, best_point.alpha, bias, best_upper, best_upper,
                       best_lower, iteration, self.n_solves, converged, self.history,
                       best_point.u, certificate.operator.starts, reason)


def _search(point, step, memory, evaluate, regularizer, eps, nonmonotone):
    """The first trial along ``P(d - step grad) - d`` (halved) below the reference value,
    or None when none is."""
    direction = regularizer.project(point.d - step * point.grad) - point.d
    slope = float(point.grad @ direction)
    if slope >= 0.0 or not np.any(direction):
        return None
    reference = max(memory) if nonmonotone else point.objective
    t = 1.0
    for _ in range(_HALVINGS):
        trial = evaluate(regularizer.project(point.d + t * direction), eps)
        if trial.objective <= reference + _ARMIJO * t * slope:
            return trial
        t *= 0.5
    return None


def _first_step(point, steps):
    """SPG's first step ``1 / ||P(d - grad) - d||_inf`` (Birgin, Martinez and Raydan, SIAM
    J. Optim. 10, 2000, Algorithm 2.1): a unit move along the projected gradient."""
    change = float(np.max(np.abs(steps.project(point.d - point.grad) - point.d)))
    return float(np.clip(1.0 / change, *_STEP_RANGE)) if change > 0.0 else 1.0


def _spectral_step(old, new):
    """Barzilai-Borwein's ``s's / s'y``, clipped to ``_STEP_RANGE``."""
    s = new.d - old.d
    change = new.grad - old.grad
    curvature = float(s @ change)
    if curvature <= 0.0:
        return _STEP_RANGE[1]
    return float(np.clip(float(s @ s) / curvature, *_STEP_RANGE))
