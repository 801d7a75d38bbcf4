"""Lazy RCU (CONFIG_RCU_LAZY, v6.2): call_rcu() on an offloaded CPU queues lazy
callbacks that wait in the bypass list until jiffies_lazy_flush (10 s), a
non-lazy callback on the same CPU, or a full bypass (qhimark) flushes them
(tree_nocb.h rcu_nocb_try_bypass(), nocb_gp_wait(), wake_nocb_gp_defer())."""

from __future__ import annotations

import copy

import pytest

from rcusim import load_scenario, run
from rcusim.errors import ScenarioError

HZ = 1000
LAZY_FLUSH_S = 10  # LAZY_FLUSH_JIFFIES = 10 * HZ

BASE = {
    "name": "lazy",
    "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 8},
    "kernel": {"release": "6.6", "HZ": HZ, "CONFIG_RCU_NOCB_CPU": True, "CONFIG_RCU_LAZY": True,
               "bootargs": "rcu_nocbs=all"},
    # The caller ends the run; the call_rcu() load runs beside it, 1,000 callbacks a second per CPU.
    "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 1500, "think_us": 10000, "cpus": "0"},
                  {"kind": "call_rcu_load", "cpus": "1-7", "work_us": 1000, "call_rcu_per_op": 1}],
}


def _metrics(change=None) -> dict:
    data = copy.deepcopy(BASE)
    if change:
        change(data)
    result = run(data)
    return result.variants["default"].metrics


def test_lazy_callbacks_wait_for_the_lazy_flush():
    lazy = _metrics()
    hurry = _metrics(lambda d: d["workloads"][1].update(hurry=True))
    cb, cb_hurry = lazy["call_rcu_latency_us"], hurry["call_rcu_latency_us"]
    # Arrivals spread over the 10 s window: half a window on average, never (much) more than one.
    assert 0.4 * LAZY_FLUSH_S * 1e6 < cb["mean"] < 0.6 * LAZY_FLUSH_S * 1e6
    assert LAZY_FLUSH_S * 1e6 * 0.9 < cb["max"] < (LAZY_FLUSH_S + 0.1) * 1e6
    # call_rcu_hurry(): a few grace periods, and many more of them.
    assert cb_hurry["max"] < 100e3
    assert hurry["grace_periods"] > 3 * lazy["grace_periods"]


def test_call_rcu_hurry_is_the_kernel_without_lazy_rcu():
    hurry = _metrics(lambda d: d["workloads"][1].update(hurry=True))
    off = _metrics(lambda d: d["kernel"].update(CONFIG_RCU_LAZY=False))
    assert hurry == off


def test_a_non_lazy_callback_flushes_the_lazy_ones_of_its_cpu():
    """synchronize_rcu() queues with call_rcu_hurry(): on the load's own CPU its
    callback takes the lazy callbacks queued before it along."""
    apart = _metrics(lambda d: d["workloads"][1].update(cpus="1"))
    together = _metrics(lambda d: d["workloads"][1].update(cpus="0"))
    assert apart["call_rcu_latency_us"]["p50"] > 1e6
    assert together["call_rcu_latency_us"]["max"] < 100e3


def test_a_full_bypass_is_flushed_before_the_timer():
    """At qhimark (10,000) lazy callbacks the bypass is flushed at the next call_rcu()."""
    flood = _metrics(lambda d: d["workloads"][1].update(call_rcu_per_op=100, cpus="1"))
    # 100,000 callbacks a second fill the bypass in about 0.1 s.
    assert flood["call_rcu_latency_us"]["max"] < 0.5e6


def test_lazy_only_applies_to_offloaded_cpus():
    def not_offloaded(d):
        d["kernel"]["bootargs"] = "rcu_nocbs=0"
        d["workloads"][1]["cpus"] = "1-7"
    lazy = _metrics(not_offloaded)
    off = _metrics(lambda d: (not_offloaded(d), d["kernel"].update(CONFIG_RCU_LAZY=False)))
    assert lazy == off


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


def test_the_boot_parameter_turns_laziness_off_and_on():
    def release(d, bootargs, default_off):
        d["kernel"].update(release="6.9", CONFIG_RCU_LAZY_DEFAULT_OFF=default_off,
                           bootargs="rcu_nocbs=all " + bootargs)
    off = _metrics(lambda d: release(d, "", True))
    on = _metrics(lambda d: release(d, "rcutree.enable_rcu_lazy=1", True))
    assert off["call_rcu_latency_us"]["max"] < 100e3
    assert on["call_rcu_latency_us"]["mean"] > 1e6


def test_rcu_barrier_flushes_the_lazy_callbacks_of_every_cpu():
    """rcu_barrier_entrain() flushes each offloaded CPU's bypass, lazy callbacks included, and
    wakes its rcuog: the lazy callbacks queued before the barrier are invoked before it
    returns (which the safety checker verifies), long before jiffies_lazy_flush."""
    def lazy_load_beside(primitive):
        def change(d):
            d["workloads"] = [{"kind": "sync_loop", "tasks": 1, "loops": 2, "cpus": "0", "start_us": 500e3,
                               "primitive": primitive},
                              {"kind": "call_rcu_load", "cpus": "1-7", "work_us": 1000, "call_rcu_per_op": 1}]
            if primitive == "call_rcu_hurry":
                d["workloads"][0]["async_max"] = 1  # the second call is an rcu_barrier() first
        return change
    barrier = _metrics(lazy_load_beside("call_rcu_hurry"))
    sync = _metrics(lazy_load_beside("synchronize_rcu"))
    # Half a second of lazy callbacks on CPUs 1-7: synchronize_rcu() on CPU 0 flushes none of them.
    assert sync["call_rcu_latency_us"]["invoked"] == 0
    cb = barrier["call_rcu_latency_us"]
    assert cb["invoked"] > 7 * 400
    assert 0.4e6 < cb["max"] < 0.6e6 < LAZY_FLUSH_S * 1e6
