"""pandas input as a plain user gives it: DataFrames for X, Series of any label dtype for y,
in fit, GridSearchCV and pipelines; feature names kept, checked and matched by name."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mklearn import MKLClassifier, MKLRegressor, OneClassMKL, load_model, save_model
from mklearn.kernels.strings import Spectrum

pd = pytest.importorskip("pandas")

FAST = dict(kernels="simple_mkl", max_iter=50)
RNG = np.random.default_rng(0)
X = pd.DataFrame(RNG.normal(size=(40, 3)), columns=["width", "height", "depth"])
LABELS = np.where(X["width"] + 0.3 * X["height"] > 0, "setosa", "virginica")

LABEL_SERIES = {
    "str": lambda: pd.Series(LABELS),
    "object": lambda: pd.Series(LABELS, dtype=object),
    "category": lambda: pd.Series(LABELS, dtype="category"),
    "string": lambda: pd.Series(LABELS, dtype="string"),
    "int-category": lambda: pd.Series(pd.Categorical(np.where(LABELS == "setosa", 3, 7))),
    "Int64": lambda: pd.Series(np.where(LABELS == "setosa", 1, 2), dtype="Int64"),
    "boolean": lambda: pd.Series(LABELS == "setosa", dtype="boolean"),
    "frame-column": lambda: X.assign(species=LABELS)[["species"]],
}

ESTIMATORS = {
    "smo-kl": lambda: MKLClassifier(**FAST),
    "spg-l1": lambda: MKLClassifier(**FAST, solver="spg", regularizer="l1"),
    "mirror-group": lambda: MKLClassifier(**FAST, regularizer="group", groups="features"),
    "product": lambda: MKLClassifier(combination="product", kernels="features", max_iter=50),
}


def _svc_classes(y):
    return SVC().fit(X, np.ravel(np.asarray(y))).classes_


@pytest.mark.filterwarnings("ignore:A column-vector y was passed")  # as SVC: a 1-column frame
@pytest.mark.parametrize("estimator", list(ESTIMATORS))
@pytest.mark.parametrize("labels", list(LABEL_SERIES))
def test_fit_takes_a_series_of_any_label_dtype(estimator, labels):
    y = LABEL_SERIES[labels]()
    model = ESTIMATORS[estimator]().fit(X, y)
    np.testing.assert_array_equal(model.classes_, _svc_classes(y))  # as SVC reads y
    assert model.score(X, y) > 0.8
    np.testing.assert_array_equal(model.feature_names_in_, X.columns)


@pytest.mark.parametrize("labels", ["str", "category", "string"])
def test_grid_search_and_pipeline_take_a_series(labels):
    y = LABEL_SERIES[labels]()
    search = GridSearchCV(MKLClassifier(**FAST), {"C": [1.0, 10.0]}, cv=3, error_score="raise")
    assert search.fit(X, y).best_score_ > 0.8
    pipe = make_pipeline(StandardScaler(), MKLClassifier(**FAST)).fit(X, y)
    assert pipe.score(X, y) > 0.8
    search = GridSearchCV(pipe, {"mklclassifier__C": [1.0, 10.0]}, cv=3, error_score="raise")
    assert search.fit(X, y).best_score_ > 0.8


@pytest.mark.parametrize("dtype", ["float64", "Float64", "object", "int64"])
def test_regressor_takes_a_series(dtype):
    y = pd.Series(np.round(2.0 * X["width"] + X["depth"], 1)).astype(dtype)
    model = MKLRegressor(kernels="simple_mkl", max_iter=50).fit(X, y)
    assert model.score(X, y.astype(float)) > 0.5
    search = GridSearchCV(MKLRegressor(kernels="simple_mkl", max_iter=50), {"C": [1.0, 10.0]},
                          cv=3, error_score="raise")
    search.fit(X, y)


def test_one_class_takes_a_frame_and_ignores_y():
    model = OneClassMKL(kernels="simple_mkl", max_iter=50).fit(X, pd.Series(LABELS))
    np.testing.assert_array_equal(model.feature_names_in_, X.columns)
    assert set(np.unique(model.predict(X))) <= {-1, 1}


def test_string_kernels_take_series_of_sequences_and_labels():
    sequences = pd.Series(["".join(RNG.choice(list("ACGT"), 12)) for _ in range(40)])
    y = pd.Series(np.where(sequences.str.count("A") > 3, "many", "few"), dtype="category")
    model = MKLClassifier(kernels=[Spectrum(1), Spectrum(2)], max_iter=50).fit(sequences, y)
    assert set(model.classes_) == {"few", "many"}
    assert model.score(sequences, y) > 0.7


@pytest.mark.parametrize("y", [pd.Series(["a", None] * 20), pd.Series([1.0, np.nan] * 20,
                                                                        dtype=object)],
                         ids=["None", "NaN"])
def test_missing_labels_in_a_series_are_refused_by_name(y):
    with pytest.raises(ValueError, match="missing labels"):
        MKLClassifier(**FAST).fit(X, y)


# ----------------------------------------------------------------------- feature names
ALL_KINDS = {
    **ESTIMATORS,
    "regressor": lambda: MKLRegressor(kernels="simple_mkl", max_iter=50),
    "one-class": lambda: OneClassMKL(kernels="simple_mkl", max_iter=50),
}


def _fitted(kind):
    y = np.where(LABELS == "setosa", 1, -1)
    return ALL_KINDS[kind]().fit(X, y.astype(float) if kind == "regressor" else y)


@pytest.mark.parametrize("kind", list(ALL_KINDS))
def test_columns_in_another_order_are_matched_by_name(kind, tmp_path):
    model = _fitted(kind)
    shuffled = X[["depth", "width", "height"]]
    expected = model.decision_function(X) if kind != "regressor" else model.predict(X)
    method = model.predict if kind == "regressor" else model.decision_function
    np.testing.assert_array_equal(method(shuffled), expected)
    if kind in ("smo-kl", "regressor", "one-class"):  # the names survive a model file
        save_model(model, tmp_path / "m.npz")
        loaded = load_model(tmp_path / "m.npz")
        np.testing.assert_array_equal(loaded.feature_names_in_, X.columns)
        method = loaded.predict if kind == "regressor" else loaded.decision_function
        np.testing.assert_allclose(method(shuffled), expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("columns, message", [
    (["width", "height"], r"missing 'depth'\)"),
    (["width", "height", "depth", "colour"], r"not seen at fit 'colour'"),
    (["width", "height", "size"], r"missing 'depth'; not seen at fit 'size'"),
], ids=["missing", "extra", "renamed"])
def test_columns_that_do_not_match_are_refused_by_name(columns, message):
    model = _fitted("smo-kl")
    frame = pd.DataFrame(RNG.normal(size=(5, len(columns))), columns=columns)
    with pytest.raises(ValueError, match=message) as error:
        model.predict(frame)
    assert "'width', 'height', 'depth' (in any order)" in str(error.value)
    assert "\n" not in str(error.value)


def test_repeated_column_names_are_refused():
    frame = pd.DataFrame(RNG.normal(size=(5, 3)), columns=["width", "height", "height"])
    with pytest.raises(ValueError, match="unique column names"):  # scikit-learn's check
        _fitted("smo-kl").predict(frame)


def test_a_model_without_names_still_takes_arrays_by_position():
    y = np.where(LABELS == "setosa", 1, -1)
    model = MKLClassifier(**FAST).fit(X.to_numpy(), y)
    assert not hasattr(model, "feature_names_in_")
    with pytest.warns(UserWarning, match="fitted without feature names"):  # scikit-learn's
        np.testing.assert_array_equal(model.predict(X.to_numpy()), model.predict(X))


@pytest.mark.parametrize(
    "make", [lambda: MKLClassifier(**FAST), lambda: MKLRegressor(**FAST),
             lambda: OneClassMKL(**FAST),
             lambda: MKLClassifier(combination="product", kernels="features", max_iter=50)],
    ids=["classifier", "regressor", "one-class", "product"])
def test_repeated_column_names_are_refused_by_name(make):
    repeated = X.set_axis(["width", "height", "width"], axis=1)
    target = X["width"].to_numpy() if isinstance(make(), MKLRegressor) else LABELS
    message = r"X has repeated column names \('width' 2 times\).*rename the columns"
    with pytest.raises(ValueError, match=message) as info:
        make().fit(repeated, target)
    assert type(info.value) is ValueError  # not the data-frame library's own exception
    model = make().fit(X, target)
    with pytest.raises(ValueError, match=message) as info:
        model.predict(repeated)
    assert type(info.value) is ValueError
