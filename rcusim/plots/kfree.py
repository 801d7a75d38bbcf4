"""Figure of a kfree_rcu() flood: memory allocated and not yet freed over time, one line per variant.

Follows the Display pattern of :mod:`rcusim.plots`: :class:`KvfreeMemoryDisplay`
draws on an existing or new axes (``plot(ax=None)``) and keeps ``lines_``,
``ax_`` and ``figure_``. matplotlib is imported inside the functions.
"""

from __future__ import annotations

import os

import pandas as pd

from rcusim.plots.axes import new_axes

__all__ = ["KvfreeMemoryDisplay", "save_memory_plot"]


class KvfreeMemoryDisplay:
    """MiB held by kvfree_rcu() (objects plus bulk pages) against simulated seconds.

    Parameters
    ----------
    memory : dict of str to pandas.DataFrame
        Per variant, the ``t_ns`` and ``bytes`` columns of its ``kvfree_memory`` table.
    log_y : bool, default True
        Logarithmic MiB axis: variants can differ by orders of magnitude.
    """

    def __init__(self, memory: dict[str, pd.DataFrame], *, log_y: bool = True):
        self.memory = memory
        self.log_y = log_y

    @classmethod
    def from_result(cls, result, *, log_y: bool = True) -> "KvfreeMemoryDisplay":
        """Build the display from the variants of a result that have a memory series."""
        return cls({n: v.tables["kvfree_memory"] for n, v in result.variants.items()
                    if "kvfree_memory" in v.tables}, log_y=log_y)

    def plot(self, ax=None) -> "KvfreeMemoryDisplay":
        """Draw one line per variant on `ax`, or on a new figure."""
        ax = new_axes(ax)
        self.lines_ = {}
        for name, frame in self.memory.items():
            (line,) = ax.plot(frame["t_ns"].to_numpy() / 1e9, frame["bytes"].to_numpy() / 2**20,
                              drawstyle="steps-post", label=name)
            self.lines_[name] = line
        if self.log_y:
            ax.set_yscale("log")
        ax.set_xlabel("simulated time (s)")
        ax.set_ylabel("kvfree_rcu() memory not yet freed (MiB)")
        ax.legend()
        self.ax_, self.figure_ = ax, ax.figure
        return self


def save_memory_plot(memory: dict[str, pd.DataFrame], path: str | os.PathLike, title: str | None = None) -> None:
    """Write the memory-over-time figure of the variants as a PNG file."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    KvfreeMemoryDisplay(memory).plot(ax=ax)
    ax.set_title(title or "kfree_rcu() flood: memory allocated and not yet freed")
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
