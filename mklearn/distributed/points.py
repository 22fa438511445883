"""Training points in Dask partitions, read where they lie: the data-parallel fit's input.

A fit on a Dask array never gathers X. It reads, in passes over the partitions: the
:class:`~mklearn.kernels.summary.ColumnSummary` the kernel recipes and the standardisation
need (:func:`summary_of`), the kernels' traces (:func:`traces_of`), and what the low-rank
map's routes ask for (:class:`PartitionedPoints`: distinct rows of a kernel group, one
column of a group on one feature, some rows); then the features of every partition
(:func:`partitioned_low_rank`), which stay where they are computed. Vectors of length n (one
column, the labels, the dual variables) and the landmarks come to the client; the rows of X
do not.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from mklearn._sizes import byte_words
from mklearn.distributed.feature_rows import PartitionedFeatures, by_partition
from mklearn.kernels.checks import is_dask_collection
from mklearn.kernels.low_rank import (
    AUTO_COMPONENTS,
    SMALLEST_AUTO,
    LowRankMap,
    error_sample,
    group_block,
    low_rank_bytes,
    plan_words,
)
from mklearn.kernels.summary import ColumnSummary, first_pass, second_pass, units

__all__ = ["PartitionPlan", "PartitionedPoints", "WorkerMemory", "collection_rows",
           "default_client", "partition_bytes", "partitioned_input", "partitioned_low_rank",
           "scattered_rows", "summary_of", "traces_of", "worker_memory"]

_DASK_TARGET = 0.6  # share of a worker's memory limit Dask keeps data below before spilling


def default_client():
    """The ``distributed.Client`` that ``dask.compute`` runs on, or None (the threads of
    this process); RuntimeError when its cluster has no workers."""
    if "distributed" not in sys.modules:
        return None
    from distributed import get_client

    try:
        client = get_client()
    except ValueError:
        return None
    if not client.nthreads():
        raise RuntimeError(
            "the Dask client's cluster has no workers: a fit on partitioned data runs on "
            "them; start workers (e.g. `cluster.scale(2)`, or `dask worker "
            "scheduler-address:8786`) before fit")
    return client


@dataclass(frozen=True)
class WorkerMemory:
    """What the partitions' workers may hold: ``workers`` of ``threads`` threads each, and
    the bytes each may keep (Dask's ``_DASK_TARGET`` share of the smallest memory limit; the
    memory budget in this process or without limits), said in ``words``."""

    workers: int
    threads: int
    per_worker: int
    words: str


def worker_memory(client, budget: int) -> WorkerMemory:
    """The :class:`WorkerMemory` of ``client``'s workers (None: this process)."""
    if client is None:
        return WorkerMemory(1, 1, budget, f"the memory budget of {byte_words(budget)} in this "
                                          "process")
    workers = client.scheduler_info()["workers"].values()
    limits = [w.get("memory_limit") or 0 for w in workers]
    threads = max([w.get("nthreads", 1) for w in workers] or [1])
    if not limits or min(limits) <= 0:
        return WorkerMemory(max(len(limits), 1), threads, budget,
                            f"the memory budget of {byte_words(budget)}")
    return WorkerMemory(len(limits), threads, int(_DASK_TARGET * min(limits)),
                        f"{_DASK_TARGET:.0%} of the smallest worker memory limit, "
                        f"{byte_words(min(limits))}")


def scattered_rows(X, client):
    """An in-memory X (an array or a pandas DataFrame) spread over ``client``'s workers by
    rows: two partitions per worker thread, each scattered once, as a Dask array (a
    dataframe keeps its column names)."""
    import dask
    import dask.array as da

    if hasattr(X, "columns"):  # pandas: the partitions keep the names
        import dask.dataframe as dd

        return dd.from_pandas(X, npartitions=max(1, 2 * sum(client.nthreads().values())))
    X = np.asarray(X)
    n = X.shape[0]
    parts = max(1, min(n, 2 * sum(client.nthreads().values())))
    bounds = np.linspace(0, n, parts + 1).astype(np.int64)
    futures = client.scatter([X[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:],
                                                         strict=True)])
    return da.concatenate([
        da.from_delayed(dask.delayed(future), (int(hi - lo), X.shape[1]), X.dtype)
        for future, lo, hi in zip(futures, bounds[:-1], bounds[1:], strict=True)])


def collection_rows(X) -> float:
    """Rows of a Dask array (NaN for chunks of unknown size) or dataframe (a pass that
    counts its partitions' rows)."""
    return float(len(X)) if _is_dataframe(X) else float(X.shape[0])


def partitioned_input(X, y, sample_weight=None):
    """X as a Dask array of known row chunks and its feature names, y and sample_weight
    gathered (vectors of length n), each checked before any work.

    Returns
    -------
    (X, y, sample_weight, feature_names)
        ``feature_names``: the dataframe's column names (strings), else None.

    Raises
    ------
    ValueError
        A Dask array with chunks of unknown size (say ``compute_chunk_sizes()``), a
        dataframe with columns of object dtype, a non-numeric or non-2-D X, y (or
        sample_weight) whose partitions do not line up with those of X.
    RuntimeError
        A Dask client whose cluster has no workers.
    """
    import dask.array as da

    default_client()  # a cluster without workers would wait for them
    names = None
    if _is_dataframe(X):
        objects = [str(c) for c, t in X.dtypes.items() if t.kind not in "biuf"]
        if objects:
            raise ValueError(
                f"X has columns of non-numeric dtype ({', '.join(objects[:5])}): kernels need "
                "numbers; encode them first (e.g. dask_ml.preprocessing.OneHotEncoder, or "
                "X[c].astype(float)) or drop them")
        columns = list(X.columns)
        names = np.asarray(columns, dtype=object) if all(
            isinstance(c, str) for c in columns) else None
        X = X.to_dask_array(lengths=True)
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise ValueError("X must be a 2-D dask.array.Array or a dask.dataframe.DataFrame "
                         f"partitioned by rows; got {type(X).__name__} of "
                         f"{getattr(X, 'ndim', '?')} dimensions")
    if any(math.isnan(c) for c in X.chunks[0]):
        raise ValueError(
            "X is a Dask array with chunks of unknown size (NaN, e.g. after a boolean mask): "
            "its partitions cannot be planned; call X.compute_chunk_sizes() first")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must be numeric; got a Dask array of dtype {X.dtype}")
    X = X.rechunk({1: -1}).astype(np.float64)
    y = _aligned_vector(y, X, "y")
    sample_weight = _aligned_vector(sample_weight, X, "sample_weight")
    return X, y, sample_weight, names


def _is_dataframe(X) -> bool:
    if "dask.dataframe" not in sys.modules:
        return False
    import dask.dataframe as dd

    return isinstance(X, dd.DataFrame)


def _aligned_vector(v, X, name):
    """``v`` gathered: a Dask array or series whose partitions hold the rows of X's
    partitions (the same counts), or a vector of X's length."""
    if v is None:
        return None
    rows = tuple(int(c) for c in X.chunks[0])
    if is_dask_collection(v):
        if hasattr(v, "to_dask_array"):
            v = v.to_dask_array(lengths=True)
        chunks = tuple(int(c) if not math.isnan(c) else -1 for c in v.chunks[0])
        if chunks != rows:
            raise ValueError(
                f"the partitions of X and {name} do not line up: X holds {_counts(rows)} rows "
                f"per partition, {name} {_counts(chunks)}; partition {name} as X (e.g. "
                f"{name}.rechunk(X.chunks[0]), or take both from one dataframe)")
        return np.asarray(v.compute())
    v = np.asarray(v)
    if v.shape[:1] != (sum(rows),):
        raise ValueError(f"{name} has {v.shape[0] if v.ndim else 0} entries, X "
                         f"{sum(rows)} rows; they must be of the same length")
    return v


def _counts(chunks):
    shown = ", ".join("?" if c < 0 else str(c) for c in chunks[:6])
    return f"({shown}{', ...' if len(chunks) > 6 else ''})"


def _blocks(X):
    """The row blocks of a Dask array, as delayed arrays in row order."""
    return list(X.rechunk({1: -1}).to_delayed().ravel())


def _computed(function, blocks, *args):
    import dask

    return dask.compute(*[dask.delayed(function)(block, *args) for block in blocks])


def summary_of(X) -> ColumnSummary:
    """The summary of a Dask array's rows in two passes (extremes first: the moments are
    taken in the units they set)."""
    blocks = _blocks(X)
    first = list(_computed(first_pass, blocks))
    summary_units = units(np.min([p["minimum"] for p in first], axis=0),
                          np.max([p["maximum"] for p in first], axis=0))
    peak = float(max(np.max(np.maximum(np.abs(p["minimum"]), np.abs(p["maximum"])))
                     for p in first))
    second = list(_computed(second_pass, blocks, summary_units, peak))
    return ColumnSummary.merged(first, second)


def _traces(block, bank):
    return bank.traces(bank.prepare(block))


def traces_of(bank, X) -> np.ndarray:
    """The kernels' traces over every partition (:meth:`KernelBank.traces`)."""
    return np.sum(_computed(_traces, _blocks(X), bank), axis=0)


def _distinct(block, bank, group, limit):
    """A partition's distinct rows of the group's block and their first rows, or None when
    there are more than ``limit``."""
    scaled = group_block(bank.prepare(block), group)
    values, first = np.unique(scaled, axis=0, return_index=True)
    return None if values.shape[0] > limit else (values, first)


def _column(block, bank, group):
    return group_block(bank.prepare(block), group)[:, 0]


def _rows(block, bank, local):
    return bank.prepare(np.asarray(block)[local]) if local.size else np.zeros((0, block.shape[1]))


class PartitionedPoints:
    """The standardised training points of a Dask array as :meth:`LowRankMap.fit` reads
    them (the protocol of :class:`~mklearn.kernels.low_rank.TrainingPoints`).

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        The training points as given (chunked by rows).
    bank : KernelBank
        Its standardisation fitted (:func:`summary_of`).
    """

    def __init__(self, X, bank) -> None:
        self.blocks = _blocks(X)
        self.bank = bank
        self.offsets = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
        self.n_samples = int(self.offsets[-1])

    def distinct_rows(self, group, limit: int) -> np.ndarray | None:
        parts = _computed(_distinct, self.blocks, self.bank, group, limit)
        if any(part is None for part in parts):
            return None
        values = np.concatenate([part[0] for part in parts])
        rows = np.concatenate([part[1] + self.offsets[p] for p, part in enumerate(parts)])
        merged, first = np.unique(values, axis=0, return_index=True)
        return rows[first] if merged.shape[0] <= limit else None

    def column(self, group) -> np.ndarray:
        return np.concatenate(_computed(_column, self.blocks, self.bank, group))

    def rows(self, indices: Any) -> np.ndarray:
        import dask

        indices = np.asarray(indices, dtype=np.int64)
        order, local = by_partition(self.offsets, indices)
        calls = [dask.delayed(_rows)(block, self.bank, local[p])
                 for p, block in enumerate(self.blocks)]
        out = np.empty((indices.size, self.bank.n_features_in_))
        out[order] = np.concatenate(dask.compute(*calls))
        return out


def partition_bytes(rows: int, rank: int, n_kernels: int, itemsize: int) -> int:
    """Bytes of a partition of ``rows`` points's features: the features and their squared
    norms per kernel, and the map's float64 copy of a block of them while it computes them."""
    return rows * (rank * itemsize + 8 * n_kernels) + low_rank_bytes(rows, rank, 8) // 4


@dataclass(frozen=True)
class PartitionPlan:
    """How the partitions keep their features: ``hold`` (computed once) or recomputed from
    their rows of X at each pass, and the bytes a worker then keeps."""

    mapping: Any
    components: int
    hold: bool
    per_worker: float
    held_per_worker: float

    def words(self, memory: WorkerMemory, n_parts: int) -> str:
        where = f"in {n_parts} partitions on {memory.workers} worker(s), "
        if self.hold:
            return where + f"features held, {byte_words(self.per_worker)} each"
        return where + (f"features recomputed from X at each pass ({byte_words(self.per_worker)} "
                        f"each; held they would need {byte_words(self.held_per_worker)}, above "
                        f"{memory.words})")


def _bytes_per_worker(mapping, sizes, n_kernels, itemsize, memory, n_features):
    """``(held, recomputed)``: the bytes a worker keeps with the features held, and with
    its rows of X kept and one partition's features per thread made at a time."""
    largest = partition_bytes(int(sizes.max()), mapping.rank, n_kernels, itemsize)
    held = max(largest, sum(partition_bytes(int(r), mapping.rank, n_kernels, itemsize)
                            for r in sizes) / memory.workers)
    points = 8 * n_features * float(sizes.sum()) / memory.workers
    return held, points + memory.threads * largest


def _planned_map(bank, points, approximation, n_components, dtype, random_state, memory):
    """The map and the keeping (:class:`PartitionPlan`) that fit the workers: features held
    where they fit, else recomputed at each pass; ``n_components="auto"``
    (``AUTO_COMPONENTS``) halved until one fits. ValueError naming the partition size and
    the fixes when none does."""
    n = points.n_samples
    sizes = np.diff(points.offsets)
    auto = isinstance(n_components, str)
    if not auto and n_components > n:
        raise ValueError(f"n_components={n_components} is above n_samples={n}: a kernel has "
                         f"at most n landmarks; choose n_components <= {n} (or 'auto')")
    components = min(AUTO_COMPONENTS, n) if auto else int(n_components)
    itemsize = np.dtype(dtype).itemsize
    while True:
        mapping = LowRankMap(bank, approximation, components, random_state, dtype).fit(points)
        held, recomputed = _bytes_per_worker(mapping, sizes, bank.n_kernels, itemsize, memory,
                                             bank.n_features_in_)
        if held <= memory.per_worker:
            return PartitionPlan(mapping, components, True, held, held)
        if recomputed <= memory.per_worker:
            return PartitionPlan(mapping, components, False, recomputed, held)
        if not auto or components // 2 < SMALLEST_AUTO:
            raise ValueError(
                f"the low-rank features (rank {mapping.rank}, n_components={components}, "
                f"{np.dtype(dtype).name}) of {n} points in {sizes.size} partitions of up to "
                f"{int(sizes.max())} rows need {byte_words(held)} on each of {memory.workers} "
                f"worker(s) held, {byte_words(recomputed)} recomputed at each pass, above "
                f"{memory.words}: use more partitions (X.rechunk), fewer components "
                "(n_components), kernel_dtype='float32', or more workers")
        components //= 2


def partitioned_low_rank(bank, X, approximation: str, n_components: Any, *, dtype: Any,
                         random_state: Any, memory: WorkerMemory):
    """The low-rank map fitted on the partitions of X within the workers' memory
    (:func:`worker_memory`), the features on them
    (:class:`~mklearn.distributed.feature_rows.PartitionedFeatures`: held, or recomputed
    at each pass when held they do not fit), and the map's error measured on
    ``ERROR_SAMPLE`` points, as the one-machine fit draws them.

    Returns
    -------
    (operator, mapping, error, kernel_errors, plan, bytes_per_worker)

    Raises
    ------
    ValueError
        Features that do not fit the workers (the message names the partition size and the
        fixes), ``n_components`` above n.
    """
    points = PartitionedPoints(X, bank)
    plan = _planned_map(bank, points, approximation, n_components, dtype, random_state,
                        memory)
    mapping = plan.mapping
    operator = PartitionedFeatures.from_dask(X, mapping, dtype, hold=plan.hold)
    sampled = points.rows(error_sample(mapping, points.n_samples, random_state))
    error, kernel_errors = mapping.error_on(sampled, mapping.transform(sampled, prepared=True))
    need = low_rank_bytes(points.n_samples, mapping.rank, np.dtype(dtype).itemsize)
    words = (plan_words(bank.n_kernels, points.n_samples, mapping, approximation,
                        plan.components, need, error)
             + "; " + plan.words(memory, operator.feature_rows.n_parts))
    return operator, mapping, error, kernel_errors, words, plan.per_worker
