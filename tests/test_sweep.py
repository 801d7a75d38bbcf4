"""Sweeps: the grid, the tidy table, local pool and Dask agreeing, resume, failures, bad input."""

from __future__ import annotations

import errno
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from rcusim.commands import sweep as sw
from rcusim.commands.cli import main

ROOT = Path(__file__).resolve().parent.parent
SYNC = ROOT / "scenarios" / "sync_rcu_10k.yaml"


def write_sweep(tmp_path, **changes) -> Path:
    doc = {"name": "tiny", "scenario": str(SYNC),
           "set": {"workloads.0.tasks": 8, "workloads.0.loops": 2},
           "sweep": {"hardware.nr_cpus": [4, 8], "kernel.HZ": [250, 1000]},
           "seeds": 2, "variants": ["default", "wake_from_gp"]}
    doc.update(changes)
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_grid_and_table_layout(tmp_path):
    sweep = sw.load_sweep(write_sweep(tmp_path))
    assert sweep.points() == [{"hardware.nr_cpus": 4, "kernel.HZ": 250}, {"hardware.nr_cpus": 4, "kernel.HZ": 1000},
                              {"hardware.nr_cpus": 8, "kernel.HZ": 250}, {"hardware.nr_cpus": 8, "kernel.HZ": 1000}]
    table, failures = sw.run_sweep(sweep, workers=1, progress=False)
    assert failures == []
    assert len(table) == 4 * 2 * 2
    assert list(table.columns[:5]) == ["point", "hardware.nr_cpus", "kernel.HZ", "seed", "variant"]
    assert (table.groupby(["point", "seed"]).size() == 2).all()
    assert (table["latency_us.count"] == 16).all()
    # Each row is the summary of its own run: the same run made directly agrees.
    import rcusim

    direct = rcusim.run(SYNC, overrides={"workloads.0.tasks": 8, "workloads.0.loops": 2, "hardware.nr_cpus": 4,
                                         "kernel.HZ": 250}, seed=1).summary()["variants"]
    for variant in ("default", "wake_from_gp"):
        row = table[(table.point == 0) & (table.seed == 1) & (table.variant == variant)].iloc[0]
        m = direct[variant]["metrics"]
        assert row["latency_us.mean"] == m["latency_us"]["mean"] and row["batching"] == m["batching"]
        assert row["events"] == direct[variant]["events"]
    assert table.groupby("kernel.HZ")["latency_us.mean"].mean().is_monotonic_decreasing


def test_local_pool_and_dask_give_identical_tables(tmp_path):
    distributed = pytest.importorskip("distributed")
    sweep = sw.load_sweep(write_sweep(tmp_path))
    local, f1 = sw.run_sweep(sweep, workers=2, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        dask, f2 = sw.run_sweep(sweep, scheduler=cluster.scheduler_address, progress=False)
    assert f1 == f2 == []
    pd.testing.assert_frame_equal(local, dask)
    inproc, _ = sw.run_sweep(sweep, workers=1, progress=False)
    pd.testing.assert_frame_equal(local, inproc)


def test_failed_point_is_reported_and_others_kept(tmp_path, monkeypatch):
    real = sw.run_scenario

    def flaky(scenario, **kw):
        if scenario.variants["default"].hardware.nr_cpus == 4:
            raise RuntimeError("the simulation stalled")
        return real(scenario, **kw)

    monkeypatch.setattr(sw, "run_scenario", flaky)
    sweep = sw.load_sweep(write_sweep(tmp_path, sweep={"hardware.nr_cpus": [4, 8]}))
    lines = []
    table, failures = sw.run_sweep(sweep, out=tmp_path / "out", workers=1, progress=False, log=lines.append)
    # Point 0 ran once: the scenario draws nothing at random.
    assert failures == lines and len(failures) == 1
    assert "point 0 (hardware.nr_cpus=4, every seed)" in lines[0] and "RuntimeError: the simulation stalled" in lines[0]
    assert set(table["hardware.nr_cpus"]) == {8} and len(table) == 4
    # A re-run retries only the failed point.
    monkeypatch.setattr(sw, "run_scenario", real)
    table2, failures2 = sw.run_sweep(sweep, out=tmp_path / "out", workers=1, progress=False)
    assert failures2 == [] and len(table2) == 8
    pd.testing.assert_frame_equal(table2[table2["hardware.nr_cpus"] == 8].reset_index(drop=True),
                                  table.reset_index(drop=True))


def test_rerun_skips_points_done(tmp_path, monkeypatch):
    sweep = sw.load_sweep(write_sweep(tmp_path, sweep={"hardware.nr_cpus": [4]}, seeds=1))
    first, _ = sw.run_sweep(sweep, out=tmp_path / "out", workers=1, progress=False)
    monkeypatch.setattr(sw, "run_point", lambda *a: pytest.fail("a finished point ran again"))
    again, failures = sw.run_sweep(sweep, out=tmp_path / "out", workers=1, progress=False)
    assert failures == []
    pd.testing.assert_frame_equal(first, again)


def noisy(tmp_path, **changes) -> Path:
    """The sweep of write_sweep() on the scenario with OS noise: its runs draw at random, and
    make calls enough (5 per task) that what they draw shows in every seed's figures."""
    scenario = yaml.safe_load(SYNC.read_text())
    scenario["workloads"].append({"kind": "noise", "preset": "quiet_server"})
    changes = {"set": {"workloads.0.tasks": 8, "workloads.0.loops": 5}, **changes}
    return write_sweep(tmp_path, scenario=scenario, **changes)


@pytest.mark.parametrize("draws", [False, True])
def test_a_point_that_draws_nothing_at_random_runs_once_for_every_seed(tmp_path, monkeypatch, draws):
    changes = {"sweep": {"hardware.nr_cpus": [4, 8]}, "seeds": 3, "variants": ["default"]}
    sweep = sw.load_sweep(noisy(tmp_path, **changes) if draws else write_sweep(tmp_path, **changes))
    assert sweep.seedless == (set() if draws else {0, 1})
    runs = []
    real = sw.run_point
    monkeypatch.setattr(sw, "run_point", lambda *args: runs.append(args[1:3]) or real(*args))
    table, failures = sw.run_sweep(sweep, out=tmp_path / "out", workers=1, progress=False)
    assert failures == [] and len(table) == 2 * 3
    assert [seed for _, seed in runs] == ([0, 1, 2] * 2 if draws else [0, 0])
    assert list(table["seed"]) == [0, 1, 2] * 2
    # The rows of a point differ from seed to seed only when its run draws at random.
    for _, rows in table.groupby("point"):
        distinct = rows.drop(columns="seed").astype(str).drop_duplicates()
        assert len(distinct) == (3 if draws else 1)
    # A re-run finds every run stored.
    again, _ = sw.run_sweep(sweep, out=tmp_path / "out", workers=1, progress=False)
    assert len(runs) == (6 if draws else 2)
    pd.testing.assert_frame_equal(table, again)


def test_a_stored_run_that_cannot_be_read_is_made_again(tmp_path):
    sweep = sw.load_sweep(write_sweep(tmp_path, sweep={"hardware.nr_cpus": [4, 8]}, seeds=1))
    first, _ = sw.run_sweep(sweep, out=tmp_path / "out", workers=1, progress=False)
    broken = sorted((tmp_path / "out" / "points").iterdir())[0]
    broken.write_text("not Parquet")
    again, failures = sw.run_sweep(sweep, out=tmp_path / "out", workers=1, progress=False)
    assert failures == []
    pd.testing.assert_frame_equal(first, again)
    pd.read_parquet(broken)


def test_mean_ci_matches_student_t():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    for n in (2, 5, 30, 31, 40, 200):
        x = rng.normal(10, 2, n)
        m, h = sw.mean_ci(x)
        lo, hi = stats.t.interval(0.95, n - 1, loc=x.mean(), scale=stats.sem(x))
        assert m == pytest.approx(x.mean())
        assert h == pytest.approx((hi - lo) / 2, rel=1e-3)
    assert math.isnan(sw.mean_ci([3.0])[1])


def test_cli_sweep_writes_table_summary_and_plot(tmp_path, capsys):
    out = tmp_path / "out"
    path = write_sweep(tmp_path, sweep={"hardware.nr_cpus": [4, 8]}, seeds=2, variants=["default"])
    assert main(["sweep", str(path), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "p99 (µs)" in captured.out and " ± " in captured.out
    assert captured.err.startswith("rcusim: note: 2 of 2 points draw nothing at random (no noise, ")
    assert captured.err.count("\n") == 1 and "each runs once, its rows standing for all 2 seeds" in captured.err
    table = pd.read_parquet(out / "sweep.parquet")
    assert len(table) == 4
    assert (out / "percentiles.png").stat().st_size > 0


def test_sweep_figure_series_differ_in_colour_and_style_and_the_legend_hides_nothing():
    from rcusim.plots.axes import agg_figure
    from rcusim.plots.latency import PercentileDisplay

    rows = [{"variant": v, "hardware.nr_cpus": n, "kernel.HZ": hz, "seed": seed,
             "latency_us.p50": n + hz + seed, "latency_us.p99": 2 * (n + hz) + seed}
            for v in ("a", "b") for n in (4, 8) for hz in (250, 1000) for seed in (0, 1)]
    fig, ax = agg_figure()
    d = PercentileDisplay.from_sweep(pd.DataFrame(rows), "hardware.nr_cpus",
                                     params=["hardware.nr_cpus", "kernel.HZ"]).plot(ax=ax)
    lines = [container.lines[0] for container in d.lines_]
    assert len(lines) == 8  # 2 variants x 2 HZ x (p50, p99)
    colours = [line.get_color() for line in lines]
    styles = [line.get_linestyle() for line in lines]
    assert len(set(zip(colours, styles))) == len(set(colours)) == len(lines)
    # matplotlib reports every dash pattern beyond the four named styles as "--".
    assert len(set(styles[:4])) == 4
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= ax.get_window_extent().x1


def test_bundled_sweep_labels_match_the_swept_fanout():
    sweep = sw.load_sweep(ROOT / "scenarios" / "sweeps" / "expedited_fanout.yaml")
    for point in sweep.points():
        leaf = point["kernel.CONFIG_RCU_FANOUT_LEAF"]
        scenario = sw.load_scenario(sweep.scenario, overrides=point)
        for name, spec in scenario.variants.items():
            if sweep.variants is None or name in sweep.variants:
                assert spec.params.fanout_leaf == leaf
                assert set(re.findall(r"leaf(\d+)", name)) <= {str(leaf)}, f"{name} runs with leaf {leaf}"
                assert spec.kernel.exp_mutex in name


def test_a_sweep_names_its_own_variants(tmp_path):
    sweep = sw.load_sweep(write_sweep(tmp_path, sweep={"hardware.nr_cpus": [4]}, seeds=1,
                                      variants={"wake": {"kernel.bootargs": "rcutree.rcu_normal_wake_from_gp=1"}}))
    table, failures = sw.run_sweep(sweep, workers=1, progress=False)
    assert failures == [] and list(table["variant"]) == ["wake"]


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "rcusim", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("changes, fragment", [
    ({"sweeps": {}}, "sweep.sweeps: unknown key (did you mean 'sweep'?)"),
    ({"Seeds": 2}, "sweep.Seeds: unknown key (did you mean 'seeds'?)"),
    ({"sweep": {"hardware.nr_cpus": [4, 0]}}, "hardware.nr_cpus: 0 is out of range"),
    ({"sweep": {"hardware.nr_cpus": 4}}, "sweep.sweep.hardware.nr_cpus: 4 is not a list"),
    ({"seeds": 0}, "sweep.seeds: 0 is not valid"),
    ({"variants": ["nope"]}, "sweep.variants:"),
    ({"plot": "kernel.HZ"}, "sweep.plot: 'kernel.HZ' is not a swept key"),
])
def test_bad_sweep_files(tmp_path, capsys, changes, fragment):
    out = tmp_path / "out"
    changes = {"sweep": {"hardware.nr_cpus": [4]}, **changes}
    assert main(["sweep", str(write_sweep(tmp_path, **changes)), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rcusim: error: ") and fragment in err, err
    assert not out.exists()


def test_bad_sweep_file_through_the_process(tmp_path):
    proc = run_cli("sweep", str(write_sweep(tmp_path, sweep={"hardware.nr_cpus": [4, 0]})), "--out",
                   str(tmp_path / "out"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "hardware.nr_cpus: 0 is out of range" in proc.stderr and "in sweep point hardware.nr_cpus=0" in proc.stderr


def _fail_writing(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def _points_folder_is_a_file(tmp_path, monkeypatch):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "points").write_text("")
    monkeypatch.setattr(sw, "run_point", lambda *args: pytest.fail("a point ran"))


@pytest.mark.parametrize("breaks, fragment", [
    (_points_folder_is_a_file, "File exists"),
    (lambda tmp_path, monkeypatch: monkeypatch.setattr(pd.DataFrame, "to_parquet", _fail_writing), "No space left"),
    (lambda tmp_path, monkeypatch: monkeypatch.setattr(sw, "save_percentiles", _fail_writing), "No space left"),
], ids=["points folder", "a point's file", "the plot"])
def test_an_out_that_cannot_be_written_ends_the_sweep_in_one_line(tmp_path, monkeypatch, capsys, breaks, fragment):
    breaks(tmp_path, monkeypatch)
    path = write_sweep(tmp_path, sweep={"hardware.nr_cpus": [4, 8]}, seeds=1)
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--workers", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rcusim: error: --out: cannot write results to "), err
    assert fragment in err
    # No table without its plot, nothing half written.
    assert not (tmp_path / "out" / "sweep.parquet").exists()
    assert [p.name for p in tmp_path.rglob(".*")] == []


def _slow_sweep(tmp_path) -> Path:
    base = yaml.safe_load((ROOT / "scenarios" / "sync_rcu_10k.yaml").read_text())
    base["workloads"][0]["tasks"] = 10000
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    doc = {"name": "slow", "scenario": "base.yaml", "variants": ["default"],
           "sweep": {"kernel.HZ": [100, 250, 300, 1000], "workloads.0.loops": list(range(300, 310))}}
    # 40 runs of about a second: far longer than the wait below
    path = tmp_path / "slow.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_sweep_stops_at_once(tmp_path, sig, status):
    path = _slow_sweep(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "rcusim", "sweep", str(path), "--out", str(tmp_path / "out"),
                             "--workers", "2"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    # Its first line says the sweep has begun (however long its start took); then the
    # workers are running their first points.
    assert proc.stdout.readline().startswith("sweep slow: ")
    time.sleep(3)
    assert proc.poll() is None
    t0 = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert time.monotonic() - t0 < 10, "the runs in progress were not stopped"
    assert "Traceback" not in err
    leftovers = [p.name for p in (tmp_path / "out").rglob("*") if ".tmp-" in p.name]
    assert leftovers == []


def _exit_on_two(k):
    if k == 2:
        os._exit(1)  # as a crash in the engine would end the worker
    return k


def test_a_dead_worker_is_reported_not_waited_for():
    seen = []
    with pytest.raises(sw.WorkerDied) as info:
        for k, value in sw.run_parallel(_exit_on_two, [(0,), (1,), (2,), (3,)], 2, None):
            seen.append(value)
    assert 2 in info.value.unfinished and 2 not in seen
    assert set(seen) | set(info.value.unfinished) == {0, 1, 2, 3}
