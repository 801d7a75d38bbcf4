"""cython_core/tree.pxi: the rcu_node tree: quiescent-state reports up the tree
(rcu_report_qs_rdp(), rcu_report_qs_rnp()), GP requests up the funnel (rcu_start_this_gp()),
and the RCU part of the scheduling-clock interrupt (rcu_sched_clock_irq(),
rcu_flavor_sched_clock_irq())."""

from __future__ import annotations

import collections

import numpy as np

from rcusim import _core
from rcusim.engine.simulate import build_engine
from rcusim.input.scenario import load_scenario
from rcusim.results import trace

from tests.engine.conftest import (GP_CPU, SYNC_RCU_10K as SCENARIO, SYNC_RCU_SMALL as SMALL, engine_trace,
                                   lone_caller, only_variant, traced)


def test_engine_invariants_hold_mid_run():
    scenario = load_scenario(SCENARIO, overrides=SMALL)
    engine, _ = build_engine(scenario.variants["default"], seed=1)
    for _ in range(20):
        engine.run(10**15, 2000)
        assert engine.verify() == []


def test_under_preempt_rcu_an_idle_cpus_tick_is_no_quiescent_state():
    """PREEMPT_RCU: the idle task runs with preemption disabled, so rcu_flavor_sched_clock_irq()
    sees no QS in an idle CPU's tick; with a periodic tick the idle CPUs are still reported
    by the first FQS scan (their EQS), not by their ticks."""
    periodic = only_variant(traced(lone_caller("7.0", loops=20, CONFIG_HZ_PERIODIC=True)))
    gps = periodic.gps[~periodic.gps.expedited]
    assert (gps.fqs_scans == 1).all()
    f = trace.trace_frame(periodic)
    idle_cpus = f[(f.event == "qs") & ~f.cpu.isin([GP_CPU, 5])]
    assert len(idle_cpus) and (idle_cpus.arg == 1).all()  # each reported by a scan


def test_a_node_reports_up_only_once_its_qsmask_is_empty_and_the_gp_ends_after_the_roots():
    """rcu_report_qs_rnp(): a report clears its bits in a node's qsmask and climbs to the parent
    only when that qsmask is empty (and no preempted reader blocks the node); the grace period
    can end (rcu_report_qs_rsp()) only once the root's qsmask is empty. On a four-level tree
    (16 CPUs, CONFIG_RCU_FANOUT_LEAF=2, CONFIG_RCU_FANOUT=2), for every grace period: each
    node's bits are all cleared, each once; a parent's bit for a child is cleared no earlier
    than the child's qsmask became empty; the GP ends after the root's qsmask emptied."""
    data = {"name": "tree", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 16},
            "kernel": {"release": "6.12", "HZ": 1000, "CONFIG_RCU_FANOUT_LEAF": 2, "CONFIG_RCU_FANOUT": 2},
            "workloads": [{"kind": "sync_loop", "tasks": 16, "loops": 10, "think_us": 500}]}
    spec = load_scenario(data).variants["default"]
    geo = build_engine(spec, 0)[1]["geometry"]
    assert geo.levels == 4
    eng, trace = engine_trace(data)
    children = {n: np.flatnonzero(geo.node_parent == n) for n in range(geo.num_nodes)}
    leaf = geo.node_level == geo.levels - 1
    full = [(1 << int(geo.node_grphi[n] - geo.node_grplo[n] + 1)) - 1 if leaf[n]
            else sum(int(geo.node_grpmask[ch]) for ch in children[n]) for n in range(geo.num_nodes)]
    emptied = {}  # (gp_seq, node) -> when its qsmask became empty
    cleared = collections.defaultdict(int)
    for r in trace[trace["kind"] == _core.TRACE_KINDS["qs_report"]]:
        gp, n, mask, left, t = int(r["gp_seq"]), int(r["ent"]), int(r["arg"]), int(r["arg2"]), int(r["t"])
        assert cleared[gp, n] & mask == 0  # each bit once
        cleared[gp, n] |= mask
        for ch in children[n]:
            if mask & int(geo.node_grpmask[ch]):
                assert emptied[gp, ch] <= t
        if left == 0:
            emptied[gp, n] = t
    gps = eng.grace_periods()
    assert len(gps["gp_seq"]) >= 10
    for gp, t_end in zip(gps["gp_seq"], gps["t_end_ns"]):
        assert [cleared[int(gp), n] for n in range(geo.num_nodes)] == full
        assert emptied[int(gp), 0] <= t_end
