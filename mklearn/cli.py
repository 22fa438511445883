"""The ``mklearn`` command: fit MKL models on bundled or user data, save them, predict."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from mklearn.datasets import dataset_info, list_datasets, load_data_file, load_dataset
from mklearn.estimators import MKLClassifier, MKLRegressor
from mklearn.solvers import SOLVERS

TOP_WEIGHTS = 15


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mklearn", description="Multiple Kernel Learning from the command line."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    fit = sub.add_parser(
        "fit",
        help="fit an MKL classifier and report its kernel weights",
        description="Fit an MKL classifier (default: bundled Sonar, the "
        "SimpleMKL 13(D+1) kernel family, SPG-GMKL with l1 weights).",
    )
    source = fit.add_mutually_exclusive_group()
    source.add_argument(
        "--dataset",
        default=None,
        help=f"bundled data set: {', '.join(list_datasets())} (default sonar)",
    )
    source.add_argument(
        "--data",
        metavar="FILE",
        help="LIBSVM-format file, or CSV with the label in the last column",
    )
    fit.add_argument(
        "--label-column", type=int, default=None,
        help="label column of a CSV file (default: last; LIBSVM files have it first)",
    )
    fit.add_argument(
        "--task",
        choices=["classification", "regression"],
        help="default: the bundled data set's task, classification for --data files; "
        "regression fits MKLRegressor (epsilon-insensitive loss; SMO-MKL for lp/kl, SILP or "
        "SPG for l1)",
    )
    fit.add_argument(
        "--solver", default=None, choices=sorted(SOLVERS), help="default spg (smo for regression)"
    )
    fit.add_argument(
        "--interleaved",
        action="store_true",
        help="solver silp: the interleaved (chunking) algorithm instead of the wrapper",
    )
    fit.add_argument(
        "--regularizer",
        default=None,
        choices=["l1", "lp", "kl", "group"],
        help="default l1 (lp for regression and for --solver smo)",
    )
    fit.add_argument(
        "--combination",
        choices=["sum", "product"],
        default="sum",
        help="sum of the SimpleMKL kernels (default), or product: an RBF kernel with one learned "
        "width per feature (feature selection; --lam is the l1 penalty sigma)",
    )
    fit.add_argument("-p", type=float, default=2.0, help="norm of the lp regulariser (> 1)")
    fit.add_argument("--lam", type=float, default=1.0, help="weight of the lp or kl regulariser")
    fit.add_argument(
        "--epsilon", type=float, default=0.1, help="regression: half-width of the tube"
    )
    fit.add_argument(
        "--cache-size", type=float, default=200.0, help="MB of kernel rows (solver smo, mwu)"
    )
    fit.add_argument("-C", type=float, default=100.0, help="SVM cost (default 100)")
    fit.add_argument("--tol", type=float, default=1e-3, help="relative duality gap to reach")
    fit.add_argument("--max-iter", type=int, default=500)
    split = fit.add_mutually_exclusive_group()
    split.add_argument(
        "--test-size", type=float, default=0.2, help="held-out fraction (default 0.2)"
    )
    split.add_argument("--cv", type=int, metavar="K", help="K-fold cross-validation instead")
    fit.add_argument("--seed", type=int, default=0, help="seed of the split")
    fit.add_argument(
        "--save",
        metavar="MODEL",
        help="write the model fitted on the training "
        "part (or on all data with --cv) to this .npz file",
    )
    fit.add_argument(
        "--plot",
        metavar="DIR",
        help="write PNG plots of the model fitted on the training part (with --cv: fold 1) to "
        "DIR: the 20 largest weights, weights by feature and kernel, and convergence (needs "
        "matplotlib: pip install mklearn[plot])",
    )
    fit.add_argument("--json", action="store_true", help="print one JSON document instead")

    predict = sub.add_parser("predict", help="predict with a saved model")
    predict.add_argument("model", help="model file written by `mklearn fit --save`")
    predict.add_argument(
        "--data",
        metavar="FILE",
        required=True,
        help="LIBSVM or CSV file (labels, if present, give an accuracy)",
    )
    predict.add_argument("--label-column", type=int, default=None,
                         help="label column of a CSV file (default: last)")
    predict.add_argument("--output", metavar="FILE", help="write predictions here, one a line")

    sub.add_parser("datasets", help="list the bundled data sets")
    return parser


def main(argv=None) -> int:
    """Entry point of the ``mklearn`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "fit":
            return _fit(args)
        if args.command == "predict":
            return _predict(args)
        print("\n".join(list_datasets()))
        return 0
    except BrokenPipeError:  # output piped into e.g. `head`: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ValueError, TypeError, OSError, ImportError) as exc:
        message = " ".join(str(exc).split())  # one line, whatever the message holds
        print(f"mklearn: error: {message}", file=sys.stderr)
        return 2


def _load(args):
    """(X, y, name, task) with the task resolved from --task and the data set."""
    if args.data:
        X, y = load_data_file(args.data, label_column=args.label_column)
        if y is None:
            raise ValueError(f"{args.data} has no labels; fit needs a label on every line")
        return X, y, args.data, args.task or "classification"
    if args.label_column is not None:
        raise ValueError("--label-column applies to --data CSV files, not to bundled data sets")
    name = args.dataset or "sonar"
    task = args.task or dataset_info(name)["task"]
    if task != dataset_info(name)["task"]:
        raise ValueError(f"{name} is a {dataset_info(name)['task']} data set, not {task}")
    X, y = load_dataset(name)
    return X, y, name, task


def _resolve_defaults(args, task):
    if task == "regression":
        args.solver = args.solver or "smo"
        args.regularizer = args.regularizer or ("l1" if args.solver in ("silp", "spg") else "lp")
        smo = args.solver == "smo" and args.regularizer in ("lp", "kl")
        if not smo and not (args.solver in ("silp", "spg") and args.regularizer == "l1"):
            raise ValueError(
                "regression is solved by SMO-MKL (--solver smo with --regularizer lp or kl) or "
                "for l1 by --solver silp or spg"
            )
    else:
        args.solver = args.solver or "spg"
        args.regularizer = args.regularizer or ("lp" if args.solver == "smo" else "l1")
    if args.interleaved and args.solver != "silp":
        raise ValueError("--interleaved is an option of --solver silp")
    if args.combination == "product" and task == "regression":
        raise ValueError("--combination product is for classification; drop it for regression")


def _estimator(args, verbose, task="classification"):
    common = dict(
        kernels="features" if args.combination == "product" else "simple_mkl",
        regularizer=args.regularizer,
        p=args.p,
        lam=args.lam,
        C=args.C,
        tol=args.tol,
        max_iter=args.max_iter,
        cache_size=args.cache_size,
    )
    options = {"interleaved": True} if args.interleaved else None
    if task == "regression":
        return MKLRegressor(
            **common, solver=args.solver, epsilon=args.epsilon, solver_options=options
        )
    return MKLClassifier(
        **common,
        solver=args.solver,
        verbose=verbose,
        combination=args.combination,
        solver_options=options,
    )


def _fit(args) -> int:
    from sklearn.model_selection import KFold, StratifiedKFold, train_test_split
    from sklearn.utils.multiclass import type_of_target

    from mklearn.persistence import check_writable
    from mklearn.validation import check_regression_targets

    if args.save:
        check_writable(args.save)  # before any work, not after the fit
    if args.plot:
        from mklearn.plotting import _pyplot

        _pyplot()  # ImportError with the install hint before a long fit
    X, y, name, task = _load(args)
    _resolve_defaults(args, task)
    regression = task == "regression"
    if regression:
        y = check_regression_targets(y)
    elif type_of_target(y) == "continuous":
        raise ValueError(
            f"the labels of {name} are continuous numbers, not classes; for regression pass "
            "--task regression"
        )
    if not regression and np.unique(y).size < 2:
        raise ValueError(f"{name} has a single class; MKL classification needs two or more")
    if args.cv is not None:
        if args.cv < 2:
            raise ValueError(f"--cv needs at least 2 folds, got {args.cv}")
        splitter = KFold if regression else StratifiedKFold
        folds = splitter(args.cv, shuffle=True, random_state=args.seed).split(X, y)
    else:
        if not 0.0 < args.test_size < 1.0:
            raise ValueError(f"--test-size must lie in (0, 1), got {args.test_size}")
        train, test = train_test_split(
            np.arange(len(y)),
            test_size=args.test_size,
            stratify=None if regression else y,
            random_state=args.seed,
        )
        folds = [(train, test)]
    out = _Report(args.json)
    targets = (
        f"targets in [{np.min(y):g}, {np.max(y):g}]"
        if regression
        else "classes " + ", ".join(f"{c}: {int(np.sum(y == c))}" for c in np.unique(y))
    )
    out.line(f"data: {name}: {X.shape[0]} samples, {X.shape[1]} features, {targets}")
    reports = []
    for k, (train, test) in enumerate(folds):
        model = _estimator(args, verbose=0 if args.json else 1, task=task)
        start = time.perf_counter()
        if k == 0:
            family = (
                "product of per-feature RBF kernels (one learned width each, standardised "
                "features)"
                if args.combination == "product"
                else "SimpleMKL family, unit trace"
            )
            out.line(
                f"kernels: {family}; solver {args.solver} "
                f"({SOLVERS[args.solver].description}), regularizer {args.regularizer}"
                + (f" (p={args.p:g}, lam={args.lam:g})" if args.regularizer == "lp" else "")
                + (f" (lam={args.lam:g})" if args.regularizer == "kl" else "")
                + f", C={args.C:g}"
                + (f", epsilon={args.epsilon:g}" if regression else "")
            )
        model.fit(X[train], y[train])
        wall = time.perf_counter() - start
        reports.append(_summary(model, X, y, train, test, wall, regression))
        if k == 0:
            out.line(
                f"           {len(model.kernel_names_)} base kernels on "
                f"{len(train)} training points"
            )
        out.fold(reports[-1], args.cv is not None, k)
        if k == 0:
            first = model
    if args.cv is not None:
        metric = "test_r2" if regression else "test_accuracy"
        scores = np.array([r[metric] for r in reports])
        out.line(
            f"cross-validation ({args.cv} folds): {metric.replace('_', ' ')} "
            f"{scores.mean():.4f} +- {scores.std():.4f}"
        )
    if args.plot:
        from mklearn.plotting import save_plots

        written = save_plots(first, args.plot)
        out.line(f"plots written: {', '.join(written)}")
    if args.save:
        model = _estimator(args, verbose=0, task=task).fit(X, y) if args.cv is not None else model
        from mklearn.persistence import save_model

        save_model(model, args.save)
        out.line(f"model saved to {args.save}")
    out.finish(
        {
            "data": name,
            "task": task,
            "n_samples": int(X.shape[0]),
            "n_features": int(X.shape[1]),
            "solver": args.solver,
            "combination": args.combination,
            "regularizer": args.regularizer,
            "C": args.C,
            "p": args.p,
            "lam": args.lam,
            "folds": reports,
        }
    )
    return 0


def _summary(model, X, y, train, test, wall, regression=False):
    weights = np.atleast_2d(model.kernel_weights_)
    mean_weights = weights.mean(axis=0)
    order = np.argsort(-mean_weights)
    top = [
        {"kernel": model.kernel_names_[i], "weight": float(mean_weights[i])}
        for i in order[:TOP_WEIGHTS]
        if mean_weights[i] > 0
    ]
    if regression:
        from sklearn.metrics import mean_squared_error

        scores = {
            "train_r2": float(model.score(X[train], y[train])),
            "test_r2": float(model.score(X[test], y[test])),
            "test_rmse": float(np.sqrt(mean_squared_error(y[test], model.predict(X[test])))),
        }
    else:
        scores = {
            "train_accuracy": float(model.score(X[train], y[train])),
            "test_accuracy": float(model.score(X[test], y[test])),
        }
    return {
        **scores,
        "n_train": int(len(train)),
        "n_test": int(len(test)),
        "n_kernels": int(weights.shape[1]),
        "n_selected": int(np.count_nonzero(np.any(weights > 0, axis=0))),
        "top_weights": top,
        "objective": np.atleast_1d(model.objective_).tolist(),
        "duality_gap": np.atleast_1d(model.duality_gap_).tolist(),
        "n_iter": np.atleast_1d(model.n_iter_).tolist(),
        "n_svm_solves": np.atleast_1d(getattr(model, "n_svm_solves_", 0)).tolist(),
        "kernel_seconds": model.kernel_time_,
        "solve_seconds": model.solve_time_,
        "wall_seconds": wall,
    }


class _Report:
    """Text for people, or a single JSON document for programs."""

    def __init__(self, as_json):
        self.as_json = as_json

    def line(self, text):
        if not self.as_json:
            print(text, flush=True)

    def fold(self, r, is_cv, k):
        if self.as_json:
            return
        metric = "test_r2" if "test_r2" in r else "test_accuracy"
        if is_cv:
            print(
                f"fold {k + 1}: {metric.replace('_', ' ')} {r[metric]:.4f}, "
                f"{r['n_selected']} kernels selected, {r['wall_seconds']:.2f} s"
            )
            return
        print(
            f"\nkernel weights ({r['n_selected']} of {r['n_kernels']} non-zero; top "
            f"{len(r['top_weights'])}):"
        )
        for item in r["top_weights"]:
            print(f"  {item['weight']:8.4f}  {item['kernel']}")
        gap = ", ".join(f"{g:.3g}" for g in r["duality_gap"])
        if all(np.isnan(g) for g in r["duality_gap"]):  # products: stopped on the gradient
            gap = "none (non-convex; stopped on the projected-gradient norm)"
        obj = ", ".join(f"{o:.6g}" for o in r["objective"])
        if metric == "test_r2":
            print(f"\ntrain R^2 {r['train_r2']:.4f} ({r['n_train']} points)")
            print(
                f"test R^2  {r['test_r2']:.4f}, RMSE {r['test_rmse']:.4g} ({r['n_test']} points)"
            )
        else:
            print(f"\ntrain accuracy {r['train_accuracy']:.4f} ({r['n_train']} points)")
            print(f"test accuracy  {r['test_accuracy']:.4f} ({r['n_test']} points)")
        print(
            f"objective {obj}, duality gap {gap}, iterations "
            f"{', '.join(map(str, r['n_iter']))}, SVM solves "
            f"{', '.join(map(str, r['n_svm_solves']))}"
        )
        print(
            f"time: kernels {r['kernel_seconds']:.2f} s, solver {r['solve_seconds']:.2f} s, "
            f"fit {r['wall_seconds']:.2f} s"
        )

    def finish(self, document):
        if self.as_json:
            print(json.dumps(document, indent=2))


def _predict(args) -> int:
    from mklearn.persistence import atomic_write, check_writable, load_model

    if args.output:
        check_writable(args.output)
    model = load_model(args.model)
    final = model.steps[-1][1] if hasattr(model, "steps") else model
    X, y = load_data_file(
        args.data, label_column=args.label_column, n_features=model.n_features_in_
    )
    predictions = model.predict(X)
    lines = "\n".join(_label_text(p) for p in predictions) + "\n"
    if args.output:
        with atomic_write(args.output) as handle:
            handle.write(lines)
    else:
        sys.stdout.write(lines)
    if y is not None:
        print(_predict_score(final, y, predictions), file=sys.stderr)
    return 0


def _label_text(value):
    """A label or prediction as text: integral floats without a decimal point (LIBSVM's
    ``+1`` is read as 1.0 and written back as ``1``), other floats exactly."""
    if isinstance(value, (float, np.floating)):
        return f"{value:g}" if float(value).is_integer() else repr(float(value))
    return str(value)


def _predict_score(model, y, predictions):
    """Accuracy (classifiers, one-class) or R^2 (regressors) of the predictions on labels."""
    if not hasattr(model, "classes_") and not hasattr(model, "offset_"):
        from sklearn.metrics import r2_score

        if y.dtype.kind not in "biuf":
            raise ValueError("the data's targets are not numbers; a regressor needs real targets")
        return f"R^2 {r2_score(y, predictions):.4f} on {len(y)} points"
    classes = getattr(model, "classes_", np.array([-1, 1]))
    known = {_label_text(c) for c in classes}
    truth = np.array([_label_text(v) for v in y])
    guess = np.array([_label_text(p) for p in predictions])
    unknown = sorted(set(truth.tolist()) - known)
    if len(unknown) == len(set(truth.tolist())):
        return (f"no accuracy: the data's labels ({', '.join(unknown[:5])}) are not classes "
                f"of the model ({', '.join(sorted(known))})")
    note = ""
    if unknown:
        note = (f" ({np.isin(truth, unknown).sum()} labelled {', '.join(unknown[:5])}, "
                f"not a class of the model: {', '.join(sorted(known))})")
    return f"accuracy {np.mean(truth == guess):.4f} on {len(y)} points{note}"


if __name__ == "__main__":
    sys.exit(main())
