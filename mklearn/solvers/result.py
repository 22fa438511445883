"""The result every MKL solver returns."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

# Renamed keys of history records, old name -> new name: the old name still reads (with a
# FutureWarning) for one release.
RENAMED_KEYS = {"gap": "relative_duality_gap"}


class HistoryRecord(dict):
    """One history record: a plain dict, in which the renamed key ``"gap"`` still reads as
    ``"relative_duality_gap"`` (with a ``FutureWarning``) but is not stored, listed, pickled
    or written to JSON.

    Warns
    -----
    FutureWarning
        When a renamed key is read (``record["gap"]`` or ``record.get("gap")``).
    """

    def __missing__(self, key):
        return self[_renamed(key)]

    def get(self, key, default=None):
        if key not in self and key in RENAMED_KEYS:
            return super().get(_renamed(key), default)
        return super().get(key, default)


def _renamed(key):
    """The current name of the renamed ``key`` (FutureWarning); KeyError for other keys."""
    if not isinstance(key, str) or key not in RENAMED_KEYS:
        raise KeyError(key)
    new = RENAMED_KEYS[key]
    warnings.warn(
        f"the history record key {key!r} was renamed {new!r}; {key!r} will stop working in "
        f"the next release: read record[{new!r}]", FutureWarning, stacklevel=3)
    return new


@dataclass
class MKLResult:
    """Solution of one binary MKL problem, with its certificate.

    Attributes
    ----------
    kernel_weights : ndarray of shape (m,)
        Learned weights d of the base kernels.
    alpha : ndarray of shape (n,)
        SVM dual variables for the kernel ``K(d)``.
    intercept : float
        Bias b of the decision function ``sum_i alpha_i y_i K(d)(x_i, x) + b``.
    objective : float
        ``T(d) = r(d) + W(d)``, W evaluated as the inner SVM's dual value.
    duality_gap : float
        The duality gap ``U - L``: best upper bound minus best lower bound on the optimum
        (absolute, in units of the objective; NaN where no gap exists: products, MWUMKL
        with a hard margin left violated).
    relative_duality_gap : float
        ``(U - L) / max(|U|, 1e-12)`` (:func:`relative_gap`): the quantity ``tol`` is
        compared with, and the ``relative_duality_gap`` of the last history record (NaN where
        no gap exists).
    n_iter : int
        Outer iterations, the unit ``max_iter`` caps: one certificate (a duality-gap check)
        each, after one step of the weights (SPG, PGD, mirror descent, the SMO-MKL core's
        ``n``-step chunk or a KKT tolerance met, an LP solve of SILP, a share of MWUMKL's
        fixed run, a tightening of the inner tolerance of a fixed-weight SVM or of
        EasyMKL's QP).
    n_svm_solves : int
        Inner SVM solves (line-search trials included).
    n_smo_steps : int
        SMO steps of the solvers whose inner unit is one (SMO-MKL, EasyMKL's QP, the
        fixed-weight SVM of the one-shot learners on exact kernels); 0 for the others.
    converged : bool
        Whether the stopping rule was met within ``max_iter`` (MWUMKL: whether it ran the
        iterations ``epsilon`` sets; ``tol`` does not stop it).
    stop_reason : str
        "converged", "max_iter", or "stalled" (no step decreased the objective even at the
        tightest inner tolerance: a kink of W or an objective too noisy for the search).
    history : list of HistoryRecord
        One record (a dict) per outer iteration (per gap check for SMO-MKL, per LP solve for SILP):
        ``iteration``, ``objective``, ``relative_duality_gap`` (as above, at that iteration),
        ``n_svm_solves``, ``time`` (seconds since the start), and solver-specific keys
        (SPG: ``pg_norm``, ``inner_tol``; SILP: ``eps_mkl``, the paper's stopping measure
        ``|1 - S / theta|``; MWUMKL: ``lower``, ``upper``, ``duality_gap``).
    feature_coef : ndarray of shape (R,) or None
        Solvers in feature space (low-rank kernels): the primal weights of the features,
        ``f(x) = Phi(x) . feature_coef + intercept`` (``d_k u_k`` in kernel k's block).
    """

    kernel_weights: np.ndarray
    alpha: np.ndarray
    intercept: float
    objective: float
    duality_gap: float
    n_iter: int
    n_svm_solves: int
    converged: bool
    history: list = field(default_factory=list)
    stop_reason: str = "converged"
    relative_duality_gap: float = np.nan
    feature_coef: np.ndarray | None = None
    n_smo_steps: int = 0

    def __post_init__(self):
        for i, record in enumerate(self.history):  # in place: callers may hold the list
            if not isinstance(record, HistoryRecord):
                self.history[i] = HistoryRecord(record)


def relative_gap(upper, lower):
    """The one relative duality gap of every solver: ``max(U - L, 0) / max(|U|, 1e-12)``,
    ``U`` an upper bound on the optimal objective and ``L`` a lower bound."""
    return max(upper - lower, 0.0) / max(abs(upper), 1e-12)


class Certificate:
    """Best upper bound (and the point attaining it) and best lower bound seen so far.

    Every evaluated point bounds the optimum from above and every feasible dual point from
    below, so keeping the best of each gives a gap that only shrinks and stays a proof.
    """

    def __init__(self):
        self.upper, self.lower, self.point = np.inf, -np.inf, None

    def update(self, point, upper, lower, lower_is_valid=True):
        """Keep ``upper`` (with ``point``) and ``lower`` if better; ``lower_is_valid=False``
        for a bound of a restricted problem (not a bound on the optimum)."""
        if upper < self.upper:
            self.upper, self.point = upper, point
        if lower_is_valid:
            self.lower = max(self.lower, lower)

    @property
    def gap(self):
        return max(self.upper - self.lower, 0.0)

    @property
    def relative_gap(self):
        return relative_gap(self.upper, self.lower)
