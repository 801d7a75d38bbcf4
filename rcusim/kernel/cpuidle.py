"""The menu cpuidle governor (drivers/cpuidle/governors/menu.c): which idle state
a CPU enters, and whether it keeps its tick there.

menu is the default governor of every release rcusim models (rating 20; teo,
rating 19, is never chosen by default). ``menu_select()`` predicts the idle
length from the time to the CPU's next timer event, scaled by a correction
factor learnt per magnitude bucket, and capped by the "typical interval" of
the last 8 idle periods when they are regular; it picks the deepest state
whose target residency fits the prediction. From v4.17 ("cpuidle: Return
nohz hint from cpuidle_select()", the idle-loop rework) it also says whether
the tick is stopped: not when the prediction is shorter than a tick or the
state polls. ``menu_update()`` learns from the measured idle length at the
next selection. Units are those of the v4.20-v5.0 code: microseconds.

The engine computes the same in ``cython_core/cpuidle.pxi``; this module
serves the reference model and the tests, which compare the two.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["BUCKETS", "INTERVALS", "RESOLUTION", "DECAY", "MAX_INTERESTING", "NO_TIMER_US",
           "which_bucket", "typical_interval", "Menu"]

BUCKETS = 12
INTERVAL_SHIFT = 3
INTERVALS = 1 << INTERVAL_SHIFT
RESOLUTION = 1024
DECAY = 8
MAX_INTERESTING = 50000
NO_TIMER_US = 0xFFFFFFFF
"""The sleep length of a CPU with no timer queued (rcusim knows only the timers it models):
the largest ``unsigned int next_timer_us``."""
_U64_MAX = (1 << 64) - 1
_INT_MAX = (1 << 31) - 1


def which_bucket(duration_us: int) -> int:
    """which_bucket() with no task in iowait: the decade of the expected duration."""
    for bucket, bound in enumerate((10, 100, 1000, 10000, 100000)):
        if duration_us < bound:
            return bucket
    return 5


def typical_interval(intervals, predicted_us: int) -> int:
    """get_typical_interval(): the mean of the last 8 idle periods if they are regular
    (stddev <= 20 us, or mean > 6 stddev over at least 6 of them), else NO_TIMER_US."""
    thresh = _INT_MAX
    while True:
        kept = [v for v in intervals if v <= thresh]
        lo, hi, divisor = min(kept), max(kept), len(kept)
        if lo >= predicted_us:
            return NO_TIMER_US
        avg = sum(kept) // divisor
        variance = sum((v - avg) ** 2 for v in kept) // divisor
        if variance <= _U64_MAX // 36:
            if (avg * avg > variance * 36 and divisor * 4 >= INTERVALS * 3) or variance <= 400:
                return avg
        if divisor * 4 <= INTERVALS * 3:
            return NO_TIMER_US
        thresh = hi - 1


@dataclass
class Menu:
    """struct menu_device of one CPU, with the decisions of its last selection.

    The history starts as that of a CPU long idle with its tick stopped: every
    interval is what ``menu_update()`` records for a long sleep ended by the
    tick (9/10 of MAX_INTERESTING), every factor unity (menu_enable_device()).
    """

    exit_us: tuple
    target_us: tuple
    polling0: bool
    tick_us: int
    keeps_tick: bool
    correction: list = field(default_factory=lambda: [RESOLUTION * DECAY] * BUCKETS)
    intervals: list = field(default_factory=lambda: [9 * MAX_INTERESTING // 10] * INTERVALS)
    interval_ptr: int = 0
    bucket: int = 0
    next_timer_us: int = 0
    needs_update: bool = False
    tick_wakeup: bool = False
    residency_us: int = 0
    state: int = 0
    stop_tick: bool = True

    def reflect(self, residency_us: int, tick_wakeup: bool) -> None:
        """menu_reflect(): the CPU left the state after `residency_us`; learn at the next select."""
        self.residency_us = residency_us
        self.tick_wakeup = tick_wakeup
        self.needs_update = True

    def update(self) -> None:
        """menu_update(): fold the last idle period into the factors and intervals."""
        if self.tick_wakeup and self.next_timer_us > self.tick_us:
            measured = 9 * MAX_INTERESTING // 10
        else:
            measured = self.residency_us
            exit_us = self.exit_us[self.state]
            measured = measured - exit_us if measured > 2 * exit_us else measured // 2
        measured = min(measured, self.next_timer_us)
        factor = self.correction[self.bucket]
        factor -= factor // DECAY
        if self.next_timer_us > 0 and measured < MAX_INTERESTING:
            factor += RESOLUTION * measured // self.next_timer_us
        else:
            factor += RESOLUTION
        self.correction[self.bucket] = factor
        self.intervals[self.interval_ptr] = measured
        self.interval_ptr = (self.interval_ptr + 1) % INTERVALS

    def _predicted_us(self, next_timer_us: int) -> int:
        """The next timer scaled by the bucket's factor, capped by the typical interval."""
        predicted = (next_timer_us * self.correction[self.bucket] + RESOLUTION * DECAY // 2) \
            // (RESOLUTION * DECAY)
        return min(predicted, typical_interval(self.intervals, predicted))

    def _select_v4_16(self, next_timer_us: int) -> int:
        """menu_select() before v4.17: the tick is already stopped; poll only if the
        next timer is due within max(20 us, the first real state's residency)."""
        exit_us, target_us, n = self.exit_us, self.target_us, len(self.exit_us)
        first = 0
        if self.polling0 and n > 1 and next_timer_us > max(20, target_us[1]):
            first = 1
        predicted = self._predicted_us(next_timer_us)
        idx = first
        for i in range(first, n):
            if target_us[i] > predicted or exit_us[i] > predicted:
                break
            idx = i
        self.state = idx
        return idx

    def select(self, next_timer_us: int, delta_next_us: int, tick_stopped: bool) -> int:
        """menu_select(): the state to enter; sets ``stop_tick``.

        `next_timer_us` is the sleep length with the tick stopped
        (tick_nohz_get_sleep_length()), `delta_next_us` the time to the next
        tick event, `tick_stopped` whether the tick is stopped already.
        """
        if self.needs_update:
            self.update()
            self.needs_update = False
        exit_us, target_us, n = self.exit_us, self.target_us, len(self.exit_us)
        self.next_timer_us = next_timer_us
        self.bucket = which_bucket(next_timer_us)
        self.stop_tick = True
        if not self.keeps_tick:
            return self._select_v4_16(next_timer_us)
        if n <= 1 or next_timer_us < target_us[1]:
            self.stop_tick = not self.polling0
            self.state = 0
            return 0
        predicted = self._predicted_us(next_timer_us)
        latency_req = _INT_MAX
        if tick_stopped:
            if predicted < self.tick_us:
                predicted = delta_next_us
        else:
            latency_req = min(latency_req, predicted)  # interactivity_req, no iowaiters
        idx = -1
        for i in range(n):
            if idx == -1:
                idx = i
            if target_us[i] > predicted:
                if idx == 0 and self.polling0 and exit_us[i] <= latency_req \
                        and target_us[i] <= next_timer_us:
                    predicted = target_us[i]
                    idx = i
                    break
                if predicted < self.tick_us:
                    break
                if not tick_stopped:
                    predicted = target_us[idx]
                    break
                if target_us[idx] < self.tick_us and target_us[i] <= delta_next_us:
                    idx = i
                self.state = idx
                return idx
            if exit_us[i] > latency_req:
                break
            idx = i
        if (idx == 0 and self.polling0 or predicted < self.tick_us) and not tick_stopped:
            self.stop_tick = False
            if idx > 0 and target_us[idx] > delta_next_us:
                for i in range(idx - 1, -1, -1):
                    idx = i
                    if target_us[i] <= delta_next_us:
                        break
        self.state = idx
        return idx
