"""Figures of rcusim results.

Plots follow scikit-learn's Display pattern: a ``*Display`` object is built
from a result (``from_result``), draws itself on an existing or new axes
(``plot(ax=None)``) and keeps what it drew (``lines_``, ``ax_``,
``figure_``) so that a notebook can restyle it afterwards.
:func:`save_result_figures` writes the figures of a results directory.
"""

from __future__ import annotations

import os

from rcusim.plots.kfree import KvfreeMemoryDisplay, save_memory_plot
from rcusim.plots.latency import (GpTimelineDisplay, LatencyHistogramDisplay, PercentileDisplay, TimeSeriesDisplay,
                                  plot_latency_ccdf, plot_latency_cdf, save_gp_timeline, save_latency_histogram,
                                  save_percentiles, save_sched_latency_histogram, waiters_over_time)
from rcusim.plots.membarrier import MembarrierDisplay, save_membarrier_plot

__all__ = [
    "GpTimelineDisplay", "KvfreeMemoryDisplay", "LatencyHistogramDisplay", "MembarrierDisplay", "PercentileDisplay",
    "TimeSeriesDisplay", "plot_latency_ccdf", "plot_latency_cdf", "save_gp_timeline", "save_latency_histogram",
    "save_memory_plot", "save_membarrier_plot", "save_percentiles", "save_result_figures",
    "save_sched_latency_histogram", "waiters_over_time",
]


def save_result_figures(result, outdir: str | os.PathLike, *, log2: bool | None = None) -> None:
    """Write the figures of *result* into *outdir*.

    ``latency_hist.png`` (variants overlaid: histogram, in log2 buckets when the
    latencies span two decades unless `log2` says otherwise, CDF and
    complementary CDF) for RCU variants with requests; ``gp_timeline.png`` for a
    traced run; ``membarrier.png`` (seconds per call count against T, the
    seed's tables as markers), ``kvfree_memory.png`` (memory not yet freed
    over time, one line per variant) and ``sched_latency.png`` (an
    rt_latency_probe's scheduling latencies in cyclictest's histogram) for those tables.
    """
    if any(v.rcu and v.request_count for v in result.variants.values()):
        save_latency_histogram(result, os.path.join(outdir, "latency_hist.png"), log2=log2)
    if any(v.trace is not None for v in result.variants.values()):
        save_gp_timeline(result, os.path.join(outdir, "gp_timeline.png"))
    memory = {n: v.tables["kvfree_memory"] for n, v in result.variants.items() if "kvfree_memory" in v.tables}
    if memory:
        save_memory_plot(memory, os.path.join(outdir, "kvfree_memory.png"))
    if "sched_latency" in result.tables:
        save_sched_latency_histogram(result, os.path.join(outdir, "sched_latency.png"))
    if "membarrier" in result.tables:
        sweep = result.tables["membarrier"].astype({"variant": str})
        save_membarrier_plot(sweep, os.path.join(outdir, "membarrier.png"),
                             title=f"{result.scenario_name}: sys_membarrier() (seed {result.seed})")
