"""``python -m rcusim tracediff A B``: two traces of one scenario aligned GP by GP.

A and B are results directories of ``rcusim kernel`` (and the ``-sim`` directory its
``--twin`` writes) or ftrace text files (``run --ftrace``'s, or a kernel's ``trace``);
see :mod:`rcusim.results.tracediff`.
"""

from __future__ import annotations

from rcusim.errors import ScenarioError
from rcusim.results.tracediff import load_side, tracediff_report

__all__ = ["add_parser", "cmd_tracediff"]


def add_parser(sub) -> None:
    p = sub.add_parser("tracediff", help="align two traces GP by GP and show where their time differs")
    p.add_argument("a", metavar="A", help="results directory with raw/ traces, or an ftrace text file (.gz too)")
    p.add_argument("b", metavar="B", help="the same for the other side")
    p.add_argument("--variant", help="the variant to compare (default: the first with traces)")
    p.add_argument("--rows", type=int, default=10, help="aligned GPs shown one by one (default: %(default)s)")
    p.set_defaults(func=cmd_tracediff)


def cmd_tracediff(args) -> int:
    if args.rows < 0:
        raise ScenarioError(f"{args.rows}", key="--rows", allowed="an integer >= 0")
    try:
        a, b = load_side(args.a, args.variant), load_side(args.b, args.variant)
    except OSError as exc:
        raise ScenarioError(f"cannot read a trace: {exc.strerror or exc}", key="tracediff") from None
    print(tracediff_report(a, b, rows=args.rows))
    return 0
