"""cython_core/readers.pxi: the readers workload, tasks in rcu_read_lock() / rcu_read_unlock()
loops: a section of length_us, then a gap that makes rate_per_s sections a second, spent
asleep (the CPU free for others, or idle) or busy (between: busy)."""

from __future__ import annotations

import numpy as np

from rcusim.engine.simulate import build_engine
from rcusim.input.scenario import load_scenario

RUN_NS = 500_000_000


def busy_share(rate_per_s: float, between: str) -> np.ndarray:
    """Each CPU's busy share over RUN_NS under two reader tasks of 100 us sections."""
    data = {"name": "readers", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2},
            "kernel": {"release": "6.12", "HZ": 1000},
            "workloads": [{"kind": "readers", "cpus": "0-1", "length_us": 100, "rate_per_s": rate_per_s,
                           "between": between}],
            "run": {"duration_s": RUN_NS / 1e9}}
    eng, _ = build_engine(load_scenario(data).variants["default"], 0)
    eng.run(RUN_NS, 10**9)
    return eng.sched_stats()["busy_ns"] / RUN_NS


def test_a_sleeping_readers_cpu_is_busy_for_its_sections_and_a_busy_readers_throughout():
    """Asleep between sections, a reader keeps its CPU busy for at most its sections' share
    (length x rate, 10 % here: the gaps, and the CPU's wake-ups from idle, are not busy), more
    at a higher rate; busy between them, for the whole run."""
    slow, fast, busy = busy_share(1000, "sleep"), busy_share(2000, "sleep"), busy_share(1000, "busy")
    assert np.all(slow > 0.05) and np.all(slow <= 0.10 + 0.01)
    assert np.all(fast > 1.4 * slow) and np.all(fast <= 0.20 + 0.01)
    assert np.all(busy > 0.99)
