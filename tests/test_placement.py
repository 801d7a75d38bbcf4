"""Unpinned tasks' input: placement settings the model or the kernel refuses. (Placement and load
balancing: tests/engine/test_placement.py and tests/engine/test_balance.py.)"""

from __future__ import annotations

import pytest

from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario

from tests.engine.conftest import scenario


@pytest.mark.parametrize("change, key", [
    ({"rt": True}, "pinned"),
    ({"pinned": True, "start_cpus": "0"}, "start_cpus"),
    ({"cpus": "0-7", "start_cpus": "9"}, "start_cpus"),
])
def test_bad_placement_settings_are_refused(change, key):
    data = scenario(**change)
    with pytest.raises(ScenarioError) as err:
        load_scenario(data)
    assert key in str(err.value)


def test_unpinned_needs_the_fair_class_and_a_topology():
    old = scenario(nr_cpus=8)
    old["kernel"]["release"] = "2.6.20"
    with pytest.raises(ScenarioError, match="2.6.23"):
        load_scenario(old)
    flat = scenario(profile="xeon-e5405-8cpu", nr_cpus=8)
    with pytest.raises(ScenarioError, match="topology"):
        load_scenario(flat)
