# The scheduling-clock tick (kernel/time/tick-sched.c, sched_tick()): periodic on a busy
# CPU, stopped on an idle one unless RCU needs it; the time slice it ends, RCU's
# rcu_sched_clock_irq(), the load balancer's trigger.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef void ev_tick(Engine self, int c, i64 arrived) except *:
    """The periodic scheduling-clock tick, at its expiry (a jiffy boundary) or, when the
    noise workload delays the timer interrupt, at its arrival; it stops on a NO_HZ-idle
    CPU, and the next expiry is the jiffy boundary after it (hrtimer_forward())."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 cost
    if not arrived and timer_irq_late(self, c, EV_TICK, c, 1):
        return
    if cp.state != CPU_BUSY and (cp.offloaded or n_cbs(self, cp) == 0) and cp.stop_tick and not self.hz_periodic:
        # rcu_needs_cpu() is false and the governor did not keep the tick.
        cp.tick_on = 0
        nohz_idle_update(self, c)
        return
    push(self, (jiffies(self) + 1) * self.jiffy_ns, PRIO_NORMAL, EV_TICK, c, 0)
    tick_slice(self, c)  # the interrupted entity's slice ends at this irq exit
    cost = rcu_sched_clock_irq(self, c)
    if self.n_unbound and self.n_levels:
        trigger_load_balance(self, c)
    if cp.state == CPU_IDLE:
        cpuidle_irq(self, c, True, cost)


cdef void tick_slice(Engine self, int c) except *:
    """SCHED_NORMAL time sharing at the tick: the fair class's entity_tick(), or
    before CFS a one-jiffy round robin (krcud/N at nice -19 keeping the CPU)."""
    cdef cpu_t *cp = &self.cpus[c]
    if self.fair_policy != POLICY_RR:
        if cp.state == CPU_BUSY and fair_tick_resched(self, c):
            resched_fair(self, c)
        return
    if (cp.state != CPU_BUSY or cp.rq_head[RQ_NORMAL] < 0 or self.ents[cp.curr].rq != RQ_NORMAL
            or self.now - cp.run_start < self.jiffy_ns):
        return
    if not (self.preemption or cp.user_from <= self.now < cp.user_to or might_resched(self, c)):
        cp.need_resched = 1  # kernel mode, !PREEMPTION: switch at the next preemption point
        return
    if self.now < cp.nonpreempt_until or in_reader(self, c) and not self.rwl_preemptible[self.ents[cp.curr].idx]:
        return
    if burst_nopreempt(self, c) or self.ents[cp.curr].kind == ENT_KRCUD:
        return  # krcud/N at nice -19 keeps the CPU against nice-0 tasks
    preempt(self, c, True)
