"""One-shot kernel weights, then one SVM: uniform, alignment-based and heuristic learners.

Each learner computes the weights ``d`` once from the kernels and the targets, normalises
them to ``sum(d) = 1`` and solves the SVM on ``K(d)`` with the estimator's C
(:func:`mklearn.solvers.fixed_weights.fixed_weight_svm`). No MKL regulariser enters: the
estimators' ``regularizer`` (and ``p``, ``lam``) are accepted and ignored.

- "average": ``d_k = 1/m``; MKLpy's AverageMKL (the same ``1/m`` weights and kernel
  ``sum_k K_k / m``).
- "align": each kernel's centred alignment with ``y y'`` (Cortes, Mohri and Rostamizadeh,
  JMLR 13, 2012, Definition 2: ``rho(K, L) = <K^c, L^c>_F / (||K^c||_F ||L^c||_F)``),
  ``d_k ∝ max(rho(K_k, y y'), 0)``: their "align" method.
- "alignf": ALIGNF (same paper, Proposition 9): ``v* = argmin_{v >= 0} v'Mv - 2 v'a`` with
  ``M_kl = <K_k^c, K_l^c>_F`` and ``a_k = <K_k^c, y y'>_F``, ``d = v* / sum(v*)`` (the
  paper normalises ``v*`` to unit Euclidean norm; the direction is the same). Solved
  exactly as the non-negative least squares ``min_{v >= 0} ||R v - b||`` with
  ``M = R'R`` (eigen-factor over the positive eigenvalues) and ``R'b = a``
  (:func:`scipy.optimize.nnls`, Lawson and Hanson's active set).
- "fheuristic": MKLpy 0.6's FHeuristic (Qiu and Lane, IEEE/ACM TCBB 6(2), 2009): the
  uncentred alignment ``A(K_k, y y') = y'K_k y / (||K_k||_F ||y y'||_F)``, ``d_k ∝ A_k``.
- "pwmk": MKLpy 0.6's PWMK (Tanabe, Ho, Nguyen and Kawasaki, IEEE RIVF 2008): ``acc_k``,
  the ``cv``-fold cross-validated accuracy (stratified folds in order, as scikit-learn's
  ``cross_val_score(cv=3)``) of the SVM on ``K_k`` alone, and
  ``d_k ∝ acc_k - delta min_h acc_h``. MKLpy uses ``SVC(C=1000)``; here the estimator's C.
  Classification only.

For regression the targets are real: ``y y'`` is built from them (the alignment of the
paper's regression experiments; MKLpy has no regression).

The n^2-entry sums stream the kernels' rows in blocks (:mod:`mklearn.solvers.kernel_sums`);
with ``estimate="subsample"`` (the default above ``subsample_size`` points) they are taken on
a uniform random subset of ``subsample_size`` points (all pairs among them), a warning says
so. Measured weight error of that estimate: docs/seed_solvers.md.

Not PSD kernels make the SVM non-convex (and ALIGNF's M is a Gram matrix only for real
feature maps): a negative diagonal entry, or a negative eigenvalue (beyond rounding) of any
kernel on a random subset of ``PSD_CHECK_POINTS`` points, or of M, raises ValueError.
"average" tests the one kernel its SVM reads, the average, in the same way (the kernels
alone only to name one in the message).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from scipy.optimize import nnls
from sklearn.utils import check_random_state

from mklearn._sizes import MB
from mklearn.kernels.base import prepare
from mklearn.kernels.columns import StackColumns
from mklearn.kernels.threads import one_blas_thread
from mklearn.solvers._renamed import former_operator_name
from mklearn.solvers.fixed_weights import classification_task, fixed_weight_svm
from mklearn.solvers.kernel_sums import kernel_sums

PSD_CHECK_POINTS = 200  # points of the principal submatrices whose eigenvalues are checked
PSD_GROUP_BYTES = 4 * MB  # submatrices factorised at once (small temporaries: no new pages)
PSD_RTOL = 1e-6  # eigenvalue below -PSD_RTOL * trace: not PSD (float32 rounds at 6e-8)
SUBSAMPLE_SIZE = 5000  # default points of the estimate; exact up to this many points
SUMS_BLOCK_MB = 64.0  # most MB of rows a block of the sums holds (larger blocks gain no speed)


@former_operator_name('provider')
def average_mkl(operator, y, C, regularizer=None, *, tol=1e-3, max_iter=None, callback=None,
                cache_size=200.0, task=None):
    """Uniform weights ``d_k = 1/m``, then the SVM on ``K(d)`` (MKLpy's AverageMKL).

    Parameters
    ----------
    operator : KernelOperator
        The base kernels (a column provider, or a stack).
    y : ndarray of shape (n,)
        Labels in {-1, +1} (unused when ``task`` is given).
    C : float or ndarray of shape (n,)
        SVM costs (unused when ``task`` is given).
    regularizer : ignored
        No regulariser enters the weights.
    tol : float
        Relative duality gap of the SVM.
    max_iter : int, optional
        Gap checks of the SVM at the most (its outer iterations; see
        :func:`~mklearn.solvers.fixed_weights.fixed_weight_svm`). None: until the tightest
        KKT tolerance.
    callback : callable, optional
        Called with the history record of each gap check.
    cache_size : float
        MB of combined rows (rows computed on demand).
    task : RegressionTask, optional
        Another SVM (:mod:`mklearn.solvers.tasks`) than C-SVC on ``y`` and ``C``.

    Returns
    -------
    MKLResult
        See :func:`~mklearn.solvers.fixed_weights.fixed_weight_svm`.

    Raises
    ------
    ValueError
        A kernel average that is not PSD (:func:`check_combined_psd`: the SVM reads that
        kernel only), naming a kernel that is not PSD when there is one.
    """
    start = time.perf_counter()
    prepare(operator, "average")
    task = classification_task(y, C) if task is None else task
    d = np.full(operator.n_kernels, 1.0 / operator.n_kernels)
    check_combined_psd(operator, d)
    return fixed_weight_svm(operator, task, d, tol=tol, max_iter=max_iter,
                            cache_size=cache_size, callback=callback, start=start)


@former_operator_name('provider')
def align_mkl(operator, y, C, regularizer=None, *, tol=1e-3, max_iter=None, callback=None,
              cache_size=200.0, task=None, estimate="auto", subsample_size=SUBSAMPLE_SIZE,
              random_state=0):
    """Weights proportional to each kernel's centred alignment with ``y y'`` (module notes).

    Parameters
    ----------
    provider, y, C, regularizer, tol, max_iter, callback, cache_size, task
        As in :func:`average_mkl`; for regression ``y y'`` uses the task's real targets.
    estimate : {"auto", "exact", "subsample"}
        The n^2-entry sums over all points, or over a random subset of ``subsample_size``
        points; "auto": exact up to ``subsample_size`` points.
    subsample_size : int >= 2
        Points of the estimate.
    random_state : int, RandomState or None
        Draws the subset and the points of the PSD check.

    Returns
    -------
    MKLResult
        Its history records have ``estimate`` ("exact" or "subsample") and ``weight_time``.

    Raises
    ------
    ValueError
        Not PSD kernels; no kernel positively aligned with y (constant y, constant or
        all-zero kernels).
    """
    return _aligned(operator, y, C, task, "align", tol=tol, max_iter=max_iter,
                    callback=callback, cache_size=cache_size, estimate=estimate,
                    subsample_size=subsample_size, random_state=random_state)


@former_operator_name('provider')
def alignf_mkl(operator, y, C, regularizer=None, *, tol=1e-3, max_iter=None, callback=None,
               cache_size=200.0, task=None, estimate="auto", subsample_size=SUBSAMPLE_SIZE,
               random_state=0):
    """ALIGNF: the non-negative combination of maximal centred alignment (module notes).

    Parameters and Returns as :func:`align_mkl`. The m^2 Frobenius products cost
    ``O(m^2 n^2)`` flops (BLAS) beyond computing the kernels.

    Raises
    ------
    ValueError
        As :func:`align_mkl`; also if M has a negative eigenvalue beyond rounding.
    """
    return _aligned(operator, y, C, task, "alignf", tol=tol, max_iter=max_iter,
                    callback=callback, cache_size=cache_size, estimate=estimate,
                    subsample_size=subsample_size, random_state=random_state)


@former_operator_name('provider')
def fheuristic_mkl(operator, y, C, regularizer=None, *, tol=1e-3, max_iter=None,
                   callback=None, cache_size=200.0, task=None, estimate="auto",
                   subsample_size=SUBSAMPLE_SIZE, random_state=0):
    """FHeuristic: weights proportional to the uncentred alignments with ``y y'``.

    Parameters, Returns and Raises as :func:`align_mkl`.
    """
    return _aligned(operator, y, C, task, "fheuristic", tol=tol, max_iter=max_iter,
                    callback=callback, cache_size=cache_size, estimate=estimate,
                    subsample_size=subsample_size, random_state=random_state)


@former_operator_name('provider')
def pwmk_mkl(operator, y, C, regularizer=None, *, tol=1e-3, max_iter=None, callback=None,
             cache_size=200.0, task=None, cv=3, delta=0.0, random_state=0):
    """PWMK: weights from each kernel's cross-validated accuracy (module notes).

    Parameters
    ----------
    provider, y, C, regularizer, tol, max_iter, callback, cache_size
        As in :func:`average_mkl`.
    task : None
        Classification only (a task raises ValueError).
    cv : int >= 2
        Folds of the cross-validation (MKLpy's default 3).
    delta : float in [0, 1]
        Share of the smallest accuracy subtracted from every accuracy (MKLpy's default 0).
    random_state : int, RandomState or None
        Draws the points of the PSD check.

    Returns
    -------
    MKLResult
        Its history records have the accuracies (``accuracies``); ``n_svm_solves`` counts the
        ``cv m`` SVMs of the cross-validation and the final one.

    Raises
    ------
    ValueError
        A regression task; a class with fewer than ``cv`` points; not PSD kernels; all
        weights zero (every accuracy equal with ``delta = 1``).
    """
    start = time.perf_counter()
    prepare(operator, "pwmk")
    if task is not None:
        raise ValueError("solver 'pwmk' weighs kernels by classification accuracy: it has no "
                         "regression; use 'align', 'alignf', 'fheuristic' or 'average'")
    task = classification_task(y, C)
    counts = [int(np.sum(task.y == s)) for s in (1.0, -1.0)]
    if min(counts) < cv:
        raise ValueError(
            f"solver 'pwmk' runs {cv}-fold cross-validation, which needs at least {cv} points "
            f"of each class; y has {counts[0]} of the target class and {counts[1]} of the "
            "others: lower solver_options['cv'] or add points")
    check_psd(operator, random_state)
    accuracy = _cv_accuracies(operator, task, cv, tol, cache_size)
    scores = accuracy - delta * accuracy.min()
    d = _normalised(np.maximum(scores, 0.0), "pwmk", "every cross-validated accuracy is 0 "
                    "after subtracting delta times the smallest")
    n_solves = 1 + cv * operator.n_kernels
    result = fixed_weight_svm(operator, task, d, tol=tol, max_iter=max_iter,
                              cache_size=cache_size, callback=callback, start=start,
                              record={"accuracies": accuracy.tolist(), "n_svm_solves": n_solves,
                                      "weight_time": time.perf_counter() - start})
    result.n_svm_solves = n_solves
    return result


def _cv_accuracies(operator, task, cv, tol, cache_size):
    """Mean accuracy of the SVM on each kernel alone over ``cv`` stratified folds, shape
    (m,). Per fold, groups of kernels of about ``cache_size`` MB: their rows of the test
    points and, when a kernel's training block fits in ``cache_size``, those blocks in one
    call (else that kernel's rows on demand, restricted to the training points)."""
    from sklearn.model_selection import StratifiedKFold  # 0.15 s of import, for PWMK only

    y, cost, m = task.y, task.cost, operator.n_kernels
    correct = np.zeros(m)
    budget = cache_size * MB
    for train, test in StratifiedKFold(cv).split(np.zeros(y.size), y):
        part = operator.point_subset(train)
        fold = classification_task(y[train], cost[train])
        dense = 8.0 * train.size**2 <= budget
        group = max(1, int(budget // (8 * (train.size**2 * dense + test.size * y.size))))
        for lo in range(0, m, group):
            kernels = np.arange(lo, min(m, lo + group))
            cross = operator.rows(test, kernels)[:, :, train]
            blocks = part.rows(np.arange(train.size), kernels) if dense else None
            for t, k in enumerate(kernels):
                if dense:
                    source, d = StackColumns(blocks[t][:, :, None]), np.ones(1)
                else:
                    source, d = part, np.eye(m)[k]
                fit = fixed_weight_svm(source, fold, d, tol=tol, cache_size=cache_size)
                decision = cross[t] @ (fit.alpha * y[train]) + fit.intercept
                correct[k] += np.mean(np.where(decision > 0, 1.0, -1.0) == y[test]) / cv
    return correct


def _aligned(operator, y, C, task, name, *, tol, max_iter, callback, cache_size, estimate,
             subsample_size, random_state):
    """Weights of "align", "alignf" or "fheuristic" from the streamed sums, then the SVM."""
    start = time.perf_counter()
    prepare(operator, name)
    task = classification_task(y, C) if task is None else task
    targets = np.asarray(task.y, dtype=np.float64)
    if np.ptp(targets) == 0:
        raise ValueError(f"solver {name!r} weighs kernels by their alignment with y y', "
                         "which is 0 for constant targets: y is constant")
    rng = check_random_state(random_state)
    check_psd(operator, rng)
    sample, used = _points_used(operator.n_samples, estimate, subsample_size, rng, name)
    part = operator if sample is None else operator.point_subset(sample)
    sums = kernel_sums(part, targets if sample is None else targets[sample],
                       frobenius=name == "alignf", block_mb=min(cache_size, SUMS_BLOCK_MB))
    d = {"align": align_weights, "alignf": alignf_weights,
         "fheuristic": fheuristic_weights}[name](sums)
    return fixed_weight_svm(operator, task, d, tol=tol, max_iter=max_iter,
                            cache_size=cache_size, callback=callback, start=start,
                            record={"estimate": used, "n_points_summed": part.n_samples,
                                    "weight_time": time.perf_counter() - start})


def _points_used(n, estimate, size, rng, name):
    """(sorted random subset or None, "subsample" or "exact"); warns when subsampling."""
    if estimate == "exact" or (estimate == "auto" and n <= size) or size >= n:
        return None, "exact"
    sample = np.sort(rng.choice(n, size=size, replace=False))
    warnings.warn(
        f"solver {name!r}: kernel weights estimated from a random subset of {size} of the "
        f"{n} points ({size}^2 of the {n}^2 pairs); solver_options={{'estimate': 'exact'}} "
        "sums over every pair (O(n^2) time per kernel" +
        (", O(m^2 n^2) for the Frobenius products)" if name == "alignf" else ")"),
        UserWarning, stacklevel=4)
    return sample, "subsample"


def align_weights(sums):
    squares = np.maximum(sums.centred_squares(), 0.0)
    scale = float(np.sum((sums.y - sums.y.mean()) ** 2))
    norms = np.sqrt(squares) * scale
    live = squares > 1e-12 * max(float(squares.max()), 1e-300)
    rho = np.where(live, sums.centred_targets() / np.where(live, norms, 1.0), 0.0)
    return _normalised(np.maximum(rho, 0.0), "align", _NOT_ALIGNED)


def fheuristic_weights(sums):
    norms = np.sqrt(np.maximum(sums.squares, 0.0)) * float(sums.y @ sums.y)
    live = norms > 0
    alignment = np.where(live, sums.yky / np.where(live, norms, 1.0), 0.0)
    return _normalised(np.maximum(alignment, 0.0), "fheuristic", _NOT_ALIGNED)


def alignf_weights(sums):
    """ALIGNF's v* by NNLS on an eigen-factor of M over its positive eigenvalues (``a`` lies
    in the range of M: both are Gram products of the centred kernels)."""
    M, a = sums.centred_products(), sums.centred_targets()
    values, vectors = np.linalg.eigh(M)
    top = max(float(values[-1]), 0.0)
    if top == 0.0:
        raise ValueError("solver 'alignf': every kernel is constant on the training points "
                         "(e.g. all zero), so no kernel is aligned with y")
    if values[0] < -1e-8 * top:
        raise ValueError(
            f"solver 'alignf': M = <K_k^c, K_l^c>_F has the negative eigenvalue "
            f"{values[0]:.3g} (largest {top:.3g}): the kernels are not PSD or overflow; "
            "ALIGNF's QP is convex only for PSD kernels")
    keep = values > 1e-12 * top
    R = np.sqrt(values[keep])[:, None] * vectors[:, keep].T
    b = (vectors[:, keep].T @ a) / np.sqrt(values[keep])
    v, _ = nnls(R, b, maxiter=50 * M.shape[0])
    return _normalised(np.maximum(v, 0.0), "alignf", _NOT_ALIGNED)


_NOT_ALIGNED = ("no kernel is positively aligned with y (constant or all-zero kernels, or "
                "kernels unrelated to y)")


def _normalised(weights, name, why):
    total = float(weights.sum())
    if not total > 0 or not np.isfinite(total):
        raise ValueError(f"solver {name!r} found all kernel weights zero: {why}")
    return weights / total


def check_psd(operator, random_state=0):
    """ValueError naming a kernel that is not PSD: a negative diagonal entry, or a negative
    eigenvalue below ``-PSD_RTOL`` times the trace on a random principal submatrix of
    ``PSD_CHECK_POINTS`` points (PSD kernels have PSD principal submatrices: a cheap test,
    not a proof)."""
    names = operator.kernel_names
    diagonal = np.asarray(operator.diagonal(), dtype=np.float64)
    negative = np.flatnonzero((diagonal < 0).any(axis=1))
    if negative.size:
        k = int(negative[0])
        raise ValueError(f"kernel {names[k]} has a negative diagonal entry "
                         f"({diagonal[k].min():.3g}): it is not PSD, and the SVM on the "
                         "combined kernel is not convex; use PSD kernels")
    points = _psd_points(operator.n_samples, random_state)
    part = operator.point_subset(points)
    group = max(1, int(PSD_GROUP_BYTES // (8 * points.size**2)))
    for lo in range(0, operator.n_kernels, group):
        kernels = np.arange(lo, min(operator.n_kernels, lo + group))
        found = _first_not_psd(part.rows(np.arange(points.size), kernels))
        if found is not None:
            t, low, high = found
            raise ValueError(
                f"kernel {names[kernels[t]]} is not PSD: eigenvalue {low:.3g} "
                f"(largest {high:.3g}) on {points.size} of the training points; the "
                "SVM on the combined kernel is then not convex: use PSD kernels")


def check_combined_psd(operator, d, random_state=0):
    """ValueError if ``K(d) = sum_k d_k K_k``, the one kernel an SVM on fixed weights reads,
    has a negative diagonal entry or fails :func:`check_psd`'s test on its principal
    submatrix (the same points); the message names a kernel that fails that test itself
    when there is one (a cost of ``m`` small factorisations, paid on failure only)."""
    active = np.flatnonzero(d)
    diagonal = d[active] @ np.asarray(operator.diagonal(), dtype=np.float64)[active]
    points = _psd_points(operator.n_samples, random_state)
    block = operator.point_subset(points).combined_block(np.arange(points.size), active,
                                                          d[active])
    found = _first_not_psd(np.asarray(block, dtype=np.float64)[None])
    if found is None and not (diagonal < 0).any():
        return
    check_psd(operator, random_state)
    what = (f"a negative diagonal entry ({diagonal.min():.3g})" if found is None else
            f"eigenvalue {found[1]:.3g} (largest {found[2]:.3g}) on {points.size} of the "
            "training points")
    raise ValueError(
        f"the combined kernel sum_k d_k K_k is not PSD: {what}, though no kernel alone "
        "fails the test; the SVM on it is not convex: use PSD kernels")


def _psd_points(n, random_state):
    """The sorted random points of the PSD tests' principal submatrices."""
    rng = check_random_state(random_state)
    return np.sort(rng.choice(n, size=min(n, PSD_CHECK_POINTS), replace=False))


@one_blas_thread
def _first_not_psd(blocks):
    """``(t, smallest, largest eigenvalue)`` of the first of the symmetrised ``blocks`` (shape
    (g, p, p)) with an eigenvalue below ``-PSD_RTOL`` times its trace, or None: Cholesky
    with that ridge passes the PSD ones; the eigenvalues only name a failure. One BLAS
    thread: small batched factorisations on two threads of a loaded machine took 10-500
    times as long (0.04 s against up to 25 s for 100 blocks of 200)."""
    blocks = 0.5 * (blocks + blocks.transpose(0, 2, 1))
    trace = np.einsum("kii->k", blocks)
    # tiny entries (narrow RBF kernels) make subnormal products that slow LAPACK tenfold;
    # flushing those below 1e-20 of the trace moves no eigenvalue by more than 1e-17 of it
    blocks[np.abs(blocks) < 1e-20 * np.abs(trace).max(initial=0.0)] = 0.0
    ridge = PSD_RTOL * np.maximum(trace, 0.0) + 1e-300
    diagonal = blocks.reshape(blocks.shape[0], -1)[:, :: blocks.shape[1] + 1]
    kept = diagonal.copy()
    diagonal += ridge[:, None]
    try:
        np.linalg.cholesky(blocks)
        return None
    except np.linalg.LinAlgError:
        diagonal[...] = kept
        values = np.linalg.eigvalsh(blocks)
    low = np.flatnonzero(values[:, 0] < -ridge)
    if low.size == 0:
        return None
    t = int(low[0])
    return t, float(values[t, 0]), float(values[t, -1])
