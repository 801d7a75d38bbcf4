"""Scheduling domains as x86 Linux builds them from the CPU topology
(kernel/sched/topology.c: sd_init(), sd_degenerate(); arch/x86/kernel/smpboot.c's
table SMT -> MC -> PKG, with a level above for a machine of several sockets).

Each level groups the CPUs that share a core (SMT), an LLC (MC), a socket (PKG)
or the machine (NUMA in the kernel; one flat level here). A level whose domains
are no larger than the level below's is degenerate and removed, as
sd_degenerate() and sd_parent_degenerate() remove it: on a machine without SMT
there is no SMT level, and with one LLC per socket no MC level distinct from PKG.

The engine balances load over these levels (cython_core/balance.pxi) and
searches the LLC level for idle CPUs (cython_core/placement.pxi).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SchedDomains", "sched_domains", "SD_BUSY_FACTOR", "SYSCTL_SCHED_MIGRATION_COST_NS"]

SD_BUSY_FACTOR = 16
"""sd->busy_factor: a busy CPU balances 16 times less often (sd_init())."""

SYSCTL_SCHED_MIGRATION_COST_NS = 500_000
"""sysctl_sched_migration_cost: a task that ran within it is cache-hot (task_hot()),
and a CPU idle for less on average does not balance when it goes idle."""


@dataclass(frozen=True)
class SchedDomains:
    """The non-degenerate levels, lowest first, and each CPU's domain at each level."""

    names: tuple[str, ...]
    """Level names, lowest first: some of SMT, MC, PKG, NUMA."""
    imbalance_pct: np.ndarray
    """sd->imbalance_pct per level: 110 at SMT, 117 above (sd_init())."""
    cache_nice_tries: np.ndarray
    """sd->cache_nice_tries per level: 0 at SMT, 1 above."""
    shares_llc: np.ndarray
    """The level's domains share an LLC (SD_SHARE_PKG_RESOURCES): SMT and MC."""
    domain_of: np.ndarray
    """(levels, nr_cpus) int32: the index of each CPU's domain at each level, numbered
    over all levels (a level's domains are consecutive)."""
    domain_cpus: np.ndarray
    """int32: the CPUs of every domain, in CPU id order, domain after domain."""
    domain_first: np.ndarray
    """int32, one more than domains: where each domain's CPUs start in domain_cpus."""
    domain_level: np.ndarray
    """int32: the level of each domain."""


def sched_domains(core: np.ndarray, llc: np.ndarray, socket: np.ndarray) -> SchedDomains:
    """The domains of a machine whose CPUs have these core, LLC and socket ids."""
    nr_cpus = len(core)  # 0: no topology, no domains
    keys = {"SMT": core, "MC": llc, "PKG": socket, "NUMA": np.zeros(nr_cpus, dtype=np.int32)}
    names, ids, prev_sizes = [], [], None
    for name, key in keys.items():
        _, dom, sizes = np.unique(key, return_inverse=True, return_counts=True)
        # sd_degenerate(): a domain of one CPU; sd_parent_degenerate(): the same span as below.
        if nr_cpus == 0 or sizes.max() <= 1 or (prev_sizes is not None and len(sizes) == len(prev_sizes)):
            continue
        names.append(name)
        ids.append(dom.astype(np.int32))
        prev_sizes = sizes
    domain_of = np.zeros((len(names), nr_cpus), dtype=np.int32)
    cpus, first, level = [], [0], []
    base = 0
    for lvl, dom in enumerate(ids):
        n = int(dom.max()) + 1
        domain_of[lvl] = dom + base
        for d in range(n):
            members = np.flatnonzero(dom == d).astype(np.int32)
            cpus.append(members)
            first.append(first[-1] + len(members))
            level.append(lvl)
        base += n
    smt = np.array([n == "SMT" for n in names])
    return SchedDomains(
        names=tuple(names),
        imbalance_pct=np.where(smt, 110, 117).astype(np.int32),
        cache_nice_tries=np.where(smt, 0, 1).astype(np.int32),
        shares_llc=np.array([n in ("SMT", "MC") for n in names], dtype=np.int8),
        domain_of=domain_of,
        domain_cpus=np.concatenate(cpus) if cpus else np.zeros(0, dtype=np.int32),
        domain_first=np.asarray(first, dtype=np.int32),
        domain_level=np.asarray(level, dtype=np.int32),
    )
