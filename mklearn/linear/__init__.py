"""The feature-space core: SVMs on low-rank kernels ``K_k = Phi_k Phi_k'`` by dual
coordinate descent over blocks of columns (LIBLINEAR's method), with an exact intercept."""

from mklearn.linear.blocks import block_outputs, block_products
from mklearn.linear.dcd import KIND_FIXED, KIND_KL, KIND_LP, block_terms, coordinate_descent
from mklearn.linear.rows import FeatureRows, feature_rows
from mklearn.linear.svm import FeatureProblem, FeatureSVM, seed_of

__all__ = ["KIND_FIXED", "KIND_KL", "KIND_LP", "FeatureProblem", "FeatureRows", "FeatureSVM",
           "block_outputs", "block_products", "block_terms", "coordinate_descent",
           "feature_rows", "seed_of"]
