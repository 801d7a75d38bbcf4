"""The guest's OS noise (rcusim.twin.noise): each gap of the spinning helper classified by
what the guest traced in it, and the preset rcusim's noise streams take from them."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from rcusim.errors import ScenarioError
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


def test_streams_count_irq_and_host_as_irq_and_other_tasks_as_kthread(classified):
    many = pd.concat([classified] * 10, ignore_index=True)
    streams = noise.noise_streams(many, spun_s=2.0, nr_cpus=2, trace_overhead_ns=1000)
    # 3 irq-stream gaps (irq, host, the tick with an IPI) and 1 kthread gap, x 10, over 2 s x 2 CPUs.
    assert streams["irq"].rate_hz == pytest.approx(30 / 4)
    assert streams["kthread"].rate_hz == pytest.approx(10 / 4)
    # Lengths less one traced event's cost each: 15-1, 9-0, 25-2 us.
    assert streams["irq"].median_us == pytest.approx(14.0)
    assert streams["kthread"].median_us == pytest.approx(39.0)
    assert "irq 20" in streams["irq"].source and "host 10" in streams["irq"].source


def test_too_few_gaps_are_refused(classified):
    with pytest.raises(ScenarioError, match="irq gaps"):
        noise.noise_streams(classified, spun_s=2.0, nr_cpus=2, trace_overhead_ns=0)


def test_preset_yaml_gives_every_number_its_source(classified):
    many = pd.concat([classified] * 10, ignore_index=True)
    streams = noise.noise_streams(many, spun_s=2.0, nr_cpus=2, trace_overhead_ns=1000)
    text = noise.preset_yaml("qemu_tcg", "a guest", streams, "python -m rcusim measure-guest --noise 2")
    (name, preset), = yaml.safe_load(text).items()
    assert name == "qemu_tcg" and preset["description"] == "a guest"
    for stream in ("irq", "kthread"):
        for key in ("rate_hz", "median_us", "p99_us"):
            assert set(preset[stream][key]) == {"value", "source"}
            assert "measure-guest --noise 2" in preset[stream][key]["source"]
    assert preset["irq"]["rate_hz"]["value"] == pytest.approx(7.5)


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
