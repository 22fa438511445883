"""SILP MKL: l1 (simplex) MKL as a semi-infinite linear program, solved by column generation.

Sonnenburg, Raetsch, Schaefer and Schoelkopf, "Large Scale Multiple Kernel Learning", JMLR 7,
2006, eq. 12 and Algorithms 1-2; ALGORITHMS.md section 5. With the per-kernel values
``S_k(alpha) = 1/2 v' K_k v + p' alpha`` of the task's dual (:mod:`mklearn.solvers.tasks`),

    max theta  over beta in the simplex, theta in R,
    s.t.  sum_k beta_k S_k(alpha) >= theta  for every feasible alpha.

- Wrapper (Algorithm 1): at the LP's beta solve the single-kernel problem with
  ``K(beta) = sum_k beta_k K_k`` by our SMO (warm-started); its alpha gives the most violated
  constraint, which is added to the restricted master LP (:mod:`mklearn.solvers.silp_master`:
  HiGHS, hot-started from the last basis; constraints inactive for ``PRUNE_AGE`` solves are
  dropped), and the LP gives the next (beta, theta).
- Interleaved (Algorithm 2, ``interleaved=True``): the SMO keeps the per-kernel outputs
  ``F[k] = K_k v`` and runs in chunks of ``chunk_steps`` steps; after each chunk the constraint
  of the current alpha is added and the LP re-solved, so that alpha is never optimised to full
  precision for a beta far from optimal.

Stopping: the paper's measure is ``eps_MKL = |1 - sum_k beta_k S_k(alpha_t) / theta_t|``, with
alpha_t optimal (KKT violation below ``inner_tol``) for the LP's beta_t. In the library's
convention the objective is ``T(beta) = W(beta) = -min_alpha sum_k beta_k S_k(alpha)``; the
reported duality gap is a proof: the task's primal at (beta, alpha) bounds T from above and
``-theta_t`` (a relaxation's value) bounds its minimum from below. A run stops when both
eps_MKL and that relative gap (every solver's measure) are at most ``tol``; when eps_MKL meets
``tol`` first, the inner SVM is solved 10 times more precisely from then on
(:class:`mklearn.solvers.silp_master.Progress`).

Column generation is Kelley's cutting-plane method: the LP's point jumps between vertices of
the simplex and its bound ``theta`` says little until the master holds about as many
constraints as there are kernels, so with m kernels it needs of the order of m LP solves
(Sonar, 120 points, 794 kernels, C = 100: a relative gap of 7.6e-3 after 3,000 solves). With
``level_method=True`` (the default) the next weights are instead the projection of the last
ones onto a level set of the cutting-plane model (the level method, Lemarechal, Nemirovskii
and Nesterov 1995; for MKL Xu, Jin, King and Lyu, NIPS 2008: a small HiGHS QP beside the LP,
:meth:`mklearn.solvers.silp_master.MasterLP.level_point`); the LP still gives ``theta`` and
the certificate's lower bound. Same problem, same optimum: Sonar at C = 1 and 100 reaches a
gap of 1e-3 in 86 and 119 LP solves (1,655 and more than 3,000 without).
"""

from __future__ import annotations

import numpy as np

from mklearn.extending import is_l1_simplex
from mklearn.kernels.base import prepare, require
from mklearn.kernels.row_sources import CombinedRows
from mklearn.solvers._renamed import former_operator_name
from mklearn.solvers.result import MKLResult
from mklearn.solvers.silp_linadd import silp_linadd
from mklearn.solvers.silp_master import MasterLP, Progress
from mklearn.solvers.tasks import ClassificationTask
from mklearn.svm.smo import SMOState, run_smo

ROW_CACHE_MB = 256.0  # rows of K(beta) kept during an interleaved chunk on a stack (a
# row-backed combination gives its own, combined_cache_size MB)


@former_operator_name('combination')
def silp_mkl(
    operator,
    y,
    C,
    regularizer,
    *,
    tol=1e-3,
    max_iter=500,
    interleaved=False,
    inner_tol=None,
    chunk_steps=None,
    linadd=False,
    level_method=True,
    task=None,
    callback=None,
) -> MKLResult:
    """l1-MKL by SILP column generation: the wrapper or the interleaved (chunking) algorithm.

    Parameters
    ----------
    operator : SumOfKernels
        Base kernels: ``kernel(d)`` (n, n), ``kernel_gradient(d, v)`` (m,) and, for the
        interleaved variant, ``rows(indices, kernels)`` and ``diagonal()`` (rows of K(beta)
        are combined from them on demand, see :class:`mklearn.kernels.row_sources.CombinedRows`).
    y : ndarray of shape (n,)
        Labels in {-1, +1} (classification; unused with another ``task``).
    C : float or ndarray of shape (n,)
        SVM cost (classification; unused with another ``task``).
    regularizer : L1Simplex
        Must be the simplex (``name == "l1"``).
    tol : float
        Stop when the paper's ``eps_MKL = |1 - sum_k beta_k S_k(alpha_t) / theta_t|`` and the
        certified relative duality gap are both at most ``tol``.
    max_iter : int
        Maximal number of LP solves.
    interleaved : bool
        Chunking algorithm (paper's Algorithm 2) instead of the wrapper (Algorithm 1).
    inner_tol : float, optional
        SMO tolerance on the maximal KKT violation at the start; default ``min(1e-3, tol)``
        (divided by 10 whenever eps_MKL meets ``tol`` before the gap does).
    chunk_steps : int, optional
        SMO steps per chunk of the interleaved variant; default the number of dual variables.
    linadd : bool
        The interleaved algorithm over string kernels with the linadd decomposition SVM
        (:func:`mklearn.solvers.silp_linadd`: no kernel row, no stack; 10^5 sequences):
        classification only, on string kernels computed on demand (an operator with the
        capability ``linadd``: ``kernel_storage="rows"`` in the estimators).
    level_method : bool
        Stabilise the master by the level method (module notes); False gives the paper's
        plain column generation.
    task : ClassificationTask, RegressionTask or OneClassTask, optional
        The inner problem; default C-SVC on ``(y, C)``.
    callback : callable, optional
        Called with the history record after each LP solve.

    Returns
    -------
    MKLResult
        ``alpha`` is the task's dual vector, ``intercept`` the bias minimising the task's
        primal at the returned weights; ``n_iter`` counts LP solves, ``n_svm_solves`` the
        full SVM solves (wrapper) or SMO chunks (interleaved) and ``n_smo_steps`` the SMO
        steps of them all.

    Raises
    ------
    ValueError
        If the regulariser is not the l1 simplex, ``inner_tol <= 0`` or ``chunk_steps < 1``.
    """
    prepare(operator, "silp")
    if not is_l1_simplex(regularizer):
        raise ValueError(f"solver 'silp' solves l1 (simplex) MKL only (r = 0 on the simplex), "
                         f"got {regularizer!r}; use regularizer='l1', or solver='spg' (or "
                         "'auto') for it")
    if task is None:
        y = np.asarray(y, dtype=np.float64)
        task = ClassificationTask(y, np.broadcast_to(np.asarray(C, float), y.shape).copy())
    inner_tol = min(1e-3, tol) if inner_tol is None else float(inner_tol)
    if not inner_tol > 0:
        raise ValueError(f"inner_tol must be > 0, got {inner_tol}; e.g. 1e-4")
    if chunk_steps is not None and not int(chunk_steps) >= 1:
        raise ValueError(f"chunk_steps must be an int >= 1, got {chunk_steps}; default: the "
                         "number of dual variables")
    if linadd:
        hint = ("solver_options={'linadd': True} needs classification on string kernels "
                "computed on demand (WeightedDegree, Spectrum or wd_sub_kernels with "
                "kernel_storage='rows'); drop linadd for other kernels or tasks")
        if not task.classification:
            raise ValueError(hint)
        require(operator, "linadd", "silp", hint)
        return silp_linadd(operator, task.y, task.cost, tol=tol, max_iter=max_iter,
                           inner_tol=inner_tol, level_method=level_method, callback=callback)
    run = _interleaved if interleaved else _wrapper
    return run(operator, task, tol, max_iter, inner_tol, chunk_steps, level_method,
               callback)


def _wrapper(operator, task, tol, max_iter, inner_tol, chunk_steps, level_method, callback):
    m = operator.n_kernels
    progress = Progress(task, tol, callback, inner_tol)
    master = MasterLP(m, level=level_method)
    beta = np.full(m, 1.0 / m)
    alpha, converged, n_iter = None, False, 0
    for n_iter in range(1, max_iter + 1):
        K = operator.kernel(beta)
        qp = task.solve(K, alpha, progress.inner_tol)
        alpha = qp.alpha
        progress.n_smo_steps += int(qp.n_iter)
        g = operator.kernel_gradient(beta, task.coefficients(alpha))
        S, stop = progress.record(operator, beta, alpha, g, n_iter, True, K)
        if stop:
            converged = True
            break
        beta, progress.theta = master.next_weights(S, beta, progress.best)
    return progress.result(n_iter, n_iter, converged)


def _interleaved(operator, task, tol, max_iter, inner_tol, chunk_steps, level_method,
                 callback):
    m, n = operator.n_kernels, operator.n_samples
    alpha = task.initial_alpha()  # one-class: 1'alpha = nu n from the start
    st = SMOState(task.signs, task.index, task.linear, task.upper, n, alpha)
    v = st.coefficients()
    F = operator.products(v) if v.any() else np.zeros((m, n))
    chunk_steps = st.signs.size if chunk_steps is None else int(chunk_steps)
    progress = Progress(task, tol, callback, inner_tol)
    master = MasterLP(m, level=level_method)
    beta = np.full(m, 1.0 / m)
    converged, n_iter, n_chunks = False, 0, 0
    while n_iter < max_iter:
        inner_done, steps, v, K = _chunk(operator, st, F, beta, progress.inner_tol,
                                         chunk_steps, v)
        n_chunks += 1
        progress.n_smo_steps += steps
        g = np.maximum(F @ v, 0.0)
        S, stop = progress.record(operator, beta, alpha, g, n_chunks, inner_done, K)
        if stop:
            converged = True
            break
        if n_iter + 1 == max_iter and progress.certificate.point is None:
            progress.certify(operator, beta, alpha, S)  # no chunk reached inner_tol
        beta, progress.theta = master.next_weights(S, beta, progress.best)
        n_iter += 1
    return progress.result(n_iter, n_chunks, converged)


def _chunk(operator, st, F, beta, inner_tol, chunk_steps, v_old):
    """At most ``chunk_steps`` SMO steps on ``K(beta)`` from the state ``st``; the per-kernel
    outputs ``F[k] = K_k v`` are brought up to date once at the end from the change of ``v``
    (the paper's Algorithm 2: ``O(m n)`` per changed sample, not per step). Returns whether
    the KKT violation reached ``inner_tol``, the steps taken, the new ``v``, and the chunk's
    rows of ``K(beta)`` (the certificate's primal reads them again)."""
    # a stack's kernel(beta) is dense: its chunks read rows combined on demand instead
    rows = (CombinedRows(operator, beta, ROW_CACHE_MB) if operator.capabilities.stack
            else operator.kernel(beta))
    st.gradient_from(beta @ F)
    st.activate_all()

    def reconstruct():
        st.gradient_from(rows.matvec(st.coefficients()))

    solved, steps, _, _ = run_smo(rows, st, tol=inner_tol, max_steps=chunk_steps,
                                  shrinking=True, reconstruct=reconstruct)
    v = st.coefficients()
    F += operator.products(v - v_old)
    return solved, int(steps), v, rows
