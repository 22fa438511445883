"""Dask input. Prediction partition by partition (mklearn.distributed.partitions): the same
values as on NumPy, a Dask array with the input's row chunks, and X never gathered. Fits gather
a collection into the process when its bytes fit in the budget (mklearn.memory.gathered)."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402
from distributed import Client, LocalCluster, wait  # noqa: E402

from mklearn import MKLClassifier, MKLKernel, MKLRegressor, OneClassMKL  # noqa: E402
from mklearn.kernels import RBF, KernelBank  # noqa: E402
from mklearn.kernels.checks import is_dask_collection  # noqa: E402

METHODS = {
    "classifier": ["predict", "decision_function", "predict_proba", "predict_log_proba"],
    "multiclass": ["predict", "decision_function", "predict_proba"],
    "regressor": ["predict"],
    "one-class": ["predict", "decision_function", "score_samples"],
    "low-rank": ["predict", "decision_function"],
    "kernel": ["transform"],
}


def _data(n=90, n_features=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    return X, X[:, 0] + 0.5 * X[:, 1] ** 2


def _fitted(kind):
    X, target = _data()
    labels = np.where(target > 0.4, 1, -1)
    if kind == "classifier":
        return MKLClassifier(probability=True, random_state=0).fit(X, labels), X
    if kind == "multiclass":
        classes = np.digitize(target, [0.0, 0.8])
        return MKLClassifier(probability=True, random_state=0).fit(X, classes), X
    if kind == "regressor":
        return MKLRegressor().fit(X, target), X
    if kind == "one-class":
        return OneClassMKL(kernels="svc+feature_rbf").fit(X), X
    if kind == "low-rank":
        model = MKLClassifier(kernel_approximation="nystroem", n_components=30,
                              random_state=0)
        return model.fit(X, labels), X
    return MKLKernel().fit(X, labels), X


@pytest.mark.parametrize("kind", list(METHODS))
def test_dask_arrays_give_dask_arrays_of_the_same_values(kind):
    model, X = _fitted(kind)
    test = _data(n=75, seed=1)[0]
    blocks = da.from_array(test, chunks=(20, 2))  # features split: made one chunk
    for name in METHODS[kind]:
        expected = getattr(model, name)(test)
        found = getattr(model, name)(blocks)
        assert is_dask_collection(found), name
        assert found.chunks[0] == (20, 20, 20, 15), name
        assert found.shape == expected.shape and found.dtype == expected.dtype, name
        np.testing.assert_allclose(found.compute(), expected, rtol=1e-12, atol=1e-12,
                                   err_msg=name)


def test_rows_of_unknown_count_are_predicted():
    model, _ = _fitted("classifier")
    test = _data(n=60, seed=2)[0]
    blocks = da.from_array(test, chunks=(25, 4))
    unknown = blocks[blocks[:, 0] > -10.0]  # every row kept; the chunk sizes are NaN
    assert np.isnan(unknown.chunks[0][0])
    np.testing.assert_array_equal(model.predict(unknown).compute(), model.predict(test))


def test_a_precomputed_test_stack_in_partitions():
    X, target = _data()
    labels = np.where(target > 0.4, 1, -1)
    bank = KernelBank([RBF(sigma=1.0), RBF(sigma=3.0)]).fit(X)
    model = MKLClassifier(kernels="precomputed").fit(bank.transform(X), labels)
    test_stack = bank.transform(_data(n=40, seed=3)[0])
    blocks = da.from_array(test_stack, chunks=(15, 30, 1))
    np.testing.assert_allclose(model.decision_function(blocks).compute(),
                               model.decision_function(test_stack), rtol=1e-12)


def test_dask_dataframes_keep_their_column_names():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, target = _data()
    names = ["width", "height", "depth", "mass"]
    model = MKLClassifier(probability=True, random_state=0).fit(
        pd.DataFrame(X, columns=names), np.where(target > 0.4, 1, -1))
    test = pd.DataFrame(_data(n=70, seed=5)[0], columns=names)
    shuffled = dd.from_pandas(test[names[::-1]], npartitions=3)  # reordered by name
    for name in ("predict", "decision_function", "predict_proba"):
        found = getattr(model, name)(shuffled)
        assert is_dask_collection(found) and np.isnan(found.chunks[0][0]), name
        np.testing.assert_allclose(found.compute(), getattr(model, name)(test), rtol=1e-12,
                                   err_msg=name)


def test_other_dask_collections_are_refused_with_the_conversion():
    model, _ = _fitted("classifier")
    delayed = dask.delayed(np.zeros)((3, 4))
    with pytest.raises(TypeError, match="dask.array.Array or a dask.dataframe.DataFrame"):
        model.predict(delayed)
    with pytest.raises(ValueError, match="2-D dask array"):
        model.predict(da.zeros(10, chunks=5))


def test_blocks_run_on_the_workers_without_gathering_x():
    model, _ = _fitted("classifier")
    test = _data(n=400, seed=4)[0]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        blocks = client.persist(da.from_array(test, chunks=(100, 4)))
        predicted = client.persist(model.predict(blocks))
        wait(predicted)
        where = client.who_has(predicted)
        assert sum(len(workers) > 0 for workers in where.values()) == 4  # held on the workers
        np.testing.assert_array_equal(predicted.compute(), model.predict(test))


def test_a_fit_on_dask_collections_gathers_them_into_the_same_model():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, target = _data()
    y = np.where(target > 0.4, 1, -1)
    expected = MKLClassifier(random_state=0).fit(X, y).decision_function(X)
    model = MKLClassifier(random_state=0).fit(da.from_array(X, chunks=(30, 4)),
                                              da.from_array(y, chunks=30))
    np.testing.assert_allclose(model.decision_function(X), expected, rtol=1e-10)
    names = ["width", "height", "depth", "mass"]
    frame = dd.from_pandas(pd.DataFrame(X, columns=names), npartitions=3)
    model = MKLClassifier(random_state=0).fit(frame, dd.from_pandas(pd.Series(y),
                                                                      npartitions=3))
    assert list(model.feature_names_in_) == names
    np.testing.assert_allclose(model.decision_function(pd.DataFrame(X, columns=names)),
                               expected, rtol=1e-10)


def test_a_fit_refuses_dask_arrays_it_cannot_plan_or_hold():
    X, target = _data()
    y = np.where(target > 0.4, 1, -1)
    blocks = da.from_array(X, chunks=(30, 4))
    with pytest.raises(ValueError, match=r"unknown size.*X.compute_chunk_sizes\(\)"):
        MKLClassifier().fit(blocks[blocks[:, 0] > -10.0], y)
    with pytest.raises(ValueError, match="Dask collection of 2.75 MB, above the memory "
                                         "budget of 1 MB.*sample of the rows.*float32"):
        MKLClassifier(memory_budget=1, kernel_approximation="exact").fit(
            da.from_array(np.tile(X, (1000, 1)), chunks=9000), np.tile(y, 1000))
