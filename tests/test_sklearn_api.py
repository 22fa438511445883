"""What a scikit-learn user expects: solver="auto", one duality gap, SVC's class and sample
weights, probabilities and n_jobs, kernel names from column names."""

from __future__ import annotations

import re

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mklearn import MKLClassifier, MKLRegressor, OneClassMKL
from mklearn.datasets import load_dataset
from mklearn.formulation.regularizers import L1Penalty, LpNorm
from mklearn.kernels import RBF, KernelBank, Polynomial
from mklearn.svm import smo

SMALL_FAMILY = [RBF(sigma=1.0), RBF(sigma=3.0), Polynomial(degree=2), RBF(sigma=1.0, features=0)]


@pytest.fixture(scope="module")
def liver():
    X, y = load_dataset("liver-disorders")
    X, y = X[:80], y[:80]
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def one_kernel(liver):
    """One RBF kernel (unit diagonal) and labels: what SVC(kernel="precomputed") also takes."""
    X, y = liver
    K = KernelBank([RBF(sigma=2.0)], normalize=None).fit_transform(X)[:, :, 0]
    return np.ascontiguousarray(K), y


# ------------------------------------------------------------------ solver="auto"
@pytest.mark.parametrize(
    "estimator, expected",
    [
        (MKLClassifier(regularizer="l1"), "spg"),
        (MKLClassifier(regularizer="lp"), "smo"),
        (MKLClassifier(regularizer="kl"), "smo"),
        (MKLClassifier(regularizer="group"), "mirror"),
        (MKLClassifier(regularizer=LpNorm(1.5, 2.0)), "smo"),
        (MKLClassifier(combination="product", kernels="features"), "spg"),
        (MKLRegressor(regularizer="l1"), "spg"),
        (MKLRegressor(regularizer="lp"), "smo"),
        (MKLRegressor(regularizer="kl"), "smo"),
        (OneClassMKL(), "silp"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_auto_picks_a_solver_for_every_regularizer(liver, estimator, expected):
    X, y = liver
    if estimator.kernels == "simple_mkl":
        estimator.set_params(kernels=SMALL_FAMILY)
    target = X[:, 0] if isinstance(estimator, MKLRegressor) else y
    estimator.fit(X, target) if not isinstance(estimator, OneClassMKL) else estimator.fit(X)
    assert estimator.solver == "auto" and estimator.solver_ == expected
    assert np.all(np.isfinite(estimator.predict(X)))


# ------------------------------------------------------------- regularizer="auto"
@pytest.mark.parametrize(
    "params, solver, regularizer",
    [
        ({}, "smo", "kl"),
        ({"solver": "smo"}, "smo", "kl"),
        ({"solver": "spg"}, "spg", "l1"),
        ({"solver": "pgd", "max_iter": 20}, "pgd", "l1"),
        ({"solver": "mirror"}, "mirror", "l1"),
        ({"solver": "mwu"}, "mwu", "l1"),
        ({"solver": "silp"}, "silp", "l1"),
        ({"kernels": RBF(sigma=2.0)}, "spg", "l1"),  # one kernel: weight 1, the SVC
        ({"kernels": "features", "combination": "product"}, "spg", "l1"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_default_regularizer_suits_every_solver(liver, params, solver, regularizer):
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X, y = liver
    model = MKLClassifier(**{"kernels": SMALL_FAMILY, **params})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    assert model.regularizer == "auto"
    assert (model.solver_, model.regularizer_) == (solver, regularizer)
    assert np.all(np.isfinite(model.decision_function(X)))
    if solver != "mwu":  # MWUMKL's fixed epsilon budget needs its paper's C (docs/mwumkl.md)
        assert model.score(X, y) > 0.6


def test_default_with_one_precomputed_kernel_is_the_svc(one_kernel):
    K, y = one_kernel
    model = MKLClassifier(kernels="precomputed", tol=1e-8).fit(K, y)
    assert model.regularizer_ == "l1" and model.kernel_weights_.tolist() == [1.0]
    svc = SVC(kernel="precomputed", tol=1e-10).fit(K, y)
    np.testing.assert_allclose(model.decision_function(K), svc.decision_function(K), atol=1e-4)


def test_default_kl_weights_keep_every_kernel(liver):
    X, y = liver
    model = MKLClassifier(kernels=SMALL_FAMILY).fit(X, y)
    assert model.regularizer_ == "kl" and np.all(model.kernel_weights_ > 0)
    l1 = MKLClassifier(kernels=SMALL_FAMILY, regularizer="l1").fit(X, y)
    assert np.count_nonzero(l1.kernel_weights_) < len(SMALL_FAMILY)  # l1 selects


def test_auto_choice_is_printed_when_verbose(liver, capsys):
    X, y = liver
    MKLClassifier(kernels=SMALL_FAMILY, regularizer="kl", verbose=1).fit(X, y)
    assert "solver='auto' chose 'smo'" in capsys.readouterr().out


def test_an_explicit_solver_that_cannot_take_the_regularizer_names_auto(liver):
    X, y = liver
    with pytest.raises(ValueError, match="'spg' does not support regularizer 'kl'.*'auto'"):
        MKLClassifier(kernels=SMALL_FAMILY, solver="spg", regularizer="kl").fit(X, y)


# --------------------------------------------------------------- one duality gap
@pytest.mark.parametrize("solver", ["spg", "pgd", "smo", "mirror", "silp", "mwu", "average",
                                    "alignf", "pwmk"])
def test_one_relative_duality_gap_everywhere(liver, solver):
    X, y = liver
    regularizer = "lp" if solver == "smo" else "l1"
    model = MKLClassifier(kernels=SMALL_FAMILY, solver=solver, regularizer=regularizer,
                          C=1.0, tol=1e-3).fit(X, y)
    assert model.solver_ == solver
    assert all("relative_duality_gap" in record for record in model.history_)
    assert "gap" not in model.history_[-1]
    if solver == "silp":
        assert "eps_mkl" in model.history_[-1]
    if solver == "mwu":
        assert {"lower", "upper", "duality_gap"} <= set(model.history_[-1])
        return  # a fixed number of iterations: no stopping rule on the gap
    assert 0.0 <= model.relative_duality_gap_ <= 1e-3
    assert model.duality_gap_ >= 0.0
    # the absolute gap relative to the upper bound (the objective, to within the gap)
    assert model.relative_duality_gap_ == pytest.approx(
        model.duality_gap_ / abs(model.objective_), rel=2e-3, abs=1e-12)


def _shares(err):
    """The percentages a progress bar showed, in order."""
    return [int(share) for share in re.findall(r"(\d+)/100%", err)]


@pytest.mark.parametrize("solver", ["smo", "spg", "mwu"])
def test_the_progress_bar_has_a_total_and_an_eta(liver, capsys, solver):
    X, y = liver
    regularizer = "lp" if solver == "smo" else "l1"
    MKLClassifier(kernels=SMALL_FAMILY, solver=solver, regularizer=regularizer, max_iter=500,
                  verbose=1).fit(X, y)
    err = capsys.readouterr().err
    shares = _shares(err)
    assert shares and shares[-1] == 100 and shares == sorted(shares)  # never moves back
    assert "relative_duality_gap=" in err and "<" in err  # tqdm's elapsed<remaining
    assert "/500" not in err  # the total is the share done, not max_iter


def test_a_long_smo_solve_beats_between_gap_checks(liver, capsys, monkeypatch):
    X, y = liver
    quiet = MKLClassifier(kernels=SMALL_FAMILY, regularizer="lp").fit(X, y)
    monkeypatch.setattr(smo, "HEARTBEAT_SECONDS", 0.0)
    monkeypatch.setattr(smo, "HEARTBEAT_STEPS", 8)
    loud = MKLClassifier(kernels=SMALL_FAMILY, regularizer="lp", verbose=1).fit(X, y)
    steps = [int(n) for n in re.findall(r"smo_steps=(\d+)", capsys.readouterr().err)]
    assert len(steps) > len(loud.history_) + 2  # beats between the gap checks
    assert steps == sorted(steps)
    np.testing.assert_array_equal(loud.kernel_weights_, quiet.kernel_weights_)  # same path


@pytest.mark.parametrize("solver", ["spg", "silp", "mirror"])
def test_every_svm_solve_beats_in_the_progress_bar(liver, capsys, monkeypatch, solver):
    X, y = liver
    quiet = MKLClassifier(kernels=SMALL_FAMILY, solver=solver, regularizer="l1").fit(X, y)
    monkeypatch.setattr(smo, "HEARTBEAT_SECONDS", 0.0)
    monkeypatch.setattr(smo, "HEARTBEAT_STEPS", 8)
    loud = MKLClassifier(kernels=SMALL_FAMILY, solver=solver, regularizer="l1",
                         verbose=1).fit(X, y)
    beats = re.findall(r"svm_smo_steps=(\d+)", capsys.readouterr().err)
    assert len(beats) > 2
    np.testing.assert_array_equal(loud.kernel_weights_, quiet.kernel_weights_)  # same path
    assert smo._SVM_HEARTBEAT.get() is None  # the context ends with the fit


# ------------------------------------------------------ class and sample weights
def _svc_reference(K, y, weights, C, class_weight=None, sample_weight=None):
    """SVC on the learned kernel ``d K`` with the same weights."""
    svc = SVC(kernel="precomputed", C=C, class_weight=class_weight, tol=1e-10)
    return svc.fit(weights[0] * K, y, sample_weight=sample_weight)


@pytest.mark.parametrize("solver", ["spg", "smo", "mirror", "silp", "average", "alignf"])
@pytest.mark.parametrize("weighting", ["class_weight", "balanced", "sample_weight"])
def test_weights_match_svc_with_one_kernel(one_kernel, solver, weighting):
    K, y = one_kernel
    C = 2.0
    class_weight, sample_weight = None, None
    if weighting == "class_weight":
        class_weight = {-1: 3.0, 1: 0.5}
    elif weighting == "balanced":
        class_weight = "balanced"
    else:
        sample_weight = np.random.default_rng(0).uniform(0.0, 2.0, size=len(y))
    regularizer = "lp" if solver == "smo" else "l1"
    model = MKLClassifier(kernels="precomputed", solver=solver, regularizer=regularizer, C=C,
                          tol=1e-9, max_iter=5000, class_weight=class_weight)
    model.fit(K, y, sample_weight=sample_weight)
    svc = _svc_reference(K, y, model.kernel_weights_[None], C, class_weight, sample_weight)
    np.testing.assert_allclose(
        model.decision_function(K[:, :, None]), svc.decision_function(model.kernel_weights_[0] * K),
        atol=1e-4)
    dual = np.zeros(len(y))
    dual[model.support_] = model.dual_coef_[0]
    reference = np.zeros(len(y))
    reference[svc.support_] = svc.dual_coef_[0]
    np.testing.assert_allclose(dual, reference, atol=1e-4 * C)


def test_sample_weight_is_repetition(one_kernel):
    K, y = one_kernel
    repeat = np.arange(len(y)) % 3 + 1  # weights 1, 2, 3
    index = np.repeat(np.arange(len(y)), repeat)
    common = dict(kernels="precomputed", C=1.0, tol=1e-9, max_iter=5000)
    weighted = MKLClassifier(**common).fit(K, y, sample_weight=repeat)
    repeated = MKLClassifier(**common).fit(K[np.ix_(index, index)], y[index])
    np.testing.assert_allclose(weighted.decision_function(K),
                               repeated.decision_function(K[:, index]), atol=1e-5)


def test_regressor_sample_weight_matches_svr(one_kernel):
    from sklearn.svm import SVR

    K, _ = one_kernel
    target = np.sin(np.arange(len(K)) / 7.0)
    weights = np.random.default_rng(1).uniform(0.2, 2.0, size=len(K))
    model = MKLRegressor(kernels="precomputed", regularizer="l1", C=3.0, epsilon=0.05,
                         tol=1e-9, max_iter=5000).fit(K, target, sample_weight=weights)
    svr = SVR(kernel="precomputed", C=3.0, epsilon=0.05, tol=1e-10).fit(
        K, target, sample_weight=weights)
    np.testing.assert_allclose(model.predict(K), svr.predict(K), atol=1e-4)


def test_bad_weights_are_named(liver):
    X, y = liver
    model = MKLClassifier(kernels=SMALL_FAMILY, class_weight={-1: 1.0, 7: 2.0})
    with pytest.raises(ValueError, match=r"class_weight names class\(es\) \[7\]"):
        model.fit(X, y)
    with pytest.raises(ValueError, match="sample_weight"):
        MKLClassifier(kernels=SMALL_FAMILY).fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="'mwu' takes one C for all samples"):
        MKLClassifier(kernels=SMALL_FAMILY, solver="mwu", class_weight="balanced").fit(X, y)


def test_continuous_labels_point_to_the_regressor(liver):
    X, _ = liver
    with pytest.raises(ValueError, match="MKLRegressor .*--task regression"):
        MKLClassifier(kernels=SMALL_FAMILY).fit(X, X[:, 0])


# ------------------------------------------------------------------- probability
def test_probability_matches_svc_platt_scaling(one_kernel):
    K, y = one_kernel
    model = MKLClassifier(kernels="precomputed", C=1.0, tol=1e-8, probability=True,
                          random_state=0).fit(K, y)
    proba = model.predict_proba(K)
    assert proba.shape == (len(y), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(model.predict_log_proba(K), np.log(proba))
    # the same as scikit-learn's sigmoid calibration of the SVC on the same folds
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    calibrated = CalibratedClassifierCV(SVC(kernel="precomputed", C=1.0, tol=1e-10),
                                        method="sigmoid", cv=folds, ensemble=False)
    np.testing.assert_allclose(proba, calibrated.fit(K, y).predict_proba(K), atol=1e-3)
    # and close to SVC(probability=True), whose libsvm folds differ
    svc = SVC(kernel="precomputed", C=1.0, probability=True, random_state=0).fit(K, y)
    assert np.mean(np.abs(proba - svc.predict_proba(K))) < 0.1
    assert model.probA_[0] < 0  # P(classes_[1]) grows with the decision value


def test_probability_multiclass_and_parallel_classes():
    X, y = _iris()
    common = dict(kernels=SMALL_FAMILY, C=1.0, probability=True, random_state=0)
    model = MKLClassifier(**common).fit(X, y)
    proba = model.predict_proba(X)
    assert proba.shape == (len(y), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(model.classes_[proba.argmax(axis=1)] == y) > 0.9
    parallel = MKLClassifier(**common, n_jobs=2).fit(X, y)
    np.testing.assert_allclose(parallel.kernel_weights_, model.kernel_weights_)
    np.testing.assert_allclose(parallel.predict_proba(X), proba)


def test_probability_with_a_class_weight_dict_of_string_labels():
    # the internal cross-validation sees y encoded as 0, 1, 2: the dict's labels follow
    X, y = _iris()
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    weights = {"virginica": 3.0, "setosa": 0.5}
    common = dict(kernels=SMALL_FAMILY, C=1.0, probability=True, random_state=0)
    model = MKLClassifier(**common, class_weight=weights).fit(X, names)
    coded = MKLClassifier(**common, class_weight={2: 3.0, 0: 0.5}).fit(X, y)
    np.testing.assert_allclose(model.predict_proba(X), coded.predict_proba(X))
    assert not np.allclose(model.probA_, MKLClassifier(**common).fit(X, y).probA_)


def _iris():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    return X[::2], y[::2]


def test_no_predict_proba_without_probability(liver):
    X, y = liver
    model = MKLClassifier(kernels=SMALL_FAMILY).fit(X, y)
    assert not hasattr(model, "predict_proba")
    with pytest.raises(AttributeError) as error:
        model.predict_proba(X)
    assert "fit with probability=True" in str(error.value.__cause__)


# ------------------------------------------------------------------------ names
def test_kernel_names_use_column_names():
    import pandas as pd
    X, y = _iris()
    frame = pd.DataFrame(X, columns=["sepal length", "sepal width", "petal length",
                                     "petal width"])
    model = MKLClassifier(C=1.0).fit(frame, y)
    assert list(model.feature_names_in_) == list(frame.columns)
    assert any(name.endswith(" on petal width") for name in model.kernel_names_)
    assert not any("x[" in name for name in model.kernel_names_)


def test_spec_names_with_feature_names():
    names = ["age", "income", "height"]
    assert RBF(sigma=2.0, features=1).name_with(names) == "rbf(sigma=2) on income"
    assert RBF(sigma=2.0, features=[0, 2]).name_with(names) == "rbf(sigma=2) on [age, height]"
    assert RBF(sigma=2.0).name_with(names) == "rbf(sigma=2) on all"


# ------------------------------------------------------------- plug-in regularisers
def test_silp_refuses_the_orthant_l1_penalty(one_kernel):
    from mklearn.formulation.combinations import SumOfKernels
    from mklearn.solvers import silp_mkl

    K, y = one_kernel
    y_pm = np.where(y == y.max(), 1.0, -1.0)
    with pytest.raises(ValueError, match="l1 \\(simplex\\) MKL only"):
        silp_mkl(SumOfKernels(K[:, :, None]), y_pm, 1.0, L1Penalty(0.5))


def test_l1_penalty_takes_no_simplex_newton_steps():
    from mklearn.formulation.combinations import SumOfKernels
    from mklearn.formulation.regularizers import L1Simplex
    from mklearn.solvers.spg_evaluator import combination_features

    sums = SumOfKernels(np.eye(3)[:, :, None].repeat(2, axis=2))
    assert combination_features(sums, L1Simplex()).simplex_newton
    penalty = combination_features(sums, L1Penalty(0.5))
    assert not penalty.simplex_newton  # the orthant, not the simplex
    assert not penalty.orthant_newton  # a sum has no derivative_times


def test_a_fit_on_rows_says_what_a_pass_over_them_costs(liver, capsys):
    X, y = liver
    MKLClassifier(kernels=SMALL_FAMILY, regularizer="lp", kernel_storage="rows",
                  verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert re.search(r"a pass over the kernel rows about [\d.e-]+ s \(one row of the \d+ "
                     r"kernels takes [\d.e-]+ ms; the cache holds about \d+ of the \d+ rows\)",
                     err)
