"""Matplotlib figures of a :class:`~rcusim.result.Result`.

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

from .histogram import linear_histogram, log2_histogram

#: Number of buckets the linear histogram aims for when no width is given.
DEFAULT_LINEAR_BUCKETS = 50


def _latencies_us(result) -> tuple[list[np.ndarray], list[str]]:
    """Per-variant latencies in µs (float), in the result's variant order."""
    arrays, labels = [], []
    for name, variant in result.variants.items():
        arrays.append(variant.requests["latency_ns"].to_numpy().astype(np.int64) / 1e3)
        labels.append(name)
    return arrays, labels


def _new_axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
    return ax


class LatencyHistogramDisplay:
    """Request-latency histograms of several variants, overlaid as steps.

    Parameters
    ----------
    latencies_us : sequence of array_like
        One array of latencies in microseconds per variant.
    labels : sequence of str
        Variant names, one per array, shown in the legend.
    log2 : bool, default True
        Use bcc's log2 buckets on a logarithmic x axis (the buckets
        ``funclatency -u`` prints); otherwise linear buckets on a linear axis.
    bucket_width_us : float, optional
        Bucket width of the linear histogram; by default the span of all
        latencies divided by :data:`DEFAULT_LINEAR_BUCKETS`, rounded up to
        whole microseconds.

    Attributes
    ----------
    lines_ : list of matplotlib.patches.StepPatch
        One step outline per variant, set by :meth:`plot`.
    ax_ : matplotlib.axes.Axes
        Axes drawn on.
    figure_ : matplotlib.figure.Figure
        Figure containing ``ax_``.
    """

    def __init__(self, latencies_us, labels, *, log2: bool = True, bucket_width_us: float | None = None):
        if len(latencies_us) != len(labels):
            raise ValueError(f"{len(latencies_us)} latency arrays but {len(labels)} labels")
        self.latencies_us = [np.asarray(a, dtype=np.float64).reshape(-1) for a in latencies_us]
        self.labels = list(labels)
        self.log2 = log2
        self.bucket_width_us = bucket_width_us

    @classmethod
    def from_result(cls, result, *, log2: bool = True, bucket_width_us: float | None = None):
        """Build the display from the requests of every variant of *result*.

        Parameters
        ----------
        result : rcusim.result.Result
            The result to show.
        log2 : bool, default True
            See the class parameters.
        bucket_width_us : float, optional
            See the class parameters.

        Returns
        -------
        LatencyHistogramDisplay
        """
        arrays, labels = _latencies_us(result)
        return cls(arrays, labels, log2=log2, bucket_width_us=bucket_width_us)

    def _log2_steps(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Counts and edges per variant in bcc's log2 buckets, on a shared range.

        Values are whole microseconds, as funclatency records them. Bucket
        ``i`` covers ``[2**(i-1), 2**i)`` µs; bucket 1 also holds 0 but is
        drawn from 1 µs, since a log axis has no zero.
        """
        counts = [log2_histogram(np.floor(a)) for a in self.latencies_us]
        used = [i for c in counts for i in np.flatnonzero(c)]
        if not used:
            return [(np.zeros(0), np.array([1.0])) for _ in counts]
        lo, hi = min(used), max(used)
        edges = np.array([float(1 << (i - 1)) for i in range(lo, hi + 2)])
        return [(c[lo : hi + 1], edges) for c in counts]

    def _linear_steps(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Counts and edges per variant in linear buckets shared by all variants."""
        nonempty = [a for a in self.latencies_us if a.size]
        if not nonempty:
            return [(np.zeros(0), np.array([0.0])) for _ in self.latencies_us]
        lo = min(a.min() for a in nonempty)
        hi = max(a.max() for a in nonempty)
        width = self.bucket_width_us
        if width is None:
            width = max(1.0, float(np.ceil((hi - lo) / DEFAULT_LINEAR_BUCKETS)))
        start = np.floor(lo / width) * width
        n = int(np.floor((hi - start) / width)) + 1
        edges = start + width * np.arange(n + 1, dtype=np.float64)
        steps = []
        for a in self.latencies_us:
            _, c = linear_histogram(a, width, start=start)
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
        ax = _new_axes(ax)
        steps = self._log2_steps() if self.log2 else self._linear_steps()
        lines = []
        for (counts, edges), label in zip(steps, self.labels):
            lines.append(ax.stairs(counts, edges, label=label, linewidth=1.5))
        if self.log2:
            ax.set_xscale("log")
        ax.set_xlabel("latency (µs)")
        ax.set_ylabel("requests")
        if self.labels:
            ax.legend()
        self.lines_, self.ax_, self.figure_ = lines, ax, ax.figure
        return self


def plot_latency_cdf(result, ax=None):
    """Empirical CDF of request latency, one line per variant.

    Parameters
    ----------
    result : rcusim.result.Result
        The result to show.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made if not given.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    ax = _new_axes(ax)
    arrays, labels = _latencies_us(result)
    for lat, label in zip(arrays, labels):
        if lat.size == 0:
            continue
        x = np.sort(lat)
        y = np.arange(1, x.size + 1) / x.size
        ax.step(x, y, where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("latency (µs)")
    ax.set_ylabel("fraction of requests")
    ax.set_ylim(0.0, 1.0)
    if labels:
        ax.legend()
    return ax


def save_latency_histogram(result, path: str | os.PathLike) -> None:
    """Write the overlaid log2 latency histogram of *result* as a PNG file.

    Parameters
    ----------
    result : rcusim.result.Result
        The result to show.
    path : str or path-like
        File to write.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    LatencyHistogramDisplay.from_result(result).plot(ax=ax)
    ax.set_title(f"{result.scenario_name}: request latency (seed {result.seed})")
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)


def save_table_plots(result, outdir: str | os.PathLike) -> None:
    """Write the figure of each mechanism-specific table of *result* into *outdir*.

    ``membarrier`` → ``membarrier.png`` (seconds per call count against T,
    the seed's tables as markers); ``kvfree_memory`` → ``kvfree_memory.png``
    (memory not yet freed over time, one line per variant).
    """
    from .plots_kfree import save_memory_plot
    from .plots_membarrier import save_membarrier_plot

    tables = result.tables
    memory = {n: v.tables["kvfree_memory"] for n, v in result.variants.items() if "kvfree_memory" in v.tables}
    if memory:
        save_memory_plot(memory, os.path.join(outdir, "kvfree_memory.png"))
    if "membarrier" in tables:
        sweep = tables["membarrier"].astype({"variant": str})
        save_membarrier_plot(sweep, os.path.join(outdir, "membarrier.png"),
                             title=f"{result.scenario_name}: sys_membarrier() (seed {result.seed})")
