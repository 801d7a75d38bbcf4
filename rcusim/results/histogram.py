"""Latency histograms in the form bcc's tools print them.

Kernel developers read ``synchronize_rcu()`` latency with bcc's
``funclatency -u``: the BPF side converts each call's duration to whole
microseconds (``delta /= 1000``), puts it in bucket ``bpf_log2l(delta)`` and
the Python side prints the buckets with ``print_log2_hist()``. rcusim prints
its simulated latencies the same way, so that a simulated histogram can be
laid next to a measured one line by line.

Both halves are reproduced here from bcc's own code:

* ``bpf_log2l()`` (``src/cc/export/helpers.h``) returns ``floor(log2(v)) + 1``
  for ``v >= 1`` and ``1`` for ``v == 0``, that is the bit length of ``v``
  with 0 sharing bucket 1 with 1. Bucket 0 is never filled.
* ``_print_log2_hist()`` (``src/python/bcc/table.py``) prints bucket ``i`` as
  the inclusive range ``(1 << i) >> 1 -> (1 << i) - 1``, except bucket 1,
  which it prints as ``0 -> 1``; so the rows read ``0 -> 1``, ``2 -> 3``,
  ``4 -> 7``, ``8 -> 15`` and so on. It prints from bucket 1 up to the last
  non-empty bucket, with a bar of ``*`` scaled so that the fullest bucket
  gets 40 of them (20 when the values need the wide 64-bit layout).

:func:`linear_histogram` gives fixed-width buckets for plots that want a
linear axis.
"""

from __future__ import annotations

import numpy as np

#: Number of log2 buckets, as bcc's ``log2_index_max``: enough for any
#: 64-bit value.
LOG2_INDEX_MAX = 65

#: Width of the bar of the fullest bucket, as bcc's ``stars_max``.
STARS_MAX = 40

#: Last bucket index that still fits bcc's narrow (32-bit) layout.
_NARROW_INDEX_MAX = 32

# Bucket i >= 2 starts at 2**(i - 1); a value belongs to the number of these
# starts that are <= it. Comparing integers (rather than taking a float
# log2) keeps values such as 2**53 - 1 in the right bucket.
_BUCKET_STARTS = np.array([1 << k for k in range(63)], dtype=np.int64)

# Below this, log2_histogram() counts values one by one before summing buckets.
_BY_VALUE_MAX = 1 << 24

# Values linear_histogram() buckets at a time.
_SLICE = 1 << 20


def _as_nonnegative_integers(values) -> np.ndarray:
    """Return *values* as a 1-D int64 array, flooring floats.

    Raises
    ------
    ValueError
        If a value is negative or not finite.
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        arr = arr.reshape(-1)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise ValueError("histogram values must be finite")
        if arr.size > 0 and arr.min() < 0:
            raise ValueError(f"histogram values must be >= 0, got {int(np.floor(arr.min()))}")
        # Truncating a non-negative float is flooring it.
        return arr.astype(np.int64)
    if arr.dtype.kind not in "iub" and arr.size > 0:
        raise ValueError(f"histogram values must be numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size > 0 and arr.min() < 0:
        raise ValueError(f"histogram values must be >= 0, got {int(arr.min())}")
    return arr


def log2_slot(values) -> np.ndarray:
    """Bucket index of each value, as bcc's ``bpf_log2l()`` computes it.

    Parameters
    ----------
    values : array_like of int
        Non-negative integers (floats are floored first).

    Returns
    -------
    numpy.ndarray of int64
        ``floor(log2(v)) + 1`` for ``v >= 1`` and ``1`` for ``v == 0``.

    Examples
    --------
    >>> log2_slot([0, 1, 2, 3, 4, 7, 8]).tolist()
    [1, 1, 2, 2, 3, 3, 4]
    """
    arr = _as_nonnegative_integers(values)
    slots = np.searchsorted(_BUCKET_STARTS, arr, side="right").astype(np.int64)
    # bpf_log2l(0) is bpf_log2(0) + 1 == 1: zero shares bucket 1 with one.
    return np.maximum(slots, 1)


def log2_bucket_bounds(slot: int) -> tuple[int, int]:
    """Inclusive value range that bcc prints for bucket *slot*.

    Parameters
    ----------
    slot : int
        Bucket index, at least 1.

    Returns
    -------
    (low, high) : tuple of int
        ``(0, 1)`` for bucket 1, ``(2**(slot-1), 2**slot - 1)`` otherwise.
    """
    if slot < 1:
        raise ValueError(f"log2 bucket index must be >= 1, got {slot}")
    low = (1 << slot) >> 1
    high = (1 << slot) - 1
    # Same special case as _print_log2_hist(): bucket 1 would read "1 -> 1"
    # but also holds 0, so it is printed as "0 -> 1".
    if low == high:
        low -= 1
    return low, high


def log2_histogram(values, weights=None) -> np.ndarray:
    """Count values per log2 bucket, as ``BPF_HISTOGRAM`` + ``bpf_log2l()``.

    Parameters
    ----------
    values : array_like of int
        Non-negative integers, e.g. latencies in whole microseconds
        (floats are floored first).
    weights : array_like of int, optional
        How many times each value counts (default: once).

    Returns
    -------
    numpy.ndarray of int64, shape (LOG2_INDEX_MAX,)
        ``counts[i]`` is the number of values in bucket ``i``; see
        :func:`log2_bucket_bounds` for the range of each bucket.
        ``counts[0]`` is always 0, as in bcc.
    """
    arr = _as_nonnegative_integers(values)
    if weights is not None:
        return np.bincount(log2_slot(arr), weights=weights, minlength=LOG2_INDEX_MAX).astype(np.int64)
    if arr.size == 0 or arr.max() >= _BY_VALUE_MAX:
        return np.bincount(log2_slot(arr), minlength=LOG2_INDEX_MAX).astype(np.int64)
    # Small values (latencies in µs): count each value, then add up each bucket's
    # range, in one pass over the values and without a temporary per value.
    by_value = np.bincount(arr)
    starts = [0] + [1 << (i - 1) for i in range(2, LOG2_INDEX_MAX) if 1 << (i - 1) < by_value.size]
    counts = np.zeros(LOG2_INDEX_MAX, dtype=np.int64)
    counts[1 : 1 + len(starts)] = np.add.reduceat(by_value, starts)
    return counts


def _stars(val: int, val_max: int, width: int) -> str:
    """Bar for one bucket, as bcc's ``_stars()``.

    bcc appends stars while ``i <= width * val / val_max - 1`` and
    ``i <= width - 1``, which is ``floor(width * val / val_max)`` stars,
    capped at *width*.
    """
    if val_max <= 0:
        return ""
    return "*" * min(width, int(width * val / val_max))


def format_log2_counts(counts, val_type: str = "usecs", *, strip_leading_zero: bool = False) -> str:
    """Lay out bucket counts exactly as bcc's ``_print_log2_hist()``.

    Parameters
    ----------
    counts : array_like of int
        Count per bucket index, as returned by :func:`log2_histogram`.
    val_type : str, default "usecs"
        Column header, e.g. ``"usecs"`` for ``funclatency -u``.
    strip_leading_zero : bool, default False
        Leave out the empty buckets below the first non-empty one.

    Returns
    -------
    str
        The lines bcc would print, joined with newlines and without a
        trailing newline; an empty string when no bucket above 0 has a
        count (bcc prints nothing then).
    """
    vals = [int(v) for v in np.asarray(counts).reshape(-1)]
    idx_max = -1
    val_max = 0
    for i, v in enumerate(vals):
        if v > 0:
            idx_max = i
        if v > val_max:
            val_max = v

    if idx_max <= _NARROW_INDEX_MAX:
        header = "     %-19s : count     distribution"
        body = "%10d -> %-10d : %-8d |%-*s|"
        stars = STARS_MAX
    else:
        # Ranges beyond 32 bits need 20-digit columns; bcc halves the bar
        # so that a row still fits a terminal.
        header = "               %-29s : count     distribution"
        body = "%20d -> %-20d : %-8d |%-*s|"
        stars = STARS_MAX // 2

    lines = []
    if idx_max > 0:
        lines.append(header % val_type)
    for i in range(1, idx_max + 1):
        low, high = log2_bucket_bounds(i)
        val = vals[i]
        if strip_leading_zero and not val:
            continue
        strip_leading_zero = False
        lines.append(body % (low, high, val, stars, _stars(val, val_max, stars)))
    return "\n".join(lines)


def format_log2_histogram(values, unit: str = "usecs", *, strip_leading_zero: bool = False) -> str:
    """Histogram of *values* in the layout of bcc's ``print_log2_hist()``.

    Parameters
    ----------
    values : array_like of int
        Non-negative integers in *unit*, e.g. latencies in whole
        microseconds as ``funclatency -u`` records them (floats are
        floored first).
    unit : str, default "usecs"
        Column header.
    strip_leading_zero : bool, default False
        Leave out the empty buckets below the first non-empty one.

    Returns
    -------
    str
        The histogram lines without a trailing newline, or an empty string
        for no values.

    Examples
    --------
    >>> print(format_log2_histogram([0, 2, 3, 5]))
         usecs               : count     distribution
             0 -> 1          : 1        |********************                    |
             2 -> 3          : 2        |****************************************|
             4 -> 7          : 1        |********************                    |
    """
    return format_log2_counts(log2_histogram(values), unit, strip_leading_zero=strip_leading_zero)


def linear_histogram(values, bucket_width: float, *, start: float | None = None,
                     weights=None) -> tuple[np.ndarray, np.ndarray]:
    """Count values in fixed-width buckets ``[start + k*w, start + (k+1)*w)``.

    Parameters
    ----------
    values : array_like of float
        The values to count.
    bucket_width : float
        Width ``w`` of every bucket, > 0.
    start : float, optional
        Lower edge of the first bucket. By default the multiple of
        *bucket_width* at or below the smallest value, so that several
        histograms with the same width share their edges.
    weights : array_like of int, optional
        How many times each value counts (default: once).

    Returns
    -------
    edges : numpy.ndarray of float64, shape (n + 1,)
        Bucket edges, increasing.
    counts : numpy.ndarray of int64, shape (n,)
        Number of values per bucket. With no values, ``edges`` holds only
        *start* (or 0) and ``counts`` is empty.
    """
    if not bucket_width > 0:
        raise ValueError(f"bucket_width must be > 0, got {bucket_width}")
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if arr.size == 0:
        return np.array([0.0 if start is None else float(start)]), np.zeros(0, dtype=np.int64)
    if not np.all(np.isfinite(arr)):
        raise ValueError("histogram values must be finite")
    if start is None:
        start = np.floor(arr.min() / bucket_width) * bucket_width
    if arr.min() < start:
        raise ValueError(f"start {start} is above the smallest value {arr.min()}")
    n = int(np.floor((arr.max() - start) / bucket_width)) + 1
    counts = np.zeros(n, dtype=np.int64)
    # In slices, so that millions of values need no temporary of their own size.
    for i in range(0, arr.size, _SLICE):
        index = np.floor((arr[i : i + _SLICE] - start) / bucket_width).astype(np.int64)
        w = None if weights is None else weights[i : i + _SLICE]
        counts += np.bincount(index, weights=w, minlength=n).astype(np.int64)
    edges = start + bucket_width * np.arange(n + 1, dtype=np.float64)
    return edges, counts
