"""``python -m rcusim compare A B``: two results side by side, with ratios.

A and B are results directories written by ``python -m rcusim run`` (or their
``summary.json`` files). Each variant of B is set against the variant of A with
the same name, or against A's first variant: one block per variant of B, with a
row per metric, A's value, B's and B/A, fits an 80-column terminal; ``--wide``
prints one table with a column per variant of each and the ratios after them.
Given ``--plot FILE``, and when both directories hold ``latencies.parquet``,
the latency histograms of every variant are overlaid in one figure.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from rcusim.errors import ScenarioError
from rcusim.input.scenario import SUMMARY_MAX_BYTES, read_text_file
from rcusim.plots import LatencyHistogramDisplay
from rcusim.plots.axes import agg_figure
from rcusim.results.spread import SPREAD_KEYS, pooled, ratio_spread, read_boots, read_rows
from rcusim.results.text import text_table

__all__ = ["load_summary", "flatten_metrics", "compare_table", "figures_table", "add_parser", "cmd_compare"]

#: Metrics shown first, in this order; any other numeric metric follows, by name.
HEADLINE = ["completion_time_s", "latency_us.count", "latency_us.min", "latency_us.mean", "latency_us.p50",
            "latency_us.p90", "latency_us.p99", "latency_us.max", "grace_periods", "expedited_grace_periods",
            "batching", "events"]


def _summary_path(source) -> Path:
    path = Path(source)
    if path.is_dir():
        path = path / "summary.json"
    if not path.is_file():
        raise ScenarioError(f"no results at {str(source)!r}", key="compare",
                            allowed="a results directory of 'rcusim run' or its summary.json")
    return path


def load_summary(source) -> dict:
    """Read ``summary.json`` from a results directory or the file itself."""
    path = _summary_path(source)
    text = read_text_file(path, str(path), "summary", "a summary.json written by 'rcusim run'",
                          max_bytes=SUMMARY_MAX_BYTES)
    try:
        summary = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"cannot read {str(path)!r}: {exc}", key="compare",
                            allowed="a summary.json written by 'rcusim run'") from None
    if not isinstance(summary, dict) or not isinstance(summary.get("variants"), dict) or not summary["variants"]:
        raise ScenarioError(f"{str(path)!r} has no variants", key="compare",
                            allowed="a summary.json written by 'rcusim run'")
    return summary


def flatten_metrics(variant: dict) -> dict[str, float]:
    """One variant's numeric metrics (and event count) under dotted names."""
    out = {}

    def walk(prefix, value):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[prefix] = value

    walk("", variant.get("metrics", {}))
    if "events" in variant:
        out["events"] = variant["events"]
    return out


def _labels(a, b) -> tuple[str, str]:
    la, lb = Path(a).resolve(), Path(b).resolve()
    la = la.parent.name if la.name == "summary.json" else la.name
    lb = lb.parent.name if lb.name == "summary.json" else lb.name
    return (la, lb) if la != lb else ("A", "B")


def compare_table(a: dict, b: dict, label_a: str = "A", label_b: str = "B", wide: bool = False) -> str:
    """The side-by-side table of two summaries, as text: one block of at most 80 characters per
    variant of B, with its metrics (column B), those of the variant of A it is set against
    (column A) and the ratios; or, `wide`, one table of every variant of both and the ratios."""
    va, vb = a["variants"], b["variants"]
    ma = {n: flatten_metrics(v) for n, v in va.items()}
    mb = {n: flatten_metrics(v) for n, v in vb.items()}
    first_a = next(iter(va))
    pairs = [(nb, nb if nb in va else first_a) for nb in vb]
    found = [*ma.values(), *mb.values()]
    keys = [k for k in HEADLINE if any(k in m for m in found)]
    keys += sorted({k for m in found for k in m} - set(keys))

    def ratio(key, nb, na):
        x, base = mb[nb].get(key), ma[na].get(key)
        return _fmt(None if x is None or not base else x / base)

    if wide:
        header = (["metric"] + [f"{label_a}:{n}" for n in va] + [f"{label_b}:{n}" for n in vb]
                  + [f"{label_b}:{nb}/{label_a}:{na}" for nb, na in pairs])
        body = [[key] + [_fmt(ma[n].get(key)) for n in va] + [_fmt(mb[n].get(key)) for n in vb]
                + [ratio(key, nb, na) for nb, na in pairs] for key in keys]
        return text_table(header, body)
    blocks = []
    for nb, na in pairs:
        body = [[key, _fmt(ma[na].get(key)), _fmt(mb[nb].get(key)), ratio(key, nb, na)]
                for key in keys if key in ma[na] or key in mb[nb]]
        blocks.append(f"B = {label_b}:{nb} against A = {label_a}:{na}\n"
                      + text_table(["metric", "A", "B", "B/A"], body))
    alone = [n for n in va if n not in {na for _, na in pairs}]
    if alone:
        blocks.append(f"{label_a}'s variants {', '.join(alone)} have none of {label_b}'s against them "
                      "(--wide shows them)")
    return "\n\n".join(blocks)


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, int):
        return str(x)
    return f"{x:.3f}"


def save_overlaid_histogram(sources, labels, path, *, log2: bool = True) -> bool:
    """Overlay the latency histograms of every variant of each results directory.

    Returns False (and writes nothing) unless every directory has ``latencies.parquet``.
    """
    import pandas as pd

    files = [Path(s) if Path(s).is_dir() else Path(s).parent for s in sources]
    files = [f / "latencies.parquet" for f in files]
    if not all(f.is_file() for f in files):
        return False
    arrays, names = [], []
    for f, label in zip(files, labels):
        frame = pd.read_parquet(f, columns=["variant", "t_start_ns", "t_end_ns"])
        for name, group in frame.groupby("variant", sort=False, observed=True):
            arrays.append((group["t_end_ns"].to_numpy(dtype=np.int64) - group["t_start_ns"].to_numpy(dtype=np.int64))
                          / 1e3)
            names.append(f"{label}:{name}")
    fig, ax = agg_figure(figsize=(9, 5.5))
    LatencyHistogramDisplay(arrays, names, log2=log2).plot(ax=ax)
    ax.set_title(f"request latency: {labels[0]} vs {labels[1]}")
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
    return True


#: The figures ``compare --figures`` sets side by side: (label, dotted metric or a gps.parquet figure).
FIGURES = (("latency mean (µs)", "latency_us.mean"), ("latency p50 (µs)", "latency_us.p50"),
           ("latency p99 (µs)", "latency_us.p99"), ("latency max (µs)", "latency_us.max"),
           ("grace periods", "grace_periods"), ("expedited grace periods", "expedited_grace_periods"),
           ("GP length mean (µs)", "gps:mean_length_us"),
           ("kfree footprint (MB)", "memory_footprint_mb"), ("kfree batches", "batches"),
           ("kfree total time (ms)", "total_time_ms"))

#: The agreement asked of a simulation beside a measurement, as B/A's largest distance from 1
#: (the real-kernel validation's goals, docs/validation.md); figures not here have none.
AGREEMENT = {"latency mean (µs)": 0.10, "latency p50 (µs)": 0.10, "latency p99 (µs)": 0.25,
             "latency max (µs)": 0.50, "grace periods": 0.15, "expedited grace periods": 0.15,
             "GP length mean (µs)": 0.15, "kfree footprint (MB)": 0.30, "kfree batches": 0.15}


def _agrees(label: str, x, y) -> str:
    """"✓" if B (y) meets A's (x) agreement goal for figure `label`, "miss" if not, "-" if it has
    none or both are zero (nothing to compare)."""
    tol = AGREEMENT.get(label)
    if tol is None or (not x and not y):
        return "-"
    if x is None or y is None or x == 0:
        return "miss"
    return "✓" if abs(y / x - 1) <= tol else "miss"


def figures_table(a, b, label_a: str = "A", label_b: str = "B") -> str:
    """The validation figures (:data:`FIGURES`) of every variant the two results share, as a
    Markdown table: A, B, B/A, the range B/A takes over 90 % of draws of each side's boots and
    runs (rcusim.results.spread) and whether B meets the agreement goal (:data:`AGREEMENT`);
    then how many figures do, and how many misses reach the goal within that range."""
    sa, sb = load_summary(a), load_summary(b)
    calls_and_gps = [read_rows(Path(x) if Path(x).is_dir() else Path(x).parent) for x in (a, b)]
    rows = [f"| variant | figure | {label_a} | {label_b} | {label_b}/{label_a} | over boots (90 %) | goal |",
            "|---|---|---|---|---|---|---|"]
    verdicts, reachable = [], 0
    for name in [n for n in sa["variants"] if n in sb["variants"]]:
        ma, mb = (flatten_metrics(s["variants"][name]) for s in (sa, sb))
        boots = [read_boots(r, name, s["variants"][name].get("metrics", {})) for r, s in zip(calls_and_gps, (sa, sb))]
        for label, key in FIGURES:
            if key == "gps:mean_length_us":
                x, y = (pooled(bt, key) for bt in boots)
            elif key == "total_time_ms":
                x, y = (None if m.get("total_time_ns") is None else m["total_time_ns"] / 1e6 for m in (ma, mb))
            else:
                x, y = ma.get(key), mb.get(key)
            if x is None and y is None:
                continue
            ratio = "-" if x in (None, 0) or y is None else f"{y / x:.2f}"
            verdict = _agrees(label, x, y)
            spread = (ratio_spread(*boots, key) if key in SPREAD_KEYS and None not in boots and x and y is not None
                      else None)
            verdicts.append(verdict)
            if verdict == "miss" and spread is not None and _reaches(label, spread):
                reachable += 1
            shown = "-" if spread is None else f"{spread[0]:.2f}-{spread[1]:.2f}"
            rows.append(f"| {name} | {label} | {_fmt(x)} | {_fmt(y)} | {ratio} | {shown} | {verdict} |")
    met, goals = verdicts.count("✓"), len(verdicts) - verdicts.count("-")
    return ("\n".join(rows) + f"\n\n{met} of {goals} figures meet their goal; {reachable} of the "
            f"{verdicts.count('miss')} misses reach it within their range over the boots.")


def _reaches(label: str, spread: tuple[float, float]) -> bool:
    """Whether a ratio range meets figure `label`'s agreement goal somewhere."""
    tol = AGREEMENT[label]
    return spread[0] <= 1 + tol and spread[1] >= 1 - tol


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="compare two results side by side")
    p.add_argument("a", metavar="A", help="results directory (or summary.json): the baseline")
    p.add_argument("b", metavar="B", help="results directory (or summary.json) to compare with A")
    p.add_argument("--wide", action="store_true",
                   help="one table of every variant of both, however wide (default: a block per variant of B)")
    p.add_argument("--plot", metavar="FILE",
                   help="write the latency histograms of both, overlaid, to this PNG file (both need "
                        "latencies.parquet)")
    p.add_argument("--linear", action="store_true", help="linear histogram buckets (default: log2)")
    p.add_argument("--figures", action="store_true",
                   help="only the validation figures of the variants both share (latency mean, p50, p99, max, "
                        "GP count and mean length, kfree footprint), as a Markdown table, with the range B/A "
                        "takes over 90 %% of 1,000 draws of each side's boots or runs (a bootstrap of whole boots)")
    p.set_defaults(func=cmd_compare)


def cmd_compare(args) -> int:
    a, b = load_summary(args.a), load_summary(args.b)
    label_a, label_b = _labels(args.a, args.b)
    if args.figures:
        print(figures_table(args.a, args.b, label_a, label_b))
        return 0
    print(compare_table(a, b, label_a, label_b, wide=args.wide))
    if args.plot is None:
        return 0
    try:
        if save_overlaid_histogram([args.a, args.b], [label_a, label_b], args.plot, log2=not args.linear):
            print(f"\noverlaid latency histogram written to {args.plot}")
        else:
            print("rcusim: note: --plot: no histogram written, as A and B do not both hold latencies.parquet",
                  file=sys.stderr)
    except OSError as exc:
        raise ScenarioError(f"cannot write {str(args.plot)!r}: {exc.strerror or exc}", key="--plot") from None
    return 0
