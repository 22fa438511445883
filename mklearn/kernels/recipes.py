"""Kernel families built from the data (recipes) and resolution of ``kernels=`` arguments."""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Iterable
from typing import Any

import numpy as np

from .bank import check_feature_indices, check_samples
from .specs import RBF, KernelSpec, Polynomial

__all__ = [
    "KernelRecipe",
    "MWUMKLRecipe",
    "simple_mkl_kernels",
    "mwumkl_kernels",
    "resolve_kernels",
]

_SIMPLE_MKL_SIGMAS = (0.5, 1, 2, 5, 7, 10, 12, 15, 17, 20)
_SIMPLE_MKL_DEGREES = (1, 2, 3)


def _as_sigmas(sigmas: Iterable[Any]) -> tuple[float, ...]:
    values = tuple(sigmas)
    for sigma in values:
        if (
            isinstance(sigma, bool)
            or not isinstance(sigma, (numbers.Real, np.floating))
            or not (math.isfinite(sigma) and sigma > 0)
        ):
            raise ValueError(f"sigmas must be finite numbers > 0; got {sigma!r}.")
    return values


def _as_degrees(degrees: Iterable[Any]) -> tuple[int, ...]:
    values = tuple(degrees)
    for degree in values:
        if (
            isinstance(degree, bool)
            or not isinstance(degree, (numbers.Integral, np.integer))
            or degree < 1
        ):
            raise ValueError(f"degrees must be ints >= 1; got {degree!r}.")
    return tuple(int(d) for d in values)


class KernelRecipe:
    """A family of base kernels that depends on the data: SimpleMKL's recipe.

    For the full feature vector and then for each single non-constant feature
    column (in column order), the recipe makes the Gaussian kernels
    ``exp(-||x - z||^2 / (2 sigma^2))`` for every sigma, then the polynomial kernels
    ``(x'z + 1)^q`` for every degree q. With D non-constant features this gives
    ``(len(sigmas) + len(degrees)) * (D + 1)`` kernels: 13 (D + 1) with the defaults.
    Constant columns are skipped (their per-feature kernels carry no information).

    Parameters
    ----------
    sigmas : iterable of float
        RBF widths, each finite and > 0.
    degrees : iterable of int
        Polynomial degrees, each >= 1.
    standardize : bool, default=True
        Whether features are standardised (zero mean, unit variance, fitted on the
        training data) before the kernels are computed.

    Raises
    ------
    ValueError
        If a sigma or degree is invalid, or both are empty.

    References
    ----------
    A. Rakotomamonjy, F. Bach, S. Canu and Y. Grandvalet, "SimpleMKL", Journal of
    Machine Learning Research 9 (2008), 2491-2521.
    """

    def __init__(
        self,
        *,
        sigmas: Iterable[float],
        degrees: Iterable[int],
        standardize: bool = True,
    ) -> None:
        self.sigmas = _as_sigmas(sigmas)
        self.degrees = _as_degrees(degrees)
        if not self.sigmas and not self.degrees:
            raise ValueError("A KernelRecipe needs at least one sigma or one degree.")
        self.standardize = bool(standardize)

    def _key(self) -> tuple:
        return (tuple(float(s) for s in self.sigmas), self.degrees, self.standardize)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KernelRecipe):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        sigmas = ", ".join(f"{s:g}" for s in self.sigmas)
        if len(self.sigmas) == 1:
            sigmas += ","
        degrees = ", ".join(str(d) for d in self.degrees)
        if len(self.degrees) == 1:
            degrees += ","
        return (
            f"KernelRecipe(sigmas=({sigmas}), degrees=({degrees}), standardize={self.standardize})"
        )

    @property
    def kernels_per_block(self) -> int:
        """Number of kernels made for each feature block (13 with the defaults)."""
        return len(self.sigmas) + len(self.degrees)

    def _block_kernels(self, features: int | None) -> list[KernelSpec]:
        rbfs = [RBF(sigma=s, features=features) for s in self.sigmas]
        polys = [Polynomial(degree=q, coef0=1.0, features=features) for q in self.degrees]
        return rbfs + polys

    def expand(self, X: Any) -> list[KernelSpec]:
        """Return the base kernels for data X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (finite); only used to count columns and find the
            constant ones.

        Returns
        -------
        list of KernelSpec
            Kernels on all features first, then on each non-constant column.

        Raises
        ------
        ValueError
            If X is not a valid finite 2-D array.
        """
        X = check_samples(X)
        constant = np.all(X == X[:1], axis=0)
        specs = self._block_kernels(None)
        for column in np.flatnonzero(~constant):
            specs.extend(self._block_kernels(int(column)))
        return specs


def simple_mkl_kernels(
    *,
    sigmas: Iterable[float] = _SIMPLE_MKL_SIGMAS,
    degrees: Iterable[int] = _SIMPLE_MKL_DEGREES,
    standardize: bool = True,
) -> KernelRecipe:
    """SimpleMKL's standard base-kernel family (Rakotomamonjy et al., JMLR 2008).

    RBF kernels with widths ``sigmas`` and polynomial kernels ``(x'z + 1)^q``,
    ``q in degrees``, on all features and on each single non-constant feature,
    after standardisation; every kernel is then normalised to unit trace by the
    :class:`KernelBank`. With D non-constant features: 13 (D + 1) kernels
    (Sonar: 793, Ionosphere: 442).

    Parameters
    ----------
    sigmas : iterable of float, default=(0.5, 1, 2, 5, 7, 10, 12, 15, 17, 20)
        RBF widths.
    degrees : iterable of int, default=(1, 2, 3)
        Polynomial degrees.
    standardize : bool, default=True
        Standardise features (fitted on training data) before the kernels.

    Returns
    -------
    KernelRecipe
    """
    return KernelRecipe(sigmas=sigmas, degrees=degrees, standardize=standardize)


_MWUMKL_BANDWIDTHS = tuple(2.0 ** (k / 2) for k in range(9))  # 2^0, 2^0.5, ..., 2^4


class MWUMKLRecipe(KernelRecipe):
    """MWUMKL's base kernels (Moeller et al., AISTATS 2014, section 5): 12 per block.

    Gaussians ``exp(-||x - z||^2 / b)`` with bandwidths ``b in {2^0, 2^0.5, ..., 2^4}`` (the
    authors' code divides the squared distance by b; here ``RBF(sigma=sqrt(b / 2))``), then
    the polynomials ``(x'z + 1)^q``, ``q = 1, 2, 3``; on each single non-constant feature
    (the paper's small sets: 12 D kernels) or on all features (its large sets: 12 kernels).
    Features are not transformed: the paper scales them to [0, 1] first (e.g.
    ``make_pipeline(MinMaxScaler(), MKLClassifier(kernels="mwumkl", solver="mwu"))``).

    Parameters
    ----------
    per_feature : bool, default=True
        One block per non-constant feature; False for one block on all features.
    """

    def __init__(self, *, per_feature: bool = True) -> None:
        super().__init__(
            sigmas=[math.sqrt(b / 2) for b in _MWUMKL_BANDWIDTHS],
            degrees=_SIMPLE_MKL_DEGREES,
            standardize=False,
        )
        self.per_feature = bool(per_feature)

    def _key(self) -> tuple:
        return (*super()._key(), self.per_feature)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MWUMKLRecipe):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"MWUMKLRecipe(per_feature={self.per_feature})"

    def expand(self, X: Any) -> list[KernelSpec]:
        """Base kernels for X: 12 per non-constant column, or 12 on all columns."""
        X = check_samples(X)
        if not self.per_feature:
            return self._block_kernels(None)
        constant = np.all(X == X[:1], axis=0)
        specs: list[KernelSpec] = []
        for column in np.flatnonzero(~constant):
            specs.extend(self._block_kernels(int(column)))
        if not specs:
            raise ValueError("every feature of X is constant; MWUMKL's kernels need variation.")
        return specs


def mwumkl_kernels(*, per_feature: bool = True) -> MWUMKLRecipe:
    """MWUMKL's 12 base kernels per feature (or on all features); see :class:`MWUMKLRecipe`."""
    return MWUMKLRecipe(per_feature=per_feature)


def resolve_kernels(kernels: Any, X: Any) -> tuple[list[KernelSpec], bool]:
    """Turn an estimator's ``kernels`` argument into base-kernel specs for X.

    Parameters
    ----------
    kernels : "simple_mkl", "mwumkl", KernelRecipe, KernelSpec or list/tuple of KernelSpec
        ``"simple_mkl"`` means :func:`simple_mkl_kernels()`, ``"mwumkl"``
        :func:`mwumkl_kernels()`. ``"precomputed"`` is
        handled by the estimators, not here.
    X : array-like of shape (n_samples, n_features)
        Training data.

    Returns
    -------
    specs : list of KernelSpec
    standardize : bool
        True for recipes that standardise; False for explicit specs.

    Raises
    ------
    ValueError
        If ``kernels`` has none of the accepted forms, or a spec uses a feature
        index X does not have.
    """
    if isinstance(kernels, str) and kernels == "simple_mkl":
        kernels = simple_mkl_kernels()
    if isinstance(kernels, str) and kernels == "mwumkl":
        kernels = mwumkl_kernels()
    if isinstance(kernels, KernelRecipe):
        return kernels.expand(X), kernels.standardize
    if isinstance(kernels, KernelSpec):
        specs = [kernels]
    elif (
        isinstance(kernels, (list, tuple))
        and kernels
        and all(isinstance(spec, KernelSpec) for spec in kernels)
    ):
        specs = list(kernels)
    else:
        raise ValueError(
            "kernels must be 'simple_mkl', 'mwumkl', a KernelRecipe (e.g. simple_mkl_kernels()), "
            "a KernelSpec (Linear, Polynomial, RBF, Laplacian) or a non-empty list/tuple "
            f"of KernelSpec; got {reprlib.repr(kernels)}. ('precomputed' is handled by "
            "the estimator, not by resolve_kernels.)"
        )
    check_feature_indices(specs, check_samples(X).shape[1])
    return specs, False
