"""SVMs with an intercept on low-rank kernels, solved in feature space.

On ``K(d) = sum_k d_k Phi_k Phi_k'`` the SVM is a linear SVM on the columns
``sqrt(d_k) Phi_k`` (ALGORITHMS.md section 1; ARCHITECTURE.md, "Low rank"). Its dual is the
one of :mod:`mklearn.solvers.tasks` (LIBSVM's generic form with ``signs' a = 0``); the
equality constraint belongs to the intercept. :class:`FeatureSVM` removes it by a search
over the bias: at a fixed b the dual has box constraints only and is solved by dual
coordinate descent (:func:`mklearn.linear.dcd.coordinate_descent`), and the optimal value
``V(b)`` of that problem is convex in b with derivative ``-signs' a(b)`` (Danskin's
theorem), so the intercept is the root of the non-increasing ``h(b) = signs' a(b)``. The
search brackets the root and narrows it by false position (the Illinois variant); the dual
point it returns is the convex combination of the bracket's two solutions with
``signs' a = 0`` exactly, so that every bound built on it is a valid bound.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg

from mklearn.linear.dcd import KIND_FIXED, block_terms
from mklearn.linear.rows import feature_rows
from mklearn.svm.mkl_step import kernel_weights

__all__ = ["FeatureProblem", "FeatureSVM", "seed_of"]

_BIAS_STEP = 1.0  # first trial change of the bias: outputs are of the margin's order, 1
_BIAS_SEARCHES = 60  # trials of the bias at the most (each a warm-started solve)
_BALANCE_TOL = 1e-12  # |signs' a| below this times max(upper) ends any search
_MAX_EPOCHS = 1000  # epochs of coordinate descent per solve at the most
POLISH_MAX = 3000  # free variables above which the exact solve on the pattern is not tried
POLISH_ROUNDS = 6  # corrections of the pattern at the most
POLISH_START = 0.1  # the coarse solve's tolerance before a first exact solve on its pattern
BIAS_COARSE = 1.0  # the smooth conjugates' tolerance of a first search of the bias
_BOUND_TOL = 1e-10  # share of the bound within which a variable counts as at the bound


def seed_of(random_state) -> int:
    """The coordinate order's seed from scikit-learn's ``random_state`` (None: 0)."""
    if random_state is None:
        return 0
    if isinstance(random_state, (int, np.integer)):
        return int(random_state) % (2 ** 31)
    return int(np.random.RandomState(random_state).randint(2 ** 31))


@dataclass
class FeatureProblem:
    """One SVM dual on low-rank kernels (LIBSVM's generic form, :mod:`mklearn.solvers.tasks`).

    Attributes
    ----------
    rows : FeatureRows
        ``Phi``, the blocks of every kernel side by side (:mod:`mklearn.linear.rows`: in
        memory, or in partitions elsewhere).
    signs, linear, upper : ndarray of shape (n_vars,)
        The task's signs, linear term at bias 0 and bounds.
    index : int64 ndarray of shape (n_vars,)
        Row of each variable.
    """

    rows: Any
    signs: np.ndarray
    linear: np.ndarray
    upper: np.ndarray
    index: np.ndarray

    @classmethod
    def of(cls, operator, task) -> FeatureProblem:
        """The dual of ``task`` (:mod:`mklearn.solvers.tasks`) on the rows of a low-rank
        operator (:func:`mklearn.linear.rows.feature_rows`)."""
        return cls(feature_rows(operator), task.signs.astype(np.float64),
                   task.linear.astype(np.float64), task.upper.astype(np.float64),
                   task.index.astype(np.int64))

    @property
    def starts(self) -> np.ndarray:
        """Kernel k's columns are ``starts[k]:starts[k + 1]``."""
        return self.rows.starts

    @property
    def n_kernels(self) -> int:
        return self.starts.size - 1

    def coefficients(self, alpha):
        """``v`` by row of ``Phi``: ``v_i = sum_{t: index_t = i} signs_t a_t``."""
        return np.bincount(self.index, weights=alpha * self.signs,
                           minlength=self.rows.n_samples)

    def blocks(self, alpha):
        """``u = Phi' v``, shape (R,)."""
        return self.rows.products(self.coefficients(alpha))


def _kkt_solution(system, rhs, may_be_regular):
    """The KKT system's solution: by a symmetric indefinite factorisation (Bunch-Kaufman)
    where it may be regular (no more free variables than feature columns) and is well
    conditioned, else the least-squares solution of minimum norm (duplicate points make it
    singular)."""
    if may_be_regular:
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            try:
                return scipy.linalg.solve(system, rhs, assume_a="sym", check_finite=False)
            except (scipy.linalg.LinAlgWarning, np.linalg.LinAlgError):
                pass
    return np.linalg.lstsq(system, rhs, rcond=None)[0]


def _scaled_to_balance(alpha, signs):
    """``alpha`` with the variables of the sign whose sum is larger scaled down so that
    ``signs' alpha = 0``."""
    positive = float(alpha[signs > 0].sum())
    negative = float(alpha[signs < 0].sum())
    if positive == negative:
        return alpha
    alpha = alpha.copy()
    heavy = signs > 0 if positive > negative else signs < 0
    light, heavy_sum = min(positive, negative), max(positive, negative)
    alpha[heavy] *= light / heavy_sum
    return alpha


@dataclass
class _Merged:
    """Free variables ``free`` merged by equal row, sign and linear term: ``first[g]`` the
    first of group g, ``groups`` each one's group, ``bounds[g]`` the sum of its bounds."""

    free: np.ndarray
    first: np.ndarray
    groups: np.ndarray
    bounds: np.ndarray


@dataclass
class _Trial:
    """A solve at one bias: its dual point, blocks and ``h = signs' a``."""

    bias: float
    alpha: np.ndarray
    u: np.ndarray
    balance: float
    epochs: int
    steps: int


class FeatureSVM:
    """The SVM dual at kernel weights d (or a smooth MKL conjugate), with the intercept found
    by the bias search of the module docstring; warm started from the last solve.

    Parameters
    ----------
    problem : FeatureProblem
    seed : int
        Seed of the coordinate order.
    shrinking : bool
        LIBLINEAR's shrinking.
    """

    def __init__(self, problem: FeatureProblem, seed: int = 0, shrinking: bool = True):
        self.problem = problem
        self.seed = int(seed)
        self.shrinking = bool(shrinking)
        self.alpha = np.zeros(problem.signs.size)
        self.bias = 0.0
        self.n_epochs = 0
        self.n_steps = 0
        self.n_polished = 0  # solves ended by the exact solve on the support pattern
        self._representatives = None  # the first equal row of each row, once needed

    def solve(self, d, eps, kind=KIND_FIXED, lam=1.0, q=2.0, prior=None, kernels=None):
        """Solve at weights ``d`` (``KIND_FIXED``) or with a smooth conjugate (``kind``,
        ``lam``, ``q``, ``prior``: :mod:`mklearn.svm.mkl_step`), each fixed-bias solve to
        the projected-gradient spread ``eps``.

        Returns
        -------
        alpha : ndarray of shape (n_vars,)
            A dual point with ``signs' alpha = 0``.
        bias : float
            The intercept found.
        u : ndarray of shape (R,)
            ``Phi' v`` at alpha.
        weights : ndarray of shape (m,)
            The kernel weights of that point (``d`` for fixed weights).
        """
        p = self.problem
        m = p.n_kernels
        d = np.asarray(d, dtype=np.float64).copy()
        if kernels is None:
            kernels = np.flatnonzero(d > 0) if kind == KIND_FIXED else np.arange(m)
        kernels = np.asarray(kernels, dtype=np.int64)
        prior = np.ones(m) if prior is None else np.asarray(prior, dtype=np.float64)
        settings = (kernels, kind, float(lam), float(q), prior, float(eps))
        exact = kind == KIND_FIXED
        start = (self.bias, self.alpha)
        if exact and eps < POLISH_START:  # a coarse solve finds the pattern
            coarse = self._at(*start, d, settings[:-1] + (POLISH_START,))
            if self._polished(coarse.alpha, d, settings):
                return self.alpha, self.bias, p.blocks(self.alpha), d
            start = (coarse.bias, coarse.alpha)
        if not exact and eps < BIAS_COARSE:  # the bias found at a coarse tolerance first
            start = self._searched(*start, d, settings[:-1] + (BIAS_COARSE,))[:2]
        first = self._at(*start, d, settings)
        if exact and self._polished(first.alpha, d, settings):
            return self.alpha, self.bias, p.blocks(self.alpha), d
        self.bias, self.alpha, u = self._searched(first.bias, first.alpha, d, settings, first)
        if exact:
            if self._polished(self.alpha, d, settings):
                u = p.blocks(self.alpha)
            return self.alpha, self.bias, u, d
        d = np.empty(m)
        kernel_weights(block_terms(u, p.starts), kind, lam, q, prior, d)
        return self.alpha, self.bias, u, d

    def _searched(self, bias, alpha, d, settings, first=None):
        """``(bias, alpha, u)``: the bias search from a start (or from its first trial
        ``first``), to the balanced point of its bracket."""
        first = self._at(bias, alpha, d, settings) if first is None else first
        low, high = self._bracket(first, d, settings)
        if low is not high:
            low, high = self._narrow(low, high, d, settings)
        alpha, u, bias = self._balanced(low, high)
        return bias, alpha, u

    def _polished(self, alpha, d, settings) -> bool:
        """Whether the exact solve on the pattern of ``alpha`` succeeded (it becomes the
        warm start: ``self.alpha`` and ``self.bias``)."""
        found = self._polish(alpha, d, settings)
        if found is not None:
            self.alpha, self.bias = found
        return found is not None

    def _polish(self, alpha, d, settings):
        """The exact SVM optimum (with its bias) near the support pattern of ``alpha``, or
        None.

        With the variables at their bounds fixed, the KKT conditions of the free ones F and
        the equality constraint are the linear system
        ``[Q_FF s_F; s_F' 0] [a_F; b] = [-p_F - s_F (Z_F w_fixed); -s_fixed' a_fixed]``,
        ``Q_FF = diag(s_F) Z_F Z_F' diag(s_F)``, ``Z`` the columns ``sqrt(d_k) Phi_k``
        (least squares of minimum norm where duplicate points make it singular). The free
        variables of equal rows, sign and linear term enter it as one (duplicate points:
        only their sum matters), split back in proportion to their bounds. A few
        rounds of an active-set method (Scheinberg, JMLR 7, 2006) correct the pattern: free
        variables that leave the box go to the bound they cross, bound variables that
        violate their KKT condition are freed. A solution is taken only when it stays in
        the box and every variable meets its KKT condition to ``eps``; otherwise None, and
        coordinate descent goes on. A round costs ``O(|F|^2 R + |F|^3 + n R)``; none is
        tried above ``POLISH_MAX`` free variables (after merging).
        """
        kernels, eps = settings[0], settings[-1]
        upper = self.problem.upper
        if kernels.size == 0:
            return None
        at_upper = alpha >= (1 - _BOUND_TOL) * upper
        free = (alpha > _BOUND_TOL * upper) & ~at_upper
        for _ in range(POLISH_ROUNDS):
            merged = self._merged(np.flatnonzero(free))
            if merged is None or merged.first.size > POLISH_MAX:
                return None
            candidate, bias, left = self._pattern_solution(merged, free, at_upper, d,
                                                           kernels)
            if left.any():  # out of the box: to the bound crossed
                crossed = np.flatnonzero(free)[left]
                at_upper[crossed] = candidate[crossed] > 0.5 * upper[crossed]
                free[crossed] = False
                continue
            violators = self._kkt_violators(candidate, bias, d, kernels, eps, free)
            if violators is None:
                return None
            if not violators.size:
                self.n_polished += 1
                return candidate, bias
            free[violators] = True
            at_upper[violators] = False
        return None

    def _merged(self, F):
        """The free variables ``F`` grouped by equal row, sign and linear term, or None
        when there are none."""
        if F.size == 0:
            return None
        p = self.problem
        if self._representatives is None:
            self._representatives = p.rows.representative_rows()
        keys = np.stack([self._representatives[p.index[F]].astype(np.float64), p.signs[F],
                         p.linear[F]], axis=1)
        _, first, groups = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        groups = groups.ravel()
        return _Merged(F, F[first], groups,
                       np.bincount(groups, weights=p.upper[F], minlength=first.size))

    def _pattern_solution(self, merged, free, at_upper, d, kernels):
        """``(alpha, bias, out_of_box)``: the KKT system's solution on the pattern, with
        the mask (over the free variables) of those outside the box."""
        p = self.problem
        G, bounds = merged.first, merged.bounds
        columns = np.concatenate([np.arange(p.starts[k], p.starts[k + 1]) for k in kernels])
        scale = np.sqrt(np.repeat(d[kernels], np.diff(p.starts)[kernels]))
        fixed = np.where(at_upper & ~free, p.upper, 0.0)
        w_fixed = p.blocks(fixed)[columns] * scale
        Z_G = p.rows.take(p.index[G])[:, columns] * scale
        s_G = p.signs[G]
        system = np.zeros((G.size + 1, G.size + 1))
        system[:-1, :-1] = (s_G[:, None] * (Z_G @ Z_G.T)) * s_G[None, :]
        system[:-1, -1] = system[-1, :-1] = s_G
        rhs = np.append(-p.linear[G] - s_G * (Z_G @ w_fixed), -float(p.signs @ fixed))
        solution = _kkt_solution(system, rhs, G.size <= columns.size)
        a_G = solution[:-1]
        slack = _BOUND_TOL * bounds
        out = ((a_G < -slack) | (a_G > bounds + slack))[merged.groups]
        share = np.divide(np.clip(a_G, 0.0, bounds), bounds, out=np.zeros_like(bounds),
                          where=bounds > 0)
        candidate = fixed
        candidate[merged.free] = share[merged.groups] * p.upper[merged.free]
        return candidate, float(solution[-1]), out

    def _kkt_violators(self, alpha, bias, d, kernels, eps, free):
        """Variables at a bound whose gradient ``G_t = s_t (z_t . w + b) + p_t`` asks to
        leave it by more than ``eps``, worst first; None when a free one has
        ``|G_t| > eps`` (the system was not solved to that accuracy)."""
        p = self.problem
        f = p.rows.outputs(p.blocks(alpha), d, kernels)
        grad = p.signs * (f[p.index] + bias) + p.linear
        if np.any(np.abs(grad[free]) > eps):
            return None
        bad = np.where(free, 0.0, np.where(alpha <= 0.0, np.maximum(-grad, 0.0),
                                          np.maximum(grad, 0.0)))
        violators = np.flatnonzero(bad > eps)
        return violators[np.argsort(-bad[violators])][:max(16, int(free.sum()))]

    def _at(self, bias, alpha0, d, settings) -> _Trial:
        kernels, kind, lam, q, prior, eps = settings
        p = self.problem
        alpha = alpha0.copy()
        u = p.blocks(alpha)
        weights = d.copy()  # the smooth conjugates' weights follow alpha in place
        linear = p.linear + bias * p.signs
        epochs, steps = p.rows.descend(
            p.index, p.signs, linear, p.upper, alpha, u, weights, kernels, kind, lam, q,
            prior, eps, _MAX_EPOCHS, self.shrinking, self.seed)
        self.n_epochs += epochs
        self.n_steps += steps
        balance = float(p.signs @ alpha)
        return _Trial(bias, alpha, u, balance, epochs, steps)

    def _small(self, trial, eps) -> bool:
        """``|signs' a|`` within the solve's accuracy: ``eps`` (the projected-gradient
        tolerance) times the largest bound."""
        return abs(trial.balance) <= max(eps, _BALANCE_TOL) * float(self.problem.upper.max())

    def _bracket(self, first, d, settings):
        """Trials ``(low, high)`` with ``h(low) >= 0 >= h(high)`` (the same trial twice when
        its h is already negligible)."""
        eps = settings[-1]
        if self._small(first, eps):
            return first, first
        direction = 1.0 if first.balance > 0 else -1.0  # h decreases in b
        step, last = _BIAS_STEP, first
        for _ in range(_BIAS_SEARCHES):
            trial = self._at(last.bias + direction * step, last.alpha, d, settings)
            if self._small(trial, eps):
                return trial, trial
            if np.sign(trial.balance) != np.sign(first.balance):
                return (last, trial) if direction > 0 else (trial, last)
            last, step = trial, 2.0 * step
        raise RuntimeError("the bias search found no sign change of signs' alpha: the "
                           "features or bounds are not finite")

    def _narrow(self, low, high, d, settings):
        """False position (Illinois) between ``low`` (h >= 0) and ``high`` (h <= 0), until
        h is within the solve's accuracy or the bracket is narrower than ``eps`` (a change
        of b by delta moves every gradient by delta: finer is below the solve's noise)."""
        h_low, h_high = low.balance, high.balance
        eps = settings[-1]
        side = 0
        for _ in range(_BIAS_SEARCHES):
            if high.bias - low.bias <= max(eps, 1e-12 * max(1.0, abs(low.bias))):
                break
            b = (low.bias * (-h_high) + high.bias * h_low) / (h_low - h_high)
            b = min(max(b, low.bias), high.bias)
            near = low if abs(b - low.bias) < abs(high.bias - b) else high
            trial = self._at(b, near.alpha, d, settings)
            if self._small(trial, eps):
                return trial, trial
            if trial.balance > 0:
                low, h_low = trial, trial.balance
                h_high = h_high * 0.5 if side == 1 else h_high
                side = 1
            else:
                high, h_high = trial, trial.balance
                h_low = h_low * 0.5 if side == -1 else h_low
                side = -1
        return low, high

    def _balanced(self, low, high):
        """``(alpha, u, bias)``: the convex combination of the bracket's dual points with
        ``signs' a = 0``, and the bias interpolated alike; one trial is balanced by
        scaling down the variables of the heavier sign (feasible: the box holds)."""
        if low is high or low.balance == high.balance:
            alpha = _scaled_to_balance(low.alpha, self.problem.signs)
            return alpha, self.problem.blocks(alpha), low.bias
        theta = high.balance / (high.balance - low.balance)  # the share of low
        return (theta * low.alpha + (1.0 - theta) * high.alpha,
                theta * low.u + (1.0 - theta) * high.u,
                theta * low.bias + (1.0 - theta) * high.bias)
