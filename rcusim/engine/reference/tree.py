"""The rcu_node tree: gp_seq helpers, qsmask reporting and the GP-request funnel.

Sequence numbers are the engine's int64 values, and the rcu_seq helpers are
the engine's own (rcusim._seq wraps cython_core/rcu_seq.pxd).

Lock cost: an rnp->lock (or rnp->exp_lock) is held ``rnp_lock_ns`` per acquisition
(a :class:`SpinLock`); a CPU that finds it held waits.  Both the wait
and the hold are the acting CPU's time, added to the action's cost
(``sim.acc``), as the engine does.
"""

from __future__ import annotations

from collections import deque

from rcusim._seq import rcu_seq_started, rcu_seq_state
from rcusim.engine.reference.sched import SpinLock

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
        # expedited GPs (exp.py)
        self.expmask = 0              # children still owing an expedited QS
        self.expmaskinit = 0          # children online
        self.exp_sel_qs = 0           # leaf: CPUs found quiescent by the running selection
        self.exp_seq_rq = 0           # furthest expedited GP requested through this node
        self.exp_lock = SpinLock()    # rnp->exp_lock
        self.exp_wq = [deque() for _ in range(4)]  # tasks waiting, by rcu_seq_ctr(s) & 3
        self.exp_par_worker = None    # leaf: its rcu_exp_par_gp_kthread_worker


def raw_spin_lock_rcu_node(sim, rnp: RcuNode) -> None:
    """One round on rnp->lock."""
    spin_lock(sim, rnp.lock)


def spin_lock(sim, lock: SpinLock) -> None:
    """One round on an rcu_node lock (wait if held, then hold), charged to the current
    action (the engine's spin_lock())."""
    wait = lock.wait(sim.env.now + sim.acc, sim.inp.tree.rnp_lock_ns)
    sim.acc += wait + sim.inp.tree.rnp_lock_ns
    sim.counters["rnp_lock_wait_ns"] += wait


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
        raw_spin_lock_rcu_node(sim, rnp)


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
            raw_spin_lock_rcu_node(sim, rnp)
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
