"""mklearn: Multiple Kernel Learning with a scikit-learn API.

Learn an SVM together with its kernel, a weighted combination of many base kernels.
"""

from mklearn._version import __version__
from mklearn.estimators import MKLClassifier, MKLRegressor
from mklearn.kernel_transformer import MKLKernel
from mklearn.one_class import OneClassMKL
from mklearn.persistence import load_model, save_model

__all__ = [
    "MKLClassifier",
    "MKLKernel",
    "MKLRegressor",
    "OneClassMKL",
    "load_model",
    "save_model",
    "__version__",
]
