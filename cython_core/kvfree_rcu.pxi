# kvfree_rcu() batching: kfree_rcu_cpu ("krcp"), bulk pages ("bnodes"),
# the monitor work, kfree_rcu_work after a grace period, the rcu_head
# fallback list (channel 3), the page cache and the monitor's drain of ready
# pages (v6.3) (kernel/rcu/tree.c v5.6..v6.12). rcuscale's kfree threads that
# call it are in kfree_scale.pxi.
#
# What a kfree_rcu() call does depends on the release (kv_gen):
# KV_CALL_RCU   before v5.6: call_rcu() with the rcu_head's offset; the
#               callback (CB_KFREE_OBJ) kfree()s the object. Also
#               rcuscale's kfree_by_call_rcu (v6.2), lazy.
# KV_HEAD_LIST  v5.6: the object joins krcp->head; the monitor moves the
#               list to a free krw_arr[] batch (the channel-3 path below).
# KV_BULK       v5.7 on: pointers in bulk pages; a page comes from the
#               cache (one page, v5.9 rcu_min_cached_objs), else from
#               __get_free_page() in the call (v5.7-v5.10), else (v5.11)
#               a two-argument call takes the rcu_head list and starts
#               page_cache_work.
#
# Only the slab channel of bulk_head[] is modelled: rcuscale's objects
# are kmalloc()ed, so the vmalloc channel stays empty.
#
# NOTE: for speed a caller's burst covers every kfree_rcu() call until its
# current page is full (kv_chunk = 0), instead of one call (kv_chunk = 1, the
# per-pointer mode the tests compare against); a burst of call_rcu()s ends at
# the latest with the call that flushes a full bypass.  The page's gp_snap and
# the monitor's timer are computed for the calls that set them (the newest
# insert, the first call and the call that reaches KVFREE_BULK_MAX_ENTR), so
# aggregation changes event counts, not rules.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int kvfree_rcu_ents(kv) except -1:
    """The kworkers' entities: on each kfree thread's CPU the monitor's and each batch's
    kfree_rcu_work's; from v6.12 page_cache_work's own on each such CPU, and the unbound pool's
    workers, at most one per work that can run at once and one idle (see kvfree_rcu_init())."""
    cdef int n = int(np.count_nonzero(kv.has_thread))
    if kv.kvfree_unbound_wq:
        return n + (KFREE_N_BATCHES + 1) * n + 1
    return (KFREE_N_BATCHES + 1) * n


cdef int kvfree_rcu_init(Engine self, kv, int e) except -1:
    """The krcp of each CPU and, on the CPUs of rcuscale's kfree threads, its kworkers."""
    cdef int c, k
    cdef krc_t *kp
    self.krcs = <krc_t *> malloc((self.nr_cpus + 1) * sizeof(krc_t))
    self.ms_cap = 1024
    self.ms_t = <i64 *> malloc(self.ms_cap * sizeof(i64))
    self.ms_bytes = <i64 *> malloc(self.ms_cap * sizeof(i64))
    if self.krcs == NULL or self.ms_t == NULL or self.ms_bytes == NULL:
        raise MemoryError()
    memset(self.krcs, 0, (self.nr_cpus + 1) * sizeof(krc_t))
    self.bn_cap = 0
    self.bn_free = -1
    if not np.count_nonzero(kv.has_thread):
        return e  # no kfree_rcu() caller: no krcp in use
    grow_bnodes(self, 1024)
    self.kv_gen = kv.gen
    self.kv_lazy = kv.lazy
    self.kv_polled = kv.polled
    self.kv_drain_ready = kv.drain_ready
    self.kv_chunk = kv.chunk
    self.kv_form = kv.form
    self.kv_max_entr = kv.max_entr
    self.kv_drain_jiffies = kv.drain_jiffies
    self.kv_drain_5hz = kv.kfree_drain_5hz
    self.kv_page_cache_work = kv.kvfree_page_cache_work
    self.kv_min_cached = kv.min_cached
    self.kv_obj_bytes = kv.obj_bytes
    self.kv_call_ns = kv.kmalloc_ns + (self.call_rcu_ns if self.kv_gen == KV_CALL_RCU else kv.kvfree_call_rcu_ns)
    # The callback frees the object as kfree_rcu_work's rcu_head walk does (kvfree_rcu_list()).
    self.cb_cost[CB_KFREE_OBJ] = kv.kfree_ns
    self.kv_page_alloc_ns = kv.page_alloc_ns
    self.kv_kfree_bulk_ns = kv.kfree_bulk_ns
    self.kv_kfree_ns = kv.kfree_ns
    self.kv_sample_ns = kv.sample_ns
    for c in range(self.nr_cpus):
        kp = &self.krcs[c]
        kp.bulk_head = kp.bulk_tail = -1
        kp.monitor_expires = -1
        for k in range(KW_N):
            kp.kworker[k] = -1
        for k in range(KFREE_N_BATCHES):
            kp.krw[k].bulk_head = kp.krw[k].bulk_tail = -1
            kp.krw[k].hand_head = kp.krw[k].hand_tail = -1
        if kv.cache_prefill:
            # kfree_rcu_batch_init() (v5.9, v5.10): rcu_min_cached_objs pages per possible CPU.
            kp.cache = self.kv_min_cached
            self.kv_pages += self.kv_min_cached
            self.n_kv_page_allocs += self.kv_min_cached
    # system_wq is bound per CPU: the monitor, page_cache_work and both
    # kfree_rcu_work items of a krcp run on kworkers of its CPU.  A work item
    # that sleeps (synchronize_rcu()) lets another kworker run the others.
    # From v6.12 (kv.kvfree_unbound_wq) the monitor and kfree_rcu_work run on an unbound
    # workqueue, whose pool's kworkers serve every krcp (workqueue.pxi), and page_cache_work,
    # still on system_highpri_wq, gets a bound kworker of its own.
    for c in range(self.nr_cpus):
        if not kv.has_thread[c] or self.kv_gen == KV_CALL_RCU:
            continue
        kp = &self.krcs[c]
        for k in range(KW_N):
            if kv.kvfree_unbound_wq and k != KW_PAGE_CACHE:
                continue  # the unbound pool's
            if k == KW_PAGE_CACHE and not kv.kvfree_unbound_wq:
                kp.kworker[k] = kp.kworker[KW_MONITOR]
                continue
            self.ents[e].kind = ENT_KWORKER
            self.ents[e].cpu = c
            self.ents[e].idx = c
            self.ents[e].rq = RQ_NORMAL
            kp.kworker[k] = e
            e += 1
    if kv.kvfree_unbound_wq and self.kv_gen != KV_CALL_RCU:
        e = uwq_init(self, e, (KFREE_N_BATCHES + 1) * int(np.count_nonzero(kv.has_thread)) + 1)
    return e


cdef void kvfree_rcu_dealloc(Engine self) noexcept:
    free(self.krcs)
    free(self.bnodes)
    free(self.ms_t)
    free(self.ms_bytes)
    uwq_dealloc(self)


cdef void grow_bnodes(Engine self, int cap) except *:
    cdef int i
    self.bnodes = <bnode_t *> realloc(self.bnodes, cap * sizeof(bnode_t))
    if self.bnodes == NULL:
        raise MemoryError()
    for i in range(self.bn_cap, cap):
        self.bnodes[i].next = self.bn_free
        self.bn_free = i
    self.bn_cap = cap


cdef int bnode_new(Engine self) except -1:
    """A bulk page for krcp: taken from its cache or newly allocated."""
    cdef int b
    if self.bn_free < 0:
        grow_bnodes(self, self.bn_cap * 2)
    b = self.bn_free
    self.bn_free = self.bnodes[b].next
    self.bnodes[b].next = -1
    self.bnodes[b].nr_records = 0
    return b


cdef void bnode_put(Engine self, krc_t *kp, int b, int run_cpu) noexcept:
    """put_cached_bnode(), else free_page() on run_cpu."""
    self.bnodes[b].next = self.bn_free
    self.bn_free = b
    if kp.cache < self.kv_min_cached:
        kp.cache += 1
    else:
        self.kv_pages -= 1
        free_page(self, run_cpu)


# --- memory accounting ---------------------------------------------------
cdef inline i64 kv_bytes(Engine self) noexcept:
    return self.kv_objs * self.kv_obj_bytes + self.kv_pages * 4096


cdef void kv_mem_changed(Engine self) except *:
    """Record bytes allocated and not yet freed, at most once per kv_sample_ns."""
    cdef i64 b = kv_bytes(self), cap
    if b > self.kv_peak_bytes:
        self.kv_peak_bytes = b
    if self.now < self.kv_next_sample:
        return
    self.kv_next_sample = self.now + self.kv_sample_ns
    if self.ms_n == self.ms_cap:
        cap = self.ms_cap * 2
        self.ms_t = <i64 *> realloc(self.ms_t, cap * sizeof(i64))
        self.ms_bytes = <i64 *> realloc(self.ms_bytes, cap * sizeof(i64))
        if self.ms_t == NULL or self.ms_bytes == NULL:
            raise MemoryError()
        self.ms_cap = cap
    self.ms_t[self.ms_n] = self.now
    self.ms_bytes[self.ms_n] = b
    self.ms_n += 1


cdef inline i64 si_mem_available(Engine self) noexcept:
    """The zone's free pages (page_alloc.pxi): no page cache or reclaimable slab moves in the run."""
    return zone_free_pages(self)


cdef i64 call_rcu_burst(Engine self, int c, i64 left) noexcept:
    """call_rcu()s of one burst on CPU c, `left` of them to make: on an offloaded CPU no
    further than the one that finds the bypass at qhimark and flushes it
    (rcu_nocb_try_bypass())."""
    cdef cpu_t *cp = &self.cpus[c]
    if cp.offloaded and cp.byp_len < self.qhimark:
        return min(left, self.qhimark - cp.byp_len + 1)
    return left


cdef i64 kv_leading_double(Engine self, i64 left) noexcept:
    """Two-argument calls before the first single-argument one (rcuscale's
    torture_random() & 0x800 picks the form of each call)."""
    cdef double u
    if self.kv_form == 1:
        return 0
    if self.kv_form == 2:
        return 1 if self.kv_chunk else min(left, self.kv_max_entr)
    if self.kv_chunk:
        return 1 if random_unit(self) < 0.5 else 0
    u = random_unit(self)
    return <i64> (log(1.0 - u) / log(0.5))


# --- kvfree_call_rcu(): a burst of calls from one CPU ----------------------
cdef i64 kvfree_call_rcu_next(Engine self, int c, i64 left, i64 *plan) except -2:
    """Plan the next burst of kvfree_call_rcu() calls on CPU c, `left` of them still to
    make: until the current page is full (without pages: all of them). Fills plan[0..2]
    with the channel-3 calls, the page's source and the pointers; returns the burst's
    length."""
    cdef krc_t *kp = &self.krcs[c]
    cdef i64 room = 0, h = 0, n, src = 0
    if self.kv_gen != KV_BULK:
        # call_rcu() or krcp->head for every call.
        h = 1 if self.kv_chunk else left
        if self.kv_gen == KV_CALL_RCU and h > 1:
            h = call_rcu_burst(self, c, h)
        plan[0] = h
        plan[1] = plan[2] = 0
        return h * self.kv_call_ns
    if kp.bulk_tail >= 0:
        room = self.kv_max_entr - self.bnodes[kp.bulk_tail].nr_records
    if room == 0:
        if kp.cache > 0:
            src = 1  # get_cached_bnode()
        elif not self.kv_page_cache_work:
            src = 2  # __get_free_page(GFP_NOWAIT) under krcp->lock, for either form
        else:
            # No page at hand: a two-argument kfree_rcu() falls back to the
            # rcu_head list; a single-argument one may sleep in __get_free_page().
            h = kv_leading_double(self, left)
            if h >= left:
                h = left
            elif self.kv_form != 2 and not (self.kv_chunk and h > 0):
                src = 2
        if src:
            room = self.kv_max_entr
    n = left - h
    if n > room:
        n = room
    if self.kv_chunk and n > 1:
        n = 1
    plan[0] = h
    plan[1] = src
    plan[2] = n
    return (h + n) * self.kv_call_ns + (self.kv_page_alloc_ns if src == 2 else 0)


cdef i64 kvfree_call_rcu(Engine self, int c, i64 *plan) except -2:
    """The planned calls on CPU c happened, the last one ending now: their objects are
    queued (rcu_head list, bulk pages or call_rcu()), the monitor scheduled. Returns the
    number of calls."""
    cdef krc_t *kp = &self.krcs[c]
    cdef i64 h = plan[0], src = plan[1], n = plan[2]
    cdef i64 calls = h + n, before = kp.count, t_first, m, i
    cdef int b
    kmalloc_objs(self, c, calls)  # rcuscale kmalloc()s each object before its kfree_rcu()
    if self.kv_gen == KV_CALL_RCU:
        if self.fault == FAULT_KVFREE_NO_GP:
            check_kvfree(self, c, self.now)  # kfree() at once
            self.kv_objs -= h
            kfree_objs(self, c, c, h)
            h = 0
        for i in range(h):
            call_rcu(self, c, CB_KFREE_OBJ, c, self.kv_lazy)
    elif h > 0:
        kp.head_count += h
        kp.head_t = self.now
        kp.head_gp_snap = rcu_seq_snap(self.gp_seq)  # krcp->head_gp_snap = get_state_synchronize_rcu()
        self.n_kv_head_objs += h
        if self.kv_page_cache_work:
            run_page_cache_worker(self, c)
    if src:
        kv_add_bulk_page(self, c, src == 1)
    while n > 0:
        b = kp.bulk_tail
        if b < 0 or self.bnodes[b].nr_records == self.kv_max_entr:
            # The plan's page is gone: the monitor detached it, or another kfree
            # thread of this CPU filled it during the burst. The rest of the
            # calls go to a new page, cached or else allocated (its time is not
            # in the burst's: the plan did not foresee it).
            kv_add_bulk_page(self, c, True)
            continue
        m = min(n, self.kv_max_entr - self.bnodes[b].nr_records)
        self.bnodes[b].nr_records += m
        self.bnodes[b].gp_snap = rcu_seq_snap(self.gp_seq)  # get_state_synchronize_rcu()
        self.bnodes[b].t_last = self.now
        if self.bnodes[b].nr_records == self.kv_max_entr:
            self.n_kv_pages_filled += 1
        n -= m
    self.kv_objs += calls
    kp.count += calls
    if calls > 0 and self.kv_gen != KV_CALL_RCU:
        # schedule_delayed_monitor_work() after each call: only the first call
        # and the one reaching KVFREE_BULK_MAX_ENTR can shorten the delay.
        t_first = self.now - (calls - 1) * self.kv_call_ns
        schedule_monitor(self, c, c, t_first, before + 1)
        if self.kv_drain_5hz and before + 1 < self.kv_max_entr <= kp.count:
            schedule_monitor(self, c, c, t_first + (self.kv_max_entr - before - 1) * self.kv_call_ns,
                                  self.kv_max_entr)
    kv_mem_changed(self)
    return calls



cdef void kv_get_free_page(Engine self, int cpu) noexcept:
    """__get_free_page() of a bulk page on cpu (in a call, or by page_cache_work)."""
    self.kv_pages += 1
    self.n_kv_page_allocs += 1
    alloc_page(self, cpu)


cdef void kv_add_bulk_page(Engine self, int c, bint cached) except *:
    """A new bulk page at the tail of CPU c's krcp list: from its page cache if `cached`
    and it has one, else newly allocated on c."""
    cdef krc_t *kp = &self.krcs[c]
    cdef int b
    if cached and kp.cache > 0:
        kp.cache -= 1
    else:
        kv_get_free_page(self, c)
    b = bnode_new(self)
    if kp.bulk_tail >= 0:
        self.bnodes[kp.bulk_tail].next = b
    else:
        kp.bulk_head = b
    kp.bulk_tail = b


# --- monitor work ----------------------------------------------------------
cdef void schedule_monitor(Engine self, int c, int cpu, i64 t_call, i64 count) except *:
    """schedule_delayed_monitor_work() of krcp c, on CPU cpu, by a call at t_call that left
    count queued; before v6.1, schedule_delayed_work(KFREE_DRAIN_JIFFIES), which leaves a
    pending timer alone (as ->monitor_todo did in the releases that had it). The timer is
    the arming CPU's (add_timer_global()), and the work is queued where it fires."""
    cdef krc_t *kp = &self.krcs[c]
    cdef i64 j = t_call // self.jiffy_ns
    cdef i64 delay = 1 if self.kv_drain_5hz and count >= self.kv_max_entr else self.kv_drain_jiffies
    cdef i64 t
    if kp.monitor_queued:
        return  # delayed_work_pending(): queued, its timer already expired
    if kp.monitor_expires >= 0 and delay >= kp.monitor_expires // self.jiffy_ns - j:
        return
    # queue_delayed_work() / mod_delayed_work(): timer.expires is jiffies + delay;
    # the wheel runs it at the tick of its bucket.
    kp.monitor_expires = (j + delay) * self.jiffy_ns
    kp.monitor_cpu = cpu
    kp.monitor_gen += 1
    push(self, max(self.now, timer_expiry_jiffy(self, j, j + delay) * self.jiffy_ns), PRIO_NORMAL,
         EV_KFREE_MONITOR, c, <i64> kp.monitor_gen)


cdef void ev_kfree_monitor(Engine self, int c, i64 gen) except *:
    cdef krc_t *kp = &self.krcs[c]
    if <u64> gen != kp.monitor_gen or kp.monitor_expires < 0:
        return
    kp.monitor_expires = -1
    kp.monitor_queued = 1
    timer_tick(self, kp.monitor_cpu)
    self.acc = 0
    if kp.kworker[KW_MONITOR] >= 0:
        wake(self, kp.kworker[KW_MONITOR], kp.monitor_cpu, self.now)
    elif not kp.monitor_running:
        queue_work_unbound(self, c * KW_N + KW_MONITOR, kp.monitor_cpu, self.now)


cdef void kfree_obj_reclaim(Engine self, int src, int run_cpu) except *:
    """A CB_KFREE_OBJ callback of an object kmalloc()ed on CPU src: it is kfree()d on run_cpu
    (the checker has seen its GP)."""
    self.kv_objs -= 1
    kfree_objs(self, src, run_cpu, 1)
    kv_mem_changed(self)


cdef void run_page_cache_worker(Engine self, int c) except *:
    """run_page_cache_worker(): hrtimer(0) -> page_cache_work on system_highpri_wq."""
    cdef krc_t *kp = &self.krcs[c]
    if kp.cache_work:
        return
    kp.cache_work = 1
    wake(self, kp.kworker[KW_PAGE_CACHE], c, self.now + self.acc)


cdef inline i64 kvfree_rcu_bulk_ns(Engine self, int b) noexcept:
    """kvfree_rcu_bulk() of page b: kfree_bulk() of its pointers, under the krcp lock."""
    return self.rnp_lock_ns + self.bnodes[b].nr_records * self.kv_kfree_bulk_ns


cdef void kvfree_rcu_bulk(Engine self, int c, int b, int run_cpu) except *:
    """kvfree_rcu_bulk() on run_cpu: page b of CPU c's krcp has its objects freed (the checker
    sees their GP has passed) and goes back to the cache or is freed."""
    check_kvfree(self, c, self.bnodes[b].t_last)
    self.kv_objs -= self.bnodes[b].nr_records
    kfree_objs(self, c, run_cpu, self.bnodes[b].nr_records)
    bnode_put(self, &self.krcs[c], b, run_cpu)


cdef void kvfree_rcu_list(Engine self, int c, i64 n, i64 t_last, int run_cpu) except *:
    """kvfree_rcu_list() on run_cpu: n channel-3 objects of CPU c's krcp, the newest queued at
    t_last, are freed."""
    check_kvfree(self, c, t_last)
    self.kv_objs -= n
    kfree_objs(self, c, run_cpu, n)


cdef i64 kvfree_rcu_drain_ready_ns(Engine self, krc_t *kp) noexcept:
    """kvfree_rcu_drain_ready() as the monitor starts: under krcp->lock it moves off the
    krcp the pages whose snapshot has passed, oldest first up to the first that has not
    (bulk_ready), and the channel-3 list if its snapshot has (head_ready), so that calls made
    while they are freed go to the krcp as before; returns what freeing them costs
    (kvfree_rcu_bulk() per page, kvfree_rcu_list() per object)."""
    cdef int b = kp.bulk_head, last = -1
    cdef i64 ns = 0
    kp.drain_pages = 0
    kp.drain_head = 0
    while b >= 0 and rcu_seq_done(self.gp_seq, self.bnodes[b].gp_snap):
        kp.drain_pages += 1
        kp.count -= self.bnodes[b].nr_records  # atomic_sub(bnode->nr_records, &krcp->bulk_count[i])
        ns += kvfree_rcu_bulk_ns(self, b)
        last = b
        b = self.bnodes[b].next
    if last >= 0:
        kp.drain_first = kp.bulk_head
        self.bnodes[last].next = -1
        kp.bulk_head = b
        if b < 0:
            kp.bulk_tail = -1
    if kp.head_count > 0 and rcu_seq_done(self.gp_seq, kp.head_gp_snap):
        kp.drain_head = kp.head_count
        kp.drain_head_t = kp.head_t
        kp.count -= kp.drain_head
        kp.head_count = 0
        ns += kp.drain_head * self.kv_kfree_ns
    return ns


cdef void kvfree_rcu_drain_ready(Engine self, int c, int run_cpu) except *:
    """The monitor, on run_cpu, frees what kvfree_rcu_drain_ready_ns() moved off the krcp."""
    cdef krc_t *kp = &self.krcs[c]
    cdef int b
    while kp.drain_pages > 0:
        kp.drain_pages -= 1
        b = kp.drain_first
        kp.drain_first = self.bnodes[b].next
        self.n_kv_ready_pages += 1
        kvfree_rcu_bulk(self, c, b, run_cpu)
    if kp.drain_head > 0:
        kvfree_rcu_list(self, c, kp.drain_head, kp.drain_head_t, run_cpu)
        kp.drain_head = 0
    kv_mem_changed(self)


cdef void kfree_rcu_monitor(Engine self, int c, int run_cpu) except *:
    """Detach krcp c's queued pages and channel-3 list into a free krw_arr[] batch
    (kvfree_rcu_queue_batch()), on the CPU run_cpu its kworker runs on."""
    cdef krc_t *kp = &self.krcs[c]
    cdef krw_t *w
    cdef int i
    cdef bint was_pending
    self.n_kv_monitor_runs += 1
    spin_lock(self, &kp.lock_free)  # krcp->lock
    for i in range(KFREE_N_BATCHES):
        w = &kp.krw[i]
        # need_wait_for_krwp_work(): a batch still holding anything is busy.
        # Without this check (before the 2023 fix "rcu/kvfree: Avoid freeing
        # new kfree_rcu() memory after old grace period") an empty channel of
        # a batch whose rcu_work was pending took new objects, freed after the
        # old GP; rcusim's safety checker reports that use-after-free.
        if self.fault == FAULT_NO_WAIT_FOR_KRWP_WORK:
            if w.bulk_head >= 0 and w.head_free > 0:
                continue
        elif w.bulk_head >= 0 or w.head_free > 0:
            continue
        if kp.bulk_head < 0 and kp.head_count == 0:
            continue
        if w.bulk_head < 0:
            w.bulk_head = kp.bulk_head
            w.bulk_tail = kp.bulk_tail
            kp.bulk_head = kp.bulk_tail = -1
        if w.head_free == 0:
            w.head_free = kp.head_count
            w.head_free_t = kp.head_t
            w.head_free_gp_snap = rcu_seq_snap(self.gp_seq)
            kp.head_count = 0
        kp.count = 0
        self.n_kv_batches += 1
        was_pending = w.pending
        w.pending = 1
        if was_pending:
            continue  # queue_rcu_work() of a pending work does nothing
        if self.kv_polled or self.fault == FAULT_KVFREE_NO_GP:
            # queue_work(): reclaim starts now and polls each page's gp_snap.
            queue_kfree_rcu_work(self, c, i, run_cpu, self.now + self.acc)
        else:
            # queue_rcu_work() -> call_rcu_hurry(rcu_work_rcufn), from the CPU it runs on.
            self.acc += self.call_rcu_ns
            call_rcu(self, run_cpu, CB_RCU_WORK, c * KW_N + KW_RECLAIM0 + i)
    if kp.bulk_head >= 0 or kp.head_count > 0:
        schedule_monitor(self, c, run_cpu, self.now + self.acc, kp.count)  # need_offload_krc()


cdef void rcu_work_rcufn(Engine self, int work, int from_cpu, i64 t) except *:
    """The GP of queue_rcu_work() ended: queue kfree_rcu_work from the CPU invoking this callback."""
    queue_kfree_rcu_work(self, work // KW_N, work % KW_N - KW_RECLAIM0, from_cpu, t)


cdef void queue_kfree_rcu_work(Engine self, int c, int i, int from_cpu, i64 t) except *:
    """queue_work() of krcp c's batch i from from_cpu at t: before v6.12 on the bound pool of
    that CPU (system_wq, WORK_CPU_UNBOUND: the local CPU), unless it is still running in another
    pool, where it is queued instead; from v6.12 on the unbound pool. A work pending or running
    is only marked to run (again)."""
    cdef krc_t *kp = &self.krcs[c]
    cdef int w = kp.kworker[KW_RECLAIM0 + i]
    cdef bint was = kp.krw[i].queued or kp.krw[i].running
    kp.krw[i].queued = 1
    if w < 0:
        if not was:
            queue_work_unbound(self, c * KW_N + KW_RECLAIM0 + i, from_cpu, t)
        return
    if not kp.krw[i].running:
        if from_cpu >= 0 and self.ents[w].state == ST_BLOCKED and self.ents[w].aff < 0:
            set_task_cpu(self, w, from_cpu)
        wake(self, w, from_cpu, t)


# --- kworkers ---------------------------------------------------------------
cdef inline bint kworker_queued(krc_t *kp, int e) noexcept:
    """The page-cache or the monitor work item waits for its kworker e."""
    return ((e == kp.kworker[KW_PAGE_CACHE] and kp.cache_work == 1)
            or (e == kp.kworker[KW_MONITOR] and kp.monitor_queued))


cdef i64 kfree_rcu_monitor_start(Engine self, int e, int c) except -2:
    """Kworker e takes krcp c's monitor work: kvfree_rcu_drain_ready() (v6.3) and the detach,
    each under krcp->lock."""
    cdef krc_t *kp = &self.krcs[c]
    kp.monitor_queued = 0
    kp.monitor_running = 1
    self.ents[e].phase = KW_MONITOR
    return 2 * self.rnp_lock_ns + (kvfree_rcu_drain_ready_ns(self, kp) if self.kv_drain_ready else 0)


cdef void kfree_rcu_monitor_done(Engine self, int e, int c) except *:
    if self.kv_drain_ready:
        kvfree_rcu_drain_ready(self, c, self.ents[e].cpu)
    kfree_rcu_monitor(self, c, self.ents[e].cpu)
    self.krcs[c].monitor_running = 0


cdef i64 kvfree_kworker_next(Engine self, int e, i64 t0) except -2:
    if is_uwq_worker(self, e):
        return uwq_worker_next(self, e, t0)
    cdef int c = self.ents[e].idx
    cdef krc_t *kp = &self.krcs[c]
    if e == kp.kworker[KW_MONITOR] or e == kp.kworker[KW_PAGE_CACHE]:
        if e == kp.kworker[KW_PAGE_CACHE] and kp.cache_work == 1:  # system_highpri_wq runs before system_wq
            kp.cache_work = 2
            self.ents[e].phase = KW_PAGE_CACHE
            return self.kv_page_alloc_ns * (self.kv_min_cached - kp.cache if kp.cache < self.kv_min_cached else 1)
        if e == kp.kworker[KW_MONITOR] and kp.monitor_queued:
            return kfree_rcu_monitor_start(self, e, c)
        self.ents[e].phase = -1
        return 0
    return kfree_rcu_work_step(self, e, c, e == kp.kworker[KW_RECLAIM0 + 1])


cdef i64 kvfree_kworker(Engine self, int e) except -2:
    if is_uwq_worker(self, e):
        return uwq_worker(self, e)
    cdef int c = self.ents[e].idx
    cdef krc_t *kp = &self.krcs[c]
    self.acc = 0
    if e != kp.kworker[KW_MONITOR] and e != kp.kworker[KW_PAGE_CACHE]:
        return kfree_rcu_work_done(self, e, c, e == kp.kworker[KW_RECLAIM0 + 1])
    if self.ents[e].phase == KW_PAGE_CACHE:
        # fill_page_cache_func(): up to rcu_min_cached_objs pages.
        while kp.cache < self.kv_min_cached:
            kp.cache += 1
            kv_get_free_page(self, self.ents[e].cpu)
        kp.cache_work = 0
        kv_mem_changed(self)
    elif self.ents[e].phase == KW_MONITOR:
        kfree_rcu_monitor_done(self, e, c)
    self.cpus[self.ents[e].cpu].debt += self.acc
    if kworker_queued(kp, e):
        return kvfree_kworker_next(self, e, self.now)
    return -1


# kfree_rcu_work() in steps, one bulk page (kfree_bulk()) per burst.
# ent_t.phase holds the step's action.
cdef i64 kfree_rcu_work_step(Engine self, int e, int c, int i) except -2:
    cdef krw_t *w = &self.krcs[c].krw[i]
    cdef int b
    if not w.running:
        if not w.queued:
            self.ents[e].phase = KWA_END
            return 0
        # Take the batch: the krw_arr[] slot is free for the monitor again.
        w.pending = 0
        w.queued = 0
        w.running = 1
        w.step = 0
        w.hand_head, w.hand_tail = w.bulk_head, w.bulk_tail
        w.bulk_head = w.bulk_tail = -1
        w.hand_objs, w.hand_t, w.hand_gp_snap = w.head_free, w.head_free_t, w.head_free_gp_snap
        w.head_free = 0
        self.n_kv_works += 1
    b = w.hand_head
    if b >= 0:
        if (self.kv_polled and w.step == 0 and not rcu_seq_done(self.gp_seq, self.bnodes[b].gp_snap)
                and self.fault != FAULT_KVFREE_NO_GP):
            # Not yet ready: one more GP for this page and the newer ones.
            self.ents[e].phase = KWA_SYNC
            return self.sync_entry_ns
        self.ents[e].phase = KWA_PAGE
        return kvfree_rcu_bulk_ns(self, b)
    if w.hand_objs > 0:
        if (self.kv_polled and w.step == 0 and not rcu_seq_done(self.gp_seq, w.hand_gp_snap)
                and self.fault != FAULT_KVFREE_NO_GP):
            self.ents[e].phase = KWA_SYNC  # cond_synchronize_rcu()
            return self.sync_entry_ns
        self.ents[e].phase = KWA_HEAD
        return w.hand_objs * self.kv_kfree_ns  # kvfree_rcu_list(): one kvfree() each
    self.ents[e].phase = KWA_END
    return 0


cdef i64 kfree_rcu_work_done(Engine self, int e, int c, int i) except -2:
    cdef krc_t *kp = &self.krcs[c]
    cdef krw_t *w = &kp.krw[i]
    cdef int b, act = self.ents[e].phase
    if act == KWA_PAGE:
        b = w.hand_head
        if self.kv_polled and w.step == 0:
            self.n_kv_ready_pages += 1
        w.hand_head = self.bnodes[b].next
        if w.hand_head < 0:
            w.hand_tail = -1
        kvfree_rcu_bulk(self, c, b, self.ents[e].cpu)
        kv_mem_changed(self)
    elif act == KWA_HEAD:
        kvfree_rcu_list(self, c, w.hand_objs, w.hand_t, self.ents[e].cpu)
        w.hand_objs = 0
        kv_mem_changed(self)
    elif act == KWA_SYNC:
        w.step = 1
        self.n_kv_sync += 1
        if self.wake_from_gp:
            synchronize_rcu_normal(self, e, self.ents[e].cpu)
        else:
            call_rcu(self, self.ents[e].cpu, CB_WAKEME, e)
    elif act == KWA_END:
        w.running = 0
    self.cpus[self.ents[e].cpu].debt += self.acc
    if act == KWA_SYNC or (act == KWA_END and not w.queued):
        return -1  # asleep until the GP's callback, or the next queue_rcu_work()
    return kfree_rcu_work_step(self, e, c, i)
