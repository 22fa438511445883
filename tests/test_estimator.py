"""MKLClassifier: the scikit-learn contract, model selection, fitted attributes, bad input."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn_checks import expected_failed_checks

from mklearn import MKLClassifier, MKLRegressor
from mklearn.datasets import load_dataset
from mklearn.kernels import RBF, KernelBank, Polynomial, simple_mkl_kernels

SMALL_FAMILY = [RBF(sigma=1.0), RBF(sigma=3.0), Polynomial(degree=2), RBF(sigma=1.0, features=0)]


@parametrize_with_checks(
    [
        MKLClassifier(kernels=SMALL_FAMILY, C=100.0, max_iter=50, tol=1e-3),
        MKLClassifier(kernels=SMALL_FAMILY, regularizer="lp", p=2.0, C=100.0, max_iter=50),
        MKLClassifier(kernels=SMALL_FAMILY, solver="smo", regularizer="lp", p=1.5, C=100.0),
        MKLClassifier(kernels=SMALL_FAMILY, solver="smo", regularizer="kl", C=10.0),
        MKLRegressor(kernels=SMALL_FAMILY, p=1.5, C=10.0),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_contract(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def liver_stack():
    X, y = load_dataset("liver-disorders")
    bank = KernelBank(
        [RBF(sigma=s) for s in (0.5, 1, 2, 5)] + [Polynomial(degree=2)], standardize=True
    )
    return bank.fit_transform(X[:150]), y[:150]


@pytest.mark.parametrize("regularizer", ["l1", "auto"])  # auto: KL weights by SMO-MKL
def test_kernel_weights_reproduce_the_model_with_svc(liver_stack, regularizer):
    stack, y = liver_stack
    model = MKLClassifier(kernels="precomputed", regularizer=regularizer, C=10.0,
                          tol=1e-6).fit(stack, y)
    assert model.kernel_weights_.shape == (stack.shape[2],)
    K = stack @ model.kernel_weights_
    svc = SVC(kernel="precomputed", C=10.0, tol=1e-8).fit(K, y)
    ours = model.decision_function(stack)
    np.testing.assert_allclose(ours, svc.decision_function(K), rtol=1e-3, atol=1e-3)
    assert np.mean(model.predict(stack) == svc.predict(K)) > 0.99
    # points on the margin may fall either side of the two solvers' tolerances
    assert len(set(model.support_) ^ set(svc.support_)) <= 0.02 * len(y)


def test_fitted_attributes_binary(liver_stack):
    stack, y = liver_stack
    model = MKLClassifier(kernels="precomputed", C=1.0).fit(stack, y)
    n_sv = model.support_.size
    assert model.dual_coef_.shape == (1, n_sv)
    assert model.intercept_.shape == (1,)
    assert isinstance(model.objective_, float) and isinstance(model.n_iter_, int)
    assert model.duality_gap_ >= 0
    assert model.kernel_names_ == [f"kernel[{k}]" for k in range(stack.shape[2])]
    np.testing.assert_array_equal(model.classes_, [-1, 1])
    assert np.all(np.abs(model.dual_coef_) <= 1.0 + 1e-12)


def test_multiclass_one_vs_rest_shapes():
    X, y = load_dataset("sonar")
    y3 = np.where(X[:, 10] > np.median(X[:, 10]), 2, y)  # a third class
    X = X[:, :5]
    model = MKLClassifier(kernels="simple_mkl", regularizer="l1", C=100.0).fit(X[:120], y3[:120])
    n_classes, m = 3, 13 * 6
    assert model.kernel_weights_.shape == (n_classes, m)
    assert model.dual_coef_.shape == (n_classes, model.support_.size)
    assert model.intercept_.shape == (n_classes,)
    assert model.objective_.shape == model.n_iter_.shape == (n_classes,)
    np.testing.assert_allclose(model.kernel_weights_.sum(axis=1), 1.0)
    assert model.decision_function(X[120:]).shape == (88, n_classes)
    assert set(model.predict(X[120:])) <= {-1, 1, 2}
    assert model.score(X[:120], y3[:120]) > 0.8


def test_grid_search_over_C_on_a_precomputed_stack(liver_stack):
    stack, y = liver_stack
    search = GridSearchCV(MKLClassifier(kernels="precomputed"), {"C": [0.1, 10.0]}, cv=3)
    search.fit(stack, y)
    assert search.best_params_["C"] in (0.1, 10.0)
    assert search.best_estimator_.kernel_weights_.shape == (stack.shape[2],)
    scores = cross_val_score(MKLClassifier(kernels="precomputed", regularizer="l1", C=10.0),
                             stack, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.5)


def test_pipeline_with_a_kernel_recipe():
    X, y = load_dataset("liver-disorders")
    pipe = make_pipeline(MinMaxScaler(), MKLClassifier(kernels=simple_mkl_kernels(), C=10.0))
    pipe.fit(X[:200], y[:200])
    model = pipe[-1]
    assert len(model.kernel_names_) == 13 * 7
    assert pipe.score(X[200:], y[200:]) > 0.55
    assert "rbf(sigma=0.5) on all" in model.kernel_names_


def test_solver_options_switch_off_the_spg_components(liver_stack):
    stack, y = liver_stack
    options = {
        "spectral": False,
        "nonmonotone": False,
        "precision_tuning": False,
        "second_order": False,
        "cutting_planes": False,  # a bound, not a step: it ends the run sooner
    }
    pgd = MKLClassifier(
        kernels="precomputed", solver="spg", solver_options=options, C=10.0, tol=1e-5
    ).fit(stack, y)
    spg = MKLClassifier(kernels="precomputed", solver="spg", C=10.0, tol=1e-5).fit(stack, y)
    assert pgd.objective_ == pytest.approx(spg.objective_, rel=1e-4)
    named = MKLClassifier(kernels="precomputed", solver="pgd", C=10.0, tol=1e-5).fit(stack, y)
    assert named.n_svm_solves_ == pgd.n_svm_solves_


BAD_PARAMS = [
    ({"C": 0.0}, "'C' parameter"),
    ({"C": -1.0}, "'C' parameter"),
    ({"regularizer": "lp", "p": 1.0}, "'p' parameter must be > 1"),
    ({"regularizer": "lp", "p": 0.5}, "'p' parameter must be > 1"),
    ({"solver": "simplemkl"}, "'solver' parameter"),
    ({"regularizer": "l2"}, "'regularizer' parameter"),
    ({"kernels": "gaussian"}, "simple_mkl"),
]


@pytest.mark.parametrize("params, message", BAD_PARAMS)
def test_bad_parameters_are_named(params, message):
    X, y = load_dataset("liver-disorders")
    with pytest.raises(ValueError, match=message):
        MKLClassifier(**params).fit(X[:40], y[:40])


def test_bad_input_is_named(liver_stack):
    stack, y = liver_stack
    with pytest.raises(ValueError, match="one class only"):
        MKLClassifier(kernels="precomputed").fit(stack, np.ones_like(y))
    with pytest.raises(ValueError, match="square"):
        MKLClassifier(kernels="precomputed").fit(stack[:, :100], y)
    bad = stack.copy()
    bad[0, 1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MKLClassifier(kernels="precomputed").fit(bad, y)
    asym = stack.copy()
    asym[0, 1, 2] += 1.0
    with pytest.raises(ValueError, match="not symmetric"):
        MKLClassifier(kernels="precomputed").fit(asym, y)
    indefinite = stack.copy()
    indefinite[:, :, 1] = -np.eye(len(y))
    with pytest.raises(ValueError, match="positive semi-definite"):
        MKLClassifier(kernels="precomputed").fit(indefinite, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        MKLClassifier(kernels="precomputed").fit(stack, y[:-1])
    model = MKLClassifier(kernels="precomputed").fit(stack, y)
    with pytest.raises(ValueError, match=r"\(n_test, 150, 5\)"):
        model.predict(stack[:, :, :3])
    with pytest.raises(ValueError, match=r"\(n_test, 150, 5\)"):
        model.predict(stack[:, :120])
    X, y_all = load_dataset("liver-disorders")
    with pytest.raises(ValueError, match="[Ii]nf"):
        MKLClassifier(kernels=SMALL_FAMILY).fit(np.where(X == X[0, 0], np.inf, X), y_all)
    fitted = MKLClassifier(kernels=SMALL_FAMILY).fit(X[:60], y_all[:60])
    with pytest.raises(ValueError, match="features"):
        fitted.predict(X[:5, :4])
    with pytest.raises(ValueError, match="Unknown label type"):
        MKLClassifier(kernels=SMALL_FAMILY).fit(X[:60], np.linspace(0, 1, 60))


def test_convergence_warning_says_what_to_do(liver_stack):
    from sklearn.exceptions import ConvergenceWarning

    stack, y = liver_stack
    with pytest.warns(ConvergenceWarning, match="increase max_iter"):
        MKLClassifier(kernels="precomputed", C=100.0, max_iter=2).fit(stack, y)


def test_float32_kernels_give_the_float64_solution():
    X, y = load_dataset("liver-disorders")
    fits = [
        MKLClassifier(kernels="simple_mkl", kernel_dtype=dtype, C=100.0, tol=1e-5).fit(
            X[:150], y[:150]
        )
        for dtype in ("float64", "float32")
    ]
    assert fits[1].objective_ == pytest.approx(fits[0].objective_, rel=1e-4)
    np.testing.assert_allclose(
        fits[1].decision_function(X[150:200]),
        fits[0].decision_function(X[150:200]),
        rtol=1e-2,
        atol=1e-2,
    )
