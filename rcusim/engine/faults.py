"""The catalogue of deliberate model faults, for tests of the safety checker.

Each fault breaks one rule the kernel relies on for RCU's guarantee; a run with
it must end in a violation the checker reports.  They are reached only through
build_engine(fault=...) and ``python -m rcusim torture --fault NAME``: no
scenario can ask for one.  The codes are the engine's FAULT_* (cython_core/defs.pxd).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Fault", "FAULTS", "fault_code"]


class Fault(NamedTuple):
    code: int
    rule: str  # the kernel's rule the fault breaks


FAULTS: dict[str, Fault] = {
    "exp-ipi-ignores-readers": Fault(
        1, "rcu_exp_handler() defers the QS of a CPU inside a reader to its rcu_read_unlock()"),
    "qs-without-qs": Fault(
        2, "rcu_sched_clock_irq() reports a QS only from idle, user mode or (PREEMPT_RCU) outside a reader"),
    "gp-one-fqs-early": Fault(
        3, "rcu_gp_fqs()'s first scan snapshots each CPU (rcu_watching_snap_save()) before a later "
           "scan may count its passage through idle (rcu_watching_snap_recheck())"),
    "exp-snap-gp-in-progress": Fault(
        4, "rcu_exp_gp_seq_snap() asks for a whole expedited GP after the call, not the end of "
           "the one in progress"),
    "no-wait-for-krwp-work": Fault(
        5, "kfree_rcu_monitor() attaches no channel to a krw_arr[] batch whose rcu_work is pending "
           "(need_wait_for_krwp_work())"),
    "cb-one-segment-too-far": Fault(
        6, "rcu_segcblist_advance() moves to DONE only segments whose gp_seq has ended"),
    "blkd-reader-dropped": Fault(
        7, "rcu_preempt_ctxt_queue() puts a reader preempted in its section on its leaf's blkd_tasks"),
    "bypass-wrong-segment": Fault(
        8, "rcu_nocb_flush_bypass() appends the bypass callbacks to ->cblist's NEXT segment"),
    "barrier-entrain-at-head": Fault(
        9, "rcu_segcblist_entrain() appends rcu_barrier()'s callback after the last non-empty segment, "
           "behind every callback queued before it"),
    "kvfree-no-gp": Fault(
        10, "kfree_rcu() memory waits for a GP: its call_rcu() before v5.6, queue_rcu_work() after the "
           "monitor from v5.6, each page's polled snapshot with the v6.3 reclaim"),
}


def fault_code(name: str) -> int:
    """The engine's code of a named fault; KeyError names the catalogue."""
    try:
        return FAULTS[name].code
    except KeyError:
        raise KeyError(f"no fault {name!r}; the catalogue has {', '.join(FAULTS)}") from None
