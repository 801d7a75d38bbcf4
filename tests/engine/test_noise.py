"""cython_core/noise.pxi: OS noise: per-CPU interrupt and kthread streams, late timer interrupts and
host stalls, as drawn, and their effect on grace periods. (Presets and refusals: tests/test_noise.py.)"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rcusim.input.profiles import TIMER_QUANTILES, TIMER_TAIL_QUANTILES, Z_P99
from rcusim.input.scenario import load_scenario
from rcusim.results.run import run_scenario

IRQ = {"rate_hz": 200.0, "median_us": 5.0, "p99_us": 40.0}
KTHREAD = {"rate_hz": 20.0, "median_us": 30.0, "p99_us": 500.0}


def scenario(noise: dict | None, release: str = "6.8", loops: int = 200, nr_cpus: int = 64) -> dict:
    workloads = [{"kind": "sync_loop", "tasks": 1, "loops": loops, "cpus": "1"}]
    if noise is not None:
        workloads.append({"kind": "noise", **noise})
    return {"name": "noise", "seed": 0, "hardware": {"profile": "x86-64-server-2023", "nr_cpus": nr_cpus},
            "kernel": {"release": release, "HZ": 1000}, "workloads": workloads}


def run(data):
    (v,) = run_scenario(load_scenario(data), progress=False).variants.values()
    return v


def gp_lengths_us(v) -> np.ndarray:
    return (v.gps.t_end_ns - v.gps.t_start_ns).to_numpy() / 1e3


def test_noise_spreads_the_grace_periods():
    quiet = gp_lengths_us(run(scenario(None)))
    noisy = gp_lengths_us(run(scenario({"irq": IRQ, "kthread": KTHREAD})))
    # Without noise nothing is drawn at random: after the first, every GP of the
    # lone caller lasts the same. With noise, an interrupt caught by the first
    # FQS scan costs a whole second scan.
    assert np.ptp(quiet[1:]) == 0
    assert np.percentile(noisy, 99) - np.percentile(noisy, 50) > 2000


def test_a_noise_preset_spreads_the_grace_periods():
    lengths = gp_lengths_us(run(scenario({"preset": "noisy_vm"}, release="7.0", loops=500)))
    assert np.percentile(lengths, 99) > np.percentile(lengths, 50) + 1000


def test_same_seed_same_noise():
    data = scenario({"irq": IRQ, "kthread": KTHREAD})
    a, b = run(data), run(data)
    assert a.gps.equals(b.gps) and a.requests.equals(b.requests) and a.counters == b.counters


def test_streams_run_at_their_rate_and_length():
    v = run(scenario({"irq": IRQ}, loops=300))
    cpu_s = v.sim_time_ns / 1e9 * 64
    n = v.counters["noise_irqs"]
    expected = IRQ["rate_hz"] * cpu_s
    assert abs(n - expected) < 5 * math.sqrt(expected)
    sigma = math.log(IRQ["p99_us"] / IRQ["median_us"]) / Z_P99
    mean_ns = IRQ["median_us"] * 1e3 * math.exp(sigma ** 2 / 2)
    assert v.counters["noise_irq_ns"] / n == pytest.approx(mean_ns, rel=0.1)
    assert v.counters["noise_kthread_bursts"] == 0


def test_kthread_noise_runs_as_a_kthread():
    v = run(scenario({"kthread": KTHREAD}, loops=300))
    expected = KTHREAD["rate_hz"] * v.sim_time_ns / 1e9 * 64
    assert abs(v.counters["noise_kthread_bursts"] - expected) < 5 * math.sqrt(expected)
    assert v.counters["noise_irqs"] == 0


def test_noise_only_on_its_cpus():
    v = run(scenario({"irq": IRQ, "cpus": "0-7"}, loops=300))
    expected = IRQ["rate_hz"] * v.sim_time_ns / 1e9 * 8
    assert abs(v.counters["noise_irqs"] - expected) < 5 * math.sqrt(expected)


def quantiles(lo_us: float, hi_us: float) -> dict:
    return {"quantiles_us": list(np.linspace(lo_us, hi_us, TIMER_QUANTILES))}


def test_late_timer_interrupts_are_drawn_by_whether_every_cpu_is_busy():
    # One caller on 64 CPUs: some CPU is always idle, so every delay comes from some_idle.
    timer = {"all_busy": quantiles(900.0, 900.0), "some_idle": quantiles(100.0, 300.0)}
    v = run(scenario({"timer": timer}, loops=100))
    n = v.counters["timer_irqs_late"]
    assert n > 100
    assert v.counters["timer_irq_late_ns"] / n == pytest.approx(200_000, rel=0.05)


def test_late_ticks_split_callers_into_two_cohorts():
    # Ten callers on two CPUs. Ticks on time: the CPUs accelerate their callbacks together
    # and every GP carries all ten. A late tick on one CPU comes after the GP its CPU's
    # callers queued for has started, so rcu_accelerate_cbs() gives their callbacks the next
    # one, and rcu_gp_cleanup() starts that one at once: a GP per cohort.
    data = scenario(None, release="6.12", loops=40, nr_cpus=2)
    data["workloads"][0].update(tasks=10, cpus="0-1")
    on_time = run(data)
    data["workloads"].append({"kind": "noise", "timer": {"all_busy": quantiles(50.0, 400.0),
                                                         "some_idle": quantiles(50.0, 400.0)}})
    late = run(data)
    assert late.counters["timer_irqs_late"] > 0
    assert len(late.gps) > 1.5 * len(on_time.gps)


def test_a_steep_tail_is_drawn_as_its_own_quantiles_say():
    """A delay of 100 us but for its last thousandth, whose values lie at 100 us but for the
    greatest, 20 ms: drawn from tail_us, the last interval's draws average 100 us plus a
    hundredth of half the way to 20 ms; the straight line between the interval's ends
    (no tail_us) would average half of it, some 100 times the overall delay's mean."""
    steep = {"quantiles_us": [100.0] * (TIMER_QUANTILES - 1) + [20000.0],
             "tail_us": [100.0] * (TIMER_TAIL_QUANTILES - 1) + [20000.0]}
    v = run(scenario({"timer": {"all_busy": steep, "some_idle": steep}}, loops=1000))
    n = v.counters["timer_irqs_late"]
    assert n > 5000
    last_interval_us = 100 + (20000 - 100) / 2 / (TIMER_TAIL_QUANTILES - 1)
    expected_us = 100 * (1 - 1 / (TIMER_QUANTILES - 1)) + last_interval_us / (TIMER_QUANTILES - 1)
    assert v.counters["timer_irq_late_ns"] / n / 1000 == pytest.approx(expected_us, rel=0.02)
    line = {k: v for k, v in steep.items() if k != "tail_us"}
    v = run(scenario({"timer": {"all_busy": line, "some_idle": line}}, loops=1000))
    assert v.counters["timer_irq_late_ns"] / v.counters["timer_irqs_late"] / 1000 > 1.05 * expected_us


def test_host_stalls_stop_a_running_cpu_and_leave_an_idle_one_alone():
    """A hog keeps CPU 0 of 4 running for a second; the host stalls every CPU at 1,000 a
    second, 20 to 220 us each (mean 120 us). Only CPU 0's stalls take effect, each its drawn
    length of the hog's time: the halted CPUs run nothing to stop."""
    stall = {"rate_hz": 1000.0, **quantiles(20.0, 220.0)}
    data = {"name": "host", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4},
            "kernel": {"release": "6.12", "HZ": 1000}, "run": {"duration_s": 1.0},
            "workloads": [{"kind": "call_rcu_load", "cpus": "0", "tasks_per_cpu": 1, "work_us": 1000.0,
                           "call_rcu_per_op": 0.0},
                          {"kind": "noise", "host": stall}]}
    v = run(data)
    n = v.counters["noise_host_stalls"]
    assert n == pytest.approx(1000, rel=0.1)  # CPU 0's, not 4,000
    assert v.counters["noise_host_ns"] / n == pytest.approx(120_000, rel=0.05)
    assert v.counters["noise_irqs"] == 0
