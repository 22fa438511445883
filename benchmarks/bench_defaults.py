"""Defaults that work: ``MKLClassifier()`` against ``SVC()`` and
``make_pipeline(StandardScaler(), SVC())`` (``MKLRegressor()`` against ``SVR()`` and its
standardised pipeline), every parameter at its default, 5-fold cross-validation.

- Data: every bundled data set (``mklearn datasets``) and scikit-learn's small sets (iris,
  wine, breast cancer, digits; diabetes for regression). Sets above ``--max-samples`` points
  are stratified-subsampled to that size (seeded), so that the run takes a few minutes on two
  cores: the SimpleMKL family has 13 (D + 1) kernels and the stack n^2 of them.
- Every estimator sees the same folds (``StratifiedKFold(5, shuffle=True, random_state=0)``;
  ``KFold`` for regression) and X as loaded (MKLClassifier standardises inside its kernel
  family; SVC() does not, which is part of what its defaults mean; the pipeline does).
- Reported: mean accuracy (R^2 for regression) over the folds of each, the difference to the
  better anchor, the cost (seconds of the five fits and predictions over ``SVC()``'s), and
  the solver ``solver="auto"`` chose. The goal: on no set more than ``ACCURACY_SLACK``
  (0.005) below the better anchor, and at most ``COST_GOAL`` (10) times the cost.

``--memory`` measures instead the peak memory of one fit on each whole set (each fit in a
fresh process after a fit on 60 points loaded the code and the heap's free pages went back
to the system, its peak resident set above that):
the MKL default against ``SVC(cache_size=200)`` (``SVR``), with the goal ``MEMORY_GOAL``
(4): the MKL fit's peak at most 4 times (the anchor's peak plus the data's bytes).

``--unseen`` runs sets no default was chosen on instead (a1a, w8a and two mfeat
one-against-rest tasks from ``../shared/data``; a9a by name only: ``--unseen --sets unseen:a9a
unseen:w8a --max-samples 5000`` measures the two large sets at a size).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/bench_defaults.py`` (writes
``benchmarks/results/defaults.json``); ``--sets sonar iris`` for a subset; ``--mkl-params
regularizer=kl`` to judge a candidate default (parameters set on both MKL estimators where
they have them; write it elsewhere with ``--output``); ``--recipe JSON`` a candidate family
(``KernelRecipe``'s keyword arguments).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn import datasets as skdata
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold, StratifiedKFold, cross_validate, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR

from mklearn import MKLClassifier, MKLRegressor
from mklearn.datasets import dataset_info, list_datasets, load_dataset
from mklearn.kernels import KernelRecipe

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_large_scale import _fit_peak_mb, _fit_start_mb  # noqa: E402
from bench_small_sets import machine_info, save_run  # noqa: E402

TIE = 1e-9  # equal mean accuracies differ by rounding of the fold means
ACCURACY_SLACK = 0.005  # the goal: on no set more than this below the better anchor
COST_GOAL = 10.0  # the goal: fit + predict at most this many times the plain anchor's
MEMORY_GOAL = 4.0  # the goal: a fit's peak at most this times (the anchor's peak + the data)
RESULTS = Path(__file__).resolve().parent / "results" / "defaults.json"
SKLEARN_SETS = {
    "sklearn:iris": ("classification", skdata.load_iris),
    "sklearn:wine": ("classification", skdata.load_wine),
    "sklearn:breast_cancer": ("classification", skdata.load_breast_cancer),
    "sklearn:digits": ("classification", skdata.load_digits),
    "sklearn:diabetes": ("regression", skdata.load_diabetes),
}


SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _svmlight(path, n_features):
    def load(return_X_y=True):
        from mklearn.datasets import load_svmlight

        X, y = load_svmlight(SHARED / path, n_features=n_features)
        return (X.toarray() if hasattr(X, "toarray") else np.asarray(X)), y
    return load


def _mfeat(view, digit):
    def load(return_X_y=True):
        X = np.loadtxt(SHARED / "mfeat" / f"mfeat-{view}")
        return X, np.where(np.repeat(np.arange(10), 200) == digit, 1, -1)
    return load


# sets no default was chosen on (``--unseen``), from ../shared/data: not the goal's sets
UNSEEN_SETS = {
    "unseen:a1a": ("classification", _svmlight("a1a/a1a", 123)),
    "unseen:w8a": ("classification", _svmlight("w8a/w8a", 300)),
    "unseen:mfeat-fou-0": ("classification", _mfeat("fou", 0)),
    "unseen:mfeat-kar-3": ("classification", _mfeat("kar", 3)),
}

# also no default was chosen on, run by name only (``--sets``): a9a at a size
LARGE_UNSEEN_SETS = {"unseen:a9a": ("classification", _svmlight("a9a/a9a", 123))}


def _sets(unseen=False):
    if unseen:
        return {name: task for name, (task, _) in {**UNSEEN_SETS, **LARGE_UNSEEN_SETS}.items()}
    names = {name: dataset_info(name)["task"] for name in list_datasets()}
    names.update({name: task for name, (task, _) in SKLEARN_SETS.items()})
    return names


def _load(name):
    if name in SKLEARN_SETS:
        return SKLEARN_SETS[name][1](return_X_y=True)
    if name in UNSEEN_SETS or name in LARGE_UNSEEN_SETS:
        return {**UNSEEN_SETS, **LARGE_UNSEEN_SETS}[name][1](return_X_y=True)
    return load_dataset(name)


def _subsample(X, y, task, max_samples):
    if len(y) <= max_samples:
        return X, y
    stratify = y if task == "classification" else None
    rows, _ = train_test_split(np.arange(len(y)), train_size=max_samples, stratify=stratify,
                               random_state=0)
    rows = np.sort(rows)
    return X[rows], y[rows]


def _score(estimator, X, y, folds):
    """Mean and std of the fold scores, the seconds of the folds' fits and of their
    predictions (``cross_validate``'s ``fit_time`` and ``score_time``, summed), the solvers
    chosen and the number of ConvergenceWarnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        result = cross_validate(estimator, X, y, cv=folds, return_estimator=True)
    solvers = sorted({getattr(e, "solver_", "") for e in result["estimator"]} - {""})
    warned = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    return {"score": float(np.mean(result["test_score"])),
            "std": float(np.std(result["test_score"])),
            "fit_seconds": float(np.sum(result["fit_time"])),
            "predict_seconds": float(np.sum(result["score_time"])),
            "solvers": solvers, "convergence_warnings": warned}


def _parse_params(pairs):
    """``key=value`` strings as a dict; values read as JSON when they parse (numbers)."""
    params = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--mkl-params takes key=value, got {pair!r}")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params


def _with(estimator, params):
    own = estimator.get_params(deep=False)
    return estimator.set_params(**{k: v for k, v in params.items() if k in own})


def anchors(task):
    """The two defaults the MKL default must match: ``{role: (name, estimator)}``."""
    peer, name = (SVC, "SVC()") if task == "classification" else (SVR, "SVR()")
    return {"plain": (name, peer()),
            "standardised": (f"make_pipeline(StandardScaler(), {name})",
                             make_pipeline(StandardScaler(), peer()))}


def run(name, task, max_samples, params=None):
    """The MKL default and both anchors on the same folds: scores, the difference to the
    better anchor, and the cost (fit + predict seconds) over that of the plain one."""
    X, y = _load(name)
    X, y = _subsample(np.asarray(X, dtype=np.float64), np.asarray(y), task, max_samples)
    if task == "classification":
        folds = StratifiedKFold(5, shuffle=True, random_state=0)
        mkl = _with(MKLClassifier(), params or {})
    else:
        folds = KFold(5, shuffle=True, random_state=0)
        mkl = _with(MKLRegressor(), params or {})
    mine = _score(mkl, X, y, folds)
    peers = {role: {"estimator": peer_name, **_score(peer, X, y, folds)}
             for role, (peer_name, peer) in anchors(task).items()}
    plain = peers["plain"]
    best = max(peer["score"] for peer in peers.values())
    cost = ((mine["fit_seconds"] + mine["predict_seconds"])
            / max(plain["fit_seconds"] + plain["predict_seconds"], 1e-9))
    difference = mine["score"] - best
    return {
        "data": name,
        "task": task,
        "metric": "accuracy" if task == "classification" else "r2",
        "n_samples": int(X.shape[0]),
        "n_features": int(X.shape[1]),
        "mkl": mine,
        "anchors": peers,
        "difference_to_better_anchor": difference,
        "cost_over_plain_anchor": cost,
        "meets_accuracy_goal": bool(difference >= -ACCURACY_SLACK - TIE),
        "meets_cost_goal": bool(cost <= COST_GOAL),
    }


WARM_UP_POINTS = 60  # a first fit on this many points loads the code, little of the heap


def _peak_child(conn, estimator, X, y, classification):
    """In a fresh process: a first fit on ``WARM_UP_POINTS`` points loads (and compiles) the
    code, then the peak of the fit on every point above the resident set at its start, and
    its seconds. (A first fit on every point would leave its freed heap for the second to
    reuse unseen.)"""
    import time

    small, _ = train_test_split(np.arange(len(y)), train_size=WARM_UP_POINTS, random_state=0,
                                stratify=y if classification else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clone(estimator).fit(X[small], y[small])
        _trim_heap()
        start = _fit_start_mb()
        began = time.perf_counter()
        estimator.fit(X, y)
        conn.send((_fit_peak_mb() - start, time.perf_counter() - began))
    conn.close()


def _trim_heap():
    """Give the heap's free pages back to the system (glibc's ``malloc_trim``; no-op
    elsewhere), so that a fit's peak counts what it allocates, not only what the pages freed
    by the loading and the warm-up fit cannot hold: without it ``SVC()``'s kernel cache on
    pima (768 points, 2.3 MB of single-precision columns) measured 0.1 MB, 1.6 MB with it."""
    import ctypes
    import ctypes.util

    try:
        ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim(0)
    except (OSError, AttributeError, TypeError):
        pass


def _fit_peak(estimator, X, y, classification):
    """``(peak MB above the loaded data and code, seconds)`` of ``estimator.fit(X, y)`` in a
    fresh process (spawned: a fork after OpenMP threads ran is unsafe)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    parent, end = context.Pipe(duplex=False)
    process = context.Process(target=_peak_child, args=(end, estimator, X, y, classification))
    process.start()
    end.close()
    peak, seconds = parent.recv()
    process.join()
    return peak, seconds


def memory_row(name, task, max_samples):
    """One default fit and one ``SVC(cache_size=200)`` fit on the set: their peaks and the
    MKL fit's over (the anchor's + the data's MB)."""
    X, y = _load(name)
    X, y = _subsample(np.asarray(X, dtype=np.float64), np.asarray(y), task, max_samples)
    mkl, peer = ((MKLClassifier(), SVC(cache_size=200)) if task == "classification"
                 else (MKLRegressor(), SVR(cache_size=200)))
    classification = task == "classification"
    mine, mine_seconds = _fit_peak(mkl, X, y, classification)
    anchor, anchor_seconds = _fit_peak(peer, X, y, classification)
    data_mb = (X.nbytes + y.nbytes) / 2**20
    ratio = mine / max(anchor + data_mb, 1e-9)
    return {"data": name, "n_samples": int(X.shape[0]), "n_features": int(X.shape[1]),
            "mkl_peak_mb": mine, "anchor_peak_mb": anchor, "data_mb": data_mb,
            "mkl_fit_seconds": mine_seconds, "anchor_fit_seconds": anchor_seconds,
            "peak_over_anchor_plus_data": ratio, "meets_memory_goal": bool(ratio <= MEMORY_GOAL)}


def memory_main(chosen, sets, args):
    print(f"peak memory of one fit above the loaded data (MB): the default against "
          f"SVC(cache_size=200) / SVR; goal at most {MEMORY_GOAL:g}x (anchor + data)")
    print(f"{'data':24} {'n':>6} {'MKL MB':>8} {'anchor':>8} {'data':>7} {'ratio':>6}  "
          "fit s (MKL / anchor)")
    rows = []
    for name in chosen:
        row = memory_row(name, sets[name], args.max_samples)
        rows.append(row)
        print(f"{name:24} {row['n_samples']:6d} {row['mkl_peak_mb']:8.1f} "
              f"{row['anchor_peak_mb']:8.1f} {row['data_mb']:7.1f} "
              f"{row['peak_over_anchor_plus_data']:6.2f}  {row['mkl_fit_seconds']:.2f} / "
              f"{row['anchor_fit_seconds']:.2f}"
              + ("" if row["meets_memory_goal"] else "   <- memory"), flush=True)
    ratios = [r["peak_over_anchor_plus_data"] for r in rows]
    print(f"\nlargest ratio {max(ratios):.2f}; within the goal on "
          f"{sum(r['meets_memory_goal'] for r in rows)} of {len(rows)} sets")
    document = {"date": _dt.datetime.now().isoformat(timespec="seconds"),
                "machine": machine_info(),
                "config": {"max_samples": args.max_samples, "mkl": "MKLClassifier() / "
                           "MKLRegressor(), all defaults", "anchor": "SVC(cache_size=200) / "
                           "SVR(cache_size=200)", "goal": MEMORY_GOAL,
                           "peak": "resident set above that of the loaded data and code, in "
                           "a fresh process after a fit on 60 points"},
                "results": rows}
    name = args.run or "memory"
    save_run(document, args.output, name)
    print(f"written {args.output} (run {name!r})")


def summary(rows):
    """Means over the sets: the MKL default's score, each anchor's, and the cost ratio."""
    if not rows:
        return {}
    names = ("plain", "standardised")
    return {
        "sets": len(rows),
        "mkl_mean": float(np.mean([r["mkl"]["score"] for r in rows])),
        "anchor_means": {a: float(np.mean([r["anchors"][a]["score"] for r in rows]))
                         for a in names},
        "cost_median": float(np.median([r["cost_over_plain_anchor"] for r in rows])),
        "cost_max": float(np.max([r["cost_over_plain_anchor"] for r in rows])),
        "meets_accuracy_goal": int(sum(r["meets_accuracy_goal"] for r in rows)),
        "meets_cost_goal": int(sum(r["meets_cost_goal"] for r in rows)),
        "convergence_warnings": int(sum(r["mkl"]["convergence_warnings"] for r in rows)),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="*", help="data sets (default: all)")
    parser.add_argument("--max-samples", type=int, default=250,
                        help="stratified subsample of larger sets (default 250)")
    parser.add_argument("--mkl-params", nargs="*", metavar="KEY=VALUE",
                        help="candidate defaults, e.g. regularizer=kl lam=10 (default: none)")
    parser.add_argument("--recipe", type=json.loads, metavar="JSON",
                        help="a candidate family: KernelRecipe's keyword arguments as "
                        "JSON, e.g. '{\"sigmas\": [1], \"degrees\": []}'")
    parser.add_argument("--unseen", action="store_true",
                        help="run on sets no default was chosen on (a1a, w8a, two mfeat "
                        "one-against-rest tasks, from ../shared/data) instead")
    parser.add_argument("--memory", action="store_true",
                        help="measure one fit's peak memory on each set instead (goal at "
                        f"most {MEMORY_GOAL:g}x that of SVC(cache_size=200) plus the data)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--run", default=None,
                        help="the run's name in the result file (default: 'unseen' with "
                        "--unseen, else 'default')")
    args = parser.parse_args(argv)
    params = _parse_params(args.mkl_params)
    if args.recipe is not None:
        params["kernels"] = KernelRecipe(**args.recipe)
    sets = _sets(args.unseen)
    chosen = args.sets or [name for name in sets if name not in LARGE_UNSEEN_SETS]
    if args.memory:
        return memory_main(chosen, sets, args)
    rows = []
    print(f"{'data':24} {'n':>5} {'d':>4}  {'metric':8} {'MKL':>7} {'plain':>7} {'scaled':>7} "
          f"{'diff':>7} {'cost':>7}  solver  seconds (MKL fit+predict / plain)")
    for name in chosen:
        row = run(name, sets[name], args.max_samples, params)
        rows.append(row)
        mine, plain, scaled = row["mkl"], row["anchors"]["plain"], row["anchors"]["standardised"]
        print(f"{name:24} {row['n_samples']:5d} {row['n_features']:4d}  {row['metric']:8} "
              f"{mine['score']:7.4f} {plain['score']:7.4f} {scaled['score']:7.4f} "
              f"{row['difference_to_better_anchor']:+7.4f} {row['cost_over_plain_anchor']:6.1f}x"
              f"  {','.join(mine['solvers']):6}  "
              f"{mine['fit_seconds'] + mine['predict_seconds']:.2f} / "
              f"{plain['fit_seconds'] + plain['predict_seconds']:.3f}"
              + ("" if row["meets_accuracy_goal"] else "   <- below")
              + ("" if row["meets_cost_goal"] else "   <- cost")
              + (f"   <- {mine['convergence_warnings']} not converged"
                 if mine["convergence_warnings"] else ""), flush=True)
    total = summary(rows)
    if total:
        print(f"\nmean score: MKL {total['mkl_mean']:.4f}, "
              + ", ".join(f"{a} {v:.4f}" for a, v in total["anchor_means"].items())
              + f"; cost median {total['cost_median']:.1f}x, max {total['cost_max']:.1f}x; "
              f"within {ACCURACY_SLACK} of the better anchor on {total['meets_accuracy_goal']} "
              f"of {total['sets']} sets, within {COST_GOAL:g}x on {total['meets_cost_goal']}; "
              f"{total['convergence_warnings']} fits not converged")
    document = {
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
        "machine": machine_info(),
        "config": {"folds": "StratifiedKFold(5, shuffle=True, random_state=0) (KFold for "
                   "regression)", "max_samples": args.max_samples,
                   "mkl": "MKLClassifier() / MKLRegressor(), all defaults"
                   + (f" but {params}" if params else ""),
                   "anchors": "SVC() and make_pipeline(StandardScaler(), SVC()) (SVR() for "
                   "regression), all defaults",
                   "cost": "fit + predict seconds over the 5 folds, over SVC()'s (SVR()'s)",
                   "goals": {"accuracy_slack": ACCURACY_SLACK, "cost": COST_GOAL}},
        "results": rows,
        "summary": total,
    }
    name = args.run or ("unseen" if args.unseen else "default")
    save_run(document, args.output, name)
    print(f"written {args.output} (run {name!r})")


if __name__ == "__main__":
    main()
