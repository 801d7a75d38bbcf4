"""cython_core/kvm.pxi: a KVM guest's vCPUs idle in HLT, and the host's adaptive halt polling
(virt/kvm/kvm_main.c kvm_vcpu_halt()): a halt the poll window catches, or one that blocks."""

from __future__ import annotations

from rcusim import run

GUEST = "amd-threadripper-3970x-kvm"


def _halts(scenario: str, variant: str, *overrides: str) -> dict:
    result = run(scenario, overrides=[f"hardware.profile={GUEST}", *overrides], variants=[variant])
    return result.variants[variant].metrics["sched"]["kvm_halts"]


def test_halts_longer_than_the_poll_window_always_block():
    """One caller on an idle machine: every vCPU halts for milliseconds, longer than
    halt_poll_ns, so the window never grows and no halt ends in the poll loop."""
    halts = _halts("scenarios/gp_floor_64cpu.yaml", "v7_0", "workloads.0.loops=20")
    assert halts["polled"] == 0 and halts["blocked"] > 20


def test_short_halts_grow_the_poll_window_and_are_caught_by_it():
    """The wake_from_gp kworker wakes 2,000 callers one after another: vCPUs that
    just halted are woken within microseconds, the window grows from 0 to catch them."""
    args = ("workloads.0.tasks=2000", "workloads.0.loops=5")
    halts = _halts("scenarios/sync_rcu_10k.yaml", "wake_from_gp", *args)
    assert halts["polled"] > halts["blocked"] > 0
    off = _halts("scenarios/sync_rcu_10k.yaml", "wake_from_gp", *args, "hardware.halt_poll_ns=0")
    assert off["polled"] == 0 and off["blocked"] > halts["blocked"]


def test_same_seed_gives_the_same_guest_run():
    a = _halts("scenarios/sync_rcu_10k.yaml", "default", "workloads.0.tasks=500", "workloads.0.loops=3")
    b = _halts("scenarios/sync_rcu_10k.yaml", "default", "workloads.0.tasks=500", "workloads.0.loops=3")
    assert a == b
