"""Time spent compiling numba functions (or loading them from numba's on-disk cache).

numba compiles a jitted function on its first call and caches the machine code in
``__pycache__`` (``cache=True``), so only the first run after an install pays for it. The
command line reports that time apart from the kernel and solver times it would otherwise
inflate. The clock listens to numba's ``numba:compiler_lock`` events: every compilation and
every cache load holds that lock.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

from numba.core import event


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
