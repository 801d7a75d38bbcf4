"""The fair class's input: nice values the kernel refuses, before CFS or on an RT task, and the
engine input's weights. (The fair class itself: tests/engine/test_fair.py.)"""

from __future__ import annotations

import pytest

from rcusim.engine.engine_input import engine_input
from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario
from rcusim.kernel.fair import weight_of

from tests.engine.conftest import two_hogs


def test_nice_out_of_range_and_nice_on_rt_are_refused():
    data = two_hogs("6.6", nice_b=20)
    with pytest.raises(ScenarioError, match="nice"):
        load_scenario(data)
    data = two_hogs("6.6")
    data["workloads"][1]["rt"] = True
    with pytest.raises(ScenarioError, match="nice"):
        load_scenario(data)


def test_nice_before_cfs_is_refused():
    data = two_hogs("2.6.20")
    data["hardware"]["nr_cpus"] = 1  # classic RCU is modelled on one CPU
    with pytest.raises(ScenarioError, match="fair class"):
        load_scenario(data)
    data["workloads"][1]["nice"] = 0
    load_scenario(data)  # the round robin of rcusim, without weights


def test_readers_take_nice_too():
    data = two_hogs("6.6", nice_b=0)
    data["workloads"].append({"kind": "readers", "cpus": "1", "length_us": 5, "rate_per_s": 1000, "nice": 10})
    inp, _ = engine_input(load_scenario(data).variants["default"])
    assert inp.readers.weight == [weight_of(10)]
    data["workloads"][-1]["rt"] = True
    with pytest.raises(ScenarioError, match="nice"):
        load_scenario(data)
