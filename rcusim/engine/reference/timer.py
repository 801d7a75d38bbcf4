"""Timers and the CPU that expires them (kernel/time/timer_migration.c): a NO_HZ-idle CPU
hands its non-pinned timers to a migrator from v6.9, and a timer expiring on a CPU whose
tick is stopped brings a tick with it; mirrors cython_core/timer.pxi."""

from __future__ import annotations

from rcusim.engine.reference.cpuidle import cpuidle_irq
from rcusim.engine.reference.sched import CPU_IDLE
from rcusim.engine.reference.tree import rcu_sched_clock_irq

TMIGR_CHILDREN_PER_GROUP = 8     # kernel/time/timer_migration.h


def tick_stopped(cpu) -> bool:
    """Inactive to the timer-migration hierarchy: NO_HZ idle (rcu_needs_cpu() false,
    and the governor let the tick stop)."""
    return cpu.state == CPU_IDLE and cpu.rdp.cblist.n_cbs() == 0 and cpu.stop_tick


def timer_expiry_cpu(sim, cpu):
    """The CPU whose interrupt expires a non-pinned timer armed on `cpu`.

    Before v6.9, `cpu` itself. From v6.9 a NO_HZ-idle `cpu` leaves it to the
    timer-migration hierarchy: the lowest-numbered active CPU of the nearest
    enclosing group of 8, 64, ... CPUs, or with every CPU idle the last one
    to go idle.
    """
    if not sim.inp.timer.timer_pull or not tick_stopped(cpu):
        return cpu
    size = TMIGR_CHILDREN_PER_GROUP
    while True:
        lo = cpu.index // size * size
        group = sim.cpus[lo:lo + size]
        for other in group:
            if other is not cpu and not tick_stopped(other):
                return other
        if len(group) == len(sim.cpus):
            return sim.last_idle_cpu
        size *= TMIGR_CHILDREN_PER_GROUP


def timer_tick(sim, cpu) -> None:
    """A timer expiring on `cpu`: on a NO_HZ-idle CPU it brings a tick with it."""
    if not cpu.tick_on:
        cost = rcu_sched_clock_irq(sim, cpu)
        if cpu.state == CPU_IDLE:
            cpuidle_irq(sim, cpu, True, cost)
