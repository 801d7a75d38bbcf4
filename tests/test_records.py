"""run.records outside the engine: the up-front memory estimate, the digest's log-linear slots and
percentiles (rcusim.results.digest), the latency figure drawn from the digest alone, and the
statistics and the CDF made from one read of the rows.
(The engine's records: tests/engine/test_records.py.)"""

import numpy as np
import pytest

from rcusim.engine.simulate import estimate_memory_bytes
from rcusim.input.scenario import load_scenario
from rcusim.plots import save_result_figures
from rcusim.plots.latency import LatencyHistogramDisplay
from rcusim.results.digest import FINE_RELATIVE_ERROR, fine_percentiles, fine_slot, fine_slot_middle
from rcusim.results.metrics import CDF_POINTS, latency_stats_and_cdf_us

from tests.engine import test_records as engine_records
from tests.engine.test_records import SCENARIO

every_mode = engine_records.every_mode  # the engine's runs in each records mode (a fixture)


def test_the_memory_estimate_follows_the_records_option():
    scenario = load_scenario(SCENARIO, overrides={"run.records": "all"})
    spec = scenario.variants["default"]
    estimate = {mode: estimate_memory_bytes(spec.model_copy(update={"run": spec.run.model_copy(
        update={"records": mode})})) for mode in ("all", "sample", "none")}
    assert estimate["none"] < estimate["sample"] < estimate["all"]
    assert estimate["all"] > 10_000 * 1000 * 8  # the summary's latency array: 8 bytes per row at least


def test_fine_percentiles_are_within_the_stated_error():
    rng = np.random.default_rng(1)
    values = rng.lognormal(15, 1.5, 20_000).astype(np.int64)
    fine = np.bincount(fine_slot(values))
    q = [0, 1, 50, 90, 99, 99.9, 100]
    np.testing.assert_allclose(fine_percentiles(fine, q), np.percentile(values, q), rtol=FINE_RELATIVE_ERROR)


def test_fine_slot_middles_lie_in_their_slots():
    values = np.concatenate([np.arange(5000), 2 ** np.arange(11, 63), 2 ** np.arange(11, 63) - 1,
                             np.array([2**63 - 1])]).astype(np.int64)
    slots = fine_slot(values)
    assert (np.diff(slots[np.argsort(values)]) >= 0).all()
    assert (np.abs(fine_slot_middle(slots) - values) <= values * FINE_RELATIVE_ERROR + 0.5).all()


def test_without_rows_the_latency_figure_is_drawn_from_the_digest(every_mode, tmp_path):
    from_rows = LatencyHistogramDisplay.from_result(every_mode["all"], log2=True)._log2_steps()
    from_digest = LatencyHistogramDisplay.from_result(every_mode["none"], log2=True)._log2_steps()
    for (rows, _), (digest, _), v in zip(from_rows, from_digest, every_mode["none"].variants.values()):
        assert digest.sum() == v.request_count
        # Slots straddling a bucket's edge may land on the other side.
        assert np.abs(digest - rows).sum() <= v.request_count * 0.01
    every_mode["none"].write(tmp_path / "out", figures=save_result_figures)
    assert (tmp_path / "out" / "latency_hist.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("n", [1, 7, 5_000, 100_003])
def test_one_read_gives_the_statistics_and_the_cdf_a_sorted_copy_would(n):
    """latency_stats_and_cdf_us(): the statistics of the rows as NumPy makes them (the mean in
    the rows' order), and the CDF's order statistics those of a sorted copy, exactly."""
    ns = np.random.default_rng(n).integers(1_000, 50_000_000, size=n, dtype=np.int64)
    us = ns / 1e3
    stats, rank, x_us = latency_stats_and_cdf_us(ns.copy())
    assert stats["count"] == n
    assert stats["mean"] == round(float(us.mean()), 3)
    assert stats["min"] == round(float(us.min()), 3) and stats["max"] == round(float(us.max()), 3)
    assert stats["p99"] == round(float(np.percentile(us, 99)), 3)
    assert rank[0] == 0 and rank[-1] == n - 1 and len(rank) == min(n, CDF_POINTS)
    np.testing.assert_array_equal(x_us, np.sort(ns)[rank] / 1e3)
