"""MKLClassifier's fitted attributes with SVC's meaning: support_, n_support_, dual_coef_,
intercept_, support_vectors_, shape_fit_ (on one kernel MKL is exactly the SVC)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mklearn import MKLClassifier, MKLRegressor, load_model, save_model
from mklearn.datasets import load_dataset
from mklearn.kernels import RBF, KernelBank


@pytest.fixture(scope="module")
def liver():
    X, y = load_dataset("liver-disorders")
    return StandardScaler().fit_transform(X[:120]), y[:120]


@pytest.mark.parametrize("labels", ["signed", "strings"])
def test_one_precomputed_kernel_gives_svcs_attributes(liver, labels):
    X, y = liver
    if labels == "strings":
        y = np.where(y > 0, "sick", "healthy")
    K = KernelBank([RBF(sigma=2.0)], normalize=None).fit_transform(X)[:, :, 0]
    model = MKLClassifier(kernels="precomputed", C=2.0, tol=1e-9, max_iter=5000).fit(K, y)
    svc = SVC(kernel="precomputed", C=2.0, tol=1e-9).fit(model.kernel_weights_[0] * K, y)
    np.testing.assert_array_equal(model.classes_, svc.classes_)
    np.testing.assert_array_equal(model.support_, svc.support_)
    np.testing.assert_array_equal(model.n_support_, svc.n_support_)
    assert model.n_support_.dtype == svc.n_support_.dtype
    np.testing.assert_allclose(model.dual_coef_, svc.dual_coef_, atol=1e-4)
    np.testing.assert_allclose(model.intercept_, svc.intercept_, atol=1e-4)
    assert model.support_vectors_.shape == svc.support_vectors_.shape
    assert model.shape_fit_ == svc.shape_fit_ == K.shape


def test_kernels_from_x_keep_the_supports_rows(liver):
    X, y = liver
    model = MKLClassifier(kernels=[RBF(sigma=1.0), RBF(sigma=3.0)]).fit(X, y)
    np.testing.assert_array_equal(model.support_vectors_, X[model.support_])
    assert model.shape_fit_ == X.shape
    codes = np.searchsorted(model.classes_, y[model.support_])
    assert (np.diff(codes) >= 0).all()  # grouped by class, as SVC
    np.testing.assert_array_equal(model.n_support_, np.bincount(codes))
    assert model.n_support_.sum() == model.support_.size == model.dual_coef_.shape[1]


def test_multiclass_counts_the_support_of_each_class(liver):
    X, _ = liver
    y = np.digitize(X[:, 0], [-0.5, 0.5])  # three classes
    model = MKLClassifier(kernels=[RBF(sigma=1.0), RBF(sigma=3.0)]).fit(X, y)
    assert model.n_support_.shape == (3,)
    np.testing.assert_array_equal(model.n_support_, np.bincount(y[model.support_]))
    np.testing.assert_array_equal(model.support_vectors_, X[model.support_])


def test_a_stack_keeps_its_shape_and_no_rows(liver):
    X, y = liver
    stack = KernelBank([RBF(sigma=1.0), RBF(sigma=3.0)]).fit_transform(X)
    model = MKLClassifier(kernels="precomputed").fit(stack, y)
    assert model.shape_fit_ == stack.shape
    assert model.support_vectors_.shape == (0, 0)


def test_a_saved_model_keeps_svcs_attributes(liver, tmp_path):
    X, y = liver
    labels = np.digitize(X[:, 0], [-0.5, 0.5])
    for target in (y, labels):
        model = MKLClassifier(kernels=[RBF(sigma=2.0), RBF(sigma=4.0)]).fit(X, target)
        save_model(model, tmp_path / "model.npz")
        loaded = load_model(tmp_path / "model.npz")
        np.testing.assert_array_equal(loaded.n_support_, model.n_support_)
        np.testing.assert_array_equal(loaded.support_vectors_, model.support_vectors_)
        assert loaded.shape_fit_ == model.shape_fit_


def test_a_model_without_support_vectors_saves_and_loads(liver, tmp_path):
    X, _ = liver
    model = MKLRegressor(kernels=[RBF(sigma=2.0)], epsilon=10.0).fit(X, 0.01 * X[:, 0])
    assert model.dual_coef_.shape[1] == 0  # every target within epsilon of the intercept
    save_model(model, tmp_path / "model.npz")
    np.testing.assert_array_equal(load_model(tmp_path / "model.npz").predict(X),
                                  model.predict(X))
