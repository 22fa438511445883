"""String kernels on sequences: specs, the WD sub-kernel recipe and sequence checking.

A string-kernel spec says *which* kernel to compute on sequences given as a 1-D array of str;
:class:`~mklearn.kernels.string_bank.StringKernelBank` computes it. Kernels (Sonnenburg,
Raetsch, Schaefer and Schoelkopf, "Large scale multiple kernel learning", JMLR 7, 2006,
section 4.1; ALGORITHMS.md section 5):

- spectrum of order d: ``k(x, z) = sum_u N_u(x) N_u(z)``, ``N_u`` the number of occurrences of
  the d-mer u (Leslie, Eskin and Noble, PSB 2002);
- weighted degree of order d: ``k(x, z) = sum_{k=1}^d beta_k sum_{p} I(x[p:p+k] == z[p:p+k])``,
  ``beta_k = 2 (d - k + 1) / (d (d + 1))``, on sequences of equal length.

A WD *sub-kernel* keeps only some k-mer lengths and/or the k-mers starting in a block of
positions; the sub-kernels of a partition add up to the full WD kernel, so MKL over them learns
which lengths or which positions matter (the paper's Figure 6).
"""

from __future__ import annotations

import numbers
import reprlib
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, NamedTuple

import numpy as np

__all__ = [
    "StringKernelSpec",
    "Spectrum",
    "WeightedDegree",
    "WDSubKernels",
    "wd_sub_kernels",
    "wd_weights",
    "check_sequences",
    "Sequences",
    "is_string_kernels",
]

_INVALID = 255  # code of a character outside the alphabet
_MAX_LINADD_CODE = 2**62  # k-mer codes (and position-offset keys) must stay below this


def _check_int(owner: str, name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise ValueError(f"{owner}: {name} must be an int >= {low}; got {value!r}.")
    if value < low:
        raise ValueError(f"{owner}: {name} must be an int >= {low}; got {value}.")
    return int(value)


def _check_alphabet(owner: str, alphabet: Any) -> str:
    if not isinstance(alphabet, str) or not alphabet:
        raise ValueError(f"{owner}: alphabet must be a non-empty str such as 'ACGT'; got "
                         f"{alphabet!r}.")
    upper = alphabet.upper()
    if len(set(upper)) != len(upper) or not upper.isascii() or len(upper) > 254:
        raise ValueError(
            f"{owner}: alphabet must hold distinct ASCII letters (case-insensitive, at most "
            f"254); got {alphabet!r}."
        )
    return upper


def wd_weights(order: int) -> np.ndarray:
    """WD weights ``beta_k = 2 (d - k + 1) / (d (d + 1))`` for ``k = 1..d`` (they sum to 1).

    Parameters
    ----------
    order : int >= 1
        The WD order d.

    Returns
    -------
    ndarray of shape (order,)
    """
    d = _check_int("wd_weights", "order", order, 1)
    k = np.arange(1, d + 1)
    return 2.0 * (d - k + 1) / (d * (d + 1))


@dataclass(frozen=True)
class StringKernelSpec(ABC):
    """Base class of the string-kernel descriptions (frozen, hashable)."""

    #: Value of the ``"type"`` key of :meth:`to_dict`.
    type_name: ClassVar[str] = ""

    @property
    @abstractmethod
    def name(self) -> str:
        """Readable name, e.g. ``"wd(d=20, k=3) at positions 10-19"``."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict ``{"type": ..., <parameters>...}``."""
        out: dict[str, Any] = {"type": self.type_name}
        for item in fields(self):
            value = getattr(self, item.name)
            out[item.name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class Spectrum(StringKernelSpec):
    """Spectrum kernel of order d: inner product of d-mer counts.

    Parameters
    ----------
    order : int >= 1
        Length d of the counted substrings.
    alphabet : str, default="ACGT"
        Allowed characters (case-insensitive). Sequences may differ in length.

    Raises
    ------
    ValueError
        If ``order`` is not an int >= 1, the alphabet is not distinct ASCII characters, or
        ``len(alphabet) ** order`` does not fit the integer k-mer codes (``< 2**62``).

    References
    ----------
    C. Leslie, E. Eskin and W. S. Noble, "The spectrum kernel", PSB 2002; SILP-MKL paper,
    JMLR 7 (2006), section 4.1.
    """

    order: int
    alphabet: str = field(default="ACGT", kw_only=True)

    type_name: ClassVar[str] = "spectrum"

    def __post_init__(self) -> None:
        order = _check_int("Spectrum", "order", self.order, 1)
        alphabet = _check_alphabet("Spectrum", self.alphabet)
        if len(alphabet) ** order >= _MAX_LINADD_CODE:
            raise ValueError(
                f"Spectrum: order {order} over an alphabet of {len(alphabet)} characters gives "
                "k-mer codes beyond 2**62; use a smaller order."
            )
        object.__setattr__(self, "order", order)
        object.__setattr__(self, "alphabet", alphabet)

    @property
    def name(self) -> str:
        return f"spectrum(d={self.order})"


@dataclass(frozen=True)
class WeightedDegree(StringKernelSpec):
    """Weighted-degree kernel of order d, or one of its sub-kernels.

    ``k(x, z) = sum_{k in kmers} beta_k sum_{p in positions} I(x[p:p+k] == z[p:p+k])`` with
    ``beta_k = 2 (d - k + 1) / (d (d + 1))``; the k-mers counted are those *starting* at a
    position p of the block (they may extend past it).

    Parameters
    ----------
    order : int >= 1
        The order d (longest k-mer, and the normalisation of the weights).
    kmers : None or iterable of int in [1, d], default=None
        k-mer lengths kept (None: all ``1..d``).
    positions : None or (start, stop), default=None
        0-based half-open block ``[start, stop)`` of k-mer start positions (None: all).
    alphabet : str, default="ACGT"
        Allowed characters (case-insensitive). All sequences must have the same length.

    Raises
    ------
    ValueError
        On an invalid order, k-mer length, block or alphabet.

    References
    ----------
    G. Raetsch and S. Sonnenburg, "Accurate splice site detection for Caenorhabditis elegans",
    2004; SILP-MKL paper, JMLR 7 (2006), section 4.1 (WD kernel), section 4.2 (linadd).
    """

    order: int
    kmers: tuple[int, ...] | None = field(default=None, kw_only=True)
    positions: tuple[int, int] | None = field(default=None, kw_only=True)
    alphabet: str = field(default="ACGT", kw_only=True)

    type_name: ClassVar[str] = "weighted_degree"

    def __post_init__(self) -> None:
        order = _check_int("WeightedDegree", "order", self.order, 1)
        object.__setattr__(self, "order", order)
        object.__setattr__(self, "alphabet", _check_alphabet("WeightedDegree", self.alphabet))
        if self.kmers is not None:
            if isinstance(self.kmers, (str, bytes)) or not isinstance(self.kmers, Iterable):
                raise ValueError(
                    f"WeightedDegree: kmers must be None or a sequence of ints in [1, {order}]; "
                    f"got {self.kmers!r}."
                )
            kmers = sorted({_check_int("WeightedDegree", "kmers", k, 1) for k in self.kmers})
            if not kmers or kmers[-1] > order:
                raise ValueError(
                    f"WeightedDegree: kmers must be non-empty lengths in [1, {order}] (the "
                    f"order); got {self.kmers!r}."
                )
            object.__setattr__(self, "kmers", tuple(kmers))
        if self.positions is not None:
            block = tuple(self.positions) if isinstance(self.positions, Iterable) else ()
            if len(block) != 2:
                raise ValueError(
                    "WeightedDegree: positions must be None or a pair (start, stop) of 0-based "
                    f"positions; got {self.positions!r}."
                )
            start = _check_int("WeightedDegree", "positions start", block[0], 0)
            stop = _check_int("WeightedDegree", "positions stop", block[1], start + 1)
            object.__setattr__(self, "positions", (start, stop))

    @property
    def kmer_lengths(self) -> tuple[int, ...]:
        """The k-mer lengths counted, ``1..d`` when ``kmers`` is None."""
        return self.kmers if self.kmers is not None else tuple(range(1, self.order + 1))

    @property
    def name(self) -> str:
        label = f"wd(d={self.order}"
        if self.kmers is not None:
            label += ", k=" + ",".join(str(k) for k in self.kmers)
        label += ")"
        if self.positions is not None:
            label += f" at positions {self.positions[0]}-{self.positions[1] - 1}"
        return label

    def table(self, d_max: int) -> np.ndarray:
        """``T[r] = sum_{k in kmers, k <= r} beta_k`` for ``r = 0..d_max`` (match-run table)."""
        beta = np.zeros(d_max + 1)
        weights = wd_weights(self.order)
        for k in self.kmer_lengths:
            if k <= d_max:
                beta[k] = weights[k - 1]
        return np.cumsum(beta)

    def block(self, length: int) -> tuple[int, int]:
        """The block ``[start, stop)`` on sequences of ``length``; ValueError if it overflows."""
        if self.positions is None:
            return 0, length
        start, stop = self.positions
        if stop > length:
            raise ValueError(
                f"Kernel '{self.name}' uses positions up to {stop - 1}, but the sequences have "
                f"length {length} (positions 0..{length - 1}); use blocks within the sequences."
            )
        return start, stop


class WDSubKernels:
    """Recipe: the WD kernel split into sub-kernels, one per k-mer length or per position block.

    Parameters
    ----------
    order : int >= 1
        WD order d.
    by : {"kmer", "position"}, default="position"
        "kmer": d sub-kernels ``wd(d, k=j)``; "position": one sub-kernel per block of
        ``block_size`` start positions (the last block may be shorter).
    block_size : int >= 1, default=10
        Positions per block (``by="position"``).
    alphabet : str, default="ACGT"
        Allowed characters.

    Raises
    ------
    ValueError
        On invalid parameters.

    Notes
    -----
    The sub-kernels sum to ``WeightedDegree(order)``; with unit weights the MKL kernel is the
    plain WD kernel (up to the unit-trace normalisation the estimators apply per kernel).
    """

    def __init__(self, order: int, *, by: str = "position", block_size: int = 10,
                 alphabet: str = "ACGT") -> None:
        self.order = _check_int("wd_sub_kernels", "order", order, 1)
        if by not in ("kmer", "position"):
            raise ValueError(f"wd_sub_kernels: by must be 'kmer' or 'position'; got {by!r}.")
        self.by = by
        self.block_size = _check_int("wd_sub_kernels", "block_size", block_size, 1)
        self.alphabet = _check_alphabet("wd_sub_kernels", alphabet)

    def __repr__(self) -> str:
        return (f"WDSubKernels(order={self.order}, by={self.by!r}, "
                f"block_size={self.block_size}, alphabet={self.alphabet!r})")

    def specs(self, length: int) -> list[WeightedDegree]:
        """The sub-kernels for sequences of ``length`` characters."""
        if self.by == "kmer":
            return [WeightedDegree(self.order, kmers=(k,), alphabet=self.alphabet)
                    for k in range(1, self.order + 1)]
        return [
            WeightedDegree(self.order, positions=(start, min(start + self.block_size, length)),
                           alphabet=self.alphabet)
            for start in range(0, length, self.block_size)
        ]

    def expand(self, X: Any) -> list[WeightedDegree]:
        """The sub-kernels for the training sequences X (which must share one length)."""
        seqs = check_sequences(X, alphabet=self.alphabet, equal_length=True)
        return self.specs(int(seqs.lengths[0]))


def wd_sub_kernels(order: int = 20, *, by: str = "position", block_size: int = 10,
                   alphabet: str = "ACGT") -> WDSubKernels:
    """The WD kernel as separate base kernels for MKL (see :class:`WDSubKernels`).

    Example: ``MKLClassifier(kernels=wd_sub_kernels(10, by="kmer")).fit(seqs, y)``.
    """
    return WDSubKernels(order, by=by, block_size=block_size, alphabet=alphabet)


class Sequences(NamedTuple):
    """Integer-coded sequences.

    Attributes
    ----------
    codes : uint8 ndarray of shape (n, max_length)
        Character codes ``0..a-1`` (index in the alphabet); 255 past a sequence's end.
    lengths : int64 ndarray of shape (n,)
    alphabet : str
    """

    codes: np.ndarray
    lengths: np.ndarray
    alphabet: str

    @property
    def n_samples(self) -> int:
        return self.codes.shape[0]

    def take(self, rows: np.ndarray) -> Sequences:
        """The sequences ``rows`` (a copy)."""
        return Sequences(np.ascontiguousarray(self.codes[rows]), self.lengths[rows], self.alphabet)


def _as_str_array(X: Any, name: str) -> np.ndarray:
    if isinstance(X, str):
        raise ValueError(f"{name} must be a 1-D array of sequences (str); got one str. Wrap it "
                         f"in a list: [{reprlib.repr(X)}].")
    arr = np.asarray(X, dtype=object) if not isinstance(X, np.ndarray) else X
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be a 1-D array of sequences (str) for string kernels; got an array of "
            f"shape {arr.shape}."
        )
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least one sequence; got none.")
    if arr.dtype.kind != "U":
        for i, item in enumerate(arr):
            if not isinstance(item, str):
                what = ("None, a missing sequence" if item is None else
                        f"{reprlib.repr(item)} ({type(item).__name__})")
                raise ValueError(
                    f"{name}[{i}] is {what}; string kernels need every sample to be a str "
                    "(decode bytes first, drop missing sequences)."
                )
    return arr


def check_sequences(X: Any, *, alphabet: str = "ACGT", equal_length: bool = False,
                    name: str = "X") -> Sequences:
    """Validate sequences and code them as integers.

    Parameters
    ----------
    X : array-like of str, shape (n_samples,)
        Sequences (a list, or a numpy array of dtype str or object; shape (n, 1) is accepted).
    alphabet : str, default="ACGT"
        Allowed characters; lower case is accepted for upper case and vice versa.
    equal_length : bool, default=False
        Require all sequences to have the same length (WD kernels).
    name : str, default="X"
        Name used in messages.

    Returns
    -------
    Sequences

    Raises
    ------
    ValueError
        If X is not a non-empty 1-D collection of non-empty str, holds characters outside the
        alphabet (they are named), or lengths differ when ``equal_length`` (they are named).
    """
    alphabet = _check_alphabet("check_sequences", alphabet)
    arr = _as_str_array(X, name)
    seqs = [str(s) for s in arr]
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    if lengths.min() == 0:
        raise ValueError(f"{name}[{int(np.argmin(lengths))}] is an empty sequence; remove it.")
    if equal_length and lengths.min() != lengths.max():
        values, counts = np.unique(lengths, return_counts=True)
        pairs = zip(values[:6], counts[:6], strict=True)
        shown = ", ".join(f"{v} ({c} sequences)" for v, c in pairs)
        raise ValueError(
            f"the weighted-degree kernel needs sequences of equal length; {name} has lengths "
            f"{shown}{', ...' if values.size > 6 else ''}. Cut or pad them to one length "
            "(e.g. a window around the site), or use Spectrum, which allows any lengths."
        )
    joined = "".join(seqs)
    allowed = set(alphabet) | set(alphabet.lower())
    try:
        raw = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    except UnicodeEncodeError:
        raw = None
    if raw is not None:
        table = np.full(256, _INVALID, dtype=np.uint8)
        for code, letter in enumerate(alphabet):
            table[ord(letter)] = code
            table[ord(letter.lower())] = code
        flat = table[raw]
        bad_mask = flat == _INVALID
    if raw is None or bad_mask.any():
        bad = sorted(set(joined) - allowed)
        first = next(i for i, s in enumerate(seqs) if set(s) - allowed)
        raise ValueError(
            f"{name} holds characters outside the alphabet {alphabet!r}: "
            f"{', '.join(repr(c) for c in bad[:10])} (first in {name}[{first}]). Remove or "
            "replace those sequences, or give an alphabet that includes them."
        )
    n, width = lengths.size, int(lengths.max())
    if lengths.min() == width:
        codes = flat.reshape(n, width)
    else:
        codes = np.full((n, width), _INVALID, dtype=np.uint8)
        mask = np.arange(width)[None, :] < lengths[:, None]
        codes[mask] = flat
    return Sequences(np.ascontiguousarray(codes), lengths, alphabet)


def _string_specs(kernels: Any) -> bool:
    if isinstance(kernels, (StringKernelSpec, WDSubKernels)):
        return True
    return (isinstance(kernels, (list, tuple)) and bool(kernels)
            and any(isinstance(k, StringKernelSpec) for k in kernels))


def is_string_kernels(kernels: Any) -> bool:
    """Whether an estimator's ``kernels`` argument asks for string kernels (input sequences).

    Raises
    ------
    ValueError
        If a list mixes string kernels and kernels on numeric features.
    """
    if not _string_specs(kernels):
        return False
    if isinstance(kernels, (list, tuple)) and not all(
            isinstance(k, StringKernelSpec) for k in kernels):
        raise ValueError(
            "kernels mixes string kernels (Spectrum, WeightedDegree) with other entries; string "
            "kernels take sequences as X, so a list must hold string kernels only."
        )
    return True


def resolve_string_kernels(kernels: Any, X: Any) -> list[StringKernelSpec]:
    """Turn an estimator's string ``kernels`` argument into a list of string specs for X."""
    if isinstance(kernels, WDSubKernels):
        return kernels.expand(X)
    if isinstance(kernels, StringKernelSpec):
        return [kernels]
    return list(kernels)
