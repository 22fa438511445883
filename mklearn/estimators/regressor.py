"""The MKL regressor: epsilon-insensitive support vector regression with learned kernel
weights."""

from __future__ import annotations

import time
import warnings
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from mklearn.distributed.partitions import on_partitions
from mklearn.estimators.kernel_input import _fit_task, _KernelInput
from mklearn.extending import Regularizer
from mklearn.kernels import fit_threads
from mklearn.progress import compile_time_of, seconds_since
from mklearn.solvers import check_solver_options, get_solver, solvers_for
from mklearn.solvers.tasks import RegressionTask
from mklearn.validation import (
    DegenerateModelWarning,
    at_bound,
    cap_costs,
    check_regression_targets,
    parameter_constraints,
    warn_if_capped,
)


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
    stack_passes_ : float or None
        Passes over the stack of base kernels the fit read, as in :class:`MKLClassifier`.
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
        with fit_threads(None):
            result = self._solve(operator, y, cost, regularizer, info, options, stacked)
        self.solve_time_ = seconds_since(start)
        warn_if_capped(self, cap, at_bound(np.abs(result.alpha), cost, cap))
        self._check_learned_kernels(operator, result.kernel_weights)
        self.stack_passes_ = operator.stack_passes
        self._store_single(result, np.flatnonzero(result.alpha != 0.0), zero_sum=True)
        return self

    def _solve(self, operator, y, cost, regularizer, info, options, stacked):
        """The solver's result on the training kernels (in feature space, on a task, or
        SMO-MKL's regression)."""
        task = RegressionTask(y, cost, self.epsilon)
        if self.kernel_storage_ == "features":
            function, options = self._solver_function(info, options)
            return _fit_task(self, operator, task, regularizer, options, function)
        if stacked or info.takes_task:
            return _fit_task(self, operator, task, regularizer, options)
        get_solver(self.solver_, regularizer)
        return info.regression_function(
            operator, y, cost, regularizer, epsilon=float(self.epsilon),
            tol=self.tol, max_iter=self.max_iter, **options,
        )

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
