"""What the MKL estimators share: the kernel input (:class:`_KernelInput`: the kernels on X,
the plan of how they are held, prediction from them) and the steps of a fit."""

from __future__ import annotations

import inspect
import sys
import warnings
from dataclasses import replace

import numpy as np
import scipy.sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import _safe_indexing
from sklearn.utils.multiclass import type_of_target

import mklearn.estimators.products as _product
from mklearn._sizes import MB, PREDICT_BLOCK_BYTES
from mklearn.distributed import DASK, active_client
from mklearn.distributed.points import collection_rows, partitioned_input, scattered_rows
from mklearn.extending import COMBINATIONS, Regularizer
from mklearn.fit_plan import FitPlan, LongFitWarning, cheaper_routes, row_pass_seconds
from mklearn.formulation.regularizers import REGULARIZERS, make_regularizer
from mklearn.kernels import (
    APPROXIMATIONS,
    LOW_RANK_SAMPLES,
    SVC_KERNEL_LAM,
    check_learned_kernel,
    check_test_stack,
    count_far_outside,
    is_dask_collection,
    is_string_kernels,
    make_operator,
    numba_threads,
    recipe_of,
    validate_numeric,
    warn_far_outside,
)
from mklearn.memory import auto_cache_size, gathered, plan_kernel_storage
from mklearn.progress import FitProgress, RemainingTime
from mklearn.solvers import SOLVERS, check_solver_options, choose_solver, get_solver

_WEIGHT_EPS = 1e-12  # kernel weights at or below this are reported as zero
_LARGE_COST = 1e4  # from this C on, a ConvergenceWarning says how C enters the gap
ONE_CLASS_CHECK_POINTS = 64  # training points whose predictions show a one-class model


class _KernelInput:
    """Kernel handling shared by the MKL estimators: a kernel family evaluated on X (a stack,
    or a column provider for solvers that read rows on demand), a precomputed stack, or
    multi-view input."""

    # plan hook: a low-rank fit keeps the training points in ``bank_`` (the learned-kernel
    # transformer's output is the kernel between new points and them), not the landmarks only
    _keeps_training_points = False
    # plan hook: low-rank features of exact kernels leave out their constant parts, which
    # the duals of SVMs with an intercept do not see (mklearn.kernels.low_rank.LowRankMap)
    _drops_constants = True
    # the combination learned over the kernels the factory makes (products take their own
    # path, mklearn.estimators.products)
    _stack_combination = "sum"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._precomputed
        # kernels computed from numeric X take scipy.sparse X (densified within the budget)
        tags.input_tags.sparse = not (
            self._precomputed or is_string_kernels(self.kernels)
            or getattr(self, "combination", "sum") == "product"
        )
        return tags

    @property
    def _precomputed(self):
        return isinstance(self.kernels, str) and self.kernels in (
            "precomputed",
            "precomputed_distances",
        )

    def _training_kernels(self, X, y, columns=False, feature_solver=None, on_workers=False):
        """The base kernels as the operator the solver reads, and y
        (:func:`mklearn.kernels.factory.make_operator`: a stack, a provider of rows with
        ``columns``, or low-rank features when ``kernel_approximation`` asks for them and the
        solver runs on them, ``feature_solver`` its feature-space function), placed on Dask
        when a cluster holds the input or runs the fit."""
        return make_operator(self, X, y, columns=columns, feature_solver=feature_solver,
                             on_workers=on_workers, placement=DASK)

    def _stack_operator(self, stack, kernel_sum=None):
        """Plan hook: the operator of base kernels held as an ``(n, n, m)`` stack, the
        estimator's combination ``K(d)`` of them (its class in the registry of
        combinations), ``kernel_sum`` their sum when known."""
        return COMBINATIONS.lookup(self._stack_combination)(stack, kernel_sum=kernel_sum)

    def _exact_only(self, what):
        """ValueError when a low-rank approximation was asked for kernels that have none."""
        asked = getattr(self, "kernel_approximation", "exact")
        if asked in APPROXIMATIONS:
            raise ValueError(f"kernel_approximation={asked!r} builds low-rank features from "
                             f"numeric X; {what} have none: use kernel_approximation='exact' "
                             "(or 'auto')")

    def _approximation(self, n_samples, feature_solver, client, partitioned=False):
        """``kernel_approximation`` resolved: "auto" is "nystroem" from ``LOW_RANK_SAMPLES``
        points on when the solver runs in feature space (and no Dask client holds the
        kernels, and no ``kernel_storage`` was named), and on partitioned data, else
        "exact"; ValueError for an approximation the solver cannot take."""
        asked = getattr(self, "kernel_approximation", "exact")
        if asked == "auto" and partitioned:
            return "nystroem"
        if asked == "auto":  # a kernel_storage asked for by name holds exact kernels
            low = (feature_solver is not None and client is None
                   and n_samples >= LOW_RANK_SAMPLES
                   and getattr(self, "kernel_storage", "auto") == "auto")
            return "nystroem" if low else "exact"
        if asked != "exact" and feature_solver is None:
            runs = sorted(name for name, info in SOLVERS.items()
                          if info.feature_function is not None)
            raise ValueError(f"solver {self.solver_!r} does not run on low-rank kernels "
                             f"(kernel_approximation={asked!r}); use one of {runs}, or "
                             "kernel_approximation='exact'")
        return asked

    def _solver_function(self, info, options):
        """The solver's function for the kernels held (feature space for low-rank ones) and
        the options it takes; ValueError for an option the feature-space solver has not."""
        if self.kernel_storage_ != "features":
            return info.function, options
        options = {key: value for key, value in options.items() if key != "cache_size"}
        known = set(inspect.signature(info.feature_function).parameters)
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(f"solver_options {unknown} do not apply to solver "
                             f"{self.solver_!r} on low-rank kernels; drop them or use "
                             "kernel_approximation='exact'")
        return info.feature_function, options

    def _fit_input(self, X, y, sample_weight, info):
        """X, y and sample_weight as the fit reads them: X kept in its Dask partitions when
        the fit runs on them (:meth:`_on_partitions`; its feature names kept), else each
        gathered into this process (:func:`mklearn.memory.gathered`)."""
        client = self._spreads_over(X, info)
        if client is not None:  # the same switch as the kernel-parallel path
            X = scattered_rows(X, client)
        elif not self._on_partitions(X, info):
            return (gathered(X, self.memory_budget), gathered(y, self.memory_budget, "y"),
                    gathered(sample_weight, self.memory_budget, "sample_weight"))
        X, y, sample_weight, names = partitioned_input(X, y, sample_weight)
        self.n_features_in_ = X.shape[1]
        self.__dict__.pop("feature_names_in_", None)
        if names is not None:
            self.feature_names_in_ = names
        return X, y, sample_weight

    def _spreads_over(self, X, info):
        """The ``distributed.Client`` of joblib's Dask backend (:func:`mklearn.distributed.
        active_client`) over whose workers an in-memory X is spread by rows, or None: a
        dense X (an array or a pandas DataFrame), low-rank kernels asked for by name
        (``kernel_approximation`` "nystroem" or "rff"), and parameters a fit on partitions
        serves (:meth:`_runs_on_partitions`)."""
        if (is_dask_collection(X) or scipy.sparse.issparse(X)
                or getattr(self, "kernel_approximation", "exact") not in APPROXIMATIONS
                or np.ndim(X) != 2):
            return None
        client = active_client(getattr(self, "n_jobs", None))
        return client if client is not None and self._runs_on_partitions(info) else None

    def _on_partitions(self, X, info):
        """Whether the fit runs where the partitions of a Dask X lie: numeric kernels made
        low rank (``kernel_approximation`` "nystroem" or "rff", or "auto" from
        ``LOW_RANK_SAMPLES`` rows on, as in one process), summed, held as the plan chooses,
        and a solver whose feature-space form reads partitioned features
        (:attr:`~mklearn.solvers.SolverInfo.partitioned`)."""
        if not (is_dask_collection(X) and self._runs_on_partitions(info)):
            return False
        return (getattr(self, "kernel_approximation", "exact") != "auto"
                or not collection_rows(X) < LOW_RANK_SAMPLES)

    def _runs_on_partitions(self, info):
        """Whether these parameters can fit on partitioned data: low-rank kernels (not
        "exact") computed from numeric X and summed, held as the plan chooses, and a solver
        that reads partitioned features."""
        return (info.partitioned and getattr(self, "kernel_approximation", "exact") != "exact"
                and not self._precomputed and not is_string_kernels(self.kernels)
                and getattr(self, "combination", "sum") == "sum"
                and getattr(self, "kernel_storage", "auto") == "auto")

    def _low_rank_expansions(self, X):
        """``Phi(x) . coef_[c]`` of each test point and model c, shape (n_test, n_models)
        (sequences are checked by the string bank, numeric X here)."""
        if not self.bank_.reads_sequences:
            X = validate_numeric(self, X, dtype=np.float64, reset=False, accept_sparse="csr")
            X = X.toarray() if scipy.sparse.issparse(X) else X
        features = self.low_rank_.transform(X)
        return np.asarray(features @ np.atleast_2d(self.coef_).T.astype(features.dtype),
                          dtype=np.float64)

    def _check_before_kernels(self, bank):
        """Checks that need the kernel count, run before any kernel is computed (no-op)."""

    def _cache_megabytes(self, n_samples, n_kernels):
        """``cache_size`` in MB (``"auto"`` resolved by :func:`mklearn.memory.auto_cache_size`),
        also kept as ``cache_size_``."""
        if isinstance(self.cache_size, str):  # "auto"
            self.cache_size_ = auto_cache_size(
                n_samples, n_kernels, itemsize=np.dtype(self.kernel_dtype).itemsize,
                memory_budget=self.memory_budget)
        else:
            self.cache_size_ = float(self.cache_size)
        return self.cache_size_

    def _plan_storage(self, n_samples, n_kernels, rows_only, points_bytes=0):
        """"stack" or "rows" within ``memory_budget`` (see :mod:`mklearn.memory`), said in
        verbose output; ValueError naming the bytes when nothing fits. ``points_bytes``: what
        the row path keeps of the points (:func:`~mklearn.kernels.bank.feature_block_bytes`)."""
        cache = self._cache_megabytes(n_samples, n_kernels)
        storage = plan_kernel_storage(
            n_samples, n_kernels, itemsize=np.dtype(self.kernel_dtype).itemsize,
            cache_size=cache, storage=self.kernel_storage,
            memory_budget=self.memory_budget, rows_only=rows_only, points_bytes=points_bytes)
        return storage

    def _hold(self, what, memory_bytes, pass_seconds, measured):
        """Keep how the kernels are held, their bytes and the time of a pass over their rows
        for the fit's plan (:meth:`_plan_fit`)."""
        self._held_plan = FitPlan(what, int(memory_bytes), float(pass_seconds), measured)

    def _hold_rows(self, provider, memory_bytes):
        """:meth:`_hold` for rows computed on demand (``memory_bytes`` on their path): a pass
        timed on one row."""
        n, m = provider.n_samples, provider.n_kernels
        cache = self._cache_megabytes(n, m)
        seconds, row = row_pass_seconds(provider)
        held = int(cache * MB // (np.dtype(self.kernel_dtype).itemsize * m * n))
        self._rows_held = held
        self._hold(f"{m} kernels on {n} samples as rows computed on demand (cache {cache:g} MB)",
                   memory_bytes, seconds,
                   f"one row of the {m} kernels takes {1e3 * row:.3g} ms; the cache holds "
                   f"about {min(held, n)} of the {n} rows")

    def _plan_fit(self, info, n_solves=1):
        """The fit's plan (:class:`~mklearn.fit_plan.FitPlan`) once its kernels are held:
        said in verbose output with the cheaper routes when it is a minute or more, and a
        :class:`~mklearn.fit_plan.LongFitWarning` when it is an hour or more. None when
        nothing was held (products)."""
        plan = getattr(self, "_held_plan", None)
        if plan is None:
            return None
        plan = replace(plan, n_solves=int(n_solves))
        if plan.is_long:
            plan = replace(plan, routes=self._cheaper_routes(info, plan))
        if getattr(self, "verbose", 0):
            print(f"mklearn: {plan.text()}", file=sys.stderr)
            if plan.is_long and not plan.is_refused:  # else the warning says it
                print(f"mklearn: {plan.long_text()}", file=sys.stderr)
        if plan.is_refused:
            warnings.warn(LongFitWarning(
                f"{type(self).__name__}: {plan.long_text()} ({plan.estimate()}). To stop such "
                "fits before they solve: warnings.simplefilter('error', "
                "mklearn.fit_plan.LongFitWarning)", plan), stacklevel=4)  # the caller of fit
        return plan

    def _cheaper_routes(self, info, plan):
        features = self.kernel_storage_ == "features"
        float64 = np.dtype(self.kernel_dtype) == np.float64
        return cheaper_routes(
            n_samples=self.n_train_, seconds=plan.seconds, cost_power=1 if features else 2,
            one_shot=info.one_shot,
            can_approximate=(self._approximable and not features
                             and info.feature_function is not None),
            float32_helps=(float64 and self.kernel_storage_ == "rows"
                           and getattr(self, "_rows_held", 0) < self.n_train_))

    def _regularizer_part(self, groups=None, probe=False):
        """The regulariser: the instance given, or the one ``regularizer`` names (with
        ``probe``, its class, whose declared capabilities choose the solver before the data
        are read)."""
        name = getattr(self, "regularizer_", self.regularizer)  # set first thing in fit
        if isinstance(name, Regularizer):
            return name
        if probe:
            return REGULARIZERS[name]
        auto = getattr(self, "regularizer", None) == "auto"
        prior = self._auto_kl_prior() if auto and name == "kl" else None
        self.lam_ = self._lam_value(anchored=prior is not None)
        return make_regularizer(name, p=self.p, lam=self.lam_, groups=groups, prior=prior)

    def _lam_value(self, anchored=False):
        """``lam`` with "auto" resolved: ``SVC_KERNEL_LAM`` (5) for the KL prior anchored on
        SVC's kernel, 1 otherwise."""
        if isinstance(self.lam, str):  # "auto"
            return SVC_KERNEL_LAM if anchored else 1.0
        return float(self.lam)

    def _auto_kl_prior(self):
        """The KL prior of ``regularizer="auto"``: the family's (weight 0.9 on SVC's kernel
        for the default ``kernels="svc+feature_rbf"``), else None (uniform)."""
        recipe = recipe_of(self.kernels)
        if recipe is None or self.views_ is not None or self.bank_ is None:
            return None
        return recipe.kl_prior(self.bank_.n_kernels)

    def _resolve_solver(self, task, combination="sum"):
        """Set ``solver_`` (``solver="auto"``: :func:`mklearn.solvers.choose_solver`) and
        return its :class:`~mklearn.solvers.SolverInfo`; ValueError if it cannot take the
        regulariser or the combination."""
        if combination == "product":
            part = _product.product_regularizer(self)
        else:
            part = self._regularizer_part(probe=True)
        auto = self.solver == "auto"
        self.solver_ = choose_solver(part, combination, task) if auto else self.solver
        info = get_solver(self.solver_, part, combination)
        if auto and getattr(self, "verbose", 0):
            print(f"solver='auto' chose {self.solver_!r}: {info.description}", flush=True)
        _check_lam_enters(self, info)
        return info

    def _check_learned_kernels(self, operator, weights):
        """A precomputed stack's learned kernels ``K(d)`` (one per row of ``weights``) must be
        symmetric (see :func:`mklearn.kernels.stack_checks.check_learned_kernel`); at uniform
        weights ``K(d)`` is a multiple of the sum that :func:`check_kernel_stack` checked."""
        if self._precomputed:
            for row in np.atleast_2d(weights):
                if not np.all(row == row[0]):
                    check_learned_kernel(operator.kernel_view, row, operator.matrix(row))

    def _own_training_points(self):
        """Give the bank its own copy of the training points it borrowed for the fit (the
        model must not change when the caller later changes X)."""
        if self.__dict__.pop("_borrowed_points", False):
            self.bank_.X_fit_ = self.bank_.X_fit_.copy()

    def _store_single(self, result, support, zero_sum=False):
        """Warn if ``result`` did not converge; set the fitted attributes of one MKL problem
        (weights at or below ``_WEIGHT_EPS`` of the largest reported as zero); ``zero_sum``:
        the dual coefficients sum to 0 (see :meth:`_drop_constant_expansion`)."""
        self._own_training_points()
        if not result.converged:
            warnings.warn(_convergence_message(self, result), ConvergenceWarning, stacklevel=3)
        weights = result.kernel_weights.copy()
        weights[weights <= _WEIGHT_EPS * max(weights.max(), 1e-300)] = 0.0
        self.kernel_weights_ = weights
        self.support_ = support
        self.dual_coef_ = result.alpha[support][None, :]
        self.intercept_ = np.array([result.intercept])
        self.objective_ = float(result.objective)
        self.duality_gap_ = float(result.duality_gap)
        self.relative_duality_gap_ = float(result.relative_duality_gap)
        self.n_iter_ = int(result.n_iter)
        self.n_smo_steps_ = int(result.n_smo_steps)
        self.history_ = result.history
        self._store_feature_coef([result])
        self._drop_constant_expansion(zero_sum)

    def _store_feature_coef(self, results):
        """``coef_`` (n_models, R) of a fit on low-rank features: the decision function is
        ``Phi(x) . coef_[c] + intercept_[c]``."""
        if getattr(self, "kernel_storage_", None) == "features":
            self.coef_ = np.array([r.feature_coef for r in results])

    def _drop_constant_expansion(self, zero_sum=True):
        """On identical training rows every kernel between a point and the training points is
        the same number, and ``sum_i dual_coef_i = 0`` (the SVM's equality constraint): the
        exact model is its intercept alone. Zero dual coefficients make it so, where
        rounding of that sum (e.g. 7e-18 with MWUMKL) gave other points either class. (Not
        for one-class models: their coefficients sum to ``nu n``.)"""
        if self.__dict__.pop("_constant_rows", False) and zero_sum:
            self.dual_coef_ = np.zeros_like(self.dual_coef_)

    def _kernel_expansion(self, X):
        """``sum_i dual_coef_i K(d)(x_i, x)`` for each test point, shape (n_test,) (one model)."""
        return self._expansions(X)[:, 0]

    def _expansions(self, X, block_bytes=PREDICT_BLOCK_BYTES):
        """``sum_i dual_coef_[c, i] K(d_c)(x_i, x)`` for each test point and model c, shape
        (n_test, n_models), from blocks of about ``block_bytes`` of test-versus-support
        kernel values."""
        if getattr(self, "low_rank_", None) is not None:
            return self._low_rank_expansions(X)
        weights = np.atleast_2d(self.kernel_weights_)
        active = np.flatnonzero(np.any(weights > 0, axis=0))
        if active.size == 0:  # no kernel in use: kernel 0 at weight 0 checks X, gives zeros
            active = np.arange(1)
        parts = [self._combine_cross(cross, weights, active)
                 for cross in self._cross_kernels(X, self.support_, active,
                                                  block_bytes=block_bytes)]
        return np.concatenate(parts) if parts else np.zeros((0, weights.shape[0]))

    def _cross_kernels(self, X, rows, active, validator=None, block_bytes=PREDICT_BLOCK_BYTES):
        """The base kernels ``active`` between the test points X and the training points
        ``rows`` (None: all), in blocks of test points of about ``block_bytes``: each of
        shape (n_block, n_rows, n_active).

        X is checked against the fit by ``validator`` (default this estimator: its
        ``n_features_in_`` and ``feature_names_in_``) or, precomputed, as a stack of shape
        (n_test, n_train, n_kernels); ValueError if it does not match.
        """
        n_kernels = np.atleast_2d(self.kernel_weights_).shape[1]
        if self._precomputed:
            stack = check_test_stack(X, self.n_train_, n_kernels)
            yield (stack if rows is None else stack[:, rows])[:, :, active]
            return
        if getattr(self, "bank_", None) is not None and self.bank_.reads_sequences:
            yield self.bank_.transform(X, rows=rows, kernel_indices=active)
            return
        views = getattr(self, "views_", None)  # models read by load_model have no views
        if views is not None:
            X = views.concatenate(X)
        X = validate_numeric(self if validator is None else validator, X, dtype=np.float64,
                             reset=False, accept_sparse="csr")
        n_rows = self.n_train_ if rows is None else len(rows)
        block = max(1, block_bytes // (8 * max(n_rows, 1) * active.size))
        training_range = getattr(self, "_feature_range", None)  # None: a loaded model
        n_far, example = 0, None
        for start in range(0, X.shape[0], block):
            points = X[start:start + block]
            points = points.toarray() if scipy.sparse.issparse(points) else points
            if training_range is not None:
                count, seen = count_far_outside(training_range, points)
                n_far, example = n_far + count, example or seen
            with np.errstate(over="ignore", invalid="ignore"):
                cross = self.bank_.transform(points, rows=rows, kernel_indices=active)
            if not np.isfinite(cross).all():
                raise ValueError(
                    "the kernels between X and the training points overflow: X has values far "
                    "outside the range of the training data (near the largest float); rescale "
                    "X as the training data was"
                )
            yield cross
        if n_far:
            warn_far_outside(validator or self, n_far, X.shape[0], *example, training_range)

    def _combine_cross(self, cross, weights, active):
        """``cross`` (n_test, n_SV, n_active) combined by each model's weights and dual
        coefficients: shape (n_test, n_models)."""
        scores = np.empty((cross.shape[0], weights.shape[0]))
        for c in range(weights.shape[0]):
            combined = (cross @ weights[c, active].astype(cross.dtype)).astype(np.float64)
            # one product per test point: its value does not depend on the batch it came in
            dual = np.ascontiguousarray(self.dual_coef_[c])
            scores[:, c] = np.matmul(combined[:, None, :], dual)[:, 0]
        return scores



def _class_index(scores):
    """Each point's class, as an index into ``classes_``, from the decision values: the
    sign (binary, shape (n,)) or the largest column (one-vs-rest, shape (n, n_classes))."""
    if scores.ndim == 1:
        return (scores > 0).astype(int)
    return np.argmax(scores, axis=1)


def _rows_of(X, picked):
    """Rows ``picked`` of a training input: an array, a sparse matrix, a DataFrame, a list of
    sequences or another array-like."""
    if scipy.sparse.issparse(X):
        return X.tocsr()[picked]
    if not (hasattr(X, "shape") or isinstance(X, (list, tuple))):
        X = np.asarray(X)
    return _safe_indexing(X, picked)


def _check_lam_enters(estimator, info):
    """ValueError for an explicit ``lam`` with a solver that has its own lambda instead."""
    lam = getattr(estimator, "lam", "auto")
    if not info.own_lam or (isinstance(lam, str) and lam == "auto"):
        return
    default = info.defaults.get(info.own_lam, _option_default(info.function, info.own_lam))
    raise ValueError(
        f"lam={lam!r} is the weight of a regulariser, which solver {estimator.solver_!r} does "
        f"not use; its own lambda is solver_options={{{info.own_lam!r}: ...}} "
        f"(default {default!r}): set that, and leave lam at 'auto'")


def _option_default(function, name):
    """The default of keyword ``name`` of ``function`` (None if it has none)."""
    parameter = inspect.signature(function).parameters.get(name)
    return None if parameter is None else parameter.default


def _check_classification_labels(y):
    """ValueError (with sklearn's "Unknown label type") for continuous targets, saying
    what to use for regression."""
    try:
        kind = type_of_target(y)
    except ValueError:
        return  # left to the full validation
    if kind in ("continuous", "continuous-multioutput"):
        raise ValueError(
            "Unknown label type: y holds continuous values, but MKLClassifier needs class "
            "labels; for regression use MKLRegressor (mklearn fit --task regression)"
        )


def _on_one_thread(solve, target):
    with numba_threads(1):
        return solve(target)


def _fit_task(estimator, operator, task, regularizer, options=None, function=None):
    """Run the estimator's solver that takes a task ("silp", "spg", a one-shot learner, or
    ``function``, a solver in feature space) on ``task`` with ``options`` (default: the
    checked ``solver_options``); the result's ``alpha`` becomes the signed coefficients
    ``v`` (one per training sample)."""
    info = get_solver(estimator.solver_, regularizer)
    if options is None:
        options = check_solver_options(estimator.solver_, info, estimator.solver_options)
    if function is None:
        function, options = info.function, {**info.defaults, **options}
    result = function(operator, None, None, regularizer, tol=estimator.tol,
                      max_iter=estimator.max_iter, task=task, **options)
    result.alpha = task.coefficients(result.alpha)
    return result


def _large_cost_note(estimator):
    """For a large C, why the gap may not close although the model is right: the primal
    bound holds ``C`` times the margins' violations, which rounding keeps above zero."""
    if not float(getattr(estimator, "C", 0.0)) >= _LARGE_COST:  # one-class: no C
        return ""
    return (
        f" (at C={float(estimator.C):g} the duality gap holds C times the tiny margin "
        "violations that rounding leaves, so it may not close although the model is the "
        "hard-margin one on separable data; a smaller C, e.g. 1e3, is solved to tol)"
    )


def _convergence_message(estimator, result):
    """What happened and what to do, for a fit that did not reach its gap tolerance."""
    info = SOLVERS[estimator.solver_]
    name, tolerance = _gap_tolerance(estimator, info)
    steps = f" ({result.n_smo_steps} SMO steps)" if result.n_smo_steps else ""
    where = (
        f"{estimator.solver_} stopped after {result.n_iter} {info.n_iter_unit}{steps} with "
        f"relative duality gap {result.relative_duality_gap:.2e} above {name}={tolerance:g}"
        + _large_cost_note(estimator)
    )
    if result.stop_reason == "max_iter":
        note = info.max_iter_note(estimator.solver_options, np.size(result.kernel_weights),
                                  result.n_iter) if info.max_iter_note else ""
        return (f"{where}; increase max_iter{note}, or increase {name} to accept a less "
                "precise solution")
    if info.one_shot:
        return (f"{where}: its SVM on the fixed kernel weights reached the tightest KKT "
                "tolerance, and rounding limits the gap; increase tol")
    return (
        f"{where}: no step decreased the objective (a kink of the objective or an inner SVM "
        f"too imprecise for the line search); {info.stall_advice}"
    )


def _gap_tolerance(estimator, info):
    """(name, value) of the tolerance the solver's relative duality gap is compared with:
    the estimator's ``tol``, or the solver option ``info.gap_tol_option``."""
    option = info.gap_tol_option
    if not option:
        return "tol", float(estimator.tol)
    options = {**info.defaults, **(estimator.solver_options or {})}
    value = options.get(option, _option_default(info.function, option))
    return f"solver_options['{option}']", float(value)


def _progress(estimator, target, plan=None, n_rows=None):
    """The progress bar of one solve (:class:`~mklearn.progress.FitProgress`), shown when
    ``verbose > 0``: its ETA from the plan's pass over the ``n_rows`` kernel rows (``plan``)
    and the records; ``max_iter`` is the total of records that carry no gap."""
    solver = getattr(estimator, "solver_", estimator.solver)
    label = f"{solver} (class {target})" if target is not None else solver
    passed = None if plan is None else plan.pass_seconds
    row = passed / n_rows if passed is not None and n_rows else None
    remaining = RemainingTime(passed, estimator.tol, estimator.max_iter, row_seconds=row)
    return FitProgress(estimator.verbose, label, remaining)
