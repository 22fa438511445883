"""The string-kernel docs page and example run (example at tiny size)."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_docs_code_blocks_run():
    text = (ROOT / "docs" / "string_kernels.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 2
    for block in blocks:
        exec(compile(block, "docs/string_kernels.md", "exec"), {})


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
