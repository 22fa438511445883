"""Checks of precomputed kernel stacks, with errors that name the problem and the fix."""

from __future__ import annotations

import warnings
from collections import Counter
from numbers import Integral, Real

import numpy as np
from numba import njit
from scipy.linalg.lapack import dpotrf
from scipy.sparse.linalg import ArpackNoConvergence, eigsh
from sklearn.utils import assert_all_finite
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    _get_feature_names,
    check_array,
    check_consistent_length,
    column_or_1d,
    validate_data,
)

from mklearn.extending import COMBINATIONS
from mklearn.formulation.combinations import SumOfKernels
from mklearn.kernels import APPROXIMATIONS
from mklearn.kernels.bank import block_bands
from mklearn.kernels.numeric_input import numeric_input
from mklearn.kernels.stack_ops import kernel_major, sum_last_axis
from mklearn.kernels.threads import one_blas_thread

_PSD_CHECK_BUDGET = 3e8  # flops spent at most on exact eigenvalue checks of each kernel
_EXACT_EIGEN_N = 300  # up to this n, eigenvalues of a combined kernel are computed exactly
_LANCZOS_VECTORS = 32  # Lanczos basis size (ARPACK's ncv) of the check of larger kernels
_LANCZOS_RESTARTS = 4  # ARPACK restarts: at most ~130 products with the kernel in all
_PSD_TOL = 1e-6  # eigenvalues below -_PSD_TOL * largest make a kernel indefinite
_CHOLESKY_N = 3000  # up to this n, PSD by a Cholesky factorisation of K + tol I (n^3 / 3 flops)
_SAFE_KERNEL_RANGE = (1e-100, 1e100)  # largest |diagonal entry| the solvers handle
# largest |diagonal entry| of a float32 stack: its rows are cached and summed in float32
# (pairs K_ii + K_jj - 2 K_ij, K(d) with KL weights above 1); at 3e38 SMO-MKL and MWUMKL
# overflowed, at 1e38 every solver ran: a margin of 3e8 below float32's 3.4e38
_FLOAT32_KERNEL_MAX = 1e30


_POSITIVE = Interval(Real, 0, None, closed="neither")
# scikit-learn's constraint of each parameter the estimators share, written once
SHARED_CONSTRAINTS = {
    "kernels": [str, list, tuple, object],
    "kernel_normalization": [StrOptions({"diagonal", "trace"}), None],
    "class_weight": [dict, StrOptions({"balanced"}), None],
    "probability": ["boolean"],
    # joblib's meaning; 0 threads is no meaning (joblib refused it only after the kernels)
    "n_jobs": [Interval(Integral, None, -1, closed="right"),
               Interval(Integral, 1, None, closed="left"), None],
    "p": [Interval(Real, None, None, closed="neither")],
    "lam": [_POSITIVE, StrOptions({"auto"})],
    "C": [_POSITIVE],
    "epsilon": [Interval(Real, 0, None, closed="left")],
    "tol": [_POSITIVE],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "solver_options": [dict, None],
    "kernel_dtype": [StrOptions({"float64", "float32"})],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
    "cache_size": [_POSITIVE, StrOptions({"auto"})],
    "kernel_storage": [StrOptions({"auto", "stack", "rows"})],
    "memory_budget": [_POSITIVE, None],
    "groups": [None, StrOptions({"view", "features"}), "array-like"],
    "combination": [StrOptions(COMBINATIONS.names())],
    "kernel_approximation": [StrOptions({"auto", "exact", *APPROXIMATIONS})],
    "n_components": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
}


def parameter_constraints(*shared: str, **own: list) -> dict:
    """An estimator's ``_parameter_constraints`` (scikit-learn's parameter validation): the
    shared constraint of each name in ``shared`` (:data:`SHARED_CONSTRAINTS`), then its
    own."""
    return {**{name: SHARED_CONSTRAINTS[name] for name in shared}, **own}


class DegenerateModelWarning(UserWarning):
    """A model was fitted, but it cannot tell the training points apart: it gives them all the
    same decision (constant kernels: all-zero kernels, identical rows of X, constant features,
    or regression targets that all fit inside the epsilon tube)."""


def warn_constant_model(estimator, reason):
    """Warn that ``estimator`` predicts one value everywhere, and why."""
    warnings.warn(
        f"{type(estimator).__name__}: {reason}, so every base kernel is constant on the "
        "training data: the model cannot tell the training points apart, learns nothing from "
        "them and gives them all the same decision. Check the data (features that vary) or "
        "the kernels",
        DegenerateModelWarning,
        stacklevel=4,
    )


def warn_degenerate(estimator, message):
    """Warn with ``message`` (why the model is constant, what to change) that ``estimator``
    gives every point the same decision."""
    warnings.warn(f"{type(estimator).__name__}: {message}", DegenerateModelWarning,
                  stacklevel=4)


def validate_numeric(estimator, *args, **kwargs):
    """:func:`sklearn.utils.validation.validate_data` with a plain message for strings in X.

    After fit (``reset=False``), a DataFrame whose columns are the feature names seen at fit
    in another order is reordered by name (:func:`align_columns`).
    """
    if args:
        check_unique_columns(args[0])
    if not kwargs.get("reset", True) and args:
        args = (align_columns(estimator, args[0]), *args[1:])
    with numeric_input():
        return validate_data(estimator, *args, **kwargs)


def check_unique_columns(X):
    """ValueError if the data frame X has a column name more than once (no-op otherwise).

    Raises
    ------
    ValueError
        Naming the repeated names and how often each occurs.
    """
    columns = getattr(X, "columns", None)
    if columns is None or isinstance(X, np.ndarray):
        return
    repeated = [(name, count) for name, count in Counter(columns).items() if count > 1]
    if not repeated:
        return
    listed = ", ".join(f"{name!r} {count} times" for name, count in repeated[:10])
    raise ValueError(
        f"X has repeated column names ({listed}); the columns need unique column names "
        "(they identify the features and name the kernels): rename the columns "
        "(X.columns = [...]) or drop the repeats (X.loc[:, ~X.columns.duplicated()])"
    )


def align_columns(estimator, X):
    """X with its columns in the order of ``estimator.feature_names_in_``.

    Only when both have names (scikit-learn's convention: X a DataFrame with string column
    names); otherwise X is returned as given and scikit-learn's own checks apply.

    Raises
    ------
    ValueError
        If X's column names are not the fitted names (in any order): names some missing,
        unexpected or repeated (:func:`feature_order`).
    """
    fitted = getattr(estimator, "feature_names_in_", None)
    given = _get_feature_names(X) if fitted is not None else None
    if given is None or np.array_equal(given, fitted):
        return X
    order = feature_order(fitted, given, "X")
    return X[[given[i] for i in order]]


def feature_order(fitted, given, what):
    """Indices of the columns named ``given`` in the order of the names ``fitted``.

    ``given[order]`` equals ``fitted``. Both are sequences of str; ``what`` names the
    columns' source in the message (``"X"``, a file name).

    Raises
    ------
    ValueError
        Naming the fitted names missing from ``given``, the names not seen at fit and the
        names given more than once (one line).
    """
    fitted, given = [str(n) for n in fitted], [str(n) for n in given]
    position = {name: i for i, name in enumerate(given)}
    missing = [name for name in fitted if name not in position]
    unexpected = [name for name in given if name not in set(fitted)]
    repeated = sorted({name for name in given if given.count(name) > 1})
    if not (missing or unexpected or repeated) and len(set(fitted)) == len(fitted):
        return np.array([position[name] for name in fitted], dtype=np.intp)
    problems = [f"{label} {', '.join(repr(n) for n in names[:10])}"
                + (f" and {len(names) - 10} more" if len(names) > 10 else "")
                for label, names in (("missing", missing), ("not seen at fit", unexpected),
                                     ("repeated", repeated)) if names]
    raise ValueError(
        f"the columns of {what} do not match the {len(fitted)} feature names the model was "
        f"fitted on ({'; '.join(problems) or 'the fitted names repeat'}); give columns named "
        f"{', '.join(repr(n) for n in fitted[:10])}{', ...' if len(fitted) > 10 else ''} "
        "(in any order)"
    )


# A test value more than this many training ranges (max - min of its feature) beyond them
# is far outside: RBF-type kernels to every training point are 0 there.
FAR_RANGES = 10.0


def feature_range(X):
    """Smallest and largest value of each feature of the dense training points X (at least
    one row): shape (2, n_features), kept at fit for :func:`count_far_outside`."""
    return np.stack([X.min(axis=0), X.max(axis=0)])


def count_far_outside(training_range, X):
    """Rows of the dense X with a value more than ``FAR_RANGES`` training ranges beyond
    ``training_range`` (:func:`feature_range`; a constant feature's range is its value's
    magnitude, at least 1): their count and one such (value, column), or None."""
    low, high = training_range
    with np.errstate(over="ignore", invalid="ignore"):
        spread = high - low
        margin = FAR_RANGES * np.where(spread > 0, spread, np.maximum(np.abs(low), 1.0))
        far = (X < low - margin) | (X > high + margin)
    rows = np.flatnonzero(far.any(axis=1))
    if rows.size == 0:
        return 0, None
    column = int(np.flatnonzero(far[rows[0]])[0])
    return rows.size, (float(X[rows[0], column]), column)


def warn_far_outside(estimator, n_far, n_test, value, column, training_range):
    """UserWarning that ``n_far`` of ``n_test`` test points lie far outside the training
    range (``value`` of feature ``column`` is one): the model extrapolates there."""
    names = getattr(estimator, "feature_names_in_", None)
    feature = repr(str(names[column])) if names is not None else f"x[{column}]"
    low, high = training_range[:, column]
    warnings.warn(
        f"{type(estimator).__name__}: {n_far} of {n_test} test points lie far outside the "
        f"training range (more than {FAR_RANGES:g} times a feature's training range beyond "
        f"it; e.g. {feature} = {value:.3g}, trained on [{low:.3g}, {high:.3g}]): kernels "
        "that read such a feature are about 0 there (RBF) or explode, so the model "
        "extrapolates, and a point far out for every kernel gets the intercept alone; check "
        "those points, or scale X as the training data was", UserWarning, stacklevel=4)


def kernel_is_constant(kernel_sum):
    """True if all entries of the sum of the kernels are equal (to rounding)."""
    if not kernel_sum.size:
        return True
    high, low = float(np.max(kernel_sum)), float(np.min(kernel_sum))  # no temporaries
    return high - low <= 1e-12 * max(abs(high), abs(low))


def rows_are_identical(X):
    """True if X has several rows, all equal to the first (no kernel on X can vary)."""
    return X.shape[0] > 1 and all(bool(np.all(band == X[:1])) for _, band in block_bands(X))


def check_label_types(y):
    """Class labels ``y`` checked for types numpy cannot sort; returns y.

    A pandas Series or DataFrame column (labels of any dtype: numbers, strings, objects,
    categories, pandas' string dtype) comes back as a numpy array of its values, as
    :class:`sklearn.svm.SVC` reads it. An object array of numbers only (which scikit-learn
    calls "unknown") comes back as a numeric array. Raises ValueError if y mixes strings with
    other types, or holds None or a missing value (``pd.NA``, ``NaN``).
    """
    if y is None:
        return y
    if hasattr(y, "to_numpy"):  # a pandas (or polars) Series: its values
        y = np.asarray(y)
    values = np.asarray(y, dtype=object) if not hasattr(y, "dtype") else y
    if getattr(values, "dtype", None) is None or values.dtype.kind != "O":
        return y
    kinds = {"string" if isinstance(v, (str, bytes)) else type(v).__name__
             for v in values.ravel()}
    if kinds & {"NoneType", "NAType", "NaTType"} or (
            "float" in kinds and any(v != v for v in values.ravel() if isinstance(v, float))):
        raise ValueError("y contains None or missing labels (NaN, pd.NA); drop those samples "
                         "or give them a label")
    if "string" in kinds and len(kinds) > 1:
        others = ", ".join(sorted(kinds - {"string"}))
        raise ValueError(
            f"y mixes strings with other label types ({others}); use one type for all "
            "labels, e.g. y.astype(str)"
        )
    if hasattr(y, "dtype") and "string" not in kinds and values.size:
        numeric = np.asarray(values.tolist())
        if numeric.dtype.kind in "biuf":
            return numeric
    return y


def check_regression_targets(y):
    """Real, finite targets of a safe size as float64; ValueError naming the problem."""
    y = np.asarray(y)
    if y.dtype.kind == "c":
        raise ValueError("Complex data not supported: MKLRegressor needs real-valued targets y")
    if y.dtype.kind not in "biuf":
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            example = next(iter(np.ravel(y)), None)
            raise ValueError(
                f"MKLRegressor needs real-valued targets y, got {y.dtype.name} values such as "
                f"{example!r}; for class labels use MKLClassifier (command line: --task "
                "classification)"
            ) from None
    y = column_or_1d(y, warn=True).astype(np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity; regression targets must be finite")
    largest = float(np.max(np.abs(y))) if y.size else 0.0
    if largest > _SAFE_KERNEL_RANGE[1]:
        raise ValueError(
            f"regression targets as large as {largest:.3g} overflow in the solver (their "
            "squares exceed the float range); rescale y, e.g. to y / y.std()"
        )
    return y


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
        return SumOfKernels(stack).matrix(np.ones(stack.shape[2]))
    return sum_last_axis(stack)


def check_learned_kernel(stack_km, weights, learned=None):
    """Check that the learned kernel ``K(d) = sum_k d_k K_k`` is symmetric and PSD.

    :func:`check_kernel_stack` checks the plain sum of the kernels, in which the antisymmetric
    parts of several kernels could cancel; in ``K(d)`` they would not, and an SVM on an
    asymmetric kernel is silently wrong. This closes that gap for the kernels in use.

    Parameters
    ----------
    stack_km : ndarray of shape (n_kernels, n_samples, n_samples)
        The base kernels, kernel-major (``SumOfKernels.kernel_major``).
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
            learned = SumOfKernels(stack_km.transpose(1, 2, 0)).matrix(weights)
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
    if np.any(diagonals) and not _SAFE_KERNEL_RANGE[0] <= scale <= _SAFE_KERNEL_RANGE[1]:
        raise ValueError(
            f"{what} has diagonal entries up to {scale:.3g}, outside the range "
            f"[{_SAFE_KERNEL_RANGE[0]:g}, {_SAFE_KERNEL_RANGE[1]:g}] the solvers handle "
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
    if largest > _SAFE_KERNEL_RANGE[1]:
        raise ValueError(
            f"the precomputed test stack has entries up to {largest:.3g}, above the "
            f"{_SAFE_KERNEL_RANGE[1]:g} the predictions handle without overflow; compute it "
            "with the kernels (and scaling) of the training stack"
        )
    return stack


# With ``alpha <= C_max`` (see largest_cost) the decision values stay below ``1e13 s`` and the
# quadratic terms below ``1e26`` (s <= 1) or ``1e26 / s``: finite in every solver, also squared
# (lp); on overlapping classes the inner SVMs' iterations grow with C (n = 40: 1 s at C = 1e12,
# 25 s at 1e14)
_COST_REACH = 1e13


def largest_cost(kernels, n_samples):
    """The largest C the solvers take on ``kernels`` (a kernel operator with ``diagonal()``;
    others, such as products of RBF kernels, have values at most 1): ``1e13 / (n s)`` for
    ``s <= 1`` and ``1e13 / (n sqrt(s))`` above, ``s`` the largest diagonal entry of a base
    kernel.

    The alphas of separable data scale with the kernels' values as ``1/s`` (l1),
    ``s^(-2/3)`` (lp: its conjugate is homogeneous of degree 2) or about ``s^(-1/2)`` (KL),
    so C_max stays above them by the same margin whatever s: the box ``alpha <= C`` is
    inactive above it unless the hard-margin solution has ``sum(alpha) = ||w||^2`` near
    ``C_max``, a margin of about ``3e-7`` in units of the kernels, near the resolution of
    kernel values rounded to double precision. LIBSVM's SVC gives the hard-margin solution at
    any larger C for the same reason.
    """
    diagonal = getattr(kernels, "diagonal", None)
    largest = 1.0
    if callable(diagonal):
        with np.errstate(over="ignore", invalid="ignore"):
            values = np.abs(np.asarray(diagonal(), dtype=np.float64))
        if values.size and np.isfinite(values).all() and values.max() > 0:
            largest = float(values.max())
    scale = largest if largest <= 1.0 else np.sqrt(largest)
    return _COST_REACH / (max(n_samples, 1) * scale)


def cap_costs(cost, kernels, n_samples):
    """``(min(cost, C_max), C_max)`` (see :func:`largest_cost`); the cap is None when no cost
    exceeds it."""
    cap = largest_cost(kernels, n_samples)
    cost = np.asarray(cost, dtype=np.float64)
    if not np.any(cost > cap):
        return cost, None
    return np.minimum(cost, cap), cap


def warn_if_capped(estimator, cap, at_bound):
    """After a fit at the capped C: warn, naming C, when ``at_bound`` (points whose alpha
    sits at the cap) is positive; the model then is that of C = ``cap``, not of C."""
    if cap is None or at_bound == 0:
        return
    warnings.warn(
        f"{type(estimator).__name__}: C={estimator.C:g} is above the largest C these kernels "
        f"support ({cap:.3g}: beyond it the solvers overflow or stall); the model was "
        f"fitted at C={cap:.3g}, where {at_bound} training point(s) still sit at the bound "
        "alpha = C (margin errors: the classes overlap, so C still matters). Lower C",
        UserWarning,
        stacklevel=3,
    )


def at_bound(alpha, cost, cap):
    """How many of ``alpha`` (shape (n,), magnitudes) sit at a bound ``cost`` lowered to
    ``cap`` (to rounding); 0 when ``cap`` is None."""
    if cap is None:
        return 0
    cost = np.broadcast_to(np.asarray(cost, dtype=np.float64), np.shape(alpha))
    return int(np.count_nonzero((cost == cap) & (np.asarray(alpha) >= cap * (1 - 1e-9))))
