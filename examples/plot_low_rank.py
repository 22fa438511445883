"""
Exact kernels against low-rank features
=======================================

With ``kernel_approximation="nystroem"`` every base kernel is held as low-rank features
``K_k ~ Phi_k Phi_k'`` on ``n_components`` landmarks, and the solver works in feature space
with no ``n x n`` array; the default ``"auto"`` does so from 20,000 training points on.
Here, on 3,000 synthetic points, the exact fit is compared with Nystroem features of
growing rank: the measured approximation error, the test accuracy and the fit time.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from mklearn import MKLClassifier

rng = np.random.default_rng(0)
X = np.column_stack([rng.normal(size=(3000, 4)), rng.integers(0, 2, size=(3000, 3))])
y = np.where(np.sin(2 * X[:, 0]) * X[:, 1] + X[:, 4] - 0.5 > 0, 1, -1)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

start = time.perf_counter()
exact = MKLClassifier(kernel_approximation="exact").fit(X_train, y_train)
exact_seconds = time.perf_counter() - start
exact_accuracy = exact.score(X_test, y_test)
print(f"exact: accuracy {exact_accuracy:.3f}, {exact_seconds:.2f} s")

ranks = [25, 50, 100, 200, 400]
errors, accuracies, seconds = [], [], []
for rank in ranks:
    start = time.perf_counter()
    model = MKLClassifier(kernel_approximation="nystroem", n_components=rank,
                          random_state=0).fit(X_train, y_train)
    seconds.append(time.perf_counter() - start)
    errors.append(model.approximation_error_)
    accuracies.append(model.score(X_test, y_test))
    print(f"nystroem {rank}: error {errors[-1]:.1e}, accuracy {accuracies[-1]:.3f}, "
          f"{seconds[-1]:.2f} s")

# %%
# Error, accuracy and time against the rank; the dashed lines are the exact fit's.
fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
axes[0].loglog(ranks, errors, "o-")
axes[0].set_ylabel("approximation_error_")
axes[1].semilogx(ranks, accuracies, "o-")
axes[1].axhline(exact_accuracy, color="k", linestyle="--", label="exact")
axes[1].set_ylabel("test accuracy")
axes[1].legend()
axes[2].semilogx(ranks, seconds, "o-")
axes[2].axhline(exact_seconds, color="k", linestyle="--", label="exact")
axes[2].set_ylabel("fit seconds")
axes[2].legend()
for ax in axes:
    ax.set_xlabel("n_components (landmarks)")
fig.suptitle("2,250 training points, the default kernels")
fig.tight_layout()
plt.show()
