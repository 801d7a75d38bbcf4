# The call_rcu_load tasks: operations of kernel work, each queueing call_rcu() callbacks,
# then maybe a non-preemptible section, then maybe a sleep.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int call_rcu_load_ents(cl) except -1:
    """The call_rcu_load tasks' entities."""
    return len(cl.bg_cpu)


cdef int call_rcu_load_init(Engine self, cl, int e) except -1:
    """The call_rcu_load tasks, runnable from the start."""
    cdef int i
    self.bg_work_ns = np.ascontiguousarray(cl.bg_work_ns, dtype=np.int64)
    self.bg_groups_per_op = np.ascontiguousarray(cl.bg_groups_per_op, dtype=np.float64)
    self.bg_burst = np.ascontiguousarray(cl.bg_burst, dtype=np.intc)
    self.bg_cb_kind = np.ascontiguousarray(cl.bg_cb_kind, dtype=np.intc)
    self.bg_lazy = np.ascontiguousarray(cl.bg_lazy, dtype=np.intc)
    self.bg_sleep_jiffies_max = np.ascontiguousarray(cl.bg_sleep_jiffies_max, dtype=np.int64)
    if len(cl.bg_cpu):
        self.cbl_fine = <i64 *> calloc(FINE_SLOTS, sizeof(i64))
        if self.cbl_fine == NULL:
            raise MemoryError()
        self.cbl_min_ns = -1
    self.bg_sec_first = np.ascontiguousarray(cl.bg_sec_first, dtype=np.intc)
    self.bg_sec_count = np.ascontiguousarray(cl.bg_sec_count, dtype=np.intc)
    self.bg_sec_ns = np.ascontiguousarray(cl.bg_sec_ns, dtype=np.int64)
    self.bg_sec_cum = np.ascontiguousarray(cl.bg_sec_cum, dtype=np.float64)
    for i in range(len(cl.bg_cpu)):
        self.ents[e].kind = ENT_BG
        self.ents[e].cpu = cl.bg_cpu[i]
        self.ents[e].idx = cl.bg_workload[i]
        self.ents[e].rq = RQ_NORMAL
        self.ents[e].weight = cl.bg_weight[self.ents[e].idx]
        self.ents[e].phase = BG_WORK
        self.ents[e].state = ST_RUNNABLE
        push(self, 0, PRIO_NORMAL, EV_WAKE, e, 0)
        e += 1
    return e


cdef i64 call_rcu_load_next(Engine self, int e, i64 t0) except -2:
    cdef ent_t *ep = &self.ents[e]
    if ep.phase == BG_LOCKED:
        return ep.sec_ns
    ep.phase = BG_WORK  # woken by its timer after a sleep, or started
    return exponential_ns(self, self.bg_work_ns[ep.idx])


cdef i64 call_rcu_load(Engine self, int e) except -2:
    """An operation's work ends: queue its callbacks, then maybe a non-preemptible
    section (one row of the section table, by its probability per operation), then
    maybe a sleep (bg_next())."""
    cdef ent_t *ep = &self.ents[e]
    cdef int w = ep.idx, c = ep.cpu, k, n
    cdef double mean, u
    if ep.phase == BG_LOCKED:
        ep.phase = BG_WORK  # preempt_enable(): a waiting RT task runs now
        return bg_next(self, e)
    if ep.phase == BG_SLEEPING:
        # 1 to sleep_jiffies_max jiffies (torture_random() % max + 1), as a sync_loop task sleeps.
        return schedule_timeout_idle(self, e, random_u32(self)
                                     % self.bg_sleep_jiffies_max[w] + 1)
    # call_rcu() groups: the integer part always, the fraction as a probability.
    mean = self.bg_groups_per_op[w]
    n = <int> mean
    if random_unit(self) < mean - n:
        n += 1
    n *= self.bg_burst[w]
    self.acc = 0
    for k in range(n):
        call_rcu(self, c, self.bg_cb_kind[w], -1, self.bg_lazy[w])
    self.cbl_queued += n
    self.cpus[c].debt += self.acc + n * self.call_rcu_ns
    u = random_unit(self)
    for k in range(self.bg_sec_first[w], self.bg_sec_first[w] + self.bg_sec_count[w]):
        if u < self.bg_sec_cum[k]:
            ep.phase = BG_LOCKED
            ep.sec_ns = self.bg_sec_ns[k]
            return ep.sec_ns
    return bg_next(self, e)


cdef i64 bg_next(Engine self, int e) except -2:
    """The next operation's work; where the workload sleeps between operations, first a
    burst of nothing but the time owed (the call_rcu() calls), at whose end it sleeps."""
    if self.bg_sleep_jiffies_max[self.ents[e].idx]:
        self.ents[e].phase = BG_SLEEPING
        return 0
    return exponential_ns(self, self.bg_work_ns[self.ents[e].idx])
