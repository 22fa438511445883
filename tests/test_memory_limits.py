"""The memory plan obeys every limit it can read: free memory, ``ulimit -v`` / ``-d`` and the
cgroup limit (v1 and v2), each read from fake ``/proc`` and ``/sys/fs/cgroup`` trees."""

import resource
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mklearn import MKLClassifier
from mklearn._sizes import GIB, MB
from mklearn.cli import main
from mklearn.extending import Capabilities
from mklearn.kernels import memory_limits
from mklearn.kernels.memory_limits import (
    ADDRESS_SPACE,
    CGROUP_V1,
    CGROUP_V2,
    FREE,
    address_space_room,
    cgroup_v1_room,
    cgroup_v2_room,
    data_segment_room,
    free_memory,
    memory_room,
)

KB = 1024


def _proc(tmp_path, *, available_kb=16 * GIB // KB, vm_size_kb=1 * GIB // KB,
          vm_data_kb=GIB // 2 // KB, cgroup="0::/\n"):
    """A fake /proc: meminfo, self/status and self/cgroup."""
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "meminfo").write_text(f"MemTotal: 33554432 kB\nMemAvailable: {available_kb} kB\n")
    (proc / "self" / "status").write_text(
        f"Name:\tpython\nVmSize:\t{vm_size_kb} kB\nVmData:\t{vm_data_kb} kB\n")
    (proc / "self" / "cgroup").write_text(cgroup)
    return proc


def _files(directory, **contents):
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in contents.items():
        (directory / name.replace("_", ".", 1)).write_text(text)


@pytest.fixture
def limits(monkeypatch):
    """Fake soft limits for getrlimit: {resource id: bytes}; others unlimited."""
    fake = {}

    def getrlimit(which):
        return fake.get(which, resource.RLIM_INFINITY), resource.RLIM_INFINITY

    monkeypatch.setattr(resource, "getrlimit", getrlimit)
    return fake


def test_free_memory_reads_mem_available(tmp_path):
    assert free_memory(_proc(tmp_path, available_kb=123456)) == 123456 * KB


def test_address_space_room_is_the_limit_less_vm_size(tmp_path, limits):
    proc = _proc(tmp_path, vm_size_kb=2 * GIB // KB)
    assert address_space_room(proc) is None  # no limit
    limits[resource.RLIMIT_AS] = 6 * GIB
    assert address_space_room(proc) == 4 * GIB
    limits[resource.RLIMIT_AS] = GIB  # already above it: no room
    assert address_space_room(proc) == 0


def test_data_segment_room_is_the_limit_less_vm_data(tmp_path, limits):
    proc = _proc(tmp_path, vm_data_kb=GIB // KB)
    assert data_segment_room(proc) is None
    limits[resource.RLIMIT_DATA] = 3 * GIB
    assert data_segment_room(proc) == 2 * GIB


def test_cgroup_v2_room_is_the_smallest_max_less_current_up_the_tree(tmp_path):
    proc = _proc(tmp_path, cgroup="0::/user.slice/fit.scope\n")
    root = tmp_path / "cgroup"
    _files(root / "user.slice" / "fit.scope", memory_max="max", memory_current="100")
    assert cgroup_v2_room(proc, root) is None  # "max": no limit
    _files(root / "user.slice" / "fit.scope", memory_max=str(6 * GIB),
           memory_current=str(GIB))
    assert cgroup_v2_room(proc, root) == 5 * GIB
    _files(root / "user.slice", memory_max=str(4 * GIB), memory_current=str(3 * GIB))
    assert cgroup_v2_room(proc, root) == GIB  # the parent's limit is tighter
    _files(root / "user.slice", memory_stat=f"anon 5\ninactive_file {GIB}\nactive_file 7\n")
    assert cgroup_v2_room(proc, root) == 2 * GIB  # its inactive file pages are reclaimed first


def test_cgroup_v2_in_its_own_namespace_is_read_at_the_mount_point(tmp_path):
    proc = _proc(tmp_path, cgroup="0::/\n")
    root = tmp_path / "cgroup"
    _files(root, memory_max=str(2 * GIB), memory_current=str(GIB // 2))
    assert cgroup_v2_room(proc, root) == 3 * GIB // 2


def test_cgroup_v1_room_is_the_limit_less_usage(tmp_path):
    proc = _proc(tmp_path, cgroup="5:cpu,cpuacct:/\n4:memory:/docker/abc\n0::/\n")
    memory = tmp_path / "cgroup" / "memory"
    _files(memory, memory_limit_in_bytes="9223372036854771712", memory_usage_in_bytes="5")
    _files(memory / "docker" / "abc", memory_limit_in_bytes=str(6 * GIB),
           memory_usage_in_bytes=str(2 * GIB))
    assert cgroup_v1_room(proc, tmp_path / "cgroup") == 4 * GIB
    _files(memory / "docker" / "abc", memory_stat=f"total_inactive_file {3 * GIB}\n")
    assert cgroup_v1_room(proc, tmp_path / "cgroup") == 6 * GIB  # never above the limit
    assert cgroup_v2_room(proc, tmp_path / "cgroup") is None  # hybrid: no v2 memory.max


def test_no_cgroup_file_means_no_cgroup_limit(tmp_path):
    proc = tmp_path / "empty"
    proc.mkdir()
    assert cgroup_v1_room(proc, tmp_path) is None and cgroup_v2_room(proc, tmp_path) is None


def test_memory_room_is_the_smallest_and_names_its_source(tmp_path, limits):
    proc = _proc(tmp_path, available_kb=16 * GIB // KB, vm_size_kb=GIB // KB,
                 cgroup="0::/fit\n")
    root = tmp_path / "cgroup"
    assert memory_room(proc, root) == (16 * GIB, FREE)
    limits[resource.RLIMIT_AS] = 6 * GIB
    assert memory_room(proc, root) == (5 * GIB, ADDRESS_SPACE)
    _files(root / "fit", memory_max=str(3 * GIB), memory_current=str(GIB))
    assert memory_room(proc, root) == (2 * GIB, CGROUP_V2)
    v1 = _proc(tmp_path / "v1", cgroup="4:memory:/fit\n")
    _files(root / "memory" / "fit", memory_limit_in_bytes=str(GIB),
           memory_usage_in_bytes="0")
    assert memory_room(v1, root) == (GIB, CGROUP_V1)


def _under_cgroup(monkeypatch, tmp_path, limit, usage=0):
    """Make this process read a fake cgroup v2 limit of ``limit`` bytes."""
    monkeypatch.setattr(memory_limits, "PROC", _proc(tmp_path, cgroup="0::/fit\n"))
    monkeypatch.setattr(memory_limits, "CGROUP", tmp_path / "cgroup")
    _files(tmp_path / "cgroup" / "fit", memory_max=str(limit), memory_current=str(usage))


def test_a_cgroup_limit_shrinks_the_planned_cache(monkeypatch, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = np.where(X[:, 0] > 0, 1, -1)
    _under_cgroup(monkeypatch, tmp_path, 64 * MB)
    model = MKLClassifier(solver="smo", kernel_storage="rows", max_iter=3).fit(X, y)
    assert model.cache_size_ <= 0.25 * 64  # half the budget, half the room
    # an explicit cache the limit cannot hold is refused before any kernel, naming the limit
    with pytest.raises(ValueError, match=r"cgroup memory limit \(memory.max\)") as error:
        MKLClassifier(solver="smo", cache_size=500).fit(X, y)
    assert "lower cache_size" in str(error.value)
    assert main(["fit", "--n-samples", "100", "--cache-size", "500"]) == 2


def test_refusal_under_a_cgroup_limit_is_one_cli_line(monkeypatch, tmp_path, capsys):
    _under_cgroup(monkeypatch, tmp_path, 8 * MB)
    assert main(["fit", "--n-samples", "100", "--cache-size", "500"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mklearn: error: ")
    assert "500 MB" in err[0] and "raise the cgroup memory limit" in err[0]


def test_budget_without_limits_is_half_the_free_memory(monkeypatch):
    monkeypatch.setattr(memory_limits, "available_memory", lambda: 4 * GIB)
    assert memory_limits.default_budget() == 2 * GIB


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ulimit -v is Linux's")
def test_default_fit_under_an_address_space_limit_fits():
    """Under ``ulimit -v`` the default fit plans a cache the limit holds (it used to die
    allocating a 5.7 GiB row cache)."""
    script = textwrap.dedent("""
        import resource
        import numpy as np
        from mklearn import MKLClassifier
        resource.setrlimit(resource.RLIMIT_AS, (6_000_000 * 1024, resource.RLIM_INFINITY))
        rng = np.random.default_rng(0)
        X = rng.standard_normal((5000, 5))
        y = np.where(X[:, 0] > 0, 1, -1)
        model = MKLClassifier(max_iter=2).fit(X, y)
        print(model.cache_size_)
    """)
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", script], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout.split()[-1]) < 6_000_000 / 1024 / 2


class _Rows:
    """A provider of rows of one kernel: ``K[i, j] = i * n + j``."""

    n_kernels, n_samples = 1, 50
    value_dtype, rows_per_call, capabilities = np.float64, 1, Capabilities()

    def rows(self, indices):
        indices = np.asarray(indices)
        return (indices[:, None] * self.n_samples + np.arange(self.n_samples))[None] * 1.0


def test_row_cache_reserves_no_more_slots_than_the_address_space_limit_leaves(monkeypatch):
    from mklearn.kernels import cache as cache_module

    row_bytes = 8 * _Rows.n_samples
    monkeypatch.setattr(cache_module, "reservable_room", lambda: GIB + 5 * row_bytes)
    cache = cache_module.RowCache(_Rows(), cache_size=1.0)  # planned: every row
    assert cache.store.shape[0] == cache.capacity == 5 and cache.stopped_growing
    for i in [*range(_Rows.n_samples), 3, 49]:  # recycled, the same rows
        np.testing.assert_array_equal(cache.get(i), _Rows().rows([i])[:, 0])
    monkeypatch.setattr(cache_module, "reservable_room", lambda: 0)  # at least two rows
    assert cache_module.RowCache(_Rows(), cache_size=1.0).capacity == 2
    monkeypatch.setattr(cache_module, "reservable_room", lambda: None)  # no limit
    unlimited = cache_module.RowCache(_Rows(), cache_size=1.0)
    assert unlimited.capacity == _Rows.n_samples and not unlimited.stopped_growing
