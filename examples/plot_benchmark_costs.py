"""
Cost against the number of points and of kernels
================================================

Two benchmarks of the repository, read from their JSON results (``benchmarks/results/``),
not rerun here:

- ``bench_defaults.py``: ``MKLClassifier()`` with all defaults against its anchor,
  ``SVC()``, on the bundled and scikit-learn classification sets (subsets of at most 250
  points, the full sets, and public sets of 1,000 and 5,000 points no default was chosen
  on); fit + predict seconds over 5 folds.
- ``bench_mirror_scaling.py``: l1-MKL on two digit pairs with 10 to 10,000 kernels,
  150 training points, by SPG-GMKL, mirror descent and the projected-gradient baseline (PGD).
"""

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

try:
    RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"
except NameError:  # run by the documentation build, in examples/
    RESULTS = Path("..").resolve() / "benchmarks" / "results"


def load(name):
    return json.loads((RESULTS / name).read_text())


# %%
# Cost against n: the defaults and their ``SVC()`` anchor.
runs = load("defaults.json")["runs"]
rows = [r for run in ("default", "full", "unseen", "unseen-5000")
        for r in runs[run]["results"] if r["task"] == "classification"]
n = np.array([r["n_samples"] for r in rows])
mkl = np.array([r["mkl"]["fit_seconds"] + r["mkl"]["predict_seconds"] for r in rows])
anchor = np.array([r["anchors"]["plain"]["fit_seconds"] + r["anchors"]["plain"]["predict_seconds"]
                   for r in rows])
fig, left = plt.subplots(figsize=(7, 4.5))
left.loglog(n, mkl, "o", color="tab:blue", label="MKLClassifier() (defaults)")
left.loglog(n, anchor, "s", color="tab:grey", label="SVC() (anchor)")
for x, a, b in zip(n, mkl, anchor, strict=True):
    left.plot([x, x], [a, b], color="lightgrey", zorder=0)
ticks = [150, 250, 500, 1000, 2000, 5000]
left.set_xticks(ticks, [f"{t:,}" for t in ticks])
left.minorticks_off()
left.set_xlabel("training points n")
left.set_ylabel("fit + predict seconds (5 folds)")
left.set_title("cost against n (bench_defaults.py)")
left.legend()
fig.tight_layout()
print(f"cost over SVC(): median {np.median(mkl / anchor):.1f}x at n <= 250, "
      f"{np.median((mkl / anchor)[n >= 5000]):.1f}x at n = 5,000")

# %%
# Cost against the number of kernels m, with a line proportional to m as the anchor.
scaling = load("mirror_scaling.json")["rows"]
fig, right = plt.subplots(figsize=(7, 4.5))
for solver, color in (("spg", "tab:blue"), ("mirror", "tab:orange"), ("pgd", "tab:green")):
    for task, marker in (("3v5", "o"), ("1v7", "^")):
        points = [(r["n_kernels"], r[solver]["seconds"]) for r in scaling
                  if r["task"] == task and solver in r]
        m, seconds = np.array(points).T
        right.loglog(m, seconds, marker=marker, color=color,
                     label=f"{solver} ({task})")
m = np.array([10, 10_000])
right.loglog(m, 0.004 * m / 10, "k:", label="proportional to m")
right.set_xlabel("kernels m")
right.set_ylabel("fit seconds")
right.set_title("cost against m, 150 points (bench_mirror_scaling.py)")
right.legend(fontsize=8, ncol=2)
fig.tight_layout()
plt.show()
