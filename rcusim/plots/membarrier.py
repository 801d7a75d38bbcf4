"""Figure of a sys_membarrier() sweep: seconds per 10,000,000 calls against T, seed 002's tables as markers.

Follows the Display pattern of :mod:`rcusim.plots`: :class:`MembarrierDisplay`
is built from a sweep (``from_sweep``), draws on an existing or new axes
(``plot(ax=None)``) and keeps ``lines_``, ``ax_`` and ``figure_``. matplotlib
is imported inside the functions.
"""

from __future__ import annotations

import os

import pandas as pd

from rcusim.engine.membarrier import SEED_CALLS, SEED_MANY_S, SEED_SINGLE_S, SEED_THREADS

__all__ = ["MembarrierDisplay", "save_membarrier_plot"]

SEED_MARKERS = {"single": (SEED_SINGLE_S, "o"), "many": (SEED_MANY_S, "s")}
"""Seed 002's calibration tables, drawn as markers over the variant of the same name."""


class MembarrierDisplay:
    """Seconds per 10,000,000 calls (the seed's unit) against T, one curve per variant.

    Parameters
    ----------
    sweep : pandas.DataFrame
        Rows of :func:`rcusim.engine.membarrier.sweep_membarrier`: ``variant``,
        ``threads``, ``calls`` and ``membarrier_s``; a run of fewer calls is
        scaled to 10,000,000.
    seed_tables : bool, default True
        Draw seed 002's single and IPI-many tables as markers.

    Attributes
    ----------
    lines_ : dict of str to matplotlib.lines.Line2D
        One model curve per variant, set by :meth:`plot`.
    ax_ : matplotlib.axes.Axes
    figure_ : matplotlib.figure.Figure
    """

    def __init__(self, sweep: pd.DataFrame, *, seed_tables: bool = True):
        missing = {"variant", "threads", "calls", "membarrier_s"} - set(sweep.columns)
        if missing:
            raise ValueError("sweep lacks columns: " + ", ".join(sorted(missing)))
        self.sweep = sweep
        self.seed_tables = seed_tables

    @classmethod
    def from_sweep(cls, sweep: pd.DataFrame, *, seed_tables: bool = True) -> "MembarrierDisplay":
        """Build the display from a sweep; see the class parameters."""
        return cls(sweep, seed_tables=seed_tables)

    def plot(self, ax=None) -> "MembarrierDisplay":
        """Draw the curves (and the seed's markers) on `ax`, or on a new figure."""
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots()
        lines = {}
        for name, rows in self.sweep.groupby("variant", sort=False):
            rows = rows.sort_values("threads")
            seconds = rows["membarrier_s"] * SEED_CALLS / rows["calls"]
            (line,) = ax.plot(rows["threads"], seconds, "-", linewidth=1.5, label=f"model: {name}")
            lines[name] = line
            if self.seed_tables and name in SEED_MARKERS:
                values, marker = SEED_MARKERS[name]
                ax.plot(SEED_THREADS, values, marker, color=line.get_color(), fillstyle="none",
                        label=f"seed 002: {name}")
        ax.set_xlabel("busy threads T")
        ax.set_ylabel(f"seconds per {SEED_CALLS:,} calls")
        ax.set_ylim(bottom=0)
        ax.legend()
        self.lines_, self.ax_, self.figure_ = lines, ax, ax.figure
        return self


def save_membarrier_plot(sweep: pd.DataFrame, path: str | os.PathLike, *,
                         title: str | None = None) -> None:
    """Write :class:`MembarrierDisplay` of `sweep` as a PNG file (Agg canvas, no pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.4))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    MembarrierDisplay.from_sweep(sweep).plot(ax)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
