"""The one-pass checks of precomputed stacks (from the sum of the kernels): symmetry, NaN/inf,
negative diagonal; and the check of the learned kernel."""

import numpy as np
import pytest

from mklearn.kernels.stack_checks import check_kernel_stack


@pytest.fixture
def stack_and_labels():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(30, 4, 6))
    stack = np.einsum("ifk,jfk->ijk", features, features)
    return stack, np.where(np.arange(30) < 15, 1, -1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_valid_stacks_pass(stack_and_labels, dtype):
    stack, y = stack_and_labels
    checked, _ = check_kernel_stack(stack.astype(dtype), y)
    np.testing.assert_array_equal(checked, stack.astype(dtype))


@pytest.mark.parametrize("where", [(0, 0, 1), (3, 7, 5), (29, 2, 0)])
@pytest.mark.parametrize("value, message", [(np.nan, "NaN"), (np.inf, "infinity")])
def test_non_finite_entries_are_named(stack_and_labels, where, value, message):
    stack, y = stack_and_labels
    stack[where] = value
    with pytest.raises(ValueError, match=message):
        check_kernel_stack(stack, y)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_small_asymmetry_is_found_and_measured(stack_and_labels, dtype):
    stack, y = stack_and_labels
    scale = np.abs(np.einsum("iik->k", stack)).max()
    stack[4, 9, 3] += 1e-3 * scale
    with pytest.raises(ValueError, match=r"kernel 3 is not symmetric \(max \|K - K'\| = "):
        check_kernel_stack(stack.astype(dtype), y)


def test_negative_diagonal_is_named(stack_and_labels):
    stack, y = stack_and_labels
    stack[5, 5, 2] = -1.0
    with pytest.raises(ValueError, match="kernel 2 has a negative diagonal"):
        check_kernel_stack(stack, y)


def test_cancelling_asymmetries_are_caught_in_the_learned_kernel(stack_and_labels):
    from mklearn.kernels.stack_checks import check_learned_kernel

    stack, y = stack_and_labels
    scale = np.abs(np.einsum("iik->k", stack)).max()
    skew = np.zeros((30, 30))
    skew[2, 7], skew[7, 2] = 1e-3 * scale, -1e-3 * scale
    stack[:, :, 1] += skew + np.eye(30)  # the ridge keeps them positive definite
    stack[:, :, 4] += np.eye(30) - skew  # the plain sum stays symmetric
    check_kernel_stack(stack, y)
    stack_km = np.ascontiguousarray(stack.transpose(2, 0, 1))
    check_learned_kernel(stack_km, np.array([0, 0.5, 0, 0, 0.5, 0]))  # cancels again
    with pytest.raises(ValueError, match="kernel 1 is not symmetric"):
        check_learned_kernel(stack_km, np.array([0, 0.7, 0, 0, 0.3, 0]))
    with pytest.raises(ValueError, match="kernel 4 is not symmetric"):
        check_learned_kernel(stack_km, np.array([0.5, 0, 0, 0, 0.5, 0]))


def test_overflowing_sum_is_named(stack_and_labels):
    stack, y = stack_and_labels
    stack[0, 0, :] = 1e308
    with pytest.raises(ValueError, match="overflows when its kernels are summed"):
        check_kernel_stack(stack, y)


@pytest.mark.parametrize("indefinite", [False, True])
def test_psd_factorisation_in_place_gives_the_copy_s_answer_and_restores_the_matrix(indefinite):
    """The Cholesky test of ``K + shift I`` on K itself: the same answer as on a copy, no
    ``n x n`` allocation, and K back as it was (its upper triangle rebuilt from the lower
    one: exactly K for a symmetric K, the lower triangle mirrored for a slightly asymmetric
    one), also when the factorisation stops at a negative pivot."""
    import tracemalloc

    from mklearn.kernels.stack_checks import _factorises

    rng = np.random.default_rng(3)
    n = 400
    A = rng.normal(size=(n, n // 2))
    K = A @ A.T - (5.0 * np.eye(n) if indefinite else 0.0)
    shift = 1e-6 * np.abs(K).max()
    expected = _factorises(K, shift)
    original = K.copy()
    _factorises(np.eye(3), 0.0, overwrite=True)  # compiles the mirror outside the trace
    tracemalloc.start()
    assert _factorises(K, shift, overwrite=True) == expected == (not indefinite)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < K.nbytes / 10
    assert K.tobytes() == original.tobytes()
    K[3, 7] += 1e-12  # asymmetric within the symmetry check's tolerance
    _factorises(K, shift, overwrite=True)
    assert K[3, 7] == K[7, 3] == original[7, 3]
    assert np.array_equal(np.diagonal(K), np.diagonal(original))


@pytest.mark.parametrize("module, name, home", [
    ("mklearn.validation", "check_kernel_stack", "mklearn.kernels.stack_checks"),
    ("mklearn.validation", "validate_numeric", "mklearn.kernels.checks"),
    ("mklearn.memory", "default_budget", "mklearn.kernels.memory_limits"),
    ("mklearn.memory", "densify", "mklearn.kernels.checks"),
])
def test_moved_names_still_import_with_a_future_warning(module, name, home):
    import importlib

    with pytest.warns(FutureWarning, match=f"{module}.{name} moved to {home}.{name}"):
        moved = getattr(importlib.import_module(module), name)
    assert moved is getattr(importlib.import_module(home), name)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        _ = importlib.import_module(module).not_a_name
