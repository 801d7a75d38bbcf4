"""try_to_wake_up()'s cost by the time since its CPU last woke a task, from the twin's boots.

The ``qemu-tcg`` profile's ``ttwu_reuse`` prices a wake-up by how long ago the waker's CPU made
its previous one (engine: ``ttwu_reuse()``). measure-guest's own boots hold about a thousand
local wake-ups, and a few dozen in the shortest bins. The twin's boots of the callers hold a
hundred times more of the same quantity: every local wake-up (``sched_waking`` and
``sched_wakeup`` on the waker's CPU, the wakee enqueued there), from a callback's
``complete()``, a timer, the load helper's release of its threads, timed from the CPU's
previous ``sched_waking``. Each sample is less its tracing, as measure-guest's are: the events
its CPU recorded between the two, and one for the pair, the profile's ``tracing.event_ns``
each. These traces print microseconds, so each sample is whole microseconds less that.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rcusim.errors import ScenarioError
from rcusim.results.ftrace_read import read_ftrace
from rcusim.twin.collect import kept_boots
from rcusim.twin.measure import reuse_bins

__all__ = ["ReuseFromBoots", "boot_samples", "ttwu_reuse_from_boots"]

_TARGET = re.compile(r"target_cpu=(\d+)")


@dataclass(frozen=True)
class ReuseFromBoots:
    """The table (bins' upper bounds and medians, ns), each bin's samples, and the boots read."""

    since_ns: list[int]
    values_ns: list[int]
    counts: list[int]
    boots: int

    def how(self) -> str:
        return (f"try_to_wake_up()'s cost by the time since the waker's CPU last woke a task (its previous "
                f"sched_waking): {sum(self.counts)} local wake-ups (sched_waking to sched_wakeup on the waker's "
                f"CPU, the wakee enqueued there) in {self.boots} boots of the twin's callers, in bins of that "
                f"time up to 10, 20, 50 us ... 10 ms and beyond (one of fewer than 20 samples joined to the "
                f"next: {', '.join(map(str, self.counts))} samples), each bin's median, each sample whole "
                f"microseconds (the boots' trace clock) less its tracing ((events inside + 1) x the profile's "
                f"tracing.event_ns): from {min(self.values_ns)} to {max(self.values_ns)} ns.")


def boot_samples(lines, event_ns: int) -> tuple[list[int], list[int]]:
    """Each local wake-up of one boot's trace: the time since its CPU's previous sched_waking,
    and its cost less its tracing (ns)."""
    ev = read_ftrace(lines)
    since, cost = [], []
    last = {}  # CPU -> its last sched_waking
    open_ = {}  # CPU -> (sched_waking's time, time since the one before, events since)
    for t, cpu, event, payload in zip(ev["t_ns"].to_numpy(), ev["cpu"].to_numpy(), ev["event"].to_numpy(),
                                      ev["payload"].to_numpy()):
        if event == "sched_waking":
            m = _TARGET.search(payload)
            before = last.get(cpu)
            last[cpu] = t
            if m and int(m.group(1)) == cpu and before is not None:
                open_[cpu] = (t, t - before, 0)
            else:
                open_.pop(cpu, None)
        elif event == "sched_wakeup" and cpu in open_:
            t0, gap, inside = open_.pop(cpu)
            since.append(int(gap))
            cost.append(int(t - t0 - (inside + 1) * event_ns))
        elif cpu in open_:
            t0, gap, inside = open_[cpu]
            open_[cpu] = (t0, gap, inside + 1)
    return since, cost


def ttwu_reuse_from_boots(run_dirs, variants, event_ns: int) -> ReuseFromBoots:
    """The table from every boot of `variants` (every variant kept, if None) in one or more
    ``rcusim kernel`` run directories."""
    since, cost, boots = [], [], 0
    for run in map(Path, run_dirs):
        names = variants or sorted(p.name for p in (run / "raw").iterdir() if p.is_dir())
        for variant in names:
            for boot, _window in kept_boots(run, variant):
                with gzip.open(boot / "trace.txt.gz", "rt") as f:
                    s, c = boot_samples(f, event_ns)
                since += s
                cost += c
                boots += 1
    if not boots:
        raise ScenarioError(f"no boot in {', '.join(map(str, run_dirs))}", key="--ttwu-reuse-from",
                            allowed="a directory rcusim kernel wrote (its raw/<variant>/boot-N)")
    edges, values, counts = reuse_bins(np.array(since, dtype=np.int64), np.array(cost, dtype=np.int64),
                                       "--ttwu-reuse-from")
    return ReuseFromBoots(edges, values, counts.tolist(), boots)
