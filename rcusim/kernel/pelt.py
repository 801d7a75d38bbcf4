"""PELT's constants (kernel/sched/pelt.c), computed as Documentation/scheduler/sched-pelt.c
generates kernel/sched/sched-pelt.h.

A signal's sum decays by y each 1024 µs period, y^32 = 1/2 (LOAD_AVG_PERIOD); decay_load()
multiplies by y^n as ``runnable_avg_yN_inv[n] / 2^32`` for n < 32 and halves the value for each
32 periods more. LOAD_AVG_MAX is the greatest sum a signal running all the time reaches, the
fixed point of ``max = max * y + 1024`` in that arithmetic. The engine's side is
cython_core/pelt.pxi.
"""

from __future__ import annotations

LOAD_AVG_PERIOD = 32
"""Periods of 1024 µs over which a contribution halves."""


def _y() -> float:
    return 0.5 ** (1.0 / LOAD_AVG_PERIOD)


def runnable_avg_yn_inv() -> list[int]:
    """y^n scaled to 32 bits, n = 0 .. LOAD_AVG_PERIOD - 1 (calc_runnable_avg_yN_inv())."""
    return [int(((1 << 32) - 1) * _y() ** n) for n in range(LOAD_AVG_PERIOD)]


def load_avg_max() -> int:
    """The converged sum of a signal that is always 1 (calc_converged_max())."""
    y_inv = int(((1 << 32) - 1) * _y())
    value, last = 1024, 0
    while value != last:
        last, value = value, ((value * y_inv) >> 32) + 1024
    return value
