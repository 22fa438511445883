"""The kernel operator: how every solver reaches the base kernels ``K_1 .. K_m``.

A solver never holds the ``(n, n, m)`` base kernels; it holds a :class:`KernelOperator`, in
the spirit of LIBSVM's ``QMatrix`` (Chang and Lin, ACM TIST 2011, section 4: the solver sees
``get_Q`` and ``get_QD`` only). Two methods are required of a subclass:

- :meth:`KernelOperator.rows`: rows of some base kernels, shape ``(k, len(indices), n)``;
- :meth:`KernelOperator.diagonal`: ``K_k[i, i]`` of every kernel, shape ``(m, n)``.

Everything a solver asks of the kernels is built on those two, here, once:

- the combined kernel ``K(d) = sum_k d_k K_k`` (ALGORITHMS.md section 1): its rows
  (:meth:`~KernelOperator.combined_rows`), diagonal, products ``K(d) v`` and blocks, and a
  row source of it for the SMO core (:meth:`~KernelOperator.kernel`);
- the per-kernel terms of the MKL gradients: the quadratic terms ``v' K_k v``
  (:meth:`~KernelOperator.kernel_gradient`), the products ``K_k v``
  (:meth:`~KernelOperator.products`) and ``K_k[rows] v``.

Each reads the rows of the support of ``v`` only (``K_k`` is symmetric), so a solver costs
``O(m n)`` memory beyond the rows it reads. A subclass overrides any of them with a faster
form (a stack in memory, rows computed from X through a cache, blocks summed on Dask workers)
and declares its optional fast paths in :class:`Capabilities`, which a solver reads once,
when it starts (:func:`require`), never by probing. ``docs/extending.md`` shows a complete
operator written by a user.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from mklearn._sizes import MB, SUPPORT_BLOCK_BYTES
from mklearn.kernels.capabilities import Capabilities
from mklearn.kernels.row_sources import CombinedRows, DenseRows, combined_diagonal

__all__ = ["Capabilities", "KernelOperator", "KernelSelection", "PointSelection",
           "check_operator", "prepare", "require"]

CHECK_ROWS = 8  # rows :meth:`KernelOperator.check` reads: a cheap test, not a proof
CHECK_RTOL = 1e-6  # relative disagreement the check tolerates (float32 kernels round at 6e-8)
DEFAULT_CACHE_MB = 200.0  # rows of K(d) a plain operator's row source keeps (LIBSVM's -m)
DENSE_MAX_MB = 32.0  # an SVM's K(d) from rows computed at once up to this size (2,048 points)
COMBINED_BLOCK_BYTES = 64 * MB  # base-kernel rows a block of combined rows may read at once


def _operator_classes() -> list[type]:
    """Every subclass of :class:`KernelOperator` imported so far (for messages)."""
    found, todo = [], list(KernelOperator.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


class NotAnOperatorError(ValueError, TypeError):
    """Kernels given to a solver in a form it cannot read (not a :class:`KernelOperator`)."""


def check_operator(operator: Any, solver: str) -> None:
    """Check that ``operator`` is a :class:`KernelOperator` (what every solver reads).

    Raises
    ------
    NotAnOperatorError
        A ValueError and a TypeError, if it is not: the message names the solver, what was
        given and how to wrap it.
    """
    if not isinstance(operator, KernelOperator):
        raise NotAnOperatorError(
            f"solver {solver!r} reads kernels through a KernelOperator (a column provider "
            f"of rows and diagonal); "
            f"got {type(operator).__name__}: wrap precomputed kernels as "
            "mklearn.kernels.StackColumns(stack), or subclass mklearn.kernels.KernelOperator "
            "(docs/extending.md)")


def prepare(kernels: Any, solver: str) -> None:
    """What every solver does first with its kernels: a user's operator (capability
    ``trusted`` off) runs its cheap :meth:`KernelOperator.check`.

    Raises
    ------
    ValueError
        From the check, naming the kernel and entries that disagree.
    """
    if isinstance(kernels, KernelOperator) and not kernels.capabilities.trusted:
        kernels.check()


def require(operator: KernelOperator, capability: str, solver: str, hint: str = "") -> None:
    """Check, once and before any work, that ``operator`` declares ``capability`` (``hint``:
    what to do, appended to the message).

    Raises
    ------
    ValueError
        If it does not: the message names the solver, the capability and the operators
        that have it.
    """
    if getattr(operator.capabilities, capability):
        return
    having = sorted(cls.__name__ for cls in _operator_classes()
                    if getattr(cls.capabilities, capability, False))
    raise ValueError(
        f"solver {solver!r} needs kernels with the capability {capability!r}, which "
        f"{type(operator).__name__} does not declare; operators that have it: "
        f"{', '.join(having) or 'none'}" + (f". {hint}" if hint else ""))


class KernelOperator(ABC):
    """Base kernels ``K_1`` to ``K_m`` on n points, as a solver reads them.

    Subclasses set ``n_samples`` and ``n_kernels`` and implement :meth:`rows` and
    :meth:`diagonal`; every other method has a default built on those two, which a
    subclass may override with a faster form. Optional fast paths are declared in the class
    attribute :attr:`capabilities`.

    Attributes
    ----------
    n_samples : int
        Points n (every kernel is n x n).
    n_kernels : int
        Base kernels m.
    capabilities : Capabilities
        The optional methods it implements.
    value_dtype : numpy.dtype
        Precision of its values (float32 halves a row cache; rows are returned in float64).
    rows_per_call : int
        Rows a row cache should ask for in one call of :meth:`rows` (above 1 when each call
        has a fixed cost, as on remote workers).
    name : str
        How ``K(d)`` depends on d: "sum" for every operator of this module.
    feature_rows : FeatureRows or None
        Rows of low-rank features kept outside the operator (capability ``feature_rows``,
        :mod:`mklearn.linear.rows`); None for the others.
    """

    capabilities: ClassVar[Capabilities] = Capabilities()
    value_dtype: ClassVar[np.dtype] = np.dtype(np.float64)
    rows_per_call: ClassVar[int] = 1
    name: ClassVar[str] = "sum"
    feature_rows: Any = None
    n_samples: int
    n_kernels: int

    @property
    def kernel_names(self) -> list[str]:
        """Names of the base kernels (``kernel[k]`` unless set)."""
        names = self.__dict__.get("_kernel_names")
        return list(names) if names is not None else [f"kernel[{k}]"
                                                      for k in range(self.n_kernels)]

    @kernel_names.setter
    def kernel_names(self, names: list[str]) -> None:
        self.__dict__["_kernel_names"] = list(names)

    @property
    def linear(self) -> bool:
        """``K(d)`` is linear in d (declared in :attr:`capabilities`)."""
        return self.capabilities.linear

    @property
    def stack_passes(self) -> float | None:
        """Passes over a stored ``(m, n, n)`` stack of base kernels read so far (values read
        over ``m n^2``, the check's sum of the kernels included); None when the operator
        holds no such stack (kernels computed on demand, columns, low-rank features)."""
        return None

    # ----- the two required methods -------------------------------------------------------

    @abstractmethod
    def rows(self, indices: Any, kernels: Any = None) -> np.ndarray:
        """Rows ``indices`` of the kernels ``kernels`` (all by default).

        Returns
        -------
        ndarray of shape (len(kernels), len(indices), n_samples), float64
            ``out[t, a, :] = K_{kernels[t]}[indices[a], :]``.
        """

    @abstractmethod
    def diagonal(self) -> np.ndarray:
        """``K_k[i, i]`` of every kernel: float64 of shape (n_kernels, n_samples)."""

    # ----- the combined kernel K(d) -------------------------------------------------------

    def combined_rows(self, indices: Any, kernels: Any, weights: Any, restrict: bool = False,
                      out: np.ndarray | None = None) -> np.ndarray:
        """``sum_t weights[t] K_{kernels[t]}[indices, :]``: float64 of shape
        (len(indices), n), or (len(indices), len(indices)) with ``restrict`` (columns
        ``indices`` only); written into ``out`` (C-contiguous) when given."""
        indices = np.atleast_1d(np.asarray(indices, dtype=np.int64))
        weights = np.asarray(weights, dtype=np.float64)
        combined = np.tensordot(weights, self.rows(indices, np.asarray(kernels, np.int64)),
                                axes=(0, 0))
        if restrict:
            combined = combined[:, indices]
        if out is None:
            return combined
        out[...] = combined
        return out

    def combined_diagonal(self, kernels: Any, weights: Any) -> np.ndarray:
        """``sum_t weights[t] diag K_{kernels[t]}``, float64 of shape (n,)."""
        return combined_diagonal(self.diagonal(), np.asarray(kernels, np.int64),
                                 np.asarray(weights, dtype=np.float64))

    def combined_products(self, v: np.ndarray, kernels: Any, weights: Any) -> np.ndarray:
        """``sum_t weights[t] K_{kernels[t]} v`` over the support of v, shape (n,)."""
        return np.asarray(weights, dtype=np.float64) @ self.products(v, kernels)

    def combined_block(self, indices: Any, kernels: Any, weights: Any) -> np.ndarray:
        """``K(d)[indices][:, indices]`` for the weights ``weights`` of ``kernels``."""
        return self.combined_rows(indices, kernels, weights, restrict=True)

    def combined_rows_per_call(self, n_active: int) -> int:
        """Rows of ``K(d)`` worth computing per call (more than one when a call costs a
        round trip, as on Dask workers)."""
        return 1

    def combined_row_maker(self, kernels: Any, weights: Any) -> Any:
        """``fill(indices, out) -> bool`` writing rows of ``K(d)`` (capability
        ``combined_row_maker``); None here: :meth:`combined_rows` serves them."""
        return None

    def kernel(self, d: np.ndarray) -> Any:
        """A row source of ``K(d)`` for the SMO core, its rows combined over the kernels
        with ``d_k > 0`` and kept in an LRU cache of ``DEFAULT_CACHE_MB`` (``@ v`` and
        ``submatrix`` work on it)."""
        cache = max(DEFAULT_CACHE_MB, 2 * 8.0 * self.n_samples / MB)
        return CombinedRows(self, np.asarray(d, dtype=np.float64), cache)

    def svm_kernel(self, d: np.ndarray, cache_size: float) -> Any:
        """A row source of ``K(d)`` for one SVM solve with ``cache_size`` MB of rows: dense
        when the ``8 n^2`` bytes of ``K(d)`` fit in ``cache_size`` and ``DENSE_MAX_MB`` MB
        (computed in blocks of rows: one call per block, not one per row as a cache miss
        is); else rows combined over the kernels with ``d_k > 0`` on demand, in an LRU cache
        of ``cache_size`` MB (an SVM reads little more than its support vectors' rows). An
        operator holding its kernels in memory overrides it with :meth:`kernel`."""
        d = np.asarray(d, dtype=np.float64)
        n = self.n_samples
        if 8.0 * n * n <= min(cache_size, DENSE_MAX_MB) * MB:
            return DenseRows(self._dense_combined(d))
        return CombinedRows(self, d, max(cache_size, 2 * 8.0 * n / MB))

    def _dense_combined(self, d: np.ndarray) -> np.ndarray:
        """``K(d)`` of shape (n, n) from :meth:`combined_rows` in blocks of rows whose
        per-kernel rows take about ``COMBINED_BLOCK_BYTES``."""
        n, kernels = self.n_samples, np.flatnonzero(d > 0)
        step = max(1, int(COMBINED_BLOCK_BYTES // (8 * n * kernels.size)))
        out = np.empty((n, n))
        for lo in range(0, n, step):
            block = np.arange(lo, min(n, lo + step))
            out[block] = self.combined_rows(block, kernels, d[kernels])
        return out

    def initial_weights(self) -> np.ndarray:
        """Uniform ``1 / m``."""
        return np.full(self.n_kernels, 1.0 / self.n_kernels)

    def kernel_subset(self, kernels: Any) -> KernelOperator:
        """The kernels ``kernels`` only, in that order: an operator of ``len(kernels)``
        kernels (here a view, :class:`KernelSelection`)."""
        return KernelSelection(self, kernels)

    def point_subset(self, indices: Any) -> KernelOperator:
        """The kernels on the points ``indices`` only: an operator of ``len(indices)``
        points (here rows read whole and sliced, :class:`PointSelection`; an operator that
        can compute or copy them on those points overrides it)."""
        return PointSelection(self, indices)

    # ----- per-kernel terms of the gradients ----------------------------------------------

    def products(self, v: np.ndarray, kernels: Any = None) -> np.ndarray:
        """``K_k v`` for ``kernels`` (all by default), reading the rows of the support of
        ``v`` only, in blocks of about ``SUPPORT_BLOCK_BYTES``: float64 of shape
        (len(kernels), n)."""
        v = np.asarray(v, dtype=np.float64)
        m = self.n_kernels if kernels is None else len(kernels)
        out = np.zeros((m, self.n_samples))
        support = np.flatnonzero(v)
        block = max(1, SUPPORT_BLOCK_BYTES // max(8 * m * self.n_samples, 1))
        for start in range(0, support.size, block):
            rows = support[start:start + block]
            out += np.einsum("kbn,b->kn", self.rows(rows, kernels), v[rows])
        return out

    def support_products(self, support: np.ndarray, v_s: np.ndarray, kernels: Any = None):
        """``K_k v`` from a support and its coefficients by a faster route than rows, or
        None (here: none)."""
        return None

    def kernel_gradient(self, d: np.ndarray, v: np.ndarray, kernels: Any = None) -> np.ndarray:
        """The quadratic terms ``g_k = v' K_k v`` (``v' (dK/dd_k) v`` of a sum), for every
        kernel or for ``kernels``: shape (m,) or (len(kernels),)."""
        v = np.asarray(v, dtype=np.float64)
        return self.products(v, kernels) @ v

    def gradient_and_products(self, v: np.ndarray, kernels: Any = None) -> Any:
        """``(g, P)``: ``g_k = v' K_k v`` and ``P[t] = K_k v`` in one pass over the
        support's rows (or None when an operator offers the terms only, capability
        ``support_products`` off)."""
        products = self.products(np.asarray(v, dtype=np.float64), kernels)
        return products @ v, products

    def kernel_rows_times(self, kernels: Any, rows: Any, v: np.ndarray) -> np.ndarray:
        """``K_k[rows] @ v`` for each k in ``kernels``: shape (len(kernels), len(rows))."""
        kernels = np.asarray(kernels, dtype=np.int64)
        rows = np.atleast_1d(np.asarray(rows, dtype=np.int64))
        return self.rows(rows, kernels) @ np.asarray(v, dtype=np.float64)

    def combined_rows_times(self, d: np.ndarray, rows: Any, v: np.ndarray) -> np.ndarray:
        """``K(d)[rows] @ v`` (``sum_k d_k K_k[rows] @ v`` over the kernels of non-zero
        weight): shape (len(rows),)."""
        d = np.asarray(d, dtype=np.float64)
        active = np.flatnonzero(d)
        if not active.size:
            return np.zeros(np.atleast_1d(rows).size)
        return d[active] @ self.kernel_rows_times(active, rows, v)

    # ----- memory and checks --------------------------------------------------------------

    def memory_bytes(self) -> int:
        """Bytes a solver's state needs beside the rows it reads: ``O(m n)`` (per-kernel
        outputs, diagonals and products), float64."""
        return 4 * 8 * self.n_samples * self.n_kernels

    def check(self, n_rows: int = CHECK_ROWS) -> None:
        """A cheap test of the operator's promises, before a solve: ``n_rows`` rows of every
        kernel are finite, agree with :meth:`diagonal` and are symmetric among themselves.

        Raises
        ------
        ValueError
            Naming the kernel and the entries that disagree, and what to fix.
        """
        n, m = self.n_samples, self.n_kernels
        diagonal = np.asarray(self.diagonal(), dtype=np.float64)
        if diagonal.shape != (m, n):
            raise ValueError(f"{type(self).__name__}.diagonal() must have shape ({m}, {n}) "
                             f"(n_kernels, n_samples); got {diagonal.shape}")
        picked = np.unique(np.linspace(0, n - 1, min(n, n_rows)).astype(np.int64))
        rows = np.asarray(self.rows(picked), dtype=np.float64)
        if rows.shape != (m, picked.size, n):
            raise ValueError(f"{type(self).__name__}.rows(indices) must have shape "
                             f"(n_kernels, len(indices), n_samples) = ({m}, {picked.size}, "
                             f"{n}); got {rows.shape}")
        if not (np.isfinite(rows).all() and np.isfinite(diagonal).all()):
            raise ValueError(f"{type(self).__name__} gives non-finite kernel values: every "
                             "row and diagonal entry must be finite")
        block = rows[:, :, picked]
        scale = CHECK_RTOL * max(1.0, float(np.abs(block).max()))
        own = block[:, np.arange(picked.size), np.arange(picked.size)]
        _first_disagreement(own, diagonal[:, picked], scale, picked, self,
                            "row {i} of kernel {k} has K[{i}, {i}] = {a:.6g} but diagonal() "
                            "gives {b:.6g}: rows() and diagonal() must describe one kernel")
        _first_disagreement(block, block.transpose(0, 2, 1), scale, picked, self,
                            "kernel {k} is not symmetric: K[{i}, {j}] = {a:.6g} but K[{j}, "
                            "{i}] = {b:.6g}; a kernel must be symmetric")


def _first_disagreement(a: np.ndarray, b: np.ndarray, scale: float, picked: np.ndarray,
                        operator: KernelOperator, message: str) -> None:
    """ValueError formatted from ``message`` at the first entry where ``a`` and ``b``
    differ by more than ``scale``."""
    bad = np.argwhere(np.abs(a - b) > scale)
    if bad.size == 0:
        return
    k, *at = bad[0]
    i = int(picked[at[0]])
    j = int(picked[at[1]]) if len(at) > 1 else i
    raise ValueError(f"{type(operator).__name__}: " + message.format(
        k=int(k), i=i, j=j, a=float(a[tuple(bad[0])]), b=float(b[tuple(bad[0])])))



class KernelSelection(KernelOperator):
    """Some kernels of an operator, in a given order: its rows and diagonal of those
    kernels (the default :meth:`KernelOperator.kernel_subset`)."""

    def __init__(self, operator: KernelOperator, kernels: Any) -> None:
        self.operator = operator
        self.kernels = np.asarray(kernels, dtype=np.int64)
        self.n_samples, self.n_kernels = operator.n_samples, self.kernels.size
        self.value_dtype = operator.value_dtype
        self.capabilities = Capabilities(trusted=operator.capabilities.trusted)

    def rows(self, indices: Any, kernels: Any = None) -> np.ndarray:
        picked = self.kernels if kernels is None else self.kernels[np.asarray(kernels)]
        return self.operator.rows(indices, picked)

    def diagonal(self) -> np.ndarray:
        return np.asarray(self.operator.diagonal(), dtype=np.float64)[self.kernels]


class PointSelection(KernelOperator):
    """The kernels of an operator on the points ``indices`` only (rows read whole, then
    sliced): the default :meth:`KernelOperator.point_subset`."""

    def __init__(self, operator: KernelOperator, indices: Any) -> None:
        self.operator, self.points = operator, np.asarray(indices, dtype=np.int64)
        self.n_samples, self.n_kernels = self.points.size, operator.n_kernels
        self.value_dtype = operator.value_dtype

    def rows(self, indices: Any, kernels: Any = None) -> np.ndarray:
        picked = self.points[np.atleast_1d(np.asarray(indices, dtype=np.int64))]
        return self.operator.rows(picked, kernels)[:, :, self.points]

    def diagonal(self) -> np.ndarray:
        return np.asarray(self.operator.diagonal(), dtype=np.float64)[:, self.points]
