"""tracediff: two ftrace texts laid GP by GP, normal and expedited, with the phases and
verdicts their events give."""

from __future__ import annotations

import numpy as np

from rcusim.commands.cli import main
from rcusim.results.tracediff import exp_phases, load_side, softirq_contexts, tracediff_report
from rcusim.results.ftrace_read import exp_marks, read_ftrace


def _line(comm: str, pid: int, cpu: int, t_us: float, event: str, payload: str) -> str:
    return f"{comm:>16}-{pid:<7} [{cpu:03d}] d..1. {t_us / 1e6:12.6f}: {event}: {payload}\n"


def _trace(path, gps, exps) -> str:
    """Normal GPs as (start, qs report, end) and expedited ones as (cpu, start, end), in µs."""
    lines = ["# tracer: nop\n"]
    for k, (start, qs, end) in enumerate(gps):
        seq = 4 * k
        lines += [_line("rcu_preempt", 17, 0, start, "rcu_grace_period", f"rcu_preempt {seq} start"),
                  _line("<idle>", 0, 1, qs, "rcu_quiescent_state_report", f"rcu_preempt {seq} 2>0 0 0 1 0"),
                  _line("rcu_preempt", 17, 0, end, "rcu_grace_period", f"rcu_preempt {seq} end")]
    for k, (cpu, start, end) in enumerate(exps):
        seq = 4 * (k + 1)
        lines += [_line("rcu_scale_write", 75 + cpu, cpu, start, "rcu_exp_grace_period", f"rcu_preempt {seq} start"),
                  _line("rcu_exp_gp_kthr", 19, cpu, end, "rcu_exp_grace_period", f"rcu_preempt {seq} end")]
    lines = lines[:1] + sorted(lines[1:], key=lambda ln: float(ln.split(":")[0].split()[-1]))
    path.write_text("".join(lines))
    return str(path)


def test_expedited_gps_give_their_length_gap_and_caller_cpu(tmp_path):
    exps = [(0, 100, 130), (0, 150, 180), (1, 400, 450)]
    marks = exp_marks(read_ftrace(open(_trace(tmp_path / "t.txt", [], exps))))
    assert marks["cpu_start"].tolist() == [0, 0, 1]
    ph = exp_phases(marks)
    assert ph["length"].tolist() == [30.0, 30.0, 50.0]
    assert ph["gap"].tolist()[:2] == [20.0, 220.0] and ph["same_cpu"].tolist()[:2] == [1.0, 0.0]


def test_an_expedited_only_variant_is_compared_by_its_expedited_gps(tmp_path):
    # A runs its GPs back to back on one CPU, B alternates CPUs with long gaps.
    a = _trace(tmp_path / "a.txt", [], [(0, 100 * k, 100 * k + 30) for k in range(20)])
    b = _trace(tmp_path / "b.txt", [], [(k % 2, 400 * k, 400 * k + 60) for k in range(20)])
    report = tracediff_report(load_side(a), load_side(b))
    assert "no normal GP on one side" in report
    length = next(ln for ln in report.splitlines() if ln.strip().startswith("length"))
    assert length.split()[1:7] == ["30.0", "60.0", "30.0", "60.0", "30.0", "60.0"] and "longer" in length
    same = next(ln for ln in report.splitlines() if "same CPU" in ln)
    assert same.split()[-2:] == ["1.00", "0.00"]
    assert report.rstrip().endswith("first systematic difference: expedited GP length: B longer in most aligned GPs")


def test_normal_gps_give_their_phases_and_the_first_systematic_difference(tmp_path, capsys):
    a = _trace(tmp_path / "a.txt", [(1000 * k, 1000 * k + 400, 1000 * k + 500) for k in range(8)], [])
    b = _trace(tmp_path / "b.txt", [(1000 * k, 1000 * k + 400, 1000 * k + 900) for k in range(8)], [])
    assert main(["tracediff", a, b, "--rows", "2"]) == 0
    out = capsys.readouterr().out
    cleanup = next(ln for ln in out.splitlines() if ln.strip().startswith("cleanup"))
    assert cleanup.split()[1:4] == ["100.0", "500.0", "5.00"] and cleanup.rstrip().endswith("longer")
    assert "first systematic difference: GP phase cleanup: B longer" in out
    assert "expedited GPs" not in out


def test_an_expedited_gap_splits_into_the_callers_wake_up_return_and_entry(tmp_path):
    # One caller on CPU 0: snap 90, start 100, end 130, done 150, snap 160, start 165, end 200, done 210.
    lines = ["# tracer: nop\n"]
    for t, what, seq in ((90, "snap", 4), (100, "start", 4), (130, "end", 4), (150, "done", 4),
                         (160, "snap", 8), (165, "start", 8), (200, "end", 8), (210, "done", 8)):
        lines.append(_line("rcu_scale_write", 75, 0, t, "rcu_exp_grace_period", f"rcu_preempt {seq} {what}"))
    path = tmp_path / "t.txt"
    path.write_text("".join(lines))
    ph = load_side(str(path))["exp"]
    assert ph.loc[0, ["length", "gap", "wake", "return", "entry"]].tolist() == [30.0, 35.0, 20.0, 10.0, 5.0]
    assert ph.loc[1, "wake"] == 10.0 and np.isnan(ph.loc[1, "return"]) and np.isnan(ph.loc[1, "gap"])


def test_placement_counts_wake_ups_onto_the_last_cpu_and_the_migrations(tmp_path, capsys):
    """Task 5 runs on CPU 0, then is woken onto CPU 0 and once onto CPU 1 (a migration traced on
    side B only); task 6 is woken before it ever ran, which no CPU of its counts against."""
    switch = "prev_comm=a prev_pid={} prev_prio=120 prev_state=S ==> next_comm=t next_pid={} next_prio=120"
    wake = "comm=t pid={} prio=120 target_cpu={:03d}"
    body = [_line("swapper/0", 0, 0, 10, "sched_switch", switch.format(0, 5)),
            _line("t", 5, 0, 20, "sched_switch", switch.format(5, 0)),
            _line("x", 9, 1, 30, "sched_wakeup", wake.format(6, 1)),
            _line("x", 9, 0, 40, "sched_wakeup", wake.format(5, 0)),
            _line("t", 5, 0, 50, "sched_switch", switch.format(5, 0)),
            _line("x", 9, 1, 60, "sched_wakeup", wake.format(5, 1))]
    moved = _line("x", 9, 1, 59, "sched_migrate_task", "comm=t pid=5 prio=120 orig_cpu=0 dest_cpu=1")
    gps = [(1000 * k, 1000 * k + 400, 1000 * k + 500) for k in range(2)]
    a, b = _trace(tmp_path / "a.txt", gps, []), _trace(tmp_path / "b.txt", gps, [])
    (tmp_path / "a.txt").write_text((tmp_path / "a.txt").read_text() + "".join(body))
    (tmp_path / "b.txt").write_text((tmp_path / "b.txt").read_text() + "".join(body[:5] + [moved] + body[5:]))
    side_a, side_b = load_side(a), load_side(b)
    assert side_a["placement"] == {"woken": 2, "on_last_cpu": 1, "migrations": 0, "runs": 1}
    assert side_b["placement"]["migrations"] == 1
    assert main(["tracediff", a, b]) == 0
    row = next(ln for ln in capsys.readouterr().out.splitlines() if "wake-ups onto the last CPU" in ln)
    assert row.split()[-2:] == ["0.500", "0.500"]


def test_each_cpus_way_to_its_qs_notice_qs_and_report(tmp_path, capsys):
    """CPU 1 notices GP 4 (cpustart) 300 µs after its start, passes its QS (cpuqs) 50 µs later
    and reports it 200 µs after that; the GP kthread's CPU 0 passes its QS at once and reports
    it 400 µs later. Side B's CPU 1 reports after 600 µs: the report step differs."""
    def side(path, report_after):
        ev = [(0, "rcu_preempt", 17, 0, "rcu_grace_period", "rcu_preempt 4 start"),
              (5, "rcu_preempt", 17, 0, "rcu_grace_period", "rcu_preempt 4 cpustart"),
              (10, "rcu_preempt", 17, 0, "rcu_grace_period", "rcu_preempt 4 cpuqs"),
              (410, "<idle>", 0, 0, "rcu_quiescent_state_report", "rcu_preempt 4 1>2 0 0 1 0"),
              (300, "t", 5, 1, "rcu_grace_period", "rcu_preempt 4 cpustart"),
              (350, "t", 5, 1, "rcu_grace_period", "rcu_preempt 4 cpuqs"),
              (350 + report_after, "t", 5, 1, "rcu_quiescent_state_report", "rcu_preempt 4 2>0 0 0 1 0"),
              (2000, "rcu_preempt", 17, 0, "rcu_grace_period", "rcu_preempt 4 end")]
        path.write_text("# tracer: nop\n" + "".join(_line(c, p, cpu, t, e, pl) for t, c, p, cpu, e, pl in sorted(ev)))
        return str(path)
    a, b = side(tmp_path / "a.txt", 200), side(tmp_path / "b.txt", 600)
    steps = load_side(a)["qs_steps"].set_index("cpu")
    assert steps.loc[1, ["notice", "qs", "report"]].tolist() == [300.0, 50.0, 200.0] and not steps.loc[1, "gp_cpu"]
    assert steps.loc[0, ["notice", "qs", "report"]].tolist() == [5.0, 5.0, 400.0] and steps.loc[0, "gp_cpu"]
    assert main(["tracediff", a, b]) == 0
    row = next(ln for ln in capsys.readouterr().out.splitlines() if "other CPUs: report" in ln)
    assert row.split()[-3:] == ["200.0", "600.0", "3.00"]


def test_softirq_contexts_count_an_irq_exits_restarts_ksoftirqds_turns_and_runnable_switches():
    """CPU 0: a tick's irq exit over task t runs RCU_SOFTIRQ, restarts it 3 µs after its end
    (the same irq exit) and, a jiffy later, runs it once more (a new irq exit); ksoftirqd/0 then
    runs one turn of two passes, preempted (prev_state=R+), and t is switched out runnable at
    its system call's exit. CPU 1's pass comes from idle."""
    rcu = "vec=9 [action=RCU]"
    switch = "prev_comm={} prev_pid={} prev_prio=120 prev_state={} ==> next_comm={} next_pid={} next_prio=120"
    body = [_line("t", 5, 0, 100, "softirq_entry", rcu), _line("t", 5, 0, 150, "softirq_exit", rcu),
            _line("t", 5, 0, 153, "softirq_entry", rcu), _line("t", 5, 0, 200, "softirq_exit", rcu),
            _line("t", 5, 0, 1100, "softirq_entry", "vec=1 [action=TIMER]"),
            _line("t", 5, 0, 1101, "softirq_exit", "vec=1 [action=TIMER]"),
            _line("t", 5, 0, 1102, "softirq_entry", rcu), _line("t", 5, 0, 1150, "softirq_exit", rcu),
            _line("t", 5, 0, 1200, "sched_switch", switch.format("t", 5, "R+", "ksoftirqd/0", 15)),
            _line("ksoftirqd/0", 15, 0, 1210, "softirq_entry", rcu),
            _line("ksoftirqd/0", 15, 0, 1250, "softirq_exit", rcu),
            _line("ksoftirqd/0", 15, 0, 1252, "softirq_entry", rcu),
            _line("ksoftirqd/0", 15, 0, 1290, "softirq_exit", rcu),
            _line("ksoftirqd/0", 15, 0, 1300, "sched_switch", switch.format("ksoftirqd/0", 15, "R+", "t", 5)),
            _line("<idle>", 0, 1, 1400, "softirq_entry", rcu), _line("<idle>", 0, 1, 1420, "softirq_exit", rcu)]
    counts = softirq_contexts(read_ftrace(body))
    assert counts["pass_task"] == 3 and counts["pass_idle"] == 1 and counts["pass_ksoftirqd"] == 2
    assert counts["irq_exits"] == 3 and counts["restarts"] == 1 and counts["restarting"] == 1
    assert counts["ksoftirqd_turns"] == 1 and counts["ksoftirqd_single"] == 0
    assert counts["runnable_task"] == 1 and counts["runnable_ksoftirqd"] == 1 and counts["runnable_gp_kthread"] == 0
