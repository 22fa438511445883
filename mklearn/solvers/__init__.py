"""MKL solvers. Each declares what it supports and returns an :class:`MKLResult`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, StrOptions, validate_parameter_constraints

from mklearn.solvers.mirror import mirror_descent
from mklearn.solvers.mwu import mwu_mkl
from mklearn.solvers.result import MKLResult
from mklearn.solvers.silp import silp_mkl
from mklearn.solvers.smo_mkl import smo_mkl, smo_mkl_regression
from mklearn.solvers.spg import spg_gmkl


@dataclass(frozen=True)
class SolverInfo:
    """A solver, the formulations it handles and its fixed options."""

    function: Callable
    regularizers: frozenset
    combinations: frozenset
    defaults: dict = field(default_factory=dict)
    description: str = ""
    # "stack": called with SumOfKernels(stack); "columns": with a column provider
    # (mklearn.kernels.columns.KernelColumns / StackColumns) and the option cache_size (MB)
    input: str = "stack"
    # the options a user may set in solver_options, as scikit-learn parameter constraints
    options: dict = field(default_factory=dict)


_POSITIVE = Interval(Real, 0, None, closed="neither")
_SPG_OPTIONS = {
    "spectral": ["boolean"],
    "nonmonotone": ["boolean"],
    "precision_tuning": ["boolean"],
    "second_order": ["boolean"],
    "inner_tol": [_POSITIVE],
    "eta0": [Interval(Real, 0.1, 1, closed="both")],
    "d0": ["array-like", None],
    "max_time": [_POSITIVE, None],
}
_SMO_OPTIONS = {"cache_size": [_POSITIVE], "closed_form": ["boolean"]}
_SILP_OPTIONS = {
    "interleaved": ["boolean"],
    "inner_tol": [_POSITIVE, None],
    "chunk_steps": [Interval(Integral, 1, None, closed="left"), None],
}


SOLVERS = {
    "spg": SolverInfo(
        spg_gmkl,
        frozenset({"l1", "lp"}),
        frozenset({"sum", "product"}),
        description="SPG-GMKL (Jain, Vishwanathan and Varma, KDD 2012)",
        options=_SPG_OPTIONS,
    ),
    "pgd": SolverInfo(
        spg_gmkl,
        frozenset({"l1", "lp"}),
        frozenset({"sum", "product"}),
        defaults={
            "spectral": False,
            "nonmonotone": False,
            "precision_tuning": False,
            "second_order": False,
        },
        description="projected gradient descent baseline with Armijo search",
        options=_SPG_OPTIONS,
    ),
    "mirror": SolverInfo(
        mirror_descent,
        frozenset({"l1", "group"}),
        frozenset({"sum"}),
        description="mirror descent for (l_inf, l_1) group MKL (Nath et al., NIPS 2009)",
        options={
            "step": [StrOptions({"armijo", "paper"})],
            "inner_tol": [_POSITIVE],
            "precision_tuning": ["boolean"],
        },
    ),
    "smo": SolverInfo(
        smo_mkl,
        frozenset({"lp", "kl"}),
        frozenset({"sum"}),
        description="SMO-MKL, lp or KL MKL in the dual (Vishwanathan et al., NIPS 2010)",
        input="columns",
        options=_SMO_OPTIONS,
    ),
    "mwu": SolverInfo(
        mwu_mkl,
        frozenset({"l1"}),
        frozenset({"sum"}),
        description="MWUMKL, matrix multiplicative weights (Moeller et al., AISTATS 2014)",
        input="columns",
        options={
            "epsilon": [Interval(Real, 0, 1, closed="neither")],
            "cache_size": [_POSITIVE],
            "variant": [StrOptions({"adaptive", "paper"})],
            "iterations": [Interval(Integral, 1, None, closed="left"), None],
            "evaluate_objective": ["boolean", None],
        },
    ),
    "silp": SolverInfo(
        silp_mkl,
        frozenset({"l1"}),
        frozenset({"sum"}),
        description="SILP wrapper or interleaved (Sonnenburg et al., JMLR 2006)",
        options=_SILP_OPTIONS,
    ),
}


def check_solver_options(name: str, info: SolverInfo, options) -> dict:
    """``options`` (a ``solver_options`` dict, or None) checked against ``info.options``.

    Returns a new dict. Raises ValueError naming an unknown key and the valid ones, and
    scikit-learn's ``InvalidParameterError`` (a ValueError and a TypeError) naming a value of
    the wrong type or range, e.g. ``{"spectral": "yes"}``.
    """
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"solver_options must be a dict or None, got {type(options).__name__}")
    unknown = sorted(str(key) for key in options if key not in info.options)
    if unknown:
        valid = ", ".join(sorted(info.options)) or "none"
        raise ValueError(
            f"solver_options {unknown} are not options of solver {name!r}; it takes: {valid}"
        )
    validate_parameter_constraints(
        {key: info.options[key] for key in options}, options,
        caller_name=f"solver {name!r} (solver_options)",
    )
    return dict(options)


def get_solver(name: str, regularizer: str, combination: str = "sum") -> SolverInfo:
    """Look up a solver and check that it supports the formulation; ValueError otherwise."""
    if name not in SOLVERS:
        raise ValueError(f"unknown solver {name!r}; choose one of {sorted(SOLVERS)}")
    info = SOLVERS[name]
    if regularizer not in info.regularizers:
        raise ValueError(
            f"solver {name!r} does not support regularizer {regularizer!r}; "
            f"it supports {sorted(info.regularizers)}"
        )
    if combination not in info.combinations:
        raise ValueError(f"solver {name!r} does not support combination {combination!r}")
    return info


__all__ = [
    "MKLResult",
    "SOLVERS",
    "SolverInfo",
    "check_solver_options",
    "get_solver",
    "mirror_descent",
    "mwu_mkl",
    "silp_mkl",
    "smo_mkl",
    "smo_mkl_regression",
    "spg_gmkl",
]
