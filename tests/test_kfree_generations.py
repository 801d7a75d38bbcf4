"""Every kfree_rcu() generation, chosen by kernel.release: its objects are freed only after
their grace period, rcuscale's batches are grace periods as every release counts them, its
line is the release's, and what the model or the release's test lacks is refused."""

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rcusim.engine.rcuscale import gp_seq_at, rcuscale_line
from rcusim.engine.simulate import build_engine, run_engine
from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario
from rcusim.kernel.seq import rcu_seq_diff
from rcusim.results.run import run_variant

ROOT = Path(__file__).resolve().parents[1]

#: One release of each generation, and what its kfree_rcu() does.
GENERATIONS = {
    "5.5": "call_rcu() per object",
    "5.6": "krcp->head lists, two batches",
    "5.7": "bulk pages, one cached page, GFP_NOWAIT in the call",
    "5.9": "rcu_min_cached_objs pages cached from boot",
    "5.11": "page_cache_work, the rcu_head list without a page",
    "6.1": "5*HZ drain, 1 jiffy when a CPU's batch is full",
    "6.3": "per-page GP snapshots: the monitor frees the ready pages, queue_rcu_work() the rest",
}

NOCB_ALL = {"CONFIG_RCU_NOCB_CPU": True, "CONFIG_RCU_NOCB_CPU_DEFAULT_ALL": True}


def flood(release: str, loops: int = 100, kernel: dict | None = None, **workload) -> dict:
    """8 CPUs, all offloaded, 4 threads of 4000 calls a loop: long enough (> HZ/50) for
    batches to be freed while the threads run."""
    return {"hardware": {"profile": "x86-64-server-2023", "nr_cpus": 8},
            "kernel": {"release": release, "HZ": 1000, **NOCB_ALL, **(kernel or {})},
            "workloads": [{"kind": "kfree_rcu_flood", "kfree_nthreads": 4, "kfree_alloc_num": 4000,
                           "kfree_loops": loops, **workload}]}


def spec_of(data: dict):
    return load_scenario(data).variants["default"]


@pytest.fixture(scope="module")
def runs():
    """Each generation's run (the engine's records) with the checker on."""
    return {rel: run_engine(rel, spec_of(flood(rel)), 0, check=True) for rel in GENERATIONS}


@pytest.mark.parametrize("release", GENERATIONS)
def test_each_generation_frees_only_after_its_gp(runs, release):
    run = runs[release]
    assert run.safety["violations"] == 0  # run_engine also raises on any
    c = {**run.counters, **run.kvfree["counters"]}
    if release == "5.5":  # every object is a callback, checked when invoked
        assert c["callbacks_invoked"] > 100_000 and c["kvfree_monitor_runs"] == 0
    else:  # batches were freed by kfree_rcu_work while the threads ran
        assert c["kvfree_rcu_work_runs"] > 0 and c["kvfree_batches_detached"] > 0
        assert c["callbacks_invoked"] < 1000  # queue_rcu_work()'s callbacks only


@pytest.mark.parametrize("release", GENERATIONS)
def test_the_checker_catches_frees_without_a_gp_in_each_generation(release):
    engine, _ = build_engine(spec_of(flood(release)), 0, fault="kvfree-no-gp")
    while engine.run(10**12, 10**6) == 1:  # EXIT_MAX_EVENTS
        pass
    assert engine.safety()["violations"] > 0


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


def test_generations_differ_as_the_kernel_history_says(runs):
    c = {rel: {**r.counters, **r.kvfree["counters"]} for rel, r in runs.items()}
    gps = {rel: int((~r.gps["expedited"]).sum()) for rel, r in runs.items()}
    # Batching (v5.6) waits HZ/50 and frees a whole batch after one GP: far fewer GPs.
    assert gps["5.5"] > 3 * gps["5.6"]
    # No page before v5.7; v5.7 allocates pages, v5.9 starts with 2 cached on each CPU.
    assert c["5.6"]["kvfree_page_allocs"] == 0 and c["5.7"]["kvfree_page_allocs"] > 0
    assert c["5.9"]["kvfree_page_allocs"] >= 2 * 8
    # Until v5.10 the call allocates a page; from v5.11 a two-argument call without one
    # takes the rcu_head list.
    assert c["5.7"]["kvfree_channel3_objects"] == 0 and c["5.11"]["kvfree_channel3_objects"] > 0
    # v6.1 drains a full batch after one jiffy: more GPs than v5.11's HZ/50 monitor.
    assert gps["6.1"] > gps["5.11"]


def test_the_polled_patch_as_posted_waits_in_the_worker_and_v6_3_in_queue_rcu_work(runs):
    # Seed 001's patch as posted (on 6.2): the worker polls each page and calls
    # synchronize_rcu() for the rest. v6.3 merged it with kvfree_rcu_drain_ready(): the
    # monitor frees the ready pages, and a batch waits for queue_rcu_work()'s GP.
    posted = run_engine("posted", spec_of(flood("6.2", kernel={"patches": ["rcu-kvfree-polled"]})), 0, check=True)
    p, m = posted.kvfree["counters"], runs["6.3"].kvfree["counters"]
    assert p["kvfree_work_synchronize_rcu"] > 0 and m["kvfree_work_synchronize_rcu"] == 0
    assert p["kvfree_pages_ready_without_wait"] > 0 and m["kvfree_pages_ready_without_wait"] > 0
    # Callbacks: queue_rcu_work()'s, one per batch, in v6.3; only synchronize_rcu()'s wakeme
    # in the posted form's worker.
    assert posted.counters["callbacks_invoked"] <= p["kvfree_work_synchronize_rcu"]
    assert runs["6.3"].counters["callbacks_invoked"] >= m["kvfree_rcu_work_runs"] > 0


@pytest.mark.parametrize("release, footprint", [("5.5", False), ("5.6", False), ("5.7", True), ("6.3", True)])
def test_the_line_is_the_release_s(release, footprint):
    metrics = run_variant("x", spec_of(flood(release, loops=8)), 0).metrics
    line = rcuscale_line(metrics)
    assert line.startswith("Total time taken by all kfree'ers: ")
    assert ("memory footprint" in line) == footprint == (metrics["memory_footprint_mb"] is not None)


@pytest.mark.parametrize("release", ["5.5", "5.6", "5.7", "5.9"])
def test_page_events_agree_with_per_call_events(release):
    spec = spec_of(flood(release, loops=12))
    burst, per_call = run_variant("b", spec, 0), run_variant("c", spec, 0, kfree_chunk=1)
    assert per_call.events > 2 * burst.events
    a, b = burst.metrics, per_call.metrics
    assert abs(a["total_time_ns"] / b["total_time_ns"] - 1) < 0.02
    assert abs(a["batches"] - b["batches"]) <= max(2, 0.1 * b["batches"])
    assert abs(a["kvfree_peak_mb"] / b["kvfree_peak_mb"] - 1) < 0.15


def test_kfree_by_call_rcu_queues_lazy_callbacks():
    lazy = run_engine("lazy", spec_of(flood("6.2", kernel={"CONFIG_RCU_LAZY": True}, kfree_by_call_rcu=True)), 0)
    assert lazy.counters["callbacks_invoked"] > 100_000 and lazy.kvfree["counters"]["kvfree_monitor_runs"] == 0
    assert lazy.counters["bypass_enqueues"] > 0
    # Without CONFIG_RCU_LAZY rcuscale falls back to kfree_rcu().
    from rcusim.engine.engine_input import engine_input

    plain, fallback = (engine_input(spec_of(flood("6.2", kfree_by_call_rcu=v)))[0].kvfree_rcu for v in (False, True))
    assert all(np.array_equal(getattr(plain, f.name), getattr(fallback, f.name)) for f in dataclasses.fields(plain))


@pytest.mark.parametrize("kernel, workload, key, allowed", [
    ({"release": "5.7"}, {"kfree_mult": 2}, "workloads[0].kfree_mult", "1, or kernel.release 5.8 or later"),
    ({"release": "5.12"}, {"kfree_rcu_test_single": True}, "workloads[0].kfree_rcu_test_single",
     "false, or kernel.release 5.13 or later"),
    ({"release": "6.1"}, {"kfree_by_call_rcu": True}, "workloads[0].kfree_by_call_rcu",
     "false, or kernel.release 6.2 or later"),
    ({"release": "2.6.39", "CONFIG_RCU_NOCB_CPU": False, "CONFIG_RCU_NOCB_CPU_DEFAULT_ALL": False}, {},
     "workloads[0].kind", "kernel.release 3.0 or later"),
    ({"release": "6.6", "CONFIG_RCU_LAZY": True, "CONFIG_RCU_NOCB_CPU_DEFAULT_ALL": False,
      "bootargs": "rcu_nocbs=0-3"}, {"kfree_by_call_rcu": True}, "workloads[0].kfree_by_call_rcu",
     "every CPU offloaded"),
    ({"release": "6.9", "CONFIG_RCU_LAZY": True, "bootargs": "rcutree.enable_rcu_lazy=0"},
     {"kfree_by_call_rcu": True}, "workloads[0].kfree_by_call_rcu", "lazy RCU on at boot"),
    ({"release": "5.8", "bootargs": "rcutree.rcu_min_cached_objs=3"}, {}, "kernel.bootargs",
     "release 5.9 or later"),
])
def test_a_generation_asked_on_the_wrong_release_is_refused(tmp_path, kernel, workload, key, allowed):
    import yaml

    data = flood("6.6", loops=4, **workload)
    data["kernel"].update(kernel)
    with pytest.raises(ScenarioError):
        load_scenario(data)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"name": "s", **data}))
    out = tmp_path / "out"
    proc = _cli("run", str(path), "--out", str(out))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and proc.stdout == "" and not out.exists()
    assert len(lines) == 1 and key in lines[0] and allowed in lines[0], proc.stderr


@pytest.mark.parametrize("release, args, named, allowed", [
    ("5.8", ["--bootargs", "rcuscale.kfree_rcu_test=1"], "rcuscale.kfree_rcu_test", "rcuperf.kfree_rcu_test"),
    ("6.2", ["--bootargs", "rcuperf.kfree_rcu_test=1"], "rcuperf.kfree_rcu_test", "rcuscale.kfree_rcu_test"),
    ("5.5", ["--bootargs", "rcuperf.kfree_rcu_test=1"], "rcuperf.kfree_rcu_test", "release 5.6 or later"),
    ("5.7", ["--bootargs", "rcuperf.kfree_rcu_test=1 rcuperf.kfree_mult=2"], "rcuperf.kfree_mult",
     "release 5.8 or later"),
    ("6.2", ["--torture", "rcuperf", "--bootargs", "rcuscale.kfree_rcu_test=1"], "--torture", "--torture rcuscale"),
    ("5.8", ["--bootargs", "rcuperf.nwriters=1"], "rcuperf", "rcuperf.kfree_rcu_test=1"),
    ("6.6", ["--bootargs", "rcuscale.kfree_rcu_test=1 rcuscale.gp_exp=1"], "gp_exp", "rcuscale.gp_exp=0"),
])
def test_a_kvm_line_for_another_release_is_refused(tmp_path, release, args, named, allowed):
    proc = _cli("rcuscale", "--release", release, "--kconfig", "CONFIG_NR_CPUS=4", *args,
                "--out", str(tmp_path / "out"))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and proc.stdout == "" and not (tmp_path / "out").exists()
    assert len(lines) == 1 and named in lines[0] and allowed in lines[0], proc.stderr


def test_an_rcuperf_kvm_line_runs_on_its_release():
    proc = _cli("rcuscale", "--release", "5.6", "--torture", "rcuperf", "--kconfig", "CONFIG_NR_CPUS=4",
                "--bootargs", "rcuperf.kfree_rcu_test=1 rcuperf.kfree_nthreads=2 rcuperf.kfree_loops=8")
    assert proc.returncode == 0, proc.stderr
    line, = proc.stdout.splitlines()
    assert line.startswith("Total time taken by all kfree'ers: ") and ", loops: 8, batches: " in line
    assert "memory footprint" not in line  # v5.7 added it


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "rcusim", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("release, entries", [("5.7", 509), ("5.9", 510), ("6.1", 510), ("6.2", 509),
                                              ("6.3", 508), ("6.5", 507), ("6.12", 507)])
def test_a_bulk_page_holds_what_its_header_leaves(release, entries):
    # KVFREE_BULK_MAX_ENTR = (PAGE_SIZE - sizeof(struct kvfree_rcu_bulk_data)) / sizeof(void *):
    # the header grew a list_head (v6.2), an unsigned long gp_snap (v6.3), then a struct
    # rcu_gp_oldstate (v6.5, two unsigned longs).
    from rcusim.engine.rcuscale import kvfree_bulk_max_entr
    from rcusim.input.releases import parse_release, release_switches

    assert kvfree_bulk_max_entr(release_switches(parse_release(release))) == entries
