"""``python -m rcusim measure-guest``: the QEMU guest's platform costs, measured from its own
trace (rcusim/twin/measure.py), and the ``qemu-tcg`` hardware profile written from them.

Boots the twin's guest ``--boots`` times, keeps each boot's files and the pooled trace
(``trace.txt.gz``, timestamps in ns) under ``--out``, and prints every cost with the
samples it rests on. ``--from-trace`` derives from such a trace instead of booting.
``--noise SECONDS`` measures the guest's OS noise instead (rcusim/twin/noise.py) and
``--write-preset`` writes it as a noise preset. ``--pcp-from DIR`` reads, from the kfree test's
boots an ``rcusim kernel`` run kept in DIR, what each CPU's page list held as the test began
(rcusim/twin/pcp_start.py), and prints the profile's ``pcp_start_pages`` entry;
``--thread-start-from DIR``, from the unpinned callers' boots traced with sched_wakeup_new and rcu_callback, how
the load helper creates its threads (rcusim/twin/thread_start.py): the profile's ``thread_start``;
``--ttwu-reuse-from DIR``, from the callers' boots, try_to_wake_up()'s cost by the time since its
CPU's last wake-up (rcusim/twin/ttwu_reuse.py): the profile's ``ttwu_reuse`` table, printed, or
with ``--write-profile`` written in place of the measured trace's (a far smaller sample).
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from pathlib import Path

import numpy as np
import yaml

from rcusim.errors import ScenarioError
from rcusim.progress import Stages
from rcusim.twin.qemu import CLOCKS
from rcusim.twin.measure import (NR_CPUS, ReuseTable, estimate_costs, folded, header_field, measure_boots,
                                 profile_yaml, read_trace, write_trace)
from rcusim.twin import noise
from rcusim.twin.pcp_start import pcp_start_pages
from rcusim.twin.thread_start import thread_start_costs
from rcusim.twin.ttwu_reuse import ttwu_reuse_from_boots
from rcusim.input.profiles import THREAD_START_COSTS, profile_tracing

__all__ = ["add_parser", "cmd_measure_guest"]


def add_parser(sub) -> None:
    p = sub.add_parser("measure-guest", help="measure the QEMU guest's platform costs from its own trace "
                                             "(the qemu-tcg profile)")
    p.add_argument("--kernel", metavar="DIR",
                   help="a kernel image folder or a folder of them; the HZ=1000 one is booted (default: "
                        "$RCUSIM_KERNEL, then ../shared/kernel beside the source tree)")
    p.add_argument("--boots", type=int, default=5, help="boots, pooled (default: %(default)s)")
    p.add_argument("--out", help="each boot's files and the pooled trace (default: results/measure-guest)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument("--from-trace", metavar="FILE",
                   help="derive the costs from a trace measure-guest wrote (its trace.txt.gz) instead of booting")
    p.add_argument("--clock", choices=CLOCKS, default="real",
                   help="the guest's clock (as rcusim kernel's): real gives the qemu-tcg profile, icount "
                        "qemu-tcg-icount (default: %(default)s)")
    p.add_argument("--write-profile", metavar="FILE", help="write the guest's profile YAML here")
    p.add_argument("--noise", type=float, metavar="SECONDS",
                   help="measure the guest's OS noise instead: spin SECONDS on every vCPU of each boot, "
                        "then SECONDS on vCPU 0 alone (the timer delay with a vCPU idle)")
    p.add_argument("--noise-from", metavar="DIR", help="derive the noise from the boots a --noise run kept in DIR")
    p.add_argument("--write-preset", metavar="FILE", help="with --noise or --noise-from: write the noise preset here")
    p.add_argument("--pcp-from", metavar="DIR", action="append",
                   help="print the profile's pcp_start_pages from the kfree test's boots an rcusim kernel run "
                        "kept in DIR (repeatable, pooled), traced with kmem/mm_page_alloc, mm_page_free, mm_page_alloc_zone_locked "
                        "and mm_page_pcpu_drain")
    p.add_argument("--thread-start-from", metavar="DIR", action="append",
                   help="print the profile's thread_start from the unpinned callers' boots an rcusim kernel run "
                        "kept in DIR (repeatable, pooled), traced with sched/sched_wakeup_new and rcu/rcu_callback")
    p.add_argument("--call-rcu-from", metavar="DIR", action="append",
                   help="with --thread-start-from: the call_rcu()s of thread creation from such boots traced "
                        "with rcu/rcu_callback too (repeatable, pooled)")
    p.add_argument("--ttwu-reuse-from", metavar="DIR", action="append",
                   help="the profile's ttwu_reuse table from the boots an rcusim kernel run kept in DIR "
                        "(repeatable, pooled; every variant's, or --variant's): printed, or with --write-profile "
                        "written in place of the measured trace's")
    p.add_argument("--variant", help="with --pcp-from, --thread-start-from or --ttwu-reuse-from: the variant's "
                                     "boots (default: kfree, unpinned_1000, every variant)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="S",
                   help="longest boot, in seconds of wall time (default: %(default)s)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction,
                   help="show each boot on stderr (default: when stderr is a terminal)")
    p.set_defaults(func=cmd_measure_guest)


def _fresh_out(args, default: str) -> Path:
    """--out emptied for a measurement's boots, once --boots and --out are checked."""
    if not 1 <= args.boots <= 100:
        raise ScenarioError(f"{args.boots} boots", key="--boots", allowed="an integer from 1 to 100")
    out = Path(args.out or default)
    if out.exists() and not args.force:
        raise ScenarioError(f"{str(out)!r} exists and would be replaced", key="--out",
                            allowed="--force to replace it, or another --out")
    shutil.rmtree(out, ignore_errors=True)
    return out


def _measure(args) -> Path:
    """Boot, keep the boots' files under --out; the pooled trace's path."""
    out = _fresh_out(args, "results/measure-guest")
    with Stages(args.progress) as stages:
        stages.stage(f"{args.boots} boots")
        header, boots = measure_boots(args.kernel, args.boots, args.timeout, out / "raw",
                                      on_boot=lambda k, wall: stages.stage(f"boot {k + 1}/{args.boots}: {wall:.0f} s"),
                                      clock=args.clock)
    trace = out / "trace.txt.gz"
    write_trace(trace, [f"command: python -m rcusim {shlex.join(args.argv)}"] + header, boots)
    return trace


def _noise(args) -> int:
    """--noise / --noise-from: the guest's OS noise, by class, and its preset."""
    if args.noise_from:
        out = Path(args.noise_from)
    else:
        if not 0 < args.noise <= 600:
            raise ScenarioError(f"{args.noise} s", key="--noise", allowed="a number of seconds from 0 to 600")
        out = _fresh_out(args, "results/measure-noise")
        with Stages(args.progress) as stages:
            header = noise.measure_noise(args.kernel, args.boots, args.noise, args.timeout, out / "raw", args.clock,
                                         on_boot=lambda k, w: stages.stage(f"boot {k + 1}/{args.boots}: {w:.0f} s"))
        (out / "header.txt").write_text("\n".join([f"command: python -m rcusim {shlex.join(args.argv)}"] + header)
                                        + "\n", encoding="utf-8")
    header, classified, spun_s, delays = noise.read_boots(out)
    streams = noise.noise_streams(classified, spun_s, noise.NR_CPUS, noise.TRACE_OVERHEAD_IRQ_NS)
    timer = noise.timer_delay_streams(delays, classified.boot.nunique())
    host = noise.host_stalls(classified, spun_s, noise.NR_CPUS)
    print(classified.groupby("kind").length_ns.describe(percentiles=[0.5, 0.99]).to_string())
    print(f"\n{'stream':<8} {'rate /s':>9} {'median us':>10} {'p99 us':>8} {'samples':>8}")
    for name, s in streams.items():
        print(f"{name:<8} {s.rate_hz:>9.1f} {s.median_us:>10.1f} {s.p99_us:>8.1f} {s.samples:>8}")
    print(f"\n{'timer delay':<12} {'median us':>10} {'p90 us':>8} {'p99 us':>8} {'max us':>8} {'samples':>8}")
    for name, s in timer.items():
        q = s.quantiles_us
        print(f"{name:<12} {q[500]:>10.1f} {q[900]:>8.1f} {q[990]:>8.1f} {q[-1]:>8.1f} {s.samples:>8}")
    q = host.stall.quantiles_us
    print(f"{'host stall':<12} {q[500]:>10.1f} {q[900]:>8.1f} {q[990]:>8.1f} {q[-1]:>8.1f} {host.stall.samples:>8}"
          f"   {host.rate_hz:.1f} /s")
    if args.write_preset:
        command = header_field(header, "command", f"python -m rcusim {shlex.join(args.argv)}")
        clock = header_field(header, "clock", "real")
        name = "qemu_tcg" if clock == "real" else f"qemu_tcg_{clock}"
        description = (f"The QEMU TCG guest of rcusim's twin ({clock} clock, {noise.NR_CPUS} vCPUs), measured in "
                       "the guest: " + "; ".join(line for line in header if not line.startswith("command: ")))
        Path(args.write_preset).write_text(noise.preset_yaml(name, description, streams, command, timer, host),
                                           encoding="utf-8")
        print(f"noise preset {name} written to {args.write_preset}", file=sys.stderr)
    return 0


#: What a profile says of the guest that its trace does not measure (the memory QEMU gives it, the
#: page lists' state as rcuscale's kfree test begins, the load helper's thread creation): kept from
#: the profile being written over.
CARRIED = ("memory_mb", "pcp_start_pages", "thread_start")


def _carried(path: Path) -> str:
    """The CARRIED entries of the profile at path, if it exists, as its YAML text gives them."""
    old = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
    return "".join(_entry(key, old[key]) for key in CARRIED if old and key in old)


def _entry(key: str, entry: dict, indent: int = 0) -> str:
    """A profile entry, {value, source}, or a section of them with its own source."""
    pad = " " * indent
    if "value" in entry:
        return f"{pad}{key}:\n{pad}  value: {entry['value']}\n" + folded("source", entry["source"], indent + 2)
    return (f"{pad}{key}:\n" + folded("source", entry["source"], indent + 2)
            + "".join(_entry(k, v, indent + 2) for k, v in entry.items() if k != "source"))


def _pcp_start(args) -> int:
    variant = args.variant or "kfree"
    runs = _runs(args.pcp_from, "--pcp-from", variant)
    est = pcp_start_pages(runs, variant)
    source = est.source(f"the boots in {', '.join(map(str, runs))} ({variant}), python -m rcusim "
                        f"{shlex.join(args.argv)}")
    print(f"pcp_start_pages:\n  value: {est.value}\n" + folded("source", source, 2), end="")
    return 0


def _runs(dirs, key: str, variant: str) -> list[Path]:
    runs = [Path(d) for d in dirs]
    for run in runs:
        if not (run / "raw" / variant).is_dir():
            raise ScenarioError(f"{str(run)!r} has no boots of {variant!r}", key=key,
                                allowed="a directory rcusim kernel wrote (its raw/<variant>/boot-N)")
    return runs


def _thread_start(args) -> int:
    variant = args.variant or "unpinned_1000"
    runs = _runs(args.thread_start_from, "--thread-start-from", variant)
    counts = _runs(args.call_rcu_from or [], "--call-rcu-from", variant)
    est = thread_start_costs(runs, counts, variant, profile_tracing("qemu-tcg")["event_ns"])
    command = (f"the boots in {', '.join(map(str, runs + counts))} ({variant}), python -m rcusim "
               f"{shlex.join(args.argv)}")
    section = {"source": ("The twin's load helper creating its threads (pthread_create() with an affinity "
                          "attribute, glibc starting each thread stopped on its start lock), timed in the "
                          "guest's trace before the calls; tracing less the profile's tracing.event_ns an "
                          "event")}
    section.update({name: {"value": est.values[name], "source": est.source(name, command)}
                    for name in THREAD_START_COSTS})
    print(_entry("thread_start", section), end="")
    return 0


def _reuse_from_boots(args):
    """--ttwu-reuse-from: the table from the boots in its directories."""
    dirs = [Path(d) for d in args.ttwu_reuse_from]
    for d in dirs:
        if not (d / "raw").is_dir():
            raise ScenarioError(f"{str(d)!r} has no boots", key="--ttwu-reuse-from",
                                allowed="a directory rcusim kernel wrote (its raw/<variant>/boot-N)")
    profile = "qemu-tcg-icount" if args.clock == "icount" else "qemu-tcg"
    return ttwu_reuse_from_boots(dirs, [args.variant] if args.variant else None, profile_tracing(profile)["event_ns"])


def _ttwu_reuse(args) -> int:
    table = _reuse_from_boots(args)
    print("ttwu_reuse:\n" + folded("source", f"{table.how()} [python -m rcusim {shlex.join(args.argv)}]", 2)
          + f"  since_ns: {table.since_ns}\n  ttwu_ns: {table.values_ns}\n", end="")
    return 0


def cmd_measure_guest(args) -> int:
    if args.ttwu_reuse_from and (args.pcp_from or args.thread_start_from):
        raise ScenarioError("--ttwu-reuse-from with --pcp-from or --thread-start-from", key="--ttwu-reuse-from",
                            allowed="one of them at a time")
    if args.ttwu_reuse_from and not args.write_profile:
        return _ttwu_reuse(args)
    if args.thread_start_from:
        return _thread_start(args)
    if args.pcp_from:
        return _pcp_start(args)
    if args.noise is not None or args.noise_from:
        return _noise(args)
    trace = Path(args.from_trace) if args.from_trace else _measure(args)
    if not trace.is_file():
        raise ScenarioError(f"{str(trace)!r} is not a file", key="--from-trace",
                            allowed="a trace.txt.gz that measure-guest wrote")
    events, header = read_trace(trace)
    estimates = estimate_costs(events, NR_CPUS, header_field(header, "clock", "real"))
    if args.ttwu_reuse_from:
        table, measured = _reuse_from_boots(args), estimates["ttwu_reuse"]
        estimates["ttwu_reuse"] = ReuseTable(table.since_ns, table.values_ns, table.how(), measured.in_cb_wakeme)
    print(f"{'cost':<24} {'value ns':>10} {'samples':>8} {'median ns':>11} {'p99 ns':>11}")
    for name, est in estimates.items():
        if isinstance(est, ReuseTable):
            bounds = [f"<= {b / 1000:g} us" for b in est.since_ns] + ["beyond"]
            print(f"{name:<24} " + ", ".join(f"{v} ({b})" for v, b in zip(est.values_ns, bounds)))
            continue
        print(f"{name:<24} {est.value:>10} {len(est.samples):>8} {np.median(est.samples):>11.0f} "
              f"{np.percentile(est.samples, 99):>11.0f}")
    print(f"\ntrace: {trace}")
    if args.write_profile:
        command = f"python -m rcusim {shlex.join(args.argv)}"
        measured = header_field(header, "command", command)
        if measured != command:
            command = f"{command}, on the trace of {measured}"
        path = Path(args.write_profile)
        text = profile_yaml(estimates, header, command).replace("\ncosts:\n", "\n" + _carried(path) + "costs:\n", 1)
        path.write_text(text, encoding="utf-8")
        print(f"profile written to {args.write_profile}", file=sys.stderr)
    return 0
