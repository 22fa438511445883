"""The plan of a fit, said before the solver runs: how the kernels are held, the memory that
takes, the time of a pass over the kernel rows, and cheaper routes when that is long.

The time is the one cost figure a fit measures before it solves: a pass over the rows of
the base kernels (every kernel value computed once), timed on the rows themselves for
kernels computed on demand (:func:`row_pass_seconds`: the median of three rows, times n), or
the time the stack or the low-rank features took to compute. A fit reads every row at least
once, and SMO-MKL's first gap check comes after about one pass; the checks after it read
cached rows, so a fit whose cache holds every row takes about 1.3 passes, more when rows are
recomputed. One-vs-rest classes each make their own pass.

- from ``LONG_FIT_SECONDS`` on, the plan names the cheaper routes that apply
  (:func:`cheaper_routes`): fewer points, a one-shot solver, low-rank kernels, float32 rows;
- from ``REFUSED_FIT_SECONDS`` on, the fit warns with :class:`LongFitWarning` (always, not
  only with ``verbose``) before it solves; ``mklearn fit`` refuses such a fit unless given
  ``--yes``.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from dataclasses import dataclass, field

import numpy as np
from sklearn.exceptions import EfficiencyWarning

from mklearn._sizes import GIB, MB

__all__ = ["LONG_FIT_SECONDS", "REFUSED_FIT_SECONDS", "FitPlan", "LongFitWarning", "Route",
           "cheaper_routes", "command_line_words", "duration", "in_command_line",
           "row_pass_seconds"]

LONG_FIT_SECONDS = 60.0  # from this planned time on, the plan names cheaper routes
REFUSED_FIT_SECONDS = 3600.0  # from this on, LongFitWarning (the CLI refuses without --yes)
ONE_SHOT_SOLVER = "average"  # the cheaper solver a long plan names: weights fixed, one SVM
LOW_RANK_COMPONENTS = 500  # n_components the low-rank route names
SMALLEST_SUBSAMPLE = 200  # a subsample route below this many points is not worth naming
ROWS_TIMED = 3  # rows timed for the pass (their median: one read may be disturbed)
_COMMAND_LINE = contextvars.ContextVar("command_line_words", default=False)


@contextlib.contextmanager
def command_line_words():
    """Within this context (of the current thread), plans name their routes as
    ``mklearn fit``'s options rather than the estimators' parameters."""
    token = _COMMAND_LINE.set(True)
    try:
        yield
    finally:
        _COMMAND_LINE.reset(token)


class LongFitWarning(EfficiencyWarning):
    """A fit is planned to take longer than ``REFUSED_FIT_SECONDS`` (an hour); the message
    gives the estimate and the cheaper routes. ``plan`` is the :class:`FitPlan`.

    A subclass of scikit-learn's :class:`~sklearn.exceptions.EfficiencyWarning` (itself a
    ``UserWarning``): turn it into an error with
    ``warnings.simplefilter("error", LongFitWarning)`` to stop such fits before they solve.
    """

    def __init__(self, message: str, plan: FitPlan | None = None) -> None:
        super().__init__(message)
        self.plan = plan


@dataclass(frozen=True)
class Route:
    """A cheaper way to fit: how the estimators' parameters say it, and how ``mklearn fit``
    does."""

    api: str
    cli: str


@dataclass(frozen=True)
class FitPlan:
    """What a fit will hold and how long a pass over its kernel rows takes.

    Attributes
    ----------
    what : str
        How the kernels are held, e.g. "119 kernels on 4000 samples as rows computed on
        demand (cache 5470.81 MB)".
    memory_bytes : int
        Bytes the kernels take as planned (stack, row cache and state, or features).
    pass_seconds : float
        Seconds of one pass over the kernel rows (measured: see the module docstring).
    measured : str
        How ``pass_seconds`` was measured, for the message.
    n_solves : int
        Solves that each make a pass (one-vs-rest classes), at least 1.
    routes : tuple of Route
        Cheaper routes that apply to this fit.
    """

    what: str
    memory_bytes: int
    pass_seconds: float
    measured: str
    n_solves: int = 1
    routes: tuple = field(default=())

    @property
    def seconds(self) -> float:
        """Planned seconds: a pass over the rows per solve."""
        return self.pass_seconds * self.n_solves

    @property
    def is_long(self) -> bool:
        return self.seconds >= LONG_FIT_SECONDS

    @property
    def is_refused(self) -> bool:
        return self.seconds >= REFUSED_FIT_SECONDS

    def estimate(self) -> str:
        """The estimate in one phrase: memory and time."""
        solves = f" for each of {self.n_solves} one-vs-rest classes" if self.n_solves > 1 else ""
        return (f"memory about {_size(self.memory_bytes)}; a pass over the kernel rows about "
                f"{duration(self.pass_seconds)}{solves} ({self.measured}), and the fit takes "
                "at least that")

    def text(self) -> str:
        """The plan as said before the fit (``verbose`` output, ``mklearn fit``)."""
        return f"plan: {self.what}; {self.estimate()}"

    def routes_text(self) -> str:
        """The cheaper routes, in the estimators' parameters (or ``mklearn fit``'s options
        within :func:`command_line_words`)."""
        cli = in_command_line()
        return "; ".join(route.cli if cli else route.api for route in self.routes)

    def long_text(self) -> str:
        """For a plan of a minute or more: its length and the cheaper routes."""
        text = f"this fit is planned to take {duration(self.seconds)} or more"
        if not self.routes:
            return text
        return f"{text}; cheaper routes: {self.routes_text()}"


def in_command_line() -> bool:
    """Whether :func:`command_line_words` is in force."""
    return _COMMAND_LINE.get()


def duration(seconds: float) -> str:
    """Seconds in words: "42 s", "3.2 min", "9.7 h"."""
    if seconds < 120:
        return f"{seconds:.3g} s"
    if seconds < 7200:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / 3600:.3g} h"


def _size(nbytes: int) -> str:
    return f"{nbytes / GIB:.3g} GiB" if nbytes >= GIB else f"{nbytes / MB:.3g} MB"


def row_pass_seconds(provider) -> tuple[float, float]:
    """``(pass, row)``: seconds of a pass over the rows of every base kernel of ``provider``
    (``rows(indices)`` of shape (m, len(indices), n)) and of one row: the median of
    ``ROWS_TIMED`` rows read one at a time, after a first read that may load compiled
    code."""
    n = provider.n_samples
    provider.rows(np.array([0]))
    seconds = []
    for i in np.linspace(0, n - 1, ROWS_TIMED + 2).astype(np.int64)[1:-1]:
        start = time.perf_counter()
        provider.rows(np.array([i]))
        seconds.append(time.perf_counter() - start)
    row = float(np.median(seconds))
    return n * row, row


def cheaper_routes(*, n_samples: int, seconds: float, cost_power: int, one_shot: bool,
                   can_approximate: bool, float32_helps: bool) -> tuple[Route, ...]:
    """The cheaper routes that apply to a fit planned to take ``seconds``.

    Parameters
    ----------
    n_samples : int
        Training points.
    seconds : float
        Planned time.
    cost_power : int
        How a pass grows with the points: 2 for exact kernels (n rows of n values), 1 for
        low-rank features.
    one_shot : bool
        The solver already fixes the weights in one pass (no cheaper solver to name).
    can_approximate : bool
        Exact kernels from numeric X with a solver that runs on low-rank features.
    float32_helps : bool
        float64 rows in a cache that cannot hold them all (float32 holds twice as many).

    Returns
    -------
    tuple of Route
    """
    routes = []
    subsample = int(n_samples * (LONG_FIT_SECONDS / max(seconds, 1e-9)) ** (1 / cost_power))
    if SMALLEST_SUBSAMPLE <= subsample < n_samples:
        growth = "n^2" if cost_power == 2 else "n"
        routes.append(Route(
            f"fewer points (a subsample of about {subsample}: a pass grows as {growth})",
            f"--n-samples {subsample} (a pass grows as {growth})"))
    if not one_shot:
        routes.append(Route(
            f"solver={ONE_SHOT_SOLVER!r} (fixed weights, one SVM)",
            f"--solver {ONE_SHOT_SOLVER} (fixed weights, one SVM)"))
    if can_approximate and n_samples > 2 * LOW_RANK_COMPONENTS:
        routes.append(Route(
            f"kernel_approximation='nystroem' with n_components={LOW_RANK_COMPONENTS} "
            "(low-rank kernels: time and memory linear in n)",
            f"--kernel-approximation nystroem --n-components {LOW_RANK_COMPONENTS} "
            "(low-rank kernels: time and memory linear in n)"))
    if float32_helps:
        routes.append(Route(
            "kernel_dtype='float32' (the cache holds twice the rows: fewer recomputed)",
            "--kernel-dtype float32 (the cache holds twice the rows: fewer recomputed)"))
    return tuple(routes)
