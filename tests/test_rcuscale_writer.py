"""rcuscale's GP-writer test through `python -m rcusim rcuscale`, and
kvm-recheck-rcuscale.sh's summary computed as its awk program computes it."""

from __future__ import annotations

import argparse
import re

import numpy as np
import pytest

from rcusim import run
from rcusim.commands.cli import main
from rcusim.engine.rcuscale import MAX_MEAS, MIN_MEAS, recheck_lines, writer_durations
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


JIFFY_NS = 4_000_000  # HZ=250, the Kconfig default


def writer_calls(boot: str, release: str = "7.0"):
    """Each writer's calls (task, t_start_ns, t_end_ns rows, in order) of an rcuscale run."""
    args = argparse.Namespace(torture="rcuscale", kconfig=["CONFIG_NR_CPUS=8"], bootargs=[boot], ignored=[])
    data, _ = scenario_from_kvm(args, release=release)
    requests = run(data).variants["default"].requests  # a safety-checker violation would raise
    return [grp for _, grp in requests.sort_values(["task", "t_start_ns"]).groupby("task")]


def test_writer_holdoff_jiffies_sleeps_1_to_n_jiffies_before_each_gp(capsys):
    n = 5
    for calls in writer_calls(BOOT + f" rcuscale.writer_holdoff_jiffies={n}"):
        gaps = (calls["t_start_ns"].to_numpy()[1:] - calls["t_end_ns"].to_numpy()[:-1]) / JIFFY_NS
        # schedule_timeout_idle(j) on the timer wheel sleeps j to j + 1 jiffies (the expiry is
        # rounded up to the next tick); the wake-up and the call's entry add microseconds.
        assert gaps.min() >= 1 and gaps.max() < n + 1 + 0.01, (gaps.min(), gaps.max())
        # torture_random() % n + 1: every length of sleep comes up.
        assert set(np.floor(gaps).astype(int)) == set(range(1, n + 1))
    lines = rcuscale(capsys, BOOT + f" rcuscale.writer_holdoff_jiffies={n}")
    assert rcuscale(capsys, BOOT + f" rcuscale.writer_holdoff_jiffies={n}") == lines
    assert rcuscale(capsys, BOOT + f" rcuscale.writer_holdoff_jiffies={n}", "--seed", "1") != lines


def test_minruntime_keeps_every_writer_measuring_until_it_has_passed(capsys):
    minruntime_ns = 2 * 10**9  # about 250 grace periods a writer: more than twice MIN_MEAS + 1
    for calls in writer_calls(BOOT + " rcuscale.minruntime=2"):
        ends = calls["t_end_ns"].to_numpy()
        jdone_ns = (calls["t_start_ns"].iloc[0] // JIFFY_NS) * JIFFY_NS + minruntime_ns
        # Done at the first return with time_after(jiffies, jdone): not before, and not one call later.
        assert len(calls) > MIN_MEAS + 1
        assert ends[-1] >= jdone_ns + JIFFY_NS > ends[-2]
    gps = [ln for ln in rcuscale(capsys, BOOT + " rcuscale.minruntime=2") if re.fullmatch(r"rcu-scale: writer \d gps: \d+", ln)]
    assert all(MIN_MEAS + 1 < int(ln.split()[-1]) <= MAX_MEAS for ln in gps)


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
    args = argparse.Namespace(torture="rcuscale", kconfig=[], bootargs=[f"{BOOT} rcuscale.{param}"], ignored=[])
    data, _ = scenario_from_kvm(args, release="6.6")
    (writers,) = [w for w in data["workloads"] if w["kind"] == "sync_loop"]
    assert writers["sleep_jiffies_max"] == 3 or writers["min_runtime_s"] == 5
