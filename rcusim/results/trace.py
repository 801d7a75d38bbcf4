"""Traces of small runs: Chrome trace-event JSON (Perfetto) and ftrace text.

``python -m rcusim run SCENARIO --trace run.json --ftrace run.txt`` turns on
the engine's trace buffer (``Engine.trace_enable()``): one typed record per
context switch, wake-up, grace-period phase, quiescent-state report, IPI,
callback batch and invocation, and ``synchronize_rcu*()`` wait. This module
writes them as

* Chrome trace-event JSON, which https://ui.perfetto.dev opens: per variant,
  one track per CPU (what runs there, IPIs taken, quiescent states
  reported), one per kthread (its bursts and callback batches), one per
  workload task (its waits in ``synchronize_rcu*()``) and two for grace
  periods (normal, with their FQS scans, and expedited);
* text in the kernel's ftrace layout for the rcu tracepoints
  ``rcu_grace_period``, ``rcu_fqs``, ``rcu_callback``,
  ``rcu_quiescent_state_report``, ``rcu_nocb_wake``, ``rcu_batch_start``,
  ``rcu_invoke_callback``, ``rcu_batch_end`` and ``rcu_exp_grace_period``
  and the sched tracepoints ``sched_switch``, ``sched_wakeup`` and ``sched_migrate_task``, with the
  TP_printk() formats of include/trace/events/rcu.h and sched.h, so that
  scripts written for ``/sys/kernel/tracing/trace`` read it.

Traces grow with the run, so they are for small runs: a run is refused up
front when its requests alone would pass :data:`MAX_TRACE_RECORDS`, and
stopped when the engine's buffer fills.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np

from rcusim import _core
from rcusim.errors import ScenarioError
from rcusim.results.atomic import atomic_file

__all__ = ["MAX_TRACE_RECORDS", "check_trace_size", "chrome_trace", "ftrace_lines",
           "write_chrome_trace", "write_ftrace", "trace_frame"]

MAX_TRACE_RECORDS = 2_000_000
"""Most trace records a run may produce (about 200 MB of JSON)."""

RECORDS_PER_REQUEST = 6
"""Fewest records one ``synchronize_rcu*()`` call makes: its wait and return,
the waiter's wake-up, two context switches and (normal GPs) a callback."""

TR = _core.TRACE_KINDS
ENT = _core.ENTITY_KINDS
_CB = _core.CALLBACK_KINDS
CB_FUNCS = {_CB["wakeme_after_rcu"]: "wakeme_after_rcu", _CB["kfree"]: "kfree_rcu_cb", _CB["generic"]: "rcu_cb",
            _CB["rcu_work_rcufn"]: "rcu_work_rcufn", _CB["rcu_scale_async_cb"]: "rcu_scale_async_cb",
            _CB["rcu_barrier_callback"]: "rcu_barrier_callback", _CB["mt_free_rcu"]: "mt_free_rcu"}
"""Callback function names by the engine's callback kind."""
PRIMITIVES = {code: name for name, code in _core.PRIMITIVES.items()}
_EXP_PRIMITIVE = _core.PRIMITIVES["synchronize_rcu_expedited"]
_ENTITY_NAMES = {
    ENT["task"]: "task/{e}", ENT["rcuog"]: "rcuog/{cpu}", ENT["rcuop"]: "rcuop/{idx}", ENT["rcuc"]: "rcuc/{idx}",
    ENT["sr_worker"]: "kworker/{cpu}:1", ENT["exp_gp"]: "rcu_exp_gp_kthread_worker",
    ENT["exp_par"]: "rcu_exp_par_gp_kthread_worker/{idx}", ENT["reader"]: "reader/{cpu}",
    ENT["kfree"]: "kfree_scale_thread/{idx}", ENT["kworker"]: "kworker/{cpu}:2", ENT["rt_probe"]: "amlat/{cpu}",
    ENT["bg"]: "dbench/{cpu}", ENT["krcud"]: "krcud/{idx}", ENT["noise"]: "kworker/{cpu}:3",
    ENT["releaser"]: "main/{idx}",
}
"""Thread names by entity kind (the GP kthread is named by flavour, rcuc/N is ksoftirqd/N with use_softirq)."""
NOCB_WAKE_REASONS = _core.NOCB_WAKE_REASONS
"""rcu_nocb_wake's reason strings by the engine's code."""
QS_NAMES = {0: "QS", 1: "QS (FQS: idle)", 2: "expedited QS"}
"""Chrome event names of a quiescent-state report by how it was found (TR_QS arg)."""
_TASK_COMM_LEN = 16  # the kernel's comm[] holds 15 characters and a NUL
_SCHED_PRIO_TO_WEIGHT = (
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
    9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
    1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
    110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
)
"""kernel/sched/core.c's load weights of nice -20 to 19."""
_FIFO_PRIO = 98  # SCHED_FIFO at rcutree.kthread_prio's default of 1: prio = MAX_RT_PRIO - 1 - 1


def check_trace_size(scenario, variants=None, limit: int = MAX_TRACE_RECORDS) -> None:
    """Refuse, before running, a traced run whose requests alone pass `limit` records.

    Raises
    ------
    ScenarioError
        Naming the variant, its request count and the limit.
    """
    names = list(scenario.variants) if variants is None else list(variants)
    for name in names:
        spec = scenario.variants.get(name)
        if spec is None:
            continue  # run_scenario() names unknown variants
        requests = sum(getattr(wl, "tasks", 0) * getattr(wl, "loops", 0) for wl in spec.workloads)
        need = requests * RECORDS_PER_REQUEST
        if need > limit:
            raise ScenarioError(
                f"variant {name} makes {requests:,} requests, at least {need:,} trace records; "
                f"more than the limit of {limit:,}",
                key="--trace", allowed="a smaller run (fewer workloads.N.tasks or loops), or one --variant")


def trace_frame(variant_result):
    """The trace records of a traced variant as a DataFrame sorted by time.

    Columns: ``t_ns``, ``event`` (name, e.g. ``"qs"``), ``cpu``, ``ent``,
    ``gp_seq``, ``arg``, ``arg2``, ``arg3``; see ``trace_rec_t`` in cython_core/defs.pxd.
    """
    import pandas as pd

    rec = _sorted_records(variant_result)
    names = np.array(sorted(TR, key=TR.get))
    return pd.DataFrame({"t_ns": rec["t"], "event": pd.Categorical(names[rec["kind"]], categories=list(names)),
                         "cpu": rec["cpu"], "ent": rec["ent"], "gp_seq": rec["gp_seq"],
                         "arg": rec["arg"], "arg2": rec["arg2"], "arg3": rec["arg3"]})


def _trace_of(variant_result) -> dict:
    if variant_result.trace is None:
        raise ValueError(f"variant {variant_result.name!r} was not run with a trace")
    return variant_result.trace


def _sorted_records(variant_result) -> np.ndarray:
    rec = _trace_of(variant_result)["records"]
    # Some records are stamped ahead of the engine's clock (a callback inside
    # a batch, a wake-up after its latency): a stable sort keeps ties in order.
    return rec[np.argsort(rec["t"], kind="stable")]


class _Names:
    """Names of the engine's entities as the kernel shows them (comm) and as tracks."""

    def __init__(self, trace: dict):
        ents = trace["entities"]
        self.kind = ents["kind"]
        self.cpu = ents["cpu"]
        self.idx = ents["idx"]
        self.rt = ents["rt"]
        self.weight = ents["weight"]
        self.rcu_name = trace["rcu_name"]
        self.use_softirq = trace["use_softirq"]

    def name(self, e: int) -> str:
        if e < 0:
            return "<idle>"
        kind, cpu, idx = int(self.kind[e]), int(self.cpu[e]), int(self.idx[e])
        if kind == ENT["gp"]:
            return self.rcu_name
        if kind == ENT["rcuc"] and self.use_softirq:
            return f"ksoftirqd/{idx}"
        if kind not in _ENTITY_NAMES:
            raise ValueError(f"entity {e} has a kind the trace writer does not name: {kind}")
        return _ENTITY_NAMES[kind].format(e=e, cpu=cpu, idx=idx)

    def comm(self, e: int) -> str:
        return self.name(e)[: _TASK_COMM_LEN - 1]

    def task_comm(self, e: int, cpu: int) -> str:
        """comm as sched events print it: the idle task is swapper/CPU."""
        return f"swapper/{cpu}" if e < 0 else self.comm(e)

    def prio(self, e: int) -> int:
        """p->prio: 120 + nice for SCHED_OTHER (the idle task's 120), 98 for SCHED_FIFO kthreads."""
        if e >= 0 and self.rt[e]:
            return _FIFO_PRIO
        weight = 1024 if e < 0 else int(self.weight[e])
        nice = min(range(40), key=lambda i: abs(_SCHED_PRIO_TO_WEIGHT[i] - weight)) - 20
        return 120 + nice

    @staticmethod
    def pid(e: int) -> int:
        return 0 if e < 0 else e + 1

    def is_task(self, e: int) -> bool:
        return e >= 0 and int(self.kind[e]) == ENT["task"]

    def is_kthread(self, e: int) -> bool:
        return e >= 0 and int(self.kind[e]) not in (ENT["task"], ENT["reader"], ENT["releaser"])


def _us(t_ns) -> float:
    return int(t_ns) / 1e3


def chrome_trace(result) -> dict:
    """Chrome trace-event JSON (a dict) of every traced variant of `result`.

    Each variant gets four processes: ``CPUs`` (one thread per CPU: the
    entity running, wake-ups, IPI handlers, quiescent states, ``call_rcu()``
    and rcuog wake-ups), ``kthreads`` (one thread
    per kthread: its bursts and callback batches), ``tasks`` (one thread per
    workload task: its ``synchronize_rcu*()`` waits) and ``grace periods``
    (normal GPs with their FQS scans and rcu_node QS reports; expedited GPs).
    Times are in µs.
    """
    events = []
    for k, (vname, v) in enumerate(result.variants.items()):
        events += _chrome_variant(v, vname, 10 * k)
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"scenario": result.scenario_name, "seed": result.seed,
                          "rcusim_version": result.rcusim_version}}


def _chrome_variant(v, vname: str, pid0: int) -> list[dict]:
    trace = _trace_of(v)
    names = _Names(trace)
    nodes = trace["nodes"]
    rec = _sorted_records(v)
    pid_cpu, pid_kt, pid_task, pid_gp = pid0 + 1, pid0 + 2, pid0 + 3, pid0 + 4
    out = [
        {"ph": "M", "name": "process_name", "pid": pid_cpu, "args": {"name": f"{vname}: CPUs"}},
        {"ph": "M", "name": "process_name", "pid": pid_kt, "args": {"name": f"{vname}: kthreads"}},
        {"ph": "M", "name": "process_name", "pid": pid_task, "args": {"name": f"{vname}: tasks"}},
        {"ph": "M", "name": "process_name", "pid": pid_gp, "args": {"name": f"{vname}: grace periods"}},
        {"ph": "M", "name": "thread_name", "pid": pid_gp, "tid": 0, "args": {"name": "normal GPs"}},
        {"ph": "M", "name": "thread_name", "pid": pid_gp, "tid": 1, "args": {"name": "expedited GPs"}},
    ]
    threads = set()

    def thread(pid, tid, label):
        if (pid, tid) not in threads:
            threads.add((pid, tid))
            out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": label}})
            out.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                        "args": {"sort_index": tid}})

    def span(pid, tid, name, t0, t1, cat, args=None):
        ev = {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid,
              "ts": _us(t0), "dur": max(0.0, _us(t1) - _us(t0))}
        if args:
            ev["args"] = args
        out.append(ev)

    def instant(pid, tid, name, t, cat, args=None):
        ev = {"ph": "i", "s": "t", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": _us(t)}
        if args:
            ev["args"] = args
        out.append(ev)

    running: dict[int, tuple[int, int]] = {}   # cpu -> (entity, since)
    waits: dict[int, tuple[int, int, int]] = {}  # task -> (since, primitive, snapshot)
    batches: dict[int, tuple[int, int, int]] = {}  # callbacks' cpu -> (since, ready, bl)
    ipis: dict[tuple[int, int], list[int]] = {}  # (cpu, kind) -> send times, FIFO
    gp_open = fqs_open = exp_open = None
    end_t = int(rec["t"][-1]) if rec.size else 0
    for r in rec:
        t, kind, cpu, ent = int(r["t"]), int(r["kind"]), int(r["cpu"]), int(r["ent"])
        gp_seq, arg, arg2, arg3 = int(r["gp_seq"]), int(r["arg"]), int(r["arg2"]), int(r["arg3"])
        if kind == TR["switch"]:
            prev = running.pop(cpu, None)
            if prev is not None:
                _close_run(span, thread, names, pid_cpu, pid_kt, cpu, prev, t)
            if ent >= 0:
                running[cpu] = (ent, t)
        elif kind == TR["task_wait"]:
            waits[ent] = (t, arg, gp_seq)
        elif kind == TR["task_return"]:
            t0, prim, snap = waits.pop(ent, (t, arg, gp_seq))
            thread(pid_task, ent, names.name(ent))
            span(pid_task, ent, PRIMITIVES.get(prim, "synchronize"), t0, t, "wait",
                 {"gp_seq_snap": snap, "cpu": cpu})
        elif kind == TR["gp_start"]:
            gp_open = (t, gp_seq)
        elif kind == TR["gp_end"]:
            t0, seq = gp_open if gp_open else (t, gp_seq)
            span(pid_gp, 0, f"GP {seq}", t0, t, "gp", {"gp_seq": seq})
            gp_open = None
        elif kind == TR["gp_fqs_start"]:
            fqs_open = t
        elif kind == TR["gp_fqs_end"]:
            span(pid_gp, 0, "force_qs_rnp", fqs_open if fqs_open is not None else t, t, "gp",
                 {"cpus_reported": arg})
            fqs_open = None
        elif kind == TR["exp_start"]:
            exp_open = (t, gp_seq)
        elif kind == TR["exp_end"]:
            t0, seq = exp_open if exp_open else (t, gp_seq)
            span(pid_gp, 1, f"expedited GP {seq}", t0, t, "exp", {"expedited_sequence": seq, "ipis": arg})
            exp_open = None
        elif kind == TR["qs"]:
            thread(pid_cpu, cpu, f"CPU {cpu}")
            instant(pid_cpu, cpu, QS_NAMES.get(arg, "QS"), t, "qs", {"gp_seq": gp_seq})
        elif kind == TR["qs_report"]:
            instant(pid_gp, 0, "rcu_quiescent_state_report", t, "qs",
                    {"gp_seq": gp_seq, "mask": f"{arg:x}", "qsmask": f"{arg2:x}", "level": int(nodes["level"][ent]),
                     "grplo": int(nodes["grplo"][ent]), "grphi": int(nodes["grphi"][ent]), "gp_tasks": arg3})
        elif kind == TR["callback"]:
            thread(pid_cpu, cpu, f"CPU {cpu}")
            instant(pid_cpu, cpu, "call_rcu", t, "cb", {"func": CB_FUNCS.get(arg, "rcu_cb"), "qlen": arg3})
        elif kind == TR["nocb_wake"]:
            thread(pid_cpu, cpu, f"CPU {cpu}")
            instant(pid_cpu, cpu, f"rcu_nocb_wake {NOCB_WAKE_REASONS[arg]}", t, "cb")
        elif kind == TR["wake"]:
            thread(pid_cpu, cpu, f"CPU {cpu}")
            instant(pid_cpu, cpu, f"sched_wakeup {names.name(ent)}", t, "sched", {"waker_cpu": arg})
        elif kind == TR["migrate"]:
            mover = arg2 if arg2 >= 0 else cpu
            thread(pid_cpu, mover, f"CPU {mover}")
            instant(pid_cpu, mover, f"sched_migrate_task {names.name(ent)}", t, "sched",
                    {"orig_cpu": arg, "dest_cpu": cpu})
        elif kind == TR["ipi_send"]:
            ipis.setdefault((cpu, arg), []).append(t)
        elif kind == TR["ipi_handler"]:
            sent = ipis.get((cpu, arg))
            t_sent = sent.pop(0) if sent else t
            thread(pid_cpu, cpu, f"CPU {cpu}")
            instant(pid_cpu, cpu, "rcu_exp_handler IPI" if arg else "resched IPI", t, "ipi",
                    {"sent_us": _us(t_sent), "latency_us": _us(t - t_sent)})
        elif kind == TR["cb_batch_start"]:
            batches[cpu] = (t, arg, arg2)
        elif kind == TR["cb_batch_end"]:
            t0, ready, bl = batches.pop(cpu, (t, arg, 0))
            name = f"rcu_do_batch CPU {cpu}: {arg} CBs"
            args = {"ready": ready, "bl": bl, "invoked": arg, "left": arg2}
            if ent >= 0:
                thread(pid_kt, ent, names.name(ent))
                span(pid_kt, ent, name, t0, t, "cb", args)
            else:
                thread(pid_cpu, cpu, f"CPU {cpu}")
                span(pid_cpu, cpu, f"RCU_SOFTIRQ: {arg} CBs", t0, t, "cb", args)
    for cpu, prev in running.items():
        _close_run(span, thread, names, pid_cpu, pid_kt, cpu, prev, end_t)
    return out


def _close_run(span, thread, names, pid_cpu, pid_kt, cpu, prev, t):
    ent, t0 = prev
    label = names.name(ent)
    thread(pid_cpu, cpu, f"CPU {cpu}")
    span(pid_cpu, cpu, label, t0, t, "sched", {"entity": ent})
    if names.is_kthread(ent):
        thread(pid_kt, ent, label)
        span(pid_kt, ent, "running", t0, t, "sched", {"cpu": cpu})


def ftrace_lines(variant_result, nr_cpus: int | None = None):
    """Lines of ftrace text (the ``trace`` file's layout) for one traced variant.

    Yields the header, then one line per rcu tracepoint hit, in time order::

        rcuop/1-29      [001] .....     0.152578: rcu_invoke_callback: rcu_preempt rhp=... func=wakeme_after_rcu
    """
    trace = _trace_of(variant_result)
    names = _Names(trace)
    rcu = trace["rcu_name"]
    nr_cpus = trace["nr_cpus"] if nr_cpus is None else nr_cpus
    nodes = trace["nodes"]
    rec = _sorted_records(variant_result)
    prev_states = iter(_prev_states(names, rec))
    # %ld from v5.10 ("rcu/trace: Print negative GP numbers correctly"), %lu before.
    mask = -1 if trace.get("signed_gp_seq", True) else 0xFFFF_FFFF_FFFF_FFFF
    body = []
    curr: dict[int, int] = {}
    for r in rec:
        t, kind, cpu, ent = int(r["t"]), int(r["kind"]), int(r["cpu"]), int(r["ent"])
        gp_seq, arg, arg2, arg3 = int(r["gp_seq"]) & mask, int(r["arg"]), int(r["arg2"]), int(r["arg3"])
        line = None
        if kind == TR["switch"]:
            prev = curr.get(cpu, -1)
            state = next(prev_states)
            curr[cpu] = ent
            if prev != ent or ent >= 0:
                line = (prev, cpu, "d..2.", "sched_switch",
                        f"prev_comm={names.task_comm(prev, cpu)} prev_pid={names.pid(prev)} "
                        f"prev_prio={names.prio(prev)} prev_state={state} ==> "
                        f"next_comm={names.task_comm(ent, cpu)} next_pid={names.pid(ent)} "
                        f"next_prio={names.prio(ent)}")
        elif kind == TR["wake"]:
            waker_cpu = arg if arg >= 0 else cpu
            line = (curr.get(waker_cpu, -1), waker_cpu, "d..2.", "sched_wakeup",
                    f"comm={names.comm(ent)} pid={names.pid(ent)} prio={names.prio(ent)} target_cpu={cpu:03d}")
        elif kind == TR["migrate"]:
            mover = arg2 if arg2 >= 0 else cpu
            line = (curr.get(mover, -1), mover, "d..2.", "sched_migrate_task",
                    f"comm={names.comm(ent)} pid={names.pid(ent)} prio={names.prio(ent)} orig_cpu={arg} "
                    f"dest_cpu={cpu}")
        elif kind == TR["callback"]:
            line = (ent, cpu, ".....", "rcu_callback",
                    f"{rcu} rhp={_rhp(arg2)} func={CB_FUNCS.get(arg, 'rcu_cb')} {arg3}")
        elif kind == TR["qs_report"]:
            line = (curr.get(cpu, -1), cpu, "d..1.", "rcu_quiescent_state_report",
                    f"{rcu} {gp_seq} {arg:x}>{arg2:x} {int(nodes['level'][ent])} {int(nodes['grplo'][ent])} "
                    f"{int(nodes['grphi'][ent])} {arg3}")
        elif kind == TR["nocb_wake"]:
            line = (ent, cpu, "d..1.", "rcu_nocb_wake", f"{rcu} {cpu} {NOCB_WAKE_REASONS[arg]}")
        elif kind == TR["gp_start"]:
            line = (ent, cpu, ".....", "rcu_grace_period", f"{rcu} {gp_seq} start")
        elif kind == TR["gp_fqs_start"]:
            line = (ent, cpu, ".....", "rcu_grace_period", f"{rcu} {gp_seq} fqsstart")
        elif kind == TR["gp_fqs_end"]:
            line = (ent, cpu, ".....", "rcu_grace_period", f"{rcu} {gp_seq} fqsend")
        elif kind == TR["gp_end"]:
            # rcu_gp_cleanup() traces "end" before rcu_seq_end(), with the GP's own number:
            # the record holds the ended value, (old | RCU_SEQ_STATE_MASK) + 1 = old + 3.
            line = (ent, cpu, ".....", "rcu_grace_period", f"{rcu} {(int(r['gp_seq']) - 3) & mask} end")
        elif kind == TR["qs"]:
            if arg == 2:
                pass  # expedited: the kernel has no per-CPU tracepoint for it
            elif arg == 1:  # found in dyntick-idle by the GP kthread's FQS scan
                gp_ent = int(np.flatnonzero(names.kind == ENT["gp"])[0])
                line = (gp_ent, int(names.cpu[gp_ent]), ".....", "rcu_fqs", f"{rcu} {gp_seq} {cpu} dti")
            # else its report by the CPU itself: rcu_quiescent_state_report (TR_QS_REPORT)
        elif kind == TR["cpuqs"]:
            line = (curr.get(cpu, -1), cpu, "d..1.", "rcu_grace_period", f"{rcu} {gp_seq} cpuqs")
        elif kind == TR["rcu_softirq"]:
            line = (ent if ent >= 0 else curr.get(cpu, -1), cpu, "..s1.", "softirq_entry", "vec=9 [action=RCU]")
        elif kind == TR["rcu_softirq_exit"]:
            line = (ent if ent >= 0 else curr.get(cpu, -1), cpu, "..s1.", "softirq_exit", "vec=9 [action=RCU]")
        elif kind == TR["cpustart"]:
            line = (curr.get(cpu, -1), cpu, "d..1.", "rcu_grace_period", f"{rcu} {gp_seq} cpustart")
        elif kind == TR["cb_batch_start"]:
            runner = ent if ent >= 0 else curr.get(cpu, -1)
            flags = "d..1." if ent >= 0 else "d.s1."
            line = (runner, _runner_cpu(names, ent, cpu), flags, "rcu_batch_start", f"{rcu} CBs={arg} bl={arg2}")
        elif kind == TR["cb_invoke"]:
            runner = ent if ent >= 0 else curr.get(cpu, -1)
            flags = "....." if ent >= 0 else "..s1."
            line = (runner, _runner_cpu(names, ent, cpu), flags, "rcu_invoke_callback",
                    f"{rcu} rhp={_rhp(arg2)} func={CB_FUNCS.get(arg, 'rcu_cb')}")
        elif kind == TR["cb_batch_end"]:
            runner = ent if ent >= 0 else curr.get(cpu, -1)
            flags = "d..1." if ent >= 0 else "d.s1."
            # idle=CSIR: ready callbacks left, need_resched(), idle task, rcuc kthread.
            risk = "R" if ent >= 0 and int(names.kind[ent]) == ENT["rcuc"] and not names.use_softirq else "."
            idle = ("C" if arg2 > 0 else ".") + "." + ("I" if runner < 0 else ".") + risk
            line = (runner, _runner_cpu(names, ent, cpu), flags, "rcu_batch_end",
                    f"{rcu} CBs-invoked={arg} idle={idle}")
        elif kind in (TR["task_wait"], TR["task_return"]) and arg == _EXP_PRIMITIVE:
            # synchronize_rcu_expedited()'s snapshot, and sync_exp_work_done() finding it done.
            line = (ent, cpu, ".....", "rcu_exp_grace_period",
                    f"{rcu} {gp_seq} {'snap' if kind == TR['task_wait'] else 'done'}")
        elif kind == TR["exp_start"]:
            line = (ent, cpu, ".....", "rcu_exp_grace_period", f"{rcu} {gp_seq} start")
        elif kind == TR["exp_end"]:
            line = (ent, cpu, ".....", "rcu_exp_grace_period", f"{rcu} {gp_seq} end")
        if line is not None:
            e, c, flags, event, payload = line
            secs, ns = divmod(t, 1_000_000_000)
            body.append(f"{names.comm(e):>16}-{names.pid(e):<7} [{c:03d}] {flags} "
                        f"{secs:5d}.{ns // 1000:06d}: {event}: {payload}")
    yield "# tracer: nop"
    yield "#"
    yield f"# entries-in-buffer/entries-written: {len(body)}/{len(body)}   #P:{nr_cpus}"
    yield "#"
    yield "#                                _-----=> irqs-off/BH-disabled"
    yield "#                               / _----=> need-resched"
    yield "#                              | / _---=> hardirq/softirq"
    yield "#                              || / _--=> preempt-depth"
    yield "#                              ||| / _-=> migrate-disable"
    yield "#                              |||| /     delay"
    yield "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION"
    yield "#              | |         |   |||||     |         |"
    yield from body


def _rhp(cb: int) -> str:
    """The rcu_head address (%p) of the engine's callback `cb`: 64-byte objects in the direct map."""
    return f"{cb * 64 + 0xFFFF888000000000 & 0xFFFF_FFFF_FFFF_FFFF:016x}"


def _prev_states(names: _Names, rec: np.ndarray) -> list[str]:
    """sched_switch's prev_state of each switch record, in order: ``R+`` for an entity
    switched out while runnable (preempted: it runs again before any wake-up), ``D`` for
    a task sleeping in synchronize_rcu*() (wait_for_completion()), ``S`` for other
    sleepers, ``R`` for the idle task."""
    prevs = []
    curr: dict[int, int] = {}
    for r in rec:
        if r["kind"] == TR["switch"]:
            prevs.append(curr.get(int(r["cpu"]), -1))
            curr[int(r["cpu"])] = int(r["ent"])
    states = []
    woken_next: dict[int, bool] = {}  # entity -> its next event after this point is a wake-up
    k = len(prevs)
    for r in rec[::-1]:
        ent = int(r["ent"])
        if r["kind"] == TR["wake"]:
            woken_next[ent] = True
        elif r["kind"] == TR["switch"]:
            k -= 1
            prev = prevs[k]
            if prev < 0:
                states.append("R")
            elif prev == ent or not woken_next.get(prev, True):
                states.append("R+")
            else:
                states.append("D" if names.is_task(prev) else "S")
            woken_next[ent] = False
    return states[::-1]


def _runner_cpu(names: _Names, ent: int, cpu: int) -> int:
    """CPU a callback batch runs on: its kthread's, or the callbacks' own in softirq."""
    return int(names.cpu[ent]) if ent >= 0 else cpu


def _atomic_write(path: Path, write) -> None:
    """Write through a temporary file beside `path`, renamed into place when complete."""
    with atomic_file(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        write(f)


def write_chrome_trace(result, path) -> Path:
    """Write :func:`chrome_trace` of `result` to `path` (JSON, opens in Perfetto)."""
    path = Path(path)
    data = chrome_trace(result)
    _atomic_write(path, lambda f: json.dump(data, f, separators=(",", ":")))
    return path


def write_ftrace(result, path) -> Path:
    """Write :func:`ftrace_lines` of every variant of `result` to `path`.

    With several variants each starts with a ``# rcusim variant: NAME`` line
    (their clocks each start at 0; ``--variant`` keeps one).
    """
    path = Path(path)

    def write(f):
        several = len(result.variants) > 1
        for name, v in result.variants.items():
            if several:
                f.write(f"# rcusim variant: {name}\n")
            for line in ftrace_lines(v):
                f.write(line + "\n")

    _atomic_write(path, write)
    return path


def check_output_path(path, option: str) -> Path:
    """Refuse, before running, an output file that cannot be written: a name that is no path (a
    NUL byte, a name over 255 bytes), something other than a regular file where it exists (a
    directory, a FIFO, a device), or a directory that does not exist or takes no new file."""
    path = Path(path)
    try:
        if "\x00" in str(path):
            raise ValueError("a NUL byte in the path")
        str(path).encode()
        exists = path.exists()
    except (OSError, ValueError, UnicodeError) as exc:  # a name too long, a NUL, a lone surrogate
        raise ScenarioError(f"{str(path)!r} cannot be a path: {getattr(exc, 'strerror', None) or exc}", key=option,
                            allowed="a file name of at most 255 bytes") from None
    if path.is_dir():
        raise ScenarioError(f"{str(path)!r} is a directory", key=option, allowed="a file name")
    if exists and not path.is_file():
        raise ScenarioError(f"{str(path)!r} is not a regular file", key=option, allowed="a file name")
    parent = path.absolute().parent
    if not parent.is_dir():
        raise ScenarioError(f"directory {str(parent)!r} does not exist", key=option,
                            allowed="a file in an existing directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".rcusim-check-", dir=parent)
    except OSError as exc:
        raise ScenarioError(f"cannot write in {str(parent)!r}: {exc.strerror or exc}", key=option,
                            allowed="a file in a writable directory") from None
    os.close(fd)
    os.unlink(probe)
    return path
