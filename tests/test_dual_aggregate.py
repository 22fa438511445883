"""The aggregate dual bound: convex combinations of SVM solutions."""

import numpy as np
import pytest
from reference import l1_mkl_optimum
from test_spg_nonsmooth import TOL, C, duplicates  # noqa: F401 (fixture)

from mklearn.formulation.combinations import SumOfKernels
from mklearn.formulation.regularizers import L1Simplex, LpNorm
from mklearn.solvers.dual_aggregate import DualAggregate
from mklearn.solvers.spg import spg_gmkl
from mklearn.solvers.tasks import ClassificationTask


def _solution(stack, y, d):
    """The SVM's alpha at weights d, its quadratic terms and products K_k v."""
    task = ClassificationTask(y, np.full(y.shape, C))
    alpha = task.solve(stack @ d, None, 1e-8).alpha
    v = alpha * y
    products = np.einsum("ijk,j->ki", stack, v)
    return task, alpha, products @ v, products


def _exact_bound(stack, y, regularizer, alpha):
    v = alpha * y
    terms = np.einsum("i,ijk,j->k", v, stack, v)
    return alpha.sum() - regularizer.conjugate(0.5 * terms)


@pytest.mark.parametrize("regularizer", [L1Simplex(), LpNorm(1.5, 1.0)], ids=["l1", "lp"])
@pytest.mark.parametrize("with_products", [False, True])
def test_segment_bound_is_the_best_convex_combination(duplicates, regularizer,  # noqa: F811
                                                     with_products):
    stack, y = duplicates
    # two weights on either side of the l1 optimum (a kink): more and less of its main kernel
    # (a quarter of it: two kernels hold about 0.44 each, and which of them is the larger
    # differs in the last bits between machines; with half, one choice barely left the kink)
    d = spg_gmkl(SumOfKernels(stack), y, C, L1Simplex(), tol=TOL, max_iter=300).kernel_weights
    main = int(np.argmax(d))
    d_a = 0.7 * d
    d_a[main] += 0.3
    d_b = d.copy()
    d_b[main] *= 0.25
    d_b /= d_b.sum()
    task, alpha_a, terms_a, _ = _solution(stack, y, d_a)
    _, alpha_b, terms_b, products_b = _solution(stack, y, d_b)
    aggregate = DualAggregate(task, SumOfKernels(stack), regularizer)
    first = aggregate.add(d_a, alpha_a, terms_a)
    assert first == pytest.approx(_exact_bound(stack, y, regularizer, alpha_a), rel=1e-12)
    lower = aggregate.add(d_b, alpha_b, terms_b, products_b if with_products else None)

    grid = np.linspace(0.0, 1.0, 2001)
    exact = [_exact_bound(stack, y, regularizer, alpha_a + t * (alpha_b - alpha_a)) for t in grid]
    assert lower >= max(exact) - 1e-9 * abs(lower)  # the segment's maximum ...
    assert lower > max(exact[0], exact[-1]) + 1e-3 * abs(lower)  # ... well above both ends
    # ... and the bound of the aggregate point it keeps, a feasible dual point
    assert lower == pytest.approx(_exact_bound(stack, y, regularizer, aggregate.alpha), rel=1e-10)
    assert np.all(aggregate.alpha >= 0) and np.all(aggregate.alpha <= C)
    assert abs(aggregate.alpha @ y) <= 1e-8


def test_aggregate_never_passes_the_optimum_and_tightens_spg(duplicates):  # noqa: F811
    stack, y = duplicates
    optimum = l1_mkl_optimum(stack, y, C)
    # 300 steps: over the first 150 of this path the best single solution bounds as well as
    # the best combination (the same certified gap, 0.0798)
    runs = {flag: spg_gmkl(SumOfKernels(stack), y, C, L1Simplex(), tol=TOL, max_iter=300,
                           fallback=False, aggregate_bound=flag) for flag in (False, True)}
    for result in runs.values():
        assert result.objective - result.duality_gap <= optimum + 1e-8 * optimum
    # the SVM solutions at the kinks each bound loosely; their combinations never do worse
    # (strictly better where the path stalls at the kinks; where rounding takes another path,
    # both runs can end on the same bound)
    assert runs[True].objective - runs[True].duality_gap >= (
        runs[False].objective - runs[False].duality_gap)
