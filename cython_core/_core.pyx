# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""rcusim._core: the discrete-event engine.

One ``Engine`` owns all state: an event heap of C structs, the CPUs with their
run queues, the rcu_node tree, the per-CPU callback lists (struct rcu_data),
the grace-period kthread, NOCB rcuog/rcuop kthreads, the synchronize_rcu()
wake-from-GP machinery and the workload tasks.  Python builds it from plain
integers and NumPy arrays (see rcusim/simulate.py), calls ``run()`` in chunks
and reads the records back as NumPy arrays.

Conventions
-----------
* Time is int64 ns.  A jiffy is ``1e9 // HZ`` ns; ticks and timers fire on
  jiffy boundaries, as the kernel's timer wheel does.
* Entities (tasks and kthreads) run in *bursts* on their CPU.  A burst is
  the CPU time of one step of the entity's loop; the step's effects on RCU
  state happen at the end of the burst (``ent_done``), except callback
  invocation, whose per-callback effects are spread over the burst.
* Interrupt and softirq work on a busy CPU is *stolen* from the running
  burst, which ends that much later; during softirq work the CPU cannot be
  preempted.
* rcu_node locks are modelled as resources that are free again at
  ``lock_free``; waiting for one costs the waiter time (``rnp_lock``).
* Random draws: one stream (a NumPy BitGenerator), drawn in event order.
  The only draw today is the idle-exit latency of a CPU woken from idle.
"""

cimport cython
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memset
from libc.math cimport exp, log, sqrt, cos
from cpython.pycapsule cimport PyCapsule_IsValid, PyCapsule_GetPointer
from numpy.random cimport bitgen_t

import numpy as np

from defs cimport *

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
    "exp_start": TR_EXP_START, "exp_end": TR_EXP_END,
}
ENTITY_KINDS = {
    "task": ENT_TASK, "gp": ENT_GP, "rcuog": ENT_RCUOG, "rcuop": ENT_RCUOP, "sr_worker": ENT_SR_WORKER,
    "rcuc": ENT_RCUC, "exp_gp": ENT_EXP_GP, "exp_par": ENT_EXP_PAR, "reader": ENT_READER,
}


cdef inline bint seq_lt(i64 a, i64 b) noexcept:
    """ULONG_CMP_LT: no wrap within an int64 run."""
    return a < b


cdef inline i64 rcu_seq_state(i64 s) noexcept:
    return s & 3


cdef inline i64 rcu_seq_snap(i64 s) noexcept:
    return (s + 7) & ~(<i64>3)


cdef inline i64 rcu_seq_endval(i64 s) noexcept:
    return (s | 3) + 1


cdef inline bint rcu_seq_done(i64 cur, i64 s) noexcept:
    return cur >= s


cdef inline bint rcu_seq_started(i64 cur, i64 s) noexcept:
    return ((s - 1) & ~(<i64>3)) < cur


cdef inline bint rcu_seq_completed_gp(i64 old, i64 new) noexcept:
    return old < (new & ~(<i64>3))


cdef inline bint rcu_seq_new_gp(i64 old, i64 new) noexcept:
    return ((old + 3) & ~(<i64>3)) < new


cdef inline int popcount64(u64 x) noexcept:
    cdef int n = 0
    while x:
        x &= x - 1
        n += 1
    return n


cdef inline int ctz64(u64 x) noexcept:
    cdef int n = 0
    while not (x & 1):
        x >>= 1
        n += 1
    return n


@cython.final
cdef class Engine:
    # --- event queue -------------------------------------------------------
    cdef event_t *heap
    cdef i64 heap_n
    cdef i64 heap_cap
    cdef u64 ev_seq
    cdef readonly i64 now
    cdef readonly i64 events

    # --- model objects -----------------------------------------------------
    cdef ent_t *ents
    cdef int n_ents
    cdef cpu_t *cpus
    cdef int nr_cpus
    cdef rnp_t *nodes
    cdef int num_nodes
    cdef int leaf_first
    cdef group_t *groups
    cdef int n_groups
    cdef int *group_cpus
    cdef cb_t *cbs
    cdef int cb_cap
    cdef int cb_free

    # --- tasks and workloads -----------------------------------------------
    cdef int n_tasks
    cdef int tasks_left
    cdef int *task_wl
    cdef int n_wl
    cdef i64 *wl_think_ns
    cdef i64 *wl_after_ns
    cdef int *wl_prim
    # reader workloads
    cdef int n_rwl
    cdef i64 *rwl_len_ns
    cdef i64 *rwl_gap_ns
    cdef int *rwl_len_exp
    cdef int *rwl_gap_busy
    cdef int *rwl_preemptible
    cdef int preemptible_readers

    # --- parameters (resolved kernel values and platform costs) -------------
    cdef i64 jiffy_ns
    cdef int preempt_rcu
    cdef int preemption
    cdef int blimit_default
    cdef i64 qhimark
    cdef i64 qlowmark
    cdef int rcu_divisor
    cdef i64 rcu_resched_ns
    cdef i64 jiffies_till_first_fqs
    cdef i64 jiffies_till_next_fqs
    cdef i64 jiffies_to_sched_qs
    cdef i64 jiffies_resched
    cdef int use_softirq
    cdef i64 nocb_nobypass_lim
    cdef int wake_from_gp
    cdef int gp_cpu
    cdef i64 ctxsw_ns
    cdef i64 wakeup_busy_ns
    cdef double idle_mu
    cdef double idle_sigma
    cdef i64 ipi_latency_ns
    cdef i64 tick_ns
    cdef i64 softirq_ns
    cdef i64 rnp_lock_ns
    cdef i64 cb_cost[4]
    cdef i64 call_rcu_ns
    cdef i64 sync_entry_ns
    cdef i64 ttwu_ns
    cdef i64 ipi_send_ns
    cdef i64 ipi_handler_ns
    cdef int exp_mutex_rt
    cdef int fault

    # --- rcu_state ----------------------------------------------------------
    cdef readonly i64 gp_seq
    cdef int gp_flags
    cdef int gp_state
    cdef int gp_ent
    cdef int in_gp_kthread
    cdef i64 gp_start
    cdef i64 gp_qs_t             # when the root's qsmask emptied
    cdef i64 fqs_deadline
    cdef int fqs_first
    cdef u64 gp_timer_gen
    cdef int gp_pending_phase
    # rcu_normal_wake_from_gp: synchronize_rcu() callers tracked apart
    cdef int srs_next_head, srs_next_tail
    cdef int srs_wait_head, srs_wait_tail
    cdef int srs_done_head, srs_done_tail
    cdef int srs_heads_inuse
    cdef int srs_done_heads
    cdef int sr_ent

    # --- expedited GPs (rcu_state.expedited_sequence and friends) ------------
    cdef readonly i64 exp_seq
    # Sleeping mutexes: rcu_state.exp_mutex, and before v4.6 the funnel's
    # rnp->exp_funnel_mutex (index = node) and rdp->exp_funnel_mutex
    # (index = num_nodes + CPU). Waiters queue FIFO through ent_t.link.
    cdef int n_mtx
    cdef int *mtx_owner          # task holding it, -1 if free
    cdef int *mtx_head
    cdef int *mtx_tail
    cdef int exp_mutex           # index of rcu_state.exp_mutex
    cdef int gp_mutex            # the mutex held for a whole expedited GP
    cdef int exp_funnel_mutexes  # before v4.6: the funnel is mutexes held hand over hand
    cdef int exp_driver_task     # before v4.9: the requester drives its GP itself
    cdef int exp_par             # per-leaf workers select CPUs in parallel
    cdef int exp_driver          # entity driving the current expedited GP
    cdef int exp_ent             # rcu_exp_gp_kthread_worker
    cdef int exp_phase           # EXP_*
    cdef int exp_work_queued     # rcu_exp_work queued on the kworker
    cdef int exp_par_pending     # per-leaf selections not yet flushed
    cdef int exp_last_leaf       # the leaf selected inline by the kworker
    cdef i64 exp_gp_start
    cdef i64 exp_gp_qs           # when the root's expmask emptied
    cdef i64 exp_gp_ipis

    # --- safety checker: the last completed GP of each flavour ----------------
    cdef i64 last_gp_start[2]
    cdef i64 last_gp_seq[2]
    cdef i64 gp_completions[2]
    cdef i64 n_readers_checked
    cdef i64 reader_pipe[2][3]   # readers by GPs (0, 1, 2+) completed during them
    cdef i64 n_violations
    cdef list violations

    # --- random stream ------------------------------------------------------
    cdef object bitgen_obj
    cdef bitgen_t *rng
    cdef int have_spare
    cdef double spare

    # --- cost accumulator: lock hold/wait and callback time of one action ----
    cdef i64 acc

    # --- records ------------------------------------------------------------
    cdef int *req_task
    cdef int *req_cpu
    cdef signed char *req_prim
    cdef i64 *req_start
    cdef i64 *req_end
    cdef i64 req_n
    cdef i64 req_cap
    cdef i64 *gprec_seq
    cdef i64 *gprec_start
    cdef i64 *gprec_end
    cdef i64 *gprec_qs
    cdef i64 *gprec_ipis
    cdef signed char *gprec_exp
    cdef i64 *req_seq
    cdef i64 gprec_n
    cdef i64 gprec_cap
    cdef readonly i64 completion_ns
    cdef readonly dict counters_init
    cdef i64 n_ctxsw, n_cbs_invoked, n_wakeups, n_idle_exits, n_softirq
    cdef i64 n_fqs, n_bypass_enq, n_bypass_flush, n_lock_wait_ns, n_ticks
    cdef i64 n_ipis, n_preempt, n_rcuog_wake, n_gp_wake
    cdef i64 n_exp_ipis, n_exp_deferred, n_exp_funnel_wait, n_exp_mutex_wait, n_exp_mutex_steal
    cdef i64 n_reader_blocked
    # Optional trace buffer (trace_enable()); every hook tests trace_on first.
    cdef bint trace_on
    cdef trace_rec_t *trace_buf
    cdef i64 trace_n
    cdef i64 trace_cap
    cdef readonly bint trace_overflow
    cdef i64 trace_max

    # --- real-time latency: rt_latency_probe, call_rcu_load, 2004 callback patches
    cdef int classic             # kernel.release < 2.6.29: classic RCU's rcu_do_batch()
    cdef int softirq_restart_only # __do_softirq() before v3.9: a restart count, no time or need_resched check
    cdef int rcumaxbatch         # throttle-rcu: callbacks per tasklet pass, 0 = no limit
    cdef int rcuplugticks        # throttle-rcu: ticks the done list waits after a full pass
    cdef int krcud_bhlimit       # rcu-low-lat: callbacks in softirq before krcud/N takes over, 0 = no krcud
    cdef int irq_exit_softirq    # before v4.10 every irq exit runs pending softirqs, ksoftirqd awake or not
    cdef i64[::1] probe_period_ns  # per rt_latency_probe workload
    cdef i64[::1] probe_run_ns
    cdef i64[::1] bg_work_ns     # per call_rcu_load workload: mean preemptible work per operation
    cdef double[::1] bg_groups_per_op # call_rcu() groups queued per operation (mean)
    cdef int[::1] bg_burst       # call_rcu() calls per group
    cdef int[::1] bg_cb_kind     # CB_* of its callbacks
    cdef int[::1] bg_sec_first   # its rows of the section table: [first, first + count)
    cdef int[::1] bg_sec_count
    cdef i64[::1] bg_sec_ns      # section table: length of each non-preemptible section class
    cdef double[::1] bg_sec_cum  # ... and the cumulative probability per operation
    cdef i64 *lat_rec            # probe scheduling latencies, wake-up to running (ns)
    cdef i64 lat_n
    cdef i64 lat_cap
    cdef i64 n_krcud_handoff, n_softirqd_wake, n_tasklet_reraise
    cdef i64 cl_curbatch         # classic RCU: rcu_ctrlblk.curbatch
    cdef i64 cl_maxbatch         # rcu_ctrlblk.maxbatch
    cdef int cl_mask_n           # CPUs left in rcu_ctrlblk.rcu_cpu_mask

    def __cinit__(self):
        self.heap = NULL
        self.ents = NULL
        self.cpus = NULL
        self.nodes = NULL
        self.groups = NULL
        self.group_cpus = NULL
        self.cbs = NULL
        self.task_wl = NULL
        self.wl_think_ns = NULL
        self.wl_after_ns = NULL
        self.wl_prim = NULL
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
        self.gprec_ipis = NULL
        self.gprec_exp = NULL
        self.req_seq = NULL
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
        free(self.heap)
        free(self.ents)
        free(self.cpus)
        free(self.nodes)
        free(self.groups)
        free(self.group_cpus)
        free(self.cbs)
        free(self.task_wl)
        free(self.wl_think_ns)
        free(self.wl_after_ns)
        free(self.wl_prim)
        free(self.req_task)
        free(self.req_cpu)
        free(self.req_prim)
        free(self.req_start)
        free(self.req_end)
        free(self.gprec_seq)
        free(self.gprec_start)
        free(self.gprec_end)
        free(self.gprec_qs)
        free(self.mtx_owner)
        free(self.mtx_head)
        free(self.mtx_tail)
        free(self.gprec_ipis)
        free(self.gprec_exp)
        free(self.req_seq)
        free(self.rwl_len_ns)
        free(self.rwl_gap_ns)
        free(self.rwl_len_exp)
        free(self.rwl_gap_busy)
        free(self.rwl_preemptible)
        self.kvfree_dealloc()
        free(self.lat_rec)
        free(self.trace_buf)

    def __init__(self, dict p, dict topo, dict tasks, dict wl, bit_generator):
        """Build the engine from low-level values (see rcusim/simulate.py)."""
        cdef int i, c, n, g, e, k
        cdef cpu_t *cp
        capsule = bit_generator.capsule
        if not PyCapsule_IsValid(capsule, "BitGenerator"):
            raise ValueError("invalid BitGenerator capsule")
        self.bitgen_obj = bit_generator
        self.rng = <bitgen_t *> PyCapsule_GetPointer(capsule, "BitGenerator")

        self.jiffy_ns = p["jiffy_ns"]
        self.preempt_rcu = p["preempt_rcu"]
        self.preemption = p["preemption"]
        self.blimit_default = p["blimit"]
        self.qhimark = p["qhimark"]
        self.qlowmark = p["qlowmark"]
        self.rcu_divisor = p["rcu_divisor"]
        self.rcu_resched_ns = p["rcu_resched_ns"]
        self.jiffies_till_first_fqs = p["jiffies_till_first_fqs"]
        self.jiffies_till_next_fqs = p["jiffies_till_next_fqs"]
        self.jiffies_to_sched_qs = p["jiffies_to_sched_qs"]
        self.jiffies_resched = p["jiffies_resched"]
        self.use_softirq = p["use_softirq"]
        self.nocb_nobypass_lim = p["nocb_nobypass_lim"]
        self.wake_from_gp = p["wake_from_gp"]
        self.gp_cpu = p["gp_cpu"]
        self.ctxsw_ns = p["ctxsw_ns"]
        self.wakeup_busy_ns = p["wakeup_busy_ns"]
        self.idle_mu = p["idle_mu"]
        self.idle_sigma = p["idle_sigma"]
        self.ipi_latency_ns = p["ipi_latency_ns"]
        self.tick_ns = p["tick_ns"]
        self.softirq_ns = p["softirq_ns"]
        self.rnp_lock_ns = p["rnp_lock_ns"]
        self.cb_cost[CB_WAKEME] = p["cb_wakeme_ns"]
        self.cb_cost[CB_KFREE] = p["cb_kfree_ns"]
        self.cb_cost[CB_GENERIC] = p["cb_generic_ns"]
        self.cb_cost[CB_RCU_WORK] = p["ttwu_ns"]  # rcu_work_rcufn(): __queue_work() wakes a kworker
        self.call_rcu_ns = p["call_rcu_ns"]
        self.sync_entry_ns = p["sync_entry_ns"]
        self.ttwu_ns = p["ttwu_ns"]
        self.ipi_send_ns = p["ipi_send_ns"]
        self.ipi_handler_ns = p["ipi_handler_ns"]
        self.exp_mutex_rt = p["exp_mutex_rt"]
        self.fault = p.get("fault", 0)

        # rcu_node tree, breadth first as rcu_state.node[].
        node_parent = topo["node_parent"]
        node_grpmask = topo["node_grpmask"]
        node_grplo = topo["node_grplo"]
        node_grphi = topo["node_grphi"]
        cpu_leaf = topo["cpu_leaf"]
        cpu_grpnum = topo["cpu_grpnum"]
        self.num_nodes = len(node_parent)
        self.leaf_first = topo["leaf_first"]
        self.nr_cpus = len(cpu_leaf)
        self.nodes = <rnp_t *> malloc(self.num_nodes * sizeof(rnp_t))
        self.cpus = <cpu_t *> malloc(self.nr_cpus * sizeof(cpu_t))
        if self.nodes == NULL or self.cpus == NULL:
            raise MemoryError()
        memset(self.nodes, 0, self.num_nodes * sizeof(rnp_t))
        memset(self.cpus, 0, self.nr_cpus * sizeof(cpu_t))
        self.gp_seq = p["gp_seq_init"]
        for n in range(self.num_nodes):
            self.nodes[n].parent = node_parent[n]
            self.nodes[n].grpmask = <u64> int(node_grpmask[n])
            self.nodes[n].grplo = node_grplo[n]
            self.nodes[n].grphi = node_grphi[n]
            self.nodes[n].gp_seq = self.gp_seq
            self.nodes[n].gp_seq_needed = self.gp_seq
            self.nodes[n].nocb_wait = -1
            self.nodes[n].par_ent = -1
            for k in range(4):
                self.nodes[n].exp_wq_head[k] = -1
                self.nodes[n].exp_wq_tail[k] = -1
        # qsmaskinit and expmaskinit: every CPU online from the start (no hotplug modelled).
        for n in range(self.num_nodes):
            if self.nodes[n].parent >= 0:
                self.nodes[self.nodes[n].parent].qsmaskinit |= self.nodes[n].grpmask
                self.nodes[self.nodes[n].parent].expmaskinit |= self.nodes[n].grpmask
        for c in range(self.nr_cpus):
            cp = &self.cpus[c]
            cp.curr = -1
            cp.rq_head[0] = -1
            cp.rq_head[1] = -1
            cp.rq_tail[0] = -1
            cp.rq_tail[1] = -1
            cp.state = CPU_IDLE
            cp.leaf = cpu_leaf[c]
            cp.grpmask = (<u64> 1) << <int> cpu_grpnum[c]
            self.nodes[cp.leaf].qsmaskinit |= cp.grpmask
            self.nodes[cp.leaf].expmaskinit |= cp.grpmask
            cp.reader = -1
            cp.gp_seq = self.gp_seq
            cp.rcuop = -1
            cp.group = -1
            cp.rcuc = -1
            cp.cb_head = -1
            cp.cb_tail = -1
            cp.byp_head = -1
            cp.byp_tail = -1
            cp.blimit = self.blimit_default
            cp.nobypass_last = -1

        # Entities: tasks first, then kthreads.
        task_cpu = tasks["cpu"]
        task_rt = tasks["rt"]
        task_loops = tasks["loops"]
        task_start = tasks["start_ns"]
        task_wl = tasks["workload"]
        self.n_tasks = len(task_cpu)
        self.tasks_left = self.n_tasks
        offloaded = topo["offloaded"]
        group_first = topo["group_first"]
        group_cpus = topo["group_cpus"]
        self.n_groups = len(group_first) - 1 if len(group_first) > 0 else 0
        rd_cpu = wl["rd_cpu"]
        rd_wl = wl["rd_workload"]
        kf = wl["kfree"]
        self.n_ents = (self.n_tasks + 2 + self.n_groups + self.nr_cpus + 1
                       + (self.num_nodes - self.leaf_first) + len(rd_cpu)
                       + len(kf["cpu"]) + (KFREE_N_BATCHES + 1) * int(sum(kf["has_thread"]))
                       + len(wl["probe_cpu"]) + len(wl["bg_cpu"])
                       + (self.nr_cpus if p["krcud_bhlimit"] else 0))
        self.ents = <ent_t *> malloc(self.n_ents * sizeof(ent_t))
        if self.ents == NULL:
            raise MemoryError()
        memset(self.ents, 0, self.n_ents * sizeof(ent_t))
        for e in range(self.n_ents):
            self.ents[e].state = ST_BLOCKED
            self.ents[e].next = -1
            self.ents[e].remaining = -1
            self.ents[e].link = -1
            self.ents[e].wait_next = -1
        self.task_wl = <int *> malloc((self.n_tasks + 1) * sizeof(int))
        for e in range(self.n_tasks):
            self.ents[e].kind = ENT_TASK
            self.ents[e].cpu = task_cpu[e]
            self.ents[e].rq = RQ_RT if task_rt[e] else RQ_NORMAL
            self.ents[e].loops_left = task_loops[e]
            self.ents[e].phase = TASK_NEW
            self.task_wl[e] = task_wl[e]
        e = self.n_tasks
        self.gp_ent = e
        self.ents[e].kind = ENT_GP
        self.ents[e].cpu = self.gp_cpu
        self.ents[e].rq = RQ_RT if p["gp_kthread_rt"] else RQ_NORMAL
        e += 1
        self.sr_ent = e
        self.ents[e].kind = ENT_SR_WORKER
        self.ents[e].cpu = self.gp_cpu
        self.ents[e].rq = RQ_NORMAL
        self.ents[e].head_enqueue = p["sr_worker_highpri"]
        e += 1
        self.groups = <group_t *> malloc((self.n_groups + 1) * sizeof(group_t))
        self.group_cpus = <int *> malloc((len(group_cpus) + 1) * sizeof(int))
        for i in range(len(group_cpus)):
            self.group_cpus[i] = group_cpus[i]
        for g in range(self.n_groups):
            self.groups[g].first = group_first[g]
            self.groups[g].count = group_first[g + 1] - group_first[g]
            self.groups[g].nocb_gp_sleep = 1
            self.groups[g].timer_gen = 0
            self.groups[g].ent = e
            self.ents[e].kind = ENT_RCUOG
            self.ents[e].idx = g
            self.ents[e].cpu = self.group_cpus[group_first[g]]
            self.ents[e].rq = RQ_RT if p["gp_kthread_rt"] else RQ_NORMAL
            for i in range(group_first[g], group_first[g + 1]):
                self.cpus[self.group_cpus[i]].group = g
            e += 1
        for c in range(self.nr_cpus):
            self.ents[e].cpu = c
            self.ents[e].idx = c
            if offloaded[c]:
                self.cpus[c].offloaded = 1
                self.cpus[c].rcuop = e
                self.cpus[c].nocb_cb_sleep = 1
                self.ents[e].kind = ENT_RCUOP
                self.ents[e].rq = RQ_RT if p["nocb_cb_rt"] else RQ_NORMAL
            else:
                # rcuc/N with use_softirq=0, otherwise ksoftirqd/N: both run rcu_core().
                self.cpus[c].rcuc = e
                self.ents[e].kind = ENT_RCUC
                self.ents[e].phase = 0 if self.use_softirq else 1
                self.ents[e].rq = RQ_RT if (not self.use_softirq and p["gp_kthread_rt"]) else RQ_NORMAL
            e += 1
        # Expedited GPs: the global kworker on the housekeeping CPU, one worker per leaf
        # on the leaf's first CPU (the kernel makes it affine to the leaf's CPUs).
        self.exp_ent = e
        self.ents[e].kind = ENT_EXP_GP
        self.ents[e].cpu = self.gp_cpu
        self.ents[e].rq = RQ_RT if p["exp_kthread_rt"] else RQ_NORMAL
        e += 1
        for n in range(self.leaf_first, self.num_nodes):
            self.nodes[n].par_ent = e
            self.ents[e].kind = ENT_EXP_PAR
            self.ents[e].idx = n
            self.ents[e].cpu = self.nodes[n].grplo
            self.ents[e].rq = RQ_RT if p["exp_kthread_rt"] else RQ_NORMAL
            e += 1
        self.exp_last_leaf = self.num_nodes - 1
        self.exp_funnel_mutexes = p["exp_funnel_mutexes"]
        self.exp_driver_task = p["exp_driver_task"]
        self.exp_par = p["exp_par"]
        self.exp_driver = self.exp_ent
        self.n_mtx = self.num_nodes + self.nr_cpus + 1
        self.mtx_owner = <int *> malloc(self.n_mtx * sizeof(int))
        self.mtx_head = <int *> malloc(self.n_mtx * sizeof(int))
        self.mtx_tail = <int *> malloc(self.n_mtx * sizeof(int))
        if self.mtx_owner == NULL or self.mtx_head == NULL or self.mtx_tail == NULL:
            raise MemoryError()
        for i in range(self.n_mtx):
            self.mtx_owner[i] = self.mtx_head[i] = self.mtx_tail[i] = -1
        self.exp_mutex = self.n_mtx - 1
        self.gp_mutex = 0 if self.exp_funnel_mutexes else self.exp_mutex
        # Reader tasks, one per CPU of each readers workload.
        self.n_rwl = len(wl["rd_len_ns"])
        self.rwl_len_ns = <i64 *> malloc((self.n_rwl + 1) * sizeof(i64))
        self.rwl_gap_ns = <i64 *> malloc((self.n_rwl + 1) * sizeof(i64))
        self.rwl_len_exp = <int *> malloc((self.n_rwl + 1) * sizeof(int))
        self.rwl_gap_busy = <int *> malloc((self.n_rwl + 1) * sizeof(int))
        self.rwl_preemptible = <int *> malloc((self.n_rwl + 1) * sizeof(int))
        for k in range(self.n_rwl):
            self.rwl_len_ns[k] = wl["rd_len_ns"][k]
            self.rwl_gap_ns[k] = wl["rd_gap_ns"][k]
            self.rwl_len_exp[k] = wl["rd_len_exp"][k]
            self.rwl_gap_busy[k] = wl["rd_gap_busy"][k]
            self.rwl_preemptible[k] = wl["rd_preemptible"][k]
            if self.rwl_preemptible[k]:
                self.preemptible_readers = 1
        for i in range(len(rd_cpu)):
            c = rd_cpu[i]
            self.cpus[c].reader = e
            self.ents[e].kind = ENT_READER
            self.ents[e].cpu = c
            self.ents[e].idx = rd_wl[i]
            self.ents[e].rq = RQ_RT if wl["rd_rt"][rd_wl[i]] else RQ_NORMAL
            self.ents[e].phase = RD_OUT
            e += 1
        n_rd_end = e
        e = self.kvfree_init(p, kf, e)
        self.n_ents = e

        # Workloads.
        self.n_wl = len(wl["think_ns"])
        self.wl_think_ns = <i64 *> malloc((self.n_wl + 1) * sizeof(i64))
        self.wl_after_ns = <i64 *> malloc((self.n_wl + 1) * sizeof(i64))
        self.wl_prim = <int *> malloc((self.n_wl + 1) * sizeof(int))
        for k in range(self.n_wl):
            self.wl_think_ns[k] = wl["think_ns"][k]
            self.wl_after_ns[k] = wl["after_ns"][k]
            self.wl_prim[k] = wl["primitive"][k]

        # Callback pool, grown on demand.
        self.cb_cap = 0
        self.cb_free = -1
        self.grow_cbs(max(1024, self.n_tasks + 16))

        self.heap_cap = 1024
        self.heap = <event_t *> malloc(self.heap_cap * sizeof(event_t))
        self.req_cap = max(16, int(tasks["expected_requests"]))
        self.req_task = <int *> malloc(self.req_cap * sizeof(int))
        self.req_cpu = <int *> malloc(self.req_cap * sizeof(int))
        self.req_prim = <signed char *> malloc(self.req_cap * sizeof(signed char))
        self.req_start = <i64 *> malloc(self.req_cap * sizeof(i64))
        self.req_end = <i64 *> malloc(self.req_cap * sizeof(i64))
        self.req_seq = <i64 *> malloc(self.req_cap * sizeof(i64))
        self.gprec_cap = 1024
        self.gprec_seq = <i64 *> malloc(self.gprec_cap * sizeof(i64))
        self.gprec_start = <i64 *> malloc(self.gprec_cap * sizeof(i64))
        self.gprec_end = <i64 *> malloc(self.gprec_cap * sizeof(i64))
        self.gprec_qs = <i64 *> malloc(self.gprec_cap * sizeof(i64))
        self.gprec_ipis = <i64 *> malloc(self.gprec_cap * sizeof(i64))
        self.gprec_exp = <signed char *> malloc(self.gprec_cap * sizeof(signed char))
        if (self.heap == NULL or self.req_task == NULL or self.req_cpu == NULL or self.req_prim == NULL
                or self.req_start == NULL or self.req_end == NULL or self.req_seq == NULL
                or self.gprec_seq == NULL or self.gprec_start == NULL or self.gprec_end == NULL
                or self.gprec_qs == NULL or self.gprec_ipis == NULL or self.gprec_exp == NULL):
            raise MemoryError()
        self.violations = []
        self.last_gp_start[0] = self.last_gp_start[1] = -(1 << 62)

        self.srs_next_head = self.srs_next_tail = -1
        self.srs_wait_head = self.srs_wait_tail = -1
        self.srs_done_head = self.srs_done_tail = -1
        self.gp_state = RCU_GP_IDLE

        for e in range(self.n_tasks):
            self.ents[e].state = ST_RUNNABLE
            self.push(task_start[e], PRIO_NORMAL, EV_WAKE, e, 0)
        for e in range(n_rd_end - len(rd_cpu), n_rd_end):
            self.ents[e].state = ST_RUNNABLE
            self.push(self.exp_ns(self.rwl_gap_ns[self.ents[e].idx]), PRIO_NORMAL, EV_WAKE, e, 0)
        for e in range(self.kfree_first, self.kfree_first + self.n_kfree):
            self.ents[e].state = ST_RUNNABLE
            self.push(0, PRIO_NORMAL, EV_WAKE, e, 0)
        self.init_rt_latency(p, wl)

    cdef void init_rt_latency(self, dict p, dict wl) except *:
        """Probe tasks, call_rcu_load tasks and krcud/N kthreads, after every other entity."""
        cdef int e = self.n_ents, i, c
        self.classic = p["classic_rcu"]
        self.softirq_restart_only = p["softirq_restart_only"]
        self.rcumaxbatch = p["rcumaxbatch"]
        self.rcuplugticks = p["rcuplugticks"]
        self.krcud_bhlimit = p["krcud_bhlimit"]
        self.irq_exit_softirq = p["irq_exit_softirq"]
        self.cl_curbatch = self.cl_maxbatch = self.gp_seq >> 2
        self.probe_period_ns = np.ascontiguousarray(wl["probe_period_ns"], dtype=np.int64)
        self.probe_run_ns = np.ascontiguousarray(wl["probe_run_ns"], dtype=np.int64)
        self.bg_work_ns = np.ascontiguousarray(wl["bg_work_ns"], dtype=np.int64)
        self.bg_groups_per_op = np.ascontiguousarray(wl["bg_groups_per_op"], dtype=np.float64)
        self.bg_burst = np.ascontiguousarray(wl["bg_burst"], dtype=np.intc)
        self.bg_cb_kind = np.ascontiguousarray(wl["bg_cb_kind"], dtype=np.intc)
        self.bg_sec_first = np.ascontiguousarray(wl["bg_sec_first"], dtype=np.intc)
        self.bg_sec_count = np.ascontiguousarray(wl["bg_sec_count"], dtype=np.intc)
        self.bg_sec_ns = np.ascontiguousarray(wl["bg_sec_ns"], dtype=np.int64)
        self.bg_sec_cum = np.ascontiguousarray(wl["bg_sec_cum"], dtype=np.float64)
        for c in range(self.nr_cpus):
            self.cpus[c].krcud = -1
            self.cpus[c].rcud_head = self.cpus[c].rcud_tail = -1
            self.cpus[c].probe_next = (<i64> 1) << 62
            self.cpus[c].probe_runnable_at = (<i64> 1) << 62
        for i in range(len(wl["probe_cpu"])):
            # amlat: a SCHED_FIFO task sleeping until the next RTC interrupt.
            self.ents[e].kind = ENT_RT_PROBE
            self.ents[e].cpu = wl["probe_cpu"][i]
            self.ents[e].idx = wl["probe_workload"][i]
            self.ents[e].rq = RQ_RT
            self.ents[e].loops_left = wl["probe_samples"][self.ents[e].idx]
            self.tasks_left += 1
            self.push(self.probe_period_ns[self.ents[e].idx], PRIO_NORMAL, EV_PROBE_TIMER, e, 0)
            self.note_probe_timer(self.ents[e].cpu, self.probe_period_ns[self.ents[e].idx])
            e += 1
        for i in range(len(wl["bg_cpu"])):
            self.ents[e].kind = ENT_BG
            self.ents[e].cpu = wl["bg_cpu"][i]
            self.ents[e].idx = wl["bg_workload"][i]
            self.ents[e].rq = RQ_NORMAL
            self.ents[e].phase = BG_WORK
            self.ents[e].state = ST_RUNNABLE
            self.push(0, PRIO_NORMAL, EV_WAKE, e, 0)
            e += 1
        if self.krcud_bhlimit:
            for c in range(self.nr_cpus):
                # krcud() runs at nice -19: woken, it goes ahead of nice-0 tasks.
                self.cpus[c].krcud = e
                self.ents[e].kind = ENT_KRCUD
                self.ents[e].cpu = c
                self.ents[e].idx = c
                self.ents[e].rq = RQ_NORMAL
                self.ents[e].head_enqueue = 1
                e += 1
        self.n_ents = e

    # =======================================================================
    # Event queue: binary heap ordered by (t, prio, seq).
    # =======================================================================
    cdef inline bint ev_before(self, event_t *a, event_t *b) noexcept:
        if a.t != b.t:
            return a.t < b.t
        if a.prio != b.prio:
            return a.prio < b.prio
        return a.seq < b.seq

    cdef void push(self, i64 t, int prio, int kind, int target, i64 arg) except *:
        cdef i64 i, parent
        cdef event_t ev
        if self.heap_n == self.heap_cap:
            self.heap_cap *= 2
            self.heap = <event_t *> realloc(self.heap, self.heap_cap * sizeof(event_t))
            if self.heap == NULL:
                raise MemoryError()
        ev.t = t
        ev.prio = prio
        ev.seq = self.ev_seq
        self.ev_seq += 1
        ev.kind = kind
        ev.target = target
        ev.arg = arg
        i = self.heap_n
        self.heap_n += 1
        while i > 0:
            parent = (i - 1) >> 1
            if self.ev_before(&ev, &self.heap[parent]):
                self.heap[i] = self.heap[parent]
                i = parent
            else:
                break
        self.heap[i] = ev

    cdef event_t pop(self) noexcept:
        cdef event_t top = self.heap[0]
        cdef event_t last
        cdef i64 i = 0, child, n
        self.heap_n -= 1
        n = self.heap_n
        if n > 0:
            last = self.heap[n]
            while True:
                child = 2 * i + 1
                if child >= n:
                    break
                if child + 1 < n and self.ev_before(&self.heap[child + 1], &self.heap[child]):
                    child += 1
                if self.ev_before(&self.heap[child], &last):
                    self.heap[i] = self.heap[child]
                    i = child
                else:
                    break
            self.heap[i] = last
        return top

    # =======================================================================
    # Random draws.
    # =======================================================================
    cdef double std_normal(self) noexcept:
        """Box-Muller; the second value of each pair is kept for the next draw."""
        cdef double u1, u2, r
        if self.have_spare:
            self.have_spare = 0
            return self.spare
        u1 = self.rng.next_double(self.rng.state)
        u2 = self.rng.next_double(self.rng.state)
        if u1 < 1e-300:
            u1 = 1e-300
        r = sqrt(-2.0 * log(u1))
        self.spare = r * cos(2.0 * 3.141592653589793 * u2 + 1.5707963267948966)
        self.have_spare = 1
        return r * cos(2.0 * 3.141592653589793 * u2)

    cdef i64 exp_ns(self, i64 mean) noexcept:
        """An exponential draw of the given mean (0 stays 0)."""
        if mean <= 0:
            return 0
        return <i64> (-mean * log(1.0 - self.rng.next_double(self.rng.state)))

    cdef i64 idle_exit_ns(self) noexcept:
        """Wake-up latency of an idle CPU: lognormal from the profile's median and p99."""
        return <i64> exp(self.idle_mu + self.idle_sigma * self.std_normal())

    # =======================================================================
    # Records.
    # =======================================================================
    cdef void record_request(self, int e, i64 t_end) except *:
        cdef i64 cap
        if self.req_n == self.req_cap:
            cap = self.req_cap * 2
            self.req_task = <int *> realloc(self.req_task, cap * sizeof(int))
            self.req_cpu = <int *> realloc(self.req_cpu, cap * sizeof(int))
            self.req_prim = <signed char *> realloc(self.req_prim, cap * sizeof(signed char))
            self.req_start = <i64 *> realloc(self.req_start, cap * sizeof(i64))
            self.req_end = <i64 *> realloc(self.req_end, cap * sizeof(i64))
            self.req_seq = <i64 *> realloc(self.req_seq, cap * sizeof(i64))
            if (self.req_task == NULL or self.req_cpu == NULL or self.req_prim == NULL
                    or self.req_start == NULL or self.req_end == NULL or self.req_seq == NULL):
                raise MemoryError()
            self.req_cap = cap
        self.req_task[self.req_n] = e
        self.req_cpu[self.req_n] = self.ents[e].cpu
        self.req_prim[self.req_n] = self.wl_prim[self.task_wl[e]]
        self.req_start[self.req_n] = self.ents[e].t_call
        self.req_end[self.req_n] = t_end
        self.req_seq[self.req_n] = self.ents[e].req_s
        self.req_n += 1
        if self.trace_on:
            self.trace(t_end, TR_TASK_RETURN, self.ents[e].cpu, e, self.ents[e].req_s,
                       self.wl_prim[self.task_wl[e]], 0)
        self.check_request(e, t_end)

    cdef void record_gp(self, int exp, i64 seq, i64 t0, i64 t_qs, i64 t1, i64 ipis) except *:
        """A GP ended at t1: record it, and remember it for the safety checker."""
        cdef i64 cap
        if self.gprec_n == self.gprec_cap:
            cap = self.gprec_cap * 2
            self.gprec_seq = <i64 *> realloc(self.gprec_seq, cap * sizeof(i64))
            self.gprec_start = <i64 *> realloc(self.gprec_start, cap * sizeof(i64))
            self.gprec_end = <i64 *> realloc(self.gprec_end, cap * sizeof(i64))
            self.gprec_qs = <i64 *> realloc(self.gprec_qs, cap * sizeof(i64))
            self.gprec_ipis = <i64 *> realloc(self.gprec_ipis, cap * sizeof(i64))
            self.gprec_exp = <signed char *> realloc(self.gprec_exp, cap * sizeof(signed char))
            if (self.gprec_seq == NULL or self.gprec_start == NULL or self.gprec_end == NULL
                    or self.gprec_qs == NULL or self.gprec_ipis == NULL or self.gprec_exp == NULL):
                raise MemoryError()
            self.gprec_cap = cap
        self.gprec_seq[self.gprec_n] = seq
        self.gprec_start[self.gprec_n] = t0
        self.gprec_end[self.gprec_n] = t1
        self.gprec_qs[self.gprec_n] = t_qs
        self.gprec_ipis[self.gprec_n] = ipis
        self.gprec_exp[self.gprec_n] = exp
        self.gprec_n += 1
        self.last_gp_start[exp] = t0
        self.last_gp_seq[exp] = seq
        self.gp_completions[exp] += 1

    # =======================================================================
    # Scheduler: run queues, wake-ups, bursts, preemption, idle.
    # =======================================================================
    cdef inline i64 jiffies(self) noexcept:
        return self.now // self.jiffy_ns

    cdef void enqueue(self, int e) noexcept:
        cdef ent_t *ep = &self.ents[e]
        cdef cpu_t *cp = &self.cpus[ep.cpu]
        cdef int q = ep.rq
        ep.state = ST_RUNNABLE
        if ep.head_enqueue and cp.rq_head[q] >= 0:
            ep.next = cp.rq_head[q]
            cp.rq_head[q] = e
        else:
            ep.next = -1
            if cp.rq_tail[q] >= 0:
                self.ents[cp.rq_tail[q]].next = e
            else:
                cp.rq_head[q] = e
            cp.rq_tail[q] = e
        cp.nr_queued += 1

    cdef void enqueue_head(self, int e) noexcept:
        """Put a preempted entity back at the head of its class."""
        cdef ent_t *ep = &self.ents[e]
        cdef cpu_t *cp = &self.cpus[ep.cpu]
        cdef int q = ep.rq
        ep.state = ST_RUNNABLE
        ep.next = cp.rq_head[q]
        cp.rq_head[q] = e
        if cp.rq_tail[q] < 0:
            cp.rq_tail[q] = e
        cp.nr_queued += 1

    cdef int dequeue(self, int c) noexcept:
        cdef cpu_t *cp = &self.cpus[c]
        cdef int q, e
        for q in range(2):
            e = cp.rq_head[q]
            if e >= 0:
                cp.rq_head[q] = self.ents[e].next
                if cp.rq_head[q] < 0:
                    cp.rq_tail[q] = -1
                self.ents[e].next = -1
                cp.nr_queued -= 1
                return e
        return -1

    cdef void wake(self, int e, int from_cpu, i64 t) except *:
        """try_to_wake_up(): entity e becomes runnable at time t (>= now)."""
        cdef ent_t *ep = &self.ents[e]
        if ep.state != ST_BLOCKED:
            ep.kick = 1
            return
        ep.state = ST_RUNNABLE
        self.n_wakeups += 1
        if from_cpu != ep.cpu:
            t += self.wakeup_busy_ns
        if self.trace_on:
            self.trace(t, TR_WAKE, ep.cpu, e, 0, from_cpu, 0)
        if t <= self.now:
            self.ev_wake(e)
        else:
            self.push(t, PRIO_NORMAL, EV_WAKE, e, 0)

    cdef void ev_wake(self, int e) except *:
        cdef ent_t *ep = &self.ents[e]
        cdef int c = ep.cpu
        cdef cpu_t *cp = &self.cpus[c]
        cdef i64 lat
        self.enqueue(e)
        if cp.state == CPU_IDLE:
            lat = self.idle_exit_ns()
            cp.state = CPU_WAKING
            cp.waking_until = self.now + lat
            self.n_idle_exits += 1
            self.push(cp.waking_until, PRIO_NORMAL, EV_CPU_RUN, c, 0)
        elif cp.state == CPU_BUSY and ep.rq == RQ_RT and self.preemption:
            if self.ents[cp.curr].rq == RQ_NORMAL:
                self.try_preempt(c)
        elif cp.state == CPU_BUSY and ep.rq == RQ_RT and self.ents[cp.curr].rq == RQ_NORMAL:
            cp.need_resched = 1  # !PREEMPTION: resched_curr() waits for a preemption point

    cdef void try_preempt(self, int c, bint at_boundary=False) except *:
        """Preempt the running entity for a woken RT one, or arrange it for the end of a
        non-preemptible stretch; `at_boundary`: the running burst has only just begun."""
        cdef cpu_t *cp = &self.cpus[c]
        if self.in_reader(c) and not self.rwl_preemptible[self.ents[cp.curr].idx]:
            cp.resched_reader = 1  # preempt_enable() in rcu_read_unlock() reschedules
            return
        if not at_boundary and self.burst_nopreempt(c):
            cp.resched_reader = 1  # preempt_enable() at the end of the section reschedules
            return
        if self.now < cp.nonpreempt_until:
            if not cp.resched_pending:
                cp.resched_pending = 1
                self.push(cp.nonpreempt_until, PRIO_NORMAL, EV_RESCHED, c, 0)
            return
        self.preempt(c)

    cdef void preempt(self, int c, bint to_tail=False) except *:
        """Switch out the running entity: to the head of its class (preempted by a
        higher class) or, at the end of its time slice, to the tail."""
        cdef cpu_t *cp = &self.cpus[c]
        cdef int e = cp.curr
        cdef i64 rest = cp.burst_end + cp.stolen - self.now
        if rest < 0:
            rest = 0
        if self.in_reader(c):
            self.rcu_preempt_ctxt_queue(c, e)
        self.ents[e].remaining = rest
        if not to_tail:
            # Preempted by a higher class: its time slice goes on when it runs again
            # (CFS/EEVDF account the slice in the task's own runtime).
            self.ents[e].slice_used = self.now - cp.run_start
        cp.gen += 1
        cp.stolen = 0
        cp.curr = -1
        if to_tail:
            self.enqueue(e)
        else:
            self.enqueue_head(e)
        self.n_preempt += 1
        self.cpu_pick(c)

    cdef void start_burst(self, int c, i64 dur) except *:
        cdef cpu_t *cp = &self.cpus[c]
        dur += cp.debt
        cp.debt = 0
        cp.gen += 1
        cp.burst_end = self.now + dur
        self.push(cp.burst_end, PRIO_NORMAL, EV_BURST_END, c, <i64> cp.gen)

    cdef void cpu_pick(self, int c) except *:
        """__schedule(): switch to the next runnable entity, or enter idle."""
        cdef cpu_t *cp = &self.cpus[c]
        cdef int e = self.dequeue(c)
        cdef ent_t *ep
        cdef i64 t0, dur
        if e < 0:
            self.cpu_enter_idle(c)
            return
        if cp.state == CPU_IDLE or cp.state == CPU_WAKING:
            cp.watching += 1  # leaving the extended quiescent state
            if not cp.tick_on:
                cp.tick_on = 1
                self.push((self.jiffies() + 1) * self.jiffy_ns, PRIO_NORMAL, EV_TICK, c, 0)
        cp.state = CPU_BUSY
        cp.curr = e
        if self.trace_on:
            self.trace(self.now, TR_SWITCH, c, e, 0, 0, 0)
        ep = &self.ents[e]
        cp.run_start = self.now - ep.slice_used
        ep.slice_used = 0
        cp.need_resched = 0
        ep.state = ST_RUNNING
        ep.kick = 0
        # rcu_note_context_switch(): a context switch is a quiescent state,
        # for an expedited GP too if its IPI is waiting for one.
        cp.cpu_no_qs = 0
        if cp.exp_need_qs:
            self.acc = 0
            self.rcu_report_exp_rdp(c)
            cp.debt += self.acc
        self.n_ctxsw += 1
        cp.user_from = 0
        cp.user_to = 0
        t0 = self.now + self.ctxsw_ns + cp.debt
        if ep.remaining >= 0:
            dur = ep.remaining
            ep.remaining = -1
        else:
            dur = self.ent_run(e, t0)
        self.start_burst(c, self.ctxsw_ns + dur)

    cdef void cpu_enter_idle(self, int c) noexcept:
        cdef cpu_t *cp = &self.cpus[c]
        cp.state = CPU_IDLE
        cp.curr = -1
        cp.watching += 1  # rcu_idle_enter(): extended quiescent state
        cp.cpu_no_qs = 0
        if self.trace_on:
            self.trace(self.now, TR_SWITCH, c, -1, 0, 0, 0)
        cp.user_from = 0
        cp.user_to = 0

    cdef void steal(self, int c, i64 dur) noexcept:
        """Interrupt/softirq time on CPU c: the running burst ends later."""
        cdef cpu_t *cp = &self.cpus[c]
        if cp.state == CPU_BUSY:
            cp.stolen += dur
        if self.now + dur > cp.nonpreempt_until:
            cp.nonpreempt_until = self.now + dur

    cdef void ev_burst_end(self, int c, i64 gen) except *:
        cdef cpu_t *cp = &self.cpus[c]
        cdef int e
        cdef i64 nxt, st
        if <u64> gen != cp.gen or cp.state != CPU_BUSY:
            return
        if cp.stolen > 0:
            st = cp.stolen
            cp.stolen = 0
            cp.burst_end = self.now + st
            self.push(cp.burst_end, PRIO_NORMAL, EV_BURST_END, c, gen)
            return
        e = cp.curr
        cp.user_from = 0
        cp.user_to = 0
        nxt = self.ent_done(e)
        if nxt >= 0:
            self.start_burst(c, nxt)
            if cp.resched_reader and not self.in_reader(c):
                cp.resched_reader = 0
                self.try_preempt(c, True)
            return
        # The entity blocks (or exits, or yielded in cond_resched()); schedule the next one.
        if self.ents[e].state == ST_RUNNING:
            self.ents[e].state = ST_BLOCKED
        cp.curr = -1
        cp.resched_reader = 0  # schedule() runs now anyway
        self.cpu_pick(c)

    # =======================================================================
    # Entities: what each kind does when it starts a burst (ent_run, returns
    # the burst length) and when the burst ends (ent_done, returns the next
    # burst length or -1 to block).
    # =======================================================================
    cdef i64 ent_run(self, int e, i64 t0) except -2:
        cdef int kind = self.ents[e].kind
        if kind == ENT_TASK:
            return self.task_run(e, t0)
        if kind == ENT_GP:
            return self.gp_run(e, t0)
        if kind == ENT_RCUOG:
            return self.rcuog_run(e)
        if kind == ENT_RCUOP:
            return self.rcuop_run(e, t0)
        if kind == ENT_SR_WORKER:
            return self.sr_worker_run(e, t0)
        if kind == ENT_READER:
            return self.reader_run(e, t0)
        if kind == ENT_EXP_GP:
            return self.exp_gp_run(e, t0)
        if kind == ENT_EXP_PAR:
            return self.exp_par_run(e, t0)
        if kind == ENT_KFREE:
            return self.kfree_run(e, t0)
        if kind == ENT_KWORKER:
            return self.kworker_run(e, t0)
        if kind == ENT_RT_PROBE:
            return self.probe_run(e, t0)
        if kind == ENT_BG:
            return self.bg_run(e, t0)
        if kind == ENT_KRCUD:
            return self.krcud_run(e, t0)
        return self.rcuc_run(e, t0)

    cdef i64 ent_done(self, int e) except -2:
        cdef int kind = self.ents[e].kind
        if kind == ENT_TASK:
            return self.task_done(e)
        if kind == ENT_GP:
            return self.gp_done(e)
        if kind == ENT_RCUOG:
            return self.rcuog_done(e)
        if kind == ENT_RCUOP:
            return self.rcuop_done(e)
        if kind == ENT_SR_WORKER:
            return self.sr_worker_done(e)
        if kind == ENT_READER:
            return self.reader_done(e)
        if kind == ENT_EXP_GP:
            return self.exp_gp_done(e)
        if kind == ENT_EXP_PAR:
            return self.exp_par_done(e)
        if kind == ENT_KFREE:
            return self.kfree_done(e)
        if kind == ENT_KWORKER:
            return self.kworker_done(e)
        if kind == ENT_RT_PROBE:
            return self.probe_done(e)
        if kind == ENT_BG:
            return self.bg_done(e)
        if kind == ENT_KRCUD:
            return self.krcud_done(e)
        return self.rcuc_done(e)

    # --- workload task: loop { synchronize_rcu*(); work after; think } ------
    cdef i64 task_run(self, int e, i64 t0) except -2:
        cdef int phase = self.ents[e].phase
        if phase == TASK_WAITING:
            return self.task_return(e, t0)
        if phase == TASK_MUTEX_WAIT or phase == TASK_EXP_OWNER:
            return self.rnp_lock_ns  # mutex_lock() retry / mutex_unlock(): one cache line
        if phase == TASK_EXP_DRIVE:
            return self.exp_gp_run(e, t0)
        return self.task_next(e, t0, 0)

    cdef i64 task_return(self, int e, i64 t0) except -2:
        """synchronize_rcu*() returns at t0: record it, then the work after it."""
        cdef ent_t *ep = &self.ents[e]
        cdef i64 dur = self.wl_after_ns[self.task_wl[e]]
        self.record_request(e, t0)
        if ep.loops_left == 0:
            ep.phase = TASK_EXITED
            if t0 + dur > self.completion_ns:
                self.completion_ns = t0 + dur
            return dur
        return self.task_next(e, t0, dur)

    cdef i64 task_next(self, int e, i64 t0, i64 dur) except -2:
        """After `dur` of work, think in user mode, then enter the next call."""
        cdef ent_t *ep = &self.ents[e]
        cdef cpu_t *cp = &self.cpus[ep.cpu]
        cdef int w = self.task_wl[e]
        ep.phase = TASK_RUNNING
        # Think time runs in user mode: the tick sees a quiescent state there.
        cp.user_from = t0 + dur
        cp.user_to = t0 + dur + self.wl_think_ns[w]
        dur += self.wl_think_ns[w] + self.sync_entry_ns
        if self.wl_prim[w] == 0 and not self.wake_from_gp:
            dur += self.call_rcu_ns
        return dur

    cdef i64 task_done(self, int e) except -2:
        cdef ent_t *ep = &self.ents[e]
        cdef int c = ep.cpu
        cdef i64 nxt = -1
        if ep.phase == TASK_EXITED:
            self.tasks_left -= 1
            return -1
        self.acc = 0
        if ep.phase == TASK_MUTEX_WAIT:
            nxt = self.exp_mutex_retry(e, c)
        elif ep.phase == TASK_EXP_OWNER:
            # Woken by rcu_exp_wait_wake(): let the next expedited GP start, return.
            self.mutex_unlock(self.gp_mutex, c)
            nxt = self.task_return(e, self.now + self.acc)
        elif ep.phase == TASK_EXP_DRIVE:
            nxt = self.exp_gp_done(e)  # charges its own lock costs
            self.acc = 0
            if nxt < 0 and self.exp_phase == EXP_IDLE:
                # rcu_exp_wait_wake() done: let the next expedited GP start, return.
                self.mutex_unlock(self.gp_mutex, c)
                nxt = self.task_return(e, self.now + self.acc)
        else:
            ep.loops_left -= 1
            ep.t_call = self.now - self.sync_entry_ns
            if self.wl_prim[self.task_wl[e]]:
                nxt = self.synchronize_rcu_expedited(e, c)
            else:
                ep.phase = TASK_WAITING
                ep.req_s = rcu_seq_snap(self.gp_seq)
                if self.wake_from_gp:
                    self.synchronize_rcu_normal_wake(e, c)
                else:
                    ep.t_call -= self.call_rcu_ns
                    # wait_rcu_gp(call_rcu_hurry): wakeme_after_rcu behind other callbacks.
                    self.call_rcu(c, CB_WAKEME, e)
            if self.trace_on:
                self.trace(ep.t_call, TR_TASK_WAIT, c, e, ep.req_s, self.wl_prim[self.task_wl[e]], 0)
        self.cpus[c].debt += self.acc
        return nxt

    # =======================================================================
    # rcu_node locks and the quiescent-state tree.
    # =======================================================================
    cdef void spin_lock(self, i64 *lock_free) noexcept:
        """Acquire and release a raw spinlock free again at *lock_free: the wait
        and the hold time go into acc."""
        cdef i64 t = self.now + self.acc
        cdef i64 wait = lock_free[0] - t
        if wait < 0:
            wait = 0
        lock_free[0] = t + wait + self.rnp_lock_ns
        self.acc += wait + self.rnp_lock_ns
        self.n_lock_wait_ns += wait

    cdef inline void rnp_lock(self, int n) noexcept:
        """rnp->lock."""
        self.spin_lock(&self.nodes[n].lock_free)

    cdef inline bint gp_in_progress(self) noexcept:
        return rcu_seq_state(self.gp_seq) != 0

    cdef inline bint root_qs_done(self) noexcept:
        """No CPU and no preempted reader holds the current normal GP."""
        return self.nodes[0].qsmask == 0 and self.nodes[0].gp_blockers == 0

    cdef void gp_kthread_wake(self) except *:
        """rcu_gp_kthread_wake(): never from the GP kthread itself."""
        if self.in_gp_kthread or self.gp_flags == 0:
            return
        if self.ents[self.gp_ent].state == ST_BLOCKED:
            self.n_gp_wake += 1
            self.wake(self.gp_ent, -1, self.now + self.acc)

    cdef void report_qs_rnp(self, u64 mask, int n, i64 gps) except *:
        """rcu_report_qs_rnp(): clear mask in n and climb while nodes empty."""
        cdef rnp_t *np
        while True:
            np = &self.nodes[n]
            if (np.qsmask & mask) == 0 or np.gp_seq != gps:
                return
            np.qsmask &= ~mask
            # Preempted readers that block this GP hold the leaf (rcu_preempt_blocked_readers_cgp).
            if np.qsmask != 0 or np.gp_blockers > 0:
                return
            if np.parent < 0:
                # rcu_report_qs_rsp(): the root is clear; let the GP kthread finish.
                self.gp_qs_t = self.now + self.acc
                self.gp_flags |= RCU_GP_FLAG_FQS
                self.gp_kthread_wake()
                return
            mask = np.grpmask
            n = np.parent
            self.rnp_lock(n)

    cdef bint start_this_gp(self, int leaf, i64 req) noexcept:
        """rcu_start_this_gp(): funnel the request up; True if the GP kthread must wake."""
        cdef int n = leaf
        cdef rnp_t *np
        while True:
            if n != leaf:
                self.rnp_lock(n)
            np = &self.nodes[n]
            if (np.gp_seq_needed >= req or rcu_seq_started(np.gp_seq, req)
                    or (n != leaf and rcu_seq_state(np.gp_seq) != 0)):
                return False
            np.gp_seq_needed = req
            if rcu_seq_state(np.gp_seq) != 0:
                return False
            if np.parent < 0:
                break
            n = np.parent
        if self.gp_in_progress():
            return False
        self.gp_flags |= RCU_GP_FLAG_INIT
        return True

    # =======================================================================
    # Segmented callback lists (rcu_segcblist).
    # =======================================================================
    cdef void grow_cbs(self, int cap) except *:
        cdef int i
        self.cbs = <cb_t *> realloc(self.cbs, cap * sizeof(cb_t))
        if self.cbs == NULL:
            raise MemoryError()
        for i in range(self.cb_cap, cap):
            self.cbs[i].next = self.cb_free
            self.cb_free = i
        self.cb_cap = cap

    cdef inline int pend_cbs(self, cpu_t *cp) noexcept:
        return cp.seg_len[1] + cp.seg_len[2] + cp.seg_len[3]

    cdef inline int n_cbs(self, cpu_t *cp) noexcept:
        return cp.seg_len[0] + cp.seg_len[1] + cp.seg_len[2] + cp.seg_len[3]

    cdef void segcblist_advance(self, cpu_t *cp, i64 seq) noexcept:
        cdef int i, j
        if self.pend_cbs(cp) == 0:
            return
        i = RCU_WAIT_TAIL
        while i < RCU_NEXT_TAIL:
            if seq_lt(seq, cp.seg_gp[i]):
                break
            cp.seg_len[RCU_DONE_TAIL] += cp.seg_len[i]
            cp.seg_len[i] = 0
            i += 1
        if i == RCU_WAIT_TAIL:
            return
        j = RCU_WAIT_TAIL
        while i < RCU_NEXT_TAIL and j < RCU_NEXT_TAIL:
            cp.seg_len[j] = cp.seg_len[i]
            cp.seg_gp[j] = cp.seg_gp[i]
            if i != j:
                cp.seg_len[i] = 0
            i += 1
            j += 1

    cdef bint segcblist_accelerate(self, cpu_t *cp, i64 seq) noexcept:
        cdef int i, j, k
        if self.pend_cbs(cp) == 0:
            return False
        i = RCU_NEXT_READY_TAIL
        while i > RCU_DONE_TAIL:
            if cp.seg_len[i] > 0 and seq_lt(cp.seg_gp[i], seq):
                break
            i -= 1
        j = 0
        for k in range(i + 1, 4):
            j += cp.seg_len[k]
        if j == 0:
            return False
        i += 1
        if i >= RCU_NEXT_TAIL:
            return False
        for k in range(i + 1, 4):
            cp.seg_len[i] += cp.seg_len[k]
            cp.seg_len[k] = 0
        for k in range(i, RCU_NEXT_TAIL):
            cp.seg_gp[k] = seq
        return True

    cdef bint accelerate_cbs(self, int c) noexcept:
        """rcu_accelerate_cbs(): label new callbacks; request their GP."""
        cdef cpu_t *cp = &self.cpus[c]
        cdef i64 req
        if self.pend_cbs(cp) == 0:
            return False
        req = rcu_seq_snap(self.gp_seq)
        if self.segcblist_accelerate(cp, req):
            return self.start_this_gp(cp.leaf, req)
        return False

    cdef bint advance_cbs(self, int c) noexcept:
        """rcu_advance_cbs(): move callbacks whose GP ended to DONE, then accelerate."""
        cdef cpu_t *cp = &self.cpus[c]
        if self.pend_cbs(cp) == 0:
            return False
        self.segcblist_advance(cp, self.nodes[cp.leaf].gp_seq)
        return self.accelerate_cbs(c)

    cdef int cb_alloc(self, int kind, int arg) except -1:
        cdef int i
        if self.cb_free < 0:
            self.grow_cbs(self.cb_cap * 2)
        i = self.cb_free
        self.cb_free = self.cbs[i].next
        self.cbs[i].next = -1
        self.cbs[i].kind = kind
        self.cbs[i].arg = arg
        self.cbs[i].t_queued = self.now
        return i

    cdef void cblist_enqueue(self, cpu_t *cp, int cb) noexcept:
        if cp.cb_tail >= 0:
            self.cbs[cp.cb_tail].next = cb
        else:
            cp.cb_head = cb
        cp.cb_tail = cb
        cp.seg_len[RCU_NEXT_TAIL] += 1

    # =======================================================================
    # call_rcu() and NOCB enqueue with the bypass list.
    # =======================================================================
    cdef void call_rcu(self, int c, int kind, int arg) except *:
        """__call_rcu_common() with lazy = false (call_rcu_hurry)."""
        cdef cpu_t *cp = &self.cpus[c]
        cdef int cb = self.cb_alloc(kind, arg)
        cdef int n
        if cp.offloaded:
            self.call_rcu_nocb(c, cb)
            return
        self.cblist_enqueue(cp, cb)
        if self.classic:
            return  # 2.6.0's call_rcu() only queues on nxtlist
        # call_rcu_core(): a callback flood forces the GP machinery along.
        n = self.n_cbs(cp)
        if n > cp.qlen_last_fqs_check + self.qhimark:
            self.rnp_lock(cp.leaf)
            self.note_gp_changes_locked(c)
            if not self.gp_in_progress():
                if self.accelerate_cbs(c):
                    self.gp_kthread_wake()
            else:
                cp.blimit = DEFAULT_MAX_RCU_BLIMIT
            cp.qlen_last_fqs_check = n

    cdef void nocb_flush_bypass(self, cpu_t *cp, int cb) noexcept:
        """rcu_nocb_flush_bypass(): bypass callbacks (then cb) join ->cblist's NEXT."""
        if cp.byp_len > 0:
            if cp.cb_tail >= 0:
                self.cbs[cp.cb_tail].next = cp.byp_head
            else:
                cp.cb_head = cp.byp_head
            cp.cb_tail = cp.byp_tail
            cp.seg_len[RCU_NEXT_TAIL] += cp.byp_len
            cp.byp_head = cp.byp_tail = -1
            cp.byp_len = 0
            self.n_bypass_flush += 1
        if cb >= 0:
            self.cblist_enqueue(cp, cb)

    cdef void call_rcu_nocb(self, int c, int cb) except *:
        """call_rcu_nocb() / rcu_nocb_try_bypass() for a non-lazy callback."""
        cdef cpu_t *cp = &self.cpus[c]
        cdef i64 j = self.jiffies()
        cdef i64 cnt
        cdef bint was_alldone
        # Count direct ->cblist enqueues per jiffy; beyond the limit use the bypass.
        if j == cp.nobypass_last:
            cnt = cp.nobypass_count + 1
        else:
            cp.nobypass_last = j
            cnt = cp.nobypass_count - self.nocb_nobypass_lim
            if cp.nobypass_count < self.nocb_nobypass_lim:
                cnt = 0
            elif cnt > self.nocb_nobypass_lim:
                cnt = self.nocb_nobypass_lim
        cp.nobypass_count = cnt
        if cnt < self.nocb_nobypass_lim:
            was_alldone = self.pend_cbs(cp) == 0
            self.nocb_flush_bypass(cp, cb)
            self.call_rcu_nocb_wake(c, was_alldone)
            return
        if (cp.byp_len > 0 and j != cp.byp_first) or cp.byp_len >= self.qhimark:
            was_alldone = self.pend_cbs(cp) == 0
            self.nocb_flush_bypass(cp, cb)
            self.call_rcu_nocb_wake(c, was_alldone)
            return
        # Use the bypass.
        if cp.byp_tail >= 0:
            self.cbs[cp.byp_tail].next = cb
        else:
            cp.byp_head = cb
            cp.byp_first = j
        cp.byp_tail = cb
        cp.byp_len += 1
        self.n_bypass_enq += 1
        if cp.byp_len == 1 and self.pend_cbs(cp) == 0:
            self.call_rcu_nocb_wake(c, True)

    cdef void call_rcu_nocb_wake(self, int c, bint was_alldone) except *:
        """__call_rcu_nocb_wake(): wake rcuog when the queue was empty or grew a lot."""
        cdef cpu_t *cp = &self.cpus[c]
        cdef i64 n = self.n_cbs(cp)
        if was_alldone:
            cp.qlen_last_fqs_check = n
            self.wake_nocb_gp(cp.group)
        elif n > cp.qlen_last_fqs_check + self.qhimark:
            cp.qlen_last_fqs_check = n
            self.wake_nocb_gp(cp.group)

    cdef void wake_nocb_gp(self, int g) except *:
        cdef group_t *gp = &self.groups[g]
        if gp.nocb_gp_sleep:
            gp.nocb_gp_sleep = 0
            self.rnp_waitq_remove(gp.ent)
            self.n_rcuog_wake += 1
            self.wake(gp.ent, -1, self.now + self.acc)

    cdef void rnp_waitq_remove(self, int e) noexcept:
        cdef ent_t *ep = &self.ents[e]
        cdef int n, x, prev
        if not ep.on_waitq:
            return
        n = self.cpus[ep.cpu].leaf
        prev = -1
        x = self.nodes[n].nocb_wait
        while x >= 0:
            if x == e:
                if prev >= 0:
                    self.ents[prev].wait_next = ep.wait_next
                else:
                    self.nodes[n].nocb_wait = ep.wait_next
                break
            prev = x
            x = self.ents[x].wait_next
        ep.wait_next = -1
        ep.on_waitq = 0

    # =======================================================================
    # rcuog: nocb_gp_wait() for one group.
    # =======================================================================
    cdef i64 rcuog_run(self, int e) except -2:
        cdef group_t *gp = &self.groups[self.ents[e].idx]
        # One nocb_lock round per CPU of the group.
        return gp.count * self.rnp_lock_ns

    cdef i64 rcuog_done(self, int e) except -2:
        cdef ent_t *ep = &self.ents[e]
        cdef int g = ep.idx
        cdef group_t *gp = &self.groups[g]
        cdef int i, r, leaf
        cdef cpu_t *cp
        cdef i64 j = self.jiffies()
        cdef bint bypass = False, needwait = False, needwake_gp = False
        cdef i64 wait = 0, nextgp
        self.acc = 0
        gp.nocb_gp_sleep = 1
        gp.timer_gen = 0  # del_timer(&nocb_bypass_timer)
        for i in range(gp.first, gp.first + gp.count):
            r = self.group_cpus[i]
            cp = &self.cpus[r]
            if cp.byp_len > 0 and (j > cp.byp_first + 1 or cp.byp_len > 2 * self.qhimark):
                self.nocb_flush_bypass(cp, -1)
            elif cp.byp_len == 0 and self.n_cbs(cp) == 0:
                continue
            if cp.byp_len > 0:
                bypass = True
            if (cp.seg_len[RCU_NEXT_READY_TAIL] + cp.seg_len[RCU_NEXT_TAIL] > 0
                    or (self.pend_cbs(cp) > 0
                        and rcu_seq_done(self.nodes[cp.leaf].gp_seq, cp.seg_gp[RCU_WAIT_TAIL]))):
                self.rnp_lock(cp.leaf)
                if self.advance_cbs(r):
                    needwake_gp = True
            if self.pend_cbs(cp) > 0:
                nextgp = cp.seg_gp[RCU_WAIT_TAIL]
                if not needwait or nextgp < wait:
                    wait = nextgp
                needwait = True
            if cp.seg_len[RCU_DONE_TAIL] > 0 and cp.nocb_cb_sleep:
                cp.nocb_cb_sleep = 0
                self.wake(cp.rcuop, ep.cpu, self.now + self.acc)
        if needwake_gp:
            self.gp_kthread_wake()
        if bypass:
            gp.timer_gen = <u64> self.ev_seq + 1
            self.push((j + 2) * self.jiffy_ns, PRIO_NORMAL, EV_BYPASS_TIMER, g, <i64> gp.timer_gen)
        self.cpus[ep.cpu].debt += self.acc
        if not gp.nocb_gp_sleep:
            return self.rcuog_run(e)
        if needwait:
            leaf = self.cpus[ep.cpu].leaf
            if rcu_seq_done(self.nodes[leaf].gp_seq, wait):
                return self.rcuog_run(e)
            ep.on_waitq = 1
            ep.wait_gp_seq = wait
            ep.wait_next = self.nodes[leaf].nocb_wait
            self.nodes[leaf].nocb_wait = e
        return -1

    cdef void ev_bypass_timer(self, int g, i64 gen) except *:
        """do_nocb_bypass_wakeup_timer(): flush a stranded bypass."""
        if self.groups[g].timer_gen != <u64> gen:
            return
        self.groups[g].timer_gen = 0
        self.timer_tick(self.ents[self.groups[g].ent].cpu)
        self.acc = 0
        self.wake_nocb_gp(g)

    # =======================================================================
    # rcuop: nocb_cb_wait() for one CPU.
    # =======================================================================
    cdef i64 rcuop_run(self, int e, i64 t0) except -2:
        cdef int r = self.ents[e].idx
        # rcu_momentary_eqs(): the FQS scan sees a quiescent state.
        self.cpus[self.ents[e].cpu].watching += 2
        return self.rcu_do_batch(r, t0, 2)

    cdef i64 rcuop_done(self, int e) except -2:
        cdef int r = self.ents[e].idx
        cdef cpu_t *cp = &self.cpus[r]
        cdef bint needwake_gp = False
        self.acc = 0
        if self.pend_cbs(cp) > 0 and rcu_seq_done(self.nodes[cp.leaf].gp_seq, cp.seg_gp[RCU_WAIT_TAIL]):
            self.rnp_lock(cp.leaf)
            needwake_gp = self.advance_cbs(r)
        if needwake_gp:
            self.gp_kthread_wake()
        self.cpus[self.ents[e].cpu].debt += self.acc
        if cp.seg_len[RCU_DONE_TAIL] > 0:
            return self.rcuop_run(e, self.now)
        cp.nocb_cb_sleep = 1
        return -1

    # =======================================================================
    # rcu_do_batch(): invoke the DONE callbacks of CPU r starting at t0.
    # ctx: 0 = softirq, 1 = rcuc kthread, 2 = rcuop kthread.
    # Returns the time spent.
    # =======================================================================
    cdef i64 invoke_cb(self, cpu_t *cp, int r, i64 t, int runner_cpu, int runner) except -2:
        """Invoke the first DONE callback of CPU r at t; return when it is done."""
        cdef int cb = cp.cb_head
        cp.cb_head = self.cbs[cb].next
        if cp.cb_head < 0:
            cp.cb_tail = -1
        cp.seg_len[RCU_DONE_TAIL] -= 1
        return self.invoke_one(cb, r, t, runner_cpu, runner)

    cdef i64 invoke_one(self, int cb, int r, i64 t, int runner_cpu, int runner) except -2:
        """Invoke callback cb, queued on CPU r, at t, by entity runner (-1: softirq);
        return when it is done."""
        cdef int kind = self.cbs[cb].kind
        self.check_callback(cb, r)
        if self.trace_on:
            self.trace(t, TR_CB_INVOKE, r, runner, self.cpus[r].gp_seq, kind, cb)
        t += self.cb_cost[kind]
        if kind == CB_WAKEME:
            self.wake(self.cbs[cb].arg, runner_cpu, t)
        elif kind == CB_RCU_WORK:
            self.rcu_work_rcufn(self.cbs[cb].arg, runner_cpu, t)
        self.cbs[cb].next = self.cb_free
        self.cb_free = cb
        self.n_cbs_invoked += 1
        return t

    cdef i64 rcu_do_batch(self, int r, i64 t0, int ctx) except -2:
        cdef cpu_t *cp = &self.cpus[r]
        cdef i64 pending = cp.seg_len[RCU_DONE_TAIL]
        cdef i64 bl, count = 0, t = t0, tlimit = 0
        cdef int runner_cpu, runner
        if pending == 0:
            return 0
        if self.classic:
            return self.rcu_do_batch_classic(r, t0, ctx)
        bl = pending >> self.rcu_divisor
        if bl < cp.blimit:
            bl = cp.blimit
        if ctx != 2 and bl > 100:
            tlimit = t0 + self.rcu_resched_ns
        runner_cpu = r if ctx != 2 else self.ents[cp.rcuop].cpu
        runner = -1 if ctx == 0 else (cp.rcuc if ctx == 1 else cp.rcuop)
        if self.trace_on:
            self.trace(t0, TR_CB_BATCH_START, r, runner, cp.gp_seq, pending, bl)
        while cp.seg_len[RCU_DONE_TAIL] > 0:
            t = self.invoke_cb(cp, r, t, runner_cpu, runner)
            count += 1
            if ctx == 0:
                # Softirq: stop at the batch limit when something else wants the CPU.
                if count >= bl and (cp.nr_queued > 0 or cp.state == CPU_BUSY):
                    break
            if tlimit and (count & 31) == 0 and t >= tlimit:
                break
        if cp.blimit == DEFAULT_MAX_RCU_BLIMIT and self.n_cbs(cp) <= self.qlowmark:
            cp.blimit = self.blimit_default
        if self.trace_on:
            self.trace(t, TR_CB_BATCH_END, r, runner, cp.gp_seq, count, cp.seg_len[RCU_DONE_TAIL])
        return t - t0

    # =======================================================================
    # rcu_core(): the RCU_SOFTIRQ / rcuc work on CPU c.
    # =======================================================================
    cdef void note_gp_changes_locked(self, int c) except *:
        """__note_gp_changes(): the leaf's lock is held (charged by the caller)."""
        cdef cpu_t *cp = &self.cpus[c]
        cdef i64 rnp_gp = self.nodes[cp.leaf].gp_seq
        cdef bint needwake = False, need_qs
        if cp.gp_seq == rnp_gp:
            return
        if not cp.offloaded:
            if rcu_seq_completed_gp(cp.gp_seq, rnp_gp):
                needwake = self.advance_cbs(c)
            else:
                needwake = self.accelerate_cbs(c)
        if rcu_seq_new_gp(cp.gp_seq, rnp_gp):
            need_qs = (self.nodes[cp.leaf].qsmask & cp.grpmask) != 0
            cp.cpu_no_qs = need_qs
            cp.core_needs_qs = need_qs
        cp.gp_seq = rnp_gp
        if needwake:
            self.gp_kthread_wake()

    cdef void report_qs_rdp(self, int c) except *:
        """rcu_report_qs_rdp(): push this CPU's noted QS into its leaf."""
        cdef cpu_t *cp = &self.cpus[c]
        cdef rnp_t *np = &self.nodes[cp.leaf]
        cdef bint needwake = False
        self.rnp_lock(cp.leaf)
        if cp.cpu_no_qs or cp.gp_seq != np.gp_seq:
            cp.cpu_no_qs = 1
            return
        cp.core_needs_qs = 0
        if (np.qsmask & cp.grpmask) == 0:
            return
        if not cp.offloaded:
            needwake = self.accelerate_cbs(c)
        if self.trace_on:
            self.trace(self.now + self.acc, TR_QS, c, cp.curr, np.gp_seq, 0, 0)
        self.report_qs_rnp(cp.grpmask, cp.leaf, np.gp_seq)
        if needwake:
            self.gp_kthread_wake()

    cdef bint rcu_pending(self, int c) noexcept:
        cdef cpu_t *cp = &self.cpus[c]
        if self.classic:
            return self.rcu_pending_classic(c)
        if cp.core_needs_qs and not cp.cpu_no_qs:
            return True
        if not cp.offloaded:
            if self.cbs_ready(cp):
                return True
            if (not self.gp_in_progress()
                    and cp.seg_len[RCU_NEXT_READY_TAIL] + cp.seg_len[RCU_NEXT_TAIL] > 0):
                return True
        if cp.gp_seq != self.nodes[cp.leaf].gp_seq:
            return True
        return False

    cdef i64 rcu_core(self, int c, i64 t0, int ctx) except -2:
        """One rcu_core() pass on CPU c starting at t0; returns its duration."""
        cdef cpu_t *cp = &self.cpus[c]
        cdef bint needwake
        cdef i64 dur
        if self.classic:
            return self.rcu_process_callbacks(c, t0, ctx)
        self.acc = self.softirq_ns
        self.n_softirq += 1
        if cp.gp_seq != self.nodes[cp.leaf].gp_seq:
            self.rnp_lock(cp.leaf)
            self.note_gp_changes_locked(c)
        if cp.core_needs_qs and not cp.cpu_no_qs:
            self.report_qs_rdp(c)
        if (not cp.offloaded and not self.gp_in_progress()
                and cp.seg_len[RCU_NEXT_READY_TAIL] + cp.seg_len[RCU_NEXT_TAIL] > 0):
            self.rnp_lock(cp.leaf)
            needwake = self.accelerate_cbs(c)
            if needwake:
                self.gp_kthread_wake()
        dur = self.acc
        if not cp.offloaded and self.cbs_ready(cp):
            dur += self.rcu_do_batch(c, t0 + dur, ctx)
        return dur

    cdef i64 rcu_softirq(self, int c) except -2:
        """RCU_SOFTIRQ at irq exit."""
        return self.do_softirq(c, self.now, False)

    cdef i64 do_softirq(self, int c, i64 t0, bint in_ksoftirqd) except -2:
        """__do_softirq() from t0 with its restart limits: RCU work is re-raised while ready
        callbacks remain (or, before 2.6.29, while rcu_do_batch() re-raised the tasklet)."""
        cdef cpu_t *cp = &self.cpus[c]
        cdef i64 total = 0
        cdef int restarts = 0
        while True:
            cp.tasklet_raised = 0
            cp.softirq_pending = 0
            total += self.rcu_core(c, t0 + total, 0)
            if cp.offloaded or not (cp.tasklet_raised if self.classic else self.cbs_ready(cp)):
                break
            restarts += 1
            if restarts >= MAX_SOFTIRQ_RESTART or (not self.softirq_restart_only and (
                    total >= MAX_SOFTIRQ_TIME_NS or cp.nr_queued > 0)):
                # Leftovers go to ksoftirqd/N (or rcuc/N); ksoftirqd itself just loops.
                cp.softirq_pending = 1
                if not in_ksoftirqd:
                    self.n_softirqd_wake += 1
                    self.wake(cp.rcuc, c, t0 + total)
                break
        return total

    cdef i64 rcuc_run(self, int e, i64 t0) except -2:
        if self.ents[e].phase == 0 and self.softirq_restart_only:
            # ksoftirqd() before v3.9: do_softirq() with preemption off, restarts and all.
            return self.do_softirq(self.ents[e].idx, t0, True)
        return self.rcu_core(self.ents[e].idx, t0, self.ents[e].phase)

    cdef i64 rcuc_done(self, int e) except -2:
        cdef int c = self.ents[e].idx
        cdef cpu_t *cp = &self.cpus[c]
        if self.cbs_ready(cp) or (self.ents[e].phase == 1 and self.rcu_pending(c)):
            return self.rcuc_run(e, self.now)
        return -1

    # =======================================================================
    # Scheduling-clock tick.
    # =======================================================================
    cdef void ev_tick(self, int c) except *:
        """The periodic scheduling-clock tick; it stops on a NO_HZ-idle CPU."""
        cdef cpu_t *cp = &self.cpus[c]
        if cp.state != CPU_BUSY and (cp.offloaded or self.n_cbs(cp) == 0):
            # rcu_needs_cpu() is false: the idle CPU stops its tick.
            cp.tick_on = 0
            return
        self.push(self.now + self.jiffy_ns, PRIO_NORMAL, EV_TICK, c, 0)
        self.tick_slice(c)  # the interrupted entity's slice ends at this irq exit
        self.tick_work(c)

    cdef void tick_slice(self, int c) except *:
        """SCHED_NORMAL time sharing: after a jiffy of running, the current entity
        yields to a queued one at the tick (a coarse stand-in for CFS/EEVDF slices)."""
        cdef cpu_t *cp = &self.cpus[c]
        if (cp.state != CPU_BUSY or cp.rq_head[RQ_NORMAL] < 0 or self.ents[cp.curr].rq != RQ_NORMAL
                or self.now - cp.run_start < self.jiffy_ns):
            return
        if not (self.preemption or cp.user_from <= self.now < cp.user_to):
            cp.need_resched = 1  # kernel mode, !PREEMPTION: switch at the next preemption point
            return
        if self.now < cp.nonpreempt_until or self.in_reader(c) and not self.rwl_preemptible[self.ents[cp.curr].idx]:
            return
        if self.burst_nopreempt(c) or self.ents[cp.curr].kind == ENT_KRCUD:
            return  # krcud/N at nice -19 keeps the CPU against nice-0 tasks
        self.preempt(c, True)

    cdef void timer_tick(self, int c) except *:
        """A timer expiring on CPU c: on a NO_HZ-idle CPU it fires from a tick."""
        if not self.cpus[c].tick_on:
            self.tick_work(c)

    cdef void tick_work(self, int c) except *:
        """rcu_sched_clock_irq() and, if rcu_pending(), RCU_SOFTIRQ at irq exit."""
        cdef cpu_t *cp = &self.cpus[c]
        cdef i64 cost = self.tick_ns
        cdef bint idle = cp.state != CPU_BUSY
        self.n_ticks += 1
        # rcu_flavor_sched_clock_irq()
        if idle:
            cp.cpu_no_qs = 0
        elif self.preempt_rcu and (not self.in_reader(c) or self.fault == 2):
            # PREEMPT_RCU: the tick interrupted code outside any reader.
            cp.cpu_no_qs = 0
        elif cp.user_from <= self.now < cp.user_to:
            # !PREEMPT_RCU: only user mode counts.
            cp.cpu_no_qs = 0
        if cp.urgent_qs and not idle:
            # rcu_urgent_qs: set need_resched; the context switch is a QS.
            cp.urgent_qs = 0
            self.acc = 0
            self.rcu_need_resched(c)
            cost += self.acc
        if self.rcu_pending(c):
            # invoke_rcu_core(): RCU_SOFTIRQ, or the rcuc/N kthread with use_softirq=0.
            if self.use_softirq or cp.offloaded:
                cost += self.rcu_softirq(c)
            else:
                self.wake(cp.rcuc, c, self.now + cost)
        if cp.plugticks > 0:
            cp.plugticks -= 1  # throttle-rcu: scheduler_tick() counts the plug down
        self.steal(c, cost)

    # =======================================================================
    # Grace-period kthread.
    # =======================================================================
    cdef i64 gp_run(self, int e, i64 t0) except -2:
        """Decide the kthread's next step and its cost."""
        cdef int nleaves = self.num_nodes - self.leaf_first
        cdef int n, ncpus = 0
        if self.gp_state == RCU_GP_IDLE:
            if not (self.gp_flags & RCU_GP_FLAG_INIT):
                self.gp_pending_phase = RCU_GP_IDLE
                return 0
            # ONOFF phase over the leaves, then the breadth-first INIT walk.
            self.gp_pending_phase = RCU_GP_INIT
            return (nleaves + self.num_nodes) * self.rnp_lock_ns
        # WAIT_FQS woken up.
        if self.root_qs_done():
            self.gp_pending_phase = RCU_GP_CLEANUP
            return self.num_nodes * self.rnp_lock_ns
        if self.now >= self.fqs_deadline or (self.gp_flags & RCU_GP_FLAG_FQS):
            for n in range(self.leaf_first, self.num_nodes):
                ncpus += popcount64(self.nodes[n].qsmask)
            self.gp_pending_phase = RCU_GP_DOING_FQS
            if self.trace_on:
                self.trace(t0, TR_GP_FQS_START, self.ents[e].cpu, e, self.gp_seq, 0, 0)
            return (nleaves + ncpus) * self.rnp_lock_ns
        self.gp_pending_phase = RCU_GP_WAIT_FQS
        return 0

    cdef void gp_arm_fqs_timer(self, i64 j) except *:
        cdef i64 deadline = (self.jiffies() + j) * self.jiffy_ns
        self.fqs_deadline = deadline
        self.gp_timer_gen += 1
        self.push(deadline, PRIO_NORMAL, EV_GP_TIMER, 0, <i64> self.gp_timer_gen)

    cdef i64 gp_done(self, int e) except -2:
        cdef int phase = self.gp_pending_phase
        self.acc = 0
        self.in_gp_kthread = 1
        if phase == RCU_GP_INIT:
            self.gp_init()
            self.gp_state = RCU_GP_WAIT_FQS
            self.fqs_first = 1
            self.gp_arm_fqs_timer(self.jiffies_till_first_fqs)
        elif phase == RCU_GP_DOING_FQS:
            self.gp_fqs()
            self.gp_flags &= ~RCU_GP_FLAG_FQS
            self.gp_arm_fqs_timer(self.jiffies_till_next_fqs)
        elif phase == RCU_GP_CLEANUP:
            self.gp_cleanup()
            self.gp_state = RCU_GP_IDLE
        self.in_gp_kthread = 0
        self.cpus[self.ents[e].cpu].debt += self.acc
        # Sleep unless the condition of the next wait already holds.
        if self.gp_state == RCU_GP_IDLE:
            if self.gp_flags & RCU_GP_FLAG_INIT:
                return self.gp_run(e, self.now)
            return -1
        if self.root_qs_done() or (self.gp_flags & RCU_GP_FLAG_FQS) or self.now >= self.fqs_deadline:
            return self.gp_run(e, self.now)
        return -1

    cdef void ev_gp_timer(self, i64 gen) except *:
        if <u64> gen != self.gp_timer_gen or self.gp_state != RCU_GP_WAIT_FQS:
            return
        self.timer_tick(self.gp_cpu)
        if self.ents[self.gp_ent].state == ST_BLOCKED:
            self.acc = 0
            self.wake(self.gp_ent, -1, self.now)

    cdef void gp_init(self) except *:
        """rcu_gp_init(): start gp_seq and set every node's qsmask."""
        cdef int n
        self.gp_flags = 0
        self.gp_start = self.now  # the GP begins at rcu_seq_start() below
        self.sr_normal_gp_init()
        self.gp_seq += 1  # rcu_seq_start()
        if self.trace_on:
            self.trace(self.now, TR_GP_START, self.gp_cpu, self.gp_ent, self.gp_seq, 0, 0)
        for n in range(self.num_nodes):
            self.nodes[n].qsmask = self.nodes[n].qsmaskinit
            self.nodes[n].gp_seq = self.gp_seq
        if self.preemptible_readers:
            self.mark_blocked_readers(0)  # rnp->gp_tasks
        self.note_gp_changes_locked(self.gp_cpu)
        if self.srs_next_head >= 0:
            # All wait heads were busy: ask for another GP for these waiters.
            self.start_this_gp(self.cpus[self.gp_cpu].leaf, rcu_seq_snap(self.gp_seq))

    cdef void gp_fqs(self) except *:
        """rcu_gp_fqs() -> force_qs_rnp(): report idle CPUs, nudge holdouts."""
        cdef int n, bit, c
        cdef u64 qsm, mask
        cdef cpu_t *cp
        cdef i64 age = (self.now - self.gp_start) // self.jiffy_ns
        cdef bint first = self.fqs_first
        cdef i64 nrep = 0
        self.fqs_first = 0
        self.n_fqs += 1
        for n in range(self.leaf_first, self.num_nodes):
            qsm = self.nodes[n].qsmask
            if qsm == 0:
                continue
            mask = 0
            while qsm:
                bit = ctz64(qsm)
                qsm &= qsm - 1
                c = self.nodes[n].grplo + bit
                cp = &self.cpus[c]
                if first:
                    # rcu_watching_snap_save()
                    cp.watching_snap = cp.watching
                    if cp.state == CPU_IDLE:
                        mask |= (<u64> 1) << bit
                elif cp.state == CPU_IDLE or cp.watching != cp.watching_snap:
                    # rcu_watching_snap_recheck(): passed through an EQS.
                    mask |= (<u64> 1) << bit
                else:
                    if age > self.jiffies_to_sched_qs:
                        cp.urgent_qs = 1
                    if age > self.jiffies_resched:
                        # resched_cpu(): an IPI forces a context switch.
                        self.n_ipis += 1
                        self.push(self.now + self.ipi_latency_ns, PRIO_URGENT, EV_IPI, c, 0)
                        if self.trace_on:
                            self.trace(self.now, TR_IPI_SEND, c, -1, self.gp_seq, 0, 0)
            if mask:
                if self.trace_on:
                    nrep += self.trace_qs_mask(n, mask, self.nodes[n].gp_seq, 1)
                self.report_qs_rnp(mask, n, self.nodes[n].gp_seq)
        if self.trace_on:
            self.trace(self.now, TR_GP_FQS_END, self.gp_cpu, self.gp_ent, self.gp_seq, nrep, 0)

    cdef void gp_cleanup(self) except *:
        """rcu_gp_cleanup(): end gp_seq node by node, wake rcuog waiters."""
        cdef int n, x, nxt
        cdef i64 new = rcu_seq_endval(self.gp_seq)
        cdef bint needgp = False
        cdef rnp_t *np
        for n in range(self.num_nodes):
            np = &self.nodes[n]
            np.gp_seq = new
            # swake_up_all(&rnp->nocb_gp_wq[]): rcuog waiting for this GP.
            x = np.nocb_wait
            np.nocb_wait = -1
            while x >= 0:
                nxt = self.ents[x].wait_next
                self.ents[x].wait_next = -1
                if rcu_seq_done(new, self.ents[x].wait_gp_seq):
                    self.ents[x].on_waitq = 0
                    self.wake(x, self.gp_cpu, self.now)
                else:
                    self.ents[x].wait_next = np.nocb_wait
                    np.nocb_wait = x
                x = nxt
            # rcu_future_gp_cleanup()
            if seq_lt(new, np.gp_seq_needed):
                needgp = True
            else:
                np.gp_seq_needed = new
        self.note_gp_changes_locked(self.gp_cpu)
        # "Check for GP requests since above loop" (CleanupMore): a request the
        # kthread's own CPU just made reached the root after its check above.
        if seq_lt(self.nodes[0].gp_seq, self.nodes[0].gp_seq_needed):
            needgp = True
        self.record_gp(0, self.gp_seq, self.gp_start, self.gp_qs_t, self.now, 0)
        self.gp_seq = new  # rcu_seq_end()
        if self.trace_on:
            self.trace(self.now, TR_GP_END, self.gp_cpu, self.gp_ent, new, 0, 0)
        self.sr_normal_gp_cleanup()
        if needgp:
            self.gp_flags |= RCU_GP_FLAG_INIT

    cdef void ev_ipi(self, int c) except *:
        """resched_cpu(): need_resched forces a context switch."""
        if self.trace_on:
            self.trace(self.now, TR_IPI_HANDLER, c, self.cpus[c].curr, self.gp_seq, 0, 0)
        if self.cpus[c].state == CPU_BUSY:
            self.acc = 0
            self.rcu_need_resched(c)
            self.steal(c, self.acc)

    cdef void rcu_need_resched(self, int c) except *:
        """need_resched on busy CPU c: schedule() at the next preemption point is a QS.

        With CONFIG_PREEMPTION, inside a non-preemptible reader that point is its
        rcu_read_unlock(); a preemptible reader is preempted in place and joins its
        leaf's blkd_tasks; elsewhere it is the irq exit. Without it, kernel code is
        switched out only where it calls schedule() or cond_resched().
        """
        cdef cpu_t *cp = &self.cpus[c]
        if not self.preemption and not (cp.user_from <= self.now < cp.user_to):
            # No preemption in kernel mode: the QS waits for the next schedule()
            # (a block, or cond_resched() in a busy loop).
            cp.need_resched = 1
            return
        if self.in_reader(c):
            if not self.rwl_preemptible[self.ents[cp.curr].idx]:
                cp.urgent_qs = 1
                return
            self.rcu_preempt_ctxt_queue(c, cp.curr)
        cp.cpu_no_qs = 0
        # rcu_note_context_switch() with rcu_urgent_qs: rcu_momentary_eqs(), which
        # the next FQS scan sees even if this CPU has not noticed the GP yet.
        cp.watching += 2
        if cp.exp_need_qs:
            self.rcu_report_exp_rdp(c)

    # =======================================================================
    # synchronize_rcu() with rcutree.rcu_normal_wake_from_gp=1.
    # =======================================================================
    cdef void synchronize_rcu_normal_wake(self, int e, int c) except *:
        """rcu_sr_normal_add_req() + start_poll_synchronize_rcu()."""
        self.ents[e].link = -1
        if self.srs_next_tail >= 0:
            self.ents[self.srs_next_tail].link = e
        else:
            self.srs_next_head = e
        self.srs_next_tail = e
        self.rnp_lock(self.cpus[c].leaf)
        if self.start_this_gp(self.cpus[c].leaf, rcu_seq_snap(self.gp_seq)):
            self.gp_kthread_wake()

    cdef void sr_normal_gp_init(self) noexcept:
        """rcu_sr_normal_gp_init(): waiters queued so far belong to this GP."""
        if self.srs_next_head < 0:
            return
        if self.srs_heads_inuse >= SR_NORMAL_GP_WAIT_HEAD_MAX:
            return
        self.srs_heads_inuse += 1
        self.srs_wait_head = self.srs_next_head
        self.srs_wait_tail = self.srs_next_tail
        self.srs_next_head = self.srs_next_tail = -1

    cdef void sr_normal_gp_cleanup(self) except *:
        """rcu_sr_normal_gp_cleanup(): wake a few waiters here, the rest from a worker."""
        cdef int e = self.srs_wait_head, nxt, done = 0
        if e < 0:
            return
        self.srs_wait_head = self.srs_wait_tail = -1
        while e >= 0 and done < SR_MAX_USERS_WAKE_FROM_GP:
            nxt = self.ents[e].link
            self.ents[e].link = -1
            self.acc += self.cb_cost[CB_WAKEME]
            self.wake(e, self.gp_cpu, self.now + self.acc)
            done += 1
            e = nxt
        if e < 0 and self.srs_done_heads == 0:
            self.srs_heads_inuse -= 1
            return
        # The rest (and this GP's wait head) go to srs_cleanup_work.
        self.srs_done_heads += 1
        while e >= 0:
            nxt = self.ents[e].link
            self.ents[e].link = -1
            if self.srs_done_tail >= 0:
                self.ents[self.srs_done_tail].link = e
            else:
                self.srs_done_head = e
            self.srs_done_tail = e
            e = nxt
        self.wake(self.sr_ent, self.gp_cpu, self.now + self.acc)

    cdef i64 sr_worker_run(self, int w, i64 t0) except -2:
        """rcu_sr_normal_gp_cleanup_work(): complete every waiter handed over."""
        cdef int e = self.srs_done_head, nxt
        cdef i64 t = t0
        self.srs_done_head = self.srs_done_tail = -1
        while e >= 0:
            nxt = self.ents[e].link
            self.ents[e].link = -1
            t += self.cb_cost[CB_WAKEME]
            self.wake(e, self.ents[w].cpu, t)
            e = nxt
        self.srs_heads_inuse -= self.srs_done_heads
        self.srs_done_heads = 0
        return t - t0

    cdef i64 sr_worker_done(self, int w) except -2:
        if self.srs_done_head >= 0 or self.srs_done_heads > 0:
            return self.sr_worker_run(w, self.now)
        return -1

    # =======================================================================
    # Readers: rcu_read_lock(); <length>; rcu_read_unlock(); <gap> in a loop.
    # =======================================================================
    cdef inline bint in_reader(self, int c) noexcept:
        cdef int e = self.cpus[c].curr
        return e >= 0 and self.ents[e].kind == ENT_READER and self.ents[e].phase == RD_IN

    cdef i64 reader_run(self, int e, i64 t0) except -2:
        """rcu_read_lock(): a new read-side critical section begins at t0."""
        cdef ent_t *ep = &self.ents[e]
        cdef int w = ep.idx
        ep.phase = RD_IN
        ep.rd_start = t0
        ep.rd_gpc0 = self.gp_completions[0]
        ep.rd_gpc1 = self.gp_completions[1]
        if self.rwl_len_exp[w]:
            return self.exp_ns(self.rwl_len_ns[w])
        return self.rwl_len_ns[w]

    cdef i64 reader_done(self, int e) except -2:
        cdef ent_t *ep = &self.ents[e]
        cdef int w = ep.idx
        cdef i64 gap
        if ep.phase == RD_OUT:
            if self.cond_resched(ep.cpu):
                return -1
            return self.reader_run(e, self.now)
        self.acc = 0
        self.rcu_read_unlock(e)
        self.cpus[ep.cpu].debt += self.acc
        ep.phase = RD_OUT
        gap = self.exp_ns(self.rwl_gap_ns[w])
        if self.rwl_gap_busy[w]:
            if gap > 0:
                return gap
            if self.cond_resched(ep.cpu):
                return -1
            return self.reader_run(e, self.now)
        self.push(self.now + gap, PRIO_NORMAL, EV_WAKE, e, 0)  # sleeps through the gap
        return -1

    cdef bint cond_resched(self, int c) except *:
        """cond_resched() at the end of a busy reader's gap, before its next rcu_read_lock().

        Without CONFIG_PREEMPTION this is where kernel code yields: schedule() if
        need_resched is set (the reader stays runnable, at the tail of its class;
        the context switch is a QS), else rcu_all_qs(), a QS if rcu_urgent_qs is
        set. With CONFIG_PREEMPTION it does nothing. Returns True if it yielded.
        """
        cdef cpu_t *cp = &self.cpus[c]
        if self.preemption:
            return False
        if cp.need_resched:
            self.enqueue(cp.curr)
            return True
        if cp.urgent_qs:
            # rcu_all_qs(): rcu_momentary_eqs() and rcu_qs().
            cp.urgent_qs = 0
            cp.cpu_no_qs = 0
            cp.watching += 2
        return False

    cdef void rcu_read_unlock(self, int e) except *:
        """The outermost rcu_read_unlock(): check the section, then rcu_read_unlock_special()."""
        cdef ent_t *ep = &self.ents[e]
        cdef int c = ep.cpu
        cdef cpu_t *cp = &self.cpus[c]
        cdef int n = cp.leaf
        self.check_reader(e)
        if ep.rd_blocked:
            # rcu_preempt_deferred_qs_irqrestore(): leave blkd_tasks; unblock the GPs it held.
            self.rnp_lock(n)
            ep.rd_blocked = 0
            self.nodes[n].blkd_n -= 1
            if ep.rd_blocks_gp:
                ep.rd_blocks_gp = 0
                self.nodes[n].gp_blockers -= 1
                if self.nodes[n].gp_blockers == 0 and self.nodes[n].qsmask == 0 and self.gp_in_progress():
                    self.rcu_report_unblock_qs_rnp(n)
            if ep.rd_blocks_exp:
                ep.rd_blocks_exp = 0
                self.nodes[n].exp_blockers -= 1
                self.rcu_report_exp_rnp(n, True)
        if cp.exp_need_qs:
            self.rcu_report_exp_rdp(c)
        if cp.urgent_qs:
            # need_resched was set inside the section: preempt_enable() schedules.
            cp.urgent_qs = 0
            cp.cpu_no_qs = 0
            cp.watching += 2

    cdef void rcu_preempt_ctxt_queue(self, int c, int e) except *:
        """A reader is preempted inside its section: queue it on its leaf's blkd_tasks.

        It blocks the current normal GP if its CPU still owes that GP a QS, and
        the current expedited GP if its CPU is still in the leaf's expmask.
        """
        cdef ent_t *ep = &self.ents[e]
        cdef cpu_t *cp = &self.cpus[c]
        cdef rnp_t *np = &self.nodes[cp.leaf]
        if ep.rd_blocked:
            return
        self.rnp_lock(cp.leaf)
        ep.rd_blocked = 1
        np.blkd_n += 1
        self.n_reader_blocked += 1
        if self.gp_in_progress() and (np.qsmask & cp.grpmask):
            ep.rd_blocks_gp = 1
            np.gp_blockers += 1
        if rcu_seq_state(self.exp_seq) and (np.expmask & cp.grpmask):
            ep.rd_blocks_exp = 1
            np.exp_blockers += 1

    cdef void mark_blocked_readers(self, int exp) noexcept:
        """At GP start every reader already on a blkd_tasks list blocks the new GP."""
        cdef int n, c, e
        for n in range(self.leaf_first, self.num_nodes):
            if exp:
                self.nodes[n].exp_blockers = self.nodes[n].blkd_n
            else:
                self.nodes[n].gp_blockers = self.nodes[n].blkd_n
        for c in range(self.nr_cpus):
            e = self.cpus[c].reader
            if e >= 0 and self.ents[e].rd_blocked:
                if exp:
                    self.ents[e].rd_blocks_exp = 1
                else:
                    self.ents[e].rd_blocks_gp = 1

    cdef void rcu_report_unblock_qs_rnp(self, int n) except *:
        """The last reader blocking the GP at leaf n left: report the leaf upwards."""
        cdef rnp_t *np = &self.nodes[n]
        if np.parent < 0:
            self.gp_qs_t = self.now + self.acc
            self.gp_flags |= RCU_GP_FLAG_FQS
            self.gp_kthread_wake()
            return
        self.rnp_lock(np.parent)
        self.report_qs_rnp(np.grpmask, np.parent, np.gp_seq)

    # =======================================================================
    # Safety checker, always on: a GP must wait for every reader that began
    # before it, and no caller or callback may finish before a whole GP.
    # =======================================================================
    cdef void violation(self, str what) except *:
        self.n_violations += 1
        if len(self.violations) < 100:
            self.violations.append(what)

    cdef void check_reader(self, int e) except *:
        """At rcu_read_unlock(): did a whole GP of either flavour fit inside the section?"""
        cdef ent_t *ep = &self.ents[e]
        cdef i64 spanned
        cdef int f
        self.n_readers_checked += 1
        for f in range(2):
            spanned = self.gp_completions[f] - (ep.rd_gpc1 if f else ep.rd_gpc0)
            self.reader_pipe[f][spanned if spanned < 2 else 2] += 1
            # GP starts are monotonic per flavour: checking the last completed one suffices.
            if spanned > 0 and self.last_gp_start[f] > ep.rd_start:
                self.violation(
                    f"reader on CPU {ep.cpu} (entity {e}) ran from {ep.rd_start} ns to {self.now} ns, "
                    f"across the whole {'expedited' if f else 'normal'} grace period gp_seq "
                    f"{self.last_gp_seq[f]} ({self.last_gp_start[f]} ns to its end before {self.now} ns)")

    cdef void check_request(self, int e, i64 t_end) except *:
        """A synchronize_rcu*() returns: a GP of its flavour must have started after the call."""
        cdef int f = self.wl_prim[self.task_wl[e]]
        cdef i64 t_call = self.ents[e].t_call
        if self.last_gp_start[f] < t_call:
            self.violation(
                f"{'synchronize_rcu_expedited' if f else 'synchronize_rcu'}() by task {e} on CPU "
                f"{self.ents[e].cpu}, called at {t_call} ns, returned at {t_end} ns before any "
                f"{'expedited' if f else 'normal'} grace period started after the call "
                f"(last completed: gp_seq {self.last_gp_seq[f]}, started {self.last_gp_start[f]} ns)")

    cdef void check_callback(self, int cb, int c) except *:
        if self.last_gp_start[0] < self.cbs[cb].t_queued:
            self.violation(
                f"callback queued on CPU {c} at {self.cbs[cb].t_queued} ns invoked at {self.now} ns "
                f"before a grace period started after it (last completed: gp_seq "
                f"{self.last_gp_seq[0]}, started {self.last_gp_start[0]} ns)")

    # =======================================================================
    # Expedited grace periods (kernel/rcu/tree_exp.h).
    # =======================================================================
    cdef inline void exp_lock(self, int n) noexcept:
        """rnp->exp_lock."""
        self.spin_lock(&self.nodes[n].exp_lock_free)

    cdef void exp_wq_add(self, int n, i64 s, int e) noexcept:
        """wait_event(rnp->exp_wq[rcu_seq_ctr(s) & 0x3], ...)."""
        cdef rnp_t *np = &self.nodes[n]
        cdef int k = (s >> 2) & 3
        self.ents[e].link = -1
        if np.exp_wq_tail[k] >= 0:
            self.ents[np.exp_wq_tail[k]].link = e
        else:
            np.exp_wq_head[k] = e
        np.exp_wq_tail[k] = e

    cdef i64 synchronize_rcu_expedited(self, int e, int c) except -2:
        """rcu_exp_gp_seq_snap() + exp_funnel_lock(); returns the next burst or -1 to sleep."""
        cdef ent_t *ep = &self.ents[e]
        cdef int leaf = self.cpus[c].leaf
        cdef int n = leaf
        cdef i64 s = rcu_seq_snap(self.exp_seq)
        ep.req_s = s
        ep.phase = TASK_WAITING
        ep.fl_held = -1
        if self.exp_funnel_mutexes:
            return self.exp_funnel_lock_mutexes(e, c)
        # Low-contention fast path straight to the mutex (it sets no exp_seq_rq).
        if (self.nodes[leaf].exp_seq_rq < s and (leaf == 0 or self.nodes[0].exp_seq_rq < s)
                and self.mutex_trylock(self.exp_mutex, e)):
            return self.exp_gp_start_or_done(e, c)
        while n >= 0:
            if rcu_seq_done(self.exp_seq, s):
                return self.task_return(e, self.now + self.acc)
            self.exp_lock(n)
            if self.nodes[n].exp_seq_rq >= s:
                # Someone else asked for this GP: wait for it here.
                self.n_exp_funnel_wait += 1
                self.exp_wq_add(n, s, e)
                return -1
            self.nodes[n].exp_seq_rq = s  # followers can wait on us
            n = self.nodes[n].parent
        ep.fl_next = self.exp_mutex
        if self.mutex_lock(self.exp_mutex, e):
            return self.exp_gp_start_or_done(e, c)
        return -1

    cdef i64 exp_funnel_lock_mutexes(self, int e, int c) except -2:
        """exp_funnel_lock() before v4.6: rdp, then rcu_node mutexes hand over hand.

        A task first tries the root's mutex directly when it looks free; that
        lets newcomers overtake tasks queued lower in the funnel.
        """
        cdef ent_t *ep = &self.ents[e]
        if self.mtx_owner[0] < 0 and self.mutex_trylock(0, e):
            ep.fl_held = 0
            return self.exp_gp_start_or_done(e, c)
        if rcu_seq_done(self.exp_seq, ep.req_s):
            return self.task_return(e, self.now + self.acc)
        ep.fl_next = self.num_nodes + c
        if not self.mutex_lock(ep.fl_next, e):
            return -1
        ep.fl_held = ep.fl_next
        return self.exp_funnel_climb(e, c, self.cpus[c].leaf)

    cdef i64 exp_funnel_climb(self, int e, int c, int n) except -2:
        """Holding fl_held, take node n's mutex, drop the one below, go on up."""
        cdef ent_t *ep = &self.ents[e]
        while n >= 0:
            if rcu_seq_done(self.exp_seq, ep.req_s):
                self.mutex_unlock(ep.fl_held, c)  # sync_exp_work_done() drops it
                ep.fl_held = -1
                return self.task_return(e, self.now + self.acc)
            ep.fl_next = n
            if not self.mutex_lock(n, e):
                return -1
            self.mutex_unlock(ep.fl_held, c)
            ep.fl_held = n
            n = self.nodes[n].parent
        return self.exp_gp_start_or_done(e, c)

    cdef i64 exp_mutex_retry(self, int e, int c) except -2:
        """A task woken from a funnel or exp mutex runs: go on if it now holds it."""
        cdef ent_t *ep = &self.ents[e]
        cdef int m = ep.fl_next
        if not self.mutex_retry(m, e):
            return -1
        ep.phase = TASK_WAITING
        if m == self.exp_mutex:
            return self.exp_gp_start_or_done(e, c)
        if m == self.num_nodes + c:
            ep.fl_held = m
            return self.exp_funnel_climb(e, c, self.cpus[c].leaf)
        self.mutex_unlock(ep.fl_held, c)
        ep.fl_held = m
        return self.exp_funnel_climb(e, c, self.nodes[m].parent)

    # --- sleeping mutexes ----------------------------------------------------
    cdef bint mutex_trylock(self, int m, int e) noexcept:
        self.acc += self.rnp_lock_ns
        if self.mtx_owner[m] >= 0:
            return False
        if self.mtx_head[m] >= 0:
            self.n_exp_mutex_steal += 1  # a newcomer overtakes a woken waiter
        self.mtx_owner[m] = e
        return True

    cdef bint mutex_lock(self, int m, int e) noexcept:
        """mutex_lock(): True if e holds m now, else e is queued and must sleep."""
        if self.mutex_trylock(m, e):
            return True
        self.n_exp_mutex_wait += 1
        self.ents[e].phase = TASK_MUTEX_WAIT
        self.ents[e].link = -1
        if self.mtx_tail[m] >= 0:
            self.ents[self.mtx_tail[m]].link = e
        else:
            self.mtx_head[m] = e
        self.mtx_tail[m] = e
        return False

    cdef bint mutex_retry(self, int m, int e) noexcept:
        """The woken waiter e runs: a plain mutex may have been taken meanwhile."""
        cdef int x = self.mtx_head[m], prev = -1
        if self.mtx_owner[m] == e:
            return True  # rt_mutex hand-off
        if self.mtx_owner[m] >= 0:
            return False  # lost the race; still first in the wait list
        while x >= 0 and x != e:
            prev = x
            x = self.ents[x].link
        if x >= 0:
            if prev >= 0:
                self.ents[prev].link = self.ents[e].link
            else:
                self.mtx_head[m] = self.ents[e].link
            if self.mtx_tail[m] == e:
                self.mtx_tail[m] = prev
            self.ents[e].link = -1
        self.mtx_owner[m] = e
        return True

    cdef void mutex_unlock(self, int m, int c) except *:
        """mutex_unlock() by a task on CPU c.

        A plain mutex is left free and its first waiter woken: anyone who asks
        before that waiter runs takes it (queue jumping). An rt_mutex hands the
        lock to its first waiter (FIFO among equal priorities).
        """
        cdef int w = self.mtx_head[m]
        if self.exp_mutex_rt and w >= 0:
            self.mtx_head[m] = self.ents[w].link
            if self.mtx_head[m] < 0:
                self.mtx_tail[m] = -1
            self.ents[w].link = -1
            self.mtx_owner[m] = w
        else:
            self.mtx_owner[m] = -1
        if w >= 0:
            self.acc += self.ttwu_ns
            self.wake(w, c, self.now + self.acc)

    cdef i64 exp_gp_start_or_done(self, int e, int c) except -2:
        """The task holds the GP mutex: start its GP, or return if one already covered it."""
        cdef ent_t *ep = &self.ents[e]
        if rcu_seq_done(self.exp_seq, ep.req_s):
            self.mutex_unlock(self.gp_mutex, c)
            return self.task_return(e, self.now + self.acc)
        self.exp_seq += 1  # rcu_exp_gp_seq_start()
        self.exp_gp_start = self.now + self.acc
        if self.trace_on:
            self.trace(self.exp_gp_start, TR_EXP_START, c, e, self.exp_seq, 0, 0)
        self.exp_gp_qs = self.exp_gp_start
        self.exp_gp_ipis = 0
        self.exp_work_queued = 1
        if self.exp_driver_task:
            # Before v4.9 the requester runs rcu_exp_sel_wait_wake() itself.
            self.exp_driver = e
            ep.phase = TASK_EXP_DRIVE
            return self.exp_gp_run(e, self.now + self.acc)
        # Queue rcu_exp_sel_wait_wake() on the kworker, then sleep on the root's exp_wq.
        self.acc += self.ttwu_ns
        self.wake(self.exp_ent, c, self.now + self.acc)
        ep.phase = TASK_EXP_OWNER
        self.exp_wq_add(0, ep.req_s, e)
        return -1

    cdef inline bint exp_root_done(self) noexcept:
        return self.nodes[0].expmask == 0 and self.nodes[0].exp_blockers == 0

    # --- the kworker: rcu_exp_sel_wait_wake() --------------------------------
    cdef i64 exp_gp_run(self, int e, i64 t0) except -2:
        if self.exp_phase == EXP_IDLE:
            if not self.exp_work_queued:
                return 0
            self.exp_work_queued = 0
            self.exp_phase = EXP_RESET
            return self.num_nodes * self.rnp_lock_ns  # sync_exp_reset_tree()
        if self.exp_phase == EXP_FLUSH or self.exp_phase == EXP_WAIT:
            if self.exp_par_pending > 0:
                return 0
            if not self.exp_root_done():
                self.exp_phase = EXP_WAIT
                return 0
            self.exp_phase = EXP_WAKE
            return self.rcu_exp_wait_wake(t0)
        return 0

    cdef i64 exp_gp_done(self, int e) except -2:
        cdef int phase = self.exp_phase, n
        cdef i64 nxt = -1
        self.acc = 0
        if phase == EXP_RESET:
            self.sync_exp_reset_tree()
            nxt = self.sync_rcu_exp_select_cpus()
        elif phase == EXP_SELECT:
            for n in range(self.exp_last_leaf if self.exp_par else self.leaf_first, self.num_nodes):
                self.rcu_report_exp_cpu_mult(n, self.nodes[n].exp_sel_qs, False)
            self.exp_phase = EXP_FLUSH
        elif phase == EXP_WAKE:
            self.exp_phase = EXP_IDLE
        self.cpus[self.ents[e].cpu].debt += self.acc
        if nxt >= 0:
            return nxt
        # Sleep unless the condition of the next wait already holds.
        if self.exp_phase == EXP_IDLE and self.exp_work_queued:
            return self.exp_gp_run(e, self.now)
        if ((self.exp_phase == EXP_FLUSH or self.exp_phase == EXP_WAIT)
                and self.exp_par_pending == 0 and self.exp_root_done()):
            return self.exp_gp_run(e, self.now + self.acc)  # after the reports just charged
        if self.exp_phase == EXP_FLUSH and self.exp_par_pending == 0:
            self.exp_phase = EXP_WAIT
        return -1

    cdef void sync_exp_reset_tree(self) noexcept:
        cdef int n
        for n in range(self.num_nodes):
            self.nodes[n].expmask = self.nodes[n].expmaskinit
        if self.preemptible_readers:
            self.mark_blocked_readers(1)  # rnp->exp_tasks

    cdef i64 sync_rcu_exp_select_cpus(self) except -2:
        """Queue each leaf's selection on its worker; the last leaf runs inline."""
        cdef int n
        cdef int c = self.ents[self.exp_driver].cpu
        cdef i64 t = self.now + self.acc
        self.exp_par_pending = 0
        self.exp_phase = EXP_SELECT
        if not self.exp_par:
            # Before v4.17 the driver selects every leaf itself, one after another.
            for n in range(self.leaf_first, self.num_nodes):
                t += self.exp_select_node_cpus(n, c, t)
            return t - self.now - self.acc
        for n in range(self.leaf_first, self.num_nodes - 1):
            if self.nodes[n].expmask == 0:
                continue
            self.exp_par_pending += 1
            self.acc += self.ttwu_ns
            self.wake(self.nodes[n].par_ent, c, self.now + self.acc)
        # The burst starts with this queueing cost (acc, charged as debt) and goes on inline.
        return self.exp_select_node_cpus(self.exp_last_leaf, c, self.now + self.acc)

    cdef i64 exp_par_run(self, int e, i64 t0) except -2:
        return self.exp_select_node_cpus(self.ents[e].idx, self.ents[e].cpu, t0)

    cdef i64 exp_par_done(self, int e) except -2:
        cdef int n = self.ents[e].idx
        self.acc = 0
        self.rcu_report_exp_cpu_mult(n, self.nodes[n].exp_sel_qs, False)
        self.exp_par_pending -= 1
        if self.exp_par_pending == 0 and self.exp_phase == EXP_FLUSH:
            self.acc += self.ttwu_ns
            self.wake(self.exp_driver, self.ents[e].cpu, self.now + self.acc)
        self.cpus[self.ents[e].cpu].debt += self.acc
        return -1

    cdef i64 exp_select_node_cpus(self, int n, int self_cpu, i64 t0) except -2:
        """__sync_rcu_exp_select_node_cpus() on CPU self_cpu from t0; returns its duration.

        CPUs idle (an extended QS) or the selecting CPU itself are quiescent and
        reported when the selection ends; the others get rcu_exp_handler() IPIs,
        sent one at a time: smp_call_function_single(wait=0) reuses the sender's
        one csd, so each send waits until the previous target took its IPI.
        """
        cdef rnp_t *np = &self.nodes[n]
        cdef u64 todo = np.expmask, qs = 0
        cdef int bit, c
        cdef i64 t = t0 + self.rnp_lock_ns
        while todo:
            bit = ctz64(todo)
            todo &= todo - 1
            c = np.grplo + bit
            if c == self_cpu or self.cpus[c].state != CPU_BUSY:
                qs |= (<u64> 1) << bit
                continue
            t += self.ipi_send_ns
            self.push(t + self.ipi_latency_ns, PRIO_URGENT, EV_EXP_IPI, c, self.exp_seq)
            if self.trace_on:
                self.trace(t, TR_IPI_SEND, c, -1, self.exp_seq, 1, 0)
            self.n_exp_ipis += 1
            self.exp_gp_ipis += 1
            t += self.ipi_latency_ns
        np.exp_sel_qs = qs
        return t - t0

    cdef void ev_exp_ipi(self, int c) except *:
        """rcu_exp_handler(): report now, or when the reader / non-preemptible section ends."""
        cdef cpu_t *cp = &self.cpus[c]
        cdef rnp_t *np = &self.nodes[cp.leaf]
        if self.trace_on:
            self.trace(self.now, TR_IPI_HANDLER, c, cp.curr, self.exp_seq, 1, 0)
        self.acc = 0
        if (np.expmask & cp.grpmask) and not cp.exp_need_qs:
            if cp.state != CPU_BUSY:
                self.rcu_report_exp_rdp(c)  # interrupted from idle
            elif self.in_reader(c) and self.fault != 1:
                cp.exp_need_qs = 1
                self.n_exp_deferred += 1
            elif self.now < cp.nonpreempt_until:
                cp.exp_need_qs = 1
                self.n_exp_deferred += 1
                if not cp.exp_deferred_pending:
                    cp.exp_deferred_pending = 1
                    self.push(cp.nonpreempt_until, PRIO_URGENT, EV_EXP_DEFERRED, c, 0)
            else:
                self.rcu_report_exp_rdp(c)
        self.steal(c, self.ipi_handler_ns + self.acc)

    cdef void ev_exp_deferred(self, int c) except *:
        cdef cpu_t *cp = &self.cpus[c]
        cp.exp_deferred_pending = 0
        if not cp.exp_need_qs or self.in_reader(c):
            return  # already reported, or the reader's unlock will
        if self.now < cp.nonpreempt_until:
            cp.exp_deferred_pending = 1
            self.push(cp.nonpreempt_until, PRIO_URGENT, EV_EXP_DEFERRED, c, 0)
            return
        self.acc = 0
        self.rcu_report_exp_rdp(c)
        self.steal(c, self.acc)

    cdef void rcu_report_exp_rdp(self, int c) except *:
        self.cpus[c].exp_need_qs = 0
        self.rcu_report_exp_cpu_mult(self.cpus[c].leaf, self.cpus[c].grpmask, True)

    cdef void rcu_report_exp_cpu_mult(self, int n, u64 mask, bint wake) except *:
        self.rnp_lock(n)
        if (self.nodes[n].expmask & mask) == 0:
            return
        if self.trace_on:
            self.trace_qs_mask(n, self.nodes[n].expmask & mask, self.exp_seq, 2)
        self.nodes[n].expmask &= ~mask
        self.rcu_report_exp_rnp(n, wake)

    cdef void rcu_report_exp_rnp(self, int n, bint wake) except *:
        """__rcu_report_exp_rnp(): climb while nodes empty; wake the kworker at the root."""
        cdef rnp_t *np
        cdef u64 mask
        while True:
            np = &self.nodes[n]
            if np.expmask != 0 or np.exp_blockers > 0:
                return
            if np.parent < 0:
                if rcu_seq_state(self.exp_seq):
                    self.exp_gp_qs = self.now + self.acc
                if wake and self.exp_phase == EXP_WAIT:
                    self.acc += self.ttwu_ns
                    self.wake(self.exp_driver, -1, self.now + self.acc)  # swake_up_one(&expedited_wq)
                return
            mask = np.grpmask
            n = np.parent
            self.rnp_lock(n)
            if (self.nodes[n].expmask & mask) == 0:
                return
            self.nodes[n].expmask &= ~mask

    cdef i64 rcu_exp_wait_wake(self, i64 t0) except -2:
        """rcu_seq_end(&expedited_sequence), then wake every node's waiters for it."""
        cdef int n, x, nxt, k
        cdef int c = self.ents[self.exp_driver].cpu
        cdef i64 t = t0 + self.rnp_lock_ns  # exp_wake_mutex
        cdef i64 s
        self.record_gp(1, self.exp_seq, self.exp_gp_start, self.exp_gp_qs, t, self.exp_gp_ipis)
        self.exp_seq = rcu_seq_endval(self.exp_seq)
        if self.trace_on:
            self.trace(t, TR_EXP_END, c, self.exp_driver, self.exp_seq, self.exp_gp_ipis, 0)
        s = self.exp_seq
        k = (s >> 2) & 3
        for n in range(self.num_nodes):
            t += self.rnp_lock_ns  # rnp->exp_lock
            if self.nodes[n].exp_seq_rq < s:
                self.nodes[n].exp_seq_rq = s
            x = self.nodes[n].exp_wq_head[k]
            self.nodes[n].exp_wq_head[k] = self.nodes[n].exp_wq_tail[k] = -1
            while x >= 0:
                nxt = self.ents[x].link
                self.ents[x].link = -1
                t += self.ttwu_ns
                self.wake(x, c, t)
                x = nxt
        return t - t0

    # =======================================================================
    # kvfree_rcu() batching: kfree_rcu_cpu ("krcp"), bulk pages ("bnodes"),
    # the monitor work, kfree_rcu_work after a grace period, the rcu_head
    # fallback list (channel 3), the page cache, and the rcuscale kfree
    # threads that flood it (kernel/rcu/tree.c ~v6.1..v6.3, rcuscale.c).
    #
    # Only the slab channel of bulk_head[] is modelled: rcuscale's objects
    # are kmalloc()ed, so the vmalloc channel stays empty.
    #
    # NOTE: for speed a kfree thread's burst covers every kfree_rcu() call
    # until its current page is full (kv_chunk = 0), instead of one call
    # (kv_chunk = 1, the per-pointer mode the tests compare against).  The
    # page's gp_snap and the monitor's timer are computed for the calls that
    # set them (the newest insert, the first call and the call that reaches
    # KVFREE_BULK_MAX_ENTR), so aggregation changes event counts, not rules.
    # =======================================================================
    cdef krc_t *krcs
    cdef bnode_t *bnodes
    cdef int bn_cap
    cdef int bn_free
    cdef int n_kfree              # rcuscale kfree threads
    cdef int kfree_first          # entity index of the first one
    cdef i64 *kt_loop             # per thread: loops done
    cdef i64 *kt_i                # ... objects done in the current loop
    cdef i64 *kt_start            # ... start_time (ns)
    cdef i64 *kt_mem_begin        # ... mem_begin (pages of si_mem_available())
    cdef i64 *kt_mem_during       # ... mem_during
    cdef i64 *kt_plan             # ... planned burst: channel-3 objects, page source, pointers
    cdef i64 kt_alloc_num         # rcuscale.kfree_alloc_num
    cdef i64 kt_loops             # rcuscale.kfree_loops
    cdef int kt_started, kt_ended
    cdef int kv_last              # the thread that finished last (prints the line)
    cdef i64 kv_b_start, kv_b_end, kv_end_time
    cdef int kv_polled            # per-page polled reclaim (seed 001's patch)
    cdef int kv_chunk             # 1 = one event per kfree_rcu() call
    cdef int kv_form              # 0 = both kfree_rcu() forms at random, 1 = single-argument, 2 = two-argument
    cdef i64 kv_max_entr          # KVFREE_BULK_MAX_ENTR: pointers per page
    cdef i64 kv_drain_jiffies     # KFREE_DRAIN_JIFFIES
    cdef int kv_min_cached        # rcutree.rcu_min_cached_objs
    cdef i64 kv_obj_bytes         # slab object size (kmalloc size class)
    cdef i64 kv_call_ns           # kmalloc() + kvfree_call_rcu() per object
    cdef i64 kv_page_alloc_ns
    cdef i64 kv_kfree_bulk_ns
    cdef i64 kv_kfree_ns
    cdef i64 kv_objs              # objects allocated and not yet freed
    cdef i64 kv_pages             # bulk pages allocated (in lists, in hand or cached)
    cdef i64 kv_sample_ns
    cdef i64 kv_next_sample
    cdef i64 *ms_t
    cdef i64 *ms_bytes
    cdef i64 ms_n, ms_cap
    cdef i64 kv_peak_bytes
    cdef i64 n_kv_pages_filled, n_kv_batches, n_kv_works, n_kv_ready_pages
    cdef i64 n_kv_sync, n_kv_head_objs, n_kv_page_allocs, n_kv_monitor_runs

    cdef int kvfree_init(self, dict p, dict kf, int e) except -1:
        """Create the kfree threads and, on their CPUs, the kworkers of each krcp."""
        cdef int c, k, w, n
        cdef krc_t *kp
        kt_cpu = kf["cpu"]
        self.n_kfree = len(kt_cpu)
        self.krcs = <krc_t *> malloc((self.nr_cpus + 1) * sizeof(krc_t))
        n = self.n_kfree + 1
        self.kt_loop = <i64 *> malloc(n * sizeof(i64))
        self.kt_i = <i64 *> malloc(n * sizeof(i64))
        self.kt_start = <i64 *> malloc(n * sizeof(i64))
        self.kt_mem_begin = <i64 *> malloc(n * sizeof(i64))
        self.kt_mem_during = <i64 *> malloc(n * sizeof(i64))
        self.kt_plan = <i64 *> malloc(3 * n * sizeof(i64))
        self.ms_cap = 1024
        self.ms_t = <i64 *> malloc(self.ms_cap * sizeof(i64))
        self.ms_bytes = <i64 *> malloc(self.ms_cap * sizeof(i64))
        if (self.krcs == NULL or self.kt_loop == NULL or self.kt_i == NULL or self.kt_start == NULL
                or self.kt_mem_begin == NULL or self.kt_mem_during == NULL or self.kt_plan == NULL
                or self.ms_t == NULL or self.ms_bytes == NULL):
            raise MemoryError()
        memset(self.krcs, 0, (self.nr_cpus + 1) * sizeof(krc_t))
        memset(self.kt_loop, 0, n * sizeof(i64))
        memset(self.kt_i, 0, n * sizeof(i64))
        memset(self.kt_mem_during, 0, n * sizeof(i64))
        self.bn_cap = 0
        self.bn_free = -1
        self.kv_last = -1
        if self.n_kfree == 0:
            return e
        self.grow_bnodes(1024)
        self.kt_alloc_num = kf["alloc_num"]
        self.kt_loops = kf["loops"]
        self.kv_polled = kf["polled"]
        self.kv_chunk = kf["chunk"]
        self.kv_form = kf["form"]
        self.kv_max_entr = kf["max_entr"]
        self.kv_drain_jiffies = kf["drain_jiffies"]
        self.kv_min_cached = kf["min_cached"]
        self.kv_obj_bytes = kf["obj_bytes"]
        self.kv_call_ns = p["kmalloc_ns"] + p["kvfree_call_rcu_ns"]
        self.kv_page_alloc_ns = p["page_alloc_ns"]
        self.kv_kfree_bulk_ns = p["kfree_bulk_ns"]
        self.kv_kfree_ns = p["kfree_ns"]
        self.kv_sample_ns = kf["sample_ns"]
        for c in range(self.nr_cpus):
            kp = &self.krcs[c]
            kp.bulk_head = kp.bulk_tail = -1
            kp.monitor_expires = -1
            for k in range(KW_N):
                kp.kworker[k] = -1
            for k in range(KFREE_N_BATCHES):
                kp.krw[k].bulk_head = kp.krw[k].bulk_tail = -1
                kp.krw[k].hand_head = kp.krw[k].hand_tail = -1
        self.kfree_first = e
        for k in range(self.n_kfree):
            self.ents[e].kind = ENT_KFREE
            self.ents[e].cpu = kt_cpu[k]
            self.ents[e].idx = k
            self.ents[e].rq = RQ_NORMAL  # set_user_nice(current, MAX_NICE)
            e += 1
        # system_wq is bound per CPU: the monitor, page_cache_work and both
        # kfree_rcu_work items of a krcp run on kworkers of its CPU.  A work item
        # that sleeps (synchronize_rcu()) lets another kworker run the others.
        for c in range(self.nr_cpus):
            if not kf["has_thread"][c]:
                continue
            kp = &self.krcs[c]
            for w in range(KFREE_N_BATCHES + 1):
                self.ents[e].kind = ENT_KWORKER
                self.ents[e].cpu = c
                self.ents[e].idx = c
                self.ents[e].rq = RQ_NORMAL
                if w == 0:
                    kp.kworker[KW_MONITOR] = kp.kworker[KW_PAGE_CACHE] = e
                else:
                    kp.kworker[KW_RECLAIM0 + w - 1] = e
                e += 1
        self.tasks_left += self.n_kfree
        return e

    cdef void kvfree_dealloc(self) noexcept:
        free(self.krcs)
        free(self.bnodes)
        free(self.kt_loop)
        free(self.kt_i)
        free(self.kt_start)
        free(self.kt_mem_begin)
        free(self.kt_mem_during)
        free(self.kt_plan)
        free(self.ms_t)
        free(self.ms_bytes)

    cdef void grow_bnodes(self, int cap) except *:
        cdef int i
        self.bnodes = <bnode_t *> realloc(self.bnodes, cap * sizeof(bnode_t))
        if self.bnodes == NULL:
            raise MemoryError()
        for i in range(self.bn_cap, cap):
            self.bnodes[i].next = self.bn_free
            self.bn_free = i
        self.bn_cap = cap

    cdef int bnode_new(self) except -1:
        """A bulk page for krcp: taken from its cache or newly allocated."""
        cdef int b
        if self.bn_free < 0:
            self.grow_bnodes(self.bn_cap * 2)
        b = self.bn_free
        self.bn_free = self.bnodes[b].next
        self.bnodes[b].next = -1
        self.bnodes[b].nr_records = 0
        return b

    cdef void bnode_put(self, krc_t *kp, int b) noexcept:
        """put_cached_bnode(), else free_page()."""
        self.bnodes[b].next = self.bn_free
        self.bn_free = b
        if kp.cache < self.kv_min_cached:
            kp.cache += 1
        else:
            self.kv_pages -= 1

    # --- memory accounting ---------------------------------------------------
    cdef inline i64 kv_bytes(self) noexcept:
        return self.kv_objs * self.kv_obj_bytes + self.kv_pages * 4096

    cdef void kv_mem_changed(self) except *:
        """Record bytes allocated and not yet freed, at most once per kv_sample_ns."""
        cdef i64 b = self.kv_bytes(), cap
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

    cdef inline i64 si_mem_available(self) noexcept:
        """Free pages of a machine whose size cancels out of rcuscale's difference."""
        return (<i64> 1 << 40) - (self.kv_objs * self.kv_obj_bytes + 4095) // 4096 - self.kv_pages

    # --- rcuscale kfree_scale_thread -----------------------------------------
    cdef i64 kfree_run(self, int e, i64 t0) except -2:
        """Plan the next burst: kmalloc() + kfree_rcu() until the current page is full."""
        cdef int k = self.ents[e].idx
        cdef krc_t *kp = &self.krcs[self.ents[e].cpu]
        cdef i64 left, room = 0, h = 0, n, src = 0, avail
        cdef i64 quarter = self.kt_loops // 4
        if self.kt_i[k] == 0:
            if self.kt_loop[k] == 0:
                self.kt_start[k] = t0
                self.kt_started += 1
                if self.kt_started == self.n_kfree:
                    self.kv_b_start = self.gp_seq  # b_rcu_gp_test_started = cur_ops->get_gp_seq()
            avail = self.si_mem_available()
            if self.kt_mem_during[k] == 0:
                self.kt_mem_begin[k] = avail
                self.kt_mem_during[k] = avail
            elif self.kt_loop[k] % quarter == 0:
                self.kt_mem_during[k] = (self.kt_mem_during[k] + avail) // 2
        left = self.kt_alloc_num - self.kt_i[k]
        if kp.bulk_tail >= 0:
            room = self.kv_max_entr - self.bnodes[kp.bulk_tail].nr_records
        if room == 0:
            if kp.cache > 0:
                src = 1  # get_cached_bnode()
            else:
                # No page at hand: a two-argument kfree_rcu() falls back to the
                # rcu_head list; a single-argument one may sleep in __get_free_page().
                h = self.kv_leading_double(left)
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
        self.kt_plan[3 * k] = h
        self.kt_plan[3 * k + 1] = src
        self.kt_plan[3 * k + 2] = n
        return (h + n) * self.kv_call_ns + (self.kv_page_alloc_ns if src == 2 else 0)

    cdef i64 kv_leading_double(self, i64 left) noexcept:
        """Two-argument calls before the first single-argument one (rcuscale's
        torture_random() & 0x800 picks the form of each call)."""
        cdef double u
        if self.kv_form == 1:
            return 0
        if self.kv_form == 2:
            return 1 if self.kv_chunk else min(left, self.kv_max_entr)
        if self.kv_chunk:
            return 1 if self.rng.next_double(self.rng.state) < 0.5 else 0
        u = self.rng.next_double(self.rng.state)
        return <i64> (log(1.0 - u) / log(0.5))

    cdef i64 kfree_done(self, int e) except -2:
        """The planned calls happened, the last one ending now."""
        cdef int k = self.ents[e].idx
        cdef int c = self.ents[e].cpu
        cdef krc_t *kp = &self.krcs[c]
        cdef i64 h = self.kt_plan[3 * k], src = self.kt_plan[3 * k + 1], n = self.kt_plan[3 * k + 2]
        cdef i64 calls = h + n, before = kp.count, t_first
        cdef int b
        self.acc = 0
        if h > 0:
            kp.head_count += h
            kp.head_t = self.now
            self.n_kv_head_objs += h
            self.run_page_cache_worker(c)
        if n > 0 and src == 0 and kp.bulk_tail < 0:
            src = 1  # the monitor detached the page being filled during the burst
        if src:
            if src == 1 and kp.cache > 0:
                kp.cache -= 1
            else:
                self.kv_pages += 1
                self.n_kv_page_allocs += 1
            b = self.bnode_new()
            if kp.bulk_tail >= 0:
                self.bnodes[kp.bulk_tail].next = b
            else:
                kp.bulk_head = b
            kp.bulk_tail = b
        if n > 0:
            b = kp.bulk_tail
            self.bnodes[b].nr_records += n
            self.bnodes[b].gp_snap = rcu_seq_snap(self.gp_seq)  # get_state_synchronize_rcu()
            self.bnodes[b].t_last = self.now
            if self.bnodes[b].nr_records == self.kv_max_entr:
                self.n_kv_pages_filled += 1
        self.kv_objs += calls
        kp.count += calls
        if calls > 0:
            # schedule_delayed_monitor_work() after each call: only the first call
            # and the one reaching KVFREE_BULK_MAX_ENTR can shorten the delay.
            t_first = self.now - (calls - 1) * self.kv_call_ns
            self.schedule_monitor(c, t_first, before + 1)
            if before + 1 < self.kv_max_entr <= kp.count:
                self.schedule_monitor(c, t_first + (self.kv_max_entr - before - 1) * self.kv_call_ns,
                                      self.kv_max_entr)
        self.kv_mem_changed()
        self.cpus[c].debt += self.acc
        self.kt_i[k] += calls
        if self.kt_i[k] == self.kt_alloc_num:
            self.kt_i[k] = 0
            self.kt_loop[k] += 1
            if self.kt_loop[k] == self.kt_loops:
                self.kt_ended += 1
                if self.kt_ended == self.n_kfree:
                    self.kv_end_time = self.now
                    self.kv_b_end = self.gp_seq
                    self.kv_last = k
                self.ents[e].phase = KT_DONE
                self.tasks_left -= 1
                return -1
        return self.kfree_run(e, self.now)

    # --- monitor work ----------------------------------------------------------
    cdef void schedule_monitor(self, int c, i64 t_call, i64 count) except *:
        """schedule_delayed_monitor_work() by a call at t_call that left count queued."""
        cdef krc_t *kp = &self.krcs[c]
        cdef i64 j = t_call // self.jiffy_ns
        cdef i64 delay = 1 if count >= self.kv_max_entr else self.kv_drain_jiffies
        cdef i64 t
        if kp.monitor_queued:
            return  # delayed_work_pending(): queued, its timer already expired
        if kp.monitor_expires >= 0 and delay >= kp.monitor_expires // self.jiffy_ns - j:
            return
        t = (j + delay) * self.jiffy_ns  # queue_delayed_work() / mod_delayed_work()
        if t < self.now:
            t = self.now
        kp.monitor_expires = t
        kp.monitor_gen += 1
        self.push(t, PRIO_NORMAL, EV_KFREE_MONITOR, c, <i64> kp.monitor_gen)

    cdef void ev_kfree_monitor(self, int c, i64 gen) except *:
        cdef krc_t *kp = &self.krcs[c]
        if <u64> gen != kp.monitor_gen or kp.monitor_expires < 0:
            return
        kp.monitor_expires = -1
        kp.monitor_queued = 1
        self.timer_tick(c)
        self.acc = 0
        self.wake(kp.kworker[KW_MONITOR], c, self.now)

    cdef void run_page_cache_worker(self, int c) except *:
        """run_page_cache_worker(): hrtimer(0) -> page_cache_work on system_highpri_wq."""
        cdef krc_t *kp = &self.krcs[c]
        if kp.cache_work:
            return
        kp.cache_work = 1
        self.wake(kp.kworker[KW_PAGE_CACHE], c, self.now + self.acc)

    cdef void kfree_rcu_monitor(self, int c) except *:
        """Detach the queued pages and channel-3 list into a free krw_arr[] batch."""
        cdef krc_t *kp = &self.krcs[c]
        cdef krw_t *w
        cdef int i
        self.n_kv_monitor_runs += 1
        self.spin_lock(&kp.lock_free)  # krcp->lock
        for i in range(KFREE_N_BATCHES):
            w = &kp.krw[i]
            # need_wait_for_krwp_work(): a batch still holding anything is busy.
            # Without this check (before the 2023 fix "rcu/kvfree: Avoid freeing
            # new kfree_rcu() memory after old grace period") a channel attached
            # to a batch whose rcu_work is pending was freed after the old GP;
            # rcusim's safety checker reports that use-after-free.
            if w.bulk_head >= 0 or w.head_free > 0:
                continue
            if kp.bulk_head < 0 and kp.head_count == 0:
                continue
            w.bulk_head = kp.bulk_head
            w.bulk_tail = kp.bulk_tail
            kp.bulk_head = kp.bulk_tail = -1
            w.head_free = kp.head_count
            w.head_free_t = kp.head_t
            w.head_free_gp_snap = rcu_seq_snap(self.gp_seq)
            kp.head_count = 0
            kp.count = 0
            self.n_kv_batches += 1
            w.pending = 1
            if self.kv_polled:
                # queue_work(): reclaim starts now and polls each page's gp_snap.
                w.queued = 1
                if not w.running:
                    self.wake(kp.kworker[KW_RECLAIM0 + i], c, self.now + self.acc)
            else:
                # queue_rcu_work() -> call_rcu_hurry(rcu_work_rcufn).
                self.acc += self.call_rcu_ns
                self.call_rcu(c, CB_RCU_WORK, c * KW_N + KW_RECLAIM0 + i)
        if kp.bulk_head >= 0 or kp.head_count > 0:
            self.schedule_monitor(c, self.now + self.acc, kp.count)  # need_offload_krc()

    cdef void rcu_work_rcufn(self, int work, int from_cpu, i64 t) except *:
        """The GP of queue_rcu_work() ended: queue kfree_rcu_work on its CPU's pool."""
        cdef krc_t *kp = &self.krcs[work // KW_N]
        cdef int i = work % KW_N - KW_RECLAIM0
        kp.krw[i].queued = 1
        if not kp.krw[i].running:
            self.wake(kp.kworker[KW_RECLAIM0 + i], from_cpu, t)

    # --- kworkers ---------------------------------------------------------------
    cdef i64 kworker_run(self, int e, i64 t0) except -2:
        cdef int c = self.ents[e].idx
        cdef krc_t *kp = &self.krcs[c]
        if e == kp.kworker[KW_MONITOR]:
            if kp.cache_work == 1:  # system_highpri_wq runs before system_wq
                kp.cache_work = 2
                self.ents[e].phase = KW_PAGE_CACHE
                return self.kv_page_alloc_ns * (self.kv_min_cached - kp.cache if kp.cache < self.kv_min_cached else 1)
            if kp.monitor_queued:
                kp.monitor_queued = 0
                self.ents[e].phase = KW_MONITOR
                return 2 * self.rnp_lock_ns
            self.ents[e].phase = -1
            return 0
        return self.kfree_rcu_work_step(e, c, e == kp.kworker[KW_RECLAIM0 + 1])

    cdef i64 kworker_done(self, int e) except -2:
        cdef int c = self.ents[e].idx
        cdef krc_t *kp = &self.krcs[c]
        self.acc = 0
        if e != kp.kworker[KW_MONITOR]:
            return self.kfree_rcu_work_done(e, c, e == kp.kworker[KW_RECLAIM0 + 1])
        if self.ents[e].phase == KW_PAGE_CACHE:
            # fill_page_cache_func(): up to rcu_min_cached_objs pages.
            while kp.cache < self.kv_min_cached:
                kp.cache += 1
                self.kv_pages += 1
                self.n_kv_page_allocs += 1
            kp.cache_work = 0
            self.kv_mem_changed()
        elif self.ents[e].phase == KW_MONITOR:
            self.kfree_rcu_monitor(c)
        self.cpus[c].debt += self.acc
        if kp.cache_work == 1 or kp.monitor_queued:
            return self.kworker_run(e, self.now)
        return -1

    # kfree_rcu_work() in steps, one bulk page (kfree_bulk()) per burst.
    # ent_t.phase holds the step's action.
    cdef i64 kfree_rcu_work_step(self, int e, int c, int i) except -2:
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
            if self.kv_polled and w.step == 0 and not rcu_seq_done(self.gp_seq, self.bnodes[b].gp_snap):
                # Not yet ready: one more GP for this page and the newer ones.
                self.ents[e].phase = KWA_SYNC
                return self.sync_entry_ns
            self.ents[e].phase = KWA_PAGE
            return self.rnp_lock_ns + self.bnodes[b].nr_records * self.kv_kfree_bulk_ns
        if w.hand_objs > 0:
            if self.kv_polled and w.step == 0 and not rcu_seq_done(self.gp_seq, w.hand_gp_snap):
                self.ents[e].phase = KWA_SYNC  # cond_synchronize_rcu()
                return self.sync_entry_ns
            self.ents[e].phase = KWA_HEAD
            return w.hand_objs * self.kv_kfree_ns  # kvfree_rcu_list(): one kvfree() each
        self.ents[e].phase = KWA_END
        return 0

    cdef i64 kfree_rcu_work_done(self, int e, int c, int i) except -2:
        cdef krc_t *kp = &self.krcs[c]
        cdef krw_t *w = &kp.krw[i]
        cdef int b, act = self.ents[e].phase
        if act == KWA_PAGE:
            b = w.hand_head
            self.check_kvfree(c, self.bnodes[b].t_last)
            if self.kv_polled and w.step == 0:
                self.n_kv_ready_pages += 1
            w.hand_head = self.bnodes[b].next
            if w.hand_head < 0:
                w.hand_tail = -1
            self.kv_objs -= self.bnodes[b].nr_records
            self.bnode_put(kp, b)
            self.kv_mem_changed()
        elif act == KWA_HEAD:
            self.check_kvfree(c, w.hand_t)
            self.kv_objs -= w.hand_objs
            w.hand_objs = 0
            self.kv_mem_changed()
        elif act == KWA_SYNC:
            w.step = 1
            self.n_kv_sync += 1
            if self.wake_from_gp:
                self.synchronize_rcu_normal_wake(e, c)
            else:
                self.call_rcu(c, CB_WAKEME, e)
            self.cpus[c].debt += self.acc
            return -1
        elif act == KWA_END:
            w.running = 0
            if not w.queued:
                return -1
        self.cpus[c].debt += self.acc
        return self.kfree_rcu_work_step(e, c, i)

    cdef void check_kvfree(self, int c, i64 t_last) except *:
        """kvfree_rcu() objects may be freed only after a GP that began after their call."""
        if self.last_gp_start[0] < t_last:
            self.violation(
                f"kvfree_rcu() objects of CPU {c} queued until {t_last} ns freed at {self.now} ns "
                f"before a grace period started after them (last completed: gp_seq "
                f"{self.last_gp_seq[0]}, started {self.last_gp_start[0]} ns)")

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
            },
        }
        if k >= 0:
            out.update({
                "start_time_ns": self.kt_start[k],
                "end_time_ns": self.kv_end_time,
                "gp_seq_started": self.kv_b_start,
                "gp_seq_finished": self.kv_b_end,
                "mem_begin_pages": self.kt_mem_begin[k],
                "mem_during_pages": self.kt_mem_during[k],
            })
        return out

    # =======================================================================
    # Real-time scheduling latency (seed 003): the 2004 callback patches for
    # classic RCU, the rt_latency_probe task and the call_rcu_load tasks.
    # =======================================================================
    cdef inline bint cbs_ready(self, cpu_t *cp) noexcept:
        """Done callbacks that rcu_core() may invoke now: not plugged by throttle-rcu,
        not handed to krcud/N by rcu-low-lat."""
        return cp.seg_len[RCU_DONE_TAIL] > 0 and cp.plugticks == 0

    cdef inline bint burst_nopreempt(self, int c) noexcept:
        """The running burst cannot be preempted: ksoftirqd inside do_softirq(), or a
        call_rcu_load task inside a non-preemptible section."""
        cdef ent_t *ep = &self.ents[self.cpus[c].curr]
        return (ep.kind == ENT_RCUC and ep.phase == 0) or (ep.kind == ENT_BG and ep.phase == BG_LOCKED)

    cdef i64 rcu_do_batch_classic(self, int r, i64 t0, int ctx) except -2:
        """Classic RCU's rcu_do_batch() (2.6.0) with the two patches of March 2004.

        Without a patch the whole done list runs in one go. throttle-rcu
        (rcupdate.rcumaxbatch, rcuplugticks) stops each softirq pass after
        rcumaxbatch callbacks and re-raises the tasklet, or plugs the list for
        rcuplugticks ticks. rcu-low-lat (rcupdate.bhlimit) hands the rest of the
        list to krcud/N once more than bhlimit callbacks ran in softirq while an
        RT task is waiting for this CPU.
        """
        cdef cpu_t *cp = &self.cpus[r]
        cdef i64 count = 0, t = t0
        while cp.seg_len[RCU_DONE_TAIL] > 0:
            t = self.invoke_cb(cp, r, t, r, -1 if ctx == 0 else cp.rcuc)
            count += 1
            if ctx != 0:
                continue
            if self.rcumaxbatch and count >= self.rcumaxbatch:
                cp.plugticks = self.rcuplugticks
                if cp.plugticks == 0 and cp.seg_len[RCU_DONE_TAIL] > 0:
                    cp.tasklet_raised = 1  # tasklet_hi_schedule()
                    self.n_tasklet_reraise += 1
                break
            if (self.krcud_bhlimit and count > self.krcud_bhlimit and cp.seg_len[RCU_DONE_TAIL] > 0
                    and (cp.rq_head[RQ_RT] >= 0 or self.probe_waiting(cp, t))):
                # rq_has_rt_task(): splice the rest to rcudlist and wake krcud/N.
                self.splice_to_rcudlist(cp)
                self.n_krcud_handoff += 1
                self.wake(cp.krcud, r, t)
                break
        return t - t0

    cdef void splice_to_rcudlist(self, cpu_t *cp) noexcept:
        """list_splice(list, &RCU_rcudlist(cpu)): the DONE segment moves to krcud's list."""
        cdef int n = cp.seg_len[RCU_DONE_TAIL], first = cp.cb_head, last = cp.cb_head, k
        for k in range(n - 1):
            last = self.cbs[last].next
        cp.cb_head = self.cbs[last].next
        if cp.cb_head < 0:
            cp.cb_tail = -1
        cp.seg_len[RCU_DONE_TAIL] = 0
        self.cbs[last].next = cp.rcud_head
        if cp.rcud_head < 0:
            cp.rcud_tail = last
        cp.rcud_head = first
        cp.rcud_len += n

    cdef i64 krcud_run(self, int e, i64 t0) except -2:
        """krcud(): rcu_do_batch() on rcudlist in process context, preemptible throughout."""
        cdef int r = self.ents[e].idx, cb
        cdef cpu_t *cp = &self.cpus[r]
        cdef i64 t = t0
        while cp.rcud_len > 0:
            cb = cp.rcud_head
            cp.rcud_head = self.cbs[cb].next
            cp.rcud_len -= 1
            t = self.invoke_one(cb, r, t, r, e)
        cp.rcud_tail = -1
        return t - t0

    cdef i64 krcud_done(self, int e) except -2:
        """krcud(): cond_resched() between rounds until rcudlist is empty."""
        if self.cpus[self.ents[e].idx].rcud_len > 0:
            return self.krcud_run(e, self.now)
        return -1

    # --- classic RCU (kernel/rcupdate.c before v2.6.29): rcu_ctrlblk ---------------
    cdef bint rcu_pending_classic(self, int c) noexcept:
        """rcu_pending() of 2.6.0, with throttle-rcu's unplugged donelist."""
        cdef cpu_t *cp = &self.cpus[c]
        if cp.seg_len[RCU_WAIT_TAIL] > 0 and cp.seg_gp[RCU_WAIT_TAIL] < self.cl_curbatch:
            return True
        if cp.seg_len[RCU_WAIT_TAIL] == 0 and cp.seg_len[RCU_NEXT_TAIL] > 0:
            return True
        return cp.core_needs_qs or self.cbs_ready(cp)

    cdef i64 rcu_process_callbacks(self, int c, i64 t0, int ctx) except -2:
        """The RCU tasklet of 2.6.0: curlist to the done list once its batch completed,
        nxtlist to curlist and a new batch, rcu_check_quiescent_state(), rcu_do_batch()."""
        cdef cpu_t *cp = &self.cpus[c]
        cdef i64 dur
        self.acc = self.softirq_ns
        self.n_softirq += 1
        if cp.seg_len[RCU_WAIT_TAIL] > 0 and self.cl_curbatch > cp.seg_gp[RCU_WAIT_TAIL]:
            cp.seg_len[RCU_DONE_TAIL] += cp.seg_len[RCU_WAIT_TAIL]
            cp.seg_len[RCU_WAIT_TAIL] = 0
        if cp.seg_len[RCU_NEXT_TAIL] > 0 and cp.seg_len[RCU_WAIT_TAIL] == 0:
            cp.seg_len[RCU_WAIT_TAIL] = cp.seg_len[RCU_NEXT_TAIL]
            cp.seg_len[RCU_NEXT_TAIL] = 0
            cp.seg_gp[RCU_WAIT_TAIL] = self.cl_curbatch + 1  # RCU_batch(cpu)
            self.acc += self.rnp_lock_ns  # rcu_ctrlblk.mutex
            self.rcu_start_batch(self.cl_curbatch + 1)
        self.rcu_check_quiescent_state(c)
        dur = self.acc
        if self.cbs_ready(cp):
            dur += self.rcu_do_batch(c, t0 + dur, ctx)
        return dur

    cdef void rcu_start_batch(self, i64 newbatch) noexcept:
        """Register newbatch; start it if no batch is running (rcu_cpu_mask = online CPUs)."""
        cdef int c
        if self.cl_maxbatch < newbatch:
            self.cl_maxbatch = newbatch
        if self.cl_maxbatch < self.cl_curbatch or self.cl_mask_n > 0:
            return
        for c in range(self.nr_cpus):
            self.cpus[c].core_needs_qs = 1
            self.cpus[c].cl_snap = 0
        self.cl_mask_n = self.nr_cpus
        self.gp_start = self.now + self.acc
        self.gp_seq = (self.cl_curbatch << 2) + 1

    cdef void rcu_check_quiescent_state(self, int c) except *:
        """A QS counts if RCU_qsctr moved (context switch, user-mode or idle tick) since the
        snapshot an earlier tasklet pass took; the last CPU out completes the batch."""
        cdef cpu_t *cp = &self.cpus[c]
        if not cp.core_needs_qs:
            return
        if not cp.cl_snap:
            cp.cl_snap = 1
            cp.cpu_no_qs = 1
            return
        if cp.cpu_no_qs:
            return
        self.acc += self.rnp_lock_ns  # rcu_ctrlblk.mutex
        cp.core_needs_qs = 0
        cp.cl_snap = 0
        self.cl_mask_n -= 1
        if self.cl_mask_n > 0:
            return
        self.gp_qs_t = self.now + self.acc
        self.record_gp(0, self.gp_seq, self.gp_start, self.gp_qs_t, self.gp_qs_t, 0)
        self.cl_curbatch += 1
        self.gp_seq = self.cl_curbatch << 2
        self.rcu_start_batch(self.cl_maxbatch)

    # --- rt_latency_probe: amlat, a SCHED_FIFO task woken by a timer interrupt ----
    cdef inline bint probe_waiting(self, cpu_t *cp, i64 t) noexcept:
        """A probe on this CPU is runnable at t: woken already, or by its next interrupt.

        NOTE: callback invocation is computed whole when it starts, so the
        rcu-low-lat check "an RT task is waiting" (rq_has_rt_task()) reads the
        probe's wake-up and periodic timer instead of waiting for their events.
        """
        return cp.probe_runnable_at <= t or cp.probe_next + self.tick_ns <= t

    cdef void note_probe_timer(self, int c, i64 t) noexcept:
        """Remember the earliest coming probe interrupt on CPU c."""
        cdef cpu_t *cp = &self.cpus[c]
        if cp.probe_next <= self.now or t < cp.probe_next:
            cp.probe_next = t

    cdef void ev_probe_timer(self, int e) except *:
        """The probe's timer interrupt (the RTC irq): the handler wakes the probe, whose
        scheduling latency runs from this instant until it runs."""
        cdef ent_t *ep = &self.ents[e]
        cdef int c = ep.cpu
        cdef cpu_t *cp = &self.cpus[c]
        cdef i64 cost = self.tick_ns  # the RTC interrupt costs a timer interrupt
        if ep.loops_left <= 0:
            return
        self.push(self.now + self.probe_period_ns[ep.idx], PRIO_NORMAL, EV_PROBE_TIMER, e, 0)
        self.note_probe_timer(c, self.now + self.probe_period_ns[ep.idx])
        # invoke_softirq() at irq exit: softirq work left for ksoftirqd runs here, unless
        # the interrupt came in softirq context (a softirq or ksoftirqd's do_softirq()).
        if (self.irq_exit_softirq and cp.softirq_pending and self.now >= cp.nonpreempt_until
                and not (cp.state == CPU_BUSY and self.ents[cp.curr].kind == ENT_RCUC)):
            cost += self.do_softirq(c, self.now + cost, False)
        self.steal(c, cost)
        if ep.state == ST_BLOCKED:
            ep.t_wake = self.now
            cp.probe_runnable_at = self.now + cost
            self.wake(e, c, self.now + cost)

    cdef i64 probe_run(self, int e, i64 t0) except -2:
        """The probe runs at t0 (after the context switch): record its latency."""
        cdef ent_t *ep = &self.ents[e]
        cdef i64 cap
        if self.lat_n == self.lat_cap:
            cap = max(1024, 2 * self.lat_cap)
            self.lat_rec = <i64 *> realloc(self.lat_rec, cap * sizeof(i64))
            if self.lat_rec == NULL:
                raise MemoryError()
            self.lat_cap = cap
        self.lat_rec[self.lat_n] = t0 - ep.t_wake
        self.lat_n += 1
        self.cpus[ep.cpu].probe_runnable_at = (<i64> 1) << 62
        ep.loops_left -= 1
        return self.probe_run_ns[ep.idx]

    cdef i64 probe_done(self, int e) except -2:
        if self.ents[e].loops_left == 0:
            self.tasks_left -= 1
            self.ents[e].loops_left = -1
        return -1

    # --- call_rcu_load: operations of kernel work, sections, call_rcu() -------
    cdef i64 bg_run(self, int e, i64 t0) except -2:
        cdef ent_t *ep = &self.ents[e]
        if ep.phase == BG_LOCKED:
            return ep.sec_ns
        return self.exp_ns(self.bg_work_ns[ep.idx])

    cdef i64 bg_done(self, int e) except -2:
        """An operation's work ends: queue its callbacks, then maybe a non-preemptible
        section (one row of the section table, by its probability per operation)."""
        cdef ent_t *ep = &self.ents[e]
        cdef int w = ep.idx, c = ep.cpu, k, n
        cdef double mean, u
        if ep.phase == BG_LOCKED:
            ep.phase = BG_WORK  # preempt_enable(): a waiting RT task runs now
            return self.exp_ns(self.bg_work_ns[w])
        # call_rcu() groups: the integer part always, the fraction as a probability.
        mean = self.bg_groups_per_op[w]
        n = <int> mean
        if self.rng.next_double(self.rng.state) < mean - n:
            n += 1
        n *= self.bg_burst[w]
        self.acc = 0
        for k in range(n):
            self.call_rcu(c, self.bg_cb_kind[w], -1)
        self.cpus[c].debt += self.acc + n * self.call_rcu_ns
        u = self.rng.next_double(self.rng.state)
        for k in range(self.bg_sec_first[w], self.bg_sec_first[w] + self.bg_sec_count[w]):
            if u < self.bg_sec_cum[k]:
                ep.phase = BG_LOCKED
                ep.sec_ns = self.bg_sec_ns[k]
                return ep.sec_ns
        return self.exp_ns(self.bg_work_ns[w])

    # =======================================================================
    # Optional trace buffer (off by default): a typed record per traced
    # event, turned into Chrome trace-event JSON and ftrace text by
    # rcusim/trace.py.  Hooks elsewhere are `if self.trace_on: self.trace(...)`.
    # =======================================================================
    def trace_enable(self, i64 max_records):
        """Record trace events from now on, at most `max_records`; past that,
        recording stops and ``trace_overflow`` is set."""
        if max_records < 1:
            raise ValueError("max_records must be >= 1")
        self.trace_max = max_records
        self.trace_on = 1

    cdef void trace(self, i64 t, int kind, int cpu, int ent, i64 gp_seq, i64 arg, i64 arg2) noexcept:
        cdef trace_rec_t *rec
        cdef i64 cap
        if self.trace_n == self.trace_cap:
            cap = min(max(4096, 2 * self.trace_cap), self.trace_max)
            rec = NULL if cap <= self.trace_cap else <trace_rec_t *> realloc(self.trace_buf, cap * sizeof(trace_rec_t))
            if rec == NULL:
                self.trace_overflow = 1
                self.trace_on = 0
                return
            self.trace_buf = rec
            self.trace_cap = cap
        rec = &self.trace_buf[self.trace_n]
        rec.t = t
        rec.cpu = cpu
        rec.ent = ent
        rec.kind = kind
        rec.pad = 0
        rec.gp_seq = gp_seq
        rec.arg = arg
        rec.arg2 = arg2
        self.trace_n += 1

    cdef i64 trace_qs_mask(self, int n, u64 mask, i64 seq, int how) noexcept:
        """TR_QS (arg = how) for each CPU of leaf n in mask."""
        cdef i64 count = 0
        cdef int bit
        while mask:
            bit = ctz64(mask)
            mask &= mask - 1
            self.trace(self.now + self.acc, TR_QS, self.nodes[n].grplo + bit, -1, seq, how, 0)
            count += 1
        return count

    def trace_records(self):
        """The trace records so far, as a NumPy structured array (a copy), in
        recording order; see trace_rec_t in defs.pxd for the fields."""
        if self.trace_n == 0:
            return np.zeros(0, dtype=TRACE_DTYPE)
        return np.asarray(<trace_rec_t[:self.trace_n]> self.trace_buf).copy()

    def entity_kinds(self):
        """(ENT_* kind, CPU, kind-specific index) of every entity, for naming trace tracks."""
        cdef int e
        kind = np.empty(self.n_ents, dtype=np.int32)
        cpu = np.empty(self.n_ents, dtype=np.int32)
        idx = np.empty(self.n_ents, dtype=np.int32)
        for e in range(self.n_ents):
            kind[e] = self.ents[e].kind
            cpu[e] = self.ents[e].cpu
            idx[e] = self.ents[e].idx
        return {"kind": kind, "cpu": cpu, "idx": idx}

    # =======================================================================
    # Main loop.
    # =======================================================================
    def run(self, i64 until_ns, i64 max_events):
        """Process events until the workloads finish, ``until_ns`` or ``max_events``.

        Returns an exit reason: EXIT_DONE, EXIT_TIME_LIMIT, EXIT_MAX_EVENTS,
        or EXIT_STALLED (nothing left to happen yet tasks are still waiting).
        """
        cdef event_t ev
        cdef i64 n = 0
        while True:
            if self.tasks_left == 0:
                return EXIT_DONE
            if self.heap_n == 0:
                return EXIT_STALLED
            if self.heap[0].t > until_ns:
                self.now = until_ns
                return EXIT_TIME_LIMIT
            if n >= max_events:
                return EXIT_MAX_EVENTS
            ev = self.pop()
            self.now = ev.t
            n += 1
            self.events += 1
            if ev.kind == EV_BURST_END:
                self.ev_burst_end(ev.target, ev.arg)
            elif ev.kind == EV_WAKE:
                self.ev_wake(ev.target)
            elif ev.kind == EV_TICK:
                self.ev_tick(ev.target)
            elif ev.kind == EV_CPU_RUN:
                if self.cpus[ev.target].state == CPU_WAKING:
                    self.cpu_pick(ev.target)
            elif ev.kind == EV_GP_TIMER:
                self.ev_gp_timer(ev.arg)
            elif ev.kind == EV_BYPASS_TIMER:
                self.ev_bypass_timer(ev.target, ev.arg)
            elif ev.kind == EV_RESCHED:
                self.cpus[ev.target].resched_pending = 0
                if (self.cpus[ev.target].state == CPU_BUSY
                        and self.cpus[ev.target].rq_head[RQ_RT] >= 0
                        and self.ents[self.cpus[ev.target].curr].rq == RQ_NORMAL):
                    self.try_preempt(ev.target)
            elif ev.kind == EV_IPI:
                self.ev_ipi(ev.target)
            elif ev.kind == EV_EXP_IPI:
                self.ev_exp_ipi(ev.target)
            elif ev.kind == EV_EXP_DEFERRED:
                self.ev_exp_deferred(ev.target)
            elif ev.kind == EV_KFREE_MONITOR:
                self.ev_kfree_monitor(ev.target, ev.arg)
            elif ev.kind == EV_PROBE_TIMER:
                self.ev_probe_timer(ev.target)

    # =======================================================================
    # Read-back.
    # =======================================================================
    def requests(self):
        """Completed synchronize_rcu() calls as NumPy arrays (copies)."""
        cdef i64 n = self.req_n
        task = np.empty(n, dtype=np.int32)
        cpu = np.empty(n, dtype=np.int32)
        prim = np.empty(n, dtype=np.int8)
        t0 = np.empty(n, dtype=np.int64)
        t1 = np.empty(n, dtype=np.int64)
        cdef int[::1] vt = task
        cdef int[::1] vc = cpu
        cdef signed char[::1] vp = prim
        cdef i64[::1] v0 = t0
        cdef i64[::1] v1 = t1
        cdef i64 i
        for i in range(n):
            vt[i] = self.req_task[i]
            vc[i] = self.req_cpu[i]
            vp[i] = self.req_prim[i]
            v0[i] = self.req_start[i]
            v1[i] = self.req_end[i]
        snap = np.empty(n, dtype=np.int64)
        cdef i64[::1] vq = snap
        for i in range(n):
            vq[i] = self.req_seq[i]
        return {"task": task, "cpu": cpu, "primitive": prim, "t_start_ns": t0, "t_end_ns": t1,
                "gp_seq_snap": snap}

    def grace_periods(self):
        """Completed grace periods in end order: gp_seq (or expedited_sequence) while
        in progress, start, all-QS-reported and end times, IPIs sent, expedited flag."""
        cdef i64 n = self.gprec_n, i
        seq = np.empty(n, dtype=np.int64)
        t0 = np.empty(n, dtype=np.int64)
        tq = np.empty(n, dtype=np.int64)
        t1 = np.empty(n, dtype=np.int64)
        ipis = np.empty(n, dtype=np.int64)
        exp = np.empty(n, dtype=bool)
        cdef i64[::1] vs = seq
        cdef i64[::1] v0 = t0
        cdef i64[::1] vq = tq
        cdef i64[::1] v1 = t1
        cdef i64[::1] vi = ipis
        for i in range(n):
            vs[i] = self.gprec_seq[i]
            v0[i] = self.gprec_start[i]
            vq[i] = self.gprec_qs[i]
            v1[i] = self.gprec_end[i]
            vi[i] = self.gprec_ipis[i]
            exp[i] = self.gprec_exp[i] != 0
        return {"gp_seq": seq, "t_start_ns": t0, "t_qs_ns": tq, "t_end_ns": t1, "ipis": ipis, "expedited": exp}

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
        return {
            "events": self.events,
            "context_switches": self.n_ctxsw,
            "callbacks_invoked": self.n_cbs_invoked,
            "wakeups": self.n_wakeups,
            "idle_exits": self.n_idle_exits,
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
            "tasklet_reraises": self.n_tasklet_reraise,
            "krcud_handoffs": self.n_krcud_handoff,
        }

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
        return self.req_n

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
        }

    def verify(self):
        """Walk the state and return a list of broken invariants (empty when sound)."""
        problems = []
        cdef int n, c, x, count
        cdef cpu_t *cp
        for n in range(self.num_nodes):
            if self.nodes[n].qsmask & ~self.nodes[n].qsmaskinit:
                problems.append(f"rcu_node {n}: qsmask has bits outside qsmaskinit")
            if not self.gp_in_progress() and self.nodes[n].qsmask:
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
            if count != self.n_cbs(cp):
                problems.append(f"CPU {c}: {count} callbacks listed, segments say {self.n_cbs(cp)}")
            for x in range(4):
                if cp.seg_len[x] < 0:
                    problems.append(f"CPU {c}: segment {x} length {cp.seg_len[x]}")
            if cp.seg_len[1] and cp.seg_len[2] and cp.seg_gp[1] > cp.seg_gp[2]:
                problems.append(f"CPU {c}: WAIT gp_seq after NEXT_READY gp_seq")
        return problems
