"""The string-kernel example runs at tiny size (the docs page runs in test_docs.py)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_wd_positions_example_runs_at_tiny_size(tmp_path):
    pytest.importorskip("matplotlib")
    spec = importlib.util.spec_from_file_location("wd_positions",
                                                  ROOT / "examples" / "wd_positions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results, models = module.main(["--out", str(tmp_path), "--n-train", "300", "--n-test", "300",
                                   "--order", "6", "--block-size", "20"])
    assert (tmp_path / "wd_positions.png").stat().st_size > 10_000
    assert set(results) == {"plain WD SVM (linadd)", "MKL, position blocks",
                            "MKL, k-mer lengths"}
    for scores in results.values():
        assert scores["auROC"] > 0.8
    blocks = models["MKL, position blocks"]
    assert blocks.kernel_names_[2] == "wd(d=6) at positions 40-59"
    assert blocks.kernel_weights_.argmax() in (1, 2)  # the blocks around the AG at 40-41
