"""Two traces of one scenario laid GP by GP: where each grace period's time went on each
side, and the first systematic difference.

A side is a results directory (each boot's ``raw/<variant>/boot-<k>/trace.txt.gz`` of
``rcusim kernel``, the GPs that start while its workload runs, ``window.json``, or ``raw/<variant>/trace.txt.gz`` that ``kernel --twin`` writes for the
simulation) or an ftrace text file (``run --ftrace``'s, or a kernel's ``trace``).

Each GP (:func:`rcusim.results.ftrace_read.gp_marks`) splits into ``qs_wait``, from
rcu_gp_init()'s start to the report that emptied the root, and ``cleanup``, from there to
rcu_gp_cleanup()'s end; ``first_fqs`` is the wait until its first force-quiescent-state
scan, where it had one. The i-th GP of one side faces the i-th of the other. A phase
differs systematically when one side is longer in at least :data:`CONSISTENT` of the
aligned GPs and the medians differ by more than :data:`MATERIAL` of the GP's median length.
The per-call time breakdown of the two summaries (``normal_time_us``) is set side by side
the same way, in the order a call lives it.

Expedited GPs (:func:`rcusim.results.ftrace_read.exp_marks`) are laid side by side the same
way, each by its ``length`` (``start`` to ``end``) and the ``gap`` to the next one's
``start``, and whether that next one starts on the same CPU (the same caller's back-to-back
GP, or the other caller's); the gap splits, on the starter's CPU, into the wake-up of that
caller, its return to its next call and that call's way to the next start (:func:`exp_phases`).

Each CPU's way to its quiescent state is set side by side too (:func:`cpu_qs_steps`): from the
GP's start to the CPU noticing it (``cpustart``, __note_gp_changes()), from there to the QS it
passes (``cpuqs``, rcu_qs()) and from there to its own report to its leaf; the GP kthread's CPU
apart, which notices the GP in rcu_gp_init() itself.

Where tasks run is set side by side too (:func:`placement`): the share of wake-ups that land on
the CPU the task last ran on, and the migrations a side traced (``sched_migrate_task``: a
kernel booted with ``--trace-event sched/sched_migrate_task``, rcusim's traces always).

Where RCU_SOFTIRQ runs is set side by side too (:func:`softirq_contexts`; a kernel booted with
``--trace-event irq/softirq_entry --trace-event irq/softirq_exit``, rcusim's traces always): its
passes at an irq exit over a task, at one from idle and in ksoftirqd/N; how often an irq exit's
``handle_softirqs()`` restarts it (an entry within :data:`RESTART_GAP_NS` of the same CPU's
RCU ``softirq_exit``, no switch between), how many passes ksoftirqd runs a turn, and the tasks
switched out still runnable (``prev_state=R``: preempted, or at a system call's exit).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from rcusim.errors import ScenarioError
from rcusim.results.frames import LAST_QS_NAMES
from rcusim.results.ftrace_read import _NEXT_PID, _PID, GP_KTHREADS, exp_marks, gp_marks, read_ftrace, seq_events
from rcusim.results.run import BREAKDOWN_PARTS

__all__ = ["load_side", "gp_phases", "exp_phases", "cpu_qs_steps", "placement", "softirq_contexts",
           "tracediff_report", "CONSISTENT", "MATERIAL", "RESTART_GAP_NS"]

#: Share of aligned GPs in which one side must be longer for a systematic difference.
CONSISTENT = 0.75
#: Smallest difference of medians that counts, as a share of the GPs' median length.
MATERIAL = 0.10

#: An irq exit's restart of RCU_SOFTIRQ follows its previous pass's end within this (the guest's
#: come 2-5 µs after it, rcusim's at once; the next tick's pass a jiffy later).
RESTART_GAP_NS = 50_000

PHASES = ("length", "qs_wait", "cleanup", "first_fqs")
QS_STEPS = ("notice", "qs", "report")
EXP_PHASES = ("length", "gap", "wake", "return", "entry")
_TARGET_CPU = re.compile(r"target_cpu=(\d+)")


def _open_text(path: Path):
    return gzip.open(path, "rt", errors="replace") if path.suffix == ".gz" else open(path, errors="replace")


def _trace_files(source: Path, variant: str | None) -> tuple[list[Path], dict | None, str]:
    if source.is_file():
        return [source], None, variant or ""
    raw = source / "raw"
    if not raw.is_dir():
        raise ScenarioError(f"{str(source)!r} has no raw/ traces", key="tracediff",
                            allowed="a results directory of 'rcusim kernel' (or its -sim twin), or an ftrace file")
    summary_path = source / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else None
    names = sorted(p.name for p in raw.iterdir() if p.is_dir())
    name = variant or (names[0] if names else "")
    if name not in names:
        raise ScenarioError(f"no traces of variant {name!r} in {str(source)!r}", key="--variant",
                            allowed=", ".join(names) or "a directory with traces")
    files = sorted((raw / name).glob("boot-*/trace.txt.gz")) or sorted((raw / name).glob("trace.txt.gz"))
    if not files:
        raise ScenarioError(f"no trace.txt.gz under {str(raw / name)!r}", key="tracediff",
                            allowed="a results directory written with traces")
    return files, summary, name


def _variant_lines(f, variant: str):
    """Lines of one variant of a multi-variant ``run --ftrace`` file (all lines if unmarked)."""
    current = None
    for line in f:
        if line.startswith("# rcusim variant: "):
            current = line.split(": ", 1)[1].strip()
            continue
        if current is None or not variant or current == variant:
            yield line


def load_side(source, variant: str | None = None) -> dict:
    """A side's GP phases (one frame, boots one after the other) and its summary's breakdown."""
    files, summary, name = _trace_files(Path(source), variant)
    frames, exp_frames, steps = [], [], []
    placed = {"woken": 0, "on_last_cpu": 0, "migrations": 0}
    softirq: dict[str, int] = {}
    for k, path in enumerate(files):
        with _open_text(path) as f:
            events = read_ftrace(_variant_lines(f, name))
        marks, exp = gp_marks(events), exp_marks(events)
        window = path.parent / "window.json"
        during = events
        if window.is_file():  # a real boot: the GPs that start while its workload runs
            span = json.loads(window.read_text())
            marks = marks[(marks["t_start_ns"] >= span["t0_ns"]) & (marks["t_start_ns"] <= span["t1_ns"])]
            exp = exp[(exp["t_start_ns"] >= span["t0_ns"]) & (exp["t_start_ns"] <= span["t1_ns"])]
            during = events[(events["t_ns"] >= span["t0_ns"]) & (events["t_ns"] <= span["t1_ns"])]
        frames.append(gp_phases(marks).assign(boot=k))
        steps.append(cpu_qs_steps(events, marks))
        exp_frames.append(exp_phases(exp, events).assign(boot=k))
        for key, value in placement(during).items():
            placed[key] += value
        for key, value in softirq_contexts(during).items():
            softirq[key] = softirq.get(key, 0) + value
    breakdown = None
    if summary is not None:
        breakdown = summary.get("variants", {}).get(name, {}).get("metrics", {}).get("normal_time_us")
    return {"label": str(source), "variant": name, "gps": pd.concat(frames, ignore_index=True),
            "exp": pd.concat(exp_frames, ignore_index=True), "breakdown": breakdown,
            "qs_steps": pd.concat(steps, ignore_index=True),
            "placement": dict(placed, runs=len(files)), "softirq": dict(softirq, runs=len(files))}


def _placement_report(a: dict, b: dict) -> list[str]:
    pa, pb = a["placement"], b["placement"]
    out = ["", "task placement                          A           B"]
    share = [p["on_last_cpu"] / p["woken"] if p["woken"] else np.nan for p in (pa, pb)]
    out.append(f"  {'wake-ups onto the last CPU (share)':<32} {_fmt(share[0]) if np.isnan(share[0]) else f'{share[0]:.3f}':>9}"
               f" {_fmt(share[1]) if np.isnan(share[1]) else f'{share[1]:.3f}':>11}")
    out.append(f"  {'sched_migrate_task per run':<32} "
               + " ".join(f"{p['migrations'] / p['runs']:>{w}.1f}" if p["migrations"] else f"{'-':>{w}}"
                          for p, w in ((pa, 9), (pb, 11))))
    return out


def placement(events: pd.DataFrame) -> dict:
    """Wake-ups (``sched_wakeup``) of tasks that ran before, how many landed on the CPU the task
    last ran on (its last ``sched_switch`` in), and the ``sched_migrate_task`` events."""
    sched = events[events["event"].isin(("sched_switch", "sched_wakeup"))]
    switch = (sched["event"] == "sched_switch").to_numpy()
    pid = np.where(switch, sched["payload"].str.extract(_NEXT_PID, expand=False),
                   sched["payload"].str.extract(_PID, expand=False))
    target = sched["payload"].str.extract(_TARGET_CPU, expand=False).astype(float).fillna(-1).to_numpy()
    last_cpu: dict[str, int] = {}
    woken = on_last = 0
    for is_switch, p, cpu, tc in zip(switch, pid, sched["cpu"].to_numpy(), target):
        if is_switch:
            if p != "0":
                last_cpu[p] = int(cpu)
        elif p in last_cpu:
            woken += 1
            on_last += tc == last_cpu[p]
    return {"woken": woken, "on_last_cpu": on_last,
            "migrations": int((events["event"] == "sched_migrate_task").sum())}


def gp_phases(marks: pd.DataFrame) -> pd.DataFrame:
    """Each GP's length and phases in µs (:data:`PHASES`), its FQS scans and last reporter."""
    start, end, qs, scan = (marks[c].to_numpy() for c in ("t_start_ns", "t_end_ns", "t_qs_ns", "t_first_fqs_ns"))
    return pd.DataFrame({
        "gp_seq": marks["gp_seq"].to_numpy(),
        "length": (end - start) / 1e3,
        "qs_wait": np.where(qs >= 0, (qs - start) / 1e3, np.nan),
        "cleanup": np.where(qs >= 0, (end - qs) / 1e3, np.nan),
        "first_fqs": np.where(scan >= 0, (scan - start) / 1e3, np.nan),
        "fqs_scans": marks["fqs_scans"].to_numpy(),
        "last_qs": [LAST_QS_NAMES.get(int(c), "-") for c in marks["last_qs"]],
    })


def cpu_qs_steps(events: pd.DataFrame, marks: pd.DataFrame) -> pd.DataFrame:
    """Each CPU's steps to its QS in each GP of `marks` (µs, NaN where the trace lacks one):
    ``notice``, the GP's start to the CPU's ``cpustart``; ``qs``, to its ``cpuqs``;
    ``report``, to its own rcu_quiescent_state_report (one whose mask is its bit alone, made
    on it); ``gp_cpu``, the CPU traced the GP's start (the GP kthread's)."""
    ev = seq_events(events, "rcu_grace_period")
    rep = events[events["event"] == "rcu_quiescent_state_report"]
    fields = rep["payload"].str.split(expand=True).reindex(columns=[1, 2, 4]).astype(object).fillna("0")
    seq = pd.to_numeric(fields[1], errors="coerce")
    mask = pd.Series([int(x.split(">")[0], 16) for x in fields[2]], dtype=np.int64)
    bit = rep["cpu"].to_numpy(dtype=np.int64) - pd.to_numeric(fields[4], errors="coerce").fillna(0).to_numpy(dtype=np.int64)
    own = (mask.to_numpy() == np.left_shift(1, np.clip(bit, 0, 62))) & (bit >= 0)
    first = {}
    for key, frame in (("cpustart", ev[ev["what"] == "cpustart"]), ("cpuqs", ev[ev["what"] == "cpuqs"])):
        for t, cpu, s in zip(frame["t_ns"], frame["cpu"], frame["seq"]):
            first.setdefault((key, int(s), int(cpu)), int(t))
    for t, cpu, s in zip(rep["t_ns"].to_numpy()[own], rep["cpu"].to_numpy()[own], seq.to_numpy()[own]):
        first.setdefault(("report", int(s), int(cpu)), int(t))
    starter = {int(s): int(c) for s, c in zip(ev["seq"][ev["what"] == "start"], ev["cpu"][ev["what"] == "start"])}
    cpus = sorted({int(c) for c in events["cpu"].unique()})
    rows = []
    for s, t0 in zip(marks["gp_seq"], marks["t_start_ns"]):
        s = int(s)
        for cpu in cpus:
            marks_at = [t0] + [first.get((key, s, cpu), np.nan) for key in ("cpustart", "cpuqs", "report")]
            steps = np.diff(np.asarray(marks_at, dtype=float)) / 1e3
            rows.append((s, cpu, starter.get(s) == cpu, *steps))
    return pd.DataFrame(rows, columns=["gp_seq", "cpu", "gp_cpu", *QS_STEPS])


def _qs_steps_report(a: dict, b: dict) -> list[str]:
    qa, qb = a.get("qs_steps"), b.get("qs_steps")
    if qa is None or qb is None or not len(qa) or not len(qb):
        return []
    out = ["", "each CPU's QS (median µs)                A           B      B/A"]
    for gp_cpu, who in ((False, "other CPUs"), (True, "GP kthread's CPU")):
        for step in QS_STEPS[1:] if gp_cpu else QS_STEPS:
            xa, xb = (q[q["gp_cpu"] == gp_cpu][step].dropna() for q in (qa, qb))
            ma, mb = (float(np.median(x)) if len(x) else np.nan for x in (xa, xb))
            ratio = mb / ma if ma and not np.isnan(ma) and not np.isnan(mb) else np.nan
            out.append(f"  {who + ': ' + step:<32} {_fmt(ma):>9} {_fmt(mb):>11} "
                       f"{'-' if np.isnan(ratio) else f'{ratio:.2f}':>8}")
    return out


def exp_phases(marks: pd.DataFrame, events: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each expedited GP's length, the gap to the next one's start (µs) and whether that one
    starts on the same CPU (1 or 0; the last GP has neither: NaN); with the trace's
    ``snap`` and ``done`` events, the gap's parts on its starter's CPU: ``wake``, from the
    GP's end to that caller's ``done`` (rcu_exp_wait_wake()'s wake-up and the switch to
    it), ``return``, from there to its CPU's next ``snap`` (the return and the next call),
    ``entry``, from that to the next GP's start when it starts there (the funnel and the
    mutex); NaN where the trace lacks one."""
    start, end, cpu = (marks[c].to_numpy() for c in ("t_start_ns", "t_end_ns", "cpu_start"))
    last = np.full(min(len(start), 1), np.nan)
    out = pd.DataFrame({"gp_seq": marks["gp_seq"].to_numpy(), "length": (end - start) / 1e3,
                        "gap": np.append((start[1:] - end[:-1]) / 1e3, last),
                        "same_cpu": np.append((cpu[1:] == cpu[:-1]).astype(float), last)})
    parts = {p: np.full(len(start), np.nan) for p in ("wake", "return", "entry")}
    if events is not None and len(start):
        ev = seq_events(events, "rcu_exp_grace_period")
        t, on, seq, what = (ev[c].to_numpy() for c in ("t_ns", "cpu", "seq", "what"))
        for i, (s, e, c) in enumerate(zip(marks["gp_seq"], end, cpu)):
            done = np.flatnonzero((what == "done") & (seq == s) & (on == c) & (t >= e))
            if not len(done):
                continue
            parts["wake"][i] = (t[done[0]] - e) / 1e3
            snap = np.flatnonzero((what == "snap") & (on == c) & (t >= t[done[0]]))
            if not len(snap):
                continue
            parts["return"][i] = (t[snap[0]] - t[done[0]]) / 1e3
            if i + 1 < len(start) and cpu[i + 1] == c and start[i + 1] >= t[snap[0]]:
                parts["entry"][i] = (start[i + 1] - t[snap[0]]) / 1e3
    return out.assign(**parts)


def _exp_report(ea: pd.DataFrame, eb: pd.DataFrame) -> tuple[list[str], str | None]:
    """The expedited GPs' lengths and gaps side by side (quantiles), and the first phase
    that differs systematically."""
    n = min(len(ea), len(eb))
    out = ["", f"expedited GPs: {len(ea)} A, {len(eb)} B; over {n} aligned (µs)"
           "      p10 A   p10 B   p50 A   p50 B   p90 A   p90 B  B/A (p50)  systematic"]
    ea, eb = ea.iloc[:n], eb.iloc[:n]
    scale = float(np.median(ea["length"] + ea["gap"].fillna(0)))
    first = None
    for p in EXP_PHASES:
        if ea[p].isna().all() or eb[p].isna().all():
            continue
        qa, qb = (np.nanpercentile(x[p], (10, 50, 90)) for x in (ea, eb))
        verdict = _systematic(ea[p], eb[p], scale)
        out.append(f"  {p:<32} " + " ".join(f"{qa[i]:>7.1f} {qb[i]:>7.1f}" for i in range(3))
                   + f" {qb[1] / qa[1]:>10.2f}  {verdict or ''}")
        if verdict and first is None:
            first = f"expedited GP {p}: B {verdict} in most aligned GPs"
    out.append(f"  {'next GP on the same CPU (share)':<32} {ea['same_cpu'].mean():>7.2f} {eb['same_cpu'].mean():>7.2f}")
    return out, first


def _systematic(a: pd.Series, b: pd.Series, scale: float) -> str | None:
    """'longer'/'shorter' (b against a) if b differs from a systematically, else None."""
    both = pd.DataFrame({"a": a.to_numpy(), "b": b.to_numpy()}).dropna()
    if len(both) == 0:
        return None
    longer = float(np.mean(both["b"] > both["a"]))
    diff = float(np.median(both["b"]) - np.median(both["a"]))
    if abs(diff) <= MATERIAL * scale:
        return None
    if diff > 0 and longer >= CONSISTENT:
        return "longer"
    if diff < 0 and 1 - longer >= CONSISTENT:
        return "shorter"
    return None


def _fmt(x) -> str:
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.1f}"


def _context(comm: str) -> str:
    if comm.startswith("ksoftirqd/"):
        return "ksoftirqd"
    if comm in ("<idle>", "swapper") or comm.startswith("swapper/"):
        return "idle"
    return "gp_kthread" if comm in GP_KTHREADS else "task"


def softirq_contexts(events: pd.DataFrame) -> dict:
    """RCU_SOFTIRQ passes (``softirq_entry`` of vec 9) by where they run, an irq exit's
    restarts, ksoftirqd's passes a turn, and the tasks switched out still runnable, counted
    from one run's events (:data:`RESTART_GAP_NS`)."""
    counts = dict.fromkeys(("pass_task", "pass_idle", "pass_ksoftirqd", "irq_exits", "restarts", "restarting",
                            "ksoftirqd_turns", "ksoftirqd_single", "runnable_task", "runnable_ksoftirqd",
                            "runnable_gp_kthread"), 0)
    sel = events[events["event"].isin(("softirq_entry", "softirq_exit", "sched_switch"))]
    last_exit: dict[int, int] = {}
    chain: dict[int, int] = {}  # CPU -> passes of its latest irq exit
    turn: dict[int, int] = {}  # CPU -> ksoftirqd's passes in its turn there
    for comm, cpu, t, event, payload in zip(sel["comm"], sel["cpu"], sel["t_ns"], sel["event"], sel["payload"]):
        if event == "sched_switch":
            last_exit.pop(cpu, None)
            prev_comm = payload.split("prev_comm=", 1)[1].split(" ", 1)[0]
            state = payload.split("prev_state=", 1)[1].split(" ", 1)[0]
            if state.startswith("R") and _context(prev_comm) != "idle":
                counts["runnable_" + _context(prev_comm)] += 1
            if cpu in turn:
                counts["ksoftirqd_turns"] += 1
                counts["ksoftirqd_single"] += turn.pop(cpu) == 1
            if payload.split("next_comm=", 1)[1].startswith("ksoftirqd/"):
                turn[cpu] = 0
            continue
        if not payload.startswith("vec=9 "):
            continue
        if event == "softirq_exit":
            last_exit[cpu] = t
            continue
        where = _context(comm)
        if where == "ksoftirqd":
            counts["pass_ksoftirqd"] += 1
            if cpu in turn:
                turn[cpu] += 1
            continue
        counts["pass_idle" if where == "idle" else "pass_task"] += 1
        if cpu in last_exit and t - last_exit[cpu] <= RESTART_GAP_NS:
            counts["restarts"] += 1
            counts["restarting"] += chain.get(cpu, 1) == 1
            chain[cpu] = chain.get(cpu, 1) + 1
        else:
            counts["irq_exits"] += 1
            chain[cpu] = 1
    return counts


def _softirq_report(a: dict, b: dict) -> list[str]:
    sa, sb = a["softirq"], b["softirq"]
    if not (sa["pass_task"] + sa["pass_idle"] + sa["pass_ksoftirqd"]) or not (
            sb["pass_task"] + sb["pass_idle"] + sb["pass_ksoftirqd"]):
        return ["", "RCU_SOFTIRQ: not traced on one side (irq/softirq_entry, irq/softirq_exit)"]

    def per_run(key):
        return [f"{s[key] / s['runs']:.1f}" for s in (sa, sb)]

    def share(num, den):
        return [f"{s[num] / s[den]:.2f}" if s[den] else "-" for s in (sa, sb)]

    rows = [("passes at an irq exit over a task", per_run("pass_task")),
            ("passes at an irq exit from idle", per_run("pass_idle")),
            ("passes in ksoftirqd", per_run("pass_ksoftirqd")),
            ("irq exits that restart (share)", share("restarting", "irq_exits")),
            ("passes an irq exit (mean)",
             [f"{(s['irq_exits'] + s['restarts']) / s['irq_exits']:.2f}" if s["irq_exits"] else "-" for s in (sa, sb)]),
            ("ksoftirqd turns of one pass", share("ksoftirqd_single", "ksoftirqd_turns")),
            ("switched out runnable: tasks", per_run("runnable_task")),
            ("  ksoftirqd", per_run("runnable_ksoftirqd")),
            ("  GP kthread", per_run("runnable_gp_kthread"))]
    out = ["", "RCU_SOFTIRQ and preemption (per run)   A           B"]
    out += [f"  {label:<32} {va:>9} {vb:>11}" for label, (va, vb) in rows]
    return out


def tracediff_report(a: dict, b: dict, rows: int = 10) -> str:
    """The report: the first `rows` aligned GPs, each phase's median on both sides, the
    last reporters and FQS scans, the calls' breakdown, and the first systematic difference."""
    ga, gb = a["gps"], b["gps"]
    n = min(len(ga), len(gb))
    out = [f"A: {a['label']} ({a['variant'] or '-'}): {len(ga)} GPs",
           f"B: {b['label']} ({b['variant'] or '-'}): {len(gb)} GPs", ""]
    if n == 0:
        if min(len(a["exp"]), len(b["exp"])):
            lines, first = _exp_report(a["exp"], b["exp"])
            return "\n".join(out + ["no normal GP on one side"] + lines
                              + ["", f"first systematic difference: {first or 'none found'}"])
        return "\n".join(out + ["no GP on one side: nothing to align"])
    head = f"{'GP':>4}  " + "  ".join(f"{p + ' A':>11} {p + ' B':>11}" for p in PHASES[:3]) + "  fqs A/B  last QS A / B"
    out.append(head)
    for i in range(min(rows, n)):
        ra, rb = ga.iloc[i], gb.iloc[i]
        cells = "  ".join(f"{_fmt(ra[p]):>11} {_fmt(rb[p]):>11}" for p in PHASES[:3])
        out.append(f"{i:>4}  {cells}  {ra['fqs_scans']:>3}/{rb['fqs_scans']:<3}  {ra['last_qs']} / {rb['last_qs']}")
    ga, gb = ga.iloc[:n], gb.iloc[:n]
    scale = float(np.median(ga["length"]))
    out += ["", f"median over {n} aligned GPs (µs)      A           B      B/A  systematic"]
    first = None
    for p in PHASES:
        ma, mb = np.nanmedian(ga[p]) if ga[p].notna().any() else np.nan, \
            np.nanmedian(gb[p]) if gb[p].notna().any() else np.nan
        verdict = _systematic(ga[p], gb[p], scale) if p != "length" else _systematic(ga[p], gb[p], 0.0)
        ratio = mb / ma if ma and not np.isnan(ma) and not np.isnan(mb) else np.nan
        out.append(f"  {p:<32} {_fmt(ma):>9} {_fmt(mb):>11} {_fmt(ratio) if np.isnan(ratio) else f'{ratio:.2f}':>8}"
                   f"  {verdict or ''}")
        if verdict and p != "length" and first is None:
            first = f"GP phase {p}: B {verdict} in most aligned GPs"
    out.append(f"  {'FQS scans per GP (mean)':<32} {ga['fqs_scans'].mean():>9.2f} {gb['fqs_scans'].mean():>11.2f}")
    for name in LAST_QS_NAMES.values():
        sa, sb = float(np.mean(ga["last_qs"] == name)), float(np.mean(gb["last_qs"] == name))
        out.append(f"  {'last QS: ' + name + ' (share)':<32} {sa:>9.2f} {sb:>11.2f}")
    if a["breakdown"] and b["breakdown"]:
        out += ["", "calls' time breakdown (mean µs)         A           B      B/A"]
        call_first = None
        for part in BREAKDOWN_PARTS:
            xa, xb = a["breakdown"].get(part), b["breakdown"].get(part)
            ratio = xb / xa if xa else np.nan
            out.append(f"  {part:<32} {_fmt(xa):>9} {_fmt(xb):>11} {'-' if np.isnan(ratio) else f'{ratio:.2f}':>8}")
            if call_first is None and xa is not None and xb is not None and abs(xb - xa) > max(MATERIAL * abs(xa), 50):
                call_first = f"call part {part}: A {xa:.1f} µs, B {xb:.1f} µs"
        first = call_first or first
    if min(len(a["exp"]), len(b["exp"])):
        lines, exp_first = _exp_report(a["exp"], b["exp"])
        out += lines
        first = first or exp_first
    out += _qs_steps_report(a, b)
    out += _placement_report(a, b)
    out += _softirq_report(a, b)
    out += ["", f"first systematic difference: {first or 'none found'}"]
    return "\n".join(out)
