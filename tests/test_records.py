"""run.records outside the engine: the up-front memory estimate, the digest's log-linear slots and
percentiles (rcusim.results.digest), and the latency figure drawn from the digest alone.
(The engine's records: tests/engine/test_records.py.)"""

import numpy as np

from rcusim.engine.simulate import estimate_memory_bytes
from rcusim.input.scenario import load_scenario
from rcusim.plots import save_result_figures
from rcusim.plots.latency import LatencyHistogramDisplay
from rcusim.results.digest import FINE_RELATIVE_ERROR, fine_percentiles, fine_slot, fine_slot_middle

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
