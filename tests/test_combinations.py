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
