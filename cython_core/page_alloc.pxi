# The page allocator's per-CPU page lists (mm/page_alloc.c, v6.12) and the slab pages of
# kmalloc()'s objects (mm/slub.c), as far as a kfree_rcu() flood reaches them:
# - every order-0 page (a slab of kmalloc-32, a bulk page of kvfree_rcu()) comes from the
#   allocating CPU's list, which refills from the zone in batches when empty
#   (rmqueue_pcplist(), nr_pcp_alloc());
# - a freed page goes to the freeing CPU's list, which gives a batch back to the zone only once
#   it reaches its high mark (free_unref_page_commit(), nr_pcp_high(), nr_pcp_free());
# - once a second each CPU's vmstat_update() lowers its high mark and drains what is above it
#   (decay_pcp_high()).
# That is v6.7 on (switch pcp_high_auto). v5.14-v6.6 (pcp_free_factor): high is fixed at the low
# watermark's share, a refill takes one batch, and frees in a row give back batch << free_factor
# at a time; before v5.14, high is 6 batches and each give-back one batch.
# si_mem_available() counts the zone's free pages (NR_FREE_PAGES): pages parked on the lists
# count as used, which is most of the footprint rcuscale's kfree test prints.
#
# Only the unmovable order-0 list is modelled: the other migratetypes' lists hold pages nothing
# in the run allocates, and their share of pcp->count is not counted against high. The list
# starts with the profile's pcp_start_pages on each CPU (measured in the guest: what its boot
# and the test's start left there), empty where the profile does not say. The zone stays above its high watermark
# (ZONE_BELOW_HIGH and ZONE_RECLAIM_ACTIVE never set). The vmstat kworker's own CPU time is not
# modelled; its decay is applied when the CPU's list or si_mem_available() is next used, also
# on a CPU that idled through it (the kernel's vmstat_work is deferrable and would wait for
# the CPU to wake). si_mem_available() reads the zone's count exactly, where the kernel's
# global NR_FREE_PAGES lags each CPU's unfolded vm_stat_diff (up to its stat_threshold).
#
# Slabs (mm/slub.c, v6.12): the objects kmalloc()ed on a CPU fill that CPU's slabs in turn
# (slab_objs to a page), and are freed in the order they were allocated, so a slab empties
# on the CPU that frees its last objects (the kernel's goes to the partial list of the CPU
# that first freed into it, __slab_free(); one kfree_bulk() of a page's ~500 pointers empties
# most of its slabs whole). An emptied slab goes onto that CPU's partial
# list (put_cpu_partial()); a third one flushes the two before it to the node's partial list
# (__put_partials()), which keeps min_partial slabs and gives the others' pages back
# (discard_slab() -> free_page()). A CPU whose slab is full takes an empty one from its own
# partial list, else from the node's (get_partial_node(), which hands it a few more), else a
# new page. Only empty slabs reach these lists here: a slab with live objects stays with its
# CPU.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int page_alloc_init(Engine self, pa) except -1:
    cdef int c
    self.pcps = <pcp_t *> calloc(self.nr_cpus + 1, sizeof(pcp_t))
    self.slab_alloc = <i64 *> calloc(self.nr_cpus + 1, sizeof(i64))
    self.slab_freed = <i64 *> calloc(self.nr_cpus + 1, sizeof(i64))
    self.slab_cpu_partial = <i64 *> calloc(self.nr_cpus + 1, sizeof(i64))
    if self.pcps == NULL or self.slab_alloc == NULL or self.slab_freed == NULL or self.slab_cpu_partial == NULL:
        raise MemoryError()
    self.zone_free = <i64> 1 << 40  # a machine whose size cancels out of rcuscale's difference
    self.pcp_batch = pa.pcp_batch
    self.pcp_high_min = pa.pcp_high_min
    self.pcp_high_max = pa.pcp_high_max
    self.pcp_scale_max = pa.pcp_scale_max
    self.pcp_free_factor = pa.pcp_free_factor
    self.pcp_high_auto = pa.pcp_high_auto
    self.slab_objs = pa.slab_objs
    self.slab_cpu_partial_slabs = pa.cpu_partial_slabs
    self.slab_min_partial = pa.min_partial
    self.slab_node_partial = 0
    self.pcp_hz = 1000000000 // self.jiffy_ns
    for c in range(self.nr_cpus):
        # vmstat_update() every round_jiffies_relative(HZ): at whole seconds, CPU c's 3*c
        # jiffies early (__round_jiffies()).
        self.pcps[c].next_decay = ((3 * c) // self.pcp_hz + 1) * self.pcp_hz - 3 * c
        self.pcps[c].count = pa.pcp_start
        # A list that holds pages has been used: its high mark is at least high_min (no decay drains
        # below it), where a never used one's is 0 (BOOT_PAGESET_HIGH) until its first use clamps it.
        self.pcps[c].high = pa.pcp_high_min if pa.pcp_start else 0
    return 0


cdef void page_alloc_dealloc(Engine self) noexcept:
    free(self.pcps)
    free(self.slab_alloc)
    free(self.slab_freed)
    free(self.slab_cpu_partial)


cdef void free_pcppages_bulk(Engine self, pcp_t *pcp, int count) noexcept:
    """count pages of the list back to the zone."""
    pcp.count -= count
    pcp.to_zone += count
    self.zone_free += count
    self.n_pcp_drained += count


cdef void decay_pcp_high(Engine self, int c) noexcept:
    """The vmstat_update()s of CPU c due by now: each lowers pcp->high by an eighth (not below
    what the list holds less batch << CONFIG_PCP_BATCH_SCALE_MAX, nor high_min) and drains
    the list down to it, a batch at a time."""
    cdef pcp_t *pcp = &self.pcps[c]
    cdef i64 j = self.now // self.jiffy_ns
    cdef int to_drain
    if not self.pcp_high_auto:
        return
    while pcp.next_decay <= j:
        pcp.next_decay += self.pcp_hz
        if pcp.high > self.pcp_high_min:
            pcp.high = max(pcp.count - (self.pcp_batch << self.pcp_scale_max),
                           pcp.high - (pcp.high >> 3), self.pcp_high_min)
        to_drain = pcp.count - pcp.high
        while to_drain > 0:
            free_pcppages_bulk(self, pcp, min(to_drain, self.pcp_batch))
            to_drain -= self.pcp_batch


cdef inline int pcp_high(Engine self, pcp_t *pcp) noexcept:
    """pcp->high = clamp(pcp->high, high_min, high_max), as each use of it begins."""
    pcp.high = min(max(pcp.high, self.pcp_high_min), self.pcp_high_max)
    return pcp.high


cdef int nr_pcp_alloc(Engine self, pcp_t *pcp) noexcept:
    """The pages an empty list takes from the zone: batch << alloc_factor, the factor growing
    with each refill that no free came between, within what high leaves room for."""
    cdef int base = self.pcp_batch, batch, max_nr_alloc, high = pcp_high(self, pcp)
    if high < base:
        return 1
    if not self.pcp_high_auto:
        return base
    batch = base << pcp.alloc_factor
    if self.pcp_high_min != self.pcp_high_max:
        high = pcp.high = min(high + batch, self.pcp_high_max)
    max_nr_alloc = max(high - pcp.count - base, base)
    if batch <= max_nr_alloc and pcp.alloc_factor < self.pcp_scale_max:
        pcp.alloc_factor += 1
    batch = min(batch, max_nr_alloc)
    return max(batch, 2) if batch > 1 else batch


cdef void alloc_page(Engine self, int c) noexcept:
    """rmqueue_pcplist() of an unmovable order-0 page on CPU c."""
    cdef pcp_t *pcp = &self.pcps[c]
    cdef int n
    decay_pcp_high(self, c)
    pcp.free_count >>= 1
    pcp.free_factor >>= 1
    if pcp.count == 0:
        n = nr_pcp_alloc(self, pcp)  # rmqueue_bulk()
        pcp.count += n
        pcp.from_zone += n
        self.zone_free -= n
        self.n_pcp_refilled += n
    pcp.count -= 1
    self.n_pcp_allocs += 1


cdef int nr_pcp_high(Engine self, pcp_t *pcp) noexcept:
    """The list's high mark for this free; a list at it grows its pcp->high to hold the pages
    being freed in a row (free_count) and a batch."""
    cdef int high = pcp_high(self, pcp)
    if high == 0 or self.pcp_high_min == self.pcp_high_max:
        return high
    if pcp.count >= high and pcp.high < pcp.free_count + self.pcp_batch:
        pcp.high = min(max(pcp.free_count + self.pcp_batch, self.pcp_high_min), self.pcp_high_max)
    return high


cdef void free_page(Engine self, int c) noexcept:
    """free_unref_page() of an order-0 page on CPU c (free_unref_page_commit())."""
    cdef pcp_t *pcp = &self.pcps[c]
    cdef int high
    decay_pcp_high(self, c)
    pcp.alloc_factor >>= 1
    pcp.count += 1
    self.n_pcp_frees += 1
    if pcp.free_count < (self.pcp_batch << self.pcp_scale_max):
        pcp.free_count += 1
    high = nr_pcp_high(self, pcp)
    if pcp.count >= high:
        free_pcppages_bulk(self, pcp, nr_pcp_free(self, pcp, high))


cdef int nr_pcp_free(Engine self, pcp_t *pcp, int high) noexcept:
    """The pages a list at its high mark gives back, leaving at least a batch: v6.7 on, those
    freed in a row (at least a batch); v5.14-v6.6, batch << free_factor, the factor growing
    with each give-back in a row; before, a batch."""
    cdef int batch = self.pcp_batch
    if high < batch:
        return 1
    if self.pcp_high_auto:
        return min(max(pcp.free_count, batch), high - batch)
    if not self.pcp_free_factor:
        return batch
    batch <<= pcp.free_factor
    if batch < high - self.pcp_batch:
        pcp.free_factor += 1
    return min(max(batch, self.pcp_batch), high - self.pcp_batch)


cdef i64 zone_free_pages(Engine self) noexcept:
    """NR_FREE_PAGES, with every CPU's due vmstat_update() applied (a CPU's are applied before
    any change to its list, so applying them late gives the same)."""
    cdef int c
    for c in range(self.nr_cpus):
        decay_pcp_high(self, c)
    return self.zone_free


# --- slab pages -------------------------------------------------------------
cdef void new_slab(Engine self, int c) noexcept:
    """CPU c's slab is full: the next comes from its partial list, else from the node's
    (get_partial_node(), which moves up to cpu_partial_slabs / 2 + 1 more onto c's list), else
    from a new page."""
    cdef i64 more
    if self.slab_cpu_partial[c] > 0:
        self.slab_cpu_partial[c] -= 1
    elif self.slab_node_partial > 0:
        self.slab_node_partial -= 1
        more = min(self.slab_node_partial, self.slab_cpu_partial_slabs // 2 + 1)
        self.slab_node_partial -= more
        self.slab_cpu_partial[c] += more
    else:
        alloc_page(self, c)


cdef void put_cpu_partial(Engine self, int c) noexcept:
    """An emptied slab onto CPU c's partial list; a full list goes to the node's first,
    whose slabs beyond min_partial are discarded."""
    cdef i64 k
    if self.slab_cpu_partial[c] >= self.slab_cpu_partial_slabs:
        for k in range(self.slab_cpu_partial[c]):
            if self.slab_node_partial >= self.slab_min_partial:
                free_page(self, c)
            else:
                self.slab_node_partial += 1
        self.slab_cpu_partial[c] = 0
    self.slab_cpu_partial[c] += 1


cdef void kmalloc_objs(Engine self, int c, i64 n) noexcept:
    """n objects kmalloc()ed on CPU c: a new slab each time the CPU's slab is full."""
    cdef i64 a = self.slab_alloc[c], k
    for k in range((a + n + self.slab_objs - 1) // self.slab_objs - (a + self.slab_objs - 1) // self.slab_objs):
        new_slab(self, c)
    self.slab_alloc[c] = a + n


cdef void kfree_objs(Engine self, int src, int c, i64 n) noexcept:
    """n of the objects kmalloc()ed on CPU src freed on CPU c: each slab they empty goes onto
    c's partial list."""
    cdef i64 f = self.slab_freed[src], k
    for k in range((f + n) // self.slab_objs - f // self.slab_objs):
        put_cpu_partial(self, c)
    self.slab_freed[src] = f + n
