"""A callback load's input: what ends a run is explicit. (The load and its callbacks in the
engine: tests/engine/test_call_rcu_load.py.)"""

from __future__ import annotations

import copy

import pytest

from rcusim import load_scenario
from rcusim.errors import ScenarioError

from tests.engine.test_call_rcu_load import LOAD


def test_what_ends_a_run_is_explicit():
    no_end = copy.deepcopy(LOAD)
    del no_end["run"]
    with pytest.raises(ScenarioError, match="nothing would end the run") as err:
        load_scenario(no_end)
    assert "run.duration_s" in str(err.value)
    both = copy.deepcopy(LOAD)
    both["workloads"].append({"kind": "sync_loop", "tasks": 1, "loops": 1})
    with pytest.raises(ScenarioError) as err:
        load_scenario(both)
    assert str(err.value).startswith("run.duration_s:")
