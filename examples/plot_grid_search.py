"""
Model selection with GridSearchCV
=================================

The estimators are scikit-learn estimators, so their parameters are chosen by
cross-validation as any other's. Here ``C`` and the KL regulariser's strength ``lam`` of the
default model are searched on the WDBC breast-cancer data (a subset of 300 points),
five-fold, and the mean validation accuracy is drawn as a map.
"""

import matplotlib.pyplot as plt
from sklearn.model_selection import GridSearchCV, train_test_split

from mklearn import MKLClassifier
from mklearn.datasets import load_wdbc

X, y = load_wdbc()
X_train, X_test, y_train, y_test = train_test_split(X, y, train_size=300, stratify=y,
                                                    random_state=0)
grid = {"C": [0.1, 1.0, 10.0, 100.0], "lam": [0.2, 1.0, 5.0]}
search = GridSearchCV(MKLClassifier(), grid, cv=5).fit(X_train, y_train)
print("best:", search.best_params_, f"validation {search.best_score_:.3f}, "
      f"test {search.score(X_test, y_test):.3f}")

# %%
# Mean validation accuracy over the grid.
scores = search.cv_results_["mean_test_score"].reshape(len(grid["C"]), len(grid["lam"]))
fig, ax = plt.subplots(figsize=(5, 4))
image = ax.imshow(scores, cmap="viridis", origin="lower")
ax.set_xticks(range(len(grid["lam"])), grid["lam"])
ax.set_yticks(range(len(grid["C"])), grid["C"])
ax.set_xlabel("lam")
ax.set_ylabel("C")
for i in range(scores.shape[0]):
    for j in range(scores.shape[1]):
        ax.text(j, i, f"{scores[i, j]:.3f}", ha="center", va="center", color="w", fontsize=8)
fig.colorbar(image, ax=ax, label="5-fold accuracy")
ax.set_title("WDBC: GridSearchCV over C and lam")
fig.tight_layout()
plt.show()
