"""Time spent compiling numba functions (or loading them from numba's on-disk cache).

numba compiles a jitted function on its first call and caches the machine code in
``__pycache__`` (``cache=True``), so only the first run after an install pays for it. The
estimators (``compile_time_``) and the command line report that time apart from the kernel
and solver times it would otherwise inflate. The clock listens to numba's
``numba:compiler_lock`` events: every compilation and every cache load holds that lock.
"""

from __future__ import annotations

import contextvars
import functools
import time
from contextlib import contextmanager

from numba.core import event

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


def reports_compile_time(fit):
    """Decorate an estimator's ``fit``: the seconds numba spends compiling (or loading
    cached code) during the fit become ``compile_time_``, and :func:`seconds_since` leaves
    them out of the fit's phase times (``kernel_time_``, ``solve_time_``)."""

    @functools.wraps(fit)
    def timed_fit(self, *args, **kwargs):
        with compile_clock() as clock:
            token = _FIT_CLOCK.set(clock)
            try:
                result = fit(self, *args, **kwargs)
            finally:
                _FIT_CLOCK.reset(token)
        self.compile_time_ = clock.total
        return result

    return timed_fit


def seconds_since(start: float) -> float:
    """Seconds from ``start`` (a ``time.perf_counter()`` value) to now, less numba's
    compilation in between when called inside a fit decorated by
    :func:`reports_compile_time`."""
    now = time.perf_counter()
    clock = _FIT_CLOCK.get()
    return now - start - (0.0 if clock is None else clock.within(start, now))
