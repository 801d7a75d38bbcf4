# Preemptible RCU's read side (kernel/rcu/tree_plugin.h): rcu_read_unlock(), readers
# blocked in their critical section queued on rnp->blkd_tasks (rcu_preempt_ctxt_queue()),
# rnp->gp_tasks and exp_tasks, rcu_report_unblock_qs_rnp(); rcu_note_context_switch();
# cond_resched() with rcu_all_qs(). The reader tasks that run them are readers.pxi's.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef inline bint in_reader(Engine self, int c) noexcept:
    cdef int e = self.cpus[c].curr
    return e >= 0 and self.ents[e].kind == ENT_READER and self.ents[e].phase == RD_IN


cdef void rcu_note_context_switch(Engine self, int c) except *:
    """rcu_note_context_switch(): a context switch is a quiescent state, for an expedited GP
    too if its IPI is waiting for one (the report's cost goes to the CPU's next burst)."""
    cdef cpu_t *cp = &self.cpus[c]
    rcu_qs(self, c, self.tp_ns)
    if cp.exp_need_qs:
        self.acc = 0
        rcu_report_exp_rdp(self, c)
        cp.debt += self.acc


cdef bint cond_resched(Engine self, int c) except *:
    """cond_resched() where kernel code calls it: at the end of a busy reader's gap,
    before its next rcu_read_lock(), and between the GP kthread's steps.

    Without CONFIG_PREEMPTION this is where kernel code yields: schedule() if
    need_resched is set (the reader stays runnable, at the tail of its class;
    the context switch is a QS), else rcu_all_qs(), a QS if rcu_urgent_qs is
    set. With CONFIG_PREEMPTION it does nothing. Returns True if it yielded.
    """
    cdef cpu_t *cp = &self.cpus[c]
    if self.preemption:
        return False
    if cp.need_resched:
        requeue(self, c, cp.curr, True)
        return True
    if cp.urgent_qs:
        # rcu_all_qs(): rcu_momentary_eqs() and rcu_qs().
        cp.urgent_qs = 0
        rcu_qs(self, c, self.tp_ns)
        cp.watching += 2
    return False


cdef void rcu_read_unlock(Engine self, int e) except *:
    """The outermost rcu_read_unlock(): check the section, then rcu_read_unlock_special()."""
    cdef ent_t *ep = &self.ents[e]
    cdef int c = ep.cpu
    cdef cpu_t *cp = &self.cpus[c]
    cdef int n = cp.leaf
    check_reader(self, e)
    if ep.rd_blocked:
        # rcu_preempt_deferred_qs_irqrestore(): leave blkd_tasks; unblock the GPs it held.
        rnp_lock(self, n)
        ep.rd_blocked = 0
        self.nodes[n].blkd_n -= 1
        if ep.rd_blocks_gp:
            ep.rd_blocks_gp = 0
            self.nodes[n].gp_blockers -= 1
            if self.nodes[n].gp_blockers == 0:
                tp_acc(self, TP_RCU_QS_REPORT, 1)  # "preempt_rcu": the last reader the GP waited for here
            if self.nodes[n].gp_blockers == 0 and self.nodes[n].qsmask == 0 and gp_in_progress(self):
                rcu_report_unblock_qs_rnp(self, n, c)
        if ep.rd_blocks_exp:
            ep.rd_blocks_exp = 0
            self.nodes[n].exp_blockers -= 1
            rcu_report_exp_rnp(self, n, True)
    if cp.exp_need_qs:
        rcu_report_exp_rdp(self, c)
    if cp.urgent_qs:
        # need_resched was set inside the section: preempt_enable() schedules.
        cp.urgent_qs = 0
        rcu_qs(self, c, self.tp_ns)
        cp.watching += 2


cdef void rcu_preempt_ctxt_queue(Engine self, int c, int e) except *:
    """A reader is preempted inside its section: queue it on its leaf's blkd_tasks.

    It blocks the current normal GP if its CPU still owes that GP a QS, and
    the current expedited GP if its CPU is still in the leaf's expmask.
    """
    cdef ent_t *ep = &self.ents[e]
    cdef cpu_t *cp = &self.cpus[c]
    cdef rnp_t *np = &self.nodes[cp.leaf]
    if ep.rd_blocked or self.fault == FAULT_BLKD_READER_DROPPED:
        return
    rnp_lock(self, cp.leaf)
    ep.rd_blocked = 1
    np.blkd_n += 1
    self.n_reader_blocked += 1
    if gp_in_progress(self) and (np.qsmask & cp.grpmask):
        ep.rd_blocks_gp = 1
        np.gp_blockers += 1
    if rcu_seq_state(self.exp_seq) and (np.expmask & cp.grpmask):
        ep.rd_blocks_exp = 1
        np.exp_blockers += 1


cdef void mark_blocked_readers(Engine self, int exp) noexcept:
    """At GP start every reader already on a blkd_tasks list blocks the new GP."""
    cdef int n, c, e
    for n in range(self.leaf_first, self.num_nodes):
        if exp:
            self.nodes[n].exp_blockers = self.nodes[n].blkd_n
        else:
            self.nodes[n].gp_blockers = self.nodes[n].blkd_n
    for c in range(self.nr_cpus):
        e = self.cpus[c].reader
        if e >= 0 and self.ents[e].rd_blocked:
            if exp:
                self.ents[e].rd_blocks_exp = 1
            else:
                self.ents[e].rd_blocks_gp = 1


cdef void rcu_report_unblock_qs_rnp(Engine self, int n, int c) except *:
    """The last reader blocking the GP at leaf n left, on CPU c: report the leaf upwards."""
    cdef rnp_t *np = &self.nodes[n]
    if np.parent < 0:
        self.gp_qs_t = self.now + self.acc
        self.gp_last_qs = LAST_QS_READER
        self.gp_flags |= RCU_GP_FLAG_FQS
        rcu_gp_kthread_wake(self, c)
        return
    rnp_lock(self, np.parent)
    rcu_report_qs_rnp(self, np.grpmask, np.parent, np.gp_seq, LAST_QS_READER, c)
