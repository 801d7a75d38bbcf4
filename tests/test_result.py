"""Tests of rcusim.results.result: metrics, summary, table, report and written files.

Results are built from synthetic NumPy arrays generated here, and every
expected number is computed here with NumPy, independently of the code
under test.
"""

import json

import numpy as np
import pandas as pd
import pytest

import rcusim.plots
from rcusim.plots import save_result_figures
from rcusim.results.frames import latency_ns, make_gps_frame, make_requests_frame
from rcusim.results.histogram import format_log2_histogram
from rcusim.results.result import Result, VariantResult
from rcusim.results.rows import RequestRows

N_REQUESTS = 2000


def make_arrays(seed):
    """Raw columns of two variants: 'default' and 'wake_from_gp'."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for name, median_ns, n_normal, n_exp in [("default", 5_000_000, 100, 3), ("wake_from_gp", 3_000_000, 250, 0)]:
        t_start = np.sort(rng.integers(0, 10**9, N_REQUESTS))
        latency = rng.lognormal(np.log(median_ns), 0.5, N_REQUESTS).astype(np.int64)
        gp_start = np.sort(rng.integers(0, 10**9, n_normal + n_exp))
        arrays[name] = {
            "task": rng.integers(0, 100, N_REQUESTS),
            "cpu": rng.integers(0, 8, N_REQUESTS),
            "primitive": np.zeros(N_REQUESTS, dtype=np.int8),
            "t_start_ns": t_start,
            "t_end_ns": t_start + latency,
            "gp_seq": 4 * np.arange(1, n_normal + n_exp + 1),
            "gp_t_start_ns": gp_start,
            "gp_t_end_ns": gp_start + 20_000_000,
            "expedited": np.arange(n_normal + n_exp) >= n_normal,
            "events": np.int64(123_456),
            "sim_time_ns": int(t_start.max() + latency.max()),
        }
    return arrays


def build_result(arrays, wall_times=(1.5, 0.75)):
    variants = {}
    for (name, a), wall in zip(arrays.items(), wall_times):
        variants[name] = VariantResult(
            name=name,
            rows=RequestRows(make_requests_frame(a["task"], a["cpu"], a["primitive"], a["t_start_ns"], a["t_end_ns"])),
            gps=make_gps_frame(a["gp_seq"], a["gp_t_start_ns"], a["gp_t_end_ns"], a["expedited"]),
            counters={"events": a["events"], "ipis_sent": 7},
            events=a["events"],
            wall_time_s=wall,
            sim_time_ns=a["sim_time_ns"],
            completion_time_ns=a["sim_time_ns"],
        )
    return Result(
        scenario_name="sync_rcu_test",
        seed=42,
        rcusim_version="0.1.0",
        variants=variants,
        provenance={"argv": ["rcusim", "run", "x.yaml"]},
    )


@pytest.fixture
def arrays_fixture():
    return make_arrays(12345)


@pytest.fixture
def result_fixture(arrays_fixture):
    return build_result(arrays_fixture)


def test_request_frame_dtypes(result_fixture):
    requests = result_fixture.variants["default"].requests
    assert requests["task"].dtype == np.int32
    assert requests["cpu"].dtype == np.int32
    assert requests["primitive"].dtype == np.int8
    assert requests["t_start_ns"].dtype == requests["t_end_ns"].dtype == np.int64
    assert "latency_ns" not in requests.columns  # derived: latency_ns(requests)
    assert latency_ns(requests).dtype == np.int64


def test_latency_metrics_match_numpy(result_fixture, arrays_fixture):
    for name, a in arrays_fixture.items():
        lat_us = (a["t_end_ns"] - a["t_start_ns"]) / 1000.0
        m = result_fixture.variants[name].metrics["latency_us"]
        assert m["count"] == N_REQUESTS
        assert m["min"] == pytest.approx(lat_us.min(), abs=1e-3)
        assert m["max"] == pytest.approx(lat_us.max(), abs=1e-3)
        assert m["mean"] == pytest.approx(lat_us.mean(), abs=1e-3)
        for q in (50, 90, 99):
            assert m[f"p{q}"] == pytest.approx(np.percentile(lat_us, q, method="linear"), abs=1e-3)
        assert all(type(m[k]) is float for k in ("min", "mean", "p50", "p90", "p99", "max"))


def test_grace_periods_and_batching(result_fixture):
    m = result_fixture.variants["default"].metrics
    assert m["grace_periods"] == 100
    assert m["expedited_grace_periods"] == 3
    # synchronize_rcu() requests wait for normal grace periods only: the
    # three expedited ones do not count.
    assert m["batching"] == pytest.approx(N_REQUESTS / 100)
    assert result_fixture.variants["wake_from_gp"].metrics["batching"] == pytest.approx(N_REQUESTS / 250)
    assert result_fixture.variants["default"].metrics["completion_time_s"] == pytest.approx(
        result_fixture.variants["default"].completion_time_ns / 1e9
    )


def test_batching_with_both_primitives():
    primitive = np.array([0] * 6 + [1] * 4)
    requests = make_requests_frame(np.arange(10), np.zeros(10), primitive, np.zeros(10), np.full(10, 1000))
    gps = make_gps_frame(np.arange(5), np.zeros(5), np.ones(5), [False, False, False, True, True])
    v = VariantResult("mixed", RequestRows(requests), gps)
    assert v.metrics["batching"] == pytest.approx(10 / 5)
    only_exp = VariantResult("exp", RequestRows(requests[requests["primitive"] == 1]), gps)
    assert only_exp.metrics["batching"] == pytest.approx(4 / 2)


def test_empty_requests_give_none():
    v = VariantResult(
        "idle",
        RequestRows(make_requests_frame([], [], [], [], [])),
        make_gps_frame([1], [0], [10], [False]),
    )
    m = v.metrics
    assert m["latency_us"] == {"count": 0, "min": None, "mean": None, "p50": None, "p90": None, "p99": None, "max": None}
    assert m["batching"] is None
    assert m["grace_periods"] == 1


def test_extra_metrics_merged_and_cannot_shadow(arrays_fixture):
    result = build_result(arrays_fixture)
    v = result.variants["default"]
    v.extra_metrics = {"ipis_per_gp": np.float64(2.5)}
    assert v.metrics["ipis_per_gp"] == 2.5
    assert type(v.metrics["ipis_per_gp"]) is float
    v.extra_metrics = {"batching": 1.0}
    with pytest.raises(ValueError, match="batching"):
        v.metrics


def test_missing_column_is_an_error():
    requests = make_requests_frame([1], [0], [0], [0], [5]).drop(columns=["t_end_ns"])
    with pytest.raises(ValueError, match="t_end_ns"):
        VariantResult("bad", requests, make_gps_frame([], [], [], []))


def test_events_per_s(result_fixture):
    v = result_fixture.variants["default"]
    assert v.events_per_s == pytest.approx(123_456 / 1.5)
    v.wall_time_s = 0.0
    assert v.events_per_s is None


def test_summary_schema(result_fixture):
    s = result_fixture.summary()
    assert list(s) == ["scenario", "seed", "rcusim_version", "variants", "provenance", "invocation", "wall_clock"]
    assert s["scenario"] == "sync_rcu_test" and s["seed"] == 42
    assert list(s["variants"]) == ["default", "wake_from_gp"]
    for name in ("default", "wake_from_gp"):
        block = s["variants"][name]
        assert set(block) == {"metrics", "events", "sim_time_ns"}
        assert set(block["metrics"]) == {
            "completion_time_s",
            "latency_us",
            "grace_periods",
            "expedited_grace_periods",
            "batching",
        }
        assert block["events"] == 123_456 and type(block["events"]) is int
        assert set(s["wall_clock"][name]) == {"wall_time_s", "events_per_s"}
    assert s["wall_clock"]["default"]["wall_time_s"] == 1.5
    assert s["wall_clock"]["default"]["events_per_s"] == pytest.approx(123_456 / 1.5, abs=0.1)
    json.dumps(s)  # plain Python values only


def test_summary_stable_apart_from_wall_clock(arrays_fixture):
    a = build_result(arrays_fixture, wall_times=(1.5, 0.75)).summary()
    b = build_result(make_arrays(12345), wall_times=(9.25, 0.125)).summary()
    assert a["wall_clock"] != b["wall_clock"]
    a.pop("wall_clock")
    b.pop("wall_clock")
    assert json.dumps(a, indent=2) == json.dumps(b, indent=2)


def test_latencies_and_grace_periods_frames(result_fixture, arrays_fixture):
    lat = result_fixture.latencies
    assert len(lat) == 2 * N_REQUESTS
    assert list(lat.columns) == ["variant", "task", "cpu", "primitive", "t_start_ns", "t_end_ns", "latency_ns"]
    assert list(lat["variant"].cat.categories) == ["default", "wake_from_gp"]
    assert lat["latency_ns"].dtype == np.int64
    second = lat[lat["variant"] == "wake_from_gp"]
    a = arrays_fixture["wake_from_gp"]
    np.testing.assert_array_equal(second["latency_ns"].to_numpy(), a["t_end_ns"] - a["t_start_ns"])
    gps = result_fixture.grace_periods
    assert len(gps) == 103 + 250
    assert gps["expedited"].dtype == bool
    assert int(gps["expedited"].sum()) == 3


def test_table_has_ratio_column(result_fixture):
    text = result_fixture.table()
    lines = text.splitlines()
    assert lines[0].split() == ["metric", "default", "wake_from_gp", "wake_from_gp/default"]
    assert [line for line in lines if line.startswith("metric")] == lines[:1]  # narrow: one block
    by_label = {line.split("  ")[0].strip(): line.split() for line in lines[2:]}
    # Equal request counts: ratio 1; grace periods 250 / 100 = 2.5.
    assert by_label["latency count"][-1] == "1.000"
    assert by_label["grace periods"][-3:] == ["100", "250", "2.500"]
    m = {n: v.metrics["latency_us"]["p50"] for n, v in result_fixture.variants.items()}
    assert by_label["latency p50 (µs)"][-1] == f"{m['wake_from_gp'] / m['default']:.3f}"
    for label in ("completion time (s)", "batching (requests/GP)", "events", "wall time (s)", "events/s"):
        assert label in by_label


def test_table_single_variant_has_no_ratio(arrays_fixture):
    result = build_result({"default": arrays_fixture["default"]})
    assert result.table().splitlines()[0].split() == ["metric", "default"]


def test_report_text_has_funclatency_histogram(result_fixture, arrays_fixture):
    text = result_fixture.report_text()
    a = arrays_fixture["default"]
    lat_ns = a["t_end_ns"] - a["t_start_ns"]
    # funclatency -u: whole microseconds, avg and total from the nanosecond sum.
    assert format_log2_histogram(lat_ns // 1000, "usecs") in text
    total_ns = int(lat_ns.sum())
    assert f"avg = {total_ns // (1000 * N_REQUESTS)} usecs, total: {total_ns // 1000} usecs, count: {N_REQUESTS}" in text
    assert "==> variant default" in text and "==> variant wake_from_gp" in text
    assert "Function = synchronize_rcu" in text
    assert "     usecs               : count     distribution" in text


EXPECTED_FILES = {"summary.json", "latencies.parquet", "gps.parquet", "latency_hist.png", "report.txt"}


def test_write_produces_all_files(result_fixture, tmp_path):
    out = result_fixture.write(tmp_path / "results", figures=save_result_figures)
    assert out == tmp_path / "results"
    assert {p.name for p in out.iterdir()} == EXPECTED_FILES
    assert json.loads((out / "summary.json").read_text()) == result_fixture.summary()
    lat = pd.read_parquet(out / "latencies.parquet")
    assert len(lat) == 2 * N_REQUESTS
    assert list(lat["variant"].astype(str).unique()) == ["default", "wake_from_gp"]
    assert "latency_ns" not in lat.columns  # derived: t_end_ns - t_start_ns
    np.testing.assert_array_equal(lat["t_end_ns"].to_numpy() - lat["t_start_ns"].to_numpy(),
                                  result_fixture.latencies["latency_ns"].to_numpy())
    assert len(pd.read_parquet(out / "gps.parquet")) == 353
    assert (out / "latency_hist.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "report.txt").read_text(encoding="utf-8") == result_fixture.report_text()
    assert [p.name for p in tmp_path.iterdir()] == ["results"]


def test_write_without_figures_writes_the_data(result_fixture, tmp_path):
    out = result_fixture.write(tmp_path / "results")
    assert {p.name for p in out.iterdir()} == EXPECTED_FILES - {"latency_hist.png"}


def _fail(*args, **kwargs):
    raise RuntimeError("disk full")


def test_failed_write_leaves_nothing(result_fixture, tmp_path, monkeypatch):
    monkeypatch.setattr(rcusim.plots, "save_latency_histogram", _fail)
    with pytest.raises(RuntimeError, match="disk full"):
        result_fixture.write(tmp_path / "results", figures=save_result_figures)
    assert list(tmp_path.iterdir()) == []


def test_failed_write_keeps_previous_outdir(result_fixture, tmp_path, monkeypatch):
    out = tmp_path / "results"
    out.mkdir()
    (out / "summary.json").write_text("previous")
    monkeypatch.setattr(rcusim.plots, "save_latency_histogram", _fail)
    with pytest.raises(RuntimeError):
        result_fixture.write(out, figures=save_result_figures)
    assert [p.name for p in tmp_path.iterdir()] == ["results"]
    assert [p.name for p in out.iterdir()] == ["summary.json"]
    assert (out / "summary.json").read_text() == "previous"


def test_rewrite_replaces_outdir(result_fixture, tmp_path):
    out = tmp_path / "results"
    out.mkdir()
    (out / "stale.txt").write_text("from an older run")
    result_fixture.write(out, figures=save_result_figures)
    assert {p.name for p in out.iterdir()} == EXPECTED_FILES
    result_fixture.write(out, figures=save_result_figures)
    assert {p.name for p in out.iterdir()} == EXPECTED_FILES
    assert [p.name for p in tmp_path.iterdir()] == ["results"]


def test_write_refuses_a_file(result_fixture, tmp_path):
    target = tmp_path / "results"
    target.write_text("not a directory")
    with pytest.raises(FileExistsError):
        result_fixture.write(target, figures=save_result_figures)
    assert target.read_text() == "not a directory"


def test_plots_draw_every_variant(result_fixture):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    disp = rcusim.plots.LatencyHistogramDisplay.from_result(result_fixture, log2=True).plot()
    assert len(disp.lines_) == 2
    assert disp.ax_.get_xscale() == "log"
    # Overlaid variants keep apart by their line styles.
    assert disp.lines_[0].get_linestyle() != disp.lines_[1].get_linestyle()
    assert disp.ax_.get_xlabel() == "latency (µs)"
    assert [t.get_text() for t in disp.ax_.get_legend().get_texts()] == ["default", "wake_from_gp"]
    # Each step outline holds all requests of its variant.
    for line in disp.lines_:
        assert line.get_data().values.sum() == N_REQUESTS
    lin = rcusim.plots.LatencyHistogramDisplay.from_result(result_fixture, log2=False, bucket_width_us=500).plot()
    edges = [line.get_data().edges for line in lin.lines_]
    np.testing.assert_array_equal(edges[0], edges[1])
    assert np.all(np.diff(edges[0]) == 500)
    assert sum(line.get_data().values.sum() for line in lin.lines_) == 2 * N_REQUESTS
    ax = rcusim.plots.plot_latency_cdf(result_fixture)
    assert len(ax.get_lines()) == 2
    plt.close("all")


def test_histogram_buckets_follow_the_data():
    from rcusim.plots.latency import LatencyHistogramDisplay
    narrow = [np.array([3900.0, 4000.0, 4100.0, 8000.0])]
    wide = [np.array([2.0, 50.0, 4000.0, 2_000_000.0])]
    assert LatencyHistogramDisplay(narrow, ["a"]).log2 is False  # within two decades: linear
    assert LatencyHistogramDisplay(wide, ["a"]).log2 is True
    assert LatencyHistogramDisplay(wide, ["a"], log2=False).log2 is False


def test_latency_figure_has_a_tail_panel(result_fixture, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rcusim.plots.latency import plot_latency_ccdf
    ax = plot_latency_ccdf(result_fixture)
    assert ax.get_yscale() == "log" and len(ax.get_lines()) == 2
    # The complementary CDF starts at 1 and ends at 1/n for each variant.
    for line, n in zip(ax.get_lines(), (len(v.requests) for v in result_fixture.variants.values())):
        y = line.get_ydata()
        assert y[0] == 1.0 and y[-1] == pytest.approx(1 / n)
    plt.close(ax.figure)


def test_runs_of_several_seeds_pool_as_a_real_kernels_boots(tmp_path):
    """run_scenario(runs=3): each variant simulated with seeds 0, 1, 2 and pooled: every run's
    rows, tagged by run, the GP count a run's mean; run --from refuses to remake it as one run."""
    from rcusim.commands.cli import main
    from rcusim.input.scenario import load_scenario
    from rcusim.results.run import run_scenario
    from rcusim.commands.outdir import write_result

    data = {"name": "pool", "hardware": {"profile": "qemu-tcg", "nr_cpus": 2},
            "kernel": {"release": "6.12", "HZ": 1000},
            "workloads": [{"kind": "sync_loop", "tasks": 4, "loops": 5, "cpus": "0-1", "pinned": False},
                          {"kind": "noise", "preset": "qemu_tcg"}]}
    singles = [run_scenario(load_scenario(data, seed=k), progress=False).variants["default"] for k in range(3)]
    pooled = run_scenario(load_scenario(data), progress=False, runs=3).variants["default"]
    assert pooled.runs == 3 and len(pooled.requests) == sum(len(s.requests) for s in singles) == 3 * 20
    assert sorted(set(pooled.requests["boot"])) == [0, 1, 2]
    first = pooled.requests[pooled.requests["boot"] == 0].drop(columns="boot")
    pd.testing.assert_frame_equal(first.reset_index(drop=True), singles[0].requests)
    counts = [s.metrics["grace_periods"] for s in singles]
    assert len(set(counts)) > 1  # the seeds differ (the noise draws)
    assert pooled.metrics["grace_periods"] == round(np.mean(counts), 3)  # _per_run()'s decimals
    assert pooled.events == sum(s.events for s in singles)
    result = run_scenario(load_scenario(data), progress=False, runs=3)
    path = write_result(result, tmp_path / "pooled")
    assert main(["run", "--from", str(path / "summary.json"), "--out", str(tmp_path / "again")]) == 2
    assert not (tmp_path / "again").exists()
