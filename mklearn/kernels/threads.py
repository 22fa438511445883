"""How many threads the numba loops use: ``n_jobs`` as in scikit-learn, per fit.

:func:`numba_threads` sets numba's thread count for the calling thread (numba keeps it per
thread) from ``n_jobs`` (None: 1, unless inside ``joblib.parallel_config``; -1: every core);
:func:`use_threads` tells a loop whether its work is large enough to pay for threads.
"""

from __future__ import annotations

from contextlib import contextmanager

import numba
from joblib import effective_n_jobs

__all__ = ["numba_threads", "use_threads", "PARALLEL_MIN_VALUES"]

# Kernel values below which a threaded row loop is slower than the serial one (measured on
# 2 cores, a9a rows of 50 RBF kernels: see benchmarks/bench_threads.py)
PARALLEL_MIN_VALUES = 200_000


@contextmanager
def numba_threads(n_jobs):
    """Run the block with ``effective_n_jobs(n_jobs)`` numba threads (at most numba's pool)."""
    wanted = max(1, min(effective_n_jobs(n_jobs), numba.config.NUMBA_NUM_THREADS))
    before = numba.get_num_threads()
    numba.set_num_threads(wanted)
    try:
        yield wanted
    finally:
        numba.set_num_threads(before)


def use_threads(n_values: int) -> bool:
    """Whether a loop producing ``n_values`` values should run on numba's threads."""
    return numba.get_num_threads() > 1 and n_values >= PARALLEL_MIN_VALUES
