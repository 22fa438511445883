"""mklearn's weight learners against MKLpy's on the same kernel stacks: weights, accuracy, time.

Problems: the seven small sets of ``bench_small_sets.py`` (the SimpleMKL family scaled to
mean diagonal 1, one seeded stratified 80/20 split) and the problems of ``bench_unseen.py``
(its seeded kernel families, mean diagonal 1; data from ``--data``). Every method fits the
same precomputed stack, in a forked child limited to ``--max-seconds``, on ``--threads``
cores (mklearn's ``n_jobs``, torch's threads and every BLAS pool).

- mklearn: ``MKLClassifier(kernels="precomputed", solver=name, C=C)`` for each name of
  ``--solvers`` registered in :data:`mklearn.solvers.SOLVERS` (others are skipped), each with
  its default regulariser, plus "easymkl-komd" (``solver_options={"learner": "komd"}``).
- MKLpy (only when ``import MKLpy`` works; an optional peer, never a dependency of mklearn):
  EasyMKL (``lam=0.1`` and its default learner ``KOMD(lam=0.1)``), AverageMKL, FHeuristic,
  PWMK and CKA, the last four with ``learner=SVC(C=C)``. Each mklearn method is set beside
  its peer (easymkl and easymkl-komd: EasyMKL; average: AverageMKL; fheuristic: FHeuristic;
  pwmk: PWMK; alignf: CKA, whose weights ``M^-1 a / ||M^-1 a||`` are divided by their sum
  for the comparison and may be negative) and ``max |d - d_peer|`` is reported.

``--timing``: EasyMKL alone against MKLpy's EasyMKL (both with the KOMD learner; mklearn's
SVM learner too, its solver function without the estimator's input checks, and those checks
alone) on the same stack of ``--timing-kernels`` RBF kernels (widths 0.25-4 times sqrt(d)) on
n seeded points of a9a, for each n of ``--timing-n``, ``--repeats`` times alternating, medians
reported.

    PYTHONPATH=. python benchmarks/bench_peers.py --sets sonar liver --problems w8a-1000
    PYTHONPATH=. python benchmarks/bench_peers.py --timing --timing-n 1000 3000 --run timing

Results: ``results/peers.json`` (one entry per ``--run``; see ``benchmarks/README.md``).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import warnings
from pathlib import Path

import bench_unseen
import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small_sets import SETS, machine_info, save_run  # noqa: E402
from bench_unseen import (  # noqa: E402
    PROBLEMS,
    Problem,
    compute_kernels,
    in_child,
    kernel_family,
    load,
)

OUTPUT = Path(__file__).resolve().parent / "results" / "peers.json"
MKLEARN = ("easymkl", "easymkl-komd", "alignf", "align", "fheuristic", "pwmk", "average",
           "spg", "smo")
PEER_OF = {"easymkl": "EasyMKL", "easymkl-komd": "EasyMKL", "average": "AverageMKL",
           "fheuristic": "FHeuristic", "pwmk": "PWMK", "alignf": "CKA"}
PEERS = ("EasyMKL", "AverageMKL", "FHeuristic", "PWMK", "CKA")


def mklpy_available():
    try:
        import MKLpy  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def registered(names):
    """The mklearn methods of ``names`` whose solver is registered."""
    from mklearn.solvers import SOLVERS

    return [name for name in names if name.split("-")[0] in SOLVERS]


def _mklearn_model(name, C, threads):
    from mklearn import MKLClassifier

    options = {"learner": "komd"} if name == "easymkl-komd" else None
    return MKLClassifier(kernels="precomputed", solver=name.split("-")[0], C=C,
                         n_jobs=threads, solver_options=options)


def fit_mklearn(name, train, y, test, y_test, C, threads):
    """One mklearn fit (a fit on 20 points first loads the compiled loops of every size)."""
    from sklearn.base import clone

    from mklearn.cli.warm_up import _paths_at_any_size

    model = _mklearn_model(name, C, threads)
    _, small = _signed_labels_and_warm_up_points(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _paths_at_any_size():
            clone(model).fit(train[np.ix_(small, small)], y[small])
        gc.collect()
        with threadpool_limits(limits=threads):
            start = time.perf_counter()
            model.fit(train, y)
            seconds = time.perf_counter() - start
    return {"fit_seconds": seconds, "accuracy": float(model.score(test, y_test)),
            "weights": np.asarray(model.kernel_weights_, dtype=float).tolist()}


def _signed_labels_and_warm_up_points(y):
    """y in {-1, +1}, and ten points of each class for the warm-up fit."""
    y_pm = np.where(y == np.unique(y)[1], 1.0, -1.0)
    return y_pm, np.r_[np.flatnonzero(y_pm > 0)[:10], np.flatnonzero(y_pm < 0)[:10]]


def fit_solver(name, train, y, test, y_test, C, threads):
    """EasyMKL's solver function alone (KOMD learner) on the stack: no input checks."""
    from mklearn.cli.warm_up import _paths_at_any_size
    from mklearn.formulation.combinations import SumOfKernels
    from mklearn.solvers.easymkl import easymkl

    y_pm, small = _signed_labels_and_warm_up_points(y)
    with _paths_at_any_size():
        easymkl(SumOfKernels(train[np.ix_(small, small)]), y_pm[small], C, learner="komd")
    gc.collect()
    with threadpool_limits(limits=threads):
        start = time.perf_counter()
        result = easymkl(SumOfKernels(train), y_pm, C, learner="komd")
        seconds = time.perf_counter() - start
    return {"fit_seconds": seconds, "weights": result.kernel_weights.tolist()}


def fit_checks(name, train, y, test, y_test, C, threads):
    """The estimator's input checks on the stack alone, as a fit makes them: the stack and its
    sum (NaN, symmetry, the sum's PSD test), then the learned kernel ``K(d)`` (symmetry and PSD
    test) at EasyMKL's weights, which are found, and ``K(d)`` combined, before the clock."""
    from mklearn.cli.warm_up import _paths_at_any_size
    from mklearn.formulation.combinations import SumOfKernels
    from mklearn.kernels.stack_checks import check_kernel_stack, check_learned_kernel
    from mklearn.solvers.easymkl import easymkl

    y_pm, small = _signed_labels_and_warm_up_points(y)
    with _paths_at_any_size():
        check_kernel_stack(train[np.ix_(small, small)], y[small])
        check_learned_kernel(SumOfKernels(train[np.ix_(small, small)]).kernel_major,
                             np.ones(train.shape[2]))
    provider = SumOfKernels(train)
    weights = easymkl(provider, y_pm, C, learner="komd").kernel_weights
    learned = provider.matrix(weights).copy()
    gc.collect()
    with threadpool_limits(limits=threads):
        start = time.perf_counter()
        check_kernel_stack(train, y, return_sum=True)
        check_learned_kernel(provider.kernel_major, weights, learned)
        seconds = time.perf_counter() - start
    return {"fit_seconds": seconds}


def _as_list(stack):
    import torch

    return [torch.from_numpy(np.ascontiguousarray(stack[:, :, k]))
            for k in range(stack.shape[2])]


def _peer_model(name, C):
    from MKLpy import algorithms
    from sklearn.svm import SVC

    if name == "EasyMKL":
        return algorithms.EasyMKL(lam=0.1)
    return getattr(algorithms, name)(learner=SVC(C=C))


def fit_peer(name, train, y, test, y_test, C, threads):
    """One MKLpy fit on the same stack (kernels as a list of torch matrices)."""
    import torch

    torch.set_num_threads(threads)
    model = _peer_model(name, C)
    KL, KL_test, labels = _as_list(train), _as_list(test), torch.from_numpy(np.asarray(y))
    gc.collect()
    with warnings.catch_warnings(), threadpool_limits(limits=threads):
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model.fit(KL, labels)
        seconds = time.perf_counter() - start
        predicted = np.asarray(model.predict(KL_test))
    weights = np.asarray(model.solution.weights, dtype=float)
    return {"fit_seconds": seconds, "accuracy": float(np.mean(predicted == y_test)),
            "weights": weights.tolist()}


def _difference(mine, peer):
    """``max |d - d_peer|`` with the peer's weights divided by their sum (CKA's are not)."""
    if "weights" not in mine or "weights" not in peer:
        return None
    d_peer = np.asarray(peer["weights"])
    total = d_peer.sum()
    if total == 0:
        return None
    return float(np.max(np.abs(np.asarray(mine["weights"]) - d_peer / total)))


def run_problem(label, train, y, test, y_test, args, methods, peers):
    """Every method on one stack; prints the rows and returns the record."""
    record = {"problem": label, "n": int(train.shape[0]), "n_kernels": int(train.shape[2]),
              "mklearn": {}, "mklpy": {}}
    for name in peers:
        record["mklpy"][name] = in_child(fit_peer, (name, train, y, test, y_test, args.C,
                                                    args.threads), args.max_seconds)
    for name in methods:
        mine = in_child(fit_mklearn, (name, train, y, test, y_test, args.C, args.threads),
                        args.max_seconds)
        peer = record["mklpy"].get(PEER_OF.get(name))
        if peer is not None:
            mine["peer"] = PEER_OF[name]
            mine["max_weight_difference"] = _difference(mine, peer)
        record["mklearn"][name] = mine
        _print_row(label, record, name, mine, peer)
    for name in set(peers) - {PEER_OF.get(m) for m in methods}:
        _print_row(label, record, f"MKLpy {name}", None, record["mklpy"][name])
    return record


def _cell(result, key, fmt):
    if result is None:
        return "-"
    if "failed" in result:
        return result["failed"]
    value = result.get(key)
    return "-" if value is None else format(value, fmt)


def _print_row(label, record, name, mine, peer):
    print(f"{label:<16} {record['n']:>5} {record['n_kernels']:>5} {name:<18} "
          f"{_cell(mine, 'fit_seconds', '9.3f'):>9} {_cell(peer, 'fit_seconds', '9.3f'):>9} "
          f"{_cell(mine, 'accuracy', '.3f'):>6} {_cell(peer, 'accuracy', '.3f'):>6} "
          f"{_cell(mine, 'max_weight_difference', '.1e'):>9}", flush=True)


def small_set(key, seed):
    """(train, y, test, y_test): the SimpleMKL family, mean diagonal 1 (so that C means what
    it means in an SVC), one stratified 80/20 split."""
    from sklearn.model_selection import StratifiedShuffleSplit

    from mklearn import datasets
    from mklearn.kernels import KernelBank, resolve_kernels

    X, y = getattr(datasets, SETS[key][0])()
    train, test = next(StratifiedShuffleSplit(1, test_size=0.2, random_state=seed).split(X, y))
    specs, standardize = resolve_kernels("simple_mkl", X[train])
    bank = KernelBank(specs, standardize=standardize, normalize="diagonal")
    return bank.fit_transform(X[train]), y[train], bank.transform(X[test]), y[test]


def table(args):
    methods = registered(args.solvers)
    peers = list(PEERS) if mklpy_available() and not args.no_mklpy else []
    print(f"mklearn: {', '.join(methods)}; MKLpy: {', '.join(peers) or 'not importable'}")
    print(f"{'problem':<16} {'n':>5} {'m':>5} {'method':<18} {'fit s':>9} {'peer s':>9} "
          f"{'acc':>6} {'peer':>6} {'max|dd|':>9}")
    rows = []
    for key in args.sets:
        train, y, test, y_test = small_set(key, args.seed)
        rows.append(run_problem(key, train, y, test, y_test, args, methods, peers))
    for problem in (p for p in PROBLEMS if p.name in args.problems):
        X, y, X_test, y_test = load(problem, args.seed)
        kernels = compute_kernels(X, X_test, kernel_family(problem, X, args.seed))
        rows.append(run_problem(problem.name, kernels.train, y, kernels.test, y_test, args,
                                methods, peers))
        del kernels
    return {"mklearn_methods": methods, "mklpy_methods": peers, "rows": rows}


def _timing_stack(n, n_kernels, seed):
    from mklearn.kernels import RBF

    X, y, _, _ = load(Problem(f"a9a-{n}", "a9a", n, "blocks-rbf", n_kernels), seed)
    widths = np.sqrt(X.shape[1]) * np.geomspace(0.25, 4.0, n_kernels)
    return compute_kernels(X, X[:2], [RBF(sigma=float(s)) for s in widths]).train, y


def timing(args):
    """EasyMKL alone against MKLpy's, alternating, on the same stack per n."""
    rows = []
    for n in args.timing_n:
        train, y = _timing_stack(n, args.timing_kernels, args.seed)
        runs = {"mklearn-komd": [], "mklearn-svm": [], "mklearn-solver": [],
                "mklearn-checks": [], "MKLpy": []}
        for _ in range(args.repeats):
            for key, fn, name in (("mklearn-komd", fit_mklearn, "easymkl-komd"),
                                  ("mklearn-svm", fit_mklearn, "easymkl"),
                                  ("mklearn-solver", fit_solver, "easymkl"),
                                  ("mklearn-checks", fit_checks, "easymkl"),
                                  ("MKLpy", fit_peer, "EasyMKL")):
                if key == "MKLpy" and not mklpy_available():
                    continue
                r = in_child(fn, (name, train, y, train[:2], y[:2], args.C, args.threads),
                             args.max_seconds)
                runs[key].append(r.get("fit_seconds", np.nan))
        medians = {key: statistics.median(v) if v else None for key, v in runs.items()}
        ratio = (medians["MKLpy"] / medians["mklearn-komd"]
                 if medians["MKLpy"] and medians["mklearn-komd"] else None)
        print(f"n={n} m={args.timing_kernels}: mklearn (KOMD) {medians['mklearn-komd']:.3f} s, "
              f"mklearn (SVM) {medians['mklearn-svm']:.3f} s, solver alone (KOMD) "
              f"{medians['mklearn-solver']:.3f} s, input checks alone "
              f"{medians['mklearn-checks']:.3f} s, MKLpy "
              f"{medians['MKLpy'] if medians['MKLpy'] is None else round(medians['MKLpy'], 3)}"
              f" s; MKLpy / mklearn {ratio if ratio is None else round(ratio, 1)}", flush=True)
        rows.append({"n": n, "n_kernels": args.timing_kernels, "seconds": runs,
                     "median_seconds": medians, "mklpy_over_mklearn": ratio})
        del train
    return {"timing": rows}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", default=list(SETS), choices=list(SETS))
    parser.add_argument("--problems", nargs="*", default=[p.name for p in PROBLEMS],
                        choices=[p.name for p in PROBLEMS])
    parser.add_argument("--solvers", nargs="+", default=list(MKLEARN), choices=list(MKLEARN))
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-mklpy", action="store_true", help="skip MKLpy")
    parser.add_argument("--timing", action="store_true",
                        help="time EasyMKL alone against MKLpy's instead of the table")
    parser.add_argument("--timing-n", nargs="+", type=int, default=[1000, 3000])
    parser.add_argument("--timing-kernels", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data", type=Path, default=bench_unseen.DATA,
                        help="the directory of bench_unseen.py's data sets")
    parser.add_argument("--run", default="default", help="name of this run in the JSON file")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    bench_unseen.DATA = args.data
    document = {"machine": machine_info(),
                "settings": {k: (str(v) if isinstance(v, Path) else v)
                             for k, v in vars(args).items()}}
    document.update(timing(args) if args.timing else table(args))
    save_run(document, args.output, args.run)
    print(f"JSON: {args.output} (run {args.run!r})")


if __name__ == "__main__":
    main()
