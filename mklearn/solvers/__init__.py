"""MKL solvers. Each declares what it supports and returns an :class:`MKLResult`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, StrOptions, validate_parameter_constraints

from mklearn.extending import GROUP_SIMPLICES, implements, is_l1_simplex
from mklearn.solvers import easymkl as _easymkl
from mklearn.solvers.feature_space import (
    align_features,
    alignf_features,
    average_features,
    easymkl_features,
    fheuristic_features,
    smooth_dual_features,
    spg_features,
)
from mklearn.solvers.mirror import mirror_descent, mirror_features
from mklearn.solvers.mwu import mwu_mkl
from mklearn.solvers.result import MKLResult
from mklearn.solvers.seeds import align_mkl, alignf_mkl, average_mkl, fheuristic_mkl, pwmk_mkl
from mklearn.solvers.silp import silp_mkl
from mklearn.solvers.silp_linadd import silp_linadd
from mklearn.solvers.smo_mkl import smo_mkl, smo_mkl_regression
from mklearn.solvers.spg import SPGSwitches, spg_gmkl


def _spg_ready(regularizer):
    return all(implements(regularizer, m) for m in ("value", "gradient", "project"))


def _smo_ready(regularizer):
    return implements(regularizer, "smo_dual")


def _mirror_ready(regularizer):
    return is_l1_simplex(regularizer) or (
        regularizer.feasible_set == GROUP_SIMPLICES)


_SPG_NEEDS = "value, gradient and project"
_L1_NEEDS = "the l1 simplex (feasible_set 'simplex', r = 0 there)"


@dataclass(frozen=True)
class SolverInfo:
    """A solver, the capabilities it needs of a regulariser and its fixed options."""

    function: Callable
    accepts: Callable  # regulariser (or its class) -> bool, from its declared capabilities
    needs: str  # what ``accepts`` asks for, for error messages
    combinations: frozenset
    defaults: dict = field(default_factory=dict)
    description: str = ""
    # "stack": called with SumOfKernels(stack); "columns": with a column provider
    # (mklearn.kernels.columns.KernelColumns / StackColumns) and the option cache_size (MB)
    input: str = "stack"
    # the options a user may set in solver_options, as scikit-learn parameter constraints
    options: dict = field(default_factory=dict)
    # what one outer iteration is, in the plural: the unit of the result's n_iter (the
    # estimators' n_iter_) and of max_iter; each ends in a duality-gap check, one history
    # record
    n_iter_unit: str = "iterations"
    # the solver option holding the tolerance its relative duality gap is compared with,
    # where that is not the estimators' tol
    gap_tol_option: str = ""
    # keeps per-kernel state that a column provider may hold on Dask workers
    # (mklearn.distributed.DaskColumns, inside joblib's Dask backend)
    state_on_workers: bool = False
    # takes ``heartbeat`` (called with its SMO steps so far and the steps its next gap
    # check is due after, at least every few seconds between two records: a progress bar's
    # sign of life and its step rate)
    heartbeat: bool = False
    # a "columns" solver that also takes ``task=`` (mklearn.solvers.tasks), as the stack
    # solvers do: regression by MKLRegressor
    takes_task: bool = False
    # weights learnt once, then one SVM on them (mklearn.solvers.seeds): no outer iterations
    one_shot: bool = False
    # the same formulation in feature space, on low-rank kernels (capability
    # feature_blocks: mklearn.solvers.feature_space), or None where the solver has none
    feature_function: Callable | None = None
    # the solver has a lambda of its own, this key of its options, and the estimators'
    # ``lam`` (the regulariser's weight) does not enter: an explicit ``lam`` is refused
    own_lam: str = ""
    # the tasks it serves: "classification", "regression", "one-class"
    tasks: frozenset = frozenset({"classification"})
    # takes a bound C_i of its own for each sample (off: one C for all, which only caps a
    # normalised alpha and never overflows, as MWUMKL's)
    per_sample_costs: bool = True
    # what ``regularizer="auto"`` is with this solver named: the regulariser it is made for
    auto_regularizer: str = "l1"
    # a "columns" solver's own function for regression (epsilon-SVR), where it takes no
    # ``task=``
    regression_function: Callable | None = None
    # what to do when no step decreased the objective, in the convergence warning
    stall_advice: str = ("increase tol, or lower solver_options['inner_tol'] for a more "
                         "precise inner SVM")
    # (solver_options, n_kernels, n_iter) -> a note on why max_iter was reached, or ""
    max_iter_note: Callable | None = None
    # its weights depend on the targets (off: uniform weights, which MKLKernel gives
    # without y)
    needs_targets: bool = True
    # its feature-space form reads features in Dask partitions (capability
    # feature_rows): a fit on a Dask collection runs where the partitions lie
    partitioned: bool = False


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
    "fallback": ["boolean"],
    "aggregate_bound": ["boolean"],
    "coarse_start": ["boolean"],
    "cutting_planes": ["boolean"],
}
_SMO_OPTIONS = {"cache_size": [_POSITIVE], "closed_form": ["boolean"]}
_SILP_OPTIONS = {
    "interleaved": ["boolean"],
    "inner_tol": [_POSITIVE, None],
    "chunk_steps": [Interval(Integral, 1, None, closed="left"), None],
    "linadd": ["boolean"],
    "level_method": ["boolean"],
}

_SUBSAMPLE_OPTIONS = {
    "cache_size": [_POSITIVE],
    "estimate": [StrOptions({"auto", "exact", "subsample"})],
    "subsample_size": [Interval(Integral, 2, None, closed="left")],
    "random_state": ["random_state"],
}


def _any_regularizer(regularizer):
    return True  # the one-shot learners ignore the regulariser


def _one_shot(function, description, options, takes_task=True, feature_function=None,
              needs_targets=True, partitioned=False):
    """A weight learner of :mod:`mklearn.solvers.seeds`: weights once, then one SVM
    (regression too when it takes a task)."""
    tasks = {"classification", "regression"} if takes_task else {"classification"}
    return SolverInfo(function, _any_regularizer, "nothing (the regulariser does not enter)",
                      frozenset({"sum"}), description=description, input="columns",
                      options=options, n_iter_unit="gap checks", takes_task=takes_task,
                      one_shot=True, feature_function=feature_function,
                      tasks=frozenset(tasks), needs_targets=needs_targets,
                      partitioned=partitioned)


def _silp_max_iter_note(options, n_kernels, n_iter):
    """SILP without the level method needs about one LP solve per kernel; SPG-GMKL solves
    the same l1 problem without a master LP."""
    note = ""
    if n_kernels > n_iter and (options or {}).get("level_method") is False:
        note = (f" (plain column generation needs of the order of one LP solve per kernel, "
                f"{n_kernels} here; the default level_method=True needs far fewer)")
    return (f"{note}, or use solver='spg', which solves the same l1 problem without a "
            "master LP")


_ALL_TASKS = frozenset({"classification", "regression", "one-class"})


SOLVERS = {
    "spg": SolverInfo(
        spg_gmkl,
        _spg_ready,
        _SPG_NEEDS,
        frozenset({"sum", "product"}),
        description="SPG-GMKL (Jain, Vishwanathan and Varma, KDD 2012)",
        options=_SPG_OPTIONS,
        feature_function=spg_features,
        tasks=_ALL_TASKS,
        partitioned=True,
    ),
    "pgd": SolverInfo(
        spg_gmkl,
        _spg_ready,
        _SPG_NEEDS,
        frozenset({"sum", "product"}),
        defaults=SPGSwitches.baseline(),
        description="projected gradient descent baseline with Armijo search",
        options=_SPG_OPTIONS,
        stall_advice="use solver='spg', whose non-monotone search recovers from such points, "
                     "or increase tol",
    ),
    "mirror": SolverInfo(
        mirror_descent,
        _mirror_ready,
        "the l1 simplex or the group mixed norm (feasible_set 'group simplices')",
        frozenset({"sum"}),
        description="mirror descent for (l_inf, l_1) group MKL (Nath et al., NIPS 2009)",
        options={
            "step": [StrOptions({"armijo", "paper"})],
            "inner_tol": [_POSITIVE],
            "precision_tuning": ["boolean"],
        },
        feature_function=mirror_features,
        partitioned=True,
    ),
    "smo": SolverInfo(
        smo_mkl,
        _smo_ready,
        "a smooth conjugate the SMO core knows (smo_dual: 'lp' with p > 1, or 'kl')",
        frozenset({"sum"}),
        description="SMO-MKL, lp or KL MKL in the dual (Vishwanathan et al., NIPS 2010)",
        input="columns",
        options=_SMO_OPTIONS,
        n_iter_unit="gap checks",  # each after at most n SMO steps (n_smo_steps_)
        heartbeat=True,
        feature_function=smooth_dual_features,
        tasks=frozenset({"classification", "regression"}),
        auto_regularizer="kl",
        regression_function=smo_mkl_regression,
        partitioned=True,
    ),
    "mwu": SolverInfo(
        mwu_mkl,
        is_l1_simplex,
        _L1_NEEDS,
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
        n_iter_unit="checks",  # ~50 along the fixed number of MWU iterations epsilon sets
        state_on_workers=True,
        per_sample_costs=False,
    ),
    "silp": SolverInfo(
        silp_mkl,
        is_l1_simplex,
        _L1_NEEDS,
        frozenset({"sum"}),
        description="SILP wrapper or interleaved (Sonnenburg et al., JMLR 2006)",
        options=_SILP_OPTIONS,
        n_iter_unit="LP solves",
        tasks=_ALL_TASKS,
        max_iter_note=_silp_max_iter_note,
    ),
    "average": _one_shot(average_mkl, "uniform weights 1/m, then the SVM (MKLpy's AverageMKL)",
                         {"cache_size": [_POSITIVE]}, feature_function=average_features,
                         needs_targets=False, partitioned=True),
    "align": _one_shot(align_mkl, "each kernel's centred alignment with yy' (Cortes et al., "
                       "JMLR 2012), then the SVM", _SUBSAMPLE_OPTIONS,
                       feature_function=align_features),
    "alignf": _one_shot(alignf_mkl, "ALIGNF, non-negative maximal centred alignment (Cortes "
                        "et al., JMLR 2012), then the SVM", _SUBSAMPLE_OPTIONS,
                        feature_function=alignf_features),
    "fheuristic": _one_shot(fheuristic_mkl, "FHeuristic, uncentred alignments (Qiu and Lane, "
                            "TCBB 2009; MKLpy), then the SVM", _SUBSAMPLE_OPTIONS,
                            feature_function=fheuristic_features),
    "pwmk": _one_shot(pwmk_mkl, "PWMK, cross-validated accuracies (Tanabe et al., RIVF 2008; "
                      "MKLpy), then the SVM",
                      {"cache_size": [_POSITIVE],
                       "cv": [Interval(Integral, 2, None, closed="left")],
                       "delta": [Interval(Real, 0, 1, closed="both")],
                       "random_state": ["random_state"]},
                      takes_task=False),
    "easymkl": SolverInfo(
        _easymkl.easymkl,
        is_l1_simplex,
        _L1_NEEDS,
        frozenset({"sum"}),
        description="EasyMKL (Aiolli and Donini, Neurocomputing 2015)",
        options=_easymkl.OPTIONS,
        n_iter_unit="gap checks",  # of the QP for the weights
        gap_tol_option="qp_tol",
        own_lam="lam",
        feature_function=easymkl_features,
    ),
}

# the one-shot learners that MKLRegressor takes
REGRESSION_SEEDS = frozenset(name for name, info in SOLVERS.items()
                             if info.one_shot and "regression" in info.tasks)


def solvers_for(task: str, combination: str = "sum") -> list[str]:
    """The names of the solvers that serve ``task`` with ``combination``.

    Parameters
    ----------
    task : {"classification", "regression", "one-class"}
        The loss (as each solver's ``tasks`` in :data:`SOLVERS` declares it).
    combination : {"sum", "product"}, default="sum"
        How the base kernels combine.

    Returns
    -------
    list of str
        Solver names, in the order of :data:`SOLVERS` (empty when none serves them).
    """
    return [name for name, info in SOLVERS.items()
            if task in info.tasks and combination in info.combinations]


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


def get_solver(name: str, regularizer, combination: str = "sum") -> SolverInfo:
    """Look up a solver and check that it can take the regulariser (an instance or its class:
    the check reads the capabilities it declares) and the combination; ValueError otherwise."""
    if name not in SOLVERS:
        raise ValueError(f"unknown solver {name!r}; choose one of {sorted(SOLVERS)} or 'auto'")
    info = SOLVERS[name]
    if not info.accepts(regularizer):
        label = regularizer.name or repr(regularizer)
        fits = [s for s, i in SOLVERS.items() if i.accepts(regularizer)
                and combination in i.combinations]
        raise ValueError(
            f"solver {name!r} does not support regularizer {label!r}: it needs {info.needs}; "
            f"use solver='auto'" + (f" (or one of {fits})" if fits else "")
        )
    if combination not in info.combinations:
        raise ValueError(f"solver {name!r} does not support combination {combination!r}; "
                         "use solver='auto'")
    return info


def choose_solver(regularizer, combination: str = "sum", task: str = "classification") -> str:
    """The solver ``solver="auto"`` picks, from what the regulariser declares.

    - products of kernels (``combination != "sum"``): "spg" (SPG-GMKL, the only one for
      non-linear kernels with "pgd");
    - the group mixed norm (feasible set "group simplices"): "mirror" (classification);
    - a smooth conjugate the SMO core knows (``smo_dual``: lp-norms with p > 1, KL): "smo",
      which reads kernel rows on demand and never builds the stack;
    - the l1 simplex and any other regulariser with value, gradient and projection: "spg";
    - one-class: "silp" (the only one-class solver besides "spg", and the paper's).

    Parameters
    ----------
    regularizer : Regularizer or its class
    combination : {"sum", "product"}
    task : {"classification", "regression", "one-class"}

    Returns
    -------
    str
        A key of :data:`SOLVERS`.

    Notes
    -----
    The size of the problem does not enter here: the estimators choose separately how the
    kernels are held (``kernel_storage``: a stack, or rows computed on demand), from the
    memory plan.
    """
    if combination != "sum":
        return "spg"
    if task == "one-class":
        return "silp" if is_l1_simplex(regularizer) else "spg"
    if task == "classification" and _mirror_ready(regularizer) and not is_l1_simplex(regularizer):
        return "mirror"
    if _smo_ready(regularizer):
        return "smo"
    return "spg"


__all__ = [
    "MKLResult",
    "REGRESSION_SEEDS",
    "align_mkl",
    "alignf_mkl",
    "average_mkl",
    "fheuristic_mkl",
    "pwmk_mkl",
    "SOLVERS",
    "SolverInfo",
    "check_solver_options",
    "choose_solver",
    "get_solver",
    "mirror_descent",
    "mwu_mkl",
    "silp_linadd",
    "silp_mkl",
    "smo_mkl",
    "smo_mkl_regression",
    "solvers_for",
    "spg_gmkl",
]
