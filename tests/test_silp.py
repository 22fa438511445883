"""SILP MKL (wrapper and interleaved) and SPG-GMKL on the three tasks against exact convex
references (cvxpy + Clarabel), and the pieces of SILP checked alone."""

import numpy as np
import pytest
from reference import l1_mkl_optimum, l1_one_class_optimum, l1_svr_optimum
from scipy.optimize import linprog
from test_spg_reference import _problem

from mklearn.datasets import load_dataset
from mklearn.formulation.combinations import SumOfKernels
from mklearn.formulation.regularizers import L1Simplex
from mklearn.kernels import KernelBank
from mklearn.kernels.recipes import resolve_kernels
from mklearn.solvers import silp_mkl, spg_gmkl
from mklearn.solvers.silp import _chunk
from mklearn.solvers.silp_master import MasterLP
from mklearn.solvers.tasks import OneClassTask, RegressionTask, make_task
from mklearn.svm.smo import SMOState

TIGHT = {"tol": 1e-6, "inner_tol": 1e-7, "max_iter": 3000}


@pytest.fixture(scope="module")
def small():
    """60 liver samples, 31 of the SimpleMKL kernels, the labels, and a regression target
    whose optimum mixes several kernels."""
    stack, labels = _problem("liver-disorders", n=60)
    stack = np.ascontiguousarray(stack[:, :, ::3])
    rng = np.random.default_rng(1)
    y = stack[:, :5, 0] @ rng.normal(size=5) * 5 + 0.1 * rng.normal(size=60)
    return stack, y, labels


@pytest.mark.parametrize("C", [10.0, 100.0])
def test_classification_reaches_the_exact_optimum(small, C):
    stack, _, y = small
    optimum = l1_mkl_optimum(stack, y, C)
    combination = SumOfKernels(stack)
    spg = spg_gmkl(combination, y, C, L1Simplex(), tol=1e-6, max_iter=3000)
    for interleaved, level_method in [(False, True), (True, True), (False, False)]:
        result = silp_mkl(combination, y, C, L1Simplex(), interleaved=interleaved,
                          level_method=level_method, **TIGHT)
        assert result.converged
        assert result.objective == pytest.approx(optimum, rel=1e-4)
        assert result.objective == pytest.approx(spg.objective, rel=1e-4)
        assert 0.0 <= result.duality_gap <= 1e-4 * abs(optimum)
        assert result.history[-1]["eps_mkl"] <= 1e-6  # eps_MKL, the paper's rule
        d = result.kernel_weights
        assert np.all(d >= 0) and d.sum() == pytest.approx(1.0)
    assert np.count_nonzero(result.kernel_weights > 1e-6) >= 2  # a mixture, not a vertex


def _tasks(stack, y):
    n = len(y)
    return [
        (RegressionTask(y, 10.0, 0.1), lambda: l1_svr_optimum(stack, y, 10.0, 0.1)),
        (OneClassTask(n, 0.3), lambda: l1_one_class_optimum(stack, 0.3)),
    ]


@pytest.mark.parametrize("which", [0, 1], ids=["regression", "one-class"])
def test_regression_and_one_class_reach_their_cvxpy_duals(small, which):
    stack, y, _ = small
    task, reference = _tasks(stack, y)[which]
    optimum = reference()
    combination = SumOfKernels(stack)
    results = [silp_mkl(combination, None, None, L1Simplex(), interleaved=interleaved,
                        task=task, **TIGHT) for interleaved in (False, True)]
    results.append(spg_gmkl(combination, None, None, L1Simplex(), tol=1e-6, max_iter=3000,
                            task=task))
    for result in results:
        assert result.objective == pytest.approx(optimum, rel=1e-4)
        assert result.duality_gap <= 1e-4 * abs(optimum)
    # a genuine mixture, not a single kernel
    assert np.count_nonzero(results[0].kernel_weights > 1e-6) >= 2


def test_master_lp_prints_nothing(capfd):
    capfd.readouterr()
    master = MasterLP(3)
    master.add(np.array([1.0, 2.0, 3.0]))
    master.solve()
    captured = capfd.readouterr()  # HiGHS writes to the C-level stdout: fd 1
    assert captured.out == "" and captured.err == ""


def test_the_level_method_needs_far_fewer_lp_solves_for_the_same_optimum():
    X, y = load_dataset("sonar")
    rows = np.random.default_rng(0).choice(len(y), size=50, replace=False)
    X, y = X[rows], np.where(y[rows] == y.max(), 1.0, -1.0)
    specs, standardize = resolve_kernels("simple_mkl", X)  # 793 kernels
    combination = SumOfKernels(KernelBank(specs, standardize=standardize).fit_transform(X))
    runs = {level: silp_mkl(combination, y, 100.0, L1Simplex(), tol=1e-3, max_iter=3000,
                            level_method=level) for level in (True, False)}
    assert all(run.converged for run in runs.values())
    assert runs[True].objective == pytest.approx(runs[False].objective, rel=2e-3)
    assert 3 * runs[True].n_iter < runs[False].n_iter  # 87 and 568


def test_a_level_projection_past_its_iteration_limit_leaves_the_lp_point(small, monkeypatch):
    """HiGHS's QP stopped at its iteration limit (here at once): the master gives Kelley's
    LP point instead, and the run still reaches the optimum."""
    from mklearn.solvers import silp_master

    stack, _, y = small
    master = silp_master.MasterLP(stack.shape[2], level=True)
    monkeypatch.setattr(silp_master, "QP_ITERATIONS", 0)
    monkeypatch.setattr(silp_master, "QP_ITERATIONS_PER_KERNEL", 0)
    stalled = silp_master.MasterLP(stack.shape[2], level=True)
    S = np.random.default_rng(0).normal(size=stack.shape[2])
    beta = np.full(stack.shape[2], 1.0 / stack.shape[2])
    for lp in (master, stalled):
        lp.add(S)
        lp.solve()
    assert master.level_point(beta, -1.0, 1.0) is not None
    assert stalled.level_point(beta, -1.0, 1.0) is None
    result = silp_mkl(SumOfKernels(stack), y, 10.0, L1Simplex(), **TIGHT)
    assert result.converged
    assert result.objective == pytest.approx(l1_mkl_optimum(stack, y, 10.0), rel=1e-4)


def test_master_lp_is_scale_free():
    # the same cuts in units 1e-37 and 1: the same weights, theta in the cuts' units
    rng = np.random.default_rng(3)
    cuts = rng.normal(size=(12, 4))
    points = []
    for scale in (1.0, 1e-37):
        master = MasterLP(4)
        for S in cuts:
            master.add(scale * S)
            beta, theta = master.solve()
        points.append((beta, theta / scale))
    np.testing.assert_allclose(points[0][0], points[1][0], atol=1e-9)
    assert points[0][1] == pytest.approx(points[1][1], rel=1e-9)


def test_master_lp_matches_linprog_and_pruning_keeps_the_optimum():
    rng = np.random.default_rng(0)
    m = 6
    master = MasterLP(m)
    cuts = []
    for r in range(40):
        S = rng.normal(size=m) + 0.05 * r
        cuts.append(S)
        master.add(S)
        beta, theta = master.solve()
        # max theta s.t. theta <= S_r' beta, beta in the simplex (variables beta, theta)
        res = linprog(np.r_[np.zeros(m), -1.0],
                      A_ub=np.c_[-np.array(cuts), np.ones(len(cuts))], b_ub=np.zeros(len(cuts)),
                      A_eq=np.r_[np.ones(m), 0.0][None], b_eq=[1.0],
                      bounds=[(0, None)] * m + [(None, None)], method="highs")
        assert theta == pytest.approx(-res.fun, abs=1e-9)
        assert np.min(np.array(cuts) @ beta) == pytest.approx(theta, abs=1e-9)
    assert master.n_pruned > 0
    assert master.n_constraints < len(cuts)


def test_interleaved_chunk_keeps_per_kernel_outputs_exact(small):
    stack, y, _ = small
    task = make_task("regression", y, 10.0, epsilon=0.1)
    combination = SumOfKernels(stack)
    km = combination.kernel_major
    m, n = km.shape[0], km.shape[1]
    st = SMOState(task.signs, task.index, task.linear, task.upper, n, np.zeros(2 * n))
    F = np.zeros((m, n))
    v = np.zeros(n)
    d = np.random.default_rng(0).dirichlet(np.ones(m))
    taken = []
    for _ in range(5):
        _, steps, v, K = _chunk(combination, st, F, d, 1e-6, 37, v)
        taken.append(steps)
        np.testing.assert_allclose(K @ v, np.tensordot(d, km, axes=1) @ v, atol=1e-10)
        np.testing.assert_allclose(v, task.coefficients(st.alpha))
        np.testing.assert_allclose(F, km @ v, atol=1e-10)
        assert np.all(st.alpha >= 0) and np.all(st.alpha <= task.upper)
        assert abs(task.signs @ st.alpha) < 1e-10
    assert 0 < sum(taken) and max(taken) <= 37
    # the chunks ran the SMO to the tolerance: the single-kernel optimum at K(d)
    solved, _, v, _ = _chunk(combination, st, F, d, 1e-8, 10**6, v)
    assert solved
    exact = task.solve(np.tensordot(stack, d, axes=([2], [0])), None, 1e-10)
    value = 0.5 * v @ (np.tensordot(stack, d, axes=([2], [0])) @ v) - task.linear_value(st.alpha)
    assert value == pytest.approx(exact.objective, rel=1e-7)


@pytest.mark.parametrize("interleaved", [False, True])
def test_smo_steps_are_those_of_every_solve_or_chunk(small, interleaved):
    """The wrapper's steps: those of its SVM solves, the first a cold one at uniform weights;
    the interleaved variant's: at most ``chunk_steps`` a chunk."""
    stack, _, y = small
    combination = SumOfKernels(stack)
    result = silp_mkl(combination, y, 10.0, L1Simplex(), interleaved=interleaved,
                      chunk_steps=25, tol=1e-4, max_iter=200)
    assert result.n_svm_solves <= result.n_smo_steps
    if interleaved:
        assert result.n_smo_steps <= 25 * result.n_svm_solves
    else:
        uniform = np.full(stack.shape[2], 1.0 / stack.shape[2])
        first = make_task("classification", y, 10.0).solve(combination.matrix(uniform), None,
                                                            1e-4)
        assert first.n_iter <= result.n_smo_steps


def test_silp_rejects_other_regularizers(small):
    from mklearn.formulation.regularizers import LpNorm

    stack, _, y = small
    with pytest.raises(ValueError, match="regularizer='l1'"):
        silp_mkl(SumOfKernels(stack), y, 1.0, LpNorm(2.0, 1.0))


@pytest.mark.parametrize("interleaved", [False, True])
def test_a_converged_run_has_its_gap_within_tol(interleaved):
    # eps_MKL met tol while the inner SVM's own gap left the certified one at 1.1-1.6e-3
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from mklearn import MKLClassifier
    from mklearn.datasets import load_sonar
    from mklearn.kernels import mwumkl_kernels

    X, y = load_sonar()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = MKLClassifier(kernels=mwumkl_kernels(per_feature=False), solver="silp", C=10,
                              solver_options={"interleaved": interleaved}).fit(X, y)
    assert model.relative_duality_gap_ <= model.tol
    assert model.history_[-1]["eps_mkl"] <= model.tol
