"""cython_core/classic.pxi: classic RCU (before v2.6.29) and the 2004 patches against real-time
latency, on seed 003 (scenarios/rt_latency_up.yaml, scaled down to 3 s of simulated time):
vanilla invokes a whole done list in one softirq pass, throttle-rcu (rcupdate.rcumaxbatch=16
rcuplugticks=0) 16 callbacks a pass, rcu-low-lat hands the rest to krcud/N."""

from pathlib import Path

import pytest

import rcusim

from tests.engine.conftest import probe_latency, small

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "rt_latency_up.yaml"

#: Scaled down: 3072 probe wake-ups (3 s of simulated time) instead of 10240.
SCALED = ["workloads.0.samples=3072"]


@pytest.fixture(scope="module")
def seed_run():
    return rcusim.run(SCENARIO, overrides=SCALED)


def lat(result, variant):
    return result.variants[variant].metrics["sched_latency_us"]


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
