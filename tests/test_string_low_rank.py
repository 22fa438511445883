"""Low-rank string kernels: the counted and landmark maps against the bank's kernels, the
feature-space solvers against the exact optima of their own stack ``Phi_k Phi_k'``, and the
estimators on sequences with ``kernel_approximation``."""

import numpy as np
import pytest
from reference import l1_mkl_optimum

from mklearn import MKLClassifier, MKLRegressor, save_model
from mklearn.formulation.regularizers import KLDivergence, L1Simplex
from mklearn.kernels import Spectrum, WeightedDegree
from mklearn.kernels.columns import StackColumns
from mklearn.kernels.low_rank import LowRankKernels, low_rank_kernels
from mklearn.kernels.string_bank import StringKernelBank
from mklearn.kernels.string_low_rank import StringLowRankMap
from mklearn.solvers import smo_mkl
from mklearn.solvers.feature_space import smooth_dual_features, spg_features

RTOL = 1e-4
KERNELS = [Spectrum(2), Spectrum(4), WeightedDegree(6)]


def _sequences(n=150, length=24, seed=0):
    rng = np.random.default_rng(seed)
    seqs = np.array(["".join(rng.choice(list("ACGT"), length)) for _ in range(n)])
    y = np.array([1.0 if "GA" in s[8:14] else -1.0 for s in seqs])
    return seqs, y


def _fitted(seqs, n_components, seed=0):
    bank = StringKernelBank(KERNELS, normalize="diagonal").fit(seqs)
    mapping = StringLowRankMap(bank, "nystroem", n_components, random_state=seed).fit()
    features = mapping.transform(bank.X_fit_, prepared=True)
    return bank, mapping, features


def _stack_of(features, starts):
    blocks = zip(starts[:-1], starts[1:], strict=True)
    return np.stack([features[:, a:b] @ features[:, a:b].T for a, b in blocks], axis=2)


def test_small_spectra_are_counted_and_every_landmark_makes_the_map_exact():
    seqs, _ = _sequences(n=80)
    bank, mapping, features = _fitted(seqs, n_components=80)
    assert mapping.exact_.all()
    assert mapping.ranks_[0] == 16  # the 16 2-mers of ACGT, counted
    assert list(mapping.landmark_kernels_) == [1, 2]  # 4-mers: more than 80 seen
    np.testing.assert_allclose(_stack_of(features, mapping.starts_),
                               bank.fit_transform(seqs), atol=1e-10)
    new, _ = _sequences(n=7, seed=1)
    cross = mapping.transform(new) @ features.T
    exact = bank.transform(new).sum(axis=2)
    np.testing.assert_allclose(cross, exact, atol=1e-9)


def test_fewer_landmarks_approximate_and_the_error_is_measured():
    seqs, _ = _sequences(n=200)
    bank = StringKernelBank(KERNELS, normalize="diagonal").fit(seqs)
    coarse = low_rank_kernels(bank, "nystroem", 30, budget=1 << 30, random_state=0,
                              map_type=StringLowRankMap)
    fine = low_rank_kernels(bank, "nystroem", 120, budget=1 << 30, random_state=0,
                            map_type=StringLowRankMap)
    assert coarse.map.exact_.tolist() == [True, False, False]
    assert coarse.kernel_errors[0] < 1e-12  # counted
    assert 0.0 < fine.error < coarse.error < 1.0
    assert coarse.map.landmark_points_.n_samples == 30


def test_string_features_reach_the_exact_optima_of_their_stack():
    seqs, y = _sequences()
    _, mapping, features = _fitted(seqs, n_components=40)
    operator = LowRankKernels(features, mapping.starts_)
    stack = _stack_of(features, mapping.starts_)
    result = spg_features(operator, y, 1.0, L1Simplex(), tol=1e-6)
    assert result.objective == pytest.approx(l1_mkl_optimum(stack, y, 1.0), rel=RTOL)
    regularizer = KLDivergence(1.0)
    exact = smo_mkl(StackColumns(stack), y, 1.0, regularizer, tol=1e-7)
    ours = smooth_dual_features(operator, y, 1.0, regularizer, tol=1e-6)
    assert ours.objective == pytest.approx(exact.objective, rel=RTOL)


def test_the_estimators_fit_and_predict_on_low_rank_string_kernels():
    seqs, y = _sequences()
    new, _ = _sequences(n=20, seed=3)
    exact = MKLClassifier(kernels=KERNELS).fit(seqs, y)
    with pytest.warns(UserWarning, match="not below the 150 training points"):
        every = MKLClassifier(kernels=KERNELS, kernel_approximation="nystroem",
                              n_components=150, random_state=0).fit(seqs, y)
    assert every.kernel_storage_ == "features" and every.approximation_error_ < 1e-10
    assert every.objective_ == pytest.approx(exact.objective_, rel=RTOL)
    np.testing.assert_allclose(every.decision_function(new), exact.decision_function(new),
                               atol=2e-3)
    model = MKLClassifier(kernels=KERNELS, kernel_approximation="nystroem", n_components=40,
                          random_state=0).fit(seqs, y)
    assert 0.0 < model.approximation_error_ < 1.0
    assert model.coef_.shape == (1, model.low_rank_.rank)
    np.testing.assert_allclose(model.decision_function(new),
                               model.low_rank_.transform(new) @ model.coef_[0]
                               + model.intercept_[0], atol=1e-10)
    assert not hasattr(model, "support_vectors_") and model.shape_fit_ == (150,)
    three = np.digitize(np.arange(150) % 7, [2, 5])
    assert model.fit(seqs, three).decision_function(new).shape == (20, 3)
    target = np.array([s.count("A") for s in seqs], dtype=float)
    regressor = MKLRegressor(kernels=KERNELS, kernel_approximation="nystroem",
                             n_components=60, random_state=0).fit(seqs, target)
    assert regressor.score(seqs, target) > 0.5


def test_string_kernels_refuse_random_features_and_unknown_letters():
    seqs, y = _sequences(n=60)
    with pytest.raises(ValueError, match="string kernels take kernel_approximation='nystroem'"):
        MKLClassifier(kernels=KERNELS, kernel_approximation="rff").fit(seqs, y)
    model = MKLClassifier(kernels=KERNELS, kernel_approximation="nystroem", n_components=20,
                          random_state=0).fit(seqs, y)
    with pytest.raises(ValueError, match="alphabet"):
        model.predict(np.array(["ACGTXACGTACGTACGTACGTACG"]))


def test_auto_is_low_rank_for_many_sequences_and_a_low_rank_string_model_is_not_saved(
        monkeypatch, tmp_path):
    seqs, y = _sequences(n=80)
    monkeypatch.setattr("mklearn.estimators.kernel_input.LOW_RANK_SAMPLES", 50)
    model = MKLClassifier(kernels=KERNELS, n_components=30, random_state=0).fit(seqs, y)
    assert model.kernel_approximation_ == "nystroem"
    assert MKLClassifier(kernels=KERNELS).fit(seqs[:40], y[:40]).kernel_approximation_ == (
        "exact")
    with pytest.raises(ValueError, match="cannot be saved yet"):
        save_model(model, tmp_path / "model.npz")
    assert not (tmp_path / "model.npz").exists()
