"""A traced kernel (trace_event=, cython_core/tracepoint.pxi): each event an enabled
tracepoint records costs its CPU the profile's measured price, at the sites 6.12's code
records it."""

from __future__ import annotations

import numpy as np
import pytest

from rcusim.engine.engine_input import engine_input
from rcusim.engine.reference import run_reference
from rcusim.errors import ScenarioError
from rcusim.input.bootargs import TRACEPOINTS, parse_bootargs
from rcusim.input.profiles import profile_tracing
from rcusim.input.scenario import load_scenario
from rcusim.results.run import run_scenario
from rcusim.twin.plan import SIM_TRACE_EVENT, TRACE_EVENTS

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


def test_the_twin_prices_what_the_guest_traces_but_printk():
    priced = {e.replace(":", "/") for e in parse_bootargs(SIM_TRACE_EVENT)["trace_event"]}
    assert priced == set(TRACE_EVENTS) - {"printk/console"}
    assert priced <= {e.replace(":", "/") for e in TRACEPOINTS}


@pytest.mark.parametrize("changes, problem", [
    ({"profile": "x86-64-server-2023"}, "profile 'x86-64-server-2023' does not say what a traced event costs"),
    ({"release": "6.6"}, "rcusim prices the tracepoints where 6.12's code records them, not release 6.6's"),
])
def test_a_trace_event_without_its_price_or_its_sites_is_refused(changes, problem):
    with pytest.raises(ScenarioError, match="trace_event") as err:
        load_scenario(scenario("trace_event=sched:sched_switch", **changes))
    assert problem in str(err.value) and "kernel.bootargs" in str(err.value)


@pytest.mark.parametrize("bootargs, problem", [
    ("trace_event=sched:sched_stat_runtime", "'sched:sched_stat_runtime' in 'trace_event=sched:sched_stat_runtime' "
                                             "is not modelled"),
    ("trace_event=rcu:rcu_fqs,rcu:rcu_fqs", "an event twice"),
    ("trace_event", "trace_event needs a list"),
])
def test_a_tracepoint_list_rcusim_cannot_price_is_refused(bootargs, problem):
    with pytest.raises(ScenarioError, match="trace_event") as err:
        parse_bootargs(bootargs)
    assert problem in str(err.value)


def test_the_reference_model_refuses_a_traced_kernel():
    spec = load_scenario(scenario("trace_event=sched:sched_switch", profile="qemu-tcg")).variants["default"]
    inp, _ = engine_input(spec)
    with pytest.raises(NotImplementedError, match="trace_event"):
        run_reference(inp, 0, 10**9)
