"""Two concentric stars: SILP-MKL kernel weights against the distance between the stars.

Sonnenburg, Raetsch, Schaefer and Schoelkopf, JMLR 7 (2006), section 4.1.1 and Figure 2: the
inner star has radius 4, the outer one 4 + distance; 2,000 points (1,000 per class) with
Gaussian noise of standard deviation 0.3; five RBF kernels ``exp(-||x - x'||^2 / w)`` with
widths ``w = 2 sigma^2`` in {0.01, 0.1, 1, 10, 100}; C = 0.5 and eps_MKL = 1e-3. The paper does
not give the star's outline; here the radius is ``R (1 + 0.2 cos(5 phi))`` (five points).

Run::

    python examples/silp_stars.py [OUT_DIR] [--n 2000] [--steps 12]

Writes ``silp_stars.png`` (three data sets, and the weights as a heatmap with the test error)
and ``silp_stars.json`` to OUT_DIR (default ``examples/out``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from mklearn import MKLClassifier
from mklearn.kernels import RBF, KernelBank

WIDTHS = (0.01, 0.1, 1.0, 10.0, 100.0)  # 2 sigma^2
INNER_RADIUS = 4.0
NOISE = 0.3
C = 0.5
EPS_MKL = 1e-3


def stars(n, distance, rng):
    """``n`` points, half on the inner star (label -1), half on the outer one (+1)."""
    half = n // 2
    X, y = [], []
    for radius, label in ((INNER_RADIUS, -1), (INNER_RADIUS + distance, 1)):
        phi = rng.uniform(0, 2 * np.pi, half)
        r = radius * (1 + 0.2 * np.cos(5 * phi))
        X.append(np.c_[r * np.cos(phi), r * np.sin(phi)] + NOISE * rng.normal(size=(half, 2)))
        y.append(np.full(half, label))
    return np.vstack(X), np.concatenate(y)


def run(n=2000, steps=12, seed=0):
    """Fit SILP-MKL at ``steps`` distances in [0.1, 5.9]; returns the results as a dict."""
    rng = np.random.default_rng(seed)
    bank = KernelBank([RBF(gamma=1.0 / w) for w in WIDTHS], normalize=None)
    distances = np.linspace(0.1, 5.9, steps)
    weights, errors, seconds = [], [], []
    for distance in distances:
        X, y = stars(n, distance, rng)
        X_test, y_test = stars(n, distance, rng)
        stack = bank.fit_transform(X)
        start = time.perf_counter()
        model = MKLClassifier(kernels="precomputed", solver="silp", C=C, tol=EPS_MKL)
        model.fit(stack, y)
        seconds.append(time.perf_counter() - start)
        cross = bank.transform(X_test)
        errors.append(float(np.mean(model.predict(cross) != y_test)))
        weights.append(model.kernel_weights_.tolist())
    return {"widths": list(WIDTHS), "distances": distances.tolist(), "weights": weights,
            "test_error": errors, "fit_seconds": seconds, "n": n}


def plot(results, path, seed=0):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(seed)
    fig = plt.figure(figsize=(11, 6.5))
    grid = fig.add_gridspec(2, 3, height_ratios=[1, 1.2])
    for column, distance in enumerate((0.1, 1.5, 4.0)):
        ax = fig.add_subplot(grid[0, column])
        X, y = stars(600, distance, rng)
        ax.scatter(*X[y < 0].T, s=3, c="tab:red")
        ax.scatter(*X[y > 0].T, s=3, c="tab:green")
        ax.set_title(f"distance {distance:g}")
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    ax = fig.add_subplot(grid[1, :])
    W = np.array(results["weights"]).T
    distances = np.array(results["distances"])
    step = distances[1] - distances[0] if distances.size > 1 else 1.0
    image = ax.imshow(W, aspect="auto", cmap="viridis", vmin=0, vmax=1, origin="lower",
                      extent=(distances[0] - step / 2, distances[-1] + step / 2, -0.5,
                              len(WIDTHS) - 0.5))
    ax.set_yticks(range(len(WIDTHS)), [f"width {w:g}" for w in WIDTHS])
    ax.set_xlabel("separation distance")
    fig.colorbar(image, ax=ax, label="kernel weight", pad=0.08)
    error_axis = ax.twinx()
    error_axis.plot(distances, results["test_error"], "o-", color="white", mfc="black")
    error_axis.set_ylabel("test error")
    error_axis.set_ylim(0, max(0.5, max(results["test_error"]) * 1.1))
    fig.suptitle("SILP-MKL on two concentric stars (Sonnenburg et al. 2006, Fig. 2)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="examples/out", help="output directory")
    parser.add_argument("--n", type=int, default=2000, help="points per data set")
    parser.add_argument("--steps", type=int, default=12, help="number of distances")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = run(args.n, args.steps)
    plot(results, out / "silp_stars.png")
    (out / "silp_stars.json").write_text(json.dumps(results, indent=1))
    for distance, w, error in zip(results["distances"], results["weights"],
                                  results["test_error"], strict=True):
        print(f"distance {distance:4.2f}  weights {np.round(w, 3)}  test error {error:.3f}")
    return results


if __name__ == "__main__":
    main()
