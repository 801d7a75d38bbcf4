"""synchronize_rcu() woken from the grace-period kthread (rcutree.rcu_normal_wake_from_gp=1,
kernel/rcu/tree.c, v6.9 and later); mirrors cython_core/tree_sr_normal.pxi.

synchronize_rcu() callers wait on the srs_* lists instead of queuing a callback:
rcu_gp_init() claims the waiters queued so far for the new GP, and rcu_gp_cleanup()
wakes the first SR_MAX_USERS_WAKE_FROM_GP of them itself and hands the rest to a
kworker.  The GP kthread is woken through the model's ``rcu_gp_kthread_wake`` hook
(tree_gp.py imports this module).
"""

from __future__ import annotations

from collections import deque

from rcusim._seq import rcu_seq_snap
from rcusim.engine.reference import placement
from rcusim.engine.reference.sched import BLOCKED, SLEEP, try_to_wake_up, wake, wake_from_acc
from rcusim.engine.reference.tree import rcu_start_this_gp, rnp_lock

SR_NORMAL_GP_WAIT_HEAD_MAX = 5   # wait heads: GPs with claimed waiters not yet all woken
SR_MAX_USERS_WAKE_FROM_GP = 5    # waiters the GP kthread wakes itself


def synchronize_rcu_normal(sim, task, cpu) -> None:
    """rcu_sr_normal_add_req() then start_poll_synchronize_rcu()."""
    sim.srs_next.append(task)
    leaf = cpu.rdp.mynode
    rnp_lock(sim, leaf)
    if rcu_start_this_gp(sim, leaf, rcu_seq_snap(sim.gp_seq)):
        sim.rcu_gp_kthread_wake(cpu)


def rcu_sr_normal_gp_init(sim) -> None:
    """Waiters queued so far belong to the GP starting now, if a wait head is free."""
    if not sim.srs_next or sim.srs_heads_inuse >= SR_NORMAL_GP_WAIT_HEAD_MAX:
        return
    sim.srs_heads_inuse += 1
    sim.srs_wait, sim.srs_next = sim.srs_next, deque()


def rcu_sr_normal_gp_cleanup(sim) -> None:
    """Wake a few of this GP's waiters here; the rest go to the kworker."""
    if not sim.srs_wait:
        return
    waiters, sim.srs_wait = sim.srs_wait, deque()
    gp_cpu = sim.gp_kthread.cpu
    for _ in range(min(SR_MAX_USERS_WAKE_FROM_GP, len(waiters))):
        wake_from_acc(sim, waiters.popleft(), gp_cpu, sim.inp.tree_callbacks.cb_wakeme_ns)
    if not waiters and not sim.srs_done_heads:
        sim.srs_heads_inuse -= 1
        return
    # The rest, and this GP's wait head, go to rcu_sr_normal_gp_cleanup_work().
    sim.srs_done_heads += 1
    sim.srs_done.extend(waiters)
    # queue_work() on the per-CPU sync_wq: the GP kthread's CPU's pool, unless the
    # work item still runs elsewhere (__queue_work()'s non-reentrancy check).
    if sim.sr_worker.state == BLOCKED:
        placement.set_task_cpu(sim, sim.sr_worker, gp_cpu)
    wake(sim, sim.sr_worker, gp_cpu, sim.env.now + sim.acc)


def rcu_sr_normal_gp_cleanup_work(sim, worker):
    """Body of the kworker completing every waiter handed over."""
    t0 = yield SLEEP
    while True:
        waiters, sim.srs_done = sim.srs_done, deque()
        t = t0
        for task in waiters:
            t += try_to_wake_up(sim, task, worker.cpu, t, sim.inp.tree_callbacks.cb_wakeme_ns)
        sim.srs_heads_inuse -= sim.srs_done_heads
        sim.srs_done_heads = 0
        t0 = yield t - t0
        if not sim.srs_done and not sim.srs_done_heads:
            t0 = yield SLEEP
