# Segmented callback lists (kernel/rcu/rcu_segcblist.c): the four segments DONE,
# WAIT, NEXT_READY and NEXT with their gp_seq, advance, accelerate and entrain, and
# the callback pool.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef void grow_cbs(Engine self, int cap) except *:
    cdef int i
    self.cbs = <cb_t *> realloc(self.cbs, cap * sizeof(cb_t))
    if self.cbs == NULL:
        raise MemoryError()
    for i in range(self.cb_cap, cap):
        self.cbs[i].next = self.cb_free
        self.cb_free = i
    self.cb_cap = cap


cdef inline int pend_cbs(Engine self, cpu_t *cp) noexcept:
    return cp.seg_len[1] + cp.seg_len[2] + cp.seg_len[3]


cdef inline int n_cbs(Engine self, cpu_t *cp) noexcept:
    return cp.seg_len[0] + cp.seg_len[1] + cp.seg_len[2] + cp.seg_len[3]


cdef void rcu_segcblist_advance(Engine self, cpu_t *cp, i64 seq) noexcept:
    cdef int i, j
    cdef bint too_far = self.fault == FAULT_CB_ONE_SEGMENT_TOO_FAR
    if pend_cbs(self, cp) == 0:
        return
    i = RCU_WAIT_TAIL
    while i < RCU_NEXT_TAIL:
        if ULONG_CMP_LT(seq, cp.seg_gp[i]):
            if not (too_far and cp.seg_len[i]):
                break
            too_far = False
        cp.seg_len[RCU_DONE_TAIL] += cp.seg_len[i]
        cp.seg_len[i] = 0
        i += 1
    if i == RCU_WAIT_TAIL:
        return
    j = RCU_WAIT_TAIL
    while i < RCU_NEXT_TAIL and j < RCU_NEXT_TAIL:
        cp.seg_len[j] = cp.seg_len[i]
        cp.seg_gp[j] = cp.seg_gp[i]
        if i != j:
            cp.seg_len[i] = 0
        i += 1
        j += 1


cdef bint rcu_segcblist_accelerate(Engine self, cpu_t *cp, i64 seq) noexcept:
    cdef int i, j, k
    if pend_cbs(self, cp) == 0:
        return False
    i = RCU_NEXT_READY_TAIL
    while i > RCU_DONE_TAIL:
        if cp.seg_len[i] > 0 and ULONG_CMP_LT(cp.seg_gp[i], seq):
            break
        i -= 1
    j = 0
    for k in range(i + 1, 4):
        j += cp.seg_len[k]
    if j == 0:
        return False
    i += 1
    if i >= RCU_NEXT_TAIL:
        return False
    for k in range(i + 1, 4):
        cp.seg_len[i] += cp.seg_len[k]
        cp.seg_len[k] = 0
    for k in range(i, RCU_NEXT_TAIL):
        cp.seg_gp[k] = seq
    return True


cdef bint rcu_accelerate_cbs(Engine self, int c) noexcept:
    """rcu_accelerate_cbs(): label new callbacks; request their GP."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 req
    if pend_cbs(self, cp) == 0:
        return False
    tp_acc(self, TP_RCU_GRACE_PERIOD, 1)  # "AccWaitCB" or "AccReadyCB"
    req = rcu_seq_snap(self.gp_seq)
    if rcu_segcblist_accelerate(self, cp, req):
        return rcu_start_this_gp(self, cp.leaf, req)
    return False


cdef bint rcu_advance_cbs(Engine self, int c) noexcept:
    """rcu_advance_cbs(): move callbacks whose GP ended to DONE, then accelerate."""
    cdef cpu_t *cp = &self.cpus[c]
    if pend_cbs(self, cp) == 0:
        return False
    rcu_segcblist_advance(self, cp, self.nodes[cp.leaf].gp_seq)
    return rcu_accelerate_cbs(self, c)


cdef int cb_alloc(Engine self, int kind, int arg) except -1:
    cdef int i
    if self.cb_free < 0:
        grow_cbs(self, self.cb_cap * 2)
    i = self.cb_free
    self.cb_free = self.cbs[i].next
    self.cbs[i].next = -1
    self.cbs[i].kind = kind
    self.cbs[i].arg = arg
    self.cbs[i].t_queued = self.now
    check_cb_queued(self, i)
    return i


cdef void rcu_segcblist_enqueue(Engine self, cpu_t *cp, int cb) noexcept:
    if cp.cb_tail >= 0:
        self.cbs[cp.cb_tail].next = cb
    else:
        cp.cb_head = cb
    cp.cb_tail = cb
    cp.seg_len[RCU_NEXT_TAIL] += 1


cdef void rcu_segcblist_entrain(Engine self, cpu_t *cp, int cb) noexcept:
    """rcu_segcblist_entrain(): cb joins the last non-empty segment (DONE if all are empty),
    at the list's tail, so that it is invoked after every callback queued before it."""
    cdef int i = RCU_NEXT_TAIL
    if self.fault == FAULT_BARRIER_ENTRAIN_AT_HEAD:
        # Ahead of every queued callback, as a done one.
        self.cbs[cb].next = cp.cb_head
        cp.cb_head = cb
        if cp.cb_tail < 0:
            cp.cb_tail = cb
        cp.seg_len[RCU_DONE_TAIL] += 1
        return
    while i > RCU_DONE_TAIL and cp.seg_len[i] == 0:
        i -= 1
    if cp.cb_tail >= 0:
        self.cbs[cp.cb_tail].next = cb
    else:
        cp.cb_head = cb
    cp.cb_tail = cb
    cp.seg_len[i] += 1
