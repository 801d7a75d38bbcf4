# The fair class (kernel/sched/fair.c): SCHED_OTHER entities weighted by nice,
# run in virtual-time order.  EEVDF from v6.6: the eligible entity (vruntime
# not past the load-weighted average V) with the earliest virtual deadline
# runs; a woken entity is placed at V minus its lag; the running one keeps the
# CPU to the end of its slice (RUN_TO_PARITY) unless a wakee's placement makes
# it ineligible.  From v6.12 (DELAY_DEQUEUE) an entity that sleeps while not
# eligible stays queued until it is picked or woken.  CFS from v2.6.23 to v6.5: the smallest vruntime runs; a
# wakee is placed at most half a latency period behind min_vruntime and
# preempts when it is a wake-up granularity ahead.  Before v2.6.23 (the O(1)
# scheduler) rcusim keeps its one-jiffy round robin (sched.pxi).  The
# arithmetic is that of rcusim/kernel/fair.py; the reference model mirrors it.
#
# Each CPU's queued fair entities (the running one is not among them, as in
# the kernel's rb-tree) sit in a binary heap ordered by deadline (EEVDF) or
# vruntime (CFS), ties in enqueue order.
#
# Included by _core.pyx: module-level functions on the Engine.

cdef enum:
    POLICY_RR = 0
    POLICY_CFS = 1
    POLICY_EEVDF = 2
    NICE_0_LOAD = 1024


cdef void fair_init(Engine self, s) except *:
    self.fair_policy = s.fair_policy
    self.base_slice_ns = s.base_slice_ns
    self.eevdf_delay_dequeue = s.eevdf_delay_dequeue
    self.eevdf_rel_deadline = s.eevdf_rel_deadline
    self.eevdf_preempt_short = s.eevdf_preempt_short
    self.sched_latency_ns = s.sched_latency_ns
    self.min_gran_ns = s.min_gran_ns
    self.wakeup_gran_ns = s.wakeup_gran_ns
    self.nr_latency = s.nr_latency


cdef void fair_alloc(Engine self) except *:
    """Heap room on each CPU for the entities whose CPU it is (set_task_cpu() grows it)."""
    cdef int c, e
    self.fair_hpos = <int32_t *> malloc(self.n_ents * sizeof(int32_t))
    if self.fair_hpos == NULL:
        raise MemoryError()
    for e in range(self.n_ents):
        self.cpus[self.ents[e].cpu].n_assigned += 1
        self.fair_hpos[e] = -1
    for c in range(self.nr_cpus):
        self.cpus[c].next_buddy = self.cpus[c].last_buddy = -1
        fair_reserve(self, c)


cdef int fair_reserve(Engine self, int c) except -1:
    """Room in CPU c's heap, and in pick_eevdf()'s walk, for all its entities."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef int cap
    cdef int32_t *p
    cdef fair_node_t *h
    if cp.n_assigned <= cp.fh_cap and cp.fh != NULL:
        return 0
    cap = max(cp.n_assigned, 2 * cp.fh_cap, 4)
    h = <fair_node_t *> realloc(cp.fh, cap * sizeof(fair_node_t))
    if h == NULL:
        raise MemoryError()
    cp.fh = h
    cp.fh_cap = cap
    if cap + 1 > self.fscratch_cap:
        p = <int32_t *> realloc(self.fscratch, (cap + 1) * sizeof(int32_t))
        if p == NULL:
            raise MemoryError()
        self.fscratch = p
        self.fscratch_cap = cap + 1
    return 0


cdef inline i64 calc_delta_fair(i64 delta, i64 weight) noexcept:
    if weight == NICE_0_LOAD:
        return delta  # as the kernel's calc_delta_fair(): no division for nice 0
    return delta * NICE_0_LOAD // weight


cdef inline bint node_before(Engine self, fair_node_t *a, fair_node_t *b) noexcept:
    """a ahead of b in the queue: smaller key (deadline or vruntime), then enqueued earlier."""
    return a.key < b.key or (a.key == b.key and a.seq < b.seq)


cdef inline void heap_set(Engine self, cpu_t *cp, int i, fair_node_t node) noexcept:
    cp.fh[i] = node
    self.fair_hpos[node.e] = i


cdef void heap_up(Engine self, cpu_t *cp, int i) noexcept:
    cdef fair_node_t node = cp.fh[i]
    cdef int p
    while i > 0:
        p = (i - 1) >> 1
        if not node_before(self, &node, &cp.fh[p]):
            break
        heap_set(self, cp, i, cp.fh[p])
        i = p
    heap_set(self, cp, i, node)


cdef void heap_down(Engine self, cpu_t *cp, int i) noexcept:
    cdef fair_node_t node = cp.fh[i]
    cdef int child
    while True:
        child = 2 * i + 1
        if child >= cp.nr_fair:
            break
        if child + 1 < cp.nr_fair and node_before(self, &cp.fh[child + 1], &cp.fh[child]):
            child += 1
        if not node_before(self, &cp.fh[child], &node):
            break
        heap_set(self, cp, i, cp.fh[child])
        i = child
    heap_set(self, cp, i, node)


cdef void tree_insert(Engine self, int c, int e) noexcept:
    """__enqueue_entity(): into the heap and into avg_vruntime's sums."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef ent_t *ep = &self.ents[e]
    cdef fair_node_t node
    self.fair_seq += 1
    cp.avg_vsum += (ep.vruntime - cp.min_vruntime) * ep.weight
    cp.avg_load += ep.weight
    lb_mark(self, c)
    node.key = ep.deadline if self.fair_policy == POLICY_EEVDF else ep.vruntime
    node.seq = self.fair_seq
    node.vruntime = ep.vruntime
    node.e = e
    heap_set(self, cp, cp.nr_fair, node)
    cp.nr_fair += 1
    heap_up(self, cp, cp.nr_fair - 1)


cdef void tree_remove(Engine self, int c, int e) noexcept:
    """__dequeue_entity()."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef ent_t *ep = &self.ents[e]
    cdef int i = self.fair_hpos[e]
    cdef fair_node_t last
    cp.avg_vsum -= (ep.vruntime - cp.min_vruntime) * ep.weight
    cp.avg_load -= ep.weight
    lb_mark(self, c)
    cp.nr_fair -= 1
    self.fair_hpos[e] = -1
    if i == cp.nr_fair:
        return
    last = cp.fh[cp.nr_fair]
    heap_set(self, cp, i, last)
    heap_up(self, cp, i)
    heap_down(self, cp, self.fair_hpos[last.e])


cdef inline int fair_curr(Engine self, int c) noexcept:
    """The running fair entity of CPU c, -1 if none."""
    cdef int e = self.cpus[c].curr
    if self.cpus[c].state != CPU_BUSY or e < 0 or self.ents[e].rq != RQ_NORMAL:
        return -1
    return e


cdef i64 avg_vruntime(Engine self, int c) noexcept:
    """V: the load-weighted mean vruntime of the queued entities and the running one
    (rounded down)."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 total = cp.avg_vsum, load = cp.avg_load
    cdef int e = fair_curr(self, c)
    if e >= 0:
        total += (self.ents[e].vruntime - cp.min_vruntime) * self.ents[e].weight
        load += self.ents[e].weight
    if load:
        if total < 0:
            total -= load - 1
        total = total // load
    return cp.min_vruntime + total


cdef inline void eligible_sums(Engine self, int c, i64 *total, i64 *load) noexcept:
    """avg_vruntime()'s sums with the running entity's share: V = min_vruntime + total / load."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef int cur = fair_curr(self, c)
    total[0] = cp.avg_vsum
    load[0] = cp.avg_load
    if cur >= 0:
        total[0] += (self.ents[cur].vruntime - cp.min_vruntime) * self.ents[cur].weight
        load[0] += self.ents[cur].weight


cdef bint entity_eligible(Engine self, int c, int e) noexcept:
    """vruntime(e) <= V, without the division."""
    cdef i64 total, load
    eligible_sums(self, c, &total, &load)
    return total >= (self.ents[e].vruntime - self.cpus[c].min_vruntime) * load


cdef void update_min_vruntime(Engine self, int c, bint curr_on_rq=True) noexcept:
    """min_vruntime follows the smallest vruntime of the running (if still queued)
    and queued entities, never backwards; avg_vruntime's sums are rebased on it."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef int cur = fair_curr(self, c) if curr_on_rq else -1, left
    cdef i64 v = cp.min_vruntime, delta
    cdef bint have = False
    if cur >= 0:
        v = self.ents[cur].vruntime
        have = True
    if cp.nr_fair:
        left = leftmost_vruntime_ent(self, c)
        if not have or self.ents[left].vruntime < v:
            v = self.ents[left].vruntime
    if v > cp.min_vruntime:
        delta = v - cp.min_vruntime
        cp.avg_vsum -= cp.avg_load * delta
        cp.min_vruntime = v


cdef int leftmost_vruntime_ent(Engine self, int c) noexcept:
    """The queued entity with the smallest vruntime (the heap's top under CFS)."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef int i, best = 0
    if self.fair_policy == POLICY_CFS:
        return cp.fh[0].e
    for i in range(1, cp.nr_fair):
        if cp.fh[i].vruntime < cp.fh[best].vruntime:
            best = i
    return cp.fh[best].e


cdef bint update_curr(Engine self, int c) noexcept:
    """update_curr(): charge the running entity its CPU time since the last update;
    under EEVDF renew its deadline once reached (update_deadline()).  Returns
    whether that asks for a reschedule (another entity is queued): the kernel's
    update_curr() then calls resched_curr() itself, whichever path updated it
    (a tick, an enqueue, a wake-up's preemption check, a migration).  From v6.12
    it also does so when the running entity, no longer inside the request it was
    picked for, has stopped being eligible (did_preempt_short())."""
    cdef int e = fair_curr(self, c)
    cdef ent_t *ep
    cdef i64 delta
    cdef bint resched
    if e < 0:
        return False
    ep = &self.ents[e]
    delta = self.now - ep.exec_start
    if delta <= 0:
        return False
    ep.exec_start = self.now
    ep.sum_exec += delta
    ep.vruntime += calc_delta_fair(delta, ep.weight)
    if self.fair_policy == POLICY_EEVDF:
        resched = ep.vruntime - ep.deadline >= 0
        if resched:
            ep.deadline = ep.vruntime + calc_delta_fair(self.base_slice_ns, ep.weight)
        if not self.cpus[c].nr_fair:
            return False
        return resched or (self.eevdf_preempt_short and ep.vlag != ep.deadline
                           and not entity_eligible(self, c, e))
    update_min_vruntime(self, c)
    return False


cdef i64 cfs_sched_slice(Engine self, int c, int e) noexcept:
    """sched_slice(): the period's share of e by weight, at least min_granularity."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef int nr = cp.nr_fair + (1 if fair_curr(self, c) >= 0 else 0) + (0 if self.fair_hpos[e] >= 0
                                                                         or e == cp.curr else 1)
    cdef i64 load = cp.avg_load, period, slice
    cdef int cur = fair_curr(self, c)
    if cur >= 0:
        load += self.ents[cur].weight
    if self.fair_hpos[e] < 0 and e != cur:
        load += self.ents[e].weight
    period = nr * self.min_gran_ns if nr > self.nr_latency else self.sched_latency_ns
    slice = period * self.ents[e].weight // load
    return slice if slice > self.min_gran_ns else self.min_gran_ns


cdef void place_entity(Engine self, int c, int e) noexcept:
    """place_entity() for a waking (or, with ep.initial, a new) entity."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef ent_t *ep = &self.ents[e]
    cdef i64 V, lag, load, vslice, v
    cdef int cur = fair_curr(self, c)
    if self.fair_policy == POLICY_EEVDF:
        V = avg_vruntime(self, c)
        vslice = calc_delta_fair(self.base_slice_ns, ep.weight)
        lag = 0
        if cp.nr_fair or cur >= 0:
            lag = ep.vlag
            load = cp.avg_load + (self.ents[cur].weight if cur >= 0 else 0)
            lag *= load + ep.weight
            if load == 0:
                load = 1
            lag = lag // load  # div_s64(): truncated toward zero (cdivision)
        ep.vruntime = V - lag
        if ep.initial:
            vslice //= 2  # PLACE_DEADLINE_INITIAL
        ep.deadline = ep.vruntime + vslice
    else:
        if ep.initial:
            v = cp.min_vruntime + calc_delta_fair(cfs_sched_slice(self, c, e), ep.weight)  # START_DEBIT
        else:
            v = cp.min_vruntime - self.sched_latency_ns // 2  # GENTLE_FAIR_SLEEPERS
        if v > ep.vruntime or ep.initial:
            ep.vruntime = v
    ep.initial = 0


cdef bint fair_enqueue_wakeup(Engine self, int c, int e) noexcept:
    """enqueue_entity() for a wake-up: update the running entity, place, insert.
    Returns whether that update rescheduled the running entity (resched_curr())."""
    cdef bint curr_resched = update_curr(self, c)
    place_entity(self, c, e)
    tree_insert(self, c, e)
    return curr_resched


cdef void fair_put_prev(Engine self, int c, int e) noexcept:
    """put_prev_entity(): the preempted running entity goes back into the queue."""
    update_curr(self, c)
    tree_insert(self, c, e)


cdef bint fair_sleep(Engine self, int c, int e) noexcept:
    """dequeue_entity(DEQUEUE_SLEEP) of the running entity: under EEVDF keep its lag,
    clamped to max(2 slices, a tick) of virtual time; with DELAY_DEQUEUE an entity
    that is not eligible stays queued instead (set_delayed()): returns True, and the
    caller puts it back in the heap once it is no longer running (put_prev_entity())."""
    cdef ent_t *ep = &self.ents[e]
    update_curr(self, c)
    if self.fair_policy == POLICY_EEVDF:
        if self.eevdf_delay_dequeue and not entity_eligible(self, c, e):
            ep.sched_delayed = 1
            self.n_delayed_dequeues += 1
            return True
        ep.vlag = entity_lag(self, c, e)
    else:
        clear_buddies(self, c, e)
        update_min_vruntime(self, c, False)
    return False


cdef void finish_delayed_dequeue(Engine self, int c, int e) noexcept:
    """dequeue_entity(DEQUEUE_DELAYED) of a delayed entity in CPU c's heap: its lag
    taken there (update_entity_lag()), then dropped if positive (DELAY_ZERO)."""
    cdef ent_t *ep = &self.ents[e]
    ep.vlag = entity_lag(self, c, e)
    if ep.vlag > 0:
        ep.vlag = 0
    tree_remove(self, c, e)
    ep.sched_delayed = 0


cdef void requeue_delayed_entity(Engine self, int c, int e) noexcept:
    """A delayed entity is woken (ttwu_runnable(), enqueue_task(ENQUEUE_DELAYED)): it
    is runnable where it is; if its lag turned positive meanwhile, DELAY_ZERO places
    it again with none."""
    cdef ent_t *ep = &self.ents[e]
    ep.vlag = entity_lag(self, c, e)
    if ep.vlag > 0:
        tree_remove(self, c, e)
        ep.vlag = 0
        place_entity(self, c, e)
        tree_insert(self, c, e)
    ep.sched_delayed = 0


cdef inline void clear_buddies(Engine self, int c, int e) noexcept:
    """CFS: e is no longer CPU c's next or last buddy (it runs, sleeps or leaves)."""
    cdef cpu_t *cp = &self.cpus[c]
    if cp.next_buddy == e:
        cp.next_buddy = -1
    if cp.last_buddy == e:
        cp.last_buddy = -1


cdef i64 entity_lag(Engine self, int c, int e) noexcept:
    """update_entity_lag(): V minus e's vruntime, clamped to max(2 slices, a tick)
    of e's virtual time."""
    cdef i64 slice = 2 * self.base_slice_ns
    cdef i64 limit = calc_delta_fair(slice if slice > self.jiffy_ns else self.jiffy_ns, self.ents[e].weight)
    return min(max(avg_vruntime(self, c) - self.ents[e].vruntime, -limit), limit)


cdef int pick_eevdf(Engine self, int c, int cur) noexcept:
    """__pick_eevdf(): the eligible entity with the earliest deadline, the running
    one `cur` (if >= 0) among the candidates; it keeps the CPU while eligible and
    inside the request it was picked for (RUN_TO_PARITY)."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef int n = 0, k, i, best = -1, child
    cdef i64 total, load
    eligible_sums(self, c, &total, &load)
    if cur >= 0 and total < (self.ents[cur].vruntime - cp.min_vruntime) * load:  # not entity_eligible()
        cur = -1
    if cur >= 0 and self.ents[cur].vlag == self.ents[cur].deadline:
        return cur
    # Best-first walk of the heap in deadline order: the first eligible one wins.
    if cp.nr_fair:
        self.fscratch[0] = 0
        n = 1
    while n:
        k = 0
        for i in range(1, n):
            if node_before(self, &cp.fh[self.fscratch[i]], &cp.fh[self.fscratch[k]]):
                k = i
        i = self.fscratch[k]
        n -= 1
        self.fscratch[k] = self.fscratch[n]
        if total >= (cp.fh[i].vruntime - cp.min_vruntime) * load:  # entity_eligible()
            best = cp.fh[i].e
            break
        for child in range(2 * i + 1, min(2 * i + 3, cp.nr_fair)):
            self.fscratch[n] = child
            n += 1
    if best < 0 or (cur >= 0 and self.ents[cur].deadline < self.ents[best].deadline):
        return cur if cur >= 0 else best
    return best


cdef bint cfs_wakeup_preempt_entity(Engine self, int cur, int e) noexcept:
    """wakeup_preempt_entity() == 1: cur is more than e's wake-up granularity behind."""
    cdef i64 vdiff = self.ents[cur].vruntime - self.ents[e].vruntime
    return vdiff > calc_delta_fair(self.wakeup_gran_ns, self.ents[e].weight)


cdef int fair_pick(Engine self, int c) noexcept:
    """pick_next_entity() with no running entity; takes it off the queue and
    starts its accounting (set_next_entity())."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef int e, left
    cdef ent_t *ep
    if not cp.nr_fair:
        return -1
    if self.fair_policy == POLICY_EEVDF:
        e = pick_eevdf(self, c, -1)
        while self.ents[e].sched_delayed:
            # pick_next_entity(): a delayed entity picked is dequeued, and the pick is made again.
            finish_delayed_dequeue(self, c, e)
            if not cp.nr_fair:
                return -1
            e = pick_eevdf(self, c, -1)
    else:
        # The leftmost, unless a buddy is not too far behind it: the wakee that
        # preempted (next), else the entity it preempted (last).
        left = cp.fh[0].e
        e = left
        if cp.next_buddy >= 0 and not cfs_wakeup_preempt_entity(self, cp.next_buddy, left):
            e = cp.next_buddy
        elif cp.last_buddy >= 0 and not cfs_wakeup_preempt_entity(self, cp.last_buddy, left):
            e = cp.last_buddy
        clear_buddies(self, c, e)
    tree_remove(self, c, e)
    ep = &self.ents[e]
    ep.exec_start = self.now
    ep.prev_sum_exec = ep.sum_exec
    ep.vlag = ep.deadline  # RUN_TO_PARITY's mark: the request it was picked for
    return e


cdef bint fair_wakeup_preempt(Engine self, int c, int e) noexcept:
    """check_preempt_wakeup(): does the woken (already queued) e preempt the running
    fair entity? Under EEVDF also when the running entity's slice runs out at this
    update_curr()."""
    cdef int cur = fair_curr(self, c)
    cdef bint curr_resched
    if cur < 0:
        return False
    curr_resched = update_curr(self, c)
    if self.fair_policy == POLICY_EEVDF:
        return curr_resched or pick_eevdf(self, c, cur) == e
    if not cfs_wakeup_preempt_entity(self, cur, e):
        return False
    self.cpus[c].next_buddy = e
    if self.cpus[c].nr_fair + 1 >= self.nr_latency:  # LAST_BUDDY when the queue is long
        self.cpus[c].last_buddy = cur
    return True


cdef bint fair_tick_resched(Engine self, int c) noexcept:
    """entity_tick(): does the running fair entity's time on the CPU end here?"""
    cdef cpu_t *cp = &self.cpus[c]
    cdef int cur = fair_curr(self, c), left
    cdef i64 ideal, ran
    if cur < 0:
        return False
    if self.fair_policy == POLICY_EEVDF:
        return update_curr(self, c)
    update_curr(self, c)
    if not cp.nr_fair:
        return False
    # check_preempt_tick()
    ideal = cfs_sched_slice(self, c, cur)
    ran = self.ents[cur].sum_exec - self.ents[cur].prev_sum_exec
    if ran > ideal:
        clear_buddies(self, c, cur)
        return True
    if ran < self.min_gran_ns:
        return False
    left = cp.fh[0].e
    return self.ents[cur].vruntime - self.ents[left].vruntime > ideal
