"""Statistics over repeated runs: the mean and its 95 % confidence interval."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["mean_ci"]


def mean_ci(values) -> tuple[float, float]:
    """Mean of `values` and the half-width of its 95 % confidence interval (Student's t).

    NaNs are dropped; the half-width is NaN with fewer than two values.
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return math.nan, math.nan
    if x.size == 1:
        return float(x[0]), math.nan
    from scipy import stats  # imported here: scipy.stats takes most of a second to import

    t = stats.t.ppf(0.975, x.size - 1)
    return float(x.mean()), float(t * x.std(ddof=1) / math.sqrt(x.size))
