"""What a kernel release means to rcusim: one table of release switches.

Every behaviour rcusim models differently by ``kernel.release`` is one
:class:`Switch` below, on from the release whose code introduced it, with the
change that introduced it. :func:`release_switches` turns a release into the
switches' values; nothing else in rcusim compares releases.

Where the release boundary was taken from a pull request or a posting date
rather than from the release's tag, the switch says so ("release not
checked against the tag").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rcusim.errors import ScenarioError

__all__ = ["OLDEST", "NEWEST", "SWITCHES", "PATCHES", "MODULE_PARAMS", "ReleaseSwitches", "Switch", "Patch",
           "ModuleParam", "check_module_param", "module_param_since", "parse_release", "stable_patches",
           "release_switches"]

#: The releases rcusim models: 2.6 (with patch levels up to 2.6.39) to NEWEST.
OLDEST = (2, 6)
NEWEST = (7, 0)

# The last minor release of each series (3.19, 4.20, 5.19, 6.19) and of 2.6's patch levels.
_LAST_MINOR = {2: 6, 3: 19, 4: 20, 5: 19, 6: 19, 7: NEWEST[1]}
_LAST_2_6_PATCH = 39

_RELEASE_RE = re.compile(r"^(\d{1,2})\.(\d{1,3})(?:\.(\d{1,3}))?$")
RELEASE_ALLOWED = 'a release "MAJOR.MINOR" written as a quoted string, e.g. "6.6", "7.0" or "2.6"'
_RANGE_ALLOWED = (f'a release from "2.6" (or "2.6.0" to "2.6.{_LAST_2_6_PATCH}") '
                  f'to "{NEWEST[0]}.{NEWEST[1]}", the releases whose RCU rcusim models')


@dataclass(frozen=True)
class Switch:
    """One change of the kernel that rcusim models: on from release `since`."""

    name: str
    since: tuple[int, ...]
    introduced_by: str
    """The commit (title, author, date) or release notes that introduced the change."""
    meaning: str
    """What is true from `since` on."""


SWITCHES = (
    Switch("cfs", (2, 6, 23),
           '"CFS" (Ingo Molnar, 2007), merged for v2.6.23',
           "SCHED_OTHER entities share a CPU by weighted virtual runtime (nice weights, wake-up "
           "placement and preemption by granularity); before, rcusim runs them in one-jiffy round "
           "robin, its stand-in for the O(1) scheduler"),
    Switch("tree_rcu", (2, 6, 29),
           '"rcu: Hierarchical RCU" (Paul E. McKenney, 2008), merged for v2.6.29',
           "Tree RCU's callback lists; before it, classic RCU's rcu_do_batch() and the 2004 "
           "classic-RCU patches' parameters (rcupdate.rcumaxbatch, rcuplugticks, bhlimit)"),
    Switch("kfree_rcu", (3, 0),
           '"rcu: introduce kfree_rcu()" (Lai Jiangshan, Manfred Spraul, Paul E. McKenney, 2011, 9ab1544eb419), '
           "v3.0; release not checked against the tag (batman-adv's compat.h defines its own kfree_rcu() for "
           "kernels before 3.0.0)",
           "kfree_rcu() exists: call_rcu() with the offset of the object's rcu_head for a callback, and "
           "rcu_do_batch() (__rcu_reclaim()) kfree()s the object; before, there is no kfree_rcu()"),
    Switch("gp_kthread", (3, 7),
           '"rcu: Move RCU grace-period initialization into a kthread" (McKenney, 2012), v3.7',
           "grace periods are driven by the rcu_gp_kthread, which tasks can delay; before, "
           "softirq drove them and no task could"),
    Switch("rcu_nocb_cpu", (3, 8),
           '"rcu: Add callback-free CPUs" (Paul E. McKenney, 2012, 3fbfbf7a3b66), on his nocb.2012.10.23a '
           "branch after v3.7-rc1, merged for v3.8",
           "CONFIG_RCU_NOCB_CPU exists: callbacks of the rcu_nocbs= CPUs are offloaded to rcuo kthreads; "
           "before, there is no callback offloading"),
    Switch("softirq_time_limit", (3, 9),
           '"softirq: reduce latencies" (Eric Dumazet, Jan 2013), v3.9',
           "__do_softirq() restarts until MAX_SOFTIRQ_TIME (2 ms) or need_resched(); before, "
           "only a count of MAX_SOFTIRQ_RESTART passes"),
    Switch("exp_funnel_wait_queues", (4, 6),
           '"rcu: Enforce expedited-GP fairness via funnel wait queue" (McKenney, 2016); '
           "release not checked against the tag",
           "expedited callers funnel through rcu_node wait queues and one exp_mutex; before, "
           "through a funnel of per-rcu_node mutexes"),
    Switch("timer_wheel_rounds_up", (4, 8),
           '"timers: Switch to a non-cascading wheel" (Thomas Gleixner, Jul 2016), v4.8',
           "a timer-wheel timer runs at the tick after its bucket: calc_index() rounds the expiry up "
           "one unit of its level (1 jiffy under 63 jiffies, 8**n jiffies at level n), so "
           "schedule_timeout(j) sleeps j to j+1 jiffies; before, the tick that reached the expiry ran it"),
    Switch("exp_gp_workqueue", (4, 9),
           '"rcu: Drive expedited grace periods from workqueue" (McKenney, 2016); '
           "release not checked against the tag",
           "a workqueue (later a kthread worker) drives the expedited GP; before, the caller did"),
    Switch("ksoftirqd_does_its_job", (4, 10),
           '"softirq: Let ksoftirqd do its job" (Eric Dumazet, Aug 2016); '
           "release not checked against the tag",
           "irq exit leaves pending softirqs to ksoftirqd once it is awake; before, irq exit ran them"),
    Switch("mutex_handoff", (4, 10),
           '"locking/mutex: Add lock handoff to avoid starvation" (Peter Zijlstra, Aug 2016, 9d659ae14b54); '
           "release not checked against the tag",
           "a mutex's first waiter that wakes to find it taken sets MUTEX_FLAG_HANDOFF, and the taker's "
           "mutex_unlock() hands it the mutex: a newcomer steals a freed mutex from a woken waiter at most "
           "once; before, any number of times"),
    Switch("rcuo_cond_resched", (4, 15),
           "the earliest release read to have it: rcu_nocb_kthread()'s loop calls cond_resched_rcu_qs() "
           "after each callback in the tree a posting of 19 Dec 2017 patches (Matthew Wilcox, 'Re: [PATCH] "
           "kfree_rcu() should use the new kfree_bulk() interface for freeing rcu structures'), and 6.12.117's "
           "rcu_do_batch() calls cond_resched_tasks_rcu_qs() in its rcuc/rcuoc branch; a 3.10-era loop has "
           "none; the release between is not read",
           "an rcuop kthread reaches cond_resched() after each callback it invokes: without "
           "CONFIG_PREEMPTION a need_resched set meanwhile (a wake-up's preemption, its slice's end, an "
           "urgent QS) switches it out there, a quiescent state; before, it ran its whole batch"),
    Switch("exp_par_init", (4, 17),
           '"rcu: Parallelize expedited grace-period initialization" (McKenney, 2017); '
           "release not checked against the tag",
           "each leaf rcu_node selects its CPUs and sends its IPIs in parallel"),
    Switch("menu_keeps_tick", (4, 17),
           '"cpuidle: Return nohz hint from cpuidle_select()" and "sched: idle: Select idle state '
           'before stopping the tick" (Rafael J. Wysocki, Apr 2018), the idle-loop rework of v4.17; '
           "release not checked against the tag",
           "the menu governor decides whether an idle CPU stops its tick: not when the predicted idle "
           "time is shorter than a tick or the chosen state polls; before, the tick stopped whenever "
           "rcu_needs_cpu() and the timers allowed, ahead of the governor"),
    Switch("softirq_qs", (4, 20),
           '"rcu: Apply RCU-bh QSes to RCU-sched and RCU-preempt when safe" (Paul E. McKenney, 2018, '
           "d28139c4e967), the flavour consolidation of v4.20; release not checked against the tag",
           "ksoftirqd passes a quiescent state after each pass of its softirq loop (rcu_softirq_qs() in "
           "__do_softirq(), later handle_softirqs()); before, ksoftirqd passes one only when it "
           "schedules"),
    Switch("kfree_rcu_batching", (5, 6),
           '"rcu: Add basic support for kfree_rcu() batching" (Byungchul Park, Joel Fernandes, a35d16905efc) and '
           '"rcu: Add multiple in-flight batches of kfree_rcu() work" (Fernandes, 0392bebebf26), tip core/rcu of '
           "Jan 2020, v5.6; read in v5.6.4, absent from v5.5-rc5",
           "kfree_rcu() puts the object on its CPU's krcp->head list; the monitor, KFREE_DRAIN_JIFFIES after "
           "the first call, moves the list to one of two krw_arr[] batches, and after queue_rcu_work()'s GP "
           "kfree_rcu_work kfree()s each object; before, kfree_rcu() is one call_rcu() per object"),
    Switch("kfree_bulk", (5, 7),
           '"rcu: Support kfree_bulk() interface in kfree_rcu()" (Uladzislau Rezki, Jan 2020, 34c881745549), '
           "RCU pull for v5.7; read in v5.7.14",
           "kfree_rcu() stores pointers in per-CPU bulk pages (KFREE_BULK_MAX_ENTR = 509: nr_records, next "
           "and a debug pointer share the page), allocated with GFP_NOWAIT under krcp->lock, one freed page "
           "kept (krcp->bcached); kfree_rcu_work kfree_bulk()s each page"),
    Switch("kfree_test_footprint", (5, 7),
           '"rcuperf: Measure memory footprint during kfree_rcu() test" (Joel Fernandes, Dec 2019), tip '
           "core/rcu, v5.7; read in v5.7.14's rcuperf.c, absent from v5.6.4's",
           "the kfree test samples si_mem_available() and its line ends with \"memory footprint: NMB\"; "
           "before, it ends with the batches"),
    Switch("kvfree_page_cache", (5, 9),
           '"rcu/tree: cache specified number of objects" (Rezki, 53c72b590b3a) and "rcu/tree: Simplify '
           'KFREE_BULK_MAX_ENTR macro" (Rezki), RCU pull for v5.9; read in v5.9.1; v5.10 has the same code '
           "(the v5.11 change below was posted after v5.10-rc1 and reached 5.10 in its 5.10.4 stable release)",
           "each CPU caches up to rcutree.rcu_min_cached_objs (2) freed bulk pages, filled at boot; a page's "
           "header is {nr_records, next}: 16 B, 510 pointers"),
    Switch("trace_signed_gp_seq", (5, 10),
           '"rcu/trace: Print negative GP numbers correctly" (Joel Fernandes, Jun 2020), in the "RCU '
           'changes for v5.10" pull (core/rcu)',
           "the rcu_grace_period and rcu_exp_grace_period tracepoints print gp_seq signed (%ld): "
           "-1199; before, unsigned (%lu): 18446744073709550417"),
    Switch("rcuscale_name", (5, 10),
           '"rcuperf: Change rcuperf to rcuscale" (McKenney, Aug 2020), v5.10; read in v5.10.7 '
           "(kernel/rcu/rcuscale.c) and v5.9.1 (kernel/rcu/rcuperf.c)",
           "the test module is rcuscale (rcuscale.* boot parameters, kvm.sh --torture rcuscale); before, "
           "rcuperf"),
    Switch("kvfree_page_cache_work", (5, 11),
           '"rcu/tree: Defer kvfree_rcu() allocation to a clean context" (Rezki, 56292e8609e3), rcu/next '
           "fixes.2020.11.19b, v5.11, also in the 5.10.4 stable release; read in v5.11 and v5.10.7",
           "kvfree_call_rcu() allocates no page: with the cache empty, a two-argument call puts the object on "
           "krcp->head and starts page_cache_work (an hrtimer, then system_highpri_wq), which refills the "
           "cache up to rcutree.rcu_min_cached_objs, now 5; nothing is cached at boot"),
    Switch("preempt_dynamic", (5, 12),
           '"sched: Add PREEMPT_DYNAMIC" and the preempt= boot parameter (Michal Hocko, Peter Zijlstra, '
           "Frederic Weisbecker, Jan 2021), v5.12; release not checked against the tag",
           "CONFIG_PREEMPT_DYNAMIC exists: a preemptible build whose preemption model preempt= "
           "chooses at boot"),
    Switch("pcp_free_factor", (5, 14),
           '"mm/page_alloc: scale the number of pages that are batch freed" and "mm/page_alloc: disassociate '
           'the pcp->high from pcp->batch" (Mel Gorman, 2021, the series "Calculate pcp->high based on zone '
           'sizes and active CPUs"), for v5.14; release not checked against the tag',
           "a per-CPU page list's high mark is the zone's low watermark split over its CPUs (at least 4 "
           "batches), and frees in a row give back batch << free_factor pages at a time; before, high is "
           "6 batches and each give-back a batch"),
    Switch("newidle_lb_cost_only", (5, 16),
           '"sched/fair: Remove sysctl_sched_migration_cost condition" (Vincent Guittot, Oct 2021, '
           "c5b0a7eefc70), tip sched/core for v5.16; read in 6.12.117's kernel/sched/fair.c "
           "(sched_balance_newidle())",
           "a CPU going idle skips newidle balancing only when its rq->avg_idle is below the domain's "
           "max_newidle_lb_cost (or no CPU is overloaded); before, also when it is below "
           "sysctl_sched_migration_cost (0.5 ms)"),
    Switch("kfree_drain_5hz", (6, 1),
           '"rcu/kvfree: Update KFREE_DRAIN_JIFFIES interval" (Uladzislau Rezki, Aug 2022), v6.1; read in '
           "v6.1-rc7 and v6.0.1",
           "KFREE_DRAIN_JIFFIES is 5*HZ, with a 1-jiffy drain when a CPU's batch is full "
           "(schedule_delayed_monitor_work()); before, HZ/50"),
    Switch("rcu_lazy", (6, 2),
           '"rcu: Make call_rcu() lazy to save power" (Joel Fernandes, Oct 2022), RCU pull request for '
           "v6.2; release not checked against the tag",
           "CONFIG_RCU_LAZY exists: call_rcu() on an offloaded CPU queues lazy callbacks, which wait "
           "in the bypass list for up to jiffies_lazy_flush (10 s)"),
    Switch("barrier_wakes_rcuog", (6, 2),
           '"rcu: Wake up nocb gp thread on rcu_barrier_entrain()" (Frederic Weisbecker, Oct 2022), in the '
           "lazy RCU series of the RCU pull request for v6.2; release not checked against the tag",
           "rcu_barrier_entrain() wakes an offloaded CPU's rcuog when flushing the bypass gave its empty "
           "->cblist pending callbacks; before, they waited for rcuog's next pass"),
    Switch("pcp_high_auto", (6, 7),
           '"mm, page_alloc: scale the number of pages that are batch allocated", "mm: restrict the pcp batch '
           'scale factor to avoid too long latency" and "mm, pcp: tune PCP high automatically" (Huang Ying, '
           "Oct 2023), for v6.7; release not checked against the tag; read in 6.12's mm/page_alloc.c",
           "a per-CPU page list's high mark moves between high_min (the low watermark's share) and high_max "
           "(an eighth of the zone's): refills in a row take batch << alloc_factor pages and raise it, frees in "
           "a row raise it to hold them, vmstat_update() lowers it by an eighth a second; before, it is fixed "
           "and a refill takes one batch"),
    Switch("rcu_lazy_boot_param", (6, 9),
           '"rcu: Provide a boot time parameter to control lazy RCU" (Qais Yousef, Dec 2023, '
           "<20231203011252.233748-1-qyousef@layalina.io>); release not checked against the tag",
           "CONFIG_RCU_LAZY_DEFAULT_OFF and rcutree.enable_rcu_lazy exist"),
    Switch("kvfree_bulk_list_head", (6, 2),
           '"rcu/kvfree: Switch to a generic linked list API" (Rezki, 2022); release not checked against the tag',
           "a bulk page's header is {list_head, nr_records}: 24 B, 509 pointers; before, 16 B, 510"),
    Switch("kvfree_polled", (6, 3),
           '"rcu/kvfree: Use a polled API to speedup a reclaim process" (Rezki, Nov 2022), '
           "RCU pull request for v6.3",
           "each bulk page keeps a polled GP snapshot (+8 B header, 508 pointers) and is reclaimed "
           "as soon as its own GP has passed"),
    Switch("kvfree_drain_ready", (6, 3),
           '"[PATCH 2/2] rcu/kvfree: Split ready for reclaim objects from a batch" (Uladzislau Rezki, '
           "14 Dec 2022, <20221214120630.379527-2-urezki@gmail.com>), on top of the polled patch and merged "
           "with it for v6.3; release not checked against the tag; read in 6.12's tree.c",
           "the monitor frees the pages (and the rcu_head list) whose GP snapshot has passed "
           "(kvfree_rcu_drain_ready()) and queues the rest with queue_rcu_work(), so kfree_rcu_work() "
           "frees a whole batch after its own GP; before, the polled patch as posted: queue_work(), and "
           "the worker polls each page and calls synchronize_rcu() for the rest"),
    Switch("kvfree_gp_snap_full", (6, 5),
           '"[PATCH rcu 2/8] rcu/kvfree: Add debug to check grace periods" (Paul E. McKenney, 10 May 2023, '
           "<20230510170242.2187714-2-paulmck@kernel.org>), branch kvfree.2023.05.10a, RCU pull for v6.5; "
           "release not checked against the tag; read in 6.12's tree.c",
           "a bulk page's gp_snap is a struct rcu_gp_oldstate (the normal and the expedited sequence): "
           "a 40 B header, 507 pointers; before, an unsigned long: 508"),
    Switch("eevdf", (6, 6),
           '"sched/fair: Implement an EEVDF-like scheduling policy" (Peter Zijlstra, 2023), merged for '
           "v6.6",
           "the fair class picks the eligible entity with the earliest virtual deadline; wakees are "
           "placed by their lag and preempt only by winning that pick; before, CFS"),
    Switch("timer_pull", (6, 9),
           '"timers: Implement the hierarchical pull model" (Anna-Maria Behnsen, Feb 2024), '
           '"[GIT PULL] timers/core for v6.9"; release not checked against the tag',
           "a NO_HZ-idle CPU's non-pinned timers (schedule_timeout() among them) are expired by an "
           "active CPU of its timer-migration group, so the idle CPU is not woken and runs no tick "
           "handler; before, its own interrupt expired them"),
    Switch("sr_normal_wake_from_gp", (6, 9),
           '"rcu: Support direct wake-up of synchronize_rcu() users" (Uladzislau Rezki, 2024, '
           "05a10b921000), with \"rcu: Reduce synchronize_rcu() latency\" in the RCU pull for v6.9; "
           "release not checked against the tag",
           "rcutree.rcu_normal_wake_from_gp=1 lets the GP kthread (and a worker it hands the rest "
           "to) wake synchronize_rcu() callers at the GP's end; before, there is no such parameter "
           "and every caller waits for its wakeme_after_rcu() callback"),
    Switch("sr_normal_sync_wq", (6, 10),
           "sync_wq for the synchronize_rcu() wake-from-GP cleanup work (read in v6.12; the change "
           "release is not checked)",
           "rcu_sr_normal_gp_cleanup_work runs on sync_wq, an ordinary workqueue; before (v6.9), on "
           "system_highpri_wq (nice -20)"),
    Switch("rcuscale_async_per_task", (6, 12),
           '"rcuscale: Make rcu_scale_writer() tolerate repeated GFP_KERNEL failure", "rcuscale: Use special '
           'allocator for rcu_scale_writer()" and "rcuscale: Count outstanding callbacks per-task rather than '
           'per-CPU" (McKenney, Aug 2024), tag rcu.release.v6.12 ("[GIT PULL] RCU changes for v6.12")',
           "rcuscale's gp_async writer takes its rcu_head from a pool of gp_async_max per task, counts its "
           "callbacks in flight per task, and an iteration that calls rcu_barrier() instead is not a "
           "measurement; before, it kmalloc()s each rcu_head, counts per CPU (the callback decrements the "
           "count of the CPU that invokes it) and retries the call after rcu_barrier(), in the same measurement"),
    Switch("kvfree_unbound_wq", (6, 12),
           '"rcu: Use system_unbound_wq to avoid disturbing isolated CPUs" (Waiman Long, 23 Jul 2024, '
           "<20240723181025.187413-1-longman@redhat.com>), for v6.12; release not checked against the tag; "
           "6.12.117 has it as rcu_reclaim_wq, WQ_UNBOUND ('mm/slab/kvfree_rcu: Switch to WQ_MEM_RECLAIM wq', "
           "in stable 6.12 from Mar 2025)",
           "kvfree_rcu()'s monitor and kfree_rcu_work run on an unbound workqueue: their kworkers are placed "
           "by select_task_rq_fair() at each wake-up; page_cache_work stays on system_highpri_wq; before, "
           "all on system_wq, bound to the krcp's CPU"),
    Switch("eevdf_delay_dequeue", (6, 12),
           '"sched/fair: Implement delayed dequeue" (Peter Zijlstra, 2024), with DELAY_ZERO, in "[GIT PULL] '
           'sched/core for v6.12"; read in 6.12\'s kernel/sched/features.h (both true) and fair.c',
           "a fair entity that sleeps while not eligible stays queued (sched_delayed) and keeps competing: "
           "picked, it is dequeued then and its positive lag dropped; woken first, it is runnable again "
           "where it is, without select_task_rq(), re-placed with zero lag if its lag turned positive"),
    Switch("eevdf_rel_deadline", (6, 12),
           '"sched/fair: Avoid re-setting virtual deadline on \'migrations\'" (Peter Zijlstra, 2024, '
           "82e9d0456e06), in the same series as delayed dequeue for v6.12; read in 6.12.117's "
           "kernel/sched/features.h (PLACE_REL_DEADLINE true) and fair.c (dequeue_entity(), place_entity())",
           "a fair entity dequeued without sleeping (load balancing moving it to another CPU) keeps its "
           "virtual deadline relative to its vruntime and gets it back where it is queued again, rather "
           "than a new one a whole slice away"),
    Switch("eevdf_preempt_short", (6, 12),
           '"sched/eevdf: Allow shorter slices to wakeup-preempt" (Peter Zijlstra, 2024, 85e511df3cec), '
           "in the same series as delayed dequeue for v6.12; read in 6.12.117's kernel/sched/features.h "
           "(PREEMPT_SHORT true) and fair.c (update_curr(), did_preempt_short())",
           "update_curr() reschedules the running fair entity, with another queued, when it is past the "
           "request it was picked for (its RUN_TO_PARITY mark gone with a deadline renewed while it ran "
           "alone) and no longer eligible, at whichever update finds it so (a tick, an enqueue, a "
           "wake-up's check); before, only a renewed deadline did"),
    Switch("base_slice_700us", (6, 15),
           '"sched: Reduce the default slice to avoid tasks getting an extra tick" (zihan zhou, Feb 2025, '
           "2ae891b82695), tip sched/core of Mar 2025, v6.15; release not checked against the tag",
           "sysctl_sched_base_slice is 0.70 ms times 1 + ilog2(min(CPUs, 8)) (normalized_sysctl_sched_base_slice): "
           "1.40 ms on 2 CPUs, 2.80 ms on 8 and more, so that a slice ends on the tick before its fourth "
           "rather than one tick late; before, 0.75 ms times the same factor"),
    Switch("nocb_lazy_defer_leader", (6, 17),
           '"rcu: Fix delayed execution of hurry callbacks" (Tze-nan Wu, 2025, 463d46044f04), in '
           "rcu.merge.18.07.2025 for v6.17; release not checked against the tag",
           "wake_nocb_gp_defer() asks the group leader's rdp whether a wake-up is deferred already "
           "before it arms the lazy timer; before, the enqueuing CPU's, so the first lazy callback of "
           "any other CPU of the group re-armed the group's timer jiffies_lazy_flush away"),
    Switch("wake_from_gp_auto", (6, 17),
           '"rcu: Enable rcu_normal_wake_from_gp on small systems" (Rezki, Jun 2025, a7f6af1322ad), '
           '"RCU changes for v6.17"',
           "rcutree.rcu_normal_wake_from_gp defaults to auto: on for at most 16 possible CPUs "
           "(WAKE_FROM_GP_CPU_THRESHOLD)"),
    Switch("newidle_proportional", (6, 19),
           '"sched/fair: Proportional newidle balance" (Peter Zijlstra, 2025, 33cf66d88306; posted 7 Nov '
           "2025, <20251107160645.929564468@infradead.org>), for v6.19; read in 6.12.117's "
           "kernel/sched/fair.c, features.h (NI_RANDOM true) and topology.c",
           "newidle balancing tries each domain with the probability of its recent success (NI_RANDOM: "
           "a 1,024-sided die against sd->newidle_ratio, the successes of the last ~1,024 tries, each "
           "weighted by the inverse of its chance; 512 at boot), where it tried every domain before"),
    Switch("gp_kthread_cpu_qs_early", (7, 0),
           '"rcu: Reduce synchronize_rcu() latency by reporting GP kthread\'s CPU QS early" (Joel '
           "Fernandes, Jan 2026, bc3705e20988), merged with tag rcu.release.v7.0 (kernel.org push logs "
           "of 10 Feb 2026; the pull request itself not read)",
           "rcu_gp_init() ends with rcu_qs() and rcu_report_qs_rdp() for its own CPU, which the first "
           "FQS scan can never see idle (it is running the scan)"),
    Switch("idle_stop_tick_after_tick", (7, 0),
           '"sched: idle: Consolidate the handling of two special cases" (Rafael J. Wysocki, 2026, '
           "f4c31b07b136, fixing ed98c3491998 of v4.17), in the v7.0 cycle; release not checked against the "
           "tag. Backported to the stable series: 6.12.78 (\"[PATCH 6.12 403/460]\", 23 Mar 2026), 6.6, 6.1 "
           "and 5.10",
           "on a CPU without a cpuidle driver (or with a single idle state), do_idle() stops the tick only "
           "if the tick woke the loop's previous iteration (tick_nohz_idle_got_tick()): a CPU that goes "
           "idle keeps its tick to the next jiffy and stops it there; before, without a driver the tick "
           "stopped as the CPU went idle"),
)


@dataclass(frozen=True)
class Patch:
    """A change rcusim can backport onto an earlier release (``kernel.patches``)."""

    name: str
    switch: str
    """The switch of :data:`SWITCHES` that the change is; releases from its `since` have it."""
    needs: str
    """The switch whose code the change modifies: releases before it cannot take it."""
    posted: str
    """Subject, author, date and Message-Id of the posting."""
    stable: tuple[tuple[tuple[int, int], int], ...] = ()
    """The stable series that carry it, each with the first sublevel: ((6, 12), 78) is 6.12.78."""


PATCHES = (
    Patch("rcu-sr-normal-wake-from-gp", "sr_normal_wake_from_gp", "gp_kthread",
          '"[PATCH v4 4/4] rcu: Support direct wake-up of synchronize_rcu() users" (Uladzislau Rezki, '
          "4 Jan 2024, <20240104162510.72773-5-urezki@gmail.com>), the series seed 000 measured on 6.6 "
          "and, on phones, 6.1; rcusim runs the form merged for v6.9"),
    Patch("rcu-kvfree-polled", "kvfree_polled", "kvfree_bulk_list_head",
          '"[PATCH 4/4] rcu/kvfree: Use a polled API to speedup a reclaim process" (Uladzislau Rezki, '
          "Nov 2022), the form seed 001 measured: without the later split into "
          "kvfree_rcu_drain_ready() (kvfree_drain_ready), which v6.3 merged with it"),
    Patch("rcu-gp-kthread-cpu-qs-early", "gp_kthread_cpu_qs_early", "gp_kthread",
          '"[PATCH -next 6/8] rcu: Reduce synchronize_rcu() latency by reporting GP kthread\'s CPU QS '
          'early" (Joel Fernandes, 1 Jan 2026, <20260101163417.1065705-7-joelagnelf@nvidia.com>)'),
    Patch("sched-base-slice-700us", "base_slice_700us", "eevdf",
          '"[PATCH V3 1/2] sched: Reduce the default slice to avoid tasks getting an extra tick" (zihan zhou, '
          "8 Feb 2025, <20250208075322.13139-1-15645113830zzh@gmail.com>); in 6.12 from 6.12.31 (\"[PATCH 6.12 "
          '378/626]", stable review of 27 May 2025, <20250527162500.375899078@linuxfoundation.org>; sublevel not '
          "checked against the tag; Debian's 6.12.117 has it: sysctl_sched_base_slice = 700000ULL in "
          "kernel/sched/fair.c)",
          stable=(((6, 12), 31),)),
    Patch("sched-newidle-proportional", "newidle_proportional", "newidle_lb_cost_only",
          '"[PATCH 6.12 ...] sched/fair: Proportional newidle balance" with "Small cleanup to '
          'sched_balance_newidle()" and "Small cleanup to update_newidle_cost()" (Peter Zijlstra, '
          "backported by Ajay Kaher, 3 Dec 2025); in 6.12 from 6.12.65 (\"Linux 6.12.65-rc1\" lists "
          "them), 6.18 from 6.18.5; Debian's 6.12.117 has it (SCHED_FEAT(NI_RANDOM, true))",
          stable=(((6, 12), 65), ((6, 18), 5))),
    Patch("sched-idle-consolidate-special-cases", "idle_stop_tick_after_tick", "menu_keeps_tick",
          '"sched: idle: Consolidate the handling of two special cases" (Rafael J. Wysocki, 2026, '
          "<4741364.LvFx2qVVIh@rafael.j.wysocki>); in 6.12 from 6.12.78 (Debian's 6.12.117 has it: "
          "cpuidle_idle_call(got_tick) in kernel/sched/idle.c)",
          stable=(((6, 12), 78),)),
)
"""Backportable changes by name: ``kernel.patches`` turns their switch on for an earlier release."""


@dataclass(frozen=True)
class ModuleParam:
    """A module parameter that exists from release `since` on (refused on earlier releases)."""

    name: str
    since: tuple[int, ...]
    introduced_by: str
    patch: str | None = None
    """The backportable change (:data:`PATCHES`) that brings it to an earlier release."""


_KFREE_TEST = ('"rcuperf: Add kfree_rcu() performance Tests" (Joel Fernandes, Aug 2019, e6e78b004fa7), tip '
               "core/rcu of Jan 2020, v5.6; read in v5.6.4's rcuperf.c, absent from v5.5-rc5's")
_KFREE_FORMS = ('"rcuscale: Add kfree_rcu() single-argument scale test" (Uladzislau Rezki, Jan 2021, '
                "686fe1bf6bcc), rcu/next of 9 Mar 2021 (after v5.12-rc2), v5.13; absent from v5.12.9, read in "
                "v5.14-rc5")

_GP_ASYNC = ('"rcuperf: Add ability to performance-test call_rcu() and friends" (McKenney, Apr 2017, '
             "881ed593a323); release not checked against the tag")

MODULE_PARAMS = (
    ModuleParam("rcuscale.gp_async", (4, 13), _GP_ASYNC),
    ModuleParam("rcuscale.gp_async_max", (4, 13), _GP_ASYNC),
    ModuleParam("rcuscale.kfree_rcu_test", (5, 6), _KFREE_TEST),
    ModuleParam("rcuscale.kfree_nthreads", (5, 6), _KFREE_TEST),
    ModuleParam("rcuscale.kfree_alloc_num", (5, 6), _KFREE_TEST),
    ModuleParam("rcuscale.kfree_loops", (5, 6), _KFREE_TEST),
    ModuleParam("rcuscale.kfree_mult", (5, 8),
                '"rcuperf: Add ability to increase object allocation size" (Joel Fernandes, Mar 2020), tip '
                "core/rcu of Apr 2020, v5.8; read in v5.8.1's rcuperf.c, absent from v5.7.14's"),
    ModuleParam("rcuscale.kfree_rcu_test_single", (5, 13), _KFREE_FORMS),
    ModuleParam("rcuscale.kfree_rcu_test_double", (5, 13), _KFREE_FORMS),
    ModuleParam("rcuscale.kfree_by_call_rcu", (6, 2),
                '"rcuscale: Add laziness and kfree tests" (Joel Fernandes, posted as [PATCH v2 rcu 07/16] on 21 '
                "Nov 2022 with the lazy call_rcu() series), v6.2; release not checked against the tag"),
    ModuleParam("rcutree.rcu_min_cached_objs", (5, 9),
                '"rcu/tree: cache specified number of objects" (Uladzislau Rezki, 53c72b590b3a), RCU pull for '
                "v5.9; read in v5.9.1"),
    ModuleParam("rcuscale.writer_holdoff_jiffies", (6, 6),
                '"rcuscale: Permit blocking delays between writers" (McKenney, Jul 2023), "RCU changes for '
                'v6.6" pull; release not checked against the tag'),
    ModuleParam("rcuscale.minruntime", (6, 6),
                '"rcuscale: Add minruntime module parameter" (McKenney, Jul 2023), "RCU changes for v6.6" '
                "pull; release not checked against the tag"),
    ModuleParam("rcutree.rcu_normal_wake_from_gp", (6, 9),
                '"rcu: Support direct wake-up of synchronize_rcu() users" (Rezki, 2024, 05a10b921000), v6.9',
                patch="rcu-sr-normal-wake-from-gp"),
    ModuleParam("rcutree.enable_rcu_lazy", (6, 9),
                '"rcu: Provide a boot time parameter to control lazy RCU" (Qais Yousef, Dec 2023, '
                "<20231203011252.233748-1-qyousef@layalina.io>); release not checked against the tag"),
)
"""Module parameters added after the oldest modelled release."""

_MODULE_PARAM = {param.name: param for param in MODULE_PARAMS}


#: trace_event='s tracepoints are priced where this release's code records them (rcusim.input.bootargs.TRACEPOINTS).
TRACEPOINT_SITES = (6, 12)


def module_param_since(name: str, release: str, patches=()) -> str | None:
    """The release that added module parameter `name` ("5.8"), if `release` is older and none
    of `patches` brings it; else None."""
    param = _MODULE_PARAM.get(name)
    if param is not None and parse_release(release) < param.since and param.patch not in patches:
        return ".".join(map(str, param.since))
    return None


def check_module_param(name: str, release: str, patches=(), written: str | None = None) -> None:
    """Raise :class:`ScenarioError` if module parameter `name` is newer than `release` and none
    of `patches` brings it; the message names it as `written` (e.g. rcuperf.kfree_mult for
    rcuscale.kfree_mult)."""
    since = module_param_since(name, release, patches)
    if since is not None:
        written = written or name
        patch = _MODULE_PARAM[name].patch
        backport = f", or kernel.patches: [{patch}]" if patch else ""
        raise ScenarioError(f"{written}: not a parameter of release {release} (added in v{since})",
                            allowed=f"no {written}, or release {since} or later{backport}")


@dataclass(frozen=True)
class ReleaseSwitches:
    """The value of every switch of :data:`SWITCHES` for one release."""

    cfs: bool
    tree_rcu: bool
    kfree_rcu: bool
    gp_kthread: bool
    rcu_nocb_cpu: bool
    softirq_time_limit: bool
    exp_funnel_wait_queues: bool
    timer_wheel_rounds_up: bool
    exp_gp_workqueue: bool
    ksoftirqd_does_its_job: bool
    mutex_handoff: bool
    rcuo_cond_resched: bool
    exp_par_init: bool
    menu_keeps_tick: bool
    softirq_qs: bool
    kfree_rcu_batching: bool
    kfree_bulk: bool
    kfree_test_footprint: bool
    kvfree_page_cache: bool
    trace_signed_gp_seq: bool
    rcuscale_name: bool
    kvfree_page_cache_work: bool
    preempt_dynamic: bool
    pcp_free_factor: bool
    newidle_lb_cost_only: bool
    kfree_drain_5hz: bool
    rcu_lazy: bool
    barrier_wakes_rcuog: bool
    pcp_high_auto: bool
    rcu_lazy_boot_param: bool
    kvfree_bulk_list_head: bool
    kvfree_polled: bool
    kvfree_drain_ready: bool
    kvfree_gp_snap_full: bool
    eevdf: bool
    timer_pull: bool
    sr_normal_wake_from_gp: bool
    sr_normal_sync_wq: bool
    rcuscale_async_per_task: bool
    kvfree_unbound_wq: bool
    eevdf_delay_dequeue: bool
    eevdf_rel_deadline: bool
    eevdf_preempt_short: bool
    base_slice_700us: bool
    nocb_lazy_defer_leader: bool
    wake_from_gp_auto: bool
    newidle_proportional: bool
    gp_kthread_cpu_qs_early: bool
    idle_stop_tick_after_tick: bool


def stable_patches(version: str) -> tuple[str, ...]:
    """The :data:`PATCHES` a stable kernel ``"MAJOR.MINOR.SUBLEVEL"`` (e.g. "6.12.117") carries
    beyond its release: those backported to its series at or before its sublevel."""
    parts = tuple(int(x) for x in version.split("-")[0].split(".")[:3])
    series, sublevel = parts[:2], (parts[2] if len(parts) > 2 else 0)
    return tuple(patch.name for patch in PATCHES
                 if any(series == s and sublevel >= first for s, first in patch.stable))


def release_switches(release: tuple[int, ...]) -> ReleaseSwitches:
    """The switches of `release` (a tuple from :func:`parse_release`)."""
    return ReleaseSwitches(**{s.name: release >= s.since for s in SWITCHES})


def parse_release(text) -> tuple[int, ...]:
    """Parse a kernel release that rcusim models.

    Parameters
    ----------
    text : str
        ``"MAJOR.MINOR"`` or ``"MAJOR.MINOR.PATCH"``, e.g. ``"6.6"``, ``"6.17"``, ``"2.6.4"``.

    Returns
    -------
    tuple of int
        ``(major, minor)`` or ``(major, minor, patch)``; tuples compare in
        release order.

    Raises
    ------
    ScenarioError
        If `text` is not a release string, or names a release outside
        OLDEST..NEWEST or one that never existed (e.g. "3.25"). A number is
        refused because YAML reads ``6.10`` as the number 6.1.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        raise ScenarioError(f"{text!r} is a number, not a release string "
                            "(YAML reads 6.10 as the number 6.1)", allowed=RELEASE_ALLOWED)
    m = _RELEASE_RE.match(text.strip()) if isinstance(text, str) else None
    if m is None or int(m[1]) < 2:
        raise ScenarioError(f"{text!r} is not a kernel release", allowed=RELEASE_ALLOWED)
    release = tuple(int(part) for part in m.groups() if part is not None)
    major, minor = release[:2]
    if major not in _LAST_MINOR or minor > _LAST_MINOR[major] or (major == 2 and minor != 6):
        raise ScenarioError(f"{text.strip()!r} is not a release rcusim models", allowed=_RANGE_ALLOWED)
    if major == 2 and len(release) == 3 and release[2] > _LAST_2_6_PATCH:
        raise ScenarioError(f"{text.strip()!r} is not a release rcusim models", allowed=_RANGE_ALLOWED)
    return release

