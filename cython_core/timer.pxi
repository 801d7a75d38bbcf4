# Timer-wheel timers (kernel/time/timer.c) and the CPU that expires them
# (kernel/time/timer_migration.c): when schedule_timeout(), mod_timer() and
# queue_delayed_work() timers fire, and on which CPU's interrupt.
#
# Included by _core.pyx: module-level functions on the Engine.

cdef enum:
    LVL_CLK_SHIFT = 3      # each wheel level is 8 times coarser than the one below
    LVL_BITS = 6           # 64 buckets per level
    TMIGR_CHILDREN_PER_GROUP = 8


cdef void timer_init(Engine self, s) except *:
    self.timer_wheel_rounds_up = s.timer_wheel_rounds_up
    self.timer_lvl_depth = s.timer_lvl_depth
    self.timer_pull = s.timer_pull
    self.last_idle_cpu = self.gp_cpu


cdef i64 timer_expiry_jiffy(Engine self, i64 clk, i64 expires) noexcept:
    """The jiffy whose tick runs a timer armed at jiffy `clk` to expire at `expires`.

    From v4.8, calc_wheel_index() files the timer at the level whose
    granularity covers the delta, and calc_index() rounds the expiry up to the
    next bucket of that level "so a timer never fires early": a level-0 timer
    (under 63 jiffies) fires one jiffy after `expires`.  The cascading wheel
    before it ran a timer at the tick that reached `expires` (its per-timer
    slack is zero for the under-256-jiffy timers of those releases).
    """
    cdef i64 delta = expires - clk
    cdef int lvl = 0
    cdef i64 shift, bucket
    if not self.timer_wheel_rounds_up:
        return expires if delta > 0 else clk + 1
    if delta < 0:
        return clk + 1  # already due: the next tick runs it
    # LVL_START(n) = (LVL_SIZE - 1) << ((n - 1) * LVL_CLK_SHIFT)
    while lvl < self.timer_lvl_depth - 1 and delta >= ((1 << LVL_BITS) - 1) << (lvl * LVL_CLK_SHIFT):
        lvl += 1
    shift = lvl * LVL_CLK_SHIFT
    bucket = ((expires >> shift) + 1) << shift
    return bucket if bucket > clk else clk + 1


cdef i64 timer_expiry_ns(Engine self, i64 delay_jiffies) except -1:
    """When a timer armed now for jiffies + delay_jiffies fires (its tick, in ns)."""
    cdef i64 clk = jiffies(self)
    return timer_expiry_jiffy(self, clk, clk + delay_jiffies) * self.jiffy_ns


cdef inline bint tick_stopped(Engine self, int c) noexcept:
    """Inactive to the timer-migration hierarchy: NO_HZ idle (rcu_needs_cpu() false,
    and the cpuidle governor let the tick stop)."""
    cdef cpu_t *cp = &self.cpus[c]
    return (cp.state == CPU_IDLE and (cp.offloaded or n_cbs(self, cp) == 0) and cp.stop_tick
            and not self.hz_periodic)


cdef int timer_expiry_cpu(Engine self, int c) noexcept:
    """The CPU whose interrupt expires a non-pinned timer armed on CPU c.

    Before v6.9 it is c itself: a NO_HZ-idle c wakes from its idle state for
    the timer, and its tick handler runs (tick_sched_handle()).  From v6.9
    (the timer-migration hierarchy) an idle c hands its global timers to a
    migrator: an active CPU of its group of TMIGR_CHILDREN_PER_GROUP, else of
    the enclosing group a level up, and so on; with every CPU idle, the last
    one to go idle holds the top level and wakes for the timer.  rcusim takes
    the lowest-numbered active CPU of the nearest group as the migrator.
    """
    cdef int size = TMIGR_CHILDREN_PER_GROUP, lo, hi, x
    if not self.timer_pull or not tick_stopped(self, c):
        return c
    while True:
        lo = c // size * size
        hi = min(lo + size, self.nr_cpus)
        for x in range(lo, hi):
            if x != c and not tick_stopped(self, x):
                return x
        if lo == 0 and hi == self.nr_cpus:
            return self.last_idle_cpu
        size *= TMIGR_CHILDREN_PER_GROUP


cdef bint timer_irq_late(Engine self, int c, int kind, int target, i64 arg) except -1:
    """A timer expiring now on CPU c runs when its interrupt arrives: if that is later
    (the noise workload's timer delay), the event (kind, target, arg) is queued for
    then and True returned; the caller's arg tells the arrival from the expiry."""
    cdef i64 t
    if not self.nz_timer_on:
        return False
    t = timer_irq_arrival(self, c)
    if t <= self.now:
        return False
    push(self, t, PRIO_NORMAL, kind, target, arg)
    return True


cdef void timer_tick(Engine self, int c) except *:
    """A timer expiring on CPU c: on a NO_HZ-idle CPU it fires from a tick."""
    cdef i64 cost
    if not self.cpus[c].tick_on:
        cost = rcu_sched_clock_irq(self, c)
        if self.cpus[c].state == CPU_IDLE:
            cpuidle_irq(self, c, True, cost)


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


cdef i64 hrtimer_nanosleep(Engine self, int e, i64 t, i64 ns) except -2:
    """nanosleep() of `ns` from t (usleep()): the entity sleeps until its hrtimer expires on
    its CPU, at the range's end (the task's timer_slack_ns past the request): nothing else
    expires the timer sooner on an idle CPU. Returns -1 (it sleeps)."""
    push(self, t + ns + self.timer_slack_ns, PRIO_NORMAL, EV_HRTIMER_SLEEP, e, 0)
    return -1


cdef void ev_hrtimer_sleep(Engine self, int e) except *:
    """hrtimer_wakeup(): the timer's interrupt on the sleeper's CPU wakes it."""
    cdef int c = self.ents[e].cpu
    timer_tick(self, c)
    self.acc = 0
    wake(self, e, c, self.now)
