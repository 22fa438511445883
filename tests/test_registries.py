"""The part registries: every registered kernel type, regulariser, combination, task and
solver fits and round-trips through a model file; a part of one's own is one class with its
name; unknown kernel kinds are refused before numba."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

import mklearn.cli as cli
from mklearn import MKLClassifier, MKLRegressor, OneClassMKL
from mklearn.extending import COMBINATIONS, REGULARIZERS, Regularizer, implements
from mklearn.formulation.regularizers import L1Penalty, LpNorm, make_regularizer
from mklearn.groups import check_groups
from mklearn.kernels import RBF, KernelBank, KernelSpec, Laplacian, Linear
from mklearn.kernels._numba import fill_kernel_stack
from mklearn.kernels.bank import _build_plan, _multi_block_arrays
from mklearn.kernels.specs import KERNEL_TYPES, KIND_LAPLACIAN, kernel_from_dict
from mklearn.persistence import REGULARIZER_PARAMS, load_model, save_model
from mklearn.solvers import SOLVERS
from mklearn.solvers.tasks import TASKS, make_task

SPECS = [RBF(sigma=1.0), RBF(sigma=3.0, features=[0, 1]), Linear(features=[2])]
GROUPS = [0, 0, 1]


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def _round_trip(model, X, tmp_path):
    path = tmp_path / "model.npz"
    save_model(model, path)
    loaded = load_model(path)
    output = "predict" if isinstance(model, MKLRegressor) else "decision_function"
    np.testing.assert_array_equal(getattr(loaded, output)(X), getattr(model, output)(X))
    return loaded


@pytest.fixture
def scratch_registries():
    """Parts a test registers are gone after it."""
    kept = [(registry, dict(registry)) for registry in (KERNEL_TYPES, REGULARIZERS)]
    yield
    for registry, parts in kept:
        registry._parts.clear()
        registry._parts.update(parts)


# ------------------------------------------------------------------ every registered part
@pytest.mark.parametrize("name", list(REGULARIZERS))
@pytest.mark.parametrize("given_as", ["name", "instance"])
def test_every_registered_regularizer_saves_and_loads(name, given_as, tmp_path):
    X, y = _data()
    groups = check_groups(GROUPS, len(SPECS))
    regularizer = (name if given_as == "name" else
                   make_regularizer(name, p=1.5, lam=0.5, groups=groups, prior=None))
    model = MKLClassifier(kernels=SPECS, regularizer=regularizer, p=1.5, lam=0.5,
                          groups=GROUPS if name == "group" else None).fit(X, y)
    loaded = _round_trip(model, X, tmp_path)
    assert type(loaded.regularizer) is type(model.regularizer)
    if given_as == "instance":
        assert loaded.regularizer.saved_params() == model.regularizer.saved_params()


def test_model_files_keep_instances_of_every_registered_regularizer():
    assert {REGULARIZERS[name].__name__ for name in REGULARIZERS} == set(REGULARIZER_PARAMS)
    assert REGULARIZER_PARAMS["MixedNorm"] == ("groups",)


@pytest.mark.parametrize("type_name", list(KERNEL_TYPES))
def test_every_registered_kernel_type_saves_and_loads(type_name, tmp_path):
    X, y = _data()
    spec = KERNEL_TYPES[type_name]()
    assert kernel_from_dict(spec.to_dict()) == spec
    model = MKLClassifier(kernels=[spec, RBF(features=[0])], regularizer="l1").fit(X, y)
    _round_trip(model, X, tmp_path)


@pytest.mark.parametrize("name", list(COMBINATIONS))
def test_every_registered_combination_saves_and_loads(name, tmp_path):
    X, y = _data()
    kernels = "features" if name == "product" else SPECS
    model = MKLClassifier(kernels=kernels, combination=name, C=10).fit(X, y)
    _round_trip(model, X, tmp_path)


ESTIMATOR_OF_TASK = {"classification": MKLClassifier, "regression": MKLRegressor,
                     "one-class": OneClassMKL}


@pytest.mark.parametrize("name", list(TASKS))
def test_every_registered_task_saves_and_loads(name, tmp_path):
    X, y = _data()
    assert make_task(name, y, 1.0).name == name
    target = X @ [1.0, -0.5, 0.2] if name == "regression" else y
    model = ESTIMATOR_OF_TASK[name](kernels=SPECS).fit(X, target)
    _round_trip(model, X, tmp_path)


def _a_regularizer(info):
    """The first registered regulariser name (alphabetically) whose class the solver takes."""
    return next(name for name, part in sorted(REGULARIZERS.items()) if info.accepts(part))


@pytest.mark.parametrize("name", list(SOLVERS))
def test_every_solver_saves_and_loads(name, tmp_path):
    X, y = _data()
    regularizer = _a_regularizer(SOLVERS[name])
    model = MKLClassifier(kernels=SPECS, solver=name, regularizer=regularizer,
                          groups=GROUPS if regularizer == "group" else None).fit(X, y)
    loaded = _round_trip(model, X, tmp_path)
    assert loaded.solver_ == name


def test_the_command_line_and_the_docstrings_offer_every_registered_name():
    fit = cli._parser()._subparsers._group_actions[0].choices["fit"]
    choices = {action.dest: action.choices for action in fit._actions}
    assert list(choices["regularizer"]) == list(REGULARIZERS)
    assert list(choices["combination"]) == list(COMBINATIONS)
    doc = MKLClassifier.__doc__
    line = next(row for row in doc.splitlines() if row.strip().startswith("regularizer :"))
    assert all(f'"{name}"' in line for name in REGULARIZERS)


def test_docs_name_every_built_in_part():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "extending.md").read_text()
    built_in = [part.__name__ for registry in (REGULARIZERS, COMBINATIONS)
                for part in registry.values() if part.__module__.startswith("mklearn.")]
    assert [name for name in built_in if f"`{name}`" not in text] == []


@pytest.mark.usefixtures("scratch_registries")
def test_assigning_into_a_registry_is_deprecated():
    class Ridge(LpNorm):
        pass

    with pytest.warns(FutureWarning, match="define the class with its name"):
        REGULARIZERS["ridge"] = Ridge
    assert REGULARIZERS["ridge"] is Ridge


# ------------------------------------------------------------------ parts of one's own
@pytest.mark.usefixtures("scratch_registries")
def test_a_new_kernel_type_and_regularizer_are_one_class_each(tmp_path):
    @dataclass(frozen=True, kw_only=True)
    class Cauchy(KernelSpec):
        width: float = 1.0
        type_name: ClassVar[str] = "cauchy"

        def evaluate(self, X, Z):
            sq = ((X[:, None, :] - Z[None, :, :]) ** 2).sum(axis=-1)
            return 1.0 / (1.0 + sq / self.width**2)

    class Ridge(Regularizer, name="ridge"):
        """``lam/2 ||d||^2`` on ``d >= 0``."""

        def __init__(self, lam):
            self.lam = lam

        @classmethod
        def from_options(cls, *, p, lam, groups=None, prior=None):
            return cls(lam)

        def value(self, d):
            return 0.5 * self.lam * float(d @ d)

        def gradient(self, d):
            return self.lam * d

        def project(self, d):
            return np.maximum(d, 0.0)

    assert KERNEL_TYPES["cauchy"] is Cauchy and REGULARIZERS["ridge"] is Ridge
    X, y = _data()
    kernels = [Cauchy(width=2.0), Cauchy(width=0.5, features=[0, 1]), RBF(sigma=2.0)]
    bank = KernelBank(kernels, normalize=None)
    stack = bank.fit_transform(X)
    exact = 1.0 / (1.0 + ((X[:, None, :2] - X[None, :, :2]) ** 2).sum(-1) / 0.25)
    np.testing.assert_allclose(stack[:, :, 1], exact, rtol=1e-12)
    np.testing.assert_allclose(bank.transform(X[:5])[:, :, 1], exact[:5], rtol=1e-12)
    for regularizer in ("ridge", Ridge(2.0)):
        for storage in ("stack", "rows"):
            model = MKLClassifier(kernels=kernels, regularizer=regularizer, lam=2.0,
                                  kernel_storage=storage).fit(X, y)
            assert model.solver_ == "spg" and model.kernel_storage_ == storage
            loaded = _round_trip(model, X, tmp_path)
            assert list(loaded.bank_.specs) == kernels


@pytest.mark.usefixtures("scratch_registries")
def test_an_unregistered_regularizer_is_refused_at_save_time(tmp_path):
    class Ridge(LpNorm):  # a subclass without a name of its own
        pass

    X, y = _data()
    model = MKLClassifier(kernels=SPECS, regularizer=Ridge(2.0, 1.0)).fit(X, y)
    with pytest.raises(ValueError, match=r"cannot be saved.*register the class"):
        save_model(model, tmp_path / "m.npz")


@pytest.mark.usefixtures("scratch_registries")
def test_a_taken_name_is_refused():
    with pytest.raises(ValueError, match="regularizer name 'lp' is taken"):
        class Other(Regularizer, name="lp"):
            pass
    with pytest.raises(ValueError, match="kernel type name 'rbf' is taken"):
        @dataclass(frozen=True, kw_only=True)
        class OtherRBF(KernelSpec):
            type_name: ClassVar[str] = "rbf"

            def evaluate(self, X, Z):
                return X @ Z.T


def test_l1_penalty_has_a_string_name():
    X, y = _data()
    model = MKLClassifier(kernels=SPECS, regularizer="l1_penalty", lam=0.5).fit(X, y)
    part = model._regularizer_part()
    assert isinstance(part, L1Penalty) and part.sigma == 0.5 and L1Penalty.name == "l1_penalty"
    assert implements(part, "gradient") and model.solver_ == "spg"


# ---------------------------------------------------------------------- unknown kinds
@dataclass(frozen=True, kw_only=True)
class _NoFormula(KernelSpec):
    """A spec with a kind nothing evaluates (not registered)."""

    kind: ClassVar[int] = 7


def test_an_unknown_kernel_kind_is_a_value_error_before_numba():
    X, _ = _data()
    with pytest.raises(ValueError, match="kind 7, which mklearn cannot evaluate"):
        KernelBank([RBF(), _NoFormula()]).fit_transform(X)
    with pytest.raises(ValueError, match="implement evaluate"):
        _build_plan([_NoFormula()], 3)


def test_a_registered_kernel_type_needs_a_formula():
    with pytest.raises(ValueError, match="cannot evaluate"):
        @dataclass(frozen=True, kw_only=True)
        class Nothing(KernelSpec):
            type_name: ClassVar[str] = "nothing"


def test_the_numba_loop_gives_nan_not_the_laplacian_for_a_kind_it_does_not_know():
    X, _ = _data(n=6)
    plan = _build_plan([RBF(), Laplacian()], 3)  # then give the Laplacian another kind
    kinds = plan.kinds.copy()
    kinds[1] = 7
    out = np.zeros((2, 6, 6))
    inner, sq_dist, l1_dist = _multi_block_arrays(plan, X, X, True)
    arrays = (plan.block_cols, plan.block_multi, plan.block_ptr, kinds, plan.gammas,
              plan.coef0s, plan.degrees)
    fill_kernel_stack(X, X, True, *arrays, np.ones(2), plan.out_index, inner, sq_dist, l1_dist,
                      out)
    assert np.isnan(out[plan.out_index[1]]).all()
    kinds[1] = KIND_LAPLACIAN  # the known kinds are evaluated as before
    fill_kernel_stack(X, X, True, *arrays, np.ones(2), plan.out_index, inner, sq_dist, l1_dist,
                      out)
    l1 = np.abs(X[:, None, :] - X[None, :, :]).sum(-1)
    np.testing.assert_allclose(out[plan.out_index[1]], np.exp(-plan.gammas[1] * l1))
