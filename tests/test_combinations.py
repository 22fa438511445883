"""SumOfKernels: the combined kernel and the quadratic terms, for float64 and float32 stacks."""

from unittest.mock import patch

import numpy as np
import pytest

from mklearn.formulation.combinations import SumOfKernels
from mklearn.kernels.row_sources import DenseRows, StackCombinedRows
from mklearn.kernels.stack_checks import check_kernel_stack
from mklearn.kernels.stack_ops import kernel_major
from mklearn.kernels.threads import numba_threads


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("density", [0.1, 1.0])
def test_sums_are_accumulated_in_float64(dtype, density):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(12, 40, 40))
    stack = np.einsum("kij,klj->ilk", A, A).astype(dtype)  # (n, n, m), PSD kernels
    d = rng.uniform(size=12) * (rng.uniform(size=12) < density)
    d[0] = 1.0
    v = rng.normal(size=40)
    exact_stack = stack.astype(np.float64)
    combination = SumOfKernels(stack)
    # float32 entries summed in float64: equal to float64 arithmetic on the same entries
    np.testing.assert_allclose(combination.matrix(d), exact_stack @ d, rtol=1e-12, atol=1e-9)
    g = np.einsum("i,ijk,j->k", v, exact_stack, v)
    np.testing.assert_allclose(combination.kernel_gradient(d, v), g, rtol=1e-10)


@pytest.mark.parametrize("n_active", [1, 3, 4, 5, 8, 11])
def test_combine_any_number_of_active_kernels(n_active):
    rng = np.random.default_rng(n_active)
    A = rng.normal(size=(12, 9, 9))
    stack = np.einsum("kij,klj->ilk", A, A)
    d = np.zeros(12)
    d[rng.choice(12, n_active, replace=False)] = rng.uniform(0.1, 1.0, n_active)
    np.testing.assert_allclose(SumOfKernels(stack).matrix(d), stack @ d, rtol=1e-12)


def test_known_kernel_sum_serves_uniform_weights_only():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(5, 7, 7))
    stack = np.einsum("kij,klj->ilk", A, A)
    marker = np.full((7, 7), 3.0)  # not the true sum: shows where it is used
    combination = SumOfKernels(stack, kernel_sum=marker)
    np.testing.assert_array_equal(combination.matrix(np.full(5, 0.2)), 0.2 * marker)
    d = np.array([0.2, 0.2, 0.2, 0.2, 0.1])
    np.testing.assert_allclose(combination.matrix(d), stack @ d, rtol=1e-12)
    np.testing.assert_allclose(combination.matrix(np.zeros(5)), np.zeros((7, 7)))


def test_the_last_combined_kernel_is_served_again_for_the_same_weights_only():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(4, 6, 6))
    stack = np.einsum("kij,klj->ilk", A, A)
    combination = SumOfKernels(stack)
    d = np.array([0.5, 0.0, 0.25, 0.25])
    first = combination.matrix(d)
    assert combination.matrix(d.copy()) is first  # the check after a solve reads no stack
    other = combination.matrix(np.array([0.5, 0.1, 0.2, 0.2]))
    assert other is not first
    np.testing.assert_allclose(other, stack @ np.array([0.5, 0.1, 0.2, 0.2]), rtol=1e-12)
    np.testing.assert_allclose(combination.matrix(d), stack @ d, rtol=1e-12)


def test_rows_of_the_learned_kernel_times_a_vector_from_the_kept_matrix_or_the_kernels():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(4, 7, 7))
    stack = np.einsum("kij,klj->ilk", A, A)
    combination = SumOfKernels(stack)
    d, v, rows = np.array([0.5, 0.0, 0.25, 0.25]), rng.normal(size=7), np.array([1, 4, 6])
    expected = (stack @ d)[rows] @ v
    with patch.object(SumOfKernels, "kernel_rows_times",
                      side_effect=AssertionError("read the kernels' rows")):
        combination.matrix(d)
        np.testing.assert_allclose(combination.combined_rows_times(d, rows, v), expected,
                                   rtol=1e-12)
    other = np.array([0.1, 0.2, 0.3, 0.4])  # not the kept K(d): the kernels' rows
    np.testing.assert_allclose(combination.combined_rows_times(other, rows, v),
                               (stack @ other)[rows] @ v, rtol=1e-12)
    assert combination.combined_rows_times(np.zeros(4), rows, v).tolist() == [0.0] * 3


def test_stack_columns_combine_as_the_sum_of_kernels():
    from mklearn.kernels.columns import StackColumns

    rng = np.random.default_rng(4)
    A = rng.normal(size=(5, 8, 8))
    stack = np.einsum("kij,klj->ilk", A, A).astype(np.float32)
    d = np.array([0.0, 0.3, 0.3, 0.0, 0.4])
    np.testing.assert_array_equal(StackColumns(stack).matrix(d), SumOfKernels(stack).matrix(d))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_products_predict_the_quadratic_terms_up_to_the_second_order_term(dtype):
    rng = np.random.default_rng(2)
    A = rng.normal(size=(6, 20, 20))
    stack = np.einsum("kij,klj->ilk", A, A).astype(dtype)
    exact = stack.astype(np.float64)
    combination = SumOfKernels(stack)
    v = rng.normal(size=20)
    g, products = combination.gradient_and_products(v)
    np.testing.assert_allclose(g, np.einsum("i,ijk,j->k", v, exact, v), rtol=1e-10)
    np.testing.assert_allclose(products, np.einsum("ijk,j->ki", exact, v), rtol=1e-10, atol=1e-9)
    step = 0.1 * rng.normal(size=20)
    moved = np.einsum("i,ijk,j->k", v + step, exact, v + step)
    second_order = np.einsum("i,ijk,j->k", step, exact, step)
    np.testing.assert_allclose(g + 2 * products @ step + second_order, moved, rtol=1e-9)
    g_some, products_some = combination.gradient_and_products(v, [4, 1])
    np.testing.assert_array_equal(g_some, g[[4, 1]])
    np.testing.assert_array_equal(products_some, products[[4, 1]])
    sparse = np.zeros(20)
    sparse[:4] = 1.0  # rows read one by one: no products
    assert combination.gradient_and_products(sparse) is None


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_products_from_the_support_rows_equal_those_from_every_row(dtype):
    rng = np.random.default_rng(5)
    A = rng.normal(size=(5, 40, 40))
    stack = np.einsum("kij,klj->ilk", A, A).astype(dtype)
    exact = stack.astype(np.float64)
    combination = SumOfKernels(stack)
    v = np.zeros(40)
    v[rng.choice(40, 15, replace=False)] = rng.normal(size=15)  # under half: support rows
    g, products = combination.gradient_and_products(v, [3, 0, 2])
    np.testing.assert_allclose(products, np.einsum("ijk,j->ki", exact, v)[[3, 0, 2]],
                               rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(g, np.einsum("i,ijk,j->k", v, exact, v)[[3, 0, 2]], rtol=1e-10)


def test_kernel_major_input_is_used_without_a_copy_and_other_layouts_are_copied_exactly():
    rng = np.random.default_rng(6)
    A = rng.normal(size=(4, 9, 9))
    by_kernel = np.einsum("kij,klj->kil", A, A)  # (m, n, n), C-contiguous
    public = np.moveaxis(by_kernel, 0, -1)  # the (n, n, m) view of it
    assert np.shares_memory(kernel_major(public), by_kernel)
    assert np.shares_memory(SumOfKernels(public).kernel_major, by_kernel)
    stack, _ = check_kernel_stack(public, np.tile([1, -1], 5)[:9])
    assert np.shares_memory(stack, by_kernel)
    copied = np.ascontiguousarray(public)  # sample-major (n, n, m): one blocked copy
    converted = kernel_major(copied)
    assert converted.flags.c_contiguous and not np.shares_memory(converted, copied)
    np.testing.assert_array_equal(converted, by_kernel)
    rectangular = np.ascontiguousarray(rng.normal(size=(3, 7, 4)))  # test stacks (n_test, n, m)
    np.testing.assert_array_equal(kernel_major(rectangular), rectangular.transpose(2, 0, 1))


def test_threaded_passes_over_the_stack_give_the_serial_results_bit_for_bit():
    rng = np.random.default_rng(7)
    A = rng.normal(size=(9, 120, 40))
    stack = np.einsum("kij,klj->ilk", A, A)  # 9 kernels on 120 points: above the crossover
    combination = SumOfKernels(stack)
    d = np.zeros(9)
    d[[0, 2, 3, 5, 6, 8]] = rng.random(6)  # six active: a group of four and two more
    sparse = np.zeros(120)
    sparse[rng.choice(120, 40, replace=False)] = rng.normal(size=40)  # the support rows
    dense = rng.normal(size=120)
    with numba_threads(1):
        serial = [combination.matrix(d), *combination.gradient_and_products(sparse),
                  *combination.gradient_and_products(dense)]
    with (numba_threads(2), patch("mklearn.kernels.threads.PARALLEL_MIN_VALUES", 1),
          patch("mklearn.kernels.stack_ops.PARALLEL_COMBINE_MIN_SAMPLES", 1)):
        threaded = [combination.matrix(d), *combination.gradient_and_products(sparse),
                    *combination.gradient_and_products(dense)]
    for a, b in zip(serial, threaded, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rows_combined_on_demand_equal_the_dense_combined_kernel(dtype):
    rng = np.random.default_rng(8)
    A = rng.normal(size=(7, 30, 30))
    stack = np.einsum("kij,klj->ilk", A, A).astype(dtype)
    combination = SumOfKernels(stack)
    d = np.zeros(7)
    d[[0, 1, 2, 4, 6]] = rng.random(5)  # a group of four and one more
    dense = combination.matrix(d)
    rows = combination.kernel_rows(d, expected_rows=0)
    v = np.zeros(30)
    v[rng.choice(30, 12, replace=False)] = rng.normal(size=12)
    np.testing.assert_allclose(rows @ v, dense @ v, rtol=1e-12, atol=1e-12)
    assert np.count_nonzero(rows.slot_of >= 0) == 12  # only the support's rows were combined
    picked = np.array([3, 5, 17])
    np.testing.assert_allclose(rows.submatrix(picked), dense[np.ix_(picked, picked)], rtol=1e-12)
    np.testing.assert_allclose(rows.diagonal()[0], np.diagonal(dense), rtol=1e-12)
    with (numba_threads(2), patch("mklearn.kernels.threads.PARALLEL_MIN_VALUES", 1)):
        threaded = combination.kernel_rows(d, expected_rows=0)
        threaded.matvec(np.ones(30))
    np.testing.assert_allclose(threaded.store, dense.reshape(30, 1, 30), rtol=1e-12)


def test_svm_on_rows_combined_on_demand_reaches_the_dense_optimum():
    from mklearn.svm.smo import svc_dual

    rng = np.random.default_rng(9)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 0, 1.0, -1.0)
    stack = np.stack([np.exp(-g * ((X[:, None] - X[None]) ** 2).sum(-1)) for g in (0.1, 1, 3)],
                     axis=2)
    combination = SumOfKernels(stack)
    d = np.array([0.5, 0.3, 0.2])
    cold = svc_dual(combination.kernel(d), y, 10.0, tol=1e-8)
    on_rows = svc_dual(combination.kernel_rows(d, 0), y, 10.0, tol=1e-8)
    np.testing.assert_allclose(on_rows.objective, cold.objective, rtol=1e-10)
    warm = svc_dual(combination.kernel_rows(np.array([0.4, 0.4, 0.2]), 0), y, 10.0,
                    alpha0=cold.alpha, tol=1e-8)  # warm start: the support's rows in one batch
    reference = svc_dual(combination.kernel(np.array([0.4, 0.4, 0.2])), y, 10.0, tol=1e-8)
    np.testing.assert_allclose(warm.objective, reference.objective, rtol=1e-8)


def test_solves_expected_to_read_most_rows_get_the_dense_combined_kernel():
    rng = np.random.default_rng(10)
    A = rng.normal(size=(3, 10, 10))
    combination = SumOfKernels(np.einsum("kij,klj->ilk", A, A))
    d = np.array([0.5, 0.0, 0.5])
    assert isinstance(combination.kernel_rows(d, expected_rows=9), DenseRows)
    assert isinstance(combination.kernel_rows(d), DenseRows)  # a cold start: no estimate
    assert isinstance(combination.kernel_rows(d, expected_rows=2), StackCombinedRows)


def _sparse(rng, n, size):
    v = np.zeros(n)
    v[rng.choice(n, size, replace=False)] = rng.normal(size=size)
    return v


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_quadratic_terms_from_support_blocks_are_exact_as_supports_move(dtype, monkeypatch):
    rng = np.random.default_rng(11)
    A = rng.normal(size=(15, 200, 30))
    stack = np.einsum("kij,klj->ilk", A, A).astype(dtype)
    exact = stack.astype(np.float64).transpose(2, 0, 1)
    share = 0.3 * 8 / stack.itemsize  # 6-20 blocks fit (float64 blocks)
    with patch("mklearn.formulation.support_blocks.STACK_SHARE", share):
        combination = SumOfKernels(stack)
    monkeypatch.setattr("mklearn.formulation.support_blocks.START_AFTER", 0)
    blocks = combination._support_blocks
    restarts = evictions = points = held = 0
    for _ in range(150):  # supports that drift, jump, shrink to nothing and regrow
        v = _sparse(rng, 200, int(rng.integers(0, 50)))
        kernels = np.sort(rng.choice(15, int(rng.integers(1, 7)), replace=False))
        g = combination.kernel_gradient(None, v, kernels)
        np.testing.assert_allclose(g, np.einsum("i,kij,j->k", v, exact[kernels], v),
                                   rtol=1e-10, atol=1e-10)
        restarted = blocks.n_points < points or blocks.n_points == 0
        restarts += restarted
        evictions += not restarted and blocks._slot_kernels.size < held
        points, held = blocks.n_points, blocks._slot_kernels.size
        assert set(np.flatnonzero(v)) <= set(blocks._index[:points].tolist())
    assert restarts > 0 and evictions > 0  # W restarted, and kernels dropped to make room


def test_support_blocks_beyond_their_budget_leave_the_stack_pass_in_charge(monkeypatch):
    rng = np.random.default_rng(12)
    A = rng.normal(size=(6, 80, 20))
    stack = np.einsum("kij,klj->ilk", A, A)
    with patch("mklearn.formulation.support_blocks.STACK_SHARE", 1.0):
        combination = SumOfKernels(stack)
    v = _sparse(rng, 80, 15)
    for _ in range(3):  # the first requests read the stack: no blocks yet
        np.testing.assert_allclose(combination.kernel_gradient(None, v),
                                   np.einsum("i,ijk,j->k", v, stack, v), rtol=1e-12)
    assert combination._support_blocks.n_points == 0
    g = np.einsum("i,ijk,j->k", v, stack, v)
    monkeypatch.setattr("mklearn.formulation.support_blocks.START_AFTER", 0)
    with patch("mklearn.formulation.support_blocks.MAX_BYTES", 0):
        tiny = SumOfKernels(stack)
    np.testing.assert_allclose(tiny.kernel_gradient(None, v), g, rtol=1e-12)
    assert tiny._support_blocks.quadratic_terms(v, np.arange(6), np.flatnonzero(v)) is None
    np.testing.assert_allclose(combination.kernel_gradient(None, v), g, rtol=1e-12)
    assert combination._support_blocks.n_points == 15


def test_threaded_support_blocks_give_the_serial_results_bit_for_bit(monkeypatch):
    monkeypatch.setattr("mklearn.formulation.support_blocks.START_AFTER", 0)
    rng = np.random.default_rng(13)
    A = rng.normal(size=(9, 400, 30))
    stack = np.einsum("kij,klj->ilk", A, A)
    v = _sparse(rng, 400, 60)
    with numba_threads(1):
        serial = SumOfKernels(stack).kernel_gradient(None, v)
    with numba_threads(2), patch("mklearn.kernels.threads.PARALLEL_MIN_VALUES", 1):
        threaded = SumOfKernels(stack).kernel_gradient(None, v)
    np.testing.assert_array_equal(serial, threaded)


def _psd_stack(m, n, seed=0):
    A = np.random.default_rng(seed).normal(size=(m, n, n))
    return np.einsum("kij,klj->ilk", A, A) / n  # (n, n, m)


def test_stack_reads_count_each_value_a_pass_reads():
    m, n = 8, 30
    stack = _psd_stack(m, n)
    combination = SumOfKernels(stack, kernel_sum=stack.sum(axis=2))
    assert combination.stack_passes == 1.0  # the sum's pass
    d = np.zeros(m)
    d[:4] = 0.25
    combination.matrix(d)  # four of eight kernels, every value
    assert combination.stack_passes == pytest.approx(1.5)
    combination.matrix(d)  # the same weights: the kept matrix, nothing read
    assert combination.stack_passes == pytest.approx(1.5)
    v = np.zeros(n)
    v[[2, 7, 11]] = 1.0
    combination.products(v, kernels=np.array([0, 5]))  # two kernels, three rows each
    assert combination.reads.values == int(1.5 * m * n * n) + 2 * 3 * n
    before = combination.reads.values
    combination.kernel_gradient(d, np.ones(n))  # every row, each up to its diagonal
    assert combination.reads.values - before == m * n * (n + 1) // 2


def test_rows_combined_on_demand_count_only_the_rows_read():
    m, n = 6, 40
    combination = SumOfKernels(_psd_stack(m, n))
    assert combination.stack_passes == 0.0  # no sum given: nothing read yet
    d = np.zeros(m)
    d[[1, 4]] = 0.5
    rows = combination.kernel_rows(d, expected_rows=5)
    assert isinstance(rows, StackCombinedRows)
    diagonals = combination.reads.values  # the diagonals, read once
    assert diagonals == m * n
    rows.submatrix(np.array([3, 9, 20]))
    rows.load(9)  # combined already
    assert combination.reads.values - diagonals == 3 * 2 * n


def test_a_fit_reports_its_passes_over_the_stack():
    from sklearn.datasets import make_classification

    from mklearn import MKLClassifier, MKLRegressor

    X, y = make_classification(60, 5, random_state=0)
    gammas = np.logspace(-2, 0, 5)
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    stack = np.exp(-gammas * sq[:, :, None])
    for solver in ("spg", "easymkl", "smo"):
        model = MKLClassifier(kernels="precomputed", solver=solver).fit(stack, y)
        assert 1.0 <= model.stack_passes_ < 500, solver  # the check's pass, then the solver's
    regressor = MKLRegressor(kernels="precomputed").fit(stack, y.astype(float))
    assert regressor.stack_passes_ >= 1.0
    from mklearn.kernels import RBF

    rows = MKLClassifier(kernels=[RBF(gamma=0.1), RBF(gamma=1.0)], kernel_storage="rows")
    assert rows.fit(X, y).stack_passes_ is None  # rows computed from X, no stack


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_c_contiguous_stack_is_read_as_it_is_until_products_need_it_kernel_major(dtype):
    m, n = 7, 50
    stack = np.ascontiguousarray(_psd_stack(m, n, seed=3).astype(dtype))  # (n, n, m)
    exact = stack.astype(np.float64)
    kernel_major_view = np.ascontiguousarray(stack.transpose(2, 0, 1)).transpose(1, 2, 0)
    as_is, reference = SumOfKernels(stack), SumOfKernels(kernel_major_view)
    rng = np.random.default_rng(3)
    d = np.where(rng.uniform(size=m) < 0.6, rng.uniform(size=m), 0.0)
    d[0] = 0.5
    v = np.where(rng.uniform(size=n) < 0.5, rng.normal(size=n), 0.0)
    kernels, rows = np.array([4, 0, 2]), np.array([9, 3, 30])
    np.testing.assert_allclose(as_is.matrix(d), exact @ d, rtol=1e-12)
    np.testing.assert_allclose(as_is.kernel_gradient(d, v),
                               np.einsum("i,ijk,j->k", v, exact, v), rtol=1e-9)
    np.testing.assert_allclose(as_is.kernel_gradient(d, v, kernels),
                               reference.kernel_gradient(d, v, kernels), rtol=1e-9)
    np.testing.assert_array_equal(as_is.rows(rows, kernels), reference.rows(rows, kernels))
    np.testing.assert_array_equal(as_is.diagonal(), reference.diagonal())
    np.testing.assert_allclose(as_is.kernel_rows_times(kernels, rows, v),
                               reference.kernel_rows_times(kernels, rows, v), rtol=1e-12)
    np.testing.assert_array_equal(as_is.point_subset(rows).rows(np.arange(3)),
                                  reference.point_subset(rows).rows(np.arange(3)))
    assert not as_is.kernel_view.flags.c_contiguous  # no kernel-major copy so far
    passes = as_is.stack_passes
    np.testing.assert_allclose(as_is.products(v), reference.products(v), rtol=1e-12)
    assert as_is.kernel_view.flags.c_contiguous  # made for the products, one pass
    assert as_is.stack_passes == pytest.approx(passes + 1 + np.count_nonzero(v) / n)
