"""String kernels: values against their definitions, sub-kernels, providers, bad input."""

from collections import Counter

import numpy as np
import pytest

from mklearn import MKLClassifier
from mklearn.kernels.string_bank import StringColumns, StringKernelBank
from mklearn.kernels.strings import (
    Spectrum,
    WeightedDegree,
    check_sequences,
    wd_sub_kernels,
    wd_weights,
)
from mklearn.persistence import save_model


def _random_seqs(n, length, seed=0, alphabet="ACGT"):
    rng = np.random.default_rng(seed)
    return np.array(["".join(rng.choice(list(alphabet), size=length)) for _ in range(n)])


def _wd_definition(x, z, order, kmers=None, block=None):
    beta = wd_weights(order)
    lo, hi = (0, len(x)) if block is None else block
    return sum(beta[k - 1] for k in (kmers or range(1, order + 1)) for p in range(lo, hi)
               if p + k <= len(x) and x[p:p + k] == z[p:p + k])


def _spectrum_definition(x, z, order):
    cx = Counter(x[i:i + order] for i in range(len(x) - order + 1))
    cz = Counter(z[i:i + order] for i in range(len(z) - order + 1))
    return sum(cx[u] * cz[u] for u in cx)


def test_weights_follow_the_paper_and_sum_to_one():
    d = 5
    assert np.allclose(wd_weights(d), [2 * (d - k + 1) / (d * (d + 1)) for k in range(1, 6)])
    assert wd_weights(d).sum() == pytest.approx(1.0)


def test_wd_and_spectrum_values_match_the_definitions():
    seqs = _random_seqs(9, 14, seed=1)
    seqs[3] = seqs[2][:7] + seqs[3][7:]  # long shared runs
    specs = [WeightedDegree(5), WeightedDegree(5, kmers=(2, 4)),
             WeightedDegree(5, positions=(3, 9)),
             WeightedDegree(3, kmers=(1, 3), positions=(10, 14)), Spectrum(3)]
    stack = StringKernelBank(specs, normalize=None).fit_transform(seqs)
    for i, x in enumerate(seqs):
        for j, z in enumerate(seqs):
            expected = [_wd_definition(x, z, 5), _wd_definition(x, z, 5, [2, 4]),
                        _wd_definition(x, z, 5, None, (3, 9)),
                        _wd_definition(x, z, 3, [1, 3], (10, 14)), _spectrum_definition(x, z, 3)]
            assert np.allclose(stack[i, j], expected, atol=1e-12)


@pytest.mark.parametrize("table_codes", [1 << 24, 1])  # vocabulary by table, by sorting
@pytest.mark.parametrize("dense_bytes", [64 << 20, 0])  # products against dense, sparse
def test_spectrum_cross_kernels_match_the_definition_on_every_path(monkeypatch, table_codes,
                                                                   dense_bytes):
    monkeypatch.setattr("mklearn.kernels.string_bank.PRESENCE_TABLE_CODES", table_codes)
    monkeypatch.setattr("mklearn.kernels.string_bank.PREDICT_BLOCK_BYTES", dense_bytes)
    train = np.array(["ACGTTGCA" * 3, "AAAACCCCGG", "GATTACAGATTACA", "CCCGGGTTTAAA", "TA"])
    test = np.array(["ACGTACGTAC", "GGGGGGGG", "TTACAGAT", "NNACGT".replace("N", "A")])
    bank = StringKernelBank([Spectrum(2), Spectrum(3), Spectrum(6)], normalize="trace")
    cross = bank.fit(train).transform(test)
    for t, order in enumerate((2, 3, 6)):
        trace = sum(_spectrum_definition(x, x, order) for x in train)
        expected = [[_spectrum_definition(x, z, order) / trace for z in train] for x in test]
        np.testing.assert_allclose(cross[:, :, t], expected, atol=1e-12)


def test_spectrum_accepts_unequal_lengths_and_lower_case():
    seqs = np.array(["acgtacgt", "ACG", "TTTTACGTA", "gattaca"])
    stack = StringKernelBank([Spectrum(2)], normalize=None).fit_transform(seqs)
    upper = [s.upper() for s in seqs]
    for i in range(4):
        for j in range(4):
            assert stack[i, j, 0] == _spectrum_definition(upper[i], upper[j], 2)


@pytest.mark.parametrize("by", ["kmer", "position"])
def test_sub_kernels_add_up_to_the_full_wd_kernel(by):
    seqs = _random_seqs(20, 23, seed=2)
    recipe = wd_sub_kernels(6, by=by, block_size=5)
    specs = recipe.expand(seqs)
    assert len(specs) == (6 if by == "kmer" else 5)
    parts = StringKernelBank(specs, normalize=None).fit_transform(seqs).sum(axis=2)
    full = StringKernelBank([WeightedDegree(6)], normalize=None).fit_transform(seqs)[:, :, 0]
    assert np.allclose(parts, full)


def test_readable_names():
    spec = WeightedDegree(20, kmers=(3,), positions=(10, 20))
    assert spec.name == "wd(d=20, k=3) at positions 10-19"
    assert [s.name for s in wd_sub_kernels(4, by="position", block_size=5).specs(12)] == [
        "wd(d=4) at positions 0-4", "wd(d=4) at positions 5-9", "wd(d=4) at positions 10-11"]
    assert Spectrum(3).name == "spectrum(d=3)"


def test_trace_normalisation_transform_and_columns_agree_with_the_stack():
    seqs = _random_seqs(15, 12, seed=3)
    specs = [WeightedDegree(4, positions=(0, 6)), WeightedDegree(4, positions=(6, 12)), Spectrum(2)]
    bank = StringKernelBank(specs)
    stack = bank.fit_transform(seqs)
    assert np.allclose(np.trace(stack, axis1=0, axis2=1), 1.0)
    assert np.allclose(bank.transform(seqs[:4], rows=[2, 7, 9]), stack[:4][:, [2, 7, 9]])
    assert np.allclose(bank.transform(seqs[5:7], kernel_indices=[2, 0]), stack[5:7][:, :, [2, 0]])
    columns = StringColumns(bank)
    assert np.allclose(columns.rows([4, 1]), stack[[4, 1]].transpose(2, 0, 1))
    assert np.allclose(columns.rows([3], kernels=[1]), stack[[3]][:, :, [1]].transpose(2, 0, 1))
    assert np.allclose(columns.diagonal(), np.diagonal(stack, axis1=0, axis2=1))
    pick = [2, 5, 8]
    assert np.allclose(columns.block(pick), stack[np.ix_(pick, pick)].transpose(2, 0, 1))
    for k in range(3):
        assert np.linalg.eigvalsh(stack[:, :, k]).min() > -1e-10


def test_linadd_outputs_equal_kernel_times_vector():
    seqs = _random_seqs(25, 16, seed=4)
    specs = [*wd_sub_kernels(9, by="kmer").expand(seqs), Spectrum(3), WeightedDegree(9)]
    bank = StringKernelBank(specs)
    stack = bank.fit_transform(seqs)
    linadd = StringColumns(bank).linadd()
    rng = np.random.default_rng(0)
    amounts = rng.normal(size=25)
    w = linadd.add(linadd.new_vector(), np.arange(25), amounts)
    assert np.allclose(linadd.per_kernel_outputs(w), np.einsum("ijk,j->ik", stack, amounts))
    weights = rng.random(len(specs))
    assert np.allclose(linadd.outputs(w, weights), stack @ weights @ amounts)


def test_linadd_renumbers_long_kmers():
    seqs = _random_seqs(30, 40, seed=5)  # 12-mers: 4**12 codes x 29 positions > direct limit
    bank = StringKernelBank([WeightedDegree(12, kmers=(12,))], normalize=None)
    stack = bank.fit_transform(seqs)
    linadd = StringColumns(bank).linadd()
    assert linadd.n_columns <= 30 * 29
    amounts = np.arange(30.0)
    w = linadd.add(linadd.new_vector(), np.arange(30), amounts)
    assert np.allclose(linadd.per_kernel_outputs(w)[:, 0], stack[:, :, 0] @ amounts)


@pytest.mark.parametrize("solver,options", [("spg", {}), ("smo", {"regularizer": "lp"}),
                                            ("mwu", {})])
def test_classifier_fits_sequences_like_the_precomputed_stack(solver, options):
    seqs = _random_seqs(60, 20, seed=6)
    y = np.where([s[8:10] in ("AC", "GT", "CA") for s in seqs], 1, -1)
    recipe = wd_sub_kernels(5, by="position", block_size=5)
    model = MKLClassifier(kernels=recipe, solver=solver, C=100.0, kernel_normalization="trace",
                          **options).fit(seqs, y)
    assert model.kernel_names_[1] == "wd(d=5) at positions 5-9"
    stack = StringKernelBank(recipe.expand(seqs)).fit_transform(seqs)
    reference = MKLClassifier(kernels="precomputed", solver=solver, C=100.0, **options)
    reference.fit(stack, y)
    assert np.allclose(model.kernel_weights_, reference.kernel_weights_, atol=1e-6)
    cross = model.bank_.transform(seqs[:10])
    assert np.allclose(model.decision_function(seqs[:10]), reference.decision_function(cross))
    assert np.mean(model.predict(seqs) == y) > 0.9
    # the block holding positions 8-9 carries the largest weight
    assert np.argmax(model.kernel_weights_) == 1


def test_classifier_with_a_single_string_kernel_and_list():
    seqs = _random_seqs(40, 10, seed=7)
    y = np.where([s.count("A") > 2 for s in seqs], 1, -1)
    model = MKLClassifier(kernels=[Spectrum(1), Spectrum(2)]).fit(list(seqs), y)
    assert model.predict(seqs[:5]).shape == (5,)
    assert not hasattr(model, "n_features_in_")


def test_check_sequences_codes():
    seqs = check_sequences(["ACgt", "TT"])
    assert seqs.codes.tolist() == [[0, 1, 2, 3], [3, 3, 255, 255]]
    assert seqs.lengths.tolist() == [4, 2]


@pytest.mark.parametrize(
    "X,match",
    [
        (["ACGT", "ACG", "AC"], r"equal length.*lengths 2 \(1 sequences\), 3 \(1 sequences\), 4"),
        (["ACGT", "ACNT", "AXGT"], r"outside the alphabet 'ACGT': 'N', 'X' \(first in X\[1\]\)"),
        (["ACGT", "ACGé"], r"outside the alphabet 'ACGT': 'é'"),
        (["ACGT", 5], r"X\[1\] is 5 \(int\)"),
        (np.array([["AC", "GT"], ["AC", "GT"]]), "1-D array of sequences"),
        ("ACGT", "got one str"),
        (["ACGT", ""], "empty sequence"),
        ([], "at least one sequence"),
    ],
)
def test_bad_sequences_name_the_problem(X, match):
    with pytest.raises(ValueError, match=match):
        StringKernelBank([WeightedDegree(2)]).fit(X)


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: WeightedDegree(0), "order must be an int >= 1"),
        (lambda: WeightedDegree(3, kmers=(4,)), r"kmers must be non-empty lengths in \[1, 3\]"),
        (lambda: WeightedDegree(3, positions=(5, 5)), "positions stop must be an int >= 6"),
        (lambda: WeightedDegree(3, positions=7), "pair"),
        (lambda: Spectrum(3, alphabet="AAC"), "distinct"),
        (lambda: Spectrum(40), "2\\*\\*62"),
        (lambda: wd_sub_kernels(3, by="column"), "'kmer' or 'position'"),
    ],
)
def test_bad_specs(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_use_of_banks_and_estimators():
    seqs = _random_seqs(10, 8)
    with pytest.raises(ValueError, match="uses positions up to 11.*length 8"):
        StringKernelBank([WeightedDegree(2, positions=(4, 12))]).fit(seqs)
    bank = StringKernelBank([WeightedDegree(2)]).fit(seqs)
    with pytest.raises(ValueError, match="fitted on length 8; pass sequences of length 8"):
        bank.transform(["ACGT"])
    with pytest.raises(ValueError, match="share one alphabet"):
        StringKernelBank([Spectrum(2), Spectrum(2, alphabet="ACGU")])
    y = np.array([1, -1] * 5)
    with pytest.raises(ValueError, match="mixes string kernels"):
        from mklearn.kernels import Linear

        MKLClassifier(kernels=[Spectrum(2), Linear()]).fit(seqs, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        MKLClassifier(kernels=Spectrum(2)).fit(seqs, y[:9])
    model = MKLClassifier(kernels=Spectrum(2)).fit(seqs, y)
    with pytest.raises(ValueError, match="cannot be saved yet"):
        save_model(model, "unused.npz")


def test_regressor_fits_sequences():
    from mklearn import MKLRegressor

    seqs = _random_seqs(80, 20, seed=8)
    y = np.array([s[5:10].count("A") for s in seqs], dtype=float)
    model = MKLRegressor(kernels=wd_sub_kernels(4, block_size=5), C=100.0,
                         kernel_normalization="trace").fit(seqs, y)
    assert np.argmax(model.kernel_weights_) == 1  # positions 5-9 carry the signal
    assert model.score(seqs, y) > 0.9
