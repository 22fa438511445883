"""``MKLClassifier(combination="product")``: input, regulariser and prediction of products."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_array, column_or_1d

from mklearn.formulation.products import (
    FeatureProduct,
    ProductOfDistances,
    ProductOfRBF,
    check_distance_stack,
)
from mklearn.formulation.regularizers import L1Penalty, LpNorm
from mklearn.kernels import (
    count_far_outside,
    feature_range,
    is_views,
    rows_are_identical,
    validate_numeric,
    warn_constant_model,
    warn_degenerate,
    warn_far_outside,
)
from mklearn.solvers import solvers_for

_KERNELS_HELP = (
    "combination='product' learns one RBF width per feature: pass kernels='features' (one "
    "width per column of X), a list of column-index lists (one width per feature block), a "
    "mklearn.formulation.products.FeatureProduct, or kernels='precomputed_distances' with a "
    "stack of "
    "squared distances (n_samples, n_samples, n_kernels)"
)


def check_product_params(estimator):
    """ValueError for parameters a product combination cannot take."""
    takers = solvers_for("classification", "product")
    if estimator.solver != "auto" and estimator.solver not in takers:
        named = ", ".join(repr(name) for name in ["auto", *takers[:-1]])
        raise ValueError(
            f"solver {estimator.solver!r} does not support combination='product' (its kernel "
            f"is not linear in the weights); use solver={named} or {takers[-1]!r}"
        )
    regularizer = estimator._regularizer_choice()
    if isinstance(regularizer, str) and regularizer not in ("l1", "lp"):
        raise ValueError(
            f"combination='product' takes regularizer 'l1' (sigma * sum(d), sigma = lam) or "
            f"'lp', got {regularizer!r}"
        )
    if estimator.groups is not None:
        raise ValueError("groups are not supported with combination='product'; drop groups")


def _feature_product(kernels):
    if isinstance(kernels, FeatureProduct):
        return kernels
    if isinstance(kernels, str) and kernels == "features":
        return FeatureProduct()
    if isinstance(kernels, (list, tuple)) and kernels and all(
        isinstance(b, (list, tuple, np.ndarray)) for b in kernels
    ):
        return FeatureProduct(blocks=[list(np.ravel(b)) for b in kernels])
    if isinstance(kernels, str) and kernels == "precomputed":
        raise ValueError(
            "kernels='precomputed' holds kernel values, but combination='product' needs "
            "distances or X: pass squared distances with kernels='precomputed_distances', or X "
            "with kernels='features'"
        )
    raise ValueError(f"kernels={kernels!r} cannot be used with combination='product'. "
                     f"{_KERNELS_HELP}")


def product_input(estimator, X, y):
    """The product combination on the training data, and y; sets the input attributes."""
    estimator.bank_ = None
    estimator.views_ = None
    estimator.__dict__.pop("_feature_range", None)
    if isinstance(estimator.kernels, str) and estimator.kernels == "precomputed_distances":
        stack = check_distance_stack(X)
        y = column_or_1d(y, warn=True)
        if y.shape[0] != stack.shape[0]:
            raise ValueError(
                f"the distance stack has {stack.shape[0]} samples but y has {y.shape[0]}"
            )
        if not np.any(stack):
            warn_constant_model(estimator, "all precomputed distances are zero (every point "
                                "is at distance 0 from every other)")
            estimator._constant_said = True
        estimator.product_ = "distances"
        estimator.kernel_storage_ = "stack"
        estimator.n_train_ = stack.shape[0]
        estimator.kernel_names_ = [f"distance[{k}]" for k in range(stack.shape[2])]
        return ProductOfDistances(stack), y
    spec = _feature_product(estimator.kernels)
    if is_views(X):
        raise ValueError("multi-view input is not supported with combination='product'; "
                         "concatenate the views into one X")
    X, y = validate_numeric(estimator, X, y, dtype=np.float64)
    estimator.__dict__.pop("_constant_rows", None)
    estimator._feature_range = feature_range(X)
    if rows_are_identical(X):  # said once: finish_product does not repeat it
        warn_constant_model(estimator, "all rows of X are identical (every feature is constant)")
        estimator._constant_said = estimator._constant_rows = True
    fitted = spec.fit(X)
    estimator.product_ = fitted
    estimator.n_train_ = X.shape[0]
    estimator.kernel_names_ = list(fitted.names)
    with np.errstate(over="ignore", invalid="ignore"):
        estimator._product_X = fitted.transform(X)
        spread = np.ptp(estimator._product_X, axis=0) if X.shape[0] else np.zeros(1)
    if not np.all(np.isfinite(spread) & (spread < 1e150)):  # squared distances overflow
        raise ValueError(
            "X is too large for the product of RBF kernels: distances between its points "
            "overflow; rescale X, e.g. with sklearn.preprocessing.StandardScaler, or keep the "
            "features standardised (FeatureProduct(standardize=True))"
        )
    # one n x n kernel at a time: the plan of a one-kernel stack decides stack or rows
    estimator.kernel_storage_ = estimator._plan_storage(X.shape[0], 1, False)
    cache = (None if estimator.kernel_storage_ == "stack"
             else estimator._cache_megabytes(X.shape[0], 1))
    return ProductOfRBF(estimator._product_X, fitted, cache_size=cache), y


def product_regularizer(estimator):
    """"l1": ``lam * sum(d)`` on d >= 0 (the paper's sigma); "lp": ``lam/2 ||d||_p^2``; an
    instance is used as given."""
    regularizer = estimator._regularizer_choice()
    if not isinstance(regularizer, str):
        return regularizer
    estimator.lam_ = estimator._lam_value()
    if regularizer == "l1":
        return L1Penalty(estimator.lam_)
    return LpNorm(estimator.p, estimator.lam_)


def finish_product(estimator):
    """Keep the (standardised) support vectors that prediction needs; warn when a learned
    kernel is constant (every weight 0: ``exp(-0) = 1`` between all points)."""
    said = estimator.__dict__.pop("_constant_said", False)
    if not said and not np.all(np.any(np.atleast_2d(estimator.kernel_weights_) > 0, axis=1)):
        warn_degenerate(
            estimator,
            "every learned width of the product kernel is 0, so the learned kernel "
            "exp(-sum_k d_k D_k) is 1 between all points: the model cannot tell the training "
            "points apart and gives them all the same decision. Lower lam (the penalty on the "
            "widths) or raise C, or check that the features vary",
        )
    train = estimator.__dict__.pop("_product_X", None)
    # precomputed distances: empty, as for precomputed kernels
    estimator.support_vectors_ = np.empty((0, 0)) if train is None else train[estimator.support_]


def product_decision(estimator, X):
    """Decision values of a fitted product model; shape (n_test,) or (n_test, n_classes)."""
    weights = np.atleast_2d(estimator.kernel_weights_)
    if isinstance(estimator.product_, str):  # "distances"
        stack = check_distance_stack(X, n_train=estimator.n_train_)
        if stack.shape[2] != weights.shape[1]:
            raise ValueError(
                f"the test distance stack has {stack.shape[2]} distances; the model was "
                f"fitted on {weights.shape[1]}"
            )
        cross = stack[:, estimator.support_]
        kernels = [np.exp(-(cross @ w)) for w in weights]
    else:
        X = validate_numeric(estimator, X, dtype=np.float64, reset=False)
        _say_if_far_outside(estimator, X)
        Z = estimator.product_.transform(check_array(X))
        kernels = [estimator.product_.cross_kernel(w, Z, estimator.support_vectors_)
                   for w in weights]
    scores = np.column_stack(
        [K @ estimator.dual_coef_[c] + estimator.intercept_[c] for c, K in enumerate(kernels)]
    )
    return scores[:, 0] if scores.shape[1] == 1 else scores


def _say_if_far_outside(estimator, X):
    """Warn if test points lie far outside the training range (not for loaded models)."""
    training_range = getattr(estimator, "_feature_range", None)
    if training_range is None:
        return
    n_far, example = count_far_outside(training_range, X)
    if n_far:
        warn_far_outside(estimator, n_far, X.shape[0], *example, training_range)


def product_convergence_message(estimator, result):
    """What happened and what to do, for a product fit that did not reach ``tol``."""
    pg = result.history[-1]["pg_norm"] if result.history else np.nan
    where = (
        f"{estimator.solver_} stopped after {result.n_iter} iterations with projected-gradient "
        f"norm {pg:.2e} above tol={estimator.tol:g} (products have no duality gap)"
    )
    if result.stop_reason == "max_iter":
        return f"{where}; increase max_iter, or increase tol to accept a less stationary point"
    return (
        f"{where}: no step decreased the objective; increase tol, or lower "
        "solver_options['inner_tol'] for a more precise inner SVM"
    )
