"""Drive the engine: build it for one variant, run it, read its records back.

The engine's input is built by rcusim.engine.engine_input; rcusim.results.run
turns what is read back here into a ``Result``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from rcusim import _core
from rcusim.engine.engine_input import engine_input
from rcusim.engine.faults import fault_code
from rcusim.errors import ScenarioError
from rcusim.input.membarrier import MembarrierLoop
from rcusim.input.workloads import KfreeRcuFlood, SyncLoop
from rcusim.input.scenario import Scenario
from rcusim.progress import Stages

#: Events per engine call between progress updates.
EVENT_CHUNK = 2_000_000

#: Rough bytes per kept request row, per task and per CPU, for the up-front memory check.
#: The rows stream out of the engine into a file (rcusim.results.rows), a chunk at a time;
#: the summary and the figures then hold one variant's latencies at once (8 bytes a row).
BYTES_PER_ROW = 8
BYTES_PER_TASK = 160
BYTES_PER_CPU = 600


class ExitReason:
    """Why ``Engine.run`` returned (values from ``rcusim._core``)."""

    DONE = _core.EXIT_DONE
    MAX_EVENTS = _core.EXIT_MAX_EVENTS
    TIME_LIMIT = _core.EXIT_TIME_LIMIT
    STALLED = _core.EXIT_STALLED


def sync_loops(spec) -> list:
    return [wl for wl in spec.workloads if isinstance(wl, SyncLoop)]


def kfree_flood(spec):
    return next((wl for wl in spec.workloads if isinstance(wl, KfreeRcuFlood)), None)


def kept_rows(spec) -> int:
    """Request rows a variant is expected to keep under its ``run.records``."""
    requests = sum(wl.tasks * wl.loops for wl in sync_loops(spec))
    return {"all": requests, "sample": round(requests * spec.run.sample_fraction), "none": 0}[spec.run.records]


def estimate_memory_bytes(spec) -> int:
    """Up-front estimate of a variant's peak memory (request rows + engine state)."""
    tasks = sum(wl.tasks for wl in sync_loops(spec)) + spec.hardware.nr_cpus
    return kept_rows(spec) * BYTES_PER_ROW + tasks * BYTES_PER_TASK + spec.hardware.nr_cpus * BYTES_PER_CPU


def check_memory(scenario: Scenario, limit_bytes: int | None = None) -> None:
    """Refuse a scenario whose estimated memory exceeds what the machine has."""
    if limit_bytes is None:
        limit_bytes = _available_memory_bytes()
    for name, spec in scenario.variants.items():
        need = estimate_memory_bytes(spec)
        if need > limit_bytes:
            raise ScenarioError(
                f"variants.{name}: needs about {need / 2**30:.1f} GiB of memory "
                f"(tasks x loops request rows), more than the {limit_bytes / 2**30:.1f} GiB available; "
                "allowed: fewer tasks or loops, or run.records: sample or none"
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


RANDOM_DRAWS = ("noise, readers, sleeps, call_rcu_load, membarrier's tick phases, random kfree_rcu() forms "
                "or lognormal idle exits")
"""What :func:`draws_at_random` looks for, in words."""


def draws_at_random(spec) -> bool:
    """Whether a variant's run may draw from its random stream, the one use of the seed:
    when it does not, every seed gives the same run. Each test names where the draws are."""
    if any(isinstance(wl, MembarrierLoop) for wl in spec.workloads):
        return True  # engine/membarrier.py: the CPUs' tick phases
    inp, _ = engine_input(spec)
    return bool(any(inp.sync_loop.sleep_jiffies_max)                     # sync_loop.pxi: a sleep of 1 to max jiffies
                or len(inp.readers.cpu)                                 # readers.pxi: exponential gaps and sections
                or (len(inp.kfree_scale.cpu) and inp.kvfree_rcu.form == 0)   # kvfree_rcu.pxi: each call's kfree_rcu() form
                or inp.call_rcu_load.bg_cpu                            # call_rcu_load.pxi: its work and calls
                or inp.noise.irq_gap_ns.any() or inp.noise.kthread_gap_ns.any()  # noise.pxi: arrivals, lengths
                or inp.noise.timer_delay.any()                      # noise.pxi: each timer interrupt's delay
                or inp.noise.host_gap_ns.any()                      # noise.pxi: host stalls' arrivals, lengths
                or not (inp.kvm.halt_poll or len(inp.cpuidle.idle_exit_us)))  # cpuidle.pxi: drawn idle exits


def build_engine(spec, seed: int, fault: str | None = None, kfree_chunk: int = 0) -> tuple[_core.Engine, dict]:
    """Build the engine for one variant with its own seeded random stream.

    `fault` names a deliberate model fault of rcusim.engine.faults.FAULTS, for
    tests of the safety checker only.  `kfree_chunk` 1 runs the kfree flood with
    one event per kfree_rcu() call.
    """
    inp, geometry = engine_input(spec, fault_code(fault) if fault else 0, kfree_chunk)
    bitgen = np.random.PCG64(np.random.SeedSequence(seed))
    engine = _core.Engine(inp, bitgen)
    return engine, {"geometry": geometry, "expected_requests": inp.records.expected_requests}


@dataclass
class EngineRun:
    """What one variant's engine run left behind: its exit and the records read back."""

    reason: int
    """Why the last ``Engine.run`` returned (an ``ExitReason``)."""
    build_time_s: float
    """Host wall-clock time building the engine took."""
    wall_time_s: float
    cpu_time_s: float
    """CPU time of the thread that ran the engine's loop: its wall time less what the host
    gave to other work."""
    mean_pending: float
    """Mean number of events queued when the engine took one (Engine.mean_pending)."""
    requests: dict
    gps: dict
    digest: dict
    """Every request's latency digest by primitive (Engine.latency_digest())."""
    callback_digest: dict | None
    """call_rcu() to invocation of the call_rcu_load callbacks (Engine.callback_digest())."""
    counters: dict
    safety: dict
    probe_latencies_ns: np.ndarray
    sim_time_ns: int
    completion_ns: int
    kvfree: dict | None
    """The kvfree_rcu() record, for a variant with a kfree flood."""
    trace: dict | None
    sched: dict
    """Per-CPU busy time and time at each run-queue length (Engine.sched_stats())."""


def trace_too_large(variant: str, limit: int) -> ScenarioError:
    """The error for a run whose trace buffer filled while running."""
    return ScenarioError(f"variant {variant} produced more than {limit:,} trace records",
                         key="--trace", allowed="a smaller run (fewer CPUs, tasks, loops or readers)")


def run_engine(name: str, spec, seed: int, progress: Stages | None = None,
               check: bool = False, kfree_chunk: int = 0, trace_limit: int | None = None,
               row_sink=None, row_chunk: int = 0) -> EngineRun:
    """Simulate one variant to completion (or its time limit) and read its records back.

    With `row_sink`, the engine hands its request rows to ``row_sink(columns, n)`` each
    time `row_chunk` of them are made (``Engine.stream_rows()``); ``requests`` then holds
    those made after the last hand-over.
    `progress` is told the stages (build, engine, results) and the engine's progress:
    requests finished, or simulated seconds for a variant without requests.
    With `trace_limit`, the engine records up to that many trace events
    (see rcusim.results.trace); a run that would record more is refused.
    """
    progress = progress or Stages(enabled=False)
    progress.stage(f"{name}: build")
    t0 = time.perf_counter()
    engine, info = build_engine(spec, seed, kfree_chunk=kfree_chunk)
    build = time.perf_counter() - t0
    if trace_limit:
        engine.trace_enable(trace_limit)
    if row_sink is not None:
        engine.stream_rows(row_sink, row_chunk)
    until_ns = round((spec.run.duration_s or spec.run.max_sim_time_s) * 1e9)
    requests = info["expected_requests"]
    if requests:
        progress.stage(f"{name}: engine", requests, "req")
    else:
        progress.stage(f"{name}: engine", until_ns / 1e9, "s")
    t0 = time.perf_counter()
    cpu0 = time.thread_time()
    while True:
        reason = engine.run(until_ns, EVENT_CHUNK)
        if check:
            problems = engine.verify()
            if problems:
                raise AssertionError(f"variant {name}: " + "; ".join(problems[:5]))
        progress.advance(engine.requests_done if requests else engine.now / 1e9)
        if trace_limit and engine.trace_overflow:
            raise trace_too_large(name, trace_limit)
        if reason != ExitReason.MAX_EVENTS:
            break
    wall = time.perf_counter() - t0
    cpu = time.thread_time() - cpu0
    if reason == ExitReason.STALLED:
        raise RuntimeError(f"variant {name}: the simulation stalled with tasks still waiting")
    progress.stage(f"{name}: results")
    trace = None
    if trace_limit:
        trace = {"records": engine.trace_records(), "entities": engine.entity_kinds(), "nodes": engine.rcu_nodes(),
                 "rcu_name": "rcu_preempt" if spec.params.preempt_rcu else "rcu_sched",
                 "use_softirq": bool(spec.params.use_softirq), "nr_cpus": spec.hardware.nr_cpus,
                 "signed_gp_seq": bool(spec.params.switches.trace_signed_gp_seq)}
    out = EngineRun(
        reason=reason, build_time_s=build, wall_time_s=wall, cpu_time_s=cpu, mean_pending=engine.mean_pending, requests=engine.requests(), gps=engine.grace_periods(),
        digest=engine.latency_digest(), callback_digest=engine.callback_digest(),
        counters=engine.counters(), safety=engine.safety(), probe_latencies_ns=engine.probe_latencies(),
        sim_time_ns=engine.now, completion_ns=engine.completion_ns,
        kvfree=engine.kvfree_results() if kfree_flood(spec) is not None else None, trace=trace,
        sched=engine.sched_stats())
    del engine  # its C record arrays are no longer needed
    if out.safety["violations"]:
        raise ModelError(f"variant {name}: the safety checker found {out.safety['violations']} violation(s); "
                         f"first: {out.safety['messages'][0]}")
    return out


class ModelError(RuntimeError):
    """The model broke one of RCU's guarantees (a bug in rcusim, never bad input)."""
