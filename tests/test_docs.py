"""Every example of README.md and docs/*.md runs as a user runs it, and every solver it shows
reaches its tol (a ConvergenceWarning fails the test):

- the ```python blocks of a page, in order, as one script (``python page.py``: a cluster
  started outside ``if __name__ == "__main__":`` fails as it would for the user);
- every ``mklearn ...`` line of a ```bash / ```sh block (and ``$ mklearn ...`` of a ```text
  block) as a command, and every ``.venv/bin/python examples/...`` line as a script.

Each runs in a temporary directory; the files the README's commands read (``my.libsvm``,
``my.csv``, ``new.libsvm``) are written there from Ionosphere. ```py blocks (cluster set-ups
this test cannot reach: SLURM, Kubernetes) are not run. Examples that take more than a few
seconds are marked slow (SLOW; an example not listed there counts as slow).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
# Seconds each example took in a subprocess (python start-up and numba's cache load, 2-3 s,
# included; 2 cores shared with another test run): python blocks per page, commands per line.
# Above SLOW_SECONDS an example is marked slow.
SLOW = {
    "bad_input.md": 3.0, "distributed.md": 20, "extending.md": 13, "group_mkl.md": 13,
    "large_scale.md": 10, "learned_kernel.md": 6.1, "low_rank.md": 4.3, "mwumkl.md": 11,
    "plots.md": 17,
    "products.md": 4.8, "README.md": 4.1, "saving.md": 4.1, "seed_solvers.md": 14,
    "silp.md": 8.4, "smo_mkl.md": 12,
    "string_kernels.md": 11,
    "mklearn fit": 5.3, "mklearn fit --dataset ionosphere --cv 5": 6.2,
    "mklearn fit --data my.libsvm --regularizer lp -p 1.33 --save model.npz": 5.3,
    "mklearn fit --data my.csv --label-column 0 --json": 5.1,
    "mklearn fit --solver smo --regularizer lp -p 1.33": 6.0,
    "mklearn fit --solver silp --interleaved --kernels mwumkl_all": 5.7,
    "mklearn fit --dataset abalone -C 10 --epsilon 0.5": 58,
    "mklearn fit --dataset breast-cancer --task one-class --save oc.npz": 2.9,
    "mklearn fit --plot plots/": 4.2,
    "mklearn predict model.npz --data new.libsvm --output predictions.txt": 5.0,
    "mklearn fit --dataset ionosphere --kernels mwumkl": 2.8,
    "mklearn fit --dataset mfeat --n-samples 300": 3.4,
    "mklearn fit --dataset splice --n-samples 500": 3.6,
    "mklearn datasets": 4.0,
    "mklearn fit --dataset sonar --combination product -C 10 --lam 1": 4.5,
    "examples/silp_stars.py docs/silp_figures": 49,
    "examples/silp_sine.py docs/silp_figures": 13,
}
SLOW_SECONDS = 5
TIMEOUT = 600
PRELUDE = (
    "import warnings\n"
    "from sklearn.exceptions import ConvergenceWarning\n"
    "warnings.simplefilter('error', ConvergenceWarning)\n"
)


def _blocks(path, languages):
    pattern = rf"^```(?:{languages})\n(.*?)^```"
    return re.findall(pattern, path.read_text(), flags=re.S | re.M)


def _commands(path):
    """The command lines of a page, comments dropped, in order."""
    lines = [line for block in _blocks(path, "bash|sh") for line in block.splitlines()]
    lines += [line[2:] for block in _blocks(path, "text") for line in block.splitlines()
              if line.startswith("$ mklearn ")]
    commands = [line.split("#")[0].strip() for line in lines]
    return [c for c in commands
            if c.startswith("mklearn ") or c == "mklearn" or c.startswith(".venv/bin/python ")]


def _speed_marks(key):
    return [pytest.mark.slow] if SLOW.get(key, SLOW_SECONDS + 1) > SLOW_SECONDS else []


def _env():
    env = dict(os.environ, MPLBACKEND="Agg")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep)
    return env


def _run(argv, cwd):
    done = subprocess.run(argv, cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 0, f"{shlex.join(argv)} failed:\n{done.stdout}\n{done.stderr}"
    return done


def test_every_page_is_collected():
    assert {p.name for p in PAGES} >= {"mwumkl.md", "extending.md", "saving.md", "README.md"}
    assert len(COMMANDS) >= 15


SCRIPT_PAGES = [p for p in PAGES if _blocks(p, "python")]


@pytest.mark.parametrize(
    "page", [pytest.param(p, marks=_speed_marks(p.name)) for p in SCRIPT_PAGES],
    ids=[p.name for p in SCRIPT_PAGES],
)
def test_page_runs_as_a_script(page, tmp_path):
    blocks = _blocks(page, "python")
    text = "".join(blocks)
    if "matplotlib" in text or "plotting" in text:
        pytest.importorskip("matplotlib")
    if "distributed" in text:
        pytest.importorskip("distributed")
    script = tmp_path / f"docs_{page.stem}.py"  # not "distributed.py", which shadows Dask
    script.write_text(PRELUDE + "\n".join(blocks))
    _run([sys.executable, str(script)], tmp_path)


COMMANDS = [(page, command) for page in PAGES for command in _commands(page)]


@pytest.fixture
def user_files(tmp_path):
    """The files the README's commands read, written from Ionosphere."""
    from sklearn.datasets import dump_svmlight_file

    from mklearn.datasets import load_ionosphere

    X, y = load_ionosphere()
    dump_svmlight_file(X[:250], y[:250], str(tmp_path / "my.libsvm"))
    dump_svmlight_file(X[250:], y[250:], str(tmp_path / "new.libsvm"))
    np.savetxt(tmp_path / "my.csv", np.column_stack([y, X]), delimiter=",")
    return tmp_path


@pytest.mark.parametrize(
    ("page", "command"),
    [pytest.param(p, c, marks=_speed_marks(c.replace(".venv/bin/python ", "")))
     for p, c in COMMANDS],
    ids=[f"{p.name}: {c}" for p, c in COMMANDS],
)
def test_command_runs_and_converges(page, command, user_files):
    words = shlex.split(command)
    if words[0] == "mklearn":
        if "predict" in words:  # reads the model an earlier line of the page saves
            _run(_cli(["fit", "--data", "my.libsvm", "--save", "model.npz"]), user_files)
        argv = _cli(words[1:])
    else:
        pytest.importorskip("matplotlib")
        argv = [sys.executable, str(ROOT / words[1]), *words[2:]]
    done = _run(argv, user_files)
    said = done.stdout + done.stderr
    assert "ConvergenceWarning" not in said and "did not converge" not in said, said
    gaps = re.findall(r"relative duality gap ([-+.e\d]+)|\(relative ([-+.e\d]+)\)", said)
    assert all(float(a or b) <= 1e-3 for a, b in gaps), gaps  # the default tol


def _cli(args):
    code = "import sys; from mklearn.cli import main; sys.exit(main(sys.argv[1:]))"
    return [sys.executable, "-c", code, *args]


def _fit_help(capsys):
    """``mklearn fit --help`` as one line (argparse's wrapping undone)."""
    from mklearn.cli import main

    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_fit_help_states_the_lam_a_default_fit_uses(capsys):
    from mklearn import MKLClassifier
    from mklearn.kernels.recipes import SVC_KERNEL_LAM

    text = _fit_help(capsys)
    stated = re.search(r"for classification (\S+) with --regularizer auto's KL prior", text)
    assert stated is not None, text
    X = np.random.default_rng(0).normal(size=(30, 2))
    fitted = MKLClassifier().fit(X, np.where(X[:, 0] > 0, 1, -1))
    assert float(stated.group(1)) == fitted.lam_ == SVC_KERNEL_LAM
    assert f"lam={SVC_KERNEL_LAM:g}," in text  # the description's defaults


def test_readme_names_the_kernels_mklearn_fit_uses():
    from mklearn import MKLClassifier

    line = next(line for line in (ROOT / "README.md").read_text().splitlines()
                if line.split("#")[0].strip() == "mklearn fit")
    assert MKLClassifier().kernels in line.split("#")[1], line
