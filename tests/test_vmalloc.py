"""`work_after: vfree`'s input: a profile without vmalloc costs is refused. (The vmap locks and
the lazy purge: tests/engine/test_vmalloc.py.)"""

from __future__ import annotations

import copy

import pytest

from rcusim import load_scenario
from rcusim.errors import ScenarioError

from tests.engine.test_vmalloc import SCENARIO


def test_a_profile_without_vmalloc_costs_is_refused():
    data = copy.deepcopy(SCENARIO)
    data["hardware"] = {"profile": "xeon-e5405-8cpu", "nr_cpus": 8}
    with pytest.raises(ScenarioError) as err:
        load_scenario(data)
    assert str(err.value).startswith("workloads[0].work_after:")
