"""Multi-view input: several feature matrices (views, descriptors) of the same samples.

An estimator given a list or dict of 2-D arrays concatenates them column-wise and builds its
base kernels per view: each kernel spec (or recipe) is applied to each view's columns, and the
kernels are named after their view, e.g. ``view 'fou': rbf(sigma=2)``. Grouping the kernels by
view gives one group per descriptor for group MKL (Nath et al., NIPS 2009, section 4).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from mklearn.groups import KernelGroups, check_groups
from mklearn.kernels.bank import check_samples
from mklearn.kernels.checks import is_views
from mklearn.kernels.recipes import resolve_kernels

GROUP_RECIPES = ("view", "features")


class Views:
    """Names and column spans of the views seen in ``fit``.

    Parameters
    ----------
    names : list of str
        View names (dict keys, or ``"0", "1", ...`` for a list).
    n_columns : list of int
        Columns of each view.
    keyed : bool
        Whether the views came as a dict (prediction input must then be a dict too).
    """

    def __init__(self, names, n_columns, keyed):
        self.names = list(names)
        self.n_columns = list(n_columns)
        self.keyed = keyed
        self.offsets = np.concatenate([[0], np.cumsum(self.n_columns)]).astype(int)

    @classmethod
    def from_fit(cls, X) -> tuple[Views, np.ndarray]:
        """Validate training views; return them and the concatenated ``(n, sum D_v)`` array."""
        names, arrays = _split(X)
        views = cls(names, [a.shape[1] for a in arrays], isinstance(X, Mapping))
        return views, np.hstack(arrays)

    def concatenate(self, X) -> np.ndarray:
        """Validate prediction views against the training ones; return them concatenated.

        Raises
        ------
        ValueError
            If X is not multi-view input, its view names or count differ from ``fit``, a view
            has another number of columns, or the views have different numbers of rows.
        """
        if not is_views(X):
            raise ValueError(
                f"this model was fitted on {len(self.names)} views {self.names}; pass the same "
                "views (a list or dict of 2-D arrays), not a single array"
            )
        names, arrays = _split(X)
        if names != self.names:
            raise ValueError(f"views {names} differ from the views seen in fit, {self.names}")
        for name, array, expected in zip(names, arrays, self.n_columns, strict=True):
            if array.shape[1] != expected:
                raise ValueError(
                    f"view '{name}' has {array.shape[1]} columns but had {expected} in fit"
                )
        return np.hstack(arrays)

    def kernel_specs(self, kernels, X):
        """Base kernels of every view on the concatenated training data X.

        ``kernels`` is applied to each view (a dict gives each view its own); feature indices
        in specs are relative to the view. Returns (specs on global columns, standardize,
        readable names, view index of each kernel).
        """
        if isinstance(kernels, Mapping):
            missing = [name for name in self.names if name not in kernels]
            if missing:
                raise ValueError(f"kernels has no entry for view(s) {missing}")
        all_specs, names, codes, flags = [], [], [], set()
        for v, name in enumerate(self.names):
            start, stop = self.offsets[v], self.offsets[v + 1]
            chosen = kernels[name] if isinstance(kernels, Mapping) else kernels
            specs, standardize = resolve_kernels(chosen, X[:, start:stop])
            flags.add(standardize)
            for spec in specs:
                local = spec.features
                columns = range(start, stop) if local is None else [start + c for c in local]
                all_specs.append(dataclasses.replace(spec, features=tuple(columns)))
                label = spec.name[: -len(" on all")] if local is None else spec.name
                names.append(f"view '{name}': {label}")
                codes.append(v)
        if len(flags) > 1:
            raise ValueError(
                "the views' kernels disagree on standardisation (a recipe standardises, "
                "explicit specs do not); use recipes for every view or specs for every view"
            )
        return all_specs, flags.pop(), names, np.array(codes)


def _split(X):
    """(names, validated float64 arrays) of multi-view input; same number of rows in each."""
    if isinstance(X, Mapping):
        names, arrays = [str(k) for k in X], list(X.values())
    else:
        names, arrays = [str(i) for i in range(len(X))], list(X)
    if not arrays:
        raise ValueError("multi-view input needs at least one view")
    arrays = [check_samples(a, name=f"view '{n}'") for n, a in zip(names, arrays, strict=True)]
    rows = arrays[0].shape[0]
    for name, array in zip(names[1:], arrays[1:], strict=True):
        if array.shape[0] != rows:
            raise ValueError(
                f"view '{name}' has {array.shape[0]} rows but view '{names[0]}' has {rows}; "
                "every view needs one row per sample, in the same order"
            )
    return names, arrays


def resolve_groups(groups, n_kernels, *, views=None, view_codes=None, specs=None):
    """The kernel groups an estimator's ``groups=`` describes, or None.

    Parameters
    ----------
    groups : None, "view", "features", array-like of shape (n_kernels,) or list of lists
        "view": one group per view (multi-view input); "features": one group per feature
        block (kernels on the same columns, e.g. SimpleMKL's per-feature families); otherwise
        labels or a partition (:func:`mklearn.groups.check_groups`). None: by view for
        multi-view input, else no groups.
    n_kernels : int
    views : Views, optional
    view_codes : ndarray of shape (n_kernels,), optional
        View index of each kernel.
    specs : list of KernelSpec, optional
        The kernels (None when precomputed).

    Returns
    -------
    KernelGroups or None

    Raises
    ------
    ValueError
        If a recipe does not apply to the input, or the labels are invalid.
    """
    if groups is None:
        groups = "view" if views is not None else None
    if groups is None:
        return None
    if isinstance(groups, str):
        if groups == "view":
            if views is None:
                raise ValueError(
                    "groups='view' needs multi-view input: fit(X_views, y) with a list or dict "
                    "of 2-D arrays"
                )
            return KernelGroups(view_codes, [f"view '{name}'" for name in views.names])
        if groups == "features":
            if specs is None:
                raise ValueError(
                    "groups='features' needs kernels built from X; with kernels='precomputed' "
                    "give one group label per kernel"
                )
            keys = [spec.features for spec in specs]
            unique = list(dict.fromkeys(keys))
            codes = np.array([unique.index(key) for key in keys])
            return KernelGroups(codes, [_block_name(key, views) for key in unique])
        raise ValueError(f"unknown groups recipe {groups!r}; choose one of {GROUP_RECIPES}")
    return check_groups(groups, n_kernels)


def _block_name(columns, views):
    if columns is None:
        return "all"
    if views is None:
        return "x[" + ",".join(str(c) for c in columns) + "]"
    v = int(np.searchsorted(views.offsets, columns[0], side="right") - 1)
    start, stop = views.offsets[v], views.offsets[v + 1]
    if tuple(columns) == tuple(range(start, stop)):
        return f"view '{views.names[v]}'"
    return f"view '{views.names[v]}' x[" + ",".join(str(c - start) for c in columns) + "]"
