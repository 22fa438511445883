"""One regression test per kind of bad input (docs/bad_input.md lists them)."""

from __future__ import annotations

import os
import time
import warnings

import numpy as np
import pytest

from mklearn import MKLClassifier, MKLKernel, MKLRegressor, OneClassMKL
from mklearn.cli import main
from mklearn.datasets import load_data_file
from mklearn.formulation.regularizers import REGULARIZERS
from mklearn.kernels import RBF, KernelBank, Polynomial
from mklearn.kernels.stack_checks import check_learned_kernel
from mklearn.persistence import atomic_write
from mklearn.solvers import SOLVERS, solvers_for
from mklearn.validation import DegenerateModelWarning

FAMILY = [RBF(sigma=1.0), RBF(sigma=3.0), Polynomial(degree=2)]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1, -1)
    return X, y


def _stack(X):
    sq = ((X[:, None] - X[None]) ** 2).sum(-1)
    return np.stack([np.exp(-sq), np.exp(-sq / 9.0), (1 + X @ X.T) ** 2], axis=-1)


def _cli(capsys, *argv):
    status = main(list(map(str, argv)))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# ----------------------------------------------------------------- degenerate kernels
@pytest.mark.parametrize("solver, regularizer", [("spg", "l1"), ("smo", "lp")])
def test_all_zero_stack_warns_of_a_constant_model(data, solver, regularizer):
    _, y = data
    zero = np.zeros((40, 40, 2))
    model = MKLClassifier(kernels="precomputed", solver=solver, regularizer=regularizer)
    with pytest.warns(DegenerateModelWarning, match="precomputed kernels are equal"):
        model.fit(zero, y)
    assert np.unique(model.predict(zero)).size == 1


def test_all_zero_stack_is_refused_by_mwu(data):
    _, y = data  # MWUMKL normalises by the traces: it cannot run at all
    with pytest.warns(DegenerateModelWarning), pytest.raises(ValueError, match="zero trace"):
        MKLClassifier(kernels="precomputed", solver="mwu").fit(np.zeros((40, 40, 2)), y)


@pytest.mark.parametrize(
    "estimator",
    [
        MKLClassifier(kernels=FAMILY),
        MKLClassifier(kernels=FAMILY, solver="smo", regularizer="lp"),
        MKLClassifier(kernels=FAMILY, solver="mwu"),
        MKLRegressor(kernels=FAMILY),
        OneClassMKL(kernels=FAMILY),
    ],
    ids=["spg", "smo", "mwu", "regressor", "one-class"],
)
def test_constant_features_warn_and_the_model_still_predicts(data, estimator):
    X, y = data
    constant = np.ones_like(X)
    with pytest.warns(DegenerateModelWarning, match="rows of X are identical"):
        estimator.fit(constant, None if isinstance(estimator, OneClassMKL) else y)
    prediction = estimator.predict(constant)  # smo failed: "kernel_indices must select..."
    assert np.unique(prediction).size == 1
    assert np.all(np.isfinite(np.asarray(prediction, dtype=float)))


def test_features_too_tiny_for_unstandardised_kernels_warn(data):
    X, y = data
    with pytest.warns(DegenerateModelWarning, match="kernels do not vary over X"):
        MKLClassifier(kernels=FAMILY).fit(X * 1e-300, y)


def test_targets_inside_the_tube_warn(data):
    X, _ = data
    with pytest.warns(DegenerateModelWarning, match="epsilon"):
        MKLRegressor(kernels=FAMILY, epsilon=0.1).fit(X, np.full(40, 3.0))


def test_mwu_on_constant_features_predicts_one_class_everywhere(data):
    X, y = data
    model = MKLClassifier(kernels=FAMILY, solver="mwu")
    with pytest.warns(DegenerateModelWarning, match="rows of X are identical"):
        model.fit(np.ones_like(X), y)
    # other points used to get either class from rounding (dual coefficients summing to 7e-18)
    assert np.unique(model.predict(X)).size == 1
    assert np.all(model.decision_function(X) == model.intercept_[0])


@pytest.mark.parametrize("features", [np.ones((40, 3)), np.full((40, 3), 1e300)],
                         ids=["ones", "1e300"])
def test_product_on_constant_features_warns(data, features):
    X, y = data
    model = MKLClassifier(kernels="features", combination="product")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(features, y)
    degenerate = [w for w in caught if issubclass(w.category, DegenerateModelWarning)]
    assert len(degenerate) == 1 and "rows of X are identical" in str(degenerate[0].message)
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert np.unique(model.predict(X)).size == 1


def test_product_on_features_near_1e300_is_the_model_of_the_features(data):
    X, y = data
    reference = MKLClassifier(kernels="features", combination="product").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow in the square
        scaled = MKLClassifier(kernels="features", combination="product").fit(X * 1e300, y)
    # the same standardised problem (a non-convex one: the two runs, which round
    # differently, may stop at different stationary points)
    np.testing.assert_allclose(scaled.product_.transform(X * 1e300),
                               reference.product_.transform(X), rtol=1e-12, atol=1e-12)
    assert np.any(scaled.kernel_weights_ > 0)
    assert np.mean(scaled.predict(X * 1e300) == y) >= 0.9


def test_product_whose_widths_all_vanish_warns(data):
    X, y = data
    with pytest.warns(DegenerateModelWarning, match="every learned width .* Lower lam"):
        MKLClassifier(kernels="features", combination="product", lam=1e6).fit(X, y)


def test_product_of_zero_distances_warns(data):
    _, y = data
    with pytest.warns(DegenerateModelWarning, match="all precomputed distances are zero"):
        MKLClassifier(kernels="precomputed_distances", combination="product").fit(
            np.zeros((40, 40, 2)), y)


@pytest.mark.parametrize("storage", ["stack", "rows"])
def test_spectrum_order_longer_than_every_sequence_warns(storage):
    from mklearn.kernels.strings import Spectrum

    rng = np.random.default_rng(0)
    sequences = np.array(["".join(rng.choice(list("ACGT"), size=6)) for _ in range(30)])
    y = np.where(np.arange(30) % 2 == 0, 1, -1)
    model = MKLClassifier(kernels=[Spectrum(order=8), Spectrum(order=9)],
                          kernel_storage=storage)
    with pytest.warns(DegenerateModelWarning, match="spectrum order longer than every"):
        model.fit(sequences, y)
    assert np.unique(model.predict(sequences)).size == 1


# ----------------------------------------------------------------------------- scale
@pytest.mark.parametrize("factor", [1e307, 1e300, 1e-300])
def test_standardisation_is_scale_invariant(data, factor):
    X, y = data
    # simple_mkl: standardised features; C = 0.25 with kernels of mean diagonal 1 is C = 10
    # with unit-trace kernels on these 40 points; tol 1e-6: the weights are compared, and a
    # relative gap of 1e-3 leaves them loose to about 1e-3 (the SVC kernel at 1e307 rounds
    # differently, so the two runs stop at different points)
    reference = MKLClassifier(C=0.25, tol=1e-6).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        scaled = MKLClassifier(C=0.25, tol=1e-6).fit(X * factor, y)
    np.testing.assert_allclose(scaled.kernel_weights_, reference.kernel_weights_, atol=1e-6)
    np.testing.assert_array_equal(scaled.predict(X * factor), reference.predict(X))


def test_standardisation_that_would_overflow_is_refused(data):
    X, y = data
    X = X.copy()
    X[:, 0] = np.where(np.arange(40) % 3 == 0, 1.7e308, -1.7e308)  # X - mean overflows
    with pytest.raises(ValueError, match="standardising them overflows"):
        MKLClassifier().fit(X, y)


def test_test_points_far_outside_the_training_range_are_refused(data):
    X, y = data
    model = MKLClassifier(kernels=FAMILY, C=0.25).fit(X, y)  # C = 10 on unit-trace kernels
    with pytest.raises(ValueError, match="kernels between X and the training points overflow"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model.predict(X * 1e300)
    stack_model = MKLClassifier(kernels="precomputed", C=10.0).fit(_stack(X), y)
    with pytest.raises(ValueError, match="test stack has entries up to"):
        stack_model.predict(_stack(X) * 1e200)


@pytest.mark.parametrize(
    "make", [MKLClassifier, MKLRegressor, lambda: OneClassMKL(kernels=[RBF(sigma=1.0)]),
             lambda: MKLClassifier(combination="product", kernels="features")],
    ids=["classifier", "regressor", "one-class", "product"])
def test_test_points_far_outside_the_training_range_warn_with_their_count(data, make):
    X, y = data
    model = make().fit(X, X[:, 0] if isinstance(make(), MKLRegressor) else y)
    far = X.copy()
    far[:3] = 1e300  # every feature: every kernel to the training points is 0
    far[3, 1] = -1e300
    decide = getattr(model, "decision_function", model.predict)  # the regressor: predict
    with pytest.warns(UserWarning, match=r"4 of 40 test points lie far outside the training "
                                         r"range .* x\[0\] = 1e\+300, trained on \[-"):
        scores = decide(far)
    np.testing.assert_allclose(scores[:3], model.intercept_[0], rtol=1e-12)  # it alone
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        decide(X * 3.0 + 1.0)  # outside, but not far
        model.predict(X)


def test_huge_kernel_stack_is_refused_with_the_fix(data):
    X, y = data
    with pytest.raises(ValueError, match=r"diagonal entries up to .*e\+20\d.*rescale the kernels"):
        MKLClassifier(kernels="precomputed", solver="smo", regularizer="lp").fit(
            _stack(X) * 1e200, y)


@pytest.mark.parametrize("solver", ["auto", "smo", "mwu", "spg", "average"])
def test_float32_stack_near_its_largest_value_is_refused(data, solver):
    X, y = data
    kernel = X @ X.T + np.eye(len(X))  # entries of both signs: K_ii + K_jj passes 3.4e38
    stack = (kernel / kernel.max() * 3e38)[:, :, None]
    model = MKLClassifier(kernels="precomputed", solver=solver)
    # smo raised numba's OverflowError with no message, mwu "math domain error"
    with pytest.raises(ValueError, match=r"float32 with diagonal entries up to 3e\+38, above "
                       r"the 1e\+30 .* rescale the kernels.* or pass the stack as float64"):
        model.fit(stack.astype(np.float32), y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the fix named works: float64
        assert np.isfinite(model.fit(stack, y).decision_function(stack)).all()


def test_a_float64_stack_that_overflows_smo_mkl_says_to_rescale(data):
    X, y = data
    kernel = X @ X.T + np.eye(len(X))
    stack = np.stack([kernel * 1e60, kernel], axis=2)  # within the range the check passes
    # SMO-MKL's step raised numba's OverflowError with no message
    with pytest.raises(ValueError, match=r"SMO solve overflowed float64.*rescale the kernels"):
        MKLClassifier(kernels="precomputed").fit(stack, y)


def test_huge_regression_targets_are_refused(data):
    X, y = data
    with pytest.raises(ValueError, match="overflow.*rescale y"):
        MKLRegressor(kernels=FAMILY).fit(X, y * 1e300)


def test_features_too_large_for_unstandardised_kernels_are_refused(data):
    X, y = data
    with pytest.raises(ValueError, match="kernels computed from X overflow.*rescale X"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        MKLClassifier(kernels=FAMILY).fit(X * 1e300, y)


# ------------------------------------------------------------------ indefinite kernels
def test_indefinite_kernel_is_found_above_the_exact_budget():
    n = 700  # m n^3 above the budget of the exact per-kernel check: Lanczos on the sum
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(n, 2))
    sq = ((Z[:, None] - Z[None]) ** 2).sum(-1)
    stack = np.stack([np.exp(-sq), -sq / sq.max()], axis=-1)  # the second is indefinite
    y = np.where(Z[:, 0] > 0, 1, -1)
    with pytest.raises(ValueError, match=r"kernel 1 is not positive semi-definite \(smallest "
                                         r"eigenvalue -\d"):
        MKLClassifier(kernels="precomputed", max_iter=5).fit(stack, y)


@pytest.mark.parametrize("n", [50, 400])
def test_indefinite_learned_kernel_is_refused_with_its_eigenvalue(n):
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(n, 2))
    sq = ((Z[:, None] - Z[None]) ** 2).sum(-1)
    stack_km = np.stack([np.exp(-sq), -sq / sq.max()])
    check_learned_kernel(stack_km, np.array([1.0, 0.0]))  # PSD part alone: fine
    with pytest.raises(ValueError, match=r"learned kernel.*\(smallest eigenvalue -\d"):
        check_learned_kernel(stack_km, np.array([0.5, 0.5]))


# ----------------------------------------------------------------------------- labels
def test_labels_mixing_numbers_and_strings_are_refused(data):
    X, _ = data
    mixed = np.array([1, "a"] * 20, dtype=object)
    with pytest.raises(ValueError, match="mixes strings with other label types"):
        MKLClassifier(kernels=FAMILY).fit(X, mixed)
    with pytest.raises(ValueError, match="y contains None"):
        MKLClassifier(kernels=FAMILY).fit(X, np.array([1, None] * 20, dtype=object))


def test_strings_in_X_are_named(data):
    X, y = data
    text = X.astype(object)
    text[0, 0] = "a"
    with pytest.raises(ValueError, match="X contains non-numeric values such as 'a'.*encode"):
        MKLClassifier(kernels=FAMILY).fit(text, y)


def test_string_targets_for_regression_are_refused(data, tmp_path, capsys):
    X, _ = data
    with pytest.raises(ValueError, match="real-valued targets.*MKLClassifier"):
        MKLRegressor(kernels=FAMILY).fit(X, np.array(["a", "b"] * 20))
    path = tmp_path / "strings.csv"
    path.write_text("".join(f"{a:.3f},{b:.3f},{'yes' if a > 0 else 'no'}\n" for a, b in X[:, :2]))
    status, _, err = _cli(capsys, "fit", "--data", path, "--task", "regression")
    assert status == 2 and err.count("\n") == 1
    assert "real-valued targets" in err and "--task classification" in err


def test_continuous_labels_for_classification_point_to_regression(data, tmp_path, capsys):
    X, _ = data
    path = tmp_path / "continuous.csv"
    np.savetxt(path, np.column_stack([X, X[:, 0] * 1.37]), delimiter=",")
    status, _, err = _cli(capsys, "fit", "--data", path)
    assert status == 2 and "--task regression" in err and err.count("\n") == 1


# ---------------------------------------------------------------------------- options
def _a_regularizer(info):
    """The first regulariser name (alphabetically) whose class the solver accepts."""
    return next(name for name, part in sorted(REGULARIZERS.items()) if info.accepts(part))


def _estimators_for_every_solver(options):
    for name, info in SOLVERS.items():
        regularizer = _a_regularizer(info)
        yield MKLClassifier(kernels=FAMILY, solver=name, regularizer=regularizer,
                            solver_options=options)
    for solver, regularizer in [("smo", "lp"), ("silp", "l1"), ("spg", "l1"), ("alignf", "lp")]:
        yield MKLRegressor(kernels=FAMILY, solver=solver, regularizer=regularizer,
                           solver_options=options)
    for solver in ("silp", "spg"):
        yield OneClassMKL(kernels=FAMILY, solver=solver, solver_options=options)


def _fail_on_kernels(monkeypatch):
    """Any kernel computation fails the test: options must be checked before."""
    from mklearn.kernels import KernelBank

    def forbidden(*args, **kwargs):
        raise AssertionError("kernels were computed before the options were checked")

    monkeypatch.setattr(KernelBank, "fit", forbidden)
    monkeypatch.setattr(KernelBank, "fit_transform", forbidden)


@pytest.mark.parametrize("n_jobs", [0, 1.5, "all"])
def test_n_jobs_zero_is_refused_by_the_parameter_check(data, monkeypatch, n_jobs):
    """joblib used to refuse ``n_jobs=0`` after the kernels were computed."""
    _fail_on_kernels(monkeypatch)
    X, y = data
    with pytest.raises(ValueError, match="'n_jobs' parameter of MKLClassifier .* or None"):
        MKLClassifier(n_jobs=n_jobs).fit(X, y)
    for fine in (-1, -2, 1, 2, None):
        MKLClassifier(n_jobs=fine)._validate_params()


@pytest.mark.parametrize(
    "estimator", list(_estimators_for_every_solver({"bogus": 1})),
    ids=lambda e: f"{type(e).__name__}-{e.solver}",
)
def test_unknown_solver_option_is_named_with_the_valid_ones(data, estimator, monkeypatch):
    X, y = data
    _fail_on_kernels(monkeypatch)
    valid = sorted(SOLVERS[estimator.solver].options)
    with pytest.raises(ValueError, match=r"\['bogus'\] are not options of solver") as info:
        estimator.fit(X, y)
    assert all(name in str(info.value) for name in valid)


@pytest.mark.parametrize(
    "solver, options",
    [("spg", {"spectral": "yes"}), ("pgd", {"inner_tol": "x"}), ("smo", {"cache_size": -1}),
     ("mwu", {"variant": "fast"}), ("mirror", {"step": 3}), ("silp", {"chunk_steps": 1.5})],
)
def test_solver_option_of_the_wrong_type_is_refused(data, solver, options, monkeypatch):
    X, y = data
    _fail_on_kernels(monkeypatch)
    regularizer = _a_regularizer(SOLVERS[solver])
    key = next(iter(options))
    with pytest.raises(ValueError, match=f"'{key}' parameter of solver '{solver}'"):
        MKLClassifier(kernels=FAMILY, solver=solver, regularizer=regularizer,
                      solver_options=options).fit(X, y)


@pytest.mark.parametrize("keyword, value", [("groups", [0, 1]), ("class_weight", "balanced"),
                                            ("probability", True)])
def test_classifier_parameters_given_to_the_regressor_are_named(keyword, value):
    with pytest.raises(TypeError, match=f"MKLRegressor.* unexpected keyword argument '{keyword}'"):
        MKLRegressor(**{keyword: value})
    assert keyword not in MKLRegressor().get_params()
    if keyword not in MKLKernel().get_params():
        return
    with pytest.raises(ValueError, match=f"{keyword}=.* is a parameter of classification.*"
                                         "task='classification'"):
        MKLKernel(task="regression", **{keyword: value}).fit(*_regression_data())


def _regression_data():
    X = np.random.default_rng(0).normal(size=(20, 2))
    return X, X[:, 0]


def test_lam_with_easymkl_points_to_its_own_lambda(data, monkeypatch):
    X, y = data
    default = MKLClassifier(kernels=FAMILY, solver="easymkl").fit(X, y)
    own = MKLClassifier(kernels=FAMILY, solver="easymkl", solver_options={"lam": 0.9}).fit(X, y)
    assert not np.allclose(own.kernel_weights_, default.kernel_weights_)  # the lambda that acts
    _fail_on_kernels(monkeypatch)
    with pytest.raises(ValueError, match=r"lam=1.5 is the weight of a regulariser, which solver "
                                         r"'easymkl' does not use; its own lambda is "
                                         r"solver_options=\{'lam': ...\} \(default 0.1\)"):
        MKLClassifier(kernels=FAMILY, solver="easymkl", lam=1.5).fit(X, y)


# ------------------------------------------------------------------------ save paths
def test_save_to_a_missing_directory_fails_before_fitting(tmp_path, capsys, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("fit ran before the output path was checked")

    monkeypatch.setattr(MKLClassifier, "fit", forbidden)
    target = tmp_path / "absent" / "model.npz"
    status, _, err = _cli(capsys, "fit", "--dataset", "sonar", "--cv", "3", "--save", target)
    assert status == 2 and err.count("\n") == 1
    assert str(target) in err and "does not exist" in err


def test_predict_output_to_a_missing_directory_fails_first(tmp_path, capsys):
    target = tmp_path / "absent" / "predictions.txt"
    status, _, err = _cli(capsys, "predict", tmp_path / "no-model.npz", "--data",
                          tmp_path / "no-data.csv", "--output", target)
    assert status == 2 and str(target) in err


def _unwritable(kind, tmp_path):
    """An output path no file can be written to, and a word of the message naming why."""
    if kind == "proc":
        if not os.path.isdir("/proc/self"):
            pytest.skip("no /proc")
        return "/proc/x.model", "cannot be created in /proc"
    if kind == "directory":
        return tmp_path, "is a directory"
    if kind == "missing parent":
        return tmp_path / "absent" / "x.model", "does not exist"
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)  # renaming a file onto it would replace it
    return pipe, "not a regular file"


@pytest.mark.parametrize("kind", ["proc", "directory", "missing parent", "pipe"])
@pytest.mark.parametrize("option", ["--save", "--output"])
def test_unwritable_output_path_fails_before_any_data_is_read(tmp_path, capsys, monkeypatch,
                                                              kind, option):
    def forbidden(*args, **kwargs):
        raise AssertionError("data or model read before the output path was checked")

    import mklearn.cli

    for name in ("_load", "load_model", "load_data_file"):
        monkeypatch.setattr(mklearn.cli, name, forbidden)
    monkeypatch.setattr(MKLClassifier, "fit", forbidden)
    target, why = _unwritable(kind, tmp_path)
    argv = (["fit", "--dataset", "sonar", "--save", target] if option == "--save" else
            ["predict", tmp_path / "model.npz", "--data", "x.csv", "--output", target])
    status, _, err = _cli(capsys, *argv)
    assert status == 2 and err.count("\n") == 1 and err.startswith("mklearn: error: ")
    assert "cannot write" in err and f"{target}:" in err and why in err and ".tmp" not in err


def test_failed_write_leaves_no_temporary_file(tmp_path):
    with pytest.raises(RuntimeError), atomic_write(tmp_path / "out.txt") as handle:
        handle.write("partial")
        raise RuntimeError("interrupted")
    assert os.listdir(tmp_path) == []


def test_next_save_removes_temporaries_of_killed_writers(tmp_path):
    stale = tmp_path / ".mklearn-killed.tmp"  # what kill -9 during a save leaves
    stale.write_text("partial")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    fresh = tmp_path / ".mklearn-fresh.tmp"  # may belong to a writer still starting
    fresh.write_text("partial")
    with atomic_write(tmp_path / "out.txt") as handle:
        handle.write("done")
    assert sorted(os.listdir(tmp_path)) == [".mklearn-fresh.tmp", "out.txt"]


def test_temporary_file_locked_by_a_live_writer_is_kept(tmp_path):
    with atomic_write(tmp_path / "a.txt") as handle:
        handle.write("a")
        (temporary,) = [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
        old = time.time() - 3600
        os.utime(tmp_path / temporary, (old, old))
        with atomic_write(tmp_path / "b.txt") as other:  # a second writer cleans up
            other.write("b")
        assert temporary in os.listdir(tmp_path)  # locked: the first writer is alive
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt"]


# ------------------------------------------------------------------------------ files
def test_libsvm_index_far_beyond_memory_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "huge.svm"
    path.write_text("".join(f"{1 if i % 2 else -1} 1:0.5 99999999:1\n" for i in range(208)))
    with pytest.raises(ValueError, match=r"indices up to 99999999.*GiB.*check the feature"):
        load_data_file(path)


def test_utf16_csv_names_the_encoding(tmp_path, capsys):
    path = tmp_path / "utf16.csv"
    path.write_text("0.1,0.2,1\n0.3,0.4,-1\n", encoding="utf-16")
    with pytest.raises(ValueError, match="UTF-16.*iconv"):
        load_data_file(path)
    status, _, err = _cli(capsys, "fit", "--data", path)
    assert status == 2 and "UTF-16" in err and err.count("\n") == 1


def test_latin1_csv_names_the_encoding(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("a,b,label\n0.1,0.2,caf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8 text"):
        load_data_file(path)


def test_utf8_bom_is_read(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_text("x,label\n0.5,1\n0.25,-1\n", encoding="utf-8-sig")
    X, y = load_data_file(path)
    np.testing.assert_array_equal(X.ravel(), [0.5, 0.25])


def test_label_column_for_a_libsvm_file_is_refused(tmp_path, capsys):
    path = tmp_path / "data.svm"
    path.write_text("1 1:0.5 2:1\n-1 1:0.25 2:0.5\n")
    with pytest.raises(ValueError, match="LIBSVM file.*label column"):
        load_data_file(path, label_column=0)
    status, _, err = _cli(capsys, "fit", "--data", path, "--label-column", "0")
    assert status == 2 and "--label-column" in err


def test_zero_kernel_stack_is_refused(data):
    _, y = data
    with pytest.raises(ValueError, match="has no kernels"):
        MKLClassifier(kernels="precomputed").fit(np.zeros((40, 40, 0)), y)


@pytest.mark.parametrize("kernels", [FAMILY, "precomputed"], ids=["X", "stack"])
def test_one_sample_regression_names_the_sample_count(data, kernels):
    X, _ = data
    one = X[:1] if kernels is FAMILY else _stack(X[:1])
    with pytest.raises(ValueError, match="at least 2 samples, got n_samples=1"):
        MKLRegressor(kernels=kernels).fit(one, [1.0])


def test_kill_9_during_a_save_is_cleaned_up_by_the_next_save(tmp_path):
    import signal
    import subprocess
    import sys

    writer = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\n"
         "from mklearn.persistence import atomic_write\n"
         f"with atomic_write({str(tmp_path / 'model.npz')!r}, 'wb') as handle:\n"
         "    handle.write(b'partial'); handle.flush(); print('writing', flush=True)\n"
         "    time.sleep(60)\n"],
        stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert writer.stdout.readline().strip() == "writing"
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)
    (leftover,) = os.listdir(tmp_path)  # atexit and finally blocks never ran
    assert leftover.startswith(".mklearn-") and leftover.endswith(".tmp")
    old = time.time() - 3600
    os.utime(tmp_path / leftover, (old, old))
    with atomic_write(tmp_path / "model.npz") as handle:
        handle.write("complete")
    assert os.listdir(tmp_path) == ["model.npz"]


def test_a_model_that_predicts_one_class_for_every_training_point_warns(data):
    X, y = data
    stack = KernelBank([RBF(sigma=3.0)], standardize=True).fit(X).transform(X)  # trace 1
    model = MKLClassifier(kernels="precomputed")
    with pytest.warns(DegenerateModelWarning, match="predicts class .* for all 40 training "
                      "points checked.*Raise C"):
        model.fit(stack, y)
    assert np.unique(model.predict(stack)).size == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        MKLClassifier(kernels="precomputed", C=1e4).fit(stack, y)  # separates: no warning


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_one_class_check_on_a_stack_reads_the_decision_function_values(n_classes):
    # the check scores training points from the fit's kernels, not through decision_function
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = np.arange(60) % n_classes
    stack = KernelBank([RBF(sigma=1.0), RBF(sigma=3.0, features=[0, 1])],
                       standardize=True).fit(X).transform(X)
    model = MKLClassifier(kernels="precomputed", C=10.0).fit(stack, y)
    picked = np.array([0, 7, 31, 59])
    operator = model._stack_operator(stack)
    np.testing.assert_allclose(model._training_scores(operator, picked),
                               model.decision_function(stack[picked]), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("solver", sorted(solvers_for("classification")))
def test_a_stack_of_equal_kernels_gives_the_svm_on_the_learned_kernel(data, solver):
    from sklearn.svm import SVC

    X, y = data
    K = KernelBank([RBF(sigma=2.0)], standardize=True, normalize="diagonal").fit(X).transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mwu's own C: a one-class model, with its warning
        model = MKLClassifier(kernels="precomputed", solver=solver).fit(np.repeat(K, 3, 2), y)
    total = float(np.sum(model.kernel_weights_))
    assert total > 0
    svc = SVC(kernel="precomputed").fit(total * K[:, :, 0], y)
    np.testing.assert_array_equal(model.predict(np.repeat(K, 3, 2)),
                                  svc.predict(total * K[:, :, 0]))
