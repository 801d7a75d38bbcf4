"""Scenario configuration: validated input models and the resolved variant.

A scenario variant is described in the kernel's own words: a ``hardware`` part
(a named profile of platform costs and a CPU count), a ``kernel`` part (the
release whose behaviour to model, HZ, ``CONFIG_*`` options and a kernel
command line), a list of ``workloads`` and ``run`` limits. The models here
check every value and reject unknown keys; :func:`resolve_variant` then turns
one validated variant into a :class:`VariantSpec` whose :class:`RcuParams`
holds every kernel tunable as a concrete number, computed the way the kernel
computes it at boot (``rcu_init_geometry()``, ``adjust_jiffies_till_sched_qs()``,
``sanitize_kthread_prio()``, ``rcu_init_nohz()``, ...).

What ``kernel.release`` switches is decided in :mod:`rcusim.input.releases`;
:class:`RcuParams` carries the switches of its release.

Every problem raises :class:`~rcusim.errors.ScenarioError` naming the key path.
"""

from __future__ import annotations

import dataclasses
import math
import types
from typing import Annotated, Literal, Optional, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator, model_validator
from pydantic.fields import FieldInfo

from rcusim.errors import ScenarioError, did_you_mean, show_value
from rcusim.input.bootargs import parse_bootargs
from rcusim.input.cpulist import CPULIST_ALLOWED, parse_cpulist
from rcusim.input.membarrier import MembarrierLoop
from rcusim.input.profiles import (COST_NAMES, IDLE_WAKE_COSTS, MAX_IDLE_STATES, PROFILES, TIMER_QUANTILES,
                                   TIMER_TAIL_QUANTILES, Z_P99,
                                   load_profile, noise_presets, profile_halt_poll, profile_idle_states, profile_sources,
                                   profile_topology, profile_tracing, profile_ttwu_reuse, profile_vmalloc)
from rcusim.input.rcuscale_params import MIN_MEAS, compute_real
from rcusim.input.releases import (PATCHES, RELEASE_ALLOWED, SWITCHES, TRACEPOINT_SITES, ReleaseSwitches,
                                   check_module_param, module_param_since, parse_release, release_switches)

__all__ = [
    "MAX_CPUS", "Costs", "CostOverrides", "Hardware", "HardwareSpec", "Kernel",
    "SyncLoop", "Readers", "KfreeRcuFlood", "RcuscaleWriter", "MembarrierLoop", "RtLatencyProbe", "CallRcuLoad",
    "NonpreemptSection", "Noise", "NoiseSource", "Workload", "WORKLOAD_KINDS", "Run", "RcuParams", "VariantInput",
    "VariantSpec", "parse_release", "resolve_params", "resolve_variant", "rcuscale_writer_workloads",
    "build_variant", "scenario_error_from_validation",
]

MAX_CPUS = 8192
"""Largest CPU count rcusim models (x86's CONFIG_NR_CPUS limit with MAXSMP)."""

NonNegInt = Annotated[int, Field(ge=0)]

MAX_COST_NS = 10**9
"""Largest platform cost accepted, in ns (one second; real costs are microseconds)."""
CostNs = Annotated[int, Field(ge=0, le=MAX_COST_NS)]

MAX_TIME_US = 86_400e6
"""Largest workload time accepted, in microseconds (a day, the longest run)."""

GP_ASYNC_MAX_DEFAULT = 1000
"""rcuscale's gp_async_max default: callbacks in flight at which a writer calls rcu_barrier()."""


class _Model(BaseModel):
    """Base of all configuration models: strict, frozen, no unknown keys."""

    # strict: YAML already gives typed values, and strict mode keeps a boolean
    # from passing as an integer or a number as a string.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True,
                              use_attribute_docstrings=True)


# --------------------------------------------------------------------------
# Hardware
# --------------------------------------------------------------------------

class Costs(_Model):
    """Platform costs in integer nanoseconds (a profile plus overrides)."""

    ctxsw_ns: CostNs
    """Context switch between two tasks on one CPU."""
    ttwu_ns: CostNs
    """The waker's cost of try_to_wake_up() for one task."""
    wakeup_busy_ns: CostNs
    """Delay until a task woken from another CPU is queued on a busy target (remote-wake IPI, one way)."""
    wakeup_idle_median_ns: Optional[CostNs] = None
    """Median wake-up latency of an idle CPU (drawn lognormal from median and p99); only for
    a profile without idle states."""
    wakeup_idle_p99_ns: Optional[CostNs] = None
    """99th-percentile wake-up latency of an idle CPU; only for a profile without idle states."""
    ipi_send_ns: CostNs
    """Sender's cost per IPI sent."""
    ipi_latency_ns: CostNs
    """IPI send to handler entry on the target."""
    ipi_handler_ns: CostNs
    """Target's time in an IPI: entry/exit, the call-function queue flush and a short handler."""
    tick_ns: CostNs
    """Scheduling-clock interrupt handler."""
    softirq_ns: CostNs
    """Entry/exit and bookkeeping of one RCU_SOFTIRQ / rcu_core() pass."""
    rnp_lock_ns: CostNs
    """Acquire and release of an uncontended rcu_node raw spinlock, cache-line transfer included."""
    cb_wakeme_ns: CostNs
    """Invoking wakeme_after_rcu() (complete() and the wake-up)."""
    cb_kfree_ns: CostNs
    """Invoking a kfree-like callback."""
    cb_generic_ns: CostNs
    """Invoking a mixed kernel callback."""
    call_rcu_ns: CostNs
    """call_rcu() / call_rcu_hurry() enqueue."""
    kfree_ns: CostNs
    """kfree() of a small object."""
    sync_entry_ns: CostNs
    """synchronize_rcu() bookkeeping on the caller side before it blocks (completion set-up, the call)."""
    kmalloc_ns: CostNs
    """kmalloc() of a small object when objects are not recycled soon (a flood)."""
    kvfree_call_rcu_ns: CostNs
    """kvfree_call_rcu() fast path: krcp lock with irqs off, store the pointer, snapshot, monitor check."""
    kfree_bulk_ns: CostNs
    """kfree_bulk() per object of a full bulk page."""
    page_alloc_ns: CostNs
    """Allocating (and later freeing) one order-0 page for kvfree_rcu()'s bulk pages."""


if tuple(Costs.model_fields) != COST_NAMES:
    raise RuntimeError("rcusim.input.config.Costs and rcusim.input.profiles.COST_NAMES disagree")

CostOverrides = create_model(
    "CostOverrides",
    __base__=_Model,
    __doc__="Costs that replace a profile's values, in ns; unknown cost names are errors.",
    **{name: (Optional[CostNs], Field(None, description=Costs.model_fields[name].description))
       for name in COST_NAMES},
)


class IdleState(_Model):
    """One cpuidle state, as the driver's table gives it."""

    name: str
    """Its name, e.g. "C6"."""
    exit_latency_us: Annotated[int, Field(ge=0, le=MAX_COST_NS // 1000)]
    """Time to leave the state, in µs (the wake-up cost)."""
    target_residency_us: Annotated[int, Field(ge=0, le=MAX_COST_NS // 1000)]
    """Shortest idle time for which the state pays off, in µs."""
    polling: bool = False
    """The state polls (CPUIDLE_FLAG_POLLING); only state 0 may."""
    mwait: bool = False
    """Entered with MWAIT: the idle task watches TIF_NEED_RESCHED, so a remote wake-up needs no IPI."""
    wake_ns: Optional[Annotated[int, Field(ge=0, le=MAX_COST_NS)]] = None
    """What leaving the state costs a wake-up, in ns, where measured; default: the exit latency
    (the governor always reasons with the exit latency)."""


class Topology(_Model):
    """The exact shape of the machine: sockets × LLCs × cores × threads = nr_cpus."""

    sockets: Annotated[int, Field(ge=1, le=MAX_CPUS)]
    """Sockets (packages)."""
    llcs_per_socket: Annotated[int, Field(ge=1, le=MAX_CPUS)]
    """Last-level-cache domains per socket (e.g. CCXs)."""
    cores_per_llc: Annotated[int, Field(ge=1, le=MAX_CPUS)]
    """Cores sharing one LLC."""
    smt: Annotated[int, Field(ge=1, le=8)]
    """Hardware threads per core."""


def check_idle_states(states, key: str) -> None:
    """A cpuidle table is ordered by depth: exit latency and target residency never fall,
    and only state 0 polls."""
    for i, (a, b) in enumerate(zip(states, states[1:]), start=1):
        if b.exit_latency_us < a.exit_latency_us or b.target_residency_us < a.target_residency_us:
            raise ScenarioError(f"state {i} ({b.name}) is shallower than state {i - 1} ({a.name})",
                                key=key, allowed="states ordered by depth: exit_latency_us and "
                                "target_residency_us non-decreasing")
    if any(s.polling for s in states[1:]):
        raise ScenarioError("only state 0 may poll", key=key, allowed="polling: true on the first state only")


PROFILE_ALLOWED = "one of: " + ", ".join(PROFILES)
"""What hardware.profile allows: the bundled profiles' names."""


class Hardware(_Model):
    """The machine: a hardware profile, a CPU count and cost overrides."""

    profile: Annotated[str, Field(json_schema_extra={"allowed": PROFILE_ALLOWED})]
    """Name of a hardware profile (rcusim.input.profiles.PROFILES)."""
    nr_cpus: Annotated[int, Field(ge=1, le=MAX_CPUS)]
    """Number of CPUs; all are possible, present and online (nr_cpu_ids)."""
    costs: CostOverrides = CostOverrides()
    """Costs replacing the profile's values, in ns."""
    idle_states: Optional[Annotated[list[IdleState], Field(min_length=1, max_length=MAX_IDLE_STATES)]] = None
    """cpuidle states replacing the profile's (state 0 first, ordered by depth), e.g. without C6."""
    topology: Optional[Topology] = None
    """The machine's exact shape, replacing the profile's building blocks (its line costs stay)."""
    halt_poll_ns: Optional[Annotated[int, Field(ge=0, le=MAX_COST_NS)]] = None
    """A KVM guest profile's host parameter kvm.halt_poll_ns (the longest halt polling, ns; 0 turns
    it off), replacing the profile's."""

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, value: str) -> str:
        if value not in PROFILES:
            raise ScenarioError(f"unknown profile {value!r}", allowed=PROFILE_ALLOWED)
        return value

    @model_validator(mode="after")
    def _idle_wake_costs_apply(self):
        if self.idle_states is not None:
            check_idle_states(self.idle_states, "idle_states")
        if self.idle_states is not None and self.profile in PROFILES and profile_halt_poll(self.profile):
            raise ScenarioError(f"profile {self.profile!r} is a KVM guest: its CPUs idle in HLT with the "
                                "host's halt polling, not in cpuidle states", key="idle_states",
                                allowed="a profile that is not a KVM guest")
        if self.idle_states is not None or (self.profile in PROFILES and (profile_idle_states(self.profile)
                                                                           or profile_halt_poll(self.profile))):
            for name in IDLE_WAKE_COSTS:
                if getattr(self.costs, name) is not None:
                    raise ScenarioError("the idle states' exit latencies (or a KVM guest's halt polling) "
                                        "price an idle wake-up here", key=f"costs.{name}",
                                        allowed="a profile without idle_states or halt_poll, "
                                        "and no hardware.idle_states")
        return self

    @model_validator(mode="after")
    def _topology_adds_up(self):
        t = self.topology
        if t is None:
            return self
        if self.profile in PROFILES and profile_topology(self.profile) is None:
            raise ScenarioError(f"profile {self.profile!r} gives no topology and no line costs",
                                key="topology", allowed="a profile with a topology")
        total = t.sockets * t.llcs_per_socket * t.cores_per_llc * t.smt
        if total != self.nr_cpus:
            raise ScenarioError(f"{t.sockets} x {t.llcs_per_socket} x {t.cores_per_llc} x {t.smt} = {total} CPUs, "
                                f"not nr_cpus = {self.nr_cpus}", key="topology",
                                allowed="sockets x llcs_per_socket x cores_per_llc x smt equal to nr_cpus")
        return self

    @model_validator(mode="after")
    def _halt_poll_on_a_guest(self):
        if self.halt_poll_ns is not None and self.profile in PROFILES and not profile_halt_poll(self.profile):
            raise ScenarioError(f"profile {self.profile!r} is not a KVM guest", key="halt_poll_ns",
                                allowed="a KVM guest profile (one with halt_poll), e.g. amd-threadripper-3970x-kvm")
        return self

    def resolved_halt_poll(self) -> dict | None:
        """A KVM guest's host halt polling, with the scenario's kvm.halt_poll_ns; None if not a guest."""
        hp = profile_halt_poll(self.profile)
        if hp is not None and self.halt_poll_ns is not None:
            hp = dict(hp, halt_poll_ns=self.halt_poll_ns)
        return hp

    def resolved_topology(self) -> dict | None:
        """Shape and line costs: the scenario's shape or the profile's building blocks."""
        topo = profile_topology(self.profile)
        if topo is None:
            return None
        if self.topology is not None:
            topo = dict(topo, smt=self.topology.smt, cores_per_llc=self.topology.cores_per_llc,
                        llcs_per_socket=self.topology.llcs_per_socket)
        return topo

    def resolved_idle_states(self) -> tuple[dict, ...]:
        """The scenario's idle states, else the profile's (empty: none)."""
        if self.idle_states is not None:
            return tuple(dict(s.model_dump(), wake_ns=s.exit_latency_us * 1000 if s.wake_ns is None else s.wake_ns)
                         for s in self.idle_states)
        return profile_idle_states(self.profile)

    def resolved_costs(self) -> Costs:
        """Return the profile's costs with this hardware's overrides applied."""
        costs = load_profile(self.profile)
        costs.update(self.costs.model_dump(exclude_none=True))
        return Costs(**costs)

    def cost_sources(self) -> dict[str, str]:
        """Return where each resolved cost comes from."""
        sources = profile_sources(self.profile)
        for name in self.costs.model_dump(exclude_none=True):
            sources[name] = "scenario override (hardware.costs)"
        return sources


class HardwareSpec(_Model):
    """Resolved hardware of one variant."""

    profile: str
    """Name of the hardware profile."""
    nr_cpus: int
    """Number of CPUs (nr_cpu_ids)."""
    costs: Costs
    """Platform costs: the profile's values with the scenario's overrides."""
    idle_states: tuple[dict, ...] = ()
    """The profile's idle states (rcusim.input.profiles.profile_idle_states), state 0 first."""
    topology: Optional[dict] = None
    """Shape and cache-line costs by distance (rcusim.input.profiles.profile_topology), or None."""
    halt_poll: Optional[dict] = None
    """A KVM guest's host halt polling (rcusim.input.profiles.profile_halt_poll), or None."""
    vmalloc: Optional[dict] = None
    """vmalloc()/vfree() costs of one page (rcusim.input.profiles.profile_vmalloc), or None."""
    ttwu_reuse: Optional[dict] = None
    """try_to_wake_up()'s cost by the time since the waker's CPU last woke a task
    (rcusim.input.profiles.profile_ttwu_reuse), or None: ttwu_ns always."""
    tracing: Optional[dict] = None
    """One traced event's cost (rcusim.input.profiles.profile_tracing), or None."""
    cost_sources: dict[str, str]
    """Where each cost comes from."""


# --------------------------------------------------------------------------
# Kernel
# --------------------------------------------------------------------------

NOCB_SINCE = (3, 8)
"""The first release with CONFIG_RCU_NOCB_CPU."""

# Kconfig "depends on" rules that rcusim checks: option -> (needed option, why).
#: Kconfig options that exist from a release on: (option, the release switch that brings it).
_OPTION_SINCE = (("CONFIG_RCU_LAZY", "rcu_lazy"), ("CONFIG_RCU_LAZY_DEFAULT_OFF", "rcu_lazy_boot_param"),
                 ("CONFIG_PREEMPT_DYNAMIC", "preempt_dynamic"))

_KCONFIG_DEPENDS = [
    ("CONFIG_RCU_NOCB_CPU_DEFAULT_ALL", "CONFIG_RCU_NOCB_CPU"),
    ("CONFIG_RCU_LAZY", "CONFIG_RCU_NOCB_CPU"),
    ("CONFIG_RCU_LAZY_DEFAULT_OFF", "CONFIG_RCU_LAZY"),
    ("CONFIG_RCU_NOCB_CPU_CB_BOOST", "CONFIG_RCU_NOCB_CPU"),
    ("CONFIG_RCU_NOCB_CPU_CB_BOOST", "CONFIG_RCU_BOOST"),
    ("CONFIG_PREEMPT_RCU", "CONFIG_PREEMPTION"),
    ("CONFIG_RCU_BOOST", "CONFIG_PREEMPT_RCU"),
]


class Kernel(_Model):
    """The kernel: release, HZ, Kconfig options and the kernel command line.

    Defaults are the kernel's defaults (Kconfig and boot parameters) for a
    64-bit build, except where noted.
    """

    release: Annotated[str, Field(json_schema_extra={"allowed": RELEASE_ALLOWED})] = "7.0"
    """Kernel release whose behaviour to model, "MAJOR.MINOR"; selects the release switches."""
    HZ: Literal[100, 250, 300, 1000] = 250
    """Scheduling-clock rate; the Kconfig default is HZ_250."""
    CONFIG_NR_CPUS: Optional[Annotated[int, Field(ge=1, le=MAX_CPUS)]] = None
    """Compile-time CPU limit; default hardware.nr_cpus; must be >= it."""
    CONFIG_RCU_FANOUT: Annotated[int, Field(ge=2, le=64)] = 64
    """Children per interior rcu_node (64-bit default 64)."""
    CONFIG_RCU_FANOUT_LEAF: Annotated[int, Field(ge=2, le=64)] = 16
    """CPUs per leaf rcu_node (default 16)."""
    CONFIG_RCU_NOCB_CPU: bool = False
    """Callback offloading (rcuog/rcuop kthreads) is built in."""
    CONFIG_RCU_NOCB_CPU_DEFAULT_ALL: bool = False
    """Offload all CPUs when neither rcu_nocbs= nor nohz_full= is given."""
    CONFIG_RCU_LAZY: bool = False
    """call_rcu() callbacks may be lazy on offloaded CPUs."""
    CONFIG_RCU_LAZY_DEFAULT_OFF: bool = False
    """Laziness is built in but off unless rcutree.enable_rcu_lazy=1."""
    CONFIG_PREEMPT_RCU: bool = True
    """Preemptible RCU (the rcu_preempt flavour); rcusim's default."""
    CONFIG_PREEMPTION: bool = True
    """Preemptible kernel; rcusim's default."""
    CONFIG_RCU_BOOST: bool = False
    """Priority boosting of preempted readers (rcub kthreads)."""
    CONFIG_RCU_NOCB_CPU_CB_BOOST: bool = False
    """rcuop kthreads run SCHED_FIFO at kthread_prio."""
    bootargs: Annotated[str, Field(json_schema_extra={
        "allowed": "a command line of the boot parameters python -m rcusim bootargs lists"})] = ""
    """Kernel command line, e.g. "rcutree.blimit=16 rcu_nocbs=0-63"; later tokens win."""
    CONFIG_HZ_PERIODIC: bool = False
    """The tick never stops, idle CPUs take every one (NO_HZ_IDLE, rcusim's default, is off)."""
    CONFIG_PREEMPT_DYNAMIC: bool = False
    """A preemptible build (CONFIG_PREEMPTION, CONFIG_PREEMPT_RCU) whose preemption model the boot
    parameter preempt= chooses (default full, the CONFIG_PREEMPT choice)."""
    CONFIG_RCU_EXP_KTHREAD: Optional[bool] = None
    """Expedited-GP kthread workers run SCHED_FIFO at kthread_prio; Kconfig default: CONFIG_NR_CPUS <= 32."""
    exp_mutex: Literal["mutex", "rt_mutex"] = "mutex"
    """Lock type of rcu_state.exp_mutex: "mutex" as in mainline, or "rt_mutex" (FIFO hand-off) as in the 2016 talk's experiment."""
    patches: list[str] = []
    """Changes backported onto the release, by name (docs/releases.md)."""

    @field_validator("patches")
    @classmethod
    def _check_patches(cls, value: list[str]) -> list[str]:
        known = {patch.name for patch in PATCHES}
        for name in value:
            if name not in known:
                raise ScenarioError(f"{name!r} is not a patch rcusim models", allowed=", ".join(sorted(known)))
        return value

    @field_validator("release", mode="before")
    @classmethod
    def _check_release(cls, value):
        parse_release(value)
        return value.strip()

    @field_validator("bootargs")
    @classmethod
    def _check_bootargs(cls, value: str) -> str:
        # Syntax only here; CPU lists are checked against nr_cpus when resolving.
        parse_bootargs(value)
        return value

    @model_validator(mode="after")
    def _check_kconfig_depends(self) -> "Kernel":
        for option, needed in _KCONFIG_DEPENDS:
            if getattr(self, option) and not getattr(self, needed):
                raise ScenarioError(f"{option}=y needs {needed}=y (Kconfig 'depends on')",
                                    key=option, allowed=f"set {needed}: true, or {option}: false")
        return self

    @model_validator(mode="after")
    def _check_nocb_exists(self) -> "Kernel":
        # Callback offloading came with v3.8 (3fbfbf7a3b66, "rcu: Add callback-free CPUs",
        # Paul E. McKenney, on his nocb.2012.10.23a branch after v3.7-rc1).
        if self.CONFIG_RCU_NOCB_CPU and self.release_tuple < NOCB_SINCE:
            raise ScenarioError(f"CONFIG_RCU_NOCB_CPU does not exist in release {self.release}: callback "
                                "offloading came with v3.8", key="CONFIG_RCU_NOCB_CPU",
                                allowed="false, or kernel.release 3.8 or later")
        return self

    @model_validator(mode="after")
    def _check_options_exist(self) -> "Kernel":
        switches = release_switches(self.release_tuple)
        since = {s.name: ".".join(map(str, s.since)) for s in SWITCHES}
        for option, switch in _OPTION_SINCE:
            if getattr(self, option) and not getattr(switches, switch):
                raise ScenarioError(f"{option} does not exist in release {self.release}", key=option,
                                    allowed=f"false, or kernel.release {since[switch]} or later")
        return self

    @model_validator(mode="after")
    def _check_preempt_dynamic(self) -> "Kernel":
        if self.CONFIG_PREEMPT_DYNAMIC and not (self.CONFIG_PREEMPTION and self.CONFIG_PREEMPT_RCU):
            raise ScenarioError("CONFIG_PREEMPT_DYNAMIC builds a preemptible kernel (PREEMPT_BUILD)",
                                key="CONFIG_PREEMPT_DYNAMIC",
                                allowed="CONFIG_PREEMPTION and CONFIG_PREEMPT_RCU true, and preempt= for the model")
        return self

    @model_validator(mode="after")
    def _check_patches_apply(self) -> "Kernel":
        switches = release_switches(self.release_tuple)
        since = {s.name: ".".join(map(str, s.since)) for s in SWITCHES}
        for patch in PATCHES:
            if patch.name not in self.patches:
                continue
            if not getattr(switches, patch.needs):
                raise ScenarioError(f"{patch.name} changes code release {self.release} does not have",
                                    key="patches", allowed=f"a release from {since[patch.needs]} on")
        return self

    @property
    def patch_notes(self) -> list[str]:
        """A line for each of `patches` that the release already has: nothing to backport."""
        switches = release_switches(self.release_tuple)
        since = {s.name: ".".join(map(str, s.since)) for s in SWITCHES}
        return [f"kernel.patches: {patch.name} is already in release {self.release} (since v{since[patch.switch]}): "
                "nothing to backport" for patch in PATCHES
                if patch.name in self.patches and getattr(switches, patch.switch)]

    @property
    def switches(self) -> ReleaseSwitches:
        """The release's switches, with the backported patches' turned on."""
        on = {patch.switch: True for patch in PATCHES if patch.name in self.patches}
        return dataclasses.replace(release_switches(self.release_tuple), **on)

    @property
    def release_tuple(self) -> tuple[int, ...]:
        """The release as a tuple of ints, e.g. (6, 17)."""
        return parse_release(self.release)


# --------------------------------------------------------------------------
# Workloads
# --------------------------------------------------------------------------

class _OnCpuList(_Model):
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
    """Number of tasks, all started together."""
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
    is_per_cpu_kthread(current) rule)."""
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


class KfreeRcuFlood(_Model):
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


class RcuscaleWriter(_Model):
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


class NonpreemptSection(_Model):
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


class NoiseSource(_Model):
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


class Quantiles(_Model):
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


class TimerDelay(_Model):
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

    def _own_or_preset(self, key: str, model: type[_Model]):
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


class Run(_Model):
    """Limits of a run."""

    max_sim_time_s: Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False)] = 3600.0
    """The simulation stops at this simulated time if the workloads are not done."""
    duration_s: Optional[Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False)]] = None
    """For workloads that never finish alone (call_rcu_load, readers, noise): the simulated
    time the run lasts; the run is complete when it has lasted it."""
    records: Literal["all", "sample", "none"] = "all"
    """Which per-request rows the result keeps: ``all``; ``sample``, a fraction of them
    (``sample_fraction``) chosen by a hash of each request's completion number; or
    ``none``, in memory that does not grow with the calls. In every case the latency
    count, mean, least and greatest value, the log2 histogram and the time breakdown
    cover every request exactly; with fewer rows, percentiles and the latency figure come
    from a log-linear histogram, within 0.05 % of the exact value."""
    sample_fraction: Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)] = 0.01
    """Fraction of the requests whose rows ``records: sample`` keeps."""


class VariantInput(_Model):
    """One variant as written (after merging the base and the variant's overrides)."""

    hardware: Hardware
    """The machine."""
    kernel: Kernel = Kernel()
    """The kernel."""
    workloads: Annotated[list[Workload], Field(min_length=1)]
    """What runs, at least one workload."""
    run: Run = Run()
    """Run limits."""


# --------------------------------------------------------------------------
# Resolved values
# --------------------------------------------------------------------------

class RcuParams(_Model):
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


class VariantSpec(_Model):
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

    def resolved(self) -> dict:
        """Everything resolved for this variant but its workloads (which the scenario
        gives as written): hardware with costs and their sources, kernel, every
        tunable and release switch, run limits. JSON-ready."""
        exclude = {"workloads": True, "rcuscale_writer": True}
        # Said only where the profile has them: a KVM guest, vmalloc() costs, ttwu_reuse, tracing.
        absent = {k for k in ("halt_poll", "vmalloc", "ttwu_reuse", "tracing") if getattr(self.hardware, k) is None}
        if absent:
            exclude["hardware"] = absent
        return self.model_dump(mode="json", exclude=exclude)


# --------------------------------------------------------------------------
# Resolution
# --------------------------------------------------------------------------

_NOCB_PARAMS = ("rcu_nocbs", "rcutree.rcu_nocb_gp_stride")
# Parameters of the kernel whose mechanism rcusim does not model: refused, not ignored.
_NOT_MODELLED = {
    "rcutree.qovld": "callback overload (a CPU above qovld callbacks shortens the FQS waits "
                     "and asks for quiescent states sooner)",
    "rcu_nocb_poll": "rcuog and rcuop kthreads that poll every jiffy instead of being woken",
}
_BOOTARGS_PATH = ("kernel", "bootargs")
_CLASSIC_PARAMS = ("rcupdate.rcumaxbatch", "rcupdate.rcuplugticks", "rcupdate.bhlimit")


def _token_for(bootargs: str, name: str) -> str | None:
    """Return the last token of `bootargs` that sets parameter `name`."""
    found = None
    for token in bootargs.split():
        if token.partition("=")[0].replace("-", "_") == name:
            found = token
    return found


def resolve_params(nr_cpus: int, kernel: Kernel) -> RcuParams:
    """Compute every kernel tunable as the kernel does at boot.

    Parameters
    ----------
    nr_cpus : int
        Number of CPUs (nr_cpu_ids).
    kernel : Kernel
        Kernel settings; ``CONFIG_NR_CPUS`` None means `nr_cpus`.

    Returns
    -------
    RcuParams

    Raises
    ------
    ScenarioError
        For command-line values that do not fit this machine or this build.
    """
    nr = nr_cpus
    hz = kernel.HZ
    release = kernel.release_tuple
    switches = kernel.switches
    nr_config = kernel.CONFIG_NR_CPUS if kernel.CONFIG_NR_CPUS is not None else nr
    try:
        args = parse_bootargs(kernel.bootargs, nr_cpus=nr)
    except ScenarioError as exc:
        raise exc.with_context(path=_BOOTARGS_PATH) from None

    def needs(names, option):
        for name in names:
            if name in args and not getattr(kernel, option):
                raise ScenarioError(f"{name} needs {option}=y (without it the kernel "
                                    "does not know this parameter)", path=_BOOTARGS_PATH,
                                    allowed=f"set kernel.{option}: true, or drop {name}",
                                    token=_token_for(kernel.bootargs, name))

    for name, what in _NOT_MODELLED.items():
        if name in args:
            raise ScenarioError(f"{name}: rcusim does not model {what}", path=_BOOTARGS_PATH,
                                allowed=f"drop {name}", token=_token_for(kernel.bootargs, name))
    needs(_NOCB_PARAMS, "CONFIG_RCU_NOCB_CPU")
    if "nohz_full" in args and not kernel.CONFIG_RCU_NOCB_CPU:
        # nohz_full= takes effect only in a CONFIG_NO_HZ_FULL build (housekeeping_setup() in
        # kernel/sched/isolation.c, earlier kernel/time/tick-sched.c), and NO_HZ_FULL selects
        # RCU_NOCB_CPU (kernel/time/Kconfig).
        raise ScenarioError("nohz_full needs CONFIG_NO_HZ_FULL=y, which selects CONFIG_RCU_NOCB_CPU "
                            "(without NO_HZ_FULL the kernel ignores nohz_full)",
                            path=_BOOTARGS_PATH,
                            allowed="set kernel.CONFIG_RCU_NOCB_CPU: true (with nohz_full, rcusim's "
                                    "CONFIG_NO_HZ_FULL=y build), or drop nohz_full",
                            token=_token_for(kernel.bootargs, "nohz_full"))
    if "nohz_full" in args and kernel.CONFIG_HZ_PERIODIC:
        raise ScenarioError("nohz_full needs CONFIG_NO_HZ_FULL, one choice of the tick model, and "
                            "CONFIG_HZ_PERIODIC is another", path=_BOOTARGS_PATH,
                            allowed="kernel.CONFIG_HZ_PERIODIC: false, or drop nohz_full",
                            token=_token_for(kernel.bootargs, "nohz_full"))
    for name in _CLASSIC_PARAMS:
        # The 2004 patches were for classic RCU; Tree RCU (v2.6.29) has no such knob.
        if name in args and switches.tree_rcu:
            raise ScenarioError(f"{name} belongs to a 2004 patch for classic RCU", path=_BOOTARGS_PATH,
                                allowed='drop it, or set kernel.release below "2.6.29"',
                                token=_token_for(kernel.bootargs, name))
    if args.get("rcupdate.rcumaxbatch") and args.get("rcupdate.bhlimit"):
        raise ScenarioError("rcupdate.rcumaxbatch (throttle-rcu) and rcupdate.bhlimit (rcu-low-lat) "
                            "come from two different patches", path=_BOOTARGS_PATH,
                            allowed="one of them", token=_token_for(kernel.bootargs, "rcupdate.bhlimit"))
    for name in args:
        # The rcuscale module's tests are what `python -m rcusim rcuscale` builds a
        # scenario from; that command keeps its rcuscale.* parameters off kernel.bootargs.
        if name.startswith("rcuscale."):
            raise ScenarioError(f"{name} is a parameter of the rcuscale module, whose tests a scenario "
                                "does not run (it would be ignored)", path=_BOOTARGS_PATH,
                                allowed="'python -m rcusim rcuscale --bootargs ...' for rcuscale's tests, "
                                        "or the keys of a kfree_rcu_flood or rcuscale_writer workload",
                                token=_token_for(kernel.bootargs, name))
    needs(("rcutree.enable_rcu_lazy",), "CONFIG_RCU_LAZY")
    needs(("preempt",), "CONFIG_PREEMPT_DYNAMIC")
    for name in args:
        try:
            check_module_param(name, kernel.release, kernel.patches)
        except ScenarioError as exc:
            raise exc.with_context(path=_BOOTARGS_PATH) from None

    # rcu_init_geometry(): the boot-time leaf fanout must be 2..64 and must fit
    # nr_cpu_ids into the compiled number of levels; otherwise the kernel warns
    # and keeps CONFIG_RCU_FANOUT_LEAF.
    fanout = kernel.CONFIG_RCU_FANOUT
    leaf_config = kernel.CONFIG_RCU_FANOUT_LEAF
    leaf = args.get("rcutree.rcu_fanout_leaf", leaf_config)
    if not (leaf == leaf_config and nr == nr_config):
        levels = _compiled_levels(nr_config, leaf_config, fanout)
        if leaf < 2 or leaf > 64 or nr > leaf * fanout ** (levels - 1):
            leaf = leaf_config

    # rcu_init_geometry() and the jiffies_till_* parameter setters.
    d = (1 + (hz > 250) + (hz > 500)) + nr // 256  # RCU_JIFFIES_TILL_FORCE_QS + nr/RCU_JIFFIES_FQS_DIV
    first = args.get("rcutree.jiffies_till_first_fqs")
    first = d if first is None else min(first, hz)
    nxt = args.get("rcutree.jiffies_till_next_fqs")
    nxt = d if nxt is None else max(1, min(nxt, hz))
    # adjust_jiffies_till_sched_qs(); ULONG_MAX means "compute it".
    sched_qs = args.get("rcutree.jiffies_till_sched_qs", 2**64 - 1)
    if sched_qs == 2**64 - 1:
        sched_qs = max(first + 2 * nxt, hz // 10 + nr // 256)

    divisor = args.get("rcutree.rcu_divisor", 7)
    divisor = 7 if divisor < 0 else min(divisor, 62)  # as rcu_do_batch() reads it
    resched_ns = min(max(args.get("rcutree.rcu_resched_ns", 3_000_000), 1_000_000), 1_000_000_000)

    # sanitize_kthread_prio() (the CONFIG_RCU_TORTURE_TEST built-in case is not modelled).
    prio = args.get("rcutree.kthread_prio", 1 if kernel.CONFIG_RCU_BOOST else 0)
    if kernel.CONFIG_RCU_BOOST and prio < 1:
        prio = 1
    elif prio < 0:
        prio = 0
    elif prio > 99:
        prio = 99

    nocb_is_setup, nocb_cpus, nohz_full = False, (), ()
    if kernel.CONFIG_RCU_NOCB_CPU:
        # rcu_nocb_setup() and rcu_init_nohz().
        mask: set[int] = set()
        if "rcu_nocbs" in args:
            nocb_is_setup = True
            mask.update(parse_cpulist(args["rcu_nocbs"], nr))
        if "nohz_full" in args:
            nohz_full = parse_cpulist(args["nohz_full"], nr)
            if len(nohz_full) == nr:
                # housekeeping_setup(): at least one housekeeping CPU is kept,
                # the boot CPU.
                nohz_full = nohz_full[1:]
        if nohz_full:
            nocb_is_setup = True
            mask.update(nohz_full)
        elif kernel.CONFIG_RCU_NOCB_CPU_DEFAULT_ALL and not nocb_is_setup:
            nocb_is_setup = True
            mask.update(range(nr))
        nocb_cpus = tuple(sorted(mask))

    stride = args.get("rcutree.rcu_nocb_gp_stride", -1)
    if stride == -1:
        stride = nr // math.isqrt(nr)  # rcu_organize_nocb_kthreads()

    lazy = kernel.CONFIG_RCU_LAZY and args.get("rcutree.enable_rcu_lazy",
                                               not kernel.CONFIG_RCU_LAZY_DEFAULT_OFF)

    # rcu_normal_wake_from_gp: explicit values are kept; -1 (auto) is the
    # release's default: on for at most 16 possible CPUs (WAKE_FROM_GP_CPU_THRESHOLD)
    # where the release has the auto setting, off before.
    wake = args.get("rcutree.rcu_normal_wake_from_gp", -1)
    wake_from_gp = (switches.wake_from_gp_auto and nr <= 16) if wake < 0 else wake >= 1

    return RcuParams(
        release=release,
        switches=switches,
        hz=hz,
        nr_cpu_ids=nr,
        nr_cpus_config=nr_config,
        fanout=fanout,
        fanout_leaf=leaf,
        fanout_exact=args.get("rcutree.rcu_fanout_exact", False),
        preempt_rcu=kernel.CONFIG_PREEMPT_RCU,
        # preempt= of a CONFIG_PREEMPT_DYNAMIC kernel: none and voluntary run as !PREEMPTION.
        preemption=kernel.CONFIG_PREEMPTION and args.get("preempt", "full") == "full",
        rcu_boost=kernel.CONFIG_RCU_BOOST,
        blimit=args.get("rcutree.blimit", 10),
        qhimark=args.get("rcutree.qhimark", 10000),
        qlowmark=args.get("rcutree.qlowmark", 100),
        qovld=2 * 10000,  # DEFAULT_RCU_QOVLD_MULT * DEFAULT_RCU_QHIMARK
        rcu_divisor=divisor,
        rcu_resched_ns=resched_ns,
        jiffies_till_first_fqs=first,
        jiffies_till_next_fqs=nxt,
        jiffies_to_sched_qs=sched_qs,
        use_softirq=args.get("rcutree.use_softirq", True),  # !PREEMPT_RT
        kthread_prio=prio,
        nocb_is_setup=nocb_is_setup,
        nocb_cpus=nocb_cpus,
        nohz_full_cpus=tuple(nohz_full),
        nocb_gp_stride=stride,
        nocb_poll=False,
        nocb_cb_boost=kernel.CONFIG_RCU_NOCB_CPU_CB_BOOST,
        # rcu_start_exp_gp_kworker(): SCHED_FIFO only with CONFIG_RCU_EXP_KTHREAD,
        # whose Kconfig default is !PREEMPT_RT && NR_CPUS <= 32.
        exp_kthread_rt=prio > 0 and (kernel.CONFIG_RCU_EXP_KTHREAD if kernel.CONFIG_RCU_EXP_KTHREAD
                                     is not None else nr_config <= 32),
        exp_mutex_rt=kernel.exp_mutex == "rt_mutex",
        lazy=bool(lazy),
        rcu_normal_wake_from_gp=wake_from_gp,
        rcu_expedited=bool(args.get("rcupdate.rcu_expedited", 0)),
        # rcu_normal_after_boot defaults to PREEMPT_RT; rcusim models no PREEMPT_RT.
        rcu_normal=bool(args.get("rcupdate.rcu_normal", 0)
                        or args.get("rcupdate.rcu_normal_after_boot", 0)),
        rcumaxbatch=args.get("rcupdate.rcumaxbatch"),
        rcuplugticks=args.get("rcupdate.rcuplugticks", 4),
        krcud_bhlimit=args.get("rcupdate.bhlimit", 0),
        kfree_drain_jiffies=5 * hz if switches.kfree_drain_5hz else hz // 50,
        kvfree_polled=switches.kvfree_polled,
        kvfree_drain_ready=switches.kvfree_drain_ready,
        rcu_min_cached_objs=(args.get("rcutree.rcu_min_cached_objs", 5 if switches.kvfree_page_cache_work else 2)
                             if switches.kvfree_page_cache else int(switches.kfree_bulk)),
    )


def _compiled_levels(nr_config: int, leaf: int, fanout: int) -> int:
    """Return RCU_NUM_LVLS for a build, or 5 if the tree does not fit in 4 levels."""
    for levels in range(1, 5):
        if nr_config <= leaf * fanout ** (levels - 1):
            return levels
    return 5


def resolve_variant(name: str, variant: VariantInput) -> VariantSpec:
    """Cross-check one validated variant and resolve every value.

    Parameters
    ----------
    name : str
        Variant name.
    variant : VariantInput
        The validated variant.

    Returns
    -------
    VariantSpec

    Raises
    ------
    ScenarioError
        For values that are valid alone but not together (CONFIG_NR_CPUS below
        the CPU count, a tree too deep to build, CPU lists past the last CPU).
    """
    hw = variant.hardware
    kernel = variant.kernel
    nr = hw.nr_cpus
    nr_config = kernel.CONFIG_NR_CPUS if kernel.CONFIG_NR_CPUS is not None else nr
    if nr_config < nr:
        raise ScenarioError(f"{nr_config} is less than hardware.nr_cpus ({nr})",
                            path=("kernel", "CONFIG_NR_CPUS"),
                            allowed=f"an integer from {nr} to {MAX_CPUS}")
    leaf, fanout = kernel.CONFIG_RCU_FANOUT_LEAF, kernel.CONFIG_RCU_FANOUT
    if _compiled_levels(nr_config, leaf, fanout) > 4:
        least = next((f for f in range(2, 65) if leaf * f ** 3 >= nr_config), None)
        allowed = (f"CONFIG_RCU_FANOUT >= {least} for CONFIG_RCU_FANOUT_LEAF={leaf}"
                   if least else "a larger CONFIG_RCU_FANOUT_LEAF")
        raise ScenarioError(
            f"{fanout} is too small: CONFIG_RCU_FANOUT_LEAF * CONFIG_RCU_FANOUT**3 = "
            f"{leaf * fanout ** 3} < CONFIG_NR_CPUS = {nr_config}, the rcu_node tree would "
            "need more than 4 levels and the kernel build fails",
            path=("kernel", "CONFIG_RCU_FANOUT"), allowed=allowed)
    names: dict[str, int] = {}
    _check_membarrier(variant.workloads)
    for i, work in enumerate(variant.workloads):
        work.check_cpus(nr, path=("workloads", i))
        if work.name is not None:
            if work.name in names:
                raise ScenarioError(f"duplicate workload name {work.name!r} "
                                    f"(also workloads[{names[work.name]}])",
                                    path=("workloads", i, "name"), allowed="unique names")
            names[work.name] = i
    _check_run_end(variant.workloads, variant.run)
    _check_vfree(variant.workloads, hw.profile)
    _check_trace_event(kernel, hw.profile)
    _check_readers(variant.workloads, nr, kernel)
    _check_kfree(variant.workloads, kernel)
    _check_async(variant.workloads, kernel)
    kernel = kernel.model_copy(update={"CONFIG_NR_CPUS": nr_config})
    params = resolve_params(nr, kernel)
    _check_nice(variant.workloads, params)
    _check_kfree_by_call_rcu(variant.workloads, kernel, params)
    _check_unpinned(variant.workloads, params, hw.resolved_topology())
    _check_classic_smp(params, nr)
    hardware = HardwareSpec(profile=hw.profile, nr_cpus=nr, costs=hw.resolved_costs(),
                            cost_sources=hw.cost_sources(), idle_states=hw.resolved_idle_states(),
                            topology=hw.resolved_topology(), halt_poll=hw.resolved_halt_poll(),
                            vmalloc=profile_vmalloc(hw.profile), ttwu_reuse=profile_ttwu_reuse(hw.profile),
                            tracing=profile_tracing(hw.profile))
    workloads, writer = [], None
    for i, work in enumerate(variant.workloads):
        if not isinstance(work, RcuscaleWriter):
            workloads.append(work)
            continue
        writer = work
        for part in rcuscale_writer_workloads(work, nr, kernel, params, path=("workloads", i)):
            if names.get(part.name, i) != i:
                raise ScenarioError(f"its {part.name!r} workload has the name of workloads[{names[part.name]}]",
                                    path=("workloads", i, "name"), allowed="another name for that workload")
            workloads.append(part)
    return VariantSpec(name=name, hardware=hardware, kernel=kernel, params=params,
                       workloads=workloads, run=variant.run, rcuscale_writer=writer)


#: The name of an unnamed rcuscale_writer's writers (the kernel's kthread name).
WRITER_NAME = "rcu_scale_writer"

#: rcu_scale_reader()'s loop as call_rcu_load work: how long one modelled operation of
#: it lasts (the loop has no operations; the length only sets how often the engine looks).
READER_OP_US = 1000.0


def rcuscale_writer_workloads(wl: RcuscaleWriter, nr_cpus: int, kernel: Kernel, params: RcuParams,
                              path: tuple = ()) -> list:
    """The workloads rcuscale's GP-writer test runs: rcu_scale_writer() kthreads as a
    ``sync_loop``, rcu_scale_reader() kthreads as ``call_rcu_load`` workloads.

    The writers are SCHED_FIFO (sched_set_fifo_low()), writer i on CPU i % nr_cpu_ids, after
    `holdoff` seconds; each is done at its MIN_MEAS-th measurement plus one once a jiffy
    past `minruntime` seconds has begun (time_after(jiffies, jdone)), sleeping 1 to
    `writer_holdoff_jiffies` jiffies before each call. A done writer turns SCHED_NORMAL and
    goes on measuring until every writer is done (``until_all_done``). The readers run at nice 19 (MAX_NICE),
    reader i on CPU i % nr_cpu_ids, each looping on an empty rcu_read_lock()/rcu_read_unlock()
    pair with interrupts off: a tick never lands inside the section, so with preemptible RCU
    each reports a quiescent state; in rcusim they are kernel-mode CPU hogs that queue no
    callback.
    """
    for name, given in (("gp_async", wl.gp_async), ("minruntime", wl.minruntime != 0),
                        ("writer_holdoff_jiffies", wl.writer_holdoff_jiffies != 0)):
        if given:
            try:
                check_module_param(f"rcuscale.{name}", kernel.release)
            except ScenarioError as exc:
                raise ScenarioError(exc.problem, path=path + (name,), allowed=exc.allowed) from None
    primitive = ("call_rcu_hurry" if wl.gp_async else "synchronize_rcu_expedited" if wl.gp_exp
                 else "synchronize_rcu")
    writers = SyncLoop(kind="sync_loop", name=wl.name or WRITER_NAME, tasks=compute_real(wl.nwriters, nr_cpus),
                       loops=MIN_MEAS + 1, rt=True, kthread=True, primitive=primitive,
                       async_max=wl.gp_async_max if wl.gp_async else None, work_after="none",
                       think_us=float(wl.writer_holdoff), start_us=wl.holdoff * 1e6,
                       sleep_jiffies_max=wl.writer_holdoff_jiffies, min_runtime_s=float(wl.minruntime),
                       until_all_done=True)
    nreaders = compute_real(wl.nreaders, nr_cpus)
    if nreaders == 0:
        return [writers]
    if not params.preemption:
        raise ScenarioError("the writer test's readers on a CONFIG_PREEMPTION=n kernel pass quiescent states "
                            "only when cond_resched() finds rcu_urgent_qs set, which is not modelled",
                            path=path + ("nreaders",), allowed="nreaders: 0, or a preemptible kernel")
    if not params.switches.cfs:
        raise ScenarioError("the writer test's readers run at nice 19, a weight of the fair class (CFS, v2.6.23 "
                            "and later)", path=path + ("nreaders",), allowed="nreaders: 0, or kernel.release 2.6.23 or later")
    per_cpu, extra = divmod(nreaders, nr_cpus)
    reader = {"kind": "call_rcu_load", "work_us": READER_OP_US, "call_rcu_per_op": 0, "nice": 19}
    out = [writers]
    if per_cpu:
        out.append(CallRcuLoad(**reader, name="rcu_scale_reader", cpus="all", tasks_per_cpu=per_cpu))
    if extra:
        out.append(CallRcuLoad(**reader, name="rcu_scale_reader_extra", cpus=f"0-{extra - 1}", tasks_per_cpu=1))
    return out


def _check_async(workloads, kernel: Kernel) -> None:
    """rcuscale's asynchronous writer loop (call_rcu_hurry) exists from rcuscale's gp_async on;
    rcuscale runs one GP-writer test."""
    writers = [i for i, w in enumerate(workloads) if isinstance(w, RcuscaleWriter)]
    if len(writers) > 1:
        raise ScenarioError("a second rcuscale_writer workload (rcuscale runs one GP-writer test)",
                            path=("workloads", writers[1], "kind"), allowed="one rcuscale_writer")
    for i, work in enumerate(workloads):
        if isinstance(work, SyncLoop) and work.primitive == "call_rcu_hurry":
            try:
                check_module_param("rcuscale.gp_async", kernel.release)
            except ScenarioError as exc:
                raise ScenarioError(f"call_rcu_hurry is rcuscale's gp_async writer loop: {exc.problem}",
                                    path=("workloads", i, "primitive"), allowed=exc.allowed) from None


def _check_membarrier(workloads) -> None:
    """sys_membarrier() loops run in their own engine, without RCU workloads beside them."""
    kinds = [isinstance(w, MembarrierLoop) for w in workloads]
    if any(kinds) and not all(kinds):
        i = kinds.index(not kinds[0])
        raise ScenarioError("membarrier_loop workloads cannot share a variant with RCU workloads",
                            path=("workloads", i, "kind"),
                            allowed="only membarrier_loop workloads, or none")


#: kfree_rcu_flood keys that rcuscale's kfree test (rcuperf's before v5.10) gained after v5.6, with the
#: value that is the test of an earlier release: any other needs a release whose test has the parameter.
_KFREE_LATER_PARAMS = {"kfree_mult": 1, "kfree_rcu_test_single": False, "kfree_rcu_test_double": False,
                       "kfree_by_call_rcu": False}


def _check_kfree(workloads, kernel: Kernel) -> None:
    """At most one kfree flood, on a release with kfree_rcu(), with parameters its kfree test has."""
    floods = [i for i, w in enumerate(workloads) if isinstance(w, KfreeRcuFlood)]
    if len(floods) > 1:
        raise ScenarioError("a second kfree_rcu_flood workload (rcuscale runs one kfree test)",
                            path=("workloads", floods[1], "kind"), allowed="one kfree_rcu_flood")
    for i in floods:
        if not kernel.switches.kfree_rcu:
            raise ScenarioError(f"release {kernel.release} has no kfree_rcu() (added in v3.0)",
                                path=("workloads", i, "kind"), allowed="kernel.release 3.0 or later")
        if workloads[i].kfree_nthreads == 0:
            raise ScenarioError("0 threads: rcuscale would start no kfree thread and never print",
                                path=("workloads", i, "kfree_nthreads"),
                                allowed="an integer >= 1, or -k for the online CPUs minus k-1")
        for key, value in _KFREE_LATER_PARAMS.items():
            since = module_param_since(f"rcuscale.{key}", kernel.release)
            if getattr(workloads[i], key) != value and since is not None:
                raise ScenarioError(f"rcuscale's kfree test has no {key} in release {kernel.release} "
                                    f"(added in v{since})", path=("workloads", i, key),
                                    allowed=f"{str(value).lower()}, or kernel.release {since} or later")


def _check_kfree_by_call_rcu(workloads, kernel: Kernel, params: RcuParams) -> None:
    """kfree_by_call_rcu with CONFIG_RCU_LAZY: kfree_scale_init() first checks that one call_rcu()
    is lazy (invoked 2-3 s later with jiffies_lazy_flush at 2*HZ) and runs no test if it is not.
    Without CONFIG_RCU_LAZY it falls back to kfree_rcu(), so the key has no effect."""
    for i, work in enumerate(workloads):
        if not (isinstance(work, KfreeRcuFlood) and work.kfree_by_call_rcu and kernel.CONFIG_RCU_LAZY):
            continue
        path = ("workloads", i, "kfree_by_call_rcu")
        if not params.lazy:
            raise ScenarioError("rcuscale's laziness self-test fails with lazy RCU off at boot "
                                "(rcutree.enable_rcu_lazy=0 or CONFIG_RCU_LAZY_DEFAULT_OFF) and the "
                                "kfree test does not run", path=path,
                                allowed="false, or lazy RCU on at boot with every CPU offloaded")
        if len(params.nocb_cpus) != params.nr_cpu_ids:
            raise ScenarioError("rcuscale's laziness self-test passes only if its call_rcu() runs on an "
                                "offloaded CPU, and rcusim does not know which CPU runs rcuscale's init",
                                path=path, allowed="false, or every CPU offloaded "
                                                   "(CONFIG_RCU_NOCB_CPU_DEFAULT_ALL or rcu_nocbs=all)")


def _check_nice(workloads, params: RcuParams) -> None:
    """Nice weights need the fair class (CFS, v2.6.23): before it rcusim runs SCHED_OTHER
    in one-jiffy round robin, where nice would be ignored."""
    if params.switches.cfs:
        return
    for i, work in enumerate(workloads):
        if getattr(work, "nice", 0):
            raise ScenarioError("nice weights need the fair class (CFS, v2.6.23 and later); this release "
                                "runs SCHED_OTHER in rcusim's round robin", path=("workloads", i, "nice"),
                                allowed="nice: 0, or kernel.release 2.6.23 or later")


def _check_classic_smp(params: RcuParams, nr_cpus: int) -> None:
    """Classic RCU (before v2.6.29) is modelled on one CPU, the 2004 seed's machine: on
    several CPUs its grace periods would need the idle CPUs' ticks (before NO_HZ,
    v2.6.21) or nohz_cpu_mask (after), which rcusim does not model."""
    if not params.switches.tree_rcu and nr_cpus > 1:
        raise ScenarioError(f"classic RCU (kernel.release before 2.6.29) is modelled on one CPU, not "
                            f"{nr_cpus}", path=("hardware", "nr_cpus"),
                            allowed="1, or kernel.release 2.6.29 or later")


def _check_unpinned(workloads, params: RcuParams, topology: dict | None) -> None:
    """Placement and migration are the fair class's, over the machine's scheduling
    domains: unpinned tasks need both."""
    for i, work in enumerate(workloads):
        if getattr(work, "pinned", True):
            continue
        if not params.switches.cfs:
            raise ScenarioError("unpinned tasks need the fair class's placement (CFS, v2.6.23 and later); "
                                "this release runs SCHED_OTHER in rcusim's round robin",
                                path=("workloads", i, "pinned"),
                                allowed="true, or kernel.release 2.6.23 or later")
        if topology is None:
            raise ScenarioError("unpinned tasks are placed over the scheduling domains, and this hardware "
                                "profile gives no topology", path=("workloads", i, "pinned"),
                                allowed="true, or hardware.topology")


def _check_vfree(workloads, profile: str) -> None:
    """vmalloc() and vfree() need the profile's costs of them."""
    for i, work in enumerate(workloads):
        if isinstance(work, SyncLoop) and work.work_after == "vfree" and profile_vmalloc(profile) is None:
            raise ScenarioError(f"profile {profile!r} has no vmalloc()/vfree() costs",
                                path=("workloads", i, "work_after"),
                                allowed="none or kfree, or a profile with vmalloc costs: "
                                        + ", ".join(p for p in PROFILES if profile_vmalloc(p)))


def _check_trace_event(kernel, profile: str) -> None:
    """trace_event= needs the profile's price of a traced event, and the tracepoints where
    rcusim prices them: 6.12's code."""
    if "trace_event" not in parse_bootargs(kernel.bootargs):
        return
    token = _token_for(kernel.bootargs, "trace_event")
    if profile_tracing(profile) is None:
        raise ScenarioError(f"trace_event: profile {profile!r} does not say what a traced event costs",
                            path=_BOOTARGS_PATH, token=token,
                            allowed="no trace_event=, or a profile with a tracing section: "
                                    + ", ".join(p for p in PROFILES if profile_tracing(p)))
    if kernel.release_tuple < TRACEPOINT_SITES:
        sites = ".".join(map(str, TRACEPOINT_SITES))
        raise ScenarioError(f"trace_event: rcusim prices the tracepoints where {sites}'s code records them, "
                            f"not release {kernel.release}'s", path=_BOOTARGS_PATH, token=token,
                            allowed=f"kernel.release {sites} or later, or no trace_event=")


def _check_run_end(workloads, run: Run) -> None:
    """Finite workloads end a run; without them run.duration_s does."""
    finite = any(isinstance(w, FINITE_WORKLOADS) for w in workloads)
    if not finite and run.duration_s is None:
        raise ScenarioError("only workloads that never finish: nothing would end the run",
                            path=("workloads",),
                            allowed="set run.duration_s, or add a sync_loop, kfree_rcu_flood or "
                                    "rt_latency_probe workload")
    if finite and run.duration_s is not None:
        raise ScenarioError("the workloads end this run when they finish", path=("run", "duration_s"),
                            allowed="drop run.duration_s (run.max_sim_time_s bounds a run), or keep only "
                                    "call_rcu_load, readers and noise workloads")


def _check_readers(workloads, nr: int, kernel: Kernel) -> None:
    """Readers need callers to run against, fit in a second, one task per CPU, and no
    priority boosting."""
    owner: dict[int, int] = {}
    for i, work in enumerate(workloads):
        if not isinstance(work, Readers):
            continue
        if work.length_us * work.rate_per_s > 1e6:
            raise ScenarioError(
                f"{work.rate_per_s:g} sections/s of {work.length_us:g} us each do not fit in a second",
                path=("workloads", i, "rate_per_s"), allowed=f"at most {1e6 / work.length_us:g}")
        if work.preemptible and not kernel.CONFIG_PREEMPT_RCU:
            raise ScenarioError("preemptible readers need CONFIG_PREEMPT_RCU=y",
                                path=("workloads", i, "preemptible"),
                                allowed="false, or set kernel.CONFIG_PREEMPT_RCU: true")
        # Preemptible by default: CONFIG_RCU_BOOST depends on CONFIG_PREEMPT_RCU.
        if kernel.CONFIG_RCU_BOOST and work.preemptible is not False:
            raise ScenarioError("CONFIG_RCU_BOOST boosts readers preempted in their sections, which "
                                "rcusim does not model", path=("kernel", "CONFIG_RCU_BOOST"),
                                allowed="false, or readers with preemptible: false")
        for c in parse_cpulist(work.cpus, nr):
            if c in owner:
                raise ScenarioError(f"CPU {c} already has a reader task (workloads[{owner[c]}])",
                                    path=("workloads", i, "cpus"), allowed="disjoint CPU lists")
            owner[c] = i


def build_variant(name: str, data) -> VariantSpec:
    """Validate one variant's mapping and resolve it.

    Parameters
    ----------
    name : str
        Variant name.
    data : mapping
        ``{"hardware": ..., "kernel": ..., "workloads": [...], "run": ...}``.

    Returns
    -------
    VariantSpec

    Raises
    ------
    ScenarioError
        Naming the key path of the first problem (no file location).
    """
    try:
        variant = VariantInput.model_validate(data)
    except ValidationError as exc:
        raise scenario_error_from_validation(exc, data, VariantInput) from None
    return resolve_variant(name, variant)


# --------------------------------------------------------------------------
# pydantic errors -> ScenarioError
# --------------------------------------------------------------------------

_RANGE_TYPES = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}


def scenario_error_from_validation(exc: ValidationError, data, model) -> ScenarioError:
    """Turn the first error of a pydantic `ValidationError` into a ScenarioError.

    Parameters
    ----------
    exc : pydantic.ValidationError
        The error raised by ``model.model_validate(data)``.
    data : mapping
        The validated input, used to name the key path and the allowed values.
    model : type
        The pydantic model validated against.

    Returns
    -------
    ScenarioError
        With ``path`` set to the key path of the offending value.
    """
    errors = exc.errors(include_url=False)
    # A misspelt key shows as an unknown key and as the missing one it should have been:
    # report the unknown key, whose name is what the user wrote.
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    kind = err["type"]
    ctx = err.get("ctx") or {}
    path = _clean_loc(err["loc"], data)
    inner = ctx.get("error")
    if isinstance(inner, ScenarioError):
        sub = inner.path if inner.path else (tuple(inner.key.split(".")) if inner.key else ())
        return ScenarioError(inner.problem, path=path + tuple(sub), allowed=inner.allowed,
                             token=inner.token)
    if kind == "extra_forbidden":
        found = _type_at(model, path[:-1], data)
        keys = list(found[0].model_fields) if found and _is_model(found[0]) else []
        return ScenarioError(f"unknown key{did_you_mean(path[-1], keys)}", path=path, allowed=", ".join(keys) or None)
    if kind == "union_tag_invalid":
        return ScenarioError(f"unknown kind {ctx.get('tag')!r}{did_you_mean(ctx.get('tag'), WORKLOAD_KINDS)}",
                             path=path + ("kind",), allowed="one of: " + ", ".join(WORKLOAD_KINDS))
    if kind == "union_tag_not_found":
        # A workload without `kind` may have it misspelt: name that key, as for any other.
        written = [k for k in err["input"] if did_you_mean(k, ["kind"])] if isinstance(err["input"], dict) else []
        if written:
            return ScenarioError(f"unknown key{did_you_mean(written[0], ['kind'])}", path=path + (written[0],),
                                 allowed="kind, then the keys of that kind")
        return ScenarioError("required key is missing", path=path + ("kind",),
                             allowed="one of: " + ", ".join(WORKLOAD_KINDS))
    allowed = _describe_at(model, path, data)
    value = err.get("input")
    if kind == "missing":
        problem = "required key is missing"
    elif kind in _RANGE_TYPES:
        problem = f"{show_value(value)} is out of range"
    elif kind == "finite_number":
        problem = f"{show_value(value)} is not a finite number"
    elif kind == "too_short":
        problem = "the list is empty" if not value else f"{len(value)} items are too few"
    elif kind == "literal_error":
        problem = f"{show_value(value)} is not allowed"
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            problem = f"{show_value(value)} is a string, not a number (write it without quotes)"
    elif kind in ("value_error", "assertion_error"):
        problem = err["msg"].removeprefix("Value error, ")
    else:
        problem = f"{show_value(value)} is not valid"
    return ScenarioError(problem, path=path, allowed=allowed)


def _clean_loc(loc, data) -> tuple:
    """Drop the union tags pydantic puts into error locations (workloads.0.sync_loop.x)."""
    path: list = []
    node = data
    for comp in loc:
        if (path and isinstance(path[-1], int) and isinstance(node, dict)
                and isinstance(comp, str) and node.get("kind") == comp):
            continue
        path.append(comp)
        node = _child(node, comp)
    return tuple(path)


def _child(node, comp):
    """Return node[comp] for a mapping key or list index, or None."""
    if isinstance(node, dict):
        return node.get(comp)
    if isinstance(node, list) and isinstance(comp, int) and 0 <= comp < len(node):
        return node[comp]
    return None


def _is_model(obj) -> bool:
    return isinstance(obj, type) and issubclass(obj, BaseModel)


def _unwrap(ann):
    """Strip Annotated and Optional: return (core, metadata, nullable)."""
    meta: list = []
    nullable = False
    while True:
        origin = get_origin(ann)
        if origin is Annotated:
            args = get_args(ann)
            ann = args[0]
            for extra in args[1:]:
                meta.extend(extra.metadata if isinstance(extra, FieldInfo) else [extra])
            continue
        if origin in (Union, types.UnionType):
            members = [a for a in get_args(ann) if a is not type(None)]
            nullable = nullable or len(members) < len(get_args(ann))
            if len(members) == 1:
                ann = members[0]
                continue
        return ann, meta, nullable


def _pick_member(core, node):
    """For a union of workload models, pick the member named by node["kind"]."""
    if get_origin(core) in (Union, types.UnionType) and isinstance(node, dict):
        for member in get_args(core):
            if _is_model(member) and "kind" in member.model_fields:
                if node.get("kind") in get_args(member.model_fields["kind"].annotation):
                    return member
    return core


def _type_at(model, path, data):
    """Return (core type, metadata, nullable, FieldInfo or None) at `path`, or None."""
    ann, meta, info = model, [], None
    node = data
    for comp in path:
        core, _, _ = _unwrap(ann)
        core = _pick_member(core, node)
        if _is_model(core) and isinstance(comp, str):
            info = core.model_fields.get(comp)
            if info is None:
                return None
            ann, meta = info.annotation, list(info.metadata)
        elif get_origin(core) is list and isinstance(comp, int):
            ann, meta, info = get_args(core)[0], [], None
        elif get_origin(core) is dict:
            ann, meta, info = get_args(core)[1], [], None
        else:
            return None
        node = _child(node, comp)
    core, more, nullable = _unwrap(ann)
    return _pick_member(core, node), meta + more, nullable, info


def _describe_at(model, path, data) -> str | None:
    """Describe the values allowed at `path`."""
    found = _type_at(model, path, data)
    if found is None:
        return None
    core, meta, nullable, info = found
    extra = info.json_schema_extra if info is not None else None
    if isinstance(extra, dict) and "allowed" in extra:
        text = str(extra["allowed"])
    else:
        text = _describe(core, meta)
    return text + " or null" if nullable else text


def _describe(core, meta) -> str:
    """Describe a type and its constraints in words."""
    bounds = {}
    for m in meta:
        for attr in ("ge", "gt", "le", "lt", "min_length"):
            if getattr(m, attr, None) is not None:
                bounds[attr] = getattr(m, attr)
    if get_origin(core) is Literal:
        return "one of: " + ", ".join(str(a) for a in get_args(core))
    if core is bool:
        return "true or false"
    if core is int:
        lo, hi = bounds.get("ge"), bounds.get("le")
        if lo is not None and hi is not None:
            return f"an integer from {lo} to {hi}"
        if lo is not None:
            return f"an integer >= {lo}"
        return "an integer"
    if core is float:
        parts = []
        for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            if attr in bounds:
                parts.append(f"{sign} {bounds[attr]:g}")
        return "a number" + (" " + " and ".join(parts) if parts else "")
    if core is str:
        return "a string"
    if _is_model(core):
        return "a mapping with keys: " + ", ".join(core.model_fields)
    if get_origin(core) is list:
        item, _, _ = _unwrap(get_args(core)[0])
        members = get_args(item) if get_origin(item) in (Union, types.UnionType) else (item,)
        if all(_is_model(m) and "kind" in m.model_fields for m in members):
            what = "workloads, each a mapping with a kind (" + ", ".join(WORKLOAD_KINDS) + ")"
        else:
            what = "items"
        least = bounds.get("min_length")
        if least == 1:
            return f"a non-empty list of {what}"
        return f"a list of {'at least ' + str(least) + ' ' if least else ''}{what}"
    if get_origin(core) is dict:
        return "a mapping"
    return getattr(core, "__name__", str(core))
