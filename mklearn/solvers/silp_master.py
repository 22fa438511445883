"""SILP's restricted master LP (:class:`MasterLP`, HiGHS) and the history, certificate and
stopping rule of a SILP run (:class:`Progress`), shared by :mod:`mklearn.solvers.silp`,
:mod:`mklearn.solvers.silp_linadd` and :mod:`mklearn.solvers.cutting_planes`."""

from __future__ import annotations

import time

import highspy
import numpy as np

from mklearn.solvers.result import Certificate, HistoryRecord, MKLResult

__all__ = ["MasterLP", "Progress"]

PRUNE_AGE = 5  # LP solves a constraint may stay inactive before it is dropped
LEVEL = 0.3  # the level method's lambda: level = L + LEVEL (U - L) (Xu et al. used 0.9;
# 0.3 took the fewest LP solves on Sonar, liver and Pima at C = 1 and 100)
INNER_TOL_FLOOR = 1e-9  # tightest inner KKT tolerance (below it rounding dominates)
_ACTIVE_DUAL = 1e-12
# iterations of one level projection at most (HiGHS's QP), plus so many per kernel
QP_ITERATIONS = 1000
QP_ITERATIONS_PER_KERNEL = 10


def _silent_highs():
    """A HiGHS instance that prints nothing.

    highspy's ``Highs()`` prints its banner while it enables callbacks in its constructor,
    before any option can be set (highspy 1.16; ERGO-Code/HiGHS issue 2749); the core class
    it wraps does not, and has every method the master LP uses."""
    core = getattr(getattr(highspy, "_core", None), "_Highs", None)
    lp = highspy.Highs() if core is None else core()
    lp.setOptionValue("output_flag", False)
    return lp


class MasterLP:
    """The restricted master problem ``max theta`` s.t. ``beta in simplex``,
    ``S^r' beta >= theta`` for the constraints r added so far; HiGHS, hot-started.

    Column ``m`` is theta; row 0 is ``sum beta = 1``; every other row is
    ``theta - S^r' beta <= 0``. With ``prune``, constraints inactive for ``PRUNE_AGE`` solves
    are dropped; ``duals`` holds the absolute row duals of the constraints at the last solve.
    The cuts enter divided by ``scale``, the largest ``|S_k|`` of the first one, so that HiGHS's
    absolute tolerances see values near 1 whatever the kernels' units (a float32 stack near
    its largest value gives ``S`` near 1e-37); ``theta`` comes back in the cuts' units.
    """

    def __init__(self, n_kernels: int, prune: bool = True, level: bool = False):
        self.m = n_kernels
        self.prune = prune
        self.projection = _LevelProjection(n_kernels) if level else None
        self.duals = np.zeros(0)  # |row dual| of each constraint at the last solve
        self.lp = _silent_highs()
        inf = highspy.kHighsInf
        self.lp.addVars(n_kernels, np.zeros(n_kernels), np.ones(n_kernels))
        self.lp.addVar(-inf, inf)
        self.lp.changeColsCost(1, np.array([n_kernels], dtype=np.int32), np.array([-1.0]))
        self.lp.addRow(1.0, 1.0, n_kernels, np.arange(n_kernels, dtype=np.int32),
                       np.ones(n_kernels))
        self._columns = np.arange(n_kernels + 1, dtype=np.int32)
        self.ages = np.zeros(0, dtype=np.int64)  # per cut (row r + 1): solves inactive
        self.n_pruned = 0
        self.scale = None

    @property
    def n_constraints(self) -> int:
        return self.ages.size

    def add(self, S: np.ndarray) -> None:
        """Add the constraint ``theta <= S' beta``."""
        S = np.asarray(S, dtype=np.float64)
        if self.scale is None:
            largest = float(np.max(np.abs(S)))
            self.scale = largest if np.isfinite(largest) and largest > 0 else 1.0
        S = S / self.scale
        values = np.concatenate([-S, [1.0]])
        self.lp.addRow(-highspy.kHighsInf, 0.0, self.m + 1, self._columns, values)
        self.ages = np.append(self.ages, 0)
        if self.projection is not None:
            self.projection.add(S)

    def solve(self):
        """(beta, theta) of the current restriction; inactive constraints age and are pruned."""
        self.lp.run()
        status = self.lp.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"HiGHS failed on the SILP master LP: "
                               f"{self.lp.modelStatusToString(status)}")
        solution = self.lp.getSolution()
        x = np.asarray(solution.col_value)
        beta = np.clip(x[: self.m], 0.0, None)
        beta /= beta.sum()
        theta = float(x[self.m]) * self.scale
        duals = np.abs(np.asarray(solution.row_dual)[1:])
        self.duals = duals
        self.ages = np.where(duals > _ACTIVE_DUAL, 0, self.ages + 1)
        stale = np.flatnonzero(self.ages >= PRUNE_AGE)
        if self.prune and 0 < stale.size < self.ages.size:
            self.lp.deleteRows(stale.size, (stale + 1).astype(np.int32))
            if self.projection is not None:
                self.projection.delete(stale)
            self.ages = self.ages[self.ages < PRUNE_AGE]
            self.n_pruned += stale.size
        return beta, theta

    def next_weights(self, S: np.ndarray, beta: np.ndarray, best: float):
        """Add the cut ``S`` of the weights ``beta``, solve, and return the next weights and
        ``theta``: the LP's point, or with the level method (``level=True``, once ``best``, the
        smallest ``T`` known exactly, is finite) the :meth:`level_point` from ``beta``."""
        self.add(S)
        point, theta = self.solve()
        if self.projection is not None and np.isfinite(best):
            projected = self.level_point(beta, -theta, best)
            point = point if projected is None else projected
        return point, theta

    def level_point(self, center: np.ndarray, lower: float, upper: float) -> np.ndarray | None:
        """The level method's next weights: the projection of ``center`` onto the level set
        ``{beta in simplex: -S^r' beta <= level}`` of the cutting-plane model of ``T``, with
        ``level = lower + LEVEL (upper - lower)`` (Lemarechal, Nemirovskii and Nesterov, Math.
        Programming 69, 1995; for MKL: Xu, Jin, King and Lyu, NIPS 2008). ``lower`` is
        ``-theta`` of the last :meth:`solve`, ``upper`` the best ``T`` seen. Kelley's LP point
        jumps between vertices of the simplex; the projection moves only as far as the model
        asks, so far fewer cuts are needed with many kernels. None if HiGHS fails (the
        caller keeps the LP's point)."""
        level = lower + LEVEL * max(upper - lower, 0.0)
        return self.projection.point(center, level / self.scale)


class _LevelProjection:
    """``min ||beta - c||^2`` over the simplex with the cuts ``S^r' beta >= -level``: a
    HiGHS QP holding the same cuts as the master LP. Column ``m`` is the level, fixed by its
    bounds, so that a new level changes one bound and not every row."""

    def __init__(self, n_kernels: int):
        m = self.m = n_kernels
        self.qp = _silent_highs()
        # HiGHS's active-set QP can cycle (a8a, 1,500 points, 150 kernels, C = 100: one
        # projection ran for minutes where the others took 20-600 iterations); past the
        # limit the caller keeps the LP's point
        self.qp.setOptionValue("qp_iteration_limit", QP_ITERATIONS + QP_ITERATIONS_PER_KERNEL * m)
        self.qp.addVars(m + 1, np.zeros(m + 1), np.append(np.ones(m), 0.0))
        self.qp.addRow(1.0, 1.0, m, np.arange(m, dtype=np.int32), np.ones(m))
        starts = np.append(np.arange(m + 1), m).astype(np.int32)  # no entry for the level
        self.qp.passHessian(m + 1, m, highspy.HessianFormat.kTriangular, starts,
                            np.arange(m, dtype=np.int32), np.full(m, 2.0))
        self._columns = np.arange(m + 1, dtype=np.int32)

    def add(self, S: np.ndarray) -> None:
        values = np.append(np.asarray(S, dtype=np.float64), 1.0)
        self.qp.addRow(0.0, highspy.kHighsInf, self.m + 1, self._columns, values)

    def delete(self, cuts: np.ndarray) -> None:
        self.qp.deleteRows(cuts.size, (cuts + 1).astype(np.int32))

    def point(self, center: np.ndarray, level: float) -> np.ndarray | None:
        self.qp.changeColsCost(self.m, self._columns[:-1], -2.0 * center)
        self.qp.changeColBounds(self.m, level, level)
        self.qp.run()
        if self.qp.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        beta = np.clip(np.asarray(self.qp.getSolution().col_value)[: self.m], 0.0, None)
        total = beta.sum()
        return beta / total if total > 0 else None


class Progress:
    """History, certificate and the stopping rule shared by both variants.

    A run stops when the inner problem is solved to ``inner_tol`` and both the paper's
    ``eps_MKL`` and the certified relative duality gap are at most ``tol``. The paper's rule
    alone is not enough: the
    gap adds the inner SVM's own primal-dual gap, which at a KKT tolerance of 1e-3 can exceed
    ``tol`` times the objective (Sonar, C = 100: eps_MKL 9.5e-4, gap 1.6e-2). When eps_MKL
    meets ``tol`` and the gap does not, ``inner_tol`` (read by the variants at each solve)
    is divided by 10, down to ``INNER_TOL_FLOOR``.
    """

    def __init__(self, task, tol, callback, inner_tol=1e-3):
        self.task, self.tol, self.callback = task, tol, callback
        self.inner_tol = float(inner_tol)
        self.start = time.perf_counter()
        self.certificate = Certificate()
        self.history = []
        self.theta = np.inf
        self.best = np.inf  # the smallest T(beta) at a solved inner problem
        self.n_smo_steps = 0  # of every SVM solve or chunk

    def values(self, alpha, g):
        """``S_k(alpha)`` from the quadratic terms ``g_k = v' K_k v``."""
        return 0.5 * g - self.task.linear_value(alpha)

    def record(self, operator, beta, alpha, g, n_solves, inner_done, K=None, primal=None):
        """Check the stopping rule at (beta, alpha); returns (eps_MKL, stop). ``primal``: the
        task's (primal value, bias) at (beta, alpha) when known without K (linadd)."""
        S = self.values(alpha, g)
        value = float(beta @ S)
        # |1 - value / theta|, safe for theta = 0
        eps = abs(self.theta - value) / max(abs(self.theta), 1e-300) if np.isfinite(
            self.theta) else np.inf
        lower = self.task.linear_value(alpha) - 0.5 * float(g.max())
        if np.isfinite(self.theta):
            lower = max(lower, -self.theta)
        if inner_done or primal is not None:  # a primal bounds T at any alpha
            if primal is None:
                primal = self.task.primal(operator.kernel(beta) if K is None else K, alpha)
            primal, bias = primal
            point = {"d": beta.copy(), "alpha": alpha.copy(), "bias": bias, "T": -value}
            self.certificate.update(point, primal, lower)
        else:
            self.certificate.update(None, np.inf, lower)
        if inner_done:
            self.best = min(self.best, -value)
        paper_rule = inner_done and eps <= self.tol
        stop = paper_rule and self.certificate.relative_gap <= self.tol
        if paper_rule and not stop:  # the inner SVM's precision limits the gap
            self.inner_tol = max(self.inner_tol / 10.0, INNER_TOL_FLOOR)
        record = HistoryRecord({
            "iteration": len(self.history),
            "objective": -value,
            "eps_mkl": eps,
            "relative_duality_gap": self.certificate.relative_gap,
            "theta": self.theta,
            "inner_tol": self.inner_tol,
            "n_svm_solves": n_solves,
            "time": time.perf_counter() - self.start,
        })
        self.history.append(record)
        if self.callback is not None:
            self.callback(record)
        return S, stop

    def certify(self, operator, beta, alpha, S):
        """Put (beta, alpha) into the certificate whatever the SMO's state: the task's primal
        bounds W(beta) from above at any alpha (used when no chunk reached ``inner_tol``)."""
        primal, bias = self.task.primal(operator.kernel(beta), alpha)
        point = {"d": beta.copy(), "alpha": alpha.copy(), "bias": bias, "T": -float(beta @ S)}
        self.certificate.update(point, primal, -np.inf)

    def result(self, n_iter, n_solves, converged):
        point = self.certificate.point
        return MKLResult(
            kernel_weights=point["d"],
            alpha=point["alpha"],
            intercept=point["bias"],
            objective=point["T"],
            duality_gap=self.certificate.gap,
            relative_duality_gap=self.certificate.relative_gap,
            n_iter=n_iter,
            n_svm_solves=n_solves,
            n_smo_steps=self.n_smo_steps,
            converged=converged,
            history=self.history,
            stop_reason="converged" if converged else "max_iter",
        )
