"""The ``hardware`` part of a scenario variant: a named profile of platform costs, a CPU
count, idle states and topology (:class:`Hardware`), and the same resolved with its costs
(:class:`HardwareSpec`)."""

from __future__ import annotations

from typing import Annotated, Optional

from pydantic import Field, create_model, field_validator, model_validator

from rcusim.errors import ScenarioError
from rcusim.input.base import CostNs, MAX_COST_NS, MAX_CPUS, InputModel
from rcusim.input.profiles import (COST_NAMES, IDLE_WAKE_COSTS, MAX_IDLE_STATES, PROFILES, load_profile,
                                   profile_halt_poll, profile_idle_states, profile_memory_mb, profile_sources,
                                   profile_topology, profile_wakeup_idle)


class Costs(InputModel):
    """Platform costs in integer nanoseconds (a profile plus overrides)."""

    ctxsw_ns: CostNs
    """Context switch between two tasks on one CPU."""
    ttwu_ns: CostNs
    """The waker's cost of try_to_wake_up() for one task."""
    wakeup_busy_ns: CostNs
    """Delay until a task woken from another CPU is queued on a busy target (remote-wake IPI, one way)."""
    wakeup_idle_median_ns: Optional[CostNs] = None
    """Median wake-up latency of an idle CPU (drawn lognormal from median and p99, or from the
    profile's measured distribution unless a scenario gives either); only for a profile without
    idle states."""
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
    raise RuntimeError("rcusim.input.hardware.Costs and rcusim.input.profiles.COST_NAMES disagree")

CostOverrides = create_model(
    "CostOverrides",
    __base__=InputModel,
    __doc__="Costs that replace a profile's values, in ns; unknown cost names are errors.",
    **{name: (Optional[CostNs], Field(None, description=Costs.model_fields[name].description))
       for name in COST_NAMES},
)


class IdleState(InputModel):
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


class Topology(InputModel):
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


class Hardware(InputModel):
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
    memory_mb: Optional[Annotated[int, Field(ge=64, le=1 << 24)]] = None
    """The machine's memory in MB (kvm.sh's --memory), replacing the profile's: it sizes the page
    allocator's per-CPU lists (rcusim.kernel.page_alloc)."""

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

    def resolved_memory_mb(self) -> int | None:
        """The scenario's memory size, else the profile's; None if neither says."""
        return self.memory_mb if self.memory_mb is not None else profile_memory_mb(self.profile)

    def resolved_wakeup_idle(self) -> dict | None:
        """The profile's measured idle wake-up distribution, unless the scenario gives its own
        median or p99 (then the lognormal of those)."""
        if any(getattr(self.costs, name) is not None for name in IDLE_WAKE_COSTS):
            return None
        return profile_wakeup_idle(self.profile)

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


class HardwareSpec(InputModel):
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
    wakeup_idle: Optional[dict] = None
    """The idle wake-up latency's measured distribution (rcusim.input.profiles.profile_wakeup_idle),
    or None: the lognormal of wakeup_idle_median_ns and wakeup_idle_p99_ns (which a scenario's
    overrides of either always give)."""
    memory_mb: Optional[int] = None
    """The machine's memory in MB (Hardware.resolved_memory_mb), or None if not given."""
    pcp_start_pages: int = 0
    """Pages on each CPU's unmovable order-0 list as the run begins
    (rcusim.input.profiles.profile_pcp_start_pages)."""
    thread_start: Optional[dict] = None
    """How the twin's load helper creates its threads (rcusim.input.profiles.profile_thread_start),
    or None if the profile does not say."""
    cost_sources: dict[str, str]
    """Where each cost comes from."""
