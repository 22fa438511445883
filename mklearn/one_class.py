"""One-class MKL: novelty detection with a learned combination of kernels."""

from __future__ import annotations

import time
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, OutlierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from mklearn.distributed.partitions import on_partitions
from mklearn.estimators.kernel_input import _fit_task, _KernelInput
from mklearn.formulation.regularizers import make_regularizer
from mklearn.kernels import fit_threads
from mklearn.kernels.checks import is_views
from mklearn.memory import gathered
from mklearn.progress import compile_time_of, seconds_since
from mklearn.solvers import SOLVERS, check_solver_options, choose_solver, solvers_for
from mklearn.solvers.tasks import DEFAULT_NU, OneClassTask
from mklearn.validation import parameter_constraints

BOUNDARY_MARGIN = 1e-10


class OneClassMKL(_KernelInput, OutlierMixin, BaseEstimator):
    """One-class SVM with l1 (simplex) MKL: the support of the data under a learned kernel.

    The kernel is ``K(d) = sum_k d_k K_k`` with ``d`` on the simplex; ``d`` and the one-class
    SVM (Schoelkopf et al., Neural Computation 13, 2001) are learned together: SILP's
    one-class MKL (Sonnenburg et al., JMLR 7, 2006, section 2.2; ALGORITHMS.md section 5)
    ``min_d max_a -1/2 a' K(d) a`` over ``0 <= a <= 1``, ``1'a = nu n`` (LIBSVM's scaling).

    Parameters
    ----------
    kernels : "simple_mkl", "precomputed", KernelRecipe, KernelSpec or list of KernelSpec
        As in :class:`mklearn.MKLClassifier`; with "precomputed", ``fit`` takes
        ``(n, n, m)`` and the other methods ``(n_test, n_train, m)``.
    solver : {"auto", "silp", "spg"}
        "auto" (default) is "silp" (recorded in ``solver_``). SILP column generation
        (``solver_options={"interleaved": True}`` for the chunking
        algorithm) or SPG-GMKL with the one-class SVM as inner problem.
    nu : float in (0, 1], default 0.1
        Upper bound on the fraction of training points outside the support (outliers), lower
        bound on the fraction of support vectors (Schoelkopf et al. 2001, the nu-property): set
        it to the share of outliers expected in the training data. The default 0.1 (also
        ``mklearn fit --nu``) flags about one training point in ten; LIBSVM's and
        scikit-learn's ``OneClassSVM`` default 0.5 would flag about half of them.
    tol : float > 0
        Relative duality gap (SILP: and the paper's ``eps_MKL``).
    max_iter : int >= 1
        Maximal number of outer iterations (LP solves for SILP).
    solver_options : dict, optional
        Options of the solver (:func:`mklearn.solvers.silp_mkl`,
        :func:`mklearn.solvers.spg_gmkl`).
    kernel_dtype : {"float64", "float32"}
        Precision of the base-kernel stack built from X.
    cache_size, kernel_storage, memory_budget
        As in :class:`mklearn.MKLClassifier`: with rows computed on demand, megabytes of the
        row cache; how kernels computed from X are held; the memory a fit may plan for.
    kernel_normalization : {"diagonal", "trace"} or None
        Scaling of the base kernels built from X, as in :class:`mklearn.MKLClassifier`.

    Attributes
    ----------
    solver_ : str
        The solver used.
    kernel_weights_ : ndarray of shape (n_kernels,)
        Learned kernel weights (on the simplex).
    dual_coef_ : ndarray of shape (1, n_SV)
        ``alpha_i`` of the support vectors (in ``(0, 1]``).
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors.
    offset_ : float
        ``rho`` (lowered by ``1e-10 |rho|``, so that the support vectors on the boundary stay
        inside whatever the rounding): ``decision_function = score_samples - offset_``.
    intercept_ : ndarray of shape (1,)
        ``-offset_``.
    objective_ : float
        ``min_d W(d)`` reached.
    duality_gap_, relative_duality_gap_ : float
        Absolute and relative duality gap certifying it (defined in
        :class:`mklearn.MKLClassifier`).
    n_iter_ : int
        Outer iterations: LP solves for "silp", steps of the weights for "spg".
    n_smo_steps_ : int
        SMO steps of all the SVM solves (or SMO chunks) of "spg" and "silp".
    stack_passes_ : float or None
        Passes over the stack of base kernels the fit read, as in
        :class:`~mklearn.MKLClassifier`.
    kernel_names_ : list of str
        Readable names of the base kernels.

    Raises
    ------
    ValueError
        On invalid parameters (``nu`` outside (0, 1]), non-finite input, or kernel stacks of
        the wrong shape.
    """

    _parameter_constraints: dict = parameter_constraints(
        "kernels", "kernel_normalization", "tol", "max_iter", "solver_options", "kernel_dtype",
        "cache_size", "kernel_storage", "memory_budget",
        solver=[StrOptions({"auto", *solvers_for("one-class")})],
        nu=[Interval(Real, 0, 1, closed="right")],
    )

    # its dual has sum(alpha) = 1, not a balance: a kernel's constant part moves the
    # objective, so low-rank features keep it
    _drops_constants = False

    def __init__(
        self,
        *,
        kernels="simple_mkl",
        solver="auto",
        nu=DEFAULT_NU,
        tol=1e-3,
        max_iter=500,
        solver_options=None,
        kernel_dtype="float64",
        cache_size="auto",
        kernel_storage="auto",
        memory_budget=None,
        kernel_normalization="diagonal",
    ):
        self.kernel_normalization = kernel_normalization
        self.kernels = kernels
        self.solver = solver
        self.nu = nu
        self.tol = tol
        self.max_iter = max_iter
        self.solver_options = solver_options
        self.kernel_dtype = kernel_dtype
        self.cache_size = cache_size
        self.kernel_storage = kernel_storage
        self.memory_budget = memory_budget

    def fit(self, X, y=None):
        """Learn the kernel weights and the support of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples, n_kernels)
            Training data, or the base-kernel stack when ``kernels="precomputed"``.
        y : ignored

        Returns
        -------
        self : OneClassMKL
        """
        with compile_time_of(self):
            return self._fit(X, y)

    def _fit(self, X, y):
        self._validate_params()
        X = gathered(X, self.memory_budget)
        regularizer = make_regularizer("l1", p=2.0, lam=1.0)
        self.solver_ = (choose_solver(regularizer, task="one-class") if self.solver == "auto"
                        else self.solver)
        check_solver_options(self.solver_, SOLVERS[self.solver_], self.solver_options)
        start = time.perf_counter()
        operator, _ = self._training_kernels(X, np.zeros(_n_rows(X)))  # no targets: a placeholder
        self.kernel_time_ = seconds_since(start)
        start = time.perf_counter()
        task = OneClassTask(operator.n_samples, float(self.nu))
        with fit_threads(None):
            result = _fit_task(self, operator, task, regularizer)
        self.solve_time_ = seconds_since(start)
        self._check_learned_kernels(operator, result.kernel_weights)
        self.stack_passes_ = operator.stack_passes
        self._store_single(result, np.flatnonzero(result.alpha > 0.0))
        rho = -float(result.intercept)
        # the support vectors on the boundary have score rho exactly; a 1e-10 relative margin
        # keeps them inside however the test-time sums are rounded (any subset of X)
        self.offset_ = rho - BOUNDARY_MARGIN * max(abs(rho), 1e-300)
        self.intercept_ = np.array([-self.offset_])
        return self

    @on_partitions
    def score_samples(self, X):
        """``sum_i alpha_i K(d)(x_i, x)``, shape (n_test,): large inside the support.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features), or (n_test, n_train, n_kernels)
            A ``dask.array.Array`` partitioned by rows gives a Dask array with its row
            chunks, computed block by block (:mod:`mklearn.distributed.partitions`).
            Test data, or the test-versus-training stack when precomputed.
        """
        check_is_fitted(self)
        return self._kernel_expansion(X)

    @on_partitions
    def decision_function(self, X):
        """``score_samples(X) - offset_``, shape (n_test,): positive inside, negative outside."""
        return self.score_samples(X) - self.offset_

    @on_partitions
    def predict(self, X):
        """+1 inside the learned support (points on its boundary included, up to rounding),
        -1 outside; shape (n_test,)."""
        return np.where(self.decision_function(X) >= 0, 1, -1)


def _n_rows(X):
    """Number of samples of X as given (validated later), for the placeholder targets."""
    if is_views(X):
        X = next(iter(X.values() if isinstance(X, dict) else X))
    shape = getattr(X, "shape", None)
    if shape is None:
        try:
            shape = np.asarray(X).shape
        except ValueError:  # ragged nested lists
            shape = (len(X),)
    return shape[0] if shape else 1
