"""Decomposition (chunking) C-SVC with the linadd output update, for string kernels.

SVMlight-style decomposition (Joachims 1999): each iteration picks a working set B of at most q
maximally violating variables (half from the "up" set by largest ``-y_t G_t``, half from the
"low" set by smallest), solves the q-variable subproblem exactly with the WSS2-SMO core on its
``q x q`` kernel, and updates all n gradients. The update is either

- ``"linadd"`` (Sonnenburg, Raetsch, Schaefer and Schoelkopf, "Large scale multiple kernel
  learning", JMLR 7, 2006, section 4.2; ALGORITHMS.md section 5): add ``delta_i y_i phi(x_i)``
  of the changed examples to the normal vector w in the explicit sparse feature space, then look
  ``w`` up for every example: ``O(n S)`` per iteration for S feature slots per example,
  whatever q is; or
- ``"rows"``: compute the changed examples' kernel rows: ``O(q n L)`` per iteration.

Both solve the same dual ``min 1/2 a' Q a - 1'a``, ``0 <= a <= C``, ``y'a = 0`` with
``K = sum_m d_m K_m`` for fixed kernel weights d. With linadd the per-kernel outputs
``g_m = K_m (y * alpha)`` come from the same w (no n x n matrix), which is what MKL needs for its
gradient ``dW/dd_m = -1/2 (y * alpha)' g_m``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .smo import _offset, kkt_sets, solve_qp


class ChunkingResult(NamedTuple):
    """Solution of the C-SVC dual by decomposition.

    Attributes
    ----------
    alpha : ndarray of shape (n,)
    grad : ndarray of shape (n,)
        ``Q alpha - 1``.
    rho : float
        Offset; the decision function is ``sum_i y_i alpha_i K(x_i, x) - rho``.
    objective : float
        ``1/2 alpha' Q alpha - 1'alpha`` (minus the SVM dual value).
    violation : float
        Maximal KKT violation at exit.
    n_iter : int
        Decomposition iterations (subproblems solved).
    converged : bool
        Whether ``violation <= tol``.
    kernel_outputs : ndarray of shape (n, m) or None
        ``g[:, m] = K_m (y * alpha)`` per base kernel (with ``return_kernel_outputs``).
    """

    alpha: np.ndarray
    grad: np.ndarray
    rho: float
    objective: float
    violation: float
    n_iter: int
    converged: bool
    kernel_outputs: np.ndarray | None


def _working_set(minus_yg, up, low, q):
    """At most q variables: the q/2 largest ``-y G`` in up, the q/2 smallest in low."""
    half = max(q // 2, 1)
    up_idx = np.flatnonzero(up)
    low_idx = np.flatnonzero(low)
    if up_idx.size > half:
        up_idx = up_idx[np.argpartition(-minus_yg[up_idx], half - 1)[:half]]
    if low_idx.size > half:
        low_idx = low_idx[np.argpartition(minus_yg[low_idx], half - 1)[:half]]
    return np.union1d(up_idx, low_idx)


class Decomposition:
    """The state of an SVMlight-style decomposition of the C-SVC dual at kernel weights d:
    ``alpha``, the gradient ``Q alpha - 1`` and, for linadd, the normal vector ``w`` in the
    explicit feature space. :meth:`reweight` moves to new weights at ``O(n S)`` through w (the
    SILP interleaved algorithm re-weights after every master LP)."""

    def __init__(self, provider, y, upper, d, update, track_w=True):
        self.provider, self.y, self.upper, self.d, self.update = provider, y, upper, d, update
        n = y.size
        self.alpha = np.zeros(n)
        self.grad = -np.ones(n)
        self.linadd = provider.linadd() if track_w else None
        self.w = self.linadd.new_vector() if track_w else None
        self.n_iter = 0
        self.last_violation = np.inf

    def reweight(self, d):
        """Weights d from now on; the gradient follows through w (linadd only)."""
        self.d = np.asarray(d, dtype=np.float64)
        self.grad = self.y * self.linadd.outputs(self.w, self.d) - 1.0

    def violation(self):
        """Maximal KKT violation ``m(alpha) - M(alpha)`` (also kept as ``last_violation``)."""
        y, alpha, upper = self.y, self.alpha, self.upper
        minus_yg = -y * self.grad
        up, low = kkt_sets(alpha, y, upper)
        self._sets = minus_yg, up, low
        self.last_violation = float(minus_yg[up].max(initial=-np.inf)
                                    - minus_yg[low].min(initial=np.inf))
        return self.last_violation

    def step(self, q, sub_tol):
        """One subproblem on the working set of the last :meth:`violation`; all gradients
        updated. False when no variable moved."""
        y, alpha, d = self.y, self.alpha, self.d
        B = _working_set(*self._sets, q)
        K_BB = np.tensordot(d, self.provider.block(B), axes=1)
        a_old = alpha[B]
        y_B = y[B]
        p_B = self.grad[B] - y_B * (K_BB @ (y_B * a_old))
        sub = solve_qp(K_BB, y_B, p_B, self.upper[B], alpha0=a_old, tol=sub_tol)
        delta = sub.alpha - a_old
        changed = delta != 0.0
        alpha[B] = sub.alpha
        self.n_iter += 1
        if not changed.any():
            return False
        moved, amounts = B[changed], (delta * y_B)[changed]
        if self.w is not None:
            self.linadd.add(self.w, moved, amounts)
        if self.update == "linadd":
            self.grad = y * self.linadd.outputs(self.w, d) - 1.0
        else:
            rows = np.tensordot(d, self.provider.rows(moved), axes=1)  # (changed, n)
            self.grad += y * (amounts @ rows)
        return True


def svc_chunking(
    provider: Any,
    y: Any,
    C: float,
    *,
    kernel_weights: Any = None,
    working_set: int = 100,
    update: str = "linadd",
    tol: float = 1e-3,
    max_iter: int = 100_000,
    return_kernel_outputs: bool = False,
) -> ChunkingResult:
    """C-SVC dual by decomposition with the linadd (or kernel-row) gradient update.

    Parameters
    ----------
    provider : StringColumns
        Kernel provider of the training sequences (``block``, ``rows``, ``linadd()``), e.g.
        ``StringColumns(StringKernelBank(specs).fit(seqs))``.
    y : array-like of shape (n,)
        Labels in {-1, +1}.
    C : float > 0
        Box constraint.
    kernel_weights : array-like of shape (m,), optional
        Weights d of the base kernels, ``K = sum_m d_m K_m``; default all ones.
    working_set : int >= 2, default=100
        Size q of the working set.
    update : {"linadd", "rows"}, default="linadd"
        How all gradients are updated after a subproblem (see the module docstring).
    tol : float > 0, default=1e-3
        Stop when the maximal KKT violation ``m(alpha) - M(alpha)`` is at most tol (as
        :func:`~mklearn.svm.smo.svc_dual`); subproblems are solved to ``tol / 10``.
    max_iter : int, default=100000
        Cap on the number of subproblems.
    return_kernel_outputs : bool, default=False
        Also return ``K_m (y * alpha)`` for every base kernel.

    Returns
    -------
    ChunkingResult

    Raises
    ------
    ValueError
        If y is not in {-1, +1} or has the wrong length, C, q, tol or the kernel weights are
        invalid, or ``update`` is unknown.
    """
    y = np.asarray(y, dtype=np.float64)
    n, m = provider.n_samples, provider.n_kernels
    if y.shape != (n,) or not np.all(np.abs(y) == 1.0):
        raise ValueError(f"y must hold {n} labels in {{-1, +1}}; got shape {y.shape}.")
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a finite number > 0; got {C!r}.")
    if update not in ("linadd", "rows"):
        raise ValueError(f"update must be 'linadd' or 'rows'; got {update!r}.")
    if int(working_set) < 2:
        raise ValueError(f"working_set must be an int >= 2; got {working_set!r}.")
    if not tol > 0:
        raise ValueError(f"tol must be > 0; got {tol!r}.")
    d = np.ones(m) if kernel_weights is None else np.asarray(kernel_weights, dtype=np.float64)
    if d.shape != (m,) or not np.all(np.isfinite(d)) or np.any(d < 0):
        raise ValueError(f"kernel_weights must be {m} finite numbers >= 0; got {d!r}.")
    state = Decomposition(provider, y, np.full(n, float(C)), d, update,
                          track_w=update == "linadd" or return_kernel_outputs)
    while state.n_iter < max_iter and state.violation() > tol:
        if not state.step(int(working_set), tol / 10):
            break
    alpha, grad, w, linadd = state.alpha, state.grad, state.w, state.linadd
    violation, n_iter, upper = state.last_violation, state.n_iter, state.upper
    outputs = linadd.per_kernel_outputs(w) if return_kernel_outputs else None
    objective = 0.5 * float(alpha @ (grad - 1.0))
    rho = _offset(alpha, grad, y, upper)
    return ChunkingResult(alpha, grad, rho, objective, violation, n_iter, violation <= tol,
                          outputs)
