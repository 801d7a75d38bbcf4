"""The ``workloads`` of a scenario variant, one model per ``kind``."""

from __future__ import annotations

import math
from typing import Annotated, Literal, Optional, Union

from pydantic import BaseModel, Field, field_validator, model_validator

from rcusim.errors import ScenarioError
from rcusim.input.base import MAX_CPUS, MAX_TIME_US, InputModel
from rcusim.input.cpulist import CPULIST_ALLOWED, parse_cpulist
from rcusim.input.membarrier import MembarrierLoop
from rcusim.input.profiles import TIMER_QUANTILES, TIMER_TAIL_QUANTILES, Z_P99, noise_presets

GP_ASYNC_MAX_DEFAULT = 1000
"""rcuscale's gp_async_max default: callbacks in flight at which a writer calls rcu_barrier()."""

#: The name of an unnamed rcuscale_writer's writers (the kernel's kthread name).
WRITER_NAME = "rcu_scale_writer"

# The twin's load helper (rcusim/twin/guest/rcusim_load.c), whose threads `start: barrier` models:
# once it has created them, its main thread polls with usleep(HELPER_POLL_US) until each has
# counted itself in, then sleeps ARRIVE_US before it arrives at the barrier, the last.
HELPER_POLL_US = 1000
HELPER_ARRIVE_US = 20000


class _OnCpuList(InputModel):
    """A workload whose tasks run on the CPUs of its ``cpus`` list."""

    @field_validator("cpus", mode="before", check_fields=False)
    @classmethod
    def _check_cpus(cls, value):
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # YAML reads "cpus: 3" as a number
        if isinstance(value, str):
            # Syntax only here; the range is checked against nr_cpus by check_cpus().
            if not parse_cpulist(value, MAX_CPUS):
                raise ScenarioError(f"{value!r} names no CPU", allowed=CPULIST_ALLOWED)
        return value

    def check_cpus(self, nr_cpus: int, path: tuple = ()) -> None:
        """Raise :class:`ScenarioError` unless every CPU of ``cpus`` exists."""
        try:
            parse_cpulist(self.cpus, nr_cpus)
        except ScenarioError as exc:
            raise exc.with_context(path=path + ("cpus",)) from None


def _nice_only_for_sched_normal(tasks):
    """A nice value weighs SCHED_NORMAL tasks only: refuse one on SCHED_FIFO tasks."""
    if tasks.rt and tasks.nice:
        raise ScenarioError("nice applies to SCHED_NORMAL tasks, these are SCHED_FIFO (rt: true)",
                            key="nice", allowed="0 with rt: true")
    return tasks


class SyncLoop(_OnCpuList):
    """Tasks that call synchronize_rcu() (or the expedited form) in a loop, or
    call_rcu_hurry() with rcu_barrier() as rcuscale's asynchronous writer does.

    Pinned, task ``i`` runs on the ``i``-th CPU of `cpus`, modulo the list's
    length, as ``taskset`` pins it. Unpinned, the tasks are forked by one parent on
    the first CPU of `cpus` (or on `start_cpus`) and the scheduler places and
    moves them over the CPUs of `cpus`.
    """

    kind: Literal["sync_loop"]
    """Workload kind."""
    name: Optional[str] = None
    """Name used in results; default: the kind and the workload's index."""
    tasks: Annotated[int, Field(ge=1, le=1_000_000)]
    """Number of tasks."""
    loops: Annotated[int, Field(ge=1, le=10_000_000)]
    """Calls per task."""
    primitive: Literal["synchronize_rcu", "synchronize_rcu_expedited", "call_rcu_hurry"] = "synchronize_rcu"
    """The grace-period primitive called. ``call_rcu_hurry`` is rcuscale's gp_async writer loop of
    the release: each call queues a callback (call_rcu() before v6.2, where no callback is lazy)
    unless `async_max` of the task's callbacks are in flight, when it calls rcu_barrier()
    instead; a call is measured from its start to its return."""
    async_max: Optional[Annotated[int, Field(ge=1, le=1_000_000)]] = None
    """call_rcu_hurry only: callbacks in flight at which a task calls rcu_barrier() instead, as
    rcuscale's gp_async_max (counted per task from v6.12, per CPU before); default 1000."""
    cpus: Annotated[str, Field(json_schema_extra={"allowed": CPULIST_ALLOWED})] = "all"
    """CPU list the tasks are spread over round-robin (pinned), or may run on (unpinned)."""
    rt: bool = False
    """Tasks are SCHED_FIFO instead of SCHED_NORMAL."""
    kthread: bool = False
    """Tasks are kernel threads (a module's, as rcuscale's writers), not user tasks: a pinned one
    waking a task that last ran on its CPU lets that task stack there (select_idle_sibling()'s
    is_per_cpu_kthread(current) rule), and no call ends in a system call's exit (a user task's
    does, where exit_to_user_mode() switches it out if need_resched was set meanwhile)."""
    nice: Annotated[int, Field(ge=-20, le=19)] = 0
    """Nice value of SCHED_NORMAL tasks: their weight in the fair class."""
    pinned: bool = True
    """Each task is bound to its CPU; false: the fair class places each new task
    (find_idlest_cpu()) and each wake-up (select_task_rq_fair()) over `cpus`, and
    load balancing moves queued tasks between them."""
    start_cpus: Annotated[Optional[str], Field(json_schema_extra={"allowed": CPULIST_ALLOWED})] = None
    """Unpinned tasks only: the CPUs they are created on, round-robin, as children of
    a parent bound there (taskset -c LIST) that then widen their affinity to `cpus`;
    default: forked on the first CPU of `cpus` and placed by fork balancing."""
    think_us: Annotated[float, Field(ge=0, le=MAX_TIME_US, allow_inf_nan=False)] = 0.0
    """Time a task runs between calls, in microseconds."""
    work_after: Literal["none", "kfree", "vfree"] = "kfree"
    """What each loop does after the call; "kfree" costs kfree_ns; "vfree" vfree()s a page
    vmalloc()ed before the call, as lib/test_vmalloc.c's kvfree_rcu test does (the profile's
    vmalloc costs, the global vmap locks and the lazy purge)."""
    start_us: Annotated[float, Field(ge=0, le=MAX_TIME_US, allow_inf_nan=False)] = 0.0
    """When the tasks start, in microseconds of simulated time."""
    start: Literal["together", "barrier"] = "together"
    """How the tasks start: ``together``, each at `start_us`, as new tasks (``pinned: false``:
    placed by fork balancing); ``barrier``, as the threads of a user process that wait in a
    pthread barrier (rcusim's load helper in the real-kernel twin): their parent, bound to the
    first CPU of `cpus`, creates them (pinned ones are asleep in the barrier on their CPUs from
    the start; unpinned ones are cloned on the parent's CPU and widened, as the profile's
    thread_start times it), then arrives last and its futex_wake() wakes them one by one
    (try_to_wake_up(), placed by select_task_rq_fair() when unpinned)."""
    sleep_jiffies_max: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    """Before each call (after the think time), a task sleeps in schedule_timeout_idle() for a random
    1 to this many jiffies, on a timer-wheel timer (its CPU may idle meanwhile), as rcuscale's
    writer_holdoff_jiffies; 0: no sleep."""
    min_runtime_s: Optional[Annotated[float, Field(ge=0, le=MAX_TIME_US / 1e6, allow_inf_nan=False)]] = None
    """A task ends after its `loops` calls only once this many seconds have passed since its start
    (time_after(jiffies, jdone), jdone its first jiffy plus min_runtime_s * HZ: with 0, once a
    jiffy has begun since it started), calling on until then, as rcuscale's minruntime; default:
    no such condition."""
    until_all_done: bool = False
    """rcu_scale_writer()'s end: a task that has its `loops` calls (and its `min_runtime_s`) is
    done: it leaves SCHED_FIFO for SCHED_NORMAL at nice 0 (sched_set_normal()) and calls on, each
    call measured, until every task of the workload is done (alldone); it leaves after the call
    in which it finds them all done, the last one to be done at once. SCHED_FIFO tasks only."""

    @model_validator(mode="after")
    def _until_all_done_is_rcuscales(self):
        if self.until_all_done and not self.rt:
            raise ScenarioError("until_all_done is rcu_scale_writer()'s loop, whose tasks are SCHED_FIFO "
                                "until done", key="until_all_done", allowed="false, or rt: true")
        return self

    @model_validator(mode="after")
    def _nice_is_for_sched_normal(self):
        return _nice_only_for_sched_normal(self)

    @model_validator(mode="after")
    def _async_max_is_for_call_rcu_hurry(self):
        if self.async_max is not None and self.primitive != "call_rcu_hurry":
            raise ScenarioError("async_max applies to primitive call_rcu_hurry", key="async_max",
                                allowed="no async_max, or primitive: call_rcu_hurry")
        if self.primitive == "call_rcu_hurry" and self.work_after == "vfree":
            raise ScenarioError("vfree is lib/test_vmalloc.c's work around a synchronize_rcu()", key="work_after",
                                allowed="none or kfree with primitive: call_rcu_hurry")
        return self

    @model_validator(mode="after")
    def _barrier_is_a_user_process(self):
        for key, given in (("kthread", self.kthread), ("start_us", self.start_us != 0),
                           ("start_cpus", self.start_cpus is not None)):
            if self.start == "barrier" and given:
                raise ScenarioError(f"{key} applies to tasks started together; a barrier's threads are a user "
                                    "process's, created by their parent on the first CPU of `cpus` and released "
                                    "at time 0", key=key, allowed=f"no {key} with start: barrier")
        return self

    @model_validator(mode="after")
    def _unpinned_is_sched_normal(self):
        if self.rt and not self.pinned:
            raise ScenarioError("unpinned SCHED_FIFO tasks would be placed by select_task_rq_rt(), which "
                                "rcusim does not model", key="pinned", allowed="true with rt: true")
        if self.start_cpus is not None and self.pinned:
            raise ScenarioError("start_cpus applies to unpinned tasks; pinned tasks start and stay on `cpus`",
                                key="start_cpus", allowed="no start_cpus, or pinned: false")
        return self

    @field_validator("start_cpus", mode="before")
    @classmethod
    def _check_start_cpus(cls, value):
        return None if value is None else cls._check_cpus(value)

    def check_cpus(self, nr_cpus: int, path: tuple = ()) -> None:
        super().check_cpus(nr_cpus, path)
        if self.start_cpus is None:
            return
        try:
            start = parse_cpulist(self.start_cpus, nr_cpus)
        except ScenarioError as exc:
            raise exc.with_context(path=path + ("start_cpus",)) from None
        if not set(start) <= set(parse_cpulist(self.cpus, nr_cpus)):
            raise ScenarioError(f"start_cpus {self.start_cpus!r} is not within cpus {self.cpus!r}",
                                path=path + ("start_cpus",), allowed="CPUs of `cpus`")


class Readers(_OnCpuList):
    """One reader task per CPU: rcu_read_lock(); hold; rcu_read_unlock(); gap; again.

    Sections start at `rate_per_s` per CPU on average: the gap after each is
    exponential with mean 1/rate_per_s - length_us. Readers run until the
    sync_loop workloads finish; the safety checker checks every section.
    """

    kind: Literal["readers"]
    """Workload kind."""
    name: Optional[str] = None
    """Name used in results; default: the kind and the workload's index."""
    cpus: Annotated[str, Field(json_schema_extra={"allowed": CPULIST_ALLOWED})] = "all"
    """CPUs that get a reader task."""
    length_us: Annotated[float, Field(gt=0, le=MAX_TIME_US, allow_inf_nan=False)]
    """Mean length of a read-side critical section, in microseconds."""
    length_dist: Literal["fixed", "exponential"] = "exponential"
    """Distribution of section lengths."""
    rate_per_s: Annotated[float, Field(gt=0, le=1e9, allow_inf_nan=False)]
    """Sections started per second on each CPU."""
    between: Literal["sleep", "busy"] = "sleep"
    """What the reader does between sections: sleep (the CPU may go idle) or keep running in the kernel,
    calling cond_resched() once per loop, before the next section (where a CONFIG_PREEMPTION=n kernel yields)."""
    preemptible: Optional[bool] = None
    """Sections can be preempted (PREEMPT_RCU readers); default: CONFIG_PREEMPT_RCU."""
    rt: bool = False
    """Reader tasks are SCHED_FIFO instead of SCHED_NORMAL."""
    nice: Annotated[int, Field(ge=-20, le=19)] = 0
    """Nice value of SCHED_NORMAL reader tasks: their weight in the fair class."""

    @model_validator(mode="after")
    def _nice_is_for_sched_normal(self):
        return _nice_only_for_sched_normal(self)


class KfreeRcuFlood(InputModel):
    """rcuscale's kfree test (rcuscale.kfree_rcu_test=1), with rcuscale's parameter names.

    kfree_nthreads kthreads, thread ``i`` pinned to CPU ``i % nr_cpus``, each doing
    kfree_loops loops of kfree_alloc_num ``kmalloc()`` + ``kfree_rcu()`` calls. The test
    appeared in v5.6 (rcuperf); on an earlier release the workload runs v5.6's loop.
    """

    kind: Literal["kfree_rcu_flood"]
    """Workload kind."""
    name: Optional[str] = None
    """Name used in results; default: the kind and the workload's index."""
    kfree_nthreads: Annotated[int, Field(ge=-MAX_CPUS, le=MAX_CPUS)] = -1
    """Threads: -1 = one per online CPU; -k = online CPUs - k + 1, at least 1 (compute_real())."""
    kfree_alloc_num: Annotated[int, Field(ge=1, le=10_000_000)] = 8000
    """Allocations and kfree_rcu() calls per loop."""
    kfree_loops: Annotated[int, Field(ge=4, le=10_000_000, json_schema_extra={
        "allowed": "an integer from 4 to 10000000 (below 4, rcuscale's loop % (kfree_loops / 4) "
                   "divides by zero)"})] = 10
    """Loops per thread; at least 4, since rcuscale samples memory at loop % (kfree_loops / 4) == 0."""
    kfree_mult: Annotated[int, Field(ge=1, le=341)] = 1
    """Object size multiplier: kmalloc(kfree_mult * 24); at most 8 KiB, the largest kmalloc slab."""
    kfree_rcu_test_single: bool = False
    """Use the single-argument kfree_rcu(p)."""
    kfree_rcu_test_double: bool = False
    """Use the two-argument kfree_rcu(p, rh); if both flags are equal, each call picks one at random."""
    kfree_by_call_rcu: bool = False
    """call_rcu() a kfree callback instead (v6.2): lazy callbacks; without CONFIG_RCU_LAZY rcuscale falls
    back to kfree_rcu()."""
    holdoff: Annotated[int, Field(ge=0, le=86400)] = 10
    """Seconds the GP-writer test waits before starting; the kfree threads start at once."""

    def check_cpus(self, nr_cpus: int, path: tuple = ()) -> None:
        """Nothing to check: rcuscale puts thread ``i`` on CPU ``i % nr_cpus``."""


class RcuscaleWriter(InputModel):
    """rcuscale's GP-writer test (rcuscale.kfree_rcu_test=0), with rcuscale's parameter names.

    An alias: it resolves to the workloads rcuscale's kthreads are, nwriters
    rcu_scale_writer() tasks as a ``sync_loop`` and nreaders rcu_scale_reader() tasks as
    ``call_rcu_load`` workloads (``show-config`` shows them), and the ``run`` command
    prints rcuscale's summary of the writers' measurements.
    """

    kind: Literal["rcuscale_writer"]
    """Workload kind."""
    name: Optional[str] = None
    """Name used in results; default: the kind and the workload's index."""
    nwriters: Annotated[int, Field(ge=-MAX_CPUS, le=MAX_CPUS)] = -1
    """Writer kthreads, writer ``i`` SCHED_FIFO on CPU ``i % nr_cpus``: -1 = one per online CPU;
    -k = online CPUs - k + 1, at least 1 (compute_real()); 0 (the read-only test) is not modelled."""
    nreaders: Annotated[int, Field(ge=-MAX_CPUS, le=MAX_CPUS)] = -1
    """Reader kthreads, reader ``i`` at nice 19 on CPU ``i % nr_cpus``, counted as nwriters."""
    gp_exp: bool = False
    """The writers call synchronize_rcu_expedited(); "batches" counts expedited GPs."""
    gp_async: bool = False
    """The writers call call_rcu_hurry(), and rcu_barrier() once gp_async_max callbacks are in
    flight (with gp_exp too, as rcuscale goes with async)."""
    gp_async_max: Annotated[int, Field(ge=-2**31, le=2**31 - 1)] = GP_ASYNC_MAX_DEFAULT
    """Callbacks in flight per writer (per CPU before v6.12) at which it calls rcu_barrier()."""
    holdoff: Annotated[int, Field(ge=0, le=86400)] = 10
    """Seconds before the writers start."""
    minruntime: Annotated[int, Field(ge=0, le=86400)] = 0
    """A writer is done once it has 101 measurements (MIN_MEAS + 1) and this many seconds have
    passed (v6.6 and later); it measures on until every writer is done."""
    writer_holdoff: Annotated[int, Field(ge=0, le=10**9)] = 0
    """Microseconds each writer spends (udelay()) before each call."""
    writer_holdoff_jiffies: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    """Before each call a writer sleeps 1 to this many jiffies (0: none; v6.6 and later)."""

    @model_validator(mode="after")
    def _modelled(self) -> "RcuscaleWriter":
        if self.nwriters == 0:
            raise ScenarioError("no writers: the read-only test is not modelled", key="nwriters",
                                allowed="an integer >= 1, or -k for the online CPUs minus k-1")
        if self.gp_async and self.gp_async_max < 1:
            raise ScenarioError(f"{self.gp_async_max} with gp_async: rcuscale refuses it (from v6.12; before, "
                                "its writers would call rcu_barrier() forever)", key="gp_async_max",
                                allowed="an integer >= 1")
        return self

    def check_cpus(self, nr_cpus: int, path: tuple = ()) -> None:
        """Nothing to check: rcuscale puts writer and reader ``i`` on CPU ``i % nr_cpus``."""


class RtLatencyProbe(_OnCpuList):
    """A real-time task measuring its scheduling latency, like amlat.

    One SCHED_FIFO task per CPU of `cpus` sleeps until a periodic timer
    interrupt (amlat's RTC interrupt) wakes it; its scheduling latency runs
    from the interrupt until it runs. The run ends when every probe has taken
    `samples` samples.
    """

    kind: Literal["rt_latency_probe"]
    """Workload kind."""
    name: Optional[str] = None
    """Name used in results; default: the kind and the workload's index."""
    cpus: Annotated[str, Field(json_schema_extra={"allowed": CPULIST_ALLOWED})] = "0"
    """CPUs that get a probe task."""
    period_us: Annotated[float, Field(ge=10, le=1e6, allow_inf_nan=False)] = 1e6 / 1024
    """Period of the timer interrupt, in microseconds (default: an RTC at 1024 Hz)."""
    run_us: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)] = 2.0
    """CPU time the probe runs after each wake-up (reading the clock, recording), in microseconds."""
    samples: Annotated[int, Field(ge=1, le=100_000_000)]
    """Wake-ups measured per probe task."""

    @model_validator(mode="after")
    def _check_run(self) -> "RtLatencyProbe":
        if self.run_us >= self.period_us:
            raise ScenarioError(f"{self.run_us:g} us of running does not fit in a period of "
                                f"{self.period_us:g} us", key="run_us",
                                allowed=f"less than period_us ({self.period_us:g})")
        return self


class NonpreemptSection(InputModel):
    """One class of non-preemptible kernel section (spinlock held, preemption off)."""

    us: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)]
    """Length of the section, in microseconds."""
    per_op: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    """Probability that an operation ends with a section of this class."""


class CallRcuLoad(_OnCpuList):
    """Kernel-heavy SCHED_NORMAL tasks that free objects through call_rcu().

    Each task loops over operations: preemptible kernel work (exponential,
    mean `work_us`), then `call_rcu_per_op` call_rcu() calls on average, in
    groups of `burst` (objects freed together), then, with the probabilities
    of the `nonpreempt` table, one non-preemptible section, then, with
    `sleep_jiffies_max`, a sleep. The tasks never finish: another workload
    must end the run.
    """

    kind: Literal["call_rcu_load"]
    """Workload kind."""
    name: Optional[str] = None
    """Name used in results; default: the kind and the workload's index."""
    cpus: Annotated[str, Field(json_schema_extra={"allowed": CPULIST_ALLOWED})] = "all"
    """CPUs that get tasks."""
    tasks_per_cpu: Annotated[int, Field(ge=1, le=10_000)] = 1
    """Tasks on each CPU of `cpus`."""
    work_us: Annotated[float, Field(gt=0, le=MAX_TIME_US, allow_inf_nan=False)]
    """Mean preemptible kernel work per operation, in microseconds."""
    call_rcu_per_op: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)] = 0.0
    """Mean call_rcu() calls per operation."""
    burst: Annotated[int, Field(ge=1, le=1_000_000)] = 1
    """call_rcu() calls made together (objects freed in one loop)."""
    callback: Literal["kfree", "generic"] = "kfree"
    """What the callbacks cost: the profile's cb_kfree_ns or cb_generic_ns."""
    nonpreempt: list[NonpreemptSection] = []
    """Non-preemptible section classes; their per_op probabilities add up to at most 1."""
    nice: Annotated[int, Field(ge=-20, le=19)] = 0
    """Nice value of the tasks: their weight in the fair class."""
    hurry: bool = False
    """The tasks call call_rcu_hurry(), never lazy; default: call_rcu(), lazy on offloaded CPUs
    when lazy RCU is on (CONFIG_RCU_LAZY, rcutree.enable_rcu_lazy)."""
    sleep_jiffies_max: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    """After each operation a task sleeps in schedule_timeout_idle() for a random 1 to this many
    jiffies, on a timer-wheel timer (its CPU may idle meanwhile), as a sync_loop task does before
    its calls; 0: no sleep, the tasks keep their CPUs busy."""

    @model_validator(mode="after")
    def _check_sections(self) -> "CallRcuLoad":
        total = sum(row.per_op for row in self.nonpreempt)
        if total > 1 + 1e-9:
            raise ScenarioError(f"the per_op probabilities add up to {total:g}", key="nonpreempt",
                                allowed="probabilities adding up to at most 1")
        return self


class NoiseSource(InputModel):
    """One stream of noise on each CPU: events at `rate_hz`, lognormal durations."""

    rate_hz: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]
    """Events per second on each CPU (a Poisson stream)."""
    median_us: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)]
    """Median duration of one event, in microseconds."""
    p99_us: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)]
    """99th percentile of the duration, in microseconds (at least `median_us`)."""

    @model_validator(mode="after")
    def _check_p99(self) -> "NoiseSource":
        if self.p99_us < self.median_us:
            raise ScenarioError(f"{self.p99_us:g} is below median_us ({self.median_us:g})", key="p99_us",
                                allowed=f"at least median_us ({self.median_us:g})")
        return self

    @property
    def mean_us(self) -> float:
        """Mean duration of the lognormal with this median and p99."""
        sigma = math.log(self.p99_us / self.median_us) / Z_P99
        return self.median_us * math.exp(sigma * sigma / 2)


class Quantiles(InputModel):
    """A measured distribution, by its quantiles."""

    quantiles_us: Annotated[list[Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]],
                            Field(min_length=TIMER_QUANTILES, max_length=TIMER_QUANTILES)]
    """Its quantiles at levels 0 (the least), 0.001, 0.002, ..., 1 (the greatest), in
    microseconds, not decreasing; a draw falls uniformly between the two neighbours its
    level lies between (the inverse of the measured CDF)."""

    tail_us: Optional[Annotated[list[Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]],
                                Field(min_length=TIMER_TAIL_QUANTILES, max_length=TIMER_TAIL_QUANTILES)]] = None
    """The quantiles of the last interval, at levels 0.999, 0.99901, ..., 1 (from the
    second-greatest quantile to the greatest), not decreasing: a draw in that interval falls
    between two of them, where a measured tail has a few values far beyond the rest; default
    evenly spaced (the straight line between the interval's ends)."""

    @field_validator("quantiles_us", "tail_us")
    @classmethod
    def _check_order(cls, value, info):
        n = TIMER_QUANTILES if info.field_name == "quantiles_us" else TIMER_TAIL_QUANTILES
        if value is not None and any(b < a for a, b in zip(value, value[1:])):
            raise ScenarioError("the quantiles decrease", allowed=f"{n} values, each at least the one before")
        return value

    @model_validator(mode="after")
    def _check_tail_ends(self) -> "Quantiles":
        if self.tail_us is not None and (self.tail_us[0], self.tail_us[-1]) != tuple(self.quantiles_us[-2:]):
            raise ScenarioError(f"the tail runs from {self.tail_us[0]} to {self.tail_us[-1]} us, the last interval "
                                f"from {self.quantiles_us[-2]} to {self.quantiles_us[-1]} us", key="tail_us",
                                allowed="quantiles from quantiles_us's second-greatest value to its greatest")
        return self

    @property
    def mean_us(self) -> float:
        """Mean of a draw: each interval's midpoint, the last one's from its own quantiles."""
        q, tail = self.quantiles_us, self.tail_us or self.quantiles_us[-2:]
        last = sum(a + b for a, b in zip(tail, tail[1:])) / 2 / (len(tail) - 1)
        return (sum(a + b for a, b in zip(q[:-2], q[1:-1])) / 2 + last) / (len(q) - 1)


class HostStall(Quantiles):
    """Stalls of a virtual CPU by its host (its thread descheduled, or the emulator busy
    elsewhere): while the CPU runs something, at `rate_hz` a second, it runs nothing for a
    drawn time; a halted (idle) virtual CPU runs nothing anyway, and RCU sees it idle."""

    rate_hz: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]
    """Stalls per second of a running CPU (a Poisson stream)."""


class TimerDelay(InputModel):
    """How late a CPU's local timer interrupt arrives after its expiry (the tick's hrtimer,
    or the hrtimer a NO_HZ-idle CPU programmed for its next timer), by what the machine
    is doing when it expires: an emulated machine delivers it from a host thread that
    competes with the vCPUs for the host's cores."""

    all_busy: Quantiles
    """The delay while every CPU is busy."""
    some_idle: Quantiles
    """The delay while at least one CPU is idle."""


class Noise(_OnCpuList):
    """OS noise: interrupts and short kthread bursts on each CPU of `cpus`, and a delay of
    its local timer interrupts.

    A named `preset` (see ``rcusim/profiles/noise/presets.yaml``, each number with its
    source) gives the streams; `irq`, `kthread`, `timer` or `host` given here replace the
    preset's. Interrupts steal time from whatever runs and hold an idle CPU
    out of its extended quiescent state while they run; kthread work runs as a
    SCHED_OTHER kthread of the CPU; a delayed timer interrupt runs the tick and the
    timers that expired at its delivery; a host stall steals time from whatever runs and
    leaves an idle CPU alone. Noise never ends: another workload must.
    """

    kind: Literal["noise"]
    """Workload kind."""
    name: Optional[str] = None
    """Name used in results; default: the kind and the workload's index."""
    cpus: Annotated[str, Field(json_schema_extra={"allowed": CPULIST_ALLOWED})] = "all"
    """CPUs that get the noise."""
    preset: Optional[str] = None
    """A named machine's noise, from rcusim/profiles/noise/presets.yaml."""
    irq: Optional[NoiseSource] = None
    """Interrupts (timer, device) per CPU."""
    kthread: Optional[NoiseSource] = None
    """Bursts of kthread work (kworkers and the like) per CPU."""
    timer: Optional[TimerDelay] = None
    """The delay of each local timer interrupt after its expiry; none: delivered on time."""
    host: Optional[HostStall] = None
    """Stalls of each virtual CPU by its host while it runs something; none: never."""

    @field_validator("preset")
    @classmethod
    def _check_preset(cls, value):
        if value is not None and value not in noise_presets():
            raise ScenarioError(f"{value!r} is not a noise preset", allowed=", ".join(noise_presets()))
        return value

    @model_validator(mode="after")
    def _check_streams(self) -> "Noise":
        streams = self.streams()
        host = self.host_stalls()
        if (not any(src.rate_hz > 0 for src in [*streams.values(), host] if src is not None)
                and self.timer_delay() is None):
            raise ScenarioError("no noise: neither a preset nor an irq, kthread or host stream with rate_hz > 0 nor "
                                "a timer delay", key="preset",
                                allowed=", ".join(noise_presets()) + ", or irq/kthread/host streams, or timer")
        busy = sum(src.rate_hz * src.mean_us * 1e-6 for src in [*streams.values(), host] if src is not None)
        if busy >= 1:
            raise ScenarioError(f"the noise would occupy {busy:.0%} of each CPU", key="irq",
                                allowed="rates and durations whose rate_hz x mean duration add up to under 1 s/s")
        return self

    def _own_or_preset(self, key: str, model: type[InputModel]):
        """This workload's `key`, else its preset's (as a `model`), else None."""
        if getattr(self, key) is not None:
            return getattr(self, key)
        base = noise_presets()[self.preset] if self.preset is not None else {}
        return model(**base[key]) if key in base else None

    def streams(self) -> dict:
        """``{"irq": NoiseSource or None, "kthread": ...}``: this workload's, else the preset's."""
        return {k: self._own_or_preset(k, NoiseSource) for k in ("irq", "kthread")}

    def timer_delay(self) -> Optional[TimerDelay]:
        """This workload's timer delay, else the preset's, else None."""
        return self._own_or_preset("timer", TimerDelay)

    def host_stalls(self) -> Optional[HostStall]:
        """This workload's host stalls, else the preset's, else None."""
        return self._own_or_preset("host", HostStall)


Workload = Annotated[Union[SyncLoop, Readers, KfreeRcuFlood, RcuscaleWriter, MembarrierLoop, RtLatencyProbe,
                           CallRcuLoad, Noise],
                     Field(discriminator="kind")]
WORKLOAD_KINDS: dict[str, type[BaseModel]] = {"sync_loop": SyncLoop, "readers": Readers,
                                              "kfree_rcu_flood": KfreeRcuFlood,
                                              "rcuscale_writer": RcuscaleWriter,
                                              "membarrier_loop": MembarrierLoop,
                                              "rt_latency_probe": RtLatencyProbe,
                                              "call_rcu_load": CallRcuLoad, "noise": Noise}
"""Workload kinds by their ``kind`` value."""
FINITE_WORKLOADS = (SyncLoop, KfreeRcuFlood, RcuscaleWriter, MembarrierLoop, RtLatencyProbe)
"""Workloads that end; readers, call_rcu_load and noise run until these are done."""
