"""``rcusim compare``: the side-by-side table, its ratios, the overlaid histogram, bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rcusim.commands.cli import main
from rcusim.commands.compare import compare_table

ROOT = Path(__file__).resolve().parent.parent
SYNC = ROOT / "scenarios" / "sync_rcu_10k.yaml"
SMALL = ["--set", "hardware.nr_cpus=4", "--set", "workloads.0.tasks=8", "--set", "workloads.0.loops=3"]


@pytest.fixture(scope="module")
def two_results(tmp_path_factory):
    base = tmp_path_factory.mktemp("cmp")
    a, b = base / "hz1000", base / "hz250"
    assert main(["run", str(SYNC), "--out", str(a), "--no-progress"] + SMALL) == 0
    assert main(["run", str(SYNC), "--out", str(b), "--no-progress", "--set", "kernel.HZ=250"] + SMALL) == 0
    return a, b


def wide_cells(table: str) -> dict[tuple[str, str], str]:
    """{(metric, column): value} of the --wide table."""
    header, _, *rows = table.splitlines()
    columns = header.split()[1:]
    return {(row.split()[0], c): v for row in rows for c, v in zip(columns, row.split()[1:], strict=True)}


def blocks(table: str) -> dict[tuple[str, str], dict[str, tuple[str, ...]]]:
    """{(variant of B, variant of A): {metric: (A, B, B/A)}} of the table in blocks."""
    out = {}
    for block in table.strip("\n").split("\n\n"):
        title, header, _, *rows = block.splitlines()
        assert header.split() == ["metric", "A", "B", "B/A"]
        pair = re.fullmatch(r"B = hz250:(\S+) against A = hz1000:(\S+)", title).groups()
        out[pair] = {row.split()[0]: tuple(row.split()[1:]) for row in rows}
    return out


def test_table_and_ratios(two_results, tmp_path, capsys):
    a, b = two_results
    plot = tmp_path / "cmp.png"
    capsys.readouterr()
    assert main(["compare", str(a), str(b / "summary.json"), "--plot", str(plot), "--wide"]) == 0
    text = capsys.readouterr().out
    header = text.splitlines()[0].split()
    assert header == ["metric", "hz1000:default", "hz1000:wake_from_gp", "hz250:default", "hz250:wake_from_gp",
                      "hz250:default/hz1000:default", "hz250:wake_from_gp/hz1000:wake_from_gp"]
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    row = next(ln.split() for ln in text.splitlines() if ln.startswith("latency_us.p99 "))
    ma = sa["variants"]["default"]["metrics"]["latency_us"]["p99"]
    mb = sb["variants"]["default"]["metrics"]["latency_us"]["p99"]
    assert float(row[1]) == pytest.approx(ma, abs=1e-3) and float(row[3]) == pytest.approx(mb, abs=1e-3)
    assert float(row[5]) == pytest.approx(mb / ma, abs=1e-3)
    assert "overlaid latency histogram" in text and plot.stat().st_size > 0


def test_the_table_fits_80_columns_and_wide_gives_it_whole(two_results, capsys):
    a, b = two_results
    assert main(["compare", str(a), str(b)]) == 0
    text = capsys.readouterr().out
    assert main(["compare", str(a), str(b), "--wide"]) == 0
    wide = capsys.readouterr().out
    assert max(map(len, text.splitlines())) <= 80 < max(map(len, wide.splitlines()))
    cells, found = wide_cells(wide), blocks(text)
    assert set(found) == {("default", "default"), ("wake_from_gp", "wake_from_gp")}
    for (nb, na), rows in found.items():
        columns = (f"hz1000:{na}", f"hz250:{nb}", f"hz250:{nb}/hz1000:{na}")
        assert rows == {m: tuple(cells[(m, c)] for c in columns) for m, c in cells
                        if c in columns[:2] and cells[(m, c)] != "-"}


def test_a_variant_of_a_that_none_of_b_is_set_against_is_named():
    a = {"variants": {"x": {"metrics": {"grace_periods": 4}}, "y": {"metrics": {"grace_periods": 5}}}}
    b = {"variants": {"z": {"metrics": {"grace_periods": 6}}}}
    text = compare_table(a, b)
    assert text.startswith("B = B:z against A = A:x\n")
    assert re.search(r"^grace_periods +4 +6 +1\.500$", text, re.M)
    assert text.endswith("A's variants y have none of B's against them (--wide shows them)")
    assert "A:y" in compare_table(a, b, wide=True)


def test_no_file_is_written_unless_asked(two_results, tmp_path, monkeypatch, capsys):
    a, b = two_results
    monkeypatch.chdir(tmp_path)
    assert main(["compare", str(a), str(b)]) == 0
    assert list(tmp_path.iterdir()) == [] and "histogram" not in capsys.readouterr().out


def test_summary_files_only_give_no_histogram(two_results, tmp_path, capsys):
    a, b = two_results
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "summary.json").write_text((b / "summary.json").read_text())
    plot = tmp_path / "cmp.png"
    assert main(["compare", str(a), str(lone), "--plot", str(plot)]) == 0
    captured = capsys.readouterr()
    assert "written" not in captured.out and not plot.exists()
    assert captured.err.startswith("rcusim: note: --plot: no histogram written") and captured.err.count("\n") == 1


@pytest.mark.parametrize("make, fragment", [
    (lambda d: d / "missing", "compare: no results at"),
    (lambda d: (d / "bad.json").write_text("{oops") and d / "bad.json", "compare: cannot read"),
    (lambda d: (d / "empty.json").write_text('{"variants": {}}') and d / "empty.json", "has no variants"),
])
def test_bad_input(two_results, tmp_path, capsys, make, fragment):
    assert main(["compare", str(two_results[0]), str(make(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rcusim: error: ") and fragment in err


def test_bad_input_through_the_process(two_results, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "rcusim", "compare", str(two_results[0]), str(tmp_path / "nope")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "compare: no results at" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("label, x, y, verdict", [
    ("latency mean (µs)", 100.0, 109.0, "✓"), ("latency mean (µs)", 100.0, 111.0, "miss"),
    ("latency p99 (µs)", 100.0, 76.0, "✓"), ("latency p99 (µs)", 100.0, 74.0, "miss"),
    ("latency max (µs)", 100.0, 149.0, "✓"), ("grace periods", 40, 47, "miss"),
    ("kfree footprint (MB)", 2, 0, "miss"), ("expedited grace periods", 0, 0, "-"),
    ("kfree total time (ms)", 240.0, 100.0, "-"), ("GP length mean (µs)", 2000.0, None, "miss")])
def test_the_goal_column_applies_each_figures_agreement(label, x, y, verdict):
    from rcusim.commands.compare import _agrees
    assert _agrees(label, x, y) == verdict


def test_figures_table_counts_the_figures_that_meet_their_goal(two_results, capsys):
    a, b = two_results
    assert main(["compare", str(a), str(b), "--figures"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| variant |")]
    met = sum(line.endswith("| ✓ |") for line in rows)
    goals = sum(not line.endswith("| - |") for line in rows)
    assert f"{met} of {goals} figures meet their goal; " in out
    # one run a side: no boots to draw again
    assert all(line.split(" | ")[-2] == "-" for line in rows)


def _boots(latencies_us, gps_us, expedited=None):
    from rcusim.results.spread import Boots
    import numpy as np
    lat = tuple(np.asarray(x, dtype=np.int64) * 1000 for x in latencies_us)
    gps = tuple(np.asarray(x, dtype=np.int64) * 1000 for x in gps_us)
    return Boots(lat, gps, np.asarray(expedited if expedited is not None else [0] * len(lat)))


def test_a_figure_of_every_boot_is_the_pooled_figure():
    """Drawn once each, the boots give the figures the summary pools: percentiles by linear
    interpolation over all calls, GPs per boot, the GPs' mean length over all GPs."""
    import numpy as np
    from rcusim.results.spread import figure_of
    boots = _boots([[100, 300], [200, 400, 900]], [[10, 20, 30], [50]], expedited=[2, 5])
    every = np.arange(2)
    pooled = np.array([100, 300, 200, 400, 900])
    assert figure_of(boots, every, "latency_us.mean") == pytest.approx(pooled.mean())
    assert figure_of(boots, every, "latency_us.p50") == pytest.approx(np.percentile(pooled, 50))
    assert figure_of(boots, every, "latency_us.p99") == pytest.approx(np.percentile(pooled, 99))
    assert figure_of(boots, every, "latency_us.max") == 900
    assert figure_of(boots, every, "grace_periods") == 2.0
    assert figure_of(boots, every, "expedited_grace_periods") == 3.5
    assert figure_of(boots, every, "gps:mean_length_us") == pytest.approx(110 / 4)
    assert figure_of(boots, np.array([1, 1]), "latency_us.max") == 900
    assert figure_of(boots, np.array([0, 0]), "latency_us.max") == 300


def test_the_spread_over_boots_draws_whole_boots():
    """Boots that are all alike leave nothing to draw: the range is the ratio itself. Boots
    that differ spread it around the ratio, the same range on each call (seeded)."""
    from rcusim.results.spread import ratio_spread
    alike = _boots([[100, 200, 300]] * 5, [[1000, 2000]] * 5)
    scaled = _boots([[120, 240, 360]] * 5, [[1500, 3000]] * 5)
    assert ratio_spread(alike, scaled, "latency_us.mean") == pytest.approx((1.2, 1.2))
    assert ratio_spread(alike, scaled, "gps:mean_length_us") == pytest.approx((1.5, 1.5))
    differ = _boots([[100, 200], [300, 400], [150, 250], [900, 1000], [120, 130]], [[1000]] * 5)
    low, high = ratio_spread(differ, differ, "latency_us.mean")
    assert low < 1 < high and (low, high) == ratio_spread(differ, differ, "latency_us.mean")
    assert ratio_spread(_boots([[100]], [[1]]), _boots([[120]], [[1]]), "latency_us.mean") is None


def test_pooled_runs_keep_their_kfree_figures_one_by_one():
    """A kfree flood run with several seeds keeps each run's batches, footprint and time
    (per_boot) beside their means, as a kernel's boots do, for compare --figures to draw."""
    from rcusim.input.scenario import load_scenario
    from rcusim.results.run import run_scenario
    scenario = load_scenario(ROOT / "scenarios" / "twin" / "rcuscale_2cpu.yaml",
                             overrides={"variants.kfree.workloads.0.kfree_loops": 4})
    pooled = run_scenario(scenario, variants=["kfree"], progress=False, runs=3).variants["kfree"].extra_metrics
    alone = [run_scenario(scenario, variants=["kfree"], progress=False, runs=1)]
    per_boot = pooled["per_boot"]
    assert set(per_boot) == {"total_time_ns", "batches", "memory_footprint_mb"}
    assert len(per_boot["batches"]) == 3 and pooled["batches"] == round(sum(per_boot["batches"]) / 3)
    assert per_boot["batches"][0] == alone[0].variants["kfree"].extra_metrics["batches"]


def test_kfree_figures_spread_by_their_boots():
    """A kfree figure of drawn boots is the mean of those boots' numbers, in the figure's unit."""
    import numpy as np
    from rcusim.results.spread import Boots, figure_of
    boots = Boots((np.array([1]),) * 3, (np.array([1]),) * 3, np.zeros(3),
                  {"batches": np.array([60.0, 70.0, 80.0]), "total_time_ns": np.array([2e8, 3e8, 4e8])})
    assert figure_of(boots, np.array([0, 2, 2]), "batches") == 73  # rounded, as the summary rounds it
    assert figure_of(boots, np.array([1, 1, 1]), "total_time_ms") == pytest.approx(300.0)
    assert np.isnan(figure_of(boots, np.array([0]), "memory_footprint_mb"))


def test_a_boot_without_rows_still_counts(tmp_path):
    """Boots are numbered from 0: one that left no row (no call, no GP) is a boot of zero,
    not a boot fewer; latencies that are not every call the summary counts are left out."""
    import numpy as np
    import pandas as pd
    from rcusim.results.spread import figure_of, read_boots, read_rows
    lat = pd.DataFrame({"variant": ["v", "v", "v"], "t_start_ns": [0, 0, 0], "t_end_ns": [1000, 3000, 5000],
                        "boot": np.array([0, 0, 2], dtype=np.int16)})
    gps = pd.DataFrame({"variant": ["v"] * 3, "t_start_ns": [0] * 3, "t_end_ns": [2000] * 3,
                        "expedited": [False, False, True], "boot": np.array([0, 2, 2], dtype=np.int16)})
    lat.to_parquet(tmp_path / "latencies.parquet")
    gps.to_parquet(tmp_path / "gps.parquet")
    rows = read_rows(tmp_path)
    boots = read_boots(rows, "v", {"latency_us": {"count": 3}, "per_boot": {"batches": [1, 2, 3]}})
    assert len(boots) == 3 and len(boots.latency_ns[1]) == 0
    every = np.arange(3)
    assert figure_of(boots, every, "grace_periods") == pytest.approx(2 / 3)
    assert figure_of(boots, every, "expedited_grace_periods") == pytest.approx(1 / 3)
    assert figure_of(boots, every, "batches") == 2
    sampled = read_boots(rows, "v", {"latency_us": {"count": 30}})
    assert sampled.latency_ns is None and np.isnan(figure_of(sampled, every, "latency_us.mean"))
    assert read_boots(rows, "other", {}) is None and read_rows(tmp_path / "none") is None
