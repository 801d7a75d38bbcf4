# The safety checker, always on: a GP must wait for every reader that began
# before it, and no synchronize_rcu*() caller or callback may finish before a
# whole GP.  A violation is recorded with CPU, entity and gp_seq.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef void checker_init(Engine self) except *:
    self.violations = []
    self.last_gp_start[0] = self.last_gp_start[1] = -(1 << 62)


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


cdef void check_request(Engine self, int e, i64 t_end) except *:
    """A synchronize_rcu*() returns: a GP of its flavour must have started after the call."""
    cdef int f = self.wl_prim[self.task_wl[e]]
    cdef i64 t_call = self.ents[e].t_call
    if self.last_gp_start[f] < t_call:
        violation(self, 
            f"{'synchronize_rcu_expedited' if f else 'synchronize_rcu'}() by task {e} on CPU "
            f"{self.ents[e].cpu}, called at {t_call} ns, returned at {t_end} ns before any "
            f"{'expedited' if f else 'normal'} grace period started after the call "
            f"(last completed: gp_seq {self.last_gp_seq[f]}, started {self.last_gp_start[f]} ns)")


cdef void check_callback(Engine self, int cb, int c) except *:
    if self.last_gp_start[0] < self.cbs[cb].t_queued:
        violation(self, 
            f"callback queued on CPU {c} at {self.cbs[cb].t_queued} ns invoked at {self.now} ns "
            f"before a grace period started after it (last completed: gp_seq "
            f"{self.last_gp_seq[0]}, started {self.last_gp_start[0]} ns)")


cdef void check_kvfree(Engine self, int c, i64 t_last) except *:
    """kvfree_rcu() objects may be freed only after a GP that began after their call."""
    if self.last_gp_start[0] < t_last:
        violation(self, 
            f"kvfree_rcu() objects of CPU {c} queued until {t_last} ns freed at {self.now} ns "
            f"before a grace period started after them (last completed: gp_seq "
            f"{self.last_gp_seq[0]}, started {self.last_gp_start[0]} ns)")
