"""RBF kernels by table on integer points, for :class:`~mklearn.kernels.columns.KernelColumns`.

On binary or count features (most LIBSVM sets: a9a, w8a, text counts) every squared distance
is an integer below a small bound ``B`` (``2 max ||x||^2`` on non-negative points), so kernel
k takes at most ``B + 1`` values ``f_k exp(-gamma_k s)``. :class:`RBFTables` evaluates them
once per call (:func:`~mklearn.kernels._rbf_tables.rbf_tables`, the arithmetic of the
``exp`` loops: the same bits) and reads them by distance:

- rows of base kernels: one load per value instead of an ``exp``;
- rows of ``K(d)``: the kernels of a feature block summed into one table, one load per block;
- rows times vectors (quadratic terms, Newton rows): the vector summed by distance (a
  histogram), then a dot product of ``B + 1`` terms per kernel;
- ``K_k v`` over a support (sparse blocks): by squared norms, corrected for the pairs that
  share a feature (:meth:`RBFTables.products`).

On sparse blocks (CSC, as LIBSVM files) the distances are computed into small unsigned
integers, one byte each when below 256, and :meth:`RBFTables.keep_distance_rows` keeps them
in an LRU row cache: they do not depend on the kernel weights, so the rows of every later
``K(d)`` cost loads only (w8a's 5 blocks: 200 kB a row of 39,799 points, against 318 kB for
a row of ``K(d)`` in float64).

On numba's threads the loops split the rows and, within a row, spans of points
(:func:`row_parts`): a row cache asks for one row at a time.
"""

from __future__ import annotations

import weakref
from typing import Any

import numba
import numpy as np
import scipy.sparse

from mklearn._sizes import DISTANCE_CHUNK_BYTES
from mklearn.kernels.capabilities import Capabilities

from . import _rbf_tables as loops
from . import threads
from .bank import block_bands, block_key, sparse_block
from .cache import RowCache
from .specs import KIND_RBF
from .threads import use_threads

__all__ = ["RBFTables", "TABLE_MAX_SIZE", "TABLE_MIN_USE", "squared_distance_bound"]

TABLE_MAX_SIZE = 1 << 16  # the largest table (values per kernel)
TABLE_MIN_USE = 8  # base or combined rows: a table pays when each entry serves this many values
# K_k v by squared norms: a scattered product costs about this many values of a row (w8a, 50
# kernels, one thread: 2,500 support points, 3,400 products a point on all features against
# 137,500 row values: 3.5x faster, not 40x; a9a's first 15,000 points, 31,000 against
# 275,000: 1.4x slower than the rows, so the rows are read there)
SCATTER_COST = 4
SPAN_MIN_POINTS = 1024  # fewest points of one row a thread takes (rows cut into spans)
# table loads below which rows of K(d) are faster on one thread (5 blocks, one row on two
# threads: 4,000 points 9.2 -> 13.1 us, 8,000 points 17.0 -> 16.2, 20,000 40.0 -> 25.1)
SUM_MIN_LOADS = 40_000


def squared_distance_bound(points: np.ndarray, columns=None, scales=None) -> int:
    """The largest squared distance two rows of ``points`` (2-D) on ``columns`` times
    ``scales`` (None: all, unscaled) can have, when every value is an integer (each squared
    distance is then an integer); -1 otherwise, or when it is not below ``TABLE_MAX_SIZE``.
    The block is formed a band of rows at a time (:func:`~mklearn.kernels.bank.block_bands`)."""
    top, low = 0.0, np.inf
    for _, values in block_bands(points, columns, scales):
        if values.size == 0:
            return 0
        if not np.array_equal(values, np.rint(values)):
            return -1
        top = max(top, float(np.einsum("ij,ij->i", values, values).max()))
        low = min(low, float(values.min()))
    if top == 0.0 and low == np.inf:
        return 0
    bound = (2.0 if low >= 0 else 4.0) * top  # x'z >= 0 on non-negative points
    return int(bound) if bound < TABLE_MAX_SIZE else -1


def _joined(parts, field, dtype, shift=False):
    """The arrays ``field`` of the sparse matrices ``parts``, concatenated (index pointers
    shifted by the entries before them with ``shift``)."""
    offsets = np.cumsum([0] + [p.nnz for p in parts])[:len(parts)]
    out = np.empty(sum(getattr(p, field).size for p in parts), dtype=dtype)
    start = 0
    for p, o in zip(parts, offsets, strict=True):  # into place: no copy of each part
        values = getattr(p, field)
        part = out[start:start + values.size]
        if shift:
            np.add(values, o, out=part, casting="unsafe")
        else:
            part[:] = values
        start += values.size
    return out


def _stacked_csc(csc):
    """``(ptr, rows, values, col_base)`` of CSC matrices concatenated as the loops read them:
    column f of matrix i has its entries at ``ptr[col_base[i] + f]:...[+ 1]``."""
    return (_joined(csc, "indptr", np.int64, shift=True), _joined(csc, "indices", np.uint32),
            _joined(csc, "data", np.float64),
            np.cumsum([0] + [c.shape[1] + 1 for c in csc])[:len(csc)].astype(np.int64))


def _packed_csr(csr):
    """``((indptr, indices, data), views)``: the arrays of CSR matrices ``csr`` concatenated
    as the loops read them (index pointers shifted by the entries before them, column
    indices uint32), and the matrices again as views of those arrays, so that their numbers
    are held once (the indices read as int32, the same bits below ``2**31``). The views
    are assigned, not passed to the constructor, whose ``prune`` copies an array that is a
    small part of a larger one."""
    indptr = _joined(csr, "indptr", np.int64, shift=True)
    indices = _joined(csr, "indices", np.uint32)
    data = _joined(csr, "data", np.float64)
    views, first = [], 0
    for c in csr:
        ptr = indptr[first:first + c.shape[0] + 1]
        first += c.shape[0] + 1
        lo, hi = int(ptr[0]), int(ptr[-1])
        wide = hi - lo >= 2**31 or c.shape[1] >= 2**31
        local = (ptr - lo).astype(np.int64 if wide else np.int32)
        kept = indices[lo:hi].astype(np.int64) if wide else indices[lo:hi].view(np.int32)
        view = scipy.sparse.csr_matrix(c.shape, dtype=np.float64)
        view.indptr, view.indices, view.data = local, kept, data[lo:hi]
        view.has_canonical_format = c.has_canonical_format  # nothing sorts in place
        views.append(view)
    return (indptr, indices, data), views


def _sorted_csc(matrix):
    """``matrix`` as CSC with each column's row indices in order."""
    csc = matrix.tocsc()
    csc.sort_indices()
    return csc


def row_parts(rows: int, n: int) -> int:
    """Spans of points each of ``rows`` rows is cut into on numba's threads: a task a thread,
    spans of at least ``SPAN_MIN_POINTS`` points (one row is then not one thread's; a9a, one
    row of 50 kernels against 4,000 points on two threads: 2 spans 49-51 us, 4 spans 54-59
    us, one thread 75-88 us)."""
    wanted = -(-threads.granted() // max(rows, 1))
    return max(1, min(wanted, n // SPAN_MIN_POINTS))


def _combined_rows(D, slots, blocks, tables, out):
    """:func:`~mklearn.kernels._rbf_tables.lookup_combined_rows`, on numba's threads from
    ``SUM_MIN_LOADS`` table loads on."""
    if use_threads(blocks.size * out.size, SUM_MIN_LOADS):
        loops.lookup_combined_rows_parallel(D, slots, blocks, tables, out,
                                            row_parts(slots.size, out.shape[1]))
    else:
        loops.lookup_combined_rows(D, slots, blocks, tables, out)


def _grouping(block_of):
    """``(blocks, start, order)``: the distinct blocks, and the entries grouped by block
    (``order[start[i]:start[i + 1]]`` read ``blocks[i]``)."""
    blocks, inverse = np.unique(block_of, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    return blocks, np.searchsorted(inverse[order], np.arange(blocks.size + 1)), order


class _DistanceRows:
    """The squared distances of one point to every point on every sparse block, as the rows
    of a :class:`~mklearn.kernels.cache.RowCache` (``n_kernels`` = blocks)."""

    capabilities = Capabilities(fills_out=True, row_filler=True)
    rows_per_call = 1

    def __init__(self, tables: RBFTables, dtype) -> None:
        self.tables = weakref.proxy(tables)  # the tables keep this cache: no cycle
        self.value_dtype = np.dtype(dtype)
        self.n_samples = tables.columns.n_samples
        self.n_kernels = len(tables.sparse_parts()[1])

    def rows(self, indices, kernels=None, out=None):
        indices = np.asarray(indices, dtype=np.int64)
        D = np.empty((indices.size, self.n_kernels, self.n_samples), dtype=self.value_dtype)
        self.tables.compute_distances(indices, np.arange(self.n_kernels), D)
        if out is None:
            return D.transpose(1, 0, 2)
        out[...] = D.transpose(1, 0, 2)
        return out

    def row_filler(self):
        """``fill(i, out)``: row i computed straight into a slot (``out`` of shape (blocks,
        1, n)), with the arrays found once (a row cache missing thousands of rows: about
        90 us of Python and a copy a row, beside 115 us of work on w8a's 8,000 points)."""
        blocks = np.arange(self.n_kernels, dtype=np.int64)

        def fill(i, out) -> bool:
            self.tables.compute_distances(np.array([i], dtype=np.int64), blocks,
                                          out.reshape(1, out.shape[0], out.shape[2]))
            return True  # the slot itself: (blocks, 1, n) holds one row's (1, blocks, n)

        return fill


class RBFTables:
    """Table evaluation of the RBF kernels of a :class:`KernelColumns` (see the module).

    Parameters
    ----------
    columns : KernelColumns
        The provider whose points, plan and feature blocks the tables serve.
    bounds : dict, optional
        Squared-distance bounds of feature blocks, shared with the provider's copies (a
        bound on all the points holds on any subset).
    parent : tuple, optional
        ``(tables, indices)`` when ``columns`` holds the points ``indices`` of the points of
        ``tables`` (:meth:`restricted`): bounds and sparse blocks come from them.

    Notes
    -----
    The tables refer to their columns by a weak reference: the columns own them, and a
    reference cycle would keep every copy that a quadratic term restricts to the support
    (its points and sparse blocks) until Python's cyclic collector runs (full a9a, SPG-GMKL
    l1: 150 MB above the cache over the last gradient passes).
    """

    def __init__(self, columns: Any, bounds: dict | None = None, parent=None) -> None:
        self._columns = weakref.ref(columns)
        self._bounds = {} if bounds is None else bounds
        self._all_points = columns._X if parent is None else parent[0]._all_points
        self._parent = parent  # (tables of the points this copy restricts, its indices)
        # their columns, kept alive with this copy (the tables refer to theirs weakly)
        self._parent_columns = None if parent is None else parent[0].columns
        self._parts = self._packed = self._distances = self._csr_arrays = None
        self._dtype = False  # the kept distances' type: not yet found (_distance_dtype)
        self._layouts: dict = {}
        self._last_tables = None  # (plan, key, tables): _tables_of

    @property
    def columns(self) -> Any:
        """The :class:`KernelColumns` these tables serve."""
        return self._columns()

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_columns"] = self.columns
        state["_distances"] = None  # kept rows are a cache: not sent to other processes
        state["_last_tables"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        state["_columns"] = weakref.ref(state["_columns"])
        state.setdefault("_last_tables", None)  # pickled before it existed
        self.__dict__.update(state)

    def restricted(self, columns: Any, indices: np.ndarray) -> RBFTables:
        """The tables of ``columns``, the points ``indices`` of this one's (no row cache)."""
        return RBFTables(columns, self._bounds, parent=(self, indices))

    def same_points(self, columns: Any) -> RBFTables:
        """The tables of ``columns``, other kernels on the same points (no row cache)."""
        copy = RBFTables(columns, self._bounds, parent=self._parent)
        copy._all_points, copy._parts = self._all_points, self._parts
        copy._csr_arrays = self._csr_arrays
        copy._parent_columns = self._parent_columns
        return copy

    # -------------------------------------------------------------- what tables apply to

    def layout(self, plan, rbf):
        """``(size, sparse)`` for the plan's RBF entries ``rbf``, kept per plan: the size of
        their tables (``1 +`` the largest squared distance when every block they read holds
        integers only; 0: no tables) and, with tables, ``(block_of, blocks, start, order)``
        of their blocks among the sparse ones (None unless every block is sparse)."""
        key = (id(plan), rbf.tobytes())
        hit = self._layouts.get(key)
        if hit is None or hit[0] is not plan:  # the plan is kept: its id is not reused
            size = self._table_size(plan, rbf)
            hit = (plan, size, self._sparse_layout(plan, rbf) if size else None)
            if len(self._layouts) >= 64:
                self._layouts.clear()
            self._layouts[key] = hit
        return hit[1], hit[2]

    def _bound(self, key, column, columns=None, scales=None) -> int:
        if key not in self._bounds:
            if column >= 0:  # one feature: (max - min)^2
                points = self._all_points[:, [column]]
                self._bounds[key] = squared_distance_bound(points - points.min())
            else:
                self._bounds[key] = squared_distance_bound(self._all_points, columns, scales)
        return self._bounds[key]

    def _table_size(self, plan, rbf) -> int:
        if self.columns._single or rbf.size == 0:
            return 0
        block_of = np.repeat(np.arange(plan.block_cols.size), np.diff(plan.block_ptr))[rbf]
        bound = 0
        for b in np.unique(block_of):
            column = int(plan.block_cols[b])
            if column >= 0:
                found = self._bound(column, column)
            else:
                columns, scales = plan.multi_blocks[plan.block_multi[b]]
                found = self._bound(block_key(columns, scales), -1, columns, scales)
            if found < 0:
                return 0
            bound = max(bound, found)
        return bound + 1

    def _sparse_layout(self, plan, rbf):
        plan_block = np.repeat(np.arange(plan.block_cols.size), np.diff(plan.block_ptr))[rbf]
        if (plan.block_cols[plan_block] >= 0).any():
            return None
        position = self.sparse_parts()[0]
        multi = plan.multi_blocks
        keys = [block_key(*multi[m]) for m in plan.block_multi[plan_block]]
        if any(key not in position for key in keys):
            return None
        block_of = np.array([position[key] for key in keys], dtype=np.int64)
        return (block_of, *_grouping(block_of))

    # ------------------------------------------------------------------ sparse distances

    def sparse_parts(self):
        """``(position, csr, norms)``: the bank's sparse multi-column blocks on these points,
        each block's key mapped to its position, their CSR matrices and squared norms (a
        restricted copy slices its parent's)."""
        if self._parts is None:
            if self._parent is not None:
                parent, indices = self._parent
                position, csr, norms = parent.sparse_parts()
                csr, norms = [c[indices] for c in csr], [z[indices] for z in norms]
            else:
                position, csr, norms = {}, [], []
                for columns, scales in self.columns._full_plan.multi_blocks:
                    key = block_key(columns, scales)
                    Xb, z_sq, sparse = self.columns._block_points(columns, scales)
                    if sparse and key not in position:
                        position[key] = len(csr)
                        csr.append(Xb if scipy.sparse.issparse(Xb) else  # X itself: in bands
                                   sparse_block(Xb, None, None)[0])
                        norms.append(z_sq)
            self._csr_arrays, csr = _packed_csr(csr)
            if self._parent is None:  # the provider's blocks read the same arrays
                self.columns._share_sparse_blocks(position, csr)
            self._parts = (position, csr, norms)
        return self._parts

    def _packed_blocks(self):
        """The sparse blocks' CSR arrays (:meth:`sparse_parts`) and their CSC arrays,
        concatenated as the loops read them."""
        if self._packed is None:
            _, csr, norms = self.sparse_parts()
            n = self.columns.n_samples
            self._packed = (
                *self._csr_arrays, np.arange(len(csr), dtype=np.int64) * (n + 1),
                *_stacked_csc([_sorted_csc(c) for c in csr]),  # spans bisect columns
                np.ascontiguousarray(np.reshape(norms, (len(norms), n)), dtype=np.float64),
            )
        return self._packed

    def _distance_dtype(self):
        """uint8 or uint16 for the distances of every sparse block, None when one of them is
        not integer (or no block is sparse); found once."""
        if self._dtype is False:
            position = self.sparse_parts()[0]
            bounds = [self._bound(block_key(columns, scales), -1, columns, scales)
                      for columns, scales in self.columns._full_plan.multi_blocks
                      if block_key(columns, scales) in position]
            self._dtype = (None if not bounds or min(bounds) < 0 else
                           np.uint8 if max(bounds) <= np.iinfo(np.uint8).max else np.uint16)
        return self._dtype

    def compute_distances(self, indices, blocks, D):
        """``D[a, i, j]``: squared distance of point ``indices[a]`` to point j on the sparse
        blocks i in ``blocks`` (D of shape (len(indices), all blocks, n), an unsigned integer
        type; the other blocks are left as they are)."""
        arrays = (np.ascontiguousarray(indices, dtype=np.int64),
                  np.ascontiguousarray(blocks, dtype=np.int64), self._packed_blocks(), D)
        if use_threads(D.shape[0] * D.shape[2], threads.PARALLEL_MIN_POINTS):
            loops.distance_rows_parallel(*arrays, row_parts(indices.size, D.shape[2]))
        else:
            loops.distance_rows(*arrays)

    def distance_row_bytes(self) -> int:
        """Bytes of one point's distances on every sparse block (1 or 2 a value), when the
        RBF kernels of the bank read sparse integer blocks only; 0 otherwise (nothing to
        keep)."""
        plan = self.columns._full_plan
        rbf = np.flatnonzero(plan.kinds == KIND_RBF)
        size, sparse = self.layout(plan, rbf)
        dtype = self._distance_dtype() if sparse is not None else None
        if dtype is None:
            return 0
        return np.dtype(dtype).itemsize * len(self.sparse_parts()[1]) * self.columns.n_samples

    def kept_distance_bytes(self) -> int:
        """Bytes of the distance rows held now (:meth:`keep_distance_rows`)."""
        return 0 if self._distances is None else self._distances.nbytes

    def keep_distance_rows(self, megabytes: float) -> None:
        """Keep the distance rows of up to ``megabytes`` MB of points in an LRU cache (at
        least two rows; see :meth:`distance_row_bytes`); 0 drops those kept."""
        dtype = self._distance_dtype()
        if not megabytes:
            self._distances = None
        elif dtype is not None:
            self._distances = RowCache(_DistanceRows(self, dtype), megabytes)

    def _distance_chunks(self, indices, blocks):
        """``(a0, a1, D, slots)``: the distances of rows ``indices[a0:a1]`` are
        ``D[slots]``: from the row cache when it holds them all (every block), else in
        chunks (the blocks ``blocks`` only), each gathered from the rows its parent keeps
        when it keeps all of them (a restricted copy: the support's block of a quadratic
        term, whose points' rows of ``K(d)`` read those distances), or else computed."""
        cache = self._distances
        if cache is not None and np.unique(indices).size <= cache.capacity:
            slots = cache.slot_of[indices]
            cache.clock[0] += 1
            cache.last_used[slots[slots >= 0]] = cache.clock[0]  # kept while loading
            if (slots < 0).any():
                cache.load_many(np.unique(indices[slots < 0]))
                slots = cache.slot_of[indices]
            yield 0, indices.size, cache.store, slots
            return
        dtype = self._distance_dtype() or np.uint16
        n_blocks, n = len(self.sparse_parts()[1]), self.columns.n_samples
        step = max(1, DISTANCE_CHUNK_BYTES // (np.dtype(dtype).itemsize * len(blocks) * n))
        kept = None if self._parent is None else self._parent[0]._distances
        points = None if kept is None else self._parent[1]
        for a0 in range(0, indices.size, step):
            rows = indices[a0:a0 + step]
            D = np.empty((rows.size, n_blocks, n), dtype=dtype)  # pages of other blocks unused
            slots = None if kept is None else kept.slot_of[points[rows]]
            if slots is not None and kept.store.dtype == D.dtype and (slots >= 0).all():
                loops.gather_distance_rows(kept.store, slots, points,
                                           np.ascontiguousarray(blocks, dtype=np.int64), D)
            else:
                self.compute_distances(rows, blocks, D)
            yield a0, a0 + rows.size, D, np.arange(rows.size)

    # --------------------------------------------------------------------- evaluation

    def apply(self, kind, plan, rbf, factors, indices, out, V=None, distances=None) -> bool:
        """Evaluate the plan's RBF entries ``rbf`` (``factors`` their scales, or weights times
        scales) by tables into ``out``; False, doing nothing, when tables do not apply.

        ``kind``: "rows" (``out`` as the provider's rows), "sum" (rows of their sum, shape
        (len(indices), n)) or "dots" (rows times V, shape (len(rbf), len(indices))).
        ``distances``: ``(sq, block_of)``, float64 distances of shape (blocks, rows, n) and
        each entry's block, already computed (dense points); else the entries must read
        sparse blocks only.
        """
        if kind == "sum" and distances is None:  # the row maker's tables, made for this call
            fill = self.combined_row_maker(plan, rbf, factors)
            return fill is not None and fill(indices, out)
        size, sparse = self.layout(plan, rbf)
        n = self.columns.n_samples
        if not size or (size > n if kind == "dots" else TABLE_MIN_USE * size > indices.size * n):
            return False
        if distances is None and sparse is None:
            return False
        tables = self._tables_of(plan, rbf, factors, size)
        threaded = use_threads(rbf.size * indices.size * n)
        if distances is None:
            block_of, blocks, start, order = sparse
            if kind == "rows" and not self._keeps_distances():
                self._table_rows(threaded, indices, sparse, tables, plan.out_index[rbf], out)
                return True
            chunks = self._distance_chunks(indices, blocks)
        else:
            sq, block_of = distances
            blocks, start, order = _grouping(block_of)
            chunks = [(0, indices.size, sq.transpose(1, 0, 2), np.arange(indices.size))]
        if kind == "sum":
            tables = loops.block_tables(tables, block_of, blocks)
        for a0, a1, D, slots in chunks:
            if kind == "sum":
                _combined_rows(D, slots, blocks, tables, out[a0:a1])
            elif kind == "rows":
                arrays = (D, slots, blocks, start, order, tables, plan.out_index[rbf],
                          out[:, a0:a1])
                if threaded:
                    loops.lookup_rows_parallel(*arrays, row_parts(a1 - a0, n))
                else:
                    loops.lookup_rows(*arrays)
            else:
                threaded = indices.size > 1 and threaded  # rows split over threads, not spans
                run = loops.lookup_row_dots_parallel if threaded else loops.lookup_row_dots
                run(D, slots, blocks, start, order, tables, V if V.shape[0] == 1 else V[a0:a1],
                    out[:, a0:a1])
        return True

    def _tables_of(self, plan, rbf, factors, size):
        """The tables of the plan's RBF entries ``rbf`` scaled by ``factors``, the last ones
        kept (rows of base kernels ask for the same tables at every call: 20 us each)."""
        key = (rbf.tobytes(), np.asarray(factors)[rbf].tobytes(), size)
        held = self._last_tables
        if held is None or held[0] is not plan or held[1] != key:
            tables = loops.rbf_tables(-plan.gammas[rbf], np.ascontiguousarray(factors[rbf]),
                                      size)
            self._last_tables = (plan, key, tables)
        return self._last_tables[2]

    def _keeps_distances(self) -> bool:
        """Whether distance rows are kept, here or by the parent (then read, not computed)."""
        return self._distances is not None or (
            self._parent is not None and self._parent[0]._distances is not None)

    def _table_rows(self, threaded, indices, sparse, tables, targets, out):
        """Rows of base kernels on sparse blocks: each row's distances computed and looked up
        in one pass (:func:`~mklearn.kernels._rbf_tables.table_rows`)."""
        _, blocks, start, order = sparse
        arrays = (np.ascontiguousarray(indices, dtype=np.int64), self._packed_blocks(), blocks,
                  start, order, tables, targets, out, self._distance_buffer())
        if threaded:
            loops.table_rows_parallel(*arrays, row_parts(indices.size, out.shape[2]))
        else:
            loops.table_rows(*arrays)

    def _distance_buffer(self):
        """One point's distances on every sparse block: shape (1, blocks, n)."""
        return np.empty((1, len(self.sparse_parts()[1]), self.columns.n_samples),
                        dtype=self._distance_dtype() or np.uint16)

    def _bank_by_table(self, plan):
        """``(rbf, size, sparse)`` (:meth:`layout`) when every kernel of the full plan
        ``plan`` is RBF by tables on sparse blocks and a table pays for a row; else None."""
        rbf = np.arange(plan.kinds.size)
        if rbf.size == 0 or not (plan.kinds == KIND_RBF).all():
            return None
        size, sparse = self.layout(plan, rbf)
        if not size or sparse is None or TABLE_MIN_USE * size > self.columns.n_samples:
            return None
        return rbf, size, sparse

    def base_row_filler(self, plan, scales):
        """:meth:`KernelColumns.row_filler` for the full plan ``plan`` (``scales`` its
        kernels' scales): None unless every kernel is RBF by tables on sparse blocks."""
        found = self._bank_by_table(plan)
        if found is None:
            return None
        rbf, size, sparse = found
        n = self.columns.n_samples
        tables, targets = self._tables_of(plan, rbf, scales, size), plan.out_index[rbf]

        def fill(i, out) -> bool:
            if self._keeps_distances() or out.dtype != np.float64:
                return False  # kept distance rows are read by rows()
            self._table_rows(use_threads(rbf.size * n), np.array([i], dtype=np.int64), sparse,
                             tables, targets, out)
            return True

        return fill

    def base_tables(self, plan, scales):
        """:meth:`KernelColumns.base_tables` for the full plan ``plan`` (``scales`` its
        kernels' scales): the tables in kernel order, each kernel's sparse block, and the
        distance rows; None unless every kernel is RBF by tables on sparse blocks."""
        found = self._bank_by_table(plan)
        dtype = None if found is None else self._distance_dtype()
        if dtype is None:
            return None
        rbf, size, sparse = found
        targets = plan.out_index[rbf]
        tables = np.empty((rbf.size, size))
        tables[targets] = self._tables_of(plan, rbf, scales, size)
        kernel_block = np.empty(rbf.size, dtype=np.int64)
        kernel_block[targets] = sparse[0]
        return tables, kernel_block, _DistanceRows(self, dtype)

    def combined_row_maker(self, plan, rbf, factors):
        """A function ``fill(indices, out) -> bool`` writing the rows ``indices`` of the sum
        of the plan's RBF entries ``rbf`` (``factors``: weights times scales) into ``out``
        (shape (len(indices), n)), as :meth:`apply` with kind "sum" does, its tables summed
        once here instead of at every call; None when the entries do not read sparse integer
        blocks only. ``fill`` returns False, doing nothing, when tables do not pay for that
        many rows. The SMO core asks for rows one at a time (full w8a, 50 kernels: about
        200,000 of them in an SPG-GMKL run), and each went through the provider's checks,
        plan and tables anew."""
        size, sparse = self.layout(plan, rbf)
        if not size or sparse is None:
            return None
        block_of, blocks, _, _ = sparse
        tables = loops.block_tables(
            loops.rbf_tables(-plan.gammas[rbf], np.ascontiguousarray(factors[rbf]), size),
            block_of, blocks)
        n = self.columns.n_samples

        def fill(indices, out) -> bool:
            if TABLE_MIN_USE * size > indices.size * n:
                return False
            for a0, a1, D, slots in self._distance_chunks(indices, blocks):
                _combined_rows(D, slots, blocks, tables, out[a0:a1])
            return True

        return fill

    def products(self, plan, rbf, factors, support, v_s, out) -> bool:
        """``out[t] = K_t v`` (shape (len(rbf), n)) for the plan's RBF entries ``rbf``, v
        being ``v_s`` on the points ``support`` and zero elsewhere. On sparse points most
        pairs share no feature, so their distance is the sum of the squared norms: one table
        per norm (``base[t, |x_j|^2]``), plus the corrections of the support points that
        share a feature with ``x_j``, summed by distance and multiplied by the tables (one
        BLAS product per block and chunk of points; :func:`~mklearn.kernels._rbf_tables.
        support_bases`, :func:`~mklearn.kernels._rbf_tables.support_corrections`). No
        distance rows are read or kept. False, doing nothing, when the entries do not read
        sparse integer blocks only, or when the support's rows cost less: the tables per norm
        take ``B^2`` values a kernel against ``|S| n``, and the products scattered (the pairs
        of points sharing a feature, ``SCATTER_COST`` values each) against ``|S| n (m + b)``
        values of rows and distances, b blocks."""
        size, sparse = self.layout(plan, rbf)
        n = self.columns.n_samples
        if not size or sparse is None or size * size > support.size * n:
            return False
        _, blocks, start, order = sparse
        _, csr, norms = self.sparse_parts()
        picked = [c[support] for c in csr]
        packed = self._packed_blocks()
        column_counts = np.diff(packed[4])  # points per column of every block, in a row
        scattered = sum(
            float(column_counts[packed[7][b]:packed[7][b] + csr[b].shape[1]]
                  @ np.bincount(picked[b].indices, minlength=csr[b].shape[1]))
            for b in blocks)
        if SCATTER_COST * scattered >= support.size * n * (rbf.size + blocks.size):
            return False
        points = np.arange(n)
        packed_support = _stacked_csc([c.tocsc() for c in picked])
        s_norms = np.ascontiguousarray([z[support] for z in norms], dtype=np.float64)
        v_s = np.ascontiguousarray(v_s, dtype=np.float64)
        tables = loops.rbf_tables(-plan.gammas[rbf], np.ascontiguousarray(factors[rbf]), size)
        base = loops.support_bases(blocks, start, order, s_norms, v_s, tables)
        threaded = points.size > 1 and use_threads(points.size * rbf.size)
        step = max(1, DISTANCE_CHUNK_BYTES // (8 * size))
        H = np.empty((min(step, points.size), size))
        for i, b in enumerate(blocks):
            entries = order[start[i]:start[i + 1]]
            block_base, block_tables = base[entries], tables[entries]
            for p0 in range(0, points.size, step):
                chunk = points[p0:p0 + step]
                part = H[:chunk.size]
                if threaded:
                    loops.support_corrections_parallel(chunk, b, packed, packed_support, s_norms,
                                                       v_s, part, 4 * numba.get_num_threads())
                else:
                    loops.support_corrections(chunk, b, packed, packed_support, s_norms, v_s,
                                              part)
                free = np.minimum(packed[8][b, chunk].astype(np.int64), size - 1)
                out[entries, p0:p0 + chunk.size] = block_base[:, free] + block_tables @ part.T
        return True
