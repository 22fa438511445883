"""The progress bar of a fit (``verbose > 0``): the share of the planned time done, and an
ETA that is the fit's estimate of the time left.

A solver's records come late and unevenly: SMO-MKL's first gap check comes after a pass over
the kernel rows (half a fit or more, on rows computed on demand), and the way down to ``tol``
on a log scale is far from linear in time. So the bar does not show the records' share of
the way; it shows the share of the time, ``t / (t + R)``, with ``R`` the time left as
:class:`RemainingTime` estimates it from what is known at ``t``:

- by the SMO steps, for a solver whose heartbeat says after how many steps its next gap
  check is due (SMO-MKL: at most n steps a check): the steps to the end of the check under
  way (where the largest KKT violation falls to the inner tolerance at its fall per step
  over the latest ``VIOLATION_BEATS`` heartbeats, at most its due) and those of the checks
  still needed after it: as many as the relative gap needs to fall to ``tol`` at its mean
  fall per check so far, counted with one fall of ``GAP_FALL_PER_CHECK``, each of the mean
  steps of a check so far (before any record, ``CHECKS_AFTER_THE_FIRST`` checks of the
  first one's steps). While the row cache first fills (each row touching fresh memory), the
  rows still to fill at the time the rows filled so far took, and the other steps at
  ``MISSES_PER_STEP`` rows of the plan's row time; then at the step rate of the latest
  ``RATE_WINDOW`` of the run since the cache filled (``docs/large_scale.md``: how close it
  came on a9a and w8a);
- otherwise by the plan: its pass over the kernel rows (:class:`mklearn.fit_plan.FitPlan`) times
  ``PASSES_PER_FIT``, less the time spent (a run that outlasts its plan has no estimate by
  it); the first record measures the pass when it comes later than planned (SMO-MKL's
  first gap check comes after n steps, which compute most rows: a pass, on a busier machine
  than the rows timed may have shown); and while no records tell, at least
  ``UNKNOWN_SHARE`` of the time spent (a run under way is not about to end: the bar stays
  below two thirds);
- and by the records, from two on: the relative duality gap's rate of fall (on a log scale, from
  the first record to the smallest gap so far) extrapolated down to ``tol``, and at least
  the time the last gap check took (one more check is due), less the time since it; for a
  planned number of iterations (MWUMKL's), the iterations left at the rate so far; for
  records without a gap (products) whose count ``max_iter`` caps, the records left;
- there ``R`` is the mean of the two weighted by the share of the way done by the records (of
  the way from the first gap down to ``tol`` on a log scale, or of the iterations): the
  plan speaks first, the records take over as they show the way.

The bar is refreshed every ``TICK_SECONDS`` by a thread of its own, whatever the solver
reports, so it moves within its first seconds; it never moves back (a longer estimate shows
as a later ETA). The ETA shown is ``R``.

A fit's phase times leave numba's compilation out: numba compiles a jitted function on its
first call and caches the machine code in ``__pycache__`` (``cache=True``), so only the
first run after an install pays for it. :func:`compile_time_of` makes that time the
estimator's ``compile_time_`` (the command line reports it too), and :func:`seconds_since`
takes it out of ``kernel_time_`` and ``solve_time_``. The clock listens to numba's
``numba:compiler_lock`` events: every compilation and every cache load holds that lock.
"""

from __future__ import annotations

import contextvars
import math
import threading
import time
from contextlib import contextmanager

from numba.core import event

__all__ = ["PASSES_PER_FIT", "TICK_SECONDS", "UNKNOWN_SHARE", "CompileClock", "FitProgress",
           "RemainingTime", "compile_clock", "compile_time_of", "seconds_since"]

PASSES_PER_FIT = 1.3  # SMO-MKL on rows ended at 1.26 to 1.29 times its first gap check
UNKNOWN_SHARE = 0.5  # without a better estimate, at least half the time spent is left
TICK_SECONDS = 1.0  # the bar is refreshed this often
CHECKS_AFTER_THE_FIRST = 2.0  # before any record: checks of the first one's steps to come
GAP_FALL_PER_CHECK = 4.0  # before two records: the relative gap's fall from check to check
RATE_WINDOW = 0.25  # the step rate is measured over this share of the run, the latest
MISSES_PER_STEP = 2.0  # rows an SMO-MKL step computes when its cache holds few of them
VIOLATION_BEATS = 3  # heartbeats whose KKT violations give its fall per step
FULL_SHARE = 0.95  # a row cache this full is full (the rows a fit reads may not fill it)


class RemainingTime:
    """The seconds a fit has left, from its plan and its history records.

    Parameters
    ----------
    planned_seconds : float or None
        The plan's pass over the kernel rows (seconds) for this solve; None: no plan.
    tol : float
        The relative duality gap the run stops at.
    records_total : int or None
        The records ``max_iter`` caps (a total for runs whose records carry no gap).
    row_seconds : float or None
        The plan's time of one kernel row (of every base kernel), computed into memory
        already touched; None: not known.
    """

    def __init__(self, planned_seconds, tol, records_total=None, row_seconds=None):
        self.planned_pass = planned_seconds
        self.tol = float(tol)
        self.records_total = records_total
        self.row_seconds = row_seconds
        self.times, self.gaps, self.records = [], [], []
        self.beats = []  # (seconds, SMO steps so far), from heartbeats and records
        self.due, self.due_current = None, False  # the next check's steps; said since a record
        self.filling = None  # (rows cached, rows the cache fills to) while it fills
        self.filled_at = None  # the heartbeat at which the cache was found full
        self.violations = []  # (steps, largest KKT violation, inner tolerance) of this check
        self.violation_fall = None  # its fall per step (log scale), the latest measured

    def record(self, t, record):
        """Take one history record, received ``t`` seconds into the run."""
        self.times.append(float(t))
        self.gaps.append(float(record.get("relative_duality_gap", math.nan)))
        self.records.append(record)
        self.due_current, self.violations = False, []
        if "n_steps" in record:
            self.beats.append((float(t), int(record["n_steps"])))

    def steps(self, t, n_steps, due, cached=None, fills_to=None, violation=None,
              inner_tol=None):
        """Take a heartbeat of a solver that checks its gap after a known number of SMO
        steps: ``n_steps`` taken so far at ``t`` seconds, the next check due after ``due``
        steps at the latest; ``cached`` rows in its row cache, which fills to ``fills_to``
        rows (its capacity, or every row); the largest KKT ``violation``, and the
        ``inner_tol`` at which the check ends early."""
        self.beats.append((float(t), int(n_steps)))
        self.due, self.due_current = int(due), True
        if violation is not None and inner_tol is not None:
            self.violations.append((int(n_steps), float(violation), float(inner_tol)))
            (first, v_first, _), (last, v_last, _) = (self.violations[-VIOLATION_BEATS:][0],
                                                      self.violations[-1])
            if v_first > v_last > 0 and last > first:
                self.violation_fall = math.log(v_first / v_last) / (last - first)
        if cached is None or fills_to is None:
            return
        if cached < FULL_SHARE * fills_to:
            self.filling = (int(cached), int(fills_to))
        elif self.filled_at is None:
            self.filling, self.filled_at = None, (float(t), int(n_steps))

    def seconds(self, t):
        """The estimated seconds left at ``t`` seconds into the run (>= 0): by the SMO steps
        still to take (:meth:`_from_steps`) when the solver says when its checks are due;
        else the plan's estimate and the records', the records' weighing the more the
        further the run is on its way (:meth:`_from_records`)."""
        by_steps = self._from_steps(t) if self.due is not None else None
        if by_steps is not None:
            return by_steps
        prior = self._prior()
        planned = prior - t if prior is not None and t < prior else None
        found = self._from_records(t) if len(self.times) >= 2 else None
        if found is None:  # the plan alone: a run under way is not about to end
            return max(UNKNOWN_SHARE * t, 0.0 if planned is None else planned)
        estimate, weight = found
        if planned is None:
            return max(estimate, 0.0)
        return max((1.0 - weight) * planned + weight * estimate, 0.0)

    def _from_steps(self, t):
        """Seconds for the SMO steps left: those to the check under way, and the checks
        still needed after it, each of the mean steps of a check so far. The checks needed
        are those for the relative gap to fall to ``tol`` at its fall per check so far
        (``GAP_FALL_PER_CHECK`` before two records; ``CHECKS_AFTER_THE_FIRST`` before any).
        While the row cache first fills (:meth:`_while_filling`), and then at the step
        rate of the latest ``RATE_WINDOW`` of the run since it filled. None: no rate yet."""
        t_beat, taken = self.beats[-1]
        done = [record["n_steps"] for record in self.records if "n_steps" in record]
        check_end = self._check_end(taken) if self.due_current else None
        if done:
            more = self._checks_after_this()
            if more is None:
                return 0.0
            per_check = done[-1] / len(done)
        else:
            more, per_check = CHECKS_AFTER_THE_FIRST, check_end or self.due
        # the check under way: where its KKT violation meets its tolerance, at most at its
        # due; or (no heartbeat since the last record) a check of the mean steps
        to_check = check_end - taken if check_end is not None else per_check
        steps_left = max(to_check, 0) + more * per_check
        if self.filling is not None and not done and self.row_seconds:
            left = self._while_filling(t_beat, taken, steps_left)
        else:
            rate = self._step_rate()
            if rate is None:
                return None
            left = steps_left / rate
        return max(left - (t - t_beat), UNKNOWN_SHARE * (t - t_beat))

    def _while_filling(self, t_beat, taken, steps_left):
        """Seconds left while the row cache first fills: each row then touches fresh memory
        (on a virtual machine several times the row's own cost), so the steps are slow
        until it is full. The rows still to fill at the rate rows filled so far, then the
        other steps at ``MISSES_PER_STEP`` rows computed each (into memory touched)."""
        cached, fills_to = self.filling
        to_fill = min(fills_to - cached, MISSES_PER_STEP * max(self.due - taken, 0))
        fill_seconds = to_fill * t_beat / max(cached, 1)
        steps_filling = to_fill / MISSES_PER_STEP
        after = max(steps_left - steps_filling, 0.0) * MISSES_PER_STEP * self.row_seconds
        return fill_seconds + after

    def _check_end(self, taken):
        """The steps at which the check under way ends: where the largest KKT violation
        falls to the inner tolerance at its fall per step over the latest
        ``VIOLATION_BEATS`` heartbeats (on a log scale; the last check's with one heartbeat
        so far), at most ``due``; ``due`` while it does not fall."""
        recent = self.violations[-VIOLATION_BEATS:]
        if not recent:
            return self.due
        (first, v_first, _), (last, v_last, inner_tol) = recent[0], recent[-1]
        if not v_last > inner_tol > 0:
            return taken
        if not (v_first > v_last and last > first) and (
                len(recent) >= 2 or self.violation_fall is None):  # not falling (yet)
            return self.due
        # the fall per step that steps() measured: this check's, or with one heartbeat of it
        # so far, the last check's
        return min(self.due, taken + math.log(v_last / inner_tol) / self.violation_fall)

    def _checks_after_this(self):
        """Gap checks still needed after the one under way (None: ``tol`` is reached)."""
        gaps = [g for g in self.gaps if math.isfinite(g)]
        best = min(gaps)
        if best <= self.tol:
            return None
        # the falls so far and one of GAP_FALL_PER_CHECK: a short check (its inner KKT
        # tolerance met early) barely lowers the gap, the next long one lowers it a lot
        fall = (math.log(GAP_FALL_PER_CHECK) + math.log(gaps[0] / best)) / len(gaps)
        more = max(math.log(best / self.tol) / fall - 1.0, 0.0)
        if self.records_total:
            more = min(more, max(self.records_total - len(self.records) - 1, 0))
        return more

    def _step_rate(self):
        """SMO steps per second over the latest ``RATE_WINDOW`` of the run, from the
        heartbeat at which the row cache was full on; until a step is taken after it, the
        plan's ``MISSES_PER_STEP`` rows a step (None: neither known)."""
        t_beat, taken = self.beats[-1]
        start = t_beat * (1.0 - RATE_WINDOW)
        if self.filled_at is not None:
            start = max(start, self.filled_at[0])
        earlier = [beat for beat in self.beats if beat[0] <= start]
        t_from, taken_from = earlier[-1] if earlier else (0.0, 0)
        if taken > taken_from and t_beat > t_from:
            return (taken - taken_from) / (t_beat - t_from)
        if self.filled_at is not None and self.row_seconds:
            return 1.0 / (MISSES_PER_STEP * self.row_seconds)
        return None

    def _prior(self):
        """The plan's time of the run: ``PASSES_PER_FIT`` passes, a pass lasting at least
        until the first record (None: no plan)."""
        if self.planned_pass is None:
            return None
        first = self.times[0] if self.times else 0.0
        return PASSES_PER_FIT * max(self.planned_pass, first)

    def _from_records(self, t):
        """``(seconds left, weight)`` by the records, the weight the share of the way done;
        None when the records say nothing yet."""
        last = self.records[-1]
        if last.get("iterations_planned"):
            return self._count_left(t, last["iteration"] + 1, last["iterations_planned"])
        if math.isfinite(self.gaps[-1]):
            return self._gap_left(t)
        if self.records_total:
            return self._count_left(t, len(self.times), self.records_total)
        return None

    def _count_left(self, t, done, total):
        """Time for ``total - done`` more records at the rate so far."""
        t_last = self.times[-1]
        left = t_last / max(done, 1) * max(total - done, 0) - (t - t_last)
        return self._under_way(t, left), min(done / total, 1.0)

    def _gap_left(self, t):
        """Time for the gap to fall to ``tol`` at its rate so far (on a log scale), and at
        least one more gap check as long as the last one; the weight is the share of the
        way down to ``tol`` done. None while the gap has not fallen."""
        first, best = self.gaps[0], min(g for g in self.gaps if math.isfinite(g))
        t_first, t_last = self.times[0], self.times[-1]
        if best <= self.tol:
            return 0.0, 1.0
        if not (first > best > 0) or t_last <= t_first:
            return None
        rate = math.log(first / best) / (t_last - t_first)  # of log(gap), per second
        to_tol = math.log(best / self.tol) / rate
        next_check = t_last - self.times[-2]
        weight = math.log(first / best) / math.log(first / self.tol)
        return self._under_way(t, max(to_tol, next_check) - (t - t_last)), weight

    def _under_way(self, t, left):
        """``left``, and at least ``UNKNOWN_SHARE`` of the time since the last record (a
        record overdue is not about to come)."""
        return max(left, UNKNOWN_SHARE * (t - self.times[-1]))


def _bar_class():
    """tqdm's bar (``tqdm.auto``: a widget in notebooks), its ETA ``remaining_seconds``."""
    from tqdm.auto import tqdm

    class _Bar(tqdm):
        remaining_seconds = None

        @property
        def format_dict(self):
            values = super().format_dict
            left = self.remaining_seconds
            if left is not None and left > 0 and values["total"] > values["n"]:
                values["rate"] = (values["total"] - values["n"]) / left
            return values

    return _Bar


class FitProgress:
    """A tqdm bar of one solve, fed by the solver's ``callback`` when ``verbose > 0``; a
    no-op otherwise (the module docstring says what it shows).

    It shows the ``objective`` and the ``relative_duality_gap`` of the last record; a solver
    that declares ``heartbeat`` reports its SMO steps between two records at least every
    ``mklearn.svm.smo.HEARTBEAT_SECONDS``; every other solver's SVM solves (through the SMO
    core) report theirs (``svm_smo_steps``: those of the SVM solve under way) as often.

    Parameters
    ----------
    enabled : bool
        Show the bar (``verbose > 0``).
    label : str
        The bar's label (the solver, and the class of a one-vs-rest solve).
    remaining : RemainingTime
        The estimate of the time left.
    clock : callable
        Seconds (``time.perf_counter``; tests give a fake clock).
    tick_seconds : float or None
        How often the bar's own thread refreshes it; None: no thread (refresh with
        :meth:`tick`).
    """

    def __init__(self, enabled, label, remaining, clock=time.perf_counter,
                 tick_seconds=TICK_SECONDS):
        self.enabled, self.label, self.remaining = bool(enabled), label, remaining
        self.clock, self.tick_seconds = clock, tick_seconds
        self.bar, self.done, self.postfix = None, 0.0, {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker = None

    def __enter__(self):
        if not self.enabled:
            return None
        self.start = self.clock()
        self.bar = _bar_class()(total=100, desc=self.label, leave=True, unit="%",
                                bar_format="{l_bar}{bar}| {n:.0f}/{total_fmt}% [{elapsed}<"
                                           "{remaining}{postfix}]")
        if self.tick_seconds is not None:
            self._ticker = threading.Thread(target=self._tick_until_stopped, daemon=True)
            self._ticker.start()
        return self

    def _tick_until_stopped(self):
        while not self._stop.wait(self.tick_seconds):
            self.tick()

    def tick(self):
        """Refresh the share done and the ETA from the clock."""
        with self._lock:
            t = self.clock() - self.start
            left = self.remaining.seconds(t)
            share = t / (t + left) if t + left > 0 else 0.0
            self.done = min(max(self.done, share), 1.0)
            self.bar.n = 100.0 * self.done
            self.bar.remaining_seconds = left
            self.bar.refresh()

    def callback(self, record):
        """The solver's ``callback``: one history record."""
        with self._lock:
            self.remaining.record(self.clock() - self.start, record)
            self.postfix = {
                "objective": f"{record['objective']:.6g}",
                "relative_duality_gap": f"{record['relative_duality_gap']:.2e}",
            }
            if "n_steps" in record:
                self.postfix["smo_steps"] = record["n_steps"]
            elif record.get("n_svm_solves"):
                self.postfix["svm_solves"] = record["n_svm_solves"]
            self.bar.set_postfix(self.postfix, refresh=False)
        self.tick()

    def heartbeat(self, n_steps, due=None, **state):
        """Between two records: the SMO steps taken so far, the steps after which the next
        gap check is due at the latest (None: not known), and what the solver says of its
        state (:meth:`RemainingTime.steps`)."""
        if due is not None:
            with self._lock:
                self.remaining.steps(self.clock() - self.start, n_steps, due, **state)
        self._show_steps("smo_steps", n_steps)

    def svm_heartbeat(self, n_steps, violation=None):
        """Between two records: the SMO steps of the SVM solve under way (and its largest KKT
        violation, not shown)."""
        self._show_steps("svm_smo_steps", n_steps)

    def _show_steps(self, key, n_steps):
        with self._lock:
            self.bar.set_postfix({**self.postfix, key: n_steps}, refresh=False)
        self.tick()

    def __exit__(self, *exc):
        if self.bar is None:
            return False
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if exc[0] is None:
            self.bar.n, self.bar.remaining_seconds = 100.0, 0.0  # stopped: done
            self.bar.refresh()
        self.bar.close()
        return False


# ---------------------------------------------------------------- compile time

_FIT_CLOCK = contextvars.ContextVar("mklearn_fit_clock", default=None)


class CompileClock(event.Listener):
    """Intervals (perf_counter seconds) during which numba compiled or loaded code."""

    def __init__(self):
        self.intervals = []
        self._depth = 0
        self._start = 0.0

    def on_start(self, event):
        if self._depth == 0:
            self._start = time.perf_counter()
        self._depth += 1

    def on_end(self, event):
        self._depth -= 1
        if self._depth == 0:
            self.intervals.append((self._start, time.perf_counter()))

    @property
    def total(self) -> float:
        return sum(stop - start for start, stop in self.intervals)

    def within(self, start: float, stop: float) -> float:
        """Compile seconds that fall between ``start`` and ``stop``."""
        return sum(max(0.0, min(b, stop) - max(a, start)) for a, b in self.intervals)


@contextmanager
def compile_clock():
    """A :class:`CompileClock` recording numba compilations inside the ``with`` block."""
    clock = CompileClock()
    event.register("numba:compiler_lock", clock)
    try:
        yield clock
    finally:
        event.unregister("numba:compiler_lock", clock)


@contextmanager
def compile_time_of(estimator):
    """Inside the ``with`` block (an estimator's ``fit``): the seconds numba spends
    compiling (or loading cached code) become ``estimator.compile_time_``, and
    :func:`seconds_since` leaves them out of the fit's phase times (``kernel_time_``,
    ``solve_time_``)."""
    with compile_clock() as clock:
        token = _FIT_CLOCK.set(clock)
        try:
            yield clock
        finally:
            _FIT_CLOCK.reset(token)
    estimator.compile_time_ = clock.total


def seconds_since(start: float) -> float:
    """Seconds from ``start`` (a ``time.perf_counter()`` value) to now, less numba's
    compilation in between when called inside a fit decorated by
    :func:`compile_time_of`."""
    now = time.perf_counter()
    clock = _FIT_CLOCK.get()
    return now - start - (0.0 if clock is None else clock.within(start, now))
