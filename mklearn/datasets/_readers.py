"""Readers for user data files: LIBSVM/SVMlight and plain CSV / whitespace tables."""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path
from typing import Literal

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

PathLike = str | os.PathLike

# Field values that load_csv treats as "missing" (compared case-insensitively).
MISSING_TOKENS = frozenset({"", "?", "na", "n/a", "nan"})

_LIBSVM_HINT = "expected lines like '<label> <index>:<value> ...'"

# One LIBSVM/SVMlight sample: a label, an optional qid, then index:value pairs.
_LIBSVM_LINE = re.compile(r"^\s*[^\s,:]+(\s+qid:\S+)?(\s+\d+:[^\s,]+)+\s*(#.*)?$")
_UNLABELLED_LIBSVM_LINE = re.compile(r"^\s*\d+:[^\s,]+(\s+\d+:[^\s,]+)*\s*(#.*)?$")
_SNIFF_MAX_LINES = 50
_ENCODING = "utf-8-sig"  # UTF-8 (and so ASCII), with or without a byte-order mark


def _existing_file(path: PathLike) -> Path:
    file_path = Path(path)
    if not file_path.is_file():
        raise FileNotFoundError(f"data file not found: {file_path}")
    _check_encoding(file_path)
    return file_path


def _check_encoding(file_path: Path) -> None:
    """Refuse UTF-16/32 text (a byte-order mark or NUL bytes) and other non-UTF-8 bytes,
    naming the encoding problem instead of failing on garbled fields later."""
    with open(file_path, "rb") as handle:
        head = handle.read(1 << 16)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head:
        raise ValueError(
            f"{file_path} looks like UTF-16 or UTF-32 text (it has a byte-order mark or NUL "
            "bytes); mklearn reads UTF-8 or ASCII: convert it, e.g. "
            f"`iconv -f UTF-16 -t UTF-8 {file_path.name} > converted.csv`"
        )
    try:
        head.decode(_ENCODING)
    except UnicodeDecodeError as exc:
        cut = len(head) == 1 << 16 and exc.start >= len(head) - 3  # a character cut short
        if not cut:
            raise ValueError(
                f"{file_path} is not UTF-8 text (byte 0x{head[exc.start]:02x} at offset "
                f"{exc.start}); re-save it as UTF-8"
            ) from None


def _dense_limit_bytes() -> int:
    """Half the physical memory (8 GiB if it cannot be read)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (AttributeError, ValueError, OSError):
        return 8 << 30


def load_svmlight(
    path: PathLike, *, n_features: int | None = None, dense: bool = True
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """Read a LIBSVM / SVMlight format file.

    Each line holds one sample, ``<label> <index>:<value> <index>:<value> ...``,
    with 1-based feature indices in increasing order; omitted features are zero.
    A file that contains an index 0 is read as 0-based (SVMlight variant). This
    is a thin wrapper around :func:`sklearn.datasets.load_svmlight_file` with
    clearer error messages.

    Parameters
    ----------
    path : str or os.PathLike
        File to read.
    n_features : int, optional
        Number of feature columns of the result. Use it when a file does not
        contain the highest feature index (e.g. a test split), so that train and
        test matrices have the same width. By default the width is the highest
        index found in the file.
    dense : bool, default=True
        Return ``X`` as a dense array; if False return a SciPy CSR matrix.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64, or scipy.sparse.csr_matrix
        Feature matrix (dense unless ``dense=False``).
    y : ndarray of shape (n_samples,), dtype float64, or None
        Labels (or regression targets) exactly as written in the file; no
        recoding is done. None for a file of ``index:value`` pairs without labels.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist; the message names the path.
    ValueError
        If the file is empty or does not parse as LIBSVM format (the message
        names the path, gives the reason and shows the expected line format),
        if it contains a feature index larger than ``n_features``, or if
        ``dense`` and the dense matrix would take more than half the physical
        memory (e.g. one stray index 99999999).
    """
    file_path = _existing_file(path)
    unlabelled = _sniff_format(file_path) == "libsvm-unlabelled"
    try:
        with open(file_path, "rb") as handle:
            bom = handle.read(3) == b"\xef\xbb\xbf"
        if unlabelled or bom:  # read from memory: a placeholder label, no byte-order mark
            with open(file_path, "rb") as handle:
                lines = handle.read().removeprefix(b"\xef\xbb\xbf").splitlines(keepends=True)
            if unlabelled:
                lines = [b"0 " + line if line.strip() else line for line in lines]
            X, y = load_svmlight_file(io.BytesIO(b"".join(lines)))
        else:
            X, y = load_svmlight_file(str(file_path))
    except ValueError as exc:  # includes UnicodeDecodeError
        raise ValueError(
            f"could not parse {file_path} as LIBSVM format: {_parse_problem(exc)}; "
            f"{_LIBSVM_HINT}"
        ) from exc
    if X.shape[0] == 0:
        raise ValueError(
            f"could not parse {file_path} as LIBSVM format: the file has no samples; {_LIBSVM_HINT}"
        )
    if n_features is not None:
        X = _with_n_columns(X, n_features, file_path)
    X = X.astype(np.float64)
    y = None if unlabelled else np.asarray(y, dtype=np.float64)
    if dense:
        _check_dense_size(X, file_path)
    return (X.toarray() if dense else X.tocsr()), y


def _parse_problem(exc: ValueError) -> str:
    """The reason of a LIBSVM parse error, with numpy's conversion message made plain."""
    found = re.search(r"could not convert string to float: b?'(.*)'", str(exc))
    if found:
        return f"non-numeric value {found.group(1)!r}"
    return str(exc)


def _check_dense_size(X: sp.spmatrix, file_path: Path) -> None:
    needed = X.shape[0] * X.shape[1] * 8
    if needed > _dense_limit_bytes():
        raise ValueError(
            f"{file_path} has feature indices up to {X.shape[1]}, so its {X.shape[0]} samples "
            f"would take {needed / 2**30:.3g} GiB as a dense matrix, more than half this "
            "machine's memory; check the feature indices (1-based feature numbers), or read "
            "the file with load_svmlight(path, dense=False)"
        )


def _with_n_columns(X: sp.csr_matrix, n_features: int, file_path: Path) -> sp.csr_matrix:
    if int(n_features) != n_features or n_features < 1:
        raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
    n_features = int(n_features)
    if X.shape[1] > n_features:
        raise ValueError(
            f"{file_path} has feature indices up to {X.shape[1]}, more than n_features={n_features}"
        )
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))


def load_csv(
    path: PathLike,
    *,
    label_column: int = -1,
    header: bool | Literal["infer"] = "infer",
    delimiter: str | None = None,
    n_features: int | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Read a CSV or whitespace-separated table of numeric features and one label column.

    Parameters
    ----------
    path : str or os.PathLike
        File to read. Blank lines are ignored.
    label_column : int, default=-1
        Index of the label column (negative values count from the end). All
        other columns are features.
    header : {"infer", True, False}, default="infer"
        Whether the first line is a header of column names. ``"infer"`` treats
        the first line as a header when none of its feature fields is a number.
    delimiter : str, optional
        Field separator. By default it is guessed from the first line: ``","``
        if it contains a comma, ``";"`` if it contains a semicolon, otherwise any
        run of whitespace (spaces or tabs).
    n_features : int, optional
        Number of features expected (e.g. a fitted model's ``n_features_in_``): a table of
        ``n_features`` columns has no labels, one of ``n_features + 1`` has a label column.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64
        Feature columns in file order.
    y : ndarray of shape (n_samples,), or None
        Labels as read, without recoding: float64 if every label is a number,
        otherwise an array of ``str`` (e.g. ``"M"`` / ``"R"``). None when the table has
        no label column (only with ``n_features``).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If a row has a missing value (``?``, ``NA``, ``NaN`` or an empty
        field), a non-numeric feature value or the wrong number of fields (the
        message names the file and the first bad line number), if
        ``label_column`` is out of range, or if the file has no data rows.
    """
    if header not in ("infer", True, False):
        raise ValueError(f"header must be 'infer', True or False, got {header!r}")
    file_path = _existing_file(path)
    records = _read_records(file_path, delimiter)
    if not records:
        raise ValueError(f"{file_path} contains no data rows")

    n_columns = len(records[0][1])
    label_index = _resolve_label(label_column, n_columns, n_features, file_path)
    if header is True or (header == "infer" and _is_header(records[0][1], label_index)):
        records = records[1:]
    if not records:
        raise ValueError(f"{file_path} contains a header but no data rows")

    n_columns = len(records[0][1])
    label_index = _resolve_label(label_column, n_columns, n_features, file_path)
    features, labels = [], []
    for line_number, fields in records:
        if len(fields) != n_columns:
            raise ValueError(
                f"{file_path}, line {line_number}: expected {n_columns} fields, found {len(fields)}"
            )
        features.append(_parse_features(fields, label_index, file_path, line_number))
        if label_index is not None:
            labels.append(_check_label(fields[label_index], file_path, line_number))
    width = n_columns - (label_index is not None)
    X = np.asarray(features, dtype=np.float64).reshape(len(features), width)
    return X, (None if label_index is None else _label_array(labels))


def _resolve_label(label_column, n_columns, n_features, file_path):
    """Index of the label column; None when ``n_features`` says the table has none."""
    if n_features is None:
        return _label_index(label_column, n_columns, file_path)
    if n_columns == n_features:
        return None
    if n_columns == n_features + 1:
        return _label_index(label_column, n_columns, file_path)
    raise ValueError(
        f"{file_path} has {n_columns} columns; the model expects {n_features} features, "
        f"so {n_features} columns (no labels) or {n_features + 1} (with a label column)"
    )


def _read_records(file_path: Path, delimiter: str | None) -> list[tuple[int, list[str]]]:
    """Return (1-based line number, stripped fields) for every non-blank line."""
    with open(file_path, newline="", encoding=_ENCODING, errors="replace") as handle:
        lines = handle.read().splitlines()
    if delimiter is None:
        delimiter = _guess_delimiter(next((line for line in lines if line.strip()), ""))
    return [(line_number, _fields(line, delimiter))
            for line_number, line in enumerate(lines, start=1) if line.strip()]


def _guess_delimiter(first_line: str) -> str | None:
    return "," if "," in first_line else ";" if ";" in first_line else None


def _fields(line: str, delimiter: str | None) -> list[str]:
    fields = line.split() if delimiter is None else next(csv.reader([line], delimiter=delimiter))
    return [field.strip() for field in fields]


def csv_feature_names(
    path: PathLike, *, label_column: int | None = None, n_features: int | None = None
) -> list[str] | None:
    """The names of the feature columns in a CSV file's header line, in file order.

    The file is read as :func:`load_data_file` reads it (same label column, same rule for a
    header line), but only up to its first non-blank line.

    Returns
    -------
    list of str, or None
        None for a LIBSVM file or a CSV file without a header line.

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`load_csv` for the first line (e.g. ``label_column`` out of range).
    """
    file_path = _existing_file(path)
    if _sniff_format(file_path).startswith("libsvm"):
        return None
    with open(file_path, newline="", encoding=_ENCODING, errors="replace") as handle:
        first = next((line for line in handle if line.strip()), "")
    fields = _fields(first.rstrip("\r\n"), _guess_delimiter(first))
    if not fields:
        return None
    label_index = _resolve_label(-1 if label_column is None else label_column, len(fields),
                                 n_features, file_path)
    if not _is_header(fields, label_index):
        return None
    return [field for i, field in enumerate(fields) if i != label_index]


def _label_index(label_column: int, n_columns: int, file_path: Path) -> int:
    if n_columns < 2:
        raise ValueError(
            f"{file_path} has {n_columns} column(s); need at least one feature column "
            "and one label column"
        )
    if not -n_columns <= label_column < n_columns:
        raise ValueError(
            f"label_column={label_column} is out of range for {file_path}, "
            f"which has {n_columns} columns"
        )
    return label_column % n_columns


def _is_number(text: str) -> bool:
    if text.lower() in MISSING_TOKENS:
        return False
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_header(fields: list[str], label_index: int) -> bool:
    """A first line is a header when it has names, not numbers, in its feature fields."""
    feature_fields = [field for i, field in enumerate(fields) if i != label_index]
    has_name = any(field.lower() not in MISSING_TOKENS for field in feature_fields)
    return has_name and not any(_is_number(field) for field in feature_fields)


def _parse_features(
    fields: list[str], label_index: int, file_path: Path, line_number: int
) -> list[float]:
    values = []
    for column, field in enumerate(fields):
        if column == label_index:
            continue
        if field.lower() in MISSING_TOKENS:
            raise ValueError(
                f"{file_path}, line {line_number}: missing value {field!r} in column "
                f"{column + 1}; clean the file (drop incomplete rows) or impute the "
                "missing values before loading"
            )
        if not _is_number(field):
            raise ValueError(
                f"{file_path}, line {line_number}: non-numeric feature value {field!r} "
                f"in column {column + 1}; encode it as a number or remove the column "
                "before loading"
            )
        values.append(float(field))
    return values


def _check_label(field: str, file_path: Path, line_number: int) -> str:
    if field.lower() in MISSING_TOKENS:
        raise ValueError(
            f"{file_path}, line {line_number}: missing label {field!r}; clean the file "
            "(drop unlabelled rows) before loading"
        )
    return field


def _label_array(labels: list[str]) -> np.ndarray:
    if all(_is_number(label) for label in labels):
        return np.asarray([float(label) for label in labels], dtype=np.float64)
    return np.asarray(labels, dtype=str)


def _sniff_format(file_path: Path) -> Literal["libsvm", "libsvm-unlabelled", "csv"]:
    """Guess the format from the first meaningful lines of a file."""
    checked = 0
    with open(file_path, encoding=_ENCODING, errors="replace") as handle:
        for line in handle:
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            if _LIBSVM_LINE.match(stripped):
                return "libsvm"
            if _UNLABELLED_LIBSVM_LINE.match(stripped):
                return "libsvm-unlabelled"
            # A lone label is a valid LIBSVM line with no non-zero feature: undecided.
            if len(stripped.split()) > 1 or "," in stripped:
                return "csv"
            checked += 1
            if checked >= _SNIFF_MAX_LINES:
                break
    return "csv"


def load_data_file(
    path: PathLike, *, label_column: int | None = None, n_features: int | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Read a data file, detecting LIBSVM or CSV format from its content.

    A line such as ``+1 3:0.5 7:1`` marks a LIBSVM/SVMlight file, read with
    :func:`load_svmlight` (dense). Anything else (comma-, semicolon- or
    whitespace-separated numbers, optionally with a header) is read with
    :func:`load_csv`. This is what the command line ``--data FILE`` uses.

    Parameters
    ----------
    path : str or os.PathLike
        File to read.
    label_column : int, optional
        Label column for CSV files (default: the last). LIBSVM files have their
        label in the first field, so giving it for one is an error.
    n_features : int, optional
        Width of X, e.g. a fitted model's ``n_features_in_``: a LIBSVM file whose highest
        feature index is lower gets zero columns up to it; a CSV file of ``n_features``
        columns is read as unlabelled, one of ``n_features + 1`` as labelled.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64
        Dense feature matrix.
    y : ndarray of shape (n_samples,), or None
        Labels as read: float64, or ``str`` for CSV files with non-numeric labels; None for
        a file without labels (LIBSVM lines of ``index:value`` pairs only, or with
        ``n_features`` a CSV table of that many columns).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is not UTF-8 text, does not parse in the detected format
        (see :func:`load_svmlight` and :func:`load_csv`), or is LIBSVM and
        ``label_column`` is given.
    """
    file_path = _existing_file(path)
    if _sniff_format(file_path).startswith("libsvm"):
        if label_column is not None:
            raise ValueError(
                f"{file_path} is a LIBSVM file, whose label is the first field of each line; "
                "a label column applies to CSV files only: drop --label-column"
            )
        return load_svmlight(file_path, dense=True, n_features=n_features)
    return load_csv(file_path, label_column=-1 if label_column is None else label_column,
                    n_features=n_features)
