"""Expedited grace periods (kernel/rcu/tree_exp.h), as in kernels since v4.17; mirrors
cython_core/tree_exp.pxi.

synchronize_rcu_expedited() takes a snapshot ``s`` of
rcu_state.expedited_sequence and climbs the rcu_node tree in
exp_funnel_lock(): a caller that finds ``s`` already requested at a node
(``rnp->exp_seq_rq``) sleeps on that node's ``exp_wq[ctr(s) & 3]``; the one
that reaches the root takes ``rcu_state.exp_mutex``, starts the GP and
queues rcu_exp_sel_wait_wake() on the kworker, then sleeps on the root's
wait queue.  The kworker resets every node's ``expmask``
(sync_exp_reset_tree()), hands each leaf but the last to that leaf's
rcu_exp_par_gp_kthread_worker and selects the last one itself: CPUs that
are idle (or the selecting CPU) are quiescent, the others get an IPI running
rcu_exp_handler().  Reports climb the tree (__rcu_report_exp_rnp()); when
the root's expmask is empty, rcu_exp_wait_wake() ends the sequence and
wakes every node's waiters for it.

Costs follow the engine: a lock round per rcu_node lock taken, the
wake-up cost per task woken, one ``ipi_send_ns`` plus one
``ipi_latency_ns`` per IPI (smp_call_function_single(wait=0) reuses the
sender's single csd, so each send waits until the previous target took its
IPI), and ``ipi_handler_ns`` on the target.
"""

from __future__ import annotations

from collections import deque

from rcusim._seq import rcu_seq_endval, rcu_seq_snap, rcu_seq_state
from rcusim.engine.reference.locking import spin_lock
from rcusim.engine.reference.sched import (BLOCKED, CPU_BUSY, PREEMPTED, SLEEP, try_to_wake_up, urgent_at,
                                            wake_from_acc)
from rcusim.engine.reference.tree import rnp_lock

EXP_IDLE, EXP_RESET, EXP_SELECT, EXP_FLUSH, EXP_WAIT, EXP_WAKE = range(6)


def exp_wq(rnp, s: int) -> deque:
    """rnp->exp_wq[rcu_seq_ctr(s) & 0x3]."""
    return rnp.exp_wq[(s >> 2) & 3]


def exp_root_done(sim) -> bool:
    root = sim.nodes[0]
    return not root.expmask


# --- the caller ------------------------------------------------------------------
# exp_funnel_lock() outcomes
GP_DONE, ON_WAITQ, MUTEX_WAIT, MUTEX_HELD = range(4)


def synchronize_rcu_expedited(sim, task):
    """The call, made at the end of the caller's current step.

    A generator for the caller's body (``yield from``); returns the time the
    call returns, when the caller's next code runs.
    """
    cpu = task.cpu
    p = sim.inp
    with sim.action(cpu):
        task.req_s = rcu_seq_snap(sim.exp_seq)  # rcu_exp_gp_seq_snap()
        outcome = exp_funnel_lock(sim, task, task.req_s)
        if outcome == GP_DONE or outcome == MUTEX_HELD and not exp_gp_start_or_done(sim, task):
            return sim.env.now + sim.acc  # a GP that ended meanwhile covers the call
    if outcome == ON_WAITQ:
        return (yield SLEEP)  # woken by rcu_exp_wait_wake()
    while outcome == MUTEX_WAIT:
        yield SLEEP
        yield p.tree.rnp_lock_ns  # mutex_lock() tries again
        with sim.action(cpu):
            if sim.exp_mutex.retry(task):
                outcome = MUTEX_HELD
                if not exp_gp_start_or_done(sim, task):
                    return sim.env.now + sim.acc
    # This task's GP runs; it sleeps on the root's exp_wq until rcu_exp_wait_wake().
    yield SLEEP
    yield p.tree.rnp_lock_ns
    with sim.action(cpu):
        sim.exp_mutex.unlock(sim, cpu)
        return sim.env.now + sim.acc


def exp_funnel_lock(sim, task, s: int) -> int:
    """Climb from the caller's leaf towards exp_mutex; returns an outcome above."""
    leaf = task.cpu.rdp.mynode
    root = sim.nodes[0]
    # Low-contention fast path straight to the mutex (it records no exp_seq_rq).
    if leaf.exp_seq_rq < s and (leaf is root or root.exp_seq_rq < s) and sim.exp_mutex.trylock(sim, task):
        return MUTEX_HELD
    rnp = leaf
    while True:
        if sim.exp_seq >= s:
            return GP_DONE
        spin_lock(sim, rnp.exp_lock)
        if rnp.exp_seq_rq >= s:
            # Someone asked for this GP already: wait for it here.
            sim.counters["exp_funnel_waits"] += 1
            exp_wq(rnp, s).append(task)
            return ON_WAITQ
        rnp.exp_seq_rq = s
        if rnp.parent < 0:
            break
        rnp = sim.nodes[rnp.parent]
    return MUTEX_HELD if sim.exp_mutex.lock(sim, task) else MUTEX_WAIT


def exp_gp_start_or_done(sim, task) -> bool:
    """Holding exp_mutex: start the GP (True), or release it if one already covered us."""
    cpu = task.cpu
    if sim.exp_seq >= task.req_s:
        sim.exp_mutex.unlock(sim, cpu)
        return False
    sim.exp_seq += 1  # rcu_exp_gp_seq_start()
    sim.exp_gp_start = sim.exp_gp_qs = sim.env.now + sim.acc
    sim.exp_gp_ipis = 0
    sim.exp_work_queued = True
    # kthread_insert_work() wakes the worker only when it is idle (no current_work).
    if sim.exp_kworker.state == BLOCKED:
        wake_from_acc(sim, sim.exp_kworker, cpu, sim.inp.sched.ttwu_ns)
    exp_wq(sim.nodes[0], task.req_s).append(task)
    return True


# --- the kworkers --------------------------------------------------------------
def rcu_exp_sel_wait_wake(sim, worker):
    """Body of rcu_exp_gp_kthread_worker: rcu_exp_sel_wait_wake() for each queued GP."""
    yield SLEEP
    while True:
        sim.exp_work_queued = False
        sim.exp_phase = EXP_RESET
        yield len(sim.nodes) * sim.inp.tree.rnp_lock_ns  # sync_exp_reset_tree()
        with sim.action(worker.cpu):
            sync_exp_reset_tree(sim)
            dur = sync_rcu_exp_select_cpus(sim, worker)
        yield dur
        with sim.action(worker.cpu):
            last = sim.leaves[-1]
            rcu_report_exp_cpu_mult(sim, last, last.exp_sel_qs, wake_gp=False)
        t = sim.env.now + sim.acc
        sim.exp_phase = EXP_FLUSH
        # kthread_flush_work() on the leaves' works, then
        # synchronize_rcu_expedited_wait() until the root's expmask is empty.
        while sim.exp_par_pending or not exp_root_done(sim):
            if not sim.exp_par_pending:
                sim.exp_phase = EXP_WAIT
            t = yield SLEEP
            if sim.exp_par_pending or not exp_root_done(sim):
                if not sim.exp_par_pending:
                    sim.exp_phase = EXP_WAIT
                t = yield 0  # woken too early: back to sleep
        sim.exp_phase = EXP_WAKE
        yield rcu_exp_wait_wake(sim, worker, t)
        sim.exp_phase = EXP_IDLE
        # kthread_worker_fn()'s cond_resched(): switched out still runnable by need_resched,
        # it looks for its next work when it runs again (the engine's kthread_worker_cond_resched()).
        if worker.cpu.need_resched:
            yield PREEMPTED
            if not sim.exp_work_queued:
                yield 0
        if not sim.exp_work_queued:
            yield SLEEP


def sync_rcu_exp_select_node_cpus(sim, worker, rnp):
    """Body of rcu_exp_par_gp_kthread_worker/N: CPU selection for one leaf."""
    t0 = yield SLEEP
    while True:
        yield exp_select_node_cpus(sim, rnp, worker.cpu, t0)
        with sim.action(worker.cpu):
            rcu_report_exp_cpu_mult(sim, rnp, rnp.exp_sel_qs, wake_gp=False)
            sim.exp_par_pending -= 1
            if not sim.exp_par_pending and sim.exp_phase == EXP_FLUSH:
                wake_from_acc(sim, sim.exp_kworker, worker.cpu, sim.inp.sched.ttwu_ns)
        t0 = yield SLEEP


def sync_exp_reset_tree(sim) -> None:
    for rnp in sim.nodes:
        rnp.expmask = rnp.expmaskinit


def sync_rcu_exp_select_cpus(sim, worker) -> int:
    """Queue each leaf's selection on its worker; select the last leaf inline.

    Returns the inline selection's duration; it starts after the queueing
    cost already in the action.
    """
    sim.exp_par_pending = 0
    sim.exp_phase = EXP_SELECT
    for rnp in sim.leaves[:-1]:
        if not rnp.expmask:
            continue
        sim.exp_par_pending += 1
        wake_from_acc(sim, rnp.exp_par_worker, worker.cpu, sim.inp.sched.ttwu_ns)
    return exp_select_node_cpus(sim, sim.leaves[-1], worker.cpu, sim.env.now + sim.acc)


def exp_select_node_cpus(sim, rnp, self_cpu, t0: int) -> int:
    """__sync_rcu_exp_select_node_cpus() on self_cpu from t0; returns its duration.

    Idle CPUs and self_cpu are quiescent (reported when the selection ends,
    from rnp.exp_sel_qs); each other CPU gets an IPI, one after another.
    """
    p = sim.inp
    t = t0 + p.tree.rnp_lock_ns
    qs = 0
    for bit in range(rnp.expmask.bit_length()):
        if not rnp.expmask >> bit & 1:
            continue
        cpu = sim.cpus[rnp.grplo + bit]
        if cpu is self_cpu or (cpu.state != CPU_BUSY and not cpu.in_irq):
            qs |= 1 << bit
            continue
        t += p.tree_exp.ipi_send_ns
        urgent_at(sim, t + p.sched.ipi_latency_ns, lambda _ev, c=cpu: ev_exp_ipi(sim, c))
        sim.counters["exp_ipis"] += 1
        sim.exp_gp_ipis += 1
        t += p.sched.ipi_latency_ns
    rnp.exp_sel_qs = qs
    return t - t0


# --- the target CPU --------------------------------------------------------------
def ev_exp_ipi(sim, cpu) -> None:
    """rcu_exp_handler(), the IPI: report now, or when the softirq section it interrupted ends."""
    rdp = cpu.rdp
    now = sim.env.now
    sim.acc = 0
    if rdp.mynode.expmask & rdp.grpmask and not rdp.exp_need_qs:
        if cpu.state != CPU_BUSY:
            rcu_report_exp_rdp(sim, cpu)  # interrupted from idle
        elif now < cpu.nonpreempt_until:
            rdp.exp_need_qs = True
            sim.counters["exp_ipis_deferred"] += 1
            if not rdp.exp_deferred_pending:
                rdp.exp_deferred_pending = True
                urgent_at(sim, cpu.nonpreempt_until, lambda _ev: ev_exp_deferred(sim, cpu))
        else:
            rcu_report_exp_rdp(sim, cpu)
    cpu.steal(sim.inp.tree_exp.ipi_handler_ns + sim.acc)


def ev_exp_deferred(sim, cpu) -> None:
    """The softirq section that deferred the expedited QS has ended."""
    rdp = cpu.rdp
    rdp.exp_deferred_pending = False
    if not rdp.exp_need_qs:
        return
    if sim.env.now < cpu.nonpreempt_until:
        rdp.exp_deferred_pending = True
        urgent_at(sim, cpu.nonpreempt_until, lambda _ev: ev_exp_deferred(sim, cpu))
        return
    sim.acc = 0
    rcu_report_exp_rdp(sim, cpu)
    cpu.steal(sim.acc)


def rcu_report_exp_rdp(sim, cpu) -> None:
    cpu.rdp.exp_need_qs = False
    rcu_report_exp_cpu_mult(sim, cpu.rdp.mynode, cpu.rdp.grpmask, wake_gp=True)


def rcu_report_exp_cpu_mult(sim, rnp, mask: int, wake_gp: bool) -> None:
    rnp_lock(sim, rnp)
    if not rnp.expmask & mask:
        return
    rnp.expmask &= ~mask
    rcu_report_exp_rnp(sim, rnp, wake_gp)


def rcu_report_exp_rnp(sim, rnp, wake_gp: bool) -> None:
    """__rcu_report_exp_rnp(): climb while nodes empty; at the root, wake the kworker."""
    while True:
        if rnp.expmask:
            return
        if rnp.parent < 0:
            if rcu_seq_state(sim.exp_seq):
                sim.exp_gp_qs = sim.env.now + sim.acc
            if wake_gp and sim.exp_phase == EXP_WAIT:
                # swake_up_one(&expedited_wq), from a CPU not tracked here
                wake_from_acc(sim, sim.exp_kworker, None, sim.inp.sched.ttwu_ns)
            return
        mask = rnp.grpmask
        rnp = sim.nodes[rnp.parent]
        rnp_lock(sim, rnp)
        if not rnp.expmask & mask:
            return
        rnp.expmask &= ~mask


def rcu_exp_wait_wake(sim, worker, t0: int) -> int:
    """rcu_seq_end(&expedited_sequence), then wake every node's waiters; returns the cost."""
    p = sim.inp
    t = t0 + p.tree.rnp_lock_ns  # exp_wake_mutex
    sim.record_gp(sim.exp_seq, sim.exp_gp_start, sim.exp_gp_qs, t, sim.exp_gp_ipis, expedited=True)
    sim.exp_seq = s = rcu_seq_endval(sim.exp_seq)
    for rnp in sim.nodes:
        t += p.tree.rnp_lock_ns  # rnp->exp_lock
        rnp.exp_seq_rq = max(rnp.exp_seq_rq, s)
        waiters = exp_wq(rnp, s)
        while waiters:
            t += try_to_wake_up(sim, waiters.popleft(), worker.cpu, t, p.sched.ttwu_ns)
    return t - t0
