"""cython_core/tree_sr_normal.pxi: synchronize_rcu() with rcutree.rcu_normal_wake_from_gp=1 (v6.9):
waiters on rcu_state.srs_next, taken by rcu_sr_normal_gp_init() and woken by
rcu_sr_normal_gp_cleanup(), up to SR_MAX_USERS_WAKE_FROM_GP by the GP kthread itself and the
rest by the cleanup work's kworker; never through call_rcu() and its bypass."""

import rcusim
from rcusim import _core
from rcusim.engine.simulate import build_engine
from rcusim.input.scenario import load_scenario

from tests.engine.conftest import SYNC_RCU_10K as SCENARIO


def test_only_default_path_waiters_go_through_the_bypass():
    # Default-path waiters go through call_rcu_hurry() on NOCB CPUs: past
    # nocb_nobypass_lim_per_jiffy (16 at HZ=1000) enqueues per jiffy on a CPU
    # they land in the bypass list; wake-from-GP waiters are tracked apart
    # (rcu_sr_normal_add_req()) and never touch it. 2000 tasks put ~31 per CPU.
    r = rcusim.run(SCENARIO, overrides=["workloads.0.tasks=2000", "workloads.0.loops=5"])
    bypassed = {n: v.counters["bypass_enqueues"] for n, v in r.variants.items()}
    assert bypassed["default"] > 0
    assert bypassed["wake_from_gp"] == 0


def callers(tasks: int) -> dict:
    """`tasks` synchronize_rcu() callers on 8 CPUs with rcu_normal_wake_from_gp=1 (v6.12)."""
    return {"name": "sr_normal", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 8},
            "kernel": {"release": "6.12", "HZ": 1000, "bootargs": "rcutree.rcu_normal_wake_from_gp=1"},
            "workloads": [{"kind": "sync_loop", "tasks": tasks, "loops": 10, "think_us": 300}]}


def test_the_gp_kthread_wakes_up_to_five_waiters_itself_and_the_cleanup_work_the_rest():
    """rcu_sr_normal_gp_cleanup(): the GP kthread completes up to SR_MAX_USERS_WAKE_FROM_GP (5)
    waiters itself and queues sr_normal_gp_cleanup_work for the rest only when there are more.
    Five callers can never be more than five waiters of a GP: the work's kworker never runs;
    six callers waiting on one GP need it."""
    worker = _core.ENTITY_KINDS["sr_worker"]
    runtime = {}
    for tasks in (5, 6):
        eng, _ = build_engine(load_scenario(callers(tasks)).variants["default"], 0)
        assert eng.run(10**12, 10**9) == _core.EXIT_DONE
        assert len(eng.requests()["task"]) == tasks * 10
        runtime[tasks] = int(eng.entity_runtime_ns()[eng.entity_kinds()["kind"] == worker].sum())
    assert runtime[5] == 0 < runtime[6]
