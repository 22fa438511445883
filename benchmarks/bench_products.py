"""Products of kernels and the SPG ablation (Jain, Vishwanathan and Varma, KDD 2012).

Two parts, both on the seven small UCI sets (Sonar, Ionosphere, Liver, Breast cancer,
Australian, Diabetes/Pima, WPBC):

``products`` (the paper's Tables 5 and 9): the product of per-feature RBF kernels, one kernel
(width) per feature, ``K(d) = exp(-sum_k d_k gamma (x_k - z_k)^2)`` on standardised features,
``gamma = 1 / D``, starting at ``d = 1``; regularised by lp (``lam/2 ||d||_2^2``) and by l1
(``sigma sum d``). Stratified 5-fold cross validation (the paper's protocol); on each fold
SPG-GMKL and PGD (``solver="pgd"``: the authors' PGD, Armijo along the projection arc from a
unit step at every iteration, inner tolerance 1e-6) are fitted
with the same time cap; a fit that hits it is reported as "did not converge", as the paper does.
Reported per set: mean fit time, SVM evaluations, test accuracy, features selected (weight > 0),
final objective, and PGD time / SPG time.

``ablation`` (the paper's Tables 7 and 11): on the first fold of every set, PGD, PGD+S (spectral
step), PGD+N (non-monotone search), PGD+S+N and SPG (S+N+precision tuning), all without our
Newton phase, on sums of kernels (the SimpleMKL family, l1 simplex) and on products (lp and l1).

Differences from the paper: C is fixed (``--C``, default 10) instead of chosen by validation,
``lam = sigma = 1``; stopping is the relative duality gap 1e-3 for sums and the projected-gradient
norm 1e-3 (absolute, l_inf) for products; timings on a 2-core machine (``machine`` in the JSON).
Run ``python benchmarks/bench_products.py --help``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold

from mklearn import MKLClassifier
from mklearn.datasets import load_dataset
from mklearn.formulation.combinations import SumOfKernels
from mklearn.formulation.products import FeatureProduct, ProductOfRBF
from mklearn.formulation.regularizers import L1Penalty, L1Simplex, LpNorm
from mklearn.kernels import KernelBank, resolve_kernels
from mklearn.solvers.spg import spg_gmkl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small_sets import machine_info, save_run  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
SETS = {
    "sonar": "Sonar",
    "ionosphere": "Ionosphere",
    "liver": "Liver",
    "breast_cancer": "Breast-cancer",
    "australian": "Australian",
    "pima": "Diabetes",
    "wpbc": "WPBC",
}
SPEEDUP_GOAL = 10.0  # median over sets of PGD time / SPG time, products
OFF = {"spectral": False, "nonmonotone": False, "precision_tuning": False}
VARIANTS = {
    "PGD": OFF,
    "PGD+S": {**OFF, "spectral": True},
    "PGD+N": {**OFF, "nonmonotone": True},
    "PGD+S+N": {**OFF, "spectral": True, "nonmonotone": True},
    "SPG": {"spectral": True, "nonmonotone": True, "precision_tuning": True},
}


def _labels(y):
    return np.where(y == np.unique(y)[1], 1.0, -1.0)


def _folds(y, n_splits, seed):
    return list(StratifiedKFold(n_splits, shuffle=True, random_state=seed).split(y, y))


def _warm_up():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.repeat([0, 1], 15)
    for solver in ("spg", "pgd"):
        MKLClassifier(combination="product", kernels="features", solver=solver).fit(X, y)


def _fit_product(X, y, train, test, solver, reg, args):
    model = MKLClassifier(
        combination="product", kernels="features", solver=solver, regularizer=reg,
        lam=args.lam, C=args.C, tol=args.tol, max_iter=100_000,
        solver_options={"max_time": args.cap},
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(X[train], y[train])
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return {
        "time": model.solve_time_,
        "svm_solves": int(model.n_svm_solves_),
        "accuracy": float(model.score(X[test], y[test])),
        "n_selected": int(np.count_nonzero(model.kernel_weights_)),
        "objective": float(model.objective_),
        "pg_norm": float(model.history_[-1]["pg_norm"]),
        "converged": converged,
    }


def run_products(args):
    rows = []
    for key in args.sets:
        X, y = load_dataset(key)
        folds = _folds(y, 5, args.seed)[: args.splits]
        entry = {"set": key, "name": SETS[key], "n": int(len(y)), "features": int(X.shape[1])}
        for reg in ("lp", "l1"):
            runs = {s: [_fit_product(X, y, tr, te, s, reg, args) for tr, te in folds]
                    for s in ("spg", "pgd")}
            entry[reg] = {s: _summarise(r) for s, r in runs.items()} | {"runs": runs}
            spg, pgd = entry[reg]["spg"], entry[reg]["pgd"]
            entry[reg]["speedup"] = pgd["time"] / spg["time"]
            print(
                f"{SETS[key]:13s} {reg:2s}  SPG {spg['time']:7.2f}s {spg['svm_solves']:7.0f} "
                f"acc {spg['accuracy']:.3f} feat {spg['n_selected']:5.1f} conv "
                f"{spg['n_converged']}/{len(folds)} | PGD {pgd['time']:7.2f}s "
                f"{pgd['svm_solves']:7.0f} acc {pgd['accuracy']:.3f} feat "
                f"{pgd['n_selected']:5.1f} conv {pgd['n_converged']}/{len(folds)}"
                f"{'' if pgd['n_converged'] == len(folds) else ' (did not converge)'} | "
                f"PGD/SPG {entry[reg]['speedup']:6.1f}x  obj SPG-PGD "
                f"{spg['objective'] - pgd['objective']:+.2e}",
                flush=True,
            )
        rows.append(entry)
    goals = {}
    for reg in ("lp", "l1"):
        speedups = [r[reg]["speedup"] for r in rows]
        goals[reg] = {
            "median_speedup": float(np.median(speedups)),
            "min_speedup": float(np.min(speedups)),
            "median_goal_met": bool(np.median(speedups) >= SPEEDUP_GOAL),
            "never_slower": bool(np.min(speedups) >= 1.0),
        }
        print(f"products {reg}: median PGD/SPG {goals[reg]['median_speedup']:.1f}x (goal "
              f">= {SPEEDUP_GOAL:g}x: {goals[reg]['median_goal_met']}), min "
              f"{goals[reg]['min_speedup']:.2f}x (never slower: {goals[reg]['never_slower']})")
    return {"sets": rows, "goals": goals}


def _summarise(runs):
    return {
        "time": float(np.mean([r["time"] for r in runs])),
        "time_std": float(np.std([r["time"] for r in runs])),
        "svm_solves": float(np.mean([r["svm_solves"] for r in runs])),
        "accuracy": float(np.mean([r["accuracy"] for r in runs])),
        "accuracy_std": float(np.std([r["accuracy"] for r in runs])),
        "n_selected": float(np.mean([r["n_selected"] for r in runs])),
        "objective": float(np.mean([r["objective"] for r in runs])),
        "n_converged": int(sum(r["converged"] for r in runs)),
    }


def run_ablation(args):
    rows = []
    for key in args.sets:
        X, y = load_dataset(key)
        train = _folds(y, 5, args.seed)[0][0]
        X, y = X[train], _labels(y[train])
        specs, standardize = resolve_kernels("simple_mkl", X)
        stack = KernelBank(specs, standardize=standardize, normalize="trace").fit_transform(X)
        fitted = FeatureProduct().fit(X)
        problems = {
            "sum-l1": (SumOfKernels(stack), L1Simplex(), None),
            "product-lp": (ProductOfRBF(fitted.transform(X), fitted), LpNorm(2.0, args.lam),
                           np.ones(X.shape[1])),
            "product-l1": (ProductOfRBF(fitted.transform(X), fitted), L1Penalty(args.lam),
                           np.ones(X.shape[1])),
        }
        entry = {"set": key, "name": SETS[key]}
        for problem, (comb, reg, d0) in problems.items():
            entry[problem] = {}
            for variant, switches in VARIANTS.items():
                start = time.perf_counter()
                r = spg_gmkl(comb, y, args.C, reg, tol=args.tol, max_iter=100_000, d0=d0,
                             second_order=False, max_time=args.cap, **switches)
                entry[problem][variant] = {
                    "time": time.perf_counter() - start,
                    "svm_solves": r.n_svm_solves,
                    "objective": float(r.objective),
                    "converged": bool(r.converged),
                    "stop_reason": r.stop_reason,
                }
            print(f"{SETS[key]:13s} {problem:10s} " + "  ".join(
                f"{v} {e['time']:6.2f}s/{e['svm_solves']:5d}{'' if e['converged'] else '*'}"
                for v, e in entry[problem].items()), flush=True)
        rows.append(entry)
    return {"sets": rows}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=["products", "ablation", "both"], default="both")
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--splits", type=int, default=5, help="folds of 5-fold CV to run")
    parser.add_argument("--C", type=float, default=10.0)
    parser.add_argument("--lam", type=float, default=1.0, help="lp lambda and l1 sigma")
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--cap", type=float, default=15.0, help="seconds per fit (time cap)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    _warm_up()
    config = {k: v for k, v in vars(args).items() if k != "part"}
    meta = {"date": _dt.datetime.now().isoformat(timespec="seconds"), "config": config,
            "machine": machine_info()}
    if args.part in ("products", "both"):
        out = {"benchmark": "products (paper Tables 5 and 9)", **meta, **run_products(args)}
        save_run(out, RESULTS / "products.json", "products")
    if args.part in ("ablation", "both"):
        out = {"benchmark": "SPG ablation (paper Tables 7 and 11)", **meta, **run_ablation(args)}
        save_run(out, RESULTS / "products.json", "ablation")


if __name__ == "__main__":
    main()
