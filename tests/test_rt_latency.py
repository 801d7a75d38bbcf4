"""Real-time scheduling latency against callback invocation (seed 003).

The scenario scenarios/rt_latency_up.yaml replays the March 2004 thread: amlat
on a uniprocessor 2.6.0 with CONFIG_PREEMPT=y under "dbench 32", vanilla against
throttle-rcu (rcupdate.rcumaxbatch=16 rcuplugticks=0) and rcu-low-lat (krcud).
These tests run it scaled down (3 s of simulated time) and check mechanisms on
small hand-made loads.
"""

from pathlib import Path

import pandas as pd
import pytest

import rcusim
from rcusim.plots import save_result_figures
from rcusim.errors import ScenarioError

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "rt_latency_up.yaml"

#: Scaled down: 3072 probe wake-ups (3 s of simulated time) instead of 10240.
SCALED = ["workloads.0.samples=3072"]


@pytest.fixture(scope="module")
def seed_run():
    return rcusim.run(SCENARIO, overrides=SCALED)


def lat(result, variant):
    return result.variants[variant].metrics["sched_latency_us"]


def test_summary_reports_sched_latency(seed_run):
    summary = seed_run.summary()
    for name in ("vanilla", "throttle", "kthread"):
        stats = summary["variants"][name]["metrics"]["sched_latency_us"]
        assert set(stats) == {"max", "p99", "mean", "samples"}
        assert stats["samples"] == 3072
        assert stats["mean"] <= stats["p99"] <= stats["max"]


def test_written_results_keep_the_probe_latencies(seed_run, tmp_path):
    out = seed_run.write(tmp_path / "r", figures=save_result_figures)
    # No synchronize_rcu*() call: no request-latency figure, but cyclictest's histogram of the probe.
    assert {p.name for p in out.iterdir()} == {"summary.json", "latencies.parquet", "gps.parquet", "report.txt",
                                               "sched_latency.parquet", "sched_latency.png"}
    table = pd.read_parquet(out / "sched_latency.parquet")
    assert list(table.columns) == ["variant", "latency_ns"]
    assert table.groupby("variant", observed=True).size().to_dict() == dict.fromkeys(seed_run.variants, 3072)
    for name, rows in table.groupby("variant", observed=True):
        assert rows["latency_ns"].max() / 1e3 == lat(seed_run, name)["max"]


def test_unbounded_batch_gives_the_worst_latency(seed_run):
    # 711 us vanilla against 439 us throttled in the seed: vanilla is worst.
    assert lat(seed_run, "vanilla")["max"] > lat(seed_run, "throttle")["max"]
    assert lat(seed_run, "vanilla")["max"] > lat(seed_run, "kthread")["max"]
    assert lat(seed_run, "vanilla")["p99"] > 2 * lat(seed_run, "throttle")["p99"]


def test_each_variant_uses_its_mechanism(seed_run):
    counters = {name: v.counters for name, v in seed_run.variants.items()}
    assert counters["vanilla"]["tasklet_reraises"] == 0
    assert counters["vanilla"]["krcud_handoffs"] == 0
    assert counters["throttle"]["tasklet_reraises"] > 0
    assert counters["throttle"]["ksoftirqd_wakeups"] > 0  # after MAX_SOFTIRQ_RESTART passes
    assert counters["kthread"]["krcud_handoffs"] > 0
    assert counters["kthread"]["tasklet_reraises"] == 0


@pytest.mark.xfail(strict=True, reason="the model misses seed 003's ratio: throttle/vanilla "
                   "is about 0.35 here, the seed's 439/711 = 0.62 (see docs/validation.md)")
def test_throttle_to_vanilla_ratio_in_seed_band(seed_run):
    ratio = lat(seed_run, "throttle")["max"] / lat(seed_run, "vanilla")["max"]
    assert 0.4 <= ratio <= 0.85


def small(load, bootargs="", samples=400):
    """One CPU of the seed's machine, a probe and one call_rcu_load workload."""
    return {
        "name": "rt_small",
        "seed": 1,
        "hardware": {"profile": "pentium4-2.4ghz-up", "nr_cpus": 1},
        "kernel": {"release": "2.6", "HZ": 1000, "CONFIG_PREEMPT_RCU": False,
                   "bootargs": bootargs},
        "workloads": [{"kind": "rt_latency_probe", "samples": samples},
                      {"kind": "call_rcu_load", "cpus": "0", "tasks_per_cpu": 4, **load}],
    }


def probe_latency(scenario):
    result = rcusim.run(scenario)
    (variant,) = result.variants.values()
    return variant.metrics["sched_latency_us"], variant


def test_without_sections_or_callbacks_latency_is_irq_plus_switch():
    stats, _ = probe_latency(small({"work_us": 30}))
    costs = rcusim.input.profiles.load_profile("pentium4-2.4ghz-up")
    floor = (costs["tick_ns"] + costs["ctxsw_ns"]) / 1e3
    # At worst the RTC interrupt lands on a tick (no callbacks: no softirq work).
    assert floor <= stats["mean"] and stats["max"] <= floor + costs["tick_ns"] / 1e3 + 1e-9


def test_a_nonpreemptible_section_delays_the_probe():
    stats, _ = probe_latency(small({"work_us": 30, "nonpreempt": [{"us": 100, "per_op": 1.0}]}))
    assert 90 <= stats["max"] <= 115  # up to the whole section, plus interrupts and the switch
    assert stats["mean"] > 30


def test_batch_limit_bounds_the_softirq():
    # Callbacks in groups of 1,000, about 300,000 a second: a done list holds over
    # a thousand (cb_kfree_ns = 300 ns each). Vanilla invokes it in one softirq
    # pass; throttle-rcu runs 16 per pass.
    load = {"work_us": 30, "call_rcu_per_op": 10.0, "burst": 1000}
    vanilla, _ = probe_latency(small(load))
    throttle, v = probe_latency(small(load, "rcupdate.rcumaxbatch=16 rcupdate.rcuplugticks=0"))
    assert vanilla["max"] > 300
    # At most 10 passes of 16 callbacks at an irq exit (twice: a tick's, then the
    # probe's own), plus the two interrupts and the switch.
    c = rcusim.input.profiles.load_profile("pentium4-2.4ghz-up")
    per_pass = 16 * c["cb_kfree_ns"] + c["softirq_ns"] + 2 * c["rnp_lock_ns"]
    bound = 2 * 10 * per_pass + 2 * c["tick_ns"] + c["ctxsw_ns"]
    assert throttle["max"] <= bound / 1e3
    assert v.counters["ksoftirqd_wakeups"] > 0


def test_same_seed_same_latencies():
    scenario = small({"work_us": 30, "call_rcu_per_op": 3.0, "burst": 64,
                      "nonpreempt": [{"us": 20, "per_op": 0.1}]}, samples=200)
    assert probe_latency(scenario)[0] == probe_latency(scenario)[0]


@pytest.mark.parametrize("change, words", [
    ({"workloads.1.nonpreempt": [{"us": 5, "per_op": 0.7}, {"us": 50, "per_op": 0.5}]},
     "workloads.1.nonpreempt"),
    ({"kernel.release": "6.6", "kernel.bootargs": "rcupdate.bhlimit=256"}, "rcupdate.bhlimit"),
    ({"kernel.bootargs": "rcupdate.rcumaxbatch=16 rcupdate.bhlimit=256"}, "rcupdate.bhlimit"),
    ({"workloads.0.run_us": 2000}, "workloads.0.run_us"),
])
def test_bad_input_names_the_key(change, words):
    with pytest.raises(ScenarioError) as err:
        rcusim.run(small({"work_us": 30}), overrides=change)
    assert words in str(err.value)
