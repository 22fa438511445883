"""Per-kernel work on Dask: Sonar with many RBF kernels computed on the fly,
SPG-GMKL with the l1 simplex (relative duality gap 1e-3).

Kernels: the RBF part of the MWUMKL family of ``bench_mwu_scaling.py`` (Sonar's 208 points,
features scaled to [0, 1]; per feature, Gaussians ``exp(-||x_f - z_f||^2 / b)`` with
``m / 60`` bandwidths ``b`` log-spaced in ``2^-2 .. 2^6``), mean-diagonal normalisation,
``C = 1``, float32 kernel values (``kernel_dtype="float32"``: the vectorised exp). Rows are
computed on demand (``RowKernels``); nothing of size ``m n^2`` is ever formed.

Set-ups, on the same kernels and the same solver call (``spg_gmkl(operator, y, C, l1)``):

- ``n_jobs1``: one process, ``n_jobs=1`` (numba loops serial);
- ``n_jobs2``: one process, ``n_jobs=2`` (kernel rows on 2 numba threads);
- ``dask1`` / ``dask2``: ``DaskKernels`` on a ``LocalCluster`` of 1 / 2 worker processes
  with one thread each (the quadratic terms run on the workers in blocks of kernels; the
  inner SVM stays in the client).

Reported per run: total seconds of the solve, seconds per outer iteration, iterations, SVM
solves, relative gap, objective, and for Dask the array bytes sent and received per
iteration (task arguments and results; Dask's own messages are not counted) and the
seconds to scatter the kernel blocks. Parallel efficiency is ``t(1) / (2 t(2))`` for both
pairs. ``--small`` adds the overhead on a small problem: Sonar with the SimpleMKL family
(793 kernels) through ``MKLClassifier``, locally and under ``parallel_config(backend=
"dask")``. The machine has 2 cores shared with other jobs: the load average at the start of
each run is recorded. Each set-up runs in a fresh process (compile, kernel bank, cluster,
solve); ``--repeats N`` runs each N times in alternating order and keeps the median run,
with every run's seconds under ``repeat_seconds``. The LocalClusters run Dask's periodic
monitors less often (``QUIET_DASK``; ``--dask-defaults`` keeps Dask's own) and are warmed up
(every per-kernel pass once on every worker) before the clock, as the in-process set-ups
compile before theirs.

    python benchmarks/bench_distributed.py --kernels 10000 100000 [--small]
    python benchmarks/bench_distributed.py --kernels 1000000 --setups dask1 dask2 --repeats 3
    python benchmarks/bench_distributed.py --solver mwu --kernels 100000 --mwu-iterations 400

``--points 1000000 10000000`` adds the data-parallel section (``data_parallel.py``: fits on
partitioned synthetic data, 20 features and 50 kernels, in one process and on LocalClusters
of 1 and 2 workers; results under ``data_parallel``); ``--kernels`` with no value skips the
kernel-parallel runs:

    python benchmarks/bench_distributed.py --kernels --points 100000 1000000

``--solver mwu`` times MWUMKL instead (a fixed number of iterations, C = 1 unless given;
the client-side ``n_jobs1``/``n_jobs2`` against one Dask actor per worker, ``dask1``/``dask2``);
the results go under ``mwu_runs``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small_sets import _write_json, machine_info  # noqa: E402
from data_parallel import data_parallel, table  # noqa: E402

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "results" / "distributed.json"
SETUPS = ("n_jobs1", "n_jobs2", "dask1", "dask2")


def sonar():
    from mklearn.datasets import load_dataset

    X, y = load_dataset("sonar")
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    return X, np.where(y == np.unique(y)[1], 1.0, -1.0)


def rbf_specs(n_kernels, n_features):
    from mklearn.kernels import RBF

    per_feature = max(1, n_kernels // n_features)
    bandwidths = np.logspace(-2, 6, per_feature, base=2.0)
    return [RBF(sigma=float(np.sqrt(b / 2)), features=f)
            for f in range(n_features) for b in bandwidths]


def one_run(setup, provider, y, args):
    """Solve once on ``setup``; a dict of the measurements."""
    from mklearn.kernels.threads import numba_threads

    record = {"setup": setup, "load_average_at_start": list(os.getloadavg())}
    cluster = client = None
    try:
        if setup.startswith("dask"):
            cluster, client = _local_cluster(int(setup[4:]), args)
            record["dask_monitors"] = "Dask's defaults" if args.dask_defaults else "QUIET_DASK"
        jobs = 1 if client is not None else int(setup[-1])
        solve = _solve_mwu if args.solver == "mwu" else _solve_spg
        with numba_threads(jobs):
            solve(provider, y, client, args, record)
    finally:
        if client is not None:
            client.close()
            cluster.close()
    print(f"  {setup:8s} {record['seconds']:9.1f} s  {record['n_iter']:4d} it  "
          f"{record['seconds_per_iteration']:8.3f} s/it  gap "
          f"{record['relative_duality_gap']:.1e}  objective {record['objective']:.6g}  "
          f"load {record['load_average_at_start'][0]:.2f}", flush=True)
    return record


# Dask's periodic monitors, slowed down for the benchmark's clusters (``--dask-defaults``
# keeps Dask's own): the worker's profiler samples every 10 ms, each event loop ticks every
# 20 ms, the system and memory monitors run every 0.5 s and 0.1 s. With 2 workers on 2
# cores those wake-ups land on the cores that compute: one block's passes of 10^5 Sonar
# kernels took 0.17-0.18 s per pass on each of 2 workers against 0.15 s on 1 worker, and
# 0.15-0.16 s on 2 workers with these settings (three alternating runs of 4 rounds each)
QUIET_DASK = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
}


def _local_cluster(workers, args):
    """(LocalCluster, Client) of ``workers`` one-thread worker processes, with
    ``QUIET_DASK`` unless ``--dask-defaults``, warmed up (numba loops compiled or loaded
    from numba's cache on every worker) outside every timing, as :func:`_compile` does in
    process."""
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set({} if args.dask_defaults else QUIET_DASK):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    _warm_workers(client)
    return cluster, client


def _warm_workers(client):
    """Run every per-kernel pass once on every worker, on 60 Sonar kernels."""
    from mklearn.kernels import passes

    small = _provider(sonar()[0], 60)
    support = np.arange(0, small.n_samples, 2)
    v_s = np.linspace(-1.0, 1.0, support.size)
    weights = (None, np.full(small.n_kernels, 1.0 / small.n_kernels))
    client.run(passes.quadratic_terms, small, support, v_s)
    client.run(passes.products, small, support, v_s)
    client.run(passes.weighted_rows, small, support, weights)
    client.run(passes.weighted_rows, small, support, weights, True)
    client.run(passes.weighted_diagonal, small, weights)


def _solve_spg(provider, y, client, args, record):
    from mklearn.distributed import DaskKernels
    from mklearn.formulation.regularizers import make_regularizer
    from mklearn.kernels.operator import RowKernels
    from mklearn.solvers.spg import spg_gmkl

    n, m = provider.n_samples, provider.n_kernels
    cache = max(args.cache_size, 1.05 * 2 * 8 * (m + 1) * n / 2**20)  # two rows of every kernel
    operator = RowKernels(provider, cache)
    if client is not None:
        start = time.perf_counter()
        operator = DaskKernels(operator, client)
        record["scatter_seconds"] = time.perf_counter() - start
    regularizer = make_regularizer("l1", p=2.0, lam=1.0)
    start = time.perf_counter()
    result = spg_gmkl(operator, y, args.C, regularizer, tol=args.tol, max_time=args.max_time)
    _record_result(record, result, time.perf_counter() - start)
    if client is not None:
        record.update({
            "blocks": int(operator.n_blocks),
            "distributed_passes": int(operator.n_calls),
            "bytes_sent_per_iteration": operator.bytes_sent / max(result.n_iter, 1),
            "bytes_received_per_iteration": operator.bytes_received / max(result.n_iter, 1),
            "pass_seconds": {name: {"passes": calls, "seconds": secs}
                             for name, (calls, secs) in operator.seconds.items()},
        })


def _solve_mwu(provider, y, client, args, record):
    """MWUMKL for ``--mwu-iterations`` iterations (a fixed count: the time per iteration is
    the measure), with its state in one Dask actor per worker when there is a client. The
    actors are placed (the blocks' rows sent) before the clock starts."""
    from mklearn.distributed import DaskColumns
    from mklearn.solvers.mwu import mwu_mkl

    n, m = provider.n_samples, provider.n_kernels
    cache = max(args.cache_size, 1.05 * 8 * m * n / 2**20)  # a row of every kernel
    columns = provider if client is None else DaskColumns(provider, client)
    start = time.perf_counter()
    result = mwu_mkl(columns, y, args.C, iterations=args.mwu_iterations, cache_size=cache,
                     evaluate_objective=False)
    _record_result(record, result, time.perf_counter() - start)
    record["objective"] = float(result.history[-1]["upper"])  # the upper bound U


def _record_result(record, result, seconds):
    record.update({
        "seconds": seconds,
        "n_iter": int(result.n_iter),
        "seconds_per_iteration": seconds / max(result.n_iter, 1),
        "n_svm_solves": int(result.n_svm_solves),
        "relative_duality_gap": float(result.relative_duality_gap),
        "objective": float(result.objective),
        "converged": bool(result.converged),
        "stop_reason": result.stop_reason,
        "active_kernels": int(np.count_nonzero(result.kernel_weights > 1e-12)),
        "support_vectors": int(np.count_nonzero(result.alpha)),
    })


def one_pass(setup, provider, args):
    """Seconds of one full pass of the quadratic terms (support of ``--support`` points)
    and of ``--rows`` rows of ``K(d)`` at uniform d: the per-block costs."""
    from mklearn.distributed import DaskKernels
    from mklearn.kernels.operator import RowKernels
    from mklearn.kernels.row_sources import CombinedRows
    from mklearn.kernels.threads import numba_threads

    n, m = provider.n_samples, provider.n_kernels
    local = RowKernels(provider, max(args.cache_size, 1.05 * 2 * 8 * (m + 1) * n / 2**20))
    rng = np.random.default_rng(0)
    v = np.zeros(n)
    v[rng.choice(n, args.support, replace=False)] = rng.normal(size=args.support)
    record = {"setup": setup, "load_average_at_start": list(os.getloadavg()),
              "support": args.support, "rows": args.rows}
    cluster = client = None
    try:
        jobs = int(setup[-1])
        if setup.startswith("dask"):
            cluster, client = _local_cluster(jobs, args)
            operator, jobs = DaskKernels(local, client), 1
        else:
            operator = local
        with numba_threads(jobs):
            start = time.perf_counter()
            operator.kernel_gradient(None, v)
            record["quadratic_pass_seconds"] = time.perf_counter() - start
            source = CombinedRows(operator, np.full(m, 1.0 / m), 1.0).source
            start = time.perf_counter()
            for i in range(args.rows):
                source.rows(np.array([i]))
            record["combined_row_seconds"] = (time.perf_counter() - start) / args.rows
    finally:
        if client is not None:
            client.close()
            cluster.close()
    print(f"  {setup:8s} quadratic pass {record['quadratic_pass_seconds']:8.2f} s  K(d) row "
          f"{record['combined_row_seconds']:7.3f} s  load {record['load_average_at_start'][0]:.2f}",
          flush=True)
    return record


def many_kernels(n_kernels, args):
    """Every set-up of ``args.setups`` on ``n_kernels`` kernels, each in a fresh process."""
    order = [list(args.setups) if r % 2 == 0 else list(args.setups)[::-1]
             for r in range(args.repeats)]  # alternating, so no set-up always runs first
    repeats = {setup: [] for setup in args.setups}
    for setups in order:
        for setup in setups:
            repeats[setup].append(_isolated(_setup_in_child, setup, n_kernels, args))
    runs = {setup: _median_run(records) for setup, records in repeats.items()}
    first = next(iter(runs.values()))
    key = "passes" if args.passes else _runs_key(args)
    entry = {"kernels": first["kernels"], "points": first["points"], key: runs}
    if not args.passes:
        entry["kernel_setup_seconds"] = first["kernel_setup_seconds"]
    return entry


def _median_run(records):
    """The run of median seconds (the lower middle of an even count), with every run's
    seconds under ``repeat_seconds``."""
    key = "seconds" if "seconds" in records[0] else "quadratic_pass_seconds"
    ranked = sorted(records, key=lambda record: record[key])
    return {**ranked[(len(ranked) - 1) // 2],
            "repeat_seconds": [record[key] for record in records]}


def _isolated(function, *arguments):
    """``function(*arguments)`` in a fresh spawned process. Each set-up gets its own: in
    one process, a 2-worker cluster started after another set-up's run took 9-13 s at 10^5
    kernels where it takes 8 s alone (the client's state after a previous cluster), so the
    order of the set-ups decided the speed-up."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(function, *arguments).result()


def _setup_in_child(setup, n_kernels, args):
    """One set-up in this process: compile, compute the kernel bank, then run."""
    from mklearn.kernels import KernelBank
    from mklearn.kernels.columns import KernelColumns

    X, y = sonar()
    _compile(X, y, args)
    specs = rbf_specs(n_kernels, X.shape[1])
    start = time.perf_counter()
    provider = KernelColumns(KernelBank(specs, dtype=np.float32).fit(X))
    setup_seconds = time.perf_counter() - start
    print(f"m = {len(specs)} kernels: bank and provider in {setup_seconds:.1f} s", flush=True)
    run = one_pass(setup, provider, args) if args.passes else one_run(setup, provider, y, args)
    return {**run, "kernels": len(specs), "points": int(X.shape[0]),
            "kernel_setup_seconds": setup_seconds}


def _compile(X, y, args):
    """Compile the numba loops (or load them from numba's cache) outside every timing."""
    one_run("n_jobs1", _provider(X, 60), y, argparse.Namespace(
        **{**vars(args), "tol": 1e-2, "mwu_iterations": 20}))


def _runs_key(args):
    return "mwu_runs" if args.solver == "mwu" else "runs"


def add_speedups(entry, key="runs"):
    """Speed-up of 2 over 1 (seconds per iteration, and total) and parallel efficiency."""
    runs = entry.get(key, {})
    prefix = "" if key == "runs" else "mwu_"
    for one, two in (("n_jobs1", "n_jobs2"), ("dask1", "dask2")):
        if one in runs and two in runs:
            speedup = runs[one]["seconds_per_iteration"] / runs[two]["seconds_per_iteration"]
            entry[f"{prefix}speedup_{two}_over_{one}"] = speedup
            entry[f"{prefix}speedup_total_{two}_over_{one}"] = (runs[one]["seconds"]
                                                               / runs[two]["seconds"])
            entry[f"{prefix}parallel_efficiency_{two}"] = speedup / 2
    return entry


def small_overhead(args, X, y):
    """Sonar, SimpleMKL family (793 kernels), MKLClassifier fit locally and under Dask."""
    import joblib
    from distributed import Client, LocalCluster

    from mklearn import MKLClassifier

    params = dict(kernels="simple_mkl", solver="spg", regularizer="l1", tol=args.tol)
    MKLClassifier(max_iter=3, **params).fit(X[::5], y[::5])  # compile outside the timing
    out = {}
    for storage in ("auto", "rows"):
        start = time.perf_counter()
        model = MKLClassifier(kernel_storage=storage, **params).fit(X, y)
        out[f"local_{storage}_seconds"] = time.perf_counter() - start
        out[f"local_{storage}_storage"] = model.kernel_storage_
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        with joblib.parallel_config(backend="dask"):
            MKLClassifier(n_jobs=-1, max_iter=3, **params).fit(X[::5], y[::5])  # warm workers
            start = time.perf_counter()
            model = MKLClassifier(n_jobs=-1, **params).fit(X, y)
            out["dask2_seconds"] = time.perf_counter() - start
            out["dask2_storage"] = model.kernel_storage_
    out["kernels"] = len(model.kernel_names_)
    print(f"small (Sonar, {out['kernels']} kernels): " + ", ".join(
        f"{k} {v:.2f}" for k, v in out.items() if k.endswith("seconds")), flush=True)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--setups", nargs="+", default=list(SETUPS), choices=SETUPS)
    parser.add_argument("--solver", choices=("spg", "mwu"), default="spg",
                        help="SPG-GMKL l1 to a gap (default) or MWUMKL for a fixed count")
    parser.add_argument("--mwu-iterations", type=int, default=400)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--cache-size", type=float, default=200.0)
    parser.add_argument("--max-time", type=float, default=None,
                        help="stop a solve after this many seconds (recorded as not converged)")
    parser.add_argument("--small", action="store_true", help="measure the 793-kernel overhead")
    parser.add_argument("--passes", action="store_true",
                        help="time one quadratic pass and K(d) rows instead of whole fits")
    parser.add_argument("--support", type=int, default=190)
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of each set-up (alternating order); the median is kept")
    parser.add_argument("--dask-defaults", action="store_true",
                        help="run the LocalClusters with Dask's own monitor intervals "
                        "instead of QUIET_DASK")
    parser.add_argument("--points", type=int, nargs="*", default=[],
                        help="the data-parallel section (benchmarks/data_parallel.py) on "
                        "these numbers of synthetic points")
    parser.add_argument("--point-setups", nargs="+",
                        default=["process", "workers1", "workers2"])
    parser.add_argument("--n-components", type=int, default=24)
    parser.add_argument("--partition-rows", type=int, default=250_000)
    parser.add_argument("--memory-limit", default="5GB")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")

    data = json.loads(args.output.read_text()) if args.output.exists() else {}
    data.update({"benchmark": "distributed", "machine": machine_info(),
                 "args": {k: str(v) if isinstance(v, Path) else v
                          for k, v in vars(args).items()}})
    results = data.setdefault("many_kernels", {})
    for n_kernels in args.kernels:
        entry = many_kernels(n_kernels, args)
        old = results.get(str(entry["kernels"]), {})
        key = "passes" if args.passes else _runs_key(args)
        entry[key] = {**old.get(key, {}), **entry[key]}
        merged = {**old, **entry}
        results[str(entry["kernels"])] = merged if args.passes else add_speedups(merged, key)
        _write_json(data, args.output)
    if args.small:
        data["small_overhead"] = small_overhead(args, *sonar())
        _write_json(data, args.output)
    if args.points:
        settings = {"n_components": args.n_components, "partition_rows": args.partition_rows,
                    "memory_limit": args.memory_limit}
        section = data.setdefault("data_parallel", {"settings": settings, "runs": {}})
        for n in args.points:
            runs = section["runs"].setdefault(str(n), {})
            runs.update(data_parallel(n, args.point_setups, settings))
            _write_json(data, args.output)
        print(table(section["runs"]))
    return data


def _provider(X, n_kernels):
    from mklearn.kernels import KernelBank
    from mklearn.kernels.columns import KernelColumns

    return KernelColumns(KernelBank(rbf_specs(n_kernels, X.shape[1]), dtype=np.float32).fit(X))


if __name__ == "__main__":
    main()
