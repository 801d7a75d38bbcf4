"""lib/test_vmalloc.c's kvfree_rcu test around each call (`work_after: vfree`): the
global vmap locks, their contention and the lazy purge (vmalloc.pxi)."""

from __future__ import annotations

import copy

from rcusim import run

SCENARIO = {
    "name": "vmalloc",
    "hardware": {"profile": "amd-threadripper-3970x", "nr_cpus": 64},
    "kernel": {"release": "6.6", "HZ": 1000, "CONFIG_RCU_NOCB_CPU": True, "bootargs": "rcu_nocbs=all"},
    "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 200, "work_after": "vfree",
                   "cpus": "all", "pinned": False}],
}


def _run(tasks: int, loops: int, work_after: str = "vfree"):
    data = copy.deepcopy(SCENARIO)
    data["workloads"][0].update(tasks=tasks, loops=loops, work_after=work_after)
    return run(data).variants["default"]


def test_one_caller_never_waits_for_a_vmap_lock():
    v = _run(1, 200)
    assert v.metrics["vmap"]["lock_wait_ms"] == 0


def test_concurrent_callers_contend_on_the_global_locks():
    few, many = _run(8, 20), _run(2000, 20)
    per_call = {n: v.metrics["vmap"]["lock_wait_ms"] / v.request_count for n, v in ((8, few), (2000, many))}
    assert per_call[2000] > 10 * per_call[8] > 0


def test_the_lazy_areas_are_purged_past_lazy_max_pages():
    """lazy_max_pages() on 64 CPUs: 8,192 pages x fls(64) = 57,344; each vfree() of a
    one-page area adds two (the guard page), so every 28,673rd vfree() purges."""
    v = _run(2000, 40)
    assert v.metrics["vmap"]["purges"] == 80_000 // (57_344 // 2 + 1)


def test_vmalloc_and_vfree_cost_more_than_a_kfree():
    vfree, kfree = _run(1, 200), _run(1, 200, "kfree")
    assert vfree.completion_time_ns > kfree.completion_time_ns
    assert "vmap" not in kfree.metrics
