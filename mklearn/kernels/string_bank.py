"""Evaluation of string kernels: stacks, on-demand rows and the linadd feature map.

:class:`StringKernelBank` mirrors :class:`~mklearn.kernels.KernelBank` for sequences (1-D array
of str): ``fit``, ``fit_transform`` (an ``(n, n, m)`` stack), ``transform`` (test versus
training) with unit-trace normalisation. :class:`StringColumns` is the column provider of the
solvers that read kernel rows on demand ("smo", "mwu") and holds the :class:`LinaddMap` used by
the linadd SVM (:mod:`mklearn.svm.linadd`). WD kernels are evaluated by one numba pass per pair
(match runs); spectrum kernels by a sparse product of k-mer count matrices.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse
from sklearn.exceptions import NotFittedError

from mklearn._sizes import PREDICT_BLOCK_BYTES

from ._strings_numba import (
    kmer_codes,
    kmer_columns,
    kmer_squared_counts,
    linadd_add,
    linadd_combined,
    linadd_per_kernel,
    sparse_rows_times,
    wd_block,
)
from .bank import _check_index_array
from .base import Capabilities, KernelOperator
from .strings import (
    _MAX_LINADD_CODE,
    Sequences,
    Spectrum,
    StringKernelSpec,
    WeightedDegree,
    check_sequences,
)

__all__ = ["StringKernelBank", "StringColumns", "LinaddMap"]

_DIRECT_COLUMNS = 1 << 22  # WD k-mer lengths with at most this many (position, code) columns
# are indexed directly; longer ones get the codes seen in training renumbered


def _spectrum_counts(
    seqs: Sequences, order: int, vocabulary: np.ndarray
) -> scipy.sparse.csr_matrix:
    """Counts of the d-mers of ``vocabulary`` (sorted codes) in each sequence, CSR (n, |V|)
    with sorted indices."""
    kmers = kmer_codes(seqs.codes, seqs.lengths, order, len(seqs.alphabet))
    columns = np.empty(kmers.shape, dtype=np.int32)
    counts = np.empty(kmers.shape, dtype=np.int32)
    sizes = np.empty(kmers.shape[0], dtype=np.int64)
    kmer_columns(kmers, vocabulary, columns, counts, sizes)
    kept = np.arange(kmers.shape[1]) < sizes[:, None]
    indptr = np.concatenate([[0], np.cumsum(sizes)])
    matrix = scipy.sparse.csr_matrix(
        (counts[kept].astype(np.float64), columns[kept], indptr),
        shape=(seqs.n_samples, vocabulary.size),
    )
    matrix.has_sorted_indices = True
    return matrix


PRESENCE_TABLE_CODES = 1 << 24  # k-mer codes below this: the vocabulary from a table


def _vocabulary(kmers: np.ndarray, n_codes: int) -> np.ndarray:
    """The sorted distinct codes of ``kmers`` (-1 skipped): from a presence table of
    ``n_codes`` bytes when there are at most ``PRESENCE_TABLE_CODES``, else by sorting."""
    seen = kmers[kmers >= 0]
    if n_codes > PRESENCE_TABLE_CODES:
        return np.unique(seen)
    present = np.zeros(n_codes, dtype=bool)
    present[seen] = True
    return np.flatnonzero(present).astype(np.int64)


def _count_products(left: scipy.sparse.csr_matrix, right: scipy.sparse.csr_matrix
                    ) -> np.ndarray:
    """``left @ right.T`` dense: against the dense transpose of ``right``, the rows of
    ``left`` on numba's threads, where it takes at most ``PREDICT_BLOCK_BYTES`` (a few
    landmarks or test sequences: several times faster than the sparse product), else
    sparse."""
    if 8 * right.shape[0] * right.shape[1] <= PREDICT_BLOCK_BYTES:
        out = np.empty((left.shape[0], right.shape[0]))
        return sparse_rows_times(left.indptr, left.indices, left.data,
                                 np.ascontiguousarray(right.T.toarray()), out)
    return (left @ right.T).toarray()


class StringKernelBank:
    """Evaluate string kernels (spectrum, weighted degree) into kernel stacks.

    Parameters
    ----------
    specs : sequence of StringKernelSpec
        Base kernels, in stack order; all on the same alphabet.
    normalize : {"trace", "diagonal", None}, default="trace"
        "trace" scales kernel k by ``1 / trace(K_k)`` of the training kernel, "diagonal" by
        ``n / trace(K_k)`` (mean diagonal 1; as :class:`~mklearn.kernels.KernelBank`).
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        dtype of the returned stacks.

    Attributes
    ----------
    trace_scales_ : ndarray of shape (n_kernels,)
    X_fit_ : Sequences
        Integer-coded training sequences.
    length_ : int or None
        Common length of the training sequences (None if they differ; no WD kernel then).

    Raises
    ------
    ValueError
        If ``specs`` is empty, holds a non-string spec, or mixes alphabets.
    """

    standardize = False  # sequences are used as given
    reads_sequences = True  # transform takes sequences, not numeric X

    def __init__(self, specs: Sequence[StringKernelSpec], *, normalize: str | None = "trace",
                 dtype: Any = np.float64) -> None:
        specs = tuple(specs)
        if not specs:
            raise ValueError("StringKernelBank needs at least one kernel spec.")
        for position, spec in enumerate(specs):
            if not isinstance(spec, StringKernelSpec):
                raise ValueError(
                    f"specs[{position}] is {spec!r}, not a string kernel (Spectrum, "
                    "WeightedDegree); kernels on numeric features go to KernelBank."
                )
        alphabets = sorted({spec.alphabet for spec in specs})
        if len(alphabets) > 1:
            raise ValueError(f"all string kernels must share one alphabet; got {alphabets}.")
        if normalize not in ("trace", "diagonal", None):
            raise ValueError(f"normalize must be 'trace', 'diagonal' or None; got {normalize!r}.")
        resolved = np.dtype(dtype)
        if resolved not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise ValueError(f"dtype must be numpy.float64 or numpy.float32; got {dtype!r}.")
        self.specs = specs
        self.alphabet = alphabets[0]
        self.normalize = normalize
        self.dtype = resolved
        self._vocabularies: dict[int, np.ndarray] = {}
        self._train_counts: dict[int, scipy.sparse.csr_matrix] = {}

    def __repr__(self) -> str:
        return f"StringKernelBank(n_kernels={self.n_kernels}, normalize={self.normalize!r})"

    @property
    def n_kernels(self) -> int:
        return len(self.specs)

    @property
    def kernel_names(self) -> list[str]:
        return [spec.name for spec in self.specs]

    @property
    def _needs_equal_length(self) -> bool:
        return any(isinstance(spec, WeightedDegree) for spec in self.specs)

    # ------------------------------------------------------------------ fitting
    def fit(self, X: Any) -> StringKernelBank:
        """Code the training sequences and fit the trace scales (kernel diagonals only).

        Raises
        ------
        ValueError
            If X is not a 1-D array of str over the alphabet, lengths differ with a WD kernel,
            or a WD block lies beyond the sequence length.
        """
        seqs = check_sequences(X, alphabet=self.alphabet, equal_length=self._needs_equal_length)
        self.length_ = int(seqs.lengths[0]) if seqs.lengths.min() == seqs.lengths.max() else None
        for spec in self.specs:
            if isinstance(spec, WeightedDegree):
                spec.block(self.length_)
        self._vocabularies, self._train_counts = {}, {}
        for spec in self.specs:
            if isinstance(spec, Spectrum) and spec.order not in self._vocabularies:
                codes = kmer_codes(seqs.codes, seqs.lengths, spec.order, len(self.alphabet))
                self._vocabularies[spec.order] = _vocabulary(
                    codes, len(self.alphabet) ** spec.order)
        self.X_fit_ = seqs
        self.trace_scales_ = np.ones(self.n_kernels)
        if self.normalize is not None:
            traces = self._diagonal(seqs).sum(axis=0)
            usable = np.isfinite(traces) & (traces > 0)
            per_point = seqs.n_samples if self.normalize == "diagonal" else 1.0
            self.trace_scales_[usable] = per_point / traces[usable]
        return self

    def fit_transform(self, X: Any) -> np.ndarray:
        """Fit on X and return the training stack ``(n, n, m)`` (kernel-major memory)."""
        self.fit(X)
        return self._stack(self.X_fit_, self.X_fit_, symmetric=True, kernels=None)

    def _check_is_fitted(self) -> None:
        if not hasattr(self, "trace_scales_"):
            raise NotFittedError("This StringKernelBank is not fitted yet; call fit first.")

    def prepare(self, X: Any) -> Sequences:
        """New sequences checked and coded as the training ones.

        Raises
        ------
        ValueError
            On invalid sequences, or a length other than the training length with WD kernels.
        """
        self._check_is_fitted()
        seqs = check_sequences(X, alphabet=self.alphabet, equal_length=self._needs_equal_length)
        if self._needs_equal_length and seqs.lengths[0] != self.length_:
            raise ValueError(
                f"X has sequences of length {int(seqs.lengths[0])}, but the weighted-degree "
                f"kernel was fitted on length {self.length_}; pass sequences of length "
                f"{self.length_}."
            )
        return seqs

    def transform(self, X: Any, *, rows: Any = None, kernel_indices: Any = None) -> np.ndarray:
        """Kernels between new sequences and (some of) the training sequences.

        Returns
        -------
        ndarray of shape (n_test, n_rows, n_selected)

        Raises
        ------
        NotFittedError, ValueError
        """
        seqs = self.prepare(X)
        train = self.X_fit_
        if rows is not None:
            train = train.take(_check_index_array(np.asarray(rows), train.n_samples, "rows"))
        if kernel_indices is not None:
            kernel_indices = _check_index_array(np.asarray(kernel_indices), self.n_kernels,
                                                "kernel_indices")
        return self._stack(seqs, train, symmetric=False, kernels=kernel_indices)

    def fitted_state(self) -> dict[str, np.ndarray]:
        """Not available: models on string kernels cannot be saved yet.

        Raises
        ------
        ValueError
            Always.
        """
        raise ValueError(
            "models fitted with string kernels cannot be saved yet (save_model stores numeric "
            "support vectors); keep the fitted estimator with pickle or joblib instead."
        )

    # --------------------------------------------------------------- evaluation
    def _diagonal(self, seqs: Sequences) -> np.ndarray:
        """Unscaled ``K_k(x_i, x_i)``, shape (n, m)."""
        out = np.empty((seqs.n_samples, self.n_kernels))
        for k, spec in enumerate(self.specs):
            if isinstance(spec, WeightedDegree):
                start, stop = spec.block(self.length_)
                table = spec.table(spec.order)
                runs = np.minimum(self.length_ - np.arange(start, stop), spec.order)
                out[:, k] = table[runs].sum()
            else:
                out[:, k] = kmer_squared_counts(
                    kmer_codes(seqs.codes, seqs.lengths, spec.order, len(self.alphabet)))
        return out

    def _counts(self, seqs: Sequences, order: int, train: bool) -> scipy.sparse.csr_matrix:
        if train:
            if order not in self._train_counts:
                self._train_counts[order] = _spectrum_counts(
                    self.X_fit_, order, self._vocabularies[order])
            return self._train_counts[order]
        return _spectrum_counts(seqs, order, self._vocabularies[order])

    def explicit_rank(self, k: int) -> int | None:
        """The columns of kernel k's explicit feature map on the training vocabulary (a
        spectrum kernel's distinct d-mers seen in training), or None (a WD kernel, whose
        map is not kept)."""
        spec = self.specs[k]
        if isinstance(spec, Spectrum):
            return int(self._vocabularies[spec.order].size)
        return None

    def explicit_features(self, seqs: Sequences, k: int) -> np.ndarray:
        """Kernel k's explicit features of ``seqs``, ``sqrt(s_k)`` times the counts of the
        training vocabulary's d-mers, dense of shape (n, ``explicit_rank(k)``): their inner
        products are ``s_k K_k`` between the sequences and any training sequence."""
        order = self.specs[k].order
        counts = _spectrum_counts(seqs, order, self._vocabularies[order])
        return np.sqrt(self.trace_scales_[k]) * counts.toarray()

    def kernel_values(self, A: Sequences, B: Sequences, *, symmetric: bool = False,
                      kernels: np.ndarray | None = None, a_is_train: bool = False,
                      b_is_train: bool = False) -> np.ndarray:
        """Scaled kernels ``out[t, i, j] = s_k K_k(A_i, B_j)``, ``k = kernels[t]``; (m', n_a, n_b).

        ``a_is_train``/``b_is_train`` say that A/B are (rows of) the training set, whose
        spectrum counts are cached (then A, B must be exactly the training set).
        """
        selected = np.arange(self.n_kernels) if kernels is None else kernels
        out = np.empty((selected.size, A.n_samples, B.n_samples))
        wd = [t for t, k in enumerate(selected) if isinstance(self.specs[k], WeightedDegree)]
        if wd:
            specs = [self.specs[selected[t]] for t in wd]
            d_max = max(spec.order for spec in specs)
            blocks = [spec.block(self.length_) for spec in specs]
            ranges = sorted(set(blocks))
            tables = np.array([spec.table(d_max) * self.trace_scales_[selected[t]]
                               for spec, t in zip(specs, wd, strict=True)])
            part = np.empty((len(wd), A.n_samples, B.n_samples))
            wd_block(A.codes, B.codes, symmetric,
                     np.array([r[0] for r in ranges], dtype=np.int64),
                     np.array([r[1] for r in ranges], dtype=np.int64),
                     np.array([ranges.index(b) for b in blocks], dtype=np.int64),
                     np.ascontiguousarray(tables), part)
            out[wd] = part
        for t, k in enumerate(selected):
            spec = self.specs[k]
            if isinstance(spec, Spectrum):
                left = self._counts(A, spec.order, a_is_train)
                right = left if symmetric else self._counts(B, spec.order, b_is_train)
                out[t] = _count_products(left, right) * self.trace_scales_[k]
        return out

    def _stack(self, A: Sequences, B: Sequences, *, symmetric: bool,
               kernels: np.ndarray | None) -> np.ndarray:
        values = self.kernel_values(A, B, symmetric=symmetric, kernels=kernels,
                                    a_is_train=symmetric, b_is_train=symmetric)
        return values.astype(self.dtype, copy=False).transpose(1, 2, 0)


class StringColumns(KernelOperator):
    """Rows of the string kernels of a fitted :class:`StringKernelBank`, on demand.

    The column-provider interface of :mod:`mklearn.kernels.columns` (``n_samples``,
    ``n_kernels``, ``kernel_names``, ``dtype``, ``rows``, ``diagonal``) plus :meth:`linadd`,
    the explicit feature map of the training sequences.

    Parameters
    ----------
    bank : StringKernelBank
        A fitted bank.

    Raises
    ------
    ValueError
        If ``bank`` is not a fitted StringKernelBank.
    """

    dtype = np.dtype(np.float64)
    capabilities = Capabilities(linadd=True, trusted=True)

    def __init__(self, bank: StringKernelBank) -> None:
        if not isinstance(bank, StringKernelBank) or not hasattr(bank, "trace_scales_"):
            raise ValueError(f"StringColumns needs a fitted StringKernelBank; got {bank!r}.")
        self.bank = bank
        self.n_samples = bank.X_fit_.n_samples
        self.n_kernels = bank.n_kernels
        self.kernel_names = list(bank.kernel_names)
        self._linadd: LinaddMap | None = None

    def __repr__(self) -> str:
        return f"StringColumns(n_samples={self.n_samples}, n_kernels={self.n_kernels})"

    def rows(self, indices: Any, kernels: Any = None) -> np.ndarray:
        """Rows ``indices`` of the kernels ``kernels``: (len(kernels), len(indices), n)."""
        indices = _check_index_array(np.atleast_1d(indices), self.n_samples, "indices")
        if kernels is not None:
            kernels = _check_index_array(np.atleast_1d(kernels), self.n_kernels, "kernels")
        train = self.bank.X_fit_
        return self.bank.kernel_values(train.take(indices), train, kernels=kernels,
                                       b_is_train=True)

    def block(self, indices: Any, kernels: Any = None) -> np.ndarray:
        """Kernels among the sequences ``indices``: (len(kernels), q, q)."""
        indices = _check_index_array(np.atleast_1d(indices), self.n_samples, "indices")
        sub = self.bank.X_fit_.take(indices)
        return self.bank.kernel_values(sub, sub, symmetric=True, kernels=kernels)

    def diagonal(self) -> np.ndarray:
        """Scaled ``K_k[i, i]``, shape (m, n)."""
        diag = self.bank._diagonal(self.bank.X_fit_).T * self.bank.trace_scales_[:, None]
        return np.ascontiguousarray(diag)

    def linadd(self) -> LinaddMap:
        """The explicit feature map of the training sequences (built once)."""
        if self._linadd is None:
            self._linadd = LinaddMap(self.bank)
        return self._linadd


class LinaddMap:
    """Explicit sparse feature map of a bank's training sequences, for linadd.

    Each sequence has one column index per *slot* (``idx[s, t]``, -1 for none): a (k, position) pair
    of a WD kernel, or a position of a spectrum kernel. Slot s carries coefficients ``c_{s,m}``
    (the kernel's WD weight ``beta_k`` times its trace scale) for the kernels m it belongs to,
    so ``K_m(x, z) = sum_{s, s'} c_{s,m} I(idx[s, x] == idx[s', z])`` and, for
    ``w = sum_i a_i phi(x_i)`` stored per column, ``sum_i a_i K_m(x_i, x_t) =
    sum_s c_{s,m} w[idx[s, t]]`` (SILP-MKL paper, JMLR 2006, section 4.2).

    Parameters
    ----------
    bank : StringKernelBank
        A fitted bank.

    Attributes
    ----------
    idx : int ndarray of shape (S, n)
        Slot-major (one contiguous row per slot).
    n_columns : int
        Length of the normal vector w.
    slot_ptr, slot_kernel, slot_coef : ndarrays
        CSR map from slots to (kernel, coefficient).

    Raises
    ------
    ValueError
        If a WD k-mer length makes the (position, code) keys overflow int64.

    Notes
    -----
    Memory is ``idx.nbytes = 4 n S`` bytes (S = number of slots: ``sum_k (L - k + 1)`` for WD
    of order d on length L) plus ``8 n_columns`` for w.
    """

    def __init__(self, bank: StringKernelBank) -> None:
        seqs = bank.X_fit_
        m = bank.n_kernels
        alphabet_size = len(bank.alphabet)
        blocks, coefs, base = [], [], 0
        wd = [(k, spec) for k, spec in enumerate(bank.specs) if isinstance(spec, WeightedDegree)]
        if wd:
            length = bank.length_
            d_max = max(spec.order for _, spec in wd)
            for kmer in range(1, d_max + 1):
                n_pos = length - kmer + 1
                coef = np.zeros((n_pos, m))
                for k, spec in wd:
                    if kmer in spec.kmer_lengths:
                        start, stop = spec.block(length)
                        coef[start:min(stop, n_pos), k] = (
                            spec.table(spec.order)[kmer] - spec.table(spec.order)[kmer - 1]
                        ) * bank.trace_scales_[k]
                used = np.flatnonzero(np.any(coef != 0, axis=1))
                if used.size == 0:
                    continue
                size = alphabet_size ** kmer
                if size * n_pos >= _MAX_LINADD_CODE:
                    raise ValueError(
                        f"linadd: {kmer}-mers over {alphabet_size} characters at {n_pos} "
                        "positions overflow the int64 feature keys; use a smaller WD order."
                    )
                codes = kmer_codes(seqs.codes, seqs.lengths, kmer, alphabet_size)[:, used]
                keys = codes + used[None, :].astype(np.int64) * size
                if size * n_pos <= _DIRECT_COLUMNS:
                    columns, n_new = keys, size * n_pos
                else:
                    unique, inverse = np.unique(keys, return_inverse=True)
                    columns, n_new = inverse.reshape(keys.shape), unique.size
                blocks.append(columns + base)
                coefs.append(coef[used])
                base += n_new
        for k, spec in enumerate(bank.specs):
            if isinstance(spec, Spectrum):
                vocabulary = bank._vocabularies[spec.order]
                codes = kmer_codes(seqs.codes, seqs.lengths, spec.order, alphabet_size)
                columns = np.where(codes >= 0, np.searchsorted(vocabulary, codes) + base, -1)
                coef = np.zeros((codes.shape[1], m))
                coef[:, k] = bank.trace_scales_[k]
                blocks.append(columns)
                coefs.append(coef)
                base += vocabulary.size
        index_dtype = np.int32 if base < 2**31 else np.int64
        self.idx = np.ascontiguousarray(np.hstack(blocks).T, dtype=index_dtype)  # (S, n)
        coef = np.vstack(coefs)
        sparse = scipy.sparse.csr_matrix(coef)
        self.slot_ptr = sparse.indptr.astype(np.int64)
        self.slot_kernel = sparse.indices.astype(np.int64)
        self.slot_coef = sparse.data.astype(np.float64)
        self._coef = coef
        self.n_columns = int(base)
        self.n_kernels = m

    @property
    def n_slots(self) -> int:
        return self.idx.shape[0]

    def new_vector(self) -> np.ndarray:
        """A zero normal vector w."""
        return np.zeros(self.n_columns)

    def add(self, w: np.ndarray, rows: np.ndarray, amounts: np.ndarray) -> np.ndarray:
        """``w += sum_a amounts[a] phi(x_{rows[a]})`` (in place; unweighted feature map)."""
        return linadd_add(self.idx, np.asarray(rows, dtype=np.int64),
                          np.asarray(amounts, dtype=np.float64), w)

    def outputs(self, w: np.ndarray, kernel_weights: np.ndarray) -> np.ndarray:
        """``f_t = sum_m d_m sum_s c_{s,m} w[idx[s, t]]`` for all training t, shape (n,)."""
        slot_weight = np.ascontiguousarray(self._coef @ np.asarray(kernel_weights, np.float64))
        return linadd_combined(self.idx, slot_weight, w, np.empty(self.idx.shape[1]))

    def per_kernel_outputs(self, w: np.ndarray) -> np.ndarray:
        """``g[t, m] = sum_s c_{s,m} w[idx[s, t]]``: ``K_m a`` for all kernels, shape (n, m)."""
        out = np.zeros((self.idx.shape[1], self.n_kernels))
        return linadd_per_kernel(self.idx, self.slot_ptr, self.slot_kernel, self.slot_coef, w,
                                 out)
