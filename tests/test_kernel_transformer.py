"""MKLKernel: the learned kernel as a transformer, in scikit-learn's pipelines and searches."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.cluster import SpectralClustering
from sklearn.datasets import load_diabetes
from sklearn.decomposition import KernelPCA
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVR
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn_checks import expected_failed_checks

from mklearn import MKLClassifier, MKLKernel, MKLRegressor, save_model
from mklearn.kernel_transformer import MAX_AUTO_CLASSES
from mklearn.kernels import RBF, KernelBank, Polynomial
from mklearn.solvers import SOLVERS

SMALL_FAMILY = [RBF(sigma=1.0), RBF(sigma=3.0), Polynomial(degree=2), RBF(sigma=1.0, features=0)]
RBF_FAMILY = [RBF(sigma=0.5), RBF(sigma=1.0), RBF(sigma=3.0), RBF(sigma=1.0, features=0)]


@parametrize_with_checks(
    [
        MKLKernel(kernels=SMALL_FAMILY, C=10.0, max_iter=50),
        MKLKernel(kernels=SMALL_FAMILY, regularizer="l1", C=100.0, max_iter=50),
        MKLKernel(kernels=SMALL_FAMILY, task="regression", C=10.0),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_contract(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=80)
    return X[:60], y[:60], X[60:], y[60:]


@pytest.fixture(scope="module")
def blobs():
    """Two well separated groups in 3-D, labelled by group."""
    rng = np.random.default_rng(1)
    centres = np.repeat([[0.0, 0.0, 0.0], [4.0, 4.0, 0.0]], 30, axis=0)
    return centres + 0.5 * rng.normal(size=(60, 3)), np.repeat([0, 1], 30)


def _direct_kernel(model, X_train, X):
    """The learned kernel of ``model`` between X and X_train from its own kernel bank."""
    bank = KernelBank(model.kernels, normalize="diagonal").fit(X_train)  # specs: no scaling
    return bank.transform(X) @ model.kernel_weights_


# ------------------------------------------------------------------- the four pipelines
def test_kernel_ridge_pipeline_is_kernel_ridge_on_the_learned_kernel(regression):
    X, y, X_test, y_test = regression
    pipe = make_pipeline(MKLKernel(kernels=RBF_FAMILY), KernelRidge(kernel="precomputed",
                                                                    alpha=0.1))
    pipe.fit(X, y)
    transformer = pipe[0]
    assert transformer.task_ == "regression" and transformer.kernel_weights_.shape == (4,)
    K = _direct_kernel(transformer, X, X)
    reference = KernelRidge(kernel="precomputed", alpha=0.1).fit(K, y)
    np.testing.assert_allclose(pipe.predict(X_test),
                               reference.predict(_direct_kernel(transformer, X, X_test)),
                               rtol=1e-8, atol=1e-8)
    assert pipe.score(X_test, y_test) > 0.8


def test_svr_pipeline_fits_and_predicts(regression):
    X, y, X_test, y_test = regression
    pipe = make_pipeline(MKLKernel(kernels=RBF_FAMILY), SVR(kernel="precomputed", C=10.0))
    assert pipe.fit(X, y).score(X_test, y_test) > 0.8


def test_kernel_pca_pipeline_is_kernel_pca_on_the_learned_kernel(blobs):
    X, y = blobs
    pipe = make_pipeline(MKLKernel(kernels=RBF_FAMILY), KernelPCA(2, kernel="precomputed"))
    Z = pipe.fit_transform(X, y)
    reference = KernelPCA(2, kernel="precomputed").fit_transform(_direct_kernel(pipe[0], X, X))
    np.testing.assert_allclose(np.abs(Z), np.abs(reference), atol=1e-8)
    np.testing.assert_allclose(pipe.transform(X), Z, atol=1e-8)


def test_spectral_clustering_pipeline_finds_the_groups(blobs):
    X, y = blobs
    pipe = make_pipeline(MKLKernel(kernels=RBF_FAMILY),
                         SpectralClustering(2, affinity="precomputed", random_state=0))
    assert adjusted_rand_score(y, pipe.fit_predict(X, y)) == 1.0


def test_grid_search_tunes_a_parameter_of_the_transformer(regression):
    X, y, X_test, y_test = regression
    pipe = make_pipeline(MKLKernel(kernels=RBF_FAMILY), KernelRidge(kernel="precomputed"))
    grid = {"mklkernel__C": [0.1, 10.0], "kernelridge__alpha": [0.01, 1.0]}
    search = GridSearchCV(pipe, grid, cv=KFold(3)).fit(X, y)
    assert set(search.best_params_) == set(grid)
    assert search.best_estimator_[0].n_train_ == len(y)
    assert search.score(X_test, y_test) > 0.8


def test_grid_search_splits_a_precomputed_stack(blobs):
    """A pairwise first step: the search cuts test-versus-training stacks for transform."""
    X, y = blobs
    stack = KernelBank(RBF_FAMILY, normalize="diagonal").fit_transform(X)
    pipe = make_pipeline(MKLKernel(kernels="precomputed"),
                         KernelRidge(kernel="precomputed", alpha=0.1))
    search = GridSearchCV(pipe, {"mklkernel__regularizer": ["l1", "lp"]},
                          cv=KFold(3, shuffle=True, random_state=0))
    assert search.fit(stack, y).best_score_ > 0.8


# ------------------------------------------------------------------ what transform returns
def test_transform_of_a_stack_is_the_weighted_sum(blobs):
    X, y = blobs
    bank = KernelBank(SMALL_FAMILY, standardize=True).fit(X[:40])
    train, test = bank.transform(X[:40]), bank.transform(X[40:])
    model = MKLKernel(kernels="precomputed", regularizer="l1").fit(train, y[:40])
    weights = model.kernel_weights_
    assert weights.shape == (4,) and np.count_nonzero(weights) < 4  # l1 selects
    assert model.kernel_names_ == [f"kernel[{k}]" for k in range(4)]
    np.testing.assert_allclose(model.transform(test), np.tensordot(test, weights, axes=1),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.fit_transform(train, y[:40]),
                               np.tensordot(train, weights, axes=1), rtol=1e-12, atol=1e-12)


def test_transform_of_points_is_the_weighted_sum_of_their_kernels(blobs):
    X, y = blobs
    model = MKLKernel(kernels=SMALL_FAMILY).fit(X[:40], y[:40])
    assert model.transform(X[40:]).shape == (20, 40)
    np.testing.assert_allclose(model.transform(X[40:]), _direct_kernel(model, X[:40], X[40:]),
                               rtol=1e-10, atol=1e-12)
    K = model.fit_transform(X[:40], y[:40])
    assert K.shape == (40, 40)
    np.testing.assert_allclose(K, K.T, atol=1e-12)
    assert model.n_features_in_ == 3


@pytest.mark.parametrize("strings", [False, True])
def test_weights_learned_on_low_rank_kernels_transform_with_every_training_point(
        monkeypatch, strings):
    from mklearn.kernels import Spectrum, WeightedDegree
    from mklearn.kernels.string_bank import StringKernelBank

    monkeypatch.setattr("mklearn.estimators.kernel_input.LOW_RANK_SAMPLES", 100)  # "auto": low rank
    monkeypatch.setattr("mklearn.kernels.low_rank.AUTO_COMPONENTS", 60)  # 60 landmarks
    rng = np.random.default_rng(0)
    if strings:
        X = np.array(["".join(rng.choice(list("ACGT"), 16)) for _ in range(160)])
        y = np.array([s.count("A") > 4 for s in X]).astype(int)
        kernels = [Spectrum(3), WeightedDegree(4)]
    else:
        X = rng.normal(size=(160, 3))
        y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(int)
        kernels = SMALL_FAMILY
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # rank above n: fine on this small set
        model = MKLKernel(kernels=kernels).fit(X[:120], y[:120])
    assert model.estimator_.kernel_approximation_ == "nystroem"
    assert model.estimator_.low_rank_.landmark_rows_.size < 120
    bank = (StringKernelBank(kernels, normalize="diagonal") if strings
            else KernelBank(kernels, normalize="diagonal")).fit(X[:120])
    np.testing.assert_allclose(model.transform(X[120:]),
                               bank.transform(X[120:]) @ model.kernel_weights_, atol=1e-10)


# -------------------------------------------------------------------- the weights
@pytest.mark.parametrize("params", [{}, {"regularizer": "l1"}, {"regularizer": "lp", "p": 1.5}])
def test_weights_are_the_classifiers(blobs, params):
    X, y = blobs
    y = np.where(X[:, 2] > 0, "a", "b")  # a task on which the weights differ
    model = MKLKernel(kernels=SMALL_FAMILY, C=10.0, **params).fit(X, y)
    reference = MKLClassifier(kernels=SMALL_FAMILY, C=10.0, **params).fit(X, y)
    assert model.task_ == "classification" and model.solver_ == reference.solver_
    np.testing.assert_array_equal(model.kernel_weights_, reference.kernel_weights_)
    assert model.kernel_names_ == reference.kernel_names_


def test_weights_are_the_regressors(regression):
    X, y, _, _ = regression
    model = MKLKernel(kernels=SMALL_FAMILY, C=10.0, epsilon=0.05).fit(X, y)
    reference = MKLRegressor(kernels=SMALL_FAMILY, C=10.0, epsilon=0.05).fit(X, y)
    assert model.task_ == "regression" and reference.regularizer == "lp"
    np.testing.assert_array_equal(model.kernel_weights_, reference.kernel_weights_)


def test_multiclass_weights_are_the_mean_of_the_one_vs_rest_weights(blobs):
    X, _ = blobs
    y = np.digitize(X[:, 0] + X[:, 2], [0.5, 3.0])  # three classes
    model = MKLKernel(kernels=SMALL_FAMILY, regularizer="l1", C=10.0).fit(X, y)
    per_class = model.estimator_.kernel_weights_
    assert per_class.shape == (3, 4)
    np.testing.assert_allclose(model.kernel_weights_, per_class.mean(axis=0), rtol=1e-15)
    assert model.kernel_weights_.sum() == pytest.approx(1.0)  # l1: still on the simplex


def test_task_decides_the_estimator(regression):
    X, y, _, _ = regression
    labels = (y > 0).astype(float)  # floats that are labels
    assert MKLKernel(kernels=RBF_FAMILY).fit(X, labels).task_ == "classification"
    model = MKLKernel(kernels=RBF_FAMILY, task="regression").fit(X, labels)
    assert isinstance(model.estimator_, MKLRegressor)


def test_auto_takes_many_integer_values_as_regression_and_says_so():
    X, y = load_diabetes(return_X_y=True)  # 214 distinct integer-valued targets
    with pytest.warns(UserWarning, match="regression: y has 214 distinct integer values"):
        model = MKLKernel().fit(X, y)
    assert model.task_ == "regression"
    assert isinstance(model.estimator_, MKLRegressor)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert MKLKernel(task="regression").fit(X[:60], y[:60]).task_ == "regression"


def test_auto_keeps_few_integer_classes_and_continuous_targets(regression, blobs):
    X, y = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        three = y + (X[:, 2] > 0)  # 0, 1, 2: an integer class target
        assert MKLKernel(kernels=RBF_FAMILY).fit(X, three).task_ == "classification"
        X_reg, y_reg, _, _ = regression
        assert MKLKernel(kernels=RBF_FAMILY).fit(X_reg, y_reg).task_ == "regression"
    labels = np.array([f"c{i}" for i in range(MAX_AUTO_CLASSES + 10)])  # strings: classes
    assert MKLKernel()._task_of(labels) == "classification"


# -------------------------------------------------------------------------- bad input
def test_wrong_input_at_transform_is_named(blobs):
    X, y = blobs
    model = MKLKernel(kernels=RBF_FAMILY).fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but MKLKernel is expecting 3"):
        model.transform(X[:, :2])
    stack = KernelBank(RBF_FAMILY, standardize=True).fit_transform(X)
    model = MKLKernel(kernels="precomputed").fit(stack, y)
    with pytest.raises(ValueError, match=r"shape \(n_test, 60, 4\)"):
        model.transform(stack[:, :50])
    with pytest.raises(ValueError, match=r"shape \(n_test, 60, 4\)"):
        model.transform(stack[:, :, :3])
    with pytest.raises(ValueError, match="square"):
        MKLKernel(kernels="precomputed").fit(stack[:, :50], y)


def test_parameters_the_estimator_does_not_have_are_refused(regression):
    X, y, _, _ = regression
    with pytest.raises(ValueError, match="class_weight='balanced' is a parameter of class"):
        MKLKernel(kernels=RBF_FAMILY, class_weight="balanced").fit(X, y)
    with pytest.raises(ValueError, match="weighted sum.*precomputed_distances"):
        MKLKernel(kernels="precomputed_distances").fit(np.zeros((3, 3, 1)), [0, 1, 0])


def test_an_output_above_the_budget_is_refused_with_its_bytes(blobs):
    X, y = blobs
    model = MKLKernel(kernels=RBF_FAMILY).fit(X, y).set_params(memory_budget=1e-3)
    with pytest.raises(ValueError, match=r"60 training points needs 0.0275 MB \(60 x 60 float64\)"):
        model.transform(X)


# ------------------------------------------------------------------------- without y
def test_without_y_weights_need_a_solver_that_learns_nothing(blobs):
    X, _ = blobs
    with pytest.raises(ValueError, match="requires y to be passed, but the target y is None"):
        MKLKernel(kernels=RBF_FAMILY).fit(X)


def _fit_without_y(X):
    pipe = make_pipeline(MKLKernel(kernels=RBF_FAMILY, solver="average"),
                         KernelPCA(2, kernel="precomputed"))
    Z = pipe.fit_transform(X)
    model = pipe[0]
    np.testing.assert_allclose(model.kernel_weights_, np.full(4, 0.25))
    assert model.estimator_ is None and model.task_ is None and model.solver_ == "average"
    bank = KernelBank(RBF_FAMILY, normalize="diagonal").fit(X)
    np.testing.assert_allclose(model.transform(X[:5]), bank.transform(X[:5]).mean(axis=2),
                               rtol=1e-10, atol=1e-12)
    assert Z.shape == (len(X), 2)


@pytest.mark.skipif("average" not in SOLVERS, reason="solver 'average' is not registered")
def test_average_needs_no_y(blobs):
    _fit_without_y(blobs[0])


def test_the_uniform_weights_without_y(blobs, monkeypatch):
    """The path of ``solver="average"`` without y, with the name allowed where it is not yet
    a registered solver (the path reads no solver)."""
    constraints = dict(MKLKernel._parameter_constraints)
    constraints["solver"] = [StrOptions(set(SOLVERS) | {"auto", "average"})]
    monkeypatch.setattr(MKLKernel, "_parameter_constraints", constraints)
    _fit_without_y(blobs[0])


# ----------------------------------------------------------------------- persistence
def test_pickle_round_trips_and_save_model_refuses(blobs, tmp_path):
    X, y = blobs
    model = MKLKernel(kernels=SMALL_FAMILY).fit(X, y)
    loaded = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(loaded.transform(X[:7]), model.transform(X[:7]))
    with pytest.raises(ValueError, match="save_model stores .* got MKLKernel"):
        save_model(model, tmp_path / "model.npz")


# ------------------------------------------------------------------- other kinds of input
def test_sequences_views_and_sparse_input_give_the_classifiers_kernel(blobs):
    """Whatever the input, transform is the classifier's learned kernel: its decision values
    are the kernel's columns at the support vectors times the dual coefficients."""
    import scipy.sparse

    from mklearn.kernels.strings import Spectrum

    X, y = blobs
    rng = np.random.default_rng(2)
    sequences = ["".join(rng.choice(list("ACGT"), size=12)) for _ in range(40)]
    labels = np.array(["A" in s[:3] for s in sequences])
    cases = [
        ([Spectrum(1), Spectrum(2)], sequences, labels),
        (RBF_FAMILY, {"left": X[:, :2], "right": X[:, 2:]}, y),
        (RBF_FAMILY, scipy.sparse.csr_matrix(X), y),
        ("svc+feature_rbf", X, y),
    ]
    for kernels, inputs, targets in cases:
        model = MKLKernel(kernels=kernels, regularizer="l1", C=10.0).fit(inputs, targets)
        svm = model.estimator_
        K = model.transform(inputs)
        assert K.shape == (len(targets), len(targets))
        scores = K[:, svm.support_] @ svm.dual_coef_[0] + svm.intercept_[0]
        np.testing.assert_allclose(scores, svm.decision_function(inputs), atol=1e-8)


def test_float32_kernels_give_a_float64_kernel(blobs):
    X, y = blobs
    model = MKLKernel(kernels=RBF_FAMILY, kernel_dtype="float32").fit(X, y)
    K = model.transform(X)
    assert K.dtype == np.float64
    np.testing.assert_allclose(K, _direct_kernel(model, X, X), rtol=1e-5, atol=1e-6)


def test_columns_are_matched_by_name(blobs):
    pd = pytest.importorskip("pandas")
    X, y = blobs
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = MKLKernel(kernels=RBF_FAMILY).fit(frame, y)
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    np.testing.assert_array_equal(model.transform(frame[["c", "a", "b"]]), model.transform(frame))
    assert list(model.get_feature_names_out()[:2]) == ["mklkernel0", "mklkernel1"]
