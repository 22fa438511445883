"""SPG-GMKL's projected Newton step over the live kernels (our addition to the paper).

The Hessian of ``W`` comes from the SVM's sensitivity on its free support vectors (HessianMKL:
Chapelle and Rakotomamonjy, NIPS workshop on kernel learning, 2008; Gauss-Newton for products
of kernels); its quadratic model is minimised on the simplex (sums) or the orthant (products)
by truncated FISTA (Beck and Teboulle, SIAM J. Imaging Sci. 2, 2009), which damps the step
along directions of tiny curvature. See docs/spg_gmkl.md for the measured reasons of each limit.
"""

from __future__ import annotations

import numpy as np

from mklearn._sizes import MB
from mklearn.solvers.simplex import fista_orthant, fista_simplex
from mklearn.solvers.spg_evaluator import kept_products


class NewtonModel:
    """Projected Newton trials and their schedule (cool-down after a rejection or slow steps).

    Parameters
    ----------
    enabled : bool
        Second-order steps apply (l1 on a sum of kernels, or products under a regulariser
        with a Hessian on the orthant).
    linear : bool
        A sum of kernels (the simplex model, trials from the first iteration); else products
        (the orthant model, trials after ``AFTER`` SPG iterations).
    """

    COOLDOWN = 10  # iterations; without a trial after a rejected one (the model is poor here)
    MAX_KERNELS = 200  # kernels; the model's size: in use plus the most attractive others
    MAX_BYTES = 256 * MB  # bytes; a system always allowed (f up to 4,095, a short LU)
    BYTES_PER_ENTRY = 16  # bytes per entry of f x f; M and K's block, then M and LAPACK's copy
    MAX_FREE = 12_000  # free SVs; the largest system in the spare row budget (LU ~ 2 f^3 / 3)
    HALVINGS = 2  # trials; damped steps before falling back to the SPG step
    MIN_MOVE = 1e-8  # weight; a step moving no weight further is no step
    GAP = 1.0  # relative gap; below it the trials start (the quadratic model is local)
    INNER_TOL = 1e-4  # SMO tolerance; the Hessian needs the SVM's partition of the points
    QP_ITER = 100  # FISTA iterations on the model; truncated on purpose (damps flat directions)
    AFTER = 10  # SPG iterations before the first trial on products (Gauss-Newton is local)
    MIN_PROGRESS = 1e-3  # share of the duality gap an accepted step should close
    SLOW_STEPS = 3  # accepted steps in a row closing less before a cool-down

    def __init__(self, enabled, linear):
        self.enabled = enabled
        self.linear = linear
        self.wait = 0 if linear else self.AFTER  # iterations until the next trial
        self.slow = 0  # accepted steps in a row that closed less than MIN_PROGRESS

    def ready(self, rel_gap):
        """Count one iteration down; whether a trial is due (``rel_gap`` NaN: products)."""
        self.wait -= 1
        return self.enabled and self.wait <= 0 and not rel_gap >= self.GAP

    def judge(self, point, accepted, gap):
        """Schedule the next trial after this one (``accepted`` None: rejected): a cool-down
        after a rejection, or after ``SLOW_STEPS`` accepted steps in a row that each close
        less than ``MIN_PROGRESS`` of the duality gap ``gap`` (true progress when there is no
        gap, as for products). Truncated FISTA damps the step along directions of small
        curvature: on an ill-conditioned model it accepts steps that barely move."""
        if accepted is None or not np.isfinite(gap) or (
                point.T - accepted.T >= self.MIN_PROGRESS * gap):
            self.slow = 0
        else:
            self.slow += 1
        if accepted is None or self.slow >= self.SLOW_STEPS:
            self.wait = self.COOLDOWN
            self.slow = 0

    def step(self, evaluator, point, grad, live, eps, search):
        """The Newton trial point, damped by halving towards ``d`` (``HALVINGS`` times) until
        it passes the non-monotone test of ``search`` (a :class:`NonmonotoneSearch`) for the
        model's decrease; None if it never does."""
        live = self.kernels(point.d, grad, live)
        if live is None:
            return None
        x = self.trial(evaluator, point, grad, live)
        if x is None or not np.isfinite(x).all() or (
                self.linear and not abs(x.sum() - 1.0) <= 1e-6):
            return None  # FISTA overflowed (flat model)
        d = point.d
        step = x - d[live]  # NaN gradients off the live kernels: never touched
        for _ in range(self.HALVINGS + 1):
            decrease = -float(grad[live] @ step)
            if decrease <= 0 or np.max(np.abs(step)) <= self.MIN_MOVE:
                return None
            trial_d = d.copy()
            trial_d[live] = np.maximum(d[live] + step, 0.0)
            trial = evaluator.solve(trial_d, point.qp.alpha, eps, point.products)
            if search.sufficient(trial.T, decrease):
                return trial
            step *= 0.5
        return None

    def kernels(self, d, grad, live):
        """The kernels of the model: the live ones, or if they are more than
        ``MAX_KERNELS``, those in use plus the most attractive others (most negative
        gradient) up to that number; None if the kernels in use alone are too many."""
        if live.sum() <= self.MAX_KERNELS:
            return live
        chosen = d > 0
        room = self.MAX_KERNELS - int(chosen.sum())
        if room < 0:
            return None
        candidates = np.flatnonzero(live & ~chosen)
        chosen[candidates[np.argsort(grad[candidates])[:room]]] = True
        return chosen

    def trial(self, evaluator, point, grad, live):
        """Minimiser of the quadratic model of T over the feasible face of the live kernels,
        or None.

        With the SVM partition fixed, ``d alpha_F / d d_j`` solves
        ``[[Q_FF, y_F], [y_F', 0]] [dalpha_F; db] = [-(H_j alpha)_F; 0]``, which gives the
        Hessian ``d2W / dd_k dd_j = (H_k alpha)_F' dalpha_F^(j)`` (Chapelle and Rakotomamonjy,
        2008). For a kernel not linear in d (products), ``H_k = Y (dK/dd_k) Y`` and the model
        is Gauss-Newton: it leaves out ``-v' (d2K / dd_k dd_j) v / 2``, which makes it
        positive semi-definite (products are not convex) and spares an ``O(n^2 m^2)`` pass;
        the regulariser's Hessian is added. The model ``grad' s + s' H s / 2`` is minimised
        over ``{d + s feasible, s_k = 0 off live}`` by truncated FISTA: a damped projected
        Newton step, in which kernels may enter.
        """
        kernels = np.flatnonzero(live)
        alpha, cost = point.qp.alpha, evaluator.cost
        margin = 1e-8 * cost
        free = np.flatnonzero((alpha > margin) & (alpha < cost - margin))
        if kernels.size < 2 or kernels.size > self.MAX_KERNELS or free.size == 0:
            return None
        if not self.fits(evaluator.features, free.size):
            return None
        sens, h = self._sensitivity(evaluator, point, kernels, free)
        if sens is None:
            return None
        hessian = -(h @ sens)
        if not self.linear:
            hessian += evaluator.regularizer.hessian(point.d)[np.ix_(kernels, kernels)]
        hessian = 0.5 * (hessian + hessian.T)
        curvature = float(np.linalg.eigvalsh(hessian)[-1])
        if not curvature > 0.0:
            return None
        solve = fista_simplex if self.linear else fista_orthant
        return solve(point.d[kernels], grad[kernels], np.ascontiguousarray(hessian),
                     1 / curvature, self.QP_ITER)

    def _sensitivity(self, evaluator, point, kernels, free):
        """``(d alpha_F / d d_j, h)``: one column per kernel of ``kernels`` from the KKT
        system of the free SVs ``free``, and the rows ``h = y_F (H_k alpha)_F``; (None, None)
        if the system is singular."""
        y, d = evaluator.y, point.d
        v = evaluator.task.coefficients(point.qp.alpha)
        rows = evaluator.rows[free]  # the kernel row of each free variable (SVR: two per sample)
        if self.linear:
            h = y[free] * _kernel_rows_times(evaluator, point, kernels, rows, v)  # (|L|, f)
        else:
            h = y[free] * evaluator.operator.derivative_times(d, v, rows)[kernels]
        y_f = y[free]
        f = free.size
        M = np.zeros((f + 1, f + 1))  # M and K's block, then M and LAPACK's copy: f x f each
        M[:f, :f] = _kernel_block(point.K, rows)
        M[:f, :f] *= y_f[:, None]
        M[:f, :f] *= y_f[None, :]
        M[:f, f] = y_f
        M[f, :f] = y_f
        diagonal = np.arange(f)
        M[diagonal, diagonal] += 1e-10 * max(float(np.trace(M[:f, :f])) / f, 1e-300)
        R = np.zeros((f + 1, kernels.size))
        R[:f] = -h.T
        try:  # LU on a copy of M
            return np.linalg.solve(M, R)[:f], h
        except np.linalg.LinAlgError:
            return None, None

    def fits(self, features, n_free):
        """Whether the system of ``n_free`` free support vectors may be formed: at most
        ``MAX_FREE`` of them (LU costs ``2 f^3 / 3``), in ``MAX_BYTES`` or in the part of the
        row budget no row holds now (``spare_bytes``; the system is freed before the next SVM
        solve, so the fit stays within its budget)."""
        if n_free > self.MAX_FREE:
            return False
        need = self.BYTES_PER_ENTRY * (n_free + 1) ** 2
        if need <= self.MAX_BYTES:
            return True
        return features.spare_bytes is not None and need <= features.spare_bytes()


def _kernel_block(K, rows):
    """``K[rows][:, rows]`` of the kernel a solve read (its row source's ``submatrix``)."""
    return K.submatrix(rows)


def _kernel_rows_times(evaluator, point, kernels, rows, v):
    """``K_k[rows] @ v`` for each k in ``kernels``: from the products the gradient kept at
    ``point`` when it has all of them, else computed."""
    kept = kept_products(point.products, evaluator.features.n_kernels, kernels)
    if kept is not None:
        return kept[:, rows]
    return evaluator.operator.kernel_rows_times(kernels, rows, v)
