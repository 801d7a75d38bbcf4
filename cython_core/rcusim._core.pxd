# cython: language_level=3
"""The Engine's state, grouped by mechanism.  Each mechanism's functions live in
the .pxi file of its name (see _core.pyx); every field names its kernel
counterpart where one exists, with its unit."""

from numpy.random cimport bitgen_t

from defs cimport *
from eventq cimport event_t, eventq_t
from latency cimport LOG2_SLOTS


cdef class Engine:
    # --- event queue and clock (sched.pxi) ------------------------------------
    cdef eventq_t evq
    cdef readonly i64 now
    cdef readonly i64 events

    # --- entities and CPUs: run queues, idle, ticks, interrupts (sched.pxi) ---
    cdef ent_t *ents
    cdef int n_ents
    cdef cpu_t *cpus
    cdef int nr_cpus
    cdef i64 jiffy_ns
    cdef int preemption
    cdef int gp_cpu
    cdef int gp_ran_cpu          # the CPU of the GP kthread's last step (rcu_gp_init/fqs/cleanup)
    cdef int gp_timer_cpu        # the CPU the FQS wait's timer was armed on (the GP kthread's then)
    cdef i64 ctxsw_ns
    cdef i64 wakeup_busy_ns
    cdef double idle_mu
    cdef double idle_sigma
    cdef i64[::1] idle_wake_q_ns     # no states: the measured idle-exit latency's quantiles (empty: lognormal)
    cdef i64[::1] idle_wake_tail_ns  # ... and its last interval's
    cdef i64 ipi_latency_ns
    cdef i64 tick_ns
    cdef i64 softirq_ns
    cdef i64 ttwu_ns
    cdef int n_ttwu_reuse        # bins of ttwu_reuse_since (0: every wake-up costs what its waker says)
    cdef i64 ttwu_reuse_since[16]
    cdef i64 ttwu_reuse_delta[16]
    cdef int fault
    cdef int stepping            # the CPU whose running entity's action is being computed, -1 if none
    cdef int ending              # ... when that action is the one at its burst's end (ent_done()), at now
    cdef int has_topology        # the profile gives a topology: remote wake-ups by ttwu_queue_cond()
    cdef int32_t *cpu_core
    cdef int32_t *cpu_llc
    cdef int32_t *cpu_socket
    cdef i64 line_ns[4]          # one cache-line transfer: SMT siblings, same LLC, same socket, other socket
    cdef i64 *rqlen_ns           # CPU-time spent at each run-queue length (nr_running), the last bucket open

    # --- timer wheel and timer migration (timer.pxi) --------------------------
    cdef int timer_wheel_rounds_up   # calc_index() rounds expiry up (v4.8 and later)
    cdef int timer_lvl_depth     # LVL_DEPTH: wheel levels (9 for HZ > 100, else 8)
    cdef int timer_pull          # idle CPUs' global timers expired by a migrator (v6.9 and later)
    cdef int last_idle_cpu       # the CPU that went idle last (holds the top migrator level)

    # --- cpuidle: the profile's idle states and the menu governor (cpuidle.pxi) 
    cdef int n_idle_states       # 0: no table, the idle exit is one lognormal draw
    cdef i64 idle_exit_us[8]     # exit_latency of each state
    cdef i64 idle_target_us[8]   # target_residency of each state
    cdef int idle_polling0       # state 0 polls (CPUIDLE_FLAG_POLLING)
    cdef int idle_mwait[8]       # the state is entered with MWAIT: the idle task polls TIF_NEED_RESCHED
    cdef i64 idle_wake_ns[8]     # what leaving the state costs a wake-up (measured, else the exit latency)
    cdef i64 tick_usec           # TICK_USEC
    cdef int menu_keeps_tick     # menu_select() decides the tick (v4.17 and later)
    cdef int hz_periodic         # CONFIG_HZ_PERIODIC: no CPU ever stops its tick
    cdef int idle_stop_tick_after_tick  # no governor's choice: stop the tick after a tick (f4c31b07b136)
    cdef menu_t *menu
    cdef i64 gp_timer_expires    # when the FQS wait's timer fires (ns), for the GP CPU's governor

    # --- vmalloc()/vfree() of lib/test_vmalloc.c's kvfree_rcu test (vmalloc.pxi) --
    cdef i64 vm_alloc_ns, vm_insert_ns, vm_setup_ns, vm_pages_ns   # vmalloc(PAGE_SIZE)'s steps
    cdef i64 vm_unlink_ns, vm_purge_add_ns, vm_unmap_ns            # vfree()'s steps
    cdef i64 vm_area_pages       # pages a one-page area adds to vmap_lazy_nr (with its guard page)
    cdef i64 vm_lazy_max_pages   # lazy_max_pages()
    cdef i64 vm_lazy_nr          # vmap_lazy_nr
    cdef i64 vm_lock_free[3]     # when each global vmap lock is free again
    cdef int vm_lock_cpu[3]      # the CPU that held it last (-1: none yet)

    # --- a KVM guest: HLT and the host's halt polling (kvm.pxi) ---------------
    cdef int halt_poll           # the CPUs are vCPUs whose HLT exits to kvm_vcpu_halt()
    cdef i64 halt_poll_max_ns    # kvm.halt_poll_ns
    cdef i64 halt_poll_grow      # kvm.halt_poll_ns_grow
    cdef i64 halt_poll_grow_start  # kvm.halt_poll_ns_grow_start
    cdef i64 halt_poll_shrink    # kvm.halt_poll_ns_shrink (0: reset)
    cdef i64 halt_wake_polled_ns   # a wake-up found by the host's poll loop: re-entry into the guest
    cdef i64 halt_wake_blocked_ns  # a wake-up of a blocked vCPU thread: host try_to_wake_up() and re-entry

    # --- fair class (fair.pxi) ------------------------------------------------
    cdef int fair_policy         # POLICY_RR (before v2.6.23), POLICY_CFS, POLICY_EEVDF (v6.6)
    cdef i64 base_slice_ns       # EEVDF sysctl_sched_base_slice
    cdef int eevdf_delay_dequeue       # EEVDF's DELAY_DEQUEUE and DELAY_ZERO (v6.12)
    cdef int eevdf_rel_deadline        # EEVDF's PLACE_REL_DEADLINE (v6.12)
    cdef int eevdf_preempt_short       # EEVDF's PREEMPT_SHORT in update_curr() (v6.12)
    cdef i64 sched_latency_ns    # CFS sysctl_sched_latency
    cdef i64 min_gran_ns         # CFS sysctl_sched_min_granularity
    cdef i64 wakeup_gran_ns      # CFS sysctl_sched_wakeup_granularity
    cdef int nr_latency          # CFS sched_nr_latency
    cdef int32_t *fscratch       # pick_eevdf()'s walk
    cdef int32_t *fair_hpos      # by entity: its position in its CPU's fair heap, -1 if not queued
                                 # there (dense: a heap's sift writes it for every node it moves)
    cdef int fscratch_cap
    cdef u64 fair_seq

    # --- placement and load balancing over the scheduling domains (placement.pxi, balance.pxi)
    cdef int n_unbound           # entities the scheduler may move: 0 keeps every entity on its CPU
    cdef uint8_t *aff_mask       # allowed CPUs of each affinity mask, nr_cpus bytes a mask
    cdef int n_levels            # domain levels, lowest first (rcusim.kernel.sched_domains)
    cdef int llc_level           # the highest level sharing an LLC (sd_llc), -1 if none
    cdef int32_t *sd_of          # [level * nr_cpus + cpu]: the CPU's domain at a level
    cdef int32_t *sd_cpus        # the CPUs of each domain, in id order
    cdef int32_t *sd_first       # where each domain's CPUs start in sd_cpus
    cdef int sd_first_n          # domains over all levels
    cdef int32_t sd_imbalance_pct[4]
    cdef int32_t sd_cache_nice_tries[4]
    cdef int8_t *sd_has_idle_cores # per LLC domain: sd_llc_shared->has_idle_cores
    cdef int32_t *sd_nr_idle_scan # per LLC domain: sd_llc_shared->nr_idle_scan (SIS_UTIL)
    cdef sched_avg_t *pelt       # per CPU: its cfs_rq's utilisation (pelt.pxi)
    cdef u64 pelt_yn_inv[32]
    cdef i64 pelt_load_avg_max
    cdef int smt_active          # sched_smt_active()
    cdef i64 *lb_last            # [cpu * 4 + level]: sd->last_balance (jiffies)
    cdef i64 *lb_interval        # sd->balance_interval (ms)
    cdef int32_t *lb_failed      # sd->nr_balance_failed
    cdef i64 *lb_newidle_cost    # sd->max_newidle_lb_cost (ns)
    cdef i64 *lb_newidle_decay   # sd->last_decay_max_lb_cost (jiffies)
    cdef int32_t *lb_newidle_call    # sd->newidle_call, newidle_success, newidle_ratio (NI_RANDOM)
    cdef int32_t *lb_newidle_success
    cdef int32_t *lb_newidle_ratio
    cdef int newidle_lb_cost_only    # sched_balance_newidle() without the sysctl_sched_migration_cost test (v5.16)
    cdef int newidle_proportional    # ... trying each domain as often as it succeeds (v6.19)
    cdef i64 *lb_scan_ns         # per CPU and level: reading every other run queue of its domain (ns)
    cdef int32_t *grp_cpus       # the CPUs of each group (domains, then CPUs), in id order ...
    cdef int32_t *grp_first      # ... from grp_first[g] to grp_first[g + 1]
    cdef int32_t *sd_groups      # each domain's groups (child domains, or CPUs), by their first CPU ...
    cdef int32_t *sd_groups_first # ... from sd_groups_first[d] to sd_groups_first[d + 1]
    cdef int32_t *lb_dirty_cpus  # the CPUs whose lb_dirty is set
    cdef u64 *nohz_idle_mask     # nohz.idle_cpus_mask: idle CPUs whose tick is stopped
    cdef int n_lb_dirty
    cdef int32_t *gs_nr          # per group (domains, then CPUs), as its CPUs were at the last lb_flush(): runnable entities
    cdef int32_t *gs_idle        # ... idle CPUs
    cdef int32_t *gs_over        # ... CPUs with more than one runnable entity
    cdef i64 *gs_load            # ... load (cpu_load())
    cdef int32_t *gs_weight      # ... CPUs
    cdef i64 nohz_next_balance   # nohz.next_balance (jiffies)
    cdef int rd_overload         # rd->overload: some CPU has more than one runnable entity
    cdef i64 n_migrations_wakeup # set_task_cpu() by select_task_rq_fair()
    cdef i64 n_migrations_newidle # ... by a CPU going idle
    cdef i64 n_newidle_tries      # newidle balancing passes over a domain, and those NI_RANDOM's die skipped
    cdef i64 n_newidle_skipped
    cdef i64 n_migrations_balance # ... by periodic and nohz idle balancing
    cdef i64 n_nohz_kicks

    # --- random stream: one NumPy BitGenerator, drawn in event order (sched.pxi) 
    cdef object bitgen_obj
    cdef bitgen_t *rng
    cdef int have_spare
    cdef double spare

    # --- tracepoints enabled in the kernel (tracepoint.pxi) -------------------
    cdef int tp_on               # TP_* bits
    cdef i64 tp_ns               # one traced event in task context
    cdef i64 tp_irq_ns           # ... in an interrupt
    cdef i64 n_tp_events         # events recorded
    cdef i64 n_tp_ns             # ... and their cost

    # --- CPU time of the action in progress: lock hold and wait, callbacks, wake-ups (ns) 
    cdef i64 acc

    # --- rcu_node tree (tree.pxi) ---------------------------------------------
    cdef rnp_t *nodes
    cdef int num_nodes
    cdef int leaf_first
    cdef i64 rnp_lock_ns

    # --- rcu_state and the GP kthread (tree_gp.pxi) ---------------------------
    cdef i64 jiffies_till_first_fqs
    cdef i64 jiffies_till_next_fqs
    cdef i64 jiffies_to_sched_qs
    cdef i64 jiffies_resched
    cdef readonly i64 gp_seq
    cdef int gp_flags
    cdef int gp_state
    cdef int gp_ent
    cdef int in_gp_kthread
    cdef i64 gp_start
    cdef i64 gp_qs_t             # when the root's qsmask emptied
    cdef i64 fqs_deadline
    cdef int fqs_first
    cdef int gp_kthread_cpu_qs_early   # rcu_gp_init() reports the kthread's own CPU's QS
    cdef i64 gp_nfqs             # FQS scans in the current GP
    cdef int gp_last_qs          # LAST_QS_* of the report that emptied the root
    cdef u64 gp_timer_gen
    cdef int gp_pending_phase

    # --- rcu_normal_wake_from_gp: synchronize_rcu() callers tracked apart (tree_sr_normal.pxi) 
    cdef int wake_from_gp
    cdef int srs_next_head, srs_next_tail
    cdef int srs_wait_head, srs_wait_tail
    cdef int srs_done_head, srs_done_tail
    cdef int srs_heads_inuse
    cdef int srs_done_heads
    cdef int sr_ent

    # --- callbacks: the pool, blimit and costs (rcu_segcblist.pxi, tree_callbacks.pxi) --
    cdef cb_t *cbs
    cdef int cb_cap
    cdef int cb_free
    cdef int preempt_rcu
    cdef int blimit_default
    cdef i64 qhimark
    cdef i64 qlowmark
    cdef int rcu_divisor
    cdef i64 rcu_resched_ns
    cdef int use_softirq
    cdef i64 cb_cost[CB_KINDS]
    cdef i64 call_rcu_ns
    cdef int softirq_qs          # ksoftirqd passes a quiescent state after each handle_softirqs() pass (v4.20)
    cdef int softirq_time_limit  # __do_softirq() bounded by time and need_resched (v3.9); before, a restart count only
    cdef int ksoftirqd_does_its_job # v4.10: irq exit leaves softirqs to an awake ksoftirqd; before, it runs them
    cdef i64 softirq_wake0        # n_wake_local when the RCU_SOFTIRQ computed now began

    # --- NOCB groups (tree_nocb.pxi) ------------------------------------------
    cdef group_t *groups
    cdef int n_groups
    cdef int *group_cpus
    cdef i64 nocb_nobypass_lim
    cdef int nocb_cb_rt          # rcuop/N run SCHED_FIFO (kthread_prio with CONFIG_RCU_NOCB_CPU_CB_BOOST)
    cdef int rcuo_cond_resched   # rcuop/N reach cond_resched() after each callback (v4.15, as read)
    cdef i64 jiffies_lazy_flush  # LAZY_FLUSH_JIFFIES: the longest a lazy callback waits in the bypass
    cdef int nocb_lazy_defer_leader   # wake_nocb_gp_defer() reads the group leader's deferral (v6.17)

    # --- expedited GPs: rcu_state.expedited_sequence and friends (tree_exp.pxi, locking.pxi) 
    cdef i64 ipi_send_ns
    cdef i64 ipi_handler_ns
    cdef readonly i64 exp_seq
    # Sleeping mutexes: rcu_state.exp_mutex, rcu_state.barrier_mutex, and before v4.6
    # the funnel's rnp->exp_funnel_mutex (index = node) and rdp->exp_funnel_mutex
    # (index = num_nodes + CPU). Waiters queue FIFO through ent_t.link.
    cdef int n_mtx
    cdef int *mtx_owner          # task holding it, -1 if free
    cdef int *mtx_head
    cdef int *mtx_tail
    cdef int *mtx_handoff        # MUTEX_FLAG_HANDOFF: the next mutex_unlock() hands it to the first waiter
    cdef int *mtx_rt             # an rt_mutex: mutex_unlock() always hands it to the first waiter
    cdef int *mtx_exp            # an expedited GP's mutex: its steals and waits are counted (n_exp_mutex_*)
    cdef int mutex_handoff       # a woken first waiter that finds the mutex taken sets it (v4.10)
    cdef int exp_mutex           # index of rcu_state.exp_mutex
    cdef int barrier_mutex       # index of rcu_state.barrier_mutex (a plain mutex on every build)
    cdef int gp_mutex            # the mutex held for a whole expedited GP
    cdef int exp_funnel_wait_queues # rcu_node wait queues and one exp_mutex (v4.6); before, funnel mutexes hand over hand
    cdef int exp_gp_workqueue    # a kworker drives the GP (v4.9); before, the requester itself
    cdef int exp_par_init        # per-leaf workers select CPUs in parallel (v4.17)
    cdef int exp_driver          # entity driving the current expedited GP
    cdef int exp_ent             # rcu_exp_gp_kthread_worker
    cdef int exp_phase           # EXP_*
    cdef int exp_work_queued     # rcu_exp_work queued on the kworker
    cdef int exp_par_pending     # per-leaf selections not yet flushed
    cdef int exp_last_leaf       # the leaf selected inline by the kworker
    cdef i64 exp_gp_start
    cdef i64 exp_gp_qs           # when the root's expmask emptied
    cdef i64 exp_gp_ipis

    # --- sync_loop tasks and their workloads (sync_loop.pxi) ------------------
    cdef int n_tasks
    cdef int tasks_left
    cdef int *task_wl
    cdef i64[::1] task_start      # when each task first wakes (ns)
    cdef int n_wl
    cdef i64 *wl_think_ns
    cdef i64 *wl_after_ns
    cdef int *wl_prim
    cdef int *wl_vmalloc          # the workload vmalloc()s before each call and vfree()s after (vmalloc.pxi)
    cdef int tasks_vmalloc        # some workload does
    cdef i64[::1] wl_sleep_jiffies_max # schedule_timeout_idle() of 1 to this many jiffies before each call
    cdef i64[::1] wl_runtime_jiffies # a task ends only once this many jiffies after its start have passed
    cdef i64[::1] task_end_ns     # from when each task may end (its minimum run time; 0: none)
    cdef i64[::1] wl_all_done     # 1: a done task calls on until every task of its workload is done
    cdef i64[::1] wl_unfinished   # tasks of each workload not yet done
    cdef i64[::1] wl_first_task   # each workload's first task (its tasks are consecutive), then n_tasks
    cdef i64[::1] wl_release_cpu  # the CPU a workload's barrier is released from (-1: its tasks start together)
    cdef i64[::1] wl_aff          # a barrier's unpinned tasks: the affinity their parent gives them once created
    cdef i64[::1] wl_arrived      # a barrier's tasks that have counted themselves in (the helper's `arrived`)
    cdef i64 thread_create_ns     # the load helper's thread creation (SyncLoopInput's thread_*, helper_*)
    cdef i64 thread_unlock_ns
    cdef i64 thread_lock_ns
    cdef i64 thread_barrier_ns
    cdef i64 thread_woken_ns
    cdef i64 helper_poll_ns
    cdef i64 helper_settle_ns
    cdef i64 timer_slack_ns       # a user task's hrtimer sleeps end this late (init_task.timer_slack_ns)
    cdef i64 thread_call_rcu_per_1000 # call_rcu()s of the load helper's pthread_create()s, per 1,000
    cdef int thread_call_rcu_lazy
    cdef unsigned char[::1] task_is_done  # each task has its calls and its minimum run time (rcuscale's done)
    cdef i64[::1] wl_done_ns      # each workload's latest return at which one of its tasks was done
    cdef i64 sync_entry_ns
    cdef i64[::1] wl_async_max    # call_rcu_hurry: callbacks in flight at which rcu_barrier() is called
    cdef int rcuscale_async_per_task       # rcuscale counts them per task (v6.12), else per CPU
    cdef i64 async_kmalloc_ns     # rcuscale's kmalloc() of each rcu_head (before v6.12)

    # --- rcu_barrier(): rcu_state.barrier_* (tree_barrier.pxi) ----------------
    cdef i64 barrier_sequence     # rcu_state.barrier_sequence
    cdef int barrier_cpu_count    # rcu_state.barrier_cpu_count
    cdef int barrier_task         # the task in wait_for_completion(&barrier_completion), -1 if none
    cdef int barrier_wakes_rcuog  # rcu_barrier_entrain() wakes rcuog after flushing the bypass (v6.2)
    cdef i64 n_barriers, n_barrier_early, n_barrier_ipis, n_barrier_mutex_wait

    # --- reader tasks (readers.pxi) -------------------------------------------
    cdef int n_rwl
    cdef int reader_first         # entity index of the first reader task
    cdef int n_readers
    cdef i64 *rwl_len_ns
    cdef i64 *rwl_gap_ns
    cdef int *rwl_len_exp
    cdef int *rwl_gap_busy
    cdef int *rwl_preemptible
    cdef int preemptible_readers

    # --- probes, call_rcu_load, classic RCU and the 2004 patches (rt_latency.pxi, call_rcu_load.pxi, classic.pxi)
    cdef int tree_rcu            # Tree RCU (v2.6.29); before, classic RCU's rcu_do_batch()
    cdef int rcumaxbatch         # throttle-rcu: callbacks per tasklet pass, 0 = no limit
    cdef int rcuplugticks        # throttle-rcu: ticks the done list waits after a full pass
    cdef int krcud_bhlimit       # rcu-low-lat: callbacks in softirq before krcud/N takes over, 0 = no krcud
    cdef i64[::1] probe_period_ns  # per rt_latency_probe workload
    cdef i64[::1] probe_run_ns
    cdef i64[::1] bg_work_ns     # per call_rcu_load workload: mean preemptible work per operation
    cdef double[::1] bg_groups_per_op # call_rcu() groups queued per operation (mean)
    cdef int[::1] bg_burst       # call_rcu() calls per group
    cdef int[::1] bg_cb_kind     # CB_* of its callbacks
    cdef int[::1] bg_lazy        # its call_rcu() callbacks are lazy
    cdef i64[::1] bg_sleep_jiffies_max # schedule_timeout_idle() of 1 to this many jiffies after each operation
    cdef i64 *cbl_fine           # call_rcu() to invocation of its callbacks: log-linear histogram (latency.pxd)
    cdef i64 cbl_count, cbl_sum_ns, cbl_min_ns, cbl_max_ns
    cdef i64 cbl_queued          # call_rcu() calls of the call_rcu_load workloads
    cdef int timed               # the run ends at its time limit (run.duration_s), not when tasks finish
    cdef i64 until_ns            # the time limit of the current run() call
    cdef int[::1] bg_sec_first   # its rows of the section table: [first, first + count)
    cdef int[::1] bg_sec_count
    cdef i64[::1] bg_sec_ns      # section table: length of each non-preemptible section class
    cdef double[::1] bg_sec_cum  # ... and the cumulative probability per operation
    cdef i64 *lat_rec            # probe scheduling latencies, wake-up to running (ns)
    cdef i64 lat_n
    cdef i64 lat_cap
    cdef i64 n_krcud_handoff, n_softirqd_wake, n_tasklet_reraise, n_softirq_restarts

    # --- OS noise: interrupts and kthread bursts per CPU (noise.pxi) ----------
    cdef i64[::1] nz_irq_gap_ns        # per CPU: mean gap between noise interrupts, 0 = none
    cdef double[::1] nz_irq_mu         # ... their lognormal duration: mean and sd of log(ns)
    cdef double[::1] nz_irq_sigma
    cdef i64[::1] nz_kt_gap_ns         # per CPU: mean gap between noise kthread work items, 0 = none
    cdef double[::1] nz_kt_mu
    cdef double[::1] nz_kt_sigma
    cdef int8_t[::1] nz_timer_delay    # per CPU: its local timer interrupts arrive late ...
    cdef i64[:, ::1] nz_timer_q_ns     # ... by the quantiles of row c while every CPU is busy, nr_cpus + c else
    cdef i64[:, ::1] nz_timer_tail_ns  # ... and those of the same row's last interval
    cdef i64[::1] nz_host_gap_ns       # per CPU: mean gap between host stalls (0: none)
    cdef i64[:, ::1] nz_host_q_ns      # ... a stall's quantiles, and those of their last interval
    cdef i64[:, ::1] nz_host_tail_ns
    cdef bint nz_timer_on              # some CPU's timer interrupts arrive late
    cdef i64 n_timer_irqs_late, n_timer_irq_late_ns
    cdef i64 n_noise_irqs, n_noise_irq_ns, n_noise_bursts, n_noise_host, n_noise_host_ns
    cdef i64 cl_curbatch         # classic RCU: rcu_ctrlblk.curbatch
    cdef i64 cl_maxbatch         # rcu_ctrlblk.maxbatch
    cdef int cl_mask_n           # CPUs left in rcu_ctrlblk.rcu_cpu_mask

    # --- kvfree_rcu() batching and rcuscale's kfree threads (kvfree_rcu.pxi, kfree_scale.pxi)
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
    cdef i64 kv_b_start_t         # when the last thread to start read kv_b_start
    cdef int kv_gen               # KV_*: what a kfree_rcu() call does
    cdef int kv_lazy              # KV_CALL_RCU: the callbacks are lazy (kfree_by_call_rcu)
    cdef int kv_polled            # per-page polled reclaim (seed 001's patch as posted)
    cdef int kv_drain_ready       # the monitor frees the ready pages, queue_rcu_work() the rest (v6.3)
    cdef int kv_chunk             # 1 = one event per kfree_rcu() call
    cdef int kv_form              # 0 = both kfree_rcu() forms at random, 1 = single-argument, 2 = two-argument
    cdef i64 kv_max_entr          # KVFREE_BULK_MAX_ENTR: pointers per page
    cdef i64 kv_drain_jiffies     # KFREE_DRAIN_JIFFIES
    cdef int kv_drain_5hz         # switch kfree_drain_5hz (v6.1): KFREE_DRAIN_JIFFIES 5*HZ, and the monitor after 1 jiffy once a batch is full
    cdef int kv_page_cache_work   # page_cache_work refills the cache; no allocation in the call (v5.11)
    cdef int kv_min_cached        # rcutree.rcu_min_cached_objs (krcp->bcached's one page before v5.9)
    cdef i64 kv_obj_bytes         # slab object size (kmalloc size class)
    cdef i64 kv_call_ns           # kmalloc() + kvfree_call_rcu() (call_rcu() for KV_CALL_RCU) per object
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

    # --- the unbound workqueue's worker pool (workqueue.pxi) ------------------------------------
    cdef int uwq_first, uwq_max   # its kworker entities: uwq_max from uwq_first (0: no pool)
    cdef int uwq_created          # workers created so far (the first uwq_created entities)
    cdef int *uwq_idle            # idle workers, the one that went idle last at the end
    cdef int uwq_n_idle
    cdef int *uwq_cur             # per worker: the KW_* of the work in hand, -1 none
    cdef int *uwq_list            # the worklist, a ring of work ids (krcp * KW_N + KW_*)
    cdef int uwq_head, uwq_len, uwq_cap

    # --- the page allocator's per-CPU lists and slab pages (page_alloc.pxi) ------------------
    cdef pcp_t *pcps
    cdef i64 zone_free            # NR_FREE_PAGES (from an arbitrary base)
    cdef int pcp_batch, pcp_high_min, pcp_high_max, pcp_scale_max
    cdef int pcp_free_factor, pcp_high_auto  # the release's switches of the same names
    cdef i64 pcp_hz               # HZ: vmstat_update() comes every HZ jiffies
    cdef i64 *slab_alloc          # per CPU: objects kmalloc()ed on it
    cdef i64 *slab_freed          # ... and of those, freed
    cdef i64 slab_objs            # objects per slab page
    cdef i64 *slab_cpu_partial    # per CPU: empty slabs on its partial list
    cdef i64 slab_node_partial    # empty slabs on the node's partial list
    cdef i64 slab_cpu_partial_slabs, slab_min_partial  # s->cpu_partial_slabs, s->min_partial
    cdef i64 n_pcp_allocs, n_pcp_frees, n_pcp_refilled, n_pcp_drained

    # --- records (records.pxi) ------------------------------------------------
    cdef int records_mode         # RECORDS_ALL, RECORDS_SAMPLE or RECORDS_NONE
    cdef u64 sample_below         # RECORDS_SAMPLE keeps a request whose hash is below this
    cdef dict req_cols            # the NumPy arrays the request rows live in, by column
    cdef int *req_task            # ... their data: the row of each kept request
    cdef int *req_cpu
    cdef signed char *req_prim
    cdef i64 *req_start
    cdef i64 *req_end
    cdef i64 req_n                # rows kept
    cdef i64 req_cap              # rows the arrays hold
    cdef object row_sink          # None, or sink(columns, n) that takes each full chunk of rows
    cdef i64 lat_count[PRIM_N]    # every finished request, by primitive: how many,
    cdef i64 lat_sum_ns[PRIM_N]   # ... the sum, least and greatest of their latencies,
    cdef i64 lat_min_ns[PRIM_N]
    cdef i64 lat_max_ns[PRIM_N]
    cdef i64 lat_log2_us[PRIM_N][LOG2_SLOTS]   # ... bcc's log2 histogram of whole µs,
    cdef i64 *lat_fine[PRIM_N]    # ... a log-linear histogram (FINE_SUB_BITS per octave),
    cdef i64 bd_n[PRIM_N]         # ... and, for those matched with the GP of their snapshot,
    cdef i64 bd_sum_ns[PRIM_N][6] # sums of call->GP start, ->all QS, ->GP end, ->wake-up asked, ->queued, ->running
    cdef i64 *gprec_seq
    cdef i64 *gprec_start
    cdef i64 *gprec_end
    cdef i64 *gprec_qs
    cdef i64 *gprec_ipis
    cdef signed char *gprec_exp
    cdef i64 *gprec_fqs
    cdef signed char *gprec_last
    cdef i64 gprec_n
    cdef i64 gprec_cap
    cdef readonly i64 completion_ns

    # --- counters (Engine.counters()) -----------------------------------------
    cdef readonly dict counters_init
    cdef i64 n_ctxsw, n_cbs_invoked, n_wakeups, n_idle_exits, n_idle_exit_ns, n_softirq
    cdef i64 n_halt_polled, n_halt_blocked
    cdef i64 n_vmap_wait_ns, n_vmap_purges
    cdef i64 n_wake_local, n_wake_remote, n_wake_polling, n_wake_ipi, n_rq_lock_wait_ns
    cdef i64 n_delayed_dequeues   # fair sleeps kept queued by DELAY_DEQUEUE
    cdef i64 n_fqs, n_bypass_enq, n_bypass_flush, n_lock_wait_ns, n_ticks
    cdef i64 n_ipis, n_preempt, n_rcuog_wake, n_gp_wake
    cdef i64 n_exp_ipis, n_exp_deferred, n_exp_funnel_wait, n_exp_mutex_wait, n_exp_mutex_steal
    cdef i64 n_reader_blocked

    # --- safety checker: the last completed GP of each flavour (checker.pxi) --
    cdef i64 last_gp_start[2]
    cdef i64 last_gp_seq[2]
    cdef i64 gp_completions[2]
    cdef i64 n_readers_checked
    cdef i64 reader_pipe[2][3]   # readers by GPs (0, 1, 2+) completed during them
    cdef i64 n_violations
    cdef list violations
    cdef i64 cb_seq               # callbacks queued so far (cb_t.seq numbers them)
    cdef int barrier_check        # a task may call rcu_barrier(): the checker follows every callback
    cdef i64 *chk_inv_ns          # ring over callbacks chk_low..cb_seq-1: when each was invoked, -1 before
    cdef i64 chk_cap              # its size, a power of two
    cdef i64 chk_low              # every callback numbered below this one was invoked by now

    # --- optional trace buffer: every hook tests trace_on first (trace.pxi) ---
    cdef bint trace_on
    cdef trace_rec_t *trace_buf
    cdef i64 trace_n
    cdef i64 trace_cap
    cdef readonly bint trace_overflow
    cdef i64 trace_max
