"""Expedited grace periods: the talk's figures on scaled-down storms, the
funnel's batching, the tree height, queue jumping, and the safety checker.

The bands come from seed 004 (McKenney, "What Happens When 4096 Cores All Do
synchronize_rcu_expedited()?", LCA 2016), dirty trick #1: mean 35.6-59.3 us,
p99 257-284 us, batching 68.9-149.6 on 32 CPUs with 256 tasks; the model must
land within a factor of 2 of the latency ranges and batching within 30-300.
"""

from pathlib import Path

import numpy as np
import pytest
import yaml

import rcusim
from rcusim.engine.simulate import build_engine
from rcusim.input.scenario import load_scenario
from rcusim.results.run import run_scenario, run_variant
from rcusim.results.trace import trace_frame

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def metrics(result, variant):
    return result.variants[variant].metrics


@pytest.fixture(scope="module")
def storm32():
    return rcusim.run(SCENARIOS / "expedited_storm_32cpu.yaml", overrides=["workloads.0.loops=40"])


def test_32cpu_rt_mutex_lands_near_the_talks_table(storm32):
    m = metrics(storm32, "rt_mutex")
    lat = m["latency_us"]
    assert 35.6 / 2 <= lat["mean"] <= 59.3 * 2
    assert 257 / 2 <= lat["p99"] <= 284 * 2
    assert 30 <= m["batching"] <= 300


def test_queue_jumping_under_a_plain_mutex_worsens_the_tail(storm32):
    rt, plain = metrics(storm32, "rt_mutex"), metrics(storm32, "mutex")
    assert plain["latency_us"]["p99"] > 2 * rt["latency_us"]["p99"]
    assert plain["latency_us"]["max"] > 2 * rt["latency_us"]["max"]
    assert plain["batching"] < rt["batching"]
    counters = storm32.variants["mutex"].counters
    assert counters["exp_mutex_steals"] > 0
    assert storm32.variants["rt_mutex"].counters["exp_mutex_steals"] == 0


def test_every_expedited_request_is_covered_by_a_whole_expedited_gp(storm32):
    for variant in storm32.variants.values():
        req, gps = variant.requests, variant.gps
        gps = gps[gps["expedited"]]
        starts = np.sort(gps["t_start_ns"].to_numpy())
        ends = gps["t_end_ns"].to_numpy()
        for t0, t1 in zip(req["t_start_ns"].to_numpy()[::97], req["t_end_ns"].to_numpy()[::97]):
            inside = (gps["t_start_ns"].to_numpy() >= t0) & (ends <= t1)
            assert inside.any(), (t0, t1, starts[:3])
        assert variant.metrics["safety"]["violations"] == 0


def test_a_taller_tree_costs_more():
    r = rcusim.run(SCENARIOS / "expedited_fanout_54cpu.yaml", overrides=["workloads.0.loops=40"])
    tall, flat = metrics(r, "four_level"), metrics(r, "two_level")
    assert tall["latency_us"]["mean"] > flat["latency_us"]["mean"]
    assert tall["batching"] > 1 and flat["batching"] > 1


def test_4096_cpu_storm_batches_and_completes():
    r = rcusim.run(SCENARIOS / "expedited_storm_4096.yaml", overrides=["workloads.0.loops=2"],
                   variants=["leaf16_mutex", "leaf64_rt_mutex"])
    for name, variant in r.variants.items():
        m = variant.metrics
        assert m["finished"]
        assert m["latency_us"]["count"] == 4096 * 2
        assert m["batching"] > 100, name  # thousands of callers share each GP
        parts = m["expedited_time_us"]
        assert parts["callback"] + parts["wakeup"] + parts["runqueue"] > 0  # GP end to the caller running


BASE = """
name: t
hardware: {profile: x86-64-server-2023, nr_cpus: %(cpus)d}
kernel: {release: "%(release)s", HZ: 1000, bootargs: "%(bootargs)s"}
workloads:
  - {kind: sync_loop, tasks: %(tasks)d, loops: %(loops)d, primitive: %(prim)s, rt: true, work_after: none}
  - {kind: readers, length_us: %(length)g, rate_per_s: %(rate)g, between: busy}
"""


def spec_of(**kw):
    args = dict(cpus=8, release="6.17", bootargs="", tasks=16, loops=30, prim="synchronize_rcu_expedited",
                length=20, rate=20000)
    args.update(kw)
    return load_scenario(yaml.safe_load(BASE % args)).variants["default"]


@pytest.mark.parametrize("release", ["6.17", "4.8", "4.5"])
def test_readers_delay_expedited_gps_and_the_checker_stays_silent(release):
    v = run_variant("x", spec_of(release=release), seed=3)
    m = v.metrics
    assert m["finished"] and m["safety"]["violations"] == 0
    assert m["safety"]["readers_checked"] > 100
    assert v.counters["exp_ipis_deferred"] > 0  # some IPIs landed inside a reader
    # A GP waits for readers that began before it: a reader may span one GP end, never two.
    assert m["safety"]["reader_pipe_expedited"][2] == 0


def test_rcu_expedited_and_rcu_normal_switch_the_path():
    exp = run_variant("x", spec_of(prim="synchronize_rcu", bootargs="rcupdate.rcu_expedited=1"), seed=1)
    assert exp.metrics["expedited_grace_periods"] > 0 and exp.metrics["grace_periods"] == 0
    both = "rcupdate.rcu_expedited=1 rcupdate.rcu_normal=1"
    norm = run_variant("x", spec_of(bootargs=both), seed=1)
    assert norm.metrics["expedited_grace_periods"] == 0 and norm.metrics["grace_periods"] > 0


@pytest.mark.parametrize("fault, prim, flavour, length, loops", [
    ("exp-ipi-ignores-readers", "synchronize_rcu_expedited", "expedited", 200, 30),
    # GPs take ms: 60 calls a task, for a reader a tick catches inside a section
    ("qs-without-qs", "synchronize_rcu", "normal", 20000, 60),
])
def test_the_checker_catches_a_broken_model(fault, prim, flavour, length, loops):
    spec = spec_of(prim=prim, length=length, rate=1e6 / (2 * length), loops=loops)
    engine, _ = build_engine(spec, seed=5, fault=fault)
    engine.run(10**12, 10**8)
    found = engine.safety()
    assert found["violations"] > 0
    message = found["messages"][0]
    assert "reader on CPU" in message and f"whole {flavour} grace period gp_seq" in message
    sound, _ = build_engine(spec, seed=5)
    sound.run(10**12, 10**8)
    assert sound.safety()["violations"] == 0 and sound.safety()["readers_checked"] > 100


def test_a_leaf_fanout_the_kernel_refuses_is_one_line_and_exit_2(tmp_path, capsys):
    from rcusim.commands.cli import main

    out = tmp_path / "r"
    code = main(["run", str(SCENARIOS / "expedited_storm_4096.yaml"),
                 "--set", "kernel.CONFIG_RCU_FANOUT_LEAF=65", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "CONFIG_RCU_FANOUT_LEAF" in err and "2 to 64" in err
    assert not out.exists()


def test_a_worker_switched_out_after_its_work_is_not_woken_for_the_next():
    """kthread_worker_fn()'s cond_resched() after a work lets the SCHED_FIFO caller it woke
    run, the worker still runnable; the caller's next kthread_queue_work() then wakes no one
    (kthread_insert_work(): the worker has a current_work), and the worker finds the work
    when it runs again. Back-to-back calls wake the worker once, the caller each time."""
    data = {"name": "solo", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2},
            "kernel": {"release": "6.12", "HZ": 1000, "CONFIG_PREEMPT_DYNAMIC": True, "bootargs": "preempt=voluntary"},
            "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 10, "rt": True, "kthread": True, "cpus": "0",
                           "primitive": "synchronize_rcu_expedited", "work_after": "none"}]}
    (v,) = run_scenario(load_scenario(data), progress=False, trace_limit=100_000).variants.values()
    wakes = trace_frame(v).query("event == 'wake'").ent.value_counts()
    assert wakes[0] == 10 and wakes.drop(0).tolist() == [1]
