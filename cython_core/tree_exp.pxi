# Expedited grace periods (kernel/rcu/tree_exp.h): synchronize_rcu_expedited(),
# exp_funnel_lock() (rcu_node wait queues, or before v4.6 funnel mutexes),
# the exp_mutex, CPU selection with IPIs (sync_rcu_exp_select_cpus, per leaf in
# parallel since v4.17), rcu_exp_handler() and deferred QS, reports up the
# tree (rcu_report_exp_*), and rcu_exp_wait_wake().
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int rcu_exp_init(Engine self, x, int e) except -1:
    """The expedited machinery of the release: the GP kworker (from the housekeeping
    CPU, unbound where a fair kthread may move), one worker per leaf on the leaf's first
    CPU (the kernel makes it affine to the leaf's CPUs), and whether its mutexes are
    rt_mutexes (locking.pxi allocates them)."""
    cdef int n, i
    self.ipi_send_ns = x.ipi_send_ns
    self.ipi_handler_ns = x.ipi_handler_ns
    self.exp_ent = e
    self.ents[e].kind = ENT_EXP_GP
    self.ents[e].cpu = self.gp_cpu
    self.ents[e].rq = RQ_RT if x.exp_kthread_rt else RQ_NORMAL
    # kthread_create_worker(0, "rcu_exp_gp_kthread_worker"): unbound, placed at each wake-up.
    kthread_place_at_wakeup(self, e)
    e += 1
    for n in range(self.leaf_first, self.num_nodes):
        self.nodes[n].par_ent = e
        self.ents[e].kind = ENT_EXP_PAR
        self.ents[e].idx = n
        self.ents[e].cpu = self.nodes[n].grplo
        self.ents[e].rq = RQ_RT if x.exp_kthread_rt else RQ_NORMAL
        e += 1
    self.exp_last_leaf = self.num_nodes - 1
    self.exp_funnel_wait_queues = x.exp_funnel_wait_queues
    self.exp_gp_workqueue = x.exp_gp_workqueue
    self.exp_par_init = x.exp_par_init
    self.exp_driver = self.exp_ent
    for i in range(self.n_mtx):
        self.mtx_rt[i] = self.mtx_exp[i] and x.exp_mutex_rt
    self.gp_mutex = self.exp_mutex if self.exp_funnel_wait_queues else 0
    return e


cdef inline void exp_lock(Engine self, int n) noexcept:
    """rnp->exp_lock."""
    spin_lock(self, &self.nodes[n].exp_lock_free)


cdef void exp_wq_add(Engine self, int n, i64 s, int e) noexcept:
    """wait_event(rnp->exp_wq[rcu_seq_ctr(s) & 0x3], ...)."""
    cdef rnp_t *np = &self.nodes[n]
    cdef int k = (s >> 2) & 3
    self.ents[e].link = -1
    if np.exp_wq_tail[k] >= 0:
        self.ents[np.exp_wq_tail[k]].link = e
    else:
        np.exp_wq_head[k] = e
    np.exp_wq_tail[k] = e


cdef i64 synchronize_rcu_expedited(Engine self, int e, int c) except -2:
    """rcu_exp_gp_seq_snap() + exp_funnel_lock(); returns the next burst or -1 to sleep."""
    cdef ent_t *ep = &self.ents[e]
    cdef int leaf = self.cpus[c].leaf
    cdef int n = leaf
    cdef i64 s = rcu_seq_snap(self.exp_seq)
    tp_acc(self, TP_RCU_EXP_GRACE_PERIOD, 1)  # rcu_exp_gp_seq_snap(): "snap"
    if self.fault == FAULT_EXP_SNAP_GP_IN_PROGRESS:
        s = (self.exp_seq + RCU_SEQ_STATE_MASK) & ~RCU_SEQ_STATE_MASK  # the end of the current one
    ep.req_s = s
    ep.phase = TASK_WAITING
    ep.fl_held = -1
    if not self.exp_funnel_wait_queues:
        return exp_funnel_lock_mutexes(self, e, c)
    # Low-contention fast path straight to the mutex (it sets no exp_seq_rq).
    if (self.nodes[leaf].exp_seq_rq < s and (leaf == 0 or self.nodes[0].exp_seq_rq < s)
            and mutex_trylock(self, self.exp_mutex, e)):
        return exp_gp_start_or_done(self, e, c)
    while n >= 0:
        if rcu_seq_done(self.exp_seq, s):
            sync_exp_work_done(self)
            return task_return(self, e, self.now + self.acc)
        exp_lock(self, n)
        if self.nodes[n].exp_seq_rq >= s:
            # Someone else asked for this GP: wait for it here.
            self.n_exp_funnel_wait += 1
            exp_wq_add(self, n, s, e)
            return -1
        self.nodes[n].exp_seq_rq = s  # followers can wait on us
        n = self.nodes[n].parent
    ep.fl_next = self.exp_mutex
    if mutex_lock(self, self.exp_mutex, e):
        return exp_gp_start_or_done(self, e, c)
    return -1


cdef inline void sync_exp_work_done(Engine self) noexcept:
    """sync_exp_work_done() finds the caller's GP done: it records "done" (before the
    caller lets go of a mutex it holds)."""
    tp_acc(self, TP_RCU_EXP_GRACE_PERIOD, 1)


cdef inline i64 sync_exp_work_done_ns(Engine self) noexcept:
    """sync_exp_work_done() of a task woken from exp_wq[], which finds its GP done: the cost
    of its "done" event (tracing's only)."""
    return tp_cost(self, TP_RCU_EXP_GRACE_PERIOD, 1)


cdef inline void exp_gp_owner_done(Engine self, int c) except *:
    """The task that started the expedited GP finds it done on CPU c: sync_exp_work_done(),
    then it lets go of the GP mutex (exp_mutex), which lets the next GP start."""
    sync_exp_work_done(self)
    mutex_unlock(self, self.gp_mutex, c)


cdef i64 exp_funnel_lock_mutexes(Engine self, int e, int c) except -2:
    """exp_funnel_lock() before v4.6: rdp, then rcu_node mutexes hand over hand.

    A task first tries the root's mutex directly when it looks free; that
    lets newcomers overtake tasks queued lower in the funnel.
    """
    cdef ent_t *ep = &self.ents[e]
    if self.mtx_owner[0] < 0 and mutex_trylock(self, 0, e):
        ep.fl_held = 0
        return exp_gp_start_or_done(self, e, c)
    if rcu_seq_done(self.exp_seq, ep.req_s):
        sync_exp_work_done(self)
        return task_return(self, e, self.now + self.acc)
    ep.fl_next = self.num_nodes + c
    if not mutex_lock(self, ep.fl_next, e):
        return -1
    ep.fl_held = ep.fl_next
    return exp_funnel_lock(self, e, c, self.cpus[c].leaf)


cdef i64 exp_funnel_lock(Engine self, int e, int c, int n) except -2:
    """Holding fl_held, take node n's mutex, drop the one below, go on up."""
    cdef ent_t *ep = &self.ents[e]
    while n >= 0:
        if rcu_seq_done(self.exp_seq, ep.req_s):
            sync_exp_work_done(self)
            mutex_unlock(self, ep.fl_held, c)  # sync_exp_work_done() drops it
            ep.fl_held = -1
            return task_return(self, e, self.now + self.acc)
        ep.fl_next = n
        if not mutex_lock(self, n, e):
            return -1
        mutex_unlock(self, ep.fl_held, c)
        ep.fl_held = n
        n = self.nodes[n].parent
    return exp_gp_start_or_done(self, e, c)


cdef i64 exp_mutex_retry(Engine self, int e, int c) except -2:
    """A task woken from a funnel or exp mutex runs: go on if it now holds it."""
    cdef ent_t *ep = &self.ents[e]
    cdef int m = ep.fl_next
    if not mutex_retry(self, m, e):
        return -1
    ep.phase = TASK_WAITING
    if m == self.exp_mutex:
        return exp_gp_start_or_done(self, e, c)
    if m >= self.num_nodes:
        # The rdp mutex of the CPU it called from: go on up from that CPU's leaf,
        # wherever it has been woken since.
        ep.fl_held = m
        return exp_funnel_lock(self, e, c, self.cpus[m - self.num_nodes].leaf)
    mutex_unlock(self, ep.fl_held, c)
    ep.fl_held = m
    return exp_funnel_lock(self, e, c, self.nodes[m].parent)


cdef i64 exp_gp_start_or_done(Engine self, int e, int c) except -2:
    """The task holds the GP mutex: start its GP, or return if one already covered it."""
    cdef ent_t *ep = &self.ents[e]
    if rcu_seq_done(self.exp_seq, ep.req_s):
        sync_exp_work_done(self)
        mutex_unlock(self, self.gp_mutex, c)
        return task_return(self, e, self.now + self.acc)
    self.exp_seq += 1  # rcu_exp_gp_seq_start()
    self.exp_gp_start = self.now + self.acc
    tp_acc(self, TP_RCU_EXP_GRACE_PERIOD, 1)  # exp_funnel_lock(): "start"
    if self.trace_on:  # exp_funnel_lock() traces the snapshot s it started the GP for
        trace(self, self.exp_gp_start, TR_EXP_START, c, e, ep.req_s, 0, 0)
    self.exp_gp_qs = self.exp_gp_start
    self.exp_gp_ipis = 0
    self.exp_work_queued = 1
    if not self.exp_gp_workqueue:
        # Before v4.9 the requester runs rcu_exp_sel_wait_wake() itself.
        self.exp_driver = e
        ep.phase = TASK_EXP_DRIVE
        return rcu_exp_sel_wait_wake_next(self, e, self.now + self.acc)
    # Queue rcu_exp_sel_wait_wake() on the kworker, then sleep on the root's exp_wq.
    # kthread_insert_work() wakes the worker only when it is idle (no current_work): one
    # switched out after its last work finds this one when it runs again.
    if self.ents[self.exp_ent].state == ST_BLOCKED:
        wake_from_acc(self, self.exp_ent, c, self.ttwu_ns)
    ep.phase = TASK_EXP_OWNER
    exp_wq_add(self, 0, ep.req_s, e)
    return -1


cdef inline bint exp_root_done(Engine self) noexcept:
    return self.nodes[0].expmask == 0 and self.nodes[0].exp_blockers == 0


# --- the kworker: rcu_exp_sel_wait_wake() --------------------------------
cdef i64 rcu_exp_sel_wait_wake_next(Engine self, int e, i64 t0) except -2:
    if self.exp_phase == EXP_IDLE:
        if not self.exp_work_queued:
            return 0
        self.exp_work_queued = 0
        self.exp_phase = EXP_RESET
        # sync_rcu_exp_select_cpus(): "reset", sync_exp_reset_tree(), "select"
        return self.num_nodes * self.rnp_lock_ns + tp_cost(self, TP_RCU_EXP_GRACE_PERIOD, 2)
    if self.exp_phase == EXP_FLUSH or self.exp_phase == EXP_WAIT:
        if self.exp_par_pending > 0:
            return 0
        if not exp_root_done(self):
            self.exp_phase = EXP_WAIT
            return 0
        self.exp_phase = EXP_WAKE
        return rcu_exp_wait_wake(self, t0)
    return 0


cdef i64 rcu_exp_sel_wait_wake(Engine self, int e) except -2:
    cdef int phase = self.exp_phase, n
    cdef i64 nxt = -1
    self.acc = 0
    if phase == EXP_RESET:
        sync_exp_reset_tree(self)
        nxt = sync_rcu_exp_select_cpus(self)
    elif phase == EXP_SELECT:
        for n in range(self.exp_last_leaf if self.exp_par_init else self.leaf_first, self.num_nodes):
            rcu_report_exp_cpu_mult(self, n, self.nodes[n].exp_sel_qs, False)
        self.exp_phase = EXP_FLUSH
        tp_acc(self, TP_RCU_EXP_GRACE_PERIOD, 1)  # synchronize_rcu_expedited_wait(): "startwait"
    elif phase == EXP_WAKE:
        self.exp_phase = EXP_IDLE
    self.cpus[self.ents[e].cpu].debt += self.acc
    if nxt >= 0:
        return nxt
    if phase == EXP_WAKE and self.ents[e].kind == ENT_EXP_GP and kthread_worker_cond_resched(self, e):
        return -1
    # Sleep unless the condition of the next wait already holds.
    if self.exp_phase == EXP_IDLE and self.exp_work_queued:
        return rcu_exp_sel_wait_wake_next(self, e, self.now)
    if ((self.exp_phase == EXP_FLUSH or self.exp_phase == EXP_WAIT)
            and self.exp_par_pending == 0 and exp_root_done(self)):
        return rcu_exp_sel_wait_wake_next(self, e, self.now + self.acc)  # after the reports just charged
    if self.exp_phase == EXP_FLUSH and self.exp_par_pending == 0:
        self.exp_phase = EXP_WAIT
    return -1


cdef bint kthread_worker_cond_resched(Engine self, int e) noexcept:
    """kthread_worker_fn()'s cond_resched() after a work: need_resched (a woken caller that
    outranks the worker, without preemption in the kernel) switches the worker out still
    runnable, at the head of its class as any preempted task; it looks for its next work
    when it runs again. With preemption the wake-up switched it out already."""
    cdef cpu_t *cp = &self.cpus[self.ents[e].cpu]
    if not cp.need_resched:
        return False
    requeue(self, self.ents[e].cpu, e, False)
    return True


cdef void sync_exp_reset_tree(Engine self) noexcept:
    cdef int n
    for n in range(self.num_nodes):
        self.nodes[n].expmask = self.nodes[n].expmaskinit
    if self.preemptible_readers:
        mark_blocked_readers(self, 1)  # rnp->exp_tasks


cdef i64 sync_rcu_exp_select_cpus(Engine self) except -2:
    """Queue each leaf's selection on its worker; the last leaf runs inline."""
    cdef int n
    cdef int c = self.ents[self.exp_driver].cpu
    cdef i64 t = self.now + self.acc
    self.exp_par_pending = 0
    self.exp_phase = EXP_SELECT
    if not self.exp_par_init:
        # Before v4.17 the driver selects every leaf itself, one after another.
        for n in range(self.leaf_first, self.num_nodes):
            t += exp_select_node_cpus(self, n, c, t)
        return t - self.now - self.acc
    for n in range(self.leaf_first, self.num_nodes - 1):
        if self.nodes[n].expmask == 0:
            continue
        self.exp_par_pending += 1
        wake_from_acc(self, self.nodes[n].par_ent, c, self.ttwu_ns)
    # The burst starts with this queueing cost (acc, charged as debt) and goes on inline.
    return exp_select_node_cpus(self, self.exp_last_leaf, c, self.now + self.acc)


cdef i64 sync_rcu_exp_select_node_cpus_next(Engine self, int e, i64 t0) except -2:
    return exp_select_node_cpus(self, self.ents[e].idx, self.ents[e].cpu, t0)


cdef i64 sync_rcu_exp_select_node_cpus(Engine self, int e) except -2:
    cdef int n = self.ents[e].idx
    self.acc = 0
    rcu_report_exp_cpu_mult(self, n, self.nodes[n].exp_sel_qs, False)
    self.exp_par_pending -= 1
    if self.exp_par_pending == 0 and self.exp_phase == EXP_FLUSH:
        wake_from_acc(self, self.exp_driver, self.ents[e].cpu, self.ttwu_ns)
    self.cpus[self.ents[e].cpu].debt += self.acc
    return -1


cdef i64 exp_select_node_cpus(Engine self, int n, int self_cpu, i64 t0) except -2:
    """__sync_rcu_exp_select_node_cpus() on CPU self_cpu from t0; returns its duration.

    CPUs idle (an extended QS) or the selecting CPU itself are quiescent and
    reported when the selection ends; the others get rcu_exp_handler() IPIs,
    sent one at a time: smp_call_function_single(wait=0) reuses the sender's
    one csd, so each send waits until the previous target took its IPI.
    """
    cdef rnp_t *np = &self.nodes[n]
    cdef u64 todo = np.expmask, qs = 0
    cdef int bit, c
    cdef i64 t = t0 + self.rnp_lock_ns
    while todo:
        bit = ctz64(todo)
        todo &= todo - 1
        c = np.grplo + bit
        if c == self_cpu or (self.cpus[c].state != CPU_BUSY and not self.cpus[c].in_irq):
            qs |= (<u64> 1) << bit
            continue
        t += self.ipi_send_ns
        push(self, t + self.ipi_latency_ns, PRIO_URGENT, EV_EXP_IPI, c, self.exp_seq)
        if self.trace_on:
            trace(self, t, TR_IPI_SEND, c, -1, self.exp_seq, 1, 0)
        self.n_exp_ipis += 1
        self.exp_gp_ipis += 1
        t += self.ipi_latency_ns
    np.exp_sel_qs = qs
    return t - t0


cdef void ev_exp_ipi(Engine self, int c) except *:
    """rcu_exp_handler(): report now, or when the reader / non-preemptible section ends."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef rnp_t *np = &self.nodes[cp.leaf]
    if self.trace_on:
        trace(self, self.now, TR_IPI_HANDLER, c, cp.curr, self.exp_seq, 1, 0)
    self.acc = 0
    if (np.expmask & cp.grpmask) and not cp.exp_need_qs:
        if cp.state != CPU_BUSY:
            rcu_report_exp_rdp(self, c)  # interrupted from idle
        elif in_reader(self, c) and self.fault != FAULT_EXP_IPI_IGNORES_READERS:
            cp.exp_need_qs = 1
            self.n_exp_deferred += 1
        elif self.now < cp.nonpreempt_until:
            cp.exp_need_qs = 1
            self.n_exp_deferred += 1
            if not cp.exp_deferred_pending:
                cp.exp_deferred_pending = 1
                push(self, cp.nonpreempt_until, PRIO_URGENT, EV_EXP_DEFERRED, c, 0)
        else:
            rcu_report_exp_rdp(self, c)
    steal(self, c, self.ipi_handler_ns + self.acc)


cdef void ev_exp_deferred(Engine self, int c) except *:
    cdef cpu_t *cp = &self.cpus[c]
    cp.exp_deferred_pending = 0
    if not cp.exp_need_qs or in_reader(self, c):
        return  # already reported, or the reader's unlock will
    if self.now < cp.nonpreempt_until:
        cp.exp_deferred_pending = 1
        push(self, cp.nonpreempt_until, PRIO_URGENT, EV_EXP_DEFERRED, c, 0)
        return
    self.acc = 0
    rcu_report_exp_rdp(self, c)
    steal(self, c, self.acc)


cdef void rcu_report_exp_rdp(Engine self, int c) except *:
    self.cpus[c].exp_need_qs = 0
    rcu_report_exp_cpu_mult(self, self.cpus[c].leaf, self.cpus[c].grpmask, True)


cdef void rcu_report_exp_cpu_mult(Engine self, int n, u64 mask, bint do_wake) except *:
    rnp_lock(self, n)
    if (self.nodes[n].expmask & mask) == 0:
        return
    if self.trace_on:
        trace_qs_mask(self, n, self.nodes[n].expmask & mask, self.exp_seq, 2)
    self.nodes[n].expmask &= ~mask
    rcu_report_exp_rnp(self, n, do_wake)


cdef void rcu_report_exp_rnp(Engine self, int n, bint do_wake) except *:
    """__rcu_report_exp_rnp(): climb while nodes empty; wake the kworker at the root."""
    cdef rnp_t *np
    cdef u64 mask
    while True:
        np = &self.nodes[n]
        if np.expmask != 0 or np.exp_blockers > 0:
            return
        if np.parent < 0:
            if rcu_seq_state(self.exp_seq):
                self.exp_gp_qs = self.now + self.acc
            if do_wake and self.exp_phase == EXP_WAIT:
                # swake_up_one(&expedited_wq), from a CPU not tracked here
                wake_from_acc(self, self.exp_driver, -1, self.ttwu_ns)
            return
        mask = np.grpmask
        n = np.parent
        rnp_lock(self, n)
        if (self.nodes[n].expmask & mask) == 0:
            return
        self.nodes[n].expmask &= ~mask


cdef i64 rcu_exp_wait_wake(Engine self, i64 t0) except -2:
    """rcu_seq_end(&expedited_sequence), then wake every node's waiters for it."""
    cdef int n, x, nxt, k
    cdef int c = self.ents[self.exp_driver].cpu
    cdef i64 t = t0 + self.rnp_lock_ns  # exp_wake_mutex
    cdef i64 s
    record_gp(self, 1, self.exp_seq, self.exp_gp_start, self.exp_gp_qs, t, self.exp_gp_ipis, 0, -1)
    self.exp_seq = rcu_seq_endval(self.exp_seq)
    if self.trace_on:
        trace(self, t, TR_EXP_END, c, self.exp_driver, self.exp_seq, self.exp_gp_ipis, 0)
    s = self.exp_seq
    k = (s >> 2) & 3
    t += tp_cost(self, TP_RCU_EXP_GRACE_PERIOD, 1)  # "end"
    for n in range(self.num_nodes):
        t += self.rnp_lock_ns  # rnp->exp_lock
        if self.nodes[n].exp_seq_rq < s:
            self.nodes[n].exp_seq_rq = s
        x = self.nodes[n].exp_wq_head[k]
        self.nodes[n].exp_wq_head[k] = self.nodes[n].exp_wq_tail[k] = -1
        while x >= 0:
            nxt = self.ents[x].link
            self.ents[x].link = -1
            t += try_to_wake_up(self, x, c, t, self.ttwu_ns)
            x = nxt
    t += tp_cost(self, TP_RCU_EXP_GRACE_PERIOD, 1)  # "endwake"
    return t - t0
