"""The platform costs of the QEMU TCG guest, measured from its own trace: the ``qemu-tcg``
hardware profile.

A boot runs :func:`guest_script` as the guest's ``/out/plan.sh``: phases that each run a
load exercising some costs (two synchronize_rcu() callers on one CPU, a spinning CPU's
ticks, IPIs, wake-ups of an idle, a busy and the waker's own CPU, rcuscale's kfree_rcu()
and call_rcu() floods) with the tracepoints that show them. The trace buffer's clock is
the TSC (``x86-tsc``: the ``mono`` clock prints microseconds only), converted to ns with
the guest's own TSC calibration.

:func:`estimate_costs` turns the trace into costs: medians of intervals between
tracepoints. Tracing costs the guest time, about a microsecond an event here: an interval
with k events inside holds k + 1 events' worth (the first's tail, the inner ones, the last's
head), which is subtracted. One event's cost is the smallest median gap of pairs of
tracepoints with (almost) nothing between them, per boot (boots differ up to twofold) and
apart in rcuscale's loops, in interrupts and elsewhere. What no tracepoint brackets (an
interrupt's entry, apic_eoi() and return, for one) is not measured, and the source says so.
"""

from __future__ import annotations

import gzip
import re
import textwrap
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from rcusim.errors import ScenarioError
from rcusim.input.profiles import COST_NAMES, WAKEUP_IDLE_QUANTILES, WAKEUP_IDLE_TAIL_QUANTILES
from rcusim.results.ftrace_read import read_ftrace
from rcusim.twin.image import find_image
from rcusim.twin.initramfs import build_initramfs
from rcusim.twin.qemu import boot_plan, command_line, find_qemu, qemu_command

__all__ = ["NR_CPUS", "CMDLINE", "PHASES", "Estimate", "ReuseTable", "guest_script", "tsc_khz", "ns_trace",
           "write_trace", "read_trace", "header_field", "estimate_costs", "derive_costs", "boot_each",
           "measure_boots", "profile_yaml", "folded"]

#: vCPUs of the measured guest: one per core of the 2-core hosts the project runs on.
NR_CPUS = 2

#: The guest's command line: CPU 1's callbacks offloaded, which rcuscale's kfree_by_call_rcu
#: self-test needs (a lazy call_rcu() from an offloaded CPU, kfree_scale_init()).
CMDLINE = ("rcu_nocbs=1",)

#: rcuscale's kfree_scale_thread kthreads, comm truncated to TASK_COMM_LEN.
KFREE_COMM = "kfree_scale_thr"

_TRACE = "/sys/kernel/tracing/instances/rcusim-measure"
_SPIN = "taskset 2 sh -c 'while :; do :; done' &\nSPIN=$!"
_WAIT = "grep -q -m1 \"Total time taken by all kfree'ers\" /proc/kmsg"  # the test's last line
_KFREE = "/lib/modules/rcuscale.ko kfree_rcu_test=1 kfree_nthreads=1 kfree_loops=4 holdoff=0"
_TOGGLE = "/sys/kernel/tracing/events/module/module_load/enable"  # a key whose sites run at insmod only

_SCHED = ("sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup")
_CFS = ("irq_vectors/call_function_single_entry", "irq_vectors/call_function_single_exit")
_CALLBACKS = ("rcu/rcu_invoke_callback", "rcu/rcu_batch_start", "rcu/rcu_batch_end")


def _pipe(n: int, reader_mask: int) -> str:
    """A writer on CPU 0 wakes a reader (on the CPUs of `reader_mask`) n times, 2 ms apart; it
    waits by read -t on a FIFO no one writes (a shell builtin: no fork between the wake-ups)."""
    return (f"taskset 1 sh -c 'exec 3<>/tmp/pause; for i in $(seq {n}); do echo x; read -t 0.002 x <&3 || :; done'"
            f" | taskset {reader_mask} cat >/dev/null")


class Phase(NamedTuple):
    name: str
    events: tuple[str, ...]
    """Tracepoints (events/<group>/<name>) on during the phase: only what it reads, to keep the
    trace small; a tracepoint off costs nothing, so the overhead accounting holds."""
    commands: tuple[str, ...]


#: The guest's plan, in order.
PHASES = (
    Phase("sync", _SCHED + _CALLBACKS + ("irq/softirq_entry", "irq/softirq_exit", "irq_vectors/local_timer_entry",
                                         "irq_vectors/local_timer_exit", "rcu/rcu_utilization", "rcu/rcu_grace_period",
                                         "rcu/rcu_quiescent_state_report", "rcu/rcu_segcb_stats", "rcu/rcu_callback",
                                         "rcu/rcu_sr_normal"),
          ("/bin/rcusim_load -t 2 -l 15 -c 0 -p -o /tmp/sync.txt",)),
    Phase("tick", ("irq_vectors/local_timer_entry", "irq_vectors/local_timer_exit", "rcu/rcu_utilization",
                   "sched/sched_waking", "sched/sched_switch"), (_SPIN, "usleep 100000")),
    # Each flip of a static key is text_poke_bp(), whose text_poke_sync() is on_each_cpu():
    # an IPI to the spinning CPU.
    Phase("ipi", ("sched/sched_switch", "ipi/ipi_send_cpu", "csd/csd_function_entry", "csd/csd_function_exit",
                  "irq_vectors/call_function_entry", "irq_vectors/call_function_exit") + _CFS,
          (f"taskset 1 sh -c 'for i in 1 2 3 4; do echo 1 > {_TOGGLE}; echo 0 > {_TOGGLE}; done'",)),
    Phase("wake-busy", _SCHED + _CFS + ("ipi/ipi_send_cpu", "irq_vectors/reschedule_entry",
                                        "irq_vectors/reschedule_exit"), (_pipe(30, 2), "kill $SPIN")),
    Phase("wake-idle", _SCHED + _CFS + ("ipi/ipi_send_cpu", "rcu/rcu_utilization"), (_pipe(50, 2),)),
    Phase("wake-local", _SCHED, (_pipe(30, 1),)),
    # 20,000 kfree_rcu() objects outrun the bulk pages' cache: fill_page_cache_func() runs.
    Phase("bulk", ("sched/sched_switch", "rcu/rcu_invoke_kfree_bulk_callback", "kmem/mm_page_alloc",
                   "kmem/mm_page_free") + _CALLBACKS,
          ("insmod /lib/modules/torture.ko", f"insmod {_KFREE} kfree_alloc_num=5000 kfree_rcu_test_double=1",
           _WAIT, "usleep 200000", "rmmod rcuscale")),
    Phase("kmalloc", ("kmem/kmalloc",) + _CALLBACKS,
          (f"insmod {_KFREE} kfree_alloc_num=100 kfree_rcu_test_double=1", _WAIT, "rmmod rcuscale")),
    # Inserted from CPU 1 (offloaded) for the lazy self-test; the flood runs on CPU 0.
    Phase("call_rcu", ("kmem/kmalloc", "kmem/kfree", "rcu/rcu_callback", "rcu/rcu_segcb_stats") + _CALLBACKS,
          (f"taskset 2 insmod {_KFREE} kfree_alloc_num=60 kfree_by_call_rcu=1", _WAIT, "usleep 200000")),
)


def guest_script() -> str:
    """/out/plan.sh: a trace instance on the TSC clock, the phases, the trace copied out."""
    lines = ["set -e", f"T={_TRACE}", "mkdir $T", "echo x86-tsc > $T/trace_clock", "echo 8192 > $T/buffer_size_kb",
             "mkfifo /tmp/pause",
             "grep . /sys/devices/system/cpu/cpu[0-9]*/cache/index3/shared_cpu_list "
             "/sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list > /out/topology.txt"]
    for phase in PHASES:
        # Switched with tracing off: the switches' own text_poke_bp() IPIs stay out of the trace.
        lines += ["echo 0 > $T/tracing_on", "echo 0 > $T/events/enable",
                  f"for e in {' '.join(phase.events)}; do echo 1 > $T/events/$e/enable; done",
                  "echo 1 > $T/tracing_on", f"echo phase={phase.name} > $T/trace_marker", *phase.commands]
    lines += ["echo 0 > $T/tracing_on", "cat $T/per_cpu/cpu*/stats > /out/trace-stats.txt",
              "cat $T/trace > /out/trace.txt"]
    return "\n".join(lines) + "\n"


_TSC = (re.compile(r"tsc: Refined TSC clocksource calibration: (\d+)\.(\d{3}) MHz"),
        re.compile(r"tsc: Detected (\d+)\.(\d{3}) MHz processor"))
_RAW_TS = re.compile(r"^(.*\]\s+\S+\s+)(\d+):( .*)$")


def tsc_khz(dmesg: str) -> int:
    """The guest's TSC frequency in kHz: its refined calibration, else its first one."""
    for pattern in _TSC:
        found = pattern.findall(dmesg)
        if found:
            mhz, khz = found[-1]
            return int(mhz) * 1000 + int(khz)
    raise ScenarioError("the guest's log has no TSC calibration line", key="measure-guest",
                        allowed="a guest on the TSC clocksource")


def ns_trace(text: str, khz: int) -> list[str]:
    """The event lines of an x86-tsc trace with their cycle counts as seconds.nanoseconds."""
    out = []
    for line in text.splitlines():
        m = _RAW_TS.match(line)
        if m and not line.startswith("#"):
            ns = int(m[2]) * 1_000_000 // khz
            out.append(f"{m[1]}{ns // 10**9}.{ns % 10**9:09d}:{m[3]}")
    return out


_BOOT = re.compile(r"^# boot (\d+) tsc_khz=(\d+)$")


def write_trace(path: Path, header: list[str], boots: list[tuple[int, list[str]]]) -> None:
    """The boots' ns traces in one gzip'd file: `header` lines, then each boot after a
    ``# boot K tsc_khz=F`` line."""
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as f:
        for line in header:
            f.write(f"# {line}\n")
        for k, (khz, lines) in enumerate(boots):
            f.write(f"# boot {k} tsc_khz={khz}\n")
            f.write("\n".join(lines) + "\n")


def read_trace(path: Path) -> tuple[pd.DataFrame, list[str]]:
    """What :func:`write_trace` wrote: the events with a ``boot`` column, and the header."""
    header, frames, boot, lines = [], [], None, []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            m = _BOOT.match(line.rstrip("\n"))
            if m:
                if boot is not None:
                    frames.append(read_ftrace(lines).assign(boot=boot))
                boot, lines = int(m[1]), []
            elif boot is None:
                header.append(line[2:].rstrip("\n"))
            else:
                lines.append(line)
    if boot is None:
        raise ScenarioError(f"{path} holds no boot", key="--from-trace", allowed="a trace measure-guest wrote")
    frames.append(read_ftrace(lines).assign(boot=boot))
    return pd.concat(frames, ignore_index=True), header


def header_field(header: list[str], key: str, default: str) -> str:
    """The value of a ``key: value`` line of a measurement's header (read_trace(), and
    noise.read_boots()), `default` if it has none."""
    return next((line.split(": ", 1)[1] for line in header if line.startswith(key + ": ")), default)


# --------------------------------------------------------------------------
# Costs from the trace
# --------------------------------------------------------------------------
class Estimate(NamedTuple):
    """A cost: its value (ns), how the trace gives it, and the samples it rests on (ns)."""

    value: int
    how: str
    samples: np.ndarray


class ReuseTable(NamedTuple):
    """A cost by the time since the CPU last paid it: ``values_ns[i]`` up to ``since_ns[i]``,
    the last value beyond; how the trace gives it."""

    since_ns: list[int]
    values_ns: list[int]
    how: str
    in_cb_wakeme: Estimate
    """The wake-up inside cb_wakeme_ns (its samples' median), which the table prices instead."""


#: Upper bounds of the bins of the time since a CPU's previous wake-up (ns): 1-2-5 steps from
#: 10 us to 10 ms, the last bin open. A bin of fewer than REUSE_MIN samples joins the next.
REUSE_EDGES_NS = tuple(m * 10 ** e for e in range(4, 7) for m in (1, 2, 5)) + (10 ** 7,)
REUSE_MIN = 20


_LANE = 10 ** 13  # ns between lanes' keys: more than any boot's trace spans
_TAGGED = {  # events told apart by a part of their payload
    "rcu_utilization": r"^\s*(.*?)\s*$", "rcu_sr_normal": r"event=(\w+)", "rcu_segcb_stats": r"^\s*(\S+)",
    "rcu_grace_period": r"^\s*\S+ \S+ (\S+)", "rcu_invoke_callback": r"func=(\S+)", "softirq_entry": r"action=(\w+)",
}


class _Trace:
    """The events by lane (one CPU of one boot) in time order, each tagged with its event and,
    for those of :data:`_TAGGED`, what tells it apart ("rcu_utilization:Start context switch")."""

    def __init__(self, events: pd.DataFrame):
        ev = events if "boot" in events else events.assign(boot=0)
        ev = ev.sort_values(["boot", "cpu", "t_ns"], kind="stable").reset_index(drop=True)
        self.lane = ev.groupby(["boot", "cpu"]).ngroup().to_numpy()
        first = ~pd.Series(self.lane).duplicated().to_numpy()
        self.lanes = dict(zip(zip(ev["boot"][first], ev["cpu"][first]), self.lane[first]))
        self.boot, self.cpu, self.pid = ev["boot"].to_numpy(), ev["cpu"].to_numpy(), ev["pid"].to_numpy()
        self.t = ev["t_ns"].to_numpy(np.int64)
        self.key = self.lane * _LANE + self.t
        self.comm, self.payload = ev["comm"].to_numpy(object), ev["payload"].to_numpy(object)
        self.hardirq = ev["flags"].str[2].isin(["h", "H"]).to_numpy()
        tag = ev["event"].to_numpy(object).copy()
        for name, pattern in _TAGGED.items():
            m = (ev["event"] == name).to_numpy()
            tag[m] = name + ":" + ev["payload"][m].str.extract(pattern, expand=False).astype(str)
        self.tag = tag

    def rows(self, *tags) -> np.ndarray:
        return np.flatnonzero(np.isin(self.tag, tags))

    def prefixed(self, prefix: str) -> tuple[str, ...]:
        return tuple(sorted({t for t in set(self.tag) if t.startswith(prefix)}))

    def field(self, rows, name: str) -> np.ndarray:
        """The integer `name=` field of the rows' payloads."""
        return np.array([int(re.search(rf"\b{name}=(\d+)", self.payload[r])[1]) for r in rows], dtype=np.int64)

    def spans(self, start, end, inner=None, same_pid=False):
        """Each row tagged in `start` with the first later row tagged in `end` of its lane, as
        arrays of rows (s, e). `inner`: the tags between them, exactly (a tuple) or a test."""
        starts, ends = self.rows(*start), self.rows(*end)
        k = np.searchsorted(ends, starts, side="right")
        s = starts[k < len(ends)]
        e = ends[k[k < len(ends)]]
        keep = (self.lane[s] == self.lane[e]) & ((self.pid[s] == self.pid[e]) | (not same_pid))
        s, e = s[keep], e[keep]
        if inner is not None:
            test = inner if callable(inner) else (lambda tags: tags == tuple(inner))
            keep = np.array([test(tuple(self.tag[a + 1:b])) for a, b in zip(s, e)], dtype=bool)
            s, e = s[keep], e[keep]
        return s, e

    def net(self, s, e, g: np.ndarray) -> np.ndarray:
        """Span lengths less their tracing: e - s events (the ones inside, plus one) of `g` ns, by boot."""
        return self.t[e] - self.t[s] - (e - s) * g[self.boot[s]]

    def overhead(self, pairs: dict) -> tuple[np.ndarray, str]:
        """One event's cost by boot: the smallest median gap of its `pairs` ({what: (s, e)}); and
        what each pair gave."""
        boots = np.arange(self.boot.max() + 1)  # read_trace() numbers them from 0
        medians = {what: np.array([np.median(self.t[e][self.boot[s] == b] - self.t[s][self.boot[s] == b])
                                   if np.any(self.boot[s] == b) else np.inf for b in boots])
                   for what, (s, e) in pairs.items()}
        g = np.min(np.array(list(medians.values())), axis=0)
        if not np.all(np.isfinite(g)):
            raise ScenarioError("a boot's trace has none of: " + "; ".join(pairs), key="measure-guest",
                                allowed="a trace of measure-guest's whole plan")
        return np.round(g).astype(np.int64), "; ".join(
            f"{what} ({len(pairs[what][0])} gaps, medians {', '.join(f'{m:.0f}' for m in ms)} ns)"
            for what, ms in medians.items())

    def first_after(self, lanes, t, *tags) -> np.ndarray:
        """The first row tagged `tags` of each lane after its t (-1 where none)."""
        rows = self.rows(*tags)
        k = np.searchsorted(self.key[rows], lanes * _LANE + t, side="right")
        out = np.where(k < len(rows), rows[np.minimum(k, len(rows) - 1)], -1)
        return np.where((out >= 0) & (self.lane[out] == lanes), out, -1)

    def last_before(self, lanes, t, *tags) -> np.ndarray:
        """The last row tagged `tags` of each lane before its t (-1 where none)."""
        rows = self.rows(*tags)
        k = np.searchsorted(self.key[rows], lanes * _LANE + t, side="left") - 1
        out = np.where(k >= 0, rows[np.maximum(k, 0)], -1)
        return np.where((out >= 0) & (self.lane[out] == lanes), out, -1)

    def target_lanes(self, rows, name: str) -> np.ndarray:
        """The lane of the CPU a row's `name=` field names, in the row's boot."""
        return np.array([self.lanes.get((b, c), -1) for b, c in zip(self.boot[rows], self.field(rows, name))])


def _stat(x) -> str:
    return f"{len(x)} samples, median {np.median(x):.0f} ns, p99 {np.percentile(x, 99):.0f} ns"


def _need(x, what: str) -> np.ndarray:
    if len(x) == 0:
        raise ScenarioError(f"the trace has no {what}", key="measure-guest",
                            allowed="a trace of measure-guest's whole plan")
    return np.asarray(x)


def estimate_costs(events: pd.DataFrame, nr_cpus: int, clock: str = "real") -> dict[str, Estimate]:
    """Every cost of :data:`~rcusim.input.profiles.COST_NAMES`, plus ``line_ns`` (one cache-line
    transfer, for the profile's topology) and ``trace_overhead_ns``, from a measure-guest trace.

    Parameters
    ----------
    events : pandas.DataFrame
        :func:`~rcusim.results.ftrace_read.read_ftrace`'s frame, with a ``boot`` column when it
        pools boots (:func:`read_trace`).
    nr_cpus : int
        The guest's vCPUs.
    clock : str
        How the guest kept time (``real`` or ``icount``, from the trace's header). Under icount
        guest time is instructions and TCG models no cache, so a cache line's transfer costs
        none: ``line_ns`` and ``rnp_lock_ns`` are 0 there.

    Raises
    ------
    ScenarioError
        When the trace lacks what a cost is measured from, or a difference comes out negative.
    """
    tr = _Trace(events)
    if len(tr.cpu) and tr.cpu.max() >= nr_cpus:
        raise ScenarioError(f"the trace has CPU {tr.cpu.max()}, more than {nr_cpus} vCPUs", key="nr_cpus")
    out: dict[str, Estimate] = {}

    def put(name, value, how, samples):
        value = int(round(value))
        if value < 0:
            raise ScenarioError(f"{name} comes out negative ({value} ns): {how}", key="measure-guest",
                                allowed="a trace with more samples")
        out[name] = Estimate(value, " ".join(how.split()), samples)

    # Tracing: pairs of tracepoints with (almost) nothing between, each gap one event's cost at
    # most; per boot (boots differ up to twofold), the smallest median of a boot's pairs, apart
    # in the floods' loops (warm), in interrupts and elsewhere.
    s, e = tr.spans(("rcu_callback",), ("rcu_segcb_stats:SegCBQueued",), inner=())  # rcutree_enqueue()
    flood = tr.comm[s] == KFREE_COMM
    sc, ec = tr.spans(("csd_function_entry",), ("csd_function_exit",), inner=())
    sync_core = np.array([" func=do_sync_core," in " " + tr.payload[i] for i in sc], dtype=bool) & tr.hardirq[sc]
    overheads = {
        "trace_overhead_loop_ns": ("in rcuscale's floods", {
            "rcu_callback to rcu_segcb_stats (SegCBQueued), traced one right after the other by "
            "rcutree_enqueue(), in the call_rcu() flood": (s[flood], e[flood]),
            "rcu_invoke_callback of kfree_call_rcu() to its kfree()":
                tr.spans(("rcu_invoke_callback:kfree_call_rcu",), ("kfree",), inner=())}),
        "trace_overhead_irq_ns": ("in an interrupt", {
            "csd_function_entry to _exit of do_sync_core() (an IRET to itself) in an IPI": (sc[sync_core],
                                                                                           ec[sync_core])}),
        "trace_overhead_ns": ("elsewhere", {
            "rcu_callback to rcu_segcb_stats outside the floods": (s[~flood], e[~flood]),
            "rcu_note_context_switch()'s 'Start' to 'End context switch'":
                tr.spans(("rcu_utilization:Start context switch",), ("rcu_utilization:End context switch",),
                         inner=())}),
    }
    g_by = {}
    for name, (where, pairs) in overheads.items():
        g_by[name], how = tr.overhead(pairs)
        put(name, np.median(g_by[name]), f"""One tracepoint's cost {where}, per boot the smallest median of:
            {how}. Per boot: {', '.join(map(str, g_by[name]))} ns. Intervals there are less k + 1 times
            their boot's, k the events traced inside them on their CPU.""", g_by[name])
    g, gi, gl = g_by["trace_overhead_ns"], g_by["trace_overhead_irq_ns"], g_by["trace_overhead_loop_ns"]
    less = "each less its tracing ((events inside + 1) x its boot's trace_overhead_ns)"
    less_irq = "each less its tracing ((events inside + 1) x its boot's trace_overhead_irq_ns)"
    less_loop = "each less its tracing ((events inside + 1) x its boot's trace_overhead_loop_ns)"

    # The scheduling-clock tick of a CPU running a task.
    s, e = tr.spans(("local_timer_entry",), ("local_timer_exit",),
                    inner=lambda x: "rcu_utilization:Start scheduler-tick" in x and "sched_waking" not in x)
    x = _need(tr.net(s, e, gi)[tr.pid[s] != 0], "tick on a busy CPU")
    put("tick_ns", np.median(x), f"""local_timer_entry to local_timer_exit around a scheduling-clock tick
        (rcu_sched_clock_irq()'s 'Start scheduler-tick' inside, no wake-up) on a CPU running a task (the
        'tick' phase's spinner): {_stat(x)}, {less_irq}. apic_eoi(), the interrupt's entry and its return lie
        outside the tracepoints and are not included.""", x)

    # Callbacks: rcu_invoke_callback to the next one (or rcu_batch_end) in rcu_do_batch().
    invoked = tr.prefixed("rcu_invoke_callback:")
    nxt = invoked + ("rcu_batch_end",)
    for name, func, what, gap, text in (
            ("cb_wakeme_ns", "wakeme_after_rcu", "wakeme_after_rcu() (complete() of a synchronize_rcu() caller, "
             "the 'sync' phase)", g, less),
            ("cb_kfree_ns", "kfree_call_rcu", "rcuscale's kfree_call_rcu() (a kfree(), the 'call_rcu' phase)",
             gl, less_loop)):
        s, e = tr.spans(("rcu_invoke_callback:" + func,), nxt)
        x = _need(tr.net(s, e, gap), what)
        put(name, np.median(x), f"""rcu_invoke_callback of {what} to the next rcu_invoke_callback or
            rcu_batch_end on its CPU: {_stat(x)}, {text}; rcu_do_batch()'s step per callback included.""", x)
        if func == "wakeme_after_rcu":
            woken = _inner_wakeups(tr, s, e, g)
    mixed = tuple(f for f in invoked if f.split(":", 1)[1] not in ("wakeme_after_rcu", "kfree_call_rcu"))
    s, e = tr.spans(mixed, nxt)
    x = _need(tr.net(s, e, gl), "other callbacks")
    top = pd.Series(tr.tag[s]).str.split(":").str[1].value_counts().head(5)
    put("cb_generic_ns", np.median(x), f"""rcu_invoke_callback of every other callback the guest invoked
        (most often {', '.join(f'{f} {n}' for f, n in top.items())}) to the next rcu_invoke_callback or
        rcu_batch_end: {_stat(x)}, {less_loop}, rcu_do_batch()'s loop being the one that invokes
        kfree_call_rcu().""", x)

    # rcuscale's floods: kmalloc(), then call_rcu() or kfree_rcu(), in a loop (kfree_scale_thread()).
    s, e = tr.spans(("kmalloc",), ("rcu_segcb_stats:SegCBQueued",), inner=("rcu_callback",))
    x = _need(tr.net(s, e, gl), "kmalloc followed by call_rcu()")
    put("call_rcu_ns", np.median(x), f"""kfree_by_call_rcu flood: kmalloc (traced as kmalloc() returns) to
        call_rcu()'s rcu_segcb_stats (SegCBQueued, after the enqueue): {_stat(x)}, {less_loop}. call_rcu()'s tail
        (the checks of __call_rcu_core(), local_irq_restore()) falls to kmalloc_ns.""", x)
    s, e = tr.spans(("rcu_segcb_stats:SegCBQueued",), ("kmalloc",), inner=(), same_pid=True)
    x = _need(tr.net(s, e, gl), "call_rcu() followed by kmalloc")
    put("kmalloc_ns", np.median(x), f"""kfree_by_call_rcu flood: call_rcu()'s rcu_segcb_stats to the next
        kmalloc of the loop (24 bytes, kmalloc-32, objects freed only after a GP): {_stat(x)}, {less_loop}; holds
        call_rcu()'s tail and the loop's step.""", x)
    s, e = tr.spans(("kmalloc",), ("kmalloc",), inner=(), same_pid=True)
    x = _need(tr.net(s, e, gl)[tr.comm[s] == KFREE_COMM], "kmalloc followed by kmalloc in the kfree_rcu() flood")
    put("kvfree_call_rcu_ns", np.median(x) - out["kmalloc_ns"].value, f"""kfree_rcu() flood (two-argument
        kfree_rcu(), the 'kmalloc' phase): kmalloc to the next kmalloc, one kmalloc() and one
        kvfree_call_rcu(), {_stat(x)} ({less_loop}), less kmalloc_ns.""", x)
    s, e = tr.spans(("kfree",), nxt, inner=())
    x = _need(tr.net(s, e, gl)[tr.tag[np.maximum(s - 1, 0)] == "rcu_invoke_callback:kfree_call_rcu"],
              "kfree() in kfree_call_rcu()")
    put("kfree_ns", np.median(x), f"""kfree (traced as kfree() starts) in rcuscale's kfree_call_rcu() to the
        next rcu_invoke_callback or rcu_batch_end: {_stat(x)}, {less_loop}; rcu_do_batch()'s step included, as
        kvfree_rcu_list() has its own.""", x)
    s, e = tr.spans(("rcu_invoke_kfree_bulk_callback",), ("rcu_invoke_kfree_bulk_callback",), same_pid=True,
                    inner=lambda x: set(x) <= {"mm_page_free"})
    x = _need(tr.net(s, e, gl) / tr.field(s, "nr_records"), "two bulk pages freed in a row")
    put("kfree_bulk_ns", np.median(x), f"""kfree_rcu_work(): rcu_invoke_kfree_bulk_callback to the next
        page's, divided by the first page's nr_records: {_stat(x)}, {less_loop}. Per object: kfree_bulk() with the
        slabs it empties, plus the page's return to the cache (or free_page()) over its ~500 objects.""", x)
    page = np.array(["order=0 " in p + " " for p in tr.payload])
    s, e = tr.spans(("mm_page_alloc",), ("mm_page_alloc",), inner=(), same_pid=True)
    x = _need(tr.net(s, e, gl)[page[s] & page[e] & np.char.startswith(tr.comm[s].astype(str), "kworker")],
              "fill_page_cache_func()'s allocations")
    s, e = tr.spans(("mm_page_free",), ("mm_page_free",), inner=(), same_pid=True)
    y = _need(tr.net(s, e, gl)[page[s] & page[e]], "page-freeing loops")
    put("page_alloc_ns", np.median(x) + np.median(y), f"""Allocation: mm_page_alloc to the next, order 0, in
        fill_page_cache_func()'s loop (a kworker; __get_free_page() plus put_cached_bnode() under
        krcp->lock), {_stat(x)}; plus a free: mm_page_free to the next of the same task, order 0 (the
        page-freeing loops of the 'bulk' phase), {_stat(y)}; both {less_loop}.""", x)

    # synchronize_rcu(): the caller's path from rcu_sr_normal 'request' to its __schedule().
    s, e = tr.spans(("rcu_sr_normal:request",), ("rcu_utilization:Start context switch",), same_pid=True)
    x = _need(tr.net(s, e, g), "synchronize_rcu() up to its schedule()")
    put("sync_entry_ns", np.median(x) - out["call_rcu_ns"].value, f"""synchronize_rcu_normal()'s rcu_sr_normal
        'request' to the caller's rcu_note_context_switch() ('Start context switch') as it blocks:
        wait_rcu_gp()'s set-up, call_rcu_hurry() and wait_for_completion() up to __schedule(), {_stat(x)}
        ({less}), less call_rcu_ns.""", x)

    # A context switch between two synchronize_rcu() callers on one CPU: from the blocking
    # one's __schedule() to the woken one's return from wait_for_completion().
    s, e = tr.spans(("rcu_utilization:Start context switch",), ("rcu_sr_normal:complete",))
    ok = (tr.pid[s] != tr.pid[e]) & (tr.pid[s] != 0) & (tr.pid[e] != 0)
    ok &= np.array([_switch(tr, a, b) for a, b in zip(s, e)], dtype=bool)
    x = _need(tr.net(s, e, g)[ok], "context switch between two callers")
    put("ctxsw_ns", np.median(x), f"""Two synchronize_rcu() callers (threads of one process) pinned on one
        CPU: the blocking one's 'Start context switch' (__schedule() entry) to the woken one's rcu_sr_normal
        'complete', one sched_switch from the one to the other between: {_stat(x)}, {less}; the end of
        wait_for_completion() included.""", x)

    # try_to_wake_up(): local, and remote onto a busy CPU (enqueued by the waker: the CPUs share the L3).
    s, e = tr.spans(("sched_waking",), ("sched_wakeup",), inner=())
    local = tr.field(s, "target_cpu") == tr.cpu[s]
    x = _need(tr.net(s, e, g)[local], "local wake-up")
    y = _need(tr.net(s, e, g)[~local], "remote wake-up enqueued by the waker")
    put("ttwu_ns", np.median(x), f"""sched_waking to sched_wakeup, both on the waker's CPU and the wakee's
        (every such wake-up: callbacks, pipes, timers): {_stat(x)}, {less}. p->pi_lock's acquire before and
        the unlocks after lie outside the tracepoints.""", x)
    out["ttwu_reuse"] = _ttwu_reuse(tr, s[local], x, less, woken)
    if clock == "icount":
        put("line_ns", 0, """Under icount guest time is instructions and TCG models no cache: a cache
            line's transfer between vCPUs costs none.""", y)
    else:
        put("line_ns", (np.median(y) - np.median(x)) / 2, f"""A wake-up onto another, busy CPU that the waker
            enqueues itself (ttwu_queue_cond(): the CPUs share the L3), sched_waking to sched_wakeup on the
            waker's CPU, {_stat(y)} ({less}), less a local one (ttwu_ns), over 2: the wakee's lines and the
            target's rq lock, each from the other CPU.""", y)

    # rcu_core(): a pass reporting the CPU's quiescent state, RCU_SOFTIRQ's commonest with
    # rcu_report_qs_rnp()'s event alone inside; a bare pass is too rare to measure, so the
    # report's rcu_node lock is priced as the cache line it pulls.
    core = ("rcu_utilization:Start RCU core", "rcu_quiescent_state_report", "rcu_utilization:End RCU core")
    s, e = tr.spans(("softirq_entry:RCU",), ("softirq_exit",), inner=core)
    x = _need(tr.net(s, e, g), "RCU softirq reporting a quiescent state")
    put("rnp_lock_ns", out["line_ns"].value, """No interval brackets an rcu_node lock alone: one cache-line
        transfer between the vCPUs (line_ns), the lock word's, which the GP kthread on the other CPU last
        held; the release and the irq save/restore are taken as inside that price.""", y)
    put("softirq_ns", np.median(x) - out["rnp_lock_ns"].value, f"""softirq_entry to softirq_exit of
        RCU_SOFTIRQ passes that trace only rcu_core()'s 'Start/End RCU core' and one
        rcu_quiescent_state_report (a quiescent state reported, the leaf rcu_node's mask not emptied):
        {_stat(x)}, {less}; less the report's lock (rnp_lock_ns).""", x)

    # IPIs: the sender's APIC writes, the flight to a busy CPU, a call-function handler.
    s, e = tr.spans(("ipi_send_cpu",), ("csd_function_entry",), inner=())
    x = _need(tr.net(s, e, g), "on_each_cpu() sender")
    put("ipi_send_ns", np.median(x), f"""smp_call_function_many_cond() with the local CPU too (on_each_cpu()
        of text_poke_sync(), the 'ipi' phase): ipi_send_cpu to the local csd_function_entry: {_stat(x)}, {less}.
        The xAPIC ICR writes (arch_send_call_function_single_ipi()), QEMU's emulated APIC.""", x)
    send = tr.rows("ipi_send_cpu")
    lanes = tr.target_lanes(send, "cpu")
    entries = ("call_function_single_entry", "call_function_entry", "reschedule_entry")
    arrive = tr.first_after(lanes, tr.t[send], *entries)
    before = tr.last_before(lanes, tr.t[send], "sched_switch")
    busy = (arrive >= 0) & (before >= 0) & np.array([b >= 0 and "next_pid=0 " not in tr.payload[b] + " "
                                                      for b in before])
    x = _need(tr.t[arrive[busy]] - tr.t[send[busy]] - g[tr.boot[send[busy]]], "IPI to a busy CPU")
    put("ipi_latency_ns", max(0, np.median(x) - out["ipi_send_ns"].value), f"""ipi_send_cpu to the target's
        call_function_single_entry (call_function_entry, reschedule_entry) when the target runs a task (its
        last sched_switch): {_stat(x)}, less one event's tracing (its boot's trace_overhead_ns) and the
        sender's APIC writes (ipi_send_ns); 0 if the target takes the IPI before those writes return (QEMU
        raises it while emulating the ICR write).""", x)
    s, e = tr.spans(("call_function_single_entry", "call_function_entry"),
                    ("call_function_single_exit", "call_function_exit"),
                    inner=("csd_function_entry", "csd_function_exit"))
    x = _need(tr.net(s, e, gi), "call-function IPI with one function")
    funcs = pd.Series([tr.payload[a + 1] for a in s]).str.extract(r"func=([^,]+)", expand=False).value_counts()
    put("ipi_handler_ns", np.median(x), f"""call_function_single_entry to _exit (call_function_*) around one
        short function ({', '.join(f'{f} {n}' for f, n in funcs.head(3).items())}): {_stat(x)}, {less_irq}.
        apic_eoi() before the entry tracepoint, the interrupt's entry and return are not included.""", x)

    # A wake-up by IPI (ttwu_queue_wakelist()): to a busy CPU, priced from its parts; to an idle
    # one (HLT), each sample.
    s, e = tr.spans(("call_function_single_entry",), ("sched_wakeup",), inner=())
    x = _need(tr.net(s, e, gi), "wake-up IPI handler")
    put("wakeup_busy_ns", out["ipi_latency_ns"].value + np.median(x), f"""ipi_latency_ns plus the handler's
        call_function_single_entry to the wakee's sched_wakeup (sched_ttwu_pending()'s enqueue), {_stat(x)},
        {less_irq}. On this guest a busy target sharing the L3 is enqueued by the waker instead (line_ns).""", x)
    idle = _idle_wakeups(tr, g, gi)
    x = _need(idle - out["ipi_send_ns"].value - out["wakeup_busy_ns"].value, "wake-up of an idle CPU")
    put("wakeup_idle_median_ns", np.median(x), f"""Wake-ups by IPI of a CPU idle in HLT (the 'wake-idle'
        phase): the waker's ipi_send_cpu to the target's 'Start context switch' (its schedule() out of the
        idle loop), less the tracing (the sender's event, trace_overhead_ns, and the target's events between,
        trace_overhead_irq_ns each), the sender's APIC writes (ipi_send_ns) and a busy target's delay to the
        enqueue (wakeup_busy_ns), per sample: {_stat(x)}.
        Median: the vCPU thread woken from QEMU's halt, the rest of the handler, the idle loop's exit.""", x)
    put("wakeup_idle_p99_ns", np.percentile(x, 99), "The 99th percentile of the samples of "
        "wakeup_idle_median_ns: " + _stat(x) + ".", x)
    return out


def _inner_wakeups(tr: _Trace, s: np.ndarray, e: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The sched_waking to sched_wakeup inside each span (s, e) of one lane that holds both,
    less its tracing (`g`, by boot)."""
    out = []
    for a, b in zip(s, e):
        tags = list(tr.tag[a + 1:b])
        if "sched_waking" in tags and "sched_wakeup" in tags:
            i, j = a + 1 + tags.index("sched_waking"), a + 1 + tags.index("sched_wakeup")
            if i < j:
                out.append(tr.t[j] - tr.t[i] - (j - i) * g[tr.boot[i]])
    return _need(out, "wake-up inside wakeme_after_rcu()")


def reuse_bins(since: np.ndarray, x: np.ndarray, key: str) -> tuple[list[int], list[int], np.ndarray]:
    """The median of the costs `x` in each bin of the times `since` (:data:`REUSE_EDGES_NS`, a bin
    of fewer than :data:`REUSE_MIN` joined to the next): the bins' upper bounds, their medians
    and their sample counts."""
    edges = []
    for edge in REUSE_EDGES_NS:
        if np.count_nonzero((since <= edge) & (since > (edges[-1] if edges else -1))) >= REUSE_MIN:
            edges.append(edge)
    if edges and np.count_nonzero(since > edges[-1]) < REUSE_MIN:
        edges.pop()
    if not edges:
        raise ScenarioError(f"the trace has {len(x)} local wake-ups after another on their CPU",
                            key=key, allowed=f"a trace with {2 * REUSE_MIN} or more")
    bins = np.searchsorted(np.array(edges, dtype=np.int64), since, side="left")
    values = [int(round(np.median(x[bins == b]))) for b in range(len(edges) + 1)]
    return edges, values, np.bincount(bins, minlength=len(edges) + 1)


def reuse_bins_how(counts) -> str:
    """How :func:`reuse_bins` binned its samples, with each bin's count."""
    return (f"in bins of that time up to 10, 20, 50 us ... 10 ms and beyond (one of fewer than {REUSE_MIN} "
            f"samples joined to the next: {', '.join(map(str, counts))} samples), each bin's median")


def _ttwu_reuse(tr: _Trace, s: np.ndarray, x: np.ndarray, less: str, woken: np.ndarray) -> ReuseTable:
    """The local wake-ups' cost (`x`, from their sched_waking rows `s`) by the time since their
    CPU's previous sched_waking: the median in each bin of :data:`REUSE_EDGES_NS`; and the
    wake-ups inside wakeme_after_rcu()'s samples (`woken`)."""
    waking = tr.rows("sched_waking")
    k = np.searchsorted(waking, s) - 1
    ok = (k >= 0) & (tr.lane[waking[np.maximum(k, 0)]] == tr.lane[s])
    since, x = tr.t[s[ok]] - tr.t[waking[k[ok]]], x[ok]
    edges, values, counts = reuse_bins(since, x, "measure-guest")
    return ReuseTable(edges, values, " ".join(f"""try_to_wake_up()'s cost (ttwu_ns's samples) by the time
        since the waker's CPU last woke a task (its previous sched_waking): {len(x)} local wake-ups after
        another on their CPU, {reuse_bins_how(counts)}, {less}: from {min(values)} to {max(values)}
        ns.""".split()),
                      Estimate(int(round(np.median(woken))), " ".join(f"""sched_waking to sched_wakeup inside
                      cb_wakeme_ns's samples (wakeme_after_rcu()'s complete()): {_stat(woken)}, {less}. The
                      rest of cb_wakeme_ns is the callback around its wake-up, which ttwu_reuse prices.""".split()),
                               woken))


def _switch(tr: _Trace, a: int, b: int) -> bool:
    """One sched_switch between rows a and b, from a's task to b's."""
    rows = [r for r in range(a + 1, b) if tr.tag[r] == "sched_switch"]
    return len(rows) == 1 and f"prev_pid={tr.pid[a]} " in tr.payload[rows[0]] \
        and f"next_pid={tr.pid[b]} " in tr.payload[rows[0]] + " "


def _idle_wakeups(tr: _Trace, g: np.ndarray, gi: np.ndarray) -> np.ndarray:
    """ipi_send_cpu of a wake-up (right after its sched_waking) to an idle CPU, to that CPU's
    next 'Start context switch' when its next sched_switch leaves the idle task for the wakee;
    less the tracing: the send (`g`, by boot) and the target's events in between (`gi`)."""
    send = tr.rows("ipi_send_cpu")
    send = send[(send > 0) & (tr.tag[send - 1] == "sched_waking") & (tr.lane[send - 1] == tr.lane[send])]
    lanes = tr.target_lanes(send, "cpu")
    before = tr.last_before(lanes, tr.t[send], "sched_switch")
    end = tr.first_after(lanes, tr.t[send], "rcu_utilization:Start context switch")
    switch = tr.first_after(lanes, tr.t[send], "sched_switch")
    wakee = tr.field(send - 1, "pid")
    ok = (before >= 0) & (end >= 0) & (switch > end)
    ok &= np.array([o and "next_pid=0 " in tr.payload[b] + " " and f"next_pid={p} " in tr.payload[w] + " "
                    and "prev_pid=0 " in tr.payload[w] for o, b, w, p in zip(ok, before, switch, wakee)], dtype=bool)
    send, lanes, end = send[ok], lanes[ok], end[ok]
    first = np.searchsorted(tr.key, lanes * _LANE + tr.t[send], side="right")  # the target's first row after
    return tr.t[end] - tr.t[send] - g[tr.boot[send]] - (end - first) * gi[tr.boot[send]]


def derive_costs(events: pd.DataFrame, nr_cpus: int, clock: str = "real") -> dict[str, tuple[int, str]]:
    """:func:`estimate_costs` as ``{name: (value_ns, how)}``."""
    return {name: (est.value, est.how) for name, est in estimate_costs(events, nr_cpus, clock).items()
            if isinstance(est, Estimate)}


# --------------------------------------------------------------------------
# Boots
# --------------------------------------------------------------------------
def boot_each(kernel, script: str, cmdline: tuple, boots: int, timeout_s: float, keep: Path, clock: str,
              on_boot=None) -> tuple:
    """Boot the HZ=1000 guest (NR_CPUS vCPUs, `cmdline`) `boots` times with `script`, each
    boot's files under ``keep/boot-<k>/``; `on_boot(k, wall_s)` after each. Returns the image,
    the last boot's QEMU command and why a boot was made again (qemu.boot_plan()).

    Raises
    ------
    ScenarioError
        For a boot whose plan fails other than by a guest oops or a busy host, or so at every attempt
        (rcusim.twin.qemu.boot_plan()).
    """
    image = find_image(kernel, 1000)
    initramfs, qemu = build_initramfs(image), find_qemu()
    again = []
    for k in range(boots):
        share = keep / f"boot-{k}"
        share.mkdir(parents=True, exist_ok=True)
        argv = qemu_command(qemu, image.bzimage, initramfs, share, NR_CPUS, clock, cmdline)
        booted, retried = boot_plan(argv, share, script, timeout_s, f"boot {k + 1}")
        again += retried
        if on_boot is not None:
            on_boot(k, booted.wall_time_s)
    return image, argv, again


def measure_boots(kernel, boots: int, timeout_s: float, keep: Path, on_boot=None,
                  clock: str = "real") -> tuple[list[str], list]:
    """Boot the guest `boots` times with :func:`guest_script`; keep each boot's files under
    ``keep/boot-<k>/``. Returns the header lines (image, QEMU command, retries) and each
    boot's (tsc_khz, ns trace lines).

    Raises
    ------
    ScenarioError
        For a boot whose plan fails other than by a guest oops or a busy host, or so at every attempt
        (rcusim.twin.qemu.boot_plan()).
    """
    image, argv, again = boot_each(kernel, guest_script(), CMDLINE, boots, timeout_s, keep, clock, on_boot)
    out = []
    for k in range(boots):
        share = keep / f"boot-{k}"
        khz = tsc_khz((share / "dmesg.txt").read_text(errors="replace"))
        out.append((khz, ns_trace((share / "trace.txt").read_text(errors="replace"), khz)))
    header = [f"clock: {clock}",
              f"image: {image.path} (Linux {image.version}, HZ={image.hz}, sha256 {image.digest})",
              f"qemu: {command_line(argv)}",
              f"topology: {' '.join((share / 'topology.txt').read_text().split())}",
              f"boots: {boots}, booted again (an oops, a busy host): {'; '.join(again) or 'none'}"]
    return header, out


# --------------------------------------------------------------------------
# The profile
# --------------------------------------------------------------------------
#: QEMU's "-smp N" gives one socket of N cores, one thread each, sharing one L3; the guest
#: may have up to its image's CONFIG_NR_CPUS of them.
CORES_PER_LLC = 64


def folded(key: str, text: str, indent: int) -> str:
    pad = " " * indent
    return f"{pad}{key}: >-\n" + textwrap.fill(" ".join(text.split()), 100 - indent - 2, initial_indent=pad + "  ",
                                               subsequent_indent=pad + "  ", break_long_words=False,
                                               break_on_hyphens=False) + "\n"


#: The profile of each clock (rcusim.twin.qemu.CLOCKS) and how its guest keeps time.
PROFILE_NAMES = {"real": "qemu-tcg", "icount": "qemu-tcg-icount"}
_CLOCK_WORDS = {"real": "multi-threaded TCG on the host's real clock",
                "icount": "TCG with -icount shift=0,sleep=off: 1 ns of guest time per instruction, the vCPUs "
                          "taking turns on one host thread"}


def profile_yaml(estimates: dict[str, Estimate], header: list[str], command: str) -> str:
    """The guest's profile (``qemu-tcg``, or ``qemu-tcg-icount`` for a trace measured under
    icount): every cost with how the trace gives it and the command."""
    said = f"[{command}]"
    clock = header_field(header, "clock", "real")
    g, gi, gl = (estimates[f"trace_overhead{k}_ns"].value for k in ("", "_irq", "_loop"))
    host = ("each cost is many times a native CPU's, the host's load reaches the guest's clock" if clock == "real"
            else "each cost is the instructions it takes; the host's load does not reach the guest's clock, and "
                 "k busy vCPUs each run at 1/k of its rate")
    text = ("# Hardware profile: the guest rcusim's real-kernel twin boots ('rcusim kernel'): QEMU TCG,\n"
            f"# x86_64 -cpu qemu64, {_CLOCK_WORDS[clock]}, 2 vCPUs on a 2-core host.\n"
            "#\n# Written by python -m rcusim measure-guest: every cost measured in the guest from its own\n"
            "# trace (rcusim/twin/measure.py), none chosen. Measure again rather than edit.\n#\n"
            + "".join(f"# {line}\n" for line in header) +
            f"name: {PROFILE_NAMES[clock]}\n"
            + folded("description", f"""QEMU TCG guest (x86_64, -cpu qemu64, {_CLOCK_WORDS[clock]}),
                     2 vCPUs sharing one L3, booted with rcu_nocbs=1: every cost measured in the guest from
                     its own trace (python -m rcusim measure-guest), tracing's own cost taken out (per event,
                     medians over the boots: {g} ns, {gi} ns in an interrupt, {gl} ns in a loop). Emulated:
                     {host}. Idle is HLT (no cpuidle driver): one measured idle wake-up latency.""", 0)
            + "costs:\n")
    for name in COST_NAMES:
        est = estimates[name]
        text += f"  {name}:\n    value: {est.value}\n" + folded("source", f"{est.how} {said}", 4)
    line = estimates["line_ns"]
    text += ("\n# CPUs: QEMU's default topology for -smp N, one socket of N cores sharing one L3.\n"
             "topology:\n" + folded("source", f"""The measured guest's /sys/devices/system/cpu: every vCPU its own
                core (thread_siblings_list) and all sharing the L3 (cache/index3/shared_cpu_list); QEMU's -smp N
                makes one socket of N such cores, up to the image's CONFIG_NR_CPUS ({CORES_PER_LLC}).""", 2)
             + f"  smt: 1\n  cores_per_llc: {CORES_PER_LLC}\n  llcs_per_socket: 1\n  line_ns:\n")
    for distance in ("smt", "llc", "socket", "remote"):
        how = line.how if distance == "llc" else "No such pair of vCPUs in the guest (one socket, one L3, " \
                                                 "one thread a core): the same-L3 figure."
        text += f"    {distance}:\n      value: {line.value}\n" + folded("source", f"{how} {said}", 6)
    reuse = estimates["ttwu_reuse"]
    text += ("\n# try_to_wake_up()'s cost by the time since the waker's CPU last woke a task: ttwu_ns[i] up to\n"
             "# since_ns[i], the last beyond (engine: ttwu_reuse()).\nttwu_reuse:\n"
             + folded("source", f"{reuse.how} {said}", 2)
             + f"  since_ns: {list(reuse.since_ns)}\n  ttwu_ns: {list(reuse.values_ns)}\n"
             + f"  in_cb_wakeme_ns:\n    value: {reuse.in_cb_wakeme.value}\n"
             + folded("source", f"{reuse.in_cb_wakeme.how} {said}", 4))
    wake = estimates["wakeup_idle_median_ns"]
    x = np.maximum(wake.samples, 0)  # a sample below the medians taken from it: no time at all
    levels = np.linspace(0, 1, WAKEUP_IDLE_QUANTILES)
    tail = np.linspace(levels[-2], 1, WAKEUP_IDLE_TAIL_QUANTILES)
    text += ("\n# The wake-up latency of a vCPU idle in HLT as measured, wakeup_idle_median_ns's samples: the\n"
             "# engine draws each such wake-up from these quantiles (engine: idle_exit_ns()).\nwakeup_idle:\n"
             + folded("source", f"""Quantiles at levels 0, 0.01, ..., 1 (quantiles_ns) and 0.99, 0.991, ..., 1
                      (tail_ns, the last interval's) of the samples of wakeup_idle_median_ns: {wake.how} {said}""", 2)
             + f"  quantiles_ns: {[int(round(v)) for v in np.quantile(x, levels)]}\n"
             + f"  tail_ns: {[int(round(v)) for v in np.quantile(x, tail)]}\n")
    text += ("\n# One event recorded by an enabled tracepoint (a scenario's trace_event=): what a traced\n"
             "# kernel, such as the twin's, pays per event (engine: tracepoint.pxi).\ntracing:\n"
             + folded("source", """The tracepoint's own cost, which every cost above has taken out, measured
                      the same way: per boot, the smallest median gap between two tracepoints traced one right
                      after the other; the median over the boots.""", 2))
    for key, name in (("event_ns", "trace_overhead_ns"), ("event_irq_ns", "trace_overhead_irq_ns")):
        text += f"  {key}:\n    value: {estimates[name].value}\n" + folded("source", f"{estimates[name].how} {said}", 4)
    return text
