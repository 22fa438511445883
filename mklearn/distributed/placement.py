"""The Dask placement of a fit's kernels (:class:`~mklearn.kernels.factory.Placement`): a
Dask collection kept in its partitions (low-rank features computed where the rows live), and
per-kernel passes and state spread over an active cluster."""

from __future__ import annotations

import sys
import time

import numpy as np

from mklearn.distributed.backend import active_client
from mklearn.distributed.mwu import DaskColumns
from mklearn.distributed.operator import DaskKernels
from mklearn.distributed.points import (
    default_client,
    partitioned_low_rank,
    summary_of,
    traces_of,
    worker_memory,
)
from mklearn.kernels.bank import KernelBank
from mklearn.kernels.checks import warn_constant_model
from mklearn.kernels.factory import OVERFLOW_MESSAGE, Placement, kernel_specs
from mklearn.kernels.memory_limits import budget_bytes
from mklearn.progress import seconds_since

__all__ = ["DASK", "DaskPlacement"]


class DaskPlacement(Placement):
    """Kernels placed on Dask: a Dask collection's rows stay in their partitions, and with an
    active client (:func:`~mklearn.distributed.active_client`) row-backed operators run their
    per-kernel passes on the cluster (:class:`~mklearn.distributed.DaskKernels`) and solvers
    keep their per-kernel state in Dask actors (:class:`~mklearn.distributed.DaskColumns`)."""

    name = "Dask"

    def client(self, n_jobs):
        """The active ``distributed.Client`` of a fit with ``n_jobs``, or None."""
        return active_client(n_jobs)

    def partitioned_operator(self, estimator, X, feature_solver):
        """Low-rank features of the Dask array ``X`` computed and kept on its partitions."""
        return _partitioned_operator(estimator, X, feature_solver)

    def spread_rows(self, operator, client):
        """``operator``'s per-kernel passes on ``client``'s workers."""
        return DaskKernels(operator, client)

    def spread_state(self, provider, client):
        """``provider`` with the solver's per-kernel state in Dask actors."""
        return DaskColumns(provider, client)


DASK = DaskPlacement()


def _partitioned_operator(estimator, X, feature_solver):
    """Low-rank features of a Dask array computed and kept on its partitions
    (:mod:`mklearn.distributed.points`): the kernels from the partitions' summary, the
    bank's standardisation and traces by passes over them; sets the fitted attributes that
    :func:`~mklearn.kernels.factory.make_operator` sets for low-rank features and says the
    plan in verbose output."""
    start = time.perf_counter()
    summary = summary_of(X)
    if not (np.isfinite(summary.minimum).all() and np.isfinite(summary.maximum).all()):
        raise ValueError("Input X contains NaN or infinity; remove or impute them first "
                         "(e.g. sklearn.impute.SimpleImputer on each partition)")
    estimator._feature_range = np.stack([summary.minimum, summary.maximum])
    if summary.constant.all():
        warn_constant_model(estimator,
                            "all rows of X are identical (every feature is constant)")
        estimator._constant_rows = True
    specs, standardize, names = kernel_specs(estimator, summary)
    if not standardize and not summary.largest_squared_norm <= 1e300:
        raise ValueError(OVERFLOW_MESSAGE)
    n, n_features = summary.n_samples, summary.n_features
    bank = KernelBank.from_fitted(
        specs, standardize=standardize, normalize=estimator.kernel_normalization,
        dtype=np.dtype(estimator.kernel_dtype),
        mean=summary.mean if standardize else np.zeros(n_features),
        scale=summary.scale if standardize else np.ones(n_features),
        trace_scales=np.ones(len(specs)), X_fit=np.zeros((1, n_features)))
    bank.trace_scales_ = bank.scales_of_traces(traces_of(bank, X), n)
    estimator.bank_, estimator.n_train_ = bank, n
    estimator._approximable = True
    estimator._check_before_kernels(bank)
    approximation = estimator._approximation(n, feature_solver, None, partitioned=True)
    estimator.kernel_approximation_ = approximation
    memory = worker_memory(default_client(), budget_bytes(estimator.memory_budget))
    operator, mapping, error, _, plan, per_worker = partitioned_low_rank(
        bank, X, approximation, estimator.n_components, dtype=np.dtype(estimator.kernel_dtype),
        random_state=estimator.random_state, memory=memory)
    bank.X_fit_ = mapping.landmark_points_
    estimator.low_rank_, estimator.approximation_error_ = mapping, error
    estimator.kernel_names_ = names or list(bank.kernel_names)
    estimator.kernel_storage_ = "features"
    if getattr(estimator, "verbose", 0):
        print(f"mklearn: {plan}", file=sys.stderr)
    estimator._hold(f"{bank.n_kernels} kernels on {n} samples as low-rank features (rank "
                    f"{mapping.rank}) in {operator.feature_rows.n_parts} Dask partitions",
                    per_worker, seconds_since(start), "the time the features took")
    return operator
