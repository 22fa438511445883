"""Bundled DNA sequence sets: counts, lengths, label coding (see datasets/SOURCES.md)."""

import numpy as np
import pytest

from mklearn.datasets import (
    load_c_elegans_acceptor,
    load_c_elegans_acceptor_large,
    load_promoters,
    load_splice,
)


def _counts(y):
    return int((y == 1).sum()), int((y == -1).sum())


@pytest.mark.parametrize(
    "load,n,length,counts",
    [
        (lambda: load_splice("EI"), 3175, 60, (762, 2413)),
        (lambda: load_splice("IE"), 3175, 60, (765, 2410)),
        (load_promoters, 106, 57, (53, 53)),
        (load_c_elegans_acceptor, 2200, 82, (200, 2000)),
    ],
)
def test_sequence_sets(load, n, length, counts):
    seqs, y = load()
    assert seqs.shape == (n,) and y.dtype == np.int64
    assert {len(s) for s in seqs} == {length}
    assert set("".join(seqs)) <= set("ACGT")
    assert _counts(y) == counts


def test_c_elegans_large_window_matches_the_small_set():
    seqs, y = load_c_elegans_acceptor_large(3000)
    assert seqs.shape == (3000,) and {len(s) for s in seqs} == {82}
    assert {s[40:42] for s in seqs} == {"AG"}
    full, _ = load_c_elegans_acceptor_large(5, window=None)
    assert {len(s) for s in full} == {398} and full[0][157:239] == seqs[0]
    small, small_y = load_c_elegans_acceptor()
    lookup = dict(zip(seqs, y, strict=True))
    shared = [i for i, s in enumerate(small) if s in lookup]
    assert all(lookup[small[i]] == small_y[i] for i in shared)


@pytest.mark.slow
def test_c_elegans_large_counts():
    seqs, y = load_c_elegans_acceptor_large()
    assert seqs.shape == (100_000,) and _counts(y) == (3301, 96699)


def test_bad_arguments():
    with pytest.raises(ValueError, match="'EI'.*'IE'"):
        load_splice("N")
    with pytest.raises(ValueError, match="n_samples must be a positive int"):
        load_c_elegans_acceptor_large(0)
    with pytest.raises(ValueError, match="window must be"):
        load_c_elegans_acceptor_large(5, window=(10, 500))
