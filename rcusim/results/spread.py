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

__all__ = ["Boots", "read_boots", "figure_of", "ratio_spread", "SPREAD_KEYS", "RESAMPLES", "LEVELS"]

#: Draws of the bootstrap, and the percentiles of the ratio it reports (a 90 % range).
RESAMPLES = 1000
LEVELS = (5.0, 95.0)

#: The figures a bootstrap over boots can recompute from latencies.parquet and gps.parquet, by
#: the keys of compare's FIGURES.
SPREAD_KEYS = ("latency_us.mean", "latency_us.p50", "latency_us.p99", "latency_us.max", "grace_periods",
               "expedited_grace_periods", "gps:mean_length_us", "memory_footprint_mb", "batches", "total_time_ms")

#: The rcuscale kfree figures among them, each the mean of one number per boot (the summary's
#: ``per_boot``), by the summary key it comes from and the factor to the figure's unit.
PER_BOOT_KEYS = {"memory_footprint_mb": ("memory_footprint_mb", 1.0), "batches": ("batches", 1.0),
                 "total_time_ms": ("total_time_ns", 1e-6)}


@dataclass(frozen=True)
class Boots:
    """One variant's rows, boot by boot: its calls' latencies (ns), its normal GPs' lengths (ns),
    its count of expedited GPs, and its summary's numbers kept one per boot (``per_boot``:
    rcuscale's kfree figures), by summary key."""

    latency_ns: tuple[np.ndarray, ...]
    gp_ns: tuple[np.ndarray, ...]
    expedited: np.ndarray
    per_boot: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.latency_ns)


def read_boots(directory: Path, variant: str, per_boot: dict | None = None) -> Boots | None:
    """A variant's rows by boot from a results directory's latencies.parquet and gps.parquet
    (their ``boot`` column; a result without one is a single boot), with its summary's
    `per_boot` numbers; None without both files."""
    import pandas as pd

    paths = [directory / "latencies.parquet", directory / "gps.parquet"]
    if not all(p.is_file() for p in paths):
        return None
    lat, gps = (pd.read_parquet(p) for p in paths)
    lat, gps = (f[f["variant"].astype(str) == variant] for f in (lat, gps))
    boots = sorted(set(lat["boot"]) | set(gps["boot"])) if "boot" in lat and "boot" in gps else [None]

    def of(frame, boot):
        return frame if boot is None else frame[frame["boot"] == boot]

    latency = tuple((of(lat, k)["t_end_ns"] - of(lat, k)["t_start_ns"]).to_numpy(np.int64) for k in boots)
    normal = gps[~gps["expedited"].astype(bool)]
    gp = tuple((of(normal, k)["t_end_ns"] - of(normal, k)["t_start_ns"]).to_numpy(np.int64) for k in boots)
    expedited = np.array([int(of(gps, k)["expedited"].astype(bool).sum()) for k in boots])
    kept = {key: np.asarray(values, dtype=float) for key, values in (per_boot or {}).items()
            if len(values) == len(boots) and None not in values}
    return Boots(latency, gp, expedited, kept)


def figure_of(boots: Boots, pick: np.ndarray, key: str) -> float:
    """Figure `key` (SPREAD_KEYS) of the boots at indices `pick`, pooled as the summary pools
    them (percentiles by linear interpolation; counts per boot; kfree figures the mean of
    their boots'); NaN where it has no rows."""
    if key in PER_BOOT_KEYS:
        source, unit = PER_BOOT_KEYS[key]
        values = boots.per_boot.get(source)
        return float("nan") if values is None else float(values[pick].mean()) * unit
    if key in ("grace_periods", "expedited_grace_periods", "gps:mean_length_us"):
        if key == "expedited_grace_periods":
            return float(boots.expedited[pick].mean())
        counts = np.array([len(boots.gp_ns[k]) for k in pick])
        if key == "grace_periods":
            return float(counts.mean())
        total = sum(float(boots.gp_ns[k].sum()) for k in pick)
        return total / counts.sum() / 1e3 if counts.sum() else float("nan")
    lat = np.concatenate([boots.latency_ns[k] for k in pick])
    if lat.size == 0:
        return float("nan")
    stat = key.split(".")[1]
    if stat == "mean":
        return float(lat.mean()) / 1e3
    if stat == "max":
        return float(lat.max()) / 1e3
    return float(np.percentile(lat, float(stat[1:]), method="linear")) / 1e3


def ratio_spread(a: Boots, b: Boots, key: str, seed: int = 0) -> tuple[float, float] | None:
    """The 90 % range (LEVELS) of B's figure over A's with each side's boots drawn again with
    replacement, RESAMPLES times (seeded: the same range each time); None where neither side
    has two boots or A's figure is 0 in some draw."""
    if len(a) < 2 and len(b) < 2:
        return None
    rng = np.random.default_rng(seed)
    ratios = np.empty(RESAMPLES)
    for i in range(RESAMPLES):
        x = figure_of(a, rng.integers(len(a), size=len(a)), key)
        y = figure_of(b, rng.integers(len(b), size=len(b)), key)
        if not x:
            return None
        ratios[i] = y / x
    if np.isnan(ratios).any():
        return None
    low, high = np.percentile(ratios, LEVELS)
    return float(low), float(high)
