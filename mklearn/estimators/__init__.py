"""scikit-learn estimators for Multiple Kernel Learning: :class:`MKLClassifier` and
:class:`MKLRegressor` (their shared kernel input in :mod:`mklearn.estimators.kernel_input`,
products of kernels in :mod:`mklearn.estimators.products`)."""

from mklearn.estimators.classifier import MKLClassifier
from mklearn.estimators.regressor import MKLRegressor

__all__ = ["MKLClassifier", "MKLRegressor"]
