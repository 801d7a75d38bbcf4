"""cython_core/tree_gp.pxi: the grace-period kthread: rcu_gp_init() (from v7.0 reporting its own
CPU), the FQS loop on its timer, rcu_gp_cleanup(), and its cond_resched() between GPs."""

from __future__ import annotations

import numpy as np
import pytest

from rcusim.input.scenario import load_scenario
from rcusim.results import trace
from rcusim.results.run import run_scenario

from tests.engine.conftest import GP_CPU, LAST_QS, lone_caller, only_variant, traced


@pytest.mark.parametrize("variant", ["default", "wake_from_gp"])
def test_grace_period_length_is_set_by_the_fqs_scans(small_result, variant):
    # 64 NOCB CPUs that are idle most of the time and stop their tick: idle CPUs
    # are reported by the FQS scans, the first jiffies_till_first_fqs = 3 jiffies
    # (3 ms at HZ=1000) after gp_init, the next 3 jiffies later.  So a GP lasts
    # between (3 - 1) ms (timer on the next jiffy boundary) and two scans (6 ms)
    # plus the init/cleanup walks.
    gps = small_result.variants[variant].gps
    median_ms = np.median((gps["t_end_ns"] - gps["t_start_ns"]).to_numpy()) / 1e6
    assert 2.0 <= median_ms <= 6.5


def test_same_seed_same_grace_periods():
    a = only_variant(run_scenario(load_scenario(lone_caller("6.12")), progress=False))
    b = only_variant(run_scenario(load_scenario(lone_caller("6.12")), progress=False))
    assert a.gps.equals(b.gps)


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
