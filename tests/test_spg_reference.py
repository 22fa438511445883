"""SPG-GMKL against exact convex references (cvxpy + Clarabel) on bundled real data."""

import numpy as np
import pytest
from reference import l1_mkl_optimum, lp_mkl_optimum
from sklearn.svm import SVC

from mklearn import MKLClassifier
from mklearn.datasets import load_dataset
from mklearn.kernels import KernelBank, resolve_kernels

# (data set, feature columns used): m = 13 (D + 1) kernels between 50 and 120
SUBSETS = {"liver-disorders": None, "pima": None, "sonar": list(range(7))}


def _problem(name, n=100):
    X, y = load_dataset(name)
    rng = np.random.default_rng(42)
    rows = rng.choice(len(y), size=n, replace=False)
    X, y = X[rows], y[rows]
    if SUBSETS[name] is not None:
        X = X[:, SUBSETS[name]]
    specs, standardize = resolve_kernels("simple_mkl", X)
    stack = KernelBank(specs, standardize=standardize).fit_transform(X)
    assert 50 <= stack.shape[2] <= 120
    return stack, y.astype(float)


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(name, marks=() if name == "liver-disorders" else pytest.mark.slow)
        for name in SUBSETS
    ],
)
def problem(request):
    return _problem(request.param)


def _exact_objective(stack, y, C, weights, regularizer_value):
    """T(d) recomputed independently: LIBSVM at tol 1e-10 on the learned kernel."""
    K = stack @ weights
    svc = SVC(kernel="precomputed", C=C, tol=1e-10).fit(K, y)
    alpha = np.zeros_like(y)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    v = alpha * y
    return regularizer_value + alpha.sum() - 0.5 * v @ K @ v


@pytest.mark.parametrize("C", [1.0, 100.0])
def test_l1_reaches_the_optimum_with_an_honest_gap(problem, C):
    stack, y = problem
    model = MKLClassifier(
        kernels="precomputed", regularizer="l1", C=C, tol=1e-6, max_iter=3000
    ).fit(stack, y)
    optimum = l1_mkl_optimum(stack, y, C)
    assert model.objective_ == pytest.approx(optimum, rel=1e-4)
    d = model.kernel_weights_
    assert np.all(d >= 0) and d.sum() == pytest.approx(1.0)
    exact = _exact_objective(stack, y, C, d, 0.0)
    assert exact == pytest.approx(optimum, rel=1e-4)
    # the certificate bounds the true suboptimality of the returned weights
    assert exact - optimum <= model.duality_gap_ + 1e-6 * abs(optimum)  # reference precision
    assert model.duality_gap_ <= 1e-6 * abs(model.objective_) * 1.0001


@pytest.mark.parametrize("p", [1.33, 2.0, 3.0])
@pytest.mark.parametrize("C", [1.0, 100.0])
def test_lp_reaches_the_optimum_with_an_honest_gap(problem, p, C):
    stack, y = problem
    lam = 1.0
    model = MKLClassifier(
        kernels="precomputed", regularizer="lp", p=p, lam=lam, C=C, tol=1e-6, max_iter=5000
    ).fit(stack, y)
    optimum = lp_mkl_optimum(stack, y, C, p, lam)
    assert model.objective_ == pytest.approx(optimum, rel=1e-4)
    d = model.kernel_weights_
    r = 0.5 * lam * np.sum(d**p) ** (2.0 / p)
    exact = _exact_objective(stack, y, C, d, r)
    assert exact == pytest.approx(optimum, rel=1e-4)
    assert exact - optimum <= model.duality_gap_ + 1e-6 * abs(optimum)  # reference precision


def test_newton_phase_reaches_the_same_optimum(problem):
    stack, y = problem
    optimum = l1_mkl_optimum(stack, y, 100.0)
    for second_order in (True, False):
        model = MKLClassifier(
            kernels="precomputed",
            solver="spg",
            C=100.0,
            tol=1e-6,
            max_iter=3000,
            solver_options={"second_order": second_order},
        ).fit(stack, y)
        assert model.objective_ == pytest.approx(optimum, rel=1e-4)
        assert model.duality_gap_ <= 1e-6 * abs(model.objective_) * 1.0001


def test_solves_stopped_on_the_svm_gap_reach_the_optimum(monkeypatch):
    """SVM solves whose SMO stops on its duality gap (not its KKT test) still give the
    reference optimum and an honest certificate (the SVM gap allowed raised tenfold, so that
    many solves stop on it)."""
    import mklearn.svm.smo as smo
    from mklearn.solvers.spg_parts import InnerPrecision

    stack, y = _problem("liver-disorders", n=200)
    stopped = []
    run_smo = smo.run_smo

    def recording(rows, st, **kw):
        result = run_smo(rows, st, **kw)
        if kw.get("gap") is not None and result[0] and result[2] > kw["tol"]:
            stopped.append(result[1])  # solved by the gap, KKT violation above tol
        return result

    monkeypatch.setattr(smo, "GAP_CHECK_STEPS", 20)
    monkeypatch.setattr(InnerPrecision, "PRECISE_SHARE", 1.0)
    monkeypatch.setattr(smo, "run_smo", recording)
    C = 100.0
    model = MKLClassifier(kernels="precomputed", solver="spg", regularizer="l1", C=C,
                          tol=1e-4, max_iter=3000,  # every step a line search
                          solver_options={"second_order": False}).fit(stack, y)
    assert stopped, "no solve stopped on its duality gap"
    optimum = l1_mkl_optimum(stack, y, C)
    assert model.objective_ == pytest.approx(optimum, rel=2e-4)
    exact = _exact_objective(stack, y, C, model.kernel_weights_, 0.0)
    assert exact - optimum <= model.duality_gap_ + 1e-6 * abs(optimum)


def test_pgd_trials_stopped_early_keep_its_path(monkeypatch):
    """PGD's line-search trials from the halvings on stop as soon as their SVM proves them
    rejected: the run takes the same steps, SVM solves and optimum as with every trial
    solved, and fewer SMO steps."""
    import mklearn.svm.smo as smo
    from mklearn.solvers.spg_evaluator import Evaluator

    stack, y = _problem("liver-disorders", n=200)
    steps, stopped = [], []
    run_smo = smo.run_smo

    def counting(rows, st, **kw):
        result = run_smo(rows, st, **kw)
        steps.append(result[1])
        stopped.append(result[3])
        return result

    monkeypatch.setattr(smo, "run_smo", counting)
    solve = Evaluator.solve

    def every_trial_solved(self, d, alpha0, tol, products=None, reject_above=None):
        return solve(self, d, alpha0, tol, products)

    fits = []
    for early in (True, False):
        if not early:
            monkeypatch.setattr(Evaluator, "solve", every_trial_solved)
        steps.clear()
        stopped.clear()
        model = MKLClassifier(kernels="precomputed", solver="pgd", regularizer="l1", C=10.0,
                              tol=1e-4, max_iter=300).fit(stack, y)
        fits.append((model, sum(steps), any(stopped)))
    (early, early_steps, some), (full, full_steps, none) = fits
    assert some and not none and early_steps < full_steps
    assert early.n_svm_solves_ == full.n_svm_solves_ and early.n_iter_ == full.n_iter_
    assert early.objective_ == pytest.approx(full.objective_, rel=1e-10)
    np.testing.assert_allclose(early.kernel_weights_, full.kernel_weights_, atol=1e-10)
    assert early.objective_ == pytest.approx(l1_mkl_optimum(stack, y, 10.0), rel=1e-4)
