"""Every kind of mklearn model saves and loads with identical predictions; the loader checks
every shape, size, value and version of a hand-edited file (format version 3)."""

from __future__ import annotations

import json
import warnings
import zipfile

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    PolynomialFeatures,
    RobustScaler,
    StandardScaler,
)

import mklearn.persistence as persistence
from mklearn import MKLClassifier, MKLRegressor, OneClassMKL, load_model, save_model
from mklearn.kernels import RBF, Linear, Polynomial

SPECS = [RBF(sigma=1.0), RBF(sigma=3.0), Polynomial(degree=2), Linear(features=[0])]


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 5.0, 0.2]
    X_new = rng.normal(size=(13, 3)) * [1.0, 5.0, 0.2]
    return X, X_new


def _binary(X):
    return np.where(X[:, 0] + 0.1 * X[:, 1] > 0.2, "yes", "no")


def _three(X):
    return np.digitize(X[:, 0], [-0.45, 0.45]) * 10


def _views(X):
    return {"a": X[:, :2], "b": X[:, 2:]}


def _kinds():
    """(id, build, fit-input transform, target function, prediction methods)."""
    return {
        "regressor-smo": (lambda: MKLRegressor(kernels=SPECS, C=10), None, "reg"),
        "regressor-spg-l1": (
            lambda: MKLRegressor(kernels=SPECS, solver="spg", regularizer="l1", C=10), None, "reg"
        ),
        "one-class": (lambda: OneClassMKL(kernels=SPECS, nu=0.3), None, None),
        "multiclass": (lambda: MKLClassifier(kernels=SPECS, C=10), None, "three"),
        "multi-view": (lambda: MKLClassifier(kernels=[RBF(sigma=1.0), Linear()], C=10),
                       _views, "binary"),
        "groups": (
            lambda: MKLClassifier(
                kernels="simple_mkl", solver="mirror", regularizer="group", C=10, max_iter=30
            ),
            None,
            "binary",
        ),
        "product": (lambda: MKLClassifier(kernels="features", combination="product", C=10),
                    None, "binary"),
        "product-multiclass": (
            lambda: MKLClassifier(kernels="features", combination="product", C=10),
            None,
            "three",
        ),
    }


def _target(which, X):
    if which == "reg":
        return X[:, 0] ** 2 + 0.1 * X[:, 1]
    if which == "three":
        return _three(X)
    if which == "binary":
        return _binary(X)
    return None


def _methods(model):
    return [m for m in ("predict", "decision_function", "score_samples") if hasattr(model, m)]


@pytest.fixture(scope="module", params=list(_kinds()))
def saved(request, tmp_path_factory):
    build, transform, target = _kinds()[request.param]
    X, X_new = _data()
    y = _target(target, X)
    if transform is not None:
        X, X_new = transform(X), transform(X_new)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # short runs are fine here
        model = build().fit(X, y)
    path = tmp_path_factory.mktemp(request.param) / "m.npz"
    save_model(model, path)
    return request.param, model, path, X_new


def test_every_kind_round_trips_with_identical_predictions(saved):
    name, model, path, X_new = saved
    loaded = load_model(path)
    assert type(loaded) is type(model)
    for method in _methods(model):
        np.testing.assert_array_equal(
            getattr(loaded, method)(X_new), getattr(model, method)(X_new), err_msg=method
        )
    np.testing.assert_array_equal(loaded.kernel_weights_, model.kernel_weights_)
    assert loaded.kernel_names_ == model.kernel_names_
    if hasattr(model, "classes_"):
        np.testing.assert_array_equal(loaded.classes_, model.classes_)
    if getattr(model, "group_weights_", None) is not None:
        np.testing.assert_allclose(loaded.group_weights_, model.group_weights_)
        assert loaded.group_names_ == model.group_names_


def test_versions_written(saved):
    name, model, path, _ = saved
    with zipfile.ZipFile(path) as archive, archive.open("header.npy") as handle:
        np.lib.format.read_magic(handle)
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
        header = json.loads(np.frombuffer(handle.read(), dtype=dtype).item())
    expected = {"groups": 1, "multiclass": 1, "product": 2, "product-multiclass": 2}.get(name, 3)
    assert header["version"] == expected
    assert header["n_support"] == model.dual_coef_.shape[1]


def test_multi_view_model_checks_views_after_loading(tmp_path):
    X, X_new = _data()
    model = MKLClassifier(kernels=[RBF(sigma=1.0)], C=10).fit(_views(X), _binary(X))
    save_model(model, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert loaded.kernel_names_ == ["view 'a': rbf(sigma=1)", "view 'b': rbf(sigma=1)"]
    with pytest.raises(ValueError, match="views"):
        loaded.predict(X_new)
    with pytest.raises(ValueError, match="differ"):
        loaded.predict({"b": X_new[:, 2:], "a": X_new[:, :2]})


def test_feature_names_are_kept(tmp_path):
    import pandas as pd
    X, X_new = _data()
    frame = pd.DataFrame(X, columns=["u", "v", "w"])
    model = MKLClassifier(kernels=SPECS, C=10).fit(frame, _binary(X))
    save_model(model, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert list(loaded.feature_names_in_) == ["u", "v", "w"]
    new = pd.DataFrame(X_new, columns=["u", "v", "w"])
    np.testing.assert_array_equal(loaded.predict(new), model.predict(new))


# --------------------------------------------------------------------------- pipelines
@pytest.mark.parametrize(
    "scalers",
    [
        [StandardScaler()],
        [MinMaxScaler(feature_range=(-1, 1))],
        [MaxAbsScaler(), Normalizer()],
        [RobustScaler(quantile_range=(10.0, 90.0)), StandardScaler(with_mean=False)],
    ],
    ids=["standard", "minmax", "maxabs-normalizer", "robust-standard"],
)
def test_pipeline_round_trip(tmp_path, scalers):
    X, X_new = _data()
    pipe = make_pipeline(*scalers, MKLClassifier(kernels=SPECS, C=10)).fit(X, _three(X))
    save_model(pipe, tmp_path / "p.npz")
    loaded = load_model(tmp_path / "p.npz")
    assert [name for name, _ in loaded.steps] == [name for name, _ in pipe.steps]
    np.testing.assert_array_equal(loaded.predict(X_new), pipe.predict(X_new))
    np.testing.assert_array_equal(loaded.decision_function(X_new), pipe.decision_function(X_new))
    assert loaded.score(X, _three(X)) == pipe.score(X, _three(X))


def test_pipeline_regressor_round_trip(tmp_path):
    X, X_new = _data()
    pipe = make_pipeline(StandardScaler(), MKLRegressor(kernels=SPECS, C=10))
    pipe.fit(X, X[:, 0] ** 2)
    save_model(pipe, tmp_path / "p.npz")
    np.testing.assert_array_equal(load_model(tmp_path / "p.npz").predict(X_new),
                                  pipe.predict(X_new))


def test_pipeline_with_untrusted_step_is_refused(tmp_path):
    X, _ = _data()
    pipe = make_pipeline(PolynomialFeatures(), MKLClassifier(kernels=SPECS, C=10))
    pipe.fit(X, _binary(X))
    with pytest.raises(ValueError, match="PolynomialFeatures.*StandardScaler"):
        save_model(pipe, tmp_path / "p.npz")
    assert list(tmp_path.iterdir()) == []


def test_unfitted_pipeline_is_refused(tmp_path):
    pipe = make_pipeline(StandardScaler(), MKLClassifier(kernels=SPECS))
    with pytest.raises(ValueError, match="not fitted"):
        save_model(pipe, tmp_path / "p.npz")


def test_other_estimators_are_refused(tmp_path):
    with pytest.raises(ValueError, match="save_model stores"):
        save_model(StandardScaler().fit(np.eye(3)), tmp_path / "s.npz")


# --------------------------------------------------------------------------- tampering
def _members(path):
    with np.load(path, allow_pickle=False) as archive:
        return {key: archive[key] for key in archive.files}


def _write(path, arrays, header=None):
    arrays = dict(arrays)
    if header is not None:
        arrays["header"] = np.array(json.dumps(header))
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)
    return path


@pytest.fixture(scope="module")
def multiclass_file(tmp_path_factory):
    X, X_new = _data()
    pipe = make_pipeline(StandardScaler(), MKLClassifier(kernels=SPECS, C=10)).fit(X, _three(X))
    path = tmp_path_factory.mktemp("tamper") / "m.npz"
    save_model(pipe, path)
    arrays = _members(path)
    return path, arrays, json.loads(str(arrays["header"]))


def _edit(header, dotted, value):
    header = json.loads(json.dumps(header))
    target = header
    *parents, last = dotted.split(".")
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if value is _DELETE:
        del target[last]
    else:
        target[last] = value
    return header


_DELETE = object()

HEADER_EDITS = {
    "version-0": ("version", 0, "valid model format version"),
    "version-bool": ("version", True, "valid model format version"),
    "version-future": ("version", persistence.VERSION + 1, "upgrade mklearn"),
    "estimator": ("estimator", "SVC", "unknown estimator"),
    "classes-dropped": ("classes", [0, 10], "kernel_weights.*shape"),
    "classes-repeated": ("classes", [0, 10, 10], "repeated"),
    "classes-type": ("classes", [0, "a", 20], "declared type"),
    "n_support": ("n_support", 3, "dual_coef.*shape"),
    "n_support-negative": ("n_support", -1, "n_support"),
    "n_features": ("n_features_in", 2, "shape"),
    "kernel-names": ("kernel_names", ["a", "b", "c"], "shape"),
    "kernel-spec": ("kernels.0.type", "sigmoid", "Unknown kernel type"),
    "kernel-column": ("kernels.3.features", [7], "feature index 7"),
    "param": ("params.C", -1, "C"),
    "unknown-param": ("params.colour", "red", "colour"),
    "fit-info": ("fit.n_iter", [1, 2], "fit.n_iter"),
    "dtype": ("dtype", "object", "dtype"),
    "pipeline-step-type": ("pipeline.0.type", "FunctionTransformer", "not one of"),
    "pipeline-step-width": ("pipeline.0.n_features_in", 9, "number of features"),
    "pipeline-names": ("final_step", "standardscaler", "unique"),
    "missing-key": ("kernel_names", _DELETE, "kernel_names"),
}


@pytest.mark.parametrize("edit", list(HEADER_EDITS), ids=list(HEADER_EDITS))
def test_hand_edited_header_gives_a_clear_value_error(tmp_path, multiclass_file, edit):
    path, arrays, header = multiclass_file
    key, value, message = HEADER_EDITS[edit]
    bad = _write(tmp_path / "bad.npz", arrays, _edit(header, key, value))
    with pytest.raises(ValueError, match=message):
        load_model(bad)


ARRAY_EDITS = {
    "weights-shape": ("kernel_weights", lambda a: a[:, :-1], "kernel_weights.*shape"),
    "weights-negative": ("kernel_weights", lambda a: -a, ">= 0"),
    "weights-nan": ("kernel_weights", lambda a: np.where(a > 0, np.nan, a), "NaN"),
    "dual-shape": ("dual_coef", lambda a: a[:, :-1], "dual_coef.*shape"),
    "dual-inf": ("dual_coef", lambda a: np.where(a != 0, np.inf, a), "NaN or infinite"),
    "intercept-rows": ("intercept", lambda a: a[:2], "intercept.*shape"),
    "sv-columns": ("support_vectors", lambda a: a[:, :2], "support_vectors.*shape"),
    "trace-scales-zero": ("trace_scales", lambda a: a * 0, "> 0"),
    "scale-negative": ("scale", lambda a: -a, "> 0"),
    "int-dtype": ("dual_coef", lambda a: a.astype(np.int64), "dtype"),
    "string-dtype": ("mean", lambda a: a.astype(str), "dtype"),
    "step-array": ("step0.mean_", lambda a: a[:-1], "step0.mean_.*shape"),
    "missing": ("trace_scales", None, "trace_scales.*missing"),
}


@pytest.mark.parametrize("edit", list(ARRAY_EDITS), ids=list(ARRAY_EDITS))
def test_hand_edited_arrays_give_a_clear_value_error(tmp_path, multiclass_file, edit):
    path, arrays, _ = multiclass_file
    name, change, message = ARRAY_EDITS[edit]
    arrays = dict(arrays)
    if change is None:
        del arrays[name]
    else:
        arrays[name] = change(arrays[name])
    bad = _write(tmp_path / "bad.npz", arrays)
    with pytest.raises(ValueError, match=message):
        load_model(bad)


def test_object_member_is_refused_without_unpickling(tmp_path, multiclass_file):
    path, arrays, _ = multiclass_file
    arrays = dict(arrays, dual_coef=np.array([{"x": 1}], dtype=object))
    bad = _write(tmp_path / "bad.npz", arrays)
    with pytest.raises(ValueError, match="dual_coef.*dtype object"):
        load_model(bad)


def test_unneeded_huge_member_is_never_read(tmp_path, multiclass_file, monkeypatch):
    # A member the model does not use is not opened, whatever its size; the file is refused
    # as damaged (it is not a file save_model writes).
    path, arrays, _ = multiclass_file
    bad = _write(tmp_path / "extra.npz", dict(arrays, payload=np.zeros(4_000_000)))
    opened = []
    original = zipfile.ZipFile.open

    def spy(self, name, *args, **kwargs):
        opened.append(getattr(name, "filename", name))
        return original(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", spy)
    with pytest.raises(ValueError, match="damaged mklearn model file: unexpected member "
                       "'payload.npy'"):
        load_model(bad)
    assert "payload.npy" not in opened
    X, X_new = _data()
    without = _write(tmp_path / "same.npz", arrays)  # the same members without it load
    np.testing.assert_array_equal(load_model(without).predict(X_new),
                                  load_model(path).predict(X_new))


def test_member_size_is_checked_before_reading(tmp_path, multiclass_file, monkeypatch):
    # The zip directory says dual_coef is far larger than its declared shape: refused before
    # any of its data is read (a zip bomb could otherwise claim gigabytes).
    path, arrays, header = multiclass_file
    bad = tmp_path / "big.npz"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(bad, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "dual_coef.npy":
                data = data + b"\0" * 8_000_000
            target.writestr(info.filename, data, compress_type=zipfile.ZIP_DEFLATED)
    reads = []
    original = zipfile.ZipExtFile.read

    def spy(self, n=-1):
        reads.append(n)
        return original(self, n)

    monkeypatch.setattr(zipfile.ZipExtFile, "read", spy)
    with pytest.raises(ValueError, match="dual_coef.*bytes in the archive"):
        load_model(bad)
    assert max(n for n in reads) < 1_000_000 and -1 not in reads


def test_corrupted_member_data_is_a_value_error(tmp_path, multiclass_file):
    path, _, _ = multiclass_file
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("dual_coef.npy")
    data[info.header_offset + 30 + len(info.filename) + 140] ^= 0xFF  # inside the data
    bad = tmp_path / "crc.npz"
    bad.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="damaged"):
        load_model(bad)


def test_cli_predict_with_an_edited_model_exits_2_with_one_line(tmp_path, multiclass_file,
                                                                capsys):
    from mklearn.cli import main

    path, arrays, header = multiclass_file
    bad = _write(tmp_path / "bad.npz", arrays, _edit(header, "n_support", 2))
    X, _ = _data()
    data = tmp_path / "x.csv"
    np.savetxt(data, X, delimiter=",")
    assert main(["predict", str(bad), "--data", str(data)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mklearn: error: ") and "dual_coef" in err
    assert err.count("\n") == 1
