"""What a boot of the guest left, as the records and metrics a simulated run has.

* Requests: the load helper's lines (``task cpu t_start_ns t_end_ns``, CLOCK_MONOTONIC),
  or rcuscale's ``writer-duration`` lines (rcu_scale_cleanup()). rcuscale keeps only each
  call's duration, so a writer's calls are laid end to end from the test's start.
* Grace periods: the trace buffer's normal and expedited GPs
  (:func:`rcusim.results.ftrace_read.grace_periods`) that start while the workload runs.
* rcuscale's kfree test: its ``Total time taken by all kfree'ers`` line, as the engine's
  kfree metrics; the test's span ends at that line's printk in the trace.

Times are made relative to the workload's first call (or to the trace's first event), as
a simulated run's start at 0.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rcusim import _core
from rcusim.errors import ScenarioError
from rcusim.results.frames import make_requests_frame
from rcusim.results.ftrace_read import exp_marks, gp_marks, make_gps_from_marks, read_ftrace, time_breakdown
from rcusim.twin.plan import KFREE_DONE, GuestPlan

__all__ = ["BootRecords", "collect_boot", "kept_boots", "parse_rcuscale_writers", "parse_kfree_line", "trace_stats"]

_PRIM = _core.PRIMITIVES

_DMESG_PREFIX = re.compile(r"^(?:<\d+>)?\[\s*\d+\.\d+\]\s?")
_KFREE = re.compile(r"Total time taken by all kfree'ers: (\d+) ns, loops: (\d+), batches: (-?\d+)"
                    r"(?:, memory footprint: (-?\d+)MB)?")
_START = re.compile(r"-scale: start: (\d+) end: (\d+) duration: (\d+) gps: (\d+) batches: (-?\d+)")
_DURATION = re.compile(r"-scale:\s+(\d+) writer-duration:\s+(\d+) (\d+)")


@dataclass
class BootRecords:
    """One boot's records, times relative to its workload's start."""

    requests: pd.DataFrame
    gps: pd.DataFrame
    completion_ns: int
    kfree: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)
    breakdown: dict | None = None
    """The calls' time breakdown (rcusim.results.ftrace_read.time_breakdown), sums in ns."""


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines() if path.is_file() else []


def dmesg_lines(share: Path) -> list[str]:
    """The kernel's log without its timestamps."""
    return [_DMESG_PREFIX.sub("", line) for line in _lines(share / "dmesg.txt")]


def parse_rcuscale_writers(lines: list[str], nr_cpus: int, primitive: int) -> pd.DataFrame:
    """rcu_scale_cleanup()'s writer lines as requests: writer i is task i on CPU i % nr_cpus
    (rcu_scale_writer() binds it there), its calls laid end to end from the test's start."""
    start = next((m for m in map(_START.search, lines) if m), None)
    durations: dict[int, list[int]] = {}
    for m in filter(None, map(_DURATION.search, lines)):
        durations.setdefault(int(m[1]), []).append(int(m[3]))
    if start is None or not durations:
        raise ScenarioError("rcuscale printed no writer measurements", key="kernel",
                            allowed="a writer test that completes (see the boot's dmesg.txt)")
    task, cpu, t0, t1 = [], [], [], []
    for w, d in sorted(durations.items()):
        ends = int(start[1]) + np.cumsum(np.asarray(d, dtype=np.int64))
        task += [w] * len(d)
        cpu += [w % nr_cpus] * len(d)
        t0.append(ends - np.asarray(d, dtype=np.int64))
        t1.append(ends)
    return make_requests_frame(task, cpu, np.full(len(task), primitive), np.concatenate(t0), np.concatenate(t1))


def parse_kfree_line(lines: list[str]) -> dict:
    """rcuscale's kfree line as the engine's kfree metrics (kfree_metrics())."""
    m = next((m for m in map(_KFREE.search, lines) if m), None)
    if m is None:
        raise ScenarioError("rcuscale printed no kfree result", key="kernel",
                            allowed="a kfree test that completes (see the boot's dmesg.txt)")
    return {"total_time_ns": int(m[1]), "loops": int(m[2]), "batches": int(m[3]),
            "memory_footprint_mb": None if m[4] is None else int(m[4])}


def trace_stats(share: Path) -> dict:
    """Entries and overruns summed over the guest's per-CPU trace buffers: overruns mean
    events were lost and the GP table has holes."""
    out = {"entries": 0, "overrun": 0}
    for line in _lines(share / "trace-stats.txt"):
        key, _, value = line.partition(":")
        if key.strip() in out:
            out[key.strip()] += int(value.split()[0])
    return out


def _helper_requests(plan: GuestPlan, share: Path) -> pd.DataFrame:
    frames, first_task = [], 0
    for run in plan.sync_loops:
        path = share / Path(run.output).name
        rows = np.loadtxt(path, dtype=np.int64, ndmin=2) if path.is_file() else None
        if rows is None or rows.shape[1] != 4:
            raise ScenarioError(f"the load helper left no calls for {run.name} (see plan.log)", key="kernel",
                                allowed="a workload the guest can run")
        frames.append((rows[:, 0] + first_task, rows[:, 1], rows[:, 2], rows[:, 3]))
        first_task += run.tasks
    cols = [np.concatenate(c) for c in zip(*frames)]
    order = np.lexsort((cols[2], cols[0]))
    return make_requests_frame(cols[0][order], cols[1][order], np.zeros(len(order), np.int8),
                               cols[2][order], cols[3][order])


def collect_boot(plan: GuestPlan, share: Path) -> BootRecords:
    """The records of the boot whose share folder is `share`."""
    events = read_ftrace(_lines(share / "trace.txt"))
    marks = gp_marks(events)
    lines = dmesg_lines(share)
    kfree = {}
    if plan.sync_loops:
        requests = _helper_requests(plan, share)
    elif plan.rcuscale.get("kfree_rcu_test"):
        kfree = parse_kfree_line(lines)
        requests = make_requests_frame([], [], [], [], [])
    else:
        prim = ("call_rcu_hurry" if plan.rcuscale["gp_async"] else
                "synchronize_rcu_expedited" if plan.rcuscale["gp_exp"] else "synchronize_rcu")
        requests = parse_rcuscale_writers(lines, plan.nr_cpus, _PRIM[prim])
    if kfree:
        # The last kfree thread prints its line right after end_time: the test ran for
        # total_time_ns up to that message (printk's console tracepoint, on the trace's clock).
        said = events["t_ns"][(events["event"] == "console") & events["payload"].str.contains(KFREE_DONE)]
        if len(said) == 0:
            raise ScenarioError("the trace lacks rcuscale's kfree line (printk:console)", key="kernel",
                                allowed="an image with the printk tracepoints")
        t1 = int(said.iloc[0])
        t0 = t1 - kfree["total_time_ns"]
    elif len(requests):
        t0, t1 = int(requests["t_start_ns"].min()), int(requests["t_end_ns"].max())
    else:
        t0 = t1 = int(events["t_ns"].min()) if len(events) else 0
    # The workload's span on the trace's clock, for tracediff (kept with the raw files).
    (share / "window.json").write_text(json.dumps({"t0_ns": t0, "t1_ns": t1}) + "\n")
    # rcuscale keeps its writers' durations only: their calls' places in the trace are not known.
    breakdown = time_breakdown(events, requests, marks) if plan.sync_loops else None
    marks = marks[(marks["t_start_ns"] >= t0) & (marks["t_start_ns"] <= t1)]
    exp = exp_marks(events)
    gps = make_gps_from_marks(marks, exp[(exp["t_start_ns"] >= t0) & (exp["t_start_ns"] <= t1)])
    for frame in (requests, gps):
        for col in ("t_start_ns", "t_end_ns"):
            frame[col] = frame[col].to_numpy() - t0
    return BootRecords(requests=requests, gps=gps, completion_ns=t1 - t0, kfree=kfree, stats=trace_stats(share),
                       breakdown=breakdown)


def kept_boots(run_dirs, variant: str) -> list[tuple[Path, dict]]:
    """Each boot of `variant` that one or more ``rcusim kernel`` run directories kept (its
    raw/<variant>/boot-N), with the window collect_boot() wrote for it: its workload's span on
    the trace's clock, ``{t0_ns, t1_ns}``."""
    dirs = [run_dirs] if isinstance(run_dirs, (str, Path)) else run_dirs
    return [(boot, json.loads((boot / "window.json").read_text()))
            for d in dirs for boot in sorted((Path(d) / "raw" / variant).glob("boot-*"))]
