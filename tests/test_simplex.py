"""The sort-free simplex projection (Michelot) equals the sorting method of Duchi et al."""

from __future__ import annotations

import numpy as np

from mklearn.solvers.simplex import project_simplex_nb


def _by_sorting(v):
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - 1.0
    rank = np.arange(1, v.size + 1)
    k = np.flatnonzero(u - cumulative / rank > 0).max()
    return np.maximum(v - cumulative[k] / (k + 1), 0.0)


def test_projection_matches_the_sorting_method():
    rng = np.random.default_rng(0)
    for trial in range(2000):
        v = rng.normal(size=rng.integers(1, 50)) * rng.choice([1e-3, 1.0, 1e3])
        if trial % 4 == 0:
            v = np.round(v, 1)  # ties
        x = project_simplex_nb(v)
        np.testing.assert_allclose(x, _by_sorting(v), rtol=0, atol=1e-12 * max(1, abs(v).max()))
        assert x.min() >= 0 and abs(x.sum() - 1) < 1e-9


def test_projection_of_non_finite_or_huge_input_does_not_raise():
    assert np.isnan(project_simplex_nb(np.array([np.nan, 1.0]))).any()
    assert np.isnan(project_simplex_nb(np.array([np.inf, 0.0]))).any()
    assert np.all(np.isfinite(project_simplex_nb(np.array([1e17, 1e17]))))
