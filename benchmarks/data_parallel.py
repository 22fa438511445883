"""The data-parallel section of ``bench_distributed.py``: fits on partitioned data.

A synthetic set of n points with 20 features (``synthetic``: standard normal features, the
label the sign of a sum of smooth one-feature terms and noise, 10% label noise), 50 RBF
kernels: on each feature with widths 0.5 and 2 (40 one-feature kernels) and on all features
with 10 widths log-spaced in 1 .. 30, Nystrom with ``n_components`` landmarks, float32
features, SPG-GMKL l1 to a relative duality gap of 1e-3, C = 1. Held-out accuracy on 20,000
points of the same law.

Set-ups, each in a fresh process: ``process`` (the one-machine low-rank fit on a NumPy
array), ``workersN`` (a ``LocalCluster`` of N one-thread worker processes, X a Dask array
of ``--partition-rows`` rows per chunk, generated on the workers). Reported: seconds of the
fit, the objective, accuracy, the peak resident memory of each worker (sampled every
0.5 s) and of the client, the plan the fit said.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

N_FEATURES = 20
TEST_POINTS = 20_000


def kernels():
    from mklearn.kernels import RBF

    one = [RBF(sigma=s, features=(f,)) for f in range(N_FEATURES) for s in (0.5, 2.0)]
    return one + [RBF(sigma=float(s)) for s in np.geomspace(1.0, 30.0, 10)]


def synthetic(n, seed):
    """``(X, y)`` of the set's law: float64 features, labels in {-1, 1}."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, N_FEATURES))
    score = (np.sin(2 * X[:, 0]) + X[:, 1] ** 2 - 1 + np.abs(X[:, 2]) - 0.8
             + 0.5 * X[:, 3] * X[:, 4] + 0.3 * rng.standard_normal(n))
    y = np.where(score > 0, 1, -1)
    flip = rng.random(n) < 0.1
    return X, np.where(flip, -y, y)


def _dask_synthetic(n, rows):
    """The set as Dask arrays, each chunk generated where it is computed."""
    import dask
    import dask.array as da

    chunks = [min(rows, n - start) for start in range(0, n, rows)]
    parts = [dask.delayed(synthetic, nout=2)(size, 1000 + i) for i, size in enumerate(chunks)]
    X = da.concatenate([da.from_delayed(p[0], (size, N_FEATURES), np.float64)
                        for p, size in zip(parts, chunks, strict=True)])
    y = da.concatenate([da.from_delayed(p[1], (size,), np.int64)
                        for p, size in zip(parts, chunks, strict=True)])
    return X, y


def _estimator(args):
    from mklearn import MKLClassifier

    return MKLClassifier(kernels=kernels(), kernel_approximation="nystroem",
                         n_components=args["n_components"], kernel_dtype="float32",
                         solver="spg", regularizer="l1", tol=1e-3, C=1.0, random_state=0,
                         verbose=1)


class _PeakMemory:
    """The peak resident memory of some processes, sampled every 0.5 s."""

    def __init__(self, pids):
        self.pids, self.peaks, self.stop = list(pids), {}, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.wait(0.5):
            for pid in self.pids:
                try:
                    with open(f"/proc/{pid}/status") as status:
                        for line in status:
                            if line.startswith("VmRSS:"):
                                rss = int(line.split()[1]) * 1024
                                self.peaks[pid] = max(self.peaks.get(pid, 0), rss)
                except OSError:
                    pass

    def done(self):
        self.stop.set()
        self.thread.join()
        return self.peaks


def _run(setup, n, args):
    import contextlib
    import io

    X_test, y_test = synthetic(TEST_POINTS, 7)
    record = {"setup": setup, "points": n}
    said = io.StringIO()
    if setup == "process":
        X, y = _dask_synthetic(n, args["partition_rows"])
        X, y = X.compute(), y.compute()
        _estimator(args).fit(X[:2000], y[:2000])  # compile
        peaks = _PeakMemory([os.getpid()])
        start = time.perf_counter()
        with contextlib.redirect_stderr(said):
            model = _estimator(args).fit(X, y)
        record["seconds"] = time.perf_counter() - start
        record["peak_client_gb"] = peaks.done().get(os.getpid(), 0) / 2 ** 30
    else:
        import dask
        from distributed import Client, LocalCluster

        workers = int(setup.removeprefix("workers"))
        with dask.config.set({"distributed.admin.tick.interval": "500ms"}):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, memory_limit=args["memory_limit"])
        client = Client(cluster)
        X, y = _dask_synthetic(n, args["partition_rows"])
        small_X, small_y = _dask_synthetic(4000, 2000)
        _estimator(args).fit(small_X, small_y)  # compile on every worker
        pids = list(client.run(os.getpid).values())
        peaks = _PeakMemory(pids + [os.getpid()])
        start = time.perf_counter()
        with contextlib.redirect_stderr(said):
            model = _estimator(args).fit(X, y)
        record["seconds"] = time.perf_counter() - start
        found = peaks.done()
        record["peak_worker_gb"] = [found.get(pid, 0) / 2 ** 30 for pid in pids]
        record["peak_client_gb"] = found.get(os.getpid(), 0) / 2 ** 30
        client.close()
        cluster.close()
    record.update(objective=float(model.objective_),
                  relative_duality_gap=float(model.relative_duality_gap_),
                  accuracy=float(np.mean(model.predict(X_test) == y_test)),
                  rank=int(model.low_rank_.rank),
                  approximation_error=float(model.approximation_error_),
                  plan=[line for line in said.getvalue().splitlines() if "low-rank" in line])
    return record


def data_parallel(n, setups, args):
    """Each set-up on n points in a fresh process; the records by set-up."""
    out = {}
    for setup in setups:
        with ProcessPoolExecutor(1) as pool:
            record = pool.submit(_run, setup, n, args).result()
        out[setup] = record
        print(json.dumps(record), file=sys.stderr, flush=True)
    return out


def table(results):
    """The side-by-side table of the section's records."""
    lines = [f"{'points':>10} {'setup':>9} {'seconds':>9} {'objective':>14} {'accuracy':>8} "
             f"{'peak worker GB':>16}"]
    for n, entry in sorted(results.items(), key=lambda item: int(item[0])):
        for setup, r in entry.items():
            peaks = ", ".join(f"{p:.2f}" for p in r.get("peak_worker_gb", [])) or "-"
            lines.append(f"{int(n):>10} {setup:>9} {r['seconds']:>9.1f} {r['objective']:>14.6f} "
                         f"{r['accuracy']:>8.4f} {peaks:>16}")
    return "\n".join(lines)

