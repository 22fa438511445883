"""The row-backed kernel operator: ``K(d) = sum_k d_k K_k`` without an ``(n, n, m)`` stack.

:class:`~mklearn.formulation.combinations.SumOfKernels` is the stack-backed operator
(precomputed kernels,
or small n). :class:`RowKernels` offers the same methods to the solvers (``kernel(d)``,
``kernel_gradient``, ``gradient_and_products``, ``kernel_rows_times``, ``rows``,
``diagonal``) with every number computed from rows of the base kernels, which a provider
evaluates from X (:class:`~mklearn.kernels.columns.KernelColumns`, string kernels) and one
LRU cache keeps within a byte budget:

- ``kernel(d)`` is a row source of ``K(d)`` for the SMO core
  (:class:`~mklearn.kernels.row_sources.CombinedRows`, rows combined over the kernels with
  ``d_k > 0``);
  ``K(d) @ v`` multiplies over the support of v;
- the quadratic terms ``v' K_k v`` and products ``K_k v`` read the rows of the support of
  ``v`` only (the support vectors);

Memory is ``O(m n)`` plus the cache budget.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from mklearn._sizes import MB, PASS_CHUNK_BYTES, ROW_BLOCK_BYTES
from mklearn.kernels import passes
from mklearn.kernels.base import Capabilities, KernelOperator
from mklearn.kernels.cache import RowCache
from mklearn.kernels.row_sources import CombinedRows, NewestRows, combined_diagonal

__all__ = ["RowKernels", "row_path_bytes"]

COMBINED_SHARE_LARGE = 0.9  # budget share of the rows of K(d) when no support fits the rest
DISTANCE_SHARE = 0.5  # budget share of the squared-distance rows a provider may keep,
COMBINED_FIRST = 0.5  # once rows of K(d) for this share of the points fit in the rest
WORKING_SET_MARGIN = 1.25  # rows of K(d) kept, later, per row a solve read (the largest yet)
PRICE_ROWS = 4  # base rows of the support computed into the cache to price the others


def row_path_bytes(n_samples: int, n_kernels: int, cache_size: float,
                   points_bytes: int = 0) -> int:
    """Bytes the row path needs: the cache budget, ``O(m n)`` state (per-kernel outputs or
    products ``K_k v``, diagonals, one block of rows) and ``points_bytes``, what the provider
    keeps of the points (:func:`~mklearn.kernels.bank.feature_block_bytes`)."""
    return int(cache_size * MB) + 4 * 8 * n_samples * n_kernels + int(points_bytes)


class RowKernels(KernelOperator):
    """``K(d) = sum_k d_k K_k`` over base kernels whose rows a provider computes on demand.

    Parameters
    ----------
    provider : KernelColumns, StackColumns or StringColumns
        ``rows(indices, kernels=None)`` of shape (len(kernels), len(indices), n) and
        ``diagonal()`` of shape (m, n).
    cache_size : float
        MB for kernel rows: rows of ``K(d)`` for the inner SVM (``8 n`` bytes each; all n
        when they fit in half the budget), the rest rows of every base kernel (``8 m n`` bytes
        each, the support vectors' rows for the quadratic terms); each holds at least two
        rows. When half the budget holds the base rows of fewer than ``n / 10`` points,
        ``K(d)`` gets ``COMBINED_SHARE_LARGE`` of it.

    Attributes
    ----------
    combined_cache_size : float
        MB of the budget for rows of ``K(d)`` (every row source :meth:`kernel` returns).

    Raises
    ------
    ValueError
        If ``cache_size`` holds fewer than two rows of each kind (the message gives the
        minimum).
    """

    # one row cache, written on misses: one solve at a time; the terms come with products
    # only while the support's rows fit in the cache and were bought (rent or buy)
    capabilities = Capabilities(combined_row_maker=True, support_products=False,
                                thread_safe=False, trusted=True)

    def __init__(self, provider: Any, cache_size: float = 200.0) -> None:
        self.provider = provider
        self.capabilities = replace(  # what the provider can do on the points
            type(self).capabilities, restricted=provider.capabilities.restricted,
            linadd=provider.capabilities.linadd)
        self.n_samples = provider.n_samples
        self.n_kernels = provider.n_kernels
        self.kernel_names = provider.kernel_names
        n, m = self.n_samples, self.n_kernels
        need = 2 * 8 * (m + 1) * n
        try:
            budget = float(cache_size) * MB
        except (TypeError, ValueError):
            budget = float("nan")
        if not budget >= need:
            raise ValueError(
                f"cache_size={cache_size!r} MB cannot hold two rows of the {m} base kernels "
                f"and two of K(d) on {n} samples; it must be at least {need / MB:.6g} MB: "
                "raise cache_size")
        # a provider that evaluates rows from kept squared distances (integer points,
        # rbf_tables) gets up to DISTANCE_SHARE of the budget for them (they outlive every
        # K(d), whose rows then cost table loads only), after room for the rows of K(d) of
        # COMBINED_FIRST of the points (the inner SVM's working set: on w8a's first 20,000
        # points with 1,000 MB, distances that left K(d) half its rows cost 48.6 -> 63.8 s,
        # its rows computed 83,000 -> 271,000 times; with 4,000 MB they saved 47.6 -> 38.8 s)
        self._distance_bytes = (provider.distance_row_bytes()
                                if provider.capabilities.distance_rows else 0)
        self._need, self._budget = need, budget
        self._distances_kept = 0.0
        self._working_set = 0  # most rows of K(d) one solve has read
        if self._distance_bytes:
            kept = min(DISTANCE_SHARE * budget, n * self._distance_bytes,
                       budget - need - 8.0 * n * COMBINED_FIRST * n)
            if kept >= 2 * self._distance_bytes:
                provider.keep_distance_rows(kept / MB)
                self._distances_kept = kept
                budget -= kept
        # then rows of K(d) (8 n bytes each, all n of them when they fit in half of what is
        # left), the rest for rows of every base kernel; when half holds the base rows of
        # fewer than a tenth of the points (no support fits: every pass computes its rows),
        # K(d) gets COMBINED_SHARE_LARGE of it, the base kernels two rows at least
        share = 0.5 if 0.5 * budget >= 8.0 * m * n * max(2, n // 10) else COMBINED_SHARE_LARGE
        # kernels by table: the passes read the support's block, not rows of every kernel
        self._tabulated = provider.capabilities.distance_rows and provider.tabulated()
        if self._tabulated:
            share = 1.0
        combined = min(share * budget, 8.0 * n * n, budget - 2 * 8.0 * m * n)
        self.combined_cache_size = max(combined, 2 * 8.0 * n) / MB
        self.base = RowCache(provider, budget / MB - self.combined_cache_size)
        self._diagonal = None
        self._cache_size = float(cache_size)
        self._newest = NewestRows()
        self._rent_seconds = 0.0  # seconds of quadratic terms from support blocks so far
        self._row_seconds = None  # seconds to compute one row of every base kernel (priced)
        self._combined_touched = 0  # most bytes of K(d) rows one store has held (reused)

    def __repr__(self) -> str:
        return f"RowKernels(n_samples={self.n_samples}, n_kernels={self.n_kernels})"

    def subset(self, indices) -> RowKernels | None:
        """The same kernels on the points ``indices`` only, with the same cache budget; None
        when the provider cannot restrict itself to some points (``restricted``)."""
        if not self.provider.capabilities.restricted:
            return None
        return RowKernels(self.provider.restricted(np.asarray(indices, dtype=np.int64)),
                          self._cache_size)

    def diagonal(self) -> np.ndarray:
        """``K_k[i, i]``, float64 of shape (m, n) (a read-only view when the provider's is:
        unit diagonals repeat each kernel's scale)."""
        if self._diagonal is None:
            self._diagonal = np.asarray(self.provider.diagonal(), dtype=np.float64)
        return self._diagonal

    def rows(self, indices, kernels=None) -> np.ndarray:
        """Rows ``indices`` of the kernels ``kernels`` (all by default): float64 of shape
        (len(kernels), len(indices), n). Rows in the cache are read from it; the others are
        computed for ``kernels`` only and not cached (the cache keeps the support's rows of
        every kernel, for the quadratic terms)."""
        indices = np.atleast_1d(np.asarray(indices, dtype=np.int64))
        picked = np.arange(self.n_kernels) if kernels is None else np.asarray(kernels, np.int64)
        slots = self.base.slot_of[indices]
        cached = slots >= 0
        if not cached.any():
            return self.provider.rows(indices, picked)
        out = np.empty((picked.size, indices.size, self.n_samples))
        out[:, cached] = self.base.store[np.ix_(slots[cached], picked)].transpose(1, 0, 2)
        if not cached.all():
            out[:, ~cached] = self.provider.rows(indices[~cached], picked)
        return out

    def combined_rows(self, indices, kernels, weights, restrict=False, out=None) -> np.ndarray:
        """``sum_t weights[t] K_{kernels[t]}[indices, :]``, shape (len(indices), n) (with
        ``restrict``, columns ``indices`` only): from the cached rows of every base kernel
        when they are all there, else computed in small chunks of kernels
        (:func:`mklearn.kernels.passes.weighted_rows`); into ``out`` (C-contiguous, shape
        (len(indices), n)) when given, without ``restrict``."""
        indices = np.atleast_1d(np.asarray(indices, dtype=np.int64))
        kernels = np.asarray(kernels, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float64)
        slots = self.base.slot_of[indices]
        if (slots >= 0).all():  # gathered a few rows at a time (a copy of kernels x rows)
            rows = np.empty((indices.size, self.n_samples)) if out is None else out
            step = max(1, PASS_CHUNK_BYTES // (8 * max(kernels.size, 1) * self.n_samples))
            for a0 in range(0, indices.size, step):
                block = self.base.store[np.ix_(slots[a0:a0 + step], kernels)]
                rows[a0:a0 + step] = np.tensordot(weights, block, axes=(0, 1))
            return rows[:, indices] if restrict else rows
        return passes.weighted_rows(self.provider, indices, (kernels, weights), restrict, out)

    def combined_row_maker(self, kernels, weights):
        """The provider's ``fill(indices, out) -> bool`` for rows of ``sum_t weights[t]
        K_{kernels[t]}`` (``KernelColumns.combined_row_maker``), or None; it declines
        (False) rows whose base rows are all cached, which :meth:`combined_rows` combines
        from the cache."""
        fill = self.provider.combined_row_maker(kernels, weights)
        if fill is None:
            return None
        slot_of = self.base.slot_of

        def from_provider(indices, out) -> bool:
            return not (slot_of[indices] >= 0).all() and fill(indices, out)

        return from_provider

    def combined_products(self, v, kernels, weights) -> np.ndarray:
        """``sum_t weights[t] K_{kernels[t]} v`` over the support of v, shape (n,): from the
        support's rows of the weighted sum (:func:`mklearn.kernels.passes.weighted_products`),
        each inner product or distance computed once for every kernel."""
        v = np.asarray(v, dtype=np.float64)
        support = np.flatnonzero(v)
        return passes.weighted_products(
            self.provider, support, v[support],
            (np.asarray(kernels, dtype=np.int64), np.asarray(weights, dtype=np.float64)))

    def combined_diagonal(self, kernels, weights) -> np.ndarray:
        """``sum_t weights[t] diag K_{kernels[t]}``, shape (n,). With few kernels active and
        the (m, n) diagonals not yet computed, only those kernels' diagonals are (10^6 Sonar
        kernels: 12 s for all of them, in the client)."""
        kernels = np.asarray(kernels, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float64)
        if (self._diagonal is None and self.provider.capabilities.kernel_subset
                and 2 * kernels.size < self.n_kernels):
            subset = self.provider.kernel_subset(kernels)
            return weights @ np.asarray(subset.diagonal(), dtype=np.float64)
        return combined_diagonal(self.diagonal(), kernels, weights)

    def combined_block(self, indices, kernels, weights) -> np.ndarray:
        """``sum_t weights[t] K_{kernels[t]}[indices][:, indices]``, shape
        (len(indices), len(indices)): computed on those points only when the provider can
        restrict itself to them (:meth:`combined_rows` with ``restrict``)."""
        return self.combined_rows(indices, kernels, weights, restrict=True)

    def kernel(self, d: np.ndarray) -> CombinedRows:
        """A row source of ``K(d)`` for the SMO core (``K(d) @ v`` also works); the rows
        of the one made before are released (:class:`~mklearn.kernels.row_sources.NewestRows`)."""
        d = np.asarray(d, dtype=np.float64)
        previous = self._newest.current()
        spare = None if previous is None else previous.cache.store  # released by keep
        if previous is not None:
            self._combined_touched = max(self._combined_touched, previous.cache.nbytes)
        if previous is not None and self._distances_kept == 0.0:
            self._keep_distances_for(len(previous.cache))
        if self._distances_kept > 0.0 and self._tabulated:
            rows = CombinedRows(self, d, self.combined_cache_size,
                                self._combined_without_distances(), self._drop_distances,
                                spare)
        else:
            rows = CombinedRows(self, d, self.combined_cache_size, spare=spare)
        return self._newest.keep(rows)

    def spare_bytes(self, current: Any = None) -> int:
        """Bytes of the cache budget that no row holds now: room, within the budget, for a
        solver's dense work that is freed before the next solve (SPG-GMKL's Newton system).
        Counts the base rows held, the distance rows held and the most rows of ``K(d)`` its
        store has held (``current``: the row source in use, default the last
        :meth:`kernel`)."""
        current = self._newest.current() if current is None else current
        held = current.cache.nbytes if current is not None else 0
        distances = (self.provider.kept_distance_bytes() if self._distances_kept > 0.0
                     else 0)
        used = self.base.nbytes + distances + max(self._combined_touched, held)
        return max(0, int(self._budget - used))

    def _combined_without_distances(self) -> float:
        """MB for rows of ``K(d)`` when no distance rows are kept (kernels by table)."""
        n = self.n_samples
        room = self._budget - 2 * 8.0 * self.n_kernels * n
        return max(min(room, 8.0 * n * n), 2 * 8.0 * n) / MB

    def _keep_distances_for(self, rows_read: int) -> None:
        """Keep distance rows (kernels by table) once ``WORKING_SET_MARGIN`` times the most
        rows of ``K(d)`` a solve has read (``rows_read`` the last) still fit beside the
        distances of as many points. Full w8a, SPG-GMKL l1, 50 kernels, cache auto (5.7 GB):
        a solve reads about 8,600 rows of 39,799; the distances kept then serve them for
        every ``K(d)``."""
        self._working_set = max(self._working_set, rows_read)
        if not (self._tabulated and self._distance_bytes and self._working_set >= 2):
            return
        n, row = self.n_samples, 8.0 * self.n_samples
        rows = min(n, WORKING_SET_MARGIN * self._working_set)
        kept = min(DISTANCE_SHARE * self._budget, n * self._distance_bytes,
                   self._budget - self._need - row * rows)
        if kept < self._working_set * self._distance_bytes:
            return
        self.provider.keep_distance_rows(kept / MB)
        self._distances_kept = kept
        self.combined_cache_size = max(
            min(self._combined_without_distances(), (self._budget - kept) / MB), 2 * row / MB)

    def _drop_distances(self) -> bool:
        """Give the kept distance rows' room to the rows of ``K(d)``, for good: a solve read
        more rows than fit beside them (SILP on the full w8a: 16,100 rows in its second
        solve), and recomputing evicted rows would cost more than the distances save."""
        self.provider.keep_distance_rows(0)
        self._distances_kept = -1.0
        self.combined_cache_size = self._combined_without_distances()
        return True

    def linadd(self):
        """The provider's explicit feature map (capability ``linadd``, string kernels)."""
        return self.provider.linadd()

    def block(self, indices, kernels=None) -> np.ndarray:
        """Kernels among the points ``indices``: (len(kernels), q, q) (capability
        ``linadd``: the provider's ``block``)."""
        return self.provider.block(indices, kernels)

    def products(self, v: np.ndarray, kernels=None) -> np.ndarray:
        """``K_k v`` for ``kernels`` (all by default) over the support of ``v``: float64 of
        shape (len(kernels), n). Rows come from the cache when the support fits in it,
        else in small chunks computed by the provider (:func:`passes.products`)."""
        v = np.asarray(v, dtype=np.float64)
        support = np.flatnonzero(v)
        m = self.n_kernels if kernels is None else len(kernels)
        out = np.zeros((m, self.n_samples))
        if support.size <= self.base.capacity:
            picked = slice(None) if kernels is None else np.asarray(kernels, dtype=np.int64)
            for s in support:
                out += v[s] * self.base.get(s)[picked]
            return out
        return passes.products(self.provider, support, v[support], kernels)

    def _reads_base_rows(self, support: np.ndarray) -> bool:
        """Whether the per-kernel passes read cached rows of every base kernel: the support
        fits in the cache, the kernels do not come from tables (then a pass over the
        support's block costs less), and, where the provider can compute the support's block
        alone (``restricted``), buying the support's missing rows costs no more than the
        passes over blocks have cost so far (rent or buy: within twice the better choice in
        hindsight). A row of every base kernel holds ``m n`` values where a block pass
        computes ``m |S|^2 / 2`` for all S rows, written to memory where the block's stay in
        registers: SPG-GMKL l1 on abalone from X, 50 RBF kernels, 1,851 support vectors:
        2.75 s to compute their rows, 0.13-0.21 s a block pass, ten passes in the fit."""
        if support.size > self.base.capacity or self._tabulated:
            return False
        if not self.provider.capabilities.restricted:
            return True
        missing = support[self.base.slot_of[support] < 0]
        if missing.size == 0:
            return True
        if self._rent_seconds == 0.0:
            return False
        return missing.size * self._row_price(missing) <= self._rent_seconds

    def _row_price(self, missing: np.ndarray) -> float:
        """Seconds to compute one row of every base kernel into the cache, timed once on
        ``PRICE_ROWS`` of the ``missing`` rows (kept in the cache)."""
        if self._row_seconds is None:
            sample = missing[:PRICE_ROWS]
            began = time.perf_counter()
            for i in sample:
                self.base.get(i)
            self._row_seconds = (time.perf_counter() - began) / sample.size
        return self._row_seconds

    def _block_terms(self, support: np.ndarray, v_s: np.ndarray, kernels) -> np.ndarray:
        """The quadratic terms from the support's block (:func:`passes.quadratic_terms`),
        its seconds counted as rent (:meth:`_reads_base_rows`)."""
        began = time.perf_counter()
        terms = passes.quadratic_terms(self.provider, support, v_s, kernels)
        self._rent_seconds += time.perf_counter() - began
        return terms

    def kernel_gradient(self, d: np.ndarray, v: np.ndarray, kernels=None) -> np.ndarray:
        """``g_k = v' K_k v`` for every k or for ``kernels``; shape (m,) or (len(kernels),).

        From cached rows when the support of v fits in the cache, the kernels do not come
        from tables and buying the missing rows pays (rent or buy: :meth:`_reads_base_rows`);
        else from the support's block ``K_k[S, S]`` only (a provider with ``restricted``), in
        small chunks (:func:`mklearn.kernels.passes.quadratic_terms`).
        """
        v = np.asarray(v, dtype=np.float64)
        support = np.flatnonzero(v)
        if self._reads_base_rows(support):
            return self.products(v, kernels) @ v
        if kernels is not None:
            kernels = np.asarray(kernels, dtype=np.int64)
        return self._block_terms(support, v[support], kernels)

    def gradient_and_products(self, v: np.ndarray, kernels=None):
        """``(g, P)``: ``g_k = v' K_k v`` and ``P[t] = K_k v`` for every k (or the t-th of
        ``kernels``), in one pass over the support's rows; P has shape (m or len(kernels),
        n). None when the support does not fit in the cache, the kernels come from tables or
        the passes over the support's blocks have not yet cost what its missing rows would
        (then :meth:`kernel_gradient` reads the support's block only, and no P)."""
        v = np.asarray(v, dtype=np.float64)
        if not self._reads_base_rows(np.flatnonzero(v)):
            return None
        P = self.products(v, kernels)
        return P @ v, P

    def kernel_rows_times(self, kernels: np.ndarray, rows: np.ndarray, v: np.ndarray):
        """``K_k[rows] @ v`` for each k in ``kernels``; shape (len(kernels), len(rows)):
        without storing the rows when the provider has ``row_dots``, else computed in blocks
        of about 64 MB of rows."""
        kernels = np.asarray(kernels, dtype=np.int64)
        rows = np.atleast_1d(np.asarray(rows, dtype=np.int64))
        v = np.asarray(v, dtype=np.float64)
        if self.provider.capabilities.row_dots:
            return self.provider.row_dots(rows, kernels, v[None, :])
        out = np.empty((kernels.size, rows.size))
        block = max(1, ROW_BLOCK_BYTES // (8 * max(kernels.size, 1) * self.n_samples))
        for start in range(0, rows.size, block):
            out[:, start:start + block] = self.rows(rows[start:start + block], kernels) @ v
        return out
