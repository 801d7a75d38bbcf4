"""``python -m rcusim bench``: how fast the engine runs the bundled scenarios.

For every bundled scenario (``scenarios/*.yaml``), at full scale or, with
``--quick``, with every workload cut to a tenth of its length (QUICK_KEYS), each in
a fresh process as ``python -m rcusim run`` runs it: the engine's events and events
per second; the ratio of that speed to the bare event queue's at the same mean
number of pending events, measured in the same process (``heap``: 1.0 would be an
engine whose model costs nothing beside its queue); the whole process's wall time
split into start-up (interpreter and imports), build (the engines' input and
state), engine, results (records read back, metrics) and write (the results
directory with its figures); and the process's peak memory (resident set).

With ``--large``, also seed 000's job at LARGE_TASKS tasks (120 million calls).

With ``--scaling``, how the engine's CPU time grows with the machine and the workload
(SCALING): the sync_rcu_10k scenario's default variant over CPU counts (16 tasks per
CPU) and task counts (64 CPUs), with the exponent of a power law fitted to each (1.0:
linear). The calls grow as the size, and so may the events each call takes (more
balancing and idle entries on a bigger machine): the exponent "at events held per call"
is the one the engine's cost per event alone gives, 1 + the exponent of its ns per event.
Then a pure engine micro-benchmark and the speed-up of the Cython engine over the
SimPy reference model (rcusim/engine/reference/) on the same small configuration,
which both must complete identically. Last, the figures measured at full size beside
the performance goals of docs/performance.md (GOALS).
"""

from __future__ import annotations

import multiprocessing
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from rcusim import _core
from rcusim.engine.reference.compare import run_both, run_engine, same_requests
from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario
from rcusim.plots import save_result_figures
from rcusim.results.run import run_scenario

__all__ = ["bench_scenario", "scaling", "fitted_exponent", "engine_microbench", "reference_speedup", "add_parser",
           "cmd_bench"]

SCENARIO_DIR = Path(__file__).resolve().parents[2] / "scenarios"

QUICK_FRACTION = 10
"""``--quick`` divides every workload's length by this."""

#: Per workload kind, the key that sets its length and the least value ``--quick`` keeps.
QUICK_KEYS = {"sync_loop": ("loops", 2), "kfree_rcu_flood": ("kfree_loops", 4),
              "membarrier_loop": ("calls", 1), "rt_latency_probe": ("samples", 1)}

#: A configuration both the engine and the reference model cover (no NOCB,
#: no expedited GPs, no readers): 16 CPUs, 200 tasks x 50 synchronize_rcu().
REFERENCE_CONFIG = {
    "name": "reference_16cpu",
    "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 16},
    "kernel": {"release": "6.6", "HZ": 1000},
    "workloads": [{"kind": "sync_loop", "tasks": 200, "loops": 50, "think_us": 100, "work_after": "kfree"}],
}


def _quick_overrides(scenario) -> dict:
    """Overrides that cut each workload's length (QUICK_KEYS) by QUICK_FRACTION.

    A variant that replaces the workload list gets its own ``variants.NAME.workloads.N.KEY``.
    """
    raw = scenario.asdict()
    lists = {"": raw.get("workloads", [])}
    lists.update({f"variants.{name}.": v["workloads"] for name, v in raw.get("variants", {}).items()
                  if "workloads" in v})
    out = {}
    for prefix, workloads in lists.items():
        for i, wl in enumerate(workloads):
            key, least = QUICK_KEYS.get(wl.get("kind"), (None, 0))
            if key in wl:
                out[f"{prefix}workloads.{i}.{key}"] = max(least, int(wl[key]) // QUICK_FRACTION)
    return out


#: Events the bare event queue processes to measure its speed at one pending count.
HEAP_OPS = 2_000_000


def bench_scenario(path: str, quick: bool, overrides: dict | None = None) -> dict:
    """Run one scenario (with `overrides`) and write its results as the command line does
    (in the calling process), and measure it."""
    t0 = time.perf_counter()
    scenario = load_scenario(path, overrides=overrides)
    if quick:
        scenario = load_scenario(path, overrides={**_quick_overrides(scenario), **(overrides or {})})
    load_s = time.perf_counter() - t0
    result = run_scenario(scenario, progress=False)
    result.table()  # the metrics, as the command line prints them before writing
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rcusim-bench-") as tmp:
        result.write(Path(tmp) / "out", figures=save_result_figures)
    write_s = time.perf_counter() - t1
    # ru_maxrss is in KiB on Linux.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    variants = result.variants.values()
    events = sum(v.events for v in variants)
    engine_s = sum(v.wall_time_s for v in variants)
    build_s = load_s + sum(v.build_time_s for v in variants)
    # The bare queue's time for the same events at each variant's mean pending count.
    heap_s = sum(v.events / _core.eventq_hold_rate(max(1, round(v.mean_pending)), HEAP_OPS)
                 for v in variants if v.rcu and v.events)
    return {"scenario": scenario.name, "variants": len(result.variants),
            "requests": sum(v.request_count for v in variants if v.rcu), "events": events,
            "events_per_s": events / engine_s if engine_s > 0 else None,
            "heap_ratio": heap_s / engine_s if heap_s > 0 else None,
            "build_s": build_s, "engine_s": engine_s, "results_s": t1 - t0 - build_s - engine_s,
            "write_s": write_s, "peak_bytes": peak}


def _timed_in_fresh_process(func, *args) -> dict:
    """func(*args) in a fresh process, with ``process_s``, the process's whole wall time,
    and ``startup_s``, what of it func did not measure (interpreter start and imports)."""
    t0 = time.perf_counter()
    out = _in_fresh_process(func, *args)
    out["process_s"] = time.perf_counter() - t0
    out["startup_s"] = out["process_s"] - out["build_s"] - out["engine_s"] - out["results_s"] - out["write_s"]
    return out


#: The scaling runs: sync_rcu_10k's default variant, by CPU count (16 tasks per CPU,
#: 50 loops each) and by task count (64 CPUs, 20 loops each); --quick runs the first few.
SCALING_SCENARIO = SCENARIO_DIR / "sync_rcu_10k.yaml"
SCALING = {
    "CPUs": {"sizes": (64, 256, 1024, 4096, 8192),
             "overrides": lambda n: {"hardware.nr_cpus": n, "workloads.0.tasks": 16 * n, "workloads.0.loops": 50}},
    "tasks": {"sizes": (1_250, 5_000, 20_000, 80_000),
              "overrides": lambda n: {"hardware.nr_cpus": 64, "workloads.0.tasks": n, "workloads.0.loops": 20}},
}
QUICK_SCALING_POINTS = 3

#: ``--large``: the scaling scenario (seed 000's job, both variants, every row kept) at
#: 60,000 tasks of its 1000 loops, 120 million calls.
LARGE_TASKS = 60_000
LARGE_OVERRIDES = {"workloads.0.tasks": LARGE_TASKS}


def scaling(what: str, sizes) -> list[dict]:
    """The engine's CPU time, wall time and events in the SCALING runs of `what` at each
    size (the least CPU time of three below a second of it), keeping no request rows."""
    rows = []
    for n in sizes:
        overrides = dict(SCALING[what]["overrides"](n), **{"run.records": "none"})
        scenario = load_scenario(SCALING_SCENARIO, overrides=overrides)
        best = None
        for _ in range(3):
            v = run_scenario(scenario, variants=["default"], progress=False).variants["default"]
            if best is None or v.cpu_time_s < best.cpu_time_s:
                best = v
            if v.cpu_time_s > 1.0:
                break
        rows.append({"size": n, "events": best.events, "cpu_s": best.cpu_time_s, "engine_s": best.wall_time_s})
    return rows


def fitted_exponent(sizes, values) -> float:
    """Exponent k of the power law ``value = c * size**k`` fitted by least squares on logs."""
    return float(np.polyfit(np.log(sizes), np.log(values), 1)[0])


def scaling_exponents(rows: list[dict]) -> dict:
    """The fitted exponents of `scaling()`'s rows: CPU time, events, and CPU time at events
    held per call (1 + the exponent of the CPU time per event)."""
    sizes = [row["size"] for row in rows]
    ns_per_event = [row["cpu_s"] / row["events"] for row in rows]
    return {"cpu": fitted_exponent(sizes, [row["cpu_s"] for row in rows]),
            "events": fitted_exponent(sizes, [row["events"] for row in rows]),
            "per_call_held": 1.0 + fitted_exponent(sizes, ns_per_event)}


#: The performance goals (docs/performance.md): the figures bench measures at full size,
#: each with its bound and whether it is an upper (max) or lower (min) bound.
GOALS = {
    "main": ("README main job (sync_rcu_10k), whole process, s", "max", 8.0),
    "main_peak": ("its peak memory, MiB", "max", 600e6 / 2**20),
    "large": (f"{LARGE_TASKS:,} tasks x 1000 loops, both variants, whole process, s", "max", 60.0),
    "large_peak": ("its peak memory, MiB", "max", 3e9 / 2**20),
    "heap": ("engine events/s / bare heap events/s, sync_rcu_10k", "min", 0.5),
    "CPUs": ("exponent in CPUs (64 -> 8,192) of CPU time at events held per call", "max", 1.10),
    "tasks": ("exponent in tasks (1,250 -> 80,000) of CPU time at events held per call", "max", 1.05),
}


def print_goals(measured: dict) -> None:
    """The measured figures (by GOALS key) beside their goals."""
    if not measured:
        return
    print(f"\n{'goal':<72} {'measured':>9} {'bound':>10}  met")
    for key, (what, kind, bound) in GOALS.items():
        if key in measured:
            value = measured[key]
            met = value <= bound if kind == "max" else value >= bound
            sign = "<=" if kind == "max" else ">="
            print(f"{what:<72} {value:>9.2f} {sign} {bound:>7.2f}  {'yes' if met else 'no'}")


def _in_fresh_process(func, *args):
    """Run func(*args) in a new process, so that its peak memory is its own."""
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(func, *args).result()


def engine_microbench(repeat: int = 3) -> dict:
    """Events per second of the engine alone on the 16-CPU reference configuration (best of `repeat`)."""
    spec = load_scenario(REFERENCE_CONFIG).variants["default"]
    best = None
    for _ in range(repeat):
        run = run_engine(spec, 0)
        events = run["counters"]["events"]
        if best is None or run["wall_s"] < best["engine_s"]:
            best = {"events": events, "engine_s": run["wall_s"], "events_per_s": events / run["wall_s"]}
    return best


def reference_speedup() -> dict:
    """Wall time of the engine and of the SimPy reference on REFERENCE_CONFIG, and whether they agree."""
    spec = load_scenario(REFERENCE_CONFIG).variants["default"]
    core, ref = run_both(spec, 0)
    return {"requests": len(core["requests"]["task"]), "engine_s": core["wall_s"], "reference_s": ref["wall_s"],
            "speedup": ref["wall_s"] / core["wall_s"], "identical": same_requests(core, ref)}


def _bundled_scenarios() -> list[Path]:
    """The bundled scenarios, by file name."""
    return sorted(SCENARIO_DIR.glob("*.yaml"))


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="benchmark the engine on the bundled scenarios")
    p.add_argument("--quick", action="store_true",
                   help=f"scaled-down scenarios (each workload's loops, calls or samples / {QUICK_FRACTION})")
    p.add_argument("--scenario", action="append", metavar="FILE",
                   help="benchmark this scenario instead of the bundled set (repeatable)")
    p.add_argument("--large", action="store_true",
                   help=f"also run {SCALING_SCENARIO.stem} at {LARGE_TASKS:,} tasks (120 million calls with its "
                        "1000 loops; minutes)")
    p.add_argument("--scaling", action="store_true",
                   help=f"also fit how the engine's CPU time grows with CPUs and tasks ({SCALING_SCENARIO.stem}'s "
                        "default variant at sizes up to 8,192 CPUs and 80,000 tasks; minutes)")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args) -> int:
    paths = [Path(p) for p in args.scenario] if args.scenario else _bundled_scenarios()
    for p in paths:
        if not p.is_file():
            raise ScenarioError(f"no such file: {str(p)!r}", key="--scenario", allowed="a scenario YAML file")
    print(f"{'scenario':<24} {'requests':>11} {'events':>11} {'events/s':>11} {'heap':>6} "
          f"{'process s':>9} {'start-up':>8} {'build':>6} {'engine':>7} {'results':>7} {'write':>6} {'peak MiB':>8}")
    runs = [(str(path), None, None) for path in paths]
    if args.large:
        runs.append((str(SCALING_SCENARIO), LARGE_OVERRIDES, f"{SCALING_SCENARIO.stem} {LARGE_TASKS // 1000}k"))
    measured = {}  # figures at full size, by GOALS key
    for path, overrides, label in runs:
        r = _timed_in_fresh_process(bench_scenario, path, args.quick, overrides)
        if not args.quick and Path(path).resolve() == SCALING_SCENARIO:
            main_job = overrides is None
            measured["main" if main_job else "large"] = r["process_s"]
            measured["main_peak" if main_job else "large_peak"] = r["peak_bytes"] / 2**20
            if main_job and r["heap_ratio"] is not None:
                measured["heap"] = r["heap_ratio"]
        # Three significant figures: a small run on a loaded machine can fall below 0.01.
        heap = f"{r['heap_ratio']:.3g}" if r["heap_ratio"] is not None else "-"
        print(f"{label or r['scenario']:<24} {r['requests']:>11,} {r['events']:>11,} {r['events_per_s'] or 0:>11,.0f} "
              f"{heap:>6} {r['process_s']:>9.2f} {r['startup_s']:>8.2f} {r['build_s']:>6.2f} "
              f"{r['engine_s']:>7.2f} {r['results_s']:>7.2f} {r['write_s']:>6.2f} {r['peak_bytes'] / 2**20:>8.0f}")
    for what, spec in (SCALING.items() if args.scaling else ()):
        sizes = spec["sizes"][:QUICK_SCALING_POINTS] if args.quick else spec["sizes"]
        rows = scaling(what, sizes)
        print(f"\nscaling in {what} ({SCALING_SCENARIO.stem}, default variant):")
        print(f"{what:>8} {'events':>12} {'CPU s':>8} {'wall s':>8} {'ns/event':>9}")
        for row in rows:
            print(f"{row['size']:>8,} {row['events']:>12,} {row['cpu_s']:>8.3f} {row['engine_s']:>8.3f} "
                  f"{row['cpu_s'] / row['events'] * 1e9:>9.0f}")
        k = scaling_exponents(rows)
        print(f"fitted exponent: CPU time {k['cpu']:.2f}, events {k['events']:.2f}, "
              f"CPU time at events held per call {k['per_call_held']:.2f}")
        if not args.quick:
            measured[what] = k["per_call_held"]
    m = engine_microbench()
    print(f"\nengine micro-benchmark ({REFERENCE_CONFIG['name']}): {m['events']:,} events in "
          f"{m['engine_s'] * 1e3:.1f} ms, {m['events_per_s']:,.0f} events/s")
    s = reference_speedup()
    print(f"Cython engine vs SimPy reference ({REFERENCE_CONFIG['name']}, {s['requests']:,} requests): "
          f"{s['engine_s'] * 1e3:.1f} ms vs {s['reference_s'] * 1e3:.0f} ms, speed-up {s['speedup']:.0f}x "
          f"({'identical' if s['identical'] else 'DIFFERENT'} request records)")
    print_goals(measured)
    return 0
