"""Plots of learned kernel weights (matplotlib, the optional extra ``mklearn[plot]``)."""

from __future__ import annotations

import numpy as np


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "mklearn.plotting needs matplotlib; install it with `pip install mklearn[plot]` "
            "(or `pip install matplotlib`)"
        ) from exc
    return plt


def plot_kernel_weights(weights, names=None, *, ax=None, top=None, title=None):
    """Bar chart of kernel weights, e.g. the per-feature widths of a product kernel.

    Parameters
    ----------
    weights : array-like of shape (m,)
        Kernel weights (``MKLClassifier.kernel_weights_`` of a binary model, or one row).
    names : list of str, optional
        Label of each weight (``kernel_names_``); default the indices.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure.
    top : int, optional
        Show only the ``top`` largest weights, largest first; default all, in order.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        If ``weights`` is not one-dimensional (pick a class row of a multi-class model) or
        ``names`` has another length.
    ImportError
        If matplotlib is not installed.
    """
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 1:
        raise ValueError(
            f"weights must be one-dimensional, got shape {weights.shape}; for a multi-class "
            "model pass one row, e.g. kernel_weights_[0]"
        )
    names = [str(k) for k in range(weights.size)] if names is None else list(names)
    if len(names) != weights.size:
        raise ValueError(f"{len(names)} names for {weights.size} weights; give one name each")
    order = np.arange(weights.size) if top is None else np.argsort(-weights)[:top]
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(max(4.0, 0.18 * order.size + 1.5), 3.0))
    selected = weights[order] > 0
    positions = np.arange(order.size)
    ax.bar(positions[selected], weights[order][selected], color="tab:blue")
    ax.plot(positions[~selected], np.zeros(int((~selected).sum())), "x", color="gray",
            label="weight 0 (dropped)")
    if not selected.all():
        ax.legend(loc="upper left", fontsize=7)
    ax.set_xticks(positions)
    ax.set_xticklabels([names[k] for k in order], rotation=90, fontsize=7)
    ax.set_ylabel("weight")
    ax.set_title(title or f"{int(np.count_nonzero(weights))} of {weights.size} weights non-zero")
    ax.figure.tight_layout()
    return ax
