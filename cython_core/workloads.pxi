# Workload entities: the sync_loop task (synchronize_rcu*() in a loop, or
# rcuscale's gp_async writer: call_rcu_hurry() and rcu_barrier()), the
# rt_latency_probe task (amlat: a SCHED_FIFO task woken by a timer interrupt)
# and the call_rcu_load tasks (operations of kernel work, non-preemptible
# sections and call_rcu()).
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int tasks_init(Engine self, t) except -1:
    """The sync_loop tasks (entities 0..n_tasks-1) and their workloads' parameters."""
    cdef int e, k
    self.n_tasks = len(t.cpu)
    self.tasks_left = self.n_tasks
    self.sync_entry_ns = t.sync_entry_ns
    self.task_wl = <int *> malloc((self.n_tasks + 1) * sizeof(int))
    for e in range(self.n_tasks):
        self.ents[e].kind = ENT_TASK
        self.ents[e].cpu = t.cpu[e]
        self.ents[e].rq = RQ_RT if t.rt[e] else RQ_NORMAL
        self.ents[e].weight = t.weight[e]
        self.ents[e].kthread = t.kthread[e]
        self.ents[e].initial = 1  # a new task: placed as by wake_up_new_task()
        if t.aff[e] >= 0 and self.n_levels:  # a machine of one CPU has no domains, nowhere to move
            self.ents[e].aff = t.aff[e]
            self.ents[e].fork_place = t.fork_balance[e]
            self.n_unbound += 1
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
    self.task_is_done = np.zeros(self.n_tasks, dtype=np.int64)
    self.wl_done_ns = np.zeros(self.n_wl, dtype=np.int64)
    self.wl_async_max = np.ascontiguousarray(t.async_max, dtype=np.int64)
    self.async_per_task = t.async_per_task
    self.async_kmalloc_ns = t.async_kmalloc_ns
    self.cb_cost[CB_RCUSCALE_ASYNC] = t.async_cb_ns
    # A task that may call rcu_barrier(): the checker follows every callback.
    self.barrier_check = PRIM_CALL_RCU_HURRY in t.primitive
    return self.n_tasks


cdef void tasks_start(Engine self) except *:
    cdef int e
    for e in range(self.n_tasks):
        self.ents[e].state = ST_RUNNABLE
        push(self, self.task_start[e], PRIO_NORMAL, EV_WAKE, e, 0)


cdef void rt_latency_init(Engine self, cl, s, rl) except *:
    """Probe tasks, call_rcu_load tasks and krcud/N kthreads, after every other entity."""
    cdef int e = self.n_ents, i, c
    self.classic = cl.classic_rcu
    self.softirq_restart_only = s.softirq_restart_only
    self.rcumaxbatch = cl.rcumaxbatch
    self.rcuplugticks = cl.rcuplugticks
    self.krcud_bhlimit = cl.krcud_bhlimit
    self.irq_exit_softirq = s.irq_exit_softirq
    self.cl_curbatch = self.cl_maxbatch = self.gp_seq >> 2
    self.probe_period_ns = np.ascontiguousarray(rl.probe_period_ns, dtype=np.int64)
    self.probe_run_ns = np.ascontiguousarray(rl.probe_run_ns, dtype=np.int64)
    self.bg_work_ns = np.ascontiguousarray(rl.bg_work_ns, dtype=np.int64)
    self.bg_groups_per_op = np.ascontiguousarray(rl.bg_groups_per_op, dtype=np.float64)
    self.bg_burst = np.ascontiguousarray(rl.bg_burst, dtype=np.intc)
    self.bg_cb_kind = np.ascontiguousarray(rl.bg_cb_kind, dtype=np.intc)
    self.bg_lazy = np.ascontiguousarray(rl.bg_lazy, dtype=np.intc)
    self.bg_sleep_jiffies_max = np.ascontiguousarray(rl.bg_sleep_jiffies_max, dtype=np.int64)
    if len(rl.bg_cpu):
        self.cbl_fine = <i64 *> calloc(FINE_SLOTS, sizeof(i64))
        if self.cbl_fine == NULL:
            raise MemoryError()
        self.cbl_min_ns = -1
    self.bg_sec_first = np.ascontiguousarray(rl.bg_sec_first, dtype=np.intc)
    self.bg_sec_count = np.ascontiguousarray(rl.bg_sec_count, dtype=np.intc)
    self.bg_sec_ns = np.ascontiguousarray(rl.bg_sec_ns, dtype=np.int64)
    self.bg_sec_cum = np.ascontiguousarray(rl.bg_sec_cum, dtype=np.float64)
    for c in range(self.nr_cpus):
        self.cpus[c].krcud = -1
        self.cpus[c].rcud_head = self.cpus[c].rcud_tail = -1
        self.cpus[c].probe_next = (<i64> 1) << 62
        self.cpus[c].probe_runnable_at = (<i64> 1) << 62
    for i in range(len(rl.probe_cpu)):
        # amlat: a SCHED_FIFO task sleeping until the next RTC interrupt.
        self.ents[e].kind = ENT_RT_PROBE
        self.ents[e].cpu = rl.probe_cpu[i]
        self.ents[e].idx = rl.probe_workload[i]
        self.ents[e].rq = RQ_RT
        self.ents[e].loops_left = rl.probe_samples[self.ents[e].idx]
        self.tasks_left += 1
        push(self, self.probe_period_ns[self.ents[e].idx], PRIO_NORMAL, EV_PROBE_TIMER, e, 0)
        note_probe_timer(self, self.ents[e].cpu, self.probe_period_ns[self.ents[e].idx])
        e += 1
    for i in range(len(rl.bg_cpu)):
        self.ents[e].kind = ENT_BG
        self.ents[e].cpu = rl.bg_cpu[i]
        self.ents[e].idx = rl.bg_workload[i]
        self.ents[e].rq = RQ_NORMAL
        self.ents[e].weight = rl.bg_weight[self.ents[e].idx]
        self.ents[e].phase = BG_WORK
        self.ents[e].state = ST_RUNNABLE
        push(self, 0, PRIO_NORMAL, EV_WAKE, e, 0)
        e += 1
    if self.krcud_bhlimit:
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
    self.n_ents = e


# --- workload task: loop { synchronize_rcu*(); work after; think } ------
cdef i64 task_run(Engine self, int e, i64 t0) except -2:
    cdef int phase = self.ents[e].phase
    cdef i64 done = 0
    if phase == TASK_WAITING:
        if self.wl_prim[self.task_wl[e]] == PRIM_SYNCHRONIZE_RCU_EXPEDITED:
            # Woken from exp_wq[], it finds its GP done (sync_exp_work_done()).
            done = tp_cost(self, TP_RCU_EXP_GRACE_PERIOD, 1)
        return done + task_return(self, e, t0 + done)
    if phase == TASK_MUTEX_WAIT or phase == TASK_EXP_OWNER or phase == TASK_BARRIER_WAIT:
        return self.rnp_lock_ns  # mutex_lock() retry / mutex_unlock(): one cache line
    if phase == TASK_EXP_DRIVE:
        return rcu_exp_sel_wait_wake_next(self, e, t0)
    if phase == TASK_SLEEPING:
        return task_enter(self, e, t0)  # woken by its timer
    if phase == TASK_NEW and self.wl_runtime_jiffies[self.task_wl[e]] >= 0:
        # jdone = jiffies + minruntime * HZ: the task may end once time_after(jiffies, jdone).
        self.task_end_ns[e] = (jiffies(self) + self.wl_runtime_jiffies[self.task_wl[e]] + 1) * self.jiffy_ns
    return task_next(self, e, t0, 0)


cdef i64 task_return(Engine self, int e, i64 t0) except -2:
    """synchronize_rcu*() returns at t0: record it, then the work after it."""
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


cdef i64 task_next(Engine self, int e, i64 t0, i64 dur) except -2:
    """After `dur` of work, think in user mode, then sleep (task_done()) or enter the next call."""
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
    """Enter the next call at t0 (after vmalloc()ing its page): the time until task_done() makes it."""
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


cdef i64 schedule_timeout_idle(Engine self, int e, i64 timeout) except -2:
    """The task sleeps until its timer-wheel timer, armed for `timeout` jiffies on its CPU, fires."""
    cdef cpu_t *cp = &self.cpus[self.ents[e].cpu]
    cdef i64 t = timer_expiry_ns(self, timeout)
    push(self, t, PRIO_NORMAL, EV_TASK_TIMEOUT, e, 0)
    if cp.timeout_next <= self.now or t < cp.timeout_next:
        cp.timeout_next = t
    return -1


cdef void ev_task_timeout(Engine self, int e, i64 arrived_on) except *:
    """process_timeout(): the timer wakes the task, from the CPU whose interrupt
    expires it (timer_expiry_cpu()), when that interrupt arrives (arrived_on: 1 +
    that CPU, once a late one has; 0 at the expiry)."""
    cdef int c
    if arrived_on:
        c = arrived_on - 1
    else:
        c = timer_expiry_cpu(self, self.ents[e].cpu)
        if timer_irq_late(self, c, EV_TASK_TIMEOUT, e, c + 1):
            return
    timer_tick(self, c)
    self.acc = 0
    wake(self, e, c, self.now)


cdef i64 task_done(Engine self, int e) except -2:
    cdef ent_t *ep = &self.ents[e]
    cdef int c = ep.cpu
    cdef i64 nxt = -1
    if ep.phase == TASK_EXITED:
        self.tasks_left -= 1
        return -1
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
        sync_exp_work_done(self)
        mutex_unlock(self, self.gp_mutex, c)
        nxt = task_return(self, e, self.now + self.acc)
    elif ep.phase == TASK_SLEEPING:
        # rcuscale's writer_holdoff_jiffies: torture_random() % max + 1 jiffies.
        nxt = schedule_timeout_idle(self, e, self.rng.next_uint32(self.rng.state)
                                    % self.wl_sleep_jiffies_max[self.task_wl[e]] + 1)
    elif ep.phase == TASK_EXP_DRIVE:
        nxt = rcu_exp_sel_wait_wake(self, e)  # charges its own lock costs
        self.acc = 0
        if nxt < 0 and self.exp_phase == EXP_IDLE:
            # rcu_exp_wait_wake() done: let the next expedited GP start, return.
            sync_exp_work_done(self)
            mutex_unlock(self, self.gp_mutex, c)
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
                synchronize_rcu_normal_wake(self, e, c)
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
    cdef int32_t *inflight = &ep.async_inflight if self.async_per_task else &self.cpus[c].async_inflight
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
    if self.async_per_task:
        self.ents[e].async_inflight -= 1
    else:
        self.cpus[runner_cpu].async_inflight -= 1


cdef i64 rcu_scale_barrier_done(Engine self, int e, int c) except -2:
    """rcu_barrier() returned to the writer. Before v6.12 it retries the call, measured from
    the same start; from v6.12 the iteration is no measurement, unless it is the one that
    finds the writer done (loops_left 1 is rcuscale's i >= MIN_MEAS, and the run time is
    over) and leaves (task_leaves()): its duration then fills the writer's last slot."""
    cdef ent_t *ep = &self.ents[e]
    if not self.async_per_task:
        ep.phase = TASK_ASYNC_RETRY  # goto retry, once rcu_barrier()'s own time has passed
        return 0
    ep.phase = TASK_RUNNING
    if task_leaves(self, e, ep.loops_left <= 1, self.now + self.acc):
        ep.loops_left = 0
        return task_return(self, e, self.now + self.acc)
    return task_next(self, e, self.now + self.acc, 0)


# --- rt_latency_probe: amlat, a SCHED_FIFO task woken by a timer interrupt ----
cdef inline bint probe_waiting(Engine self, cpu_t *cp, i64 t) noexcept:
    """A probe on this CPU is runnable at t: woken already, or by its next interrupt.

    NOTE: callback invocation is computed whole when it starts, so the
    rcu-low-lat check "an RT task is waiting" (rq_has_rt_task()) reads the
    probe's wake-up and periodic timer instead of waiting for their events.
    """
    return cp.probe_runnable_at <= t or cp.probe_next + self.tick_ns <= t


cdef void note_probe_timer(Engine self, int c, i64 t) noexcept:
    """Remember the earliest coming probe interrupt on CPU c."""
    cdef cpu_t *cp = &self.cpus[c]
    if cp.probe_next <= self.now or t < cp.probe_next:
        cp.probe_next = t


cdef void ev_probe_timer(Engine self, int e) except *:
    """The probe's timer interrupt (the RTC irq): the handler wakes the probe, whose
    scheduling latency runs from this instant until it runs."""
    cdef ent_t *ep = &self.ents[e]
    cdef int c = ep.cpu
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 cost = self.tick_ns  # the RTC interrupt costs a timer interrupt
    if ep.loops_left <= 0:
        return
    push(self, self.now + self.probe_period_ns[ep.idx], PRIO_NORMAL, EV_PROBE_TIMER, e, 0)
    note_probe_timer(self, c, self.now + self.probe_period_ns[ep.idx])
    # invoke_softirq() at irq exit: softirq work left for ksoftirqd runs here, unless
    # the interrupt came in softirq context (a softirq or ksoftirqd's do_softirq()).
    if (self.irq_exit_softirq and cp.softirq_pending and self.now >= cp.nonpreempt_until
            and not (cp.state == CPU_BUSY and self.ents[cp.curr].kind == ENT_RCUC)):
        cost += do_softirq(self, c, self.now + cost, False)
    steal(self, c, cost)
    if ep.state == ST_BLOCKED:
        ep.t_wake = self.now
        cp.probe_runnable_at = self.now + cost
        wake(self, e, c, self.now + cost)


cdef i64 probe_run(Engine self, int e, i64 t0) except -2:
    """The probe runs at t0 (after the context switch): record its latency."""
    cdef ent_t *ep = &self.ents[e]
    cdef i64 cap
    if self.lat_n == self.lat_cap:
        cap = max(1024, 2 * self.lat_cap)
        self.lat_rec = <i64 *> realloc(self.lat_rec, cap * sizeof(i64))
        if self.lat_rec == NULL:
            raise MemoryError()
        self.lat_cap = cap
    self.lat_rec[self.lat_n] = t0 - ep.t_wake
    self.lat_n += 1
    self.cpus[ep.cpu].probe_runnable_at = (<i64> 1) << 62
    ep.loops_left -= 1
    return self.probe_run_ns[ep.idx]


cdef i64 probe_done(Engine self, int e) except -2:
    if self.ents[e].loops_left == 0:
        self.tasks_left -= 1
        self.ents[e].loops_left = -1
    return -1


# --- call_rcu_load: operations of kernel work, sections, call_rcu(), sleeps ---
cdef i64 bg_run(Engine self, int e, i64 t0) except -2:
    cdef ent_t *ep = &self.ents[e]
    if ep.phase == BG_LOCKED:
        return ep.sec_ns
    ep.phase = BG_WORK  # woken by its timer after a sleep, or started
    return exp_ns(self, self.bg_work_ns[ep.idx])


cdef i64 bg_done(Engine self, int e) except -2:
    """An operation's work ends: queue its callbacks, then maybe a non-preemptible
    section (one row of the section table, by its probability per operation), then
    maybe a sleep (bg_next())."""
    cdef ent_t *ep = &self.ents[e]
    cdef int w = ep.idx, c = ep.cpu, k, n
    cdef double mean, u
    if ep.phase == BG_LOCKED:
        ep.phase = BG_WORK  # preempt_enable(): a waiting RT task runs now
        return bg_next(self, e)
    if ep.phase == BG_SLEEPING:
        # 1 to sleep_jiffies_max jiffies (torture_random() % max + 1), as a sync_loop task sleeps.
        return schedule_timeout_idle(self, e, self.rng.next_uint32(self.rng.state)
                                     % self.bg_sleep_jiffies_max[w] + 1)
    # call_rcu() groups: the integer part always, the fraction as a probability.
    mean = self.bg_groups_per_op[w]
    n = <int> mean
    if self.rng.next_double(self.rng.state) < mean - n:
        n += 1
    n *= self.bg_burst[w]
    self.acc = 0
    for k in range(n):
        call_rcu(self, c, self.bg_cb_kind[w], -1, self.bg_lazy[w])
    self.cbl_queued += n
    self.cpus[c].debt += self.acc + n * self.call_rcu_ns
    u = self.rng.next_double(self.rng.state)
    for k in range(self.bg_sec_first[w], self.bg_sec_first[w] + self.bg_sec_count[w]):
        if u < self.bg_sec_cum[k]:
            ep.phase = BG_LOCKED
            ep.sec_ns = self.bg_sec_ns[k]
            return ep.sec_ns
    return bg_next(self, e)


cdef i64 bg_next(Engine self, int e) except -2:
    """The next operation's work; where the workload sleeps between operations, first a
    burst of nothing but the time owed (the call_rcu() calls), at whose end it sleeps."""
    if self.bg_sleep_jiffies_max[self.ents[e].idx]:
        self.ents[e].phase = BG_SLEEPING
        return 0
    return exp_ns(self, self.bg_work_ns[self.ents[e].idx])
