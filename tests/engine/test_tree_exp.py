"""Expedited grace periods: the talk's figures on scaled-down storms, the
funnel's batching, the tree height, queue jumping, and the safety checker.

The bands come from seed 004 (McKenney, "What Happens When 4096 Cores All Do
synchronize_rcu_expedited()?", LCA 2016), dirty trick #1: mean 35.6-59.3 us,
p99 257-284 us, batching 68.9-149.6 on 32 CPUs with 256 tasks; the model must
land within a factor of 2 of the latency ranges and batching within 30-300.
"""

import numpy as np
import pytest

import rcusim
from rcusim import run
from rcusim.input.scenario import load_scenario
from rcusim.input.workloads import CallRcuLoad
from rcusim.results.run import run_scenario, run_variant
from rcusim.results.trace import trace_frame

from tests.engine.conftest import (BOOT, SCENARIOS, exp_spec_of as spec_of, metrics, writer_data,
                                   writer_spec)


def test_32cpu_rt_mutex_lands_near_the_talks_table(storm32):
    m = metrics(storm32, "rt_mutex")
    lat = m["latency_us"]
    assert 35.6 / 2 <= lat["mean"] <= 59.3 * 2
    assert 257 / 2 <= lat["p99"] <= 284 * 2
    assert 30 <= m["batching"] <= 300


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


def test_readers_keep_the_cpus_busy():
    """rcu_scale_reader() kthreads, one per CPU by default, at nice 19: no CPU idles, so each
    expedited GP sends rcu_exp_handler() IPIs to every CPU but the one selecting, where
    without readers the idle CPUs are in an extended quiescent state and need none."""
    readers = [w for w in writer_spec("rcuscale.nwriters=4").workloads if isinstance(w, CallRcuLoad)]
    assert [(w.cpus, w.tasks_per_cpu, w.nice, w.call_rcu_per_op) for w in readers] == [("all", 1, 19, 0)]
    readers = [w for w in writer_spec("rcuscale.nwriters=4 rcuscale.nreaders=11").workloads
               if isinstance(w, CallRcuLoad)]
    assert [(w.cpus, w.tasks_per_cpu) for w in readers] == [("all", 1), ("0-2", 1)]
    idle, busy = (run(writer_data(boot)).variants["default"]
                  for boot in (BOOT + " rcuscale.gp_exp=1", "rcuscale.nwriters=4 rcuscale.holdoff=1 rcuscale.gp_exp=1"))
    ipis_per_gp = [v.counters["exp_ipis"] / v.metrics["expedited_grace_periods"] for v in (idle, busy)]
    assert ipis_per_gp[0] < 0.1 and ipis_per_gp[1] == pytest.approx(8 - 1, abs=0.2)
