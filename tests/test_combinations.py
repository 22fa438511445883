"""SumOfKernels: the combined kernel and the quadratic terms, for float64 and float32 stacks,
read from the square stack or from its packed upper triangles."""

import numpy as np
import pytest

from mklearn.combinations import SumOfKernels


@pytest.mark.parametrize("packed", ["auto", None])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("density", [0.1, 1.0])
def test_sums_are_accumulated_in_float64(dtype, density, packed):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(12, 40, 40))
    stack = np.einsum("kij,klj->ilk", A, A).astype(dtype)  # (n, n, m), PSD kernels
    d = rng.uniform(size=12) * (rng.uniform(size=12) < density)
    d[0] = 1.0
    v = rng.normal(size=40)
    exact_stack = stack.astype(np.float64)
    combination = SumOfKernels(stack, packed)
    assert (combination._packed is None) == (packed is None)
    # float32 entries summed in float64: equal to float64 arithmetic on the same entries
    np.testing.assert_allclose(combination.kernel(d), exact_stack @ d, rtol=1e-12, atol=1e-9)
    g = np.einsum("i,ijk,j->k", v, exact_stack, v)
    np.testing.assert_allclose(combination.kernel_gradient(d, v), g, rtol=1e-10)


@pytest.mark.parametrize("n_support", [3, 40])
def test_packed_quadratic_terms_read_only_the_support_rows(n_support):
    rng = np.random.default_rng(1)
    A = rng.normal(size=(7, 40, 40))
    stack = np.einsum("kij,klj->ilk", A, A)
    v = np.zeros(40)
    support = rng.choice(40, n_support, replace=False)
    v[support] = rng.normal(size=n_support)
    kernels = np.array([6, 0, 3])
    g = np.einsum("i,ijk,j->k", v, stack, v)[kernels]
    for packed in ("auto", None):
        terms = SumOfKernels(stack, packed).kernel_gradient(np.ones(7), v, kernels)
        np.testing.assert_allclose(terms, g, rtol=1e-12)


def test_packed_and_square_stacks_give_the_same_sums():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(9, 17, 17))
    stack = np.einsum("kij,klj->ilk", A, A)
    d = np.array([0.0, 0.5, 0, 0.1, 0.2, 0.0, 0.05, 0.15, 0.0])  # 5 active: one remainder
    K = SumOfKernels(stack, "auto").kernel(d)
    np.testing.assert_allclose(K, SumOfKernels(stack, None).kernel(d), rtol=1e-13)
    np.testing.assert_array_equal(K, K.T)
