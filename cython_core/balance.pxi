# Load balancing over the scheduling domains (kernel/sched/fair.c, v6.6):
# newly-idle balancing when a CPU is about to go idle (newidle_balance()),
# periodic balancing from the tick (rebalance_domains()), and balancing on
# behalf of tickless idle CPUs by one of them, kicked by a busy CPU's tick
# (nohz_balancer_kick(), kick_ilb(), _nohz_idle_balance()).  load_balance()
# finds the busiest group and run queue of a domain and pulls queued,
# movable fair entities (can_migrate_task(): allowed here, not a per-CPU
# kthread, not cache-hot unless balancing failed before).  The running entity
# is never pushed (no active balancing).  Fork placement (find_idlest_cpu()) is
# here too: it walks the same groups.
#
# A pass reads one cache line of every run queue it inspects and locks the
# source queue for each pull: its CPU time, from the topology's line costs, is
# what a newidle pass weighs against rq->avg_idle.
#
# The kernel's pass reads every CPU of the domain; rcusim keeps each group's
# sums as its CPUs change (lb_mark(), lb_flush()) and each domain's groups in the
# order a pass over its CPUs meets them, so that a pass costs the simulation its
# groups, not its CPUs, and decides exactly as the kernel's walk does.  Likewise
# nohz.idle_cpus_mask is a bitmap, as in the kernel.
#
# Included by _core.pyx: module-level functions on the Engine.

cdef enum:
    CPU_IDLE_BALANCE = 0     # enum cpu_idle_type: CPU_IDLE
    CPU_NOT_IDLE = 1
    CPU_NEWLY_IDLE = 2
    GROUP_HAS_SPARE = 0      # enum group_type, the three rcusim tells apart
    GROUP_FULLY_BUSY = 1
    GROUP_OVERLOADED = 2
    MIGRATION_COST_NS = 500_000   # sysctl_sched_migration_cost
    BUSY_FACTOR = 16              # sd->busy_factor
    NR_MIGRATE_BREAK = 32         # sysctl_sched_nr_migrate


cdef void balance_init(Engine self) except *:
    """Per CPU and level: struct sched_domain's balancing state; per group: the
    statistics of one pass (struct sg_lb_stats)."""
    cdef int c, lvl, n = self.nr_cpus * 4, ng
    if self.n_unbound == 0 or self.n_levels == 0:
        return
    ng = self.sd_first_n + self.nr_cpus
    self.lb_last = <i64 *> calloc(n, sizeof(i64))
    self.lb_interval = <i64 *> calloc(n, sizeof(i64))
    self.lb_failed = <int32_t *> calloc(n, sizeof(int32_t))
    self.lb_newidle_cost = <i64 *> calloc(n, sizeof(i64))
    self.lb_newidle_decay = <i64 *> calloc(n, sizeof(i64))
    self.lb_newidle_call = <int32_t *> calloc(n, sizeof(int32_t))
    self.lb_newidle_success = <int32_t *> calloc(n, sizeof(int32_t))
    self.lb_newidle_ratio = <int32_t *> calloc(n, sizeof(int32_t))
    self.gs_nr = <int32_t *> calloc(ng, sizeof(int32_t))
    self.gs_idle = <int32_t *> calloc(ng, sizeof(int32_t))
    self.gs_weight = <int32_t *> calloc(ng, sizeof(int32_t))
    self.gs_load = <i64 *> calloc(ng, sizeof(i64))
    self.gs_over = <int32_t *> calloc(ng, sizeof(int32_t))
    self.lb_dirty_cpus = <int32_t *> calloc(self.nr_cpus, sizeof(int32_t))
    self.nohz_idle_mask = <u64 *> calloc((self.nr_cpus + 63) // 64, sizeof(u64))
    self.lb_scan_ns = <i64 *> calloc(n, sizeof(i64))
    if (self.lb_last == NULL or self.lb_interval == NULL or self.lb_failed == NULL
            or self.lb_newidle_cost == NULL or self.lb_newidle_decay == NULL or self.gs_nr == NULL
            or self.gs_idle == NULL or self.gs_weight == NULL or self.gs_load == NULL
            or self.gs_over == NULL or self.lb_dirty_cpus == NULL or self.nohz_idle_mask == NULL
            or self.lb_scan_ns == NULL or self.lb_newidle_call == NULL or self.lb_newidle_success == NULL
            or self.lb_newidle_ratio == NULL):
        raise MemoryError()
    balance_groups_init(self)
    for c in range(self.nr_cpus):
        nohz_idle_update(self, c)
        self.cpus[c].avg_idle = 2 * MIGRATION_COST_NS
        for lvl in range(self.n_levels):
            self.lb_interval[c * 4 + lvl] = sd_weight(self, sd_domain(self, lvl, c))  # sd->min_interval, ms
            self.lb_scan_ns[c * 4 + lvl] = rq_lines_ns(self, sd_domain(self, lvl, c), c)
            # sd_init(): as if half of 512 tries had succeeded
            self.lb_newidle_call[c * 4 + lvl] = 512
            self.lb_newidle_success[c * 4 + lvl] = 256
            self.lb_newidle_ratio[c * 4 + lvl] = 512


cdef void balance_groups_init(Engine self) except *:
    """Each group's CPUs and size; each domain's groups in the order of their first
    CPU, as a pass over the domain's CPUs meets them; every CPU counted in its
    groups' sums at the first pass (lb_flush())."""
    cdef int ng = self.sd_first_n + self.nr_cpus, nd = self.sd_first_n, total = self.sd_first[nd]
    cdef int d, g, c, i, lvl, k = 0
    cdef int32_t *level = <int32_t *> malloc(nd * sizeof(int32_t))
    cdef int32_t *seen = <int32_t *> malloc(ng * sizeof(int32_t))
    self.grp_cpus = <int32_t *> malloc((total + self.nr_cpus) * sizeof(int32_t))
    self.grp_first = <int32_t *> malloc((ng + 1) * sizeof(int32_t))
    self.sd_groups = <int32_t *> malloc(total * sizeof(int32_t))
    self.sd_groups_first = <int32_t *> malloc((nd + 1) * sizeof(int32_t))
    if (level == NULL or seen == NULL or self.grp_cpus == NULL or self.grp_first == NULL
            or self.sd_groups == NULL or self.sd_groups_first == NULL):
        free(level)
        free(seen)
        raise MemoryError()
    for i in range(total):
        self.grp_cpus[i] = self.sd_cpus[i]
    for d in range(nd):
        self.grp_first[d] = self.sd_first[d]
    for c in range(self.nr_cpus):
        self.grp_cpus[total + c] = c
        self.grp_first[nd + c] = total + c
    self.grp_first[ng] = total + self.nr_cpus
    for g in range(ng):
        self.gs_weight[g] = self.grp_first[g + 1] - self.grp_first[g]
        seen[g] = -1
    for lvl in range(self.n_levels):
        for c in range(self.nr_cpus):
            level[sd_domain(self, lvl, c)] = lvl
    for d in range(nd):
        self.sd_groups_first[d] = k
        for i in range(self.sd_first[d], self.sd_first[d + 1]):
            g = group_of(self, level[d], self.sd_cpus[i])
            if seen[g] != d:
                seen[g] = d
                self.sd_groups[k] = g
                k += 1
    self.sd_groups_first[nd] = k
    free(level)
    free(seen)
    self.n_lb_dirty = 0
    for c in range(self.nr_cpus):
        self.cpus[c].lb_dirty = 0
        lb_mark(self, c)


cdef inline void lb_mark(Engine self, int c) noexcept:
    """CPU c's runnable count, idleness or load may have changed: the group sums
    take it at the next balancing pass."""
    if not self.cpus[c].lb_dirty:
        self.cpus[c].lb_dirty = 1
        self.lb_dirty_cpus[self.n_lb_dirty] = c
        self.n_lb_dirty += 1


cdef void lb_flush(Engine self) noexcept:
    """Carry the marked CPUs' changes into the sums of every group holding them, so
    that a pass reads a domain's groups, not each of its CPUs.  (The kernel's
    update_sd_lb_stats() reads every CPU: what that costs the balancing CPU is
    charged all the same, lb_scan_ns.)"""
    cdef int k, c, g, lvl, d, nr
    cdef int32_t dn, di, do
    cdef i64 dl
    for k in range(self.n_lb_dirty):
        c = self.lb_dirty_cpus[k]
        self.cpus[c].lb_dirty = 0
        g = self.sd_first_n + c
        nr = nr_running(self, c)
        dn = nr - self.gs_nr[g]
        di = available_idle_cpu(self, c) - self.gs_idle[g]
        do = (nr > 1) - self.gs_over[g]
        dl = cpu_load(self, c) - self.gs_load[g]
        if dn == 0 and di == 0 and do == 0 and dl == 0:
            continue
        for lvl in range(-1, self.n_levels):
            d = g if lvl < 0 else sd_domain(self, lvl, c)
            self.gs_nr[d] += dn
            self.gs_idle[d] += di
            self.gs_over[d] += do
            self.gs_load[d] += dl
    self.n_lb_dirty = 0


cdef int lb_sums_wrong(Engine self) noexcept:
    """After lb_flush(): the first group whose sums differ from its CPUs' values, -1 if none."""
    cdef int g, i, c, nr, idle, over
    cdef i64 load
    for g in range(self.sd_first_n + self.nr_cpus):
        nr = idle = over = 0
        load = 0
        for i in range(self.grp_first[g], self.grp_first[g + 1]):
            c = self.grp_cpus[i]
            nr += nr_running(self, c)
            idle += available_idle_cpu(self, c)
            over += nr_running(self, c) > 1
            load += cpu_load(self, c)
        if nr != self.gs_nr[g] or idle != self.gs_idle[g] or over != self.gs_over[g] or load != self.gs_load[g]:
            return g
    return -1


cdef i64 rq_lines_ns(Engine self, int d, int this_cpu) noexcept:
    """What reading one line of every other run queue of domain d costs this_cpu."""
    cdef int i
    cdef i64 cost = 0
    for i in range(self.sd_first[d], self.sd_first[d + 1]):
        if self.sd_cpus[i] != this_cpu:
            cost += line_cost(self, this_cpu, self.sd_cpus[i])
    return cost


cdef inline int group_of(Engine self, int level, int c) noexcept:
    """The group of CPU c in its domain at `level`: the child domain, or c itself."""
    return sd_domain(self, level - 1, c) if level > 0 else self.sd_first_n + c


cdef inline int group_type(Engine self, int g) noexcept:
    if self.gs_nr[g] < self.gs_weight[g]:
        return GROUP_HAS_SPARE
    return GROUP_OVERLOADED if self.gs_nr[g] > self.gs_weight[g] else GROUP_FULLY_BUSY


cdef inline i64 group_avg_load(Engine self, int g) noexcept:
    return self.gs_load[g] // self.gs_weight[g]


cdef i64 update_sd_lb_stats(Engine self, int level, int this_cpu) noexcept:
    """Each group's runnable count, idle CPUs and load in this_cpu's domain at `level`
    (gs_*); returns the CPU time of reading every other run queue's line."""
    lb_flush(self)
    return self.lb_scan_ns[this_cpu * 4 + level]


cdef int group_cores(Engine self, int level, int g) noexcept:
    """The cores of a group: its CPUs divided among their SMT siblings."""
    if not self.smt_active or level == 0:
        return self.gs_weight[g]
    if level == 1:
        return 1  # the group is one core
    return max(self.gs_weight[g] // 2, 1)


cdef bint should_we_balance(Engine self, int level, int c) noexcept:
    """Only one CPU of the local group balances a domain: its first idle CPU
    (preferring a whole idle core), or its first CPU if none is idle."""
    cdef int d, i, x, idle_smt = -1
    if level == 0:
        return True
    d = sd_domain(self, level - 1, c)
    for i in range(self.sd_first[d], self.sd_first[d + 1]):
        x = self.sd_cpus[i]
        if not available_idle_cpu(self, x):
            continue
        if self.smt_active and not core_idle(self, x):
            if idle_smt < 0:
                idle_smt = x
            continue
        return x == c
    if idle_smt >= 0:
        return idle_smt == c
    return self.sd_cpus[self.sd_first[d]] == c


cdef bint core_idle(Engine self, int c) noexcept:
    cdef int d = sd_domain(self, 0, c), i
    for i in range(self.sd_first[d], self.sd_first[d + 1]):
        if not available_idle_cpu(self, self.sd_cpus[i]):
            return False
    return True


cdef bint can_migrate_task(Engine self, int e, int level, int dst) noexcept:
    """Allowed on dst, not bound to one CPU, not cache-hot (it ran within
    sysctl_sched_migration_cost) unless this domain failed to balance before."""
    cdef ent_t *ep = &self.ents[e]
    cdef int c = dst * 4 + level
    if ep.aff < 0 or not cpu_allowed(self, e, dst) or not is_fair(self, e):
        return False
    if self.smt_active and level == 0:
        return True  # SD_SHARE_CPUCAPACITY: siblings share the caches
    if self.now - ep.exec_start >= MIGRATION_COST_NS:
        return True
    return self.lb_failed[c] > self.sd_cache_nice_tries[level]


cdef void detach_attach(Engine self, int e, int src, int dst) except *:
    """Take a queued fair entity off src's run queue and queue it on dst's
    (dequeue_entity(), set_task_cpu(), enqueue_entity() with ENQUEUE_MIGRATED)."""
    cdef ent_t *ep = &self.ents[e]
    cdef i64 rel_deadline = 0
    cdef bint src_resched, dst_resched
    rq_account(self, src)
    src_resched = update_curr(self, src)
    if self.fair_policy == POLICY_EEVDF:
        ep.vlag = entity_lag(self, src, e)
        rel_deadline = ep.deadline - ep.vruntime  # PLACE_REL_DEADLINE: dequeued without sleeping
    else:
        clear_buddies(self, src, e)
    tree_remove(self, src, e)
    self.cpus[src].nr_queued -= 1
    lb_mark(self, src)
    if self.trace_on:
        trace(self, self.now, TR_MIGRATE, dst, e, 0, src, dst)  # set_task_cpu()'s sched_migrate_task
    set_task_cpu(self, e, dst)
    rq_account(self, dst)
    dst_resched = update_curr(self, dst)
    if self.fair_policy == POLICY_EEVDF:
        place_entity(self, dst, e)
        if self.eevdf_rel_deadline:
            ep.deadline = ep.vruntime + rel_deadline  # place_entity()'s se->deadline += se->vruntime
    tree_insert(self, dst, e)
    self.cpus[dst].nr_queued += 1
    lb_mark(self, dst)
    if nr_running(self, dst) >= 2:
        self.rd_overload = 1
    check_preempt_or_kick(self, dst, e, dst_resched)
    if src_resched and self.cpus[src].state == CPU_BUSY:
        resched_fair(self, src)  # the dequeue's update_curr() on src: resched_curr() of its running entity


cdef int detach_tasks(Engine self, int src, int dst, int level, int idle_type, i64 imbalance,
                      bint by_load, i64 *cost) except -1:
    """Pull up to `imbalance` entities (or that much load) from src to dst, from the
    tail of src's cfs_tasks (the least recently queued first: enqueue order), at
    most NR_MIGRATE_BREAK looked at; a newly idle CPU of a preemptible kernel
    stops after the first."""
    cdef cpu_t *sp = &self.cpus[src]
    cdef int moved = 0, looked = 0, i, best
    cdef int loop_max = min(NR_MIGRATE_BREAK, nr_running(self, src))
    cdef u64 after = 0, best_seq = 0
    cdef i64 load
    while looked < loop_max and imbalance > 0:
        if idle_type != CPU_NOT_IDLE and nr_running(self, src) <= 1:
            break  # leave the source its last entity
        best = -1
        for i in range(sp.nr_fair):
            if sp.fh[i].seq > after and (best < 0 or sp.fh[i].seq < best_seq):
                best = sp.fh[i].e
                best_seq = sp.fh[i].seq
        if best < 0:
            break
        after = best_seq
        looked += 1
        if self.ents[best].sched_delayed or not can_migrate_task(self, best, level, dst):
            continue
        if by_load:
            load = self.ents[best].weight
            if (load >> min(self.lb_failed[dst * 4 + level], 62)) > imbalance:
                continue
            imbalance -= load
        else:
            imbalance -= 1
        cost[0] += 2 * line_cost(self, dst, src)  # double_rq_lock()
        detach_attach(self, best, src, dst)
        moved += 1
        if idle_type == CPU_NEWLY_IDLE and self.preemption:
            break
    return moved


cdef int find_busiest_group(Engine self, int d, int level, int this_cpu, int idle_type,
                            i64 *imbalance, bint *by_load) noexcept:
    """The busiest group of domain d other than this CPU's, if pulling from it
    balances the domain (find_busiest_group(), calculate_imbalance()); -1 if the
    domain is balanced.  Sets the amount to move: tasks, or load with *by_load."""
    cdef int local = group_of(self, level, this_cpu), busiest = -1, g, i, t, bt, lt, nl, nb
    cdef i64 total_load = 0, avg, imb, bl, ll
    for i in range(self.sd_groups_first[d], self.sd_groups_first[d + 1]):
        g = self.sd_groups[i]
        total_load += self.gs_load[g]
        if g == local:
            continue
        if busiest < 0:
            busiest = g
            continue
        t = group_type(self, g)
        bt = group_type(self, busiest)
        if t > bt:
            busiest = g
        elif t == bt:
            if t == GROUP_HAS_SPARE:
                if (self.gs_idle[g] < self.gs_idle[busiest]
                        or (self.gs_idle[g] == self.gs_idle[busiest] and self.gs_nr[g] > self.gs_nr[busiest])):
                    busiest = g
            elif group_avg_load(self, g) > group_avg_load(self, busiest):
                busiest = g
    if busiest < 0 or self.gs_nr[busiest] == 0:
        return -1
    lt = group_type(self, local)
    bt = group_type(self, busiest)
    if lt > bt:
        return -1
    by_load[0] = False
    if lt == GROUP_HAS_SPARE:
        if bt != GROUP_OVERLOADED:
            if idle_type == CPU_NOT_IDLE:
                return -1
            if self.gs_weight[busiest] > 1 and self.gs_idle[local] <= self.gs_idle[busiest] + 1:
                return -1
            if self.gs_nr[busiest] == 1:
                return -1
        if bt == GROUP_OVERLOADED and level > self.llc_level:
            # migrate_util across LLCs: fill the local group's spare capacity
            # (rcusim counts each entity a whole CPU's utilisation).
            imbalance[0] = max(self.gs_idle[local], 1)
            return busiest
        # sibling_imbalance(): even out runnable entities per core.
        if idle_type == CPU_NOT_IDLE:
            return -1
        nl = group_cores(self, level, local)
        nb = group_cores(self, level, busiest)
        if nl == nb:
            imb = max(self.gs_nr[busiest] - self.gs_nr[local], 0)
        else:
            imb = max(<i64> nl * self.gs_nr[busiest] - <i64> nb * self.gs_nr[local], 0)
            imb = (2 * imb + nl + nb) // (nl + nb)
            if imb <= 1 and self.gs_nr[local] == 0 and self.gs_nr[busiest] > 1:
                imb = 2
        imbalance[0] = imb >> 1
        return busiest if imbalance[0] > 0 else -1
    # Both busy: move load toward the domain's average (migrate_load).
    avg = total_load // sd_weight(self, d)
    ll = group_avg_load(self, local)
    bl = group_avg_load(self, busiest)
    if ll >= avg or bl <= avg or 100 * bl <= self.sd_imbalance_pct[level] * ll:
        return -1
    by_load[0] = True
    imbalance[0] = min((bl - avg) * self.gs_weight[busiest], (avg - ll) * self.gs_weight[local])
    return busiest if imbalance[0] > 0 else -1


cdef int find_busiest_queue(Engine self, int group, bint by_load, i64 imbalance) noexcept:
    """The CPU of the busiest group to pull from: most runnable fair entities, or
    the highest load (skipping a lone entity heavier than the imbalance)."""
    cdef int i, c, busiest = -1, nr
    cdef i64 most = 0, v
    for i in range(self.grp_first[group], self.grp_first[group + 1]):
        c = self.grp_cpus[i]
        nr = self.cpus[c].nr_fair + (1 if fair_curr(self, c) >= 0 else 0)
        if nr == 0:
            continue
        v = nr
        if by_load:
            v = cpu_load(self, c)
            if nr == 1 and v > imbalance:
                continue
        if v > most:
            most = v
            busiest = c
    return busiest


cdef int load_balance(Engine self, int c, int level, int idle_type, bint *cont, i64 *cost) except -1:
    """One pass over c's domain at `level`; returns the entities pulled to c."""
    cdef int d = sd_domain(self, level, c), group, src, moved = 0, k = c * 4 + level
    cdef i64 imbalance = 0
    cdef bint by_load = False
    if not should_we_balance(self, level, c):
        cont[0] = False
        return 0
    cost[0] += update_sd_lb_stats(self, level, c)
    if level == self.n_levels - 1:
        self.rd_overload = self.gs_over[d] > 0
    if self.llc_level == level and idle_type != CPU_NEWLY_IDLE:
        update_idle_cpu_scan(self, d)
    group = find_busiest_group(self, d, level, c, idle_type, &imbalance, &by_load)
    src = find_busiest_queue(self, group, by_load, imbalance) if group >= 0 else -1
    if src >= 0 and src != c:
        moved = detach_tasks(self, src, c, level, idle_type, imbalance, by_load, cost)
    if idle_type == CPU_NEWLY_IDLE:
        return moved
    self.n_migrations_balance += moved
    if group < 0:
        # Balanced: balance this domain less often, up to max_interval.
        self.lb_failed[k] = 0
        if self.lb_interval[k] < 2 * sd_weight(self, d):
            self.lb_interval[k] *= 2
    else:
        self.lb_failed[k] = 0 if moved else self.lb_failed[k] + 1
        self.lb_interval[k] = sd_weight(self, d)
    return moved


cdef void update_idle_cpu_scan(Engine self, int d) noexcept:
    """SIS_UTIL: how many CPUs select_idle_cpu() may scan in this LLC, fewer the
    busier it is (none from about 85 % utilisation): its CPUs' PELT utilisation."""
    cdef int i, c, w = sd_weight(self, d)
    cdef i64 util = 0, x, tmp, pct = self.sd_imbalance_pct[self.llc_level]
    for i in range(self.sd_first[d], self.sd_first[d + 1]):
        c = self.sd_cpus[i]
        update_cpu_util(self, c)
        util += min(self.pelt[c].util_avg, 1024)  # cpu_util_cfs(), at most the CPU's capacity
    x = util // w
    tmp = min(x * x * pct * pct // (10000 * 1024), 1024)
    self.sd_nr_idle_scan[d] = <int32_t> ((1024 - tmp) * w // 1024)


cdef i64 balance_interval(Engine self, int c, int level, bint busy) noexcept:
    """get_sd_balance_interval() in jiffies: balance_interval ms, times busy_factor
    (less one jiffy) on a busy CPU, at least one jiffy."""
    cdef i64 ms = self.lb_interval[c * 4 + level], hz = 1_000_000_000 // self.jiffy_ns, j
    if busy:
        ms *= BUSY_FACTOR
    j = (ms * hz + 999) // 1000  # msecs_to_jiffies() rounds up
    if busy:
        j -= 1
    return max(j, 1)


cdef void rebalance_domains(Engine self, int c, int idle_type) except *:
    """Each domain of c whose interval has passed, lowest first; then when c is due next."""
    cdef int level, k
    cdef i64 j = jiffies(self), interval, next_balance = j + 60 * 1_000_000_000 // self.jiffy_ns
    cdef bint cont = True, busy = idle_type != CPU_IDLE_BALANCE
    cdef i64 cost = 0
    for level in range(self.n_levels):
        k = c * 4 + level
        interval = balance_interval(self, c, level, busy)
        if j >= self.lb_last[k] + interval:
            if load_balance(self, c, level, idle_type, &cont, &cost):
                idle_type = CPU_NOT_IDLE
                busy = True
            self.lb_last[k] = j
            interval = balance_interval(self, c, level, busy)
        next_balance = min(next_balance, self.lb_last[k] + interval)
        if not cont:
            break
    self.cpus[c].next_balance = next_balance
    if self.cpus[c].state == CPU_BUSY:
        steal(self, c, cost)  # SCHED_SOFTIRQ on this CPU


cdef void update_newidle_stats(Engine self, int k, int success) noexcept:
    """A newidle try of domain k: its calls and successes, halved every 1,024 calls, whose
    successes then become its ratio (update_newidle_stats())."""
    self.lb_newidle_call[k] += 1
    self.lb_newidle_success[k] += success
    if self.lb_newidle_call[k] >= 1024:
        self.lb_newidle_ratio[k] = self.lb_newidle_success[k]
        self.lb_newidle_call[k] //= 2
        self.lb_newidle_success[k] //= 2


cdef bint newidle_balance(Engine self, int c) except -1:
    """A CPU about to go idle pulls work, domain by domain while its average idle
    time covers what balancing has cost there (sched_balance_newidle()); from v6.19
    (NI_RANDOM) it tries each domain as often as that has succeeded lately."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef int level, k, moved = 0, weight
    cdef i64 curr_cost = 0, cost, j = jiffies(self), hz = 1_000_000_000 // self.jiffy_ns
    cdef bint cont = True
    cp.idle_stamp = self.now
    if (not self.rd_overload or cp.avg_idle < self.lb_newidle_cost[c * 4]
            or (not self.newidle_lb_cost_only and cp.avg_idle < MIGRATION_COST_NS)):
        return False
    for level in range(self.n_levels):
        k = c * 4 + level
        if cp.avg_idle < curr_cost + self.lb_newidle_cost[k]:
            break
        weight = 1
        if self.newidle_proportional:
            # A 1k-sided die against the success ratio; a success counts by its odds' inverse.
            weight = 1 + self.lb_newidle_ratio[k]
            if <int> (random_u32(self) % 1024) > weight:
                update_newidle_stats(self, k, 0)
                self.n_newidle_skipped += 1
                continue
            weight = (1024 + weight // 2) // weight
        cost = 0
        self.n_newidle_tries += 1
        moved = load_balance(self, c, level, CPU_NEWLY_IDLE, &cont, &cost)
        # update_newidle_cost(): the domain's costliest pass, decaying by 1 % a second.
        if self.newidle_proportional and cost:
            update_newidle_stats(self, k, weight * (moved > 0))
        if cost > self.lb_newidle_cost[k]:
            self.lb_newidle_cost[k] = cost
            self.lb_newidle_decay[k] = j + hz
        elif j > self.lb_newidle_decay[k]:
            self.lb_newidle_cost[k] = self.lb_newidle_cost[k] * 253 // 256
            self.lb_newidle_decay[k] = j + hz
        curr_cost += cost
        if moved or cp.nr_queued or cp.ttwu_pending:
            break
    cp.debt += curr_cost
    if moved:
        cp.idle_stamp = 0
        self.n_migrations_newidle += moved
    return moved > 0


cdef void update_avg_idle(Engine self, int c) noexcept:
    """A wake-up ends c's idle period: fold it into rq->avg_idle (1/8 weight),
    capped at twice the costliest balance (max_idle_balance_cost)."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 most = MIGRATION_COST_NS, delta
    cdef int level
    if cp.idle_stamp == 0:
        return
    for level in range(self.n_levels):
        most = max(most, self.lb_newidle_cost[c * 4 + level])
    delta = self.now - cp.idle_stamp
    cp.avg_idle += (delta - cp.avg_idle) // 8
    cp.avg_idle = min(cp.avg_idle, 2 * most)
    cp.idle_stamp = 0


cdef inline void nohz_idle_update(Engine self, int c) noexcept:
    """Keep c's bit of nohz.idle_cpus_mask: set while c is idle with its tick stopped
    (nohz_balance_enter_idle()), clear otherwise."""
    cdef u64 bit = (<u64> 1) << (c & 63)
    if self.nohz_idle_mask == NULL:
        return
    if self.cpus[c].state == CPU_IDLE and not self.cpus[c].tick_on:
        self.nohz_idle_mask[c >> 6] |= bit
    else:
        self.nohz_idle_mask[c >> 6] &= ~bit


cdef int nohz_idle_next(Engine self, int c) noexcept:
    """The first CPU from c on in nohz.idle_cpus_mask; nr_cpus if none."""
    cdef int w = c >> 6, nw = (self.nr_cpus + 63) >> 6
    cdef u64 m
    if c >= self.nr_cpus:
        return self.nr_cpus
    m = self.nohz_idle_mask[w] & (~(<u64> 0) << (c & 63))
    while not m:
        w += 1
        if w >= nw:
            return self.nr_cpus
        m = self.nohz_idle_mask[w]
    return (w << 6) + ctz64(m)


cdef int find_new_ilb(Engine self) noexcept:
    """The first CPU of nohz.idle_cpus_mask that is idle_cpu(); -1 if none."""
    cdef int c = nohz_idle_next(self, 0)
    while c < self.nr_cpus:
        if available_idle_cpu(self, c):
            return c
        c = nohz_idle_next(self, c + 1)
    return -1


cdef void nohz_balancer_kick(Engine self, int c) noexcept:
    """From a busy CPU's tick: if it has more than one runnable entity, or its LLC
    more than one busy CPU, IPI the first tickless idle CPU to balance for all."""
    cdef int i, ilb = -1, busy = 0, d
    cdef i64 j = jiffies(self)
    if j < self.nohz_next_balance:
        return
    if nr_running(self, c) < 2:
        if self.llc_level < 0:
            return
        d = sd_domain(self, self.llc_level, c)
        for i in range(self.sd_first[d], self.sd_first[d + 1]):
            if self.cpus[self.sd_cpus[i]].tick_on:
                busy += 1
        if busy <= 1:
            return
    ilb = find_new_ilb(self)
    if ilb < 0:
        return
    self.nohz_next_balance = j + 1
    self.n_nohz_kicks += 1
    push(self, self.now + self.ipi_latency_ns, PRIO_NORMAL, EV_NOHZ_ILB, ilb, 0)


cdef void ev_nohz_ilb(Engine self, int c) except *:
    """_nohz_idle_balance(): balance every tickless idle CPU that is due, on its
    behalf, starting after c and ending with c; stop if c got work of its own."""
    cdef int j
    cdef i64 jf = jiffies(self)
    if self.cpus[c].state != CPU_IDLE:
        return
    j = ilb_next(self, c, c)
    while True:
        if nr_running(self, c) > 0:
            return
        if jf >= self.cpus[j].next_balance:
            rebalance_domains(self, j, CPU_IDLE_BALANCE)
        if j == c:
            return
        j = ilb_next(self, j, c)


cdef int ilb_next(Engine self, int j, int c) noexcept:
    """After j, the next CPU of nohz.idle_cpus_mask in _nohz_idle_balance()'s walk
    from c + 1 round to c; c itself, whatever its bit, ends the walk."""
    if j >= c:
        j = nohz_idle_next(self, j + 1)
        if j < self.nr_cpus:
            return j
        j = -1
    j = nohz_idle_next(self, j + 1)
    return j if j < c else c


cdef int find_idlest_cpu(Engine self, int e, int cpu) noexcept:
    """Fork placement (WF_FORK) from the top domain down: the idlest group, then its
    idlest CPU, down to the lowest level."""
    cdef int level = self.n_levels - 1, d, g, new_cpu
    while level >= 0:
        d = sd_domain(self, level, cpu)
        update_sd_lb_stats(self, level, cpu)
        g = find_idlest_group(self, d, level, e, cpu)
        if g >= 0:
            new_cpu = find_idlest_group_cpu(self, g, e)
            if new_cpu >= 0:
                cpu = new_cpu
        level -= 1
    return cpu


cdef int find_idlest_group(Engine self, int d, int level, int e, int this_cpu) noexcept:
    """The least busy group of domain d where e may run; -1 to stay in the local group.
    Among equally idle groups, the one whose first CPU allowed to e comes first."""
    cdef int local = group_of(self, level, this_cpu), idlest = -1, i, k, g, first, idlest_first = 0, it, lt
    for i in range(self.sd_groups_first[d], self.sd_groups_first[d + 1]):
        g = self.sd_groups[i]
        if g == local:
            continue
        first = -1
        for k in range(self.grp_first[g], self.grp_first[g + 1]):
            if cpu_allowed(self, e, self.grp_cpus[k]):
                first = self.grp_cpus[k]
                break
        if first < 0:
            continue
        if (idlest < 0 or idler_group(self, g, idlest)
                or (first < idlest_first and not idler_group(self, idlest, g))):
            idlest = g
            idlest_first = first
    if idlest < 0:
        return -1
    lt = group_type(self, local)
    it = group_type(self, idlest)
    if lt != it:
        return idlest if lt > it else -1
    if lt == GROUP_HAS_SPARE:
        return idlest if self.gs_idle[local] < self.gs_idle[idlest] else -1
    if (group_avg_load(self, idlest) >= group_avg_load(self, local)
            or 100 * group_avg_load(self, local) <= self.sd_imbalance_pct[level] * group_avg_load(self, idlest)):
        return -1
    return idlest


cdef bint idler_group(Engine self, int g, int h) noexcept:
    """Group g is less busy than h: a lesser group_type, then more idle CPUs and
    fewer runnable entities if they have spare CPUs, else a lesser average load."""
    cdef int t = group_type(self, g), u = group_type(self, h)
    if t != u:
        return t < u
    if t == GROUP_HAS_SPARE:
        return self.gs_idle[g] > self.gs_idle[h] or (self.gs_idle[g] == self.gs_idle[h] and self.gs_nr[g] < self.gs_nr[h])
    return group_avg_load(self, g) < group_avg_load(self, h)


cdef int find_idlest_group_cpu(Engine self, int g, int e) noexcept:
    """In group g: an idle CPU in the shallowest idle state (the most recently
    idled among equals), else the least loaded CPU."""
    cdef int i, c, best_idle = -1, least = -1
    cdef i64 min_load = 0, exit_us = 0, stamp = 0, x
    for i in range(self.grp_first[g], self.grp_first[g + 1]):
        c = self.grp_cpus[i]
        if not cpu_allowed(self, e, c):
            continue
        if available_idle_cpu(self, c):
            x = self.idle_exit_us[self.menu[c].state] if self.n_idle_states else 0
            if best_idle < 0 or x < exit_us or (x == exit_us and self.cpus[c].idle_stamp > stamp):
                best_idle = c
                exit_us = x
                stamp = self.cpus[c].idle_stamp
        elif least < 0 or cpu_load(self, c) < min_load:
            least = c
            min_load = cpu_load(self, c)
    return best_idle if best_idle >= 0 else least


cdef void trigger_load_balance(Engine self, int c) except *:
    """From each tick: the periodic balance once c is due, and from a busy CPU the
    nohz idle-balance kick."""
    cdef cpu_t *cp = &self.cpus[c]
    if jiffies(self) >= cp.next_balance:
        rebalance_domains(self, c, CPU_NOT_IDLE if cp.state == CPU_BUSY else CPU_IDLE_BALANCE)
    if cp.state == CPU_BUSY:
        nohz_balancer_kick(self, c)
