"""SumOfKernels: the combined kernel and the quadratic terms, for float64 and float32 stacks."""

import numpy as np
import pytest

from mklearn.combinations import SumOfKernels


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
    np.testing.assert_allclose(combination.kernel(d), exact_stack @ d, rtol=1e-12, atol=1e-9)
    g = np.einsum("i,ijk,j->k", v, exact_stack, v)
    np.testing.assert_allclose(combination.kernel_gradient(d, v), g, rtol=1e-10)


@pytest.mark.parametrize("n_active", [1, 3, 4, 5, 8, 11])
def test_combine_any_number_of_active_kernels(n_active):
    rng = np.random.default_rng(n_active)
    A = rng.normal(size=(12, 9, 9))
    stack = np.einsum("kij,klj->ilk", A, A)
    d = np.zeros(12)
    d[rng.choice(12, n_active, replace=False)] = rng.uniform(0.1, 1.0, n_active)
    np.testing.assert_allclose(SumOfKernels(stack).kernel(d), stack @ d, rtol=1e-12)


def test_known_kernel_sum_serves_uniform_weights_only():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(5, 7, 7))
    stack = np.einsum("kij,klj->ilk", A, A)
    marker = np.full((7, 7), 3.0)  # not the true sum: shows where it is used
    combination = SumOfKernels(stack, kernel_sum=marker)
    np.testing.assert_array_equal(combination.kernel(np.full(5, 0.2)), 0.2 * marker)
    d = np.array([0.2, 0.2, 0.2, 0.2, 0.1])
    np.testing.assert_allclose(combination.kernel(d), stack @ d, rtol=1e-12)
    np.testing.assert_allclose(combination.kernel(np.zeros(5)), np.zeros((7, 7)))


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
