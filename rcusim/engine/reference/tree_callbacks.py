"""Callbacks and RCU_SOFTIRQ (kernel/rcu/tree.c, kernel/softirq.c): call_rcu(), rcu_core(),
rcu_do_batch() and the softirq's restarts and ksoftirqd hand-off; mirrors
cython_core/tree_callbacks.pxi.

A CPU learns of a new grace period and reports its quiescent state from
rcu_core(), which runs as RCU_SOFTIRQ at the exit of the scheduling-clock
interrupt when rcu_pending() says there is work, and invokes the callbacks
whose grace period has ended.  Leftovers beyond __do_softirq()'s limits go
to ksoftirqd/N.  Offloaded (NOCB) CPUs and rcuc kthreads are not modelled.
"""

from __future__ import annotations

from rcusim._seq import rcu_seq_state
from rcusim.engine.reference.rcu_segcblist import (RCU_DONE_TAIL, RCU_NEXT_READY_TAIL, RCU_NEXT_TAIL, Callback,
                                                   rcu_accelerate_cbs)
from rcusim.engine.reference.sched import CPU_BUSY, CPU_WAKING, SLEEP, YIELD, try_to_wake_up, wake
from rcusim.engine.reference.tree import note_gp_changes_locked, rcu_report_qs_rdp, rnp_lock
from rcusim.engine.reference.tree_plugin import cond_resched

DEFAULT_MAX_RCU_BLIMIT = 10000   # rdp->blimit under callback overload
MAX_SOFTIRQ_RESTART = 10         # __do_softirq() restarts before ksoftirqd takes over
MAX_SOFTIRQ_TIME_NS = 2_000_000  # __do_softirq() time budget (2 ms)


def call_rcu(sim, cpu, task) -> None:
    """__call_rcu_common() (call_rcu_hurry) queuing wakeme_after_rcu for task."""
    rdp = cpu.rdp
    rdp.cblist.enqueue(Callback(task, sim.env.now))
    # call_rcu_core(): a callback flood forces the GP machinery along.
    n = rdp.cblist.n_cbs()
    if n > rdp.qlen_last_fqs_check + sim.inp.tree_callbacks.qhimark:
        rnp_lock(sim, rdp.mynode)
        note_gp_changes_locked(sim, rdp)
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
    bl = max(len(done) >> sim.inp.tree_callbacks.rcu_divisor, rdp.blimit)
    tlimit = t0 + sim.inp.tree_callbacks.rcu_resched_ns if bl > 100 else 0
    t, count = t0, 0
    while done:
        cb = done.popleft()
        t += try_to_wake_up(sim, cb.task, cpu, t, sim.inp.tree_callbacks.cb_wakeme_ns)  # wakeme_after_rcu(): complete()
        count += 1
        sim.counters["callbacks_invoked"] += 1
        # need_resched() or current is not the idle task; a callback waking a task
        # onto this idle CPU sets need_resched.
        if count >= bl and (cpu.state == CPU_BUSY or softirq_need_resched(sim, cpu)):
            break
        if tlimit and count % 32 == 0 and t >= tlimit:
            break
    if rdp.blimit == DEFAULT_MAX_RCU_BLIMIT and rdp.cblist.n_cbs() <= sim.inp.tree_callbacks.qlowmark:
        rdp.blimit = sim.inp.tree_callbacks.blimit
    return t - t0


def rcu_core(sim, cpu, t0: int) -> int:
    """One rcu_core() pass on cpu starting at t0; returns its duration."""
    rdp = cpu.rdp
    seg = rdp.cblist.seg
    sim.acc = sim.inp.sched.softirq_ns
    sim.counters["rcu_core_passes"] += 1
    if rdp.gp_seq != rdp.mynode.gp_seq:
        rnp_lock(sim, rdp.mynode)
        note_gp_changes_locked(sim, rdp)
    if rdp.core_needs_qs and not rdp.cpu_no_qs:
        rcu_report_qs_rdp(sim, rdp)
    if not rcu_seq_state(sim.gp_seq) and (seg[RCU_NEXT_READY_TAIL] or seg[RCU_NEXT_TAIL]):
        rnp_lock(sim, rdp.mynode)
        if rcu_accelerate_cbs(sim, rdp):
            sim.rcu_gp_kthread_wake(rdp.cpu)
    dur = sim.acc
    if seg[RCU_DONE_TAIL]:
        dur += rcu_do_batch(sim, cpu, t0 + dur)
    return dur


def softirq_need_resched(sim, cpu) -> bool:
    """need_resched() in RCU_SOFTIRQ.  Over a task, its TIF_NEED_RESCHED (a wake-up that
    preempts it, or its tick, set it).  On the idle task any task queued on the CPU sets it
    (wakeup_preempt_idle()), including one this softirq's callbacks woke onto the CPU (a
    local wake-up)."""
    if cpu.state == CPU_BUSY:
        return cpu.tif_need_resched()
    return (cpu.state == CPU_WAKING or bool(cpu.nr_queued())
            or sim.counters["wakeups_local"] > sim.softirq_wake0)


def rcu_softirq(sim, cpu) -> int:
    """RCU_SOFTIRQ at irq exit."""
    return do_softirq(sim, cpu, sim.env.now)


def rcu_softirq_reraised(cpu) -> bool:
    """After a pass, RCU work is raised again: callbacks still ready, or RCU_SOFTIRQ raised
    meanwhile by a tick."""
    return cpu.softirq_pending or bool(cpu.rdp.cblist.seg[RCU_DONE_TAIL])


def softirq_restarts_over(sim, cpu, restarts: int, elapsed: int) -> bool:
    """handle_softirqs() restarts no more: MAX_SOFTIRQ_RESTART passes, its 2 ms or
    need_resched() (tree_callbacks.pxi's softirq_restarts_over())."""
    return restarts >= MAX_SOFTIRQ_RESTART or elapsed >= MAX_SOFTIRQ_TIME_NS or softirq_need_resched(sim, cpu)


def wakeup_softirqd(sim, cpu, t: int) -> None:
    """Softirq work past handle_softirqs()'s limits goes to ksoftirqd/N."""
    cpu.softirq_pending = True
    sim.counters["ksoftirqd_wakeups"] += 1
    wake(sim, cpu.rdp.ksoftirqd, cpu, t)


def do_softirq(sim, cpu, t0: int) -> int:
    """handle_softirqs() at irq exit from t0: RCU_SOFTIRQ restarted while callbacks are
    ready, within its limits; past them the rest goes to ksoftirqd/N (wakeup_softirqd()).
    Over a task need_resched() decides each restart at the pass's end, once its callbacks'
    wake-ups have landed (ev_softirq_restart())."""
    total, restarts = 0, 0
    sim.softirq_wake0 = sim.counters["wakeups_local"]
    while True:
        cpu.softirq_pending = False
        total += rcu_core(sim, cpu, t0 + total)
        if not rcu_softirq_reraised(cpu):
            break
        restarts += 1
        if cpu.state == CPU_BUSY:
            cpu.softirq_irq_exit = restarts
            sim.env.timeout(t0 + total - sim.env.now).callbacks.append(lambda _ev: ev_softirq_restart(sim, cpu, t0))
            break
        if softirq_restarts_over(sim, cpu, restarts, total):
            wakeup_softirqd(sim, cpu, t0 + total)
            break
    return total


def ev_softirq_restart(sim, cpu, start: int) -> None:
    """An irq exit's RCU_SOFTIRQ pass on a busy CPU ends (its handle_softirqs() began at
    `start`): the next one runs, taken from the interrupted task's time, unless its limits or
    need_resched() stop it; then the rest goes to ksoftirqd/N (tree_callbacks.pxi's
    ev_softirq_restart())."""
    now = sim.env.now
    if cpu.state != CPU_BUSY or softirq_restarts_over(sim, cpu, cpu.softirq_irq_exit, now - start):
        cpu.softirq_irq_exit = 0
        wakeup_softirqd(sim, cpu, now)
        return
    sim.counters["softirq_restarts_irq_exit"] += 1
    dur = softirq_pass(sim, cpu, now)
    cpu.steal(dur)
    if not rcu_softirq_reraised(cpu):
        cpu.softirq_irq_exit = 0
        return
    cpu.softirq_irq_exit += 1
    sim.env.timeout(dur).callbacks.append(lambda _ev: ev_softirq_restart(sim, cpu, start))


def softirq_pass(sim, cpu, t0: int) -> int:
    """One pass of handle_softirqs(), in ksoftirqd/N or restarted at an irq exit:
    RCU_SOFTIRQ's rcu_core() (tree_callbacks.pxi's softirq_pass())."""
    sim.softirq_wake0 = sim.counters["wakeups_local"]
    cpu.softirq_pending = False
    return rcu_core(sim, cpu, t0)


def ksoftirqd(sim, cpu):
    """run_ksoftirqd(): handle_softirqs(true) one pass a burst, each pass ending in
    rcu_softirq_qs() (v4.20), restarted while RCU work is raised within its limits; then
    cond_resched(), until none is (tree_callbacks.pxi's rcu_cpu_kthread())."""
    t0 = yield SLEEP
    while True:
        start, restarts = t0, 0
        while True:
            t0 = yield softirq_pass(sim, cpu, t0)
            if sim.inp.tree_callbacks.softirq_qs:
                cpu.rdp.cpu_no_qs = False  # rcu_softirq_qs(): rcu_qs()
            if not rcu_softirq_reraised(cpu):
                break
            restarts += 1
            if softirq_restarts_over(sim, cpu, restarts, t0 - start):
                break
        if not rcu_softirq_reraised(cpu):
            t0 = yield SLEEP
            continue
        cpu.softirq_pending = True
        if cond_resched(sim, cpu):
            t0 = yield YIELD
