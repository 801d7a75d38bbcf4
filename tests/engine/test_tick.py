"""cython_core/tick.pxi: the scheduling-clock tick: periodic on a busy CPU, stopped on an idle one
unless RCU needs it (rcu_needs_cpu(): callbacks not offloaded) or CONFIG_HZ_PERIODIC keeps it;
each tick runs rcu_sched_clock_irq()."""

from __future__ import annotations

import rcusim
from rcusim.input.scenario import load_scenario
from rcusim.results.run import run_scenario

from tests.engine.conftest import DEEPEST_EXIT_NS, lone_caller, only_variant, sync_rcu_dict as scenario_dict


def test_softirq_callbacks_keep_the_tick_and_need_no_fqs():
    # Without offloading, CPUs with queued callbacks keep their tick
    # (rcu_needs_cpu()), so quiescent states arrive by tick and the FQS scan
    # rarely has anything to do.
    r = rcusim.run(scenario_dict(CONFIG_RCU_NOCB_CPU=False, bootargs=""), variants=["default"])
    c = r.variants["default"].counters
    assert c["ticks"] > 0
    assert c["callbacks_invoked"] == 1000 * 20
    assert c["bypass_enqueues"] == 0


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
