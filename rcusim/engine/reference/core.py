"""Per-CPU RCU: struct rcu_data, call_rcu(), the tick, RCU_SOFTIRQ and rcu_do_batch().

A CPU learns of a new grace period and reports its quiescent state from
rcu_core(), which runs as RCU_SOFTIRQ at the exit of the scheduling-clock
interrupt when rcu_pending() says there is work, and invokes the callbacks
whose grace period has ended.  Leftovers beyond __do_softirq()'s limits go
to ksoftirqd/N.  Offloaded (NOCB) CPUs and rcuc kthreads are not modelled.
"""

from __future__ import annotations

from rcusim._core import LAST_QS_KINDS as LAST_QS
from rcusim._seq import rcu_seq_completed_gp, rcu_seq_new_gp, rcu_seq_snap, rcu_seq_state
from rcusim.engine.reference.sched import CPU_BUSY, CPU_WAKING, SLEEP, YIELD, try_to_wake_up, wake
from rcusim.engine.reference.segcblist import RCU_DONE_TAIL, RCU_NEXT_READY_TAIL, RCU_NEXT_TAIL, Callback, RcuSegCbList
from rcusim.engine.reference.tree import RcuNode, raw_spin_lock_rcu_node, rcu_report_qs_rnp, rcu_start_this_gp

DEFAULT_MAX_RCU_BLIMIT = 10000   # rdp->blimit under callback overload
MAX_SOFTIRQ_RESTART = 10         # __do_softirq() restarts before ksoftirqd takes over
MAX_SOFTIRQ_TIME_NS = 2_000_000  # __do_softirq() time budget (2 ms)


class RcuData:
    """struct rcu_data: one CPU's view of the grace period and its callbacks."""

    def __init__(self, mynode: RcuNode, grpmask: int, gp_seq: int, blimit: int):
        self.mynode = mynode
        self.grpmask = grpmask          # this CPU's bit in its leaf's qsmask
        self.gp_seq = gp_seq            # the last GP this CPU has noticed
        self.cpu_no_qs = False          # cpu_no_qs.b.norm: no QS noted yet for gp_seq
        self.core_needs_qs = False      # this CPU must report a QS
        self.urgent_qs = False          # rcu_urgent_qs: the tick forces a context switch
        self.watching_snap = 0          # rcu_watching at the first FQS pass
        self.blimit = blimit
        self.qlen_last_fqs_check = 0
        self.exp_need_qs = False        # cpu_no_qs.b.exp: the expedited IPI must be answered later
        self.exp_deferred_pending = False  # a report waits for the softirq section's end
        self.cblist = RcuSegCbList()
        self.ksoftirqd = None
        self.cpu = None                 # the Cpu this rcu_data belongs to


# --- callbacks ---------------------------------------------------------------
def rcu_accelerate_cbs(sim, rdp: RcuData) -> bool:
    """Label new callbacks with the GP that covers them and request it."""
    if not rdp.cblist.pend_cbs():
        return False
    gp_seq_req = rcu_seq_snap(sim.gp_seq)
    if rdp.cblist.accelerate(gp_seq_req):
        return rcu_start_this_gp(sim, rdp.mynode, gp_seq_req)
    return False


def rcu_advance_cbs(sim, rdp: RcuData) -> bool:
    """Move callbacks whose GP has ended (per the leaf) to DONE, then accelerate."""
    if not rdp.cblist.pend_cbs():
        return False
    rdp.cblist.advance(rdp.mynode.gp_seq)
    return rcu_accelerate_cbs(sim, rdp)


def call_rcu(sim, cpu, task) -> None:
    """__call_rcu_common() (call_rcu_hurry) queuing wakeme_after_rcu for task."""
    rdp = cpu.rdp
    rdp.cblist.enqueue(Callback(task, sim.env.now))
    # call_rcu_core(): a callback flood forces the GP machinery along.
    n = rdp.cblist.n_cbs()
    if n > rdp.qlen_last_fqs_check + sim.inp.core.qhimark:
        raw_spin_lock_rcu_node(sim, rdp.mynode)
        note_gp_changes(sim, rdp)
        if not rcu_seq_state(sim.gp_seq):
            if rcu_accelerate_cbs(sim, rdp):
                sim.rcu_gp_kthread_wake(rdp.cpu)
        else:
            rdp.blimit = DEFAULT_MAX_RCU_BLIMIT
        rdp.qlen_last_fqs_check = n


def rcu_do_batch(sim, cpu, t0: int) -> int:
    """Invoke the DONE callbacks of cpu starting at t0; returns the time spent.

    Stops after blimit callbacks when something else wants the CPU, and
    checks the rcu_resched_ns time limit every 32 callbacks of a big batch.
    """
    rdp = cpu.rdp
    done = rdp.cblist.seg[RCU_DONE_TAIL]
    if not done:
        return 0
    bl = max(len(done) >> sim.inp.core.rcu_divisor, rdp.blimit)
    tlimit = t0 + sim.inp.core.rcu_resched_ns if bl > 100 else 0
    t, count = t0, 0
    while done:
        cb = done.popleft()
        t += try_to_wake_up(sim, cb.task, cpu, t, sim.inp.core.cb_wakeme_ns)  # wakeme_after_rcu(): complete()
        count += 1
        sim.counters["callbacks_invoked"] += 1
        # need_resched() or current is not the idle task; a callback waking a task
        # onto this idle CPU sets need_resched.
        if count >= bl and (cpu.state == CPU_BUSY or softirq_need_resched(sim, cpu)):
            break
        if tlimit and count % 32 == 0 and t >= tlimit:
            break
    if rdp.blimit == DEFAULT_MAX_RCU_BLIMIT and rdp.cblist.n_cbs() <= sim.inp.core.qlowmark:
        rdp.blimit = sim.inp.core.blimit
    return t - t0


# --- noticing grace periods and reporting quiescent states -----------------
def note_gp_changes(sim, rdp: RcuData) -> None:
    """__note_gp_changes() with the leaf's lock held (charged by the caller)."""
    rnp = rdp.mynode
    if rdp.gp_seq == rnp.gp_seq:
        return
    if rcu_seq_completed_gp(rdp.gp_seq, rnp.gp_seq):
        needwake = rcu_advance_cbs(sim, rdp)
    else:
        needwake = rcu_accelerate_cbs(sim, rdp)
    if rcu_seq_new_gp(rdp.gp_seq, rnp.gp_seq):
        # A new GP: this CPU owes a QS if its leaf waits for it.
        need_qs = bool(rnp.qsmask & rdp.grpmask)
        rdp.cpu_no_qs = need_qs
        rdp.core_needs_qs = need_qs
    rdp.gp_seq = rnp.gp_seq
    if needwake:
        sim.rcu_gp_kthread_wake(rdp.cpu)


def last_qs_src(sim, cpu) -> int:
    """Whose report it is when a CPU reports for itself (``LAST_QS_KINDS``)."""
    if cpu is sim.gp_ran_cpu:  # where the GP kthread last ran
        return LAST_QS["gp_kthread_cpu"]
    return LAST_QS["busy_cpu"] if cpu.state == CPU_BUSY else LAST_QS["idle_cpu"]


def rcu_report_qs_rdp(sim, rdp: RcuData) -> None:
    """Push this CPU's noted QS into its leaf, unless the GP moved on meanwhile."""
    rnp = rdp.mynode
    raw_spin_lock_rcu_node(sim, rnp)
    if rdp.cpu_no_qs or rdp.gp_seq != rnp.gp_seq:
        rdp.cpu_no_qs = True  # the QS was for an older GP: note a new one
        return
    rdp.core_needs_qs = False
    if not rnp.qsmask & rdp.grpmask:
        return
    needwake = rcu_accelerate_cbs(sim, rdp)
    rcu_report_qs_rnp(sim, rdp.grpmask, rnp, rnp.gp_seq, last_qs_src(sim, rdp.cpu), rdp.cpu)
    if needwake:
        sim.rcu_gp_kthread_wake(rdp.cpu)


def rcu_pending(sim, rdp: RcuData) -> bool:
    """Does this CPU have RCU work for rcu_core()?"""
    seg = rdp.cblist.seg
    if rdp.core_needs_qs and not rdp.cpu_no_qs:
        return True  # a noted QS to report
    if seg[RCU_DONE_TAIL]:
        return True  # callbacks ready to invoke
    if not rcu_seq_state(sim.gp_seq) and (seg[RCU_NEXT_READY_TAIL] or seg[RCU_NEXT_TAIL]):
        return True  # callbacks that need a GP to be started
    return rdp.gp_seq != rdp.mynode.gp_seq  # a GP began or ended


def rcu_core(sim, cpu, t0: int) -> int:
    """One rcu_core() pass on cpu starting at t0; returns its duration."""
    rdp = cpu.rdp
    seg = rdp.cblist.seg
    sim.acc = sim.inp.sched.softirq_ns
    sim.counters["rcu_core_passes"] += 1
    if rdp.gp_seq != rdp.mynode.gp_seq:
        raw_spin_lock_rcu_node(sim, rdp.mynode)
        note_gp_changes(sim, rdp)
    if rdp.core_needs_qs and not rdp.cpu_no_qs:
        rcu_report_qs_rdp(sim, rdp)
    if not rcu_seq_state(sim.gp_seq) and (seg[RCU_NEXT_READY_TAIL] or seg[RCU_NEXT_TAIL]):
        raw_spin_lock_rcu_node(sim, rdp.mynode)
        if rcu_accelerate_cbs(sim, rdp):
            sim.rcu_gp_kthread_wake(rdp.cpu)
    dur = sim.acc
    if seg[RCU_DONE_TAIL]:
        dur += rcu_do_batch(sim, cpu, t0 + dur)
    return dur


def softirq_need_resched(sim, cpu) -> bool:
    """need_resched() in RCU_SOFTIRQ.  Over a task, a task queued beside it stands for
    it.  On the idle task any task queued on the CPU sets it (wakeup_preempt_idle()),
    including one this softirq's callbacks woke onto the CPU (a local wake-up)."""
    if cpu.state == CPU_BUSY:
        return bool(cpu.nr_queued())
    return (cpu.state == CPU_WAKING or bool(cpu.nr_queued())
            or sim.counters["wakeups_local"] > sim.softirq_wake0)


def rcu_softirq(sim, cpu) -> int:
    """RCU_SOFTIRQ at irq exit."""
    return do_softirq(sim, cpu, sim.env.now, False)


def do_softirq(sim, cpu, t0: int, in_ksoftirqd: bool) -> int:
    """handle_softirqs() from t0: RCU_SOFTIRQ restarted while callbacks are ready, within
    its limits; past them the rest goes to ksoftirqd/N (wakeup_softirqd())."""
    total, restarts = 0, 0
    sim.softirq_wake0 = sim.counters["wakeups_local"]
    while True:
        total += rcu_core(sim, cpu, t0 + total)
        if not cpu.rdp.cblist.seg[RCU_DONE_TAIL]:
            break
        restarts += 1
        if restarts >= MAX_SOFTIRQ_RESTART or total >= MAX_SOFTIRQ_TIME_NS or softirq_need_resched(sim, cpu):
            if not in_ksoftirqd:
                wake(sim, cpu.rdp.ksoftirqd, cpu, t0 + total)
            break
    return total


def ksoftirqd(sim, cpu):
    """run_ksoftirqd(): handle_softirqs(true), then cond_resched(), until no callback
    is ready."""
    t0 = yield SLEEP
    while True:
        t0 = yield do_softirq(sim, cpu, t0, True)
        if not cpu.rdp.cblist.seg[RCU_DONE_TAIL]:
            t0 = yield SLEEP
        elif cond_resched(sim, cpu):
            t0 = yield YIELD


def cond_resched(sim, cpu) -> bool:
    """cond_resched() without CONFIG_PREEMPTION: yield if need_resched is set, else
    rcu_all_qs() (a QS if rcu_urgent_qs is set).  True if it yields."""
    if sim.inp.sched.preemption:
        return False
    if cpu.need_resched:
        return True
    rdp = cpu.rdp
    if rdp.urgent_qs:
        rdp.urgent_qs = False
        rdp.cpu_no_qs = False
        cpu.watching += 2
    return False


def rcu_need_resched(sim, cpu) -> None:
    """need_resched on a busy CPU: schedule() at the next preemption point is a QS.

    With CONFIG_PREEMPTION that point is the irq exit.  Without it, kernel
    code is switched out only where it calls schedule() (tasks and kthreads
    here block at the end of their step), so the QS waits for that.
    """
    rdp = cpu.rdp
    if not sim.inp.sched.preemption and not cpu.user_from <= sim.env.now < cpu.user_to:
        cpu.need_resched = True
        return  # the QS comes with the next context switch
    rdp.cpu_no_qs = False
    # rcu_note_context_switch() with rcu_urgent_qs: rcu_momentary_eqs(),
    # which the next FQS scan sees even if this CPU has not noticed the GP.
    cpu.watching += 2
    if rdp.exp_need_qs:
        sim.rcu_report_exp_rdp(cpu)


def rcu_sched_clock_irq(sim, cpu) -> None:
    """The scheduling-clock interrupt's RCU work, and RCU_SOFTIRQ if rcu_pending()."""
    rdp = cpu.rdp
    now = sim.env.now
    cost = sim.inp.sched.tick_ns
    idle = cpu.state != CPU_BUSY
    sim.counters["ticks"] += 1
    # rcu_flavor_sched_clock_irq(): PREEMPT_RCU counts a tick that interrupted a
    # task outside a reader (the idle task runs with preemption disabled);
    # !PREEMPT_RCU one that interrupted idle or user mode.
    if (not idle if sim.inp.core.preempt_rcu else idle or cpu.user_from <= now < cpu.user_to):
        rdp.cpu_no_qs = False
    if rdp.urgent_qs and not idle:
        # rcu_urgent_qs: set need_resched; the context switch is a QS.
        rdp.urgent_qs = False
        sim.acc = 0
        rcu_need_resched(sim, cpu)
        cost += sim.acc
    if rcu_pending(sim, rdp):
        cost += rcu_softirq(sim, cpu)
    cpu.steal(cost)
