"""``python -m rcusim measure-guest``: the QEMU guest's platform costs, measured from its own
trace (rcusim/twin/measure.py), and the ``qemu-tcg`` hardware profile written from them.

Boots the twin's guest ``--boots`` times, keeps each boot's files and the pooled trace
(``trace.txt.gz``, timestamps in ns) under ``--out``, and prints every cost with the
samples it rests on. ``--from-trace`` derives from such a trace instead of booting.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from pathlib import Path

import numpy as np

from rcusim.errors import ScenarioError
from rcusim.progress import Stages
from rcusim.twin.qemu import CLOCKS
from rcusim.twin.measure import NR_CPUS, estimate_costs, measure_boots, profile_yaml, read_trace, write_trace

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
    p.add_argument("--timeout", type=float, default=300.0, metavar="S",
                   help="longest boot, in seconds of wall time (default: %(default)s)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction,
                   help="show each boot on stderr (default: when stderr is a terminal)")
    p.set_defaults(func=cmd_measure_guest)


def _measure(args) -> Path:
    """Boot, keep the boots' files under --out; the pooled trace's path."""
    if not 1 <= args.boots <= 100:
        raise ScenarioError(f"{args.boots} boots", key="--boots", allowed="an integer from 1 to 100")
    out = Path(args.out or "results/measure-guest")
    if out.exists() and not args.force:
        raise ScenarioError(f"{str(out)!r} exists and would be replaced", key="--out",
                            allowed="--force to replace it, or another --out")
    shutil.rmtree(out, ignore_errors=True)
    with Stages(args.progress) as stages:
        stages.stage(f"{args.boots} boots")
        header, boots = measure_boots(args.kernel, args.boots, args.timeout, out / "raw",
                                      on_boot=lambda k, wall: stages.stage(f"boot {k + 1}/{args.boots}: {wall:.0f} s"),
                                      clock=args.clock)
    trace = out / "trace.txt.gz"
    write_trace(trace, [f"command: python -m rcusim {shlex.join(args.argv)}"] + header, boots)
    return trace


def cmd_measure_guest(args) -> int:
    trace = Path(args.from_trace) if args.from_trace else _measure(args)
    if not trace.is_file():
        raise ScenarioError(f"{str(trace)!r} is not a file", key="--from-trace",
                            allowed="a trace.txt.gz that measure-guest wrote")
    events, header = read_trace(trace)
    estimates = estimate_costs(events, NR_CPUS)
    print(f"{'cost':<24} {'value ns':>10} {'samples':>8} {'median ns':>11} {'p99 ns':>11}")
    for name, est in estimates.items():
        print(f"{name:<24} {est.value:>10} {len(est.samples):>8} {np.median(est.samples):>11.0f} "
              f"{np.percentile(est.samples, 99):>11.0f}")
    print(f"\ntrace: {trace}")
    if args.write_profile:
        command = f"python -m rcusim {shlex.join(args.argv)}"
        measured = next((line.split(": ", 1)[1] for line in header if line.startswith("command: ")), command)
        if measured != command:
            command = f"{command}, on the trace of {measured}"
        Path(args.write_profile).write_text(profile_yaml(estimates, header, command), encoding="utf-8")
        print(f"profile written to {args.write_profile}", file=sys.stderr)
    return 0
