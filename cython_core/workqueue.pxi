# The worker_pool of an unbound workqueue (kernel/workqueue.c, v6.12), for kvfree_rcu()'s
# rcu_reclaim_wq (switch kvfree_unbound_wq): its monitor and kfree_rcu_work items of every CPU's
# krcp share the pool's kworkers.
# - __queue_work() appends a work to the pool's worklist and kick_pool() wakes the worker that
#   went idle last (idle_list is LIFO), unless it is awake already; an unbound pool does no
#   concurrency management, so a worker busy with one work does not keep another idle.
# - A woken worker leaves idle, and, if no idle worker is left while work waits, first creates
#   one (manage_workers(), maybe_create_worker()); then it runs the list's works one after
#   another (process_one_work(), which kicks the pool again as it takes each: an idle worker
#   wakes for the next work, from the taker's CPU) and goes idle when the list is empty.
# - A work queued while it runs is not run by a second worker: the worker running it runs it
#   again (find_worker_executing_work()).
# The workers are placed by select_task_rq_fair() at each wake-up from the CPU they last ran
# on, so one worker frees the objects of any CPU's krcp where it happens to run. A new worker
# is placed at its first run as a new task (wake_up_new_task(): find_idlest_cpu() from its
# creating worker's CPU, where kthreadd forks it; CPU 0 for the pool's first); kthread
# creation's own time is not modelled. One pool serves all CPUs (one pod: rcusim does not
# split the unbound pool by LLC) and holds only rcu_reclaim_wq's works, starting with one
# worker: the kernel's pool is shared with system_unbound_wq and has workers from boot.
# max_active (256) is not modelled: more than 85 CPUs' krcps could run more works at once.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int uwq_init(Engine self, int e, int max_workers) except -1:
    """max_workers kworker entities from e on; the pool starts with one, idle (a
    simplification: see above)."""
    cdef int k
    self.uwq_first = e
    self.uwq_max = max_workers
    self.uwq_idle = <int *> malloc((max_workers + 1) * sizeof(int))
    self.uwq_cur = <int *> malloc((max_workers + 1) * sizeof(int))
    self.uwq_list = <int *> malloc((self.nr_cpus * KW_N + 1) * sizeof(int))
    if self.uwq_idle == NULL or self.uwq_cur == NULL or self.uwq_list == NULL:
        raise MemoryError()
    self.uwq_cap = self.nr_cpus * KW_N + 1
    self.uwq_head = self.uwq_len = self.uwq_n_idle = 0
    for k in range(max_workers):
        self.uwq_cur[k] = -1
        self.ents[e + k].kind = ENT_KWORKER
        self.ents[e + k].cpu = 0
        self.ents[e + k].idx = 0
        self.ents[e + k].rq = RQ_NORMAL
        # A worker is a new kthread: its first run is placed by wake_up_new_task(); an
        # unbound task, the load balancer may move it too.
        if kthread_place_at_wakeup(self, e + k):
            self.ents[e + k].fork_place = 1
            self.n_unbound += 1
    self.uwq_created = 1
    uwq_enter_idle(self, e)
    return e + max_workers


cdef void uwq_dealloc(Engine self) noexcept:
    free(self.uwq_idle)
    free(self.uwq_cur)
    free(self.uwq_list)


cdef inline bint is_uwq_worker(Engine self, int e) noexcept:
    return self.uwq_max > 0 and self.uwq_first <= e < self.uwq_first + self.uwq_max


cdef void uwq_enter_idle(Engine self, int e) noexcept:
    self.uwq_idle[self.uwq_n_idle] = e
    self.uwq_n_idle += 1


cdef void uwq_leave_idle(Engine self, int e) noexcept:
    """worker_leave_idle(): off the idle list, wherever it is on it (if it is)."""
    cdef int k, found = 0
    for k in range(self.uwq_n_idle):
        if found:
            self.uwq_idle[k - 1] = self.uwq_idle[k]
        elif self.uwq_idle[k] == e:
            found = 1
    self.uwq_n_idle -= found


cdef void queue_work_unbound(Engine self, int wid, int from_cpu, i64 t) except *:
    """__queue_work() of work wid (krcp * KW_N + KW_*) from from_cpu at t, and kick_pool()."""
    self.uwq_list[(self.uwq_head + self.uwq_len) % self.uwq_cap] = wid
    self.uwq_len += 1
    kick_pool(self, from_cpu, t)


cdef void kick_pool(Engine self, int from_cpu, i64 t) except *:
    """With work on the list, wake the worker that went idle last (from from_cpu at t)."""
    cdef int w
    if self.uwq_len > 0 and self.uwq_n_idle > 0:
        w = self.uwq_idle[self.uwq_n_idle - 1]
        if self.ents[w].state == ST_BLOCKED:
            wake(self, w, from_cpu, t)


cdef i64 uwq_worker_next(Engine self, int e, i64 t0) except -2:
    """worker_thread(): go on with the work in hand, or take the worklist's first; idle when
    there is none. Returns the step's length (0 and phase -1: idle)."""
    cdef int k = e - self.uwq_first, wid, c, fresh
    if self.uwq_cur[k] >= 0:
        return kfree_rcu_work_step(self, e, self.ents[e].idx, self.uwq_cur[k] - KW_RECLAIM0)
    uwq_leave_idle(self, e)
    if self.uwq_len == 0:
        uwq_enter_idle(self, e)
        self.ents[e].phase = -1
        return 0
    if self.uwq_n_idle == 0 and self.uwq_created < self.uwq_max:
        fresh = self.uwq_first + self.uwq_created  # maybe_create_worker(): create_worker()
        self.uwq_created += 1
        self.ents[fresh].cpu = self.ents[e].cpu
        uwq_enter_idle(self, fresh)
        wake(self, fresh, self.ents[e].cpu, t0)  # it starts at once, idle
    wid = self.uwq_list[self.uwq_head]
    self.uwq_head = (self.uwq_head + 1) % self.uwq_cap
    self.uwq_len -= 1
    # process_one_work() kicks the pool again: an idle worker takes the next work beside this one.
    kick_pool(self, self.ents[e].cpu, t0)
    c = wid // KW_N
    self.ents[e].idx = c
    self.uwq_cur[k] = wid % KW_N
    if wid % KW_N == KW_MONITOR:
        return kfree_rcu_monitor_start(self, e, c)
    return kfree_rcu_work_step(self, e, c, wid % KW_N - KW_RECLAIM0)


cdef i64 uwq_worker(Engine self, int e) except -2:
    """The step in hand is done: the work goes on, runs again if queued meanwhile, or the
    worker takes the next."""
    cdef int k = e - self.uwq_first, c = self.ents[e].idx, cur = self.uwq_cur[k], act
    cdef i64 r
    self.acc = 0
    if cur < 0:
        # Gone idle: a work queued meanwhile found it still running, as schedule() would.
        return uwq_worker_next(self, e, self.now) if self.uwq_len > 0 else -1
    if cur == KW_MONITOR:
        kfree_rcu_monitor_done(self, e, c)
        self.cpus[self.ents[e].cpu].debt += self.acc
        if self.krcs[c].monitor_queued:
            return kfree_rcu_monitor_start(self, e, c)
        self.uwq_cur[k] = -1
        return uwq_worker_next(self, e, self.now)
    act = self.ents[e].phase
    r = kfree_rcu_work_done(self, e, c, cur - KW_RECLAIM0)
    if r == -1 and act == KWA_END:
        self.uwq_cur[k] = -1
        return uwq_worker_next(self, e, self.now)
    return r
