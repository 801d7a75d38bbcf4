"""struct rcu_segcblist (kernel/rcu/rcu_segcblist.c): a CPU's callbacks in four segments
keyed by gp_seq, and rcu_accelerate_cbs() and rcu_advance_cbs() over them; mirrors
cython_core/rcu_segcblist.pxi.

Callbacks enter RCU_NEXT_TAIL.  ``accelerate`` labels the not-yet-labelled
ones with the grace period that will cover them; ``advance`` moves every
segment whose grace period has ended into RCU_DONE_TAIL, ready to invoke.
Same rules as kernel/rcu/rcu_segcblist.c, including the stale ``gp_seq`` of
an empty segment taking part in the comparisons.  A grace period the labels
need is requested through the model's ``rcu_start_this_gp`` hook (tree.py, which
imports this module).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from rcusim._seq import rcu_seq_snap

RCU_DONE_TAIL, RCU_WAIT_TAIL, RCU_NEXT_READY_TAIL, RCU_NEXT_TAIL = range(4)


@dataclass
class Callback:
    """An rcu_head: ``wakeme_after_rcu`` completing a synchronize_rcu() waiter."""

    task: object
    t_queued: int


class RcuSegCbList:
    def __init__(self):
        self.seg = [deque() for _ in range(4)]
        self.gp_seq = [0, 0, 0, 0]

    def n_cbs(self) -> int:
        return sum(len(s) for s in self.seg)

    def pend_cbs(self) -> int:
        """Callbacks still waiting for a grace period."""
        return len(self.seg[RCU_WAIT_TAIL]) + len(self.seg[RCU_NEXT_READY_TAIL]) + len(self.seg[RCU_NEXT_TAIL])

    def enqueue(self, cb: Callback) -> None:
        self.seg[RCU_NEXT_TAIL].append(cb)

    def advance(self, seq: int) -> None:
        """rcu_segcblist_advance(): segments whose GP is done join RCU_DONE_TAIL."""
        if not self.pend_cbs():
            return
        i = RCU_WAIT_TAIL
        while i < RCU_NEXT_TAIL and seq >= self.gp_seq[i]:
            self.seg[RCU_DONE_TAIL].extend(self.seg[i])
            self.seg[i].clear()
            i += 1
        if i == RCU_WAIT_TAIL:
            return
        # What is left of WAIT/NEXT_READY moves down to RCU_WAIT_TAIL.
        j = RCU_WAIT_TAIL
        while i < RCU_NEXT_TAIL:
            self.seg[j], self.seg[i] = self.seg[i], self.seg[j]
            self.gp_seq[j] = self.gp_seq[i]
            i += 1
            j += 1

    def accelerate(self, seq: int) -> bool:
        """rcu_segcblist_accelerate(): label unlabelled callbacks with seq.

        Returns True if some callback now waits for seq.
        """
        if not self.pend_cbs():
            return False
        i = RCU_NEXT_READY_TAIL
        while i > RCU_DONE_TAIL:
            if self.seg[i] and self.gp_seq[i] < seq:
                break
            i -= 1
        if not any(self.seg[k] for k in range(i + 1, 4)):
            return False
        i += 1
        if i >= RCU_NEXT_TAIL:
            return False
        for k in range(i + 1, 4):
            self.seg[i].extend(self.seg[k])
            self.seg[k].clear()
        for k in range(i, RCU_NEXT_TAIL):
            self.gp_seq[k] = seq
        return True


def rcu_accelerate_cbs(sim, rdp) -> bool:
    """Label new callbacks with the GP that covers them and request it."""
    if not rdp.cblist.pend_cbs():
        return False
    gp_seq_req = rcu_seq_snap(sim.gp_seq)
    if rdp.cblist.accelerate(gp_seq_req):
        return sim.rcu_start_this_gp(rdp.mynode, gp_seq_req)
    return False


def rcu_advance_cbs(sim, rdp) -> bool:
    """Move callbacks whose GP has ended (per the leaf) to DONE, then accelerate."""
    if not rdp.cblist.pend_cbs():
        return False
    rdp.cblist.advance(rdp.mynode.gp_seq)
    return rcu_accelerate_cbs(sim, rdp)
