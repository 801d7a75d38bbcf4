"""The grace-period floor's input: a patch is refused where its code is missing and noted where the
release has it. (The floor itself: tests/engine/test_timer.py, test_tree_gp.py, test_tick.py.)"""

from __future__ import annotations

import pytest

from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario

from tests.engine.conftest import lone_caller


def test_a_patch_is_refused_where_its_code_is_missing_and_noted_where_the_release_has_it():
    with pytest.raises(ScenarioError, match="rcu-gp-kthread-cpu-qs-early"):
        load_scenario(lone_caller("3.6", patches=["rcu-gp-kthread-cpu-qs-early"]))
    with pytest.raises(ScenarioError, match="not a patch"):
        load_scenario(lone_caller("6.12", patches=["rcu-make-it-fast"]))
    (note,) = load_scenario(lone_caller("7.0", patches=["rcu-gp-kthread-cpu-qs-early"])).notes
    assert "rcu-gp-kthread-cpu-qs-early is already in release 7.0" in note
