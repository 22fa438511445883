"""The cutting-plane lower bound of SPG-GMKL (SILP's master LP over its SVM solutions)."""

import numpy as np
import pytest
from reference import l1_mkl_optimum
from scipy.optimize import linprog
from test_spg_nonsmooth import TOL, C, duplicates  # noqa: F401 (fixture)

from mklearn.formulation.combinations import SumOfKernels
from mklearn.formulation.regularizers import L1Simplex
from mklearn.kernels import RBF, KernelBank
from mklearn.solvers.cutting_planes import CuttingPlaneBound
from mklearn.solvers.spg import spg_gmkl
from mklearn.solvers.tasks import ClassificationTask


def _planes(stack, y, weights):
    """(linear parts, quadratic terms of every kernel) of the SVM solutions at ``weights``."""
    task = ClassificationTask(y, np.full(y.shape, C))
    linear, terms = [], []
    for d in weights:
        alpha = task.solve(stack @ d, None, 1e-8).alpha
        v = alpha * y
        linear.append(alpha.sum())
        terms.append(np.einsum("i,ijk,j->k", v, stack, v))
    return np.array(linear), np.array(terms)


def _lp_value(linear, terms):
    """min over the simplex of max_r (p_r - q_r' d / 2), by scipy's HiGHS."""
    m = terms.shape[1]
    result = linprog(np.r_[np.zeros(m), 1.0], A_ub=np.c_[-0.5 * terms, -np.ones(len(linear))],
                     b_ub=-linear, A_eq=np.r_[np.ones(m), 0.0][None], b_eq=[1.0],
                     bounds=[(0, None)] * m + [(None, None)], method="highs")
    return result.fun


def test_bound_is_the_master_lp_value_and_never_passes_the_optimum(duplicates):  # noqa: F811
    stack, y = duplicates
    m = stack.shape[2]
    # weights on either side of the l1 optimum (a kink): more and less of its main kernel
    d = spg_gmkl(SumOfKernels(stack), y, C, L1Simplex(), tol=TOL, max_iter=300).kernel_weights
    main = int(np.argmax(d))
    weights = [0.7 * d + 0.3 * np.eye(m)[main], d * np.where(np.arange(m) == main, 0.5, 1.0)]
    weights += list(np.random.default_rng(0).dirichlet(np.full(m, 0.3), size=10))
    weights = [w / w.sum() for w in weights]
    linear, terms = _planes(stack, y, weights)
    planes = CuttingPlaneBound(m)
    assert planes.bound() == -np.inf  # no plane, no bound
    for p, q in zip(linear, terms, strict=True):
        planes.add(p, q)
    lower = planes.bound()
    single = max(p - 0.5 * q.max() for p, q in zip(linear, terms, strict=True))
    assert lower == pytest.approx(_lp_value(linear, terms), rel=1e-7)
    assert lower > single  # the planes meet above every single solution's bound
    assert lower <= l1_mkl_optimum(stack, y, C) * (1 + 1e-9)
    assert planes.n_planes == 12
    assert planes.bound() == lower  # no new plane: the same bound, no LP


@pytest.fixture(scope="module")
def unbalanced():
    """600 points, 6% positive, with 40 sparse binary features (8% ones, like w8a) and 24 RBF
    kernels on random 3-feature subsets: few support vectors (under a quarter of the points,
    so every solve's quadratic terms come from the kernels' support blocks) and kinks."""
    rng = np.random.default_rng(2)
    n, p, sub = 600, 40, 3
    X = (rng.random((n, p)) < 0.08).astype(float)
    score = X @ rng.normal(size=p) + 0.3 * rng.normal(size=n)
    y = np.where(score > np.quantile(score, 0.94), 1.0, -1.0)
    specs = [RBF(sigma=s * np.sqrt(sub),
                 features=tuple(sorted(rng.choice(p, sub, replace=False).tolist())))
             for _ in range(8) for s in (0.5, 1.0, 2.0)]
    return KernelBank(specs, standardize=True, normalize="diagonal").fit_transform(X), y


def test_planes_certify_spg_sooner_and_stay_below_the_optimum(unbalanced):
    stack, y = unbalanced
    optimum = l1_mkl_optimum(stack, y, 1.0)
    runs = {flag: spg_gmkl(SumOfKernels(stack), y, 1.0, L1Simplex(), tol=TOL, max_iter=300,
                           fallback=False, cutting_planes=flag) for flag in (False, True)}
    for result in runs.values():
        assert result.converged
        assert result.objective - result.duality_gap <= optimum + 1e-8 * optimum
        assert result.objective == pytest.approx(optimum, rel=2 * TOL)
    # never more SVM solves with the planes (18 instead of 74 where this path stalls at the
    # kink; on CPUs where rounding takes another path it does not stall: 29 and 29)
    assert runs[True].n_svm_solves <= runs[False].n_svm_solves


def test_no_planes_above_the_kernel_cap(unbalanced, monkeypatch):
    """The master LP's first solve grows fast with the kernels (its columns): above
    ``MAX_KERNELS`` SPG-GMKL keeps no planes, and runs as with ``cutting_planes=False``."""
    from mklearn.solvers.spg_parts import DualBound

    stack, y = unbalanced
    monkeypatch.setattr(DualBound, "MAX_PLANE_KERNELS", stack.shape[2] - 1)
    capped = spg_gmkl(SumOfKernels(stack), y, 1.0, L1Simplex(), tol=TOL, max_iter=300,
                      fallback=False)
    off = spg_gmkl(SumOfKernels(stack), y, 1.0, L1Simplex(), tol=TOL, max_iter=300,
                   fallback=False, cutting_planes=False)
    assert capped.n_svm_solves == off.n_svm_solves
    assert capped.relative_duality_gap == off.relative_duality_gap
