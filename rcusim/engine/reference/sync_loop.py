"""The sync_loop workload: tasks calling synchronize_rcu() or synchronize_rcu_expedited() in a
loop (rcuscale's writers too); mirrors cython_core/sync_loop.pxi."""

from __future__ import annotations

from rcusim.engine.reference.sched import SLEEP, YIELD, sched_set_normal, try_to_wake_up
from rcusim.engine.reference.tree_callbacks import call_rcu
from rcusim.engine.reference.tree_exp import synchronize_rcu_expedited
from rcusim.engine.reference.tree_sr_normal import synchronize_rcu_normal


def sync_loop(sim, task, think_ns: int, after_ns: int):
    """Body of one task: think in user mode, synchronize_rcu*(), work after, repeat.

    One step covers the work after the previous call, the think time and the
    entry path; the call itself happens at the end of that step.  The request
    runs from the start of the entry path until the task is back on its CPU.
    A user task's system call exits after the work (exit_to_user_mode()): a
    need_resched set meanwhile switches it out there, still runnable.
    """
    p = sim.inp
    cpu = task.cpu
    expedited = task.primitive == 1
    entry_ns = p.sync_loop.sync_entry_ns
    if not expedited and not p.tree_sr_normal.wake_from_gp:
        entry_ns += p.tree_callbacks.call_rcu_ns
    work = 0
    t0 = yield SLEEP  # woken at its start time
    w = task.workload
    runtime = int(p.sync_loop.runtime_jiffies[w])
    jiffy = p.sched.jiffy_ns
    # jdone = jiffies + minruntime * HZ: the task may end once time_after(jiffies, jdone).
    end_ns = (sim.env.now // jiffy + runtime + 1) * jiffy if runtime >= 0 else 0
    returned = False
    while True:
        if returned and not task.per_cpu_kthread:
            t0 = yield work  # the system call exits
            work = 0
            if cpu.need_resched:
                t0 = yield YIELD
        # Think time runs in user mode: a tick there sees a quiescent state.
        cpu.user_from, cpu.user_to = t0 + work, t0 + work + think_ns
        t = yield work + think_ns + entry_ns
        task.loops_left -= 1
        task.t_call = t - entry_ns
        if expedited:
            t0 = yield from synchronize_rcu_expedited(sim, task)
        else:
            with sim.action(cpu):
                if p.tree_sr_normal.wake_from_gp:
                    synchronize_rcu_normal(sim, task, cpu)
                else:
                    # wait_rcu_gp(call_rcu_hurry): wakeme_after_rcu behind other callbacks.
                    call_rcu(sim, cpu, task)
            t0 = yield SLEEP  # wait_for_completion()
        sim.record_request(task, t0)
        work = after_ns
        returned = True
        if task_leaves(sim, task, t0 >= end_ns, t0):
            break
    sim.completion_ns = max(sim.completion_ns, t0 + work)
    yield work
    sim.task_exited()


def task_leaves(sim, task, past_runtime: bool, t: int) -> bool:
    """Whether the task leaves its loop after this call, which returns at t. Once it has made
    its calls and is past its minimum run time it is done and a plain task leaves; an
    until_all_done task (rcu_scale_writer()) turns SCHED_NORMAL (sched_set_normal()) and
    leaves once every task of its workload is done (alldone), the last one to be done at
    once; a task counts as done from its return (the engine's task_leaves())."""
    w = task.workload
    if not task.done and task.loops_left <= 0 and past_runtime:
        task.done = True
        sim.wl_unfinished[w] -= 1
        sim.wl_done_ns[w] = max(sim.wl_done_ns[w], t)
        if sim.inp.sync_loop.until_all_done[w]:
            sched_set_normal(sim, task)
    if not task.done:
        return False
    return not sim.inp.sync_loop.until_all_done[w] or (sim.wl_unfinished[w] == 0 and t >= sim.wl_done_ns[w])


def futex_wake_release(sim, parent, tasks):
    """A workload's parent thread, the last to arrive at its tasks' barrier: futex_wake()
    wakes them one by one, each try_to_wake_up() its time, then it sleeps for good
    (sync_loop.pxi's pthread_barrier_release_next() and futex_wake_next(); the reference's
    tasks are pinned, so none is placed)."""
    t = yield SLEEP
    for task in tasks:
        t = yield try_to_wake_up(sim, task, parent.cpu, t, sim.inp.sched.ttwu_ns)
