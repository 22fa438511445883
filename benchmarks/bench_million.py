"""MKL on low-rank kernels at large n, against the anchors a scikit-learn user would pick.

Each problem runs, in one process and one after the other:

- **mklearn low rank**: ``MKLClassifier(kernel_approximation="nystroem")`` with the
  problem's kernel family (the estimators' default ``svc+feature_rbf`` on the real sets;
  50 kernels on the synthetic ones), ``n_components`` landmarks per approximated kernel;
  the solver ``auto`` picks (SMO-MKL's KL formulation in feature space) and, with
  ``--solvers``, others (``spg-l1``: SPG-GMKL l1);
- **Nystroem + LinearSVC**: ``make_pipeline(StandardScaler(), Nystroem(n_components=R),
  LinearSVC())`` at mklearn's total rank R (one RBF kernel with SVC's ``gamma="scale"``);
  ``SGDClassifier(loss="hinge")`` in LinearSVC's place where its float64 features and
  LinearSVC's copy of them (``2 x 8 n R`` bytes) would not fit in half the free memory;
- **SVC()** on standardised features, on a subsample of ``--svc-points`` points;
- **exact mklearn** (``kernel_approximation="exact"``) where ``n <= --exact-max``.

Reported per row: fit and predict seconds, peak RSS (MB, the process's high-water mark
after the row: rows only ever raise it, so it bounds that row's use), test accuracy (auPRC
and auROC beside it), the rank R and the measured approximation error
(``approximation_error_``).
SPG-GMKL's own largest run is printed beside them (Jain, Vishwanathan and Varma, KDD 2012,
section 5: Covertype, 581,012 points and 5 kernels, 64 hours on one core, 44 of them for
the first SVM).

Problems: ``a9a`` (the a9a and a9a.t files), ``w8a`` (a seeded 80/20 split of the w8a
file), ``c-elegans`` (the 100,000 C. elegans acceptor candidates of
``load_c_elegans_acceptor_large``, all 398 nt one-hot coded as 1,592 binary features, a
seeded 80/20 split; auPRC is its paper's measure: Sonnenburg et al., BMC Bioinformatics
2007), ``c-elegans-strings`` (the same split as sequences, with the string kernels of
:func:`string_kernels`; the anchors read the one-hot features), and ``synthetic-N``: N
points of 20 standard normal features whose label is the sign
of ``sin(2 x0) x1 + x2^2 - 1 + 0.5 x3 x4`` (a non-linear boundary), 20% held out, and
``tabular-N``: N rows of a census-like table, numeric and one-hot features (see
:func:`tabular`), kept for checking the default estimator (``--solvers default``:
``MKLClassifier()`` with no option) against ``Nystroem(n_components=1000)``
(``--anchor-rank 1000``) and ``SVC()`` on 20,000 rows; nothing in mklearn was tuned on it.
``a9a-rbf50`` and ``w8a-rbf50`` are a9a and w8a with the 50 RBF kernels of
``bench_large_scale.py`` (10 widths on 5 feature blocks), whose exact MKL fits in minutes:
with ``--exact-max 50000`` the low-rank fit is compared with exact MKL on the same kernels.

    python benchmarks/bench_million.py --problems a9a w8a synthetic-100000
    python benchmarks/bench_million.py --problems c-elegans
    python benchmarks/bench_million.py --problems c-elegans-strings --n-components 200 \
        --run c-elegans-strings
    python benchmarks/bench_million.py --problems synthetic-1000000 --dtype float32
    python benchmarks/bench_million.py --problems tabular-300000 --solvers default \
        --anchor-rank 1000
    python benchmarks/bench_million.py --problems w8a-rbf50 a9a-rbf50 --n-components 100 \
        --exact-max 50000 --run exact-rbf50
    python benchmarks/bench_million.py --problems synthetic-100000 synthetic-300000 \
        synthetic-1000000 --dcd-rank 200 --run dcd-scaling

``--dcd-rank R`` times LIBLINEAR's dual coordinate descent alone on ``Nystroem(R)``
features at each size (``LinearSVC()`` and ``LinearSVC(loss="hinge")``, the loss mklearn
solves): the growth of the method's own cost with n at a fixed C, beside which the fit's
growth from 10^5 to 10^6 points is read.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small_sets import machine_info, save_run  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
DEFAULT_OUTPUT = Path(__file__).resolve().parent / "results" / "million.json"
PAPER = "SPG-GMKL, Covertype (581,012 points, 5 kernels): 64 h on one core, 44 h the first SVM"


def synthetic(n, seed=0):
    """``n`` points, 20 features, the boundary of the module docstring; 20% held out."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 20)).astype(np.float64)
    score = np.sin(2 * X[:, 0]) * X[:, 1] + X[:, 2] ** 2 - 1 + 0.5 * X[:, 3] * X[:, 4]
    y = np.where(score + 0.1 * rng.standard_normal(n) > 0, 1, -1)
    cut = int(0.8 * n)
    return X[:cut], y[:cut], X[cut:], y[cut:]


TABULAR_LEVELS = (3, 5, 8, 12)  # levels of the tabular sets' categorical features


def tabular(n, seed=0):
    """``n`` rows of a census-like table: 10 numeric features (normal, log-normal, uniform
    and integer counts) and 4 categorical ones with ``TABULAR_LEVELS`` levels, one-hot (28
    binary columns); the label a noisy non-linear score of both, with interactions between
    them; the last ``min(50,000, n / 5)`` rows held out."""
    rng = np.random.default_rng(seed)
    numeric = np.column_stack([
        rng.standard_normal((n, 4)),
        rng.lognormal(0.0, 1.0, (n, 2)),
        rng.uniform(-2.0, 2.0, (n, 2)),
        rng.poisson(3.0, (n, 2)).astype(np.float64)])
    levels = [rng.integers(0, count, n) for count in TABULAR_LEVELS]
    effects = [rng.normal(0.0, 1.0, count) for count in TABULAR_LEVELS]
    score = (np.sin(2 * numeric[:, 0]) * numeric[:, 1] + 0.5 * numeric[:, 2] ** 2
             - np.log1p(numeric[:, 4]) + np.abs(numeric[:, 6]) - 0.3 * numeric[:, 8]
             + effects[0][levels[0]] + effects[1][levels[1]] * numeric[:, 3]
             + effects[2][levels[2]] * (numeric[:, 7] > 0) + 0.5 * effects[3][levels[3]])
    noisy = score + 0.5 * rng.standard_normal(n)
    y = np.where(noisy > np.quantile(noisy, 0.7), 1, -1)
    one_hot = [np.eye(count)[codes] for count, codes in zip(TABULAR_LEVELS, levels,
                                                             strict=True)]
    X = np.column_stack([numeric, *one_hot])
    cut = n - min(50_000, n // 5)
    return X[:cut], y[:cut], X[cut:], y[cut:]


def synthetic_kernels(n_features=20):
    """50 kernels: SVC's kernel (``gamma = 1 / n_features`` on these unit-variance features)
    and RBFs on all features at 4 widths, one RBF of width 1 and one of width 2 on each
    feature, and 5 linear kernels on blocks of 4 features."""
    from mklearn.kernels import RBF, Linear

    scale = np.sqrt(n_features)
    kernels = [RBF(gamma=1.0 / n_features)] + [RBF(sigma=s * scale)
                                                for s in (0.25, 0.5, 1.0, 2.0)]
    for j in range(n_features):
        kernels += [RBF(sigma=1.0, features=[j]), RBF(sigma=2.0, features=[j])]
    kernels += [Linear(features=list(range(i, i + 4))) for i in range(0, n_features, 4)]
    return kernels


WD_ORDER = 20  # the weighted-degree order of the splice-site papers
WD_BLOCK = 50  # positions per WD sub-kernel
SPECTRUM_ORDERS = (3, 4, 5, 6)


def string_kernels(length):
    """The kernels of ``c-elegans-strings``: the WD kernel of order ``WD_ORDER`` split into
    sub-kernels on blocks of ``WD_BLOCK`` positions (Sonnenburg et al., JMLR 2006, section
    4.1), and spectrum kernels of the orders ``SPECTRUM_ORDERS``."""
    from mklearn.kernels import Spectrum, wd_sub_kernels

    wd = wd_sub_kernels(WD_ORDER, by="position", block_size=WD_BLOCK).specs(length)
    return wd + [Spectrum(order) for order in SPECTRUM_ORDERS]


def one_hot(seqs):
    """(n, 4 L) binary features of ``n`` DNA sequences of length L: one column per base and
    position, A, C, G then T."""
    codes = np.frombuffer("".join(seqs).encode("ascii"), dtype=np.uint8).reshape(len(seqs), -1)
    return np.concatenate([codes == ord(base) for base in "ACGT"], axis=1).astype(np.float64)


def split(X, y, seed=0):
    """A seeded 80/20 split of (X, y)."""
    order = np.random.default_rng(seed).permutation(X.shape[0])
    cut = int(0.8 * X.shape[0])
    train, test = order[:cut], order[cut:]
    return X[train], y[train], X[test], y[test]


RBF50 = "-rbf50"  # suffix of a9a and w8a with 50 RBF kernels: exact MKL fits beside them


def load(problem):
    """(X_train, y_train, X_test, y_test, kernels) of a problem name."""
    from sklearn.datasets import load_svmlight_file

    if problem.startswith("synthetic-"):
        return (*synthetic(int(problem.split("-")[1])), synthetic_kernels())
    if problem.startswith("tabular-"):
        return (*tabular(int(problem.split("-")[1])), "svc+feature_rbf")
    if problem.endswith(RBF50):  # a9a or w8a with the 50 RBF kernels of bench_large_scale
        from bench_large_scale import kernel_specs

        X, y, Xt, yt, _ = load(problem[:-len(RBF50)])
        return X, y, Xt, yt, kernel_specs(X, seed=0)[0]
    if problem == "a9a":
        X, y = load_svmlight_file(str(DATA / "a9a" / "a9a"), n_features=123)
        Xt, yt = load_svmlight_file(str(DATA / "a9a" / "a9a.t"), n_features=123)
        return X.toarray(), y, Xt.toarray(), yt, "svc+feature_rbf"
    if problem == "w8a":
        X, y = load_svmlight_file(str(DATA / "w8a" / "w8a"), n_features=300)
        return (*split(X.toarray(), y), "svc+feature_rbf")
    if problem.startswith("c-elegans"):
        from mklearn.datasets import load_c_elegans_acceptor_large

        seqs, y = load_c_elegans_acceptor_large(window=None)
        if problem == "c-elegans-strings":
            return (*split(np.asarray(seqs), y), string_kernels(len(seqs[0])))
        if problem == "c-elegans":
            return (*split(one_hot(seqs), y), "svc+feature_rbf")
    raise SystemExit(f"unknown problem {problem!r}: a9a, w8a, a9a-rbf50, w8a-rbf50, "
                     "c-elegans, c-elegans-strings, synthetic-N or tabular-N")


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def scores(y_test, decision):
    """Accuracy, auPRC and auROC of the decision values."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    positive = np.max(y_test)
    accuracy = float(np.mean(np.where(decision > 0, positive, np.min(y_test)) == y_test))
    return (accuracy, float(average_precision_score(y_test == positive, decision)),
            float(roc_auc_score(y_test == positive, decision)))


def timed(model, X, y, X_test, y_test):
    start = time.perf_counter()
    model.fit(X, y)
    fit = time.perf_counter() - start
    start = time.perf_counter()
    decision = np.asarray(model.decision_function(X_test))
    predict = time.perf_counter() - start
    accuracy, auprc, auroc = scores(y_test, decision)
    return {"fit_seconds": fit, "predict_seconds": predict, "accuracy": accuracy,
            "auprc": auprc, "auroc": auroc, "peak_mb": peak_mb()}


SOLVERS = {"auto": {}, "spg-l1": {"solver": "spg", "regularizer": "l1"}}
DEFAULT = "default"  # MKLClassifier() itself: no option at all


WARM_UP_POINTS = 4000  # a first fit on this many points compiles what the timed fit runs


def warmed_up(model, X, y, low_rank=True):
    """``model``, after a fit of its path (low rank: the default estimator chooses exact
    kernels on so few points, it is told low rank) on the first ``WARM_UP_POINTS`` points,
    so that the timed fit compiles nothing."""
    from sklearn.base import clone

    warm = clone(model)
    if low_rank:
        warm.set_params(kernel_approximation="nystroem",
                        n_components=min(500, WARM_UP_POINTS // 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm.fit(X[:WARM_UP_POINTS], y[:WARM_UP_POINTS]).decision_function(X[:10])
    return model


def mklearn_rows(problem, data, args):
    from mklearn import MKLClassifier

    X, y, X_test, y_test, kernels = data
    rows = []
    for name in args.solvers:
        model = warmed_up(MKLClassifier() if name == DEFAULT else MKLClassifier(
            kernels=kernels, kernel_approximation="nystroem", n_components=args.n_components,
            kernel_dtype=args.dtype, random_state=0, n_jobs=-1, **SOLVERS[name]), X, y)
        row = timed(model, X, y, X_test, y_test)
        row.update(method=f"mklearn low rank ({name})", rank=model.low_rank_.rank,
                   approximation_error=model.approximation_error_, solver=model.solver_,
                   relative_duality_gap=float(model.relative_duality_gap_),
                   n_iter=int(model.n_iter_), n_smo_steps=int(model.n_smo_steps_),
                   kernels=len(model.kernel_names_),
                   kernel_approximation=model.kernel_approximation_,
                   exact_kernels=int(model.low_rank_.exact_.sum()))
        rows.append(row)
        print_row(problem, row)
    return rows


def anchor_rows(problem, data, rank, args):
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import SGDClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC, LinearSVC

    from mklearn.kernels.memory_limits import available_memory

    X, y, X_test, y_test, _ = data
    if X.dtype.kind == "U":  # sequences: the anchors read their one-hot features
        X, X_test = one_hot(X), one_hot(X_test)
    gamma = 1.0 / X.shape[1]  # SVC's "scale" on standardised features
    rows = []
    features = 8 * X.shape[0] * rank  # the pipeline's float64 Nystroem features
    fits = 2 * features <= 0.5 * available_memory()
    learner = LinearSVC() if fits else SGDClassifier(loss="hinge", random_state=0)
    method = f"Nystroem({rank}) + {type(learner).__name__}"
    if features > 0.5 * available_memory():
        row = {"method": method, "rank": rank, "skipped": (
            f"its {X.shape[0]} x {rank} float64 features need {features / 2**30:.1f} GiB, "
            f"above half the {available_memory() / 2**30:.1f} GiB available")}
        print(f"{problem:<18} {method:<32} skipped: {row['skipped']}", flush=True)
        rows.append(row)
    else:
        nystroem = make_pipeline(StandardScaler(), Nystroem(gamma=gamma, n_components=rank,
                                                            random_state=0), learner)
        row = timed(nystroem, X, y, X_test, y_test)
        row.update(method=method, rank=rank)
        rows.append(row)
        print_row(problem, row)
    points = min(args.svc_points, X.shape[0])
    pick = np.random.default_rng(0).choice(X.shape[0], points, replace=False)
    row = timed(make_pipeline(StandardScaler(), SVC()), X[pick], y[pick], X_test, y_test)
    row.update(method=f"SVC() on {points} points", points=points)
    rows.append(row)
    print_row(problem, row)
    return rows


def exact_rows(problem, data, args):
    from mklearn import MKLClassifier

    X, y, X_test, y_test, kernels = data
    if X.shape[0] > args.exact_max:
        return []
    model = warmed_up(MKLClassifier(kernels=kernels, kernel_approximation="exact", n_jobs=-1),
                      X, y, low_rank=False)
    row = timed(model, X, y, X_test, y_test)
    row.update(method="mklearn exact (auto)", solver=model.solver_,
               relative_duality_gap=float(model.relative_duality_gap_))
    print_row(problem, row)
    return [row]


def dcd_scaling_rows(problem, data, args):
    """LIBLINEAR's dual coordinate descent, the method the feature-space solvers follow, on
    ``Nystroem(n_components=--dcd-rank)`` features of the standardised points, C = 1: as a
    user runs it (``LinearSVC()``, the squared hinge) and on the hinge loss that mklearn's
    SVMs solve (``loss="hinge"``, LinearSVC's tolerance 1e-3): seconds and epochs
    (``n_iter_``) at this n, the cost the method itself pays as n grows at a fixed C."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    X, y = data[0], data[1]
    scaler = StandardScaler().fit(X)
    features = Nystroem(gamma=1.0 / X.shape[1], n_components=args.dcd_rank,
                        random_state=0).fit(scaler.transform(X[:20_000]))
    Phi = features.transform(scaler.transform(X))
    rows = []
    for name, learner in (("LinearSVC()", LinearSVC(max_iter=100_000)),
                          ("LinearSVC(loss='hinge')",
                           LinearSVC(loss="hinge", tol=1e-3, max_iter=100_000))):
        start = time.perf_counter()
        learner.fit(Phi, y)
        row = {"method": f"{name} on Nystroem({args.dcd_rank})",
               "fit_seconds": time.perf_counter() - start, "epochs": int(learner.n_iter_),
               "rank": args.dcd_rank, "peak_mb": peak_mb()}
        print(f"{problem:<18} {row['method']:<40} {row['fit_seconds']:>9.1f} "
              f"{row['epochs']:>8} epochs", flush=True)
        rows.append(row)
    return rows


def print_row(problem, row):
    rank = row.get("rank", "")
    error = row.get("approximation_error")
    print(f"{problem:<18} {row['method']:<32} {row['fit_seconds']:>9.1f} "
          f"{row['predict_seconds']:>8.2f} {row['accuracy']:>7.4f} {row['auprc']:>7.4f} "
          f"{row['auroc']:>7.4f} "
          f"{row['peak_mb']:>8.0f} {rank!s:>6} "
          f"{'' if error is None else f'{error:.1e}':>8}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", nargs="+", default=["a9a", "w8a", "synthetic-100000"])
    parser.add_argument("--solvers", nargs="+", default=["auto"],
                        choices=sorted(SOLVERS) + [DEFAULT],
                        help=f"{DEFAULT!r}: MKLClassifier() with no option")
    parser.add_argument("--n-components", type=int, default=500)
    parser.add_argument("--anchor-rank", type=int, default=0,
                        help="Nystroem's n_components (default: mklearn's total rank R)")
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    parser.add_argument("--svc-points", type=int, default=20_000)
    parser.add_argument("--exact-max", type=int, default=0,
                        help="run exact mklearn up to this many training points (0: never)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--run", default="default")
    parser.add_argument("--dcd-rank", type=int, default=0,
                        help="time only LinearSVC() (squared and plain hinge) on Nystroem "
                             "features of this rank (the growth of dual coordinate descent's "
                             "cost with n at a fixed C)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    print(PAPER)
    print(f"{'problem':<18} {'method':<32} {'fit s':>9} {'pred s':>8} {'acc':>7} {'auPRC':>7} "
          f"{'auROC':>7} "
          f"{'peak MB':>8} {'rank':>6} {'error':>8}")
    results = []

    def keep():  # after every step: a run stopped later keeps what it measured
        save_run({"machine": machine_info(),
                  "arguments": vars(args) | {"output": str(args.output)},
                  "paper": PAPER, "problems": results}, args.output, args.run)

    for problem in args.problems:
        data = load(problem)
        rows = []
        results.append({"problem": problem, "n_train": int(data[0].shape[0]),
                        "n_test": int(data[2].shape[0]), "rows": rows})
        if args.dcd_rank:
            rows += dcd_scaling_rows(problem, data, args)
            keep()
            continue
        rows += mklearn_rows(problem, data, args)
        keep()
        rows += anchor_rows(problem, data, args.anchor_rank or rows[0]["rank"], args)
        keep()
        rows += exact_rows(problem, data, args)
        keep()


if __name__ == "__main__":
    main()
