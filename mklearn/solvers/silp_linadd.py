"""SILP MKL over string kernels with linadd: the interleaved algorithm at 10^5 sequences.

Sonnenburg, Raetsch, Schaefer and Schoelkopf, "Large Scale Multiple Kernel Learning", JMLR 7,
2006, Algorithm 2 with the linadd update of section 4.2 (ALGORITHMS.md section 5). The SVM
part is SVMlight-style decomposition (:class:`mklearn.svm.linadd.Decomposition`); the normal
vectors of every sub-kernel live in one sparse explicit feature space ``w``, so that

- the outputs ``f = K(beta) v`` for new weights beta cost one look-up of w per example
  (``O(n S)`` for S feature slots per example), and
- the per-kernel outputs ``K_k v``, hence the SILP constraint ``S_k(alpha)``, cost the same,

and no kernel row, no n x n matrix and no (n, n, m) stack is ever formed. Each outer iteration
runs up to ``chunk_iterations`` decomposition subproblems at the current beta (or until the KKT
violation is below ``inner_tol``), adds the constraint of the current alpha to the master LP
(HiGHS) and re-solves it. The stopping rule and the certificate (task primal from ``f``,
``-theta`` below) are the wrapper's and :func:`mklearn.solvers.silp_mkl`'s.
"""

from __future__ import annotations

import numpy as np

from mklearn.solvers._renamed import former_operator_name
from mklearn.solvers.result import MKLResult
from mklearn.solvers.silp_master import MasterLP, Progress
from mklearn.solvers.tasks import ClassificationTask
from mklearn.svm.linadd import Decomposition

__all__ = ["silp_linadd"]


@former_operator_name('provider')
def silp_linadd(operator, y, C, *, tol=1e-3, max_iter=1000, inner_tol=None,
                working_set=100, chunk_iterations=10, level_method=True,
                callback=None) -> MKLResult:
    """l1-MKL over string sub-kernels by SILP with the linadd decomposition SVM.

    Parameters
    ----------
    operator : StringColumns
        The sub-kernels of the training sequences (``block``, ``linadd()``), e.g.
        ``StringColumns(StringKernelBank(wd_sub_kernels(20, by="position")).fit(seqs))``.
    y : array-like of shape (n,)
        Labels in {-1, +1}.
    C : float > 0 or ndarray of shape (n,)
        SVM cost (per sample: ``C * sample_weight * class_weight`` in the estimators).
    tol : float > 0, default=1e-3
        Stop when ``eps_MKL = |1 - sum_k beta_k S_k(alpha_t) / theta_t|`` and the certified
        relative duality gap are both at most ``tol``, with alpha_t optimal for beta_t (as
        :func:`mklearn.solvers.silp_mkl`).
    max_iter : int >= 1, default=1000
        Maximal number of master LP solves.
    inner_tol : float > 0, optional
        KKT tolerance of the SVM part at the start; default ``min(1e-3, tol)`` (divided by 10
        whenever eps_MKL meets ``tol`` before the gap does).
    working_set : int >= 2, default=100
        Size q of the decomposition's working set.
    chunk_iterations : int >= 1, default=10
        Decomposition subproblems between two LP solves.
    level_method : bool, default=True
        Stabilise the master LP by the level method (as :func:`mklearn.solvers.silp_mkl`).
    callback : callable, optional
        Called with the history record after each LP solve.

    Returns
    -------
    MKLResult
        ``kernel_weights`` beta (simplex), ``alpha``, ``intercept``; ``n_iter`` counts LP
        solves, ``n_svm_solves`` decomposition subproblems.

    Raises
    ------
    ValueError
        If y is not in {-1, +1} or has the wrong length, or C, tol, inner_tol, working_set or
        chunk_iterations is invalid.
    """
    y = np.asarray(y, dtype=np.float64)
    n, m = operator.n_samples, operator.n_kernels
    if y.shape != (n,) or not np.all(np.abs(y) == 1.0):
        raise ValueError(f"y must hold {n} labels in {{-1, +1}}; got shape {y.shape}")
    cost = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,)).copy()
    if not (np.all(np.isfinite(cost)) and np.all(cost >= 0) and cost.max() > 0):
        raise ValueError(f"C must be finite numbers >= 0, not all 0; got {C!r}")
    inner_tol = min(1e-3, tol) if inner_tol is None else float(inner_tol)
    for name, value, low in (("tol", tol, 0), ("inner_tol", inner_tol, 0),
                             ("working_set", working_set, 1),
                             ("chunk_iterations", chunk_iterations, 0)):
        if not value > low:
            raise ValueError(f"{name} must be > {low}; got {value!r}")
    task = ClassificationTask(y, cost)
    beta = np.full(m, 1.0 / m)
    state = Decomposition(operator, y, task.upper, beta, "linadd")
    master = MasterLP(m, level=level_method)
    progress = Progress(task, tol, callback, inner_tol)
    converged, n_iter = False, 0
    while n_iter < max_iter:
        inner_tol = progress.inner_tol
        for _ in range(int(chunk_iterations)):
            if state.violation() <= inner_tol or not state.step(int(working_set),
                                                                 inner_tol / 10):
                break
        inner_done = state.violation() <= inner_tol
        outputs = state.linadd.per_kernel_outputs(state.w)  # (n, m): K_k v
        v = task.coefficients(state.alpha)
        g = np.maximum(outputs.T @ v, 0.0)
        f = outputs @ beta
        loss, bias = task.loss(f)
        primal = (0.5 * float(v @ f) + loss, bias)
        S, stop = progress.record(None, beta, state.alpha, g, state.n_iter, inner_done,
                                  primal=primal)
        if stop:
            converged = True
            break
        beta, progress.theta = master.next_weights(S, beta, progress.best)
        state.reweight(beta)
        n_iter += 1
    return progress.result(n_iter, state.n_iter, converged)
