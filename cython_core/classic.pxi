# Classic RCU (kernel/rcupdate.c before v2.6.29: rcu_ctrlblk, curbatch and
# maxbatch, the per-CPU qsctr snapshot, the tasklet at irq exit) and the 2004
# callback patches against real-time latency: throttle-rcu (rcumaxbatch,
# rcuplugticks) and rcu-low-lat (krcud/N after bhlimit callbacks).
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int classic_ents(Engine self, cl) except -1:
    """rcu-low-lat's krcud/N kthreads' entities, one per CPU."""
    return self.nr_cpus if cl.krcud_bhlimit else 0


cdef void rcu_classic_init(Engine self, cl) except *:
    """Classic RCU's parameters and the 2004 patches' (throttle-rcu, rcu-low-lat)."""
    cdef int c
    self.tree_rcu = cl.tree_rcu
    self.rcumaxbatch = cl.rcumaxbatch
    self.rcuplugticks = cl.rcuplugticks
    self.krcud_bhlimit = cl.krcud_bhlimit
    self.cl_curbatch = self.cl_maxbatch = self.gp_seq >> 2
    for c in range(self.nr_cpus):
        self.cpus[c].krcud = -1
        self.cpus[c].rcud_head = self.cpus[c].rcud_tail = -1


cdef int krcud_init(Engine self, int e) except -1:
    """rcu-low-lat's krcud/N kthreads, one per CPU."""
    cdef int c
    if not self.krcud_bhlimit:
        return e
    for c in range(self.nr_cpus):
        # krcud() runs at nice -19: woken, it goes ahead of nice-0 tasks.
        self.cpus[c].krcud = e
        self.ents[e].kind = ENT_KRCUD
        self.ents[e].cpu = c
        self.ents[e].idx = c
        self.ents[e].rq = RQ_NORMAL
        self.ents[e].head_enqueue = 1
        self.ents[e].weight = 71755  # nice -19
        e += 1
    return e


cdef inline bint cbs_ready(Engine self, cpu_t *cp) noexcept:
    """Done callbacks that rcu_core() may invoke now: not plugged by throttle-rcu,
    not handed to krcud/N by rcu-low-lat."""
    return cp.seg_len[RCU_DONE_TAIL] > 0 and cp.plugticks == 0


cdef i64 rcu_do_batch_classic(Engine self, int r, i64 t0, int ctx) except -2:
    """Classic RCU's rcu_do_batch() (2.6.0) with the two patches of March 2004.

    Without a patch the whole done list runs in one go. throttle-rcu
    (rcupdate.rcumaxbatch, rcuplugticks) stops each softirq pass after
    rcumaxbatch callbacks and re-raises the tasklet, or plugs the list for
    rcuplugticks ticks. rcu-low-lat (rcupdate.bhlimit) hands the rest of the
    list to krcud/N once more than bhlimit callbacks ran in softirq while an
    RT task is waiting for this CPU.
    """
    cdef cpu_t *cp = &self.cpus[r]
    cdef i64 count = 0, t = t0
    while cp.seg_len[RCU_DONE_TAIL] > 0:
        t = invoke_cb(self, cp, r, t, r, -1 if ctx == 0 else cp.rcuc)
        count += 1
        if ctx != 0:
            continue
        if self.rcumaxbatch and count >= self.rcumaxbatch:
            cp.plugticks = self.rcuplugticks
            if cp.plugticks == 0 and cp.seg_len[RCU_DONE_TAIL] > 0:
                cp.tasklet_raised = 1  # tasklet_hi_schedule()
                self.n_tasklet_reraise += 1
            break
        if (self.krcud_bhlimit and count > self.krcud_bhlimit and cp.seg_len[RCU_DONE_TAIL] > 0
                and (cp.rq_head[RQ_RT] >= 0 or probe_waiting(self, cp, t))):
            # rq_has_rt_task(): splice the rest to rcudlist and wake krcud/N.
            splice_to_rcudlist(self, cp)
            self.n_krcud_handoff += 1
            wake(self, cp.krcud, r, t)
            break
    return t - t0


cdef void splice_to_rcudlist(Engine self, cpu_t *cp) noexcept:
    """list_splice(list, &RCU_rcudlist(cpu)): the DONE segment moves to krcud's list."""
    cdef int n = cp.seg_len[RCU_DONE_TAIL], first = cp.cb_head, last = cp.cb_head, k
    for k in range(n - 1):
        last = self.cbs[last].next
    cp.cb_head = self.cbs[last].next
    if cp.cb_head < 0:
        cp.cb_tail = -1
    cp.seg_len[RCU_DONE_TAIL] = 0
    self.cbs[last].next = cp.rcud_head
    if cp.rcud_head < 0:
        cp.rcud_tail = last
    cp.rcud_head = first
    cp.rcud_len += n


cdef i64 krcud_next(Engine self, int e, i64 t0) except -2:
    """krcud(): rcu_do_batch() on rcudlist in process context, preemptible throughout."""
    cdef int r = self.ents[e].idx, cb
    cdef cpu_t *cp = &self.cpus[r]
    cdef i64 t = t0
    while cp.rcud_len > 0:
        cb = cp.rcud_head
        cp.rcud_head = self.cbs[cb].next
        cp.rcud_len -= 1
        t = invoke_one(self, cb, r, t, r, e)
    cp.rcud_tail = -1
    return t - t0


cdef i64 krcud(Engine self, int e) except -2:
    """krcud(): cond_resched() between rounds until rcudlist is empty."""
    if self.cpus[self.ents[e].idx].rcud_len > 0:
        return krcud_next(self, e, self.now)
    return -1


# --- classic RCU (kernel/rcupdate.c before v2.6.29): rcu_ctrlblk ---------------
cdef bint rcu_pending_classic(Engine self, int c) noexcept:
    """rcu_pending() of 2.6.0, with throttle-rcu's unplugged donelist."""
    cdef cpu_t *cp = &self.cpus[c]
    if cp.seg_len[RCU_WAIT_TAIL] > 0 and cp.seg_gp[RCU_WAIT_TAIL] < self.cl_curbatch:
        return True
    if cp.seg_len[RCU_WAIT_TAIL] == 0 and cp.seg_len[RCU_NEXT_TAIL] > 0:
        return True
    return cp.core_needs_qs or cbs_ready(self, cp)


cdef i64 rcu_process_callbacks(Engine self, int c, i64 t0, int ctx) except -2:
    """The RCU tasklet of 2.6.0: curlist to the done list once its batch completed,
    nxtlist to curlist and a new batch, rcu_check_quiescent_state(), rcu_do_batch()."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 dur
    self.acc = self.softirq_ns
    self.n_softirq += 1
    if cp.seg_len[RCU_WAIT_TAIL] > 0 and self.cl_curbatch > cp.seg_gp[RCU_WAIT_TAIL]:
        cp.seg_len[RCU_DONE_TAIL] += cp.seg_len[RCU_WAIT_TAIL]
        cp.seg_len[RCU_WAIT_TAIL] = 0
    if cp.seg_len[RCU_NEXT_TAIL] > 0 and cp.seg_len[RCU_WAIT_TAIL] == 0:
        cp.seg_len[RCU_WAIT_TAIL] = cp.seg_len[RCU_NEXT_TAIL]
        cp.seg_len[RCU_NEXT_TAIL] = 0
        cp.seg_gp[RCU_WAIT_TAIL] = self.cl_curbatch + 1  # RCU_batch(cpu)
        self.acc += self.rnp_lock_ns  # rcu_ctrlblk.mutex
        rcu_start_batch(self, self.cl_curbatch + 1)
    rcu_check_quiescent_state(self, c)
    dur = self.acc
    if cbs_ready(self, cp):
        dur += rcu_do_batch(self, c, t0 + dur, ctx)
    return dur


cdef void rcu_start_batch(Engine self, i64 newbatch) noexcept:
    """Register newbatch; start it if no batch is running (rcu_cpu_mask = online CPUs)."""
    cdef int c
    if self.cl_maxbatch < newbatch:
        self.cl_maxbatch = newbatch
    if self.cl_maxbatch < self.cl_curbatch or self.cl_mask_n > 0:
        return
    for c in range(self.nr_cpus):
        self.cpus[c].core_needs_qs = 1
        self.cpus[c].cl_snap = 0
    self.cl_mask_n = self.nr_cpus
    self.gp_start = self.now + self.acc
    self.gp_seq = (self.cl_curbatch << 2) + 1


cdef void rcu_check_quiescent_state(Engine self, int c) except *:
    """A QS counts if RCU_qsctr moved (context switch, user-mode or idle tick) since the
    snapshot an earlier tasklet pass took; the last CPU out completes the batch."""
    cdef cpu_t *cp = &self.cpus[c]
    if not cp.core_needs_qs:
        return
    if not cp.cl_snap:
        cp.cl_snap = 1
        cp.cpu_no_qs = 1
        return
    if cp.cpu_no_qs:
        return
    self.acc += self.rnp_lock_ns  # rcu_ctrlblk.mutex
    cp.core_needs_qs = 0
    cp.cl_snap = 0
    self.cl_mask_n -= 1
    if self.cl_mask_n > 0:
        return
    self.gp_qs_t = self.now + self.acc
    record_gp(self, 0, self.gp_seq, self.gp_start, self.gp_qs_t, self.gp_qs_t, 0, 0, -1)
    self.cl_curbatch += 1
    self.gp_seq = self.cl_curbatch << 2
    rcu_start_batch(self, self.cl_maxbatch)
