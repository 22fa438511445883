"""SPG-GMKL's evaluation of ``T(d)``: what the combination offers, the evaluated point, the SVM.

:func:`combination_features` reads once, when a run starts, which optional methods the kernel
combination and the regulariser provide; :class:`Point` is one evaluated point (weights, SVM
solution, gradient, bounds); :class:`Evaluator` solves the inner SVM at given weights (warm
started), differentiates ``W`` and bounds the optimum (ALGORITHMS.md section 1; Jain,
Vishwanathan and Varma, KDD 2012, Algorithm 1, lines 3-4).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mklearn.extending import ORTHANT, SIMPLEX, implements
from mklearn.kernels.row_sources import row_source
from mklearn.solvers.tasks import ClassificationTask


@dataclass(frozen=True)
class CombinationFeatures:
    """The optional methods of a kernel combination and its regulariser that SPG-GMKL uses.

    Attributes
    ----------
    n_kernels : int
        Number of base kernels m.
    linear : bool
        ``K(d)`` is linear in d (a sum of kernels): the duality gap applies.
    kernel_rows : callable or None
        ``kernel_rows(d, expected_rows)``: ``K(d)`` combined only on the rows a solve reads.
    cheap_terms : callable or None
        ``cheap_terms(support_size)``: whether every kernel's quadratic term is cheap there.
    gradient_and_products : callable or None
        ``gradient_and_products(v, kernels=None)``: ``(g, P)`` with ``P[k] = K_k v``, or None.
    derivative_times : bool
        The combination has ``derivative_times(d, v, rows)`` (products of kernels).
    spare_bytes : callable or None
        ``spare_bytes()``: the part of the row budget that no kernel row holds now.
    feasible_set : str or None
        The regulariser's ``feasible_set`` (``SIMPLEX``, ``ORTHANT``, ...).
    regularizer_hessian : bool
        The regulariser has ``hessian(d)``.
    """

    n_kernels: int
    linear: bool
    kernel_rows: Callable | None
    cheap_terms: Callable | None
    gradient_and_products: Callable | None
    derivative_times: bool
    spare_bytes: Callable | None
    feasible_set: Any
    regularizer_hessian: bool

    @property
    def simplex_newton(self) -> bool:
        """Second-order steps on the simplex: l1-MKL (``r = 0`` on the simplex) over a sum."""
        return self.feasible_set == SIMPLEX and self.linear

    @property
    def orthant_newton(self) -> bool:
        """Second-order steps on ``d >= 0``: a combination with ``derivative_times`` (products
        of RBF kernels) and a regulariser with a Hessian, projected onto the orthant."""
        return self.derivative_times and self.regularizer_hessian and self.feasible_set == ORTHANT


def combination_features(operator, regularizer) -> CombinationFeatures:
    """Read what ``operator`` (a kernel operator or parameterisation) and ``regularizer``
    declare, once: their capabilities and the optional methods they implement."""
    stack = operator.capabilities.stack  # rows of K(d) on demand, support blocks
    return CombinationFeatures(
        n_kernels=operator.n_kernels,
        linear=bool(operator.linear),
        kernel_rows=operator.kernel_rows if stack else None,
        cheap_terms=operator.cheap_terms if stack else None,
        gradient_and_products=operator.gradient_and_products,
        derivative_times=implements(operator, "derivative_times"),
        spare_bytes=(operator.spare_bytes if implements(operator, "spare_bytes")
                     else None),
        feasible_set=regularizer.feasible_set,
        regularizer_hessian=implements(regularizer, "hessian"),
    )


@dataclass(eq=False)
class Point:
    """One evaluated point of the run: the weights, the SVM solved there and what follows.

    Attributes
    ----------
    d : ndarray of shape (m,)
        Kernel weights.
    K : ndarray of shape (n, n) or row operator
        ``K(d)`` as the solve read it.
    qp : QPResult
        The inner SVM's solution (``alpha``, ``grad``, ``objective``, ``rho``, ...).
    T : float
        ``r(d) + W(d)`` with W the SVM's dual value (a lower bound on T when ``rejected``).
    tol : float
        The SMO tolerance of that solve.
    rejected : bool
        The solve stopped once it proved ``T`` above a line-search bound.
    plane : bool
        Its cutting plane has been added.
    products : tuple (ndarray, ndarray of shape (k, n)) or None
        ``(kernels, K_k v)`` kept by the gradient (``v`` the task's coefficients of alpha).
    g : ndarray of shape (m,) or None
        Quadratic terms ``g_k = v' K_k v``; NaN off the live kernels.
    complete : bool
        ``g`` covers every kernel.
    grad : ndarray of shape (m,) or None
        Gradient of T, ``r'(d) - g / 2``; NaN off the live kernels.
    primal : tuple (float, float) or None
        The SVM primal at alpha and its best bias.
    bias : float or None
        That bias.
    """

    d: np.ndarray
    K: Any
    qp: Any
    T: float
    tol: float
    rejected: bool
    plane: bool = False
    products: tuple | None = None
    g: np.ndarray | None = None
    complete: bool = False
    grad: np.ndarray | None = None
    primal: tuple | None = None
    bias: float | None = None


class Evaluator:
    """Inner SVM solves at given kernel weights, with warm starts and a running count.

    Parameters
    ----------
    operator : SumOfKernels, RowKernels, ProductOfRBF, ...
        The kernel combination ``K(d)``.
    features : CombinationFeatures
        What it and the regulariser offer (:func:`combination_features`).
    regularizer : Regularizer
        Value, gradient and conjugate of r.
    y, cost : ndarray of shape (n,)
        Labels in {-1, +1} and per-sample costs (C-SVC when ``task`` is None).
    task : ClassificationTask, RegressionTask or OneClassTask, optional
        The inner problem.
    """

    def __init__(self, operator, features, regularizer, y, cost, task=None):
        self.operator = operator
        self.features = features
        self.regularizer = regularizer
        self.task = ClassificationTask(y, cost) if task is None else task
        self.y = self.task.signs
        self.cost = self.task.upper
        self.rows = self.task.index
        self.n_solves = 0
        self.n_smo_steps = 0  # SMO steps of every solve
        self.anchor = None  # (v, g, P) of the last full pass that kept P[k] = K_k v
        self.kept = KeptProducts(operator, features.gradient_and_products)
        self.gap_stop = None  # SVM duality gap at which every solve may stop (InnerPrecision)
        self.planes = None  # a CuttingPlaneBound, for l1 on a sum of kernels (DualBound)

    def solve(self, d, alpha0, tol, products=None, reject_above=None) -> Point:
        """The SVM at ``d`` from ``alpha0``. ``products``, the ``(kernels, K_k v0)`` kept at
        the point of ``alpha0`` (``v0`` its coefficients), give ``K(d) v0`` when they cover
        every kernel in use: the starting gradient then reads no row of ``K(d)``, and a solve
        on rows combined on demand reads only those its steps need. ``reject_above``: stop the
        SVM, unsolved, once it proves ``T(d)`` above this value (its dual value, a lower bound
        on ``W(d)``, only rises); the point then has ``rejected`` True and ``T`` is only a
        lower bound."""
        warm = self._warm_product(d, products) if alpha0 is not None else None
        rows = self.features.kernel_rows  # only the rows a solve reads
        expected = None if alpha0 is None else int(np.count_nonzero(alpha0))
        K = row_source(self.operator.kernel(d) if rows is None else rows(d, expected))
        r = self.regularizer.value(d)
        stop_below = None if reject_above is None else r - reject_above
        qp = self.task.solve(K, alpha0, tol, self.gap_stop, warm, stop_below)
        self.n_solves += 1
        self.n_smo_steps += int(qp.n_iter)
        point = Point(d=d, K=K, qp=qp, T=r - qp.objective, tol=tol, rejected=qp.stopped_below)
        if self.planes is not None:
            v = self.task.coefficients(qp.alpha)
            if self._cheap_plane(d, v):
                self.add_plane(point, self.operator.kernel_gradient(d, v))
        return point

    def _cheap_plane(self, d, v):
        """Whether every kernel's quadratic term at ``v`` costs less than the solve's own
        reading of ``K(d)``'s support rows (support blocks: ``m |S|^2`` values against
        ``|S| n`` for each kernel in use)."""
        cheap = self.features.cheap_terms
        support = int(np.count_nonzero(v))
        return (cheap is not None and cheap(support) and
                self.features.n_kernels * support <= v.size * max(np.count_nonzero(d), 1))

    def add_plane(self, point, terms):
        """The cutting plane of ``point``'s SVM solution, with quadratic terms ``terms``."""
        self.planes.add(self.task.linear_value(point.qp.alpha), terms)
        point.plane = True

    def _warm_product(self, d, products):
        """``sum_k d_k K_k v0`` from the kept products, or None if some kernel in use has
        none (or the combination is not a sum)."""
        if not self.features.linear:
            return None
        used = np.flatnonzero(d)
        kept = kept_products(products, d.size, used)
        return None if kept is None else d[used] @ kept

    def gradient(self, point, live=None):
        """Gradient at ``point``: exact on ``live`` kernels (all if None), NaN elsewhere."""
        v = self.task.coefficients(point.qp.alpha)
        d = point.d
        point.products = None
        if live is None or live.all():
            g = self._full_gradient(point, d, v)
        else:
            g = np.full(d.shape, np.nan)
            g[live] = self.partial_gradient(point, np.flatnonzero(live))
        point.g = g
        point.complete = not np.isnan(g).any()
        if point.complete and self.planes is not None and not point.plane:
            self.add_plane(point, g)
        point.grad = self.regularizer.gradient(d) - 0.5 * g
        return point.grad

    def _full_gradient(self, point, d, v):
        """Every ``g_k``; also the anchor of :meth:`predicted_terms` when the combination
        gives the products ``K_k v`` in the same pass."""
        kernels = np.arange(d.size)
        result = self.kept.terms(v, kernels)
        if result is None:
            self.anchor = None
            return self.operator.kernel_gradient(d, v)
        g, P = result
        self.anchor = (v, g, P)
        point.products = (kernels, P)
        return g

    def partial_gradient(self, point, kernels):
        """``g_k`` of ``kernels`` at ``point``; their products ``K_k v`` join those kept in
        ``point.products`` (the rows of a Newton model)."""
        v = self.task.coefficients(point.qp.alpha)
        result = self.kept.terms(v, kernels)
        if result is None:
            return self.operator.kernel_gradient(point.d, v, kernels)
        g, P = result
        if point.products is not None:
            known, kept = point.products
            kernels, P = np.concatenate([known, kernels]), np.vstack([kept, P])
        point.products = (kernels, P)
        return g

    def products_at(self, point):
        """``K_k v`` of every kernel at ``point`` (shape (m, n)) if the last full pass kept
        them there, else None."""
        if self.anchor is None:
            return None
        v, _, products = self.anchor
        same = np.array_equal(v, self.task.coefficients(point.qp.alpha))
        return products if same else None

    def predicted_terms(self, point):
        """``g_k`` of every kernel at ``point`` to first order from the anchor, or None."""
        if self.anchor is None:
            return None
        v0, g0, products = self.anchor
        return g0 + 2.0 * (products @ (self.task.coefficients(point.qp.alpha) - v0))

    def bounds(self, point):
        """(upper bound on T(d), lower bound on the optimum) at ``point``.

        The lower bound needs every ``g_k``; with a partial gradient it is the bound of the
        problem restricted to the live kernels (not a bound on the full optimum). NaN where
        the combination has no dual (products).
        """
        if not self.features.linear:
            return np.nan, np.nan
        alpha = point.qp.alpha
        if point.primal is None:  # from the solve's gradient: no product with K(d)
            point.primal = self.task.primal(point.K, alpha, point.qp.grad)
        primal, point.bias = point.primal
        upper = self.regularizer.value(point.d) + primal
        g = point.g
        lower = self.task.linear_value(alpha) - self.regularizer.conjugate(0.5 * g[~np.isnan(g)])
        return upper, lower


class KeptProducts:
    """The products ``K_k v`` of each kernel, kept from one gradient to the next.

    At a new ``v`` a kernel's product is the one computed at ``v_k`` (its base) plus
    ``K_k (v - v_k)``, which reads only the rows where ``v`` differs from ``v_k``, when they
    are fewer than the support of ``v`` that computing it anew reads (which then becomes the
    base). Along SPG-GMKL runs the coefficients that change between points are about the free
    support vectors: 60 of 433 support vectors on a1a at C = 1, 140 of 371 at C = 100. The
    quadratic terms ``g_k = v' K_k v`` then cost ``O(n)`` each from the products. The same
    ``v`` gives the same terms to the last bit while the base stays (the spectral step sees no
    curvature where the gradient does not change).

    Parameters
    ----------
    operator : KernelOperator
        Its ``products(v, kernels)`` moves the kept products.
    gradient_and_products : callable or None
        The operator's ``gradient_and_products``: products computed anew (None when it has
        none, or when it returns None: nothing is kept then).
    """

    def __init__(self, operator, gradient_and_products):
        self.operator = operator
        self.fresh = gradient_and_products
        self.P = None  # (m, n): K_k v_k where at[k] >= 0
        self.at = np.full(operator.n_kernels, -1)  # key of v_k in self.points, -1: none
        self.points = {}
        self._keys = 0

    def terms(self, v, kernels):
        """``(g, P)`` of ``kernels`` at ``v``: ``g[t] = v' K_k v``, ``P[t] = K_k v`` (a new
        array) for ``k = kernels[t]``; None when the operator gives no products at ``v``."""
        if self.fresh is None:
            return None
        kernels = np.asarray(kernels, dtype=np.int64)
        support = np.count_nonzero(v)
        moves = []
        for old in np.unique(self.at[kernels]):
            group = np.flatnonzero(self.at[kernels] == old)
            change = v - self.points[old] if old >= 0 else None
            if change is not None and np.count_nonzero(change) < support:
                moves.append((group, change))
            elif not self._compute(v, kernels[group]):
                self._forget()
                return None
        P = self.P[kernels]
        for group, change in moves:
            if change.any():
                P[group] += self.operator.products(change, kernels[group])
        self._forget()
        return P @ v, P

    def _key(self, v):
        """The key of ``v`` among the kept points (a new one if it is not there)."""
        for key, point in self.points.items():
            if np.array_equal(point, v):
                return key
        self._keys += 1
        self.points[self._keys] = v.copy()
        return self._keys

    def _compute(self, v, group):
        """Products of ``group`` at ``v`` anew; False when the operator gives none there."""
        result = self.fresh(v, group)
        if result is None:
            self.at[:] = -1
            return False
        if self.P is None:
            self.P = np.zeros((self.at.size, v.size))
        self.P[group] = result[1]
        self.at[group] = self._key(v)
        return True

    def _forget(self):
        """Drop the points no kernel's product refers to."""
        used = set(np.unique(self.at).tolist())
        for key in [key for key in self.points if key not in used]:
            del self.points[key]


def kept_products(products, n_kernels, kernels):
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
