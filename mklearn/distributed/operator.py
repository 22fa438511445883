"""A row-backed kernel operator whose per-kernel work runs on Dask workers.

:class:`DaskKernels` wraps a :class:`~mklearn.kernels.operator.RowKernels`. The kernels are
split into blocks (kernel k in block k mod B, so that any subset of kernels spreads over
the blocks); each block's provider (the points and that block's kernel
parameters, ``provider.kernel_subset``) is scattered to every worker once (sent again if a
lost worker took its last copy: Dask's active memory manager keeps one copy of scattered
data, dask/dask#11148). Per call, the
client sends the support's indices and coefficients (and, for a partial gradient, the
kernels asked for), each worker returns its block's numbers, and the client puts them
together in kernel order:

- ``kernel_gradient`` (quadratic terms ``v' K_k v`` from the support's ``S x S`` block),
- ``products`` and ``gradient_and_products`` (``K_k v``, SILP's per-kernel outputs and
  SPG's Newton model),
- rows, blocks and products of ``K(d)`` for the inner SVM when many kernels are active
  (``combined_rows``, ``combined_block``, ``combined_products``: each worker sums its block,
  the client adds the blocks in block order).

The rest (small combined rows, the Newton model's rows over the few live kernels, the
diagonals, the row caches) is the wrapped operator's, in this process. Dask does the
scheduling, transfers and retries; mklearn adds no scheduler of its own.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from mklearn.distributed.backend import check_workers
from mklearn.kernels import passes
from mklearn.kernels.base import Capabilities, KernelOperator
from mklearn.kernels.row_sources import CombinedRows, NewestRows

__all__ = ["DaskKernels", "DISTRIBUTE_MIN_VALUES"]

# kernel values below which a combined row or product is computed here: a round trip to the
# workers costs milliseconds (Sonar, 10^4 kernels: rows of 2 10^6 values were 2.5x slower
# on 2 workers than here; bench_distributed.py)
DISTRIBUTE_MIN_VALUES = 10_000_000
# kernel values a pass of rows of K(d) computes at least (rows asked for together): a round
# trip of 8 tasks cost about 35-50 ms on a 2-worker LocalCluster, a row of 10^5 Sonar kernels
# 25 ms of one core. Larger batches lost: 4 10^9 values (192 rows at 10^5 kernels) computed
# rows no solve needed and split each block into chunks of a dozen kernels (2x slower)
PASS_VALUES = 1_000_000_000
# times a pass is sent again after a lost worker took the only copy of a scattered block
# (Dask's active memory manager keeps one copy of broadcast data, dask/dask#11148)
RESCATTERS = 3


class DaskKernels(KernelOperator):
    """``K(d) = sum_k d_k K_k`` with the per-kernel passes on a Dask cluster.

    Parameters
    ----------
    local : RowKernels
        The operator of this process (its ``provider`` computes rows from X; its cache
        serves the inner SVM).
    client : distributed.Client or None
        The cluster. None runs the same blocks one after the other in this process (the
        reference the distributed results equal bit for bit).
    n_blocks : int, optional
        Blocks of kernels (at most m); default 8, or twice the workers' threads when more.
        Results depend on the blocks only through the order of the sums of ``K(d)``'s rows
        (bit for bit the same for the same blocks, in process or on any cluster).

    Attributes
    ----------
    bytes_sent, bytes_received : int
        Array bytes of the task arguments sent and of the results received so far (Dask's
        own messages not counted).
    n_calls : int
        Distributed passes so far (one per gradient, products or combined-row call).
    n_rescatters : int
        Times the blocks were scattered again because a lost worker held the last copy of
        one (the pass then ran again; at most ``RESCATTERS`` times a pass).
    seconds : dict
        Task name -> (passes, wall-clock seconds from submission to the last result).

    Raises
    ------
    RuntimeError
        If a worker lacks mklearn or runs another version (:func:`check_workers`), or
        workers kept being lost during a pass (beyond Dask's ``allowed-failures`` or
        ``RESCATTERS`` re-sends; the message says what to do).
    """

    # one row cache in this process, written on misses: one solve at a time
    capabilities = Capabilities(support_products=False, thread_safe=False, trusted=True)

    def __init__(self, local: Any, client: Any = None, n_blocks: int | None = None) -> None:
        self.local = local
        self.client = client
        self.combined_cache_size = local.combined_cache_size
        self._newest = NewestRows()
        self.n_samples = local.n_samples
        self.n_kernels = m = local.n_kernels
        self.kernel_names = local.kernel_names
        provider = local.provider
        if client is not None:
            check_workers(client)
        if n_blocks is None:  # the same blocks (and sums) in process and on small clusters
            threads = 1 if client is None else sum(client.nthreads().values())
            n_blocks = max(8, 2 * threads)
        # kernel k in block k % B: the kernels a partial pass asks for (neighbours in the
        # bank's order, e.g. the bandwidths of one feature) spread over every block
        self.n_blocks = B = max(1, min(int(n_blocks), m))
        self._own_blocks = provider.capabilities.kernel_subset
        if self._own_blocks:  # each block carries its own kernels only
            parts = [provider.kernel_subset(np.arange(b, m, B)) for b in range(B)]
        else:  # one provider for every block, kernels named by their global index
            parts = [provider]
        self.bytes_sent = self.bytes_received = self.n_calls = 0
        self._weights = None  # (weights, kernels, blocks, per-block parts) of the last K(d)
        self.seconds = {}  # task name -> (passes, wall-clock seconds until all results are in)
        self.n_rescatters = 0
        self._local_parts = parts
        self._scatter_parts()

    def _scatter_parts(self) -> None:
        """Send the blocks' providers to the workers (to every one; Dask's active memory
        manager may later keep one copy of each, so a lost worker can take a block's only
        copy with it: :meth:`_gather` then calls this again)."""
        parts = self._local_parts
        if self.client is not None:
            parts = self.client.scatter(parts, broadcast=True, hash=False)
        self._parts = parts if self._own_blocks else parts * self.n_blocks
        self._weights = None

    def __repr__(self) -> str:
        where = "in process" if self.client is None else "on Dask"
        return (f"DaskKernels(n_samples={self.n_samples}, n_kernels={self.n_kernels}, "
                f"blocks={self.n_blocks}, {where})")

    # the wrapped operator's own work ---------------------------------------------------------
    @property
    def provider(self):
        return self.local.provider

    def diagonal(self) -> np.ndarray:
        return self.local.diagonal()

    def rows(self, indices, kernels=None) -> np.ndarray:
        return self.local.rows(indices, kernels)

    def kernel(self, d):
        """A row source of ``K(d)`` for the SMO core whose rows (when many kernels are
        active) are combined on the workers (:meth:`combined_rows`); the rows of the one
        made before are released (:class:`~mklearn.kernels.row_sources.NewestRows`)."""
        return self._newest.keep(
            CombinedRows(self, np.asarray(d, dtype=np.float64), self.combined_cache_size))

    def kernel_rows_times(self, kernels, rows, v):
        return self.local.kernel_rows_times(kernels, rows, v)

    def spare_bytes(self) -> int:
        """The wrapped operator's :meth:`~RowKernels.spare_bytes`, with this operator's
        rows of ``K(d)``."""
        return self.local.spare_bytes(self._newest.current())

    # per-kernel passes on the workers ----------------------------------------------------------
    def kernel_gradient(self, d: np.ndarray, v: np.ndarray, kernels=None) -> np.ndarray:
        """``g_k = v' K_k v`` for every k or for ``kernels``; shape (m,) or (len(kernels),),
        computed on the workers from the support's block."""
        v = np.asarray(v, dtype=np.float64)
        support = np.flatnonzero(v)
        return self._pass(passes.quadratic_terms, kernels, (support, v[support]))

    def products(self, v: np.ndarray, kernels=None) -> np.ndarray:
        """``K_k v`` for every k or for ``kernels``: float64 of shape (m or len(kernels), n)."""
        v = np.asarray(v, dtype=np.float64)
        support = np.flatnonzero(v)
        return self._pass(passes.products, kernels, (support, v[support]),
                          shape=(self.n_samples,))

    def gradient_and_products(self, v: np.ndarray, kernels=None):
        """``(g, P)`` as :meth:`RowKernels.gradient_and_products`, P from the workers; None
        exactly when the wrapped operator gives None (the support does not fit in its
        cache: then only the quadratic terms, :meth:`kernel_gradient`)."""
        v = np.asarray(v, dtype=np.float64)
        if np.count_nonzero(v) > self.local.base.capacity:
            return None
        P = self.products(v, kernels)
        return (P * v).sum(axis=1), P

    def combined_rows(self, indices, kernels, weights, restrict=False, out=None) -> np.ndarray:
        """``sum_t weights[t] K_{kernels[t]}[indices, :]``, shape (len(indices), n) (with
        ``restrict``, columns ``indices`` only; into ``out`` when given): each worker sums
        its block, the client adds the blocks in block order. Small requests (under
        ``DISTRIBUTE_MIN_VALUES`` kernel values) stay in this process."""
        indices = np.atleast_1d(np.asarray(indices, dtype=np.int64))
        kernels = np.asarray(kernels, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float64)
        if kernels.size * indices.size * self.n_samples < DISTRIBUTE_MIN_VALUES:
            rows = self.local.combined_rows(indices, kernels, weights, restrict)
        else:
            width = indices.size if restrict else self.n_samples
            rows = self._weighted_pass(passes.weighted_rows, kernels, weights, (indices,),
                                       (restrict,), (indices.size, width))
        if out is None:
            return rows
        out[...] = rows
        return out

    def combined_rows_per_call(self, n_kernels: int) -> int:
        """Rows of ``K(d)`` over ``n_kernels`` active kernels worth one pass on the workers
        (about ``PASS_VALUES`` kernel values, at most n); 1 when a row stays in this process
        (under ``DISTRIBUTE_MIN_VALUES``). The row cache then loads that many at a miss."""
        per_row = max(int(n_kernels), 1) * self.n_samples
        if per_row < DISTRIBUTE_MIN_VALUES:
            return 1
        return max(1, min(self.n_samples, PASS_VALUES // per_row))

    def combined_diagonal(self, kernels, weights) -> np.ndarray:
        """``sum_t weights[t] diag K_{kernels[t]}``, shape (n,): each worker sums its block's
        diagonals when many kernels are active (at least ``DISTRIBUTE_MIN_VALUES`` values),
        else this process from the wrapped operator's diagonals."""
        kernels = np.asarray(kernels, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float64)
        if kernels.size * self.n_samples < DISTRIBUTE_MIN_VALUES:
            return self.local.combined_diagonal(kernels, weights)
        return self._weighted_pass(passes.weighted_diagonal, kernels, weights, (), (),
                                   (self.n_samples,))

    def combined_block(self, indices, kernels, weights) -> np.ndarray:
        """``sum_t weights[t] K_{kernels[t]}[indices][:, indices]`` (:meth:`combined_rows`
        restricted to the points ``indices``)."""
        return self.combined_rows(indices, kernels, weights, restrict=True)

    def combined_products(self, v, kernels, weights) -> np.ndarray:
        """``sum_t weights[t] K_{kernels[t]} v`` over the support of v, shape (n,)."""
        v = np.asarray(v, dtype=np.float64)
        kernels = np.asarray(kernels, dtype=np.int64)
        support = np.flatnonzero(v)
        if kernels.size * support.size * self.n_samples < DISTRIBUTE_MIN_VALUES:
            return np.asarray(weights, dtype=np.float64) @ self.local.products(v, kernels)
        return self._weighted_pass(passes.weighted_products, kernels, weights,
                                   (support, v[support]), (), (self.n_samples,))

    def _blocks(self, kernels):
        """[(block, positions in ``kernels``, its kernels as the block's part names them, or
        None for all of them)] for the blocks holding one of ``kernels`` (all if None)."""
        picked = (np.arange(self.n_kernels) if kernels is None
                  else np.asarray(kernels, dtype=np.int64).ravel())
        block_of = picked % self.n_blocks
        out = []
        for b in np.unique(block_of):
            where = np.flatnonzero(block_of == b)
            local = picked[where] // self.n_blocks if self._own_blocks else picked[where]
            size = (self.n_kernels - b + self.n_blocks - 1) // self.n_blocks
            whole = self._own_blocks and local.size == size and np.array_equal(
                local, np.arange(size))
            out.append((b, where, None if whole else local))
        return picked, out

    def _pass(self, task, kernels, head, shape=()):
        """``task(part, *head, local kernels)`` on every block holding one of ``kernels``;
        each kernel's result (of ``shape``) at its position in ``kernels``."""
        picked, blocks = self._blocks(kernels)
        out = np.zeros((picked.size, *shape))
        if picked.size == 0 or any(np.size(h) == 0 for h in head):
            return out
        def arguments():
            return [(self._parts[b], *head, local) for b, _, local in blocks]

        self.n_calls += 1
        self._count_sent(arguments())
        for (_, where, _), result in zip(blocks, self._run(task, arguments), strict=True):
            self.bytes_received += result.nbytes
            out[where] = result
        return out

    def _weighted_pass(self, task, kernels, weights, head, tail, total):
        """``task(part, *head, (local kernels, their weights), *tail)`` on every block
        holding one of ``kernels``; the blocks' results added in block order.
        The (kernels, weights) of each block go to the workers once per weight vector
        (the SVM asks for many rows of one ``K(d)``)."""
        out = np.zeros(total)
        if np.size(kernels) == 0 or any(np.size(h) == 0 for h in head):
            return out
        def arguments():
            cached = self._weights
            if cached is None or cached[0] is not weights or cached[1] is not kernels:
                _, blocks = self._blocks(kernels)
                parts = [(local, np.ascontiguousarray(weights[where], dtype=np.float64))
                         for _, where, local in blocks]
                self._count_sent([parts])
                if self.client is not None:
                    parts = self.client.scatter(parts, broadcast=True, hash=False)
                self._weights = cached = (weights, kernels, [b for b, _, _ in blocks], parts)
            return [(self._parts[b], *head, part, *tail)
                    for b, part in zip(cached[2], cached[3], strict=True)]

        self.n_calls += 1
        self._count_sent([args[1:len(head) + 1] for args in arguments()])
        for result in self._run(task, arguments):
            self.bytes_received += result.nbytes
            out += result
        return out

    def _count_sent(self, arguments):
        """Add the array bytes in ``arguments`` (a list of argument tuples) to bytes_sent."""
        for args in arguments:
            for item in args:
                for a in (item if isinstance(item, tuple) else (item,)):
                    self.bytes_sent += a.nbytes if isinstance(a, np.ndarray) else 0

    def _run(self, task, arguments):
        """``task(*args)`` for every ``args`` in ``arguments()`` (a callable, called again
        after the scattered blocks were sent anew), timed in :attr:`seconds`."""
        start = time.perf_counter()
        try:
            return self._gather(task, arguments)
        finally:
            calls, seconds = self.seconds.get(task.__name__, (0, 0.0))
            self.seconds[task.__name__] = (calls + 1, seconds + time.perf_counter() - start)

    def _gather(self, task, arguments):
        if self.client is None:
            return [task(*args) for args in arguments()]
        from concurrent.futures import CancelledError

        from distributed import Future
        from distributed.scheduler import KilledWorker

        for attempt in range(RESCATTERS + 1):
            try:
                return self._submit_and_gather(task, arguments())
            except CancelledError as error:
                scattered = [a for args in arguments() for a in args if isinstance(a, Future)]
                if attempt == RESCATTERS or all(f.status == "finished" for f in scattered):
                    failure = error
                    break
                # a lost worker took the only copy of a scattered block: send them again
                self.n_rescatters += 1
                self._scatter_parts()
            except KilledWorker as error:
                failure = error
                break
        raise RuntimeError(
            f"Dask lost the workers of a per-kernel pass ({type(failure).__name__}: "
            f"{failure}); Dask retried it as often as distributed.scheduler.allowed-"
            "failures allows. The fit is abandoned (no partial model): check the "
            "workers' memory and logs, then fit again") from failure

    def _submit_and_gather(self, task, arguments):
        futures = [self.client.submit(task, *args, pure=False) for args in arguments]
        try:
            return self.client.gather(futures)
        finally:
            for future in futures:
                future.release()
