"""A traced kernel (trace_event=, cython_core/tracepoint.pxi): each event an enabled
tracepoint records costs its CPU the profile's measured price, at the sites 6.12's code
records it."""

from __future__ import annotations

import numpy as np

from rcusim import _core
from rcusim.input.bootargs import TRACEPOINTS
from rcusim.input.profiles import profile_tracing
from rcusim.input.scenario import load_scenario
from rcusim.results.run import run_scenario

EXP_EVENTS = ("snap", "start", "reset", "select", "startwait", "end", "endwake", "done")
"""What rcu_exp_grace_period records for one synchronize_rcu_expedited() that runs its own GP
(6.12's tree_exp.h)."""


def scenario(bootargs: str = "", primitive: str = "synchronize_rcu_expedited", profile: str = "qemu-tcg",
             release: str = "6.12", tasks: int = 1, loops: int = 5) -> dict:
    return {"name": "traced", "hardware": {"profile": profile, "nr_cpus": 2},
            "kernel": {"release": release, "HZ": 1000, "bootargs": bootargs},
            "workloads": [{"kind": "sync_loop", "tasks": tasks, "loops": loops, "think_us": 3000, "cpus": "0",
                           "primitive": primitive}]}


def run(data: dict):
    (v,) = run_scenario(load_scenario(data), progress=False).variants.values()
    return v


def test_each_expedited_call_that_runs_its_gp_records_its_eight_events():
    v = run(scenario("trace_event=rcu:rcu_exp_grace_period"))
    event_ns = profile_tracing("qemu-tcg")["event_ns"]
    assert v.counters["tracepoint_events"] == 5 * len(EXP_EVENTS)
    assert v.counters["tracepoint_ns"] == 5 * len(EXP_EVENTS) * event_ns


def test_a_traced_kernel_is_slower_by_the_events_on_each_calls_path():
    plain, traced = run(scenario()), run(scenario("trace_event=rcu:rcu_exp_grace_period"))
    event_ns = profile_tracing("qemu-tcg")["event_ns"]
    latency = [(v.requests.t_end_ns - v.requests.t_start_ns).to_numpy() for v in (plain, traced)]
    slower = latency[1] - latency[0]
    assert "tracepoint_events" not in plain.counters
    # The caller's own snap, start and done lie on its call's path at least; the kworker's,
    # and what they shift (a tick, the next wake-up), as the run has them.
    assert np.all(slower >= 3 * event_ns)


def test_every_wake_up_records_sched_waking_and_sched_wakeup():
    v = run(scenario("trace_event=sched:sched_waking,sched:sched_wakeup", primitive="synchronize_rcu", tasks=4))
    assert v.counters["wakeups"] > 20
    assert v.counters["tracepoint_events"] == 2 * v.counters["wakeups"]


def test_the_engine_prices_every_tracepoint_trace_event_accepts():
    """The input's list (rcusim.input.bootargs.TRACEPOINTS, which trace_event= accepts) and the
    engine's codes (_core.TRACEPOINTS) name the same tracepoints."""
    assert set(_core.TRACEPOINTS) == set(TRACEPOINTS)
