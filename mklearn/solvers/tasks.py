"""The tasks of the inner single-kernel problems of MKL: hinge (C-SVC), epsilon-insensitive
(epsilon-SVR) and one-class, each a loss of :mod:`mklearn.formulation.losses` with its dual
solved on the SMO core (:mod:`mklearn.svm`).

Each is LIBSVM's generic dual (Chang and Lin, LIBSVM, section 4.1)
``min_a 1/2 a' Q a + p' a``, ``Q_ts = signs_t signs_s K[index_t, index_s]``, ``signs' a = const``,
``0 <= a <= upper``, and a task object carries what defines it:

- ``signs``, ``index`` (the kernel row of each variable: SVR has two per sample), ``linear``
  (= p) and ``upper`` (the bounds), and ``solve(K, alpha0, tol, gap=None)`` on the one SMO
  core (``gap``: also stop at that duality gap);
- ``coefficients(alpha)``: ``v = sum_t signs_t a_t e_index[t]`` (shape (n,)), so that
  ``1/2 a' Q a = 1/2 v' K v``; ``linear_value(alpha)`` = ``-p' a``;
- ``loss(f)``: the loss term of the primal at outputs ``f = K v`` with its best offset, and
  ``primal(K, alpha)``: ``1/2 v' K v`` plus that loss (value, offset).

For ``K(d) = sum_k d_k K_k``:

- the MKL objective is ``W(d) = max_a -p'a - 1/2 v' K(d) v`` and ``dW/dd_k = -1/2 v' K_k v``;
- SILP's per-kernel values (Sonnenburg et al., JMLR 2006, eq. 12) are
  ``S_k(a) = 1/2 v' K_k v + p' a``, so that ``sum_k d_k S_k(a)`` is the QP objective at K(d);
- the primal at ``w = sum_i v_i phi(x_i)`` with its best offset bounds ``W(d)`` from above
  whatever the accuracy of ``a`` (the duality gap of ALGORITHMS.md section 1).

SPG-GMKL, PGD, SILP and SMO-MKL take these objects; mirror descent and MWUMKL use the hinge's
best offset.
"""

from __future__ import annotations

import numpy as np

from mklearn._registry import Named, Registry
from mklearn.formulation.losses import (
    best_hinge_bias,
    best_insensitive_bias,
    best_one_class_offset,
    hard_margin_factor,
    kernel_outputs,
    svm_primal,
)
from mklearn.svm import one_class_dual, svc_dual, svr_dual

__all__ = ["DEFAULT_NU", "TASKS", "ClassificationTask", "OneClassTask", "RegressionTask", "Task",
           "make_task"]

#: The registered tasks (losses) by name: "classification", "regression", "one-class".
TASKS = Registry("task")


class Task(Named):
    """Base of the tasks: a loss with its dual on the SMO core (see the module docstring).

    A subclass defined with a name, ``class Mine(Task, name="mine")``, is registered in
    :data:`TASKS`, which :func:`make_task` reads; it builds itself from the labels and
    options in :meth:`from_options`.
    """

    registry = TASKS

    @classmethod
    def from_options(cls, y, C, *, epsilon, nu):
        """The task on targets ``y`` (float64) with cost ``C`` and the estimators' options."""
        raise NotImplementedError


class ClassificationTask(Task, name="classification"):
    """The hinge loss (C-SVC): LIBSVM's generic dual with signs ``y``, rows ``arange(n)``,
    linear term ``-1`` and bounds ``C``."""

    classification = True  # the tasks silp's linadd decomposition solves

    def __init__(self, y, cost):
        self.y = y
        self.cost = cost
        self.signs, self.upper = y, cost
        self.index = np.arange(y.size)
        self.linear = -np.ones(y.size)

    @classmethod
    def from_options(cls, y, C, *, epsilon, nu):
        return cls(y, np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape).copy())

    def initial_alpha(self):
        """Where the interleaved SILP starts: every dual variable at 0."""
        return np.zeros(self.signs.size)

    def solve(self, K, alpha0, tol, gap=None, warm_product=None, stop_below=None):
        return svc_dual(K, self.y, self.cost, alpha0=alpha0, tol=tol, gap=gap,
                        warm_product=warm_product, stop_below=stop_below)

    def coefficients(self, alpha):
        """``v = sum_t signs_t alpha_t e_index[t]`` (shape (n,)): ``1/2 alpha' Q alpha =
        1/2 v' K v``."""
        return alpha * self.y

    def linear_value(self, alpha):
        """``-p' alpha``, the linear part of the (maximised) dual."""
        return float(alpha.sum())

    def loss(self, f):
        """``sum_i C_i max(0, 1 - y_i (f_i + b))`` at the best b; returns (value, b)."""
        bias = best_hinge_bias(f, self.y, self.cost)
        return float(self.cost @ np.maximum(0.0, 1.0 - self.y * (f + bias))), bias

    def primal(self, K, alpha, grad=None):
        """(primal value at ``w = sum_i v_i phi(x_i)`` and the best bias, that bias);
        ``grad``: the QP's gradient at alpha (see :func:`kernel_outputs`)."""
        return svm_primal(K, alpha, self.y, self.cost, kernel_outputs(self, K, alpha, grad))

    def margin_factor(self, f):
        """:func:`~mklearn.formulation.losses.hard_margin_factor`: the primal with the
        quadratic term times this factor and no loss is an upper bound too."""
        return hard_margin_factor(f, self.y, self.cost)


class RegressionTask(Task, name="regression"):
    """epsilon-SVR: 2n variables ``[a+; a-]``, signs ``[+1, -1]``, rows ``[0..n-1, 0..n-1]``,
    linear term ``[epsilon - y, epsilon + y]``, bounds ``C`` (ALGORITHMS.md section 5).

    The prediction is ``K(d)(x, X) @ v + bias`` with ``v = a+ - a-``.
    """

    classification = False

    def __init__(self, y, cost, epsilon):
        self.y = np.asarray(y, dtype=np.float64)
        n = self.y.size
        self.cost = np.broadcast_to(np.asarray(cost, dtype=np.float64), (n,)).copy()
        self.epsilon = float(epsilon)
        self.signs = np.concatenate([np.ones(n), -np.ones(n)])
        self.index = np.concatenate([np.arange(n), np.arange(n)])
        self.upper = np.concatenate([self.cost, self.cost])
        self.linear = np.concatenate([self.epsilon - self.y, self.epsilon + self.y])

    @classmethod
    def from_options(cls, y, C, *, epsilon, nu):
        return cls(y, C, epsilon)

    def initial_alpha(self):
        """Where the interleaved SILP starts: every dual variable at 0."""
        return np.zeros(self.signs.size)

    def solve(self, K, alpha0, tol, gap=None, warm_product=None, stop_below=None):
        return svr_dual(K, self.y, self.cost, self.epsilon, alpha0=alpha0, tol=tol, gap=gap,
                        warm_product=warm_product, stop_below=stop_below)

    def coefficients(self, alpha):
        n = self.y.size
        return alpha[:n] - alpha[n:]

    def linear_value(self, alpha):
        return -float(self.linear @ alpha)

    def loss(self, f):
        """``sum_i C_i max(0, |y_i - f_i - b| - epsilon)`` at the best b; returns (value, b)."""
        bias = best_insensitive_bias(f, self.y, self.epsilon, self.cost)
        loss = np.maximum(0.0, np.abs(self.y - f - bias) - self.epsilon)
        return float(self.cost @ loss), bias

    def margin_factor(self, f):
        """inf: no scaling of w removes an epsilon-insensitive loss (see
        :meth:`ClassificationTask.margin_factor`)."""
        return np.inf

    def primal(self, K, alpha, grad=None):
        """``1/2 v'Kv`` plus :meth:`loss` at ``f = K v``; returns (value, b). ``grad``: the
        QP's gradient at alpha (see :func:`kernel_outputs`)."""
        v = self.coefficients(alpha)
        f = kernel_outputs(self, K, alpha, grad)
        loss, bias = self.loss(f)
        return 0.5 * float(v @ f) + loss, bias


class OneClassTask(Task, name="one-class"):
    """One-class SVM in LIBSVM's scaling: ``0 <= a <= 1``, ``1'a = nu n``, ``p = 0``.

    Primal (Schoelkopf et al., Neural Computation 2001, scaled by ``nu n``):
    ``min 1/2 ||w||^2 - nu n rho + sum_i max(0, rho - <w, phi(x_i)>)``; the decision function
    is ``K(d)(x, X) @ a - rho`` (positive inside). The SILP paper's scaling
    (``0 <= a <= 1/(nu n)``, ``1'a = 1``) divides every objective by ``(nu n)^2``.
    """

    classification = False

    def __init__(self, n_samples, nu):
        if not 0.0 < nu <= 1.0:
            raise ValueError(f"nu must lie in (0, 1], got {nu}; it bounds the fraction of "
                             "outliers: pick e.g. nu=0.1")
        n = int(n_samples)
        self.nu = float(nu)
        self.signs = np.ones(n)
        self.index = np.arange(n)
        self.upper = np.ones(n)
        self.linear = np.zeros(n)

    @classmethod
    def from_options(cls, y, C, *, epsilon, nu):
        return cls(y.size, nu)

    def initial_alpha(self):
        """LIBSVM's feasible start: ``a_i = 1`` for the first ``floor(nu n)`` points, the
        remainder on the next one."""
        n = self.signs.size
        total = self.nu * n
        alpha = np.zeros(n)
        whole = int(np.floor(total))
        alpha[:whole] = 1.0
        if whole < n:
            alpha[whole] = total - whole
        return alpha

    def solve(self, K, alpha0, tol, gap=None, warm_product=None, stop_below=None):
        return one_class_dual(K, self.nu, alpha0=alpha0, tol=tol, gap=gap,
                              warm_product=warm_product, stop_below=stop_below)

    def coefficients(self, alpha):
        return alpha

    def linear_value(self, alpha):
        return 0.0

    def loss(self, f):
        """``-nu n rho + sum_i max(0, rho - f_i)`` at the best rho; returns (value, -rho)
        so that the decision function is ``f + bias``."""
        rho = best_one_class_offset(f, self.nu)
        return -self.nu * f.size * rho + float(np.maximum(0.0, rho - f).sum()), -rho

    def primal(self, K, alpha, grad=None):
        """``1/2 v'Kv`` plus :meth:`loss` at ``f = K v``; returns (value, -rho). ``grad``:
        the QP's gradient at alpha (see :func:`kernel_outputs`)."""
        f = kernel_outputs(self, K, alpha, grad)
        loss, bias = self.loss(f)
        return 0.5 * float(alpha @ f) + loss, bias


# The default nu of one-class models (API and CLI): the expected share of outliers in the
# training data. LIBSVM's 0.5 leaves half of the training points outside the support.
DEFAULT_NU = 0.1


def make_task(name, y, C, *, epsilon=0.1, nu=DEFAULT_NU):
    """The task object registered as ``name`` (:data:`TASKS`: "classification",
    "regression", "one-class"); ValueError for another name.

    ``y`` holds labels in {-1, +1}, real targets, or (one-class) anything of length n.
    """
    y = np.asarray(y, dtype=np.float64)
    return TASKS.lookup(name).from_options(y, C, epsilon=epsilon, nu=nu)
