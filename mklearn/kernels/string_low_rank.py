"""Low-rank string kernels: Nystrom features of the kernels of a fitted
:class:`~mklearn.kernels.string_bank.StringKernelBank`.

Each kernel takes the cheaper of two routes:

- **exact, counts**: a spectrum kernel of order d whose training sequences hold at most
  ``n_components`` distinct d-mers is the inner product of their counts (Leslie, Eskin and
  Noble, PSB 2002), ``Phi_k = sqrt(s_k) N`` with N the counts of the training vocabulary;
- **Nystrom** (Williams and Seeger, NIPS 2001) for the others: every string kernel reads the
  same sequences, so one uniform draw of ``n_components`` training sequences is the landmarks
  L of them all, one pass of the bank over ``(X, L)`` gives every such kernel's
  ``K_k(X, L)``, and ``Phi_k = K_k(X, L) K_k,LL^(-1/2)``, with the pseudo-inverse root floored
  as for numeric kernels (:func:`~mklearn.kernels.low_rank.floored_inverse_root`); exact on
  the training kernels when every training sequence is a landmark.

The solvers read them through :class:`~mklearn.kernels.low_rank.LowRankKernels`, like the
features of numeric kernels; a test sequence costs ``|L|`` kernel evaluations per kernel and
``O(R)`` once they are computed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mklearn._sizes import PREDICT_BLOCK_BYTES
from mklearn.kernels.low_rank import (
    FeatureMap,
    block_starts,
    error_of_blocks,
    floored_inverse_root,
    warn_rank_deficient,
)
from mklearn.kernels.string_bank import StringKernelBank
from mklearn.kernels.strings import Sequences

__all__ = ["StringLowRankMap"]


class StringLowRankMap(FeatureMap):
    """Nystrom feature maps ``Phi_k`` of the string kernels of a fitted bank (see the module
    docstring).

    Parameters
    ----------
    bank : StringKernelBank
        Fitted on the training sequences.
    approximation : {"nystroem"}
        String kernels are not shift-invariant: random Fourier features do not apply.
    n_components : int
        Landmark sequences, shared by the kernels on landmarks; a spectrum kernel with at
        most this many distinct d-mers in training is counted instead.
    random_state : int, RandomState or None
        Seeds the draw of the landmark sequences.
    dtype : numpy.dtype
        Of the features (float32 halves their memory).

    Attributes
    ----------
    ranks_ : ndarray of shape (n_kernels,)
        ``r_k``, the columns of each kernel's block: the distinct d-mers of a counted kernel;
        at most ``n_components`` on landmarks (fewer where ``K_LL``'s spectrum falls below
        ``SPECTRUM_FLOOR`` of its top).
    exact_ : ndarray of shape (n_kernels,), bool
        True for a counted kernel, and for every kernel when every training sequence is a
        landmark.
    starts_ : int64 ndarray of shape (n_kernels + 1,)
        Kernel k's columns of the features are ``starts_[k]:starts_[k + 1]``.
    landmark_points_ : Sequences
        The coded landmark sequences.
    landmark_rows_ : int64 ndarray of shape (n_landmarks,)
        Their rows among the training sequences (none when every kernel is counted).
    landmark_kernels_ : int64 ndarray
        The kernels on landmarks (the others are counted).
    roots_ : list of ndarray of shape (n_landmarks, r_k)
        ``K_k,LL^(-1/2)`` of each kernel on landmarks, in the order of ``landmark_kernels_``.

    Raises
    ------
    ValueError
        ``approximation`` other than "nystroem" (naming the fix).
    """

    def __init__(self, bank: StringKernelBank, approximation: str = "nystroem",
                 n_components: int = 1000, random_state: Any = None,
                 dtype: Any = np.float64, drop_constants: bool = False) -> None:
        if approximation != "nystroem":
            raise ValueError(
                f"kernel_approximation={approximation!r} needs shift-invariant kernels on "
                "numeric X; string kernels take kernel_approximation='nystroem' (landmark "
                "sequences) or 'exact'")
        self.bank = bank
        self.approximation = approximation
        self.n_components = int(n_components)
        self.random_state = random_state
        self.dtype = np.dtype(dtype)
        self.drop_constants = bool(drop_constants)  # string maps keep every column

    @staticmethod
    def training_size(bank: StringKernelBank) -> int:
        """The training sequences of a fitted bank."""
        return bank.X_fit_.n_samples

    def training_points(self, rows: Any = None) -> Sequences:
        """The bank's coded training sequences (``rows`` of them)."""
        return self.bank.X_fit_ if rows is None else self.bank.X_fit_.take(rows)

    def fit(self) -> StringLowRankMap:
        """Choose each kernel's route, draw the landmark sequences and factor the
        ``K_LL`` of the kernels on landmarks."""
        from sklearn.utils import check_random_state

        bank, n = self.bank, self.training_size(self.bank)
        ranks = np.array([bank.explicit_rank(k) or 0 for k in range(bank.n_kernels)])
        counted = (ranks > 0) & (ranks <= self.n_components)
        self.landmark_kernels_ = np.flatnonzero(~counted)
        rows = np.zeros(0, dtype=np.int64)
        if self.landmark_kernels_.size:
            rng = check_random_state(self.random_state)
            rows = np.sort(rng.choice(n, size=min(self.n_components, n), replace=False))
        self.landmark_rows_ = rows.astype(np.int64)
        self.landmark_points_ = self.training_points(rows)
        K_LL = bank.kernel_values(self.landmark_points_, self.landmark_points_,
                                  symmetric=True, kernels=self.landmark_kernels_)
        self.roots_ = [floored_inverse_root(block) for block in K_LL]
        for k, root in zip(self.landmark_kernels_, self.roots_, strict=True):
            warn_rank_deficient(bank.specs[k].name, root, rows.size)
            ranks[k] = root.shape[1]
        self.ranks_ = ranks.astype(np.int64)
        self.starts_ = block_starts(self.ranks_)
        self.exact_ = counted | (rows.size == n)
        self.constant_parts_ = np.zeros(bank.n_kernels)
        return self

    def transform(self, X: Any, prepared: bool = False) -> np.ndarray:
        """The features of the sequences X, shape (n, R), in blocks of sequences.

        Parameters
        ----------
        X : array-like of str of shape (n,), or Sequences
            Sequences as the bank takes them (``prepared``: already coded by it).

        Raises
        ------
        ValueError
            Sequences the bank refuses (:meth:`StringKernelBank.prepare`).
        """
        seqs = X if prepared else self.bank.prepare(X)
        out = np.empty((seqs.n_samples, self.rank), dtype=self.dtype)
        width = max(self.landmark_points_.n_samples * self.landmark_kernels_.size, self.rank)
        block = max(1, PREDICT_BLOCK_BYTES // (8 * max(width, 1)))
        counted = np.setdiff1d(np.arange(self.bank.n_kernels), self.landmark_kernels_)
        for start in range(0, seqs.n_samples, block):
            rows = slice(start, min(start + block, seqs.n_samples))
            chunk = seqs.take(np.arange(rows.start, rows.stop))
            cross = self.bank.kernel_values(chunk, self.landmark_points_,
                                            kernels=self.landmark_kernels_)
            for t, k in enumerate(self.landmark_kernels_):
                out[rows, self.starts_[k]:self.starts_[k + 1]] = cross[t] @ self.roots_[t]
            for k in counted:
                out[rows, self.starts_[k]:self.starts_[k + 1]] = self.bank.explicit_features(
                    chunk, k)
        return out

    def error_on(self, points: Sequences, features: np.ndarray) -> tuple[float, np.ndarray]:
        """The approximation's error on the sequences ``points`` with their ``features``
        (:func:`~mklearn.kernels.low_rank.error_of_blocks`)."""
        exact = self.bank.kernel_values(points, points, symmetric=True)
        return error_of_blocks(enumerate(exact), features, self.starts_)

