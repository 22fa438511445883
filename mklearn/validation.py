"""The estimators' parameter constraints and checks of targets and costs, with errors that
name the problem and the fix.

The checks of the input that kernels are computed on, and of precomputed stacks, live with
the kernels (:mod:`mklearn.kernels.checks`, :mod:`mklearn.kernels.stack_checks`);
:class:`DegenerateModelWarning`, defined there, is public here.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import column_or_1d

from mklearn._registry import moved_names
from mklearn.extending import COMBINATIONS
from mklearn.kernels import APPROXIMATIONS
from mklearn.kernels.checks import DegenerateModelWarning
from mklearn.kernels.stack_checks import SAFE_KERNEL_RANGE

__all__ = ["SHARED_CONSTRAINTS", "DegenerateModelWarning", "at_bound", "cap_costs",
           "check_label_types", "check_regression_targets", "largest_cost",
           "parameter_constraints", "warn_if_capped"]

# deprecated: the checks of the input moved to the kernels, with the operator factory
__getattr__ = moved_names(__name__, {
    **dict.fromkeys(["align_columns", "check_unique_columns", "count_far_outside",
                     "feature_order", "feature_range", "kernel_is_constant",
                     "rows_are_identical", "validate_numeric", "warn_constant_model",
                     "warn_degenerate", "warn_far_outside"], "mklearn.kernels.checks"),
    **dict.fromkeys(["check_kernel_stack", "check_learned_kernel", "check_test_stack"],
                    "mklearn.kernels.stack_checks")})

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
    if largest > SAFE_KERNEL_RANGE[1]:
        raise ValueError(
            f"regression targets as large as {largest:.3g} overflow in the solver (their "
            "squares exceed the float range); rescale y, e.g. to y / y.std()"
        )
    return y


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
