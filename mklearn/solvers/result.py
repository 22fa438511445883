"""The result every MKL solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class MKLResult:
    """Solution of one binary MKL problem, with its certificate.

    Attributes
    ----------
    kernel_weights : ndarray of shape (m,)
        Learned weights d of the base kernels.
    alpha : ndarray of shape (n,)
        SVM dual variables for the kernel ``K(d)``.
    intercept : float
        Bias b of the decision function ``sum_i alpha_i y_i K(d)(x_i, x) + b``.
    objective : float
        ``T(d) = r(d) + W(d)``, W evaluated as the inner SVM's dual value.
    duality_gap : float
        Upper bound minus lower bound on the optimum (absolute; NaN where no gap exists).
    n_iter : int
        Outer iterations.
    n_svm_solves : int
        Inner SVM solves (line-search trials included).
    converged : bool
        Whether the stopping rule was met within ``max_iter``.
    stop_reason : str
        "converged", "max_iter", or "stalled" (no step decreased the objective even at the
        tightest inner tolerance: a kink of W or an objective too noisy for the search).
    history : list of dict
        Per outer iteration: objective, duality gap (relative), projected-gradient norm,
        inner tolerance, step and elapsed seconds.
    """

    kernel_weights: np.ndarray
    alpha: np.ndarray
    intercept: float
    objective: float
    duality_gap: float
    n_iter: int
    n_svm_solves: int
    converged: bool
    history: list = field(default_factory=list)
    stop_reason: str = "converged"
