"""What the solver table declares and what operators answer in place of type tests."""

from __future__ import annotations

import numpy as np
import pytest

from mklearn import MKLClassifier, MKLRegressor
from mklearn.formulation.combinations import SumOfKernels
from mklearn.formulation.regularizers import L1Simplex, make_regularizer
from mklearn.kernels import StackColumns
from mklearn.kernels.base import KernelOperator, PointSelection
from mklearn.one_class import OneClassMKL
from mklearn.solvers import SOLVERS, solvers_for, spg_gmkl


class _Plain(KernelOperator):
    """A user's operator over a stack: the two required methods only."""

    def __init__(self, stack):
        self.stack = stack
        self.n_samples, self.n_kernels = stack.shape[0], stack.shape[2]

    def rows(self, indices, kernels=None):
        picked = np.arange(self.n_kernels) if kernels is None else np.asarray(kernels)
        return np.moveaxis(self.stack[np.atleast_1d(indices)][:, :, picked], 2, 0)

    def diagonal(self):
        return np.stack([np.diag(self.stack[:, :, k]) for k in range(self.n_kernels)])


def _stack(n=12, m=3, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, 2))
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    return np.stack([np.exp(-sq / w) for w in (0.5, 1.0, 4.0)[:m]], axis=2)


def test_estimators_take_the_solvers_the_table_gives_their_task():
    regression = MKLRegressor._parameter_constraints["solver"][0].options
    one_class = OneClassMKL._parameter_constraints["solver"][0].options
    assert regression == {"auto", *solvers_for("regression")}
    assert one_class == {"auto", *solvers_for("one-class")}
    assert {"smo", "silp", "spg", "average"} <= regression and "mwu" not in regression
    assert set(solvers_for("one-class")) == {"silp", "spg"}
    assert solvers_for("classification", "product") == ["spg", "pgd"]


def test_one_cost_solver_refuses_per_sample_costs_by_its_name():
    single = [name for name, info in SOLVERS.items() if not info.per_sample_costs]
    assert single == ["mwu"]
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="'mwu' takes one C for all samples"):
        MKLClassifier(solver="mwu", class_weight={0: 2.0}).fit(X, y)


def test_spg_names_its_switches_for_an_unknown_one():
    stack = _stack()
    with pytest.raises(TypeError, match="spectrall.*'spectral'"):
        spg_gmkl(SumOfKernels(stack), np.ones(12), 1.0, make_regularizer("l1", p=2.0, lam=1.0),
                 spectrall=False)


@pytest.mark.parametrize("make", [SumOfKernels, StackColumns, _Plain])
def test_point_subset_is_the_stack_on_those_points(make):
    stack = _stack()
    points = np.array([7, 1, 4])
    part = make(stack).point_subset(points)
    assert part.n_samples == 3 and part.n_kernels == 3
    expected = np.moveaxis(stack[np.ix_(points, points)], 2, 0)
    np.testing.assert_allclose(part.rows(np.arange(3)), expected)
    assert isinstance(part, PointSelection) == (make is _Plain)


@pytest.mark.parametrize("cache_size", [200.0, 0.0001])
def test_svm_kernel_is_the_combined_kernel(cache_size):
    stack = _stack()
    d = np.array([0.5, 0.0, 2.0])
    expected = stack @ d
    for operator in (StackColumns(stack), _Plain(stack)):
        rows = operator.svm_kernel(d, cache_size)
        np.testing.assert_allclose(rows @ np.eye(12)[0], expected[0])


@pytest.mark.parametrize(("name", "former"), [
    ("spg", "combination"), ("mirror", "combination"), ("silp", "combination"),
    ("mwu", "combination"), ("smo", "provider"), ("average", "provider"),
    ("align", "provider"), ("alignf", "provider"), ("fheuristic", "provider"),
    ("pwmk", "provider"), ("easymkl", "provider")])
def test_a_solver_s_former_operator_name_still_works_with_a_future_warning(name, former):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    stack = np.stack([X @ X.T, np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))], axis=2)
    info = SOLVERS[name]
    operator = StackColumns(stack) if info.input == "columns" else SumOfKernels(stack)
    regularizer = (make_regularizer("kl", p=2.0, lam=1.0) if name == "smo" else L1Simplex())
    with pytest.warns(FutureWarning, match=f"'{former}' is now called 'operator'"):
        renamed = info.function(**{former: operator}, y=y, C=1.0, regularizer=regularizer)
    np.testing.assert_allclose(renamed.kernel_weights,
                               info.function(operator, y, 1.0, regularizer).kernel_weights)


@pytest.mark.parametrize(("storage", "threads"), [("stack", True), ("rows", False)])
def test_one_vs_rest_classes_share_an_operator_on_threads_only_when_it_says_it_may(
        monkeypatch, storage, threads):
    import mklearn.estimators.classifier as estimators

    used = []
    real = estimators.Parallel
    monkeypatch.setattr(estimators, "Parallel", lambda *a, **k: used.append(1) or real(*a, **k))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.digitize(X[:, 0], [-0.5, 0.5])  # three classes
    model = MKLClassifier(kernels="simple_mkl", solver="spg", kernel_storage=storage,
                          n_jobs=2).fit(X, y)
    assert bool(used) == threads  # the row path's cache is written on misses
    assert len(model.classes_) == 3
