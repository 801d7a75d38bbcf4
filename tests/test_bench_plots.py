"""``rcusim bench`` and the exploration plots (percentiles, time series, GP timeline)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rcusim.commands import bench
from rcusim.commands.cli import main
from rcusim.commands.sweep import mean_ci
from rcusim.input.scenario import load_scenario
from rcusim.plots import GpTimelineDisplay, PercentileDisplay, TimeSeriesDisplay, waiters_over_time
from rcusim.results.run import run_scenario

ROOT = Path(__file__).resolve().parent.parent
SYNC = ROOT / "scenarios" / "sync_rcu_10k.yaml"


def test_bench_prints_a_row_per_scenario_and_the_speedup(tmp_path, capsys):
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text(SYNC.read_text().replace("tasks: 10000", "tasks: 16").replace("loops: 1000", "loops: 20")
                    .replace("nr_cpus: 64", "nr_cpus: 4"))
    assert main(["bench", "--quick", "--scenario", str(tiny)]) == 0
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.startswith("sync_rcu_10k"))
    # --quick: 20 loops / 10 = 2 loops x 16 tasks x 2 variants.
    cells = row.split()
    assert cells[1] == "64"
    heap, process_s, *split, peak_mib = (float(c) for c in cells[4:])
    assert 0 < heap < 1.5 and peak_mib > 0
    # Start-up, build, engine, results and write add up to the process's wall time.
    assert len(split) == 5 and sum(split) == pytest.approx(process_s, abs=0.05)
    assert re.search(r"engine micro-benchmark .*: [\d,]+ events in [\d.]+ ms, [\d,]+ events/s", out)
    assert re.search(r"speed-up \d+x \(identical request records\)", out)


def test_fitted_exponent_recovers_a_power_law():
    sizes = [64, 256, 1024, 8192]
    assert bench.fitted_exponent(sizes, [3e-6 * n**1.25 for n in sizes]) == pytest.approx(1.25)
    assert bench.fitted_exponent(sizes, [5.0 * n for n in sizes]) == pytest.approx(1.0)


def test_scaling_exponents_hold_the_events_per_call():
    """Events growing as n**1.2 and CPU time as n**1.3: the cost per event grows as n**0.1,
    so at events held per call (calls grow as n) the exponent is 1.1."""
    rows = [{"size": n, "events": 40 * n**1.2, "cpu_s": 2e-7 * n**1.3} for n in (64, 256, 1024, 8192)]
    k = bench.scaling_exponents(rows)
    assert k["cpu"] == pytest.approx(1.3)
    assert k["events"] == pytest.approx(1.2)
    assert k["per_call_held"] == pytest.approx(1.1)


def test_scaling_measures_the_engines_cpu_time():
    (row,) = bench.scaling("tasks", [bench.SCALING["tasks"]["sizes"][0]])
    assert row["size"] == 1_250 and row["events"] > 20 * 1_250
    # The engine's thread cannot have more CPU time than the wall time it ran for.
    assert 0 < row["cpu_s"] <= row["engine_s"] * 1.05 + 0.01


def test_bench_prints_each_goal_met_or_not(capsys):
    bench.print_goals({"main": 25.0, "main_peak": 330.0, "heap": 0.5, "tasks": 1.08})
    out = capsys.readouterr().out
    assert re.search(r"README main job .* 25\.00 <=\s+8\.00  no", out)
    assert re.search(r"its peak memory, MiB .* 330\.00 <=\s+572\.20  yes", out)  # 600 MB
    assert re.search(r"bare heap .* 0\.50 >=\s+0\.50  yes", out)
    assert re.search(r"exponent in tasks .* 1\.08 <=\s+1\.05  no", out)
    assert "60,000 tasks" not in out and "in CPUs" not in out  # what was not measured is not printed


def _stub_bench_runs(monkeypatch):
    """bench's runs replaced by fixed figures: the main job 20 s in 300 MiB, the --large one
    100 s in 700 MiB; CPU time growing as CPUs**1.2 and tasks**1.0 at 10 events a unit."""
    def timed(func, path, quick, overrides):
        large = overrides is not None
        return {"scenario": "sync_rcu_10k", "requests": 1, "events": 1, "events_per_s": 1.0,
                "heap_ratio": 0.25, "process_s": 100.0 if large else 20.0, "startup_s": 0.0, "build_s": 0.0,
                "engine_s": 0.0, "results_s": 0.0, "write_s": 0.0, "peak_bytes": (700 if large else 300) * 2**20}

    def scaling(what, sizes):
        k = 1.2 if what == "CPUs" else 1.0
        return [{"size": n, "events": 10 * n, "cpu_s": 1e-6 * n**k, "engine_s": 1e-6 * n**k} for n in sizes]

    monkeypatch.setattr(bench, "_timed_in_fresh_process", timed)
    monkeypatch.setattr(bench, "scaling", scaling)
    monkeypatch.setattr(bench, "engine_microbench", lambda: {"events": 1, "engine_s": 1.0, "events_per_s": 1.0})
    monkeypatch.setattr(bench, "reference_speedup", lambda: {"requests": 1, "engine_s": 1.0, "reference_s": 2.0,
                                                             "speedup": 2.0, "identical": True})


def test_bench_puts_each_full_size_figure_beside_its_own_goal(monkeypatch, capsys):
    _stub_bench_runs(monkeypatch)
    assert main(["bench", "--scenario", str(bench.SCALING_SCENARIO), "--large", "--scaling"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"README main job .* 20\.00 <=\s+8\.00  no", out)
    assert re.search(r"its peak memory, MiB\s+300\.00 <=\s+572\.20  yes", out)
    assert re.search(r"60,000 tasks .* 100\.00 <=\s+60\.00  no", out)
    assert re.search(r"its peak memory, MiB\s+700\.00 <=\s+2861\.02  yes", out)
    assert re.search(r"bare heap .* 0\.25 >=\s+0\.50  no", out)
    assert re.search(r"exponent in CPUs .* 1\.20 <=\s+1\.10  no", out)
    assert re.search(r"exponent in tasks .* 1\.00 <=\s+1\.05  yes", out)


def test_bench_quick_puts_nothing_beside_the_goals(monkeypatch, capsys):
    _stub_bench_runs(monkeypatch)
    assert main(["bench", "--quick", "--scenario", str(bench.SCALING_SCENARIO), "--large", "--scaling"]) == 0
    out = capsys.readouterr().out
    assert "scaling in CPUs" in out and not re.search(r"^goal\s", out, re.M)


def test_bench_quick_overrides_cut_loops():
    scenario = load_scenario(SYNC)
    assert bench._quick_overrides(scenario) == {"workloads.0.loops": 100}
    assert [p.name for p in bench._bundled_scenarios()] == sorted(p.name for p in (ROOT / "scenarios").glob("*.yaml"))
    assert {"kfree_flood_64cpu.yaml", "membarrier_e5405.yaml", "rt_latency_up.yaml"} <= {
        p.name for p in bench._bundled_scenarios()}


def test_bench_quick_cuts_workloads_that_variants_replace():
    path = ROOT / "scenarios" / "membarrier_e5405.yaml"
    quick = load_scenario(path, overrides=bench._quick_overrides(load_scenario(path)))
    assert {name: v.workloads[0].calls for name, v in quick.variants.items()} == {
        "single": 1_000_000, "many": 1_000_000, "adaptive": 1_000_000}
    kfree = load_scenario(ROOT / "scenarios" / "kfree_flood_64cpu.yaml")
    assert bench._quick_overrides(kfree) == {"workloads.0.kfree_loops": 1000}


def test_bench_large_is_seed_000s_job_at_60000_tasks():
    """--large runs the scaling scenario with 60,000 of its tasks, each its 1000 loops, both
    variants and every row: 120 million calls; --quick cuts its loops like any workload's."""
    scenario = load_scenario(bench.SCALING_SCENARIO, overrides=bench.LARGE_OVERRIDES)
    calls = 0
    for spec in scenario.variants.values():
        (wl,) = [w for w in spec.workloads if w.kind == "sync_loop"]
        assert wl.tasks == 60_000 and spec.run.records == "all"
        calls += wl.tasks * wl.loops
    assert calls == 120_000_000 and len(scenario.variants) == 2
    quick = {**bench._quick_overrides(scenario), **bench.LARGE_OVERRIDES}
    assert quick == {"workloads.0.loops": 100, "workloads.0.tasks": 60_000}


def test_bench_runs_a_scenario_without_rcu_requests():
    r = bench.bench_scenario(str(ROOT / "scenarios" / "rt_latency_up.yaml"), quick=True)
    assert r["scenario"] == "rt_latency_up" and r["variants"] == 3
    assert r["events"] > 0 and r["engine_s"] > 0 and r["events_per_s"] > 0


def test_percentile_display_draws_mean_and_ci():
    table = pd.DataFrame({"variant": ["a"] * 6, "hardware.nr_cpus": [4, 4, 4, 8, 8, 8], "seed": [0, 1, 2] * 2,
                          "latency_us.p50": [1.0, 2.0, 3.0, 10.0, 12.0, 14.0], "latency_us.p99": [5.0] * 6})
    d = PercentileDisplay.from_sweep(table, "hardware.nr_cpus", params=["hardware.nr_cpus"]).plot()
    p50 = d.lines_[0]
    xs, ys = p50.lines[0].get_data()
    assert list(xs) == [4, 8] and list(ys) == [2.0, 12.0]
    seg = p50.lines[2][0].get_segments()
    assert seg[1][1][1] - 12.0 == pytest.approx(mean_ci([10.0, 12.0, 14.0])[1])
    assert d.ax_.get_xlabel() == "hardware.nr_cpus" and "µs" in d.ax_.get_ylabel()


def test_time_series_and_gp_timeline():
    scenario = load_scenario(SYNC, overrides=["hardware.nr_cpus=4", "workloads.0.tasks=8", "workloads.0.loops=2"])
    result = run_scenario(scenario, progress=False, trace_limit=10_000)
    series = waiters_over_time(result)
    t, n = series["default"]
    assert n.max() == 8 and n[-1] == 0 and np.all(np.diff(t) >= 0)
    d = TimeSeriesDisplay(series, "tasks waiting").plot()
    assert len(d.lines_) == 2 and d.ax_.get_xlabel() == "simulated time (ms)"
    g = GpTimelineDisplay.from_result(result, "default").plot()
    assert g.ax_.get_ylabel() == "CPU" and g.ax_.get_legend() is not None
