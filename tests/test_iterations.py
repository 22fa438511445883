"""One meaning for max_iter and n_iter_ (outer iterations, each ending in a duality-gap
check), and one relative duality gap: the attribute, the last history record and the value
tol is compared with, for every solver of the solver table, on exact and low-rank kernels."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mklearn import MKLClassifier, MKLRegressor
from mklearn.cli import main
from mklearn.kernels import RBF
from mklearn.solvers import SOLVERS
from mklearn.solvers.mwu import LOOSE_GAP
from mklearn.solvers.result import relative_gap

FAMILY = [RBF(sigma=1.0), RBF(sigma=3.0), RBF(sigma=1.0, features=0)]
CASES = [(name, "exact") for name in SOLVERS] + [
    (name, "nystroem") for name, info in SOLVERS.items() if info.feature_function is not None]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(70, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.4 * rng.normal(size=70) > 0, 1, -1)
    return X, y


def _fit(estimator, X, y):
    """The fitted estimator and the messages of its ConvergenceWarnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X, y)
    return estimator, [str(w.message) for w in caught
                       if issubclass(w.category, ConvergenceWarning)]


def _model(estimator_class, name, approximation, **params):
    low_rank = {"kernel_approximation": "nystroem", "n_components": 8, "random_state": 0,
                "kernels": "svc+feature_rbf"}
    kernels = low_rank if approximation == "nystroem" else {"kernels": FAMILY}
    return estimator_class(solver=name, **kernels, **params)


def _check_one_gap(model):
    """relative_duality_gap_ is the last record's, and is duality_gap_ over |U|, U the upper
    bound: objective_ (whichever bound or value between them a solver reports) lies in
    [U - duality_gap_, U]."""
    relative, gap = model.relative_duality_gap_, model.duality_gap_
    last = model.history_[-1]["relative_duality_gap"]
    assert relative == pytest.approx(last, rel=1e-12, abs=1e-15)
    assert np.isfinite(relative) and gap >= 0.0
    if relative == 0.0:
        assert gap <= 1e-12 * max(abs(model.objective_), 1.0)
        return
    upper = gap / relative  # |U|; the objectives here are positive
    assert relative == pytest.approx(relative_gap(upper, upper - gap), rel=1e-12)
    if np.isfinite(model.objective_):  # MWUMKL past 3000 points: not evaluated
        slack = 1e-9 * upper
        assert upper - gap - slack <= model.objective_ <= upper + slack


@pytest.mark.parametrize("name, approximation", CASES)
def test_max_iter_caps_outer_iterations_and_warns_with_the_gap(data, name, approximation):
    X, y = data
    tol = 1e-14
    model, messages = _fit(_model(MKLClassifier, name, approximation, max_iter=1, tol=tol),
                           X, y)
    assert model.n_iter_ <= 1 and len(model.history_) <= 2  # SPG-like: the start, one step
    _check_one_gap(model)
    if model.relative_duality_gap_ > tol:
        assert len(messages) == 1, messages
        assert f"relative duality gap {model.relative_duality_gap_:.2e}" in messages[0]
        assert f"stopped after {model.n_iter_} {SOLVERS[name].n_iter_unit}" in messages[0]
        if model.n_smo_steps_:
            assert f"({model.n_smo_steps_} SMO steps)" in messages[0]
    else:
        assert not messages


@pytest.mark.parametrize("name, approximation", CASES)
def test_one_gap_where_the_fit_converges(data, name, approximation):
    X, y = data
    model, messages = _fit(_model(MKLClassifier, name, approximation), X, y)
    _check_one_gap(model)
    assert 1 <= model.n_iter_ <= model.max_iter
    last = model.history_[-1]
    if "iterations_planned" in last:  # MWUMKL: epsilon sets its run, tol does not stop it
        assert last["iteration"] == last["iterations_planned"]
        # it warns only when it ends far from the optimum
        assert (model.relative_duality_gap_ <= LOOSE_GAP) == (not messages), messages
    else:  # the number tol stopped on is the attribute
        assert (model.relative_duality_gap_ <= model.tol) == (not messages), messages


def test_smo_counts_gap_checks_and_its_smo_steps_apart(data):
    X, y = data
    model, messages = _fit(MKLClassifier(kernels=FAMILY, solver="smo", max_iter=2, tol=1e-10),
                           X, y)
    assert model.n_iter_ == len(model.history_) <= 2
    assert model.n_smo_steps_ == model.history_[-1]["n_steps"] > model.n_iter_
    assert len(messages) == 1 and "increase max_iter" in messages[0]


@pytest.mark.parametrize("name", ["smo", "spg", "average"])
def test_regression_counts_outer_iterations_too(data, name):
    X, y = data
    target = X[:, 0] + 0.1 * y
    model, messages = _fit(_model(MKLRegressor, name, "exact", max_iter=1, tol=1e-14), X,
                           target)
    assert model.n_iter_ == 1
    _check_one_gap(model)
    assert len(messages) == 1
    assert f"relative duality gap {model.relative_duality_gap_:.2e}" in messages[0]


def test_the_cli_reports_outer_iterations_and_smo_steps(capsys):
    status = main(["fit", "--dataset", "sonar", "--n-samples", "60", "--solver", "smo",
                   "--max-iter", "50", "--json"])
    assert status == 0
    (fold,) = json.loads(capsys.readouterr().out)["folds"]
    assert fold["n_iter_unit"] == "gap checks"
    assert 1 <= fold["n_iter"][0] <= 50 < fold["n_smo_steps"][0]
