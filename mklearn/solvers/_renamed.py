"""The former keyword names of the solvers' first parameter, kept for a release.

The solver functions name the kernel operator they read ``operator``; five called it
``combination`` and eight ``provider``. A call that passes it by its former name still works
for one release, with a ``FutureWarning`` (CHANGELOG, Deprecated).
"""

from __future__ import annotations

import functools
import warnings


def former_operator_name(old):
    """Decorate a solver whose first parameter ``operator`` was called ``old``: a call that
    passes ``old=...`` gets it as ``operator``, with a ``FutureWarning``."""

    def wrap(function):
        @functools.wraps(function)
        def solver(*args, **kwargs):
            if old in kwargs:
                warnings.warn(
                    f"{function.__name__}: the parameter {old!r} is now called 'operator'; "
                    f"{old!r} will be removed in a future release", FutureWarning,
                    stacklevel=2)
                args = (kwargs.pop(old), *args)
            return function(*args, **kwargs)

        return solver

    return wrap
