"""Statistics over repeated runs: the mean and its 95 % confidence interval."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["mean_ci"]

# Student's t quantile t(0.975, df) for df = 1..30 (beyond: _t975()'s expansion).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
         2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
         2.052, 2.048, 2.045, 2.042)



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
    t = _t975(x.size - 1)
    return float(x.mean()), float(t * x.std(ddof=1) / math.sqrt(x.size))


def _t975(df: int) -> float:
    """t(0.975, df): the table up to 30, then the Cornish-Fisher expansion around z = 1.95996."""
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959963984540054
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
