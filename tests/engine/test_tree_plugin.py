"""cython_core/tree_plugin.pxi: preemptible RCU's read side (kernel/rcu/tree_plugin.h): read-side
critical sections, a reader preempted inside one queued on its leaf's blkd_tasks
(rcu_preempt_ctxt_queue()) until its rcu_read_unlock() reports it (rcu_report_unblock_qs_rnp()).

Readers of 20 ms on 4 CPUs, preempted by SCHED_FIFO synchronize_rcu() callers on the same
CPUs; the safety checker's Reader Pipe counts how many grace-period ends each reader spanned."""

from __future__ import annotations

from rcusim.engine.simulate import build_engine
from rcusim.input.scenario import load_scenario


def readers_and_rt_callers(preempt_rcu: bool = True, fault: str | None = None) -> tuple[dict, dict]:
    """The engine's counters and the safety checker's findings after the run."""
    kernel = {"release": "6.12", "HZ": 1000}
    if not preempt_rcu:
        kernel.update(CONFIG_PREEMPT_RCU=False, CONFIG_PREEMPTION=False)
    data = {"name": "readers", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4}, "kernel": kernel,
            "workloads": [{"kind": "sync_loop", "tasks": 8, "loops": 50, "rt": True, "think_us": 100, "cpus": "0-3"},
                          {"kind": "readers", "cpus": "0-3", "length_us": 20000, "rate_per_s": 25,
                           "between": "busy"}]}
    eng, _ = build_engine(load_scenario(data).variants["default"], 0, fault=fault)
    eng.run(10**12, 10**9)
    return eng.counters(), eng.safety()


def test_a_preempted_reader_holds_the_grace_period_until_its_rcu_read_unlock():
    """CONFIG_PREEMPT_RCU: a reader preempted inside its section goes on its leaf's blkd_tasks
    (rcu_preempt_ctxt_queue()), and the grace period that began before it waits for it
    (rnp->gp_tasks) although its CPU's context switch was a quiescent state; so a reader may
    span one grace-period end, never two. Dropped from blkd_tasks (the fault
    blkd-reader-dropped), a preempted reader lets grace periods end under it."""
    counters, safety = readers_and_rt_callers()
    assert counters["readers_preempted"] > 10
    assert safety["readers_checked"] > 100
    assert safety["reader_pipe_normal"][1] > 0 and safety["reader_pipe_normal"][2] == 0
    assert safety["violations"] == 0
    _, broken = readers_and_rt_callers(fault="blkd-reader-dropped")
    assert broken["reader_pipe_normal"][2] > 0


def test_without_preempt_rcu_a_reader_is_never_preempted():
    """!CONFIG_PREEMPT_RCU: rcu_read_lock() is preempt_disable(); the SCHED_FIFO callers woken on
    a reader's CPU wait for its rcu_read_unlock(), so no reader is ever preempted inside its
    section (none goes on blkd_tasks), and none spans two grace-period ends either."""
    counters, safety = readers_and_rt_callers(preempt_rcu=False)
    assert counters["readers_preempted"] == 0
    assert safety["readers_checked"] > 100 and safety["reader_pipe_normal"][2] == 0
    assert readers_and_rt_callers()[0]["readers_preempted"] > 0  # the same load, preemptible
