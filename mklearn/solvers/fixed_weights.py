"""The SVM on a combined kernel with fixed weights: the last step of every one-shot learner.

The weight learners of :mod:`mklearn.solvers.seeds` (average, alignment, ALIGNF, heuristics)
choose ``d`` once, from the kernels and the targets, and then solve one SVM on
``K(d) = sum_k d_k K_k``. That SVM is LIBSVM's dual (Chang and Lin, ACM TIST 2011, section
4.1) on the one SMO core of :mod:`mklearn.svm` (WSS2 of Fan, Chen and Lin, JMLR 2005):
C-SVC for classification, epsilon-SVR for regression (:mod:`mklearn.solvers.tasks`). Only the
kernels with ``d_k > 0`` are read; the rows of ``K(d)`` come
(:meth:`~mklearn.kernels.base.KernelOperator.svm_kernel`)

- from a kernel-major stack in memory (:class:`~mklearn.kernels.columns.StackColumns`,
  :class:`~mklearn.formulation.combinations.SumOfKernels`): ``K(d)`` formed once, dense;
- from any other provider (rows computed from X): combined on demand through an LRU cache of
  ``cache_size`` MB (:class:`~mklearn.kernels.row_sources.CombinedRows`); no ``n x n``
  matrix is formed unless it is small (``mklearn.kernels.base.DENSE_MAX_MB``) and fits in
  ``cache_size``: then it
  is computed in blocks of rows, a call per block rather than per missing row (PWMK's many
  small SVMs on Sonar took 70 s row by row).

The SVM is solved to a relative duality gap ``(P - D) / |P| <= tol``: ``P`` the primal at
``w = sum_i v_i phi(x_i)`` with its best bias, ``D`` the dual value; the KKT tolerance of
SMO starts at LIBSVM's 1e-3 and is tightened tenfold (warm started) until the gap is met.
"""

from __future__ import annotations

import time

import numpy as np

from mklearn.solvers.result import HistoryRecord, MKLResult, relative_gap
from mklearn.solvers.tasks import ClassificationTask
from mklearn.svm.core import KKT_TOL_FLOOR

SVM_KKT_TOL_START = 1e-3  # LIBSVM's default stopping tolerance, where the SVM's gap checks start


def fixed_weight_svm(operator, task, d, *, tol=1e-3, max_iter=None, cache_size=200.0,
                     callback=None, start=None, record=None) -> MKLResult:
    """Solve the SVM of ``task`` on ``K(d) = sum_k d_k K_k`` for fixed weights ``d``.

    Parameters
    ----------
    operator : KernelOperator
        The base kernels (``rows(indices, kernels)`` of shape (len(kernels), len(indices), n)
        and ``diagonal()`` of shape (m, n)): a column provider, a stack or a row operator.
    task : ClassificationTask or RegressionTask
        The SVM (:mod:`mklearn.solvers.tasks`): labels in {-1, +1} and per-sample costs C_i,
        or real targets, costs and the tube half-width epsilon.
    d : ndarray of shape (m,)
        Kernel weights, ``d >= 0`` with at least one positive.
    tol : float
        Stop when the SVM's relative duality gap ``(P - D) / |P|`` is at most ``tol``.
    max_iter : int, optional
        Gap checks at the most (outer iterations): the SMO core runs to a KKT tolerance
        ``SVM_KKT_TOL_START``, tightened tenfold after each check whose gap is above ``tol``,
        down to ``KKT_TOL_FLOOR``. None: until the floor.
    cache_size : float
        MB of combined rows kept when the rows are computed on demand.
    callback : callable, optional
        Called with the history record of each gap check.
    start : float, optional
        ``time.perf_counter()`` when the weight learner started (the record's time counts
        from it); now by default.
    record : dict, optional
        Keys of the weight learner added to each history record.

    Returns
    -------
    MKLResult
        ``kernel_weights = d``; ``alpha`` the task's dual vector (n for C-SVC, 2n for
        epsilon-SVR, see :meth:`RegressionTask.coefficients`); ``intercept = -rho``
        (LIBSVM's); ``objective`` the SVM's dual value ``D`` (no regulariser term: the
        weights are not optimised against one); ``duality_gap = P - D``;
        ``n_iter`` the gap checks (one history record each), ``n_smo_steps`` the SMO
        steps; ``n_svm_solves = 1``. ``stop_reason`` "max_iter" when ``max_iter`` checks
        did not reach ``tol``, "stalled" when the tightest KKT tolerance did not.

    Raises
    ------
    ValueError
        If ``d`` has a negative or non-finite entry, no positive entry, or the wrong length.
    """
    start = time.perf_counter() if start is None else start
    d = _checked_weights(d, operator.n_kernels)
    rows = operator.svm_kernel(d, cache_size)
    kkt_tol, alpha, n_steps, history = SVM_KKT_TOL_START, None, 0, []
    while True:
        qp = task.solve(rows, alpha, kkt_tol)
        alpha, n_steps = qp.alpha, n_steps + qp.n_iter
        primal, _ = task.primal(rows, alpha, qp.grad)
        dual = -qp.objective
        entry = HistoryRecord({  # the weight learner's keys last: they may replace these
            "iteration": len(history), "objective": dual,
            "relative_duality_gap": relative_gap(primal, dual), "inner_tol": kkt_tol,
            "n_steps": n_steps, "n_svm_solves": 1, "time": time.perf_counter() - start,
            **(record or {})})
        history.append(entry)
        if callback is not None:
            callback(entry)
        converged = entry["relative_duality_gap"] <= tol
        if converged or kkt_tol <= KKT_TOL_FLOOR or len(history) == max_iter:
            break
        kkt_tol = max(KKT_TOL_FLOOR, kkt_tol / 10.0)
    return MKLResult(
        kernel_weights=d, alpha=alpha, intercept=-qp.rho, objective=dual,
        duality_gap=max(primal - dual, 0.0), relative_duality_gap=relative_gap(primal, dual),
        n_iter=len(history), n_smo_steps=n_steps, n_svm_solves=1, converged=converged,
        history=history,
        stop_reason="converged" if converged else (
            "stalled" if kkt_tol <= KKT_TOL_FLOOR else "max_iter"),
    )


def classification_task(y, C):
    """The C-SVC task of labels ``y`` in {-1, +1} and costs ``C`` (float or shape (n,))."""
    y = np.asarray(y, dtype=np.float64)
    return ClassificationTask(y, np.broadcast_to(np.asarray(C, dtype=np.float64),
                                                 y.shape).copy())


def _checked_weights(d, n_kernels):
    d = np.array(d, dtype=np.float64).ravel()
    if d.shape != (n_kernels,):
        raise ValueError(f"kernel weights d must have one entry per kernel ({n_kernels}), "
                         f"got shape {d.shape}")
    if not np.all(np.isfinite(d)) or np.any(d < 0):
        raise ValueError(f"kernel weights d must be finite and >= 0, got {d}")
    if not np.any(d > 0):
        raise ValueError("kernel weights d are all zero: at least one kernel must have a "
                         "positive weight")
    return d
