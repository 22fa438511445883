"""The SILP toy experiments (examples/silp_stars.py, examples/silp_sine.py) at a tiny size."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "name, argv, key",
    [("silp_stars", ["--n", "120", "--steps", "2"], "test_error"),
     ("silp_sine", ["--n", "80", "--steps", "2"], "rmse_to_sine")],
)
def test_example_runs_and_writes_its_figure(tmp_path, name, argv, key):
    pytest.importorskip("matplotlib")
    results = _load(name).main([str(tmp_path), *argv])
    assert (tmp_path / f"{name}.png").stat().st_size > 10_000
    saved = json.loads((tmp_path / f"{name}.json").read_text())
    assert saved == json.loads(json.dumps(results))
    weights = np.array(saved["weights"])
    assert weights.shape == (2, 5)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-9)
    assert np.all(np.isfinite(saved[key]))


def test_separated_stars_are_learned_without_error():
    stars = _load("silp_stars")
    results = stars.run(n=200, steps=1)  # distance 0.1: overlapping stars
    assert results["test_error"][0] > 0.2
    far = stars.run(n=200, steps=2)  # the second distance, 5.9, separates them
    assert far["test_error"][1] == 0.0
