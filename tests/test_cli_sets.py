"""The CLI's data sets and kernel families: `mklearn datasets` shows every set with its size and
task, every set fits from the command line (on a small subset), `--kernels` picks the family,
and multiclass output names each class."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mklearn.cli import data as cli_data
from mklearn.cli import main

ALL_SETS = [row[0] for row in cli_data.all_datasets()]


def _run(capsys, *argv):
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_datasets_lists_sizes_and_tasks(capsys):
    status, out, _ = _run(capsys, "datasets")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["name", "samples", "features", "task"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert set(rows) == set(ALL_SETS) and {"mfeat", "splice", "sonar", "abalone"} <= set(rows)
    assert rows["sonar"].split()[1:4] == ["208", "60", "classification"]
    assert rows["abalone"].split()[3] == "regression"
    assert "649 in 6 views" in rows["mfeat"] and "sequences of 60 nt" in rows["splice"]


@pytest.mark.parametrize("name", ALL_SETS)
def test_every_bundled_set_fits_from_the_cli(capsys, name):
    status, out, err = _run(capsys, "fit", "--dataset", name, "--n-samples", "60",
                            "--max-iter", "20", "--json")
    assert status == 0, err
    report = json.loads(out)
    assert report["data"] == name and report["n_samples"] == 60
    fold = report["folds"][0]
    assert fold["n_train"] + fold["n_test"] == 60 and fold["n_kernels"] >= 1
    metric = "test_r2" if report["task"] == "regression" else "test_accuracy"
    assert np.isfinite(fold[metric])


@pytest.mark.parametrize(
    ("family", "n_kernels", "combination"),
    [("mwumkl", 12 * 60, "sum"), ("mwumkl_all", 12, "sum"), ("simple_mkl", 13 * 61, "sum"),
     ("features", 60, "product")],
)
def test_kernels_chooses_the_family(capsys, family, n_kernels, combination):
    status, out, err = _run(capsys, "fit", "--kernels", family, "--n-samples", "50",
                            "--max-iter", "10", "--json")
    assert status == 0, err
    report = json.loads(out)
    assert report["kernels"] == family and report["combination"] == combination
    assert report["folds"][0]["n_kernels"] == n_kernels


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--kernels", "wd_position"], "does not apply to numeric data"),
        (["--dataset", "promoters", "--kernels", "simple_mkl"], "wd_position, wd_kmer"),
        (["--kernels", "mwumkl", "--combination", "product"], "--kernels features"),
        (["--n-samples", "2"], "at least 4"),
    ],
)
def test_kernels_that_do_not_fit_the_data_exit_2(capsys, argv, fragment):
    status, _, err = _run(capsys, "fit", *argv)
    assert status == 2 and err.startswith("mklearn: error: ") and fragment in err


def test_multiclass_output_names_each_class(capsys, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    labels = np.array(["cat", "dog", "eel"])[np.digitize(X[:, 0], [-0.4, 0.4])]
    data = tmp_path / "three.csv"
    data.write_text("".join(",".join(f"{v:.6f}" for v in row) + f",{c}\n"
                            for row, c in zip(X, labels, strict=True)))
    status, out, err = _run(capsys, "fit", "--data", data, "--max-iter", "30")
    assert status == 0, err
    assert "mean over the one-vs-rest classes" in out
    for c in ("cat", "dog", "eel"):
        line = next(line for line in out.splitlines() if line.startswith(f"  class {c}:"))
        assert "objective" in line and "duality gap" in line and "top" in line
    status, out, err = _run(capsys, "fit", "--data", data, "--max-iter", "30", "--json")
    fold = json.loads(out)["folds"][0]
    assert fold["top_weights_of"] == "mean over classes"
    assert [row["class"] for row in fold["per_class"]] == ["cat", "dog", "eel"]
    for c, row in enumerate(fold["per_class"]):
        assert row["objective"] == fold["objective"][c]
        assert row["duality_gap"] == fold["duality_gap"][c]
        assert row["top_weights"] and row["n_selected"] >= 1


def test_one_class_task_fits_saves_and_predicts(capsys, tmp_path):
    from mklearn import load_model

    path = tmp_path / "oc.npz"
    status, out, err = _run(capsys, "fit", "--dataset", "breast-cancer", "--task", "one-class",
                            "--n-samples", "120", "--max-iter", "30", "--save", path, "--json")
    assert status == 0, err
    report = json.loads(out)
    assert report["task"] == "one-class" and report["solver"] == "silp"
    fold = report["folds"][0]
    assert 0.0 <= fold["test_accuracy"] <= 1.0
    assert fold["n_fit"] < fold["n_train"]  # only the inlier class is learned
    model = load_model(path)
    assert type(model).__name__ == "OneClassMKL" and model.nu == 0.1
    data = tmp_path / "new.csv"
    rng = np.random.default_rng(1)
    X_new = rng.normal(size=(6, 9))
    np.savetxt(data, X_new, delimiter=",")
    status, out, err = _run(capsys, "predict", path, "--data", data)
    assert status == 0, err
    assert out.split() == [str(v) for v in model.predict(X_new)]


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--task", "one-class", "--inlier-class", "7"], "not a class of the data"),
        (["--task", "one-class", "--solver", "smo"], "silp or spg"),
        (["--dataset", "abalone", "--task", "one-class"], "regression data set"),
    ],
)
def test_one_class_bad_options_exit_2(capsys, argv, fragment):
    status, _, err = _run(capsys, "fit", *argv)
    assert status == 2 and fragment in err
