"""Fits on partitioned data (mklearn.distributed.points, mklearn.distributed.feature_rows):
a Dask X never gathered, its low-rank features computed and kept on its partitions, the
solve's passes sums over them. The model is the one-process low-rank model; bad input is
refused before any work."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402
import joblib  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

from mklearn import MKLClassifier, MKLRegressor  # noqa: E402
from mklearn.distributed import feature_rows  # noqa: E402
from mklearn.distributed.points import summary_of  # noqa: E402
from mklearn.kernels import KernelBank, resolve_kernels, svc_simple_mkl_kernels  # noqa: E402
from mklearn.kernels.low_rank import low_rank_kernels  # noqa: E402
from mklearn.kernels.summary import ColumnSummary  # noqa: E402
from mklearn.linear import KIND_FIXED, FeatureRows  # noqa: E402


def _data(n=600, n_features=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.4 * rng.normal(size=n) > 0.4, 1, -1)
    return X, y


def _low_rank(**params):
    return dict(kernel_approximation="nystroem", n_components=40, random_state=0, **params)


def _same_model(local, partitioned, X, rtol=1e-4):
    assert partitioned.kernel_storage_ == "features"
    assert abs(partitioned.objective_ - local.objective_) <= rtol * abs(local.objective_)
    assert partitioned.approximation_error_ == pytest.approx(local.approximation_error_,
                                                             rel=1e-9)
    agree = np.mean(np.asarray(partitioned.predict(X)) == local.predict(X))
    assert agree >= 0.999


@pytest.mark.parametrize("solver, tol", [("spg", 1e-5), ("auto", 1e-5), ("average", 1e-6)])
def test_a_fit_on_dask_partitions_is_the_one_process_model(solver, tol):
    X, y = _data()
    params = _low_rank(solver=solver, tol=tol)
    local = MKLClassifier(**params).fit(X, y)
    partitioned = MKLClassifier(**params).fit(da.from_array(X, chunks=200),
                                              da.from_array(y, chunks=200))
    _same_model(local, partitioned, X)
    np.testing.assert_allclose(partitioned.kernel_weights_, local.kernel_weights_, rtol=1e-2,
                               atol=2e-3)


def test_a_regressor_on_dask_partitions_is_the_one_process_model():
    X, _ = _data(n=400)
    target = X[:, 0] + np.sin(X[:, 1])
    params = _low_rank(solver="spg", tol=1e-5)
    local = MKLRegressor(**params).fit(X, target)
    partitioned = MKLRegressor(**params).fit(da.from_array(X, chunks=150), target)
    assert abs(partitioned.objective_ - local.objective_) <= 1e-4 * abs(local.objective_)
    np.testing.assert_allclose(np.asarray(partitioned.predict(X)), local.predict(X),
                               atol=1e-3 * np.ptp(target))


def test_a_dataframe_keeps_its_feature_names_and_predicts_by_partition():
    X, y = _data()
    names = ["a", "b", "c", "d", "e"]
    frame = dd.from_pandas(pd.DataFrame(X, columns=names), npartitions=3)
    labels = dd.from_pandas(pd.Series(y), npartitions=3)
    model = MKLClassifier(**_low_rank(solver="spg")).fit(frame, labels)
    assert list(model.feature_names_in_) == names
    table = pd.DataFrame(X, columns=names)
    local = MKLClassifier(**_low_rank(solver="spg")).fit(table, y)
    np.testing.assert_array_equal(np.asarray(model.predict(frame)), local.predict(table))


def test_a_model_fitted_on_partitions_saves_and_loads(tmp_path):
    from mklearn.persistence import load_model, save_model

    X, y = _data(n=300)
    model = MKLClassifier(**_low_rank(solver="spg")).fit(da.from_array(X, chunks=100), y)
    save_model(model, tmp_path / "model.mkl")
    loaded = load_model(tmp_path / "model.mkl")
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


def test_auto_keeps_small_dask_input_exact_and_names_the_plan(capsys):
    X, y = _data(n=200)
    model = MKLClassifier(random_state=0, verbose=1).fit(da.from_array(X, chunks=50), y)
    assert model.kernel_storage_ != "features"  # gathered: below LOW_RANK_SAMPLES, exact
    MKLClassifier(**_low_rank(solver="spg", verbose=1)).fit(da.from_array(X, chunks=50), y)
    assert "in 4 partitions on 1 worker(s)" in capsys.readouterr().err


def test_the_summary_of_partitions_is_the_summary_of_the_rows():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 6))
    X[:, 1] = 7.0  # constant
    X[:, 2] = np.where(rng.random(500) < 0.3, -1.0, 4.0)  # two values
    X[:, 3] *= 1e200  # extreme magnitude
    X[:, 4] = np.round(X[:, 4])  # few values
    merged = summary_of(da.from_array(X, chunks=120))
    whole = ColumnSummary.of(X)
    for name in ("minimum", "maximum", "mean", "scale", "unit_deviation"):
        np.testing.assert_allclose(getattr(merged, name), getattr(whole, name), rtol=1e-12)
    assert merged.spread == pytest.approx(whole.spread, rel=1e-12)
    assert merged.n_samples == whole.n_samples and merged.peak == whole.peak
    assert merged.two_valued.keys() == whole.two_valued.keys() == {2}
    for ours, theirs in zip(merged.two_valued[2], whole.two_valued[2], strict=True):
        np.testing.assert_array_equal(ours, theirs)
    recipe = svc_simple_mkl_kernels()
    ours, theirs = recipe.expand(merged), recipe.expand(X)
    assert [spec.name for spec in ours] == [spec.name for spec in theirs]
    np.testing.assert_allclose(ours[0].feature_scales, theirs[0].feature_scales, rtol=1e-12)


@pytest.mark.parametrize("working_set", [16, 4096], ids=["cocoa-and-working-set", "all"])
def test_partitioned_descent_reaches_the_box_optimum(working_set, monkeypatch):
    """CoCoA+ rounds with the client's working-set step reach the optimum of the dual at a
    fixed bias that coordinate descent on the rows in memory reaches."""
    monkeypatch.setattr(feature_rows, "WORKING_SET", working_set)
    X, y = _data(n=1500)
    specs, standardize = resolve_kernels("svc+feature_rbf", X)
    bank = KernelBank(specs, standardize=standardize).fit(X)
    fitted = low_rank_kernels(bank, "nystroem", 40, budget=2 ** 32, random_state=0)
    operator = fitted.operator
    partitioned = feature_rows.PartitionedFeatures.from_dask(da.from_array(X, chunks=400),
                                                             fitted.map)
    m = operator.n_kernels
    n, d, kernels = X.shape[0], np.full(m, 1.0 / m), np.arange(m)
    signs, linear, upper = y.astype(float), -np.ones(n) + 0.2 * y, np.full(n, 10.0)

    def solved(rows):
        alpha, u = np.zeros(n), np.zeros(operator.starts[-1])
        rows.descend(np.arange(n), signs, linear, upper, alpha, u, d, kernels, KIND_FIXED,
                     1.0, 2.0, np.ones(m), 1e-9, 1000, True, 0)
        blocks = [u[operator.starts[k]:operator.starts[k + 1]] for k in range(m)]
        return -linear @ alpha - 0.5 * sum(d[k] * b @ b for k, b in enumerate(blocks)), u

    local, u_local = solved(FeatureRows(operator.features, operator.starts,
                                        operator.squared_norms))
    ours, u_ours = solved(partitioned.feature_rows)
    assert ours == pytest.approx(local, rel=1e-9)
    np.testing.assert_allclose(u_ours, u_local, atol=1e-4 * np.abs(u_local).max())


def test_bad_partitioned_input_is_refused_before_any_work():
    X, y = _data(n=300)
    model = MKLClassifier(**_low_rank(solver="spg"))
    blocks = da.from_array(X, chunks=100)
    with pytest.raises(ValueError, match=r"unknown size.*X.compute_chunk_sizes\(\)"):
        model.fit(blocks[blocks[:, 0] > -10.0], y)
    with pytest.raises(ValueError, match=r"partitions of X and y do not line up: X holds "
                                         r"\(100, 100, 100\).*y \(150, 150\).*rechunk"):
        model.fit(blocks, da.from_array(y, chunks=150))
    with pytest.raises(ValueError, match="y has 299 entries, X 300 rows"):
        model.fit(blocks, y[:-1])
    frame = pd.DataFrame(X, columns=list("abcde")).assign(city="x")
    with pytest.raises(ValueError, match=r"non-numeric dtype \(city\).*encode them"):
        model.fit(dd.from_pandas(frame, npartitions=2), y)
    with pytest.raises(ValueError, match="NaN or infinity"):
        model.fit(da.from_array(np.where(X > 2.5, np.nan, X), chunks=100), y)


@pytest.fixture(scope="module")
def cluster():
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "1h"}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=None, memory_limit="2GB") as cluster:
        yield cluster
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def test_a_fit_on_a_cluster_is_the_one_process_model(cluster, capsys):
    X, y = _data()
    params = _low_rank(solver="spg", tol=1e-5)
    local = MKLClassifier(**params).fit(X, y)
    with Client(cluster):
        partitioned = MKLClassifier(**params).fit(da.from_array(X, chunks=150),
                                                  da.from_array(y, chunks=150))
        _same_model(local, partitioned, X)
        # the kernel-parallel switch: an in-memory X is spread over the workers by rows
        with joblib.parallel_config(backend="dask"):
            spread = MKLClassifier(**params, verbose=1).fit(X, y)
        assert "in 4 partitions on 2 worker(s)" in capsys.readouterr().err
        _same_model(local, spread, X)


def test_a_worker_lost_in_the_middle_of_a_fit_leaves_the_same_model(cluster, monkeypatch):
    X, y = _data()
    params = _low_rank(solver="spg", tol=1e-5)
    local = MKLClassifier(**params).fit(X, y)
    calls = []
    descend = feature_rows.PartitionedRows.descend

    def killing(self, *args):
        calls.append(1)
        if len(calls) == 3:  # its partitions' features are lost: Dask computes them again
            client = distributed.get_client()
            victim = sorted(client.nthreads())[0]
            client.run(os._exit, 1, workers=[victim], on_error="ignore")
        return descend(self, *args)

    monkeypatch.setattr(feature_rows.PartitionedRows, "descend", killing)
    with Client(cluster) as client:
        client.wait_for_workers(2, timeout=60)
        partitioned = MKLClassifier(**params).fit(da.from_array(X, chunks=150),
                                                  da.from_array(y, chunks=150))
        assert len(calls) > 3
        _same_model(local, partitioned, X)
        client.wait_for_workers(2, timeout=60)


def test_features_too_large_for_the_workers_are_refused_with_the_fix():
    X, y = _data(n=4000)
    # the limit only plans: the worker shares this process, whose memory is far above it
    unwatched = {f"distributed.worker.memory.{key}": False
                 for key in ("target", "spill", "pause", "terminate")}
    with dask.config.set(unwatched), LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None,
            memory_limit="4MB") as small, Client(small):
        with pytest.raises(ValueError, match=r"of 4000 points in 2 partitions of up to 2000 "
                                             r"rows need .* on each of 1 worker\(s\) held, "
                                             r".* recomputed at each pass, above 60% of the "
                                             r"smallest worker memory limit.*more "
                                             r"partitions.*n_components.*float32"):
            MKLClassifier(**_low_rank(solver="spg")).fit(da.from_array(X, chunks=2000), y)


def test_features_that_do_not_fit_held_are_recomputed_at_each_pass(capsys):
    """The plan holds the features where they fit, else recomputes them from the
    partitions' rows of X at each pass, says so, and the model is the same."""
    X, y = _data()
    params = _low_rank(solver="spg", tol=1e-5, verbose=1)
    blocks, labels = da.from_array(X, chunks=200), da.from_array(y, chunks=200)
    held = MKLClassifier(**params).fit(blocks, labels)
    assert "features held" in capsys.readouterr().err
    # 600 points of rank 110: 0.69 MB held, 0.25 MB with X kept and one partition at a time
    recomputed = MKLClassifier(**params, memory_budget=0.5).fit(blocks, labels)
    said = capsys.readouterr().err
    assert "features recomputed from X at each pass" in said and "held they would need" in said
    assert recomputed.objective_ == pytest.approx(held.objective_, rel=1e-12)


def test_a_client_without_workers_is_a_clear_error():
    X, y = _data(n=200)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as empty, \
            Client(empty):
        with pytest.raises(RuntimeError, match="no workers.*start workers"):
            MKLClassifier(**_low_rank(solver="spg")).fit(da.from_array(X, chunks=100), y)
