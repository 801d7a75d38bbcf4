"""One scenario variant as written (:class:`VariantInput`: hardware, kernel, workloads, run
limits) and as resolved for the engine (:class:`VariantSpec`, whose :class:`RcuParams` holds every
kernel tunable as a concrete number)."""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field

from rcusim.input.base import InputModel
from rcusim.input.hardware import Hardware, HardwareSpec
from rcusim.input.kernel import Kernel
from rcusim.input.releases import ReleaseSwitches
from rcusim.input.workloads import RcuscaleWriter, Workload


class Run(InputModel):
    """Limits of a run."""

    max_sim_time_s: Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False)] = 3600.0
    """The simulation stops at this simulated time if the workloads are not done."""
    duration_s: Optional[Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False)]] = None
    """For workloads that never finish alone (call_rcu_load, readers, noise): the simulated
    time the run lasts; the run is complete when it has lasted it."""
    records: Literal["all", "sample", "none"] = "all"
    """Which per-request rows the result keeps: ``all``; ``sample``, a fraction of them
    (``sample_fraction``) chosen by a hash of each request's completion number; or
    ``none``, in memory that does not grow with the calls. Kept rows beyond a chunk of
    1,048,576 stream out of the run into a temporary file in ``TMPDIR`` (25 bytes a row),
    not into memory. In every case the latency
    count, mean, least and greatest value, the log2 histogram and the time breakdown
    cover every request exactly; with fewer rows, percentiles and the latency figure come
    from a log-linear histogram, within 0.05 % of the exact value."""
    sample_fraction: Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)] = 0.01
    """Fraction of the requests whose rows ``records: sample`` keeps."""


class VariantInput(InputModel):
    """One variant as written (after merging the base and the variant's overrides)."""

    hardware: Hardware
    """The machine."""
    kernel: Kernel = Kernel()
    """The kernel."""
    workloads: Annotated[list[Workload], Field(min_length=1)]
    """What runs, at least one workload."""
    run: Run = Run()
    """Run limits."""


class RcuParams(InputModel):
    """Every kernel tunable of one variant, resolved to a concrete value.

    Computed from the Kconfig options, the command line and the CPU count as
    the kernel computes them at boot. Times are in jiffies where the kernel
    counts jiffies, and in ns where it counts ns.
    """

    release: tuple[int, ...]
    """Kernel release modelled, e.g. (6, 6)."""
    switches: ReleaseSwitches
    """The release's switches (rcusim.input.releases)."""
    hz: int
    """HZ: jiffies per second."""
    nr_cpu_ids: int
    """Number of CPU ids (hardware.nr_cpus)."""
    nr_cpus_config: int
    """CONFIG_NR_CPUS."""
    fanout: int
    """RCU_FANOUT: children per interior rcu_node."""
    fanout_leaf: int
    """CPUs per leaf rcu_node after rcutree.rcu_fanout_leaf (used only if 2..64 and large enough)."""
    fanout_exact: bool
    """rcutree.rcu_fanout_exact: exact instead of balanced fanout."""
    preempt_rcu: bool
    """CONFIG_PREEMPT_RCU: the rcu_preempt flavour (else rcu_sched)."""
    preemption: bool
    """CONFIG_PREEMPTION: a preemptible kernel."""
    rcu_boost: bool
    """CONFIG_RCU_BOOST."""
    blimit: int
    """rcutree.blimit: minimum callbacks per rcu_do_batch()."""
    qhimark: int
    """rcutree.qhimark."""
    qlowmark: int
    """rcutree.qlowmark."""
    qovld: int
    """Overload threshold per CPU: the kernel's default (rcutree.qovld is refused: overload is not modelled)."""
    rcu_divisor: int
    """rcutree.rcu_divisor, as rcu_do_batch() uses it (negative -> 7, at most 62)."""
    rcu_resched_ns: int
    """Time limit of a callback batch, ns (rcutree.rcu_resched_ns clamped to 1 ms..1 s)."""
    jiffies_till_first_fqs: int
    """Jiffies before the first force-quiescent-state scan."""
    jiffies_till_next_fqs: int
    """Jiffies between later force-quiescent-state scans."""
    jiffies_to_sched_qs: int
    """Jiffies after which RCU asks for an urgent quiescent state."""
    use_softirq: bool
    """Callbacks run in RCU_SOFTIRQ (else in rcuc kthreads)."""
    kthread_prio: int
    """SCHED_FIFO priority of RCU kthreads (0: SCHED_NORMAL)."""
    nocb_is_setup: bool
    """The NOCB machinery is on (rcu_state.nocb_is_setup), even if no CPU is offloaded."""
    nocb_cpus: tuple[int, ...]
    """Offloaded CPUs (empty unless CONFIG_RCU_NOCB_CPU)."""
    nohz_full_cpus: tuple[int, ...]
    """Adaptive-tick CPUs from nohz_full= (always offloaded)."""
    nocb_gp_stride: int
    """CPUs per rcuog group (rcu_nocb_gp_stride resolved)."""
    nocb_poll: bool
    """rcu_nocb_poll: NOCB kthreads poll every jiffy; always false (rcu_nocb_poll is refused: not modelled)."""
    nocb_cb_boost: bool
    """CONFIG_RCU_NOCB_CPU_CB_BOOST: rcuop kthreads are SCHED_FIFO."""
    exp_kthread_rt: bool
    """Expedited-GP kthread workers are SCHED_FIFO (CONFIG_RCU_EXP_KTHREAD and kthread_prio > 0)."""
    exp_mutex_rt: bool
    """rcu_state.exp_mutex is an rt_mutex (FIFO hand-off) instead of a mutex."""
    lazy: bool
    """call_rcu() callbacks are lazy on offloaded CPUs (CONFIG_RCU_LAZY and enable_rcu_lazy)."""
    rcu_normal_wake_from_gp: bool
    """synchronize_rcu() waiters are woken from the GP kthread instead of by a callback."""
    rcu_expedited: bool
    """rcupdate.rcu_expedited: synchronize_rcu() is expedited."""
    rcu_normal: bool
    """rcupdate.rcu_normal (or rcu_normal_after_boot): expedited GPs fall back to normal ones."""
    rcumaxbatch: Optional[int]
    """2004 throttling patch: callbacks per softirq pass (None: no limit)."""
    rcuplugticks: int
    """2004 throttling patch: ticks to hold callbacks back after a full batch."""
    krcud_bhlimit: int
    """2004 rcu-low-lat patch (rcupdate.bhlimit): callbacks in softirq before krcud/N takes over; 0: no krcud."""
    kfree_drain_jiffies: int
    """KFREE_DRAIN_JIFFIES: kfree_rcu() monitor delay (5*HZ from v6.1, HZ/50 from v5.6)."""
    kvfree_polled: bool
    """Per-page polled-GP reclaim of kvfree_rcu() batches (from v6.3)."""
    kvfree_drain_ready: bool
    """The monitor frees the pages whose GP has passed, and queue_rcu_work() the rest (from v6.3)."""
    rcu_min_cached_objs: int
    """rcutree.rcu_min_cached_objs: bulk pages kvfree_rcu() keeps cached per CPU (from v5.9; default 2,
    5 from v5.11); before v5.9, the one page of krcp->bcached; none before v5.7 (no bulk pages)."""


class Resolution(InputModel):
    """What the engine needs of a variant's workloads and kernel, decided once by
    :func:`~rcusim.input.resolve.resolve_variant`: each CPU list as the CPUs it names, and each
    answer that depends on the release or on the kernel as written. Computed from what
    :meth:`VariantSpec.resolved` records, so not recorded itself."""

    cpus: tuple[tuple[int, ...], ...]
    """Per workload, in ``VariantSpec.workloads`` order: the CPUs its ``cpus`` names, () for a
    workload without CPUs."""
    start_cpus: tuple[Optional[tuple[int, ...]], ...]
    """Per workload: the CPUs a sync_loop's ``start_cpus`` names, None where it is unset."""
    kfree_gen: Literal["call_rcu", "head_list", "bulk"]
    """What rcuscale's kfree_rcu() calls do: call_rcu() (before v5.6, or kfree_by_call_rcu),
    krcp->head (v5.6), bulk pages (v5.7 on)."""
    kfree_form: Literal[0, 1, 2]
    """The kfree_rcu() form of rcuscale's calls: 0 each call's at random (torture_random()),
    1 single-argument, 2 two-argument."""
    kfree_lazy: bool
    """kfree_by_call_rcu queues lazy callbacks."""
    might_resched: bool
    """preempt=voluntary on a kernel built without CONFIG_PREEMPTION: might_resched() is
    __cond_resched() (sched_dynamic_update()), a preemption point in every kmalloc(GFP_KERNEL)."""
    trace_events: tuple[str, ...]
    """The tracepoints trace_event= turns on."""
    hz_periodic: bool
    """CONFIG_HZ_PERIODIC: the tick never stops, on idle CPUs too."""


class VariantSpec(InputModel):
    """One fully resolved variant, ready for the engine."""

    name: str
    """Variant name."""
    hardware: HardwareSpec
    """Resolved hardware, with costs."""
    kernel: Kernel
    """The kernel as written, with CONFIG_NR_CPUS filled in."""
    params: RcuParams
    """Every kernel tunable resolved."""
    workloads: list[Workload]
    """The workloads, an ``rcuscale_writer`` replaced by the workloads it resolves to."""
    run: Run
    """Run limits."""
    rcuscale_writer: Optional[RcuscaleWriter] = None
    """The rcuscale GP-writer test as written, if the variant runs one (its writers are the
    ``sync_loop`` workload of its name)."""
    resolution: Resolution
    """What the engine needs of the workloads and kernel, decided (not recorded: see
    :meth:`resolved`)."""

    def resolved(self) -> dict:
        """Everything resolved for this variant but its workloads (which the scenario
        gives as written): hardware with costs and their sources, kernel, every
        tunable and release switch, run limits. JSON-ready."""
        exclude = {"workloads": True, "rcuscale_writer": True, "resolution": True}
        # Said only where the profile has them: a KVM guest, vmalloc() costs, ttwu_reuse, tracing,
        # a measured idle wake-up.
        absent = {k for k in ("halt_poll", "vmalloc", "ttwu_reuse", "tracing", "wakeup_idle")
                  if getattr(self.hardware, k) is None}
        if absent:
            exclude["hardware"] = absent
        return self.model_dump(mode="json", exclude=exclude)
