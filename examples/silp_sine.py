"""Sine regression: SILP-MKL kernel weights of an epsilon-SVR against the sine's frequency.

Sonnenburg, Raetsch, Schaefer and Schoelkopf, JMLR 7 (2006), section 4.1.2 and Figure 3:
1,000 samples of a sine wave of increasing frequency, five RBF kernels
``exp(-||x - x'||^2 / w)`` with widths ``w = 2 sigma^2`` in {0.005, 0.05, 0.5, 1, 10}, C = 10.
The paper does not give the input range, the noise or the tube; here ``x`` is uniform on
[0, 2 pi], ``y = sin(f x)`` (noise-free: "learning a sine function") and epsilon = 0.1.

Run::

    python examples/silp_sine.py [OUT_DIR] [--n 1000] [--steps 11]

Writes ``silp_sine.png`` (three sine waves with their fits, and the weights as a heatmap)
and ``silp_sine.json`` to OUT_DIR (default ``examples/out``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from mklearn import MKLRegressor
from mklearn.kernels import RBF, KernelBank

WIDTHS = (0.005, 0.05, 0.5, 1.0, 10.0)  # 2 sigma^2
C = 10.0
EPSILON = 0.1
NOISE = 0.0
EPS_MKL = 1e-3


def sine(n, frequency, rng):
    x = np.sort(rng.uniform(0, 2 * np.pi, n))
    return x[:, None], np.sin(frequency * x) + NOISE * rng.normal(size=n)


def fit(x, y):
    bank = KernelBank([RBF(gamma=1.0 / w) for w in WIDTHS], normalize=None)
    model = MKLRegressor(kernels="precomputed", solver="silp", regularizer="l1", C=C,
                         epsilon=EPSILON, tol=EPS_MKL)
    return bank, model.fit(bank.fit_transform(x), y)


def run(n=1000, steps=11, seed=0):
    """Fit at ``steps`` frequencies in [0.5, 5]; returns the results as a dict."""
    rng = np.random.default_rng(seed)
    frequencies = np.linspace(0.5, 5.0, steps)
    weights, errors, seconds = [], [], []
    for frequency in frequencies:
        x, y = sine(n, frequency, rng)
        start = time.perf_counter()
        bank, model = fit(x, y)
        seconds.append(time.perf_counter() - start)
        x_test = np.linspace(0, 2 * np.pi, 500)[:, None]
        prediction = model.predict(bank.transform(x_test))
        errors.append(float(np.sqrt(np.mean((prediction - np.sin(frequency * x_test[:, 0]))
                                            ** 2))))
        weights.append(model.kernel_weights_.tolist())
    return {"widths": list(WIDTHS), "frequencies": frequencies.tolist(), "weights": weights,
            "rmse_to_sine": errors, "fit_seconds": seconds, "n": n}


def plot(results, path, n, seed=0):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(seed)
    fig = plt.figure(figsize=(11, 6.5))
    grid = fig.add_gridspec(2, 3, height_ratios=[1, 1.2])
    for column, frequency in enumerate((1.0, 2.5, 5.0)):
        ax = fig.add_subplot(grid[0, column])
        x, y = sine(min(n, 300), frequency, rng)
        bank, model = fit(x, y)
        grid_x = np.linspace(0, 2 * np.pi, 400)[:, None]
        ax.plot(x[:, 0], y, ".", ms=2, color="gray")
        ax.plot(grid_x[:, 0], model.predict(bank.transform(grid_x)), color="tab:blue")
        ax.set_title(f"frequency {frequency:g}")
    ax = fig.add_subplot(grid[1, :])
    W = np.array(results["weights"]).T
    f = np.array(results["frequencies"])
    step = f[1] - f[0] if f.size > 1 else 1.0
    image = ax.imshow(W, aspect="auto", cmap="viridis", vmin=0, vmax=1, origin="lower",
                      extent=(f[0] - step / 2, f[-1] + step / 2, -0.5, len(WIDTHS) - 0.5))
    ax.set_yticks(range(len(WIDTHS)), [f"width {w:g}" for w in WIDTHS])
    ax.set_xlabel("frequency")
    fig.colorbar(image, ax=ax, label="kernel weight")
    fig.suptitle("SILP-MKL epsilon-SVR on a sine wave (Sonnenburg et al. 2006, Fig. 3)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="examples/out", help="output directory")
    parser.add_argument("--n", type=int, default=1000, help="samples per data set")
    parser.add_argument("--steps", type=int, default=11, help="number of frequencies")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = run(args.n, args.steps)
    plot(results, out / "silp_sine.png", args.n)
    (out / "silp_sine.json").write_text(json.dumps(results, indent=1))
    for frequency, w, error in zip(results["frequencies"], results["weights"],
                                   results["rmse_to_sine"], strict=True):
        print(f"frequency {frequency:4.2f}  weights {np.round(w, 3)}  rmse {error:.3f}")
    return results


if __name__ == "__main__":
    main()
