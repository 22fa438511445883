"""One least-recently-used cache of kernel rows under a byte budget.

LIBSVM's kernel cache (Chang and Lin, ACM TIST 2011, section 4.3) holds columns of Q within
``-m`` megabytes and evicts the least recently used. Here a slot holds row i of every kernel
a *row provider* serves (``rows(indices) -> (r, len(indices), n)``): the ``m`` base kernels,
or ``r = 1`` combined kernel. The slots are one ``(capacity, r, n)`` array that the numba SMO
core reads directly, float64, or float32 when the provider's values are single precision
(``value_dtype``, a float32 kernel bank or stack: the same numbers in half the bytes, as
LIBSVM's float cache): ``store[slot_of[i]]`` is row i when ``slot_of[i] >= 0``; the
core stamps ``last_used`` on every read and returns to Python on a miss, and :meth:`load`
computes the row into the least recently used slot. By symmetry, row i is also column i.

A cache given a ``start`` holds at first only the rows ``start`` MB hold, and grows toward
``cache_size`` only where holding more rows would have paid. A fresh slot costs its first
touch (page faults and zeroing); a row evicted and read again costs its computation once
more. The cache times both: its loads into fresh slots against those into recycled ones. A
ghost list of evicted rows gives each row read again its LRU stack distance (the evictions
since its own), hence which of ``GROWTH_FACTORS`` times the slots would have held it. Once it
has loaded ``GROWTH_WINDOW`` rows into recycled slots since it last grew, it weighs growing at
every row read again, against the loads into recycled slots (each evicted a row):

- where the largest growth would have held ``DENSE_SHARE`` of those loads (a working set read
  again and again, larger than the cache), it grows at once by the least factor that holds
  ``DENSE_KEEP`` of those rows (digits, 62 kernels: each class reads about 113 rows of 0.85
  MB again and again; doubling from 14 rows would hold a tenth of them, eight times most);
- else by the factor whose rows' seconds, net of first touching the slots it adds, are the
  largest, if positive: the rent-or-buy rule, within twice the better choice in hindsight,
  and only where those rows are ``GROWTH_SHARE`` of the loads (5,000 a9a points: doubling
  from 42 rows of 4.9 MB to 84 saved 2% of the rows computed, for 200 MB more).

The price is timed on the slots filled since the cache last grew: a first touch grows dearer
as a process holds more memory (measured on 5,000 a9a points: from 2.6 ms for a 4.9 MB slot
to 14 ms past 3 GB held).

So its size follows the rows the fit reads again, where computing them costs more than
holding them. SMO-MKL's default fit, planned to hold every row, against a cache that kept
every row it read (first figures), then one that started at 200 MB and doubled on the time
rule alone (second), then this one (third; peaks above the loaded data):

- abalone (9 kernels x 4,177 points): 1.21 s and 1.15 GB; 0.63 s and 0.2 GB; 0.6 s, 69 MB;
- 5,000 a9a points (122 kernels, 4.9 MB rows, 0.3 ms to compute): 25.8 s and 5.8 GB; 19.8 s
  and 0.4 GB; 20-22 s and 118 MB (the rows come back too far apart for a cache to hold);
- 1,000 C. elegans sequences (1,585 kernels, 12 MB rows): 14.1 s and 6.1 GB; 5.3-5.5 s and
  16 rows; 4.7-4.8 s and 2 rows, with the same rows computed;
- a9a at 20,000 points and in full, w8a in full (50 kernels read through distance rows of
  100-320 kB): the cache grows to what the support reads again, at the same times within
  the noise of one run each.

The slots are planned (``cache_size``), but the machine is shared: several fits in parallel
processes (``GridSearchCV(n_jobs=-1)``) each plan from the memory available when they start.
So the cache checks the memory left to touch (the machine's free memory, the cgroup limit:
:func:`mklearn.kernels.memory_limits.touched_room`) every ``GROWTH_CHECK_BYTES`` of new slots and
stops growing (then recycles its slots, least recently used first) when less than
``MEMORY_RESERVE`` is left. The slots are reserved at once, so under an address-space or data
limit (``ulimit -v``, ``-d``) a cache holds no more slots than that limit leaves room for,
``MEMORY_RESERVE`` kept for the rest of the fit.
"""

from __future__ import annotations

import mmap
import sys
import time
from typing import Any

import numpy as np

from mklearn._sizes import GIB, LOAD_MANY_BYTES, MB
from mklearn.kernels.memory_limits import reservable_room, touched_room

__all__ = ["RowCache", "cache_capacity", "mapped_empty"]

GROWTH_CHECK_BYTES = 256 * MB  # new slots between two looks at the available memory
MEMORY_RESERVE = GIB  # the cache stops growing when less than this is available
MAPPED_BYTES = 64 * MB  # arrays at least this large get their own mapping (mapped_empty)
START_MB = 200.0  # where a growing cache starts at most: LIBSVM's default cache (-m 200)
GROWTH_FACTORS = (2, 4, 8)  # what a growing cache may multiply its rows by at once
GROWTH_SHARE = 0.1  # a cache grows only if that would have saved this share of its loads
DENSE_SHARE = 0.25  # a cache that would have held this share of its loads grows at once
DENSE_KEEP = 0.75  # ... by the least factor that holds this share of what the largest would
GROWTH_WINDOW = 32  # loads into recycled slots a growing cache weighs before growing again


def mapped_empty(shape: Any, dtype: Any = np.float64) -> np.ndarray:
    """An uninitialised C-ordered array on its own anonymous memory mapping, when it has at
    least ``MAPPED_BYTES`` bytes (``np.empty`` below that).

    numpy advises the kernel to back its large arrays with huge pages (``MADV_HUGEPAGE``).
    Where transparent huge pages compact memory on a fault of an advised page (``defrag``
    set to ``madvise``, a common default), the first write to such an array stalls while
    memory is compacted: building a 2.7 GB stack of 40 RBF kernels took 0.63x the time
    without the advice. A row cache and a kernel stack are written once, row by row, then
    read in rows of megabytes, where huge pages save little.
    """
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < MAPPED_BYTES:
        return np.empty(shape, dtype=dtype)
    pages = mmap.mmap(-1, nbytes)
    return np.frombuffer(pages, dtype=dtype).reshape(shape)


def cache_capacity(cache_size: Any, row_bytes: int, n_rows: int, what: str) -> int:
    """Number of rows of ``row_bytes`` bytes that ``cache_size`` MB holds (at most ``n_rows``).

    Raises
    ------
    ValueError
        If ``cache_size`` is not a number or holds fewer than two rows (an SMO step reads two
        rows at once); the message gives the minimum in MB.
    """
    try:
        budget = float(cache_size) * MB
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cache_size must be a number of MB; got {cache_size!r}.") from exc
    need = min(2, n_rows) * row_bytes
    if not budget >= need:  # also rejects NaN
        raise ValueError(
            f"cache_size={cache_size!r} MB holds fewer than two rows of {what} "
            f"({row_bytes / MB:.6g} MB each); it must be at least {need / MB:.6g} MB: raise "
            "cache_size"
        )
    return int(min(budget // row_bytes, n_rows))


def _reservable_rows(row_bytes: int, least: int) -> int:
    """Slots of ``row_bytes`` the address-space and data limits let a cache reserve now,
    ``MEMORY_RESERVE`` kept for the rest of the fit (at least ``least``; unbounded without
    such a limit)."""
    room = reservable_room()
    if room is None:
        return sys.maxsize
    return max(least, (room - MEMORY_RESERVE) // row_bytes)


class RowCache:
    """LRU cache of kernel rows, laid out for the numba SMO core.

    Parameters
    ----------
    provider : object
        Has ``n_samples``, ``n_kernels``, ``rows(indices, out=None)`` returning an array of
        shape ``(n_kernels, len(indices), n_samples)``, and declares, read once here:
        ``capabilities`` (:class:`~mklearn.kernels.base.Capabilities`: ``fills_out`` when
        ``rows`` writes into ``out``, ``row_filler`` when it offers ``row_filler()``),
        ``value_dtype`` (float32 when its values are single precision) and
        ``rows_per_call`` (rows worth asking for in one call): a
        :class:`~mklearn.kernels.base.KernelOperator`, or a row source of one kernel.
    cache_size : float
        Budget in megabytes (2**20 bytes, as LIBSVM's ``-m``); it must hold two rows of
        ``itemsize * n_kernels * n_samples`` bytes (itemsize 8, or 4 for float32 values).
    most : float, optional
        Megabytes the cache may grow to once full, when ``on_full()`` (called once, when a
        row first finds no free slot) returns True: it has freed that room elsewhere (rows of
        ``K(d)`` beside kept distance rows). The slots beyond ``cache_size`` touch no page
        until filled.
    on_full : callable, optional
        See ``most``.
    spare : ndarray, optional
        The slots of a cache no longer used (a released ``K(d)``'s), taken when their shape
        and dtype fit: their pages are in memory already (on the full w8a, first touching
        fresh slots at every SVM solve cost 21 of SPG-GMKL l1's 175 s).
    start : float, optional
        Megabytes the cache holds at first (at least two rows), doubling toward
        ``cache_size`` when computing again the evicted rows twice the slots would have held
        has cost as much as first touching that many slots (module notes). None:
        ``cache_size`` from the start.

    Attributes
    ----------
    store : ndarray of shape (capacity, n_kernels, n_samples)
        The slots (float64, or float32 for single-precision values); pages are touched only
        when a slot is first filled.
    slot_of : ndarray of shape (n_samples,)
        Slot of each row, -1 when not cached.
    last_used : ndarray of shape (capacity,)
        Stamp of each slot's last read (from ``clock``).
    clock : ndarray of shape (1,)
        Read counter shared with the numba core.
    hits, misses : int
        Reads served from the cache (through :meth:`get`) and rows computed.
    evicted_reads : int
        With ``start``: rows computed again after their eviction since the cache last grew.
    stopped_growing : bool
        True when the cache stopped below its planned rows because the machine had less
        than ``MEMORY_RESERVE`` available (:attr:`capacity` is then the rows it holds), or
        was made smaller for an address-space or data limit.

    Raises
    ------
    ValueError
        If ``cache_size`` holds fewer than two rows (the message gives the minimum in MB).
    """

    def __init__(self, provider: Any, cache_size: float, most: float | None = None,
                 on_full: Any = None, spare: np.ndarray | None = None,
                 start: float | None = None) -> None:
        m, n = provider.n_kernels, provider.n_samples
        dtype = np.dtype(provider.value_dtype)
        capacity = cache_capacity(cache_size, dtype.itemsize * m * n, n,
                                  f"{m} kernels x {n} samples")
        largest = capacity if most is None else max(
            capacity, cache_capacity(most, dtype.itemsize * m * n, n, f"{m} kernels x {n} samples"))
        reservable = _reservable_rows(dtype.itemsize * m * n, min(2, n))
        self.stopped_growing = largest > reservable
        capacity, largest = min(capacity, reservable), min(largest, reservable)
        self.provider = provider
        if (spare is not None and spare.dtype == dtype and spare.shape[1:] == (m, n)
                and spare.shape[0] >= largest and spare.flags.c_contiguous):
            self.store = spare[:largest]
        else:
            self.store = mapped_empty((largest, m, n), dtype=dtype)
        self.slot_of = np.full(n, -1, dtype=np.int64)
        self.owner = np.full(largest, -1, dtype=np.int64)
        self.last_used = np.zeros(largest, dtype=np.int64)
        self.clock = np.zeros(1, dtype=np.int64)
        self.hits = 0
        self.misses = 0
        self._filled = 0
        self._limit = capacity
        self._ceiling = capacity  # where a growing cache stops (its planned rows)
        if start is not None:
            self._limit = min(capacity, max(min(2, n), int(float(start) * MB)
                                            // (dtype.itemsize * m * n)))
        # when each row was last evicted (in evictions; -1: held or never read): a row read
        # again within ``capacity`` evictions of its own would have been held by twice the
        # slots (the LRU stack distance)
        self._evicted_at = np.full(n if self._limit < capacity else 0, -1, dtype=np.int64)
        self._evictions = 0
        self.evicted_reads = 0  # rows computed again since the cache last grew
        self._loads_since_growth = 0
        # for each of GROWTH_FACTORS: rows computed again that as many times the slots would
        # have held, and their seconds
        self._held_reads = np.zeros(len(GROWTH_FACTORS), dtype=np.int64)
        self._again_seconds = np.zeros(len(GROWTH_FACTORS))
        # [fresh slots since the cache last grew, recycled slots]: [seconds, loads]
        self._loads = np.zeros((2, 2))
        self._check_every = max(1, GROWTH_CHECK_BYTES // (dtype.itemsize * m * n))
        self._on_full = on_full if largest > capacity else None
        self._batch = int(provider.rows_per_call)
        self._fills_out = provider.capabilities.fills_out
        # the provider's row filler (None: asked for at the first load; False: none)
        self._fill = None if provider.capabilities.row_filler else False

    def __repr__(self) -> str:
        return f"RowCache(capacity={self.capacity} rows, held={self._filled})"

    @property
    def capacity(self) -> int:
        """Number of rows the cache may hold now: what the budget holds, or fewer while a
        cache given ``start`` has not grown to it, or once it stopped growing
        (:attr:`stopped_growing`)."""
        return self._limit

    def _may_grow(self) -> bool:
        """Whether a new slot may be filled: below the limit, and at every
        ``GROWTH_CHECK_BYTES`` of slots, enough memory left on the machine (else the limit
        becomes the slots filled, at least two)."""
        if self._filled >= self._limit and not self.make_room(self._filled + 1):
            return False
        if self._filled >= 2 and self._filled % self._check_every == 0:
            if touched_room() < MEMORY_RESERVE:
                self._limit = self._filled
                self.stopped_growing = True
                return False
        return True

    def _account_load(self, rows: np.ndarray, seconds: float, fresh: bool) -> None:
        """Account for computing ``rows`` in ``seconds`` into fresh slots (``fresh``) or
        recycled ones, and grow the rows the cache may hold (up to its planned rows) where
        :meth:`_growth` says it pays (module notes)."""
        if self._evicted_at.size == 0:
            return
        kind = 0 if fresh else 1
        self._loads[kind, 0] += seconds
        self._loads[kind, 1] += rows.size
        if fresh and self._evictions == 0:  # nothing evicted yet, so nothing read again
            return
        self._loads_since_growth += 0 if fresh else rows.size  # loads that evicted rows
        at = self._evicted_at[rows]
        again = at >= 0
        if not again.any():
            return
        self._evicted_at[rows] = -1
        self.evicted_reads += int(again.sum())
        # a row evicted e evictions ago is held by e more slots (its LRU stack distance)
        behind = self._evictions - at[again]
        added = self._added_slots()
        held = (behind[None, :] <= added[:, None]).sum(axis=1)
        self._held_reads += held
        self._again_seconds += seconds * held / rows.size
        if (self._limit >= self._ceiling or self.stopped_growing
                or not self._loads[:, 1].all()
                or self._loads_since_growth < GROWTH_WINDOW):
            return
        per_load = self._loads[:, 0] / self._loads[:, 1]
        touch = max(per_load[0] - per_load[1], 0.0)  # a fresh slot's first touch, seconds
        grows = self._growth(touch, added)
        if grows:
            self._limit += grows
            self.evicted_reads = self._loads_since_growth = 0
            self._held_reads[:], self._again_seconds[:] = 0, 0.0
            self._loads[0] = 0.0  # the next slots' touch is timed anew: it grows with memory
            # rows evicted so far are forgotten: their distances counted the slots held then
            self._evicted_at = self._evicted_at[:0] if self._limit == self._ceiling else (
                np.full_like(self._evicted_at, -1))

    def _growth(self, touch: float, added: np.ndarray) -> int:
        """Slots to add (0: none) of ``added`` (:meth:`_added_slots`), ``touch`` the seconds
        of a fresh slot's first touch.
        Where the largest growth would have held ``DENSE_SHARE`` of the loads, the least
        that holds ``DENSE_KEEP`` of those rows; else the growth that would have saved the
        most seconds net of its touch, if positive and ``GROWTH_SHARE`` of the loads."""
        held = self._held_reads
        if held[-1] >= DENSE_SHARE * self._loads_since_growth:
            return int(added[np.argmax(held >= DENSE_KEEP * held[-1])])
        saved = self._again_seconds - touch * added
        saved[held < GROWTH_SHARE * self._loads_since_growth] = -np.inf
        return int(added[np.argmax(saved)]) if saved.max() >= 0.0 else 0

    def _added_slots(self) -> np.ndarray:
        """The slots each of ``GROWTH_FACTORS`` would add, within the planned rows."""
        return np.minimum(np.asarray(GROWTH_FACTORS) * self._limit, self._ceiling) - self._limit

    def _evict(self, slots: np.ndarray) -> None:
        """Free ``slots`` (filled ones) of their rows."""
        rows = self.owner[slots]
        rows = rows[rows >= 0]
        self.slot_of[rows] = -1
        if self._evicted_at.size:
            self._evicted_at[rows] = self._evictions + np.arange(rows.size)
            self._evictions += rows.size

    def make_room(self, rows: int) -> bool:
        """Whether ``rows`` rows fit, after asking ``on_full`` for the room up to ``most``
        (once) when they do not fit in the planned rows."""
        if rows > self._limit and self._on_full is not None and not self.stopped_growing:
            on_full, self._on_full = self._on_full, None
            if on_full():
                self._limit = self.store.shape[0]
        return rows <= self._limit

    @property
    def nbytes(self) -> int:
        """Bytes of the slots filled so far."""
        return self._filled * self.store[0].nbytes

    def __len__(self) -> int:
        return self._filled

    def __contains__(self, i: int) -> bool:
        return bool(self.slot_of[int(i)] >= 0)

    def load(self, i: int) -> int:
        """Compute row i into a free or the least recently used slot; return the slot.

        A provider that pays per call (``rows_per_call > 1``, e.g. rows of ``K(d)`` summed
        on Dask workers) gets row i and the next missing rows after it in one call, when
        every row fits (nothing is evicted)."""
        if self._batch > 1 and self.capacity >= self.slot_of.size:
            return self._load_batch(i, self._batch)
        fresh = self._may_grow()
        timed = self._evicted_at.size > 0  # a cache that may still grow weighs each load
        if fresh:
            slot = self._filled
            self._filled += 1
        else:
            slot = int(np.argmin(self.last_used[:self._filled]))
        target = self.store[slot]
        if self._fill is None:  # a provider may fill one row without the checks of rows()
            self._fill = self.provider.row_filler() or False
        as_rows = target.reshape(target.shape[0], 1, target.shape[1])
        began = time.perf_counter() if timed else 0.0
        if not (self._fill and self._fill(i, as_rows)):
            if self._fills_out:
                self.provider.rows([i], out=as_rows)
            else:
                target[...] = self.provider.rows([i])[:, 0, :]
        if timed:  # before the slot's eviction: row i's LRU stack distance
            self._account_load(np.array([i]), time.perf_counter() - began, fresh)
        if not fresh:
            self._evict(np.array([slot]))
        self.owner[slot] = i
        self.slot_of[i] = slot
        self.clock[0] += 1
        self.last_used[slot] = self.clock[0]
        self.misses += 1
        return slot

    def load_many(self, indices: Any) -> None:
        """Compute the rows ``indices`` (none of them cached, at most :attr:`capacity`) into
        free or the least recently used slots, ``LOAD_MANY_BYTES`` of rows per call of the
        provider (a9a, one kernel: a call per row cost 0.1-0.2 ms of Python on top of the
        row's own work)."""
        indices = np.asarray(indices, dtype=np.int64)
        batch = max(1, LOAD_MANY_BYTES // self.store[0].nbytes)
        for start in range(0, indices.size, batch):
            rows = indices[start:start + batch]
            first_new = self._filled
            slots = self._take_slots(rows.size)
            fresh = bool((slots >= first_new).all())
            began = time.perf_counter()
            first = int(slots[0])
            if (self.store.shape[1] == 1 and self._fills_out
                    and np.array_equal(slots, np.arange(first, first + rows.size))):
                target = self.store[first:first + slots.size]  # new slots of one kernel
                self.provider.rows(rows, out=target.reshape(1, slots.size, -1))  # no copy
            else:
                self.store[slots] = np.moveaxis(self.provider.rows(rows), 1, 0)
            self._account_load(rows, time.perf_counter() - began, fresh)
            self._evict(slots)  # after: the rows' LRU stack distances count no slot of theirs
            self.owner[slots] = rows
            self.slot_of[rows] = slots
            self.clock[0] += 1
            self.last_used[slots] = self.clock[0]
            self.misses += rows.size

    def _take_slots(self, count: int) -> np.ndarray:
        """``count`` slots to fill: new ones while the cache may grow, then the least
        recently used of those filled."""
        new = []
        while len(new) < count and self._may_grow():
            new.append(self._filled)
            self._filled += 1
        rest = count - len(new)
        if rest == 0:
            return np.asarray(new, dtype=np.int64)
        filled = np.setdiff1d(np.arange(self._filled), new)
        oldest = filled[np.argsort(self.last_used[filled], kind="stable")[:rest]]
        return np.concatenate([np.asarray(new, dtype=np.int64), oldest])

    def _load_batch(self, i: int, batch: int) -> int:
        """Rows i and the next missing ones (in index order, wrapping) into free slots, up
        to ``batch`` rows in one provider call; return row i's slot."""
        missing = np.flatnonzero(self.slot_of < 0)
        rows = np.roll(missing, -int(np.searchsorted(missing, i)))[:batch]
        first = self._filled
        slots = np.arange(first, first + rows.size)
        self.store[first:first + rows.size] = np.moveaxis(self.provider.rows(rows), 1, 0)
        self.owner[slots] = rows
        self.slot_of[rows] = slots
        self.clock[0] += 1
        self.last_used[slots] = self.clock[0]
        self._filled += rows.size
        self.misses += rows.size
        return int(self.slot_of[i])

    def get(self, i: int) -> np.ndarray:
        """Row i of every kernel: ndarray of shape (n_kernels, n_samples), a view of the slot.

        The view is valid until row i is evicted (the next miss after two reads at most
        recycles the least recently used slot); copy it to keep it longer.

        Raises
        ------
        IndexError
            If i is not a sample index.
        """
        i = int(i)
        slot = int(self.slot_of[i])
        if slot < 0:
            slot = self.load(i)
        else:
            self.hits += 1
            self.clock[0] += 1
            self.last_used[slot] = self.clock[0]
        row = self.store[slot]
        row.flags.writeable = False
        return row
