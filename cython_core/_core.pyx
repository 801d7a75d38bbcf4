# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""rcusim._core: the discrete-event engine.

One ``Engine`` owns all state, declared by mechanism in ``rcusim._core.pxd``
(the name Cython looks for beside a module built as rcusim._core).  Each
mechanism lives in its own file, included below as module-level functions
that take the Engine, under the kernel's names:

===================  ==========================================================
eventq.pxd           the event queue (shared with rcusim._membarrier)
rcu_seq.pxd          rcu_seq_*() and ULONG_CMP_*() (shared with rcusim._seq)
random.pxi           the random draws: one stream, in event order
topology.pxi         cores, LLCs and sockets, and a cache-line transfer's cost by distance
sched.pxi            run queues, wake-ups, bursts, preemption, idle
fair.pxi             the fair class: nice weights, EEVDF (v6.6) and CFS
pelt.pxi             PELT: each CPU's utilisation (util_avg), which SIS_UTIL reads
placement.pxi        wake-up CPU selection (select_task_rq_fair()) and set_task_cpu()
balance.pxi          fork placement and load balancing over the scheduling domains
tick.pxi             the scheduling-clock tick: time slices, rcu_sched_clock_irq(), NO_HZ idle
timer.pxi            timer-wheel expiry (calc_wheel_index()) and the CPU that expires a timer
cpuidle.pxi          idle states and the menu governor: the state entered, the tick kept, the exit latency
kvm.pxi              a KVM guest's HLT idle and the host's halt polling (kvm_vcpu_halt())
locking.pxi          rcu_node spinlocks and sleeping mutexes
tree.pxi             rcu_node tree: rcu_report_qs_rnp(), rcu_start_this_gp()
tree_gp.pxi          rcu_gp_kthread: rcu_gp_init(), rcu_gp_fqs(), rcu_gp_cleanup()
tree_sr_normal.pxi   synchronize_rcu() with rcu_normal_wake_from_gp
rcu_segcblist.pxi    rcu_segcblist and the callback pool
tree_callbacks.pxi   call_rcu(), rcu_core(), rcu_do_batch(), softirq, rcuc
tree_nocb.pxi        tree_nocb.h: bypass, nocb_gp_wait(), nocb_cb_wait()
tree_exp.pxi         tree_exp.h: expedited grace periods
tree_barrier.pxi     rcu_barrier(): barrier_mutex, the entrain by IPI, rcu_barrier_callback()
tree_plugin.pxi      rcu_read_unlock(), blocked readers, rcu_note_context_switch(), cond_resched()
readers.pxi          the readers workload: rcu_read_lock()/rcu_read_unlock() loops
page_alloc.pxi       the page allocator's per-CPU lists and the slab pages of kmalloc()
kvfree_rcu.pxi       kvfree_rcu() batching: krcp, bulk pages, the monitor, kfree_rcu_work
workqueue.pxi        an unbound workqueue's worker pool (rcu_reclaim_wq's kworkers)
kfree_scale.pxi      rcuscale's kfree threads (kfree_scale_thread())
vmalloc.pxi          one-page vmalloc()/vfree(): the global vmap locks and the lazy purge
classic.pxi          classic RCU (before v2.6.29) and its 2004 patches
sync_loop.pxi        the sync_loop task: synchronize_rcu*() in a loop (rcuscale's writers too)
rt_latency.pxi       the rt_latency_probe task (amlat) and its timer interrupt
call_rcu_load.pxi    the call_rcu_load tasks: kernel work, non-preemptible sections, call_rcu()
noise.pxi            OS noise: interrupts, kthread bursts and host stalls per CPU
records.pxi          request and grace-period records
checker.pxi          the always-on safety checker (rcu_barrier()'s guarantee too)
trace.pxi            the optional trace buffer
tracepoint.pxi       the kernel's enabled tracepoints (trace_event=): each recorded event's cost on its CPU
===================  ==========================================================

Python builds the engine from an ``EngineInput`` (rcusim.engine.engine_input), calls
``run()`` in chunks and reads the records back as NumPy arrays.

Conventions
-----------
* Time is int64 ns.  A jiffy is ``1e9 // HZ`` ns; ticks and timers fire on
  jiffy boundaries, as the kernel's timer wheel does.
* Entities (tasks and kthreads) run in *bursts* on their CPU.  A burst is
  the CPU time of one step of the entity's loop; the step's effects on RCU
  state happen at the end of the burst (``ent_done``: ``<thread>()`` after
  ``<thread>_next()`` planned it), except callback
  invocation, whose per-callback effects are spread over the burst.
* Interrupt and softirq work on a busy CPU is *stolen* from the running
  burst, which ends that much later; during softirq work the CPU cannot be
  preempted.
* rcu_node locks are modelled as resources that are free again at
  ``lock_free``; waiting for one costs the waiter time (``rnp_lock``).
* Random draws: one stream (a NumPy BitGenerator), drawn in event order,
  every one through ``random.pxi``.
"""

cimport cython
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memset
from libc.math cimport exp, log, sqrt, cos
from cpython.pycapsule cimport PyCapsule_IsValid, PyCapsule_GetPointer
from numpy.random cimport bitgen_t

cdef extern from "<stdlib.h>" nogil:
    int posix_memalign(void **memptr, size_t alignment, size_t size)

cdef extern from *:
    void __builtin_prefetch(const void *addr) nogil

import time

import numpy as np

from defs cimport *
from eventq cimport (event_t, eventq_t, eventq_init, eventq_free, eventq_push, eventq_pop, eventq_first,
                    evheap_t, evheap_init, evheap_push, evheap_pop)
from rcu_seq cimport *
from bitops cimport popcount64, ctz64
from latency cimport *
from libc.stdint cimport INT64_MAX

cdef enum:
    DEFAULT_MAX_RCU_BLIMIT = 10000   # rdp->blimit under callback overload
    MAX_SOFTIRQ_RESTART = 10         # __do_softirq() restarts before ksoftirqd
    MAX_SOFTIRQ_TIME_NS = 2000000    # __do_softirq() time budget (2 ms)
    SR_NORMAL_GP_WAIT_HEAD_MAX = 5   # wait heads for wake-from-GP waiters
    SR_MAX_USERS_WAKE_FROM_GP = 5    # waiters the GP kthread wakes itself

EXIT_DONE = 0
EXIT_MAX_EVENTS = 1
EXIT_TIME_LIMIT = 2
EXIT_STALLED = 3

# The trace record as a NumPy dtype, derived from the struct (one edit adds a column).
cdef trace_rec_t _trace_rec_dummy
TRACE_DTYPE = np.asarray(<trace_rec_t[:1]> (&_trace_rec_dummy)).dtype
TRACE_KINDS = {
    "switch": TR_SWITCH, "wake": TR_WAKE, "gp_start": TR_GP_START, "gp_fqs_start": TR_GP_FQS_START,
    "gp_fqs_end": TR_GP_FQS_END, "gp_end": TR_GP_END, "qs": TR_QS, "ipi_send": TR_IPI_SEND,
    "ipi_handler": TR_IPI_HANDLER, "cb_batch_start": TR_CB_BATCH_START, "cb_invoke": TR_CB_INVOKE,
    "cb_batch_end": TR_CB_BATCH_END, "task_wait": TR_TASK_WAIT, "task_return": TR_TASK_RETURN,
    "exp_start": TR_EXP_START, "exp_end": TR_EXP_END, "callback": TR_CALLBACK, "qs_report": TR_QS_REPORT,
    "nocb_wake": TR_NOCB_WAKE, "migrate": TR_MIGRATE, "cpustart": TR_CPUSTART, "cpuqs": TR_CPUQS,
    "rcu_softirq": TR_RCU_SOFTIRQ,
    "rcu_softirq_exit": TR_RCU_SOFTIRQ_EXIT,
}
NOCB_WAKE_REASONS = {
    NOCB_TPS_WAKE_EMPTY: "WakeEmpty", NOCB_TPS_WAKE_LAZY: "WakeLazy", NOCB_TPS_WAKE_OVF: "WakeOvf",
    NOCB_TPS_WAKE_NOT: "WakeNot", NOCB_TPS_FIRST_BQ: "FirstBQ", NOCB_TPS_FIRST_BQ_WAKE: "FirstBQwake",
    NOCB_TPS_FIRST_BQ_NO_WAKE: "FirstBQnoWake",
}
# The engine's codes, for Python to use by name (never as copied numbers).
ENTITY_KINDS = {
    "task": ENT_TASK, "gp": ENT_GP, "rcuog": ENT_RCUOG, "rcuop": ENT_RCUOP, "sr_worker": ENT_SR_WORKER,
    "rcuc": ENT_RCUC, "exp_gp": ENT_EXP_GP, "exp_par": ENT_EXP_PAR, "reader": ENT_READER,
    "kfree": ENT_KFREE, "kworker": ENT_KWORKER, "rt_probe": ENT_RT_PROBE, "bg": ENT_BG, "krcud": ENT_KRCUD,
    "noise": ENT_NOISE, "releaser": ENT_RELEASER,
}
CALLBACK_KINDS = {"wakeme_after_rcu": CB_WAKEME, "kfree": CB_KFREE, "generic": CB_GENERIC,
                  "rcu_work_rcufn": CB_RCU_WORK, "rcu_scale_async_cb": CB_RCUSCALE_ASYNC,
                  "rcu_barrier_callback": CB_BARRIER, "kfree_obj": CB_KFREE_OBJ, "mt_free_rcu": CB_MT_FREE}
KVFREE_GENERATIONS = {"call_rcu": KV_CALL_RCU, "head_list": KV_HEAD_LIST, "bulk": KV_BULK}
LAST_QS_KINDS = {"gp_kthread_cpu": LAST_QS_GP_CPU, "idle_cpu": LAST_QS_IDLE, "busy_cpu": LAST_QS_BUSY,
                 "blocked_reader": LAST_QS_READER}
PRIMITIVES = {"synchronize_rcu": PRIM_SYNCHRONIZE_RCU,
              "synchronize_rcu_expedited": PRIM_SYNCHRONIZE_RCU_EXPEDITED,
              "call_rcu_hurry": PRIM_CALL_RCU_HURRY}
RECORDS_MODES = {"all": RECORDS_ALL, "sample": RECORDS_SAMPLE, "none": RECORDS_NONE}
TRACEPOINTS = {"sched:sched_switch": TP_SCHED_SWITCH, "sched:sched_waking": TP_SCHED_WAKING,
               "sched:sched_wakeup": TP_SCHED_WAKEUP, "rcu:rcu_grace_period": TP_RCU_GRACE_PERIOD,
               "rcu:rcu_exp_grace_period": TP_RCU_EXP_GRACE_PERIOD,
               "rcu:rcu_quiescent_state_report": TP_RCU_QS_REPORT, "rcu:rcu_fqs": TP_RCU_FQS}
DIGEST_FINE_SUB_BITS = FINE_SUB_BITS


cdef inline int push(Engine self, i64 t, int prio, int kind, int target, i64 arg) except -1:
    if eventq_push(&self.evq, t, prio, kind, target, arg) < 0:
        raise MemoryError()
    return 0


cdef inline event_t pop(Engine self) noexcept:
    return eventq_pop(&self.evq)


include "random.pxi"
include "topology.pxi"
include "sched.pxi"
include "fair.pxi"
include "pelt.pxi"
include "placement.pxi"
include "balance.pxi"
include "tick.pxi"
include "timer.pxi"
include "cpuidle.pxi"
include "kvm.pxi"
include "locking.pxi"
include "tree.pxi"
include "tree_gp.pxi"
include "tree_sr_normal.pxi"
include "rcu_segcblist.pxi"
include "tree_callbacks.pxi"
include "tree_nocb.pxi"
include "tree_exp.pxi"
include "tree_barrier.pxi"
include "tree_plugin.pxi"
include "readers.pxi"
include "page_alloc.pxi"
include "kvfree_rcu.pxi"
include "workqueue.pxi"
include "kfree_scale.pxi"
include "vmalloc.pxi"
include "classic.pxi"
include "sync_loop.pxi"
include "rt_latency.pxi"
include "call_rcu_load.pxi"
include "noise.pxi"
include "records.pxi"
include "checker.pxi"
include "trace.pxi"
include "tracepoint.pxi"


# --- entities: their room, and their steps by kind; callbacks' functions -------------
# Each mechanism's thread has a step in two halves under its kernel name: <thread>_next()
# plans the next burst (its length in ns, or -1 to sleep), <thread>() applies the burst's
# effects at its end and returns the next burst's length or -1. The scheduler runs
# bursts; these two functions say whose.

cdef void ents_alloc(Engine self, inp) except *:
    """Room for every entity of every mechanism, each blocked and unlinked."""
    cdef int e
    # rcu_preempt and the wake-from-GP kworker, rcuc/N or rcuop/N per CPU, the expedited
    # kworker and one per leaf; then what the workloads and options add.
    self.n_ents = (2 + self.nr_cpus + 1 + (self.num_nodes - self.leaf_first)
                   + sync_loop_ents(inp.sync_loop) + tree_nocb_ents(inp.tree_nocb) + readers_ents(inp.readers)
                   + kfree_scale_ents(inp.kfree_scale) + kvfree_rcu_ents(inp.kvfree_rcu)
                   + rt_latency_ents(inp.rt_latency) + call_rcu_load_ents(inp.call_rcu_load)
                   + classic_ents(self, inp.classic) + noise_ents(inp.noise))
    # On cache-line boundaries, so that each of ent_t's groups is one line.
    if sizeof(ent_t) % 64:
        raise AssertionError(f"ent_t is {sizeof(ent_t)} bytes, not whole cache lines: mend its _pad")
    if posix_memalign(<void **> &self.ents, 64, self.n_ents * sizeof(ent_t)) != 0:
        self.ents = NULL
        raise MemoryError()
    memset(self.ents, 0, self.n_ents * sizeof(ent_t))
    for e in range(self.n_ents):
        self.ents[e].state = ST_BLOCKED
        self.ents[e].weight = NICE_0_LOAD
        self.ents[e].next = -1
        self.ents[e].remaining = -1
        self.ents[e].link = -1
        self.ents[e].wait_next = -1
        self.ents[e].aff = -1
        self.ents[e].last_wakee = -1
        self.ents[e].recent_used_cpu = -1


cdef i64 ent_run(Engine self, int e, i64 t0) except -2:
    cdef int kind = self.ents[e].kind
    if kind == ENT_TASK:
        return sync_loop_next(self, e, t0)
    if kind == ENT_GP:
        return rcu_gp_kthread_next(self, e, t0)
    if kind == ENT_RCUOG:
        return nocb_gp_wait_next(self, e)
    if kind == ENT_RCUOP:
        return nocb_cb_wait_next(self, e, t0)
    if kind == ENT_SR_WORKER:
        return rcu_sr_normal_gp_cleanup_work_next(self, e, t0)
    if kind == ENT_READER:
        return rcu_reader_next(self, e, t0)
    if kind == ENT_EXP_GP:
        return rcu_exp_sel_wait_wake_next(self, e, t0)
    if kind == ENT_EXP_PAR:
        return sync_rcu_exp_select_node_cpus_next(self, e, t0)
    if kind == ENT_KFREE:
        return kfree_scale_thread_next(self, e, t0)
    if kind == ENT_KWORKER:
        return kvfree_kworker_next(self, e, t0)
    if kind == ENT_RT_PROBE:
        return rt_latency_probe_next(self, e, t0)
    if kind == ENT_BG:
        return call_rcu_load_next(self, e, t0)
    if kind == ENT_KRCUD:
        return krcud_next(self, e, t0)
    if kind == ENT_RCUC:
        return rcu_cpu_kthread_next(self, e, t0)
    if kind == ENT_NOISE:
        return noise_kthread_next(self, e, t0)
    if kind == ENT_RELEASER:
        return releaser_next(self, e, t0)
    raise RuntimeError(f"entity {e} of unknown kind {kind}")


cdef i64 ent_done(Engine self, int e) except -2:
    cdef int kind = self.ents[e].kind
    if kind == ENT_TASK:
        return sync_loop(self, e)
    if kind == ENT_GP:
        return rcu_gp_kthread(self, e)
    if kind == ENT_RCUOG:
        return nocb_gp_wait(self, e)
    if kind == ENT_RCUOP:
        return nocb_cb_wait(self, e)
    if kind == ENT_SR_WORKER:
        return rcu_sr_normal_gp_cleanup_work(self, e)
    if kind == ENT_READER:
        return rcu_reader(self, e)
    if kind == ENT_EXP_GP:
        return rcu_exp_sel_wait_wake(self, e)
    if kind == ENT_EXP_PAR:
        return sync_rcu_exp_select_node_cpus(self, e)
    if kind == ENT_KFREE:
        return kfree_scale_thread(self, e)
    if kind == ENT_KWORKER:
        return kvfree_kworker(self, e)
    if kind == ENT_RT_PROBE:
        return rt_latency_probe(self, e)
    if kind == ENT_BG:
        return call_rcu_load(self, e)
    if kind == ENT_KRCUD:
        return krcud(self, e)
    if kind == ENT_RCUC:
        return rcu_cpu_kthread(self, e)
    if kind == ENT_NOISE:
        return noise_kthread(self, e)
    if kind == ENT_RELEASER:
        return releaser_step(self, e)
    raise RuntimeError(f"entity {e} of unknown kind {kind}")


cdef void rcu_callback_func(Engine self, int kind, int arg, int runner_cpu, i64 t) except *:
    """rcu_head->func of a callback of `kind` (other than wakeme_after_rcu() and the
    workloads' own, which cost their time and nothing else), invoked by CPU runner_cpu
    and done at t."""
    if kind == CB_RCU_WORK:
        rcu_work_rcufn(self, arg, runner_cpu, t)
    elif kind == CB_RCUSCALE_ASYNC:
        rcu_scale_async_cb(self, arg, runner_cpu)
    elif kind == CB_BARRIER:
        rcu_barrier_callback(self, runner_cpu, t)
    elif kind == CB_KFREE_OBJ:
        kfree_obj_reclaim(self, arg, runner_cpu)
    else:
        raise RuntimeError(f"callback of unknown kind {kind}")


def eventq_hold_rate(i64 pending, i64 ops):
    """Events per second of the engine's bare heap of its events in the hold model:
    ``pending`` events queued, then ``ops`` times take the first and queue one at a
    random later time (uniform over [0, 2**20) ns after it), in (t, prio, seq) order."""
    cdef evheap_t h
    cdef event_t ev
    cdef u64 x = 0x2545F4914F6CDD1D
    cdef i64 i
    if evheap_init(&h, pending + 1) < 0:
        raise MemoryError()
    try:
        ev.kind = ev.arg = 0
        for i in range(pending):
            x ^= x << 13; x ^= x >> 7; x ^= x << 17  # xorshift64
            ev.t = <i64> (x >> 44)
            ev.key = (<u64> PRIO_NORMAL << 63) | <u64> i
            ev.target = <int> i
            evheap_push(&h, &ev)
        t0 = time.perf_counter()
        with nogil:
            for i in range(ops):
                ev = h.ev[0]
                evheap_pop(&h)
                x ^= x << 13; x ^= x >> 7; x ^= x << 17
                ev.t += <i64> (x >> 44)
                ev.key = (<u64> PRIO_NORMAL << 63) | <u64> (pending + i)
                evheap_push(&h, &ev)
        return ops / (time.perf_counter() - t0)
    finally:
        free(h.ev)


def eventq_order(times, prios, kinds, i64 pop_every):
    """Queue events (t, prio, kind), in the order given, into an engine's event queue, taking
    the first event out after every `pop_every` pushes (0: none) and the rest at the end;
    returns the input indices in the order they came out (for tests of the queue)."""
    cdef eventq_t q
    cdef event_t ev
    cdef i64 i, n = len(times)
    out = []
    if eventq_init(&q, 1) < 0:
        raise MemoryError()
    try:
        for i in range(n):
            if eventq_push(&q, times[i], prios[i], kinds[i], <int> i, 0) < 0:
                raise MemoryError()
            if pop_every and (i + 1) % pop_every == 0:
                ev = eventq_pop(&q)
                out.append(ev.target)
        while q.n:
            ev = eventq_pop(&q)
            out.append(ev.target)
        return out
    finally:
        eventq_free(&q)


@cython.final
cdef class Engine:

    def __cinit__(self):
        self.evq.heap.ev = NULL
        self.ents = NULL
        self.cpus = NULL
        self.menu = NULL
        self.aff_mask = NULL
        self.sd_of = self.sd_cpus = self.sd_first = NULL
        self.sd_has_idle_cores = NULL
        self.sd_nr_idle_scan = self.gs_nr = self.gs_idle = self.gs_weight = NULL
        self.gs_load = NULL
        self.grp_cpus = self.grp_first = self.sd_groups = self.sd_groups_first = NULL
        self.gs_over = self.lb_dirty_cpus = NULL
        self.nohz_idle_mask = NULL
        self.lb_last = self.lb_interval = self.lb_newidle_cost = self.lb_newidle_decay = self.lb_scan_ns = NULL
        self.lb_failed = self.lb_newidle_call = self.lb_newidle_success = self.lb_newidle_ratio = NULL
        self.rqlen_ns = NULL
        self.cpu_core = self.cpu_llc = self.cpu_socket = NULL
        self.fscratch = NULL
        self.fair_hpos = NULL
        self.nodes = NULL
        self.groups = NULL
        self.group_cpus = NULL
        self.cbs = NULL
        self.task_wl = NULL
        self.wl_think_ns = NULL
        self.wl_after_ns = NULL
        self.wl_prim = NULL
        self.wl_vmalloc = NULL
        self.req_task = NULL
        self.req_cpu = NULL
        self.req_prim = NULL
        self.req_start = NULL
        self.req_end = NULL
        self.gprec_seq = NULL
        self.gprec_start = NULL
        self.gprec_end = NULL
        self.gprec_qs = NULL
        self.mtx_owner = NULL
        self.mtx_head = NULL
        self.mtx_tail = NULL
        self.mtx_handoff = self.mtx_rt = self.mtx_exp = NULL
        self.gprec_ipis = NULL
        self.gprec_exp = NULL
        self.gprec_fqs = NULL
        self.gprec_last = NULL
        self.lat_fine[0] = self.lat_fine[1] = self.lat_fine[2] = NULL
        self.chk_inv_ns = NULL
        self.cbl_fine = NULL
        self.rwl_len_ns = NULL
        self.rwl_gap_ns = NULL
        self.rwl_len_exp = NULL
        self.rwl_gap_busy = NULL
        self.rwl_preemptible = NULL
        self.krcs = NULL
        self.bnodes = NULL
        self.kt_loop = NULL
        self.kt_i = NULL
        self.kt_start = NULL
        self.kt_mem_begin = NULL
        self.kt_mem_during = NULL
        self.kt_plan = NULL
        self.ms_t = NULL
        self.ms_bytes = NULL
        self.lat_rec = NULL
        self.trace_buf = NULL

    def __dealloc__(self):
        cdef int c
        eventq_free(&self.evq)
        free(self.ents)
        if self.cpus != NULL:
            for c in range(self.nr_cpus):
                free(self.cpus[c].fh)
        free(self.cpus)
        free(self.menu)
        free(self.aff_mask)
        free(self.sd_of)
        free(self.sd_cpus)
        free(self.sd_first)
        free(self.sd_has_idle_cores)
        free(self.sd_nr_idle_scan)
        free(self.pelt)
        free(self.gs_nr)
        free(self.gs_idle)
        free(self.gs_weight)
        free(self.gs_load)
        free(self.grp_cpus)
        free(self.grp_first)
        free(self.sd_groups)
        free(self.sd_groups_first)
        free(self.gs_over)
        free(self.lb_dirty_cpus)
        free(self.nohz_idle_mask)
        free(self.lb_last)
        free(self.lb_interval)
        free(self.lb_failed)
        free(self.lb_newidle_cost)
        free(self.lb_newidle_decay)
        free(self.lb_newidle_call)
        free(self.lb_newidle_success)
        free(self.lb_newidle_ratio)
        free(self.lb_scan_ns)
        free(self.rqlen_ns)
        free(self.cpu_core)
        free(self.cpu_llc)
        free(self.cpu_socket)
        free(self.fscratch)
        free(self.fair_hpos)
        free(self.nodes)
        free(self.groups)
        free(self.group_cpus)
        free(self.cbs)
        free(self.task_wl)
        free(self.wl_think_ns)
        free(self.wl_after_ns)
        free(self.wl_prim)
        free(self.wl_vmalloc)
        free(self.mtx_owner)
        free(self.mtx_head)
        free(self.mtx_tail)
        free(self.mtx_handoff)
        free(self.mtx_rt)
        free(self.mtx_exp)
        free(self.rwl_len_ns)
        free(self.rwl_gap_ns)
        free(self.rwl_len_exp)
        free(self.rwl_gap_busy)
        free(self.rwl_preemptible)
        kvfree_rcu_dealloc(self)
        page_alloc_dealloc(self)
        kfree_scale_dealloc(self)
        records_free(self)
        free(self.lat_rec)
        free(self.trace_buf)
        free(self.chk_inv_ns)

    def __init__(self, inp, bit_generator):
        """Build the engine from an EngineInput (rcusim's engine input: one
        typed section per mechanism) and a NumPy BitGenerator for its draws."""
        cdef int e
        capsule = bit_generator.capsule
        if not PyCapsule_IsValid(capsule, "BitGenerator"):
            raise ValueError("invalid BitGenerator capsule")
        self.bitgen_obj = bit_generator
        self.rng = <bitgen_t *> PyCapsule_GetPointer(capsule, "BitGenerator")

        sched_init(self, inp.sched)
        tracepoint_init(self, inp.tracepoint)
        fair_init(self, inp.fair)
        timer_init(self, inp.timer)
        rcu_core_init(self, inp.tree_callbacks)
        rcu_init_geometry(self, inp.tree)
        rcu_boot_init_percpu_data(self)
        rcu_classic_init(self, inp.classic)  # classic RCU (tree_rcu 0) or Tree RCU, before any callback
        cpuidle_init(self, inp.cpuidle)
        kvm_init(self, inp.kvm)
        vmalloc_init(self, inp.vmalloc)
        topology_init(self, inp.topology)
        placement_init(self, inp.placement)
        pelt_init(self, inp.pelt)
        locking_init(self, inp.locking)
        # Entities: sync_loop tasks first, then kthreads, reader tasks, kfree threads with
        # their kworkers, then probes, call_rcu_load tasks, krcud/N and noise kthreads.
        ents_alloc(self, inp)
        e = sync_loop_init(self, inp.sync_loop)
        grow_cbs(self, max(1024, self.n_tasks + 16))  # the callback pool, grown on demand
        e = rcu_spawn_gp_kthread(self, inp.tree_gp, e)
        e = rcu_sr_normal_init(self, inp.tree_sr_normal, e)
        e = rcu_spawn_nocb_kthreads(self, inp.tree_nocb, e)
        e = rcu_spawn_cpu_kthreads(self, inp.tree_callbacks, e)
        e = rcu_exp_init(self, inp.tree_exp, e)
        barrier_init(self, inp.tree_barrier)
        e = rcu_readers_init(self, inp.readers, e)
        e = kfree_scale_init(self, inp.kfree_scale, e)
        e = kvfree_rcu_init(self, inp.kvfree_rcu, e)
        page_alloc_init(self, inp.page_alloc)
        self.n_ents = e
        records_init(self, inp.records)
        self.timed = inp.run_end.timed
        checker_init(self)
        # The first events, in this order: the random stream is drawn in event order.
        sync_loop_start(self)
        rcu_readers_start(self)
        kfree_scale_start(self)
        e = rt_latency_init(self, inp.rt_latency, self.n_ents)
        e = call_rcu_load_init(self, inp.call_rcu_load, e)
        self.n_ents = krcud_init(self, e)
        noise_init(self, inp.noise, self.n_ents)
        fair_alloc(self)  # every entity exists now
        balance_init(self)

    # --- read-back -----------------------------------------------------------------
    def kvfree_results(self):
        """The rcuscale figures of the last thread to finish, memory over time, counters."""
        cdef i64 i, k = self.kv_last
        t = np.empty(self.ms_n, dtype=np.int64)
        b = np.empty(self.ms_n, dtype=np.int64)
        for i in range(self.ms_n):
            t[i] = self.ms_t[i]
            b[i] = self.ms_bytes[i]
        out = {
            "finished": k >= 0,
            "mem_t_ns": t,
            "mem_bytes": b,
            "peak_bytes": self.kv_peak_bytes,
            "counters": {
                "kvfree_pages_filled": self.n_kv_pages_filled,
                "kvfree_batches_detached": self.n_kv_batches,
                "kvfree_rcu_work_runs": self.n_kv_works,
                "kvfree_pages_ready_without_wait": self.n_kv_ready_pages,
                "kvfree_work_synchronize_rcu": self.n_kv_sync,
                "kvfree_channel3_objects": self.n_kv_head_objs,
                "kvfree_page_allocs": self.n_kv_page_allocs,
                "kvfree_monitor_runs": self.n_kv_monitor_runs,
                "unbound_pool_workers": self.uwq_created,
                "pcp_page_allocs": self.n_pcp_allocs,
                "pcp_page_frees": self.n_pcp_frees,
                "pcp_pages_from_zone": self.n_pcp_refilled,
                "pcp_pages_to_zone": self.n_pcp_drained,
                "pcp_pages_on_lists": sum(self.pcps[c].count for c in range(self.nr_cpus)) if self.pcps != NULL else 0,
            },
        }
        if self.pcps != NULL:
            # Each CPU's list at the end: pages held, its high mark, pages taken from and given
            # back to the zone over the run.
            out["pcp"] = {
                "count": np.array([self.pcps[c].count for c in range(self.nr_cpus)], dtype=np.int64),
                "high": np.array([self.pcps[c].high for c in range(self.nr_cpus)], dtype=np.int64),
                "from_zone": np.array([self.pcps[c].from_zone for c in range(self.nr_cpus)], dtype=np.int64),
                "to_zone": np.array([self.pcps[c].to_zone for c in range(self.nr_cpus)], dtype=np.int64),
            }
        if k >= 0:
            out.update({
                "start_time_ns": self.kt_start[k],
                "end_time_ns": self.kv_end_time,
                "gp_seq_started": self.kv_b_start,
                "gp_seq_started_ns": self.kv_b_start_t,
                "gp_seq_finished": self.kv_b_end,
                "mem_begin_pages": self.kt_mem_begin[k],
                "mem_during_pages": self.kt_mem_during[k],
            })
        return out

    def trace_enable(self, i64 max_records):
        """Record trace events from now on, at most `max_records`; past that,
        recording stops and ``trace_overflow`` is set."""
        if max_records < 1:
            raise ValueError("max_records must be >= 1")
        self.trace_max = max_records
        self.trace_on = 1

    def trace_records(self):
        """The trace records so far, as a NumPy structured array (a copy), in
        recording order; see trace_rec_t in defs.pxd for the fields."""
        if self.trace_n == 0:
            return np.zeros(0, dtype=TRACE_DTYPE)
        return np.asarray(<trace_rec_t[:self.trace_n]> self.trace_buf).copy()

    def sched_stats(self):
        """Per-CPU busy time, PELT utilisation (0..1024) and the CPU-time spent at each
        run-queue length, up to now."""
        cdef int c, k
        for c in range(self.nr_cpus):
            rq_account(self, c)
        busy = np.array([self.cpus[c].busy_ns for c in range(self.nr_cpus)], dtype=np.int64)
        util = np.array([self.pelt[c].util_avg for c in range(self.nr_cpus)], dtype=np.int64)
        hist = np.array([self.rqlen_ns[k] for k in range(RQLEN_BUCKETS)], dtype=np.int64)
        return {"busy_ns": busy, "util_avg": util, "rqlen_ns": hist}

    def entity_runtime_ns(self):
        """CPU time charged to each fair-class entity so far (sum_exec_runtime), in ns."""
        cdef int e
        out = np.zeros(self.n_ents, dtype=np.int64)
        for e in range(self.n_ents):
            out[e] = self.ents[e].sum_exec
        return out

    def entity_kinds(self):
        """(ENT_* kind, CPU, kind-specific index, SCHED_FIFO or not, load weight) of every
        entity, for naming trace tracks and printing its priority."""
        cdef int e
        kind = np.empty(self.n_ents, dtype=np.int32)
        cpu = np.empty(self.n_ents, dtype=np.int32)
        idx = np.empty(self.n_ents, dtype=np.int32)
        rt = np.empty(self.n_ents, dtype=bool)
        weight = np.empty(self.n_ents, dtype=np.int32)
        for e in range(self.n_ents):
            kind[e] = self.ents[e].kind
            cpu[e] = self.ents[e].cpu
            idx[e] = self.ents[e].idx
            rt[e] = self.ents[e].rq == RQ_RT
            weight[e] = self.ents[e].weight
        return {"kind": kind, "cpu": cpu, "idx": idx, "rt": rt, "weight": weight}

    def rcu_nodes(self):
        """Level (0 = root), grplo and grphi of every rcu_node, for the trace writers."""
        cdef int n, p
        level = np.zeros(self.num_nodes, dtype=np.int32)
        grplo = np.empty(self.num_nodes, dtype=np.int32)
        grphi = np.empty(self.num_nodes, dtype=np.int32)
        for n in range(self.num_nodes):
            p = self.nodes[n].parent
            while p >= 0:
                level[n] += 1
                p = self.nodes[p].parent
            grplo[n] = self.nodes[n].grplo
            grphi[n] = self.nodes[n].grphi
        return {"level": level, "grplo": grplo, "grphi": grphi}

    def run(self, i64 until_ns, i64 max_events):
        """Process events until the workloads finish, ``until_ns`` or ``max_events``.

        Returns an exit reason: EXIT_DONE, EXIT_TIME_LIMIT, EXIT_MAX_EVENTS,
        or EXIT_STALLED (nothing left to happen yet tasks are still waiting).
        """
        cdef event_t ev
        cdef event_t *nx
        cdef i64 n = 0
        self.until_ns = until_ns
        while True:
            if self.tasks_left == 0 and not self.timed:
                return EXIT_DONE
            if self.evq.n == 0:
                return EXIT_STALLED
            if eventq_first(&self.evq).t > until_ns:
                self.now = until_ns
                return EXIT_TIME_LIMIT
            if n >= max_events:
                return EXIT_MAX_EVENTS
            ev = pop(self)
            self.now = ev.t
            n += 1
            self.events += 1
            if self.evq.n:
                # The next event's CPU or entity is one of thousands, far from the cache on
                # a large machine: fetch its line while this event is handled.
                nx = eventq_first(&self.evq)
                if nx.kind == EV_WAKE:
                    __builtin_prefetch(&self.ents[nx.target])
                elif nx.kind == EV_BURST_END or nx.kind == EV_TICK or nx.kind == EV_CPU_RUN:
                    __builtin_prefetch(&self.cpus[nx.target])
            if ev.kind == EV_BURST_END:
                ev_burst_end(self, ev.target, ev.arg)
            elif ev.kind == EV_WAKE:
                ev_wake(self, ev.target, ev.arg)
            elif ev.kind == EV_TICK:
                ev_tick(self, ev.target, ev.arg)
            elif ev.kind == EV_CPU_RUN:
                if self.cpus[ev.target].state == CPU_WAKING:
                    cpu_pick(self, ev.target)
            elif ev.kind == EV_GP_TIMER:
                ev_gp_timer(self, ev.target, ev.arg)
            elif ev.kind == EV_BYPASS_TIMER:
                do_nocb_bypass_wakeup_timer(self, ev.target, ev.arg)
            elif ev.kind == EV_RESCHED:
                self.cpus[ev.target].resched_pending = 0
                if (self.cpus[ev.target].state == CPU_BUSY
                        and self.ents[self.cpus[ev.target].curr].rq == RQ_NORMAL
                        and (self.cpus[ev.target].rq_head[RQ_RT] >= 0 or self.cpus[ev.target].fair_resched)):
                    try_preempt(self, ev.target)
            elif ev.kind == EV_IPI:
                ev_ipi(self, ev.target)
            elif ev.kind == EV_EXP_IPI:
                ev_exp_ipi(self, ev.target)
            elif ev.kind == EV_EXP_DEFERRED:
                ev_exp_deferred(self, ev.target)
            elif ev.kind == EV_KFREE_MONITOR:
                ev_kfree_monitor(self, ev.target, ev.arg)
            elif ev.kind == EV_PROBE_TIMER:
                ev_probe_timer(self, ev.target)
            elif ev.kind == EV_NOISE_IRQ:
                ev_noise_irq(self, ev.target)
            elif ev.kind == EV_IRQ_ENTER_IDLE:
                irq_from_idle(self, ev.target, ev.arg)
            elif ev.kind == EV_IRQ_EXIT_IDLE:
                ev_irq_exit_idle(self, ev.target)
            elif ev.kind == EV_NOISE_KTHREAD:
                ev_noise_kthread(self, ev.target)
            elif ev.kind == EV_NOISE_HOST:
                ev_noise_host(self, ev.target)
            elif ev.kind == EV_TASK_TIMEOUT:
                ev_task_timeout(self, ev.target, ev.arg)
            elif ev.kind == EV_HRTIMER_SLEEP:
                ev_hrtimer_sleep(self, ev.target)
            elif ev.kind == EV_SOFTIRQ_RESTART:
                ev_softirq_restart(self, ev.target, ev.arg)
            elif ev.kind == EV_NOHZ_ILB:
                ev_nohz_ilb(self, ev.target)
            elif ev.kind == EV_BARRIER_IPI:
                ev_barrier_ipi(self, ev.target)
            elif ev.kind == EV_BARRIER_CB:
                ev_barrier_cb(self, ev.target)
            else:
                raise RuntimeError(f"event of unknown kind {ev.kind}")

    @property
    def mean_pending(self):
        """Mean number of events queued when one was taken (0 before the first)."""
        return self.evq.pending_sum / self.events if self.events else 0.0

    def requests(self):
        """The rows kept of finished synchronize_rcu*() calls, as NumPy arrays (views of the
        engine's own arrays, which outlive the engine); with a row sink, those not yet
        handed to it."""
        return {name: col[:self.req_n] for name, col in self.req_cols.items()}

    def stream_rows(self, sink, i64 chunk):
        """Before the run: hand the rows kept over to ``sink(columns, n)`` (columns as
        :meth:`requests` gives them) each time `chunk` of them are made, instead of keeping
        them all. The sink must copy what it keeps: the arrays are reused."""
        if self.req_n or chunk < 1:
            raise ValueError("stream_rows() takes a chunk of at least 1 row, before the run")
        self.row_sink = sink
        records_resize(self, chunk)

    def latency_digest(self):
        """Every finished request, by primitive code: ``count``; ``sum_ns``, ``min_ns`` and
        ``max_ns`` of the latencies; ``log2_us`` (bcc's log2 histogram of whole µs) and
        ``fine`` (the log-linear histogram of ns, latency.pxd) as NumPy arrays; and
        ``breakdown``: ``matched`` requests (those whose snapshot a recorded GP ended) and
        the ``sums_ns`` of call to GP start, GP start to all QS, to GP end, to the wake-up
        asked, to the caller queued, to its running again."""
        cdef int p
        out = {}
        for p in range(PRIM_N):
            if self.lat_count[p] == 0:
                continue
            out[p] = {
                "count": self.lat_count[p], "sum_ns": self.lat_sum_ns[p],
                "min_ns": self.lat_min_ns[p], "max_ns": self.lat_max_ns[p],
                "log2_us": np.array([self.lat_log2_us[p][k] for k in range(LOG2_SLOTS)], dtype=np.int64),
                "fine": np.asarray(<i64[:FINE_SLOTS]> self.lat_fine[p]).copy(),
                "breakdown": {"matched": self.bd_n[p], "sums_ns": [self.bd_sum_ns[p][k] for k in range(6)]},
            }
        return out

    def callback_digest(self):
        """call_rcu() to invocation of the call_rcu_load workloads' callbacks: ``queued``
        (call_rcu() calls), ``count`` (invoked), ``sum_ns``, ``min_ns``, ``max_ns`` and ``fine`` (the log-linear histogram of ns);
        None without such a workload."""
        if self.cbl_fine == NULL:
            return None
        return {"queued": self.cbl_queued, "count": self.cbl_count, "sum_ns": self.cbl_sum_ns, "min_ns": self.cbl_min_ns,
                "max_ns": self.cbl_max_ns, "fine": np.asarray(<i64[:FINE_SLOTS]> self.cbl_fine).copy()}

    def grace_periods(self):
        """Completed grace periods in end order: gp_seq (or expedited_sequence) while
        in progress, start, all-QS-reported and end times, IPIs sent, expedited flag,
        FQS scans and whose report emptied the root (LAST_QS_KINDS; -1 if expedited)."""
        cdef i64 n = self.gprec_n, i
        seq = np.empty(n, dtype=np.int64)
        t0 = np.empty(n, dtype=np.int64)
        tq = np.empty(n, dtype=np.int64)
        t1 = np.empty(n, dtype=np.int64)
        ipis = np.empty(n, dtype=np.int64)
        exp = np.empty(n, dtype=bool)
        fqs = np.empty(n, dtype=np.int64)
        last = np.empty(n, dtype=np.int8)
        cdef i64[::1] vs = seq
        cdef i64[::1] v0 = t0
        cdef i64[::1] vq = tq
        cdef i64[::1] v1 = t1
        cdef i64[::1] vi = ipis
        cdef i64[::1] vf = fqs
        cdef signed char[::1] vl = last
        for i in range(n):
            vs[i] = self.gprec_seq[i]
            v0[i] = self.gprec_start[i]
            vq[i] = self.gprec_qs[i]
            v1[i] = self.gprec_end[i]
            vi[i] = self.gprec_ipis[i]
            exp[i] = self.gprec_exp[i] != 0
            vf[i] = self.gprec_fqs[i]
            vl[i] = self.gprec_last[i]
        return {"gp_seq": seq, "t_start_ns": t0, "t_qs_ns": tq, "t_end_ns": t1, "ipis": ipis, "expedited": exp,
                "fqs_scans": fqs, "last_qs": last}

    def safety(self):
        """The checker's findings: readers checked, Reader Pipe counts, violations."""
        return {
            "readers_checked": self.n_readers_checked,
            "reader_pipe_normal": [self.reader_pipe[0][k] for k in range(3)],
            "reader_pipe_expedited": [self.reader_pipe[1][k] for k in range(3)],
            "violations": self.n_violations,
            "messages": list(self.violations),
        }

    def counters(self):
        out = {
            "events": self.events,
            "context_switches": self.n_ctxsw,
            "callbacks_invoked": self.n_cbs_invoked,
            "wakeups": self.n_wakeups,
            "delayed_dequeues": self.n_delayed_dequeues,
            "idle_exits": self.n_idle_exits,
            "idle_exit_latency_ns": self.n_idle_exit_ns,
            "wakeups_local": self.n_wake_local,
            "wakeups_remote_enqueue": self.n_wake_remote,
            "wakeups_polling": self.n_wake_polling,
            "wakeups_ipi": self.n_wake_ipi,
            "rq_lock_wait_ns": self.n_rq_lock_wait_ns,
            "migrations_wakeup": self.n_migrations_wakeup,
            "migrations_newidle": self.n_migrations_newidle,
            "newidle_tries": self.n_newidle_tries,
            "newidle_skipped": self.n_newidle_skipped,
            "migrations_balance": self.n_migrations_balance,
            "nohz_balance_kicks": self.n_nohz_kicks,
            "rcu_core_passes": self.n_softirq,
            "ticks": self.n_ticks,
            "fqs_scans": self.n_fqs,
            "bypass_enqueues": self.n_bypass_enq,
            "bypass_flushes": self.n_bypass_flush,
            "rnp_lock_wait_ns": self.n_lock_wait_ns,
            "resched_ipis": self.n_ipis,
            "preemptions": self.n_preempt,
            "rcuog_wakeups": self.n_rcuog_wake,
            "gp_kthread_wakeups": self.n_gp_wake,
            "exp_ipis": self.n_exp_ipis,
            "exp_ipis_deferred": self.n_exp_deferred,
            "exp_funnel_waits": self.n_exp_funnel_wait,
            "exp_mutex_waits": self.n_exp_mutex_wait,
            "exp_mutex_steals": self.n_exp_mutex_steal,
            "readers_preempted": self.n_reader_blocked,
            "ksoftirqd_wakeups": self.n_softirqd_wake,
            "softirq_restarts_irq_exit": self.n_softirq_restarts,
            "tasklet_reraises": self.n_tasklet_reraise,
            "krcud_handoffs": self.n_krcud_handoff,
            "noise_irqs": self.n_noise_irqs,
            "noise_irq_ns": self.n_noise_irq_ns,
            "noise_host_stalls": self.n_noise_host,
            "noise_host_ns": self.n_noise_host_ns,
            "noise_kthread_bursts": self.n_noise_bursts,
            "timer_irqs_late": self.n_timer_irqs_late,
            "timer_irq_late_ns": self.n_timer_irq_late_ns,
        }
        if self.tasks_vmalloc:  # lib/test_vmalloc.c's vmalloc()/vfree() (vmalloc.pxi)
            out["vmap_lock_wait_ns"] = self.n_vmap_wait_ns
            out["vmap_purges"] = self.n_vmap_purges
        if self.barrier_check:  # rcu_barrier() callers (tree_barrier.pxi)
            out["rcu_barriers"] = self.n_barriers
            out["rcu_barrier_early_exits"] = self.n_barrier_early
            out["rcu_barrier_ipis"] = self.n_barrier_ipis
            out["rcu_barrier_mutex_waits"] = self.n_barrier_mutex_wait
        if self.tp_on:  # a traced kernel: what its tracepoints recorded (tracepoint.pxi)
            out["tracepoint_events"] = self.n_tp_events
            out["tracepoint_ns"] = self.n_tp_ns
        if self.halt_poll:  # a KVM guest: how its vCPUs' halts ended (kvm.pxi)
            out["halts_polled"] = self.n_halt_polled
            out["halts_blocked"] = self.n_halt_blocked
        return out

    def probe_latencies(self):
        """Scheduling latencies of the rt_latency_probe tasks, in ns (a copy)."""
        cdef i64 i
        out = np.empty(self.lat_n, dtype=np.int64)
        cdef i64[::1] v = out
        for i in range(self.lat_n):
            v[i] = self.lat_rec[i]
        return out

    @property
    def requests_done(self):
        return requests_done(self)

    @property
    def tasks_remaining(self):
        return self.tasks_left

    def state(self):
        """A snapshot of the scheduler and RCU state, for debugging and tests."""
        cdef int e, c
        return {
            "gp_seq": self.gp_seq, "gp_state": self.gp_state, "gp_flags": self.gp_flags,
            "root_qsmask": self.nodes[0].qsmask,
            "ents": [(self.ents[e].kind, self.ents[e].cpu, self.ents[e].state, self.ents[e].phase)
                     for e in range(self.n_ents)],
            "cpus": [(self.cpus[c].state, self.cpus[c].curr, self.cpus[c].nr_queued,
                      [self.cpus[c].seg_len[k] for k in range(4)], [self.cpus[c].seg_gp[k] for k in range(4)],
                      self.cpus[c].byp_len, self.cpus[c].gp_seq) for c in range(self.nr_cpus)],
            "nodes": [(self.nodes[c].qsmask, self.nodes[c].gp_seq, self.nodes[c].gp_seq_needed, self.nodes[c].nocb_wait)
                      for c in range(self.num_nodes)],
            "rcudlist": [self.cpus[c].rcud_len for c in range(self.nr_cpus)],
            "rcu_data": [{"urgent_qs": self.cpus[c].urgent_qs, "need_resched": self.cpus[c].need_resched,
                          "cpu_no_qs": self.cpus[c].cpu_no_qs, "tick_on": self.cpus[c].tick_on,
                          "watching": self.cpus[c].watching} for c in range(self.nr_cpus)],
        }

    def verify(self):
        """Walk the state and return a list of broken invariants (empty when sound)."""
        problems = []
        cdef int n, c, x, count
        cdef cpu_t *cp
        for n in range(self.num_nodes):
            if self.nodes[n].qsmask & ~self.nodes[n].qsmaskinit:
                problems.append(f"rcu_node {n}: qsmask has bits outside qsmaskinit")
            if not gp_in_progress(self) and self.nodes[n].qsmask:
                problems.append(f"rcu_node {n}: qsmask {self.nodes[n].qsmask:#x} with no GP in progress")
            if self.nodes[n].gp_seq > self.gp_seq:
                problems.append(f"rcu_node {n}: gp_seq ahead of rcu_state.gp_seq")
        for c in range(self.nr_cpus):
            cp = &self.cpus[c]
            count = 0
            x = cp.cb_head
            while x >= 0:
                count += 1
                x = self.cbs[x].next
            if count != n_cbs(self, cp):
                problems.append(f"CPU {c}: {count} callbacks listed, segments say {n_cbs(self, cp)}")
            for x in range(4):
                if cp.seg_len[x] < 0:
                    problems.append(f"CPU {c}: segment {x} length {cp.seg_len[x]}")
            if cp.seg_len[1] and cp.seg_len[2] and cp.seg_gp[1] > cp.seg_gp[2]:
                problems.append(f"CPU {c}: WAIT gp_seq after NEXT_READY gp_seq")
        if self.gs_over != NULL:
            lb_flush(self)
            x = lb_sums_wrong(self)
            if x >= 0:
                problems.append(f"load-balancing group {x}: its sums differ from its CPUs'")
        return problems
