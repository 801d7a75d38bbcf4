"""cython_core/locking.pxi: rcu_node spinlocks (a waiter spins until the holder's release) and
sleeping mutexes (FIFO waiters; the plain mutex's queue jumping, bounded by its hand-off)."""

from __future__ import annotations

import dataclasses

import numpy as np

from rcusim import _core
from rcusim.engine.engine_input import engine_input
from rcusim.input.scenario import load_scenario

from tests.engine.conftest import metrics


def test_queue_jumping_under_a_plain_mutex_worsens_the_tail(storm32):
    rt, plain = metrics(storm32, "rt_mutex"), metrics(storm32, "mutex")
    assert plain["latency_us"]["p99"] > 2 * rt["latency_us"]["p99"]
    assert plain["latency_us"]["max"] > 2 * rt["latency_us"]["max"]
    assert plain["batching"] < rt["batching"]
    counters = storm32.variants["mutex"].counters
    assert counters["exp_mutex_steals"] > 0
    assert storm32.variants["rt_mutex"].counters["exp_mutex_steals"] == 0


def rnp_spin_ns(nr_cpus: int, tasks: int, hold_factor: int) -> int:
    """The time CPUs spent spinning on rcu_node locks (counter rnp_lock_wait_ns) while `tasks`
    synchronize_rcu() callers loop on `nr_cpus` CPUs, each hold of a lock `hold_factor` times
    the profile's rnp_lock_ns."""
    data = {"name": "rnp_lock", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": nr_cpus},
            "kernel": {"release": "6.12", "HZ": 1000},
            "workloads": [{"kind": "sync_loop", "tasks": tasks, "loops": 20, "think_us": 50}]}
    inp, _ = engine_input(load_scenario(data).variants["default"])
    inp = dataclasses.replace(inp, tree=dataclasses.replace(inp.tree, rnp_lock_ns=inp.tree.rnp_lock_ns * hold_factor))
    eng = _core.Engine(inp, np.random.PCG64(0))
    assert eng.run(10**12, 10**9) == _core.EXIT_DONE
    return eng.counters()["rnp_lock_wait_ns"]


def test_an_rcu_node_lock_waiter_spins_until_the_holder_releases_it():
    """raw_spin_lock_rcu_node(): a CPU that finds rnp->lock held spins until its holder releases
    it. Alone on one CPU nothing ever holds a lock another wants: no spin. With 16 CPUs
    reporting quiescent states and requesting grace periods some find it held, and the longer
    each hold, the longer they spin."""
    assert rnp_spin_ns(1, 4, 1) == rnp_spin_ns(1, 4, 4) == 0
    spins = [rnp_spin_ns(16, 64, k) for k in (1, 2, 4)]
    assert 0 < spins[0]
    assert spins[1] >= 1.5 * spins[0] and spins[2] >= 1.5 * spins[1]
