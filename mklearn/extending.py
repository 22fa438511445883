"""Base classes of the plug-in parts of GMKL: kernel parameterisations and regularisers.

Every built-in part inherits from these: :class:`~mklearn.formulation.combinations.SumOfKernels`
and :class:`~mklearn.formulation.products.ProductOfRBF` from :class:`KernelParameterisation`;
the regularisers of :mod:`mklearn.formulation.regularizers` from :class:`Regularizer`. A part
declares what it can do (its feasible set, and which of the optional methods it implements); the
solvers and ``solver="auto"`` read those declarations through :func:`implements` and never look
at a part's name. SPG-GMKL and PGD (:func:`mklearn.solvers.spg_gmkl`) minimise
``T(d) = r(d) + W(d)`` for any differentiable kernel ``K(d)`` and regulariser ``r`` (Jain,
Vishwanathan and Varma, KDD 2012, eq. 2; ALGORITHMS.md section 1); the tutorial is
``docs/extending.md``.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from mklearn._registry import Named, Registry
from mklearn.kernels.capabilities import Capabilities as Capabilities  # defined with the operator

#: The registered combinations of base kernels by name (the estimators' ``combination``).
COMBINATIONS = Registry("combination")

#: The registered regularisers by name (``class Mine(Regularizer, name="mine")``).
REGULARIZERS = Registry("regularizer")

SIMPLEX = "simplex"  # sum_k d_k = 1, d >= 0 (l1-MKL)
ORTHANT = "orthant"  # d >= 0
GROUP_SIMPLICES = "group simplices"  # a product of simplices, one per kernel group


def _optional(method):
    """Mark a base-class method as a placeholder: a part implements it only by overriding."""
    method.placeholder = True
    return method


def implements(part, method: str) -> bool:
    """Whether ``part`` provides ``method`` (defined, and not a base-class placeholder).

    Parameters
    ----------
    part : object or class
        A regulariser or kernel parameterisation, or its class.
    method : str
        e.g. "gradient", "project", "conjugate", "hessian", "smo_dual", "derivative_times".
    """
    attribute = getattr(part if isinstance(part, type) else type(part), method, None)
    if attribute is None:
        attribute = getattr(part, method, None)
    return callable(attribute) and not getattr(attribute, "placeholder", False)


def is_l1_simplex(regularizer) -> bool:
    """Whether ``regularizer`` is l1-MKL: d on the simplex and ``r = 0`` there (what the
    column-generation and multiplicative-weights solvers assume)."""
    if getattr(regularizer, "feasible_set", None) != SIMPLEX:
        return False
    if isinstance(regularizer, type) or not implements(regularizer, "value"):
        return True  # a class: its declaration is all there is to read
    return float(regularizer.value(np.full(3, 1.0 / 3.0))) == 0.0


class KernelParameterisation(Named):
    """A kernel ``K(d)`` and its derivative, for :func:`~mklearn.solvers.spg_gmkl`.

    Subclasses set ``n_kernels`` (the length of d) and implement :meth:`kernel` and
    :meth:`derivative`. The solvers call :meth:`kernel_gradient`, which by default forms each
    derivative matrix in turn; override it when the terms ``v' (dK/dd_k) v`` have a cheaper
    form (as :class:`mklearn.formulation.products.ProductOfRBF` does). Optional:
    ``derivative_times(d, v, rows)`` (the rows of ``(dK/dd_k) v``), which enables Gauss-Newton
    steps in SPG.

    A subclass defined with a name (``class SumOfKernels(KernelOperator,
    KernelParameterisation, name="sum")``) is registered in :data:`COMBINATIONS`, whose names
    the estimators' ``combination`` takes.

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
    capabilities = Capabilities(linear=False, support_products=False, trusted=True)
    registry = COMBINATIONS

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

    def gradient_and_products(self, v, kernels=None):
        """``(g, P)`` with the products ``(dK/dd_k) v`` when they come at no extra cost; None
        here (SPG-GMKL then reads :meth:`kernel_gradient` only)."""
        return None


class Regularizer(Named):
    """A regulariser ``r(d)`` with its feasible set.

    Subclasses set :attr:`feasible_set` and implement what their solvers need:

    - :meth:`value`, :meth:`gradient` and :meth:`project`: SPG-GMKL and PGD (solvers "spg",
      "pgd"); with :meth:`conjugate` they also certify a duality gap;
    - :meth:`hessian`: Newton steps in SPG on the orthant (products of kernels);
    - :meth:`smo_dual`: the closed-form smooth conjugate the SMO-MKL core evaluates
      (solver "smo": lp-norms and the KL divergence);
    - ``feasible_set = "simplex"`` with ``r = 0`` there: the l1-MKL solvers "silp", "mwu",
      "mirror" and the simplex Newton steps of SPG.

    A subclass defined with a name, ``class Mine(Regularizer, name="mine")``, is registered in
    :data:`REGULARIZERS`: the estimators then take ``regularizer="mine"`` (built by
    :meth:`from_options`) and model files keep its instances (:meth:`saved_params`,
    :meth:`from_saved`). Without a name it is used as an instance only.

    Attributes
    ----------
    feasible_set : {"simplex", "orthant", "group simplices"}
        Where d lives (``"orthant"``: ``d >= 0``).
    name : str
        The registered name; a label for messages and reports (never used to dispatch).
    """

    name = "custom"
    feasible_set = ORTHANT
    registry = REGULARIZERS

    @classmethod
    def from_options(cls, *, p: float, lam: float, groups=None, prior=None):
        """The regulariser the estimators' ``regularizer=<name>`` builds from their ``p``,
        ``lam``, validated ``groups`` and KL ``prior``; here one without parameters."""
        return cls()

    def saved_params(self) -> dict:
        """The constructor's parameters as plain JSON values (arrays as lists): what a model
        file keeps of this regulariser."""
        return {key: _plain(getattr(self, key)) for key in constructor_parameters(type(self))}

    @classmethod
    def from_saved(cls, params: dict, n_kernels: int):
        """The regulariser :meth:`saved_params` describes, after checking each value: None, a
        finite number > 0, or a list of ``n_kernels`` finite numbers > 0.

        Raises
        ------
        ValueError
            Naming the parameter (``'regularizer.<name>'``) that is none of these.
        """
        for key, value in params.items():
            if isinstance(value, list):
                _check_saved(len(value) == n_kernels and all(_is_positive(v) for v in value),
                             f"'regularizer.{key}' must hold {n_kernels} finite weights > 0")
                params[key] = np.array(value, dtype=np.float64)
            else:
                _check_saved(value is None or _is_positive(value),
                             f"'regularizer.{key}' must be a finite number > 0")
        return cls(**params)

    @_optional
    def value(self, d: np.ndarray) -> float:
        """``r(d)``."""
        raise NotImplementedError

    @_optional
    def gradient(self, d: np.ndarray) -> np.ndarray:
        """``dr/dd``, shape (m,)."""
        raise NotImplementedError

    @_optional
    def project(self, d: np.ndarray) -> np.ndarray:
        """Euclidean projection onto the feasible set of d."""
        raise NotImplementedError

    @_optional
    def hessian(self, d: np.ndarray) -> np.ndarray:
        """``d2r/dd2``, shape (m, m)."""
        raise NotImplementedError

    @_optional
    def smo_dual(self, n_kernels: int):
        """``(kind, lam, q, prior)`` of the conjugate for the SMO-MKL core."""
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

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({params})"


def constructor_parameters(cls) -> tuple[str, ...]:
    """Names of the parameters of ``cls.__init__`` (none for ``object.__init__``)."""
    if cls.__init__ is object.__init__:
        return ()
    return tuple(list(inspect.signature(cls.__init__).parameters)[1:])


def _plain(value):
    """numpy arrays as lists and numpy scalars as Python numbers (JSON values)."""
    if isinstance(value, np.ndarray):
        return value.astype(np.float64).ravel().tolist()
    return value.item() if isinstance(value, np.generic) else value


def _is_positive(value) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and value > 0


def _check_saved(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)
