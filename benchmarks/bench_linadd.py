"""Linadd versus kernel rows: WD-kernel SVM training time on C. elegans acceptor sites of growing n.

Protocol (SILP-MKL paper, JMLR 2006, section 4.2 and Figure 4; ALGORITHMS.md section 5): random
subsets of n of the 100,000 bundled C. elegans acceptor candidates (82-nt window around the AG),
a weighted-degree kernel of order ``--order`` (20, as the paper; unnormalised), C = ``--C``,
KKT tolerance 1e-3. Three solvers of the same C-SVC dual:

- ``smo-precomputed``: build the n x n WD kernel (numba, one pass per pair) and run the WSS2-SMO
  core (``svc_dual``); only while the matrix fits ``--max-precomputed`` samples;
- ``chunking-rows``: decomposition with working sets of ``--working-set`` variables, gradients
  updated from the changed examples' kernel rows (SVMlight without linadd);
- ``chunking-linadd``: the same decomposition, gradients updated through the normal vector w in
  the explicit WD feature space (add the changed examples, look w up for everybody).

Times include building what the solver needs (the kernel matrix, or the linadd feature map).
Each run is a child process killed after ``--time-cap`` seconds; a method that exceeded the cap
is not run for larger n. The objectives of the methods at the same n are compared.
Timings are on a shared 2-core machine (inflated 2-3x by other processes).

    python benchmarks/bench_linadd.py [--sizes 1000 2000 5000] [--time-cap 300]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small_sets import machine_info  # noqa: E402

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "results" / "linadd.json"
SIZES = (1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000)
METHODS = ("smo-precomputed", "chunking-rows", "chunking-linadd")


def _run(method, seqs, y, order, C, working_set, queue):
    """Train one SVM; put (setup seconds, solve seconds, objective, iterations) on ``queue``."""
    from mklearn.kernels.string_bank import StringColumns, StringKernelBank
    from mklearn.kernels.strings import WeightedDegree
    from mklearn.svm.linadd import svc_chunking
    from mklearn.svm.smo import svc_dual

    start = time.perf_counter()
    bank = StringKernelBank([WeightedDegree(order)], normalize=None).fit(seqs)
    if method == "smo-precomputed":
        K = np.ascontiguousarray(bank.fit_transform(seqs)[:, :, 0])
        setup = time.perf_counter() - start
        result = svc_dual(K, y, C, tol=1e-3)
    else:
        provider = StringColumns(bank)
        update = method.split("-")[1]
        if update == "linadd":
            provider.linadd()
        setup = time.perf_counter() - start
        result = svc_chunking(provider, y, C, working_set=working_set, update=update, tol=1e-3)
    total = time.perf_counter() - start
    queue.put({"setup_seconds": setup, "solve_seconds": total - setup, "seconds": total,
               "objective": result.objective, "n_iter": result.n_iter,
               "n_sv": int(np.count_nonzero(result.alpha)), "converged": bool(result.converged)})


def in_child(target, target_args, time_cap):
    """``target(*target_args, queue)`` in a forked child killed after ``time_cap`` seconds: the
    dict it put on the queue with ``status`` "ok", or only a status saying what went wrong."""
    context = mp.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=target, args=(*target_args, queue))
    child.start()
    child.join(time_cap)
    if child.is_alive():
        child.terminate()
        child.join()
        return {"status": f"exceeded {time_cap:g} s"}
    if child.exitcode != 0:
        return {"status": f"failed (exit code {child.exitcode})"}
    return {"status": "ok", **queue.get()}


def _timed(method, seqs, y, args):
    return in_child(_run, (method, seqs, y, args.order, args.C, args.working_set),
                    args.time_cap)


def _warm_up(args):
    """Compile the numba loops once (cache=True), outside the timings."""
    from mklearn.datasets import load_c_elegans_acceptor

    seqs, y = load_c_elegans_acceptor()
    queue = mp.get_context("fork").Queue()
    for method in METHODS:
        _run(method, seqs[:300], y[:300].astype(float), args.order, args.C, args.working_set,
             queue)
        queue.get()


def c_elegans_parser(description, *, time_cap, output):
    """The arguments the C. elegans benchmarks share: sizes, WD order, C, working set, time
    cap per run, seed and output."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--order", type=int, default=20)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--working-set", type=int, default=200)
    parser.add_argument("--time-cap", type=float, default=time_cap)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=output)
    return parser


def shuffled_c_elegans(seed):
    """The 100,000 C. elegans sequences, their labels and a seeded order of them."""
    from mklearn.datasets import load_c_elegans_acceptor_large

    seqs, y = load_c_elegans_acceptor_large()
    return seqs, y, np.random.default_rng(seed).permutation(seqs.size)


def main(argv=None):
    parser = c_elegans_parser(__doc__.splitlines()[0], time_cap=400.0, output=DEFAULT_OUTPUT)
    parser.add_argument("--max-precomputed", type=int, default=10_000)
    args = parser.parse_args(argv)

    all_seqs, all_y, order = shuffled_c_elegans(args.seed)
    _warm_up(args)
    records, exceeded = [], set()
    print(f"WD order {args.order}, C = {args.C:g}, working set {args.working_set}, "
          f"cap {args.time_cap:g} s per run")
    print(f"{'n':>7s} " + " ".join(f"{m:>22s}" for m in METHODS) + "   max rel. objective diff")
    for n in args.sizes:
        seqs, y = all_seqs[order[:n]], all_y[order[:n]].astype(np.float64)
        row = {}
        for method in METHODS:
            if method in exceeded:
                row[method] = {"status": "skipped (exceeded the cap at a smaller n)"}
            elif method == "smo-precomputed" and n > args.max_precomputed:
                row[method] = {"status": f"skipped (n x n kernel above {args.max_precomputed})"}
            else:
                row[method] = _timed(method, seqs, y, args)
                if row[method]["status"].startswith("exceeded"):
                    exceeded.add(method)
            records.append({"n": n, "method": method, **row[method]})
        objectives = [r["objective"] for r in row.values() if r["status"] == "ok"]
        spread = (max(objectives) - min(objectives)) / abs(min(objectives)) if objectives else 0
        cells = [f"{r['seconds']:9.1f} s ({r['n_iter']:>5d} it)" if r["status"] == "ok"
                 else r["status"][:22] for r in row.values()]
        print(f"{n:7d} " + " ".join(f"{c:>22s}" for c in cells) + f"   {spread:.1e}")

    args.output.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "benchmark": "bench_linadd",
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
        "machine": machine_info(),
        "protocol": {"data": "C. elegans acceptor, 82-nt window, random subsets",
                     "kernel": f"WeightedDegree({args.order}), unnormalised", "C": args.C,
                     "tol": 1e-3, "working_set": args.working_set, "time_cap": args.time_cap,
                     "seed": args.seed},
        "results": records,
    }
    args.output.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"saved {args.output}")


if __name__ == "__main__":
    main()
