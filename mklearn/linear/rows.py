"""The rows of the features ``Phi`` as the feature-space core reads them.

A solve in feature space touches ``Phi`` (shape (n, R), the blocks of every kernel side by
side) in five ways only: the blocks ``u = Phi' v``, the outputs ``f = K(d) v`` from u, some
rows (the exact solve on a support pattern), epochs of dual coordinate descent, and which
rows are equal (the exact solve merges duplicate points).
:class:`FeatureRows` does them on features held in memory; an operator whose rows live
elsewhere (partitions on Dask workers: :mod:`mklearn.distributed.feature_rows`) provides a
subclass through its ``feature_rows`` attribute, and every feature-space solver runs on it
unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mklearn.kernels.low_rank import representative_rows
from mklearn.linear.blocks import block_outputs, block_products
from mklearn.linear.dcd import coordinate_descent

__all__ = ["FeatureRows", "feature_rows"]


class FeatureRows:
    """The features of every point, in memory.

    Parameters
    ----------
    features : ndarray of shape (n, R), float64 or float32
        ``Phi``; kernel k's block is ``features[:, starts[k]:starts[k + 1]]``.
    starts : int64 ndarray of shape (m + 1,)
    squared_norms : ndarray of shape (n, m)
        ``||Phi_k[i]||^2``.
    constant_parts : ndarray of shape (m,), optional
        The constant parts the features left out (``K_k = Phi_k Phi_k' + c_k 1 1'``;
        default none): the descent runs on K_k.
    """

    smooth_descent = True  # descend takes the smooth conjugates (KIND_LP, KIND_KL)

    def __init__(self, features: np.ndarray, starts: Any, squared_norms: np.ndarray,
                 constant_parts: Any = None) -> None:
        self.features = features
        self.starts = np.asarray(starts, dtype=np.int64)
        self.squared_norms = squared_norms
        self.constant_parts = (np.zeros(self.starts.size - 1) if constant_parts is None
                               else np.asarray(constant_parts, dtype=np.float64))
        self.n_samples = features.shape[0]

    def products(self, v: np.ndarray) -> np.ndarray:
        """``Phi' v``, shape (R,)."""
        return block_products(self.features, v)

    def outputs(self, u: np.ndarray, d: np.ndarray, kernels: np.ndarray) -> np.ndarray:
        """``f_i = sum_k d_k Phi_k[i] . u_k`` over ``kernels``, shape (n,)."""
        return block_outputs(self.features, self.starts, u, d, kernels)

    def representative_rows(self) -> np.ndarray:
        """The first row equal to each row (itself when unique), int64 of shape (n,)."""
        return representative_rows(self.features)

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The rows ``rows`` of ``Phi`` in float64, shape (len(rows), R)."""
        return np.asarray(self.features[rows], dtype=np.float64)

    def descend(self, index, signs, linear, upper, alpha, u, d, kernels, kind, lam, q, prior,
                eps, max_epochs, shrinking, seed) -> tuple[int, int]:
        """Dual coordinate descent at a fixed bias until the spread of the projected
        gradient is at most ``eps`` (:func:`mklearn.linear.dcd.coordinate_descent`, same
        arguments; ``alpha``, ``u`` and, for the smooth conjugates, ``d`` updated in place).

        Returns
        -------
        (epochs, steps) : (int, int)
        """
        epochs, steps, _ = coordinate_descent(
            self.features, index, self.starts, signs, linear, upper, alpha, u, d,
            self.squared_norms, kernels, kind, lam, q, prior, eps, max_epochs, shrinking, seed,
            self.constant_parts)
        return epochs, steps


def feature_rows(operator) -> FeatureRows:
    """The rows of a low-rank operator (capability ``feature_blocks`` or
    ``feature_rows``): its own ``feature_rows`` where it keeps them elsewhere, else its
    features in memory."""
    own = operator.feature_rows
    if own is not None:
        return own
    return FeatureRows(operator.features, operator.starts, operator.squared_norms,
                       operator.constant_parts)
