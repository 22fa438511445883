"""Sums over the n^2 entries of the base kernels, streamed in row blocks (no stack).

The alignment-based weight learners (:mod:`mklearn.solvers.seeds`) need, for m kernels on n
points and a target vector y,

- the row sums ``u_k = K_k 1`` (shape (m, n)) and totals ``t_k = 1'u_k``;
- ``y'K_k y`` (shape (m,));
- the Frobenius products ``<K_k, K_l>_F`` (shape (m, m), ALIGNF) or only the squared norms
  ``||K_k||_F^2`` (shape (m,)).

Each block of b rows of every kernel, ``B`` of shape (m, b, n) from ``provider.rows``, adds
its part: ``B.sum(axis=2)``, ``(B y) y[block]`` and the Frobenius products of its columns up
to the block's diagonal square (the kernels are symmetric: one triangle of each kernel, by
BLAS ``syrk``) or the squared norms of its rows. Blocks hold at most ``block_mb`` MB (at
least one row), so the memory is ``O(m n)`` plus one block whatever n.

The centred quantities (Cortes, Mohri and Rostamizadeh, "Algorithms for Learning Kernels
Based on Centered Alignment", JMLR 13, 2012, section 2.1: ``K^c = H K H``,
``H = I - 11'/n``) follow from these uncentred sums:

- ``<K_k^c, K_l^c>_F = <K_k, K_l>_F - (2/n) u_k'u_l + t_k t_l / n^2``;
- ``<K_k^c, y y'>_F = ytilde' K_k ytilde`` with ``ytilde = y - mean(y)``, i.e.
  ``y'K_k y - 2 mean(y) u_k'y + mean(y)^2 t_k``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg.blas import dsyrk

from mklearn._sizes import MB


@dataclass
class KernelSums:
    """Uncentred sums of m kernels on n points (see the module notes).

    Attributes
    ----------
    row_sums : ndarray of shape (m, n)
        ``u_k = K_k 1``.
    yky : ndarray of shape (m,)
        ``y'K_k y``.
    frobenius : ndarray of shape (m, m) or None
        ``<K_k, K_l>_F`` when asked for.
    squares : ndarray of shape (m,)
        ``||K_k||_F^2``.
    y : ndarray of shape (n,)
        The targets the sums were taken with.
    """

    row_sums: np.ndarray
    yky: np.ndarray
    frobenius: np.ndarray | None
    squares: np.ndarray
    y: np.ndarray

    @property
    def totals(self):
        """``t_k = 1'K_k 1``, shape (m,)."""
        return self.row_sums.sum(axis=1)

    def centred_products(self):
        """``<K_k^c, K_l^c>_F``, shape (m, m) (needs ``frobenius``)."""
        n, u, t = self.y.size, self.row_sums, self.totals
        M = self.frobenius - (2.0 / n) * (u @ u.T) + np.outer(t, t) / n**2
        return 0.5 * (M + M.T)

    def centred_squares(self):
        """``||K_k^c||_F^2``, shape (m,)."""
        n, u, t = self.y.size, self.row_sums, self.totals
        return self.squares - (2.0 / n) * np.einsum("ij,ij->i", u, u) + t**2 / n**2

    def centred_targets(self):
        """``<K_k^c, y y'>_F = ytilde' K_k ytilde``, shape (m,)."""
        mean = float(self.y.mean())
        return self.yky - 2.0 * mean * (self.row_sums @ self.y) + mean**2 * self.totals


def kernel_sums(operator, y, *, frobenius=False, block_mb=64.0) -> KernelSums:
    """Stream the rows of every kernel of ``operator`` in blocks and sum (module notes).

    Parameters
    ----------
    operator : KernelOperator
        ``rows(indices)`` of shape (m, len(indices), n).
    y : ndarray of shape (n,)
        Targets (labels in {-1, +1} or real values).
    frobenius : bool
        Also the (m, m) Frobenius products (``O(m^2 n^2)`` flops), else their diagonal only
        (``O(m n^2)``).
    block_mb : float
        MB of rows held at once (at least one row of every kernel, ``8 m n`` bytes).

    Returns
    -------
    KernelSums
    """
    n, m = operator.n_samples, operator.n_kernels
    y = np.ascontiguousarray(y, dtype=np.float64)
    step = max(1, int(block_mb * MB // (8 * m * n)))
    row_sums, yky = np.empty((m, n)), np.zeros(m)
    gram = np.zeros((m, m), order="F") if frobenius else None
    squares = np.zeros(m)
    for lo in range(0, n, step):
        block = np.arange(lo, min(n, lo + step))
        rows = np.ascontiguousarray(operator.rows(block), dtype=np.float64)  # (m, b, n)
        row_sums[:, block] = rows.sum(axis=2)
        yky += (rows @ y) @ y[block]
        if frobenius:
            gram = _add_lower_products(gram, rows, lo, block.size)
        else:
            flat = rows.reshape(m, -1)
            squares += np.einsum("ij,ij->i", flat, flat)
    if frobenius:
        gram = np.tril(gram) + np.tril(gram, -1).T
        squares = np.diag(gram).copy()
    return KernelSums(row_sums, yky, gram, squares, y)


def _add_lower_products(gram, rows, lo, size):
    """``gram`` (Fortran order, updated in place) plus this block's part of ``<K_k, K_l>_F`` in
    its lower triangle: the kernels are symmetric, so the entries left of the block's diagonal
    square count twice and those right of it not at all, and one symmetric rank-k update
    (BLAS ``syrk``) fills one triangle: a quarter of the flops of ``flat @ flat.T`` over the
    whole rows."""
    m = rows.shape[0]
    square = np.ascontiguousarray(rows[:, :, lo:lo + size]).reshape(m, -1)
    gram = dsyrk(1.0, square.T, beta=1.0, c=gram, trans=1, lower=1, overwrite_c=1)
    if lo:
        left = np.ascontiguousarray(rows[:, :, :lo]).reshape(m, -1)
        gram = dsyrk(2.0, left.T, beta=1.0, c=gram, trans=1, lower=1, overwrite_c=1)
    return gram


def feature_kernel_sums(operator, y, *, frobenius=False) -> KernelSums:
    """The sums of :func:`kernel_sums` on low-rank kernels ``K_k = Phi_k Phi_k' + c_k 1 1'``
    (capability ``feature_blocks``; ``c_k`` the operator's ``constant_parts``) from the features
    alone: ``K_k 1 = Phi_k (Phi_k' 1) + c_k n``, ``y'K_k y = ||Phi_k' y||^2 + c_k (1'y)^2``
    and ``<K_k, K_l>_F = ||Phi_k' Phi_l||_F^2 + c_l ||Phi_k' 1||^2 + c_k ||Phi_l' 1||^2 +
    c_k c_l n^2`` (one ``R x R`` Gram matrix, ``O(n R^2)`` flops, for ``frobenius``; the
    diagonal blocks only otherwise), never an ``n x n`` array."""
    features, starts, c = operator.features, operator.starts, operator.constant_parts
    n, m = features.shape[0], starts.size - 1
    y = np.ascontiguousarray(y, dtype=np.float64)
    blocks = [slice(starts[k], starts[k + 1]) for k in range(m)]
    column_sums = np.asarray(features.sum(axis=0), dtype=np.float64)
    row_sums = np.stack([np.asarray(features[:, b] @ column_sums[b], dtype=np.float64)
                         for b in blocks]) + c[:, None] * n
    projected = np.asarray(features.T @ y.astype(features.dtype), dtype=np.float64)
    yky = np.array([projected[b] @ projected[b] for b in blocks]) + c * y.sum() ** 2
    sum_norms = np.array([column_sums[b] @ column_sums[b] for b in blocks])  # ||Phi_k' 1||^2
    if frobenius:
        gram = np.asarray(features.T @ features, dtype=np.float64)
        products = np.array([[np.sum(gram[a, b] ** 2) for b in blocks] for a in blocks])
        products += (np.outer(sum_norms, c) + np.outer(c, sum_norms)
                     + np.outer(c, c) * float(n) ** 2)
        return KernelSums(row_sums, yky, products, np.diag(products).copy(), y)
    squares = np.array([np.sum(np.asarray(features[:, b].T @ features[:, b],
                                          dtype=np.float64) ** 2) for b in blocks])
    squares += 2.0 * c * sum_norms + c ** 2 * float(n) ** 2
    return KernelSums(row_sums, yky, None, squares, y)

