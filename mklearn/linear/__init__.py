"""The feature-space core: SVMs on low-rank kernels ``K_k = Phi_k Phi_k'`` by dual
coordinate descent over blocks of columns (LIBLINEAR's method), with an exact intercept."""

from mklearn.linear.dcd import KIND_FIXED, KIND_KL, KIND_LP, block_terms, coordinate_descent
from mklearn.linear.svm import (
    FeatureProblem,
    FeatureSVM,
    block_outputs,
    block_products,
    seed_of,
)

__all__ = ["KIND_FIXED", "KIND_KL", "KIND_LP", "FeatureProblem", "FeatureSVM", "block_outputs",
           "block_products", "block_terms", "coordinate_descent", "seed_of"]
