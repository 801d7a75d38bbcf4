# call_rcu(), rcu_core() (RCU_SOFTIRQ or the rcuc kthread), rcu_do_batch()
# with blimit, and softirq processing (__do_softirq, ksoftirqd hand-off)
# (kernel/rcu/tree.c, kernel/softirq.c).
#
# Included by _core.pyx: module-level functions on the Engine.


cdef void rcu_core_init(Engine self, c) except *:
    """Callback tunables and costs, and the callback pool (grown on demand)."""
    self.preempt_rcu = c.preempt_rcu
    self.blimit_default = c.blimit
    self.qhimark = c.qhimark
    self.qlowmark = c.qlowmark
    self.rcu_divisor = c.rcu_divisor
    self.rcu_resched_ns = c.rcu_resched_ns
    self.use_softirq = c.use_softirq
    self.call_rcu_ns = c.call_rcu_ns
    self.softirq_time_limit = c.softirq_time_limit
    self.softirq_qs = c.softirq_qs
    self.ksoftirqd_does_its_job = c.ksoftirqd_does_its_job
    self.cb_cost[CB_WAKEME] = c.cb_wakeme_ns
    self.cb_cost[CB_KFREE] = c.cb_kfree_ns
    self.cb_cost[CB_GENERIC] = c.cb_generic_ns
    self.cb_cost[CB_MT_FREE] = c.cb_generic_ns  # the guest's generic callbacks are mostly such frees
    self.cb_cost[CB_RCU_WORK] = self.ttwu_ns  # rcu_work_rcufn(): __queue_work() wakes a kworker
    # rcu_barrier_callback(): atomic_dec_and_test() and, the last, complete(), as wakeme_after_rcu().
    self.cb_cost[CB_BARRIER] = c.cb_barrier_ns
    self.cb_cap = 0
    self.cb_free = -1


cdef int rcu_spawn_cpu_kthreads(Engine self, tc, int e) except -1:
    """Per CPU: rcuop/N if its callbacks are offloaded (tree_nocb.pxi), else rcuc/N
    (use_softirq=0) or ksoftirqd/N: both run rcu_core()."""
    cdef int c
    for c in range(self.nr_cpus):
        self.ents[e].cpu = c
        self.ents[e].idx = c
        if self.cpus[c].offloaded:
            rcu_spawn_cpu_nocb_kthread(self, c, e)
        else:
            self.cpus[c].rcuc = e
            self.ents[e].kind = ENT_RCUC
            self.ents[e].phase = 0 if self.use_softirq else 1
            self.ents[e].rq = RQ_RT if (not self.use_softirq and tc.rcuc_rt) else RQ_NORMAL
        e += 1
    return e


cdef int call_rcu(Engine self, int c, int kind, int arg, bint lazy=False) except -1:
    """__call_rcu_common(): call_rcu_hurry() by default; `lazy` only matters on an
    offloaded CPU (call_rcu_core() ignores it)."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef int cb = cb_alloc(self, kind, arg)
    cdef int n
    if self.trace_on:
        # rcutree_enqueue(): qlen counts the callback and, offloaded, the bypass list.
        trace(self, self.now + self.acc, TR_CALLBACK, c, cp.curr, cp.gp_seq, kind, cb,
              n_cbs(self, cp) + cp.byp_len + 1)
    if cp.offloaded:
        call_rcu_nocb(self, c, cb, lazy)
        return 0
    rcu_segcblist_enqueue(self, cp, cb)
    if not self.tree_rcu:
        return 0  # 2.6.0's call_rcu() only queues on nxtlist
    # call_rcu_core(): a callback flood forces the GP machinery along.
    n = n_cbs(self, cp)
    if n > cp.qlen_last_fqs_check + self.qhimark:
        rnp_lock(self, cp.leaf)
        note_gp_changes_locked(self, c)
        if not gp_in_progress(self):
            if rcu_accelerate_cbs(self, c):
                rcu_gp_kthread_wake(self, c)
        else:
            cp.blimit = DEFAULT_MAX_RCU_BLIMIT
        cp.qlen_last_fqs_check = n
    return 0


cdef i64 invoke_cb(Engine self, cpu_t *cp, int r, i64 t, int runner_cpu, int runner) except -2:
    """Invoke the first DONE callback of CPU r at t; return when it is done."""
    cdef int cb = cp.cb_head, nxt
    nxt = cp.cb_head = self.cbs[cb].next
    if nxt < 0:
        cp.cb_tail = -1
    else:
        # The list's callbacks and their tasks are far from the cache (thousands, queued
        # by as many tasks): fetch the one after next, and the next one's task, while this
        # callback runs.
        if self.cbs[nxt].next >= 0:
            __builtin_prefetch(&self.cbs[self.cbs[nxt].next])
        if self.cbs[nxt].kind == CB_WAKEME:
            __builtin_prefetch(&self.ents[self.cbs[nxt].arg])
    cp.seg_len[RCU_DONE_TAIL] -= 1
    return invoke_one(self, cb, r, t, runner_cpu, runner)


cdef i64 invoke_one(Engine self, int cb, int r, i64 t, int runner_cpu, int runner) except -2:
    """Invoke callback cb, queued on CPU r, at t, by entity runner (-1: softirq);
    return when it is done."""
    cdef int kind = self.cbs[cb].kind
    check_callback(self, cb, r)
    if self.trace_on:
        trace(self, t, TR_CB_INVOKE, r, runner, self.cpus[r].gp_seq, kind, cb)
    if kind == CB_WAKEME:  # wakeme_after_rcu(): complete()
        t += try_to_wake_up(self, self.cbs[cb].arg, runner_cpu, t, self.cb_cost[kind])
    else:
        t += self.cb_cost[kind]
    check_cb_invoked(self, cb, t)
    if kind == CB_KFREE or kind == CB_GENERIC:
        record_callback(self, t, t - self.cbs[cb].t_queued)
    if kind != CB_WAKEME and kind != CB_KFREE and kind != CB_GENERIC and kind != CB_MT_FREE:
        rcu_callback_func(self, kind, self.cbs[cb].arg, runner_cpu, t)
    self.cbs[cb].next = self.cb_free
    self.cb_free = cb
    self.n_cbs_invoked += 1
    return t


cdef i64 rcu_do_batch(Engine self, int r, i64 t0, int ctx) except -2:
    cdef cpu_t *cp = &self.cpus[r]
    cdef i64 pending = cp.seg_len[RCU_DONE_TAIL]
    cdef i64 bl, count = 0, t = t0, tlimit = 0
    cdef int runner_cpu, runner
    if pending == 0:
        return 0
    if not self.tree_rcu:
        return rcu_do_batch_classic(self, r, t0, ctx)
    bl = pending >> self.rcu_divisor
    if bl < cp.blimit:
        bl = cp.blimit
    if ctx != 2 and bl > 100:
        tlimit = t0 + self.rcu_resched_ns
    runner_cpu = r if ctx != 2 else self.ents[cp.rcuop].cpu
    runner = -1 if ctx == 0 else (cp.rcuc if ctx == 1 else cp.rcuop)
    if self.trace_on:
        trace(self, t0, TR_CB_BATCH_START, r, runner, cp.gp_seq, pending, bl)
    while cp.seg_len[RCU_DONE_TAIL] > 0:
        t = invoke_cb(self, cp, r, t, runner_cpu, runner)
        count += 1
        if ctx == 0:
            # Softirq: stop at the batch limit if need_resched() or current is not the
            # idle task; a callback waking a task onto this idle CPU sets need_resched.
            if count >= bl and (cp.state == CPU_BUSY or softirq_need_resched(self, cp)):
                break
        if tlimit and (count & 31) == 0 and t >= tlimit:
            break
    if t > cp.batch_end:
        cp.batch_end = t
    if cp.blimit == DEFAULT_MAX_RCU_BLIMIT and n_cbs(self, cp) <= self.qlowmark:
        cp.blimit = self.blimit_default
    if self.trace_on:
        trace(self, t, TR_CB_BATCH_END, r, runner, cp.gp_seq, count, cp.seg_len[RCU_DONE_TAIL])
    return t - t0


cdef inline bint softirq_need_resched(Engine self, cpu_t *cp) noexcept:
    """need_resched() in RCU_SOFTIRQ on CPU cp.  Over a task, its TIF_NEED_RESCHED: set by
    a wake-up that preempts it (check_preempt_wakeup_fair()) or by its tick.  On the idle
    task it is set by any task queued on the CPU: ttwu_do_activate() -> wakeup_preempt() ->
    resched_curr() (wakeup_preempt_idle()), including a task this softirq's own callbacks
    woke onto the CPU, which the local wake-up enqueues at once (it counts before its
    EV_WAKE lands)."""
    if cp.state == CPU_BUSY:
        return tif_need_resched(cp)
    return cp.state == CPU_WAKING or cp.nr_queued > 0 or self.n_wake_local > self.softirq_wake0


cdef i64 rcu_core(Engine self, int c, i64 t0, int ctx) except -2:
    """One rcu_core() pass on CPU c starting at t0; returns its duration."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef bint needwake
    cdef i64 dur
    cdef int runner
    if not self.tree_rcu:
        return rcu_process_callbacks(self, c, t0, ctx)
    runner = cp.curr if cp.rcuc >= 0 and cp.curr == cp.rcuc else -1
    self.acc = self.softirq_ns
    self.n_softirq += 1
    if self.trace_on:
        trace(self, t0, TR_RCU_SOFTIRQ, c, runner, 0, 0, 0)
    if cp.gp_seq != self.nodes[cp.leaf].gp_seq:
        rnp_lock(self, cp.leaf)
        note_gp_changes_locked(self, c)
    if cp.core_needs_qs and not cp.cpu_no_qs:
        rcu_report_qs_rdp(self, c)
    if (not cp.offloaded and not gp_in_progress(self)
            and cp.seg_len[RCU_NEXT_READY_TAIL] + cp.seg_len[RCU_NEXT_TAIL] > 0):
        rnp_lock(self, cp.leaf)
        needwake = rcu_accelerate_cbs(self, c)
        if needwake:
            rcu_gp_kthread_wake(self, c)
    dur = self.acc
    if not cp.offloaded and cbs_ready(self, cp):
        dur += rcu_do_batch(self, c, t0 + dur, ctx)
    if self.trace_on:
        trace(self, t0 + dur, TR_RCU_SOFTIRQ_EXIT, c, runner, 0, 0, 0)
    return dur


cdef i64 rcu_softirq(Engine self, int c) except -2:
    """RCU_SOFTIRQ at irq exit."""
    return do_softirq(self, c, self.now)


cdef inline bint rcu_softirq_reraised(Engine self, cpu_t *cp) noexcept:
    """After a pass, RCU work is raised again: callbacks still ready, or RCU_SOFTIRQ raised
    meanwhile by a tick (before 2.6.29, the tasklet re-raised by rcu_do_batch()); an
    offloaded CPU's are rcuop's."""
    return not cp.offloaded and (cp.softirq_pending or (cbs_ready(self, cp) if self.tree_rcu else cp.tasklet_raised))


cdef inline bint softirq_restarts_over(Engine self, cpu_t *cp, int restarts, i64 elapsed) noexcept:
    """handle_softirqs() restarts no more: MAX_SOFTIRQ_RESTART passes, or from v3.9 its
    2 ms or need_resched()."""
    return restarts >= MAX_SOFTIRQ_RESTART or (self.softirq_time_limit and (
        elapsed >= MAX_SOFTIRQ_TIME_NS or softirq_need_resched(self, cp)))


cdef inline bint in_serving_softirq(Engine self, int c) noexcept:
    """CPU c runs handle_softirqs(): an irq exit's, or ksoftirqd/N's pass; an interrupt
    taken meanwhile only raises its softirqs (__irq_exit_rcu() runs none while in_interrupt()),
    and that handle_softirqs() runs them at its next restart."""
    cdef cpu_t *cp = &self.cpus[c]
    return cp.softirq_irq_exit > 0 or (cp.state == CPU_BUSY and self.ents[cp.curr].kind == ENT_RCUC
                                   and self.ents[cp.curr].phase == 0)


cdef void wakeup_softirqd(Engine self, int c, i64 t) except *:
    """Softirq work past handle_softirqs()'s limits goes to ksoftirqd/N (or rcuc/N)."""
    self.cpus[c].softirq_pending = 1
    self.n_softirqd_wake += 1
    wake(self, self.cpus[c].rcuc, c, t)


cdef i64 do_softirq(Engine self, int c, i64 t0) except -2:
    """handle_softirqs() at irq exit from t0 with its restart limits: RCU work is re-raised
    while ready callbacks remain (or, before 2.6.29, while rcu_do_batch() re-raised the
    tasklet); past the limits the rest goes to ksoftirqd/N (ksoftirqd runs its passes one
    by one: rcu_cpu_kthread()).  Over a task, from v3.9, need_resched() decides each
    restart at the pass's end, once the wake-ups of its callbacks have landed: the next
    pass is an EV_SOFTIRQ_RESTART (ev_softirq_restart())."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 total = 0
    cdef int restarts = 0
    self.softirq_wake0 = self.n_wake_local
    while True:
        cp.tasklet_raised = 0
        cp.softirq_pending = 0
        total += rcu_core(self, c, t0 + total, 0)
        if not rcu_softirq_reraised(self, cp):
            break
        restarts += 1
        if self.softirq_time_limit and cp.state == CPU_BUSY:
            cp.softirq_irq_exit = restarts
            push(self, t0 + total, PRIO_NORMAL, EV_SOFTIRQ_RESTART, c, t0)
            break
        if softirq_restarts_over(self, cp, restarts, total):
            wakeup_softirqd(self, c, t0 + total)
            break
    return total


cdef void ev_softirq_restart(Engine self, int c, i64 start) except *:
    """An irq exit's RCU_SOFTIRQ pass on busy CPU c ends (its handle_softirqs() began at
    `start`): the next one runs, taken from the interrupted task's time, unless its limits or
    need_resched() stop it; then the rest goes to ksoftirqd/N."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 dur
    # (The CPU stays busy: the pass's time is stolen from the interrupted task's burst.)
    if cp.state != CPU_BUSY or softirq_restarts_over(self, cp, cp.softirq_irq_exit, self.now - start):
        cp.softirq_irq_exit = 0
        wakeup_softirqd(self, c, self.now)
        return
    self.n_softirq_restarts += 1
    dur = softirq_pass(self, c, self.now)
    steal(self, c, dur)
    if not rcu_softirq_reraised(self, cp):
        cp.softirq_irq_exit = 0
        return
    cp.softirq_irq_exit += 1
    push(self, self.now + dur, PRIO_NORMAL, EV_SOFTIRQ_RESTART, c, start)


cdef i64 rcu_cpu_kthread_next(Engine self, int e, i64 t0) except -2:
    cdef int c = self.ents[e].idx
    if self.ents[e].phase == 0:
        # run_ksoftirqd(): handle_softirqs(true), one pass a burst (before v3.9,
        # ksoftirqd()'s do_softirq() with preemption off).
        self.cpus[c].ksirqd_start = t0
        self.cpus[c].ksirqd_restarts = 0
        return softirq_pass(self, c, t0)
    return rcu_core(self, c, t0, self.ents[e].phase)


cdef inline i64 softirq_pass(Engine self, int c, i64 t0) except -2:
    """One pass of handle_softirqs(), in ksoftirqd/N or restarted at an irq exit:
    RCU_SOFTIRQ's rcu_core()."""
    self.softirq_wake0 = self.n_wake_local
    self.cpus[c].tasklet_raised = 0
    self.cpus[c].softirq_pending = 0
    return rcu_core(self, c, t0, 0)


cdef i64 rcu_cpu_kthread(Engine self, int e) except -2:
    cdef int c = self.ents[e].idx
    cdef cpu_t *cp = &self.cpus[c]
    if self.ents[e].phase == 0:
        return ksoftirqd_pass_done(self, c)
    if cbs_ready(self, cp) or rcu_pending(self, c):
        return rcu_cpu_kthread_next(self, e, self.now)
    return -1


cdef i64 ksoftirqd_pass_done(Engine self, int c) except -2:
    """A pass of ksoftirqd's handle_softirqs() ends now: rcu_softirq_qs() (v4.20), then
    the next pass while RCU work is pending and the restart limits allow it (need_resched()
    and the 2 ms from v3.9); past them, cond_resched() (from v3.9) and a new
    handle_softirqs()."""
    cdef cpu_t *cp = &self.cpus[c]
    if self.softirq_qs:
        rcu_qs(self, c, self.tp_ns)
    if not rcu_softirq_reraised(self, cp):
        return -1
    cp.ksirqd_restarts += 1
    if not softirq_restarts_over(self, cp, cp.ksirqd_restarts, self.now - cp.ksirqd_start):
        return softirq_pass(self, c, self.now)
    cp.softirq_pending = 1
    if self.softirq_time_limit and cond_resched(self, c):
        return -1  # run_ksoftirqd(): cond_resched() after handle_softirqs()
    return rcu_cpu_kthread_next(self, cp.rcuc, self.now)
