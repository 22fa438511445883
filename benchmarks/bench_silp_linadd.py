"""SILP MKL with linadd on C. elegans acceptor sites: time against n, up to all 100,000.

Protocol (SILP-MKL paper, JMLR 2006, section 5.3: "we were able to solve the classification
MKL SILP for N = 1,000,000 examples and K = 20 kernels ... using the linadd optimizations
with the weighted degree kernel"; it gives no time): random subsets of n of the 100,000
bundled C. elegans acceptor candidates (82-nt window), the WD kernel of order ``--order``
(20) split into its ``--order`` k-mer sub-kernels (``wd_sub_kernels(20, by="kmer")``, the WD
weights kept, unnormalised), C = ``--C``, ``eps_MKL`` = ``--tol``, and
:func:`mklearn.solvers.silp_linadd`: the interleaved algorithm with the decomposition SVM
whose outputs all come from one normal vector in the explicit feature space (no kernel row,
no n x n matrix, no stack).

For context the same run prints one WD SVM by linadd on the same subset (the order-20 WD
kernel, the same C; what ``bench_linadd.py`` times), so that MKL's cost is read as a
multiple of one SVM. Each run is a forked child killed after ``--time-cap`` seconds; peak RSS
is the child's. Results go to ``benchmarks/results/silp_linadd.json``.

    python benchmarks/bench_silp_linadd.py [--sizes 1000 10000 100000] [--time-cap 900]
"""

from __future__ import annotations

import datetime as _dt
import json
import multiprocessing as mp
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_linadd import c_elegans_parser, in_child, shuffled_c_elegans  # noqa: E402
from bench_small_sets import machine_info  # noqa: E402

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "results" / "silp_linadd.json"


def _run(method, seqs, y, args, queue):
    from mklearn.kernels.string_bank import StringColumns, StringKernelBank
    from mklearn.kernels.strings import WeightedDegree, wd_sub_kernels
    from mklearn.solvers import silp_linadd
    from mklearn.svm.linadd import svc_chunking

    start = time.perf_counter()
    if method == "silp-linadd":
        specs = wd_sub_kernels(args.order, by="kmer").expand(seqs)
        provider = StringColumns(StringKernelBank(specs, normalize=None).fit(seqs))
        provider.linadd()
        setup = time.perf_counter() - start
        result = silp_linadd(provider, y, args.C, tol=args.tol, working_set=args.working_set,
                             chunk_iterations=args.chunk_iterations, max_iter=args.max_iter)
        extra = {"n_lp": result.n_iter, "n_subproblems": result.n_svm_solves,
                 "eps_mkl": result.history[-1]["eps_mkl"],
                 "relative_duality_gap": result.relative_duality_gap,
                 "converged": bool(result.converged),
                 "kernel_weights": [round(float(w), 4) for w in result.kernel_weights]}
    else:
        provider = StringColumns(StringKernelBank([WeightedDegree(args.order)],
                                                  normalize=None).fit(seqs))
        provider.linadd()
        setup = time.perf_counter() - start
        result = svc_chunking(provider, y, args.C, working_set=args.working_set, tol=1e-3)
        extra = {"n_subproblems": result.n_iter, "converged": bool(result.converged)}
    seconds = time.perf_counter() - start
    queue.put({"setup_seconds": setup, "seconds": seconds,
               "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               **extra})


def _timed(method, seqs, y, args):
    return in_child(_run, (method, seqs, y, args), args.time_cap)


def main(argv=None):
    parser = c_elegans_parser(__doc__.splitlines()[0], time_cap=900.0, output=DEFAULT_OUTPUT)
    parser.add_argument("--tol", type=float, default=1e-3, help="eps_MKL")
    parser.add_argument("--chunk-iterations", type=int, default=10)
    parser.add_argument("--max-iter", type=int, default=1000)
    args = parser.parse_args(argv)

    all_seqs, all_y, order = shuffled_c_elegans(args.seed)
    queue = mp.get_context("fork").Queue()
    for method in ("silp-linadd", "svm-linadd"):  # compile the numba loops outside the timings
        _run(method, all_seqs[order[:300]], all_y[order[:300]].astype(float), args, queue)
        queue.get()
    print(f"SILP MKL over the {args.order} k-mer sub-kernels of WD({args.order}) with linadd; "
          f"C = {args.C:g}, eps_MKL = {args.tol:g}, working set {args.working_set}, "
          f"{args.chunk_iterations} subproblems per LP")
    print(f"{'n':>7s} {'MKL s':>8s} {'LPs':>5s} {'subpr.':>7s} {'eps_MKL':>8s} {'rel gap':>8s} "
          f"{'peak MB':>8s} {'1 SVM s':>8s} {'MKL/SVM':>8s}")
    records = []
    for n in args.sizes:
        seqs, y = all_seqs[order[:n]], all_y[order[:n]].astype(np.float64)
        mkl = _timed("silp-linadd", seqs, y, args)
        svm = _timed("svm-linadd", seqs, y, args)
        records.append({"n": n, "mkl": mkl, "svm": svm})
        if mkl["status"] != "ok":
            print(f"{n:7d} {mkl['status']}")
            break
        ratio = mkl["seconds"] / svm["seconds"] if svm["status"] == "ok" else float("nan")
        print(f"{n:7d} {mkl['seconds']:8.1f} {mkl['n_lp']:5d} {mkl['n_subproblems']:7d} "
              f"{mkl['eps_mkl']:8.1e} {mkl['relative_duality_gap']:8.1e} "
              f"{mkl['peak_rss_mb']:8.0f} "
              + (f"{svm['seconds']:8.1f} {ratio:8.1f}" if svm["status"] == "ok"
                 else svm["status"]), flush=True)
    top = records[-1]["mkl"].get("kernel_weights")
    if top:
        print("kernel weights at the largest n (k = 1..order):", top)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "benchmark": "bench_silp_linadd",
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
        "machine": machine_info(),
        "protocol": {"data": "C. elegans acceptor, 82-nt window, random subsets",
                     "kernels": f"wd_sub_kernels({args.order}, by='kmer'), unnormalised",
                     "C": args.C, "eps_mkl": args.tol, "working_set": args.working_set,
                     "chunk_iterations": args.chunk_iterations, "time_cap": args.time_cap,
                     "seed": args.seed},
        "results": records,
    }
    args.output.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"saved {args.output}")


if __name__ == "__main__":
    main()
