"""Base classes for new kernel parameterisations and regularisers of GMKL.

SPG-GMKL and PGD (:func:`mklearn.solvers.spg_gmkl`) minimise ``T(d) = r(d) + W(d)`` for any
differentiable kernel ``K(d)`` and regulariser ``r`` (Jain, Vishwanathan and Varma, KDD 2012,
eq. 2; ALGORITHMS.md section 1). They read only a few methods of each; subclass these to
write one in a small class (the tutorial: ``docs/extending.md``).
"""

from __future__ import annotations

import numpy as np


class KernelParameterisation:
    """A kernel ``K(d)`` and its derivative, for :func:`~mklearn.solvers.spg_gmkl`.

    Subclasses set ``n_kernels`` (the length of d) and implement :meth:`kernel` and
    :meth:`derivative`. The solvers call :meth:`kernel_gradient`, which by default forms each
    derivative matrix in turn; override it when the terms ``v' (dK/dd_k) v`` have a cheaper
    form (as :class:`mklearn.products.ProductOfRBF` does).

    Attributes
    ----------
    n_kernels : int
        Number of weights.
    linear : bool
        True only if ``K(d) = sum_k d_k K_k`` (then the solver also certifies a duality gap
        through the regulariser's conjugate); False: it stops on the projected-gradient norm.
    """

    n_kernels: int
    linear = False

    def kernel(self, d: np.ndarray) -> np.ndarray:
        """``K(d)``, symmetric PSD of shape (n, n)."""
        raise NotImplementedError

    def derivative(self, d: np.ndarray, k: int) -> np.ndarray:
        """``dK/dd_k`` at d, shape (n, n)."""
        raise NotImplementedError

    def initial_weights(self) -> np.ndarray:
        """Where the solver starts unless given ``d0``: all ones."""
        return np.ones(self.n_kernels)

    def kernel_gradient(self, d, v, kernels=None) -> np.ndarray:
        """``v' (dK/dd_k) v`` for every k (or for ``kernels``); shape (m,) or (len(kernels),)."""
        ks = range(self.n_kernels) if kernels is None else kernels
        return np.array([float(v @ self.derivative(d, k) @ v) for k in ks])


class Regularizer:
    """A regulariser ``r(d)`` with its feasible set, for :func:`~mklearn.solvers.spg_gmkl`.

    Subclasses implement :meth:`value`, :meth:`gradient` and :meth:`project`; :meth:`conjugate`
    is optional (without it no duality gap is certified and the solver stops on the
    projected-gradient norm, as for products).
    """

    name = "custom"

    def value(self, d: np.ndarray) -> float:
        raise NotImplementedError

    def gradient(self, d: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def project(self, d: np.ndarray) -> np.ndarray:
        """Euclidean projection onto the feasible set of d."""
        raise NotImplementedError

    def conjugate(self, z: np.ndarray) -> float:
        """``r*(z) = sup_d z'd - r(d)`` over the feasible set; +inf: no lower bound known."""
        return np.inf

    def initial_weights(self, n_kernels: int) -> np.ndarray:
        """Where the solver starts unless given ``d0``: the projection of all ones."""
        return self.project(np.ones(n_kernels))

    def screen(self, d: np.ndarray, grad: np.ndarray) -> np.ndarray:
        """Kernels the solver may freeze at zero for a while: none."""
        return np.zeros(d.shape, dtype=bool)
