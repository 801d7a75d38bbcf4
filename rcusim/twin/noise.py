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

It also gives ``timer``: how late the local timer interrupt arrives after its expiry.
The tick's hrtimer expires on jiffy boundaries (tick_init_jiffy_update() aligns it to a
multiple of TICK_NSEC, and tick_nohz_handler() forwards it by whole ticks past the time
it ran), so on a spinning vCPU, whose tick never stops, each local_timer_entry is late by
its time less the first jiffy boundary after the one before. QEMU delivers it from its
main-loop thread, which needs a host core: the delay is measured with every vCPU spinning
(``all_busy``) and again with only vCPU 0 spinning and the others idle (``some_idle``).
It is measured in a second pair of spins that read no clock (rcusim_noise -b): under TCG
the gap loop's own clock reads hold the timer interrupt back (27 Nov, every vCPU spinning:
90th percentile 1,163 us in the gap loop, 135-152 us in a plain loop, as in rcuscale's
readers' loop, 136 us).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rcusim.errors import ScenarioError
from rcusim.input.profiles import TIMER_QUANTILES, TIMER_TAIL_QUANTILES
from rcusim.results.ftrace_read import read_ftrace
from rcusim.twin.measure import NR_CPUS, boot_each, folded
from rcusim.twin.qemu import command_line

__all__ = ["NOISE_EVENTS", "TRACE_OVERHEAD_IRQ_NS", "noise_script", "measure_noise", "read_boots", "classify_gaps",
           "timer_delays", "NoiseStream", "noise_streams", "Quantiles", "quantiles_of", "timer_delay_streams",
           "HostStalls", "host_stalls", "preset_yaml",
           "read_gaps"]

#: The shortest gap logged, ns: the spin loop's own iterations stay under it.
GAP_NS = 5000

#: RCU's kthreads, which rcusim models: their runs are not noise.
RCU_KTHREADS = re.compile(r"^(rcu_preempt|rcu_sched|rcuog/\d+|rcuop/\d+|rcuc/\d+|rcub/\d+)$")

_TRACE = "/sys/kernel/tracing/instances/rcusim-noise"
#: The trace_marker lines that open each spin: every vCPU spinning, then vCPU 0 alone; the
#: gap loop's spins, then the plain loop's (BUSY_*), which the timer's delay is taken from.
SPIN_ALL, SPIN_ONE, SPIN_END = "rcusim-noise: spin all", "rcusim-noise: spin one", "rcusim-noise: end"
BUSY_ALL, BUSY_ONE, BUSY_END = "rcusim-noise: busy all", "rcusim-noise: busy one", "rcusim-noise: busy end"

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
    duration = f"-d {int(seconds * 1e9)}"
    spin = f"{duration} -g {GAP_NS}"
    lines += ["echo 1 > tracing_on", "cd /",
              f"echo '{SPIN_ALL}' > {_TRACE}/trace_marker", f"/bin/rcusim_noise -n {nr_cpus} {spin} -o /out/gaps.txt",
              f"echo '{SPIN_ONE}' > {_TRACE}/trace_marker", f"/bin/rcusim_noise -n 1 {spin} -o /out/gaps-one.txt",
              f"echo '{SPIN_END}' > {_TRACE}/trace_marker",
              f"echo '{BUSY_ALL}' > {_TRACE}/trace_marker", f"/bin/rcusim_noise -n {nr_cpus} {duration} -b",
              f"echo '{BUSY_ONE}' > {_TRACE}/trace_marker", f"/bin/rcusim_noise -n 1 {duration} -b",
              f"echo '{BUSY_END}' > {_TRACE}/trace_marker", f"echo 0 > {_TRACE}/tracing_on",
              f"cat {_TRACE}/per_cpu/cpu*/stats > /out/trace-stats.txt",
              f"cat {_TRACE}/trace > /out/trace.txt"]
    return "\n".join(lines) + "\n"


def measure_noise(kernel, boots: int, seconds: float, timeout_s: float, keep: Path, clock: str = "real",
                  on_boot=None) -> list[str]:
    """Boot the guest `boots` times with :func:`noise_script`, each boot's files under
    ``keep/boot-<k>/``; returns the header lines (image, QEMU command, retried boots)."""
    image, argv, again = boot_each(kernel, noise_script(seconds), CMDLINE, boots, timeout_s, keep, clock, on_boot)
    return [f"clock: {clock}", f"image: {image.path} (Linux {image.version}, HZ={image.hz}, sha256 {image.digest})",
            f"qemu: {command_line(argv)}", f"spin: {seconds:g} s on each of {NR_CPUS} vCPUs, gaps over {GAP_NS} ns, then {seconds:g} s "
            f"on vCPU 0 alone; the same two spins again reading no clock (rcusim_noise -b), for the "
            "timer's delay",
            f"boots: {boots}, booted again (an oops, a busy host): {'; '.join(again) or 'none'}"]


def read_boots(out: Path) -> tuple[list[str], pd.DataFrame, float, pd.DataFrame]:
    """The header, every boot's classified gaps, the seconds each vCPU spun in all, and
    every boot's timer delays (:func:`timer_delays`), from a --noise run's folder
    (header.txt, raw/boot-<k>/gaps.txt and trace.txt)."""
    try:
        header = (out / "header.txt").read_text(encoding="utf-8").splitlines()
        seconds = float(next(line for line in header if line.startswith("spin: ")).split()[1])
    except (OSError, StopIteration, ValueError, IndexError):
        raise ScenarioError(f"{str(out)!r} holds no noise measurement", key="--noise-from",
                            allowed="the --out of an earlier measure-guest --noise run") from None
    boots = sorted((out / "raw").glob("boot-*"), key=lambda p: int(p.name.split("-")[1]))
    hz = re.search(r"\bHZ=(\d+)", "\n".join(header))
    classified, delays = [], []
    for k, b in enumerate(boots):
        events = read_events(b / "trace.txt")
        classified.append(classify_gaps(read_gaps(b / "gaps.txt"), events).assign(boot=k))
        if hz:
            delays.append(timer_delays(events, 10**9 // int(hz.group(1))).assign(boot=k))
    if not classified:
        raise ScenarioError(f"{str(out)!r} holds no boot", key="--noise-from",
                            allowed="the --out of an earlier measure-guest --noise run")
    delays = pd.concat(delays, ignore_index=True) if delays else pd.DataFrame(columns=["state", "cpu", "delay_ns"])
    if hz and delays.empty:
        raise ScenarioError(f"{str(out)!r} holds no spin that reads no clock, which the timer's delay is measured in "
                            "(a measurement made before it was)", key="--noise-from",
                            allowed="the --out of a measure-guest --noise run of this rcusim, or a new one")
    return header, pd.concat(classified, ignore_index=True), seconds * len(boots), delays


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


def timer_delays(events: pd.DataFrame, tick_ns: int) -> pd.DataFrame:
    """How late each local timer interrupt of a vCPU in the plain loop came (``state``:
    ``all_busy`` with every vCPU spinning, ``some_idle`` with vCPU 0 spinning alone): its
    time less the first jiffy boundary after the one before it on that vCPU; an interrupt
    before that boundary is another hrtimer's, not the tick's, and is left out. Empty for a
    trace without the plain loop's markers (one made before it was measured there)."""
    marks = events[events.event == "tracing_mark_write"]
    at = {text: marks.t_ns[marks.payload.str.strip() == text].min() for text in (BUSY_ALL, BUSY_ONE, BUSY_END)}
    rows = []
    if all(pd.notna(t) for t in at.values()):
        ticks = events[events.event == "local_timer_entry"]
        for state, lo, hi, cpus in (("all_busy", at[BUSY_ALL], at[BUSY_ONE], sorted(set(ticks.cpu))),
                                    ("some_idle", at[BUSY_ONE], at[BUSY_END], [0])):
            for cpu in cpus:
                t = np.sort(ticks.t_ns[(ticks.cpu == cpu) & (ticks.t_ns > lo) & (ticks.t_ns < hi)].to_numpy())
                prev = None
                for now in t:
                    if prev is not None:
                        delay = now - (prev // tick_ns + 1) * tick_ns
                        if delay < 0:
                            continue
                        rows.append((state, cpu, int(delay)))
                    prev = now
    return pd.DataFrame(rows, columns=["state", "cpu", "delay_ns"])


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
    for stream, kinds in (("irq", ("irq",)), ("kthread", ("thread",))):
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


@dataclass(frozen=True)
class Quantiles:
    """A measured distribution: quantiles at TIMER_QUANTILES levels, and its last interval's."""
    quantiles_us: list[float]
    tail_us: list[float]
    samples: int
    source: str


def quantiles_of(x_us: np.ndarray, counted: str, source: str) -> Quantiles:
    """The quantiles of measured values `x_us`, refused below 100 of them (`counted`: what
    they are, for the refusal)."""
    if len(x_us) < 100:
        raise ScenarioError(f"{len(x_us)} {counted}", key="--noise", allowed="a longer spin (more seconds or boots)")
    levels = np.linspace(0, 1, TIMER_QUANTILES)
    return Quantiles(quantiles_us=[round(float(v), 1) for v in np.quantile(x_us, levels)],
                     tail_us=[round(float(v), 1)
                              for v in np.quantile(x_us, np.linspace(levels[-2], levels[-1], TIMER_TAIL_QUANTILES))],
                     samples=len(x_us), source=source)


@dataclass(frozen=True)
class HostStalls:
    rate_hz: float
    stall: Quantiles


def host_stalls(classified: pd.DataFrame, spun_s: float, nr_cpus: int) -> HostStalls:
    """The gaps in which the spinning vCPU's guest traced nothing (``host``: its thread did not
    run, or the emulator did something else): their rate per vCPU-second and their lengths'
    distribution, whose tail reaches milliseconds, as measured."""
    x = classified.length_ns[classified.kind == "host"].to_numpy() / 1e3
    return HostStalls(rate_hz=len(x) / (spun_s * nr_cpus), stall=quantiles_of(
        x, f"host gaps in {spun_s:g} s", f"{len(x)} gaps over {GAP_NS / 1e3:g} us in {spun_s:g} s x {nr_cpus} vCPUs of rcusim_noise in which the "
           f"guest traced nothing; median {np.median(x):.1f} us, p99 {np.percentile(x, 99):.1f} us, "
           f"{int((x > 1000).sum())} over 1 ms"))


def timer_delay_streams(delays: pd.DataFrame, boots: int) -> dict[str, Quantiles]:
    """The ``timer`` section's two delays (``all_busy``, ``some_idle``), from the loop that reads
    no clock: the quantiles of
    :func:`timer_delays`' rows over `boots` boots at TIMER_QUANTILES levels, each state's
    distribution as measured (it has two modes: the vCPU's own delivery, and the host's
    scheduler)."""
    out = {}
    for state, what in (("all_busy", "every vCPU spinning"), ("some_idle", "vCPU 0 spinning alone, the others idle")):
        x = delays.delay_ns[delays.state == state].to_numpy() / 1e3
        out[state] = quantiles_of(
            x, f"timer interrupts with {what}",
               f"{len(x)} local_timer_entry of a vCPU spinning without reading a clock (rcusim_noise -b) with "
               f"{what}, {boots} boots, each less the first "
               "jiffy boundary after the one before it (the tick's expiry); median "
               f"{np.median(x):.1f} us, p99 {np.percentile(x, 99):.1f} us")
    return out


def _quantiles_yaml(q: Quantiles, command: str, indent: int) -> str:
    pad = " " * indent
    return (f"{pad}quantiles_us:\n{pad}  value: [{', '.join(map(str, q.quantiles_us))}]\n"
            + folded("source", f"quantiles at levels 0, 0.001, ..., 1: {q.source}. [{command}]", indent + 2)
            + f"{pad}tail_us:\n{pad}  value: [{', '.join(map(str, q.tail_us))}]\n"
            + folded("source", f"quantiles at levels 0.999, 0.99901, ..., 1 (the last interval's): "
                               f"{q.source}. [{command}]", indent + 2))


def preset_yaml(name: str, description: str, streams: dict[str, NoiseStream], command: str,
                timer: dict[str, Quantiles] | None = None, host: HostStalls | None = None) -> str:
    """A noise preset file (rcusim/profiles/noise/<name>.yaml) with every number's source."""
    text = (f"# OS noise of the QEMU guest, measured in the guest (rcusim/twin/noise.py).\n"
            f"# Written by {command}; measure again rather than edit.\n{name}:\n"
            + folded("description", description, 2))
    for stream, s in streams.items():
        text += f"  {stream}:\n"
        for key, value in (("rate_hz", s.rate_hz), ("median_us", s.median_us), ("p99_us", s.p99_us)):
            what = {"rate_hz": "per vCPU per second", "median_us": "median length", "p99_us": "99th percentile"}[key]
            text += f"    {key}:\n      value: {value:.1f}\n" + folded("source", f"{what}: {s.source}. [{command}]", 6)
    if timer:
        text += "  timer:\n"
        for state, s in timer.items():
            text += f"    {state}:\n" + _quantiles_yaml(s, command, 6)
    if host:
        text += (f"  host:\n    rate_hz:\n      value: {host.rate_hz:.1f}\n"
                 + folded("source", f"per vCPU per second: {host.stall.source}. [{command}]", 6)
                 + _quantiles_yaml(host.stall, command, 4))
    return text
