"""A row-backed kernel operator whose per-kernel work runs on Dask workers.

:class:`DaskKernels` wraps a :class:`~mklearn.kernels.operator.RowKernels`. The kernels are
split into contiguous blocks; each block's provider (the points and that block's kernel
parameters, ``provider.kernel_subset``) is scattered to every worker once. Per call, the
client sends the support's indices and coefficients (and, for a partial gradient, the
kernels asked for), each worker returns its block's numbers, and the client puts them
together in kernel order:

- ``kernel_gradient`` (quadratic terms ``v' K_k v`` from the support's ``S x S`` block),
- ``products`` and ``gradient_and_products`` (``K_k v``, SILP's per-kernel outputs and
  SPG's Newton model),

Everything else (rows of ``K(d)`` for the inner SVM, the Newton model's rows over the few
live kernels, diagonals) is the wrapped operator's, in this process. Dask does the
scheduling, transfers and retries; mklearn adds no scheduler of its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mklearn.distributed import _tasks
from mklearn.distributed.backend import check_workers

__all__ = ["DaskKernels"]


class DaskKernels:
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
        Blocks of kernels; default ``4 x`` the workers' threads (at most m).

    Attributes
    ----------
    bytes_sent, bytes_received : int
        Array bytes of the task arguments sent and of the results received so far (Dask's
        own messages not counted).
    n_calls : int
        Distributed passes so far (one per gradient or products call).

    Raises
    ------
    RuntimeError
        If a worker lacks mklearn or runs another version (:func:`check_workers`), or a
        worker was lost for good during a pass (the message says what to do).
    """

    name = "sum"
    linear = True
    thread_safe = False  # the wrapped operator's row cache

    def __init__(self, local: Any, client: Any = None, n_blocks: int | None = None) -> None:
        self.local = local
        self.client = client
        self.n_samples = local.n_samples
        self.n_kernels = m = local.n_kernels
        self.kernel_names = local.kernel_names
        provider = local.provider
        if client is not None:
            check_workers(client)
        if n_blocks is None:
            threads = 1 if client is None else sum(client.nthreads().values())
            n_blocks = 4 * max(threads, 1)
        bounds = np.unique(np.linspace(0, m, min(int(n_blocks), m) + 1).astype(np.int64))
        self.bounds = bounds
        subset = getattr(provider, "kernel_subset", None)
        if subset is not None:  # each block carries its own kernels only
            parts = [subset(np.arange(a, b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
            self._offsets = bounds[:-1]
            self._own_blocks = True
        else:  # one provider for every block, kernels named by their global index
            parts = [provider]
            self._offsets = np.zeros(bounds.size - 1, dtype=np.int64)
            self._own_blocks = False
        self.bytes_sent = self.bytes_received = self.n_calls = 0
        if client is not None:
            # on every worker: a lost worker loses no data, any worker can run any block
            parts = client.scatter(parts, broadcast=True, hash=False)
        self._parts = parts if len(parts) > 1 else parts * (bounds.size - 1)

    def __repr__(self) -> str:
        where = "in process" if self.client is None else "on Dask"
        return (f"DaskKernels(n_samples={self.n_samples}, n_kernels={self.n_kernels}, "
                f"blocks={self.bounds.size - 1}, {where})")

    # the wrapped operator's own work ---------------------------------------------------------
    @property
    def provider(self):
        return self.local.provider

    def diagonal(self) -> np.ndarray:
        return self.local.diagonal()

    def rows(self, indices, kernels=None) -> np.ndarray:
        return self.local.rows(indices, kernels)

    def combined_block(self, indices, kernels, weights) -> np.ndarray:
        return self.local.combined_block(indices, kernels, weights)

    def kernel(self, d):
        return self.local.kernel(d)

    def kernel_rows_times(self, kernels, rows, v):
        return self.local.kernel_rows_times(kernels, rows, v)

    # per-kernel passes on the workers ----------------------------------------------------------
    def kernel_gradient(self, d: np.ndarray, v: np.ndarray, kernels=None) -> np.ndarray:
        """``g_k = v' K_k v`` for every k or for ``kernels``; shape (m,) or (len(kernels),),
        computed on the workers from the support's block."""
        return self._pass(_tasks.quadratic_terms, v, kernels, ())

    def products(self, v: np.ndarray, kernels=None) -> np.ndarray:
        """``K_k v`` for every k or for ``kernels``: float64 of shape (m or len(kernels), n)."""
        return self._pass(_tasks.products, v, kernels, (self.n_samples,))

    def gradient_and_products(self, v: np.ndarray, kernels=None):
        """``(g, P)`` as :meth:`RowKernels.gradient_and_products`, P from the workers; None
        exactly when the wrapped operator gives None (the support does not fit in its
        cache: then only the quadratic terms, :meth:`kernel_gradient`)."""
        v = np.asarray(v, dtype=np.float64)
        if np.count_nonzero(v) > self.local.base.capacity:
            return None
        P = self.products(v, kernels)
        return (P * v).sum(axis=1), P

    def _pass(self, task, v, kernels, tail):
        """Run ``task(part, support, v_s, local kernels)`` on every block that holds a
        requested kernel and return the results in the requested kernel order."""
        v = np.asarray(v, dtype=np.float64)
        support = np.flatnonzero(v)
        v_s = np.ascontiguousarray(v[support])
        picked = (np.arange(self.n_kernels) if kernels is None
                  else np.asarray(kernels, dtype=np.int64).ravel())
        out = np.zeros((picked.size, *tail))
        if picked.size == 0 or support.size == 0:
            return out
        block_of = np.searchsorted(self.bounds, picked, side="right") - 1
        jobs = []
        for b in np.unique(block_of):
            where = np.flatnonzero(block_of == b)
            whole = kernels is None and self._own_blocks
            local = None if whole else picked[where] - self._offsets[b]
            jobs.append((where, (self._parts[b], support, v_s, local)))
        self.n_calls += 1
        self.bytes_sent += sum(support.nbytes + v_s.nbytes + (0 if a[3] is None else a[3].nbytes)
                               for _, a in jobs)
        results = self._run(task, [args for _, args in jobs])
        for (where, _), result in zip(jobs, results, strict=True):
            out[where] = result
            self.bytes_received += result.nbytes
        return out

    def _run(self, task, arguments):
        if self.client is None:
            return [task(*args) for args in arguments]
        from concurrent.futures import CancelledError

        from distributed.scheduler import KilledWorker

        futures = [self.client.submit(task, *args, pure=False) for args in arguments]
        try:
            return self.client.gather(futures)
        except (KilledWorker, CancelledError) as error:
            raise RuntimeError(
                f"Dask lost the workers of a per-kernel pass ({type(error).__name__}: "
                f"{error}); Dask retried it as often as distributed.scheduler.allowed-"
                "failures allows. The fit is abandoned (no partial model): check the "
                "workers' memory and logs, then fit again") from error
        finally:
            for future in futures:
                future.release()
