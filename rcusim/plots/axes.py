"""Axes for the figures: a new pyplot axes for notebooks, a bare Agg figure for files."""

from __future__ import annotations


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
