"""Regression of the synchronize_rcu() A/B (seed 000) on a scaled-down run, and engine mechanisms.

The scaled-down run is the bundled scenario with 1000 tasks x 20 loops: same
machine, kernel and paths, a tenth of the callers.  Every band below is
derived from how the mechanisms work, not read off a run; each says why.
"""

import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

import rcusim
from rcusim.engine.simulate import build_engine
from rcusim.input.scenario import load_scenario

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "sync_rcu_10k.yaml"
SMALL = ["workloads.0.tasks=1000", "workloads.0.loops=20"]


@pytest.fixture(scope="module")
def small_result():
    return rcusim.run(SCENARIO, overrides=SMALL, check=True)


def scenario_dict(**kernel):
    """The bundled scenario, scaled down, with kernel keys replaced (not appended)."""
    d = yaml.safe_load(SCENARIO.read_text())
    d["workloads"][0].update(tasks=1000, loops=20)
    d["kernel"].update(kernel)
    return d


def served_by_a_full_gp(requests, gps):
    """For each request, whether some grace period lies entirely inside [t_start, t_end]."""
    starts = gps["t_start_ns"].to_numpy()
    ends = gps["t_end_ns"].to_numpy()
    order = np.argsort(starts)
    starts, ends = starts[order], ends[order]
    # Earliest end among GPs that start at or after each request's start.
    min_end_from = np.minimum.accumulate(ends[::-1])[::-1]
    idx = np.searchsorted(starts, requests["t_start_ns"].to_numpy(), side="left")
    ok = idx < len(starts)
    earliest_end = np.where(ok, min_end_from[np.minimum(idx, len(starts) - 1)], np.iinfo(np.int64).max)
    return earliest_end <= requests["t_end_ns"].to_numpy()


@pytest.mark.parametrize("variant", ["default", "wake_from_gp"])
def test_every_call_waits_for_a_full_grace_period(small_result, variant):
    # RCU's guarantee: synchronize_rcu() returns only after a whole GP that
    # started after the call.  This fails if either path wakes a waiter early.
    v = small_result.variants[variant]
    assert served_by_a_full_gp(v.requests, v.gps).all()


@pytest.mark.parametrize("variant", ["default", "wake_from_gp"])
def test_all_requests_complete(small_result, variant):
    v = small_result.variants[variant]
    assert len(v.requests) == 1000 * 20
    assert v.metrics["finished"] is True
    assert (v.requests["latency_ns"] > 0).all()


@pytest.mark.parametrize("variant", ["default", "wake_from_gp"])
def test_grace_period_length_is_set_by_the_fqs_scans(small_result, variant):
    # 64 NOCB CPUs that are idle most of the time and stop their tick: idle CPUs
    # are reported by the FQS scans, the first jiffies_till_first_fqs = 3 jiffies
    # (3 ms at HZ=1000) after gp_init, the next 3 jiffies later.  So a GP lasts
    # between (3 - 1) ms (timer on the next jiffy boundary) and two scans (6 ms)
    # plus the init/cleanup walks.
    gps = small_result.variants[variant].gps
    median_ms = np.median((gps["t_end_ns"] - gps["t_start_ns"]).to_numpy()) / 1e6
    assert 2.0 <= median_ms <= 6.5


@pytest.mark.parametrize("variant", ["default", "wake_from_gp"])
def test_each_call_spans_one_to_four_grace_period_ends(small_result, variant):
    # rcu_seq_snap(): a call made while a GP runs needs that GP to end and one more
    # full GP. Its callback reaches a GP later when rcuog flushes it from the NOCB
    # bypass only after the next GP started (accelerated to the one after), and one
    # later still when the flush misses that GP's start too; no call waits longer.
    v = small_result.variants[variant]
    ends = np.sort(v.gps["t_end_ns"].to_numpy())
    spanned = (np.searchsorted(ends, v.requests["t_end_ns"].to_numpy())
               - np.searchsorted(ends, v.requests["t_start_ns"].to_numpy()))
    assert spanned.min() >= 1 and spanned.max() <= 4
    gp_ns = np.median(np.diff(ends))
    assert v.requests["latency_ns"].mean() >= gp_ns


@pytest.mark.parametrize("variant", ["default", "wake_from_gp"])
def test_batching_shares_each_grace_period_among_many_callers(small_result, variant):
    # GPs run back to back, and a call spans mean_latency / GP-length of them:
    # each GP serves about N * GP-length / mean_latency requests, N the mean number
    # of tasks inside a call (Little's law: total latency over the run's length;
    # about the 1000 tasks, fewer while the last loops drain unevenly).
    v = small_result.variants[variant]
    gp_ns = np.median((v.gps["t_end_ns"] - v.gps["t_start_ns"]).to_numpy())
    lat = v.requests["latency_ns"]
    in_calls = lat.sum() / (v.requests["t_end_ns"].max() - v.requests["t_start_ns"].min())
    assert in_calls >= 1000 / 2
    expected = in_calls * gp_ns / lat.mean()
    assert expected / 1.25 <= v.metrics["batching"] <= expected * 1.25
    assert 1000 / 4 <= v.metrics["batching"] <= 1000


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


def test_only_default_path_waiters_go_through_the_bypass():
    # Default-path waiters go through call_rcu_hurry() on NOCB CPUs: past
    # nocb_nobypass_lim_per_jiffy (16 at HZ=1000) enqueues per jiffy on a CPU
    # they land in the bypass list; wake-from-GP waiters are tracked apart
    # (rcu_sr_normal_add_req()) and never touch it. 2000 tasks put ~31 per CPU.
    r = rcusim.run(SCENARIO, overrides=["workloads.0.tasks=2000", "workloads.0.loops=5"])
    bypassed = {n: v.counters["bypass_enqueues"] for n, v in r.variants.items()}
    assert bypassed["default"] > 0
    assert bypassed["wake_from_gp"] == 0


def test_same_seed_same_records():
    a = rcusim.run(SCENARIO, overrides=["workloads.0.tasks=300", "workloads.0.loops=5"], seed=7)
    b = rcusim.run(SCENARIO, overrides=["workloads.0.tasks=300", "workloads.0.loops=5"], seed=7)
    for name in a.variants:
        assert a.variants[name].requests.equals(b.variants[name].requests)
        assert a.variants[name].gps.equals(b.variants[name].gps)


@pytest.mark.parametrize(
    "kernel",
    [
        {"CONFIG_RCU_NOCB_CPU": False, "bootargs": ""},
        {"CONFIG_RCU_NOCB_CPU": False, "bootargs": "rcutree.use_softirq=0"},
        {"CONFIG_PREEMPT_RCU": False, "CONFIG_PREEMPTION": False},
        {"HZ": 250},
    ],
    ids=["softirq", "rcuc", "non-preemptible", "hz250"],
)
def test_other_kernel_configurations_complete_and_keep_the_guarantee(kernel):
    r = rcusim.run(scenario_dict(**kernel), check=True)
    for v in r.variants.values():
        assert len(v.requests) == 1000 * 20
        assert served_by_a_full_gp(v.requests, v.gps).all()


def test_softirq_callbacks_keep_the_tick_and_need_no_fqs():
    # Without offloading, CPUs with queued callbacks keep their tick
    # (rcu_needs_cpu()), so quiescent states arrive by tick and the FQS scan
    # rarely has anything to do.
    r = rcusim.run(scenario_dict(CONFIG_RCU_NOCB_CPU=False, bootargs=""), variants=["default"])
    c = r.variants["default"].counters
    assert c["ticks"] > 0
    assert c["callbacks_invoked"] == 1000 * 20
    assert c["bypass_enqueues"] == 0


def test_nocb_flood_uses_the_bypass():
    # 10,000 tasks on 64 CPUs enqueue ~156 callbacks per CPU at once, far over
    # nocb_nobypass_lim_per_jiffy (16 at HZ=1000): most go through nocb_bypass.
    r = rcusim.run(SCENARIO, overrides=["workloads.0.loops=2"], variants=["default"])
    c = r.variants["default"].counters
    assert c["bypass_enqueues"] > 10000
    assert c["bypass_flushes"] > 0


def test_engine_invariants_hold_mid_run():
    scenario = load_scenario(SCENARIO, overrides=SMALL)
    engine, _ = build_engine(scenario.variants["default"], seed=1)
    for _ in range(20):
        engine.run(10**15, 2000)
        assert engine.verify() == []
