"""cython_core/call_rcu_load.pxi: the call_rcu_load tasks. Each operation is kernel work that
queues call_rcu() callbacks, then maybe a non-preemptible section, then maybe a sleep on a
timer-wheel timer. Their callbacks are a result of their own: the time from call_rcu() to the
callback's end, how many were queued, invoked and left waiting; a load runs alone for
run.duration_s."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rcusim import run

from tests.engine.conftest import probe_latency, small

ROOT = Path(__file__).resolve().parents[2]

LOAD = {
    "name": "callbacks",
    "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4},
    "kernel": {"release": "6.6", "HZ": 1000},
    "workloads": [{"kind": "call_rcu_load", "work_us": 100, "call_rcu_per_op": 1, "callback": "generic"}],
    "run": {"duration_s": 0.5},
}
# Offloaded, with more callback work than the CPUs have: rcuop cannot keep up.
FLOOD = copy.deepcopy(LOAD)
FLOOD["kernel"].update(CONFIG_RCU_NOCB_CPU=True, bootargs="rcu_nocbs=all")
FLOOD["workloads"][0].update(work_us=1, call_rcu_per_op=20)


def test_a_callback_load_alone_runs_for_its_duration():
    v = run(LOAD).variants["default"]
    m = v.metrics
    assert m["finished"] is True
    assert m["completion_time_s"] == pytest.approx(0.5)
    cb = m["call_rcu_latency_us"]
    assert cb["invoked"] > 1000 and cb["queued"] == cb["invoked"] + cb["pending"]
    # Every callback waits for a whole grace period that began after its call_rcu().
    gp_us = (v.gps.t_end_ns - v.gps.t_start_ns).min() / 1e3
    assert cb["min"] >= gp_us
    assert cb["min"] <= cb["p50"] <= cb["p90"] <= cb["p99"] <= cb["max"]


def test_a_backlog_is_counted_and_reported(tmp_path):
    flood = run(FLOOD).variants["default"].metrics["call_rcu_latency_us"]
    light = run(LOAD).variants["default"].metrics["call_rcu_latency_us"]
    assert flood["pending"] > flood["invoked"]
    assert light["pending"] < light["invoked"] / 10
    # Callbacks a batch would invoke after the run's end are left pending, not counted.
    assert flood["max"] <= FLOOD["run"]["duration_s"] * 1e6
    path = tmp_path / "flood.yaml"
    path.write_text(yaml.safe_dump(FLOOD))
    done = subprocess.run([sys.executable, "-m", "rcusim", "run", str(path), "--out", str(tmp_path / "out")],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0
    warnings = [ln for ln in done.stderr.splitlines() if "still waiting at the end" in ln]
    assert len(warnings) == 1 and f"{flood['pending']:,}" in warnings[0]


def test_a_load_that_sleeps_between_operations_leaves_its_cpu_idle():
    """sleep_jiffies_max: after each operation the task sleeps 1 to N jiffies on a
    timer-wheel timer, which fires 0 to 1 jiffy after its expiry (calc_index() rounds up)."""
    n, work_us, seconds = 9, 100, 2.0

    def alone(**change):
        data = copy.deepcopy(LOAD)
        data["workloads"][0].update(cpus="0", work_us=work_us, **change)
        data["run"]["duration_s"] = seconds
        return run(data).variants["default"].metrics

    busy, sleepy = alone(), alone(sleep_jiffies_max=n)
    assert busy["sched"]["utilisation"]["max"] > 0.9
    assert sleepy["sched"]["utilisation"]["max"] < 0.1
    # One call_rcu() an operation: the operations fit the mean sleep, (N + 1) / 2 jiffies
    # plus up to one jiffy of rounding, with some room for the draws (HZ=1000: 1 ms jiffies).
    mean_sleep_ms = (n + 1) / 2
    ops = sleepy["call_rcu_latency_us"]["queued"]
    assert 0.9 * seconds * 1e3 / (work_us / 1e3 + mean_sleep_ms + 1) < ops
    assert ops < 1.1 * seconds * 1e3 / (work_us / 1e3 + mean_sleep_ms)


def test_a_nonpreemptible_section_delays_the_probe():
    stats, _ = probe_latency(small({"work_us": 30, "nonpreempt": [{"us": 100, "per_op": 1.0}]}))
    assert 90 <= stats["max"] <= 115  # up to the whole section, plus interrupts and the switch
    assert stats["mean"] > 30
