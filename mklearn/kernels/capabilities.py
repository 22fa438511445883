"""What a kernel operator declares it can do: :class:`Capabilities`.

The optional fast paths of a :class:`~mklearn.kernels.base.KernelOperator` (and of the row
sources and parameterisations that share its protocol), read by a solver once, when it
starts (:func:`~mklearn.kernels.base.require`), never by probing. Re-exported by
:mod:`mklearn.kernels.base` beside the operator and by :mod:`mklearn.extending` for
extensions.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["Capabilities"]


@dataclass(frozen=True)
class Capabilities:
    """The optional fast paths an operator declares; each names the methods it enables.

    Attributes
    ----------
    linear : bool
        ``K(d) = sum_k d_k K_k`` (the duality gap of ALGORITHMS.md section 1 applies).
    fills_out : bool
        ``rows(indices, kernels, out=)`` writes into a given array (a cache's slots).
    row_filler : bool
        ``row_filler()``: fills one cached row without the checks of ``rows``.
    sums_rows : bool
        ``combined_rows`` sums the kernels as it evaluates them, never holding their rows
        (cheaper than :meth:`KernelOperator.rows` of every kernel).
    combined_row_maker : bool
        ``combined_row_maker(kernels, weights)``: fills rows of ``K(d)`` itself.
    base_tables : bool
        ``base_tables()``: RBF values by table on kept distance rows (SMO-MKL's step).
    distance_rows : bool
        ``distance_row_bytes()``, ``keep_distance_rows(mb)``, ``kept_distance_bytes()``.
    restricted : bool
        ``restricted(indices)``: the same kernels on some points only (coarse starts).
    kernel_subset : bool
        ``kernel_subset(kernels)`` makes an operator of its own, small to send to another
        process (off: a view that holds the whole operator).
    row_dots : bool
        ``row_dots(indices, kernels, V)``: ``K_k[indices] V'`` without storing the rows.
    linadd : bool
        ``linadd()``: explicit sparse feature maps (SILP's linadd decomposition).
    mwu_blocks : bool
        ``mwu_blocks(y, inv_trace, valid, cache_size)``: its own MWUMKL blocks (on Dask).
    stack : bool
        The base kernels sit in memory as one stack: ``kernel_rows(d, expected_rows)``
        and ``cheap_terms(support_size)`` (rows of ``K(d)`` combined on demand).
    support_products : bool
        ``gradient_and_products`` returns the products ``K_k v`` (else it may return None).
    feature_blocks : bool
        ``K_k = Phi_k Phi_k'`` held as ``features`` (n, R) with block ``starts`` and
        ``squared_norms`` (:class:`~mklearn.kernels.low_rank.LowRankKernels`): the solvers
        in feature space (:mod:`mklearn.solvers.feature_space`) read these.
    feature_rows : bool
        ``K_k = Phi_k Phi_k'`` with rows of ``Phi`` the feature-space core reads
        (:mod:`mklearn.linear.rows`): the operator's ``feature_rows`` (partitions on Dask
        workers), or its ``features`` in memory where that is None. SPG-GMKL, mirror
        descent and the SVM at fixed weights need this only; the others read ``features``.
    thread_safe : bool
        Several solves may read it at once (no shared cache written on misses).
    trusted : bool
        Its rows and diagonal agree by construction (mklearn's own operators); off, a
        solver first runs the operator's cheap ``check()`` (a user's operator).
    """

    linear: bool = True
    fills_out: bool = False
    row_filler: bool = False
    sums_rows: bool = False
    combined_row_maker: bool = False
    base_tables: bool = False
    distance_rows: bool = False
    restricted: bool = False
    kernel_subset: bool = False
    row_dots: bool = False
    linadd: bool = False
    mwu_blocks: bool = False
    stack: bool = False
    support_products: bool = True
    feature_blocks: bool = False
    feature_rows: bool = False
    thread_safe: bool = True
    trusted: bool = False

    def declared(self) -> list[str]:
        """Names of the capabilities that are on."""
        return [f.name for f in fields(self) if getattr(self, f.name)]
