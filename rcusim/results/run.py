"""Run a scenario: each variant in its engine, its records collected into a ``Result``."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from rcusim.engine.engine_input import rcu_geometry
from rcusim.engine.membarrier import run_membarrier_loop
from rcusim.engine.rcuscale import kfree_metrics, memory_frame
from rcusim.engine.simulate import ExitReason, check_memory, kfree_flood, run_engine
from rcusim.input.membarrier import MembarrierLoop
from rcusim.input.workloads import RtLatencyProbe
from rcusim.input.scenario import Scenario, load_scenario
from rcusim.progress import Stages
from rcusim.results.frames import make_gps_frame, make_requests_frame
from rcusim.results.metrics import callback_latency_stats_us, sched_latency_stats_us, sched_stats
from rcusim.results.provenance import installed_version
from rcusim.results.result import Result, VariantResult, pool_runs
from rcusim.results.rows import ROW_CHUNK, RequestRows, RowSpill, check_spill_room

#: rcuscale's figures, shown in the side-by-side table of kfree_rcu() floods.
KFREE_TABLE_METRICS = ("total_time_ns", "loops", "batches", "memory_footprint_mb", "kvfree_peak_mb")


def resolved_config(spec) -> dict:
    """One variant's resolved configuration, JSON-ready: :meth:`VariantSpec.resolved` and
    the rcu_node tree its kernel builds (``rcu_node_tree``; None for classic RCU, which has none)."""
    tree = rcu_geometry(spec).shape() if spec.params.switches.tree_rcu else None
    return {**spec.resolved(), "rcu_node_tree": tree}


def run_variant(name: str, spec, seed: int, progress: Stages | None = None,
                check: bool = False, kfree_chunk: int = 0, trace_limit: int | None = None,
                row_chunk: int = ROW_CHUNK) -> VariantResult:
    """Simulate one variant to completion (or its time limit) and collect its results.

    With `trace_limit`, the engine records up to that many trace events
    (see rcusim.results.trace); a run that would record more is refused. The request rows
    stream out of the engine `row_chunk` at a time into a file (rcusim.results.rows) when
    there are more than that.
    """
    spill = RowSpill()
    run = run_engine(name, spec, seed, progress, check, kfree_chunk, trace_limit, spill, row_chunk)
    # The engine's own time: writing rows out is output.
    engine_s = run.wall_time_s - spill.write_s
    engine_cpu_s = run.cpu_time_s - spill.write_cpu_s
    gps, counters, kv = run.gps, run.counters, run.kvfree
    completion_ns = run.completion_ns
    timed = spec.run.duration_s is not None  # the run ends when it has lasted run.duration_s
    extra = {"finished": run.reason == (ExitReason.TIME_LIMIT if timed else ExitReason.DONE),
             **time_breakdown(run.digest, gps)}
    if timed:
        completion_ns = run.sim_time_ns
    tables = {}
    if any(isinstance(wl, RtLatencyProbe) for wl in spec.workloads):
        extra["sched_latency_us"] = sched_latency_stats_us(run.probe_latencies_ns)
        tables["sched_latency"] = pd.DataFrame({"latency_ns": np.asarray(run.probe_latencies_ns, dtype=np.int64)})
        completion_ns = max(completion_ns, run.sim_time_ns)  # the run ends when the probes have their samples
    if run.callback_digest is not None:
        extra["call_rcu_latency_us"] = callback_latency_stats_us(run.callback_digest)
    if "vmap_purges" in counters:  # lib/test_vmalloc.c's vmalloc()/vfree() (work_after: vfree)
        extra["vmap"] = {"lock_wait_ms": round(counters["vmap_lock_wait_ns"] / 1e6, 3),
                         "purges": int(counters["vmap_purges"])}
    extra["safety"] = {k: v for k, v in run.safety.items() if k != "messages"}
    extra["sched"] = sched_stats(run.sched["busy_ns"], run.sched["rqlen_ns"], run.sim_time_ns, counters)
    if kv is not None:
        extra.update(kfree_metrics(kv, kfree_flood(spec).kfree_loops, spec.params.switches))
        extra["kvfree_peak_mb"] = round(kv["peak_bytes"] / 2**20, 3)
        counters.update(kv["counters"])
        tables["kvfree_memory"] = memory_frame(kv)
        if kv["finished"]:
            completion_ns = max(completion_ns, kv["end_time_ns"])
    return VariantResult(
        name=name,
        rows=spill.rows(run.requests),
        records=spec.run.records,
        latency_digest=run.digest,
        gps=make_gps_frame(gps["gp_seq"], gps["t_start_ns"], gps["t_end_ns"], gps["expedited"], gps["fqs_scans"],
                           gps["last_qs"]),
        counters=counters,
        events=counters["events"],
        wall_time_s=engine_s,
        cpu_time_s=engine_cpu_s,
        build_time_s=run.build_time_s,
        mean_pending=run.mean_pending,
        sim_time_ns=run.sim_time_ns,
        completion_time_ns=completion_ns,
        extra_metrics=extra,
        tables=tables,
        trace=run.trace,
        table_metrics=(KFREE_TABLE_METRICS if kv is not None else ()) + (("vmap",) if "vmap" in extra else ()),
    )




def run_membarrier_variant(name: str, spec, seed: int) -> VariantResult:
    """Run a variant of ``membarrier_loop`` workloads in the sys_membarrier() engine.

    Each workload gives one row per value of T in the ``membarrier`` table, and
    ``membarrier_s`` (seconds for the workload's calls, by T) in the metrics.
    """
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
        rows=RequestRows(make_requests_frame([], [], [], [], [])),
        gps=make_gps_frame([], [], [], []),
        events=int(table.events.sum()),
        wall_time_s=float(sum(f.wall_s.sum() for f in frames)),
        sim_time_ns=round(float(table.membarrier_s.sum()) * 1e9),
        extra_metrics=only if only is not None else metrics,
        tables={"membarrier": table},
        table_metrics=tuple(metrics) if only is None else ("membarrier_s",),
        rcu=False,
    )


#: The parts of a call's latency, in order (time_breakdown()).
BREAKDOWN_PARTS = ("before_gp", "qs_round", "gp_end", "callback", "wakeup", "runqueue")


def time_breakdown(digest: dict, gps: dict) -> dict:
    """Where each primitive's latency went, in mean microseconds per request.

    The engine matches each request with the GP that satisfied its snapshot (the
    GP whose end value equals it) as the request returns, and sums (see
    ``Engine.latency_digest()``): ``before_gp`` runs from the call to that GP's
    start (funnel, mutex and earlier GPs), ``qs_round`` from its start until the
    last quiescent state reached the root (IPIs or FQS scans), ``gp_end`` from
    there to its rcu_seq_end(), ``callback`` from then until the caller's
    wake-up is asked (callback invocation by rcuop or softirq, or the waker's
    turn to run), ``wakeup`` until that wake-up queues the caller on a run queue
    (remote wake-up, IPI), and ``runqueue`` until the caller runs again (idle
    exit, waiting behind other entities). Also IPIs per expedited GP.
    """
    out = {}
    for prim, label, expedited in ((0, "normal", False), (1, "expedited", True)):
        matched = digest[prim]["breakdown"]["matched"] if prim in digest else 0
        if matched == 0:
            continue
        # Integer sums divided once: the exact mean, correctly rounded.
        sums = digest[prim]["breakdown"]["sums_ns"]
        out[f"{label}_time_us"] = {key: round(total / matched / 1e3, 3)
                                   for key, total in zip(BREAKDOWN_PARTS, sums)}
        if expedited:
            out["ipis_per_expedited_gp"] = round(float(np.mean(gps["ipis"][gps["expedited"]])), 3)
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
        Show on stderr each variant's stage (build, engine, results) and the engine's
        progress (default: when stderr is a terminal).
    check : bool
        Verify the engine's invariants after every chunk of events.
    """
    scenario = load_scenario(source, overrides=overrides, seed=seed, variants=variants)
    return run_scenario(scenario, progress=progress, check=check)


def run_scenario(scenario: Scenario, variants: Sequence[str] | None = None, progress: bool | None = None,
                 check: bool = False, trace_limit: int | None = None, runs: int = 1,
                 row_chunk: int = ROW_CHUNK) -> Result:
    """Simulate the scenario's variants; with `runs` > 1, each that many times with the seeds
    seed, seed + 1, ..., pooled as a real kernel's boots (:func:`pool_runs`; the trace is
    the first run's). A variant's rows stream out `row_chunk` at a time (:func:`run_variant`)."""
    names = scenario.selected(variants)
    check_memory(scenario)
    check_spill_room(scenario)
    results = {}
    with Stages(progress) as stages:
        for name in names:
            spec = scenario.variants[name]
            if any(isinstance(wl, MembarrierLoop) for wl in spec.workloads):
                stages.stage(f"{name}: engine")
                results[name] = pool_runs([run_membarrier_variant(name, spec, scenario.seed + k)
                                           for k in range(runs)])
            else:
                results[name] = pool_runs([run_variant(name, spec, scenario.seed + k, stages, check,
                                                       trace_limit=trace_limit if k == 0 else None,
                                                       row_chunk=row_chunk)
                                           for k in range(runs)])
    provenance = {"scenario": scenario.asdict(),
                  "variants": {name: resolved_config(scenario.variants[name]) for name in names}}
    if runs > 1:
        provenance["runs"] = runs
    return Result(
        scenario_name=scenario.name,
        seed=scenario.seed,
        rcusim_version=installed_version(),
        variants=results,
        provenance=provenance,
    )
