"""Kernel shrinking in SPG-GMKL: predicted re-screening changes the path, never the optimum."""

import numpy as np
import pytest

from mklearn import MKLClassifier
from mklearn.datasets import load_sonar
from mklearn.kernels import KernelBank, resolve_kernels
from mklearn.solvers.spg_parts import KernelScreening


@pytest.fixture(scope="module")
def sonar_stack():
    """120 Sonar points with all 793 SimpleMKL kernels: the restricted start freezes most."""
    X, y = load_sonar()
    rows = np.random.default_rng(3).choice(len(y), size=120, replace=False)
    specs, standardize = resolve_kernels("simple_mkl", X[rows])
    return KernelBank(specs, standardize=standardize).fit_transform(X[rows]), y[rows]


def test_predicted_rescreening_unfreezes_kernels_and_keeps_the_optimum(sonar_stack, monkeypatch):
    stack, y = sonar_stack
    unfrozen = []
    original = KernelScreening.unfreeze_predicted

    def counting(screening, evaluator, point, grad):
        live = screening.live
        new_grad = original(screening, evaluator, point, grad)
        unfrozen.append(int(screening.live.sum() - live.sum()))
        assert not np.isnan(new_grad[screening.live]).any()  # exact, never predictions
        return new_grad

    monkeypatch.setattr(KernelScreening, "unfreeze_predicted", counting)
    models = {}
    for ratio in (KernelScreening.PREDICTED_RATIO, np.inf):  # np.inf: only full passes
        monkeypatch.setattr(KernelScreening, "PREDICTED_RATIO", ratio)
        unfrozen.clear()
        models[ratio] = MKLClassifier(kernels="precomputed", solver="spg", C=100.0,
                                       tol=1e-6).fit(stack, y)
        assert (sum(unfrozen) > 0) == np.isfinite(ratio)
    with_prediction, without = models.values()
    # both certified within 1e-6 of the optimum, so within 2e-6 of each other
    assert with_prediction.objective_ == pytest.approx(without.objective_, rel=2e-6)
    for model in models.values():
        assert model.duality_gap_ <= 1e-6 * abs(model.objective_) * 1.0001


def test_kept_products_move_with_v_and_agree_with_products_computed_anew():
    from mklearn.formulation.combinations import SumOfKernels
    from mklearn.solvers.spg_evaluator import KeptProducts

    rng = np.random.default_rng(0)
    n, m = 40, 6
    features = rng.normal(size=(m, n, 3))
    stack = np.einsum("kia,kja->ijk", features, features)
    operator = SumOfKernels(stack)
    reads = []

    def fresh(v, kernels):
        reads.append(("anew", np.count_nonzero(v)))
        return operator.gradient_and_products(v, kernels)

    kept = KeptProducts(operator, fresh)
    v = np.where(rng.random(n) < 0.8, rng.normal(size=n), 0.0)
    live = np.array([0, 2, 3])
    for step in range(6):
        kernels = np.arange(m) if step % 3 == 2 else live
        g, P = kept.terms(v, kernels)
        exact = np.array([v @ stack[:, :, k] @ v for k in kernels])
        np.testing.assert_allclose(g, exact, rtol=1e-12)
        np.testing.assert_allclose(P, np.einsum("ijk,j->ki", stack[:, :, kernels], v),
                                   rtol=1e-12, atol=1e-12)
        v = v.copy()
        v[rng.choice(np.flatnonzero(v), 3, replace=False)] *= 1.5  # a few coefficients move
    # computed anew only where no product was kept: the live kernels once, the others once
    assert reads == [("anew", reads[0][1])] * 2


def test_products_of_a_stack_read_the_support_of_v():
    from mklearn.formulation.combinations import SumOfKernels

    rng = np.random.default_rng(1)
    stack = rng.random((30, 30, 4))
    stack = stack + stack.transpose(1, 0, 2)
    v = np.zeros(30)
    v[[2, 7, 19]] = [1.0, -2.0, 0.5]
    expected = np.einsum("ijk,j->ki", stack, v)
    np.testing.assert_allclose(SumOfKernels(stack).products(v), expected, rtol=1e-12)
    np.testing.assert_allclose(SumOfKernels(stack).products(v, [3, 1]), expected[[3, 1]],
                               rtol=1e-12)
