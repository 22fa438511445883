"""Every example of README.md and of the site's pages (docs/*.md) runs as a user runs it, and
every solver it shows reaches its tol (a ConvergenceWarning fails the test):

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
    "string_kernels.md": 11, "what_is_mkl.md": 12, "choosing.md": 8.4, "kernels.md": 11,
    "large_data.md": 12, "index.md": 13,
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


def test_cli_page_names_the_kernels_mklearn_fit_uses():
    from mklearn import MKLClassifier

    line = next(line for line in (DOCS / "cli.md").read_text().splitlines()
                if line.split("#")[0].strip() == "mklearn fit")
    assert MKLClassifier().kernels in line.split("#")[1], line


# ------------------------------------------------------------- figures and defaults
RESULTS = ROOT / "benchmarks" / "results"
DOCS = ROOT / "docs"


def _text(path):
    """A page as one line (line breaks undone), so that a sentence is found across them."""
    return " ".join(path.read_text().split())


def _json(name):
    import json

    return json.loads((RESULTS / name).read_text())


def test_every_result_file_the_pages_cite_exists():
    cited = {name for page in PAGES
             for name in re.findall(r"benchmarks/results/([\w.-]+\.(?:json|png))",
                                    page.read_text())}
    assert "defaults.json" in cited and "small_sets.json" in cited
    assert sorted(name for name in cited if not (RESULTS / name).exists()) == []


def _classification_cost(run):
    """(sets within the accuracy goal, sets, median cost, least cost, largest cost, least
    and largest n) of a run of ``bench_defaults.py``, its classification sets."""
    rows = [r for r in run["results"] if r["task"] == "classification"]
    costs = [r["cost_over_plain_anchor"] for r in rows]
    sizes = [r["n_samples"] for r in rows]
    return (sum(r["meets_accuracy_goal"] for r in rows), len(rows), float(np.median(costs)),
            min(costs), max(costs), min(sizes), max(sizes))


def test_stated_cost_of_the_defaults_is_the_benchmark_s_at_the_size_it_names():
    runs = _json("defaults.json")["runs"]
    text = _text(DOCS / "choosing.md")
    assert "benchmarks/results/defaults.json" in text
    within, sets, median, *_, largest_n = _classification_cost(runs["default"])
    assert runs["default"]["config"]["max_samples"] == 250 and largest_n == 250
    assert (f"on {within} of the {sets} bundled and scikit-learn classification sets at a "
            f"median {median:.0f}x `SVC()`'s fit and predict time, measured on subsets of at "
            "most 250 points") in text
    within, sets, median, _, _, least_n, largest_n = _classification_cost(runs["full"])
    assert (f"full sizes ({least_n:,}-{largest_n:,} points, run `full`) on {within} of the "
            f"{sets} at a median {median:.1f}x") in text
    _, _, median, least, largest, _, n = _classification_cost(runs["unseen"])
    assert f"{least:.0f}-{largest:.0f}x (median {median:.0f}x) at {n:,} points" in text
    _, _, _, least, largest, _, n = _classification_cost(runs["unseen-5000"])
    assert f"{least:.0f}-{largest:.0f}x at {n:,}" in text


def test_small_sets_table_is_the_benchmark_s():
    rows = {}
    for line in (DOCS / "benchmarks.md").read_text().splitlines():
        found = re.match(r"\| ([\w ]+) \((\d+), (\d+)\) \|(.*)\|$", line)
        if found:
            rows[found.group(1)] = [found.group(2), found.group(3),
                                    *[c.strip() for c in found.group(4).split("|")]]
    names = {"Breast-cancer": "Breast cancer", "Diabetes/Pima": "Pima"}
    sets = _json("small_sets.json")["sets"]
    assert len(rows) == len(sets) == 7
    for s in sets:
        splits = s["splits"]

        def mean(method, key, splits=splits):
            values = [split[method][key] for split in splits if method in split]
            return float(np.mean(values)), len(values)

        kernels = float(np.mean([split["kernel_time_train"] for split in splits]))
        pgd, pgd_runs = mean("pgd", "fit_time")
        assert len(splits) == 5 and pgd_runs == 2  # "PGD ran on the first 2"
        expected = [str(splits[0]["n_train"]), str(splits[0]["n_kernels"]), f"{kernels:.2f}",
                    f"{mean('spg', 'fit_time')[0]:.2f}", f"{pgd:.2f}",
                    f"{mean('svc_uniform', 'fit_time')[0]:.3f}",
                    f"{mean('easymkl', 'fit_time')[0]:.2f}",
                    f"{100 * mean('spg', 'accuracy')[0]:.1f}"]
        assert rows[names.get(s["name"], s["name"])] == expected, s["name"]


def test_figures_of_the_large_runs_are_their_json_s():
    compile_seconds = max(row["compile_seconds"] for run in _json("compile.json")["runs"].values()
                          for row in run["rows"])
    assert f"at most {compile_seconds:.2f} s in numba" in _text(DOCS / "install.md")
    million = _json("distributed.json")["many_kernels"]
    two, one = (million["999960"]["runs"][s]["seconds"] for s in ("dask2", "dask1"))
    tenth = million["99960"]["runs"]
    assert (f"in {two:.0f} s on 2 workers, {one / two:.2f}x faster than on one ({one:.0f} s; "
            f"{tenth['dask1']['seconds'] / tenth['dask2']['seconds']:.2f}x with 10^5"
            ) in _text(DOCS / "large_data.md")
    partitioned = _json("distributed.json")["data_parallel"]["runs"]["30000"]
    two, one, here = (partitioned[s]["seconds"] for s in ("workers2", "workers1", "process"))
    assert (f"{two:.0f} s on 2 workers and {one:.0f} s on 1 ({one / two:.2f}x), against "
            f"{here:.0f} s in one process") in _text(DOCS / "distributed.md")
    text = _text(DOCS / "benchmarks.md")
    many = _json("smo_many_kernels.json")["runs"]["default"]["rows"][-1]
    assert many["kernels"] == 100_000
    assert (f"{many['fit_seconds']:.0f} s at p = 2, {many['peak_rss_megabytes'] / 1e3:.1f} GB "
            f"peak memory where the stack would take {many['stack_megabytes_avoided'] / 1e3:.0f}"
            " GB") in text
    fits = [np.mean([r["fit_time"] for r in row["ours"]])
            for s in _json("smo_mkl_table1.json")["sets"].values() for row in s["rows"].values()]
    assert f"fit times {min(fits):.2f}-{max(fits):.2f} s" in text
    mwu = _json("mwu_scaling.json")["runs"]
    adult, sonar = mwu["table2"]["paper_sizes"], mwu["table2"]["sonar_many_kernels"]
    million = mwu["sonar-1m"]["sonar_many_kernels"]
    assert (f"in {adult['seconds']:.0f} s against the paper's {adult['paper_seconds'] / 60:.0f} "
            f"minutes ({adult['paper_seconds'] / adult['seconds']:.1f}x)") in text
    assert (f"{sonar['kernels']:,} on-the-fly kernels in {sonar['seconds']:.0f} s and with "
            f"{million['kernels']:,} in {million['seconds']:,.0f} s") in text
    assert f"({3.65 * 3600 / million['seconds']:.1f}x)" in text


def test_stated_defaults_are_the_code_s():
    import inspect

    from mklearn import MKLClassifier
    from mklearn.kernels.low_rank import LOW_RANK_SAMPLES
    from mklearn.kernels.recipes import SVC_KERNEL_LAM, SVC_KERNEL_PRIOR
    from mklearn.solvers.easymkl import easymkl

    readme = _text(ROOT / "README.md")
    model = MKLClassifier()
    assert f"lam={SVC_KERNEL_LAM:g}, every kernel kept, the prior {SVC_KERNEL_PRIOR:g}" in readme
    assert f"C={model.C:g}, and solver=\"auto\"" in readme.replace("# ", "")
    choosing = _text(DOCS / "choosing.md")
    assert (f"the prior is {SVC_KERNEL_PRIOR:g} on SVC's kernel, the rest spread evenly, and "
            f"`lam=\"auto\"` is {SVC_KERNEL_LAM:g} (1 for a named") in choosing
    assert f"`kernels=\"{model.kernels}\"` (default" in _text(DOCS / "kernels.md")
    assert f"from {LOW_RANK_SAMPLES:,} training points on" in _text(DOCS / "large_data.md")
    lam = inspect.signature(easymkl).parameters["lam"].default
    assert f"`solver_options={{\"lam\": {lam:g}}}`" in choosing
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    assert MKLClassifier(regularizer="kl").fit(X, y).lam_ == 1.0  # "1 for a named kl"


def test_the_cost_of_average_is_the_benchmark_s():
    rows = _json("unseen_average.json")["rows"]
    stacks = [r["ratio"] for r in rows if "ratio_with_kernels" not in r]
    from_x = next(r for r in rows if "ratio_with_kernels" in r)
    assert len(stacks) == 4 and all(r["n"] == 1000 and r["n_kernels"] == 100 for r in rows[:4])
    text = _text(ROOT / "docs" / "seed_solvers.md")
    assert f"{min(stacks):.2f}-{max(stacks):.2f} times as long" in text
    assert (f"breast cancer, {from_x['n']} points, the default kernels) it takes "
            f"{from_x['ratio_with_kernels']:.2f} times") in text


def test_seed_solvers_option_defaults_are_the_code_s():
    import inspect

    from mklearn.solvers import SOLVERS

    text = (ROOT / "docs" / "seed_solvers.md").read_text()
    options = text[text.index("**Options**"):].split("\n\n")[1]  # the table after it
    table = {}
    for line in options.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        table[cells[0]] = (cells[1].split(", "), cells[2])
    for options, (solvers, stated) in table.items():
        names = [o.strip("` ") for o in options.split(",")]
        if names == ["cache_size"]:
            continue  # the estimator's own
        stated_values = [v.strip().strip("`\"") for v in stated.split(",")]
        for solver in solvers:
            signature = inspect.signature(SOLVERS[solver].function).parameters
            defaults = [signature[name].default for name in names]
            assert [_same(d, v) for d, v in zip(defaults, stated_values, strict=True)] == [
                True] * len(names), (solver, names, defaults, stated_values)
    assert len(table) >= 4


def _same(value, stated):
    """Whether a default equals the text a page states for it (numbers as numbers)."""
    try:
        return float(value) == float(stated)
    except (TypeError, ValueError):
        return str(value) == stated
