"""The one-shot weight learners (average, align, ALIGNF, FHeuristic, PWMK) and the SVM on
fixed weights: weights against exact references, the SVM against scikit-learn's, the
streamed sums against a stack, and their errors."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.svm import SVC, SVR
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn_checks import expected_failed_checks

from mklearn import MKLClassifier, MKLRegressor, load_model, save_model
from mklearn.cli import main
from mklearn.kernels import RBF, KernelBank, Linear, Polynomial
from mklearn.kernels.columns import KernelColumns, StackColumns
from mklearn.solvers import SOLVERS, alignf_mkl
from mklearn.solvers.fixed_weights import classification_task, fixed_weight_svm
from mklearn.solvers.kernel_sums import kernel_sums
from mklearn.solvers.tasks import RegressionTask

FAMILY = [RBF(sigma=0.5), RBF(sigma=2.0), RBF(sigma=8.0), Linear(), Polynomial(degree=2)]
ONE_SHOT = ["average", "align", "alignf", "fheuristic", "pwmk"]


def _data(n=60, seed=0, regression=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    if regression:
        return X, np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    return X, np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 0.5, 1, -1)


def _stack(X):
    return KernelBank(FAMILY).fit_transform(X)  # (n, n, m)


def _centred(stack):
    n = stack.shape[0]
    H = np.eye(n) - 1.0 / n
    return np.stack([H @ stack[:, :, k] @ H for k in range(stack.shape[2])])


def _alignf_reference(stack, y):
    """ALIGNF by cvxpy + Clarabel: argmin_{v >= 0} v'Mv - 2 v'a, normalised to sum 1."""
    Kc = _centred(stack)
    flat = Kc.reshape(Kc.shape[0], -1)
    M = flat @ flat.T
    a = np.array([y @ K @ y for K in Kc])  # <K^c, yy'> = y'K^c y
    v = cp.Variable(M.shape[0], nonneg=True)
    problem = cp.Problem(cp.Minimize(cp.quad_form(v, cp.psd_wrap(M)) - 2 * a @ v))
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    weights = np.maximum(v.value, 0.0)
    return weights / weights.sum()


@pytest.mark.parametrize("regression", [False, True])
def test_alignf_weights_equal_the_clarabel_reference(regression):
    X, y = _data(regression=regression)
    stack = _stack(X)
    reference = _alignf_reference(stack, y.astype(float))
    if regression:
        model = MKLRegressor(kernels="precomputed", solver="alignf").fit(stack, y)
    else:
        model = MKLClassifier(kernels="precomputed", solver="alignf").fit(stack, y)
    np.testing.assert_allclose(model.kernel_weights_, reference, atol=1e-4)
    assert np.count_nonzero(reference > 1e-3) >= 2  # a combination, not one kernel


@pytest.mark.parametrize("regression", [False, True])
def test_align_weights_equal_a_direct_computation(regression):
    X, y = _data(regression=regression)
    stack = _stack(X)
    Kc = _centred(stack)
    yc = y - y.mean()
    Lc = np.outer(yc, yc)
    rho = np.array([np.sum(K * Lc) / (np.linalg.norm(K) * np.linalg.norm(Lc)) for K in Kc])
    expected = np.maximum(rho, 0) / np.maximum(rho, 0).sum()
    estimator = MKLRegressor if regression else MKLClassifier
    model = estimator(kernels="precomputed", solver="align").fit(stack, y)
    np.testing.assert_allclose(model.kernel_weights_, expected, atol=1e-10)


def test_fheuristic_is_the_uncentred_alignment_with_the_ideal_kernel():
    X, y = _data()
    stack = _stack(X)
    ideal = np.outer(y, y)
    score = np.array([np.sum(stack[:, :, k] * ideal) / (np.linalg.norm(stack[:, :, k]) * len(y))
                      for k in range(stack.shape[2])])
    model = MKLClassifier(kernels="precomputed", solver="fheuristic").fit(stack, y)
    np.testing.assert_allclose(model.kernel_weights_, score / score.sum(), atol=1e-10)


def test_average_weights_are_uniform():
    X, y = _data()
    model = MKLClassifier(kernels=FAMILY, solver="average").fit(X, y)
    np.testing.assert_allclose(model.kernel_weights_, np.full(len(FAMILY), 0.2))


@pytest.mark.parametrize("layout", ["kernel-major view", "C-contiguous (n, n, m)", "from X"])
def test_average_model_is_svc_on_the_average_kernel(layout):
    X, y = _data(80)
    stack = _stack(X)  # KernelBank's: the transposed view of an (m, n, n) array
    if layout == "from X":
        model = MKLClassifier(kernels=FAMILY, solver="average", C=2.0, tol=1e-10).fit(X, y)
        stack = model.bank_.transform(X)  # the kernels as the fit scaled them
    else:
        given = np.ascontiguousarray(stack) if layout.startswith("C-") else stack
        model = MKLClassifier(kernels="precomputed", solver="average", C=2.0,
                              tol=1e-10).fit(given, y)
        np.testing.assert_array_equal(given, stack)  # the caller's stack is left as it was
    average = stack.mean(axis=2)
    svc = SVC(kernel="precomputed", C=2.0, tol=1e-10).fit(average, y)
    dual = np.zeros(len(y))
    dual[svc.support_] = svc.dual_coef_[0]
    np.testing.assert_allclose(model.dual_coef_.ravel(), dual[model.support_], atol=1e-5)
    assert model.intercept_[0] == pytest.approx(svc.intercept_[0], abs=1e-5)
    test = stack[:20] if layout != "from X" else X[:20]
    np.testing.assert_allclose(model.decision_function(test),
                               svc.decision_function(average[:20]), atol=1e-5)


def test_average_checks_the_kernel_its_svm_reads():
    X, y = _data()
    stack = np.ascontiguousarray(_not_psd_stack(X))
    stack[:, :, 3] = 1.0  # the constant kernel lifts the indefinite kernel 2's direction 1
    assert np.linalg.eigvalsh(stack.mean(axis=2))[0] > 0
    result = SOLVERS["average"].function(StackColumns(stack), y.astype(float), 1.0, tol=1e-8)
    svc = SVC(kernel="precomputed", C=1.0, tol=1e-10).fit(stack.mean(axis=2), y)
    assert result.intercept == pytest.approx(svc.intercept_[0], abs=1e-4)
    with pytest.raises(ValueError, match=r"kernel\[2\] is not PSD: eigenvalue"):
        SOLVERS["align"].function(StackColumns(stack), y.astype(float), 1.0)


def test_pwmk_weights_follow_the_cross_validated_accuracies():
    X, y = _data()
    model = MKLClassifier(kernels=FAMILY, solver="pwmk",
                          solver_options={"cv": 3, "delta": 0.5}).fit(X, y)
    accuracy = np.array(model.history_[0]["accuracies"])
    expected = accuracy - 0.5 * accuracy.min()
    np.testing.assert_allclose(model.kernel_weights_, expected / expected.sum(), atol=1e-12)
    assert np.all((accuracy > 0.4) & (accuracy <= 1.0))
    assert model.n_svm_solves_ == 1 + 3 * len(FAMILY)


@pytest.mark.parametrize("input_kind, cache_size", [("stack", 1.0), ("rows", 1.0),
                                                    ("rows", 0.02)])  # K(d) at once, by rows
def test_fixed_weight_svm_equals_svc_on_the_combined_kernel(input_kind, cache_size):
    X, y = _data(80)
    stack = _stack(X)
    d = np.array([0.5, 0.0, 0.3, 0.2, 0.0])
    provider = StackColumns(stack) if input_kind == "stack" else KernelColumns(
        KernelBank(FAMILY).fit(X))
    result = fixed_weight_svm(provider, classification_task(y, 2.0), d, tol=1e-10,
                              cache_size=cache_size)
    svc = SVC(kernel="precomputed", C=2.0, tol=1e-10).fit(stack @ d, y)
    dual = np.zeros(len(y))
    dual[svc.support_] = svc.dual_coef_[0]
    np.testing.assert_allclose(result.alpha * y, dual, atol=1e-4)
    assert result.intercept == pytest.approx(svc.intercept_[0], abs=1e-4)
    assert result.n_svm_solves == 1 and len(result.history) == result.n_iter  # one per check
    assert result.converged
    assert 0 <= result.relative_duality_gap <= 1e-10
    np.testing.assert_array_equal(result.kernel_weights, d)


def test_fixed_weight_svr_equals_sklearn_svr():
    X, y = _data(70, regression=True)
    stack = _stack(X)
    d = np.array([0.2, 0.4, 0.0, 0.0, 0.4])
    task = RegressionTask(y, 1.5, 0.1)
    result = fixed_weight_svm(StackColumns(stack), task, d, tol=1e-10)
    svr = SVR(kernel="precomputed", C=1.5, epsilon=0.1, tol=1e-10).fit(stack @ d, y)
    dual = np.zeros(len(y))
    dual[svr.support_] = svr.dual_coef_[0]
    np.testing.assert_allclose(task.coefficients(result.alpha), dual, atol=1e-4)
    assert result.intercept == pytest.approx(svr.intercept_[0], abs=1e-4)


@pytest.mark.parametrize("solver", ["average", "alignf", "pwmk"])
def test_estimator_model_equals_svc_on_its_learned_kernel(solver):
    X, y = _data(70)
    stack = _stack(X)
    model = MKLClassifier(kernels="precomputed", solver=solver, C=3.0, tol=1e-10).fit(stack, y)
    svc = SVC(kernel="precomputed", C=3.0, tol=1e-10).fit(stack @ model.kernel_weights_, y)
    np.testing.assert_allclose(model.decision_function(stack),
                               svc.decision_function(stack @ model.kernel_weights_), atol=1e-4)


@pytest.mark.parametrize("solver", ["align", "alignf", "fheuristic", "pwmk", "average"])
def test_same_weights_from_a_stack_and_from_rows_of_x(solver):
    X, y = _data(90)
    from_x = MKLClassifier(kernels=FAMILY, solver=solver, tol=1e-8,
                           solver_options={"cache_size": 0.5}).fit(X, y)
    assert from_x.kernel_storage_ == "rows"  # streamed: no stack
    stack = from_x.bank_.transform(X)  # the kernels the estimator computed from X
    stacked = MKLClassifier(kernels="precomputed", solver=solver, tol=1e-8).fit(stack, y)
    np.testing.assert_allclose(from_x.kernel_weights_, stacked.kernel_weights_, atol=1e-10)
    np.testing.assert_allclose(from_x.decision_function(X), stacked.decision_function(stack),
                               atol=1e-5)


def test_streamed_sums_in_small_blocks_equal_the_stack():
    X, y = _data(50)
    stack = _stack(X)
    sums = kernel_sums(KernelColumns(KernelBank(FAMILY).fit(X)), y.astype(float),
                       frobenius=True, block_mb=0.05)  # blocks of a few rows
    flat = stack.transpose(2, 0, 1).reshape(len(FAMILY), -1)
    np.testing.assert_allclose(sums.frobenius, flat @ flat.T, rtol=1e-12)
    Kc = _centred(stack).reshape(len(FAMILY), -1)
    np.testing.assert_allclose(sums.centred_products(), Kc @ Kc.T, rtol=1e-9, atol=1e-9)
    yc = y - y.mean()
    np.testing.assert_allclose(sums.centred_targets(),
                               [yc @ stack[:, :, k] @ yc for k in range(len(FAMILY))],
                               rtol=1e-10)


def test_subsample_estimate_warns_and_stays_close():
    X, y = _data(400)
    exact = MKLClassifier(kernels=FAMILY, solver="alignf").fit(X, y)
    with pytest.warns(UserWarning, match="random subset of 200 of the 400 points"):
        estimate = MKLClassifier(kernels=FAMILY, solver="alignf",
                                 solver_options={"subsample_size": 200}).fit(X, y)
    assert estimate.history_[0]["estimate"] == "subsample"
    assert exact.history_[0]["estimate"] == "exact"
    assert np.abs(estimate.kernel_weights_ - exact.kernel_weights_).max() < 0.15
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # asked for exact: no warning
        MKLClassifier(kernels=FAMILY, solver="alignf",
                      solver_options={"estimate": "exact", "subsample_size": 200}).fit(X, y)


@pytest.mark.parametrize("solver", ONE_SHOT)
def test_multiclass_one_vs_rest_with_two_jobs(solver):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 3))
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.5, 0.5])
    model = MKLClassifier(kernels=FAMILY, solver=solver, n_jobs=2).fit(X, y)
    assert model.kernel_weights_.shape == (3, len(FAMILY))
    np.testing.assert_allclose(model.kernel_weights_.sum(axis=1), 1.0)
    assert model.score(X, y) > 0.8


@pytest.mark.parametrize("solver", ["average", "align", "alignf", "fheuristic"])
def test_regression_from_x_equals_svr_on_the_learned_kernel(solver):
    X, y = _data(80, regression=True)
    model = MKLRegressor(kernels=FAMILY, solver=solver, C=2.0, tol=1e-8).fit(X, y)
    stack = model.bank_.transform(X)
    svr = SVR(kernel="precomputed", C=2.0, epsilon=0.1, tol=1e-10).fit(
        stack @ model.kernel_weights_, y)
    np.testing.assert_allclose(model.predict(X), svr.predict(stack @ model.kernel_weights_),
                               atol=1e-4)
    assert model.score(X, y) > 0.5


def test_the_regulariser_does_not_enter():
    X, y = _data()
    models = [MKLClassifier(kernels=FAMILY, solver="alignf", regularizer=r).fit(X, y)
              for r in ("l1", "kl", "lp")]
    for model in models[1:]:
        np.testing.assert_array_equal(model.kernel_weights_, models[0].kernel_weights_)


def test_solver_auto_is_unchanged():
    X, y = _data()
    assert MKLClassifier(kernels=FAMILY).fit(X, y).solver_ == "smo"
    assert MKLClassifier(kernels=FAMILY, regularizer="l1").fit(X, y).solver_ == "spg"


# ------------------------------------------------------------------------- bad input
def _not_psd_stack(X):
    stack = _stack(X)
    n = len(X)
    stack[:, :, 2] = np.eye(n) - 0.5 * (np.ones((n, n)) - np.eye(n))  # unit diagonal, indefinite
    return stack


@pytest.mark.parametrize("solver", ONE_SHOT)
def test_kernels_that_are_not_psd_are_refused(solver):
    X, y = _data()
    stack = _not_psd_stack(X)
    with pytest.raises(ValueError, match=r"kernel\[2\] is not PSD: eigenvalue"):
        SOLVERS[solver].function(StackColumns(stack), y.astype(float), 1.0)
    with pytest.raises(ValueError, match="kernel 2 is not positive semi-definite"):
        MKLClassifier(kernels="precomputed", solver=solver).fit(stack, y)  # the stack's check


def test_a_negative_diagonal_is_refused():
    X, y = _data()
    stack = _stack(X)
    stack[3, 3, 1] = -1.0
    with pytest.raises(ValueError, match=r"kernel\[1\] has a negative diagonal entry"):
        alignf_mkl(StackColumns(stack), y, 1.0)


@pytest.mark.parametrize("solver", ["align", "alignf", "fheuristic"])
def test_all_zero_kernels_are_refused(solver):
    X, y = _data()
    stack = np.zeros((len(y), len(y), 3))
    with pytest.raises(ValueError, match="all.zero"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        MKLClassifier(kernels="precomputed", solver=solver).fit(stack, y)


def test_constant_targets_are_refused_by_the_alignments():
    X, _ = _data(regression=True)
    with pytest.raises(ValueError, match="y is constant"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        MKLRegressor(kernels=FAMILY, solver="alignf").fit(X, np.ones(len(X)))


def test_pwmk_names_a_class_too_small_for_its_folds():
    X, y = _data()
    y = np.where(np.arange(len(y)) < 2, 1, -1)
    with pytest.raises(ValueError, match="3-fold cross-validation.*2 of the target class"):
        MKLClassifier(kernels=FAMILY, solver="pwmk").fit(X, y)


def test_pwmk_has_no_regression():
    X, y = _data(regression=True)
    with pytest.raises(ValueError, match="'solver' parameter of MKLRegressor"):
        MKLRegressor(kernels=FAMILY, solver="pwmk").fit(X, y)


@pytest.mark.parametrize("solver, options, key", [
    ("alignf", {"estimate": "approximate"}, "estimate"),
    ("align", {"subsample_size": 1}, "subsample_size"),
    ("pwmk", {"delta": 2.0}, "delta"),
    ("pwmk", {"cv": 1}, "cv"),
    ("average", {"estimate": "exact"}, None),
])
def test_bad_options_are_named(solver, options, key):
    X, y = _data()
    match = (f"'{key}' parameter of solver '{solver}'" if key
             else r"\['estimate'\] are not options of solver 'average'")
    with pytest.raises(ValueError, match=match):
        MKLClassifier(kernels=FAMILY, solver=solver, solver_options=options).fit(X, y)


def test_weights_given_to_the_fixed_svm_are_checked():
    X, y = _data()
    provider = StackColumns(_stack(X))
    task = classification_task(y, 1.0)
    for d, match in [(np.zeros(5), "all zero"), (-np.ones(5), ">= 0"), (np.ones(3), "one entry")]:
        with pytest.raises(ValueError, match=match):
            fixed_weight_svm(provider, task, d)


# ------------------------------------------------------------------ files and the CLI
@pytest.mark.parametrize("solver", ["alignf", "pwmk"])
def test_a_model_of_a_one_shot_learner_saves_and_loads(tmp_path, solver):
    X, y = _data()
    model = MKLClassifier(kernels=FAMILY, solver=solver).fit(X, y)
    save_model(model, tmp_path / "model.npz")
    loaded = load_model(tmp_path / "model.npz")
    assert loaded.solver_ == solver
    np.testing.assert_array_equal(loaded.kernel_weights_, model.kernel_weights_)
    np.testing.assert_allclose(loaded.decision_function(X), model.decision_function(X))


def test_cli_fits_with_a_one_shot_learner(capsys):
    status = main(["fit", "--dataset", "liver", "--solver", "alignf", "-C", "1"])
    out = capsys.readouterr().out
    assert status == 0
    assert "solver alignf (ALIGNF" in out


def test_every_one_shot_learner_is_registered_for_columns():
    for name in ONE_SHOT:
        info = SOLVERS[name]
        assert info.input == "columns" and info.accepts(None)
    assert not SOLVERS["pwmk"].takes_task and SOLVERS["alignf"].takes_task


@parametrize_with_checks(
    [MKLClassifier(kernels=FAMILY[:3], solver="alignf", C=10.0),
     MKLClassifier(kernels=FAMILY[:3], solver="pwmk", C=10.0),
     MKLRegressor(kernels=FAMILY[:3], solver="align", C=100.0)],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_contract(estimator, check):
    check(estimator)
