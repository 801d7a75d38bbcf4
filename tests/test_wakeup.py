"""The machine's topology as the input gives it: a topology that does not add up is refused.
(The wake-ups it shapes are tested in tests/engine/test_sched.py.)"""

from __future__ import annotations

import pytest

from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario


def test_a_topology_that_does_not_add_up_is_refused():
    data = {"hardware": {"profile": "x86-64-server-2023", "nr_cpus": 64,
                         "topology": {"sockets": 2, "llcs_per_socket": 8, "cores_per_llc": 4, "smt": 2}},
            "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 1}]}
    with pytest.raises(ScenarioError, match="not nr_cpus = 64"):
        load_scenario(data)
    data["hardware"].update(profile="xeon-e5405-8cpu", nr_cpus=8,
                            topology={"sockets": 2, "llcs_per_socket": 2, "cores_per_llc": 2, "smt": 1})
    with pytest.raises(ScenarioError, match="no topology"):
        load_scenario(data)
