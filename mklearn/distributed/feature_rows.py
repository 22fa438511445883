"""Low-rank features in partitions on Dask workers: the data-parallel feature-space core.

The rows of ``Phi`` (shape (n, R)) are computed where the partitions of X lie, from one
fitted :class:`~mklearn.kernels.low_rank.LowRankMap` sent once, and stay there
(:class:`PartitionedFeatures`). Every pass of a feature-space solve is then a sum over
partitions (:class:`PartitionedRows`): the blocks ``u = Phi' v``, the outputs
``K(d) v``, a few rows for the exact solve on a support pattern, and the dual coordinate
descent at a fixed bias, which runs as CoCoA+ (Jaggi et al., "Communication-Efficient
Distributed Dual Coordinate Ascent", NeurIPS 2014; Ma, Smith, Jaggi et al., "Adding vs.
Averaging in Distributed Primal-Dual Optimization", ICML 2015, and Smith et al., JMLR 18,
2018, Algorithm 1 with the adding update ``gamma = 1`` and ``sigma' = K``): each round, every
partition runs a few epochs of :func:`mklearn.linear.dcd.coordinate_descent` on its own
variables against the local subproblem ``G_k(delta) = -p_k' delta - u' A_k delta -
sigma'/2 ||A_k delta||^2``, and the client adds up the K changes of u. The local subproblem
is the ordinary coordinate descent with the weights ``sigma' d`` and the blocks
``u / sigma' + A_k delta``, so the one-machine kernel serves it unchanged.

CoCoA+ alone moves slowly on low-rank features, whose points are strongly correlated
(``sigma' = K`` damps every local step). Each round therefore ends with an exact step on
the client, a decomposition step in the manner of Joachims ("Making large-scale SVM
learning practical", 1999): every partition sends its free variables and its worst
violators of the projected gradient (``WORKING_SET`` over all partitions) with their rows,
and the client runs coordinate descent over them with every other variable fixed.

The stopping test is the one-machine one, over every point, with 0 among the values (the
box-constrained optimum has every projected gradient at 0; a spread measured at one ``u``
rather than along an epoch could be small far from it): each round first measures the
projected gradient at the current ``u`` on its partition; the client stops when the
largest minus the smallest is at most ``eps``. What travels per round: vectors of length R
(blocks) and m (weights), each partition's dual variables, and the working set's rows
(at most ``WORKING_SET`` rows of R values); the kernel-weight steps run on the client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mklearn.kernels.base import Capabilities, KernelOperator
from mklearn.kernels.low_rank import block_squared_norms, low_rank_bytes, representative_rows
from mklearn.linear import KIND_FIXED, FeatureRows, block_outputs, block_products
from mklearn.linear.dcd import coordinate_descent

__all__ = ["HeldPart", "PartitionedFeatures", "PartitionedRows", "RecomputedPart",
           "by_partition"]

# epochs of each partition's local subproblem per round at the most (fewer when its own
# spread of the projected gradient reaches eps): more local work, fewer rounds
LOCAL_EPOCHS = 8
# variables of the client's exact step per round, over every partition: the free ones and
# the worst violators (a decomposition step, Joachims 1999, on top of CoCoA+'s)
WORKING_SET = 2048
WORKING_EPOCHS = 50  # epochs of that step at the most
_NO_PRIOR = np.ones(1)  # the smooth conjugates' prior: unused at fixed weights


def _features_of(mapping, block, dtype):
    """A partition's ``(Phi_p, squared norms)`` from its rows of X (on a worker)."""
    Phi = mapping.transform(np.asarray(block, dtype=np.float64))
    if Phi.dtype != dtype:
        Phi = Phi.astype(dtype)
    return Phi, block_squared_norms(Phi, mapping.starts_)


class HeldPart:
    """A partition whose features are computed once and kept."""

    def __init__(self, mapping, block, dtype) -> None:
        self.features = _features_of(mapping, block, dtype)

    def arrays(self):
        """``(Phi_p, squared norms)``."""
        return self.features


class RecomputedPart:
    """A partition that keeps its rows of X and computes its features at each pass (the
    plan's choice when they do not fit the workers)."""

    def __init__(self, mapping, block, dtype) -> None:
        self.mapping, self.block, self.dtype = mapping, np.asarray(block), dtype

    def arrays(self):
        return _features_of(self.mapping, self.block, self.dtype)


def _products(part, v):
    return block_products(part.arrays()[0], v)


def _outputs(part, starts, u, d, kernels):
    return block_outputs(part.arrays()[0], starts, u, d, kernels)


def _representatives(part):
    return representative_rows(part.arrays()[0])


def _take(part, rows):
    return np.asarray(part.arrays()[0][rows], dtype=np.float64)


def _kernel_rows(part, chosen, starts, kernels):
    """``K_k[chosen rows, this partition's points]`` for ``kernels``, shape
    (len(kernels), n_chosen, n_p)."""
    Phi = part.arrays()[0]
    return np.stack([chosen[:, starts[k]:starts[k + 1]]
                     @ np.asarray(Phi[:, starts[k]:starts[k + 1]], dtype=np.float64).T
                     for k in kernels])


def _diagonal(part):
    return part.arrays()[1].T.copy()


def _projected_gradient(Phi, starts, local_index, signs, linear, upper, alpha, u, d,
                        kernels):
    """The projected gradient of the partition's variables at ``u``."""
    grad = signs * block_outputs(Phi, starts, u, d, kernels)[local_index] + linear
    return np.where(alpha <= 0.0, np.minimum(grad, 0.0),
                    np.where(alpha >= upper, np.maximum(grad, 0.0), grad))


def _candidates(pg, alpha, upper, count):
    """The partition's share of the working set: its free variables first, then those of
    largest ``|PG|`` (none whose PG is 0 at a bound), ``count`` at the most."""
    free = (alpha > 0.0) & (alpha < upper)
    key = np.where(free, np.inf, np.abs(pg))
    useful = np.flatnonzero(key > 0.0)
    if useful.size > count:
        useful = useful[np.argpartition(-key[useful], count - 1)[:count]]
    return useful


def _round(part, local_index, signs, linear, upper, alpha, starts, u, d, kernels, sigma, eps,
           shrinking, seed, count):
    """One round on a partition: its projected gradient at ``u`` (its extremes, and its
    share of the working set with their rows), then CoCoA+'s epochs on its local subproblem
    (``LOCAL_EPOCHS`` at the most). Returns ``(alpha_p, A_p delta, high, low, steps,
    picked, rows, squared norms)``."""
    if signs.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return (alpha, np.zeros_like(u), -np.inf, np.inf, 0, empty,
                np.zeros((0, u.size)), np.zeros((0, d.size)))
    Phi, squared = part.arrays()
    pg = _projected_gradient(Phi, starts, local_index, signs, linear, upper, alpha, u, d,
                             kernels)
    picked = _candidates(pg, alpha, upper, count)
    rows = local_index[picked]
    alpha = alpha.copy()
    local = u / sigma
    before = local.copy()
    _, steps, _ = coordinate_descent(Phi, local_index, starts, signs, linear, upper, alpha,
                                     local, sigma * d, squared, kernels, KIND_FIXED, 1.0, 2.0,
                                     _NO_PRIOR, eps, LOCAL_EPOCHS, shrinking, seed,
                                     np.zeros(starts.size - 1))
    return (alpha, local - before, float(pg.max()), float(pg.min()), steps, picked,
            np.asarray(Phi[rows], dtype=np.float64), squared[rows])


def by_partition(offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, list]:
    """``(order, local)``: rows grouped by the partition that holds them (partition p holds
    ``offsets[p]:offsets[p + 1]``), ``local[p]`` their positions in it; the rows of every
    partition in turn, concatenated, are ``rows[order]``."""
    owner = np.searchsorted(offsets, rows, side="right") - 1
    order = np.argsort(owner, kind="stable")
    grouped, owners = rows[order], owner[order]
    return order, [grouped[owners == p] - offsets[p] for p in range(offsets.size - 1)]


@dataclass
class _Layout:
    """Each partition's dual variables (``variables[p]``) and their rows in it."""

    index: np.ndarray
    variables: list
    local: list


class PartitionedRows(FeatureRows):
    """The rows of ``Phi`` in Dask partitions (see the module docstring).

    Parameters
    ----------
    parts : list of dask.delayed.Delayed
        Persisted :class:`HeldPart` or :class:`RecomputedPart` of each partition (their
        ``arrays()``: ``(Phi_p, squared_norms_p)``), in row order.
    offsets : int64 ndarray of shape (n_parts + 1,)
        Partition p holds the rows ``offsets[p]:offsets[p + 1]``.
    starts : int64 ndarray of shape (m + 1,)
    """

    smooth_descent = False  # the smooth conjugates couple every partition's step

    def __init__(self, parts: list, offsets: np.ndarray, starts: Any) -> None:
        self.parts = list(parts)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.starts = np.asarray(starts, dtype=np.int64)
        self.n_samples = int(self.offsets[-1])
        self.n_rounds = 0
        self._layout: _Layout | None = None
        self._last_products: tuple | None = None

    @property
    def n_parts(self) -> int:
        return len(self.parts)

    def _each(self, function, *args, per_part=None):
        """``function(part, *per_part[p], *args)`` on every partition, computed at once."""
        import dask

        calls = [dask.delayed(function)(part, *(per_part[p] if per_part else ()), *args)
                 for p, part in enumerate(self.parts)]
        return dask.compute(*calls)

    def _slices(self, v):
        return [(v[lo:hi],) for lo, hi in zip(self.offsets[:-1], self.offsets[1:],
                                             strict=True)]

    def products(self, v: np.ndarray) -> np.ndarray:
        """``Phi' v`` (kept for the last v: a solve and its certificate ask for the same)."""
        v = np.asarray(v, dtype=np.float64)
        last = self._last_products
        if last is None or not np.array_equal(last[0], v):
            last = self._last_products = (v.copy(), np.sum(
                self._each(_products, per_part=self._slices(v)), axis=0))
        return last[1].copy()

    def outputs(self, u: np.ndarray, d: np.ndarray, kernels: np.ndarray) -> np.ndarray:
        d = np.asarray(d, dtype=np.float64)
        return np.concatenate(self._each(_outputs, self.starts, u, d,
                                         np.asarray(kernels, dtype=np.int64)))

    def representative_rows(self) -> np.ndarray:
        """Equal rows within each partition (rows of different partitions stay apart)."""
        found = self._each(_representatives)
        return np.concatenate([r + lo for r, lo in zip(found, self.offsets[:-1], strict=True)])

    def take(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        order, local = by_partition(self.offsets, rows)
        out = np.empty((rows.size, int(self.starts[-1])))
        out[order] = np.concatenate(self._each(_take, per_part=[(r,) for r in local]))
        return out

    def kernel_rows(self, rows: np.ndarray, kernels: np.ndarray) -> np.ndarray:
        """``K_k[rows]`` of ``kernels``, shape (len(kernels), len(rows), n)."""
        chosen = self.take(rows)
        return np.concatenate(self._each(_kernel_rows, chosen, self.starts, kernels), axis=2)

    def diagonal(self) -> np.ndarray:
        """``K_k[i, i]``, shape (m, n)."""
        return np.concatenate(self._each(_diagonal), axis=1)

    def layout(self, index: np.ndarray) -> _Layout:
        """The variables of each partition for the variable-to-row map ``index`` (kept for
        the last map)."""
        if self._layout is None or self._layout.index is not index:
            owner = np.searchsorted(self.offsets, index, side="right") - 1
            variables = [np.flatnonzero(owner == p) for p in range(self.n_parts)]
            local = [index[v] - self.offsets[p] for p, v in enumerate(variables)]
            self._layout = _Layout(index, variables, local)
        return self._layout

    def descend(self, index, signs, linear, upper, alpha, u, d, kernels, kind, lam, q, prior,
                eps, max_epochs, shrinking, seed) -> tuple[int, int]:
        """CoCoA+ rounds (module docstring) until the spread of the projected gradient is at
        most ``eps`` or ``max_epochs`` rounds; the arguments of
        :meth:`FeatureRows.descend` (``shrinking`` acts within a round). Only fixed
        weights: the smooth conjugates couple every partition's step.

        Raises
        ------
        ValueError
            For a smooth conjugate (``kind`` other than fixed weights).
        """
        if kind != KIND_FIXED:
            raise ValueError("partitioned features solve the SVM at fixed kernel weights "
                             "only; use solver='spg' (any regulariser with a gradient)")
        layout = self.layout(index)
        sigma = float(self.n_parts)
        d = np.asarray(d, dtype=np.float64)
        kernels = np.asarray(kernels, dtype=np.int64)
        count = max(1, WORKING_SET // self.n_parts)
        steps = 0
        for round_ in range(1, max_epochs + 1):
            per_part = [(layout.local[p], signs[v], linear[v], upper[v], alpha[v])
                        for p, v in enumerate(layout.variables)]
            results = self._each(_round, self.starts, u, d, kernels, sigma, eps, shrinking,
                                 seed + round_, count, per_part=per_part)
            self.n_rounds += 1
            high = max([0.0] + [r[2] for r in results])  # 0: every PG at 0 is optimal
            low = min([0.0] + [r[3] for r in results])
            if high - low <= eps:
                return round_, steps
            for v, result in zip(layout.variables, results, strict=True):
                alpha[v] = result[0]
                u += result[1]
                steps += result[4]
            steps += self._working_set_step(layout, results, signs, linear, upper, alpha, u, d,
                                            kernels, eps, shrinking, seed + round_)
        return max_epochs, steps

    def _working_set_step(self, layout, results, signs, linear, upper, alpha, u, d, kernels,
                          eps, shrinking, seed):
        """Coordinate descent on the client over the working set the partitions chose,
        every other variable fixed (an exact ascent step of the whole dual); its steps."""
        picked = np.concatenate([v[r[5]] for v, r in zip(layout.variables, results,
                                                         strict=True)])
        if picked.size == 0:
            return 0
        rows = np.concatenate([r[6] for r in results])
        squared = np.concatenate([r[7] for r in results])
        chosen = alpha[picked]
        _, steps, _ = coordinate_descent(rows, np.arange(picked.size), self.starts,
                                         signs[picked], linear[picked], upper[picked], chosen,
                                         u, d, squared, kernels, KIND_FIXED, 1.0, 2.0,
                                         _NO_PRIOR, eps, WORKING_EPOCHS, shrinking, seed,
                                         np.zeros(self.starts.size - 1))
        alpha[picked] = chosen
        return steps


class PartitionedFeatures(KernelOperator):
    """Base kernels ``K_k = Phi_k Phi_k'`` whose feature rows lie in Dask partitions.

    Parameters
    ----------
    rows : PartitionedRows
    dtype : numpy.dtype
        Of the features.

    The feature-space solvers that declare ``feature_rows`` (SPG-GMKL, mirror descent, the
    SVM at fixed weights) run on it; :meth:`rows` and :meth:`diagonal` gather what they
    return (``O(m n)`` and more: for checks, not for solves).
    """

    capabilities = Capabilities(trusted=True, feature_rows=True, support_products=False)

    def __init__(self, rows: PartitionedRows, dtype: Any = np.float64) -> None:
        self.feature_rows = rows
        self.starts = rows.starts
        self.n_samples = rows.n_samples
        self.n_kernels = self.starts.size - 1
        self.value_dtype = np.dtype(dtype)

    @classmethod
    def from_dask(cls, X, mapping, dtype: Any = np.float64,
                  hold: bool = True) -> PartitionedFeatures:
        """The features of a Dask array ``X`` (chunked by rows) by ``mapping`` on its
        partitions (persisted): computed once and kept (``hold``), or each partition's rows
        of X kept and its features computed at every pass."""
        import dask

        dtype = np.dtype(dtype)
        X = X.rechunk({1: -1})
        sent = dask.delayed(mapping, pure=True)
        part = HeldPart if hold else RecomputedPart
        parts = [dask.delayed(part)(sent, block, dtype) for block in X.to_delayed().ravel()]
        parts = list(dask.persist(*parts))
        offsets = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
        return cls(PartitionedRows(parts, offsets, mapping.starts_), dtype)

    def rows(self, indices: Any, kernels: Any = None) -> np.ndarray:
        indices = np.atleast_1d(np.asarray(indices, dtype=np.int64))
        kernels = np.arange(self.n_kernels) if kernels is None else np.asarray(kernels)
        return self.feature_rows.kernel_rows(indices, kernels)

    def diagonal(self) -> np.ndarray:
        return self.feature_rows.diagonal()

    def memory_bytes(self) -> int:
        return low_rank_bytes(self.n_samples, int(self.starts[-1]), self.value_dtype.itemsize)
