"""cython_core/cpuidle.pxi: idle states and the menu governor: its arithmetic (rcusim.kernel.cpuidle,
the twin of cpuidle.pxi) and what the engine does with its choices, a driver's or none."""

from __future__ import annotations

import pytest

from rcusim.engine.simulate import run_engine
from rcusim.input.profiles import load_profile, profile_idle_states, profile_wakeup_idle
from rcusim.input.scenario import load_scenario
from rcusim.kernel.cpuidle import (DECAY, MAX_INTERESTING, NO_TIMER_US, RESOLUTION, Menu, typical_interval,
                                   which_bucket)
from rcusim.results import trace
from rcusim.results.run import run_scenario

from tests.engine.conftest import GP_CPU, only_variant, traced

STATES = profile_idle_states("x86-64-server-2023")  # POLL, C1, C1E, C6
EXIT = tuple(s["exit_latency_us"] for s in STATES)
TARGET = tuple(s["target_residency_us"] for s in STATES)
C6 = len(STATES) - 1


def menu(keeps_tick: bool = True, tick_us: int = 1000) -> Menu:
    return Menu(EXIT, TARGET, STATES[0]["polling"], tick_us, keeps_tick)


# --- the arithmetic ---------------------------------------------------------------
def test_buckets_are_decades():
    assert [which_bucket(d) for d in (0, 9, 10, 99, 100, 999, 1000, 9999, 10**4, 10**5, NO_TIMER_US)] == \
        [0, 0, 1, 1, 2, 2, 3, 3, 4, 5, 5]


def test_typical_interval_of_regular_idle_periods():
    assert typical_interval([1000] * 8, 5000) == 1000
    # Spread within 20 us (variance <= 400): the mean.
    assert typical_interval([990, 1010] * 4, 5000) == 1000


def test_typical_interval_drops_one_long_outlier():
    # The long one is dropped and the remaining seven are regular.
    assert typical_interval([100] * 7 + [100_000], 5000) == 100


def test_irregular_idle_periods_have_no_typical_interval():
    assert typical_interval([100, 5000, 300, 9000, 50, 7000, 2000, 40], 20_000) == NO_TIMER_US
    # And none is looked for when every interval is longer than the prediction.
    assert typical_interval([1000] * 8, 500) == NO_TIMER_US


def test_long_sleep_with_tick_stopped_picks_the_deepest_state():
    m = menu()
    assert m.select(NO_TIMER_US, NO_TIMER_US, tick_stopped=True) == C6
    assert m.stop_tick


def test_a_timer_due_sooner_than_c1_polls_and_keeps_the_tick():
    m = menu()
    assert m.select(0, 0, tick_stopped=False) == 0
    assert not m.stop_tick


def test_a_short_prediction_keeps_the_tick_and_fits_the_state_before_it():
    # rcu_needs_cpu(): the sleep length is the next tick, 500 us away. C6's
    # target residency (800 us) does not fit; C1E's does; the tick is kept.
    m = menu()
    assert m.select(500, 500, tick_stopped=False) == 2
    assert not m.stop_tick


def test_before_v4_17_the_governor_never_keeps_the_tick():
    m = menu(keeps_tick=False)
    assert m.select(500, 500, tick_stopped=True) == 2
    assert m.stop_tick
    assert m.select(NO_TIMER_US, NO_TIMER_US, tick_stopped=True) == C6


def test_correction_factor_learns_early_wakeups():
    # Woken at a fifth of the next timer again and again, the bucket's factor
    # moves from unity towards 1/5, and the prediction with it.
    m = menu()
    for _ in range(60):
        m.select(5000, 5000, tick_stopped=False)
        m.reflect(1000 + EXIT[m.state], tick_wakeup=False)
    m.update()
    m.needs_update = False
    factor = m.correction[which_bucket(5000)] / (RESOLUTION * DECAY)
    assert factor == pytest.approx(0.2, abs=0.02)


def test_a_tick_wakeup_past_the_timer_counts_as_a_long_sleep():
    m = menu()
    m.select(NO_TIMER_US, NO_TIMER_US, tick_stopped=True)
    m.reflect(3, tick_wakeup=True)
    m.update()
    assert m.intervals[0] == 9 * MAX_INTERESTING // 10


# --- the engine -------------------------------------------------------------------
def lone_caller(release: str, hz: int = 1000) -> dict:
    return {"name": "idle", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 8},
            "kernel": {"release": release, "HZ": hz},
            "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 40, "cpus": "5"}]}


def run(data):
    (v,) = run_scenario(load_scenario(data), progress=False).variants.values()
    return v


def test_every_idle_wakeup_pays_a_state_exit_latency():
    v = run(lone_caller("6.6"))
    n, total = v.counters["idle_exits"], v.counters["idle_exit_latency_ns"]
    assert n > 0
    # Idle CPUs between grace periods sit in C6; each exit costs at most its latency.
    assert 0 < total <= n * EXIT[C6] * 1000
    assert total >= n * EXIT[C6] * 1000 // 2


def test_a_task_woken_by_an_interrupt_from_an_idle_state_runs_after_its_handler():
    """The GP kthread's CPU leaves C6 (290 us) for the FQS timer's interrupt, runs its handler,
    and only then switches to the kthread it woke (before v6.9 the timer fires on that CPU):
    a handler 95 us longer makes every GP 95 us longer, where a wake-up that waited only for
    the longer of the exit and the handler would leave the GP as it was."""
    def gp_length(tick_ns):
        data = lone_caller("6.6")
        data["hardware"]["costs"] = {"tick_ns": tick_ns}
        gps = run(data).gps
        return (gps.t_end_ns - gps.t_start_ns).median()

    assert gp_length(100_000) - gp_length(5_000) == 95_000


def test_a_profile_without_idle_states_draws_its_wakeup_latency():
    """Lognormal through the profile's median and p99 (no measured distribution): the draws'
    mean lies above the median (a lognormal's mean is) and far below the p99."""
    data = lone_caller("4.14")
    data["hardware"]["profile"] = "xeon-e5405-8cpu"
    costs = load_profile("xeon-e5405-8cpu")
    v = run(data)
    assert v.metrics["finished"]
    n, total = v.counters["idle_exits"], v.counters["idle_exit_latency_ns"]
    assert n > 20
    assert costs["wakeup_idle_median_ns"] < total / n < costs["wakeup_idle_p99_ns"]


def test_a_measured_idle_wakeup_is_drawn_from_its_quantiles():
    """A profile that gives the measured distribution (qemu-tcg's wakeup_idle) draws each idle
    wake-up from its quantiles: a table of one value gives that value every time, one rising
    from 20 to 120 us a mean near 70 us; a scenario's own median drops the table for the
    lognormal through it."""
    data = lone_caller("6.12")
    data["hardware"] = {"profile": "qemu-tcg", "nr_cpus": 2}
    data["workloads"][0]["cpus"] = "1"
    spec = load_scenario(data).variants["default"]
    assert spec.hardware.wakeup_idle == profile_wakeup_idle("qemu-tcg") is not None

    def counters(table):
        hw = spec.hardware.model_copy(update={"wakeup_idle": table})
        c = run_engine("t", spec.model_copy(update={"hardware": hw}), 0).counters
        assert c["idle_exits"] > 20
        return c["idle_exits"], c["idle_exit_latency_ns"]

    n, total = counters({"quantiles_ns": (50_000,) * 101, "tail_ns": (50_000,) * 11})
    assert total == n * 50_000
    n, total = counters({"quantiles_ns": tuple(range(20_000, 120_001, 1_000)), "tail_ns": (119_000,) * 10 + (120_000,)})
    assert 60_000 < total / n < 80_000
    data["hardware"]["costs"] = {"wakeup_idle_median_ns": 5_000}
    assert load_scenario(data).variants["default"].hardware.wakeup_idle is None



def test_a_scenario_table_without_c6_wakes_cheaper():
    data = lone_caller("6.6")
    data["hardware"]["idle_states"] = [dict(s) for s in STATES[:-1]]
    v = run(data)
    assert v.counters["idle_exits"] > 0
    assert v.counters["idle_exit_latency_ns"] <= v.counters["idle_exits"] * EXIT[-2] * 1000


def test_a_polling_only_table_keeps_every_idle_tick():
    # With POLL alone the governor never lets the tick stop (v4.17 and later):
    # every idle CPU ticks; before v4.17 the tick stopped ahead of it.
    ticks = {}
    for release in ("4.14", "6.6"):
        data = lone_caller(release)
        data["hardware"]["idle_states"] = [dict(STATES[0])]
        ticks[release] = run(data).counters["ticks"]
    v = run(lone_caller("6.6"))
    assert ticks["6.6"] > 4 * v.counters["ticks"]
    assert ticks["4.14"] < ticks["6.6"] / 4


# --- no cpuidle driver: the idle loop's tick after f4c31b07b136 ----------------
def guest_caller(release: str, patches=()) -> dict:
    """One caller on CPU 1 of an idle 8-vCPU QEMU guest, which has no cpuidle driver."""
    return {"name": "guest", "seed": 0, "hardware": {"profile": "qemu-tcg", "nr_cpus": 8},
            "kernel": {"release": release, "HZ": 1000, "patches": list(patches)},
            "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 20, "primitive": "synchronize_rcu",
                           "cpus": "1"}]}


@pytest.mark.parametrize("release, patches, scans", [("6.12", [], 2),
                                                     ("6.12", ["sched-idle-consolidate-special-cases"], 1)])
def test_without_a_driver_the_gp_cpu_keeps_one_tick(release, patches, scans):
    """Without a cpuidle driver, v6.9-v6.19 stop the tick as the GP kthread's CPU goes idle:
    the FQS timer is pulled to the caller's CPU and the second scan reports it. From
    f4c31b07b136 (v7.0, 6.12.78) that CPU keeps its tick to the next jiffy, whose handler
    reports the QS noted at the kthread's switch, before the first scan. (v7.0 reports it
    earlier still, at the end of rcu_gp_init(): test_early_report_needs_one_scan.)"""
    v = only_variant(traced(guest_caller(release, patches)))
    gps = v.gps[~v.gps.expedited]
    assert (gps.fqs_scans == scans).all()
    f = trace.trace_frame(v)
    for seq, t0 in zip(gps.gp_seq, gps.t_start_ns):
        own = f[(f.event == "qs") & (f.cpu == GP_CPU) & (f.gp_seq == seq)]
        first_scan = f[(f.event == "gp_fqs_start") & (f.gp_seq == seq)].t_ns.iloc[0]
        assert len(own) == 1
        if scans == 1:  # the tick of the jiffy after the GP started, from the CPU itself
            assert own.arg.iloc[0] == 0 and own.t_ns.iloc[0] < first_scan
            assert own.t_ns.iloc[0] // 1_000_000 == t0 // 1_000_000 + 1
        else:
            assert own.arg.iloc[0] == 1 and own.t_ns.iloc[0] > first_scan


def test_an_idle_cpu_in_its_tick_handler_is_out_of_its_eqs():
    """A tick taken from idle runs between ct_irq_enter() and ct_irq_exit(): RCU watches the CPU
    meanwhile. The caller's idle CPU keeps its tick (its callback: rcu_needs_cpu()), and the FQS
    timer fires at the same jiffy boundary; a handler long enough to outlast the GP kthread's
    wake-up puts the first scan inside it, which leaves the CPU to the second scan
    (rcu_watching_snap_recheck(): the counter moved since the snapshot)."""
    def gps(tick_ns=None):
        data = lone_caller("7.0")
        if tick_ns is not None:
            data["hardware"]["costs"] = {"tick_ns": tick_ns}
        return run(data).gps

    short, long_ = gps(), gps(tick_ns=300_000)
    assert set(short.fqs_scans) == {1}
    assert set(long_.fqs_scans) == {2}
    # The second scan comes a full FQS wait (jiffies_till_next_fqs: 3 jiffies at HZ=1000) later.
    extra = (long_.t_end_ns - long_.t_start_ns).median() - (short.t_end_ns - short.t_start_ns).median()
    assert 3_000_000 <= extra <= 5_000_000
