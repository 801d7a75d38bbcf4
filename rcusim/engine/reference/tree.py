"""The rcu_node tree and a CPU's place in it (kernel/rcu/tree.c): struct rcu_node and
struct rcu_data, quiescent-state reports up the tree, the GP-request funnel, a CPU
noticing grace periods, rcu_pending() and the tick's RCU work; mirrors
cython_core/tree.pxi.

Sequence numbers are the engine's int64 values, and the rcu_seq helpers are
the engine's own (rcusim._seq wraps cython_core/rcu_seq.pxd).

Lock cost: an rnp->lock (or rnp->exp_lock) is held ``rnp_lock_ns`` per acquisition
(a :class:`~rcusim.engine.reference.locking.SpinLock`); a CPU that finds it held waits.
Both the wait and the hold are the acting CPU's time, added to the action's cost
(``sim.acc``), as the engine does.

RCU_SOFTIRQ (tree_callbacks.py) is raised through the model's ``rcu_softirq`` hook, the
GP kthread (tree_gp.py) woken through ``rcu_gp_kthread_wake`` and an expedited QS
(tree_exp.py) reported through ``rcu_report_exp_rdp``: those modules import this one.
"""

from __future__ import annotations

from collections import deque

from rcusim._core import LAST_QS_KINDS as LAST_QS
from rcusim._seq import rcu_seq_completed_gp, rcu_seq_new_gp, rcu_seq_started, rcu_seq_state
from rcusim.engine.reference.locking import SpinLock, spin_lock
from rcusim.engine.reference.rcu_segcblist import (RCU_DONE_TAIL, RCU_NEXT_READY_TAIL, RCU_NEXT_TAIL, RcuSegCbList,
                                                   rcu_accelerate_cbs, rcu_advance_cbs)
from rcusim.engine.reference.sched import CPU_BUSY

RCU_GP_FLAG_INIT = 0x1   # rcu_state.gp_flags: a grace period is requested
RCU_GP_FLAG_FQS = 0x2    # ... force a quiescent-state scan (or finish: the root is clear)


class RcuNode:
    """struct rcu_node: one node of the combining tree."""

    def __init__(self, parent: int, grpmask: int, grplo: int, grphi: int, gp_seq: int):
        self.parent = parent          # index in rcu_state.node[], -1 at the root
        self.grpmask = grpmask        # this node's bit in its parent's qsmask
        self.grplo = grplo            # first CPU covered
        self.grphi = grphi            # last CPU covered
        self.qsmask = 0               # children still owing a QS for gp_seq
        self.qsmaskinit = 0           # children online at GP start
        self.gp_seq = gp_seq
        self.gp_seq_needed = gp_seq   # furthest GP requested through this node
        self.lock = SpinLock()        # rnp->lock
        # expedited GPs (tree_exp.py)
        self.expmask = 0              # children still owing an expedited QS
        self.expmaskinit = 0          # children online
        self.exp_sel_qs = 0           # leaf: CPUs found quiescent by the running selection
        self.exp_seq_rq = 0           # furthest expedited GP requested through this node
        self.exp_lock = SpinLock()    # rnp->exp_lock
        self.exp_wq = [deque() for _ in range(4)]  # tasks waiting, by rcu_seq_ctr(s) & 3
        self.exp_par_worker = None    # leaf: its rcu_exp_par_gp_kthread_worker


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


def rnp_lock(sim, rnp: RcuNode) -> None:
    """raw_spin_lock_rcu_node(): one round on rnp->lock."""
    spin_lock(sim, rnp.lock)


# --- quiescent-state reports and GP requests up the tree -----------------------
def rcu_report_qs_rnp(sim, mask: int, rnp: RcuNode, gps: int, src: int, cpu) -> None:
    """Clear mask in rnp and climb while nodes empty; at the root, wake the GP kthread.

    `src` (a value of ``LAST_QS_KINDS``) says whose report this is; the GP
    records it if this report ends the wait.
    """
    while True:
        if not rnp.qsmask & mask or rnp.gp_seq != gps:
            return  # already reported, or a stale report for an older GP
        rnp.qsmask &= ~mask
        if rnp.qsmask:
            return
        if rnp.parent < 0:
            sim.gp_last_qs = src
            rcu_report_qs_rsp(sim, cpu)
            return
        mask = rnp.grpmask
        rnp = sim.nodes[rnp.parent]
        rnp_lock(sim, rnp)


def rcu_report_qs_rsp(sim, cpu) -> None:
    """Everyone has passed a QS: let the GP kthread clean up."""
    sim.gp_qs_t = sim.env.now + sim.acc
    sim.gp_flags |= RCU_GP_FLAG_FQS
    sim.rcu_gp_kthread_wake(cpu)


def rcu_start_this_gp(sim, leaf: RcuNode, gp_seq_req: int) -> bool:
    """Funnel a request for gp_seq_req from leaf to the root.

    Stops early where the request is already recorded or a GP is under way
    below the root.  Returns True if the GP kthread must be woken.
    """
    rnp = leaf
    while True:
        if rnp is not leaf:
            rnp_lock(sim, rnp)
        if (rnp.gp_seq_needed >= gp_seq_req or rcu_seq_started(rnp.gp_seq, gp_seq_req)
                or (rnp is not leaf and rcu_seq_state(rnp.gp_seq))):
            return False
        rnp.gp_seq_needed = gp_seq_req
        if rcu_seq_state(rnp.gp_seq):
            return False  # the GP in progress will see the request at cleanup
        if rnp.parent < 0:
            break
        rnp = sim.nodes[rnp.parent]
    if rcu_seq_state(sim.gp_seq):
        return False
    sim.gp_flags |= RCU_GP_FLAG_INIT
    return True


# --- a CPU noticing grace periods and reporting its quiescent state --------------
def note_gp_changes_locked(sim, rdp: RcuData) -> None:
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
    rnp_lock(sim, rnp)
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


# --- the tick and need_resched -----------------------------------------------------
def rcu_sched_clock_irq(sim, cpu) -> int:
    """The scheduling-clock interrupt's RCU work, and RCU_SOFTIRQ if rcu_pending(); returns
    the interrupt's time, taken from the running burst."""
    rdp = cpu.rdp
    now = sim.env.now
    cost = sim.inp.sched.tick_ns
    idle = cpu.state != CPU_BUSY
    sim.counters["ticks"] += 1
    # rcu_flavor_sched_clock_irq(): PREEMPT_RCU counts a tick that interrupted a
    # task outside a reader, with neither softirqs nor preemption off (not in
    # handle_softirqs() nor a try_to_wake_up(); the idle task runs with preemption
    # disabled); !PREEMPT_RCU one that interrupted idle or user mode.
    if sim.inp.tree_callbacks.preempt_rcu:
        qs = not idle and not cpu.in_serving_softirq() and not cpu.ttwu_from <= now < cpu.ttwu_until
    else:
        qs = idle or cpu.user_from <= now < cpu.user_to
    if qs:
        rdp.cpu_no_qs = False
    if rdp.urgent_qs and not idle:
        # rcu_urgent_qs: set need_resched; the context switch is a QS.
        rdp.urgent_qs = False
        sim.acc = 0
        rcu_need_resched(sim, cpu)
        cost += sim.acc
    if rcu_pending(sim, rdp):
        if cpu.in_serving_softirq():
            cpu.softirq_pending = True  # raise_softirq(): the running handle_softirqs() restarts for it
        else:
            cost += sim.rcu_softirq(cpu)
    cpu.steal(cost)
    return cost


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


def ev_ipi(sim, cpu) -> None:
    """resched_cpu()'s IPI: need_resched forces a context switch, a quiescent state."""
    if cpu.state == CPU_BUSY:
        sim.acc = 0
        rcu_need_resched(sim, cpu)
        cpu.steal(sim.acc)
