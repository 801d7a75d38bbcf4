"""OS noise's input: its presets (each number with its source, each run), a stream given in place
of a preset's, and its refusals. (The noise in the engine: tests/engine/test_noise.py.)"""

from __future__ import annotations

import pytest

from rcusim.engine.engine_input import engine_input
from rcusim.engine.reference.model import run_reference
from rcusim.errors import ScenarioError
from rcusim.input.profiles import TIMER_QUANTILES, TIMER_TAIL_QUANTILES, noise_preset_sources, noise_presets
from rcusim.input.scenario import load_scenario

from tests.engine.test_noise import IRQ, quantiles, run, scenario


@pytest.mark.parametrize("preset", sorted(noise_presets()))
def test_every_preset_runs_and_every_number_has_a_source(preset):
    sources = noise_preset_sources(preset)
    assert sources and all(len(text) > 20 for text in sources.values())
    v = run(scenario({"preset": preset}, loops=50))
    assert v.counters["noise_irqs"] + v.counters["noise_kthread_bursts"] > 0


def test_a_stream_given_replaces_the_presets():
    preset = sorted(noise_presets())[0]
    spec = load_scenario(scenario({"preset": preset, "irq": IRQ})).variants["default"]
    inp, _ = engine_input(spec)
    assert inp.noise.irq_gap_ns[0] == round(1e9 / IRQ["rate_hz"])


@pytest.mark.parametrize("noise, fragment", [
    ({"irq": {**IRQ, "rate_hz": -1.0}}, "rate_hz"),
    ({"irq": {**IRQ, "p99_us": 1.0}}, "p99_us"),
    ({"irq": {"rate_hz": 20_000.0, "median_us": 60.0, "p99_us": 60.0}}, "occupy"),
    ({"preset": "a_quiet_moon"}, "not a noise preset"),
    ({"irq": {**IRQ, "rate_hz": 0.0}}, "no noise"),
])
def test_bad_noise_is_refused(noise, fragment):
    with pytest.raises(ScenarioError, match=fragment):
        load_scenario(scenario(noise))


def test_noise_alone_cannot_end_a_run():
    data = scenario({"irq": IRQ})
    data["workloads"] = data["workloads"][1:]
    with pytest.raises(ScenarioError, match="never finish"):
        load_scenario(data)


def test_the_reference_model_refuses_noise():
    inp, _ = engine_input(load_scenario(scenario({"irq": IRQ}, nr_cpus=4)).variants["default"])
    with pytest.raises(NotImplementedError, match="noise"):
        run_reference(inp, 0, 10**9)


def test_a_tail_must_span_the_last_interval():
    timer = {"all_busy": quantiles(10.0, 20.0),
             "some_idle": {**quantiles(10.0, 20.0), "tail_us": [0.0] * TIMER_TAIL_QUANTILES}}
    with pytest.raises(ScenarioError, match="tail_us"):
        load_scenario(scenario({"timer": timer}))


def test_late_timer_interrupts_need_their_percentiles_in_order():
    timer = {"all_busy": quantiles(10.0, 20.0), "some_idle": {"quantiles_us": [5.0] * (TIMER_QUANTILES - 1) + [1.0]}}
    with pytest.raises(ScenarioError, match="decrease"):
        load_scenario(scenario({"timer": timer}))
