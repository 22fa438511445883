"""A lower bound on the l1-MKL optimum from the cutting planes of SVM solutions (SILP's model).

Every feasible dual point ``alpha_r`` bounds ``W(d)`` from below at every ``d``:
``W(d) >= p(alpha_r) - 1/2 sum_k d_k q_k(alpha_r)``, with the linear part ``p`` of the task's
dual and the quadratic terms ``q_k = v' K_k v`` (ALGORITHMS.md section 1). The minimum over
the simplex of the largest of these planes is therefore a lower bound on the optimum: the
value of SILP's master LP (Sonnenburg et al., JMLR 7, 2006, sections 2.1 and 2.3.1) over
the solutions a run has computed, wherever they came from. Where ``W`` has a kink at the
optimum (the SVM's solution is not unique), the planes of solutions on either side of it (line
search trials beyond the kink among them) meet there, and this bound closes gaps that no single
solution, nor the segment search of :class:`~mklearn.solvers.dual_aggregate.DualAggregate`,
closes. Measured on the SVM solutions of one SPG-GMKL run on ``bench_unseen.py``'s w8a-1000
(100 kernels, C = 1), which stalled at a certified gap of 2.6e-3: the planes of its first 115
solves bound the gap by 9.7e-4, the best single solution by 4.2e-3.

The bound is computed from the LP's dual: with multipliers ``lambda`` on the planes (a point of
the simplex), ``sum_r lambda_r p_r - 1/2 max_k sum_r lambda_r q_k(alpha_r)`` is a lower bound
for any such ``lambda`` (weak duality), so the value does not depend on the LP solver's
tolerances.
"""

from __future__ import annotations

import numpy as np

from mklearn.solvers.silp_master import MasterLP

# The master LP has one column per kernel. HiGHS's first solve grows fast with them (one
# plane, presolve off: 5 ms at 2,000 kernels, 0.14 s at 10^4, 7.9 s at 10^5; presolve on
# 1.8 s at 10^4 and 135 s at 10^5; later solves are hot-started, 0.001-0.07 s): above this
# many kernels no planes are kept
MAX_KERNELS = 10_000


class CuttingPlaneBound:
    """The planes ``p_r - 1/2 q_r' d`` of SVM solutions and the lower bound they give on
    ``min_{d in simplex} W(d)``: SILP's :class:`~mklearn.solvers.silp_master.MasterLP` (which
    maximises ``theta <= sum_k d_k S_k``, ``S = q / 2 - p``, the bound's negative), every
    plane kept.

    Parameters
    ----------
    n_kernels : int
        Number of base kernels m.

    Attributes
    ----------
    lower : float
        The best lower bound found so far (-inf before the first plane).
    n_planes : int
        Planes added.
    """

    def __init__(self, n_kernels: int):
        self.lower = -np.inf
        self._linear = []  # p_r
        self._terms = []  # q(alpha_r), shape (m,) each
        self._pending = 0  # planes added since the last LP
        self._master = MasterLP(n_kernels, prune=False)
        self._master.lp.setOptionValue("presolve", "off")  # see MAX_KERNELS

    @property
    def n_planes(self) -> int:
        return len(self._linear)

    def add(self, linear: float, terms: np.ndarray) -> None:
        """Add the plane of a feasible dual point with linear part ``linear`` and quadratic
        terms ``terms`` (shape (m,), every kernel)."""
        terms = np.asarray(terms, dtype=np.float64)
        self._linear.append(float(linear))
        self._terms.append(terms)
        self._master.add(0.5 * terms - float(linear))
        self._pending += 1

    def bound(self) -> float:
        """The lower bound from every plane added (an LP when planes were added since the
        last call); -inf before the first."""
        if not self._pending:
            return self.lower
        self._pending = 0
        try:
            self._master.solve()
        except RuntimeError:  # no certificate from a failed LP: the bound stays
            return self.lower
        weights = self._master.duals.copy()
        if not weights.sum() > 0.0:
            return self.lower
        weights /= weights.sum()
        mixed = weights @ np.asarray(self._terms)
        self.lower = max(self.lower, float(weights @ np.asarray(self._linear) - 0.5 * mixed.max()))
        return self.lower
