"""cython_core/random.pxi: the engine's random draws, one stream (the NumPy BitGenerator it is built
with, seeded by the scenario's seed) drawn in event order: a scenario and a seed give one run.

Checked on the draws one can read back whole: a task's torture_random() sleeps on the cascading
timer wheel (v4.7), which wakes it at its expiry, so that each sleep is its draw in jiffies."""

from __future__ import annotations

import numpy as np

from tests.engine.conftest import task_sleeps

MAX_JIFFIES = 10


def drawn_sleeps(seed: int) -> np.ndarray:
    """The sleeps, in jiffies, of a call_rcu_load task that sleeps 1 to MAX_JIFFIES jiffies after
    each operation on a v4.7 kernel, for 20 s: from the tick on which its timer was armed to
    the tick that woke it."""
    armed, woken = task_sleeps("4.7", MAX_JIFFIES, seed=seed)
    return woken // 1_000_000 - armed


def test_the_same_seed_gives_the_same_draws_and_another_seed_other_draws():
    """Every draw goes through random.pxi's one stream, in event order: the same seed draws the
    same sleeps in the same order, another seed other sleeps (rcusim's rule for a reproducible
    run; the kernel's torture_random() is seeded per task at boot)."""
    a, b, c = drawn_sleeps(0), drawn_sleeps(0), drawn_sleeps(1)
    assert len(a) > 1000
    assert np.array_equal(a, b)
    n = min(len(a), len(c))
    assert not np.array_equal(a[:n], c[:n])
    assert np.mean(a[:n] == c[:n]) < 0.5  # not a shifted copy either: mostly other values


def test_torture_random_sleeps_are_uniform_over_1_to_n_jiffies():
    """schedule_timeout_idle(torture_random(&rand) % max + 1): random_u32() is uniform over 32
    bits, so each sleep of 1 to max jiffies comes up about equally often: each count within
    five standard deviations of its binomial mean, and no other length."""
    sleeps = drawn_sleeps(0)
    counts = np.bincount(sleeps, minlength=MAX_JIFFIES + 2)
    assert counts[0] == 0 and counts[MAX_JIFFIES + 1:].sum() == 0
    n, p = len(sleeps), 1 / MAX_JIFFIES
    assert (np.abs(counts[1:MAX_JIFFIES + 1] - n * p) < 5 * np.sqrt(n * p * (1 - p))).all()
