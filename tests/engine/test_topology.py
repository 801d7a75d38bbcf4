"""cython_core/topology.pxi: the core, LLC and socket of each CPU (numbered as the kernel
enumerates them: cores first, then their SMT siblings), the distance between two CPUs, and what
a cache-line transfer between them costs at that distance (the profile's line_ns)."""

from __future__ import annotations

import dataclasses

import numpy as np

from rcusim import _core
from rcusim.engine.engine_input import engine_input
from rcusim.input.scenario import load_scenario
from rcusim.kernel.cpus import DIST_LLC, DIST_REMOTE, DIST_SMT, DIST_SOCKET, cpu_distance, cpu_topology


def test_threads_are_numbered_cores_first():
    core, llc, socket = cpu_topology(64, smt=2, cores_per_llc=4, llcs_per_socket=4)
    assert core[0] == core[32] and core[31] == core[63]  # CPU c and c + 32 are siblings
    assert list(llc[:8]) == [0, 0, 0, 0, 1, 1, 1, 1] and llc[32] == 0
    assert socket[15] == 0 and socket[16] == 1
    d = lambda a, b: cpu_distance(a, b, core, llc, socket)  # noqa: E731
    assert (d(0, 32), d(0, 3), d(0, 4), d(0, 16)) == (DIST_SMT, DIST_LLC, DIST_SOCKET, DIST_REMOTE)


def wake_from_gp_run(callers_cpus: str, remote_line_ns: int):
    """32 CPUs in two sockets of 8 SMT-2 cores (CPUs 0-7 and 16-23 in socket 0): 64
    synchronize_rcu() callers on `callers_cpus`, woken by rcu_normal_wake_from_gp's kworker from
    the GP kthread's CPU 0; one cache-line transfer between sockets costs `remote_line_ns`.
    Returns the engine's records, the kworker's CPU time, and the counters."""
    data = {"name": "sockets", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 32,
                                            "topology": {"sockets": 2, "llcs_per_socket": 1, "cores_per_llc": 8,
                                                         "smt": 2}},
            "kernel": {"release": "6.12", "HZ": 1000, "bootargs": "rcutree.rcu_normal_wake_from_gp=1"},
            "workloads": [{"kind": "sync_loop", "tasks": 64, "loops": 10, "cpus": callers_cpus, "think_us": 1000}]}
    inp, _ = engine_input(load_scenario(data).variants["default"])
    line_ns = list(inp.topology.line_ns)
    line_ns[DIST_REMOTE] = remote_line_ns
    inp = dataclasses.replace(inp, topology=dataclasses.replace(inp.topology, line_ns=line_ns))
    eng = _core.Engine(inp, np.random.PCG64(0))
    assert eng.run(10**12, 10**9) == _core.EXIT_DONE
    worker = eng.entity_kinds()["kind"] == _core.ENTITY_KINDS["sr_worker"]
    return eng.requests(), eng.grace_periods(), int(eng.entity_runtime_ns()[worker].sum()), eng.counters()


def test_a_cache_line_costs_what_the_distance_between_its_cpus_costs():
    """line_cost(): a cache-line transfer between two CPUs costs the profile's line_ns for their
    distance: the same core, LLC, socket, or another socket. The kworker completing waiters
    beyond the first five (rcu_sr_normal_gp_cleanup_work()) wakes each idle one by setting its
    polling flag (set_nr_if_polling(): a line from the kworker's CPU to the wakee's). A dearer
    line between sockets changes nothing for callers in the kworker's socket, and costs the
    kworker at least that much more for each such wake-up of a caller in the other socket."""
    extra = 10_000 - 108
    same = [wake_from_gp_run("1-7,17-23", line) for line in (108, 108 + extra)]
    for a, b in zip(same[0][:2], same[1][:2]):
        assert all(np.array_equal(a[k], b[k]) for k in a)  # the same requests and grace periods
    assert same[0][2] == same[1][2]
    cheap, dear = (wake_from_gp_run("8-15,24-31", line) for line in (108, 108 + extra))
    gps, polled = len(dear[1]["gp_seq"]), dear[3]["wakeups_polling"]
    assert polled > 5 * gps  # more than the GP kthread's own five a grace period
    assert dear[2] - cheap[2] >= extra * (polled - 5 * gps)
