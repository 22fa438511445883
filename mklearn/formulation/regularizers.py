"""Regularizers on the kernel weights d: value, gradient, projection and convex conjugate.

A regularizer ``r`` enters GMKL's objective ``T(d) = r(d) + W(d)`` (Jain, Vishwanathan and Varma,
KDD 2012, eq. 2). Its conjugate gives the MKL dual lower bound
``D(alpha) = 1'alpha - r*(g(alpha) / 2)`` with ``g_k = alpha' Y K_k Y alpha``
(ALGORITHMS.md, section 1), which is what makes the duality gap computable.
"""

from __future__ import annotations

import numpy as np

from mklearn.extending import GROUP_SIMPLICES, ORTHANT, REGULARIZERS, SIMPLEX, Regularizer
from mklearn.groups import KernelGroups


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection onto the unit simplex ``{d >= 0, sum d = 1}`` (sort-based, O(m log m)).

    Duchi, Shalev-Shwartz, Singer and Chandra, ICML 2008, Figure 1.
    """
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - 1.0
    ranks = np.arange(1, v.size + 1)
    rho = np.flatnonzero(u - cumulative / ranks > 0)[-1]
    return np.maximum(v - cumulative[rho] / (rho + 1), 0.0)


SCREEN_RATIO = 0.5


class L1Simplex(Regularizer, name="l1"):
    """l1-MKL: the kernel weights live on the simplex ``sum_k d_k = 1, d >= 0``, ``r = 0`` there.

    The standard l1-MKL of SimpleMKL, SILP and MWUMKL. Conjugate of the simplex indicator:
    ``r*(z) = max_k z_k``, so the dual bound is ``1'alpha - max_k g_k / 2``.
    """

    feasible_set = SIMPLEX

    def initial_weights(self, n_kernels: int) -> np.ndarray:
        return np.full(n_kernels, 1.0 / n_kernels)

    def value(self, d: np.ndarray) -> float:
        return 0.0

    def gradient(self, d: np.ndarray) -> np.ndarray:
        return np.zeros_like(d)

    def project(self, d: np.ndarray) -> np.ndarray:
        return project_simplex(d)

    def conjugate(self, z: np.ndarray) -> float:
        return float(np.max(z))

    def screen(self, d: np.ndarray, grad: np.ndarray) -> np.ndarray:
        """Kernels safe to freeze at zero for a while: zero weight and a quadratic term
        ``g_k = -2 grad_k`` below half the largest (at the optimum the kernels in use share
        the largest ``g_k``)."""
        known = ~np.isnan(grad)  # a partial gradient screens only the kernels it covers
        if not known.any():
            return np.zeros(d.shape, dtype=bool)
        best = float(np.min(grad[known]))
        if best >= 0.0:
            return np.zeros(d.shape, dtype=bool)
        return (d == 0.0) & known & (grad > SCREEN_RATIO * best)


class LpNorm(Regularizer, name="lp"):
    """``r(d) = lam/2 ||d||_p^2`` on ``d >= 0``, p > 1 (the SMO-MKL regulariser).

    Vishwanathan, Sun, Theera-Ampornpunt and Varma, NIPS 2010, eq. 2. Conjugate on ``d >= 0``:
    ``r*(z) = ||z_+||_q^2 / (2 lam)`` with ``1/p + 1/q = 1``.

    Parameters
    ----------
    p : float > 1
    lam : float > 0
    """

    feasible_set = ORTHANT

    def __init__(self, p: float, lam: float):
        if not float(p) > 1.0:
            raise ValueError(f"the lp norm needs p > 1, got {p}; for p = 1 use the l1 simplex")
        if not float(lam) > 0.0:
            raise ValueError(f"lam must be > 0, got {lam}")
        self.p = float(p)
        self.lam = float(lam)
        self.q = self.p / (self.p - 1.0)

    @classmethod
    def from_options(cls, *, p, lam, groups=None, prior=None):
        return cls(p, lam)

    def smo_dual(self, n_kernels: int):
        """The conjugate ``||z_+||_q^2 / (2 lam)`` in the SMO-MKL core's terms."""
        return "lp", self.lam, self.q, None

    def initial_weights(self, n_kernels: int) -> np.ndarray:
        return np.full(n_kernels, n_kernels ** (-1.0 / self.p))  # ||d||_p = 1

    def value(self, d: np.ndarray) -> float:
        return 0.5 * self.lam * _pnorm(d, self.p) ** 2

    def gradient(self, d: np.ndarray) -> np.ndarray:
        norm = _pnorm(d, self.p)
        if norm == 0.0:
            return np.zeros_like(d)
        return self.lam * norm ** (2.0 - self.p) * np.power(np.maximum(d, 0.0), self.p - 1.0)

    def hessian(self, d: np.ndarray) -> np.ndarray:
        """``lam [(2 - p) N^(2-2p) u u' + (p - 1) N^(2-p) diag(d^(p-2))]``, ``u = d^(p-1)``,
        ``N = ||d||_p``; shape (m, m). Weights at zero get no diagonal term (for p < 2 it is
        infinite there; the projection keeps such weights at zero)."""
        norm = _pnorm(d, self.p)
        if norm == 0.0:
            return self.lam * np.eye(d.size) if self.p == 2.0 else np.zeros((d.size, d.size))
        positive = d > 0.0
        u = np.where(positive, np.power(np.maximum(d, 0.0), self.p - 1.0), 0.0)
        if self.p == 2.0:
            diagonal = np.ones(d.size)
        else:
            diagonal = np.where(positive, np.power(np.where(positive, d, 1.0), self.p - 2.0), 0.0)
        outer = (2.0 - self.p) * norm ** (2.0 - 2.0 * self.p) * np.outer(u, u)
        return self.lam * (outer + (self.p - 1.0) * norm ** (2.0 - self.p) * np.diag(diagonal))

    def project(self, d: np.ndarray) -> np.ndarray:
        return np.maximum(d, 0.0)

    def conjugate(self, z: np.ndarray) -> float:
        return _pnorm(np.maximum(z, 0.0), self.q) ** 2 / (2.0 * self.lam)


class L1Penalty(Regularizer, name="l1_penalty"):
    """``r(d) = sigma * sum_k d_k`` on ``d >= 0``: the l1 penalty of GMKL's product experiments.

    Jain, Vishwanathan and Varma, KDD 2012, section 5.4 (ALGORITHMS.md section 1). Unlike
    :class:`L1Simplex` the weights are not normalised: sigma trades sparsity (feature selection
    for products of kernels) against fit. Conjugate on ``d >= 0``: the indicator of
    ``max_k z_k <= sigma`` (0 inside, +inf outside).

    ``regularizer="l1_penalty"`` is ``L1Penalty(lam)``.

    Parameters
    ----------
    sigma : float > 0
    """

    feasible_set = ORTHANT

    def __init__(self, sigma: float):
        self.sigma = float(sigma)

    @classmethod
    def from_options(cls, *, p, lam, groups=None, prior=None):
        return cls(lam)

    def initial_weights(self, n_kernels: int) -> np.ndarray:
        return np.ones(n_kernels)

    def value(self, d: np.ndarray) -> float:
        return self.sigma * float(np.sum(d))

    def gradient(self, d: np.ndarray) -> np.ndarray:
        return np.full(d.shape, self.sigma)

    def hessian(self, d: np.ndarray) -> np.ndarray:
        """Zero: the penalty is linear on ``d >= 0``."""
        return np.zeros((d.size, d.size))

    def project(self, d: np.ndarray) -> np.ndarray:
        return np.maximum(d, 0.0)

    def conjugate(self, z: np.ndarray) -> float:
        return 0.0 if float(np.max(z)) <= self.sigma else np.inf


class MixedNorm(Regularizer, name="group"):
    """(l_inf, l_1) mixed norm over groups of kernels: ``1/2 (max_j sum_k ||w_jk||)^2``.

    Nath et al., NIPS 2009, eq. 1 (ALGORITHMS.md section 4); solved by
    :func:`mklearn.solvers.mirror.mirror_descent`. Its dual bound generalises the l1 one:
    ``1'alpha - r*(g/2)`` with ``r*(z) = (sum_j sqrt(max_{k in j} z_k))^2``, which is
    ``max_k z_k`` for one group.

    Parameters
    ----------
    groups : KernelGroups
        The validated grouping (:func:`mklearn.groups.check_groups`).
    """

    feasible_set = GROUP_SIMPLICES

    def __init__(self, groups):
        self.groups = groups

    @classmethod
    def from_options(cls, *, p, lam, groups=None, prior=None):
        if groups is None:
            raise ValueError("regularizer 'group' needs groups= (the group of each kernel)")
        return cls(groups)

    def saved_params(self) -> dict:
        """The groups as ``{"codes": [...], "names": [...]}`` (None: none given)."""
        groups = self.groups
        if groups is None:
            return {"groups": None}
        return {"groups": {"codes": groups.codes.tolist(), "names": list(groups.names)}}

    @classmethod
    def from_saved(cls, params: dict, n_kernels: int):
        """The mixed norm on the groups :meth:`saved_params` wrote; ValueError if the codes
        are not one group index per kernel covering every named group."""
        groups = params["groups"]
        if groups is None:
            return cls(None)
        valid = (isinstance(groups, dict) and set(groups) == {"codes", "names"}
                 and isinstance(groups["names"], list)
                 and all(isinstance(name, str) for name in groups["names"])
                 and isinstance(groups["codes"], list) and len(groups["codes"]) == n_kernels
                 and all(type(code) is int for code in groups["codes"]))
        codes = np.array(groups["codes"], dtype=np.int64) if valid else None
        if not (valid and np.all((codes >= 0) & (codes < len(groups["names"])))
                and np.unique(codes).size == len(groups["names"])):
            raise ValueError(f"'regularizer.groups' must give {n_kernels} group codes covering "
                             "its group names")
        return cls(KernelGroups(codes, groups["names"]))

    def initial_weights(self, n_kernels: int) -> np.ndarray:
        """Uniform within each group: ``gamma_jk = 1 / n_j``."""
        return 1.0 / self.groups.sizes[self.groups.codes]

    def conjugate(self, z: np.ndarray) -> float:
        return float(np.sqrt(np.maximum(self.groups.max(z), 0.0)).sum()) ** 2


def _pnorm(v: np.ndarray, p: float) -> float:
    scale = float(np.max(np.abs(v))) if v.size else 0.0
    if scale == 0.0:
        return 0.0
    return scale * float(np.sum((np.abs(v) / scale) ** p)) ** (1.0 / p)


class KLDivergence(Regularizer, name="kl"):
    """Generalised KL divergence to a prior d0,
    ``r(d) = lam sum_k (d_k log(d_k / d0_k) - d_k + d0_k)``.

    The SMO-MKL paper's extension (Vishwanathan et al., NIPS 2010, section 5; ALGORITHMS.md
    section 2). Conjugate on ``d >= 0``: ``r*(z) = lam sum_k d0_k (exp(z_k / lam) - 1)``, so the
    MKL dual is ``1'alpha - lam sum_k d0_k (exp(g_k / (2 lam)) - 1)`` and the weights are
    ``d_k = d0_k exp(g_k / (2 lam))``: every kernel keeps a positive weight.

    Parameters
    ----------
    lam : float > 0
        Weight of the divergence.
    prior : ndarray of shape (m,), optional
        Prior weights ``d0 > 0``; default uniform ``1 / m``.
    """

    feasible_set = ORTHANT

    def __init__(self, lam: float, prior=None):
        if not float(lam) > 0.0:
            raise ValueError(f"lam must be > 0, got {lam}")
        self.lam = float(lam)
        self.prior = prior

    @classmethod
    def from_options(cls, *, p, lam, groups=None, prior=None):
        return cls(lam, prior=prior)

    def smo_dual(self, n_kernels: int):
        """The conjugate ``lam sum_k d0_k (exp(z_k / lam) - 1)`` in the SMO-MKL core's terms."""
        return "kl", self.lam, 1.0, self.prior_for(n_kernels)

    def prior_for(self, n_kernels: int) -> np.ndarray:
        """The prior as an array of shape (n_kernels,); ValueError if it does not fit."""
        if self.prior is None:
            return np.full(n_kernels, 1.0 / n_kernels)
        prior = np.asarray(self.prior, dtype=np.float64).ravel()
        if prior.shape != (n_kernels,):
            raise ValueError(
                f"the KL prior has {prior.size} weights but there are {n_kernels} kernels; "
                "give one positive weight per kernel"
            )
        if not np.all(np.isfinite(prior)) or np.any(prior <= 0):
            raise ValueError("the KL prior weights must be finite and > 0")
        return prior

    def initial_weights(self, n_kernels: int) -> np.ndarray:
        return self.prior_for(n_kernels)

    def value(self, d: np.ndarray) -> float:
        d0 = self.prior_for(d.size)
        d = np.maximum(d, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            entropy = np.where(d > 0, d * np.log(d / d0), 0.0)
        return self.lam * float(np.sum(entropy - d + d0))

    def conjugate(self, z: np.ndarray) -> float:
        d0 = self.prior_for(z.size)
        return self.lam * float(np.sum(d0 * np.expm1(z / self.lam)))


def make_regularizer(name: str, *, p: float, lam: float, groups=None, prior=None):
    """Build the regularizer registered as ``name`` (:data:`REGULARIZERS`: "l1", "lp", "kl"
    with its ``prior``, None for uniform, "l1_penalty", or "group" with its validated
    ``groups``) by its :meth:`~mklearn.extending.Regularizer.from_options`; the caller
    validates parameters. ValueError for a name not registered."""
    return REGULARIZERS.lookup(name).from_options(p=p, lam=lam, groups=groups, prior=prior)
