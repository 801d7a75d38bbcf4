# synchronize_rcu() with rcutree.rcu_normal_wake_from_gp=1 (kernel/rcu/tree.c,
# v6.9+): waiters on rcu_state.srs_next, wait heads, rcu_sr_normal_gp_init()
# and rcu_sr_normal_gp_cleanup(), the cleanup work on its kworker.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int rcu_sr_normal_init(Engine self, s, int e) except -1:
    """Empty srs lists and the kworker that runs rcu_sr_normal_gp_cleanup_work."""
    self.wake_from_gp = s.wake_from_gp
    self.srs_next_head = self.srs_next_tail = -1
    self.srs_wait_head = self.srs_wait_tail = -1
    self.srs_done_head = self.srs_done_tail = -1
    self.sr_ent = e
    self.ents[e].kind = ENT_SR_WORKER
    self.ents[e].cpu = self.gp_cpu
    self.ents[e].rq = RQ_NORMAL
    self.ents[e].head_enqueue = not s.sr_normal_sync_wq
    if not s.sr_normal_sync_wq:
        self.ents[e].weight = 88761  # a system_highpri_wq kworker: nice -20
    return e + 1


cdef void synchronize_rcu_normal(Engine self, int e, int c) except *:
    """rcu_sr_normal_add_req() + start_poll_synchronize_rcu()."""
    self.ents[e].link = -1
    if self.srs_next_tail >= 0:
        self.ents[self.srs_next_tail].link = e
    else:
        self.srs_next_head = e
    self.srs_next_tail = e
    rnp_lock(self, self.cpus[c].leaf)
    if rcu_start_this_gp(self, self.cpus[c].leaf, rcu_seq_snap(self.gp_seq)):
        rcu_gp_kthread_wake(self, c)


cdef void rcu_sr_normal_gp_init(Engine self) noexcept:
    """rcu_sr_normal_gp_init(): waiters queued so far belong to this GP."""
    if self.srs_next_head < 0:
        return
    if self.srs_heads_inuse >= SR_NORMAL_GP_WAIT_HEAD_MAX:
        return
    self.srs_heads_inuse += 1
    self.srs_wait_head = self.srs_next_head
    self.srs_wait_tail = self.srs_next_tail
    self.srs_next_head = self.srs_next_tail = -1


cdef void rcu_sr_normal_gp_cleanup(Engine self) except *:
    """rcu_sr_normal_gp_cleanup(): wake a few waiters here, the rest from a worker."""
    cdef int e = self.srs_wait_head, tail = self.srs_wait_tail, nxt, done = 0
    if e < 0:
        return
    self.srs_wait_head = self.srs_wait_tail = -1
    while e >= 0 and done < SR_MAX_USERS_WAKE_FROM_GP:
        nxt = self.ents[e].link
        self.ents[e].link = -1
        wake_from_acc(self, e, gp_kthread_cpu(self), self.cb_cost[CB_WAKEME])
        done += 1
        e = nxt
    if e < 0 and self.srs_done_heads == 0:
        self.srs_heads_inuse -= 1
        return
    # The rest (and this GP's wait head) go to srs_cleanup_work: the list from e to its tail
    # joins the done list as it is (llist_add() of the wait head onto srs_done_tail), without
    # a walk over thousands of waiters.
    self.srs_done_heads += 1
    if e >= 0:
        if self.srs_done_tail >= 0:
            self.ents[self.srs_done_tail].link = e
        else:
            self.srs_done_head = e
        self.srs_done_tail = tail
    # queue_work() on sync_wq (per-CPU): the pool of the GP kthread's CPU, unless the
    # work item still runs elsewhere (__queue_work()'s non-reentrancy check).
    if self.ents[self.sr_ent].state == ST_BLOCKED:
        set_task_cpu(self, self.sr_ent, gp_kthread_cpu(self))
    wake(self, self.sr_ent, gp_kthread_cpu(self), self.now + self.acc)


cdef i64 rcu_sr_normal_gp_cleanup_work_next(Engine self, int w, i64 t0) except -2:
    """rcu_sr_normal_gp_cleanup_work(): complete every waiter handed over."""
    cdef int e = self.srs_done_head, nxt
    cdef i64 t = t0
    self.srs_done_head = self.srs_done_tail = -1
    while e >= 0:
        nxt = self.ents[e].link
        self.ents[e].link = -1
        if nxt >= 0:
            __builtin_prefetch(&self.ents[nxt])  # one of thousands: far from the cache
        t += try_to_wake_up(self, e, self.ents[w].cpu, t, self.cb_cost[CB_WAKEME])
        e = nxt
    self.srs_heads_inuse -= self.srs_done_heads
    self.srs_done_heads = 0
    return t - t0


cdef i64 rcu_sr_normal_gp_cleanup_work(Engine self, int w) except -2:
    if self.srs_done_head >= 0 or self.srs_done_heads > 0:
        return rcu_sr_normal_gp_cleanup_work_next(self, w, self.now)
    return -1
