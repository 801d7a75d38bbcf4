"""cython_core/tree_nocb.pxi: callback offloading (kernel/rcu/tree_nocb.h): call_rcu() on an
offloaded CPU, its bypass list, the rcuog kthreads (nocb_gp_wait()) and the rcuop kthreads
(nocb_cb_wait()) that invoke its callbacks.

Lazy RCU (CONFIG_RCU_LAZY, v6.2): call_rcu() on an offloaded CPU queues lazy
callbacks that wait in the bypass list until jiffies_lazy_flush (10 s), a
non-lazy callback on the same CPU, or a full bypass (qhimark) flushes them
(tree_nocb.h rcu_nocb_try_bypass(), nocb_gp_wait(), wake_nocb_gp_defer())."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import rcusim
from rcusim import _core
from rcusim.engine.engine_input import engine_input
from rcusim.input.scenario import load_scenario

from tests.engine.conftest import LAZY_FLUSH_S, SYNC_RCU_10K as SCENARIO, engine_trace, lazy_metrics as _metrics


def test_lazy_callbacks_wait_for_the_lazy_flush():
    lazy = _metrics()
    hurry = _metrics(lambda d: d["workloads"][1].update(hurry=True))
    cb, cb_hurry = lazy["call_rcu_latency_us"], hurry["call_rcu_latency_us"]
    # Arrivals spread over the 10 s window: half a window on average, never (much) more than one.
    assert 0.4 * LAZY_FLUSH_S * 1e6 < cb["mean"] < 0.6 * LAZY_FLUSH_S * 1e6
    assert LAZY_FLUSH_S * 1e6 * 0.9 < cb["max"] < (LAZY_FLUSH_S + 0.1) * 1e6
    # call_rcu_hurry(): a few grace periods, and many more of them.
    assert cb_hurry["max"] < 100e3
    assert hurry["grace_periods"] > 3 * lazy["grace_periods"]


def test_call_rcu_hurry_is_the_kernel_without_lazy_rcu():
    hurry = _metrics(lambda d: d["workloads"][1].update(hurry=True))
    off = _metrics(lambda d: d["kernel"].update(CONFIG_RCU_LAZY=False))
    assert hurry == off


def test_a_non_lazy_callback_flushes_the_lazy_ones_of_its_cpu():
    """synchronize_rcu() queues with call_rcu_hurry(): on the load's own CPU its
    callback takes the lazy callbacks queued before it along."""
    apart = _metrics(lambda d: d["workloads"][1].update(cpus="1"))
    together = _metrics(lambda d: d["workloads"][1].update(cpus="0"))
    assert apart["call_rcu_latency_us"]["p50"] > 1e6
    assert together["call_rcu_latency_us"]["max"] < 100e3


def test_a_full_bypass_is_flushed_before_the_timer():
    """At qhimark (10,000) lazy callbacks the bypass is flushed at the next call_rcu()."""
    flood = _metrics(lambda d: d["workloads"][1].update(call_rcu_per_op=100, cpus="1"))
    # 100,000 callbacks a second fill the bypass in about 0.1 s.
    assert flood["call_rcu_latency_us"]["max"] < 0.5e6


def test_lazy_only_applies_to_offloaded_cpus():
    def not_offloaded(d):
        d["kernel"]["bootargs"] = "rcu_nocbs=0"
        d["workloads"][1]["cpus"] = "1-7"
    lazy = _metrics(not_offloaded)
    off = _metrics(lambda d: (not_offloaded(d), d["kernel"].update(CONFIG_RCU_LAZY=False)))
    assert lazy == off


def test_the_boot_parameter_turns_laziness_off_and_on():
    def release(d, bootargs, default_off):
        d["kernel"].update(release="6.9", CONFIG_RCU_LAZY_DEFAULT_OFF=default_off,
                           bootargs="rcu_nocbs=all " + bootargs)
    off = _metrics(lambda d: release(d, "", True))
    on = _metrics(lambda d: release(d, "rcutree.enable_rcu_lazy=1", True))
    assert off["call_rcu_latency_us"]["max"] < 100e3
    assert on["call_rcu_latency_us"]["mean"] > 1e6


# --- the bypass under a flood of callers ---------------------------------------------
def test_nocb_flood_uses_the_bypass():
    # 10,000 tasks on 64 CPUs enqueue ~156 callbacks per CPU at once, far over
    # nocb_nobypass_lim_per_jiffy (16 at HZ=1000): most go through nocb_bypass.
    r = rcusim.run(SCENARIO, overrides=["workloads.0.loops=2"], variants=["default"])
    c = r.variants["default"].counters
    assert c["bypass_enqueues"] > 10000
    assert c["bypass_flushes"] > 0


# --- who invokes an offloaded CPU's callbacks -------------------------------------------
def test_an_offloaded_cpus_callbacks_are_invoked_by_its_rcuop_kthread_and_not_in_softirq():
    """rcu_nocbs=0-1 of 4 CPUs: an offloaded CPU's callbacks are invoked by its own rcuop/N
    kthread (nocb_cb_wait() -> rcu_do_batch()), wherever that unbound kthread runs, and never
    by RCU_SOFTIRQ, whose rcu_core() leaves an offloaded CPU's callbacks alone; the other
    CPUs' callbacks are invoked in RCU_SOFTIRQ (or ksoftirqd) and never by an rcuop kthread."""
    data = {"name": "nocb", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4},
            "kernel": {"release": "6.12", "HZ": 1000, "CONFIG_RCU_NOCB_CPU": True, "bootargs": "rcu_nocbs=0-1"},
            "workloads": [{"kind": "call_rcu_load", "work_us": 100, "call_rcu_per_op": 1}],
            "run": {"duration_s": 0.2}}
    eng, trace = engine_trace(data, 0.2)
    ents = eng.entity_kinds()
    invoked = trace[trace["kind"] == _core.TRACE_KINDS["cb_invoke"]]
    runner = invoked["ent"]  # -1: the softirq of the CPU whose callbacks they are
    kind = np.where(runner >= 0, ents["kind"][np.maximum(runner, 0)], -1)
    rcuop, rcuc = _core.ENTITY_KINDS["rcuop"], _core.ENTITY_KINDS["rcuc"]
    for c in range(4):
        mine = invoked["cpu"] == c
        assert mine.sum() > 1000
        if c in (0, 1):
            assert (kind[mine] == rcuop).all()
            assert (ents["idx"][runner[mine]] == c).all()  # rcuop/c, of this CPU
        else:
            assert np.isin(kind[mine], [-1, rcuc]).all()


def test_an_rcuop_kthread_is_switched_out_between_callbacks_without_preemption():
    """From v4.15 (as read) an rcuop kthread reaches cond_resched() after each callback
    (rcu_do_batch()'s rcuoc branch): under preempt=voluntary a need_resched set while it invokes
    a batch (here the twin's lazy kfree flood, 30 batches of lazy callbacks on 2 vCPUs) switches
    it out before the batch's end, which a kthread with no such point never is."""
    sc = load_scenario(Path(__file__).parents[2] / "scenarios" / "twin" / "rcuscale_2cpu.yaml",
                       variants=["kfree_lazy_call_rcu"])
    inp, _ = engine_input(sc.variants["kfree_lazy_call_rcu"])
    eng = _core.Engine(inp, np.random.PCG64(0))
    eng.trace_enable(10**7)
    eng.run(10**11, 10**10)
    tr = eng.trace_records()
    rcuop = set(np.flatnonzero(eng.entity_kinds()["kind"] == _core.ENTITY_KINDS["rcuop"]).tolist())
    switches = tr[tr["kind"] == _core.TRACE_KINDS["switch"]]
    ends = tr[tr["kind"] == _core.TRACE_KINDS["cb_batch_end"]]
    batches = mid = 0
    for start in tr[tr["kind"] == _core.TRACE_KINDS["cb_batch_start"]]:
        e = int(start["ent"])
        if e not in rcuop:
            continue
        end = ends[(ends["ent"] == e) & (ends["t"] >= start["t"])]["t"][0]
        cpu = switches[(switches["ent"] == e) & (switches["t"] <= start["t"])]["cpu"][-1]
        batches += 1
        mid += np.count_nonzero((switches["cpu"] == cpu) & (switches["t"] > start["t"])
                                & (switches["t"] < end) & (switches["ent"] != e))
    assert batches >= 10 and mid >= 1
