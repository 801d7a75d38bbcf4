# rcu_barrier() (kernel/rcu/tree.c; its form since the v5.17 rework, whose earlier
# versions IPI the same CPUs and entrain the same way on a machine without CPU
# hotplug): rcu_state.barrier_mutex and barrier_sequence with the early exit, the
# entrain on each CPU with callbacks, the caller's own CPU by itself and every other
# by smp_call_function_single(wait=1), rcu_barrier_entrain() (an offloaded CPU's
# bypass flushed first, lazy callbacks included), and rcu_barrier_callback()
# counting rcu_state.barrier_cpu_count down to complete().
#
# Included by _core.pyx: module-level functions on the Engine.


cdef void barrier_init(Engine self, tb) noexcept:
    self.barrier_wakes_rcuog = tb.barrier_wakes_rcuog
    self.barrier_sequence = 0
    self.barrier_task = -1


cdef inline bint rcu_barrier_has_cbs(Engine self, cpu_t *cp) noexcept:
    """rcu_segcblist_n_cbs(&rdp->cblist) != 0: ->len counts the bypass, and the callbacks
    of a batch until rcu_do_batch() has invoked them all."""
    return n_cbs(self, cp) + cp.byp_len > 0 or cp.batch_end > self.now


cdef i64 rcu_barrier(Engine self, int e, int c) except -2:
    """rcu_barrier() by task e on CPU c: rcu_seq_snap() of barrier_sequence, then
    barrier_mutex (sleeping for it if another barrier holds it)."""
    cdef ent_t *ep = &self.ents[e]
    ep.barrier_s = rcu_seq_snap(self.barrier_sequence)
    ep.barrier_cb_seq = self.cb_seq
    ep.fl_next = self.barrier_mutex
    if not mutex_lock(self, self.barrier_mutex, e):
        self.n_barrier_mutex_wait += 1
        return -1
    return rcu_barrier_locked(self, e, c)


cdef i64 rcu_barrier_mutex_retry(Engine self, int e, int c) except -2:
    """A task woken from barrier_mutex runs: go on if it holds it now."""
    if not mutex_retry(self, self.barrier_mutex, e):
        return -1
    return rcu_barrier_locked(self, e, c)


cdef i64 rcu_barrier_locked(Engine self, int e, int c) except -2:
    """barrier_mutex held: return if a whole barrier ran since the call ("EarlyExit"),
    else rcu_seq_start() with barrier_cpu_count at 2 and the entrain loop."""
    cdef ent_t *ep = &self.ents[e]
    if rcu_seq_done(self.barrier_sequence, ep.barrier_s):
        self.n_barrier_early += 1
        mutex_unlock(self, self.barrier_mutex, c)
        return rcu_barrier_return(self, e, c)
    self.n_barriers += 1
    self.acc += self.rnp_lock_ns  # barrier_lock
    self.barrier_sequence += 1    # rcu_seq_start()
    self.barrier_cpu_count = 2    # no complete() before every CPU is entrained
    ep.phase = TASK_BARRIER
    ep.barrier_cpu = 0
    return rcu_barrier_next(self, e, c)


cdef i64 rcu_barrier_next(Engine self, int e, int c) except -2:
    """The entrain loop from ep.barrier_cpu on: a CPU without callbacks costs a round of
    barrier_lock; the caller's own CPU runs rcu_barrier_handler() itself; any other gets
    it by IPI, the caller spinning until the handler has run (the next burst). After the
    last CPU, the initial count of 2 goes, and the caller waits for the completion."""
    cdef ent_t *ep = &self.ents[e]
    cdef int r
    while ep.barrier_cpu < self.nr_cpus:
        r = ep.barrier_cpu
        ep.barrier_cpu += 1
        self.acc += self.rnp_lock_ns  # barrier_lock, ->cblist.len read under it
        if not rcu_barrier_has_cbs(self, &self.cpus[r]):
            continue
        if r == c:
            self.acc += self.rnp_lock_ns  # rcu_barrier_handler()'s barrier_lock
            rcu_barrier_entrain(self, r)
            continue
        push(self, self.now + self.acc + self.ipi_send_ns + self.ipi_latency_ns, PRIO_URGENT,
             EV_BARRIER_IPI, r, 0)
        self.n_barrier_ipis += 1
        return self.ipi_send_ns + self.ipi_latency_ns + self.rnp_lock_ns + self.ipi_handler_ns
    self.barrier_cpu_count -= 2
    if self.barrier_cpu_count > 0:
        ep.phase = TASK_BARRIER_WAIT
        self.barrier_task = e
        return -1  # wait_for_completion(&rcu_state.barrier_completion)
    return rcu_barrier_end(self, e, c)


cdef void ev_barrier_ipi(Engine self, int r) except *:
    """rcu_barrier_handler() on CPU r, in its IPI: rcu_barrier_entrain() under barrier_lock."""
    self.acc = 0
    rcu_barrier_entrain(self, r)
    steal(self, r, self.rnp_lock_ns + self.ipi_handler_ns + self.acc)


cdef void rcu_barrier_entrain(Engine self, int r) except *:
    """rcu_barrier_entrain(): flush an offloaded CPU's bypass into ->cblist, then entrain a
    barrier callback behind every callback of the CPU, if it still has any; from v6.2,
    wake rcuog if the flush gave an empty ->cblist pending callbacks (a lazy bypass
    would otherwise wait for its timer, jiffies_lazy_flush away)."""
    cdef cpu_t *cp = &self.cpus[r]
    cdef bint was_alldone = cp.offloaded and pend_cbs(self, cp) == 0
    if cp.offloaded:
        rcu_nocb_flush_bypass(self, cp, -1)
    if rcu_barrier_has_cbs(self, cp):  # the bypass is empty now
        rcu_segcblist_entrain(self, cp, cb_alloc(self, CB_BARRIER, -1))
        self.barrier_cpu_count += 1
    if self.barrier_wakes_rcuog and was_alldone and pend_cbs(self, cp) > 0:
        wake_nocb_gp(self, cp.group)


cdef inline void rcu_barrier_callback(Engine self, int runner_cpu, i64 t) except *:
    """rcu_barrier_callback() invoked by CPU runner_cpu, done at t (ev_barrier_cb())."""
    push(self, t, PRIO_NORMAL, EV_BARRIER_CB, runner_cpu, 0)


cdef void ev_barrier_cb(Engine self, int c) except *:
    """An rcu_barrier_callback() invoked by CPU c ends: atomic_dec_and_test(); the last
    complete()s barrier_completion, waking the task in rcu_barrier()."""
    self.barrier_cpu_count -= 1
    if self.barrier_cpu_count == 0 and self.barrier_task >= 0:
        wake(self, self.barrier_task, c, self.now)
        self.barrier_task = -1


cdef i64 rcu_barrier_end(Engine self, int e, int c) except -2:
    """Every barrier callback ran: rcu_seq_end(&barrier_sequence), barrier_mutex released."""
    self.barrier_sequence = rcu_seq_endval(self.barrier_sequence)
    mutex_unlock(self, self.barrier_mutex, c)
    return rcu_barrier_return(self, e, c)


cdef i64 rcu_barrier_return(Engine self, int e, int c) except -2:
    """rcu_barrier() returns to its caller, rcuscale's writer."""
    check_barrier(self, e, self.now + self.acc)
    return rcu_scale_barrier_done(self, e, c)
