"""numba's one-time compilation is measured and reported apart from kernel and solver time."""

from __future__ import annotations

import json
import time

import numpy as np
from numba import njit

from mklearn.cli import main
from mklearn.progress import compile_clock


def test_clock_measures_a_first_call_only():
    @njit(cache=False)
    def fresh(x):
        return x * 2.0 + 1.0

    with compile_clock() as clock:
        fresh(1.0)
    assert len(clock.intervals) >= 1 and clock.total > 0.0
    start, stop = clock.intervals[0]
    assert clock.within(start, stop) == stop - start
    assert clock.within(stop, stop + 10.0) == 0.0
    with compile_clock() as again:
        fresh(2.0)  # compiled already: nothing to do
    assert again.intervals == []


def _compile_in_the_kernel_phase(monkeypatch):
    """Make every fit compile a fresh jitted function while it builds its kernels, as a
    first run does."""
    from mklearn.estimators.kernel_input import _KernelInput

    build = _KernelInput._training_kernels

    def compiling_kernels(self, *args, **kwargs):
        @njit(cache=False)
        def first_call(x):
            return x * 3.0

        first_call(1.0)
        return build(self, *args, **kwargs)

    monkeypatch.setattr(_KernelInput, "_training_kernels", compiling_kernels)


def test_cli_reports_compile_time_apart(capsys, tmp_path, monkeypatch):
    _compile_in_the_kernel_phase(monkeypatch)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, np.where(X[:, 0] > 0, 1, -1)]), delimiter=",")
    assert main(["fit", "--data", str(data), "--max-iter", "20", "--json"]) == 0
    fold = json.loads(capsys.readouterr().out)["folds"][0]
    assert fold["compile_seconds"] > 0.01  # at least the fresh function's compilation
    parts = fold["kernel_seconds"] + fold["solve_seconds"] + fold["compile_seconds"]
    assert parts <= fold["wall_seconds"] + 1e-3
    assert main(["fit", "--data", str(data), "--max-iter", "20"]) == 0
    time_line = capsys.readouterr().out.splitlines()[-1]
    assert time_line.startswith("time: kernels ") and ", fit " in time_line


def test_estimators_report_compile_time_apart(monkeypatch):
    from mklearn import MKLClassifier, MKLRegressor, OneClassMKL

    _compile_in_the_kernel_phase(monkeypatch)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    labels = np.where(X[:, 0] > 0, 1, -1)
    for model, y in ((MKLClassifier(max_iter=20), labels), (MKLRegressor(max_iter=20), X[:, 1]),
                     (OneClassMKL(max_iter=20), None)):
        start = time.perf_counter()
        model.fit(X, y)
        wall = time.perf_counter() - start
        assert model.compile_time_ > 0.01  # at least the fresh function's compilation
        assert model.kernel_time_ >= 0.0 and model.solve_time_ >= 0.0
        parts = model.kernel_time_ + model.solve_time_ + model.compile_time_
        assert parts <= wall + 1e-3
