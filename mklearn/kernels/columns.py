"""Rows of the base kernels on demand, without ever forming an ``n x n`` matrix.

Solvers that touch a few kernel columns per iteration (SMO-MKL, MWUMKL) read them from a
*column provider*: :class:`KernelColumns` evaluates them from the training points,
:class:`StackColumns` slices a precomputed stack, and :class:`~mklearn.kernels.cache.RowCache`
keeps the most recently used rows within a byte budget (LIBSVM's kernel cache, Chang and Lin,
ACM TIST 2011, section 4.3). By symmetry, row i of a kernel is also its column i.

Both providers expose ``n_samples``, ``n_kernels``, ``kernel_names``, ``dtype`` (float64),
``diagonal()`` of shape ``(m, n)`` and ``rows(indices, kernels=None)`` of shape
``(len(kernels), len(indices), n)``.
"""

from __future__ import annotations

import threading
from typing import Any

import numba
import numpy as np
import scipy.sparse
from scipy.spatial.distance import cdist

from mklearn._sizes import STORED_ROWS_BYTES
from mklearn.kernels.held_stack import HeldStack

from . import threads
from ._numba import (
    bit_block_arrays,
    bit_block_arrays_parallel,
    csc_block_arrays,
    csc_block_arrays_parallel,
    fill_kernel_rows_parallel,
    fill_kernel_stack,
    rbf_combined_rows,
    rbf_combined_rows_parallel,
    rbf_row_dots,
    rbf_row_dots_parallel,
    rbf_rows,
    rbf_rows_f32,
    rbf_rows_f32_parallel,
    rbf_rows_parallel,
    single_column_rbf_rows,
    single_column_rbf_rows_parallel,
    single_column_sq_distances,
    squared_distances_from_products,
)
from .bank import (
    SPARSE_DENSITY,
    KernelBank,
    _block,
    _build_plan,
    _check_index_array,
    _column_counts,
    _Plan,
    _subset_plan,
    at_most_two_values,
    block_key,
    few_values,
    fill_python_kernels,
    has_unit_diagonals,
    kernel_diagonals,
    sparse_block,
)
from .base import Capabilities, KernelOperator
from .rbf_tables import RBFTables
from .row_sources import DenseRows
from .specs import KIND_RBF
from .threads import use_threads

__all__ = ["KernelColumns", "StackColumns"]



class KernelColumns(KernelOperator):
    """Rows of the base kernels of a fitted :class:`KernelBank`, computed from the points.

    Kernels on the same feature block share one inner product / distance per pair (one BLAS
    product per multi-column block, single columns read directly), and the numba loop of the
    bank evaluates them; memory is ``O(len(indices) * n * m)`` for the output only.

    Parameters
    ----------
    bank : KernelBank
        A fitted bank (``bank.fit(X)`` fits the standardisation and trace scales from the
        kernel diagonals only, in ``O(n m)``).
    X : array-like of shape (n_samples, n_features), optional
        Points the kernels are evaluated on, in the original feature space (the bank's
        standardisation is applied). Default: the bank's fitted points ``bank.X_fit_``.

    Attributes
    ----------
    n_samples : int
        Number of points n.
    n_kernels : int
        Number of base kernels m.
    kernel_names : list of str
        Names of the base kernels, in the bank's order.
    dtype : numpy.dtype
        float64 (the dtype of every returned array).
    value_dtype : numpy.dtype
        float32 for a float32 bank (the values are single precision: a row cache keeps them
        in 4 bytes), else float64.

    Raises
    ------
    ValueError
        If ``bank`` is not a fitted KernelBank, or X is invalid or has the wrong number of
        features.

    Notes
    -----
    Entries agree with ``bank.fit_transform(X)`` up to rounding (the full stack takes
    inner products from one symmetric product, the rows from a general one). RBF values come
    from a vectorised ``exp``: in float64, the arithmetic one of
    :func:`~mklearn.kernels._numba.rbf_rows` (the bank's stacks use the same); with a float32
    bank (``KernelBank(..., dtype=numpy.float32)``, ``kernel_dtype="float32"`` in the
    estimators) its single-precision version (a few units of float32's roundoff), and every
    value is then a single-precision number (as in the bank's float32 stack), kept in 4 bytes
    by a row cache. Rows are float64 arrays either way.
    """

    dtype = np.dtype(np.float64)
    capabilities = Capabilities(
        fills_out=True, row_filler=True, sums_rows=True, combined_row_maker=True, base_tables=True,
        distance_rows=True, restricted=True, kernel_subset=True, row_dots=True, trusted=True)

    def __init__(self, bank: KernelBank, X: Any = None) -> None:
        if not isinstance(bank, KernelBank) or not hasattr(bank, "trace_scales_"):
            raise ValueError(
                f"KernelColumns needs a fitted KernelBank (call bank.fit(X) first); got {bank!r}."
            )
        if X is None:
            points = bank.X_fit_
        else:
            points = bank.prepare(X)
        self._X = np.ascontiguousarray(points, dtype=np.float64)
        self._single = bank.dtype == np.float32
        # the precision of the values (a row cache may keep them in it)
        self.value_dtype = np.dtype(np.float32 if self._single else np.float64)
        self._scratch_buffers = {}  # thread id -> work array (classes fit side by side)
        self._specs = bank.specs
        self._scales = np.asarray(bank.trace_scales_, dtype=np.float64)
        self.n_samples = self._X.shape[0]
        self.n_kernels = bank.n_kernels
        self.kernel_names = list(bank.kernel_names)
        self._full_plan = _build_plan(self._specs, self._X.shape[1])
        self._subset_plan: tuple[bytes, _Plan] | None = None
        self._blocks: dict[Any, tuple[Any, np.ndarray, Any]] = {}
        self._dense_blocks: dict[Any, np.ndarray] = {}  # sparse blocks made dense (L1)
        self._csc_blocks: dict[Any, tuple] = {}  # sparse blocks' CSC arrays (scatter pass)
        self._bit_blocks: dict[Any, Any] = {}  # dense 0/1 blocks' packed bits (None: not 0/1)
        self._counts: np.ndarray | None = None  # non-zeros per feature (_column_counts)
        self._single_features: tuple | None = None  # copies by feature (_single_columns)
        self._tables = RBFTables(self)  # RBF kernels by table on integer points

    def __repr__(self) -> str:
        return f"KernelColumns(n_samples={self.n_samples}, n_kernels={self.n_kernels})"

    def _plan(self, kernels: np.ndarray | None) -> tuple[_Plan, np.ndarray]:
        """The evaluation plan of ``kernels`` (all when None) and its per-kernel scales."""
        if kernels is None:
            plan = self._full_plan
            return plan, self._scales[plan.out_index]
        key = kernels.tobytes()
        cached = self._subset_plan  # read once: another thread may replace it
        if cached is None or cached[0] != key:
            cached = self._subset_plan = (key, _subset_plan(self._full_plan, kernels))
        plan = cached[1]
        return plan, self._scales[kernels][plan.out_index]

    def _request(self, indices: Any, kernels: Any):
        """``(indices, kernels, plan, scales)`` of a call, the indices checked (ValueError
        when out of range or not integers; kernels None: all)."""
        indices = _check_index_array(np.atleast_1d(indices), self.n_samples, "indices")
        if kernels is not None:
            kernels = _check_index_array(np.atleast_1d(kernels), self.n_kernels, "kernels")
        return (indices, kernels, *self._plan(kernels))

    def point_subset(self, indices: Any) -> KernelColumns:
        """:meth:`restricted`: the kernels computed on those points only."""
        return self.restricted(indices)

    def restricted(self, indices: Any) -> KernelColumns:
        """The same kernels on the points ``indices`` only: a provider whose row a is
        ``K_k[indices[a], indices]`` (the support's block of a quadratic term)."""
        indices = _check_index_array(np.atleast_1d(indices), self.n_samples, "indices")
        sub = object.__new__(KernelColumns)
        sub.__dict__.update(self.__dict__)
        sub._X = np.ascontiguousarray(self._X[indices])
        sub.n_samples = sub._X.shape[0]
        sub._blocks, sub._dense_blocks, sub._csc_blocks, sub._bit_blocks = {}, {}, {}, {}
        sub._counts = sub._single_features = None
        sub._tables = self._tables.restricted(sub, indices)
        sub._scratch_buffers = {}
        return sub

    def kernel_subset(self, kernels: Any) -> KernelColumns:
        """The kernels ``kernels`` only (in that order) on the same points: a provider of
        ``len(kernels)`` kernels, small to send to another process (a block of kernels that
        a Dask worker evaluates, :mod:`mklearn.distributed`)."""
        kernels = _check_index_array(np.atleast_1d(kernels), self.n_kernels, "kernels")
        sub = object.__new__(KernelColumns)
        sub.__dict__.update(self.__dict__)
        sub._specs = [self._specs[k] for k in kernels]
        sub._scales = self._scales[kernels]
        sub.n_kernels = kernels.size
        names = self.kernel_names  # one copy of the list (each read of the property copies)
        sub.kernel_names = [names[k] for k in kernels]
        sub._full_plan = _subset_plan(self._full_plan, kernels)
        sub._subset_plan, sub._blocks, sub._scratch_buffers = None, {}, {}
        sub._dense_blocks, sub._csc_blocks = {}, {}
        sub._bit_blocks = self._bit_blocks  # the same points
        sub._tables = self._tables.same_points(sub)
        return sub

    def _block_points(self, columns: np.ndarray | None, scales: np.ndarray | None):
        """The points restricted to a multi-column block, their squared norms and whether
        the block is mostly zero, cached. A sparse block is kept as a CSR matrix, not a dense
        copy (the full w8a's four half-feature blocks: 190 MB), and its query rows are made
        dense per call (:func:`_dense_rows`); the CSC arrays of the scatter pass come from
        :meth:`_block_csc`, built only when that pass runs (RBF kernels by table read their
        own packed copy: 15.6 MB spared on the full w8a)."""
        key = block_key(columns, scales)
        if key not in self._blocks:
            X = self._X
            if columns is None and scales is None:  # X itself: no copy
                sparse = np.count_nonzero(X) / max(X.size, 1) <= SPARSE_DENSITY
                self._blocks[key] = (X, np.einsum("ij,ij->i", X, X), sparse)
                return self._blocks[key]
            width = X.shape[1] if columns is None else len(columns)
            kept = self._column_counts() if columns is None else self._column_counts()[columns]
            if scales is not None:
                kept = np.where(np.asarray(scales) != 0.0, kept, 0)
            sparse = kept.sum() / max(X.shape[0] * width, 1) <= SPARSE_DENSITY
            if not sparse:
                Xb = _block(X, columns, scales)
                self._blocks[key] = (Xb, np.einsum("ij,ij->i", Xb, Xb), False)
                return self._blocks[key]
            self._blocks[key] = (*sparse_block(X, columns, scales), True)  # non-zeros only
        return self._blocks[key]

    def _column_counts(self) -> np.ndarray:
        """Non-zeros of each feature of the points, counted a band of rows at a time."""
        if self._counts is None:
            self._counts = _column_counts(self._X)
        return self._counts

    def _share_sparse_blocks(self, position: dict, csr: list) -> None:
        """Keep the sparse blocks ``csr`` (views of the tables' packed arrays, ``position``
        mapping each block's key to its place) in place of this provider's CSR copies."""
        for key, place in position.items():
            held = self._blocks.get(key)
            if held is not None and scipy.sparse.issparse(held[0]):
                self._blocks[key] = (csr[place], held[1], held[2])

    def _block_csc(self, columns: np.ndarray | None, scales: np.ndarray | None):
        """A sparse block's CSC arrays (column pointers, row indices, values; unsigned
        indices spare numba's negative-index checks), cached. A row's inner products read
        all of a dense block (``8 n d`` bytes, memory-bound); on sparse data a query row
        scatters only the columns of its own non-zero features (rows against every point,
        one thread: a9a 264 -> 184 us, a9a half its columns 333 -> 65 us, w8a 669 -> 23 us,
        against a pass over every point's non-zeros)."""
        key = block_key(columns, scales)
        if key not in self._csc_blocks:
            csc = scipy.sparse.csc_matrix(self._block_points(columns, scales)[0])
            self._csc_blocks[key] = (csc.indptr.astype(np.uint64),
                                     csc.indices.astype(np.uint32), csc.data)
        return self._csc_blocks[key]

    def _bit_block(self, columns: np.ndarray | None, scales: np.ndarray | None, points):
        """A dense block's points as packed bits (``(n, words)`` uint64, feature f in bit
        f % 64 of word f // 64) when every value is 0 or 1, else None; cached. Their inner
        products are counts of common features (:func:`bit_block_arrays`): one row of dna's
        2,000 points against its 180 binary features, by a product, read 180 values a point."""
        key = block_key(columns, scales)
        if key not in self._bit_blocks:
            binary = bool(((points == 0.0) | (points == 1.0)).all())
            self._bit_blocks[key] = _packed_bits(points) if binary else None
        return self._bit_blocks[key]

    def _dense_block(self, columns: np.ndarray | None, scales: np.ndarray | None):
        """The block's points as a dense array (L1 distances read them all), cached."""
        points = self._block_points(columns, scales)[0]
        if not scipy.sparse.issparse(points):
            return points
        key = block_key(columns, scales)
        if key not in self._dense_blocks:
            self._dense_blocks[key] = points.toarray()
        return self._dense_blocks[key]

    def _multi_arrays(self, plan: _Plan, indices: np.ndarray):
        """Inner products, squared and L1 distances ``(n_multi, len(indices), n)``; the inner
        products are overwritten by the squared distances where no kernel reads them."""
        n_multi = len(plan.multi_columns)
        if n_multi == 0:
            placeholder = np.zeros((1, 1, 1))
            return placeholder, placeholder, placeholder
        shape = (n_multi, indices.size, self.n_samples)
        inner = np.empty(shape)  # where no kernel reads them, the distances in their place
        sq_dist = (np.empty(shape) if any(plan.multi_needs_sq) and plan.multi_needs_inner
                   else inner)
        l1_dist = np.empty(shape) if any(plan.multi_needs_l1) else inner
        own = (np.arange(indices.size), indices)  # the pairs (x_i, x_i)
        threaded = indices.size > 1 and use_threads(inner[0].size, threads.PARALLEL_MIN_POINTS)
        scatter = csc_block_arrays_parallel if threaded else csc_block_arrays
        count = bit_block_arrays_parallel if threaded else bit_block_arrays
        for mb, (columns, scales) in enumerate(plan.multi_blocks):
            Zb, z_sq, sparse = self._block_points(columns, scales)
            bits = None if sparse else self._bit_block(columns, scales, Zb)
            Xb = _dense_rows(Zb, indices) if bits is None or plan.multi_needs_l1[mb] else None
            if sparse:  # inner products and distances in one pass, same numbers
                scatter(*self._block_csc(columns, scales), Xb, z_sq[indices], z_sq,
                        inner[mb], sq_dist[mb], plan.multi_needs_sq[mb])
            elif bits is not None:  # counts of common features: the same numbers
                count(bits, indices, z_sq[indices], z_sq, inner[mb], sq_dist[mb],
                      plan.multi_needs_sq[mb])
            else:
                np.matmul(Xb, Zb.T, out=inner[mb])
                if plan.multi_needs_sq[mb]:
                    squared_distances_from_products(inner[mb], z_sq[indices], z_sq,
                                                    sq_dist[mb])
            if plan.multi_needs_sq[mb]:
                sq_dist[mb][own] = 0.0
            if plan.multi_needs_l1[mb]:
                l1_dist[mb] = cdist(Xb, self._dense_block(columns, scales),
                                    metric="cityblock")
        return inner, sq_dist, l1_dist

    fills_out = True  # rows(..., out=) writes into a given array (RowCache refills slots)

    def rows(self, indices: Any, kernels: Any = None, out: Any = None) -> np.ndarray:
        """Rows ``indices`` of the base kernels ``kernels``.

        Parameters
        ----------
        indices : array-like of int
            Sample indices in ``[0, n_samples)``.
        kernels : array-like of int, optional
            Kernel indices in ``[0, n_kernels)``, in output order; default all.
        out : ndarray, optional
            C-contiguous array of the output's shape, float64 or ``value_dtype``, to fill
            (and return) instead of a new one: large rows then cost no fresh pages.

        Returns
        -------
        ndarray of shape (len(kernels), len(indices), n_samples), float64, C-contiguous
            ``out[t, a, :] = K_{kernels[t]}[indices[a], :]`` (trace-scaled as in the bank).

        Raises
        ------
        ValueError
            If an index is out of range or not an integer.
        """
        indices, kernels, plan, scales = self._request(indices, kernels)
        shape = (plan.kinds.size, indices.size, self.n_samples)
        if out is None:
            out = np.empty(shape)
        elif (out.shape != shape or out.dtype not in (np.float64, self.value_dtype)
              or not out.flags.c_contiguous):
            raise ValueError(f"out must be a C-contiguous {self.value_dtype} (or float64) "
                             f"array of shape {shape}.")
        if indices.size == 0 or plan.kinds.size == 0:
            return out
        if (plan.kinds == KIND_RBF).all() and self._tables.apply(
                "rows", plan, np.arange(plan.kinds.size), scales, indices, out):
            return out  # by tables from sparse distances (rbf_tables)
        inner, sq_dist, l1_dist = self._multi_arrays(plan, indices)
        self._rbf_rows(plan, scales, indices, sq_dist, out)  # the other kernels below
        if (plan.kinds == KIND_RBF).all():
            return out
        arrays = (*plan.loop_arrays, np.ascontiguousarray(scales), plan.out_index, inner,
                  sq_dist, l1_dist, out)
        points = np.ascontiguousarray(self._X[indices])
        if use_threads(out.size):
            fill_kernel_rows_parallel(points, self._X, *arrays)
        else:
            fill_kernel_stack(points, self._X, False, *arrays)
        fill_python_kernels(plan, points, self._X, scales, out)
        if self._single and out.dtype == np.float64:  # single precision, as the float32 stack
            others = plan.out_index[plan.kinds != KIND_RBF]
            out[others] = out[others].astype(np.float32)
        return out

    def row_filler(self):
        """A function ``fill(i, out) -> bool`` writing row i of every kernel into ``out``
        (shape (n_kernels, 1, n_samples), float64), as ``rows([i], out=out)`` does, with the
        plan, tables and arrays found once; it returns False, doing nothing, when it cannot
        (then call :meth:`rows`). None when the rows are not all by tables (RBF kernels on
        sparse integer blocks). A row cache missing nearly every row (a9a, 8,000 points,
        50 kernels) spent about 50 us of checks per row beside 300-400 us of work."""
        return self._tables.base_row_filler(*self._plan(None))

    def base_tables(self):
        """``(tables, kernel_block, distance_rows)`` when every base kernel is an RBF kernel
        by table on sparse integer blocks (float64 bank): ``K_k[i, j] =
        tables[k, D[i, kernel_block[k], j]]`` with ``D[i]`` row i of ``distance_rows`` (a row
        provider of squared distances, shape (blocks, n) a row, for a
        :class:`~mklearn.kernels.cache.RowCache`); None otherwise. SMO-MKL then keeps
        distance rows in place of base rows (:class:`mklearn.kernels.row_sources.TableBaseRows`)."""
        return self._tables.base_tables(*self._plan(None))

    def _rbf_rows(self, plan, scales, indices, sq_dist, out):
        """The RBF rows, vectorised (an order of magnitude faster than the scalar ``exp`` of
        the numba loop). A float64 bank: :func:`~mklearn.kernels._numba.rbf_rows`, whose
        ``exp`` is arithmetic LLVM vectorises (values to about one unit in the last place),
        on numba's threads when the rows are large enough (a9a, 50 kernels, rows against
        2,000 points: 8.6 -> 2.3-3.6 ns a value on one thread). A float32 bank:
        :func:`~mklearn.kernels._numba.rbf_rows_f32`, the same in float32 arithmetic (values
        to a few units of float32's roundoff, as LIBSVM's float kernel cache), written in
        place: Sonar with 10^5 kernels, a row of 2.1e7 values took 18 ms, against 97 ms for
        numpy's ``exp`` on a work array and a copy."""
        if self._single_column_rbf_rows(plan, scales, indices, out):
            rbf, neg_gammas, targets, multi_of = plan.rbf_by_block_width[1]
            if rbf.size:
                run = rbf_rows_parallel if use_threads(out.size) else rbf_rows
                run(sq_dist, multi_of, neg_gammas, scales[rbf], targets, out,
                    out.view(np.int64))
            return
        rbf, sq, block_of = self._rbf_distances(plan, indices, sq_dist)
        if rbf.size == 0:
            return
        if self._tables.apply("rows", plan, rbf, scales, indices, out,
                              distances=(sq, block_of)):
            return
        rbf, block_of, neg_gammas, targets, multi_of = plan.rbf_in_write_order
        if sq is sq_dist:  # the multi-column blocks' arrays as they are
            block_of = multi_of
        arrays = (sq, block_of, neg_gammas, scales[rbf], targets)
        threaded = use_threads(out.size)
        if not self._single:
            run = rbf_rows_parallel if threaded else rbf_rows
            run(*arrays, out, out.view(np.int64))
            return
        target = out if out.dtype == np.float32 else self._scratch(out.shape)
        run = rbf_rows_f32_parallel if threaded else rbf_rows_f32
        run(*arrays, target, target.view(np.int32))
        if target is out:
            return
        if targets.size == out.shape[0]:  # every kernel: one copy, no gathered temporary
            np.copyto(out, target)
        else:
            out[targets] = target[targets]

    def _single_column_rbf_rows(self, plan, scales, indices, out) -> bool:
        """Write the rows of the RBF kernels on one feature each straight from the points
        (:func:`~mklearn.kernels._numba.single_column_rbf_rows`: no distance arrays, no
        ``exp`` on a feature of two values, the other features read in order from their
        transposed copy) and return True; False, doing nothing, for a
        float32 bank, a plan without such kernels, or kernels by tables. The estimators'
        default on a1a, 1,000 points (112 kernels, 499 rows of them all): 1.6 s by squared
        distances and ``exp``, 0.6 s from the points."""
        if self._single:
            return False
        rbf, columns, neg_gammas, targets = plan.rbf_by_block_width[0]
        if rbf.size == 0 or self._tables.layout(plan, plan.rbf_entries[0])[0]:
            return False
        run = (single_column_rbf_rows_parallel if use_threads(out.size)
               else single_column_rbf_rows)
        run(self._X[indices], *self._single_columns(), indices, columns, neg_gammas,
            np.ascontiguousarray(scales[rbf]), targets, out, out.view(np.int64))
        return True

    def _single_columns(self):
        """``(XT, row_of, codes, code_of, gaps, levels)`` of the features that RBF kernels on
        one feature read (:func:`~mklearn.kernels.bank.single_feature_bytes`), found once.
        A feature c of at most two values: ``codes[code_of[c]]`` is 1 where it is at its
        larger value (uint8, one byte a point), ``gaps[c]`` its squared gap ``(max -
        min)^2``. A feature of few values (:func:`~mklearn.kernels.bank.few_values`):
        ``codes[code_of[c]]`` the index of each point's value in ``levels[code_of[c]]``, its
        sorted values (padded with the last one), ``gaps[c] = -1``. Another:
        ``XT[row_of[c]]``, its values in order (the points' other columns transposed: a
        kernel's row reads one of them, not every point's row). -1 in ``code_of``,
        ``gaps`` and ``row_of`` where the feature is of another kind."""
        if self._single_features is None:
            d = self._X.shape[1]
            used = np.unique(self._full_plan.rbf_by_block_width[0][1])  # features with kernels
            points = self._X[:, used]
            low, high = points.min(axis=0), points.max(axis=0)
            two = at_most_two_values(points)
            found = few_values(points[:, ~two])
            few = np.flatnonzero(~two)[[k for k, level in enumerate(found) if level is not None]]
            values = [np.array([low[k], high[k]]) for k in np.flatnonzero(two)]
            values += [level for level in found if level is not None]
            codes = np.empty((len(values), points.shape[0]), dtype=np.uint8)
            codes[:two.sum()] = (points[:, two] == high[two]).T
            for r, k in enumerate(few, start=int(two.sum())):
                codes[r] = np.searchsorted(values[r], points[:, k])
            width = max([2] + [v.size for v in values])
            levels = np.array([np.pad(v, (0, width - v.size), mode="edge") for v in values]
                              ).reshape(len(values), width)
            coded = np.concatenate([np.flatnonzero(two), few])
            code_of, row_of = np.full(d, -1, dtype=np.int64), np.full(d, -1, dtype=np.int64)
            code_of[used[coded]] = np.arange(coded.size)
            gaps = np.full(d, -1.0)
            gaps[used[two]] = (high[two] - low[two]) ** 2
            other = np.setdiff1d(np.arange(used.size), coded)
            XT = np.ascontiguousarray(points[:, other].T)
            row_of[used[other]] = np.arange(other.size)
            self._single_features = (XT, row_of, codes, code_of, gaps, levels)
        return self._single_features

    def _rbf_distances(self, plan, indices, sq_dist):
        """``(rbf, sq, block_of)``: the plan's RBF entries, the squared distances they read
        (``(blocks, len(indices), n)``) and the block of each."""
        rbf, block_of, blocks = plan.rbf_entries
        dtype = np.float32 if self._single else np.float64
        if rbf.size == 0:
            return rbf, sq_dist, block_of
        single = blocks[plan.block_cols[blocks] >= 0]
        if single.size == 0 and not self._single:  # the blocks' distances as they are
            return rbf, sq_dist, plan.block_multi[block_of]
        sq = np.empty((plan.block_cols.size, indices.size, self.n_samples), dtype=dtype)
        if single.size:
            columns = plan.block_cols[single]
            single_column_sq_distances(self._X[indices][:, columns],
                                       np.ascontiguousarray(self._X[:, columns].T), single,
                                       sq)
        for b in blocks[plan.block_cols[blocks] < 0]:
            sq[b] = sq_dist[plan.block_multi[b]]
        return rbf, sq, block_of

    def tabulated(self) -> bool:
        """Whether every kernel's rows come from tables (RBF kernels on integer points,
        :mod:`mklearn.kernels.rbf_tables`): then a pass over the support's block (histograms)
        costs far less than cached rows of every kernel."""
        plan = self._full_plan
        return bool((plan.kinds == KIND_RBF).all()
                    and self._tables.layout(plan, np.arange(plan.kinds.size))[0] > 0)

    def distance_row_bytes(self) -> int:
        """Bytes of one point's squared distances on every sparse feature block, when the
        RBF kernels read sparse integer blocks only (binary or count features: their rows
        then come from tables, :mod:`mklearn.kernels.rbf_tables`); 0 otherwise."""
        return self._tables.distance_row_bytes()

    def kept_distance_bytes(self) -> int:
        """Bytes of the squared distances held now (:meth:`keep_distance_rows`)."""
        return self._tables.kept_distance_bytes()

    def keep_distance_rows(self, megabytes: float) -> None:
        """Keep the squared distances of up to ``megabytes`` MB of points (at least two) in
        an LRU cache: they do not depend on the kernel weights, so later rows of every
        ``K(d)`` cost table loads only (see :meth:`distance_row_bytes`); 0 drops those
        kept."""
        self._tables.keep_distance_rows(megabytes)

    def support_products(self, support: Any, v_s: Any, kernels: Any = None):
        """``K_k v`` for ``k = kernels[t]`` (all by default), v being ``v_s`` on the points
        ``support`` and zero elsewhere, by squared norms when every requested kernel comes
        from tables on sparse blocks (:meth:`RBFTables.products`); None otherwise (then
        read the support's rows).

        Returns
        -------
        ndarray of shape (len(kernels), n_samples), float64, or None
        """
        support, kernels, plan, scales = self._request(support, kernels)
        fused = self._fused(plan, support)
        if not fused.all():
            return None
        rbf = np.flatnonzero(fused)
        found = np.empty((rbf.size, self.n_samples))
        if not self._tables.products(plan, rbf, scales, support, v_s, found):
            return None
        out = np.empty_like(found)
        out[plan.out_index[rbf]] = found
        return out

    def _fused(self, plan, indices):
        """The plan's entries that the passes which never store the RBF rows evaluate
        themselves: the RBF kernels of a float64 bank (none without rows)."""
        return (plan.kinds == KIND_RBF) & (not self._single) & (indices.size > 0)

    def _rbf_sq(self, plan, indices):
        """``(rbf, sq, block_of)``: the RBF entries' distances, as :meth:`_rbf_distances`
        gives them."""
        _, sq_dist, _ = self._multi_arrays(plan, indices)
        return self._rbf_distances(plan, indices, sq_dist)

    def row_dots(self, indices: Any, kernels: Any, V: Any) -> np.ndarray:
        """``K_k[indices[a], :] @ V[a]`` for ``k = kernels[t]``: each row against its own
        vector, without storing the rows (RBF kernels of a float64 bank; the others from
        their rows).

        Parameters
        ----------
        indices : array-like of int
            Sample indices in ``[0, n_samples)``.
        kernels : array-like of int or None
            Kernel indices in ``[0, n_kernels)``, in output order; None: all.
        V : ndarray of shape (len(indices), n_samples) or (1, n_samples)
            One vector per row, or one for every row (float64).

        Returns
        -------
        ndarray of shape (len(kernels), len(indices)), float64

        Raises
        ------
        ValueError
            If an index is out of range or not an integer.
        """
        indices, kernels, plan, scales = self._request(indices, kernels)
        V = np.ascontiguousarray(V, dtype=np.float64)
        if V.shape not in ((indices.size, self.n_samples), (1, self.n_samples)):
            raise ValueError(f"V must have shape ({indices.size}, {self.n_samples}) or "
                             f"(1, {self.n_samples}); got {V.shape}.")
        out = np.zeros((plan.kinds.size, indices.size))
        fused = self._fused(plan, indices)
        rbf = np.flatnonzero(fused)
        dots = np.empty((rbf.size, indices.size))
        if rbf.size and not self._tables.apply("dots", plan, rbf, scales, indices, dots, V=V):
            rbf, sq, block_of = self._rbf_sq(plan, indices)
            if not self._tables.apply("dots", plan, rbf, scales, indices, dots, V=V,
                                      distances=(sq, block_of)):
                arguments = (sq, block_of, -plan.gammas[rbf],
                             np.ascontiguousarray(scales[rbf]), V, dots)
                if use_threads(rbf.size * indices.size * self.n_samples):
                    rbf_row_dots_parallel(*arguments, 4 * numba.get_num_threads())
                else:
                    rbf_row_dots(*arguments)
        out[plan.out_index[rbf]] = dots
        if not fused.all():
            requested = np.arange(self.n_kernels) if kernels is None else kernels
            others = plan.out_index[~fused]
            for part, rows in self._stored_rows(indices, requested[others]):
                out[others[part]] = (rows @ V[0] if V.shape[0] == 1 and indices.size > 1
                                     else np.einsum("taj,aj->ta", rows, V))
        return out

    def combined_rows(self, indices: Any, kernels: Any, weights: Any, restrict: bool = False,
                      out: np.ndarray | None = None) -> np.ndarray:
        """``sum_t weights[t] K_{kernels[t]}[indices, :]``: rows of a weighted sum of kernels,
        the RBF kernels of a float64 bank summed as they are evaluated (each inner product
        or distance computed once for all of them; the kernels' own rows never stored), the
        others (and a float32 bank's) from their rows.

        Parameters
        ----------
        indices : array-like of int
            Sample indices in ``[0, n_samples)``.
        kernels : array-like of int
            Kernel indices in ``[0, n_kernels)``.
        weights : array-like of float, shape (len(kernels),)
            The weight of each.
        restrict : bool, default False
            Columns ``indices`` only (the block ``K(d)[indices][:, indices]``).
        out : ndarray of shape (len(indices), n_samples), float64, C-contiguous, optional
            Where to write the rows (a row cache's slots: no copy, no fresh pages); not
            with ``restrict``.

        Returns
        -------
        ndarray of shape (len(indices), n_samples), float64: ``out`` when given
            (len(indices), len(indices)) with ``restrict``.

        Raises
        ------
        ValueError
            If an index is out of range or not an integer.
        """
        if restrict:
            chosen = np.atleast_1d(np.asarray(indices, dtype=np.int64))
            return self.combined_rows(chosen, kernels, weights)[:, chosen]
        indices, kernels, plan, scales = self._request(indices, kernels)
        weights = np.asarray(weights, dtype=np.float64)
        if out is None:
            out = np.empty((indices.size, self.n_samples))
        fused = self._fused(plan, indices)
        rbf = np.flatnonzero(fused)
        factors = weights[plan.out_index] * scales
        # tables write every value of out; the other paths add to zeros
        tabulated = bool(rbf.size) and self._tables.apply("sum", plan, rbf, factors, indices,
                                                           out)
        if not tabulated:
            out.fill(0.0)
        if rbf.size and not tabulated:
            rbf, sq, block_of = self._rbf_sq(plan, indices)
            if not self._tables.apply("sum", plan, rbf, factors, indices, out,
                                      distances=(sq, block_of)):
                arguments = (sq, block_of, -plan.gammas[rbf],
                             np.ascontiguousarray(factors[rbf]), out)
                if use_threads(rbf.size * indices.size * self.n_samples):
                    rbf_combined_rows_parallel(*arguments, 4 * numba.get_num_threads())
                else:
                    rbf_combined_rows(*arguments)
        if not fused.all():
            others = plan.out_index[~fused]
            for part, rows in self._stored_rows(indices, kernels[others]):
                out += np.tensordot(weights[others[part]], rows, axes=(0, 0))
        return out

    def _stored_rows(self, indices, kernels):
        """``(part, rows)`` for slices ``part`` of ``kernels`` of ``STORED_ROWS_BYTES`` of
        rows (at least one kernel): ``rows = self.rows(indices, kernels[part])``, written into
        one work array that the next part overwrites."""
        step = max(1, STORED_ROWS_BYTES // (8 * indices.size * self.n_samples))
        work = np.empty(min(step, kernels.size) * indices.size * self.n_samples)
        for k0 in range(0, kernels.size, step):
            shape = (min(step, kernels.size - k0), indices.size, self.n_samples)
            rows = work[:int(np.prod(shape))].reshape(shape)
            yield slice(k0, k0 + shape[0]), self.rows(indices, kernels[k0:k0 + step], out=rows)

    def combined_row_maker(self, kernels: Any, weights: Any):
        """A function ``fill(indices, out) -> bool`` that writes the rows ``indices`` (an
        int64 array, checked by the caller) of ``sum_t weights[t] K_{kernels[t]}`` into
        ``out`` (float64, C-contiguous, shape (len(indices), n_samples)), the same values as
        :meth:`combined_rows`, its plan and tables made once (a row source of one ``K(d)``
        asks for thousands of rows); None when the kernels are not all RBF kernels that
        tables evaluate on sparse blocks. ``fill`` returns False, doing nothing, when tables
        do not pay for so few rows.

        Raises
        ------
        ValueError
            If a kernel index is out of range or not an integer.
        """
        kernels = _check_index_array(np.atleast_1d(kernels), self.n_kernels, "kernels")
        plan, scales = self._plan(kernels)
        if self._single or not (plan.kinds == KIND_RBF).all() or kernels.size == 0:
            return None
        factors = np.asarray(weights, dtype=np.float64)[plan.out_index] * scales
        return self._tables.combined_row_maker(plan, np.arange(plan.kinds.size), factors)

    def _scratch(self, shape):
        """A float32 work array of ``shape``, reused between the calls of one thread (no
        fresh pages per row; one-vs-rest classes may fit side by side)."""
        size = int(np.prod(shape))
        thread = threading.get_ident()
        buffer = self._scratch_buffers.get(thread)
        if buffer is None or buffer.size < size:
            buffer = self._scratch_buffers[thread] = np.empty(size, dtype=np.float32)
        return buffer[:size].reshape(shape)

    def diagonal(self) -> np.ndarray:
        """``K_k[i, i]`` of every kernel, trace-scaled; ndarray of shape (m, n), float64.
        When every kernel has a unit diagonal (RBF, Laplacian) it is a read-only view that
        repeats each kernel's scale along the samples (no ``8 m n`` bytes: 15.2 MB on the
        full w8a with 50 kernels)."""
        if has_unit_diagonals(self._full_plan):
            return np.broadcast_to(self._scales[:, None], (self.n_kernels, self.n_samples))
        diag = kernel_diagonals(self._full_plan, self._X)
        return np.ascontiguousarray(diag.T * self._scales[:, None])


def _packed_bits(points: np.ndarray) -> np.ndarray:
    """Rows of 0/1 values as packed bits: (n, ceil(f / 64)) uint64, feature f in bit f % 64
    of word f // 64."""
    words = -(-points.shape[1] // 64)
    packed = np.zeros((points.shape[0], 8 * words), dtype=np.uint8)
    packed[:, :-(-points.shape[1] // 8)] = np.packbits(points.astype(np.uint8), axis=1,
                                                       bitorder="little")
    return np.ascontiguousarray(packed.view("<u8"), dtype=np.uint64)


def _dense_rows(points, indices):
    """Rows ``indices`` of ``points`` (a dense array or a CSR matrix) as a dense array. One
    row of a CSR matrix is scattered from its arrays: scipy's row indexing costs about 60 us
    a call, and the SMO core asks for one row at a time."""
    if not scipy.sparse.issparse(points):
        return points[indices]
    if indices.size != 1:
        return points[indices].toarray()
    row = np.zeros((1, points.shape[1]))
    start, stop = points.indptr[indices[0]], points.indptr[indices[0] + 1]
    row[0, points.indices[start:stop]] = points.data[start:stop]
    return row




class StackColumns(KernelOperator):
    """The column-provider interface over a precomputed ``(n, n, m)`` stack.

    Parameters
    ----------
    stack : ndarray of shape (n_samples, n_samples, n_kernels)
        Base kernels (float64 or float32), e.g. from
        :func:`mklearn.kernels.stack_checks.check_kernel_stack`. Kept kernel-major when it is the
        transposed view of a C-contiguous ``(m, n, n)`` array; a C-contiguous stack is read
        as it is (rows, combinations, diagonals, :meth:`restricted`: measured, solver
        "average" on 1,000 points and 100 kernels, 0.51 s and 840 MB above the stack when its
        first rows made it kernel-major, 0.05 s and 41 MB read as it is), and made
        kernel-major only by :meth:`kernel_subset`; any other layout is made kernel-major at
        once.
    kernel_sum : ndarray of shape (n_samples, n_samples), optional
        ``sum_k K_k`` in float64 when known (``check_kernel_stack`` computes it): ``K(d)``
        at uniform weights is then that sum scaled, with no pass over the stack (its own
        pass counts in :attr:`stack_passes`).

    Attributes
    ----------
    n_samples, n_kernels, kernel_names, dtype
        As in :class:`KernelColumns`.
    value_dtype : numpy.dtype
        The stack's precision: float32 for a float32 stack, else float64.

    Raises
    ------
    ValueError
        If ``stack`` is not 3-D and square in its first two axes.
    """

    dtype = np.dtype(np.float64)
    capabilities = Capabilities(restricted=True, kernel_subset=True, trusted=True)

    def __init__(self, stack: Any, kernel_sum: np.ndarray | None = None) -> None:
        stack = np.asarray(stack)
        if stack.ndim != 3 or stack.shape[0] != stack.shape[1]:
            raise ValueError(
                f"StackColumns needs a stack of shape (n_samples, n_samples, n_kernels); got "
                f"shape {stack.shape}."
            )
        self._held = HeldStack(stack, summed=kernel_sum is not None)  # never dropped
        self._kernel_sum = kernel_sum
        self.value_dtype = np.dtype(np.float32 if stack.dtype == np.float32 else np.float64)
        self.n_samples = stack.shape[0]
        self.n_kernels = stack.shape[2]
        self.kernel_names = [f"kernel[{k}]" for k in range(self.n_kernels)]
        self.reads = self._held.reads

    @property
    def stack_passes(self) -> float:
        """Passes over the stack read so far (:class:`~mklearn.kernels.stack_ops.StackReads`;
        a copy to the kernel-major layout counts as one)."""
        return self.reads.passes

    def __repr__(self) -> str:
        return f"StackColumns(n_samples={self.n_samples}, n_kernels={self.n_kernels})"

    @property
    def kernel_major(self) -> np.ndarray:
        """The base kernels as one C-contiguous ``(m, n, n)`` array (copied once, on first
        use, unless the stack already is one)."""
        return self._held.kernel_major

    @property
    def kernel_view(self) -> np.ndarray:
        """The base kernels as an ``(m, n, n)`` array with no copy: the kernel-major one when
        it exists, else a strided view of the caller's ``(n, n, m)`` stack."""
        return self._held.view

    def rows(self, indices: Any, kernels: Any = None) -> np.ndarray:
        """Rows ``indices`` of the kernels ``kernels``; as :meth:`KernelColumns.rows`."""
        indices = _check_index_array(np.atleast_1d(indices), self.n_samples, "indices")
        if kernels is not None:
            kernels = _check_index_array(np.atleast_1d(kernels), self.n_kernels, "kernels")
        return self._held.rows(indices, kernels)

    def kernel_rows_times(self, kernels: Any, rows: Any, v: np.ndarray) -> np.ndarray:
        """``K_k[rows] @ v`` for each k in ``kernels``: shape (len(kernels), len(rows)); the
        caller's ``(n, n, m)`` layout read where ``v`` is not zero."""
        kernels = _check_index_array(np.atleast_1d(kernels), self.n_kernels, "kernels")
        rows = _check_index_array(np.atleast_1d(rows), self.n_samples, "rows")
        return self._held.rows_times(kernels, rows, np.asarray(v, dtype=np.float64))

    def matrix(self, d: Any) -> np.ndarray:
        """The combined kernel ``K(d) = sum_k d_k K_k``, float64 of shape (n, n), read from
        the kernels with ``d_k != 0`` (from ``kernel_sum`` at uniform weights)."""
        d = np.asarray(d, dtype=np.float64)
        if self._kernel_sum is not None and d[0] != 0.0 and np.all(d == d[0]):
            return d[0] * self._kernel_sum
        return self._held.weighted_sum(d)

    def kernel(self, d: Any) -> DenseRows:
        """``K(d)`` as a row source of the SMO core: :meth:`matrix`, dense."""
        return DenseRows(self.matrix(d))

    def svm_kernel(self, d: Any, cache_size: float) -> DenseRows:
        """``K(d)`` in memory (:meth:`kernel`): the stack is here already."""
        return self.kernel(d)

    def point_subset(self, indices: Any) -> StackColumns:
        """:meth:`restricted`: a copy of the stack on those points."""
        return self.restricted(indices)

    def kernel_subset(self, kernels: Any) -> StackColumns:
        """The kernels ``kernels`` only (in that order): a provider of ``len(kernels)``
        kernels (a copy of their part of the stack)."""
        kernels = _check_index_array(np.atleast_1d(kernels), self.n_kernels, "kernels")
        self.reads.add(kernels.size * self.n_samples ** 2)
        return StackColumns(self.kernel_major[kernels].transpose(1, 2, 0))

    def restricted(self, indices: Any) -> StackColumns:
        """Every kernel on the points ``indices`` only (a copy of that part of the stack,
        ``len(indices)^2 m`` values, and of ``kernel_sum``)."""
        indices = _check_index_array(np.atleast_1d(indices), self.n_samples, "indices")
        kernel_sum = (None if self._kernel_sum is None
                      else self._kernel_sum[np.ix_(indices, indices)])
        return StackColumns(self._held.points_block(indices), kernel_sum=kernel_sum)


    def combined_block(self, indices: Any, kernels: Any, weights: Any) -> np.ndarray:
        """``K(d)[indices][:, indices]`` for the weights ``weights`` of ``kernels``, float64
        of shape (len(indices), len(indices)), read from those entries only (from
        ``kernel_sum`` at uniform weights on every kernel)."""
        indices = _check_index_array(np.atleast_1d(indices), self.n_samples, "indices")
        kernels = _check_index_array(np.atleast_1d(kernels), self.n_kernels, "kernels")
        d = np.zeros(self.n_kernels)
        np.add.at(d, kernels, np.asarray(weights, dtype=np.float64))
        if self._kernel_sum is not None and d[0] != 0.0 and np.all(d == d[0]):
            return d[0] * self._kernel_sum[np.ix_(indices, indices)]
        return self._held.points_block(indices).astype(np.float64) @ d

    def diagonal(self) -> np.ndarray:
        """``K_k[i, i]`` of every kernel; ndarray of shape (m, n), float64."""
        return self._held.diagonal()
