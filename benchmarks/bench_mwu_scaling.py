"""MWUMKL's scalability experiments (Moeller et al., AISTATS 2014, section 5, Figures 3-4, Table 2).

1. **Data scalability** (paper Figures 4a/4b): Adult (``a9a`` train / ``a9a.t`` test, 123 binary
   features) and Web (``w8a``, 300 binary features; only its training file is here, so a seeded
   stratified 80/20 split of it), features scaled to [0, 1], 12 kernels on all features
   (``mwumkl_kernels(per_feature=False)``: Gaussians ``exp(-||x - z||^2 / b)``,
   ``b = 2^0, ..., 2^4``, and ``(x'z + 1)^q``, ``q = 1, 2, 3``), growing fractions of the
   training set, always tested on the whole test set. Methods: MWUMKL (columns on demand,
   ``evaluate_objective=False``: no SVM call, no n x n matrix), LIBLINEAR+ (one sklearn
   ``Nystroem`` per kernel, 150 components, then ``LinearSVC``) and UNIFORM (``SVC`` on the
   precomputed average kernel, only up to ``--uniform-max-n`` points: it needs the n x n matrix).
   Time of the fit (kernel work included), test accuracy and peak memory (``tracemalloc``: numpy
   allocations; memory allocated inside LIBSVM / LIBLINEAR is not traced).
2. **Paper sizes** (paper Table 2): Adult with 39,073 points and 3 kernels (a9a and a9a.t pooled,
   80% drawn: the paper's size; the paper does not say which 3 kernels, we take the Gaussians
   ``b = 2^0, 2^2, 2^4``), with the paper's epsilon 0.05. CodRna is not in /work/shared/data: not
   measured.
3. **Many on-the-fly kernels**: Sonar (all 208 points) with ``--sonar-kernels`` single-feature
   kernels (per feature: the 3 polynomials and Gaussians with log-spaced bandwidths
   ``2^-2 .. 2^6``), epsilon 0.2; the paper ran 1,000,000 kernels in 3.65 hours.

C is fixed, not cross-validated (the paper chose it by CV): with unit-trace kernels the SVM
scales as ``C / n`` on kernels of unit diagonal, so MWUMKL and UNIFORM use ``C = --C-eff * n``
and LIBLINEAR+ (unscaled kernels) ``C = --C-eff``. Timings are wall-clock on a shared machine
(2 cores, other jobs running): see ``load_average_at_start`` in the JSON.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
from bench_small_sets import machine_info, save_run

DATA = Path("/work/shared/data")
DEFAULT_OUTPUT = Path(__file__).resolve().parent / "results" / "mwu_scaling.json"
PAPER_EPSILON = {"adult": 0.05, "web": 0.07}  # section 5, chosen there by CV
# Table 2 of the paper: MWUMKL with on-the-fly kernel computations (Core 2 Quad 2.4 GHz, 2 GB).
PAPER_TABLE2 = [
    {"data": "Adult", "points": 39073, "kernels": 3, "seconds": 13 * 60},
    {"data": "CodRna", "points": 47628, "kernels": 3, "seconds": 147},
    {"data": "Sonar 1M", "points": 208, "kernels": 1_000_000, "seconds": 3.65 * 3600},
]
GOAL_SPEEDUP = 10.0
_PREDICT_BYTES = 128 * 2**20


# ----------------------------------------------------------------------------- data
def load(name, seed):
    """(X_train, y_train, X_test, y_test), features scaled to [0, 1] on the training part."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import MinMaxScaler

    from mklearn.datasets import load_svmlight

    if name == "adult":
        X, y = load_svmlight(DATA / "a9a" / "a9a", n_features=123)
        X_test, y_test = load_svmlight(DATA / "a9a" / "a9a.t", n_features=123)
    elif name == "web":
        X_all, y_all = load_svmlight(DATA / "w8a" / "w8a", n_features=300)
        X, X_test, y, y_test = train_test_split(
            X_all, y_all, test_size=0.2, stratify=y_all, random_state=seed
        )
    else:
        raise ValueError(name)
    scaler = MinMaxScaler().fit(X)
    return scaler.transform(X), y, np.clip(scaler.transform(X_test), 0.0, 1.0), y_test


def _measure(fn):
    """Run fn() under tracemalloc; return (result, seconds, peak MB)."""
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    try:
        result = fn()
    finally:
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return result, seconds, peak


# -------------------------------------------------------------------------- methods
def _predict_blocks(model, X, n_support, n_kernels):
    """Decision values in row blocks (the test x support-vector stack of one block stays small)."""
    block = max(1, int(_PREDICT_BYTES // (8 * max(n_support, 1) * n_kernels)))
    return np.concatenate(
        [model.decision_function(X[i : i + block]) for i in range(0, X.shape[0], block)]
    )


def run_mwu(specs, X, y, X_test, y_test, C, epsilon, cache_size, kernel_dtype="float32"):
    from mklearn import MKLClassifier

    model = MKLClassifier(
        kernels=list(specs),
        solver="mwu",
        kernel_normalization="trace",  # the paper's protocol
        C=C,
        cache_size=cache_size,
        kernel_dtype=kernel_dtype,
        solver_options={"epsilon": epsilon, "evaluate_objective": False},
    )
    _, seconds, peak = _measure(lambda: model.fit(X, y))
    active = int(np.sum(model.kernel_weights_ > 0))
    scores = _predict_blocks(model, X_test, model.support_.size, active)
    accuracy = float(np.mean(np.where(scores > 0, model.classes_[1], model.classes_[0]) == y_test))
    last = model.history_[-1]
    return {
        "seconds": seconds,
        "accuracy": accuracy,
        "peak_mb": peak,
        "n_iter": int(model.history_[-1]["iteration"]),  # MWU iterations (n_iter_: checks)
        "n_support": int(model.support_.size),
        "weights": model.kernel_weights_.tolist(),
        "relative_gap": last["duality_gap"] / abs(last["upper"]) if last["upper"] else None,
        "cache_hits": last["cache_hits"],
        "cache_misses": last["cache_misses"],
        "forced": last["forced"],
    }


def _nystroem_maps(specs, n_components):
    from sklearn.kernel_approximation import Nystroem

    from mklearn.kernels.specs import KIND_RBF

    maps = []
    for spec in specs:
        gamma, coef0, degree = spec.numeric_params()
        if spec.kind == KIND_RBF:
            maps.append(
                Nystroem(kernel="rbf", gamma=gamma, n_components=n_components, random_state=0)
            )
        else:
            maps.append(
                Nystroem(
                    kernel="poly",
                    gamma=gamma,
                    coef0=coef0,
                    degree=degree,
                    n_components=n_components,
                    random_state=0,
                )
            )
    return maps


def run_liblinear(specs, X, y, X_test, y_test, C, n_components):
    from sklearn.svm import LinearSVC

    components = min(n_components, X.shape[0])

    def fit():
        maps = [nys.fit(X) for nys in _nystroem_maps(specs, components)]
        features = np.hstack([nys.transform(X) for nys in maps])
        return maps, LinearSVC(C=C).fit(features, y)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (maps, model), seconds, peak = _measure(fit)
    predictions = np.concatenate(
        [
            model.predict(np.hstack([nys.transform(X_test[i : i + 4096]) for nys in maps]))
            for i in range(0, X_test.shape[0], 4096)
        ]
    )
    return {
        "seconds": seconds,
        "accuracy": float(np.mean(predictions == y_test)),
        "peak_mb": peak,
        "converged": not any("converge" in str(w.message) for w in caught),
    }


def run_uniform(specs, X, y, X_test, y_test, C):
    from sklearn.svm import SVC

    from mklearn.kernels import KernelBank
    from mklearn.kernels.columns import KernelColumns

    def fit():
        bank = KernelBank(specs).fit(X)
        columns = KernelColumns(bank)
        n, m = X.shape[0], len(specs)
        K = np.empty((n, n))
        block = max(1, (64 * 2**20) // (8 * n * m))
        for start in range(0, n, block):
            rows = np.arange(start, min(start + block, n))
            K[rows] = columns.rows(rows).mean(axis=0)
        return bank, SVC(kernel="precomputed", C=C).fit(K, y)

    (bank, model), seconds, peak = _measure(fit)
    sv = model.support_
    block = max(1, (64 * 2**20) // (8 * sv.size * len(specs)))
    scores = np.concatenate(
        [
            bank.transform(X_test[i : i + block], rows=sv).mean(axis=2) @ model.dual_coef_[0]
            + model.intercept_[0]
            for i in range(0, X_test.shape[0], block)
        ]
    )
    predictions = np.where(scores > 0, model.classes_[1], model.classes_[0])
    return {
        "seconds": seconds,
        "accuracy": float(np.mean(predictions == y_test)),
        "peak_mb": peak,
        "n_support": int(sv.size),
    }


# --------------------------------------------------------------------------- drivers
def data_scalability(name, args):
    from mklearn.kernels import mwumkl_kernels

    X, y, X_test, y_test = load(name, args.seed)
    specs = mwumkl_kernels(per_feature=False).expand(X)
    order = np.random.default_rng(args.seed).permutation(len(y))
    epsilon = args.epsilon or PAPER_EPSILON[name]
    rows, uniform_done = [], False
    for fraction in args.fractions:
        take = order[: max(20, int(round(fraction * len(y))))]
        Xf, yf = X[take], y[take]
        n = len(take)
        row = {"fraction": fraction, "n": n, "epsilon": epsilon}
        row["MWUMKL"] = run_mwu(
            specs, Xf, yf, X_test, y_test, args.C_eff * n, epsilon, args.cache_size,
            args.kernel_dtype,
        )
        if n <= args.liblinear_max_n:
            row["LIBLINEAR+"] = run_liblinear(
                specs, Xf, yf, X_test, y_test, args.C_eff, args.nystroem
            )
        if n <= args.uniform_max_n and not uniform_done:
            row["UNIFORM"] = run_uniform(specs, Xf, yf, X_test, y_test, args.C_eff * n)
            uniform_done = row["UNIFORM"]["seconds"] > args.uniform_max_seconds
        rows.append(row)
        print("  " + _row_text(row), flush=True)
        yield rows


def _row_text(row):
    text = f"n={row['n']:>6}"
    for method in ("MWUMKL", "LIBLINEAR+", "UNIFORM"):
        r = row.get(method)
        text += (
            f" | {method} {r['seconds']:8.1f} s acc {r['accuracy']:.4f} {r['peak_mb']:7.1f} MB"
            if r
            else f" | {method} {'-':>8}"
        )
    return text


def paper_sizes(args):
    """Adult at the paper's 39,073 points with 3 kernels (a9a + a9a.t pooled, 80% drawn)."""
    from mklearn.datasets import load_svmlight
    from mklearn.kernels import RBF

    X1, y1 = load_svmlight(DATA / "a9a" / "a9a", n_features=123)
    X2, y2 = load_svmlight(DATA / "a9a" / "a9a.t", n_features=123)
    X, y = np.vstack([X1, X2]), np.concatenate([y1, y2])
    order = np.random.default_rng(args.seed).permutation(len(y))
    train, test = order[:39073], order[39073:]
    specs = [RBF(sigma=math.sqrt(b / 2)) for b in (1.0, 4.0, 16.0)]
    n = len(train)
    result = run_mwu(
        specs,
        X[train],
        y[train],
        X[test],
        y[test],
        args.C_eff * n,
        PAPER_EPSILON["adult"],
        args.cache_size,
        args.kernel_dtype,
    )
    paper = PAPER_TABLE2[0]["seconds"]
    result.update(
        {
            "data": "Adult",
            "points": n,
            "kernels": 3,
            "paper_seconds": paper,
            "speedup_vs_paper": paper / result["seconds"],
            "goal_met": paper / result["seconds"] >= GOAL_SPEEDUP,
        }
    )
    return result


def sonar_many_kernels(args):
    from mklearn import MKLClassifier
    from mklearn.datasets import load_dataset
    from mklearn.kernels import RBF, Polynomial

    X, y = load_dataset("sonar")
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    per_feature = max(4, args.sonar_kernels // X.shape[1])
    bandwidths = np.logspace(-2, 6, per_feature - 3, base=2.0)
    specs = []
    for f in range(X.shape[1]):
        specs += [Polynomial(degree=q, coef0=1.0, features=f) for q in (1, 2, 3)]
        specs += [RBF(sigma=math.sqrt(b / 2), features=f) for b in bandwidths]
    row_mb = 8 * len(specs) * X.shape[0] / 2**20
    model = MKLClassifier(
        kernels=specs,
        solver="mwu",
        kernel_normalization="trace",  # the paper's protocol
        C=args.C_eff * X.shape[0],
        cache_size=max(args.cache_size, 6 * row_mb),
        kernel_dtype=args.kernel_dtype,
        solver_options={"epsilon": 0.2, "evaluate_objective": False},
    )
    _, seconds, peak = _measure(lambda: model.fit(X, y))
    m = len(specs)
    paper = PAPER_TABLE2[2]["seconds"] * m / PAPER_TABLE2[2]["kernels"]
    last = model.history_[-1]
    return {
        "kernels": m,
        "points": int(X.shape[0]),
        "seconds": seconds,
        "peak_mb": peak,
        "n_iter": int(model.history_[-1]["iteration"]),  # MWU iterations (n_iter_: checks)
        "training_accuracy": _training_accuracy(model, X, y),
        "relative_gap": last["duality_gap"] / abs(last["upper"]),
        "paper_seconds_scaled_linearly": paper,
        "speedup_vs_paper": paper / seconds,
    }


def _training_accuracy(model, X, y):
    """Accuracy on the training points, predicted in blocks (m may be 10^5 kernels)."""
    active = int(np.sum(model.kernel_weights_ > 0))
    scores = _predict_blocks(model, X, model.support_.size, active)
    return float(np.mean(np.where(scores > 0, model.classes_[1], model.classes_[0]) == y))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="adult,web", help="comma-separated: adult, web")
    parser.add_argument(
        "--fractions",
        type=lambda s: [float(v) for v in s.split(",")],
        default=[0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0],
    )
    parser.add_argument(
        "--epsilon",
        type=float,
        default=None,
        help="MWUMKL epsilon (default: the paper's, Adult 0.05, Web 0.07)",
    )
    parser.add_argument("--C-eff", type=float, default=1.0, help="C on unit-diagonal kernels")
    parser.add_argument("--cache-size", type=float, default=200.0, help="MWUMKL row cache, MB")
    parser.add_argument(
        "--kernel-dtype",
        choices=("float32", "float64"),
        default="float32",
        help="MWUMKL kernel precision: float32 rows use a vectorised single-precision exp",
    )
    parser.add_argument("--nystroem", type=int, default=150, help="Nystroem components")
    parser.add_argument("--liblinear-max-n", type=int, default=10**9)
    parser.add_argument(
        "--uniform-max-n",
        type=int,
        default=10000,
        help="largest n for UNIFORM (its n x n kernel: 8 n^2 bytes)",
    )
    parser.add_argument(
        "--uniform-max-seconds",
        type=float,
        default=900.0,
        help="stop running UNIFORM after a fit slower than this",
    )
    parser.add_argument("--paper-sizes", action="store_true", help="run part 2 (Adult 39,073)")
    parser.add_argument(
        "--sonar-kernels",
        type=int,
        default=0,
        help="run part 3 with this many kernels (e.g. 100000); 0 skips it",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--run", default="default", help="the run's name in the result file")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    data = {
        "benchmark": "mwu_scaling",
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "machine": machine_info(),
        "paper_table2": PAPER_TABLE2,
        "data_scalability": {},
    }
    names = [d for d in args.data.split(",") if d]
    for name in names:
        print(
            f"{name}: 12 kernels on all features, epsilon {args.epsilon or PAPER_EPSILON[name]}",
            flush=True,
        )
        for rows in data_scalability(name, args):
            data["data_scalability"][name] = rows
            data["total_seconds"] = time.perf_counter() - start
            save_run(data, args.output, args.run)
    if args.paper_sizes:
        data["paper_sizes"] = paper_sizes(args)
        save_run(data, args.output, args.run)
    if args.sonar_kernels:
        data["sonar_many_kernels"] = sonar_many_kernels(args)
        save_run(data, args.output, args.run)
    data["total_seconds"] = time.perf_counter() - start
    save_run(data, args.output, args.run)
    print_summary(data)


def print_summary(data):
    print("\nPaper (Table 2, MWUMKL with on-the-fly kernels; Core 2 Quad 2.4 GHz) vs ours:")
    print(f"{'data':<10}{'points':>8}{'kernels':>10}{'paper s':>10}{'ours s':>10}{'speedup':>9}")
    ours = {}
    if "paper_sizes" in data:
        ours["Adult"] = data["paper_sizes"]
    if "sonar_many_kernels" in data:
        ours["Sonar 1M"] = data["sonar_many_kernels"]
    for paper in PAPER_TABLE2:
        mine = ours.get(paper["data"])
        if mine is None:
            print(
                f"{paper['data']:<10}{paper['points']:>8}{paper['kernels']:>10}"
                f"{paper['seconds']:>10.0f}{'not run':>10}"
            )
            continue
        if paper["data"] == "Sonar 1M":
            label = f"(paper scaled to {mine['kernels']} kernels)"
            print(
                f"{'Sonar':<10}{mine['points']:>8}{mine['kernels']:>10}"
                f"{mine['paper_seconds_scaled_linearly']:>10.0f}{mine['seconds']:>10.1f}"
                f"{mine['speedup_vs_paper']:>8.1f}x {label}"
            )
        else:
            print(
                f"{paper['data']:<10}{mine['points']:>8}{mine['kernels']:>10}"
                f"{paper['seconds']:>10.0f}{mine['seconds']:>10.1f}"
                f"{mine['speedup_vs_paper']:>8.1f}x  accuracy {mine['accuracy']:.4f}"
            )
    print(f"goal: >= {GOAL_SPEEDUP:.0f}x faster than the paper at the same sizes; CodRna: no data")


if __name__ == "__main__":
    sys.exit(main())
