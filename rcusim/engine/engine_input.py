"""The engine's input: a resolved variant turned into the values ``rcusim._core.Engine`` takes.

This is the one place where a ``VariantSpec`` (kernel tunables, hardware costs,
workloads) becomes the engine's integers and arrays, one typed section per
mechanism, each named after the engine file that reads it (cython_core/*.pxi).
Every field is named once: a section built with a missing or unknown field is a
TypeError here, and a field the engine asks for that a section lacks is an
AttributeError when the engine is built.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rcusim import _core
from rcusim.errors import ScenarioError
from rcusim.engine.rcuscale import KFREE_OBJ_BYTES, MEMORY_SAMPLE_NS, compute_real, kmalloc_size, kvfree_bulk_max_entr
from rcusim.input.workloads import (GP_ASYNC_MAX_DEFAULT, HELPER_ARRIVE_US, HELPER_POLL_US, CallRcuLoad, KfreeRcuFlood,
                                    Noise, Readers, RtLatencyProbe, SyncLoop)
from rcusim.input.profiles import TIMER_QUANTILES, TIMER_TAIL_QUANTILES, VMALLOC_COSTS, Z_P99
from rcusim.kernel.cpus import cpu_topology
from rcusim.kernel.page_alloc import (PAGE_SIZE, PCP_BATCH_SCALE_MAX, cpu_partial_slabs, min_partial, pcp_sizes,
                                      slab_order)
from rcusim.kernel.pelt import load_avg_max, runnable_avg_yn_inv
from rcusim.kernel.fair import POLICY_CFS, POLICY_EEVDF, POLICY_RR, fair_tunables, weight_of
from rcusim.kernel.sched_domains import sched_domains
from rcusim.kernel.timer import TIMER_SLACK_NS, lvl_depth
from rcusim.kernel.topology import Geometry, nocb_groups, rcu_init_geometry

__all__ = ["EngineInput", "engine_input", "rcu_geometry", "Sched", "Fair", "Placement", "Timer", "Cpuidle", "Kvm",
           "Topology", "Pelt", "Locking", "Tree", "TreeGp", "TreeSrNormal", "TreeCallbacks", "TreeNocb", "TreeExp",
           "TreeBarrier", "ReadersInput", "Classic", "SyncLoopInput", "KfreeScale", "KvfreeRcu", "RtLatency",
           "CallRcuLoadInput", "NoiseInput", "Records", "RunEnd", "Vmalloc", "Tracepoint", "GP_SEQ_INIT"]

#: The kernel starts rcu_state.gp_seq close to wrap on purpose: (0 - 300) << 2.
GP_SEQ_INIT = -300 << 2

#: CONFIG_RCU_CPU_STALL_TIMEOUT default (s); FQS starts resched IPIs at half of it.
RCU_CPU_STALL_TIMEOUT_S = 21


#: Largest values of the engine's C int and int64 fields.
C_INT_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

_section = dataclass(frozen=True, slots=True, kw_only=True)


@_section
class Sched:
    """sched.pxi: run queues, wake-ups, context switches, the tick's and interrupts' costs."""
    jiffy_ns: int
    preemption: int            # CONFIG_PREEMPTION
    gp_cpu: int                # first CPU of the GP kthread and its kworkers (unbound fair ones move)
    ctxsw_ns: int
    wakeup_busy_ns: int
    ipi_latency_ns: int
    tick_ns: int
    softirq_ns: int
    ttwu_ns: int
    ttwu_reuse_since_ns: np.ndarray  # the bins' bounds of the time since the waker's CPU last woke a task
    ttwu_reuse_delta_ns: np.ndarray  # ... and the wake-up's cost from ttwu_ns in each (one more, the last open)
    fault: int                 # a deliberate model fault, for tests of the checker only


@_section
class Fair:
    """fair.pxi: the fair class's policy and tunables."""
    fair_policy: int           # POLICY_RR (before CFS), POLICY_CFS, POLICY_EEVDF
    base_slice_ns: int         # EEVDF base slice, scaled with the CPU count
    eevdf_delay_dequeue: int   # EEVDF's DELAY_DEQUEUE and DELAY_ZERO (v6.12)
    eevdf_rel_deadline: int    # EEVDF's PLACE_REL_DEADLINE (v6.12)
    eevdf_preempt_short: int   # EEVDF's PREEMPT_SHORT in update_curr() (v6.12)
    sched_latency_ns: int      # CFS latency period, scaled
    min_gran_ns: int           # CFS minimum granularity, scaled
    wakeup_gran_ns: int        # CFS wake-up granularity, scaled
    nr_latency: int            # CFS sched_nr_latency


@_section
class Placement:
    """placement.pxi: the scheduling domains and the allowed-CPU masks."""
    sd_imbalance_pct: np.ndarray  # per level (placement.pxi, balance.pxi)
    sd_cache_nice_tries: np.ndarray
    sd_shares_llc: np.ndarray
    sd_smt: int                # the lowest level is SMT (sched_smt_active())
    sd_of: np.ndarray          # each CPU's domain at each level, level-major
    sd_cpus: np.ndarray        # the CPUs of each domain
    sd_first: np.ndarray       # where each domain's CPUs start in sd_cpus
    aff_masks: np.ndarray      # (masks, nr_cpus) uint8 allowed-CPU masks; mask 0 is the kthreads'
                               # housekeeping set, then one per unpinned sync_loop workload
    newidle_lb_cost_only: int  # balance.pxi: newidle balancing weighs avg_idle against its cost only (v5.16)
    newidle_proportional: int  # ... and tries a domain as often as it succeeds (NI_RANDOM, v6.19)


@_section
class Pelt:
    """pelt.pxi: each CPU's utilisation, as PELT keeps it (rcusim.kernel.pelt)."""
    yn_inv: list               # runnable_avg_yN_inv[]: y^n in 32 bits, n < LOAD_AVG_PERIOD
    load_avg_max: int          # LOAD_AVG_MAX


@_section
class Timer:
    """timer.pxi: the timer wheel."""
    timer_wheel_rounds_up: int  # calc_index() rounds expiry up a bucket (v4.8 and later)
    timer_lvl_depth: int       # LVL_DEPTH, the wheel's levels
    timer_pull: int            # idle CPUs' timers expired by a migrator (v6.9 and later)


@_section
class Cpuidle:
    """cpuidle.pxi: idle states and the menu governor, or one idle-exit latency."""
    idle_mu: float             # no states: lognormal idle-exit latency, mean of log(ns)
    idle_sigma: float          # ... and its standard deviation
    idle_wake_q_ns: np.ndarray    # no states: the measured idle-exit latency's quantiles, 0 to 1 (empty: the lognormal)
    idle_wake_tail_ns: np.ndarray # ... and those of its last interval
    idle_exit_us: np.ndarray   # exit latency of each idle state (empty: no table)
    idle_target_us: np.ndarray # target residency of each idle state
    idle_polling0: int         # state 0 polls
    menu_keeps_tick: int       # the governor decides the tick (v4.17 and later)
    hz_periodic: int           # CONFIG_HZ_PERIODIC: the tick never stops, on idle CPUs too
    idle_stop_tick_after_tick: int  # no driver's idle loop stops the tick after a tick (f4c31b07b136)
    idle_mwait: np.ndarray     # the state is entered with MWAIT (no wake-up IPI needed)
    idle_wake_ns: np.ndarray   # what leaving the state costs a wake-up


@_section
class Kvm:
    """kvm.pxi: the CPUs are KVM vCPUs, idle in HLT with the host's halt polling."""
    halt_poll: int             # a KVM guest
    halt_poll_max_ns: int      # kvm.halt_poll_ns
    halt_poll_grow: int        # kvm.halt_poll_ns_grow
    halt_poll_grow_start: int  # kvm.halt_poll_ns_grow_start
    halt_poll_shrink: int      # kvm.halt_poll_ns_shrink
    halt_wake_polled_ns: int   # a wake-up found by the host's poll loop
    halt_wake_blocked_ns: int  # a wake-up of a blocked vCPU thread


@_section
class Topology:
    """topology.pxi: cores, LLCs and sockets (empty: no topology, every remote wake an IPI)."""
    cpu_core: np.ndarray       # core of each CPU
    cpu_llc: np.ndarray        # LLC domain of each CPU
    cpu_socket: np.ndarray     # socket of each CPU
    line_ns: list              # one cache-line transfer by distance (DIST_*)


@_section
class Tree:
    """tree.pxi: the rcu_node tree as rcu_init_geometry() builds it."""
    node_parent: np.ndarray
    node_grpmask: np.ndarray
    node_grplo: np.ndarray
    node_grphi: np.ndarray
    leaf_first: int
    cpu_leaf: np.ndarray
    cpu_grpnum: np.ndarray
    gp_seq_init: int
    rnp_lock_ns: int


@_section
class TreeGp:
    """tree_gp.pxi: the grace-period kthread."""
    jiffies_till_first_fqs: int
    jiffies_till_next_fqs: int
    jiffies_to_sched_qs: int
    jiffies_resched: int       # FQS starts resched_cpu() IPIs after this many jiffies
    gp_kthread_rt: int         # SCHED_FIFO (kthread_prio > 0, or the softirq-driven GPs before v3.7)
    gp_kthread_cpu_qs_early: int     # rcu_gp_init() reports the kthread's own CPU's QS


@_section
class TreeCallbacks:
    """tree_callbacks.pxi: call_rcu(), rcu_core(), rcu_do_batch(), softirq processing, rcuc."""
    preempt_rcu: int
    blimit: int
    qhimark: int
    qlowmark: int
    rcu_divisor: int
    rcu_resched_ns: int
    use_softirq: int
    call_rcu_ns: int
    cb_wakeme_ns: int          # wakeme_after_rcu() with its wake-up at ttwu_ns (ttwu_reuse prices it again)
    cb_barrier_ns: int         # rcu_barrier_callback(): complete(), as the profile's cb_wakeme_ns
    cb_kfree_ns: int
    cb_generic_ns: int
    softirq_time_limit: int    # __do_softirq() bounded by time and need_resched too (v3.9)
    softirq_qs: int            # ksoftirqd's rcu_softirq_qs() after each handle_softirqs() pass (v4.20)
    ksoftirqd_does_its_job: int  # irq exit leaves softirqs to an awake ksoftirqd (v4.10)
    rcuc_rt: int               # rcuc/N run SCHED_FIFO at kthread_prio (rcu_cpu_kthread_setup())


@_section
class TreeNocb:
    """tree_nocb.pxi: offloaded CPUs and their rcuog groups."""
    offloaded: np.ndarray      # per CPU: 1 if its callbacks are offloaded
    group_first: np.ndarray    # group g's CPUs are group_cpus[group_first[g]:group_first[g + 1]]
    group_cpus: np.ndarray
    nocb_nobypass_lim: int     # direct enqueues per jiffy before the bypass list is used
    nocb_cb_rt: int
    rcuo_cond_resched: int     # rcuop reaches cond_resched() after each callback (v4.15, as read)
    jiffies_lazy_flush: int    # how long lazy callbacks may wait in the bypass list (LAZY_FLUSH_JIFFIES)
    nocb_lazy_defer_leader: int     # wake_nocb_gp_defer() reads the leader's deferral for LAZY (v6.17)


@_section
class TreeBarrier:
    """tree_barrier.pxi: rcu_barrier()."""
    barrier_wakes_rcuog: int   # rcu_barrier_entrain() wakes rcuog after flushing the bypass (v6.2)


@_section
class TreeSrNormal:
    """tree_sr_normal.pxi: synchronize_rcu() with rcutree.rcu_normal_wake_from_gp."""
    wake_from_gp: int
    sr_normal_sync_wq: int     # the cleanup work on sync_wq, an ordinary workqueue (v6.10);
                               # before, system_highpri_wq (nice -20)


@_section
class TreeExp:
    """tree_exp.pxi: expedited grace periods."""
    exp_kthread_rt: int
    exp_mutex_rt: int
    exp_funnel_wait_queues: int
    exp_gp_workqueue: int
    exp_par_init: int
    ipi_send_ns: int
    ipi_handler_ns: int


@_section
class Locking:
    """locking.pxi: rcu_node spinlocks and sleeping mutexes."""
    mutex_handoff: int         # MUTEX_FLAG_HANDOFF bounds a plain mutex's stealing (v4.10)


@_section
class Classic:
    """classic.pxi: classic RCU and the 2004 callback patches."""
    tree_rcu: int
    rcumaxbatch: int
    rcuplugticks: int
    krcud_bhlimit: int


@_section
class SyncLoopInput:
    """sync_loop.pxi: one row per sync_loop task, one per sync_loop workload."""
    cpu: np.ndarray
    aff: np.ndarray            # placement.pxi: index of the task's allowed-CPU mask (Placement), -1 = bound to cpu
    kthread: np.ndarray        # placement.pxi: 1 = a kernel thread (is_per_cpu_kthread() when bound)
    fork_balance: np.ndarray   # placement.pxi: 1 = placed at its start by find_idlest_cpu()
    rt: np.ndarray
    weight: np.ndarray         # fair.pxi: load weight from nice
    loops: np.ndarray
    start_ns: np.ndarray
    workload: np.ndarray
    think_ns: list
    after_ns: list
    primitive: list            # _core.PRIMITIVES
    async_max: list            # call_rcu_hurry: callbacks in flight at which rcu_barrier() is called (0: other primitives)
    rcuscale_async_per_task: int        # rcuscale counts its callbacks in flight per task (v6.12), else per CPU
    async_kmalloc_ns: int      # rcuscale's kmalloc() of each rcu_head (before v6.12; a per-task pool after)
    async_cb_ns: int           # rcu_scale_async_cb(): kfree() of the rcu_head before v6.12, an llist_add() after
    vmalloc: list              # vmalloc.pxi: the workload vmalloc()s a page before each call, vfree()s it after
    sleep_jiffies_max: list    # schedule_timeout_idle() of 1 to this many jiffies before each call (0: none)
    runtime_jiffies: list      # a task ends once a jiffy this many after its start's has begun (-1: no such condition)
    until_all_done: list       # 1: a done task calls on until every task of its workload is done (rcu_scale_writer())
    release_cpu: list          # the CPU whose parent thread releases the workload's tasks from a barrier (-1: none)
    sync_entry_ns: int
    # The load helper creating a barrier's unpinned tasks (the profile's thread_start; 0 without):
    thread_create_ns: int      # the parent's pthread_create() up to clone()'s wake_up_new_task()
    thread_unlock_ns: int      # ... its sched_setaffinity() on the task and the start lock's unlock
    thread_lock_ns: int        # a new task's start_thread() up to its start lock (its run less the switch)
    thread_barrier_ns: int     # ... from the lock, unlocked, to the start barrier
    thread_woken_ns: int       # ... woken from the lock, to the barrier (its run less the switch)
    helper_poll_ns: int        # the parent's usleep() while tasks are still to count themselves in
    helper_settle_ns: int      # its usleep() before it arrives at the barrier
    timer_slack_ns: int        # how late its hrtimer sleeps end
    thread_call_rcu_per_1000: int  # call_rcu()s its pthread_create()s make per 1,000 (mt_free_rcu())
    thread_call_rcu_lazy: int  # ... lazy ones (call_rcu() with lazy RCU on)


@_section
class ReadersInput:
    """readers.pxi: one row per reader task, one per readers workload."""
    cpu: np.ndarray
    workload: np.ndarray
    len_ns: list
    gap_ns: list
    len_exp: list
    gap_busy: list
    preemptible: list
    rt: list
    weight: list               # fair.pxi: load weight from nice, per workload


@_section
class KfreeScale:
    """kfree_scale.pxi: rcuscale's kfree threads (none: cpu is empty)."""
    cpu: np.ndarray
    alloc_num: int
    loops: int
    might_resched: int         # preempt=voluntary: the kfree threads' kmalloc(GFP_KERNEL) is a preemption point


@_section
class KvfreeRcu:
    """kvfree_rcu.pxi: kvfree_rcu() batching on the CPUs of rcuscale's kfree threads."""
    has_thread: np.ndarray
    gen: int                   # _core.KVFREE_GENERATIONS: what a kfree_rcu() call does
    lazy: int                  # kfree_by_call_rcu's call_rcu() queues lazy callbacks
    polled: int                # the polled patch as posted: the worker polls each page, synchronize_rcu() for the rest
    drain_ready: int           # kvfree_rcu_drain_ready() in the monitor, queue_rcu_work() for the rest
    chunk: int
    form: int                  # 0 both kfree_rcu() forms at random, 1 single-argument, 2 two-argument
    max_entr: int
    drain_jiffies: int
    kfree_drain_5hz: int       # switch kfree_drain_5hz (KFREE_DRAIN_JIFFIES 5*HZ, in drain_jiffies): the monitor
                               # after 1 jiffy once KVFREE_BULK_MAX_ENTR are queued (schedule_delayed_monitor_work())
    kvfree_page_cache_work: int  # no page allocation in kvfree_call_rcu(); page_cache_work refills the cache
    kvfree_unbound_wq: int     # the monitor and kfree_rcu_work on an unbound workqueue (v6.12)
    cache_prefill: int         # kfree_rcu_batch_init() fills each CPU's page cache at boot
    min_cached: int
    obj_bytes: int
    sample_ns: int
    kfree_ns: int
    kmalloc_ns: int
    kvfree_call_rcu_ns: int
    kfree_bulk_ns: int
    page_alloc_ns: int


@_section
class PageAlloc:
    """page_alloc.pxi: the per-CPU page lists and slab pages of a kfree flood's objects."""
    slab_objs: int             # objects in one order-0 slab of their kmalloc cache (0: no flood)
    cpu_partial_slabs: int     # the cache's s->cpu_partial_slabs and s->min_partial (rcusim.kernel.page_alloc)
    min_partial: int
    pcp_batch: int             # each CPU's list's batch, high_min, high_max (rcusim.kernel.page_alloc)
    pcp_high_min: int
    pcp_high_max: int
    pcp_scale_max: int         # CONFIG_PCP_BATCH_SCALE_MAX
    pcp_free_factor: int       # switch pcp_free_factor (v5.14): frees in a row give back more at a time
    pcp_high_auto: int         # switch pcp_high_auto (v6.7): high moves, refills scale, vmstat decays high
    pcp_start: int             # pages on each CPU's list as the run begins (the profile's pcp_start_pages)


@_section
class RtLatency:
    """rt_latency.pxi: rt_latency_probe tasks."""
    probe_cpu: list
    probe_workload: list
    probe_period_ns: list
    probe_run_ns: list
    probe_samples: list


@_section
class CallRcuLoadInput:
    """call_rcu_load.pxi: call_rcu_load tasks."""
    bg_cpu: list
    bg_workload: list
    bg_weight: list            # fair.pxi: load weight from nice, per workload
    bg_work_ns: list
    bg_groups_per_op: list
    bg_burst: list
    bg_cb_kind: list           # _core.CALLBACK_KINDS
    bg_lazy: list              # call_rcu() is lazy (lazy RCU on, not call_rcu_hurry())
    bg_sleep_jiffies_max: list # schedule_timeout_idle() of 1 to this many jiffies after each operation (0: none)
    bg_sec_first: list
    bg_sec_count: list
    bg_sec_ns: list
    bg_sec_cum: list


@_section
class NoiseInput:
    """noise.pxi: OS-noise streams per CPU (gap 0: no stream)."""
    irq_gap_ns: np.ndarray
    irq_mu: np.ndarray
    irq_sigma: np.ndarray
    kthread_gap_ns: np.ndarray
    kthread_mu: np.ndarray
    kthread_sigma: np.ndarray
    timer_delay: np.ndarray      # 1: the CPU's local timer interrupts arrive late, by the quantiles below
    timer_busy_q_ns: np.ndarray  # per CPU, the delay's quantiles (levels 0, 0.001, ..., 1) while every CPU is busy
    timer_idle_q_ns: np.ndarray  # ... while some CPU is idle
    timer_busy_tail_ns: np.ndarray  # per CPU, the quantiles of the last interval (levels 0.999 to 1) while every CPU is busy
    timer_idle_tail_ns: np.ndarray  # ... while some CPU is idle
    host_gap_ns: np.ndarray      # per CPU, the mean gap between host stalls of a running CPU (0: none)
    host_q_ns: np.ndarray        # per CPU, a stall's quantiles (levels 0, 0.001, ..., 1)
    host_tail_ns: np.ndarray     # ... and those of the last interval


@_section
class Records:
    """records.pxi: which request rows the engine keeps (run.records)."""
    expected_requests: int     # the sync_loop tasks' calls, all told
    mode: int                  # _core.RECORDS_MODES
    sample_below: int          # "sample" keeps a request whose 64-bit hash is below this


@_section
class Vmalloc:
    """vmalloc.pxi: one-page vmalloc()/vfree() of lib/test_vmalloc.c's kvfree_rcu test."""
    alloc_ns: int              # __alloc_vmap_area() under free_vmap_area_lock
    insert_ns: int             # insert_vmap_area() under vmap_area_lock
    setup_ns: int              # setup_vmalloc_vm() under vmap_area_lock
    pages_ns: int              # the page, its mapping, the va and vm structures (no global lock)
    unlink_ns: int             # find_unlink_vmap_area() under vmap_area_lock
    purge_add_ns: int          # merge into the purge tree under purge_vmap_area_lock
    unmap_ns: int              # unmap and page free (no global lock)
    area_pages: int            # vmap_lazy_nr added by one vfree(): the page and its guard page
    lazy_max_pages: int        # lazy_max_pages(): 32 MB of pages x fls(num_online_cpus())


@_section
class Tracepoint:
    """tracepoint.pxi: the kernel's tracepoints enabled on its command line (trace_event=)."""
    events: int                # _core.TRACEPOINTS bits
    event_ns: int              # one traced event in task context (the profile's tracing section)
    event_irq_ns: int          # ... in an interrupt


@_section
class RunEnd:
    """_core.pyx run(): what ends the run."""
    timed: int                 # run.duration_s: its time limit; else the finite workloads finishing


@_section
class EngineInput:
    """One section per engine file, named like it and read only by its init (tests/test_engine_input.py)."""
    sched: Sched
    fair: Fair
    placement: Placement
    pelt: Pelt
    timer: Timer
    cpuidle: Cpuidle
    kvm: Kvm
    topology: Topology
    locking: Locking
    tree: Tree
    tree_gp: TreeGp
    tree_sr_normal: TreeSrNormal
    tree_callbacks: TreeCallbacks
    tree_nocb: TreeNocb
    tree_exp: TreeExp
    tree_barrier: TreeBarrier
    readers: ReadersInput
    classic: Classic
    sync_loop: SyncLoopInput
    kfree_scale: KfreeScale
    kvfree_rcu: KvfreeRcu
    page_alloc: PageAlloc
    rt_latency: RtLatency
    call_rcu_load: CallRcuLoadInput
    noise: NoiseInput
    records: Records
    run_end: RunEnd
    vmalloc: Vmalloc
    tracepoint: Tracepoint


def _sched(spec, fault: int) -> Sched:
    p, costs, reuse = spec.params, spec.hardware.costs, spec.hardware.ttwu_reuse
    return Sched(
        jiffy_ns=1_000_000_000 // p.hz,
        preemption=int(p.preemption),
        # The GP kthread, its kworkers and rcuog leaders live on CPU 0 (housekeeping).
        gp_cpu=0,
        ctxsw_ns=costs.ctxsw_ns,
        wakeup_busy_ns=costs.wakeup_busy_ns,
        ipi_latency_ns=costs.ipi_latency_ns,
        tick_ns=costs.tick_ns,
        softirq_ns=costs.softirq_ns,
        ttwu_ns=costs.ttwu_ns,
        ttwu_reuse_since_ns=np.array(reuse["since_ns"] if reuse else (), dtype=np.int64),
        ttwu_reuse_delta_ns=np.array(reuse["delta_ns"] if reuse else (), dtype=np.int64),
        fault=fault,
    )


def _fair(spec) -> Fair:
    p = spec.params
    tun = fair_tunables(spec.hardware.nr_cpus, base_slice_700us=p.switches.base_slice_700us)
    return Fair(fair_policy=POLICY_EEVDF if p.switches.eevdf else POLICY_CFS if p.switches.cfs else POLICY_RR,
                base_slice_ns=tun.base_slice_ns, eevdf_delay_dequeue=int(p.switches.eevdf_delay_dequeue),
                eevdf_rel_deadline=int(p.switches.eevdf_rel_deadline),
                eevdf_preempt_short=int(p.switches.eevdf_preempt_short),
                sched_latency_ns=tun.latency_ns, min_gran_ns=tun.min_gran_ns, wakeup_gran_ns=tun.wakeup_gran_ns,
                nr_latency=tun.nr_latency)


def _topology(spec) -> Topology:
    topo = spec.hardware.topology
    if topo is None:
        empty = np.zeros(0, dtype=np.int32)
        return Topology(cpu_core=empty, cpu_llc=empty, cpu_socket=empty, line_ns=[0, 0, 0, 0])
    core, llc, socket = cpu_topology(spec.hardware.nr_cpus, topo["smt"], topo["cores_per_llc"],
                                     topo["llcs_per_socket"])
    return Topology(cpu_core=core, cpu_llc=llc, cpu_socket=socket,
                    line_ns=[topo["line_ns"][d] for d in ("smt", "llc", "socket", "remote")])


def _placement(spec, topo: Topology) -> Placement:
    sd = sched_domains(topo.cpu_core, topo.cpu_llc, topo.cpu_socket)
    return Placement(sd_imbalance_pct=sd.imbalance_pct, sd_cache_nice_tries=sd.cache_nice_tries,
                     sd_shares_llc=sd.shares_llc, sd_smt=int(sd.names[:1] == ("SMT",)),
                     sd_of=sd.domain_of.ravel(), sd_cpus=sd.domain_cpus, sd_first=sd.domain_first,
                     aff_masks=_affinity_masks(spec),
                     newidle_lb_cost_only=int(spec.params.switches.newidle_lb_cost_only),
                     newidle_proportional=int(spec.params.switches.newidle_proportional))


def _timer(spec) -> Timer:
    p = spec.params
    return Timer(timer_wheel_rounds_up=int(p.switches.timer_wheel_rounds_up), timer_lvl_depth=lvl_depth(p.hz),
                 timer_pull=int(p.switches.timer_pull))


def _cpuidle(spec) -> Cpuidle:
    # A profile gives idle states, a KVM host's halt polling (kvm.pxi), one idle-exit latency's
    # measured distribution, or its median and p99 (a lognormal).
    p, costs, states, wake = spec.params, spec.hardware.costs, spec.hardware.idle_states, spec.hardware.wakeup_idle
    median = max(costs.wakeup_idle_median_ns or 1, 1)
    p99 = max(costs.wakeup_idle_p99_ns or 1, median)
    return Cpuidle(
        idle_mu=math.log(median),
        idle_sigma=(math.log(p99) - math.log(median)) / Z_P99,
        idle_wake_q_ns=np.array(wake["quantiles_ns"] if wake else (), dtype=np.int64),
        idle_wake_tail_ns=np.array(wake["tail_ns"] if wake else (), dtype=np.int64),
        idle_exit_us=np.array([s["exit_latency_us"] for s in states], dtype=np.int64),
        idle_target_us=np.array([s["target_residency_us"] for s in states], dtype=np.int64),
        idle_polling0=int(bool(states) and states[0]["polling"]),
        menu_keeps_tick=int(p.switches.menu_keeps_tick),
        hz_periodic=int(spec.resolution.hz_periodic),
        idle_stop_tick_after_tick=int(p.switches.idle_stop_tick_after_tick),
        idle_mwait=np.array([s["mwait"] for s in states], dtype=np.int8),
        idle_wake_ns=np.array([s["wake_ns"] for s in states], dtype=np.int64),
    )


def _kvm(spec) -> Kvm:
    hp = spec.hardware.halt_poll
    return Kvm(
        halt_poll=int(hp is not None),
        halt_poll_max_ns=hp["halt_poll_ns"] if hp else 0,
        halt_poll_grow=hp["halt_poll_ns_grow"] if hp else 0,
        halt_poll_grow_start=hp["halt_poll_ns_grow_start"] if hp else 0,
        halt_poll_shrink=hp["halt_poll_ns_shrink"] if hp else 0,
        halt_wake_polled_ns=hp["wake_polled_ns"] if hp else 0,
        halt_wake_blocked_ns=hp["wake_blocked_ns"] if hp else 0,
    )


def _tree(spec, geom: Geometry) -> Tree:
    return Tree(node_parent=geom.node_parent, node_grpmask=geom.node_grpmask, node_grplo=geom.node_grplo,
                node_grphi=geom.node_grphi, leaf_first=geom.leaf_first, cpu_leaf=geom.cpu_leaf,
                cpu_grpnum=geom.cpu_grpnum, gp_seq_init=GP_SEQ_INIT, rnp_lock_ns=spec.hardware.costs.rnp_lock_ns)


def _kthread_rt(p) -> bool:
    """RCU's kthreads run SCHED_FIFO at rcutree.kthread_prio when it is positive. Before the GP
    kthread (v3.7) softirq drove grace periods, which no task can delay: rcusim keeps its GP
    kthread and lets no task delay it either."""
    return p.kthread_prio > 0 or not p.switches.gp_kthread


def _tree_gp(spec) -> TreeGp:
    p = spec.params
    return TreeGp(
        jiffies_till_first_fqs=p.jiffies_till_first_fqs,
        jiffies_till_next_fqs=p.jiffies_till_next_fqs,
        # The kernel takes any long here; larger values than the engine's C types
        # mean the same to it: no run lasts 2**63 jiffies.
        jiffies_to_sched_qs=min(p.jiffies_to_sched_qs, INT64_MAX),
        jiffies_resched=RCU_CPU_STALL_TIMEOUT_S * p.hz // 2,
        gp_kthread_rt=int(_kthread_rt(p)),
        gp_kthread_cpu_qs_early=int(p.switches.gp_kthread_cpu_qs_early),
    )


def _tree_callbacks(spec) -> TreeCallbacks:
    p, costs, reuse = spec.params, spec.hardware.costs, spec.hardware.ttwu_reuse
    return TreeCallbacks(
        preempt_rcu=int(p.preempt_rcu),
        # No CPU queues 2**31 callbacks: a larger blimit means no limit, as to the kernel.
        blimit=min(p.blimit, C_INT_MAX),
        qhimark=p.qhimark,
        qlowmark=p.qlowmark,
        rcu_divisor=p.rcu_divisor,
        rcu_resched_ns=p.rcu_resched_ns,
        use_softirq=int(p.use_softirq),
        call_rcu_ns=costs.call_rcu_ns,
        cb_wakeme_ns=costs.cb_wakeme_ns + (costs.ttwu_ns - reuse["in_cb_wakeme_ns"] if reuse else 0),
        cb_barrier_ns=costs.cb_wakeme_ns,
        cb_kfree_ns=costs.cb_kfree_ns,
        cb_generic_ns=costs.cb_generic_ns,
        softirq_time_limit=int(p.switches.softirq_time_limit),
        softirq_qs=int(p.switches.softirq_qs),
        ksoftirqd_does_its_job=int(p.switches.ksoftirqd_does_its_job),
        # rcu_cpu_kthread_setup() (tree_plugin.h): SCHED_FIFO at kthread_prio with CONFIG_RCU_BOOST only.
        rcuc_rt=int(p.rcu_boost and p.kthread_prio > 0),
    )


def _tree_nocb(spec) -> TreeNocb:
    p, nr_cpus = spec.params, spec.hardware.nr_cpus
    offloaded = np.zeros(nr_cpus, dtype=np.int8)
    offloaded[list(p.nocb_cpus)] = 1
    groups = nocb_groups(list(p.nocb_cpus), nr_cpus, p.nocb_gp_stride) if p.nocb_cpus else []
    return TreeNocb(
        offloaded=offloaded,
        group_first=np.cumsum([0] + [len(g) for g in groups]).astype(np.int32),
        group_cpus=np.array([c for g in groups for c in g], dtype=np.int32),
        # nocb_nobypass_lim_per_jiffy = 16 * 1000 / HZ direct enqueues per jiffy.
        nocb_nobypass_lim=16 * 1000 // p.hz,
        nocb_cb_rt=int(p.nocb_cb_boost and p.kthread_prio > 0),
        rcuo_cond_resched=int(p.switches.rcuo_cond_resched),
        jiffies_lazy_flush=10 * p.hz,  # LAZY_FLUSH_JIFFIES = 10 * HZ
        nocb_lazy_defer_leader=int(p.switches.nocb_lazy_defer_leader),
    )


def _tree_sr_normal(spec) -> TreeSrNormal:
    p = spec.params
    return TreeSrNormal(wake_from_gp=int(p.rcu_normal_wake_from_gp),
                        sr_normal_sync_wq=int(p.switches.sr_normal_sync_wq))


def _tree_exp(spec) -> TreeExp:
    p, costs = spec.params, spec.hardware.costs
    sw = p.switches
    return TreeExp(exp_kthread_rt=int(p.exp_kthread_rt), exp_mutex_rt=int(p.exp_mutex_rt),
                   exp_funnel_wait_queues=int(sw.exp_funnel_wait_queues), exp_gp_workqueue=int(sw.exp_gp_workqueue),
                   exp_par_init=int(sw.exp_par_init), ipi_send_ns=costs.ipi_send_ns,
                   ipi_handler_ns=costs.ipi_handler_ns)


def _classic(spec) -> Classic:
    p = spec.params
    # Callback invocation of classic RCU (before Tree RCU) and the 2004 patches.
    return Classic(tree_rcu=int(p.switches.tree_rcu), rcumaxbatch=p.rcumaxbatch or 0,
                   rcuplugticks=p.rcuplugticks, krcud_bhlimit=p.krcud_bhlimit)


def _affinity_masks(spec) -> np.ndarray:
    """The allowed-CPU masks: first the housekeeping CPUs of unbound kthreads
    (housekeeping_cpumask(HK_TYPE_KTHREAD): all but the nohz_full= CPUs), then the
    `cpus` of each unpinned sync_loop workload, in workload order."""
    nr_cpus = spec.hardware.nr_cpus
    masks = [np.ones(nr_cpus, dtype=np.uint8)]
    masks[0][list(spec.params.nohz_full_cpus)] = 0
    for wl, cpus in zip(spec.workloads, spec.resolution.cpus):
        if isinstance(wl, SyncLoop) and not wl.pinned:
            mask = np.zeros(nr_cpus, dtype=np.uint8)
            mask[list(cpus)] = 1
            masks.append(mask)
    return np.array(masks, dtype=np.uint8)


def _column(parts: list, dtype) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _sync_loop(spec) -> SyncLoopInput:
    costs, p = spec.hardware.costs, spec.params
    cpu, rt, weight, loops, start, wl_idx, think, after, prim, vmalloc = [], [], [], [], [], [], [], [], [], []
    sleep, runtime, async_max, all_done, release = [], [], [], [], []
    aff, fork, kthread, n_masks = [], [], [], 0
    loops_of = [(wl, spec.resolution.cpus[k], spec.resolution.start_cpus[k])
                for k, wl in enumerate(spec.workloads) if isinstance(wl, SyncLoop)]
    for i, (wl, cpus, start_cpus) in enumerate(loops_of):
        primitive = wl.primitive
        if primitive == "call_rcu_hurry":
            pass  # no grace period to wait for: neither switch applies
        elif p.rcu_normal:
            primitive = "synchronize_rcu"  # rcupdate.rcu_normal wins over everything
        elif p.rcu_expedited:
            primitive = "synchronize_rcu_expedited"
        n = wl.tasks
        # Pinned tasks start on their CPUs; unpinned ones are forked by a parent on
        # the first CPU of `cpus` (placed by fork balancing) or on start_cpus.
        first = cpus if wl.pinned else cpus[:1] if start_cpus is None else start_cpus
        cpu.append(np.asarray(first, dtype=np.int32)[np.arange(n) % len(first)])
        # A barrier's threads are cloned on their parent's CPU, bound there as it is, then widened.
        fork.append(np.full(n, int(not wl.pinned and start_cpus is None and wl.start != "barrier"), dtype=np.int8))
        aff.append(np.full(n, -1 if wl.pinned else 1 + n_masks, dtype=np.int32))
        n_masks += not wl.pinned
        kthread.append(np.full(n, int(wl.kthread), dtype=np.int8))
        rt.append(np.full(n, int(wl.rt), dtype=np.int8))
        weight.append(np.full(n, weight_of(wl.nice), dtype=np.int32))
        loops.append(np.full(n, wl.loops, dtype=np.int64))
        start.append(np.full(n, round(wl.start_us * 1000), dtype=np.int64))
        wl_idx.append(np.full(n, i, dtype=np.int32))
        think.append(round(wl.think_us * 1000))
        after.append(costs.kfree_ns if wl.work_after == "kfree" else 0)
        prim.append(_core.PRIMITIVES[primitive])
        vmalloc.append(int(wl.work_after == "vfree"))
        sleep.append(wl.sleep_jiffies_max)
        runtime.append(-1 if wl.min_runtime_s is None else round(wl.min_runtime_s * p.hz))
        all_done.append(int(wl.until_all_done))
        release.append(cpus[0] if wl.start == "barrier" else -1)
        async_max.append(0 if wl.primitive != "call_rcu_hurry" else wl.async_max or GP_ASYNC_MAX_DEFAULT)
    return SyncLoopInput(cpu=_column(cpu, np.int32), aff=_column(aff, np.int32), kthread=_column(kthread, np.int8),
                         fork_balance=_column(fork, np.int8),
                         rt=_column(rt, np.int8), weight=_column(weight, np.int32),
                         loops=_column(loops, np.int64),
                         start_ns=_column(start, np.int64), workload=_column(wl_idx, np.int32),
                         think_ns=think, after_ns=after, primitive=prim,
                         async_max=async_max, rcuscale_async_per_task=int(p.switches.rcuscale_async_per_task),
                         # rcu_scale_alloc() pops the task's own llist from v6.12: a few ns, not charged.
                         async_kmalloc_ns=0 if p.switches.rcuscale_async_per_task else costs.kmalloc_ns,
                         async_cb_ns=costs.cb_generic_ns if p.switches.rcuscale_async_per_task else costs.cb_kfree_ns,
                         vmalloc=vmalloc, sleep_jiffies_max=sleep, runtime_jiffies=runtime,
                         until_all_done=all_done, release_cpu=release,
                         sync_entry_ns=costs.sync_entry_ns, **_thread_start(spec))


def _thread_start(spec) -> dict:
    """The load helper creating a barrier's unpinned tasks: the profile's thread_start (resolution
    refuses such tasks without it). Each measured run holds one context switch, which the engine
    charges apart (ctxsw_ns): a run's own time is the rest, the time from the lock to the barrier
    the straight run's excess over the run to the lock."""
    ts, ctxsw = spec.hardware.thread_start, spec.hardware.costs.ctxsw_ns
    if ts is None:
        return dict(thread_create_ns=0, thread_unlock_ns=0, thread_lock_ns=0, thread_barrier_ns=0,
                    thread_woken_ns=0, helper_poll_ns=0, helper_settle_ns=0, timer_slack_ns=TIMER_SLACK_NS,
                    thread_call_rcu_per_1000=0, thread_call_rcu_lazy=0)
    return dict(thread_create_ns=ts["pthread_create_ns"], thread_unlock_ns=ts["pthread_start_ns"],
                thread_lock_ns=max(ts["lock_run_ns"] - ctxsw, 0),
                thread_barrier_ns=max(ts["barrier_run_ns"] - ts["lock_run_ns"], 0),
                thread_woken_ns=max(ts["woken_run_ns"] - ctxsw, 0),
                helper_poll_ns=HELPER_POLL_US * 1000, helper_settle_ns=HELPER_ARRIVE_US * 1000,
                timer_slack_ns=TIMER_SLACK_NS, thread_call_rcu_per_1000=ts["call_rcu_per_1000"],
                thread_call_rcu_lazy=int(spec.params.lazy))


def _vmalloc(spec) -> Vmalloc:
    vm = spec.hardware.vmalloc or dict.fromkeys(VMALLOC_COSTS, 0)
    nr = spec.hardware.nr_cpus
    # lazy_max_pages(): (32 MB >> PAGE_SHIFT) * fls(num_online_cpus()), 4 KiB pages.
    return Vmalloc(**vm, area_pages=2, lazy_max_pages=(32 * 2**20 // 4096) * nr.bit_length())


def _tracepoint(spec) -> Tracepoint:
    events = spec.resolution.trace_events
    cost = spec.hardware.tracing or {"event_ns": 0, "event_irq_ns": 0}  # resolution refuses events without it
    return Tracepoint(events=sum(_core.TRACEPOINTS[name] for name in events), **cost)


def _readers(spec) -> ReadersInput:
    cpu, workload, len_ns, gap_ns, len_exp, gap_busy, preemptible, rt, weight = [], [], [], [], [], [], [], [], []
    for wl, cpus in zip(spec.workloads, spec.resolution.cpus):
        if not isinstance(wl, Readers):
            continue
        cpu += cpus
        workload += [len(len_ns)] * len(cpus)
        length = round(wl.length_us * 1000)
        len_ns.append(length)
        gap_ns.append(max(0, round(1e9 / wl.rate_per_s) - length))
        len_exp.append(int(wl.length_dist == "exponential"))
        gap_busy.append(int(wl.between == "busy"))
        preemptible.append(int(spec.params.preempt_rcu if wl.preemptible is None else wl.preemptible))
        rt.append(int(wl.rt))
        weight.append(weight_of(wl.nice))
    return ReadersInput(cpu=np.asarray(cpu, dtype=np.int32), workload=np.asarray(workload, dtype=np.int32),
                        len_ns=len_ns, gap_ns=gap_ns, len_exp=len_exp, gap_busy=gap_busy,
                        preemptible=preemptible, rt=rt, weight=weight)


def _flood(spec) -> KfreeRcuFlood | None:
    return next((w for w in spec.workloads if isinstance(w, KfreeRcuFlood)), None)


def _kfree_scale(spec, flood: KfreeRcuFlood | None) -> KfreeScale:
    nr = spec.hardware.nr_cpus
    # set_cpus_allowed_ptr(cpumask_of(me % nr_cpu_ids))
    cpus = np.arange(compute_real(flood.kfree_nthreads, nr) if flood else 0, dtype=np.int32) % nr
    return KfreeScale(cpu=cpus, alloc_num=flood.kfree_alloc_num if flood else 0,
                      loops=flood.kfree_loops if flood else 0, might_resched=int(spec.resolution.might_resched))


def _kvfree_rcu(spec, flood: KfreeRcuFlood | None, threads: KfreeScale, chunk: int) -> KvfreeRcu:
    """kvfree_rcu() on the kfree threads' CPUs; `chunk` 1 gives one event per kfree_rcu() call
    instead of one per page (the aggregation check in the tests)."""
    nr, p, costs, res = spec.hardware.nr_cpus, spec.params, spec.hardware.costs, spec.resolution
    has_thread = np.zeros(nr, dtype=np.int8)
    has_thread[threads.cpu] = 1
    sw = p.switches
    return KvfreeRcu(
        has_thread=has_thread,
        gen=_core.KVFREE_GENERATIONS[res.kfree_gen], lazy=int(res.kfree_lazy),
        polled=int(p.kvfree_polled and not p.kvfree_drain_ready), drain_ready=int(p.kvfree_drain_ready),
        chunk=chunk, form=res.kfree_form,
        max_entr=kvfree_bulk_max_entr(sw),
        drain_jiffies=p.kfree_drain_jiffies, kfree_drain_5hz=int(sw.kfree_drain_5hz),
        kvfree_page_cache_work=int(sw.kvfree_page_cache_work),
        kvfree_unbound_wq=int(sw.kvfree_unbound_wq),
        cache_prefill=int(sw.kvfree_page_cache and not sw.kvfree_page_cache_work),
        min_cached=p.rcu_min_cached_objs,
        obj_bytes=kmalloc_size(KFREE_OBJ_BYTES * flood.kfree_mult) if flood else 0,
        sample_ns=MEMORY_SAMPLE_NS,
        kfree_ns=costs.kfree_ns, kmalloc_ns=costs.kmalloc_ns, kvfree_call_rcu_ns=costs.kvfree_call_rcu_ns,
        kfree_bulk_ns=costs.kfree_bulk_ns, page_alloc_ns=costs.page_alloc_ns,
    )


def _page_alloc(spec, size: int) -> PageAlloc:
    """The lists sized for the machine's memory and the release; the slab of the flood's objects
    of `size` bytes (kvfree_rcu's obj_bytes; 0: no flood)."""
    nr, sw = spec.hardware.nr_cpus, spec.params.switches
    if size == 0:
        return PageAlloc(**dict.fromkeys(PageAlloc.__dataclass_fields__, 0))
    if slab_order(size, nr) > 0:
        raise ScenarioError(f"kmalloc-{size}'s slabs are order {slab_order(size, nr)} on {nr} CPUs; "
                            "rcusim's page allocator hands out order-0 pages only",
                            key="workloads.kfree_mult", allowed="a kfree_mult whose objects fit "
                            f"{4 * (nr.bit_length() + 1)} to an order-0 slab on this many CPUs")
    pcp = pcp_sizes(spec.hardware.memory_mb, nr, sw)
    return PageAlloc(slab_objs=PAGE_SIZE // size, cpu_partial_slabs=cpu_partial_slabs(size),
                     min_partial=min_partial(size), pcp_batch=pcp.batch, pcp_high_min=pcp.high_min,
                     pcp_high_max=pcp.high_max, pcp_scale_max=PCP_BATCH_SCALE_MAX,
                     pcp_free_factor=int(sw.pcp_free_factor), pcp_high_auto=int(sw.pcp_high_auto),
                     pcp_start=spec.hardware.pcp_start_pages)


def _rt_latency(spec) -> RtLatency:
    out = {name: [] for name in RtLatency.__dataclass_fields__}
    for wl, cpus in zip(spec.workloads, spec.resolution.cpus):
        if isinstance(wl, RtLatencyProbe):
            k = len(out["probe_period_ns"])
            out["probe_cpu"] += cpus
            out["probe_workload"] += [k] * len(cpus)
            out["probe_period_ns"].append(round(wl.period_us * 1000))
            out["probe_run_ns"].append(round(wl.run_us * 1000))
            out["probe_samples"].append(wl.samples)
    return RtLatency(**out)


def _call_rcu_load(spec) -> CallRcuLoadInput:
    out = {name: [] for name in CallRcuLoadInput.__dataclass_fields__}
    for wl, cpus in zip(spec.workloads, spec.resolution.cpus):
        if isinstance(wl, CallRcuLoad):
            k = len(out["bg_work_ns"])
            for c in cpus:
                out["bg_cpu"] += [c] * wl.tasks_per_cpu
                out["bg_workload"] += [k] * wl.tasks_per_cpu
            out["bg_work_ns"].append(round(wl.work_us * 1000))
            out["bg_weight"].append(weight_of(wl.nice))
            out["bg_groups_per_op"].append(wl.call_rcu_per_op / wl.burst)
            out["bg_burst"].append(wl.burst)
            out["bg_cb_kind"].append(_core.CALLBACK_KINDS[wl.callback])
            out["bg_lazy"].append(int(spec.params.lazy and not wl.hurry))
            out["bg_sleep_jiffies_max"].append(wl.sleep_jiffies_max)
            out["bg_sec_first"].append(len(out["bg_sec_ns"]))
            out["bg_sec_count"].append(len(wl.nonpreempt))
            cum = 0.0
            for row in wl.nonpreempt:
                cum += row.per_op
                out["bg_sec_ns"].append(round(row.us * 1000))
                out["bg_sec_cum"].append(cum)
    return CallRcuLoadInput(**out)


def _noise(spec) -> NoiseInput:
    """Per-CPU noise streams: mean gap (0: none) and lognormal parameters of the durations."""
    nr_cpus = spec.hardware.nr_cpus
    out = {k: np.zeros(nr_cpus, dtype=np.int64 if k.endswith("gap_ns") else np.int8 if k == "timer_delay"
                       else np.float64)
           for k in NoiseInput.__dataclass_fields__ if not k.endswith(("_q_ns", "tail_ns"))}
    out.update({k: np.zeros((nr_cpus, TIMER_QUANTILES), dtype=np.int64)
                for k in ("timer_busy_q_ns", "timer_idle_q_ns", "host_q_ns")})
    out.update({k: np.zeros((nr_cpus, TIMER_TAIL_QUANTILES), dtype=np.int64)
                for k in ("timer_busy_tail_ns", "timer_idle_tail_ns", "host_tail_ns")})
    for wl, cpus in zip(spec.workloads, spec.resolution.cpus):
        if not isinstance(wl, Noise):
            continue
        cpus = np.asarray(cpus)
        for stream, src in wl.streams().items():
            if src is None or src.rate_hz == 0:
                continue
            out[f"{stream}_gap_ns"][cpus] = round(1e9 / src.rate_hz)
            out[f"{stream}_mu"][cpus] = math.log(src.median_us * 1000)
            out[f"{stream}_sigma"][cpus] = math.log(src.p99_us / src.median_us) / Z_P99
        delay = wl.timer_delay()
        if delay is not None:
            out["timer_delay"][cpus] = 1
            for name, dist in (("busy", delay.all_busy), ("idle", delay.some_idle)):
                out[f"timer_{name}_q_ns"][cpus], out[f"timer_{name}_tail_ns"][cpus] = _quantiles_ns(dist)
        host = wl.host_stalls()
        if host is not None and host.rate_hz > 0:
            out["host_gap_ns"][cpus] = round(1e9 / host.rate_hz)
            out["host_q_ns"][cpus], out["host_tail_ns"][cpus] = _quantiles_ns(host)
    return NoiseInput(**out)


def _quantiles_ns(dist) -> tuple[np.ndarray, np.ndarray]:
    """A measured distribution's quantiles and its last interval's, in ns (the last interval
    evenly spaced where it gives none)."""
    tail = (dist.tail_us if dist.tail_us is not None
            else np.linspace(dist.quantiles_us[-2], dist.quantiles_us[-1], TIMER_TAIL_QUANTILES))
    return (np.round(np.asarray(dist.quantiles_us) * 1000).astype(np.int64),
            np.round(np.asarray(tail) * 1000).astype(np.int64))


def _records(spec, sync_loop: SyncLoopInput) -> Records:
    run = spec.run
    return Records(expected_requests=int(sync_loop.loops.sum()), mode=_core.RECORDS_MODES[run.records],
                   sample_below=min(round(run.sample_fraction * 2**64), 2**64 - 1))


def rcu_geometry(spec) -> Geometry:
    """The rcu_node tree one variant's kernel builds at boot (rcu_init_geometry())."""
    p = spec.params
    return rcu_init_geometry(spec.hardware.nr_cpus, p.fanout, p.fanout_leaf, p.fanout_exact)


def engine_input(spec, fault: int = 0, kfree_chunk: int = 0) -> tuple[EngineInput, Geometry]:
    """The engine's input for one variant, and the rcu_node geometry it was built from."""
    geom = rcu_geometry(spec)
    topology, sync_loop, flood = _topology(spec), _sync_loop(spec), _flood(spec)
    kfree_scale = _kfree_scale(spec, flood)
    kvfree_rcu = _kvfree_rcu(spec, flood, kfree_scale, kfree_chunk)
    inp = EngineInput(sched=_sched(spec, fault), fair=_fair(spec), placement=_placement(spec, topology),
                      pelt=Pelt(yn_inv=runnable_avg_yn_inv(), load_avg_max=load_avg_max()),
                      timer=_timer(spec), cpuidle=_cpuidle(spec), kvm=_kvm(spec), topology=topology,
                      locking=Locking(mutex_handoff=int(spec.params.switches.mutex_handoff)),
                      tree=_tree(spec, geom), tree_gp=_tree_gp(spec), tree_sr_normal=_tree_sr_normal(spec),
                      tree_callbacks=_tree_callbacks(spec), tree_nocb=_tree_nocb(spec), tree_exp=_tree_exp(spec),
                      tree_barrier=TreeBarrier(barrier_wakes_rcuog=int(spec.params.switches.barrier_wakes_rcuog)),
                      readers=_readers(spec), classic=_classic(spec), sync_loop=sync_loop,
                      kfree_scale=kfree_scale, kvfree_rcu=kvfree_rcu, page_alloc=_page_alloc(spec, kvfree_rcu.obj_bytes),
                      rt_latency=_rt_latency(spec), call_rcu_load=_call_rcu_load(spec), noise=_noise(spec),
                      records=_records(spec, sync_loop), run_end=RunEnd(timed=int(spec.run.duration_s is not None)),
                      vmalloc=_vmalloc(spec), tracepoint=_tracepoint(spec))
    return inp, geom
