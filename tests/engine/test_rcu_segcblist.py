"""cython_core/rcu_segcblist.pxi: the segmented callback list (kernel/rcu/rcu_segcblist.c): one
list per CPU cut into DONE, WAIT, NEXT_READY and NEXT, each waiting segment labelled with the
gp_seq it waits for; rcu_segcblist_accelerate() labels new callbacks, rcu_segcblist_advance()
moves to DONE the segments whose grace period has ended.

Checked on the trace of callbacks queued by call_rcu() and invoked by rcu_do_batch() on CPUs that
are not offloaded, so that every callback stays on the list of the CPU that queued it."""

from __future__ import annotations

import numpy as np

from tests.engine.conftest import callback_lifetimes, engine_trace

#: call_rcu() on 4 CPUs for 0.2 s, invoked in RCU_SOFTIRQ (no CPU offloaded).
LOAD = {"name": "segcblist", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4},
        "kernel": {"release": "6.12", "HZ": 1000},
        "workloads": [{"kind": "call_rcu_load", "work_us": 100, "call_rcu_per_op": 1}],
        "run": {"duration_s": 0.2}}


def served_by_a_whole_gp(t_from, t_to, gps) -> np.ndarray:
    """For each interval [t_from, t_to], whether a normal grace period lies entirely inside it."""
    normal = ~gps["expedited"]
    starts, ends = gps["t_start_ns"][normal], gps["t_end_ns"][normal]
    return np.array([bool(((starts >= a) & (ends <= b)).any()) for a, b in zip(t_from, t_to)], dtype=bool)


def test_a_callback_is_invoked_only_after_a_whole_grace_period_that_began_after_its_call_rcu():
    """rcu_accelerate_cbs() labels a new callback with rcu_seq_snap(&rcu_state.gp_seq): the end
    of a grace period that starts after the call_rcu(); rcu_segcblist_advance() moves a segment
    to DONE only once the leaf's gp_seq has passed its label. So between a callback's call_rcu()
    and its invocation lies a whole grace period. A model that advances one segment too far
    (the fault cb-one-segment-too-far) breaks it."""
    eng, trace = engine_trace(LOAD, 0.2)
    cbs = callback_lifetimes(trace)
    done = cbs[cbs["t_invoked"] >= 0]
    assert len(done) > 1000 and len(done) > 0.9 * len(cbs)
    assert served_by_a_whole_gp(done["t_queued"], done["t_invoked"], eng.grace_periods()).all()

    broken, trace = engine_trace(LOAD, 0.2, fault="cb-one-segment-too-far")
    cbs = callback_lifetimes(trace)
    done = cbs[cbs["t_invoked"] >= 0]
    assert not served_by_a_whole_gp(done["t_queued"], done["t_invoked"], broken.grace_periods()).all()


def test_a_cpus_callbacks_are_invoked_in_the_order_they_were_queued():
    """The segments are one list: rcu_segcblist_enqueue() appends at its tail, advancing and
    accelerating only move the segments' boundaries, and rcu_do_batch() takes the DONE
    callbacks from its head (rcu_segcblist_extract_done_cbs()). So each CPU invokes its
    callbacks in call_rcu() order, even when their grace periods are not the same."""
    eng, trace = engine_trace(LOAD, 0.2)
    cbs = callback_lifetimes(trace)
    gps = eng.grace_periods()
    assert len(set(cbs["cpu"])) == 4
    for c in range(4):
        mine = cbs[(cbs["cpu"] == c) & (cbs["order"] >= 0)]
        # In queue order, the callbacks' positions among the invocations only grow.
        assert len(mine) > 200 and (np.diff(mine["order"]) > 0).all()
        # ... across many grace periods.
        ends = np.searchsorted(gps["t_end_ns"], mine["t_invoked"])
        assert len(set(ends)) > 10
