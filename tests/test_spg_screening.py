"""Kernel shrinking in SPG-GMKL: predicted re-screening changes the path, never the optimum."""

import numpy as np
import pytest

import mklearn.solvers.spg as spg
from mklearn import MKLClassifier
from mklearn.datasets import load_sonar
from mklearn.kernels import KernelBank, resolve_kernels


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
    original = spg._unfreeze_predicted

    def counting(evaluator, point, live, grad):
        new_live, new_grad = original(evaluator, point, live, grad)
        unfrozen.append(int(new_live.sum() - live.sum()))
        assert not np.isnan(new_grad[new_live]).any()  # exact gradients, never predictions
        return new_live, new_grad

    monkeypatch.setattr(spg, "_unfreeze_predicted", counting)
    models = {}
    for ratio in (spg.PREDICTED_SCREEN_RATIO, np.inf):  # np.inf: only full passes unfreeze
        monkeypatch.setattr(spg, "PREDICTED_SCREEN_RATIO", ratio)
        unfrozen.clear()
        models[ratio] = MKLClassifier(kernels="precomputed", solver="spg", C=100.0,
                                       tol=1e-6).fit(stack, y)
        assert (sum(unfrozen) > 0) == np.isfinite(ratio)
    with_prediction, without = models.values()
    # both certified within 1e-6 of the optimum, so within 2e-6 of each other
    assert with_prediction.objective_ == pytest.approx(without.objective_, rel=2e-6)
    for model in models.values():
        assert model.duality_gap_ <= 1e-6 * abs(model.objective_) * 1.0001
