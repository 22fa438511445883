"""A coarse start for l1-MKL on many points: the kernel weights of the problem on a subsample.

At the l1 optimum few kernels carry weight, and on a subsample the same few usually do. SPG-GMKL
from uniform weights pays for its first SVM solves with rows of every kernel (50 kernels: 50
exponentials per kernel value); started from a subsample's weights, it solves on those few and
needs every kernel only in the gradient passes that certify the result. The start changes the
path, not the answer: the run still stops on its own certified duality gap.

The subsample keeps ``COARSE_SHARE`` of each class (seeded: the same points every fit), and its
costs are divided by that share, so that ``C`` times the number of points, the weight of the
loss against the margin, is the same as on all points. Its own run stops at the relative gap
``max(tol, COARSE_TOL)`` and, from ``COARSE_MIN_SAMPLES`` points on, starts coarse in turn
(32,561 a9a points: 8,140, then 2,035). Our addition to SPG-GMKL (Jain, Vishwanathan and
Varma, KDD 2012), in the spirit of the coarse-to-fine starts of multilevel SVM solvers.
"""

from __future__ import annotations

import numpy as np

__all__ = ["coarse_weights", "COARSE_MIN_SAMPLES", "COARSE_SHARE", "COARSE_TOL"]

COARSE_MIN_SAMPLES = 8000  # points from which a coarse start pays (a9a: see the benchmarks)
COARSE_SHARE = 0.25  # share of each class in the subsample
COARSE_TOL = 1e-2  # relative duality gap the subsample's run stops at (at least tol)
COARSE_SEED = 0


def subsample(y, share, seed=COARSE_SEED):
    """Sorted indices of ``share`` of each class of ``y`` (at least one point per class)."""
    rng = np.random.default_rng(seed)
    picked = []
    for label in np.unique(y):
        members = np.flatnonzero(y == label)
        size = max(1, int(round(share * members.size)))
        picked.append(rng.choice(members, size=size, replace=False))
    return np.sort(np.concatenate(picked))


def coarse_weights(operator, y, cost, solve, *, tol, **options):
    """Kernel weights of the problem on a subsample, or None when no coarse start applies.

    Parameters
    ----------
    operator : RowKernels
        Applies when it offers ``subset(indices)`` (the same kernels on some points) and has
        ``n_samples >= COARSE_MIN_SAMPLES``.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    cost : ndarray of shape (n,)
        Per-sample SVM costs.
    solve : callable
        ``solve(operator, y, cost, tol=..., **options)`` returning an ``MKLResult`` (the
        solver itself).
    tol : float
        The run's relative-gap tolerance; the subsample's run stops at
        ``max(tol, COARSE_TOL)``.

    Returns
    -------
    (ndarray of shape (n_kernels,), int) or None
        The subsample's kernel weights and its SVM solves.
    """
    if not operator.capabilities.restricted or y.size < COARSE_MIN_SAMPLES:
        return None
    picked = subsample(y, COARSE_SHARE)
    part = operator.subset(picked)
    share = picked.size / y.size
    result = solve(part, y[picked], cost[picked] / share, tol=max(tol, COARSE_TOL), **options)
    return result.kernel_weights, result.n_svm_solves
