"""Groups of base kernels (e.g. one group per feature descriptor or view) for group MKL.

A grouping assigns each of the ``m`` base kernels to one of ``G`` groups. It is given either as
an array of length ``m`` of group labels (ints or strings), or as a partition: a list of ``G``
lists of kernel indices. :func:`check_groups` validates either form and returns a
:class:`KernelGroups`, which also provides the per-group reductions the mixed-norm solver
needs (sums, maxima, and normalisation of log-weights onto the product of simplices).
"""

from __future__ import annotations

import numbers

import numpy as np


class KernelGroups:
    """A validated assignment of ``m`` kernels to ``G`` non-empty groups.

    Parameters
    ----------
    codes : ndarray of shape (m,)
        Group index in ``0..G-1`` of each kernel; every index occurs.
    names : list of str
        Name of each group, length G.

    Attributes
    ----------
    codes, names, n_groups, sizes (ndarray of shape (G,), kernels per group)
    """

    def __init__(self, codes: np.ndarray, names: list[str]):
        self.codes = np.asarray(codes, dtype=np.int64)
        self.names = list(names)
        self.n_groups = len(self.names)
        self.sizes = np.bincount(self.codes, minlength=self.n_groups)
        self._order = np.argsort(self.codes, kind="stable")
        self._starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])

    @classmethod
    def single(cls, n_kernels: int) -> KernelGroups:
        """Every kernel in one group (ordinary l1-MKL)."""
        return cls(np.zeros(n_kernels, dtype=np.int64), ["all"])

    @property
    def n_kernels(self) -> int:
        return self.codes.size

    def sum(self, x: np.ndarray) -> np.ndarray:
        """Per-group sums of ``x`` (shape (m,)), shape (G,)."""
        return np.bincount(self.codes, weights=x, minlength=self.n_groups)

    def max(self, x: np.ndarray) -> np.ndarray:
        """Per-group maxima of ``x`` (shape (m,)), shape (G,)."""
        return np.maximum.reduceat(x[self._order], self._starts)

    def normalize_log(self, theta: np.ndarray) -> np.ndarray:
        """``gamma_jk = exp(theta_jk) / sum_l exp(theta_jl)``: a point of the product of simplices.

        Computed stably (the group maximum is subtracted first); weights that underflow are 0.
        """
        shifted = theta - self.max(theta)[self.codes]
        weights = np.exp(shifted)
        return weights / self.sum(weights)[self.codes]


def check_groups(groups, n_kernels: int) -> KernelGroups:
    """Validate a grouping of ``n_kernels`` kernels.

    Parameters
    ----------
    groups : array-like of shape (n_kernels,), or list of lists of int
        Group label of each kernel (ints or strings; integer labels must be ``0..G-1`` with
        every value used), or a partition of ``range(n_kernels)`` into non-empty lists.
    n_kernels : int
        Number of base kernels.

    Returns
    -------
    KernelGroups
        Groups in the order of their (sorted) labels, or of the partition.

    Raises
    ------
    ValueError
        If the labels have the wrong length, integer labels skip a value (an empty group), a
        list of the partition is empty, or a kernel is in no group or in several; the message
        names the offending group or kernel.
    """
    if _is_partition(groups):
        return _from_partition([list(part) for part in groups], n_kernels)
    labels = np.asarray(groups)
    if labels.ndim != 1:
        raise ValueError(
            "groups must be a 1-D array with one group label per kernel, or a list of lists "
            f"of kernel indices; got an array of shape {labels.shape}"
        )
    if labels.size != n_kernels:
        raise ValueError(
            f"groups has {labels.size} labels but there are {n_kernels} base kernels; give one "
            "group label per kernel, in the order of the kernels"
        )
    if labels.dtype.kind == "b" or labels.dtype.kind not in "iuUSO":
        raise ValueError(f"groups must hold int or str labels; got dtype {labels.dtype}")
    if labels.dtype.kind in "iu":
        used = np.unique(labels)
        expected = np.arange(used.max() + 1) if used.size else used
        if used.min() < 0:
            raise ValueError(f"integer group labels must be >= 0; got {used.min()}")
        missing = np.setdiff1d(expected, used)
        if missing.size:
            raise ValueError(
                f"group {missing[0]} is empty: integer group labels must be 0..G-1 with every "
                f"label used (labels found: {used.tolist()}); renumber the groups"
            )
        return KernelGroups(labels.astype(np.int64), [str(v) for v in expected])
    names, codes = np.unique(labels.astype(str), return_inverse=True)
    return KernelGroups(codes, [str(v) for v in names])


def _is_partition(groups) -> bool:
    return (
        isinstance(groups, (list, tuple))
        and len(groups) > 0
        and all(isinstance(part, (list, tuple, np.ndarray)) for part in groups)
    )


def _from_partition(parts: list[list], n_kernels: int) -> KernelGroups:
    codes = np.full(n_kernels, -1, dtype=np.int64)
    for j, part in enumerate(parts):
        if len(part) == 0:
            raise ValueError(f"group {j} of the partition is empty; every group needs a kernel")
        for k in part:
            if isinstance(k, bool) or not isinstance(k, (numbers.Integral, np.integer)):
                raise ValueError(f"group {j} holds {k!r}; kernel indices must be ints")
            if not 0 <= k < n_kernels:
                raise ValueError(
                    f"group {j} holds kernel {k}, outside 0..{n_kernels - 1} "
                    f"({n_kernels} base kernels)"
                )
            if codes[k] >= 0:
                raise ValueError(
                    f"kernel {k} is in groups {codes[k]} and {j}; groups must not overlap"
                )
            codes[k] = j
    orphans = np.flatnonzero(codes < 0)
    if orphans.size:
        raise ValueError(
            f"kernel {orphans[0]} is in no group ({orphans.size} kernels unassigned); the "
            "partition must cover every kernel"
        )
    return KernelGroups(codes, [str(j) for j in range(len(parts))])
