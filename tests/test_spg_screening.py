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
