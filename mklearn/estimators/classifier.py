"""The MKL classifier: an SVM learned together with its kernel weights."""

from __future__ import annotations

import time
import warnings

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, _num_samples, check_is_fitted

import mklearn.estimators.products as _product
from mklearn._sizes import CHECK_BLOCK_BYTES
from mklearn.distributed import local_jobs
from mklearn.distributed.partitions import on_partitions
from mklearn.estimators.kernel_input import (
    _WEIGHT_EPS,
    ONE_CLASS_CHECK_POINTS,
    _check_classification_labels,
    _class_index,
    _convergence_message,
    _KernelInput,
    _on_one_thread,
    _progress,
    _rows_of,
)
from mklearn.extending import Regularizer
from mklearn.formulation.regularizers import REGULARIZERS
from mklearn.kernels import (
    blas_threads,
    fit_threads,
    has_one_kernel,
    is_dask_collection,
    is_string_kernels,
    resolve_groups,
    warn_degenerate,
)
from mklearn.progress import compile_time_of, seconds_since
from mklearn.solvers import SOLVERS, check_solver_options, get_solver
from mklearn.svm.smo import svm_heartbeat
from mklearn.validation import (
    at_bound,
    cap_costs,
    check_label_types,
    parameter_constraints,
    warn_if_capped,
)


class MKLClassifier(_KernelInput, ClassifierMixin, BaseEstimator):
    """Multiple Kernel Learning SVM classifier: learns an SVM and the kernel weights together.

    The learned kernel is ``K(d) = sum_k d_k K_k`` over the base kernels ``K_k``; ``d`` minimises
    ``T(d) = r(d) + W(d)``, ``W(d)`` the C-SVC dual optimum with kernel ``K(d)`` (GMKL: Jain,
    Vishwanathan and Varma, KDD 2012, eq. 2; ALGORITHMS.md section 1).

    Parameters
    ----------
    kernels : str, KernelRecipe, KernelSpec or list of KernelSpec
        The base kernels. "svc+feature_rbf" (default): the kernel of ``SVC()`` (RBF with
        ``gamma="scale"`` on the features at their original scale,
        :func:`mklearn.kernels.svc_kernel`) followed by one RBF kernel of width 1 on each
        standardised feature, D + 1 kernels (:func:`mklearn.kernels.svc_feature_rbf_kernels`);
        with ``regularizer="auto"`` the KL prior puts weight 0.9 on SVC's kernel.
        "svc+simple_mkl": SVC's kernel followed by SimpleMKL's 13(D+1) family
        (:func:`mklearn.kernels.svc_simple_mkl_kernels`). "simple_mkl" is the 13(D+1) family
        of SimpleMKL alone, the papers' protocol (standardised features, 10 RBF widths and 3
        polynomial degrees on all features and on each feature, scaled by
        ``kernel_normalization``);
        "mwumkl" the 12 D family of MWUMKL
        (:func:`mklearn.kernels.mwumkl_kernels`; features used as given: scale them to [0, 1]
        first, as the paper did). With "precomputed", ``fit`` takes a stack of shape
        ``(n_samples, n_samples, n_kernels)`` (a 2-D array is one kernel) and ``predict`` takes
        ``(n_test, n_train, n_kernels)``; the stack is used as given (no normalisation). The
        solvers read it kernel by kernel: a stack whose memory is kernel-major, such as
        ``np.moveaxis(K, 0, -1)`` of a C-contiguous ``(n_kernels, n, n)`` array ``K``, is used
        without a copy; any other layout is copied once, in blocks.
    solver : {"auto", "spg", "pgd", "smo", "mirror", "mwu", "silp", "easymkl"}
        "auto" (default) picks by what the regulariser declares and by the combination
        (:func:`mklearn.solvers.choose_solver`): "smo" for "lp" and "kl" (no stack is built),
        "mirror" for "group", "spg" for "l1", for products and for user regularisers; the
        choice is ``solver_`` and is shown in the progress bar.
        "spg": SPG-GMKL (spectral step, non-monotone line search, inner precision tuning);
        "pgd": the projected-gradient baseline with Armijo search and a fixed inner tolerance;
        "smo": SMO-MKL (Vishwanathan et al., NIPS 2010) for "lp" and "kl": the dual solved by
        SMO directly, kernel rows computed on demand from X (no stack; ``cache_size``);
        its outer iterations are duality-gap checks, each after at most n SMO steps
        (``n_smo_steps_``; see :func:`mklearn.solvers.smo_mkl`);
        "mirror": mirror descent over the product of simplices (Nath et al., NIPS 2009), for
        "group" and "l1" (options ``step``, ``inner_tol``, ``precision_tuning``; see
        :func:`mklearn.solvers.mirror_descent`);
        "mwu": MWUMKL (Moeller et al., AISTATS 2014), l1 only, no SVM calls: kernel columns are
        computed on demand from X (no stack; ``cache_size``), a fixed number of iterations set by
        ``solver_options={"epsilon": 0.2}``, checked about 50 times (its outer iterations,
        which ``max_iter`` caps); it does not stop on ``tol``: ``epsilon`` sets its precision,
        and the relative gap it reaches (a few percent is usual) is reported without a
        warning (see :func:`mklearn.solvers.mwu_mkl` for ``variant``, ``iterations``,
        ``evaluate_objective``);
        "silp": SILP (Sonnenburg et al., JMLR 2006), l1 only: column generation with a HiGHS
        master LP, ``tol`` bounds ``eps_MKL`` and the relative gap, ``max_iter`` caps the LP
        solves (of the order of the number of kernels are needed); options
        ``interleaved`` (the chunking algorithm), ``inner_tol``, ``chunk_steps``, ``linadd``
        (string kernels with ``kernel_storage="rows"``: the interleaved algorithm on the
        linadd decomposition SVM, no kernel row ever formed; 10^5 sequences) (see
        :func:`mklearn.solvers.silp_mkl`);
        "easymkl": EasyMKL (Aiolli and Donini, Neurocomputing 2015), l1 (weights on the
        simplex), no MKL iterations: one QP for the weights, then the SVM with ``C`` on the
        learned kernel; options ``lam`` (in [0, 1], default 0.1), ``learner`` ("svm", or
        "komd": MKLpy's KOMD), ``qp_tol`` (the relative gap of the QP, in place of ``tol``,
        which is the final SVM's KKT tolerance), ``komd_lam``, ``komd_tol`` (see
        :func:`mklearn.solvers.easymkl.easymkl`).
    regularizer : {"auto", "l1", "lp", "kl", "l1_penalty", "group"} or Regularizer
        "auto" (default): "kl" when the solver is "auto" or "smo" and the kernels are summed,
        except for a single kernel with solver "auto" (a 2-D precomputed kernel, one spec);
        "l1" otherwise, so every solver works with the defaults and one kernel gets weight 1
        (the SVC with that kernel and C). The choice is ``regularizer_``. With the default
        kernels, "auto"'s KL prior ``d0`` is 0.9 on SVC's kernel and 0.1 spread evenly over
        the others (:meth:`mklearn.kernels.KernelRecipe.kl_prior`; the uniform prior for
        other kernels, and for ``regularizer="kl"`` named), with ``lam`` 5 (``lam="auto"``):
        the fit starts from ``SVC()`` and moves weight to other kernels as far as the data
        pay for it. Why: with C=1 and the default kernels it was within 0.005 of the better
        of ``SVC()`` and the standardised pipeline on 14 of the 16 sets of
        ``bench_defaults.py`` (5-fold, 250 points), lam 15 on 9 and lam 1 on 7 of the 14
        classification sets; l1 selects a few kernels, which overfit small noisy sets such as
        Liver; SMO-MKL builds no kernel stack: ``benchmarks/README.md``, ``docs/defaults.md``.
        KL weights are not normalised (``d_k >= d0_k``; ``sum_k d_k`` was 5 to 8 on the
        bundled sets with lam 1 and SimpleMKL's family), so with "kl" the learned kernel's
        scale, and with it the effective C, is learned too.
        "l1": weights on the simplex ``sum_k d_k = 1, d >= 0``; "lp": ``lam/2 ||d||_p^2`` on
        ``d >= 0`` (the SMO-MKL form); "kl": ``lam sum_k (d_k log(d_k / d0_k) - d_k + d0_k)``,
        the generalised KL divergence to the uniform prior ``d0 = 1/m`` (solver "smo");
        "l1_penalty": ``lam sum_k d_k`` on ``d >= 0`` (weights not normalised; solver "spg");
        "group": the (l_inf, l_1) mixed norm over ``groups`` (Nath et al., NIPS 2009): every
        group is used, kernels within a group are selected sparsely (solver "mirror"). An
        instance of a :class:`mklearn.extending.Regularizer` subclass (a built-in one such as
        ``LpNorm(1.5, 2.0)`` or your own, ``docs/extending.md``) is used as given (``p`` and
        ``lam`` are then unused); the solvers read the capabilities it declares.
    p : float > 1
        Norm of the "lp" regulariser.
    lam : float > 0 or "auto"
        Weight of the "lp" and "kl" regularisers (for ``combination="product"``, the l1
        penalty sigma). "auto" (default): 5 for the KL prior on SVC's kernel that
        ``regularizer="auto"`` uses with the default kernels (a larger lam keeps the weights
        nearer that prior: lam 1 left pima 0.048 below ``SVC()``,
        :data:`mklearn.kernels.recipes.SVC_KERNEL_LAM`), 1 otherwise. The value used is
        ``lam_``.
    C : float > 0
        SVM cost, as in :class:`sklearn.svm.SVC`: with one kernel (or all weight on one) and
        ``kernel_normalization="diagonal"`` the model is the SVC with that kernel and this C.
        Sample ``i`` gets the bound ``C * sample_weight[i] * class_weight[y[i]]``.
    tol : float > 0
        Stop when the relative duality gap (``relative_duality_gap_``) falls below ``tol``.
    max_iter : int >= 1
        Maximal number of outer iterations (per binary problem), the unit of ``n_iter_``.
        Every outer iteration ends in a duality-gap check and one ``history_`` record; one
        is, per solver:

        - "spg", "pgd": a step of the weights (a line search, with its SVM solves);
        - "mirror": a mirror-descent step of the weights;
        - "smo": the SMO core run until its KKT tolerance is met or for n steps
          (``n_smo_steps_`` counts the steps);
        - "silp": a solve of the master LP (with the SVM or SVM chunk before it);
        - "mwu": a check, every ``T // 50`` of the ``T`` iterations ``epsilon`` sets;
        - "easymkl": a gap check of the QP for the weights (after up to ``10 max(n, 1000)``
          SMO steps);
        - "average", "align", "alignf", "fheuristic", "pwmk": a gap check of the SVM on the
          fixed weights, its KKT tolerance tightened tenfold after each;
        - on low-rank kernels (``kernel_approximation``): "spg" as above; "smo" a gap check
          (a coordinate-ascent solve, then SPG steps); the one-shot learners as above.

        Stopping at ``max_iter`` above the tolerance warns (``ConvergenceWarning``) with the
        relative duality gap reached.
    kernel_normalization : {"diagonal", "trace"} or None
        Scaling of the base kernels built from X, fitted on the training data. "diagonal"
        (default): kernel k times ``n / trace(K_k)``, so that its mean diagonal entry is 1, as
        an RBF kernel's already is, and ``C`` means what it means in an SVC. "trace": unit
        trace (``1 / trace(K_k)``), the protocol of SimpleMKL and the papers' experiments
        (which used C of order 100 for it: the same model as "diagonal" with C / n). None: as
        computed. Precomputed stacks are always used as given.
    class_weight : dict, "balanced" or None
        Multiplies C for the samples of a class, as in :class:`sklearn.svm.SVC`; "balanced"
        uses ``n_samples / (n_classes * np.bincount(y))``. Every solver but "mwu" (one C for
        all samples) takes it.
    probability : bool
        Also fit Platt's sigmoid on 5-fold cross-validated decision values (as
        ``SVC(probability=True)``, one-vs-rest for more than two classes, then normalised),
        which enables :meth:`predict_proba` and :meth:`predict_log_proba`; the fit then
        costs six fits. :meth:`predict` still uses the decision function.
    n_jobs : int other than 0, or None
        Number of one-vs-rest problems (classes) solved in parallel threads, and of
        cross-validation folds for ``probability=True`` (joblib's meaning: None is 1, -1 all
        processors, -2 all but one). With one problem, or kernels computed on demand (whose
        row cache one solve uses at a time), the classes run one after the other and kernel
        rows are computed on ``n_jobs`` numba threads instead (:mod:`mklearn.kernels.threads`).
        The solve runs BLAS on as many threads (on one with the classes side by side).
    solver_options : dict, optional
        Switches of the SPG ablation: ``spectral``, ``nonmonotone``, ``precision_tuning``,
        ``second_order``, ``fallback``, ``aggregate_bound``, ``coarse_start``,
        ``cutting_planes`` (bools),
        ``inner_tol`` and ``eta0`` (see :func:`mklearn.solvers.spg_gmkl`); each solver's keys
        are checked.
    kernel_dtype : {"float64", "float32"}
        Precision of the base-kernel stack built from X (float32 halves its memory). With
        on-demand kernel rows (solvers "smo" and "mwu"), float32 computes RBF values by a
        vectorised single-precision exp (within ``1e-7 (2 + |x|)`` relative for the exponent
        x, as LIBSVM's float kernel cache), faster than float64's and half the row cache's
        bytes.
    random_state : int, RandomState or None
        Shuffles the folds of the cross-validation for ``probability=True`` and draws the
        landmarks of low-rank kernels (``kernel_approximation``); the solvers are
        deterministic.
    verbose : int
        If > 0, print the solver ``solver="auto"`` chose and show a progress bar with the
        ``objective`` and the ``relative_duality_gap`` of each history record (its total is
        ``max_iter`` only where ``max_iter`` caps those records).
    cache_size : float > 0 or "auto"
        Megabytes of kernel rows kept in memory when kernels are computed on demand (solvers
        "smo" and "mwu", or ``kernel_storage="rows"``; LIBSVM's ``-m``). "auto" (default):
        every row if they fit in half of ``memory_budget``, else that half
        (:func:`mklearn.memory.auto_cache_size`); the megabytes planned are ``cache_size_``.
        SMO-MKL's cache of the base kernels' rows starts within it at what one SVM's kernel
        cache holds at most on the same points (one kernel's matrix in single precision,
        32-200 MB) and grows only where rows read again would have paid for more slots
        (:class:`mklearn.kernels.cache.RowCache`).
    kernel_storage : {"auto", "stack", "rows"}
        How base kernels computed from X are held: "stack", the ``(n, n, m)`` stack in memory
        (fast for small n); "rows", rows computed on demand in an LRU cache of ``cache_size``
        MB plus ``O(m n)`` state (:class:`mklearn.kernels.operator.RowKernels`); "auto", the
        stack when it fits in ``memory_budget``, else rows. The choice is ``kernel_storage_``
        (and said in verbose output). Precomputed stacks are used as given.
    memory_budget : float or None
        Megabytes a fit may plan for; None: half the room under every memory limit (free
        memory, ``ulimit -v`` and ``-d``, the cgroup limit) when ``fit`` starts. A
        fit whose every path needs more raises ``ValueError`` before any kernel is computed,
        naming the bytes needed (see :mod:`mklearn.memory`).
    kernel_approximation : {"auto", "exact", "nystroem", "rff"}
        How base kernels computed from X are held. "exact": the kernels themselves
        (``kernel_storage`` then chooses stack or rows). "nystroem": each kernel as low-rank
        features ``K_k ~ Phi_k Phi_k'`` (:mod:`mklearn.kernels.low_rank`): exact for linear
        kernels and for kernels on columns with at most ``n_components`` distinct rows
        (binary, one-hot and categorical features), Nystroem on ``n_components`` landmarks
        shared by the kernels on the same columns otherwise; string kernels on sequences
        likewise (:mod:`mklearn.kernels.string_low_rank`: a spectrum kernel with at most
        ``n_components`` distinct d-mers by its counts, the others on ``n_components``
        landmark sequences); the solver then runs in feature
        space (:mod:`mklearn.solvers.feature_space`), in ``O(n R)`` memory and time per
        pass, ``R`` the total rank, never forming an ``n x n`` array. "rff": random Fourier
        features instead of Nystroem (RBF and Laplacian kernels only). "auto" (default):
        "nystroem" from ``LOW_RANK_SAMPLES`` (20,000) training points on when the solver
        runs in feature space ("smo", "spg", "average", "align", "alignf", "fheuristic") and
        ``kernel_storage`` is "auto", "exact" otherwise. The choice is
        ``kernel_approximation_``, said with the plan in verbose output; the measured error
        is ``approximation_error_``.
    n_components : int >= 1 or "auto"
        Landmarks (random features for "rff") of each approximated kernel; kernels on one
        column take at most 48 quantile landmarks. "auto" (default): 1,000 (at most
        n_samples), halved while the features do not fit in ``memory_budget``. An integer
        above n_samples raises ``ValueError``.
    groups : None, "view", "features", array-like of shape (n_kernels,) or list of lists
        Group of each base kernel, for ``regularizer="group"`` and for ``group_weights_``.
        "view": one group per view of multi-view input (the default for such input);
        "features": one group per feature block (kernels on the same columns; the default of
        "group" for single-matrix input); or one label per kernel, or a partition of the kernel
        indices (see :func:`mklearn.groups.check_groups`).
    combination : {"sum", "product"}
        "sum": ``K(d) = sum_k d_k K_k``. "product": ``K(d) = prod_k exp(-d_k D_k)``, an RBF
        kernel with one learned width per feature (or feature block), ``D_k`` gamma times the
        squared distance on block k of the standardised features (Jain, Vishwanathan and Varma,
        KDD 2012, sections 5.3-5.4; :mod:`mklearn.formulation.products`). Non-convex: SPG and
        PGD stop when
        the projected-gradient norm ``max_k |P(d - grad T) - d|_k`` is below ``tol`` (there is
        no duality gap; ``duality_gap_`` is NaN). ``kernels`` is then "features" (one width
        per column), a list of column-index lists (one width per block), a
        :class:`mklearn.formulation.products.FeatureProduct` (``gamma`` base width, default
        ``1 / n_features``, so all weights 1 is the RBF SVC with ``gamma="scale"`` on
        standardised data; the fit starts there), or "precomputed_distances" with a stack of
        squared distances ``(n, n, m)`` in ``fit`` and ``(n_test, n_train, m)`` in
        ``predict``. ``regularizer`` "l1" is ``lam * sum_k d_k`` on ``d >= 0`` (the paper's
        sigma; weights at zero drop features), "lp" is ``lam/2 ||d||_p^2``. Solvers "spg" and
        "pgd" only; no groups or multi-view input.

    Multi-view input: ``fit`` and ``predict`` also take a list or dict of 2-D arrays (views of
    the same samples, e.g. feature descriptors); ``kernels`` is applied to each view (a dict
    gives each view its own kernels) and the kernels are named ``view 'name': ...``.

    Attributes
    ----------
    solver_ : str
        The solver used (the one ``solver="auto"`` chose, or ``solver``).
    regularizer_ : str or Regularizer
        The regulariser used (the one ``regularizer="auto"`` chose, or ``regularizer``).
    lam_ : float
        The ``lam`` used (``lam="auto"`` resolved).
    kernel_weights_ : ndarray of shape (n_kernels,) or (n_classes, n_kernels)
        Learned weights d of the base kernels: an SVC with kernel ``sum_k d_k K_k`` and the same
        C reproduces the model. One row per class (one-vs-rest) when there are more than two
        classes.
    dual_coef_ : ndarray of shape (1, n_SV) or (n_classes, n_SV)
        ``alpha_i y_i`` of the support vectors (``y_i = +1`` for ``classes_[1]`` in the binary
        case, for the row's class in one-vs-rest).
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training set (union over classes), grouped by
        class in the order of ``classes_`` (increasing within a class), as in
        :class:`sklearn.svm.SVC`.
    n_support_ : ndarray of shape (n_classes,), dtype int32
        Number of support vectors of each class (for two classes too, as SVC): the first
        ``n_support_[0]`` entries of ``support_`` are of ``classes_[0]``, and so on.
    support_vectors_ : ndarray of shape (n_SV, n_features), or sparse
        The rows of X (multi-view input: the views side by side) of the support vectors, in
        the order of ``support_``. With ``kernels="precomputed"`` an empty array, as
        ``SVC(kernel="precomputed")`` has (``support_`` indexes the kernels' rows); not set
        for string kernels. With ``combination="product"`` on X: the support vectors after
        the product's standardisation (what its prediction reads).
    shape_fit_ : tuple of int
        The shape of X at fit: ``(n_samples, n_features)``, the shape of the precomputed
        kernel or stack, or ``(n_samples,)`` for sequences.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Bias of each decision function.
    objective_ : float or ndarray of shape (n_classes,)
        Final ``T(d)``.
    duality_gap_ : float or ndarray of shape (n_classes,)
        The duality gap ``U - L``: the best upper bound ``U`` on the optimal MKL objective
        found (a primal value) minus the best lower bound ``L`` (a dual value); absolute, in
        units of the objective. Zero at the optimum; every solver's stopping rule and the
        convergence warning use its relative form. NaN where no gap exists (products of
        kernels, MWUMKL with a hard margin left violated).
    relative_duality_gap_ : float or ndarray of shape (n_classes,)
        ``duality_gap_ / max(|U|, 1e-12)``: the quantity compared with ``tol``, shown as
        ``relative_duality_gap`` in the progress bar, the ``mklearn fit`` summary, its
        ``--json`` output and each ``history_`` record.
    history_ : list of dict, or one list per class
        One record per outer iteration (see ``max_iter``; "spg", "pgd" and "mirror" also
        record their starting point), the last one certifying the returned model:
        ``iteration``, ``objective``, ``relative_duality_gap``, ``n_svm_solves``, ``time``
        (seconds) and the solver's own measures under their own names (SILP's ``eps_mkl``,
        MWUMKL's ``lower``, ``upper`` and absolute ``duality_gap``; see
        :class:`mklearn.solvers.MKLResult`). The records are dicts
        (:class:`mklearn.solvers.result.HistoryRecord`) in which the former key ``"gap"``
        still reads ``relative_duality_gap``, with a ``FutureWarning``, until the next release.
    n_iter_ : int or ndarray of shape (n_classes,)
        Outer iterations (what one is per solver: see ``max_iter``).
    n_svm_solves_ : int or ndarray of shape (n_classes,)
        Inner SVM solves.
    n_smo_steps_ : int or ndarray of shape (n_classes,)
        SMO steps of the solvers whose inner unit is one ("smo", the QP of "easymkl", the
        one-shot learners' SVM on exact kernels), and of all the SVM solves of "spg",
        "pgd", "mirror" and "silp" on exact kernels (``n_smo_steps_ / n_svm_solves_`` steps
        a solve, or an interleaved SILP's chunk); 0 for the others, whose inner solves
        ``n_svm_solves_`` counts.
    stack_passes_ : float or None
        Values of the stored ``(n, n, m)`` stack of base kernels the fit read (the input's
        check, every solver's reads of rows, products and quadratic terms, the learned
        kernel's check), over ``m n^2``: passes over the stack, over all classes. None when
        the kernels were not held as a stack (rows computed on demand, low-rank features,
        products of kernels).
    kernel_names_ : list of str
        Readable names of the base kernels (``view 'fou': rbf(sigma=2)`` for multi-view input).
    kernel_storage_ : {"stack", "rows", "features"}
        How the base kernels were held during the fit (see ``kernel_storage``; "features":
        low-rank features, see ``kernel_approximation``).
    kernel_approximation_ : {"exact", "nystroem", "rff"}
        ``kernel_approximation`` resolved.
    low_rank_ : LowRankMap
        Only for low-rank kernels: the fitted feature maps (landmarks, projections,
        ``ranks_``, ``exact_``) that give the features of new points.
    approximation_error_ : float
        Only for low-rank kernels: the relative Frobenius error of the sum of the
        approximated kernels on 400 training points that are not landmarks,
        ``||sum_k (K_k - Phi_k Phi_k')||_F / ||sum_k K_k||_F``.
    coef_ : ndarray of shape (n_models, R)
        Only for low-rank kernels: the weights of the features, so that the decision
        function of model c is ``Phi(x) . coef_[c] + intercept_[c]``.
    groups_ : KernelGroups or None
        The kernel groups (None when ``groups`` is None and the input has one view).
    group_names_ : list of str
        Name of each group (only with groups).
    group_weights_ : ndarray of shape (n_groups,) or (n_classes, n_groups)
        Share of the kernel weight in each group, ``sum_{k in j} d_k / sum_k d_k`` (only with
        groups). For "group" MKL the group sums are ``1 / lambda_j``, lambda the group weights
        of the paper's dual.
    views_ : Views or None
        Names and column counts of the views of multi-view input.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    class_weight_ : ndarray of shape (n_classes,)
        The weight of each class (ones without ``class_weight``).
    probA_, probB_ : ndarray of shape (1,) or (n_classes,)
        Only with ``probability=True``: Platt's sigmoid
        ``P(class | f) = 1 / (1 + exp(probA_ * f + probB_))`` of each decision function.
    feature_names_in_ : ndarray of shape (n_features,)
        Column names of X when it has them (a DataFrame); they also name the kernels.
    kernel_time_, solve_time_ : float
        Seconds spent building the base kernels and solving, without numba's compilation.
    compile_time_ : float
        Seconds numba spent compiling, or loading its cached machine code, during the fit:
        the first fit after an install pays it (``make demo`` and ``make test`` warm the
        cache).
    product_ : FittedProduct or "distances"
        Only with ``combination="product"``: the fitted standardisation and blocks (or
        "distances" for precomputed distances).

    Raises
    ------
    ValueError
        On invalid parameters, input with NaN/inf, a single class, continuous targets (use
        :class:`MKLRegressor`), kernel stacks of the wrong shape or not symmetric PSD, an
        unsupported solver/regulariser pair, a ``class_weight`` for a class not in y,
        negative ``sample_weight``, or weights with solver "mwu".
    """

    _parameter_constraints: dict = parameter_constraints(
        "kernels", "kernel_normalization", "class_weight", "probability", "n_jobs", "p", "lam",
        "C", "tol", "max_iter", "solver_options", "kernel_dtype", "random_state", "verbose",
        "cache_size", "kernel_storage", "memory_budget", "groups", "combination",
        "kernel_approximation", "n_components",
        solver=[StrOptions(set(SOLVERS) | {"auto"})],
        regularizer=[StrOptions(REGULARIZERS.names("auto")), Regularizer],
    )

    def __init__(
        self,
        *,
        kernels="svc+feature_rbf",
        solver="auto",
        regularizer="auto",
        p=2.0,
        lam="auto",
        C=1.0,
        tol=1e-3,
        max_iter=500,
        kernel_normalization="diagonal",
        class_weight=None,
        probability=False,
        n_jobs=None,
        solver_options=None,
        kernel_dtype="float64",
        random_state=None,
        verbose=0,
        cache_size="auto",
        kernel_storage="auto",
        memory_budget=None,
        groups=None,
        combination="sum",
        kernel_approximation="auto",
        n_components="auto",
    ):
        self.kernels = kernels
        self.kernel_normalization = kernel_normalization
        self.class_weight = class_weight
        self.probability = probability
        self.n_jobs = n_jobs
        self.solver = solver
        self.regularizer = regularizer
        self.p = p
        self.lam = lam
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.solver_options = solver_options
        self.kernel_dtype = kernel_dtype
        self.random_state = random_state
        self.verbose = verbose
        self.cache_size = cache_size
        self.kernel_storage = kernel_storage
        self.memory_budget = memory_budget
        self.groups = groups
        self.combination = combination
        self.kernel_approximation = kernel_approximation
        self.n_components = n_components

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None):
        """Learn the kernel weights and the SVM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples, n_kernels)
            Training data, or the base-kernel stack when ``kernels="precomputed"``.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights: sample i gets the SVM bound ``C * sample_weight[i]``
            (times its class weight), as in :class:`sklearn.svm.SVC`.

        Returns
        -------
        self : MKLClassifier
        """
        with compile_time_of(self):
            return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight):
        self._validate_params()
        if self.regularizer == "lp" and not self.p > 1:
            raise ValueError(
                f"the 'p' parameter must be > 1 for the lp regularizer, got {self.p}; for p = 1 "
                "use regularizer='l1'"
            )
        product = self.combination == "product"
        if product:
            _product.check_product_params(self)
            self.kernel_approximation_ = "exact"
            self._exact_only("products of kernels")
        elif isinstance(self.kernels, str) and self.kernels == "precomputed_distances":
            raise ValueError(
                "kernels='precomputed_distances' needs combination='product'; for a sum of "
                "kernels pass kernel values with kernels='precomputed'"
            )
        self.regularizer_ = self._regularizer_choice(X)
        info = self._resolve_solver("classification", self.combination)
        X, y, sample_weight = self._fit_input(X, y, sample_weight, info)
        options = {**info.defaults, **check_solver_options(self.solver_, info,
                                                           self.solver_options)}
        y = check_label_types(y)
        _check_classification_labels(y)
        start = time.perf_counter()
        columns = info.input == "columns"
        if product:
            self._held_plan = None  # no rows to plan: the product's own path
            operator, y = _product.product_input(self, X, y)
        else:
            self.__dict__.pop("product_", None)
            operator, y = self._training_kernels(X, y, columns=columns,
                                                 feature_solver=info.feature_function,
                                                 on_workers=info.state_on_workers)
        self.kernel_time_ = seconds_since(start)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError(
                f"y contains one class only ({self.classes_.tolist()[0]!r}); MKL classification "
                "needs labels of at least two classes"
            )
        targets = [self.classes_[1]] if self.classes_.size == 2 else list(self.classes_)
        plan = self._plan_fit(info, len(targets))
        cost = self._costs(y, sample_weight)
        if info.per_sample_costs:
            cost, cap = cap_costs(cost, operator, len(y))
        else:  # one C, which only caps a normalised alpha: no overflow
            cost = self._one_cost(cost)
        if columns:
            options.setdefault("cache_size", self._cache_megabytes(len(y), operator.n_kernels))
        if product:
            options.setdefault("d0", operator.initial_weights())
            self.groups_ = None
            regularizer = _product.product_regularizer(self)
        else:
            self.groups_ = self._kernel_groups()
            regularizer = self._regularizer_part(self.groups_)
        get_solver(self.solver_, regularizer, self.combination)  # the instance's capabilities

        function, options = self._solver_function(info, options)

        def solve(target):
            y_pm = np.where(y == target, 1.0, -1.0)
            with _progress(self, target if len(targets) > 1 else None, plan, y.size) as bar, \
                    svm_heartbeat(None if bar is None else bar.svm_heartbeat):
                beats = ({"heartbeat": bar.heartbeat} if bar is not None and info.heartbeat
                         and self.kernel_storage_ != "features" else {})
                result = function(
                    operator,
                    y_pm,
                    cost,
                    regularizer,
                    tol=self.tol,
                    max_iter=self.max_iter,
                    callback=None if bar is None else bar.callback,
                    **options,
                    **beats,
                )
            return result, y_pm

        start = time.perf_counter()
        # classes side by side (each on one numba thread, BLAS on one) when the kernels can
        # be shared, else one after the other with n_jobs threads for the kernel rows
        n_jobs = local_jobs(self.n_jobs)  # 1 inside a Dask worker's task
        if (len(targets) > 1 and effective_n_jobs(n_jobs) > 1
                and operator.capabilities.thread_safe):
            with blas_threads(1):
                results = Parallel(n_jobs=n_jobs, prefer="threads")(
                    delayed(_on_one_thread)(solve, target) for target in targets
                )
        else:
            with fit_threads(n_jobs):
                results = [solve(target) for target in targets]
        for result, _ in results:
            if not result.converged:
                message = (_product.product_convergence_message if product
                           else _convergence_message)(self, result)
                warnings.warn(message, ConvergenceWarning, stacklevel=2)
        self.solve_time_ = seconds_since(start)
        if info.per_sample_costs:
            warn_if_capped(self, cap, sum(at_bound(r.alpha, cost, cap) for r, _ in results))
        if not product:
            self._check_learned_kernels(operator, [r.kernel_weights for r, _ in results])
        self._store(results, len(self.kernel_names_), y)
        if product:
            _product.finish_product(self)
        self._store_fit_shape(X)
        self._warn_if_one_class(X, y, operator)
        self.stack_passes_ = None if product else operator.stack_passes
        for name in ("probA_", "probB_"):
            self.__dict__.pop(name, None)
        if self.probability:
            self._fit_platt(X, y, sample_weight)
        return self

    def _warn_if_one_class(self, X, y, operator):
        """A :class:`~mklearn.validation.DegenerateModelWarning` when the model predicts one
        class for every training point checked (at most ``ONE_CLASS_CHECK_POINTS``, evenly
        spaced) where y has several (kernels too flat for C: every point a margin error)."""
        if self.views_ is not None:
            return
        n = _num_samples(X)
        picked = np.unique(np.linspace(0, n - 1, min(n, ONE_CLASS_CHECK_POINTS)).astype(int))
        if np.unique(y[picked]).size < 2:
            return
        if getattr(self, "product_", None) is not None:
            scores = np.asarray(self.decision_function(self._named(_rows_of(X, picked))))
        elif self._precomputed:
            scores = self._training_scores(operator, picked)
        else:  # as decision_function, in small blocks: the check costs little memory
            scores = self._expansions(self._named(_rows_of(X, picked)),
                                      block_bytes=CHECK_BLOCK_BYTES) + self.intercept_
            scores = scores[:, 0] if scores.shape[1] == 1 else scores
        labels = _class_index(scores)
        # equal decisions everywhere: constant kernels, which their own warning names
        if np.unique(labels).size == 1 and np.ptp(scores, axis=0).max() > 0:
            warn_degenerate(self, (
                f"it predicts class {self.classes_[labels[0]].tolist()!r} for all "
                f"{picked.size} training points "
                f"checked, though they hold {np.unique(y[picked]).size} classes: at "
                f"C={self.C:g} the kernels are too flat to separate any point (every point "
                "costs less as a margin error). Raise C (search it, e.g. GridSearchCV over "
                "C), or scale the kernels (kernel_normalization='diagonal')"))

    def _training_scores(self, operator, picked):
        """The decision values of the training points ``picked`` from the fit's own base
        kernels (a stack already checked: :meth:`decision_function` would check and copy its
        rows again, which took as long as an SPG-GMKL fit on 1,000 points and 100 kernels):
        shape (len(picked),) or (len(picked), n_classes), as :meth:`decision_function`."""
        weights = np.atleast_2d(self.kernel_weights_)
        scores = np.tile(self.intercept_, (picked.size, 1))
        for c, dual in enumerate(self.dual_coef_):
            coefficients = np.zeros(self.n_train_)
            coefficients[self.support_] = dual
            scores[:, c] += operator.combined_rows_times(weights[c], picked, coefficients)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def _named(self, rows):
        """Rows of a Dask array computed, under the feature names the fit kept (its
        dataframe's columns); other rows as they are."""
        if not is_dask_collection(rows):
            return rows
        rows = np.asarray(rows)
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            return rows
        import pandas as pd

        return pd.DataFrame(rows, columns=names)

    def _regularizer_choice(self, X=None):
        """``regularizer`` with "auto" resolved: "kl" for a sum of kernels with solver
        "auto" (SMO-MKL), "l1" for one kernel with solver "auto" (its weight is then 1: the
        SVC) and for products (which take no KL); with a solver named, the regulariser it
        is made for (:attr:`~mklearn.solvers.SolverInfo.auto_regularizer`: "kl" for SMO-MKL,
        "l1" for the others)."""
        if not (isinstance(self.regularizer, str) and self.regularizer == "auto"):
            return self.regularizer
        if self.combination != "sum":
            return "l1"
        if self.solver != "auto":
            return SOLVERS[self.solver].auto_regularizer
        return "l1" if has_one_kernel(self.kernels, X) else "kl"

    def _one_cost(self, cost):
        """The one C of a solver that takes no per-sample bounds; ValueError when the
        samples' bounds differ."""
        if not np.all(cost == cost[0]):
            raise ValueError(
                f"solver {self.solver_!r} takes one C for all samples (its normalised "
                "algorithm has no per-sample bounds): drop class_weight and sample_weight, or "
                "use solver='auto' or 'spg'"
            )
        return float(cost[0])

    def _costs(self, y, sample_weight):
        """Per-sample SVM bounds ``C * sample_weight_i * class_weight[y_i]``, shape (n,);
        sets ``class_weight_``. ValueError for weights of absent classes or negative weights."""
        if isinstance(self.class_weight, dict):
            missing = [c for c in self.class_weight if not np.any(self.classes_ == c)]
            if missing:
                raise ValueError(
                    f"class_weight names class(es) {missing} that are not in y (classes "
                    f"{self.classes_.tolist()}); give weights for classes of y only"
                )
        self.class_weight_ = compute_class_weight(self.class_weight, classes=self.classes_, y=y)
        weights = _check_sample_weight(sample_weight, np.empty((len(y), 0)),
                                       ensure_non_negative=True)
        cost = float(self.C) * weights * self.class_weight_[np.searchsorted(self.classes_, y)]
        weighted = np.unique(y[cost > 0])
        if weighted.size < 2:
            raise ValueError(
                f"only {weighted.size} class has samples of positive weight (sample_weight "
                "times class_weight); MKL classification needs two classes with positive weight"
            )
        return cost

    def _fit_platt(self, X, y, sample_weight):
        """Platt's sigmoids on 5-fold cross-validated decision values (as SVC), fitted by
        scikit-learn's sigmoid calibration."""
        from sklearn.calibration import _SigmoidCalibration
        from sklearn.model_selection import StratifiedKFold, cross_val_predict

        folds = StratifiedKFold(5, shuffle=True, random_state=self.random_state)
        inner = clone(self).set_params(probability=False, verbose=0, n_jobs=None)
        if isinstance(self.class_weight, dict):  # cross_val_predict gives y as 0, 1, ...
            inner.set_params(class_weight={int(np.searchsorted(self.classes_, label)): weight
                                           for label, weight in self.class_weight.items()})
        params = None if sample_weight is None else {"sample_weight": sample_weight}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            scores = cross_val_predict(inner, X, y, cv=folds, method="decision_function",
                                       params=params, n_jobs=self.n_jobs)
        scores = scores.reshape(len(y), -1)
        targets = self.classes_[1:] if self.classes_.size == 2 else self.classes_
        weights = None if sample_weight is None else np.asarray(sample_weight, float)
        sigmoids = [_SigmoidCalibration().fit(scores[:, c], (y == target).astype(float),
                                              weights)
                    for c, target in enumerate(targets)]
        self.probA_ = np.array([s.a_ for s in sigmoids])
        self.probB_ = np.array([s.b_ for s in sigmoids])

    def _store(self, results, n_kernels, y):
        self._own_training_points()
        weights = np.array([r.kernel_weights for r, _ in results])
        # relative to each model's largest weight (lp weights scale with the kernels' values)
        largest = np.maximum(weights.max(axis=1, keepdims=True), 1e-300)
        weights[weights <= _WEIGHT_EPS * largest] = 0.0
        alphas = np.array([r.alpha * y_pm for r, y_pm in results])
        support = np.flatnonzero(np.any(alphas != 0.0, axis=0))
        codes = np.searchsorted(self.classes_, y[support])
        order = np.argsort(codes, kind="stable")  # grouped by class, as SVC orders them
        self.support_ = support[order]
        self.n_support_ = np.bincount(codes, minlength=self.classes_.size).astype(np.int32)
        self.dual_coef_ = alphas[:, self.support_]
        self.intercept_ = np.array([r.intercept for r, _ in results])
        self.objective_ = np.array([r.objective for r, _ in results])
        self.duality_gap_ = np.array([r.duality_gap for r, _ in results])
        self.relative_duality_gap_ = np.array([r.relative_duality_gap for r, _ in results])
        self.n_iter_ = np.array([r.n_iter for r, _ in results])
        self.n_svm_solves_ = np.array([r.n_svm_solves for r, _ in results])
        self.n_smo_steps_ = np.array([r.n_smo_steps for r, _ in results])
        self.history_ = [r.history for r, _ in results]
        if len(results) == 1:
            weights = weights[0]
            self.objective_ = float(self.objective_[0])
            self.duality_gap_ = float(self.duality_gap_[0])
            self.relative_duality_gap_ = float(self.relative_duality_gap_[0])
            self.n_iter_ = int(self.n_iter_[0])
            self.n_svm_solves_ = int(self.n_svm_solves_[0])
            self.n_smo_steps_ = int(self.n_smo_steps_[0])
            self.history_ = self.history_[0]
        self.kernel_weights_ = weights
        self._store_feature_coef([r for r, _ in results])
        self._drop_constant_expansion()
        if self.groups_ is not None:
            self.group_names_ = list(self.groups_.names)
            sums = np.array([self.groups_.sum(w) for w in np.atleast_2d(weights)])
            shares = sums / np.maximum(sums.sum(axis=1, keepdims=True), 1e-300)
            self.group_weights_ = shares[0] if len(results) == 1 else shares
        else:
            for name in ("group_names_", "group_weights_"):
                self.__dict__.pop(name, None)

    def _store_fit_shape(self, X):
        """SVC's ``shape_fit_`` and, for a sum of kernels, its ``support_vectors_``: the
        support's training rows of numeric X, empty for precomputed kernels (as
        ``SVC(kernel="precomputed")``), not set for string kernels (products set their own)."""
        strings = is_string_kernels(self.kernels)
        if self._precomputed:
            self.shape_fit_ = tuple(np.shape(X))
        else:
            self.shape_fit_ = (self.n_train_,) if strings else (self.n_train_,
                                                                 self.n_features_in_)
        if self.combination == "product":
            return
        self.__dict__.pop("support_vectors_", None)
        if self._precomputed:
            self.support_vectors_ = np.empty((0, 0))
        elif strings:
            return
        elif getattr(self, "low_rank_", None) is not None:  # the model is coef_ on features
            self.support_vectors_ = np.empty((0, self.n_features_in_))
        else:
            self.support_vectors_ = self.bank_.X_fit_[self.support_]

    def _check_before_kernels(self, bank):
        """The groups are checked against the kernel count before any kernel is computed."""
        self._kernel_groups(bank.n_kernels, bank)

    def _kernel_groups(self, n_kernels=None, bank=None):
        """The validated kernel groups (None without groups); ValueError for bad groups."""
        groups = self.groups
        if groups is None and self.regularizer == "group" and self.views_ is None:
            if self._precomputed:
                raise ValueError(
                    "regularizer='group' with kernels='precomputed' needs groups=: one group "
                    "label per kernel"
                )
            groups = "features"
        bank = self.bank_ if bank is None else bank
        return resolve_groups(
            groups,
            len(self.kernel_names_) if n_kernels is None else n_kernels,
            views=self.views_,
            view_codes=getattr(self, "_view_codes", None),
            specs=None if bank is None else list(bank.specs),
        )

    # -------------------------------------------------------------- predict
    @on_partitions
    def decision_function(self, X):
        """Signed distance to the separating surface.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features), or (n_test, n_train, n_kernels)
            Test data, or the test-versus-training base-kernel stack when precomputed.
            A ``dask.array.Array`` partitioned by rows gives a Dask array with its row
            chunks, computed block by block (:mod:`mklearn.distributed.partitions`).

        Returns
        -------
        ndarray of shape (n_test,) or (n_test, n_classes)
            Positive values favour ``classes_[1]`` (binary) or the column's class.
        """
        check_is_fitted(self)
        if getattr(self, "product_", None) is not None:
            return _product.product_decision(self, X)
        scores = self._expansions(X) + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    @on_partitions
    def predict(self, X):
        """Predicted class labels, shape (n_test,)."""
        index = _class_index(self.decision_function(X))
        return self.classes_[index]

    def _has_probability(self):
        if not self.probability:
            raise AttributeError(
                "predict_proba is not available when probability=False; fit with "
                "probability=True"
            )
        return True

    @available_if(_has_probability)
    @on_partitions
    def predict_proba(self, X):
        """Class probabilities by Platt scaling of the decision values.

        ``P(class | f) = 1 / (1 + exp(probA_ f + probB_))`` per decision function (Platt,
        1999, as ``SVC(probability=True)``; the sigmoids are fitted on 5-fold
        cross-validated decision values); for more than two classes the one-vs-rest
        probabilities are normalised to sum to 1.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features), or (n_test, n_train, n_kernels)
            A ``dask.array.Array`` partitioned by rows gives a Dask array with its row
            chunks, computed block by block (:mod:`mklearn.distributed.partitions`).

        Returns
        -------
        ndarray of shape (n_test, n_classes)
            Columns in the order of ``classes_``.

        Raises
        ------
        AttributeError
            If ``probability=False``.
        """
        check_is_fitted(self, "probA_")
        scores = np.asarray(self.decision_function(X)).reshape(_num_samples(X), -1)
        proba = expit(-(scores * self.probA_ + self.probB_))
        if self.classes_.size == 2:
            return np.column_stack([1.0 - proba[:, 0], proba[:, 0]])
        total = proba.sum(axis=1, keepdims=True)
        uniform = np.full_like(proba, 1.0 / proba.shape[1])
        return np.where(total > 0, proba / np.where(total > 0, total, 1.0), uniform)

    @available_if(_has_probability)
    @on_partitions
    def predict_log_proba(self, X):
        """``log(predict_proba(X))``, shape (n_test, n_classes)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
