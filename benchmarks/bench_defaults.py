"""Defaults that work: ``MKLClassifier()`` against ``SVC()`` and ``MKLRegressor()`` against
``SVR()``, every parameter at its default, 5-fold cross-validation.

- Data: every bundled data set (``mklearn datasets``) and scikit-learn's small sets (iris,
  wine, breast cancer, digits; diabetes for regression). Sets above ``--max-samples`` points
  are stratified-subsampled to that size (seeded), so that the run takes a few minutes on two
  cores: the SimpleMKL family has 13 (D + 1) kernels and the stack n^2 of them.
- Both estimators see the same folds (``StratifiedKFold(5, shuffle=True, random_state=0)``;
  ``KFold`` for regression) and X as loaded: no scaling (MKLClassifier standardises inside
  its kernel family; SVC() does not, which is part of what its defaults mean).
- Reported: mean accuracy (R^2 for regression) over the folds, the difference, the solver
  ``solver="auto"`` chose and the seconds of each.

``--unseen`` runs four sets no default was chosen on instead (a1a, w8a and two mfeat
one-against-rest tasks from ``../shared/data``).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/bench_defaults.py`` (writes
``benchmarks/results/defaults.json``); ``--sets sonar iris`` for a subset; ``--mkl-params
regularizer=kl`` to judge a candidate default (parameters set on both MKL estimators where
they have them; write it elsewhere with ``--output``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn import datasets as skdata
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold, StratifiedKFold, cross_validate, train_test_split
from sklearn.svm import SVC, SVR

from mklearn import MKLClassifier, MKLRegressor
from mklearn.datasets import dataset_info, list_datasets, load_dataset

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small_sets import machine_info, save_run  # noqa: E402

TIE = 1e-9  # equal mean accuracies differ by rounding of the fold means
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


def _sets(unseen=False):
    if unseen:
        return {name: task for name, (task, _) in UNSEEN_SETS.items()}
    names = {name: dataset_info(name)["task"] for name in list_datasets()}
    names.update({name: task for name, (task, _) in SKLEARN_SETS.items()})
    return names


def _load(name):
    if name in SKLEARN_SETS:
        return SKLEARN_SETS[name][1](return_X_y=True)
    if name in UNSEEN_SETS:
        return UNSEEN_SETS[name][1](return_X_y=True)
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
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        result = cross_validate(estimator, X, y, cv=folds, return_estimator=True)
    seconds = time.perf_counter() - start
    solvers = sorted({getattr(e, "solver_", "") for e in result["estimator"]} - {""})
    warned = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    return float(np.mean(result["test_score"])), float(np.std(result["test_score"])), \
        seconds, solvers, warned


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


def run(name, task, max_samples, params=None):
    X, y = _load(name)
    X, y = _subsample(np.asarray(X, dtype=np.float64), np.asarray(y), task, max_samples)
    if task == "classification":
        folds = StratifiedKFold(5, shuffle=True, random_state=0)
        mkl, peer, peer_name = _with(MKLClassifier(), params or {}), SVC(), "SVC()"
    else:
        folds = KFold(5, shuffle=True, random_state=0)
        mkl, peer, peer_name = _with(MKLRegressor(), params or {}), SVR(), "SVR()"
    m_mean, m_std, m_sec, solvers, warned = _score(mkl, X, y, folds)
    p_mean, p_std, p_sec, _, _ = _score(peer, X, y, folds)
    return {
        "data": name,
        "task": task,
        "metric": "accuracy" if task == "classification" else "r2",
        "n_samples": int(X.shape[0]),
        "n_features": int(X.shape[1]),
        "mkl": m_mean,
        "mkl_std": m_std,
        "mkl_seconds": m_sec,
        "mkl_solver": solvers,
        "mkl_convergence_warnings": warned,
        "peer": peer_name,
        "peer_score": p_mean,
        "peer_std": p_std,
        "peer_seconds": p_sec,
        "difference": m_mean - p_mean,
        "meets_goal": bool(m_mean >= p_mean - TIE),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="*", help="data sets (default: all)")
    parser.add_argument("--max-samples", type=int, default=250,
                        help="stratified subsample of larger sets (default 250)")
    parser.add_argument("--mkl-params", nargs="*", metavar="KEY=VALUE",
                        help="candidate defaults, e.g. regularizer=kl lam=10 (default: none)")
    parser.add_argument("--unseen", action="store_true",
                        help="run on sets no default was chosen on (a1a, w8a, two mfeat "
                        "one-against-rest tasks, from ../shared/data) instead")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--run", default=None,
                        help="the run's name in the result file (default: 'unseen' with "
                        "--unseen, else 'default')")
    args = parser.parse_args(argv)
    params = _parse_params(args.mkl_params)
    sets = _sets(args.unseen)
    chosen = args.sets or list(sets)
    rows = []
    print(f"{'data':24} {'n':>5} {'d':>4}  {'metric':8} {'MKL default':>12} {'peer':>12} "
          f"{'diff':>7}  solver  seconds (MKL / peer)")
    for name in chosen:
        row = run(name, sets[name], args.max_samples, params)
        rows.append(row)
        print(f"{name:24} {row['n_samples']:5d} {row['n_features']:4d}  {row['metric']:8} "
              f"{row['mkl']:12.4f} {row['peer_score']:12.4f} {row['difference']:+7.4f}  "
              f"{','.join(row['mkl_solver']):6}  {row['mkl_seconds']:.1f} / "
              f"{row['peer_seconds']:.2f}" + ("" if row["meets_goal"] else "   <- below"),
              flush=True)
    met = sum(r["meets_goal"] for r in rows)
    print(f"\nMKL default >= peer default on {met} of {len(rows)} sets")
    document = {
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
        "machine": machine_info(),
        "config": {"folds": "StratifiedKFold(5, shuffle=True, random_state=0) (KFold for "
                   "regression)", "max_samples": args.max_samples,
                   "mkl": "MKLClassifier() / MKLRegressor(), all defaults"
                   + (f" but {params}" if params else ""),
                   "peer": "SVC() / SVR(), all defaults"},
        "results": rows,
    }
    name = args.run or ("unseen" if args.unseen else "default")
    save_run(document, args.output, name)
    print(f"written {args.output} (run {name!r})")


if __name__ == "__main__":
    main()
