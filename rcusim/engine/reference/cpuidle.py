"""Idle states and the menu governor (rcusim.kernel.cpuidle): the state an idle CPU
enters, whether it keeps its tick there, and what leaving the state costs a wake-up;
mirrors cython_core/cpuidle.pxi.

The governor's state is the Cpu's (``menu``, ``menu_enter``, ``stop_tick``), as the
engine's is its cpu_t's and menu_t's.
"""

from __future__ import annotations

from rcusim.kernel.cpuidle import NO_TIMER_US, Menu

CPU_IDLE, CPU_WAKING, CPU_BUSY = 0, 1, 2  # a CPU's state, as cpu_t.state


def cpuidle_init(sim) -> None:
    """The profile's states; every CPU starts idle with its tick stopped, unless the
    governor keeps it."""
    if not len(sim.inp.cpuidle.idle_exit_us):
        return
    for cpu in sim.cpus:
        cpu.menu = Menu(tuple(int(x) for x in sim.inp.cpuidle.idle_exit_us), tuple(int(x) for x in sim.inp.cpuidle.idle_target_us),
                        bool(sim.inp.cpuidle.idle_polling0), sim.inp.sched.jiffy_ns // 1000, bool(sim.inp.cpuidle.menu_keeps_tick))
        cpuidle_select(sim, cpu)
        if not cpu.stop_tick:  # the governor keeps the tick of this idle CPU
            cpu.start_tick()


def cpuidle_select(sim, cpu) -> None:
    """cpuidle_select() as the CPU enters idle: the sleep length is the next tick
    if rcu_needs_cpu(), else the FQS wait's timer on the GP kthread's CPU."""
    now, jiffy = sim.env.now, sim.inp.sched.jiffy_ns
    next_tick = (now // jiffy + 1) * jiffy - now
    next_ns = NO_TIMER_US * 1000
    fqs = sim.fqs_timer_cpu_expires(cpu)
    if cpu.rdp.cblist.n_cbs() > 0:
        next_ns = next_tick
    elif fqs is not None:
        next_ns = fqs - now
    cpu.menu.select(min(next_ns // 1000, NO_TIMER_US),
                    min((next_tick if cpu.tick_on else next_ns) // 1000, NO_TIMER_US), not cpu.tick_on)
    cpu.stop_tick = cpu.menu.stop_tick
    cpu.menu_enter = now


def cpuidle_idle_call(sim, cpu, got_tick: bool) -> None:
    """An iteration of do_idle(); `got_tick`: the tick woke the previous one. Menu
    decides the tick with two states or more; without a driver (or with one state)
    f4c31b07b136 stops it only after it woke the loop, before it a driverless CPU
    stopped it at once."""
    n = len(sim.inp.cpuidle.idle_exit_us)
    if n > 1 or (n == 1 and not sim.inp.cpuidle.idle_stop_tick_after_tick):
        cpuidle_select(sim, cpu)
        return
    if sim.inp.cpuidle.idle_stop_tick_after_tick:
        cpu.stop_tick = got_tick or not cpu.tick_on
    if cpu.menu:
        cpu.menu.state = 0  # call_cpuidle(drv, dev, 0), the governor skipped
        cpu.menu_enter = sim.env.now


def cpuidle_exit_ns(sim, cpu) -> int:
    """A wake-up takes the CPU out of its state: the exit latency."""
    lat = int(sim.inp.cpuidle.idle_wake_ns[cpu.menu.state])
    cpu.menu.reflect((sim.env.now + lat - cpu.menu_enter) // 1000, False)
    sim.counters["idle_exit_latency_ns"] += lat
    return lat


def cpuidle_irq(sim, cpu, tick: bool, dur: int) -> None:
    """An interrupt took the idle CPU out of its state for dur, its handler and softirqs;
    the idle loop runs again. RCU watches the CPU from when it has left its state, for
    the handler's time, and a task woken here runs after it."""
    lat = int(sim.inp.cpuidle.idle_wake_ns[cpu.menu.state]) if cpu.menu else 0
    if lat > 0:
        # irq_from_idle() once out of the state; a task woken meanwhile waits for it too.
        cpu.nonpreempt_until = max(cpu.nonpreempt_until, sim.env.now + lat + dur)
        sim.env.timeout(lat).callbacks.append(lambda _ev: irq_from_idle(sim, cpu, dur))
    else:
        irq_from_idle(sim, cpu, dur)
    if cpu.menu:
        cpu.menu.reflect((sim.env.now - cpu.menu_enter) // 1000, tick)
    cpuidle_idle_call(sim, cpu, tick)


def irq_from_idle(sim, cpu, dur: int) -> None:
    """ct_irq_enter() ... ct_irq_exit(): RCU watches the idle CPU while the interrupt runs;
    one arriving meanwhile runs after it, and a task woken on the CPU after both."""
    now = sim.env.now
    if cpu.in_irq:
        cpu.irq_exit_at = max(cpu.irq_exit_at, now) + dur
    else:
        cpu.in_irq = True
        cpu.watching += 1
        cpu.irq_exit_at = now + dur
    cpu.nonpreempt_until = max(cpu.nonpreempt_until, cpu.irq_exit_at)
    sim.env.timeout(cpu.irq_exit_at - now).callbacks.append(lambda _ev: irq_exit_idle(cpu))


def irq_exit_idle(cpu) -> None:
    """ct_irq_exit(): back to the extended quiescent state, unless a task the interrupt woke
    runs on (it left that state already)."""
    if not cpu.in_irq or cpu.env.now < cpu.irq_exit_at:
        return  # a later interrupt extended the span: its own exit ends it
    cpu.in_irq = False
    if cpu.state != CPU_BUSY:
        cpu.watching += 1
