# The readers workload: tasks in rcu_read_lock() / rcu_read_unlock() loops, one per CPU
# of each readers workload, sections and gaps of set or exponential lengths, sleeping or
# busy between sections. What their sections do to grace periods is tree_plugin.pxi's.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int readers_ents(r) except -1:
    """The reader tasks' entities."""
    return len(r.cpu)


cdef int rcu_readers_init(Engine self, r, int e) except -1:
    """Reader tasks, one per CPU of each readers workload."""
    cdef int i, k, c
    self.n_rwl = len(r.len_ns)
    self.rwl_len_ns = <i64 *> malloc((self.n_rwl + 1) * sizeof(i64))
    self.rwl_gap_ns = <i64 *> malloc((self.n_rwl + 1) * sizeof(i64))
    self.rwl_len_exp = <int *> malloc((self.n_rwl + 1) * sizeof(int))
    self.rwl_gap_busy = <int *> malloc((self.n_rwl + 1) * sizeof(int))
    self.rwl_preemptible = <int *> malloc((self.n_rwl + 1) * sizeof(int))
    if (self.rwl_len_ns == NULL or self.rwl_gap_ns == NULL or self.rwl_len_exp == NULL
            or self.rwl_gap_busy == NULL or self.rwl_preemptible == NULL):
        raise MemoryError()
    for k in range(self.n_rwl):
        self.rwl_len_ns[k] = r.len_ns[k]
        self.rwl_gap_ns[k] = r.gap_ns[k]
        self.rwl_len_exp[k] = r.len_exp[k]
        self.rwl_gap_busy[k] = r.gap_busy[k]
        self.rwl_preemptible[k] = r.preemptible[k]
        if self.rwl_preemptible[k]:
            self.preemptible_readers = 1
    self.reader_first = e
    for i in range(len(r.cpu)):
        c = r.cpu[i]
        self.cpus[c].reader = e
        self.ents[e].kind = ENT_READER
        self.ents[e].cpu = c
        self.ents[e].idx = r.workload[i]
        self.ents[e].rq = RQ_RT if r.rt[r.workload[i]] else RQ_NORMAL
        self.ents[e].weight = r.weight[r.workload[i]]
        self.ents[e].phase = RD_OUT
        e += 1
    self.n_readers = e - self.reader_first
    return e


cdef void rcu_readers_start(Engine self) except *:
    """Each reader starts after an exponential gap (a random draw per reader, in order)."""
    cdef int e
    for e in range(self.reader_first, self.reader_first + self.n_readers):
        self.ents[e].state = ST_RUNNABLE
        push(self, exponential_ns(self, self.rwl_gap_ns[self.ents[e].idx]), PRIO_NORMAL, EV_WAKE, e, 0)


cdef i64 rcu_reader_next(Engine self, int e, i64 t0) except -2:
    """rcu_read_lock(): a new read-side critical section begins at t0."""
    cdef ent_t *ep = &self.ents[e]
    cdef int w = ep.idx
    ep.phase = RD_IN
    ep.rd_start = t0
    ep.rd_gpc0 = self.gp_completions[0]
    ep.rd_gpc1 = self.gp_completions[1]
    if self.rwl_len_exp[w]:
        return exponential_ns(self, self.rwl_len_ns[w])
    return self.rwl_len_ns[w]


cdef i64 rcu_reader(Engine self, int e) except -2:
    cdef ent_t *ep = &self.ents[e]
    cdef int w = ep.idx
    cdef i64 gap
    if ep.phase == RD_OUT:
        if cond_resched(self, ep.cpu):
            return -1
        return rcu_reader_next(self, e, self.now)
    self.acc = 0
    rcu_read_unlock(self, e)
    self.cpus[ep.cpu].debt += self.acc
    ep.phase = RD_OUT
    gap = exponential_ns(self, self.rwl_gap_ns[w])
    if self.rwl_gap_busy[w]:
        if gap > 0:
            return gap
        if cond_resched(self, ep.cpu):
            return -1
        return rcu_reader_next(self, e, self.now)
    push(self, self.now + gap, PRIO_NORMAL, EV_WAKE, e, 0)  # sleeps through the gap
    return -1
