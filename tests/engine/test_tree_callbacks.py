"""rcu_do_batch() in RCU_SOFTIRQ on an idle CPU whose callbacks wake tasks onto it.

rcu_do_batch() (kernel/rcu/tree.c) stops a softirq batch once it has invoked
blimit callbacks if need_resched() or current is not the idle task.  A
wakeme_after_rcu() waking a synchronize_rcu() caller onto the idle CPU running
the softirq enqueues it there and resched_curr()s the idle task
(wakeup_preempt_idle()), so the batch stops at blimit; rcu_core() re-raises
RCU_SOFTIRQ, handle_softirqs() sees need_resched() and wakes ksoftirqd/N
(wakeup_softirqd()), which invokes the rest among the woken callers.  The
callers run only after the softirq returns to the idle loop.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from rcusim import _core
from rcusim.engine.engine_input import engine_input
from rcusim.input.scenario import load_scenario

from tests.engine.test_call_rcu_load import LOAD

TR = _core.TRACE_KINDS
BLIMIT = 10
CALLERS = 30


def traced(callers: int = CALLERS, bootargs: str = ""):
    """30 synchronize_rcu() callers pinned to CPU 1 of 2, one call each: they all block,
    CPU 1 goes idle, and its softirq invokes their callbacks after the GP."""
    data = {"name": "softirq_batch", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2},
            "kernel": {"release": "6.12", "HZ": 1000, "bootargs": bootargs},
            "workloads": [{"kind": "sync_loop", "tasks": callers, "loops": 1, "cpus": "1", "pinned": True,
                           "work_after": "none"}]}
    inp, _ = engine_input(load_scenario(data).variants["default"])
    eng = _core.Engine(inp, np.random.PCG64(0))
    eng.trace_enable(10**6)
    assert eng.run(10**9, 10**8) == _core.EXIT_DONE
    kinds = eng.entity_kinds()
    ksoftirqd = int(np.flatnonzero((kinds["kind"] == _core.ENTITY_KINDS["rcuc"]) & (kinds["cpu"] == 1))[0])
    return eng, eng.trace_records(), ksoftirqd


def test_an_idle_cpu_waking_callers_onto_itself_stops_at_blimit_and_hands_the_rest_to_ksoftirqd():
    eng, tr, ksoftirqd = traced()
    on1 = tr[tr["cpu"] == 1]
    starts = on1[on1["kind"] == TR["cb_batch_start"]]
    ends = on1[on1["kind"] == TR["cb_batch_end"]]
    # The first batch is the idle task's softirq (runner -1) with every callback ready.
    assert starts["ent"][0] == -1 and starts["arg"][0] == CALLERS
    # It stops at blimit with the rest left ready (CBs-invoked, then what is left).
    assert ends["ent"][0] == -1
    assert (ends["arg"][0], ends["arg2"][0]) == (BLIMIT, CALLERS - BLIMIT)
    # ksoftirqd/1 invokes the rest, after the softirq: every later batch runs while it
    # is the CPU's current task (a softirq batch's own records name no runner).
    switches = on1[on1["kind"] == TR["switch"]]
    later = starts[1:]
    assert len(later) > 0 and int(ends["arg"][1:].sum()) == CALLERS - BLIMIT
    for t in later["t"]:
        assert switches["ent"][switches["t"] <= t][-1] == ksoftirqd
    assert eng.counters()["ksoftirqd_wakeups"] >= 1
    # No caller runs on CPU 1 while the idle task's softirq is still invoking callbacks.
    invokes = on1[on1["kind"] == TR["cb_invoke"]]
    to_task = switches[switches["ent"] >= 0]
    assert not ((to_task["t"] > invokes["t"][0]) & (to_task["t"] < ends["t"][0])).any()


@pytest.mark.parametrize("boost, fifo", [(False, False), (True, True)])
def test_rcuc_kthreads_are_sched_fifo_only_with_rcu_boost(boost, fifo):
    """rcu_cpu_kthread_setup() (kernel/rcu/tree_plugin.h) sets rcuc/N to SCHED_FIFO at
    kthread_prio under CONFIG_RCU_BOOST only; the GP kthread takes kthread_prio either way."""
    data = copy.deepcopy(LOAD)
    data["kernel"].update(CONFIG_RCU_BOOST=boost, bootargs="rcutree.use_softirq=0 rcutree.kthread_prio=2")
    ents = _core.Engine(engine_input(load_scenario(data).variants["default"])[0], np.random.PCG64(0)).entity_kinds()
    rcuc = ents["rt"][ents["kind"] == _core.ENTITY_KINDS["rcuc"]]
    gp = ents["rt"][ents["kind"] == _core.ENTITY_KINDS["gp"]]
    assert len(rcuc) == 4 and set(rcuc) == {fifo} and list(gp) == [True]


def crowd(tasks: int = 300):
    """`tasks` unpinned synchronize_rcu() callers on the qemu-tcg profile's 2 vCPUs, released
    together, 3 calls each; traced."""
    data = {"name": "crowd", "hardware": {"profile": "qemu-tcg", "nr_cpus": 2},
            "kernel": {"release": "6.12", "HZ": 1000, "CONFIG_PREEMPT_DYNAMIC": True, "bootargs": "preempt=voluntary"},
            "workloads": [{"kind": "sync_loop", "tasks": tasks, "loops": 3, "cpus": "0-1", "pinned": False,
                           "work_after": "none", "start": "barrier"}]}
    inp, _ = engine_input(load_scenario(data).variants["default"])
    eng = _core.Engine(inp, np.random.PCG64(0))
    eng.trace_enable(10**7)
    assert eng.run(10**10, 10**9) == _core.EXIT_DONE
    return inp, eng


def test_a_tick_inside_a_wake_up_sees_no_quiescent_state():
    """PREEMPT_RCU's tick notes a QS only where it interrupted a task with preemption and
    softirqs on (rcu_flavor_sched_clock_irq()). try_to_wake_up() runs with p->pi_lock held,
    interrupts off, so a tick pending meanwhile comes at its irq restore, before the
    preempt_enable(): the barrier's parent waking 1,000 callers back to back on vCPU 0 notes
    its QS only where it is switched out, as the guest's does, whose GP spans the release."""
    _inp, eng = crowd(1000)
    tr = eng.trace_records()
    wakes = np.sort(tr[(tr["kind"] == TR["wake"]) & (tr["ent"] < 1000)], order="t")
    release = wakes[wakes["t"] < tr[tr["kind"] == TR["task_return"]]["t"].min()][-1000:]
    t0, t1 = release["t"].min(), release["t"].max()
    during = tr[(tr["t"] >= t0) & (tr["t"] <= t1) & (tr["cpu"] == 0)]
    qs = during[during["kind"] == TR["cpuqs"]]
    switched = set(during[during["kind"] == TR["switch"]]["t"].tolist())
    assert t1 - t0 > 5_000_000  # the loop outlasts several of vCPU 0's ticks (HZ=1000)
    assert len(qs) >= 1 and all(t in switched for t in qs["t"].tolist())


def test_an_irq_exit_restarts_rcu_softirq_over_a_task_that_keeps_its_slice():
    """handle_softirqs() at a tick's irq exit restarts RCU_SOFTIRQ while !need_resched(): over
    a caller whose slice the fair class protects (RUN_TO_PARITY), the callers its callbacks
    woke do not set need_resched, and the next pass runs in the same irq exit, as the guest
    traces it (one irq exit in three runs a second pass with 1,000 callers). Taking any task
    queued beside the interrupted one for need_resched() handed every second pass to
    ksoftirqd/N. A tick taken while ksoftirqd/N is inside its pass only raises RCU_SOFTIRQ:
    no pass runs at that irq exit (invoke_softirq() runs none in interrupt context)."""
    _inp, eng = crowd()
    counters = eng.counters()
    assert counters["softirq_restarts_irq_exit"] > 0
    tr = eng.trace_records()
    kinds = eng.entity_kinds()
    ksoftirqd = set(np.flatnonzero(kinds["kind"] == _core.ENTITY_KINDS["rcuc"]).tolist())
    switches = tr[tr["kind"] == TR["switch"]]
    passes = tr[(tr["kind"] == TR["rcu_softirq"]) & (tr["ent"] < 0)]
    assert len(passes) > 0
    for c in (0, 1):
        on = switches[switches["cpu"] == c]
        at_exit = passes[passes["cpu"] == c]
        running = on["ent"][np.searchsorted(on["t"], at_exit["t"], side="right") - 1]
        assert not any(int(e) in ksoftirqd for e in running)


def test_ksoftirqd_decides_each_restart_at_the_end_of_its_pass():
    """handle_softirqs() in ksoftirqd restarts only while !need_resched(): a caller woken by
    a pass's callbacks that the fair class would pick stops the restarts at that pass's end
    (rcusim decides each restart there, one pass a burst), and cond_resched() lets the caller
    run. With 300 callers on 2 vCPUs, ksoftirqd's median time on a CPU is then at most two
    passes of blimit wake-up callbacks; deciding every restart when handle_softirqs() began,
    before its wakees were queued, ran it up to the 2 ms limit (a median of 544 µs here)."""
    inp, eng = crowd()
    tr = eng.trace_records()
    kinds = eng.entity_kinds()
    ksoftirqd = set(np.flatnonzero(kinds["kind"] == _core.ENTITY_KINDS["rcuc"]).tolist())
    switches = tr[tr["kind"] == TR["switch"]]
    slices = []
    for c in (0, 1):
        on = switches[switches["cpu"] == c]
        slices += [int(on["t"][i + 1] - on["t"][i]) for i in range(len(on) - 1) if int(on["ent"][i]) in ksoftirqd]
    assert len(slices) >= 10
    assert np.median(slices) <= 2 * BLIMIT * inp.tree_callbacks.cb_wakeme_ns
    assert inp.tree_callbacks.softirq_qs == 1  # rcu_softirq_qs() after each pass, from v4.20
