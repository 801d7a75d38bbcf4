"""cython_core/timer.pxi: timer-wheel timers (kernel/time/timer.c) and the CPU that expires them
(kernel/time/timer_migration.c). From v4.8 calc_wheel_index() files a timer at the level whose
granularity covers its delta and calc_index() rounds the expiry up, so that a timer never fires
early; from v6.9 an idle CPU's global timers are expired by an active CPU of its group.

The wheel's arithmetic is checked on rcusim.kernel.timer (the twin the reference model uses), the
engine on its own records (grace periods, trace), so that a mechanism in the wrong place fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from rcusim.kernel.timer import lvl_start, timer_expiry_jiffy
from rcusim.results import trace

from tests.engine.conftest import DEEPEST_EXIT_NS, GP_CPU, LAST_QS, lone_caller, only_variant, task_sleeps, traced


# --- the timer wheel ---------------------------------------------------------
@pytest.mark.parametrize("delta, expected", [(0, 1), (3, 4), (62, 63), (63, 64), (100, 104), (5000, 5120)])
def test_wheel_rounds_up_one_unit_of_the_level(delta, expected):
    """calc_index(): level 0 (< 63 jiffies) fires a jiffy late; level n rounds up to
    the next multiple of 8**n above the expiry (5000 jiffies: level 3, 512)."""
    assert timer_expiry_jiffy(0, delta, hz=1000) == expected


def test_wheel_never_fires_early_and_at_most_one_unit_late():
    for clk in (0, 7, 1000, 123_457):
        for delta in range(0, 40_000, 37):
            fire = timer_expiry_jiffy(clk, clk + delta, hz=1000)
            lvl = next((n for n in range(8) if delta < lvl_start(n + 1)), 8)
            assert clk + delta < fire <= clk + delta + (1 << (3 * lvl))


def test_cascading_wheel_fires_at_the_expiry():
    assert timer_expiry_jiffy(10, 13, hz=1000, rounds_up=False) == 13
    assert timer_expiry_jiffy(10, 10, hz=1000, rounds_up=False) == 11


@pytest.mark.parametrize("release, wait_jiffies", [("4.7", 3), ("6.6", 4)])
def test_fqs_timer_fires_on_its_wheel_jiffy(release, wait_jiffies):
    """The first scan runs right after the tick of jiffies_till_first_fqs (3 at HZ=1000,
    64 CPUs) from the GP's start: that tick itself before v4.8, the one after from v4.8."""
    v = only_variant(traced(lone_caller(release)))
    f = trace.trace_frame(v)
    jiffy = 1_000_000
    starts = f[f.event == "gp_start"].t_ns.to_numpy()
    scans = f[f.event == "gp_fqs_start"].t_ns.to_numpy()
    for t0 in starts:
        first = scans[scans > t0][0]
        tick = (t0 // jiffy + wait_jiffies) * jiffy
        # After the tick: the GP CPU leaves its idle state (at most the deepest
        # state's exit latency), then the kthread's wake-up and context switch.
        assert tick < first < tick + DEEPEST_EXIT_NS + 50_000


# --- the CPU that expires the FQS timer ---------------------------------------
def test_before_timer_pull_the_fqs_timer_interrupt_reports_the_gp_cpu():
    """Up to v6.8 the FQS timer wakes the idle GP CPU itself: its tick handler reports
    the QS noted at the kthread's context switch, so one scan ends the GP."""
    v = only_variant(traced(lone_caller("6.8")))
    gps = v.gps[~v.gps.expedited]
    assert (gps.fqs_scans == 1).all()
    assert (gps.last_qs != LAST_QS["gp_kthread_cpu"]).all()
    f = trace.trace_frame(v)
    own = f[(f.event == "qs") & (f.cpu == GP_CPU)]
    assert len(own) == len(gps) and (own.arg == 0).all()  # reported by the CPU, not by a scan


def test_with_timer_pull_the_gp_cpu_is_reported_by_the_second_scan():
    """From v6.9 the caller's CPU, ticking for its callback, expires the FQS timer, so the
    GP CPU runs no tick handler: the first scan finds it running the scan, the second
    (rcu_watching_snap_recheck()) sees it has been idle since."""
    v = only_variant(traced(lone_caller("6.19")))
    gps = v.gps[~v.gps.expedited]
    assert (gps.fqs_scans == 2).all()
    assert (gps.last_qs == LAST_QS["gp_kthread_cpu"]).all()
    f = trace.trace_frame(v)
    for seq in gps.gp_seq:
        scans = f[(f.event == "gp_fqs_start") & (f.gp_seq == seq)].t_ns.to_numpy()
        own = f[(f.event == "qs") & (f.cpu == GP_CPU) & (f.gp_seq == seq)]
        assert len(scans) == 2 and len(own) == 1
        assert own.arg.iloc[0] == 1 and own.t_ns.iloc[0] > scans[1]


def test_two_scans_double_the_floor():
    one = only_variant(traced(lone_caller("6.8")))
    two = only_variant(traced(lone_caller("6.12")))
    length = {k: (v.gps.t_end_ns - v.gps.t_start_ns).median() for k, v in (("one", one), ("two", two))}
    # 3-4 jiffies, then 3-4 more.
    assert 3e6 < length["one"] < 4.1e6
    assert 6e6 < length["two"] < 8.1e6


# --- a task's schedule_timeout() on the engine's wheel ------------------------------------
def test_a_timer_armed_for_n_jiffies_fires_at_its_wheel_levels_granularity():
    """schedule_timeout_idle(): the process timer fires from the tick of the jiffy the wheel
    files it for (a call_rcu_load task sleeping 1 to 300 jiffies after each operation). From
    v4.8 calc_wheel_index() puts a delta under 63 jiffies on level 0 and one of 63 to 503 on
    level 1, whose buckets are 8 jiffies wide, and calc_index() rounds the expiry up to the next
    bucket: a sleep of up to 62 jiffies ends on the jiffy after its expiry, a longer one on a
    multiple of 8 jiffies (and never early). The cascading wheel (v4.7) fired at the expiry
    itself, on any jiffy."""
    jiffy = 1_000_000
    for release in ("6.12", "4.7"):
        armed, woken = task_sleeps(release, 300)
        assert (woken % jiffy == 0).all()  # from a tick
        fired = woken // jiffy
        waited = fired - armed
        level1 = waited >= 64  # a delta of 63 or more, plus the jiffy it is rounded up by
        assert level1.sum() > 50 and (~level1).sum() > 10
        if release == "6.12":
            assert waited.min() >= 2  # a delta of at least one jiffy, plus one
            assert (fired[level1] % 8 == 0).all()
            assert np.mean(fired[~level1] % 8 == 0) < 0.5
        else:
            assert waited.min() >= 1 and waited.max() <= 300
            assert np.mean(fired[level1] % 8 == 0) < 0.5
