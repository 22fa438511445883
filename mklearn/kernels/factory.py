"""The operator a fit trains on, made from its input and kernel spec within the memory plan.

:func:`make_operator` is the one entry point the estimators call: it takes the input (a
numeric array, scipy.sparse, sequences for string kernels, multi-view input, a precomputed
stack, a Dask collection) and the estimator's kernel parameters, and returns one of the
operator types the solvers read (:class:`~mklearn.kernels.base.KernelOperator`): a stack
(the estimator's combination of it, :meth:`_stack_operator`), its columns
(:class:`~mklearn.kernels.columns.StackColumns`), rows computed from X
(:class:`~mklearn.kernels.columns.KernelColumns`, behind a row cache
:class:`~mklearn.kernels.operator.RowKernels`), string kernels, low-rank features
(:mod:`mklearn.kernels.low_rank`; of string kernels :mod:`mklearn.kernels.string_low_rank`),
or what a :class:`Placement` on a cluster makes of them.

The estimator is the plan: its parameters (``kernels``, ``kernel_storage``,
``memory_budget``, ``cache_size``, ``kernel_dtype``, ...) and its plan hooks
(``_plan_storage``, ``_approximation``, ``_cache_megabytes``, ``_hold``, ``_hold_rows``,
``_check_before_kernels``, ``_exact_only``, ``_keeps_training_points``,
``_drops_constants``, ``_stack_operator``) decide how the kernels are held; this module
builds what they decide and sets the fitted attributes that describe it (``bank_``,
``kernel_names_``, ``kernel_storage_``, ``n_train_``, ...).

Where the kernel passes run is the :class:`Placement`'s: this process by default; the Dask
placement (:data:`mklearn.distributed.DASK`) keeps a Dask collection in its partitions and
spreads per-kernel passes and state over an active cluster.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
import scipy.sparse

from mklearn._sizes import BAND_BYTES
from mklearn.kernels.bank import KernelBank, feature_block_bytes
from mklearn.kernels.checks import (
    densify,
    feature_range,
    is_dask_collection,
    is_views,
    kernel_is_constant,
    rows_are_identical,
    validate_numeric,
    warn_constant_model,
)
from mklearn.kernels.columns import KernelColumns, StackColumns
from mklearn.kernels.low_rank import LowRankMap, low_rank_bytes, low_rank_kernels
from mklearn.kernels.memory_limits import budget_bytes, stack_bytes
from mklearn.kernels.operator import RowKernels, row_path_bytes
from mklearn.kernels.recipes import resolve_kernels
from mklearn.kernels.specs import KernelSpec
from mklearn.kernels.stack_checks import check_kernel_stack
from mklearn.kernels.stack_ops import kernel_major, weighted_sum
from mklearn.kernels.string_input import fit_string_bank, string_training_stack
from mklearn.kernels.string_low_rank import StringLowRankMap
from mklearn.kernels.strings import is_string_kernels
from mklearn.kernels.views import Views
from mklearn.progress import seconds_since

OVERFLOW_MESSAGE = (
    "the kernels computed from X overflow (entries near the largest float): the features are "
    "too large for these kernels; rescale X, e.g. with sklearn.preprocessing.StandardScaler"
)
_CONSTANT_KERNELS = ("the kernels do not vary over X (e.g. features so tiny or so equal that "
                     "every kernel entry rounds to the same value)")
_CONSTANT_STRING_KERNELS = (
    "the string kernels do not vary over the sequences (e.g. a spectrum order longer than every "
    "sequence, which counts no substring, or identical sequences); choose a smaller order (or "
    "kernels that see the differences)")


class Placement:
    """Where the kernel passes of a fit run: in this process (this class, every hook a no-op)
    or on a cluster (a subclass: :class:`mklearn.distributed.DaskPlacement`)."""

    name = "this process"  # where the passes run, in verbose output

    def client(self, n_jobs):
        """The cluster a fit with ``n_jobs`` runs on, or None for this process."""
        return None

    def partitioned_operator(self, estimator, X, feature_solver):
        """The operator of an input kept in the partitions where it lives (a Dask
        collection): low-rank features computed there."""
        raise ValueError("X is a partitioned collection, and this placement keeps every "
                         "kernel in this process; compute X first (X.compute())")

    def spread_rows(self, operator, client):
        """``operator`` (rows from a cache) with its per-kernel passes run on ``client``."""
        return operator

    def spread_state(self, provider, client):
        """``provider`` with a solver's per-kernel state kept on ``client``'s workers."""
        return provider


IN_PROCESS = Placement()


def make_operator(estimator, X, y, *, columns=False, feature_solver=None, on_workers=False,
                  placement=IN_PROCESS):
    """The base kernels of the training input as the operator a solver reads, and y.

    Parameters
    ----------
    estimator : MKL estimator
        Its kernel parameters and plan hooks (see the module's docstring); the fitted
        attributes that say how the kernels are held are set on it.
    X : array-like, sparse matrix, sequences, multi-view input, precomputed stack or Dask collection
        The training input, as the estimator's ``fit`` takes it.
    y : array-like of shape (n_samples,)
        Targets, checked against X (a placeholder where there are none).
    columns : bool
        The solver reads columns (a provider of kernel rows, no stack and no row cache).
    feature_solver : callable or None
        The solver's feature-space function: low-rank features may then be built
        (``kernel_approximation``).
    on_workers : bool
        The solver keeps per-kernel state that may live on a cluster's workers (when the
        placement has a client).
    placement : Placement
        Where the kernel passes run (this process by default).

    Returns
    -------
    operator : KernelOperator
    y : ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        For input that does not match the kernels (see :mod:`mklearn.kernels.checks`),
        kernels that overflow, or a plan that does not fit the memory budget.
    """
    operator, y = _operator(estimator, X, y, columns, feature_solver, placement)
    if on_workers:
        client = placement.client(getattr(estimator, "n_jobs", None))
        operator = _on_cluster(estimator, operator, client, placement,
                               placement.spread_state, "per-kernel state")
    return operator, y


def has_one_kernel(kernels, X):
    """Whether the input has exactly one base kernel, as far as is known before any kernel
    is computed (a precomputed 2-D kernel or 1-deep stack, one spec on one matrix)."""
    if X is None or is_views(X):
        return False
    if isinstance(kernels, str) and kernels == "precomputed":
        shape = np.shape(X)
        return len(shape) == 2 or (len(shape) == 3 and shape[2] == 1)
    if isinstance(kernels, (list, tuple)):
        return len(kernels) == 1
    return isinstance(kernels, KernelSpec)


def _operator(estimator, X, y, columns, feature_solver, placement):
    for name in ("_constant_rows", "_feature_range", "low_rank_", "approximation_error_",
                 "coef_"):
        estimator.__dict__.pop(name, None)
    estimator.kernel_approximation_ = "exact"
    estimator._held_plan, estimator._approximable = None, False
    strings = is_string_kernels(estimator.kernels)
    if estimator._precomputed or is_views(X):
        estimator._exact_only("precomputed kernels and multi-view input")
    if estimator._precomputed:
        return _precomputed_operator(estimator, X, y, columns)
    estimator.views_ = None
    if is_dask_collection(X):  # kept in its partitions (the estimator's _fit_input)
        return placement.partitioned_operator(estimator, X, feature_solver), y
    client = placement.client(getattr(estimator, "n_jobs", None))
    # on a Dask cluster the kernels stay rows, computed where they are needed
    rows_only = columns or (client is not None and estimator.kernel_storage == "auto")
    if strings:
        return _string_operator(estimator, X, y, columns, rows_only, client, feature_solver,
                                placement)
    return _numeric_operator(estimator, X, y, columns, rows_only, client, feature_solver,
                             placement)


def _precomputed_operator(estimator, X, y, columns):
    start = time.perf_counter()
    stack, y, kernel_sum = check_kernel_stack(X, y, return_sum=True)
    if kernel_is_constant(kernel_sum):
        warn_constant_model(estimator, "all entries of the precomputed kernels are equal "
                            "(e.g. all zero)")
    estimator.n_train_ = stack.shape[0]
    estimator.kernel_names_ = [f"kernel[{k}]" for k in range(stack.shape[2])]
    estimator.bank_ = None
    estimator.views_ = None
    estimator.kernel_storage_ = "stack"
    estimator._hold(f"{stack.shape[2]} precomputed kernels on {stack.shape[0]} samples",
                    stack.nbytes, seconds_since(start), "the time to read and check them")
    if columns:
        return StackColumns(stack, kernel_sum=kernel_sum), y
    return estimator._stack_operator(stack, kernel_sum), y


def _string_operator(estimator, X, y, columns, rows_only, client, feature_solver,
                     placement):
    start = time.perf_counter()
    y = fit_string_bank(estimator, X, y)
    estimator._approximable = True
    estimator.kernel_approximation_ = estimator._approximation(estimator.n_train_,
                                                               feature_solver, client)
    if estimator.kernel_approximation_ != "exact":
        return _low_rank_operator(estimator, StringLowRankMap), y
    kernels = string_training_stack(estimator, True if rows_only else None)
    if isinstance(kernels, np.ndarray):
        estimator.kernel_storage_ = "stack"
        estimator._hold(f"{kernels.shape[2]} string kernels on {kernels.shape[0]} samples "
                        "as a stack", kernels.nbytes, seconds_since(start),
                        "the time the stack took")
        operator = estimator._stack_operator(kernels)
        if kernel_is_constant(operator.matrix(np.ones(kernels.shape[2]))):
            warn_constant_model(estimator, _CONSTANT_STRING_KERNELS)
        return operator, y
    estimator.kernel_storage_ = "rows"
    _hold_rows(estimator, kernels)
    if kernel_is_constant(_edge(kernels)):
        warn_constant_model(estimator, _CONSTANT_STRING_KERNELS)
    return (kernels if columns else _row_operator(estimator, kernels, client, placement)), y


def _numeric_operator(estimator, X, y, columns, rows_only, client, feature_solver,
                      placement):
    given = X
    if is_views(X):
        estimator.views_, X = Views.from_fit(X)
    X, y = validate_numeric(estimator, X, y, dtype=np.float64, accept_sparse="csr")
    X = densify(X, estimator.memory_budget)
    estimator._feature_range = feature_range(X)
    if rows_are_identical(X):
        warn_constant_model(estimator,
                            "all rows of X are identical (every feature is constant)")
        estimator._constant_rows = True
    specs, standardize, names = kernel_specs(estimator, X)
    if not standardize:  # squared norms of the rows enter the kernels: keep them finite
        with np.errstate(over="ignore"):
            if not np.max(np.einsum("ij,ij->i", X, X)) <= 1e300:
                raise ValueError(OVERFLOW_MESSAGE)
    estimator.bank_ = KernelBank(
        specs,
        standardize=standardize,
        normalize=estimator.kernel_normalization,
        dtype=np.dtype(estimator.kernel_dtype),
    )
    estimator.n_train_ = X.shape[0]
    estimator._approximable = estimator.views_ is None
    estimator._check_before_kernels(estimator.bank_)
    estimator.kernel_approximation_ = estimator._approximation(X.shape[0], feature_solver,
                                                               client)
    if estimator.kernel_approximation_ != "exact":
        estimator.bank_.fit(X)
        return _low_rank_operator(estimator, LowRankMap, names), y
    points_bytes = feature_block_bytes(specs, X, standardize=standardize)
    estimator.kernel_storage_ = estimator._plan_storage(
        X.shape[0], estimator.bank_.n_kernels, rows_only, points_bytes)
    if columns or estimator.kernel_storage_ == "rows":
        provider = _columns_of(estimator, X, given, names, points_bytes)
        return (provider if columns
                else _row_operator(estimator, provider, client, placement)), y
    return _stack_operator(estimator, X, names), y


def kernel_specs(estimator, X):
    """(specs, standardize, names) of the kernels on X (names None: the bank's own)."""
    if estimator.views_ is not None:
        specs, standardize, names, estimator._view_codes = estimator.views_.kernel_specs(
            estimator.kernels, X)
        return specs, standardize, names
    (specs, standardize), names = resolve_kernels(estimator.kernels, X), None
    feature_names = getattr(estimator, "feature_names_in_", None)
    if feature_names is not None:
        names = [spec.name_with(feature_names) for spec in specs]
    return specs, standardize, names


def _columns_of(estimator, X, given, names, points_bytes):
    """The rows of the fitted bank computed on demand (:class:`KernelColumns`)."""
    # X is copied once the solver is done (the estimator's _own_training_points), not beside
    # its row cache (on the full w8a that copy took 91 MB above the planned memory), and only
    # when it may be the caller's memory (not a sparse X made dense here)
    estimator.bank_.fit(X, copy=False)
    estimator._borrowed_points = not scipy.sparse.issparse(given) and (
        not isinstance(given, np.ndarray) or np.may_share_memory(X, given))
    estimator.kernel_names_ = names or list(estimator.bank_.kernel_names)
    provider = KernelColumns(estimator.bank_)
    with np.errstate(over="ignore", invalid="ignore"):
        diagonal = provider.diagonal()
        if not np.isfinite(diagonal).all():
            raise ValueError(OVERFLOW_MESSAGE)
    _hold_rows(estimator, provider, points_bytes)
    if not rows_are_identical(X) and kernel_is_constant(_edge(provider, diagonal)):
        warn_constant_model(estimator, _CONSTANT_KERNELS)
    return provider


def _stack_operator(estimator, X, names):
    """The ``(n, n, m)`` stack of the bank fitted on X, as the estimator's stack operator."""
    stacked = time.perf_counter()
    with np.errstate(over="ignore", invalid="ignore"):
        stack = estimator.bank_.fit_transform(X)
        kernel_sum = weighted_sum(kernel_major(stack), np.ones(stack.shape[2]))
    estimator._hold(f"{stack.shape[2]} kernels on {X.shape[0]} samples as an (n, n, m) stack",
                    stack_bytes(X.shape[0], stack.shape[2], stack.itemsize),
                    seconds_since(stacked), "the time the stack took")
    estimator.kernel_names_ = names or list(estimator.bank_.kernel_names)
    if not np.isfinite(kernel_sum).all():
        raise ValueError(OVERFLOW_MESSAGE)
    if not rows_are_identical(X) and kernel_is_constant(kernel_sum):
        warn_constant_model(estimator, _CONSTANT_KERNELS)
    return estimator._stack_operator(stack, kernel_sum)


def _low_rank_operator(estimator, map_type, names=None):
    """The low-rank operator of the estimator's fitted bank (:func:`~mklearn.kernels.
    low_rank.low_rank_kernels` with ``map_type``, the map of its kernels): sets
    ``low_rank_``, ``approximation_error_`` and says the plan in verbose output."""
    start = time.perf_counter()
    bank = estimator.bank_
    fitted = low_rank_kernels(
        bank, estimator.kernel_approximation_, estimator.n_components,
        budget=budget_bytes(estimator.memory_budget), dtype=np.dtype(estimator.kernel_dtype),
        random_state=estimator.random_state, map_type=map_type,
        drop_constants=estimator._drops_constants)
    if not estimator._keeps_training_points:  # the model needs the landmarks only
        bank.X_fit_ = fitted.map.landmark_points_
    estimator.low_rank_ = fitted.map
    estimator.approximation_error_ = fitted.error
    estimator.kernel_names_ = names or list(bank.kernel_names)
    estimator.kernel_storage_ = "features"
    if getattr(estimator, "verbose", 0):
        print(f"mklearn: {fitted.plan}", file=sys.stderr)
    n, itemsize = fitted.operator.n_samples, np.dtype(estimator.kernel_dtype).itemsize
    if fitted.map.rank >= n:
        warnings.warn(
            f"{type(estimator).__name__}: the low-rank features have rank {fitted.map.rank}, "
            f"not below the {n} training points: a solve in feature space costs more than on "
            "the exact kernels it approximates. Use kernel_approximation='exact', or a "
            "smaller n_components", UserWarning, stacklevel=4)
    estimator._hold(f"{bank.n_kernels} kernels on {n} samples as low-rank features (rank "
                    f"{fitted.map.rank})", low_rank_bytes(n, fitted.map.rank, itemsize),
                    seconds_since(start), "the time the features took")
    return fitted.operator


def _hold_rows(estimator, provider, points_bytes=0):
    """The estimator's plan of rows computed on demand, with the bytes of the row path."""
    n, m = provider.n_samples, provider.n_kernels
    cache = estimator._cache_megabytes(n, m)
    estimator._hold_rows(provider, row_path_bytes(n, m, cache, points_bytes))


def _row_operator(estimator, provider, client, placement):
    """The row-backed operator; with a cluster's client, one whose per-kernel passes run
    there."""
    operator = RowKernels(provider, estimator._cache_megabytes(provider.n_samples,
                                                               provider.n_kernels))
    return _on_cluster(estimator, operator, client, placement, placement.spread_rows,
                       "per-kernel passes")


def _on_cluster(estimator, operator, client, placement, spread, what):
    """``spread(operator, client)`` when there is a client (said in verbose output), else
    ``operator``."""
    if client is None:
        return operator
    if getattr(estimator, "verbose", 0):
        print(f"mklearn: {what} on {placement.name} ({len(client.nthreads())} workers)",
              file=sys.stderr)
    return spread(operator, client)


def _edge(provider, diagonal=None):
    """The diagonal and first row of the sum of the base kernels, shape (2 n,): the sum of PSD
    kernels is constant iff these are (equal K(0,0), K(j,j) and K(0,j) put every point on
    x_0 in feature space)."""
    diagonal = provider.diagonal() if diagonal is None else diagonal
    return np.concatenate([diagonal.sum(axis=0), _first_row_sum(provider)])


def _first_row_sum(provider):
    """``sum_k K_k[0, :]``, shape (n,), from groups of kernels of about ``BAND_BYTES`` of
    values (not an ``8 m n``-byte row of every kernel at once)."""
    n, m = provider.n_samples, provider.n_kernels
    step = max(1, BAND_BYTES // (8 * max(n, 1)))
    total = np.zeros(n)
    for k in range(0, m, step):
        total += provider.rows([0], kernels=np.arange(k, min(k + step, m))).sum(axis=0)[0]
    return total
