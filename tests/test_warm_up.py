"""The set-up's warm-up covers every solver and input kind, and leaves the thresholds as they
were (its fits compile the threaded passes at any size)."""

import numpy as np

from mklearn import MKLClassifier, MKLRegressor, OneClassMKL
from mklearn.cli.warm_up import INPUTS, _fits, _paths_at_any_size
from mklearn.kernels import base_store, stack_checks, threads
from mklearn.solvers import SOLVERS as REGISTERED


def test_every_registered_solver_and_input_kind_is_warmed_up():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 3)), np.repeat([-1.0, 1.0], 6)
    fits = _fits(X, y)
    kinds = {(solver, jobs) for estimator, params, _ in fits if estimator is MKLClassifier
             for solver, jobs in [(params.get("solver"), params.get("n_jobs"))]}
    assert {(s, j) for s in REGISTERED for j in (1, 2)} <= kinds
    exact = [(e, p) for e, p, _ in fits if "kernel_approximation" not in p]
    assert sum(e is MKLRegressor for e, _ in exact) == len(INPUTS)
    low_rank = {(p.get("solver"), p["kernel_dtype"]) for e, p, _ in fits
                if e is MKLClassifier and "kernel_approximation" in p}
    assert {(s, dtype) for s, info in REGISTERED.items() if info.feature_function
            for dtype in ("float64", "float32")} <= low_rank
    assert sum(e is OneClassMKL for e, _, _ in fits) == len(INPUTS)
    assert any(p.get("combination") == "product" for _, p, _ in fits)


def test_thresholds_are_restored_after_the_warm_up():
    before = (threads.PARALLEL_MIN_VALUES, threads.PARALLEL_MIN_POINTS, base_store.MIN_BLOCK,
              stack_checks._EXACT_EIGEN_N)
    try:
        with _paths_at_any_size():
            assert threads.PARALLEL_MIN_VALUES == 0 and base_store.MIN_BLOCK == 16
            assert stack_checks._EXACT_EIGEN_N == 0  # the in-place Cholesky test is compiled
            raise RuntimeError("a fit failed")
    except RuntimeError:
        pass
    assert (threads.PARALLEL_MIN_VALUES, threads.PARALLEL_MIN_POINTS,
            base_store.MIN_BLOCK, stack_checks._EXACT_EIGEN_N) == before
