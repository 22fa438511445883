"""
The learned kernel in kernel ridge regression and kernel PCA
============================================================

:class:`mklearn.MKLKernel` is a transformer: ``fit`` learns the kernel weights (with
``MKLRegressor`` for a continuous ``y``, ``MKLClassifier`` for labels) and ``transform``
returns the learned kernel between its input and the training points. Any estimator that
takes ``kernel="precomputed"`` then learns on it, in a pipeline.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import KernelPCA
from sklearn.kernel_ridge import KernelRidge
from sklearn.pipeline import make_pipeline

from mklearn import MKLKernel
from mklearn.kernels import RBF

rng = np.random.default_rng(0)
kernels = [RBF(sigma=1.0), RBF(sigma=3.0)] + [RBF(sigma=0.5, features=j) for j in range(3)]

# %%
# Kernel ridge regression: only the first of three features matters, and the kernel on it
# takes the weight.
X = rng.uniform(-2, 2, size=(150, 3))
y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=150)
ridge = make_pipeline(MKLKernel(kernels=kernels), KernelRidge(kernel="precomputed", alpha=0.1))
ridge.fit(X[:100], y[:100])
learned = ridge[0]
print("weights:", dict(zip(learned.kernel_names_, learned.kernel_weights_.round(3), strict=True)))
print("test R^2:", round(ridge.score(X[100:], y[100:]), 3))

grid = np.zeros((200, 3))
grid[:, 0] = np.linspace(-2, 2, 200)
fig, left = plt.subplots(figsize=(6, 4))
left.scatter(X[:100, 0], y[:100], s=10, color="grey", label="training points")
left.plot(grid[:, 0], ridge.predict(grid), color="tab:red", label="kernel ridge, learned K")
left.set_xlabel("x_0")
left.set_ylabel("y")
left.legend()
left.set_title("KernelRidge on the learned kernel")
fig.tight_layout()

# %%
# Kernel PCA: two groups apart on the first feature only, hidden among noisy features. The
# learned kernel (l1 weights from the labels) puts the groups apart on the first component.
groups = np.repeat([0, 1], 60)
X_groups = rng.normal(size=(120, 3)) + 3.0 * groups[:, None] * [1, 0, 0]
pca = make_pipeline(MKLKernel(kernels=kernels, regularizer="l1"),
                    KernelPCA(2, kernel="precomputed"))
projected = pca.fit_transform(X_groups, groups)
fig, right = plt.subplots(figsize=(6, 4))
right.scatter(projected[:, 0], projected[:, 1], c=groups, cmap="coolwarm", s=12)
right.set_xlabel("component 1")
right.set_ylabel("component 2")
right.set_title("KernelPCA on the learned kernel")
fig.tight_layout()
plt.show()
