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

from rcusim.results.result import LAST_QS_NAMES, make_gps_frame

__all__ = ["EVENT_COLUMNS", "read_ftrace", "grace_periods", "gp_kthread_names"]

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


def gp_kthread_names() -> tuple[str, ...]:
    """The GP kthread's comm for each flavour (rcu_preempt with CONFIG_PREEMPT_RCU, else rcu_sched)."""
    return ("rcu_preempt", "rcu_sched")


def grace_periods(events: pd.DataFrame) -> pd.DataFrame:
    """The normal grace periods of a trace, as a results ``gps`` frame.

    A GP is the span from its ``rcu_grace_period ... start`` to its ``end`` (rcu_gp_init()
    and rcu_gp_cleanup()); GPs whose start or end the trace lacks are left out.
    ``fqs_scans`` counts its ``fqsstart`` events (rcu_gp_fqs_loop()). ``last_qs`` names the
    report that emptied the root's qsmask (``rcu_quiescent_state_report`` at level 0 leaving
    0) by the CPU it was for, as the engine does (last_qs_src(), fqs_qs_src()): the GP
    kthread's CPU (the CPU it last traced from), else a busy CPU (the report runs on that CPU
    in a task, or a scan found it running one), else an idle one. A report with preempted
    readers left (its last field) waits for them: the GP's end is then a blocked reader's.

    Parameters
    ----------
    events : pandas.DataFrame
        :func:`read_ftrace`'s frame.

    Returns
    -------
    pandas.DataFrame
        Columns of rcusim.results.result.GP_COLUMNS, one row per complete GP in gp_seq order.
    """
    gp = events[events["event"] == "rcu_grace_period"]
    fields = gp["payload"].str.split(expand=True) if len(gp) else pd.DataFrame(columns=[0, 1, 2])
    seq = pd.to_numeric(fields[1], errors="coerce") if len(gp) else pd.Series(dtype=float)
    what = fields[2] if len(gp) else pd.Series(dtype=object)
    starts = dict(zip(seq[what == "start"].astype(np.int64), gp["t_ns"][what == "start"]))
    ends = dict(zip(seq[what == "end"].astype(np.int64), gp["t_ns"][what == "end"]))
    scans = (seq[what == "fqsstart"].astype(np.int64).value_counts().to_dict()) if len(gp) else {}
    last = _last_reporters(events)
    complete = sorted(s for s in starts if s in ends and ends[s] >= starts[s])
    return make_gps_frame(
        complete,
        [starts[s] for s in complete],
        [ends[s] for s in complete],
        np.zeros(len(complete), dtype=bool),
        [scans.get(s, 0) for s in complete],
        [last.get(s, -1) for s in complete],
    )


def _last_reporters(events: pd.DataFrame) -> dict[int, int]:
    """LAST_QS code of the report that emptied the root, by gp_seq."""
    kthreads = set(gp_kthread_names())
    running: dict[int, bool] = {}  # CPU -> runs a task (not its idle task), from sched_switch
    gp_cpu = -1
    out: dict[int, int] = {}
    for comm, cpu, event, payload in zip(events["comm"], events["cpu"], events["event"], events["payload"]):
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
            out[int(f[1])] = _CODE["blocked_reader"]
            continue
        reported = [int(f[4]) + b for b in range(64) if mask >> b & 1]
        if gp_cpu in reported:
            code = _CODE["gp_kthread_cpu"]
        elif comm not in kthreads and reported == [cpu]:
            code = _CODE["idle_cpu"] if comm == "<idle>" else _CODE["busy_cpu"]
        else:
            code = _CODE["busy_cpu"] if any(running.get(c, False) for c in reported) else _CODE["idle_cpu"]
        out[int(f[1])] = code
    return out
