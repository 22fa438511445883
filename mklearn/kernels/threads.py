"""How many threads the numba loops use: ``n_jobs`` as in scikit-learn, per fit.

:func:`numba_threads` sets numba's thread count for the calling thread (numba keeps it per
thread) from ``n_jobs`` (None: 1, unless inside ``joblib.parallel_config``; -1: every core);
outside it the loops run serially. :func:`use_threads` tells a loop whether threads are on and
its work is large enough to pay for them. :func:`fit_threads` puts numba's loops and BLAS on the
fit's threads; :func:`one_blas_thread` keeps BLAS on one thread around the per-kernel passes.
"""

from __future__ import annotations

import functools
import threading
from contextlib import contextmanager

import numba
from joblib import effective_n_jobs

__all__ = ["blas_threads", "fit_threads", "granted", "numba_threads", "one_blas_thread",
           "use_threads", "PARALLEL_MIN_VALUES", "PARALLEL_MIN_POINTS"]

# Kernel values below which a threaded row loop is slower than the serial one (measured on
# 2 cores, a9a rows of 50 RBF kernels: see docs/large_scale.md)
PARALLEL_MIN_VALUES = 200_000
# Points below which the threaded scatter pass (inner products and distances of query rows
# with a block of sparse points, rows split over threads) is slower than the serial one
PARALLEL_MIN_POINTS = 2_000

_granted = threading.local()  # threads granted to the calling thread by numba_threads
_blas = None  # threadpoolctl's controller, made once (12 us a limit, against 240 us anew)


@contextmanager
def numba_threads(n_jobs):
    """Run the block with ``effective_n_jobs(n_jobs)`` numba threads (at most numba's pool)."""
    wanted = max(1, min(effective_n_jobs(n_jobs), numba.config.NUMBA_NUM_THREADS))
    before, granted = numba.get_num_threads(), getattr(_granted, "n", 1)
    numba.set_num_threads(wanted)
    _granted.n = wanted
    try:
        yield wanted
    finally:
        numba.set_num_threads(before)
        _granted.n = granted


def granted() -> int:
    """Threads granted to the calling thread by :func:`numba_threads` (1 outside it); read
    per row where ``numba.get_num_threads`` cost about 10 us a call."""
    return getattr(_granted, "n", 1)


def use_threads(n_values: int, minimum: int | None = None) -> bool:
    """Whether a loop producing ``n_values`` values should run on numba's threads (from
    ``minimum`` values on; default ``PARALLEL_MIN_VALUES``)."""
    minimum = PARALLEL_MIN_VALUES if minimum is None else minimum
    return granted() > 1 and n_values >= minimum


@contextmanager
def blas_threads(n: int):
    """Run the block with BLAS on at most ``n`` threads. The limit holds for the whole
    process and each block restores what it found: threads that run side by side enter it
    only inside a block that set the same limit (the classes of a fit, on one thread)."""
    global _blas
    if _blas is None:
        from threadpoolctl import ThreadpoolController

        _blas = ThreadpoolController()
    with _blas.limit(limits=n, user_api="blas"):
        yield


@contextmanager
def fit_threads(n_jobs):
    """Run a solve on ``effective_n_jobs(n_jobs)`` threads: numba's loops
    (:func:`numba_threads`) and BLAS. A solve's BLAS products are a few rows against the
    points: BLAS's threads do not pay on them, and when another process holds a core each
    hand-off waits for a time slice (w8a, 4,000 dense points, ``MKLClassifier(C=1)``: 8.8 s
    on one BLAS thread or two alone; with another process busy, 8.5-9.4 s on one and
    20.2 s on two)."""
    with numba_threads(n_jobs) as wanted, blas_threads(wanted):
        yield wanted


def one_blas_thread(function):
    """Run ``function`` with BLAS on one thread (a decorator).

    The per-kernel passes multiply chunks of a few MB (:mod:`mklearn.kernels.passes`): too
    small for BLAS's threads to pay, and when another process holds the other core each
    hand-off waits for a time slice (figures in ``docs/large_scale.md``, "Threads"). Dask's
    workers already run BLAS on one thread (their nanny sets ``OPENBLAS_NUM_THREADS=1``).
    """

    @functools.wraps(function)
    def with_one_thread(*args, **kwargs):
        with blas_threads(1):
            return function(*args, **kwargs)

    return with_one_thread
