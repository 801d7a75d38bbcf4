# cython: language_level=3
"""Types, event kinds and the engine's structs.

Every field names its kernel counterpart where one exists, with its unit.
Time is int64 nanoseconds since the start of the run (``i64``).
"""

from libc.stdint cimport int64_t, uint64_t, int32_t, uint32_t, int8_t, uint8_t

ctypedef int64_t i64
ctypedef uint64_t u64

# ---------------------------------------------------------------------------
# Event kinds (event_t.kind).  The handler for each lives in _core.pyx.
# ---------------------------------------------------------------------------
cdef enum:
    EV_TICK = 0          # scheduling-clock interrupt on CPU target
    EV_BURST_END = 1     # the entity running on CPU target finishes its burst (arg = cpu gen)
    EV_WAKE = 2          # entity target becomes runnable on its CPU (after wake-up latency)
    EV_CPU_RUN = 3       # CPU target leaves idle and picks its next entity
    EV_GP_TIMER = 4      # GP kthread FQS timeout (arg = timer generation)
    EV_BYPASS_TIMER = 5  # rcuog group target: nocb_bypass_timer (arg = timer generation)
    EV_RESCHED = 6       # CPU target left a non-preemptible section; a preemption waits
    EV_IPI = 7           # resched_cpu() IPI reaching CPU target
    EV_EXP_IPI = 8       # rcu_exp_handler() IPI reaching CPU target (arg = expedited_sequence)
    EV_EXP_DEFERRED = 9  # CPU target leaves the preempt/BH-disabled section that deferred its expedited QS
    EV_KFREE_MONITOR = 10 # krcp of CPU target: the monitor_work timer expires (arg = timer generation)
    EV_PROBE_TIMER = 11  # timer interrupt of rt_latency_probe entity target (the RTC irq amlat sleeps on)
    EV_NOISE_IRQ = 12    # a noise interrupt arrives at CPU target
    EV_IRQ_EXIT_IDLE = 13 # an interrupt taken from idle CPU target returns to idle (ct_irq_exit())
    EV_NOISE_KTHREAD = 14 # work for the noise kthread of CPU target arrives
    EV_NOHZ_ILB = 15     # kick_ilb(): the nohz idle-balance IPI reaches CPU target
    EV_TASK_TIMEOUT = 16 # process_timeout(): the schedule_timeout() timer of sync_loop task target expires
    EV_BARRIER_IPI = 17  # rcu_barrier_handler() IPI reaching CPU target
    EV_BARRIER_CB = 18   # an rcu_barrier_callback() invoked by CPU target ends
    EV_NOISE_HOST = 19   # the host stalls virtual CPU target (if it runs something)
    EV_IRQ_ENTER_IDLE = 20 # idle CPU target has left its state and enters the interrupt (ct_irq_enter(); arg = its time)
    EV_HRTIMER_SLEEP = 21 # hrtimer_wakeup(): the nanosleep() hrtimer of entity target expires on its CPU
    EV_SOFTIRQ_RESTART = 22 # an irq exit's RCU_SOFTIRQ pass on CPU target ends: handle_softirqs() restarts or stops

# Deliberate model faults (Engine.fault), each breaking one rule the kernel relies
# on, for tests that the safety checker catches them: numbered as the catalogue
# in rcusim/engine/faults.py.  FAULT_NONE in every real run.
cdef enum:
    FAULT_NONE = 0
    FAULT_EXP_IPI_IGNORES_READERS = 1
    FAULT_QS_WITHOUT_QS = 2
    FAULT_GP_ONE_FQS_EARLY = 3
    FAULT_EXP_SNAP_GP_IN_PROGRESS = 4
    FAULT_NO_WAIT_FOR_KRWP_WORK = 5
    FAULT_CB_ONE_SEGMENT_TOO_FAR = 6
    FAULT_BLKD_READER_DROPPED = 7
    FAULT_BYPASS_WRONG_SEGMENT = 8
    FAULT_BARRIER_ENTRAIN_AT_HEAD = 9
    FAULT_KVFREE_NO_GP = 10

# Event priorities: urgent events run before normal ones at the same instant.
cdef enum:
    PRIO_URGENT = 0
    PRIO_NORMAL = 1

# ---------------------------------------------------------------------------
# Entities: tasks and kthreads that run on CPUs.
# ---------------------------------------------------------------------------
cdef enum:
    ENT_TASK = 0         # a workload task looping on synchronize_rcu()
    ENT_GP = 1           # rcu_preempt / rcu_sched grace-period kthread
    ENT_RCUOG = 2        # rcuog/N: NOCB grace-period kthread of one group
    ENT_RCUOP = 3        # rcuop/N: NOCB callback-invocation kthread of one CPU
    ENT_SR_WORKER = 4    # kworker running rcu_sr_normal_gp_cleanup_work
    ENT_RCUC = 5         # rcuc/N (use_softirq=0) or ksoftirqd/N running rcu_core
    ENT_EXP_GP = 6       # rcu_exp_gp_kthread_worker: drives expedited GPs
    ENT_EXP_PAR = 7      # rcu_exp_par_gp_kthread_worker/N: CPU selection for one leaf
    ENT_READER = 8       # a reader task: rcu_read_lock(); ...; rcu_read_unlock() in a loop
    ENT_KFREE = 9        # rcuscale kfree_scale_thread: kmalloc() + kfree_rcu() in loops
    ENT_KWORKER = 10     # system_wq kworker running one kvfree_rcu work item of one CPU
    ENT_RT_PROBE = 11    # rt_latency_probe: a SCHED_FIFO task woken by a periodic timer interrupt
    ENT_BG = 12          # call_rcu_load task: kernel work, non-preemptible sections, call_rcu()
    ENT_KRCUD = 13       # krcud/N: the 2004 rcu-low-lat patch's callback kthread (nice -19)
    ENT_NOISE = 14       # noise kthread of one CPU: short bursts of unrelated kernel work
    ENT_RELEASER = 15    # a sync_loop workload's parent thread releasing its tasks from a pthread barrier

cdef enum:
    ST_BLOCKED = 0
    ST_RUNNABLE = 1
    ST_RUNNING = 2

# Run-queue classes: SCHED_FIFO before SCHED_OTHER.
cdef enum:
    RQ_RT = 0
    RQ_NORMAL = 1

# CPU states.
cdef enum:
    CPU_IDLE = 0         # in dyntick-idle: an extended quiescent state, no tick
    CPU_WAKING = 1       # leaving idle (exit latency running)
    CPU_BUSY = 2         # running an entity

# Callback kinds (the function an rcu_head points to).
cdef enum:
    CB_WAKEME = 0        # wakeme_after_rcu: completes a synchronize_rcu() waiter
    CB_KFREE = 1         # a kfree-like callback
    CB_GENERIC = 2       # a mixed kernel callback
    CB_RCU_WORK = 3      # rcu_work_rcufn: queue_rcu_work()'s callback queues the work (arg = work id)
    CB_RCUSCALE_ASYNC = 4 # rcu_scale_async_cb: one callback fewer in flight (arg = the writer task)
    CB_BARRIER = 5       # rcu_barrier_callback: counts rcu_state.barrier_cpu_count down
    CB_KFREE_OBJ = 6     # a kfree_rcu_flood object: __rcu_reclaim() kfree()s it (kfree_rcu() before v5.6,
                         # or rcuscale's kfree_call_rcu() for kfree_by_call_rcu)
    CB_MT_FREE = 7       # mt_free_rcu: a freed maple-tree node's kmem_cache_free() (a process's mmap())
    CB_KINDS = 8

# Primitives of a sync_loop workload (the requests' primitive column).
cdef enum:
    PRIM_SYNCHRONIZE_RCU = 0
    PRIM_SYNCHRONIZE_RCU_EXPEDITED = 1
    PRIM_CALL_RCU_HURRY = 2  # rcuscale's gp_async writer: call_rcu_hurry(), or rcu_barrier() when full
    PRIM_N = 3

# Segments of struct rcu_segcblist.
cdef enum:
    RCU_DONE_TAIL = 0
    RCU_WAIT_TAIL = 1
    RCU_NEXT_READY_TAIL = 2
    RCU_NEXT_TAIL = 3

# rcu_state.gp_flags and gp_state.
cdef enum:
    RCU_GP_FLAG_INIT = 1
    RCU_GP_FLAG_FQS = 2

cdef enum:
    RCU_GP_IDLE = 0      # waiting for a request (WAIT_GPS)
    RCU_GP_INIT = 4      # rcu_gp_init() walk running
    RCU_GP_WAIT_FQS = 5  # sleeping until the FQS timeout or the root's qsmask empties
    RCU_GP_DOING_FQS = 6 # force_qs_rnp() scan running
    RCU_GP_CLEANUP = 7   # rcu_gp_cleanup() walk running

# Whose report emptied the root's qsmask (a normal GP's record).
cdef enum:
    LAST_QS_GP_CPU = 0   # the GP kthread's own CPU
    LAST_QS_IDLE = 1     # a CPU seen idle: by an FQS scan, or reporting from an idle-time interrupt
    LAST_QS_BUSY = 2     # a running CPU reporting its own QS, or seen by a scan to have passed idle
    LAST_QS_READER = 3   # the last preempted reader blocking the GP left its critical section

# Task phases (ent_t.phase for ENT_TASK).
cdef enum:
    TASK_NEW = 0         # not started yet
    TASK_WAITING = 1     # blocked inside synchronize_rcu()
    TASK_RUNNING = 2     # returned: doing the work after the call, think time, next call
    TASK_EXITED = 3
    TASK_MUTEX_WAIT = 4  # sleeping on rcu_state.exp_mutex
    TASK_EXP_OWNER = 5   # holds exp_mutex; sleeps on the root's exp_wq until its GP ends
    TASK_EXP_DRIVE = 6   # holds the GP mutex and drives the expedited GP itself (before v4.9)
    TASK_SLEEPING = 7    # thinking, then sleeping in schedule_timeout_idle() before the next call
    TASK_BARRIER = 8     # in rcu_barrier(), holding barrier_mutex: entraining on each CPU with callbacks
    TASK_BARRIER_WAIT = 9 # in rcu_barrier(): waiting for the last rcu_barrier_callback()
    TASK_ASYNC_RETRY = 10 # back from rcu_barrier(): retrying call_rcu_hurry(), the same measurement (before v6.12)
    TASK_START = 11      # created by its parent (clone()): start_thread() up to its start lock (pd->lock)
    TASK_START_LOCK = 12 # asleep on its start lock until the parent unlocks it (futex_wake())
    TASK_START_ON = 13   # past its start lock: on to the start barrier, where it sleeps as TASK_NEW
    TASK_SYSCALL_EXIT = 14 # a user task's call returned: its system call exits (exit_to_user_mode())

# The parent thread of a barrier's tasks (ent_t.phase for ENT_RELEASER; its loops_left is the task
# it creates, or wakes, next): the twin's load helper's main thread (rcusim/twin/guest/rcusim_load.c).
cdef enum:
    RELEASER_CREATE = 0  # pthread_create(): the stack's mmap(), clone() and wake_up_new_task()
    RELEASER_UNLOCK = 1  # ... sched_setaffinity() on the new thread and its start lock's unlock
    RELEASER_POLL = 2    # usleep() until every thread has counted itself in
    RELEASER_SETTLE = 3  # usleep() once more, then the barrier, where it arrives last
    RELEASER_WAKE = 4    # the barrier's futex_wake(): its waiters, one by one

# Reader phases (ent_t.phase for ENT_READER).
cdef enum:
    RD_IN = 0            # inside a read-side critical section
    RD_OUT = 1           # between sections, still running (kernel mode)

# call_rcu_load task phases (ent_t.phase for ENT_BG).
cdef enum:
    BG_WORK = 0          # preemptible kernel work of one operation
    BG_LOCKED = 1        # a non-preemptible section (spinlock held, preemption off)
    BG_SLEEPING = 2      # schedule_timeout_idle() between operations

# Expedited GP kworker phases (rcu_exp_sel_wait_wake()).
cdef enum:
    EXP_IDLE = 0         # no work queued
    EXP_RESET = 1        # sync_exp_reset_tree() running
    EXP_SELECT = 2       # selecting CPUs of the last leaf inline
    EXP_FLUSH = 3        # waiting for the per-leaf workers (kthread_flush_work)
    EXP_WAIT = 4         # synchronize_rcu_expedited_wait(): until the root's expmask empties
    EXP_WAKE = 5         # rcu_exp_wait_wake(): rcu_seq_end() and the wake-ups


cdef struct ent_t:
    # The fields are grouped by the paths that use them, one 64-byte cache line a
    # group (Engine.ents is line-aligned and ent_t a whole number of lines, _pad): a
    # wake-up reads the first, the fair class the second, a task's synchronize_rcu()
    # loop the third.
    # --- line 1: identity and try_to_wake_up() (sched.pxi, placement.pxi)
    int32_t kind         # ENT_*
    int32_t cpu          # the CPU it runs on, or last ran on (task_cpu())
    int32_t aff          # its allowed CPUs: a mask of Engine.aff_mask, -1 = bound to cpu
    int32_t state        # ST_*
    int32_t rq           # RQ_RT or RQ_NORMAL
    int32_t fork_place   # a new task placed at its start by find_idlest_cpu() (wake_up_new_task())
    int32_t might_resched # its kernel code reaches might_resched() every few us (preempt=voluntary)
    int32_t head_enqueue # 1 = woken to the head of its class (highpri kworker)
    int32_t link         # ENT_TASK: srs_* list link (wake_from_gp path), walked by its waker
    int32_t wakee_flips  # p->wakee_flips: how often it switched the task it wakes
    int32_t last_wakee   # p->last_wakee, -1 if none
    int32_t recent_used_cpu # p->recent_used_cpu
    i64 wakee_flip_decay_ts # p->wakee_flip_decay_ts (jiffies)
    i64 t_woken          # when its last wake-up was asked (try_to_wake_up() by the waker, ns)
    # --- line 2: the fair class (fair.pxi): struct sched_entity
    int32_t weight       # load weight from nice (sched_prio_to_weight)
    int32_t sched_delayed # fair (DELAY_DEQUEUE, v6.12): asleep but still queued on its CPU, in the
                          # heap, until picked (then dequeued) or woken (then runnable in place)
    i64 deadline         # EEVDF virtual deadline
    i64 vruntime         # virtual runtime (ns scaled by NICE_0_LOAD / weight)
    i64 vlag             # EEVDF lag kept over a sleep; while running, the deadline it was picked with
    i64 exec_start       # when its CPU time was last charged (ns)
    i64 sum_exec         # CPU time so far (ns)
    i64 prev_sum_exec    # sum_exec when it was last picked
    i64 t_queued         # when its last wake-up put it on a run queue (ns)
    # --- line 3: its work
    int32_t phase        # kind-specific state (TASK_*)
    int32_t idx          # kind-specific index: workload, group or CPU
    int32_t initial      # ENQUEUE_INITIAL: its first enqueue (a new task)
    int32_t loops_left   # ENT_TASK: synchronize_rcu() calls still to make
    int32_t next         # SCHED_FIFO and round-robin run-queue link (-1 = end)
    int32_t kthread      # ENT_TASK: a kernel thread (a module's), not a user task
    i64 remaining        # rest of a preempted burst (ns), -1 if none
    i64 t_call           # ENT_TASK: when the current synchronize_rcu() started (ns)
    i64 req_s            # ENT_TASK: the gp_seq (or expedited_sequence) snapshot it waits for
    i64 slice_used       # SCHED_OTHER under round robin: CPU time of its slice used before a SCHED_FIFO preemption (ns)
    # --- the rest, used by fewer mechanisms
    # ENT_TASK only
    int32_t fl_held      # expedited funnel: the mutex it holds, -1 if none
    int32_t fl_next      # the sleeping mutex it waits for (an expedited funnel's, or barrier_mutex)
    int32_t async_inflight # rcuscale's ws_inflight: its callbacks not yet invoked (from v6.12)
    int32_t barrier_cpu  # rcu_barrier(): the next CPU it looks at
    i64 barrier_s        # ... its rcu_seq_snap() of rcu_state.barrier_sequence
    i64 barrier_cb_seq   # ... callbacks queued before it began (the checker's bound)
    # ENT_READER only
    i64 rd_start         # when the current read-side critical section began (ns)
    i64 rd_gpc0          # normal GPs completed when it began (Reader Pipe)
    i64 rd_gpc1          # expedited GPs completed when it began
    int32_t rd_blocked   # preempted inside the section: counted in its leaf's blkd_n
    int32_t rd_blocks_gp # ... and blocks the current normal GP (rnp->gp_tasks)
    int32_t rd_blocks_exp # ... and the current expedited GP (rnp->exp_tasks)
    # ENT_RCUOG only
    int32_t on_waitq     # sleeping on its leaf's rnp->nocb_gp_wq
    int32_t wait_next    # rnp->nocb_gp_wq link
    i64 wait_gp_seq      # nocb_gp_seq: the GP it sleeps for
    # ENT_RT_PROBE only (loops_left counts the samples still to take)
    i64 t_wake           # when its timer interrupt fired (ns)
    # ENT_BG only
    i64 sec_ns           # length of the non-preemptible section it runs next (ns)
    int32_t start_unlocked # ENT_TASK of a barrier's: its parent has unlocked its start lock
    char _pad[28]        # to 320 bytes, five whole lines (Engine() checks)


cdef struct fair_node_t:
    # A queued fair entity in its CPU's heap, with what the heap's walks read of it: the
    # comparisons, pick_eevdf()'s eligibility tests, min_vruntime's and detach_tasks()'s
    # walks stay in the heap's own lines instead of reading each entity's.
    i64 key              # its deadline (EEVDF) or vruntime (CFS), fixed while queued
    u64 seq              # enqueue order, to break key ties as the kernel's rb-tree does
    i64 vruntime         # its vruntime, fixed while queued (only the running entity's grows)
    int32_t e


cdef struct cpu_t:
    int32_t curr         # running entity, -1 when idle
    int32_t rq_head[2]   # run queues by class
    int32_t rq_tail[2]
    int32_t nr_queued    # entities waiting in the run queues
    int32_t state        # CPU_*
    u64 gen              # burst generation: stale EV_BURST_END events are ignored
    i64 burst_end        # when the current burst ends, before stolen time
    i64 stolen           # irq/softirq time taken from the current burst (ns)
    i64 debt             # lock waits to charge to the next burst (ns)
    i64 nonpreempt_until # end of the softirq section running now (ns)
    int32_t resched_pending # an EV_RESCHED is queued for nonpreempt_until
    int32_t tick_on      # the periodic tick is running (not stopped by NO_HZ idle)
    i64 timer_irq_jiffy  # 1 + the jiffy whose local timer interrupt was last drawn late (noise) ...
    i64 timer_irq_at     # ... and when it arrives
    int32_t stop_tick    # the cpuidle governor let the idle CPU stop its tick
    i64 user_from        # the running burst is in user mode from here ...
    i64 user_to          # ... to here (think time): the tick sees a QS there
    i64 waking_until     # idle-exit finishes at this time (CPU_WAKING)
    i64 watching         # rcu_watching counter: +1 at each idle entry and exit
    # struct rcu_data
    i64 gp_seq           # rdp->gp_seq: the last GP this CPU has noticed
    int32_t cpu_no_qs    # rdp->cpu_no_qs.b.norm: no QS noted yet for gp_seq
    int32_t core_needs_qs # rdp->core_needs_qs: this CPU must report a QS
    int32_t urgent_qs    # rcu_urgent_qs: the tick forces a context switch
    i64 watching_snap    # rdp->watching_snap taken at the first FQS pass
    int32_t leaf         # rdp->mynode
    u64 grpmask          # rdp->grpmask: this CPU's bit in its leaf
    int32_t offloaded    # callbacks are offloaded (NOCB)
    int32_t rcuop        # rcuop/N entity, -1 if not offloaded
    int32_t group        # NOCB group index, -1 if not offloaded
    int32_t rcuc         # rcuc/N or ksoftirqd/N entity, -1 if none
    int32_t nocb_cb_sleep # rdp->nocb_cb_sleep
    int32_t blimit       # rdp->blimit
    i64 qlen_last_fqs_check # rdp->qlen_last_fqs_check: queue length at the last overload check
    int32_t ksirqd_restarts # ksoftirqd/N: restarts of its handle_softirqs() so far
    int32_t exp_need_qs  # rdp->cpu_no_qs.b.exp: the expedited IPI must be answered later
    int32_t exp_deferred_pending # an EV_EXP_DEFERRED is queued
    int32_t reader       # the reader entity on this CPU, -1 if none
    int32_t resched_reader # a preemption waits for the running reader's rcu_read_unlock()
    i64 run_start        # when the running entity was last switched in
    # classic RCU of the 2004 patches (kernel.release < 2.6.29)
    int32_t tasklet_raised # rcu_do_batch() re-raised the RCU tasklet (tasklet_hi_schedule)
    int32_t plugticks    # RCU_plugticks(cpu): ticks before the done list may run again
    int32_t krcud        # krcud/N entity, -1 if none
    int32_t rcud_head    # RCU_rcudlist(cpu): callbacks handed to krcud/N (a FIFO), -1 if none
    int32_t rcud_tail
    int32_t rcud_len
    int32_t cl_snap      # classic RCU: RCU_last_qsctr(cpu) is valid (snapshot taken)
    int32_t softirq_pending # RCU_SOFTIRQ is raised and not yet run: left for ksoftirqd (the next irq exit
                         # runs it), or raised inside a handle_softirqs() that restarts for it
    i64 batch_end        # when the last rcu_do_batch() computed ahead ends: its callbacks still count in ->cblist.len
    int32_t async_inflight # rcuscale's per-CPU n_async_inflight (before v6.12)
    i64 probe_next       # next timer interrupt of an rt_latency_probe on this CPU (ns)
    i64 timeout_next     # next schedule_timeout() timer of a sync_loop task sleeping on this CPU (ns)
    i64 probe_runnable_at # a probe woken on this CPU is runnable from here until it runs (ns)
    int32_t in_irq       # an interrupt taken from idle is running: not in an extended QS
    i64 irq_exit_at      # ... until here (cpuidle.pxi's irq_from_idle())
    # OS noise (noise.pxi)
    int32_t noise_ent    # the noise kthread of this CPU, -1 if none
    int32_t noise_work   # work items queued for it and not yet run
    # rcu_segcblist: callbacks in one FIFO; segments are consecutive runs of it
    int32_t cb_head      # first callback (DONE side), -1 if none
    int32_t cb_tail      # last callback
    int32_t seg_len[4]   # callbacks per segment
    i64 seg_gp[4]        # gp_seq each segment waits for (WAIT, NEXT_READY)
    # rdp->nocb_bypass
    int32_t byp_head
    int32_t byp_tail
    int32_t byp_len
    i64 byp_first        # jiffy of the first bypass enqueue
    int32_t lazy_len     # rdp->lazy_len: lazy callbacks in the bypass
    i64 nobypass_last    # nocb_nobypass_last (jiffy)
    i64 nobypass_count   # nocb_nobypass_count
    # !CONFIG_PREEMPTION: a reschedule that must wait for a preemption point
    int32_t need_resched # TIF_NEED_RESCHED on the running entity, honoured at its next schedule() or cond_resched()
    # fair class (fair.pxi): struct cfs_rq
    fair_node_t *fh      # the heap of queued fair entities
    int32_t fh_cap       # its room: at least the entities whose cpu is this one
    int32_t n_assigned   # entities whose cpu is this one
    int32_t nr_fair      # queued fair entities (the running one not counted)
    i64 min_vruntime     # v0 of the sums below; CFS's min_vruntime
    i64 avg_vsum         # sum of (vruntime - min_vruntime) * weight over the queued
    i64 avg_load         # sum of weight over the queued
    int32_t next_buddy   # CFS: the wakee that preempted, -1 if none
    int32_t last_buddy   # CFS: the entity it preempted, -1 if none
    int32_t fair_resched # a fair preemption waits for the end of a non-preemptible section
    int32_t step_resched # a preemption asked while the running entity's action was computed
    # placement and load balancing (placement.pxi, balance.pxi): struct rq
    int32_t ttwu_pending # wake-ups on their way to this CPU (rq->ttwu_pending)
    int32_t rq_lock_cpu  # the CPU that last held rq->__lock: its cache line is there
    i64 rq_lock_free     # rq->__lock is free again from here (ns): a waker spins until then
    i64 ttwu_last        # when this CPU last woke a task (ns; -1: never), for ttwu_reuse
    i64 ttwu_from        # the wake-up it makes runs from here ...
    i64 ttwu_until       # ... to here: try_to_wake_up() holds p->pi_lock with interrupts and
                         # preemption off, so a tick taken meanwhile sees no QS
    i64 avg_idle         # rq->avg_idle: average idle period (ns)
    i64 idle_stamp       # rq->idle_stamp: when it last went idle (ns)
    # a KVM guest's vCPU halted in HLT (kvm.pxi): the host's struct kvm_vcpu
    i64 halt_poll_ns     # vcpu->halt_poll_ns: how long the host polls before it blocks the vCPU thread
    i64 halt_start       # when the vCPU executed HLT (kvm_vcpu_halt()'s start)
    i64 halt_irq_lat     # what returning from the HLT an interrupt ended at halt_start costs (-1: none)
    i64 next_balance     # rq->next_balance (jiffies)
    # scheduler statistics (sched.pxi: rq_account())
    i64 busy_ns          # time running an entity
    i64 rq_t             # when nr_running last changed
    i64 ksirqd_start     # ksoftirqd/N: when its handle_softirqs() began (MAX_SOFTIRQ_TIME)
    int32_t softirq_irq_exit # an irq exit's handle_softirqs() runs, restarted so many times (0: none); its
                         # next restart is an EV_SOFTIRQ_RESTART, which carries when it began
    int32_t lb_dirty     # its runnable count, idleness or load changed since the group sums took it (balance.pxi);
                         # the last field of ten whole lines, 640 bytes (rcu_init_geometry() checks): each
                         # CPU's first line holds what every event reads, curr to debt


cdef struct sched_avg_t:
    # struct sched_avg of a CPU's cfs_rq, its utilisation alone (pelt.pxi)
    i64 last_update_time # ns, a multiple of 1024
    i64 util_sum
    int32_t period_contrib
    int32_t util_avg


cdef struct menu_t:
    # struct menu_device of the menu cpuidle governor (cpuidle.pxi); times in us
    i64 correction[12]   # correction_factor[BUCKETS]
    i64 intervals[8]     # intervals[INTERVALS]: the last idle periods
    int32_t interval_ptr
    int32_t bucket
    int32_t needs_update
    int32_t tick_wakeup
    int32_t state        # the idle state entered last (index into the profile's table)
    i64 next_timer_us
    i64 residency_us     # dev->last_residency
    i64 enter_ns         # when the CPU entered that state


cdef struct rnp_t:
    u64 qsmask           # children (CPUs at a leaf) still owing a QS for gp_seq
    u64 qsmaskinit       # children online at GP start
    i64 gp_seq           # rnp->gp_seq
    i64 gp_seq_needed    # rnp->gp_seq_needed: furthest GP requested through here
    int32_t parent       # parent node index, -1 at the root
    u64 grpmask          # this node's bit in its parent's qsmask
    int32_t grplo        # first CPU covered
    int32_t grphi        # last CPU covered
    i64 lock_free        # time its raw spinlock is next free (contention model)
    int32_t nocb_wait    # rcuog entities sleeping on rnp->nocb_gp_wq (list head)
    # expedited GPs
    u64 expmask          # children (CPUs at a leaf) still owing an expedited QS
    u64 expmaskinit      # children online
    u64 exp_sel_qs       # leaf: CPUs found quiescent by the running selection, reported at its end
    i64 exp_seq_rq       # rnp->exp_seq_rq: furthest expedited GP requested through here
    i64 exp_lock_free    # time rnp->exp_lock is next free
    int32_t exp_wq_head[4] # rnp->exp_wq[]: tasks waiting, by rcu_seq_ctr(s) & 3
    int32_t exp_wq_tail[4]
    int32_t par_ent      # leaf: its rcu_exp_par_gp_kthread_worker, -1 if none
    # preempted readers (PREEMPT_RCU rnp->blkd_tasks), leaves only
    int32_t blkd_n       # readers preempted inside their section
    int32_t gp_blockers  # of which block the current normal GP (gp_tasks)
    int32_t exp_blockers # of which block the current expedited GP (exp_tasks)


cdef struct group_t:
    int32_t ent          # the rcuog entity
    int32_t first        # slice of the group's CPUs in group_cpus[]
    int32_t count
    int32_t nocb_gp_sleep # rdp_gp->nocb_gp_sleep
    u64 timer_gen        # nocb_timer generation (0 = not armed)
    int32_t defer        # rdp_gp->nocb_defer_wakeup: NOCB_WAKE_NOT, _BYPASS or _LAZY


cdef enum:
    # nocb_defer_wakeup levels (tree.h RCU_NOCB_WAKE_*) that rcusim's timers use
    NOCB_WAKE_NOT = 0
    NOCB_WAKE_BYPASS = 1
    NOCB_WAKE_LAZY = 2


cdef struct cb_t:
    int32_t next         # list link
    int32_t kind         # CB_*
    int32_t arg          # CB_WAKEME: the waiting task
    i64 t_queued         # call_rcu() time (ns)
    i64 seq              # queued order over all CPUs (the rcu_barrier() check)


# ---------------------------------------------------------------------------
# kvfree_rcu() batching (kfree_rcu_cpu and friends); see the kvfree_rcu() block of _core.pyx.
# ---------------------------------------------------------------------------
cdef enum:
    KFREE_N_BATCHES = 2  # krw_arr[]: batches in flight per CPU

# What a kfree_rcu() call does, by generation (Kvfree.gen).
cdef enum:
    KV_CALL_RCU = 0      # call_rcu() of the object (before v5.6; kfree_by_call_rcu)
    KV_HEAD_LIST = 1     # krcp->head rcu_head list, batched by the monitor (v5.6)
    KV_BULK = 2          # pointers in bulk pages, the rcu_head list as a fallback (v5.7)

# Work items of one krcp, by index (work id = cpu * KW_N + index).
cdef enum:
    KW_MONITOR = 0       # kfree_rcu_monitor (delayed work)
    KW_PAGE_CACHE = 1    # fill_page_cache_func (page_cache_work, system_highpri_wq)
    KW_RECLAIM0 = 2      # kfree_rcu_work of krw_arr[0]; krw_arr[1] is KW_RECLAIM0 + 1
    KW_N = 4

# kfree thread phases (ent_t.phase for ENT_KFREE).
cdef enum:
    KT_INSERT = 0        # kmalloc() + kvfree_call_rcu() into the current page
    KT_DONE = 1          # all loops done: the thread ends

# kfree_rcu_work step actions (ent_t.phase for a reclaim ENT_KWORKER).
cdef enum:
    KWA_PAGE = 0         # kvfree_rcu_bulk(): kfree_bulk() one page's pointers, recycle the page
    KWA_HEAD = 1         # kvfree_rcu_list(): free the channel-3 objects
    KWA_SYNC = 2         # synchronize_rcu() for the pages whose GP has not passed (polled)
    KWA_END = 3          # nothing left in hand


cdef struct pcp_t:
    # struct per_cpu_pages of the zone, its unmovable order-0 list (page_alloc.pxi)
    int32_t count        # pages on the list
    int32_t high         # pcp->high: the list gives pages back to the zone from here
    int32_t alloc_factor # refills in a row without a free: the next takes batch << alloc_factor
    int32_t free_count   # pages freed in a row (halved by each allocation)
    int32_t free_factor  # v5.14-v6.6: give-backs in a row (halved by each allocation)
    i64 next_decay       # jiffy of the CPU's next vmstat_update() (decay_pcp_high())
    i64 from_zone        # pages it took from the zone (rmqueue_bulk())
    i64 to_zone          # ... and gave back (free_pcppages_bulk())


cdef struct bnode_t:
    int32_t next         # list link, -1 = end (lists run oldest page first)
    int32_t nr_records   # pointers stored (kvfree_rcu_bulk_data.nr_records)
    i64 gp_snap          # get_state_synchronize_rcu() at the newest insert (polled reclaim)
    i64 t_last           # time of the newest insert (ns), for the safety checker


cdef struct krw_t:
    int32_t bulk_head    # bulk_head_free[0]: detached pages waiting (oldest first)
    int32_t bulk_tail
    i64 head_free        # objects on the detached channel-3 rcu_head list
    i64 head_free_gp_snap # its get_state_synchronize_rcu() at detach (polled reclaim)
    i64 head_free_t      # time of the newest channel-3 object detached (ns)
    int32_t pending      # queued (queue_rcu_work(): its GP may still run) and not started (WORK_STRUCT_PENDING)
    int32_t queued       # on its pool's worklist: the kworker may start it
    int32_t running      # its kworker is executing kfree_rcu_work
    # The kworker's batch in hand (taken at the start of kfree_rcu_work)
    int32_t hand_head
    int32_t hand_tail
    i64 hand_objs        # channel-3 objects in hand
    i64 hand_gp_snap
    i64 hand_t
    int32_t step         # kfree_rcu_work step: 0 poll-walk, 1 after synchronize_rcu()


cdef struct krc_t:
    int32_t bulk_head    # bulk_head[0]: pages not yet detached (oldest first)
    int32_t bulk_tail    # the page being filled
    i64 head_count       # channel 3: objects on krcp->head (no page was available)
    i64 head_t           # time of the newest channel-3 object (ns)
    i64 head_gp_snap     # krcp->head_gp_snap: get_state_synchronize_rcu() at its newest insert
    int32_t drain_pages  # kvfree_rcu_drain_ready(): the oldest pages found ready as the monitor ran,
    int32_t drain_first  # ... moved off the krcp (bulk_ready), the first of them
    i64 drain_head       # ... and the channel-3 objects found ready (0: none)
    i64 drain_head_t     # ... the newest of them queued then (calls may add more before they are freed)
    i64 count            # krcp->count: objects queued since the last detach
    i64 lock_free        # krcp->lock is next free (ns)
    i64 monitor_expires  # monitor_work timer expiry (ns), -1 if not pending
    u64 monitor_gen      # timer generation: stale EV_KFREE_MONITOR events are ignored
    int32_t monitor_cpu  # the CPU whose timer it is (the one that armed it)
    int32_t monitor_queued # the monitor work is queued on its kworker
    int32_t monitor_running # ... and running (an unbound pool's worker runs it again if queued meanwhile)
    int32_t cache        # nr_bkv_objs: pages in the bkvcache
    int32_t cache_work   # page_cache_work in progress (work_in_progress)
    int32_t kworker[KW_N] # entity running each work item (KW_*)
    krw_t krw[KFREE_N_BATCHES]


# ---------------------------------------------------------------------------
# Optional trace buffer (Engine.trace_enable()): one record per traced event.
# Off by default; each hook in _core.pyx is a single test of Engine.trace_on.
# ---------------------------------------------------------------------------
cdef enum:
    TR_SWITCH = 0        # CPU cpu switches to entity ent (-1: enters idle)
    TR_WAKE = 1          # try_to_wake_up() of ent on cpu; arg = waking CPU (-1: none)
    TR_GP_START = 2      # rcu_gp_init(): rcu_seq_start(); gp_seq = the new value
    TR_GP_FQS_START = 3  # the GP kthread starts a force-quiescent-state scan
    TR_GP_FQS_END = 4    # ... and ends it; arg = CPUs it reported
    TR_GP_END = 5        # rcu_gp_cleanup(): rcu_seq_end(); gp_seq = the ended GP
    TR_QS = 6            # cpu's QS reported to its leaf; arg = 0 by the CPU, 1 by an FQS scan
                         # (dyntick-idle), 2 expedited (gp_seq = expedited_sequence)
    TR_IPI_SEND = 7      # IPI sent to cpu; arg = 0 resched_cpu(), 1 rcu_exp_handler()
    TR_IPI_HANDLER = 8   # ... and its handler runs on cpu; arg as for TR_IPI_SEND
    TR_CB_BATCH_START = 9  # rcu_do_batch() for cpu's callbacks by ent (-1: softirq); arg = ready CBs, arg2 = bl
    TR_CB_INVOKE = 10    # one callback invoked; arg = CB_* kind, arg2 = callback id
    TR_CB_BATCH_END = 11 # rcu_do_batch() returns; arg = CBs invoked, arg2 = ready CBs left
    TR_TASK_WAIT = 12    # task ent enters synchronize_rcu*(); arg = primitive; gp_seq = its snapshot
    TR_TASK_RETURN = 13  # task ent returns from it; arg = primitive
    TR_EXP_START = 14    # rcu_exp_gp_seq_start(); gp_seq = expedited_sequence after it
    TR_EXP_END = 15      # rcu_exp_gp_seq_end(); gp_seq = the ended expedited GP; arg = IPIs sent
    TR_CALLBACK = 16     # call_rcu() on cpu by ent; arg = CB_* kind, arg2 = callback id, arg3 = qlen after it
    TR_QS_REPORT = 17    # rcu_report_qs_rnp() clears mask in rcu_node ent for cpu's report; gp_seq = the
                         # node's, arg = mask, arg2 = qsmask left, arg3 = gp_tasks (readers blocking the GP)
    TR_NOCB_WAKE = 18    # rcu_nocb_wake for offloaded cpu; arg = NOCB_TPS_* reason
    TR_MIGRATE = 19      # a wake-up or load balancing moves ent to cpu (set_task_cpu()'s sched_migrate_task);
                         # arg = its CPU before, arg2 = the CPU that moves it (-1: none)
    TR_CPUSTART = 20     # __note_gp_changes(): cpu notices the GP gp_seq ("cpustart")
    TR_CPUQS = 21        # rcu_qs(): cpu passes the QS it owed for gp_seq ("cpuqs"; its report is TR_QS)
    TR_RCU_SOFTIRQ = 22  # an rcu_core() pass on cpu (softirq_entry of RCU_SOFTIRQ) by ent (-1: at irq exit)
    TR_RCU_SOFTIRQ_EXIT = 23 # ... and its end (softirq_exit)


# Tracepoints whose events rcusim prices when the kernel's command line enables them
# (trace_event=; tracepoint.pxi), as bits of Engine.tp_on (named in _core.pyx TRACEPOINTS)
cdef enum:
    TP_SCHED_SWITCH = 1          # sched:sched_switch, __schedule()
    TP_SCHED_WAKING = 2          # sched:sched_waking, try_to_wake_up() once the state matches
    TP_SCHED_WAKEUP = 4          # sched:sched_wakeup, ttwu_do_wakeup() on the enqueuing CPU
    TP_RCU_GRACE_PERIOD = 8      # rcu:rcu_grace_period
    TP_RCU_EXP_GRACE_PERIOD = 16 # rcu:rcu_exp_grace_period
    TP_RCU_QS_REPORT = 32        # rcu:rcu_quiescent_state_report, rcu_report_qs_rnp()
    TP_RCU_FQS = 64              # rcu:rcu_fqs, an FQS scan's find


# rcu_nocb_wake reasons (the kernel's TPS() strings, named in _core.pyx NOCB_WAKE_REASONS)
cdef enum:
    NOCB_TPS_WAKE_EMPTY = 0      # "WakeEmpty": first callback on an empty list, rcuog woken
    NOCB_TPS_WAKE_LAZY = 1       # "WakeLazy": only lazy callbacks, deferred wake-up
    NOCB_TPS_WAKE_OVF = 2        # "WakeOvf": the list grew past qhimark, rcuog woken
    NOCB_TPS_WAKE_NOT = 3        # "WakeNot": no wake-up needed
    NOCB_TPS_FIRST_BQ = 4        # "FirstBQ": first callback on an empty bypass list
    NOCB_TPS_FIRST_BQ_WAKE = 5   # "FirstBQwake": ... and rcuog must be woken
    NOCB_TPS_FIRST_BQ_NO_WAKE = 6  # "FirstBQnoWake": ... and rcuog need not be


cdef struct trace_rec_t:
    i64 t                # when (ns)
    int32_t cpu          # the CPU the event concerns, -1 if none
    int32_t ent          # the entity, -1 if none
    int32_t kind         # TR_*
    int32_t arg3         # third payload, by kind
    i64 gp_seq           # gp_seq (or expedited_sequence) at the event, by kind
    i64 arg              # payload, by kind
    i64 arg2             # second payload, by kind
