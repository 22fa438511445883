"""``benchmarks/bench_unseen.py``: its kernel families are what its docstring says, check their
own parameters, and a fit that fails or runs out of time is reported, never dropped."""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mklearn.kernels import RBF, Polynomial

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_unseen import (  # noqa: E402
    PROBLEMS,
    TUNING_SETS,
    in_child,
    kernel_family,
    summarise,
)


def test_twenty_problems_eight_held_out_none_from_the_tuning_sets_n_from_500_to_5000():
    assert len(PROBLEMS) >= 20
    held_out = [p for p in PROBLEMS if p.held_out]
    assert len(held_out) >= 8
    assert not {p.data for p in held_out} & {p.data for p in PROBLEMS if not p.held_out}
    assert not {p.data for p in PROBLEMS} & set(TUNING_SETS)
    assert min(p.n for p in PROBLEMS) == 500 and max(p.n for p in PROBLEMS) == 5000
    assert min(p.n_kernels for p in PROBLEMS) >= 50
    assert max(p.n_kernels for p in PROBLEMS) == 2000


@pytest.mark.parametrize("family,count,kind", [("subsets-rbf", 100, RBF),
                                               ("subsets-poly", 99, Polynomial),
                                               ("blocks-rbf", 50, RBF)])
def test_families_draw_the_documented_kernels_with_a_fixed_seed(family, count, kind):
    X = np.random.default_rng(0).normal(size=(30, 40))
    problem = replace(PROBLEMS[0], family=family, n_kernels=count)
    specs = kernel_family(problem, X, seed=3)
    assert len(specs) == count and all(isinstance(s, kind) for s in specs)
    assert specs == kernel_family(problem, X, seed=3)
    assert specs != kernel_family(problem, X, seed=4)


def test_simple_mkl_family_is_thirteen_per_feature_of_a_40_column_subset_and_all_of_them():
    X = np.random.default_rng(1).normal(size=(30, 60))
    specs = kernel_family(replace(PROBLEMS[0], family="simple-mkl"), X, seed=0)
    assert len(specs) == 13 * 41
    columns = {f for s in specs for f in s.features}
    assert len(columns) == 40 and max(columns) < 60


def test_an_unknown_family_is_refused():
    with pytest.raises(ValueError, match="unknown kernel family 'nope'"):
        kernel_family(replace(PROBLEMS[0], family="nope"), np.zeros((5, 3)), seed=0)


def _slow():
    time.sleep(30)


def _broken():
    raise ValueError("no such solver")


def test_a_fit_out_of_time_or_failing_is_recorded_as_not_converged():
    late = in_child(_slow, (), timeout=0.5)
    assert late["failed"] == "timeout" and late["converged"] is False
    broken = in_child(_broken, (), timeout=30)
    assert broken["failed"] == "error" and "no such solver" in broken["message"]
    row = {"problem": "p", "runs": {"1.0": {
        "anchor": {"seconds": 1.0, "fit_seconds": 0.1},
        "mkl": {"spg-l1": {"seconds": 2.0, "fit_seconds": 1.1, "converged": True},
                "silp": late}}}}
    summary = summarise([row], 1.0)
    assert summary["spg_l1_fit_over_svc_fit_median"] == pytest.approx(11.0)  # fit against fit
    assert summary["spg_l1_fit_over_svc_fit_above_max_goal"] == 0
    assert summary["spg_l1_faster"] == {"silp": 0}  # silp's timeout record took 0.5 s
    assert summary["not_converged"] == ["p/silp"]


def test_end_to_end_ratios_are_reported_apart_from_fit_against_fit():
    row = {"problem": "p", "runs": {"1.0": {
        "anchor": {"seconds": 9.0, "fit_seconds": 0.5},
        "mkl": {"spg-l1": {"seconds": 10.0, "fit_seconds": 1.0, "converged": True}},
        "from_x": {"svc": {"seconds": 2.0, "fit_seconds": 2.0},
                   "mkl": {"spg-l1": {"seconds": 6.0, "fit_seconds": 6.0}}}}}}
    summary = summarise([row], 1.0)
    assert summary["spg_l1_fit_over_svc_fit_median"] == pytest.approx(2.0)
    assert summary["from_x_over_svc_median"] == {"spg-l1": pytest.approx(3.0)}


def test_the_floor_of_fit_against_fit_is_counted_against_both_goals():
    """The floor (one pass over the stack and one l1 certificate) over the anchor's fit, per
    problem: its median, and the problems where it alone is above each goal."""
    rows = [{"problem": f"p{k}", "runs": {"1.0": {
        "anchor": {"seconds": 1.0, "fit_seconds": 0.1, "floor_seconds": floor},
        "mkl": {"spg-l1": {"seconds": 2.0, "fit_seconds": 1.0, "converged": True}}}}}
        for k, floor in enumerate([0.2, 0.6, 2.0])]
    summary = summarise(rows, 1.0)
    assert summary["floor_over_svc_fit_median"] == pytest.approx(6.0)
    assert summary["floor_over_svc_fit_max"] == pytest.approx(20.0)
    assert summary["floor_over_svc_fit_above_median_goal"] == 2  # 6x and 20x above 5x
    assert summary["floor_over_svc_fit_above_max_goal"] == 1  # 20x above 15x


def test_one_hot_sequences_have_four_columns_a_position():
    from bench_unseen import one_hot

    X = one_hot(["ACGT", "AANT"])
    assert X.shape == (2, 16)
    assert X.sum(axis=1).tolist() == [4.0, 3.0]  # N: no column
    assert X[0, 0] == 1.0 and X[0, 4 + 1] == 1.0  # A at 0, C at 1
