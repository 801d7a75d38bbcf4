# OS noise (the noise workload): per-CPU device and timer interrupts and short
# bursts of unrelated kthread work, each a Poisson stream with lognormal
# durations, and the late arrival of each CPU's local timer interrupt.  An
# interrupt steals time from the running burst; one taken from idle holds the CPU
# out of its extended quiescent state while it runs (cpuidle_irq()).  A kthread
# burst is an entity of its own (SCHED_OTHER) that wakes the CPU, runs and
# context-switches like any other.  A host stall (a virtual CPU's thread not
# running, with a measured length) steals time from the running burst, and
# leaves a halted CPU as it is.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int noise_ents(nz) except -1:
    """The noise kthreads' entities, one per CPU with a kthread stream."""
    return int(np.count_nonzero(nz.kthread_gap_ns))


cdef void noise_init(Engine self, nz, int e) except *:
    """Noise streams per CPU, the first arrivals, and a noise kthread where needed."""
    cdef int c
    self.nz_irq_gap_ns = np.ascontiguousarray(nz.irq_gap_ns, dtype=np.int64)
    self.nz_irq_mu = np.ascontiguousarray(nz.irq_mu, dtype=np.float64)
    self.nz_irq_sigma = np.ascontiguousarray(nz.irq_sigma, dtype=np.float64)
    self.nz_kt_gap_ns = np.ascontiguousarray(nz.kthread_gap_ns, dtype=np.int64)
    self.nz_kt_mu = np.ascontiguousarray(nz.kthread_mu, dtype=np.float64)
    self.nz_kt_sigma = np.ascontiguousarray(nz.kthread_sigma, dtype=np.float64)
    self.nz_timer_delay = np.ascontiguousarray(nz.timer_delay, dtype=np.int8)
    self.nz_timer_q_ns = np.ascontiguousarray(np.concatenate([nz.timer_busy_q_ns, nz.timer_idle_q_ns]),
                                              dtype=np.int64)
    self.nz_timer_tail_ns = np.ascontiguousarray(np.concatenate([nz.timer_busy_tail_ns, nz.timer_idle_tail_ns]),
                                                 dtype=np.int64)
    self.nz_host_gap_ns = np.ascontiguousarray(nz.host_gap_ns, dtype=np.int64)
    self.nz_host_q_ns = np.ascontiguousarray(nz.host_q_ns, dtype=np.int64)
    self.nz_host_tail_ns = np.ascontiguousarray(nz.host_tail_ns, dtype=np.int64)
    self.nz_timer_on = bool(np.any(nz.timer_delay))
    for c in range(self.nr_cpus):
        self.cpus[c].noise_ent = -1
        if self.nz_irq_gap_ns[c] > 0:
            push(self, exponential_ns(self, self.nz_irq_gap_ns[c]), PRIO_NORMAL, EV_NOISE_IRQ, c, 0)
        if self.nz_host_gap_ns[c] > 0:
            push(self, exponential_ns(self, self.nz_host_gap_ns[c]), PRIO_NORMAL, EV_NOISE_HOST, c, 0)
        if self.nz_kt_gap_ns[c] > 0:
            self.cpus[c].noise_ent = e
            self.ents[e].kind = ENT_NOISE
            self.ents[e].cpu = c
            self.ents[e].idx = c
            self.ents[e].rq = RQ_NORMAL
            e += 1
            push(self, exponential_ns(self, self.nz_kt_gap_ns[c]), PRIO_NORMAL, EV_NOISE_KTHREAD, c, 0)
    self.n_ents = e


cdef i64 timer_irq_arrival(Engine self, int c) except -1:
    """When the local timer interrupt of CPU c for the expiry now (a jiffy boundary)
    arrives: later by the noise workload's timer delay, drawn by whether every CPU is
    busy now (an emulator's timer thread then waits for a host core), once per expiry:
    the tick and the timers expiring with it share the interrupt."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 j = jiffies(self)
    cdef int x, k = 0
    if not self.nz_timer_delay[c]:
        return self.now
    if cp.timer_irq_jiffy != j + 1:
        for x in range(self.nr_cpus):
            if self.cpus[x].state != CPU_BUSY:
                k = self.nr_cpus  # some CPU is idle
                break
        cp.timer_irq_jiffy = j + 1
        cp.timer_irq_at = self.now + quantile_draw_ns(self, self.nz_timer_q_ns[k + c], self.nz_timer_tail_ns[k + c])
        self.n_timer_irqs_late += 1
        self.n_timer_irq_late_ns += cp.timer_irq_at - self.now
    return cp.timer_irq_at


cdef void ev_noise_irq(Engine self, int c) except *:
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 dur = lognormal_ns(self, self.nz_irq_mu[c], self.nz_irq_sigma[c])
    self.n_noise_irqs += 1
    self.n_noise_irq_ns += dur
    if cp.state == CPU_IDLE:
        cpuidle_irq(self, c, False, dur)
    else:
        steal(self, c, dur)
    push(self, self.now + exponential_ns(self, self.nz_irq_gap_ns[c]), PRIO_NORMAL, EV_NOISE_IRQ, c, 0)


cdef void ev_noise_host(Engine self, int c) except *:
    """The host stalls virtual CPU c: what it runs stops for the drawn time (steal); a
    halted CPU runs nothing to stop, and stays in its extended quiescent state."""
    cdef i64 dur = quantile_draw_ns(self, self.nz_host_q_ns[c], self.nz_host_tail_ns[c])
    if self.cpus[c].state == CPU_BUSY:
        self.n_noise_host += 1
        self.n_noise_host_ns += dur
        steal(self, c, dur)
    push(self, self.now + exponential_ns(self, self.nz_host_gap_ns[c]), PRIO_NORMAL, EV_NOISE_HOST, c, 0)


cdef void ev_noise_kthread(Engine self, int c) except *:
    """A work item for the CPU's noise kthread; it runs them one burst each."""
    cdef int e = self.cpus[c].noise_ent
    self.cpus[c].noise_work += 1
    if self.ents[e].state == ST_BLOCKED:
        wake(self, e, c, self.now)
    push(self, self.now + exponential_ns(self, self.nz_kt_gap_ns[c]), PRIO_NORMAL, EV_NOISE_KTHREAD, c, 0)


cdef i64 noise_kthread_next(Engine self, int e, i64 t0) except -2:
    cdef int c = self.ents[e].idx
    self.cpus[c].noise_work -= 1
    self.n_noise_bursts += 1
    return lognormal_ns(self, self.nz_kt_mu[c], self.nz_kt_sigma[c])


cdef i64 noise_kthread(Engine self, int e) except -2:
    """The burst ends: run the next queued item, or sleep."""
    if self.cpus[self.ents[e].idx].noise_work > 0:
        return noise_kthread_next(self, e, self.now)
    return -1
