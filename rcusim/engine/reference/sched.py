"""CPUs, run queues and entities: the scheduler the RCU machinery runs on; mirrors
cython_core/sched.pxi (with the tick's start and loop, tick.pxi's in the engine, on
:class:`Cpu`).

Each CPU is one SimPy process (:meth:`Cpu.schedule`), the ``__schedule()``
loop: pick the first runnable entity (SCHED_FIFO class before SCHED_OTHER,
FIFO within a class), pay the context switch, run the entity for one *burst*,
and enter dyntick-idle when nothing is runnable.

Tasks and kthreads are :class:`Entity` objects whose body is a plain
generator driven by their CPU, one step per burst::

    t0 = yield SLEEP          # blocked; resumes when dispatched, at time t0
    ...                       # runs at dispatch: decides the step
    t = yield cost_ns         # the CPU runs the step for cost_ns
    ...                       # runs when the step completes: its effects

So a step's effects happen at the end of its burst, as in the engine.  The
value sent back into the body is the time its next code runs at: the
dispatch time plus the context switch (and any charged lock time), or the
end of the burst.

Interrupt work (the tick and RCU_SOFTIRQ) on a busy CPU is *stolen* from
the running burst, which ends that much later; while it runs the CPU cannot
be preempted.  A SCHED_FIFO wake-up preempts a SCHED_OTHER burst with
``Process.interrupt()``; the rest of the burst runs when the entity is picked
again.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import simpy

from rcusim.engine.reference import placement
from rcusim.engine.reference.cpuidle import CPU_BUSY, CPU_IDLE, CPU_WAKING, cpuidle_exit_ns, cpuidle_idle_call, cpuidle_irq
from rcusim.engine.reference.fair import CfsRq
from rcusim.engine.reference.locking import SpinLock
from rcusim.engine.reference.topology import line_cost
from rcusim.kernel.fair import NICE_0_LOAD, POLICY_CFS, POLICY_EEVDF, POLICY_RR

#: Yielded by an entity body: block until woken (``schedule()`` away).
SLEEP = None
#: Yielded by an entity body: cond_resched() switches it out, still runnable.
YIELD = "yield"
#: Yielded by an entity body: switched out by a preemption pending, back at the head of its class.
PREEMPTED = "preempted"

RQ_RT, RQ_NORMAL = 0, 1
BLOCKED, RUNNABLE, RUNNING = 0, 1, 2


class Entity:
    """A task or kthread bound to one CPU.

    Parameters
    ----------
    sim : Model
    cpu : int
        The CPU it is affine to.
    rt : bool
        SCHED_FIFO (True) or SCHED_OTHER.
    head_enqueue : bool
        Woken to the head of its class (a highpri kworker).
    """

    def __init__(self, sim, cpu: int, rt: bool, name: str, head_enqueue: bool = False,
                 weight: int = NICE_0_LOAD, initial: bool = False):
        self.cpu = sim.cpus[cpu]
        self.rq = RQ_RT if rt else RQ_NORMAL
        self.fair = not rt and sim.inp.fair.fair_policy != POLICY_RR
        self.name = name
        self.head_enqueue = head_enqueue
        self.state = BLOCKED
        self.remaining = None  # rest of a preempted burst (ns)
        self.body = None
        # struct sched_entity (reference/fair.py)
        self.weight = weight
        self.initial = initial
        self.vruntime = self.deadline = self.vlag = 0
        self.exec_start = self.sum_exec = self.prev_sum_exec = 0
        self.seq = 0
        self.sched_delayed = False      # DELAY_DEQUEUE: asleep, still queued on its CPU
        # wake-up placement (reference/placement.py)
        self.aff = -1                   # allowed-CPU mask, -1: bound to its CPU
        self.per_cpu_kthread = False    # a bound kworker
        self.last_wakee = None
        self.wakee_flips = self.wakee_flip_decay_ts = 0
        self.recent_used_cpu = -1

    def start(self, body) -> None:
        """Attach the body and run it to its first ``yield SLEEP``."""
        self.body = body
        next(body)

    def step(self, t: int):
        """Resume the body; returns the next burst length or SLEEP."""
        try:
            return self.body.send(t)
        except StopIteration:
            return SLEEP

    def __repr__(self) -> str:
        return f"<{self.name} on CPU {self.cpu.index}>"


class Cpu:
    """One CPU: run queues, the burst in progress, idle state and the tick.

    ``rdp`` is the CPU's ``struct rcu_data``, set by the model.
    """

    def __init__(self, sim, index: int):
        self.sim = sim
        self.env = sim.env
        self.index = index
        self.rq = (deque(), deque())  # RQ_RT, RQ_NORMAL
        self.curr = None
        self.state = CPU_IDLE
        self.idle_wait = None         # event the idle loop sleeps on; its value is the exit latency
        self.tick_on = False          # the periodic tick runs (not stopped by NO_HZ idle)
        self.burst_end = 0            # when the current burst ends, before stolen time
        self.stolen = 0               # irq/softirq time taken from the current burst
        self.debt = 0                 # lock time to charge to the next burst
        self.nonpreempt_until = 0     # end of the softirq section running now
        self.resched_pending = False  # a deferred preemption waits for nonpreempt_until
        self.user_from = 0            # the running burst is in user mode from here ...
        self.user_to = 0              # ... to here: the tick sees a quiescent state there
        self.watching = 0             # rcu_watching: +1 at each idle entry and exit
        self.in_irq = False           # an interrupt taken from idle is running: not in an extended QS
        self.irq_exit_at = 0          # ... until here (cpuidle.irq_from_idle())
        self.rdp = None
        self.menu = None              # the menu governor's state (cpuidle.py), if the profile has idle states
        self.menu_enter = 0           # when the CPU entered its idle state
        self.stop_tick = True         # the governor let the idle CPU stop its tick
        self.cfs = CfsRq(sim, self)   # the fair class's queue (the deque above before CFS)
        self.rq_lock = SpinLock(self)  # rq->__lock, taken by wakers for an enqueue
        self.fair_resched = False     # a fair preemption waits for a non-preemptible section's end
        self.need_resched = False     # !PREEMPTION: a switch waits for the next schedule() or cond_resched()
        self.stepping = False         # the running entity's action is being computed
        self.ending = False           # ... and it is the action at its burst's end, at now
        self.step_resched = False     # ... and asked for a preemption meanwhile
        self.ttwu_pending = 0         # wake-ups on their way to this CPU
        self.ttwu_last = -1           # when this CPU last woke a task (-1: never), for ttwu_reuse
        self.ttwu_from = self.ttwu_until = 0  # the wake-up it makes runs so, interrupts and preemption off
        self.softirq_pending = False  # RCU_SOFTIRQ raised and not yet run (left to ksoftirqd, or raised in softirq)
        self.softirq_irq_exit = 0     # an irq exit's handle_softirqs() runs, restarted so many times (0: none)
        self.proc = self.env.process(self.schedule())

    # --- the scheduler loop ------------------------------------------------
    def schedule(self):
        """__schedule() forever: run entities burst by burst, or idle."""
        env, sim = self.env, self.sim
        while True:
            ent = self.dequeue()
            if ent is None:
                self.cpu_enter_idle()
                self.idle_wait = env.event()
                exit_ns = yield self.idle_wait
                yield env.timeout(exit_ns)   # CPU_WAKING: leaving the idle state
                continue
            if self.state != CPU_BUSY:
                if not self.in_irq:  # else an interrupt's ct_irq_enter() left it already
                    self.watching += 1  # rcu_idle_exit(): leaving the extended quiescent state
                if not self.tick_on:
                    self.start_tick()
            self.state = CPU_BUSY
            self.curr = ent
            ent.state = RUNNING
            self.fair_resched = self.step_resched = self.need_resched = False
            # rcu_note_context_switch(): a context switch is a quiescent state,
            # for an expedited GP too if its IPI is waiting for one.
            self.rdp.cpu_no_qs = False
            if self.rdp.exp_need_qs:
                sim.acc = 0
                sim.rcu_report_exp_rdp(self)
                self.debt += sim.acc
            sim.counters["context_switches"] += 1
            self.user_from = self.user_to = 0
            if ent.remaining is not None:
                dur, ent.remaining = ent.remaining, None
            else:
                dur = self.step(ent, env.now + sim.inp.sched.ctxsw_ns + self.debt)
            dur += sim.inp.sched.ctxsw_ns
            while True:
                if self.step_resched and self.preempt_at_boundary(ent, dur):
                    break
                try:
                    yield from self.burst(dur)
                except simpy.Interrupt:
                    break  # preempted: try_preempt() has requeued ent
                self.user_from = self.user_to = 0
                dur = self.step(ent, env.now, ending=True)
                if dur is YIELD or dur is PREEMPTED:
                    self.step_resched = False
                    self.requeue(ent, to_tail=dur is YIELD)
                    self.curr = None
                    break
                if dur is SLEEP:
                    self.step_resched = False
                    delayed = ent.fair and self.cfs.sleep(ent)
                    self.sim.counters["delayed_dequeues"] += delayed
                    ent.state = BLOCKED
                    self.curr = None
                    if delayed:
                        self.cfs.insert(ent)
                    break

    def step(self, ent, t, ending: bool = False):
        """The running entity's action (`ending`: the one at its burst's end); a preemption it
        asks for waits for its end."""
        self.stepping, self.ending = True, ending
        try:
            return ent.step(t)
        finally:
            self.stepping = self.ending = False

    def preempt_at_boundary(self, ent, dur) -> bool:
        """try_preempt() as the burst `dur` is about to start; True if ent was switched out."""
        self.step_resched = False
        now = self.env.now
        if now < self.nonpreempt_until:
            self._defer_resched()
            return False
        ent.remaining = dur + self.debt
        self.debt = 0
        self.requeue(ent)
        self.stolen = 0
        self.curr = None
        self.sim.counters["preemptions"] += 1
        return True

    def requeue(self, ent, to_tail: bool = False) -> None:
        """The running ent goes back: into the fair queue, or at the head of its class
        (at its tail if it yields)."""
        if ent.fair:
            self.cfs.put_prev(ent)
        elif to_tail:
            self.rq[ent.rq].append(ent)
        else:
            self.rq[ent.rq].appendleft(ent)
        ent.state = RUNNABLE

    def fair_curr(self):
        """The running fair entity, or None."""
        c = self.curr
        return c if self.state == CPU_BUSY and c is not None and c.fair else None

    def resched_fair(self) -> None:
        """resched_curr() for the fair class."""
        if not (self.sim.inp.sched.preemption or self.user_from <= self.env.now < self.user_to):
            self.need_resched = True
            return  # kernel mode, !PREEMPTION: at the entity's next schedule() or cond_resched()
        self.fair_resched = True
        self.try_preempt()

    def burst(self, dur: int):
        """Run for dur (plus charged debt), then for the time stolen meanwhile."""
        dur += self.debt
        self.debt = 0
        self.burst_end = self.env.now + dur
        yield self.env.timeout(dur)
        while self.stolen:
            st, self.stolen = self.stolen, 0
            self.burst_end = self.env.now + st
            yield self.env.timeout(st)

    def cpu_enter_idle(self) -> None:
        """The switch to the idle task: a QS, and rcu_idle_enter()'s extended QS."""
        self.state = CPU_IDLE
        self.curr = None
        self.sim.last_idle_cpu = self
        self.watching += 1  # extended quiescent state
        self.rdp.cpu_no_qs = False
        self.user_from = self.user_to = 0
        placement.update_idle_core(self.sim, self.index)
        cpuidle_idle_call(self.sim, self, False)

    # --- run queues ----------------------------------------------------------
    def dequeue(self):
        if self.rq[RQ_RT]:
            return self.rq[RQ_RT].popleft()
        if self.sim.inp.fair.fair_policy != POLICY_RR:
            return self.cfs.pick()
        return self.rq[RQ_NORMAL].popleft() if self.rq[RQ_NORMAL] else None

    def nr_queued(self) -> int:
        return len(self.rq[RQ_RT]) + len(self.rq[RQ_NORMAL]) + sum(not e.sched_delayed for e in self.cfs.queued)

    def nr_running(self) -> int:
        """rq->nr_running: queued entities and the running one."""
        return self.nr_queued() + (1 if self.state != CPU_IDLE and self.curr is not None else 0)

    def available_idle(self) -> bool:
        """Idle, nothing queued, no wake-up on its way (rq->ttwu_pending)."""
        return self.state == CPU_IDLE and self.nr_queued() == 0 and self.ttwu_pending == 0

    def activate(self, ent: Entity) -> None:
        """The wake-up lands: enqueue, leave idle, or preempt a SCHED_OTHER burst."""
        sim = self.sim
        q = self.rq[ent.rq]
        curr_resched = False  # the enqueue's update_curr() rescheduled the running entity
        if ent.fair and ent.sched_delayed:
            self.cfs.requeue_delayed(ent)
        elif ent.fair:
            curr_resched = self.cfs.enqueue_wakeup(ent)
        elif ent.head_enqueue and q:
            q.appendleft(ent)
        else:
            q.append(ent)
        if self.state == CPU_IDLE:
            self.state = CPU_WAKING
            sim.counters["idle_exits"] += 1
            # The state's exit latency, and not before the interrupt or softirq the idle
            # task is in returns (do_idle() schedules then).
            lat = cpuidle_exit_ns(sim, self) if self.menu else sim.idle_exit_ns()
            self.idle_wait.succeed(max(lat, self.nonpreempt_until - self.env.now))
        elif (self.state == CPU_BUSY and ent.rq == RQ_RT and sim.inp.sched.preemption
              and self.curr is not None and self.curr.rq == RQ_NORMAL):
            self.try_preempt()
        elif (self.state == CPU_BUSY and ent.rq == RQ_RT and self.curr is not None
              and self.curr.rq == RQ_NORMAL):
            self.need_resched = True  # !PREEMPTION: resched_curr() waits for a preemption point
        elif self.state == CPU_BUSY and ent.fair and (curr_resched or self.cfs.wakeup_preempt(ent)):
            self.resched_fair()

    def tif_need_resched(self) -> bool:
        """The running entity's TIF_NEED_RESCHED: resched_curr() was called for it, and the
        switch waits for its next preemption point."""
        return self.need_resched or self.fair_resched or self.resched_pending or self.step_resched

    def in_serving_softirq(self) -> bool:
        """This CPU runs handle_softirqs(), an irq exit's or ksoftirqd/N's: an interrupt taken
        meanwhile only raises its softirqs, for that handle_softirqs() to restart for."""
        return self.softirq_irq_exit > 0 or (self.state == CPU_BUSY and self.curr is self.rdp.ksoftirqd)

    def try_preempt(self) -> None:
        """Preempt now, or when the softirq section in progress ends, or when the
        running entity's action that asked for it ends."""
        if self.stepping:
            self.step_resched = True
            return
        now = self.env.now
        if now < self.nonpreempt_until:
            self._defer_resched()
            return
        ent = self.curr
        ent.remaining = max(0, self.burst_end + self.stolen - now)
        self.requeue(ent)
        self.stolen = 0
        self.curr = None
        self.sim.counters["preemptions"] += 1
        self.proc.interrupt()

    def _defer_resched(self) -> None:
        if not self.resched_pending:
            self.resched_pending = True
            self.env.timeout(self.nonpreempt_until - self.env.now).callbacks.append(self._resched)

    def _resched(self, _event) -> None:
        """Leaving the non-preemptible section: a queued SCHED_FIFO entity, or a fair
        reschedule asked meanwhile, preempts."""
        self.resched_pending = False
        if (self.state == CPU_BUSY and self.curr is not None and self.curr.rq == RQ_NORMAL
                and (self.rq[RQ_RT] or self.fair_resched)):
            self.try_preempt()

    def steal(self, dur: int) -> None:
        """Interrupt or softirq time on this CPU: the running burst ends later."""
        if self.state == CPU_BUSY:
            self.stolen += dur
        self.nonpreempt_until = max(self.nonpreempt_until, self.env.now + dur)

    # --- the scheduling-clock tick ------------------------------------------
    def start_tick(self) -> None:
        """Restart the tick at the next jiffy boundary.

        The timer is armed now, not when the process first runs: leaving idle,
        do_idle() restarts the tick in tick_nohz_idle_exit() before
        schedule_idle() runs the woken entity (kernel/sched/idle.c), so a tick
        that falls on the same nanosecond as the end of that entity's first
        burst comes first, as in the engine's cpu_pick().
        """
        env, jiffy = self.env, self.sim.inp.sched.jiffy_ns
        self.tick_on = True
        env.process(self.tick(env.timeout(jiffy - env.now % jiffy)))

    def tick(self, first):
        """Periodic tick on jiffy boundaries, from the armed timer `first`; stops
        when the CPU is NO_HZ idle."""
        env, jiffy = self.env, self.sim.inp.sched.jiffy_ns
        yield first
        while True:
            if self.state != CPU_BUSY and self.rdp.cblist.n_cbs() == 0 and self.stop_tick:
                # rcu_needs_cpu() is false and the governor did not keep the tick.
                self.tick_on = False
                return
            if self.state == CPU_BUSY and self.cfs.policy != POLICY_RR and self.cfs.tick_resched():
                self.resched_fair()  # entity_tick()
            cost = self.sim.rcu_sched_clock_irq(self)
            if self.state == CPU_IDLE:
                cpuidle_irq(self.sim, self, True, cost)
            yield env.timeout(jiffy)


def sched_set_normal(sim, task) -> None:
    """sched_set_normal(current, 0) by the running SCHED_FIFO task: out of the RT class, into
    the fair class at nice 0, placed (lag 0) before it is the class's current entity, then
    set_next_entity(); switched_to_fair()'s reschedule picks it again (eligible at V under
    EEVDF's RUN_TO_PARITY; at min_vruntime, leftmost, under CFS)."""
    if task.rq != RQ_RT:
        return
    cfs = task.cpu.cfs
    task.weight = NICE_0_LOAD
    task.vlag = 0
    task.initial = False
    if cfs.policy == POLICY_EEVDF:
        cfs.place(task)  # still RT: not counted as the running fair entity
        task.vlag = task.deadline  # RUN_TO_PARITY's mark
    elif cfs.policy == POLICY_CFS:
        task.vruntime = cfs.min_vruntime
    task.rq = RQ_NORMAL
    task.fair = sim.inp.fair.fair_policy != POLICY_RR  # before CFS: the round-robin list
    task.exec_start = sim.env.now
    task.prev_sum_exec = task.sum_exec


def wake(sim, ent: Entity, from_cpu, t: int) -> None:
    """try_to_wake_up(): ent becomes runnable at time t (>= now); the waker's cost,
    if any, is its caller's."""
    ttwu(sim, ent, from_cpu, t, 0, paid=False)


def try_to_wake_up(sim, ent: Entity, from_cpu, t: int, local_ns: int) -> int:
    """try_to_wake_up() by a waker on from_cpu that pays for it: returns the waker's
    time, local_ns plus, with a topology, the lines it pulls by distance and its spin
    on the target's rq lock (the engine's try_to_wake_up())."""
    return ttwu(sim, ent, from_cpu, t, local_ns, paid=True)


def wake_from_acc(sim, ent: Entity, from_cpu, local_ns: int) -> None:
    """try_to_wake_up() made by the code running now, at the end of the time it has taken
    so far (sim.acc), which the wake-up extends (the engine's wake_from_acc())."""
    sim.acc += try_to_wake_up(sim, ent, from_cpu, sim.env.now + sim.acc, local_ns)


def ttwu(sim, ent: Entity, from_cpu, t: int, local_ns: int, paid: bool) -> int:
    if ent.state != BLOCKED:
        return local_ns
    ent.state = RUNNABLE
    sim.counters["wakeups"] += 1
    reuse = 0
    if paid and from_cpu is not None and len(sim.inp.sched.ttwu_reuse_since_ns):
        reuse = ttwu_reuse(sim, from_cpu, t)
        local_ns = max(local_ns + reuse, 0)
    cost = [local_ns]
    prev = ent.cpu
    if ent.aff >= 0 and ent.fair and not ent.sched_delayed:  # a delayed one is still queued
        placement.set_task_cpu(sim, ent, sim.cpus[placement.select_task_rq_fair(sim, ent, from_cpu)])
    if paid and len(sim.inp.topology.cpu_core) and from_cpu is not None:
        if prev is not from_cpu:
            cost[0] += line_cost(sim, from_cpu, prev)  # p->pi_lock, p->on_rq, p->on_cpu
        # The rq lock is asked before the local path, which holds it for the enqueue.
        delay = ttwu_queue(sim, from_cpu, ent.cpu, t + cost[0] - local_ns, cost,
                           max(sim.inp.sched.ttwu_ns + reuse, 0))
    else:
        delay = ttwu_queue(sim, from_cpu, ent.cpu, t + cost[0], None, 0)
    if paid and from_cpu is not None:
        if not from_cpu.ttwu_from <= t <= from_cpu.ttwu_until:  # not back to back with the last
            from_cpu.ttwu_from = t
        from_cpu.ttwu_until = t + cost[0]
    t += cost[0] + delay
    if t <= sim.env.now or (from_cpu is ent.cpu and from_cpu.ending):
        # ttwu_queue()'s local path from the action that ended a burst here (the engine's ttwu()).
        ent.cpu.activate(ent)
    else:
        ent.cpu.ttwu_pending += 1
        sim.env.timeout(t - sim.env.now).callbacks.append(lambda _ev: ev_wake(ent))
    return cost[0]


def ttwu_reuse(sim, cpu, t: int) -> int:
    """A wake-up's cost from ttwu_ns by the time since cpu last woke a task (the engine's
    ttwu_reuse())."""
    i = len(sim.inp.sched.ttwu_reuse_since_ns)
    if cpu.ttwu_last >= 0:
        i = int(np.searchsorted(sim.inp.sched.ttwu_reuse_since_ns, t - cpu.ttwu_last, side="left"))
    cpu.ttwu_last = t
    return int(sim.inp.sched.ttwu_reuse_delta_ns[i])


def ev_wake(ent) -> None:
    """A wake-up on its way lands: ent joins its CPU's run queue."""
    ent.cpu.ttwu_pending -= 1
    ent.cpu.activate(ent)


def ttwu_queue(sim, waker, target, t: int, cost, hold: int) -> int:
    """ttwu_queue_cond(): the waker's own CPU, or a busy target in its LLC, is enqueued
    directly under the target's rq lock; otherwise the wakelist, woken by its polling
    flag (POLL or an MWAIT idle state: one line transfer) or by an IPI. No topology:
    always an IPI.  With `cost` (a one-item list, given with a topology only) the waker
    pays for it."""
    if waker is target:
        sim.counters["wakeups_local"] += 1
        if cost is not None:
            cost[0] += rq_lock(sim, target, waker, t, hold)
        return 0
    if waker is None or not len(sim.inp.topology.cpu_core):
        sim.counters["wakeups_ipi"] += 1
        return sim.inp.sched.wakeup_busy_ns
    line = line_cost(sim, waker, target)
    idle = target.state == CPU_IDLE
    if not idle and sim.inp.topology.cpu_llc[waker.index] == sim.inp.topology.cpu_llc[target.index]:
        sim.counters["wakeups_remote_enqueue"] += 1
        if cost is not None:
            cost[0] += rq_lock(sim, target, waker, t, hold)
            return 0
        return line
    menu = target.menu
    if idle and menu and (sim.inp.cpuidle.idle_mwait[menu.state] or (menu.state == 0 and menu.polling0)):
        sim.counters["wakeups_polling"] += 1
        if cost is not None:
            cost[0] += line
        return line
    sim.counters["wakeups_ipi"] += 1
    if cost is not None:
        cost[0] += sim.inp.tree_exp.ipi_send_ns
    return sim.inp.sched.wakeup_busy_ns


def rq_lock(sim, cpu, taker, t: int, hold: int) -> int:
    """taker takes cpu's rq lock at t for an enqueue held `hold` (ttwu_ns, or its price by
    ttwu_reuse()): the line from its last holder, and the spin while another waker holds it."""
    lock = cpu.rq_lock
    line = line_cost(sim, lock.cpu, taker) if lock.cpu is not taker else 0
    wait = lock.wait(t + line, hold)
    lock.cpu = taker
    sim.counters["rq_lock_wait_ns"] += wait
    return line + wait


def urgent_at(sim, t: int, callback) -> None:
    """Run callback at t before the other events of that instant, as the engine
    orders interrupt deliveries (Event.succeed() with SimPy's URGENT priority)."""
    ev = sim.env.event()
    ev.callbacks.append(callback)
    ev._ok, ev._value = True, None
    sim.env.schedule(ev, simpy.events.URGENT, t - sim.env.now)
