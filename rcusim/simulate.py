"""Run a scenario: convert each variant to low-level values, drive the engine, collect results.

This is the only place where high-level configuration (``VariantSpec``) is
turned into the plain integers and NumPy arrays the compiled engine takes
(``ll_*`` values), and where the engine's records become a ``Result``.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from rcusim import _core
from rcusim.config import CallRcuLoad, KfreeRcuFlood, MembarrierLoop, Readers, RtLatencyProbe, SyncLoop
from rcusim.cpulist import parse_cpulist
from rcusim.errors import ScenarioError
from rcusim.rcuscale import kfree_lowlevel, kfree_metrics, memory_frame
from rcusim.result import (Result, VariantResult, installed_version, make_gps_frame, make_requests_frame,
                           sched_latency_stats_us)
from rcusim.scenario import Scenario, load_scenario
from rcusim.topology import nocb_groups, rcu_init_geometry

#: The kernel starts rcu_state.gp_seq close to wrap on purpose: (0 - 300) << 2.
GP_SEQ_INIT = -300 << 2

#: CONFIG_RCU_CPU_STALL_TIMEOUT default (s); FQS starts resched IPIs at half of it.
RCU_CPU_STALL_TIMEOUT_S = 21

#: z-score of the 99th percentile of a standard normal, to fit a lognormal to (median, p99).
Z_P99 = 2.3263478740408408

#: Events per engine call between progress updates.
EVENT_CHUNK = 2_000_000

PRIMITIVES = {"synchronize_rcu": 0, "synchronize_rcu_expedited": 1}

#: The engine's callback kinds (CB_KFREE, CB_GENERIC) for call_rcu_load's ``callback``.
CALLBACK_KINDS = {"kfree": 1, "generic": 2}

#: Largest values of the engine's C int and int64 fields.
C_INT_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

#: Rough bytes of engine state per task and per CPU, for the up-front memory check.
BYTES_PER_REQUEST = 32
BYTES_PER_TASK = 160
BYTES_PER_CPU = 600


#: rcuscale's figures, shown in the side-by-side table of kfree_rcu() floods.
KFREE_TABLE_METRICS = ("total_time_ns", "loops", "batches", "memory_footprint_mb", "kvfree_peak_mb")


class ExitReason:
    """Why ``Engine.run`` returned (values from ``rcusim._core``)."""

    DONE = _core.EXIT_DONE
    MAX_EVENTS = _core.EXIT_MAX_EVENTS
    TIME_LIMIT = _core.EXIT_TIME_LIMIT
    STALLED = _core.EXIT_STALLED


def _ll_params(spec) -> dict:
    """Kernel tunables and platform costs as the engine's integers."""
    p = spec.params
    costs = spec.hardware.costs
    hz = p.hz
    median = max(costs.wakeup_idle_median_ns, 1)
    p99 = max(costs.wakeup_idle_p99_ns, median)
    return {
        "jiffy_ns": 1_000_000_000 // hz,
        "gp_seq_init": GP_SEQ_INIT,
        "preempt_rcu": int(p.preempt_rcu),
        "preemption": int(p.preemption),
        # The kernel takes any long (ulong) here; larger values than the engine's
        # C types mean the same to it: no CPU queues 2**31 callbacks, and no run
        # lasts 2**63 jiffies.
        "blimit": min(p.blimit, C_INT_MAX),
        "qhimark": p.qhimark,
        "qlowmark": p.qlowmark,
        "rcu_divisor": p.rcu_divisor,
        "rcu_resched_ns": p.rcu_resched_ns,
        "jiffies_till_first_fqs": p.jiffies_till_first_fqs,
        "jiffies_till_next_fqs": p.jiffies_till_next_fqs,
        "jiffies_to_sched_qs": min(p.jiffies_to_sched_qs, INT64_MAX),
        "jiffies_resched": RCU_CPU_STALL_TIMEOUT_S * hz // 2,
        "use_softirq": int(p.use_softirq),
        # nocb_nobypass_lim_per_jiffy = 16 * 1000 / HZ direct enqueues per jiffy.
        "nocb_nobypass_lim": 16 * 1000 // hz,
        "wake_from_gp": int(p.rcu_normal_wake_from_gp),
        # The GP kthread, its kworkers and rcuog leaders live on CPU 0 (housekeeping).
        "gp_cpu": 0,
        # Before v3.7 no kthread drove grace periods: the work ran in softirq, which no
        # task can delay. rcusim keeps its GP kthread and lets no task delay it either.
        "gp_kthread_rt": int(p.kthread_prio > 0 or p.release < (3, 7)),
        "nocb_cb_rt": int(p.nocb_cb_boost and p.kthread_prio > 0),
        # Up to v6.9 the wake-from-GP cleanup work ran on system_highpri_wq (nice -20);
        # later kernels use sync_wq, an ordinary workqueue.
        "sr_worker_highpri": int(p.release <= (6, 9)),
        "ctxsw_ns": costs.ctxsw_ns,
        "wakeup_busy_ns": costs.wakeup_busy_ns,
        "idle_mu": math.log(median),
        "idle_sigma": (math.log(p99) - math.log(median)) / Z_P99,
        "ipi_latency_ns": costs.ipi_latency_ns,
        "tick_ns": costs.tick_ns,
        "softirq_ns": costs.softirq_ns,
        "rnp_lock_ns": costs.rnp_lock_ns,
        "cb_wakeme_ns": costs.cb_wakeme_ns,
        "cb_kfree_ns": costs.cb_kfree_ns,
        "cb_generic_ns": costs.cb_generic_ns,
        "call_rcu_ns": costs.call_rcu_ns,
        "sync_entry_ns": costs.sync_entry_ns,
        "kfree_ns": costs.kfree_ns,
        "kmalloc_ns": costs.kmalloc_ns,
        "kvfree_call_rcu_ns": costs.kvfree_call_rcu_ns,
        "kfree_bulk_ns": costs.kfree_bulk_ns,
        "page_alloc_ns": costs.page_alloc_ns,
        "ttwu_ns": costs.ttwu_ns,
        "ipi_send_ns": costs.ipi_send_ns,
        "ipi_handler_ns": costs.ipi_handler_ns,
        "exp_kthread_rt": int(p.exp_kthread_rt),
        "exp_mutex_rt": int(p.exp_mutex_rt),
        # The expedited machinery by release (boundaries from the commit history,
        # not checked against release tags): the funnel became rcu_node wait
        # queues plus one exp_mutex in v4.6; a workqueue (later a kthread worker)
        # has driven the GP since v4.9; per-leaf CPU selection runs in parallel
        # since v4.17.
        "exp_funnel_mutexes": int(p.release < (4, 6)),
        "exp_driver_task": int(p.release < (4, 9)),
        "exp_par": int(p.release >= (4, 17)),
        # Callback invocation of classic RCU (before Tree RCU, v2.6.29) and the
        # 2004 patches; __do_softirq() bounded only by MAX_SOFTIRQ_RESTART before v3.9.
        "classic_rcu": int(p.release < (2, 6, 29)),
        "softirq_restart_only": int(p.release < (3, 9)),
        "rcumaxbatch": p.rcumaxbatch or 0,
        "rcuplugticks": p.rcuplugticks,
        "krcud_bhlimit": p.krcud_bhlimit,
        # Irq exit ran pending softirqs even with ksoftirqd awake until v4.10
        # ("softirq: Let ksoftirqd do its job").
        "irq_exit_softirq": int(p.release < (4, 10)),
    }


def _ll_topology(spec) -> dict:
    """rcu_node geometry and NOCB groups as arrays."""
    p = spec.params
    nr_cpus = spec.hardware.nr_cpus
    geom = rcu_init_geometry(nr_cpus, p.fanout, p.fanout_leaf, p.fanout_exact)
    offloaded = np.zeros(nr_cpus, dtype=np.int8)
    offloaded[list(p.nocb_cpus)] = 1
    groups = nocb_groups(list(p.nocb_cpus), nr_cpus, p.nocb_gp_stride) if p.nocb_cpus else []
    group_first = np.cumsum([0] + [len(g) for g in groups]).astype(np.int32)
    group_cpus = np.array([c for g in groups for c in g], dtype=np.int32)
    return {
        "geometry": geom,
        "node_parent": geom.node_parent,
        "node_grpmask": geom.node_grpmask,
        "node_grplo": geom.node_grplo,
        "node_grphi": geom.node_grphi,
        "cpu_leaf": geom.cpu_leaf,
        "cpu_grpnum": geom.cpu_grpnum,
        "leaf_first": geom.leaf_first,
        "offloaded": offloaded,
        "group_first": group_first,
        "group_cpus": group_cpus,
    }


def _sync_loops(spec) -> list:
    return [wl for wl in spec.workloads if isinstance(wl, SyncLoop)]


def _kfree_flood(spec):
    return next((wl for wl in spec.workloads if isinstance(wl, KfreeRcuFlood)), None)


def _ll_workloads(spec, kfree_chunk: int = 0) -> tuple[dict, dict]:
    """Tasks (one row each), reader tasks and per-workload parameters."""
    nr_cpus = spec.hardware.nr_cpus
    costs = spec.hardware.costs
    cpu, rt, loops, start, wl_idx = [], [], [], [], []
    think, after, prim = [], [], []
    readers = {"rd_cpu": [], "rd_workload": [], "rd_len_ns": [], "rd_gap_ns": [], "rd_len_exp": [],
               "rd_gap_busy": [], "rd_preemptible": [], "rd_rt": []}
    for wl in spec.workloads:
        if isinstance(wl, Readers):
            k = len(readers["rd_len_ns"])
            cpus = parse_cpulist(wl.cpus, nr_cpus)
            readers["rd_cpu"] += cpus
            readers["rd_workload"] += [k] * len(cpus)
            length = round(wl.length_us * 1000)
            readers["rd_len_ns"].append(length)
            readers["rd_gap_ns"].append(max(0, round(1e9 / wl.rate_per_s) - length))
            readers["rd_len_exp"].append(int(wl.length_dist == "exponential"))
            readers["rd_gap_busy"].append(int(wl.between == "busy"))
            preemptible = spec.params.preempt_rcu if wl.preemptible is None else wl.preemptible
            readers["rd_preemptible"].append(int(preemptible))
            readers["rd_rt"].append(int(wl.rt))
    for i, wl in enumerate(_sync_loops(spec)):
        primitive = wl.primitive
        if spec.params.rcu_normal:
            primitive = "synchronize_rcu"  # rcupdate.rcu_normal wins over everything
        elif spec.params.rcu_expedited:
            primitive = "synchronize_rcu_expedited"
        cpus = parse_cpulist(wl.cpus, nr_cpus)
        n = wl.tasks
        cpu.append(np.asarray(cpus, dtype=np.int32)[np.arange(n) % len(cpus)])
        rt.append(np.full(n, int(wl.rt), dtype=np.int8))
        loops.append(np.full(n, wl.loops, dtype=np.int64))
        start.append(np.full(n, round(wl.start_us * 1000), dtype=np.int64))
        wl_idx.append(np.full(n, i, dtype=np.int32))
        think.append(round(wl.think_us * 1000))
        after.append(costs.kfree_ns if wl.work_after == "kfree" else 0)
        prim.append(PRIMITIVES[primitive])
    def column(parts, dtype):
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

    tasks = {
        "cpu": column(cpu, np.int32),
        "rt": column(rt, np.int8),
        "loops": column(loops, np.int64),
        "start_ns": column(start, np.int64),
        "workload": column(wl_idx, np.int32),
    }
    tasks["expected_requests"] = int(tasks["loops"].sum())
    readers["rd_cpu"] = np.asarray(readers["rd_cpu"], dtype=np.int32)
    readers["rd_workload"] = np.asarray(readers["rd_workload"], dtype=np.int32)
    return tasks, {"think_ns": think, "after_ns": after, "primitive": prim, **readers,
                   "kfree": kfree_lowlevel(spec, kfree_chunk), **_ll_rt_latency(spec)}


def _ll_rt_latency(spec) -> dict:
    """rt_latency_probe and call_rcu_load workloads as the engine's arrays."""
    nr_cpus = spec.hardware.nr_cpus
    out = {k: [] for k in ("probe_cpu", "probe_workload", "probe_period_ns", "probe_run_ns",
                           "probe_samples", "bg_cpu", "bg_workload", "bg_work_ns",
                           "bg_groups_per_op", "bg_burst", "bg_cb_kind", "bg_sec_first",
                           "bg_sec_count", "bg_sec_ns", "bg_sec_cum")}
    for wl in spec.workloads:
        if isinstance(wl, RtLatencyProbe):
            k = len(out["probe_period_ns"])
            cpus = parse_cpulist(wl.cpus, nr_cpus)
            out["probe_cpu"] += cpus
            out["probe_workload"] += [k] * len(cpus)
            out["probe_period_ns"].append(round(wl.period_us * 1000))
            out["probe_run_ns"].append(round(wl.run_us * 1000))
            out["probe_samples"].append(wl.samples)
        elif isinstance(wl, CallRcuLoad):
            k = len(out["bg_work_ns"])
            for c in parse_cpulist(wl.cpus, nr_cpus):
                out["bg_cpu"] += [c] * wl.tasks_per_cpu
                out["bg_workload"] += [k] * wl.tasks_per_cpu
            out["bg_work_ns"].append(round(wl.work_us * 1000))
            out["bg_groups_per_op"].append(wl.call_rcu_per_op / wl.burst)
            out["bg_burst"].append(wl.burst)
            out["bg_cb_kind"].append(CALLBACK_KINDS[wl.callback])
            out["bg_sec_first"].append(len(out["bg_sec_ns"]))
            out["bg_sec_count"].append(len(wl.nonpreempt))
            cum = 0.0
            for row in wl.nonpreempt:
                cum += row.per_op
                out["bg_sec_ns"].append(round(row.us * 1000))
                out["bg_sec_cum"].append(cum)
    return out


def estimate_memory_bytes(spec) -> int:
    """Up-front estimate of a variant's peak memory (engine records + frames)."""
    requests = sum(wl.tasks * wl.loops for wl in _sync_loops(spec))
    tasks = sum(wl.tasks for wl in _sync_loops(spec)) + spec.hardware.nr_cpus
    # Records are copied once into NumPy and once into the DataFrame.
    return requests * BYTES_PER_REQUEST * 3 + tasks * BYTES_PER_TASK + spec.hardware.nr_cpus * BYTES_PER_CPU


def check_memory(scenario: Scenario, limit_bytes: int | None = None) -> None:
    """Refuse a scenario whose estimated memory exceeds what the machine has."""
    if limit_bytes is None:
        limit_bytes = _available_memory_bytes()
    for name, spec in scenario.variants.items():
        need = estimate_memory_bytes(spec)
        if need > limit_bytes:
            raise ScenarioError(
                f"variants.{name}: needs about {need / 2**30:.1f} GiB of memory "
                f"(tasks x loops requests), more than the {limit_bytes / 2**30:.1f} GiB available; "
                "allowed: fewer tasks or loops"
            )


def _available_memory_bytes() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 16 * 2**30


def build_engine(spec, seed: int, fault: int = 0, kfree_chunk: int = 0) -> tuple[_core.Engine, dict]:
    """Build the engine for one variant with its own seeded random stream.

    `fault` breaks the model on purpose, for tests of the safety checker only:
    1 = the expedited IPI handler ignores readers, 2 = the tick ignores readers.
    `kfree_chunk` 1 runs the kfree flood with one event per kfree_rcu() call.
    """
    ll_params = _ll_params(spec)
    ll_params["fault"] = fault
    ll_topology = _ll_topology(spec)
    ll_tasks, ll_workloads = _ll_workloads(spec, kfree_chunk)
    bitgen = np.random.PCG64(np.random.SeedSequence(seed))
    engine = _core.Engine(ll_params, ll_topology, ll_tasks, ll_workloads, bitgen)
    return engine, {"geometry": ll_topology["geometry"], "expected_requests": ll_tasks["expected_requests"]}


def run_variant(name: str, spec, seed: int, progress: Callable[[int], None] | None = None,
                check: bool = False, kfree_chunk: int = 0, trace_limit: int | None = None) -> VariantResult:
    """Simulate one variant to completion (or its time limit).

    With `trace_limit`, the engine records up to that many trace events
    (see rcusim.trace); a run that would record more is refused.
    """
    engine, info = build_engine(spec, seed, kfree_chunk=kfree_chunk)
    if trace_limit:
        engine.trace_enable(trace_limit)
    until_ns = round(spec.run.max_sim_time_s * 1e9)
    t0 = time.perf_counter()
    done_before = 0
    while True:
        reason = engine.run(until_ns, EVENT_CHUNK)
        if check:
            problems = engine.verify()
            if problems:
                raise AssertionError(f"variant {name}: " + "; ".join(problems[:5]))
        if progress is not None:
            done = engine.requests_done
            progress(done - done_before)
            done_before = done
        if trace_limit and engine.trace_overflow:
            from rcusim.trace import trace_too_large

            raise trace_too_large(name, trace_limit)
        if reason != ExitReason.MAX_EVENTS:
            break
    wall = time.perf_counter() - t0
    if reason == ExitReason.STALLED:
        raise RuntimeError(f"variant {name}: the simulation stalled with tasks still waiting")
    req = engine.requests()
    gps = engine.grace_periods()
    counters = engine.counters()
    safety = engine.safety()
    probe_ns = engine.probe_latencies()
    sim_time_ns, completion_ns = engine.now, engine.completion_ns
    flood = _kfree_flood(spec)
    kv = engine.kvfree_results() if flood is not None else None
    trace = None
    if trace_limit:
        trace = {"records": engine.trace_records(), "entities": engine.entity_kinds(),
                 "rcu_name": "rcu_preempt" if spec.params.preempt_rcu else "rcu_sched",
                 "use_softirq": bool(spec.params.use_softirq), "nr_cpus": spec.hardware.nr_cpus}
    del engine  # its C record arrays are no longer needed
    if safety["violations"]:
        raise ModelError(f"variant {name}: the safety checker found {safety['violations']} violation(s); "
                         f"first: {safety['messages'][0]}")
    extra = {"finished": reason == ExitReason.DONE, **time_breakdown(req, gps)}
    if any(isinstance(wl, RtLatencyProbe) for wl in spec.workloads):
        extra["sched_latency_us"] = sched_latency_stats_us(probe_ns)
        completion_ns = max(completion_ns, sim_time_ns)  # the run ends when the probes have their samples
    extra["safety"] = {k: v for k, v in safety.items() if k != "messages"}
    tables = {}
    if kv is not None:
        extra.update(kfree_metrics(kv, flood.kfree_loops))
        extra["kvfree_peak_mb"] = round(kv["peak_bytes"] / 2**20, 3)
        counters.update(kv["counters"])
        tables["kvfree_memory"] = memory_frame(kv)
        if kv["finished"]:
            completion_ns = max(completion_ns, kv["end_time_ns"])
    return VariantResult(
        name=name,
        requests=make_requests_frame(req["task"], req["cpu"], req["primitive"], req["t_start_ns"], req["t_end_ns"]),
        gps=make_gps_frame(gps["gp_seq"], gps["t_start_ns"], gps["t_end_ns"], gps["expedited"]),
        counters=counters,
        events=counters["events"],
        wall_time_s=wall,
        sim_time_ns=sim_time_ns,
        completion_time_ns=completion_ns,
        extra_metrics=extra,
        tables=tables,
        trace=trace,
        table_metrics=KFREE_TABLE_METRICS if kv is not None else (),
    )


def run_membarrier_variant(name: str, spec, seed: int) -> VariantResult:
    """Run a variant of ``membarrier_loop`` workloads in the sys_membarrier() engine.

    Each workload gives one row per value of T in the ``membarrier`` table, and
    ``membarrier_s`` (seconds for the workload's calls, by T) in the metrics.
    """
    from rcusim.membarrier import run_membarrier_loop

    frames, metrics = [], {}
    for i, wl in enumerate(spec.workloads):
        df = run_membarrier_loop(wl, nr_cpus=spec.hardware.nr_cpus, hz=spec.params.hz,
                                 profile=spec.hardware.profile,
                                 platform_costs=spec.hardware.costs.model_dump(), seed=seed)
        label = wl.name or f"membarrier_loop{i}"
        df.insert(0, "workload", label)
        frames.append(df)
        metrics[label] = {"membarrier_s": {str(t): round(s, 6) for t, s in zip(df.threads, df.membarrier_s)},
                          "per_call_ns": {str(t): round(c, 3) for t, c in zip(df.threads, df.per_call_ns)}}
    table = pd.concat(frames, ignore_index=True)
    # The figures the seed reports; the engine's per-CPU list stays out of the Parquet table.
    table = table.drop(columns=["ipi_per_thread", "wall_s"])
    only = next(iter(metrics.values())) if len(metrics) == 1 else None
    return VariantResult(
        name=name,
        requests=make_requests_frame([], [], [], [], []),
        gps=make_gps_frame([], [], [], []),
        events=int(table.events.sum()),
        wall_time_s=float(sum(f.wall_s.sum() for f in frames)),
        sim_time_ns=round(float(table.membarrier_s.sum()) * 1e9),
        extra_metrics=only if only is not None else metrics,
        tables={"membarrier": table},
        table_metrics=tuple(metrics) if only is None else ("membarrier_s",),
        rcu=False,
    )


class ModelError(RuntimeError):
    """The model broke one of RCU's guarantees (a bug in rcusim, never bad input)."""


def time_breakdown(req: dict, gps: dict) -> dict:
    """Where each primitive's latency went, in mean microseconds per request.

    Each request is matched with the GP that satisfied its snapshot (the GP
    whose end value equals it): ``before_gp`` runs from the call to that GP's
    start (funnel, mutex and earlier GPs), ``qs_round`` from its start until
    the last quiescent state reached the root (IPIs or FQS scans), ``gp_end``
    from there to its rcu_seq_end(), and ``wakeup`` from then until the caller
    returned. Also IPIs per expedited GP.
    """
    out = {}
    end_value = (gps["gp_seq"] | 3) + 1  # rcu_seq_endval() of the in-progress value
    for prim, label, expedited in ((0, "normal", False), (1, "expedited", True)):
        sel = req["primitive"] == prim
        mine = gps["expedited"] == expedited
        if not sel.any() or not mine.any():
            continue
        order = np.argsort(end_value[mine], kind="stable")
        ends = end_value[mine][order]
        k = np.searchsorted(ends, req["gp_seq_snap"][sel])
        ok = (k < ends.size) & (ends[np.minimum(k, ends.size - 1)] == req["gp_seq_snap"][sel])
        if not ok.any():
            continue
        rows = order[k[ok]]
        g0, gq, g1 = (gps[c][mine][rows] for c in ("t_start_ns", "t_qs_ns", "t_end_ns"))
        t0, t1 = req["t_start_ns"][sel][ok], req["t_end_ns"][sel][ok]
        out[f"{label}_time_us"] = {
            "before_gp": round(float(np.mean(g0 - t0)) / 1e3, 3),
            "qs_round": round(float(np.mean(gq - g0)) / 1e3, 3),
            "gp_end": round(float(np.mean(g1 - gq)) / 1e3, 3),
            "wakeup": round(float(np.mean(t1 - g1)) / 1e3, 3),
        }
        if expedited:
            out["ipis_per_expedited_gp"] = round(float(np.mean(gps["ipis"][mine])), 3)
    return out


def run(source, overrides: Sequence[str] | Mapping | None = None, seed: int | None = None,
        variants: Sequence[str] | None = None, progress: bool | None = None, check: bool = False) -> Result:
    """Run a scenario and return its ``Result``.

    Parameters
    ----------
    source : str, Path or dict
        A scenario YAML file or the equivalent mapping.
    overrides : list of "dotted.key=value" strings or a mapping, optional
        Applied to the scenario before its variants.
    seed : int, optional
        Overrides the scenario's seed.  Each variant draws from a stream seeded
        by this seed alone, so variants are compared under the same randomness.
    variants : list of str, optional
        Run only these variants.
    progress : bool, optional
        Show a progress bar on stderr (default: when stderr is a terminal).
    check : bool
        Verify the engine's invariants after every chunk of events.
    """
    scenario = load_scenario(source, overrides=overrides, seed=seed)
    return run_scenario(scenario, variants=variants, progress=progress, check=check)


def run_scenario(scenario: Scenario, variants: Sequence[str] | None = None, progress: bool | None = None,
                 check: bool = False, trace_limit: int | None = None) -> Result:
    names = list(scenario.variants) if variants is None else list(variants)
    for n in names:
        if n not in scenario.variants:
            raise ScenarioError(f"--variant: '{n}' is not a variant of the scenario",
                                allowed=", ".join(scenario.variants))
    check_memory(scenario)
    if progress is None:
        progress = sys.stderr.isatty()
    results = {}
    for name in names:
        spec = scenario.variants[name]
        if any(isinstance(wl, MembarrierLoop) for wl in spec.workloads):
            results[name] = run_membarrier_variant(name, spec, scenario.seed)
            continue
        total = sum(wl.tasks * wl.loops for wl in _sync_loops(spec))
        if progress:
            from tqdm import tqdm

            with tqdm(total=total, desc=name, unit="req", file=sys.stderr, delay=1.0, leave=False) as bar:
                results[name] = run_variant(name, spec, scenario.seed, bar.update, check, trace_limit=trace_limit)
        else:
            results[name] = run_variant(name, spec, scenario.seed, None, check, trace_limit=trace_limit)
    return Result(
        scenario_name=scenario.name,
        seed=scenario.seed,
        rcusim_version=installed_version(),
        variants=results,
        provenance={"scenario": scenario.asdict()},
    )
