"""The grace-period kthread and synchronize_rcu() woken from it.

rcu_gp_kthread() sleeps until a grace period is requested, then runs one:
rcu_gp_init() (the ONOFF and INIT walks over the rcu_node tree),
rcu_gp_fqs_loop() (force-quiescent-state scans every jiffies_till_*_fqs
until the root's qsmask is empty) and rcu_gp_cleanup() (the cleanup walk,
which ends gp_seq).  Each walk costs one rnp->lock round per node it visits
and takes effect when it completes.

With rcutree.rcu_normal_wake_from_gp=1, synchronize_rcu() callers wait on the
srs_* lists instead of queuing a callback: rcu_gp_init() claims the waiters
queued so far for the new GP, and rcu_gp_cleanup() wakes the first
SR_MAX_USERS_WAKE_FROM_GP of them itself and hands the rest to a kworker.
"""

from __future__ import annotations

from collections import deque

from rcusim._core import LAST_QS_KINDS as LAST_QS
from rcusim._seq import rcu_seq_endval, rcu_seq_snap
from rcusim.engine.reference.core import note_gp_changes, rcu_need_resched, rcu_report_qs_rdp
from rcusim.kernel.timer import timer_expiry_jiffy
from rcusim.engine.reference.sched import BLOCKED, CPU_BUSY, SLEEP, try_to_wake_up, urgent_at, wake, wake_from_acc
from rcusim.engine.reference import placement
from rcusim.engine.reference.tree import (RCU_GP_FLAG_FQS, RCU_GP_FLAG_INIT, raw_spin_lock_rcu_node, rcu_report_qs_rnp,
                                          rcu_start_this_gp)

RCU_GP_IDLE, RCU_GP_WAIT_FQS = 0, 5
SR_NORMAL_GP_WAIT_HEAD_MAX = 5   # wait heads: GPs with claimed waiters not yet all woken
SR_MAX_USERS_WAKE_FROM_GP = 5    # waiters the GP kthread wakes itself
TMIGR_CHILDREN_PER_GROUP = 8     # kernel/time/timer_migration.h


def rcu_gp_kthread(sim):
    """Body of the rcu_preempt / rcu_sched kthread."""
    lock_ns = sim.inp.tree.rnp_lock_ns
    yield SLEEP
    while True:
        # RCU_GP_WAIT_GPS
        yield from swait_event(sim, lambda: sim.gp_flags & RCU_GP_FLAG_INIT)
        # ONOFF over the leaves, then INIT over every node, root first.
        yield (len(sim.leaves) + len(sim.nodes)) * lock_ns
        with sim.action(sim.gp_kthread.cpu, gp_kthread=True):
            rcu_gp_init(sim)
            sim.gp_state = RCU_GP_WAIT_FQS
        yield from rcu_gp_fqs_loop(sim)
        yield len(sim.nodes) * lock_ns
        with sim.action(sim.gp_kthread.cpu, gp_kthread=True):
            rcu_gp_cleanup(sim)
            sim.gp_state = RCU_GP_IDLE


def swait_event(sim, cond):
    """Sleep until cond() holds; a wake-up that finds it false costs an empty step."""
    while not cond():
        yield SLEEP
        if not cond():
            yield 0


def rcu_gp_fqs_loop(sim):
    """Scan for holdouts every jiffies_till_*_fqs until the root's qsmask is empty."""
    root = sim.nodes[0]
    first = True
    rcu_gp_fqs_timer(sim, sim.inp.gp.jiffies_till_first_fqs)
    while True:
        # RCU_GP_WAIT_FQS: the timeout, or rcu_report_qs_rsp() setting FQS.
        yield from swait_event(sim, lambda: not root.qsmask or sim.gp_flags & RCU_GP_FLAG_FQS
                               or sim.env.now >= sim.fqs_deadline)
        if not root.qsmask:
            return
        # RCU_GP_DOING_FQS: a lock round per leaf and per CPU still owing a QS.
        holdouts = sum(bin(rnp.qsmask).count("1") for rnp in sim.leaves)
        yield (len(sim.leaves) + holdouts) * sim.inp.tree.rnp_lock_ns
        with sim.action(sim.gp_kthread.cpu, gp_kthread=True):
            force_qs_rnp(sim, first)
            sim.gp_flags &= ~RCU_GP_FLAG_FQS
            rcu_gp_fqs_timer(sim, sim.inp.gp.jiffies_till_next_fqs)
        first = False


def rcu_gp_fqs_timer(sim, j: int) -> None:
    """jiffies_force_qs = jiffies + j, and the WAIT_FQS timeout on the timer wheel."""
    s = sim.inp.sched
    clk = sim.env.now // s.jiffy_ns
    sim.fqs_deadline = (clk + j) * s.jiffy_ns
    expiry = timer_expiry_jiffy(clk, clk + j, 1_000_000_000 // s.jiffy_ns, bool(s.timer_wheel_round))
    sim.gp_timer_gen += 1
    sim.gp_timer_cpu = sim.gp_kthread.cpu  # schedule_timeout() arms it on the kthread's CPU
    sim.gp_timer_expires = expiry * s.jiffy_ns
    gen = sim.gp_timer_gen
    sim.env.timeout(expiry * s.jiffy_ns - sim.env.now).callbacks.append(lambda _ev: rcu_gp_fqs_timeout(sim, gen))


def rcu_gp_fqs_timeout(sim, gen: int) -> None:
    """process_timeout(), from the CPU whose interrupt expires the timer."""
    if gen != sim.gp_timer_gen or sim.gp_state != RCU_GP_WAIT_FQS:
        return  # re-armed or no longer waiting
    cpu = timer_expiry_cpu(sim, sim.gp_timer_cpu)
    cpu.timer_tick()
    if sim.gp_kthread.state == BLOCKED:
        sim.acc = 0
        wake(sim, sim.gp_kthread, cpu, sim.env.now)


def timer_expiry_cpu(sim, cpu):
    """The CPU whose interrupt expires a non-pinned timer armed on `cpu`.

    Before v6.9, `cpu` itself. From v6.9 a NO_HZ-idle `cpu` leaves it to the
    timer-migration hierarchy: the lowest-numbered active CPU of the nearest
    enclosing group of 8, 64, ... CPUs, or with every CPU idle the last one
    to go idle.
    """
    if not sim.inp.sched.timer_pull or not cpu.tick_stopped():
        return cpu
    size = TMIGR_CHILDREN_PER_GROUP
    while True:
        lo = cpu.index // size * size
        group = sim.cpus[lo:lo + size]
        for other in group:
            if other is not cpu and not other.tick_stopped():
                return other
        if len(group) == len(sim.cpus):
            return sim.last_idle_cpu
        size *= TMIGR_CHILDREN_PER_GROUP


def rcu_gp_kthread_wake(sim, cpu) -> None:
    """Wake the GP kthread for gp_flags from code running on cpu (swake_up_one()'s
    try_to_wake_up() from there), unless it is the caller."""
    if sim.in_gp_kthread or not sim.gp_flags:
        return
    if sim.gp_kthread.state == BLOCKED:
        sim.counters["gp_kthread_wakeups"] += 1
        wake(sim, sim.gp_kthread, cpu, sim.env.now + sim.acc)


def rcu_gp_init(sim) -> None:
    """Start gp_seq and set every node's qsmask from qsmaskinit."""
    sim.gp_flags = 0
    sim.gp_start = sim.env.now
    sim.gp_nfqs = 0
    sim.gp_last_qs = -1
    rcu_sr_normal_gp_init(sim)
    sim.gp_seq += 1  # rcu_seq_start()
    for rnp in sim.nodes:
        rnp.qsmask = rnp.qsmaskinit
        rnp.gp_seq = sim.gp_seq
    rdp = sim.gp_kthread.cpu.rdp
    note_gp_changes(sim, rdp)
    if sim.inp.gp.gp_init_report_qs:
        # rcu_qs() and rcu_report_qs_rdp(): no first scan can see this CPU idle.
        rdp.cpu_no_qs = False
        rcu_report_qs_rdp(sim, rdp)
    if sim.srs_next:
        # Every wait head is busy: these waiters need another GP.
        rcu_start_this_gp(sim, sim.gp_kthread.cpu.rdp.mynode, rcu_seq_snap(sim.gp_seq))


def force_qs_rnp(sim, first: bool) -> None:
    """rcu_gp_fqs(): report CPUs seen in an extended QS, nudge the others.

    The first scan snapshots each holdout's rcu_watching counter
    (rcu_watching_snap_save); later scans report a CPU that is idle or has
    passed through idle since (rcu_watching_snap_recheck), and ask the rest
    for an urgent QS, then with a resched IPI.
    """
    age = (sim.env.now - sim.gp_start) // sim.inp.sched.jiffy_ns
    sim.counters["fqs_scans"] += 1
    sim.gp_nfqs += 1
    for rnp in sim.leaves:
        mask = 0
        for bit in range(rnp.qsmask.bit_length()):
            if not rnp.qsmask >> bit & 1:
                continue
            cpu = sim.cpus[rnp.grplo + bit]
            rdp = cpu.rdp
            if first:
                rdp.watching_snap = cpu.watching
                if cpu.state != CPU_BUSY:  # CPU_WAKING: still in the extended QS
                    mask |= 1 << bit
            elif cpu.state != CPU_BUSY or cpu.watching != rdp.watching_snap:
                mask |= 1 << bit
            else:
                if age > sim.inp.gp.jiffies_to_sched_qs:
                    rdp.urgent_qs = True
                if age > sim.inp.gp.jiffies_resched:
                    resched_cpu(sim, cpu)
        if mask:
            rcu_report_qs_rnp(sim, mask, rnp, rnp.gp_seq, fqs_qs_src(sim, rnp, mask), sim.gp_kthread.cpu)


def fqs_qs_src(sim, rnp, mask: int) -> int:
    """Whose report a scan makes for the CPUs of mask at leaf rnp (``LAST_QS_KINDS``)."""
    gp_rdp = sim.gp_kthread.cpu.rdp
    if gp_rdp.mynode is rnp and mask & gp_rdp.grpmask:
        return LAST_QS["gp_kthread_cpu"]
    busy = any(mask >> bit & 1 and sim.cpus[rnp.grplo + bit].state == CPU_BUSY for bit in range(mask.bit_length()))
    return LAST_QS["busy_cpu"] if busy else LAST_QS["idle_cpu"]


def resched_cpu(sim, cpu) -> None:
    """An IPI setting need_resched: the context switch it forces is a quiescent state."""
    sim.counters["resched_ipis"] += 1

    def ipi(_ev):
        if cpu.state == CPU_BUSY:
            sim.acc = 0
            rcu_need_resched(sim, cpu)
            cpu.steal(sim.acc)

    urgent_at(sim, sim.env.now + sim.inp.sched.ipi_latency_ns, ipi)


def rcu_gp_cleanup(sim) -> None:
    """End gp_seq node by node; start another GP if one was requested meanwhile."""
    new = rcu_seq_endval(sim.gp_seq)
    needgp = False
    rdp = sim.gp_kthread.cpu.rdp
    for rnp in sim.nodes:
        rnp.gp_seq = new
        if rnp is rdp.mynode:
            # Before rcu_future_gp_cleanup(), which must see the GP this requests
            # for the kthread's own callbacks (rcu_state.gp_seq has not ended yet,
            # so rcu_start_this_gp() only records it in gp_seq_needed).
            note_gp_changes(sim, rdp)
        # rcu_future_gp_cleanup()
        if new < rnp.gp_seq_needed:
            needgp = True
        else:
            rnp.gp_seq_needed = new
    sim.record_gp(sim.gp_seq, sim.gp_start, sim.gp_qs_t, sim.env.now, fqs_scans=sim.gp_nfqs,
                  last_qs=sim.gp_last_qs)
    sim.gp_seq = new  # rcu_seq_end()
    rcu_sr_normal_gp_cleanup(sim)
    if needgp:
        sim.gp_flags |= RCU_GP_FLAG_INIT


# --- rcutree.rcu_normal_wake_from_gp=1 --------------------------------------
def synchronize_rcu_normal(sim, task, cpu) -> None:
    """rcu_sr_normal_add_req() then start_poll_synchronize_rcu()."""
    sim.srs_next.append(task)
    leaf = cpu.rdp.mynode
    raw_spin_lock_rcu_node(sim, leaf)
    if rcu_start_this_gp(sim, leaf, rcu_seq_snap(sim.gp_seq)):
        rcu_gp_kthread_wake(sim, cpu)


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
        wake_from_acc(sim, waiters.popleft(), gp_cpu, sim.inp.core.cb_wakeme_ns)
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
            t += try_to_wake_up(sim, task, worker.cpu, t, sim.inp.core.cb_wakeme_ns)
        sim.srs_heads_inuse -= sim.srs_done_heads
        sim.srs_done_heads = 0
        t0 = yield t - t0
        if not sim.srs_done and not sim.srs_done_heads:
            t0 = yield SLEEP
