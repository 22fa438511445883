"""Tests of mklearn.kernels: specs, recipes and the KernelBank."""

import copy
import json

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics.pairwise import (
    laplacian_kernel,
    linear_kernel,
    polynomial_kernel,
    rbf_kernel,
)

from mklearn.kernels import (
    RBF,
    KernelBank,
    KernelRecipe,
    KernelSpec,
    Laplacian,
    Linear,
    Polynomial,
    kernel_from_dict,
    resolve_kernels,
    simple_mkl_kernels,
)

TOLERANCES = {np.float64: dict(rtol=1e-10, atol=1e-12), np.float32: dict(rtol=1e-5, atol=1e-6)}


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X_train = rng.normal(size=(30, 6))
    X_test = rng.normal(size=(11, 6))
    return X_train, X_test


def sklearn_reference(spec, A, B):
    """The kernel of ``spec`` between the rows of A and B, by scikit-learn."""
    if spec.features is not None:
        A, B = A[:, list(spec.features)], B[:, list(spec.features)]
    if isinstance(spec, Linear):
        return linear_kernel(A, B)
    if isinstance(spec, Polynomial):
        return polynomial_kernel(A, B, degree=spec.degree, gamma=spec.gamma, coef0=spec.coef0)
    if isinstance(spec, RBF):
        return rbf_kernel(A, B, gamma=spec.effective_gamma)
    return laplacian_kernel(A, B, gamma=spec.effective_gamma)


SPEC_FACTORIES = {
    "linear": lambda f: Linear(features=f),
    "poly2": lambda f: Polynomial(degree=2, coef0=1.0, features=f),
    "poly3_gamma": lambda f: Polynomial(degree=3, coef0=0.5, gamma=0.3, features=f),
    "rbf_sigma": lambda f: RBF(sigma=2.0, features=f),
    "rbf_gamma": lambda f: RBF(gamma=0.7, features=f),
    "laplacian": lambda f: Laplacian(sigma=3.0, features=f),
}


# --------------------------------------------------------------------------- bank values


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("features", [None, 2, (0, 3, 5)])
@pytest.mark.parametrize("kind", sorted(SPEC_FACTORIES))
def test_single_kernel_matches_sklearn(data, kind, features, dtype):
    X_train, X_test = data
    spec = SPEC_FACTORIES[kind](features)
    bank = KernelBank([spec], normalize=None, dtype=dtype)
    K_train = bank.fit_transform(X_train)
    K_test = bank.transform(X_test)
    assert K_train.dtype == dtype and K_test.dtype == dtype
    assert K_train.shape == (30, 30, 1) and K_test.shape == (11, 30, 1)
    assert K_train.transpose(2, 0, 1).flags.c_contiguous
    assert K_test.transpose(2, 0, 1).flags.c_contiguous
    tol = TOLERANCES[dtype]
    np.testing.assert_allclose(K_train[:, :, 0], sklearn_reference(spec, X_train, X_train), **tol)
    np.testing.assert_allclose(K_test[:, :, 0], sklearn_reference(spec, X_test, X_train), **tol)


def mixed_specs():
    """Every kernel type, with interleaved feature blocks (exercises the grouping)."""
    return [
        RBF(sigma=1.5),
        Polynomial(degree=2, features=1),
        Laplacian(gamma=0.4, features=(0, 2)),
        Linear(),
        RBF(sigma=0.7, features=1),
        Polynomial(degree=3, gamma=0.5, coef0=2.0, features=(0, 2)),
        Laplacian(sigma=2.0),
        RBF(gamma=0.3, features=(0, 2)),
        Linear(features=4),
    ]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mixed_stack_matches_each_kernel(data, dtype):
    X_train, X_test = data
    specs = mixed_specs()
    bank = KernelBank(specs, normalize=None, dtype=dtype)
    K_train = bank.fit_transform(X_train)
    K_test = bank.transform(X_test)
    tol = TOLERANCES[dtype]
    for k, spec in enumerate(specs):
        np.testing.assert_allclose(
            K_train[:, :, k], sklearn_reference(spec, X_train, X_train), **tol
        )
        np.testing.assert_allclose(K_test[:, :, k], sklearn_reference(spec, X_test, X_train), **tol)


def test_training_stack_is_exactly_symmetric_with_unit_rbf_diagonal(data):
    X_train, _ = data
    specs = mixed_specs()
    K = KernelBank(specs, normalize=None).fit_transform(X_train)
    np.testing.assert_array_equal(K, K.transpose(1, 0, 2))
    for k, spec in enumerate(specs):
        if isinstance(spec, (RBF, Laplacian)):
            np.testing.assert_array_equal(np.diagonal(K[:, :, k]), 1.0)


def test_training_kernels_are_psd(data):
    X_train, _ = data
    specs = mixed_specs() + simple_mkl_kernels().expand(X_train)
    K = KernelBank(specs, standardize=True).fit_transform(X_train)
    for k in range(K.shape[2]):
        eigenvalues = np.linalg.eigvalsh(K[:, :, k])
        assert eigenvalues[0] >= -1e-8 * eigenvalues[-1], specs[k].name


# ------------------------------------------------------------------ normalisation


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_trace_normalisation_uses_training_scales(data, dtype):
    X_train, X_test = data
    specs = mixed_specs()
    raw = KernelBank(specs, normalize=None)
    raw_train = raw.fit_transform(X_train)
    raw_test = raw.transform(X_test)
    expected_scales = 1.0 / np.einsum("iik->k", raw_train)

    bank = KernelBank(specs, dtype=dtype)
    K_train = bank.fit_transform(X_train)
    K_test = bank.transform(X_test)
    tol = TOLERANCES[dtype]
    np.testing.assert_allclose(bank.trace_scales_, expected_scales, rtol=1e-12)
    np.testing.assert_allclose(np.einsum("iik->k", K_train.astype(np.float64)), 1.0, **tol)
    np.testing.assert_allclose(K_train, raw_train * expected_scales, **tol)
    np.testing.assert_allclose(K_test, raw_test * expected_scales, **tol)


def test_zero_trace_keeps_scale_one():
    X = np.zeros((4, 2))
    bank = KernelBank([Linear(), RBF()])
    K = bank.fit_transform(X)
    np.testing.assert_array_equal(bank.trace_scales_, [1.0, 0.25])
    np.testing.assert_array_equal(K[:, :, 0], 0.0)


@pytest.mark.parametrize("specs", [[RBF(sigma=2.0)], [RBF(sigma=2.0), Laplacian(sigma=3.0)]])
def test_mostly_zero_features_are_scaled_not_centred_for_shift_invariant_kernels(specs):
    rng = np.random.default_rng(0)
    X = rng.binomial(1, 0.1, size=(60, 12)) * rng.uniform(1, 5, size=(60, 12))
    X[:, 3] = 1e8 + rng.normal(size=60)  # a dense column far from 0: centred
    X_test = rng.binomial(1, 0.1, size=(9, 12)) * 2.0
    X_test[:, 3] = 1e8
    bank = KernelBank(specs, standardize=True, normalize=None)
    K = bank.fit_transform(X)
    mean, std = X.mean(axis=0), X.std(axis=0)
    std[std == 0] = 1.0
    np.testing.assert_array_equal(np.delete(bank.mean_, 3), 0.0)
    np.testing.assert_allclose(bank.mean_[3], mean[3])
    np.testing.assert_allclose(bank.scale_, std)
    sparse = np.delete(np.arange(12), 3)
    assert (np.count_nonzero(bank.X_fit_[:, sparse])
            == np.count_nonzero(X[:, sparse]))  # the zeros kept
    Z, Z_test = (X - mean) / std, (X_test - mean) / std  # the centred points: same kernels
    np.testing.assert_allclose(K[:, :, 0], rbf_kernel(Z, gamma=1 / 8), rtol=1e-10)
    np.testing.assert_allclose(bank.transform(X_test)[:, :, 0],
                               rbf_kernel(Z_test, Z, gamma=1 / 8), rtol=1e-10)


def test_a_kernel_that_is_not_shift_invariant_keeps_the_centring():
    X = np.random.default_rng(0).binomial(1, 0.1, size=(60, 12)).astype(float)
    bank = KernelBank([RBF(sigma=2.0), Linear()], standardize=True, normalize=None).fit(X)
    np.testing.assert_allclose(bank.mean_, X.mean(axis=0))
    dense = np.random.default_rng(1).normal(size=(60, 12))
    np.testing.assert_allclose(KernelBank([RBF()], standardize=True).fit(dense).mean_,
                               dense.mean(axis=0))


def test_standardisation_is_fitted_on_training_data_only(data):
    X_train, X_test = data
    X_train = X_train * [1, 2, 3, 4, 5, 6] + 10.0
    X_train[:, 4] = 7.0  # constant column: scale 1
    spec = RBF(sigma=2.0)
    bank = KernelBank([spec], standardize=True, normalize=None)
    K_train = bank.fit_transform(X_train)
    mean, std = X_train.mean(axis=0), X_train.std(axis=0)
    std[4] = 1.0
    np.testing.assert_allclose(bank.mean_, mean)
    np.testing.assert_allclose(bank.scale_, std)
    np.testing.assert_allclose(bank.X_fit_, (X_train - mean) / std)
    Z_train = (X_train - mean) / std
    np.testing.assert_allclose(K_train[:, :, 0], rbf_kernel(Z_train, gamma=1 / 8), rtol=1e-10)

    X_shifted = 100.0 + 50.0 * X_test  # far from the training distribution
    K_test = bank.transform(X_shifted)
    np.testing.assert_allclose(bank.mean_, mean)  # not refitted
    expected = rbf_kernel((X_shifted - mean) / std, Z_train, gamma=1 / 8)
    np.testing.assert_allclose(K_test[:, :, 0], expected, rtol=1e-10, atol=1e-300)


# ------------------------------------------------------------- rows / indices / state


def test_transform_rows_and_kernel_indices_slice_full_transform(data):
    X_train, X_test = data
    bank = KernelBank(mixed_specs(), standardize=True)
    bank.fit(X_train)
    full = bank.transform(X_test)
    rows = np.array([3, 0, 17, 29])
    kernel_indices = [6, 2, 0, 7]
    np.testing.assert_allclose(bank.transform(X_test, rows=rows), full[:, rows], rtol=1e-12)
    np.testing.assert_allclose(
        bank.transform(X_test, kernel_indices=kernel_indices),
        full[:, :, kernel_indices],
        rtol=1e-12,
    )
    both = bank.transform(X_test, rows=rows, kernel_indices=kernel_indices)
    np.testing.assert_allclose(both, full[:, rows][:, :, kernel_indices], rtol=1e-12)
    for subset in ([1, 5], kernel_indices, [5, 1], None):  # the kept plans, switched
        picked = slice(None) if subset is None else subset
        np.testing.assert_allclose(bank.transform(X_test, kernel_indices=subset),
                                   full[:, :, picked], rtol=1e-12)
    bank.specs = mixed_specs()[::-1]  # new specs, refitted: new plans
    bank.fit(X_train)
    np.testing.assert_allclose(bank.transform(X_test), full[:, :, ::-1], rtol=1e-12)


def test_fit_equals_fit_transform_state(data):
    X_train, _ = data
    a = KernelBank(mixed_specs(), standardize=True)
    a.fit_transform(X_train)
    b = KernelBank(mixed_specs(), standardize=True).fit(X_train)
    for key, value in a.fitted_state().items():
        np.testing.assert_array_equal(value, b.fitted_state()[key])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_from_fitted_round_trip_with_support_rows(data, dtype):
    X_train, X_test = data
    specs = mixed_specs()
    bank = KernelBank(specs, standardize=True, dtype=dtype)
    bank.fit(X_train)
    rows = np.array([1, 5, 8, 20])
    state = bank.fitted_state()
    state["X_fit"] = state["X_fit"][rows]
    rebuilt = KernelBank.from_fitted(
        specs, standardize=True, normalize="trace", dtype=dtype, **state
    )
    assert rebuilt.n_features_in_ == 6
    np.testing.assert_array_equal(rebuilt.transform(X_test), bank.transform(X_test, rows=rows))


def test_from_fitted_checks_shapes(data):
    X_train, _ = data
    bank = KernelBank([Linear(), RBF()]).fit(X_train)
    state = bank.fitted_state()
    state["trace_scales"] = state["trace_scales"][:1]
    with pytest.raises(ValueError, match="trace_scales"):
        KernelBank.from_fitted(
            [Linear(), RBF()], standardize=False, normalize="trace", dtype=np.float64, **state
        )


def test_bank_names_and_repr():
    bank = KernelBank([RBF(sigma=2, features=3), Linear()])
    assert bank.n_kernels == 2
    assert bank.kernel_names == ["rbf(sigma=2) on x[3]", "linear on all"]
    assert "n_kernels=2" in repr(bank)


# ---------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "bad, match",
    [
        ([[1.0, np.nan]], "NaN or infinity"),
        ([[1.0, np.inf]], "NaN or infinity"),
        ([1.0, 2.0], "2-D"),
        (np.empty((0, 3)), "at least 1 sample"),
        ([["a", "b"]], "numeric"),
        (np.ones((2, 2), dtype=complex), "real"),
    ],
)
def test_bank_rejects_invalid_X(bad, match):
    with pytest.raises(ValueError, match=match):
        KernelBank([Linear()]).fit_transform(bad)


def test_bank_transform_errors(data):
    X_train, X_test = data
    bank = KernelBank([Linear()])
    with pytest.raises(NotFittedError):
        bank.transform(X_test)
    bank.fit(X_train)
    with pytest.raises(ValueError, match="X has 5 features.*expected 6"):
        bank.transform(X_test[:, :5])
    with pytest.raises(ValueError, match="rows"):
        bank.transform(X_test, rows=[0, 30])
    with pytest.raises(ValueError, match="kernel_indices"):
        bank.transform(X_test, kernel_indices=[1])


def test_bank_rejects_out_of_range_feature_and_bad_arguments(data):
    X_train, _ = data
    with pytest.raises(ValueError, match=r"rbf\(sigma=1\) on x\[9\].*6 features"):
        KernelBank([RBF(features=9)]).fit(X_train)
    with pytest.raises(ValueError, match="at least one"):
        KernelBank([])
    with pytest.raises(ValueError, match="KernelSpec"):
        KernelBank(["rbf"])
    with pytest.raises(ValueError, match="normalize"):
        KernelBank([Linear()], normalize="max")
    with pytest.raises(ValueError, match="dtype"):
        KernelBank([Linear()], dtype=np.int32)


# --------------------------------------------------------------------------- specs


def test_spec_names():
    assert RBF(sigma=2, features=3).name == "rbf(sigma=2) on x[3]"
    assert RBF(gamma=0.5).name == "rbf(gamma=0.5) on all"
    assert RBF().name == "rbf(sigma=1) on all"
    assert Polynomial(degree=2, features=[0, 4, 7]).name == "poly(degree=2, coef0=1) on x[0,4,7]"
    assert (
        Polynomial(degree=3, gamma=0.5, coef0=0).name == "poly(degree=3, coef0=0, gamma=0.5) on all"
    )
    assert Linear().name == "linear on all"
    assert Laplacian(sigma=0.25, features=np.int64(1)).name == "laplacian(sigma=0.25) on x[1]"


def test_spec_features_normalised_and_hashable():
    spec = RBF(sigma=1.0, features=np.array([2, 0]))
    assert spec.features == (2, 0) and all(type(i) is int for i in spec.features)
    assert RBF(features=3).features == (3,)
    assert RBF() == RBF(sigma=1)
    assert len({RBF(), RBF(sigma=1.0), Linear()}) == 2
    assert RBF(sigma=2).effective_gamma == pytest.approx(1 / 8)
    assert Laplacian(sigma=2).effective_gamma == pytest.approx(1 / 2)
    with pytest.raises(AttributeError):
        spec.sigma = 3.0
    with pytest.raises(TypeError):
        KernelSpec()  # abstract


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: RBF(sigma=0), "sigma.*> 0"),
        (lambda: RBF(sigma=-1.0), "sigma.*> 0"),
        (lambda: RBF(gamma=float("nan")), "gamma.*> 0"),
        (lambda: RBF(sigma=1.0, gamma=1.0), "at most one of sigma and gamma"),
        (lambda: Laplacian(sigma=float("inf")), "sigma.*finite"),
        (lambda: Laplacian(gamma=0.0), "gamma.*> 0"),
        (lambda: Polynomial(degree=0), "degree.*>= 1"),
        (lambda: Polynomial(degree=2.5), "degree.*>= 1"),
        (lambda: Polynomial(degree=True), "degree"),
        (lambda: Polynomial(gamma=-1.0), "gamma.*> 0"),
        (lambda: Polynomial(coef0=float("nan")), "coef0.*finite"),
        (lambda: Linear(features=-1), "features.*>= 0"),
        (lambda: Linear(features=[0, -2]), "features.*>= 0"),
        (lambda: Linear(features=[1, 1]), "repeat"),
        (lambda: Linear(features=[]), "empty"),
        (lambda: Linear(features=1.5), "features"),
        (lambda: Linear(features="0"), "features"),
    ],
)
def test_spec_validation(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize(
    "spec",
    [
        Linear(),
        Linear(features=(1, 2)),
        Polynomial(degree=3, coef0=0.5, gamma=2.0, features=4),
        RBF(sigma=0.5),
        RBF(gamma=3.0, features=[0, 2]),
        Laplacian(),
        Laplacian(gamma=0.1, features=7),
    ],
)
def test_to_dict_round_trip(spec):
    d = spec.to_dict()
    assert "type" in d
    restored = kernel_from_dict(json.loads(json.dumps(d)))
    assert restored == spec and restored.name == spec.name
    assert isinstance(restored, KernelSpec)


def test_kernel_from_dict_errors():
    with pytest.raises(ValueError, match="Unknown kernel type"):
        kernel_from_dict({"type": "sigmoid"})
    with pytest.raises(ValueError, match="Unknown kernel type"):
        kernel_from_dict({"sigma": 1.0})
    with pytest.raises(ValueError, match="Unknown parameter"):
        kernel_from_dict({"type": "rbf", "degree": 2})
    with pytest.raises(ValueError, match="sigma"):
        kernel_from_dict({"type": "rbf", "sigma": -1})


# -------------------------------------------------------------------------- recipes


def test_simple_mkl_recipe_counts_and_names():
    X = np.random.default_rng(1).normal(size=(50, 60))
    recipe = simple_mkl_kernels()
    specs = recipe.expand(X)
    assert len(specs) == 793
    names = [spec.name for spec in specs]
    assert len(set(names)) == len(names)
    assert names[0] == "rbf(sigma=0.5) on all"
    assert names[12] == "poly(degree=3, coef0=1) on all"
    assert names[13] == "rbf(sigma=0.5) on x[0]"
    assert names[-1] == "poly(degree=3, coef0=1) on x[59]"
    assert recipe.standardize is True

    X[:, 2] = 3.0  # constant column (as Ionosphere's column 2): skipped
    specs = recipe.expand(X)
    assert len(specs) == 13 * 60
    assert not any(spec.features == (2,) for spec in specs)


def _binary_problem(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = np.c_[rng.normal(size=n), (rng.random(n) < 0.2) * 2.0 - 1.0, rng.normal(size=n)]
    y = np.where(X[:, 0] + 1.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def test_two_valued_columns_get_the_one_kernel_farthest_apart():
    X, _ = _binary_problem()
    full = KernelRecipe(sigmas=(0.5, 2.0, 10.0), degrees=(1, 3), svc_kernel=True)
    merged = KernelRecipe(sigmas=(0.5, 2.0, 10.0), degrees=(1, 3), svc_kernel=True,
                          one_per_two_valued=True)
    assert merged != full and "one_per_two_valued=True" in repr(merged)
    specs = merged.expand(X)
    assert len(full.expand(X)) == 1 + 5 * 4 and len(specs) == 1 + 5 * 3 + 1
    kept = [spec for spec in specs if spec.features == (1,)]
    assert len(kept) == 1
    block = [spec for spec in full.expand(X) if spec.features == (1,)]
    stack = KernelBank(block, standardize=True, normalize="diagonal").fit_transform(X)
    u, v = np.flatnonzero(X[:, 1] < 0)[0], np.flatnonzero(X[:, 1] > 0)[0]
    spread = stack[u, u] + stack[v, v] - 2.0 * stack[u, v]  # mean diagonal 1
    assert kept[0] == block[int(np.argmax(spread))]
    assert not simple_mkl_kernels().one_per_two_valued  # SimpleMKL's own family is kept whole


def test_on_a_binary_feature_the_kept_kernel_is_the_l1_optimum_of_its_block():
    """An SVM with an intercept sees every kernel of a binary feature as ``s zz'``: the l1
    optimum over the whole block puts its weight on the widest-apart kernel, so MKL on the
    kept kernel alone reaches the same objective and decision values."""
    from mklearn import MKLClassifier

    X, y = _binary_problem()
    recipe = KernelRecipe(sigmas=(0.5, 2.0, 10.0), degrees=(1, 2, 3), all_features=False)
    block = [spec for spec in recipe.expand(X) if spec.features == (1,)]
    others = [RBF(sigma=1.0, features=(0,)), RBF(sigma=1.0, features=(2,))]
    merged = KernelRecipe(sigmas=(0.5, 2.0, 10.0), degrees=(1, 2, 3), all_features=False,
                          one_per_two_valued=True)
    kept = [spec for spec in merged.expand(X) if spec.features == (1,)]
    common = dict(solver="spg", regularizer="l1", C=10.0, tol=1e-7, max_iter=2000)
    whole = MKLClassifier(kernels=others + block, **common).fit(X, y)
    alone = MKLClassifier(kernels=others + kept, **common).fit(X, y)
    assert alone.objective_ == pytest.approx(whole.objective_, rel=1e-4)
    np.testing.assert_allclose(alone.decision_function(X), whole.decision_function(X),
                               atol=1e-3)


def test_recipe_equality_clone_and_repr():
    recipe = simple_mkl_kernels(sigmas=(1, 2), degrees=(1,), standardize=False)
    assert recipe == KernelRecipe(sigmas=(1.0, 2.0), degrees=[1], standardize=False)
    assert recipe != simple_mkl_kernels()
    assert copy.deepcopy(recipe) == recipe
    assert clone(recipe, safe=False) == recipe
    assert hash(copy.deepcopy(recipe)) == hash(recipe)
    assert repr(recipe) == "KernelRecipe(sigmas=(1, 2), degrees=(1,), standardize=False)"
    assert simple_mkl_kernels().kernels_per_block == 13
    with pytest.raises(ValueError, match="sigmas"):
        simple_mkl_kernels(sigmas=(0,))
    with pytest.raises(ValueError, match="degrees"):
        simple_mkl_kernels(degrees=(1.5,))


def test_resolve_kernels_forms(data):
    X_train, _ = data
    specs, standardize = resolve_kernels("simple_mkl", X_train)
    assert len(specs) == 13 * 7 and standardize is True
    specs, standardize = resolve_kernels(simple_mkl_kernels(standardize=False), X_train)
    assert len(specs) == 13 * 7 and standardize is False
    assert resolve_kernels(RBF(), X_train) == ([RBF()], False)
    assert resolve_kernels((Linear(), RBF()), X_train) == ([Linear(), RBF()], False)


@pytest.mark.parametrize("bad", ["precomputed", "rbf", [], [Linear(), "rbf"], 3, None])
def test_resolve_kernels_rejects_other_forms(data, bad):
    with pytest.raises(ValueError, match="simple_mkl.*precomputed"):
        resolve_kernels(bad, data[0])


def test_resolve_kernels_checks_feature_range(data):
    with pytest.raises(ValueError, match=r"linear on x\[2,6\].*6 features"):
        resolve_kernels([RBF(), Linear(features=(2, 6))], data[0])


def test_recipe_bank_end_to_end(data):
    X_train, X_test = data
    specs, standardize = resolve_kernels("simple_mkl", X_train)
    bank = KernelBank(specs, standardize=standardize)
    K = bank.fit_transform(X_train)
    assert K.shape == (30, 30, 91)
    np.testing.assert_allclose(np.einsum("iik->k", K), 1.0, rtol=1e-12)
    Z_train = bank.X_fit_
    Z_test = (X_test - bank.mean_) / bank.scale_
    K_test = bank.transform(X_test)
    # Block 0 is "all", block 1 + c is column c; sigma=2 is the third RBF.
    expected = rbf_kernel(Z_test[:, [3]], Z_train[:, [3]], gamma=1 / 8)
    expected *= bank.trace_scales_[13 * 4 + 2]
    assert bank.kernel_names[13 * 4 + 2] == "rbf(sigma=2) on x[3]"
    np.testing.assert_allclose(K_test[:, :, 13 * 4 + 2], expected, rtol=1e-10)


# ------------------------------------------------------- feature scales, SVC's own kernel
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_feature_scales_multiply_the_columns_in_stacks_and_rows(data, dtype):
    from mklearn.kernels.columns import KernelColumns

    X_train, X_test = data
    X_train = X_train * [1, 10, 100, 0.1, 1, 3] + 5
    X_test = X_test * [1, 10, 100, 0.1, 1, 3] + 5
    scales = np.array([0.5, 2.0, 0.01, 7.0, 1.0, 0.3])
    specs = [RBF(gamma=0.2, feature_scales=scales), RBF(sigma=2.0),
             Polynomial(degree=2, features=[1, 3], feature_scales=[0.1, 3.0]),
             Laplacian(sigma=1.5, features=4, feature_scales=[2.0])]
    bank = KernelBank(specs, standardize=False, normalize=None, dtype=dtype)
    K = bank.fit_transform(X_train)
    tol = TOLERANCES[dtype]
    np.testing.assert_allclose(K[:, :, 0], rbf_kernel(X_train * scales, gamma=0.2), **tol)
    np.testing.assert_allclose(K[:, :, 1], rbf_kernel(X_train, gamma=1 / 8), **tol)
    scaled = X_train[:, [1, 3]] * [0.1, 3.0]
    np.testing.assert_allclose(K[:, :, 2], (scaled @ scaled.T + 1) ** 2, **tol)
    np.testing.assert_allclose(K[:, :, 3], laplacian_kernel(2 * X_train[:, [4]], gamma=1 / 1.5),
                               **tol)
    test = bank.transform(X_test)
    np.testing.assert_allclose(test[:, :, 0], rbf_kernel(X_test * scales, X_train * scales,
                                                         gamma=0.2), **tol)
    rows = KernelColumns(bank).rows(np.array([0, 7, 29]))  # the on-demand path
    np.testing.assert_allclose(rows, K[[0, 7, 29]].transpose(2, 0, 1), rtol=1e-6, atol=1e-7)


def test_feature_scales_are_checked_and_saved():
    spec = RBF(gamma=0.5, feature_scales=[1.0, 2.0], features=[0, 2])
    assert spec.feature_scales == (1.0, 2.0)
    assert "scaled columns" in spec.name
    assert kernel_from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    for bad in ([1.0, 0.0], [1.0, np.nan], [1.0, -2.0], "ab", [], [1.0, 2.0, 3.0]):
        with pytest.raises(ValueError, match="feature"):
            RBF(gamma=0.5, feature_scales=bad, features=[0, 2])
    with pytest.raises(ValueError, match="3 feature scales, but X has 4 features"):
        KernelBank([RBF(feature_scales=[1.0, 1.0, 1.0])]).fit(np.ones((5, 4)))


def test_svc_kernel_is_the_kernel_of_svc_with_its_defaults():
    from sklearn.svm import SVC

    from mklearn.kernels import svc_kernel

    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 5)) * [1, 30, 0.01, 2, 5] + [0, 100, 1, -3, 0]
    X[:, 3] = 2.0  # a constant column
    y = np.where(X[:, 0] + (X[:, 1] - 100) / 30 > 0, 1, -1)
    gamma = 1.0 / (X.shape[1] * X.var())
    for standardize in (True, False):
        bank = KernelBank([svc_kernel(X, standardize=standardize)], standardize=standardize,
                          normalize=None)
        K = bank.fit_transform(X)[:, :, 0]
        np.testing.assert_allclose(K, rbf_kernel(X, gamma=gamma), rtol=1e-10, atol=1e-12)
    svc = SVC().fit(X, y)
    ours = SVC(kernel="precomputed").fit(K, y)
    np.testing.assert_allclose(ours.decision_function(K), svc.decision_function(X), atol=1e-8)
    # free of overflow at any scale: the same kernel for X * 1e300
    big = KernelBank([svc_kernel(X * 1e300, standardize=True)], standardize=True,
                     normalize=None).fit_transform(X * 1e300)[:, :, 0]
    np.testing.assert_allclose(big, K, rtol=1e-9, atol=1e-12)


def test_default_family_puts_svc_kernel_first_and_anchors_the_kl_prior():
    from mklearn import MKLClassifier
    from mklearn.datasets import load_dataset
    from mklearn.kernels import svc_feature_rbf_kernels, svc_simple_mkl_kernels

    X, y = load_dataset("liver-disorders")
    X, y = X[:120], y[:120]
    simple = svc_simple_mkl_kernels().expand(X)
    assert len(simple) == 13 * 7 + 1 and simple[0] == svc_kernel_of(X)
    assert simple[1:] == simple_mkl_kernels().expand(X)
    recipe = svc_feature_rbf_kernels()  # both estimators' default
    specs = recipe.expand(X)
    assert specs[0] == simple[0] and len(specs) == 6 + 1
    assert specs[1:] == [RBF(sigma=1.0, features=(j,)) for j in range(6)]
    prior = recipe.kl_prior(len(specs))
    assert prior[0] == 0.9 and np.isclose(prior.sum(), 1.0) and np.all(prior[1:] == prior[1])
    assert simple_mkl_kernels().kl_prior(91) is None

    model = MKLClassifier().fit(X, y)
    assert model.regularizer_ == "kl" and model.kernel_names_[0].startswith("rbf(gamma=")
    assert model.lam_ == 5.0  # lam="auto" with the prior on SVC's kernel
    weights = np.ravel(model.kernel_weights_)
    # KL weights d_k = d0_k exp(g_k / (2 lam)) never fall below the prior
    assert np.all(weights >= prior * (1 - 1e-9))
    # a larger lam keeps them nearer it: lam 1 moves more weight off the prior
    loose = np.ravel(MKLClassifier(lam=1.0).fit(X, y).kernel_weights_)
    assert np.sum(loose - prior) > np.sum(weights - prior) > 0
    uniform = MKLClassifier(regularizer="kl").fit(X, y)  # "kl" named: the uniform prior
    assert uniform.lam_ == 1.0  # KL weights never fall below the uniform prior 1/7
    assert np.all(np.ravel(uniform.kernel_weights_) >= (1 - 1e-9) / len(specs))
    assert np.min(weights[1:]) < 1.0 / len(specs)  # the anchored prior: 0.1 / 6 each
    assert MKLClassifier(regularizer="lp").fit(X, y).lam_ == 1.0


def svc_kernel_of(X):
    from mklearn.kernels import svc_kernel

    return svc_kernel(X, standardize=True)
