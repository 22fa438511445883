"""mklearn: Multiple Kernel Learning with a scikit-learn API.

Learn an SVM together with its kernel, a weighted combination of many base kernels.
"""

from mklearn.estimators import MKLClassifier, MKLRegressor
from mklearn.one_class import OneClassMKL
from mklearn.persistence import load_model, save_model

__version__ = "0.1.0"

__all__ = [
    "MKLClassifier",
    "MKLRegressor",
    "OneClassMKL",
    "load_model",
    "save_model",
    "__version__",
]
