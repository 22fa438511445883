"""Access to the data files bundled in ``mklearn/datasets/data``."""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importlib.resources.abc only exists at runtime on Python >= 3.11
    from importlib.resources.abc import Traversable

_PACKAGE = "mklearn.datasets"


def bundled_file(dirname: str, filename: str) -> Traversable:
    """Return the packaged resource ``data/<dirname>/<filename>``.

    Works for regular installs, editable installs and zipped packages because
    it goes through :mod:`importlib.resources` instead of ``__file__``.
    """
    resource = resources.files(_PACKAGE) / "data" / dirname / filename
    if not resource.is_file():
        raise FileNotFoundError(
            f"bundled data file data/{dirname}/{filename} is missing from the "
            f"{_PACKAGE} package; reinstall mklearn"
        )
    return resource


def read_bundled_rows(dirname: str, filename: str, delimiter: str | None) -> list[list[str]]:
    """Read a bundled text table into rows of stripped string fields.

    ``delimiter=None`` splits on runs of whitespace. Blank lines are skipped.
    """
    text = bundled_file(dirname, filename).read_text(encoding="ascii")
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = line.split(delimiter)
        rows.append([field.strip() for field in fields])
    return rows
