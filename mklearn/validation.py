"""Checks of precomputed kernel stacks, with errors that name the problem and the fix."""

from __future__ import annotations

import numpy as np
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
    return np.ascontiguousarray(stack)


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


def _check_psd(stack):
    n, _, m = stack.shape
    scale = max(float(np.max(np.abs(stack))), 1e-300)
    asym = np.max(np.abs(stack - stack.transpose(1, 0, 2)), axis=(0, 1))
    bad = np.flatnonzero(asym > 1e-8 * scale)
    if bad.size:
        raise ValueError(
            f"precomputed kernel {bad[0]} is not symmetric (max |K - K'| = {asym[bad[0]]:.3g}); "
            "kernels must be symmetric positive semi-definite: symmetrise with (K + K.T) / 2"
        )
    diag = np.einsum("iik->ik", stack)
    if np.any(diag < -1e-8 * scale):
        k = int(np.flatnonzero(np.any(diag < -1e-8 * scale, axis=0))[0])
        raise ValueError(
            f"precomputed kernel {k} has a negative diagonal entry, so it is not "
            "positive semi-definite; check how it was computed"
        )
    if m * n**3 <= _PSD_CHECK_BUDGET:
        for k in range(m):
            w = np.linalg.eigvalsh(stack[:, :, k].astype(np.float64))
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
