# Callback offloading (kernel/rcu/tree_nocb.h): call_rcu_nocb() with the bypass
# list, the rcuog kthreads (nocb_gp_wait) that request GPs and wait for them,
# the rcuop kthreads (nocb_cb_wait) that invoke callbacks, the deferred-wake-up
# timer; lazy callbacks (CONFIG_RCU_LAZY, v6.2) wait in the bypass for up to
# jiffies_lazy_flush.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int tree_nocb_ents(nb) except -1:
    """The rcuog/N kthreads' entities, one per NOCB group."""
    return max(len(nb.group_first) - 1, 0)


cdef int rcu_spawn_nocb_kthreads(Engine self, nb, int e) except -1:
    """The rcuog/N kthread of each NOCB group, on the group leader's CPU."""
    cdef int g, i
    self.nocb_nobypass_lim = nb.nocb_nobypass_lim
    self.jiffies_lazy_flush = nb.jiffies_lazy_flush
    self.nocb_lazy_defer_leader = nb.nocb_lazy_defer_leader
    self.nocb_cb_rt = nb.nocb_cb_rt
    self.rcuo_cond_resched = nb.rcuo_cond_resched
    for i in range(self.nr_cpus):
        self.cpus[i].offloaded = nb.offloaded[i]
    self.n_groups = max(len(nb.group_first) - 1, 0)
    self.groups = <group_t *> malloc((self.n_groups + 1) * sizeof(group_t))
    self.group_cpus = <int *> malloc((len(nb.group_cpus) + 1) * sizeof(int))
    if self.groups == NULL or self.group_cpus == NULL:
        raise MemoryError()
    for i in range(len(nb.group_cpus)):
        self.group_cpus[i] = nb.group_cpus[i]
    for g in range(self.n_groups):
        self.groups[g].first = nb.group_first[g]
        self.groups[g].count = nb.group_first[g + 1] - nb.group_first[g]
        self.groups[g].nocb_gp_sleep = 1
        self.groups[g].timer_gen = 0
        self.groups[g].defer = NOCB_WAKE_NOT
        self.groups[g].ent = e
        self.ents[e].kind = ENT_RCUOG
        self.ents[e].idx = g
        self.ents[e].cpu = self.group_cpus[nb.group_first[g]]
        self.ents[e].rq = self.ents[self.gp_ent].rq  # rcuog runs at the GP kthread's priority
        kthread_unbind(self, e)
        for i in range(nb.group_first[g], nb.group_first[g + 1]):
            self.cpus[self.group_cpus[i]].group = g
        e += 1
    return e


cdef void rcu_spawn_cpu_nocb_kthread(Engine self, int c, int e) noexcept:
    """rcuop/N, entity e, of offloaded CPU c (rcu_spawn_cpu_nocb_kthread())."""
    self.cpus[c].rcuop = e
    self.cpus[c].nocb_cb_sleep = 1
    self.ents[e].kind = ENT_RCUOP
    # rcu_do_batch(): cond_resched_tasks_rcu_qs() after each callback, where a pending
    # need_resched switches it out without CONFIG_PREEMPTION.
    self.ents[e].might_resched = self.rcuo_cond_resched
    self.ents[e].rq = RQ_RT if self.nocb_cb_rt else RQ_NORMAL
    kthread_unbind(self, e)


cdef void kthread_unbind(Engine self, int e) noexcept:
    """An rcuog or rcuop kthread may run on any housekeeping CPU (kthread_run()'s
    default affinity), placed as any fair task; SCHED_FIFO ones (kthread_prio) and
    machines without scheduling domains keep it on its CPU."""
    if kthread_place_at_wakeup(self, e):
        self.n_unbound += 1


cdef inline int rcuog_leaf(Engine self, int g) noexcept:
    """The leaf whose nocb_gp_wq rcuog/g sleeps on: its group leader's (rdp_gp->mynode)."""
    return self.cpus[self.group_cpus[self.groups[g].first]].leaf


cdef void rcu_nocb_flush_bypass(Engine self, cpu_t *cp, int cb) noexcept:
    """rcu_nocb_flush_bypass(): bypass callbacks (then cb) join ->cblist's NEXT."""
    cdef int k = RCU_NEXT_TAIL
    cp.lazy_len = 0
    if cp.byp_len > 0:
        if cp.cb_tail >= 0:
            self.cbs[cp.cb_tail].next = cp.byp_head
        else:
            cp.cb_head = cp.byp_head
        cp.cb_tail = cp.byp_tail
        if self.fault == FAULT_BYPASS_WRONG_SEGMENT and cp.seg_len[RCU_NEXT_TAIL] == 0:
            # The list's tail is then the last non-empty pending segment's:
            # joining it gives them that segment's gp_seq.
            k = RCU_NEXT_READY_TAIL
            while k > RCU_WAIT_TAIL and cp.seg_len[k] == 0:
                k -= 1
            if cp.seg_len[k] == 0:
                k = RCU_NEXT_TAIL
        cp.seg_len[k] += cp.byp_len
        cp.byp_head = cp.byp_tail = -1
        cp.byp_len = 0
        self.n_bypass_flush += 1
    if cb >= 0:
        rcu_segcblist_enqueue(self, cp, cb)


cdef int call_rcu_nocb(Engine self, int c, int cb, bint lazy) except -1:
    """call_rcu_nocb() / rcu_nocb_try_bypass(): the callback goes to ->cblist or to
    the bypass list; lazy callbacks always take the bypass."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 j = jiffies(self)
    cdef i64 cnt, ncbs = cp.byp_len
    cdef bint was_alldone, bypass_is_lazy = ncbs == cp.lazy_len
    # Count direct ->cblist enqueues per jiffy; beyond the limit use the bypass.
    if j == cp.nobypass_last:
        cnt = cp.nobypass_count + 1
    else:
        cp.nobypass_last = j
        cnt = cp.nobypass_count - self.nocb_nobypass_lim
        if cp.nobypass_count < self.nocb_nobypass_lim:
            cnt = 0
        elif cnt > self.nocb_nobypass_lim:
            cnt = self.nocb_nobypass_lim
    cp.nobypass_count = cnt
    if cnt < self.nocb_nobypass_lim and not lazy:
        was_alldone = pend_cbs(self, cp) == 0
        rcu_nocb_flush_bypass(self, cp, cb)
        __call_rcu_nocb_wake(self, c, was_alldone)
        return 0
    # A non-lazy bypass older than this jiffy, a lazy one older than
    # jiffies_lazy_flush, or a full one is flushed with the callback.
    if ((ncbs > 0 and not bypass_is_lazy and j != cp.byp_first)
            or (ncbs > 0 and bypass_is_lazy and j > cp.byp_first + self.jiffies_lazy_flush)
            or ncbs >= self.qhimark):
        was_alldone = pend_cbs(self, cp) == 0
        rcu_nocb_flush_bypass(self, cp, cb)
        __call_rcu_nocb_wake(self, c, was_alldone)
        return 0
    # Use the bypass.
    if cp.byp_tail >= 0:
        self.cbs[cp.byp_tail].next = cb
    else:
        cp.byp_head = cb
    cp.byp_tail = cb
    cp.byp_len += 1
    if lazy:
        cp.lazy_len += 1
    if ncbs == 0:
        cp.byp_first = j
        trace_rcu_nocb_wake(self, c, NOCB_TPS_FIRST_BQ)
    self.n_bypass_enq += 1
    # The first callback, or the first non-lazy one behind lazy ones, wakes
    # rcuog if nothing else is pending.
    if ncbs == 0 or (bypass_is_lazy and not lazy):
        if pend_cbs(self, cp) == 0:
            trace_rcu_nocb_wake(self, c, NOCB_TPS_FIRST_BQ_WAKE)
            __call_rcu_nocb_wake(self, c, True)
        else:
            trace_rcu_nocb_wake(self, c, NOCB_TPS_FIRST_BQ_NO_WAKE)
    return 0


cdef void __call_rcu_nocb_wake(Engine self, int c, bint was_alldone) except *:
    """__call_rcu_nocb_wake(): wake rcuog when the queue was empty or grew a lot;
    a queue of lazy callbacks only gets a deferred LAZY wake-up."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 n = n_cbs(self, cp)
    if was_alldone:
        cp.qlen_last_fqs_check = n
        if cp.lazy_len > 0 and cp.byp_len == cp.lazy_len:
            wake_nocb_gp_defer(self, c, NOCB_WAKE_LAZY)
            trace_rcu_nocb_wake(self, c, NOCB_TPS_WAKE_LAZY)
        else:
            wake_nocb_gp(self, cp.group)
            trace_rcu_nocb_wake(self, c, NOCB_TPS_WAKE_EMPTY)
    elif n > cp.qlen_last_fqs_check + self.qhimark:
        cp.qlen_last_fqs_check = n
        wake_nocb_gp(self, cp.group)
        trace_rcu_nocb_wake(self, c, NOCB_TPS_WAKE_OVF)
    else:
        trace_rcu_nocb_wake(self, c, NOCB_TPS_WAKE_NOT)


cdef void wake_nocb_gp_defer(Engine self, int c, int waketype) noexcept:
    """wake_nocb_gp_defer() of CPU c's rdp for the BYPASS and LAZY levels: (re)arm its
    group's nocb_timer.  A LAZY wake-up arms it jiffies_lazy_flush away only if no
    wake-up is deferred yet, else one jiffy away.  Before v6.17 the test read c's own
    rdp, where only the group leader keeps the deferral: any other CPU always re-armed it."""
    cdef int g = self.cpus[c].group
    cdef group_t *gp = &self.groups[g]
    cdef i64 j = jiffies(self), expires
    cdef bint leader = self.group_cpus[gp.first] == c
    cdef int deferred = gp.defer if (leader or self.nocb_lazy_defer_leader) else NOCB_WAKE_NOT
    if waketype == NOCB_WAKE_LAZY and deferred == NOCB_WAKE_NOT:
        expires = j + self.jiffies_lazy_flush
        gp.defer = waketype
    elif waketype == NOCB_WAKE_BYPASS:
        expires = j + 2
        gp.defer = waketype
    else:
        expires = j + 1  # every deferral rcusim models is below RCU_NOCB_WAKE
        gp.defer = max(gp.defer, waketype)
    gp.timer_gen = <u64> self.evq.seq + 1
    push(self, timer_expiry_jiffy(self, j, expires) * self.jiffy_ns, PRIO_NORMAL, EV_BYPASS_TIMER, g,
         <i64> gp.timer_gen)


cdef void wake_nocb_gp(Engine self, int g) except *:
    cdef group_t *gp = &self.groups[g]
    if gp.nocb_gp_sleep:
        gp.nocb_gp_sleep = 0
        rnp_waitq_remove(self, gp.ent)
        self.n_rcuog_wake += 1
        wake(self, gp.ent, -1, self.now + self.acc)


cdef void rnp_waitq_remove(Engine self, int e) noexcept:
    cdef ent_t *ep = &self.ents[e]
    cdef int n, x, prev
    if not ep.on_waitq:
        return
    n = rcuog_leaf(self, ep.idx)
    prev = -1
    x = self.nodes[n].nocb_wait
    while x >= 0:
        if x == e:
            if prev >= 0:
                self.ents[prev].wait_next = ep.wait_next
            else:
                self.nodes[n].nocb_wait = ep.wait_next
            break
        prev = x
        x = self.ents[x].wait_next
    ep.wait_next = -1
    ep.on_waitq = 0


cdef i64 nocb_gp_wait_next(Engine self, int e) except -2:
    cdef group_t *gp = &self.groups[self.ents[e].idx]
    # One nocb_lock round per CPU of the group.
    return gp.count * self.rnp_lock_ns


cdef i64 nocb_gp_wait(Engine self, int e) except -2:
    cdef ent_t *ep = &self.ents[e]
    cdef int g = ep.idx
    cdef group_t *gp = &self.groups[g]
    cdef int i, r, leaf
    cdef cpu_t *cp
    cdef i64 j = jiffies(self)
    cdef bint bypass = False, lazy = False, needwait = False, needwake_gp = False
    cdef i64 wait = 0, nextgp, flush_after
    self.acc = 0
    gp.nocb_gp_sleep = 1
    gp.timer_gen = 0  # del_timer(&nocb_timer)
    gp.defer = NOCB_WAKE_NOT
    for i in range(gp.first, gp.first + gp.count):
        r = self.group_cpus[i]
        cp = &self.cpus[r]
        # Flush a bypass of lazy callbacks only after jiffies_lazy_flush, any other after a jiffy.
        flush_after = self.jiffies_lazy_flush if cp.byp_len == cp.lazy_len else 1
        if cp.byp_len > 0 and (j > cp.byp_first + flush_after or cp.byp_len > 2 * self.qhimark):
            rcu_nocb_flush_bypass(self, cp, -1)
        elif cp.byp_len == 0 and n_cbs(self, cp) == 0:
            continue
        if cp.byp_len > 0 and cp.byp_len == cp.lazy_len:
            lazy = True
        elif cp.byp_len > 0:
            bypass = True
        if (cp.seg_len[RCU_NEXT_READY_TAIL] + cp.seg_len[RCU_NEXT_TAIL] > 0
                or (pend_cbs(self, cp) > 0
                    and rcu_seq_done(self.nodes[cp.leaf].gp_seq, cp.seg_gp[RCU_WAIT_TAIL]))):
            rnp_lock(self, cp.leaf)
            if rcu_advance_cbs(self, r):
                needwake_gp = True
        if pend_cbs(self, cp) > 0:
            nextgp = cp.seg_gp[RCU_WAIT_TAIL]
            if not needwait or nextgp < wait:
                wait = nextgp
            needwait = True
        if cp.seg_len[RCU_DONE_TAIL] > 0 and cp.nocb_cb_sleep:
            cp.nocb_cb_sleep = 0
            wake(self, cp.rcuop, ep.cpu, self.now + self.acc)
    if needwake_gp:
        rcu_gp_kthread_wake(self, ep.cpu)
    # A non-empty bypass must not strand its callbacks: a timer wakes rcuog again.
    if bypass:
        wake_nocb_gp_defer(self, self.group_cpus[gp.first], NOCB_WAKE_BYPASS)
    elif lazy:
        wake_nocb_gp_defer(self, self.group_cpus[gp.first], NOCB_WAKE_LAZY)
    self.cpus[ep.cpu].debt += self.acc
    if not gp.nocb_gp_sleep:
        return nocb_gp_wait_next(self, e)
    if needwait:
        leaf = rcuog_leaf(self, g)
        if rcu_seq_done(self.nodes[leaf].gp_seq, wait):
            return nocb_gp_wait_next(self, e)
        ep.on_waitq = 1
        ep.wait_gp_seq = wait
        ep.wait_next = self.nodes[leaf].nocb_wait
        self.nodes[leaf].nocb_wait = e
    return -1


cdef void do_nocb_bypass_wakeup_timer(Engine self, int g, i64 gen) except *:
    """do_nocb_deferred_wakeup_timer(): wake rcuog to flush a stranded bypass."""
    if self.groups[g].timer_gen != <u64> gen:
        return
    self.groups[g].timer_gen = 0
    self.groups[g].defer = NOCB_WAKE_NOT
    timer_tick(self, self.ents[self.groups[g].ent].cpu)
    self.acc = 0
    wake_nocb_gp(self, g)


cdef i64 nocb_cb_wait_next(Engine self, int e, i64 t0) except -2:
    cdef int r = self.ents[e].idx
    # rcu_momentary_eqs(): the FQS scan sees a quiescent state.
    self.cpus[self.ents[e].cpu].watching += 2
    return rcu_do_batch(self, r, t0, 2)


cdef i64 nocb_cb_wait(Engine self, int e) except -2:
    cdef int r = self.ents[e].idx
    cdef cpu_t *cp = &self.cpus[r]
    cdef bint needwake_gp = False
    self.acc = 0
    if pend_cbs(self, cp) > 0 and rcu_seq_done(self.nodes[cp.leaf].gp_seq, cp.seg_gp[RCU_WAIT_TAIL]):
        rnp_lock(self, cp.leaf)
        needwake_gp = rcu_advance_cbs(self, r)
    if needwake_gp:
        rcu_gp_kthread_wake(self, self.ents[e].cpu)
    self.cpus[self.ents[e].cpu].debt += self.acc
    if cp.seg_len[RCU_DONE_TAIL] > 0:
        return nocb_cb_wait_next(self, e, self.now)
    cp.nocb_cb_sleep = 1
    return -1
