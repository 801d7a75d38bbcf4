"""Lazy RCU's input: its knobs before their release are refused. (Lazy callbacks in the
bypass: tests/engine/test_tree_nocb.py.)"""

from __future__ import annotations

import copy

import pytest

from rcusim import load_scenario
from rcusim.errors import ScenarioError

from tests.engine.conftest import LAZY_BASE as BASE


@pytest.mark.parametrize("kernel, key", [
    ({"release": "6.1"}, "CONFIG_RCU_LAZY"),
    ({"CONFIG_RCU_LAZY_DEFAULT_OFF": True}, "CONFIG_RCU_LAZY_DEFAULT_OFF"),
    ({"bootargs": "rcu_nocbs=all rcutree.enable_rcu_lazy=1"}, "kernel.bootargs"),
])
def test_lazy_knobs_before_their_release_are_refused(kernel, key):
    data = copy.deepcopy(BASE)
    data["kernel"].update(kernel)
    with pytest.raises(ScenarioError) as err:
        load_scenario(data)
    assert key in str(err.value)
