"""Losses of the inner single-kernel problems of MKL: hinge (C-SVC), epsilon-insensitive
(epsilon-SVR) and one-class: their best offsets (:func:`best_hinge_bias`,
:func:`best_insensitive_bias`, :func:`best_one_class_offset`), the outputs ``f = K v`` of a
dual solution (:func:`kernel_outputs`) and the SVM primal (:func:`svm_primal`).

The task objects that pair each loss with its dual on the SMO core are in
:mod:`mklearn.solvers.tasks`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["best_hinge_bias", "best_insensitive_bias", "best_one_class_offset", "kernel_outputs",
           "hard_margin_factor", "svm_primal"]


def best_hinge_bias(f: np.ndarray, y: np.ndarray, cost: np.ndarray) -> float:
    """The bias b minimising ``sum_i cost_i max(0, 1 - y_i (f_i + b))`` (a weighted median)."""
    breakpoints = y - f  # the hinge of point i has its kink at b = y_i - f_i
    order = np.argsort(breakpoints)
    b_sorted = breakpoints[order]
    w_pos = np.where(y[order] > 0, cost[order], 0.0)
    w_neg = np.where(y[order] < 0, cost[order], 0.0)
    # slope just right of breakpoint t: negatives passed so far minus positives still ahead
    slope_right = np.cumsum(w_neg) - (w_pos.sum() - np.cumsum(w_pos))
    t = int(np.searchsorted(slope_right, 0.0))
    return float(b_sorted[min(t, b_sorted.size - 1)])


def kernel_outputs(task, K, alpha, grad=None):
    """``f = K v`` (shape (n,)), ``v = task.coefficients(alpha)``: from the QP's gradient
    ``grad = signs * f[index] + linear`` when given (an SVM solve returns it: no product with
    ``K``, which on many points computes every support vector's row), else ``K @ v``."""
    if grad is None:
        return K @ task.coefficients(alpha)
    f = np.zeros(int(task.index.max()) + 1)
    f[task.index] = task.signs * (np.asarray(grad, dtype=np.float64) - task.linear)
    return f


def svm_primal(K: np.ndarray, alpha: np.ndarray, y: np.ndarray, cost: np.ndarray, f=None):
    """SVM primal value at ``w = sum_i alpha_i y_i phi(x_i)`` and the best bias; returns (P, b).
    ``f = K (alpha y)`` when known.

    P is the smaller of the primal at (w, b) and at ``(w / m, b' / m)``, m the margin
    ``max_b' min_i y_i (f_i + b')`` when positive (no hinge loss: ``1/2 ||w||^2 / m^2``), both
    upper bounds of the optimum; the second closes the duality gap on separable data at a
    large C, where the hinge term holds C times the margin violations that rounding leaves.
    """
    v = alpha * y
    f = K @ v if f is None else f
    b = best_hinge_bias(f, y, cost)
    hinge = np.maximum(0.0, 1.0 - y * (f + b))
    quadratic = 0.5 * float(v @ f)
    factor = hard_margin_factor(f, y, cost)
    scaled = quadratic * factor if np.isfinite(factor) else np.inf
    return min(quadratic + float(cost @ hinge), scaled), b


def hard_margin_factor(f, y, cost):
    """``1 / m^2``, m the largest ``min_i y_i (f_i + b)`` over b (samples of positive cost),
    or inf when ``m <= 0``: ``(w / m, b / m)`` separates the samples with no hinge loss."""
    weighted = np.asarray(cost) > 0
    positive, negative = f[weighted & (y > 0)], f[weighted & (y < 0)]
    if positive.size == 0 or negative.size == 0:
        return np.inf
    margin = 0.5 * (float(positive.min()) - float(negative.max()))
    return 1.0 / margin**2 if margin > 0 else np.inf


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


def best_insensitive_bias(f, y, epsilon, cost):
    """The b minimising ``sum_i cost_i max(0, |y_i - f_i - b| - epsilon)`` (convex, piecewise
    linear: the slope changes only at ``y_i - f_i +- epsilon``)."""
    r = y - f
    points = np.concatenate([r - epsilon, r + epsilon])
    weights = np.concatenate([cost, cost])
    order = np.argsort(points)
    # slope right of a point: cost of residuals below b - epsilon minus those above b + epsilon;
    # it rises by cost_i at each breakpoint and starts at -sum(cost)
    slope_right = np.cumsum(weights[order]) - cost.sum()
    t = int(np.searchsorted(slope_right, 0.0))
    return float(points[order][min(t, points.size - 1)])
