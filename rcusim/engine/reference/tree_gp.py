"""The grace-period kthread (kernel/rcu/tree.c: rcu_gp_kthread()); mirrors
cython_core/tree_gp.pxi.

rcu_gp_kthread() sleeps until a grace period is requested, then runs one:
rcu_gp_init() (the ONOFF and INIT walks over the rcu_node tree),
rcu_gp_fqs_loop() (force-quiescent-state scans every jiffies_till_*_fqs
until the root's qsmask is empty) and rcu_gp_cleanup() (the cleanup walk,
which ends gp_seq).  Each walk costs one rnp->lock round per node it visits
and takes effect when it completes.  The wake-from-GP waiters that rcu_gp_init()
claims and rcu_gp_cleanup() wakes are tree_sr_normal.py's.
"""

from __future__ import annotations

from rcusim._core import LAST_QS_KINDS as LAST_QS
from rcusim._seq import rcu_seq_endval, rcu_seq_snap
from rcusim.engine.reference.sched import BLOCKED, CPU_BUSY, SLEEP, urgent_at, wake
from rcusim.engine.reference.timer import timer_expiry_cpu, timer_tick
from rcusim.engine.reference.tree import (RCU_GP_FLAG_FQS, RCU_GP_FLAG_INIT, ev_ipi, note_gp_changes_locked,
                                          rcu_report_qs_rdp, rcu_report_qs_rnp, rcu_start_this_gp)
from rcusim.engine.reference.tree_sr_normal import rcu_sr_normal_gp_cleanup, rcu_sr_normal_gp_init
from rcusim.kernel.timer import timer_expiry_jiffy

RCU_GP_IDLE, RCU_GP_WAIT_FQS = 0, 5


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
    gp_arm_fqs_timer(sim, sim.inp.tree_gp.jiffies_till_first_fqs)
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
            rcu_gp_fqs(sim, first)
            sim.gp_flags &= ~RCU_GP_FLAG_FQS
            gp_arm_fqs_timer(sim, sim.inp.tree_gp.jiffies_till_next_fqs)
        first = False


def gp_arm_fqs_timer(sim, j: int) -> None:
    """jiffies_force_qs = jiffies + j, and the WAIT_FQS timeout on the timer wheel."""
    clk = sim.env.now // sim.inp.sched.jiffy_ns
    sim.fqs_deadline = (clk + j) * sim.inp.sched.jiffy_ns
    expiry = timer_expiry_jiffy(clk, clk + j, 1_000_000_000 // sim.inp.sched.jiffy_ns, bool(sim.inp.timer.timer_wheel_rounds_up))
    sim.gp_timer_gen += 1
    sim.gp_timer_cpu = sim.gp_kthread.cpu  # schedule_timeout() arms it on the kthread's CPU
    sim.gp_timer_expires = expiry * sim.inp.sched.jiffy_ns
    gen = sim.gp_timer_gen
    sim.env.timeout(expiry * sim.inp.sched.jiffy_ns - sim.env.now).callbacks.append(lambda _ev: ev_gp_timer(sim, gen))


def ev_gp_timer(sim, gen: int) -> None:
    """process_timeout(), from the CPU whose interrupt expires the timer."""
    if gen != sim.gp_timer_gen or sim.gp_state != RCU_GP_WAIT_FQS:
        return  # re-armed or no longer waiting
    cpu = timer_expiry_cpu(sim, sim.gp_timer_cpu)
    timer_tick(sim, cpu)
    if sim.gp_kthread.state == BLOCKED:
        sim.acc = 0
        wake(sim, sim.gp_kthread, cpu, sim.env.now)


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
    note_gp_changes_locked(sim, rdp)
    if sim.inp.tree_gp.gp_kthread_cpu_qs_early:
        # rcu_qs() and rcu_report_qs_rdp(): no first scan can see this CPU idle.
        rdp.cpu_no_qs = False
        rcu_report_qs_rdp(sim, rdp)
    if sim.srs_next:
        # Every wait head is busy: these waiters need another GP.
        rcu_start_this_gp(sim, sim.gp_kthread.cpu.rdp.mynode, rcu_seq_snap(sim.gp_seq))


def rcu_gp_fqs(sim, first: bool) -> None:
    """rcu_gp_fqs() and force_qs_rnp(): report CPUs seen in an extended QS, nudge the others.

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
                if cpu.state != CPU_BUSY and not cpu.in_irq:  # CPU_WAKING: still in the extended QS
                    mask |= 1 << bit
            elif (cpu.state != CPU_BUSY and not cpu.in_irq) or cpu.watching != rdp.watching_snap:
                mask |= 1 << bit
            else:
                if age > sim.inp.tree_gp.jiffies_to_sched_qs:
                    rdp.urgent_qs = True
                if age > sim.inp.tree_gp.jiffies_resched:
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
    urgent_at(sim, sim.env.now + sim.inp.sched.ipi_latency_ns, lambda _ev: ev_ipi(sim, cpu))


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
            note_gp_changes_locked(sim, rdp)
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
