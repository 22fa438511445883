"""The LIBLINEAR+ baseline of ``benchmarks/bench_mwu_accuracy.py`` runs LinearSVC on the
coordinates of its features in their row space: that must not change LinearSVC's answer."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.svm import LinearSVC

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_mwu_accuracy import _row_space  # noqa: E402


def test_linear_svc_on_row_space_coordinates_gives_the_same_decisions():
    rng = np.random.default_rng(0)
    F = rng.normal(size=(40, 900)) @ np.diag(rng.uniform(0.1, 2.0, 900))
    F_test = rng.normal(size=(25, 900))
    y = np.where(F[:, 0] + 0.3 * rng.normal(size=40) > 0, 1, -1)
    basis = _row_space(F)
    assert basis.shape == (900, 40)
    np.testing.assert_allclose(basis.T @ basis, np.eye(40), atol=1e-10)
    for C in (0.01, 1.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the same ConvergenceWarning either way
            wide = LinearSVC(C=C, dual=True, random_state=0).fit(F, y)
            narrow = LinearSVC(C=C, dual=True, random_state=0).fit(F @ basis, y)
        np.testing.assert_allclose(
            narrow.decision_function(F_test @ basis), wide.decision_function(F_test), atol=1e-9
        )
        assert narrow.n_iter_ == wide.n_iter_
