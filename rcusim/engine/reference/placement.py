"""Where a waking fair task runs (kernel/sched/fair.c, v6.6: select_task_rq_fair(),
record_wakee(), wake_wide(), wake_affine(), select_idle_sibling()) and moving a
sleeping entity to another CPU (set_task_cpu()), written apart from the engine's
placement.pxi.

In the reference only the unbound RCU kthreads move (the GP kthread and the
expedited GP kworker, SCHED_OTHER, on a machine with scheduling domains); there
is no load balancing, which runs only where tasks or NOCB kthreads are unbound.
A CPU's load is the weight of its runnable fair entities (cfs_rq->load.weight).
"""

from rcusim.kernel.fair import POLICY_CFS

HK_KTHREAD_MASK = 0  # housekeeping_cpumask(HK_TYPE_KTHREAD)


class Domains:
    """The scheduling domains (rcusim.kernel.sched_domains), the affinity masks and
    the LLCs' idle-core and SIS_UTIL state."""

    def __init__(self, sim):
        self.nr_cpus = len(sim.cpus)
        self.n_levels = len(sim.inp.placement.sd_imbalance_pct)
        self.imbalance_pct = [int(x) for x in sim.inp.placement.sd_imbalance_pct]
        self.llc_level = -1
        for i, shares in enumerate(sim.inp.placement.sd_shares_llc):
            if shares:
                self.llc_level = i
        self.smt_active = bool(sim.inp.placement.sd_smt) if self.n_levels else False
        self.sd_of = [int(x) for x in sim.inp.placement.sd_of]
        self.sd_cpus = [int(x) for x in sim.inp.placement.sd_cpus]
        self.sd_first = [int(x) for x in sim.inp.placement.sd_first]
        self.cpu_llc = [int(x) for x in sim.inp.topology.cpu_llc]
        self.aff = [[bool(v) for v in m] for m in sim.inp.placement.aff_masks]
        nd = len(self.sd_first) - 1 if self.n_levels else 0
        self.has_idle_cores = [self.smt_active] * nd
        self.nr_idle_scan = [self.weight(d) for d in range(nd)]

    def domain(self, level: int, c: int) -> int:
        return self.sd_of[level * self.nr_cpus + c]

    def weight(self, d: int) -> int:
        return self.sd_first[d + 1] - self.sd_first[d]

    def cpus_of(self, d: int):
        return self.sd_cpus[self.sd_first[d]:self.sd_first[d + 1]]

    def share_cache(self, a: int, b: int) -> bool:
        return a == b or self.cpu_llc[a] == self.cpu_llc[b]


def kthread_place_at_wakeup(sim, ent) -> None:
    """kthread_create(): an unbound SCHED_OTHER kthread, placed at each wake-up."""
    if not (sim.domains.n_levels and ent.fair):
        return
    ent.aff = HK_KTHREAD_MASK
    if not cpu_allowed(sim, ent, ent.cpu.index):
        ent.cpu = sim.cpus[select_fallback_rq(sim, ent, ent.cpu.index)]


def cpu_allowed(sim, ent, c: int) -> bool:
    if ent.aff < 0:
        return c == ent.cpu.index
    return sim.domains.aff[ent.aff][c]


def nr_running(sim, c: int) -> int:
    return sim.cpus[c].nr_running()


def available_idle_cpu(sim, c: int) -> bool:
    return sim.cpus[c].available_idle()


def cpu_load(sim, c: int) -> int:
    cpu = sim.cpus[c]
    cur = cpu.fair_curr()
    return sum(e.weight for e in cpu.cfs.queued) + (cur.weight if cur is not None else 0)


def record_wakee(sim, waker, ent) -> None:
    j = sim.env.now // sim.inp.sched.jiffy_ns
    if j > waker.wakee_flip_decay_ts + 1_000_000_000 // sim.inp.sched.jiffy_ns:
        waker.wakee_flips >>= 1
        waker.wakee_flip_decay_ts = j
    if waker.last_wakee is not ent:
        waker.last_wakee = ent
        waker.wakee_flips += 1


def wake_wide(sim, waker, ent, this_cpu: int) -> bool:
    d = sim.domains
    factor = d.weight(d.domain(d.llc_level, this_cpu)) if d.llc_level >= 0 else 1
    master, slave = waker.wakee_flips, ent.wakee_flips
    if master < slave:
        master, slave = slave, master
    return not (slave < factor or master < slave * factor)


def wake_affine(sim, level: int, ent, this_cpu: int, prev: int) -> int:
    d = sim.domains
    if available_idle_cpu(sim, this_cpu) and d.share_cache(this_cpu, prev):
        return prev if available_idle_cpu(sim, prev) else this_cpu
    if available_idle_cpu(sim, prev):
        return prev
    this_eff = (cpu_load(sim, this_cpu) + ent.weight) * 100
    prev_eff = cpu_load(sim, prev) * (100 + (d.imbalance_pct[level] - 100) // 2)
    return this_cpu if this_eff < prev_eff else prev


def select_idle_smt(sim, ent, prev: int) -> int:
    for c in sim.domains.cpus_of(sim.domains.domain(0, prev)):
        if c != prev and cpu_allowed(sim, ent, c) and available_idle_cpu(sim, c):
            return c
    return -1


def select_idle_core(sim, ent, c: int, idle_cpu: list) -> int:
    idle = True
    for s in sim.domains.cpus_of(sim.domains.domain(0, c)):
        if not available_idle_cpu(sim, s):
            idle = False
        elif idle_cpu[0] < 0 and cpu_allowed(sim, ent, s):
            idle_cpu[0] = s
    return c if idle else -1


def select_idle_cpu(sim, ent, llc: int, has_idle_core: bool, target: int) -> int:
    d = sim.domains
    cpus = d.cpus_of(llc)
    n = len(cpus)
    nr = 1 << 30
    idle_cpu = [-1]
    if not has_idle_core:
        nr = d.nr_idle_scan[llc] + 1
        if nr == 1:
            return -1
    start = 0
    while start < n and cpus[start] <= target:
        start += 1
    for k in range(n):
        c = cpus[(start + k) % n]
        if not cpu_allowed(sim, ent, c):
            continue
        if has_idle_core:
            i = select_idle_core(sim, ent, c, idle_cpu)
            if i >= 0:
                return i
        else:
            nr -= 1
            if nr <= 0:
                return -1
            if available_idle_cpu(sim, c):
                return c
    if has_idle_core:
        d.has_idle_cores[llc] = False
    return idle_cpu[0]


def select_idle_sibling(sim, ent, prev: int, target: int, this_cpu: int, waker) -> int:
    d = sim.domains
    if available_idle_cpu(sim, target):
        return target
    if prev != target and d.share_cache(prev, target) and available_idle_cpu(sim, prev):
        return prev
    if (waker is not None and waker.per_cpu_kthread and prev == this_cpu
            and nr_running(sim, this_cpu) <= 1):
        return prev
    recent = ent.recent_used_cpu
    ent.recent_used_cpu = prev
    if (recent >= 0 and recent != prev and recent != target and d.share_cache(recent, target)
            and available_idle_cpu(sim, recent) and cpu_allowed(sim, ent, recent)):
        return recent
    if d.llc_level < 0:
        return target
    llc = d.domain(d.llc_level, target)
    has_idle_core = False
    if d.smt_active:
        has_idle_core = d.has_idle_cores[llc]
        if not has_idle_core and d.share_cache(prev, target):
            i = select_idle_smt(sim, ent, prev)
            if i >= 0:
                return i
    i = select_idle_cpu(sim, ent, llc, has_idle_core, target)
    return i if i >= 0 else target


def select_task_rq_fair(sim, ent, this_cpu) -> int:
    """The CPU a waking fair entity runs on; this_cpu is the waker's Cpu (None: none)."""
    d = sim.domains
    prev = new_cpu = ent.cpu.index
    waker = None
    want_affine = False
    tc = this_cpu.index if this_cpu is not None else -1
    if this_cpu is not None:
        waker = this_cpu.curr
        if waker is not None:
            record_wakee(sim, waker, ent)
        want_affine = (waker is None or not wake_wide(sim, waker, ent, tc)) and cpu_allowed(sim, ent, tc)
    if want_affine and tc != prev:
        for level in range(d.n_levels):
            if d.domain(level, tc) == d.domain(level, prev):
                new_cpu = wake_affine(sim, level, ent, tc, prev)
                break
    return select_idle_sibling(sim, ent, prev, new_cpu, tc, waker)


def select_fallback_rq(sim, ent, cpu: int) -> int:
    for c in range(sim.domains.nr_cpus):
        if sim.domains.share_cache(c, cpu) and cpu_allowed(sim, ent, c):
            return c
    for c in range(sim.domains.nr_cpus):
        if cpu_allowed(sim, ent, c):
            return c
    return cpu


def set_task_cpu(sim, ent, cpu) -> None:
    """Move a sleeping entity to cpu (CFS keeps vruntime relative to min_vruntime;
    EEVDF keeps the lag it was dequeued with)."""
    src = ent.cpu
    if src is cpu:
        return
    if ent.sched_delayed:
        src.cfs.finish_delayed_dequeue(ent)
    if ent.fair and sim.inp.fair.fair_policy == POLICY_CFS:
        ent.vruntime += cpu.cfs.min_vruntime - src.cfs.min_vruntime
    ent.cpu = cpu


def update_idle_core(sim, c: int) -> None:
    """__update_idle_core(): a CPU going idle marks its LLC as having an idle core
    if all its SMT siblings are idle."""
    d = sim.domains
    if not d.smt_active or d.llc_level < 0:
        return
    for s in d.cpus_of(d.domain(0, c)):
        if s != c and not available_idle_cpu(sim, s):
            return
    d.has_idle_cores[d.domain(d.llc_level, c)] = True
