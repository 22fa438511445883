"""`mklearn fit --solver silp` for classification and regression, and its bad input."""

import json

import numpy as np
import pytest

from mklearn.cli import main


def _run(capsys, *argv):
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _csv(tmp_path, regression=False, n=60):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    y = np.sin(2 * X[:, 0]) + X[:, 1] if regression else np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    path = tmp_path / "toy.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",")
    return path


def test_fit_silp_classification_wrapper_and_interleaved(capsys, tmp_path):
    path = _csv(tmp_path)
    reports = []
    for extra in ([], ["--interleaved"]):
        status, out, err = _run(capsys, "fit", "--data", path, "--solver", "silp", "-C", "10",
                                "--json", *extra)
        assert status == 0, err
        reports.append(json.loads(out))
    for report in reports:
        assert report["solver"] == "silp"
    wrapper, interleaved = (r["folds"][0]["objective"][0] for r in reports)
    assert interleaved == pytest.approx(wrapper, rel=1e-2)  # both stop at eps_MKL = 1e-3


def test_fit_silp_regression(capsys, tmp_path):
    path = _csv(tmp_path, regression=True)
    status, out, err = _run(capsys, "fit", "--data", path, "--task", "regression", "--solver",
                            "silp", "-C", "1000", "--json")
    assert status == 0, err
    report = json.loads(out)
    assert report["solver"] == "silp" and report["regularizer"] == "l1"
    assert report["folds"][0]["test_r2"] > 0.5


def test_interleaved_needs_silp_and_regression_needs_l1(capsys, tmp_path):
    status, _, err = _run(capsys, "fit", "--data", _csv(tmp_path), "--interleaved")
    assert status == 2 and "--solver silp" in err and "Traceback" not in err
    path = _csv(tmp_path, regression=True)
    status, _, err = _run(capsys, "fit", "--data", path, "--task", "regression", "--solver",
                          "silp", "--regularizer", "lp")
    assert status == 2 and "'silp' does not support regularizer 'lp'" in err
