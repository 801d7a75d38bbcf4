"""The grace-period floor on an idle machine: the GP kthread's own CPU, the FQS
timer on the timer wheel, and the CPU that expires that timer.

Each check reads the engine's own records (grace periods, trace) rather than a
latency figure, so a mechanism in the wrong place fails it.
"""

from __future__ import annotations

import numpy as np
import pytest

from rcusim import _core
from rcusim.errors import ScenarioError
from rcusim.input.profiles import profile_idle_states
from rcusim.input.scenario import load_scenario
from rcusim.kernel.timer import lvl_start, timer_expiry_jiffy
from rcusim.results import trace
from rcusim.results.run import run_scenario

LAST_QS = _core.LAST_QS_KINDS
GP_CPU = 0  # rcusim's housekeeping CPU, where the GP kthread runs
DEEPEST_EXIT_NS = profile_idle_states("x86-64-server-2023")[-1]["exit_latency_us"] * 1000


def lone_caller(release: str, hz: int = 1000, loops: int = 20, **kernel) -> dict:
    """One synchronize_rcu() caller on CPU 5 of an idle 64-CPU server."""
    return {"name": f"floor_{release}", "seed": 0,
            "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 64},
            "kernel": {"release": release, "HZ": hz, **kernel},
            "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": loops, "primitive": "synchronize_rcu",
                           "cpus": "5"}]}


def traced(data):
    return run_scenario(load_scenario(data), progress=False, trace_limit=trace.MAX_TRACE_RECORDS)


def only_variant(result):
    (v,) = result.variants.values()
    return v


# --- the timer wheel ---------------------------------------------------------
@pytest.mark.parametrize("delta, expected", [(0, 1), (3, 4), (62, 63), (63, 64), (100, 104), (5000, 5120)])
def test_wheel_rounds_up_one_unit_of_the_level(delta, expected):
    """calc_index(): level 0 (< 63 jiffies) fires a jiffy late; level n rounds up to
    the next multiple of 8**n above the expiry (5000 jiffies: level 3, 512)."""
    assert timer_expiry_jiffy(0, delta, hz=1000) == expected


def test_wheel_never_fires_early_and_at_most_one_unit_late():
    for clk in (0, 7, 1000, 123_457):
        for delta in range(0, 40_000, 37):
            fire = timer_expiry_jiffy(clk, clk + delta, hz=1000)
            lvl = next((n for n in range(8) if delta < lvl_start(n + 1)), 8)
            assert clk + delta < fire <= clk + delta + (1 << (3 * lvl))


def test_cascading_wheel_fires_at_the_expiry():
    assert timer_expiry_jiffy(10, 13, hz=1000, rounds_up=False) == 13
    assert timer_expiry_jiffy(10, 10, hz=1000, rounds_up=False) == 11


@pytest.mark.parametrize("release, wait_jiffies", [("4.7", 3), ("6.6", 4)])
def test_fqs_timer_fires_on_its_wheel_jiffy(release, wait_jiffies):
    """The first scan runs right after the tick of jiffies_till_first_fqs (3 at HZ=1000,
    64 CPUs) from the GP's start: that tick itself before v4.8, the one after from v4.8."""
    v = only_variant(traced(lone_caller(release)))
    f = trace.trace_frame(v)
    jiffy = 1_000_000
    starts = f[f.event == "gp_start"].t_ns.to_numpy()
    scans = f[f.event == "gp_fqs_start"].t_ns.to_numpy()
    for t0 in starts:
        first = scans[scans > t0][0]
        tick = (t0 // jiffy + wait_jiffies) * jiffy
        # After the tick: the GP CPU leaves its idle state (at most the deepest
        # state's exit latency), then the kthread's wake-up and context switch.
        assert tick < first < tick + DEEPEST_EXIT_NS + 50_000


# --- the GP kthread's own CPU ------------------------------------------------
def test_before_timer_pull_the_fqs_timer_interrupt_reports_the_gp_cpu():
    """Up to v6.8 the FQS timer wakes the idle GP CPU itself: its tick handler reports
    the QS noted at the kthread's context switch, so one scan ends the GP."""
    v = only_variant(traced(lone_caller("6.8")))
    gps = v.gps[~v.gps.expedited]
    assert (gps.fqs_scans == 1).all()
    assert (gps.last_qs != LAST_QS["gp_kthread_cpu"]).all()
    f = trace.trace_frame(v)
    own = f[(f.event == "qs") & (f.cpu == GP_CPU)]
    assert len(own) == len(gps) and (own.arg == 0).all()  # reported by the CPU, not by a scan


def test_with_timer_pull_the_gp_cpu_is_reported_by_the_second_scan():
    """From v6.9 the caller's CPU, ticking for its callback, expires the FQS timer, so the
    GP CPU runs no tick handler: the first scan finds it running the scan, the second
    (rcu_watching_snap_recheck()) sees it has been idle since."""
    v = only_variant(traced(lone_caller("6.19")))
    gps = v.gps[~v.gps.expedited]
    assert (gps.fqs_scans == 2).all()
    assert (gps.last_qs == LAST_QS["gp_kthread_cpu"]).all()
    f = trace.trace_frame(v)
    for seq in gps.gp_seq:
        scans = f[(f.event == "gp_fqs_start") & (f.gp_seq == seq)].t_ns.to_numpy()
        own = f[(f.event == "qs") & (f.cpu == GP_CPU) & (f.gp_seq == seq)]
        assert len(scans) == 2 and len(own) == 1
        assert own.arg.iloc[0] == 1 and own.t_ns.iloc[0] > scans[1]


def test_two_scans_double_the_floor():
    one = only_variant(traced(lone_caller("6.8")))
    two = only_variant(traced(lone_caller("6.12")))
    length = {k: (v.gps.t_end_ns - v.gps.t_start_ns).median() for k, v in (("one", one), ("two", two))}
    # 3-4 jiffies, then 3-4 more.
    assert 3e6 < length["one"] < 4.1e6
    assert 6e6 < length["two"] < 8.1e6


def test_same_seed_same_grace_periods():
    a = only_variant(run_scenario(load_scenario(lone_caller("6.12")), progress=False))
    b = only_variant(run_scenario(load_scenario(lone_caller("6.12")), progress=False))
    assert a.gps.equals(b.gps)


def test_gp_metrics_in_summary():
    v = only_variant(run_scenario(load_scenario(lone_caller("6.12")), progress=False))
    gp = v.metrics["normal_gp"]
    assert gp["fqs_scans"] == {"mean": 2.0, "p99": 2.0}
    assert gp["last_qs"]["gp_kthread_cpu"] == len(v.gps)
    assert sum(gp["last_qs"].values()) == len(v.gps)
    lengths = np.sort((v.gps.t_end_ns - v.gps.t_start_ns).to_numpy()) / 1e3
    assert gp["length_us"]["max"] == pytest.approx(lengths[-1], abs=1e-3)


# --- the early-report patch --------------------------------------------------
@pytest.mark.parametrize("release, patches", [("7.0", []), ("6.12", ["rcu-gp-kthread-cpu-qs-early"])])
def test_early_report_needs_one_scan(release, patches):
    """From v7.0, or backported, rcu_gp_init() reports its own CPU: even with the timer
    pulled elsewhere, the first scan, which reports the idle CPUs, ends the GP."""
    v = only_variant(traced(lone_caller(release, patches=patches)))
    gps = v.gps[~v.gps.expedited]
    assert (gps.fqs_scans == 1).all()
    assert (gps.last_qs != LAST_QS["gp_kthread_cpu"]).all()
    f = trace.trace_frame(v)
    for seq, t0 in zip(gps.gp_seq, gps.t_start_ns):
        own = f[(f.event == "qs") & (f.cpu == GP_CPU) & (f.gp_seq == seq)]
        scan = f[(f.event == "gp_fqs_start") & (f.gp_seq == seq)].t_ns.iloc[0]
        assert len(own) == 1 and own.arg.iloc[0] == 0 and t0 <= own.t_ns.iloc[0] < scan


# --- no cpuidle driver: the idle loop's tick after f4c31b07b136 ----------------
def guest_caller(release: str, patches=()) -> dict:
    """One caller on CPU 1 of an idle 8-vCPU QEMU guest, which has no cpuidle driver."""
    return {"name": "guest", "seed": 0, "hardware": {"profile": "qemu-tcg", "nr_cpus": 8},
            "kernel": {"release": release, "HZ": 1000, "patches": list(patches)},
            "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 20, "primitive": "synchronize_rcu",
                           "cpus": "1"}]}


@pytest.mark.parametrize("release, patches, scans", [("6.12", [], 2),
                                                     ("6.12", ["sched-idle-consolidate-special-cases"], 1)])
def test_without_a_driver_the_gp_cpu_keeps_one_tick(release, patches, scans):
    """Without a cpuidle driver, v6.9-v6.19 stop the tick as the GP kthread's CPU goes idle:
    the FQS timer is pulled to the caller's CPU and the second scan reports it. From
    f4c31b07b136 (v7.0, 6.12.78) that CPU keeps its tick to the next jiffy, whose handler
    reports the QS noted at the kthread's switch, before the first scan. (v7.0 reports it
    earlier still, at the end of rcu_gp_init(): test_early_report_needs_one_scan.)"""
    v = only_variant(traced(guest_caller(release, patches)))
    gps = v.gps[~v.gps.expedited]
    assert (gps.fqs_scans == scans).all()
    f = trace.trace_frame(v)
    for seq, t0 in zip(gps.gp_seq, gps.t_start_ns):
        own = f[(f.event == "qs") & (f.cpu == GP_CPU) & (f.gp_seq == seq)]
        first_scan = f[(f.event == "gp_fqs_start") & (f.gp_seq == seq)].t_ns.iloc[0]
        assert len(own) == 1
        if scans == 1:  # the tick of the jiffy after the GP started, from the CPU itself
            assert own.arg.iloc[0] == 0 and own.t_ns.iloc[0] < first_scan
            assert own.t_ns.iloc[0] // 1_000_000 == t0 // 1_000_000 + 1
        else:
            assert own.arg.iloc[0] == 1 and own.t_ns.iloc[0] > first_scan


def test_a_patch_is_refused_where_its_code_is_missing_and_noted_where_the_release_has_it():
    with pytest.raises(ScenarioError, match="rcu-gp-kthread-cpu-qs-early"):
        load_scenario(lone_caller("3.6", patches=["rcu-gp-kthread-cpu-qs-early"]))
    with pytest.raises(ScenarioError, match="not a patch"):
        load_scenario(lone_caller("6.12", patches=["rcu-make-it-fast"]))
    (note,) = load_scenario(lone_caller("7.0", patches=["rcu-gp-kthread-cpu-qs-early"])).notes
    assert "rcu-gp-kthread-cpu-qs-early is already in release 7.0" in note


# --- a GP kthread that never sleeps -----------------------------------------
def test_back_to_back_gps_yield_the_cpu_at_cond_resched():
    """On one CPU with v7.0's early report of the GP kthread's CPU, every GP ends
    inside rcu_gp_init(), so with callers queuing requests the kthread never
    sleeps. Without CONFIG_PREEMPTION its cond_resched_tasks_rcu_qs() calls are
    the only place the callers it woke can run: without them the run livelocks."""
    data = {"name": "one_cpu_back_to_back", "seed": 1,
            "hardware": {"profile": "amd-threadripper-3970x", "nr_cpus": 1},
            "kernel": {"release": "7.0", "HZ": 100, "CONFIG_PREEMPTION": False, "CONFIG_PREEMPT_RCU": False,
                       "CONFIG_RCU_NOCB_CPU": True, "CONFIG_RCU_LAZY": False,
                       "bootargs": "rcu_nocbs=all rcutree.rcu_normal_wake_from_gp=1"},
            "workloads": [{"kind": "sync_loop", "tasks": 200, "loops": 20, "think_us": 1000, "pinned": False},
                          {"kind": "sync_loop", "tasks": 8, "loops": 3,
                           "primitive": "synchronize_rcu_expedited"}],
            "run": {"max_sim_time_s": 60}}
    v = only_variant(run_scenario(load_scenario(data), progress=False))
    assert v.metrics["completion_time_s"] is not None  # finished, not stopped by max_sim_time_s
    assert v.request_count == 200 * 20 + 8 * 3



def test_a_periodic_tick_reports_idle_cpus_before_any_fqs_scan():
    """CONFIG_HZ_PERIODIC without PREEMPT_RCU: idle CPUs keep their tick, and
    rcu_sched_clock_irq() from idle (rcu_is_cpu_rrupt_from_idle()) reports their quiescent
    state, so GPs end a tick or two after they start, without waiting for the FQS scan."""
    jiffy_ns = 1_000_000
    flavour = {"CONFIG_PREEMPT_RCU": False, "CONFIG_PREEMPTION": False}
    nohz = only_variant(run_scenario(load_scenario(lone_caller("7.0", loops=50, **flavour)), progress=False))
    periodic = only_variant(run_scenario(load_scenario(lone_caller("7.0", loops=50, CONFIG_HZ_PERIODIC=True,
                                                                   **flavour)), progress=False))
    assert periodic.metrics["normal_gp"]["fqs_scans"]["mean"] == 0
    assert nohz.metrics["normal_gp"]["fqs_scans"]["mean"] == 1
    # At most two ticks, and the wake-up of a CPU from the deepest idle state.
    assert (periodic.gps.t_end_ns - periodic.gps.t_start_ns).max() <= 2 * jiffy_ns + DEEPEST_EXIT_NS
    # Every CPU takes every tick: 64 CPUs for the whole run.
    assert periodic.counters["ticks"] >= 0.99 * 64 * periodic.completion_time_ns / jiffy_ns


def test_under_preempt_rcu_an_idle_cpus_tick_is_no_quiescent_state():
    """PREEMPT_RCU: the idle task runs with preemption disabled, so rcu_flavor_sched_clock_irq()
    sees no QS in an idle CPU's tick; with a periodic tick the idle CPUs are still reported
    by the first FQS scan (their EQS), not by their ticks."""
    periodic = only_variant(traced(lone_caller("7.0", loops=20, CONFIG_HZ_PERIODIC=True)))
    gps = periodic.gps[~periodic.gps.expedited]
    assert (gps.fqs_scans == 1).all()
    f = trace.trace_frame(periodic)
    idle_cpus = f[(f.event == "qs") & ~f.cpu.isin([GP_CPU, 5])]
    assert len(idle_cpus) and (idle_cpus.arg == 1).all()  # each reported by a scan
