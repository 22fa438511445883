"""Every solver at growing n on a9a (Adult-9) and w8a (Web-8) with 50 RBF kernels on the fly.

Also on dna (Statlog DNA: the two splice-junction classes against "neither", the
dna.scale.t test file) and abalone (at least 10 rings against fewer, a seeded 20% split).

Kernels: 10 RBF widths x 5 feature blocks (all features, and 4 random halves of them, seeded),
``sigma^2 / 2 = m_f * 2^j`` for ``j = -4..5`` with ``m_f`` the block's mean number of non-zero
features per row (squared distances of these binary rows are counts of differing features).
Rows are computed from X on demand (``kernel_storage="rows"``; the (n, n, 50) stack is never
formed) in an LRU cache of ``--cache-size`` MB. The estimators scale each kernel to mean
diagonal 1 (``kernel_normalization="diagonal"``, their default), which leaves an RBF kernel as
it is, so every MKL solver gets the same ``C`` as the anchor, scikit-learn's ``SVC`` with the
middle-width RBF kernel on all features, which runs in the same process.

Each run is one child process (fork), so its peak RSS (``ru_maxrss``) is its own; a fit of
the same solver on ``min(WARM_UP, n / 4)`` of the points first loads the compiled numba
loops, outside the timed fit (``warm_up_points`` in the JSON). Reported per row: fit time,
SVM solves, iterations, relative duality gap, peak RSS, test accuracy (a9a: the a9a.t test
file; w8a: a seeded 20% split); in the JSON also ``fit_peak_mb``, the peak above the RSS at
the fit's start (``VmHWM`` reset then; the data and the warm-up fit's loops are below it),
to compare with ``cache_size`` and the ``O(m n)`` state (``state_mb``: one float64 per
kernel and point), and ``planned_mb``, the memory the estimator planned for its row path
(:func:`mklearn.kernels.operator.row_path_bytes`: the cache, ``4 x 8 m n`` bytes and what
the provider keeps of X's feature blocks, ``feature_block_bytes``), printed as "fit MB" and
"plan MB", a fit above its plan flagged. Loops that the warm-up fit does not reach are
loaded during the timed one and count in its peak, hence a warm-up of the same solver on up
to 2,000 points. A fit still running after ``--max-seconds`` is stopped (its child killed;
reported "stopped", ``stopped_after_seconds`` in the JSON) and that solver is not run at
larger n (reported "skipped").

Paper figures (constants below, for comparison only; other machines and kernels):
- SMO-MKL (Vishwanathan et al., NIPS 2010, Table 3): Adult (32,561 points, 50 kernels)
  9,246 s at p = 1.33 and 8,511 s at p = 2; Web (49,749 points) 1,575 s and 2,023 s.
- SPG-GMKL (Jain, Vishwanathan and Varma, KDD 2012): Covertype 64 h against 44 h for one SVM
  on the uniform kernel (1.45x).

    python benchmarks/bench_large_scale.py --data a9a --sizes 1000 2000 5000
    python benchmarks/bench_large_scale.py --data w8a --sizes 1000 full --solvers spg-l1 smo-1.33
    python benchmarks/bench_large_scale.py --data w8a --sizes full --solvers spg-l1 --n-jobs 2
"""

from __future__ import annotations

import argparse
import datetime as _dt
import multiprocessing
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small_sets import machine_info, save_run  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
DEFAULT_OUTPUT = Path(__file__).resolve().parent / "results" / "large_scale.json"
PAPER_SECONDS = {
    ("a9a", "smo-1.33"): 9246.0,
    ("a9a", "smo-2"): 8511.0,
    ("w8a", "smo-1.33"): 1575.0,
    ("w8a", "smo-2"): 2023.0,
}
PAPER_SPG_OVER_SVM = 64.0 / 44.0  # Covertype, SPG-GMKL paper
SOLVERS = {
    "spg-l1": {"solver": "spg", "regularizer": "l1"},
    "spg-1.33": {"solver": "spg", "regularizer": "lp", "p": 1.33},
    "smo-1.33": {"solver": "smo", "regularizer": "lp", "p": 1.33},
    "smo-2": {"solver": "smo", "regularizer": "lp", "p": 2.0},
    "silp": {"solver": "silp", "regularizer": "l1"},
    "silp-interleaved": {"solver": "silp", "regularizer": "l1",
                         "solver_options": {"interleaved": True}},
    "mirror": {"solver": "mirror", "regularizer": "l1"},
    "pgd": {"solver": "pgd", "regularizer": "l1"},
}
ABALONE_RINGS = 10  # abalone: +1 for at least this many rings (as bench_unseen.py)
DATA_SETS = ("a9a", "w8a", "dna", "abalone")
WIDTH_STEPS = range(-4, 6)
N_BLOCKS = 5
WARM_UP = 2000  # most points of the fit that loads the compiled loops (a quarter of n below)


def load(name, seed):
    """(X_train, y_train, X_test, y_test) as dense float64 arrays."""
    from mklearn.datasets import load_svmlight

    if name == "a9a":
        X, y = load_svmlight(DATA / "a9a" / "a9a", n_features=123)
        X_test, y_test = load_svmlight(DATA / "a9a" / "a9a.t", n_features=123)
        return X, y, X_test, y_test
    if name == "dna":  # the splice-junction classes against "neither" (class 3)
        X, y = load_svmlight(DATA / "dna.scale" / "dna.scale", n_features=180)
        X_test, y_test = load_svmlight(DATA / "dna.scale" / "dna.scale.t", n_features=180)
        return X, np.where(y == 3, 1.0, -1.0), X_test, np.where(y_test == 3, 1.0, -1.0)
    if name == "abalone":  # at least ABALONE_RINGS rings against fewer
        X, rings = load_svmlight(DATA / "abalone_scale" / "abalone_scale", n_features=8)
        y = np.where(rings >= ABALONE_RINGS, 1.0, -1.0)
    else:
        X, y = load_svmlight(DATA / "w8a" / "w8a", n_features=300)
    order = np.random.default_rng(seed).permutation(len(y))
    cut = int(0.8 * len(y))
    return X[order[:cut]], y[order[:cut]], X[order[cut:]], y[order[cut:]]


def kernel_specs(X, seed):
    """The 50 RBF kernels (see the module docstring) and the anchor's middle width."""
    from mklearn.kernels import RBF

    rng = np.random.default_rng(seed)
    d = X.shape[1]
    blocks = [None] + [np.sort(rng.choice(d, size=d // 2, replace=False)).tolist()
                       for _ in range(N_BLOCKS - 1)]
    specs, middle = [], None
    for block in blocks:
        cols = X if block is None else X[:, block]
        mean_nnz = max(float(np.count_nonzero(cols, axis=1).mean()), 1.0)
        for j in WIDTH_STEPS:
            sigma = float(np.sqrt(2.0 * mean_nnz * 2.0**j))
            specs.append(RBF(sigma=sigma, features=block))
            if block is None and j == 0:
                middle = sigma
    return specs, middle


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _fit_start_mb():
    """The resident set now, after resetting the peak that :func:`_fit_peak_mb` reads
    (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")  # VmHWM := the current RSS
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize() / 2**20
    except OSError:
        return 0.0


def _fit_peak_mb():
    """The peak resident set since the last :func:`_fit_start_mb` (Linux; ``ru_maxrss`` else)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return _peak_mb()


def run_svc(X, y, X_test, y_test, sigma, C, cache_size):
    from sklearn.svm import SVC

    model = SVC(C=C, kernel="rbf", gamma=1.0 / (2.0 * sigma**2), cache_size=cache_size)
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "accuracy": float(model.score(X_test, y_test)),
            "n_sv": int(model.support_.size), "peak_mb": _peak_mb()}


def run_mkl(X, y, X_test, y_test, specs, C, key, args):
    from sklearn.base import clone

    from mklearn import MKLClassifier
    from mklearn.kernels.bank import feature_block_bytes
    from mklearn.kernels.operator import row_path_bytes

    params = dict(SOLVERS[key])
    model = MKLClassifier(kernels=specs, C=C, tol=args.tol, max_iter=args.max_iter,
                          kernel_storage="rows", cache_size=args.cache_size,
                          n_jobs=args.n_jobs, **params)
    warm_up = min(WARM_UP, max(len(y) // 4, 2))
    with warnings.catch_warnings():  # load the compiled loops outside the timed fit
        warnings.simplefilter("ignore")
        clone(model).fit(X[:warm_up], y[:warm_up])
    from joblib import effective_n_jobs
    from threadpoolctl import threadpool_limits

    start_mb = _fit_start_mb()
    start = time.perf_counter()
    # BLAS (the Newton system's LU, numpy products) on the fit's threads too, as the numba
    # loops: n_jobs=1 is one core, like the SVC anchor
    with warnings.catch_warnings(record=True) as caught, threadpool_limits(
            limits=effective_n_jobs(args.n_jobs), user_api="blas"):
        warnings.simplefilter("always")
        model.fit(X, y)
    seconds = time.perf_counter() - start
    fit_peak = _fit_peak_mb() - start_mb  # before predict's own memory
    gap = float(model.duality_gap_) / max(abs(float(model.objective_)), 1e-12)
    return {
        "seconds": seconds,
        "accuracy": float(model.score(X_test, y_test)),
        "n_svm_solves": int(model.n_svm_solves_),
        "n_iter": int(model.n_iter_),
        "n_smo_steps": int(model.n_smo_steps_),
        "relative_gap": gap,
        "converged": not any("stopped" in str(w.message) for w in caught),
        "kernel_storage": model.kernel_storage_,
        "active_kernels": int(np.count_nonzero(model.kernel_weights_)),
        "cache_size": float(model.cache_size_),
        "peak_mb": _peak_mb(),
        "fit_start_mb": start_mb,
        "fit_peak_mb": fit_peak,
        "state_mb": 8.0 * len(specs) * len(y) / 2**20,
        # what the estimator planned for its row path: the bound its peak should stay within
        "planned_mb": row_path_bytes(len(y), len(specs), float(model.cache_size_),
                                     feature_block_bytes(specs, X)) / 2**20,
        "warm_up_points": warm_up,
    }


def _in_child(fn, *a, timeout=None):
    """``fn(*a)`` in a forked child (its peak RSS its own); None when it runs past ``timeout``
    seconds (the child is then killed). An exception in the child is raised here."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)

    def child():
        try:
            sender.send(("ok", fn(*a)))
        except BaseException as exc:  # noqa: BLE001 - sent to the parent, raised there
            sender.send(("error", exc))

    process = context.Process(target=child)
    process.start()
    try:
        if not receiver.poll(timeout):
            return None
        status, value = receiver.recv()
    finally:
        if process.is_alive():
            process.kill()
        process.join()
    if status == "error":
        raise value
    return value


def _cache_size(text):
    return text if text == "auto" else float(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=DATA_SETS, default="a9a")
    parser.add_argument("--sizes", nargs="+", default=["1000", "2000", "5000"],
                        help="training sizes; 'full' for the whole training set")
    parser.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=list(SOLVERS))
    parser.add_argument("-C", type=float, default=1.0, help="C of the SVC anchor")
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--max-iter", type=int, default=500)
    parser.add_argument("--cache-size", type=_cache_size, default=1000.0,
                        help="MB of kernel rows, or 'auto' (the estimators' default: "
                             "mklearn.memory.auto_cache_size; the anchor gets the same MB)")
    parser.add_argument("--max-seconds", type=float, default=3600.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=None,
                        help="the MKL fits' n_jobs (kernel rows on numba threads); the SVC "
                             "anchor has one thread whatever this is")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--run", default=None,
                        help="the run's name in the result file (default: --data)")
    args = parser.parse_args(argv)

    X_all, y_all, X_test, y_test = load(args.data, args.seed)
    order = np.random.default_rng(args.seed).permutation(len(y_all))
    specs, middle = kernel_specs(X_all, args.seed)
    skipped, rows = set(), []
    print(f"{args.data}: {len(y_all)} training / {len(y_test)} test points, {len(specs)} RBF "
          f"kernels (10 widths x {N_BLOCKS} feature blocks), rows on demand, "
          f"cache {args.cache_size} MB, C = {args.C:g}, tol {args.tol:g}, "
          f"n_jobs {args.n_jobs} (SVC: 1)")
    header = (f"{'n':>6} {'method':<17} {'fit s':>9} {'x SVC':>6} {'solves':>7} {'iter':>6} "
              f"{'rel gap':>9} {'peak MB':>8} {'fit MB':>7} {'cache MB':>8} {'plan MB':>8} "
              f"{'test acc':>8}  paper")
    print(header)
    for size in args.sizes:
        n = len(y_all) if size == "full" else min(int(size), len(y_all))
        take = order[:n]
        X, y = X_all[take], y_all[take]
        svc_cache = args.cache_size
        if svc_cache == "auto":  # as the MKL fit will resolve it, from the memory free now
            from mklearn.memory import auto_cache_size

            svc_cache = auto_cache_size(n, len(specs), itemsize=8)
        anchor = _in_child(run_svc, X, y, X_test, y_test, middle, args.C, svc_cache)
        anchor["cache_size"] = svc_cache
        row = {"n": n, "svc": anchor, "mkl": {}}
        rows.append(row)  # saved after every fit: a long run keeps what finished
        print(f"{n:>6} {'SVC (anchor)':<17} {anchor['seconds']:>9.2f} {1.0:>6.2f} {1:>7} "
              f"{'':>6} {'':>9} {anchor['peak_mb']:>8.0f} {'':>7} {float(svc_cache):>8.0f} "
              f"{'':>8} {anchor['accuracy']:>8.4f}",
              flush=True)
        for key in args.solvers:
            if key in skipped:
                row["mkl"][key] = "skipped"
                print(f"{n:>6} {key:<17} skipped (stopped at a smaller n)")
                continue
            r = _in_child(run_mkl, X, y, X_test, y_test, specs, args.C, key, args,
                          timeout=args.max_seconds)
            if r is None:  # killed: not run at larger n either
                row["mkl"][key] = {"stopped_after_seconds": args.max_seconds}
                skipped.add(key)
                print(f"{n:>6} {key:<17} stopped after --max-seconds {args.max_seconds:g} s",
                      flush=True)
                _save(args, rows)
                continue
            r["over_svc"] = r["seconds"] / max(anchor["seconds"], 1e-9)
            paper = PAPER_SECONDS.get((args.data, key)) if n == len(y_all) else None
            r["paper_seconds"] = paper
            row["mkl"][key] = r
            print(f"{n:>6} {key:<17} {r['seconds']:>9.2f} {r['over_svc']:>6.2f} "
                  f"{r['n_svm_solves']:>7} {r['n_iter']:>6} {r['relative_gap']:>9.2e} "
                  f"{r['peak_mb']:>8.0f} {r['fit_peak_mb']:>7.0f} {r['cache_size']:>8.0f} "
                  f"{r['planned_mb']:>8.0f} {r['accuracy']:>8.4f}  "
                  f"{'' if paper is None else f'{paper:g} s'}"
                  f"{'' if r['converged'] else '  (not converged)'}"
                  f"{'' if r['fit_peak_mb'] <= r['planned_mb'] else '  (above its plan)'}",
                  flush=True)
            _save(args, rows)
        _save(args, rows)
    print(f"SPG-GMKL paper: {PAPER_SPG_OVER_SVM:.2f}x one SVM (Covertype). JSON: "
          f"{args.output} (run {args.run or args.data!r})")


def _save(args, rows):
    document = {
        "benchmark": "large_scale",
        "data": args.data,
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
        "machine": machine_info(),
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "paper_seconds": {f"{d}/{k}": v for (d, k), v in PAPER_SECONDS.items()},
        "rows": rows,
    }
    save_run(document, args.output, args.run or args.data)


if __name__ == "__main__":
    main()
