"""Numba loops of the product-of-RBF kernel: weighted squared distances and the gradient terms.

``K(d)_ij = exp(-sum_f w_f (x_if - x_jf)^2)`` with per-feature weights ``w`` (the kernel weights
spread over the features of their blocks), and ``h_f = v' (D_f o K) v`` for every feature f
(``D_f`` the squared distances on feature f), both computed from X one pair of points at a
time: no ``(n, n)`` matrix per feature is ever formed.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def rbf_product_gram(X, w):
    """``exp(-sum_f w_f (x_if - x_jf)^2)`` for all pairs of rows of X; shape (n, n), exactly
    symmetric with a unit diagonal."""
    n, n_features = X.shape
    K = np.empty((n, n))
    for i in range(n):
        K[i, i] = 1.0
        for j in range(i + 1, n):
            s = 0.0
            for f in range(n_features):
                diff = X[i, f] - X[j, f]
                s += w[f] * diff * diff
            value = math.exp(-s)
            K[i, j] = value
            K[j, i] = value
    return K


@njit(cache=True)
def rbf_product_cross(Z, X, w):
    """``exp(-sum_f w_f (z_if - x_jf)^2)`` between the rows of Z and of X; shape (n_z, n_x)."""
    n_z, n_features = Z.shape
    n_x = X.shape[0]
    K = np.empty((n_z, n_x))
    for i in range(n_z):
        for j in range(n_x):
            s = 0.0
            for f in range(n_features):
                diff = Z[i, f] - X[j, f]
                s += w[f] * diff * diff
            K[i, j] = math.exp(-s)
    return K


@njit(cache=True)
def distance_quadratic_terms(Xs, vs, Ks):
    """``h_f = sum_ij v_i v_j K_ij (x_if - x_jf)^2`` over the support points; shape (F,).

    ``Xs`` (s, F) are the support points on the requested features, ``vs`` (s,) their
    ``alpha_i y_i`` and ``Ks`` (s, s) the combined kernel between them. One pass over the
    pairs ``i < j`` (the diagonal contributes nothing: ``D_f(i, i) = 0``).
    """
    s, n_features = Xs.shape
    h = np.zeros(n_features)
    for i in range(s):
        for j in range(i + 1, s):
            weight = 2.0 * vs[i] * vs[j] * Ks[i, j]
            if weight == 0.0:
                continue
            for f in range(n_features):
                diff = Xs[i, f] - Xs[j, f]
                h[f] += weight * diff * diff
    return h
