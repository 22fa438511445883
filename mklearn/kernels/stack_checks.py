"""Checks of precomputed kernel stacks (training and test), with errors that name the problem
and the fix: shape, finite values, symmetry and positive semi-definiteness, of each kernel and
of the kernel a solver learned."""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.linalg.lapack import dpotrf
from scipy.sparse.linalg import ArpackNoConvergence, eigsh
from sklearn.utils import assert_all_finite
from sklearn.utils.validation import check_array, check_consistent_length, column_or_1d

from mklearn.kernels.numeric_input import numeric_input
from mklearn.kernels.stack_ops import kernel_major, weighted_sum, weighted_sum_last_axis
from mklearn.kernels.threads import one_blas_thread

_PSD_CHECK_BUDGET = 3e8  # flops spent at most on exact eigenvalue checks of each kernel
_EXACT_EIGEN_N = 300  # up to this n, eigenvalues of a combined kernel are computed exactly
_LANCZOS_VECTORS = 32  # Lanczos basis size (ARPACK's ncv) of the check of larger kernels
_LANCZOS_RESTARTS = 4  # ARPACK restarts: at most ~130 products with the kernel in all
_PSD_TOL = 1e-6  # eigenvalues below -_PSD_TOL * largest make a kernel indefinite
_CHOLESKY_N = 3000  # up to this n, PSD by a Cholesky factorisation of K + tol I (n^3 / 3 flops)
SAFE_KERNEL_RANGE = (1e-100, 1e100)  # largest |diagonal entry| the solvers handle
# largest |diagonal entry| of a float32 stack: its rows are cached and summed in float32
# (pairs K_ii + K_jj - 2 K_ij, K(d) with KL weights above 1); at 3e38 SMO-MKL and MWUMKL
# overflowed, at 1e38 every solver ran: a margin of 3e8 below float32's 3.4e38
_FLOAT32_KERNEL_MAX = 1e30


def _as_stack(X, what, ensure_all_finite=True):
    with numeric_input(what):
        stack = check_array(
            X,
            allow_nd=True,
            ensure_2d=False,
            dtype=(np.float64, np.float32),
            ensure_all_finite=ensure_all_finite,
            input_name=what,
        )
    if stack.ndim == 2:
        stack = stack[:, :, None]
    if stack.ndim != 3:
        raise ValueError(
            f"{what} must have shape (n_samples, n_samples, n_kernels) (or be one 2-D kernel), "
            f"got an array with {stack.ndim} dimensions"
        )
    # read in place when C-contiguous in either layout (an operator makes it kernel-major,
    # one contiguous matrix per kernel, if its solver reads it so); else kernel-major now
    if stack.flags.c_contiguous:
        return stack
    return kernel_major(stack).transpose(1, 2, 0)


def check_kernel_stack(X, y, *, return_sum=False):
    """Validate a training stack of base kernels and the labels.

    One BLAS pass over the stack forms the sum of the kernels, float64 of shape (n, n); NaN or
    inf in any kernel makes it non-finite, and an asymmetric kernel makes it asymmetric (unless
    the antisymmetric parts of several kernels cancel exactly: :func:`check_learned_kernel`
    checks the kernel a solver learned). Only then is every kernel checked entry by entry, to
    name the culprit. The solvers start from uniform weights, so the sum is also their first
    combined kernel (``return_sum``).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_samples, n_kernels) or (n_samples, n_samples)
    y : array-like of shape (n_samples,)
    return_sum : bool
        Also return the sum of the kernels.

    Returns
    -------
    stack : ndarray of shape (n_samples, n_samples, n_kernels)
        ``X`` itself when it is C-contiguous, or the transposed view of a C-contiguous
        ``(n_kernels, n_samples, n_samples)`` array; else such a kernel-major copy.
    y : ndarray of shape (n_samples,)
    kernel_sum : ndarray of shape (n_samples, n_samples), only with ``return_sum``
        Exactly symmetric (its PSD test factorises it in place and rebuilds its upper
        triangle from the lower one).

    Raises
    ------
    ValueError
        If the stack is not square, has NaN/inf, does not match y, or a kernel is not
        symmetric positive semi-definite.
    """
    what = "the precomputed kernel stack"
    stack = _as_stack(X, what, ensure_all_finite=False)  # the kernel sum sees NaN and inf
    n, n2, m = stack.shape
    if n != n2:
        raise ValueError(
            f"a precomputed training stack must be square in its first two axes, got shape "
            f"{stack.shape}; pass K[i, j, k] = k_k(x_i, x_j) for the training points"
        )
    if m == 0:
        raise ValueError(
            f"{what} has no kernels (shape {stack.shape}); pass at least one kernel, "
            "K[:, :, k] for k = 0, 1, ..."
        )
    y = column_or_1d(y, warn=True)
    check_consistent_length(stack, y)
    kernel_sum = _kernel_sum(stack)
    _check_kernels(stack, kernel_sum, what)
    return (stack, y, kernel_sum) if return_sum else (stack, y)


def _kernel_sum(stack):
    """``sum_k K_k``, float64 of shape (n, n), read in the stack's own layout (one pass)."""
    if stack.transpose(2, 0, 1).flags.c_contiguous:
        return weighted_sum(stack.transpose(2, 0, 1), np.ones(stack.shape[2]))
    return weighted_sum_last_axis(stack, np.ones(stack.shape[2]))


def check_learned_kernel(stack_km, weights, learned=None):
    """Check that the learned kernel ``K(d) = sum_k d_k K_k`` is symmetric and PSD.

    :func:`check_kernel_stack` checks the plain sum of the kernels, in which the antisymmetric
    parts of several kernels could cancel; in ``K(d)`` they would not, and an SVM on an
    asymmetric kernel is silently wrong. This closes that gap for the kernels in use.

    Parameters
    ----------
    stack_km : ndarray of shape (n_kernels, n_samples, n_samples)
        The base kernels (``kernel_view`` of the operator: kernel-major, or a strided view of
        an ``(n, n, m)`` stack, which is copied only if a kernel must be checked alone).
    weights : ndarray of shape (n_kernels,)
        Non-negative kernel weights.
    learned : ndarray of shape (n_samples, n_samples), optional
        ``K(d)`` when the caller has it (the solver's last combination); else combined here.
        Factorised in place: it comes back exactly symmetric (its upper triangle rebuilt
        from the lower one).

    Raises
    ------
    ValueError
        If a kernel of non-zero weight is not symmetric, or K(d) has an eigenvalue below
        ``-1e-6`` times its largest (the message gives both).
    """
    active = np.flatnonzero(weights)
    if active.size:
        if learned is None:
            learned = weighted_sum(kernel_major(stack_km.transpose(1, 2, 0)),
                                   np.asarray(weights, dtype=np.float64))
        _check_symmetry(stack_km, learned, active, _diagonal_scale(stack_km, active))
        # symmetric to rounding, checked just above; ours (the solver's K(d), or made here)
        psd, low, high = _is_psd(learned, overwrite=True)
        if not psd:
            raise ValueError(
                f"the learned kernel K(d) = sum_k d_k K_k is not positive semi-definite "
                f"(smallest eigenvalue {low:.3g}, largest {high:.3g}): kernels "
                f"{active.tolist()} have non-zero weight; use valid kernels or add a small "
                "ridge to their diagonals"
            )


_SYMMETRY_BLOCK = 64  # square blocks read together by the symmetry check (both in cache)


@njit(cache=True)
def _max_asymmetry(stack_km, kernels):
    """For each kernel in ``kernels``: max |K_ij - K_ji| over the upper triangle, in square
    blocks (a block and its mirror image are read together, so the column reads stay in
    cache)."""
    n = stack_km.shape[1]
    asym = np.zeros(kernels.shape[0])
    for t in range(kernels.shape[0]):
        K = stack_km[kernels[t]]
        worst = 0.0
        for i0 in range(0, n, _SYMMETRY_BLOCK):
            for j0 in range(i0, n, _SYMMETRY_BLOCK):
                for i in range(i0, min(i0 + _SYMMETRY_BLOCK, n)):
                    for j in range(max(j0, i + 1), min(j0 + _SYMMETRY_BLOCK, n)):
                        worst = max(worst, abs(K[i, j] - K[j, i]))
        asym[t] = worst
    return asym


def _diagonals(stack_km):
    """The diagonals of the kernels, a strided view of shape (m, n) (no copy)."""
    return np.diagonal(stack_km, axis1=1, axis2=2)


def _diagonal_scale(stack_km, kernels):
    return max(float(np.max(np.abs(_diagonals(stack_km)[kernels]))), 1e-300)


def _check_symmetry(stack_km, combined, kernels, scale):
    """Entry-by-entry check of ``kernels`` if the combination of them is not symmetric.

    A kernel fails when ``max |K - K'| > 1e-8 * scale`` (scale: the largest diagonal entry of
    the kernels checked). The combination only decides whether to look: a tenth of that,
    well above the rounding of a sum of even a million kernels.
    """
    if _max_asymmetry(combined[None], np.zeros(1, dtype=np.int64))[0] <= 1e-9 * scale:
        return
    asym = _max_asymmetry(kernel_major(stack_km.transpose(1, 2, 0)), kernels)
    bad = np.flatnonzero(asym > 1e-8 * scale)
    if bad.size:
        raise ValueError(
            f"precomputed kernel {kernels[bad[0]]} is not symmetric (max |K - K'| = "
            f"{asym[bad[0]]:.3g}); kernels must be symmetric positive semi-definite: "
            "symmetrise with (K + K.T) / 2"
        )


def _check_kernels(stack, kernel_sum, what):
    n, _, m = stack.shape
    stack_km = stack.transpose(2, 0, 1)
    if not np.isfinite(kernel_sum).all():
        assert_all_finite(stack_km, input_name=what)  # names NaN or inf
        raise ValueError(
            f"{what} overflows when its kernels are summed (entries near the largest float); "
            "rescale the kernels, for example to unit trace"
        )
    diagonals = _diagonals(stack_km)
    scale = max(float(np.max(np.abs(diagonals))), 1e-300)
    if np.any(diagonals) and not SAFE_KERNEL_RANGE[0] <= scale <= SAFE_KERNEL_RANGE[1]:
        raise ValueError(
            f"{what} has diagonal entries up to {scale:.3g}, outside the range "
            f"[{SAFE_KERNEL_RANGE[0]:g}, {SAFE_KERNEL_RANGE[1]:g}] the solvers handle "
            "without overflow or underflow; rescale the kernels, for example to unit trace "
            "(K_k / trace(K_k))"
        )
    if stack.dtype == np.float32 and scale > _FLOAT32_KERNEL_MAX:
        raise ValueError(
            f"{what} is float32 with diagonal entries up to {scale:.3g}, above the "
            f"{_FLOAT32_KERNEL_MAX:g} that the solvers' float32 sums of its values "
            f"(K_ii + K_jj - 2 K_ij, weighted kernels) take without overflowing float32's "
            f"largest value {np.finfo(np.float32).max:.3g}; rescale the kernels, for example "
            "to unit trace (K_k / trace(K_k)), or pass the stack as float64 "
            "(stack.astype(np.float64))"
        )
    _check_symmetry(stack_km, kernel_sum, np.arange(m), scale)
    negative = np.flatnonzero(diagonals.min(axis=1) < -1e-8 * scale)
    if negative.size:
        raise ValueError(
            f"precomputed kernel {negative[0]} has a negative diagonal entry, so it is not "
            "positive semi-definite; check how it was computed"
        )
    exact = m * n**3 <= _PSD_CHECK_BUDGET  # small: every kernel exactly, naming the culprit
    psd, low, high = (True, 0.0, 0.0) if exact else _is_psd(kernel_sum, overwrite=True)
    if exact or not psd:
        for k in range(m):
            psd_k, low_k, high_k = _is_psd(stack_km[k].astype(np.float64), overwrite=True)
            if not psd_k:
                raise ValueError(
                    f"precomputed kernel {k} is not positive semi-definite (smallest eigenvalue "
                    f"{low_k:.3g}, largest {high_k:.3g}); use a valid kernel or add a small "
                    "ridge to its diagonal"
                )
    if not psd:  # each kernel alone looked fine to Lanczos, their sum does not
        raise ValueError(
            f"the sum of the precomputed kernels is not positive semi-definite (smallest "
            f"eigenvalue {low:.3g}, largest {high:.3g}); use valid kernels or add a small "
            "ridge to their diagonals"
        )


def _is_psd(K, overwrite=False):
    """(psd, smallest, largest eigenvalue estimate) of the symmetric matrix K; ``overwrite``:
    K is the caller's own, factorised in place and returned symmetric (:func:`_factorises`).

    Exact (LAPACK) up to n = ``_EXACT_EIGEN_N``. Above, up to n = ``_CHOLESKY_N``, a Cholesky
    factorisation of ``K + tol I``, ``tol = _PSD_TOL * largest``: it exists exactly when
    every eigenvalue is above ``-tol`` (Cholesky is backward stable), at ``n^3 / 3`` flops
    (measured, n = 1,000: 20 ms, where Lanczos on the smallest eigenvalue, which does not
    converge on a cluster near zero, took 1.5 s). It is tried first with a lower bound of the
    largest eigenvalue (the largest diagonal entry, or the Rayleigh quotient of the ones
    vector: no Lanczos), which can only make the test stricter; if that fails, the largest
    eigenvalue by a few Lanczos iterations (ARPACK via :func:`scipy.sparse.linalg.eigsh`; the
    top of a kernel's spectrum is well separated) and the factorisation again. Beyond
    ``_CHOLESKY_N``, or to report an eigenvalue of an indefinite K, a few restarted Lanczos
    iterations on the smallest: an isolated negative eigenvalue converges within that budget;
    if the smallest Ritz value has not converged, the bottom of the spectrum is a cluster near
    zero (rounding), reported PSD. The largest eigenvalue returned for a PSD K may be the
    lower bound.
    """
    n = K.shape[0]
    if n <= _EXACT_EIGEN_N:
        w = np.linalg.eigvalsh(K)
        low, high = float(w[0]), float(w[-1])
        return low >= -_PSD_TOL * max(high, 1e-300), low, high
    if n <= _CHOLESKY_N:
        bound = max(float(np.max(np.diagonal(K))), float(np.sum(K, dtype=np.float64)) / n)
        strict = _PSD_TOL * max(bound, 1e-300)
        if _factorises(K, strict, overwrite):
            return True, -strict, bound
    ncv = min(n - 1, _LANCZOS_VECTORS)
    v0 = np.ones(n) / np.sqrt(n)  # deterministic start
    high = float(eigsh(K, k=1, which="LA", tol=1e-3, ncv=ncv, v0=v0,
                       return_eigenvectors=False)[0])
    shift = _PSD_TOL * max(high, 1e-300)
    factorised = None
    if n <= _CHOLESKY_N:
        if _factorises(K, shift, overwrite):
            return True, -shift, high  # every eigenvalue above -shift
        factorised = False  # indefinite: find the eigenvalue for the message
    try:
        low = float(eigsh(K, k=1, which="SA", tol=1e-3, ncv=ncv, v0=v0,
                          maxiter=_LANCZOS_RESTARTS, return_eigenvectors=False)[0])
    except ArpackNoConvergence as exc:
        found = np.asarray(exc.eigenvalues, dtype=float)
        low = float(found.min()) if found.size else 0.0
    if factorised is False:  # Cholesky proved an eigenvalue below -shift
        return False, min(low, -shift), high
    return low >= -shift, low, high


def _factorises(K, shift, overwrite=False):
    """Whether ``K + shift I`` (symmetric) has a Cholesky factorisation (LAPACK ``potrf``).

    By default on one copy of K (K' is K, and its copy in Fortran order a plain one). With
    ``overwrite`` (K the caller's own, C-contiguous float64) on K itself, with no ``n x n``
    copy: ``potrf`` reads and writes the upper triangle of K only (the lower of K' in
    Fortran order), which :func:`_mirror_lower` then rebuilds from the untouched lower one
    and the kept diagonal. K comes back exactly symmetric (it was, to the symmetry check's
    1e-8 of its diagonal). A fit in a fresh process spends more on the pages of a new
    8 MB copy than on copying it (n = 1,000: 5-17 ms against 2 ms).
    """
    n = K.shape[0]
    in_place = (overwrite and K.dtype == np.float64 and K.flags.c_contiguous
                and K.flags.writeable)
    if not in_place:
        shifted = np.array(K.T, dtype=np.float64, order="F")
        shifted[np.diag_indices(n)] += shift
        return _potrf_succeeds(shifted)
    diagonal = np.diagonal(K).copy()
    K[np.diag_indices(n)] += shift
    try:
        return _potrf_succeeds(K.T)
    finally:
        _mirror_lower(K, diagonal)


@one_blas_thread
def _potrf_succeeds(A):
    """Whether LAPACK's ``potrf`` factorises ``A`` (Fortran order, overwritten), on one BLAS
    thread: on two cores shared with other work, two threads took 0.1-2.3 s at n = 3,000 and
    0.2-1.4 s at n = 1,000, one thread 0.17 s and 0.02 s."""
    _, info = dpotrf(A, lower=1, clean=0, overwrite_a=1)
    return info == 0


@njit(cache=True)
def _mirror_lower(K, diagonal):
    """``K[i, j] = K[j, i]`` above the diagonal and ``K[i, i] = diagonal[i]``, in square
    blocks (a block and its mirror image read together, as :func:`_max_asymmetry`)."""
    n = K.shape[0]
    for i0 in range(0, n, _SYMMETRY_BLOCK):
        for j0 in range(i0, n, _SYMMETRY_BLOCK):
            for i in range(i0, min(i0 + _SYMMETRY_BLOCK, n)):
                for j in range(max(j0, i + 1), min(j0 + _SYMMETRY_BLOCK, n)):
                    K[i, j] = K[j, i]
        for i in range(i0, min(i0 + _SYMMETRY_BLOCK, n)):
            K[i, i] = diagonal[i]


def check_test_stack(X, n_train, n_kernels):
    """Validate a test-versus-training stack of shape (n_test, n_train, n_kernels)."""
    stack = _as_stack(X, "the precomputed test kernel stack")
    if stack.shape[1] != n_train or stack.shape[2] != n_kernels:
        raise ValueError(
            f"the precomputed test stack must have shape (n_test, {n_train}, {n_kernels}) "
            f"(n_train and n_kernels as in fit), got {stack.shape}"
        )
    largest = float(np.max(np.abs(stack))) if stack.size else 0.0
    if largest > SAFE_KERNEL_RANGE[1]:
        raise ValueError(
            f"the precomputed test stack has entries up to {largest:.3g}, above the "
            f"{SAFE_KERNEL_RANGE[1]:g} the predictions handle without overflow; compute it "
            "with the kernels (and scaling) of the training stack"
        )
    return stack
