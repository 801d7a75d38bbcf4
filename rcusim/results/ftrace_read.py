"""Reading ftrace text: the ``trace`` file of a real kernel, or what ``run --ftrace`` writes.

Both sides of a comparison print the rcu and sched tracepoints in the kernel's layout::

    rcu_preempt-17      [001] d..1.     5.312304: rcu_grace_period: rcu_preempt -687 start

so one reader serves both. :func:`read_ftrace` turns the lines into a frame, one row per
event; :func:`grace_periods` finds in it what the engine records of each normal grace
period (its start and end, its force-quiescent-state scans and whose quiescent state
ended its wait), in the columns of a results ``gps`` frame.

The tracepoints' formats are TP_printk() of include/trace/events/rcu.h (v6.12):

* ``rcu_grace_period``: ``"%s %ld %s"``, the flavour, gp_seq and the event
  (``start``, ``end``, ``fqsstart``, ``cpuqs``, ...);
* ``rcu_quiescent_state_report``: ``"%s %ld %lx>%lx %u %d %d %u"``, the flavour,
  gp_seq, the mask reported, the node's qsmask left, its level, grplo, grphi and
  whether preempted readers block the GP (rcu_report_qs_rnp());
* ``rcu_fqs``: ``"%s %ld %d %s"``, a CPU found quiescent by a scan (``dti``: in
  dyntick-idle, rcu_watching_snap_save()).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from rcusim.results.frames import LAST_QS_NAMES, make_gps_frame
from rcusim.results.run import BREAKDOWN_PARTS

__all__ = ["EVENT_COLUMNS", "read_ftrace", "seq_events", "gp_marks", "exp_marks", "grace_periods", "make_gps_from_marks", "GP_KTHREADS",
           "time_breakdown", "breakdown_us"]

#: Columns of :func:`read_ftrace`'s frame.
EVENT_COLUMNS = ("comm", "pid", "cpu", "flags", "t_ns", "event", "payload")

# The task's comm may hold spaces and dashes: the pid is the last "-digits" before the CPU.
_LINE = re.compile(r"^\s*(?P<comm>.*)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(?P<cpu>\d+)\]\s+"
                   r"(?P<flags>\S+)\s+(?P<secs>\d+)\.(?P<frac>\d+):\s+(?P<event>\w+):\s?(?P<payload>.*)$")

_CODE = {name: code for code, name in LAST_QS_NAMES.items()}


def read_ftrace(lines) -> pd.DataFrame:
    """One row per event line of ftrace text; header and other lines are skipped.

    Parameters
    ----------
    lines : iterable of str
        The ``trace`` file's lines (a real kernel's, or ``run --ftrace``'s).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`EVENT_COLUMNS`: ``t_ns`` the timestamp in ns (the trace prints
        microseconds), ``payload`` the text after the event's name.
    """
    rows = []
    for line in lines:
        if line.startswith("#"):
            continue
        m = _LINE.match(line.rstrip("\n"))
        if m is None:
            continue
        frac = m["frac"]
        t_ns = int(m["secs"]) * 1_000_000_000 + int(frac) * 10 ** (9 - len(frac))
        rows.append((m["comm"].strip(), int(m["pid"]), int(m["cpu"]), m["flags"], t_ns, m["event"], m["payload"]))
    frame = pd.DataFrame(rows, columns=list(EVENT_COLUMNS))
    return frame.astype({"pid": np.int64, "cpu": np.int32, "t_ns": np.int64})


#: The GP kthread's comm for each flavour (rcu_preempt with CONFIG_PREEMPT_RCU, else rcu_sched).
GP_KTHREADS = frozenset(("rcu_preempt", "rcu_sched"))


def gp_marks(events: pd.DataFrame) -> pd.DataFrame:
    """Each complete normal GP of a trace with the moment its wait ended.

    A GP is the span from its ``rcu_grace_period ... start`` to its ``end`` (rcu_gp_init()
    and rcu_gp_cleanup()); GPs whose start or end the trace lacks are left out.
    ``fqs_scans`` counts its ``fqsstart`` events (rcu_gp_fqs_loop()). ``t_qs_ns`` is the
    report that emptied the root's qsmask (``rcu_quiescent_state_report`` at level 0
    leaving 0; -1 if the trace lacks it), and ``last_qs`` names it by the CPU it was for,
    as the engine does (last_qs_src(), fqs_qs_src()): the GP kthread's CPU (the CPU it
    last traced from), else a busy CPU (the report runs on that CPU in a task, or a scan
    found it running one), else an idle one. A report with preempted readers left (its last
    field) waits for them: the GP's end is then a blocked reader's.

    Returns
    -------
    pandas.DataFrame
        Columns gp_seq, t_start_ns, t_end_ns, fqs_scans, last_qs, t_qs_ns and
        t_first_fqs_ns (its first scan's start; -1 without one), in gp_seq order.
    """
    spans, ev = _gp_spans(events, "rcu_grace_period")
    t, seq, what = ev["t_ns"], ev["seq"], ev["what"]
    complete = spans["gp_seq"].tolist()
    scans = seq[what == "fqsstart"].value_counts().to_dict()
    first_scan = t[what == "fqsstart"].groupby(seq[what == "fqsstart"]).min().to_dict()
    last = _last_reporters(events)
    return spans.assign(**{
        "fqs_scans": np.asarray([scans.get(s, 0) for s in complete], dtype=np.int64),
        "last_qs": np.asarray([last.get(s, (-1, -1))[0] for s in complete], dtype=np.int8),
        "t_qs_ns": np.asarray([last.get(s, (-1, -1))[1] for s in complete], dtype=np.int64),
        "t_first_fqs_ns": np.asarray([first_scan.get(s, -1) for s in complete], dtype=np.int64),
    })


def seq_events(events: pd.DataFrame, event: str) -> pd.DataFrame:
    """The ``"%s %ld %s"`` events `event` (flavour, sequence, what: rcu_grace_period,
    rcu_exp_grace_period) with columns t_ns, cpu, seq and what, in trace order."""
    rows = events[events["event"] == event]
    fields = rows["payload"].str.split(n=2, expand=True).reindex(columns=[0, 1, 2])
    return pd.DataFrame({"t_ns": rows["t_ns"], "cpu": rows["cpu"],
                         "seq": pd.to_numeric(fields[1], errors="coerce").fillna(0).astype(np.int64),
                         "what": fields[2].fillna("")})


def _gp_spans(events: pd.DataFrame, event: str):
    """Each sequence number's span from its ``start`` to its ``end`` among the events
    `event` (gp_seq, t_start_ns, t_end_ns, complete ones in order), and those events
    (:func:`seq_events`)."""
    ev = seq_events(events, event)
    starts = dict(zip(ev["seq"][ev["what"] == "start"], ev["t_ns"][ev["what"] == "start"]))
    ends = dict(zip(ev["seq"][ev["what"] == "end"], ev["t_ns"][ev["what"] == "end"]))
    complete = sorted(s for s in starts if s in ends and ends[s] >= starts[s])
    spans = pd.DataFrame({"gp_seq": np.asarray(complete, dtype=np.int64),
                          "t_start_ns": np.asarray([starts[k] for k in complete], dtype=np.int64),
                          "t_end_ns": np.asarray([ends[k] for k in complete], dtype=np.int64)})
    return spans, ev


def exp_marks(events: pd.DataFrame) -> pd.DataFrame:
    """Each complete expedited GP of a trace: from its ``rcu_exp_grace_period ... start``
    (exp_funnel_lock() once it holds exp_mutex) to its ``end`` (rcu_exp_wait_wake()), both
    traced with the GP's sequence snapshot.

    Returns
    -------
    pandas.DataFrame
        Columns gp_seq, t_start_ns, t_end_ns and cpu_start (the CPU its ``start`` was
        traced on: the caller's that drives it), in gp_seq order.
    """
    spans, ev = _gp_spans(events, "rcu_exp_grace_period")
    start = ev["what"] == "start"
    cpu = dict(zip(ev["seq"][start], ev["cpu"][start]))
    return spans.assign(cpu_start=np.asarray([cpu[k] for k in spans["gp_seq"]], dtype=np.int32))


def grace_periods(events: pd.DataFrame) -> pd.DataFrame:
    """The normal (:func:`gp_marks`) and expedited (:func:`exp_marks`) grace periods of a
    trace as a results ``gps`` frame."""
    return make_gps_from_marks(gp_marks(events), exp_marks(events))


def make_gps_from_marks(m: pd.DataFrame, exp: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`gp_marks`'s rows, then :func:`exp_marks`'s, as a results ``gps`` frame."""
    if exp is not None and len(exp):
        return pd.concat([make_gps_from_marks(m),
                          make_gps_frame(exp["gp_seq"], exp["t_start_ns"], exp["t_end_ns"],
                                         np.ones(len(exp), dtype=bool))], ignore_index=True)
    return make_gps_frame(m["gp_seq"], m["t_start_ns"], m["t_end_ns"], np.zeros(len(m), dtype=bool),
                          m["fqs_scans"], m["last_qs"])


def _last_reporters(events: pd.DataFrame) -> dict[int, tuple[int, int]]:
    """(LAST_QS code, time) of the report that emptied the root, by gp_seq."""
    kthreads = GP_KTHREADS
    running: dict[int, bool] = {}  # CPU -> runs a task (not its idle task), from sched_switch
    gp_cpu = -1
    out: dict[int, tuple[int, int]] = {}
    for comm, cpu, t, event, payload in zip(events["comm"], events["cpu"], events["t_ns"], events["event"],
                                            events["payload"]):
        if event == "sched_switch":
            running[cpu] = not payload.rsplit("next_pid=", 1)[-1].startswith("0 ")
            continue
        if comm in kthreads:
            gp_cpu = cpu
        if event != "rcu_quiescent_state_report":
            continue
        f = payload.split()
        if len(f) < 7 or f[3] != "0":
            continue
        mask, left = (int(x, 16) for x in f[2].split(">"))
        if left != 0:
            continue
        if f[6] != "0":
            out[int(f[1])] = (_CODE["blocked_reader"], int(t))
            continue
        reported = [int(f[4]) + b for b in range(64) if mask >> b & 1]
        if gp_cpu in reported:
            code = _CODE["gp_kthread_cpu"]
        elif comm not in kthreads and reported == [cpu]:
            code = _CODE["idle_cpu"] if comm == "<idle>" else _CODE["busy_cpu"]
        else:
            code = _CODE["busy_cpu"] if any(running.get(c, False) for c in reported) else _CODE["idle_cpu"]
        out[int(f[1])] = (code, int(t))
    return out


_PID = re.compile(r"(?:^| )pid=(\d+)")
_NEXT_PID = re.compile(r"next_pid=(\d+)")


def time_breakdown(events: pd.DataFrame, requests: pd.DataFrame, marks: pd.DataFrame) -> dict | None:
    """Where the synchronize_rcu() calls' time went, from the trace, in the engine's parts
    (rcusim.results.run.BREAKDOWN_PARTS): ``matched`` calls and each part's sum over them, ns.

    Each call is matched with the first GP that starts after it (the GP its rcu_seq_snap()
    waits for: one already running when it was called cannot serve it) and ends before it
    returns; its caller is the task running on its CPU when it was made (sched_switch).
    Then ``before_gp`` runs from the call to that GP's start, ``qs_round`` to the report that
    emptied the root, ``gp_end`` to the GP's end, ``callback`` to the caller's
    ``sched_waking`` (wakeme_after_rcu() calling try_to_wake_up()), ``wakeup`` to its
    ``sched_wakeup`` (queued on a run queue) and ``runqueue`` to the ``sched_switch`` that
    runs it. None when no call could be matched (no such events in the trace);
    :func:`breakdown_us` turns results into means.
    """
    if len(requests) == 0 or len(marks) == 0:
        return None
    switch = events[events["event"] == "sched_switch"]
    next_pid = switch["payload"].str.extract(_NEXT_PID, expand=False).astype(float)
    waking = events[events["event"] == "sched_waking"]
    woken = events[events["event"] == "sched_wakeup"]
    wake_pid = {name: frame["payload"].str.extract(_PID, expand=False).astype(float)
                for name, frame in (("waking", waking), ("wakeup", woken))}
    t_start = requests["t_start_ns"].to_numpy()
    t_end = requests["t_end_ns"].to_numpy()
    order = np.argsort(marks["t_start_ns"].to_numpy(), kind="stable")
    gp_start = marks["t_start_ns"].to_numpy()[order]
    gp_end = marks["t_end_ns"].to_numpy()[order]
    gp_qs = marks["t_qs_ns"].to_numpy()[order]
    k = np.searchsorted(gp_start, t_start, side="left")
    ok = k < len(gp_start)
    k = np.minimum(k, len(gp_start) - 1)
    ok &= (gp_end[k] <= t_end) & (gp_qs[k] >= 0)
    # The caller: the task its CPU switched to last before the call.
    caller = np.full(len(t_start), -1.0)
    cpus = requests["cpu"].to_numpy()
    for cpu in np.unique(cpus):
        on = (switch["cpu"] == cpu).to_numpy()
        times, pids = switch["t_ns"].to_numpy()[on], next_pid.to_numpy()[on]
        mine = cpus == cpu
        j = np.searchsorted(times, t_start[mine], side="right") - 1
        caller[mine] = np.where(j >= 0, pids[np.maximum(j, 0)], -1)
    ok &= caller > 0

    def first_after(times_by_pid: dict, t: np.ndarray) -> np.ndarray:
        out = np.full(len(t), -1, dtype=np.int64)
        for pid, times in times_by_pid.items():
            if len(times) == 0:
                continue  # never woken in the trace: its calls stay unmatched
            mine = caller == pid
            j = np.searchsorted(times, t[mine], side="left")
            out[mine] = np.where(j < len(times), times[np.minimum(j, len(times) - 1)], -1)
        return out

    def by_pid(frame, pids) -> dict:
        return {pid: frame["t_ns"].to_numpy()[(pids == pid).to_numpy()] for pid in np.unique(caller[caller > 0])}

    t_waking = first_after(by_pid(waking, wake_pid["waking"]), gp_end[k])
    t_wakeup = first_after(by_pid(woken, wake_pid["wakeup"]), np.maximum(t_waking, 0))
    t_run = first_after({pid: switch["t_ns"].to_numpy()[(next_pid == pid).to_numpy()]
                         for pid in np.unique(caller[caller > 0])}, np.maximum(t_wakeup, 0))
    ok &= (t_waking >= 0) & (t_wakeup >= 0) & (t_run >= 0) & (t_run <= t_end)
    if not ok.any():
        return None
    marks_at = [t_start, gp_start[k], gp_qs[k], gp_end[k], t_waking, t_wakeup, t_run]
    return {"matched": int(ok.sum()), "sums_ns": [int(np.sum(b[ok] - a[ok])) for a, b in zip(marks_at, marks_at[1:])]}


def breakdown_us(pooled: list[dict]) -> dict:
    """Mean microseconds per part over the matched calls of several :func:`time_breakdown`
    results, keyed as the engine's ``normal_time_us`` (BREAKDOWN_PARTS)."""
    matched = sum(b["matched"] for b in pooled)
    sums = np.sum([b["sums_ns"] for b in pooled], axis=0)
    return {part: round(int(total) / matched / 1e3, 3) for part, total in zip(BREAKDOWN_PARTS, sums)}
