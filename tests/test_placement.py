"""Placement and migration of unpinned tasks: wake-up CPU selection
(select_task_rq_fair()), fork placement (find_idlest_cpu()) and load balancing
over the scheduling domains (newidle, periodic, nohz idle balancing)."""

from __future__ import annotations

import collections
import math

import numpy as np
import pytest

from rcusim import _core
from rcusim.engine.engine_input import engine_input
from rcusim.engine.reference.model import run_reference
from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario
from rcusim.kernel.cpus import cpu_topology
from rcusim.kernel.sched_domains import sched_domains

TR = "amd-threadripper-3970x"


def scenario(profile=TR, nr_cpus=64, bootargs="", **sync_loop) -> dict:
    work = {"kind": "sync_loop", "tasks": 64, "loops": 1, "cpus": "all", "pinned": False}
    work.update(sync_loop)
    data = {"name": "placement", "hardware": {"profile": profile, "nr_cpus": nr_cpus},
            "kernel": {"release": "6.6", "HZ": 1000, "bootargs": bootargs}, "workloads": [work]}
    if "rcu_normal_wake_from_gp" in bootargs:
        data["kernel"]["patches"] = ["rcu-sr-normal-wake-from-gp"]  # the v6.9 change on 6.6
    return data


def traced_run(data: dict, seconds: float, seed: int = 0):
    """The engine after running `seconds`, its trace, and why it stopped (_core.EXIT_*)."""
    inp, _ = engine_input(load_scenario(data).variants["default"])
    eng = _core.Engine(inp, np.random.PCG64(seed))
    eng.trace_enable(10**7)
    reason = eng.run(round(seconds * 1e9), 10**9)
    return eng, eng.trace_records(), reason


def task_switches(trace, n_tasks: int):
    """(cpu, task) of every switch to a workload task."""
    sw = trace[(trace["kind"] == _core.TRACE_KINDS["switch"]) & (trace["ent"] >= 0) & (trace["ent"] < n_tasks)]
    return sw["cpu"].astype(int), sw["ent"].astype(int), sw["t"].astype(np.int64)


def domains(profile: str, nr_cpus: int):
    topo = load_scenario(scenario(profile, nr_cpus)).variants["default"].hardware.topology
    return sched_domains(*cpu_topology(nr_cpus, topo["smt"], topo["cores_per_llc"], topo["llcs_per_socket"]))


@pytest.mark.parametrize("profile", [TR, "x86-64-server-2023"])
def test_a_pile_on_one_cpu_spreads_within_the_balance_intervals(profile):
    """64 CPU-bound tasks created on CPU 0 reach every CPU by load balancing.

    Each balancing wave at the top domain at least halves the pile (the imbalance
    moved is half the difference in runnable tasks, sibling_imbalance()), and a
    domain that moved tasks balances again after its min_interval (its span in
    ms); the first wave comes one interval after the start. So every CPU runs a
    task within (log2(nr_cpus) + 1) top-level intervals.
    """
    eng, trace, _ = traced_run(scenario(profile, start_cpus="0", think_us=10e6), 1.0)
    cpus, _, t = task_switches(trace, 64)
    first = {c: t[cpus == c].min() for c in np.unique(cpus)}
    sd = domains(profile, 64)
    top_ms = int(np.diff(sd.domain_first)[-1])
    bound_ns = (math.log2(64) + 1) * top_ms * 1_000_000
    assert len(first) == 64
    assert max(first.values()) <= bound_ns
    c = eng.counters()
    assert c["migrations_balance"] + c["migrations_newidle"] >= 63
    assert eng.safety()["violations"] == 0


def test_the_pile_stays_put_when_pinned():
    """The same start with pinned tasks: nothing leaves CPU 0 (the test above can fail)."""
    data = scenario(think_us=10e6, cpus="0", pinned=True)
    eng, trace, _ = traced_run(data, 0.2)
    cpus, _, _ = task_switches(trace, 64)
    assert set(cpus) == {0}
    assert sum(v for k, v in eng.counters().items() if k.startswith("migrations")) == 0


def test_one_waker_spreads_its_wakees_over_its_llc():
    """One kworker (rcu_normal_wake_from_gp=1) wakes 1,000 tasks created on its CPU.

    complete() passes no WF_SYNC and sync_loop tasks wake nobody, so their
    wakee_flips stay 0: wake_wide() needs the wakee's flips to reach the LLC size
    and stays false, the wake-ups take the affine path, and select_idle_sibling()
    spreads them over idle CPUs of the waker's LLC.  The kworker is queued on the
    GP kthread's CPU, which moves; the test follows the CPU it woke most from.
    """
    data = scenario(tasks=1000, loops=5, start_cpus="0", bootargs="rcutree.rcu_normal_wake_from_gp=1")
    eng, trace, _ = traced_run(data, 10.0)
    wakes = trace[(trace["kind"] == _core.TRACE_KINDS["wake"]) & (trace["ent"] < 1000) & (trace["arg"] >= 0)]
    waker_cpu, n = collections.Counter(wakes["arg"].astype(int)).most_common(1)[0]
    targets = set(wakes[wakes["arg"] == waker_cpu]["cpu"].astype(int))
    sd = domains(TR, 64)
    llc = sd.names.index("MC")
    same_llc = set(np.flatnonzero(sd.domain_of[llc] == sd.domain_of[llc][waker_cpu]))
    assert n >= 2500 and len(wakes) >= 5000
    assert targets == same_llc
    assert eng.safety()["violations"] == 0


def test_unpinned_tasks_stay_within_their_cpus_and_pinned_ones_on_their_cpu():
    data = scenario(tasks=200, loops=5, cpus="8-23")
    data["workloads"].append({"kind": "sync_loop", "tasks": 32, "loops": 5, "cpus": "0-7,40-63"})
    eng, trace, _ = traced_run(data, 10.0)
    cpus, ents, _ = task_switches(trace, 232)
    unpinned = ents < 200
    assert set(cpus[unpinned]) <= set(range(8, 24))
    assert len(set(cpus[unpinned])) > 1
    listed = np.array(list(range(0, 8)) + list(range(40, 64)))
    expected = listed[(ents[~unpinned] - 200) % len(listed)]
    assert np.array_equal(cpus[~unpinned], expected)


def test_fork_placement_spreads_new_tasks():
    """Without start_cpus, wake_up_new_task() places each new task on the idlest
    group's idlest CPU: 64 tasks forked on CPU 0 start on 64 CPUs."""
    eng, trace, _ = traced_run(scenario(think_us=10e6), 0.01)
    cpus, ents, t = task_switches(trace, 64)
    first_cpu = {e: cpus[ents == e][0] for e in np.unique(ents)}
    assert len(set(first_cpu.values())) == 64


def test_same_seed_same_result_and_the_reference_declines():
    data = scenario(tasks=300, loops=3, bootargs="rcutree.rcu_normal_wake_from_gp=1")
    a, ta, _ = traced_run(data, 10.0)
    b, tb, _ = traced_run(data, 10.0)
    assert np.array_equal(ta, tb)
    assert a.counters() == b.counters()
    inp, _ = engine_input(load_scenario(data).variants["default"])
    with pytest.raises(NotImplementedError, match="unpinned"):
        run_reference(inp, 0, 10**9)


@pytest.mark.parametrize("change, key", [
    ({"rt": True}, "pinned"),
    ({"pinned": True, "start_cpus": "0"}, "start_cpus"),
    ({"cpus": "0-7", "start_cpus": "9"}, "start_cpus"),
])
def test_bad_placement_settings_are_refused(change, key):
    data = scenario(**change)
    with pytest.raises(ScenarioError) as err:
        load_scenario(data)
    assert key in str(err.value)


def test_unpinned_needs_the_fair_class_and_a_topology():
    old = scenario(nr_cpus=8)
    old["kernel"]["release"] = "2.6.20"
    with pytest.raises(ScenarioError, match="2.6.23"):
        load_scenario(old)
    flat = scenario(profile="xeon-e5405-8cpu", nr_cpus=8)
    with pytest.raises(ScenarioError, match="topology"):
        load_scenario(flat)


def test_unbound_rcu_kthreads_run_only_on_housekeeping_cpus():
    """rcuog and rcuop take kthread_run()'s affinity, housekeeping_cpumask(HK_TYPE_KTHREAD):
    with nohz_full=4-15 only CPUs 0-3, wherever their group leader or CPU is."""
    data = scenario(nr_cpus=16, tasks=200, loops=5)
    data["kernel"].update(CONFIG_RCU_NOCB_CPU=True, bootargs="nohz_full=4-15")
    eng, trace, _ = traced_run(data, 10.0)
    kinds = eng.entity_kinds()["kind"]
    sw = trace[(trace["kind"] == _core.TRACE_KINDS["switch"]) & (trace["ent"] >= 0)]
    on = {k: set(sw["cpu"][kinds[sw["ent"]] == k].astype(int)) for k in np.unique(kinds[sw["ent"]])}
    rcuog, rcuop = _core.ENTITY_KINDS["rcuog"], _core.ENTITY_KINDS["rcuop"]
    assert on[rcuog] and on[rcuog] <= {0, 1, 2, 3}
    assert len(on[rcuop]) > 1 and on[rcuop] <= {0, 1, 2, 3}
    assert eng.safety()["violations"] == 0


def test_cfs_buddies_do_not_follow_a_migrated_task():
    """Under CFS a wakee that preempted becomes its CPU's next buddy; when load
    balancing moves it away the buddy must be cleared (clear_buddies() in
    dequeue_entity()), or the CPU would pick an entity of another run queue.
    Readers on every CPU make the preemptions; 33 CPUs leave one core half-filled."""
    data = scenario(nr_cpus=33, tasks=300, loops=10, think_us=10)
    data["kernel"].update(release="5.10", CONFIG_RCU_NOCB_CPU=True, CONFIG_PREEMPTION=False,
                          CONFIG_PREEMPT_RCU=False, bootargs="rcu_nocbs=all nohz_full=1-32")
    data["workloads"].append({"kind": "readers", "length_us": 20, "rate_per_s": 1000, "cpus": "all"})
    eng, _, reason = traced_run(data, 60.0)
    c = eng.counters()
    assert c["migrations_newidle"] + c["migrations_balance"] > 0
    assert eng.safety()["violations"] == 0
    assert reason == _core.EXIT_DONE


@pytest.mark.parametrize("profile, nr_cpus, cpus", [(TR, 64, "all"), (TR, 64, "1,3,34,36-39,60"),
                                                    ("x86-64-server-2023", 96, "5-9,33-40")])
def test_balancing_group_sums_follow_their_cpus(profile, nr_cpus, cpus):
    """Balancing reads each group's runnable count, idle CPUs and load from sums kept
    as its CPUs change (balance.pxi: lb_mark(), lb_flush()); Engine.verify() compares
    every group's sums with its CPUs after each chunk of a run that forks, wakes,
    migrates and idles unpinned tasks over interleaved SMT siblings."""
    data = scenario(profile, nr_cpus, tasks=3 * nr_cpus, loops=40, think_us=200, cpus=cpus,
                    work_after="kfree", start_cpus="38" if cpus != "5-9,33-40" else "5")
    inp, _ = engine_input(load_scenario(data).variants["default"])
    eng = _core.Engine(inp, np.random.PCG64(7))
    chunks = 0
    while eng.run(10**18, 3000) == _core.EXIT_MAX_EVENTS:
        assert eng.verify() == []
        chunks += 1
    assert eng.verify() == []
    counters = eng.counters()
    assert chunks > 5 and counters["migrations_wakeup"] > 0 and counters["nohz_balance_kicks"] > 0
