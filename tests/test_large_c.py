"""Every solver at C from 1e-6 to 1e300: finite models, the hard margin on separable data at
large C, and a warning naming C where the bound still matters (docs/bad_input.md)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mklearn import MKLClassifier, MKLRegressor
from mklearn.kernels import RBF, Polynomial
from mklearn.solvers import SOLVERS
from mklearn.svm.mkl_step import KIND_KL, KIND_LP, newton_step_length

FAMILY = [RBF(sigma=1.0), RBF(sigma=3.0), Polynomial(degree=2)]
GRID = [1e-6, 1.0, 1e4, 1e10, 1e300]
# (solver, regularizer) for every solver of the registry, classification
PAIRS = [("smo", "kl"), ("smo", "lp"), ("spg", "l1"), ("spg", "lp"), ("pgd", "l1"),
         ("mwu", "l1"), ("silp", "l1"), ("mirror", "l1"), ("mirror", "group"),
         ("average", "l1"), ("align", "l1"), ("alignf", "l1"), ("fheuristic", "l1"),
         ("pwmk", "l1"), ("easymkl", "l1")]


def test_the_grid_covers_every_solver():
    assert {solver for solver, _ in PAIRS} == set(SOLVERS)


@pytest.fixture(scope="module")
def separable():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    X[:, 0] += 0.5 * y  # a gap of 1 between the classes
    return X, y


def _finite(model, X):
    return (np.isfinite(model.decision_function(X)).all()
            and np.isfinite(model.kernel_weights_).all() and np.isfinite(model.intercept_).all())


@pytest.mark.parametrize("solver, regularizer", PAIRS)
def test_every_solver_on_the_grid_of_c(separable, solver, regularizer):
    X, y = separable
    for C in GRID:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = MKLClassifier(kernels=FAMILY, solver=solver, regularizer=regularizer,
                                  C=C).fit(X, y)
        assert _finite(model, X), C
        assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], C
        if C >= 1e4:  # the hard margin: every training point on its side
            assert np.mean(model.predict(X) == y) == 1.0, C
            # and a certified one: the primal bound at w / m (no slack) closes the gap
            assert not [w for w in caught if issubclass(w.category, ConvergenceWarning)], C


def test_overlapping_classes_at_huge_c_warn_naming_c(separable):
    X, y = separable
    X, y = X.copy(), y.copy()
    X[:5], y[:5] = X[5:10], -y[5:10]  # five points twice, with both labels
    for solver, regularizer in [("smo", "kl"), ("smo", "lp"), ("spg", "l1")]:
        with pytest.warns(UserWarning, match=r"C=1e\+300 is above the largest C"):
            model = MKLClassifier(kernels=FAMILY, solver=solver, regularizer=regularizer,
                                  C=1e300).fit(X, y)
        assert _finite(model, X)
        assert np.mean(model.predict(X) == y) >= 0.85  # 35 of 40 can be right


def test_a_convergence_warning_at_large_c_says_how_c_enters_the_gap(separable):
    X, y = separable
    with pytest.warns(ConvergenceWarning, match=r"at C=1e\+10 the duality gap holds C"):
        MKLClassifier(kernels=FAMILY, solver="spg", C=1e10, max_iter=1, tol=1e-12).fit(X, y)


def test_regressor_at_huge_c_is_finite(separable):
    X, _ = separable
    target = np.sin(X[:, 0])
    for solver in ("smo", "spg", "silp"):
        regularizer = "kl" if solver == "smo" else "l1"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = MKLRegressor(kernels=FAMILY, solver=solver, regularizer=regularizer,
                                 C=1e300).fit(X, target)
        prediction = model.predict(X)
        assert np.isfinite(prediction).all() and np.isfinite(model.intercept_).all()
        assert np.max(np.abs(prediction - target)) < 0.2


def _near_float32_max(X):
    """Three kernels scaled to 0.9 times float32's largest value, in float64."""
    sq = ((X[:, None] - X[None]) ** 2).sum(-1)
    stack = np.stack([np.exp(-sq), np.exp(-sq / 9.0), (1 + X @ X.T) ** 2], axis=-1)
    return stack / stack.max() * 0.9 * float(np.finfo(np.float32).max)


def test_stack_near_float32s_largest_value_in_float64(separable):
    # in float32 it is refused (tests/test_bad_input.py): its solvers' float32 sums overflow
    X, y = separable
    stack = _near_float32_max(X)
    for solver, regularizer in [("smo", "kl"), ("smo", "lp"), ("spg", "l1"), ("mwu", "l1"),
                                ("silp", "l1")]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # ConvergenceWarning: gap of rounding
            model = MKLClassifier(kernels="precomputed", solver=solver, regularizer=regularizer,
                                  C=1e4 if solver == "mwu" else 1.0).fit(stack, y)
        assert _finite(model, stack)
        assert np.max(model.kernel_weights_) < 1e3
        assert np.mean(model.predict(stack) == y) == 1.0, solver


def test_silp_converges_whatever_the_kernels_units(separable):
    # its master LP sees the cuts in units of the first one (values near 1e-37 here)
    X, y = separable
    stack = _near_float32_max(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = MKLClassifier(kernels="precomputed", solver="silp", regularizer="l1").fit(stack, y)
    assert model.relative_duality_gap_ <= model.tol
    assert np.mean(model.predict(stack) == y) == 1.0


@pytest.mark.parametrize("kind", [KIND_KL, KIND_LP])
@pytest.mark.parametrize("upper", [1e2, 1e10, 1e300])
def test_the_pair_step_finds_the_maximiser_in_any_box(kind, upper):
    # phi(t) = 2 t - r*(t^2 a / 2) from alpha = 0; its maximiser does not depend on the box
    g, b, a = np.zeros(3), np.zeros(3), np.array([1.5, 0.5, 3.0])
    prior = np.full(3, 1.0 / 3.0)
    reference = newton_step_length(0.0, 1.0, g, a, b, kind, 1.0, 1.5, prior, 2.0)
    assert 0.0 < reference < 1.0
    step = newton_step_length(0.0, upper, g, a, b, kind, 1.0, 1.5, prior, 2.0)
    assert step == pytest.approx(reference, rel=1e-10)
