"""The engine's event queue: whatever mix of FIFOs per kind and heap holds them, events come
out in (t, prio, insertion) order, as from one sorted list."""

from __future__ import annotations

import heapq

import numpy as np
import pytest

from rcusim import _core


def expected_order(times, prios, pop_every):
    """The same pushes and pops on Python's heapq of (t, prio, index)."""
    heap, out = [], []
    for i, (t, p) in enumerate(zip(times, prios)):
        heapq.heappush(heap, (t, p, i))
        if pop_every and (i + 1) % pop_every == 0:
            out.append(heapq.heappop(heap)[2])
    while heap:
        out.append(heapq.heappop(heap)[2])
    return out


@pytest.mark.parametrize("pop_every", [0, 2, 3, 7])
@pytest.mark.parametrize("seed", [0, 1])
def test_events_come_out_in_time_priority_and_insertion_order(seed, pop_every):
    """Thousands of events of 40 kinds (past the kinds with a FIFO), many at equal times, some
    urgent, pushed in and out of order of their kind: the order out is a sorted list's."""
    rng = np.random.default_rng(seed)
    n = 5000
    # ties at every time, and times on both sides of 0 (the order flips t's sign bit)
    times = rng.integers(-200, 200, size=n).tolist()
    prios = rng.integers(0, 2, size=n).tolist()            # PRIO_URGENT (0) or PRIO_NORMAL (1)
    kinds = rng.integers(0, 40, size=n).tolist()
    for i in range(0, n, 3):                               # runs of one kind in time order: its FIFO
        kinds[i] = 5
        times[i] = i // 3 * 2 // 10
    assert _core.eventq_order(times, prios, kinds, pop_every) == expected_order(times, prios, pop_every)
