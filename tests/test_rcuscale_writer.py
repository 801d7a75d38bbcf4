"""rcuscale's GP-writer test through `python -m rcusim rcuscale` and as the `rcuscale_writer`
workload kind: its command line and its refusals, and kvm-recheck-rcuscale.sh's summary computed
as its awk program computes it. (The writers in the engine, gp_async with rcu_barrier() too:
tests/engine/test_sync_loop.py.)"""

from __future__ import annotations

import argparse
import dataclasses
import re

import numpy as np
import pytest

from rcusim.commands.cli import main
from rcusim.engine.engine_input import engine_input
from rcusim.engine.rcuscale import MAX_MEAS, MIN_MEAS, recheck_lines, writer_durations
from rcusim.errors import ScenarioError
from rcusim.input.kvmcmd import scenario_from_kvm
from rcusim.input.scenario import load_scenario
from rcusim.input.workloads import SyncLoop

from tests.engine.conftest import ASYNC, BOOT, durations_us, rcuscale, writer_spec


def test_recheck_follows_the_awk_program():
    durations_ns = [3_000_123, 4_000_000, 3_500_000, 12_345_678]
    lines = ["rcu-scale: start: 1 end: 2 duration: 1 gps: 4 batches: 7"]
    lines += [f"rcu-scale:    0 writer-duration: {j:5d} {ns}" for j, ns in enumerate(durations_ns)]
    out = recheck_lines(lines)
    # pct90 = int(4 * 90 / 100) = 3: the third smallest, 4000 us; bucket 10**int(log10(4000) + .5) / 100.
    assert out[0] == "Histogram bucket size: 100"
    assert out[1:5] == ["3000 1", "3500 1", "4000 1", "12300 1"]
    assert "Average grace-period duration: 5711.45 microseconds" in out
    assert "Minimum grace-period duration: 3000.12" in out
    assert "50th percentile grace-period duration: 3500" in out  # int(4 * 50 / 100) = 2
    assert "99th percentile grace-period duration: 4000" in out  # int(4 * 99 / 100) = 3
    assert "Maximum grace-period duration: 12345.7" in out
    assert "Grace periods: 4 Batches: 1 Ratio: 4" in out  # the script's nbatches is 1


def test_writer_test_prints_rcuscale_and_recheck_lines(capsys):
    lines = rcuscale(capsys, BOOT)
    d = durations_us(lines)
    counts = [int(ln.split()[-1]) for ln in lines if re.fullmatch(r"rcu-scale: writer \d gps: \d+", ln)]
    # Each writer done at MIN_MEAS + 1 measures on until all are: the last one done has those.
    assert len(counts) == 4 and min(counts) == MIN_MEAS + 1 and sum(counts) == len(d)
    assert f"Grace periods: {len(d)} Batches: 1 Ratio: {len(d)}" in lines
    avg = next(ln for ln in lines if ln.startswith("Average grace-period duration:"))
    assert float(avg.split()[3]) == pytest.approx(d.mean(), rel=1e-5)
    # A synchronize_rcu() waits for at least one whole normal GP: at HZ=250 (the
    # Kconfig default) jiffies_till_first_fqs is one jiffy, the wait at least 4 ms.
    assert d.min() >= 4000


def test_gp_exp_measures_expedited_grace_periods(capsys):
    normal = durations_us(rcuscale(capsys, BOOT))
    expedited = durations_us(rcuscale(capsys, BOOT + " rcuscale.gp_exp=1"))
    assert np.median(expedited) < np.median(normal) / 4


@pytest.mark.parametrize("boot, fragment", [
    ("rcuscale.nwriters=4", "CONFIG_PREEMPTION=n"),
    (BOOT + " rcuscale.gp_async=1 rcuscale.gp_async_max=0", "rcuscale.gp_async_max: 0 with gp_async"),
    ("rcuscale.nwriters=0 rcuscale.nreaders=0", "rcuscale.nwriters: no writers"),
])
def test_what_is_not_modelled_is_refused(boot, fragment, capsys):
    kconfig = ["--kconfig", "CONFIG_PREEMPT_NONE=y CONFIG_PREEMPT=n"] if fragment == "CONFIG_PREEMPTION=n" else []
    assert main(["rcuscale", "--kconfig", "CONFIG_NR_CPUS=8", *kconfig, "--bootargs", boot]) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1


def test_kvm_preemption_and_tick_choices():
    from types import SimpleNamespace

    from rcusim.input.kvmcmd import scenario_from_kvm
    from rcusim.input.scenario import load_scenario

    def kernel(*kconfig):
        args = SimpleNamespace(torture="rcuscale", kconfig=list(kconfig), bootargs=[BOOT], ignored=[])
        data, _ = scenario_from_kvm(args)
        return load_scenario(data).variants["default"].kernel

    k = kernel("CONFIG_PREEMPT_NONE=y CONFIG_PREEMPT_VOLUNTARY=n CONFIG_PREEMPT=n", "CONFIG_NO_HZ_IDLE=y")
    assert (k.CONFIG_PREEMPTION, k.CONFIG_PREEMPT_RCU) == (False, False)
    k = kernel("CONFIG_PREEMPT=y", "CONFIG_NO_HZ_FULL=y")
    assert (k.CONFIG_PREEMPTION, k.CONFIG_PREEMPT_RCU) == (True, True)
    assert kernel("CONFIG_HZ_PERIODIC=y CONFIG_NO_HZ_IDLE=n").CONFIG_HZ_PERIODIC

    def params(*kconfig, boot=""):
        args = SimpleNamespace(torture="rcuscale", kconfig=list(kconfig), bootargs=[BOOT + boot], ignored=[])
        data, _ = scenario_from_kvm(args)
        return load_scenario(data).variants["default"].params
    # A dynamic build is preemptible; its Kconfig choice is preempt='s default, the command line wins.
    p = params("CONFIG_PREEMPT_VOLUNTARY=y CONFIG_PREEMPT_DYNAMIC=y")
    assert (p.preemption, p.preempt_rcu) == (False, True)
    p = params("CONFIG_PREEMPT_VOLUNTARY=y CONFIG_PREEMPT_DYNAMIC=y", boot=" preempt=full")
    assert (p.preemption, p.preempt_rcu) == (True, True)


def test_no_hz_full_selects_callback_offloading():
    # kernel/time/Kconfig: NO_HZ_FULL selects RCU_NOCB_CPU, so nohz_full= needs nothing more.
    args = argparse.Namespace(torture="rcuscale", kconfig=["CONFIG_NR_CPUS=8 CONFIG_NO_HZ_FULL=y"],
                              bootargs=[BOOT + " nohz_full=1-7"], ignored=[])
    data, _ = scenario_from_kvm(args)
    (spec,) = load_scenario(data).variants.values()
    assert spec.params.nohz_full_cpus == spec.params.nocb_cpus == tuple(range(1, 8))


def test_a_writer_keeps_max_meas_durations():
    calls = np.arange(MAX_MEAS + 5)
    kept = writer_durations(calls)
    # The array's last slot holds the latest call: writer_n_durations is MAX_MEAS.
    assert len(kept) == MAX_MEAS and kept[-2] == MAX_MEAS - 2 and kept[-1] == calls[-1]
    assert list(writer_durations(calls[:3])) == [0, 1, 2]


@pytest.mark.parametrize("param", ["writer_holdoff_jiffies=3", "minruntime=5"])
def test_writer_parameters_exist_from_v6_6(param, capsys):
    assert main(["rcuscale", "--release", "6.5", "--kconfig", "CONFIG_NR_CPUS=8",
                 "--bootargs", f"{BOOT} rcuscale.{param}"]) == 2
    err = capsys.readouterr().err
    assert f"rcuscale.{param.split('=')[0]}" in err and "v6.6" in err and err.count("\n") == 1
    (writers,) = [w for w in writer_spec(f"{BOOT} rcuscale.{param}", release="6.6").workloads
                  if isinstance(w, SyncLoop)]
    assert writers.sleep_jiffies_max == 3 or writers.min_runtime_s == 5


YAML_WRITER = """\
hardware: {profile: x86-64-server-2023, nr_cpus: 8}
kernel: {release: "7.0"}
workloads:
  - {kind: rcuscale_writer, nwriters: 4, nreaders: 0, holdoff: 1, gp_async: true, gp_async_max: 100}
"""


def test_the_rcuscale_writer_kind_is_the_kvm_command(tmp_path, capsys):
    path = tmp_path / "w.yaml"
    path.write_text(YAML_WRITER)
    a, _ = engine_input(load_scenario(path).variants["default"])
    b, _ = engine_input(writer_spec(ASYNC))
    for section in dataclasses.fields(a):
        x, y = getattr(a, section.name), getattr(b, section.name)
        for f in dataclasses.fields(x):
            u, v = getattr(x, f.name), getattr(y, f.name)
            assert np.array_equal(u, v) if isinstance(u, np.ndarray) else u == v, f"{section.name}.{f.name}"
    kvm = rcuscale(capsys, ASYNC)
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out.splitlines()
    summary = [ln for ln in kvm if " start: " in ln] + recheck_lines(kvm)
    assert [ln.removeprefix("default: ") for ln in out if ln.startswith("default: ")] == summary


@pytest.mark.parametrize("workload, key", [
    ({"kind": "rcuscale_writer", "gp_async": True, "gp_async_max": 0}, "workloads[0].gp_async_max"),
    ({"kind": "rcuscale_writer", "gp_async": True}, "workloads[0].gp_async"),  # release 4.12
    ({"kind": "sync_loop", "tasks": 1, "loops": 1, "primitive": "call_rcu_hurry"}, "workloads[0].primitive"),
    ({"kind": "sync_loop", "tasks": 1, "loops": 1, "async_max": 5}, "workloads[0].async_max"),
    ({"kind": "sync_loop", "tasks": 1, "loops": 1, "primitive": "call_rcu_hurry", "work_after": "vfree"},
     "workloads[0].work_after"),
])
def test_what_rcuscale_or_the_kernel_lacks_is_refused(workload, key):
    data = {"hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4}, "kernel": {"release": "7.0"},
            "workloads": [workload]}
    if key.endswith((".gp_async", ".primitive")):
        data["kernel"]["release"] = "4.12"
    with pytest.raises(ScenarioError, match=re.escape(key)):
        load_scenario(data)


def test_one_rcuscale_writer_whose_workloads_keep_unique_names(tmp_path, capsys):
    two = YAML_WRITER + "  - {kind: rcuscale_writer}\n"
    clash = YAML_WRITER + "  - {kind: sync_loop, name: rcu_scale_writer, tasks: 1, loops: 1}\n"
    for text, key in ((two, "workloads[1].kind"), (clash, "workloads[0].name")):
        path = tmp_path / "bad.yaml"
        path.write_text(text)
        assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert key in err and err.count("\n") == 1
        assert not (tmp_path / "out").exists()


def test_gp_async_exists_from_v4_13(capsys):
    """rcuperf (the module's name before v5.10) took gp_async from v4.13."""
    rcuperf = ASYNC.replace("rcuscale.", "rcuperf.")
    assert main(["rcuscale", "--release", "4.12", "--kconfig", "CONFIG_NR_CPUS=8", "--bootargs", rcuperf]) == 2
    err = capsys.readouterr().err
    assert "rcuperf.gp_async" in err and "v4.13" in err and err.count("\n") == 1
