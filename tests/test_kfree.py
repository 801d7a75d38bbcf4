"""kvfree_rcu() batching and rcuscale's kfree test (scenarios/kfree_flood_64cpu.yaml, seed 001)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import rcusim
from rcusim.input.scenario import load_scenario
from rcusim.plots import save_result_figures
from rcusim.results.run import run_variant

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "kfree_flood_64cpu.yaml"
LINE = re.compile(r"^Total time taken by all kfree'ers: (\d+) ns, loops: (\d+), batches: (\d+), "
                  r"memory footprint: (-?\d+)MB$", re.M)
# Seed 001's command line, with fewer loops.
KVM = ["--memory", "10G", "--torture", "rcuscale", "--allcpus", "--duration", "1",
       "--kconfig", "CONFIG_NR_CPUS=64", "--kconfig", "CONFIG_RCU_NOCB_CPU=y",
       "--kconfig", "CONFIG_RCU_NOCB_CPU_DEFAULT_ALL=y", "--kconfig", "CONFIG_RCU_LAZY=n",
       "--bootargs", "rcuscale.kfree_rcu_test=1 rcuscale.kfree_nthreads=16 rcuscale.holdoff=20 "
       "rcuscale.kfree_loops=200 torture.disable_onoff_at_boot", "--trust-make"]


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "rcusim", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)


@pytest.fixture(scope="module")
def seed_run():
    """Seed 001's run at its own size (10,000 loops; about 2.5 s of wall time). At
    a few percent of it the run is all start-up, whose batching says nothing of
    the seed's steady state."""
    return rcusim.run(SCENARIO)


def test_time_ratio_in_seed_band(seed_run):
    d, p = (seed_run.variants[n].metrics for n in ("default", "polled"))
    assert 0.8 <= p["total_time_ns"] / d["total_time_ns"] <= 1.6
    # The polled reclaim frees pages whose GP passed without waiting; the default never does.
    assert seed_run.variants["polled"].counters["kvfree_pages_ready_without_wait"] > 0
    assert seed_run.variants["default"].counters["kvfree_pages_ready_without_wait"] == 0


def test_batches_ratio_in_seed_band(seed_run):
    # kfree_rcu_work runs where rcuop invoked its callback, not beside the flood's threads.
    d, p = (seed_run.variants[n].metrics for n in ("default", "polled"))
    assert 1.2 <= p["batches"] / d["batches"] <= 2.0


@pytest.mark.xfail(strict=True, reason="known miss, see docs/validation.md: the model's default "
                   "reclaim keeps up with the flood, so its footprint stays within 2x of polled")
def test_footprint_ratio(seed_run):
    d, p = (seed_run.variants[n].metrics for n in ("default", "polled"))
    assert d["memory_footprint_mb"] / p["memory_footprint_mb"] >= 20


def test_footprint_is_rcuscale_formula(seed_run):
    """The footprint is 7/8 of the usage at the loop-quarter samples, so below the peak."""
    for v in seed_run.variants.values():
        m = v.metrics
        assert 0 < m["memory_footprint_mb"] <= m["kvfree_peak_mb"]
        assert v.tables["kvfree_memory"]["bytes"].max() <= m["kvfree_peak_mb"] * 2**20


def test_batches_is_rcu_seq_diff_of_gps(seed_run):
    """rcuscale's batches: GPs completed between the last start and the last end, plus one."""
    for v in seed_run.variants.values():
        assert abs(v.metrics["batches"] - v.metrics["grace_periods"]) <= 2


def _small(polled: bool):
    data = {
        "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 8},
        "kernel": {"release": "6.3" if polled else "6.2", "HZ": 1000, "CONFIG_RCU_NOCB_CPU": True,
                   "CONFIG_RCU_NOCB_CPU_DEFAULT_ALL": True},
        "workloads": [{"kind": "kfree_rcu_flood", "kfree_nthreads": 4, "kfree_alloc_num": 4000,
                       "kfree_loops": 12}],
    }
    return load_scenario(data).variants["default"]


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


def test_same_seed_same_result():
    spec = _small(True)
    a, b = run_variant("a", spec, 3), run_variant("b", spec, 3)
    assert a.metrics == b.metrics and a.tables["kvfree_memory"].equals(b.tables["kvfree_memory"])


def test_pasted_command_prints_rcuscale_line():
    proc = _cli("rcuscale", *KVM)
    assert proc.returncode == 0, proc.stderr
    (match,) = LINE.findall(proc.stdout)
    assert match[1] == "200" and int(match[0]) > 0 and int(match[2]) > 1
    assert "--memory 10G" in proc.stderr and "ignored" in proc.stderr


def test_yaml_report_has_rcuscale_line(seed_run):
    assert len(LINE.findall(seed_run.report_text())) == 2


def test_written_results_have_memory_series(seed_run, tmp_path):
    out = seed_run.write(tmp_path / "r", figures=save_result_figures)
    assert (out / "kvfree_memory.png").stat().st_size > 0
    # No synchronize_rcu*() call and no real-time probe: no latency figures.
    assert {p.name for p in out.iterdir()} == {"summary.json", "latencies.parquet", "gps.parquet",
                                               "kvfree_memory.parquet", "kvfree_memory.png", "report.txt"}
    import pandas as pd

    memory = pd.read_parquet(out / "kvfree_memory.parquet")
    assert list(memory.columns) == ["variant", "t_ns", "bytes"]
    assert set(memory["variant"]) == set(seed_run.variants) and (memory["bytes"] >= 0).all()


@pytest.mark.parametrize("args, key", [
    (["--bootargs", "rcuscale.kfree_rcu_test=1 rcuscale.kfree_bogus=3"], "kfree_bogus"),
    (["--bootargs", "rcuscale.kfree_rcu_test=0 rcuscale.gp_async=1 rcuscale.gp_async_max=0"],
     "gp_async_max"),  # the writer test's
    (["--bootargs", "rcuscale.kfree_rcu_test=1", "--kconfig", "CONFIG_FOO=y"], "CONFIG_FOO"),
    (["--bootargs", "rcuscale.kfree_rcu_test=1 rcuscale.kfree_loops=2"], "kfree_loops"),
    (["--bootargs", "rcuscale.kfree_rcu_test=1", "--torture", "rcu"], "--torture"),
    (["--bootargs", "rcuscale.kfree_rcu_test=1", "--kconfig", "CONFIG_HZ=123"], "CONFIG_HZ"),
    (["--bootargs", "rcuscale.kfree_rcu_test=1", "--frobnicate"], "frobnicate"),
])
def test_bad_command_lines(args, key):
    proc = _cli("rcuscale", *args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rcusim: error:") and key in lines[0]


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
