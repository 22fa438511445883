"""
Products of kernels: one learned width per feature
==================================================

Instead of a weighted sum, ``combination="product"`` learns the product of one RBF kernel
per feature, ``K(d) = prod_j exp(-d_j (x_j - x'_j)^2)``, that is an RBF kernel with one
learned inverse width ``d_j`` per feature (SPG-GMKL's products, Jain, Vishwanathan and
Varma, KDD 2012). With the l1 regulariser most widths are zero: the features they belong to
are dropped, a feature selection learned with the classifier.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from mklearn import MKLClassifier
from mklearn.datasets import load_sonar
from mklearn.plotting import plot_kernel_weights

X, y = load_sonar()
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                    random_state=0)
model = MKLClassifier(combination="product", kernels="features", regularizer="l1",
                      lam=1.0, C=10.0).fit(X_train, y_train)
kept = np.flatnonzero(model.kernel_weights_)
print(f"{kept.size} of {X.shape[1]} features kept, test accuracy "
      f"{model.score(X_test, y_test):.3f}, {model.n_svm_solves_} SVM solves")

# %%
# The learned inverse widths, by feature (left), and the largest ones by name (right).
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
left.bar(np.arange(X.shape[1]), model.kernel_weights_, color="tab:blue")
left.set_xlabel("feature (sonar frequency band)")
left.set_ylabel("learned d_j")
left.set_title("Sonar: inverse width per feature")
plot_kernel_weights(model.kernel_weights_, model.kernel_names_, ax=right, top=10,
                    title="the 10 largest")
fig.tight_layout()
plt.show()
