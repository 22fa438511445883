"""The coarse start of SPG-GMKL (l1 on many points): the weights of a subsample's problem."""

from __future__ import annotations

import numpy as np
import pytest

from mklearn.datasets import load_dataset
from mklearn.formulation.combinations import SumOfKernels
from mklearn.formulation.regularizers import L1Simplex
from mklearn.kernels import RBF, KernelBank
from mklearn.kernels.columns import KernelColumns
from mklearn.kernels.operator import RowKernels
from mklearn.solvers import coarse, spg
from mklearn.solvers.spg import spg_gmkl


def test_subsample_keeps_the_share_of_each_class():
    y = np.r_[np.ones(70), -np.ones(30)]
    picked = coarse.subsample(y, 0.25)
    assert np.array_equal(picked, np.sort(picked)) and np.unique(picked).size == picked.size
    assert (np.sum(y[picked] > 0), np.sum(y[picked] < 0)) == (18, 8)  # 17.5 and 7.5 rounded
    assert np.array_equal(picked, coarse.subsample(y, 0.25))  # seeded: the same every fit


@pytest.fixture(scope="module")
def pima():
    X, y = load_dataset("pima")
    X, y = X[:400], y[:400]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    specs = [RBF(sigma=s) for s in (0.5, 1.0, 2.0, 4.0)] + [
        RBF(sigma=2.0, features=f) for f in (1, 5, 7)]
    bank = KernelBank(specs, normalize="diagonal").fit(X)
    return bank, X, y.astype(float)


def test_coarse_start_reaches_the_certified_optimum(pima, monkeypatch):
    """From a subsample's weights, the run on every point certifies the same optimum as from
    uniform weights (the path the exact references test); the subsample's solves are
    counted."""
    bank, X, y = pima
    C, tol = 1.0, 1e-6
    calls = []
    solve = coarse.coarse_weights

    def spy(combination, y_full, cost, solver, **options):
        result = solve(combination, y_full, cost, solver, **options)
        calls.append((y_full.size, result))
        return result

    monkeypatch.setattr(coarse, "COARSE_MIN_SAMPLES", 150)
    monkeypatch.setattr(spg, "coarse_weights", spy)
    operator = RowKernels(KernelColumns(bank), cache_size=50)
    started = spg_gmkl(operator, y, C, L1Simplex(), tol=tol)
    plain = spg_gmkl(operator, y, C, L1Simplex(), tol=tol, coarse_start=False)
    assert [n for n, _ in calls] == [100, 400]  # the inner run returns first; 100 < 150
    weights, solves = calls[1][1]  # points: no coarser start
    assert calls[0][1] is None and solves >= 1 and started.n_svm_solves > solves
    assert started.converged and plain.converged
    assert started.objective == pytest.approx(plain.objective, rel=2 * tol)
    # each certificate bounds the other run's objective from below
    assert started.objective - started.duality_gap <= plain.objective * (1 + 1e-12)
    assert plain.objective - plain.duality_gap <= started.objective * (1 + 1e-12)


def test_no_coarse_start_without_a_subset(pima, monkeypatch):
    """A precomputed stack (no ``subset``), too few points, or weights given: no coarse run."""
    bank, X, y = pima
    calls = []
    monkeypatch.setattr(coarse, "COARSE_MIN_SAMPLES", 150)
    monkeypatch.setattr(spg, "spg_gmkl", lambda *a, **k: calls.append(a) or spg_gmkl(*a, **k))
    stack = SumOfKernels(bank.fit_transform(X))
    spg_gmkl(stack, y, 1.0, L1Simplex(), tol=1e-3)
    few = KernelBank(bank.specs, normalize="diagonal").fit(X[:120])
    spg_gmkl(RowKernels(KernelColumns(few), cache_size=50), y[:120], 1.0, L1Simplex(), tol=1e-3)
    operator = RowKernels(KernelColumns(bank), cache_size=50)
    spg_gmkl(operator, y, 1.0, L1Simplex(), tol=1e-3, d0=np.full(7, 1 / 7))
    assert calls == []
