"""scikit-learn estimators for Multiple Kernel Learning."""

from __future__ import annotations

import inspect
import sys
import time
import warnings
from dataclasses import replace
from numbers import Real

import numpy as np
import scipy.sparse
from joblib import Parallel, delayed, effective_n_jobs
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import (
    _check_sample_weight,
    _num_samples,
    check_is_fitted,
)

import mklearn._product_estimator as _product
from mklearn._sizes import MB, PREDICT_BLOCK_BYTES
from mklearn.distributed import active_client, local_jobs
from mklearn.distributed.partitions import is_dask_collection, on_partitions
from mklearn.distributed.points import collection_rows, partitioned_input, scattered_rows
from mklearn.extending import Regularizer
from mklearn.fit_plan import FitPlan, LongFitWarning, cheaper_routes, row_pass_seconds
from mklearn.formulation.regularizers import REGULARIZERS, make_regularizer
from mklearn.kernels import (
    APPROXIMATIONS,
    LOW_RANK_SAMPLES,
    SVC_KERNEL_LAM,
    is_string_kernels,
    numba_threads,
    recipe_of,
)
from mklearn.memory import auto_cache_size, gathered, plan_kernel_storage
from mklearn.progress import FitProgress, RemainingTime, compile_time_of, seconds_since
from mklearn.solvers import (
    SOLVERS,
    check_solver_options,
    choose_solver,
    get_solver,
    solvers_for,
)
from mklearn.solvers.tasks import RegressionTask
from mklearn.svm.smo import svm_heartbeat
from mklearn.training_operator import has_one_kernel, training_operator
from mklearn.validation import (
    DegenerateModelWarning,
    at_bound,
    cap_costs,
    check_label_types,
    check_learned_kernel,
    check_regression_targets,
    check_test_stack,
    count_far_outside,
    parameter_constraints,
    validate_numeric,
    warn_degenerate,
    warn_far_outside,
    warn_if_capped,
)
from mklearn.views import is_views, resolve_groups

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
        (:func:`mklearn.training_operator.training_operator`: a stack, a provider of rows
        with ``columns``, or low-rank features when ``kernel_approximation`` asks for them and
        the solver runs on them, ``feature_solver`` its feature-space function)."""
        return training_operator(self, X, y, columns=columns, feature_solver=feature_solver,
                                 on_workers=on_workers)

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
        symmetric (see :func:`mklearn.validation.check_learned_kernel`); at uniform weights
        ``K(d)`` is a multiple of the sum that :func:`check_kernel_stack` checked."""
        if self._precomputed:
            for row in np.atleast_2d(weights):
                if not np.all(row == row[0]):
                    check_learned_kernel(operator.kernel_major, row, operator.matrix(row))

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

    def _expansions(self, X):
        """``sum_i dual_coef_[c, i] K(d_c)(x_i, x)`` for each test point and model c, shape
        (n_test, n_models)."""
        if getattr(self, "low_rank_", None) is not None:
            return self._low_rank_expansions(X)
        weights = np.atleast_2d(self.kernel_weights_)
        active = np.flatnonzero(np.any(weights > 0, axis=0))
        if active.size == 0:  # no kernel in use: kernel 0 at weight 0 checks X, gives zeros
            active = np.arange(1)
        parts = [self._combine_cross(cross, weights, active)
                 for cross in self._cross_kernels(X, self.support_, active)]
        return np.concatenate(parts) if parts else np.zeros((0, weights.shape[0]))

    def _cross_kernels(self, X, rows, active, validator=None):
        """The base kernels ``active`` between the test points X and the training points
        ``rows`` (None: all), in blocks of test points of about ``PREDICT_BLOCK_BYTES``: each
        of shape (n_block, n_rows, n_active).

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
        block = max(1, PREDICT_BLOCK_BYTES // (8 * max(n_rows, 1) * active.size))
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


class MKLClassifier(_KernelInput, ClassifierMixin, BaseEstimator):
    """Multiple Kernel Learning SVM classifier: learns an SVM and the kernel weights together.

    The learned kernel is ``K(d) = sum_k d_k K_k`` over the base kernels ``K_k``; ``d`` minimises
    ``T(d) = r(d) + W(d)``, ``W(d)`` the C-SVC dual optimum with kernel ``K(d)`` (GMKL: Jain,
    Vishwanathan and Varma, KDD 2012, eq. 2; ALGORITHMS.md section 1).

    Parameters
    ----------
    kernels : str, KernelRecipe, KernelSpec or list of KernelSpec
        The base kernels. "svc+feature_rbf" (default): the kernel of ``SVC()`` (RBF with
        ``gamma="scale"`` on the features at their original scale,
        :func:`mklearn.kernels.svc_kernel`) followed by one RBF kernel of width 1 on each
        standardised feature, D + 1 kernels (:func:`mklearn.kernels.svc_feature_rbf_kernels`);
        with ``regularizer="auto"`` the KL prior puts weight 0.9 on SVC's kernel.
        "svc+simple_mkl": SVC's kernel followed by SimpleMKL's 13(D+1) family
        (:func:`mklearn.kernels.svc_simple_mkl_kernels`). "simple_mkl" is the 13(D+1) family
        of SimpleMKL alone, the papers' protocol (standardised features, 10 RBF widths and 3
        polynomial degrees on all features and on each feature, scaled by
        ``kernel_normalization``);
        "mwumkl" the 12 D family of MWUMKL
        (:func:`mklearn.kernels.mwumkl_kernels`; features used as given: scale them to [0, 1]
        first, as the paper did). With "precomputed", ``fit`` takes a stack of shape
        ``(n_samples, n_samples, n_kernels)`` (a 2-D array is one kernel) and ``predict`` takes
        ``(n_test, n_train, n_kernels)``; the stack is used as given (no normalisation). The
        solvers read it kernel by kernel: a stack whose memory is kernel-major, such as
        ``np.moveaxis(K, 0, -1)`` of a C-contiguous ``(n_kernels, n, n)`` array ``K``, is used
        without a copy; any other layout is copied once, in blocks.
    solver : {"auto", "spg", "pgd", "smo", "mirror", "mwu", "silp", "easymkl"}
        "auto" (default) picks by what the regulariser declares and by the combination
        (:func:`mklearn.solvers.choose_solver`): "smo" for "lp" and "kl" (no stack is built),
        "mirror" for "group", "spg" for "l1", for products and for user regularisers; the
        choice is ``solver_`` and is shown in the progress bar.
        "spg": SPG-GMKL (spectral step, non-monotone line search, inner precision tuning);
        "pgd": the projected-gradient baseline with Armijo search and a fixed inner tolerance;
        "smo": SMO-MKL (Vishwanathan et al., NIPS 2010) for "lp" and "kl": the dual solved by
        SMO directly, kernel rows computed on demand from X (no stack; ``cache_size``);
        its outer iterations are duality-gap checks, each after at most n SMO steps
        (``n_smo_steps_``; see :func:`mklearn.solvers.smo_mkl`);
        "mirror": mirror descent over the product of simplices (Nath et al., NIPS 2009), for
        "group" and "l1" (options ``step``, ``inner_tol``, ``precision_tuning``; see
        :func:`mklearn.solvers.mirror_descent`);
        "mwu": MWUMKL (Moeller et al., AISTATS 2014), l1 only, no SVM calls: kernel columns are
        computed on demand from X (no stack; ``cache_size``), a fixed number of iterations set by
        ``solver_options={"epsilon": 0.2}``, checked about 50 times (its outer iterations,
        which ``max_iter`` caps); it does not stop on ``tol``: ``epsilon`` sets its precision,
        and the relative gap it reaches (a few percent is usual) is reported without a
        warning (see :func:`mklearn.solvers.mwu_mkl` for ``variant``, ``iterations``,
        ``evaluate_objective``);
        "silp": SILP (Sonnenburg et al., JMLR 2006), l1 only: column generation with a HiGHS
        master LP, ``tol`` bounds ``eps_MKL`` and the relative gap, ``max_iter`` caps the LP
        solves (of the order of the number of kernels are needed); options
        ``interleaved`` (the chunking algorithm), ``inner_tol``, ``chunk_steps``, ``linadd``
        (string kernels with ``kernel_storage="rows"``: the interleaved algorithm on the
        linadd decomposition SVM, no kernel row ever formed; 10^5 sequences) (see
        :func:`mklearn.solvers.silp_mkl`);
        "easymkl": EasyMKL (Aiolli and Donini, Neurocomputing 2015), l1 (weights on the
        simplex), no MKL iterations: one QP for the weights, then the SVM with ``C`` on the
        learned kernel; options ``lam`` (in [0, 1], default 0.1), ``learner`` ("svm", or
        "komd": MKLpy's KOMD), ``qp_tol`` (the relative gap of the QP, in place of ``tol``,
        which is the final SVM's KKT tolerance), ``komd_lam``, ``komd_tol`` (see
        :func:`mklearn.solvers.easymkl.easymkl`).
    regularizer : {"auto", "l1", "lp", "kl", "l1_penalty", "group"} or Regularizer
        "auto" (default): "kl" when the solver is "auto" or "smo" and the kernels are summed,
        except for a single kernel with solver "auto" (a 2-D precomputed kernel, one spec);
        "l1" otherwise, so every solver works with the defaults and one kernel gets weight 1
        (the SVC with that kernel and C). The choice is ``regularizer_``. With the default
        kernels, "auto"'s KL prior ``d0`` is 0.9 on SVC's kernel and 0.1 spread evenly over
        the others (:meth:`mklearn.kernels.KernelRecipe.kl_prior`; the uniform prior for
        other kernels, and for ``regularizer="kl"`` named), with ``lam`` 5 (``lam="auto"``):
        the fit starts from ``SVC()`` and moves weight to other kernels as far as the data
        pay for it. Why: with C=1 and the default kernels it was within 0.005 of the better
        of ``SVC()`` and the standardised pipeline on 14 of the 16 sets of
        ``bench_defaults.py`` (5-fold, 250 points), lam 15 on 9 and lam 1 on 7 of the 14
        classification sets; l1 selects a few kernels, which overfit small noisy sets such as
        Liver; SMO-MKL builds no kernel stack: ``benchmarks/README.md``, ``docs/defaults.md``.
        KL weights are not normalised (``d_k >= d0_k``; ``sum_k d_k`` was 5 to 8 on the
        bundled sets with lam 1 and SimpleMKL's family), so with "kl" the learned kernel's
        scale, and with it the effective C, is learned too.
        "l1": weights on the simplex ``sum_k d_k = 1, d >= 0``; "lp": ``lam/2 ||d||_p^2`` on
        ``d >= 0`` (the SMO-MKL form); "kl": ``lam sum_k (d_k log(d_k / d0_k) - d_k + d0_k)``,
        the generalised KL divergence to the uniform prior ``d0 = 1/m`` (solver "smo");
        "l1_penalty": ``lam sum_k d_k`` on ``d >= 0`` (weights not normalised; solver "spg");
        "group": the (l_inf, l_1) mixed norm over ``groups`` (Nath et al., NIPS 2009): every
        group is used, kernels within a group are selected sparsely (solver "mirror"). An
        instance of a :class:`mklearn.extending.Regularizer` subclass (a built-in one such as
        ``LpNorm(1.5, 2.0)`` or your own, ``docs/extending.md``) is used as given (``p`` and
        ``lam`` are then unused); the solvers read the capabilities it declares.
    p : float > 1
        Norm of the "lp" regulariser.
    lam : float > 0 or "auto"
        Weight of the "lp" and "kl" regularisers (for ``combination="product"``, the l1
        penalty sigma). "auto" (default): 5 for the KL prior on SVC's kernel that
        ``regularizer="auto"`` uses with the default kernels (a larger lam keeps the weights
        nearer that prior: lam 1 left pima 0.048 below ``SVC()``,
        :data:`mklearn.kernels.recipes.SVC_KERNEL_LAM`), 1 otherwise. The value used is
        ``lam_``.
    C : float > 0
        SVM cost, as in :class:`sklearn.svm.SVC`: with one kernel (or all weight on one) and
        ``kernel_normalization="diagonal"`` the model is the SVC with that kernel and this C.
        Sample ``i`` gets the bound ``C * sample_weight[i] * class_weight[y[i]]``.
    tol : float > 0
        Stop when the relative duality gap (``relative_duality_gap_``) falls below ``tol``.
    max_iter : int >= 1
        Maximal number of outer iterations (per binary problem), the unit of ``n_iter_``.
        Every outer iteration ends in a duality-gap check and one ``history_`` record; one
        is, per solver:

        - "spg", "pgd": a step of the weights (a line search, with its SVM solves);
        - "mirror": a mirror-descent step of the weights;
        - "smo": the SMO core run until its KKT tolerance is met or for n steps
          (``n_smo_steps_`` counts the steps);
        - "silp": a solve of the master LP (with the SVM or SVM chunk before it);
        - "mwu": a check, every ``T // 50`` of the ``T`` iterations ``epsilon`` sets;
        - "easymkl": a gap check of the QP for the weights (after up to ``10 max(n, 1000)``
          SMO steps);
        - "average", "align", "alignf", "fheuristic", "pwmk": a gap check of the SVM on the
          fixed weights, its KKT tolerance tightened tenfold after each;
        - on low-rank kernels (``kernel_approximation``): "spg" as above; "smo" a gap check
          (a coordinate-ascent solve, then SPG steps); the one-shot learners as above.

        Stopping at ``max_iter`` above the tolerance warns (``ConvergenceWarning``) with the
        relative duality gap reached.
    kernel_normalization : {"diagonal", "trace"} or None
        Scaling of the base kernels built from X, fitted on the training data. "diagonal"
        (default): kernel k times ``n / trace(K_k)``, so that its mean diagonal entry is 1, as
        an RBF kernel's already is, and ``C`` means what it means in an SVC. "trace": unit
        trace (``1 / trace(K_k)``), the protocol of SimpleMKL and the papers' experiments
        (which used C of order 100 for it: the same model as "diagonal" with C / n). None: as
        computed. Precomputed stacks are always used as given.
    class_weight : dict, "balanced" or None
        Multiplies C for the samples of a class, as in :class:`sklearn.svm.SVC`; "balanced"
        uses ``n_samples / (n_classes * np.bincount(y))``. Every solver but "mwu" (one C for
        all samples) takes it.
    probability : bool
        Also fit Platt's sigmoid on 5-fold cross-validated decision values (as
        ``SVC(probability=True)``, one-vs-rest for more than two classes, then normalised),
        which enables :meth:`predict_proba` and :meth:`predict_log_proba`; the fit then
        costs six fits. :meth:`predict` still uses the decision function.
    n_jobs : int other than 0, or None
        Number of one-vs-rest problems (classes) solved in parallel threads, and of
        cross-validation folds for ``probability=True`` (joblib's meaning: None is 1, -1 all
        processors, -2 all but one). With one problem, or kernels computed on demand (whose
        row cache one solve uses at a time), the classes run one after the other and kernel
        rows are computed on ``n_jobs`` numba threads instead (:mod:`mklearn.kernels.threads`).
    solver_options : dict, optional
        Switches of the SPG ablation: ``spectral``, ``nonmonotone``, ``precision_tuning``,
        ``second_order``, ``fallback``, ``aggregate_bound``, ``coarse_start``,
        ``cutting_planes`` (bools),
        ``inner_tol`` and ``eta0`` (see :func:`mklearn.solvers.spg_gmkl`); each solver's keys
        are checked.
    kernel_dtype : {"float64", "float32"}
        Precision of the base-kernel stack built from X (float32 halves its memory). With
        on-demand kernel rows (solvers "smo" and "mwu"), float32 computes RBF values by a
        vectorised single-precision exp (within ``1e-7 (2 + |x|)`` relative for the exponent
        x, as LIBSVM's float kernel cache), faster than float64's and half the row cache's
        bytes.
    random_state : int, RandomState or None
        Shuffles the folds of the cross-validation for ``probability=True`` and draws the
        landmarks of low-rank kernels (``kernel_approximation``); the solvers are
        deterministic.
    verbose : int
        If > 0, print the solver ``solver="auto"`` chose and show a progress bar with the
        ``objective`` and the ``relative_duality_gap`` of each history record (its total is
        ``max_iter`` only where ``max_iter`` caps those records).
    cache_size : float > 0 or "auto"
        Megabytes of kernel rows kept in memory when kernels are computed on demand (solvers
        "smo" and "mwu", or ``kernel_storage="rows"``; LIBSVM's ``-m``). "auto" (default):
        every row if they fit in half of ``memory_budget``, else that half
        (:func:`mklearn.memory.auto_cache_size`); the megabytes used are ``cache_size_``.
    kernel_storage : {"auto", "stack", "rows"}
        How base kernels computed from X are held: "stack", the ``(n, n, m)`` stack in memory
        (fast for small n); "rows", rows computed on demand in an LRU cache of ``cache_size``
        MB plus ``O(m n)`` state (:class:`mklearn.kernels.operator.RowKernels`); "auto", the
        stack when it fits in ``memory_budget``, else rows. The choice is ``kernel_storage_``
        (and said in verbose output). Precomputed stacks are used as given.
    memory_budget : float or None
        Megabytes a fit may plan for; None: half the room under every memory limit (free
        memory, ``ulimit -v`` and ``-d``, the cgroup limit) when ``fit`` starts. A
        fit whose every path needs more raises ``ValueError`` before any kernel is computed,
        naming the bytes needed (see :mod:`mklearn.memory`).
    kernel_approximation : {"auto", "exact", "nystroem", "rff"}
        How base kernels computed from X are held. "exact": the kernels themselves
        (``kernel_storage`` then chooses stack or rows). "nystroem": each kernel as low-rank
        features ``K_k ~ Phi_k Phi_k'`` (:mod:`mklearn.kernels.low_rank`): exact for linear
        kernels and for kernels on columns with at most ``n_components`` distinct rows
        (binary, one-hot and categorical features), Nystroem on ``n_components`` landmarks
        shared by the kernels on the same columns otherwise; string kernels on sequences
        likewise (:mod:`mklearn.kernels.string_low_rank`: a spectrum kernel with at most
        ``n_components`` distinct d-mers by its counts, the others on ``n_components``
        landmark sequences); the solver then runs in feature
        space (:mod:`mklearn.solvers.feature_space`), in ``O(n R)`` memory and time per
        pass, ``R`` the total rank, never forming an ``n x n`` array. "rff": random Fourier
        features instead of Nystroem (RBF and Laplacian kernels only). "auto" (default):
        "nystroem" from ``LOW_RANK_SAMPLES`` (20,000) training points on when the solver
        runs in feature space ("smo", "spg", "average", "align", "alignf", "fheuristic") and
        ``kernel_storage`` is "auto", "exact" otherwise. The choice is
        ``kernel_approximation_``, said with the plan in verbose output; the measured error
        is ``approximation_error_``.
    n_components : int >= 1 or "auto"
        Landmarks (random features for "rff") of each approximated kernel; kernels on one
        column take at most 48 quantile landmarks. "auto" (default): 1,000 (at most
        n_samples), halved while the features do not fit in ``memory_budget``. An integer
        above n_samples raises ``ValueError``.
    groups : None, "view", "features", array-like of shape (n_kernels,) or list of lists
        Group of each base kernel, for ``regularizer="group"`` and for ``group_weights_``.
        "view": one group per view of multi-view input (the default for such input);
        "features": one group per feature block (kernels on the same columns; the default of
        "group" for single-matrix input); or one label per kernel, or a partition of the kernel
        indices (see :func:`mklearn.groups.check_groups`).
    combination : {"sum", "product"}
        "sum": ``K(d) = sum_k d_k K_k``. "product": ``K(d) = prod_k exp(-d_k D_k)``, an RBF
        kernel with one learned width per feature (or feature block), ``D_k`` gamma times the
        squared distance on block k of the standardised features (Jain, Vishwanathan and Varma,
        KDD 2012, sections 5.3-5.4; :mod:`mklearn.formulation.products`). Non-convex: SPG and
        PGD stop when
        the projected-gradient norm ``max_k |P(d - grad T) - d|_k`` is below ``tol`` (there is
        no duality gap; ``duality_gap_`` is NaN). ``kernels`` is then "features" (one width
        per column), a list of column-index lists (one width per block), a
        :class:`mklearn.formulation.products.FeatureProduct` (``gamma`` base width, default
        ``1 / n_features``, so all weights 1 is the RBF SVC with ``gamma="scale"`` on
        standardised data; the fit starts there), or "precomputed_distances" with a stack of
        squared distances ``(n, n, m)`` in ``fit`` and ``(n_test, n_train, m)`` in
        ``predict``. ``regularizer`` "l1" is ``lam * sum_k d_k`` on ``d >= 0`` (the paper's
        sigma; weights at zero drop features), "lp" is ``lam/2 ||d||_p^2``. Solvers "spg" and
        "pgd" only; no groups or multi-view input.

    Multi-view input: ``fit`` and ``predict`` also take a list or dict of 2-D arrays (views of
    the same samples, e.g. feature descriptors); ``kernels`` is applied to each view (a dict
    gives each view its own kernels) and the kernels are named ``view 'name': ...``.

    Attributes
    ----------
    solver_ : str
        The solver used (the one ``solver="auto"`` chose, or ``solver``).
    regularizer_ : str or Regularizer
        The regulariser used (the one ``regularizer="auto"`` chose, or ``regularizer``).
    lam_ : float
        The ``lam`` used (``lam="auto"`` resolved).
    kernel_weights_ : ndarray of shape (n_kernels,) or (n_classes, n_kernels)
        Learned weights d of the base kernels: an SVC with kernel ``sum_k d_k K_k`` and the same
        C reproduces the model. One row per class (one-vs-rest) when there are more than two
        classes.
    dual_coef_ : ndarray of shape (1, n_SV) or (n_classes, n_SV)
        ``alpha_i y_i`` of the support vectors (``y_i = +1`` for ``classes_[1]`` in the binary
        case, for the row's class in one-vs-rest).
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training set (union over classes), grouped by
        class in the order of ``classes_`` (increasing within a class), as in
        :class:`sklearn.svm.SVC`.
    n_support_ : ndarray of shape (n_classes,), dtype int32
        Number of support vectors of each class (for two classes too, as SVC): the first
        ``n_support_[0]`` entries of ``support_`` are of ``classes_[0]``, and so on.
    support_vectors_ : ndarray of shape (n_SV, n_features), or sparse
        The rows of X (multi-view input: the views side by side) of the support vectors, in
        the order of ``support_``. With ``kernels="precomputed"`` an empty array, as
        ``SVC(kernel="precomputed")`` has (``support_`` indexes the kernels' rows); not set
        for string kernels. With ``combination="product"`` on X: the support vectors after
        the product's standardisation (what its prediction reads).
    shape_fit_ : tuple of int
        The shape of X at fit: ``(n_samples, n_features)``, the shape of the precomputed
        kernel or stack, or ``(n_samples,)`` for sequences.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Bias of each decision function.
    objective_ : float or ndarray of shape (n_classes,)
        Final ``T(d)``.
    duality_gap_ : float or ndarray of shape (n_classes,)
        The duality gap ``U - L``: the best upper bound ``U`` on the optimal MKL objective
        found (a primal value) minus the best lower bound ``L`` (a dual value); absolute, in
        units of the objective. Zero at the optimum; every solver's stopping rule and the
        convergence warning use its relative form. NaN where no gap exists (products of
        kernels, MWUMKL with a hard margin left violated).
    relative_duality_gap_ : float or ndarray of shape (n_classes,)
        ``duality_gap_ / max(|U|, 1e-12)``: the quantity compared with ``tol``, shown as
        ``relative_duality_gap`` in the progress bar, the ``mklearn fit`` summary, its
        ``--json`` output and each ``history_`` record.
    history_ : list of dict, or one list per class
        One record per outer iteration (see ``max_iter``; "spg", "pgd" and "mirror" also
        record their starting point), the last one certifying the returned model:
        ``iteration``, ``objective``, ``relative_duality_gap``, ``n_svm_solves``, ``time``
        (seconds) and the solver's own measures under their own names (SILP's ``eps_mkl``,
        MWUMKL's ``lower``, ``upper`` and absolute ``duality_gap``; see
        :class:`mklearn.solvers.MKLResult`). The records are dicts
        (:class:`mklearn.solvers.result.HistoryRecord`) in which the former key ``"gap"``
        still reads ``relative_duality_gap``, with a ``FutureWarning``, until the next release.
    n_iter_ : int or ndarray of shape (n_classes,)
        Outer iterations (what one is per solver: see ``max_iter``).
    n_svm_solves_ : int or ndarray of shape (n_classes,)
        Inner SVM solves.
    n_smo_steps_ : int or ndarray of shape (n_classes,)
        SMO steps of the solvers whose inner unit is one ("smo", the QP of "easymkl", the
        one-shot learners' SVM on exact kernels); 0 for the others, whose inner solves
        ``n_svm_solves_`` counts.
    kernel_names_ : list of str
        Readable names of the base kernels (``view 'fou': rbf(sigma=2)`` for multi-view input).
    kernel_storage_ : {"stack", "rows", "features"}
        How the base kernels were held during the fit (see ``kernel_storage``; "features":
        low-rank features, see ``kernel_approximation``).
    kernel_approximation_ : {"exact", "nystroem", "rff"}
        ``kernel_approximation`` resolved.
    low_rank_ : LowRankMap
        Only for low-rank kernels: the fitted feature maps (landmarks, projections,
        ``ranks_``, ``exact_``) that give the features of new points.
    approximation_error_ : float
        Only for low-rank kernels: the relative Frobenius error of the sum of the
        approximated kernels on 400 training points that are not landmarks,
        ``||sum_k (K_k - Phi_k Phi_k')||_F / ||sum_k K_k||_F``.
    coef_ : ndarray of shape (n_models, R)
        Only for low-rank kernels: the weights of the features, so that the decision
        function of model c is ``Phi(x) . coef_[c] + intercept_[c]``.
    groups_ : KernelGroups or None
        The kernel groups (None when ``groups`` is None and the input has one view).
    group_names_ : list of str
        Name of each group (only with groups).
    group_weights_ : ndarray of shape (n_groups,) or (n_classes, n_groups)
        Share of the kernel weight in each group, ``sum_{k in j} d_k / sum_k d_k`` (only with
        groups). For "group" MKL the group sums are ``1 / lambda_j``, lambda the group weights
        of the paper's dual.
    views_ : Views or None
        Names and column counts of the views of multi-view input.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    class_weight_ : ndarray of shape (n_classes,)
        The weight of each class (ones without ``class_weight``).
    probA_, probB_ : ndarray of shape (1,) or (n_classes,)
        Only with ``probability=True``: Platt's sigmoid
        ``P(class | f) = 1 / (1 + exp(probA_ * f + probB_))`` of each decision function.
    feature_names_in_ : ndarray of shape (n_features,)
        Column names of X when it has them (a DataFrame); they also name the kernels.
    kernel_time_, solve_time_ : float
        Seconds spent building the base kernels and solving, without numba's compilation.
    compile_time_ : float
        Seconds numba spent compiling, or loading its cached machine code, during the fit:
        the first fit after an install pays it (``make demo`` and ``make test`` warm the
        cache).
    product_ : FittedProduct or "distances"
        Only with ``combination="product"``: the fitted standardisation and blocks (or
        "distances" for precomputed distances).

    Raises
    ------
    ValueError
        On invalid parameters, input with NaN/inf, a single class, continuous targets (use
        :class:`MKLRegressor`), kernel stacks of the wrong shape or not symmetric PSD, an
        unsupported solver/regulariser pair, a ``class_weight`` for a class not in y,
        negative ``sample_weight``, or weights with solver "mwu".
    """

    _parameter_constraints: dict = parameter_constraints(
        "kernels", "kernel_normalization", "class_weight", "probability", "n_jobs", "p", "lam",
        "C", "tol", "max_iter", "solver_options", "kernel_dtype", "random_state", "verbose",
        "cache_size", "kernel_storage", "memory_budget", "groups", "combination",
        "kernel_approximation", "n_components",
        solver=[StrOptions(set(SOLVERS) | {"auto"})],
        regularizer=[StrOptions(REGULARIZERS.names("auto")), Regularizer],
    )

    def __init__(
        self,
        *,
        kernels="svc+feature_rbf",
        solver="auto",
        regularizer="auto",
        p=2.0,
        lam="auto",
        C=1.0,
        tol=1e-3,
        max_iter=500,
        kernel_normalization="diagonal",
        class_weight=None,
        probability=False,
        n_jobs=None,
        solver_options=None,
        kernel_dtype="float64",
        random_state=None,
        verbose=0,
        cache_size="auto",
        kernel_storage="auto",
        memory_budget=None,
        groups=None,
        combination="sum",
        kernel_approximation="auto",
        n_components="auto",
    ):
        self.kernels = kernels
        self.kernel_normalization = kernel_normalization
        self.class_weight = class_weight
        self.probability = probability
        self.n_jobs = n_jobs
        self.solver = solver
        self.regularizer = regularizer
        self.p = p
        self.lam = lam
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.solver_options = solver_options
        self.kernel_dtype = kernel_dtype
        self.random_state = random_state
        self.verbose = verbose
        self.cache_size = cache_size
        self.kernel_storage = kernel_storage
        self.memory_budget = memory_budget
        self.groups = groups
        self.combination = combination
        self.kernel_approximation = kernel_approximation
        self.n_components = n_components

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None):
        """Learn the kernel weights and the SVM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples, n_kernels)
            Training data, or the base-kernel stack when ``kernels="precomputed"``.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights: sample i gets the SVM bound ``C * sample_weight[i]``
            (times its class weight), as in :class:`sklearn.svm.SVC`.

        Returns
        -------
        self : MKLClassifier
        """
        with compile_time_of(self):
            return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight):
        self._validate_params()
        if self.regularizer == "lp" and not self.p > 1:
            raise ValueError(
                f"the 'p' parameter must be > 1 for the lp regularizer, got {self.p}; for p = 1 "
                "use regularizer='l1'"
            )
        product = self.combination == "product"
        if product:
            _product.check_product_params(self)
            self.kernel_approximation_ = "exact"
            self._exact_only("products of kernels")
        elif isinstance(self.kernels, str) and self.kernels == "precomputed_distances":
            raise ValueError(
                "kernels='precomputed_distances' needs combination='product'; for a sum of "
                "kernels pass kernel values with kernels='precomputed'"
            )
        self.regularizer_ = self._regularizer_choice(X)
        info = self._resolve_solver("classification", self.combination)
        X, y, sample_weight = self._fit_input(X, y, sample_weight, info)
        options = {**info.defaults, **check_solver_options(self.solver_, info,
                                                           self.solver_options)}
        y = check_label_types(y)
        _check_classification_labels(y)
        start = time.perf_counter()
        columns = info.input == "columns"
        if product:
            self._held_plan = None  # no rows to plan: the product's own path
            operator, y = _product.product_input(self, X, y)
        else:
            self.__dict__.pop("product_", None)
            operator, y = self._training_kernels(X, y, columns=columns,
                                                 feature_solver=info.feature_function,
                                                 on_workers=info.state_on_workers)
        self.kernel_time_ = seconds_since(start)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError(
                f"y contains one class only ({self.classes_.tolist()[0]!r}); MKL classification "
                "needs labels of at least two classes"
            )
        targets = [self.classes_[1]] if self.classes_.size == 2 else list(self.classes_)
        plan = self._plan_fit(info, len(targets))
        cost = self._costs(y, sample_weight)
        if info.per_sample_costs:
            cost, cap = cap_costs(cost, operator, len(y))
        else:  # one C, which only caps a normalised alpha: no overflow
            cost = self._one_cost(cost)
        if columns:
            options.setdefault("cache_size", self._cache_megabytes(len(y), operator.n_kernels))
        if product:
            options.setdefault("d0", operator.initial_weights())
            self.groups_ = None
            regularizer = _product.product_regularizer(self)
        else:
            self.groups_ = self._kernel_groups()
            regularizer = self._regularizer_part(self.groups_)
        get_solver(self.solver_, regularizer, self.combination)  # the instance's capabilities

        function, options = self._solver_function(info, options)

        def solve(target):
            y_pm = np.where(y == target, 1.0, -1.0)
            with _progress(self, target if len(targets) > 1 else None, plan, y.size) as bar, \
                    svm_heartbeat(None if bar is None else bar.svm_heartbeat):
                beats = ({"heartbeat": bar.heartbeat} if bar is not None and info.heartbeat
                         and self.kernel_storage_ != "features" else {})
                result = function(
                    operator,
                    y_pm,
                    cost,
                    regularizer,
                    tol=self.tol,
                    max_iter=self.max_iter,
                    callback=None if bar is None else bar.callback,
                    **options,
                    **beats,
                )
            return result, y_pm

        start = time.perf_counter()
        # classes side by side (each on one numba thread) when the kernels can be shared,
        # else one after the other with n_jobs numba threads for the kernel rows
        n_jobs = local_jobs(self.n_jobs)  # 1 inside a Dask worker's task
        if (len(targets) > 1 and effective_n_jobs(n_jobs) > 1
                and operator.capabilities.thread_safe):
            results = Parallel(n_jobs=n_jobs, prefer="threads")(
                delayed(_on_one_thread)(solve, target) for target in targets
            )
        else:
            with numba_threads(n_jobs):
                results = [solve(target) for target in targets]
        for result, _ in results:
            if not result.converged:
                message = (_product.product_convergence_message if product
                           else _convergence_message)(self, result)
                warnings.warn(message, ConvergenceWarning, stacklevel=2)
        self.solve_time_ = seconds_since(start)
        if info.per_sample_costs:
            warn_if_capped(self, cap, sum(at_bound(r.alpha, cost, cap) for r, _ in results))
        if not product:
            self._check_learned_kernels(operator, [r.kernel_weights for r, _ in results])
        self._store(results, len(self.kernel_names_), y)
        if product:
            _product.finish_product(self)
        self._store_fit_shape(X)
        self._warn_if_one_class(X, y)
        for name in ("probA_", "probB_"):
            self.__dict__.pop(name, None)
        if self.probability:
            self._fit_platt(X, y, sample_weight)
        return self

    def _warn_if_one_class(self, X, y):
        """A :class:`~mklearn.validation.DegenerateModelWarning` when the model predicts one
        class for every training point checked (at most ``ONE_CLASS_CHECK_POINTS``, evenly
        spaced) where y has several (kernels too flat for C: every point a margin error)."""
        if is_views(X):
            return
        n = _num_samples(X)
        picked = np.unique(np.linspace(0, n - 1, min(n, ONE_CLASS_CHECK_POINTS)).astype(int))
        if np.unique(y[picked]).size < 2:
            return
        scores = np.asarray(self.decision_function(self._named(_rows_of(X, picked))))
        labels = _class_index(scores)
        # equal decisions everywhere: constant kernels, which their own warning names
        if np.unique(labels).size == 1 and np.ptp(scores, axis=0).max() > 0:
            warn_degenerate(self, (
                f"it predicts class {self.classes_[labels[0]].tolist()!r} for all "
                f"{picked.size} training points "
                f"checked, though they hold {np.unique(y[picked]).size} classes: at "
                f"C={self.C:g} the kernels are too flat to separate any point (every point "
                "costs less as a margin error). Raise C (search it, e.g. GridSearchCV over "
                "C), or scale the kernels (kernel_normalization='diagonal')"))

    def _named(self, rows):
        """Rows of a Dask array computed, under the feature names the fit kept (its
        dataframe's columns); other rows as they are."""
        if not is_dask_collection(rows):
            return rows
        rows = np.asarray(rows)
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            return rows
        import pandas as pd

        return pd.DataFrame(rows, columns=names)

    def _regularizer_choice(self, X=None):
        """``regularizer`` with "auto" resolved: "kl" for a sum of kernels with solver
        "auto" (SMO-MKL), "l1" for one kernel with solver "auto" (its weight is then 1: the
        SVC) and for products (which take no KL); with a solver named, the regulariser it
        is made for (:attr:`~mklearn.solvers.SolverInfo.auto_regularizer`: "kl" for SMO-MKL,
        "l1" for the others)."""
        if not (isinstance(self.regularizer, str) and self.regularizer == "auto"):
            return self.regularizer
        if self.combination != "sum":
            return "l1"
        if self.solver != "auto":
            return SOLVERS[self.solver].auto_regularizer
        return "l1" if has_one_kernel(self.kernels, X) else "kl"

    def _one_cost(self, cost):
        """The one C of a solver that takes no per-sample bounds; ValueError when the
        samples' bounds differ."""
        if not np.all(cost == cost[0]):
            raise ValueError(
                f"solver {self.solver_!r} takes one C for all samples (its normalised "
                "algorithm has no per-sample bounds): drop class_weight and sample_weight, or "
                "use solver='auto' or 'spg'"
            )
        return float(cost[0])

    def _costs(self, y, sample_weight):
        """Per-sample SVM bounds ``C * sample_weight_i * class_weight[y_i]``, shape (n,);
        sets ``class_weight_``. ValueError for weights of absent classes or negative weights."""
        if isinstance(self.class_weight, dict):
            missing = [c for c in self.class_weight if not np.any(self.classes_ == c)]
            if missing:
                raise ValueError(
                    f"class_weight names class(es) {missing} that are not in y (classes "
                    f"{self.classes_.tolist()}); give weights for classes of y only"
                )
        self.class_weight_ = compute_class_weight(self.class_weight, classes=self.classes_, y=y)
        weights = _check_sample_weight(sample_weight, np.empty((len(y), 0)),
                                       ensure_non_negative=True)
        cost = float(self.C) * weights * self.class_weight_[np.searchsorted(self.classes_, y)]
        weighted = np.unique(y[cost > 0])
        if weighted.size < 2:
            raise ValueError(
                f"only {weighted.size} class has samples of positive weight (sample_weight "
                "times class_weight); MKL classification needs two classes with positive weight"
            )
        return cost

    def _fit_platt(self, X, y, sample_weight):
        """Platt's sigmoids on 5-fold cross-validated decision values (as SVC), fitted by
        scikit-learn's sigmoid calibration."""
        from sklearn.calibration import _SigmoidCalibration
        from sklearn.model_selection import StratifiedKFold, cross_val_predict

        folds = StratifiedKFold(5, shuffle=True, random_state=self.random_state)
        inner = clone(self).set_params(probability=False, verbose=0, n_jobs=None)
        if isinstance(self.class_weight, dict):  # cross_val_predict gives y as 0, 1, ...
            inner.set_params(class_weight={int(np.searchsorted(self.classes_, label)): weight
                                           for label, weight in self.class_weight.items()})
        params = None if sample_weight is None else {"sample_weight": sample_weight}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            scores = cross_val_predict(inner, X, y, cv=folds, method="decision_function",
                                       params=params, n_jobs=self.n_jobs)
        scores = scores.reshape(len(y), -1)
        targets = self.classes_[1:] if self.classes_.size == 2 else self.classes_
        weights = None if sample_weight is None else np.asarray(sample_weight, float)
        sigmoids = [_SigmoidCalibration().fit(scores[:, c], (y == target).astype(float),
                                              weights)
                    for c, target in enumerate(targets)]
        self.probA_ = np.array([s.a_ for s in sigmoids])
        self.probB_ = np.array([s.b_ for s in sigmoids])

    def _store(self, results, n_kernels, y):
        self._own_training_points()
        weights = np.array([r.kernel_weights for r, _ in results])
        # relative to each model's largest weight (lp weights scale with the kernels' values)
        largest = np.maximum(weights.max(axis=1, keepdims=True), 1e-300)
        weights[weights <= _WEIGHT_EPS * largest] = 0.0
        alphas = np.array([r.alpha * y_pm for r, y_pm in results])
        support = np.flatnonzero(np.any(alphas != 0.0, axis=0))
        codes = np.searchsorted(self.classes_, y[support])
        order = np.argsort(codes, kind="stable")  # grouped by class, as SVC orders them
        self.support_ = support[order]
        self.n_support_ = np.bincount(codes, minlength=self.classes_.size).astype(np.int32)
        self.dual_coef_ = alphas[:, self.support_]
        self.intercept_ = np.array([r.intercept for r, _ in results])
        self.objective_ = np.array([r.objective for r, _ in results])
        self.duality_gap_ = np.array([r.duality_gap for r, _ in results])
        self.relative_duality_gap_ = np.array([r.relative_duality_gap for r, _ in results])
        self.n_iter_ = np.array([r.n_iter for r, _ in results])
        self.n_svm_solves_ = np.array([r.n_svm_solves for r, _ in results])
        self.n_smo_steps_ = np.array([r.n_smo_steps for r, _ in results])
        self.history_ = [r.history for r, _ in results]
        if len(results) == 1:
            weights = weights[0]
            self.objective_ = float(self.objective_[0])
            self.duality_gap_ = float(self.duality_gap_[0])
            self.relative_duality_gap_ = float(self.relative_duality_gap_[0])
            self.n_iter_ = int(self.n_iter_[0])
            self.n_svm_solves_ = int(self.n_svm_solves_[0])
            self.n_smo_steps_ = int(self.n_smo_steps_[0])
            self.history_ = self.history_[0]
        self.kernel_weights_ = weights
        self._store_feature_coef([r for r, _ in results])
        self._drop_constant_expansion()
        if self.groups_ is not None:
            self.group_names_ = list(self.groups_.names)
            sums = np.array([self.groups_.sum(w) for w in np.atleast_2d(weights)])
            shares = sums / np.maximum(sums.sum(axis=1, keepdims=True), 1e-300)
            self.group_weights_ = shares[0] if len(results) == 1 else shares
        else:
            for name in ("group_names_", "group_weights_"):
                self.__dict__.pop(name, None)

    def _store_fit_shape(self, X):
        """SVC's ``shape_fit_`` and, for a sum of kernels, its ``support_vectors_``: the
        support's training rows of numeric X, empty for precomputed kernels (as
        ``SVC(kernel="precomputed")``), not set for string kernels (products set their own)."""
        strings = is_string_kernels(self.kernels)
        if self._precomputed:
            self.shape_fit_ = tuple(np.shape(X))
        else:
            self.shape_fit_ = (self.n_train_,) if strings else (self.n_train_,
                                                                 self.n_features_in_)
        if self.combination == "product":
            return
        self.__dict__.pop("support_vectors_", None)
        if self._precomputed:
            self.support_vectors_ = np.empty((0, 0))
        elif strings:
            return
        elif getattr(self, "low_rank_", None) is not None:  # the model is coef_ on features
            self.support_vectors_ = np.empty((0, self.n_features_in_))
        else:
            self.support_vectors_ = self.bank_.X_fit_[self.support_]

    def _check_before_kernels(self, bank):
        """The groups are checked against the kernel count before any kernel is computed."""
        self._kernel_groups(bank.n_kernels, bank)

    def _kernel_groups(self, n_kernels=None, bank=None):
        """The validated kernel groups (None without groups); ValueError for bad groups."""
        groups = self.groups
        if groups is None and self.regularizer == "group" and self.views_ is None:
            if self._precomputed:
                raise ValueError(
                    "regularizer='group' with kernels='precomputed' needs groups=: one group "
                    "label per kernel"
                )
            groups = "features"
        bank = self.bank_ if bank is None else bank
        return resolve_groups(
            groups,
            len(self.kernel_names_) if n_kernels is None else n_kernels,
            views=self.views_,
            view_codes=getattr(self, "_view_codes", None),
            specs=None if bank is None else list(bank.specs),
        )

    # -------------------------------------------------------------- predict
    @on_partitions
    def decision_function(self, X):
        """Signed distance to the separating surface.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features), or (n_test, n_train, n_kernels)
            Test data, or the test-versus-training base-kernel stack when precomputed.
            A ``dask.array.Array`` partitioned by rows gives a Dask array with its row
            chunks, computed block by block (:mod:`mklearn.distributed.partitions`).

        Returns
        -------
        ndarray of shape (n_test,) or (n_test, n_classes)
            Positive values favour ``classes_[1]`` (binary) or the column's class.
        """
        check_is_fitted(self)
        if getattr(self, "product_", None) is not None:
            return _product.product_decision(self, X)
        scores = self._expansions(X) + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    @on_partitions
    def predict(self, X):
        """Predicted class labels, shape (n_test,)."""
        index = _class_index(self.decision_function(X))
        return self.classes_[index]

    def _has_probability(self):
        if not self.probability:
            raise AttributeError(
                "predict_proba is not available when probability=False; fit with "
                "probability=True"
            )
        return True

    @available_if(_has_probability)
    @on_partitions
    def predict_proba(self, X):
        """Class probabilities by Platt scaling of the decision values.

        ``P(class | f) = 1 / (1 + exp(probA_ f + probB_))`` per decision function (Platt,
        1999, as ``SVC(probability=True)``; the sigmoids are fitted on 5-fold
        cross-validated decision values); for more than two classes the one-vs-rest
        probabilities are normalised to sum to 1.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features), or (n_test, n_train, n_kernels)
            A ``dask.array.Array`` partitioned by rows gives a Dask array with its row
            chunks, computed block by block (:mod:`mklearn.distributed.partitions`).

        Returns
        -------
        ndarray of shape (n_test, n_classes)
            Columns in the order of ``classes_``.

        Raises
        ------
        AttributeError
            If ``probability=False``.
        """
        check_is_fitted(self, "probA_")
        scores = np.asarray(self.decision_function(X)).reshape(_num_samples(X), -1)
        proba = expit(-(scores * self.probA_ + self.probB_))
        if self.classes_.size == 2:
            return np.column_stack([1.0 - proba[:, 0], proba[:, 0]])
        total = proba.sum(axis=1, keepdims=True)
        uniform = np.full_like(proba, 1.0 / proba.shape[1])
        return np.where(total > 0, proba / np.where(total > 0, total, 1.0), uniform)

    @available_if(_has_probability)
    @on_partitions
    def predict_log_proba(self, X):
        """``log(predict_proba(X))``, shape (n_test, n_classes)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


class MKLRegressor(_KernelInput, RegressorMixin, BaseEstimator):
    """Multiple Kernel Learning support vector regression (epsilon-insensitive loss).

    Learns ``f(x) = sum_k d_k sum_i beta_i K_k(x_i, x) + b`` with lp-norm (or KL) regularised
    kernel weights, solved in the dual by SMO-MKL (Vishwanathan et al., NIPS 2010, eq. 24-27;
    ALGORITHMS.md section 2): :func:`mklearn.solvers.smo_mkl_regression`.

    Parameters
    ----------
    kernels : str, KernelRecipe, KernelSpec or list of KernelSpec
        As in :class:`MKLClassifier` (default "svc+feature_rbf": the kernel of ``SVR()`` on
        all features, then one RBF of width 1 on each standardised feature, D + 1 kernels;
        :func:`mklearn.kernels.svc_feature_rbf_kernels` says why the polynomials and the
        other widths are left out). With
        "precomputed", ``fit`` takes ``(n, n, m)`` and ``predict`` takes
        ``(n_test, n_train, m)``.
    solver : {"auto", "smo", "silp", "spg"}
        "auto" (default): "smo" for "lp" and "kl", "spg" for "l1" and other regularisers
        (:func:`mklearn.solvers.choose_solver`; the choice is ``solver_``). "smo": SMO-MKL;
        kernel rows are computed on demand (``cache_size``). "silp": SILP column generation
        (Sonnenburg et al., JMLR 2006; ``solver_options={"interleaved": True}`` for the
        chunking algorithm, see :func:`mklearn.solvers.silp_mkl`); "spg": SPG-GMKL with the
        epsilon-SVR as inner problem. "silp" and "spg" build the base-kernel stack.
        "average", "align", "alignf", "fheuristic": weights computed once (uniform,
        centred alignments, ALIGNF, uncentred alignments with the real targets; see
        :mod:`mklearn.solvers.seeds`), then one epsilon-SVR on ``K(d)``; kernel rows are
        computed on demand and the regulariser does not enter.
    regularizer : {"lp", "kl", "l1"} or mklearn.extending.Regularizer
        As in :class:`MKLClassifier`; "l1" (the simplex) is solved by "spg" or "silp".
    p : float > 1
        Norm of the "lp" regulariser.
    lam : float > 0
        Weight of the regulariser.
    C : float > 0
        Cost of the epsilon-insensitive loss, as in :class:`sklearn.svm.SVR` (with
        ``kernel_normalization="diagonal"``); sample i gets ``C * sample_weight[i]``.
    epsilon : float >= 0
        Half-width of the insensitive tube, in units of y.
    tol : float > 0
        Stop when the relative duality gap falls below ``tol``.
    max_iter : int >= 1
        Maximal number of outer iterations, as in :class:`MKLClassifier`: duality-gap checks
        (each after at most 2n SMO steps) for "smo", steps of the weights for "spg", LP
        solves for "silp", gap checks of the SVM for the one-shot learners.
    kernel_normalization : {"diagonal", "trace"} or None
        Scaling of the base kernels built from X, as in :class:`MKLClassifier` (default
        "diagonal": mean diagonal entry 1; "trace": unit trace, the papers' protocol).
    cache_size : float > 0 or "auto"
        Megabytes of kernel rows kept in memory (LIBSVM's ``-m``); "auto" as in
        :class:`MKLClassifier`.
    kernel_storage, memory_budget
        As in :class:`MKLClassifier`: how kernels computed from X are held ("auto", "stack"
        or "rows"; ``kernel_storage_`` says which) and the megabytes a fit may plan for.
    kernel_approximation, n_components
        As in :class:`MKLClassifier`: low-rank features from ``LOW_RANK_SAMPLES`` points on
        by default (``kernel_approximation_``, ``approximation_error_``, ``low_rank_`` and
        ``coef_`` as there).
    random_state : int, RandomState or None
        Draws the landmarks of low-rank kernels.
    kernel_dtype : {"float64", "float32"}
        Precision of a stack built from X (unused by the on-demand solver).
    verbose : int
        Unused; kept for a common signature.
    solver_options : dict, optional
        Options of the "silp" or "spg" solver (e.g. ``interleaved``, ``inner_tol``).

    Attributes
    ----------
    solver_ : str
        The solver used.
    kernel_weights_ : ndarray of shape (n_kernels,)
        Learned kernel weights d.
    dual_coef_ : ndarray of shape (1, n_SV)
        ``beta_i = a+_i - a-_i`` of the support vectors.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors.
    intercept_ : ndarray of shape (1,)
        The bias b (the one minimising the training loss at the final weights).
    objective_ : float
        MKL objective reached.
    duality_gap_, relative_duality_gap_ : float
        Absolute and relative duality gap certifying it (defined in :class:`MKLClassifier`).
    n_iter_ : int
        Outer iterations (see ``max_iter``).
    n_smo_steps_ : int
        SMO steps, as in :class:`MKLClassifier`.
    kernel_names_ : list of str
        Readable names of the base kernels.

    Raises
    ------
    ValueError
        On invalid parameters, non-finite input, targets that are not real numbers, kernel
        stacks of the wrong shape, a regulariser the solver cannot take, or negative
        ``sample_weight``.
    TypeError
        At construction, for a parameter of :class:`MKLClassifier` only (``groups``,
        ``class_weight``, ``probability``, ``n_jobs``, ``random_state``, ``combination``):
        Python's "unexpected keyword argument". Group MKL (``regularizer="group"``) is
        classification only; weight samples with ``fit(..., sample_weight=...)``.
    """

    # No ``groups``: no regression solver (smo, silp, spg, the one-shot weights) takes the
    # group regulariser, so the parameter could only relabel kernel_weights_. Its absence
    # is Python's TypeError naming it; a clearer one would need **kwargs in __init__,
    # which scikit-learn's checks read as a parameter and forbid raising on.

    _parameter_constraints: dict = parameter_constraints(
        "kernels", "kernel_normalization", "p", "epsilon", "tol", "max_iter", "cache_size",
        "kernel_storage", "memory_budget", "kernel_dtype", "verbose", "solver_options",
        "kernel_approximation", "n_components", "random_state", "C",
        solver=[StrOptions({"auto", *solvers_for("regression")})],
        regularizer=[StrOptions({"lp", "kl", "l1"}), Regularizer],
        lam=[Interval(Real, 0, None, closed="neither")],
    )

    def __init__(
        self,
        *,
        kernels="svc+feature_rbf",
        solver="auto",
        regularizer="lp",
        p=2.0,
        lam=1.0,
        C=1.0,
        epsilon=0.1,
        tol=1e-3,
        max_iter=500,
        kernel_normalization="diagonal",
        cache_size="auto",
        kernel_storage="auto",
        memory_budget=None,
        kernel_dtype="float64",
        verbose=0,
        solver_options=None,
        kernel_approximation="auto",
        n_components="auto",
        random_state=None,
    ):
        self.kernels = kernels
        self.solver = solver
        self.regularizer = regularizer
        self.p = p
        self.lam = lam
        self.C = C
        self.epsilon = epsilon
        self.tol = tol
        self.max_iter = max_iter
        self.kernel_normalization = kernel_normalization
        self.cache_size = cache_size
        self.kernel_storage = kernel_storage
        self.memory_budget = memory_budget
        self.kernel_dtype = kernel_dtype
        self.verbose = verbose
        self.solver_options = solver_options
        self.kernel_approximation = kernel_approximation
        self.n_components = n_components
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        """Learn the kernel weights and the regression function.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples, n_kernels)
            Training data, or the base-kernel stack when ``kernels="precomputed"``.
        y : array-like of shape (n_samples,)
            Real targets.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights: sample i gets the bound ``C * sample_weight[i]`` (as
            :class:`sklearn.svm.SVR`).

        Returns
        -------
        self : MKLRegressor
        """
        with compile_time_of(self):
            return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight):
        self._validate_params()
        if self.regularizer == "lp" and not self.p > 1:
            raise ValueError(
                f"the 'p' parameter must be > 1 for the lp regularizer, got {self.p}"
            )
        info = self._resolve_solver("regression")
        X, y, sample_weight = self._fit_input(X, y, sample_weight, info)
        stacked = info.input != "columns"
        options = check_solver_options(self.solver_, info, self.solver_options)
        y = check_regression_targets(y)
        if y.shape[0] < 2:
            raise ValueError(
                f"MKLRegressor needs at least 2 samples, got n_samples={y.shape[0]}; fit on more "
                "data"
            )
        if np.ptp(y) <= 2 * self.epsilon:
            warnings.warn(
                f"all targets lie within a tube of width 2 * epsilon = {2 * self.epsilon:g} "
                f"(they span {np.ptp(y):.3g}), so the constant function is optimal and every "
                "prediction will be the same; lower epsilon (it is in units of y)",
                DegenerateModelWarning,
                stacklevel=2,
            )
        start = time.perf_counter()
        operator, y = self._training_kernels(X, y, columns=not stacked,
                                          feature_solver=info.feature_function)
        y = np.asarray(y, dtype=np.float64)
        self.kernel_time_ = seconds_since(start)
        self._plan_fit(info)
        regularizer = self._regularizer_part()
        cost = float(self.C) * _check_sample_weight(sample_weight, np.empty((len(y), 0)),
                                                    ensure_non_negative=True)
        cost, cap = cap_costs(cost, operator, len(y))
        start = time.perf_counter()
        if not stacked:
            options.setdefault("cache_size", self._cache_megabytes(len(y), operator.n_kernels))
        if self.kernel_storage_ == "features":
            function, options = self._solver_function(info, options)
            result = _fit_task(self, operator, RegressionTask(y, cost, self.epsilon),
                               regularizer, options, function)
        elif stacked or info.takes_task:
            result = _fit_task(self, operator, RegressionTask(y, cost, self.epsilon),
                               regularizer, options)
        else:
            get_solver(self.solver_, regularizer)
            result = info.regression_function(
                operator, y, cost, regularizer, epsilon=float(self.epsilon),
                tol=self.tol, max_iter=self.max_iter, **options,
            )
        self.solve_time_ = seconds_since(start)
        warn_if_capped(self, cap, at_bound(np.abs(result.alpha), cost, cap))
        self._check_learned_kernels(operator, result.kernel_weights)
        self._store_single(result, np.flatnonzero(result.alpha != 0.0), zero_sum=True)
        return self

    @on_partitions
    def predict(self, X):
        """Predicted targets, shape (n_test,).

        Parameters
        ----------
        X : array-like of shape (n_test, n_features), or (n_test, n_train, n_kernels)
            A ``dask.array.Array`` partitioned by rows gives a Dask array with its row
            chunks, computed block by block (:mod:`mklearn.distributed.partitions`).
            Test data, or the test-versus-training stack when precomputed.
        """
        check_is_fitted(self)
        return self._kernel_expansion(X) + self.intercept_[0]


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
