# The optional trace buffer (off by default): a typed record per traced event,
# turned into Chrome trace-event JSON and ftrace text by rcusim's trace writers.
# Hooks elsewhere are `if self.trace_on: trace(self, ...)`.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef void trace(Engine self, i64 t, int kind, int cpu, int ent, i64 gp_seq, i64 arg, i64 arg2,
                int arg3=0) noexcept:
    cdef trace_rec_t *rec
    cdef i64 cap
    if self.trace_n == self.trace_cap:
        cap = min(max(4096, 2 * self.trace_cap), self.trace_max)
        rec = NULL if cap <= self.trace_cap else <trace_rec_t *> realloc(self.trace_buf, cap * sizeof(trace_rec_t))
        if rec == NULL:
            self.trace_overflow = 1
            self.trace_on = 0
            return
        self.trace_buf = rec
        self.trace_cap = cap
    rec = &self.trace_buf[self.trace_n]
    rec.t = t
    rec.cpu = cpu
    rec.ent = ent
    rec.kind = kind
    rec.arg3 = arg3
    rec.gp_seq = gp_seq
    rec.arg = arg
    rec.arg2 = arg2
    self.trace_n += 1


cdef i64 trace_qs_mask(Engine self, int n, u64 mask, i64 seq, int how) noexcept:
    """TR_QS (arg = how) for each CPU of leaf n in mask."""
    cdef i64 count = 0
    cdef int bit
    while mask:
        bit = ctz64(mask)
        mask &= mask - 1
        trace(self, self.now + self.acc, TR_QS, self.nodes[n].grplo + bit, -1, seq, how, 0)
        count += 1
    return count


cdef inline void trace_rcu_nocb_wake(Engine self, int c, int reason) noexcept:
    """TR_NOCB_WAKE for offloaded CPU c, reason NOCB_TPS_*."""
    if self.trace_on:
        trace(self, self.now + self.acc, TR_NOCB_WAKE, c, self.cpus[c].curr, 0, reason, 0)
