"""rcuscale's GP-writer test through `python -m rcusim rcuscale`, and
kvm-recheck-rcuscale.sh's summary computed as its awk program computes it."""

from __future__ import annotations

import argparse
import re

import numpy as np
import pytest

from rcusim.commands.cli import main
from rcusim.engine.rcuscale import MIN_MEAS, recheck_lines
from rcusim.input.kvmcmd import scenario_from_kvm
from rcusim.input.scenario import load_scenario

BOOT = "rcuscale.nwriters=4 rcuscale.nreaders=0 rcuscale.holdoff=1"


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


def rcuscale(capsys, boot: str, *extra) -> list[str]:
    assert main(["rcuscale", "--kconfig", "CONFIG_NR_CPUS=8", "--bootargs", boot, *extra]) == 0
    return capsys.readouterr().out.splitlines()


def durations_us(lines):
    return np.array([int(ln.split()[-1]) / 1000 for ln in lines if "writer-duration" in ln])


def test_writer_test_prints_rcuscale_and_recheck_lines(capsys):
    lines = rcuscale(capsys, BOOT)
    d = durations_us(lines)
    assert len(d) == 4 * (MIN_MEAS + 1)
    assert [ln for ln in lines if re.fullmatch(r"rcu-scale: writer \d gps: \d+", ln)] == \
        [f"rcu-scale: writer {i} gps: {MIN_MEAS + 1}" for i in range(4)]
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


def test_readers_keep_the_cpus_busy(capsys):
    """rcu_scale_reader() kthreads, one per CPU by default, at nice 19: no CPU idles, so an
    expedited GP finds every CPU running and its writers never wait for an idle exit."""
    from types import SimpleNamespace

    from rcusim.input.kvmcmd import scenario_from_kvm

    args = SimpleNamespace(torture="rcuscale", kconfig=["CONFIG_NR_CPUS=8"], bootargs=["rcuscale.nwriters=4"],
                           ignored=[])
    data, _ = scenario_from_kvm(args)
    readers = [w for w in data["workloads"] if w["kind"] == "call_rcu_load"]
    assert [(w["cpus"], w["tasks_per_cpu"], w["nice"], w["call_rcu_per_op"]) for w in readers] == [("all", 1, 19, 0)]
    args.bootargs = ["rcuscale.nwriters=4 rcuscale.nreaders=11"]
    data, _ = scenario_from_kvm(args)
    assert [(w["cpus"], w["tasks_per_cpu"]) for w in data["workloads"] if w["kind"] == "call_rcu_load"] == \
        [("all", 1), ("0-2", 1)]
    idle = durations_us(rcuscale(capsys, "rcuscale.nwriters=4 rcuscale.nreaders=0 rcuscale.holdoff=1 rcuscale.gp_exp=1"))
    busy = durations_us(rcuscale(capsys, "rcuscale.nwriters=4 rcuscale.holdoff=1 rcuscale.gp_exp=1"))
    assert np.median(busy) < np.median(idle)


@pytest.mark.parametrize("boot, fragment", [
    ("rcuscale.nwriters=4", "CONFIG_PREEMPTION=n"),
    (BOOT + " rcuscale.gp_async=1", "gp_async"),
    (BOOT + " rcuscale.minruntime=5", "minruntime"),
    ("rcuscale.nwriters=0 rcuscale.nreaders=0", "no writers"),
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
    for refused in ("CONFIG_HZ_PERIODIC=y", "CONFIG_PREEMPT_DYNAMIC=y"):
        with pytest.raises(Exception, match="not modelled"):
            kernel(refused)


def test_no_hz_full_selects_callback_offloading():
    # kernel/time/Kconfig: NO_HZ_FULL selects RCU_NOCB_CPU, so nohz_full= needs nothing more.
    args = argparse.Namespace(torture="rcuscale", kconfig=["CONFIG_NR_CPUS=8 CONFIG_NO_HZ_FULL=y"],
                              bootargs=[BOOT + " nohz_full=1-7"], ignored=[])
    data, _ = scenario_from_kvm(args)
    (spec,) = load_scenario(data).variants.values()
    assert spec.params.nohz_full_cpus == spec.params.nocb_cpus == tuple(range(1, 8))
