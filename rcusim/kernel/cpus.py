"""The machine's CPU topology as Linux numbers it on x86: which core, LLC and
socket each CPU id belongs to, and the distance between two CPUs.

Linux enumerates the first hardware thread of every core before the SMT
siblings (CPU c and c + cores are siblings); cores fill LLC domains, which fill
sockets. ``cpus_share_cache()`` is "same LLC".
"""

from __future__ import annotations

import numpy as np

__all__ = ["DIST_SMT", "DIST_LLC", "DIST_SOCKET", "DIST_REMOTE", "cpu_topology", "cpu_distance"]

DIST_SMT, DIST_LLC, DIST_SOCKET, DIST_REMOTE = 0, 1, 2, 3
"""SMT siblings, same LLC, same socket, other socket."""


def cpu_topology(nr_cpus: int, smt: int, cores_per_llc: int, llcs_per_socket: int):
    """Core, LLC and socket of every CPU id, as three int32 arrays.

    The last core, LLC or socket may be partly filled when `nr_cpus` is not a
    multiple of the building blocks.
    """
    cores = -(-nr_cpus // smt)
    cpu = np.arange(nr_cpus)
    core = (cpu % cores).astype(np.int32)
    llc = (core // cores_per_llc).astype(np.int32)
    socket = (llc // llcs_per_socket).astype(np.int32)
    return core, llc, socket


def cpu_distance(a: int, b: int, core, llc, socket) -> int:
    """DIST_* between CPUs a and b (a != b)."""
    if core[a] == core[b]:
        return DIST_SMT
    if llc[a] == llc[b]:
        return DIST_LLC
    if socket[a] == socket[b]:
        return DIST_SOCKET
    return DIST_REMOTE
