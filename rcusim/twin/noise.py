"""The guest's own OS noise: what takes a vCPU away from a task that never blocks.

rcusim_noise (guest/rcusim_noise.c) spins on every vCPU reading CLOCK_MONOTONIC and logs
each gap between two reads; the guest's trace, on the same clock, says what ran in it:

* ``tick``: the local timer interrupt (and the softirqs it raised), which rcusim models
  itself (the profile's ``tick_ns``): counted, kept out of the preset;
* ``irq``: any other interrupt or softirq;
* ``host``: nothing the guest traced: the host took the vCPU's thread (QEMU's other
  threads, the host's own tasks), which the guest sees as time lost, as the osnoise
  tracer's "HW noise";
* ``thread``: another task ran (a kworker, ksoftirqd): rcusim's ``kthread`` stream. RCU's
  own kthreads are left out: rcusim models them.

The preset gives rcusim's two noise streams per CPU: ``irq`` (interrupts and host
gaps, as the ``noisy_vm`` preset counts hardware noise) and ``kthread``, each a Poisson
rate and a log-normal duration by its median and 99th percentile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rcusim.errors import ScenarioError
from rcusim.results.ftrace_read import read_ftrace
from rcusim.twin.measure import NR_CPUS, boot_each, folded
from rcusim.twin.qemu import command_line

__all__ = ["NOISE_EVENTS", "TRACE_OVERHEAD_IRQ_NS", "noise_script", "measure_noise", "read_boots", "classify_gaps",
           "NoiseStream", "noise_streams", "preset_yaml", "read_gaps"]

#: The shortest gap logged, ns: the spin loop's own iterations stay under it.
GAP_NS = 5000

#: RCU's kthreads, which rcusim models: their runs are not noise.
RCU_KTHREADS = re.compile(r"^(rcu_preempt|rcu_sched|rcuog/\d+|rcuop/\d+|rcuc/\d+|rcub/\d+)$")

_TRACE = "/sys/kernel/tracing/instances/rcusim-noise"
NOISE_EVENTS = ("irq/irq_handler_entry", "irq/softirq_entry", "irq_vectors/local_timer_entry",
                "irq_vectors/call_function_entry", "irq_vectors/call_function_single_entry",
                "irq_vectors/reschedule_entry", "sched/sched_switch")

#: One traced event's own cost in an interrupt, ns: the qemu-tcg profile's trace_overhead_irq_ns
#: (csd_function_entry to _exit of do_sync_core(), median over 5 boots; python -m rcusim
#: measure-guest --boots 5, rcusim/profiles/qemu-tcg.yaml's description).
TRACE_OVERHEAD_IRQ_NS = 3231

#: Guest command line of the measurement (as rcusim kernel boots a scenario without bootargs).
CMDLINE = ()


def noise_script(seconds: float, nr_cpus: int = NR_CPUS) -> str:
    """/out/plan.sh: a trace instance on CLOCK_MONOTONIC, the spinners, the trace copied out."""
    lines = ["set -e", f"mkdir {_TRACE}", f"cd {_TRACE}", "echo mono > trace_clock", "echo 16384 > buffer_size_kb"]
    lines += [f"echo 1 > events/{e}/enable" for e in NOISE_EVENTS]
    lines += ["echo 1 > tracing_on", "cd /",
              f"/bin/rcusim_noise -n {nr_cpus} -d {int(seconds * 1e9)} -g {GAP_NS} -o /out/gaps.txt",
              f"echo 0 > {_TRACE}/tracing_on", f"cat {_TRACE}/per_cpu/cpu*/stats > /out/trace-stats.txt",
              f"cat {_TRACE}/trace > /out/trace.txt"]
    return "\n".join(lines) + "\n"


def measure_noise(kernel, boots: int, seconds: float, timeout_s: float, keep: Path, clock: str = "real",
                  on_boot=None) -> list[str]:
    """Boot the guest `boots` times with :func:`noise_script`, each boot's files under
    ``keep/boot-<k>/``; returns the header lines (image, QEMU command, retried boots)."""
    image, argv, oopses = boot_each(kernel, noise_script(seconds), CMDLINE, boots, timeout_s, keep, clock, on_boot)
    return [f"clock: {clock}", f"image: {image.path} (Linux {image.version}, HZ={image.hz}, sha256 {image.digest})",
            f"qemu: {command_line(argv)}", f"spin: {seconds:g} s on each of {NR_CPUS} vCPUs, gaps over {GAP_NS} ns",
            f"boots: {boots}, each after its guest's oopses, if any, booted again: {'; '.join(oopses) or 'none'}"]


def read_boots(out: Path) -> tuple[list[str], pd.DataFrame, float]:
    """The header, every boot's classified gaps, and the seconds each vCPU spun in all, from a
    --noise run's folder (header.txt, raw/boot-<k>/gaps.txt and trace.txt)."""
    try:
        header = (out / "header.txt").read_text(encoding="utf-8").splitlines()
        seconds = float(next(line for line in header if line.startswith("spin: ")).split()[1])
    except (OSError, StopIteration, ValueError, IndexError):
        raise ScenarioError(f"{str(out)!r} holds no noise measurement", key="--noise-from",
                            allowed="the --out of an earlier measure-guest --noise run") from None
    boots = sorted((out / "raw").glob("boot-*"), key=lambda p: int(p.name.split("-")[1]))
    classified = [classify_gaps(read_gaps(b / "gaps.txt"), read_events(b / "trace.txt")).assign(boot=k)
                  for k, b in enumerate(boots)]
    if not classified:
        raise ScenarioError(f"{str(out)!r} holds no boot", key="--noise-from",
                            allowed="the --out of an earlier measure-guest --noise run")
    return header, pd.concat(classified, ignore_index=True), seconds * len(boots)


def read_gaps(path: Path) -> pd.DataFrame:
    """rcusim_noise's lines: cpu, t_start_ns, length_ns."""
    return pd.read_csv(path, sep=" ", names=["cpu", "t_start_ns", "length_ns"], dtype="int64")


def read_events(path: Path) -> pd.DataFrame:
    """The trace's events (:func:`~rcusim.results.ftrace_read.read_ftrace`'s columns), and for a
    sched_switch the task switched in (``next_comm``)."""
    with open(path, errors="replace") as f:
        events = read_ftrace(f)
    switch = events.event == "sched_switch"
    events["next_comm"] = ""
    events.loc[switch, "next_comm"] = events.payload[switch].str.extract(r"next_comm=(.*?) next_pid=", expand=False)
    return events


def classify_gaps(gaps: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    """Each gap's kind (tick, irq, host, thread, rcu) from the events its CPU traced in it,
    and its number of traced events."""
    kinds, counts = [], []
    for cpu, group in gaps.groupby("cpu", sort=False):
        ev = events[events.cpu == cpu].sort_values("t_ns")
        t = ev.t_ns.to_numpy()
        # The trace prints microseconds: an event up to 1 us outside the gap may be in it.
        lo = np.searchsorted(t, group.t_start_ns.to_numpy() - 1000, side="left")
        hi = np.searchsorted(t, (group.t_start_ns + group.length_ns).to_numpy() + 1000, side="right")
        for i, j in zip(lo, hi):
            inside = ev.iloc[i:j]
            names = set(inside.event)
            switched = inside.next_comm[inside.event == "sched_switch"]
            switched = [c for c in switched if not c.startswith("rcusim_noise")]
            if switched:
                kind = "rcu" if all(RCU_KTHREADS.match(c) for c in switched) else "thread"
            elif "local_timer_entry" in names:
                kind = "tick" if names <= {"local_timer_entry", "softirq_entry"} else "irq"
            elif names:
                kind = "irq"
            else:
                kind = "host"
            kinds.append(kind)
            counts.append(j - i)
    out = gaps.copy()
    out["kind"] = pd.Series(kinds, index=gaps.index)
    out["events"] = pd.Series(counts, index=gaps.index, dtype="int64")
    return out


@dataclass(frozen=True)
class NoiseStream:
    rate_hz: float
    median_us: float
    p99_us: float
    samples: int
    source: str


def noise_streams(classified: pd.DataFrame, spun_s: float, nr_cpus: int,
                  trace_overhead_ns: int) -> dict[str, NoiseStream]:
    """rcusim's irq and kthread streams from the classified gaps of `spun_s` seconds on each
    of `nr_cpus` CPUs; each gap less its traced events' own cost (`trace_overhead_ns` each)."""
    length_us = (classified.length_ns - classified.events * trace_overhead_ns).clip(lower=0) / 1e3
    out = {}
    for stream, kinds in (("irq", ("irq", "host")), ("kthread", ("thread",))):
        x = length_us[classified.kind.isin(kinds)].to_numpy()
        if len(x) < 10:
            raise ScenarioError(f"{len(x)} {stream} gaps in {spun_s:g} s", key="--noise",
                                allowed="a longer spin (more seconds or boots)")
        by_kind = ", ".join(f"{k} {int((classified.kind == k).sum())}" for k in kinds)
        out[stream] = NoiseStream(
            rate_hz=len(x) / (spun_s * nr_cpus), median_us=float(np.median(x)), p99_us=float(np.percentile(x, 99)),
            samples=len(x),
            source=f"{len(x)} gaps ({by_kind}) over {GAP_NS / 1e3:g} us in {spun_s:g} s x {nr_cpus} vCPUs of "
                   f"rcusim_noise, each less its traced events ({trace_overhead_ns} ns each)")
    return out


def preset_yaml(name: str, description: str, streams: dict[str, NoiseStream], command: str) -> str:
    """A noise preset file (rcusim/profiles/noise/<name>.yaml) with every number's source."""
    text = (f"# OS noise of the QEMU guest, measured in the guest (rcusim/twin/noise.py).\n"
            f"# Written by {command}; measure again rather than edit.\n{name}:\n" + folded("description", description, 2))
    for stream, s in streams.items():
        text += f"  {stream}:\n"
        for key, value in (("rate_hz", s.rate_hz), ("median_us", s.median_us), ("p99_us", s.p99_us)):
            what = {"rate_hz": "per vCPU per second", "median_us": "median length", "p99_us": "99th percentile"}[key]
            text += f"    {key}:\n      value: {value:.1f}\n" + folded("source", f"{what}: {s.source}. [{command}]", 6)
    return text
