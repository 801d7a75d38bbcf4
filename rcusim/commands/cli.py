"""Command line: ``python -m rcusim run SCENARIO.yaml [--out DIR] [--seed N] [--set key=value ...]``
(or ``run --from results/X/summary.json``), ``show-config SCENARIO.yaml``, and ``compare``,
``sweep`` and ``bench`` (one module each: rcusim/commands/compare.py,
rcusim/commands/sweep.py, rcusim/commands/bench.py).

Bad input ends with one line on stderr naming the key and what is allowed, and
exit status 2; results are written to a temporary directory and renamed into
place only when complete, and a second run on the same --out is refused while
the first lasts (rcusim/commands/outdir.py).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import shlex
import signal
import sys
import threading
from pathlib import Path

import yaml

from rcusim.commands.outdir import check_seed, claim, write_result
from rcusim.commands import bench, compare, kernel, measure_guest, sweep, torture, tracediff
from rcusim.engine.rcuscale import rcuscale_line, rcuscale_writer_lines, recheck_lines
from rcusim.engine.simulate import ModelError, estimate_memory_bytes, sync_loops
from rcusim.errors import ScenarioError
from rcusim.input.bootargs import PARAMETERS
from rcusim.input.kvmcmd import add_kvm_arguments, kvm_error, scenario_from_kvm
from rcusim.input.scenario import SUMMARY_MAX_BYTES, load_scenario, read_text_file
from rcusim.input.schema import key_reference, scenario_json_schema, with_key_reference
from rcusim.progress import Stages
from rcusim.results import trace
from rcusim.results.provenance import installed_version, source_revision
from rcusim.results.run import resolved_config, run_scenario

EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
"""A variant stopped at run.max_sim_time_s before its work was done (results written, marked)."""


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that reports errors in one line with exit status 2."""

    def error(self, message):
        raise ScenarioError(f"command line: {message}")


@functools.cache  # built once: main() may be called many times in one process (tests, notebooks)
def _parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(prog="python -m rcusim", description="Discrete-event simulator of Linux kernel Tree RCU.")
    revision = source_revision()
    parser.add_argument("--version", action="version",
                        version=f"rcusim {installed_version()}" + (f" ({revision})" if revision else ""))
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_ArgumentParser)
    run = sub.add_parser("run", help="run a scenario and write its results")
    run.add_argument("scenario", nargs="?", help="scenario YAML file")
    run.add_argument("--from", dest="from_summary", metavar="SUMMARY",
                     help="run again the scenario and seed a summary.json records (instead of a scenario file)")
    run.add_argument("--out", help="results directory (default: results/<scenario name>)")
    run.add_argument("--force", action="store_true", help="replace the results directory if it exists")
    run.add_argument("--seed", type=int, help="random seed (default: the scenario's)")
    run.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                     help="override a scenario value, e.g. --set hardware.nr_cpus=32 (repeatable)")
    run.add_argument("--variant", dest="variants", action="append", metavar="NAME",
                     help="run only this variant (repeatable)")
    run.add_argument("--check", action="store_true", help="verify the engine's invariants while running")
    run.add_argument("--progress", action=argparse.BooleanOptionalAction,
                     help="show on stderr each variant's stage (build, engine, results), the engine's progress "
                          "and the writing of the results (default: when stderr is a terminal)")
    run.add_argument("--trace", metavar="FILE", help="write a Chrome trace-event JSON file (Perfetto); small runs only")
    run.add_argument("--ftrace", metavar="FILE", help="write the rcu tracepoints as ftrace text; small runs only")
    buckets = run.add_mutually_exclusive_group()
    buckets.add_argument("--linear", action="store_true",
                         help="latency histogram with linear buckets (default: log2 when latencies span "
                              "two decades, else linear)")
    buckets.add_argument("--log2", action="store_true", help="latency histogram with log2 buckets")
    run.set_defaults(func=cmd_run)
    show = sub.add_parser("show-config", help="print each variant's resolved configuration, without running")
    show.add_argument("scenario", help="scenario YAML file")
    show.add_argument("--seed", type=int, help="random seed (default: the scenario's)")
    show.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                      help="override a scenario value (repeatable)")
    show.add_argument("--variant", dest="variants", action="append", metavar="NAME",
                      help="only this variant (repeatable)")
    show.set_defaults(func=cmd_show_config)
    schema = sub.add_parser("schema", help="print the JSON Schema of scenario files")
    schema.add_argument("--markdown", action="store_true",
                        help="print the key reference of docs/scenarios.md instead, written from the schema")
    schema.add_argument("--write", metavar="FILE",
                        help="with --markdown: replace the key reference in FILE (or append it), "
                             "e.g. docs/scenarios.md")
    schema.set_defaults(func=cmd_schema)
    boot = sub.add_parser("bootargs", help="list the kernel boot parameters rcusim understands")
    boot.set_defaults(func=cmd_bootargs)
    compare.add_parser(sub)
    sweep.add_parser(sub)
    torture.add_parser(sub)
    bench.add_parser(sub)
    kernel.add_parser(sub)
    measure_guest.add_parser(sub)
    tracediff.add_parser(sub)
    rcuscale = sub.add_parser("rcuscale", help="run a kvm.sh rcuscale command line (GP-writer or kfree test)")
    add_kvm_arguments(rcuscale)
    rcuscale.set_defaults(func=cmd_rcuscale)
    return parser


def _scenario_from_summary(path: str, overrides, seed, variants):
    """The scenario and seed a results directory's summary.json records, with `variants`
    (default: the variants it records)."""
    allowed = "the summary.json of a results directory written by rcusim run"
    text = read_text_file(path, path, "--from file", allowed, max_bytes=SUMMARY_MAX_BYTES)
    try:
        summary = json.loads(text)
        # The recorded seed, under what --set seed=... and --seed change as for a scenario file.
        data = {**summary["provenance"]["scenario"], "seed": summary["seed"]}
        variants = variants or list(summary["provenance"]["variants"])
        runs = summary["provenance"].get("runs", 1)
    except (ValueError, KeyError, TypeError):
        raise ScenarioError(f"--from: {path!r} is not a summary.json with provenance",
                            allowed="the summary.json of a results directory written by rcusim run") from None
    if runs != 1:
        raise ScenarioError(f"--from: {path!r} pools {runs} runs of each variant (rcusim kernel's simulation "
                            "beside its boots), which run makes one at a time", allowed=allowed)
    return load_scenario(data, overrides=overrides, seed=seed, variants=variants)


def cmd_run(args) -> int:
    check_seed(args.seed)
    if (args.scenario is None) == (args.from_summary is None):
        raise ScenarioError("command line: run needs a scenario file or --from SUMMARY, not both",
                            allowed="python -m rcusim run SCENARIO.yaml, or run --from results/X/summary.json")
    if args.from_summary:
        scenario = _scenario_from_summary(args.from_summary, args.overrides, args.seed, args.variants)
    else:
        scenario = load_scenario(args.scenario, overrides=args.overrides, seed=args.seed, variants=args.variants)
    out = Path(args.out) if args.out else Path("results") / scenario.name
    # Held until the results directory is written; refused now, not after a long run.
    with claim(out, args.force):
        trace_limit = None
        if args.trace or args.ftrace:
            for path, option in ((args.trace, "--trace"), (args.ftrace, "--ftrace")):
                if path:
                    trace.check_output_path(path, option)
            trace.check_trace_size(scenario)
            trace_limit = trace.MAX_TRACE_RECORDS
        result = run_scenario(scenario, progress=args.progress, check=args.check, trace_limit=trace_limit)
        result.invocation["command"] = "python -m rcusim " + shlex.join(args.argv)
        print(result.table())
        for name, v in result.variants.items():
            if v.metrics.get("total_time_ns") is not None:  # a kfree_rcu() flood, as rcuscale prints it
                print(f"{name}: {rcuscale_line(v.metrics)}")
            spec = scenario.variants[name]
            if spec.rcuscale_writer is not None and v.metrics["finished"]:
                # rcuscale's GP-writer test: its start/end line and kvm-recheck-rcuscale.sh's summary.
                lines = rcuscale_writer_lines(spec, v.requests, v.gps)
                for line in [ln for ln in lines if " start: " in ln] + recheck_lines(lines):
                    print(f"{name}: {line}")
        with Stages(args.progress) as stages:
            stages.stage(f"write {out}")
            path = write_result(result, out, log2=False if args.linear else True if args.log2 else None)
    for file, option, write in ((args.trace, "--trace", "write_chrome_trace"),
                                (args.ftrace, "--ftrace", "write_ftrace")):
        if file:
            try:
                getattr(trace, write)(result, file)
            except OSError as exc:
                raise ScenarioError(f"{option}: cannot write {str(file)!r}: {exc.strerror or exc}") from None
            print(f"{option[2:]} written to {file}")
    print(f"\nresults written to {path}/")
    _print_notes(scenario)
    _report_backlog(result)
    return _report_incomplete(result, scenario)


def _print_notes(scenario) -> None:
    # After the work, so that a command that fails prints its one error line alone.
    for note in scenario.notes:
        print(f"rcusim: note: {note}", file=sys.stderr)


def _report_backlog(result) -> None:
    """One line per variant that ended with more call_rcu() callbacks waiting than invoked."""
    for name, v in result.variants.items():
        cb = v.extra_metrics.get("call_rcu_latency_us")
        if cb and cb["pending"] > cb["invoked"]:
            print(f"rcusim: variant {name}: {cb['pending']:,} of the {cb['queued']:,} call_rcu() callbacks "
                  f"queued were still waiting at the end, {cb['invoked']:,} invoked: invocation did not "
                  "keep up with the callback load", file=sys.stderr)


def _report_incomplete(result, scenario) -> int:
    """One line per variant that stopped before its work was done; EXIT_INCOMPLETE if any."""
    incomplete = [n for n, v in result.variants.items() if v.extra_metrics.get("finished") is False]
    for name in incomplete:
        spec = scenario.variants[name]
        calls = sum(wl.tasks * wl.loops for wl in sync_loops(spec))
        done = result.variants[name].request_count
        what = f"{done:,} of {calls:,} calls finished" if calls else "its workloads did not finish"
        print(f"rcusim: variant {name} is incomplete: {what} when run.max_sim_time_s "
              f"({spec.run.max_sim_time_s:g} s) stopped it; its results are marked finished: false",
              file=sys.stderr)
    return EXIT_INCOMPLETE if incomplete else 0


def cmd_show_config(args) -> int:
    check_seed(args.seed)
    scenario = load_scenario(args.scenario, overrides=args.overrides, seed=args.seed, variants=args.variants)
    out = {"scenario": scenario.name, "seed": scenario.seed, "variants": {}}
    for n, spec in scenario.variants.items():
        out["variants"][n] = {**resolved_config(spec),
                              "workloads": [w.model_dump(mode="json") for w in spec.workloads],
                              "memory_estimate_mib": round(estimate_memory_bytes(spec) / 2**20, 1)}
    print(yaml.safe_dump(out, sort_keys=False, width=100), end="")
    _print_notes(scenario)
    return 0


def cmd_schema(args) -> int:
    if args.write is not None and not args.markdown:
        raise ScenarioError("command line: --write needs --markdown")
    if not args.markdown:
        print(json.dumps(scenario_json_schema(), indent=2))
    elif args.write is None:
        print(key_reference(), end="")
    else:
        path = Path(args.write)
        try:
            path.write_text(with_key_reference(path.read_text()))
        except OSError as exc:
            raise ScenarioError(f"cannot rewrite {path}: {exc.strerror}") from None
        except ScenarioError as exc:
            raise exc.with_context(where=str(path)) from None
    return 0


def cmd_bootargs(args) -> int:
    width = max(len(name) for name in PARAMETERS)
    for name, param in PARAMETERS.items():
        print(f"{name:<{width}}  {param.kind:<16}  {param.doc}")
    return 0


def cmd_rcuscale(args) -> int:
    check_seed(args.seed)
    data, notes = scenario_from_kvm(args, profile=args.profile, release=args.release, seed=args.seed)
    try:
        scenario = load_scenario(data)
    except ScenarioError as exc:
        raise kvm_error(exc) from None
    for note in notes:
        print(f"rcusim: note: {note}", file=sys.stderr)
    # kvm.sh's --out is replaced as its results directory is; held while the run lasts.
    with claim(Path(args.out), force=True) if args.out else contextlib.nullcontext():
        result = run_scenario(scenario, progress=False)
        spec = next(iter(scenario.variants.values()))
        for v in result.variants.values():
            m = v.metrics
            if spec.rcuscale_writer is not None:  # the GP-writer test: rcuscale's lines, then kvm-recheck's
                if not m["finished"]:
                    raise ScenarioError("the writers did not finish within run.max_sim_time_s")
                lines = rcuscale_writer_lines(spec, v.requests, v.gps)
                print("\n".join(lines + recheck_lines(lines)))
                continue
            if m["total_time_ns"] is None:
                raise ScenarioError("the kfree threads did not finish within run.max_sim_time_s")
            print(rcuscale_line(m))
        if args.out:
            path = write_result(result, Path(args.out))
            print(f"results written to {path}/", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    # SIGTERM unwinds like Ctrl-C, so that temporary directories and worker
    # processes are cleaned up on the way out.
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main_thread else None
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        args = _parser().parse_args(argv)
        args.argv = argv
        return args.func(args)
    except ScenarioError as exc:
        print(f"rcusim: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ModelError as exc:
        # A broken RCU guarantee is a bug in rcusim, not bad input: exit 1.
        print(f"rcusim: model error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader of our output went away (e.g. '| head'): stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("rcusim: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("rcusim: terminated", file=sys.stderr)
        return 143
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


class Terminated(BaseException):
    """SIGTERM, raised where the process is so that it unwinds."""


def _terminate(signum, frame):
    raise Terminated()
