"""``python -m rcusim torture``: an rcutorture for the model.

Draws random scenarios over the space rcusim models (CPU counts, tree shapes, HZ,
releases, preemption models, NOCB and nohz_full= masks, normal and expedited
callers, rcuscale's gp_async writers with rcu_barrier(), pinned and unpinned, readers of
every kind, call_rcu() load, kfree_rcu() floods, noise),
runs each variant with the safety checker and the engine's invariant checks, and
prints rcutorture-style totals: grace periods, callbacks, rcu_barrier() calls and readers checked,
with the Reader Pipe, and violations. A violation writes the reproducing scenario
(with its seed) and ends with exit status 1.

Runs go to a local process pool or a Dask scheduler, as sweeps do.  ``--fault
NAME`` runs the same draw with one of the deliberate model faults of
rcusim.engine.faults, to show the checker catches it.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import yaml

from rcusim.commands.sweep import WorkerDied, run_parallel
from rcusim.engine.engine_input import RCU_CPU_STALL_TIMEOUT_S
from rcusim.engine.faults import FAULTS
from rcusim.engine.simulate import EVENT_CHUNK, ExitReason, build_engine
from rcusim.errors import ScenarioError
from rcusim.input.releases import module_param_since, parse_release, release_switches
from rcusim.input.profiles import profile_topology
from rcusim.input.scenario import load_scenario

__all__ = ["draw_scenario", "torture_one", "torture", "add_parser", "cmd_torture"]

#: Releases drawn (Tree RCU; classic RCU is modelled on one CPU only, drawn there).
RELEASES = ("3.10", "4.9", "4.14", "4.19", "5.4", "5.10", "5.15", "6.1", "6.2", "6.3", "6.6",
            "6.9", "6.12", "6.17", "7.0")
CLASSIC_RELEASES = ("2.6.10", "2.6.20", "2.6.25")
PROFILES = ("x86-64-server-2023", "amd-threadripper-3970x", "xeon-e5405-8cpu")
CPU_COUNTS = (1, 2, 3, 4, 7, 8, 16, 33, 64, 128, 256, 1024, 4096, 8192)
CALLS_PER_VARIANT = 4000
"""Upper bound on tasks x loops of a drawn configuration, to keep each run short."""
ENDURANCE_LOOPS = (1000, 3000, 10_000, 30_000)
"""Loops of the few callers of an endurance configuration: most grace periods checked
come from these."""
ENDURANCE_CPU_LOOPS = 60_000
"""Upper bound on CPUs x loops of an endurance configuration: the readers, ticks and
noise of every CPU run for as long as the loops last."""
CALLER_CPU_LOOPS = 7680
"""Upper bound on CPUs x loops of a drawn caller (30 loops up to 256 CPUs, one from
8192): the FQS wait grows by a jiffy per RCU_JIFFIES_FQS_DIV (256) CPUs, so a large
machine's grace periods are long, and its readers, load and noise run for all of them."""
BUSY_CPUS = 256
"""CPUs at most that get readers, call_rcu() load, noise or a kfree thread: work on
every CPU of a larger machine would cost events in proportion to its size for the
whole run."""
KFREE_OBJECTS = 200_000
"""Upper bound on the kfree_rcu() calls of a drawn flood."""
WATCHDOG_S = 60
"""Simulated seconds without a call returning, callers still waiting, that count as
a stall (as rcutorture's writer stall), as does a grace period longer than the RCU
CPU stall timeout (as the kernel's stall warning). Slow but live configurations
exist: non-preemptible readers of 20 ms on a CONFIG_PREEMPTION=n kernel hold each
GP until jiffies_to_sched_qs (HZ/10) forces a context switch."""
MAX_SIM_TIME_S = 86_400
"""The scenario's own bound, far beyond any drawn work: the watchdog ends a stalled run."""


def draw_scenario(rng: random.Random, index: int) -> dict:
    """One random scenario (as a mapping for load_scenario()), named after its index."""
    nr = rng.choice(CPU_COUNTS)
    profile = rng.choice(PROFILES)
    classic = nr == 1 and rng.random() < 0.3
    kernel = {"release": rng.choice(CLASSIC_RELEASES if classic else RELEASES),
              "HZ": rng.choice((100, 250, 1000))}
    switches = release_switches(parse_release(kernel["release"]))
    preempt = rng.random() < 0.6
    kernel["CONFIG_PREEMPTION"] = preempt
    kernel["CONFIG_PREEMPT_RCU"] = preempt and rng.random() < 0.8
    if rng.random() < 0.3 and nr >= 16:
        kernel["CONFIG_RCU_FANOUT_LEAF"] = rng.choice((2, 4, 16, 64))
    bootargs = []
    if not classic and rng.random() < 0.5:
        kernel["CONFIG_RCU_NOCB_CPU"] = True
        bootargs.append("rcu_nocbs=all" if rng.random() < 0.7 else f"rcu_nocbs=0-{max(nr // 2 - 1, 0)}")
        if nr > 2 and rng.random() < 0.3:
            bootargs.append(f"nohz_full={nr // 2}-{nr - 1}")
        # Lazy RCU where the release has it, drawn from the index's own stream so that
        # no other draw depends on it.
        kernel["CONFIG_RCU_LAZY"] = (switches.rcu_lazy
                                     and random.Random(f"lazy {index}").random() < 0.5)
    if not classic and rng.random() < 0.3:
        bootargs.append("rcutree.rcu_normal_wake_from_gp=1")
        if not switches.sr_normal_wake_from_gp:
            kernel["patches"] = ["rcu-sr-normal-wake-from-gp"]  # the series as measured on 6.6
    kernel["bootargs"] = " ".join(bootargs)
    endurance = not classic and nr <= 64 and rng.random() < 0.5
    if endurance:
        # A few callers, many grace periods in a row.
        tasks, loops = rng.choice((1, 2, 4)), min(rng.choice(ENDURANCE_LOOPS), ENDURANCE_CPU_LOOPS // nr)
    else:
        tasks = rng.choice((1, 4, 32, 200))
        loops = max(1, min(rng.choice((1, 3, 10, 30)), CALLS_PER_VARIANT // tasks, CALLER_CPU_LOOPS // nr))
    caller = {"kind": "sync_loop", "tasks": tasks, "loops": loops, "cpus": "all",
              "think_us": rng.choice((0, 10, 1000)), "nice": rng.choice((0, 0, 5, -5, 19)),
              "primitive": "synchronize_rcu_expedited" if not classic and rng.random() < 0.3
              else "synchronize_rcu"}
    if classic:
        caller["nice"] = 0
    # rcuscale's gp_async writer loop (call_rcu_hurry() and rcu_barrier()), drawn from the
    # index's own stream. Not on offloaded CPUs before v6.12: there rcuscale counts the
    # callbacks in flight per CPU while the rcuop kthreads invoke them elsewhere, and a
    # writer can call rcu_barrier() forever, as the kernel's did.
    draw = random.Random(f"async {index}")
    if (not classic and module_param_since("rcuscale.gp_async", kernel["release"]) is None
            and draw.random() < 0.3
            and (not kernel.get("CONFIG_RCU_NOCB_CPU") or switches.rcuscale_async_per_task)):
        caller["primitive"] = "call_rcu_hurry"
        caller["async_max"] = draw.choice((1, 10, 100, 1000))
    if not classic and rng.random() < 0.4 and profile_topology(profile) is not None:
        caller["pinned"] = False  # placement needs the profile's scheduling domains
    workloads = [caller]
    busy_cpus = "all" if nr <= BUSY_CPUS else f"0-{BUSY_CPUS - 1}"
    if not classic and rng.random() < 0.3:
        workloads.append({"kind": "sync_loop", "tasks": rng.choice((1, 8)), "loops": 3, "cpus": "all",
                          "primitive": "synchronize_rcu_expedited"})
    if not classic and rng.random() < 0.4:
        # Up to sections longer than a grace period: only those can expose a GP ended early.
        length = rng.choice((5, 50, 500, 5000, 20000))
        workloads.append({"kind": "readers", "cpus": busy_cpus, "length_us": length,
                          "rate_per_s": min(rng.choice((100, 1000)), 0.5e6 / length),
                          "between": rng.choice(("sleep", "busy")),
                          "length_dist": rng.choice(("fixed", "exponential"))})
    if preempt and not endurance and rng.random() < 0.2:
        # Its kernel work has no preemption point: without CONFIG_PREEMPTION the CPU
        # would never pass a quiescent state (an RCU CPU stall in the kernel too).
        # Not with endurance callers: its callbacks would flood minutes of simulated time.
        workloads.append({"kind": "call_rcu_load", "cpus": busy_cpus, "work_us": 50,
                          "call_rcu_per_op": rng.choice((1, 10)), "burst": rng.choice((1, 10))})
    if not classic and rng.random() < 0.4:
        threads = rng.choice((-1, 1, 4)) if nr <= BUSY_CPUS else rng.choice((1, 4))
        alloc = rng.choice((100, 1000, 8000))
        loops = max(4, min(rng.choice((4, 10, 40)), KFREE_OBJECTS // (alloc * (nr if threads == -1 else threads))))
        # The call form decides the channel: a two-argument kfree_rcu() without a
        # page at hand goes on the rcu_head list, a single-argument one sleeps for a page.
        single, double = rng.choice(((False, False), (True, False), (False, True)))
        if module_param_since("rcuscale.kfree_rcu_test_single", kernel["release"]):
            single = double = False  # the release's test makes two-argument calls only
        workloads.append({"kind": "kfree_rcu_flood", "kfree_nthreads": threads, "kfree_alloc_num": alloc,
                          "kfree_loops": loops, "holdoff": 0,
                          "kfree_rcu_test_single": single, "kfree_rcu_test_double": double})
    if not classic and rng.random() < 0.2:
        workloads.append({"kind": "noise", "cpus": busy_cpus, "preset": rng.choice(("quiet_server", "noisy_vm"))})
    return {"name": f"torture_{index}", "seed": rng.randrange(2**31),
            "hardware": {"profile": profile, "nr_cpus": nr},
            "kernel": kernel, "workloads": workloads, "run": {"max_sim_time_s": MAX_SIM_TIME_S}}


def torture_one(data: dict, fault: str | None = None) -> dict:
    """Run every variant of one drawn scenario; what the checker saw, or why it was refused."""
    try:
        scenario = load_scenario(data)
    except ScenarioError as exc:
        return {"refused": str(exc)}
    out = {"variants": 0, "gps": 0, "exp_gps": 0, "callbacks": 0, "barriers": 0, "readers": 0,
           "pipe_normal": [0, 0, 0], "pipe_expedited": [0, 0, 0], "violations": 0, "messages": []}
    for name, spec in scenario.variants.items():
        engine, _ = build_engine(spec, scenario.seed, fault=fault)
        limit_ns = round(spec.run.max_sim_time_s * 1e9)
        window_ns = WATCHDOG_S * 10**9
        until_ns, returned = min(window_ns, limit_ns), engine.requests_done
        while True:
            reason = engine.run(until_ns, EVENT_CHUNK)
            problems = engine.verify()
            if problems:
                out["violations"] += len(problems)
                out["messages"] += [f"{name}: {p}" for p in problems[:3]]
                break
            if reason == ExitReason.TIME_LIMIT and until_ns < limit_ns and engine.requests_done > returned:
                # The watchdog: some call returned in the last window; give the next one.
                until_ns, returned = min(until_ns + window_ns, limit_ns), engine.requests_done
                continue
            if reason != ExitReason.MAX_EVENTS:
                break
        if reason in (ExitReason.STALLED, ExitReason.TIME_LIMIT):
            out["violations"] += 1
            out["messages"].append(f"{name}: stalled: callers still waiting, none returned "
                                   f"in {WATCHDOG_S} simulated seconds")
            out["stalled_at_s"] = until_ns / 1e9  # where the reproducer's run may stop
        gps = engine.grace_periods()
        longest = int((gps["t_end_ns"] - gps["t_start_ns"]).max(initial=0))
        if longest > RCU_CPU_STALL_TIMEOUT_S * 10**9:
            out["violations"] += 1
            out["messages"].append(f"{name}: RCU CPU stall: a grace period lasted {longest / 1e9:.1f} s")
        safety = engine.safety()
        out["variants"] += 1
        out["gps"] += int((~gps["expedited"]).sum())
        out["exp_gps"] += int(gps["expedited"].sum())
        counters = engine.counters()
        out["callbacks"] += int(counters["callbacks_invoked"])
        out["barriers"] += int(counters.get("rcu_barriers", 0) + counters.get("rcu_barrier_early_exits", 0))
        out["readers"] += safety["readers_checked"]
        for k in range(3):
            out["pipe_normal"][k] += safety["reader_pipe_normal"][k]
            out["pipe_expedited"][k] += safety["reader_pipe_expedited"][k]
        out["violations"] += safety["violations"]
        out["messages"] += [f"{name}: {m}" for m in safety["messages"][:3]]
    return out


def torture(*, seed: int = 0, duration_s: float | None = None, gps: int | None = None,
            max_configs: int | None = None, workers: int | None = 1, scheduler: str | None = None,
            out: Path | None = None, fault: str | None = None, echo=print) -> dict:
    """Draw and run configurations until `duration_s`, `gps` grace periods or
    `max_configs` configurations, or the first violation. `fault` names a model
    fault of rcusim.engine.faults. Returns the totals; writes a violation's
    scenario into `out`."""
    rng = random.Random(seed)
    total = {"configurations": 0, "refused": 0, "variants": 0, "gps": 0, "exp_gps": 0, "callbacks": 0,
             "barriers": 0, "readers": 0, "pipe_normal": [0, 0, 0], "pipe_expedited": [0, 0, 0], "violations": 0,
             "reproducer": None, "wall_s": 0.0}
    t0 = time.monotonic()
    batch = max(4 * (workers or 1), 4)
    index = 0
    while True:
        drawn = [draw_scenario(rng, index + k) for k in range(batch)]
        index += batch
        try:
            for k, res in run_parallel(torture_one, [(d, fault) for d in drawn], workers, scheduler):
                _add(total, res, drawn[k], out, echo, fault)
        except WorkerDied as exc:
            # Which of the unfinished runs crashed its worker is unknown: keep them all.
            total["violations"] += 1
            for k in exc.unfinished:
                path = _write_reproducer(drawn[k], [f"{exc}; this is one of them"], out, echo, fault)
                total["reproducer"] = total["reproducer"] or path
        total["wall_s"] = time.monotonic() - t0
        if (total["violations"] or (duration_s is not None and total["wall_s"] >= duration_s)
                or (gps is not None and total["gps"] + total["exp_gps"] >= gps)
                or (max_configs is not None and total["configurations"] >= max_configs)):
            return total


def _add(total: dict, res: dict, data: dict, out: Path | None, echo, fault: str | None) -> None:
    """Add one configuration's outcome to the totals; write its scenario if it failed."""
    if "refused" in res:
        total["refused"] += 1
        return
    total["configurations"] += 1
    for key in ("variants", "gps", "exp_gps", "callbacks", "barriers", "readers", "violations"):
        total[key] += res[key]
    for key in ("pipe_normal", "pipe_expedited"):
        total[key] = [a + b for a, b in zip(total[key], res[key])]
    if res["violations"] and total["reproducer"] is None:
        if "stalled_at_s" in res:
            data = {**data, "run": {"max_sim_time_s": res["stalled_at_s"]}}
        total["reproducer"] = _write_reproducer(data, res["messages"], out, echo, fault)


def _write_reproducer(data: dict, messages: list[str], out: Path | None, echo, fault: str | None) -> str:
    out = Path(out or "torture-failures")
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{data['name']}.yaml"
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text("# rcusim torture: the safety checker found a violation here\n"
                   + (f"#   (with the deliberate model fault {fault}: run it with build_engine(fault=...))\n"
                      if fault else "")
                   + "".join(f"#   {m}\n" for m in messages[:5])
                   + yaml.safe_dump(data, sort_keys=False))
    tmp.replace(path)
    if fault:
        echo(f"rcusim-torture: VIOLATION under the fault {fault}, caught in: {path}")
    else:
        echo(f"rcusim-torture: VIOLATION, reproduce with: python -m rcusim run {path} --check")
    return str(path)


def report_lines(seed: int, total: dict) -> list[str]:
    """rcutorture-style summary lines."""
    pn, pe = total["pipe_normal"], total["pipe_expedited"]
    verdict = "FAILURE" if total["violations"] else "SUCCESS"
    return [
        f"rcusim-torture: seed {seed}: {total['configurations']} configurations "
        f"({total['refused']} drawn and refused), {total['variants']} variants, {total['wall_s']:.0f} s",
        f"rcusim-torture: grace periods checked: {total['gps'] + total['exp_gps']} "
        f"(normal {total['gps']}, expedited {total['exp_gps']})",
        f"rcusim-torture: callbacks checked: {total['callbacks']}; rcu_barrier() calls checked: {total['barriers']}",
        f"rcusim-torture: readers checked: {total['readers']}; Reader Pipe: normal {pn[0]} {pn[1]} {pn[2]}, "
        f"expedited {pe[0]} {pe[1]} {pe[2]}",
        f"rcusim-torture: violations: {total['violations']}",
        f"rcusim-torture: --- End of test: {verdict}",
    ]


def add_parser(sub) -> None:
    p = sub.add_parser("torture", help="run random configurations with the safety checker on")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="stop after this wall time")
    p.add_argument("--gps", type=int, metavar="N", help="stop after N grace periods checked")
    p.add_argument("--seed", type=int, default=0, help="seed of the configuration draw (default 0)")
    p.add_argument("--workers", type=int, help="local worker processes (default: the number of CPUs)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run on this Dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--out", default="torture-failures", help="where a violation's scenario is written")
    p.add_argument("--fault", metavar="NAME", help="break the model on purpose, to see the checker catch it: "
                   + ", ".join(FAULTS))
    p.set_defaults(func=cmd_torture)


def cmd_torture(args) -> int:
    if args.duration is None and args.gps is None:
        raise ScenarioError("no stopping rule", key="--duration", allowed="--duration SECONDS and/or --gps N")
    if args.duration is not None and not 0 < args.duration <= 7 * 86400:
        raise ScenarioError(f"{args.duration:g} s", key="--duration", allowed="a number of seconds > 0, up to a week")
    if args.gps is not None and args.gps < 1:
        raise ScenarioError(f"{args.gps}", key="--gps", allowed="an integer >= 1")
    if args.workers is not None and not 1 <= args.workers <= 4096:
        raise ScenarioError(f"{args.workers} workers", key="--workers", allowed="an integer from 1 to 4096")
    if args.fault is not None and args.fault not in FAULTS:
        raise ScenarioError(f"{args.fault!r}", key="--fault", allowed=", ".join(FAULTS))
    total = torture(seed=args.seed, duration_s=args.duration, gps=args.gps, workers=args.workers,
                    scheduler=args.scheduler, out=Path(args.out), fault=args.fault)
    for line in report_lines(args.seed, total):
        print(line)
    return 1 if total["violations"] else 0
