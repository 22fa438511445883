"""
Four solvers converging on one problem
======================================

SPG-GMKL, SILP and mirror descent solve l1-MKL; SMO-MKL solves the lp-regularised dual
(here p = 1.1, close to l1) without building the kernel stack. All four run on the same
Sonar training set with the same 122 RBF kernels, and each records the relative duality
gap, a certificate of how far it is from the optimum, at every outer iteration in
``history_``. The plot shows that gap against the time the solver had spent.
"""

import matplotlib.pyplot as plt
import numpy as np

from mklearn import MKLClassifier
from mklearn.datasets import load_sonar
from mklearn.kernels import RBF

X, y = load_sonar()
X = (X - X.mean(axis=0)) / X.std(axis=0)
kernels = [RBF(sigma=s) for s in (2.0, 5.0)] + [
    RBF(sigma=s, features=[j]) for j in range(X.shape[1]) for s in (0.5, 2.0)]

setups = {
    "SPG-GMKL (l1)": dict(solver="spg", regularizer="l1"),
    "SILP (l1)": dict(solver="silp", regularizer="l1"),
    "mirror descent (l1)": dict(solver="mirror", regularizer="l1"),
    "SMO-MKL (lp, p = 1.1)": dict(solver="smo", regularizer="lp", p=1.1, lam=1.0),
}
fig, ax = plt.subplots(figsize=(7, 4.5))
for label, options in setups.items():
    model = MKLClassifier(kernels=kernels, C=10.0, tol=1e-4, max_iter=2000,
                          **options).fit(X, y)
    times = [record["time"] for record in model.history_]
    gaps = [max(record["relative_duality_gap"], 1e-8) for record in model.history_]
    ax.loglog(np.maximum(times, 1e-4), gaps, marker=".", label=label)
    print(f"{label}: {model.n_iter_} iterations, {times[-1]:.2f} s, "
          f"relative gap {model.relative_duality_gap_:.1e}")
ax.axhline(1e-4, color="grey", linestyle=":", label="tol")
ax.set_xlabel("seconds")
ax.set_ylabel("relative duality gap")
ax.set_title("Sonar, 122 RBF kernels, C = 10")
ax.legend()
fig.tight_layout()
plt.show()
