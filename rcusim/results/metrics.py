"""Figures computed from a run's frames and counters: latency, grace-period and scheduler
statistics, rounded and turned into plain Python values ready for JSON, and the mean of
several runs' metrics."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from rcusim.results.digest import fine_percentiles
from rcusim.results.frames import LAST_QS_NAMES

#: Percentiles of the normal-GP length reported in ``metrics["normal_gp"]``.
GP_LENGTH_PERCENTILES = (50, 90, 99)

#: Percentiles reported in ``metrics["latency_us"]``.
LATENCY_PERCENTILES = (50, 90, 99)

# Decimal places kept in metrics and in the summary. Latencies are whole
# nanoseconds, so 3 decimals of a microsecond (and 9 of a second) lose
# nothing but the float noise of interpolated percentiles and means.
_US_DECIMALS = 3
S_DECIMALS = 9
RATIO_DECIMALS = 3
WALL_DECIMALS = 6


def round_or_none(x, decimals: int):
    if x is None:
        return None
    x = float(x)
    if not math.isfinite(x):
        return None
    return round(x, decimals)


def to_builtin(obj):
    """Turn NumPy scalars and arrays into plain Python values for JSON.

    Non-finite floats become None because JSON has no NaN or infinity.
    """
    if isinstance(obj, dict):
        return {str(k): to_builtin(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_builtin(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_builtin(v) for v in obj.tolist()]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    return obj


#: Elements per slice of an in-place conversion: NumPy copies an input that overlaps its
#: output with another dtype, so each slice costs a copy of its own size only.
IN_PLACE_SLICE = 1 << 20


def convert_in_place(a: np.ndarray, dtype, op) -> np.ndarray:
    """`op(part, out)` writes each slice of `a` over itself as `dtype` (of a's item size);
    returns `a` viewed as `dtype`, which `a` is given up to."""
    out = a.view(dtype)
    for lo in range(0, a.size, IN_PLACE_SLICE):
        op(a[lo:lo + IN_PLACE_SLICE], out[lo:lo + IN_PLACE_SLICE])
    return out


def us_in_place(latency_ns: np.ndarray) -> np.ndarray:
    """An int64 array of ns as float64 µs in its own memory (``latency_ns / 1e3``, value for
    value); the int64 array is given up."""
    return convert_in_place(latency_ns, np.float64, lambda ns, out: np.divide(ns, 1e3, out=out))


#: Most ranks a CDF is drawn through: exact where drawn, and a 10-million-call run draws as
#: fast as a small one.
CDF_POINTS = 4096


def cdf_ranks(n: int) -> np.ndarray:
    """Up to CDF_POINTS ranks of n sorted values, evenly spread, the least and the greatest
    included."""
    return np.unique(np.linspace(0, n - 1, min(n, CDF_POINTS)).round().astype(np.int64))


def latency_stats_and_cdf_us(latency_ns: np.ndarray) -> tuple[dict, np.ndarray, np.ndarray]:
    """Count, min, mean, percentiles and max of latencies in microseconds, and their CDF's
    order statistics, from one read of them.

    Parameters
    ----------
    latency_ns : numpy.ndarray of int64
        Latencies in nanoseconds, which the caller gives up: their µs are computed in their
        own memory and sorted there (no copy of millions of values).

    Returns
    -------
    tuple
        ``(stats, ranks, x_us)``: ``stats`` is ``{"count", "min", "mean", "p50", "p90",
        "p99", "max"}``, ``count`` an int, the others floats in µs rounded to the nanosecond
        (percentiles by linear interpolation, NumPy's ``method="linear"``), or None when
        there are no latencies; ``x_us`` the sorted latencies in µs at ``ranks``
        (:func:`cdf_ranks`), exact (dividing by 1e3 keeps the order).
    """
    lat = np.asarray(latency_ns, dtype=np.int64)
    lat_us = us_in_place(lat) if lat.flags.c_contiguous and lat.flags.writeable else lat / 1e3
    rank = cdf_ranks(lat_us.size)
    if lat_us.size == 0:
        return _latency_stats(0, {}), rank, np.zeros(0)
    # min, mean and max in the rows' order (the mean's rounding depends on it), then sorted.
    stats = {"min": lat_us.min(), "mean": lat_us.mean(), "max": lat_us.max()}
    lat_us.sort()
    x_us = lat_us[rank]  # a copy: the rows' µs can go
    # lat_us is ours: let the selection reorder it rather than copy millions of values.
    pct = np.percentile(lat_us, LATENCY_PERCENTILES, method="linear", overwrite_input=True)
    stats.update({f"p{q}": value for q, value in zip(LATENCY_PERCENTILES, pct)})
    return _latency_stats(lat_us.size, stats), rank, x_us


def digest_stats_us(digest: dict) -> dict:
    """:func:`latency_stats_and_cdf_us`'s statistics of every request of a latency digest
    (:mod:`rcusim.results.digest`): count, min, mean and max exact, percentiles read from
    its log-linear histogram (within :data:`~rcusim.results.digest.FINE_RELATIVE_ERROR`)."""
    count = sum(d["count"] for d in digest.values())
    if count == 0:
        return _latency_stats(0, {})
    stats = {"min": min(d["min_ns"] for d in digest.values()) / 1e3,
             "mean": sum(d["sum_ns"] for d in digest.values()) / count / 1e3,
             "max": max(d["max_ns"] for d in digest.values()) / 1e3}
    pct = fine_percentiles(sum(d["fine"] for d in digest.values()), LATENCY_PERCENTILES)
    stats.update({f"p{q}": value / 1e3 for q, value in zip(LATENCY_PERCENTILES, pct)})
    return _latency_stats(count, stats)


def _latency_stats(count: int, stats_us: dict) -> dict:
    """The ``latency_us`` dict in its key order, values rounded to the nanosecond."""
    keys = ["min", "mean"] + [f"p{q}" for q in LATENCY_PERCENTILES] + ["max"]
    return {"count": int(count), **{k: round_or_none(stats_us.get(k), _US_DECIMALS) for k in keys}}


def normal_gp_stats(gps: pd.DataFrame) -> dict | None:
    """Length, FQS scans and last reporter of the normal grace periods.

    Parameters
    ----------
    gps : pandas.DataFrame
        A ``gps`` frame (:data:`~rcusim.results.frames.GP_COLUMNS`).

    Returns
    -------
    dict or None
        ``length_us`` (p50, p90, p99, max; µs, percentiles by linear
        interpolation), ``fqs_scans`` (mean, p99) and ``last_qs`` (a count per
        name of :data:`~rcusim.results.frames.LAST_QS_NAMES`); None without normal grace periods
        whose reporters were recorded (classic RCU records none).
    """
    normal = gps[~gps["expedited"].to_numpy(dtype=bool)]
    last = normal["last_qs"].to_numpy()
    if last.size == 0 or np.all(last < 0):
        return None
    length_us = (normal["t_end_ns"].to_numpy() - normal["t_start_ns"].to_numpy()) / 1e3
    scans = normal["fqs_scans"].to_numpy()
    pct = np.percentile(length_us, GP_LENGTH_PERCENTILES, method="linear")
    return {
        "length_us": {**{f"p{q}": round_or_none(v, _US_DECIMALS) for q, v in zip(GP_LENGTH_PERCENTILES, pct)},
                      "max": round_or_none(length_us.max(), _US_DECIMALS)},
        "fqs_scans": {"mean": round_or_none(scans.mean(), RATIO_DECIMALS),
                      "p99": round_or_none(np.percentile(scans, 99, method="linear"), RATIO_DECIMALS)},
        "last_qs": {name: int(np.count_nonzero(last == code)) for code, name in LAST_QS_NAMES.items()},
    }


#: How a KVM guest's vCPU halts end (``metrics["sched"]["kvm_halts"]``, kvm.pxi).
HALT_ENDS = ("polled", "blocked")

#: Percentiles of the run-queue length reported in ``metrics["sched"]``.
RQ_LENGTH_PERCENTILES = (50, 99)


#: Why an entity changed CPU: wake-up placement, a CPU going idle, periodic or nohz balancing.
MIGRATION_KINDS = ("wakeup", "newidle", "balance")


def sched_stats(busy_ns, rqlen_ns, sim_time_ns: int, counters: dict) -> dict:
    """The scheduler's figures of a run.

    Returns
    -------
    dict
        ``utilisation``: min, median and max over CPUs of the fraction of the
        run each CPU spent running an entity; ``rq_length``: percentiles of
        nr_running (queued plus running) weighted by CPU time; ``wakeups``:
        local, remote_enqueue (a direct enqueue in the waker's LLC), polling
        (an idle CPU woken by its polling flag) and ipi; ``rq_lock_wait_ms``: the
        time wakers spun on a target's rq lock held by another waker; ``migrations``: entities
        moved by wake-up placement, by a CPU going idle (newidle) and by periodic
        or nohz idle balancing; on a KVM guest also ``kvm_halts``: how the
        vCPUs' halts ended, found by the host's poll loop (polled) or with the
        vCPU thread blocked.
    """
    util = np.asarray(busy_ns, dtype=np.float64) / sim_time_ns if sim_time_ns > 0 else np.zeros(len(busy_ns))
    hist = np.asarray(rqlen_ns, dtype=np.float64)
    cum = np.cumsum(hist)
    lengths = {}
    for q in RQ_LENGTH_PERCENTILES:
        lengths[f"p{q}"] = int(np.searchsorted(cum, cum[-1] * q / 100)) if cum[-1] > 0 else None
    out = {
        "utilisation": {"min": round(float(util.min()), 4), "median": round(float(np.median(util)), 4),
                        "max": round(float(util.max()), 4)},
        "rq_length": lengths,
        "wakeups": {k: int(counters.get(f"wakeups_{k}", 0)) for k in ("local", "remote_enqueue", "polling", "ipi")},
        "rq_lock_wait_ms": round(counters.get("rq_lock_wait_ns", 0) / 1e6, 3),
        "migrations": {k: int(counters.get(f"migrations_{k}", 0)) for k in MIGRATION_KINDS},
    }
    if "halts_polled" in counters:
        out["kvm_halts"] = {k: int(counters[f"halts_{k}"]) for k in HALT_ENDS}
    return out


def callback_latency_stats_us(digest: dict) -> dict:
    """call_rcu() to invocation of the call_rcu_load workloads' callbacks, in µs.

    Parameters
    ----------
    digest : dict
        ``Engine.callback_digest()``: count, sum_ns, min_ns, max_ns and the
        log-linear histogram ``fine``.

    Returns
    -------
    dict
        ``{"queued", "invoked", "pending", "mean", "min", "p50", "p90", "p99", "max"}``:
        call_rcu() calls, callbacks invoked and still queued at the end, then floats in
        µs (percentiles from the histogram, within
        rcusim.results.digest.FINE_RELATIVE_ERROR), None when no callback was invoked.
    """
    n = int(digest["count"])
    out = {"queued": int(digest["queued"]), "invoked": n, "pending": int(digest["queued"]) - n}
    if n == 0:
        return out | dict.fromkeys(("mean", "min", "p50", "p90", "p99", "max"))
    p50, p90, p99 = fine_percentiles(digest["fine"], [50, 90, 99]) / 1e3
    return out | {"mean": round_or_none(digest["sum_ns"] / n / 1e3, _US_DECIMALS),
                  "min": round_or_none(digest["min_ns"] / 1e3, _US_DECIMALS),
                  "p50": round_or_none(p50, _US_DECIMALS), "p90": round_or_none(p90, _US_DECIMALS),
                  "p99": round_or_none(p99, _US_DECIMALS),
                  "max": round_or_none(digest["max_ns"] / 1e3, _US_DECIMALS)}


def sched_latency_stats_us(latency_ns) -> dict:
    """Scheduling latency of an rt_latency_probe, wake-up to running, in microseconds.

    Parameters
    ----------
    latency_ns : array_like of int
        One latency per activation of the probe, in nanoseconds.

    Returns
    -------
    dict
        ``{"max", "p99", "mean", "samples"}``: floats in µs rounded to the
        nanosecond (p99 by linear interpolation), None without samples;
        ``samples`` is an int.
    """
    lat_us = np.asarray(latency_ns, dtype=np.int64) / 1e3
    if lat_us.size == 0:
        return {"max": None, "p99": None, "mean": None, "samples": 0}
    return {
        "max": round_or_none(lat_us.max(), _US_DECIMALS),
        "p99": round_or_none(np.percentile(lat_us, 99, method="linear"), _US_DECIMALS),
        "mean": round_or_none(lat_us.mean(), _US_DECIMALS),
        "samples": int(lat_us.size),
    }


def mean_tree(values: list):
    """The mean of equally shaped nested metrics: numbers averaged (integers stay integers
    when every run's is one), anything else the first run's."""
    head = values[0]
    if isinstance(head, dict):
        return {key: mean_tree([v.get(key) if isinstance(v, dict) else None for v in values]) for key in head}
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) != len(values):
        return head
    mean = float(np.mean(numbers))
    return int(round(mean)) if all(isinstance(v, int) for v in numbers) else mean


def numeric_leaves(metrics: dict, prefix: str = "") -> dict:
    """Numbers in a nested metrics dict, by dotted key."""
    out = {}
    for key, value in metrics.items():
        if isinstance(value, dict):
            out.update(numeric_leaves(value, f"{prefix}{key}."))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[f"{prefix}{key}"] = value
    return out
