"""Axes for the figures: a new pyplot axes for notebooks, a bare Agg figure for files, the
styles of a figure's series and a legend beside the data."""

from __future__ import annotations

import itertools

#: Colours of a figure's series in turn (matplotlib's tab10, grey last).
SERIES_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
                  "tab:gray")

#: Line styles of a figure's series in turn, one per colour: series stay apart in grey too.
LINE_STYLES = ("-", "--", ":", "-.", (0, (3, 1, 1, 1, 1, 1)), (0, (8, 3)), (0, (1, 4)), (0, (5, 2, 1, 2, 1, 2, 1, 2)))


def series_styles():
    """``color`` and ``linestyle`` keywords for each series of a figure in turn: a series differs
    from the seven before and after it in both (a matplotlib cycler, repeated)."""
    from cycler import cycler

    return itertools.cycle(cycler(color=SERIES_COLOURS, linestyle=LINE_STYLES))


def legend_beside(ax, **kwargs):
    """The legend of `ax` to the right of its axes, where it hides no data."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kwargs)


def new_axes(ax):
    """`ax`, or the axes of a new pyplot figure."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
    return ax


def agg_figure(ncols: int = 1, nrows: int = 1, figsize=(8, 5)):
    """A bare Figure on the Agg canvas (pyplot untouched) and its axes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=True)
    return fig, axes
