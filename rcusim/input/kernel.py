"""The ``kernel`` part of a scenario variant: the release whose behaviour to model, HZ,
``CONFIG_*`` options and the kernel command line (:class:`Kernel`), with the Kconfig rules."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Literal, Optional

from pydantic import Field, field_validator, model_validator

from rcusim.errors import ScenarioError
from rcusim.input.base import MAX_CPUS, InputModel
from rcusim.input.bootargs import parse_bootargs
from rcusim.input.releases import PATCHES, RELEASE_ALLOWED, SWITCHES, ReleaseSwitches, parse_release, release_switches


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


class Kernel(InputModel):
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
        if self.CONFIG_RCU_NOCB_CPU and not release_switches(self.release_tuple).rcu_nocb_cpu:
            since = ".".join(map(str, next(s.since for s in SWITCHES if s.name == "rcu_nocb_cpu")))
            raise ScenarioError(f"CONFIG_RCU_NOCB_CPU does not exist in release {self.release}: callback "
                                f"offloading came with v{since}", key="CONFIG_RCU_NOCB_CPU",
                                allowed=f"false, or kernel.release {since} or later")
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
