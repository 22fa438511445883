"""The plan said before a fit (:mod:`mklearn.fit_plan`) and the progress bar
(:mod:`mklearn.progress`): long plans name cheaper routes, hour-long ones warn, and the bar
moves before the first record with an ETA that follows the run.

Long plans are made long by construction: the timing of a row (``row_pass_seconds``) is
replaced by a large figure; no test waits for a real clock.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import mklearn.estimators as estimators
from mklearn import MKLClassifier, MKLRegressor
from mklearn.fit_plan import (
    LONG_FIT_SECONDS,
    REFUSED_FIT_SECONDS,
    FitPlan,
    LongFitWarning,
    cheaper_routes,
)
from mklearn.progress import TICK_SECONDS, FitProgress, RemainingTime


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)


@pytest.fixture
def pass_takes(monkeypatch):
    """Make a pass over the rows take ``seconds`` (a row, ``seconds / n``)."""

    def make(seconds):
        def timed(provider):
            return float(seconds), float(seconds) / provider.n_samples

        monkeypatch.setattr(estimators, "row_pass_seconds", timed)

    return make


# ------------------------------------------------------------------------------ the plan
def test_the_plan_is_said_before_the_fit_with_memory_and_time(capsys):
    X, y = _data()
    MKLClassifier(kernel_storage="rows", verbose=1).fit(X, y)
    err = capsys.readouterr().err
    plan = err.index("mklearn: plan: ")
    assert plan < err.index("smo")  # the progress bar's label comes after it
    line = err[plan:].splitlines()[0]
    assert "as rows computed on demand" in line and "memory about" in line
    assert "a pass over the kernel rows about" in line and "one row of the" in line
    assert "cheaper routes" not in err  # a short fit names none


def test_the_plan_of_a_stack_and_of_low_rank_features(capsys):
    X, y = _data(60)
    MKLClassifier(solver="spg", verbose=1).fit(X, y)
    assert "as an (n, n, m) stack; memory about" in capsys.readouterr().err
    MKLClassifier(kernel_approximation="nystroem", n_components=10, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "as low-rank features (rank" in err and "the time the features took" in err


def test_a_plan_over_a_minute_names_the_cheaper_routes(pass_takes, capsys):
    pass_takes(2 * LONG_FIT_SECONDS)
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", LongFitWarning)  # under an hour: no warning
        MKLClassifier(kernel_storage="rows", verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "mklearn: this fit is planned to take 2 min or more; cheaper routes: " in err
    assert "solver='average'" in err
    assert "subsample" not in err  # 40 points: no subsample worth naming


def test_the_routes_named_are_those_that_apply():
    routes = cheaper_routes(n_samples=8124, seconds=90.0, cost_power=2, one_shot=False,
                            can_approximate=True, float32_helps=True)
    text = "; ".join(route.api for route in routes)
    cli = "; ".join(route.cli for route in routes)
    # a pass grows as n^2: 60 s at 8124 * sqrt(60 / 90) points
    assert "a subsample of about 6633" in text and "--n-samples 6633" in cli
    assert "solver='average'" in text and "--solver average" in cli
    assert "kernel_approximation='nystroem' with n_components=500" in text
    assert "--kernel-approximation nystroem --n-components 500" in cli
    assert "kernel_dtype='float32'" in text and "--kernel-dtype float32" in cli
    fewer = cheaper_routes(n_samples=8124, seconds=90.0, cost_power=1, one_shot=True,
                           can_approximate=False, float32_helps=False)
    assert [route.cli for route in fewer] == ["--n-samples 5416 (a pass grows as n)"]


def test_an_hour_long_plan_warns_in_the_api_before_it_solves(pass_takes):
    pass_takes(2 * REFUSED_FIT_SECONDS)
    X, y = _data()
    with pytest.warns(LongFitWarning, match="planned to take 2 h or more") as caught:
        model = MKLClassifier(kernel_storage="rows").fit(X, y)  # not only with verbose
    assert model.n_iter_ > 0  # a warning: the fit went on
    (warning,) = [w for w in caught if w.category is LongFitWarning]
    assert warning.filename == __file__  # said at the caller's fit
    assert isinstance(warning.message.plan, FitPlan) and warning.message.plan.is_refused
    assert "solver='average'" in str(warning.message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LongFitWarning)
        with pytest.raises(LongFitWarning):  # as an error, it stops the fit before it solves
            MKLClassifier(kernel_storage="rows").fit(X, y)


def test_one_vs_rest_classes_each_count_a_pass(pass_takes):
    pass_takes(0.4 * REFUSED_FIT_SECONDS)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(45, 3))
    y = np.digitize(X[:, 0], [-0.45, 0.45])
    with pytest.warns(LongFitWarning, match="for each of 3 one-vs-rest classes"):
        MKLClassifier(kernel_storage="rows").fit(X, y)


def test_the_regressor_plans_too(pass_takes):
    pass_takes(2 * REFUSED_FIT_SECONDS)
    X, y = _data()
    with pytest.warns(LongFitWarning, match="MKLRegressor: this fit is planned"):
        MKLRegressor(kernel_storage="rows").fit(X, X[:, 0])


# ------------------------------------------------------------------------ the progress bar
class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_the_bar_moves_before_the_first_record():
    clock = _Clock()
    assert TICK_SECONDS <= 1.0  # its own thread refreshes it every tick, records or not
    with FitProgress(True, "smo", RemainingTime(30.0, 1e-3), clock=clock,
                     tick_seconds=None) as progress:
        clock.now += TICK_SECONDS
        progress.tick()  # what the bar's thread does each tick; no record has come
        assert progress.bar.n > 0
        assert math.isfinite(progress.bar.remaining_seconds)
        assert progress.bar.format_dict["rate"] is not None  # an ETA, not "?"
        first = progress.bar.n
        clock.now += 5.0
        progress.tick()
        assert progress.bar.n > first


def test_the_bar_moves_without_a_plan_too():
    clock = _Clock()
    with FitProgress(True, "spg", RemainingTime(None, 1e-3), clock=clock,
                     tick_seconds=None) as progress:
        clock.now += TICK_SECONDS
        progress.tick()
        assert 0 < progress.bar.n < 100


def test_a_small_fit_ticks_its_bar_from_its_own_thread(monkeypatch):
    ticks = []
    original = FitProgress.tick

    def counted(self):
        ticks.append(self)
        original(self)

    monkeypatch.setattr(FitProgress, "tick", counted)
    X, y = _data()
    MKLClassifier(verbose=1).fit(X, y)
    assert ticks  # the records and heartbeats tick it; its thread does between them


# SMO-MKL's records (seconds into the run, relative duality gap) on 4,000 points of a9a
# with 119 kernels on rows computed on demand: the plan's pass, the records, the end (the
# three on a machine busy to a different degree; the last with a pass planned too short).
TRACES = [
    (29.1, [(33.0, 2.1e-2), (34.0, 1.36e-2), (38.0, 1.44e-3)], 42.6),
    (58.1, [(62.0, 2.1e-2), (63.0, 1.36e-2), (71.0, 1.44e-3)], 79.3),
    (47.3, [(63.0, 2.1e-2), (64.0, 1.36e-2), (72.0, 1.44e-3), (80.0, 1.71e-4)], 80.9),
]


@pytest.mark.parametrize(("planned", "records", "end"), TRACES)
def test_the_eta_after_a_fifth_of_the_run_is_within_twice_the_time_left(planned, records,
                                                                          end):
    remaining = RemainingTime(planned, 1e-3)
    seen = 0
    for t in np.arange(0.2 * end, end - 2.0, 0.25):  # to the last check's last seconds
        while seen < len(records) and records[seen][0] <= t:
            time_at, gap = records[seen]
            remaining.record(time_at, {"relative_duality_gap": gap, "iteration": seen})
            seen += 1
        left = end - t
        assert 0.5 * left <= remaining.seconds(t) <= 2.0 * left, t


# SMO-MKL's heartbeats (seconds, SMO steps so far) and records (seconds, steps, relative
# duality gap) on 6,499 points of a9a (the command line's default kernels on its first 8,124
# rows, a busy machine): the first check comes after 38% of the run, when the cache of rows
# is full (its first 70 s are slow: each row touches fresh memory), and the rest takes 2.6
# times as long as the first check.
A9A_BEATS = [(2, 13), (18, 142), (35, 276), (51, 416), (67, 719), (83, 1482), (99, 2555),
             (116, 3686), (132, 4628), (148, 5639), (166, 6599), (182, 7479), (198, 8348),
             (214, 9259), (230, 10094), (246, 11214), (262, 12508), (278, 13660),
             (294, 14652), (310, 15565), (325, 16453), (341, 17737), (357, 18943),
             (373, 20078), (389, 21377), (405, 22609), (421, 23784)]
A9A_RECORDS = [(163.6, 6499, 0.0395), (217.7, 9435, 0.0124), (316.9, 15934, 0.00211),
               (343.0, 17846, 0.00124), (428.3, 24345, 0.000274)]


def test_the_eta_from_smo_steps_is_within_twice_the_time_left():
    n, end = 6499, 428.4
    remaining = RemainingTime(75.3, 1e-3)
    beats, records = list(A9A_BEATS), list(A9A_RECORDS)
    for t in np.arange(0.2 * end, end - 5.0, 0.5):
        while beats and beats[0][0] <= t or records and records[0][0] <= t:
            if records and (not beats or records[0][0] <= beats[0][0]):
                time_at, steps, gap = records.pop(0)
                remaining.record(time_at, {"relative_duality_gap": gap, "n_steps": steps})
            else:
                time_at, steps = beats.pop(0)
                checked = [r[1] for r in A9A_RECORDS if r[0] <= time_at]
                remaining.steps(time_at, steps, (checked[-1] if checked else 0) + n)
        left = end - t
        assert 0.5 * left <= remaining.seconds(t) <= 2.0 * left, t


def test_the_step_rate_is_the_latest():
    remaining = RemainingTime(None, 1e-3)
    remaining.steps(10.0, 100, 1000)  # 10 steps a second at first
    remaining.steps(20.0, 1100, 1000)  # then 100 a second
    remaining.steps(30.0, 1900, 3000)  # past the first check, with no record yet
    assert remaining._step_rate() == pytest.approx(80.0)  # over the latest quarter
    # before any record: the 1,100 steps to the due check, and two checks of 3,000 more
    assert remaining.seconds(30.0) == pytest.approx((1100 + 2 * 3000) / 80.0)


def test_records_of_planned_iterations_give_the_eta():
    remaining = RemainingTime(None, 1e-3)
    for i in range(10):  # one iteration of 100 planned per second
        remaining.record(i + 1.0, {"relative_duality_gap": 0.5, "iteration": i,
                                   "iterations_planned": 100})
    assert remaining.seconds(10.0) == pytest.approx(90.0, rel=0.05)
