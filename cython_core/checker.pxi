# The safety checker, always on: a GP must wait for every reader that began
# before it, no synchronize_rcu*() caller or callback may finish before a whole
# GP, and rcu_barrier() may return only after every callback queued before it.
# A violation is recorded with CPU, entity and gp_seq.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef void checker_init(Engine self) except *:
    self.violations = []
    self.last_gp_start[0] = self.last_gp_start[1] = -(1 << 62)
    if self.barrier_check:
        checker_barrier_init(self)


cdef void violation(Engine self, str what) except *:
    self.n_violations += 1
    if len(self.violations) < 100:
        self.violations.append(what)


cdef void check_reader(Engine self, int e) except *:
    """At rcu_read_unlock(): did a whole GP of either flavour fit inside the section?"""
    cdef ent_t *ep = &self.ents[e]
    cdef i64 spanned
    cdef int f
    self.n_readers_checked += 1
    for f in range(2):
        spanned = self.gp_completions[f] - (ep.rd_gpc1 if f else ep.rd_gpc0)
        self.reader_pipe[f][spanned if spanned < 2 else 2] += 1
        # GP starts are monotonic per flavour: checking the last completed one suffices.
        if spanned > 0 and self.last_gp_start[f] > ep.rd_start:
            violation(self, 
                f"reader on CPU {ep.cpu} (entity {e}) ran from {ep.rd_start} ns to {self.now} ns, "
                f"across the whole {'expedited' if f else 'normal'} grace period gp_seq "
                f"{self.last_gp_seq[f]} ({self.last_gp_start[f]} ns to its end before {self.now} ns)")


cdef int check_request(Engine self, int e, i64 t_end) except -1:
    """A synchronize_rcu*() returns: a GP of its flavour must have started after the call
    (a call_rcu_hurry() returns at once; its callback is checked when invoked)."""
    cdef int f = self.wl_prim[self.task_wl[e]]
    cdef i64 t_call = self.ents[e].t_call
    if f == PRIM_CALL_RCU_HURRY:
        return 0
    if self.last_gp_start[f] < t_call:
        violation(self, 
            f"{'synchronize_rcu_expedited' if f else 'synchronize_rcu'}() by task {e} on CPU "
            f"{self.ents[e].cpu}, called at {t_call} ns, returned at {t_end} ns before any "
            f"{'expedited' if f else 'normal'} grace period started after the call "
            f"(last completed: gp_seq {self.last_gp_seq[f]}, started {self.last_gp_start[f]} ns)")
    return 0


cdef int check_callback(Engine self, int cb, int c) except -1:
    """A callback is invoked: a normal GP must have started after its call_rcu(). Not
    rcu_barrier()'s own: entrained behind done callbacks, it is done with them."""
    if self.cbs[cb].kind != CB_BARRIER and self.last_gp_start[0] < self.cbs[cb].t_queued:
        violation(self, 
            f"callback queued on CPU {c} at {self.cbs[cb].t_queued} ns invoked at {self.now} ns "
            f"before a grace period started after it (last completed: gp_seq "
            f"{self.last_gp_seq[0]}, started {self.last_gp_start[0]} ns)")
    return 0


cdef void check_kvfree(Engine self, int c, i64 t_last) except *:
    """kvfree_rcu() objects may be freed only after a GP that began after their call."""
    if self.last_gp_start[0] < t_last:
        violation(self, 
            f"kvfree_rcu() objects of CPU {c} queued until {t_last} ns freed at {self.now} ns "
            f"before a grace period started after them (last completed: gp_seq "
            f"{self.last_gp_seq[0]}, started {self.last_gp_start[0]} ns)")


# --- rcu_barrier(): it returns only after every callback queued before it ---------
cdef void checker_barrier_init(Engine self) except *:
    """With a task that may call rcu_barrier(), note when each callback is invoked."""
    self.chk_cap = 1024
    self.chk_inv_ns = <i64 *> malloc(self.chk_cap * sizeof(i64))
    if self.chk_inv_ns == NULL:
        raise MemoryError()


cdef void chk_advance(Engine self) noexcept:
    """Move chk_low past the callbacks invoked by now."""
    cdef i64 v
    while self.chk_low < self.cb_seq:
        v = self.chk_inv_ns[self.chk_low & (self.chk_cap - 1)]
        if v < 0 or v > self.now:
            return
        self.chk_low += 1


cdef int check_cb_queued(Engine self, int cb) except -1:
    """Number callback cb in queued order; with rcu_barrier() callers, note it not invoked."""
    cdef i64 s = self.cb_seq, cap, k
    cdef i64 *ring
    self.cbs[cb].seq = s
    self.cb_seq += 1
    if not self.barrier_check:
        return 0
    if s - self.chk_low >= self.chk_cap:
        chk_advance(self)
    if s - self.chk_low >= self.chk_cap:
        cap = 2 * self.chk_cap
        ring = <i64 *> malloc(cap * sizeof(i64))
        if ring == NULL:
            raise MemoryError()
        for k in range(self.chk_low, s):
            ring[k & (cap - 1)] = self.chk_inv_ns[k & (self.chk_cap - 1)]
        free(self.chk_inv_ns)
        self.chk_inv_ns = ring
        self.chk_cap = cap
    self.chk_inv_ns[s & (self.chk_cap - 1)] = -1
    return 0


cdef inline void check_cb_invoked(Engine self, int cb, i64 t) noexcept:
    """Callback cb is invoked, ending at t."""
    if self.barrier_check:
        self.chk_inv_ns[self.cbs[cb].seq & (self.chk_cap - 1)] = t


cdef void check_barrier(Engine self, int e, i64 t_ret) except *:
    """rcu_barrier() by task e returns at t_ret: each callback queued before its call
    (numbered below barrier_cb_seq) must have been invoked by then."""
    cdef i64 k, v, bound = self.ents[e].barrier_cb_seq
    chk_advance(self)
    for k in range(self.chk_low, bound):
        v = self.chk_inv_ns[k & (self.chk_cap - 1)]
        if v < 0 or v > t_ret:
            violation(self,
                f"rcu_barrier() by task {e} on CPU {self.ents[e].cpu} returned at {t_ret} ns before "
                f"callback {k} of the run, one of the {bound} queued before its call, "
                + ("was invoked" if v < 0 else f"ended its invocation at {v} ns"))
            return
