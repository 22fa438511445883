"""Low-rank kernels: the maps, the feature-space solvers against exact optima of the same
problem (the stack ``Phi_k Phi_k'``), and the estimators' ``kernel_approximation``."""

import json

import cvxpy as cp
import numpy as np
import pytest
from reference import group_mkl_optimum, l1_mkl_optimum, l1_svr_optimum, lp_mkl_optimum
from sklearn.svm import SVC

from mklearn import MKLClassifier, MKLRegressor, load_model, save_model
from mklearn.formulation.combinations import SumOfKernels
from mklearn.formulation.regularizers import KLDivergence, L1Simplex, LpNorm, MixedNorm
from mklearn.groups import check_groups
from mklearn.kernels import RBF, KernelBank, Linear, Polynomial, resolve_kernels
from mklearn.kernels.columns import StackColumns
from mklearn.kernels.low_rank import (
    LowRankKernels,
    LowRankMap,
    low_rank_kernels,
    polynomial_exponents,
    polynomial_rank,
)
from mklearn.solvers import smo_mkl, spg_gmkl
from mklearn.solvers.easymkl import easymkl
from mklearn.solvers.feature_space import (
    average_features,
    easymkl_features,
    smooth_dual_features,
    spg_features,
)
from mklearn.solvers.kernel_sums import feature_kernel_sums, kernel_sums
from mklearn.solvers.mirror import mirror_features
from mklearn.solvers.tasks import RegressionTask

RTOL = 1e-4


def _mixed_points(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=(n, 3)), rng.integers(0, 2, size=(n, 2)),
                         rng.integers(0, 4, size=(n, 1))]).astype(float)
    y = np.where(X[:, 0] * X[:, 1] + X[:, 3] - 0.5 + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _low_rank(X, n_components=30, approximation="nystroem", kernels="svc+feature_rbf"):
    specs, standardize = resolve_kernels(kernels, X)
    bank = KernelBank(specs, standardize=standardize, normalize="diagonal").fit(X)
    mapping = LowRankMap(bank, approximation, n_components, random_state=0).fit()
    features = mapping.transform(bank.X_fit_, prepared=True)
    operator = LowRankKernels(features, mapping.starts_)
    blocks = zip(mapping.starts_[:-1], mapping.starts_[1:], strict=True)
    stack = np.stack([features[:, a:b] @ features[:, a:b].T for a, b in blocks], axis=2)
    return mapping, operator, stack


@pytest.fixture(scope="module")
def problem():
    X, y = _mixed_points()
    mapping, operator, stack = _low_rank(X)
    return X, y, mapping, operator, stack


@pytest.mark.parametrize("C", [1.0, 10.0])
def test_l1_in_feature_space_reaches_the_exact_optimum(problem, C):
    _, y, _, operator, stack = problem
    result = spg_features(operator, y, C, L1Simplex(), tol=1e-5)
    assert result.relative_duality_gap <= 1e-5
    assert result.objective == pytest.approx(l1_mkl_optimum(stack, y, C), rel=RTOL)
    assert result.kernel_weights.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("C", [1.0, 10.0])
def test_lp_in_feature_space_reaches_the_exact_optimum(problem, C):
    _, y, _, operator, stack = problem
    reference = lp_mkl_optimum(stack, y, C, 2.0, 1.0)
    smooth = smooth_dual_features(operator, y, C, LpNorm(2.0, 1.0), tol=1e-6)
    projected = spg_features(operator, y, C, LpNorm(2.0, 1.0), tol=1e-5)
    assert smooth.objective == pytest.approx(reference, rel=RTOL)
    assert projected.objective == pytest.approx(reference, rel=RTOL)


def test_kl_in_feature_space_is_the_exact_smo_mkl_optimum(problem):
    _, y, _, operator, stack = problem
    regularizer = KLDivergence(1.0)
    exact = smo_mkl(StackColumns(stack), y, 1.0, regularizer, tol=1e-7)
    ours = smooth_dual_features(operator, y, 1.0, regularizer, tol=1e-6)
    assert ours.objective == pytest.approx(exact.objective, rel=RTOL)
    np.testing.assert_allclose(ours.kernel_weights, exact.kernel_weights, rtol=1e-2,
                               atol=1e-4)


@pytest.mark.parametrize("C", [1.0, 10.0])
def test_group_mkl_in_feature_space_reaches_the_exact_optimum(problem, C):
    _, y, _, operator, stack = problem
    codes = np.arange(stack.shape[2]) % 3
    groups = check_groups(codes, stack.shape[2])
    result = mirror_features(operator, y, C, MixedNorm(groups), tol=1e-6, max_iter=2000)
    optimum = group_mkl_optimum(stack, y, C, codes)
    assert result.converged
    assert result.objective == pytest.approx(optimum, rel=RTOL)
    assert result.objective - result.duality_gap <= optimum * (1 + 1e-7)
    kernel = stack @ result.kernel_weights
    np.testing.assert_allclose(operator.features @ result.feature_coef,
                               kernel @ (result.alpha * y), atol=1e-8)


def _hull_optimum(features, y, a, b):
    """``min a ||Z' Y gamma||^2 + b ||gamma||^2`` over one simplex per class (cvxpy)."""
    gamma = cp.Variable(y.size)
    positive = y > 0
    objective = a * cp.sum_squares(features.T @ cp.multiply(y, gamma)) + b * cp.sum_squares(gamma)
    constraints = [gamma >= 0, cp.sum(gamma[positive]) == 1, cp.sum(gamma[~positive]) == 1]
    problem = cp.Problem(cp.Minimize(objective), constraints)
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return problem.value


@pytest.mark.parametrize("learner", ["svm", "komd"])
def test_easymkl_in_feature_space_reaches_the_exact_optimum(problem, learner):
    _, y, _, operator, stack = problem
    ours = easymkl_features(operator, y, 1.0, learner=learner, lam=0.2, tol=1e-8)
    exact = easymkl(SumOfKernels(stack), y, 1.0, learner=learner, lam=0.2, tol=1e-8)
    features = np.asarray(operator.features, dtype=np.float64)
    assert ours.relative_duality_gap <= 1e-8 and ours.converged
    assert ours.objective == pytest.approx(_hull_optimum(features, y, 0.8, 0.2), rel=RTOL)
    assert ours.objective == pytest.approx(exact.objective, rel=RTOL)
    np.testing.assert_allclose(ours.kernel_weights, exact.kernel_weights, atol=1e-4)
    decision = (stack @ exact.kernel_weights) @ (exact.alpha * y) + exact.intercept
    np.testing.assert_allclose(features @ ours.feature_coef + ours.intercept, decision,
                               atol=1e-3 * np.abs(decision).max())


def test_easymkl_fits_on_low_rank_kernels_as_on_exact_ones():
    X, y = _mixed_points(n=100)
    params = {"solver": "easymkl", "solver_options": {"learner": "komd"}}
    model = MKLClassifier(kernel_approximation="nystroem", n_components=100, **params)
    exact = MKLClassifier(kernel_approximation="exact", **params).fit(X, y)
    assert model.fit(X, y).kernel_storage_ == "features"
    np.testing.assert_allclose(model.kernel_weights_, exact.kernel_weights_, atol=1e-4)
    assert np.mean(model.predict(X) == exact.predict(X)) >= 0.99


def test_easymkl_in_feature_space_at_lam_one_is_the_class_means(problem):
    _, y, _, operator, stack = problem
    ours = easymkl_features(operator, y, 1.0, lam=1.0, learner="komd", komd_lam=1.0)
    exact = easymkl(SumOfKernels(stack), y, 1.0, lam=1.0, learner="komd", komd_lam=1.0)
    np.testing.assert_allclose(ours.kernel_weights, exact.kernel_weights, atol=1e-10)
    np.testing.assert_allclose(ours.alpha, exact.alpha, atol=1e-12)
    assert ours.converged and ours.relative_duality_gap == 0.0


def test_easymkl_in_feature_space_needs_a_ridge(problem):
    _, y, _, operator, _ = problem
    with pytest.raises(ValueError, match="lam > 0"):
        easymkl_features(operator, y, 1.0, lam=0.0)


def test_average_in_feature_space_is_the_svc_on_the_average_kernel(problem):
    _, y, _, operator, stack = problem
    result = average_features(operator, y, 1.0, tol=1e-7)
    kernel = stack.mean(axis=2)
    svc = SVC(kernel="precomputed", C=1.0, tol=1e-10).fit(kernel, y)
    alpha = np.zeros(y.size)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    v = alpha * y
    dual = alpha.sum() - 0.5 * v @ kernel @ v
    assert result.objective == pytest.approx(dual, rel=RTOL)


def test_regression_in_feature_space_reaches_the_exact_optima(problem):
    X, _, _, operator, stack = problem
    y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * np.cos(7 * X[:, 2])
    task = RegressionTask(y, 1.0, 0.1)
    l1 = spg_features(operator, None, None, L1Simplex(), tol=1e-6, task=task)
    assert l1.objective == pytest.approx(l1_svr_optimum(stack, y, 1.0, 0.1), rel=RTOL)
    lp = smooth_dual_features(operator, None, None, LpNorm(2.0, 1.0), tol=1e-6, task=task)
    exact = spg_gmkl(SumOfKernels(stack), None, None, LpNorm(2.0, 1.0), tol=1e-7, task=task)
    assert lp.objective == pytest.approx(exact.objective, rel=RTOL)


def test_the_decision_function_of_the_features_is_the_kernel_expansion(problem):
    _, y, _, operator, stack = problem
    result = spg_features(operator, y, 1.0, L1Simplex(), tol=1e-6)
    kernel = stack @ result.kernel_weights
    expansion = kernel @ (result.alpha * y)
    np.testing.assert_allclose(operator.features @ result.feature_coef, expansion, atol=1e-8)


def test_kernels_on_few_distinct_rows_and_linear_kernels_are_exact():
    X, _ = _mixed_points()
    specs = [RBF(sigma=1.0, features=[3]), RBF(sigma=0.5, features=[3, 4]),
             Linear(features=[0, 1]), Polynomial(degree=2, features=[5])]
    bank = KernelBank(specs, standardize=True, normalize="diagonal").fit(X)
    mapping = LowRankMap(bank, "nystroem", 10, random_state=0).fit()
    assert mapping.exact_.all()
    assert list(mapping.ranks_) == [2, 4, 2, 3]  # two values; four rows; two columns; a poly
    features = mapping.transform(bank.X_fit_, prepared=True)
    error, errors = mapping.error_on(bank.X_fit_, features)
    assert error < 1e-8 and errors.max() < 1e-8


def _dropped(X, kernels):
    """(map without constant parts, its operator, the true stack) of ``kernels`` on X."""
    specs, standardize = resolve_kernels(kernels, X)
    bank = KernelBank(specs, standardize=standardize, normalize="diagonal").fit(X)
    mapping = LowRankMap(bank, "nystroem", 30, random_state=0, drop_constants=True).fit()
    features = mapping.transform(bank.X_fit_, prepared=True)
    operator = LowRankKernels(features, mapping.starts_, mapping.constant_parts_)
    return mapping, operator, bank.transform(X)


def test_exact_kernels_drop_their_constant_part_one_column_each():
    X, _ = _mixed_points()
    kept, _, _ = _low_rank(X)
    mapping, operator, stack = _dropped(X, "svc+feature_rbf")
    dropped = mapping.constant_parts_ > 0
    assert np.array_equal(dropped, mapping.exact_) and dropped.sum() == 3  # 2 binary, 1 of 4
    np.testing.assert_array_equal(mapping.ranks_, kept.ranks_ - dropped)
    rows = np.moveaxis(operator.rows(np.arange(X.shape[0])), 0, 2)  # with c_k added back
    np.testing.assert_allclose(rows[:, :, dropped], stack[:, :, dropped], atol=1e-10)
    np.testing.assert_allclose(operator.diagonal().T, np.diagonal(rows).T, atol=1e-12)
    error, errors = mapping.error_on(mapping.bank.X_fit_, operator.features)
    assert errors[dropped].max() < 1e-8


@pytest.mark.parametrize("frobenius", [False, True])
def test_kernel_sums_from_features_add_the_constant_parts_back(frobenius):
    X, y = _mixed_points()
    _, operator, _ = _dropped(X, "svc+feature_rbf")
    values = np.moveaxis(operator.rows(np.arange(X.shape[0])), 0, 2)
    expected = kernel_sums(StackColumns(values), y, frobenius=frobenius)
    found = feature_kernel_sums(operator, y, frobenius=frobenius)
    for name in ("row_sums", "yky", "squares") + (("frobenius",) if frobenius else ()):
        np.testing.assert_allclose(getattr(found, name), getattr(expected, name),
                                   rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("solver", ["smo", "spg", "fheuristic", "easymkl"])
def test_dropped_constant_parts_leave_the_model_as_it_was(solver, monkeypatch):
    from mklearn.estimators import kernel_input

    X, y = _mixed_points(n=200)
    models = []
    for drop in (False, True):
        monkeypatch.setattr(kernel_input._KernelInput, "_drops_constants", drop)
        models.append(MKLClassifier(kernel_approximation="nystroem", n_components=40,
                                    solver=solver, tol=1e-7, random_state=0).fit(X, y))
    kept, dropped = models
    assert dropped.low_rank_.rank == kept.low_rank_.rank - 3
    assert dropped.objective_ == pytest.approx(kept.objective_, rel=1e-6)
    np.testing.assert_allclose(dropped.kernel_weights_, kept.kernel_weights_, atol=1e-3)
    np.testing.assert_allclose(dropped.decision_function(X), kept.decision_function(X),
                               atol=1e-3)


def test_one_column_exact_features_by_lookup_equal_the_kernels_and_new_values_compute_them():
    X, _ = _mixed_points()
    specs = [RBF(sigma=1.0, features=[3]), RBF(sigma=2.0, features=[3]),
             RBF(sigma=0.7, features=[5]), RBF(sigma=1.0)]
    bank = KernelBank(specs, standardize=True, normalize="diagonal").fit(X)
    mapping = LowRankMap(bank, "nystroem", 40, random_state=0).fit()
    test = _mixed_points(n=50, seed=1)[0]
    test[:5, 5] = 1.5  # a value of column 5 seen in no training point: no lookup there
    seen = mapping.transform(test[5:])
    for points, features in ((test[5:], seen), (test, mapping.transform(test))):
        exact = bank.transform(points)
        for k in range(3):  # the exact one-column kernels: features reproduce them
            a, b = mapping.starts_[k], mapping.starts_[k + 1]
            approx = features[:, a:b] @ mapping.transform(bank.X_fit_, prepared=True)[:, a:b].T
            np.testing.assert_allclose(approx, exact[:, :, k], atol=1e-10)
    np.testing.assert_allclose(mapping.transform(test)[5:], seen, atol=1e-12)


@pytest.mark.parametrize(("degree", "coef0", "gamma"), [(1, 1.0, 1.0), (2, 1.0, 0.5),
                                                     (3, 2.0, 0.3), (2, 0.0, 1.0)])
def test_polynomial_kernels_on_continuous_columns_have_their_exact_map(degree, coef0, gamma):
    X, _ = _mixed_points(n=90)
    specs = [Polynomial(degree=degree, coef0=coef0, gamma=gamma, features=[0, 1, 2]),
             Polynomial(degree=degree, coef0=coef0, gamma=gamma, features=[0])]
    bank = KernelBank(specs, standardize=True, normalize="trace").fit(X)
    mapping = LowRankMap(bank, "nystroem", 30, random_state=0).fit()
    assert mapping.exact_.all()
    assert list(mapping.ranks_) == [polynomial_rank(3, degree, coef0),
                                    polynomial_rank(1, degree, coef0)]
    assert polynomial_exponents(3, degree, coef0).shape[0] == mapping.ranks_[0]
    features = mapping.transform(X)
    test = X[:7] + 0.5
    stack = bank.transform(test)  # test against training points, exact
    mapped = mapping.transform(test)
    for k, (lo, hi) in enumerate(zip(mapping.starts_[:-1], mapping.starts_[1:], strict=True)):
        np.testing.assert_allclose(mapped[:, lo:hi] @ features[:, lo:hi].T, stack[:, :, k],
                                   rtol=1e-10, atol=1e-12)


def test_polynomial_maps_too_wide_or_with_negative_coef0_take_landmarks():
    X, _ = _mixed_points(n=90)
    specs = [Polynomial(degree=3, features=[0, 1, 2]), Polynomial(degree=2, coef0=-1.0,
                                                                  features=[0, 1])]
    bank = KernelBank(specs, standardize=True, normalize="trace").fit(X)
    with pytest.warns(UserWarning, match="rank-deficient"):  # the second: rank 6 at most
        mapping = LowRankMap(bank, "nystroem", 15, random_state=0).fit()  # C(6, 3) > 15
    assert not mapping.exact_.any()
    assert [group.route for group in mapping.groups_] == ["landmarks", "landmarks"]


def test_a_model_on_polynomial_maps_saves_and_loads(tmp_path):
    X, y = _mixed_points(n=90)
    kernels = [Polynomial(degree=2, features=[0, 1, 2]), RBF(sigma=1.0, features=[0])]
    model = MKLClassifier(kernels=kernels, kernel_approximation="nystroem", n_components=20,
                          random_state=0).fit(X, y)
    assert model.low_rank_.exact_[0] and model.low_rank_.ranks_[0] == 10
    save_model(model, tmp_path / "poly.npz")
    np.testing.assert_allclose(load_model(tmp_path / "poly.npz").decision_function(X),
                               model.decision_function(X), rtol=1e-12, atol=1e-12)


def test_nystroem_on_every_distinct_row_is_exact_and_smaller_ranks_are_measured():
    X, _ = _mixed_points(n=80)
    errors = {}
    for components in (80, 20, 5):
        mapping, operator, _ = _low_rank(X, n_components=components)
        errors[components] = mapping.error_on(mapping.bank.X_fit_, operator.features)[0]
    assert errors[80] < 1e-8
    assert errors[5] > errors[20] > errors[80]


def test_random_features_approximate_shift_invariant_kernels_only():
    X, _ = _mixed_points(n=100)
    coarse, _, _ = _low_rank(X, n_components=50, approximation="rff")
    fine, operator, _ = _low_rank(X, n_components=2000, approximation="rff")
    error_coarse = coarse.error_on(coarse.bank.X_fit_, coarse.transform(coarse.bank.X_fit_,
                                                                        prepared=True))[0]
    error_fine = fine.error_on(fine.bank.X_fit_, operator.features)[0]
    assert error_fine < 0.5 * error_coarse
    bank = KernelBank([Polynomial(degree=2)], normalize="diagonal").fit(X[:, :3])
    assert LowRankMap(bank, "rff", 10).fit().exact_.all()  # its map has C(5, 2) = 10 columns
    with pytest.raises(ValueError, match="shift-invariant"):
        LowRankMap(bank, "rff", 9).fit()


def test_rank_deficient_landmarks_warn_with_the_rank_kept():
    rng = np.random.default_rng(0)
    t = rng.normal(size=200)
    X = np.column_stack([t, 2 * t, -t, 3 * t, t / 2])  # every row on one line
    # a linear poly on 5 columns: its exact map has 6 columns, more than the 5 landmarks,
    # whose K_LL has rank 2
    bank = KernelBank([Polynomial(degree=1)], normalize="diagonal").fit(X)
    with pytest.warns(UserWarning, match="kept rank 2 of 5"):
        LowRankMap(bank, "nystroem", 5, random_state=0).fit()


def test_a_plan_that_does_not_fit_is_refused_with_the_bytes():
    X, _ = _mixed_points()
    specs, standardize = resolve_kernels("svc+feature_rbf", X)
    bank = KernelBank(specs, standardize=standardize, normalize="diagonal").fit(X)
    with pytest.raises(ValueError, match="(GiB|MB).*n_components.*float32"):
        low_rank_kernels(bank, "nystroem", 100, budget=1000)
    with pytest.raises(ValueError, match="n_components=500 is above n_samples=120"):
        low_rank_kernels(bank, "nystroem", 500, budget=1 << 30)


def test_the_estimators_fit_and_predict_on_low_rank_kernels():
    X, y = _mixed_points(n=200)
    model = MKLClassifier(kernel_approximation="nystroem", n_components=120, random_state=0)
    model.fit(X, y)
    assert model.kernel_storage_ == "features" and model.kernel_approximation_ == "nystroem"
    assert 0.0 <= model.approximation_error_ < 0.05
    assert model.coef_.shape == (1, model.low_rank_.rank)
    exact = MKLClassifier(kernel_approximation="exact").fit(X, y)
    assert np.mean(model.predict(X) == exact.predict(X)) >= 0.98
    assert model.objective_ == pytest.approx(exact.objective_, rel=0.05)  # 120 of 200 points
    multi = MKLClassifier(kernel_approximation="nystroem", n_components=40, random_state=0)
    labels = np.digitize(X[:, 0], [-0.5, 0.5])
    assert multi.fit(X, labels).decision_function(X).shape == (200, 3)
    regressor = MKLRegressor(kernel_approximation="nystroem", n_components=200,
                             random_state=0).fit(X, X[:, 0] ** 2)
    reference = MKLRegressor(kernel_approximation="exact").fit(X, X[:, 0] ** 2)
    assert regressor.objective_ == pytest.approx(reference.objective_, rel=1e-3)
    np.testing.assert_allclose(regressor.predict(X), reference.predict(X), rtol=5e-3, atol=1e-2)


def test_group_mkl_fits_on_low_rank_kernels_as_on_exact_ones(tmp_path):
    X, y = _mixed_points(n=120)
    params = {"regularizer": "group", "groups": [0, 1, 1, 1, 2, 2, 2], "tol": 1e-5}
    model = MKLClassifier(kernel_approximation="nystroem", n_components=120, **params)
    exact = MKLClassifier(kernel_approximation="exact", **params).fit(X, y)
    model.fit(X, y)
    assert model.solver_ == "mirror" and model.kernel_storage_ == "features"
    assert model.objective_ == pytest.approx(exact.objective_, rel=RTOL)  # every landmark
    assert model.groups_.n_groups == exact.groups_.n_groups
    np.testing.assert_allclose(model.decision_function(X), exact.decision_function(X),
                               atol=1e-3)
    save_model(model, tmp_path / "group.npz")
    np.testing.assert_allclose(load_model(tmp_path / "group.npz").decision_function(X),
                               model.decision_function(X), rtol=1e-12, atol=1e-12)


def test_one_kernel_on_every_landmark_is_the_svc():
    X, y = _mixed_points(n=150)
    model = MKLClassifier(kernels=[RBF(sigma=2.0)], kernel_approximation="nystroem",
                          n_components=150, tol=1e-6, kernel_normalization=None).fit(X, y)
    svc = SVC(kernel="rbf", gamma=1.0 / 8.0, C=1.0, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(model.decision_function(X), svc.decision_function(X),
                               atol=1e-3)


@pytest.mark.parametrize("params, message", [
    ({"kernel_approximation": "nystroem", "solver": "silp"}, "does not run on low-rank"),
    ({"kernel_approximation": "nystroem", "kernels": "precomputed"}, "numeric X"),
    ({"kernel_approximation": "rff", "kernels": [Polynomial(degree=2)], "n_components": 10},
     "shift-invariant"),
    ({"kernel_approximation": "nystroem", "n_components": 10_000}, "above n_samples"),
    ({"kernel_approximation": "nystroem", "solver": "spg",
      "solver_options": {"second_order": False}}, "do not apply"),
])
def test_bad_low_rank_requests_are_refused(params, message):
    X, y = _mixed_points(n=60)
    if params.get("kernels") == "precomputed":
        X = np.stack([X @ X.T], axis=2)
    with pytest.raises(ValueError, match=message):
        MKLClassifier(**params).fit(X, y)


def test_n_components_must_be_a_positive_integer():
    X, y = _mixed_points(n=40)
    for bad in (0, 2.5, "many"):
        with pytest.raises(ValueError, match="n_components"):
            MKLClassifier(kernel_approximation="nystroem", n_components=bad).fit(X, y)


@pytest.mark.parametrize("approximation", ["nystroem", "rff"])
def test_a_low_rank_model_file_predicts_as_the_model(tmp_path, approximation):
    X, y = _mixed_points(n=90)
    labels = np.digitize(X[:, 0], [-0.5, 0.5])
    for target in (y, labels):
        model = MKLClassifier(kernel_approximation=approximation, n_components=20,
                              random_state=0).fit(X, target)
        save_model(model, tmp_path / "model.npz")
        loaded = load_model(tmp_path / "model.npz")
        assert loaded.kernel_storage_ == "features"
        np.testing.assert_array_equal(loaded.low_rank_.constant_parts_,
                                      model.low_rank_.constant_parts_)
        np.testing.assert_allclose(loaded.decision_function(X), model.decision_function(X),
                                   rtol=1e-12, atol=1e-12)
    regressor = MKLRegressor(kernel_approximation=approximation, n_components=20,
                             random_state=0).fit(X, X[:, 0] ** 2)
    save_model(regressor, tmp_path / "regressor.npz")
    np.testing.assert_allclose(load_model(tmp_path / "regressor.npz").predict(X),
                               regressor.predict(X), rtol=1e-12, atol=1e-12)


def test_a_damaged_low_rank_model_file_is_refused(tmp_path):
    X, y = _mixed_points(n=60)
    model = MKLClassifier(kernel_approximation="nystroem", n_components=20,
                          random_state=0).fit(X, y)
    save_model(model, tmp_path / "model.npz")
    with np.load(tmp_path / "model.npz") as archive:
        members = dict(archive)
    header = json.loads(str(members["header"]))
    header["low_rank"]["groups"][0]["kernels"] = [999]
    members["header"] = np.array(json.dumps(header))
    np.savez(tmp_path / "edited.npz", **members)
    with pytest.raises(ValueError, match="damaged.*kernel indices"):
        load_model(tmp_path / "edited.npz")


@pytest.mark.parametrize("name", ["align", "alignf", "fheuristic"])
def test_alignment_weights_from_the_features_are_those_of_the_stack(problem, name):
    _, y, _, operator, stack = problem
    from mklearn.solvers import SOLVERS

    exact = SOLVERS[name].function(StackColumns(stack), y, 1.0, tol=1e-8,
                                   estimate="exact")
    ours = SOLVERS[name].feature_function(operator, y, 1.0, tol=1e-8)
    np.testing.assert_allclose(ours.kernel_weights, exact.kernel_weights, rtol=1e-6,
                               atol=1e-9)
    assert ours.objective == pytest.approx(exact.objective, rel=RTOL)


def test_auto_is_low_rank_from_the_threshold_on_unless_a_storage_is_named(monkeypatch):
    from mklearn.kernels import low_rank

    X, y = _mixed_points(n=80)
    monkeypatch.setattr("mklearn.estimators.kernel_input.LOW_RANK_SAMPLES", 50)
    assert low_rank.LOW_RANK_SAMPLES == 20_000
    assert MKLClassifier(n_components=20).fit(X, y).kernel_storage_ == "features"
    assert MKLClassifier(kernel_storage="rows").fit(X, y).kernel_approximation_ == "exact"
    assert MKLClassifier(solver="mwu").fit(X, y).kernel_approximation_ == "exact"
    assert MKLClassifier().fit(X[:40], y[:40]).kernel_approximation_ == "exact"


def test_features_of_rank_at_least_n_warn_that_exact_kernels_cost_less():
    X, y = _mixed_points(n=60)
    with pytest.warns(UserWarning, match=r"rank \d+, not below the 60 training points.*"
                                         r"kernel_approximation='exact'"):
        MKLClassifier(kernel_approximation="nystroem", n_components=50).fit(X, y)


def test_the_exact_pattern_solve_merges_duplicate_points_and_reaches_the_svc():
    from mklearn.kernels.low_rank import block_squared_norms, representative_rows
    from mklearn.linear import FeatureProblem, FeatureRows, FeatureSVM

    rng = np.random.default_rng(3)
    distinct = rng.normal(size=(40, 12)) * 0.6
    pick = rng.integers(0, 40, 400)  # every point about ten times, both labels on some
    Phi = distinct[pick]
    y = np.where(Phi[:, 0] + 0.5 * rng.normal(size=400) > 0, 1.0, -1.0)
    assert np.array_equal(Phi[representative_rows(Phi)], Phi)
    assert np.unique(representative_rows(Phi)).size == np.unique(pick).size
    starts = np.array([0, 5, 12])
    rows = FeatureRows(Phi, starts, block_squared_norms(Phi, starts))
    problem = FeatureProblem(rows, y, -np.ones(400), np.ones(400), np.arange(400))
    svm = FeatureSVM(problem)
    d = np.array([0.3, 0.7])
    alpha, _, _, _ = svm.solve(d, 1e-8)
    assert svm.n_polished >= 1
    kernel = 0.3 * Phi[:, :5] @ Phi[:, :5].T + 0.7 * Phi[:, 5:] @ Phi[:, 5:].T
    svc = SVC(kernel="precomputed", C=1.0, tol=1e-10).fit(kernel, y)
    reference = np.zeros(400)
    reference[svc.support_] = np.abs(svc.dual_coef_[0])
    value = [a.sum() - 0.5 * (a * y) @ kernel @ (a * y) for a in (alpha, reference)]
    assert value[0] == pytest.approx(value[1], rel=1e-8)
    assert np.all((alpha >= 0) & (alpha <= 1)) and abs(y @ alpha) < 1e-9


def test_rows_that_only_collide_in_their_hash_stay_apart():
    from mklearn.kernels._low_rank_numba import verified

    Phi = np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 1.0]])
    assert verified(Phi, np.array([0, 0, 0])).tolist() == [0, 0, 2]


def test_distinct_rows_of_one_column_are_numpy_unique_first_occurrences_up_to_the_limit():
    from mklearn.kernels._low_rank_numba import distinct_first_rows

    rng = np.random.default_rng(4)
    column = rng.integers(0, 7, 300).astype(np.float64) - 3.0
    column[rng.integers(0, 300, 20)] = -0.0  # equal to 0.0, as np.unique counts it
    values, first = np.unique(column, return_index=True)
    found = distinct_first_rows((column + 0.0).view(np.int64), 7)
    assert np.array_equal(np.sort(found), np.sort(first))
    assert np.array_equal(np.sort(column[found]), values)
    assert distinct_first_rows((column + 0.0).view(np.int64), 6).size == 0  # over the limit


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_block_squared_norms_are_each_blocks_row_norms(dtype):
    from mklearn.kernels.low_rank import block_squared_norms

    Phi = np.random.default_rng(5).normal(size=(70, 9)).astype(dtype)
    starts = np.array([0, 2, 2, 7, 9])  # an empty block among them
    norms = block_squared_norms(Phi, starts)
    expected = np.stack([np.sum(Phi[:, lo:hi].astype(np.float64) ** 2, axis=1)
                         for lo, hi in zip(starts[:-1], starts[1:], strict=True)], axis=1)
    assert norms.dtype == np.float64
    np.testing.assert_allclose(norms, expected, rtol=1e-12)
