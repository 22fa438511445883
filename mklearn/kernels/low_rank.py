"""Low-rank base kernels: ``K_k ~ Phi_k Phi_k'``, with ``Phi_k`` of shape (n, r_k).

:class:`LowRankMap` turns the kernels of a fitted :class:`~mklearn.kernels.KernelBank` into
feature maps, each kernel by the cheapest exact route or, where none is small enough, by an
approximation:

- **exact, linear**: a linear kernel on ``F`` columns is ``Phi = sqrt(s) X_F`` (rank |F|);
- **exact, polynomial**: ``(gamma x'z + coef0)^p`` with ``coef0 >= 0`` on ``F`` columns is
  the inner product of its monomials of degree at most p (exactly p when ``coef0 = 0``),
  ``phi_a(x) = sqrt(p! / ((p - |a|)! a_1! ... a_F!) coef0^(p - |a|) gamma^|a|) x^a`` (the
  multinomial theorem), of rank ``C(F + p, p)`` (``C(F + p - 1, p)``), taken when that is at
  most ``n_components``;
- **exact, few distinct rows**: a kernel on columns whose rows take at most
  ``n_components`` distinct values (binary, one-hot, categorical features: the default
  family's one-feature kernels on them) is ``Phi = K(X, L) K_LL^(-1/2)`` with the distinct
  rows as landmarks L: every point is a landmark, so ``Phi Phi' = K`` (up to the floor on
  ``K_LL``'s spectrum). For the SVMs with an intercept (``drop_constants``) such a kernel
  loses its constant part: on v distinct rows, ``K_LL = c 1 1' + G`` with
  ``c = 1 / (1' K_LL^-1 1)`` and G positive semi-definite of rank v - 1, and the features
  are those of G (``Phi = K(X, L) K_LL^-1 G^(1/2)``, one column fewer). Their duals have
  ``sum_i v_i = 0`` (``v = y * alpha``), so ``v' K v = v' G v`` and ``K v = G v`` up to a
  constant that the intercept absorbs: the optimum, the kernel weights and the predictions
  are those of K (``constant_parts_`` keeps c, which kernel values add back, and which
  coordinate descent follows as the balance ``y' alpha``: :mod:`mklearn.linear.dcd`);
- **Nystrom** (Williams and Seeger, NIPS 2001): the same formula on ``n_components``
  landmarks drawn uniformly from the distinct rows, shared by the kernels that read the same
  columns (one draw, one ``K(X, L)`` pass for them all); a kernel on one continuous column
  takes ``ONE_FEATURE_RANK`` landmarks at the column's quantiles;
- **random Fourier features** (Rahimi and Recht, NIPS 2007), ``kernel_approximation="rff"``:
  ``Phi = sqrt(2 s / D) cos(X_F W + c)``, W Gaussian for the RBF kernel and Cauchy for the
  Laplacian one (their spectral densities), c uniform on ``[0, 2 pi)``; only for
  shift-invariant kernels.

The pseudo-inverse of ``K_LL`` keeps the eigenvalues above ``SPECTRUM_FLOOR`` times the
largest (the floor of FALKON, Rudi et al., NeurIPS 2017, section 3, and of scikit-learn's
``Nystroem``, which keeps those above 1e-12). The approximation's error is measured on a
sample of points (:meth:`LowRankMap.error_on`): the relative Frobenius error of the sum of
the kernels on the sample's entries, and each kernel's.

:class:`LowRankKernels` is the operator the solvers read: the blocks side by side in one
array ``features`` of shape (n, R), ``R = sum_k r_k``.
"""

from __future__ import annotations

import math
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from itertools import combinations_with_replacement
from typing import Any

import numpy as np

from mklearn._sizes import PREDICT_BLOCK_BYTES, byte_words
from mklearn.kernels._low_rank_numba import (
    NOT_A_LANDMARK,
    distinct_first_rows,
    gather_table_rows,
    landmark_codes,
    row_hashes,
    squared_block_norms,
    verified,
)
from mklearn.kernels.bank import KernelBank, block_key
from mklearn.kernels.base import KernelOperator
from mklearn.kernels.capabilities import Capabilities
from mklearn.kernels.specs import KIND_LAPLACIAN, KIND_LINEAR, KIND_POLYNOMIAL, KIND_RBF

__all__ = ["APPROXIMATIONS", "FeatureMap", "LowRankKernels", "LowRankMap", "ONE_FEATURE_RANK",
           "SMALLEST_AUTO", "SPECTRUM_FLOOR", "TrainingPoints", "block_squared_norms",
           "block_starts", "error_of_blocks", "error_sample", "floored_inverse_root",
           "group_block", "warn_rank_deficient",
           "low_rank_bytes", "plan_words", "polynomial_exponents", "polynomial_rank",
           "representative_rows"]

APPROXIMATIONS = ("nystroem", "rff")  # kernel_approximation's values besides exact and auto
SPECTRUM_FLOOR = 1e-10  # eigenvalues of K_LL kept: above this times the largest
# landmarks of a kernel on one continuous column: the 1-D RBF of width 1 on a standardised
# column has a spectrum that falls below 1e-10 of its top within about 30 components
ONE_FEATURE_RANK = 48
# a random draw of landmarks whose K_LL keeps less than this share of its rank is worth a
# warning (duplicate or constant landmarks); quantiles of one column lose rank by design
RANK_WARNING_SHARE = 0.5
ERROR_SAMPLE = 400  # points whose kernel entries measure the approximation's error
SHIFT_INVARIANT = (KIND_RBF, KIND_LAPLACIAN)


@dataclass
class _Group:
    """Kernels that read the same columns with the same scales, and their map."""

    kernels: np.ndarray  # indices into the bank's kernels
    columns: np.ndarray | None
    scales: np.ndarray | None
    route: str  # "linear", "polynomial", "landmarks" or "rff"
    exact: bool = False
    uniform: bool = False  # landmarks drawn at random (not distinct rows, not quantiles)
    landmarks: np.ndarray | None = None  # rows of the map's landmark points
    projections: list = field(default_factory=list)  # per kernel: (l, r_k) or (|F|, D)
    phases: np.ndarray | None = None


def _columns_of(spec, n_features):
    return np.arange(n_features) if spec.features is None else np.asarray(spec.features)


def group_block(points, group):
    """The columns of ``points`` a kernel group reads, times their scales."""
    block = points if group.columns is None else points[:, group.columns]
    return block if group.scales is None else block * group.scales


def polynomial_exponents(width, degree, coef0):
    """The exponents ``a`` of the monomials of the map of ``(gamma x'z + coef0)^degree`` on
    ``width`` columns, int64 of shape (count, width): every ``|a| <= degree`` (``coef0 > 0``)
    or ``|a| = degree`` (``coef0 = 0``)."""
    rows = []
    for total in range(0 if coef0 > 0 else degree, degree + 1):
        for picks in combinations_with_replacement(range(width), total):
            rows.append(np.bincount(np.asarray(picks, dtype=np.int64), minlength=width))
    return np.asarray(rows, dtype=np.int64).reshape(-1, width)


def polynomial_rank(width, degree, coef0):
    """Columns of that map: ``C(width + degree, degree)``, or ``C(width + degree - 1,
    degree)`` when ``coef0 = 0``."""
    return math.comb(width + degree - (0 if coef0 > 0 else 1), degree)


def _polynomial_features(block, exponents, spec):
    """``phi_a(x)`` of the rows of ``block`` (the kernel's scaled columns), shape
    (n, len(exponents)): the multinomial coefficients' square roots times ``x^a``."""
    gamma, coef0, degree = spec.numeric_params()
    total = exponents.sum(axis=1)
    log_weight = (math.lgamma(degree + 1)
                  - np.array([math.lgamma(degree - t + 1) for t in total])
                  - np.array([sum(math.lgamma(e + 1) for e in row) for row in exponents]))
    weight = np.exp(0.5 * log_weight) * np.sqrt(gamma ** total * coef0 ** (degree - total))
    out = np.empty((block.shape[0], exponents.shape[0]))
    for j, row in enumerate(exponents):
        column = np.full(block.shape[0], weight[j])
        for i in np.flatnonzero(row):
            column *= block[:, i] ** row[i]
        out[:, j] = column
    return out


def _distinct_rows(block, limit):
    """Indices of the distinct rows of ``block`` (first occurrences), or None when there are
    more than ``limit``."""
    if block.shape[1] == 1:
        column = np.ascontiguousarray(block[:, 0], dtype=np.float64)
        first = distinct_first_rows((column + 0.0).view(np.int64), limit)  # -0.0 as 0.0
        if first.size == 0:
            return None
        return first[np.argsort(column[first], kind="stable")]
    sample = block[: min(block.shape[0], 50 * limit)]
    if np.count_nonzero(representative_rows(sample) == np.arange(sample.shape[0])) > limit:
        return None
    _, first = np.unique(block, axis=0, return_index=True)
    return first if first.size <= limit else None


def representative_rows(Phi: np.ndarray) -> np.ndarray:
    """The first row of ``Phi`` equal to each row (the row itself when it is unique), int64
    of shape (n,): rows grouped by two random projections, then every grouped row compared
    with its representative entry by entry."""
    if Phi.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    directions = np.random.default_rng(0).standard_normal((2, Phi.shape[1]))
    hashes = row_hashes(Phi, directions)
    _, first, inverse = np.unique(hashes, axis=0, return_index=True, return_inverse=True)
    return verified(Phi, first[inverse.ravel()].astype(np.int64))


def _quantile_rows(column, count):
    """Indices of rows at ``count`` evenly spaced quantiles of one column (distinct)."""
    order = np.argsort(column, kind="stable")
    picks = order[np.linspace(0, column.size - 1, count).round().astype(np.int64)]
    _, keep = np.unique(column[picks], return_index=True)
    return picks[np.sort(keep)]


def low_rank_bytes(n_samples: int, rank: int, itemsize: int = 8) -> int:
    """Bytes of a fit on features of rank R: the ``(n, R)`` features and about six float64
    vectors of n (bounds, signs, dual variables and those of the bias search)."""
    return int(n_samples) * int(rank) * int(itemsize) + 6 * 8 * int(n_samples)


class TrainingPoints:
    """The standardised training points as :meth:`LowRankMap.fit` reads them: their count,
    the distinct rows and the single column of a kernel group, and some rows.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Standardised (the bank's ``X_fit_``).
    """

    def __init__(self, X: np.ndarray) -> None:
        self.X = X
        self.n_samples = X.shape[0]

    def distinct_rows(self, group: _Group, limit: int) -> np.ndarray | None:
        """Indices of the distinct rows of the group's block (first occurrences), or None
        when there are more than ``limit``."""
        return _distinct_rows(group_block(self.X, group), limit)

    def column(self, group: _Group) -> np.ndarray:
        """The one column of a group on one feature (scaled), shape (n_samples,)."""
        return group_block(self.X, group)[:, 0]

    def rows(self, indices: Any) -> np.ndarray:
        """The rows ``indices``, shape (len(indices), n_features)."""
        return self.X[np.asarray(indices, dtype=np.int64)]


class FeatureMap(ABC):
    """The base of the low-rank maps: kernel k's features are the columns
    ``starts_[k]:starts_[k + 1]`` of :meth:`transform` (its values ``Phi_k Phi_k' +
    constant_parts_[k]``); ``landmark_rows_`` are the training points the map was built on
    (none for exact and random-feature maps), and :meth:`error_on` measures it on a
    sample."""

    @property
    def rank(self) -> int:
        """``R``, the columns of the features."""
        return int(self.starts_[-1])

    @staticmethod
    @abstractmethod
    def training_size(bank: Any) -> int:
        """The training points of a fitted bank."""

    @abstractmethod
    def training_points(self, rows: Any = None) -> Any:
        """The bank's training points as the map reads them (``rows`` of them)."""

    @abstractmethod
    def fit(self) -> FeatureMap:
        """Choose the routes and build the maps from the bank's training points."""

    @abstractmethod
    def transform(self, X: Any, prepared: bool = False) -> np.ndarray:
        """The features of X, shape (n, R)."""

    @abstractmethod
    def error_on(self, points: Any, features: np.ndarray) -> tuple[float, np.ndarray]:
        """The relative errors of the kernel sum and of each kernel on a sample."""


class LowRankMap(FeatureMap):
    """Feature maps ``Phi_k`` of the kernels of a fitted bank (see the module docstring).

    Parameters
    ----------
    bank : KernelBank
        Fitted on the training points (its ``X_fit_`` are the standardised points).
    approximation : {"nystroem", "rff"}
        What the kernels without an exact small map get.
    n_components : int
        Landmarks (Nystrom) or random features (rff) of each approximated kernel; a kernel
        whose columns take at most this many distinct rows is exact.
    random_state : int, RandomState or None
    dtype : numpy.dtype
        Of the features (float32 halves their memory).
    drop_constants : bool
        Exact kernels on few distinct rows lose their constant part (one column each; see
        the module docstring): for duals with ``sum_i y_i alpha_i = 0`` only (SVMs with an
        intercept), not for the one-class SVM.

    Attributes
    ----------
    ranks_ : ndarray of shape (n_kernels,)
        ``r_k``, the columns of each kernel's block.
    constant_parts_ : ndarray of shape (n_kernels,)
        ``c_k``: ``K_k = Phi_k Phi_k' + c_k 1 1'`` (0 where nothing was dropped).
    exact_ : ndarray of shape (n_kernels,), bool
        Whether the kernel's map is exact.
    starts_ : int64 ndarray of shape (n_kernels + 1,)
        Kernel k's columns of the features are ``starts_[k]:starts_[k + 1]``.
    landmark_points_ : ndarray of shape (n_landmarks, n_features)
        The standardised landmarks of every group, side by side.
    landmark_rows_ : int64 ndarray of shape (n_landmarks,)
        Their rows among the training points.

    Raises
    ------
    ValueError
        ``approximation="rff"`` for a kernel that is not shift-invariant and has no exact
        map of at most ``n_components`` columns (a wide polynomial): the message names it
        and the fix.
    """

    def __init__(self, bank: KernelBank, approximation: str = "nystroem",
                 n_components: int = 1000, random_state: Any = None,
                 dtype: Any = np.float64, drop_constants: bool = False) -> None:
        self.bank = bank
        self.approximation = approximation
        self.n_components = int(n_components)
        self.random_state = random_state
        self.dtype = np.dtype(dtype)
        self.drop_constants = bool(drop_constants)

    # ------------------------------------------------------------------ fit
    def fit(self, points: Any = None) -> LowRankMap:
        """Choose each kernel's route, draw the landmarks or random features, and factor
        ``K_LL``; the training features come from :meth:`transform` of the bank's points.

        Parameters
        ----------
        points : TrainingPoints, optional
            The standardised training points as the routes read them (default: the bank's
            ``X_fit_`` in memory; :mod:`mklearn.distributed.points` for partitions).
        """
        from sklearn.utils import check_random_state

        rng = check_random_state(self.random_state)
        points = TrainingPoints(self.bank.X_fit_) if points is None else points
        self.groups_ = []
        landmark_rows = []
        for group in self._groups(self.bank.n_features_in_):
            self._route(group, points, rng, landmark_rows)
            self.groups_.append(group)
        rows = np.unique(np.concatenate(landmark_rows)) if landmark_rows else np.zeros(0, int)
        position = np.full(points.n_samples, -1)
        position[rows] = np.arange(rows.size)
        for group in self.groups_:
            if group.landmarks is not None:
                group.landmarks = position[group.landmarks]
        self.landmark_points_ = np.ascontiguousarray(points.rows(rows if rows.size else [0]))
        self.landmark_rows_ = rows
        self._factor(rng)
        return self

    def _groups(self, n_features):
        by_key: dict = {}
        for k, spec in enumerate(self.bank.specs):
            columns = None if spec.features is None else np.asarray(spec.features)
            scales = None if spec.feature_scales is None else np.asarray(spec.feature_scales)
            width = n_features if columns is None else columns.size
            key = (self._closed_form(spec, width), block_key(columns, scales))
            by_key.setdefault(key, (columns, scales, []))[2].append(k)
        for (route, _), (columns, scales, kernels) in by_key.items():
            yield _Group(np.asarray(kernels), columns, scales, route)

    def _closed_form(self, spec, width):
        """"linear" or "polynomial" for a kernel with an exact map of at most
        ``n_components`` columns by its formula, else "landmarks"."""
        if spec.kind == KIND_LINEAR:
            return "linear"
        if spec.kind == KIND_POLYNOMIAL:
            _, coef0, degree = spec.numeric_params()
            if coef0 >= 0 and polynomial_rank(width, degree, coef0) <= self.n_components:
                return "polynomial"
        return "landmarks"

    def _route(self, group, points, rng, landmark_rows):
        """The group's route and landmarks (rows of the points)."""
        if group.route in ("linear", "polynomial"):
            group.exact = True
            return
        distinct = points.distinct_rows(group, self.n_components)
        if distinct is not None:
            group.exact, group.landmarks = True, distinct
        elif self.approximation == "rff":
            self._check_shift_invariant(group)
            group.route = "rff"
            return
        elif self._width(group) == 1:
            group.landmarks = _quantile_rows(points.column(group), min(ONE_FEATURE_RANK,
                                                                       self.n_components))
        else:
            group.landmarks, group.uniform = self._uniform_landmarks(points, group, rng), True
        landmark_rows.append(group.landmarks)

    def _width(self, group):
        return self.bank.n_features_in_ if group.columns is None else group.columns.size

    def _uniform_landmarks(self, points, group, rng):
        """``n_components`` rows drawn uniformly without replacement, duplicates dropped."""
        picks = np.sort(rng.choice(points.n_samples, self.n_components, replace=False))
        _, keep = np.unique(group_block(points.rows(picks), group), axis=0, return_index=True)
        return picks[np.sort(keep)]

    def _check_shift_invariant(self, group):
        for k in group.kernels:
            spec = self.bank.specs[k]
            if spec.kind not in SHIFT_INVARIANT:
                raise ValueError(
                    f"kernel_approximation='rff' needs shift-invariant kernels (RBF, "
                    f"Laplacian); kernel {k} is {spec.name}: use kernel_approximation="
                    "'nystroem' (or 'auto'), which approximates any kernel")

    def _factor(self, rng):
        """``K_LL^(-1/2)`` per kernel of each landmark group (floored), or the random
        features' projections; the ranks and block starts."""
        ranks = np.zeros(self.bank.n_kernels, dtype=np.int64)
        self.exact_ = np.zeros(self.bank.n_kernels, dtype=bool)
        self.constant_parts_ = np.zeros(self.bank.n_kernels)
        landmark_bank = self._landmark_bank()
        for group in self.groups_:
            self.exact_[group.kernels] = group.exact
            if group.route == "linear":
                ranks[group.kernels] = (self.bank.n_features_in_ if group.columns is None
                                        else group.columns.size)
            elif group.route == "rff":
                self._draw_features(group, rng)
                ranks[group.kernels] = self.n_components
            elif group.route == "polynomial":
                group.projections = self._exponents(group)
                ranks[group.kernels] = [p.shape[1] for p in group.projections]
            else:
                K_LL = landmark_bank.transform(self.landmark_points_[group.landmarks],
                                               rows=group.landmarks,
                                               kernel_indices=group.kernels)
                group.projections = [self._inverse_root(K_LL[:, :, t], group, t)
                                     for t in range(group.kernels.size)]
                if group.exact and self.drop_constants:
                    self._drop_constants(group, K_LL)
                ranks[group.kernels] = [p.shape[1] for p in group.projections]
        self.ranks_ = ranks
        self.starts_ = block_starts(ranks)

    def _drop_constants(self, group, K_LL):
        """Each kernel's projection without its constant part (:func:`without_constant`),
        where its landmark block has one."""
        for t, k in enumerate(group.kernels):
            projection, constant = without_constant(K_LL[:, :, t], group.projections[t])
            group.projections[t] = projection
            self.constant_parts_[k] = constant

    def _exponents(self, group):
        """Per kernel of a polynomial group, its monomials' exponents as columns (the
        projections kept in model files), float64 of shape (width, count)."""
        width = self._width(group)
        out = []
        for k in group.kernels:
            _, coef0, degree = self.bank.specs[k].numeric_params()
            out.append(polynomial_exponents(width, degree, coef0).T.astype(np.float64))
        return out

    def _landmark_bank(self):
        bank = self.bank
        return KernelBank.from_fitted(
            bank.specs, standardize=False, normalize=bank.normalize, dtype=np.float64,
            mean=np.zeros(bank.n_features_in_), scale=np.ones(bank.n_features_in_),
            trace_scales=bank.trace_scales_, X_fit=self.landmark_points_)

    def _inverse_root(self, K_LL, group, t):
        """``U_+ S_+^(-1/2)`` (:func:`floored_inverse_root`), with a warning when a random
        draw keeps less than ``RANK_WARNING_SHARE`` of its rank."""
        root = floored_inverse_root(K_LL)
        if group.uniform:
            warn_rank_deficient(self.bank.specs[group.kernels[t]].name, root, K_LL.shape[0])
        return root

    def _draw_features(self, group, rng):
        width = self._width(group)
        D = self.n_components
        group.phases = rng.uniform(0.0, 2.0 * np.pi, D)
        gaussian = rng.standard_normal((width, D))
        cauchy = rng.standard_cauchy((width, D))
        group.projections = []
        for k in group.kernels:
            spec = self.bank.specs[k]
            gamma = spec.effective_gamma
            if spec.kind == KIND_RBF:  # exp(-gamma ||x - z||^2): N(0, 2 gamma)
                group.projections.append(np.sqrt(2.0 * gamma) * gaussian)
            else:  # exp(-gamma ||x - z||_1): Cauchy of scale gamma per coordinate
                group.projections.append(gamma * cauchy)

    @staticmethod
    def training_size(bank: KernelBank) -> int:
        """The training points of a fitted bank."""
        return bank.X_fit_.shape[0]

    def training_points(self, rows: Any = None) -> np.ndarray:
        """The bank's standardised training points (``rows`` of them)."""
        return self.bank.X_fit_ if rows is None else self.bank.X_fit_[rows]

    # ------------------------------------------------------------- transform
    def transform(self, X: Any, prepared: bool = False) -> np.ndarray:
        """The features of the points X, shape (n, R), in blocks of points.

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            Points as the bank takes them (``prepared``: already standardised by it).
        """
        points = X if prepared else self.bank.prepare(X)
        out = np.empty((points.shape[0], self.rank), dtype=self.dtype)
        landmarks = max(self.landmark_points_.shape[0], 1)
        block = max(1, PREDICT_BLOCK_BYTES // (8 * landmarks * 4))
        buffer = None if self.dtype == np.float64 else np.empty((block, self.rank))
        for start in range(0, points.shape[0], block):
            chunk = np.ascontiguousarray(points[start:start + block])
            rows = slice(start, start + chunk.shape[0])
            if buffer is None:  # float64: written in place
                self._features(chunk, out[rows])
            else:
                out[rows] = self._features(chunk, buffer[:chunk.shape[0]])
        return out

    def _features(self, points, out):
        """Write the features of ``points`` into ``out``, float64 of shape (n, R); return it."""
        scales = self.bank.trace_scales_
        tabled = self._gather_tables(points, out)
        for g, group in enumerate(self.groups_):
            if g in tabled:
                continue
            block = group_block(points, group)
            if group.route == "landmarks":
                cross = self._landmark_bank_cached().transform(
                    points, rows=group.landmarks, kernel_indices=group.kernels,
                    prepared=True)  # checked once, by transform
            for t, k in enumerate(group.kernels):
                lo, hi = self.starts_[k], self.starts_[k + 1]
                if group.route == "linear":
                    out[:, lo:hi] = np.sqrt(scales[k]) * block
                elif group.route == "polynomial":
                    exponents = group.projections[t].T.astype(np.int64)
                    out[:, lo:hi] = np.sqrt(scales[k]) * _polynomial_features(
                        block, exponents, self.bank.specs[k])
                elif group.route == "rff":
                    D = group.phases.size
                    out[:, lo:hi] = np.sqrt(2.0 * scales[k] / D) * np.cos(
                        block @ group.projections[t] + group.phases)
                else:
                    out[:, lo:hi] = np.asarray(cross[:, :, t], dtype=np.float64) \
                        @ group.projections[t]
        return out

    def _gather_tables(self, points, out):
        """Write the features of the exact one-column groups whose every point's value is a
        landmark's (rows of their tables, no kernel computed); return those groups."""
        tables = self._one_column_tables()
        if tables is None:
            return set()
        codes = np.empty((points.shape[0], tables["groups"].size), dtype=np.int64)
        landmark_codes(points, tables["columns"], tables["scales"], tables["values"],
                       tables["value_starts"], tables["order"], codes)
        missing = (codes == NOT_A_LANDMARK).any(axis=0)
        codes[:, missing] = 0  # written, then overwritten by the kernels' own route
        gather_table_rows(codes, tables["group_of"], tables["tables"], tables["table_starts"],
                          tables["widths"], tables["out_starts"], out)
        return set(tables["groups"][~missing].tolist())

    def _one_column_tables(self):
        """The exact groups on one column, flat for the loops of ``_gather_tables``: their
        columns, scales, sorted landmark values (and the landmarks' order) and, per kernel,
        its group, table rows (``K_LL P``) and columns of the features; None if none."""
        def make():
            groups = [g for g, group in enumerate(self.groups_)
                      if group.route == "landmarks" and group.exact and self._width(group) == 1]
            if not groups:
                return None
            sorted_values = [self._sorted_landmarks(g) for g in groups]
            group_of, tables, kernels = [], [], []
            for position, g in enumerate(groups):
                group_of += [position] * self.groups_[g].kernels.size
                tables += self._landmark_table(g)
                kernels += self.groups_[g].kernels.tolist()
            widths = np.array([table.shape[1] for table in tables], dtype=np.int64)
            return {
                "groups": np.asarray(groups),
                "columns": np.array([0 if self.groups_[g].columns is None
                                     else self.groups_[g].columns[0] for g in groups],
                                    dtype=np.int64),
                "scales": np.array([1.0 if self.groups_[g].scales is None
                                    else self.groups_[g].scales[0] for g in groups]),
                "values": np.concatenate([values for values, _ in sorted_values]),
                "value_starts": block_starts([values.size for values, _ in sorted_values]),
                "order": np.concatenate([order for _, order in sorted_values]).astype(np.int64),
                "group_of": np.asarray(group_of, dtype=np.int64),
                "tables": np.concatenate([table.ravel() for table in tables]),
                "table_starts": block_starts([table.size for table in tables])[:-1],
                "widths": widths,
                "out_starts": self.starts_[np.asarray(kernels)].astype(np.int64),
            }

        return self._derived("one-column tables", make)

    def _sorted_landmarks(self, g):
        """The landmarks' values of one-column group g, sorted, and their order."""
        group = self.groups_[g]
        values = group_block(self.landmark_points_[group.landmarks], group)[:, 0]
        order = np.argsort(values, kind="stable")
        return values[order], order

    def _landmark_table(self, g):
        """Per kernel of exact group g, the features of its landmarks: ``K_LL P``, shape
        (n_landmarks, r_k)."""
        group = self.groups_[g]
        K_LL = self._landmark_bank_cached().transform(
            self.landmark_points_[group.landmarks], rows=group.landmarks,
            kernel_indices=group.kernels, prepared=True)
        return [np.asarray(K_LL[:, :, t], dtype=np.float64) @ group.projections[t]
                for t in range(group.kernels.size)]

    def _landmark_bank_cached(self):
        return self._derived("landmark bank", self._landmark_bank)

    def _derived(self, key, make):
        """``make()`` once per fitted map, kept under ``key`` (derived from the fitted state:
        never saved in model files)."""
        derived = self.__dict__.setdefault("_derived_state", {})
        if key not in derived:
            derived[key] = make()
        return derived[key]

    # ----------------------------------------------------------------- error
    def error_on(self, points: np.ndarray, features: np.ndarray) -> tuple[float, np.ndarray]:
        """The approximation's error on ``points`` (standardised) with their ``features``:
        ``(||sum_k (K_k - Phi_k Phi_k')||_F / ||sum_k K_k||_F, per-kernel relative errors)``
        over every entry of the sample, shape ``()`` and (n_kernels,)."""
        bank = self.bank
        sample = KernelBank.from_fitted(
            bank.specs, standardize=False, normalize=bank.normalize, dtype=np.float64,
            mean=np.zeros(bank.n_features_in_), scale=np.ones(bank.n_features_in_),
            trace_scales=bank.trace_scales_, X_fit=points)
        m = bank.n_kernels
        chunk = max(1, PREDICT_BLOCK_BYTES // (8 * points.shape[0] ** 2))

        def kernels():
            for first in range(0, m, chunk):
                indices = np.arange(first, min(m, first + chunk))
                exact = sample.transform(points, kernel_indices=indices)
                yield from ((k, exact[:, :, t]) for t, k in enumerate(indices))

        return error_of_blocks(kernels(), features, self.starts_, self.constant_parts_)


def floored_inverse_root(K_LL: np.ndarray) -> np.ndarray:
    """``U_+ S_+^(-1/2)`` of a landmark block ``K_LL``: its eigenvectors with eigenvalues
    above ``SPECTRUM_FLOOR`` times the largest, scaled; one zero column when none is
    positive. Shape (n_landmarks, r)."""
    values, vectors = np.linalg.eigh(0.5 * (K_LL + K_LL.T))
    top = float(values[-1]) if values.size else 0.0
    keep = values > SPECTRUM_FLOOR * max(top, 0.0)
    if top <= 0.0 or not keep.any():
        return np.zeros((K_LL.shape[0], 1))
    return vectors[:, keep] / np.sqrt(values[keep])


def without_constant(K_LL: np.ndarray, inverse_root: np.ndarray) -> tuple[np.ndarray, float]:
    """``(P, c)``: the projection ``K_LL^+ G^(1/2)`` of the landmarks' block without its
    constant part, ``G = K_LL - c 1 1'`` with ``c = 1 / (1' K_LL^+ 1)`` the largest constant
    that leaves G positive semi-definite (of rank one less), and c. ``(inverse_root, 0)``
    where the block does not hold the constant vector in its range (a floored spectrum) or
    has a single landmark (nothing would be left)."""
    ones = np.ones(K_LL.shape[0])
    pseudo_inverse = inverse_root @ inverse_root.T
    a = pseudo_inverse @ ones
    total = float(ones @ a)
    if K_LL.shape[0] < 2 or not total > 0.0 or not np.allclose(K_LL @ a, ones, atol=1e-8):
        return inverse_root, 0.0
    constant = 1.0 / total
    values, vectors = np.linalg.eigh(K_LL - constant)
    keep = values > SPECTRUM_FLOOR * max(float(values[-1]), 0.0)
    if not keep.any():
        return inverse_root, 0.0
    return pseudo_inverse @ (vectors[:, keep] * np.sqrt(values[keep])), constant


def warn_rank_deficient(name: str, root: np.ndarray, n_landmarks: int) -> None:
    """A UserWarning when the landmarks of kernel ``name`` keep less than
    ``RANK_WARNING_SHARE`` of their rank (duplicate landmarks; none for a zero kernel)."""
    if root.any() and root.shape[1] < RANK_WARNING_SHARE * n_landmarks:
        warnings.warn(
            f"the landmarks of {name} give a rank-deficient K_LL: kept rank {root.shape[1]} "
            f"of {n_landmarks} landmarks (eigenvalues below {SPECTRUM_FLOOR:g} of the largest "
            "dropped)", UserWarning, stacklevel=5)


def error_of_blocks(kernels: Any, features: np.ndarray, starts: np.ndarray,
                    constant_parts: Any = None) -> tuple[float, np.ndarray]:
    """``(||sum_k (K_k - Phi_k Phi_k' - c_k)||_F / ||sum_k K_k||_F, per-kernel relative
    errors)`` over a sample's entries, from the pairs ``(k, K_k)`` of ``kernels`` (every
    kernel once, each of shape (s, s)), the sample's ``features``, shape (s, R), and the
    kernels' dropped ``constant_parts`` c_k (default none); shapes ``()`` and (n_kernels,)."""
    constant_parts = np.zeros(starts.size - 1) if constant_parts is None else constant_parts
    errors = np.zeros(starts.size - 1)
    total_exact = np.zeros((features.shape[0], features.shape[0]))
    total_diff = np.zeros_like(total_exact)
    for k, K in kernels:
        block = features[:, starts[k]:starts[k + 1]].astype(np.float64)
        K = np.asarray(K, dtype=np.float64)
        diff = K - block @ block.T - constant_parts[k]
        errors[k] = np.linalg.norm(diff) / max(np.linalg.norm(K), 1e-300)
        total_exact += K
        total_diff += diff
    error = np.linalg.norm(total_diff) / max(np.linalg.norm(total_exact), 1e-300)
    return float(error), errors


def block_starts(sizes):
    """Offsets of consecutive pieces of ``sizes``, int64 of shape (len(sizes) + 1,)."""
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def block_squared_norms(features: np.ndarray, starts: Any) -> np.ndarray:
    """``||Phi_k[i]||^2`` of every row and kernel block, float64 of shape (n, n_kernels),
    summed in float64 (float32 features are never copied)."""
    starts = np.asarray(starts, dtype=np.int64)
    norms = np.empty((features.shape[0], starts.size - 1))
    squared_block_norms(features, starts, norms)
    return norms


class LowRankKernels(KernelOperator):
    """Base kernels ``K_k = Phi_k Phi_k' + c_k 1 1'`` held as their features (no ``n x n``
    array).

    The feature-space solvers read ``features`` alone: the constant parts ``c_k`` are those
    a map dropped for SVMs with an intercept (:class:`LowRankMap`, ``drop_constants``),
    which their duals do not see; the kernel values (``rows``, ``diagonal``, products and
    quadratic terms) add them back.

    Parameters
    ----------
    features : ndarray of shape (n_samples, R), float64 or float32
        The blocks side by side.
    starts : int64 array of shape (n_kernels + 1,)
        Kernel k's columns: ``starts[k]:starts[k + 1]``.
    constant_parts : ndarray of shape (n_kernels,), optional
        ``c_k`` (default 0).

    Attributes
    ----------
    squared_norms : ndarray of shape (n_samples, n_kernels)
        ``||Phi_k[i]||^2`` (``K_k[i, i] - c_k``).
    """

    capabilities = Capabilities(trusted=True, feature_blocks=True, feature_rows=True)

    def __init__(self, features: np.ndarray, starts: Any, constant_parts: Any = None) -> None:
        self.features = features
        self.starts = np.asarray(starts, dtype=np.int64)
        self.n_samples = features.shape[0]
        self.n_kernels = self.starts.size - 1
        self.constant_parts = (np.zeros(self.n_kernels) if constant_parts is None
                               else np.asarray(constant_parts, dtype=np.float64))
        self.value_dtype = features.dtype
        self.squared_norms = block_squared_norms(features, self.starts)

    def _block(self, k):
        return np.asarray(self.features[:, self.starts[k]:self.starts[k + 1]],
                          dtype=np.float64)

    def _kernels(self, kernels):
        return range(self.n_kernels) if kernels is None else np.asarray(kernels)

    def rows(self, indices: Any, kernels: Any = None) -> np.ndarray:
        indices = np.atleast_1d(np.asarray(indices, dtype=np.int64))
        return np.stack([self._block(k)[indices] @ self._block(k).T + self.constant_parts[k]
                         for k in self._kernels(kernels)])

    def diagonal(self) -> np.ndarray:
        return self.squared_norms.T + self.constant_parts[:, None]

    def products(self, v: np.ndarray, kernels: Any = None) -> np.ndarray:
        v = np.asarray(v, dtype=np.float64)
        total = v.sum()
        return np.stack([self._block(k) @ (self._block(k).T @ v) + self.constant_parts[k] * total
                         for k in self._kernels(kernels)])

    def kernel_gradient(self, d: np.ndarray, v: np.ndarray, kernels: Any = None) -> np.ndarray:
        v = np.asarray(v, dtype=np.float64)
        u = np.asarray(self.features.T @ v.astype(self.features.dtype), dtype=np.float64)
        total = v.sum()
        return np.array([u[self.starts[k]:self.starts[k + 1]] @
                         u[self.starts[k]:self.starts[k + 1]] + self.constant_parts[k] * total ** 2
                         for k in self._kernels(kernels)])

    def gradient_and_products(self, v: np.ndarray, kernels: Any = None) -> Any:
        products = self.products(v, kernels)
        return products @ np.asarray(v, dtype=np.float64), products

    def memory_bytes(self) -> int:
        return low_rank_bytes(self.n_samples, int(self.starts[-1]),
                              self.features.dtype.itemsize)


AUTO_COMPONENTS = 1000  # n_components="auto": landmarks of each approximated kernel at most
LOW_RANK_SAMPLES = 20_000  # kernel_approximation="auto": exact kernels below this many points
SMALLEST_AUTO = 50  # n_components="auto" halves to fit the budget, down to this


@dataclass
class LowRankFit:
    """What :func:`low_rank_kernels` made: the operator, the map and its measured error."""

    operator: LowRankKernels
    map: LowRankMap
    error: float
    kernel_errors: np.ndarray
    plan: str


def low_rank_kernels(bank: KernelBank, approximation: str, n_components: Any, *,
                     budget: int, dtype: Any = np.float64, random_state: Any = None,
                     map_type: Any = None, drop_constants: bool = False) -> LowRankFit:
    """The low-rank operator of a fitted bank's training points, planned before the
    ``(n, R)`` features are allocated.

    Parameters
    ----------
    bank : KernelBank or StringKernelBank
        Fitted on the training points.
    approximation : {"nystroem", "rff"}
    n_components : int or "auto"
        Landmarks (random features) of each approximated kernel; "auto": ``AUTO_COMPONENTS``
        (at most n), halved while the features do not fit in ``budget``.
    budget : int
        Bytes the fit may plan for.
    map_type : class, default :class:`LowRankMap`
        The map of the bank's kernels (:class:`~mklearn.kernels.string_low_rank.
        StringLowRankMap` for string kernels).
    drop_constants : bool
        Exact kernels lose their constant part (:class:`LowRankMap`): for SVMs with an
        intercept only.

    Returns
    -------
    LowRankFit

    Raises
    ------
    ValueError
        ``n_components`` above the number of samples; features that do not fit in the
        budget (naming the bytes and the fixes); "rff" for kernels that are not
        shift-invariant.
    """
    map_type = LowRankMap if map_type is None else map_type
    n = map_type.training_size(bank)
    itemsize = np.dtype(dtype).itemsize
    auto = isinstance(n_components, str)
    if not auto and n_components > n:
        raise ValueError(f"n_components={n_components} is above n_samples={n}: a kernel has "
                         f"at most n landmarks; choose n_components <= {n} (or 'auto')")
    components = min(AUTO_COMPONENTS, n) if auto else int(n_components)
    while True:
        mapping = map_type(bank, approximation, components, random_state, dtype,
                           drop_constants).fit()
        need = low_rank_bytes(n, mapping.rank, itemsize)
        if need <= budget:
            break
        if not auto or components // 2 < SMALLEST_AUTO:
            raise ValueError(
                f"the low-rank features of {bank.n_kernels} kernels on {n} samples (rank "
                f"{mapping.rank}, n_components={components}) need {byte_words(need)}, above the "
                f"memory budget of {byte_words(budget)}: lower n_components, use "
                "kernel_dtype='float32' (half the bytes), raise memory_budget, or fit on "
                "a Dask cluster")
        components //= 2
    features = mapping.transform(mapping.training_points(), prepared=True)
    error, kernel_errors = _sample_error(mapping, features, random_state)
    plan = plan_words(bank.n_kernels, n, mapping, approximation, components, need, error)
    return LowRankFit(LowRankKernels(features, mapping.starts_, mapping.constant_parts_),
                      mapping, error, kernel_errors, plan)


def plan_words(n_kernels, n_samples, mapping, approximation, components, need, error):
    """The plan of a low-rank fit in words, for verbose output."""
    exact = int(mapping.exact_.sum())
    return (f"{n_kernels} kernels on {n_samples} samples as low-rank features: rank "
            f"{mapping.rank} ({exact} of {n_kernels} kernels exact, {approximation} with "
            f"n_components={components} for the others), {byte_words(need)}; measured relative "
            f"error of the kernel sum {error:.2e}")


def error_sample(mapping, n_samples, random_state) -> np.ndarray:
    """The sorted rows of ``ERROR_SAMPLE`` training points that are no landmarks (Nystrom is
    exact on its landmarks: they would hide the error), drawn apart from the landmarks'
    draw."""
    from sklearn.utils import check_random_state

    others = np.setdiff1d(np.arange(n_samples), mapping.landmark_rows_)
    pool = others if others.size >= 2 else np.arange(n_samples)
    rng = check_random_state(random_state)
    rng = np.random.RandomState(rng.randint(2 ** 31) ^ 0x5EED)
    return np.sort(rng.choice(pool, min(pool.size, ERROR_SAMPLE), replace=False))


def _sample_error(mapping, features, random_state):
    """The map's error on the points of :func:`error_sample`."""
    sample = error_sample(mapping, features.shape[0], random_state)
    return mapping.error_on(mapping.training_points(sample), features[sample])


def map_state(mapping: LowRankMap) -> tuple[dict, dict]:
    """``(header, arrays)`` of a fitted map for a model file: JSON-ready group descriptions
    and the landmark points, landmark indices, projections and phases they read."""
    arrays = {"landmark_points": mapping.landmark_points_}
    groups = []
    for g, group in enumerate(mapping.groups_):
        groups.append({
            "kernels": group.kernels.tolist(), "route": group.route,
            "columns": None if group.columns is None else group.columns.tolist(),
            "scales": None if group.scales is None else group.scales.tolist(),
            "exact": bool(group.exact),
            "n_landmarks": None if group.landmarks is None else int(group.landmarks.size),
            "widths": [int(p.shape[1]) for p in group.projections],
        })
        if group.landmarks is not None:
            arrays[f"low_rank_{g}_landmarks"] = group.landmarks.astype(np.int64)
        for t, projection in enumerate(group.projections):
            if group.route != "polynomial":  # its exponents follow from its kernels
                arrays[f"low_rank_{g}_projection_{t}"] = projection
        if group.phases is not None:
            arrays[f"low_rank_{g}_phases"] = group.phases
    header = {"approximation": mapping.approximation, "n_components": mapping.n_components,
              "dtype": mapping.dtype.name, "groups": groups}
    if mapping.constant_parts_.any():
        header["constant_parts"] = mapping.constant_parts_.tolist()
    return header, arrays


def map_from_state(bank: KernelBank, header: dict, read) -> LowRankMap:
    """The map :func:`map_state` stored, on ``bank`` (fitted, its ``X_fit_`` the landmark
    points); ``read(name, shape, kinds)`` returns a checked array.

    Raises
    ------
    ValueError
        A description that does not fit the bank (kernels, columns, routes, shapes).
    """
    m, n_features = bank.n_kernels, bank.n_features_in_
    n_landmarks = bank.X_fit_.shape[0]
    _expect(header.get("approximation") in APPROXIMATIONS, "an unknown approximation")
    _expect(header.get("dtype") in ("float64", "float32"), "an unknown dtype")
    mapping = LowRankMap(bank, header["approximation"], int(header["n_components"]),
                         dtype=np.dtype(header["dtype"]))
    mapping.landmark_points_ = bank.X_fit_
    mapping.groups_, seen = [], np.zeros(m, dtype=bool)
    ranks = np.zeros(m, dtype=np.int64)
    for g, entry in enumerate(header["groups"]):
        group = _group_from(entry, m, n_features)
        _expect(not seen[group.kernels].any(), "a kernel in two groups")
        seen[group.kernels] = True
        width = n_features if group.columns is None else group.columns.size
        if group.route == "linear":
            ranks[group.kernels] = width
        elif group.route == "polynomial":
            group.projections = mapping._exponents(group)  # rebuilt from the kernels
            ranks[group.kernels] = [p.shape[1] for p in group.projections]
        else:
            _read_group(group, g, entry, read, n_landmarks, width)
            ranks[group.kernels] = [p.shape[1] for p in group.projections]
        mapping.groups_.append(group)
    _expect(seen.all(), "kernels without a map")
    mapping.ranks_ = ranks
    mapping.starts_ = block_starts(ranks)
    mapping.exact_ = np.zeros(m, dtype=bool)
    for group in mapping.groups_:
        mapping.exact_[group.kernels] = group.exact
    constant_parts = np.asarray(header.get("constant_parts", np.zeros(m)), dtype=np.float64)
    _expect(constant_parts.shape == (m,) and np.isfinite(constant_parts).all(),
            "constant parts that do not fit its kernels")
    mapping.constant_parts_ = constant_parts
    mapping.drop_constants = bool(constant_parts.any())
    return mapping


def _expect(condition, what):
    if not condition:
        raise ValueError(f"the low-rank map has {what}")


def _group_from(entry, m, n_features):
    kernels = np.asarray(entry["kernels"], dtype=np.int64)
    _expect(kernels.size >= 1 and kernels.min() >= 0 and kernels.max() < m,
            "kernel indices outside the model's kernels")
    columns = None if entry["columns"] is None else np.asarray(entry["columns"], np.int64)
    _expect(columns is None or (columns.size and columns.min() >= 0
                                and columns.max() < n_features), "columns outside X")
    scales = None if entry["scales"] is None else np.asarray(entry["scales"], np.float64)
    width = n_features if columns is None else columns.size
    _expect(scales is None or (scales.shape == (width,) and np.all(scales > 0)),
            "column scales that do not fit")
    _expect(entry["route"] in ("linear", "polynomial", "landmarks", "rff"), "an unknown route")
    return _Group(kernels, columns, scales, entry["route"], exact=bool(entry["exact"]))


def _read_group(group, g, entry, read, n_landmarks, width):
    widths = entry["widths"]
    _expect(len(widths) == group.kernels.size and all(int(w) >= 1 for w in widths),
            "projections that do not fit its kernels")
    if group.route == "landmarks":
        count = int(entry["n_landmarks"])
        group.landmarks = read(f"low_rank_{g}_landmarks", (count,), "i")
        _expect(count >= 1 and group.landmarks.min() >= 0
                and group.landmarks.max() < n_landmarks, "landmarks outside its points")
        rows = count
    else:
        group.phases = read(f"low_rank_{g}_phases", (int(widths[0]),), "f")
        rows = width
    group.projections = [read(f"low_rank_{g}_projection_{t}", (rows, int(w)), "f")
                         for t, w in enumerate(widths)]
