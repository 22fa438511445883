"""Products of kernels: an RBF kernel with one learned width per feature (or feature block).

GMKL's product combination (Jain, Vishwanathan and Varma, KDD 2012, section 5.3-5.4, after
Varma and Babu, ICML 2009; ALGORITHMS.md section 1)::

    K(d) = prod_k exp(-d_k D_k),   D_k(i, j) = gamma * ||x_i[B_k] - x_j[B_k]||^2,

``B_k`` the columns of block k (one column per block by default: "one kernel per feature").
A weight ``d_k = 0`` removes the block from the kernel, so an l1 penalty on d selects features.
``dK/dd_k = -D_k o K(d)`` (elementwise), so the gradient term the solvers need is
``v' (dK/dd_k) v = -v' (D_k o K(d)) v`` with ``v = alpha o y``. Kernel values and these terms
are computed from X on the fly (:mod:`mklearn.formulation._product_ops`): memory is one
``(n, n)`` matrix
K(d), never one matrix per feature.

The paper does not state its feature scaling or base width for these experiments; we
standardise the features (zero mean, unit variance, as in the paper's sum-of-kernels recipe) and
use ``gamma = 1 / n_features`` ("scale"), so ``d = 1`` is scikit-learn's RBF SVC with
``gamma="scale"`` on standardised data, and the product starts there.
"""

from __future__ import annotations

from dataclasses import replace
from numbers import Real

import numpy as np
from sklearn.utils.validation import check_array

from mklearn.extending import Capabilities, KernelParameterisation
from mklearn.formulation._product_ops import (
    distance_quadratic_terms,
    rbf_product_cross,
    rbf_product_gram,
)
from mklearn.kernels.bank import standard_moments
from mklearn.kernels.numeric_input import numeric_input
from mklearn.kernels.row_sources import CachedRows, DenseRows


class FeatureProduct:
    """The base of a product kernel learned from X: which columns each width acts on.

    Parameters
    ----------
    blocks : None or list of lists of int
        Column indices of each block (one learned width per block). None: one block per
        feature. Blocks may leave columns out (they are not used) but must not be empty.
    gamma : "scale" or float > 0
        Base width: ``D_k`` is ``gamma`` times the squared distance on block k, so all weights
        equal to 1 give ``exp(-gamma ||x - z||^2)``. "scale": ``1 / n_features``.
    standardize : bool
        Scale each feature to zero mean and unit variance (fitted on the training data)
        before the distances.

    Raises
    ------
    ValueError
        From :meth:`fit`, for empty blocks, indices outside ``[0, n_features)`` or a
        non-positive gamma.
    """

    def __init__(self, blocks=None, gamma="scale", standardize=True):
        self.blocks = blocks
        self.gamma = gamma
        self.standardize = standardize

    def __repr__(self):
        return (
            f"FeatureProduct(blocks={self.blocks!r}, gamma={self.gamma!r}, "
            f"standardize={self.standardize!r})"
        )

    def fit(self, X):
        """The fitted input map for training data X of shape (n_samples, n_features)."""
        n_features = X.shape[1]
        blocks = [[f] for f in range(n_features)] if self.blocks is None else self.blocks
        features, codes = [], []
        for k, block in enumerate(blocks):
            cols = np.asarray(block, dtype=np.int64).ravel() if np.ndim(block) else np.array(
                [int(block)]
            )
            if cols.size == 0:
                raise ValueError(
                    f"feature block {k} is empty; give every block at least one column index"
                )
            if cols.min() < 0 or cols.max() >= n_features:
                raise ValueError(
                    f"feature block {k} has column indices outside [0, {n_features}); X has "
                    f"{n_features} features"
                )
            features.append(cols)
            codes.append(np.full(cols.size, k))
        if isinstance(self.gamma, str):
            if self.gamma != "scale":
                raise ValueError(f"gamma must be 'scale' or a float > 0, got {self.gamma!r}")
            gamma = 1.0 / n_features
        elif isinstance(self.gamma, Real) and self.gamma > 0 and np.isfinite(self.gamma):
            gamma = float(self.gamma)
        else:
            raise ValueError(f"gamma must be 'scale' or a float > 0, got {self.gamma!r}")
        if self.standardize:  # a constant feature gets scale 1: distances on it are 0 anyway
            mean, scale = standard_moments(X)
        else:
            mean, scale = np.zeros(n_features), np.ones(n_features)
        names = [
            f"x[{b[0]}]" if len(b) == 1 else "x[" + ",".join(str(int(c)) for c in b) + "]"
            for b in ([np.atleast_1d(b).tolist() for b in blocks])
        ]
        return FittedProduct(
            mean, scale, np.concatenate(features), np.concatenate(codes), gamma, names
        )


class FittedProduct:
    """A :class:`FeatureProduct` fitted on training data: standardisation and block layout.

    Attributes
    ----------
    mean, scale : ndarray of shape (n_features,)
    features, codes : ndarray of int
        Pairs (column, block) of the block membership.
    gamma : float
    names : list of str
        One name per block, e.g. ``x[3]``.
    """

    def __init__(self, mean, scale, features, codes, gamma, names):
        self.mean = mean
        self.scale = scale
        self.features = features
        self.codes = codes
        self.gamma = gamma
        self.names = names

    @property
    def n_kernels(self):
        return len(self.names)

    def transform(self, X):
        """Standardised copy of X, float64 C-contiguous."""
        return np.ascontiguousarray((X - self.mean) / self.scale, dtype=np.float64)

    def feature_weights(self, d):
        """Per-column weight ``w_f = gamma * sum_{k: f in B_k} d_k``; shape (n_features,)."""
        return self.gamma * np.bincount(
            self.features, weights=np.asarray(d, float)[self.codes], minlength=self.mean.size
        )

    def cross_kernel(self, d, Z, X):
        """``K(d)`` between standardised Z (n_z, F) and X (n_x, F); shape (n_z, n_x)."""
        w = self.feature_weights(d)
        used = np.flatnonzero(w > 0)
        return rbf_product_cross(
            np.ascontiguousarray(Z[:, used]), np.ascontiguousarray(X[:, used]), w[used]
        )


class _ProductRows:
    """Rows of ``K(d) = exp(-sum_f w_f (x_if - x_jf)^2)`` computed from the points: the source
    of the row path's :class:`~mklearn.kernels.row_sources.CachedRows`."""

    capabilities = Capabilities(fills_out=True)
    value_dtype = np.dtype(np.float64)
    rows_per_call = 1
    n_kernels = 1

    def __init__(self, X, w):
        self.X = X
        self.w = w
        self.n_samples = X.shape[0]

    def rows(self, indices, out=None):
        values = rbf_product_cross(np.ascontiguousarray(self.X[indices]), self.X, self.w)[None]
        if out is None:
            return values
        out[...] = values
        return out

    def diagonal(self):
        return np.ones((1, self.n_samples))

    def matvec(self, v):
        support = np.flatnonzero(v)
        cross = rbf_product_cross(np.ascontiguousarray(self.X[support]), self.X, self.w)
        return v[support] @ cross

    def block(self, indices, columns=None):
        """``K[indices][:, columns]`` (``columns`` default ``indices``)."""
        if columns is None:
            return rbf_product_gram(np.ascontiguousarray(self.X[indices]), self.w)
        return rbf_product_cross(np.ascontiguousarray(self.X[indices]),
                                 np.ascontiguousarray(self.X[columns]), self.w)


class ProductOfRBF(KernelParameterisation, name="product"):
    """``K(d) = exp(-sum_k d_k D_k)`` on standardised training points (GMKL's product).

    Parameters
    ----------
    X : ndarray of shape (n, n_features)
        Training points, already transformed by ``fitted``.
    fitted : FittedProduct
        Block layout and base width.
    cache_size : float or None
        None: ``kernel(d)`` is the dense ``(n, n)`` matrix (the last one is kept, so that the
        gradient at the point just solved does not recompute it). A number: the row path,
        ``kernel(d)`` a row source for the SMO core whose rows are computed from X into an
        LRU cache of ``cache_size`` MB, and the gradient's and Newton model's blocks are
        computed on the support only (``O(n m)`` memory besides the cache).
    """

    linear = False  # no duality gap: SPG stops on the projected-gradient norm

    def __init__(self, X, fitted, cache_size=None):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.fitted = fitted
        self.n_samples = self.X.shape[0]
        self.n_kernels = fitted.n_kernels
        self.cache_size = cache_size
        self._last = None  # (d, K(d)) as one tuple: threads of one-vs-rest read it safely
        # one-vs-rest threads may share it, but not on the row path: its row cache is
        # written on misses
        self.capabilities = replace(type(self).capabilities, thread_safe=cache_size is None)

    def initial_weights(self):
        """All ones: the RBF kernel ``exp(-gamma ||x - z||^2)``."""
        return np.ones(self.n_kernels)

    def _source(self, d):
        w = self.fitted.feature_weights(np.asarray(d, dtype=np.float64))
        used = np.flatnonzero(w > 0)
        return _ProductRows(np.ascontiguousarray(self.X[:, used]), w[used])

    def kernel(self, d):
        """``K(d)`` as a row source: dense (a
        :class:`~mklearn.kernels.row_sources.DenseRows`), or on the row path rows computed
        when read (:class:`~mklearn.kernels.row_sources.CachedRows`)."""
        d = np.asarray(d, dtype=np.float64)
        last = self._last
        if last is not None and np.array_equal(d, last[0]):
            return last[1]
        source = self._source(d)
        if self.cache_size is None:
            K = DenseRows(rbf_product_gram(source.X, source.w))
        else:
            K = CachedRows(source, self.cache_size)
        self._last = (d.copy(), K)
        return K

    def _block(self, d, rows, columns=None):
        """``K(d)[rows][:, columns]`` (``columns`` default ``rows``)."""
        K = self.kernel(d)
        return K.block(rows, columns) if self.cache_size is None else K.source.block(rows, columns)

    def kernel_gradient(self, d, v, kernels=None):
        """``v' (dK/dd_k) v = -v' (D_k o K(d)) v`` for every block k, or for ``kernels`` only.

        Returns an array of shape (m,), or (len(kernels),) when ``kernels`` is given.
        """
        v = np.asarray(v, dtype=np.float64)
        fitted = self.fitted
        m = self.n_kernels
        wanted = np.arange(m) if kernels is None else np.asarray(kernels, np.int64)
        pairs = np.flatnonzero(np.isin(fitted.codes, wanted))
        columns = np.unique(fitted.features[pairs])
        support = np.flatnonzero(v)
        h = np.zeros(fitted.mean.size)
        h[columns] = distance_quadratic_terms(
            np.ascontiguousarray(self.X[np.ix_(support, columns)]),
            v[support],
            np.ascontiguousarray(self._block(d, support)),
        )
        g = -fitted.gamma * np.bincount(
            fitted.codes[pairs], weights=h[fitted.features[pairs]], minlength=m
        )
        return g[wanted]

    def derivative_times(self, d, v, rows):
        """``((dK/dd_k) v)[rows] = -((D_k o K(d)) v)[rows]`` for every block k.

        The rows of a Newton model (:func:`mklearn.solvers.spg.spg_gmkl`). Per feature f,
        ``(D_f o K) v = x_f^2 o (K v) - 2 x_f o (K (x_f o v)) + K (x_f^2 o v)``: one matrix
        product over the support for all features, no ``(n, n)`` matrix per feature.

        Parameters
        ----------
        d : ndarray of shape (m,)
        v : ndarray of shape (n,)
            ``alpha o y`` of the SVM solved at d.
        rows : ndarray of int
            The points whose rows are wanted (the free support vectors).

        Returns
        -------
        ndarray of shape (m, len(rows))
        """
        fitted = self.fitted
        blocks = np.zeros((self.n_kernels, fitted.mean.size))  # gamma per (block, feature)
        np.add.at(blocks, (fitted.codes, fitted.features), fitted.gamma)
        used = np.flatnonzero(blocks.any(axis=0))
        support = np.flatnonzero(v)
        Xs, vs = self.X[np.ix_(support, used)], v[support]
        Xr = self.X[np.ix_(rows, used)]
        basis = np.hstack([vs[:, None], Xs * vs[:, None], Xs * Xs * vs[:, None]])
        KB = self._block(d, rows, support) @ basis
        f = used.size
        per_feature = Xr * Xr * KB[:, :1] - 2.0 * Xr * KB[:, 1:1 + f] + KB[:, 1 + f:]
        return -(blocks[:, used] @ per_feature.T)


class ProductOfDistances(KernelParameterisation):
    """``K(d) = exp(-sum_k d_k D_k)`` over a precomputed stack of squared distances.

    Parameters
    ----------
    distances : ndarray of shape (n, n, m)
        ``D_k(i, j) >= 0``, symmetric with a zero diagonal (checked by
        :func:`check_distance_stack`). Memory: the stack itself, m full matrices.
    """

    name = "product"
    linear = False

    def __init__(self, distances):
        self.n_samples = distances.shape[0]
        self.n_kernels = distances.shape[2]
        self._flat = np.ascontiguousarray(distances.reshape(-1, self.n_kernels).T)  # (m, n*n)

    def initial_weights(self):
        return np.ones(self.n_kernels)

    def kernel(self, d):
        """``K(d)`` as a dense row source (:class:`~mklearn.kernels.row_sources.DenseRows`)."""
        return DenseRows(self._matrix(d))

    def _matrix(self, d):
        n = self.n_samples
        return np.exp(-(np.asarray(d, np.float64) @ self._flat)).reshape(n, n)

    def kernel_gradient(self, d, v, kernels=None):
        K = self._matrix(d)
        weighted = (np.outer(v, v) * K).ravel()
        rows = self._flat if kernels is None else self._flat[np.asarray(kernels, np.int64)]
        return -(rows @ weighted)


def check_distance_stack(X, n_train=None):
    """Validate a stack of squared distances for a product combination.

    Parameters
    ----------
    X : array-like of shape (n, n, m) for training, (n_test, n_train, m) with ``n_train``
    n_train : int, optional
        Number of training points (test stacks only).

    Returns
    -------
    ndarray of float64 of the same shape (a 2-D array becomes one distance)

    Raises
    ------
    ValueError
        If the stack is not 3-D, has NaN/inf or negative entries, or (training) is not square,
        not symmetric or has a non-zero diagonal: then it holds kernel values, not distances.
    """
    with numeric_input("the precomputed distance stack"):
        stack = check_array(X, allow_nd=True, ensure_2d=False, dtype=np.float64,
                            input_name="the precomputed distance stack")
    if stack.ndim == 2:
        stack = stack[:, :, None]
    if stack.ndim != 3:
        raise ValueError(
            "kernels='precomputed_distances' takes squared distances of shape "
            f"(n_samples, n_samples, n_kernels), got an array with {stack.ndim} dimensions"
        )
    if stack.shape[2] == 0:
        raise ValueError(
            f"the precomputed distance stack has no distances (shape {stack.shape}); pass at "
            "least one, D[:, :, k] for k = 0, 1, ..."
        )
    what = _NOT_DISTANCES
    if np.any(stack < 0):
        raise ValueError(f"the precomputed distance stack has negative entries; {what}")
    if n_train is not None:
        if stack.shape[1] != n_train:
            raise ValueError(
                f"the test distance stack has shape {stack.shape}; pass (n_test, {n_train}, "
                "n_kernels): distances from each test point to every training point"
            )
        return stack
    n, n2, _ = stack.shape
    if n != n2:
        raise ValueError(
            f"a precomputed training distance stack must be square in its first two axes, got "
            f"shape {stack.shape}"
        )
    if np.any(np.einsum("iik->ik", stack) != 0):
        raise ValueError(f"the precomputed distance stack has a non-zero diagonal; {what}")
    if not np.allclose(stack, stack.transpose(1, 0, 2), rtol=1e-10, atol=1e-12):
        raise ValueError(f"the precomputed distance stack is not symmetric; {what}")
    return stack


_NOT_DISTANCES = (
    "combination='product' needs squared distances D_k(i, j) >= 0 (symmetric, zero "
    "diagonal), not kernel values: pass X with kernels='features', or the squared distances "
    "with kernels='precomputed_distances'"
)
