# Where a waking fair task runs (kernel/sched/fair.c, v6.6: select_task_rq_fair(),
# record_wakee(), wake_wide(), wake_affine(), select_idle_sibling()) and moving
# an entity to another CPU (set_task_cpu()).  Only entities with an affinity
# mask (ent_t.aff >= 0) move; with none, nothing here runs and every entity
# keeps its CPU, as before the scheduler could migrate.
#
# A CPU's load is the weight of its runnable fair entities (cfs_rq->load.weight)
# where the kernel uses PELT's decaying average load_avg, and a sleeping wakee's
# weight counts on its previous CPU as its blocked load does. An LLC's utilisation
# for SIS_UTIL is PELT's, each CPU's util_avg (pelt.pxi).
#
# Included by _core.pyx: module-level functions on the Engine.


cdef enum:
    HK_KTHREAD_MASK = 0  # housekeeping_cpumask(HK_TYPE_KTHREAD)


cdef void placement_init(Engine self, s) except *:
    """The scheduling domains (rcusim.kernel.sched_domains) and the affinity masks."""
    cdef int i, n, nd
    self.n_unbound = 0
    affinity_init(self, s.aff_masks)
    self.n_levels = len(s.sd_imbalance_pct)
    self.llc_level = -1
    self.smt_active = 0
    if self.n_levels == 0:
        return
    nd = len(s.sd_first) - 1
    self.sd_first_n = nd
    n = self.n_levels * self.nr_cpus
    self.sd_of = <int32_t *> malloc(n * sizeof(int32_t))
    self.sd_cpus = <int32_t *> malloc(len(s.sd_cpus) * sizeof(int32_t))
    self.sd_first = <int32_t *> malloc((nd + 1) * sizeof(int32_t))
    self.sd_has_idle_cores = <int8_t *> calloc(nd, sizeof(int8_t))
    self.sd_nr_idle_scan = <int32_t *> calloc(nd, sizeof(int32_t))
    if (self.sd_of == NULL or self.sd_cpus == NULL or self.sd_first == NULL
            or self.sd_has_idle_cores == NULL or self.sd_nr_idle_scan == NULL):
        raise MemoryError()
    for i in range(n):
        self.sd_of[i] = s.sd_of[i]
    for i in range(len(s.sd_cpus)):
        self.sd_cpus[i] = s.sd_cpus[i]
    for i in range(nd + 1):
        self.sd_first[i] = s.sd_first[i]
    for i in range(self.n_levels):
        self.sd_imbalance_pct[i] = s.sd_imbalance_pct[i]
        self.sd_cache_nice_tries[i] = s.sd_cache_nice_tries[i]
        if s.sd_shares_llc[i]:
            self.llc_level = i
    self.smt_active = int(s.sd_smt)
    self.newidle_lb_cost_only = s.newidle_lb_cost_only
    self.newidle_proportional = s.newidle_proportional
    # The machine starts idle: every core idle, and SIS_UTIL's scan depth that of an
    # idle LLC (as its idle CPUs' periodic balancing leaves it).
    for i in range(nd):
        self.sd_has_idle_cores[i] = self.smt_active
        self.sd_nr_idle_scan[i] = sd_weight(self, i)


cdef void affinity_init(Engine self, masks) except *:
    """The allowed-CPU masks entities refer to by ent_t.aff (a (masks, nr_cpus) array;
    mask HK_KTHREAD_MASK is the unbound kthreads' housekeeping set)."""
    cdef int i, c
    if len(masks) == 0:
        return
    self.aff_mask = <uint8_t *> malloc(len(masks) * self.nr_cpus * sizeof(uint8_t))
    if self.aff_mask == NULL:
        raise MemoryError()
    for i in range(len(masks)):
        for c in range(self.nr_cpus):
            self.aff_mask[i * self.nr_cpus + c] = masks[i][c]


cdef inline bint cpu_allowed(Engine self, int e, int c) noexcept:
    """c in p->cpus_ptr."""
    cdef int aff = self.ents[e].aff
    if aff < 0:
        return c == self.ents[e].cpu
    return self.aff_mask[aff * self.nr_cpus + c] != 0


cdef inline int sd_domain(Engine self, int level, int c) noexcept:
    return self.sd_of[level * self.nr_cpus + c]


cdef inline int sd_weight(Engine self, int d) noexcept:
    """sd->span_weight."""
    return self.sd_first[d + 1] - self.sd_first[d]


cdef inline bint cpus_share_cache(Engine self, int a, int b) noexcept:
    return a == b or self.cpu_llc[a] == self.cpu_llc[b]


cdef inline int nr_running(Engine self, int c) noexcept:
    """rq->nr_running: queued entities and the running one."""
    cdef cpu_t *cp = &self.cpus[c]
    return cp.nr_queued + (1 if cp.state != CPU_IDLE and cp.curr >= 0 else 0)


cdef inline bint available_idle_cpu(Engine self, int c) noexcept:
    """Idle, nothing queued, no wake-up on its way (rq->ttwu_pending)."""
    cdef cpu_t *cp = &self.cpus[c]
    return cp.state == CPU_IDLE and cp.nr_queued == 0 and cp.ttwu_pending == 0


cdef inline i64 cpu_load(Engine self, int c) noexcept:
    """The weight of CPU c's runnable fair entities (see the note at the top)."""
    cdef int e = fair_curr(self, c)
    return self.cpus[c].avg_load + (self.ents[e].weight if e >= 0 else 0)


cdef inline bint is_per_cpu_kthread(Engine self, int e) noexcept:
    """A kthread bound to one CPU: bound-pool kworkers, rcuc/ksoftirqd, krcud, noise,
    and a module's kthread pinned to its CPU (rcuscale's writers)."""
    cdef int kind = self.ents[e].kind
    return ((kind == ENT_KWORKER and self.ents[e].aff < 0) or kind == ENT_SR_WORKER or kind == ENT_RCUC
            or kind == ENT_KRCUD or kind == ENT_NOISE
            or (kind == ENT_TASK and self.ents[e].kthread and self.ents[e].aff < 0))


cdef void record_wakee(Engine self, int waker, int e) noexcept:
    """The waker's wakee_flips: how often it switches between the tasks it wakes,
    halved once if a second has passed since the last decay."""
    cdef ent_t *wp = &self.ents[waker]
    cdef i64 j = jiffies(self)
    if j > wp.wakee_flip_decay_ts + 1_000_000_000 // self.jiffy_ns:
        wp.wakee_flips >>= 1
        wp.wakee_flip_decay_ts = j
    if wp.last_wakee != e:
        wp.last_wakee = e
        wp.wakee_flips += 1


cdef bint wake_wide(Engine self, int waker, int e, int this_cpu) noexcept:
    """One waker feeding many wakees (both flip often, one llc_size times more):
    do not pull them all to the waker's LLC."""
    cdef int factor = 1, master, slave
    if self.llc_level >= 0:
        factor = sd_weight(self, sd_domain(self, self.llc_level, this_cpu))
    master = self.ents[waker].wakee_flips
    slave = self.ents[e].wakee_flips
    if master < slave:
        master, slave = slave, master
    return not (slave < factor or master < slave * factor)


cdef int wake_affine(Engine self, int level, int e, int this_cpu, int prev) noexcept:
    """The waker's CPU or the wakee's previous one (wake_affine_idle(), then
    wake_affine_weight() with equal capacities; complete() wakes without WF_SYNC)."""
    cdef i64 this_eff, prev_eff
    if available_idle_cpu(self, this_cpu) and cpus_share_cache(self, this_cpu, prev):
        return prev if available_idle_cpu(self, prev) else this_cpu
    if available_idle_cpu(self, prev):
        return prev
    this_eff = (cpu_load(self, this_cpu) + self.ents[e].weight) * 100
    prev_eff = cpu_load(self, prev) * (100 + (self.sd_imbalance_pct[level] - 100) // 2)
    return this_cpu if this_eff < prev_eff else prev


cdef int select_idle_smt(Engine self, int e, int prev) noexcept:
    """An idle SMT sibling of prev."""
    cdef int d = sd_domain(self, 0, prev), i, c
    for i in range(self.sd_first[d], self.sd_first[d + 1]):
        c = self.sd_cpus[i]
        if c != prev and cpu_allowed(self, e, c) and available_idle_cpu(self, c):
            return c
    return -1


cdef int select_idle_core(Engine self, int e, int c, int *idle_cpu) noexcept:
    """c if its whole core is idle; else note one idle sibling in *idle_cpu."""
    cdef int d = sd_domain(self, 0, c), i, s
    cdef bint idle = True
    for i in range(self.sd_first[d], self.sd_first[d + 1]):
        s = self.sd_cpus[i]
        if not available_idle_cpu(self, s):
            idle = False
        elif idle_cpu[0] < 0 and cpu_allowed(self, e, s):
            idle_cpu[0] = s
    return c if idle else -1


cdef int select_idle_cpu(Engine self, int e, int llc, bint has_idle_core, int target) noexcept:
    """Scan target's LLC from target + 1, wrapping: for a whole idle core if the LLC
    has one, else for an idle CPU, at most nr_idle_scan of them (SIS_UTIL)."""
    cdef int first = self.sd_first[llc], n = sd_weight(self, llc), k, start = 0, c, i
    cdef int nr = 1 << 30, idle_cpu = -1
    if not has_idle_core:
        nr = self.sd_nr_idle_scan[llc] + 1
        if nr == 1:
            return -1
    while start < n and self.sd_cpus[first + start] <= target:
        start += 1
    for k in range(n):
        c = self.sd_cpus[first + (start + k) % n]
        if not cpu_allowed(self, e, c):
            continue
        if has_idle_core:
            i = select_idle_core(self, e, c, &idle_cpu)
            if i >= 0:
                return i
        else:
            nr -= 1
            if nr <= 0:
                return -1
            if available_idle_cpu(self, c):
                return c
    if has_idle_core:
        self.sd_has_idle_cores[llc] = 0
    return idle_cpu


cdef int select_idle_sibling(Engine self, int e, int prev, int target, int this_cpu, int waker) noexcept:
    """An idle CPU sharing target's LLC, in the kernel's order of preference; else target."""
    cdef ent_t *ep = &self.ents[e]
    cdef int recent, llc, i
    cdef bint has_idle_core = False
    if available_idle_cpu(self, target):
        return target
    if prev != target and cpus_share_cache(self, prev, target) and available_idle_cpu(self, prev):
        return prev
    # A bound kworker waking a task that last ran on its CPU: let it stack there.
    if (waker >= 0 and is_per_cpu_kthread(self, waker) and prev == this_cpu
            and nr_running(self, this_cpu) <= 1):
        return prev
    recent = ep.recent_used_cpu
    ep.recent_used_cpu = prev
    if (recent >= 0 and recent != prev and recent != target and cpus_share_cache(self, recent, target)
            and available_idle_cpu(self, recent) and cpu_allowed(self, e, recent)):
        return recent
    if self.llc_level < 0:
        return target
    llc = sd_domain(self, self.llc_level, target)
    if self.smt_active:
        has_idle_core = self.sd_has_idle_cores[llc] != 0
        if not has_idle_core and cpus_share_cache(self, prev, target):
            i = select_idle_smt(self, e, prev)
            if i >= 0:
                return i
    i = select_idle_cpu(self, e, llc, has_idle_core, target)
    return i if i >= 0 else target


cdef int select_task_rq_fair(Engine self, int e, int this_cpu) noexcept:
    """The CPU a waking fair entity runs on; this_cpu is the waker's CPU (-1: none)."""
    cdef ent_t *ep = &self.ents[e]
    cdef int prev = ep.cpu, new_cpu = prev, waker = -1, level
    cdef bint want_affine = False
    if this_cpu >= 0:
        waker = self.cpus[this_cpu].curr
        if waker >= 0:
            record_wakee(self, waker, e)
        want_affine = (waker < 0 or not wake_wide(self, waker, e, this_cpu)) and cpu_allowed(self, e, this_cpu)
    if want_affine and this_cpu != prev:
        # The lowest domain of the waker's CPU that spans prev (all have SD_WAKE_AFFINE).
        for level in range(self.n_levels):
            if sd_domain(self, level, this_cpu) == sd_domain(self, level, prev):
                new_cpu = wake_affine(self, level, e, this_cpu, prev)
                break
    return select_idle_sibling(self, e, prev, new_cpu, this_cpu, waker)


cdef bint kthread_place_at_wakeup(Engine self, int e) noexcept:
    """An unbound kthread (kthread_create(): kthreadd's housekeeping affinity) is
    placed by select_task_rq_fair() at each wake-up; SCHED_FIFO ones (kthread_prio)
    and machines without scheduling domains keep it on its CPU.  Returns whether
    it was unbound."""
    if not (self.n_levels and self.ents[e].rq == RQ_NORMAL and self.fair_policy != POLICY_RR):
        return False
    self.ents[e].aff = HK_KTHREAD_MASK
    if not cpu_allowed(self, e, self.ents[e].cpu):
        self.ents[e].cpu = select_fallback_rq(self, e, self.ents[e].cpu)
    return True


cdef int select_fallback_rq(Engine self, int e, int cpu) noexcept:
    """An allowed CPU for an entity whose CPU is not: the first allowed one of cpu's
    LLC, else the first allowed one."""
    cdef int c
    for c in range(self.nr_cpus):
        if cpus_share_cache(self, c, cpu) and cpu_allowed(self, e, c):
            return c
    for c in range(self.nr_cpus):
        if cpu_allowed(self, e, c):
            return c
    return cpu


cdef int set_task_cpu(Engine self, int e, int c) except -1:
    """Move a sleeping or dequeued entity to CPU c (its fair state follows in
    migrate_task_rq_fair(): CFS keeps vruntime relative to min_vruntime; EEVDF
    keeps the lag it was dequeued with)."""
    cdef ent_t *ep = &self.ents[e]
    cdef int src = ep.cpu
    if src == c:
        return 0
    if ep.sched_delayed:
        finish_delayed_dequeue(self, src, e)  # rcusim dequeues a delayed entity it moves
    if self.fair_policy == POLICY_CFS:
        ep.vruntime += self.cpus[c].min_vruntime - self.cpus[src].min_vruntime
    self.cpus[src].n_assigned -= 1
    self.cpus[c].n_assigned += 1
    fair_reserve(self, c)
    ep.cpu = c
    return 0


cdef void update_idle_core(Engine self, int c) noexcept:
    """__update_idle_core(): a CPU going idle marks its LLC as having an idle core
    if all its SMT siblings are idle."""
    cdef int d, i
    if not self.smt_active or self.llc_level < 0:
        return
    d = sd_domain(self, 0, c)
    for i in range(self.sd_first[d], self.sd_first[d + 1]):
        if self.sd_cpus[i] != c and not available_idle_cpu(self, self.sd_cpus[i]):
            return
    self.sd_has_idle_cores[sd_domain(self, self.llc_level, c)] = 1
