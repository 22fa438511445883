"""Every ```python block of docs/*.md and README.md runs: the blocks of one file in order, in
one namespace, in a temporary directory (figures and model files land there)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
SLOW = {"smo_mkl.md", "plots.md"}  # 7-10 s each on 2 cores (full bundled sets, figures)


def _blocks(path):
    return re.findall(r"^```python\n(.*?)^```", path.read_text(), flags=re.S | re.M)


def test_every_page_is_collected():
    assert {p.name for p in PAGES} >= {"mwumkl.md", "extending.md", "saving.md", "README.md"}


@pytest.mark.parametrize(
    "page",
    [pytest.param(p, marks=pytest.mark.slow) if p.name in SLOW else p for p in PAGES],
    ids=[p.name for p in PAGES],
)
def test_page_code_blocks_run(page, tmp_path, monkeypatch):
    blocks = _blocks(page)
    if not blocks:
        pytest.skip(f"{page.name} has no python code blocks")
    if any("matplotlib" in b or "plotting" in b for b in blocks):
        pytest.importorskip("matplotlib")
        import matplotlib

        matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": f"docs_{page.stem}"}
    for k, block in enumerate(blocks):
        exec(compile(block, f"{page.name} (python block {k + 1})", "exec"), namespace)


def _command_lines(path):
    shell = re.findall(r"^```(?:bash|sh)\n(.*?)^```", path.read_text(), flags=re.S | re.M)
    lines = [line.split("#")[0].split() for block in shell for line in block.splitlines()]
    return [words[1:] for words in lines if words and words[0] == "mklearn"]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_command_lines_parse(page):
    # Shell blocks that call `mklearn` use options the command has (running them all would
    # take minutes; tests/test_cli.py runs each kind).
    from mklearn.cli import _parser

    for argv in _command_lines(page):
        _parser().parse_args(argv)
