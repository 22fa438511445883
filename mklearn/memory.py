"""Memory planning: how the base kernels of a fit are held, decided before any allocation.

Two ways to hold ``m`` base kernels on ``n`` points:

- "stack": the ``(n, n, m)`` stack in memory (fast passes over every kernel; small n), with
  about four ``n x n`` float64 work matrices (the kernel sum, ``K(d)`` and temporaries);
- "rows": :class:`~mklearn.kernels.operator.RowKernels`, rows computed from X on demand in
  an LRU cache of ``cache_size`` MB plus ``O(m n)`` state.

:func:`plan_kernel_storage` picks the stack when it fits in the budget, else the rows, and
raises a ``ValueError`` naming the bytes needed and what to change when neither fits. The
default budget is a share of the room under every memory limit the process can read (free
memory, ``ulimit -v`` and ``-d``, the cgroup limit: :mod:`mklearn.kernels.memory_limits`).
"""

from __future__ import annotations

import math

from mklearn._registry import moved_names
from mklearn._sizes import MB, byte_words
from mklearn.distributed.partitions import collection_bytes
from mklearn.kernels.checks import is_dask_collection
from mklearn.kernels.memory_limits import budget_bytes, budget_words, stack_bytes
from mklearn.kernels.operator import row_path_bytes

__all__ = ["auto_cache_size", "check_dense_output", "gathered", "plan_kernel_storage"]

# deprecated: the budget and densify moved to the kernels, with the operator factory
__getattr__ = moved_names(__name__, {
    **dict.fromkeys(["available_memory", "default_budget"], "mklearn.kernels.memory_limits"),
    "densify": "mklearn.kernels.checks"})

CACHE_SHARE = 0.5  # of the budget, for the row cache with cache_size="auto"


def auto_cache_size(n_samples: int, n_kernels: int, *, itemsize: int,
                    memory_budget: float | None = None) -> float:
    """MB of the row cache for ``cache_size="auto"``: every row of the ``n_kernels`` base
    kernels if they fit in ``CACHE_SHARE`` of the budget, else that share (at least two
    rows: an SMO step reads two).

    LIBSVM's fixed 200 MB holds 20 rows of SimpleMKL's 845 kernels on 1,437 points (sklearn's
    digits), and SMO-MKL then recomputes rows at almost every step. The cache's slots are
    touched only as rows are filled, so a cache larger than the rows a fit reads costs nothing.

    Parameters
    ----------
    n_samples, n_kernels : int
        Problem size: a row holds ``n_kernels * n_samples`` values.
    itemsize : int
        Bytes per value (8 for float64, 4 for float32).
    memory_budget : float or None
        MB a fit may use; None: half the room under every memory limit now.

    Returns
    -------
    float
        Megabytes.
    """
    budget = budget_bytes(memory_budget)
    row = int(n_kernels) * int(n_samples) * int(itemsize)
    every_row = row * int(n_samples)
    return max(min(every_row, CACHE_SHARE * budget), 2 * row) / MB


def _points_part(points_bytes: int) -> str:
    return f" and {byte_words(points_bytes)} of feature blocks" if points_bytes else ""


def plan_kernel_storage(n_samples: int, n_kernels: int, *, itemsize: int, cache_size: float,
                        storage: str = "auto", memory_budget: float | None = None,
                        rows_only: bool = False, points_bytes: int = 0) -> str:
    """"stack" or "rows" for a fit on ``n_samples`` points and ``n_kernels`` base kernels.

    Parameters
    ----------
    n_samples, n_kernels : int
        Problem size.
    itemsize : int
        Bytes per stack entry (8 for float64, 4 for float32).
    cache_size : float
        MB of the row cache of the row path.
    storage : {"auto", "stack", "rows"}
        "auto" takes the stack when it fits in the budget, else rows; the others force one
        (still checked against the budget).
    memory_budget : float or None
        MB a fit may use; None: half the room under every memory limit now.
    rows_only : bool
        The solver reads rows only (SMO-MKL, MWUMKL): "stack" is never chosen.
    points_bytes : int
        Bytes the row path keeps of the points besides X
        (:func:`~mklearn.kernels.bank.feature_block_bytes`).

    Returns
    -------
    str
        "stack" or "rows".

    Raises
    ------
    ValueError
        If the chosen (or every) path needs more than the budget; the message gives the
        bytes of each path and what to change.
    """
    budget = budget_bytes(memory_budget)
    stack = stack_bytes(n_samples, n_kernels, itemsize)
    rows = row_path_bytes(n_samples, n_kernels, cache_size, points_bytes)
    if storage == "stack" and not rows_only:
        if stack <= budget:
            return "stack"
        words, raise_it = budget_words(memory_budget, budget)
        raise ValueError(
            f"the kernel stack of {n_kernels} kernels on {n_samples} samples needs "
            f"{byte_words(stack)}, above {words}: use kernel_storage='auto' or 'rows' (rows "
            f"computed on demand), fewer kernels or samples, or {raise_it}")
    if storage == "auto" and not rows_only and stack <= budget:
        return "stack"
    if rows <= budget:
        return "rows"
    words, raise_it = budget_words(memory_budget, budget)
    raise ValueError(
        f"{n_kernels} kernels on {n_samples} samples need {byte_words(rows)} even with rows "
        f"computed on demand (cache_size={cache_size:g} MB plus {n_kernels} x {n_samples} "
        f"per-kernel values{_points_part(points_bytes)}), above {words}: lower cache_size, "
        f"use fewer kernels or samples, or {raise_it}")


def gathered(X, memory_budget: float | None = None, name: str = "X"):
    """A Dask collection computed into this process, when its bytes fit in the budget: a fit
    trains on its points in one process (prediction runs partition by partition,
    :mod:`mklearn.distributed.partitions`). Other inputs are returned as they are.

    A Dask array's bytes are its ``nbytes``; a dataframe's, the sum of its partitions'
    ``memory_usage()`` (one pass where the partitions live).

    Raises
    ------
    ValueError
        If a Dask array has chunks of unknown size (the message says to call
        ``compute_chunk_sizes()``), or the collection needs more than the budget (the message
        gives the bytes and the fixes).
    """
    if not is_dask_collection(X):
        return X
    nbytes = collection_bytes(X)
    if math.isnan(nbytes):
        raise ValueError(
            f"{name} is a Dask array with chunks of unknown size (NaN, e.g. after a boolean "
            f"mask): its bytes cannot be planned; call {name}.compute_chunk_sizes() first")
    budget = budget_bytes(memory_budget)
    if nbytes > budget:
        words, raise_it = budget_words(memory_budget, budget)
        raise ValueError(
            f"{name} is a Dask collection of {byte_words(nbytes)}, above {words}: a fit "
            "gathers its training points into this process (prediction runs partition by "
            f"partition). Fit on a sample of the rows, in float32 ({name}.astype('float32')), or "
            f"{raise_it}")
    return X.compute()


def check_dense_output(n_rows: int, n_cols: int, *, what: str, fix: str,
                       memory_budget: float | None = None) -> None:
    """Refuse a float64 result of shape ``(n_rows, n_cols)`` that needs more than the budget.

    Parameters
    ----------
    n_rows, n_cols : int
        Shape of the result.
    what : str
        What the result is, for the message (e.g. "the learned kernel between 10 points and
        the 100 training points").
    fix : str
        What to change besides the budget, for the message.
    memory_budget : float or None
        MB the result may use; None: half the room under every memory limit now.

    Raises
    ------
    ValueError
        If ``8 n_rows n_cols`` bytes exceed the budget; the message gives the bytes.
    """
    budget = budget_bytes(memory_budget)
    need = 8 * int(n_rows) * int(n_cols)
    if need > budget:
        words, raise_it = budget_words(memory_budget, budget)
        raise ValueError(f"{what} needs {byte_words(need)} ({n_rows} x {n_cols} float64), above "
                         f"{words}: {fix}, or {raise_it}")
