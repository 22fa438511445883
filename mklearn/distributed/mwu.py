"""MWUMKL on Dask: each block of kernels keeps its state in a Dask actor on a worker.

MWUMKL's per-kernel state (``G_i alpha``, m x n numbers) changes at every iteration, and an
iteration needs two passes over every kernel with a small reduction between them
(:mod:`mklearn.solvers.mwu_blocks`). Tasks would send the state back and forth; a Dask actor
(``client.submit(cls, ..., actor=True)``, Dask's own stateful worker object) keeps its block
where it is, and a call costs a few milliseconds. Per iteration the client sends two point
indices and two numbers and receives, per block, three numbers and the block's part of the
margin (n numbers).

The blocks are dealt as in :class:`~mklearn.distributed.DaskKernels` (kernel k in block
k mod B) and their numbers added in block order, so a run equals the same blocks run in
this process (:class:`~mklearn.solvers.mwu_blocks.MWUBlocks`) bit for bit.

An actor's state lives on one worker: if that worker is lost the fit stops with a
``RuntimeError`` (Dask cannot rebuild an actor's state), never with a partial model.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mklearn.distributed.backend import check_workers
from mklearn.kernels.base import Capabilities, KernelOperator
from mklearn.solvers.mwu_blocks import MWUBlock, MWUBlocks, block_kernels, kernel_part

__all__ = ["DaskColumns", "DaskMWUBlocks"]


class DaskColumns(KernelOperator):
    """A column provider whose MWUMKL state runs on a Dask cluster.

    Rows, diagonals and names are the wrapped provider's, in this process; the solver's
    per-kernel state goes to the workers through :meth:`mwu_blocks`.

    Parameters
    ----------
    provider : KernelColumns, StackColumns or StringColumns
        The base kernels' rows (each block gets its kernels' part, ``kernel_subset``, or the
        whole provider when it cannot split).
    client : distributed.Client or None
        The cluster. None runs the same blocks one after the other in this process (the
        reference a cluster run equals bit for bit).
    n_blocks : int, optional
        Blocks of kernels; default one per worker thread (1 without a client).

    Raises
    ------
    RuntimeError
        If a worker lacks mklearn or runs another version.
    """

    def __init__(self, provider: Any, client: Any = None, n_blocks: int | None = None) -> None:
        self.provider = provider
        self.client = client
        if client is not None:
            check_workers(client)
        if n_blocks is None:
            n_blocks = 1 if client is None else sum(client.nthreads().values())
        self.n_blocks = max(1, int(n_blocks))

    @property
    def capabilities(self) -> Capabilities:
        """Its own MWUMKL blocks; rows written in place as the provider writes them."""
        return Capabilities(mwu_blocks=True, fills_out=self.provider.capabilities.fills_out,
                            trusted=self.provider.capabilities.trusted)

    @property
    def n_samples(self) -> int:
        return self.provider.n_samples

    @property
    def n_kernels(self) -> int:
        return self.provider.n_kernels

    @property
    def value_dtype(self):
        return self.provider.value_dtype

    @property
    def kernel_names(self) -> list[str]:
        return self.provider.kernel_names

    def rows(self, indices, kernels=None, **out) -> np.ndarray:
        return self.provider.rows(indices, kernels, **out)

    def diagonal(self) -> np.ndarray:
        return self.provider.diagonal()

    def __repr__(self) -> str:
        where = "in process" if self.client is None else "on Dask"
        return f"DaskColumns({self.provider!r}, blocks={self.n_blocks}, {where})"

    def mwu_blocks(self, y, inv_trace, valid, cache_size):
        """MWUMKL's per-kernel state (:class:`DaskMWUBlocks`, or in process without a
        client)."""
        if self.client is None:
            return MWUBlocks(self.provider, y, inv_trace, valid, cache_size, self.n_blocks)
        return DaskMWUBlocks(self.provider, self.client, y, inv_trace, valid, cache_size,
                             self.n_blocks)


class DaskMWUBlocks(MWUBlocks):
    """:class:`~mklearn.solvers.mwu_blocks.MWUBlocks` with each block in a Dask actor,
    placed on the workers in turn; the same methods, reductions and results."""

    def __init__(self, provider, client, y, inv_trace, valid, cache_size, n_blocks):
        self.kernels = block_kernels(provider.n_kernels, n_blocks)
        workers = sorted(client.nthreads())
        share = float(cache_size) / len(self.kernels)
        self._futures = [
            client.submit(MWUBlock, kernel_part(provider, k), y, inv_trace[k], valid[k], share,
                          actor=True, workers=[workers[b % len(workers)]], pure=False)
            for b, k in enumerate(self.kernels)]
        self.blocks = [self._result(future) for future in self._futures]

    @staticmethod
    def _result(future):
        try:
            return future.result()
        except Exception as error:
            raise RuntimeError(
                f"Dask lost a worker holding part of MWUMKL's per-kernel state "
                f"({type(error).__name__}: {error}); an actor's state cannot be rebuilt, so the "
                "fit is abandoned (no partial model): check the workers' memory and logs, then "
                "fit again") from error

    def _each(self, call):
        calls = [call(actor) for actor in self.blocks]  # all run at once
        return [self._result(call) for call in calls]

    def finish(self, last_total, accumulate, averaged):
        try:
            return super().finish(last_total, accumulate, averaged)
        finally:
            self.blocks, self._futures = [], []  # the workers free the state
