"""Kernel families built from the data (recipes) and resolution of ``kernels=`` arguments."""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Iterable
from typing import Any

import numpy as np

from .bank import KernelBank, check_feature_indices, check_samples
from .specs import RBF, KernelSpec, Polynomial
from .summary import ColumnSummary, summarize

__all__ = [
    "KernelRecipe",
    "MWUMKLRecipe",
    "simple_mkl_kernels",
    "svc_simple_mkl_kernels",
    "svc_feature_rbf_kernels",
    "svc_kernel",
    "mwumkl_kernels",
    "resolve_kernels",
]

_SIMPLE_MKL_SIGMAS = (0.5, 1, 2, 5, 7, 10, 12, 15, 17, 20)
_SIMPLE_MKL_DEGREES = (1, 2, 3)
#: Prior weight of SVC's own kernel in the KL regulariser of ``regularizer="auto"``; the
#: other kernels share the rest evenly (:meth:`KernelRecipe.kl_prior`).
SVC_KERNEL_PRIOR = 0.9
#: ``lam`` of that KL regulariser (``lam="auto"``): how far the weights may move from the
#: prior; with the default family 5 was the best of 1, 5 and 15 on the folds of
#: ``benchmarks/bench_defaults.py`` (docs/defaults.md).
SVC_KERNEL_LAM = 5.0
#: Width of the RBF kernel on each standardised feature in the default family
_FEATURE_SIGMAS = (1.0,)


def svc_kernel(X: Any, *, standardize: bool) -> RBF:
    """The kernel of :class:`sklearn.svm.SVC` with its defaults, for data X.

    ``exp(-gamma ||x - z||^2)`` with ``gamma = 1 / (n_features * X.var())`` (SVC's
    ``gamma="scale"``) on the features at their original scale. Written as
    ``RBF(gamma=1 / n_features, feature_scales=s)``, ``s_j = std_j / sqrt(X.var())`` on
    standardised columns (``s_j = 1 / sqrt(X.var())`` without standardisation): the same
    kernel, free of overflow at any scale of X. With every entry of X equal, ``s = 1``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), or ColumnSummary
        Training data, finite, or its summary.
    standardize : bool
        Whether the bank that evaluates the kernel standardises the columns.

    Returns
    -------
    RBF
    """
    summary = summarize(X)
    spread, n_features = summary.spread, summary.n_features
    if spread == 0.0:
        scales = np.ones(n_features)
    elif standardize:
        column = summary.unit_deviation
        scales = np.where(column > 0, column, spread) / spread
    else:
        scales = np.full(n_features, 1.0 / (spread * summary.peak))
    return RBF(gamma=1.0 / n_features, feature_scales=scales)


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
    svc_kernel : bool, default=False
        Put the kernel of ``SVC()`` first (:func:`svc_kernel`: RBF with ``gamma="scale"``
        on the features at their original scale), one kernel more.
    all_features : bool, default=True
        Make the sigmas' and degrees' kernels on all features too (False: on each single
        feature only).
    one_per_two_valued : bool, default=False
        On a column with exactly two values (a binary feature) make one kernel instead of the
        block: every kernel of one such column is ``s zz' + (terms in 1)``, ``z`` the
        indicator of one value, which an SVM with an intercept sees as ``s zz'`` (its dual has
        ``y'alpha = 0``), so the block's kernels differ only in ``s``, the squared distance of
        the two values in feature space over the mean diagonal (the kernels are normalised
        to unit trace). The one of largest ``s`` is kept: the one l1 weights would choose,
        and the cheapest in weight for every regulariser.

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
        svc_kernel: bool = False,
        all_features: bool = True,
        one_per_two_valued: bool = False,
    ) -> None:
        self.sigmas = _as_sigmas(sigmas)
        self.degrees = _as_degrees(degrees)
        if not self.sigmas and not self.degrees:
            raise ValueError("A KernelRecipe needs at least one sigma or one degree.")
        self.standardize = bool(standardize)
        self.svc_kernel = bool(svc_kernel)
        self.all_features = bool(all_features)
        self.one_per_two_valued = bool(one_per_two_valued)

    def _key(self) -> tuple:
        return (tuple(float(s) for s in self.sigmas), self.degrees, self.standardize,
                self.svc_kernel, self.all_features, self.one_per_two_valued)

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
        svc = ", svc_kernel=True" if self.svc_kernel else ""
        svc += "" if self.all_features else ", all_features=False"
        svc += ", one_per_two_valued=True" if self.one_per_two_valued else ""
        return (
            f"KernelRecipe(sigmas=({sigmas}), degrees=({degrees}), "
            f"standardize={self.standardize}{svc})"
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
        X : array-like of shape (n_samples, n_features), or ColumnSummary
            Training data (finite), or its summary
            (:class:`~mklearn.kernels.summary.ColumnSummary`: data held in partitions);
            only its statistics are read.

        Returns
        -------
        list of KernelSpec
            SVC's kernel (with ``svc_kernel``), the kernels on all features, then those on
            each non-constant column.

        Raises
        ------
        ValueError
            If X is not a valid finite 2-D array.
        """
        summary = summarize(X)
        specs = [svc_kernel(summary, standardize=self.standardize)] if self.svc_kernel else []
        if self.all_features:
            specs.extend(self._block_kernels(None))
        two_valued = set(summary.two_valued) if self.one_per_two_valued else set()
        mean, scale = (summary.mean, summary.scale) if self.standardize else (0.0, 1.0)
        for column in np.flatnonzero(~summary.constant):
            block = self._block_kernels(int(column))
            if int(column) in two_valued:
                block = _widest_apart(block, summary, int(column), mean, scale)
            specs.extend(block)
        return specs

    def kl_prior(self, n_kernels: int) -> np.ndarray | None:
        """The KL prior ``regularizer="auto"`` uses with this family: with ``svc_kernel``,
        weight ``SVC_KERNEL_PRIOR`` (0.9) on SVC's kernel (the first) and the rest spread
        evenly over the others, so that the MKL solution starts from ``SVC()`` and moves
        weight to other kernels only as far as the data pay for it (KL weights are
        ``d_k = d0_k exp(g_k / (2 lam))``, never below the prior; a large ``lam`` keeps them
        there); None (uniform) otherwise.

        Parameters
        ----------
        n_kernels : int
            Number of kernels the family expanded to.

        Returns
        -------
        ndarray of shape (n_kernels,) or None
        """
        if not self.svc_kernel or n_kernels < 2:
            return None
        prior = np.full(n_kernels, (1.0 - SVC_KERNEL_PRIOR) / (n_kernels - 1))
        prior[0] = SVC_KERNEL_PRIOR
        return prior


def _widest_apart(block: list[KernelSpec], summary: ColumnSummary, column: int, mean: Any,
                  scale: Any) -> list[KernelSpec]:
    """``[k]``, the kernel of ``block`` (all on two-valued ``column``) whose two values lie
    farthest apart in its feature space, ``k(u, u) + k(v, v) - 2 k(u, v)`` over the mean
    diagonal on X; the whole block if standardising X overflows (the bank then says so)."""
    _, counts, rows = summary.two_valued[column]
    with np.errstate(over="ignore", invalid="ignore"):
        points = (rows - mean) / scale  # one row of each value, standardised as the bank
    if not np.isfinite(points).all():
        return block
    pair = KernelBank(block, standardize=False, normalize=None).fit_transform(points)
    diagonal = np.stack([pair[0, 0], pair[1, 1]])  # (2, len(block))
    spread = (diagonal[0] + diagonal[1] - 2.0 * pair[0, 1]) / (counts @ diagonal / counts.sum())
    return [block[int(np.argmax(spread))]]


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
        summary = summarize(X)
        if not self.per_feature:
            return self._block_kernels(None)
        specs: list[KernelSpec] = []
        for column in np.flatnonzero(~summary.constant):
            specs.extend(self._block_kernels(int(column)))
        if not specs:
            raise ValueError("every feature of X is constant; MWUMKL's kernels need variation.")
        return specs


def svc_simple_mkl_kernels() -> KernelRecipe:
    """SimpleMKL's family after SVC's kernel (``kernels="svc+simple_mkl"``; the estimators'
    default before ``"svc+feature_rbf"``, 3 to 10 times its cost at about its accuracy):
    the kernel of ``SVC()`` (:func:`svc_kernel`) followed by SimpleMKL's family
    (:func:`simple_mkl_kernels`), 13 (D + 1) + 1 kernels, with one kernel instead of 13 on a
    column that takes two values (``one_per_two_valued``: the same span for an SVM with an
    intercept; on 1,000 points of a1a, 123 kernels instead of 1,431).

    With ``regularizer="auto"`` its KL prior puts weight 0.9 on SVC's kernel
    (:meth:`KernelRecipe.kl_prior`): MKL as a departure from ``SVC()`` that the data pay for.

    Returns
    -------
    KernelRecipe
    """
    return KernelRecipe(sigmas=_SIMPLE_MKL_SIGMAS, degrees=_SIMPLE_MKL_DEGREES,
                        standardize=True, svc_kernel=True, one_per_two_valued=True)


def svc_feature_rbf_kernels() -> KernelRecipe:
    """The default family of :class:`~mklearn.MKLClassifier` and
    :class:`~mklearn.MKLRegressor` (``kernels="svc+feature_rbf"``): the kernel of ``SVC()``
    (``SVR()``'s is the same, :func:`svc_kernel`) on all features, then one RBF kernel of
    width 1 on each single standardised feature, D + 1 kernels: an additive model of the
    features beside SVC's own kernel. With ``regularizer="auto"`` the KL prior puts 0.9 on
    SVC's kernel and ``lam`` is 5 (:data:`SVC_KERNEL_LAM`). Against SimpleMKL's 13 widths and
    degrees per feature (``"svc+simple_mkl"``), on the 16 sets of
    ``benchmarks/bench_defaults.py`` at 250 points: mean score 0.8407 against 0.8333, 14 sets
    within 0.005 of the better of ``SVC()`` and the standardised pipeline against 11, cost
    median 7x ``SVC()`` against 20x (docs/defaults.md).

    Left out of SimpleMKL's family (measured on regression, where it mattered most):

    - the polynomials: a regression predicts values, and a polynomial kernel's value grows as
      ``|x|^q`` on a test point beyond the training range (one such point in abalone gave a
      fold R^2 of -5.9);
    - the RBFs on all features at SimpleMKL's fixed widths: on D standardised features the
      squared distance between two points averages 2 D, so the narrow ones are close to the
      identity on the training points and lp weights put most of their mass there
      (23 of 43 on abalone, a fit that memorises: 5-fold R^2 0.44 against 0.56 without);
    - the other nine widths per feature: on all of abalone R^2 0.559 with one, 0.558 with
      ten, at 2.5x ``SVR()``'s time instead of 22x.

    Returns
    -------
    KernelRecipe
    """
    return KernelRecipe(sigmas=_FEATURE_SIGMAS, degrees=(), standardize=True,
                        svc_kernel=True, all_features=False)


def recipe_of(kernels: Any) -> KernelRecipe | None:
    """The recipe an estimator's ``kernels`` argument names or is, else None."""
    if isinstance(kernels, str):
        return {"simple_mkl": simple_mkl_kernels, "mwumkl": mwumkl_kernels,
                "svc+simple_mkl": svc_simple_mkl_kernels,
                "svc+feature_rbf": svc_feature_rbf_kernels}.get(kernels, lambda: None)()
    return kernels if isinstance(kernels, KernelRecipe) else None


def mwumkl_kernels(*, per_feature: bool = True) -> MWUMKLRecipe:
    """MWUMKL's 12 base kernels per feature (or on all features); see :class:`MWUMKLRecipe`."""
    return MWUMKLRecipe(per_feature=per_feature)


def resolve_kernels(kernels: Any, X: Any) -> tuple[list[KernelSpec], bool]:
    """Turn an estimator's ``kernels`` argument into base-kernel specs for X.

    Parameters
    ----------
    kernels : str, KernelRecipe, KernelSpec or list/tuple of KernelSpec
        ``"svc+simple_mkl"`` means :func:`svc_simple_mkl_kernels()`, ``"svc+feature_rbf"``
        :func:`svc_feature_rbf_kernels()`, ``"simple_mkl"``
        :func:`simple_mkl_kernels()`, ``"mwumkl"`` :func:`mwumkl_kernels()`. ``"precomputed"`` is
        handled by the estimators, not here.
    X : array-like of shape (n_samples, n_features), or ColumnSummary
        Training data, or its summary (:class:`~mklearn.kernels.summary.ColumnSummary`).

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
    recipe = recipe_of(kernels)
    if recipe is not None:
        return recipe.expand(X), recipe.standardize
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
            "kernels must be 'svc+simple_mkl', 'svc+feature_rbf', 'simple_mkl', 'mwumkl', a "
            "KernelRecipe (e.g. simple_mkl_kernels()), "
            "a KernelSpec (Linear, Polynomial, RBF, Laplacian) or a non-empty list/tuple "
            f"of KernelSpec; got {reprlib.repr(kernels)}. ('precomputed' is handled by "
            "the estimator, not by resolve_kernels.)"
        )
    n_features = (X.n_features if isinstance(X, ColumnSummary)
                  else check_samples(X).shape[1])
    check_feature_indices(specs, n_features)
    return specs, False
