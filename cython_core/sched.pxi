# The scheduler: per-CPU run queues (an RT queue served before the SCHED_OTHER
# queue, FIFO within each), wake-ups and their latency, bursts of CPU time,
# preemption, idle entry and exit (kernel/sched/core.c, kernel/sched/idle.c); the
# fair class is fair.pxi's, the tick's time slices tick.pxi's.
# Entities (tasks and kthreads) run in bursts: ent_run() (in _core.pyx) gives the
# length of an entity's next burst, ent_done() applies the burst's effects.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef void sched_init(Engine self, s) except *:
    """Scheduler, tick and interrupt costs; the event queue."""
    cdef int i
    self.jiffy_ns = s.jiffy_ns
    self.preemption = s.preemption
    self.gp_cpu = s.gp_cpu
    self.ctxsw_ns = s.ctxsw_ns
    self.wakeup_busy_ns = s.wakeup_busy_ns
    self.ipi_latency_ns = s.ipi_latency_ns
    self.tick_ns = s.tick_ns
    self.softirq_ns = s.softirq_ns
    self.ttwu_ns = s.ttwu_ns
    self.n_ttwu_reuse = len(s.ttwu_reuse_since_ns)  # bins' bounds; their prices have one more
    for i in range(self.n_ttwu_reuse):
        self.ttwu_reuse_since[i] = s.ttwu_reuse_since_ns[i]
    for i in range(len(s.ttwu_reuse_delta_ns)):
        self.ttwu_reuse_delta[i] = s.ttwu_reuse_delta_ns[i]
    self.fault = s.fault
    self.stepping = -1
    self.ending = -1
    if eventq_init(&self.evq, 1024) < 0:
        raise MemoryError()
    self.rqlen_ns = <i64 *> calloc(RQLEN_BUCKETS, sizeof(i64))
    if self.rqlen_ns == NULL:
        raise MemoryError()


cdef i64 ttwu_queue(Engine self, int from_cpu, int target, i64 t, i64 *cost, i64 hold, bint *by_target) noexcept:
    """ttwu_queue(): how long after the waker's try_to_wake_up() the wakee is on
    `target`'s run queue, and whether the target enqueues it (*by_target: from its
    wakelist) rather than the waker.  With `cost` (given with a topology only), the
    waker pays for it (adds to *cost).

    With a topology, as ttwu_queue_cond() decides: a wake-up on the waker's own CPU,
    or of a busy target sharing its LLC, is enqueued under the target's rq lock by
    the waker (one line transfer for an unpaid waker); otherwise the wake-up goes on
    the target's wakelist (llist_add(), a line transfer), and an idle target polling
    TIF_NEED_RESCHED (POLL or an MWAIT state) is woken by setting that flag
    (set_nr_if_polling(), one line transfer), any other by an IPI.  Without a
    topology every remote wake-up is an IPI.
    """
    cdef cpu_t *tp = &self.cpus[target]
    cdef bint idle = tp.state == CPU_IDLE
    cdef i64 line
    by_target[0] = False
    if from_cpu == target:
        self.n_wake_local += 1
        if cost != NULL:
            cost[0] += rq_lock(self, target, from_cpu, t, hold)
        return 0
    by_target[0] = True  # on the target's wakelist, unless the waker enqueues (below)
    if from_cpu < 0 or not self.has_topology:
        self.n_wake_ipi += 1
        return self.wakeup_busy_ns
    line = line_cost(self, from_cpu, target)
    if not idle and self.cpu_llc[from_cpu] == self.cpu_llc[target]:
        by_target[0] = False
        self.n_wake_remote += 1
        if cost != NULL:
            cost[0] += rq_lock(self, target, from_cpu, t, hold)
            return 0
        return line
    if idle and self.n_idle_states and (self.idle_mwait[self.menu[target].state]
                                        or (self.menu[target].state == 0 and self.idle_polling0)):
        self.n_wake_polling += 1
        if cost != NULL:
            cost[0] += line
        return line
    self.n_wake_ipi += 1
    if cost != NULL:
        cost[0] += self.ipi_send_ns  # __smp_call_single_queue(): the csd's llist_add() and the IPI
    return self.wakeup_busy_ns


cdef i64 rq_lock(Engine self, int c, int taker, i64 t, i64 hold) noexcept:
    """CPU `taker` takes CPU c's rq->__lock at t for an enqueue (ttwu_do_activate()):
    the lock's line comes from its last holder, and the taker spins while another
    waker holds it.  The hold is the enqueue, taken as the whole local wake-up path
    (`hold`: ttwu_ns, or its price by ttwu_reuse()): an upper bound.  The target's own
    holds (schedule(), the tick) are not modelled.  Returns the taker's time beyond
    the local path."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 line = line_cost(self, cp.rq_lock_cpu, taker) if cp.rq_lock_cpu != taker else 0
    cdef i64 wait = spin_wait(&cp.rq_lock_free, t + line, hold)
    cp.rq_lock_cpu = taker
    self.n_rq_lock_wait_ns += wait
    return line + wait


cdef inline i64 jiffies(Engine self) noexcept:
    return self.now // self.jiffy_ns


cdef enum:
    RQLEN_BUCKETS = 4096


cdef void rq_account(Engine self, int c) noexcept:
    """Before CPU c's nr_running changes: charge the time since the last change to
    its length (and to the CPU's busy time)."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 dt = self.now - cp.rq_t
    cdef int nr = cp.nr_queued + (1 if cp.state == CPU_BUSY else 0)
    update_cpu_util(self, c)
    if dt <= 0:
        return
    self.rqlen_ns[nr if nr < RQLEN_BUCKETS else RQLEN_BUCKETS - 1] += dt
    if cp.state == CPU_BUSY:
        cp.busy_ns += dt
    cp.rq_t = self.now


cdef inline bint is_fair(Engine self, int e) noexcept:
    return self.ents[e].rq == RQ_NORMAL and self.fair_policy != POLICY_RR


cdef bint enqueue(Engine self, int e) noexcept:
    """A woken entity joins its run queue. Returns whether the enqueue's update_curr()
    rescheduled the running fair entity (resched_curr())."""
    cdef ent_t *ep = &self.ents[e]
    cdef cpu_t *cp = &self.cpus[ep.cpu]
    cdef int q = ep.rq
    cdef bint curr_resched = False
    rq_account(self, ep.cpu)
    ep.state = ST_RUNNABLE
    if is_fair(self, e):
        if ep.sched_delayed:
            requeue_delayed_entity(self, ep.cpu, e)
        else:
            curr_resched = fair_enqueue_wakeup(self, ep.cpu, e)
        cp.nr_queued += 1
        lb_mark(self, ep.cpu)
        return curr_resched
    if ep.head_enqueue and cp.rq_head[q] >= 0:
        ep.next = cp.rq_head[q]
        cp.rq_head[q] = e
    else:
        ep.next = -1
        if cp.rq_tail[q] >= 0:
            self.ents[cp.rq_tail[q]].next = e
        else:
            cp.rq_head[q] = e
        cp.rq_tail[q] = e
    cp.nr_queued += 1
    lb_mark(self, ep.cpu)
    return False


cdef void requeue(Engine self, int c, int e, bint to_tail) noexcept:
    """The running entity e of CPU c goes back to its run queue (preempted, or
    yielding): a fair one into its heap (put_prev_entity()), others at the head
    of their class, or at the tail at the end of a round-robin slice."""
    cdef cpu_t *cp = &self.cpus[c]
    rq_account(self, c)
    if is_fair(self, e):
        fair_put_prev(self, c, e)
        self.ents[e].state = ST_RUNNABLE
        cp.nr_queued += 1
        lb_mark(self, c)
    elif to_tail:
        enqueue(self, e)
    else:
        enqueue_head(self, e)


cdef bint exit_to_user_mode(Engine self, int c) except *:
    """The running task returns to user mode (a system call's end): exit_to_user_mode_loop()
    schedules if need_resched is set (the task stays runnable). Returns True if it did."""
    if self.cpus[c].need_resched:
        requeue(self, c, self.cpus[c].curr, True)
        return True
    return False


cdef void enqueue_head(Engine self, int e) noexcept:
    """Put a preempted entity back at the head of its class."""
    cdef ent_t *ep = &self.ents[e]
    cdef cpu_t *cp = &self.cpus[ep.cpu]
    cdef int q = ep.rq
    ep.state = ST_RUNNABLE
    ep.next = cp.rq_head[q]
    cp.rq_head[q] = e
    if cp.rq_tail[q] < 0:
        cp.rq_tail[q] = e
    cp.nr_queued += 1
    lb_mark(self, ep.cpu)


cdef int dequeue(Engine self, int c) noexcept:
    """pick_next_task(): SCHED_FIFO first, then the fair class."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef int q, e
    for q in range(2):
        if q == RQ_NORMAL and self.fair_policy != POLICY_RR:
            e = fair_pick(self, c)
            if e >= 0:
                cp.nr_queued -= 1
                lb_mark(self, c)
            return e
        e = cp.rq_head[q]
        if e >= 0:
            cp.rq_head[q] = self.ents[e].next
            if cp.rq_head[q] < 0:
                cp.rq_tail[q] = -1
            self.ents[e].next = -1
            cp.nr_queued -= 1
            lb_mark(self, c)
            return e
    return -1


cdef void sched_set_normal(Engine self, int e) except *:
    """sched_set_normal(current, 0) by the running SCHED_FIFO task e: __sched_setscheduler()
    takes it out of the RT class and enqueues it in the fair class at nice 0, placed by
    place_entity() before it is the fair class's current entity (its lag 0: it never ran
    there), then set_next_entity(). switched_to_fair()'s resched_curr() picks it again:
    placed at V it is eligible and, under RUN_TO_PARITY, keeps the CPU (pick_eevdf()); under
    CFS its vruntime, the queue's min_vruntime (attach_task_cfs_rq() adds it to the
    normalised vruntime of a task that left the class at once), is leftmost."""
    cdef ent_t *ep = &self.ents[e]
    cdef int c = ep.cpu
    if ep.rq != RQ_RT:
        return
    update_cpu_util(self, c)  # the time it ran as RT was no fair running
    ep.weight = NICE_0_LOAD
    ep.vlag = 0
    ep.initial = 0
    if self.fair_policy == POLICY_EEVDF:
        place_entity(self, c, e)  # e is still RT: not counted as the running fair entity
        ep.vlag = ep.deadline     # set_next_entity(): RUN_TO_PARITY's mark
    elif self.fair_policy == POLICY_CFS:
        ep.vruntime = self.cpus[c].min_vruntime
    ep.rq = RQ_NORMAL
    ep.exec_start = self.now
    ep.prev_sum_exec = ep.sum_exec


cdef void wake(Engine self, int e, int from_cpu, i64 t) except *:
    """try_to_wake_up(): entity e becomes runnable at time t (>= now); the waker's
    cost, if any, is its caller's."""
    ttwu(self, e, from_cpu, t, 0, False)


cdef i64 try_to_wake_up(Engine self, int e, int from_cpu, i64 t, i64 local_ns) except -2:
    """try_to_wake_up() of e by a waker on CPU from_cpu from t that pays for it
    (complete(), wake_up_process(), a wait queue's wake-up): returns the waker's time.
    local_ns is the call with every cache line on the waker's CPU; with a topology the
    lines it pulls are added by distance (p->pi_lock and p's state from the CPU p last
    ran on, then ttwu_queue()'s), and the spin on a target's rq lock that other wakers
    hold, so that one waker waking thousands pays per wakee, and many wakers hitting
    one run queue wait for each other."""
    return ttwu(self, e, from_cpu, t, local_ns, True)


cdef int wake_from_acc(Engine self, int e, int from_cpu, i64 local_ns) except -1:
    """try_to_wake_up() made by the code running now on from_cpu, at the end of the time
    it has taken so far (self.acc), which the wake-up extends."""
    self.acc += try_to_wake_up(self, e, from_cpu, self.now + self.acc, local_ns)
    return 0


cdef inline i64 ttwu_reuse(Engine self, int c, i64 t) noexcept:
    """A wake-up's cost from ttwu_ns by the time since CPU c last woke a task (the
    profile's ttwu_reuse): the path costs less the sooner it runs again on a CPU."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef int i = self.n_ttwu_reuse
    if cp.ttwu_last >= 0:
        i = 0
        while i < self.n_ttwu_reuse and t - cp.ttwu_last > self.ttwu_reuse_since[i]:
            i += 1
    cp.ttwu_last = t
    return self.ttwu_reuse_delta[i]


cdef i64 ttwu(Engine self, int e, int from_cpu, i64 t, i64 local_ns, bint paid) except -2:
    cdef ent_t *ep = &self.ents[e]
    cdef i64 cost = local_ns, delay, reuse = 0
    cdef int prev = ep.cpu, c
    cdef bint by_target
    if ep.state != ST_BLOCKED:
        return cost
    ep.state = ST_RUNNABLE
    if paid and from_cpu >= 0 and self.n_ttwu_reuse:
        reuse = ttwu_reuse(self, from_cpu, t)
        local_ns = cost = max(local_ns + reuse, 0)
    self.n_wakeups += 1
    if ep.aff >= 0 and is_fair(self, e) and not ep.sched_delayed:  # a delayed one is still queued
        c = select_task_rq_fair(self, e, from_cpu)
        if c != ep.cpu:
            if self.trace_on:
                trace(self, t, TR_MIGRATE, c, e, 0, ep.cpu, from_cpu)  # set_task_cpu()'s sched_migrate_task
            set_task_cpu(self, e, c)
            self.n_migrations_wakeup += 1
    if paid and self.has_topology and from_cpu >= 0:
        if prev != from_cpu:
            cost += line_cost(self, from_cpu, prev)  # p->pi_lock, p->on_rq, p->on_cpu
        # The rq lock is asked before the local path, which holds it for the enqueue.
        delay = ttwu_queue(self, from_cpu, ep.cpu, t + cost - local_ns, &cost, max(self.ttwu_ns + reuse, 0),
                           &by_target)
    else:
        delay = ttwu_queue(self, from_cpu, ep.cpu, t + cost, NULL, 0, &by_target)
    if self.tp_on:
        cost += ttwu_tracepoints(self, e, from_cpu, paid, by_target)
    if paid and from_cpu >= 0:
        # Wake-ups made back to back (a wake-up loop) make one stretch with interrupts off
        # but for instants between them.
        if not self.cpus[from_cpu].ttwu_from <= t <= self.cpus[from_cpu].ttwu_until:
            self.cpus[from_cpu].ttwu_from = t
        self.cpus[from_cpu].ttwu_until = t + cost
    t += cost
    ep.t_woken = t
    t += delay
    if self.trace_on:
        trace(self, t, TR_WAKE, ep.cpu, e, 0, from_cpu, 0)
    if t <= self.now or (from_cpu == self.ending and ep.cpu == from_cpu):
        # ttwu_queue()'s local path from the action that ended a burst here: it enqueues its
        # wakee before it schedules (its time is this CPU's debt, paid before anything runs).
        ev_wake(self, e, 0)
    else:
        self.cpus[ep.cpu].ttwu_pending += 1
        lb_mark(self, ep.cpu)
        push(self, t, PRIO_NORMAL, EV_WAKE, e, 1)
    return cost


cdef i64 ttwu_tracepoints(Engine self, int e, int from_cpu, bint paid, bint by_target) noexcept:
    """A wake-up's events: sched_waking on the waker's CPU, sched_wakeup on the CPU that
    enqueues (the waker, or the target in its IPI or idle loop when ttwu_queue() put the
    wakee on its wakelist). Returns the paying waker's part; the rest is debt (none where
    rcusim does not place the waker)."""
    cdef i64 waker = 0
    if paid:
        waker += tp_cost(self, TP_SCHED_WAKING, 1)
    else:
        tp_debt(self, from_cpu, TP_SCHED_WAKING, self.tp_ns)
    if by_target:
        tp_debt(self, self.ents[e].cpu, TP_SCHED_WAKEUP, self.tp_irq_ns)  # sched_ttwu_pending()
    elif paid:
        waker += tp_cost(self, TP_SCHED_WAKEUP, 1)
    else:
        tp_debt(self, from_cpu, TP_SCHED_WAKEUP, self.tp_ns)
    return waker


cdef void place_new_task(Engine self, int e) except *:
    """wake_up_new_task()'s placement of a new unbound task from its parent's CPU (ep.cpu):
    set_task_cpu(p, select_task_rq(p, WF_FORK)), done once."""
    cdef ent_t *ep = &self.ents[e]
    ep.fork_place = 0
    set_task_cpu(self, e, find_idlest_cpu(self, e, ep.cpu))


cdef int ev_wake(Engine self, int e, i64 pending) except -1:
    """The wake-up lands: e joins its CPU's run queue (`pending`: it was counted in
    the CPU's ttwu_pending).  A new unbound task is placed first (wake_up_new_task())."""
    cdef ent_t *ep = &self.ents[e]
    cdef int c
    cdef bint curr_resched
    if pending:
        self.cpus[ep.cpu].ttwu_pending -= 1
        lb_mark(self, ep.cpu)
    if ep.fork_place:
        place_new_task(self, e)
    c = ep.cpu
    if self.n_unbound:
        update_avg_idle(self, c)
    ep.t_queued = self.now
    curr_resched = enqueue(self, e)
    if self.n_unbound and nr_running(self, c) >= 2:
        self.rd_overload = 1
    check_preempt_or_kick(self, c, e, curr_resched)
    return 0


cdef int check_preempt_or_kick(Engine self, int c, int e, bint curr_resched=False) except -1:
    """An entity e was queued on CPU c: wake c from idle, or preempt its running
    entity if e should run first or if the enqueue's update_curr() rescheduled it
    (`curr_resched`: update_curr()'s resched_curr())."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef ent_t *ep = &self.ents[e]
    cdef i64 lat
    if cp.state == CPU_IDLE:
        if self.halt_poll:
            lat = kvm_vcpu_wake(self, c)
            self.n_idle_exit_ns += lat
        else:
            lat = cpuidle_exit_ns(self, c) if self.n_idle_states else idle_exit_ns(self)
        cp.state = CPU_WAKING
        lb_mark(self, c)
        nohz_idle_update(self, c)
        # rcusim runs an interrupt taken from an idle state at once, and its state's exit
        # latency delays the woken task instead; if the idle task is in that interrupt or its
        # softirq, resched_curr() sets need_resched and do_idle() schedules when it returns
        # (nonpreempt_until: the exit and the handlers, cpuidle_irq()).
        cp.waking_until = max(self.now + lat, cp.nonpreempt_until)
        self.n_idle_exits += 1
        push(self, cp.waking_until, PRIO_NORMAL, EV_CPU_RUN, c, 0)
    elif cp.state == CPU_BUSY and ep.rq == RQ_RT and (self.preemption or might_resched(self, c)):
        if self.ents[cp.curr].rq == RQ_NORMAL:
            try_preempt(self, c)
    elif cp.state == CPU_BUSY and ep.rq == RQ_RT and self.ents[cp.curr].rq == RQ_NORMAL:
        cp.need_resched = 1  # !PREEMPTION: resched_curr() waits for a preemption point
    elif cp.state == CPU_BUSY and is_fair(self, e) and (curr_resched or fair_wakeup_preempt(self, c, e)):
        resched_fair(self, c)
    return 0


cdef void resched_fair(Engine self, int c) except *:
    """resched_curr() for the fair class: the switch waits for a preemption point."""
    cdef cpu_t *cp = &self.cpus[c]
    if not (self.preemption or cp.user_from <= self.now < cp.user_to or might_resched(self, c)):
        cp.need_resched = 1  # kernel mode, !PREEMPTION: at its next schedule() or cond_resched()
        return
    cp.fair_resched = 1
    try_preempt(self, c)


cdef inline bint burst_nopreempt(Engine self, int c) noexcept:
    """The running burst cannot be preempted: ksoftirqd inside a handle_softirqs() pass, or a
    call_rcu_load task inside a non-preemptible section."""
    cdef ent_t *ep = &self.ents[self.cpus[c].curr]
    return (ep.kind == ENT_RCUC and ep.phase == 0) or (ep.kind == ENT_BG and ep.phase == BG_LOCKED)


cdef inline bint tif_need_resched(cpu_t *cp) noexcept:
    """The running entity's TIF_NEED_RESCHED: resched_curr() was called for it, and the
    switch waits for its next preemption point."""
    return cp.need_resched or cp.fair_resched or cp.resched_pending or cp.step_resched or cp.resched_reader


cdef inline bint might_resched(Engine self, int c) noexcept:
    """CPU c runs a task whose kernel code reaches might_resched() every few us (ent_t.might_resched):
    without CONFIG_PREEMPTION a need_resched switches it at its next call, a call's time away,
    as a preemptible kernel's would be switched at once."""
    cdef cpu_t *cp = &self.cpus[c]
    return cp.state == CPU_BUSY and cp.curr >= 0 and self.ents[cp.curr].might_resched


cdef void try_preempt(Engine self, int c, bint at_boundary=False) except *:
    """Preempt the running entity for a woken RT one, or arrange it for the end of a
    non-preemptible stretch; `at_boundary`: the running burst has only just begun."""
    cdef cpu_t *cp = &self.cpus[c]
    if c == self.stepping:
        cp.step_resched = 1  # woken by the running entity's own action: switch when it ends
        return
    if in_reader(self, c) and not self.rwl_preemptible[self.ents[cp.curr].idx]:
        cp.resched_reader = 1  # preempt_enable() in rcu_read_unlock() reschedules
        return
    if not at_boundary and burst_nopreempt(self, c):
        cp.resched_reader = 1  # preempt_enable() at the end of the section reschedules
        return
    if self.now < cp.nonpreempt_until:
        if not cp.resched_pending:
            cp.resched_pending = 1
            push(self, cp.nonpreempt_until, PRIO_NORMAL, EV_RESCHED, c, 0)
        return
    preempt(self, c)


cdef void preempt(Engine self, int c, bint to_tail=False) except *:
    """Switch out the running entity: to the head of its class (preempted by a
    higher class) or, at the end of its time slice, to the tail."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef int e = cp.curr
    cdef i64 rest = cp.burst_end + cp.stolen - self.now
    if rest < 0:
        rest = 0
    if in_reader(self, c):
        rcu_preempt_ctxt_queue(self, c, e)
    self.ents[e].remaining = rest
    if not to_tail:
        # Round robin: preempted by a higher class, its time slice goes on
        # when it runs again.
        self.ents[e].slice_used = self.now - cp.run_start
    requeue(self, c, e, to_tail)
    cp.gen += 1
    cp.stolen = 0
    cp.curr = -1
    lb_mark(self, c)
    self.n_preempt += 1
    cpu_pick(self, c)


cdef int start_burst(Engine self, int c, i64 dur) except -1:
    cdef cpu_t *cp = &self.cpus[c]
    dur += cp.debt
    cp.debt = 0
    cp.gen += 1
    cp.burst_end = self.now + dur
    push(self, cp.burst_end, PRIO_NORMAL, EV_BURST_END, c, <i64> cp.gen)
    return 0


cdef int cpu_pick(Engine self, int c) except -1:
    """__schedule(): switch to the next runnable entity, or enter idle."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef int e
    rq_account(self, c)
    e = dequeue(self, c)
    cdef ent_t *ep
    cdef i64 t0, dur
    if e < 0 and self.n_unbound and cp.state == CPU_BUSY and newidle_balance(self, c):
        e = dequeue(self, c)
    if e < 0:
        cpu_enter_idle(self, c)
        return 0
    if cp.state == CPU_IDLE or cp.state == CPU_WAKING:
        if not cp.in_irq:  # else an interrupt's ct_irq_enter() left it already
            cp.watching += 1  # leaving the extended quiescent state
        if not cp.tick_on:
            cp.tick_on = 1
            push(self, (jiffies(self) + 1) * self.jiffy_ns, PRIO_NORMAL, EV_TICK, c, 0)
    cp.state = CPU_BUSY
    cp.curr = e
    lb_mark(self, c)
    nohz_idle_update(self, c)
    if self.trace_on:
        trace(self, self.now, TR_SWITCH, c, e, 0, 0, 0)
    ep = &self.ents[e]
    cp.run_start = self.now - ep.slice_used
    ep.slice_used = 0
    cp.need_resched = 0
    cp.fair_resched = 0
    cp.step_resched = 0
    ep.state = ST_RUNNING
    rcu_note_context_switch(self, c)
    self.n_ctxsw += 1
    cp.user_from = 0
    cp.user_to = 0
    tp_debt(self, c, TP_SCHED_SWITCH, self.tp_ns)  # __schedule()
    t0 = self.now + self.ctxsw_ns + cp.debt
    if ep.remaining >= 0:
        dur = ep.remaining
        ep.remaining = -1
    else:
        self.stepping = c
        dur = ent_run(self, e, t0)
        self.stepping = -1
    start_burst(self, c, self.ctxsw_ns + dur)
    if cp.step_resched:
        cp.step_resched = 0
        try_preempt(self, c, True)
    return 0


cdef void cpu_enter_idle(Engine self, int c) noexcept:
    cdef cpu_t *cp = &self.cpus[c]
    if self.trace_on and cp.cpu_no_qs:
        trace(self, self.now, TR_CPUQS, c, cp.curr, cp.gp_seq, 0, 0)  # rcu_qs() in __schedule()
    cp.state = CPU_IDLE
    cp.curr = -1
    lb_mark(self, c)
    nohz_idle_update(self, c)
    self.last_idle_cpu = c
    # The switch to the idle task is a QS (rcu_qs()). What a traced kernel records on the
    # way (sched_switch, cpuqs) takes time the CPU would have idled: it delays nothing.
    cp.cpu_no_qs = 0
    cp.watching += 1  # rcu_idle_enter(): extended quiescent state
    if self.trace_on:
        trace(self, self.now, TR_SWITCH, c, -1, 0, 0, 0)
    cp.user_from = 0
    cp.user_to = 0
    cpuidle_idle_call(self, c, False)
    if self.halt_poll:  # a vCPU's idle loop executes HLT
        cp.halt_start = self.now
        cp.halt_irq_lat = -1
    if self.n_unbound:
        if cp.idle_stamp == 0:
            cp.idle_stamp = self.now
    update_idle_core(self, c)


cdef void steal(Engine self, int c, i64 dur) noexcept:
    """Interrupt/softirq time on CPU c: the running burst ends later."""
    cdef cpu_t *cp = &self.cpus[c]
    if cp.state == CPU_BUSY:
        cp.stolen += dur
    if self.now + dur > cp.nonpreempt_until:
        cp.nonpreempt_until = self.now + dur


cdef int ev_burst_end(Engine self, int c, i64 gen) except -1:
    cdef cpu_t *cp = &self.cpus[c]
    cdef int e
    cdef bint delayed
    cdef i64 nxt, st
    if <u64> gen != cp.gen or cp.state != CPU_BUSY:
        return 0
    if cp.stolen > 0:
        st = cp.stolen
        cp.stolen = 0
        cp.burst_end = self.now + st
        push(self, cp.burst_end, PRIO_NORMAL, EV_BURST_END, c, gen)
        return 0
    e = cp.curr
    cp.user_from = 0
    cp.user_to = 0
    self.stepping = self.ending = c
    nxt = ent_done(self, e)
    self.stepping = self.ending = -1
    if nxt >= 0:
        start_burst(self, c, nxt)
        if (cp.resched_reader and not in_reader(self, c)) or cp.step_resched:
            cp.resched_reader = 0
            cp.step_resched = 0
            try_preempt(self, c, True)
        return 0
    cp.step_resched = 0
    # The entity blocks (or exits, or yielded in cond_resched()); schedule the next one.
    rq_account(self, c)
    delayed = False
    if self.ents[e].state == ST_RUNNING:
        if is_fair(self, e):
            delayed = fair_sleep(self, c, e)
        self.ents[e].state = ST_BLOCKED
    cp.curr = -1
    if delayed:
        tree_insert(self, c, e)  # put_prev_entity(): still queued, back in the tree
    lb_mark(self, c)
    cp.resched_reader = 0  # schedule() runs now anyway
    cpu_pick(self, c)
    return 0
