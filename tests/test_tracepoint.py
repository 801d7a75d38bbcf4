"""A traced kernel's input (trace_event=): the tracepoints the twin prices, and a list rcusim
cannot price refused. (What each event costs in the engine: tests/engine/test_tracepoint.py.)"""

from __future__ import annotations

import pytest

from rcusim.engine.engine_input import engine_input
from rcusim.engine.reference import run_reference
from rcusim.errors import ScenarioError
from rcusim.input.bootargs import TRACEPOINTS, parse_bootargs
from rcusim.input.scenario import load_scenario
from rcusim.twin.plan import SIM_TRACE_EVENT, TRACE_EVENTS

from tests.engine.test_tracepoint import scenario


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
