"""A lower bound on the MKL optimum from convex combinations of SVM solutions.

The MKL dual bound at a feasible dual point alpha is ``L(alpha) = p(alpha) - r*(q(alpha) / 2)``
with the linear part ``p`` of the task's dual and the quadratic terms ``q_k = v' K_k v``
(``v`` the task's coefficients of alpha; ALGORITHMS.md section 1). ``L`` is concave and the
dual feasible set is convex, so any convex combination of SVM solutions is again a dual point,
often a much better one: where the SVM's solution is not unique (duplicate points on the
features of the kernels in use), ``W(d)`` has a kink at the optimum, the optimal alpha mixes
the solutions on either side of it, and no single solution's bound closes the gap (the
aggregate subgradient of bundle methods: Kiwiel, Math. Prog. 27, 1983; for MKL, the level
method of Xu et al., NIPS 2008, keeps such a bundle in an LP).

:class:`DualAggregate` keeps one aggregate point: at each new solution it maximises ``L`` on the
segment from the aggregate to the new point, which needs one quadratic pass at the difference
of the two points (``q_k`` is quadratic along the segment), and keeps the maximiser.
"""

from __future__ import annotations

import numpy as np

GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0
SEARCH_STEPS = 60  # golden-section steps on [0, 1]: the segment's parameter to 1e-12


class DualAggregate:
    """The best dual point on segments between successive SVM solutions, with its bound.

    Parameters
    ----------
    task : ClassificationTask, RegressionTask or OneClassTask
        ``coefficients(alpha)`` and ``linear_value(alpha)`` of the inner problem
        (:mod:`mklearn.solvers.tasks`).
    operator : linear combination of kernels
        ``kernel_gradient(d, v)``: the quadratic terms ``v' K_k v`` of every kernel, shape (m,).
    regularizer : Regularizer
        ``conjugate(z)`` of the weights' regulariser.

    Attributes
    ----------
    lower : float
        The best lower bound on the MKL optimum found so far (-inf before the first point).
    """

    def __init__(self, task, operator, regularizer):
        self.task, self.operator, self.regularizer = task, operator, regularizer
        self.alpha = None
        self.terms = None  # q_k at the aggregate, shape (m,)
        self.linear = None
        self.lower = -np.inf

    def add(self, d, alpha, terms, products=None):
        """Take the SVM solution ``alpha`` whose quadratic terms ``terms`` (shape (m,), every
        kernel) are known; return the new best lower bound.

        ``products`` (shape (m, n)), the ``K_k v`` of the new point, gives the segment's
        terms in one (m, n) product; without it they cost one ``kernel_gradient`` at the
        difference of the two points.
        """
        alpha = np.asarray(alpha, dtype=np.float64)
        terms = np.asarray(terms, dtype=np.float64)
        linear = self.task.linear_value(alpha)
        if self.alpha is None:
            self._keep(alpha, terms, linear)
            return self.lower
        old = self.task.coefficients(self.alpha)
        diff = self.task.coefficients(alpha) - old
        if not diff.any():
            return self.lower
        base, base_linear = self.terms, self.linear
        if products is None:
            curvature = self.operator.kernel_gradient(d, diff)  # q_k of the difference
        else:  # from the cross terms v_old' K_k v_new
            curvature = terms + base - 2.0 * (products @ old)
        # q_k(t) at (1 - t) old + t new: q_old + t (q_new - q_old - h) + t^2 h
        slope = terms - base - curvature

        def bound(t):
            return (base_linear + t * (linear - base_linear)
                    - self.regularizer.conjugate(0.5 * (base + t * (slope + t * curvature))))

        t = _maximise_concave(bound)
        value = bound(t)
        if value > self.lower:
            self.alpha = self.alpha + t * (alpha - self.alpha)
            self.terms = base + t * (slope + t * curvature)
            self.linear = base_linear + t * (linear - base_linear)
            self.lower = float(value)
        return self.lower

    def _keep(self, alpha, terms, linear):
        self.alpha, self.terms, self.linear = alpha.copy(), terms.copy(), linear
        self.lower = float(linear - self.regularizer.conjugate(0.5 * terms))


def _maximise_concave(f):
    """The maximiser of a concave ``f`` on [0, 1] by golden-section search (ends included)."""
    low, high = 0.0, 1.0
    a, b = high - GOLDEN, GOLDEN
    fa, fb = f(a), f(b)
    for _ in range(SEARCH_STEPS):
        if fa < fb:
            low, a, fa = a, b, fb
            b = low + GOLDEN * (high - low)
            fb = f(b)
        else:
            high, b, fb = b, a, fa
            a = high - GOLDEN * (high - low)
            fa = f(a)
    best = 0.5 * (low + high)
    candidates = (0.0, best, 1.0)
    values = [f(t) for t in candidates]
    return candidates[int(np.argmax(values))]
