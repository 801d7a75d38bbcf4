"""Locks: spinlocks as resources free again at a time (waiting costs the waiter time) and
rcu_state.exp_mutex, a sleeping mutex or rt_mutex with FIFO waiters; mirrors
cython_core/locking.pxi.

A mutex's unlock wakes its first waiter through the model's ``wake_from_acc`` hook
(the scheduler's), so that this module imports none of the others.
"""

from __future__ import annotations

from collections import deque


class SpinLock:
    """A spinlock as a resource free again from `free` (the engine's spin_wait());
    `cpu` is its last holder, where its cache line is, for a lock priced by distance."""

    __slots__ = ("free", "cpu")

    def __init__(self, cpu=None):
        self.free = 0
        self.cpu = cpu

    def wait(self, t: int, hold: int) -> int:
        """Asked for at t and held `hold` ns: how long the taker spins."""
        wait = max(0, self.free - t)
        self.free = t + wait + hold
        return wait


def spin_lock(sim, lock: SpinLock) -> None:
    """One round on an rcu_node lock (wait if held, then hold), charged to the current
    action (the engine's spin_lock())."""
    wait = lock.wait(sim.env.now + sim.acc, sim.inp.tree.rnp_lock_ns)
    sim.acc += wait + sim.inp.tree.rnp_lock_ns
    sim.counters["rnp_lock_wait_ns"] += wait


class SleepingMutex:
    """rcu_state.exp_mutex: a mutex (a freed lock goes to whoever asks first, so a
    newcomer can overtake the woken waiter) or an rt_mutex (handed to the first waiter)."""

    def __init__(self, rt: bool):
        self.rt = rt
        self.owner = None
        self.waiters = deque()

    def trylock(self, sim, task) -> bool:
        sim.acc += sim.inp.tree.rnp_lock_ns
        if self.owner is not None:
            return False
        if self.waiters:
            sim.counters["exp_mutex_steals"] += 1
        self.owner = task
        return True

    def lock(self, sim, task) -> bool:
        """True if task holds the mutex now; otherwise it is queued and must sleep."""
        if self.trylock(sim, task):
            return True
        sim.counters["exp_mutex_waits"] += 1
        self.waiters.append(task)
        return False

    def retry(self, task) -> bool:
        """The woken waiter runs: True if it holds the mutex (handed over, or free)."""
        if self.owner is task:
            return True
        if self.owner is not None:
            return False  # taken meanwhile: still queued
        if task in self.waiters:
            self.waiters.remove(task)
        self.owner = task
        return True

    def unlock(self, sim, cpu) -> None:
        w = self.waiters[0] if self.waiters else None
        if self.rt and w is not None:
            self.owner = self.waiters.popleft()
        else:
            self.owner = None
        if w is not None:
            sim.wake_from_acc(w, cpu, sim.inp.sched.ttwu_ns)
