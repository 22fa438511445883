"""The message of numpy's failed conversion of strings to numbers, as a ValueError that says
what to do (:func:`numeric_input`)."""

from __future__ import annotations

import re
from contextlib import contextmanager


@contextmanager
def numeric_input(what="X"):
    """numpy's "could not convert string to float" as a ValueError that says what to do."""
    try:
        yield
    except ValueError as exc:
        found = re.search(r"could not convert string to float: (.*)$", str(exc))
        if found is None:
            raise
        raise ValueError(
            f"{what} contains non-numeric values such as {found.group(1)}; MKL kernels need "
            "numbers: encode categorical features first (e.g. "
            "sklearn.preprocessing.OneHotEncoder)"
        ) from None
