"""SPG-GMKL: spectral projected gradient descent for Generalized MKL, and the PGD baseline.

Jain, Vishwanathan and Varma, "SPG-GMKL: Generalized Multiple Kernel Learning with a Million
Kernels", KDD 2012, Algorithm 1; restated in ALGORITHMS.md section 1. Minimises
``T(d) = r(d) + W(d)``, ``W(d) = max_{alpha in A} 1'alpha - 1/2 alpha' Y K(d) Y alpha`` over the
feasible set of the regulariser, using

- the spectral (Barzilai-Borwein) step length, clipped to ``[LAMBDA_MIN, LAMBDA_MAX]``; where
  ``s'y <= 0`` twice the step just accepted (our addition, see :func:`_next_step`);
- the spectral projected-gradient direction ``p = d - P(d - lambda grad)``;
- the non-monotone line search of Zhang and Hager (SIAM J. Optim. 14, 2004) with an adaptive eta;
- inner-SVM precision tuning: the SMO tolerance starts at 0.1 and follows
  ``min(previous, max(floor, 0.1 * min(relative gap, projected-gradient norm)))``, tightened
  tenfold every third halving of a line search (a sign that the inexact objective misleads
  it), and set to the floor when a search fails, before the point is declared stalled. The
  paper's exact rule was lost in extraction; this one keeps the SVM error an order of
  magnitude below the outer optimality measure. Two guards on the SVM's own duality gap
  ``U - T`` (our addition): it is tightened tenfold at once while that gap is over half the
  run's gap, and never once that gap is under ``PRECISE_SHARE * tol |U|``, where a tighter
  SMO cannot change the certificate (measured on ``benchmarks/bench_unseen.py``: the KKT
  tolerance reached 1e-6, an SVM gap of 1e-8 relative, where 1e-2 already gave 1e-4, and
  warm-started solves took 30,000-80,000 SMO steps at n = 1,500). For the same reason each
  line-search trial's SMO also stops once its duality gap is at most ``PRECISE_SHARE * tol
  |U|``, whatever its KKT violation (checked every 1,000 steps, or l if fewer; our addition,
  session 16: on a8a-1500-poly at C = 100 the trials stopped after 7,000-23,000 steps with
  gaps of 1-3.4 where the KKT test took 13,000-29,000 steps to gaps of 0.1-0.3;
  ``bench_unseen.py``, fits alone, one thread, two interleaved fits each: 24 runs of seed 0
  852 -> 808 SVM solves, 115.0 -> 114.5 s, 22 runs of ``--seed 1`` 47.1 -> 42.7 s, geometric
  means of the time ratio 0.98 and 0.95; the seven small sets 452 -> 453 solves). Since
  session 20 every solve after the first stops so (not only the trials): on the full a9a a
  re-solve at the floor tolerance took 35,259 steps and 42 s, stopped on its gap 13,000
  steps and 21 s, to the same certificate;
- warm starts of every inner solve from the last alpha;
- a line-search trial whose value the search does not use once it fails (from the halvings
  on, ``s <= HALVE_BELOW``; runs without cutting planes) stops as soon as its SVM's dual
  value proves the test failed (:func:`~mklearn.svm.smo.solve_qp`'s ``stop_below``, checked
  every 100 SMO steps): the steps only raise that lower bound on ``W``, so the search makes
  the same decisions and takes the same path (our addition; PGD on w8a's first 5,000 points,
  one thread: 155 of its trials stopped after 186 SMO steps on average instead of 1,052,
  39.3 -> 29.6 s, the same 253 SVM solves and objective);
- a line search on the live kernels only (our addition, with kernel shrinking) gives up when
  its predicted decrease ``s * slope`` falls below ``NEGLIGIBLE * tol |T|``, and a failed one
  re-screens every kernel (a full gradient) instead of tightening the SVM: the restricted
  problem is then solved as far as the run needs (measured on ``bench_unseen.py``, C = 100:
  dna3-500 71 -> 30 SVM solves, mfeat0-1500 63 -> 22; over its 22 runs with the guards above
  1,149 -> 821 solves, and 892 -> 978 on a second draw, ``--seed 1``, all of the rise from
  w8a-1000 at C = 1, whose kinks fail every search; the seven small sets the same 452). A
  re-screen forced this way is not repeated within ``RESCREEN_CYCLE`` iterations;
- kernel shrinking (our addition, LIBSVM's shrinking applied to kernels): a kernel at zero
  weight that the regulariser's ``screen`` flags (l1: quadratic term below half the largest)
  is frozen, so most iterations combine and differentiate only the live kernels; every
  ``FULL_GRADIENT_EVERY`` iterations, and before any stop, the gradient over every kernel is
  computed, which re-screens and gives the exact certificate;
- predicted re-screening (our addition, with kernel shrinking): that full pass also keeps
  ``K_k v`` of every kernel, so that after each accepted step
  ``g_k(v') ~ g_k(v) + 2 (K_k v)'(v' - v)`` predicts, at the cost of one (m, n) product, which
  frozen kernels the moving SVM solution makes attractive (predicted ``g_k`` at least
  ``PREDICTED_SCREEN_RATIO`` of the largest live one); they are unfrozen at once, their exact
  ``g_k`` computed, instead of at the next full pass (measured on Sonar: 39 -> 21 iterations,
  5.6 -> 3.6 full passes). A prediction only chooses kernels; every bound stays exact;
- a projected Newton step over the live kernels (our addition; l1 on sums of kernels, and
  products of kernels with l1 or lp after ``NEWTON_AFTER`` SPG iterations): the Hessian of W
  from the SVM's sensitivity on its free support vectors (as in HessianMKL, Chapelle and
  Rakotomamonjy, NIPS workshop 2008; Gauss-Newton for products), its quadratic model
  minimised on the simplex (sums) or the orthant (products) by truncated FISTA (which damps
  the step along directions of tiny curvature), with the inner SVM first solved to
  ``NEWTON_INNER_TOL``; the step is halved up to ``NEWTON_HALVINGS`` times until it passes
  the non-monotone test, else none is tried for ``NEWTON_COOLDOWN`` iterations and the SPG
  step is taken (measured on products, l1, first fold of the seven small sets: Australian
  1.5 -> 0.3 s, Breast cancer 0.8 -> 0.1 s, within noise on lp); so too after
  ``NEWTON_SLOW_STEPS`` accepted Newton steps in a row that each close less than
  ``NEWTON_MIN_PROGRESS`` of the duality gap (an ill-conditioned model whose damped steps
  barely move: measured on a9a, 1,000 points, 100 unit-trace kernels, C = 100, 500
  iterations stuck at a relative gap of 1.8e-2 before, converged in 349 after; the seven
  small sets take the same SVM solves, 452 against 453 over three splits). The model is
  formed while its dense system (two f x f float64 arrays, f free support vectors) fits in
  ``NEWTON_MAX_BYTES`` (256 MB: f up to 4,095, a solve of 0.3-1 s; 2,000 before session 16:
  ``bench_unseen.py``'s a9a-5000 has 2,000-3,800 free support vectors, and with Newton steps
  its fits went from 37.9 to 16.2 s at C = 1 and 34.4 to 15.7 s at C = 100, 40 -> 9 and
  34 -> 8 SVM solves; no other problem of that benchmark, nor the seven small sets, has over
  2,000), or, up to ``NEWTON_MAX_FREE`` free SVs, in the part of the row budget that no
  kernel row holds at that moment (``spare_bytes`` of the row operator; the system is freed
  before the next SVM solve, so the fit stays within its budget). Measured on the full w8a
  (50 RBF kernels, C = 1, one thread; session 30): its 7,461 free SVs had left only SPG
  steps, 53 SVM solves in 115-145 s; with the model (an LU of 8-9 s a step) 18 solves in
  74-88 s, 1.75-2.32x the ``SVC`` anchor of the same run;
- a mirror-descent fallback (our addition; l1 on sums of kernels, C-SVC): when the certified
  relative gap has not halved over ``STALL_PASSES`` full-gradient passes, the run continues by
  :func:`~mklearn.solvers.mirror.mirror_descent` from the current weights and alpha, if the
  objective fell by less than ``STALL_PROGRESS * tol`` of itself meanwhile, for up to
  ``FALLBACK_ITER`` steps (once per run); if that does not certify, SPG resumes at the
  mirror's weights (all positive) with the better lower bound of the two. Where
  the SVM's solution is not unique (duplicate points on the features of the kernels in use),
  ``W`` has kinks and the gradient from the solution SMO returns is only a subgradient: the
  spectral step and the line search then creep, and that alpha gives a loose dual bound.
  Mirror descent needs no smoothness (Beck and Teboulle, Oper. Res. Lett. 31, 2003,
  Thm. 4.2) and keeps its own non-monotone Armijo search; both runs' bounds hold for the
  same problem, so the best upper bound and the best lower bound of the two certify the
  returned model. Measured on ``benchmarks/bench_unseen.py`` (l1, C in {1, 100}, one thread):
  w8a-1000 at C = 1 (its objective within 2e-4 of the optimum after 60 iterations, the gap
  at 7e-3) 841 iterations and 964 SVM solves -> 225 and 307, a8a-1500-poly at C = 1
  116 and 205 -> 74 and 124, the 22 other runs unchanged; the seven small sets the same
  452 SVM solves;
- an aggregate dual bound (our addition; sums of kernels): at each full-gradient pass the
  lower bound is maximised over the segment from the best dual point so far to the new SVM
  solution (:class:`~mklearn.solvers.dual_aggregate.DualAggregate`; from the pass's products
  ``K_k v`` at no extra pass, else one quadratic pass, taken only while the gap has not
  halved since the previous pass). At a kink the optimal alpha mixes the SVM solutions on
  either side of it, and no single one bounds well. Measured on ``bench_unseen.py``'s 24
  runs (fits alone, one thread, ``--solvers spg-l1 spg-l1-no-aggregate``): seed 0 916 -> 915
  SVM solves; its second draw (``--seed 1``) 1,750 -> 1,287, where w8a-1000 at C = 1, which
  stopped at a gap of 1.43e-3 after 1,140 solves, converges in 703; the seven small sets
  459 -> 453;
- a restricted start (our addition, with the Newton step): after the first SVM at uniform
  weights, the weights restart uniform on the ``START_KERNELS`` kernels of largest ``g_k``
  and the others are frozen, so the first steps combine tens of kernels, not all of them
  (measured over the seven small sets: 10-40% less time, the same optima);
- a coarse start (our addition, l1 on a sum of kernels, the row path, from
  ``coarse.COARSE_MIN_SAMPLES`` points): the run starts from the weights of the problem on a
  quarter of each class (:mod:`mklearn.solvers.coarse`), so its SVM solves combine the few
  kernels that carry weight there, not all of them (a9a, 10,000 points, 50 RBF kernels, one
  thread: 22.0 s, where the same run whose full-size solves started from uniform weights
  took 34.1 s; the full a9a in 70-83 s, against 52-63 s for ``SVC`` on one kernel).

Each switch can be turned off; all off gives the PGD baseline of the authors' code (a LIBSVM
fork whose ``SPGSolver`` runs PGD with ``use_SPG = 0``): Armijo search (eta = 0) along the
projection arc ``P(d - s grad)`` from ``s = 1`` at every iteration, the test
``T <= T_n - gamma s ||P(d - grad) - d||^2``, a fixed inner tolerance. Both searches backtrack
as that code does: the minimiser of the quadratic through the two values and the slope,
halving instead when that is at least ``0.9 s`` or at most 0.1. The non-monotone weight
eta moves as in the paper and that code: up by 0.025 when the first trial's decrease reaches
0.9 of the quadratic model's, down when it falls below 0.1 of it.

Stopping (sums of kernels): the duality gap ``U - L`` relative to ``|U|``, with
``U = r(d) + P_svm(alpha, b; d)`` (the SVM primal at the current alpha and the best bias: an upper
bound on ``T(d)``) and ``L = 1'alpha - r*(g(alpha)/2)`` (the MKL dual at the same alpha: a lower
bound on the optimum). Both bounds hold whatever the inner precision, so the gap is a proof.
"""

from __future__ import annotations

import time

import numpy as np

from mklearn._simplex import fista_orthant, fista_simplex
from mklearn.extending import ORTHANT, SIMPLEX, implements
from mklearn.solvers.coarse import coarse_weights
from mklearn.solvers.cutting_planes import MAX_KERNELS as PLANES_MAX_KERNELS
from mklearn.solvers.cutting_planes import CuttingPlaneBound
from mklearn.solvers.dual_aggregate import DualAggregate
from mklearn.solvers.mirror import mirror_descent
from mklearn.solvers.result import Certificate, MKLResult
from mklearn.solvers.tasks import ClassificationTask

LAMBDA_MIN = 1e-10
LAMBDA_MAX = 1e10
ARMIJO_GAMMA = 1e-4
INNER_TOL_START = 1e-1
MAX_HALVINGS = 40
FIRST_MOVE = 0.1  # bound on the first step's change of any weight
FULL_GRADIENT_EVERY = 10  # iterations between exact gradients over every kernel
HALVE_BELOW = 0.1  # line-search steps from which a failed trial's step is halved
NEWTON_COOLDOWN = 10  # iterations without a Newton trial after one was rejected
NEWTON_MAX_KERNELS = 200  # Newton model size: kernels in use plus the most attractive others
NEWTON_MAX_BYTES = 256 * 2**20  # the Newton system and its block of K: f x f float64 twice
NEWTON_BYTES_PER_ENTRY = 16  # M and K's block of the free SVs, then M and LAPACK's copy
NEWTON_MAX_FREE = 12_000  # free SVs of the largest Newton system (LU about 37 s on 1 core)
NEWTON_HALVINGS = 2  # damped Newton trials before falling back to the SPG step
NEWTON_MIN_MOVE = 1e-8  # a Newton step moving no weight further is no step
MIN_MOVE = 1e-12  # a line-search trial moving no weight further is d itself
RESCREEN_CYCLE = 3  # iterations within which a forced re-screen is not repeated
NEGLIGIBLE = 0.001  # predicted decrease, as a share of tol |T|, not worth a solve on live kernels
NEWTON_GAP = 1.0  # relative gap below which Newton trials start
NEWTON_INNER_TOL = 1e-4  # and the inner tolerance they need
START_KERNELS = 50  # kernels of the restricted start (l1, second order)
PREDICTED_SCREEN_RATIO = 0.7  # predicted g_k / largest live g_k that unfreezes a kernel
NEWTON_QP_ITER = 100  # FISTA iterations on the Newton model (measured: 500 cost 15% more time)
NEWTON_AFTER = 10  # SPG iterations before the first Newton trial on a product of kernels
NEWTON_MIN_PROGRESS = 1e-3  # share of the duality gap an accepted Newton step should close
NEWTON_SLOW_STEPS = 3  # consecutive Newton steps closing less before a cooldown
STALL_PASSES = 2  # full-gradient passes without halving the certified gap: mirror fallback
STALL_PROGRESS = 0.1  # ... while the objective fell by less than this times tol (relative)
FALLBACK_ITER = 50  # mirror-descent steps before SPG resumes at their weights
PRECISE_SHARE = 0.1  # SVM duality gap, as a share of tol |U|, below which SMO is not tightened


class _Evaluator:
    """Inner SVM solves at given kernel weights, with warm starts and a running count."""

    def __init__(self, combination, regularizer, y, cost, task=None):
        self.combination = combination
        self.regularizer = regularizer
        self.task = ClassificationTask(y, cost) if task is None else task
        self.y = self.task.signs
        self.cost = self.task.upper
        self.rows = self.task.index
        self.n_solves = 0
        self.anchor = None  # (v, g, P) of the last full pass that kept P[k] = K_k v
        self.gap_stop = None  # SVM duality gap at which every solve may stop (see spg_gmkl)
        self.planes = None  # a CuttingPlaneBound, for l1 on a sum of kernels

    def solve(self, d, alpha0, tol, products=None, reject_above=None):
        """The SVM at ``d`` from ``alpha0``. ``products``, the ``(kernels, K_k v0)`` kept at
        the point of ``alpha0`` (``v0`` its coefficients), give ``K(d) v0`` when they cover
        every kernel in use: the starting gradient then reads no row of ``K(d)``, and a solve
        on rows combined on demand reads only those its steps need (measured along
        ``bench_unseen.py``, 44 fits: 0.96x the total time; a8a-1500-poly 0.74-0.87x).
        ``reject_above``: stop the SVM, unsolved, once it proves ``T(d)`` above this value
        (its dual value, a lower bound on ``W(d)``, only rises); the point then has
        ``rejected`` True and ``T`` is only a lower bound."""
        warm = self._warm_product(d, products) if alpha0 is not None else None
        rows = getattr(self.combination, "kernel_rows", None)  # only the rows a solve reads
        expected = None if alpha0 is None else int(np.count_nonzero(alpha0))
        K = self.combination.kernel(d) if rows is None else rows(d, expected)
        r = self.regularizer.value(d)
        stop_below = None if reject_above is None else r - reject_above
        qp = self.task.solve(K, alpha0, tol, self.gap_stop, warm, stop_below)
        self.n_solves += 1
        T = r - qp.objective
        point = {"d": d, "K": K, "qp": qp, "T": T, "tol": tol, "rejected": qp.stopped_below}
        if self.planes is not None:
            v = self.task.coefficients(qp.alpha)
            if self._cheap_plane(d, v):
                self._add_plane(point, self.combination.kernel_gradient(d, v))
        return point

    def _cheap_plane(self, d, v):
        """Whether every kernel's quadratic term at ``v`` costs less than the solve's own
        reading of ``K(d)``'s support rows (support blocks: ``m |S|^2`` values against
        ``|S| n`` for each kernel in use)."""
        cheap = getattr(self.combination, "cheap_terms", None)
        support = int(np.count_nonzero(v))
        return (cheap is not None and cheap(support) and
                self.combination.n_kernels * support <= v.size * max(np.count_nonzero(d), 1))

    def _add_plane(self, point, terms):
        self.planes.add(self.task.linear_value(point["qp"].alpha), terms)
        point["plane"] = True

    def _warm_product(self, d, products):
        """``sum_k d_k K_k v0`` from the kept products, or None if some kernel in use has
        none (or the combination is not a sum)."""
        if not getattr(self.combination, "linear", False):
            return None
        used = np.flatnonzero(d)
        kept = _kept_products(products, d.size, used)
        return None if kept is None else d[used] @ kept

    def gradient(self, point, live=None):
        """Gradient at ``point``: exact on ``live`` kernels (all if None), NaN elsewhere."""
        v = self.task.coefficients(point["qp"].alpha)
        d = point["d"]
        point["products"] = None
        if live is None or live.all():
            g = self._full_gradient(point, d, v)
        else:
            g = np.full(d.shape, np.nan)
            g[live] = self.partial_gradient(point, np.flatnonzero(live))
        point["g"] = g
        point["complete"] = not np.isnan(g).any()
        if point["complete"] and self.planes is not None and not point.get("plane"):
            self._add_plane(point, g)
        point["grad"] = self.regularizer.gradient(d) - 0.5 * g
        return point["grad"]

    def _full_gradient(self, point, d, v):
        """Every ``g_k``; also the anchor of :meth:`predicted_terms` when the combination
        gives the products ``K_k v`` in the same pass."""
        products = getattr(self.combination, "gradient_and_products", None)
        result = None if products is None else products(v)
        if result is None:
            self.anchor = None
            return self.combination.kernel_gradient(d, v)
        g, P = result
        self.anchor = (v, g, P)
        point["products"] = (np.arange(g.size), P)
        return g

    def partial_gradient(self, point, kernels):
        """``g_k`` of ``kernels`` at ``point``; their products ``K_k v`` join those kept in
        ``point["products"]`` (the rows of a Newton model)."""
        v = self.task.coefficients(point["qp"].alpha)
        products = getattr(self.combination, "gradient_and_products", None)
        result = None if products is None else products(v, kernels)
        if result is None:
            return self.combination.kernel_gradient(point["d"], v, kernels)
        g, P = result
        if point.get("products") is not None:
            known, kept = point["products"]
            kernels, P = np.concatenate([known, kernels]), np.vstack([kept, P])
        point["products"] = (kernels, P)
        return g

    def products_at(self, point):
        """``K_k v`` of every kernel at ``point`` (shape (m, n)) if the last full pass kept
        them there, else None."""
        if self.anchor is None:
            return None
        v, _, products = self.anchor
        same = np.array_equal(v, self.task.coefficients(point["qp"].alpha))
        return products if same else None

    def predicted_terms(self, point):
        """``g_k`` of every kernel at ``point`` to first order from the anchor, or None."""
        if self.anchor is None:
            return None
        v0, g0, products = self.anchor
        return g0 + 2.0 * (products @ (self.task.coefficients(point["qp"].alpha) - v0))

    def bounds(self, point):
        """(upper bound on T(d), lower bound on the optimum) at ``point``.

        The lower bound needs every ``g_k``; with a partial gradient it is the bound of the
        problem restricted to the live kernels (not a bound on the full optimum). NaN where
        the combination has no dual (products).
        """
        if not getattr(self.combination, "linear", False):
            return np.nan, np.nan
        alpha = point["qp"].alpha
        if "primal" not in point:  # from the solve's gradient: no product with K(d)
            point["primal"] = self.task.primal(point["K"], alpha, point["qp"].grad)
        primal, point["bias"] = point["primal"]
        upper = self.regularizer.value(point["d"]) + primal
        g = point["g"]
        lower = self.task.linear_value(alpha) - self.regularizer.conjugate(0.5 * g[~np.isnan(g)])
        return upper, lower


def spg_gmkl(
    combination,
    y,
    C,
    regularizer,
    *,
    tol=1e-3,
    max_iter=500,
    spectral=True,
    nonmonotone=True,
    precision_tuning=True,
    inner_tol=1e-6,
    eta0=0.5,
    d0=None,
    callback=None,
    second_order=True,
    max_time=None,
    task=None,
    fallback=True,
    aggregate_bound=True,
    coarse_start=True,
    cutting_planes=True,
) -> MKLResult:
    """Minimise ``T(d) = r(d) + W(d)`` by SPG-GMKL (or PGD with every switch off).

    Parameters
    ----------
    combination : SumOfKernels
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
        The inner problem and its loss (:mod:`mklearn.formulation.losses`); default C-SVC on
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
    start = time.perf_counter()
    y = np.asarray(y, dtype=np.float64)
    cost = np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape).copy()
    evaluator = _Evaluator(combination, regularizer, y, cost, task)
    n_kernels = combination.n_kernels
    coarse = None
    if (coarse_start and d0 is None and task is None and max_time is None and spectral
            and _simplex_newton(combination, regularizer)):
        options = dict(spectral=spectral, nonmonotone=nonmonotone, eta0=eta0,
                       precision_tuning=precision_tuning, inner_tol=inner_tol,
                       second_order=second_order, fallback=fallback,
                       aggregate_bound=aggregate_bound, cutting_planes=cutting_planes,
                       max_iter=max_iter)
        coarse = coarse_weights(combination, y, cost, lambda part, y_part, cost_part, **k:
                                spg_gmkl(part, y_part, cost_part, regularizer, **k),
                                tol=tol, **options)
    if coarse is not None:  # feasible already (projecting again could spread rounding over
        d0, evaluator.n_solves = coarse  # every kernel: sum(d0) = 1 - 1e-16)
        d = d0.copy()
    else:
        d = regularizer.project(
            regularizer.initial_weights(n_kernels) if d0 is None else np.asarray(d0, float)
        )
    floor = min(inner_tol, tol / 100.0)
    eps = INNER_TOL_START if precision_tuning else inner_tol
    eta = eta0 if nonmonotone else 0.0

    point = evaluator.solve(d, None, eps)
    grad = evaluator.gradient(point)
    certificate = Certificate()
    certificate.update(point, *evaluator.bounds(point), point["complete"])
    linear_model = getattr(combination, "linear", False)
    aggregate = (DualAggregate(evaluator.task, combination, regularizer)
                 if linear_model and aggregate_bound else None)
    if aggregate is not None:
        aggregate.add(d, point["qp"].alpha, point["g"])
    if (cutting_planes and linear_model and _simplex_newton(combination, regularizer)
            and n_kernels <= PLANES_MAX_KERNELS):
        evaluator.planes = CuttingPlaneBound(n_kernels)
        if point["complete"]:
            evaluator._add_plane(point, point["g"])
    restricted = second_order and d0 is None and _simplex_newton(combination, regularizer)
    second_order = second_order and (
        _simplex_newton(combination, regularizer) or _orthant_newton(combination, regularizer)
    )
    if restricted:  # start on the kernels that screening keeps
        d = _restricted_start(regularizer, d, grad)
        restricted = not np.array_equal(d, point["d"])  # too few kernels: d is unchanged
    if restricted:
        point = evaluator.solve(d, point["qp"].alpha, eps, point.get("products"))
    live = ~regularizer.screen(point["d"], grad)
    if restricted:
        grad = evaluator.gradient(point, live)
    ref_value, ref_weight = point["T"], 1.0
    step_len = _initial_step(regularizer, d, grad) if spectral else 1.0
    history, converged, n_iter, since_full = [], False, 0, 0
    stop_reason = "max_iter"
    newton_wait = 0 if linear_model else NEWTON_AFTER
    slow_newton = 0
    fallback = (fallback and spectral and task is None and max_time is None
                and _simplex_newton(combination, regularizer))
    passes = []  # (certified relative gap, objective) at each full-gradient pass

    spent = 0  # iterations of the mirror-descent phase
    rescreened_at = -RESCREEN_CYCLE - 1  # iteration of the last re-screen forced by a search
    for n_iter in range(1, max_iter + 1):
        if n_iter + spent > max_iter:
            n_iter -= 1
            break
        upper, lower = evaluator.bounds(point)
        rel_gap = (upper - lower) / max(abs(upper), 1e-12)  # restricted to live kernels
        if not point["complete"] and (rel_gap <= tol or since_full >= FULL_GRADIENT_EVERY):
            grad = evaluator.gradient(point)  # every kernel: exact certificate
            upper, lower = evaluator.bounds(point)
        certificate.update(point, upper, lower, point["complete"])
        if point["complete"]:
            if aggregate is not None and certificate.relative_gap > tol:
                products = evaluator.products_at(point)
                # without the products the segment costs a pass: only when the gap stalls
                stalling = bool(passes) and certificate.relative_gap > 0.5 * passes[-1][0]
                if products is not None or stalling:
                    certificate.lower = max(certificate.lower, aggregate.add(
                        point["d"], point["qp"].alpha, point["g"], products))
            rel_gap = certificate.relative_gap
            live = ~regularizer.screen(point["d"], grad)
            since_full = 0
            passes.append((rel_gap, point["T"]))
        planes_certify = False
        if evaluator.planes is not None and certificate.relative_gap > tol:
            certificate.lower = max(certificate.lower, evaluator.planes.bound())
            planes_certify = certificate.relative_gap <= tol
            if planes_certify:
                rel_gap = certificate.relative_gap
        # an SVM stops once its own duality gap cannot matter to the certificate
        if precision_tuning and linear_model and np.isfinite(upper):
            evaluator.gap_stop = PRECISE_SHARE * tol * abs(upper)
        d = point["d"]
        pg_norm = float(np.max(np.abs(_project_live(regularizer, d - grad, live) - d)))
        # the inner solve is precise enough once the SVM's own duality gap (U - T) is a small
        # share of the gap the run must reach: a tighter SMO would not change the certificate
        svm_gap = upper - point["T"]
        precise = linear_model and svm_gap <= PRECISE_SHARE * tol * abs(upper)
        if precision_tuning and not precise:
            target = 0.1 * min(rel_gap if np.isfinite(rel_gap) else np.inf, pg_norm)
            if linear_model and svm_gap > 0.5 * (upper - lower):  # the SVM's gap dominates
                target = min(target, point["tol"] / 10.0)
            eps = min(eps, max(floor, target))
        record = {
            "iteration": n_iter - 1 + spent,
            "objective": point["T"],
            "relative_duality_gap": rel_gap,
            "pg_norm": pg_norm,
            "inner_tol": eps,
            "n_live": int(live.sum()),
            "n_svm_solves": evaluator.n_solves,
            "time": time.perf_counter() - start,
        }
        history.append(record)
        if callback is not None:
            callback(record)
        certified = (rel_gap <= tol) if np.isfinite(rel_gap) else (pg_norm <= tol)
        if planes_certify or (point["complete"] and certified):
            converged, stop_reason = True, "converged"
            n_iter -= 1
            break
        if max_time is not None and record["time"] > max_time:
            stop_reason = "max_time"
            break
        if fallback and since_full == 0 and _stalled(passes, tol):
            fallback = False  # once per run
            phase = _mirror_phase(
                combination, y, cost, regularizer, certificate, point, history, evaluator,
                tol=tol, max_iter=min(FALLBACK_ITER, max_iter - n_iter - spent + 1),
                inner_tol=inner_tol, precision_tuning=precision_tuning, callback=callback,
                start=start,
            )
            if phase.converged:
                return phase
            # not certified within its budget: SPG resumes at the mirror's weights
            spent = phase.n_iter - n_iter  # the next record follows the phase's last
            point = evaluator.solve(phase.kernel_weights, phase.alpha, eps)
            grad = evaluator.gradient(point)
            certificate.update(point, *evaluator.bounds(point))
            certificate.lower = max(certificate.lower, phase.objective - phase.duality_gap)
            live = ~regularizer.screen(point["d"], grad)
            ref_value, ref_weight = point["T"], 1.0
            step_len = _initial_step(regularizer, point["d"], grad) if spectral else 1.0
            passes = []
            continue
        newton_wait -= 1
        if second_order and newton_wait <= 0 and not rel_gap >= NEWTON_GAP:  # NaN: products
            eps = min(eps, NEWTON_INNER_TOL)
            if point["tol"] > eps:  # the Hessian needs the SVM's partition: solve more precisely
                point = evaluator.solve(d, point["qp"].alpha, eps, point.get("products"))
                grad = evaluator.gradient(point, live)
                ref_value = min(ref_value, point["T"])
            accepted = _newton_step(evaluator, point, grad, live, eps, ref_value)
            slow_newton = 0 if accepted is None or _newton_progress(
                point, accepted, upper - lower) else slow_newton + 1
            if accepted is None or slow_newton >= NEWTON_SLOW_STEPS:
                newton_wait = NEWTON_COOLDOWN  # rejected, or damped steps that barely move
                slow_newton = 0
            if accepted is not None:
                new_grad = evaluator.gradient(accepted, live)
                step_len = _next_step(
                    spectral, step_len, 1.0, (accepted["d"] - d)[live], (new_grad - grad)[live]
                )
                ref_value, ref_weight = accepted["T"], 1.0
                point, grad = accepted, new_grad
                since_full += 1
                live, grad = _unfreeze_predicted(evaluator, point, live, grad)
                continue
        if spectral:  # along p = d - P(d - lambda grad)
            direction = change = d - _project_live(regularizer, d - step_len * grad, live)
            slope = float(grad[live] @ direction[live])
        else:  # PGD: along the projection arc P(d - s grad), from s = 1 (the authors' code)
            direction, change = grad, d - _project_live(regularizer, d - grad, live)
            slope = float(change[live] @ change[live])
        # re-screening every kernel is the answer to a restricted problem without descent,
        # unless the last re-screen led straight back here (then tighten the SVM as before)
        rescreen = not point["complete"] and n_iter - rescreened_at > RESCREEN_CYCLE
        if slope <= 0.0 and rescreen:  # none on the live kernels
            since_full, rescreened_at = FULL_GRADIENT_EVERY, n_iter
            continue
        if slope <= 0.0:  # no descent left at this inner precision
            if point["tol"] <= floor:
                stop_reason = "stalled"
                break
            eps = max(floor, min(eps, point["tol"]) / 10.0)
            point = evaluator.solve(d, point["qp"].alpha, eps, point.get("products"))
            grad = evaluator.gradient(point, live)
            continue
        s, accepted, first = 1.0, None, None
        for halving in range(MAX_HALVINGS):
            trial_d = _project_live(regularizer, d - s * direction, live)
            if spectral and np.max(np.abs(trial_d - d)) <= MIN_MOVE:
                break  # the trial is d itself, to rounding
            if rescreen and s * slope <= NEGLIGIBLE * tol * abs(ref_value):
                break  # the restricted problem is solved as far as the run needs: re-screen
            bound = ref_value - ARMIJO_GAMMA * s * slope
            # a trial whose value the search does not use once it fails (halvings from
            # HALVE_BELOW on; no cutting planes) stops as soon as its SVM proves it fails
            early = first is not None and s <= HALVE_BELOW and evaluator.planes is None
            trial = evaluator.solve(trial_d, point["qp"].alpha, eps, point.get("products"),
                                    bound if early else None)
            first = trial["T"] if first is None else first
            if not trial["rejected"] and trial["T"] <= bound:
                accepted = trial
                break
            s = _backtrack(s, slope, point["T"], trial["T"])
            if precision_tuning and halving % 3 == 2 and not precise:
                eps = max(floor, eps / 10.0)
        if accepted is None and rescreen:
            # no descent on the live kernels: the restricted problem is solved as far as this
            # search can tell; re-screen every kernel before solving more precisely
            since_full, rescreened_at = FULL_GRADIENT_EVERY, n_iter
            continue
        if accepted is None:
            if point["tol"] <= floor:
                stop_reason = "stalled"
                break
            # the reference objective was computed at a looser inner tolerance than the trials:
            # recompute it at the floor, so that the search compares like with like, and retry
            eps = floor
            point = evaluator.solve(d, point["qp"].alpha, eps, point.get("products"))
            grad = evaluator.gradient(point, live)
            ref_value, ref_weight = point["T"], 1.0
            continue
        if nonmonotone:  # the quadratic model's decrease against the first trial's
            quadratic = float(change[live] @ change[live]) / (2.0 * step_len)
            eta = _adapt_eta(eta, point["T"] - first, float(grad[live] @ change[live]) - quadratic)
        new_grad = evaluator.gradient(accepted, live)
        step_len = _next_step(
            spectral, step_len, s, (accepted["d"] - d)[live], (new_grad - grad)[live]
        )
        new_weight = eta * ref_weight + 1.0
        ref_value = (eta * ref_weight * ref_value + accepted["T"]) / new_weight
        ref_weight = new_weight
        point, grad = accepted, new_grad
        since_full += 1
        live, grad = _unfreeze_predicted(evaluator, point, live, grad)

    if stop_reason == "stalled" and np.isfinite(certificate.upper):
        evaluator.gradient(point)  # the last point was re-solved more precisely: certify it
        certificate.update(point, *evaluator.bounds(point))
        converged = certificate.relative_gap <= tol
        stop_reason = "converged" if converged else stop_reason
    if linear := np.isfinite(certificate.upper):
        point = certificate.point
    bias = point["bias"] if linear else -point["qp"].rho
    return MKLResult(
        kernel_weights=point["d"],
        alpha=point["qp"].alpha,
        intercept=bias,
        objective=point["T"],
        duality_gap=certificate.gap if linear else np.nan,
        relative_duality_gap=certificate.relative_gap if linear else np.nan,
        n_iter=n_iter + spent,
        n_svm_solves=evaluator.n_solves,
        converged=converged,
        history=history,
        stop_reason=stop_reason,
    )


def _stalled(passes, tol):
    """Whether over the last ``STALL_PASSES`` full-gradient passes the certified gap has not
    halved while the objective moved by less than ``STALL_PROGRESS * tol`` of itself: the
    primal is as good as the tolerance asks but the dual bound does not follow (a gap that
    stays large while the objective still falls is SPG's normal course: frozen kernels
    coming back)."""
    if len(passes) <= STALL_PASSES:
        return False
    (gap_then, value_then), (gap_now, value_now) = passes[-1 - STALL_PASSES], passes[-1]
    return gap_now > 0.5 * gap_then and value_then - value_now < STALL_PROGRESS * tol * abs(
        value_now)


def _mirror_phase(combination, y, cost, regularizer, certificate, point, history, evaluator,
                  *, tol, max_iter, inner_tol, precision_tuning, callback, start):
    """Up to ``max_iter`` steps of mirror descent from ``point`` (l1 on a sum of kernels),
    recorded in ``history`` and counted in ``evaluator.n_solves``; the result keeps the better
    model and the better lower bound of the two runs."""
    n_spg = history.pop()["iteration"]  # the last record is the phase's starting point
    spg_solves = evaluator.n_solves
    spg_upper, spg_lower = certificate.upper, certificate.lower
    best_lower = [spg_lower]

    def merged(record):
        lower = record["objective"] * (1.0 - record["relative_duality_gap"])
        best_lower[0] = max(best_lower[0], lower)
        upper = min(spg_upper, record["objective"])
        out = {
            "iteration": n_spg + record["iteration"],
            "objective": upper,
            "relative_duality_gap": max(upper - best_lower[0], 0.0) / max(abs(upper), 1e-12),
            "pg_norm": np.nan,
            "inner_tol": record["inner_tol"],
            "n_live": combination.n_kernels,
            "n_svm_solves": spg_solves + record["n_svm_solves"],
            "time": time.perf_counter() - start,
        }
        history.append(out)
        if callback is not None:
            callback(out)

    result = mirror_descent(
        combination, y, cost, regularizer, tol=tol, max_iter=max(max_iter, 1), callback=merged,
        inner_tol=inner_tol, precision_tuning=precision_tuning, d0=point["d"],
        alpha0=point["qp"].alpha,
    )
    evaluator.n_solves += result.n_svm_solves
    lower = max(spg_lower, result.objective - result.duality_gap)
    if result.objective < spg_upper:
        weights, alpha, bias, objective = (result.kernel_weights, result.alpha,
                                           result.intercept, result.objective)
    else:
        best = certificate.point
        weights, alpha, bias, objective = best["d"], best["qp"].alpha, best["bias"], best["T"]
    upper = min(spg_upper, result.objective)
    gap = max(upper - lower, 0.0)
    relative = gap / max(abs(upper), 1e-12)
    converged = relative <= tol
    return MKLResult(
        kernel_weights=weights,
        alpha=alpha,
        intercept=bias,
        objective=objective,
        duality_gap=gap,
        relative_duality_gap=relative,
        n_iter=n_spg + result.n_iter,
        n_svm_solves=spg_solves + result.n_svm_solves,
        converged=converged,
        history=history,
        stop_reason="converged" if converged else result.stop_reason,
    )


def _unfreeze_predicted(evaluator, point, live, grad):
    """Unfreeze the kernels whose predicted ``g_k`` at ``point`` reaches
    ``PREDICTED_SCREEN_RATIO`` of the largest live one; return (live, grad) with their exact
    gradients filled in."""
    if live.all():
        return live, grad
    predicted = evaluator.predicted_terms(point)
    if predicted is None:
        return live, grad
    g = point["g"].copy()
    extra = np.flatnonzero(~live & (predicted >= PREDICTED_SCREEN_RATIO * np.max(g[live])))
    if extra.size == 0:
        return live, grad
    d = point["d"]
    g_extra = evaluator.partial_gradient(point, extra)
    g[extra] = g_extra
    point["g"] = g
    grad = grad.copy()
    grad[extra] = evaluator.regularizer.gradient(d)[extra] - 0.5 * g_extra
    point["grad"] = grad
    live = live.copy()
    live[extra] = True
    return live, grad


def _simplex_newton(combination, regularizer):
    """Second-order steps on the simplex: l1-MKL (``r = 0`` on the simplex) over a sum of
    kernels."""
    return (
        getattr(regularizer, "feasible_set", None) == SIMPLEX
        and getattr(combination, "linear", False)
    )


def _orthant_newton(combination, regularizer):
    """Second-order steps on ``d >= 0``: a combination with ``derivative_times`` (products of
    RBF kernels) and a regulariser with a Hessian, projected onto the orthant."""
    return (
        implements(combination, "derivative_times")
        and implements(regularizer, "hessian")
        and getattr(regularizer, "feasible_set", None) == ORTHANT
    )


def _newton_trial(evaluator, point, grad, live):
    """Minimiser of the quadratic model of T over the feasible face of the live kernels, or None.

    With the SVM partition fixed, ``d alpha_F / d d_j`` solves
    ``[[Q_FF, y_F], [y_F', 0]] [dalpha_F; db] = [-(H_j alpha)_F; 0]``, which gives the Hessian
    ``d2W / dd_k dd_j = (H_k alpha)_F' dalpha_F^(j)`` (Chapelle and Rakotomamonjy, 2008). For
    a kernel not linear in d (products), ``H_k = Y (dK/dd_k) Y`` and the model is
    Gauss-Newton: it leaves out ``-v' (d2K / dd_k dd_j) v / 2``, which makes it positive
    semi-definite (products are not convex) and spares an ``O(n^2 m^2)`` pass (measured: with
    that term, 16 ms a step on Sonar and Australian l1 stalled); the regulariser's Hessian is
    added. The model ``grad' s + s' H s / 2`` is minimised over
    ``{d + s feasible, s_k = 0 off live}`` (the simplex for sums, ``d >= 0`` for products) by
    truncated FISTA: a damped projected Newton step, in which kernels may enter.
    """
    d = point["d"]
    kernels = np.flatnonzero(live)
    alpha, y, cost = point["qp"].alpha, evaluator.y, evaluator.cost
    margin = 1e-8 * cost
    free = np.flatnonzero((alpha > margin) & (alpha < cost - margin))
    if kernels.size < 2 or kernels.size > NEWTON_MAX_KERNELS or free.size == 0:
        return None
    if not _newton_fits(evaluator.combination, free.size):
        return None
    v = evaluator.task.coefficients(alpha)
    rows = evaluator.rows[free]  # the kernel row of each free variable (SVR: two per sample)
    combination, regularizer = evaluator.combination, evaluator.regularizer
    simplex = getattr(combination, "linear", False)
    if simplex:
        h = y[free] * _kernel_rows_times(evaluator, point, kernels, rows, v)  # (|L|, f)
    else:
        h = y[free] * combination.derivative_times(d, v, rows)[kernels]
    y_f = y[free]
    f = free.size
    M = np.zeros((f + 1, f + 1))  # M and K's block, then M and LAPACK's copy: f x f each
    K = point["K"]
    M[:f, :f] = K.submatrix(rows) if hasattr(K, "submatrix") else K[np.ix_(rows, rows)]
    M[:f, :f] *= y_f[:, None]
    M[:f, :f] *= y_f[None, :]
    M[:f, f] = y_f
    M[f, :f] = y_f
    diagonal = np.arange(f)
    M[diagonal, diagonal] += 1e-10 * max(float(np.trace(M[:f, :f])) / f, 1e-300)
    R = np.zeros((f + 1, kernels.size))
    R[:f] = -h.T
    try:  # LU on a copy of M
        sens = np.linalg.solve(M, R)[:f]  # dalpha_F / dd_j, one column per live kernel
    except np.linalg.LinAlgError:
        return None
    del M
    hessian = -(h @ sens)
    if not simplex:
        hessian += regularizer.hessian(d)[np.ix_(kernels, kernels)]
    hessian = 0.5 * (hessian + hessian.T)
    curvature = float(np.linalg.eigvalsh(hessian)[-1])
    if not curvature > 0.0:
        return None
    solve = fista_simplex if simplex else fista_orthant
    return solve(
        d[kernels], grad[kernels], np.ascontiguousarray(hessian), 1 / curvature, NEWTON_QP_ITER
    )


def _newton_fits(combination, n_free):
    """Whether the Newton system of ``n_free`` free support vectors may be formed: at most
    ``NEWTON_MAX_FREE`` of them (LU costs ``2 f^3 / 3``), in ``NEWTON_MAX_BYTES`` or
    in the part of the row budget no row holds now (``spare_bytes``; the system is freed
    before the next SVM solve, so the fit stays within its budget)."""
    if n_free > NEWTON_MAX_FREE:
        return False
    need = NEWTON_BYTES_PER_ENTRY * (n_free + 1) ** 2
    if need <= NEWTON_MAX_BYTES:
        return True
    return implements(combination, "spare_bytes") and need <= combination.spare_bytes()


def _kernel_rows_times(evaluator, point, kernels, rows, v):
    """``K_k[rows] @ v`` for each k in ``kernels``: from the products the gradient kept at
    ``point`` when it has all of them, else computed."""
    kept = _kept_products(point.get("products"), evaluator.combination.n_kernels, kernels)
    if kept is not None:
        return kept[:, rows]
    return evaluator.combination.kernel_rows_times(kernels, rows, v)


def _kept_products(products, n_kernels, kernels):
    """The rows ``K_k v`` of ``kernels`` among the products ``(known, P)`` a gradient kept
    (shape (len(kernels), n)), or None if some of them are not there."""
    if products is None:
        return None
    known, P = products
    position = np.full(n_kernels, -1)
    position[known] = np.arange(known.size)
    if (position[kernels] < 0).any():
        return None
    return P[position[kernels]]


def _newton_step(evaluator, point, grad, live, eps, ref_value):
    """The Newton trial point, damped by halving towards ``d`` (``NEWTON_HALVINGS`` times) until
    it passes the line-search test; None if it never does."""
    live = _newton_kernels(point["d"], grad, live)
    if live is None:
        return None
    x = _newton_trial(evaluator, point, grad, live)
    on_simplex = getattr(evaluator.combination, "linear", False)
    if x is None or not np.isfinite(x).all() or (on_simplex and not abs(x.sum() - 1.0) <= 1e-6):
        return None  # FISTA overflowed (flat model)
    d = point["d"]
    step = x - d[live]  # NaN gradients off the live kernels: never touched
    for _ in range(NEWTON_HALVINGS + 1):
        decrease = -float(grad[live] @ step)
        if decrease <= 0 or np.max(np.abs(step)) <= NEWTON_MIN_MOVE:
            return None
        trial_d = d.copy()
        trial_d[live] = np.maximum(d[live] + step, 0.0)
        trial = evaluator.solve(trial_d, point["qp"].alpha, eps, point.get("products"))
        if trial["T"] <= ref_value - ARMIJO_GAMMA * decrease:
            return trial
        step *= 0.5
    return None


def _newton_progress(point, accepted, gap):
    """Whether an accepted Newton step decreased T by at least ``NEWTON_MIN_PROGRESS`` of the
    duality gap ``gap`` (true when there is no gap, as for products). Truncated FISTA damps
    the step along directions of small curvature: on an ill-conditioned model (most alphas at
    their bounds) it accepts steps that barely move, iteration after iteration (measured: a9a,
    1,000 points, 100 unit-trace kernels, C = 100: 500 Newton steps closed 0.01% of the gap)."""
    if not np.isfinite(gap):
        return True
    return point["T"] - accepted["T"] >= NEWTON_MIN_PROGRESS * gap


def _newton_kernels(d, grad, live):
    """The kernels of the Newton model: the live ones, or if they are more than
    ``NEWTON_MAX_KERNELS``, those in use plus the most attractive others (most negative
    gradient) up to that number; None if the kernels in use alone are too many."""
    if live.sum() <= NEWTON_MAX_KERNELS:
        return live
    chosen = d > 0
    room = NEWTON_MAX_KERNELS - int(chosen.sum())
    if room < 0:
        return None
    candidates = np.flatnonzero(live & ~chosen)
    chosen[candidates[np.argsort(grad[candidates])[:room]]] = True
    return chosen


def _restricted_start(regularizer, d, grad):
    """Uniform weights on the ``START_KERNELS`` kernels of largest ``g_k`` (most negative
    gradient), when that keeps at most half of them; else ``d`` unchanged.

    At the l1 optimum the kernels in use share the largest ``g_k``; starting on the most
    attractive ones (the others frozen until a full gradient re-screens them) spares the dense
    passes over every kernel that the first steps from uniform weights would take.
    """
    if START_KERNELS == 0 or d.size < 2 * START_KERNELS:  # keep at most half
        return d
    keep = np.zeros(d.size, bool)
    keep[np.argsort(grad)[:START_KERNELS]] = True
    return keep / keep.sum()


def _project_live(regularizer, v, live):
    """Project onto the feasible set with the frozen kernels held at zero."""
    if live.all():
        return regularizer.project(v)
    out = np.zeros_like(v)
    out[live] = regularizer.project(v[live])
    return out


def _initial_step(regularizer, d, grad):
    """First step length: the unprojected step moves no weight by more than ``FIRST_MOVE``.

    Birgin, Martinez and Raydan's ``1 / ||P(d - grad) - d||_inf`` assumes a well-scaled
    problem; MKL gradients are of the order of the SVM objective (1e4 at C = 100), and that
    rule's first step lands on a vertex of the simplex, a poor start (measured: 4x more time
    over the small benchmark sets).
    """
    norm = float(np.nanmax(np.abs(grad)))  # NaN off the live kernels
    return float(np.clip(FIRST_MOVE / norm, LAMBDA_MIN, LAMBDA_MAX)) if norm > 0 else 1.0


def _next_step(spectral, step_len, s, d_change, grad_change):
    """The Barzilai-Borwein step ``s's / s'y``; without curvature (``s'y <= 0``: the gradient
    did not change, as on a linear piece of W between kinks) twice the step just accepted,
    ``2 s step_len``, not ``LAMBDA_MAX``: a trial at a vertex of the simplex crosses the next
    kink and backtracks by halvings (measured on ``bench_unseen.py``'s w8a-1000 at C = 1:
    20-24 halvings a step, 710 -> 217 SVM solves, and 353 -> 209 with ``--seed 1``; its 20
    other runs of each seed (a9a-5000 left out) take the same solves; the seven small sets
    467 -> 466)."""
    if not spectral:
        return 1.0
    sz = float(d_change @ grad_change)
    if sz <= 0.0:
        return float(np.clip(2.0 * s * step_len, LAMBDA_MIN, LAMBDA_MAX))
    return float(np.clip(float(d_change @ d_change) / sz, LAMBDA_MIN, LAMBDA_MAX))


def _backtrack(s, slope, value, trial_value):
    """The next trial step after ``s`` failed: the minimiser of the quadratic through the
    value, the slope and the failed trial, unless it is at least ``0.9 s`` or at most 0.1
    (then ``s / 2``); from ``s = HALVE_BELOW`` (0.1) down always ``s / 2`` (the authors' C
    code, ``SPGSolver``), whatever the trial's value."""
    if s <= HALVE_BELOW:
        return 0.5 * s
    curvature = trial_value - value + s * slope
    ratio = 0.5 * s * slope / curvature if curvature > 0 else 0.5
    if not ratio < 0.9:
        ratio = 0.5
    return s * ratio if s * ratio > 0.1 else 0.5 * s


def _adapt_eta(eta, actual, predicted):
    """Move eta by 0.025: more averaging (less monotone) when the first trial's decrease
    reaches 0.9 of the quadratic model's, less when it falls below 0.1 of it (the paper's
    rule and the authors' ratios)."""
    ratio = actual / predicted if predicted > 0 else 1.0
    if ratio > 0.9:
        return min(1.0, eta + 0.025)
    if ratio < 0.1:
        return max(0.1, eta - 0.025)
    return eta

