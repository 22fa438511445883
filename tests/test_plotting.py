"""mklearn.plotting: the weight plot and its errors."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from mklearn import plotting


def test_plot_kernel_weights_draws_the_kept_weights():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    ax = plotting.plot_kernel_weights(np.array([0.0, 2.0, 1.0]), ["a", "b", "c"])
    heights = [p.get_height() for p in ax.patches]
    assert heights == [2.0, 1.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    ax = plotting.plot_kernel_weights(np.array([0.5, 2.0, 1.0]), top=2)
    assert [p.get_height() for p in ax.patches] == [2.0, 1.0]


def test_plot_errors_name_the_fix(monkeypatch):
    with pytest.raises(ValueError, match="kernel_weights_\\[0\\]"):
        plotting.plot_kernel_weights(np.ones((2, 3)))
    with pytest.raises(ValueError, match="one name each"):
        plotting.plot_kernel_weights(np.ones(3), ["a"])
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="mklearn\\[plot\\]"):
        plotting.plot_kernel_weights(np.ones(3))
