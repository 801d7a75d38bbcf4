# The sync_loop task: synchronize_rcu*() in a loop (rcuscale's writers too), or
# rcuscale's gp_async writer: call_rcu_hurry() and rcu_barrier().
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int sync_loop_ents(t) except -1:
    """The sync_loop tasks' entities, and the parent thread of each workload whose tasks a
    barrier releases."""
    return len(t.cpu) + sum(1 for c in t.release_cpu if c >= 0)


cdef int sync_loop_init(Engine self, t) except -1:
    """The sync_loop tasks (entities 0..n_tasks-1) and their workloads' parameters."""
    cdef int e, k
    self.n_tasks = len(t.cpu)
    self.wl_release_cpu = np.ascontiguousarray(t.release_cpu, dtype=np.int64)
    self.wl_first_task = np.searchsorted(np.asarray(t.workload), np.arange(len(t.release_cpu) + 1)).astype(np.int64)
    self.wl_aff = np.full(len(t.release_cpu), -1, dtype=np.int64)
    self.wl_arrived = np.zeros(len(t.release_cpu), dtype=np.int64)
    self.thread_create_ns = t.thread_create_ns
    self.thread_unlock_ns = t.thread_unlock_ns
    self.thread_lock_ns = t.thread_lock_ns
    self.thread_barrier_ns = t.thread_barrier_ns
    self.thread_woken_ns = t.thread_woken_ns
    self.helper_poll_ns = t.helper_poll_ns
    self.helper_settle_ns = t.helper_settle_ns
    self.timer_slack_ns = t.timer_slack_ns
    self.thread_call_rcu_per_1000 = t.thread_call_rcu_per_1000
    self.thread_call_rcu_lazy = t.thread_call_rcu_lazy
    self.tasks_left = self.n_tasks
    self.sync_entry_ns = t.sync_entry_ns
    self.task_wl = <int *> malloc((self.n_tasks + 1) * sizeof(int))
    for e in range(self.n_tasks):
        self.ents[e].kind = ENT_TASK
        self.ents[e].cpu = t.cpu[e]
        self.ents[e].rq = RQ_RT if t.rt[e] else RQ_NORMAL
        self.ents[e].weight = t.weight[e]
        self.ents[e].kthread = t.kthread[e]
        # A new task, placed as by wake_up_new_task(); a pinned one released from a barrier
        # has run there since, and wakes; an unpinned one its parent creates.
        self.ents[e].initial = self.wl_release_cpu[t.workload[e]] < 0 or t.aff[e] >= 0
        if t.aff[e] >= 0 and self.n_levels:  # a machine of one CPU has no domains, nowhere to move
            self.ents[e].aff = t.aff[e]
            self.ents[e].fork_place = t.fork_balance[e]
            self.n_unbound += 1
            if self.wl_release_cpu[t.workload[e]] >= 0:
                # clone() gives it its parent's affinity, bound to the parent's CPU, until the
                # parent's sched_setaffinity() (releaser_step()'s RELEASER_UNLOCK).
                self.wl_aff[t.workload[e]] = t.aff[e]
                self.ents[e].aff = -1
        self.ents[e].loops_left = t.loops[e]
        self.ents[e].phase = TASK_NEW
        self.task_wl[e] = t.workload[e]
    self.task_start = np.ascontiguousarray(t.start_ns, dtype=np.int64)
    self.n_wl = len(t.think_ns)
    self.wl_think_ns = <i64 *> malloc((self.n_wl + 1) * sizeof(i64))
    self.wl_after_ns = <i64 *> malloc((self.n_wl + 1) * sizeof(i64))
    self.wl_prim = <int *> malloc((self.n_wl + 1) * sizeof(int))
    self.wl_vmalloc = <int *> malloc((self.n_wl + 1) * sizeof(int))
    if (self.task_wl == NULL or self.wl_think_ns == NULL or self.wl_after_ns == NULL or self.wl_prim == NULL
            or self.wl_vmalloc == NULL):
        raise MemoryError()
    for k in range(self.n_wl):
        self.wl_think_ns[k] = t.think_ns[k]
        self.wl_after_ns[k] = t.after_ns[k]
        self.wl_prim[k] = t.primitive[k]
        self.wl_vmalloc[k] = t.vmalloc[k]
        self.tasks_vmalloc |= t.vmalloc[k]
    self.wl_sleep_jiffies_max = np.ascontiguousarray(t.sleep_jiffies_max, dtype=np.int64)
    self.wl_runtime_jiffies = np.ascontiguousarray(t.runtime_jiffies, dtype=np.int64)
    self.task_end_ns = np.zeros(self.n_tasks, dtype=np.int64)
    self.wl_all_done = np.ascontiguousarray(t.until_all_done, dtype=np.int64)
    self.wl_unfinished = np.bincount(np.asarray(t.workload, dtype=np.int64), minlength=self.n_wl).astype(np.int64)
    self.task_is_done = np.zeros(self.n_tasks, dtype=np.uint8)  # a byte each: a line holds 64 tasks
    self.wl_done_ns = np.zeros(self.n_wl, dtype=np.int64)
    self.wl_async_max = np.ascontiguousarray(t.async_max, dtype=np.int64)
    self.rcuscale_async_per_task = t.rcuscale_async_per_task
    self.async_kmalloc_ns = t.async_kmalloc_ns
    self.cb_cost[CB_RCUSCALE_ASYNC] = t.async_cb_ns
    # A task that may call rcu_barrier(): the checker follows every callback.
    self.barrier_check = PRIM_CALL_RCU_HURRY in t.primitive
    e = self.n_tasks
    for k in range(self.n_wl):
        if self.wl_release_cpu[k] >= 0:
            self.ents[e].kind = ENT_RELEASER
            self.ents[e].cpu = self.wl_release_cpu[k]
            self.ents[e].rq = RQ_NORMAL
            self.ents[e].idx = k
            self.ents[e].loops_left = self.wl_first_task[k]
            # Unpinned tasks it creates first; pinned ones it finds asleep in the barrier on
            # their CPUs (each binds itself there before it arrives).
            self.ents[e].phase = RELEASER_CREATE if self.wl_aff[k] >= 0 else RELEASER_WAKE
            e += 1
    return e


cdef void sync_loop_start(Engine self) except *:
    cdef int e
    for e in range(self.n_tasks):
        if self.wl_release_cpu[self.task_wl[e]] < 0:
            self.ents[e].state = ST_RUNNABLE
            push(self, self.task_start[e], PRIO_NORMAL, EV_WAKE, e, 0)
    e = self.n_tasks
    while e < self.n_ents and self.ents[e].kind == ENT_RELEASER:
        self.ents[e].state = ST_RUNNABLE
        push(self, 0, PRIO_NORMAL, EV_WAKE, e, 0)
        e += 1


# --- a workload's parent thread: create the tasks, then release them from a barrier ------
cdef i64 releaser_next(Engine self, int e, i64 t0) except -2:
    """The parent's next step, as the twin's load helper's main thread takes it, bound to the
    workload's first CPU: pthread_create() of each task, with an affinity attribute (glibc
    starts the thread stopped on its start lock, clone() placing it on the parent's CPU, then
    sched_setaffinity() on it and the unlock), polls until each task has counted itself in,
    sleeps ARRIVE_US, and arrives last at the barrier: its futex_wake() wakes them."""
    cdef ent_t *ep = &self.ents[e]
    if ep.phase == RELEASER_CREATE:
        return self.thread_create_ns
    if ep.phase == RELEASER_UNLOCK:
        return self.thread_unlock_ns
    if ep.phase == RELEASER_WAKE:
        return futex_wake_next(self, e, t0)
    return 0  # back from usleep(): the check of `arrived`


cdef i64 releaser_step(Engine self, int e) except -2:
    """The end of the parent's step: its effect, then the next step's time, or -1 if it sleeps."""
    cdef ent_t *ep = &self.ents[e]
    cdef int w = ep.idx, k = ep.loops_left, c = ep.cpu, i = k - self.wl_first_task[w], _
    cdef i64 cost = 0
    if ep.phase == RELEASER_WAKE:
        return futex_wake_next(self, e, self.now)
    if ep.phase == RELEASER_CREATE:
        # The stack's mmap() and mprotect() free maple-tree nodes (mt_free_rcu()): the i-th
        # thread's share of the measured count, spread evenly.
        for _ in range((i + 1) * self.thread_call_rcu_per_1000 // 1000 - i * self.thread_call_rcu_per_1000 // 1000):
            call_rcu(self, c, CB_MT_FREE, -1, self.thread_call_rcu_lazy)
        # clone(): wake_up_new_task() on the parent's CPU, the only one its affinity allows.
        self.ents[k].phase = TASK_START
        self.ents[k].state = ST_RUNNABLE
        ev_wake(self, k, 0)
        ep.phase = RELEASER_UNLOCK
        return -1 if exit_to_user_mode(self, c) else self.thread_unlock_ns
    if ep.phase == RELEASER_UNLOCK:
        self.ents[k].aff = self.wl_aff[w]  # sched_setaffinity(): the workload's CPUs
        self.ents[k].start_unlocked = 1
        if self.ents[k].phase == TASK_START_LOCK:
            cost = try_to_wake_up(self, k, c, self.now, self.ttwu_ns)  # the unlock's futex_wake()
        ep.loops_left += 1
        if ep.loops_left < self.wl_first_task[w + 1]:
            ep.phase = RELEASER_CREATE
            if cost == 0 and exit_to_user_mode(self, c):
                return -1
            return cost + self.thread_create_ns
        ep.phase = RELEASER_POLL
    if ep.phase == RELEASER_POLL:
        # while (atomic_load(&arrived) < nthreads) usleep(1000); usleep(ARRIVE_US);
        if self.wl_arrived[w] < self.wl_first_task[w + 1] - self.wl_first_task[w]:
            return hrtimer_nanosleep(self, e, self.now + cost, self.helper_poll_ns)
        ep.phase = RELEASER_SETTLE
        return hrtimer_nanosleep(self, e, self.now + cost, self.helper_settle_ns)
    # RELEASER_SETTLE: pthread_barrier_wait(), the last to arrive.
    ep.phase = RELEASER_WAKE
    ep.loops_left = self.wl_first_task[w]
    return futex_wake_next(self, e, self.now)


cdef i64 futex_wake_next(Engine self, int e, i64 t) except -2:
    """futex_wake() of the barrier: wake_up_q() wakes the waiters one by one, in the order
    they queued (their creation's), each try_to_wake_up() the parent's time; then the parent
    sleeps for good (pthread_join())."""
    cdef ent_t *ep = &self.ents[e]
    cdef int k = ep.loops_left
    if k == self.wl_first_task[ep.idx + 1]:
        return -1
    ep.loops_left += 1
    return try_to_wake_up(self, k, ep.cpu, t, self.ttwu_ns)


cdef i64 thread_start_step(Engine self, int e) except -2:
    """A barrier's task, created by its parent, at the end of a run: start_thread() reached its
    start lock (TASK_START), where it sleeps unless the parent has unlocked it, or it reached the
    barrier (TASK_START_ON): it counts itself in and sleeps there (TASK_NEW)."""
    cdef ent_t *ep = &self.ents[e]
    if ep.phase == TASK_START:
        if not ep.start_unlocked:
            ep.phase = TASK_START_LOCK
            return -1
        ep.phase = TASK_START_ON
        return self.thread_barrier_ns
    self.wl_arrived[self.task_wl[e]] += 1  # atomic_fetch_add(&arrived, 1), then pthread_barrier_wait()
    ep.phase = TASK_NEW
    return -1


# --- workload task: loop { synchronize_rcu*(); work after; think } ------
cdef i64 sync_loop_next(Engine self, int e, i64 t0) except -2:
    cdef int phase = self.ents[e].phase
    cdef i64 done = 0
    if phase == TASK_WAITING:
        if self.wl_prim[self.task_wl[e]] == PRIM_SYNCHRONIZE_RCU_EXPEDITED:
            done = sync_exp_work_done_ns(self)  # woken from exp_wq[], it finds its GP done
        return done + task_return(self, e, t0 + done)
    if phase == TASK_MUTEX_WAIT or phase == TASK_EXP_OWNER or phase == TASK_BARRIER_WAIT:
        return self.rnp_lock_ns  # mutex_lock() retry / mutex_unlock(): one cache line
    if phase == TASK_EXP_DRIVE:
        return rcu_exp_sel_wait_wake_next(self, e, t0)
    if phase == TASK_SLEEPING:
        return task_enter(self, e, t0)  # woken by its timer
    if phase == TASK_START:
        return self.thread_lock_ns
    if phase == TASK_START_LOCK:
        self.ents[e].phase = TASK_START_ON  # woken by the unlock: on to the barrier
        return self.thread_woken_ns
    if phase == TASK_SYSCALL_EXIT:
        return task_next(self, e, t0, 0)  # switched out at its system call's exit: back in user mode
    if phase == TASK_NEW and self.wl_runtime_jiffies[self.task_wl[e]] >= 0:
        # jdone = jiffies + minruntime * HZ: the task may end once time_after(jiffies, jdone).
        self.task_end_ns[e] = (jiffies(self) + self.wl_runtime_jiffies[self.task_wl[e]] + 1) * self.jiffy_ns
    return task_next(self, e, t0, 0)


cdef i64 task_return(Engine self, int e, i64 t0) except -2:
    """synchronize_rcu*() returns at t0: record it, then the work after it; a user task's
    system call then exits (TASK_SYSCALL_EXIT), a kthread goes on to its next call."""
    cdef ent_t *ep = &self.ents[e]
    cdef int w = self.task_wl[e]
    cdef i64 dur = self.wl_after_ns[w]
    record_request(self, e, t0)
    if self.wl_vmalloc[w]:
        dur += vfree_page(self, ep.cpu, t0 + dur)
    if task_leaves(self, e, ep.loops_left <= 0, t0):
        ep.phase = TASK_EXITED
        if t0 + dur > self.completion_ns:
            self.completion_ns = t0 + dur
        return dur
    if not ep.kthread:
        ep.phase = TASK_SYSCALL_EXIT
        return dur
    return task_next(self, e, t0, dur)


cdef bint task_leaves(Engine self, int e, bint measured, i64 t) except -1:
    """Does task e leave its loop after the iteration ending at t? `measured`: it has made
    its calls (rcuscale's i >= MIN_MEAS). Once also past its minimum run time it is done;
    a plain task then leaves. An until_all_done task is rcu_scale_writer(): done, it
    turns SCHED_NORMAL (sched_set_normal()) and counts itself in n_rcu_scale_writer_finished;
    it leaves once it finds every writer counted (alldone: the last one at once, the others
    after the call they are in), its loop then waiting for the module's unloading in
    rcu_scale_wait_shutdown(). A writer counts itself at its return t, which may lie after
    the moment another one's return is computed: that one finds the count only from t."""
    cdef int w = self.task_wl[e]
    if not self.task_is_done[e] and measured and t >= self.task_end_ns[e]:
        self.task_is_done[e] = 1
        self.wl_unfinished[w] -= 1
        if t > self.wl_done_ns[w]:
            self.wl_done_ns[w] = t
        if self.wl_all_done[w]:
            sched_set_normal(self, e)
    if not self.task_is_done[e]:
        return False
    return not self.wl_all_done[w] or (self.wl_unfinished[w] == 0 and t >= self.wl_done_ns[w])


cdef i64 task_next(Engine self, int e, i64 t0, i64 dur) except -2:
    """After `dur` of work, think in user mode, then sleep (sync_loop()) or enter the next call."""
    cdef ent_t *ep = &self.ents[e]
    cdef cpu_t *cp = &self.cpus[ep.cpu]
    cdef int w = self.task_wl[e]
    # Think time runs in user mode: the tick sees a quiescent state there.
    cp.user_from = t0 + dur
    cp.user_to = t0 + dur + self.wl_think_ns[w]
    dur += self.wl_think_ns[w]
    if self.wl_sleep_jiffies_max[w]:
        ep.phase = TASK_SLEEPING
        return dur
    return dur + task_enter(self, e, t0 + dur)


cdef i64 task_enter(Engine self, int e, i64 t0) except -2:
    """Enter the next call at t0 (after vmalloc()ing its page): the time until sync_loop() makes it."""
    cdef ent_t *ep = &self.ents[e]
    cdef int w = self.task_wl[e]
    cdef i64 dur = self.sync_entry_ns
    ep.phase = TASK_RUNNING
    if self.wl_prim[w] == PRIM_CALL_RCU_HURRY:
        return self.async_kmalloc_ns  # the rcu_head; call_rcu_hurry() itself is charged when made
    if self.wl_vmalloc[w]:
        dur += vmalloc_page(self, ep.cpu, t0)
    if self.wl_prim[w] == PRIM_SYNCHRONIZE_RCU and not self.wake_from_gp:
        dur += self.call_rcu_ns
    return dur


cdef i64 sync_loop(Engine self, int e) except -2:
    cdef ent_t *ep = &self.ents[e]
    cdef int c = ep.cpu
    cdef i64 nxt = -1
    if ep.phase == TASK_EXITED:
        self.tasks_left -= 1
        return -1
    if ep.phase == TASK_START or ep.phase == TASK_START_ON:
        return thread_start_step(self, e)
    if ep.phase == TASK_SYSCALL_EXIT:
        # exit_to_user_mode(): a need_resched set while the call returned switches it out here.
        if exit_to_user_mode(self, c):
            return -1
        return task_next(self, e, self.now, 0)
    self.acc = 0
    if ep.phase == TASK_MUTEX_WAIT and ep.fl_next == self.barrier_mutex:
        nxt = rcu_barrier_mutex_retry(self, e, c)
    elif ep.phase == TASK_MUTEX_WAIT:
        nxt = exp_mutex_retry(self, e, c)
    elif ep.phase == TASK_BARRIER:
        nxt = rcu_barrier_next(self, e, c)
    elif ep.phase == TASK_BARRIER_WAIT:
        nxt = rcu_barrier_end(self, e, c)
    elif ep.phase == TASK_ASYNC_RETRY:
        ep.phase = TASK_RUNNING
        nxt = rcu_scale_async(self, e, c)
    elif ep.phase == TASK_EXP_OWNER:
        # Woken by rcu_exp_wait_wake(): let the next expedited GP start, return.
        exp_gp_owner_done(self, c)
        nxt = task_return(self, e, self.now + self.acc)
    elif ep.phase == TASK_SLEEPING:
        # rcuscale's writer_holdoff_jiffies: torture_random() % max + 1 jiffies.
        nxt = schedule_timeout_idle(self, e, random_u32(self)
                                    % self.wl_sleep_jiffies_max[self.task_wl[e]] + 1)
    elif ep.phase == TASK_EXP_DRIVE:
        nxt = rcu_exp_sel_wait_wake(self, e)  # charges its own lock costs
        self.acc = 0
        if nxt < 0 and self.exp_phase == EXP_IDLE:
            # rcu_exp_wait_wake() done: let the next expedited GP start, return.
            exp_gp_owner_done(self, c)
            nxt = task_return(self, e, self.now + self.acc)
    elif self.wl_prim[self.task_wl[e]] == PRIM_CALL_RCU_HURRY:
        ep.t_call = self.now - self.async_kmalloc_ns
        if self.trace_on:
            trace(self, ep.t_call, TR_TASK_WAIT, c, e, 0, PRIM_CALL_RCU_HURRY, 0)
        nxt = rcu_scale_async(self, e, c)
    else:
        ep.loops_left -= 1
        ep.t_call = self.now - self.sync_entry_ns
        if self.wl_prim[self.task_wl[e]] == PRIM_SYNCHRONIZE_RCU_EXPEDITED:
            nxt = synchronize_rcu_expedited(self, e, c)
        else:
            ep.phase = TASK_WAITING
            ep.req_s = rcu_seq_snap(self.gp_seq)
            if self.wake_from_gp:
                synchronize_rcu_normal(self, e, c)
            else:
                ep.t_call -= self.call_rcu_ns
                # wait_rcu_gp(call_rcu_hurry): wakeme_after_rcu behind other callbacks.
                call_rcu(self, c, CB_WAKEME, e)
        if self.trace_on:
            trace(self, ep.t_call, TR_TASK_WAIT, c, e, ep.req_s, self.wl_prim[self.task_wl[e]], 0)
    self.cpus[c].debt += self.acc
    return nxt


# --- rcuscale's gp_async writer: call_rcu_hurry(), rcu_barrier() when full ----
cdef i64 rcu_scale_async(Engine self, int e, int c) except -2:
    """rcu_scale_writer()'s gp_async step: call_rcu_hurry() while fewer than gp_async_max of
    its callbacks are in flight, counted per task (v6.12 and later) or, before, on its CPU
    (which the callback counts down on the CPU that invokes it); else rcu_barrier()."""
    cdef ent_t *ep = &self.ents[e]
    cdef int32_t *inflight = &ep.async_inflight if self.rcuscale_async_per_task else &self.cpus[c].async_inflight
    if inflight[0] >= self.wl_async_max[self.task_wl[e]]:
        return rcu_barrier(self, e, c)
    inflight[0] += 1
    call_rcu(self, c, CB_RCUSCALE_ASYNC, e)
    self.acc += self.call_rcu_ns
    ep.loops_left -= 1
    return task_return(self, e, self.now + self.acc)


cdef void rcu_scale_async_cb(Engine self, int e, int runner_cpu) noexcept:
    """rcu_scale_async_cb(): one callback of writer e fewer in flight, on its own count
    (v6.12 and later) or on the count of the CPU invoking it (this_cpu_ptr())."""
    if self.rcuscale_async_per_task:
        self.ents[e].async_inflight -= 1
    else:
        self.cpus[runner_cpu].async_inflight -= 1


cdef i64 rcu_scale_barrier_done(Engine self, int e, int c) except -2:
    """rcu_barrier() returned to the writer. Before v6.12 it retries the call, measured from
    the same start; from v6.12 the iteration is no measurement, unless it is the one that
    finds the writer done (loops_left 1 is rcuscale's i >= MIN_MEAS, and the run time is
    over) and leaves (task_leaves()): its duration then fills the writer's last slot."""
    cdef ent_t *ep = &self.ents[e]
    if not self.rcuscale_async_per_task:
        ep.phase = TASK_ASYNC_RETRY  # goto retry, once rcu_barrier()'s own time has passed
        return 0
    ep.phase = TASK_RUNNING
    if task_leaves(self, e, ep.loops_left <= 1, self.now + self.acc):
        ep.loops_left = 0
        return task_return(self, e, self.now + self.acc)
    return task_next(self, e, self.now + self.acc, 0)
