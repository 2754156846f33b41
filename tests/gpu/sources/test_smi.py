"""nvidia-smi parsers against real recorded outputs, asserting the figures those files contain."""

from __future__ import annotations

import stat
import sys
import textwrap

import pytest

from jupyter_gpu_env.errors import CommandFailed, CommandTimeout, Conflict, Unavailable
from jupyter_gpu_env.gpu import mig
from jupyter_gpu_env.gpu.sources import chain, smi
from jupyter_gpu_env.models import GpuDevice, MigDevice

from ..fixture_files import (
    A100_XML,
    H100,
    H100_MIG,
    H100X8_QUERY,
    H100X8_TABLE,
    H200_MIG,
    L_7X1G,
    L_BALANCED,
    LGI_A100,
    MIB,
)

H100X8_UUIDS = [
    "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa",
    "GPU-47daa2ad-a218-6286-252b-af45f0dfaf00",
    "GPU-167d8376-ee13-fca4-938a-a05167c43cdc",
    "GPU-afe9f2ed-9dd0-572c-3cd8-b42b58b3bc99",
    "GPU-2b6f61f9-8b00-3b57-d912-b62792120662",
    "GPU-980ea11b-91dc-db7b-72ac-0685abc43658",
    "GPU-4ef109e9-e925-4834-2b85-0771b4ef696c",
    "GPU-b0fe4996-1f7c-91f6-0ccd-08ae3b7e23c5",
]
MASKED_GPU = "GPU-00000000-0000-0000-0000-000000000000"


def masked_mig(n: int) -> str:
    return f"MIG-0000000{n}-0000-0000-0000-00000000000{n}"


def mib(value: int | None) -> int | None:
    return None if value is None else value // MIB


def mig_rows(gpu):
    return [
        (
            m.index,
            m.gpu_instance_id,
            m.compute_instance_id,
            m.sm_count,
            mib(m.memory_used_bytes),
            mib(m.memory_total_bytes),
        )
        for m in gpu.mig_devices
    ]


def procs(items):
    return [
        (p.pid, mib(p.used_memory_bytes), p.gpu_instance_id, p.compute_instance_id, p.name) for p in items
    ]


# --- nvidia-smi -q -x ---------------------------------------------------------------------------


def test_a100_xml(fixture_text):
    [gpu] = smi.parse_smi_xml(fixture_text(A100_XML))  # attached_gpus says 4; the file holds one <gpu>
    assert gpu.name == "NVIDIA A100-SXM4-80GB"
    assert gpu.uuid == "GPU-513536b6-7d19-9063-b049-1e69664bb298"
    assert gpu.memory_used_bytes == 50 * MIB
    assert gpu.memory_total_bytes == 81920 * MIB
    assert gpu.utilization_percent is None  # N/A on a MIG-enabled parent
    assert gpu.mig_enabled
    assert mig_rows(gpu) == [(i, gi, 0, 14, 12, 19968) for i, gi in enumerate((3, 4, 5, 6))]
    # The XML names no profile: 14 SMs and 2/8 of 80 GB is 1g.20gb, marked as inferred.
    assert [(m.profile, m.profile_inferred, m.uuid) for m in gpu.mig_devices] == [("1g.20gb", True, None)] * 4
    assert gpu.processes == [] and all(m.processes == [] for m in gpu.mig_devices)


def test_xml_processes_land_on_their_mig_device():
    xml = textwrap.dedent("""\
        <nvidia_smi_log><gpu id="00000000:01:00.0">
          <product_name>NVIDIA A100-SXM4-40GB</product_name><product_architecture>Ampere</product_architecture>
          <uuid>GPU-1</uuid><mig_mode><current_mig>Enabled</current_mig></mig_mode>
          <mig_devices><mig_device><index>0</index><gpu_instance_id>1</gpu_instance_id>
            <compute_instance_id>0</compute_instance_id>
            <device_attributes><shared><multiprocessor_count>42</multiprocessor_count></shared></device_attributes>
            <fb_memory_usage><total>20096 MiB</total><used>4000 MiB</used></fb_memory_usage></mig_device>
          </mig_devices>
          <fb_memory_usage><total>40960 MiB</total><used>4100 MiB</used></fb_memory_usage>
          <utilization><gpu_util>N/A</gpu_util></utilization>
          <processes>
            <process_info><gpu_instance_id>1</gpu_instance_id><compute_instance_id>0</compute_instance_id>
              <pid>4242</pid><type>C</type><process_name>python</process_name><used_memory>3900 MiB</used_memory>
            </process_info>
            <process_info><gpu_instance_id>N/A</gpu_instance_id><compute_instance_id>N/A</compute_instance_id>
              <pid>77</pid><type>G</type><process_name>Xorg</process_name><used_memory>N/A</used_memory>
            </process_info>
          </processes></gpu></nvidia_smi_log>""")
    [gpu] = smi.parse_smi_xml(xml)
    assert procs(gpu.mig_devices[0].processes) == [(4242, 3900, 1, 0, "python")]
    assert procs(gpu.processes) == [(77, None, None, None, "Xorg")]
    assert gpu.mig_devices[0].profile == "3g.20gb"


# --- nvidia-smi -L ------------------------------------------------------------------------------


def test_list_7x1g10gb(fixture_text):
    [gpu] = smi.parse_smi_list(fixture_text(L_7X1G))
    assert (gpu.index, gpu.name, gpu.uuid) == (
        0,
        "NVIDIA H100 80GB HBM3",
        "GPU-b4895dbf-9350-2524-a89b-98161ddd9fe4",
    )
    assert [(m.index, m.profile) for m in gpu.migs] == [(i, "1g.10gb") for i in range(7)]
    assert gpu.migs[0].uuid == "MIG-3f6f389f-b0cc-5e5c-8e32-eaa8fd067902"
    assert gpu.migs[6].uuid == "MIG-981c86e9-3607-57d7-9426-295347e4b925"
    assert len({m.uuid for m in gpu.migs}) == 7


def test_list_all_balanced(fixture_text):
    [gpu] = smi.parse_smi_list(fixture_text(L_BALANCED))
    assert gpu.uuid == "GPU-b4895dbf-9350-2524-a89b-98161ddd9fe4"
    assert [(m.profile, m.uuid) for m in gpu.migs] == [
        ("3g.40gb", "MIG-7089d0f3-293f-58c9-8f8c-5ea666eedbde"),
        ("2g.20gb", "MIG-56c30729-347f-5dd6-8da0-c3cc59e969e0"),
        ("1g.10gb", "MIG-9d14fb21-4ae1-546f-a636-011582899c39"),
        ("1g.10gb", "MIG-0f709664-740c-52b0-ae79-3e4c9ede6d3b"),
    ]


@pytest.mark.parametrize(
    ("name", "gpu_name", "profiles"),
    [
        (H100_MIG, "NVIDIA H100 80GB HBM3", ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]),
        (H200_MIG, "NVIDIA H200", ["1c.3g.71gb", "2c.3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"]),
        (H100, "NVIDIA H100 80GB HBM3", []),
    ],
)
def test_list_in_captures(section, name, gpu_name, profiles):
    [gpu] = smi.parse_smi_list(section(name, "capabilities", "nvidia-smi -L"))
    assert (gpu.name, gpu.uuid) == (gpu_name, MASKED_GPU)
    assert [m.profile for m in gpu.migs] == profiles
    assert [m.uuid for m in gpu.migs] == [masked_mig(i) for i in range(len(profiles))]


def test_legacy_mig_uuids_carry_gi_and_ci():
    text = "GPU 0: A100-SXM4-40GB (UUID: GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f)\n" + (
        "  MIG 3g.20gb Device 0: (UUID: MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/2/0)\n"
    )
    [gpu] = smi.parse_smi_list(text)
    assert (gpu.migs[0].gpu_instance_id, gpu.migs[0].compute_instance_id) == (2, 0)


# --- nvidia-smi -q (text) and the default table ---------------------------------------------------

H100_MIG_IDLE = [
    (0, 2, 0, 60, 26, 40448),
    (1, 3, 0, 32, 17, 20096),
    (2, 9, 0, 16, 9, 9984),
    (3, 10, 0, 16, 9, 9984),
]
H100_MIG_LOAD_PROCS = [
    (21180, 2296, 2, 0, "/root/tools/memhog"),
    (21181, 1272, 2, 0, "/root/tools/memhog"),
    (21198, 7484, 2, 0, "./gpu_burn"),
]
H200_LOAD_PROCS = [
    (12249, 2194, 2, 1, "/root/tools/memhog"),
    (12250, 1170, 2, 1, "/root/tools/memhog"),
    (12267, 13526, 2, 1, "./gpu_burn"),
]
H100_LOAD_PROCS = [
    (11327, 2566, None, None, "/root/tools/memhog"),
    (11328, 1542, None, None, "/root/tools/memhog"),
    (11345, 15690, None, None, "./gpu_burn"),
]


def h200_rows(used: int) -> list[tuple]:
    return [(0, 2, 0, 16, used, 71424), (1, 2, 1, 32, used, 71424), (2, 3, 0, 32, 17, 33280)] + [
        (3, 9, 0, 16, 9, 16384),
        (4, 10, 0, 16, 9, 16384),
    ]


CAPTURE_CASES = [
    # capture, phase, GPU name, used MiB, total MiB, utilization, MIG rows, processes on MIG devices, on the GPU
    (H100_MIG, "idle", "NVIDIA H100 80GB HBM3", 59, 81559, None, H100_MIG_IDLE, [], []),
    (
        H100_MIG,
        "load",
        "NVIDIA H100 80GB HBM3",
        11125,
        81559,
        None,
        [(0, 2, 0, 60, 11091, 40448), *H100_MIG_IDLE[1:]],
        H100_MIG_LOAD_PROCS,
        [],
    ),
    (H200_MIG, "idle", "NVIDIA H200", 55, 143771, None, h200_rows(22), [], []),
    (H200_MIG, "load", "NVIDIA H200", 16959, 143771, None, h200_rows(16925), H200_LOAD_PROCS, []),
    (H100, "idle", "NVIDIA H100 80GB HBM3", 0, 81559, 0.0, [], [], []),
    (H100, "load", "NVIDIA H100 80GB HBM3", 19818, 81559, 100.0, [], [], H100_LOAD_PROCS),
]


@pytest.mark.parametrize("command", ["nvidia-smi -q", "nvidia-smi"])
@pytest.mark.parametrize(
    ("name", "phase", "gpu_name", "used", "total", "util", "rows", "mig_procs", "gpu_procs"), CAPTURE_CASES
)
def test_query_and_table_in_captures(
    section, command, name, phase, gpu_name, used, total, util, rows, mig_procs, gpu_procs
):
    parse = smi.parse_smi_query if command == "nvidia-smi -q" else smi.parse_smi_table
    [gpu] = parse(section(name, phase, command))
    assert gpu.index == 0 and gpu.name == gpu_name
    assert gpu.uuid == (MASKED_GPU if command == "nvidia-smi -q" else None)  # the table prints none
    assert (mib(gpu.memory_used_bytes), mib(gpu.memory_total_bytes)) == (used, total)
    assert gpu.utilization_percent == util
    assert gpu.mig_enabled == bool(rows)
    assert mig_rows(gpu) == rows
    assert procs(p for m in gpu.mig_devices for p in m.processes) == mig_procs
    assert procs(gpu.processes) == gpu_procs


@pytest.mark.parametrize("name", [H100_MIG, H200_MIG])
def test_inferred_profiles_match_what_the_driver_printed(section, name):
    listed = [m.profile for m in smi.parse_smi_list(section(name, "capabilities", "nvidia-smi -L"))[0].migs]
    for command in ("nvidia-smi -q", "nvidia-smi"):
        parse = smi.parse_smi_query if command == "nvidia-smi -q" else smi.parse_smi_table
        [gpu] = parse(section(name, "load", command))
        assert [m.profile for m in gpu.mig_devices] == listed
        assert all(m.profile_inferred for m in gpu.mig_devices)


def test_query_joined_with_list(section):
    [gpu] = smi.join_listing(
        smi.parse_smi_query(section(H200_MIG, "load", "nvidia-smi -q")),
        smi.parse_smi_list(section(H200_MIG, "capabilities", "nvidia-smi -L")),
    )
    assert [(m.profile, m.profile_inferred, m.uuid) for m in gpu.mig_devices] == [
        ("1c.3g.71gb", False, masked_mig(0)),
        ("2c.3g.71gb", False, masked_mig(1)),
        ("2g.35gb", False, masked_mig(2)),
        ("1g.18gb", False, masked_mig(3)),
        ("1g.18gb", False, masked_mig(4)),
    ]
    # The gpu_burn run sits in the 2c.3g.71gb compute instance (GI 2 / CI 1).
    assert procs(gpu.mig_devices[1].processes) == H200_LOAD_PROCS


def test_table_joined_with_list_gets_uuids(section):
    [gpu] = smi.join_listing(
        smi.parse_smi_table(section(H100_MIG, "idle", "nvidia-smi")),
        smi.parse_smi_list(section(H100_MIG, "capabilities", "nvidia-smi -L")),
    )
    assert gpu.uuid == MASKED_GPU
    assert [m.uuid for m in gpu.mig_devices] == [masked_mig(i) for i in range(4)]


def test_eight_h100_query_text(fixture_text):
    gpus = smi.parse_smi_query(fixture_text(H100X8_QUERY))
    assert [g.uuid for g in gpus] == H100X8_UUIDS
    for i, g in enumerate(gpus):
        assert (g.index, g.name) == (i, "NVIDIA H100 80GB HBM3")
        assert (mib(g.memory_used_bytes), mib(g.memory_total_bytes)) == (0, 81559)
        assert g.utilization_percent == 0.0  # "Gpu : 0 %" in this driver's spelling
        assert not g.mig_enabled and g.mig_devices == [] and g.processes == []  # "Processes : None"


def test_eight_h100_table(fixture_text):
    gpus = smi.parse_smi_table(fixture_text(H100X8_TABLE))  # no trailing newline in this file
    assert [(g.index, g.name) for g in gpus] == [(i, "NVIDIA H100 80GB HBM3") for i in range(8)]
    assert {(mib(g.memory_used_bytes), mib(g.memory_total_bytes), g.utilization_percent) for g in gpus} == {
        (1, 81559, 0.0)
    }
    assert not any(g.mig_enabled or g.processes for g in gpus)


# --- nvidia-smi mig -lgi ----------------------------------------------------------------------------


def test_lgi_placements(fixture_text):
    rows = mig.parse_mig_lgi(fixture_text(LGI_A100))  # an RST excerpt: indented, with its "$ sudo" line
    assert [
        (r.gpu_index, r.profile, r.profile_id, r.gpu_instance_id, r.placement_start, r.placement_size)
        for r in rows
    ] == [(0, "1g.5gb", 19, gi, start, 1) for start, gi in enumerate(range(7, 14))]


def test_placements_apply_by_gpu_and_gi(fixture_text):
    devices = [
        GpuDevice(
            index=0,
            name="A100",
            mig_devices=[MigDevice(gpu_instance_id=9), MigDevice(gpu_instance_id=99)],
        )
    ]
    mig.apply_placements(devices, mig.parse_mig_lgi(fixture_text(LGI_A100)))
    assert [(m.placement_start, m.placement_size) for m in devices[0].mig_devices] == [(2, 1), (None, None)]


# --- read_smi: the subprocess path ---------------------------------------------------------------


def fake_smi(tmp_path, xml: str, listing: str | None, *, sleep: float = 0.0):
    """An executable standing in for nvidia-smi; ``listing=None`` makes ``-L`` fail like a lost driver."""
    (tmp_path / "q.xml").write_text(xml)
    if listing is not None:
        (tmp_path / "L.txt").write_text(listing)
    script = tmp_path / "nvidia-smi"
    script.write_text(
        f"#!{sys.executable}\n"
        "import pathlib, sys, time\n"
        f"time.sleep({sleep})\n"
        f"here = pathlib.Path({str(tmp_path)!r})\n"
        "if sys.argv[1:] == ['-q', '-x'] and (here / 'q.xml').exists():\n"
        "    sys.stdout.write((here / 'q.xml').read_text())\n"
        "elif sys.argv[1:] == ['-L'] and (here / 'L.txt').exists():\n"
        "    sys.stdout.write((here / 'L.txt').read_text())\n"
        "else:\n"
        "    print('NVIDIA-SMI has failed because it couldn\\'t communicate with the NVIDIA driver.')\n"
        "    sys.exit(9)\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


async def test_read_smi_joins_xml_and_list(tmp_path, fixture_text):
    # -L as the driver would print it for this XML's GPU (its UUID), with MIG UUIDs for the four slices.
    listing = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-513536b6-7d19-9063-b049-1e69664bb298)\n" + "".join(
        f"  MIG 1g.20gb     Device  {i}: (UUID: MIG-{i}{i}{i}{i}{i}{i}{i}{i}-0000-0000-0000-000000000000)\n"
        for i in range(4)
    )
    [gpu] = await chain.read_smi(fake_smi(tmp_path, fixture_text(A100_XML), listing))
    assert gpu.uuid == "GPU-513536b6-7d19-9063-b049-1e69664bb298"
    assert [(m.profile, m.profile_inferred) for m in gpu.mig_devices] == [("1g.20gb", False)] * 4
    assert gpu.mig_devices[2].uuid == "MIG-22222222-0000-0000-0000-000000000000"


async def test_read_smi_without_list_infers_profiles(tmp_path, fixture_text):
    [gpu] = await chain.read_smi(fake_smi(tmp_path, fixture_text(A100_XML), None))
    assert [(m.profile, m.profile_inferred, m.uuid) for m in gpu.mig_devices] == [("1g.20gb", True, None)] * 4


async def test_read_smi_errors(tmp_path):
    with pytest.raises(Conflict) as missing:
        await chain.read_smi(str(tmp_path / "no-such-nvidia-smi"))
    assert missing.value.reason == "tool_missing"
    (tmp_path / "lost").mkdir()
    lost = fake_smi(tmp_path / "lost", "", None)
    (tmp_path / "lost" / "q.xml").unlink()  # -q -x now fails as it does without a driver
    with pytest.raises(CommandFailed, match="couldn't communicate"):
        await chain.read_smi(lost)
    (tmp_path / "junk").mkdir()
    with pytest.raises(Unavailable, match="no readable XML"):
        await chain.read_smi(fake_smi(tmp_path / "junk", "<nvidia_smi_log><gpu>", None))
    (tmp_path / "slow").mkdir()
    with pytest.raises(CommandTimeout):
        await chain.read_smi(fake_smi(tmp_path / "slow", "<nvidia_smi_log/>", None, sleep=5), timeout=0.5)


def test_sizes():
    assert smi.to_bytes("19968 MiB") == 19968 * MIB
    assert smi.to_bytes("N/A") is None and smi.to_bytes(None) is None
    assert smi.to_bytes("4000 KiB") == 4000 * 1024
