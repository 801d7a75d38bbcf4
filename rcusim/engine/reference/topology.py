"""The machine's topology: what a cache-line transfer between two CPUs costs, by their
distance (same core, LLC, socket, or none) and the profile's line_ns; mirrors
cython_core/topology.pxi."""

from __future__ import annotations

from rcusim.kernel.cpus import cpu_distance


def line_cost(sim, a, b) -> int:
    """One cache-line transfer between CPUs a and b."""
    s = sim.inp.topology
    return s.line_ns[cpu_distance(a.index, b.index, s.cpu_core, s.cpu_llc, s.cpu_socket)]
