"""Traces written: Chrome trace-event JSON and ftrace text from the engine's trace buffer, and the
CLI's --trace and --ftrace. (The buffer itself: tests/engine/test_trace.py.)

The checks hold the trace against what the engine counts on its own (its
counters and its grace-period records), so a hook in the wrong place or a
record lost fails them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter

import pytest

from rcusim.commands.cli import main
from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario
from rcusim.results import trace
from rcusim.results.run import run_scenario

from tests.engine import test_trace as engine_trace
from tests.engine.test_trace import LIMIT, ROOT, SYNC, SYNC_SMALL

# The engine's traced runs (fixtures of tests/engine/test_trace.py), which the trace writers format here.
sync_traced, softirq_traced, storm_traced = (engine_trace.sync_traced, engine_trace.softirq_traced,
                                             engine_trace.storm_traced)

# The kernel's trace file layout: "comm-pid [cpu] flags secs.usecs: event: payload".
FTRACE_LINE = re.compile(r"^ *\S+-\d+ +\[\d{3}\] [.dNhs1-9]{5} +(?P<stamp>\d+\.\d{6}): "
                         r"(?P<event>\w+): (?P<payload>.*)$")
_COMM, _GP_SEQ, _RHP = r"[^ ]{1,15}", r"-?\d+", r"[0-9a-f]{16}"
# Each event's TP_printk() (include/trace/events/rcu.h and sched.h), field by field.
PAYLOADS = {
    "rcu_grace_period": rf"(?P<rcu>rcu_\w+) {_GP_SEQ} (start|fqsstart|fqsend|cpustart|cpuqs|end)",
    "rcu_fqs": rf"(?P<rcu>rcu_\w+) {_GP_SEQ} \d+ dti",
    "rcu_callback": rf"(?P<rcu>rcu_\w+) rhp=(?P<rhp>{_RHP}) func=(?P<func>\w+) (?P<qlen>\d+)",
    "rcu_quiescent_state_report": (rf"(?P<rcu>rcu_\w+) (?P<gp_seq>{_GP_SEQ}) (?P<mask>[0-9a-f]+)>(?P<qsmask>[0-9a-f]+) "
                                   r"(?P<level>\d+) (?P<grplo>\d+) (?P<grphi>\d+) (?P<gp_tasks>[01])"),
    "rcu_nocb_wake": r"(?P<rcu>rcu_\w+) \d+ (WakeEmpty|WakeLazy|WakeOvf|WakeNot|FirstBQ|FirstBQwake|FirstBQnoWake)",
    "rcu_batch_start": r"(?P<rcu>rcu_\w+) CBs=\d+ bl=\d+",
    "rcu_invoke_callback": rf"(?P<rcu>rcu_\w+) rhp=(?P<rhp>{_RHP}) func=(?P<func>\w+)",
    "rcu_batch_end": r"(?P<rcu>rcu_\w+) CBs-invoked=\d+ idle=[C.][S.][I.][R.]",
    "rcu_exp_grace_period": rf"(?P<rcu>rcu_\w+) {_GP_SEQ} (snap|start|end|done)",
    "sched_switch": (rf"prev_comm={_COMM} prev_pid=(?P<prev_pid>\d+) prev_prio=\d+ prev_state=(R\+?|S|D) ==> "
                     rf"next_comm={_COMM} next_pid=(?P<next_pid>\d+) next_prio=\d+"),
    "sched_wakeup": rf"comm={_COMM} pid=\d+ prio=\d+ target_cpu=\d{{3}}",
    "sched_migrate_task": rf"comm={_COMM} pid=\d+ prio=\d+ orig_cpu=(?P<orig>\d+) dest_cpu=(?P<dest>\d+)",
    "softirq_entry": r"vec=9 \[action=RCU\]",
    "softirq_exit": r"vec=9 \[action=RCU\]",
}
PAYLOAD_RE = {event: re.compile(f"^{fmt}$") for event, fmt in PAYLOADS.items()}


def ftrace_events(v):
    """(event, payload match) of every body line of the variant's ftrace text, each
    checked against the kernel's layout and its event's TP_printk() format."""
    lines = list(trace.ftrace_lines(v))
    assert lines[0] == "# tracer: nop"
    out = []
    for ln in lines:
        if ln.startswith("#"):
            continue
        line = FTRACE_LINE.match(ln)
        assert line, ln
        payload = PAYLOAD_RE[line["event"]].match(line["payload"])
        assert payload, ln
        out.append((line["event"], payload))
    return out


def test_chrome_trace_is_valid_json_with_tracks(sync_traced, storm_traced, tmp_path):
    path = trace.write_chrome_trace(sync_traced, tmp_path / "t.json")
    data = json.loads(path.read_text())
    events = data["traceEvents"]
    assert {e["ph"] for e in events} <= {"M", "X", "i"}
    assert all(e["dur"] >= 0 for e in events if e["ph"] == "X")
    names = {e["name"] for e in events}
    assert {"synchronize_rcu", "force_qs_rnp", "QS (FQS: idle)", "rcu_preempt"} <= names
    assert any(n.startswith("GP ") for n in names) and any(n.startswith("rcu_do_batch") for n in names)
    threads = {(e["pid"], e["args"]["name"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    cpu_tracks = {name for pid, name in threads if name.startswith("CPU ")}
    assert cpu_tracks == {f"CPU {c}" for c in range(8)}
    assert any(name.startswith("rcuop/") for _, name in threads)
    storm = trace.chrome_trace(storm_traced)["traceEvents"]
    storm_names = {e["name"] for e in storm}
    assert "rcu_exp_handler IPI" in storm_names and "synchronize_rcu_expedited" in storm_names
    assert any(n.startswith("expedited GP ") for n in storm_names)


def test_ftrace_text_has_kernel_layout(sync_traced, storm_traced):
    for result in (sync_traced, storm_traced):
        for v in result.variants.values():
            names = [event for event, _m in ftrace_events(v)]
            assert names.count("rcu_invoke_callback") == v.counters["callbacks_invoked"]
            stamps = [float(FTRACE_LINE.match(ln)["stamp"]) for ln in trace.ftrace_lines(v) if ln[0] != "#"]
            assert stamps == sorted(stamps)
    v = sync_traced.variants["default"]
    body = [ln for ln in trace.ftrace_lines(v) if not ln.startswith("#")]
    start = next(ln for ln in body if "rcu_batch_start" in ln)
    assert re.search(r"rcu_batch_start: rcu_preempt CBs=\d+ bl=\d+$", start)
    gp = next(ln for ln in body if ln.endswith(" start") and "rcu_grace_period" in ln)
    # rcu_state.gp_seq starts at (0 - 300) << 2, plus rcu_seq_start(); from v5.10 printed
    # signed (%ld), before as an unsigned long.
    assert gp.split()[-2] == str((-300 << 2) + 1)
    before = run_scenario(load_scenario(SYNC, overrides=SYNC_SMALL + ["kernel.release=5.4"]), variants=["default"],
                          progress=False, trace_limit=LIMIT).variants["default"]
    gp = next(ln for ln in trace.ftrace_lines(before) if ln.endswith(" start") and "rcu_grace_period" in ln)
    assert gp.split()[-2] == str(((-300 << 2) + 1) & (2**64 - 1))


def test_expedited_start_and_end_carry_the_same_snapshot(storm_traced):
    """exp_funnel_lock() and rcu_exp_wait_wake() both trace the snapshot s the GP was
    started for: one start line and one end line per value, in that order."""
    v = storm_traced.variants["rt_mutex"]
    exp = [ln.split()[-2:] for ln in trace.ftrace_lines(v) if "rcu_exp_grace_period" in ln]
    gps = [(s, what) for s, what in exp if what in ("start", "end")]
    starts = [int(s) for s, what in gps if what == "start"]
    ends = [int(s) for s, what in gps if what == "end"]
    assert starts and starts == ends
    assert all(s % 4 == 0 for s in starts)  # a snapshot is a completed-GP value
    assert [what for _s, what in gps] == ["start", "end"] * len(starts)


def test_each_expedited_call_traces_its_snapshot_and_its_done(storm_traced):
    """synchronize_rcu_expedited()'s 'snap' and sync_exp_work_done()'s 'done': one of each
    per call, with the same snapshot, the GP that started for it ended before its done."""
    v = storm_traced.variants["rt_mutex"]
    exp = [ln.split()[-2:] for ln in trace.ftrace_lines(v) if "rcu_exp_grace_period" in ln]
    snaps = sorted(int(s) for s, what in exp if what == "snap")
    dones = sorted(int(s) for s, what in exp if what == "done")
    assert len(snaps) == len(v.requests) and snaps == dones
    ended = {int(s) for s, what in exp if what == "end"}
    assert set(snaps) <= ended


def test_cli_writes_traces(tmp_path):
    out = tmp_path / "res"
    argv = ["run", str(SYNC), "--out", str(out), "--no-progress", "--trace", str(tmp_path / "t.json"),
            "--ftrace", str(tmp_path / "t.txt"), "--variant", "default", "--linear"]
    for kv in SYNC_SMALL:
        argv += ["--set", kv]
    assert main(argv) == 0
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert (tmp_path / "t.txt").read_text().startswith("# tracer: nop")
    assert (out / "gp_timeline.png").stat().st_size > 0


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "rcusim", *args], capture_output=True, text=True, cwd=ROOT)


def test_trace_refused_up_front_for_big_runs(tmp_path):
    out, tfile = tmp_path / "res", tmp_path / "t.json"
    proc = run_cli("run", str(SYNC), "--out", str(out), "--trace", str(tfile), "--no-progress")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("rcusim: error: --trace:")
    assert "trace records" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists() and not tfile.exists()


def test_trace_buffer_overflow_is_refused():
    with pytest.raises(ScenarioError, match="--trace: variant default produced more than 100 trace records"):
        run_scenario(load_scenario(SYNC, overrides=SYNC_SMALL), variants=["default"], progress=False,
                     trace_limit=100)


def test_trace_into_missing_directory(tmp_path):
    assert main(["run", str(SYNC), "--trace", str(tmp_path / "no" / "t.json"), "--out", str(tmp_path / "r")]
                + [a for kv in SYNC_SMALL for a in ("--set", kv)]) == 2
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("fixture", ["sync_traced", "softirq_traced", "storm_traced"])
def test_sched_events_match_engine_counters(fixture, request):
    """One sched_switch per switch into idle or to an entity (the engine's context
    switches: next_pid != 0), one sched_wakeup per wake-up."""
    for v in request.getfixturevalue(fixture).variants.values():
        events = ftrace_events(v)
        switches = [m for event, m in events if event == "sched_switch"]
        assert sum(m["next_pid"] != "0" for m in switches) == v.counters["context_switches"] > 0
        assert all(m["prev_pid"] != m["next_pid"] for m in switches)
        assert sum(event == "sched_wakeup" for event, _m in events) == v.counters["wakeups"] > 0


def test_each_migration_is_a_sched_migrate_task(sync_traced):
    """A wake-up or load balancing that moves a task records set_task_cpu()'s
    sched_migrate_task, from one CPU to another, one per migration the engine counts."""
    seen = 0
    for v in sync_traced.variants.values():
        moves = [m for event, m in ftrace_events(v) if event == "sched_migrate_task"]
        assert all(m["orig"] != m["dest"] for m in moves)
        assert len(moves) == sum(v.counters[f"migrations_{k}"] for k in ("wakeup", "newidle", "balance"))
        seen += len(moves)
    assert seen > 0


@pytest.mark.parametrize("fixture", ["sync_traced", "softirq_traced"])
def test_rcu_callback_lines_match_invocations(fixture, request):
    """Every callback invoked was queued by an rcu_callback line with its rhp and func;
    callbacks queued = callbacks invoked + those still queued at the end."""
    for v in request.getfixturevalue(fixture).variants.values():
        queued, invoked = Counter(), Counter()
        for event, m in ftrace_events(v):
            if event == "rcu_callback":
                queued[m["rhp"], m["func"]] += 1
            elif event == "rcu_invoke_callback":
                invoked[m["rhp"], m["func"]] += 1
        # An rcu_head is queued again only once its callback was invoked.
        assert all(queued[cb] - invoked[cb] in (0, 1) for cb in queued | invoked)
        assert invoked.total() == v.counters["callbacks_invoked"]
        assert queued.total() == invoked.total() + sum(queued[cb] - invoked[cb] for cb in queued)
    # Each synchronize_rcu() of the default variants queues one wakeme_after_rcu().
    v = request.getfixturevalue(fixture).variants["default"]
    wakeme = sum(event == "rcu_callback" and m["func"] == "wakeme_after_rcu" for event, m in ftrace_events(v))
    assert wakeme == len(v.requests) > 0


def test_rcu_nocb_wake_on_offloaded_cpus(sync_traced, softirq_traced):
    v = sync_traced.variants["default"]
    events = ftrace_events(v)
    wakes = [m for event, m in events if event == "rcu_nocb_wake"]
    # call_rcu() on an offloaded CPU ends in __call_rcu_nocb_wake() or the bypass.
    assert len(wakes) >= sum(event == "rcu_callback" for event, _m in events) > 0
    assert "WakeEmpty" in {m[0].split()[-1] for m in wakes}
    for v in softirq_traced.variants.values():
        assert not any(event == "rcu_nocb_wake" for event, _m in ftrace_events(v))


@pytest.mark.parametrize("fixture", ["sync_traced", "softirq_traced"])
def test_every_gp_reports_to_the_root(fixture, request):
    """rcu_report_qs_rnp(): each normal GP has a report that leaves the root's qsmask
    empty, and no report names a CPU outside its node."""
    for v in request.getfixturevalue(fixture).variants.values():
        gps = {int(m.group(0).split()[1]) for event, m in ftrace_events(v)
               if event == "rcu_grace_period" and m.group(0).endswith(" start")}
        done = set()
        for event, m in ftrace_events(v):
            if event != "rcu_quiescent_state_report":
                continue
            lo, hi, mask = int(m["grplo"]), int(m["grphi"]), int(m["mask"], 16)
            assert mask and mask.bit_length() <= hi - lo + 1
            if m["level"] == "0" and m["qsmask"] == "0":
                done.add(int(m["gp_seq"]))
        assert gps and done == gps


@pytest.mark.parametrize("fixture", ["sync_traced", "softirq_traced"])
def test_a_cpu_notices_the_gp_then_passes_its_qs_then_reports_it(fixture, request):
    """__note_gp_changes() traces "cpustart", rcu_qs() "cpuqs" and rcu_report_qs_rdp() the
    leaf's report, each when it happens: per CPU and GP in that order, and a CPU that
    reports for itself (not found idle by an FQS scan) passed its QS first."""
    checked = 0
    for v in request.getfixturevalue(fixture).variants.values():
        first: dict[tuple[str, int, int], float] = {}
        fqs_found = set()
        own_reports = []
        for ln in trace.ftrace_lines(v):
            line = FTRACE_LINE.match(ln)
            if not line:
                continue
            cpu, t = int(re.search(r"\[(\d{3})\]", ln).group(1)), float(line["stamp"])
            f = line["payload"].split()
            if line["event"] == "rcu_grace_period" and f[2] in ("cpustart", "cpuqs"):
                first.setdefault((f[2], cpu, int(f[1])), t)
            elif line["event"] == "rcu_fqs":
                fqs_found.add((int(f[2]), int(f[1])))
            elif line["event"] == "rcu_quiescent_state_report":
                mask = int(f[2].split(">")[0], 16)
                if mask == 1 << (cpu - int(f[4])):
                    own_reports.append((cpu, int(f[1]), t))
        for (what, cpu, seq), t in first.items():
            if what == "cpuqs" and seq & 3:  # (a QS owed from a GP it was reported for by an FQS
                # scan is traced once that GP has ended, with the ended value)
                assert first.get(("cpustart", cpu, seq), t + 1) <= t, (cpu, seq)
                checked += 1
        for cpu, seq, t in own_reports:
            if (cpu, seq) not in fqs_found:
                assert first.get(("cpuqs", cpu, seq), t + 1) <= t, (cpu, seq)
    assert checked


@pytest.mark.parametrize("fixture", ["sync_traced", "softirq_traced"])
def test_each_rcu_core_pass_is_an_rcu_softirq_entry(fixture, request):
    """rcu_core() runs as RCU_SOFTIRQ (at irq exit or in ksoftirqd): each pass is one
    softirq_entry line, as many as the engine counts, and ends in a softirq_exit on its CPU
    before that CPU's next entry."""
    for v in request.getfixturevalue(fixture).variants.values():
        events = ftrace_events(v)
        entries = sum(1 for event, _m in events if event == "softirq_entry")
        assert entries == v.counters["rcu_core_passes"] > 0
        assert sum(1 for event, _m in events if event == "softirq_exit") == entries
        lines = [ln for ln in trace.ftrace_lines(v) if " softirq_" in ln]
        open_on: dict[str, bool] = {}
        for ln in lines:
            cpu = ln.split("[", 1)[1][:3]
            entry = " softirq_entry:" in ln
            assert open_on.get(cpu, False) != entry, ln  # entry, exit, entry, ... on each CPU
            open_on[cpu] = entry
