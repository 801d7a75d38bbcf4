# rcuscale's kfree test (kernel/rcu/rcuscale.c, kfree_scale_thread()): threads at nice 19
# that kmalloc() and kfree_rcu() kfree_alloc_num objects a loop for kfree_loops loops,
# sampling si_mem_available() for the memory footprint they print. What each
# kfree_rcu() call does is kvfree_rcu.pxi's.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int kfree_scale_ents(kt) except -1:
    """The kfree threads' entities."""
    return len(kt.cpu)


cdef int kfree_scale_init(Engine self, kt, int e) except -1:
    """rcuscale's kfree threads, on their CPUs."""
    cdef int k, n
    kt_cpu = kt.cpu
    self.n_kfree = len(kt_cpu)
    n = self.n_kfree + 1
    self.kt_loop = <i64 *> malloc(n * sizeof(i64))
    self.kt_i = <i64 *> malloc(n * sizeof(i64))
    self.kt_start = <i64 *> malloc(n * sizeof(i64))
    self.kt_mem_begin = <i64 *> malloc(n * sizeof(i64))
    self.kt_mem_during = <i64 *> malloc(n * sizeof(i64))
    self.kt_plan = <i64 *> malloc(3 * n * sizeof(i64))
    if (self.kt_loop == NULL or self.kt_i == NULL or self.kt_start == NULL or self.kt_mem_begin == NULL
            or self.kt_mem_during == NULL or self.kt_plan == NULL):
        raise MemoryError()
    memset(self.kt_loop, 0, n * sizeof(i64))
    memset(self.kt_i, 0, n * sizeof(i64))
    memset(self.kt_mem_during, 0, n * sizeof(i64))
    self.kv_last = -1
    if self.n_kfree == 0:
        return e
    self.kt_alloc_num = kt.alloc_num
    self.kt_loops = kt.loops
    self.kfree_first = e
    for k in range(self.n_kfree):
        self.ents[e].kind = ENT_KFREE
        self.ents[e].cpu = kt_cpu[k]
        self.ents[e].idx = k
        self.ents[e].rq = RQ_NORMAL
        self.ents[e].weight = 15  # rcuscale's kfree threads: set_user_nice(current, MAX_NICE)
        # Its kmalloc(GFP_KERNEL) calls might_resched() (slab_pre_alloc_hook() -> might_alloc()
        # -> might_sleep_if()), which preempt=voluntary makes __cond_resched()
        # (sched_dynamic_update()).
        self.ents[e].might_resched = kt.might_resched
        e += 1
    self.tasks_left += self.n_kfree
    return e


cdef void kfree_scale_start(Engine self) except *:
    cdef int e
    for e in range(self.kfree_first, self.kfree_first + self.n_kfree):
        self.ents[e].state = ST_RUNNABLE
        push(self, 0, PRIO_NORMAL, EV_WAKE, e, 0)


cdef void kfree_scale_dealloc(Engine self) noexcept:
    free(self.kt_loop)
    free(self.kt_i)
    free(self.kt_start)
    free(self.kt_mem_begin)
    free(self.kt_mem_during)
    free(self.kt_plan)


cdef i64 kfree_scale_thread_next(Engine self, int e, i64 t0) except -2:
    """At a loop's start, rcuscale's mem_begin / mem_during samples; then the next burst of
    kmalloc() + kfree_rcu() calls."""
    cdef int k = self.ents[e].idx
    cdef i64 avail
    cdef i64 quarter = self.kt_loops // 4
    if self.kt_i[k] == 0:
        if self.kt_loop[k] == 0:
            self.kt_start[k] = t0
            self.kt_started += 1
            if self.kt_started == self.n_kfree:
                self.kv_b_start = self.gp_seq  # b_rcu_gp_test_started = cur_ops->get_gp_seq()
                self.kv_b_start_t = self.now
        if self.kt_mem_during[k] == 0:
            avail = si_mem_available(self)
            self.kt_mem_begin[k] = avail
            self.kt_mem_during[k] = avail
        elif self.kt_loop[k] % quarter == 0:
            self.kt_mem_during[k] = (self.kt_mem_during[k] + si_mem_available(self)) // 2
    return kvfree_call_rcu_next(self, self.ents[e].cpu, self.kt_alloc_num - self.kt_i[k], &self.kt_plan[3 * k])


cdef i64 kfree_scale_thread(Engine self, int e) except -2:
    """The planned calls happened, the last one ending now; the loop goes on, or ends."""
    cdef int k = self.ents[e].idx
    cdef int c = self.ents[e].cpu
    self.acc = 0
    self.kt_i[k] += kvfree_call_rcu(self, c, &self.kt_plan[3 * k])
    self.cpus[c].debt += self.acc
    if self.kt_i[k] == self.kt_alloc_num:
        self.kt_i[k] = 0
        self.kt_loop[k] += 1
        if self.kt_loop[k] == self.kt_loops:
            self.kt_ended += 1
            if self.kt_ended == self.n_kfree:
                self.kv_end_time = self.now
                self.kv_b_end = self.gp_seq
                self.kv_last = k
            self.ents[e].phase = KT_DONE
            self.tasks_left -= 1
            return -1
        # kfree_scale_thread(): cond_resched() after each loop of kfree_alloc_num calls.
        if cond_resched(self, c):
            return -1
    return kfree_scale_thread_next(self, e, self.now)
