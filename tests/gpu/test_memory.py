"""cgroup v2, v1, hybrid and no-cgroup machines, built as fake trees under tmp_path."""

from pathlib import Path

import pytest

from jupyter_gpu_env.gpu.memory import read_host

GiB = 1 << 30
TOTAL = 64 * GiB


def write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def v2_tree(root: Path, *, leaf_max="max", parent_max="max", cpu_max="max 100000") -> Path:
    write(
        root, "proc/self/mountinfo", "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
    )
    write(root, "proc/self/cgroup", "0::/kubepods/pod1/ctr\n")
    cg = "sys/fs/cgroup"
    write(root, f"{cg}/cgroup.controllers", "cpuset cpu io memory pids\n")
    write(root, f"{cg}/kubepods/pod1/memory.max", parent_max + "\n")
    write(root, f"{cg}/kubepods/pod1/ctr/memory.max", leaf_max + "\n")
    write(root, f"{cg}/kubepods/pod1/ctr/memory.current", str(3 * GiB) + "\n")
    write(root, f"{cg}/kubepods/pod1/ctr/memory.stat", f"anon 123\ninactive_file {GiB}\nactive_file 5\n")
    write(root, f"{cg}/kubepods/pod1/ctr/cpu.max", cpu_max + "\n")
    write(root, f"{cg}/kubepods/pod1/ctr/cpu.stat", "usage_usec 2500000\nuser_usec 1\n")
    return root


def test_v2_limit_and_working_set(tmp_path):
    s = read_host(
        v2_tree(tmp_path, leaf_max=str(8 * GiB), cpu_max="150000 100000"),
        now=1.0,
        machine_total=TOTAL,
        cores=16,
    )
    assert s.source == "cgroup2"
    assert s.memory_limit == 8 * GiB and s.memory_limited
    assert s.memory_used == 2 * GiB  # 3 GiB current minus 1 GiB inactive file cache
    assert s.cpu_limit == 1.5 and s.cpu_limited
    assert s.cpu_seconds == pytest.approx(2.5)


def test_v2_parent_limit_binds(tmp_path):
    s = read_host(v2_tree(tmp_path, parent_max=str(4 * GiB)), now=1.0, machine_total=TOTAL, cores=16)
    assert s.memory_limit == 4 * GiB and s.memory_limited


def test_v2_without_limit_uses_machine_total(tmp_path):
    s = read_host(v2_tree(tmp_path), now=1.0, machine_total=TOTAL, cores=16)
    assert s.source == "cgroup2"
    assert s.memory_limit == TOTAL and not s.memory_limited
    assert s.cpu_limit == 16


def v1_tree(root: Path, limit: int, quota: int = -1) -> Path:
    write(
        root,
        "proc/self/mountinfo",
        (
            "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
            "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
            "33 31 0:30 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n"
            "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
            "40 31 0:40 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
        ),
    )
    write(root, "proc/self/cgroup", "4:memory:/docker/abc\n2:cpuacct:/docker/abc\n1:cpu:/docker/abc\n0::/\n")
    cg = "sys/fs/cgroup"
    write(root, f"{cg}/unified/cgroup.controllers", "hugetlb\n")  # hybrid host: unified tree holds no memory
    write(root, f"{cg}/memory/docker/abc/memory.limit_in_bytes", f"{limit}\n")
    write(root, f"{cg}/memory/docker/memory.limit_in_bytes", "9223372036854771712\n")
    write(root, f"{cg}/memory/docker/abc/memory.usage_in_bytes", f"{5 * GiB}\n")
    write(root, f"{cg}/memory/docker/abc/memory.stat", f"cache 1\ntotal_inactive_file {GiB // 2}\n")
    write(root, f"{cg}/cpu/docker/abc/cpu.cfs_quota_us", f"{quota}\n")
    write(root, f"{cg}/cpu/docker/abc/cpu.cfs_period_us", "100000\n")
    write(root, f"{cg}/cpuacct/docker/abc/cpuacct.usage", "7000000000\n")
    return root


def test_v1_on_hybrid_host(tmp_path):
    s = read_host(v1_tree(tmp_path, 6 * GiB, quota=200000), now=1.0, machine_total=TOTAL, cores=8)
    assert s.source == "cgroup1"
    assert s.memory_limit == 6 * GiB and s.memory_limited
    assert s.memory_used == 5 * GiB - GiB // 2
    assert s.cpu_limit == 2.0
    assert s.cpu_seconds == pytest.approx(7.0)


def test_v1_unlimited_is_not_a_limit(tmp_path):
    s = read_host(v1_tree(tmp_path, 9223372036854771712), now=1.0, machine_total=TOTAL, cores=8)
    assert s.source == "cgroup1"
    assert s.memory_limit == TOTAL and not s.memory_limited
    assert s.cpu_limit == 8


def test_namespaced_path_falls_back_to_mount_root(tmp_path):
    root = v2_tree(tmp_path, leaf_max=str(2 * GiB))
    # Inside a cgroup namespace /proc/self/cgroup may name a path that is not visible in the mount.
    write(root, "proc/self/cgroup", "0::/not/visible/here\n")
    cg = root / "sys/fs/cgroup"
    (cg / "memory.current").write_text(str(GiB))
    (cg / "memory.max").write_text(str(2 * GiB))
    s = read_host(root, now=1.0, machine_total=TOTAL, cores=4)
    assert s.memory_limit == 2 * GiB
    assert s.memory_used == GiB


def test_no_cgroup_reads_the_machine(tmp_path):
    write(tmp_path, "proc/self/mountinfo", "")
    s = read_host(tmp_path, now=1.0, machine_total=TOTAL, cores=4)
    assert s.source == "host"
    assert s.memory_limit == TOTAL and not s.memory_limited
    assert 0 < s.memory_used < TOTAL


def test_this_machine():
    s = read_host(now=1.0)
    assert s.source in {"cgroup2", "cgroup1", "host"}
    assert 0 < s.memory_used <= s.memory_limit
