"""The one-shot weight learners from rows of X: ALIGNF exact against its subsample estimate.

On w8a (the kernels and split of ``bench_large_scale.py``: 50 RBF kernels on the fly, rows
computed from X, never a stack), for each training size n: ALIGNF with
``solver_options={"estimate": "exact"}`` and with ``{"estimate": "subsample",
"subsample_size": s}`` for each ``--subsample`` s below n; per fit the time of the weights
(``history_[0]["weight_time"]``) and of the whole fit, the test accuracy and, for the
estimates, the largest absolute difference of the weights from the exact ones (the weights
sum to 1) and the centred alignment of their ``K(d)`` with ``y y'`` on all n points over that
of the exact weights (ALIGNF's objective; 1 at the optimum: many RBF widths are nearly
collinear, so weights far apart can align almost as well). A fit of ALIGNF on 500 points
first loads the compiled loops, outside the timings.

``--easymkl``: instead, EasyMKL (``solver="easymkl"``, the SVM learner) on the same kernels
and sizes against ``SVC()`` with one RBF kernel (gamma "scale") on the same X, one BLAS thread,
in the same process: fit seconds, their ratio and test accuracies.

    python benchmarks/bench_seeds.py --sizes 1000 2000 5000 --subsample 500 1000 2000
    python benchmarks/bench_seeds.py --sizes full --subsample 5000 --run full
    python benchmarks/bench_seeds.py --sizes full --easymkl --run easymkl-full
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_large_scale import kernel_specs, load  # noqa: E402
from bench_small_sets import machine_info, save_run  # noqa: E402

from mklearn.kernels.columns import KernelColumns  # noqa: E402
from mklearn.solvers.kernel_sums import kernel_sums  # noqa: E402

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "results" / "seeds.json"


def _fit(specs, X, y, X_test, y_test, options, C):
    from mklearn import MKLClassifier

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the estimate's notice
        model = MKLClassifier(kernels=specs, solver="alignf", C=C,
                              solver_options=options).fit(X, y)
    return model, {"fit_seconds": time.perf_counter() - start,
                   "weight_seconds": model.history_[0]["weight_time"],
                   "accuracy": float(model.score(X_test, y_test)),
                   "n_points_summed": model.history_[0]["n_points_summed"]}


def _alignment(sums, d):
    """Centred alignment of ``K(d)`` with ``y y'`` from the exact sums."""
    M, a = sums.centred_products(), sums.centred_targets()
    yc = sums.y - sums.y.mean()
    return float(d @ a / (np.sqrt(d @ M @ d) * (yc @ yc)))


def run(sizes, subsamples, seed, C, exact_max_n):
    X_all, y_all, X_test, y_test = load("w8a", seed)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y_all))
    specs, _ = kernel_specs(X_all, seed)
    _fit(specs, X_all[order[:500]], y_all[order[:500]], X_test, y_test, {}, C)  # warm-up
    rows = []
    for n in [len(y_all) if size == "full" else int(size) for size in sizes]:
        X, y = X_all[order[:n]], y_all[order[:n]]
        if n > exact_max_n:  # the estimate alone: no reference weights
            for s in [s for s in subsamples if s < n]:
                options = {"estimate": "subsample", "subsample_size": s, "random_state": seed}
                _, record = _fit(specs, X, y, X_test, y_test, options, C)
                rows.append({"n": n, "estimate": f"subsample {s}", **record})
                print(f"n={n} subsample {s}: weights {record['weight_seconds']:.1f} s, fit "
                      f"{record['fit_seconds']:.1f} s, accuracy {record['accuracy']:.4f}",
                      flush=True)
            continue
        exact, record = _fit(specs, X, y, X_test, y_test, {"estimate": "exact"}, C)
        sums = kernel_sums(KernelColumns(exact.bank_), y.astype(float), frobenius=True)
        best = _alignment(sums, exact.kernel_weights_)
        rows.append({"n": n, "estimate": "exact", **record, "weight_error": 0.0,
                     "alignment": best, "alignment_ratio": 1.0})
        print(f"n={n} exact: weights {record['weight_seconds']:.1f} s, fit "
              f"{record['fit_seconds']:.1f} s, accuracy {record['accuracy']:.4f}", flush=True)
        for s in [s for s in subsamples if s < n]:
            options = {"estimate": "subsample", "subsample_size": s, "random_state": seed}
            model, record = _fit(specs, X, y, X_test, y_test, options, C)
            error = float(np.abs(model.kernel_weights_ - exact.kernel_weights_).max())
            ratio = _alignment(sums, model.kernel_weights_) / best
            rows.append({"n": n, "estimate": f"subsample {s}", **record, "weight_error": error,
                         "alignment_ratio": ratio})
            print(f"n={n} subsample {s}: weights {record['weight_seconds']:.1f} s, fit "
                  f"{record['fit_seconds']:.1f} s, accuracy {record['accuracy']:.4f}, largest "
                  f"weight error {error:.4f}, alignment {ratio:.4f} of the exact", flush=True)
    return rows


def run_easymkl(sizes, seed, C):
    """EasyMKL from rows of X against ``SVC()`` on each training size."""
    from sklearn.svm import SVC
    from threadpoolctl import threadpool_limits

    from mklearn import MKLClassifier

    X_all, y_all, X_test, y_test = load("w8a", seed)
    order = np.random.default_rng(seed).permutation(len(y_all))
    specs, _ = kernel_specs(X_all, seed)
    rows = []
    with threadpool_limits(1):
        MKLClassifier(kernels=specs, solver="easymkl").fit(X_all[order[:300]], y_all[order[:300]])
        for n in [len(y_all) if size == "full" else int(size) for size in sizes]:
            X, y = X_all[order[:n]], y_all[order[:n]]
            start = time.perf_counter()
            svc = SVC().fit(X, y)
            svc_seconds = time.perf_counter() - start
            start = time.perf_counter()
            model = MKLClassifier(kernels=specs, solver="easymkl", C=C, n_jobs=1).fit(X, y)
            seconds = time.perf_counter() - start
            row = {"n": n, "svc_seconds": svc_seconds, "easymkl_seconds": seconds,
                   "ratio": seconds / svc_seconds, "svc_accuracy": float(svc.score(X_test, y_test)),
                   "easymkl_accuracy": float(model.score(X_test, y_test)),
                   "kernel_storage": model.kernel_storage_}
            rows.append(row)
            print(f"n={n}: SVC() {svc_seconds:.1f} s, EasyMKL {seconds:.1f} s "
                  f"({row['ratio']:.2f}x), accuracy {row['svc_accuracy']:.4f} / "
                  f"{row['easymkl_accuracy']:.4f}", flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["1000", "2000", "5000"],
                        help="training sizes, or 'full' (w8a's 39,799 training points)")
    parser.add_argument("--exact-max-n", type=int, default=5000,
                        help="above it the estimates alone (no exact reference)")
    parser.add_argument("--subsample", type=int, nargs="+", default=[500, 1000, 2000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-C", type=float, default=10.0)
    parser.add_argument("--easymkl", action="store_true",
                        help="EasyMKL against SVC() instead of ALIGNF's estimates")
    parser.add_argument("--run", default="default")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    rows = (run_easymkl(args.sizes, args.seed, args.C) if args.easymkl
            else run(args.sizes, args.subsample, args.seed, args.C, args.exact_max_n))
    save_run({"machine": machine_info(), "flags": {k: str(v) for k, v in vars(args).items()},
              "rows": rows}, args.output, args.run)


if __name__ == "__main__":
    main()
