# The rt_latency_probe task (amlat): a SCHED_FIFO task woken by a periodic timer
# interrupt (the RTC irq), whose scheduling latency it records.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int rt_latency_ents(rl) except -1:
    """The probe tasks' entities."""
    return len(rl.probe_cpu)


cdef int rt_latency_init(Engine self, rl, int e) except -1:
    """The probe tasks; each sleeps until its first timer interrupt."""
    cdef int i, c
    self.probe_period_ns = np.ascontiguousarray(rl.probe_period_ns, dtype=np.int64)
    self.probe_run_ns = np.ascontiguousarray(rl.probe_run_ns, dtype=np.int64)
    for c in range(self.nr_cpus):
        self.cpus[c].probe_next = (<i64> 1) << 62
        self.cpus[c].probe_runnable_at = (<i64> 1) << 62
    for i in range(len(rl.probe_cpu)):
        # amlat: a SCHED_FIFO task sleeping until the next RTC interrupt.
        self.ents[e].kind = ENT_RT_PROBE
        self.ents[e].cpu = rl.probe_cpu[i]
        self.ents[e].idx = rl.probe_workload[i]
        self.ents[e].rq = RQ_RT
        self.ents[e].loops_left = rl.probe_samples[self.ents[e].idx]
        self.tasks_left += 1
        push(self, self.probe_period_ns[self.ents[e].idx], PRIO_NORMAL, EV_PROBE_TIMER, e, 0)
        note_probe_timer(self, self.ents[e].cpu, self.probe_period_ns[self.ents[e].idx])
        e += 1
    return e


cdef inline bint probe_waiting(Engine self, cpu_t *cp, i64 t) noexcept:
    """A probe on this CPU is runnable at t: woken already, or by its next interrupt.

    NOTE: callback invocation is computed whole when it starts, so the
    rcu-low-lat check "an RT task is waiting" (rq_has_rt_task()) reads the
    probe's wake-up and periodic timer instead of waiting for their events.
    """
    return cp.probe_runnable_at <= t or cp.probe_next + self.tick_ns <= t


cdef void note_probe_timer(Engine self, int c, i64 t) noexcept:
    """Remember the earliest coming probe interrupt on CPU c."""
    cdef cpu_t *cp = &self.cpus[c]
    if cp.probe_next <= self.now or t < cp.probe_next:
        cp.probe_next = t


cdef void ev_probe_timer(Engine self, int e) except *:
    """The probe's timer interrupt (the RTC irq): the handler wakes the probe, whose
    scheduling latency runs from this instant until it runs."""
    cdef ent_t *ep = &self.ents[e]
    cdef int c = ep.cpu
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 cost = self.tick_ns  # the RTC interrupt costs a timer interrupt
    if ep.loops_left <= 0:
        return
    push(self, self.now + self.probe_period_ns[ep.idx], PRIO_NORMAL, EV_PROBE_TIMER, e, 0)
    note_probe_timer(self, c, self.now + self.probe_period_ns[ep.idx])
    # invoke_softirq() at irq exit: softirq work left for ksoftirqd runs here, unless
    # the interrupt came in softirq context (a softirq or ksoftirqd's do_softirq()).
    if (not self.ksoftirqd_does_its_job and cp.softirq_pending and self.now >= cp.nonpreempt_until
            and not (cp.state == CPU_BUSY and self.ents[cp.curr].kind == ENT_RCUC)):
        cost += do_softirq(self, c, self.now + cost)
    steal(self, c, cost)
    if ep.state == ST_BLOCKED:
        ep.t_wake = self.now
        cp.probe_runnable_at = self.now + cost
        wake(self, e, c, self.now + cost)


cdef i64 rt_latency_probe_next(Engine self, int e, i64 t0) except -2:
    """The probe runs at t0 (after the context switch): record its latency."""
    cdef ent_t *ep = &self.ents[e]
    cdef i64 cap
    if self.lat_n == self.lat_cap:
        cap = max(1024, 2 * self.lat_cap)
        self.lat_rec = <i64 *> realloc(self.lat_rec, cap * sizeof(i64))
        if self.lat_rec == NULL:
            raise MemoryError()
        self.lat_cap = cap
    self.lat_rec[self.lat_n] = t0 - ep.t_wake
    self.lat_n += 1
    self.cpus[ep.cpu].probe_runnable_at = (<i64> 1) << 62
    ep.loops_left -= 1
    return self.probe_run_ns[ep.idx]


cdef i64 rt_latency_probe(Engine self, int e) except -2:
    if self.ents[e].loops_left == 0:
        self.tasks_left -= 1
        self.ents[e].loops_left = -1
    return -1
