"""
EasyMKL and ALIGNF against the one-shot methods
===============================================

EasyMKL (Aiolli and Donini, Neurocomputing 2015) learns the weights from the margin between
the class hulls; ALIGNF (Cortes, Mohri and Rostamizadeh, JMLR 2012) maximises the centred
alignment of the combined kernel with the labels. Both fix the weights once and then train
one SVM, like the seed methods: uniform weights (``"average"``) and each kernel's own
alignment (``"align"``). SPG-GMKL, which optimises the weights with the SVM, is the
reference. Three-fold cross-validated accuracy and fit time on three bundled sets (at most
300 points of each), with the same 12 kernels.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import StratifiedKFold

from mklearn import MKLClassifier
from mklearn.datasets import load_dataset
from mklearn.kernels import RBF, Linear, Polynomial

family = [RBF(sigma=s) for s in (0.5, 1, 2, 4, 8, 16, 32)] + [
    Polynomial(degree=d) for d in (2, 3)] + [Linear(), RBF(sigma=2, features=[0]),
                                             RBF(sigma=2, features=[1])]
methods = ["average", "align", "alignf", "easymkl", "spg"]
sets = ["ionosphere", "liver-disorders", "breast-cancer"]
scores = {m: [] for m in methods}
seconds = {m: [] for m in methods}
for name in sets:
    X, y = load_dataset(name)
    X, y = X[:300], y[:300]
    X = (X - X.mean(axis=0)) / np.maximum(X.std(axis=0), 1e-12)
    folds = StratifiedKFold(3, shuffle=True, random_state=0).split(X, y)
    runs = {m: ([], []) for m in methods}
    for train, test in folds:
        for method in methods:
            model = MKLClassifier(kernels=family, solver=method, regularizer="l1", C=10.0)
            start = time.perf_counter()
            model.fit(X[train], y[train])
            runs[method][1].append(time.perf_counter() - start)
            runs[method][0].append(model.score(X[test], y[test]))
    for method in methods:
        scores[method].append(np.mean(runs[method][0]))
        seconds[method].append(np.mean(runs[method][1]))
        print(f"{name:16s} {method:8s} accuracy {scores[method][-1]:.3f} "
              f"fit {seconds[method][-1]:.3f} s")

# %%
# Accuracy (left) and fit time (right) per set and method.
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
width = 0.16
for i, method in enumerate(methods):
    offsets = np.arange(len(sets)) + (i - 2) * width
    left.bar(offsets, scores[method], width, label=method)
    right.bar(offsets, seconds[method], width, label=method)
for ax in (left, right):
    ax.set_xticks(np.arange(len(sets)), sets)
left.set_ylim(0.5, 1.0)
left.set_ylabel("3-fold accuracy")
right.set_ylabel("fit seconds (mean over folds)")
right.set_yscale("log")
left.legend(ncol=2, fontsize=8)
fig.tight_layout()
plt.show()
