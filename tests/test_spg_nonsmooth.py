"""SPG-GMKL where W(d) has kinks: duplicate points on the kernels' features."""

import numpy as np
import pytest
from reference import l1_mkl_optimum
from sklearn.svm import SVC

from mklearn.formulation.combinations import SumOfKernels
from mklearn.formulation.regularizers import L1Simplex
from mklearn.kernels import RBF, KernelBank
from mklearn.solvers.spg import spg_gmkl

C, TOL = 1.0, 1e-4


@pytest.fixture(scope="module")
def duplicates():
    """150 points with 40 sparse binary features (8% ones, like w8a) and 24 RBF kernels on
    random 3-feature subsets: most points coincide on a kernel's features, so the SVM's
    solution is not unique and W(d) is not differentiable where SPG-GMKL goes."""
    rng = np.random.default_rng(2)
    n, p, sub = 150, 40, 3
    X = (rng.random((n, p)) < 0.08).astype(float)
    w = rng.normal(size=p)
    y = np.where(X @ w + 0.3 * rng.normal(size=n) > np.median(X @ w), 1.0, -1.0)
    specs = [RBF(sigma=s * np.sqrt(sub),
                 features=tuple(sorted(rng.choice(p, sub, replace=False).tolist())))
             for _ in range(8) for s in (0.5, 1.0, 2.0)]
    stack = KernelBank(specs, standardize=True, normalize="diagonal").fit_transform(X)
    distinct = [np.unique(X[:, list(spec.features)], axis=0).shape[0] for spec in specs]
    assert max(distinct) < n / 4  # duplicates on every kernel's features
    return stack, y


def test_line_searches_do_not_restart_from_a_vertex_on_linear_pieces(duplicates):
    # between kinks the SVM solution, and so the gradient, does not change (s'y = 0): the
    # Barzilai-Borwein step would be LAMBDA_MAX, a trial at a vertex and tens of halvings
    # back (3.4 SVM solves an iteration here); twice the accepted step keeps it near one
    # (1.25 over the first 100 iterations, the gap from 1.8 to 7e-4). Near the kink, until
    # the run stops stalled, re-screens and failed searches cost more solves, and how many
    # such iterations a run takes depends on rounding (1.5-1.7 an iteration overall)
    stack, y = duplicates
    result = spg_gmkl(SumOfKernels(stack), y, C, L1Simplex(), tol=TOL, max_iter=300,
                      fallback=False)
    assert result.n_iter > 100
    assert result.history[100]["n_svm_solves"] < 1.5 * 100
    assert result.n_svm_solves < 2.0 * result.n_iter


def test_spg_alone_stalls_and_the_mirror_fallback_certifies_the_optimum(duplicates):
    stack, y = duplicates
    combination = SumOfKernels(stack)
    # without the cutting planes (test_cutting_planes.py), which certify this run alone
    alone = spg_gmkl(combination, y, C, L1Simplex(), tol=TOL, max_iter=300, fallback=False,
                     cutting_planes=False)
    assert not alone.converged and alone.relative_duality_gap > TOL  # the dual bound lags

    result = spg_gmkl(combination, y, C, L1Simplex(), tol=TOL, max_iter=300,
                      cutting_planes=False)
    assert result.converged and result.relative_duality_gap <= TOL
    assert result.n_iter < 300
    optimum = l1_mkl_optimum(stack, y, C)
    assert result.objective == pytest.approx(optimum, rel=2 * TOL)
    # the returned weights are as good as the certificate says (LIBSVM at tol 1e-10)
    d = result.kernel_weights
    assert np.all(d >= 0) and d.sum() == pytest.approx(1.0)
    K = stack @ d
    svc = SVC(kernel="precomputed", C=C, tol=1e-10).fit(K, y)
    alpha = np.zeros_like(y)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    v = alpha * y
    exact = alpha.sum() - 0.5 * v @ K @ v
    assert optimum <= exact + 1e-6 * abs(optimum)
    assert exact - optimum <= result.duality_gap + 1e-6 * abs(optimum)
    records = result.history
    pairs = list(zip(records[:-1], records[1:], strict=True))
    assert all(a["iteration"] < b["iteration"] for a, b in pairs)
    assert all(a["n_svm_solves"] <= b["n_svm_solves"] for a, b in pairs)


def test_max_time_runs_keep_to_spg_steps(duplicates):
    stack, y = duplicates
    combination = SumOfKernels(stack)
    timed = spg_gmkl(combination, y, C, L1Simplex(), tol=TOL, max_iter=300, max_time=1e6)
    alone = spg_gmkl(combination, y, C, L1Simplex(), tol=TOL, max_iter=300, fallback=False)
    assert (timed.n_iter, timed.n_svm_solves) == (alone.n_iter, alone.n_svm_solves)


def test_fallback_phases_share_one_budget_of_mirror_steps(duplicates, monkeypatch):
    from mklearn.solvers.spg_parts import MirrorFallback

    monkeypatch.setattr(MirrorFallback, "FALLBACK_ITER", 6)
    monkeypatch.setattr(MirrorFallback, "FALLBACK_PATIENCE", 1)
    stack, y = duplicates
    result = spg_gmkl(SumOfKernels(stack), y, C, L1Simplex(), tol=1e-6, max_iter=300,
                      cutting_planes=False)
    mirror = np.array([np.isnan(record["pg_norm"]) for record in result.history])
    phases = int(np.sum(mirror[1:] & ~mirror[:-1]) + mirror[0])
    assert phases >= 2  # patience 1 ends each phase early: SPG falls back again
    assert mirror.sum() - phases <= 6  # each phase's records: its start, then its steps
    assert result.relative_duality_gap >= 0.0 and np.isfinite(result.objective)
