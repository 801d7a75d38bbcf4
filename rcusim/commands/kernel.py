"""``python -m rcusim kernel SCENARIO``: run a scenario in a real Linux kernel under QEMU.

Writes a results directory in ``run``'s layout (summary.json with the same metric names,
latencies.parquet, gps.parquet, report.txt, figures) plus ``raw/<variant>/boot-<k>/``: the
guest's plan, its log, the console, the kernel's log and the trace. ``--twin`` also
simulates the same scenario (aligned with the image's Kconfig) and prints both side by side;
``--sim-only`` does only that, beside a real run already in ``--out``, with no boot.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gzip
import json
import shlex
import sys
from pathlib import Path

from rcusim.commands.compare import figures_table, save_overlaid_histogram
from rcusim.commands.outdir import check_seed, claim, write_result
from rcusim.errors import ScenarioError
from rcusim.input.profiles import profile_tracing
from rcusim.input.scenario import SUMMARY_MAX_BYTES, load_scenario, read_text_file
from rcusim.results import trace
from rcusim.results.result import calls_spans, within_calls
from rcusim.results.run import run_scenario
from rcusim.twin.qemu import CLOCKS
from rcusim.twin.plan import SIM_TRACE_EVENT
from rcusim.twin.run import MAX_BOOTS, align_scenario, run_kernel

__all__ = ["add_parser", "cmd_kernel"]


def add_parser(sub) -> None:
    p = sub.add_parser("kernel", help="run a scenario in a real Linux kernel under QEMU (the model's twin)")
    p.add_argument("scenario", help="scenario YAML file")
    p.add_argument("--kernel", metavar="DIR",
                   help="a kernel image folder (bzImage, config, modules/) or a folder of them, one per HZ "
                        "(default: $RCUSIM_KERNEL, then ../shared/kernel beside the source tree)")
    p.add_argument("--clock", choices=CLOCKS, default="real",
                   help="real: multi-threaded TCG on the host's clock (vCPUs <= host cores); icount: one "
                        "instruction count for the whole guest, free of host load (default: %(default)s)")
    p.add_argument("--boots", type=int, default=5, help=f"boots per variant, pooled (1 to {MAX_BOOTS}; "
                                                        "default: %(default)s)")
    p.add_argument("--out", help="results directory (default: results/<scenario name>-kernel)")
    p.add_argument("--force", action="store_true", help="replace the results directory if it exists")
    p.add_argument("--seed", type=int, help="the simulation's seed with --twin (default: the scenario's)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario value (repeatable)")
    p.add_argument("--variant", dest="variants", action="append", metavar="NAME",
                   help="run only this variant (repeatable)")
    p.add_argument("--any-profile", action="store_true",
                   help="accept a hardware profile other than the guest's (qemu-tcg): the simulation then "
                        "models another machine than the one booted")
    p.add_argument("--any-host", action="store_true",
                   help="keep a boot whose vCPU threads waited for a busy host (real clock; by default it is "
                        "booted again): its figures then carry the host's load")
    p.add_argument("--timeout", type=float, default=600.0, metavar="S",
                   help="longest boot, in seconds of wall time (default: %(default)s)")
    p.add_argument("--twin", action="store_true",
                   help="also simulate the scenario (into <out>-sim) and print both side by side")
    p.add_argument("--sim-only", action="store_true",
                   help="boot nothing: simulate beside the real run already in --out (into <out>-sim), the "
                        "scenario aligned with the image as this rcusim aligns it")
    p.add_argument("--trace-event", dest="events", action="append", default=[], metavar="GROUP/NAME",
                   help="also trace this tracepoint in the guest (repeatable), e.g. irq_vectors/local_timer_entry")
    p.add_argument("--kprobe", dest="kprobes", action="append", default=[], metavar="SPEC",
                   help="also trace this kprobe event (repeatable), as written to kprobe_events: "
                        "'p:kprobes/NAME SYMBOL[+OFFSET] [FETCHARGS]'; each probe traps at every hit and "
                        "slows what it probes")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction,
                   help="show each boot on stderr (default: when stderr is a terminal)")
    p.set_defaults(func=cmd_kernel)


def _write_sim_traces(sim, directory: Path) -> None:
    """Each simulated variant's rcu and sched tracepoints as ftrace text, where tracediff
    looks for them (raw/<variant>/trace.txt.gz)."""
    for name, v in sim.variants.items():
        folder = directory / "raw" / name
        folder.mkdir(parents=True, exist_ok=True)
        with gzip.open(folder / "trace.txt.gz", "wt", compresslevel=6) as f:
            for line in trace.ftrace_lines(v):
                f.write(line + "\n")
        spans = calls_spans(v)
        if spans:  # the traced (first) run's calls, as a real boot's window.json
            (folder / "window.json").write_text(json.dumps({"t0_ns": spans[0][0], "t1_ns": spans[0][1]}) + "\n")


def cmd_kernel(args) -> int:
    check_seed(args.seed)
    if not args.timeout > 0:
        raise ScenarioError(f"{args.timeout} s", key="--timeout", allowed="a positive number of seconds")
    loaded = load_scenario(args.scenario, overrides=args.overrides, seed=args.seed, variants=args.variants)
    out = Path(args.out) if args.out else Path("results") / f"{loaded.name}-kernel"
    sim_out = out.with_name(out.name + "-sim")
    if args.sim_only:
        if args.events or args.kprobes:
            raise ScenarioError("--trace-event or --kprobe with --sim-only", key="--sim-only",
                                allowed="probes only with a run that boots (they trace the guest)")
        with claim(sim_out, args.force):
            real_variants, boots = _real_run(out)
            names = args.variants or real_variants
            scenario, _, _, names = align_scenario(args.scenario, [*args.overrides, *_traced(loaded, names)],
                                                   args.seed, names, args.kernel)
            _simulate_beside(scenario, names, boots, out, sim_out, "python -m rcusim " + shlex.join(args.argv), args)
        return 0
    # Both directories are held from before the boots until written, as run holds its --out.
    with claim(out, args.force), (claim(sim_out, args.force) if args.twin else contextlib.nullcontext()):
        run = run_kernel(args.scenario, args.overrides, seed=args.seed, variants=args.variants, kernel=args.kernel,
                         clock=args.clock, boots=args.boots, any_profile=args.any_profile,
                         any_host=args.any_host, timeout_s=args.timeout,
                         progress=args.progress, events=args.events, kprobes=args.kprobes)
        try:
            for note in run.notes:
                print(f"rcusim: note: {note}", file=sys.stderr)
            real = run.result
            real.invocation["command"] = "python -m rcusim " + shlex.join(args.argv)
            print(real.table())
            path = write_result(real, out, extra=run.write_raw)
            print(f"\nresults written to {path}/")
        finally:
            run.cleanup()
        if args.twin:
            if args.events or args.kprobes:
                print("rcusim: note: the simulation does not price the extra tracepoints and kprobes, which "
                      "slow the guest", file=sys.stderr)
            scenario = load_scenario(real.provenance["scenario"], overrides=_traced(loaded, real.variants),
                                     seed=args.seed, variants=list(real.variants))
            kept = min(v["boots"] for v in real.provenance["real_kernel"]["variants"].values())
            _simulate_beside(scenario, list(real.variants), kept, out, sim_out, real.invocation["command"], args)
    return 0


def _traced(scenario, variants) -> list[str]:
    """The overrides that turn the guest's tracepoints on in the simulation of `variants` beside
    a boot (kernel.bootargs append), so that it pays for the tracing the guest did; none, with a
    note, on a profile that does not price a traced event (another machine, --any-profile)."""
    if all(profile_tracing(scenario.variants[v].hardware.profile) for v in variants):
        return [f"kernel.bootargs={SIM_TRACE_EVENT}"]
    print("rcusim: note: the simulation's hardware profile does not price a traced event: it runs "
          "untraced, where the guest was traced", file=sys.stderr)
    return []


def _real_run(out: Path) -> tuple[list[str], int]:
    """The variants of the real run in `out`, and its boots per variant."""
    try:
        text = read_text_file(out / "summary.json", str(out / "summary.json"), "real run's summary",
                              "the summary.json of 'rcusim kernel'", max_bytes=SUMMARY_MAX_BYTES)
        variants = json.loads(text)["variants"]
        boots = {int(v["metrics"]["boots"]) for v in variants.values()}
        if len(boots) != 1 or not 1 <= min(boots) <= MAX_BOOTS:
            raise ValueError("boots")
        return list(variants), boots.pop()
    except (ScenarioError, ValueError, KeyError, TypeError):
        raise ScenarioError(f"{str(out)!r} holds no real run to simulate beside", key="--out",
                            allowed="the --out of an earlier 'rcusim kernel' run") from None


def _simulate_beside(scenario, variants: list[str], runs: int, out: Path, sim_out: Path, command: str,
                     args) -> None:
    """Simulate `scenario` into `sim_out`, with the ftrace of its first run, and print it beside
    the real run in `out`: each variant `runs` times (the seeds from the scenario's), pooled as
    the real run pools its boots, so that both sample what varies from run to run alike."""
    try:
        trace.check_trace_size(scenario, variants)
        limit = trace.MAX_TRACE_RECORDS
    except ScenarioError:
        limit = None  # too large to trace: tracediff then has the real side's traces only
    sim = run_scenario(scenario, variants=variants, progress=args.progress, trace_limit=limit, runs=runs)
    sim.variants = {name: within_calls(v) for name, v in sim.variants.items()}
    sim.invocation["command"] = command
    sim_path = write_result(sim, sim_out, extra=functools.partial(_write_sim_traces, sim) if limit else None)
    seeds = f"seed {scenario.seed}" if runs == 1 else f"seeds {scenario.seed}-{scenario.seed + runs - 1}, pooled"
    print(f"simulation ({seeds}) written to {sim_path}/\n")
    print(figures_table(out, sim_out, "real", "sim"))
    plot = sim_out / "twin_latency_hist.png"
    if save_overlaid_histogram([out, sim_out], ["real", "sim"], plot):
        print(f"\noverlaid latency histogram written to {plot}")
    print(f"every metric: python -m rcusim compare {out} {sim_out}; GP by GP: python -m rcusim tracediff "
          f"{out} {sim_out}")
