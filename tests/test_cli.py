"""Tests of the ``mklearn`` command line (:mod:`mklearn.cli`).

Fits run in-process through ``main(argv)`` on small data (40-point files written to
``tmp_path``, the 345-point liver set with ``-C 1``) so that each takes about a second; one
subprocess test checks the installed console script.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.model_selection import train_test_split

import mklearn.cli as cli
from mklearn import MKLClassifier, load_model
from mklearn.cli import data as cli_data
from mklearn.cli import main
from mklearn.datasets import load_data_file, load_dataset

# Small C and max_iter keep the fits short.
FAST = ["-C", "1", "--max-iter", "100"]
WEIGHT_LINE = re.compile(r"^\s+(\d+\.\d{4})\s+(\S.*\) on (?:all|x\[[\d,]+\]))$")


# ---------------------------------------------------------------------------- helpers
def _run(capsys, *argv):
    """Run ``main`` in-process; return (status, stdout, stderr)."""
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _toy(n=40, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    if n_classes == 2:
        y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    else:
        y = np.digitize(X[:, 0], [-0.45, 0.45])
    return X, y


def _write_libsvm(path, X, y):
    with open(path, "w") as handle:
        for row, label in zip(X, y, strict=True):
            features = " ".join(f"{j + 1}:{v:.8f}" for j, v in enumerate(row))
            handle.write(f"{int(label):+d} {features}\n")
    return path


def _write_csv(path, X, labels, header=True):
    with open(path, "w") as handle:
        if header:
            handle.write(",".join(f"f{j}" for j in range(X.shape[1])) + ",label\n")
        for row, label in zip(X, labels, strict=True):
            handle.write(",".join(f"{v:.8f}" for v in row) + f",{label}\n")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Small data files: LIBSVM, numeric CSV, string-label CSV, 3-class CSV, bad files."""
    d = tmp_path_factory.mktemp("data")
    X, y = _toy()
    X3, y3 = _toy(n=45, n_classes=3, seed=1)
    out = {
        "svm": _write_libsvm(d / "toy.svm", X, y),
        "csv": _write_csv(d / "toy.csv", X, y, header=False),
        "csv_ab": _write_csv(d / "toy_ab.csv", X, np.where(y > 0, "a", "b")),
        "csv3": _write_csv(d / "toy3.csv", X3, np.array(["red", "green", "blue"])[y3]),
        "one_class": _write_csv(d / "one.csv", X, np.ones(len(y), dtype=int)),
        "wide": _write_csv(d / "wide.csv", np.hstack([X, X[:, :1]]), y),
    }
    (d / "bad.csv").write_text("1.0,2.0,1\n3.0,oops,-1\n")
    (d / "bad.svm").write_text("+1 1:0.5 2:0.3\n-1 1:0.2 2:abc\n")
    (d / "unsorted.svm").write_text("+1 1:0.5 2:0.3\n-1 2:0.2 1:0.1\n")
    (d / "not_a_model.npz").write_text("hello, I am not a model\n")
    out.update(
        bad_csv=d / "bad.csv",
        bad_svm=d / "bad.svm",
        unsorted_svm=d / "unsorted.svm",
        not_model=d / "not_a_model.npz",
        dir=d,
    )
    return out


@pytest.fixture(scope="module")
def saved_ab(files, tmp_path_factory):
    """A model fitted by the CLI on the string-label CSV (default 0.2 split, seed 0)."""
    path = tmp_path_factory.mktemp("model") / "ab.npz"
    assert main(["fit", "--data", str(files["csv_ab"]), *FAST, "--save", str(path)]) == 0
    return path


def _weight_lines(out):
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("kernel weights ("))
    weights = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        match = WEIGHT_LINE.match(line)
        assert match, f"malformed kernel weight line: {line!r}"
        weights.append((float(match.group(1)), match.group(2)))
    return lines[start], weights


def _accuracy(out, which):
    match = re.search(rf"^{which} accuracy\s+(\d\.\d+) \((\d+) points\)$", out, re.M)
    assert match, f"no {which} accuracy line in:\n{out}"
    return float(match.group(1)), int(match.group(2))


def _cli_split(y, test_size=0.2, seed=0):
    return train_test_split(np.arange(len(y)), test_size=test_size, stratify=y, random_state=seed)


def _cli_model(C=1.0, max_iter=100, **kwargs):
    """The estimator ``mklearn fit`` builds for FAST settings."""
    return MKLClassifier(kernels="svc+feature_rbf", C=C, tol=1e-3, max_iter=max_iter, **kwargs)


def _no_temp_files(directory):
    return [
        p.name
        for p in Path(directory).iterdir()
        if p.name.endswith(".tmp") or p.name.startswith(".mklearn-")
    ]


# ------------------------------------------------------------------------- text report
def test_fit_liver_prints_data_kernels_weights_accuracies_and_solver_summary(capsys):
    # l1 (SPG-GMKL): the report of a sparse fit; the default regulariser is checked below
    status, out, err = _run(capsys, "fit", "--dataset", "liver", *FAST, "--regularizer", "l1")
    assert status == 0, err
    # the alias is resolved to the set's name
    assert "data: liver-disorders: 345 samples, 6 features, classes -1: 145, 1: 200" in out
    assert "kernels: svc+feature_rbf (SVC()'s own kernel on all features and an RBF" in out
    assert "(the estimators' default)); solver spg" in out
    assert "chosen by --solver auto" in out
    assert "regularizer l1" in out and "C=1" in out
    assert "7 base kernels on 276 training points" in out  # one per feature + SVC's, 80 %

    header, weights = _weight_lines(out)
    n_selected, n_kernels, n_top = map(
        int, re.match(r"kernel weights \((\d+) of (\d+) non-zero; top (\d+)\):", header).groups()
    )
    assert n_kernels == 7
    assert 1 <= len(weights) == n_top == min(n_selected, 15)
    values = [w for w, _ in weights]
    assert values == sorted(values, reverse=True)
    assert all(w > 0 for w in values)
    assert sum(values) <= 1.0 + 1e-3  # l1: on the simplex
    names = [name for _, name in weights]
    assert all(
        re.match(r"rbf\((sigma=[\d.]+|gamma=[\d.]+, scaled columns)\) on ", n) for n in names
    ), names

    train_acc, n_train = _accuracy(out, "train")
    test_acc, n_test = _accuracy(out, "test")
    assert (n_train, n_test) == (276, 69)
    assert 0.0 <= train_acc <= 1.0 and 0.0 <= test_acc <= 1.0
    match = re.search(
        r"^objective ([-\d.e+]+), duality gap ([-\d.e+]+) \(absolute\), relative duality gap "
        r"([-\d.e+]+), iterations (\d+), SVM solves (\d+)(?:, SMO steps \d+)?$",
        out,
        re.M,
    )
    assert match, out
    assert float(match.group(2)) >= 0.0 and int(match.group(4)) >= 1
    assert float(match.group(3)) == pytest.approx(
        float(match.group(2)) / abs(float(match.group(1))), rel=0.05)
    # the compile part is there when this fit compiled or loaded loops (first use of a path)
    assert re.search(r"^time: kernels [\d.]+ s, solver [\d.]+ s"
                     r"(, numba compile/cache load [\d.]+ s"
                     r"( \(compiled on first use, cached for later runs\))?)?, fit [\d.]+ s$",
                     out, re.M)
    # the tqdm progress bar goes to stderr, labelled by the solver, with the gap
    assert "spg" in err and "relative_duality_gap=" in err and "100/100%" in err
    assert "Traceback" not in err


def test_fit_without_arguments_uses_sonar_feature_rbf_smo_kl(capsys, monkeypatch):
    # Serve a 40-point subset
    # of the real Sonar data and check what the default command asks for and prints.
    X, y = load_dataset("sonar")
    rows = np.r_[np.flatnonzero(y == 1)[:20], np.flatnonzero(y == -1)[:20]]
    requested = []

    def fake_load_dataset(name):
        requested.append(name)
        return X[rows], y[rows]

    monkeypatch.setattr(cli.cli_data.datasets, "load_dataset", fake_load_dataset)
    status, out, err = _run(capsys, "fit")
    assert status == 0, err
    assert requested == ["sonar"]
    assert "data: sonar: 40 samples, 60 features" in out
    assert "an RBF of width 1 on each standardised feature" in out and "solver smo" in out
    assert "chosen by --solver auto, regularizer kl (lam=5), C=1" in out
    assert "61 base kernels on 32 training points" in out  # one per feature + SVC's
    header, weights = _weight_lines(out)
    assert len(weights) <= 15
    n_selected = int(re.search(r"\((\d+) of 61 non-zero", header).group(1))
    assert len(weights) == min(n_selected, 15)


def test_fit_json_is_one_document_matching_an_in_process_fit(capsys):
    status, out, _ = _run(capsys, "fit", "--dataset", "liver", *FAST, "--regularizer", "l1",
                          "--json")
    assert status == 0
    doc = json.loads(out)  # the whole of stdout is one JSON document
    assert doc["data"] == "liver-disorders"  # the alias resolved
    assert (doc["n_samples"], doc["n_features"]) == (345, 6)
    assert (doc["solver"], doc["regularizer"], doc["C"]) == ("spg", "l1", 1.0)
    (fold,) = doc["folds"]
    assert 0.0 <= fold["test_accuracy"] <= 1.0 and 0.0 <= fold["train_accuracy"] <= 1.0
    assert (fold["n_train"], fold["n_test"], fold["n_kernels"]) == (276, 69, 7)
    assert fold["duality_gap"][0] >= 0.0 and fold["n_iter"][0] >= 1
    assert len(fold["objective"]) == 1 and fold["wall_seconds"] > 0
    top = fold["top_weights"]
    assert len(top) == min(fold["n_selected"], 15)
    total = sum(item["weight"] for item in top)
    assert total <= 1.0 + 1e-9
    if fold["n_selected"] <= 15:
        assert total == pytest.approx(1.0, abs=1e-6)

    # Same split and settings in-process: same weights and accuracy.
    X, y = load_dataset("liver")
    train, test = _cli_split(y)
    model = _cli_model(regularizer="l1").fit(X[train], y[train])
    assert model.kernel_weights_.sum() == pytest.approx(1.0, abs=1e-8)
    assert fold["test_accuracy"] == pytest.approx(model.score(X[test], y[test]))
    assert fold["n_selected"] == np.count_nonzero(model.kernel_weights_)
    by_name = dict(zip(model.kernel_names_, model.kernel_weights_, strict=True))
    for item in top:
        assert item["weight"] == pytest.approx(by_name[item["kernel"]], rel=1e-9, abs=1e-12)


def test_fit_cv_prints_each_fold_and_the_mean(capsys, files):
    status, out, err = _run(capsys, "fit", "--data", files["csv"], *FAST, "--cv", "3")
    assert status == 0, err
    folds = re.findall(r"^fold (\d): test accuracy (\d\.\d{4}), (\d+) kernels selected", out, re.M)
    assert [int(k) for k, _, _ in folds] == [1, 2, 3]
    accs = np.array([float(a) for _, a, _ in folds])
    match = re.search(
        r"^cross-validation \(3 folds\): test accuracy (\d\.\d{4}) \+- "
        r"(\d\.\d{4})$",
        out,
        re.M,
    )
    assert match, out
    assert float(match.group(1)) == pytest.approx(accs.mean(), abs=2e-4)
    assert float(match.group(2)) == pytest.approx(accs.std(), abs=2e-4)

    status, out, _ = _run(capsys, "fit", "--data", files["csv"], *FAST, "--cv", "3", "--json")
    assert status == 0
    doc = json.loads(out)
    assert len(doc["folds"]) == 3
    assert sum(f["n_test"] for f in doc["folds"]) == 40
    assert all(f["n_train"] + f["n_test"] == 40 for f in doc["folds"])
    assert [f["test_accuracy"] for f in doc["folds"]] == pytest.approx(accs, abs=1e-4)


def test_fit_lp_regularizer(capsys, files):
    status, out, err = _run(
        capsys,
        "fit",
        "--data",
        files["csv"],
        *FAST,
        "--regularizer",
        "lp",
        "-p",
        "2",
        "--lam",
        "0.5",
    )
    assert status == 0, err
    assert "regularizer lp (p=2, lam=0.5)" in out
    _, weights = _weight_lines(out)
    assert weights and all(w >= 0 for w, _ in weights)
    status, out, _ = _run(
        capsys, "fit", "--data", files["csv"], *FAST, "--regularizer", "lp", "-p", "2", "--json"
    )
    doc = json.loads(out)
    assert (doc["regularizer"], doc["p"], doc["lam"]) == ("lp", 2.0, 1.0)
    assert 0.0 <= doc["folds"][0]["test_accuracy"] <= 1.0


def test_fit_pgd_solver(capsys, files):
    status, out, err = _run(capsys, "fit", "--data", files["csv"], *FAST, "--solver", "pgd")
    assert status == 0, err
    assert "solver pgd" in out
    assert "pgd" in err  # progress bar label


def test_fit_libsvm_file(capsys, files):
    status, out, err = _run(capsys, "fit", "--data", files["svm"], *FAST)
    assert status == 0, err
    assert f"data: {files['svm']}: 40 samples, 3 features, classes -1.0: " in out
    assert "4 base kernels on 32 training points" in out  # one per feature + SVC's
    assert _accuracy(out, "test")[1] == 8


@pytest.mark.parametrize("key", ["csv", "csv_ab"])
def test_fit_csv_file_numeric_and_string_labels(capsys, files, key):
    status, out, err = _run(capsys, "fit", "--data", files[key], *FAST, "--json")
    assert status == 0, err
    doc = json.loads(out)
    assert (doc["n_samples"], doc["n_features"]) == (40, 3)
    assert 0.0 <= doc["folds"][0]["test_accuracy"] <= 1.0
    if key == "csv_ab":
        status, out, _ = _run(capsys, "fit", "--data", files[key], *FAST)
        assert re.search(r"classes a: \d+, b: \d+", out)


def test_fit_csv_label_column_option(capsys, files, tmp_path):
    X, y = _toy()
    path = tmp_path / "first.csv"
    with open(path, "w") as handle:
        for row, label in zip(X, np.where(y > 0, "yes", "no"), strict=True):
            handle.write(f"{label}," + ",".join(f"{v:.8f}" for v in row) + "\n")
    status, out, err = _run(capsys, "fit", "--data", path, "--label-column", "0", *FAST)
    assert status == 0, err
    assert "40 samples, 3 features, classes no: " in out


def test_fit_three_classes(capsys, files):
    status, out, err = _run(capsys, "fit", "--data", files["csv3"], *FAST, "--json")
    assert status == 0, err
    fold = json.loads(out)["folds"][0]
    assert len(fold["objective"]) == 3 and len(fold["n_iter"]) == 3  # one-vs-rest
    assert 0.0 <= fold["test_accuracy"] <= 1.0


# ------------------------------------------------------------------- save and predict
def test_save_then_predict_round_trip(capsys, files, saved_ab):
    assert saved_ab.is_file()
    assert saved_ab.read_bytes()[:2] == b"PK"  # an npz (zip) archive, not a pickle
    status, out, err = _run(capsys, "predict", saved_ab, "--data", files["csv_ab"])
    assert status == 0, err
    printed = out.split()
    X, y = load_data_file(files["csv_ab"])
    assert len(printed) == len(y)

    loaded = load_model(saved_ab)
    assert printed == [str(p) for p in loaded.predict(X)]
    # the model the CLI saved is the one fitted on its training split
    train, _ = _cli_split(y)
    model = _cli_model().fit(X[train], y[train])
    assert printed == [str(p) for p in model.predict(X)]
    np.testing.assert_allclose(
        loaded.decision_function(X), model.decision_function(X), rtol=0, atol=1e-10
    )
    accuracy = float(re.search(r"accuracy (\d\.\d+) on 40 points", err).group(1))
    assert accuracy == pytest.approx(np.mean(model.predict(X) == y), abs=1e-4)


def test_save_message_and_libsvm_predict(capsys, files, tmp_path):
    path = tmp_path / "svm-model.npz"
    status, out, err = _run(capsys, "fit", "--data", files["svm"], *FAST, "--save", path)
    assert status == 0, err
    assert f"model saved to {path}" in out
    status, out, err = _run(capsys, "predict", path, "--data", files["svm"])
    assert status == 0, err
    X, _ = load_data_file(files["svm"])
    assert out.split() == [f"{p:g}" for p in load_model(path).predict(X)]
    assert set(out.split()) <= {"-1", "1"}  # the file's labels, not their float form
    assert "accuracy" in err


def test_save_with_cv_refits_on_all_data(capsys, files, tmp_path):
    path = tmp_path / "cv.npz"
    status, _, err = _run(
        capsys, "fit", "--data", files["csv"], *FAST, "--cv", "2", "--save", path, "--json"
    )
    assert status == 0, err
    X, y = load_data_file(files["csv"])
    model = _cli_model().fit(X, y)
    loaded = load_model(path)
    np.testing.assert_allclose(
        loaded.decision_function(X), model.decision_function(X), rtol=0, atol=1e-10
    )


def test_predict_output_writes_one_label_a_line(capsys, files, saved_ab, tmp_path):
    target = tmp_path / "predictions.txt"
    status, out, err = _run(
        capsys, "predict", saved_ab, "--data", files["csv_ab"], "--output", target
    )
    assert status == 0, err
    assert out.strip() == ""  # nothing on stdout when writing a file
    lines = target.read_text().splitlines()
    X, _ = load_data_file(files["csv_ab"])
    assert lines == [str(p) for p in load_model(saved_ab).predict(X)]
    assert len(lines) == 40 and set(lines) <= {"a", "b"}
    assert _no_temp_files(tmp_path) == []


def test_predict_on_unlabelled_rows_of_another_file(capsys, saved_ab, tmp_path):
    # a CSV whose label column holds other labels still predicts; accuracy is skipped
    X, _ = _toy(n=10, seed=5)
    path = _write_csv(tmp_path / "new.csv", X, ["?x"] * 10)
    status, out, err = _run(capsys, "predict", saved_ab, "--data", path)
    assert status == 0, err
    assert len(out.split()) == 10 and set(out.split()) <= {"a", "b"}
    assert err.startswith("no accuracy: the data's labels (?x) are not classes")


@pytest.mark.parametrize("fmt", ["csv", "csv-no-header", "libsvm"])
def test_predict_reads_files_without_labels(capsys, files, saved_ab, tmp_path, fmt):
    # the model's n_features_in_ tells a label column from a feature column
    X, _ = _toy(n=12, seed=6)
    X[:, 2] = np.where(X[:, 2] > 0, X[:, 2], 0.0)  # zeros: LIBSVM omits them
    X[:, 2][-1] = 0.0  # the highest index is absent from some lines
    path = tmp_path / f"new.{fmt}"
    if fmt == "libsvm":
        path.write_text("".join(
            " ".join(f"{j + 1}:{v:.8f}" for j, v in enumerate(row) if v != 0) + "\n" for row in X
        ))
    else:
        with open(path, "w") as handle:
            if fmt == "csv":
                handle.write("f0,f1,f2\n")
            handle.writelines(",".join(f"{v:.8f}" for v in row) + "\n" for row in X)
    status, out, err = _run(capsys, "predict", saved_ab, "--data", path)
    assert status == 0, err
    expected = load_model(saved_ab).predict(np.round(X, 8))
    assert out.split() == [str(p) for p in expected]
    assert err == ""  # no labels: no score


def test_predict_libsvm_with_fewer_features_than_training(capsys, tmp_path):
    X, y = _toy(n=30, seed=7)
    train = _write_libsvm(tmp_path / "train.svm", X, y)
    model_path = tmp_path / "m.npz"
    status, _, err = _run(capsys, "fit", "--data", train, *FAST, "--save", model_path)
    assert status == 0, err
    test = tmp_path / "test.svm"
    test.write_text("+1 1:0.5 2:0.1\n-1 1:-1.5\n")  # highest index 2 < 3 features
    status, out, err = _run(capsys, "predict", model_path, "--data", test)
    assert status == 0, err
    expected = load_model(model_path).predict(np.array([[0.5, 0.1, 0.0], [-1.5, 0.0, 0.0]]))
    assert out.split() == [f"{p:g}" for p in expected]
    note, score = err.splitlines()  # a one-line note that says so, then the score
    assert note == (f"mklearn: note: {test} has 2 features (its highest index), fewer than "
                    "the model's 3: features 3-3 are taken as zero; check that the file was "
                    "written for this model")
    assert score.startswith("accuracy ") and "on 2 points" in score
    with pytest.warns(UserWarning, match="fewer than the model's 3"):
        X_test, y_test = cli_data.load_for_model(test, None, 3)
    assert X_test.tolist() == [[0.5, 0.1, 0.0], [-1.5, 0.0, 0.0]] and y_test.tolist() == [1, -1]
    with warnings.catch_warnings():  # as wide as the model: no note
        warnings.simplefilter("error")
        assert cli_data.load_for_model(test, None, 2)[0].shape == (2, 2)
    with pytest.raises(ValueError, match="more than n_features=1"):
        cli_data.load_for_model(test, None, 1)


def _write_named_csv(path, X, labels, names):
    with open(path, "w") as handle:
        handle.write(",".join([*names, "label"]) + "\n")
        for row, label in zip(X, labels, strict=True):
            handle.write(",".join(f"{v:.8f}" for v in row) + f",{label}\n")
    return path


def test_csv_header_names_are_saved_and_matched_by_name_at_predict(capsys, saved_ab, tmp_path):
    loaded = load_model(saved_ab)
    np.testing.assert_array_equal(loaded.feature_names_in_, ["f0", "f1", "f2"])
    X, labels = _toy(n=40)
    labels = np.where(labels > 0, "a", "b")
    reference = _write_named_csv(tmp_path / "same.csv", X, labels, ["f0", "f1", "f2"])
    status, expected, err = _run(capsys, "predict", saved_ab, "--data", reference)
    assert status == 0 and err.startswith("accuracy "), err
    order = [2, 0, 1]
    shuffled = _write_named_csv(tmp_path / "shuffled.csv", X[:, order], labels,
                                [f"f{j}" for j in order])
    status, out, err_shuffled = _run(capsys, "predict", saved_ab, "--data", shuffled)
    assert status == 0, err_shuffled
    assert out == expected and err_shuffled == err  # same predictions, same accuracy


@pytest.mark.parametrize("names, fragments", [
    (["f0", "f1", "g2"], ["missing 'f2'", "not seen at fit 'g2'"]),
    (["f0", "f1", "f1"], ["missing 'f2'", "repeated 'f1'"]),
], ids=["renamed", "repeated"])
def test_csv_header_that_does_not_match_the_model_exits_2(capsys, saved_ab, tmp_path, names,
                                                          fragments):
    X, labels = _toy(n=10)
    path = _write_named_csv(tmp_path / "other.csv", X, labels, names)
    status, out, err = _run(capsys, "predict", saved_ab, "--data", path)
    assert status == 2 and out == ""
    assert err.startswith(f"mklearn: error: the columns of {path} do not match the 3 feature "
                          "names")
    for fragment in [*fragments, "'f0', 'f1', 'f2' (in any order)"]:
        assert fragment in err, err
    assert err.count("\n") == 1  # one line


def test_model_without_names_predicts_a_csv_with_header_by_position(capsys, files, tmp_path):
    # models fitted on arrays (or files without a header) store no names
    path = tmp_path / "plain.npz"
    status, _, err = _run(capsys, "fit", "--data", files["csv"], *FAST, "--save", path)
    assert status == 0, err
    assert not hasattr(load_model(path), "feature_names_in_")
    X, y = _toy(n=40)
    named = _write_named_csv(tmp_path / "named.csv", X, y, ["z", "y", "x"])
    status, out, err = _run(capsys, "predict", path, "--data", named)
    assert status == 0, err
    assert out.split() == [f"{p:g}" for p in load_model(path).predict(np.round(X, 8))]


# ------------------------------------------------------------------------- bad input
BAD_FIT = {
    "unknown dataset": (["--dataset", "no-such-set"], ["unknown dataset", "liver-disorders"]),
    "missing file": (["--data", "{dir}/missing.csv"], ["not found", "missing.csv"]),
    "csv does not parse": (["--data", "{bad_csv}"], ["line 2", "oops"]),
    "libsvm does not parse": (["--data", "{bad_svm}"], ["LIBSVM", "abc"]),
    "libsvm unsorted indices": (["--data", "{unsorted_svm}"], ["LIBSVM", "sorted"]),
    "single class": (["--data", "{one_class}"], ["single class"]),
    "C zero": (["--data", "{csv}", "-C", "0"], ["'C'", "(0.0, inf)"]),
    "C negative": (["--data", "{csv}", "-C", "-1"], ["'C'", "(0.0, inf)"]),
    "lp with p=1": (
        ["--data", "{csv}", "--regularizer", "lp", "-p", "1"],
        ["'p'", "> 1", "regularizer='l1'"],
    ),
    "lam zero": (["--data", "{csv}", "--regularizer", "lp", "--lam", "0"], ["'lam'"]),
    "test-size 0": (["--data", "{csv}", "--test-size", "0"], ["--test-size", "(0, 1)"]),
    "test-size 1": (["--data", "{csv}", "--test-size", "1"], ["--test-size", "(0, 1)"]),
    "test-size > 1": (["--data", "{csv}", "--test-size", "1.5"], ["--test-size"]),
    "test-size < 0": (["--data", "{csv}", "--test-size", "-0.2"], ["--test-size"]),
    "test-size nan": (["--data", "{csv}", "--test-size", "nan"], ["--test-size"]),
    "test set smaller than the classes": (
        ["--data", "{csv}", "--test-size", "0.01"],
        ["test_size"],
    ),
    "cv 1": (["--data", "{csv}", "--cv", "1"], ["--cv", "2 folds"]),
    "cv 0": (["--data", "{csv}", "--cv", "0"], ["--cv"]),
    "cv more folds than samples": (["--data", "{csv}", "--cv", "41"], ["n_splits=41"]),
    "max-iter 0": (["--data", "{csv}", "--max-iter", "0"], ["'max_iter'"]),
}


@pytest.mark.parametrize("case", sorted(BAD_FIT))
def test_fit_bad_input_exits_2_with_a_message(capsys, files, tmp_path, case):
    argv, fragments = BAD_FIT[case]
    argv = [a.format(**files) for a in argv]
    save = tmp_path / "never.npz"
    status, out, err = _run(capsys, "fit", *argv, "--save", save)
    assert status == 2
    assert err.startswith("mklearn: error: ") or "\nmklearn: error: " in err
    message = err[err.index("mklearn: error: ") :]
    for fragment in fragments:
        assert fragment in message, message
    assert "Traceback" not in err and "Traceback" not in out
    assert not save.exists() and _no_temp_files(tmp_path) == []


BAD_PREDICT = {
    "missing model": ("{dir}/absent.npz", "{csv}", ["absent.npz"]),
    "not a model": ("{not_model}", "{csv}", ["not an mklearn model file"]),
    "missing data": ("MODEL", "{dir}/absent.csv", ["not found"]),
    "data does not parse": ("MODEL", "{bad_csv}", ["line 2"]),
    "wrong number of features": ("MODEL", "{wide}", ["5 columns", "3 features"]),
}


@pytest.mark.parametrize("case", sorted(BAD_PREDICT))
def test_predict_bad_input_exits_2_with_a_message(capsys, files, saved_ab, case):
    model, data, fragments = BAD_PREDICT[case]
    model = str(saved_ab) if model == "MODEL" else model.format(**files)
    status, out, err = _run(capsys, "predict", model, "--data", data.format(**files))
    assert status == 2
    assert err.startswith("mklearn: error: ")
    for fragment in fragments:
        assert fragment in err, err
    assert "Traceback" not in err and out == ""


def test_predict_output_into_missing_directory_exits_2(capsys, files, saved_ab, tmp_path):
    target = tmp_path / "nope" / "p.txt"
    status, _, err = _run(capsys, "predict", saved_ab, "--data", files["csv"], "--output", target)
    assert status == 2 and err.startswith("mklearn: error: ")
    assert not target.parent.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["fit", "--cv", "3", "--test-size", "0.3"],  # mutually exclusive
        ["fit", "--dataset", "liver", "--data", "x.csv"],  # mutually exclusive
        ["fit", "--solver", "nope"],
        ["fit", "--regularizer", "l3"],
        ["fit", "-C", "lots"],
        ["predict", "model.npz"],  # --data is required
        [],
    ],
)
def test_usage_errors_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: mklearn" in err and "Traceback" not in err


def test_datasets_command_lists_bundled_sets(capsys):
    status, out, _ = _run(capsys, "datasets")
    assert status == 0
    assert {"sonar", "liver-disorders", "ionosphere"} <= set(out.split())


def test_fit_regression_dataset_as_classification_is_refused(capsys):
    # abalone is bundled as a regression set (integer ring counts): asking for a classifier
    # must say so instead of fitting a 28-class model. It fails before any fit: cheap.
    status, _, err = _run(capsys, "fit", "--dataset", "abalone", "--task", "classification")
    assert status == 2 and "Traceback" not in err
    assert "regression" in err, err


def test_fit_regression_task_reports_r2(capsys, tmp_path):
    from mklearn.datasets import load_dataset

    X, y = load_dataset("abalone")
    path = tmp_path / "small.csv"
    np.savetxt(path, np.column_stack([X[:150, :3], y[:150]]), delimiter=",")
    status, out, err = _run(
        capsys, "fit", "--data", str(path), "--task", "regression", "-C", "10",
        "--epsilon", "0.5", "--json",
    )
    assert status == 0, err
    report = json.loads(out)
    assert report["task"] == "regression" and report["solver"] == "smo"
    assert report["kernels"] == "svc+feature_rbf"  # MKLRegressor's default family
    fold = report["folds"][0]
    assert fold["test_r2"] > 0.0 and fold["duality_gap"][0] >= 0.0
    assert fold["n_kernels"] == 3 + 1  # SVR's kernel and one RBF per feature


def test_regression_save_and_predict_prints_r2(capsys, tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    data = _write_csv(tmp_path / "reg.csv", X, X[:, 0] ** 2 + 0.5 * X[:, 1], header=False)
    path = tmp_path / "reg.npz"
    status, out, err = _run(
        capsys, "fit", "--data", data, "--task", "regression", *FAST, "--save", path
    )
    assert status == 0, err
    loaded = load_model(path)
    assert type(loaded).__name__ == "MKLRegressor"
    status, out, err = _run(capsys, "predict", path, "--data", data)
    assert status == 0, err
    assert [float(v) for v in out.split()] == loaded.predict(X.round(8)).tolist()
    r2 = loaded.score(X.round(8), X[:, 0] ** 2 + 0.5 * X[:, 1])
    assert err.strip() == f"R^2 {r2:.4f} on 40 points"


def test_predict_output_failure_leaves_no_temp_file(capsys, files, saved_ab, tmp_path, monkeypatch):
    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", str(dst))

    monkeypatch.setattr(os, "replace", refuse)
    status, _, err = _run(
        capsys, "predict", saved_ab, "--data", files["csv_ab"], "--output", tmp_path / "p.txt"
    )
    assert status == 2 and "Permission denied" in err
    assert list(tmp_path.iterdir()) == []


def test_predict_reports_accuracy_for_integer_model_and_libsvm_labels(capsys, tmp_path):
    # A model fitted on a bundled set (int labels -1/1) predicting a LIBSVM file of the same
    # data (labels read as floats -1.0/1.0): the labels are the model's classes, so the
    # accuracy promised by `predict --help` must be printed.
    X, y = load_dataset("liver")
    rows = np.r_[np.flatnonzero(y == 1)[:30], np.flatnonzero(y == -1)[:30]]
    data = _write_libsvm(tmp_path / "liver.svm", X[rows], y[rows])
    model_path = tmp_path / "liver.npz"
    status, _, err = _run(capsys, "fit", "--dataset", "liver", *FAST, "--save", model_path)
    assert status == 0, err
    status, out, err = _run(capsys, "predict", model_path, "--data", data)
    assert status == 0, err
    assert len(out.split()) == 60
    assert re.search(r"accuracy \d\.\d{4} on 60 points", err), err


# ------------------------------------------------------------------ --save failures
def test_failing_save_leaves_no_file(capsys, files, tmp_path, monkeypatch):
    def broken_savez(file, *args, **kwargs):
        file.write(b"PK\x03\x04 partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", broken_savez)
    target = tmp_path / "model.npz"
    status, _, err = _run(capsys, "fit", "--data", files["csv"], *FAST, "--save", target)
    assert status == 2
    assert "No space left on device" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_failing_overwrite_keeps_the_old_model(capsys, files, saved_ab, tmp_path, monkeypatch):
    target = tmp_path / "model.npz"
    target.write_bytes(saved_ab.read_bytes())

    def broken_savez(file, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", broken_savez)
    status, _, _ = _run(capsys, "fit", "--data", files["csv"], *FAST, "--save", target)
    assert status == 2
    assert target.read_bytes() == saved_ab.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]


def test_save_into_missing_directory_exits_2(capsys, files, tmp_path):
    target = tmp_path / "no" / "such" / "dir" / "model.npz"
    status, _, err = _run(capsys, "fit", "--data", files["csv"], *FAST, "--save", target)
    assert status == 2
    assert err.startswith("mklearn: error: ") or "\nmklearn: error: " in err
    assert str(tmp_path / "no") in err
    assert not (tmp_path / "no").exists()


# ---------------------------------------------------------------------- console script
def test_console_script_bad_input_exit_status_and_no_traceback(files):
    script = Path(sys.executable).with_name("mklearn")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "mklearn.cli"]
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    result = subprocess.run(
        [*command, "fit", "--data", str(files["bad_csv"])],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("mklearn: error: ")
    assert "line 2" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_fit_on_low_rank_kernels_reports_the_rank_and_error(capsys):
    status, out, _ = _run(capsys, "fit", "--dataset", "liver", "--kernel-approximation",
                          "nystroem", "--n-components", "40", "--json")
    assert status == 0
    (fold,) = json.loads(out)["folds"]
    assert fold["kernel_approximation"] == "nystroem"
    assert fold["rank"] > 0 and 0.0 <= fold["approximation_error"] < 0.1
    status, out, _ = _run(capsys, "fit", "--dataset", "liver", "--kernel-approximation",
                          "nystroem", "--n-components", "40")
    assert status == 0 and "low-rank kernels (nystroem): rank" in out


def test_fit_refuses_more_landmarks_than_points_in_one_line(capsys):
    status, _, err = _run(capsys, "fit", "--dataset", "liver", "--kernel-approximation",
                          "nystroem", "--n-components", "100000")
    assert status == 2
    assert err.strip().count("\n") == 0 and "above n_samples" in err


# ----------------------------------------------------------------- the plan of a long fit
@pytest.fixture
def pass_takes(monkeypatch):
    """Make a pass over the kernel rows take ``seconds`` (by construction, not by a clock)."""
    import mklearn.estimators.kernel_input as estimators

    def make(seconds):
        monkeypatch.setattr(estimators, "row_pass_seconds",
                            lambda provider: (float(seconds), seconds / provider.n_samples))

    return make


def test_fit_prints_the_plan_before_the_fit(capsys, files):
    status, _, err = _run(capsys, "fit", "--data", files["svm"], *FAST)
    assert status == 0, err
    assert err.index("mklearn: plan: ") < err.index("smo:")  # before the progress bar
    assert "memory about" in err and "a pass over the kernel rows about" in err


def test_fit_planned_over_a_minute_names_the_cheaper_routes(capsys, files, pass_takes):
    pass_takes(300.0)
    status, _, err = _run(capsys, "fit", "--data", files["svm"], *FAST)
    assert status == 0, err
    assert "mklearn: this fit is planned to take 5 min or more; cheaper routes: " in err
    assert "--solver average (fixed weights, one SVM)" in err  # the options, not parameters
    assert "solver='average'" not in err


def test_fit_planned_over_an_hour_is_refused_without_yes(capsys, files, pass_takes):
    pass_takes(3 * 3600.0)
    status, out, err = _run(capsys, "fit", "--data", files["svm"], *FAST)
    assert status == 2
    assert "kernel weights" not in out  # refused before the solver ran
    (line,) = err.strip().splitlines()[-1:]
    assert line.startswith("mklearn: error: this fit is planned to take 3 h or more (memory ")
    assert "a pass over the kernel rows about 3 h" in line
    assert "cheaper routes: --solver average" in line and line.endswith("run it anyway with --yes")
    assert "Traceback" not in err
    status, out, err = _run(capsys, "fit", "--data", files["svm"], *FAST, "--yes")
    assert status == 0, err
    assert "kernel weights" in out
    status, out, err = _run(capsys, "fit", "--data", files["svm"], *FAST, "--json")
    assert status == 2 and out == "" and "run it anyway with --yes" in err


def test_fit_json_keeps_stderr_for_errors(capsys, files):
    status, out, err = _run(capsys, "fit", "--data", files["svm"], *FAST, "--json")
    assert status == 0, err
    assert json.loads(out)["folds"] and err == ""  # no plan, no progress bar


def test_fit_kernel_dtype_float32(capsys, files):
    status, out, err = _run(capsys, "fit", "--data", files["svm"], *FAST, "--kernel-dtype",
                            "float32", "--kernel-storage", "rows", "--json")
    assert status == 0, err
    assert json.loads(out)["folds"][0]["test_accuracy"] > 0.5
