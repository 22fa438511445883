"""The swappable parts of an MKL formulation: ``kernels x combination x regularizer x loss``.

- :mod:`~mklearn.formulation.regularizers`: the weights' regularisers (l1 simplex, lp, KL
  divergence, l1 penalty, group mixed norm), each declaring its feasible set, projection,
  conjugate and Hessian;
- :mod:`~mklearn.formulation.combinations`: the linear sum of a stack of kernels;
  :mod:`~mklearn.formulation.products`: products of kernels (per-feature RBF widths);
- :mod:`~mklearn.formulation.losses`: hinge (C-SVC), epsilon-insensitive and one-class: best
  bias and primal (their tasks in LIBSVM's generic dual form, signs, linear term and bounds,
  are :mod:`mklearn.solvers.tasks`).

Solvers (:mod:`mklearn.solvers`) ask these parts for capabilities, never for names; your own
part subclasses the documented bases of :mod:`mklearn.extending`.
"""

# every built-in part is registered (its family's registry) once any part is imported
from mklearn.formulation import combinations, losses, products, regularizers  # noqa: E402, F401
