"""
What multiple kernel learning does
==================================

Three base kernels look at the same two-dimensional points: an RBF kernel on both
features, one on the second feature alone and one on the first feature alone. Only the first
feature carries the labels. MKL learns an SVM together with the weights of the kernels' sum
``K(d) = sum_k d_k K_k``; the weights say which view of the data the classifier uses.
"""

import matplotlib.pyplot as plt
import numpy as np

from mklearn import MKLClassifier
from mklearn.kernels import RBF, KernelBank

rng = np.random.default_rng(0)
X = rng.normal(size=(120, 2))
y = np.where(np.sin(2 * X[:, 0]) > 0, 1, -1)
order = np.lexsort((X[:, 0], y))  # sorted by label, then by the first feature
X, y = X[order], y[order]

kernels = [RBF(sigma=2.0), RBF(sigma=0.5, features=[1]), RBF(sigma=0.5, features=[0])]
model = MKLClassifier(kernels=kernels, regularizer="l1", C=1.0).fit(X, y)
print("weights:", dict(zip(model.kernel_names_, model.kernel_weights_.round(3), strict=True)))
print("training accuracy:", model.score(X, y))

# %%
# The base kernel matrices (points sorted by label, then by the first feature) and the
# learned combination: the kernel on the first feature sees the label blocks, and l1-MKL gives
# it all the weight.
stack = KernelBank(kernels).fit(X).transform(X)
fig, axes = plt.subplots(1, 4, figsize=(12, 3.6), layout="constrained")
for k, ax in enumerate(axes[:3]):
    ax.imshow(stack[:, :, k], cmap="viridis")
    ax.set_title(f"{model.kernel_names_[k]}\nd = {model.kernel_weights_[k]:.2f}", fontsize=9)
axes[3].imshow(stack @ model.kernel_weights_, cmap="viridis")
axes[3].set_title("learned K(d) = sum d_k K_k", fontsize=9)
for ax in axes:
    ax.set_xticks([])
    ax.set_yticks([])
plt.show()
