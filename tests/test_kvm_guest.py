"""A KVM guest's input: the guest profile and what a guest does not have, refused. (Its vCPUs'
halts and the host's halt polling in the engine: tests/engine/test_kvm.py.)"""

from __future__ import annotations

import pytest

from rcusim import load_scenario
from rcusim.engine.reference import run_reference_spec
from rcusim.errors import ScenarioError
from rcusim.input.profiles import (load_profile, profile_halt_poll, profile_halt_poll_sources, profile_idle_states,
                                   profile_sources, profile_topology)

GUEST = "amd-threadripper-3970x-kvm"


def test_the_guest_profile_gives_every_figure_with_its_source():
    hp = profile_halt_poll(GUEST)
    assert hp["halt_poll_ns"] == 200_000 and hp["halt_poll_ns_grow"] == 2
    assert set(profile_halt_poll_sources(GUEST)) == {"parameters", "wake_polled_ns", "wake_blocked_ns"}
    assert all(src.strip() for src in profile_halt_poll_sources(GUEST).values())
    assert set(profile_sources(GUEST)) == set(load_profile(GUEST))
    # A guest without a cpuidle driver halts; QEMU's -smp 64 is one LLC of 64 cores.
    assert profile_idle_states(GUEST) == ()
    topo = profile_topology(GUEST)
    assert (topo["smt"], topo["cores_per_llc"], topo["llcs_per_socket"]) == (1, 64, 1)
    assert profile_halt_poll("amd-threadripper-3970x") is None


@pytest.mark.parametrize("overrides, key", [
    (["hardware.halt_poll_ns=1000"], "hardware.halt_poll_ns"),
    ([f"hardware.profile={GUEST}", "hardware.halt_poll_ns=-1"], "hardware.halt_poll_ns"),
    ([f"hardware.profile={GUEST}",
      "hardware.idle_states=[{name: C1, exit_latency_us: 1, target_residency_us: 2}]"], "hardware.idle_states"),
    ([f"hardware.profile={GUEST}", "hardware.costs.wakeup_idle_median_ns=1000"], "hardware.costs"),
])
def test_what_a_guest_does_not_have_is_refused(overrides, key):
    with pytest.raises(ScenarioError) as err:
        load_scenario("scenarios/gp_floor_64cpu.yaml", overrides=overrides)
    assert key in str(err.value)


def test_the_reference_model_refuses_a_guest():
    scenario = load_scenario("scenarios/gp_floor_64cpu.yaml", overrides=[f"hardware.profile={GUEST}"])
    with pytest.raises(NotImplementedError, match="KVM guest"):
        run_reference_spec(scenario.variants["v7_0"], seed=0)
