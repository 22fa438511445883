"""Seconds a user's first fit spends in numba (compiling, or loading machine code from its cache).

Each case fits once in a fresh Python process on 120 Sonar points (or 120 sparse count points,
for the sparse input), after whatever the set-up command left in numba's cache, and reports
the estimator's ``compile_time_`` (:mod:`mklearn.progress`: every interval numba held
its compiler lock) and the whole fit's seconds. Cases: every solver on dense X, sparse X, a
precomputed stack and float32 kernels, the regressor, one-class and the product of kernels;
each with ``n_jobs=1`` and ``n_jobs=2``.

    python benchmarks/bench_compile.py                 # after the README's set-up command
    python benchmarks/bench_compile.py --cases smo-dense spg-sparse

Writes ``benchmarks/results/compile.json``; the goal is at most 1 s in every case.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small_sets import machine_info, save_run  # noqa: E402

from mklearn.solvers import SOLVERS as REGISTRY  # noqa: E402

OUTPUT = Path(__file__).resolve().parent / "results" / "compile.json"
GOAL_SECONDS = 1.0
SOLVERS = ("auto", *REGISTRY)
INPUTS = ("dense", "sparse", "precomputed", "float32")
EXTRA = ("regressor", "one-class", "product")

_FIT = r"""
import json, sys, time, warnings
import numpy as np
import scipy.sparse
from mklearn import MKLClassifier, MKLRegressor, OneClassMKL
from mklearn.datasets import load_sonar

case, n_jobs = sys.argv[1], int(sys.argv[2])
X, y = load_sonar()
X, y = X[:120], y[:120]
params = {"n_jobs": n_jobs, "max_iter": 20}
if case in ("regressor", "one-class", "product"):
    kind, what = case, "dense"
else:
    kind, _, what = case.partition("-")
    params["solver"] = kind
if what == "sparse":  # count features: RBF kernels by table
    X = scipy.sparse.csr_matrix(np.rint(np.abs(X) * 4))
elif what == "float32":
    params["kernel_dtype"] = "float32"
elif what == "precomputed":
    from mklearn.kernels import KernelBank, resolve_kernels, simple_mkl_kernels
    X = KernelBank(resolve_kernels(simple_mkl_kernels(), X)[0]).fit_transform(X)
    params["kernels"] = "precomputed"
if kind == "product":
    params.update(combination="product", kernels="features", regularizer="l1")
if kind in ("regressor", "one-class"):
    params = {"max_iter": 20}  # no n_jobs
model = {"regressor": MKLRegressor, "one-class": OneClassMKL}.get(kind, MKLClassifier)
start = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fitted = model(**params).fit(X, y)
print(json.dumps({"compile_seconds": fitted.compile_time_,
                  "fit_seconds": time.perf_counter() - start}))
"""


def cases():
    return [f"{s}-{i}" for s in SOLVERS for i in INPUTS] + list(EXTRA)


def run_case(case: str, n_jobs: int) -> dict:
    """One fit of ``case`` in a fresh process: its compile and fit seconds, or the error."""
    done = subprocess.run([sys.executable, "-c", _FIT, case, str(n_jobs)], capture_output=True,
                          text=True, timeout=900)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=cases(), choices=cases())
    parser.add_argument("--n-jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--run", default="default", help="the run's name in the result file")
    args = parser.parse_args(argv)
    rows = []
    print(f"{'case':<22} {'n_jobs':>6} {'compile s':>10} {'fit s':>8}")
    for case in args.cases:
        for n_jobs in args.n_jobs:
            row = {"case": case, "n_jobs": n_jobs, **run_case(case, n_jobs)}
            rows.append(row)
            if "error" in row:
                print(f"{case:<22} {n_jobs:>6} error: {row['error'][:60]}", flush=True)
            else:
                flag = "" if row["compile_seconds"] <= GOAL_SECONDS else "   <- above 1 s"
                print(f"{case:<22} {n_jobs:>6} {row['compile_seconds']:>10.2f} "
                      f"{row['fit_seconds']:>8.2f}{flag}", flush=True)
    measured = [r["compile_seconds"] for r in rows if "compile_seconds" in r]
    above = [f"{r['case']}/{r['n_jobs']}" for r in rows
             if r.get("compile_seconds", 0.0) > GOAL_SECONDS or "error" in r]
    print(f"\nlargest: {max(measured, default=float('nan')):.2f} s; above {GOAL_SECONDS:g} s "
          f"or failed: {', '.join(above) or 'none'}")
    save_run({"machine": machine_info(), "goal_seconds": GOAL_SECONDS, "rows": rows,
              "above_goal": above}, args.output, args.run)


if __name__ == "__main__":
    main()
