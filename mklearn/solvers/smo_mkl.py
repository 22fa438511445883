"""SMO-MKL: lp-norm (and KL-regularised) MKL solved in the dual by SMO.

Vishwanathan, Sun, Theera-Ampornpunt and Varma, "Multiple Kernel Learning and the SMO
Algorithm", NIPS 2010; restated in ALGORITHMS.md section 2. The dual is smooth in alpha,

    D(alpha) = 1'alpha - r*(g(alpha) / 2),  alpha in {0 <= alpha <= C, y'alpha = 0},

with ``g_k = alpha' Y K_k Y alpha`` and ``r*`` the convex conjugate of the regulariser on
``d >= 0`` (lp: ``||z||_q^2 / (2 lam)``, the paper's eq. 9; KL: ``lam sum d0 (exp(z/lam) - 1)``).
Each step picks two variables by WSS2 on the SVM with the current kernel ``K(d(alpha))``
(Fan, Chen and Lin, JMLR 2005), then maximises D exactly along the pair: a safeguarded
Newton-Raphson on the one-dimensional concave function (eq. 11-15), or the closed-form cubic
for p = 2 (eq. 16). The per-kernel outputs ``F[k] = K_k Y alpha`` (O(mn) numbers) and the
quadratic terms ``g_k`` are updated from two kernel rows per step; rows come from a column
provider (computed from X on demand, or sliced from a precomputed stack) through an LRU cache
of ``cache_size`` MB, whose layout the kernels choose once
(:func:`~mklearn.kernels.row_sources.base_rows`). Kernel weights are ``d = grad r*(g / 2)``
(eq. 10).

Stopping: the duality gap ``U - D(alpha)`` relative to ``|U|``, where
``U = r(d) + 1/2 sum_k d_k g_k + sum_i C_i max(0, 1 - y_i (f_i + b))`` is the MKL primal at
``d = d(alpha)``, ``w_k = d_k sum_i alpha_i y_i phi_k(x_i)`` and the best bias b: a proof of
optimality whatever the state of the SMO. In classification ``U`` is also taken at ``w / m``
(m the margin of w with its best bias, when positive: no hinge loss, the quadratic term over
``m^2``), which closes the gap on separable data at large C, where the hinge term holds C
times the margin violations that rounding leaves. The gap is checked whenever the maximal KKT
violation falls below the current inner tolerance (tightened tenfold while the gap is above
``tol``) and at least every ``n`` steps.
"""

from __future__ import annotations

import time

import numpy as np

from mklearn.extending import implements
from mklearn.kernels.base import prepare
from mklearn.kernels.row_sources import base_rows
from mklearn.solvers._renamed import former_operator_name
from mklearn.solvers.result import HistoryRecord, MKLResult, relative_gap
from mklearn.solvers.tasks import ClassificationTask, RegressionTask
from mklearn.svm import mkl_step as core
from mklearn.svm.core import KKT_TOL_FLOOR, MKLStep
from mklearn.svm.smo import SMOState, run_smo

MKL_KKT_TOL_START = 1e-1  # first inner KKT tolerance (units of G): loose, the duality gap decides


_KINDS = {"lp": core.KIND_LP, "kl": core.KIND_KL}


def _regularizer_kind(regularizer, n_kernels):
    """(kind, lam, q, prior) for the numba core, from the regulariser's declared
    ``smo_dual``; ValueError for regularizers without one."""
    form = regularizer.smo_dual(n_kernels) if implements(regularizer, "smo_dual") else None
    if form is None or form[0] not in _KINDS:
        raise ValueError(
            f"solver 'smo' needs a smooth dual (a regulariser with smo_dual: 'lp' with p > 1 "
            f"or 'kl'), got {regularizer!r}; use solver='spg' (or 'auto') for it"
        )
    kind, lam, q, prior = form
    prior = np.zeros(1) if prior is None else np.asarray(prior, dtype=np.float64)
    return _KINDS[kind], float(lam), float(q), prior


@former_operator_name('provider')
def smo_mkl(
    operator,
    y,
    C,
    regularizer,
    *,
    tol=1e-3,
    max_iter=500,
    callback=None,
    cache_size=200.0,
    closed_form=True,
    shrinking=True,
    heartbeat=None,
) -> MKLResult:
    """Solve lp-MKL (p > 1) or KL-regularised MKL in the dual by SMO.

    Parameters
    ----------
    operator : KernelColumns or StackColumns
        Rows of the base kernels (``rows(indices)`` of shape (m, len(indices), n) and
        ``diagonal()`` of shape (m, n)).
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float or ndarray of shape (n,)
        SVM cost (per sample allowed).
    regularizer : LpNorm or KLDivergence
        Supplies ``value``, ``conjugate`` and its parameters.
    tol : float
        Stop when the relative duality gap is below ``tol``.
    max_iter : int
        Maximal number of outer iterations: duality-gap checks, each after at most n SMO
        steps or once the maximal KKT violation is below the current inner tolerance.
    callback : callable, optional
        Called with the history record after each gap check.
    cache_size : float
        MB of kernel rows kept (each row holds all m kernels: ``8 m n`` bytes; by table, a
        point's distances on the b sparse feature blocks: ``b n`` bytes, ``2 b n`` when a
        distance exceeds 255).
    closed_form : bool
        For p = 2, solve the one-dimensional problem by the cubic formula (else Newton).
    shrinking : bool
        LIBSVM's shrinking in the SMO core (:mod:`mklearn.svm.core`): shrunk variables leave
        the working-set search and the gradient updates (the per-kernel outputs stay exact).
    heartbeat : callable, optional
        Called with the SMO steps taken so far and the steps after which the next gap
        check is due at the latest, and the keywords ``cached`` (rows in the row cache),
        ``fills_to`` (the rows it fills to), ``violation`` (the largest KKT violation) and
        ``inner_tol`` (the one the check ends at), at least every
        :data:`mklearn.svm.smo.HEARTBEAT_SECONDS` between two gap checks.

    Returns
    -------
    MKLResult
        ``n_iter`` counts gap checks and ``n_smo_steps`` the SMO steps; ``n_svm_solves``
        is 0 (no inner SVM); ``kernel_weights`` is ``d(alpha)`` at the check of smallest
        relative gap, whose ``objective`` (the dual value), gap and relative gap each
        history record repeats from then on.

    Raises
    ------
    ValueError
        If the regulariser is not smooth (l1), or ``cache_size`` holds fewer than two rows.
    """
    prepare(operator, "smo")
    y = np.asarray(y, dtype=np.float64)
    task = ClassificationTask(y, np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape).copy())
    return _solve(operator, task, regularizer, tol=tol, max_iter=max_iter, callback=callback,
                  cache_size=cache_size, closed_form=closed_form, shrinking=shrinking,
                  heartbeat=heartbeat)


@former_operator_name('provider')
def smo_mkl_regression(
    operator,
    y,
    C,
    regularizer,
    *,
    epsilon=0.1,
    tol=1e-3,
    max_iter=500,
    callback=None,
    cache_size=200.0,
    closed_form=True,
    shrinking=True,
) -> MKLResult:
    """epsilon-insensitive lp-MKL (or KL) regression in the dual by SMO (paper eq. 24-27).

    The dual over ``beta = a+ - a-`` (``0 <= a+, a- <= C``, ``1'beta = 0``) is
    ``y'beta - epsilon 1'(a+ + a-) - r*(g(beta) / 2)``, ``g_k = beta' K_k beta``: LIBSVM's
    epsilon-SVR form with 2n variables (signs ``[+1, -1]``, linear term
    ``[epsilon - y, epsilon + y]``) on the same SMO core as classification.

    Parameters
    ----------
    operator : KernelColumns or StackColumns
        Rows of the base kernels.
    y : ndarray of shape (n,)
        Real targets.
    C : float or ndarray of shape (n,)
        Cost of the epsilon-insensitive loss (per sample allowed).
    regularizer : LpNorm or KLDivergence
        As in :func:`smo_mkl`.
    epsilon : float >= 0
        Half-width of the insensitive tube, in units of y.
    tol, max_iter, callback, cache_size, closed_form, shrinking
        As in :func:`smo_mkl`.

    Returns
    -------
    MKLResult
        ``alpha`` holds ``beta = a+ - a-`` (shape (n,)): the prediction is
        ``sum_k d_k sum_i beta_i K_k(x_i, x) + intercept``.

    Raises
    ------
    ValueError
        As in :func:`smo_mkl`.
    """
    prepare(operator, "smo")
    task = RegressionTask(y, C, epsilon)
    result = _solve(operator, task, regularizer, tol=tol, max_iter=max_iter, callback=callback,
                    cache_size=cache_size, closed_form=closed_form, shrinking=shrinking)
    result.alpha = task.coefficients(result.alpha)
    return result


def _solve(operator, task, regularizer, *, tol, max_iter, callback, cache_size, closed_form,
           shrinking, heartbeat=None):
    """The SMO-MKL loop shared by the losses (:mod:`mklearn.solvers.tasks`): the task's
    signs, rows,
    linear term and bounds, and ``task.loss(f)`` (loss, best bias) for the primal bound."""
    signs, index, linear, upper = task.signs, task.index, task.linear, task.upper
    start = time.perf_counter()
    n, m = operator.n_samples, operator.n_kernels
    kind, lam, q, prior = _regularizer_kind(regularizer, m)
    use_cubic = bool(closed_form and kind == core.KIND_LP and abs(q - 2.0) < 1e-12)
    rows = base_rows(operator, cache_size)
    st = SMOState(signs, index, linear, upper, n, np.zeros(len(signs)))
    F = np.zeros((m, n))
    g = np.zeros(m)
    d = np.zeros(m)
    mkl = MKLStep(F=F, g=g, d=d, fd=np.empty(n), base_diag=rows.diagonal(), kind=kind, lam=lam,
                  q=q, prior=prior, use_cubic=use_cubic)

    def reconstruct():  # F is exact on every sample: the gradient of shrunk variables
        st.gradient_from(d @ F)

    alpha = st.alpha
    fills_to = min(rows.cache.capacity, n)  # rows the cache holds once it is full
    kkt_tol = MKL_KKT_TOL_START
    history, n_steps, converged, best = [], 0, False, None
    for check in range(max_iter):
        beat = None if heartbeat is None else (
            lambda steps, violation, done=n_steps, inner_tol=kkt_tol: heartbeat(
                done + steps, done + signs.size, cached=len(rows.cache), fills_to=fills_to,
                violation=violation, inner_tol=inner_tol))
        solved, steps, violation, _ = run_smo(rows, st, tol=kkt_tol, max_steps=signs.size,
                                           shrinking=shrinking, reconstruct=reconstruct, mkl=mkl,
                                           heartbeat=beat)
        n_steps += steps
        beta = st.coefficients()
        g[:] = np.maximum(F @ beta, 0.0)  # exact quadratic terms from the outputs (no drift)
        core.kernel_weights(g, kind, lam, q, prior, d)
        outputs = d @ F
        loss, bias = task.loss(outputs)
        quadratic = 0.5 * float(d @ g)
        factor = task.margin_factor(outputs)  # the separating scaling of w, if there is one
        scaled = quadratic * factor if np.isfinite(factor) else np.inf
        upper_bound = regularizer.value(d) + min(quadratic + loss, scaled)
        lower_bound = -float(linear @ alpha) - core.conjugate(g, kind, lam, q, prior)
        relative = relative_gap(upper_bound, lower_bound)
        if best is None or relative < best[5]:
            best = (upper_bound - lower_bound, d.copy(), alpha.copy(), bias, lower_bound,
                    relative)
        record = HistoryRecord({
            "iteration": check,
            "objective": best[4],
            "relative_duality_gap": best[5],  # the returned point's: the best so far
            "inner_tol": kkt_tol,
            "n_steps": n_steps,
            "n_live": int(np.count_nonzero(d)),
            "n_svm_solves": 0,
            "cache_misses": rows.cache.misses,
            "cache_bytes": rows.cache.nbytes,
            "time": time.perf_counter() - start,
        })
        history.append(record)
        if callback is not None:
            callback(record)
        if best[5] <= tol:
            converged = True
            break
        if solved:
            if kkt_tol <= KKT_TOL_FLOOR:
                break
            kkt_tol = max(KKT_TOL_FLOOR, kkt_tol / 10.0)
    gap, d_best, alpha_best, bias, objective, relative = best
    return MKLResult(
        kernel_weights=d_best,
        alpha=alpha_best,
        intercept=bias,
        objective=objective,
        duality_gap=max(gap, 0.0),
        relative_duality_gap=relative,
        n_iter=len(history),
        n_smo_steps=n_steps,
        n_svm_solves=0,
        converged=converged,
        history=history,
        stop_reason="converged" if converged else ("max_iter" if check == max_iter - 1
                                                   else "stalled"),
    )

