"""How far a figure pooled over boots (or runs) moves with the boots drawn: a bootstrap over
whole boots, for ``compare --figures``.

A boot of the real kernel is one draw of everything that varies between boots (the host's
speed, the guest's layout, where the first callers land); its calls are not independent of
each other. So the spread of a pooled figure comes from resampling whole boots with
replacement, each side apart (A's boots, B's runs), and computing B's figure over A's on each
draw. The range holds the ratio a second set of as many boots and runs would give, to the
extent the boots at hand sample what varies between boots.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["Boots", "read_rows", "read_boots", "figure_of", "pooled", "ratio_spread", "SPREAD_KEYS", "RESAMPLES", "LEVELS"]

#: Draws of the bootstrap, and the percentiles of the ratio it reports (a 90 % range).
RESAMPLES = 1000
LEVELS = (5.0, 95.0)

#: The figures a bootstrap over boots can recompute from latencies.parquet and gps.parquet, by
#: the keys of compare's FIGURES.
SPREAD_KEYS = ("latency_us.mean", "latency_us.p50", "latency_us.p99", "latency_us.max", "grace_periods",
               "expedited_grace_periods", "gps:mean_length_us", "memory_footprint_mb", "batches", "total_time_ms")

#: The rcuscale kfree figures among them, each the mean of one number per boot (the summary's
#: ``per_boot``) rounded to a whole number as the summary rounds it, by the summary key it
#: comes from and the factor to the figure's unit.
PER_BOOT_KEYS = {"memory_footprint_mb": ("memory_footprint_mb", 1.0), "batches": ("batches", 1.0),
                 "total_time_ms": ("total_time_ns", 1e-6)}


@dataclass(frozen=True)
class Boots:
    """One variant's rows, boot by boot: its calls' latencies (ns; None where the rows are not
    every call's), its normal GPs' lengths (ns), its count of expedited GPs, and its summary's
    numbers kept one per boot (``per_boot``: rcuscale's kfree figures), by summary key."""

    latency_ns: tuple[np.ndarray, ...] | None
    gp_ns: tuple[np.ndarray, ...]
    expedited: np.ndarray
    per_boot: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.gp_ns)


def _read(path: Path, columns: list[str]):
    """A parquet file's `columns` (and ``boot`` where it has one), its variants as strings."""
    import pyarrow.parquet as pq

    names = set(pq.read_schema(path).names)
    frame = pq.read_table(path, columns=[c for c in columns + ["boot"] if c in names]).to_pandas()
    frame["variant"] = frame["variant"].astype(str)
    return frame


def read_rows(directory: Path) -> tuple | None:
    """A results directory's calls and GPs (latencies.parquet, gps.parquet): the columns the
    figures need, read once for all its variants; None without both files."""
    paths = [directory / "latencies.parquet", directory / "gps.parquet"]
    if not all(p.is_file() for p in paths):
        return None
    return (_read(paths[0], ["variant", "t_start_ns", "t_end_ns"]),
            _read(paths[1], ["variant", "t_start_ns", "t_end_ns", "expedited"]))


def read_boots(rows: tuple | None, variant: str, metrics: dict) -> Boots | None:
    """A variant's rows by boot, of a directory's `rows` (read_rows(); their ``boot`` column,
    numbered from 0; a result without one is a single boot), with its summary `metrics`'
    ``per_boot`` numbers. A boot that left no row still counts. The latencies are left out
    (None) where the rows are not every call the summary counts (``run.records`` other than
    all). None without rows or without a boot."""
    if rows is None:
        return None
    lat, gps = (f[f["variant"] == variant] for f in rows)
    per_boot = {key: values for key, values in (metrics.get("per_boot") or {}).items() if None not in values}
    if "boot" in lat and "boot" in gps:
        n = max([int(f["boot"].max()) + 1 for f in (lat, gps) if len(f)] + [len(v) for v in per_boot.values()],
                default=0)
        lat_of = dict(list(lat.groupby("boot")))
        gps_of = dict(list(gps.groupby("boot")))
    else:
        n, lat_of, gps_of = 1, {0: lat}, {0: gps}
    if n == 0:
        return None
    empty_lat, empty_gps = lat.iloc[:0], gps.iloc[:0]
    lats = [lat_of.get(k, empty_lat) for k in range(n)]
    gpss = [gps_of.get(k, empty_gps) for k in range(n)]
    every_call = sum(len(f) for f in lats) == (metrics.get("latency_us") or {}).get("count", 0)
    latency = (tuple((f["t_end_ns"] - f["t_start_ns"]).to_numpy(np.int64) for f in lats) if every_call else None)
    normal = [f[~f["expedited"].astype(bool)] for f in gpss]
    gp = tuple((f["t_end_ns"] - f["t_start_ns"]).to_numpy(np.int64) for f in normal)
    expedited = np.array([int(f["expedited"].astype(bool).sum()) for f in gpss])
    kept = {key: np.asarray(values, dtype=float) for key, values in per_boot.items() if len(values) == n}
    return Boots(latency, gp, expedited, kept)


def figure_of(boots: Boots, pick: np.ndarray, key: str) -> float:
    """Figure `key` (SPREAD_KEYS) of the boots at indices `pick`, pooled as the summary pools
    them (percentiles by linear interpolation; counts per boot; kfree figures the rounded
    mean of their boots'); NaN where it has no rows."""
    if key in PER_BOOT_KEYS:
        source, unit = PER_BOOT_KEYS[key]
        values = boots.per_boot.get(source)
        return float("nan") if values is None else round(float(values[pick].mean())) * unit
    if key in ("grace_periods", "expedited_grace_periods", "gps:mean_length_us"):
        if key == "expedited_grace_periods":
            return float(boots.expedited[pick].mean())
        counts = np.array([len(boots.gp_ns[k]) for k in pick])
        if key == "grace_periods":
            return float(counts.mean())
        total = sum(float(boots.gp_ns[k].sum()) for k in pick)
        return total / counts.sum() / 1e3 if counts.sum() else float("nan")
    if boots.latency_ns is None:
        return float("nan")
    lat = np.concatenate([boots.latency_ns[k] for k in pick])
    if lat.size == 0:
        return float("nan")
    stat = key.split(".")[1]
    if stat == "mean":
        return float(lat.mean()) / 1e3
    if stat == "max":
        return float(lat.max()) / 1e3
    return float(np.percentile(lat, float(stat[1:]), method="linear")) / 1e3


def pooled(boots: Boots | None, key: str) -> float | None:
    """Figure `key` of all the boots, as the summary pools it; None where it has no rows."""
    if boots is None:
        return None
    x = figure_of(boots, np.arange(len(boots)), key)
    return None if np.isnan(x) else x


def ratio_spread(a: Boots, b: Boots, key: str, seed: int = 0) -> tuple[float, float] | None:
    """The 90 % range (LEVELS) of B's figure over A's with each side's boots drawn again with
    replacement, RESAMPLES times (seeded: the same range each time); None where neither side
    has two boots, a figure has no rows, or A's figure is 0 in some draw (a count that most
    boots leave at 0)."""
    if len(a) < 2 and len(b) < 2:
        return None
    rng = np.random.default_rng(seed)
    ratios = np.empty(RESAMPLES)
    for i in range(RESAMPLES):
        x = figure_of(a, rng.integers(len(a), size=len(a)), key)
        y = figure_of(b, rng.integers(len(b), size=len(b)), key)
        if not x or np.isnan(x) or np.isnan(y):
            return None
        ratios[i] = y / x
    low, high = np.percentile(ratios, LEVELS)
    return float(low), float(high)
