"""Checks of precomputed kernel stacks, with errors that name the problem and the fix."""

from __future__ import annotations

import numpy as np
from numba import njit
from sklearn.utils import assert_all_finite
from sklearn.utils.validation import check_array, check_consistent_length, column_or_1d

from mklearn.combinations import SumOfKernels

_PSD_CHECK_BUDGET = 3e8  # flops spent at most on exact eigenvalue checks


def _as_stack(X, what, ensure_all_finite=True):
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
    # kernel-major memory (one contiguous matrix per kernel), as the solvers read it
    return np.ascontiguousarray(stack.transpose(2, 0, 1)).transpose(1, 2, 0)


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
    stack : ndarray of shape (n_samples, n_samples, n_kernels), C-contiguous
    y : ndarray of shape (n_samples,)
    kernel_sum : ndarray of shape (n_samples, n_samples), only with ``return_sum``

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
    y = column_or_1d(y, warn=True)
    check_consistent_length(stack, y)
    kernel_sum = SumOfKernels(stack).kernel(np.ones(m))
    _check_kernels(stack, kernel_sum, what)
    return (stack, y, kernel_sum) if return_sum else (stack, y)


def check_learned_kernel(stack_km, weights):
    """Check that the learned kernel ``K(d) = sum_k d_k K_k`` is symmetric.

    :func:`check_kernel_stack` checks the plain sum of the kernels, in which the antisymmetric
    parts of several kernels could cancel; in ``K(d)`` they would not, and an SVM on an
    asymmetric kernel is silently wrong. This closes that gap for the kernels in use.

    Parameters
    ----------
    stack_km : ndarray of shape (n_kernels, n_samples, n_samples)
        The base kernels, kernel-major (``SumOfKernels.kernel_major``).
    weights : ndarray of shape (n_kernels,)
        Non-negative kernel weights.

    Raises
    ------
    ValueError
        If a kernel of non-zero weight is not symmetric.
    """
    active = np.flatnonzero(weights)
    if active.size:
        learned = SumOfKernels(stack_km.transpose(1, 2, 0)).kernel(weights)
        _check_symmetry(stack_km, learned, active, _diagonal_scale(stack_km, active))


@njit(cache=True)
def _max_asymmetry(stack_km, kernels):
    """For each kernel in ``kernels``: max |K_ij - K_ji| over the upper triangle."""
    n = stack_km.shape[1]
    asym = np.zeros(kernels.shape[0])
    for t in range(kernels.shape[0]):
        K = stack_km[kernels[t]]
        worst = 0.0
        for i in range(n):
            for j in range(i + 1, n):
                worst = max(worst, abs(K[i, j] - K[j, i]))
        asym[t] = worst
    return asym


def _diagonals(stack_km):
    """The diagonals of the kernels, a strided view of shape (m, n) (no copy)."""
    m, n = stack_km.shape[0], stack_km.shape[1]
    return stack_km.reshape(m, -1)[:, :: n + 1]


def _diagonal_scale(stack_km, kernels):
    return max(float(np.max(np.abs(_diagonals(stack_km)[kernels]))), 1e-300)


def _check_symmetry(stack_km, combined, kernels, scale):
    """Entry-by-entry check of ``kernels`` if the combination of them is not symmetric.

    A kernel fails when ``max |K - K'| > 1e-8 * scale`` (scale: the largest diagonal entry of
    the kernels checked). The combination only decides whether to look: a tenth of that,
    well above the rounding of a sum of even a million kernels.
    """
    if np.max(np.abs(combined - combined.T)) <= 1e-9 * scale:
        return
    asym = _max_asymmetry(stack_km, kernels)
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
    _check_symmetry(stack_km, kernel_sum, np.arange(m), scale)
    negative = np.flatnonzero(diagonals.min(axis=1) < -1e-8 * scale)
    if negative.size:
        raise ValueError(
            f"precomputed kernel {negative[0]} has a negative diagonal entry, so it is not "
            "positive semi-definite; check how it was computed"
        )
    if m * n**3 <= _PSD_CHECK_BUDGET:
        for k in range(m):
            w = np.linalg.eigvalsh(stack_km[k].astype(np.float64))
            if w[0] < -1e-6 * max(w[-1], 1e-300):
                raise ValueError(
                    f"precomputed kernel {k} is not positive semi-definite (smallest eigenvalue "
                    f"{w[0]:.3g}, largest {w[-1]:.3g}); use a valid kernel or add a small ridge "
                    "to its diagonal"
                )


def check_test_stack(X, n_train, n_kernels):
    """Validate a test-versus-training stack of shape (n_test, n_train, n_kernels)."""
    stack = _as_stack(X, "the precomputed test kernel stack")
    if stack.shape[1] != n_train or stack.shape[2] != n_kernels:
        raise ValueError(
            f"the precomputed test stack must have shape (n_test, {n_train}, {n_kernels}) "
            f"(n_train and n_kernels as in fit), got {stack.shape}"
        )
    return stack
