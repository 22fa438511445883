"""MKL solvers. Each declares what it supports and returns an :class:`MKLResult`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

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


SOLVERS = {
    "spg": SolverInfo(
        spg_gmkl,
        frozenset({"l1", "lp"}),
        frozenset({"sum", "product"}),
        description="SPG-GMKL (Jain, Vishwanathan and Varma, KDD 2012)",
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
    ),
    "mirror": SolverInfo(
        mirror_descent,
        frozenset({"l1", "group"}),
        frozenset({"sum"}),
        description="mirror descent for (l_inf, l_1) group MKL (Nath et al., NIPS 2009)",
    ),
    "smo": SolverInfo(
        smo_mkl,
        frozenset({"lp", "kl"}),
        frozenset({"sum"}),
        description="SMO-MKL, lp or KL MKL in the dual (Vishwanathan et al., NIPS 2010)",
        input="columns",
    ),
    "mwu": SolverInfo(
        mwu_mkl,
        frozenset({"l1"}),
        frozenset({"sum"}),
        description="MWUMKL, matrix multiplicative weights (Moeller et al., AISTATS 2014)",
        input="columns",
    ),
    "silp": SolverInfo(
        silp_mkl,
        frozenset({"l1"}),
        frozenset({"sum"}),
        description="SILP wrapper or interleaved (Sonnenburg et al., JMLR 2006)",
    ),
}


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
    "get_solver",
    "mirror_descent",
    "mwu_mkl",
    "silp_mkl",
    "smo_mkl",
    "smo_mkl_regression",
    "spg_gmkl",
]
