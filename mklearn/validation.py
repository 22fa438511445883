"""Checks of precomputed kernel stacks, with errors that name the problem and the fix."""

from __future__ import annotations

import numpy as np
from numba import njit
from sklearn.utils import assert_all_finite
from sklearn.utils.validation import check_array, check_consistent_length, column_or_1d

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
    what = "the precomputed kernel stack"
    stack = _as_stack(X, what, ensure_all_finite=False)  # the symmetry probe sees NaN and inf
    n, n2, m = stack.shape
    if n != n2:
        raise ValueError(
            f"a precomputed training stack must be square in its first two axes, got shape "
            f"{stack.shape}; pass K[i, j, k] = k_k(x_i, x_j) for the training points"
        )
    y = column_or_1d(y, warn=True)
    check_consistent_length(stack, y)
    _check_psd(stack, what)
    return stack, y


@njit(cache=True)
def _max_asymmetry(stack_km):
    """Per kernel: max |K_ij - K_ji| over the upper triangle."""
    m, n = stack_km.shape[0], stack_km.shape[1]
    asym = np.zeros(m)
    for k in range(m):
        K = stack_km[k]
        worst = 0.0
        for i in range(n):
            for j in range(i + 1, n):
                worst = max(worst, abs(K[i, j] - K[j, i]))
        asym[k] = worst
    return asym


@njit(cache=True, fastmath={"reassoc", "contract"})  # vectorised, NaN and inf kept
def _probe_asymmetry(stack_km, x, u):
    """Per kernel ``x'K u - u'K x = x'(K - K')u``, reading each kernel once, row by row."""
    m, n = stack_km.shape[0], stack_km.shape[1]
    out = np.empty(m)
    for k in range(m):
        K = stack_km[k]
        total = 0.0
        for i in range(n):
            a = 0.0
            b = 0.0
            for j in range(n):
                a += K[i, j] * u[j]
                b += K[i, j] * x[j]
            total += x[i] * a - u[i] * b
        out[k] = total
    return out


def _asymmetry_suspects(stack_km, scale, what):
    """Kernels that may be asymmetric, in one pass: ``x'(K - K')u`` for random x and u is zero
    up to rounding for a symmetric K and almost surely not otherwise. The suspects (a superset,
    given the rounding allowance) are then checked entry by entry. NaN or inf anywhere in a
    kernel makes its probe non-finite: then the error names them."""
    x, u = np.random.default_rng(0).standard_normal((2, stack_km.shape[1]))
    values = _probe_asymmetry(stack_km, x, u)
    if not np.isfinite(values).all():
        assert_all_finite(stack_km, input_name=what)
    rounding = 10 * np.finfo(stack_km.dtype).eps * scale * float(np.abs(x).sum() * np.abs(u).sum())
    return np.flatnonzero(np.abs(values) > rounding)


def _check_psd(stack, what):
    n, _, m = stack.shape
    stack_km = stack.transpose(2, 0, 1)
    diagonals = stack_km.reshape(m, -1)[:, :: n + 1]
    scale = max(float(np.max(np.abs(diagonals))), 1e-300)
    suspects = _asymmetry_suspects(stack_km, scale, what)
    asym = _max_asymmetry(stack_km[suspects])
    bad = suspects[asym > 1e-8 * scale]
    if bad.size:
        worst = float(asym[asym > 1e-8 * scale][0])
        raise ValueError(
            f"precomputed kernel {bad[0]} is not symmetric (max |K - K'| = {worst:.3g}); "
            "kernels must be symmetric positive semi-definite: symmetrise with (K + K.T) / 2"
        )
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
