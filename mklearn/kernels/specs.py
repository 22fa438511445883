"""Immutable descriptions of base kernels.

A spec says *which* kernel to compute (type, parameters, feature columns); the
:class:`~mklearn.kernels.KernelBank` does the computing. Specs are frozen
dataclasses: hashable, comparable with ``==`` and safe to share between estimators.
"""

from __future__ import annotations

import math
import numbers
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

from mklearn._registry import Registry

__all__ = [
    "KERNEL_TYPES",
    "KernelSpec",
    "Linear",
    "Polynomial",
    "RBF",
    "Laplacian",
    "kernel_from_dict",
]

# Integer codes shared with the numba evaluation loop (see ``_numba.py``).
KIND_LINEAR = 0
KIND_POLYNOMIAL = 1
KIND_RBF = 2
KIND_LAPLACIAN = 3
NUMBA_KINDS = (KIND_LINEAR, KIND_POLYNOMIAL, KIND_RBF, KIND_LAPLACIAN)
KIND_PYTHON = -1  # evaluated by the spec's own ``evaluate`` (a kernel type of one's own)

#: The registered kernel types by ``type_name``: what ``kernel_from_dict`` and model files
#: rebuild.
KERNEL_TYPES = Registry("kernel type")


def _check_features(features: Any) -> tuple[int, ...] | None:
    """Normalise ``features`` to None or a tuple of distinct non-negative ints."""
    if features is None:
        return None
    if isinstance(features, (numbers.Integral, np.integer)) and not isinstance(features, bool):
        items: list[Any] = [features]
    elif isinstance(features, np.ndarray) and features.ndim == 1:
        items = list(features)
    elif isinstance(features, Sequence) and not isinstance(features, str):
        items = list(features)
    else:
        raise ValueError(
            "features must be None (all columns), a non-negative int or a sequence of "
            f"non-negative ints; got {features!r}."
        )
    if not items:
        raise ValueError("features must not be empty; use None for all columns.")
    indices = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (numbers.Integral, np.integer)):
            raise ValueError(f"features must contain ints >= 0; got {item!r}.")
        if item < 0:
            raise ValueError(f"features must contain ints >= 0 (column indices); got {item}.")
        indices.append(int(item))
    if len(set(indices)) != len(indices):
        raise ValueError(f"features must not repeat a column; got {tuple(indices)}.")
    return tuple(indices)


def _check_positive(owner: str, name: str, value: Any) -> float:
    """Return ``value`` as a float after checking it is a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating)):
        raise ValueError(f"{owner}: {name} must be a finite number > 0; got {value!r}.")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{owner}: {name} must be a finite number > 0; got {value!r}.")
    return value


def _check_finite(owner: str, name: str, value: Any) -> float:
    """Return ``value`` as a float after checking it is a finite number."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating)):
        raise ValueError(f"{owner}: {name} must be a finite real number; got {value!r}.")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{owner}: {name} must be a finite real number; got {value!r}.")
    return value


def _check_feature_scales(owner: str, scales: Any) -> tuple[float, ...] | None:
    """Normalise ``feature_scales`` to None or a non-empty tuple of finite floats > 0."""
    if scales is None:
        return None
    if isinstance(scales, (str, bytes)) or not isinstance(scales, (Sequence, np.ndarray)):
        raise ValueError(
            f"{owner}: feature_scales must be None or a sequence of numbers > 0; got {scales!r}."
        )
    values = tuple(_check_positive(owner, "each feature scale", v) for v in np.ravel(scales))
    if not values:
        raise ValueError(f"{owner}: feature_scales must not be empty; use None for no scaling.")
    return values


def _format_features(features: tuple[int, ...] | None, feature_names=None) -> str:
    if features is None:
        return "all"
    if feature_names is None or max(features) >= len(feature_names):
        return "x[" + ",".join(str(i) for i in features) + "]"
    if len(features) == 1:
        return str(feature_names[features[0]])
    return "[" + ", ".join(str(feature_names[i]) for i in features) + "]"


def check_kind(spec) -> None:
    """ValueError unless the numba loop knows the kind of ``spec`` (a spec or its class) or
    the kind is ``KIND_PYTHON`` with an ``evaluate`` method of its own."""
    cls = spec if isinstance(spec, type) else type(spec)
    if cls.kind in NUMBA_KINDS:
        return
    if cls.kind == KIND_PYTHON and cls.evaluate is not KernelSpec.evaluate:
        return
    raise ValueError(
        f"kernel type {cls.__name__} has kind {cls.kind!r}, which mklearn cannot evaluate: "
        f"the numba loop knows the kinds {NUMBA_KINDS}; for a kernel of your own leave kind "
        "at KIND_PYTHON and implement evaluate(X, Z) (docs/extending.md)"
    )


@dataclass(frozen=True, kw_only=True)
class KernelSpec:
    """Base class of the base-kernel descriptions.

    Parameters
    ----------
    features : None, int or sequence of int, default=None
        Feature columns the kernel looks at. None means all columns; an int or a
        sequence of ints is stored as a tuple of ints.
    feature_scales : None or sequence of float, default=None
        Factors the kernel multiplies its feature columns by (one per column it looks at,
        each finite and > 0) before evaluating: ``k(x, z) = k0(s * x, s * z)``. With a
        standardising bank the columns are the standardised ones, so the column standard
        deviations bring back the original scale (SVC's own kernel in
        :func:`mklearn.kernels.svc_simple_mkl_kernels`). None: the columns as they are.

    Raises
    ------
    ValueError
        If a feature index is negative, repeated or not an integer, or a feature scale is
        not a finite number > 0 (or their count differs from ``features``).

    Notes
    -----
    A subclass that sets its own ``type_name`` is registered in :data:`KERNEL_TYPES` (model
    files and :func:`kernel_from_dict` rebuild it from its :meth:`to_dict`). A kernel type of
    one's own leaves ``kind`` at ``KIND_PYTHON`` and implements :meth:`evaluate` (numpy):
    the kernel bank calls it for the kernel's columns; ``docs/extending.md`` shows one.
    """

    features: tuple[int, ...] | None = None
    feature_scales: tuple[float, ...] | None = None

    #: Value of the ``"type"`` key of :meth:`to_dict`; a class that sets it is registered.
    type_name: ClassVar[str] = ""
    #: Integer code used by the numba evaluation loop (``KIND_PYTHON``: :meth:`evaluate`).
    kind: ClassVar[int] = KIND_PYTHON
    #: True when ``k(x, z)`` depends on ``x - z`` only: a standardising bank may then leave
    #: the columns uncentred (same kernel values, zeros kept).
    shift_invariant: ClassVar[bool] = False

    def __new__(cls, *args, **kwargs):
        if cls is KernelSpec:
            raise TypeError("KernelSpec is the base of the kernel types; instantiate one of "
                            f"them: {', '.join(part.__name__ for part in KERNEL_TYPES.values())}")
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("type_name"):
            check_kind(cls)
            KERNEL_TYPES.add(cls.type_name, cls)

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", _check_features(self.features))
        scales = _check_feature_scales(type(self).__name__, self.feature_scales)
        if scales is not None and self.features is not None and len(scales) != len(
                self.features):
            raise ValueError(
                f"{type(self).__name__}: feature_scales has {len(scales)} entries but the "
                f"kernel looks at {len(self.features)} columns; give one scale per column."
            )
        object.__setattr__(self, "feature_scales", scales)

    @property
    def name(self) -> str:
        """Readable name, e.g. ``"rbf(sigma=2) on x[3]"``."""
        return f"{self.label} on {_format_features(self.features)}"

    def name_with(self, feature_names) -> str:
        """:attr:`name` with the columns called by ``feature_names`` (e.g. a DataFrame's
        columns, ``feature_names_in_``) instead of ``x[i]``."""
        return f"{self.label} on {_format_features(self.features, feature_names)}"

    @property
    def label(self) -> str:
        """Type and parameters, e.g. ``"rbf(sigma=2)"`` (:attr:`name` without the columns)."""
        label = self._label()
        return label if self.feature_scales is None else label[:-1] + ", scaled columns)"

    def _label(self) -> str:
        """Type and parameters part of :attr:`name`, e.g. ``"mine(width=2)"``."""
        params = ", ".join(f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"
                           for key, value in self.to_dict().items()
                           if key not in ("type", "features", "feature_scales"))
        return f"{self.type_name}({params})"

    def numeric_params(self) -> tuple[float, float, int]:
        """Return ``(gamma, coef0, degree)`` as used by the numba loop (unused for
        ``KIND_PYTHON``)."""
        return 1.0, 0.0, 1

    def evaluate(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """``k(x_i, z_j)`` of shape (n_x, n_z), float64, for a kernel of kind ``KIND_PYTHON``.

        Parameters
        ----------
        X, Z : ndarray of shape (n_x, n_columns) and (n_z, n_columns)
            The points on the kernel's columns (``features``), standardised by the bank
            and multiplied by ``feature_scales``.
        """
        raise NotImplementedError(
            f"{type(self).__name__} has kind KIND_PYTHON but no evaluate(X, Z) method; "
            "implement it (docs/extending.md)"
        )

    def evaluate_diagonal(self, X: np.ndarray) -> np.ndarray:
        """``k(x_i, x_i)`` of shape (n,), for a kernel of kind ``KIND_PYTHON``: here from
        :meth:`evaluate` a point at a time (override it when there is a cheaper form)."""
        return np.array([self.evaluate(row[None], row[None])[0, 0] for row in X])

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict; :func:`kernel_from_dict` inverts it.

        Returns
        -------
        dict
            ``{"type": ..., <parameters>..., "features": list of int or None}``.
        """
        out: dict[str, Any] = {"type": self.type_name}
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name in ("features", "feature_scales"):
                value = None if value is None else list(value)
            elif value is None:
                continue  # e.g. the one of sigma/gamma the user did not give
            out[field.name] = value
        return out


@dataclass(frozen=True, kw_only=True)
class Linear(KernelSpec):
    """Linear kernel ``k(x, z) = x'z``.

    Parameters
    ----------
    features : None, int or sequence of int, default=None
        Feature columns used (None: all).
    """

    type_name: ClassVar[str] = "linear"
    kind: ClassVar[int] = KIND_LINEAR

    def _label(self) -> str:
        return "linear"

    def numeric_params(self) -> tuple[float, float, int]:
        return 1.0, 0.0, 1


@dataclass(frozen=True, kw_only=True)
class Polynomial(KernelSpec):
    """Polynomial kernel ``k(x, z) = (gamma x'z + coef0) ** degree``.

    Parameters
    ----------
    degree : int, default=2
        Positive integer exponent.
    coef0 : float, default=1.0
        Finite additive constant.
    gamma : float, default=1.0
        Finite scale of the inner product, > 0.
    features : None, int or sequence of int, default=None
        Feature columns used (None: all).

    Raises
    ------
    ValueError
        If ``degree`` is not an int >= 1, ``gamma`` is not a finite number > 0 or
        ``coef0`` is not finite.
    """

    degree: int = 2
    coef0: float = 1.0
    gamma: float = 1.0

    type_name: ClassVar[str] = "polynomial"
    kind: ClassVar[int] = KIND_POLYNOMIAL

    def __post_init__(self) -> None:
        super().__post_init__()
        degree = self.degree
        if (
            isinstance(degree, bool)
            or not isinstance(degree, (numbers.Integral, np.integer))
            or degree < 1
        ):
            raise ValueError(f"Polynomial: degree must be an int >= 1; got {degree!r}.")
        object.__setattr__(self, "degree", int(degree))
        object.__setattr__(self, "coef0", _check_finite("Polynomial", "coef0", self.coef0))
        object.__setattr__(self, "gamma", _check_positive("Polynomial", "gamma", self.gamma))

    def _label(self) -> str:
        label = f"poly(degree={self.degree}, coef0={self.coef0:g}"
        if self.gamma != 1.0:
            label += f", gamma={self.gamma:g}"
        return label + ")"

    def numeric_params(self) -> tuple[float, float, int]:
        return self.gamma, self.coef0, self.degree


@dataclass(frozen=True, kw_only=True)
class _WidthKernel(KernelSpec):
    """Shared validation of kernels given by a width ``sigma`` or a rate ``gamma``."""

    sigma: float | None = None
    gamma: float | None = None

    shift_invariant: ClassVar[bool] = True  # exp(-gamma ||x - z||^2) and exp(-||x - z||_1 / sigma)

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = type(self).__name__
        if self.sigma is not None and self.gamma is not None:
            raise ValueError(f"{owner}: give at most one of sigma and gamma, not both.")
        if self.sigma is None and self.gamma is None:
            object.__setattr__(self, "sigma", 1.0)
        elif self.sigma is not None:
            object.__setattr__(self, "sigma", _check_positive(owner, "sigma", self.sigma))
        else:
            object.__setattr__(self, "gamma", _check_positive(owner, "gamma", self.gamma))

    @property
    def effective_gamma(self) -> float:
        """The rate ``gamma`` actually used, whichever of sigma/gamma was given."""
        if self.gamma is not None:
            return self.gamma
        return self._gamma_from_sigma(self.sigma)

    @staticmethod
    @abstractmethod
    def _gamma_from_sigma(sigma: float) -> float:
        """Rate gamma for width sigma."""

    def _label(self) -> str:
        if self.gamma is not None:
            return f"{self.type_name}(gamma={self.gamma:g})"
        return f"{self.type_name}(sigma={self.sigma:g})"

    def numeric_params(self) -> tuple[float, float, int]:
        return self.effective_gamma, 0.0, 1


@dataclass(frozen=True, kw_only=True)
class RBF(_WidthKernel):
    """Gaussian kernel ``k(x, z) = exp(-gamma ||x - z||^2)``, ``gamma = 1 / (2 sigma^2)``.

    Parameters
    ----------
    sigma : float, optional
        Width, > 0. Default 1 when neither sigma nor gamma is given.
    gamma : float, optional
        Rate, > 0. Give at most one of sigma and gamma.
    features : None, int or sequence of int, default=None
        Feature columns used (None: all).

    Raises
    ------
    ValueError
        If both sigma and gamma are given, or either is not a finite number > 0.
    """

    type_name: ClassVar[str] = "rbf"
    kind: ClassVar[int] = KIND_RBF

    @staticmethod
    def _gamma_from_sigma(sigma: float) -> float:
        return 1.0 / (2.0 * sigma * sigma)


@dataclass(frozen=True, kw_only=True)
class Laplacian(_WidthKernel):
    """Laplacian kernel ``k(x, z) = exp(-gamma ||x - z||_1)``, ``gamma = 1 / sigma``.

    Parameters
    ----------
    sigma : float, optional
        Width, > 0. Default 1 when neither sigma nor gamma is given.
    gamma : float, optional
        Rate, > 0. Give at most one of sigma and gamma.
    features : None, int or sequence of int, default=None
        Feature columns used (None: all).

    Raises
    ------
    ValueError
        If both sigma and gamma are given, or either is not a finite number > 0.
    """

    type_name: ClassVar[str] = "laplacian"
    kind: ClassVar[int] = KIND_LAPLACIAN

    @staticmethod
    def _gamma_from_sigma(sigma: float) -> float:
        return 1.0 / sigma


def kernel_from_dict(d: Mapping[str, Any]) -> KernelSpec:
    """Rebuild a kernel spec from the output of :meth:`KernelSpec.to_dict`.

    Parameters
    ----------
    d : mapping
        Must hold a ``"type"`` key (a registered type: ``"linear"``, ``"polynomial"``,
        ``"rbf"``, ``"laplacian"`` or one of :data:`KERNEL_TYPES`) plus that kernel's
        keyword arguments.

    Returns
    -------
    KernelSpec

    Raises
    ------
    ValueError
        If ``d`` is not a mapping, the type is missing or unknown, a key is not a
        parameter of that kernel, or a parameter is invalid.
    """
    if not isinstance(d, Mapping):
        raise ValueError(f"kernel_from_dict expects a dict; got {type(d).__name__}.")
    params = dict(d)
    type_name = params.pop("type", None)
    cls = KERNEL_TYPES.get(type_name) if isinstance(type_name, str) else None
    if cls is None:
        raise ValueError(
            f"Unknown kernel type {type_name!r}; expected one of {sorted(KERNEL_TYPES)}."
        )
    allowed = {field.name for field in fields(cls)}
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValueError(
            f"Unknown parameter(s) {unknown} for kernel type {type_name!r}; "
            f"allowed: {sorted(allowed)}."
        )
    return cls(**params)
