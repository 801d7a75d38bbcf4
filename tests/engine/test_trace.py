"""cython_core/trace.pxi: the engine's optional trace buffer. The checks hold the trace against
what the engine counts on its own (its counters and its records), so that a hook in the wrong
place or a record lost fails them, and tracing changes nothing else."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rcusim.input.scenario import load_scenario
from rcusim.results import trace
from rcusim.results.run import run_scenario

ROOT = Path(__file__).resolve().parents[2]
SYNC = ROOT / "scenarios" / "sync_rcu_10k_pinned.yaml"  # idle CPUs: every GP has an FQS scan
STORM = ROOT / "scenarios" / "expedited_storm_32cpu.yaml"
SYNC_SMALL = ["hardware.nr_cpus=8", "workloads.0.tasks=32", "workloads.0.loops=3"]
# No offloading: callbacks run in RCU_SOFTIRQ, CPUs report their own QS from the tick.
SOFTIRQ_SMALL = {"name": "softirq_small", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4},
                 "kernel": {"release": "6.6", "HZ": 1000},
                 "workloads": [{"kind": "sync_loop", "tasks": 8, "loops": 5, "think_us": 300, "work_after": "kfree"}]}
STORM_SMALL = ["hardware.nr_cpus=4", "workloads.0.tasks=16", "workloads.0.loops=3"]
LIMIT = trace.MAX_TRACE_RECORDS


@pytest.fixture(scope="module")
def sync_traced():
    return run_scenario(load_scenario(SYNC, overrides=SYNC_SMALL), progress=False, trace_limit=LIMIT)


@pytest.fixture(scope="module")
def softirq_traced():
    return run_scenario(load_scenario(SOFTIRQ_SMALL), progress=False, trace_limit=LIMIT)


@pytest.fixture(scope="module")
def storm_traced():
    return run_scenario(load_scenario(STORM, overrides=STORM_SMALL), variants=["rt_mutex"], progress=False,
                        trace_limit=LIMIT)


def test_tracing_changes_nothing(sync_traced):
    plain = run_scenario(load_scenario(SYNC, overrides=SYNC_SMALL), progress=False)
    a, b = plain.summary(), sync_traced.summary()
    a.pop("wall_clock"), b.pop("wall_clock")
    assert a == b


@pytest.mark.parametrize("fixture", ["sync_traced", "softirq_traced"])
def test_every_cpu_reports_once_per_gp(fixture, request):
    result = request.getfixturevalue(fixture)
    for v in result.variants.values():
        f = trace.trace_frame(v)
        ends = f[f.event == "gp_end"]
        assert len(ends) == int((~v.gps.expedited).sum())
        nr_cpus = v.trace["nr_cpus"]
        qs = f[(f.event == "qs") & (f.arg < 2)]
        for gp_seq, g in qs.groupby("gp_seq"):
            # gp_seq of a QS is the GP in progress; each CPU reports it exactly once.
            assert sorted(g.cpu) == list(range(nr_cpus)), gp_seq
        starts = f[f.event == "gp_start"].gp_seq.to_numpy()
        assert set(qs.gp_seq) <= set(starts)


def test_callbacks_traced_match_engine_counter(sync_traced, softirq_traced):
    for result in (sync_traced, softirq_traced):
        for v in result.variants.values():
            f = trace.trace_frame(v)
            invoked = int((f.event == "cb_invoke").sum())
            assert invoked == v.counters["callbacks_invoked"]
            batch_end = f[f.event == "cb_batch_end"]
            assert int(batch_end.arg.sum()) == invoked
            assert (f.event == "cb_batch_start").sum() == len(batch_end)


def test_task_waits_match_requests(sync_traced):
    for v in sync_traced.variants.values():
        f = trace.trace_frame(v)
        ret = f[f.event == "task_return"]
        assert len(ret) == len(v.requests)
        assert np.array_equal(np.sort(ret.t_ns.to_numpy()), np.sort(v.requests.t_end_ns.to_numpy()))
        assert np.array_equal(np.sort(f[f.event == "task_wait"].t_ns.to_numpy()),
                              np.sort(v.requests.t_start_ns.to_numpy()))


def test_expedited_ipis_and_gps(storm_traced):
    v = storm_traced.variants["rt_mutex"]
    f = trace.trace_frame(v)
    sent = f[(f.event == "ipi_send") & (f.arg == 1)]
    assert len(sent) == v.counters["exp_ipis"] > 0
    assert len(f[(f.event == "ipi_handler") & (f.arg == 1)]) == len(sent)
    assert (f.event == "exp_end").sum() == int(v.gps.expedited.sum())
