"""mklearn's SMO core against LIBSVM (scikit-learn's ``SVC``) on the same kernel matrix.

Every MKL solver spends part of its time in single-kernel SVM solves on the one SMO core
(:mod:`mklearn.svm.core`), so its cost per step is compared here with LIBSVM's, which uses the
same working-set selection (WSS2) and shrinking. The kernel is the uniform combination of a
problem of ``bench_unseen.py`` (the SPG-GMKL paper's anchor), a dense float64 matrix given to
both: ``SVC(kernel="precomputed", C, tol)`` and :func:`mklearn.svm.smo.svc_dual` with the
same ``tol`` (both stop when the maximal KKT violation is at most ``tol``), cold starts, with
shrinking on and off. Each time is the best of ``--repeats`` in the same process; SVC's
includes scikit-learn's input checks and its copy of the matrix (about 1 ms at n = 1,000).
Reported: time, steps (``SVC.n_iter_`` and ours), time per step and the dual objectives.

    python benchmarks/bench_smo_core.py
    python benchmarks/bench_smo_core.py --problems a1a-1000 --C 100 --tol 1e-4

Writes ``benchmarks/results/smo_core.json``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import time
from pathlib import Path

import bench_unseen as bu
import numpy as np
from bench_small_sets import machine_info

DEFAULT_PROBLEMS = ["a1a-1000", "a8a-1500-poly", "w8a-1000", "dna2-1500", "mfeat0-1500"]


def _best(fit, repeats):
    best, result = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fit()
        best = min(best, time.perf_counter() - start)
    return best, result


def run(problem, C, tol, shrinking, repeats):
    from sklearn.svm import SVC

    from mklearn.svm.smo import solve_qp

    X, y, X_test, _ = bu.load(problem, 0)
    kernels = bu.compute_kernels(X, X_test, bu.kernel_family(problem, X, 0))
    K = np.ascontiguousarray(kernels.train.mean(axis=2))
    signs = np.where(y > 0, 1.0, -1.0)
    n = y.size
    solve_qp(K[:40, :40], signs[:40], -np.ones(40), np.full(40, C))  # load the compiled loop
    svc_seconds, svc = _best(
        lambda: SVC(kernel="precomputed", C=C, tol=tol, shrinking=shrinking).fit(K, y), repeats)
    our_seconds, ours = _best(
        lambda: solve_qp(K, signs, -np.ones(n), np.full(n, C), tol=tol, shrinking=shrinking),
        repeats)
    coef = svc.dual_coef_[0]
    block = K[np.ix_(svc.support_, svc.support_)]
    svc_objective = float(np.abs(coef).sum() - 0.5 * coef @ block @ coef)
    svc_steps = int(svc.n_iter_[0])
    return {
        "problem": problem.name, "n": n, "C": C, "tol": tol, "shrinking": shrinking,
        "svc_seconds": svc_seconds, "svc_steps": svc_steps,
        "svc_us_per_step": 1e6 * svc_seconds / svc_steps, "svc_dual_objective": svc_objective,
        "ours_seconds": our_seconds, "ours_steps": int(ours.n_iter),
        "ours_us_per_step": 1e6 * our_seconds / ours.n_iter,
        "ours_dual_objective": -float(ours.objective),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [p.name for p in bu.PROBLEMS]
    parser.add_argument("--problems", nargs="+", choices=names, default=DEFAULT_PROBLEMS)
    parser.add_argument("--C", nargs="+", type=float, default=[100.0])
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", default=str(Path(__file__).parent / "results" /
                                                "smo_core.json"))
    args = parser.parse_args(argv)
    if args.tol <= 0 or args.repeats < 1 or min(args.C) <= 0:
        parser.error("--tol and --C must be positive and --repeats at least 1")
    by_name = {p.name: p for p in bu.PROBLEMS}
    rows = []
    print(f"{'problem':15s} {'C':>5s} {'shrink':>6s} | {'SVC ms':>8s} {'steps':>7s} "
          f"{'us/step':>7s} | {'ours ms':>8s} {'steps':>7s} {'us/step':>7s} | per step")
    for name in args.problems:
        for C in args.C:
            for shrinking in (True, False):
                r = run(by_name[name], C, args.tol, shrinking, args.repeats)
                rows.append(r)
                print(f"{name:15s} {C:5g} {str(shrinking):>6s} | {1e3 * r['svc_seconds']:8.1f} "
                      f"{r['svc_steps']:7d} {r['svc_us_per_step']:7.2f} | "
                      f"{1e3 * r['ours_seconds']:8.1f} {r['ours_steps']:7d} "
                      f"{r['ours_us_per_step']:7.2f} | "
                      f"{r['ours_us_per_step'] / r['svc_us_per_step']:.2f}x", flush=True)
    ratios = [r["ours_us_per_step"] / r["svc_us_per_step"] for r in rows]
    print(f"time per step, ours / LIBSVM: median {np.median(ratios):.2f}, "
          f"range {min(ratios):.2f}-{max(ratios):.2f}")
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "w") as f:
        json.dump({"date": _dt.date.today().isoformat(), "machine": machine_info(),
                   "args": vars(args), "rows": rows}, f, indent=1)
    print(f"JSON: {args.output}")


if __name__ == "__main__":
    main()
