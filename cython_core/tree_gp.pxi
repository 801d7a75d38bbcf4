# The grace-period kthread (kernel/rcu/tree.c: rcu_gp_kthread): rcu_gp_init(),
# the FQS loop with its timer (rcu_gp_fqs_loop: rcu_gp_fqs() with
# rcu_watching_snap_save/recheck, resched_cpu() for holdouts) and
# rcu_gp_cleanup().  rcu_gp_kthread_next() gives the cost of the kthread's next
# step, rcu_gp_kthread() performs it at the end of that burst.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int rcu_spawn_gp_kthread(Engine self, g, int e) except -1:
    """The GP kthread (rcu_preempt or rcu_sched), first on the housekeeping CPU, and its FQS tunables."""
    self.jiffies_till_first_fqs = g.jiffies_till_first_fqs
    self.jiffies_till_next_fqs = g.jiffies_till_next_fqs
    self.jiffies_to_sched_qs = g.jiffies_to_sched_qs
    self.jiffies_resched = g.jiffies_resched
    self.gp_kthread_cpu_qs_early = g.gp_kthread_cpu_qs_early
    self.gp_state = RCU_GP_IDLE
    self.gp_ent = e
    self.ents[e].kind = ENT_GP
    self.ents[e].cpu = self.gp_cpu
    self.ents[e].rq = RQ_RT if g.gp_kthread_rt else RQ_NORMAL
    # kthread_create(rcu_gp_kthread): unbound, placed at each wake-up.
    kthread_place_at_wakeup(self, e)
    self.gp_timer_cpu = self.gp_ran_cpu = self.ents[e].cpu
    return e + 1


cdef inline int gp_kthread_cpu(Engine self) noexcept:
    """The CPU the GP kthread runs on, or last ran on."""
    return self.ents[self.gp_ent].cpu


cdef void rcu_gp_kthread_wake(Engine self, int c) except *:
    """rcu_gp_kthread_wake() by code running on CPU c: swake_up_one()'s
    try_to_wake_up() from c (select_task_rq_fair()'s this_cpu); never from the GP
    kthread itself."""
    if self.in_gp_kthread or self.gp_flags == 0:
        return
    if self.ents[self.gp_ent].state == ST_BLOCKED:
        self.n_gp_wake += 1
        wake(self, self.gp_ent, c, self.now + self.acc)


cdef i64 rcu_gp_kthread_next(Engine self, int e, i64 t0) except -2:
    """Decide the kthread's next step and its cost."""
    cdef int nleaves = self.num_nodes - self.leaf_first
    cdef int n, ncpus = 0
    if self.gp_state == RCU_GP_IDLE:
        if not (self.gp_flags & RCU_GP_FLAG_INIT):
            self.gp_pending_phase = RCU_GP_IDLE
            return 0
        # ONOFF phase over the leaves, then the breadth-first INIT walk.
        self.gp_pending_phase = RCU_GP_INIT
        return (nleaves + self.num_nodes) * self.rnp_lock_ns
    # WAIT_FQS woken up.
    if root_qs_done(self):
        self.gp_pending_phase = RCU_GP_CLEANUP
        return self.num_nodes * self.rnp_lock_ns
    if self.now >= self.fqs_deadline or (self.gp_flags & RCU_GP_FLAG_FQS):
        for n in range(self.leaf_first, self.num_nodes):
            ncpus += popcount64(self.nodes[n].qsmask)
        self.gp_pending_phase = RCU_GP_DOING_FQS
        if self.trace_on:
            trace(self, t0, TR_GP_FQS_START, self.ents[e].cpu, e, self.gp_seq, 0, 0)
        return (nleaves + ncpus) * self.rnp_lock_ns
    self.gp_pending_phase = RCU_GP_WAIT_FQS
    return 0


cdef void gp_arm_fqs_timer(Engine self, i64 j) except *:
    """jiffies_force_qs = jiffies + j, and schedule_timeout(j) on the timer wheel."""
    self.fqs_deadline = (jiffies(self) + j) * self.jiffy_ns
    self.gp_timer_gen += 1
    self.gp_timer_cpu = gp_kthread_cpu(self)  # schedule_timeout() arms it on this CPU
    self.gp_timer_expires = timer_expiry_ns(self, j)
    push(self, self.gp_timer_expires, PRIO_NORMAL, EV_GP_TIMER, 0, <i64> self.gp_timer_gen)


cdef i64 rcu_gp_kthread(Engine self, int e) except -2:
    cdef int phase = self.gp_pending_phase
    self.acc = 0
    self.in_gp_kthread = 1
    self.gp_ran_cpu = self.ents[e].cpu
    if phase == RCU_GP_INIT:
        rcu_gp_init(self)
        tp_acc(self, TP_RCU_GRACE_PERIOD, 2)  # "start", then rcu_gp_fqs_loop()'s "fqswait"
        self.gp_state = RCU_GP_WAIT_FQS
        self.fqs_first = 1
        gp_arm_fqs_timer(self, self.jiffies_till_first_fqs)
    elif phase == RCU_GP_DOING_FQS:
        rcu_gp_fqs(self)
        tp_acc(self, TP_RCU_GRACE_PERIOD, 3)  # "fqsstart", "fqsend", "fqswait"
        self.gp_flags &= ~RCU_GP_FLAG_FQS
        gp_arm_fqs_timer(self, self.jiffies_till_next_fqs)
    elif phase == RCU_GP_CLEANUP:
        rcu_gp_cleanup(self)
        tp_acc(self, TP_RCU_GRACE_PERIOD, 2)  # "end", then rcu_gp_kthread()'s "reqwait"
        self.gp_state = RCU_GP_IDLE
    self.in_gp_kthread = 0
    self.cpus[self.ents[e].cpu].debt += self.acc
    # Sleep unless the condition of the next wait already holds.
    if self.gp_state == RCU_GP_IDLE:
        if not (self.gp_flags & RCU_GP_FLAG_INIT):
            return -1
    elif not (root_qs_done(self) or (self.gp_flags & RCU_GP_FLAG_FQS) or self.now >= self.fqs_deadline):
        return -1
    # cond_resched_tasks_rcu_qs() ends each of rcu_gp_init()'s, rcu_gp_fqs_loop()'s
    # and rcu_gp_cleanup()'s steps: without CONFIG_PREEMPTION the only place a
    # GP kthread that never sleeps (back-to-back GPs) lets its CPU's other tasks run.
    if cond_resched(self, self.ents[e].cpu):
        return -1
    return rcu_gp_kthread_next(self, e, self.now)


cdef void ev_gp_timer(Engine self, int arrived_on, i64 gen) except *:
    """process_timeout(): the FQS wait's timer wakes the kthread, from the CPU
    whose interrupt expires it (timer_expiry_cpu()), when that interrupt arrives
    (arrived_on: 1 + that CPU, once a late one has; 0 at the expiry)."""
    cdef int c
    if <u64> gen != self.gp_timer_gen or self.gp_state != RCU_GP_WAIT_FQS:
        return
    if arrived_on:
        c = arrived_on - 1
    else:
        c = timer_expiry_cpu(self, self.gp_timer_cpu)
        if timer_irq_late(self, c, EV_GP_TIMER, c + 1, gen):
            return
    timer_tick(self, c)
    if self.ents[self.gp_ent].state == ST_BLOCKED:
        self.acc = 0
        wake(self, self.gp_ent, c, self.now)


cdef void rcu_gp_init(Engine self) except *:
    """rcu_gp_init(): start gp_seq and set every node's qsmask."""
    cdef int n
    self.gp_flags = 0
    self.gp_start = self.now  # the GP begins at rcu_seq_start() below
    self.gp_nfqs = 0
    self.gp_last_qs = -1
    rcu_sr_normal_gp_init(self)
    self.gp_seq += 1  # rcu_seq_start()
    if self.trace_on:
        trace(self, self.now, TR_GP_START, gp_kthread_cpu(self), self.gp_ent, self.gp_seq, 0, 0)
    for n in range(self.num_nodes):
        self.nodes[n].qsmask = self.nodes[n].qsmaskinit
        self.nodes[n].gp_seq = self.gp_seq
    if self.preemptible_readers:
        mark_blocked_readers(self, 0)  # rnp->gp_tasks
    note_gp_changes_locked(self, gp_kthread_cpu(self))
    if self.gp_kthread_cpu_qs_early:
        # rcu_qs() and rcu_report_qs_rdp() for this CPU, which no first FQS
        # scan can see idle: it is running the scan.
        rcu_qs(self, gp_kthread_cpu(self), self.tp_ns)
        rcu_report_qs_rdp(self, gp_kthread_cpu(self))
    if self.srs_next_head >= 0:
        # All wait heads were busy: ask for another GP for these waiters.
        rcu_start_this_gp(self, self.cpus[gp_kthread_cpu(self)].leaf, rcu_seq_snap(self.gp_seq))


cdef void rcu_gp_fqs(Engine self) except *:
    """rcu_gp_fqs() -> force_qs_rnp(): report idle CPUs, nudge holdouts."""
    cdef int n, bit, c
    cdef u64 qsm, mask
    cdef cpu_t *cp
    cdef i64 age = (self.now - self.gp_start) // self.jiffy_ns
    cdef bint first = self.fqs_first
    cdef i64 nrep = 0
    cdef int src
    self.fqs_first = 0
    self.n_fqs += 1
    self.gp_nfqs += 1
    for n in range(self.leaf_first, self.num_nodes):
        qsm = self.nodes[n].qsmask
        if qsm == 0:
            continue
        mask = 0
        while qsm:
            bit = ctz64(qsm)
            qsm &= qsm - 1
            c = self.nodes[n].grplo + bit
            cp = &self.cpus[c]
            if first and self.fault != FAULT_GP_ONE_FQS_EARLY:
                # rcu_watching_snap_save()
                cp.watching_snap = cp.watching
                # A CPU still leaving its idle state (CPU_WAKING) has not yet
                # left the extended QS: ct_idle_exit() runs after the exit.
                if cp.state != CPU_BUSY and not cp.in_irq:
                    mask |= (<u64> 1) << bit
            elif (cp.state != CPU_BUSY and not cp.in_irq) or cp.watching != cp.watching_snap:
                # rcu_watching_snap_recheck(): passed through an EQS.
                mask |= (<u64> 1) << bit
            else:
                if age > self.jiffies_to_sched_qs:
                    cp.urgent_qs = 1
                if age > self.jiffies_resched:
                    # resched_cpu(): an IPI forces a context switch.
                    self.n_ipis += 1
                    push(self, self.now + self.ipi_latency_ns, PRIO_URGENT, EV_IPI, c, 0)
                    if self.trace_on:
                        trace(self, self.now, TR_IPI_SEND, c, -1, self.gp_seq, 0, 0)
        if mask:
            tp_acc(self, TP_RCU_FQS, popcount64(mask))  # "dti" for each CPU found in an EQS
            if self.trace_on:
                nrep += trace_qs_mask(self, n, mask, self.nodes[n].gp_seq, 1)
            rcu_report_qs_rnp(self, mask, n, self.nodes[n].gp_seq, fqs_qs_src(self, n, mask), gp_kthread_cpu(self))
    if self.trace_on:
        trace(self, self.now, TR_GP_FQS_END, gp_kthread_cpu(self), self.gp_ent, self.gp_seq, nrep, 0)


cdef int fqs_qs_src(Engine self, int n, u64 mask) noexcept:
    """LAST_QS_* of a scan's report for the CPUs of mask at leaf n."""
    cdef int c
    if self.cpus[gp_kthread_cpu(self)].leaf == n and mask & self.cpus[gp_kthread_cpu(self)].grpmask:
        return LAST_QS_GP_CPU
    while mask:
        c = self.nodes[n].grplo + ctz64(mask)
        mask &= mask - 1
        if self.cpus[c].state == CPU_BUSY:
            return LAST_QS_BUSY
    return LAST_QS_IDLE


cdef void rcu_gp_cleanup(Engine self) except *:
    """rcu_gp_cleanup(): end gp_seq node by node, wake rcuog waiters."""
    cdef int n, x, nxt
    cdef i64 new = rcu_seq_endval(self.gp_seq)
    cdef bint needgp = False
    cdef rnp_t *np
    for n in range(self.num_nodes):
        np = &self.nodes[n]
        np.gp_seq = new
        # swake_up_all(&rnp->nocb_gp_wq[]): rcuog waiting for this GP.
        x = np.nocb_wait
        np.nocb_wait = -1
        while x >= 0:
            nxt = self.ents[x].wait_next
            self.ents[x].wait_next = -1
            if rcu_seq_done(new, self.ents[x].wait_gp_seq):
                self.ents[x].on_waitq = 0
                wake(self, x, gp_kthread_cpu(self), self.now)
            else:
                self.ents[x].wait_next = np.nocb_wait
                np.nocb_wait = x
            x = nxt
        # rcu_future_gp_cleanup()
        if ULONG_CMP_LT(new, np.gp_seq_needed):
            needgp = True
        else:
            np.gp_seq_needed = new
    note_gp_changes_locked(self, gp_kthread_cpu(self))
    # "Check for GP requests since above loop" (CleanupMore): a request the
    # kthread's own CPU just made reached the root after its check above.
    if ULONG_CMP_LT(self.nodes[0].gp_seq, self.nodes[0].gp_seq_needed):
        needgp = True
    record_gp(self, 0, self.gp_seq, self.gp_start, self.gp_qs_t, self.now, 0, self.gp_nfqs, self.gp_last_qs)
    self.gp_seq = new  # rcu_seq_end()
    if self.trace_on:
        trace(self, self.now, TR_GP_END, gp_kthread_cpu(self), self.gp_ent, new, 0, 0)
    rcu_sr_normal_gp_cleanup(self)
    if needgp:
        tp_acc(self, TP_RCU_GRACE_PERIOD, 1)  # "newreq"
        self.gp_flags |= RCU_GP_FLAG_INIT
