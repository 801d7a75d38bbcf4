# The rcu_node tree (kernel/rcu/tree.c): quiescent-state reports up the tree
# (rcu_report_qs_rnp, rcu_report_qs_rdp), GP requests up the funnel
# (rcu_start_this_gp), a CPU noticing GP changes (note_gp_changes), rcu_pending()
# and the RCU part of the scheduling-clock interrupt (rcu_sched_clock_irq).
#
# Included by _core.pyx: module-level functions on the Engine.


cdef void rcu_init_geometry(Engine self, t) except *:
    """The rcu_node tree, breadth first as rcu_state.node[], and the CPUs."""
    cdef int n, k
    self.rnp_lock_ns = t.rnp_lock_ns
    self.num_nodes = len(t.node_parent)
    self.leaf_first = t.leaf_first
    self.nr_cpus = len(t.cpu_leaf)
    self.nodes = <rnp_t *> malloc(self.num_nodes * sizeof(rnp_t))
    if sizeof(cpu_t) % 64:
        raise AssertionError(f"cpu_t is {sizeof(cpu_t)} bytes, not whole cache lines: mend its layout")
    if posix_memalign(<void **> &self.cpus, 64, self.nr_cpus * sizeof(cpu_t)) != 0:
        self.cpus = NULL
    if self.nodes == NULL or self.cpus == NULL:
        raise MemoryError()
    memset(self.nodes, 0, self.num_nodes * sizeof(rnp_t))
    memset(self.cpus, 0, self.nr_cpus * sizeof(cpu_t))
    for n in range(self.nr_cpus):
        self.cpus[n].ttwu_last = -1
    self.gp_seq = t.gp_seq_init
    for n in range(self.num_nodes):
        self.nodes[n].parent = t.node_parent[n]
        self.nodes[n].grpmask = <u64> int(t.node_grpmask[n])
        self.nodes[n].grplo = t.node_grplo[n]
        self.nodes[n].grphi = t.node_grphi[n]
        self.nodes[n].gp_seq = self.gp_seq
        self.nodes[n].gp_seq_needed = self.gp_seq
        self.nodes[n].nocb_wait = -1
        self.nodes[n].par_ent = -1
        for k in range(4):
            self.nodes[n].exp_wq_head[k] = -1
            self.nodes[n].exp_wq_tail[k] = -1
    # qsmaskinit and expmaskinit: every CPU online from the start (no hotplug modelled).
    for n in range(self.num_nodes):
        if self.nodes[n].parent >= 0:
            self.nodes[self.nodes[n].parent].qsmaskinit |= self.nodes[n].grpmask
            self.nodes[self.nodes[n].parent].expmaskinit |= self.nodes[n].grpmask
    for n in range(self.nr_cpus):
        self.cpus[n].leaf = t.cpu_leaf[n]
        self.cpus[n].grpmask = (<u64> 1) << <int> t.cpu_grpnum[n]


cdef void rcu_boot_init_percpu_data(Engine self) noexcept:
    """Each CPU idle with empty run queues, its rcu_data empty, reported in its leaf."""
    cdef int c
    cdef cpu_t *cp
    for c in range(self.nr_cpus):
        cp = &self.cpus[c]
        cp.curr = -1
        cp.rq_head[0] = -1
        cp.rq_head[1] = -1
        cp.rq_tail[0] = -1
        cp.rq_tail[1] = -1
        cp.state = CPU_IDLE
        cp.lb_dirty = 1  # not in the group sums of load balancing until balance_init()
        self.nodes[cp.leaf].qsmaskinit |= cp.grpmask
        self.nodes[cp.leaf].expmaskinit |= cp.grpmask
        cp.reader = -1
        cp.gp_seq = self.gp_seq
        cp.rcuop = -1
        cp.group = -1
        cp.rcuc = -1
        cp.cb_head = -1
        cp.cb_tail = -1
        cp.byp_head = -1
        cp.byp_tail = -1
        cp.blimit = self.blimit_default
        cp.nobypass_last = -1


cdef inline void rnp_lock(Engine self, int n) noexcept:
    """rnp->lock."""
    spin_lock(self, &self.nodes[n].lock_free)


cdef inline bint gp_in_progress(Engine self) noexcept:
    return rcu_seq_state(self.gp_seq) != 0


cdef inline bint root_qs_done(Engine self) noexcept:
    """No CPU and no preempted reader holds the current normal GP."""
    return self.nodes[0].qsmask == 0 and self.nodes[0].gp_blockers == 0


cdef void rcu_report_qs_rnp(Engine self, u64 mask, int n, i64 gps, int src, int c) except *:
    """rcu_report_qs_rnp(): clear mask in n and climb while nodes empty; `src`
    (LAST_QS_*) says whose report this is, recorded if it ends the GP's wait;
    `c` is the CPU the report runs on."""
    cdef rnp_t *np
    while True:
        np = &self.nodes[n]
        if (np.qsmask & mask) == 0 or np.gp_seq != gps:
            return
        np.qsmask &= ~mask
        tp_acc(self, TP_RCU_QS_REPORT, 1)
        if self.trace_on:
            trace(self, self.now + self.acc, TR_QS_REPORT, c, n, np.gp_seq, <i64> mask, <i64> np.qsmask,
                  np.gp_blockers > 0)
        # Preempted readers that block this GP hold the leaf (rcu_preempt_blocked_readers_cgp).
        if np.qsmask != 0 or np.gp_blockers > 0:
            return
        if np.parent < 0:
            # rcu_report_qs_rsp(): the root is clear; let the GP kthread finish.
            self.gp_qs_t = self.now + self.acc
            self.gp_last_qs = src
            self.gp_flags |= RCU_GP_FLAG_FQS
            rcu_gp_kthread_wake(self, c)
            return
        mask = np.grpmask
        n = np.parent
        rnp_lock(self, n)


cdef bint rcu_start_this_gp(Engine self, int leaf, i64 req) noexcept:
    """rcu_start_this_gp(): funnel the request up; True if the GP kthread must wake."""
    cdef int n = leaf
    cdef rnp_t *np
    while True:
        if n != leaf:
            rnp_lock(self, n)
        np = &self.nodes[n]
        if (np.gp_seq_needed >= req or rcu_seq_started(np.gp_seq, req)
                or (n != leaf and rcu_seq_state(np.gp_seq) != 0)):
            return False
        np.gp_seq_needed = req
        if rcu_seq_state(np.gp_seq) != 0:
            return False
        if np.parent < 0:
            break
        n = np.parent
    if gp_in_progress(self):
        return False
    self.gp_flags |= RCU_GP_FLAG_INIT
    tp_acc(self, TP_RCU_GRACE_PERIOD, 1)  # "newreq"
    return True


cdef void note_gp_changes_locked(Engine self, int c) except *:
    """__note_gp_changes(): the leaf's lock is held (charged by the caller)."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 rnp_gp = self.nodes[cp.leaf].gp_seq
    cdef bint needwake = False, need_qs
    if cp.gp_seq == rnp_gp:
        return
    if rcu_seq_completed_gp(cp.gp_seq, rnp_gp):
        if not cp.offloaded:
            needwake = rcu_advance_cbs(self, c)
        tp_acc(self, TP_RCU_GRACE_PERIOD, 1)  # "cpuend"
    elif not cp.offloaded:
        needwake = rcu_accelerate_cbs(self, c)
    if rcu_seq_new_gp(cp.gp_seq, rnp_gp):
        tp_acc(self, TP_RCU_GRACE_PERIOD, 1)  # "cpustart"
        if self.trace_on:
            trace(self, self.now + self.acc, TR_CPUSTART, c, self.cpus[c].curr, rnp_gp, 0, 0)
        need_qs = (self.nodes[cp.leaf].qsmask & cp.grpmask) != 0
        cp.cpu_no_qs = need_qs
        cp.core_needs_qs = need_qs
    cp.gp_seq = rnp_gp
    if needwake:
        rcu_gp_kthread_wake(self, c)


cdef inline void rcu_qs(Engine self, int c, i64 ns) noexcept:
    """rcu_qs(): CPU c passes a quiescent state; one it owed is traced ("cpuqs", at `ns`, the
    price where it runs): the normal one, or without PREEMPT_RCU an expedited one too."""
    cdef cpu_t *cp = &self.cpus[c]
    if cp.cpu_no_qs or (cp.exp_need_qs and not self.preempt_rcu):
        tp_debt(self, c, TP_RCU_GRACE_PERIOD, ns)
        if self.trace_on and cp.cpu_no_qs:
            trace(self, self.now + self.acc, TR_CPUQS, c, cp.curr, cp.gp_seq, 0, 0)
    cp.cpu_no_qs = 0


cdef void rcu_report_qs_rdp(Engine self, int c) except *:
    """rcu_report_qs_rdp(): push this CPU's noted QS into its leaf."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef rnp_t *np = &self.nodes[cp.leaf]
    cdef bint needwake = False
    rnp_lock(self, cp.leaf)
    if cp.cpu_no_qs or cp.gp_seq != np.gp_seq:
        cp.cpu_no_qs = 1
        return
    cp.core_needs_qs = 0
    if (np.qsmask & cp.grpmask) == 0:
        return
    if not cp.offloaded:
        needwake = rcu_accelerate_cbs(self, c)
    if self.trace_on:
        trace(self, self.now + self.acc, TR_QS, c, cp.curr, np.gp_seq, 0, 0)
    rcu_report_qs_rnp(self, cp.grpmask, cp.leaf, np.gp_seq, last_qs_src(self, c), c)
    if needwake:
        rcu_gp_kthread_wake(self, c)


cdef inline int last_qs_src(Engine self, int c) noexcept:
    """LAST_QS_* of CPU c reporting for itself."""
    if c == self.gp_ran_cpu:  # where the GP kthread last ran (woken, it may be placed elsewhere)
        return LAST_QS_GP_CPU
    return LAST_QS_BUSY if self.cpus[c].state == CPU_BUSY else LAST_QS_IDLE


cdef bint rcu_pending(Engine self, int c) noexcept:
    cdef cpu_t *cp = &self.cpus[c]
    if not self.tree_rcu:
        return rcu_pending_classic(self, c)
    if cp.core_needs_qs and not cp.cpu_no_qs:
        return True
    if not cp.offloaded:
        if cbs_ready(self, cp):
            return True
        if (not gp_in_progress(self)
                and cp.seg_len[RCU_NEXT_READY_TAIL] + cp.seg_len[RCU_NEXT_TAIL] > 0):
            return True
    if cp.gp_seq != self.nodes[cp.leaf].gp_seq:
        return True
    return False


cdef inline bint preempt_or_bh_off(Engine self, int c) noexcept:
    """preempt_count() has PREEMPT_MASK or SOFTIRQ_MASK bits where a tick interrupts busy CPU
    c (rcu_flavor_sched_clock_irq()'s test): inside handle_softirqs() (an irq exit's pass or
    ksoftirqd's), in a non-preemptible burst (burst_nopreempt()), or inside a try_to_wake_up()
    the CPU is making, whose p->pi_lock keeps interrupts off: a tick falling due there comes at
    its irq restore, before preempt_enable().  Not yet here: rcuc/N's and rcuop's callback
    invocation under local_bh_disable() (rcu_do_batch())."""
    cdef cpu_t *cp = &self.cpus[c]
    return (in_serving_softirq(self, c) or burst_nopreempt(self, c)
            or cp.ttwu_from <= self.now < cp.ttwu_until)


cdef i64 rcu_sched_clock_irq(Engine self, int c) except -1:
    """rcu_sched_clock_irq() and, if rcu_pending(), RCU_SOFTIRQ at irq exit; returns the
    interrupt's time, taken from the running burst."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 cost = self.tick_ns
    cdef bint idle = cp.state != CPU_BUSY
    self.n_ticks += 1
    # rcu_flavor_sched_clock_irq()
    if self.fault == FAULT_QS_WITHOUT_QS:
        cp.cpu_no_qs = 0
    elif self.preempt_rcu:
        # PREEMPT_RCU: a tick that interrupted a task outside any reader, with neither
        # preemption nor softirqs off. The idle task runs with preemption disabled
        # (init_idle_preempt_count()), so an idle CPU's tick is none: its QS is its switch
        # to idle, or the FQS scan's EQS.
        if not idle and not in_reader(self, c) and not preempt_or_bh_off(self, c):
            rcu_qs(self, c, self.tp_irq_ns)
    elif idle or cp.user_from <= self.now < cp.user_to:
        # !PREEMPT_RCU: the interrupt came from idle (rcu_is_cpu_rrupt_from_idle())
        # or from user mode.
        rcu_qs(self, c, self.tp_irq_ns)
    if cp.urgent_qs and not idle:
        # rcu_urgent_qs: set need_resched; the context switch is a QS.
        cp.urgent_qs = 0
        self.acc = 0
        rcu_need_resched(self, c)
        cost += self.acc
    if rcu_pending(self, c):
        # invoke_rcu_core(): RCU_SOFTIRQ, or the rcuc/N kthread with use_softirq=0.
        if self.use_softirq or cp.offloaded:
            if in_serving_softirq(self, c):
                cp.softirq_pending = 1  # raise_softirq(): the running handle_softirqs() restarts for it
            else:
                cost += rcu_softirq(self, c)
        else:
            wake(self, cp.rcuc, c, self.now + cost)
    if cp.plugticks > 0:
        cp.plugticks -= 1  # throttle-rcu: scheduler_tick() counts the plug down
    steal(self, c, cost)
    return cost


cdef void rcu_need_resched(Engine self, int c) except *:
    """need_resched on busy CPU c: schedule() at the next preemption point is a QS.

    With CONFIG_PREEMPTION, inside a non-preemptible reader that point is its
    rcu_read_unlock(); a preemptible reader is preempted in place and joins its
    leaf's blkd_tasks; elsewhere it is the irq exit. Without it, kernel code is
    switched out only where it calls schedule() or cond_resched().
    """
    cdef cpu_t *cp = &self.cpus[c]
    if not self.preemption and not (cp.user_from <= self.now < cp.user_to) and not might_resched(self, c):
        # No preemption in kernel mode: the QS waits for the next schedule()
        # (a block, or cond_resched() in a busy loop).
        cp.need_resched = 1
        return
    if in_reader(self, c):
        if not self.rwl_preemptible[self.ents[cp.curr].idx]:
            cp.urgent_qs = 1
            return
        rcu_preempt_ctxt_queue(self, c, cp.curr)
    rcu_qs(self, c, self.tp_irq_ns)  # from the tick
    # rcu_note_context_switch() with rcu_urgent_qs: rcu_momentary_eqs(), which
    # the next FQS scan sees even if this CPU has not noticed the GP yet.
    cp.watching += 2
    if cp.exp_need_qs:
        rcu_report_exp_rdp(self, c)


cdef void ev_ipi(Engine self, int c) except *:
    """resched_cpu(): need_resched forces a context switch."""
    if self.trace_on:
        trace(self, self.now, TR_IPI_HANDLER, c, self.cpus[c].curr, self.gp_seq, 0, 0)
    if self.cpus[c].state == CPU_BUSY:
        self.acc = 0
        rcu_need_resched(self, c)
        steal(self, c, self.acc)
