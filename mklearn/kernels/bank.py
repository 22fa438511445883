"""Evaluation of a family of base kernels into ``(n_x, n_z, n_kernels)`` stacks."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse
from scipy.spatial.distance import cdist
from sklearn.exceptions import NotFittedError

from mklearn._sizes import BAND_BYTES

from ._numba import (
    fill_kernel_stack,
    kernel_diagonal,
    rbf_rows,
    rbf_rows_f32,
    rbf_rows_f32_parallel,
    rbf_rows_parallel,
    single_column_rbf_cross,
    single_column_rbf_cross_parallel,
    squared_distances_from_products,
)
from .cache import mapped_empty
from .specs import (
    KIND_LAPLACIAN,
    KIND_LINEAR,
    KIND_POLYNOMIAL,
    KIND_RBF,
    NUMBA_KINDS,
    KernelSpec,
    check_kind,
)
from .threads import use_threads

UNIT_DIAGONAL_KINDS = (KIND_RBF, KIND_LAPLACIAN)  # k(x, x) = exp(0) = 1
SPARSE_DENSITY = 0.25  # multi-column blocks with at most this share of non-zeros kept sparse
# a feature of at most FEW_VALUES values (uint8 codes), and at most one per FEW_VALUES_SHARE
# points, gives its one-feature RBF rows by codes: one exp a value, not a point (digits, 1,797
# points of 17 values); FEW_VALUES_PROBE first points tell the others apart at once
FEW_VALUES = 255
FEW_VALUES_SHARE = 4
FEW_VALUES_PROBE = 1000
# |mean| / deviation up to which standardising leaves a column of sparse points uncentred:
# distances from squared norms then lose at most about 2 digits (1 + 10^2 times the rounding)
UNCENTRED_MAX_OFFSET = 10.0


def band_rows(X: Any) -> int:
    """Rows of X in a band of about ``BAND_BYTES`` of float64 values."""
    return max(1, BAND_BYTES // max(8 * X.shape[1], 1))


def block_bands(X: np.ndarray, columns: np.ndarray | None = None,
                scales: np.ndarray | None = None):
    """``(start, band)`` over bands of rows of X (:func:`band_rows`): the band's columns
    ``columns`` times ``scales`` (None: all, unscaled; a view of X then)."""
    step = band_rows(X)
    for start in range(0, X.shape[0], step):
        yield start, _block(X[start:start + step], columns, scales)


def block_key(columns, scales):
    """A multi-column block's key: its columns and feature scales (None: all, unscaled)."""
    return (None if columns is None else np.asarray(columns).tobytes(),
            None if scales is None else np.asarray(scales).tobytes())


def standard_moments(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and standard deviations of X (n_samples, n_features), the deviation 1 for
    constant columns. Columns of extreme magnitude are brought near 1 first, so that the
    squares in the variance neither overflow (|x| ~ 1e300) nor underflow (|x| ~ 1e-300)."""
    peak = np.max(np.abs(X), axis=0)
    unit = np.where((peak > 1e150) | ((peak < 1e-150) & (peak > 0)), peak, 1.0)
    mean = (X / unit).mean(axis=0) * unit
    std = (X / unit).std(axis=0) * unit
    constant = (std == 0.0) | np.all(X == X[:1], axis=0)
    return mean, np.where(constant, 1.0, std)


def feature_block_bytes(specs: Sequence[KernelSpec], X: Any, standardize: bool = False) -> int:
    """Bytes that rows computed on demand keep of X's feature blocks, besides X itself: a
    mostly-zero multi-column block (at most ``SPARSE_DENSITY`` non-zeros) as its non-zeros in
    CSR and CSC form (24 bytes each: float64 values and 32-bit indices, twice) and index
    pointers, a denser one as a dense copy when it is not all of X; each block's squared
    norms (8 bytes a point); and the features of RBF kernels on one feature
    (:func:`single_feature_bytes`). ``standardize``: the bank centres X, so no block is
    sparse.

    Parameters
    ----------
    specs : sequence of KernelSpec
        The base kernels.
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The training points (before standardisation).
    standardize : bool
        Whether the bank standardises X.

    Returns
    -------
    int
        Bytes; ``O(nnz)`` for sparse blocks, ``O(n d)`` for dense copies.
    """
    n, d = X.shape
    plan = _build_plan(specs, d)
    counts = None
    seen, total = set(), 0
    for columns, scales in plan.multi_blocks:
        key = block_key(columns, scales)
        if key in seen:
            continue
        seen.add(key)
        width = d if columns is None else len(columns)
        if standardize:
            nnz = n * width
        else:
            if counts is None:
                counts = _column_counts(X)
            nnz = int(counts.sum() if columns is None else counts[columns].sum())
        total += 8 * n  # squared norms
        if nnz <= SPARSE_DENSITY * n * width:
            total += 24 * nnz + 32 * (n + 1)  # index pointers and a second norms copy
        elif columns is not None or scales is not None:
            total += 8 * n * width
    return total + single_feature_bytes(plan, X)


def single_feature_bytes(plan: _Plan, X: Any) -> int:
    """Bytes that rows on demand keep of the features RBF kernels on one feature read: one
    byte a point for a feature of at most two values or of few values (:func:`few_values`:
    its codes), with eight a value for the values of those features (padded to the most any
    has); eight a point for another (its values in order:
    :meth:`~mklearn.kernels.columns.KernelColumns.rows`)."""
    columns = np.unique(plan.rbf_by_block_width[0][1])
    if columns.size == 0:
        return 0
    n = X.shape[0]
    points = X[:, columns]
    if scipy.sparse.issparse(points):  # a column's implicit zeros are one more value
        points = points.tocsc()
        counts = np.array([np.unique(np.r_[
            points.data[points.indptr[k]:points.indptr[k + 1]],
            [0.0] * int(points.indptr[k + 1] - points.indptr[k] < n)]).size
            for k in range(columns.size)])
        limit = min(FEW_VALUES, n // FEW_VALUES_SHARE)
        coded = (counts <= 2) | ((counts >= 3) & (counts <= limit))
        sizes = counts[coded & (counts > 2)]
    else:
        two = at_most_two_values(points)
        levels = [level for level in few_values(points[:, ~two]) if level is not None]
        coded = np.r_[np.ones(two.sum(), dtype=bool), np.ones(len(levels), dtype=bool),
                      np.zeros((~two).sum() - len(levels), dtype=bool)]
        sizes = np.array([level.size for level in levels], dtype=np.int64)
    width = max([2] + sizes.tolist())
    return int(coded.sum() * (n + 8 * width) + 8 * n * (coded.size - coded.sum()))


def few_values(points: np.ndarray, most: int = FEW_VALUES) -> list:
    """For each column of the dense ``points``: its sorted distinct values when it takes at
    most ``min(most, n / FEW_VALUES_SHARE)`` of them, else None. A column whose first
    ``FEW_VALUES_PROBE`` points already take more is not read further."""
    n = points.shape[0]
    limit = min(most, n // FEW_VALUES_SHARE)
    levels = []
    for k in range(points.shape[1]):
        column = points[:, k]
        if limit < 3 or np.unique(column[:FEW_VALUES_PROBE]).size > limit:
            levels.append(None)
            continue
        values = np.unique(column)
        levels.append(values if values.size <= limit else None)
    return levels


def at_most_two_values(points: np.ndarray) -> np.ndarray:
    """Whether each column of the dense ``points`` takes at most two values: bool of shape
    (n_features,)."""
    low, high = points.min(axis=0), points.max(axis=0)
    return ((points == low) | (points == high)).all(axis=0)


def _column_counts(X: Any) -> np.ndarray:
    """Non-zeros of each column of X (dense: counted a band of rows at a time)."""
    if scipy.sparse.issparse(X):
        return np.asarray(scipy.sparse.csc_matrix(X).getnnz(axis=0), dtype=np.int64)
    return sum((np.count_nonzero(band, axis=0) for _, band in block_bands(X)),
               np.zeros(X.shape[1], dtype=np.int64))


def sparse_block(X: np.ndarray, columns: np.ndarray | None, scales: np.ndarray | None):
    """``(csr, norms)``: the columns of a multi-column block times their feature scales as
    a CSR matrix, and its rows' squared norms, made a band of rows at a time (no dense copy
    of the block)."""
    norms, parts = np.empty(X.shape[0]), []
    for a, band in block_bands(X, columns, scales):
        norms[a:a + band.shape[0]] = np.einsum("ij,ij->i", band, band)
        parts.append(scipy.sparse.csr_matrix(band))
    if not parts:
        return scipy.sparse.csr_matrix((0, X.shape[1] if columns is None else len(columns))), norms
    return (scipy.sparse.vstack(parts, format="csr") if len(parts) > 1 else parts[0]), norms

__all__ = ["KernelBank", "check_samples", "check_feature_indices"]

_NORMALIZE_OPTIONS = ("trace", "diagonal", None)


def check_samples(X: Any, *, name: str = "X", min_samples: int = 1) -> np.ndarray:
    """Validate a data matrix and return it as a C-contiguous float64 array.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Dense, real, finite data with at least ``min_samples`` samples and one feature.
    name : str, default="X"
        Name used in error messages.
    min_samples : int, default=1
        Fewest rows accepted (0 for a fitted model's support vectors, which may be none).

    Returns
    -------
    ndarray of shape (n_samples, n_features), dtype float64

    Raises
    ------
    ValueError
        If X is sparse, not numeric, complex, not 2-D, empty, or holds NaN/inf.
    """
    if scipy.sparse.issparse(X):
        raise ValueError(
            f"{name} is a sparse matrix; kernels need dense input: pass {name}.toarray()."
        )
    raw = np.asarray(X)
    if raw.dtype.kind == "c":
        raise ValueError(f"{name} must be real-valued; got a complex array.")
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array; got dtype {raw.dtype}.") from exc
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array of shape (n_samples, n_features); got ndim={arr.ndim}. "
            "Use reshape(-1, 1) for a single feature or reshape(1, -1) for a single sample."
        )
    if arr.shape[0] < min_samples:
        raise ValueError(f"{name} must have at least {min_samples} sample; got shape "
                         f"{arr.shape}.")
    if arr.shape[1] < 1:
        raise ValueError(f"{name} must have at least 1 feature; got shape {arr.shape}.")
    if not all(np.isfinite(band).all() for _, band in block_bands(arr)):
        raise ValueError(
            f"{name} contains NaN or infinity; remove or impute those values "
            "(e.g. with sklearn.impute.SimpleImputer) before computing kernels."
        )
    return np.ascontiguousarray(arr)


def check_feature_indices(specs: Sequence[KernelSpec], n_features: int) -> None:
    """Check every spec's feature indices are below ``n_features``.

    Raises
    ------
    ValueError
        Naming the first kernel that uses a column X does not have.
    """
    for spec in specs:
        if spec.features is not None and max(spec.features) >= n_features:
            raise ValueError(
                f"Kernel '{spec.name}' uses feature index {max(spec.features)}, "
                f"but X has {n_features} features (valid indices 0..{n_features - 1})."
            )
        if spec.features is None and spec.feature_scales is not None and len(
                spec.feature_scales) != n_features:
            raise ValueError(
                f"Kernel '{spec.name}' has {len(spec.feature_scales)} feature scales, but X "
                f"has {n_features} features; give one scale per feature."
            )


@dataclass(frozen=True)
class _Plan:
    """Kernels grouped by feature block, as arrays for the numba loop."""

    block_cols: np.ndarray  # column of single-column blocks, -1 otherwise
    block_multi: np.ndarray  # index into multi-column arrays, -1 otherwise
    block_ptr: np.ndarray  # kernels of block b: block_ptr[b]:block_ptr[b + 1]
    kinds: np.ndarray
    gammas: np.ndarray
    coef0s: np.ndarray
    degrees: np.ndarray
    out_index: np.ndarray  # position of each kernel in the requested order
    multi_columns: list  # per multi-column block: column index array, or None for all
    multi_scales: list  # per multi-column block: its columns' factors, or None
    multi_needs_sq: list  # per multi-column block: an RBF needs squared distances
    multi_needs_l1: list  # per multi-column block: a Laplacian needs L1 distances
    python_specs: tuple = ()  # (entry, spec) of the kernels evaluated by spec.evaluate

    @functools.cached_property
    def positions(self):
        """(entry of each kernel in the plan's order, block of each entry): the index that
        :func:`_subset_plan` slices subsets with."""
        entry_of = np.empty(self.out_index.size, dtype=np.int64)
        entry_of[self.out_index] = np.arange(self.out_index.size)
        return entry_of, np.repeat(np.arange(self.block_ptr.size - 1), np.diff(self.block_ptr))

    @functools.cached_property
    def multi_needs_inner(self) -> bool:
        """Whether a kernel on a multi-column block reads its inner products (linear,
        polynomial); else the squared distances may be computed in their place."""
        on_multi = self.block_multi[self.positions[1]] >= 0
        return bool(np.isin(self.kinds[on_multi], (KIND_LINEAR, KIND_POLYNOMIAL)).any())

    @functools.cached_property
    def rbf_entries(self):
        """(the RBF entries, the block of each, the blocks they read), found once."""
        rbf = np.flatnonzero(self.kinds == KIND_RBF)
        block_of = self.positions[1][rbf]
        return rbf, block_of, np.unique(block_of)

    @functools.cached_property
    def rbf_in_write_order(self):
        """``(rbf, block_of, neg_gammas, targets, multi_of)`` of the RBF entries in the order
        of their place in the output (``targets``), found once (at 10^5 kernels the gathers
        took 5 ms a row): loops over them then write rows of every kernel in memory order
        (Sonar with 10^5 kernels grouped by its 60 features: a row of every kernel took
        8.3 ms in the plan's order at 2 x 10^4 kernels, 4.9 ms in the output's).
        ``multi_of``: the index of each one's block in the multi-column arrays."""
        rbf, block_of, _ = self.rbf_entries
        rbf = rbf[np.argsort(self.out_index[rbf], kind="stable")]
        block_of = self.positions[1][rbf]
        return (rbf, block_of, -self.gammas[rbf], self.out_index[rbf],
                self.block_multi[block_of])

    @functools.cached_property
    def rbf_by_block_width(self):
        """The RBF entries of :attr:`rbf_in_write_order` split by their block: ``(rbf,
        columns, neg_gammas, targets)`` of those on one column, ``(rbf, neg_gammas,
        targets, multi_of)`` of those on several."""
        rbf, block_of, neg_gammas, targets, multi_of = self.rbf_in_write_order
        one = self.block_cols[block_of] >= 0
        return ((rbf[one], self.block_cols[block_of[one]], neg_gammas[one], targets[one]),
                (rbf[~one], neg_gammas[~one], targets[~one], multi_of[~one]))

    @property
    def multi_blocks(self):
        """(columns, feature scales) of each multi-column block."""
        return list(zip(self.multi_columns, self.multi_scales, strict=True))

    @property
    def loop_arrays(self):
        """The per-block and per-kernel arrays, in the order the numba loops take them."""
        return (self.block_cols, self.block_multi, self.block_ptr, self.kinds, self.gammas,
                self.coef0s, self.degrees)


def _build_plan(specs: Sequence[KernelSpec], n_features: int) -> _Plan:
    """Group ``specs`` by their feature columns (order of first appearance)."""
    all_columns = tuple(range(n_features))
    blocks: dict[tuple, list[int]] = {}
    for position, spec in enumerate(specs):
        key = all_columns if spec.features is None else spec.features
        blocks.setdefault((key, spec.feature_scales), []).append(position)

    block_cols, block_multi, block_ptr, order = [], [], [0], []
    multi_columns, multi_scales, multi_needs_sq, multi_needs_l1 = [], [], [], []
    for (columns, scales), positions in blocks.items():
        if len(columns) == 1 and scales is None:
            block_cols.append(columns[0])
            block_multi.append(-1)
        else:
            block_cols.append(-1)
            block_multi.append(len(multi_columns))
            kinds = {specs[p].kind for p in positions}
            multi_columns.append(None if columns == all_columns else np.array(columns))
            multi_scales.append(None if scales is None else np.array(scales))
            multi_needs_sq.append(KIND_RBF in kinds)
            multi_needs_l1.append(KIND_LAPLACIAN in kinds)
        order.extend(positions)
        block_ptr.append(len(order))

    params = [specs[p].numeric_params() for p in order]
    kinds = np.array([specs[p].kind for p in order], dtype=np.int64)
    python_entries = np.flatnonzero(~np.isin(kinds, NUMBA_KINDS))
    for entry in python_entries:
        check_kind(specs[order[entry]])  # ValueError for a kind nothing evaluates
    return _Plan(
        block_cols=np.array(block_cols, dtype=np.int64),
        block_multi=np.array(block_multi, dtype=np.int64),
        block_ptr=np.array(block_ptr, dtype=np.int64),
        kinds=kinds,
        gammas=np.array([g for g, _, _ in params], dtype=np.float64),
        coef0s=np.array([c for _, c, _ in params], dtype=np.float64),
        degrees=np.array([d for _, _, d in params], dtype=np.int64),
        out_index=np.array(order, dtype=np.int64),
        multi_columns=multi_columns,
        multi_scales=multi_scales,
        multi_needs_sq=multi_needs_sq,
        multi_needs_l1=multi_needs_l1,
        python_specs=tuple((int(entry), specs[order[entry]]) for entry in python_entries),
    )


def _subset_plan(full: _Plan, kernels: np.ndarray) -> _Plan:
    """The plan :func:`_build_plan` gives for the specs ``kernels`` (indices into the specs
    of ``full``), taken from ``full``'s arrays without reading a spec: ``O(len(kernels))``
    numpy work, where rebuilding costs a Python call per kernel (0.8 s for 10^5 kernels)."""
    n_blocks = full.block_ptr.size - 1
    entry_of, block_of = full.positions
    entries = entry_of[kernels]
    block = block_of[entries]
    # blocks in the order of their first kernel in ``kernels``, kernels in order within one
    used, first = np.unique(block, return_index=True)
    used = used[np.argsort(first)]
    rank = np.empty(n_blocks, dtype=np.int64)
    rank[used] = np.arange(used.size)
    order = np.argsort(rank[block], kind="stable")
    block_ptr = np.zeros(used.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(rank[block], minlength=used.size), out=block_ptr[1:])
    picked = entries[order]
    kinds = full.kinds[picked]
    old_multi = full.block_multi[used]
    block_multi = np.full(used.size, -1, dtype=np.int64)
    multi = np.flatnonzero(old_multi >= 0)
    block_multi[multi] = np.arange(multi.size)
    block_kinds = [kinds[block_ptr[b]:block_ptr[b + 1]] for b in multi]
    return _Plan(
        block_cols=full.block_cols[used],
        block_multi=block_multi,
        block_ptr=block_ptr,
        kinds=kinds,
        gammas=full.gammas[picked],
        coef0s=full.coef0s[picked],
        degrees=full.degrees[picked],
        out_index=order.astype(np.int64),
        multi_columns=[full.multi_columns[i] for i in old_multi[multi]],
        multi_scales=[full.multi_scales[i] for i in old_multi[multi]],
        multi_needs_sq=[bool((k == KIND_RBF).any()) for k in block_kinds],
        multi_needs_l1=[bool((k == KIND_LAPLACIAN).any()) for k in block_kinds],
        python_specs=_subset_python_specs(full.python_specs, picked),
    )


def _subset_python_specs(python_specs, picked):
    """The (entry, spec) pairs of a subset plan whose entry ``i`` is ``picked[i]`` of the
    full plan's."""
    if not python_specs:
        return ()
    spec_of = dict(python_specs)
    return tuple((i, spec_of[int(entry)]) for i, entry in enumerate(picked)
                 if int(entry) in spec_of)


def fill_python_kernels(plan: _Plan, X: np.ndarray, Z: np.ndarray, factors, out) -> None:
    """The kernels of kind ``KIND_PYTHON`` into the kernel-major ``out`` (the numba loops
    leave them NaN): ``out[out_index[e]] = factors[e] * spec.evaluate(X, Z)`` on the spec's
    columns and feature scales, symmetrised when ``Z is X``."""
    for entry, spec in plan.python_specs:
        Xb, Zb = (_spec_columns(spec, points) for points in (X, Z))
        values = np.asarray(spec.evaluate(Xb, Zb), dtype=np.float64)
        if Z is X:  # a training stack is exactly symmetric
            values = 0.5 * (values + values.T)
        out[plan.out_index[entry]] = factors[entry] * values


def _spec_columns(spec: KernelSpec, X: np.ndarray) -> np.ndarray:
    columns = None if spec.features is None else np.array(spec.features)
    scales = None if spec.feature_scales is None else np.array(spec.feature_scales)
    return _block(X, columns, scales)


def _block(X: np.ndarray, columns: np.ndarray | None, scales: np.ndarray | None = None
           ) -> np.ndarray:
    """The columns of a multi-column block, times their feature scales."""
    block = X if columns is None else np.ascontiguousarray(X[:, columns])
    return block if scales is None else block * scales


def _multi_block_arrays(plan: _Plan, X: np.ndarray, Z: np.ndarray, symmetric: bool):
    """Inner products, squared and L1 distances of every multi-column block.

    Returns three float64 arrays of shape (n_multi, n_x, n_z); an array no kernel
    reads is replaced by the inner-product array (never read).
    """
    n_multi = len(plan.multi_columns)
    if n_multi == 0:
        placeholder = np.zeros((1, 1, 1))
        return placeholder, placeholder, placeholder
    shape = (n_multi, X.shape[0], Z.shape[0])
    inner = np.empty(shape)
    sq_dist = np.empty(shape) if any(plan.multi_needs_sq) else inner
    l1_dist = np.empty(shape) if any(plan.multi_needs_l1) else inner
    for mb, (columns, scales) in enumerate(plan.multi_blocks):
        Xb = _block(X, columns, scales)
        Zb = Xb if symmetric else _block(Z, columns, scales)
        np.matmul(Xb, Zb.T, out=inner[mb])
        if plan.multi_needs_sq[mb]:
            x_sq = np.einsum("ij,ij->i", Xb, Xb)
            z_sq = x_sq if symmetric else np.einsum("ij,ij->i", Zb, Zb)
            # ||x - z||^2 = ||x||^2 + ||z||^2 - 2 x'z, clipped at 0 against rounding.
            squared_distances_from_products(inner[mb], x_sq, z_sq, sq_dist[mb])
        if plan.multi_needs_l1[mb]:
            l1_dist[mb] = cdist(Xb, Zb, metric="cityblock")
    return inner, sq_dist, l1_dist


def _rbf_stack(plan: _Plan, factors, X, Z, symmetric, sq_dist, out):
    """The RBF kernels of ``plan`` into ``out`` (kernel-major, float64 or float32) by the
    vectorised rows (:func:`rbf_rows` or :func:`rbf_rows_f32`, the same numbers as
    ``KernelColumns.rows``), a block of kernels on the same columns at a time. Symmetric
    stacks take each block's squared distances from its upper triangle, so that every
    kernel is exactly symmetric."""
    is_rbf = plan.kinds == KIND_RBF
    block_of = plan.positions[1]
    single = out.dtype == np.float32
    if single:
        run = rbf_rows_f32_parallel if use_threads(out[0].size) else rbf_rows_f32
    else:
        run = rbf_rows_parallel if use_threads(out[0].size) else rbf_rows
    if not single:
        is_rbf = is_rbf & ~_single_column_stack(plan, factors, X, Z, out)
    sq = np.empty((X.shape[0], Z.shape[0]))  # one block's squared distances at a time
    sq_single = np.empty(sq.shape, dtype=np.float32) if single else sq
    lower = np.tril_indices(X.shape[0], -1) if symmetric else None
    for b in np.unique(block_of[is_rbf]):
        col = plan.block_cols[b]
        if col >= 0:
            np.subtract(X[:, col, None], Z[None, :, col], out=sq)
            np.square(sq, out=sq)
        else:
            np.copyto(sq, sq_dist[plan.block_multi[b]])
            if symmetric:
                sq[lower] = sq.T[lower]
                np.fill_diagonal(sq, 0.0)
        if single:
            np.copyto(sq_single, sq, casting="same_kind")
        kernels = np.flatnonzero(is_rbf & (block_of == b))
        run(sq_single[None], np.zeros(kernels.size, dtype=np.int64), -plan.gammas[kernels],
            factors[kernels], plan.out_index[kernels], out,
            out.view(np.int32 if single else np.int64))


def _single_column_stack(plan: _Plan, factors, X, Z, out) -> np.ndarray:
    """The RBF kernels of ``plan`` on one feature each, into ``out`` (float64) in one call
    (:func:`~mklearn.kernels._numba.single_column_rbf_cross`: no per-kernel squared
    distances; the same numbers as block by block); returns the mask of the kernels written.
    A prediction of the estimators' default on 250 one-hot points against 581 support
    vectors (1,585 kernels) spent 2.6 s on them block by block, 0.8 s in one call."""
    written = (plan.kinds == KIND_RBF) & (plan.block_cols[plan.positions[1]] >= 0)
    kernels = np.flatnonzero(written)
    if kernels.size:
        run = (single_column_rbf_cross_parallel if use_threads(kernels.size * out[0].size)
               else single_column_rbf_cross)
        # copies: read-only points would be a second signature for numba to compile
        run(np.array(X, dtype=np.float64, order="C"), np.array(Z.T, dtype=np.float64, order="C"),
            plan.block_cols[plan.positions[1][kernels]], -plan.gammas[kernels],
            np.ascontiguousarray(factors[kernels], dtype=np.float64), plan.out_index[kernels],
            out, out.view(np.int64))
    return written


def has_unit_diagonals(plan: _Plan) -> bool:
    """True when every kernel of ``plan`` has ``k(x, x) = 1`` (RBF and Laplacian kernels:
    ``exp(0)``), whatever the points."""
    return bool(np.isin(plan.kinds, UNIT_DIAGONAL_KINDS).all())


def _multi_block_sq_norms(plan: _Plan, X: np.ndarray) -> np.ndarray:
    """Squared norms ``(n_multi, n_x)`` of the rows of X on each multi-column block; 0 on
    the blocks whose kernels all have unit diagonals (never read there)."""
    sq_norms = np.zeros((max(len(plan.multi_columns), 1), X.shape[0]))
    block_of = np.repeat(np.arange(plan.block_cols.size), np.diff(plan.block_ptr))
    read = block_of[~np.isin(plan.kinds, UNIT_DIAGONAL_KINDS)]
    needed = set(plan.block_multi[read[plan.block_cols[read] < 0]].tolist())
    for mb, (columns, scales) in enumerate(plan.multi_blocks):
        if mb not in needed:
            continue
        Xb = _block(X, columns, scales)
        sq_norms[mb] = np.einsum("ij,ij->i", Xb, Xb)
    return sq_norms


def kernel_diagonals(plan: _Plan, X: np.ndarray) -> np.ndarray:
    """``K_k(x_i, x_i)`` of every kernel of ``plan`` (unscaled); shape (n_samples, n_kernels)."""
    diagonal = np.empty((X.shape[0], plan.out_index.size))
    kernel_diagonal(
        X,
        *plan.loop_arrays,
        plan.out_index,
        _multi_block_sq_norms(plan, X),
        diagonal,
    )
    for entry, spec in plan.python_specs:
        diagonal[:, plan.out_index[entry]] = spec.evaluate_diagonal(_spec_columns(spec, X))
    return diagonal


def _check_index_array(values: Any, upper: int, what: str) -> np.ndarray:
    """Return ``values`` as a 1-D int64 array of indices in ``[0, upper)``."""
    arr = np.asarray(values)
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise ValueError(f"{what} must be a 1-D array of integer indices; got {values!r}.")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and (arr.min() < 0 or arr.max() >= upper):
        raise ValueError(f"{what} must be indices in [0, {upper}); got values outside.")
    return arr


class KernelBank:
    """Evaluate a family of base kernels into a stack of kernel matrices.

    Kernels on the same feature columns share their inner products and distances
    (one BLAS product per multi-column block; single-column blocks are evaluated
    directly); a numba loop writes each kernel as one contiguous matrix.

    Parameters
    ----------
    specs : sequence of KernelSpec
        Base kernels, in the order of the last axis of the stacks.
    standardize : bool, default=False
        Standardise every feature (zero mean, unit variance, fitted on the training
        data; a constant feature keeps scale 1) before computing the kernels. When every
        kernel depends on ``x - z`` only (``KernelSpec.shift_invariant``: RBF, Laplacian)
        and at most ``SPARSE_DENSITY`` of X is non-zero, the features whose mean is within
        ``UNCENTRED_MAX_OFFSET`` deviations of zero are only scaled (their ``mean_`` zero):
        the same kernels, and sparse points stay sparse.
    normalize : {"trace", "diagonal", None}, default="trace"
        ``"trace"`` scales kernel k by ``1 / trace(K_k)`` of the *training* kernel
        (unit trace, as in SimpleMKL); ``"diagonal"`` by ``n / trace(K_k)`` (mean diagonal
        entry 1 on the n training points: an RBF kernel is left as it is, so C means what
        it means in an SVC); a zero or non-finite trace keeps scale 1. None leaves kernels
        unscaled.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        dtype of the returned stacks (values are computed in float64).

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Feature means subtracted before the kernels (zeros without standardisation, and
        for the features it only scales).
    scale_ : ndarray of shape (n_features,)
        Feature scales divided by (ones without standardisation).
    trace_scales_ : ndarray of shape (n_kernels,)
        Multiplicative scale of each kernel.
    X_fit_ : ndarray of shape (n_fit, n_features), dtype float64
        Standardised training points (the second argument of every kernel).
    n_features_in_ : int
        Number of features seen in :meth:`fit`.

    Raises
    ------
    ValueError
        If ``specs`` is empty or holds a non-spec, or ``normalize``/``dtype`` is invalid.

    Notes
    -----
    The training stack of ``n`` points and ``m`` kernels takes ``n * n * m`` floats
    (Sonar with the SimpleMKL recipe: 208 * 208 * 793 * 8 bytes = 274 MB in float64).
    """

    reads_sequences = False  # transform takes numeric X (StringKernelBank: sequences)

    def __init__(
        self,
        specs: Sequence[KernelSpec],
        *,
        standardize: bool = False,
        normalize: str | None = "trace",
        dtype: Any = np.float64,
    ) -> None:
        specs = tuple(specs)
        if not specs:
            raise ValueError("KernelBank needs at least one kernel spec.")
        for position, spec in enumerate(specs):
            if not isinstance(spec, KernelSpec):
                raise ValueError(
                    f"specs[{position}] is {spec!r}, not a KernelSpec (Linear, Polynomial, "
                    "RBF, Laplacian); string kernels (Spectrum, WeightedDegree) go to "
                    "mklearn.kernels.string_bank.StringKernelBank."
                )
        if normalize not in _NORMALIZE_OPTIONS:
            raise ValueError(f"normalize must be 'trace', 'diagonal' or None; got {normalize!r}.")
        try:
            resolved_dtype = np.dtype(dtype)
        except TypeError as exc:
            raise ValueError(
                f"dtype must be numpy.float64 or numpy.float32; got {dtype!r}."
            ) from exc
        if resolved_dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise ValueError(f"dtype must be numpy.float64 or numpy.float32; got {dtype!r}.")
        self.specs = specs
        self.standardize = bool(standardize)
        self.normalize = normalize
        self.dtype = resolved_dtype

    def __repr__(self) -> str:
        return (
            f"KernelBank(n_kernels={self.n_kernels}, standardize={self.standardize}, "
            f"normalize={self.normalize!r}, dtype={self.dtype.name})"
        )

    @property
    def n_kernels(self) -> int:
        """Number of base kernels ``m``."""
        return len(self.specs)

    @property
    def kernel_names(self) -> list[str]:
        """Readable names of the base kernels, in stack order."""
        return [spec.name for spec in self.specs]

    # ------------------------------------------------------------------ fitting

    def fit(self, X: Any, copy: bool = True) -> KernelBank:
        """Fit the standardisation and the trace scales without building the stack.

        Only the kernel diagonals are evaluated (``O(n m)``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, finite.
        copy : bool, default=True
            False: keep X itself as ``X_fit_`` when it is a C-contiguous float64 array and
            ``standardize`` is off (no ``8 n d`` bytes copied); the caller must not change X
            while the bank is in use.

        Returns
        -------
        self : KernelBank

        Raises
        ------
        ValueError
            If X is invalid or a spec uses a column X does not have.
        """
        X = check_samples(X)
        n_features = X.shape[1]
        check_feature_indices(self.specs, n_features)
        if self.standardize:
            mean, scale = standard_moments(X)
            mean = np.where(self._zeros_kept(X, mean, scale), 0.0, mean)
            X_fit = (X - mean) / scale
            if not np.isfinite(X_fit).all():
                raise ValueError(
                    "X has values so close to the largest float that standardising them "
                    "overflows; rescale X (e.g. divide each feature by its largest value)"
                )
        else:
            mean = np.zeros(n_features)
            scale = np.ones(n_features)
            X_fit = X.copy() if copy else X
        self.mean_ = mean
        self.scale_ = scale
        self.X_fit_ = np.ascontiguousarray(X_fit)
        self.n_features_in_ = n_features
        self.__dict__.pop("_plans", None)  # plans of the specs as they are now
        self.trace_scales_ = self._fit_trace_scales(self.X_fit_)
        return self

    def _zeros_kept(self, X: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
        """The columns standardising only scales, shape (n_features,) of bool: when every
        kernel depends on differences of points only (a column's shift leaves the kernels
        as they are) and X is mostly zero (at most ``SPARSE_DENSITY``), so that its points
        stay sparse, the columns whose mean is within ``UNCENTRED_MAX_OFFSET`` deviations
        of zero (a larger offset would cost digits in the distances made from squared
        norms)."""
        if (not all(spec.shift_invariant for spec in self.specs)
                or np.count_nonzero(X) > SPARSE_DENSITY * X.size):
            return np.zeros(X.shape[1], dtype=bool)
        return np.abs(mean) <= UNCENTRED_MAX_OFFSET * scale

    def _fit_trace_scales(self, X_fit: np.ndarray) -> np.ndarray:
        if self.normalize is None:
            return np.ones(self.n_kernels)
        return self.scales_of_traces(self.traces(X_fit), X_fit.shape[0])

    def traces(self, X_fit: np.ndarray) -> np.ndarray:
        """``sum_i K_k(x_i, x_i)`` of each kernel (before scaling) over standardised points
        ``X_fit`` (shape (n, n_features)), shape (n_kernels,): summed over partitions of the
        training points, the traces of :meth:`scales_of_traces`."""
        plan = self._plan_of(None, X_fit.shape[1])
        if has_unit_diagonals(plan):  # every K_k(x, x) = 1: traces n, no (n, m) diagonals
            return np.full(self.n_kernels, float(X_fit.shape[0]))
        diagonal = kernel_diagonals(plan, X_fit)
        with np.errstate(over="ignore", invalid="ignore"):
            return diagonal.sum(axis=0)

    def scales_of_traces(self, traces: np.ndarray, n_samples: int) -> np.ndarray:
        """The kernel scales ``normalize`` asks for from the traces over ``n_samples``
        training points (1 for a kernel of zero or non-finite trace), shape (n_kernels,)."""
        if self.normalize is None:
            return np.ones(self.n_kernels)
        usable = np.isfinite(traces) & (traces != 0.0)
        scales = np.ones(self.n_kernels)
        scales[usable] = 1.0 / traces[usable]
        if self.normalize == "diagonal":
            scales[usable] *= n_samples
        return scales

    def fit_transform(self, X: Any) -> np.ndarray:
        """Fit on X and return the training kernel stack.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, finite.

        Returns
        -------
        K : ndarray of shape (n_samples, n_samples, n_kernels)
            A view of kernel-major memory (``K.transpose(2, 0, 1)`` is C-contiguous), so
            that each base kernel is one contiguous matrix.
            ``K[:, :, k]`` is base kernel k on the (standardised) training data,
            scaled to unit trace when ``normalize="trace"``; exactly symmetric.
            dtype is ``self.dtype``.

        Raises
        ------
        ValueError
            If X is invalid or a spec uses a column X does not have.
        """
        self.fit(X)
        return self._stack(self.X_fit_, self.X_fit_, symmetric=True, kernel_indices=None)

    # --------------------------------------------------------------- transform

    def _check_is_fitted(self) -> None:
        if not hasattr(self, "trace_scales_"):
            raise NotFittedError(
                "This KernelBank is not fitted yet; call fit or fit_transform first."
            )

    def transform(
        self,
        X: Any,
        *,
        rows: Any = None,
        kernel_indices: Any = None,
        prepared: bool = False,
    ) -> np.ndarray:
        """Kernels between new points and (some of) the training points.

        The standardisation and trace scales fitted on the training data are
        applied unchanged.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features)
            New points, finite, with the training number of features.
        rows : array-like of int, optional
            Indices into the training points (e.g. support vectors); default all.
        kernel_indices : array-like of int, optional
            Indices of the kernels to evaluate, in output order; default all.
        prepared : bool, default=False
            X is the output of :meth:`prepare` already (checked, standardised, C-contiguous
            float64): not checked again, for callers that ask for many blocks of kernels on
            the same points.

        Returns
        -------
        K : ndarray of shape (n_test, n_rows, n_selected), dtype ``self.dtype``
            A view of kernel-major memory, as in :meth:`fit_transform`.

        Raises
        ------
        NotFittedError
            If the bank is not fitted.
        ValueError
            If X is invalid or has the wrong number of features, or ``rows`` /
            ``kernel_indices`` are not valid index arrays.
        """
        self._check_is_fitted()
        X = X if prepared else self.prepare(X)
        Z = self.X_fit_
        if rows is not None:
            rows = _check_index_array(rows, Z.shape[0], "rows")
            Z = np.ascontiguousarray(Z[rows])
        return self._stack(X, Z, symmetric=False, kernel_indices=kernel_indices)

    def prepare(self, X: Any) -> np.ndarray:
        """New points checked and standardised as the training points were.

        Returns
        -------
        ndarray of shape (n_samples, n_features), float64, C-contiguous

        Raises
        ------
        ValueError
            If X is invalid or has the wrong number of features.
        """
        X = check_samples(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but this KernelBank was fitted with "
                f"{self.n_features_in_} features (expected {self.n_features_in_})."
            )
        if self.standardize:
            X = (X - self.mean_) / self.scale_
        return np.ascontiguousarray(X, dtype=np.float64)

    def _plan_of(self, kernels: np.ndarray | None, n_features: int) -> _Plan:
        """The plan of ``kernels`` (None: all), sliced from the bank's full plan; the full
        plan and the last subset's are kept (predict asks for one per block of test points,
        and at 10^5 kernels building a plan took 0.5 s). Kept as one tuple, replaced whole:
        one-vs-rest classes may predict side by side."""
        key = (id(self.specs), len(self.specs), n_features)
        kept = self.__dict__.get("_plans")
        if kept is None or kept[0] != key:
            kept = self._plans = (key, _build_plan(self.specs, n_features), None, None)
        if kernels is None:
            return kept[1]
        if kept[2] != kernels.tobytes():
            kept = self._plans = (key, kept[1], kernels.tobytes(),
                                  _subset_plan(kept[1], kernels))
        return kept[3]

    def _stack(
        self, X: np.ndarray, Z: np.ndarray, *, symmetric: bool, kernel_indices: Any
    ) -> np.ndarray:
        if kernel_indices is None:
            selected, scales = None, self.trace_scales_
        else:
            selected = _check_index_array(kernel_indices, self.n_kernels, "kernel_indices")
            if selected.size == 0:
                raise ValueError("kernel_indices must select at least one kernel.")
            scales = self.trace_scales_[selected]
        plan = self._plan_of(selected, X.shape[1])
        inner, sq_dist, l1_dist = _multi_block_arrays(plan, X, Z, symmetric)
        out = mapped_empty((scales.size, X.shape[0], Z.shape[0]), dtype=self.dtype)
        factors = np.ascontiguousarray(scales[plan.out_index], dtype=np.float64)
        fill_kernel_stack(X, Z, symmetric, *plan.loop_arrays, factors, plan.out_index, inner,
                          sq_dist, l1_dist, out)  # RBF kernels below
        _rbf_stack(plan, factors, X, Z, symmetric, sq_dist, out)
        fill_python_kernels(plan, X, Z, factors, out)
        return out.transpose(1, 2, 0)  # (n_x, n_z, m) view of kernel-major memory

    # ------------------------------------------------------------ persistence

    def fitted_state(self) -> dict[str, np.ndarray]:
        """Copies of the fitted arrays, as accepted by :meth:`from_fitted`.

        Returns
        -------
        dict
            ``mean``, ``scale`` (n_features,), ``trace_scales`` (n_kernels,) and
            ``X_fit`` (n_fit, n_features), all float64.
        """
        self._check_is_fitted()
        return {
            "mean": self.mean_.copy(),
            "scale": self.scale_.copy(),
            "trace_scales": self.trace_scales_.copy(),
            "X_fit": self.X_fit_.copy(),
        }

    @classmethod
    def from_fitted(
        cls,
        specs: Sequence[KernelSpec],
        *,
        standardize: bool,
        normalize: str | None,
        dtype: Any,
        mean: Any,
        scale: Any,
        trace_scales: Any,
        X_fit: Any,
    ) -> KernelBank:
        """Rebuild a fitted bank from stored state (e.g. a saved model).

        Parameters
        ----------
        specs, standardize, normalize, dtype
            As in the constructor.
        mean, scale : array-like of shape (n_features,)
            Fitted standardisation (``scale`` > 0).
        trace_scales : array-like of shape (n_kernels,)
            Fitted kernel scales.
        X_fit : array-like of shape (n_fit, n_features)
            *Standardised* training points to keep, e.g. only the support vectors;
            ``transform(..., rows=None)`` then returns kernels against these rows.

        Returns
        -------
        KernelBank
            A fitted bank.

        Raises
        ------
        ValueError
            If shapes disagree or values are not finite.
        """
        bank = cls(specs, standardize=standardize, normalize=normalize, dtype=dtype)
        X_fit = check_samples(X_fit, name="X_fit", min_samples=0)  # a model may have no SV
        n_features = X_fit.shape[1]
        check_feature_indices(bank.specs, n_features)
        mean = np.asarray(mean, dtype=np.float64)
        scale = np.asarray(scale, dtype=np.float64)
        trace_scales = np.asarray(trace_scales, dtype=np.float64)
        for name, value, size in (
            ("mean", mean, n_features),
            ("scale", scale, n_features),
            ("trace_scales", trace_scales, bank.n_kernels),
        ):
            if value.shape != (size,):
                raise ValueError(f"{name} must have shape ({size},); got {value.shape}.")
            if not np.isfinite(value).all():
                raise ValueError(f"{name} must be finite.")
        if np.any(scale <= 0):
            raise ValueError("scale must be > 0.")
        bank.mean_ = mean.copy()
        bank.scale_ = scale.copy()
        bank.trace_scales_ = trace_scales.copy()
        bank.X_fit_ = X_fit.copy()
        bank.n_features_in_ = n_features
        return bank
