"""``GridSearchCV(MKLClassifier(), ..., n_jobs=2)`` against ``n_jobs=1``, as a user runs it.

Each search runs in a fresh Python process (so the ``n_jobs=2`` time holds the start of
joblib's worker processes and their first fits, as a user's first search does): 8 fits
(``C`` in 4 values, 2 folds) of ``MKLClassifier()`` with its defaults, then the refit.
Reported: the search's wall seconds (``GridSearchCV.fit``, refit included) for each
``n_jobs``, the speed-up, and whether both searches chose the same ``C`` with the same scores;
then the same for a second search in the same process (joblib's workers already started),
and the first search of ``SVC()`` for each ``n_jobs`` (the anchor: the workers' start of a
search that imports scikit-learn alone).

    python benchmarks/bench_grid_search.py                     # Sonar, Ionosphere, WDBC, Pima
    python benchmarks/bench_grid_search.py --sets sonar --repeats 3
    python benchmarks/bench_grid_search.py --sets a9a-6000 w8a-6000 --repeats 1 --run long

A set named ``<file>-<n>`` is ``n`` rows drawn (seed 0) from the LIBSVM file
``../shared/data/<file>/<file>``: fits of a few seconds, where processes must pay.

Writes ``benchmarks/results/grid_search.json``; the goal is a speed-up of at least 1.5.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small_sets import machine_info, save_run  # noqa: E402

OUTPUT = Path(__file__).resolve().parent / "results" / "grid_search.json"
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
GOAL_SPEEDUP = 1.5
GRID = {"C": [0.1, 1.0, 10.0, 100.0]}
FOLDS = 2

_SEARCH = r"""
import json, sys, time, warnings
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC
from mklearn import MKLClassifier
from mklearn.datasets import load_dataset

name, n_jobs, grid, folds = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4])
estimator = {"mkl": MKLClassifier, "svc": SVC}[sys.argv[6]]()
data, _, rows = name.rpartition("-")
if data and rows.isdigit():  # n rows drawn from a LIBSVM file of the shared data
    import numpy as np
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(f"{sys.argv[5]}/{data}/{data}")
    keep = np.sort(np.random.default_rng(0).choice(X.shape[0], int(rows), replace=False))
    X, y = X[keep].toarray(), y[keep]
else:
    X, y = load_dataset(name)[:2]
search = GridSearchCV(estimator, grid, n_jobs=n_jobs,
                      cv=StratifiedKFold(folds, shuffle=True, random_state=0))
seconds = []
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for _ in range(2):  # the second search finds joblib's workers started
        start = time.perf_counter()
        search.fit(X, y)
        seconds.append(time.perf_counter() - start)
print(json.dumps({"seconds": seconds[0], "seconds_again": seconds[1],
                  "best_params": search.best_params_,
                  "shortest_fit": float(search.cv_results_["mean_fit_time"].min()),
                  "refit_seconds": search.refit_time_,
                  "mean_test_score": search.cv_results_["mean_test_score"].tolist()}))
"""


def search_once(name: str, n_jobs: int, estimator: str = "mkl") -> dict:
    """One search in a fresh process: its seconds, chosen parameters and scores.

    ``estimator`` is ``"mkl"`` (``MKLClassifier()``) or ``"svc"`` (``SVC()``, the anchor:
    what the workers' start costs a search that imports scikit-learn alone).
    """
    done = subprocess.run(
        [sys.executable, "-c", _SEARCH, name, str(n_jobs), json.dumps(GRID), str(FOLDS),
         str(DATA), estimator],
        capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(name: str, repeats: int) -> dict:
    """Alternating ``n_jobs=1`` and ``n_jobs=2`` searches; the fastest of each."""
    runs, anchor = {1: [], 2: []}, {1: [], 2: []}
    for _ in range(repeats):
        for n_jobs in (1, 2):
            runs[n_jobs].append(search_once(name, n_jobs))
            anchor[n_jobs].append(search_once(name, n_jobs, "svc")["seconds"])
    errors = [r["error"] for rs in runs.values() for r in rs if "error" in r]
    if errors:
        return {"set": name, "error": errors[0]}
    best = {n_jobs: min(rs, key=lambda r: r["seconds"]) for n_jobs, rs in runs.items()}
    again = {n_jobs: min(r["seconds_again"] for r in rs) for n_jobs, rs in runs.items()}
    return {
        "set": name,
        "seconds_n_jobs_1": best[1]["seconds"],
        "seconds_n_jobs_2": best[2]["seconds"],
        "speedup": best[1]["seconds"] / best[2]["seconds"],
        "shortest_fit_seconds": best[1]["shortest_fit"],
        "refit_seconds": best[1]["refit_seconds"],
        "seconds_again_n_jobs_1": again[1],
        "seconds_again_n_jobs_2": again[2],
        "speedup_again": again[1] / again[2],
        "same_result": (best[1]["best_params"] == best[2]["best_params"]
                        and best[1]["mean_test_score"] == best[2]["mean_test_score"]),
        "all_seconds": {str(k): [r["seconds"] for r in rs] for k, rs in runs.items()},
        "svc_seconds_n_jobs_1": min(anchor[1]),
        "svc_seconds_n_jobs_2": min(anchor[2]),
        "svc_all_seconds": {str(k): v for k, v in anchor.items()},
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["sonar", "ionosphere", "wdbc", "pima"])
    parser.add_argument("--repeats", type=int, default=2, help="searches per n_jobs (fastest)")
    parser.add_argument("--run", default="default", help="name of this run in the JSON")
    args = parser.parse_args(argv)
    print(f"GridSearchCV(MKLClassifier(), {GRID}, cv={FOLDS}): "
          f"{len(GRID['C']) * FOLDS} fits + refit, fresh process each")
    print(f"{'set':<12} {'n_jobs=1 s':>11} {'n_jobs=2 s':>11} {'speed-up':>9} {'same':>5}   "
          "second search: n_jobs=1 s, n_jobs=2 s, speed-up;   SVC(): n_jobs=1 s, n_jobs=2 s")
    rows = []
    for name in args.sets:
        row = measure(name, args.repeats)
        rows.append(row)
        if "error" in row:
            print(f"{name:<12} error: {row['error']}", flush=True)
            continue
        print(f"{name:<12} {row['seconds_n_jobs_1']:>11.2f} {row['seconds_n_jobs_2']:>11.2f} "
              f"{row['speedup']:>9.2f} {str(row['same_result']):>5}   "
              f"{row['seconds_again_n_jobs_1']:.2f}, {row['seconds_again_n_jobs_2']:.2f}, "
              f"{row['speedup_again']:.2f};   {row['svc_seconds_n_jobs_1']:.2f}, "
              f"{row['svc_seconds_n_jobs_2']:.2f}", flush=True)
    speedups = [r["speedup"] for r in rows if "speedup" in r]
    if speedups:
        print(f"smallest speed-up {min(speedups):.2f} (goal at least {GOAL_SPEEDUP})")
    save_run({"machine": machine_info(), "grid": GRID, "folds": FOLDS,
              "goal_speedup": GOAL_SPEEDUP, "rows": rows}, OUTPUT, args.run)


if __name__ == "__main__":
    main()
