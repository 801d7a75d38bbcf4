"""Matplotlib figures of a :class:`~rcusim.results.result.Result`.

Plots follow scikit-learn's Display pattern: a ``*Display`` object is built
from a result (``from_result``), draws itself on an existing or new axes
(``plot(ax=None)``) and keeps what it drew (``lines_``, ``ax_``,
``figure_``) so that a notebook can restyle it afterwards.

matplotlib is imported inside the functions, never at module level, so that
importing rcusim stays cheap and works without a display. Files are written
through a bare :class:`~matplotlib.figure.Figure` on the Agg canvas, which
leaves pyplot's global figure list (and any interactive backend) untouched.
"""

from __future__ import annotations

import os

import numpy as np

from rcusim.plots.axes import agg_figure, legend_beside, new_axes, series_styles
from rcusim.results.digest import FINE_SLOTS, fine_order_statistics, fine_slot_middle
from rcusim.results.histogram import linear_histogram, log2_histogram
from rcusim.results.metrics import cdf_ranks, convert_in_place, us_in_place
from rcusim.results.stats import mean_ci
from rcusim.results.trace import TR, trace_frame

#: Number of buckets the linear histogram aims for when no width is given.
DEFAULT_LINEAR_BUCKETS = 50


def _latencies(result) -> tuple[list, list, list[str], list]:
    """Per variant, in the result's variant order: where its latencies come from, how many
    requests each stands for (None: one), its name and its value range in µs
    (_value_range()). A variant that keeps every row gives its rows (a RequestRows), whose
    latencies become µs only while they are counted (:meth:`LatencyHistogramDisplay._us`),
    and its range from the ends of its CDF (``VariantResult.latency_cdf``) when they are
    positive; one that keeps fewer gives the middles of its log-linear histogram's slots in
    µs (within FINE_RELATIVE_ERROR), with their counts."""
    sources, weights, labels, ranges = [], [], [], []
    for name, variant in result.variants.items():
        if variant.records == "all":
            sources.append(variant.rows)
            weights.append(None)
            _, _, x_us = variant.latency_cdf  # the least and the greatest at its ends
            ranges.append((x_us[0], x_us[0], x_us[-1]) if x_us.size and x_us[0] > 0 else _range_us(variant.rows))
        else:
            fine = _digest_fine(variant)
            slots = np.flatnonzero(fine)
            sources.append(fine_slot_middle(slots) / 1e3)
            weights.append(fine[slots])
            ranges.append(_range_us(sources[-1]))
        labels.append(name)
    return sources, weights, labels, ranges


def _digest_fine(variant) -> np.ndarray:
    """The log-linear histogram of every request of a variant, all primitives together."""
    return sum((d["fine"] for d in variant.digest.values()), np.zeros(FINE_SLOTS, dtype=np.int64))


#: Latencies spanning at least this ratio (two decades) get log2 buckets by default.
LOG2_SPAN = 100.0


def _value_range(a: np.ndarray) -> tuple | None:
    """The least positive (inf: none), least and greatest value of an array, or None if it is
    empty. Masked reductions: no copy of millions of latencies."""
    if not a.size:
        return None
    positive = a > 0
    return (a.min(where=positive, initial=a.max()) if positive.any() else np.inf), a.min(), a.max()


def _spans(ranges) -> bool:
    """spans_decades() of the variants' value ranges (_value_range(), None for an empty one)."""
    ranges = [r for r in ranges if r is not None]
    smallest = min((r[0] for r in ranges), default=np.inf)
    return bool(np.isfinite(smallest) and max(r[2] for r in ranges) >= LOG2_SPAN * smallest)


def _range_us(source) -> tuple | None:
    """_value_range() in µs of latencies in µs, or of a variant's rows' (from their ns)."""
    if isinstance(source, np.ndarray):
        return _value_range(source)
    r = _value_range(source.latency_ns())
    return None if r is None else tuple(v / 1e3 for v in r)


def spans_decades(latencies_us) -> bool:
    """Whether the positive latencies of all variants span two decades or more (then log2
    buckets on a log axis show them; linear buckets would put nearly all in one)."""
    return _spans(_value_range(np.asarray(a)) for a in latencies_us)


class LatencyHistogramDisplay:
    """Request-latency histograms of several variants, overlaid as steps.

    Parameters
    ----------
    latencies_us : sequence of array_like
        One array of latencies in microseconds per variant.
    labels : sequence of str
        Variant names, one per array, shown in the legend.
    log2 : bool, optional
        Use bcc's log2 buckets on a logarithmic x axis (the buckets
        ``funclatency -u`` prints), or linear buckets on a linear axis; by
        default log2 when the latencies span two decades (:func:`spans_decades`).
    bucket_width_us : float, optional
        Bucket width of the linear histogram; by default the span of all
        latencies divided by :data:`DEFAULT_LINEAR_BUCKETS`, rounded up to
        whole microseconds.
    weights : sequence of array_like or None, optional
        Per variant, how many requests each latency stands for (None: one);
        :meth:`from_result` gives them for variants that keep fewer rows than requests.

    Attributes
    ----------
    lines_ : list of matplotlib.patches.StepPatch
        One step outline per variant, set by :meth:`plot`.
    ax_ : matplotlib.axes.Axes
        Axes drawn on.
    figure_ : matplotlib.figure.Figure
        Figure containing ``ax_``.
    """

    def __init__(self, latencies_us, labels, *, log2: bool | None = None, bucket_width_us: float | None = None,
                 weights=None):
        if len(latencies_us) != len(labels):
            raise ValueError(f"{len(latencies_us)} latency arrays but {len(labels)} labels")
        self._set([np.asarray(a, dtype=np.float64).reshape(-1) for a in latencies_us], weights, labels, log2,
                  bucket_width_us)

    def _set(self, sources, weights, labels, log2, bucket_width_us, ranges=None) -> None:
        """Variant i's latencies: sources[i], µs or a variant's rows (see :meth:`_us`); their
        value ranges in µs, unless given, are read once, from the ns of the rows (dividing the
        extremes alone gives the extremes of the divided values)."""
        self._sources = sources
        self._ranges = [_range_us(s) for s in sources] if ranges is None else ranges
        self.weights = [None] * len(sources) if weights is None else list(weights)
        self.labels = list(labels)
        self.log2 = _spans(self._ranges) if log2 is None else log2
        self.bucket_width_us = bucket_width_us

    def _us(self, i: int) -> np.ndarray:
        """Variant i's latencies in µs (float). From a variant's rows they are made anew, in
        the memory of its latencies in ns, one variant at a time: millions of rows are
        never held in µs for every variant at once."""
        source = self._sources[i]
        if isinstance(source, np.ndarray):
            return source
        return us_in_place(source.latency_ns())

    def _whole_us(self, i: int) -> np.ndarray:
        """Variant i's latencies in µs, to be floored to whole µs by the log2 histogram: from
        a variant's rows floored here, in the same memory (truncating a non-negative float
        floors it, as log2_histogram() does)."""
        us = self._us(i)
        if us is self._sources[i]:
            return us
        return convert_in_place(us, np.int64, lambda a, out: np.copyto(out, a, casting="unsafe"))

    @classmethod
    def from_result(cls, result, *, log2: bool | None = None, bucket_width_us: float | None = None):
        """Build the display from the requests of every variant of *result*.

        Parameters
        ----------
        result : rcusim.results.result.Result
            The result to show.
        log2 : bool, optional
            See the class parameters.
        bucket_width_us : float, optional
            See the class parameters.

        Returns
        -------
        LatencyHistogramDisplay
        """
        self = cls.__new__(cls)
        sources, weights, labels, ranges = _latencies(result)
        self._set(sources, weights, labels, log2, bucket_width_us, ranges)
        return self

    def _log2_steps(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Counts and edges per variant in bcc's log2 buckets, on a shared range.

        Values are whole microseconds, as funclatency records them. Bucket
        ``i`` covers ``[2**(i-1), 2**i)`` µs; bucket 1 also holds 0 but is
        drawn from 1 µs, since a log axis has no zero.
        """
        counts = [log2_histogram(self._whole_us(i), w) for i, w in enumerate(self.weights)]
        used = [i for c in counts for i in np.flatnonzero(c)]
        if not used:
            return [(np.zeros(0), np.array([1.0])) for _ in counts]
        lo, hi = min(used), max(used)
        edges = np.array([float(1 << (i - 1)) for i in range(lo, hi + 2)])
        return [(c[lo : hi + 1], edges) for c in counts]

    def _linear_steps(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Counts and edges per variant in linear buckets shared by all variants."""
        ranges = [r for r in self._ranges if r is not None]
        if not ranges:
            return [(np.zeros(0), np.array([0.0])) for _ in self._sources]
        lo = min(r[1] for r in ranges)
        hi = max(r[2] for r in ranges)
        width = self.bucket_width_us
        if width is None:
            width = max(1.0, float(np.ceil((hi - lo) / DEFAULT_LINEAR_BUCKETS)))
        start = np.floor(lo / width) * width
        n = int(np.floor((hi - start) / width)) + 1
        edges = start + width * np.arange(n + 1, dtype=np.float64)
        steps = []
        for i, w in enumerate(self.weights):
            _, c = linear_histogram(self._us(i), width, start=start, weights=w)
            # Pad to the shared range so every variant is drawn on the same edges.
            steps.append((np.pad(c, (0, n - c.size)), edges))
        return steps

    def plot(self, ax=None):
        """Draw one step histogram per variant.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; a new figure is made if not given.

        Returns
        -------
        LatencyHistogramDisplay
            ``self``, with ``lines_``, ``ax_`` and ``figure_`` set.
        """
        ax = new_axes(ax)
        steps = self._log2_steps() if self.log2 else self._linear_steps()
        lines = []
        for i, ((counts, edges), label, style) in enumerate(zip(steps, self.labels, series_styles())):
            lines.append(ax.stairs(counts, edges, label=label, linewidth=2.0 if i == 0 else 1.5, **style))
        if self.log2:
            ax.set_xscale("log")
        ax.set_xlabel("latency (µs)")
        ax.set_ylabel("requests")
        if self.labels:
            ax.legend()
        self.lines_, self.ax_, self.figure_ = lines, ax, ax.figure
        return self


def order_statistics(result) -> list:
    """Per variant, in order: ``(label, rank, n, x_us)``, up to CDF_POINTS ranks of its n
    latencies (:func:`~rcusim.results.metrics.cdf_ranks`, min and max included) and the
    latencies at them in µs, or None for a variant without requests. With every row kept
    they are exact and come from the read that made the variant's statistics
    (``VariantResult.latency_cdf``); else from its digest's log-linear histogram."""
    out = []
    for label, variant in result.variants.items():
        n = variant.request_count if variant.records != "all" else len(variant.rows)
        if n == 0:
            out.append(None)
            continue
        if variant.records == "all":
            _, rank, x_us = variant.latency_cdf
        else:
            rank = cdf_ranks(n)
            x_us = fine_order_statistics(_digest_fine(variant), rank) / 1e3
        out.append((label, rank, n, x_us))
    return out


def _order_statistic_steps(ax, stats, y_of) -> None:
    """One step line per variant through its order statistics (order_statistics()), at
    heights y_of(rank, n), on a log latency axis."""
    for entry, style in zip(stats, series_styles()):
        if entry is not None:
            label, rank, n, x_us = entry
            ax.step(x_us, y_of(rank, n), where="post", label=label, **style)
    ax.set_xscale("log")
    ax.set_xlabel("latency (µs)")


def plot_latency_cdf(result, ax=None, stats=None):
    """Empirical CDF of request latency, one line per variant.

    Parameters
    ----------
    result : rcusim.results.result.Result
        The result to show.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made if not given.
    stats : list, optional
        The result's :func:`order_statistics`, if already computed.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    ax = new_axes(ax)
    _order_statistic_steps(ax, stats or order_statistics(result), lambda rank, n: (rank + 1) / n)
    ax.set_ylabel("fraction of requests")
    ax.set_ylim(0.0, 1.0)
    if ax.get_lines():
        ax.legend(loc="lower right")
    return ax


def plot_latency_ccdf(result, ax=None, stats=None):
    """Complementary CDF (fraction of requests slower than x), log-log, one line per variant:
    the tail that a histogram's linear count axis hides.

    Parameters
    ----------
    result : rcusim.results.result.Result
        The result to show.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made if not given.
    stats : list, optional
        The result's :func:`order_statistics`, if already computed.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    ax = new_axes(ax)
    # P(latency >= x): 1 at the minimum, 1/n at the maximum (never 0 on a log axis).
    _order_statistic_steps(ax, stats or order_statistics(result), lambda rank, n: (n - rank) / n)
    ax.set_yscale("log")
    ax.set_ylabel("fraction of requests at least this slow")
    if ax.get_lines():
        ax.legend(loc="lower left")
    return ax


def save_latency_histogram(result, path: str | os.PathLike, *, log2: bool | None = None) -> None:
    """Write the overlaid latency histogram of *result*, with its CDF and its complementary
    CDF (log-log, for the tail) beside it, as a PNG file.

    Parameters
    ----------
    result : rcusim.results.result.Result
        The result to show.
    path : str or path-like
        File to write.
    log2 : bool, optional
        bcc's log2 buckets, or linear ones; by default chosen from the data (:func:`spans_decades`).
    """
    fig, (ax, ax_cdf, ax_ccdf) = agg_figure(ncols=3, figsize=(18, 5))
    LatencyHistogramDisplay.from_result(result, log2=log2).plot(ax=ax)
    ax.set_title(f"{result.scenario_name}: request latency (seed {result.seed})")
    stats = order_statistics(result)
    plot_latency_cdf(result, ax=ax_cdf, stats=stats)
    ax_cdf.set_title("cumulative distribution")
    ax_cdf.grid(True, which="both", alpha=0.3)
    plot_latency_ccdf(result, ax=ax_ccdf, stats=stats)
    ax_ccdf.set_title("tail: complementary distribution")
    ax_ccdf.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)


#: Bucket width of cyclictest's histogram (``cyclictest -h``): one microsecond.
CYCLICTEST_BUCKET_US = 1.0


def save_sched_latency_histogram(result, path: str | os.PathLike) -> None:
    """Write the scheduling latencies of the rt_latency_probe of *result* (its ``sched_latency``
    tables) as cyclictest's histogram is plotted: 1 µs buckets, samples on a log axis, one line
    per variant, as a PNG file."""
    frames = {n: v.tables["sched_latency"] for n, v in result.variants.items() if "sched_latency" in v.tables}
    fig, ax = agg_figure(figsize=(9, 5))
    LatencyHistogramDisplay([f["latency_ns"].to_numpy() / 1e3 for f in frames.values()], list(frames),
                            log2=False, bucket_width_us=CYCLICTEST_BUCKET_US).plot(ax=ax)
    ax.set_yscale("log")
    ax.set_ylabel("samples")
    ax.set_title(f"{result.scenario_name}: real-time probe's scheduling latency (seed {result.seed})")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)


# ---------------------------------------------------------------------------
# Percentiles against a swept parameter (rcusim.commands.sweep tables).
# ---------------------------------------------------------------------------
class PercentileDisplay:
    """Latency percentiles against a swept parameter, mean over seeds with a 95 % CI.

    Parameters
    ----------
    table : pandas.DataFrame
        A sweep table (:func:`rcusim.commands.sweep.run_sweep`): one row per point,
        variant and seed, with the swept parameter's column and
        ``latency_us.<stat>`` columns.
    x : str
        The swept parameter on the x axis (a column of `table`).
    stats : sequence of str, default ("p50", "p99")
        Which latency statistics to draw.
    by : sequence of str, optional
        Further columns whose combinations get their own lines (default: the
        variant and every other swept parameter).

    Attributes
    ----------
    lines_ : list of matplotlib.container.ErrorbarContainer
    ax_, figure_
    """

    def __init__(self, table, x: str, *, stats=("p50", "p99"), by=None):
        if x not in table.columns:
            raise ValueError(f"the table has no column {x!r}")
        self.table = table
        self.x = x
        self.stats = list(stats)
        self.by = [c for c in (by if by is not None else ["variant"]) if c in table.columns and c != x]

    @classmethod
    def from_sweep(cls, table, x: str, *, stats=("p50", "p99"), params=()):
        """Build from a sweep table; `params` are the swept keys (each other one splits the lines)."""
        return cls(table, x, stats=stats, by=["variant"] + [p for p in params if p != x])

    def plot(self, ax=None, *, log_x: bool | None = None, log_y: bool = True):
        ax = new_axes(ax)
        lines = []
        styles = series_styles()
        groups = self.table.groupby(self.by, sort=False, observed=True) if self.by else [((), self.table)]
        for key, frame in groups:
            key = key if isinstance(key, tuple) else (key,)
            label_base = ", ".join(f"{c}={k}" if c != "variant" else str(k) for c, k in zip(self.by, key))
            for stat in self.stats:
                col = f"latency_us.{stat}"
                rows = [(xv, *mean_ci(g[col].to_numpy(dtype=float)))
                        for xv, g in frame.groupby(self.x, sort=True)]
                if not rows:
                    continue
                xs, mean, half = (np.array(v, dtype=float) for v in zip(*rows))
                label = f"{label_base} {stat}".strip()
                lines.append(ax.errorbar(xs, mean, yerr=half, marker="o", capsize=3, label=label, **next(styles)))
        numeric = np.issubdtype(self.table[self.x].dtype, np.number)
        if log_x is None:
            xs = self.table[self.x].to_numpy()
            log_x = bool(numeric and xs.min() > 0 and xs.max() / xs.min() >= 16)
        if log_x:
            ax.set_xscale("log", base=2)
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel(self.x)
        ax.set_ylabel("latency (µs), mean over seeds ± 95 % CI")
        ax.grid(True, which="both", alpha=0.3)
        if lines:
            legend_beside(ax, fontsize="small")
        self.lines_, self.ax_, self.figure_ = lines, ax, ax.figure
        return self


def save_percentiles(table, x: str, path, *, params=(), title: str = "") -> None:
    """Write a :class:`PercentileDisplay` of a sweep table as a PNG file."""
    fig, ax = agg_figure(figsize=(12, 5.5))
    PercentileDisplay.from_sweep(table, x, params=params).plot(ax=ax)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)


# ---------------------------------------------------------------------------
# Generic time series (memory footprint, queue lengths, waiters over time).
# ---------------------------------------------------------------------------
class TimeSeriesDisplay:
    """One or more step series against simulated time.

    Parameters
    ----------
    series : mapping of str to (t_ns, values)
        Per label, the times (ns) at which the value changes and the values
        from then on.
    ylabel : str
        What the values are, with their unit, e.g. ``"memory pinned (MiB)"``.
    time_unit : {"s", "ms", "us"}, default "ms"
        Unit of the x axis.

    Attributes
    ----------
    lines_ : list of matplotlib.lines.Line2D
    ax_, figure_
    """

    _SCALE = {"s": 1e9, "ms": 1e6, "us": 1e3}
    _LABEL = {"s": "s", "ms": "ms", "us": "µs"}

    def __init__(self, series, ylabel: str, *, time_unit: str = "ms"):
        if time_unit not in self._SCALE:
            raise ValueError(f"time_unit must be one of {', '.join(self._SCALE)}")
        self.series = {k: (np.asarray(t, dtype=np.int64), np.asarray(v)) for k, (t, v) in series.items()}
        self.ylabel = ylabel
        self.time_unit = time_unit

    def plot(self, ax=None):
        ax = new_axes(ax)
        scale = self._SCALE[self.time_unit]
        lines = []
        for label, (t, v) in self.series.items():
            (line,) = ax.step(t / scale, v, where="post", label=label)
            lines.append(line)
        ax.set_xlabel(f"simulated time ({self._LABEL[self.time_unit]})")
        ax.set_ylabel(self.ylabel)
        ax.grid(True, alpha=0.3)
        if len(lines) > 1:
            ax.legend()
        self.lines_, self.ax_, self.figure_ = lines, ax, ax.figure
        return self


def waiters_over_time(result) -> dict:
    """Tasks inside ``synchronize_rcu*()`` over time, per variant, for :class:`TimeSeriesDisplay`."""
    series = {}
    for name, v in result.variants.items():
        t0 = v.requests["t_start_ns"].to_numpy()
        t1 = v.requests["t_end_ns"].to_numpy()
        t = np.concatenate([t0, t1])
        step = np.concatenate([np.ones(t0.size, np.int64), -np.ones(t1.size, np.int64)])
        order = np.argsort(t, kind="stable")
        series[name] = (t[order], np.cumsum(step[order]))
    return series


# ---------------------------------------------------------------------------
# Grace-period timeline of a traced run.
# ---------------------------------------------------------------------------
class GpTimelineDisplay:
    """Which CPU reported its quiescent state when, IPIs and callback batches, per GP.

    Built from a traced variant (``rcusim run --trace``, or
    ``run_scenario(..., trace_limit=N)``): grace periods are shaded bands
    (normal in blue, expedited in orange), each CPU a row with its
    quiescent-state reports (dots by the CPU, crosses found idle by an FQS
    scan), IPI handlers (triangles) and callback batches (bars).

    Attributes
    ----------
    ax_, figure_
    """

    def __init__(self, variant_result, *, max_gps: int = 20):
        self.frame = trace_frame(variant_result)
        self.name = variant_result.name
        self.TR = TR
        self.max_gps = max_gps

    @classmethod
    def from_result(cls, result, variant: str | None = None, *, max_gps: int = 20):
        name = variant if variant is not None else next(iter(result.variants))
        return cls(result.variants[name], max_gps=max_gps)

    def plot(self, ax=None):
        ax = new_axes(ax)
        f = self.frame
        ev = f["event"].astype(str)
        # The first max_gps grace periods (normal or expedited) set the window.
        ends = f[ev.isin(["gp_end", "exp_end"])]["t_ns"].to_numpy()
        t_max = ends[min(self.max_gps, ends.size) - 1] if ends.size else (f["t_ns"].max() if len(f) else 0)
        f = f[f["t_ns"] <= t_max]
        ev = f["event"].astype(str)
        us = f["t_ns"].to_numpy() / 1e3
        for start, end, color in (("gp_start", "gp_end", "tab:blue"), ("exp_start", "exp_end", "tab:orange")):
            t0 = us[(ev == start).to_numpy()]
            t1 = us[(ev == end).to_numpy()]
            for k, (a, b) in enumerate(zip(t0, t1)):
                # Alternate shades so that back-to-back grace periods stay apart.
                ax.axvspan(a, b, color=color, alpha=0.08 if k % 2 else 0.2, lw=0)
        qs = (ev == "qs").to_numpy()
        cpu = f["cpu"].to_numpy()
        for how, marker, color, label in ((0, "o", "tab:green", "QS reported by the CPU"),
                                          (1, "x", "tab:gray", "QS: idle, found by FQS"),
                                          (2, "D", "tab:olive", "expedited QS")):
            sel = qs & (f["arg"].to_numpy() == how)
            if sel.any():
                ax.scatter(us[sel], cpu[sel], s=16, marker=marker, color=color, label=label)
        ipi = (ev == "ipi_handler").to_numpy()
        if ipi.any():
            ax.scatter(us[ipi], cpu[ipi], s=18, marker="^", color="tab:red", label="IPI handler")
        b0 = f[(ev == "cb_batch_start").to_numpy()]
        b1 = f[(ev == "cb_batch_end").to_numpy()]
        for cpu, g0 in b0.groupby("cpu"):
            g1 = b1[b1["cpu"] == cpu]
            n = min(len(g0), len(g1))
            spans = [(a / 1e3, (b - a) / 1e3) for a, b in zip(g0["t_ns"].to_numpy()[:n], g1["t_ns"].to_numpy()[:n])]
            ax.broken_barh(spans, (cpu - 0.3, 0.6), color="tab:purple", alpha=0.6)
        if len(b0):
            ax.plot([], [], color="tab:purple", lw=6, alpha=0.6, label="callback batch")
        ax.set_xlabel("simulated time (µs)")
        ax.set_ylabel("CPU")
        ax.set_title(f"{self.name}: grace periods (blue: normal, orange: expedited)")
        ax.legend(fontsize="small", loc="upper right")
        self.ax_, self.figure_ = ax, ax.figure
        return self


def save_gp_timeline(result, path) -> None:
    """Write a :class:`GpTimelineDisplay` per traced variant, one panel each, as a PNG file."""
    names = [n for n, v in result.variants.items() if v.trace is not None]
    fig, axes = agg_figure(nrows=len(names), figsize=(12, 4 * len(names)))
    for name, ax in zip(names, np.atleast_1d(axes)):
        GpTimelineDisplay.from_result(result, name).plot(ax=ax)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
