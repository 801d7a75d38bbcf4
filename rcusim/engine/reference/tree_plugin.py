"""cond_resched() where kernel code calls it (kernel/rcu/tree_plugin.h's rcu_all_qs() with
kernel/sched/core.c's __cond_resched()); mirrors cython_core/tree_plugin.pxi, whose
readers and blocked readers are outside the reference's scope."""

from __future__ import annotations


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
