# PELT (kernel/sched/pelt.c, v6.12): each CPU's cfs_rq->avg.util_avg, the utilisation SIS_UTIL
# reads (update_idle_cpu_scan(): the sum of the LLC's cpu_util_cfs()). Time counts in 1024-ns
# units; each 1024 units is a period over which the sum decays by y (y^32 = 1/2); a period
# the CPU ran a fair entity throughout adds 1024 << SCHED_CAPACITY_SHIFT; util_avg is the sum
# over its greatest value (accumulate_sum(), __accumulate_pelt_segments(), decay_load(),
# ___update_load_avg()). The constants are rcusim.kernel.pelt's.
#
# rcusim keeps the CPU's signal, not each entity's: a task's utilisation does not move with it
# when it migrates (the kernel's detach/attach_entity_load_avg()), util_est is not kept
# (cpu_util() takes max(util_avg, util_est)), and the clock is not scaled by frequency or
# capacity (a machine at its one frequency). The signal is brought up to date where the CPU's
# run queue changes (rq_account()) and where it is read: the kernel's cpu_util() reads the value
# as last updated, which for a tickless idle CPU may be from before it went idle.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef enum:
    SCHED_CAPACITY_SHIFT = 10


cdef void pelt_init(Engine self, p) except *:
    cdef int i
    self.pelt = <sched_avg_t *> calloc(self.nr_cpus + 1, sizeof(sched_avg_t))
    if self.pelt == NULL:
        raise MemoryError()
    for i in range(len(p.yn_inv)):
        self.pelt_yn_inv[i] = p.yn_inv[i]
    self.pelt_load_avg_max = p.load_avg_max


cdef inline u64 decay_load(Engine self, u64 val, u64 n) noexcept:
    """val * y^n."""
    if n > 32 * 63:
        return 0
    if n >= 32:
        val >>= n // 32
        n %= 32
    return (val * self.pelt_yn_inv[n]) >> 32


cdef void update_cpu_util(Engine self, int c) noexcept:
    """___update_load_sum() and ___update_load_avg() of CPU c's cfs_rq to now, the time since
    its last update spent as it is now: running a fair entity or not."""
    cdef sched_avg_t *sa = &self.pelt[c]
    cdef i64 delta = (self.now - sa.last_update_time) >> 10
    cdef u64 periods, contrib, c1, c2
    cdef bint running = fair_curr(self, c) >= 0
    if delta <= 0:
        return
    sa.last_update_time += delta << 10
    contrib = <u64> delta
    delta += sa.period_contrib
    periods = <u64> (delta // 1024)
    if periods:
        sa.util_sum = <i64> decay_load(self, <u64> sa.util_sum, periods)
        delta %= 1024
        if running:
            # d1, the rest of the first period, decayed; the whole periods; d3, the last one's part
            c1 = decay_load(self, <u64> (1024 - sa.period_contrib), periods)
            c2 = <u64> self.pelt_load_avg_max - decay_load(self, <u64> self.pelt_load_avg_max, periods) - 1024
            contrib = c1 + c2 + <u64> delta
    sa.period_contrib = <int32_t> delta
    if running:
        sa.util_sum += <i64> (contrib << SCHED_CAPACITY_SHIFT)
    if periods:
        sa.util_avg = <int32_t> (sa.util_sum // (self.pelt_load_avg_max - 1024 + sa.period_contrib))
