"""The ``mklearn`` command: fit MKL models on bundled or user data, save them, predict."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

from mklearn.cli import data as cli_data
from mklearn.datasets import load_data_file
from mklearn.datasets._readers import csv_feature_names
from mklearn.estimators import MKLClassifier, MKLRegressor
from mklearn.extending import COMBINATIONS, REGULARIZERS
from mklearn.fit_plan import LongFitWarning, command_line_words, duration
from mklearn.kernels.checks import feature_order
from mklearn.kernels.recipes import SVC_KERNEL_LAM
from mklearn.one_class import OneClassMKL
from mklearn.persistence import atomic_write, check_writable, load_model, save_model
from mklearn.plotting import _pyplot, save_plots
from mklearn.solvers import SOLVERS, solvers_for
from mklearn.solvers.tasks import DEFAULT_NU
from mklearn.validation import check_regression_targets

TOP_WEIGHTS = 15  # kernels the fit summary lists, largest weights first: one screen


def _cache_size(text: str):
    """``--cache-size``: "auto" or a number of MB (the estimator checks that it is positive,
    so that a bad value gets mklearn's one-line error)."""
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected 'auto' or a number of MB, got {text!r}") from None


def _components(text: str):
    """``--n-components``: "auto" or a whole number (the estimator checks that it is at least
    1 and at most the training points)."""
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected 'auto' or a whole number of landmarks, got {text!r}") from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mklearn", description="Multiple Kernel Learning from the command line."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    fit = sub.add_parser(
        "fit",
        help="fit an MKL classifier and report its kernel weights",
        description="Fit an MKL classifier (default: bundled Sonar, SVC()'s own kernel and "
        "an RBF of width 1 on each standardised feature, scaled to mean diagonal 1, "
        f"KL-regularised weights (lam={SVC_KERNEL_LAM:g}, prior 0.9 on SVC's kernel) solved by "
        "SMO-MKL, C=1 as in an SVC: the defaults of MKLClassifier()).",
    )
    _data_options(fit.add_argument_group("data"))
    _kernel_options(fit.add_argument_group("kernels and solver"))
    _model_options(fit.add_argument_group("model"))
    _solver_options(fit.add_argument_group("solver limits and memory"))
    _output_options(fit.add_argument_group("evaluation and output"))

    predict = sub.add_parser("predict", help="predict with a saved model")
    predict.add_argument("model", help="model file written by `mklearn fit --save`")
    predict.add_argument(
        "--data",
        metavar="FILE",
        required=True,
        help="LIBSVM or CSV file (labels, if present, give an accuracy; the columns of a CSV "
        "with a header are matched by name to those the model was fitted on)",
    )
    predict.add_argument("--label-column", type=int, default=None,
                         help="label column of a CSV file (default: last)")
    predict.add_argument("--output", metavar="FILE", help="write predictions here, one a line")

    sub.add_parser("datasets", help="list the bundled data sets")
    return parser


def _data_options(fit):
    """``fit``'s data: a bundled set or a file, the task, a subset."""
    source = fit.add_mutually_exclusive_group()
    source.add_argument(
        "--dataset",
        default=None,
        help="bundled data set (default sonar): "
        + ", ".join(row[0] for row in cli_data.all_datasets())
        + "; `mklearn datasets` lists sizes and tasks",
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
        choices=["classification", "regression", "one-class"],
        help="default: the bundled data set's task, classification for --data files; "
        "one-class fits OneClassMKL (novelty detection, SILP or SPG, l1) on the training points "
        "of --inlier-class and scores inlier-vs-outlier accuracy on the test part; "
        "regression fits MKLRegressor (epsilon-insensitive loss; SMO-MKL for lp/kl, SILP or "
        "SPG for l1)",
    )
    fit.add_argument(
        "--n-samples",
        type=int,
        metavar="N",
        help="use a random (stratified) subset of N samples, e.g. to try a large set quickly",
    )


def _kernel_options(fit):
    """``fit``'s solver, regulariser and kernels."""
    fit.add_argument(
        "--solver",
        default="auto",
        choices=["auto", *sorted(SOLVERS)],
        help="default auto: smo for lp and kl, mirror for group, spg for l1 and products",
    )
    fit.add_argument(
        "--interleaved",
        action="store_true",
        help="solver silp: the interleaved (chunking) algorithm instead of the wrapper",
    )
    fit.add_argument(
        "--regularizer",
        default=None,
        choices=list(REGULARIZERS),
        help="default: as MKLClassifier(regularizer='auto'), kl with --solver auto or smo, l1 "
        "with the other solvers and --combination product; lp for regression",
    )
    fit.add_argument(
        "--combination",
        choices=list(COMBINATIONS),
        default="sum",
        help="sum of the base kernels (default), or product: an RBF kernel with one learned "
        "width per feature (feature selection; --lam is the l1 penalty sigma)",
    )
    fit.add_argument(
        "--kernels",
        choices=list(cli_data.FAMILIES),
        help="kernel family: "
        + "; ".join(f"{k}: {f.description}" for k, f in cli_data.FAMILIES.items())
        + ". Default: the estimators' (svc+feature_rbf for classification and "
        "regression, simple_mkl for one-class; features with --combination product, mwumkl_all "
        "for multi-view sets, wd_position for sequence sets)",
    )


def _model_options(fit):
    """``fit``'s model parameters: the regulariser's, the losses', C."""
    fit.add_argument("-p", type=float, default=2.0, help="norm of the lp regulariser (> 1)")
    fit.add_argument(
        "--lam", type=float, default=None,
        help="weight of the lp or kl regulariser (default: the estimator's; for classification "
        f"{SVC_KERNEL_LAM:g} with --regularizer auto's KL prior on SVC's kernel, else 1)",
    )
    fit.add_argument(
        "--epsilon", type=float, default=0.1, help="regression: half-width of the tube"
    )
    fit.add_argument(
        "--nu", type=float, default=DEFAULT_NU,
        help="one-class: bound on the fraction of training points left outside, the expected "
        f"share of outliers (default {DEFAULT_NU:g}, as OneClassMKL's)",
    )
    fit.add_argument(
        "--inlier-class", metavar="LABEL",
        help="one-class: the label of the inliers (default: the most frequent class)",
    )
    fit.add_argument("-C", type=float, default=1.0, help="SVM cost, as in an SVC (default 1)")


def _solver_options(fit):
    """``fit``'s kernel memory and stopping rule."""
    fit.add_argument(
        "--cache-size", type=_cache_size, default="auto",
        help="MB of kernel rows when kernels are computed on demand (default auto: every row "
             "if they fit in half the memory budget, else that half)",
    )
    fit.add_argument(
        "--kernel-storage", choices=["auto", "stack", "rows"], default="auto",
        help="hold the base kernels as an (n, n, m) stack, as rows computed on demand, or "
        "the stack when it fits in the memory budget (auto)",
    )
    fit.add_argument(
        "--kernel-approximation", choices=["auto", "exact", "nystroem", "rff"],
        default="auto",
        help="low-rank features for the kernels: Nystroem landmarks or random Fourier "
        "features (exact for linear kernels and kernels on few-valued columns); auto: "
        "nystroem from 20,000 training points on when the solver runs on them, else exact",
    )
    fit.add_argument(
        "--n-components", type=_components, default="auto",
        help="landmarks (random features) of each approximated kernel (default auto: 1,000, "
        "fewer if the features do not fit in the memory budget)",
    )
    fit.add_argument(
        "--kernel-dtype", choices=["float64", "float32"], default="float64",
        help="precision of the kernel values held (default float64; float32 halves the "
        "memory of a stack, a row cache or low-rank features)",
    )
    fit.add_argument(
        "--memory-budget", type=float, metavar="MB",
        help="memory a fit may plan for (default: half the room under every memory limit: "
        "free memory, ulimit -v and -d, the cgroup limit)",
    )
    fit.add_argument("--tol", type=float, default=1e-3, help="relative duality gap to reach")
    fit.add_argument("--max-iter", type=int, default=500,
                     help="outer iterations at the most, each ending in a duality-gap check "
                          "(the unit per solver: the summary's, e.g. smo's gap checks); "
                          "reaching it warns with the gap reached")
    fit.add_argument(
        "--yes", action="store_true",
        help="run a fit planned to take an hour or more (without it such a fit is refused "
        "before it solves, naming the estimate and cheaper routes); the plan (memory, the "
        "time of a pass over the kernel rows) is printed on stderr before every fit (not "
        "with --json, whose stderr holds errors only), with cheaper routes from a minute on",
    )


def _output_options(fit):
    """``fit``'s evaluation (split or cross-validation) and outputs."""
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


def main(argv=None) -> int:
    """Entry point of the ``mklearn`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "fit":
            return _fit(args)
        if args.command == "predict":
            return _predict(args)
        return _datasets()
    except BrokenPipeError:  # output piped into e.g. `head`: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except LongFitWarning as exc:  # raised by the fit's plan, before it solves
        print(f"mklearn: error: {_refusal(exc.plan)}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError, ImportError) as exc:
        message = " ".join(str(exc).split())  # one line, whatever the message holds
        print(f"mklearn: error: {message}", file=sys.stderr)
        return 2
    except MemoryError:
        print("mklearn: error: out of memory; lower --memory-budget (the fit then plans "
              "for less, e.g. --kernel-storage rows) or --cache-size", file=sys.stderr)
        return 2


def _refusal(plan) -> str:
    """The one line refusing a fit planned to take an hour or more."""
    with command_line_words():
        routes = f"; cheaper routes: {plan.routes_text()}" if plan.routes else ""
    return (f"this fit is planned to take {duration(plan.seconds)} or more ({plan.estimate()})"
            f"{routes}; or run it anyway with --yes")


def _fit_refusing_long(model, X, y, refuse):
    """``model.fit(X, y)``; with ``refuse``, a plan of an hour or more raises its
    :class:`~mklearn.fit_plan.LongFitWarning` before the solver runs."""
    with warnings.catch_warnings(), command_line_words():
        warnings.simplefilter("error" if refuse else "ignore", LongFitWarning)
        return model.fit(X, y)


def _datasets() -> int:
    rows = [("name", "samples", "features", "task", "labels"), *cli_data.all_datasets()]
    widths = [max(len(str(row[j])) for row in rows) for j in range(4)]
    for row in rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(row[:4], widths, strict=True))
              + "  " + row[4])
    return 0


def _load(args):
    """(X, y, name, task, input kind) with the task resolved from --task and the data set."""
    args.feature_names = None
    if args.data:
        X, y = load_data_file(args.data, label_column=args.label_column)
        if y is None:
            raise ValueError(f"{args.data} has no labels; fit needs a label on every line")
        names = csv_feature_names(args.data, label_column=args.label_column)
        if names is not None and len(set(names)) == len(names):  # unique: predict checks them
            args.feature_names = np.asarray(names, dtype=object)
        return X, y, args.data, args.task or "classification", "numeric"
    if args.label_column is not None:
        raise ValueError("--label-column applies to --data CSV files, not to bundled data sets")
    X, y, name, task, kind = cli_data.load(args.dataset or "sonar")
    if args.task is not None and args.task != task:
        if not (args.task == "one-class" and task == "classification"):
            raise ValueError(f"{name} is a {task} data set, not {args.task}")
        task = args.task
    return X, y, name, task, kind


def _resolve_kernels(args, kind, name, task):
    """The kernel family from --kernels, --combination and the kind of input."""
    if args.kernels is None:
        if args.combination == "product":
            args.kernels = "features"
        else:
            extra = cli_data.EXTRA_SETS.get(name)
            estimator = {"regression": MKLRegressor, "one-class": OneClassMKL}.get(
                task, MKLClassifier)
            args.kernels = extra.kernels if extra is not None else estimator().kernels
    family = cli_data.FAMILIES[args.kernels]
    if family.input == "product":
        args.combination = "product"
    elif args.combination == "product":
        raise ValueError(
            f"--combination product learns one width per feature: use --kernels features, "
            f"not {args.kernels}"
        )
    wanted = {"numeric": ("numeric", "views"), "sequences": ("sequences",),
              "product": ("numeric",)}[family.input]
    if kind not in wanted:
        suitable = [k for k, f in cli_data.FAMILIES.items()
                    if kind in {"numeric": ("numeric", "views"), "sequences": ("sequences",),
                                "product": ("numeric",)}[f.input]]
        raise ValueError(
            f"--kernels {args.kernels} does not apply to {kind} data; use one of "
            f"{', '.join(suitable)}"
        )


def _subset(X, y, args, regression):
    """A random (stratified) subset of --n-samples rows."""
    from sklearn.model_selection import train_test_split

    n = cli_data.n_rows(X)
    if args.n_samples is None or args.n_samples >= n:
        return X, y
    if args.n_samples < 4:
        raise ValueError(f"--n-samples must be at least 4, got {args.n_samples}")
    rows, _ = train_test_split(np.arange(n), train_size=args.n_samples,
                               stratify=None if regression else y, random_state=args.seed)
    rows = np.sort(rows)
    return cli_data.take(X, rows), y[rows]


def _resolve_defaults(args, task):
    """Default regulariser; the estimators check the solver/regulariser pair."""
    solver = SOLVERS.get(args.solver)  # None for "auto"
    if task == "regression":
        args.regularizer = args.regularizer or _regression_default(solver)
    elif task == "one-class":
        args.regularizer = args.regularizer or "l1"
        takers = solvers_for("one-class")
        if (solver is not None and args.solver not in takers) or args.regularizer != "l1":
            solvers = " or ".join(sorted(takers))
            raise ValueError(f"one-class MKL is solved by --solver {solvers} with l1 weights")
        if args.combination == "product":
            raise ValueError("--combination product is for classification; drop it")
    else:
        args.regularizer = args.regularizer or "auto"  # MKLClassifier's rule; regularizer_
    if args.interleaved and (solver is None or "interleaved" not in solver.options):
        takers = [name for name, info in SOLVERS.items() if "interleaved" in info.options]
        raise ValueError(f"--interleaved is an option of --solver {' or '.join(takers)}")
    if args.combination == "product" and task == "regression":
        raise ValueError("--combination product is for classification; drop it for regression")


def _regression_default(solver):
    """The regression regulariser of a solver named without one: "l1" for an MKL solver
    made for the simplex, else MKLRegressor's "lp" (one-shot learners ignore it)."""
    if (solver is None or solver.one_shot or "regression" not in solver.tasks
            or solver.auto_regularizer != "l1"):
        return "lp"
    return "l1"


def _lam_used(model, args):
    """The ``lam`` the fit used (``lam="auto"`` resolved), else the one given, else 1."""
    return float(getattr(model, "lam_", args.lam if args.lam is not None else 1.0))


def _estimator(args, verbose, task="classification"):
    common = dict(
        kernels=cli_data.FAMILIES[args.kernels].make(),
        regularizer=args.regularizer,
        p=args.p,
        C=args.C,
        tol=args.tol,
        max_iter=args.max_iter,
        cache_size=args.cache_size,
        kernel_storage=args.kernel_storage,
        memory_budget=args.memory_budget,
        kernel_approximation=args.kernel_approximation,
        n_components=args.n_components,
        kernel_dtype=args.kernel_dtype,
        verbose=verbose,
    )
    if args.lam is not None:  # else each estimator's default
        common["lam"] = args.lam
    options = {"interleaved": True} if args.interleaved else None
    if task == "one-class":
        if args.kernel_approximation in ("nystroem", "rff"):
            raise ValueError("--kernel-approximation is for classification and regression; "
                             "one-class MKL uses exact kernels: drop it")
        return OneClassMKL(kernels=common["kernels"], solver=args.solver, nu=args.nu,
                           tol=args.tol, max_iter=args.max_iter, solver_options=options)
    if task == "regression":
        return MKLRegressor(
            **common, solver=args.solver, epsilon=args.epsilon, solver_options=options
        )
    return MKLClassifier(
        **common,
        solver=args.solver,
        combination=args.combination,
        solver_options=options,
    )


def _fit(args) -> int:
    from sklearn.model_selection import KFold, StratifiedKFold, train_test_split
    from sklearn.utils.multiclass import type_of_target

    if args.save:
        check_writable(args.save)  # before any work, not after the fit
    if args.plot:
        _pyplot()  # ImportError with the install hint before a long fit
    X, y, name, task, kind = _load(args)
    _resolve_kernels(args, kind, name, task)
    _resolve_defaults(args, task)
    regression = task == "regression"
    X, y = _subset(X, y, args, regression)
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
    inlier = _inlier_class(args, y) if task == "one-class" else None
    out = _Report(args.json)
    targets = (
        f"targets in [{np.min(y):g}, {np.max(y):g}]"
        if regression
        else "classes " + ", ".join(f"{c}: {int(np.sum(y == c))}" for c in np.unique(y))
    )
    out.line(
        f"data: {name}: {len(y)} samples, {cli_data.describe(X, kind)}, {targets}"
    )
    reports = []
    for k, (train, test) in enumerate(folds):
        model = _estimator(args, verbose=0 if args.json else 1, task=task)
        start = time.perf_counter()
        fit_rows = train if inlier is None else train[y[train] == inlier]
        _fit_refusing_long(model, cli_data.take(X, fit_rows), y[fit_rows], not args.yes)
        wall = time.perf_counter() - start
        truth = y if inlier is None else np.where(y == inlier, 1, -1)
        reports.append(_summary(model, X, truth, train, test, wall, regression))
        _name_features(model, args.feature_names)
        if inlier is not None:
            reports[-1]["n_fit"] = int(len(fit_rows))
        reports[-1]["compile_seconds"] = model.compile_time_  # kernel and solve are net of it
        if k == 0:
            family = f"{args.kernels} ({cli_data.FAMILIES[args.kernels].description})"
            chosen = " chosen by --solver auto" if args.solver == "auto" else ""
            regularizer = getattr(model, "regularizer_", args.regularizer)
            out.line(
                f"kernels: {family}; solver {model.solver_} "
                f"({SOLVERS[model.solver_].description}){chosen}, regularizer {regularizer}"
                + (f" (p={args.p:g}, lam={_lam_used(model, args):g})" if regularizer == "lp"
                   else "")
                + (f" (lam={_lam_used(model, args):g})" if regularizer == "kl" else "")
                + (f", C={args.C:g}" if inlier is None else "")
                + (f", epsilon={args.epsilon:g}" if regression else "")
                + (f"; nu={args.nu:g}, inliers: class {_label_text(inlier)}"
                   if inlier is not None else "")
            )
            out.line(
                f"           {len(model.kernel_names_)} base kernels on "
                f"{len(fit_rows)} training points"
                + ("" if inlier is None else f" of class {_label_text(inlier)}")
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
        written = save_plots(first, args.plot)
        out.line(f"plots written: {', '.join(written)}")
    if args.save:
        if args.cv is not None:
            rows = np.arange(len(y)) if inlier is None else np.flatnonzero(y == inlier)
            model = _fit_refusing_long(_estimator(args, verbose=0, task=task),
                                       cli_data.take(X, rows), y[rows], not args.yes)
            _name_features(model, args.feature_names)
        save_model(model, args.save)
        out.line(f"model saved to {args.save}")
    out.finish(
        {
            "data": name,
            "task": task,
            "n_samples": int(len(y)),
            "n_features": int(first.n_features_in_) if hasattr(first, "n_features_in_") else None,
            "kernels": args.kernels,
            "solver": first.solver_,
            "solver_requested": args.solver,
            "combination": args.combination,
            "regularizer": getattr(first, "regularizer_", args.regularizer),
            "C": args.C,
            "p": args.p,
            "lam": _lam_used(first, args),
            "folds": reports,
        }
    )
    return 0


def _name_features(model, names):
    """Record a CSV header's feature names in the model (``feature_names_in_``, as a fit on a
    DataFrame would), so that the saved model checks them at predict."""
    if names is not None:
        model.feature_names_in_ = names


def _inlier_class(args, y):
    """The label whose points a one-class model learns (--inlier-class, or the majority)."""
    labels, counts = np.unique(y, return_counts=True)
    if args.inlier_class is None:
        return labels[np.argmax(counts)]
    for label in labels:
        if _label_text(label) == args.inlier_class or str(label) == args.inlier_class:
            return label
    raise ValueError(
        f"--inlier-class {args.inlier_class} is not a class of the data; classes: "
        f"{', '.join(_label_text(c) for c in labels)}"
    )


def _top(weights, names, k=TOP_WEIGHTS):
    order = np.argsort(-weights, kind="stable")[:k]
    return [{"kernel": names[i], "weight": float(weights[i])} for i in order if weights[i] > 0]


def _summary(model, X, y, train, test, wall, regression=False):
    """One fold's numbers; a multiclass model also gets one entry per class, labelled."""
    weights = np.atleast_2d(model.kernel_weights_)
    X_train, X_test = cli_data.take(X, train), cli_data.take(X, test)
    if regression:
        from sklearn.metrics import mean_squared_error

        scores = {
            "train_r2": float(model.score(X_train, y[train])),
            "test_r2": float(model.score(X_test, y[test])),
            "test_rmse": float(np.sqrt(mean_squared_error(y[test], model.predict(X_test)))),
        }
    else:
        scores = {
            # one-class: y is +1 for the inlier class, -1 for the others
            "train_accuracy": float(np.mean(model.predict(X_train) == y[train])),
            "test_accuracy": float(np.mean(model.predict(X_test) == y[test])),
        }
    fit = {
        "objective": np.atleast_1d(model.objective_).tolist(),
        "duality_gap": np.atleast_1d(model.duality_gap_).tolist(),
        "relative_duality_gap": np.atleast_1d(model.relative_duality_gap_).tolist(),
        "n_iter": np.atleast_1d(model.n_iter_).tolist(),
        "n_svm_solves": np.atleast_1d(getattr(model, "n_svm_solves_", 0)).tolist(),
        "n_smo_steps": np.atleast_1d(getattr(model, "n_smo_steps_", 0)).tolist(),
    }
    report = {
        **scores,
        "solver": model.solver_,
        "n_iter_unit": SOLVERS[model.solver_].n_iter_unit,  # what one outer iteration is
        "n_train": int(len(train)),
        "n_test": int(len(test)),
        "n_kernels": int(weights.shape[1]),
        "n_selected": int(np.count_nonzero(np.any(weights > 0, axis=0))),
        # a multiclass model's top weights are the mean over its one-vs-rest classes
        "top_weights": _top(weights.mean(axis=0), model.kernel_names_),
        "top_weights_of": "model" if weights.shape[0] == 1 else "mean over classes",
        **fit,
        "kernel_seconds": model.kernel_time_,
        "solve_seconds": model.solve_time_,
        "wall_seconds": wall,
        "kernel_approximation": getattr(model, "kernel_approximation_", "exact"),
    }
    if getattr(model, "low_rank_", None) is not None:
        report["rank"] = int(model.low_rank_.rank)
        report["approximation_error"] = float(model.approximation_error_)
    if weights.shape[0] > 1:
        report["per_class"] = [
            {
                "class": _label_value(label),
                **{key: values[c] for key, values in fit.items()},
                "n_selected": int(np.count_nonzero(weights[c])),
                "top_weights": _top(weights[c], model.kernel_names_, 5),
            }
            for c, label in enumerate(model.classes_)
        ]
    return report


def _smo_steps(counts):
    """", SMO steps ..." for solvers that count them (inner steps of their outer
    iterations), else nothing."""
    return f", SMO steps {', '.join(map(str, counts))}" if any(counts) else ""


def _label_value(label):
    """A class label as plain JSON (numpy scalars as Python numbers)."""
    return label.item() if isinstance(label, np.generic) else label


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
        of = "" if r["top_weights_of"] == "model" else ", mean over the one-vs-rest classes"
        print(
            f"\nkernel weights ({r['n_selected']} of {r['n_kernels']} non-zero; top "
            f"{len(r['top_weights'])}{of}):"
        )
        for item in r["top_weights"]:
            print(f"  {item['weight']:8.4f}  {item['kernel']}")
        gap = (
            ", ".join(f"{g:.3g}" for g in r["duality_gap"])
            + " (absolute), relative duality gap "
            + ", ".join(f"{g:.3g}" for g in r["relative_duality_gap"])
        )
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
        if "per_class" in r:
            self._per_class(r["per_class"], r["n_iter_unit"])
        else:
            print(
                f"objective {obj}, duality gap {gap}, {r['n_iter_unit']} "
                f"{', '.join(map(str, r['n_iter']))}, SVM solves "
                f"{', '.join(map(str, r['n_svm_solves']))}{_smo_steps(r['n_smo_steps'])}"
            )
        if "approximation_error" in r:
            print(f"low-rank kernels ({r['kernel_approximation']}): rank {r['rank']}, "
                  f"relative error of the kernel sum {r['approximation_error']:.2e}")
        compiled = ""
        if r["compile_seconds"] >= 0.005:
            compiled = f", numba compile/cache load {r['compile_seconds']:.2f} s"
            if r["compile_seconds"] > 1.0:
                compiled += " (compiled on first use, cached for later runs)"
        print(
            f"time: kernels {r['kernel_seconds']:.2f} s, solver {r['solve_seconds']:.2f} s"
            f"{compiled}, fit {r['wall_seconds']:.2f} s"
        )

    @staticmethod
    def _per_class(rows, n_iter_unit):
        print("\nper class (one-vs-rest):")
        for row in rows:
            gap = row["duality_gap"]
            gap = ("none" if np.isnan(gap) else
                   f"{gap:.3g} (relative {row['relative_duality_gap']:.3g})")
            top = ", ".join(f"{t['weight']:.3f} {t['kernel']}" for t in row["top_weights"][:3])
            print(
                f"  class {_label_text(row['class'])}: objective {row['objective']:.6g}, "
                f"duality gap {gap}, {n_iter_unit} {row['n_iter']}, SVM solves "
                f"{row['n_svm_solves']}{_smo_steps([row['n_smo_steps']])}, "
                f"{row['n_selected']} kernels; top {top}"
            )

    def finish(self, document):
        if self.as_json:
            print(json.dumps(document, indent=2))


def _predict(args) -> int:
    if args.output:
        check_writable(args.output)
    model = load_model(args.model)
    final = model.steps[-1][1] if hasattr(model, "steps") else model
    with warnings.catch_warnings(record=True) as notes:
        warnings.simplefilter("always", UserWarning)
        X, y = cli_data.load_for_model(args.data, args.label_column, model.n_features_in_)
    for note in notes:
        print(f"mklearn: note: {' '.join(str(note.message).split())}", file=sys.stderr)
    fitted = getattr(model, "feature_names_in_", None)
    if fitted is not None:
        header = csv_feature_names(args.data, label_column=args.label_column,
                                   n_features=model.n_features_in_)
        if header is not None:  # columns by name; without a header, by position
            X = X[:, feature_order(fitted, header, args.data)]
    with warnings.catch_warnings():  # X is an array: its columns were matched just above
        warnings.filterwarnings("ignore", "X does not have valid feature names")
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
