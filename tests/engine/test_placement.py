"""cython_core/placement.pxi: where a waking fair task runs (select_task_rq_fair(): record_wakee(),
wake_wide(), wake_affine(), select_idle_sibling()) within its affinity, and set_task_cpu().

Where the GP kthread (rcu_preempt) and the expedited GP kworker run.

Both are unbound kthreads (kthread_create() in rcu_spawn_gp_kthread(),
kthread_create_worker(0, ...) in rcu_start_exp_gp_kworker()), SCHED_OTHER
unless rcutree.kthread_prio makes them SCHED_FIFO: each wake-up places them
with select_task_rq_fair(), their last CPU as prev_cpu.  What reads "the GP
kthread's CPU" (the FQS timer, the GP records' gp_kthread_cpu QS source,
GP start and end in the trace) follows the CPU it actually ran on."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from rcusim import _core
from rcusim.engine.engine_input import engine_input
from rcusim.engine.reference.compare import first_difference, run_both
from rcusim.engine.reference.model import run_reference
from rcusim.input.scenario import load_scenario

from tests.engine.conftest import TR, domains, scenario, task_switches, traced_run

SWITCH = _core.TRACE_KINDS["switch"]


def busy_cpu0(primitive="synchronize_rcu", bootargs="", cpus="0", nr_cpus=2) -> dict:
    """Callers pinned to `cpus`, and two kernel-busy tasks on each of them: those
    CPUs always have runnable tasks, the others are idle."""
    return {"name": "busy_cpu0", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": nr_cpus},
            "kernel": {"release": "6.12", "HZ": 1000, "bootargs": bootargs},
            "workloads": [{"kind": "sync_loop", "tasks": 4, "loops": 20, "cpus": cpus, "pinned": True,
                           "primitive": primitive, "think_us": 100},
                          {"kind": "call_rcu_load", "cpus": cpus, "tasks_per_cpu": 2, "work_us": 200}]}


def callers(primitive: str) -> dict:
    """Pinned callers on CPUs 0-1 of 4 with think time (what the reference covers)."""
    return {"name": "callers", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4},
            "kernel": {"release": "6.12", "HZ": 1000},
            "workloads": [{"kind": "sync_loop", "tasks": 8, "loops": 20, "cpus": "0-1", "pinned": True,
                           "primitive": primitive, "think_us": 300}]}


def traced(data: dict, seconds: float = 2.0):
    spec = load_scenario(data).variants["default"]
    inp, _ = engine_input(spec)
    eng = _core.Engine(inp, np.random.PCG64(0))
    eng.trace_enable(10**7)
    eng.run(round(seconds * 1e9), 10**9)
    return eng, eng.trace_records(), spec


def switch_cpus(eng, trace, kind: str) -> collections.Counter:
    """How often each CPU switched to the entity of `kind`."""
    kinds = eng.entity_kinds()["kind"]
    sw = trace[(trace["kind"] == SWITCH) & (trace["ent"] >= 0)]
    sw = sw[kinds[sw["ent"]] == _core.ENTITY_KINDS[kind]]
    return collections.Counter(sw["cpu"].astype(int).tolist())


def test_the_woken_gp_kthread_runs_on_the_idle_cpu():
    """CPU 0 is busy with callers, CPU 1 idle: select_idle_sibling() finds CPU 1
    for the GP kthread, where a kthread fixed on CPU 0 would queue behind them."""
    eng, trace, _ = traced(busy_cpu0())
    on = switch_cpus(eng, trace, "gp")
    assert sum(on.values()) > 20
    assert on[1] >= 0.9 * sum(on.values()), on
    # The GP starts and ends where the kthread runs.
    for kind in ("gp_start", "gp_end"):
        cpus = trace["cpu"][trace["kind"] == _core.TRACE_KINDS[kind]].astype(int)
        assert len(cpus) and np.mean(cpus == 1) >= 0.9, (kind, collections.Counter(cpus.tolist()))
    assert eng.safety()["violations"] == 0


def test_a_sched_fifo_gp_kthread_keeps_its_cpu():
    """rcutree.kthread_prio=1: SCHED_FIFO, outside select_task_rq_fair(); it stays on
    its first CPU (and preempts the callers there)."""
    eng, trace, _ = traced(busy_cpu0(bootargs="rcutree.kthread_prio=1"))
    on = switch_cpus(eng, trace, "gp")
    assert sum(on.values()) > 20 and set(on) == {0}, on


def test_the_expedited_kworker_runs_on_the_idle_cpu():
    """synchronize_rcu_expedited() callers busy on CPU 0 queue the work on
    rcu_exp_gp_kthread_worker; its wake-up lands on the idle CPU 1."""
    eng, trace, _ = traced(busy_cpu0(primitive="synchronize_rcu_expedited"))
    on = switch_cpus(eng, trace, "exp_gp")
    assert sum(on.values()) > 20
    assert on[1] >= 0.9 * sum(on.values()), on
    assert eng.safety()["violations"] == 0


def test_the_gp_kthread_stays_on_its_idle_prev_cpu():
    """Busy tasks on CPU 1 only: the kthread, first on CPU 0, stays on its idle
    prev_cpu (select_idle_sibling() takes an idle target first)."""
    eng, trace, _ = traced(busy_cpu0(cpus="1"))
    on = switch_cpus(eng, trace, "gp")
    assert sum(on.values()) > 20 and on[0] >= 0.9 * sum(on.values()), on


@pytest.mark.parametrize("primitive", ["synchronize_rcu", "synchronize_rcu_expedited"])
def test_the_reference_places_the_kthreads_alike(primitive):
    """The SimPy reference places them with its own select_task_rq_fair() and
    agrees record for record, on a run where they do move."""
    data = callers(primitive)
    core, ref = run_both(load_scenario(data).variants["default"], 0)
    assert first_difference(core, ref) is None, first_difference(core, ref)
    eng, trace, _ = traced(data)
    on = switch_cpus(eng, trace, "gp" if primitive == "synchronize_rcu" else "exp_gp")
    assert set(on) - {0}, on  # away from its first CPU


def pinned_writer(kthread: bool) -> dict:
    """One SCHED_FIFO synchronize_rcu_expedited() caller pinned to CPU 0 of 2, as
    rcuscale's writer is: a kthread, or (for contrast) a user task."""
    return {"name": "writer", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2},
            "kernel": {"release": "6.12", "HZ": 1000},
            "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 50, "cpus": "0", "pinned": True, "rt": True,
                           "kthread": kthread, "primitive": "synchronize_rcu_expedited", "think_us": 20}]}


def test_a_pinned_kthread_writer_keeps_the_expedited_kworker_on_its_cpu():
    """The kworker last ran on CPU 0, where the writer wakes it: select_idle_sibling()
    lets a per-CPU kthread's wakee stack there (is_per_cpu_kthread(current)), so it runs
    as soon as the writer sleeps. A user task's wakee goes to the idle CPU 1 instead."""
    eng, trace, _ = traced(pinned_writer(kthread=True))
    on = switch_cpus(eng, trace, "exp_gp")
    assert sum(on.values()) >= 50 and set(on) == {0}, on
    eng, trace, _ = traced(pinned_writer(kthread=False))
    on = switch_cpus(eng, trace, "exp_gp")
    assert on[1] >= 0.9 * sum(on.values()), on
    # Both ways agree with the reference record for record.
    for kthread in (True, False):
        core, ref = run_both(load_scenario(pinned_writer(kthread)).variants["default"], 0)
        assert first_difference(core, ref) is None, first_difference(core, ref)


def test_a_local_wakeup_at_a_bursts_end_hands_the_cpu_over_without_idling():
    """The writer queues the expedited work and sleeps: its kworker, woken onto the same
    CPU, is enqueued before the writer schedules, so CPU 0 never enters idle between them."""
    eng, trace, _ = traced(pinned_writer(kthread=True))
    kinds = eng.entity_kinds()["kind"]
    sw = trace[(trace["kind"] == SWITCH) & (trace["cpu"] == 0)]
    nxt = [(-1 if e < 0 else int(kinds[e])) for e in sw["ent"]]
    task, exp_gp = _core.ENTITY_KINDS["task"], _core.ENTITY_KINDS["exp_gp"]
    handovers = sum(1 for a, b in zip(nxt, nxt[1:]) if a == task and b == exp_gp)
    assert handovers >= 45, handovers


# --- unpinned tasks and kthreads ------------------------------------------------------
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


def test_same_seed_same_result_and_the_reference_declines():
    data = scenario(tasks=300, loops=3, bootargs="rcutree.rcu_normal_wake_from_gp=1")
    a, ta, _ = traced_run(data, 10.0)
    b, tb, _ = traced_run(data, 10.0)
    assert np.array_equal(ta, tb)
    assert a.counters() == b.counters()
    inp, _ = engine_input(load_scenario(data).variants["default"])
    with pytest.raises(NotImplementedError, match="unpinned"):
        run_reference(inp, 0, 10**9)


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
