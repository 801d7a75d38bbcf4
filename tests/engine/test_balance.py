"""cython_core/balance.pxi: fork placement of unpinned tasks (find_idlest_cpu()) and load balancing
over the scheduling domains (newidle, periodic, nohz idle balancing), with the group sums it reads.
(Wake-up CPU selection, select_task_rq_fair(): tests/engine/test_placement.py.)"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rcusim import _core
from rcusim.engine.engine_input import engine_input
from rcusim.input.scenario import load_scenario

from tests.engine.conftest import TR, domains, scenario, task_switches, traced_run


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


def test_fork_placement_spreads_new_tasks():
    """Without start_cpus, wake_up_new_task() places each new task on the idlest
    group's idlest CPU: 64 tasks forked on CPU 0 start on 64 CPUs."""
    eng, trace, _ = traced_run(scenario(think_us=10e6), 0.01)
    cpus, ents, t = task_switches(trace, 64)
    first_cpu = {e: cpus[ents == e][0] for e in np.unique(ents)}
    assert len(set(first_cpu.values())) == 64


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


def newidle_counters(release: str, patches=(), **sync_loop) -> dict:
    """Counters of 12 unpinned callers on 4 CPUs, half a second."""
    data = scenario(nr_cpus=4, tasks=12, **sync_loop)
    data["kernel"].update(release=release, patches=list(patches))
    return traced_run(data, 0.5)[0].counters()


def test_newidle_balancing_weighs_only_its_own_cost_from_v5_16():
    """Expedited callers leave their CPUs idle for less than sysctl_sched_migration_cost
    (0.5 ms) at a time: before v5.16 sched_balance_newidle() gives up on such a CPU, from
    v5.16 (c5b0a7eefc70) only a domain whose balancing costs more than the CPU idles does."""
    work = dict(loops=300, think_us=20, primitive="synchronize_rcu_expedited")
    old, new = newidle_counters("5.15", **work), newidle_counters("5.16", **work)
    assert new["newidle_tries"] > 10 * old["newidle_tries"] > 0
    assert new["migrations_newidle"] > old["migrations_newidle"]


def test_newidle_balancing_tries_a_domain_as_often_as_it_succeeds_with_ni_random():
    """NI_RANDOM (v6.19, in 6.12 from 6.12.65): each try of a domain throws a 1,024-sided die
    against its success ratio, 512 at boot; a domain whose pulls mostly find nothing is then
    tried less and less. Without it every try runs, none skipped."""
    work = dict(loops=100, think_us=50)
    plain = newidle_counters("6.12", **work)
    ni = newidle_counters("6.12", ["sched-newidle-proportional"], **work)
    assert plain["newidle_skipped"] == 0 and plain["newidle_tries"] > 0
    assert ni["newidle_skipped"] > 0
    # A fifth of these tries succeed: the die, starting at even odds, skips some 40 % and more.
    assert plain["migrations_newidle"] < plain["newidle_tries"] / 4
    assert ni["newidle_skipped"] >= 0.4 * (ni["newidle_skipped"] + ni["newidle_tries"])
