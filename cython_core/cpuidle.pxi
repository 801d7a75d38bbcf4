# Idle states and the menu cpuidle governor (drivers/cpuidle/governors/menu.c):
# which state an idle CPU enters, whether it keeps its tick there, and what
# leaving the state costs a wake-up.  menu is the default governor of every
# release rcusim models.  The arithmetic (units: us, as in the v4.20-v5.0
# code) is that of rcusim/kernel/cpuidle.py, which the reference model uses.
#
# A CPU leaves its state for a wake-up (the exit latency delays the woken
# entity), for a tick it kept or a timer it expires, and for an interrupt;
# after the interrupts the idle loop runs the governor again.  An interrupt
# handler's effects are not delayed by the state's exit latency, but the CPU stays
# in its extended quiescent state until it has left the state, and RCU watches it
# (ct_irq_enter() to ct_irq_exit()) for the handler's time after that.
#
# Included by _core.pyx: module-level functions on the Engine.

cdef enum:
    MENU_BUCKETS = 12
    MENU_INTERVALS = 8
    MENU_RESOLUTION = 1024
    MENU_DECAY = 8
    MENU_MAX_INTERESTING = 50000
    MENU_NO_TIMER_US = 0xFFFFFFFF   # no timer rcusim models is queued on the CPU
    MENU_INT_MAX = 0x7FFFFFFF


cdef void cpuidle_init(Engine self, s) except *:
    """The profile's state table, and each CPU idle in the state the governor
    picks, its menu_device as after a long NO_HZ idle stretch: every interval
    what menu_update() records for a sleep ended by the tick, every correction
    factor unity (menu_enable_device())."""
    cdef int c, i
    self.idle_mu = s.idle_mu
    self.idle_sigma = s.idle_sigma
    self.idle_wake_q_ns = np.ascontiguousarray(s.idle_wake_q_ns, dtype=np.int64)
    self.idle_wake_tail_ns = np.ascontiguousarray(s.idle_wake_tail_ns, dtype=np.int64)
    self.n_idle_states = len(s.idle_exit_us)
    for i in range(self.n_idle_states):
        self.idle_exit_us[i] = s.idle_exit_us[i]
        self.idle_target_us[i] = s.idle_target_us[i]
        self.idle_mwait[i] = s.idle_mwait[i]
        self.idle_wake_ns[i] = s.idle_wake_ns[i]
    self.idle_polling0 = s.idle_polling0
    self.tick_usec = self.jiffy_ns // 1000
    self.menu_keeps_tick = s.menu_keeps_tick
    self.hz_periodic = s.hz_periodic
    self.idle_stop_tick_after_tick = s.idle_stop_tick_after_tick
    self.menu = <menu_t *> calloc(self.nr_cpus, sizeof(menu_t))
    if self.menu == NULL:
        raise MemoryError()
    for c in range(self.nr_cpus):
        self.cpus[c].stop_tick = 1
        for i in range(MENU_BUCKETS):
            self.menu[c].correction[i] = MENU_RESOLUTION * MENU_DECAY
        for i in range(MENU_INTERVALS):
            self.menu[c].intervals[i] = 9 * MENU_MAX_INTERESTING // 10
        cpuidle_idle_call(self, c, True)  # every CPU starts idle, its tick stopped ...
        if not self.cpus[c].stop_tick or self.hz_periodic:  # ... unless kept (or never stopped)
            self.cpus[c].tick_on = 1
            push(self, (jiffies(self) + 1) * self.jiffy_ns, PRIO_NORMAL, EV_TICK, c, 0)


cdef inline int which_bucket(i64 duration_us) noexcept:
    if duration_us < 10:
        return 0
    if duration_us < 100:
        return 1
    if duration_us < 1000:
        return 2
    if duration_us < 10000:
        return 3
    if duration_us < 100000:
        return 4
    return 5


cdef i64 typical_interval(menu_t *m, i64 predicted_us) noexcept:
    """get_typical_interval(): the mean of the last idle periods when they are regular."""
    cdef i64 thresh = MENU_INT_MAX, lo, hi, total, avg, v, variance
    cdef int i, divisor
    while True:
        lo = MENU_NO_TIMER_US
        hi = 0
        total = 0
        divisor = 0
        for i in range(MENU_INTERVALS):
            v = m.intervals[i]
            if v <= thresh:
                total += v
                divisor += 1
                if v > hi:
                    hi = v
                if v < lo:
                    lo = v
        if lo >= predicted_us:
            return MENU_NO_TIMER_US
        avg = total // divisor
        variance = 0
        for i in range(MENU_INTERVALS):
            v = m.intervals[i]
            if v <= thresh:
                variance += (v - avg) * (v - avg)
        variance //= divisor
        if (avg * avg > variance * 36 and divisor * 4 >= MENU_INTERVALS * 3) or variance <= 400:
            return avg
        if divisor * 4 <= MENU_INTERVALS * 3:
            return MENU_NO_TIMER_US
        thresh = hi - 1


cdef void menu_update(Engine self, menu_t *m) noexcept:
    """menu_update(): fold the last idle period into the factor and the intervals."""
    cdef i64 measured, factor, exit_us
    if m.tick_wakeup and m.next_timer_us > self.tick_usec:
        measured = 9 * MENU_MAX_INTERESTING // 10
    else:
        measured = m.residency_us
        exit_us = self.idle_exit_us[m.state]
        if measured > 2 * exit_us:
            measured -= exit_us
        else:
            measured //= 2
    if measured > m.next_timer_us:
        measured = m.next_timer_us
    factor = m.correction[m.bucket]
    factor -= factor // MENU_DECAY
    if m.next_timer_us > 0 and measured < MENU_MAX_INTERESTING:
        factor += MENU_RESOLUTION * measured // m.next_timer_us
    else:
        factor += MENU_RESOLUTION
    m.correction[m.bucket] = factor
    m.intervals[m.interval_ptr] = measured
    m.interval_ptr = (m.interval_ptr + 1) % MENU_INTERVALS


cdef inline i64 menu_predicted_us(menu_t *m, i64 next_timer_us) noexcept:
    cdef i64 predicted = (next_timer_us * m.correction[m.bucket] + MENU_RESOLUTION * MENU_DECAY // 2) \
        // (MENU_RESOLUTION * MENU_DECAY)
    cdef i64 typical = typical_interval(m, predicted)
    return typical if typical < predicted else predicted


cdef int menu_select_v4_16(Engine self, menu_t *m, i64 next_timer_us) noexcept:
    """menu_select() before v4.17: the tick is stopped already; poll only if the next
    timer is due within max(20 us, the first real state's target residency)."""
    cdef int first = 0, idx, i
    cdef i64 predicted
    if self.idle_polling0 and self.n_idle_states > 1 and \
            next_timer_us > max(<i64> 20, self.idle_target_us[1]):
        first = 1
    predicted = menu_predicted_us(m, next_timer_us)
    idx = first
    for i in range(first, self.n_idle_states):
        if self.idle_target_us[i] > predicted or self.idle_exit_us[i] > predicted:
            break
        idx = i
    return idx


cdef int menu_select(Engine self, int c, i64 next_timer_us, i64 delta_next_us) noexcept:
    """menu_select(): the state CPU c enters; sets cpus[c].stop_tick."""
    cdef menu_t *m = &self.menu[c]
    cdef cpu_t *cp = &self.cpus[c]
    cdef bint tick_stopped = not cp.tick_on
    cdef i64 predicted, latency_req = MENU_INT_MAX
    cdef int idx = -1, i, n = self.n_idle_states
    if m.needs_update:
        menu_update(self, m)
        m.needs_update = 0
    m.next_timer_us = next_timer_us
    m.bucket = which_bucket(next_timer_us)
    cp.stop_tick = 1
    if not self.menu_keeps_tick:
        return menu_select_v4_16(self, m, next_timer_us)
    if n <= 1 or next_timer_us < self.idle_target_us[1]:
        cp.stop_tick = not self.idle_polling0
        return 0
    predicted = menu_predicted_us(m, next_timer_us)
    if tick_stopped:
        if predicted < self.tick_usec:
            predicted = delta_next_us
    elif predicted < latency_req:
        latency_req = predicted  # interactivity_req, with no task in iowait
    for i in range(n):
        if idx == -1:
            idx = i
        if self.idle_target_us[i] > predicted:
            if (idx == 0 and self.idle_polling0 and self.idle_exit_us[i] <= latency_req
                    and self.idle_target_us[i] <= next_timer_us):
                predicted = self.idle_target_us[i]
                idx = i
                break
            if predicted < self.tick_usec:
                break
            if not tick_stopped:
                predicted = self.idle_target_us[idx]
                break
            if self.idle_target_us[idx] < self.tick_usec and self.idle_target_us[i] <= delta_next_us:
                idx = i
            return idx
        if self.idle_exit_us[i] > latency_req:
            break
        idx = i
    if ((idx == 0 and self.idle_polling0) or predicted < self.tick_usec) and not tick_stopped:
        cp.stop_tick = 0
        if idx > 0 and self.idle_target_us[idx] > delta_next_us:
            i = idx - 1
            while i >= 0:
                idx = i
                if self.idle_target_us[i] <= delta_next_us:
                    break
                i -= 1
    return idx


cdef inline i64 ns_to_menu_us(i64 ns) noexcept:
    return min(ns // 1000, <i64> MENU_NO_TIMER_US)


cdef void cpuidle_select(Engine self, int c) noexcept:
    """The idle loop's cpuidle_select() on CPU c, entering the chosen state now.

    The sleep length (tick_nohz_get_sleep_length()) is the next tick when
    rcu_needs_cpu() keeps it, else the CPU's next timer: the FQS wait's timer
    on the CPU the GP kthread armed it on, a sleeping sync_loop task's timer on its CPU (a
    global timer counts for the governor even where the timer-migration
    hierarchy expires it elsewhere).
    """
    cdef cpu_t *cp = &self.cpus[c]
    cdef menu_t *m = &self.menu[c]
    cdef i64 next_tick = (jiffies(self) + 1) * self.jiffy_ns - self.now
    cdef i64 next_ns = MENU_NO_TIMER_US * <i64> 1000
    if self.hz_periodic or (not cp.offloaded and n_cbs(self, cp) > 0):
        next_ns = next_tick
    elif c == self.gp_timer_cpu and self.gp_state == RCU_GP_WAIT_FQS and self.gp_timer_expires > self.now:
        next_ns = self.gp_timer_expires - self.now
    if cp.timeout_next > self.now and next_ns > cp.timeout_next - self.now:
        next_ns = cp.timeout_next - self.now
    m.state = menu_select(self, c, ns_to_menu_us(next_ns),
                          ns_to_menu_us(next_tick if cp.tick_on else next_ns))
    m.enter_ns = self.now


cdef void cpuidle_idle_call(Engine self, int c, bint got_tick) noexcept:
    """An iteration of do_idle() on CPU c: cpuidle_idle_call(), where `got_tick` says
    whether the tick woke the previous one (tick_nohz_idle_got_tick(); false as the
    CPU goes idle).

    With a governor's choice (two states or more) menu decides the tick.  Without
    a driver (or with one state), from f4c31b07b136 idle_call_stop_or_retain_tick()
    stops the tick only after it woke the loop, so a CPU entering idle runs one
    more tick handler; before, a CPU without a driver stopped it at once.
    """
    cdef cpu_t *cp = &self.cpus[c]
    cdef menu_t *m
    if self.n_idle_states > 1 or (self.n_idle_states == 1 and not self.idle_stop_tick_after_tick):
        cpuidle_select(self, c)
        return
    if self.idle_stop_tick_after_tick:
        cp.stop_tick = got_tick or not cp.tick_on
    if self.n_idle_states:
        m = &self.menu[c]
        m.state = 0  # call_cpuidle(drv, dev, 0), the governor skipped
        m.enter_ns = self.now


cdef i64 idle_exit_ns(Engine self) noexcept:
    """Wake-up latency of an idle CPU without a cpuidle driver: drawn from the profile's
    measured distribution, or lognormal from its median and p99."""
    cdef i64 lat
    if self.idle_wake_q_ns.shape[0]:
        lat = quantile_draw_ns(self, self.idle_wake_q_ns, self.idle_wake_tail_ns)
    else:
        lat = lognormal_ns(self, self.idle_mu, self.idle_sigma)
    self.n_idle_exit_ns += lat
    return lat


cdef i64 cpuidle_exit_ns(Engine self, int c) noexcept:
    """A wake-up takes CPU c out of its state: the exit latency it costs."""
    cdef menu_t *m = &self.menu[c]
    cdef i64 lat = self.idle_wake_ns[m.state]
    m.residency_us = (self.now + lat - m.enter_ns) // 1000
    m.tick_wakeup = 0
    m.needs_update = 1
    self.n_idle_exit_ns += lat
    return lat


cdef void cpuidle_irq(Engine self, int c, bint tick, i64 dur) except *:
    """An interrupt (`tick`: the tick or a timer) took idle CPU c out of its state for
    dur, its handler and softirqs; the idle loop then runs cpuidle_idle_call() again.

    The handler's effects are the engine's at once; RCU watches the CPU from when it has
    left its state (the state's exit latency: till then it is still in its extended QS)
    for the handler's time, and a task woken here runs after it."""
    cdef menu_t *m = &self.menu[c]
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 lat = self.idle_wake_ns[m.state] if self.n_idle_states else 0
    if lat > 0:
        # irq_from_idle() once out of the state; a task woken meanwhile waits for it too.
        if self.now + lat + dur > cp.nonpreempt_until:
            cp.nonpreempt_until = self.now + lat + dur
        push(self, self.now + lat, PRIO_NORMAL, EV_IRQ_ENTER_IDLE, c, dur)
    else:
        irq_from_idle(self, c, dur)
    if self.halt_poll:
        kvm_vcpu_irq(self, c)
    if self.n_idle_states:
        m.residency_us = (self.now - m.enter_ns) // 1000
        m.tick_wakeup = tick
        m.needs_update = 1
    cpuidle_idle_call(self, c, tick)


cdef void irq_from_idle(Engine self, int c, i64 dur) except *:
    """An interrupt taken from idle CPU c runs for dur: ct_irq_enter() makes RCU watch
    the CPU (out of its extended quiescent state) until ct_irq_exit(). A second one
    arriving meanwhile runs after it (handlers run with interrupts disabled), and a task
    woken on the CPU runs after both."""
    cdef cpu_t *cp = &self.cpus[c]
    if cp.in_irq:
        cp.irq_exit_at = max(cp.irq_exit_at, self.now) + dur
    else:
        cp.in_irq = 1
        cp.watching += 1  # ct_irq_enter()
        cp.irq_exit_at = self.now + dur
    if cp.irq_exit_at > cp.nonpreempt_until:
        cp.nonpreempt_until = cp.irq_exit_at
    push(self, cp.irq_exit_at, PRIO_NORMAL, EV_IRQ_EXIT_IDLE, c, 0)


cdef void ev_irq_exit_idle(Engine self, int c) noexcept:
    """ct_irq_exit(): back to the extended quiescent state, unless a task the interrupt
    woke runs on (it left that state already)."""
    cdef cpu_t *cp = &self.cpus[c]
    if not cp.in_irq or self.now < cp.irq_exit_at:
        return  # a later interrupt extended the span: its own exit ends it
    cp.in_irq = 0
    if cp.state != CPU_BUSY:
        cp.watching += 1
