"""The sync_loop workload: tasks calling synchronize_rcu() or synchronize_rcu_expedited() in a loop."""

from __future__ import annotations

from rcusim.engine.reference.core import call_rcu
from rcusim.engine.reference.exp import synchronize_rcu_expedited
from rcusim.engine.reference.gp import synchronize_rcu_normal
from rcusim.engine.reference.sched import RQ_NORMAL, RQ_RT, SLEEP
from rcusim.kernel.fair import NICE_0_LOAD, POLICY_CFS, POLICY_EEVDF, POLICY_RR


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
    w = task.workload
    runtime = int(p.tasks.runtime_jiffies[w])
    jiffy = p.sched.jiffy_ns
    # jdone = jiffies + minruntime * HZ: the task may end once time_after(jiffies, jdone).
    end_ns = (sim.env.now // jiffy + runtime + 1) * jiffy if runtime >= 0 else 0
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
        if sim.inp.tasks.until_all_done[w]:
            sched_set_normal(sim, task)
    if not task.done:
        return False
    return not sim.inp.tasks.until_all_done[w] or (sim.wl_unfinished[w] == 0 and t >= sim.wl_done_ns[w])


def sched_set_normal(sim, task) -> None:
    """sched_set_normal(current, 0) by the running SCHED_FIFO task: out of the RT class, into
    the fair class at nice 0, placed (lag 0) before it is the class's current entity, then
    set_next_entity(); switched_to_fair()'s reschedule picks it again (eligible at V under
    EEVDF's RUN_TO_PARITY; at min_vruntime, leftmost, under CFS)."""
    if task.rq != RQ_RT:
        return
    cfs = task.cpu.cfs
    task.weight = NICE_0_LOAD
    task.vlag = 0
    task.initial = False
    if cfs.policy == POLICY_EEVDF:
        cfs.place(task)  # still RT: not counted as the running fair entity
        task.vlag = task.deadline  # RUN_TO_PARITY's mark
    elif cfs.policy == POLICY_CFS:
        task.vruntime = cfs.min_vruntime
    task.rq = RQ_NORMAL
    task.fair = sim.inp.sched.fair_policy != POLICY_RR  # before CFS: the round-robin list
    task.exec_start = sim.env.now
    task.prev_sum_exec = task.sum_exec
