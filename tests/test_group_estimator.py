"""MKLClassifier with regularizer="group", solver="mirror", groups= and multi-view input."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn_checks import expected_failed_checks

from mklearn import MKLClassifier
from mklearn.datasets import load_dataset
from mklearn.kernels import RBF, KernelBank, Polynomial

SMALL_FAMILY = [RBF(sigma=1.0), RBF(sigma=3.0), Polynomial(degree=2), RBF(sigma=1.0, features=0)]


@parametrize_with_checks(
    [
        MKLClassifier(
            kernels=SMALL_FAMILY, solver="mirror", regularizer="group", C=100.0, max_iter=50
        ),
        MKLClassifier(kernels=SMALL_FAMILY, solver="mirror", C=100.0, max_iter=50),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_contract(estimator, check):
    check(estimator)


def _views(n=120, seed=0):
    """Three views of the same liver samples: two informative column groups and noise."""
    X, y = load_dataset("liver-disorders")
    rows = np.random.default_rng(seed).choice(len(y), size=n, replace=False)
    X, y = X[rows], y[rows]
    noise = np.random.default_rng(seed + 1).normal(size=(n, 2))
    return {"blood": X[:, :3], "drinks": X[:, 3:], "noise": noise}, y


VIEW_KERNELS = [RBF(sigma=s) for s in (0.5, 1.0, 2.0, 5.0)]


def test_multi_view_fit_names_groups_and_predicts():
    views, y = _views()
    model = MKLClassifier(
        kernels=VIEW_KERNELS, solver="mirror", regularizer="group", C=10.0, tol=1e-4
    ).fit(views, y)
    assert model.kernel_names_[0] == "view 'blood': rbf(sigma=0.5)"
    assert model.kernel_names_[-1] == "view 'noise': rbf(sigma=5)"
    assert model.group_names_ == ["view 'blood'", "view 'drinks'", "view 'noise'"]
    assert model.group_weights_.shape == (3,) and np.all(model.group_weights_ > 0)
    assert model.group_weights_.sum() == pytest.approx(1.0)
    # d_jk = gamma_jk / lambda_j: the group sums are 1 / lambda_j, lambda on the simplex
    sums = model.groups_.sum(model.kernel_weights_)
    assert np.sum(1.0 / sums) == pytest.approx(1.0, rel=1e-6)
    assert model.duality_gap_ <= 1e-4 * model.objective_ * 1.0001
    # the same model from the concatenated views with explicit column-restricted kernels
    X = np.hstack(list(views.values()))
    spans = [(0, 3), (3, 6), (6, 8)]
    specs = [RBF(sigma=k.sigma, features=range(a, b)) for a, b in spans for k in VIEW_KERNELS]
    flat = MKLClassifier(
        kernels=specs,
        solver="mirror",
        regularizer="group",
        groups=np.repeat([0, 1, 2], 4),
        C=10.0,
        tol=1e-4,
    ).fit(X, y)
    assert flat.objective_ == pytest.approx(model.objective_, rel=1e-3)
    assert np.mean(model.predict(views) == flat.predict(X)) >= 0.97
    # list views work too, named by position
    listed = MKLClassifier(kernels=VIEW_KERNELS, solver="mirror", regularizer="group", C=10.0)
    listed.fit(list(views.values()), y)
    assert listed.group_names_ == ["view '0'", "view '1'", "view '2'"]


def test_group_mkl_uses_every_view_l1_may_not():
    views, y = _views()
    group = MKLClassifier(kernels=VIEW_KERNELS, solver="mirror", regularizer="group", C=10.0)
    l1 = MKLClassifier(kernels=VIEW_KERNELS, solver="mirror", regularizer="l1", C=10.0)
    group.fit(views, y)
    l1.fit(views, y)
    assert np.all(group.group_weights_ > 1e-3)
    assert l1.group_names_ == group.group_names_  # views group the report of any regulariser
    assert l1.kernel_weights_.sum() == pytest.approx(1.0)


def test_per_view_kernels_and_multiclass():
    X, y = load_dataset("liver-disorders")
    rng = np.random.default_rng(3)
    rows = rng.choice(len(y), size=90, replace=False)
    X = X[rows]
    y3 = np.digitize(X[:, 5], np.quantile(X[:, 5], [1 / 3, 2 / 3]))  # three classes
    views = {"a": X[:, :3], "b": X[:, 3:5]}
    kernels = {"a": [RBF(sigma=1.0), RBF(sigma=4.0)], "b": [Polynomial(degree=2)]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = MKLClassifier(
            kernels=kernels, solver="mirror", regularizer="group", C=1.0, max_iter=100
        ).fit(views, y3)
    assert model.kernel_names_ == [
        "view 'a': rbf(sigma=1)",
        "view 'a': rbf(sigma=4)",
        "view 'b': poly(degree=2, coef0=1)",
    ]
    assert model.group_weights_.shape == (3, 2)
    shares = model.kernel_weights_[:, 2] / model.kernel_weights_.sum(axis=1)
    assert model.group_weights_[:, 1] == pytest.approx(shares)  # view 'b' has one kernel
    assert model.predict(views).shape == (90,)


def test_features_recipe_groups_by_feature_block():
    X, y = load_dataset("liver-disorders")
    X, y = X[:80], y[:80]
    model = MKLClassifier(kernels="svc+simple_mkl", solver="mirror", regularizer="group",
                          C=1.0, tol=1e-3).fit(X, y)
    assert model.group_names_ == ["all"] + [f"x[{j}]" for j in range(6)]
    # SVC()'s own kernel looks at all features: in the first group
    assert model.groups_.sizes.tolist() == [14] + [13] * 6
    default = MKLClassifier(solver="mirror", regularizer="group", C=1.0, tol=1e-3).fit(X, y)
    assert default.groups_.sizes.tolist() == [1] * 7  # SVC()'s kernel, one RBF per feature


def test_precomputed_with_groups():
    X, y = load_dataset("liver-disorders")
    X, y = X[:80], y[:80]
    stack = KernelBank(SMALL_FAMILY, standardize=True).fit_transform(X)
    model = MKLClassifier(
        kernels="precomputed", solver="mirror", regularizer="group", groups=[0, 0, 1, 1]
    ).fit(stack, y)
    assert model.group_names_ == ["0", "1"]
    assert model.predict(stack).shape == (80,)


@pytest.mark.parametrize(
    ("params", "fit_input", "message"),
    [
        ({"groups": [0, 1]}, "stack", "groups has 2 labels but there are 4 base kernels"),
        ({"groups": [0, 0, 2, 2]}, "stack", "group 1 is empty"),
        ({"groups": [[0, 1], [], [2, 3]]}, "stack", "group 1 of the partition is empty"),
        ({}, "stack", "needs groups="),
        ({"groups": "view"}, "X", "groups='view' needs multi-view input"),
        ({"groups": "features"}, "stack", "groups='features' needs kernels built from X"),
        ({"solver": "spg"}, "X", "solver 'spg' does not support regularizer 'group'"),
        ({}, "bad_views", "view 'b' has 79 rows but view 'a' has 80"),
    ],
)
def test_bad_input_says_which(params, fit_input, message):
    X, y = load_dataset("liver-disorders")
    X, y = X[:80], y[:80]
    inputs = {
        "X": X,
        "stack": KernelBank(SMALL_FAMILY).fit_transform(X),
        "bad_views": {"a": X[:, :3], "b": X[:79, 3:]},
    }
    kernels = "precomputed" if fit_input == "stack" else SMALL_FAMILY[:3]
    params = {"solver": "mirror", "regularizer": "group", **params}
    model = MKLClassifier(kernels=kernels, **params)
    with pytest.raises(ValueError, match=message):
        model.fit(inputs[fit_input], y)


def test_prediction_views_must_match_fit():
    views, y = _views(n=60)
    model = MKLClassifier(kernels=VIEW_KERNELS, solver="mirror", regularizer="group").fit(views, y)
    with pytest.raises(ValueError, match="differ from the views seen in fit"):
        model.predict({"blood": views["blood"], "drinks": views["drinks"]})
    with pytest.raises(ValueError, match="view 'noise' has 1 columns but had 2 in fit"):
        model.predict({**views, "noise": views["noise"][:, :1]})
    with pytest.raises(ValueError, match="fitted on 3 views"):
        model.predict(np.hstack(list(views.values())))


def test_load_mfeat():
    from mklearn.datasets import load_mfeat

    views, y = load_mfeat()
    shapes = {name: X.shape for name, X in views.items()}
    assert shapes == {
        "fou": (2000, 76),
        "fac": (2000, 216),
        "kar": (2000, 64),
        "pix": (2000, 240),
        "zer": (2000, 47),
        "mor": (2000, 6),
    }
    assert y.dtype == np.int64 and np.bincount(y).tolist() == [200] * 10
    assert all(np.isfinite(X).all() for X in views.values())
    assert views["pix"].min() == 0 and views["pix"].max() == 6  # pixel averages, ints 0..6
