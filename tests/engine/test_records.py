"""cython_core/records.pxi: request and grace-period records. run.records: every request in the
latency digest, its row kept for all, a sample or none; each GP's FQS scans and the QS that
ended it."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import rcusim
from rcusim import _core
from rcusim.engine.engine_input import engine_input
from rcusim.engine.simulate import EVENT_CHUNK
from rcusim.input.scenario import load_scenario
from rcusim.results.digest import FINE_RELATIVE_ERROR, digest_of
from rcusim.results.frames import latency_ns
from rcusim.results.run import run_scenario

from tests.engine.conftest import lone_caller, only_variant

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "sync_rcu_10k.yaml"
SMALL = {"hardware.nr_cpus": 8, "workloads.0.tasks": 300, "workloads.0.loops": 20}


def run_small(records=None, seed=0, **extra):
    overrides = dict(SMALL, **extra)
    if records is not None:
        overrides["run.records"] = records
    return rcusim.run(SCENARIO, overrides=overrides, seed=seed, progress=False)


@pytest.fixture(scope="module")
def every_mode():
    return {mode: run_small(mode) for mode in ("all", "sample", "none")}


def test_engine_digest_is_the_digest_of_its_rows(every_mode):
    for v in every_mode["all"].variants.values():
        rows = digest_of(v.requests["primitive"].to_numpy(), latency_ns(v.requests))
        assert rows.keys() == v.latency_digest.keys()
        for code, d in rows.items():
            engine = v.latency_digest[code]
            for key in ("count", "sum_ns", "min_ns", "max_ns"):
                assert engine[key] == d[key], key
            np.testing.assert_array_equal(engine["log2_us"], d["log2_us"])
            np.testing.assert_array_equal(engine["fine"], d["fine"])


def test_none_keeps_no_rows_and_the_same_exact_figures(every_mode):
    full, none = every_mode["all"], every_mode["none"]
    for name, v in none.variants.items():
        ref = full.variants[name]
        assert len(v.requests) == 0 and v.request_count == len(ref.requests) > 0
        for key in ("count", "min", "mean", "max"):
            assert v.metrics["latency_us"][key] == ref.metrics["latency_us"][key], key
        for key, value in ref.metrics.items():
            if key != "latency_us":
                assert v.metrics[key] == value, key
    # The report's histograms and funclatency lines cover every request; only the
    # percentiles on its latency line are estimates.
    def exact_lines(result):
        out, in_latency = [], False
        for line in result.report_text().splitlines():
            # The latency line and its indented continuation lines.
            in_latency = line.startswith("latency (µs)") or (in_latency and line.startswith(" "))
            if not in_latency:
                out.append(line)
        return out
    assert exact_lines(none) == exact_lines(full)
    assert "(records: none; percentiles within 0.05%)" in none.report_text()
    assert "Function = synchronize_rcu" in full.report_text()


def test_percentiles_without_rows_are_within_the_stated_error(every_mode):
    for name, v in every_mode["none"].variants.items():
        exact = every_mode["all"].variants[name].metrics["latency_us"]
        for q in ("p50", "p90", "p99"):
            assert v.metrics["latency_us"][q] == pytest.approx(exact[q], rel=FINE_RELATIVE_ERROR, abs=1e-3)


def test_sample_keeps_the_stated_fraction_of_the_rows_deterministically(every_mode):
    fraction = 0.25
    sample = run_small("sample", **{"run.sample_fraction": fraction})
    again = run_small("sample", **{"run.sample_fraction": fraction})
    for name, v in sample.variants.items():
        n = v.request_count
        # Within 5 standard deviations of a Binomial(n, fraction) draw.
        assert abs(len(v.requests) - n * fraction) < 5 * np.sqrt(n * fraction * (1 - fraction))
        assert v.requests.equals(again.variants[name].requests)
        # Each kept row is one of the full run's rows.
        full = every_mode["all"].variants[name].requests
        keys = ["task", "t_start_ns", "t_end_ns"]
        assert len(v.requests.merge(full[keys], on=keys)) == len(v.requests)


def test_time_breakdown_adds_up_to_the_mean_latency(every_mode):
    for v in every_mode["none"].variants.values():
        parts = v.metrics["normal_time_us"]
        assert sum(parts.values()) == pytest.approx(v.metrics["latency_us"]["mean"], abs=1e-2)


def test_rows_beyond_the_expected_count_grow_the_arrays():
    spec = load_scenario(SCENARIO, overrides=SMALL).variants["default"]
    inp, _ = engine_input(spec)
    rows = {}
    for expected in (inp.records.expected_requests, 1):
        small = dataclasses.replace(inp, records=dataclasses.replace(inp.records, expected_requests=expected))
        engine = _core.Engine(small, np.random.PCG64(np.random.SeedSequence(0)))
        while engine.run(10**18, EVENT_CHUNK) == _core.EXIT_MAX_EVENTS:
            pass
        rows[expected] = engine.requests()
    for key, column in rows[inp.records.expected_requests].items():
        np.testing.assert_array_equal(rows[1][key], column)


# --- grace-period records ------------------------------------------------------------
def test_gp_metrics_in_summary():
    v = only_variant(run_scenario(load_scenario(lone_caller("6.12")), progress=False))
    gp = v.metrics["normal_gp"]
    assert gp["fqs_scans"] == {"mean": 2.0, "p99": 2.0}
    assert gp["last_qs"]["gp_kthread_cpu"] == len(v.gps)
    assert sum(gp["last_qs"].values()) == len(v.gps)
    lengths = np.sort((v.gps.t_end_ns - v.gps.t_start_ns).to_numpy()) / 1e3
    assert gp["length_us"]["max"] == pytest.approx(lengths[-1], abs=1e-3)
