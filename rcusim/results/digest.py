"""Latency digests: what a run keeps of every request when it does not keep every row.

The engine fills, per primitive, the count, sum, least and greatest latency, bcc's
log2 histogram of whole microseconds and a log-linear histogram of nanoseconds as
requests finish (``Engine.latency_digest()``, cython_core/latency.pxd). This module
computes the same digest from request rows, so that results built from frames read the
same way, and reads percentiles back from the log-linear histogram.

The log-linear histogram gives each value below ``2 * FINE_SUB`` ns its own slot and
cuts every octave above into ``FINE_SUB`` equal slots, so a slot spans at most
``1 / FINE_SUB`` of its values; a percentile read at the middle of its slot is within
``1 / (2 * FINE_SUB)`` (0.05 %) of the exact one.
"""

from __future__ import annotations

import numpy as np

from rcusim import _core
from rcusim.results.histogram import log2_histogram

#: Slots per octave of the log-linear histogram, as the engine's FINE_SUB_BITS.
FINE_SUB_BITS = _core.DIGEST_FINE_SUB_BITS
FINE_SUB = 1 << FINE_SUB_BITS

#: Number of slots of the log-linear histogram (values up to 2**63 - 1).
FINE_SLOTS = (64 - FINE_SUB_BITS) * FINE_SUB

#: Largest relative distance of a percentile read from the histogram to the exact one.
FINE_RELATIVE_ERROR = 1 / (2 * FINE_SUB)


def fine_slot(values_ns) -> np.ndarray:
    """Log-linear slot of each non-negative integer, as the engine's fine_slot()."""
    v = np.asarray(values_ns, dtype=np.int64)
    shift = np.maximum(_bit_length(v) - FINE_SUB_BITS - 1, 0)
    return np.where(shift == 0, v, ((shift + 1) << FINE_SUB_BITS) + ((v >> shift) - FINE_SUB))


def _bit_length(v: np.ndarray) -> np.ndarray:
    """Bit length of each non-negative int64, in exact integer arithmetic."""
    n = np.zeros(v.shape, dtype=np.int64)
    rest = v.copy()
    for step in (32, 16, 8, 4, 2, 1):
        big = rest >= (1 << step)
        n[big] += step
        rest[big] >>= step
    return n + (rest > 0)


def fine_slot_middle(slots) -> np.ndarray:
    """Middle of the integer values each log-linear slot holds (float)."""
    s = np.asarray(slots, dtype=np.int64)
    shift = np.maximum(s // FINE_SUB - 1, 0)
    low = (s - shift * FINE_SUB) << shift
    return low + ((1 << shift) - 1) / 2


def digest_of(primitive, latency_ns) -> dict:
    """The digest the engine keeps, computed from request rows (without ``breakdown``).

    Parameters
    ----------
    primitive : array_like of int
        Primitive code of each request (``rcusim._core.PRIMITIVES``).
    latency_ns : array_like of int
        Latency of each request.

    Returns
    -------
    dict
        By primitive code present: ``count``, ``sum_ns``, ``min_ns``, ``max_ns``,
        ``log2_us`` and ``fine``, as ``Engine.latency_digest()`` returns them.
    """
    primitive = np.asarray(primitive)
    latency_ns = np.asarray(latency_ns, dtype=np.int64)
    out = {}
    for code in np.unique(primitive):
        lat = latency_ns[primitive == code]
        out[int(code)] = {
            "count": int(lat.size), "sum_ns": int(lat.sum()), "min_ns": int(lat.min()), "max_ns": int(lat.max()),
            "log2_us": log2_histogram(lat // 1000),
            "fine": np.bincount(fine_slot(lat), minlength=FINE_SLOTS).astype(np.int64),
        }
    return out


def fine_order_statistics(fine, ranks) -> np.ndarray:
    """The values of the given ranks (0: the least) among those counted in a log-linear
    histogram, each read at the middle of its slot (within :data:`FINE_RELATIVE_ERROR`)."""
    return fine_slot_middle(np.searchsorted(np.cumsum(fine), ranks, side="right"))


def fine_percentiles(fine, q) -> np.ndarray:
    """Percentiles `q` of the values counted in a log-linear histogram, by linear
    interpolation between order statistics as NumPy's ``method="linear"``
    (see :func:`fine_order_statistics`)."""
    n = int(np.sum(fine))
    h = np.asarray(q, dtype=np.float64) / 100 * (n - 1)
    lo = np.floor(h)
    below, above = fine_order_statistics(fine, lo), fine_order_statistics(fine, np.minimum(lo + 1, n - 1))
    return below + (above - below) * (h - lo)
