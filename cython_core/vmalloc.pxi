# vmalloc() of one page and its vfree() as lib/test_vmalloc.c's kvfree_rcu test
# does them around each call (mm/vmalloc.c, v6.6): the global spinlocks
# free_vmap_area_lock (the free-space tree), vmap_area_lock (the busy tree) and
# purge_vmap_area_lock (the lazily freed areas), and the lazy purge that merges
# the freed areas back once vmap_lazy_nr exceeds lazy_max_pages(), after a TLB
# flush of every CPU.  A lock is free again at a time; a CPU that takes it after
# another first pulls its cache line (line_cost()), and waits while it is held.
#
# Included by _core.pyx: module-level functions on the Engine.

cdef enum:
    VMAP_FREE_LOCK = 0     # free_vmap_area_lock
    VMAP_AREA_LOCK = 1     # vmap_area_lock
    VMAP_PURGE_LOCK = 2    # purge_vmap_area_lock
    VMAP_LOCKS = 3


cdef void vmalloc_init(Engine self, v) noexcept:
    cdef int k
    self.vm_alloc_ns = v.alloc_ns
    self.vm_insert_ns = v.insert_ns
    self.vm_setup_ns = v.setup_ns
    self.vm_pages_ns = v.pages_ns
    self.vm_unlink_ns = v.unlink_ns
    self.vm_purge_add_ns = v.purge_add_ns
    self.vm_unmap_ns = v.unmap_ns
    self.vm_area_pages = v.area_pages
    self.vm_lazy_max_pages = v.lazy_max_pages
    for k in range(VMAP_LOCKS):
        self.vm_lock_free[k] = 0
        self.vm_lock_cpu[k] = -1


cdef i64 vmap_spin(Engine self, int k, int c, i64 t, i64 hold) noexcept:
    """CPU c takes global lock k at t for `hold` ns; returns when it releases it."""
    cdef i64 wait
    if self.vm_lock_cpu[k] >= 0 and self.vm_lock_cpu[k] != c:
        t += line_cost(self, self.vm_lock_cpu[k], c)
    wait = spin_wait(&self.vm_lock_free[k], t, hold)
    self.n_vmap_wait_ns += wait
    self.vm_lock_cpu[k] = c
    return t + wait + hold


cdef i64 vmalloc_page(Engine self, int c, i64 t0) noexcept:
    """vmalloc(PAGE_SIZE) on CPU c from t0: alloc_vmap_area(), setup_vmalloc_vm(), the
    page and its mapping; returns its duration."""
    cdef i64 t = vmap_spin(self, VMAP_FREE_LOCK, c, t0, self.vm_alloc_ns)   # __alloc_vmap_area()
    t = vmap_spin(self, VMAP_AREA_LOCK, c, t, self.vm_insert_ns)            # insert_vmap_area()
    t = vmap_spin(self, VMAP_AREA_LOCK, c, t, self.vm_setup_ns)             # setup_vmalloc_vm()
    return t + self.vm_pages_ns - t0


cdef i64 vfree_page(Engine self, int c, i64 t0) noexcept:
    """vfree() of such an area on CPU c from t0: find_unlink_vmap_area(), the unmap and
    free_vmap_area_noflush(), which may drain the lazy areas; returns its duration."""
    cdef i64 t = vmap_spin(self, VMAP_AREA_LOCK, c, t0, self.vm_unlink_ns)  # find_unlink_vmap_area()
    t = vmap_spin(self, VMAP_PURGE_LOCK, c, t + self.vm_unmap_ns, self.vm_purge_add_ns)
    self.vm_lazy_nr += self.vm_area_pages
    if self.vm_lazy_nr > self.vm_lazy_max_pages:
        purge_vmap_area_lazy(self, c, t)
    return t - t0


cdef void purge_vmap_area_lazy(Engine self, int c, i64 t) noexcept:
    """free_vmap_area_noflush() queues drain_vmap_work: flush_tlb_all() by IPI to every
    other CPU, then every lazy area merged back into the free tree.  The merge loop calls
    cond_resched_lock() after each area, which lets a waiting vmalloc() in, so the merges
    are not charged to the lock's waiters; the kworker's own CPU time is not modelled."""
    cdef int other
    for other in range(self.nr_cpus):
        if other != c:
            steal(self, other, self.ipi_handler_ns)  # do_flush_tlb_all()
    self.vm_lazy_nr = 0
    self.n_vmap_purges += 1
