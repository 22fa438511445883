"""mklearn.plotting: readable weight charts, weight maps, convergence plots, their errors, and
``mklearn fit --plot``."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from mklearn import MKLClassifier, plotting
from mklearn.kernels import RBF, Polynomial, simple_mkl_kernels

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RECIPE = simple_mkl_kernels(sigmas=(0.5, 2.0, 5.0), degrees=(1, 2))


def _data(n=40, d=4, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, 0] + 0.5 * X[:, 1] > 0 if classes == 2 else np.digitize(X[:, 0], [-0.4, 0.4])
    return X, y


@pytest.fixture(scope="module")
def binary():
    X, y = _data()
    return MKLClassifier(kernels=RECIPE, C=10).fit(X, y)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_bar_chart_shows_the_top_weights_in_a_readable_figure():
    weights = np.zeros(800)
    weights[[5, 700, 42]] = [0.5, 0.3, 0.2]
    names = [f"k{i}" for i in range(800)]
    ax = plotting.plot_kernel_weights(weights, names)
    width, height = ax.figure.get_size_inches()
    assert width == 7.0 and height < 8  # not 0.18 inch per kernel: 144 inches for 800
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == plotting.TOP and labels[:3] == ["k5", "k700", "k42"]
    assert sorted(p.get_width() for p in ax.patches) == [0.2, 0.3, 0.5]
    assert "3 of 800" in ax.get_title() and "20 largest" in ax.get_title()
    ax = plotting.plot_kernel_weights(np.array([0.0, 2.0, 1.0]), ["a", "b", "c"], top=None)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    assert [p.get_width() for p in ax.patches] == [2.0, 1.0]


def test_weight_table_rows_are_feature_blocks_columns_parameters(binary):
    table, rows, columns = plotting.weight_table(binary)
    assert rows == ["all", "x[0]", "x[1]", "x[2]", "x[3]"]
    assert columns == ["rbf(sigma=0.5)", "rbf(sigma=2)", "rbf(sigma=5)",
                       "poly(degree=1, coef0=1)", "poly(degree=2, coef0=1)"]
    names = binary.kernel_names_
    for k, w in enumerate(binary.kernel_weights_):
        label, block = names[k].rsplit(" on ", 1)
        assert table[rows.index(block), columns.index(label)] == w
    assert not np.isnan(table).any()


def test_weight_table_marks_missing_kernels_and_needs_specs():
    X, y = _data()
    model = MKLClassifier(kernels=[RBF(sigma=1.0), Polynomial(degree=2, features=[1])],
                          C=10).fit(X, y)
    table, rows, columns = plotting.weight_table(model)
    assert rows == ["all", "x[1]"] and np.isnan(table[0, 1]) and np.isnan(table[1, 0])
    stack = np.stack([X @ X.T, (X @ X.T + 1) ** 2], axis=2)
    pre = MKLClassifier(kernels="precomputed", C=10).fit(stack, y)
    with pytest.raises(ValueError, match="plot_kernel_weights"):
        plotting.plot_weight_map(pre)


def test_weight_table_gives_svc_kernel_its_own_column():
    X, y = _data()
    model = MKLClassifier().fit(X, y)  # the default family: SVC()'s kernel first
    table, rows, columns = plotting.weight_table(model)
    assert columns[0].endswith(", scaled columns)") and columns[0].startswith("rbf(gamma=")
    assert table[rows.index("all"), 0] == model.kernel_weights_[0]
    assert np.isnan(table[1:, 0]).all()  # no per-feature kernel in that column


def test_weight_map_draws_the_table(binary):
    ax = plotting.plot_weight_map(binary)
    image = ax.images[0]
    assert image.get_array().shape == (5, 5)
    assert [t.get_text() for t in ax.get_yticklabels()][0] == "all"
    ax = plotting.plot_weight_map(binary, max_rows=3)
    assert image.get_array().shape[0] == 5 and ax.images[0].get_array().shape[0] == 3
    assert "2 feature rows" in ax.get_title()


def test_convergence_plot_has_objective_and_gap_against_iterations_and_time(binary):
    axes = plotting.plot_convergence(binary.history_)
    assert axes.shape == (2, 2)
    n = len(binary.history_)
    line = axes[0, 0].lines[0]
    np.testing.assert_array_equal(line.get_xdata(), np.arange(1, n + 1))
    np.testing.assert_allclose(line.get_ydata(), [r["objective"] for r in binary.history_])
    np.testing.assert_allclose(axes[0, 1].lines[0].get_xdata(),
                               [r["time"] for r in binary.history_])
    assert axes[1, 0].get_yscale() == "log"
    with pytest.raises(ValueError, match="fit the model first"):
        plotting.plot_convergence([])


GAP_SOLVERS = [("spg", "l1", None), ("pgd", "l1", None), ("spg", "lp", None),
               ("smo", "kl", None), ("smo", "lp", None), ("mirror", "l1", None),
               ("mirror", "group", None), ("mwu", "l1", None), ("silp", "l1", None),
               ("silp", "l1", {"interleaved": True})]


def _panels_are_drawn(axes):
    """Every line of every panel has at least 2 finite points."""
    for ax in axes.ravel():
        assert ax.lines, f"panel {ax.get_ylabel()!r} has no line"
        for line in ax.lines:
            xy = np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float)
            assert np.isfinite(xy).all(axis=1).sum() >= 2, f"empty {ax.get_ylabel()!r} panel"


@pytest.mark.parametrize(("solver", "regularizer", "options"), GAP_SOLVERS,
                         ids=[f"{s}-{r}" + ("-interleaved" if o else "")
                              for s, r, o in GAP_SOLVERS])
def test_convergence_plot_draws_the_gap_of_every_convex_solver(solver, regularizer, options,
                                                               tmp_path):
    X, y = _data()
    kernels = ({"a": RECIPE, "b": RECIPE} if regularizer == "group" else RECIPE)
    X = {"a": X[:, :2], "b": X[:, 2:]} if regularizer == "group" else X
    model = MKLClassifier(kernels=kernels, C=10, solver=solver, regularizer=regularizer,
                          solver_options=options).fit(X, y)
    assert np.isfinite([r["relative_duality_gap"] for r in model.history_]).any()
    axes = plotting.plot_convergence(model.history_)
    _panels_are_drawn(axes)
    assert axes[1, 0].get_ylabel() == "relative duality gap"
    gaps = [r["relative_duality_gap"] for r in model.history_ if r["relative_duality_gap"] > 0]
    np.testing.assert_allclose(axes[1, 0].lines[0].get_ydata(), gaps)
    plotting.save_plots(model, tmp_path)  # what `--plot` draws
    assert (tmp_path / "convergence.png").stat().st_size > 5_000


def test_convergence_plot_of_a_multiclass_model_draws_each_class():
    X, y = _data(classes=3)
    model = MKLClassifier(kernels=RECIPE, C=10, solver="spg", regularizer="l1").fit(X, y)
    axes = plotting.plot_convergence(model.history_, labels=model.classes_)
    _panels_are_drawn(axes)
    assert all(len(ax.lines) == 3 for ax in axes.ravel())


def test_save_plots_multiclass_writes_one_chart_per_class(tmp_path):
    X, y = _data(classes=3)
    model = MKLClassifier(kernels=RECIPE, C=10).fit(X, y.astype(float))
    written = plotting.save_plots(model, tmp_path / "out")
    names = sorted(p.rsplit("/", 1)[1] for p in written)
    assert names == ["convergence.png", "weight_map-0.png", "weight_map-1.png",
                     "weight_map-2.png", "weights-0.png", "weights-1.png", "weights-2.png"]
    assert all((tmp_path / "out" / n).stat().st_size > 5_000 for n in names)


def test_save_plots_product_model_has_no_map(tmp_path):
    X, y = _data()
    model = MKLClassifier(kernels="features", combination="product", C=10).fit(X, y)
    written = plotting.save_plots(model, tmp_path)
    assert sorted(p.rsplit("/", 1)[1] for p in written) == ["convergence.png", "weights.png"]
    # no duality gap (non-convex): the lower panels show the projected-gradient norm
    axes = plotting.plot_convergence(model.history_)
    _panels_are_drawn(axes)
    assert "projected-gradient norm" in axes[1, 0].get_ylabel()
    assert "non-convex" in axes[1, 0].get_ylabel()
    relabelled = plotting.plot_convergence(model.history_, convex=False)
    assert relabelled[1, 0].get_ylabel() == axes[1, 0].get_ylabel()
    np.testing.assert_allclose(axes[1, 0].lines[0].get_ydata(),
                               [r["pg_norm"] for r in model.history_ if r["pg_norm"] > 0])


def test_cli_fit_plot_writes_the_pngs(tmp_path, capsys):
    from mklearn.cli import main

    X, y = _data(n=50)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, np.where(y, 1, -1)]), delimiter=",")
    status = main(["fit", "--data", str(data), "-C", "10", "--plot", str(tmp_path / "p")])
    out = capsys.readouterr().out
    assert status == 0
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == [
        "convergence.png", "weight_map.png", "weights.png"]
    assert "plots written" in out


def test_plot_errors_name_the_fix(monkeypatch):
    with pytest.raises(ValueError, match="kernel_weights_\\[0\\]"):
        plotting.plot_kernel_weights(np.ones((2, 3)))
    with pytest.raises(ValueError, match="one name each"):
        plotting.plot_kernel_weights(np.ones(3), ["a"])
    with pytest.raises(ValueError, match="top"):
        plotting.plot_kernel_weights(np.ones(3), top=0)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="mklearn\\[plot\\]"):
        plotting.plot_kernel_weights(np.ones(3))


def test_cli_plot_without_matplotlib_exits_2_before_fitting(monkeypatch, capsys):
    from mklearn.cli import main

    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    assert main(["fit", "--plot", "somewhere"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mklearn: error: ") and "mklearn[plot]" in err
