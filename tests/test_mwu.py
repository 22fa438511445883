"""MWUMKL (Moeller et al., AISTATS 2014) against exact references, and its O(mn) footprint."""

from __future__ import annotations

import tracemalloc

import cvxpy as cp
import numpy as np
import pytest
from reference import _factor, l1_mkl_optimum
from sklearn.svm import SVC

from mklearn import MKLClassifier
from mklearn.datasets import load_dataset
from mklearn.formulation.combinations import SumOfKernels
from mklearn.formulation.regularizers import L1Simplex
from mklearn.kernels import RBF, KernelBank, Linear, mwumkl_kernels, resolve_kernels
from mklearn.kernels.columns import KernelColumns, StackColumns
from mklearn.solvers import mwu_mkl, spg_gmkl
from mklearn.solvers.mwu import iteration_count
from mklearn.svm import svc_dual


def _subset(name, columns, n=80, seed=0):
    """n random points of a bundled set, the given columns scaled to [0, 1], 12 kernels each."""
    X, y = load_dataset(name)
    rows = np.random.default_rng(seed).choice(len(y), size=n, replace=False)
    X, y = X[rows][:, columns], y[rows].astype(float)
    X = (X - X.min(axis=0)) / np.maximum(X.max(axis=0) - X.min(axis=0), 1e-12)
    return X, y


@pytest.fixture(scope="module")
def problems():
    out = {}
    for name, columns in (("sonar", list(range(0, 60, 8))), ("ionosphere", [0, 2, 3, 4, 5, 6, 7])):
        X, y = _subset(name, columns)
        bank = KernelBank(mwumkl_kernels().expand(X))
        out[name] = (bank.fit_transform(X), y)
    return out


def _objective(stack, y, C, mu):
    """J(mu): the SVM dual value with kernel sum_i mu_i K_i, recomputed independently."""
    qp = svc_dual(stack @ mu, y, C, tol=1e-10)
    return -qp.objective


# each exact optimum takes several seconds (cvxpy, 84-96 second-order cones): one case is fast
CASES = [
    ("ionosphere", 1e4),
    pytest.param("ionosphere", 100.0, marks=pytest.mark.slow),
    pytest.param("sonar", 100.0, marks=pytest.mark.slow),
    pytest.param("sonar", 1e4, marks=pytest.mark.slow),
]


@pytest.fixture(scope="module")
def optimum(problems):
    """The exact l1-MKL optimum of a (set, C) case, computed once."""
    cache = {}

    def get(name, C):
        if (name, C) not in cache:
            cache[name, C] = l1_mkl_optimum(problems[name][0], problems[name][1], C)
        return cache[name, C]

    return get


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize("epsilon", [0.4, 0.2, 0.1])
@pytest.mark.parametrize("name, C", CASES)
def test_objective_within_one_plus_epsilon(problems, optimum, name, C, epsilon):
    stack, y = problems[name]
    result = mwu_mkl(StackColumns(stack), y, C, epsilon=epsilon)
    mu = result.kernel_weights
    assert np.all(mu >= 0) and mu.sum() == pytest.approx(1.0)  # unit-trace kernels
    optimum = optimum(name, C)
    value = _objective(stack, y, C, mu)
    assert value == pytest.approx(result.objective, rel=1e-6)
    assert optimum * (1 - 1e-6) <= value <= (1 + epsilon) * optimum
    # the certificate brackets the optimum
    lower = result.history[-1]["lower"]
    assert lower <= optimum * (1 + 1e-9) <= (lower + result.duality_gap) * (1 + 1e-9)


@pytest.mark.parametrize("name, C", [("sonar", 100.0), ("ionosphere", 1e4)])
def test_approaches_spg_as_epsilon_shrinks(problems, name, C):
    stack, y = problems[name]
    spg = spg_gmkl(SumOfKernels(stack), y, C, L1Simplex(), tol=1e-6, max_iter=2000)
    excess = []
    for epsilon in (0.4, 0.1, 0.05):
        mu = mwu_mkl(StackColumns(stack), y, C, epsilon=epsilon).kernel_weights
        excess.append(_objective(stack, y, C, mu) / spg.objective - 1)
    assert excess[2] < excess[0] and excess[2] < 0.03
    assert min(excess) > -1e-4


def test_paper_variant_stays_uniform(problems):
    """As printed (omega = 1), the exponent stays small on unit-trace kernels: UNIFORM."""
    stack, y = problems["sonar"]
    mu = mwu_mkl(StackColumns(stack), y, 1e4, epsilon=0.1, variant="paper").kernel_weights
    assert mu.max() / mu.min() < 1.01
    adaptive = mwu_mkl(StackColumns(stack), y, 1e4, epsilon=0.1).kernel_weights
    assert adaptive.max() > 10 / mu.size


def test_single_kernel_bounds_bracket_svc():
    X, y = _subset("heart", list(range(13)), n=120)
    stack = KernelBank([RBF(sigma=1.0)]).fit_transform(X)
    result = mwu_mkl(StackColumns(stack), y, 10.0, epsilon=0.1)
    assert result.kernel_weights == pytest.approx([1.0])
    svc = SVC(kernel="precomputed", C=10.0, tol=1e-10).fit(stack[:, :, 0], y)
    v = np.zeros_like(y)
    v[svc.support_] = svc.dual_coef_[0]
    dual = np.abs(v).sum() - 0.5 * v @ stack[:, :, 0] @ v
    lower = result.history[-1]["lower"]
    assert lower <= dual <= lower + result.duality_gap
    assert result.objective == pytest.approx(dual, rel=1e-6)


def _hard_margin_optimum(stack, y):
    """Hard-margin l1-MKL optimum ``1 / (2 lambda*)``, lambda* = min_beta max_i beta' G_i beta."""
    beta, t = cp.Variable(y.size), cp.Variable()
    cons = [beta >= 0, y @ beta == 0, cp.sum(beta) == 1]
    for k in range(stack.shape[2]):
        cons.append(cp.sum_squares(_factor(stack[:, :, k]).T @ cp.multiply(y, beta)) <= t)
    cp.Problem(cp.Minimize(t), cons).solve(solver=cp.CLARABEL)
    return 1.0 / (2.0 * t.value)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_hard_margin_on_separable_data():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(-2, 1, size=(30, 2)), rng.normal(2, 1, size=(30, 2))])
    y = np.repeat([-1.0, 1.0], 30)
    stack = KernelBank([Linear(features=0), Linear(features=1), RBF(sigma=3.0)]).fit_transform(X)
    result = mwu_mkl(StackColumns(stack), y, np.inf, epsilon=0.1)
    optimum = _hard_margin_optimum(stack, y)
    assert result.history[-1]["lower"] <= optimum * (1 + 1e-6)
    f = (stack @ result.kernel_weights) @ (result.alpha * y) + result.intercept
    assert np.all(y * f > 0)
    assert np.isfinite(result.objective) and result.objective >= optimum * (1 - 1e-6)


def test_kernel_columns_and_stack_give_the_same_model():
    X, y = _subset("ionosphere", [0, 2, 3, 4], n=60)
    bank = KernelBank(mwumkl_kernels().expand(X)).fit(X)
    stack = KernelBank(mwumkl_kernels().expand(X)).fit_transform(X)
    a = mwu_mkl(KernelColumns(bank), y, 100.0, epsilon=0.3, cache_size=0.05)
    b = mwu_mkl(StackColumns(stack), y, 100.0, epsilon=0.3)
    np.testing.assert_allclose(a.kernel_weights, b.kernel_weights, rtol=1e-8)
    np.testing.assert_allclose(a.alpha, b.alpha, rtol=1e-8, atol=1e-12)
    planned = iteration_count(60, 0.3)
    assert planned == np.ceil(12 * np.log(60) / 0.09)
    assert a.history[-1]["iteration"] == b.history[-1]["iteration"] == planned
    assert a.n_iter == b.n_iter == len(a.history)  # outer iterations: the checks
    assert a.history[-1]["cache_misses"] > b.history[-1]["cache_misses"]  # 0.05 MB: evictions


def test_float32_rows_give_a_model_as_good():
    """Rows agree to single precision, but FIND-alpha's argmin picks amplify rounding: the run
    takes another path to a model of the same quality, not the same weights."""
    X, y = _subset("ionosphere", [0, 2, 3, 4], n=60)
    specs = mwumkl_kernels().expand(X)
    double = mwu_mkl(KernelColumns(KernelBank(specs).fit(X)), y, 100.0, epsilon=0.3)
    single = mwu_mkl(
        KernelColumns(KernelBank(specs, dtype=np.float32).fit(X)), y, 100.0, epsilon=0.3
    )
    assert single.objective == pytest.approx(double.objective, rel=1e-2)
    assert (
        np.abs(single.kernel_weights - double.kernel_weights).sum()
        < 0.05 * double.kernel_weights.sum()
    )


def _peak_bytes(m_features, n):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(n, m_features))
    y = np.where(X[:, 0] + 0.1 * rng.normal(size=n) > 0.5, 1.0, -1.0)
    bank = KernelBank(mwumkl_kernels().expand(X)).fit(X)
    columns = KernelColumns(bank)
    row_mb = 8 * columns.n_kernels * n / 2**20
    tracemalloc.start()
    tracemalloc.reset_peak()
    mwu_mkl(columns, y, 100.0, epsilon=0.5, cache_size=2 * row_mb, evaluate_objective=False)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, columns.n_kernels * n


def test_peak_memory_grows_linearly_in_m_and_n():
    base, mn = _peak_bytes(4, 300)
    more_kernels, mn_k = _peak_bytes(16, 300)
    more_points, mn_n = _peak_bytes(4, 1200)
    assert mn_k == 4 * mn and mn_n == 4 * mn
    # 4x the kernels or 4x the points: about 4x the memory (an n x n matrix would be 16x)
    assert more_kernels / base < 5.0
    assert more_points / base < 5.0
    assert more_points < 8 * 1200**2  # never one n x n float64 matrix
    for peak, size in ((base, mn), (more_kernels, mn_k), (more_points, mn_n)):
        assert peak < 80 * size  # O(mn): a few (m, n) float64 arrays


def test_estimator_fit_predict_with_columns():
    X, y = _subset("sonar", list(range(0, 60, 6)), n=100)
    model = MKLClassifier(kernels="mwumkl", solver="mwu", C=1000.0, kernel_normalization="trace",
                          solver_options={"epsilon": 0.3})
    model.fit(X, y)
    assert model.kernel_weights_.shape == (120,) and model.n_svm_solves_ == 1
    assert model.history_[-1]["iteration"] == iteration_count(100, 0.3)
    assert model.n_iter_ == len(model.history_)  # outer iterations: the checks
    # decision function = sum_j alpha_j y_j K(mu)(x_j, x) + b, rebuilt from the full stack
    stack = KernelBank(mwumkl_kernels().expand(X)).fit_transform(X)
    K = stack @ model.kernel_weights_
    expected = K[:, model.support_] @ model.dual_coef_[0] + model.intercept_[0]
    np.testing.assert_allclose(model.decision_function(X), expected, rtol=1e-9, atol=1e-9)
    assert model.score(X, y) > 0.8
    # the precomputed stack goes through StackColumns to the same model
    pre = MKLClassifier(
        kernels="precomputed", solver="mwu", C=1000.0, solver_options={"epsilon": 0.3}
    ).fit(stack, y)
    np.testing.assert_allclose(pre.kernel_weights_, model.kernel_weights_, rtol=1e-8)
    np.testing.assert_allclose(pre.decision_function(stack), expected, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("epsilon", [0.0, 1.0, -0.2, 1.5, float("nan"), "0.2", True])
def test_epsilon_outside_the_range(problems, epsilon):
    stack, y = problems["sonar"]
    with pytest.raises(ValueError, match=r"epsilon must be .*\(0, 1\)"):
        mwu_mkl(StackColumns(stack), y, 1.0, epsilon=epsilon)


def test_bad_input_messages(problems):
    stack, y = problems["sonar"]
    columns = StackColumns(stack)
    with pytest.raises(ValueError, match="MWUMKL needs labels of both classes"):
        mwu_mkl(columns, np.ones_like(y), 1.0)
    with pytest.raises(ValueError, match="column provider"):
        mwu_mkl(stack, y, 1.0)
    with pytest.raises(ValueError, match="l1"):
        mwu_mkl(columns, y, 1.0, regularizer="lp")
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        mwu_mkl(columns, np.where(y > 0, 1.0, 0.0), 1.0)
    with pytest.raises(ValueError, match="C must be > 0"):
        mwu_mkl(columns, y, 0.0)
    with pytest.raises(ValueError, match="variant"):
        mwu_mkl(columns, y, 1.0, variant="fast")
    with pytest.raises(ValueError, match="at least"):
        mwu_mkl(columns, y, 1.0, cache_size=1e-6)
    X, y2 = _subset("sonar", [0, 1], n=40)
    with pytest.raises(ValueError, match=r"epsilon.*range \(0.0, 1.0\)"):
        MKLClassifier(kernels="mwumkl", solver="mwu", solver_options={"epsilon": 2}).fit(X, y2)
    with pytest.raises(ValueError, match="does not support regularizer 'lp'"):
        MKLClassifier(kernels="mwumkl", solver="mwu", regularizer="lp").fit(X, y2)


def test_mwumkl_recipe():
    X = np.array([[0.0, 0.5, 1.0], [1.0, 0.5, 0.0], [0.5, 0.5, 0.25]])
    specs = mwumkl_kernels().expand(X)
    assert len(specs) == 24  # column 1 is constant
    assert {s.features for s in specs} == {(0,), (2,)}
    assert len(mwumkl_kernels(per_feature=False).expand(X)) == 12
    assert resolve_kernels("mwumkl", X) == (specs, False)
    K = KernelBank(specs, normalize=None).fit_transform(X)
    # Gaussian with bandwidth b = 2^0.5 on feature 0: exp(-(x - z)^2 / b) (the authors' form)
    np.testing.assert_allclose(K[0, 2, 1], np.exp(-0.25 / 2**0.5), rtol=1e-12)
    np.testing.assert_allclose(K[0, 1, 11], (0.0 * 1.0 + 1.0) ** 3, rtol=1e-12)
    assert mwumkl_kernels() == mwumkl_kernels() != mwumkl_kernels(per_feature=False)


@pytest.mark.parametrize("seed", range(5))
def test_scaled_hinge_bias_equals_the_weighted_median(seed):
    from mklearn.formulation.losses import best_hinge_bias
    from mklearn.solvers.mwu import _ScaledHinge

    rng = np.random.default_rng(seed)
    n = 41 + seed
    phi = np.round(rng.normal(size=n), 1)  # ties within and across classes
    y = np.where(rng.random(n) < 0.3 + 0.1 * seed, 1.0, -1.0)
    hinge = _ScaledHinge(phi, y)
    for s in (1e-3, 0.5, 1.0, 3.7, 100.0):
        bias, total = hinge.fit(s)
        expected = best_hinge_bias(s * phi, y, np.ones(n))
        assert bias == pytest.approx(expected, abs=1e-12)
        assert total == pytest.approx(np.maximum(0, 1 - y * (s * phi + expected)).sum())


def test_a_run_far_from_the_optimum_warns_with_its_gap():
    from sklearn.exceptions import ConvergenceWarning

    X, y = load_dataset("sonar")
    loose = r"relative duality gap 0\.\d+, above 0\.1.*epsilon"
    with pytest.warns(ConvergenceWarning, match=loose):
        model = MKLClassifier(solver="mwu").fit(X, y)
    assert model.relative_duality_gap_ > 0.1
