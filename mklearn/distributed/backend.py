"""Whether a fit sends its per-kernel work to Dask: joblib's active backend, read through
joblib's public API (``joblib.parallel.get_active_backend``), and checks of the workers."""

from __future__ import annotations

import sys

from joblib.parallel import get_active_backend

from mklearn._version import __version__

__all__ = ["active_client", "check_workers", "in_dask_worker", "local_jobs"]

_START = ("start one before the fit, e.g. `from distributed import Client, LocalCluster; "
          "client = Client(LocalCluster())`, or `Client('scheduler-address:8786')` for a "
          "running cluster")


def in_dask_worker() -> bool:
    """True inside a task on a Dask worker (e.g. one fit of a grid search). A process that has
    not imported ``distributed`` runs no worker: the import (0.35 s) is not paid to learn so."""
    if "distributed" not in sys.modules:
        return False
    from distributed import get_worker

    try:
        get_worker()
    except ValueError:
        return False
    return True


def local_jobs(n_jobs):
    """``n_jobs`` for threads of this process: 1 inside a Dask worker, whose thread is the
    worker's slot (no oversubscription), else ``n_jobs``."""
    return 1 if in_dask_worker() else n_jobs


def active_client(n_jobs):
    """The ``distributed.Client`` to send per-kernel work to, or None.

    A client is returned when joblib's active backend has one (``parallel_config(
    backend="dask")``), the effective ``n_jobs`` (the estimator's, else the config's) is not
    1, and the caller is not itself a task on a Dask worker (its work then stays in its task).

    Raises
    ------
    RuntimeError
        If the Dask backend is active but its client is closed or its cluster has no workers
        (the message names what to start).
    """
    backend, config_jobs = get_active_backend()
    client = getattr(backend, "client", None)
    if client is None or not hasattr(client, "submit"):
        return None
    jobs = config_jobs if n_jobs is None else n_jobs
    if jobs == 1 or in_dask_worker():
        return None
    status = getattr(client, "status", "running")
    if status != "running":
        raise RuntimeError(
            f"joblib's Dask backend is active but its distributed.Client is {status}: "
            f"{_START}")
    if not client.nthreads():
        raise RuntimeError(
            "joblib's Dask backend is active but its cluster has no workers: start workers "
            "(e.g. `cluster.scale(2)`, or `dask worker scheduler-address:8786`)")
    return client


def check_workers(client, package: str = "mklearn", expected: str | None = None) -> dict:
    """The ``package`` version on every worker; RuntimeError unless all equal ``expected``
    (default: this process's ``mklearn.__version__``).

    Returns
    -------
    dict
        Worker address -> version.

    Raises
    ------
    RuntimeError
        If a worker lacks the package or has another version (the message names both sides).
    """
    expected = __version__ if expected is None else expected
    # a worker without mklearn cannot even unpickle the probe: its error counts as missing
    found = client.run(_worker_version, package, on_error="return")
    versions = {address: (None if isinstance(value, BaseException) else value)
                for address, value in found.items()}
    bad = {address: value for address, value in versions.items() if value != expected}
    if bad:
        sides = ", ".join(f"{address}: {'not installed' if v is None else v}"
                          for address, v in sorted(bad.items()))
        raise RuntimeError(
            f"Dask workers need {package} {expected} (the version of this process); found "
            f"{sides}: install {package}=={expected} on every worker (the same environment "
            "as the client)")
    return versions


def _worker_version(package):
    """``package.__version__`` where this runs (a worker), None if it cannot be imported."""
    from importlib import import_module

    try:
        return getattr(import_module(package), "__version__", None)
    except ImportError:
        return None
