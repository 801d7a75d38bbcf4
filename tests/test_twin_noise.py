"""The guest's OS noise (rcusim.twin.noise): each gap of the spinning helper classified by
what the guest traced in it, and the preset rcusim's noise streams take from them."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from rcusim.errors import ScenarioError
from rcusim.input.profiles import TIMER_QUANTILES, TIMER_TAIL_QUANTILES
from rcusim.twin import noise

TRACE = """\
# tracer: nop
     rcusim_noise-60      [000] d.h1.     1.000001: local_timer_entry: vector=236
     rcusim_noise-60      [000] ..s1.     1.000003: softirq_entry: vec=1 [action=TIMER]
     rcusim_noise-60      [000] d.h1.     1.000101: irq_handler_entry: irq=4 name=ttyS0
     rcusim_noise-60      [000] d..2.     1.000301: sched_switch: prev_comm=rcusim_noise prev_pid=60 prev_prio=120 prev_state=R+ ==> next_comm=kworker/0:1 next_pid=9 next_prio=120
     rcusim_noise-60      [000] d..2.     1.000501: sched_switch: prev_comm=rcusim_noise prev_pid=60 prev_prio=120 prev_state=R+ ==> next_comm=rcu_preempt next_pid=17 next_prio=120
     rcusim_noise-61      [001] d.h1.     1.000001: local_timer_entry: vector=236
     rcusim_noise-61      [001] d.h1.     1.000002: call_function_single_entry: vector=251
"""

# cpu, start, length (ns): a tick, an interrupt, another task, RCU's kthread, nothing traced
# (the host), and on CPU 1 a tick that also took an IPI.
S = 1_000_000_000
GAPS = [(0, S, 20_000), (0, S + 90_000, 15_000), (0, S + 290_000, 40_000), (0, S + 495_000, 30_000),
        (0, S + 700_000, 9_000), (1, S, 25_000)]


@pytest.fixture
def classified(tmp_path):
    trace = tmp_path / "trace.txt"
    trace.write_text(TRACE)
    gaps = pd.DataFrame(GAPS, columns=["cpu", "t_start_ns", "length_ns"])
    return noise.classify_gaps(gaps, noise.read_events(trace))


def test_each_gap_is_classified_by_what_ran_in_it(classified):
    assert list(classified.kind) == ["tick", "irq", "thread", "rcu", "host", "irq"]
    assert list(classified.events) == [2, 1, 1, 1, 0, 2]


def test_streams_count_interrupts_as_irq_other_tasks_as_kthread_and_untraced_gaps_as_host_stalls(classified):
    many = pd.concat([classified] * 10, ignore_index=True)
    streams = noise.noise_streams(many, spun_s=2.0, nr_cpus=2, trace_overhead_ns=1000)
    # 2 irq gaps (an interrupt, the tick with an IPI) and 1 kthread gap, x 10, over 2 s x 2 CPUs.
    assert streams["irq"].rate_hz == pytest.approx(20 / 4)
    assert streams["kthread"].rate_hz == pytest.approx(10 / 4)
    # Lengths less one traced event's cost each: 15-1 and 25-2 us; 40-1 us.
    assert streams["irq"].median_us == pytest.approx((14.0 + 23.0) / 2)
    assert streams["kthread"].median_us == pytest.approx(39.0)
    assert "irq 20" in streams["irq"].source and "host" not in streams["irq"].source
    # The gap with nothing traced (9 us), x 100: the host's stalls, as measured.
    host = noise.host_stalls(pd.concat([classified] * 100, ignore_index=True), spun_s=2.0, nr_cpus=2)
    assert host.rate_hz == pytest.approx(100 / 4)
    assert set(host.stall.quantiles_us) == set(host.stall.tail_us) == {9.0}
    assert len(host.stall.quantiles_us) == TIMER_QUANTILES and len(host.stall.tail_us) == TIMER_TAIL_QUANTILES
    with pytest.raises(ScenarioError, match="host gaps"):
        noise.host_stalls(many, spun_s=2.0, nr_cpus=2)


def test_too_few_gaps_are_refused(classified):
    with pytest.raises(ScenarioError, match="irq gaps"):
        noise.noise_streams(classified, spun_s=2.0, nr_cpus=2, trace_overhead_ns=0)


def test_preset_yaml_gives_every_number_its_source(classified):
    many = pd.concat([classified] * 100, ignore_index=True)
    streams = noise.noise_streams(many, spun_s=2.0, nr_cpus=2, trace_overhead_ns=1000)
    host = noise.host_stalls(many, spun_s=2.0, nr_cpus=2)
    text = noise.preset_yaml("qemu_tcg", "a guest", streams, "python -m rcusim measure-guest --noise 2", host=host)
    (name, preset), = yaml.safe_load(text).items()
    assert name == "qemu_tcg" and preset["description"] == "a guest"
    for stream in ("irq", "kthread"):
        for key in ("rate_hz", "median_us", "p99_us"):
            assert set(preset[stream][key]) == {"value", "source"}
            assert "measure-guest --noise 2" in preset[stream][key]["source"]
    for key in ("rate_hz", "quantiles_us", "tail_us"):
        assert set(preset["host"][key]) == {"value", "source"}
        assert "measure-guest --noise 2" in preset["host"][key]["source"]
    assert preset["irq"]["rate_hz"]["value"] == pytest.approx(50.0)
    assert preset["host"]["rate_hz"]["value"] == pytest.approx(25.0)


def test_the_guest_script_spins_every_vcpu_on_the_trace_clock():
    script = noise.noise_script(3.5)
    assert "echo mono > trace_clock" in script
    assert "/bin/rcusim_noise -n 2 -d 3500000000" in script
    for event in noise.NOISE_EVENTS:
        assert f"events/{event}/enable" in script


def test_noise_from_a_folder_without_a_measurement_is_one_line(tmp_path):
    with pytest.raises(ScenarioError) as info:
        noise.read_boots(tmp_path)
    assert info.value.key == "--noise-from" and "\n" not in str(info.value)


def test_noise_from_a_measurement_without_the_plain_loop_is_refused_in_one_line(tmp_path):
    """A --noise run made before the timer's delay was measured in a loop that reads no
    clock has only the gap loop's ticks: refused, not turned into a preset without them."""
    boot = tmp_path / "raw" / "boot-0"
    boot.mkdir(parents=True)
    (tmp_path / "header.txt").write_text("clock: real\nimage: x (Linux 6.12.117, HZ=1000, sha256 0)\n"
                                         "spin: 1 s on each of 2 vCPUs\n")
    pd.DataFrame(GAPS).to_csv(boot / "gaps.txt", sep=" ", header=False, index=False)
    (boot / "trace.txt").write_text(TRACE)
    with pytest.raises(ScenarioError) as info:
        noise.read_boots(tmp_path)
    assert info.value.key == "--noise-from" and "reads no clock" in str(info.value) and "\n" not in str(info.value)


def _tick_trace(lines):
    return "# tracer: nop\n" + "".join(
        f"     {comm}      [{cpu:03d}] d.h1.     {t_us / 1e6:.6f}: {event}\n" for comm, cpu, t_us, event in lines)


def test_timer_delays_are_each_ticks_time_past_its_jiffy_boundary(tmp_path):
    # HZ=1000: CPU 0's ticks 120 us, 80 us and 1,300 us late (the last one skips a jiffy), then
    # an hrtimer that is not the tick (before the next boundary), then 50 us late; CPU 1 alone
    # with vCPU 0: only vCPU 0's ticks count.
    lines = [("sh-70", 1, 999_000, "tracing_mark_write: " + noise.BUSY_ALL)]
    lines += [("rcusim_noise-71", 0, t, "local_timer_entry: vector=236")
              for t in (1_000_100, 1_001_120, 1_002_080, 1_004_300, 1_004_700, 1_005_050)]
    lines += [("sh-70", 1, 1_010_000, "tracing_mark_write: " + noise.BUSY_ONE)]
    lines += [("rcusim_noise-73", 0, t, "local_timer_entry: vector=236") for t in (1_011_010, 1_012_030)]
    lines += [("swapper/1-0", 1, t, "local_timer_entry: vector=236") for t in (1_011_500, 1_013_900)]
    lines += [("sh-70", 1, 1_020_000, "tracing_mark_write: " + noise.BUSY_END)]
    trace = tmp_path / "trace.txt"
    trace.write_text(_tick_trace(sorted(lines, key=lambda x: x[2])))
    delays = noise.timer_delays(noise.read_events(trace), 1_000_000)
    assert delays[delays.state == "all_busy"].delay_ns.tolist() == [120_000, 80_000, 1_300_000, 50_000]
    assert delays[delays.state == "some_idle"].delay_ns.tolist() == [30_000]


def test_timer_delays_come_from_the_plain_loop_not_the_clock_loop(tmp_path):
    # The same ticks inside the clock-reading spins (SPIN_*) count for nothing: those reads
    # hold the timer interrupt back.
    lines = [("sh-70", 1, 999_000, "tracing_mark_write: " + noise.SPIN_ALL)]
    lines += [("rcusim_noise-71", 0, t, "local_timer_entry: vector=236") for t in (1_000_100, 1_002_900)]
    lines += [("sh-70", 1, 1_010_000, "tracing_mark_write: " + noise.SPIN_ONE)]
    lines += [("sh-70", 1, 1_020_000, "tracing_mark_write: " + noise.SPIN_END)]
    lines += [("sh-70", 1, 1_021_000, "tracing_mark_write: " + noise.BUSY_ALL)]
    lines += [("rcusim_noise-75", 0, t, "local_timer_entry: vector=236") for t in (1_022_050, 1_023_070)]
    lines += [("sh-70", 1, 1_030_000, "tracing_mark_write: " + noise.BUSY_ONE)]
    lines += [("sh-70", 1, 1_040_000, "tracing_mark_write: " + noise.BUSY_END)]
    trace = tmp_path / "trace.txt"
    trace.write_text(_tick_trace(sorted(lines, key=lambda x: x[2])))
    delays = noise.timer_delays(noise.read_events(trace), 1_000_000)
    assert delays.delay_ns.tolist() == [70_000] and set(delays.state) == {"all_busy"}


def test_noise_script_measures_the_timer_in_a_loop_that_reads_no_clock():
    script = noise.noise_script(3.0, nr_cpus=2).splitlines()
    at = {m: next(i for i, line in enumerate(script) if m in line)
          for m in (noise.SPIN_ALL, noise.SPIN_END, noise.BUSY_ALL, noise.BUSY_ONE, noise.BUSY_END)}
    assert at[noise.SPIN_END] < at[noise.BUSY_ALL] < at[noise.BUSY_ONE] < at[noise.BUSY_END]
    plain = script[at[noise.BUSY_ALL] + 1:at[noise.BUSY_END]]
    assert [line for line in plain if "rcusim_noise" in line] == [
        "/bin/rcusim_noise -n 2 -d 3000000000 -b", "/bin/rcusim_noise -n 1 -d 3000000000 -b"]


def test_a_trace_without_the_spin_markers_gives_no_timer_delay(classified, tmp_path):
    trace = tmp_path / "trace.txt"
    trace.write_text(TRACE)
    assert noise.timer_delays(noise.read_events(trace), 1_000_000).empty


def test_preset_yaml_gives_the_timer_delay_its_sources(classified):
    many = pd.concat([classified] * 10, ignore_index=True)
    streams = noise.noise_streams(many, spun_s=2.0, nr_cpus=2, trace_overhead_ns=1000)
    delays = pd.DataFrame([(state, 0, d * 100) for state in ("all_busy", "some_idle") for d in range(0, 10001)],
                          columns=["state", "cpu", "delay_ns"])
    timer = noise.timer_delay_streams(delays, boots=1)
    text = noise.preset_yaml("qemu_tcg", "a guest", streams, "python -m rcusim measure-guest --noise 2", timer)
    preset = yaml.safe_load(text)["qemu_tcg"]
    assert preset["timer"]["all_busy"]["quantiles_us"]["value"] == [float(k) for k in range(1001)]
    assert "local_timer_entry" in preset["timer"]["some_idle"]["quantiles_us"]["source"]
