"""The kernel-operator interface: a user's subclass works with every solver it can serve.

The operator below is the one of ``docs/extending.md``: base kernels ``K_k = Phi_k Phi_k'``
from explicit feature maps, with two methods (``rows``, ``diagonal``) and one optional fast
path (``products``). Every solver that takes a sum of kernels must reach the optimum it
reaches on the same kernels as a precomputed stack.
"""

from __future__ import annotations

import numpy as np
import pytest

from mklearn.formulation.combinations import SumOfKernels
from mklearn.formulation.regularizers import make_regularizer
from mklearn.kernels import StackColumns
from mklearn.kernels.base import KernelOperator, check_operator, require
from mklearn.solvers import SOLVERS


class LowRankKernels(KernelOperator):
    """``K_k = Phi_k Phi_k'`` from explicit feature maps ``Phi_k`` of shape (n, r_k)."""

    def __init__(self, features):
        self.features = [np.asarray(F, dtype=np.float64) for F in features]
        self.n_samples = self.features[0].shape[0]
        self.n_kernels = len(self.features)

    def rows(self, indices, kernels=None):
        picked = range(self.n_kernels) if kernels is None else kernels
        indices = np.atleast_1d(indices)
        return np.stack([self.features[k][indices] @ self.features[k].T for k in picked])

    def diagonal(self):
        return np.stack([np.einsum("ij,ij->i", F, F) for F in self.features])

    def products(self, v, kernels=None):  # K_k v = Phi_k (Phi_k' v): O(n r), no rows
        picked = range(self.n_kernels) if kernels is None else kernels
        return np.stack([self.features[k] @ (self.features[k].T @ v) for k in picked])


def _problem(seed=0, n=60):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 6))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * X[:, 2] + 0.2 * rng.standard_normal(n) > 0,
                 1.0, -1.0)
    # feature maps: linear kernels on pairs of features and one quadratic map
    features = [X[:, [0, 1]], X[:, [2, 3]], X[:, [4, 5]],
                np.column_stack([X[:, 0] * X[:, 1], X[:, 0] ** 2, X[:, 1] ** 2]) / 2.0]
    stack = np.stack([F @ F.T for F in features], axis=-1)
    return features, stack, y


# (solver, regularizer) for every solver of a sum of kernels in classification
CASES = [("spg", "l1"), ("pgd", "l1"), ("silp", "l1"), ("mirror", "l1"), ("mwu", "l1"),
         ("smo", "lp"), ("smo", "kl"), ("spg", "lp"), ("average", "l1"), ("align", "l1"),
         ("alignf", "l1"), ("fheuristic", "l1"), ("pwmk", "l1")]


@pytest.mark.parametrize(("solver", "regularizer"), CASES)
def test_a_user_operator_reaches_the_optimum_of_the_stack(solver, regularizer):
    features, stack, y = _problem()
    info = SOLVERS[solver]
    reg = make_regularizer(regularizer, p=1.5, lam=1.0)
    options = dict(info.defaults)
    if solver in ("spg", "pgd", "silp", "mirror", "smo"):
        options["tol"] = 1e-6
    if solver in ("pgd", "mirror"):
        options["max_iter"] = 5000
    stacked = StackColumns(stack) if info.input == "columns" else SumOfKernels(stack)
    reference = info.function(stacked, y, 1.0, reg, **options)
    mine = info.function(LowRankKernels(features), y, 1.0, reg, **options)
    assert mine.objective == pytest.approx(reference.objective, rel=1e-4)
    assert np.allclose(mine.kernel_weights, reference.kernel_weights, atol=5e-3)


def test_the_default_methods_agree_with_the_stack():
    features, stack, y = _problem(1, n=40)
    operator = LowRankKernels(features)
    operator.check()
    v = np.where(np.arange(40) % 3 == 0, y, 0.0)
    d = np.array([0.5, 0.0, 0.25, 0.25])
    K = stack @ d
    assert np.allclose(operator.kernel_gradient(d, v), np.einsum("i,ijk,j->k", v, stack, v))
    g, P = operator.gradient_and_products(v)
    assert np.allclose(P, np.einsum("ijk,j->ki", stack, v)) and np.allclose(g, P @ v)
    rows = operator.kernel(d)
    assert np.allclose(rows @ v, K @ v)
    assert np.allclose(rows.submatrix(np.array([1, 5, 7])), K[np.ix_([1, 5, 7], [1, 5, 7])])
    assert np.allclose(operator.combined_diagonal(np.array([0, 2, 3]), d[[0, 2, 3]]),
                       np.diagonal(K))
    assert np.allclose(operator.kernel_rows_times([1, 3], [2, 4], v),
                       np.einsum("ijk,j->ki", stack, v)[[1, 3]][:, [2, 4]])
    part = operator.kernel_subset([3, 0])
    assert np.allclose(part.rows([2]), operator.rows([2], [3, 0]))
    assert np.allclose(part.diagonal(), operator.diagonal()[[3, 0]])


class _Asymmetric(LowRankKernels):
    def rows(self, indices, kernels=None):
        out = super().rows(indices, kernels)
        out[:, np.atleast_1d(indices) != 0, 0] += 1.0  # column 0 differs from row 0
        return out


class _WrongDiagonal(LowRankKernels):
    def diagonal(self):
        return super().diagonal() + 0.5


@pytest.mark.parametrize(("broken", "message"), [
    (_Asymmetric, "not symmetric"), (_WrongDiagonal, "diagonal"),
])
def test_a_broken_operator_is_caught_before_the_solve(broken, message):
    features, _, y = _problem()
    with pytest.raises(ValueError, match=message):
        SOLVERS["spg"].function(broken(features), y, 1.0, make_regularizer("l1", p=2, lam=1))


def test_a_missing_capability_names_the_operators_that_have_it():
    features, _, _ = _problem()
    with pytest.raises(ValueError, match=r"'linadd'.*StringColumns"):
        require(LowRankKernels(features), "linadd", "silp")
    with pytest.raises(TypeError, match="KernelOperator"):
        check_operator(np.eye(3), "mwu")
