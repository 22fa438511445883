"""Per-kernel work on a Dask cluster (mklearn.distributed): a LocalCluster of 2 worker
processes with 1 thread each, shared by the tests of this module."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
joblib = pytest.importorskip("joblib")

import dask  # noqa: E402
from distributed import Client, LocalCluster, get_task_stream  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402

import mklearn  # noqa: E402
from mklearn import MKLClassifier  # noqa: E402
from mklearn.distributed import (  # noqa: E402
    DaskColumns,
    DaskKernels,
    active_client,
    check_workers,
    local_jobs,
)
from mklearn.formulation.regularizers import make_regularizer  # noqa: E402
from mklearn.kernels import RBF, KernelBank, KernelOperator  # noqa: E402
from mklearn.kernels.columns import KernelColumns, StackColumns  # noqa: E402
from mklearn.kernels.operator import RowKernels  # noqa: E402
from mklearn.solvers.mwu import mwu_mkl  # noqa: E402
from mklearn.solvers.spg import spg_gmkl  # noqa: E402


@pytest.fixture(scope="module")
def client():
    import cloudpickle

    # the worker processes cannot import this test module: send its classes by value
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    # tests here kill workers; LocalCluster closes the nanny of a worker name that is still
    # missing lost-worker-timeout (15 s) after a removal, so a second kill of that worker 15 s
    # after the first left one worker for the rest of the module
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "1h"}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=None) as cluster, Client(cluster) as client:
        yield client
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def _data(n=70, n_features=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 0.4, 1, -1)
    return X, y


SPECS = [RBF(sigma=s, features=f) for f in range(5) for s in (0.5, 1.0, 2.0, 4.0)]


def _operator(X, cache_size=1.0):
    return RowKernels(KernelColumns(KernelBank(SPECS).fit(X)), cache_size)


def _coefficients(n, seed=1):
    rng = np.random.default_rng(seed)
    return np.where(rng.random(n) < 0.4, rng.normal(size=n), 0.0)


def _workers(stream):
    return {event["worker"] for event in stream.data}


def test_operator_on_workers_equals_in_process(client):
    X, _ = _data()
    local = _operator(X)
    v = _coefficients(X.shape[0])
    live = np.array([17, 3, 9, 0, 12])
    reference = DaskKernels(local, None)  # the same blocks, one after the other, here
    with get_task_stream(client) as stream:
        remote = DaskKernels(local, client)
        g = remote.kernel_gradient(None, v)
        P = remote.products(v)
        g_live = remote.kernel_gradient(None, v, live)
    assert len(_workers(stream)) == 2  # the blocks ran on both workers
    # fixed reduction order: bit for bit the in-process result
    assert np.array_equal(g, reference.kernel_gradient(None, v))
    assert np.array_equal(P, reference.products(v))
    assert np.array_equal(g_live, g[live])
    # and the wrapped operator's numbers, up to rounding
    np.testing.assert_allclose(g, local.kernel_gradient(None, v), rtol=1e-12)
    np.testing.assert_allclose(P, local.products(v), rtol=1e-12, atol=1e-15)
    assert remote.n_calls == 3 and 0 < remote.bytes_received
    assert remote.seconds["quadratic_terms"][0] == 2 and remote.seconds["products"][0] == 1
    assert remote.bytes_received == g.nbytes + P.nbytes + g_live.nbytes


def test_operator_on_a_stack_and_on_a_provider_without_blocks(client):
    X, _ = _data()
    stack = KernelBank(SPECS).fit_transform(X)
    v = _coefficients(X.shape[0])
    local = RowKernels(StackColumns(stack), 1.0)
    expected = np.einsum("i,ijk,j->k", v, stack, v)
    np.testing.assert_allclose(DaskKernels(local, client).kernel_gradient(None, v), expected,
                               rtol=1e-12)
    # a provider without kernel_subset is sent whole; blocks name their kernels
    whole = RowKernels(_NoSubset(StackColumns(stack)), 1.0)
    np.testing.assert_allclose(DaskKernels(whole, client, n_blocks=3).kernel_gradient(None, v),
                               expected, rtol=1e-12)


class _NoSubset(KernelOperator):
    """A provider that cannot split itself into blocks of kernels."""

    def __init__(self, inner):
        self.inner = inner
        self.n_samples, self.n_kernels = inner.n_samples, inner.n_kernels

    def rows(self, indices, kernels=None):
        return self.inner.rows(indices, kernels)

    def diagonal(self):
        return self.inner.diagonal()


def test_combined_rows_on_workers(client, monkeypatch):
    from mklearn.distributed import operator as dask_operator

    monkeypatch.setattr(dask_operator, "DISTRIBUTE_MIN_VALUES", 0)  # every request remote
    X, _ = _data()
    local = _operator(X)
    v = _coefficients(X.shape[0])
    d = np.random.default_rng(2).random(local.n_kernels)
    d[[1, 5]] = 0.0
    kernels = np.flatnonzero(d)
    indices = np.array([4, 0, 33])
    reference, remote = DaskKernels(local, None), DaskKernels(local, client)
    with get_task_stream(client) as stream:
        rows = remote.combined_rows(indices, kernels, d[kernels])
        block = remote.combined_block(indices, kernels, d[kernels])
        product = remote.combined_products(v, kernels, d[kernels])
        diagonal = remote.combined_diagonal(kernels, d[kernels])
    assert {"weighted_rows", "weighted_products", "weighted_diagonal"} <= {
        e["key"].split("-")[0] for e in stream.data}
    assert np.array_equal(diagonal, reference.combined_diagonal(kernels, d[kernels]))
    np.testing.assert_allclose(diagonal, d[kernels] @ local.diagonal()[kernels], rtol=1e-12)
    assert np.array_equal(rows, reference.combined_rows(indices, kernels, d[kernels]))
    assert np.array_equal(product, reference.combined_products(v, kernels, d[kernels]))
    expected = np.tensordot(d[kernels], local.rows(indices, kernels), axes=(0, 0))
    np.testing.assert_allclose(rows, expected, rtol=1e-12)
    np.testing.assert_allclose(block, expected[:, indices], rtol=1e-12)
    np.testing.assert_allclose(product, local.kernel(d) @ v, rtol=1e-12)


def test_spg_on_the_cluster_is_the_in_process_run(client, monkeypatch):
    from mklearn.distributed import operator as dask_operator

    monkeypatch.setattr(dask_operator, "DISTRIBUTE_MIN_VALUES", 0)  # K(d) rows too
    X, y = _data(n=40)
    y = y.astype(float)
    local = _operator(X)
    l1 = make_regularizer("l1", p=2.0, lam=1.0)
    in_process = DaskKernels(local, None, n_blocks=2)
    a = spg_gmkl(in_process, y, 1.0, l1, tol=1e-3)
    with get_task_stream(client) as stream:
        b = spg_gmkl(DaskKernels(local, client, n_blocks=2), y, 1.0, l1, tol=1e-3)
    tasks = {e["key"].split("-")[0] for e in stream.data}
    assert "weighted_rows" in tasks and tasks & {"quadratic_terms", "products"}
    # rows of K(d) come 40 to a pass (every row, PASS_VALUES), not one pass per row
    assert in_process.seconds["weighted_rows"][0] <= a.n_svm_solves
    plain = spg_gmkl(local, y, 1.0, l1, tol=1e-3)  # rows one at a time, in this process
    assert abs(a.objective - plain.objective) <= 1e-6 * abs(plain.objective)
    assert a.n_iter == b.n_iter and a.n_svm_solves == b.n_svm_solves
    assert np.array_equal(a.kernel_weights, b.kernel_weights)
    assert np.array_equal(a.alpha, b.alpha) and a.objective == b.objective


def test_mwu_in_actors_is_the_in_process_run(client):
    """MWUMKL's state in one actor per worker equals the same blocks in process bit for bit,
    and one block to rounding."""
    X, y = _data()
    y = y.astype(float)
    provider = KernelColumns(KernelBank(SPECS).fit(X))
    options = dict(iterations=300, cache_size=1.0)
    a = mwu_mkl(DaskColumns(provider, None, n_blocks=2), y, 1.0, **options)
    with get_task_stream(client) as stream:
        b = mwu_mkl(DaskColumns(provider, client), y, 1.0, **options)
    starts = [e for e in stream.data if e["key"].startswith("MWUBlock")]
    assert len(starts) == 2 and len(_workers(stream)) == 2  # one actor on each worker
    assert np.array_equal(a.kernel_weights, b.kernel_weights)
    assert np.array_equal(a.alpha, b.alpha) and a.intercept == b.intercept
    assert [r["upper"] for r in a.history] == [r["upper"] for r in b.history]
    one = mwu_mkl(provider, y, 1.0, **options)
    np.testing.assert_allclose(a.kernel_weights, one.kernel_weights, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(a.alpha, one.alpha, rtol=1e-9, atol=1e-12)
    # a provider that cannot split itself: each actor asks it for its kernels
    whole = mwu_mkl(DaskColumns(_NoSubset(provider), client, n_blocks=3), y, 1.0, **options)
    three = mwu_mkl(DaskColumns(provider, None, n_blocks=3), y, 1.0, **options)
    assert np.array_equal(whole.kernel_weights, three.kernel_weights)


def test_mwu_estimator_under_the_dask_backend(client):
    X, y = _data()
    params = dict(kernels=SPECS, solver="mwu", C=10.0,
                  solver_options={"iterations": 300})
    local = MKLClassifier(**params).fit(X, y)
    with joblib.parallel_config(backend="dask"), get_task_stream(client) as stream:
        remote = MKLClassifier(n_jobs=-1, **params).fit(X, y)
    assert any(e["key"].startswith("MWUBlock") for e in stream.data)
    np.testing.assert_allclose(remote.kernel_weights_, local.kernel_weights_, rtol=1e-9,
                               atol=1e-15)
    assert np.array_equal(remote.predict(X), local.predict(X))


def test_a_worker_lost_under_mwu_is_a_clear_error(client, tmp_path):
    X, y = _data()
    flag = tmp_path / "kill-once"
    flag.touch()
    provider = _KillsItsWorker(StackColumns(KernelBank(SPECS).fit_transform(X)), str(flag))
    with pytest.raises(RuntimeError, match="MWUMKL's per-kernel state.*no partial model"):
        mwu_mkl(DaskColumns(provider, client), y.astype(float), 1.0, iterations=50,
                cache_size=1.0)
    assert not flag.exists()
    client.wait_for_workers(2, timeout=60)


@pytest.mark.parametrize("solver, regularizer", [("spg", "l1"), ("mirror", "l1"),
                                                 ("silp", "l1")])
def test_estimator_under_the_dask_backend(client, solver, regularizer):
    X, y = _data()
    params = dict(kernels=SPECS, solver=solver, regularizer=regularizer, tol=1e-4)
    with get_task_stream(client) as stream:
        local = MKLClassifier(**params).fit(X, y)
    assert not stream.data  # outside the backend nothing goes to the cluster
    # Dask places the tasks; on 70 points a fit's few short passes sometimes all went to one
    # worker (a worker the nanny had just restarted, or tasks done before the other got one),
    # so both workers are looked for over two fits
    with joblib.parallel_config(backend="dask"), get_task_stream(client) as stream:
        MKLClassifier(n_jobs=-1, **params).fit(X, y)
        remote = MKLClassifier(n_jobs=-1, **params).fit(X, y)
    assert remote.kernel_storage_ == "rows"
    assert len(_workers(stream)) == 2
    assert any("quadratic_terms" in event["key"] or "products" in event["key"]
               for event in stream.data)
    # the same optimum (numbers equal to rounding; paths may differ within tol)
    mine, theirs = float(np.ravel(remote.objective_)[0]), float(np.ravel(local.objective_)[0])
    assert abs(mine - theirs) <= 1e-3 * abs(theirs)
    assert np.mean(remote.predict(X) == local.predict(X)) >= 0.97


def test_n_jobs_one_stays_local(client):
    X, y = _data()
    with joblib.parallel_config(backend="dask"), get_task_stream(client) as stream:
        MKLClassifier(kernels=SPECS, n_jobs=1, kernel_storage="rows", regularizer="l1").fit(X, y)
    assert not stream.data


def test_grid_search_and_cross_validation_under_dask(client):
    X, y = _data(n=60)
    stack = KernelBank(SPECS[:8]).fit_transform(X)
    grid = {"C": [0.5, 4.0]}
    search_local = GridSearchCV(MKLClassifier(kernels="precomputed"), grid, cv=3).fit(stack, y)
    with joblib.parallel_config(backend="dask"), get_task_stream(client) as stream:
        search = GridSearchCV(MKLClassifier(kernels="precomputed"), grid, cv=3,
                              n_jobs=-1).fit(stack, y)
        scores = cross_val_score(MKLClassifier(kernels=SPECS[:8], regularizer="l1", n_jobs=-1),
                                 X, y, cv=3, n_jobs=-1)
    assert len(_workers(stream)) == 2
    np.testing.assert_allclose(search.cv_results_["mean_test_score"],
                               search_local.cv_results_["mean_test_score"])
    assert search.best_params_ == search_local.best_params_
    np.testing.assert_allclose(
        scores, cross_val_score(MKLClassifier(kernels=SPECS[:8], regularizer="l1"), X, y, cv=3))


def test_workers_use_one_thread_per_fit(client):
    assert client.submit(local_jobs, -1, pure=False).result() == 1
    assert local_jobs(-1) == -1


class _KillsItsWorker(_NoSubset):
    """Rows that end the worker process computing them while ``flag`` exists (once; if the
    flag names a worker's address, only on that worker)."""

    def __init__(self, inner, flag):
        super().__init__(inner)
        self.flag = flag

    def rows(self, indices, kernels=None):
        if _on_worker() and self._claim():
            os._exit(1)
        return self.inner.rows(indices, kernels)

    def _claim(self):
        """True for the one task that removes the flag (two workers may both see it)."""
        from distributed import get_worker

        try:
            with open(self.flag) as file:
                only_on = file.read().strip()
        except FileNotFoundError:
            return False
        if only_on and only_on != get_worker().address:
            return False
        try:
            os.remove(self.flag)
        except FileNotFoundError:
            return False
        return True


def _on_worker():
    from mklearn.distributed import in_dask_worker

    return in_dask_worker()


def _one_copy_each(client, futures, timeout=30):
    """Let Dask's active memory manager drop the extra copies of scattered ``futures`` (as
    it does every 2 s by default); {key: the worker holding its one copy}."""
    keys = {f.key for f in futures}
    deadline = time.monotonic() + timeout
    while True:
        client.amm.run_once()
        holders = {k: w for k, w in client.who_has().items() if k in keys}
        if all(len(w) == 1 for w in holders.values()):
            return {k: w[0] for k, w in holders.items()}
        assert time.monotonic() < deadline, holders
        time.sleep(0.1)


@pytest.mark.parametrize("one_copy", [False, True], ids=["copies-on-all", "one-copy-left"])
def test_a_worker_killed_mid_pass_gives_the_right_result(client, tmp_path, one_copy):
    X, _ = _data()
    stack = KernelBank(SPECS).fit_transform(X)
    v = _coefficients(X.shape[0])
    flag = tmp_path / "kill-once"
    provider = _KillsItsWorker(StackColumns(stack), str(flag))
    client.wait_for_workers(2, timeout=60)
    before = set(client.nthreads())
    operator = DaskKernels(RowKernels(provider, 1.0), client, n_blocks=4)
    # with one copy left, the worker holding it dies: the block is sent again
    holder = _one_copy_each(client, operator._parts[:1]) if one_copy else {}
    flag.write_text("".join(holder.values()))
    g = operator.kernel_gradient(None, v)
    assert not flag.exists()  # a worker did die
    assert operator.n_rescatters >= int(one_copy)
    client.wait_for_workers(2, timeout=60)
    assert set(client.nthreads()) != before  # the nanny started a new one
    np.testing.assert_allclose(g, np.einsum("i,ijk,j->k", v, stack, v), rtol=1e-12)


def test_workers_that_keep_dying_give_a_clear_error(client, tmp_path):
    import dask

    X, _ = _data()
    flag = tmp_path / "kill-always"
    flag.touch()
    provider = _KillsAlways(StackColumns(KernelBank(SPECS).fit_transform(X)), str(flag))
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as own:
            operator = DaskKernels(RowKernels(provider, 1.0), own, n_blocks=2)
            with pytest.raises(RuntimeError, match="Dask lost the workers.*no partial model"):
                operator.kernel_gradient(None, _coefficients(X.shape[0]))


class _KillsAlways(_KillsItsWorker):
    def rows(self, indices, kernels=None):
        if _on_worker() and os.path.exists(self.flag):
            os._exit(1)
        return self.inner.rows(indices, kernels)


def test_a_closed_client_is_a_clear_error():
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster:
        closed = Client(cluster, set_as_default=False)
        with joblib.parallel_config(backend="dask", client=closed):
            closed.close()
            with pytest.raises(RuntimeError, match="Client is closed.*Client\\(LocalCluster"):
                MKLClassifier(kernels=SPECS, regularizer="l1", n_jobs=-1).fit(*_data())
    assert active_client(-1) is None  # no Dask backend: local


def test_no_client_is_a_clear_error():
    """Without any Client, the Dask backend refuses to start and names what to create."""
    code = ("import joblib\n"
            "try:\n"
            "    with joblib.parallel_config(backend='dask'):\n"
            "        pass\n"
            "except ValueError as error:\n"
            "    print(error)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120).stdout
    assert "create a Dask Client" in out and "Client()" in out


def test_worker_versions_are_checked(client):
    versions = check_workers(client)
    assert set(versions) == set(client.nthreads())
    mine = re.escape(mklearn.__version__)
    with pytest.raises(RuntimeError, match=rf"need mklearn 9\.9 .*found .*: {mine}"):
        check_workers(client, expected="9.9")
    with pytest.raises(RuntimeError, match="not installed"):
        check_workers(client, package="mklearn_not_installed", expected="1.0")



def test_string_kernels_on_workers(client):
    """String providers cannot split into blocks: sent whole once, blocks name kernels."""
    from mklearn.datasets import load_promoters
    from mklearn.kernels.strings import wd_sub_kernels

    seqs, y = load_promoters()
    params = dict(kernels=wd_sub_kernels(8, by="kmer"), C=1000, kernel_normalization="trace",
                  kernel_storage="rows", regularizer="l1")
    local = MKLClassifier(**params).fit(seqs, y)
    with joblib.parallel_config(backend="dask"), get_task_stream(client) as stream:
        remote = MKLClassifier(n_jobs=-1, **params).fit(seqs, y)
    assert len(_workers(stream)) == 2
    np.testing.assert_allclose(remote.kernel_weights_, local.kernel_weights_, atol=1e-6)
    assert np.array_equal(remote.predict(seqs), local.predict(seqs))


def test_spare_bytes_count_the_rows_of_k_d_this_operator_made():
    X, _ = _data()
    local = _operator(X)
    remote = DaskKernels(local, None)
    budget = local.spare_bytes()
    assert remote.spare_bytes() == budget > 0
    K = remote.kernel(np.full(local.n_kernels, 1.0 / local.n_kernels))
    K.load(0)
    K.load(1)
    assert remote.spare_bytes() == budget - 2 * 8 * X.shape[0]
    assert local.spare_bytes() == budget  # the wrapped operator made no K(d)


@pytest.mark.parametrize("n_kernels", [10_000, 100_000])
def test_the_set_up_reads_the_kernel_names_once_per_block(n_kernels, monkeypatch):
    """Each read of ``kernel_names`` copies the list: reading it per kernel made the set-up
    quadratic in the number of kernels (10^6 kernels: hours)."""
    reads = []
    names = KernelOperator.kernel_names
    monkeypatch.setattr(KernelOperator, "kernel_names", property(
        lambda self: reads.append(1) or names.fget(self), names.fset))
    X = np.random.default_rng(0).normal(size=(12, 5))
    specs = [RBF(sigma=1.0 + 1e-6 * k, features=[k % 5]) for k in range(n_kernels)]
    local = RowKernels(KernelColumns(KernelBank(specs).fit(X)), 200)
    reads.clear()
    remote = DaskKernels(local, None)
    assert remote.n_kernels == n_kernels
    assert len(reads) <= 2 * remote.n_blocks + 2
