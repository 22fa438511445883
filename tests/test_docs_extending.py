"""The tutorials' code blocks run in order in one namespace (docs/extending.md, products.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _blocks(name):
    return re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(), flags=re.S)


@pytest.mark.parametrize("name", ["extending.md", "products.md"])
def test_tutorial_code_runs(name, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)  # figures the tutorials save land here
    blocks = _blocks(name)
    assert blocks, f"{name} has no python code blocks"
    namespace = {}
    for block in blocks:
        exec(compile(block, f"{name}", "exec"), namespace)
