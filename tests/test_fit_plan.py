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

import mklearn.estimators.kernel_input as estimators
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


# SMO-MKL's heartbeats (seconds, SMO steps so far, steps its check is due after, rows cached,
# rows the cache fills to, largest KKT violation, inner tolerance), records (seconds, steps,
# relative duality gap), the plan's pass and row, and the end, of `mklearn fit --data` on a9a's
# first 8,124 rows (6,499 training points) and, held out, w8a's first 6,000 (4,800 points).
# a9a: the cache's first 987 rows touch fresh memory (16 s of slow steps), its checks are
# long, 3.75 times the points in all; w8a: every check ends early, 1.1 times the points.
A9A_TRACE = (5.83, 8.97e-4, 75.1, [
    (2.0, 60, 6499, 121, 987, 2.91, 0.1), (4.0, 117, 6499, 235, 987, 3.44, 0.1),
    (6.0, 178, 6499, 356, 987, 4.64, 0.1), (8.0, 237, 6499, 474, 987, 4.83, 0.1),
    (10.0, 297, 6499, 593, 987, 4.71, 0.1), (12.0, 360, 6499, 716, 987, 5.02, 0.1),
    (14.0, 424, 6499, 835, 987, 5.42, 0.1), (16.1, 494, 6499, 956, 987, 5.33, 0.1),
    (18.1, 995, 6499, 987, 987, 3.73, 0.1), (20.1, 1684, 6499, 987, 987, 2.75, 0.1),
    (22.1, 2468, 6499, 987, 987, 1.7, 0.1), (24.1, 3328, 6499, 987, 987, 1.14, 0.1),
    (26.1, 4161, 6499, 987, 987, 0.841, 0.1), (28.1, 4973, 6499, 987, 987, 0.551, 0.1),
    (30.1, 5805, 6499, 987, 987, 0.379, 0.1), (33.7, 7339, 12998, 987, 987, 0.2, 0.1),
    (35.7, 8184, 12998, 987, 987, 0.176, 0.1), (37.7, 9030, 12998, 987, 987, 0.141, 0.1),
    (40.7, 10285, 15934, 987, 987, 0.0807, 0.01), (42.7, 11133, 15934, 987, 987, 0.0653, 0.01),
    (44.7, 11984, 15934, 987, 987, 0.0515, 0.01), (46.7, 12828, 15934, 987, 987, 0.0425, 0.01),
    (48.7, 13655, 15934, 987, 987, 0.0303, 0.01), (50.7, 14425, 15934, 987, 987, 0.0285, 0.01),
    (52.7, 15262, 15934, 987, 987, 0.0235, 0.01), (56.4, 16748, 22433, 987, 987, 0.0139, 0.01),
    (58.4, 17577, 22433, 987, 987, 0.0108, 0.01), (61.1, 18669, 24345, 987, 987, 0.0102, 1e-3),
    (63.1, 19443, 24345, 987, 987, 0.0072, 1e-3), (65.1, 20241, 24345, 987, 987, 0.00661, 1e-3),
    (67.1, 21086, 24345, 987, 987, 0.00563, 1e-3), (69.1, 21878, 24345, 987, 987, 0.00487, 1e-3),
    (71.1, 22713, 24345, 987, 987, 0.00354, 1e-3), (73.1, 23529, 24345, 987, 987, 0.00246, 1e-3),
], [(31.7, 6499, 0.0395), (38.7, 9435, 0.0124), (54.4, 15934, 0.00211), (59.1, 17846, 0.00124),
    (75.1, 24345, 0.000274)])
W8A_TRACE = (6.0, 1.25e-3, 28.4, [
    (2.0, 146, 4800, 293, 600, 3.33, 0.1), (4.1, 206, 4800, 413, 600, 3.74, 0.1),
    (6.1, 246, 4800, 489, 600, 4.01, 0.1), (8.1, 286, 4800, 565, 600, 3.31, 0.1),
    (10.1, 528, 4800, 600, 600, 2.08, 0.1), (12.1, 995, 4800, 600, 600, 0.582, 0.1),
    (14.1, 1464, 4800, 600, 600, 0.242, 0.1), (17.9, 2393, 6684, 600, 600, 0.0475, 0.01),
    (19.9, 2917, 6684, 600, 600, 0.0252, 0.01), (21.9, 3456, 6684, 600, 600, 0.011, 0.01),
    (24.0, 4032, 8271, 600, 600, 0.00703, 1e-3), (26.0, 4579, 8271, 600, 600, 0.00305, 1e-3),
    (28.0, 5140, 8271, 600, 600, 0.00128, 1e-3),
], [(15.9, 1884, 0.0213), (22.0, 3471, 0.0018), (28.3, 5228, 0.000208)])


def _replayed_ratios(trace):
    """ETA / time left every half second from a fifth of the run to its last two seconds."""
    planned, row, end, beats, records = trace
    events = sorted([(b[0], "beat", b) for b in beats] + [(r[0], "record", r) for r in records])
    remaining, seen, ratios = RemainingTime(planned, 1e-3, row_seconds=row), 0, []
    for t in np.arange(0.2 * end, end - 2.0, 0.5):
        while seen < len(events) and events[seen][0] <= t:
            _, kind, event = events[seen]
            if kind == "record":
                remaining.record(event[0], {"relative_duality_gap": event[2],
                                            "n_steps": event[1]})
            else:
                remaining.steps(*event[:3], cached=event[3], fills_to=event[4],
                                violation=event[5], inner_tol=event[6])
            seen += 1
        ratios.append(remaining.seconds(t) / (end - t))
    return np.array(ratios)


@pytest.mark.parametrize(("trace", "share"), [(A9A_TRACE, 0.94), (W8A_TRACE, 1.0)],
                         ids=["a9a", "w8a"])
def test_the_eta_from_smo_steps_is_within_twice_the_time_left(trace, share):
    ratios = _replayed_ratios(trace)
    within = (ratios >= 0.5) & (ratios <= 2.0)
    # a9a: 0.02-0.27 from 56.5 s to 59 s (6 of 117), where a short check ends above tol and a
    # long one follows
    assert within.mean() >= share, ratios
    assert ratios.max() <= 2.0


def test_before_the_first_check_the_cache_s_fill_is_timed_apart():
    remaining = RemainingTime(10.0, 1e-3, row_seconds=1e-3)  # a pass of 10,000 rows
    remaining.steps(10.0, 250, 10_000, cached=500, fills_to=1000)
    # 500 rows left to fill at 50 a second, and the steps after them at two rows a step
    steps_after = 10_000 - 250 - 250 + 2 * 10_000
    assert remaining.seconds(10.0) == pytest.approx(10.0 + steps_after * 2e-3)


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
