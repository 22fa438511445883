"""SILP and SPG for regression and one-class through the estimators: scikit-learn's contract,
the single-kernel case against sklearn's LIBSVM, and bad input."""

import numpy as np
import pytest
from sklearn.svm import SVR, OneClassSVM
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn_checks import expected_failed_checks

from mklearn import MKLClassifier, MKLRegressor, OneClassMKL
from mklearn.kernels import RBF, Polynomial

SMALL_FAMILY = [RBF(sigma=1.0), RBF(sigma=3.0), Polynomial(degree=2), RBF(sigma=1.0, features=0)]


@parametrize_with_checks(
    [
        MKLClassifier(kernels=SMALL_FAMILY, solver="silp", C=100.0, max_iter=100),
        MKLClassifier(kernels=SMALL_FAMILY, solver="silp", C=10.0,
                      solver_options={"interleaved": True}),
        MKLRegressor(kernels=SMALL_FAMILY, solver="silp", regularizer="l1", C=1000.0),
        MKLRegressor(kernels=SMALL_FAMILY, solver="spg", regularizer="l1", C=1000.0),
        OneClassMKL(kernels=SMALL_FAMILY, nu=0.3),
        OneClassMKL(kernels=SMALL_FAMILY, solver="spg", nu=0.3),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_contract(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def blob():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=60)
    return X, y


def _one_kernel(X, Z=None, gamma=0.5):
    Z = X if Z is None else Z
    sq = ((Z[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-gamma * sq)


@pytest.mark.parametrize("solver", ["silp", "spg"])
def test_one_kernel_regression_is_sklearn_svr(blob, solver):
    X, y = blob
    K = _one_kernel(X)
    model = MKLRegressor(kernels="precomputed", solver=solver, regularizer="l1", C=5.0,
                         epsilon=0.1, tol=1e-6, solver_options={"inner_tol": 1e-8})
    model.fit(K[:, :, None], y)
    svr = SVR(kernel="precomputed", C=5.0, epsilon=0.1, tol=1e-8).fit(K, y)
    X_test = np.random.default_rng(4).normal(size=(20, 2))
    K_test = _one_kernel(X, X_test)
    np.testing.assert_allclose(model.predict(K_test[:, :, None]), svr.predict(K_test),
                               atol=1e-5)


@pytest.mark.parametrize("solver", ["silp", "spg"])
def test_one_kernel_one_class_is_sklearn(blob, solver):
    X, _ = blob
    K = _one_kernel(X)
    model = OneClassMKL(kernels="precomputed", solver=solver, nu=0.2, tol=1e-6,
                        solver_options={"inner_tol": 1e-8}).fit(K[:, :, None])
    # both in LIBSVM's scaling (0 <= alpha <= 1, sum alpha = nu n)
    ocsvm = OneClassSVM(kernel="precomputed", nu=0.2, tol=1e-8).fit(K)
    X_test = np.random.default_rng(5).normal(size=(30, 2)) * 1.5
    K_test = _one_kernel(X, X_test)
    ours = model.decision_function(K_test[:, :, None])
    theirs = ocsvm.decision_function(K_test)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
    np.testing.assert_array_equal(model.predict(K_test[:, :, None]), ocsvm.predict(K_test))
    np.testing.assert_allclose(model.score_samples(K_test[:, :, None]) - model.offset_, ours)


def test_one_class_nu_bounds_outliers_and_support_vectors(blob):
    X, _ = blob
    for nu in (0.1, 0.3, 0.6):
        model = OneClassMKL(kernels=SMALL_FAMILY, nu=nu, tol=1e-5).fit(X)
        outside = np.mean(model.predict(X) < 0)
        assert outside <= nu + 1.0 / len(X)
        assert model.support_.size >= nu * len(X) - 1e-9
        assert model.kernel_weights_.sum() == pytest.approx(1.0)


def test_interleaved_and_wrapper_regressors_agree(blob):
    X, y = blob
    kw = dict(kernels=SMALL_FAMILY, solver="silp", regularizer="l1", C=100.0, tol=1e-6)
    wrapper = MKLRegressor(**kw).fit(X, y)
    chunked = MKLRegressor(**kw, solver_options={"interleaved": True}).fit(X, y)
    assert chunked.objective_ == pytest.approx(wrapper.objective_, rel=1e-4)
    np.testing.assert_allclose(chunked.predict(X), wrapper.predict(X), atol=1e-2)


@pytest.mark.parametrize("nu", [0.0, -0.1, 1.5])
def test_nu_outside_the_interval_is_a_value_error(blob, nu):
    with pytest.raises(ValueError, match="nu"):
        OneClassMKL(kernels=SMALL_FAMILY, nu=nu).fit(blob[0])


def test_regressor_solver_and_regularizer_must_match(blob):
    X, y = blob
    with pytest.raises(ValueError, match="'silp' does not support regularizer 'lp'"):
        MKLRegressor(kernels=SMALL_FAMILY, solver="silp", regularizer="lp").fit(X, y)
    with pytest.raises(ValueError, match="'smo' does not support regularizer 'l1'"):
        MKLRegressor(kernels=SMALL_FAMILY, solver="smo", regularizer="l1").fit(X, y)
    with pytest.raises(ValueError, match="l1"):
        MKLClassifier(kernels=SMALL_FAMILY, solver="silp", regularizer="lp").fit(
            X, (y > 0).astype(int))


def test_unknown_or_bad_solver_options_are_value_errors(blob):
    X, y = blob
    with pytest.raises(ValueError, match="not options of solver 'spg'"):
        OneClassMKL(kernels=SMALL_FAMILY, solver="spg", solver_options={"interleaved": True}
                    ).fit(X)
    with pytest.raises(ValueError, match="chunk_steps"):
        MKLRegressor(kernels=SMALL_FAMILY, solver="silp", regularizer="l1",
                     solver_options={"interleaved": True, "chunk_steps": 0}).fit(X, y)


def test_interleaved_cut_short_warns_and_still_gives_a_model(blob):
    from sklearn.exceptions import ConvergenceWarning

    X, y = blob
    labels = np.where(y > 0, 1, -1)
    model = MKLClassifier(kernels=SMALL_FAMILY, solver="silp", C=10.0, max_iter=2,
                          solver_options={"interleaved": True, "chunk_steps": 3})
    with pytest.warns(ConvergenceWarning, match="increase max_iter"):
        model.fit(X, labels)
    assert model.kernel_weights_.sum() == pytest.approx(1.0)
    assert model.duality_gap_ > 0 and np.isfinite(model.duality_gap_)
    assert model.predict(X).shape == labels.shape


def test_one_default_nu_in_the_api_and_the_cli(blob):
    from mklearn.cli import _parser

    assert OneClassMKL().nu == _parser().parse_args(["fit"]).nu == 0.1
    model = OneClassMKL(kernels=SMALL_FAMILY).fit(blob[0])
    # nu bounds the share of training points left outside: about one in ten, not half
    assert np.mean(model.predict(blob[0]) == -1) <= 0.1 + 1 / len(blob[0])


def test_a_silp_run_stopped_by_max_iter_names_the_gap_and_spg():
    from sklearn.exceptions import ConvergenceWarning

    from mklearn.datasets import load_sonar

    X, y = load_sonar()
    with pytest.warns(ConvergenceWarning, match=r"silp stopped after 2 LP solves \(\d+ SMO "
                      r"steps\) with relative duality gap \S+ above tol=0.001.*solver='spg'"):
        MKLClassifier(solver="silp", max_iter=2).fit(X, y)
