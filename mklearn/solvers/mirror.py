"""(l_inf, l_1) mixed-norm MKL over groups of kernels, by mirror descent.

Nath, Dinesh, Raman, Bhattacharyya, Ben-Tal and Ramakrishnan, "On the Algorithmics and
Applications of a Mixed-norm based Kernel Learning Formulation", NIPS 2009; restated in
ALGORITHMS.md section 4. Kernels ``K_jk`` come in ``G`` groups; the primal (P-1) is

    min 1/2 (max_j sum_k ||w_jk||)^2 + C sum_i xi_i,

and its dual (P-4) is ``min_{gamma} max_{alpha in A, lambda in simplex(G)} L`` with

    L(gamma, alpha, lambda) = 1'alpha - 1/2 sum_j (1/lambda_j) sum_k gamma_jk alpha' Q_jk alpha,

``gamma_j`` on the simplex of group j, ``Q_jk = Y K_jk Y``. For fixed ``gamma`` the inner
maximum ``f(gamma)`` is convex in ``gamma``; it is found by alternating the SVM in ``alpha``
(kernel ``sum_jk (gamma_jk / lambda_j) K_jk``, SMO warm-started) with ``lambda`` in closed form,
``lambda_j = sqrt(W_j) / sum_l sqrt(W_l)``, ``W_j = sum_k gamma_jk alpha' Q_jk alpha`` (block
ascent on a smooth concave function; one SVM when ``G = 1``). ``f`` is minimised by mirror
descent over the product of simplices with the weighted entropy
``psi(gamma) = sum_j delta_j sum_k gamma_jk log gamma_jk``: the update is multiplicative,
``gamma_jk <- gamma_jk exp(-s grad_jk / delta_j) / Z_j`` with the Danskin gradient
``grad_jk = -alpha' Q_jk alpha / (2 lambda_j)``.

Our derivation of the paper's Result 1 (its equations were lost in the text we have): with
``delta_j = 1 / sqrt(log n_j)`` the entropy is ``sigma = 1 / sum_j sqrt(log n_j)``-strongly
convex in the l1 norm on the product of simplices (Cauchy-Schwarz) and its range is
``Omega = sum_j sqrt(log n_j)``; this choice of delta minimises ``Omega / sigma`` and gives
``sigma Omega = 1``. The mirror-descent theorem (Beck and Teboulle, Oper. Res. Lett. 31, 2003,
Thm. 4.2) with steps ``s_t = sqrt(2 sigma Omega) / (L sqrt(t))`` bounds the best value after t
steps by ``f* + L sqrt(2) sum_j sqrt(log n_j) / sqrt(t)``, L the l_inf bound of the gradient:
iterations grow with ``log n_j``, not with the number of kernels. ``step="paper"`` uses that
rule (L estimated by the largest gradient seen). It needs ``O(1/eps^2)`` iterations, too many
for tight tolerances, so the default ``step="armijo"`` takes the same multiplicative step with
a backtracking (Armijo) search on ``f`` and doubles the step after each accepted one.

Certificate (our derivation). Lower bound: for any feasible alpha,
``D(alpha) = 1'alpha - 1/2 (sum_j sqrt(max_k alpha' Q_jk alpha))^2`` (the SOCP form of the dual,
ALGORITHMS.md section 4) is at most the optimum; it is evaluated at the best rescaling
``t alpha`` (``t <= C / max alpha`` keeps the box). Upper bound: ``w_jk = d_jk sum_i alpha_i y_i
phi_jk(x_i)`` with ``d_jk = gamma_jk / lambda_j`` is feasible in (P-1) with the best bias and the
hinge slacks, so ``1/2 (max_j sum_k d_jk sqrt(alpha' Q_jk alpha))^2 + sum_i C_i xi_i`` is at least
the optimum; it equals ``D(alpha)`` at the saddle point. So is the first term over ``m^2`` when
the outputs separate the classes with margin m > 0 (``w / m`` has no slack): at large C the
bound that closes the gap, as the slacks rounding leaves are multiplied by C. Both hold
whatever the inner SVM's precision, so the gap is a proof. ``objective`` is this primal value
of the returned model.
"""

from __future__ import annotations

import time

import numpy as np

from mklearn.extending import SIMPLEX
from mklearn.formulation.losses import best_hinge_bias, hard_margin_factor
from mklearn.groups import KernelGroups, check_groups
from mklearn.kernels.base import prepare, require
from mklearn.linear import FeatureProblem, FeatureSVM, block_terms, seed_of
from mklearn.solvers._renamed import former_operator_name
from mklearn.solvers.result import Certificate, HistoryRecord, MKLResult
from mklearn.solvers.spg_evaluator import KeptProducts
from mklearn.solvers.tasks import ClassificationTask
from mklearn.svm import svc_dual

INNER_TOL_START = 1e-1
ARMIJO_C = 1e-4
STEP_GROWTH = 2.0
MAX_HALVINGS = 30
MAX_INEXACT_HALVINGS = 10  # halvings before a loosely solved point is re-solved tightly
LAMBDA_TOL_MAX = 1e-2
LAMBDA_FLOOR = 1e-6  # smallest group weight lambda_j (largest kernel weight 1e6 / n_groups)
NONMONOTONE_MEMORY = 10  # reference value: the largest of the last 10 accepted (Grippo et al.)
MAX_LAMBDA_SWEEPS = 100  # SVM / lambda alternations per evaluation of f(gamma)
LOG_WEIGHT_FLOOR = -40.0  # log gamma_jk - max_k log gamma_jk is kept above this
WEIGHT_CUTOFF = 1e-12  # kernels with gamma_jk below this are left out of the combined kernel
STEP_RULES = ("armijo", "paper")
STALL_ITERATIONS = 20  # iterations without the gap shrinking by 1% before the floor is lowered
TIGHTEST_INNER_TOL = 1e-9  # lowest floor of the SMO tolerance (rounding dominates below)


class _StackSVMs:
    """The inner SVMs on exact kernels: ``K(d)`` combined (on a stack, only the rows a solve
    reads when its warm start has few support vectors), then SMO warm started. The products
    ``K_k v`` are kept between solves (:class:`~mklearn.solvers.spg_evaluator.KeptProducts`):
    they give every ``g_k`` and the outputs ``K(d) v`` without reading a row of ``K(d)``."""

    def __init__(self, operator, y, cost):
        self.operator, self.y, self.cost = operator, y, cost
        self.rows = operator.kernel_rows if operator.capabilities.stack else None
        self.kept = KeptProducts(operator, operator.gradient_and_products)
        self.everything = np.arange(operator.n_kernels)
        self.n_smo_steps = 0  # SMO steps of every solve

    def solve(self, d, alpha0, eps):
        """``(alpha, g, outputs)``: the SVM's dual point, ``g_k = v' K_k v`` and a function
        giving ``K(d) v`` (``v = alpha * y``)."""
        expected = None if alpha0 is None else int(np.count_nonzero(alpha0))
        K = self.operator.kernel(d) if self.rows is None else self.rows(d, expected)
        qp = svc_dual(K, self.y, self.cost, alpha0=alpha0, tol=eps)
        self.n_smo_steps += int(qp.n_iter)
        alpha = qp.alpha
        v = alpha * self.y
        terms = self.kept.terms(v, self.everything)
        if terms is None:
            return alpha, self.operator.kernel_gradient(d, v), lambda: K @ v
        g, P = terms
        return alpha, g, lambda: d @ P


class _FeatureSVMs:
    """The inner SVMs on low-rank kernels, in feature space
    (:class:`mklearn.linear.FeatureSVM`, warm started from its last solve)."""

    n_smo_steps = 0  # coordinate descent in feature space: no SMO steps

    def __init__(self, operator, y, cost, seed):
        task = ClassificationTask(y, cost)
        self.problem = FeatureProblem.of(operator, task)
        self.svm = FeatureSVM(self.problem, seed=seed)
        self.everything = np.arange(operator.n_kernels)

    def solve(self, d, alpha0, eps):
        """As :meth:`_StackSVMs.solve`; ``alpha0`` is unused (the last solve is the start)."""
        alpha = self.svm.solve(d, eps)[0].copy()
        p = self.problem
        u = p.blocks(alpha)
        return alpha, block_terms(u, p.starts), lambda: p.rows.outputs(u, d, self.everything)

    def coefficients(self, d, alpha):
        """``coef`` of the primal model on the features: ``d_k u_k`` by block."""
        return np.repeat(d, np.diff(self.problem.starts)) * self.problem.blocks(alpha)


class _Problem:
    """Evaluations of ``f(gamma)`` (alternating SVM and lambda), with a running SVM count."""

    def __init__(self, svms, y, cost, groups: KernelGroups, regularizer):
        self.svms = svms
        self.y = y
        self.cost = cost
        self.groups = groups
        self.regularizer = regularizer
        self.n_solves = 0
        self.exact_lambda = False

    def evaluate(self, theta, lam, alpha0, eps):
        """Solve ``max_{alpha, lambda} L(gamma(theta), alpha, lambda)`` from a warm start.

        The alternation stops when lambda moves by less than ``min(sqrt(eps), 0.01)``
        (relative; the value error is of second order in lambda's), or ``eps`` once
        ``exact_lambda`` is set.
        """
        groups = self.groups
        lam_tol = max(eps if self.exact_lambda else min(np.sqrt(eps), LAMBDA_TOL_MAX), 1e-9)
        gamma = groups.normalize_log(theta)
        used = np.where(gamma >= WEIGHT_CUTOFF, gamma, 0.0)
        for _ in range(MAX_LAMBDA_SWEEPS):
            d = used / lam[groups.codes]
            alpha, g, outputs = self.svms.solve(d, alpha0, eps)
            self.n_solves += 1
            W = groups.sum(used * g)
            new_lam = _closed_form_lambda(W, lam)
            converged = np.max(np.abs(new_lam - lam) / lam) <= lam_tol
            if groups.n_groups == 1 or converged:
                break
            lam, alpha0 = new_lam, alpha
        # 1'alpha - 1/2 sum_j W_j / lambda_j at the closed-form lambda: F_gamma(alpha) <= f(gamma)
        value = float(alpha.sum()) - 0.5 * float(np.sum(np.maximum(W, 0.0) / new_lam))
        return {
            "theta": theta,
            "gamma": gamma,
            "d": d,
            "outputs": outputs,
            "alpha": alpha,
            "g": g,
            "lam": new_lam,
            "value": value,
            "grad": -g / (2.0 * new_lam[groups.codes]),
            "tol": eps,
        }

    def bounds(self, point):
        """(upper bound, lower bound) on the optimum from ``point``; stores the bias."""
        alpha, g, d = point["alpha"], point["g"], point["d"]
        f = point["outputs"]()
        bias = best_hinge_bias(f, self.y, self.cost)
        hinge = np.maximum(0.0, 1.0 - self.y * (f + bias))
        root_g = np.sqrt(np.maximum(g, 0.0))
        norm = float(np.max(self.groups.sum(d * root_g)))
        point["bias"] = bias
        upper = 0.5 * norm**2 + float(self.cost @ hinge)
        factor = hard_margin_factor(f, self.y, self.cost)  # (w / m, b / m): no hinge loss
        if np.isfinite(factor):
            upper = min(upper, 0.5 * norm**2 * factor)
        return upper, self._dual_bound(alpha, g)

    def _dual_bound(self, alpha, g):
        """``max_t D(t alpha)`` over ``0 < t <= min_i C_i / alpha_i``."""
        total = float(alpha.sum())
        penalty = 2.0 * self.regularizer.conjugate(0.5 * g)  # (sum_j sqrt(max_k g_jk))^2
        positive = alpha > 0
        if total <= 0.0 or not positive.any():
            return 0.0
        t_max = float(np.min(self.cost[positive] / alpha[positive]))
        t = t_max if penalty <= 0.0 else min(total / penalty, t_max)
        return t * total - 0.5 * t * t * penalty


def _closed_form_lambda(W, lam):
    """``lambda_j = sqrt(W_j) / sum_l sqrt(W_l)``, floored at ``LAMBDA_FLOOR`` (kept as
    ``lam`` when every W_j is 0).

    A group whose kernels cannot lower the hinge loss stays below the maximum of (P-1) and has
    ``lambda_j = 0`` at the optimum, i.e. infinite kernel weight; the floor keeps the inner SVM
    well conditioned. The certificate does not depend on lambda, so it shows any loss."""
    root = np.sqrt(np.maximum(W, 0.0))
    total = root.sum()
    if total <= 0.0:
        return lam
    floored = np.maximum(root / total, LAMBDA_FLOOR)
    return floored / floored.sum()


def _resolve_groups(groups, regularizer, n_kernels) -> KernelGroups:
    if groups is None:
        groups = getattr(regularizer, "groups", None)
    if groups is None:
        return KernelGroups.single(n_kernels)
    if not isinstance(groups, KernelGroups):
        groups = check_groups(groups, n_kernels)
    if groups.n_kernels != n_kernels:
        raise ValueError(
            f"groups cover {groups.n_kernels} kernels but there are {n_kernels} base kernels"
        )
    if regularizer.feasible_set == SIMPLEX and groups.n_groups > 1:
        raise ValueError(
            f"regularizer 'l1' puts every kernel in one group, but groups has "
            f"{groups.n_groups} groups; use regularizer='group' for group MKL"
        )
    return groups


@former_operator_name('combination')
def mirror_descent(
    operator,
    y,
    C,
    regularizer,
    *,
    tol=1e-3,
    max_iter=500,
    callback=None,
    groups=None,
    step="armijo",
    inner_tol=1e-6,
    precision_tuning=True,
    d0=None,
    alpha0=None,
    n_iter_no_change=None,
) -> MKLResult:
    """Solve (l_inf, l_1) mixed-norm MKL (or l1-MKL, one group) by mirror descent.

    Parameters
    ----------
    operator : SumOfKernels
        The base kernels: ``kernel(d)`` gives ``sum_k d_k K_k`` (n, n) and
        ``kernel_gradient(d, v)`` the ``m`` quadratic terms ``v' K_k v``.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float or ndarray of shape (n,)
        SVM cost (per sample allowed).
    regularizer : L1Simplex or MixedNorm
        "l1" (one group) or "group"; its ``conjugate`` gives the dual bound.
    tol : float
        Stop when the relative duality gap ``(U - L) / |U|`` is below ``tol``.
    max_iter : int
        Maximal number of mirror-descent steps.
    callback : callable, optional
        Called with each iteration's history record.
    groups : array-like of shape (m,), list of lists, or KernelGroups, optional
        Group of each kernel (see :func:`mklearn.groups.check_groups`); default: the
        regulariser's groups, or one group.
    step : {"armijo", "paper"}
        "armijo": multiplicative step with a backtracking search and step doubling;
        "paper": the step sizes of the paper's Result 1, no search (slow, for comparison).
    inner_tol : float
        Floor of the SMO tolerance (capped at ``tol / 100``); also the fixed tolerance when
        ``precision_tuning`` is off.
    precision_tuning : bool
        Start the SMO tolerance at 0.1 and tighten it to ``0.1 * relative gap`` as the gap
        shrinks (the schedule of :func:`mklearn.solvers.spg_gmkl`); when the gap has not
        shrunk by 1% in ``STALL_ITERATIONS`` iterations at the floor, divide the floor by 100
        (down to ``TIGHTEST_INNER_TOL``) and solve lambda exactly. The floor is absolute (KKT
        units) and the gap relative: on separable data the objective can be small (Sonar,
        45 points, 61 groups, C = 100: 0.0075), where 1e-6 left the gap at 2.5e-2 for 400
        iterations.
    d0 : ndarray of shape (m,), optional
        Starting weights ``gamma`` (non-negative, normalised per group; a weight of 0 starts
        at ``exp(LOG_WEIGHT_FLOOR)`` of its group's largest); default: uniform per group.
    alpha0 : ndarray of shape (n,), optional
        Warm start of the first SVM.
    n_iter_no_change : int, optional
        Stop (``stop_reason`` "no_change") when the certified relative gap has not fallen
        by 1% over this many iterations; None: run to ``tol`` or ``max_iter``.

    Returns
    -------
    MKLResult
        ``kernel_weights`` are the effective weights ``d_jk = gamma_jk / lambda_j`` (an SVM
        with kernel ``sum d_jk K_jk`` and cost C reproduces the model; per group they sum to
        ``1 / lambda_j``); ``objective`` is the primal value (P-1) of the returned model and
        ``duality_gap`` an upper bound on its distance to the optimum.

    Raises
    ------
    ValueError
        If ``step`` is unknown or ``groups`` is invalid for the kernels (wrong length, an empty
        group) or has several groups with the "l1" regulariser.
    """
    prepare(operator, "mirror")
    start = time.perf_counter()
    y = np.asarray(y, dtype=np.float64)
    cost = np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape).copy()
    groups = _resolve_groups(groups, regularizer, operator.n_kernels)
    problem = _Problem(_StackSVMs(operator, y, cost), y, cost, groups, regularizer)
    return _descend(problem, start, tol, max_iter, callback, step, inner_tol,
                    precision_tuning, d0, alpha0, n_iter_no_change)[0]


def mirror_features(operator, y, C, regularizer, *, tol=1e-3, max_iter=500, callback=None,
                    random_state=0, step="armijo", inner_tol=1e-6, precision_tuning=True,
                    d0=None):
    """(l_inf, l_1) group MKL (or l1-MKL, one group) by mirror descent in feature space,
    on low-rank kernels ``K_k = Phi_k Phi_k'``.

    The method, the certificate and the parameters are those of :func:`mirror_descent`;
    each inner SVM is the linear SVM on the columns ``sqrt(d_k) Phi_k``
    (:class:`mklearn.linear.FeatureSVM`), and ``g_k = ||Phi_k' v||^2`` and ``K(d) v`` come
    from the feature blocks (``O(n R)``, no ``n x n`` array).

    Parameters
    ----------
    operator : LowRankKernels
        The kernels' features (capability ``feature_blocks``).
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float or ndarray of shape (n,)
        SVM cost (per sample allowed).
    regularizer : L1Simplex or MixedNorm
        "l1" (one group) or "group" (its groups).
    random_state : int, RandomState or None
        Seed of the coordinate order of the inner SVMs.
    tol, max_iter, callback, step, inner_tol, precision_tuning, d0
        As :func:`mirror_descent`.

    Returns
    -------
    MKLResult
        As :func:`mirror_descent`, with ``feature_coef`` (shape (R,)):
        ``f(x) = Phi(x) . feature_coef + intercept``.

    Raises
    ------
    ValueError
        An operator without feature blocks; ``step`` or the groups as in
        :func:`mirror_descent`.
    """
    require(operator, "feature_rows", "mirror",
            "use kernel_approximation='nystroem' (or 'rff'), which builds LowRankKernels")
    start = time.perf_counter()
    y = np.asarray(y, dtype=np.float64)
    cost = np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape).copy()
    groups = _resolve_groups(None, regularizer, operator.n_kernels)
    svms = _FeatureSVMs(operator, y, cost, seed_of(random_state))
    problem = _Problem(svms, y, cost, groups, regularizer)
    result, best = _descend(problem, start, tol, max_iter, callback, step, inner_tol,
                            precision_tuning, d0, None)
    result.feature_coef = svms.coefficients(best["d"], best["alpha"])
    return result


def _descend(problem, start, tol, max_iter, callback, step, inner_tol, precision_tuning, d0,
             alpha0, n_iter_no_change=None):
    """Mirror descent on ``problem`` (:func:`mirror_descent`'s loop): the result and the
    best point."""
    if step not in STEP_RULES:
        raise ValueError(f"unknown step rule {step!r}; choose one of {STEP_RULES}")
    groups = problem.groups
    n_kernels = groups.n_kernels
    # entropy weights delta_j = 1 / sqrt(log n_j): the step of group j is scaled by 1 / delta_j
    scale = np.sqrt(np.log(groups.sizes))[groups.codes]
    floor = min(inner_tol, tol / 100.0)
    eps = INNER_TOL_START if precision_tuning else floor

    theta = np.zeros(n_kernels)
    if d0 is not None:
        with np.errstate(divide="ignore"):
            theta = _clip_log(groups, np.log(np.maximum(np.asarray(d0, dtype=float), 0.0)))
    lam = np.full(groups.n_groups, 1.0 / groups.n_groups)
    point = problem.evaluate(theta, lam, alpha0, eps)
    recent = [point["value"]]
    certificate = Certificate()
    s = None
    lipschitz = 0.0
    history, converged, stop_reason, n_iter = [], False, "max_iter", 0

    progress_gap, progress_iter = np.inf, 0  # the gap at its last 1% decrease
    for n_iter in range(1, max_iter + 1):
        certificate.update(point, *problem.bounds(point))
        rel_gap = certificate.relative_gap
        if rel_gap < 0.99 * progress_gap:
            progress_gap, progress_iter = rel_gap, n_iter
        if precision_tuning:
            eps = min(eps, max(floor, 0.1 * rel_gap))
            stalled = n_iter - progress_iter >= STALL_ITERATIONS
            if stalled and eps <= floor and floor > TIGHTEST_INNER_TOL:
                # the gap stalls at the floor: the inner SVM and lambda limit it
                floor = eps = max(floor / 100.0, TIGHTEST_INNER_TOL)
                problem.exact_lambda, progress_iter = True, n_iter
        _record(history, callback, n_iter - 1, certificate, eps, s, problem.n_solves, start)
        if rel_gap <= tol:
            converged, stop_reason = True, "converged"
            n_iter -= 1
            break
        if n_iter_no_change is not None and n_iter - progress_iter >= n_iter_no_change:
            stop_reason = "no_change"
            n_iter -= 1
            break
        direction = scale * point["grad"]
        if step == "paper":
            lipschitz = max(lipschitz, float(np.max(np.abs(point["grad"]))))
            s = np.sqrt(2.0) / (max(lipschitz, 1e-300) * np.sqrt(n_iter))
            trial_theta = _clip_log(groups, point["theta"] - s * direction)
            point = problem.evaluate(trial_theta, point["lam"], point["alpha"], eps)
            continue
        if s is None:
            spread = groups.max(direction) + groups.max(-direction)
            s = 1.0 / max(float(np.max(spread)), 1e-300)
        reference = max(recent)
        accepted = None
        exact = point["tol"] <= floor and problem.exact_lambda
        for _ in range(MAX_HALVINGS if exact else MAX_INEXACT_HALVINGS):
            trial_theta = _clip_log(groups, point["theta"] - s * direction)
            decrease = float(point["grad"] @ (groups.normalize_log(trial_theta) - point["gamma"]))
            if decrease >= 0.0:  # the step is too small to move any weight
                break
            trial = problem.evaluate(trial_theta, point["lam"], point["alpha"], eps)
            if trial["value"] <= reference + ARMIJO_C * decrease:
                accepted = trial
                break
            s *= 0.5
        if accepted is None:
            if exact:
                stop_reason = "stalled"
                break
            # inexact SVMs or lambdas mislead the search: re-solve the current point tightly
            eps, problem.exact_lambda, s = floor, True, None
            point = problem.evaluate(point["theta"], point["lam"], point["alpha"], eps)
            recent = [point["value"]]
            continue
        s = _spectral_step(groups, scale, point, accepted, s)
        point = accepted
        recent = (recent + [point["value"]])[-NONMONOTONE_MEMORY:]

    if stop_reason == "max_iter":  # the last step's point is not certified yet
        certificate.update(point, *problem.bounds(point))
        _record(history, callback, n_iter, certificate, eps, s, problem.n_solves, start)
    best = certificate.point
    return MKLResult(
        kernel_weights=best["d"],
        alpha=best["alpha"],
        intercept=best["bias"],
        objective=certificate.upper,
        duality_gap=certificate.gap,
        relative_duality_gap=certificate.relative_gap,
        n_iter=n_iter,
        n_svm_solves=problem.n_solves,
        n_smo_steps=problem.svms.n_smo_steps,
        converged=converged,
        history=history,
        stop_reason=stop_reason,
    ), best


def _record(history, callback, iteration, certificate, eps, s, n_solves, start):
    """Append (and pass to ``callback``) the record of ``certificate`` at ``iteration``."""
    record = HistoryRecord({
        "iteration": iteration,
        "objective": certificate.upper,
        "relative_duality_gap": certificate.relative_gap,
        "inner_tol": eps,
        "step": s if s is not None else np.nan,
        "n_svm_solves": n_solves,
        "time": time.perf_counter() - start,
    })
    history.append(record)
    if callback is not None:
        callback(record)


def _spectral_step(groups, scale, old, new, s):
    """Barzilai-Borwein step in the entropy geometry, ``<dgamma, dlog gamma>_delta /
    <dgamma, dgrad>`` (the local metric of the entropy is ``diag(delta_j / gamma)``); twice
    the last step when the curvature estimate is not positive."""
    d_gamma = new["gamma"] - old["gamma"]
    d_log = _log_weights(groups, new["theta"]) - _log_weights(groups, old["theta"])
    movable = scale > 0
    sy = float(d_gamma[movable] @ (d_log[movable] / scale[movable]))
    sz = float(d_gamma @ (new["grad"] - old["grad"]))
    if sz <= 0.0 or sy <= 0.0:
        return STEP_GROWTH * s
    return sy / sz


def _log_weights(groups, theta):
    """``log gamma`` from the shifted log-weights ``theta`` (group maximum 0)."""
    return theta - np.log(groups.sum(np.exp(theta)))[groups.codes]


def _clip_log(groups, theta):
    """Shift each group's log-weights to a maximum of 0 and floor them at LOG_WEIGHT_FLOOR."""
    shifted = theta - groups.max(theta)[groups.codes]
    return np.maximum(shifted, LOG_WEIGHT_FLOOR)
