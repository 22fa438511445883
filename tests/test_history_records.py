"""History records: the renamed key "gap" still reads (with a FutureWarning) for one release,
and records serialise as the plain dicts they were (pickle, JSON, model files, the CLI)."""

from __future__ import annotations

import json
import pickle
import warnings

import numpy as np
import pytest

from mklearn import MKLClassifier, load_model, save_model
from mklearn.cli import main
from mklearn.kernels import RBF
from mklearn.solvers.result import HistoryRecord, MKLResult

FAMILY = [RBF(sigma=1.0), RBF(sigma=3.0), RBF(sigma=1.0, features=0)]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return X, np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1, -1)


@pytest.mark.parametrize("solver", ["spg", "smo", "silp", "easymkl", "average"])
def test_the_old_key_warns_and_reads_the_new_one(data, solver):
    X, y = data
    regularizer = "lp" if solver == "smo" else "auto"
    model = MKLClassifier(kernels=FAMILY, solver=solver, regularizer=regularizer).fit(X, y)
    record = model.history_[-1]
    assert isinstance(record, HistoryRecord) and "gap" not in record
    with pytest.warns(FutureWarning, match="'gap' was renamed 'relative_duality_gap'"):
        assert record["gap"] == record["relative_duality_gap"]
    with pytest.warns(FutureWarning, match="record\\['relative_duality_gap'\\]"):
        assert record.get("gap") == record["relative_duality_gap"]


def test_current_keys_and_unknown_keys_behave_as_in_a_dict():
    record = HistoryRecord(iteration=3, relative_duality_gap=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert record["iteration"] == 3 and record.get("missing", 7) == 7
        with pytest.raises(KeyError, match="missing"):
            record["missing"]
    with pytest.warns(FutureWarning):  # the old key, absent under its new name too
        assert HistoryRecord(iteration=0).get("gap", "none") == "none"


def test_a_solver_result_holds_records_even_from_plain_dicts():
    held = [{"iteration": 0, "relative_duality_gap": 0.25}]
    result = MKLResult(kernel_weights=np.ones(1), alpha=np.zeros(2), intercept=0.0,
                       objective=1.0, duality_gap=0.25, n_iter=1, n_svm_solves=1,
                       converged=True, history=held)
    assert result.history is held and isinstance(held[0], HistoryRecord)


def test_records_pickle_and_write_json_as_plain_dicts(data):
    X, y = data
    model = MKLClassifier(kernels=FAMILY).fit(X, y)
    plain = [dict(record) for record in model.history_]
    assert json.dumps(model.history_) == json.dumps(plain)
    again = pickle.loads(pickle.dumps(model))
    assert again.history_ == plain
    with pytest.warns(FutureWarning):
        assert again.history_[0]["gap"] == plain[0]["relative_duality_gap"]


def test_model_files_and_cli_json_are_unchanged(data, tmp_path, capsys):
    X, y = data
    model = MKLClassifier(kernels=FAMILY).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # nothing reads the old key
        save_model(model, tmp_path / "model.npz")
        loaded = load_model(tmp_path / "model.npz")
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
        status = main(["fit", "--dataset", "liver", "-C", "1", "--max-iter", "50", "--json"])
    assert status == 0
    fold = json.loads(capsys.readouterr().out)["folds"][0]
    assert "gap" not in fold and len(fold["relative_duality_gap"]) == 1
