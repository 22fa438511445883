"""Chunking SVC with linadd: same dual as the SMO on the precomputed kernel and as sklearn."""

import numpy as np
import pytest
from sklearn.svm import SVC

from mklearn.kernels.string_bank import StringColumns, StringKernelBank
from mklearn.kernels.strings import Spectrum, WeightedDegree, wd_sub_kernels
from mklearn.svm.linadd import svc_chunking
from mklearn.svm.smo import svc_dual


def _problem(n=120, length=30, seed=0):
    rng = np.random.default_rng(seed)
    seqs = np.array(["".join(rng.choice(list("ACGT"), size=length)) for _ in range(n)])
    signal = np.array([s[10:13].count("A") + s[20:22].count("G") for s in seqs])
    y = np.where(signal + rng.normal(scale=0.8, size=n) > 1.2, 1.0, -1.0)
    return seqs, y


@pytest.mark.parametrize("update", ["linadd", "rows"])
@pytest.mark.parametrize("C", [0.005, 50.0])
def test_same_dual_objective_as_smo_on_the_precomputed_kernel(update, C):
    seqs, y = _problem()
    specs = [*wd_sub_kernels(8, by="position", block_size=10).expand(seqs), Spectrum(3)]
    bank = StringKernelBank(specs, normalize=None).fit(seqs)
    weights = np.array([0.5, 2.0, 1.0, 0.3])
    K = np.ascontiguousarray(bank.fit_transform(seqs) @ weights)
    exact = svc_dual(K, y, C, tol=1e-8)
    result = svc_chunking(StringColumns(bank), y, C, kernel_weights=weights, working_set=16,
                          update=update, tol=1e-8, return_kernel_outputs=True)
    assert result.converged and result.n_iter > 3
    assert result.objective == pytest.approx(exact.objective, rel=1e-6)
    assert result.rho == pytest.approx(exact.rho, rel=1e-4, abs=1e-6)
    assert np.allclose(result.grad, y * (K @ (y * result.alpha)) - 1.0, atol=1e-8)
    if C < 0.01:  # some box constraints are active
        assert np.any(result.alpha == C)
    # per-kernel outputs K_m (y * alpha), the MKL gradient's ingredients
    expected = np.einsum("ijk,j->ik", bank.fit_transform(seqs), y * result.alpha)
    assert np.allclose(result.kernel_outputs, expected)


def test_agrees_with_sklearn_svc():
    seqs, y = _problem(n=150, seed=1)
    bank = StringKernelBank([WeightedDegree(10)]).fit(seqs)
    K = bank.fit_transform(seqs)[:, :, 0]
    C = 20.0
    result = svc_chunking(StringColumns(bank), y, C, working_set=20, tol=1e-6)
    svc = SVC(kernel="precomputed", C=C, tol=1e-8).fit(K, y)
    beta = np.zeros(y.size)
    beta[svc.support_] = svc.dual_coef_[0]
    sk_objective = 0.5 * beta @ K @ beta - np.abs(beta).sum()
    assert result.objective == pytest.approx(sk_objective, rel=1e-5)
    ours = K @ (y * result.alpha) - result.rho
    assert np.allclose(ours, svc.decision_function(K), atol=1e-3)


def test_working_set_larger_than_n_is_one_subproblem():
    seqs, y = _problem(n=40, seed=2)
    bank = StringKernelBank([WeightedDegree(5)]).fit(seqs)
    result = svc_chunking(StringColumns(bank), y, 1.0, working_set=200, tol=1e-6)
    assert result.converged
    exact = svc_dual(np.ascontiguousarray(bank.fit_transform(seqs)[:, :, 0]), y, 1.0, tol=1e-6)
    assert result.objective == pytest.approx(exact.objective, rel=1e-6)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"update": "trie"}, "'linadd' or 'rows'"),
        ({"working_set": 1}, "working_set must be an int >= 2"),
        ({"kernel_weights": [1.0, 2.0]}, "kernel_weights must be 1 finite numbers >= 0"),
        ({"tol": 0.0}, "tol must be > 0"),
    ],
)
def test_bad_parameters(kwargs, match):
    seqs, y = _problem(n=20)
    provider = StringColumns(StringKernelBank([WeightedDegree(3)]).fit(seqs))
    with pytest.raises(ValueError, match=match):
        svc_chunking(provider, y, 1.0, **kwargs)
    with pytest.raises(ValueError, match=r"labels in \{-1, \+1\}"):
        svc_chunking(provider, np.arange(20.0), 1.0)


@pytest.mark.parametrize("C, normalize", [(0.05, None), (50.0, "diagonal")])
def test_silp_with_linadd_reaches_the_exact_l1_mkl_optimum(C, normalize):
    """SILP interleaved over WD sub-kernels with the linadd decomposition (no kernel row, no
    stack) against cvxpy on the stack, and against the stack-based SILP."""
    from reference import l1_mkl_optimum

    from mklearn.formulation.combinations import SumOfKernels
    from mklearn.formulation.regularizers import L1Simplex
    from mklearn.solvers import silp_mkl
    from mklearn.solvers.silp_linadd import silp_linadd

    seqs, y = _problem(n=90)
    specs = wd_sub_kernels(6, by="position", block_size=10).expand(seqs)
    bank = StringKernelBank(specs, normalize=normalize).fit(seqs)
    stack = np.ascontiguousarray(bank.fit_transform(seqs))
    optimum = l1_mkl_optimum(stack, y, C)
    records = []
    result = silp_linadd(StringColumns(bank), y, C, tol=1e-6, inner_tol=1e-7, working_set=16,
                         chunk_iterations=5, callback=records.append)
    assert result.converged and result.n_iter > 1 and len(records) == result.n_iter + 1
    assert result.objective == pytest.approx(optimum, rel=1e-4)
    assert 0.0 <= result.duality_gap <= 1e-4 * abs(optimum)
    d = result.kernel_weights
    assert np.all(d >= 0) and d.sum() == pytest.approx(1.0)
    stacked = silp_mkl(SumOfKernels(stack), y, C, L1Simplex(), tol=1e-6, inner_tol=1e-7,
                       interleaved=True)
    np.testing.assert_allclose(d, stacked.kernel_weights, atol=1e-3)
    # the model predicts as the SVC on K(d) does: alpha and bias from the certificate
    K = stack @ d
    f = K @ (y * result.alpha) + result.intercept
    exact = svc_dual(K, y, C, tol=1e-9)
    f_exact = K @ (y * exact.alpha) - exact.rho
    assert np.mean(np.sign(f) == np.sign(f_exact)) >= 0.97


def test_silp_with_linadd_refuses_bad_parameters():
    from mklearn.solvers.silp_linadd import silp_linadd

    seqs, y = _problem(n=20)
    provider = StringColumns(StringKernelBank([WeightedDegree(3)]).fit(seqs))
    for kwargs, match in [({"C": -1.0}, "C must be"), ({"C": 1.0, "chunk_iterations": 0},
                                                        "chunk_iterations"),
                          ({"C": 1.0, "tol": 0.0}, "tol must")]:
        with pytest.raises(ValueError, match=match):
            silp_linadd(provider, y, **kwargs)
    with pytest.raises(ValueError, match="labels"):
        silp_linadd(provider, y[:5], 1.0)


def test_estimator_silp_with_linadd_matches_the_stack_silp():
    from mklearn import MKLClassifier

    seqs, y = _problem(n=90)
    labels = np.where(y > 0, "acceptor", "decoy")
    common = dict(kernels=wd_sub_kernels(6, by="position", block_size=10), solver="silp",
                  regularizer="l1", C=5.0, tol=1e-6)
    linadd = MKLClassifier(**common, kernel_storage="rows",
                           solver_options={"linadd": True, "inner_tol": 1e-7}).fit(seqs, labels)
    stack = MKLClassifier(**common, kernel_storage="stack",
                          solver_options={"interleaved": True, "inner_tol": 1e-7}).fit(seqs,
                                                                                       labels)
    assert linadd.objective_ == pytest.approx(stack.objective_, rel=1e-4)
    np.testing.assert_allclose(linadd.kernel_weights_, stack.kernel_weights_, atol=1e-3)
    assert np.mean(linadd.predict(seqs) == stack.predict(seqs)) >= 0.97
    with pytest.raises(ValueError, match="kernel_storage='rows'"):
        MKLClassifier(**common, kernel_storage="stack",
                      solver_options={"linadd": True}).fit(seqs, labels)
