"""
Group MKL on multi-view data
============================

The multiple-features digits (``load_mfeat``) describe each handwritten digit six ways:
Fourier coefficients, profile correlations, Karhunen-Loeve coefficients, pixel averages,
Zernike moments and morphological features. Given the views as a dict, the estimator builds
its kernels on each view and groups them by view; the (l_inf, l_1) group regulariser of Nath
et al. (NIPS 2009), solved by mirror descent, uses every view while picking RBF widths
sparsely inside each.
"""

import matplotlib.pyplot as plt
import numpy as np

from mklearn import MKLClassifier
from mklearn.datasets import load_mfeat
from mklearn.kernels import RBF

views, y = load_mfeat()
rng = np.random.default_rng(0)
train = np.concatenate([rng.choice(np.flatnonzero(y == c), 15, replace=False)
                        for c in range(10)])
test = np.setdiff1d(np.arange(len(y)), train)[::4]
v_train = {name: X[train] for name, X in views.items()}
v_test = {name: X[test] for name, X in views.items()}


def median_distance(X):
    sq = np.sum(X**2, axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0)
    return np.sqrt(np.median(d2[np.triu_indices(len(X), 1)]))


kernels = {name: [RBF(sigma=f * median_distance(X)) for f in (0.5, 1.0, 2.0)]
           for name, X in v_train.items()}
model = MKLClassifier(kernels=kernels, solver="mirror", regularizer="group", C=10.0,
                      kernel_normalization="trace").fit(v_train, y[train])
print(f"{len(train)} training digits, test accuracy "
      f"{np.mean(model.predict(v_test) == y[test]):.3f}")

# %%
# The weight of each view (columns) in each one-vs-rest classifier (rows): every view is
# used by every digit's classifier, with different shares.
fig, ax = plt.subplots(figsize=(6, 5))
image = ax.imshow(model.group_weights_, cmap="Blues")
ax.set_xticks(range(len(model.group_names_)), model.group_names_)
ax.set_yticks(range(10), [f"digit {c}" for c in model.classes_])
ax.set_xlabel("view")
ax.set_title("group weights, one row per one-vs-rest classifier")
fig.colorbar(image, ax=ax)
fig.tight_layout()
plt.show()
