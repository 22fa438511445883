"""
Kernel weights on a real data set
=================================

SimpleMKL's kernel family on the Ionosphere radar data (34 features): RBF kernels of 10
widths and polynomials of degree 1-3, on all features and on each feature alone, 442
kernels. l1-MKL (SPG-GMKL) keeps a few of them; the two plots show the largest weights by
name and all weights laid out by feature (rows) and kernel parameter (columns).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from mklearn import MKLClassifier
from mklearn.datasets import load_ionosphere
from mklearn.plotting import plot_kernel_weights, plot_weight_map

X, y = load_ionosphere()
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                    random_state=0)
model = MKLClassifier(kernels="simple_mkl", regularizer="l1", C=100.0,
                      kernel_normalization="trace").fit(X_train, y_train)
print(f"{np.count_nonzero(model.kernel_weights_)} of {len(model.kernel_names_)} kernels kept, "
      f"test accuracy {model.score(X_test, y_test):.3f}, solver {model.solver_}, "
      f"relative duality gap {model.relative_duality_gap_:.1e}")

# %%
# The largest weights, by kernel name.
fig, ax = plt.subplots(figsize=(7, 4))
plot_kernel_weights(model.kernel_weights_, model.kernel_names_, ax=ax, top=12,
                    title="Ionosphere: the 12 largest kernel weights")
fig.tight_layout()

# %%
# Every weight, by feature block and kernel parameter.
fig, ax = plt.subplots(figsize=(8, 9))
plot_weight_map(model, ax=ax, title="Ionosphere: weights by feature and kernel")
fig.tight_layout()
plt.show()
