"""The progress display on stderr: each variant's stage (build, engine, results), the
engine's progress in requests or in simulated seconds, then the writing of the results;
nothing when progress is off."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import rcusim
from rcusim.commands.cli import main

ROOT = Path(__file__).resolve().parent.parent
SYNC = ROOT / "scenarios" / "sync_rcu_10k.yaml"
TINY = ["--set", "workloads.0.tasks=8", "--set", "workloads.0.loops=2"]
KFREE = ROOT / "scenarios" / "kfree_flood_64cpu.yaml"
KFREE_TINY = ["hardware.nr_cpus=4", "kernel.CONFIG_NR_CPUS=4", "workloads.0.kfree_nthreads=2",
              "workloads.0.kfree_loops=4", "workloads.0.kfree_alloc_num=100"]
CALLBACKS = {
    "name": "callbacks",
    "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2},
    "kernel": {"release": "6.6", "HZ": 1000},
    "workloads": [{"kind": "call_rcu_load", "work_us": 100, "call_rcu_per_op": 1}],
    "run": {"duration_s": 0.05},
}


def assert_in_order(text: str, *fragments: str) -> None:
    at = 0
    for fragment in fragments:
        found = text.find(fragment, at)
        assert found >= 0, (fragment, text)
        at = found + len(fragment)


@pytest.mark.parametrize("option, shown", [(["--progress"], True), (["--no-progress"], False), ([], False)])
def test_run_shows_its_stages_only_when_asked(tmp_path, capsys, option, shown):
    # Under pytest stderr is not a terminal: without an option nothing is shown.
    out = tmp_path / "out"
    assert main(["run", str(SYNC), "--out", str(out), *option, *TINY]) == 0
    captured = capsys.readouterr()
    assert "default" in captured.out  # the table
    if not shown:
        assert captured.err == ""
        return
    assert_in_order(captured.err, "default: build", "default: engine:", "/16 requests", "default: results",
                    "wake_from_gp: build", "wake_from_gp: engine:", "/16 requests", "wake_from_gp: results",
                    f"write {out}")
    assert "default: build" not in captured.out and "requests [" not in captured.out


def test_a_kfree_flood_shows_the_engine_in_simulated_time(capsys):
    rcusim.run(KFREE, overrides=KFREE_TINY, variants=["default"], progress=True)
    err = capsys.readouterr().err
    assert_in_order(err, "default: build", "default: engine:", "/3600 s simulated", "default: results")
    assert "requests" not in err
    rcusim.run(KFREE, overrides=KFREE_TINY, variants=["default"], progress=False)
    assert capsys.readouterr().err == ""


def test_a_timed_callback_load_shows_the_engine_in_simulated_time(capsys):
    rcusim.run(CALLBACKS, progress=True)
    err = capsys.readouterr().err
    assert_in_order(err, "default: build", "default: engine:", "/0.05 s simulated", "default: results")
    assert re.search(r"\| \d+\.\d{3}/0\.05 s simulated", err), err
    rcusim.run(CALLBACKS, progress=False)
    assert capsys.readouterr().err == ""
