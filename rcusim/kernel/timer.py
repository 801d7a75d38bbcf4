"""The timer wheel's expiry (kernel/time/timer.c): at which jiffy's tick a timer runs.

From v4.8 (the non-cascading wheel), ``calc_wheel_index()`` files a timer at
the level whose range holds its delta, and ``calc_index()`` rounds the expiry
up to the next bucket of that level, "so a timer never fires early". Level
``n`` has a granularity of ``8**n`` jiffies; level 0 covers deltas under 63
jiffies, so ``schedule_timeout(j)`` sleeps until the tick of ``jiffies + j + 1``.
The cascading wheel before it ran a timer at the tick that reached its expiry.
Its per-timer slack (``apply_slack()``, delta / 256) is zero for every timer
rcusim arms in those releases, all shorter than 256 jiffies.

The engine computes the same in ``cython_core/timer.pxi``; this module serves
the reference model and the tests, which compare the two.
"""

from __future__ import annotations

__all__ = ["LVL_CLK_SHIFT", "LVL_BITS", "TIMER_SLACK_NS", "lvl_depth", "lvl_start", "timer_expiry_jiffy"]

TIMER_SLACK_NS = 50_000
"""A SCHED_OTHER task's timer_slack_ns (init_task's, inherited): its hrtimer sleeps (nanosleep())
may end this late, hrtimer_set_expires_range_ns()."""

LVL_CLK_SHIFT = 3
LVL_BITS = 6


def lvl_depth(hz: int) -> int:
    """LVL_DEPTH: 9 wheel levels for HZ > 100, else 8."""
    return 9 if hz > 100 else 8


def lvl_start(n: int) -> int:
    """LVL_START(n): the smallest delta filed at level n (n >= 1)."""
    return ((1 << LVL_BITS) - 1) << ((n - 1) * LVL_CLK_SHIFT)


def timer_expiry_jiffy(clk: int, expires: int, hz: int, rounds_up: bool = True) -> int:
    """The jiffy whose tick runs a timer armed at jiffy `clk` for jiffy `expires`.

    Parameters
    ----------
    clk : int
        The timer base's clock when the timer is armed (jiffies).
    expires : int
        ``timer->expires``.
    hz : int
        CONFIG_HZ (it sets the wheel's depth).
    rounds_up : bool
        The v4.8 wheel (True) or the cascading wheel before it.

    Returns
    -------
    int
        A jiffy after `clk`.
    """
    delta = expires - clk
    if not rounds_up:
        return expires if delta > 0 else clk + 1
    if delta < 0:
        return clk + 1
    lvl = 0
    while lvl < lvl_depth(hz) - 1 and delta >= lvl_start(lvl + 1):
        lvl += 1
    shift = lvl * LVL_CLK_SHIFT
    return max(((expires >> shift) + 1) << shift, clk + 1)
