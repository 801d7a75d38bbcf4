"""Run a scenario: convert each variant to low-level values, drive the engine, collect results.

The engine's input is built by rcusim.engine_input; here the engine runs and its
records become a ``Result``.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from rcusim import _core
from rcusim.config import KfreeRcuFlood, MembarrierLoop, RtLatencyProbe, SyncLoop
from rcusim.errors import ScenarioError
from rcusim.engine_input import engine_input
from rcusim.rcuscale import kfree_metrics, memory_frame
from rcusim.result import (Result, VariantResult, installed_version, make_gps_frame, make_requests_frame,
                           sched_latency_stats_us)
from rcusim.scenario import Scenario, load_scenario

#: Events per engine call between progress updates.
EVENT_CHUNK = 2_000_000

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


def _sync_loops(spec) -> list:
    return [wl for wl in spec.workloads if isinstance(wl, SyncLoop)]


def _kfree_flood(spec):
    return next((wl for wl in spec.workloads if isinstance(wl, KfreeRcuFlood)), None)


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
    inp, geometry = engine_input(spec, fault, kfree_chunk)
    bitgen = np.random.PCG64(np.random.SeedSequence(seed))
    engine = _core.Engine(inp, bitgen)
    return engine, {"geometry": geometry, "expected_requests": inp.tasks.expected_requests}


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
