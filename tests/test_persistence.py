"""Tests of :mod:`mklearn.persistence`: pickle-free model files, errors and atomic saves."""

from __future__ import annotations

import io
import json
import os
import stat
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

import mklearn.persistence as persistence
from mklearn import MKLClassifier, load_model, save_model
from mklearn.kernels import RBF, Laplacian, Linear, Polynomial, simple_mkl_kernels

SPECS = [
    RBF(sigma=1.0),
    RBF(sigma=3.0),
    Polynomial(degree=2),
    Linear(features=[0]),
    Laplacian(sigma=2.0, features=(1, 2)),
    RBF(gamma=0.7, features=2),
]
RECIPE = simple_mkl_kernels(sigmas=(0.5, 2.0, 5.0), degrees=(1, 2))


def _data(n_classes, n=45, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 5.0, 0.2] + [0.0, 10.0, -3.0]
    if n_classes == 2:
        y = np.where(X[:, 0] + 0.1 * X[:, 1] + 0.3 * rng.normal(size=n) > 1.0, 1, -1)
    else:
        y = np.array(["low", "mid", "high"])[np.digitize(X[:, 0], [-0.45, 0.45])]
    X_new = rng.normal(size=(17, 3)) * [1.0, 5.0, 0.2] + [0.0, 10.0, -3.0]
    return X, y, X_new


@pytest.fixture(scope="module", params=[2, 3], ids=["binary", "3-class"])
def fitted(request):
    X, y, X_new = _data(request.param)
    model = MKLClassifier(kernels=SPECS, C=10).fit(X, y)
    return model, X, y, X_new


def _temp_leftovers(directory):
    return sorted(
        p.name
        for p in Path(directory).iterdir()
        if p.name.startswith(".mklearn-") or p.name.endswith(".tmp")
    )


def _rewrite_header(source, target, **changes):
    """Copy a model file, updating keys of its JSON header."""
    with np.load(source, allow_pickle=False) as archive:
        arrays = {key: archive[key] for key in archive.files}
    header = json.loads(str(arrays["header"]))
    header.update(changes)
    arrays["header"] = np.array(json.dumps(header))
    with open(target, "wb") as handle:
        np.savez(handle, **arrays)
    return target


# ----------------------------------------------------------------------- round trip
@pytest.mark.parametrize("n_classes", [2, 3], ids=["binary", "3-class"])
@pytest.mark.parametrize("kernels", [SPECS, RECIPE], ids=["specs", "recipe"])
def test_round_trip_reproduces_the_model(tmp_path, n_classes, kernels):
    X, y, X_new = _data(n_classes)
    model = MKLClassifier(kernels=kernels, C=10).fit(X, y)
    path = tmp_path / "model.npz"
    save_model(model, path)
    loaded = load_model(path)

    assert type(loaded) is MKLClassifier
    for data in (X, X_new):
        np.testing.assert_allclose(
            loaded.decision_function(data), model.decision_function(data), rtol=0, atol=1e-10
        )
        np.testing.assert_array_equal(loaded.predict(data), model.predict(data))
    np.testing.assert_array_equal(loaded.classes_, model.classes_)
    assert loaded.classes_.dtype.kind == model.classes_.dtype.kind
    np.testing.assert_array_equal(loaded.kernel_weights_, model.kernel_weights_)
    assert loaded.kernel_weights_.shape == model.kernel_weights_.shape
    np.testing.assert_array_equal(loaded.dual_coef_, model.dual_coef_)
    np.testing.assert_array_equal(loaded.intercept_, model.intercept_)
    assert loaded.kernel_names_ == model.kernel_names_
    assert loaded.n_features_in_ == 3
    np.testing.assert_allclose(loaded.objective_, model.objective_)
    np.testing.assert_allclose(loaded.duality_gap_, model.duality_gap_)
    np.testing.assert_array_equal(loaded.n_iter_, model.n_iter_)
    assert loaded.score(X, y) == model.score(X, y)
    params = loaded.get_params()
    for name in ("solver", "regularizer", "p", "lam", "C", "tol", "max_iter", "kernel_dtype"):
        assert params[name] == model.get_params()[name], name
    assert [s.name for s in params["kernels"]] == model.kernel_names_


def test_round_trip_keeps_standardisation_and_trace_scales(tmp_path):
    # The recipe standardises features (columns here have very different scales) and
    # every kernel is unit-trace normalised on the training data: both must be stored.
    X, y, X_new = _data(2)
    model = MKLClassifier(kernels=RECIPE, C=10, kernel_normalization="trace").fit(X, y)
    save_model(model, tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz", allow_pickle=False) as archive:
        np.testing.assert_allclose(archive["mean"], X.mean(axis=0))
        np.testing.assert_allclose(archive["scale"], X.std(axis=0))
        assert archive["trace_scales"].shape == (len(model.kernel_names_),)
        header = json.loads(str(archive["header"]))
    assert header["standardize"] is True and header["normalize"] == "trace"
    np.testing.assert_allclose(
        load_model(tmp_path / "m.npz").decision_function(X_new),
        model.decision_function(X_new),
        rtol=0,
        atol=1e-10,
    )


@pytest.mark.parametrize(
    "labels",
    [
        np.array([-1.0, 1.0]),
        np.array(["no", "yes"]),
        np.array(["no", "yes"], dtype=object),
        np.array([False, True]),
        np.array([3, 7]),
    ],
    ids=["float", "str", "object", "bool", "int"],
)
def test_round_trip_label_types(tmp_path, labels):
    X, y, X_new = _data(2)
    y = labels[(y > 0).astype(int)]
    model = MKLClassifier(kernels=SPECS[:3], C=10).fit(X, y)
    save_model(model, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.classes_, model.classes_)
    assert loaded.predict(X_new).tolist() == model.predict(X_new).tolist()
    assert loaded.predict(X_new).dtype.kind == model.predict(X_new).dtype.kind


def test_round_trip_float32_kernels_and_lp(tmp_path):
    X, y, X_new = _data(2)
    model = MKLClassifier(
        kernels=SPECS, C=10, kernel_dtype="float32", regularizer="lp", p=1.5, lam=0.5
    ).fit(X, y)
    save_model(model, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert (loaded.kernel_dtype, loaded.regularizer, loaded.p, loaded.lam) == (
        "float32",
        "lp",
        1.5,
        0.5,
    )
    np.testing.assert_allclose(
        loaded.decision_function(X_new), model.decision_function(X_new), rtol=0, atol=1e-10
    )


def test_loaded_model_can_be_cloned_and_refit(tmp_path, fitted):
    model, X, y, X_new = fitted
    save_model(model, tmp_path / "m.npz")
    refit = clone(load_model(tmp_path / "m.npz")).fit(X, y)
    np.testing.assert_allclose(
        refit.decision_function(X_new), model.decision_function(X_new), rtol=0, atol=1e-8
    )


def test_str_and_pathlike_paths_and_no_extension_added(tmp_path, fitted):
    model, X, _, _ = fitted
    save_model(model, str(tmp_path / "as-str.npz"))
    save_model(model, tmp_path / "no-extension")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["as-str.npz", "no-extension"]
    for path in (str(tmp_path / "as-str.npz"), tmp_path / "no-extension"):
        np.testing.assert_array_equal(load_model(path).predict(X), model.predict(X))


def test_overwriting_replaces_the_model(tmp_path, fitted):
    model, X, y, _ = fitted
    path = tmp_path / "m.npz"
    other = MKLClassifier(kernels=[Linear()], C=0.01).fit(X, y)
    save_model(other, path)
    save_model(model, path)
    np.testing.assert_allclose(
        load_model(path).decision_function(X), model.decision_function(X), rtol=0, atol=1e-10
    )
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]


# ----------------------------------------------------------------------- file format
def test_file_is_a_plain_npz_with_a_versioned_json_header(tmp_path, fitted):
    model, _, _, _ = fitted
    path = tmp_path / "m.npz"
    save_model(model, path)
    assert path.read_bytes()[:4] == b"PK\x03\x04"  # a zip archive, not a pickle stream
    with np.load(path, allow_pickle=False) as archive:
        arrays = {key: archive[key] for key in archive.files}  # no object arrays
    assert {
        "header",
        "kernel_weights",
        "dual_coef",
        "intercept",
        "support_vectors",
        "mean",
        "scale",
        "trace_scales",
    } <= set(arrays)
    assert all(a.dtype.kind != "O" for a in arrays.values())
    header = json.loads(str(arrays["header"]))
    assert header["format"] == persistence.FORMAT == "mklearn-model"
    assert header["version"] == 1  # sums of kernels keep the first format (persistence.VERSION: 2)
    assert header["estimator"] == "MKLClassifier"
    assert header["kernels"] == [spec.to_dict() for spec in SPECS]
    assert header["params"]["C"] == 10
    assert header["kernel_names"] == model.kernel_names_
    assert header["n_features_in"] == 3
    # only the support vectors are kept, one row per column of dual_coef
    n_sv = arrays["dual_coef"].shape[1]
    assert arrays["support_vectors"].shape == (n_sv, 3)
    assert n_sv == len(model.support_)
    assert arrays["kernel_weights"].shape == (np.atleast_2d(model.kernel_weights_).shape)


# ------------------------------------------------------------------------ load errors
def test_load_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "absent.npz")


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"just some text\n",
        b"\x80\x04\x95 pickle-ish bytes",
        b"PK\x03\x04 not really a zip",
    ],
    ids=["empty", "text", "pickle-like", "fake-zip"],
)
def test_load_non_model_file_raises_value_error(tmp_path, content):
    path = tmp_path / "x.npz"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="not an mklearn model file"):
        load_model(path)


def test_load_plain_npy_and_other_npz_raise_value_error(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(4))
    np.savez(tmp_path / "b.npz", weights=np.arange(4))
    np.savez(tmp_path / "c.npz", header=np.array("not json {"))
    np.savez(tmp_path / "d.npz", header=np.array(json.dumps({"format": "other", "version": 1})))
    for name in ("a.npy", "b.npz", "c.npz", "d.npz"):
        with pytest.raises(ValueError, match="not an mklearn model file"):
            load_model(tmp_path / name)


def test_load_object_array_is_refused_without_unpickling(tmp_path):
    np.savez(tmp_path / "o.npz", header=np.array([{"format": "mklearn-model"}], dtype=object))
    with pytest.raises(ValueError, match="not an mklearn model file"):
        load_model(tmp_path / "o.npz")


@pytest.mark.parametrize("keep", [0.5, 0.9, 100], ids=["half", "90%", "100-bytes"])
def test_load_truncated_file_raises_value_error(tmp_path, fitted, keep):
    model, _, _, _ = fitted
    save_model(model, tmp_path / "full.npz")
    data = (tmp_path / "full.npz").read_bytes()
    n = keep if isinstance(keep, int) else int(len(data) * keep)
    (tmp_path / "cut.npz").write_bytes(data[:n])
    with pytest.raises(ValueError, match="not an mklearn model file"):
        load_model(tmp_path / "cut.npz")


def test_load_future_version_raises_value_error(tmp_path, fitted):
    model, X, _, _ = fitted
    save_model(model, tmp_path / "m.npz")
    newer = persistence.VERSION + 1
    _rewrite_header(tmp_path / "m.npz", tmp_path / "newer.npz", version=newer)
    with pytest.raises(ValueError, match=rf"version {newer}; .* up to version \d+: upgrade"):
        load_model(tmp_path / "newer.npz")
    # the rewritten file is otherwise valid: the newest readable version loads
    _rewrite_header(tmp_path / "m.npz", tmp_path / "same.npz", version=persistence.VERSION)
    np.testing.assert_array_equal(load_model(tmp_path / "same.npz").predict(X), model.predict(X))


@pytest.mark.parametrize(
    "header",
    [
        "[1, 2, 3]",
        '"a string"',
        json.dumps({"format": "mklearn-model", "version": 1}),
        json.dumps({"format": "mklearn-model", "version": "2"}),
    ],
    ids=["list", "string", "missing-keys", "string-version"],
)
def test_load_malformed_header_raises_value_error(tmp_path, header):
    # A file with a JSON header that is not a model header is "not a model file": the
    # documented ValueError, not AttributeError / KeyError / TypeError.
    np.savez(tmp_path / "m.npz", header=np.array(header))
    with pytest.raises(ValueError):
        load_model(tmp_path / "m.npz")


def test_load_inconsistent_arrays_raises_value_error(tmp_path, fitted):
    model, _, _, _ = fitted
    save_model(model, tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz", allow_pickle=False) as archive:
        arrays = {key: archive[key] for key in archive.files}
    arrays["trace_scales"] = arrays["trace_scales"][:-1]
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError):
        load_model(tmp_path / "bad.npz")


def _rezip(source, target, edit):
    """Copy a model file's zip members as ``edit(list of (name, bytes))`` returns them."""
    with zipfile.ZipFile(source) as archive:
        members = [(name, archive.read(name)) for name in archive.namelist()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns of a duplicate name
        with zipfile.ZipFile(target, "w") as archive:
            for name, data in edit(members):
                archive.writestr(name, data)
    return target


def _twice(member, changed):
    """Members with ``member`` stored a second time (numbers doubled if ``changed``)."""
    def edit(members):
        data = dict(members)[member]
        array = np.load(io.BytesIO(data))
        if changed and array.dtype.kind == "f":
            buffer = io.BytesIO()
            np.save(buffer, array * 2.0)
            data = buffer.getvalue()
        return [*members, (member, data)]
    return edit


@pytest.mark.parametrize("member", ["kernel_weights.npy", "dual_coef.npy", "header.npy"])
@pytest.mark.parametrize("changed", [False, True], ids=["same", "other-values"])
def test_a_member_stored_twice_is_refused_as_damaged(tmp_path, fitted, member, changed):
    model, _, _, _ = fitted
    save_model(model, tmp_path / "m.npz")
    _rezip(tmp_path / "m.npz", tmp_path / "twice.npz", _twice(member, changed))
    before = (tmp_path / "twice.npz").read_bytes()
    with pytest.raises(ValueError, match=rf"damaged mklearn model file: member '{member}' is "
                       "stored 2 times"):
        load_model(tmp_path / "twice.npz")
    assert (tmp_path / "twice.npz").read_bytes() == before  # a refused load changes nothing


@pytest.mark.parametrize("member", ["header.npy", "intercept.npy"])
def test_an_npy_header_numpy_cannot_tokenize_is_refused(tmp_path, fitted, member):
    # "'shape':((), }" made numpy's header parser raise tokenize.TokenError
    model, _, _, _ = fitted
    save_model(model, tmp_path / "m.npz")

    def edit(members):
        data = dict(members)[member]
        at = data.index(b"'shape': (")
        return [(n, data[:at + 8] + b"(" + data[at + 9:] if n == member else d)
                for n, d in members]

    _rezip(tmp_path / "m.npz", tmp_path / "bad.npz", edit)
    with pytest.raises(ValueError, match=rf"member '{member[:-4]}' is not a valid .npy array"):
        load_model(tmp_path / "bad.npz")


@pytest.mark.parametrize("extra", ["notes.txt", "kernel_weights2.npy", "probA.npy"])
def test_an_unexpected_member_is_refused_as_damaged(tmp_path, fitted, extra):
    model, X, _, _ = fitted
    save_model(model, tmp_path / "m.npz")
    _rezip(tmp_path / "m.npz", tmp_path / "extra.npz",
           lambda members: [*members, (extra, dict(members)["intercept.npy"])])
    with pytest.raises(ValueError, match=rf"damaged mklearn model file: unexpected member "
                       rf"'{extra}'"):
        load_model(tmp_path / "extra.npz")
    # the same file without the extra member loads
    np.testing.assert_array_equal(load_model(tmp_path / "m.npz").predict(X), model.predict(X))


# ------------------------------------------------------------------------ save errors
def test_a_model_holding_infinite_values_is_refused_at_save_time(tmp_path):
    # the scaler's variance of features near 1e300 overflows; the file would not load
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = np.random.default_rng(0).normal(size=(4, 3)) * 1e300
    y = np.where(X[:, 0] > 0, 1, -1)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        pipe = make_pipeline(StandardScaler(), MKLClassifier(kernels=RECIPE)).fit(X, y)
    assert not np.all(np.isfinite(pipe[0].var_))
    with pytest.raises(ValueError, match=r"NaN or infinite values \(step0.var_: its fit "
                       r"overflowed\), so a file of it would not load"):
        save_model(pipe, tmp_path / "m.npz")
    assert list(tmp_path.iterdir()) == []


def test_save_unfitted_model_raises_value_error(tmp_path):
    with pytest.raises(ValueError, match="not fitted"):
        save_model(MKLClassifier(kernels=SPECS), tmp_path / "m.npz")
    assert list(tmp_path.iterdir()) == []


def test_save_precomputed_model_raises_value_error(tmp_path):
    X, y, _ = _data(2)
    stack = np.stack([X @ X.T, np.exp(-0.1 * ((X[:, None] - X[None]) ** 2).sum(-1))], axis=2)
    model = MKLClassifier(kernels="precomputed", C=10).fit(stack, y)
    with pytest.raises(ValueError, match="precomputed"):
        save_model(model, tmp_path / "m.npz")
    assert list(tmp_path.iterdir()) == []


def test_save_numpy_scalar_parameters(tmp_path):
    # Parameters that pass validation (e.g. from np.arange / np.float32 grids in a search)
    # must not break saving with "Object of type int64 is not JSON serializable".
    X, y, X_new = _data(2)
    model = MKLClassifier(
        kernels=SPECS[:3], C=np.float32(10), max_iter=np.int64(200), tol=np.float32(1e-3)
    ).fit(X, y)
    save_model(model, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    np.testing.assert_allclose(
        loaded.decision_function(X_new), model.decision_function(X_new), rtol=0, atol=1e-10
    )
    assert _temp_leftovers(tmp_path) == []


def test_save_into_missing_directory_raises_os_error(tmp_path, fitted):
    model, _, _, _ = fitted
    with pytest.raises(OSError):
        save_model(model, tmp_path / "missing" / "m.npz")
    assert list(tmp_path.iterdir()) == []


def test_save_into_read_only_directory_raises_os_error(tmp_path, fitted):
    model, _, _, _ = fitted
    directory = tmp_path / "ro"
    directory.mkdir()
    directory.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(directory, os.W_OK):
            pytest.skip("directory permissions are not enforced (running as root)")
        with pytest.raises(OSError):
            save_model(model, directory / "m.npz")
        assert list(directory.iterdir()) == []
    finally:
        directory.chmod(stat.S_IRWXU)


def test_failing_rename_leaves_no_temp_file(tmp_path, fitted, monkeypatch):
    # What a read-only / full / cross-device target looks like at the last step.
    model, _, _, _ = fitted

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", str(dst))

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        save_model(model, tmp_path / "m.npz")
    assert list(tmp_path.iterdir()) == []


def test_save_onto_a_directory_raises_os_error_and_cleans_up(tmp_path, fitted):
    model, _, _, _ = fitted
    (tmp_path / "taken").mkdir()
    with pytest.raises(OSError):
        save_model(model, tmp_path / "taken")
    assert (tmp_path / "taken").is_dir() and list((tmp_path / "taken").iterdir()) == []
    assert _temp_leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "error",
    [OSError(28, "No space left on device"), KeyboardInterrupt()],
    ids=["disk-full", "interrupted"],
)
def test_failed_overwrite_keeps_the_old_file_intact(tmp_path, fitted, monkeypatch, error):
    model, X, y, _ = fitted
    path = tmp_path / "m.npz"
    save_model(model, path)
    before = path.read_bytes()

    def broken_savez(file, *args, **kwargs):
        file.write(b"PK\x03\x04 half a model")  # a partial write, then the failure
        raise error

    monkeypatch.setattr(np, "savez", broken_savez)
    other = MKLClassifier(kernels=[Linear()], C=0.01).fit(X, y)
    with pytest.raises(type(error)):
        save_model(other, path)
    monkeypatch.undo()

    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]
    np.testing.assert_allclose(
        load_model(path).decision_function(X), model.decision_function(X), rtol=0, atol=1e-10
    )


def test_failed_first_save_leaves_nothing(tmp_path, fitted, monkeypatch):
    model, _, _, _ = fitted

    def broken_savez(file, *args, **kwargs):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(np, "savez", broken_savez)
    with pytest.raises(OSError):
        save_model(model, tmp_path / "m.npz")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------- parameters beyond prediction (format 4)
@pytest.mark.parametrize("labels", [(-1, 1), ("no", "yes")], ids=["int", "str"])
def test_class_weight_dict_round_trips(tmp_path, labels):
    X, y, X_new = _data(2)
    y = np.where(y == 1, labels[1], labels[0])
    weights = {labels[0]: 3.0, np.array([labels[1]])[0]: 0.5}  # a numpy key too
    model = MKLClassifier(kernels=SPECS, C=10, class_weight=weights).fit(X, y)
    save_model(model, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert loaded.class_weight == {labels[0]: 3.0, labels[1]: 0.5}
    np.testing.assert_array_equal(loaded.predict(X_new), model.predict(X_new))
    refit = clone(loaded).fit(X, y)
    np.testing.assert_allclose(refit.decision_function(X_new), model.decision_function(X_new))


@pytest.mark.parametrize(
    "regularizer",
    ["LpNorm(1.5, 2.0)", "KLDivergence(0.5)", "KLDivergence(1.0, prior=np.arange(1.0, 7.0))"],
)
def test_built_in_regularizer_instances_round_trip(tmp_path, regularizer):
    from mklearn.formulation.regularizers import KLDivergence, LpNorm  # noqa: F401 (used by eval)

    X, y, X_new = _data(2)
    model = MKLClassifier(kernels=SPECS, C=10, regularizer=eval(regularizer)).fit(X, y)
    save_model(model, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert type(loaded.regularizer) is type(model.regularizer)
    for key, value in vars(model.regularizer).items():
        np.testing.assert_array_equal(getattr(loaded.regularizer, key), value)
    refit = clone(loaded).fit(X, y)
    np.testing.assert_allclose(refit.kernel_weights_, model.kernel_weights_, atol=1e-8)


def test_user_regularizer_is_refused_at_save_time(tmp_path):
    from mklearn.formulation.regularizers import LpNorm

    class MyNorm(LpNorm):
        pass

    X, y, _ = _data(2)
    model = MKLClassifier(kernels=SPECS, C=10, regularizer=MyNorm(2.0, 1.0)).fit(X, y)
    with pytest.raises(ValueError, match=r"regularizer=MyNorm.* cannot be saved.*LpNorm"):
        save_model(model, tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("n_classes", [2, 3])
def test_probability_model_round_trips_predict_proba(tmp_path, n_classes):
    X, y, X_new = _data(n_classes, n=60)
    model = MKLClassifier(kernels=SPECS, C=10, probability=True, random_state=0).fit(X, y)
    save_model(model, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.predict_proba(X_new), model.predict_proba(X_new))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"class_weight": [[7, 1.0]]}, "names class 7"),
        ({"class_weight": [[1, float("nan")]]}, "class, finite weight"),
        ({"class_weight": {"1": 2.0}}, "class, finite weight"),
        ({"regularizer": {"type": "os.system", "params": {}}}, "must be one of"),
        ({"regularizer": {"type": "LpNorm", "params": {"p": 0.5, "lam": 1.0}}}, "p > 1"),
        ({"regularizer": {"type": "KLDivergence", "params": {"lam": 1.0, "prior": [1.0]}}},
         "regularizer.prior"),
        ({"platt": "yes"}, "'platt'"),
        ({"platt": True}, "probability=True"),
        ({"version": 3}, "version 4"),
    ],
)
def test_edited_format_4_parts_give_a_clear_value_error(tmp_path, change, message):
    X, y, _ = _data(2)
    model = MKLClassifier(kernels=SPECS, C=10, class_weight={1: 2.0}).fit(X, y)
    save_model(model, tmp_path / "m.npz")
    _rewrite_header(tmp_path / "m.npz", tmp_path / "edited.npz", **change)
    with pytest.raises(ValueError, match=message):
        load_model(tmp_path / "edited.npz")


def test_the_regularizer_auto_chose_is_kept(tmp_path):
    X, y, X_new = _data(2)
    model = MKLClassifier(kernels=SPECS).fit(X, y)
    save_model(model, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert (loaded.regularizer, loaded.regularizer_, loaded.solver_) == ("auto", "kl", "smo")
    assert (loaded.lam, loaded.lam_) == ("auto", model.lam_)
    np.testing.assert_array_equal(loaded.predict(X_new), model.predict(X_new))


@pytest.mark.parametrize("lam", [-1.0, float("nan"), "15"])
def test_an_edited_lam_is_refused(tmp_path, lam):
    X, y, _ = _data(2)
    save_model(MKLClassifier(kernels=SPECS).fit(X, y), tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz", allow_pickle=False) as archive:
        header = json.loads(str(archive["header"]))
    _rewrite_header(tmp_path / "m.npz", tmp_path / "edited.npz",
                    fit={**header["fit"], "lam": lam})
    with pytest.raises(ValueError, match="'fit.lam' must be a positive number"):
        load_model(tmp_path / "edited.npz")
