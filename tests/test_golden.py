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
