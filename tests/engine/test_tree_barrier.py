"""cython_core/tree_barrier.pxi: rcu_barrier(). It returns only after every callback queued before
it was invoked: barrier_mutex, the entrain on each CPU with callbacks (behind them, an
offloaded CPU's bypass flushed first), rcu_barrier_callback() counting down to complete()."""

from __future__ import annotations

import numpy as np

from rcusim import _core

from tests.engine.conftest import LAZY_FLUSH_S, callback_lifetimes, engine_trace, lazy_metrics as _metrics


def test_rcu_barrier_flushes_the_lazy_callbacks_of_every_cpu():
    """rcu_barrier_entrain() flushes each offloaded CPU's bypass, lazy callbacks included, and
    wakes its rcuog: the lazy callbacks queued before the barrier are invoked before it
    returns (which the safety checker verifies), long before jiffies_lazy_flush."""
    def lazy_load_beside(primitive):
        def change(d):
            d["workloads"] = [{"kind": "sync_loop", "tasks": 1, "loops": 2, "cpus": "0", "start_us": 500e3,
                               "primitive": primitive},
                              {"kind": "call_rcu_load", "cpus": "1-7", "work_us": 1000, "call_rcu_per_op": 1}]
            if primitive == "call_rcu_hurry":
                d["workloads"][0]["async_max"] = 1  # the second call is an rcu_barrier() first
        return change
    barrier = _metrics(lazy_load_beside("call_rcu_hurry"))
    sync = _metrics(lazy_load_beside("synchronize_rcu"))
    # Half a second of lazy callbacks on CPUs 1-7: synchronize_rcu() on CPU 0 flushes none of them.
    assert sync["call_rcu_latency_us"]["invoked"] == 0
    cb = barrier["call_rcu_latency_us"]
    assert cb["invoked"] > 7 * 400
    assert 0.4e6 < cb["max"] < 0.6e6 < LAZY_FLUSH_S * 1e6


def gp_async_writers(cpus: str) -> dict:
    """rcuscale's gp_async writers as of v6.12 (release 7.0): four tasks on `cpus` of 4, each
    queueing call_rcu_hurry() callbacks and calling rcu_barrier() when 10 of its own are in
    flight."""
    return {"name": "barrier", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4},
            "kernel": {"release": "7.0", "HZ": 1000},
            "workloads": [{"kind": "sync_loop", "tasks": 4, "loops": 100, "cpus": cpus, "primitive": "call_rcu_hurry",
                           "async_max": 10, "think_us": 20}]}


def barrier_calls(trace, n_tasks: int) -> list[tuple[float, float]]:
    """(called, next step) of each rcu_barrier(): a writer's iteration (from its TR_TASK_WAIT to
    its next) that queues no callback of its own calls rcu_barrier() instead, which returned
    before the writer's next iteration began."""
    waits = trace[trace["kind"] == _core.TRACE_KINDS["task_wait"]]
    calls = trace[trace["kind"] == _core.TRACE_KINDS["callback"]]
    out = []
    for e in range(n_tasks):
        starts = waits["t"][waits["ent"] == e]
        mine = calls["t"][calls["ent"] == e]
        for a, b in zip(starts, [*starts[1:], np.inf]):
            if not ((mine >= a) & (mine < b)).any():
                out.append((a, b))
    return out


def callbacks_outliving_a_barrier(data: dict, fault: str | None = None) -> tuple[int, int]:
    """How many rcu_barrier() calls the writers made, and how many (barrier, callback) pairs
    there are of a callback queued before the barrier was called and not invoked by its return."""
    _, trace = engine_trace(data, fault=fault)
    barriers = barrier_calls(trace, 4)
    cbs = callback_lifetimes(trace, "rcu_scale_async_cb")
    invoked = np.where(cbs["t_invoked"] >= 0, cbs["t_invoked"], np.inf)
    late = sum(int(((cbs["t_queued"] < a) & (invoked > b)).sum()) for a, b in barriers)
    return len(barriers), late


def test_rcu_barrier_returns_only_after_every_callback_queued_before_it_was_invoked():
    """rcu_barrier(): rcu_barrier_entrain() puts rcu_barrier_callback() behind every callback of
    each CPU that has any (rcu_segcblist_entrain()), and the caller waits for the last of them
    to run; so every callback queued before the call has been invoked when it returns. Entrained
    at the head instead (the fault barrier-entrain-at-head), the barrier returns too soon."""
    calls, late = callbacks_outliving_a_barrier(gp_async_writers("0-3"))
    assert calls > 20 and late == 0
    calls, late = callbacks_outliving_a_barrier(gp_async_writers("0-3"), fault="barrier-entrain-at-head")
    assert calls > 20 and late > 0


def test_rcu_barrier_ipis_only_the_other_cpus_that_have_callbacks():
    """rcu_barrier() skips each CPU without callbacks (rcu_segcblist_n_cbs() == 0), runs
    rcu_barrier_handler() on its own CPU itself, and sends smp_call_function_single() to each
    other CPU with callbacks: writers all on CPU 0 need no IPI; writers on CPUs 0-3 need some,
    at most three a barrier."""
    counters = {}
    for cpus in ("0", "0-3"):
        eng, _ = engine_trace(gp_async_writers(cpus))
        counters[cpus] = eng.counters()
        assert counters[cpus]["rcu_barriers"] > 10
    assert counters["0"]["rcu_barrier_ipis"] == 0
    assert 0 < counters["0-3"]["rcu_barrier_ipis"] <= 3 * counters["0-3"]["rcu_barriers"]
