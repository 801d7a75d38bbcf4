"""cython_core/fair.pxi: the fair class: nice weights, EEVDF (v6.6) and CFS (before), in the engine
and in the reference model's separate implementation (rcusim/engine/reference/fair.py)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rcusim import _core
from rcusim.engine.engine_input import engine_input
from rcusim.engine.reference.fair import CfsRq
from rcusim.input.releases import release_switches, stable_patches
from rcusim.input.scenario import load_scenario
from rcusim.kernel.fair import (POLICY_CFS, POLICY_EEVDF, calc_delta_fair, fair_tunables, weight_of)

from tests.engine.conftest import two_hogs


def runtime_after(data: dict, seconds: float) -> np.ndarray:
    inp, _ = engine_input(load_scenario(data).variants["default"])
    eng = _core.Engine(inp, np.random.PCG64(0))
    eng.run(round(seconds * 1e9), 10**9)
    return eng.entity_runtime_ns()


@pytest.mark.parametrize("release", ["6.6", "6.1"])
def test_cpu_is_shared_by_nice_weight(release):
    run = runtime_after(two_hogs(release), 30.0)
    share = run[0] / run[1]
    assert share == pytest.approx(weight_of(0) / weight_of(19), rel=0.02)


def test_equal_nice_share_equally():
    run = runtime_after(two_hogs("6.6", nice_b=0), 10.0)
    assert run[0] / run[1] == pytest.approx(1.0, rel=0.02)


# --- the arithmetic, on the reference model's CfsRq -------------------------------------
class Ent(SimpleNamespace):
    pass


def entity(weight=1024, vruntime=0, vlag=0, initial=False):
    return Ent(weight=weight, vruntime=vruntime, deadline=0, vlag=vlag, initial=initial, exec_start=0,
               sum_exec=0, prev_sum_exec=0, seq=0, sched_delayed=False)


def cfs_rq(policy: int, nr_cpus: int = 64, eevdf_delay_dequeue: bool = False, eevdf_preempt_short: bool = False):
    t = fair_tunables(nr_cpus, base_slice_700us=False)
    fair = SimpleNamespace(fair_policy=policy, base_slice_ns=t.base_slice_ns, sched_latency_ns=t.latency_ns,
                           min_gran_ns=t.min_gran_ns, wakeup_gran_ns=t.wakeup_gran_ns, nr_latency=t.nr_latency,
                           eevdf_delay_dequeue=eevdf_delay_dequeue, eevdf_preempt_short=eevdf_preempt_short)
    sim = SimpleNamespace(inp=SimpleNamespace(fair=fair, sched=SimpleNamespace(jiffy_ns=1_000_000)),
                          env=SimpleNamespace(now=0), fair_seq=0)
    cpu = SimpleNamespace(curr=None)
    rq = CfsRq(sim, cpu)
    cpu.fair_curr = lambda: cpu.curr
    return rq, cpu, sim


def test_tunables_scale_with_log2_of_up_to_8_cpus():
    old = {n: fair_tunables(n, base_slice_700us=False) for n in (1, 2, 8, 64)}
    assert old[64].base_slice_ns == old[8].base_slice_ns == 3_000_000
    assert old[2].base_slice_ns == 1_500_000
    assert old[1].latency_ns == 6_000_000
    assert old[64].nr_latency == 8


def test_base_slice_is_0_70_ms_from_v6_15_and_6_12_31():
    """2ae891b82695: 0.70 ms a factor, so 1.40 ms on 2 CPUs and 2.80 ms from 8; only the slice moves."""
    new = {n: fair_tunables(n, base_slice_700us=True) for n in (1, 2, 8, 64)}
    assert [new[n].base_slice_ns for n in (1, 2, 8, 64)] == [700_000, 1_400_000, 2_800_000, 2_800_000]
    assert new[64].latency_ns == fair_tunables(64, base_slice_700us=False).latency_ns
    assert not release_switches((6, 14)).base_slice_700us and release_switches((6, 15)).base_slice_700us
    assert "sched-base-slice-700us" in stable_patches("6.12.117")
    assert "sched-base-slice-700us" not in stable_patches("6.12.30") + stable_patches("6.6.117")


def test_eevdf_waker_placed_by_its_clamped_lag():
    rq, cpu, sim = cfs_rq(POLICY_EEVDF)
    others = [entity(vruntime=10_000_000) for _ in range(3)]
    for e in others:
        rq.insert(e)
    V = rq.avg_vruntime()
    assert V == 10_000_000
    sleeper = entity(vlag=50_000_000)  # far more than the clamp allows
    # sleep() clamps the lag to max(2 slices, a tick) of virtual time: 6 ms at nice 0.
    cpu.curr = sleeper
    sleeper.vruntime = V - 50_000_000
    rq.sleep(sleeper)
    cpu.curr = None
    assert sleeper.vlag == 2 * 3_000_000
    rq.enqueue_wakeup(sleeper)
    # place_entity(): lag scaled by (W + w) / W, W = 3 * 1024.
    assert sleeper.vruntime == V - sleeper_lag(6_000_000, 3 * 1024, 1024)
    assert sleeper.deadline == sleeper.vruntime + 3_000_000


@pytest.mark.parametrize("eevdf_delay_dequeue", [False, True])
def test_eevdf_an_ineligible_sleeper_stays_queued_from_6_12(eevdf_delay_dequeue):
    # dequeue_entity(DEQUEUE_SLEEP): from v6.12 (DELAY_DEQUEUE) an entity past V stays queued.
    rq, cpu, sim = cfs_rq(POLICY_EEVDF, eevdf_delay_dequeue=eevdf_delay_dequeue)
    other = entity(vruntime=10_000_000)
    rq.insert(other)
    sleeper = entity(vruntime=14_000_000)  # ahead of V: not eligible
    cpu.curr = sleeper
    delayed = rq.sleep(sleeper)
    cpu.curr = None
    assert delayed == eevdf_delay_dequeue == sleeper.sched_delayed
    if not eevdf_delay_dequeue:
        assert sleeper.vlag == -2_000_000  # V = 12 ms: the negative lag it keeps over its sleep
        return
    rq.insert(sleeper)  # put_prev_entity()
    # The other (eligible, earlier deadline) runs; the delayed one is still in V.
    assert rq.avg_vruntime() == 12_000_000 and rq.pick() is other
    # Alone, it is picked, so dequeued: its lag (V = its own vruntime: 0) kept, not run.
    assert rq.pick() is None and not sleeper.sched_delayed and sleeper.vlag == 0 and not rq.queued


def test_eevdf_a_delayed_entity_woken_keeps_a_negative_lag_and_drops_a_positive_one():
    rq, cpu, sim = cfs_rq(POLICY_EEVDF, eevdf_delay_dequeue=True)
    other = entity(vruntime=10_000_000)
    rq.insert(other)
    behind, ahead = entity(vruntime=14_000_000), entity(vruntime=16_000_000)
    for e in (behind, ahead):
        cpu.curr = e
        assert rq.sleep(e)
        cpu.curr = None
        rq.insert(e)
    # V = 13.33 ms: both still past it; woken, the one past V keeps its vruntime and deadline.
    deadline = ahead.deadline
    rq.requeue_delayed(ahead)
    assert not ahead.sched_delayed and ahead.vruntime == 16_000_000 and ahead.deadline == deadline
    # The other runs on until V passes `behind`: its lag turns positive, and DELAY_ZERO places
    # it at V with none (vruntime V, a fresh deadline), still queued where it was.
    other.vruntime = 30_000_000
    V = rq.avg_vruntime()
    rq.requeue_delayed(behind)
    assert behind.vlag == 0 and not behind.sched_delayed and behind in rq.queued
    assert behind.vruntime == rq.avg_vruntime() and behind.deadline == behind.vruntime + 3_000_000
    assert V > 14_000_000


def sleeper_lag(vlag, load, weight):
    return vlag * (load + weight) // load


def test_eevdf_running_entity_keeps_its_slice_against_a_nice_minus_20_wakee():
    rq, cpu, sim = cfs_rq(POLICY_EEVDF)
    runner = entity()
    rq.enqueue_wakeup(runner)  # alone: placed at V = 0 with a 3 ms deadline
    assert rq.pick() is runner
    cpu.curr = runner
    sim.env.now = 1_000_000  # 1 ms into a 3 ms slice
    wakee = entity(weight=weight_of(-20))
    rq.enqueue_wakeup(wakee)
    assert not rq.wakeup_preempt(wakee)  # RUN_TO_PARITY
    sim.env.now = 3_000_000  # the slice is used up: a new deadline, the parity mark gone
    assert rq.tick_resched()
    assert rq.pick_eevdf(runner) is wakee


def test_eevdf_an_enqueue_that_finds_the_running_slice_used_up_reschedules():
    """update_curr() renews a deadline it finds reached and, with another entity queued, calls
    resched_curr() itself: at an enqueue's update as at the tick's (enqueue_entity())."""
    rq, cpu, sim = cfs_rq(POLICY_EEVDF)
    runner = entity()
    rq.enqueue_wakeup(runner)
    assert rq.pick() is runner
    cpu.curr = runner
    sim.env.now = 1_000_000  # 1 ms into its 3 ms slice
    assert not rq.enqueue_wakeup(entity())
    sim.env.now = 3_000_000  # the slice is used up: the next enqueue finds it so
    assert rq.enqueue_wakeup(entity())
    assert runner.deadline == 3_000_000 + 3_000_000


@pytest.mark.parametrize("preempt_short", [True, False])
def test_eevdf_a_runner_past_its_picked_request_is_rescheduled_once_ineligible(preempt_short):
    """v6.12's update_curr() also reschedules when the running entity has left the request it
    was picked for (a deadline renewed while it ran alone) and is no longer eligible
    (did_preempt_short()), at the tick as at any update; before, it ran on to its new deadline."""
    rq, cpu, sim = cfs_rq(POLICY_EEVDF, eevdf_preempt_short=preempt_short)
    runner = entity()
    rq.enqueue_wakeup(runner)
    assert rq.pick() is runner
    cpu.curr = runner
    sim.env.now = 3_000_000  # its 3 ms slice ends alone: renewed, nothing to reschedule for
    assert not rq.tick_resched()
    sim.env.now = 3_500_000
    wakee = entity()  # placed at V with no lag: the runner is not past it yet
    assert not rq.enqueue_wakeup(wakee)
    assert not rq.wakeup_preempt(wakee)
    sim.env.now = 4_000_000  # the runner ran ahead of V, 2.5 ms before its new deadline
    assert rq.tick_resched() is preempt_short


def test_cfs_sleeper_credit_is_half_a_latency():
    rq, cpu, sim = cfs_rq(POLICY_CFS)
    for _ in range(2):
        rq.insert(entity(vruntime=500_000_000))
    rq.update_min_vruntime()
    sleeper = entity(vruntime=0)  # slept for long: far behind
    rq.enqueue_wakeup(sleeper)
    assert sleeper.vruntime == 500_000_000 - 24_000_000 // 2
    recent = entity(vruntime=499_000_000)  # slept briefly: keeps its own vruntime
    rq.enqueue_wakeup(recent)
    assert recent.vruntime == 499_000_000


def test_cfs_wakeup_preempts_by_granularity():
    rq, cpu, sim = cfs_rq(POLICY_CFS)
    runner = entity(vruntime=100_000_000)
    rq.insert(runner)
    rq.update_min_vruntime()
    assert rq.pick() is runner
    cpu.curr = runner
    gran = calc_delta_fair(4_000_000, 1024)
    near = entity(vruntime=100_000_000 - gran)
    rq.insert(near)
    assert not rq.wakeup_preempt(near)  # exactly the granularity behind: no
    far = entity(vruntime=100_000_000 - gran - 1)
    rq.insert(far)
    assert rq.wakeup_preempt(far)


# --- the engine: a callback load's tasks, callers woken by rcuop -------------------------


def test_call_rcu_load_takes_nice_too():
    """A nice-19 call_rcu_load task beside a nice-0 one on one CPU gets 15/1024 of its time."""
    load = {"kind": "call_rcu_load", "cpus": "0", "work_us": 50}
    data = {"name": "bg", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2},
            "kernel": {"release": "6.6", "HZ": 1000},
            "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 1, "cpus": "1", "think_us": 5e6},
                          dict(load), dict(load, nice=19)]}
    run = runtime_after(data, 4.0)
    kinds = _core.Engine(engine_input(load_scenario(data).variants["default"])[0],
                         np.random.PCG64(0)).entity_kinds()["kind"]
    bg = run[kinds == _core.ENTITY_KINDS["bg"]]
    assert bg[0] / bg[1] == pytest.approx(weight_of(0) / weight_of(19), rel=0.05)


def test_default_path_callers_preempt_their_rcuop(small_result):
    # EEVDF (v6.6): a caller woken by rcuop/N carries the positive lag it slept
    # with; placed at V minus that lag it pulls V below the kthread's vruntime,
    # so it preempts the kthread and calls synchronize_rcu() again before the
    # other callers are woken. The callbacks queued first start the next GP;
    # callers woken after it started must wait for it and one more.
    d, w = (small_result.variants[n] for n in ("default", "wake_from_gp"))
    assert d.counters["preemptions"] > 0
    gp = d.metrics["normal_gp"]["length_us"]["p50"]
    assert d.metrics["latency_us"]["p99"] > 2.5 * gp
    # The wake-from-GP worker wakes every caller first: two GPs each, a shorter tail.
    assert w.metrics["latency_us"]["p99"] < 2.5 * gp
