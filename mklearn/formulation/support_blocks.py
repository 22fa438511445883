"""The base kernels' blocks on the support of the SVM solution, kept across solves.

The quadratic terms ``g_k = v' K_k v`` read only the ``S x S`` block of each kernel, ``S`` the
support of ``v``. Along an MKL run ``S`` moves little from one solve to the next (measured
on ``benchmarks/bench_unseen.py``'s w8a-1000, C = 100: about 110 support vectors of 1,000, of
which 75-95 change value between solves but few enter or leave), so
:class:`SupportBlocks` keeps each kernel's block on a point set ``W`` that contains the
supports seen since it was formed, compact in memory: a pass over 90 live kernels then reads
90 ``|W| x |W|`` blocks that stay in cache instead of ``|S|`` rows of ``n`` values each.
"""

from __future__ import annotations

import numpy as np

from mklearn._sizes import MB
from mklearn.kernels.stack_ops import (
    StackReads,
    block_quadratic_terms,
    block_quadratic_terms_parallel,
    fill_blocks,
)
from mklearn.kernels.threads import use_threads

MAX_BYTES = 256 * MB  # blocks held, at most
STACK_SHARE = 0.25  # ... and at most this share of the stack's bytes
SLACK_POINTS = 64  # room in W, beyond twice the support, for points that join later
# passes served by the stack before blocks are formed: filling them first touches fresh memory
# (measured in a new process, mfeat5-1600 of bench_unseen.py, 50 kernels: 0.31 s against
# 0.06 s in a warm one), which a short run does not earn back
START_AFTER = 10


class SupportBlocks:
    """``K_k[W, W]`` of the kernels a run asks for, ``W`` a superset of the supports seen.

    Parameters
    ----------
    stack_km : ndarray of shape (m, n, n)
        The kernel-major stack (float64 or float32), or a view of the same shape; blocks
        are float64.
    reads : StackReads, optional
        Where the values copied from the stack into blocks are counted.

    Notes
    -----
    ``W`` starts as the support of the first ``v``, with room for ``SLACK_POINTS`` more
    points than twice its size; points of later supports are appended (each kernel's block
    grows by their rows and columns); when they no longer fit, ``W`` restarts from the
    current support. Blocks are held for at most ``min(MAX_BYTES, STACK_SHARE * stack bytes)``; when
    the kernels asked for do not fit, the least recent set is dropped. The first
    ``START_AFTER`` requests are left to the stack (None), so that only runs long enough to
    earn back the blocks' memory form them.
    """

    def __init__(self, stack_km: np.ndarray, reads: StackReads | None = None):
        self._km = stack_km  # for its shape (a view will do); the values come from ``source``
        self._reads = StackReads(stack_km.size) if reads is None else reads
        self.n_kernels, self.n_samples = stack_km.shape[0], stack_km.shape[1]
        self._budget = min(MAX_BYTES, int(STACK_SHARE * stack_km.nbytes))
        self._blocks = None  # (slots, capacity, capacity)
        self._index = np.empty(0, dtype=np.int64)  # W, in the order its points joined
        self._position = np.full(self.n_samples, -1, dtype=np.int64)
        self._slot_of = np.full(self.n_kernels, -1, dtype=np.int64)
        self._slot_kernels = np.empty(0, dtype=np.int64)  # kernel in each filled slot
        self.n_points = 0
        self._passes = 0  # requests seen

    def quadratic_terms(self, v: np.ndarray, kernels: np.ndarray, support: np.ndarray,
                        source=None):
        """``v' K_k v`` for each k in ``kernels`` (shape (len(kernels),)), ``support`` the
        non-zeros of ``v``; None when their blocks do not fit in the budget (the caller reads
        the stack). ``source()`` gives the C-contiguous kernel-major stack the blocks are
        filled from (default: the stack given), asked for only when a block is filled.
        """
        source = (lambda: self._km) if source is None else source
        self._passes += 1
        if self._passes <= START_AFTER or not self._cover(support, kernels.size, source):
            return None
        missing = kernels[self._slot_of[kernels] < 0]
        if missing.size:
            if self._slot_kernels.size + missing.size > self._blocks.shape[0]:
                self._slot_of[self._slot_kernels] = -1
                self._slot_kernels = self._slot_kernels[:0]
                missing = kernels
            slots = np.arange(self._slot_kernels.size, self._slot_kernels.size + missing.size)
            self._slot_of[missing] = slots
            self._slot_kernels = np.concatenate([self._slot_kernels, missing])
            fill_blocks(source(), missing, slots, self._index, 0, self.n_points, self._blocks)
            self._reads.add(missing.size * self.n_points ** 2)
        slots = self._slot_of[kernels]
        w = self.n_points
        run = (block_quadratic_terms_parallel if use_threads(kernels.size * w * w)
               else block_quadratic_terms)
        return run(self._blocks, slots, np.ascontiguousarray(v[self._index[:w]], np.float64), w)

    def fits(self, support_size: int, n_kernels: int) -> bool:
        """Whether the next request of ``n_kernels`` kernels on a support of this size will be
        served from blocks: the first ``START_AFTER`` are not, and the blocks of a new
        support must fit in the budget."""
        if self._passes < START_AFTER:
            return False
        return self._slots(support_size)[1] >= n_kernels

    def _slots(self, support_size: int):
        """(points, kernels) that blocks formed on a new support of this size hold."""
        capacity = min(self.n_samples, 2 * support_size + SLACK_POINTS)
        return capacity, min(self.n_kernels, self._budget // (8 * capacity * capacity))

    def _cover(self, support: np.ndarray, n_kernels: int, source) -> bool:
        """Grow (or restart) W so that it contains ``support`` (blocks filled from
        ``source()``); False if ``n_kernels`` blocks of the needed size exceed the budget."""
        new = support[self._position[support] < 0]
        fits = self._blocks is not None and self.n_points + new.size <= self._blocks.shape[1]
        if not fits:
            capacity, slots = self._slots(support.size)
            if slots < n_kernels:
                return False
            self._blocks = np.empty((slots, capacity, capacity))
            self._position[self._index[:self.n_points]] = -1
            self._index = np.empty(capacity, dtype=np.int64)
            self._slot_of[self._slot_kernels] = -1
            self._slot_kernels = self._slot_kernels[:0]
            self.n_points, new = 0, support
        elif n_kernels > self._blocks.shape[0]:
            return False
        if new.size:
            w_old, w = self.n_points, self.n_points + new.size
            self._index[w_old:w] = new
            self._position[new] = np.arange(w_old, w)
            self.n_points = w
            if self._slot_kernels.size:
                fill_blocks(source(), self._slot_kernels, np.arange(self._slot_kernels.size),
                            self._index, w_old, w, self._blocks)
                self._reads.add(self._slot_kernels.size * (w * w - w_old * w_old))
        return True
