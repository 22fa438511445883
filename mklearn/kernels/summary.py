"""The statistics of the training points that kernel recipes and the bank's standardisation
read: :class:`ColumnSummary`.

A recipe (:mod:`mklearn.kernels.recipes`) needs of X only its constant columns, the columns
of two values (with those values, their counts and one row of each), SVC's ``gamma="scale"``
(the spread of every entry) and the standardisation's moments. :meth:`ColumnSummary.of`
takes them from a matrix in memory; partitioned data (:mod:`mklearn.distributed.points`)
merges the summaries of its partitions (:meth:`ColumnSummary.merged`), so that the same
kernels come from X wherever its rows lie.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mklearn.kernels.bank import at_most_two_values, check_samples, standard_moments

__all__ = ["ColumnSummary", "PartitionMoments", "first_pass", "second_pass", "summarize",
           "units"]


@dataclass
class ColumnSummary:
    """What kernel recipes read of X (shape (n_samples, n_features)).

    Attributes
    ----------
    n_samples : int
    minimum, maximum : ndarray of shape (n_features,)
    mean, scale : ndarray of shape (n_features,)
        :func:`~mklearn.kernels.bank.standard_moments`: means and deviations (1 for a
        constant column).
    peak : float
        ``max |X|`` (0 for an all-zero X).
    spread : float
        The deviation of every entry of ``X / peak`` together (SVC's ``gamma="scale"``).
    unit_deviation : ndarray of shape (n_features,)
        Each column's deviation of ``X / peak``.
    two_valued : dict
        Column -> ``(values, counts, rows)`` for the columns of exactly two values: both
        values in increasing order, how often each occurs, and a row of X holding each,
        shape (2, n_features).
    largest_squared_norm : float
        ``max_i ||x_i||^2`` (inf when it overflows).
    """

    n_samples: int
    minimum: np.ndarray
    maximum: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    peak: float
    spread: float
    unit_deviation: np.ndarray
    two_valued: dict
    largest_squared_norm: float

    @property
    def n_features(self) -> int:
        return self.minimum.size

    @property
    def constant(self) -> np.ndarray:
        """Whether each column holds one value, bool of shape (n_features,)."""
        return self.minimum == self.maximum

    @classmethod
    def of(cls, X) -> ColumnSummary:
        """The summary of a finite dense X in memory.

        Raises
        ------
        ValueError
            If X is not a valid finite 2-D array (:func:`~mklearn.kernels.bank.check_samples`).
        """
        X = check_samples(X)
        peak = float(np.max(np.abs(X))) if X.size else 0.0
        unit = X / peak if peak > 0 else X
        mean, scale = standard_moments(X)
        minimum, maximum = X.min(axis=0), X.max(axis=0)
        two = np.flatnonzero((maximum > minimum) & at_most_two_values(X))
        two_valued = {}
        for column in two:
            values, first, counts = np.unique(X[:, column], return_index=True,
                                              return_counts=True)
            two_valued[int(column)] = (values, counts, X[first].copy())
        with np.errstate(over="ignore", invalid="ignore"):
            largest = float(np.max(np.einsum("ij,ij->i", X, X)))
        return cls(X.shape[0], minimum, maximum, mean, scale, peak, float(unit.std()),
                   unit.std(axis=0), two_valued, largest if np.isfinite(largest) else np.inf)

    @classmethod
    def merged(cls, first: list, second: list) -> ColumnSummary:
        """The summary of X from its partitions' two passes: ``first``, each partition's
        :func:`first_pass` (extremes, the values of columns of at most two values, row
        norms), and ``second``, each one's :class:`PartitionMoments` taken with the units of
        :func:`units` (Chan, Golub and LeVeque's pairwise update of means and squared
        deviations)."""
        n = int(sum(part["n_samples"] for part in first))
        minimum = np.min([part["minimum"] for part in first], axis=0)
        maximum = np.max([part["maximum"] for part in first], axis=0)
        peak = float(np.max(np.maximum(np.abs(minimum), np.abs(maximum)))) if n else 0.0
        columns = PartitionMoments.combined([part[0] for part in second])
        entries = PartitionMoments.combined([part[1] for part in second])
        unit = units(minimum, maximum)
        mean = columns.mean * unit
        deviation = columns.deviation() * unit
        scale = np.where((deviation == 0.0) | (minimum == maximum), 1.0, deviation)
        largest = max(part["largest_squared_norm"] for part in first)
        return cls(n, minimum, maximum, mean, scale, peak, entries.deviation_of_all(),
                   entries.deviation(), _merged_two_valued(first, minimum, maximum), largest)


def summarize(X) -> ColumnSummary:
    """X's summary: X itself when it is one, else :meth:`ColumnSummary.of`."""
    return X if isinstance(X, ColumnSummary) else ColumnSummary.of(X)


def units(minimum: np.ndarray, maximum: np.ndarray) -> np.ndarray:
    """:func:`~mklearn.kernels.bank.standard_moments`'s unit of each column: its peak where
    that is extreme (above 1e150 or below 1e-150), else 1."""
    peak = np.maximum(np.abs(minimum), np.abs(maximum))
    return np.where((peak > 1e150) | ((peak < 1e-150) & (peak > 0)), peak, 1.0)


def first_pass(X: np.ndarray) -> dict:
    """One partition's extremes, row norms and columns of at most two values (their values,
    counts and a row of each)."""
    X = np.asarray(X, dtype=np.float64)
    minimum, maximum = X.min(axis=0), X.max(axis=0)
    few = {}
    for column in np.flatnonzero(at_most_two_values(X)):
        values, first, counts = np.unique(X[:, column], return_index=True, return_counts=True)
        few[int(column)] = (values, counts, X[first].copy())
    with np.errstate(over="ignore", invalid="ignore"):
        largest = float(np.max(np.einsum("ij,ij->i", X, X)))
    return {"n_samples": X.shape[0], "minimum": minimum, "maximum": maximum, "few": few,
            "largest_squared_norm": largest if np.isfinite(largest) else np.inf}


def second_pass(X: np.ndarray, unit: np.ndarray, peak: float) -> tuple:
    """One partition's moments of ``X / unit`` by column and of ``X / peak`` (all entries
    and by column)."""
    X = np.asarray(X, dtype=np.float64)
    return (PartitionMoments.of(X / unit),
            PartitionMoments.of(X / peak if peak > 0 else X))


def _merged_two_valued(first, minimum, maximum):
    """Columns of exactly two values over every partition, with their counts and rows."""
    out = {}
    candidates = set.intersection(*(set(part["few"]) for part in first))
    for column in sorted(candidates):
        if not maximum[column] > minimum[column]:
            continue
        values = np.array([minimum[column], maximum[column]])
        counts = np.zeros(2, dtype=np.int64)
        rows = [None, None]
        ok = True
        for part in first:
            part_values, part_counts, part_rows = part["few"][column]
            for value, count, row in zip(part_values, part_counts, part_rows, strict=True):
                at = np.flatnonzero(values == value)
                if at.size == 0:
                    ok = False
                    break
                counts[at[0]] += count
                rows[at[0]] = row if rows[at[0]] is None else rows[at[0]]
        if ok:
            out[column] = (values, counts, np.stack(rows))
    return out


@dataclass
class PartitionMoments:
    """Count, means and summed squared deviations of some rows, by column."""

    n: int
    mean: np.ndarray
    squares: np.ndarray

    @classmethod
    def of(cls, X: np.ndarray) -> PartitionMoments:
        mean = X.mean(axis=0) if X.shape[0] else np.zeros(X.shape[1])
        return cls(X.shape[0], mean, ((X - mean) ** 2).sum(axis=0))

    @classmethod
    def combined(cls, parts: list) -> PartitionMoments:
        """The moments of all the rows together (Chan, Golub and LeVeque, 1979)."""
        total = parts[0]
        for part in parts[1:]:
            n = total.n + part.n
            if part.n == 0:
                continue
            delta = part.mean - total.mean
            mean = total.mean + delta * (part.n / n)
            squares = total.squares + part.squares + delta ** 2 * (total.n * part.n / n)
            total = cls(n, mean, squares)
        return total

    def deviation(self) -> np.ndarray:
        """Each column's deviation (``ddof=0``)."""
        return np.sqrt(self.squares / max(self.n, 1))

    def deviation_of_all(self) -> float:
        """The deviation of every entry together: the columns' squared deviations about the
        common mean."""
        grand = float(self.mean.mean()) if self.mean.size else 0.0
        squares = self.squares.sum() + self.n * float(((self.mean - grand) ** 2).sum())
        return float(np.sqrt(squares / max(self.n * self.mean.size, 1)))
