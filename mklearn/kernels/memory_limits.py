"""The memory this process may still take: the smallest room under every limit it can read.

A fit plans its memory (:mod:`mklearn.memory`) within the room left under each of:

- the machine's free memory (Linux ``MemAvailable`` in ``/proc/meminfo``);
- the address-space limit ``RLIMIT_AS`` (``ulimit -v``) minus the process's ``VmSize``;
- the data-segment limit ``RLIMIT_DATA`` (``ulimit -d``) minus its ``VmData``;
- the memory limit of its cgroup (containers, systemd units): v2 ``memory.max`` minus
  ``memory.current``, v1 ``memory.limit_in_bytes`` minus ``memory.usage_in_bytes``, at the
  process's cgroup (from ``/proc/self/cgroup``) and at each of its ancestors; the usage less
  the file pages the kernel reclaims first (``inactive_file`` of ``memory.stat``, as
  container tools count a working set), or a data file just read would count as used.

Each reader returns bytes, or None when its source sets no limit or cannot be read; the
roots ``/proc`` and ``/sys/fs/cgroup`` are arguments (tests give fake trees). The two
``ulimit`` limits count address space reserved (a row cache's ``np.empty`` counts whole
when it is made), the others pages touched only (:func:`touched_room`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mklearn._sizes import GIB, MB, byte_words

try:
    import resource
except ImportError:  # no resource module (Windows): no ulimit to read
    resource = None

__all__ = ["address_space_room", "available_memory", "budget_bytes", "budget_words",
           "cgroup_v1_room", "cgroup_v2_room", "data_segment_room", "default_budget",
           "free_memory", "memory_room", "reservable_room", "stack_bytes", "touched_room"]

PROC = Path("/proc")
CGROUP = Path("/sys/fs/cgroup")
NO_LIMIT = 1 << 62  # cgroup v1 writes "no limit" as the largest page-aligned int64 (~2**63)
BUDGET_SHARE = 0.5  # of the room under every memory limit when the fit starts
STACK_WORK_MATRICES = 4  # n x n float64 matrices beside the stack
UNKNOWN_BYTES = 8 * GIB  # assumed when no source can be read at all



@dataclass(frozen=True)
class _CgroupFiles:
    limit: str  # file of the limit
    usage: str  # file of the usage
    reclaimable: str  # key of memory.stat: file pages reclaimed first


V2_FILES = _CgroupFiles("memory.max", "memory.current", "inactive_file")
V1_FILES = _CgroupFiles("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")

FREE = "the free memory"
ADDRESS_SPACE = "the address-space limit (ulimit -v)"
DATA_SEGMENT = "the data-segment limit (ulimit -d)"
CGROUP_V2 = "the cgroup memory limit (memory.max)"
CGROUP_V1 = "the cgroup memory limit (memory.limit_in_bytes)"


def free_memory(proc: Path = PROC) -> int | None:
    """Bytes available on the machine now: ``MemAvailable``, else free physical pages."""
    try:
        with open(Path(proc) / "meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def address_space_room(proc: Path = PROC) -> int | None:
    """Bytes below ``RLIMIT_AS`` (soft) beyond the process's ``VmSize``; None: no limit."""
    return _rlimit_room("RLIMIT_AS", "VmSize", proc)


def data_segment_room(proc: Path = PROC) -> int | None:
    """Bytes below ``RLIMIT_DATA`` (soft) beyond the process's ``VmData``; None: no limit."""
    return _rlimit_room("RLIMIT_DATA", "VmData", proc)


def _rlimit_room(name: str, field: str, proc: Path) -> int | None:
    if resource is None or not hasattr(resource, name):
        return None
    soft, _ = resource.getrlimit(getattr(resource, name))
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    return max(0, soft - (_status_bytes(proc, field) or 0))


def _status_bytes(proc: Path, field: str) -> int | None:
    """A ``kB`` field of ``/proc/self/status`` in bytes, or None."""
    try:
        with open(Path(proc) / "self" / "status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def cgroup_v2_room(proc: Path = PROC, cgroup: Path = CGROUP) -> int | None:
    """Bytes below the smallest ``memory.max`` of the process's v2 cgroup and its
    ancestors, each less its ``memory.current``; None: no limit."""
    relative = _cgroup_path(proc, lambda controllers: controllers == "")
    if relative is None:
        return None
    return _cgroup_room(Path(cgroup), relative, V2_FILES)


def cgroup_v1_room(proc: Path = PROC, cgroup: Path = CGROUP) -> int | None:
    """Bytes below the smallest ``memory.limit_in_bytes`` of the process's v1 memory
    cgroup and its ancestors, each less its ``memory.usage_in_bytes``; None: no limit."""
    relative = _cgroup_path(proc, lambda controllers: "memory" in controllers.split(","))
    if relative is None:
        return None
    return _cgroup_room(Path(cgroup) / "memory", relative, V1_FILES)


def _cgroup_path(proc: Path, wanted: Callable[[str], bool]) -> str | None:
    """The cgroup path of the first ``id:controllers:path`` line of ``/proc/self/cgroup``
    whose controllers are ``wanted``."""
    try:
        text = (Path(proc) / "self" / "cgroup").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and wanted(parts[1]):
            return parts[2]
    return None


def _cgroup_room(mount: Path, relative: str, files: _CgroupFiles) -> int | None:
    """Smallest ``limit - usage`` from the cgroup's directory up to the mount point (a
    container in its own cgroup namespace sees its cgroup at the mount point itself)."""
    leaf = mount / relative.strip("/")
    if not leaf.is_dir() or ".." in Path(relative).parts:
        leaf = mount
    rooms = []
    for directory in (leaf, *leaf.parents):
        room = _cgroup_level(directory, files)
        if room is not None:
            rooms.append(room)
        if directory == mount:
            break
    return min(rooms) if rooms else None


def _cgroup_level(directory: Path, files: _CgroupFiles) -> int | None:
    """``limit - (usage - reclaimable)`` of one cgroup directory; None: no limit there."""
    try:
        limit = (directory / files.limit).read_text().strip()
        if limit == "max" or int(limit) >= NO_LIMIT:
            return None
        usage = int((directory / files.usage).read_text().strip())
    except (OSError, ValueError):
        return None
    used = max(0, usage - _stat_bytes(directory, files.reclaimable))
    return max(0, int(limit) - used)


def _stat_bytes(directory: Path, key: str) -> int:
    """The ``key`` line of the cgroup's ``memory.stat`` (bytes), 0 when absent."""
    try:
        for line in (directory / "memory.stat").read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _rooms(proc: Path | None, cgroup: Path | None, touched_only: bool) -> dict[str, int]:
    """Room under each source that sets a limit, by the source's name (roots: ``PROC`` and
    ``CGROUP`` when None)."""
    proc, cgroup = proc or PROC, cgroup or CGROUP
    found = {FREE: free_memory(proc), CGROUP_V2: cgroup_v2_room(proc, cgroup),
             CGROUP_V1: cgroup_v1_room(proc, cgroup)}
    if not touched_only:
        found[ADDRESS_SPACE] = address_space_room(proc)
        found[DATA_SEGMENT] = data_segment_room(proc)
    return {name: room for name, room in found.items() if room is not None}


def memory_room(proc: Path | None = None, cgroup: Path | None = None) -> tuple[int, str]:
    """``(bytes, source)``: the smallest room under every limit that can be read, and the
    name of the source that sets it (e.g. "the address-space limit (ulimit -v)")."""
    rooms = _rooms(proc, cgroup, touched_only=False)
    if not rooms:
        return UNKNOWN_BYTES, "an assumed 8 GiB (no memory figure could be read)"
    source = min(rooms, key=rooms.get)
    return rooms[source], source


def available_memory() -> int:
    """Bytes this process may still take: :func:`memory_room`'s smallest room."""
    return memory_room()[0]


def touched_room() -> int:
    """Bytes of pages this process may still touch: the free memory and the cgroup limits
    (address space already reserved is not counted again)."""
    rooms = _rooms(None, None, touched_only=True)
    return min(rooms.values()) if rooms else UNKNOWN_BYTES


def reservable_room() -> int | None:
    """Bytes of address space this process may still reserve under ``ulimit -v`` and
    ``-d``; None when neither is set."""
    rooms = [room for room in (address_space_room(PROC), data_segment_room(PROC))
             if room is not None]
    return min(rooms) if rooms else None


def default_budget() -> int:
    """Bytes a fit may plan for by default: half the room under every memory limit now
    (:func:`mklearn.kernels.memory_limits.memory_room`)."""
    return int(BUDGET_SHARE * available_memory())


def budget_bytes(memory_budget: float | None) -> int:
    """Bytes of ``memory_budget`` (MB), or of :func:`default_budget` when it is None."""
    return default_budget() if memory_budget is None else int(float(memory_budget) * MB)


def stack_bytes(n_samples: int, n_kernels: int, itemsize: int) -> int:
    """Bytes of the stack path: the stack plus its ``n x n`` float64 work matrices."""
    n = int(n_samples)
    return n * n * int(n_kernels) * int(itemsize) + STACK_WORK_MATRICES * 8 * n * n


def budget_words(memory_budget: float | None, budget: int) -> tuple[str, str]:
    """How a refusal names the budget, and how to raise it: memory_budget, or the memory
    limit the default budget is half of."""
    if memory_budget is not None:
        return f"the memory budget of {byte_words(budget)}", "raise memory_budget"
    source = memory_room()[1]
    words = f"the memory budget of {byte_words(budget)} (half the room under {source})"
    return words, ("raise memory_budget" if source == FREE else f"raise {source}")
