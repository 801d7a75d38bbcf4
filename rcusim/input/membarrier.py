"""sys_membarrier() in a loop: the workload (kind ``membarrier_loop``) and its costs.

The workload is seed 002's (LKML, "[RFC PATCH] introduce sys_membarrier():
process-wide memory barrier (v3b)", Mathieu Desnoyers, 12 Jan 2010). The costs
the sys_membarrier() engine reads (:func:`membarrier_costs`) are the platform
costs of the hardware profile plus those of
``rcusim/profiles/membarrier/<profile>.yaml``, each with its source. The runs
and the calibration are in rcusim.engine.membarrier.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from typing import Annotated, Literal, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field

from rcusim.errors import ScenarioError
from rcusim.input.profiles import load_profile, profile_sources

__all__ = ["SEED_CALLS", "MAX_CALLS", "MembarrierLoop", "membarrier_costs", "membarrier_cost_sources",
           "cpus_per_socket"]

SEED_CALLS = 10_000_000
"""Calls per measurement in seed 002."""
# Costs the membarrier file gives; the rest come from the hardware profile.
_PROFILE_KEYS = ("ipi_send_ns", "ipi_latency_ns", "tick_ns")
_FILE_KEYS = ("syscall_ns", "smp_mb_ns", "rq_read_ns", "rq_lock_ns", "cpumask_alloc_ns",
              "ipi_entry_ns", "ipi_exit_ns", "csd_ack_ns", "ipi_xsocket_ns", "cfd_setup_ns",
              "cfd_line_ns")
MAX_CALLS = 1_000_000_000
"""Most calls one run may make (about 100 s of engine time)."""


# --------------------------------------------------------------------------
# Costs
# --------------------------------------------------------------------------

def _cost_dir():
    return resources.files("rcusim").joinpath("profiles", "membarrier")


@functools.lru_cache(maxsize=None)
def _read_cost_file(profile: str) -> dict:
    """Read and check ``profiles/membarrier/<profile>.yaml``; cached, not to be mutated."""
    entry = _cost_dir().joinpath(f"{profile}.yaml")
    if not entry.is_file():
        known = sorted(e.name[:-5] for e in _cost_dir().iterdir() if e.name.endswith(".yaml"))
        raise ScenarioError(f"hardware profile {profile!r} has no sys_membarrier() costs",
                            key="hardware.profile", allowed="one of: " + ", ".join(known))
    data = yaml.safe_load(entry.read_text(encoding="utf-8"))
    costs = data.get("costs") if isinstance(data, dict) else None
    if not isinstance(costs, dict) or set(costs) != set(_FILE_KEYS):
        raise ValueError(f"membarrier costs {profile!r} must give exactly: {', '.join(_FILE_KEYS)}")
    for name, item in costs.items():
        ok = (isinstance(item, dict) and set(item) == {"value", "source"}
              and isinstance(item["value"], int) and not isinstance(item["value"], bool)
              and item["value"] >= 0 and isinstance(item["source"], str) and item["source"].strip())
        if not ok:
            raise ValueError(f"membarrier costs {profile!r}: {name} must be "
                             "{value: <int ns >= 0>, source: <text>}")
    topo = data.get("topology")
    if not (isinstance(topo, dict) and isinstance(topo.get("cpus_per_socket"), int)
            and topo["cpus_per_socket"] >= 1):
        raise ValueError(f"membarrier costs {profile!r}: topology.cpus_per_socket must be an int >= 1")
    return data


def membarrier_costs(profile: str = "xeon-e5405-8cpu",
                     platform_costs: Mapping[str, int] | None = None) -> dict[str, int]:
    """Return every cost the sys_membarrier() engine reads, in ns.

    Parameters
    ----------
    profile : str
        Hardware profile; it needs a file ``rcusim/profiles/membarrier/<profile>.yaml``.
    platform_costs : mapping of str to int, optional
        The variant's resolved platform costs (``VariantSpec.hardware.costs``,
        profile plus overrides); ``ipi_send_ns``, ``ipi_latency_ns`` and
        ``tick_ns`` are taken from it. Default: the profile's own values.

    Returns
    -------
    dict of str to int
        Every name of ``rcusim._membarrier.COST_KEYS``.
    """
    data = _read_cost_file(profile)
    platform = dict(platform_costs) if platform_costs is not None else load_profile(profile)
    costs = {name: int(platform[name]) for name in _PROFILE_KEYS}
    costs.update({name: data["costs"][name]["value"] for name in _FILE_KEYS})
    return costs


def membarrier_cost_sources(profile: str = "xeon-e5405-8cpu") -> dict[str, str]:
    """Return where each cost of :func:`membarrier_costs` comes from."""
    sources = {name: src for name, src in profile_sources(profile).items() if name in _PROFILE_KEYS}
    for name, item in _read_cost_file(profile)["costs"].items():
        sources[name] = " ".join(item["source"].split())
    return sources


def cpus_per_socket(profile: str = "xeon-e5405-8cpu") -> int:
    """CPUs per socket of the profile's machine."""
    return _read_cost_file(profile)["topology"]["cpus_per_socket"]


# --------------------------------------------------------------------------
# The workload
# --------------------------------------------------------------------------

class MembarrierLoop(BaseModel):
    """One thread calls sys_membarrier() in a loop; T other threads busy-loop.

    The system call is the v3b patch of seed 002 (Linux 2.6.33-rc): it scans
    the run queues of the process's threads, reading ``rq->curr->mm`` (under
    the run-queue lock if `rq_lock`), and sends ``membarrier_ipi`` (one
    ``smp_mb()``) to every CPU running the process, with wait=1, through the
    IPI-many code of kernel/smp.c as of 2.6.28-2.6.37. Each value of `threads`
    is one run.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True,
                              use_attribute_docstrings=True)

    kind: Literal["membarrier_loop"]
    """Workload kind."""
    name: Optional[str] = None
    """Name used in results; default: the kind and the workload's index."""
    threads: Annotated[list[Annotated[int, Field(ge=1, le=8191)]], Field(min_length=1, max_length=64)]
    """Numbers T of busy threads to run, one run each; each T < hardware.nr_cpus."""
    calls: Annotated[int, Field(ge=1, le=MAX_CALLS)] = SEED_CALLS
    """sys_membarrier() calls per run (the seed times 10,000,000)."""
    ipi: Literal["single", "many", "adaptive"] = "adaptive"
    """IPI scheme: single IPIs, cpumask + IPI-many, or single up to adaptive_threshold targets."""
    adaptive_threshold: Annotated[int, Field(ge=1, le=8191)] = 1
    """ADAPT_IPI_THRESHOLD: most targets served by single IPIs (ipi: adaptive)."""
    rq_lock: bool = False
    """Take each scanned run queue's lock (spin_lock_irq) around the rq->curr->mm read."""
    placement: Literal["spread", "packed"] = "spread"
    """Where the busy threads run: spread over the sockets as the load balancer does, or
    packed onto the caller's socket first."""
    caller_cpu: Annotated[int, Field(ge=0, le=8191)] = 0
    """CPU of the calling thread."""

    def check_cpus(self, nr_cpus: int, path: tuple = ()) -> None:
        """Raise :class:`ScenarioError` unless every run fits on `nr_cpus` CPUs."""
        if self.caller_cpu >= nr_cpus:
            raise ScenarioError(f"CPU {self.caller_cpu} does not exist", path=path + ("caller_cpu",),
                                allowed=f"an integer from 0 to {nr_cpus - 1} (hardware.nr_cpus - 1)")
        for i, t in enumerate(self.threads):
            if t >= nr_cpus:
                raise ScenarioError(f"{t} busy threads and the caller need {t + 1} CPUs",
                                    path=path + ("threads", i),
                                    allowed=f"an integer from 1 to {nr_cpus - 1} (hardware.nr_cpus - 1)")
