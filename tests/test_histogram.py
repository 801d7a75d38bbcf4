"""Tests of rcusim.results.histogram against bcc's log2 bucketing and print layout.

The expected buckets and strings are written out by hand from bcc's rules
(``bpf_log2l()`` in src/cc/export/helpers.h, ``_print_log2_hist()`` and
``_stars()`` in src/python/bcc/table.py), never computed by the code under
test.
"""

import numpy as np
import pytest

from rcusim.results.histogram import (LOG2_INDEX_MAX, format_log2_counts, format_log2_histogram, linear_histogram,
                                      log2_bucket_bounds, log2_histogram, log2_slot)


@pytest.mark.parametrize(
    "value, slot, low, high",
    [
        (0, 1, 0, 1),
        (1, 1, 0, 1),
        (2, 2, 2, 3),
        (3, 2, 2, 3),
        (4, 3, 4, 7),
        (7, 3, 4, 7),
        (8, 4, 8, 15),
        (1023, 10, 512, 1023),
        (1024, 11, 1024, 2047),
    ],
)
def test_bucket_of_value_matches_bcc(value, slot, low, high):
    assert log2_slot([value]).tolist() == [slot]
    assert log2_bucket_bounds(slot) == (low, high)
    assert low <= value <= high


def test_slots_exact_beyond_float_precision():
    # A float log2 would put 2**53 - 1 in bucket 54; bpf_log2l works on integers.
    values = [2**53 - 1, 2**53, 2**62, 2**63 - 1]
    assert log2_slot(values).tolist() == [53, 54, 63, 63]


def test_floats_are_floored_and_negatives_rejected():
    assert log2_slot([1.99, 2.0, 3.7]).tolist() == [1, 2, 2]
    with pytest.raises(ValueError, match=">= 0"):
        log2_slot([3, -1])
    with pytest.raises(ValueError, match="finite"):
        log2_slot([np.nan])


def test_log2_histogram_counts():
    counts = log2_histogram([0, 1, 1, 3, 5, 6, 7, 7, 20])
    assert counts.shape == (LOG2_INDEX_MAX,)
    assert counts[0] == 0
    assert counts[:6].tolist() == [0, 3, 1, 4, 0, 1]
    assert counts.sum() == 9


def test_format_layout_known_input():
    expected = (
        "     usecs               : count     distribution\n"
        "         0 -> 1          : 3        |******************************          |\n"
        "         2 -> 3          : 1        |**********                              |\n"
        "         4 -> 7          : 4        |****************************************|\n"
        "         8 -> 15         : 0        |                                        |\n"
        "        16 -> 31         : 1        |**********                              |"
    )
    assert format_log2_histogram([0, 1, 1, 3, 5, 6, 7, 7, 20]) == expected


def test_format_unit_and_strip_leading_zero():
    expected = (
        "     msecs               : count     distribution\n"
        "         8 -> 15         : 2        |****************************************|\n"
        "        16 -> 31         : 0        |                                        |\n"
        "        32 -> 63         : 1        |********************                    |"
    )
    assert format_log2_histogram([8, 15, 40], "msecs", strip_leading_zero=True) == expected
    # Without stripping, the empty buckets from "0 -> 1" up are printed.
    lines = format_log2_histogram([8, 15, 40], "msecs").splitlines()
    assert lines[1].startswith("         0 -> 1          : 0 ")
    assert len(lines) == 1 + 6


def test_star_scaling_floors_to_forty():
    # counts 1 and 3: 40 * 1 / 3 = 13.3 -> 13 stars, the fullest gets 40.
    lines = format_log2_histogram([0, 2, 2, 3]).splitlines()
    bars = [line.split("|")[1] for line in lines[1:]]
    assert [len(b) for b in bars] == [40, 40]
    assert bars[0] == "*" * 13 + " " * 27
    assert bars[1] == "*" * 40
    # 40 * 1 / 41 < 1: a non-empty bucket can get no star at all.
    counts = np.zeros(LOG2_INDEX_MAX, dtype=np.int64)
    counts[1], counts[2] = 1, 41
    bars = [line.split("|")[1] for line in format_log2_counts(counts).splitlines()[1:]]
    assert bars == [" " * 40, "*" * 40]


def test_wide_layout_beyond_32_bits():
    # 2**40 lands in bucket 41 > 32: bcc switches to 20-digit columns and a
    # 20-star bar.
    lines = format_log2_histogram([2**40], strip_leading_zero=True).splitlines()
    assert lines[0] == "               usecs                         : count     distribution"
    assert lines[1] == (
        "       1099511627776 -> 2199023255551        : 1        |********************|"
    )


def test_empty_prints_nothing():
    assert format_log2_histogram([]) == ""


def test_linear_histogram():
    # Buckets are half-open: 5 and 9 share [5, 10), 10 starts [10, 15).
    edges, counts = linear_histogram([0, 1, 5, 9, 10], 5)
    assert edges.tolist() == [0.0, 5.0, 10.0, 15.0]
    assert counts.tolist() == [2, 2, 1]
    # Default start is the multiple of the width below the smallest value.
    edges, counts = linear_histogram([12, 13, 27], 10)
    assert edges.tolist() == [10.0, 20.0, 30.0]
    assert counts.tolist() == [2, 1]
    edges, counts = linear_histogram([12, 13, 27], 10, start=0)
    assert counts.tolist() == [0, 2, 1]
    with pytest.raises(ValueError):
        linear_histogram([1], 0)
    edges, counts = linear_histogram([], 5)
    assert counts.size == 0 and edges.size == 1


@pytest.mark.parametrize("high", [1, 2, 3, 100, 1 << 23, 1 << 40])
def test_histogram_counts_each_value_in_its_slot(high):
    rng = np.random.default_rng(high)
    values = rng.integers(0, high, 10_000)
    expected = np.bincount(log2_slot(values), minlength=LOG2_INDEX_MAX)
    np.testing.assert_array_equal(log2_histogram(values), expected)
    np.testing.assert_array_equal(log2_histogram(values + rng.random(values.size)), expected)


def test_weighted_histograms_count_each_value_its_weight():
    rng = np.random.default_rng(3)
    values = rng.integers(0, 5000, 200).astype(float)
    weights = rng.integers(1, 20, values.size)
    repeated = np.repeat(values, weights)
    np.testing.assert_array_equal(log2_histogram(values, weights), log2_histogram(repeated))
    edges, counts = linear_histogram(values, 250.0, weights=weights)
    expected_edges, expected = linear_histogram(repeated, 250.0)
    np.testing.assert_array_equal(edges, expected_edges)
    np.testing.assert_array_equal(counts, expected)
