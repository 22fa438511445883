"""Checks of precomputed kernel stacks, with errors that name the problem and the fix."""

from __future__ import annotations

import numpy as np
from numba import njit
from sklearn.utils.validation import check_array, check_consistent_length, column_or_1d

_PSD_CHECK_BUDGET = 3e8  # flops spent at most on exact eigenvalue checks


def _as_stack(X, what):
    stack = check_array(
        X, allow_nd=True, ensure_2d=False, dtype=(np.float64, np.float32), input_name=what
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


def check_kernel_stack(X, y):
    """Validate a training stack of base kernels and the labels.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_samples, n_kernels) or (n_samples, n_samples)
    y : array-like of shape (n_samples,)

    Returns
    -------
    stack : ndarray of shape (n_samples, n_samples, n_kernels), C-contiguous
    y : ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        If the stack is not square, has NaN/inf, does not match y, or a kernel is not
        symmetric positive semi-definite.
    """
    stack = _as_stack(X, "the precomputed kernel stack")
    n, n2, m = stack.shape
    if n != n2:
        raise ValueError(
            f"a precomputed training stack must be square in its first two axes, got shape "
            f"{stack.shape}; pass K[i, j, k] = k_k(x_i, x_j) for the training points"
        )
    y = column_or_1d(y, warn=True)
    check_consistent_length(stack, y)
    _check_psd(stack)
    return stack, y


@njit(cache=True)
def _asymmetry_and_min_diagonal(stack_km):
    """Per kernel: max |K_ij - K_ji| and min K_ii, in one pass over the upper triangle."""
    m, n = stack_km.shape[0], stack_km.shape[1]
    asym = np.zeros(m)
    min_diag = np.empty(m)
    for k in range(m):
        K = stack_km[k]
        worst = 0.0
        low = K[0, 0]
        for i in range(n):
            low = min(low, K[i, i])
            for j in range(i + 1, n):
                worst = max(worst, abs(K[i, j] - K[j, i]))
        asym[k] = worst
        min_diag[k] = low
    return asym, min_diag


def _check_psd(stack):
    n, _, m = stack.shape
    stack_km = stack.transpose(2, 0, 1)
    scale = max(float(np.max(np.abs(stack_km.reshape(m, -1)[:, :: n + 1]))), 1e-300)
    asym, min_diag = _asymmetry_and_min_diagonal(stack_km)
    bad = np.flatnonzero(asym > 1e-8 * scale)
    if bad.size:
        raise ValueError(
            f"precomputed kernel {bad[0]} is not symmetric (max |K - K'| = {asym[bad[0]]:.3g}); "
            "kernels must be symmetric positive semi-definite: symmetrise with (K + K.T) / 2"
        )
    negative = np.flatnonzero(min_diag < -1e-8 * scale)
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
