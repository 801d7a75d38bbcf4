"""Determinism: one scenario and one seed give the same results, byte for byte.

The random draws of a run are OS noise (its arrivals and lengths), readers,
sleeps, call_rcu_load, the form of each kfree_rcu() call and, on a profile
without idle states, the wake-up latency of an idle CPU; the seed-sensitivity
check adds noise to the bundled scenario. draws_at_random() says whether a
variant's run draws at all (a sweep runs it once for every seed if not).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

import rcusim
from rcusim.commands.cli import main
from rcusim.engine.simulate import draws_at_random, run_engine
from rcusim.input.scenario import load_scenario
from rcusim.results.frames import latency_ns

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "scenarios" / "sync_rcu_10k.yaml"
OVERRIDES = ["workloads.0.tasks=200", "workloads.0.loops=5"]


def stable_json(summary: dict) -> str:
    """The summary as JSON without the wall-clock block, which differs from run to run."""
    summary = dict(summary)
    assert "wall_clock" in summary and "invocation" in summary
    del summary["wall_clock"], summary["invocation"]
    return json.dumps(summary)


def run(seed, noise: bool = False):
    data = yaml.safe_load(BUNDLED.read_text())
    if noise:
        data["workloads"].append({"kind": "noise", "preset": "quiet_server"})
    return rcusim.run(data, overrides=OVERRIDES, seed=seed, progress=False)


@pytest.fixture(scope="module")
def seed_7_twice():
    return run(7), run(7)


def test_same_seed_same_summary(seed_7_twice):
    first, second = seed_7_twice
    assert stable_json(first.summary()) == stable_json(second.summary())
    assert first.summary()["seed"] == 7


def test_same_seed_same_latencies_and_grace_periods(seed_7_twice):
    first, second = seed_7_twice
    for name in ("default", "wake_from_gp"):
        a, b = first.variants[name], second.variants[name]
        assert len(a.requests) == 200 * 5
        for column in a.requests.columns:
            assert np.array_equal(a.requests[column].to_numpy(), b.requests[column].to_numpy()), \
                (name, column)
        for column in a.gps.columns:
            assert np.array_equal(a.gps[column].to_numpy(), b.gps[column].to_numpy()), (name, column)
        assert a.counters == b.counters


def test_different_seed_changes_latency_samples():
    first, other = run(7, noise=True), run(8, noise=True)
    for name in ("default", "wake_from_gp"):
        a = latency_ns(first.variants[name].requests)
        b = latency_ns(other.variants[name].requests)
        assert a.shape == b.shape  # the same calls ...
        assert not np.array_equal(a, b), name  # ... but other noise draws
    assert stable_json(first.summary()) != stable_json(other.summary())


def test_cli_writes_identical_summaries(tmp_path, seed_7_twice, capsys):
    texts = []
    for attempt in ("a", "b"):
        out = tmp_path / attempt
        argv = ["run", str(BUNDLED), "--out", str(out), "--seed", "7", "--no-progress"]
        for item in OVERRIDES:
            argv += ["--set", item]
        assert main(argv) == 0, capsys.readouterr().err
        texts.append((out / "summary.json").read_text(encoding="utf-8"))
    first, second = (json.loads(text) for text in texts)
    assert stable_json(first) == stable_json(second)
    # The command line and the Python API agree on the same scenario and seed.
    assert stable_json(first) == stable_json(seed_7_twice[0].summary())


# Small runs of bundled scenarios: some variants draw nothing, the others draw for each reason.
SMALL = {
    "sync_rcu_10k": {"workloads.0.tasks": 8, "workloads.0.loops": 2},
    "gp_floor_64cpu": {"workloads.0.loops": 20},              # OS noise in some variants only
    "expedited_storm_32cpu": {"workloads.0.loops": 2},        # readers
    "kfree_flood_64cpu": {"workloads.0.kfree_loops": 5},      # each call's kfree_rcu() form
    "phone_launch_8cpu": {"workloads.0.loops": 5},            # sleeps, call_rcu_load
}


def drew(monkeypatch, variant, spec) -> bool:
    """Whether the engine's run of one variant advanced its random stream."""
    streams = []

    class Watched(np.random.PCG64):
        def __init__(self, seed):
            super().__init__(seed)
            streams.append((self, self.state["state"]))

    monkeypatch.setattr(np.random, "PCG64", Watched)
    run_engine(variant, spec, seed=0)
    (stream, start), = streams
    return stream.state["state"] != start


def test_draws_at_random_says_whether_the_engine_draws(monkeypatch):
    said = []
    for name, overrides in SMALL.items():
        scenario = load_scenario(ROOT / "scenarios" / f"{name}.yaml", overrides=overrides)
        for variant, spec in scenario.variants.items():
            said.append(draws_at_random(spec))
            assert said[-1] == drew(monkeypatch, variant, spec), (name, variant)
    assert set(said) == {False, True}


def test_a_timer_delay_alone_draws_at_random(monkeypatch):
    # A deterministic scenario with only late timer interrupts added.
    delay = {"quantiles_us": [float(k) for k in range(1001)]}
    scenario = load_scenario(ROOT / "scenarios" / "sync_rcu_10k.yaml", overrides={
        **SMALL["sync_rcu_10k"], "workloads": [{"kind": "sync_loop", "tasks": 8, "loops": 2},
                                               {"kind": "noise", "timer": {"all_busy": delay, "some_idle": delay}}]})
    for variant, spec in scenario.variants.items():
        assert draws_at_random(spec) and drew(monkeypatch, variant, spec), variant
