"""``python -m rcusim bench``: how fast the engine runs the bundled scenarios.

For every bundled scenario (``scenarios/*.yaml``), at full scale or, with
``--quick``, with every workload cut to a tenth of its length (QUICK_KEYS):
the wall time of the whole run (engine, tables, metrics), the
engine's events and events per second, and the peak memory (resident set) of
the process that ran it, each scenario in a fresh process. Then a pure engine
micro-benchmark (one engine, no tables) and the speed-up of the Cython engine
over the SimPy reference model (rcusim/engine/reference/) on the same small
configuration, which both must complete identically.
"""

from __future__ import annotations

import multiprocessing
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from rcusim.engine.reference.compare import run_both, run_engine, same_requests
from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario
from rcusim.results.run import run_scenario

__all__ = ["bench_scenario", "engine_microbench", "reference_speedup", "add_parser", "cmd_bench"]

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


def bench_scenario(path: str, quick: bool) -> dict:
    """Run one scenario (in the calling process) and measure it."""
    scenario = load_scenario(path)
    if quick:
        scenario = load_scenario(path, overrides=_quick_overrides(scenario))
    t0 = time.perf_counter()
    result = run_scenario(scenario, progress=False)
    wall = time.perf_counter() - t0
    events = sum(v.events for v in result.variants.values())
    engine_s = sum(v.wall_time_s for v in result.variants.values())
    requests = sum(len(v.requests) for v in result.variants.values())
    # ru_maxrss is in KiB on Linux.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"scenario": scenario.name, "variants": len(result.variants), "requests": requests,
            "events": events, "engine_s": engine_s, "wall_s": wall,
            "events_per_s": events / engine_s if engine_s > 0 else None, "peak_bytes": peak}


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
    p.set_defaults(func=cmd_bench)


def cmd_bench(args) -> int:
    paths = [Path(p) for p in args.scenario] if args.scenario else _bundled_scenarios()
    for p in paths:
        if not p.is_file():
            raise ScenarioError(f"no such file: {str(p)!r}", key="--scenario", allowed="a scenario YAML file")
    print(f"{'scenario':<26} {'variants':>8} {'requests':>11} {'events':>12} {'engine s':>9} "
          f"{'events/s':>11} {'wall s':>8} {'peak MiB':>9}")
    for path in paths:
        r = _in_fresh_process(bench_scenario, str(path), args.quick)
        print(f"{r['scenario']:<26} {r['variants']:>8} {r['requests']:>11,} {r['events']:>12,} "
              f"{r['engine_s']:>9.3f} {r['events_per_s'] or 0:>11,.0f} {r['wall_s']:>8.2f} "
              f"{r['peak_bytes'] / 2**20:>9.0f}")
    m = engine_microbench()
    print(f"\nengine micro-benchmark ({REFERENCE_CONFIG['name']}): {m['events']:,} events in "
          f"{m['engine_s'] * 1e3:.1f} ms, {m['events_per_s']:,.0f} events/s")
    s = reference_speedup()
    print(f"Cython engine vs SimPy reference ({REFERENCE_CONFIG['name']}, {s['requests']:,} requests): "
          f"{s['engine_s'] * 1e3:.1f} ms vs {s['reference_s'] * 1e3:.0f} ms, speed-up {s['speedup']:.0f}x "
          f"({'identical' if s['identical'] else 'DIFFERENT'} request records)")
    return 0
