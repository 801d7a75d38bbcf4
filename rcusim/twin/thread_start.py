"""How the twin's load helper creates its threads, timed in the guest.

The helper (rcusim/twin/guest/rcusim_load.c) binds its main thread to the first CPU of the list
and creates each thread with pthread_create() and an affinity attribute. glibc's create_thread()
then starts the thread stopped: clone() places it where its parent may run
(wake_up_new_task(), the parent's affinity), and the parent, holding the thread's start lock
(pd->lock), calls sched_setaffinity() on it and unlocks. A thread that runs before the unlock
sleeps on that lock in start_thread() until the parent's futex_wake(); one that runs after goes
straight to the start barrier. rcusim's parent (sync_loop.pxi) takes these steps with the costs
measured here from boots of the callers traced with ``sched/sched_wakeup_new``
(``rcusim kernel scenarios/twin/sync_callers_2cpu.yaml --variant unpinned_1000 --trace-event
sched/sched_wakeup_new``), the median of each, less the tracing (the events its CPU recorded
while it ran, the one that ends it among them, the profile's ``tracing.event_ns`` each):

* ``pthread_create_ns``: the parent's time on its CPU from its wake-up of a thread waiting on
  its start lock (the previous pthread_create()'s end) to the next ``sched_wakeup_new``: the rest
  of pthread_create(), the next one's stack mmap() and clone();
* ``pthread_start_ns``: its time from ``sched_wakeup_new`` to its ``sched_waking`` of the thread
  (sched_setaffinity() and the unlock), where the thread waits on the lock;
* ``lock_run_ns``: a thread's first run, ``sched_switch`` to ``sched_switch``, where it ends
  asleep on the start lock (the parent wakes it next);
* ``barrier_run_ns``: a thread's first run where it goes on to sleep in the start barrier;
* ``woken_run_ns``: the run after the parent's wake-up, to the start barrier;
* ``call_rcu_per_1000``: the parent's ``rcu_callback`` events from its first thread's
  ``sched_wakeup_new`` to its last's, per 1,000 threads created between (the stacks' mmap()
  and mprotect() free maple-tree nodes with call_rcu(), mt_free_rcu()): boots traced with
  ``rcu/rcu_callback`` too.

Each run holds one context switch, which rcusim charges apart (``ctxsw_ns``).
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass

import numpy as np

from rcusim.errors import ScenarioError
from rcusim.input.profiles import THREAD_START_COSTS
from rcusim.results.ftrace_read import _NEXT_PID, _PID, read_ftrace
from rcusim.twin.collect import kept_boots

__all__ = ["ThreadStart", "boot_samples", "thread_start_costs"]

_HELPER = "rcusim_load"


@dataclass(frozen=True)
class ThreadStart:
    """Each cost's value (the median, ns) and its samples."""

    values: dict
    samples: dict

    def source(self, name: str, command: str) -> str:
        s = np.asarray(self.samples[name])
        if name == "call_rcu_per_1000":
            return (f"The parent's rcu_callback events per 1,000 threads created, by boot: "
                    f"{', '.join(map(str, s))}; their median [rcusim.twin.thread_start, on {command}]")
        return (f"{len(s)} samples, median {int(np.median(s))} ns, p10 {int(np.percentile(s, 10))} ns, p90 "
                f"{int(np.percentile(s, 90))} ns, each less its tracing [rcusim.twin.thread_start, on {command}]")


def _runs(ev) -> dict[int, list[tuple[int, int, int]]]:
    """Each pid's stretches on a CPU, (switched in, switched out, cpu), from sched_switch."""
    sw = ev[ev["event"] == "sched_switch"]
    nxt = sw["payload"].str.extract(_NEXT_PID, expand=False).astype(int)
    prv = sw["payload"].str.extract(r"prev_pid=(\d+)", expand=False).astype(int)
    runs: dict[int, list] = {}
    cur: dict[int, tuple[int, int]] = {}
    for t, cpu, n, p in zip(sw["t_ns"], sw["cpu"], nxt, prv):
        if p in cur and cur[p][1] == cpu:
            runs.setdefault(p, []).append((cur.pop(p)[0], int(t), int(cpu)))
        cur[n] = (int(t), int(cpu))
    return runs


def boot_samples(lines, t0_ns: int, event_ns: int) -> dict[str, list[int]]:
    """The samples of one boot's trace, before its calls begin (t0_ns)."""
    ev = read_ftrace(lines)
    ev = ev[ev["t_ns"] < t0_ns].reset_index(drop=True)
    new = ev[(ev["event"] == "sched_wakeup_new") & ev["payload"].str.contains(f"comm={_HELPER} ", regex=False)]
    out = {name: [] for name in THREAD_START_COSTS}
    if not len(new):
        return out
    parent = int(new["pid"].mode()[0])
    kids = [int(x) for x in new["payload"].str.extract(_PID, expand=False)]
    t_new = dict(zip(kids, new["t_ns"].astype(int)))
    calls = ev[(ev["event"] == "rcu_callback") & (ev["pid"] == parent)
               & (ev["t_ns"] > new["t_ns"].min()) & (ev["t_ns"] <= new["t_ns"].max())]
    if (ev["event"] == "rcu_callback").any() and len(kids) > 1:
        out["call_rcu_per_1000"].append(round(1000 * len(calls) / (len(kids) - 1)))
    runs = _runs(ev)
    times, cpus = ev["t_ns"].to_numpy(), ev["cpu"].to_numpy()

    def net(pid: int, a: int, z: int) -> int:
        """pid's time on its CPU within (a, z], less the tracing of the events its CPU recorded
        then (its switch-outs and the event at z among them)."""
        on = events = 0
        for i, o, c in runs.get(pid, []):
            lo, hi = max(i, a), min(o, z)
            if hi > lo:
                on += hi - lo
                events += int(np.count_nonzero((cpus == c) & (times > lo) & (times <= hi)))
        return on - events * event_ns

    waking = ev[(ev["event"] == "sched_waking") & (ev["pid"] == parent)]
    t_wake: dict[int, int] = {}
    for t, k in zip(waking["t_ns"], waking["payload"].str.extract(_PID, expand=False).astype(int)):
        t_wake.setdefault(int(k), int(t))
    woke_prev = None  # when the parent woke the previous thread from its start lock
    for i, k in enumerate(kids):
        if woke_prev is not None:
            out["pthread_create_ns"].append(net(parent, woke_prev, t_new[k]))
        after = t_new[kids[i + 1]] if i + 1 < len(kids) else t0_ns
        tw = t_wake.get(k)
        waited = tw is not None and tw < after
        woke_prev = tw if waited else None
        if waited:
            out["pthread_start_ns"].append(net(parent, t_new[k], tw))
        mine = [r for r in runs.get(k, []) if r[0] >= t_new[k]]
        if not mine:
            continue
        first = mine[0]
        out["lock_run_ns" if waited else "barrier_run_ns"].append(net(k, first[0], first[1]))
        if waited and len(mine) > 1 and mine[1][0] >= tw:
            out["woken_run_ns"].append(net(k, mine[1][0], mine[1][1]))
    return out


def thread_start_costs(run_dirs, count_dirs, variant: str, event_ns: int) -> ThreadStart:
    """The costs from every boot of `variant` in one or more ``rcusim kernel`` run directories:
    the times from `run_dirs` (traced with sched/sched_wakeup_new, as the twin's own boots
    otherwise: more events would slow the helper beyond their own price), the call_rcu()s from
    `count_dirs` (traced with rcu/rcu_callback too)."""
    pooled = {name: [] for name in THREAD_START_COSTS}
    for boots, keys in ((kept_boots(run_dirs, variant), THREAD_START_COSTS[:-1]),
                        (kept_boots(count_dirs, variant), THREAD_START_COSTS[-1:])):
        for boot, window in boots:
            with gzip.open(boot / "trace.txt.gz", "rt") as f:
                samples = boot_samples(f, window["t0_ns"], event_ns)
            for name in keys:
                pooled[name] += samples[name]
    short = [name for name, s in pooled.items() if len(s) < (1 if name == "call_rcu_per_1000" else 10)]
    if short:
        raise ScenarioError(f"too few samples of {', '.join(short)} in the boots of {variant!r}",
                            key="--thread-start-from",
                            allowed="boots of the load helper's unpinned callers traced with sched/sched_wakeup_new "
                                    "(--thread-start-from) and with rcu/rcu_callback too (--call-rcu-from)")
    return ThreadStart(values={name: max(int(np.median(s)), 0) for name, s in pooled.items()},
                       samples={name: tuple(s) for name, s in pooled.items()})
