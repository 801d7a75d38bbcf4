"""The golden figures (tests/golden/golden.py): every bundled scenario's results at
reduced size, the traces, the rcuscale line and the reference model's records are
byte for byte what was recorded."""

import json

from tests.golden.golden import GOLDEN, differences, figures


def test_golden_figures_identical():
    assert differences(json.loads(GOLDEN.read_text()), figures()) == []


def test_golden_comparison_can_fail():
    recorded = json.loads(GOLDEN.read_text())
    changed = dict(recorded, rcuscale=recorded["rcuscale"] + " ")
    assert differences(recorded, changed) == [f"rcuscale: recorded {recorded['rcuscale']!r}, "
                                              f"now {changed['rcuscale']!r}"]


def test_golden_comparison_names_the_figure_that_moved():
    recorded = json.loads(GOLDEN.read_text())
    changed = json.loads(GOLDEN.read_text())
    p99 = changed["sync_rcu_10k"]["summary.json"]["variants"]["default"]["metrics"]["latency_us"]
    p99["p99"] += 1
    assert differences(recorded, changed) == [
        f"sync_rcu_10k/summary.json/variants/default/metrics/latency_us/p99: recorded {p99['p99'] - 1!r}, "
        f"now {p99['p99']!r}"]
