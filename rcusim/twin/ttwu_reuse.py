"""try_to_wake_up()'s cost by the time since its CPU last woke a task, from the twin's boots.

The ``qemu-tcg`` profile's ``ttwu_reuse`` prices a wake-up by how long ago the waker's CPU made
its previous one (engine: ``ttwu_reuse()``). measure-guest's own boots hold about a thousand
local wake-ups, and a few dozen in the shortest bins. The twin's boots of the callers hold a
hundred times more of the same quantity: every local wake-up (``sched_waking`` and
``sched_wakeup`` on the waker's CPU, the wakee enqueued there), from a callback's
``complete()``, a timer, the load helper's release of its threads, timed from the CPU's
previous ``sched_waking``. As measure-guest's, a sample is a pair with no event between them
on that CPU, the ``sched_wakeup`` the same task's and enqueued there, less one tracepoint's
cost (the profile's ``tracing.event_ns``). These traces print microseconds, so each sample is
whole microseconds less that.
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
from rcusim.twin.measure import reuse_bins, reuse_bins_how

__all__ = ["ReuseFromBoots", "boot_samples", "ttwu_reuse_from_boots"]

_TARGET = re.compile(r" pid=(\d+) .*target_cpu=(\d+)")


@dataclass(frozen=True)
class ReuseFromBoots:
    """The table (bins' upper bounds and medians, ns), each bin's samples, and the boots read."""

    since_ns: list[int]
    values_ns: list[int]
    counts: list[int]
    boots: int

    def how(self) -> str:
        return (f"try_to_wake_up()'s cost by the time since the waker's CPU last woke a task (its previous "
                f"sched_waking): {sum(self.counts)} local wake-ups (sched_waking to the same task's sched_wakeup "
                f"on the waker's CPU, the wakee enqueued there, no event between) in {self.boots} boots, "
                f"{reuse_bins_how(self.counts)}, each sample whole microseconds (the boots' trace clock) less one tracepoint (the profile's "
                f"tracing.event_ns): from {min(self.values_ns)} to {max(self.values_ns)} ns.")


def boot_samples(lines, event_ns: int) -> tuple[list[int], list[int]]:
    """Each local wake-up of one boot's trace: the time since its CPU's previous sched_waking,
    and its cost less its tracing (ns)."""
    ev = read_ftrace(lines)
    since, cost = [], []
    last = {}  # CPU -> its last sched_waking
    waking = {}  # CPU -> (its open sched_waking's time, the wakee, the time since the one before)
    for t, cpu, event, payload in zip(ev["t_ns"].to_numpy(), ev["cpu"].to_numpy(), ev["event"].to_numpy(),
                                      ev["payload"].to_numpy()):
        m = _TARGET.search(payload) if event in ("sched_waking", "sched_wakeup") else None
        pair = waking.pop(cpu, None)
        if event == "sched_waking":
            before = last.get(cpu)
            last[cpu] = t
            if m and int(m.group(2)) == cpu and before is not None:
                waking[cpu] = (t, m.group(1), t - before)
        elif event == "sched_wakeup" and pair and m and m.group(1) == pair[1] and int(m.group(2)) == cpu:
            since.append(int(pair[2]))
            cost.append(int(t - pair[0] - event_ns))
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
