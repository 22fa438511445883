"""Compile mklearn's numba code once, at set-up, so that no user's first fit pays for it.

numba compiles a jitted function for each new argument signature at its first call and keeps
the machine code in its on-disk cache (``cache=True``). :func:`warm_up` fits every solver on
every input kind (dense and sparse X, a precomputed stack, float32 kernels), the regressor,
one-class and the product of kernels, with ``n_jobs`` 1 and 2, on 120 Sonar points, and with
every size threshold that picks a path at its least, so that the threaded variants and the
in-place PSD test that large problems take are compiled too. ``python -m mklearn.cli.warm_up``
runs it (the Makefile's set-up does); ``benchmarks/bench_compile.py`` measures what a first
fit still compiles.
"""

from __future__ import annotations

import contextlib
import sys
import time
import warnings

import numpy as np
import scipy.sparse

INPUTS = ("dense", "sparse", "precomputed", "float32")
N_POINTS = 120  # Sonar points each warm-up fit reads
FEW_KERNELS = ("align", "alignf", "fheuristic", "pwmk")  # fitted on FEW kernels
FEW = 12


@contextlib.contextmanager
def _paths_at_any_size():
    """Every size threshold that picks a compiled path at its least (restored after): those
    below which a pass stays on one thread, and the size from which the PSD test factorises
    (in place, then mirrored by numba) instead of computing eigenvalues."""
    from mklearn.kernels import base_store, rbf_tables, stack_checks, stack_ops, threads
    from mklearn.linear import blocks

    places = [(threads, "PARALLEL_MIN_VALUES", 0), (threads, "PARALLEL_MIN_POINTS", 0),
              (base_store, "MIN_BLOCK", 16), (rbf_tables, "SPAN_MIN_POINTS", 16),
              (rbf_tables, "SUM_MIN_LOADS", 0), (stack_ops, "PARALLEL_COMBINE_MIN_SAMPLES", 1),
              (stack_checks, "_EXACT_EIGEN_N", 0), (blocks, "PARALLEL_WORK", 0)]
    saved = [getattr(module, name) for module, name, _ in places]
    try:
        for module, name, least in places:
            setattr(module, name, least)
        yield
    finally:
        for (module, name, _), value in zip(places, saved, strict=True):
            setattr(module, name, value)


def _inputs(X):
    """Each input kind: (X as given to fit, the parameters it comes with)."""
    from mklearn.kernels import KernelBank, resolve_kernels, simple_mkl_kernels

    stack = KernelBank(resolve_kernels(simple_mkl_kernels(), X)[0][:60]).fit_transform(X)
    counts = scipy.sparse.csr_matrix(np.rint(np.abs(X) * 4))  # integers: RBF by table
    return {"dense": (X, {}), "sparse": (counts, {}),
            "precomputed": (stack, {"kernels": "precomputed"}),
            "float32": (X, {"kernel_dtype": "float32"})}


def _few_kernels(data, params, X):
    """``(data, params)`` with the first ``FEW`` kernels only: the same compiled code, for
    the solvers whose work grows fastest with the kernels (PWMK: one SVM per kernel and
    fold, 54 s of warm-up with all of them)."""
    from mklearn.kernels import resolve_kernels, simple_mkl_kernels

    if params.get("kernels") == "precomputed":
        return np.ascontiguousarray(data[:, :, :FEW]), params
    return data, {**params, "kernels": resolve_kernels(simple_mkl_kernels(), X)[0][:FEW]}


def _fits(X, y):
    """(estimator, parameters, X) of every warm-up fit."""
    from mklearn import MKLClassifier, MKLRegressor, OneClassMKL
    from mklearn.solvers import SOLVERS

    fits = []
    for data, params in _inputs(X).values():
        for solver in SOLVERS:  # every solver of the registry
            few_data, few_params = _few_kernels(data, params, X) if solver in FEW_KERNELS else (
                data, params)
            for n_jobs in (1, 2):
                fits.append((MKLClassifier, {**few_params, "solver": solver, "n_jobs": n_jobs},
                             few_data))
        fits.append((MKLRegressor, params, data))
        fits.append((OneClassMKL, params, data))
    fits.append((MKLClassifier, {"combination": "product", "kernels": "features",
                                 "regularizer": "l1"}, X))
    fits.append(_binary_fit(X))
    return fits + _low_rank_fits(X)


def _binary_fit(X):
    """(estimator, parameters, X) of a fit on rows of 0/1 points (blocks by their bits; the
    quadratic terms read many rows at once: the threaded count)."""
    from mklearn import MKLClassifier
    from mklearn.kernels import RBF

    binary = (X > np.median(X, axis=0)).astype(np.float64)
    kernels = [RBF(gamma=0.05), RBF(gamma=0.1, features=tuple(range(20)))]
    return MKLClassifier, {"kernels": kernels, "kernel_storage": "rows", "solver": "spg",
                           "n_jobs": 2}, binary


def _low_rank_fits(X):
    """(estimator, parameters, X) of the feature-space solvers' fits, on low-rank kernels
    in float64 and float32."""
    from mklearn import MKLClassifier, MKLRegressor
    from mklearn.solvers import SOLVERS

    fits = []
    for dtype in ("float64", "float32"):
        low_rank = {"kernel_approximation": "nystroem", "n_components": 20,
                    "kernel_dtype": dtype}
        for solver in (name for name, info in SOLVERS.items() if info.feature_function):
            fits.append((MKLClassifier, {**low_rank, "solver": solver}, X))
        fits.append((MKLClassifier, {**low_rank, "regularizer": "l1"}, X))
        fits.append((MKLRegressor, low_rank, X))
    return fits


def warm_up(verbose: bool = False) -> float:
    """Fit every warm-up case once (see the module's docstring); returns the seconds taken.

    Raises whatever a fit raises: a warm-up that fails is a broken installation.
    """
    from mklearn.datasets import load_sonar

    X, y = load_sonar()
    X, y = X[:N_POINTS], y[:N_POINTS]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny fits: convergence is not the point
        with _paths_at_any_size():
            _fit_each(_fits(X, y), y, start, verbose)
        _fit_each(_low_rank_fits(X), y, start, verbose)  # their one-thread paths too
    return time.perf_counter() - start


def _fit_each(fits, y, start, verbose):
    for estimator, params, data in fits:
        estimator(max_iter=20, **params).fit(data, y)
        if verbose:
            print(f"{estimator.__name__}({params.get('solver', '')}) "
                  f"{time.perf_counter() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    seconds = warm_up(verbose="-v" in sys.argv[1:])
    print(f"mklearn: numba code compiled or loaded from its cache in {seconds:.0f} s")
