"""The way X takes through a fit: down the layers of pyproject.toml's import-linter contract,
never called back up (a callback from a lower layer, a decorator defined below its user)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import tomllib

from mklearn import MKLClassifier, MKLRegressor
from mklearn.datasets import load_sonar

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _layer_of():
    """``module -> height`` of every module or package named in the layers contract."""
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["id"] == "layers")["layers"]
    height = {}
    for i, entry in enumerate(layers):
        for name in entry.split("|"):
            height["mklearn." + name.strip()] = len(layers) - i
    return lambda module: height.get(".".join(module.split(".")[:2]))


def _carries(frame, X):
    """Whether a call's arguments hold X (or an array on X's memory), directly or as an
    attribute of an argument."""
    def holds(value):
        return (isinstance(value, np.ndarray) and value.shape[:1] == X.shape[:1]
                and np.may_share_memory(value, X))

    for value in frame.f_locals.values():
        if holds(value) or any(holds(v) for v in list(getattr(value, "__dict__", {}).values())):
            return True
    return False


def _walk_of_X(estimator, X, y):
    """(modules X enters, calls carrying X from a lower layer into a higher one) during
    ``estimator.fit(X, y)``."""
    layer = _layer_of()
    modules, climbs = [], []

    def profile(frame, event, arg):
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("mklearn.") or not _carries(frame, X):
            return
        caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
        if module not in modules:
            modules.append(module)
        below, above = layer(caller), layer(module)
        if caller.startswith("mklearn.") and below and above and above > below:
            climbs.append(f"{caller} -> {module}.{frame.f_code.co_name}")

    sys.setprofile(profile)
    try:
        estimator.fit(X, y)
    finally:
        sys.setprofile(None)
    return modules, climbs


@pytest.mark.filterwarnings("ignore:.*low-rank features have rank")
@pytest.mark.parametrize("estimator", [MKLClassifier(), MKLRegressor(),
                                       MKLClassifier(kernel_approximation="nystroem",
                                                     n_components=20)])
def test_X_goes_down_the_layers_only(estimator):
    X, y = load_sonar()
    picked = np.random.default_rng(0).permutation(len(y))[:100]
    X = np.ascontiguousarray(X[picked], dtype=np.float64)
    y = 10 * X[:, 0] if isinstance(estimator, MKLRegressor) else y[picked]
    modules, climbs = _walk_of_X(estimator, X, y)
    assert modules[0].startswith("mklearn.estimators.")
    assert climbs == []
    assert len(modules) <= 8, modules
