"""The inner single-kernel problems of MKL ("tasks"): C-SVC, epsilon-SVR and one-class SVM.

Each is LIBSVM's generic dual (Chang and Lin, LIBSVM, section 4.1)
``min_a 1/2 a' Q a + p' a``, ``Q_ts = signs_t signs_s K[index_t, index_s]``, ``signs' a = const``,
``0 <= a <= upper``. With ``v = sum_t signs_t a_t e_index[t]`` (the signed coefficients, shape
(n,)), ``1/2 a' Q a = 1/2 v' K v``, so for ``K(d) = sum_k d_k K_k``

- the MKL objective is ``W(d) = max_a -p'a - 1/2 v' K(d) v`` and ``dW/dd_k = -1/2 v' K_k v``;
- SILP's per-kernel values (Sonnenburg et al., JMLR 2006, eq. 12) are
  ``S_k(a) = 1/2 v' K_k v + p' a``, so that ``sum_k d_k S_k(a)`` is the QP objective at K(d);
- the task's primal at ``w = sum_i v_i phi(x_i)`` with its best offset bounds ``W(d)`` from
  above whatever the accuracy of ``a`` (the duality gap of ALGORITHMS.md section 1).

An object with ``signs``, ``index``, ``upper``, ``linear`` (= p), ``solve(K, alpha0, tol)``,
``coefficients(alpha)``, ``linear_value(alpha)`` (= -p'a) and ``primal(K, alpha)`` (primal
value, bias) is a task; :class:`ClassificationTask` lives in :mod:`mklearn.solvers.spg`.
"""

from __future__ import annotations

import numpy as np

from mklearn.solvers.smo_mkl import best_insensitive_bias
from mklearn.solvers.spg import ClassificationTask
from mklearn.svm import one_class_dual, svr_dual


class RegressionTask:
    """epsilon-SVR: 2n variables ``[a+; a-]``, signs ``[+1, -1]``, rows ``[0..n-1, 0..n-1]``,
    linear term ``[epsilon - y, epsilon + y]``, bounds ``C`` (ALGORITHMS.md section 5).

    The prediction is ``K(d)(x, X) @ v + bias`` with ``v = a+ - a-``.
    """

    name = "regression"

    def __init__(self, y, cost, epsilon):
        self.y = np.asarray(y, dtype=np.float64)
        n = self.y.size
        self.cost = np.broadcast_to(np.asarray(cost, dtype=np.float64), (n,)).copy()
        self.epsilon = float(epsilon)
        self.signs = np.concatenate([np.ones(n), -np.ones(n)])
        self.index = np.concatenate([np.arange(n), np.arange(n)])
        self.upper = np.concatenate([self.cost, self.cost])
        self.linear = np.concatenate([self.epsilon - self.y, self.epsilon + self.y])

    def solve(self, K, alpha0, tol):
        return svr_dual(K, self.y, self.cost, self.epsilon, alpha0=alpha0, tol=tol)

    def coefficients(self, alpha):
        n = self.y.size
        return alpha[:n] - alpha[n:]

    def linear_value(self, alpha):
        return -float(self.linear @ alpha)

    def primal(self, K, alpha):
        """``1/2 v'Kv + sum_i C_i max(0, |y_i - f_i - b| - epsilon)`` at the best b."""
        v = self.coefficients(alpha)
        f = K @ v
        bias = best_insensitive_bias(f, self.y, self.epsilon, self.cost)
        loss = np.maximum(0.0, np.abs(self.y - f - bias) - self.epsilon)
        return 0.5 * float(v @ f) + float(self.cost @ loss), bias


class OneClassTask:
    """One-class SVM in LIBSVM's scaling: ``0 <= a <= 1``, ``1'a = nu n``, ``p = 0``.

    Primal (Schoelkopf et al., Neural Computation 2001, scaled by ``nu n``):
    ``min 1/2 ||w||^2 - nu n rho + sum_i max(0, rho - <w, phi(x_i)>)``; the decision function
    is ``K(d)(x, X) @ a - rho`` (positive inside). The SILP paper's scaling
    (``0 <= a <= 1/(nu n)``, ``1'a = 1``) divides every objective by ``(nu n)^2``.
    """

    name = "one-class"

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

    def solve(self, K, alpha0, tol):
        return one_class_dual(K, self.nu, alpha0=alpha0, tol=tol)

    def coefficients(self, alpha):
        return alpha

    def linear_value(self, alpha):
        return 0.0

    def primal(self, K, alpha):
        """``1/2 v'Kv - nu n rho + sum_i max(0, rho - f_i)`` at the best rho; returns
        (value, -rho) so that the decision function is ``f + bias``."""
        f = K @ alpha
        rho = best_one_class_offset(f, self.nu)
        value = 0.5 * float(alpha @ f) - self.nu * f.size * rho + float(
            np.maximum(0.0, rho - f).sum())
        return value, -rho


def best_one_class_offset(f, nu):
    """The rho minimising ``-nu n rho + sum_i max(0, rho - f_i)``: the ``ceil(nu n)``-th
    smallest output (the slope ``#{f_i < rho} - nu n`` changes sign there). When ``nu n`` is
    an integer k every rho between the k-th and the (k+1)-th smallest output is optimal: the
    midpoint, so that no training point sits on the boundary by construction."""
    n = f.size
    total = nu * n
    k = min(max(int(np.ceil(total - 1e-12)), 1), n)
    if abs(total - round(total)) <= 1e-12 and k < n:
        low, high = np.partition(f, (k - 1, k))[k - 1:k + 1]
        return float(0.5 * (low + high))
    return float(np.partition(f, k - 1)[k - 1])


def make_task(name, y, C, *, epsilon=0.1, nu=0.5):
    """The task object for ``name`` in {"classification", "regression", "one-class"}.

    ``y`` holds labels in {-1, +1}, real targets, or (one-class) anything of length n.
    """
    y = np.asarray(y, dtype=np.float64)
    if name == "classification":
        cost = np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape).copy()
        return ClassificationTask(y, cost)
    if name == "regression":
        return RegressionTask(y, C, epsilon)
    if name == "one-class":
        return OneClassTask(y.size, nu)
    raise ValueError(f"unknown task {name!r}; choose 'classification', 'regression' or "
                     "'one-class'")


__all__ = ["ClassificationTask", "OneClassTask", "RegressionTask", "best_one_class_offset",
           "make_task"]
