"""Base kernels, kernel recipes and the kernel bank that evaluates them.

- :mod:`~mklearn.kernels.specs`: immutable base-kernel descriptions (Linear, Polynomial,
  RBF, Laplacian), optionally restricted to feature columns.
- :mod:`~mklearn.kernels.recipes`: data-dependent kernel families (SimpleMKL's 13 (D + 1),
  the estimators' defaults with SVC()'s own kernel first)
  and :func:`resolve_kernels` for estimators' ``kernels=`` argument.
- :mod:`~mklearn.kernels.bank`: :class:`KernelBank`, which evaluates the kernels into
  ``(n_x, n_z, n_kernels)`` stacks with standardisation and unit-trace normalisation.
- :mod:`~mklearn.kernels.base`: :class:`KernelOperator`, how every solver reads base
  kernels (rows and diagonal, with declared :class:`Capabilities`); subclass it for kernels
  of your own (``docs/extending.md``). :class:`KernelColumns` computes rows from X,
  :class:`StackColumns` reads a precomputed stack.
- :mod:`~mklearn.kernels.strings` and :mod:`~mklearn.kernels.string_bank`: string kernels
  (spectrum, weighted degree and its sub-kernels) on sequences, with the linadd feature map.
- :mod:`~mklearn.kernels.factory`: :func:`~mklearn.kernels.factory.make_operator`, the
  operator a fit trains on, made from its input, kernel spec and memory plan; the checks of
  that input (:mod:`~mklearn.kernels.checks`, :mod:`~mklearn.kernels.stack_checks`) and
  multi-view input (:mod:`~mklearn.kernels.views`).
"""

from .bank import KernelBank
from .base import Capabilities, KernelOperator
from .checks import count_far_outside as count_far_outside
from .checks import feature_range as feature_range
from .checks import is_dask_collection as is_dask_collection
from .checks import is_views as is_views
from .checks import rows_are_identical as rows_are_identical
from .checks import validate_numeric as validate_numeric
from .checks import warn_constant_model as warn_constant_model
from .checks import warn_degenerate as warn_degenerate
from .checks import warn_far_outside as warn_far_outside
from .columns import KernelColumns, StackColumns
from .factory import has_one_kernel as has_one_kernel
from .factory import make_operator as make_operator
from .low_rank import APPROXIMATIONS as APPROXIMATIONS
from .low_rank import LOW_RANK_SAMPLES as LOW_RANK_SAMPLES
from .recipes import SVC_KERNEL_LAM as SVC_KERNEL_LAM
from .recipes import (
    KernelRecipe,
    MWUMKLRecipe,
    mwumkl_kernels,
    resolve_kernels,
    simple_mkl_kernels,
    svc_feature_rbf_kernels,
    svc_kernel,
    svc_simple_mkl_kernels,
)
from .recipes import recipe_of as recipe_of
from .specs import RBF, KernelSpec, Laplacian, Linear, Polynomial, kernel_from_dict
from .stack_checks import check_learned_kernel as check_learned_kernel
from .stack_checks import check_test_stack as check_test_stack
from .string_bank import StringColumns, StringKernelBank
from .strings import Spectrum, WeightedDegree, wd_sub_kernels
from .strings import is_string_kernels as is_string_kernels
from .threads import blas_threads as blas_threads
from .threads import fit_threads as fit_threads
from .threads import numba_threads as numba_threads
from .views import resolve_groups as resolve_groups

__all__ = [
    "Linear",
    "Polynomial",
    "RBF",
    "Laplacian",
    "KernelSpec",
    "kernel_from_dict",
    "KernelRecipe",
    "simple_mkl_kernels",
    "svc_kernel",
    "svc_simple_mkl_kernels",
    "svc_feature_rbf_kernels",
    "MWUMKLRecipe",
    "mwumkl_kernels",
    "resolve_kernels",
    "KernelBank",
    "KernelOperator",
    "Capabilities",
    "KernelColumns",
    "StackColumns",
    "Spectrum",
    "WeightedDegree",
    "wd_sub_kernels",
    "StringKernelBank",
    "StringColumns",
]
