"""The learned kernel as a scikit-learn transformer, for any estimator that takes a kernel."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import _num_samples, check_is_fitted

from mklearn.distributed.partitions import on_partitions
from mklearn.estimators import MKLClassifier, MKLRegressor
from mklearn.extending import Regularizer
from mklearn.formulation.regularizers import REGULARIZERS
from mklearn.kernels.checks import is_views
from mklearn.kernels.strings import is_string_kernels
from mklearn.memory import check_dense_output, gathered
from mklearn.solvers import SOLVERS
from mklearn.validation import parameter_constraints

__all__ = ["MKLKernel"]

# the solver whose weights need no y: 1 / n_kernels each
UNIFORM_SOLVER = next(name for name, info in SOLVERS.items() if not info.needs_targets)
_CONTINUOUS = ("continuous", "continuous-multioutput")
# An integer-valued target with more distinct values than this is taken as regression by
# task="auto": one-vs-rest over so many classes is rarely what is meant (diabetes: 214).
MAX_AUTO_CLASSES = 50
_CLASSIFICATION_ONLY = ("class_weight", "groups")  # they change the weights: refused otherwise


class MKLKernel(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """The kernel learned by MKL, as a transformer: ``K(d) = sum_k d_k K_k``.

    ``fit`` learns the kernel weights ``d`` with :class:`~mklearn.MKLClassifier` or
    :class:`~mklearn.MKLRegressor` (any of their solvers and regularisers); ``transform``
    returns the learned kernel between its input and the training points, shape
    ``(n_test, n_train)``, so that any scikit-learn estimator that takes a precomputed kernel
    learns on it::

        make_pipeline(MKLKernel(kernels=...), KernelRidge(kernel="precomputed"))
        make_pipeline(MKLKernel(kernels=...), SVR(kernel="precomputed"))
        make_pipeline(MKLKernel(kernels=...), KernelPCA(kernel="precomputed"))
        make_pipeline(MKLKernel(kernels=...), SpectralClustering(affinity="precomputed"))

    The test kernels are computed by the estimator's own machinery (the kernel bank fitted on
    the training points: their standardisation and kernel scales), for the kernels of
    non-zero weight only. ``fit_transform(X, y)`` is the ``(n_train, n_train)`` learned
    kernel on the training points.

    Parameters
    ----------
    kernels : "auto", str, KernelRecipe, KernelSpec or list of KernelSpec
        The base kernels, as the estimators take them (recipes such as "svc+feature_rbf",
        kernel specs, string kernels, multi-view input). "auto" (default): the default of the
        estimator that learns the weights ("svc+feature_rbf" for both tasks). "precomputed":
        ``fit`` takes a stack of shape ``(n_samples, n_samples, n_kernels)`` (a 2-D array is
        one kernel) and ``transform`` one of shape ``(n_test, n_train, n_kernels)``.
    task : {"auto", "classification", "regression"}
        Which estimator learns the weights: :class:`~mklearn.MKLClassifier` or
        :class:`~mklearn.MKLRegressor`. "auto" (default): regression when y is continuous
        (:func:`sklearn.utils.multiclass.type_of_target` says "continuous"), and when y is
        numeric and integer-valued with more than ``MAX_AUTO_CLASSES`` (50) distinct values
        (e.g. the counts of ``sklearn.datasets.load_diabetes``), with a ``UserWarning``
        naming ``task="classification"`` to force the other; classification otherwise
        (string labels always).
    solver : str
        A key of :data:`mklearn.solvers.SOLVERS` or "auto" (default), as in the estimators.
    regularizer, p, lam, C, tol, max_iter, kernel_normalization, solver_options, kernel_dtype
        As in :class:`~mklearn.MKLClassifier` (classification) and
        :class:`~mklearn.MKLRegressor` (regression). "auto" (``regularizer``, ``lam``,
        ``cache_size``, ``kernel_storage``) means the default of the estimator that learns
        the weights; for regression ``regularizer="auto"`` is its "lp".
    epsilon : float >= 0
        Half-width of the insensitive tube (regression only), in units of y.
    class_weight, groups, n_jobs, random_state
        As in :class:`~mklearn.MKLClassifier`, classification only: ``class_weight`` or
        ``groups`` other than None with regression is a ValueError; ``n_jobs`` (one-vs-rest
        problems in parallel) and ``random_state`` are then unused.
    verbose : int
        Passed to the estimator that learns the weights.
    cache_size, kernel_storage : as in the estimators
        How the base kernels are held while the weights are learned.
    memory_budget : float or None
        Megabytes the fit may plan for (as in the estimators), and that the output of
        ``transform``, ``8 n_test n_train`` bytes, may take; None: half the room under
        every memory limit at the time (:mod:`mklearn.memory`).

    Attributes
    ----------
    kernel_weights_ : ndarray of shape (n_kernels,)
        The weights d of the learned kernel, with the estimators' meaning and normalisation
        (on the simplex for "l1"; not normalised for "lp" and "kl", whose learned kernel has
        a learned scale). For more than two classes, MKLClassifier learns one weight vector
        per one-vs-rest problem; the transformer's kernel is that of their mean (on the
        simplex when each is), one kernel for all classes.
    kernel_names_ : list of str
        Readable names of the base kernels.
    estimator_ : MKLClassifier, MKLRegressor or None
        The fitted estimator that learned the weights (its ``kernel_weights_`` has one row
        per class for more than two classes); None when fitted without y.
    task_ : {"classification", "regression"} or None
        The task the weights were learned for: ``task``, or with ``task="auto"`` the one
        inferred from y (see ``task``); None without y.
    solver_ : str
        The solver used.
    n_iter_ : int
        The estimator's ``n_iter_``, its outer iterations (see ``max_iter`` of
        :class:`MKLClassifier`; the largest over one-vs-rest problems); 0 without y.
    n_train_ : int
        Number of training points: the columns of ``transform``'s output.
    n_features_in_ : int
        Number of features of X (not set for precomputed kernels or sequences).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Column names of X when it has them (a DataFrame).

    Raises
    ------
    ValueError
        On what the estimators refuse (invalid parameters, input with NaN or inf, kernel
        stacks of the wrong shape, labels that are not labels), on y=None with a solver that
        learns from y, on a classification-only parameter with regression, and in
        ``transform`` on input that does not match the fit (number of features, stack shape)
        or an output above the memory budget.

    Notes
    -----
    Without y (``fit(X)``, as KernelPCA or SpectralClustering pipelines call it when no
    labels are given) nothing can be learned: only ``solver="average"`` fits, with the
    uniform weights ``1 / n_kernels`` it would learn for any y; every other solver raises a
    ValueError asking for y.

    ``SpectralClustering(affinity="precomputed")`` reads the kernel as a similarity graph:
    use base kernels with non-negative values (e.g. RBF kernels). ``SVR`` and ``KernelRidge``
    see the learned kernel's scale, which the "lp" and "kl" regularisers learn: tune their C
    or alpha with it, e.g. in the same grid search.

    A fitted MKLKernel pickles (``pickle``, ``joblib``); :func:`mklearn.save_model` does not
    take it (its files keep the support vectors only, the transform needs every training
    point).
    """

    _parameter_constraints: dict = parameter_constraints(
        "kernels", "p", "lam", "C", "epsilon", "tol", "max_iter", "kernel_normalization",
        "class_weight", "groups", "n_jobs", "solver_options", "kernel_dtype", "random_state",
        "verbose", "cache_size", "kernel_storage", "memory_budget",
        task=[StrOptions({"auto", "classification", "regression"})],
        solver=[StrOptions(set(SOLVERS) | {"auto"})],
        regularizer=[StrOptions(set(REGULARIZERS) | {"auto"}), Regularizer],
    )

    def __init__(
        self,
        *,
        kernels="auto",
        task="auto",
        solver="auto",
        regularizer="auto",
        p=2.0,
        lam="auto",
        C=1.0,
        epsilon=0.1,
        tol=1e-3,
        max_iter=500,
        kernel_normalization="diagonal",
        class_weight=None,
        groups=None,
        n_jobs=None,
        solver_options=None,
        kernel_dtype="float64",
        random_state=None,
        verbose=0,
        cache_size="auto",
        kernel_storage="auto",
        memory_budget=None,
    ):
        self.kernels = kernels
        self.task = task
        self.solver = solver
        self.regularizer = regularizer
        self.p = p
        self.lam = lam
        self.C = C
        self.epsilon = epsilon
        self.tol = tol
        self.max_iter = max_iter
        self.kernel_normalization = kernel_normalization
        self.class_weight = class_weight
        self.groups = groups
        self.n_jobs = n_jobs
        self.solver_options = solver_options
        self.kernel_dtype = kernel_dtype
        self.random_state = random_state
        self.verbose = verbose
        self.cache_size = cache_size
        self.kernel_storage = kernel_storage
        self.memory_budget = memory_budget

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        precomputed = isinstance(self.kernels, str) and self.kernels == "precomputed"
        tags.input_tags.pairwise = precomputed
        tags.input_tags.sparse = not (precomputed or is_string_kernels(self.kernels))
        tags.target_tags.required = True
        return tags

    def fit(self, X, y=None, sample_weight=None):
        """Learn the kernel weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples, n_kernels)
            Training points (sequences for string kernels, a list or dict of views for
            multi-view input), or the base-kernel stack with ``kernels="precomputed"``.
        y : array-like of shape (n_samples,) or None
            Class labels or real targets (``task``). None: only with ``solver="average"``
            (uniform weights); ValueError otherwise.
        sample_weight : array-like of shape (n_samples,), optional
            Passed to the estimator that learns the weights (it multiplies C); unused
            without y.

        Returns
        -------
        self : MKLKernel
        """
        self._validate_params()
        X, y = gathered(X, self.memory_budget), gathered(y, self.memory_budget, "y")
        sample_weight = gathered(sample_weight, self.memory_budget, "sample_weight")
        if isinstance(self.kernels, str) and self.kernels == "precomputed_distances":
            raise ValueError(
                "MKLKernel combines kernels by a weighted sum: kernels='precomputed_distances' "
                "(a product of kernels) is not supported; pass kernel values with "
                "kernels='precomputed'")
        for name in ("n_features_in_", "feature_names_in_"):
            self.__dict__.pop(name, None)
        if y is None:
            learner = self._uniform_kernels(X)
            weights, self.task_, self.estimator_ = learner.kernel_weights_, None, None
            self.solver_, self.n_iter_ = UNIFORM_SOLVER, 0
        else:
            self.task_ = self._task_of(y)
            learner = self._weight_learner(self.task_).fit(X, y, sample_weight=sample_weight)
            weights = np.atleast_2d(learner.kernel_weights_).mean(axis=0)
            self.estimator_, self.solver_ = learner, learner.solver_
            self.n_iter_ = int(np.max(learner.n_iter_))
        self._learner = learner
        self.kernel_weights_ = weights
        self.kernel_names_ = list(learner.kernel_names_)
        self.n_train_ = int(learner.n_train_)
        for name in ("n_features_in_", "feature_names_in_"):
            if hasattr(learner, name):
                setattr(self, name, getattr(learner, name))
        return self

    @on_partitions
    def transform(self, X):
        """The learned kernel between X and the training points.

        ``K(d)(x, x_j) = sum_k d_k K_k(x, x_j)`` over the kernels of non-zero weight, computed
        in blocks of test points (:meth:`mklearn.MKLClassifier.decision_function`'s blocks).

        Parameters
        ----------
        X : array-like of shape (n_test, n_features), or (n_test, n_train, n_kernels)
            Points, or with ``kernels="precomputed"`` the base kernels between them and the
            training points.
            A ``dask.array.Array`` partitioned by rows gives a Dask array with its row
            chunks, computed block by block (:mod:`mklearn.distributed.partitions`).

        Returns
        -------
        ndarray of shape (n_test, n_train), float64

        Raises
        ------
        ValueError
            If X does not match the fit (number of features or feature names, a stack not of
            shape ``(n_test, n_train, n_kernels)``), has NaN or inf, or the output would need
            more than ``memory_budget``.
        """
        check_is_fitted(self)
        weights = self.kernel_weights_
        active = np.flatnonzero(weights > 0)
        if active.size == 0:  # no kernel in use: kernel 0 at weight 0 checks X, gives zeros
            active = np.arange(1)
        n_test = _rows_of(X)
        check_dense_output(
            n_test, self.n_train_, memory_budget=self.memory_budget,
            what=f"the learned kernel between {n_test} points and the {self.n_train_} "
                 "training points",
            fix="transform X in batches of fewer points")
        kernel = np.empty((n_test, self.n_train_))
        start = 0
        for cross in self._learner._cross_kernels(X, None, active, validator=self):
            stop = start + cross.shape[0]
            kernel[start:stop] = cross @ weights[active].astype(cross.dtype)
            start = stop
        return kernel

    @property
    def _n_features_out(self):
        """Output columns (``get_feature_names_out``: mklkernel0, ...): the training points."""
        return self.n_train_

    def _task_of(self, y):
        """``task`` with "auto" resolved by the type of y (UserWarning when integer values
        are taken as regression targets)."""
        if self.task != "auto":
            return self.task
        kind = type_of_target(y)
        if kind in _CONTINUOUS:
            return "regression"
        n_distinct = _numeric_distinct(y) if kind == "multiclass" else 0
        if n_distinct <= MAX_AUTO_CLASSES:
            return "classification"
        warnings.warn(
            f"MKLKernel(task='auto') learns the weights for regression: y has {n_distinct} "
            f"distinct integer values, more than the {MAX_AUTO_CLASSES} taken as classes; "
            "pass task='classification' to learn them for that many classes, or "
            "task='regression' to silence this warning", UserWarning, stacklevel=3)
        return "regression"

    def _weight_learner(self, task):
        """An unfitted MKLClassifier or MKLRegressor with this transformer's parameters
        ("auto" values left at the estimator's defaults, parameters it does not have left
        out); ValueError for ``class_weight`` or ``groups`` with regression."""
        learner = MKLRegressor if task == "regression" else MKLClassifier
        accepted = learner().get_params(deep=False)
        params = {}
        for name, value in self.get_params(deep=False).items():
            if name == "task" or (isinstance(value, str) and value == "auto"):
                continue
            if name in accepted:
                params[name] = value
            elif name in _CLASSIFICATION_ONLY and value is not None:
                raise ValueError(
                    f"{name}={value!r} is a parameter of classification, but the weights are "
                    f"learned for {task} ({learner.__name__} has no {name!r}); leave {name} at "
                    "None or set task='classification'")
        learner = learner(**params)
        learner._keeps_training_points = True  # transform reads the kernels with them
        return learner

    def _uniform_kernels(self, X):
        """The base kernels of X, fitted without y, with the uniform weights of
        ``solver="average"``: an MKLClassifier holding the kernels only (no SVM)."""
        if self.solver != UNIFORM_SOLVER:
            hint = (f" or solver={UNIFORM_SOLVER!r} (uniform weights, which need no y)"
                    if UNIFORM_SOLVER in SOLVERS else "")
            raise ValueError(
                f"MKLKernel(solver={self.solver!r}) requires y to be passed, but the target y "
                "is None: it learns the kernel weights from class labels or targets; fit with "
                f"them (a Pipeline passes y on from pipeline.fit(X, y)){hint}")
        learner = self._weight_learner("classification").set_params(solver="auto")
        learner._validate_params()
        placeholder = np.zeros(_rows_of(X))  # kernels only: no y is read
        learner._training_kernels(X, placeholder, columns=True)
        learner._own_training_points()
        n_kernels = len(learner.kernel_names_)
        learner.kernel_weights_ = np.full(n_kernels, 1.0 / n_kernels)
        return learner


def _numeric_distinct(y):
    """Number of distinct values of y if it holds numbers (not strings, objects or
    booleans), else 0."""
    values = np.asarray(y)
    if values.dtype.kind not in "iuf":
        return 0
    return int(np.unique(values).size)


def _rows_of(X):
    """Number of points in X (the first view's rows for multi-view input); 0 if X is no
    array (its validation then says what is wrong)."""
    if is_views(X):
        X = next(iter(X.values())) if isinstance(X, dict) else X[0]
    try:
        return _num_samples(X)
    except TypeError:
        return 0

