"""Plots of learned kernel weights and of convergence (matplotlib, the extra ``mklearn[plot]``).

- :func:`plot_kernel_weights`: the ``top`` largest weights as horizontal bars, named.
- :func:`plot_weight_map`: a heat map of the weights with one row per feature block ("all",
  then each feature) and one column per kernel parameter (e.g. each RBF width and polynomial
  degree of the SimpleMKL family), as in the papers' figures of selected kernels.
- :func:`plot_convergence`: objective and relative duality gap against iterations and
  seconds, from ``history_``.
- :func:`save_plots`: all that apply to a fitted model, as PNG files in a directory (what
  ``mklearn fit --plot DIR`` writes).
"""

from __future__ import annotations

import os

import numpy as np

TOP = 20  # bars drawn by default


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "mklearn.plotting needs matplotlib; install it with `pip install mklearn[plot]` "
            "(or `pip install matplotlib`)"
        ) from exc
    return plt


def plot_kernel_weights(weights, names=None, *, ax=None, top=TOP, title=None):
    """Horizontal bar chart of the ``top`` largest kernel weights, largest at the top.

    Parameters
    ----------
    weights : array-like of shape (m,)
        Kernel weights (``kernel_weights_`` of a binary model, or one row of a multiclass one).
    names : list of str, optional
        Label of each weight (``kernel_names_``); default the indices.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure, 7 inches wide and 0.28 inch per bar.
    top : int or None, default 20
        Number of largest weights shown; None shows all (in kernel order).
    title : str, optional
        Default: how many weights are non-zero and how many are shown.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        If ``weights`` is not one-dimensional (pick a class row of a multiclass model),
        ``names`` has another length, or ``top`` < 1.
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
    if top is not None and top < 1:
        raise ValueError(f"top must be >= 1 or None, got {top}")
    order = np.arange(weights.size) if top is None else np.argsort(-weights, kind="stable")[:top]
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 1.2 + 0.28 * order.size))
    positions = np.arange(order.size)[::-1]  # first bar at the top
    kept = weights[order] > 0
    ax.barh(positions[kept], weights[order][kept], color="tab:blue")
    if not kept.all():
        ax.plot(np.zeros(int((~kept).sum())), positions[~kept], "x", color="gray",
                label="weight 0 (dropped)")
        ax.legend(loc="lower right", fontsize=7)
    ax.set_yticks(positions)
    ax.set_yticklabels([names[k] for k in order], fontsize=8)
    ax.set_ylim(-0.6, order.size - 0.4)
    ax.set_xlabel("kernel weight")
    n_nonzero = int(np.count_nonzero(weights))
    shown = "" if top is None or order.size == weights.size else f"; the {order.size} largest"
    ax.set_title(title or f"{n_nonzero} of {weights.size} kernel weights non-zero{shown}",
                 fontsize=10)
    ax.figure.tight_layout()
    return ax


def weight_table(model, weights=None):
    """Kernel weights arranged by feature block (rows) and kernel parameter (columns).

    Parameters
    ----------
    model : fitted MKLClassifier, MKLRegressor or OneClassMKL
        Fitted with kernels built from X (a recipe or a list of specs).
    weights : array-like of shape (m,), optional
        Default ``model.kernel_weights_`` (which must then be one row).

    Returns
    -------
    table : ndarray of shape (n_rows, n_columns)
        Summed weight of the kernels with that block and parameter; NaN where no kernel is.
    rows : list of str
        "all" (kernels on all features), then each feature block (``x[j]`` or the column name).
    columns : list of str
        Kernel type and parameters, e.g. ``rbf(sigma=0.5)``, in order of first appearance.

    Raises
    ------
    ValueError
        If the model has no kernel specs (precomputed kernels, products, strings).
    """
    specs = getattr(getattr(model, "bank_", None), "specs", None)
    if not specs or not all(hasattr(spec, "features") for spec in specs):
        raise ValueError(
            "a weight map needs kernels built from X (a recipe such as 'simple_mkl' or a list "
            "of specs); use plot_kernel_weights for other models"
        )
    weights = np.asarray(model.kernel_weights_ if weights is None else weights, dtype=float)
    if weights.ndim != 1:
        raise ValueError("pass one row of weights for a multiclass model (weights=...)")
    feature_names = getattr(model, "feature_names_in_", None)
    row_keys = list(dict.fromkeys(spec.features for spec in specs))
    row_keys.sort(key=lambda key: (key is not None, key or ()))
    columns = list(dict.fromkeys(spec.label for spec in specs))
    table = np.full((len(row_keys), len(columns)), np.nan)
    for spec, w in zip(specs, weights, strict=True):
        r, c = row_keys.index(spec.features), columns.index(spec.label)
        table[r, c] = w if np.isnan(table[r, c]) else table[r, c] + w
    return table, [_row_name(key, feature_names) for key in row_keys], columns


def _row_name(columns, feature_names):
    if columns is None:
        return "all"
    if feature_names is not None:
        return ", ".join(str(feature_names[c]) for c in columns)
    return "x[" + ",".join(str(c) for c in columns) + "]"


def plot_weight_map(model, weights=None, *, ax=None, max_rows=40, title=None):
    """Heat map of the kernel weights: feature blocks down, kernel parameters across.

    Rows are "all" and then each feature block (with more than ``max_rows`` rows, "all" and the
    ``max_rows - 1`` blocks of largest total weight, in feature order); columns are the
    kernel parameters (see :func:`weight_table`). Zero weights are white, cells without a
    kernel grey. This is the layout of the selected-kernel figures of SimpleMKL
    (Rakotomamonjy et al., JMLR 2008) and SPG-GMKL (Jain et al., KDD 2012).

    Parameters
    ----------
    model : fitted estimator with kernels built from X
    weights : array-like of shape (m,), optional
        One row of weights (default ``model.kernel_weights_``).
    ax : matplotlib Axes, optional
    max_rows : int, default 40
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        As :func:`weight_table`.
    ImportError
        If matplotlib is not installed.
    """
    table, rows, columns = weight_table(model, weights)
    if len(rows) > max_rows:
        totals = np.nansum(table, axis=1)
        keep = [0] + sorted(1 + np.argsort(-totals[1:], kind="stable")[: max_rows - 1])
        hidden = len(rows) - len(keep)
        table, rows = table[keep], [rows[k] for k in keep]
    else:
        hidden = 0
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(1.6 + 0.55 * len(columns), 1.6 + 0.24 * len(rows)))
    # grey: no such kernel; white: weight 0
    cmap = plt.get_cmap("Blues").with_extremes(bad="0.85", under="white")
    top = np.nanmax(table) if np.any(table > 0) else 1.0
    image = ax.imshow(np.ma.masked_invalid(table), cmap=cmap, aspect="auto",
                      vmin=1e-9 * top, vmax=top, interpolation="nearest")
    ax.set_xticks(np.arange(len(columns)))
    ax.set_xticklabels(columns, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(np.arange(len(rows)))
    ax.set_yticklabels(rows, fontsize=8)
    ax.set_xlabel("kernel")
    ax.set_ylabel("features")
    ax.figure.colorbar(image, ax=ax, label="kernel weight (white: 0, grey: no kernel)",
                       fraction=0.05)
    note = f" ({hidden} feature rows without weight hidden)" if hidden else ""
    ax.set_title(title or f"kernel weights by feature and kernel{note}", fontsize=10)
    ax.figure.tight_layout()
    return ax


def plot_convergence(history, *, labels=None, axes=None, title=None, convex=None):
    """Objective and relative duality gap against iterations (left) and seconds (right).

    Parameters
    ----------
    history : list of dict, or list of such lists
        ``history_`` of a fitted model (one list per class for one-vs-rest models). Each
        record has ``objective``, ``relative_duality_gap`` and ``time`` (see
        :class:`mklearn.solvers.MKLResult`); the gap is drawn on a log scale (zeros, reached
        at the optimum, are left out).
    labels : list of str, optional
        One label per list (e.g. the class), shown in a legend.
    axes : array of 2 x 2 matplotlib Axes, optional
    title : str, optional
    convex : bool, optional
        Whether the problem is convex: a sum of kernels (every regulariser) is, and has a
        duality gap; a product of kernels is not, and its lower panels show the SPG solver's
        projected-gradient norm ``pg_norm`` instead. Default: convex unless no record has a
        finite gap and every record has a ``pg_norm`` (:func:`save_plots` passes
        ``model.combination != "product"``).

    Returns
    -------
    ndarray of shape (2, 2) of matplotlib Axes
        Rows: objective, gap; columns: iteration, seconds.

    Raises
    ------
    ValueError
        If ``history`` is empty or its records have no objective.
    """
    runs = history if history and isinstance(history[0], list) else [history]
    if not runs or not all(runs) or not all("objective" in r for run in runs for r in run):
        raise ValueError("history is empty or has no objective; fit the model first")
    labels = [None] * len(runs) if labels is None else [str(label) for label in labels]
    records = [r for run in runs for r in run]
    if convex is None:
        convex = any(np.isfinite(r.get("relative_duality_gap", np.nan)) for r in records) \
            or not all("pg_norm" in r for r in records)
    second = "relative_duality_gap" if convex else "pg_norm"
    plt = _pyplot()
    if axes is None:
        _, axes = plt.subplots(2, 2, figsize=(9.0, 5.5), sharex="col")
    for run, label in zip(runs, labels, strict=True):
        iterations = np.arange(1, len(run) + 1)
        seconds = np.array([r.get("time", np.nan) for r in run], float)
        objective = np.array([r["objective"] for r in run], float)
        gap = np.array([r.get(second, np.nan) for r in run], float)
        for col, x in enumerate((iterations, seconds)):
            axes[0, col].plot(x, objective, marker=".", markersize=3, label=label)
            positive = gap > 0
            axes[1, col].semilogy(x[positive], gap[positive], marker=".", markersize=3,
                                  label=label)
    axes[0, 0].set_ylabel("objective")
    axes[1, 0].set_ylabel("relative duality gap" if convex else
                          "projected-gradient norm\n(product: non-convex, no duality gap)")
    axes[1, 0].set_xlabel("iteration")
    axes[1, 1].set_xlabel("seconds")
    for ax in axes.ravel():
        ax.grid(alpha=0.3)
    if any(label is not None for label in labels):
        axes[0, 1].legend(fontsize=7, title="class", title_fontsize=7)
    axes[0, 0].figure.suptitle(title or "convergence", fontsize=10)
    axes[0, 0].figure.tight_layout()
    return axes


def save_plots(model, directory):
    """Write the plots that apply to a fitted model as PNG files in ``directory``.

    ``weights.png`` (top-20 bar chart), ``weight_map.png`` (when the kernels come from X) and
    ``convergence.png`` (when the model has a history); for a multiclass model one weight
    chart and map per class, ``weights-<class>.png`` and ``weight_map-<class>.png``.

    Returns
    -------
    list of str
        The files written.

    Raises
    ------
    OSError
        If ``directory`` cannot be created or written.
    """
    plt = _pyplot()
    os.makedirs(directory, exist_ok=True)
    written = []

    def save(ax_or_axes, name):
        figure = np.ravel(ax_or_axes)[0].figure
        path = os.path.join(directory, name)
        figure.savefig(path, dpi=110)
        plt.close(figure)
        written.append(path)

    weights = np.atleast_2d(model.kernel_weights_)
    classes = getattr(model, "classes_", None)
    if weights.shape[0] == 1:
        rows = [(None, weights[0])]
    else:
        rows = list(zip([_class_text(c) for c in classes], weights, strict=True))
    for label, row in rows:
        suffix = "" if label is None else f"-{label}"
        which = "" if label is None else f"class {label}: "
        ax = plot_kernel_weights(row, model.kernel_names_)
        ax.set_title(which + ax.get_title(), fontsize=10)
        save(ax, f"weights{suffix}.png")
        try:
            ax = plot_weight_map(model, row)
        except ValueError:  # no kernel specs (e.g. products): the bar chart says it all
            continue
        ax.set_title(which + ax.get_title(), fontsize=10)
        save(ax, f"weight_map{suffix}.png")
    history = getattr(model, "history_", None)
    if history:
        labels = None if weights.shape[0] == 1 else [label for label, _ in rows]
        solver = getattr(model, "solver_", getattr(model, "solver", ""))
        title = f"{solver} convergence ({len(np.ravel(model.kernel_names_))} kernels)"
        convex = getattr(model, "combination", "sum") != "product"
        save(plot_convergence(history, labels=labels, title=title, convex=convex),
             "convergence.png")
    return written


def _class_text(label):
    """A class label for titles and file names: 1.0 as ``1``."""
    if isinstance(label, (float, np.floating)) and float(label).is_integer():
        return f"{label:g}"
    return str(label)
