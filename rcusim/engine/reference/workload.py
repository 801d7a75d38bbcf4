"""The sync_loop workload: tasks calling synchronize_rcu() or synchronize_rcu_expedited() in a loop."""

from __future__ import annotations

from rcusim.engine.reference.core import call_rcu
from rcusim.engine.reference.exp import synchronize_rcu_expedited
from rcusim.engine.reference.gp import synchronize_rcu_normal
from rcusim.engine.reference.sched import SLEEP


def sync_loop(sim, task, think_ns: int, after_ns: int):
    """Body of one task: think in user mode, synchronize_rcu*(), work after, repeat.

    One step covers the work after the previous call, the think time and the
    entry path; the call itself happens at the end of that step.  The request
    runs from the start of the entry path until the task is back on its CPU.
    """
    p = sim.inp
    cpu = task.cpu
    expedited = task.primitive == 1
    entry_ns = p.tasks.sync_entry_ns
    if not expedited and not p.sr_normal.wake_from_gp:
        entry_ns += p.core.call_rcu_ns
    work = 0
    t0 = yield SLEEP  # woken at its start time
    while True:
        # Think time runs in user mode: a tick there sees a quiescent state.
        cpu.user_from, cpu.user_to = t0 + work, t0 + work + think_ns
        t = yield work + think_ns + entry_ns
        task.loops_left -= 1
        task.t_call = t - entry_ns
        if expedited:
            t0 = yield from synchronize_rcu_expedited(sim, task)
        else:
            with sim.action(cpu):
                if p.sr_normal.wake_from_gp:
                    synchronize_rcu_normal(sim, task, cpu)
                else:
                    # wait_rcu_gp(call_rcu_hurry): wakeme_after_rcu behind other callbacks.
                    call_rcu(sim, cpu, task)
            t0 = yield SLEEP  # wait_for_completion()
        sim.record_request(task, t0)
        work = after_ns
        if not task.loops_left:
            break
    sim.completion_ns = max(sim.completion_ns, t0 + work)
    yield work
    sim.task_exited()
