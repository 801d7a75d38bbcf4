"""The fair class's arithmetic (kernel/sched/fair.c, core.c): nice weights,
tunables scaled with the CPU count, and the conversion to virtual time.

The engine computes with the same numbers in ``cython_core/fair.pxi``; the
reference model's ``rcusim/engine/reference/fair.py`` uses this module.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SCHED_PRIO_TO_WEIGHT", "NICE_0_LOAD", "POLICY_RR", "POLICY_CFS", "POLICY_EEVDF",
           "weight_of", "calc_delta_fair", "FairTunables", "fair_tunables"]

SCHED_PRIO_TO_WEIGHT = (
    88761, 71755, 56483, 46273, 36291,
    29154, 23254, 18705, 14949, 11916,
    9548, 7620, 6100, 4904, 3906,
    3121, 2501, 1991, 1586, 1277,
    1024, 820, 655, 526, 423,
    335, 272, 215, 172, 137,
    110, 87, 70, 56, 45,
    36, 29, 23, 18, 15,
)
"""sched_prio_to_weight[] (kernel/sched/core.c): the weight of nice -20 .. 19."""

NICE_0_LOAD = 1024

POLICY_RR, POLICY_CFS, POLICY_EEVDF = 0, 1, 2
"""SCHED_OTHER before CFS (v2.6.23: rcusim's one-jiffy round robin), CFS, EEVDF (v6.6)."""


def weight_of(nice: int) -> int:
    """The load weight of a nice value, -20 .. 19."""
    return SCHED_PRIO_TO_WEIGHT[nice + 20]


def calc_delta_fair(delta_ns: int, weight: int) -> int:
    """calc_delta_fair(): real time to virtual time, delta * NICE_0_LOAD / weight."""
    return delta_ns * NICE_0_LOAD // weight


@dataclass(frozen=True)
class FairTunables:
    """The fair class's tunables after update_sysctl() on `nr_cpus` CPUs, in ns."""

    base_slice_ns: int
    """EEVDF: sysctl_sched_base_slice."""
    latency_ns: int
    """CFS: sysctl_sched_latency (the period for up to sched_nr_latency tasks)."""
    min_gran_ns: int
    """CFS: sysctl_sched_min_granularity."""
    wakeup_gran_ns: int
    """CFS: sysctl_sched_wakeup_granularity."""
    nr_latency: int
    """CFS: sched_nr_latency = latency / min_granularity."""


def fair_tunables(nr_cpus: int, *, base_slice_700us: bool) -> FairTunables:
    """The tunables with SCHED_TUNABLESCALING_LOG, the default: each base value times
    1 + ilog2(min(nr_cpus, 8)) (get_update_sysctl_factor()). EEVDF's base slice is
    0.70 ms from v6.15 (`base_slice_700us`), 0.75 ms before."""
    factor = 1 + (min(nr_cpus, 8).bit_length() - 1)
    latency, min_gran = 6_000_000 * factor, 750_000 * factor
    base_slice = 700_000 if base_slice_700us else 750_000
    return FairTunables(base_slice_ns=base_slice * factor, latency_ns=latency, min_gran_ns=min_gran,
                        wakeup_gran_ns=1_000_000 * factor, nr_latency=latency // min_gran)
