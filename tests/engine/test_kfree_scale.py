"""cython_core/kfree_scale.pxi: rcuscale's kfree test (kfree_scale_thread()): threads at nice 19 that
kmalloc() and kfree_rcu() kfree_alloc_num objects a loop, the memory footprint and the batches
they report (seed 001: scenarios/kfree_flood_64cpu.yaml), and the same run in one event per call
or per page. (What each kfree_rcu() call does: tests/engine/test_kvfree_rcu.py.)"""

from pathlib import Path

import pytest

import rcusim
from rcusim.engine.rcuscale import gp_seq_at
from rcusim.input.scenario import load_scenario
from rcusim.kernel.seq import rcu_seq_diff
from rcusim.results.run import run_variant

from tests.engine.conftest import GENERATIONS, flood, small_flood as _small, spec_of

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "kfree_flood_64cpu.yaml"


@pytest.fixture(scope="module")
def seed_run():
    """Seed 001's run at its own size (10,000 loops; about 2.5 s of wall time). At
    a few percent of it the run is all start-up, whose batching says nothing of
    the seed's steady state."""
    return rcusim.run(SCENARIO)


def test_footprint_is_rcuscale_formula(seed_run):
    """The footprint is rcuscale's difference of si_mem_available() samples: the pages the per-CPU
    lists took from the zone (page_alloc.pxi), not the bytes in flight, which the memory table holds."""
    for v in seed_run.variants.values():
        m = v.metrics
        assert m["memory_footprint_mb"] > 0
        assert v.tables["kvfree_memory"]["bytes"].max() <= m["kvfree_peak_mb"] * 2**20


def test_batches_is_rcu_seq_diff_of_gps(seed_run):
    """rcuscale's batches: GPs completed between the last start and the last end, plus one."""
    for v in seed_run.variants.values():
        assert abs(v.metrics["batches"] - v.metrics["grace_periods"]) <= 2


@pytest.mark.parametrize("polled", [False, True])
def test_page_events_agree_with_per_pointer_events(polled):
    spec = _small(polled)
    page = run_variant("page", spec, 0)
    ptr = run_variant("ptr", spec, 0, kfree_chunk=1)
    assert ptr.events > 20 * page.events  # the per-pointer run really is per pointer
    a, b = page.metrics, ptr.metrics
    assert abs(a["total_time_ns"] / b["total_time_ns"] - 1) < 0.02
    assert abs(a["batches"] - b["batches"]) <= max(2, 0.1 * b["batches"])
    assert abs(a["kvfree_peak_mb"] / b["kvfree_peak_mb"] - 1) < 0.15


def test_a_flood_with_a_thread_on_each_of_256_cpus_runs():
    # The engine sizes its entities from the CPUs with a kfree thread: 256 of them
    # once overflowed an 8-bit sum into a too-small allocation.
    scenario = load_scenario({"name": "wide", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 256},
                              "kernel": {"release": "6.6", "HZ": 250},
                              "workloads": [{"kind": "kfree_rcu_flood", "kfree_nthreads": -1,
                                             "kfree_alloc_num": 100, "kfree_loops": 4, "holdoff": 0}]})
    result = run_variant("default", scenario.variants["default"], scenario.seed)
    assert result.metrics["finished"]
    assert result.counters["kvfree_page_allocs"] >= 256  # every CPU's krcp got its first bulk page


def test_kfree_threads_sharing_a_cpu_fill_its_pages_in_turn():
    # Four threads on one CPU: one fills the page another planned to fill while
    # it was preempted; the rest of its calls must go to a new page, not past the end.
    scenario = load_scenario({"name": "shared", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 1},
                              "kernel": {"release": "6.6", "HZ": 250},
                              "workloads": [{"kind": "kfree_rcu_flood", "kfree_nthreads": 4,
                                             "kfree_alloc_num": 8000, "kfree_loops": 40, "holdoff": 0}]})
    result = run_variant("default", scenario.variants["default"], scenario.seed, check=True)
    assert result.metrics["finished"] and result.metrics["loops"] == 40


def _busy_flood(bootargs: str, by_call: bool = False):
    """rcuscale_2cpu's kfree test: a nice-19 kfree thread on each of 2 CPUs, nothing else to run."""
    scenario = load_scenario({"name": "busy", "hardware": {"profile": "qemu-tcg", "nr_cpus": 2},
                              "kernel": {"release": "6.12", "HZ": 1000, "CONFIG_RCU_NOCB_CPU": True,
                                         "CONFIG_RCU_LAZY": True, "CONFIG_PREEMPT_DYNAMIC": True,
                                         "bootargs": bootargs},
                              "workloads": [{"kind": "kfree_rcu_flood", "kfree_nthreads": 2, "kfree_loops": 20,
                                             "kfree_alloc_num": 8000, "kfree_by_call_rcu": by_call,
                                             "holdoff": 1}]})
    return run_variant("default", scenario.variants["default"], scenario.seed, check=True).metrics


@pytest.mark.parametrize("by_call", [False, True])
def test_kfree_threads_yield_at_each_kmalloc_with_preempt_voluntary(by_call):
    # With every CPU running a kfree thread, the monitor's kworker, the GP kthread and
    # rcuog run only where the threads yield: with preempt=voluntary at the
    # might_resched() of each kmalloc(GFP_KERNEL), as with preempt=full; with
    # preempt=none only at the cond_resched() ending each loop of 8000 calls.
    nocbs = " rcu_nocbs=all" if by_call else ""
    none, voluntary, full = (_busy_flood(f"preempt={m}{nocbs}", by_call) for m in ("none", "voluntary", "full"))
    assert 0 < none["batches"] < voluntary["batches"]
    assert abs(voluntary["batches"] - full["batches"]) <= 0.15 * full["batches"]
    if by_call:
        # Each CPU's lazy bypass is flushed when it holds qhimark (10000) callbacks:
        # 2 x 20 x 8000 calls make 32 flushes, two CPUs' flushes can share a GP.
        assert 16 <= voluntary["batches"] <= 33


@pytest.mark.parametrize("release", GENERATIONS)
def test_batches_are_the_grace_periods_between_the_last_start_and_the_last_end(runs, release):
    # rcuscale's batches, in every release: rcu_seq_diff() of rcu_state.gp_seq read by
    # the last thread to start and by the last to finish; here rebuilt from the GP records.
    run, kv = runs[release], runs[release].kvfree
    gps = run_variant_gps(run)
    start = gp_seq_at(gps, kv["gp_seq_started_ns"], expedited=False)
    end = gp_seq_at(gps, kv["end_time_ns"], expedited=False)
    # The records hold completed GPs: one that started and had not ended when the
    # run stopped leaves gp_seq one above what they give.
    assert kv["gp_seq_started"] == start and kv["gp_seq_finished"] in (end, end + 1)
    assert rcu_seq_diff(kv["gp_seq_finished"], kv["gp_seq_started"]) >= 2


def run_variant_gps(run):
    import pandas as pd

    return pd.DataFrame({k: run.gps[k] for k in ("gp_seq", "t_start_ns", "t_end_ns", "expedited")})


@pytest.mark.parametrize("release", ["5.5", "5.6", "5.7", "5.9"])
def test_page_events_agree_with_per_call_events(release):
    spec = spec_of(flood(release, loops=12))
    burst, per_call = run_variant("b", spec, 0), run_variant("c", spec, 0, kfree_chunk=1)
    assert per_call.events > 2 * burst.events
    a, b = burst.metrics, per_call.metrics
    assert abs(a["total_time_ns"] / b["total_time_ns"] - 1) < 0.02
    assert abs(a["batches"] - b["batches"]) <= max(2, 0.1 * b["batches"])
    assert abs(a["kvfree_peak_mb"] / b["kvfree_peak_mb"] - 1) < 0.15
