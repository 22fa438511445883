"""Checks of the input a fit computes kernels on, with errors that name the problem and the
fix: scikit-learn's validation with plain messages, column names, the training range, input
the kernels cannot vary over (a warning that the model is constant), sparse and Dask input."""

from __future__ import annotations

import sys
import warnings
from collections import Counter
from collections.abc import Mapping

import numpy as np
import scipy.sparse
from sklearn.utils.validation import _get_feature_names, validate_data

from mklearn._sizes import byte_words
from mklearn.kernels.bank import block_bands
from mklearn.kernels.memory_limits import budget_bytes, budget_words
from mklearn.kernels.numeric_input import numeric_input


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


def densify(X, memory_budget: float | None = None):
    """A scipy.sparse X as a dense float64 array when it fits in the budget (kernel rows are
    computed from dense points; the kernels' own memory is planned separately); dense X is
    returned as it is.

    Raises
    ------
    ValueError
        If the dense copy needs more than the budget (the message gives the bytes).
    """
    if not scipy.sparse.issparse(X):
        return X
    budget = budget_bytes(memory_budget)
    need = 8 * X.shape[0] * X.shape[1]
    if need > budget:
        words, raise_it = budget_words(memory_budget, budget)
        raise ValueError(
            f"the sparse X ({X.shape[0]} x {X.shape[1]}, {X.nnz} non-zeros) needs "
            f"{byte_words(need)} as dense points for the kernels, above {words}: select "
            f"features (e.g. drop all-zero columns), use fewer samples, or {raise_it}")
    return X.toarray()


def is_dask_collection(X) -> bool:
    """Whether ``X`` is a Dask collection (array, dataframe, bag)."""
    if "dask" not in sys.modules:
        return False
    from dask.base import is_dask_collection as dask_says

    return bool(dask_says(X))


def is_views(X) -> bool:
    """Whether X is multi-view input: a dict of arrays, or a list/tuple of 2-D arrays."""
    if isinstance(X, Mapping):
        return True
    return isinstance(X, (list, tuple)) and len(X) > 0 and all(np.ndim(view) == 2 for view in X)
