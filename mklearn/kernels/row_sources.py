"""Row sources for the SMO core: where the rows of the kernel ``K`` of one QP come from.

A row source has the slot arrays the numba loop reads (``store`` of shape ``(capacity, r, n)``,
``slot_of``, ``last_used``, ``clock``), ``load(i)`` for a miss, ``diagonal()`` of shape
``(r, n)`` and ``matvec(v)``, the product ``K v`` (shape ``(n,)``; with ``r > 1`` base
kernels, ``K_k v`` of shape ``(r, n)``) computed from the rows of the support of ``v`` only:
the core's gradient reconstruction.

- :class:`DenseRows`: an ``n x n`` matrix already in memory; every row is a slot.
- :class:`StackCombinedRows`: the rows of ``K(d) = sum_k d_k K_k`` combined from a
  kernel-major stack when first read: an SVM solve reads about its support vectors' rows.
- :class:`CachedRows`: rows of one kernel from a source, in an LRU cache of ``cache_size``
  MB; :class:`CombinedRows`, those of ``K(d) = sum_k d_k K_k`` combined from base-kernel
  rows of a provider (computed from X, or sliced from a stack) over the kernels with
  ``d_k > 0`` (products of RBF kernels have their own source, :mod:`mklearn.formulation.products`).
- :class:`BaseRows`: rows of every base kernel, for the SMO-MKL step;
  :class:`TableBaseRows`, the same read from tables by kept distance rows (RBF kernels on
  integer points, :mod:`mklearn.kernels.rbf_tables`); :func:`base_rows` picks one.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from mklearn._sizes import MB
from mklearn.kernels.base_store import BaseStore, held_distances, held_rows
from mklearn.kernels.cache import START_MB, RowCache, cache_capacity
from mklearn.kernels.capabilities import Capabilities
from mklearn.kernels.stack_ops import (
    StackReads,
    combine_rows,
    combine_rows_parallel,
    rows_product,
)
from mklearn.kernels.threads import use_threads

# where a cache of base rows starts at least: on a few hundred points each row computed again
# costs a return from the SMO core to Python, more than the row (Sonar, 61 kernels: 413 rows
# computed from a start of 0.2 MB, 120 from 12 MB, 2.4x the fit's time; pima reads 447 rows
# of 55 kB, 476 computed from 16 MB, 1.1x)
LEAST_START_MB = 32.0
DENSE_SUPPORT_FRACTION = 4  # a support above 1/4 of n: one matrix-vector product, no gather


class DenseRows:
    """Rows of a dense symmetric kernel matrix ``K`` of shape (n, n), float64."""

    def __init__(self, K: np.ndarray) -> None:
        self.K = np.ascontiguousarray(K, dtype=np.float64)
        n = self.K.shape[0]
        self.n_samples = n
        self.store = self.K.reshape(n, 1, n)
        self.slot_of = np.arange(n, dtype=np.int64)
        self.last_used = np.zeros(n, dtype=np.int64)
        self.clock = np.zeros(1, dtype=np.int64)

    def load(self, i: int) -> None:  # every row is present
        raise RuntimeError(f"row {i} of a dense kernel matrix cannot be missing")

    def diagonal(self) -> np.ndarray:
        return np.diagonal(self.K).copy()[None, :]

    def matvec(self, v: np.ndarray) -> np.ndarray:
        support = np.flatnonzero(v)
        if support.size * DENSE_SUPPORT_FRACTION >= v.size:
            return self.K @ v
        return self.K[:, support] @ v[support]

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        return self.matvec(v)

    def submatrix(self, indices: np.ndarray) -> np.ndarray:
        """``K[indices][:, indices]``, float64 of shape (len(indices), len(indices))."""
        indices = np.asarray(indices, dtype=np.int64)
        return self.K[np.ix_(indices, indices)]

    def block(self, indices: np.ndarray, columns: np.ndarray | None = None) -> np.ndarray:
        """``K[indices][:, columns]`` (``columns`` default ``indices``)."""
        return self.K[np.ix_(indices, indices if columns is None else columns)]


def row_source(K: Any) -> Any:
    """``K`` as a row source: a dense ``(n, n)`` matrix becomes a :class:`DenseRows`, a row
    source is returned as it is (a user's parameterisation may give either)."""
    return DenseRows(K) if isinstance(K, np.ndarray) else K


class StackCombinedRows:
    """Rows of ``K(d) = sum_k d_k K_k`` over a kernel-major stack, each combined when first
    read (by the SMO core, a product ``K(d) v`` or a block).

    An SVM solve reads little more than the rows of its support vectors (measured along
    SPG-GMKL runs on unseen problems: 10-60% of the rows, with warm starts), where forming
    all of ``K(d)`` reads every row of every kernel in use. Rows are never evicted: the
    ``(n, n)`` store is what the dense ``K(d)`` would take, of which only the rows read are
    touched.

    Parameters
    ----------
    stack_km : ndarray of shape (m, n, n)
        The base kernels, kernel-major, C-contiguous (float64 or float32).
    d : ndarray of shape (m,)
        Kernel weights (>= 0); only kernels with ``d_k > 0`` are read.
    diagonals : ndarray of shape (m, n)
        ``K_k[i, i]`` of every kernel, float64.
    reads : StackReads, optional
        Where the values combined from the stack are counted.
    """

    def __init__(self, stack_km: np.ndarray, d: np.ndarray, diagonals: np.ndarray,
                 reads: StackReads | None = None) -> None:
        n = stack_km.shape[1]
        self._reads = StackReads(stack_km.size) if reads is None else reads
        self.n_samples = n
        self._km = stack_km
        self._d = np.array(d, dtype=np.float64)  # a copy: rows combined later use these weights
        self._active = np.flatnonzero(self._d > 0)
        self._diagonal = combined_diagonal(diagonals, self._active, self._d[self._active])
        self._matrix = np.empty((n, n))  # pages touched only where rows are combined
        self.store = self._matrix.reshape(n, 1, n)
        self.slot_of = np.full(n, -1, dtype=np.int64)  # row i lives in slot i once combined
        self.last_used = np.zeros(n, dtype=np.int64)
        self.clock = np.zeros(1, dtype=np.int64)

    def _fill(self, rows: np.ndarray) -> None:
        rows = rows[self.slot_of[rows] < 0]
        if rows.size == 0:
            return
        run = (combine_rows_parallel
               if use_threads(rows.size * self._active.size * self.n_samples) else combine_rows)
        run(self._km, self._d, self._active, rows, self._matrix)
        self._reads.add(rows.size * self._active.size * self.n_samples)
        self.slot_of[rows] = rows

    def load(self, i: int) -> None:
        self._fill(np.array([i], dtype=np.int64))

    def diagonal(self) -> np.ndarray:
        """``diag K(d)``, shape (1, n)."""
        return self._diagonal[None, :]

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``K(d) v = sum_{s in support} v_s K(d)[s]`` (symmetry), shape (n,)."""
        v = np.asarray(v, dtype=np.float64)
        support = np.flatnonzero(v)
        self._fill(support)
        return rows_product(self._matrix, support, v[support])

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        return self.matvec(v)

    def submatrix(self, indices: np.ndarray) -> np.ndarray:
        """``K(d)[indices][:, indices]``, float64 of shape (len(indices), len(indices))."""
        indices = np.asarray(indices, dtype=np.int64)
        self._fill(indices)
        return self._matrix[np.ix_(indices, indices)]


def combined_diagonal(diagonal: np.ndarray, kernels: np.ndarray, weights: np.ndarray):
    """``sum_t weights[t] diagonal[kernels[t]]`` (diagonal of shape (m, n)), shape (n,);
    without gathering the rows of ``diagonal`` when most kernels are active (10^5 kernels on
    208 points: a 166 MB copy per SVM solve)."""
    if 2 * kernels.size < diagonal.shape[0]:
        return weights @ diagonal[kernels]
    full = np.zeros(diagonal.shape[0])
    full[kernels] = weights
    return full @ diagonal


class NewestRows:
    """One cache of ``K(d)`` rows at a time, for an operator whose ``kernel(d)`` makes row
    sources: :meth:`keep` releases the rows of the source kept before (which still serves
    rows, computing them), so that the solvers' points, trials and records hold the budget,
    not a multiple of it (mirror descent kept three: 286 MB of rows with ``cache_size=100``)."""

    def __init__(self) -> None:
        self._kept = None

    def current(self) -> CachedRows | None:
        """The source kept last, if it is still alive."""
        return None if self._kept is None else self._kept()

    def keep(self, rows: CachedRows) -> CachedRows:
        """``rows``, the previous source's rows released."""
        previous = None if self._kept is None else self._kept()
        if previous is not None and previous is not rows:
            previous.release()
        self._kept = weakref.ref(rows)
        return rows


class CachedRows:
    """Rows of one kernel matrix from a *source*, LRU-cached within ``cache_size`` MB.

    The source has ``n_samples``, ``rows(indices, out=None)`` of shape (1, len(indices), n),
    ``diagonal()`` of shape (1, n), ``matvec(v)`` (``K v`` without the cache) and
    ``block(indices)`` (``K[indices][:, indices]``).

    Raises
    ------
    ValueError
        If ``cache_size`` holds fewer than two rows (the message gives the minimum).
    """

    def __init__(self, source: Any, cache_size: float, most: float | None = None,
                 on_full: Any = None, spare: np.ndarray | None = None) -> None:
        self.check_budget(source.n_samples, cache_size)
        self.source = source
        self.cache = RowCache(source, cache_size, most, on_full, spare)
        self.n_samples = source.n_samples
        self.store, self.slot_of = self.cache.store, self.cache.slot_of
        self.last_used, self.clock = self.cache.last_used, self.cache.clock

    @staticmethod
    def check_budget(n_samples: int, cache_size: float) -> None:
        """ValueError naming the minimum when ``cache_size`` MB holds fewer than two rows."""
        cache_capacity(cache_size, 8 * n_samples, n_samples, f"K(d) ({n_samples} samples)")

    def load(self, i: int) -> None:
        self.cache.load(i)

    def release(self) -> None:
        """Give the cached rows back to the machine: later reads compute them again, through
        a cache of two rows (a solver done with this kernel keeps it only for its records)."""
        self.cache = RowCache(self.source, 2 * self.cache.store[0].nbytes / MB)
        self.store, self.slot_of = self.cache.store, self.cache.slot_of
        self.last_used, self.clock = self.cache.last_used, self.cache.clock

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        return self.matvec(v)

    def submatrix(self, indices: np.ndarray) -> np.ndarray:
        """``K[indices][:, indices]``, float64 of shape (len(indices), len(indices))."""
        return self.source.block(np.asarray(indices, dtype=np.int64))

    def diagonal(self) -> np.ndarray:
        return self.source.diagonal()

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``K v`` from the cached rows of the support of v when they fit in the cache
        (missing ones are loaded, several per call of the source), else from the source."""
        support = np.flatnonzero(v)
        cache = self.cache
        if not cache.make_room(support.size):
            return self.source.matvec(v)
        slots = cache.slot_of[support]
        cache.clock[0] += 1
        cache.last_used[slots[slots >= 0]] = cache.clock[0]  # kept while loading
        if (slots < 0).any():
            cache.load_many(support[slots < 0])
            slots = cache.slot_of[support]
        store = cache.store.reshape(cache.store.shape[0], -1)
        return rows_product(store, slots, np.ascontiguousarray(v[support], dtype=np.float64))


class _Combined:
    """The rows of ``K(d) = sum_k d_k K_k`` as a source of :class:`CachedRows`: each
    request goes to the operator's ``combined_*`` methods (one route; an operator that sums
    faster, on Dask workers or by table, overrides them)."""

    capabilities = Capabilities(fills_out=True)
    value_dtype = np.dtype(np.float64)
    n_kernels = 1

    def __init__(self, operator: Any, d: np.ndarray) -> None:
        self.operator = operator
        self.n_samples = operator.n_samples
        self.kernels = np.flatnonzero(d > 0)
        self.weights = np.ascontiguousarray(d[self.kernels], dtype=np.float64)
        self.rows_per_call = int(operator.combined_rows_per_call(self.kernels.size))
        self._fill = operator.combined_row_maker(self.kernels, self.weights)

    def rows(self, indices, out=None):
        indices = np.atleast_1d(np.asarray(indices, dtype=np.int64))
        if self.kernels.size == 0:
            empty = np.zeros((1, indices.size, self.n_samples)) if out is None else out
            empty.fill(0.0)
            return empty
        if out is None:
            return self.operator.combined_rows(indices, self.kernels, self.weights)[None]
        if self._fill is None or not self._fill(indices, out[0]):
            self.operator.combined_rows(indices, self.kernels, self.weights, out=out[0])
        return out

    def diagonal(self) -> np.ndarray:
        return self.operator.combined_diagonal(self.kernels, self.weights)[None, :]

    def matvec(self, v: np.ndarray) -> np.ndarray:
        return self.operator.combined_products(v, self.kernels, self.weights)

    def block(self, indices: np.ndarray) -> np.ndarray:
        return self.operator.combined_block(indices, self.kernels, self.weights)


class CombinedRows(CachedRows):
    """Rows of ``K(d) = sum_k d_k K_k`` from a base-kernel provider, LRU-cached.

    Parameters
    ----------
    provider : KernelColumns, StackColumns, StringColumns, SumOfKernels or RowKernels
        Serves ``rows(indices, kernels)`` of shape (len(kernels), len(indices), n).
    d : ndarray of shape (n_kernels,)
        Kernel weights (>= 0); only kernels with ``d_k > 0`` are read.
    cache_size : float
        Budget of the combined rows in MB (at least two rows of ``8 n`` bytes).
    most, on_full, spare : optional
        Room up to ``most`` MB once ``on_full()`` has freed it; the slots of a released
        source to fill again (see :class:`~mklearn.kernels.cache.RowCache`).
    """

    def __init__(self, provider: Any, d: np.ndarray, cache_size: float,
                 most: float | None = None, on_full: Any = None,
                 spare: np.ndarray | None = None) -> None:
        super().__init__(_Combined(provider, np.asarray(d, dtype=np.float64)), cache_size,
                         most, on_full, spare)


def start_mb(n_samples: int) -> float:
    """MB a growing cache of base rows starts with: what LIBSVM's default cache
    (``START_MB``) fills at most, one kernel's whole matrix on ``n_samples`` points in single
    precision, but at least ``LEAST_START_MB``."""
    return min(START_MB, max(4.0 * n_samples * n_samples / MB, LEAST_START_MB))


class BaseRows:
    """Rows of every base kernel of a provider, LRU-cached (the SMO-MKL step reads them).

    The cache starts at what one SVM's kernel cache holds at most on the same points
    (:func:`start_mb`) and grows toward ``cache_size`` only where computing evicted rows
    again costs more than holding them and would have saved a share of the rows computed
    (:class:`~mklearn.kernels.cache.RowCache`, ``start``): rows of every kernel are ``m``
    times larger than one kernel's, and most are read once.
    """

    def __init__(self, provider: Any, cache_size: float, slots: Any = None) -> None:
        # the rows the cache's slots hold: the provider's, or those of ``slots``
        self.cache = RowCache(provider if slots is None else slots, cache_size,
                              start=start_mb(provider.n_samples))
        self.n_samples = provider.n_samples
        self.store, self.slot_of = self.cache.store, self.cache.slot_of
        self.last_used, self.clock = self.cache.last_used, self.cache.clock
        self._provider = provider

    def load(self, i: int) -> None:
        self.cache.load(i)

    def diagonal(self) -> np.ndarray:
        """``K_k[i, i]`` of shape (m, n), or (m, 1) when the provider's view repeats each
        kernel's value along the samples (unit diagonals: no ``8 m n`` bytes)."""
        diagonal = np.asarray(self._provider.diagonal(), dtype=np.float64)
        if diagonal.ndim == 2 and diagonal.shape[1] > 1 and diagonal.strides[1] == 0:
            return np.ascontiguousarray(diagonal[:, :1])
        return np.ascontiguousarray(diagonal)

    def matvec(self, v: np.ndarray) -> np.ndarray:
        return self._provider.products(v)

    def base_store(self) -> BaseStore:
        """The rows the slots hold, as the SMO core reads them."""
        return held_rows(self.store)


class TableBaseRows(BaseRows):
    """Rows of every base kernel read from tables: the LRU cache keeps each point's squared
    distances on the sparse feature blocks (one or two bytes a value, against ``8 m`` bytes
    of base rows), and ``K_k[i, s] = tables[k, D_i[kernel_block[k], s]]``.

    Parameters
    ----------
    provider : KernelColumns
        The base kernels (diagonals and ``K_k v`` come from it).
    found : tuple
        ``(tables, kernel_block, distance_rows)`` from ``provider.base_tables()``: tables of
        shape (m, size), each kernel's block (m,), and the row provider of distance rows.
    cache_size : float
        MB of distance rows kept.
    """

    def __init__(self, provider: Any, found: tuple, cache_size: float) -> None:
        tables, kernel_block, distance_rows = found
        super().__init__(provider, cache_size, slots=distance_rows)
        self._tables, self._kernel_block = tables, kernel_block

    def base_store(self) -> BaseStore:
        """The distance rows the slots hold and the tables that read them."""
        return held_distances(self.cache.store, self._tables, self._kernel_block)


def base_rows(provider: Any, cache_size: float) -> BaseRows:
    """The rows of every base kernel for SMO-MKL: by table when the provider offers tables
    (``base_tables()``, RBF kernels on sparse integer points), else the rows themselves."""
    found = provider.base_tables() if provider.capabilities.base_tables else None
    if found is None:
        return BaseRows(provider, cache_size)
    return TableBaseRows(provider, found, cache_size)
