"""sys_membarrier() in a loop: the calibration and the runs.

Seed 002 (LKML, "[RFC PATCH] introduce sys_membarrier(): process-wide memory
barrier (v3b)", Mathieu Desnoyers, 12 Jan 2010) times 10,000,000 calls of the
system call on a two-socket Xeon E5405, one thread calling it in a loop and T
other threads of the process busy-looping on other CPUs, in two calibration
runs without run-queue locks: a single IPI per target, sent and waited for one
after another, and a cpumask with one IPI-many broadcast. The patch itself
takes the run-queue locks and switches from single IPIs to the broadcast above
``ADAPT_IPI_THRESHOLD`` = 1 target.

This module

* fits the per-IPI costs on the seed's two tables (:func:`calibrate`) and
* runs the compiled model, :mod:`rcusim._membarrier` (:func:`run_membarrier`,
  :func:`sweep_membarrier`, :func:`run_membarrier_loop`).

Only the single and IPI-many tables are fitted; the adaptive scheme with the
run-queue locks is predicted from the fitted costs and the estimated cost of
one run-queue lock.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rcusim import _membarrier
from rcusim.input.membarrier import SEED_CALLS, MembarrierLoop, cpus_per_socket, membarrier_costs

__all__ = [
    "SEED_CALLS", "SEED_THREADS", "SEED_SINGLE_S", "SEED_MANY_S", "SEED_VARIANTS",
    "IPI_MODES", "FITTED", "MembarrierFit", "placement", "run_membarrier", "sweep_membarrier",
    "run_membarrier_loop", "calibrate", "engine_costs",
]

SEED_THREADS = (1, 2, 3, 4, 5, 6, 7)
"""Busy threads T of the seed's tables."""
SEED_SINGLE_S = (18.801, 29.086, 46.841, 53.758, 70.856, 81.142, 98.362)
"""Seed 002, "local mb()+single IPI to T other threads", seconds for 10,000,000 calls, T = 1..7."""
SEED_MANY_S = (21.778, 22.741, 22.185, 24.660, 26.855, 30.841, 29.551)
"""Seed 002, "cpumask alloc+IPI-many to T other threads", seconds for 10,000,000 calls, T = 1..7."""

IPI_MODES = {"single": 0, "many": 1, "adaptive": 2}
"""IPI schemes by name, with the engine's constants (rcusim._membarrier.MB_*)."""

SEED_VARIANTS = {
    "single": {"ipi": "single", "rq_lock": False},
    "many": {"ipi": "many", "rq_lock": False},
    "adaptive": {"ipi": "adaptive", "adaptive_threshold": 1, "rq_lock": True},
}
"""The seed's three configurations: the two calibration runs and the v3b patch."""

FITTED = ("syscall_ns", "ipi_rtt_ns", "ipi_xsocket_ns", "cpumask_alloc_ns", "cfd_setup_ns",
          "cfd_line_ns")
"""Costs fitted on the seed's two tables (ns); the engine's other IPI costs follow from them."""

IPI_RETURN_FRACTION = 1 - 1.24 / 1.79
"""Share of an IPI round trip spent after the handler starts (handler, smp_mb, csd unlock
seen by the sender): 1.24 us one-way of 1.79 us round trip, ipi_benchmark on bare-metal
x86 (CALIBRATION.md). Splits the fitted round trip; no membarrier time depends on it."""

_ESTIMATED = ("smp_mb_ns", "rq_read_ns", "rq_lock_ns", "ipi_exit_ns")

# --------------------------------------------------------------------------
# Runs
# --------------------------------------------------------------------------

def placement(threads: int, nr_cpus: int, per_socket: int, caller_cpu: int = 0,
              how: str = "spread") -> np.ndarray:
    """CPUs of the busy threads, in the order the threads were placed.

    ``"spread"`` puts each new thread on the socket running fewer of the
    process's tasks, staying on the caller's socket on a tie, as
    find_idlest_group() does (a remote group must be imbalance_pct = 125%
    less loaded to win). ``"packed"`` fills the caller's socket first. Within
    a socket the lowest free CPU is taken.
    """
    nsock = -(-nr_cpus // per_socket)
    home = caller_cpu // per_socket
    free = [[c for c in range(s * per_socket, min((s + 1) * per_socket, nr_cpus)) if c != caller_cpu]
            for s in range(nsock)]
    load = [0] * nsock
    load[home] = 1
    out = []
    for _ in range(threads):
        cands = [s for s in range(nsock) if free[s]]
        if how == "packed":
            s = home if free[home] else min(cands, key=lambda s: (s != home, s))
        else:
            s = min(cands, key=lambda s: (load[s], s != home, s))
        out.append(free[s].pop(0))
        load[s] += 1
    return np.array(out, dtype=np.int32)


def run_membarrier(threads: int, calls: int, mode: str = "adaptive",
                   costs: Mapping[str, int] | None = None, *, threshold: int = 1,
                   rq_lock: bool = False, nr_cpus: int = 8, per_socket: int | None = None,
                   hz: int = 250, seed: int = 0, how: str = "spread",
                   caller_cpu: int = 0) -> dict:
    """Simulate `calls` back-to-back sys_membarrier() calls with `threads` busy threads.

    Parameters
    ----------
    threads : int
        T, busy threads of the process on other CPUs (1 .. nr_cpus - 1).
    calls : int
        Number of calls.
    mode : {"single", "many", "adaptive"}
        IPI scheme.
    costs : mapping of str to int, optional
        Engine costs in ns (:func:`membarrier_costs`); default the Xeon E5405's.
    threshold : int
        ADAPT_IPI_THRESHOLD (adaptive only).
    rq_lock : bool
        Take the run-queue locks while scanning.
    nr_cpus, per_socket : int
        CPUs, and CPUs per socket (default: the Xeon E5405's 4).
    hz : int
        Scheduling-clock rate; 0 for no ticks.
    seed : int
        Seeds the tick phase of each CPU, the only random quantity.
    how : {"spread", "packed"}
        Thread placement (:func:`placement`).
    caller_cpu : int
        CPU of the calling thread.

    Returns
    -------
    dict
        ``membarrier_s`` (simulated seconds the `calls` calls take, the seed's
        measure), ``per_call_ns`` (mean), ``call_std_ns``, ``events`` and the
        engine's counters (``n_ipi_single``, ``n_ipi_many``, ``n_cpumask_alloc``,
        ``n_rq_lock``, ``n_ipi_deferred``, ``n_caller_ticks``), ``busy_user_frac``
        (mean share of time the busy threads keep, IPI handlers and ticks
        taken out), ``ipi_per_thread`` and ``wall_s``.
    """
    if mode not in IPI_MODES:
        raise ValueError(f"unknown mode {mode!r}; one of: {', '.join(IPI_MODES)}")
    if costs is None:
        costs = membarrier_costs()
    if per_socket is None:
        per_socket = cpus_per_socket()
    if not 1 <= threads < nr_cpus:
        raise ValueError(f"{threads} busy threads and the caller need {threads + 1} CPUs; "
                         f"there are {nr_cpus}")
    cpus = placement(threads, nr_cpus, per_socket, caller_cpu, how)
    sockets = np.arange(nr_cpus, dtype=np.int32) // per_socket
    period = 10**9 // hz if hz else 1
    # One stream per (seed, T): the variants of one T share their tick phases.
    phase = np.random.default_rng([seed, threads]).integers(0, period, nr_cpus, dtype=np.int64)
    engine = _membarrier.MembarrierEngine(cpus, sockets, phase, caller_cpu, IPI_MODES[mode],
                                          threshold, rq_lock, hz, dict(costs))
    wall = time.perf_counter()
    engine.run(calls)
    wall = time.perf_counter() - wall
    s = engine.stats()
    elapsed = s["elapsed_ns"]
    ticks = elapsed / period * costs["tick_ns"] if hz else 0.0
    busy = s["ipi_stolen_ns"][cpus] + ticks
    return {
        "threads": threads,
        "mode": mode,
        "threshold": threshold,
        "rq_lock": rq_lock,
        "calls": calls,
        "membarrier_s": elapsed / 1e9,
        "per_call_ns": s["call_mean_ns"],
        "call_std_ns": s["call_std_ns"],
        "events": s["events"],
        "n_ipi_single": s["n_ipi_single"],
        "n_ipi_many": s["n_ipi_many"],
        "n_cpumask_alloc": s["n_cpumask_alloc"],
        "n_rq_lock": s["n_rq_lock"],
        "n_ipi_deferred": s["n_ipi_deferred"],
        "n_caller_ticks": s["n_caller_ticks"],
        "cfd_wait_ns": s["cfd_wait_ns"],
        "busy_user_frac": float(1 - busy.mean() / elapsed),
        "ipi_per_thread": s["ipi_recv"][cpus].tolist(),
        "wall_s": wall,
    }


def sweep_membarrier(variants: Mapping[str, Mapping] = SEED_VARIANTS,
                     threads: Iterable[int] = SEED_THREADS, calls: int = SEED_CALLS,
                     costs: Mapping[str, int] | None = None, **common) -> pd.DataFrame:
    """Run every variant for every T; one row per run.

    Parameters
    ----------
    variants : mapping of str to mapping
        Variant name to :class:`MembarrierLoop` keys (``ipi``, ``adaptive_threshold``,
        ``rq_lock``, ``placement``); default the seed's three (:data:`SEED_VARIANTS`).
    threads : iterable of int
        The values of T.
    calls : int
        Calls per run.
    costs : mapping of str to int, optional
        Engine costs (:func:`membarrier_costs`).
    **common
        Passed to :func:`run_membarrier` (``nr_cpus``, ``hz``, ``seed``, ...).

    Returns
    -------
    pandas.DataFrame
        A ``variant`` column and the keys of :func:`run_membarrier`.
    """
    rows = []
    for name, v in variants.items():
        for t in threads:
            row = run_membarrier(t, calls, v.get("ipi", "adaptive"), costs,
                                 threshold=v.get("adaptive_threshold", 1),
                                 rq_lock=v.get("rq_lock", False),
                                 how=v.get("placement", "spread"), **common)
            rows.append({"variant": name, **row})
    return pd.DataFrame(rows)


def run_membarrier_loop(workload: MembarrierLoop, *, nr_cpus: int, hz: int,
                        profile: str, platform_costs: Mapping[str, int] | None = None,
                        seed: int = 0) -> pd.DataFrame:
    """Run one ``membarrier_loop`` workload of a scenario variant: one row per T.

    Parameters
    ----------
    workload : MembarrierLoop
        The validated workload.
    nr_cpus : int
        hardware.nr_cpus.
    hz : int
        kernel.HZ.
    profile : str
        hardware.profile (must have a membarrier cost file).
    platform_costs : mapping of str to int, optional
        The variant's resolved platform costs (profile plus hardware.costs overrides).
    seed : int
        The scenario's seed.

    Returns
    -------
    pandas.DataFrame
        Columns of :func:`run_membarrier`, one row per value of ``workload.threads``.
    """
    workload.check_cpus(nr_cpus)
    costs = membarrier_costs(profile, platform_costs)
    rows = [run_membarrier(t, workload.calls, workload.ipi, costs,
                           threshold=workload.adaptive_threshold, rq_lock=workload.rq_lock,
                           nr_cpus=nr_cpus, per_socket=cpus_per_socket(profile), hz=hz,
                           seed=seed, how=workload.placement, caller_cpu=workload.caller_cpu)
            for t in workload.threads]
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------
# Calibration
# --------------------------------------------------------------------------

def engine_costs(fit: Mapping[str, float], estimates: Mapping[str, int]) -> dict[str, int]:
    """Turn the fitted quantities into the engine's costs, in ns.

    A single IPI's round trip ``ipi_rtt_ns`` (same socket) is
    ipi_send_ns + ipi_latency_ns + ipi_entry_ns + smp_mb_ns + csd_ack_ns.
    Queueing the csd on the target and seeing it unlocked are one cache-line
    transfer each, the same transfer the IPI-many handlers pass along
    (``cfd_line_ns``, the IPI-many table's slope); the share after the handler
    starts is :data:`IPI_RETURN_FRACTION`.
    """
    line = round(fit["cfd_line_ns"])
    rtt = round(fit["ipi_rtt_ns"])
    back = round(IPI_RETURN_FRACTION * rtt)
    costs = dict(estimates)
    costs.update(
        syscall_ns=round(fit["syscall_ns"]),
        cpumask_alloc_ns=round(fit["cpumask_alloc_ns"]),
        cfd_setup_ns=round(fit["cfd_setup_ns"]),
        cfd_line_ns=line,
        ipi_xsocket_ns=round(fit["ipi_xsocket_ns"]),
        ipi_send_ns=line,
        csd_ack_ns=line,
        ipi_entry_ns=back - line - estimates["smp_mb_ns"],
        ipi_latency_ns=rtt - line - back,
    )
    bad = [k for k, v in costs.items() if v < 0]
    if bad:
        raise ValueError("the fit gives negative costs: " + ", ".join(bad))
    return costs


@dataclass(frozen=True)
class MembarrierFit:
    """Least-squares fit of the model on seed 002's single and IPI-many tables."""

    fitted: dict
    """The fitted quantities (:data:`FITTED`), ns."""
    costs: dict
    """The engine's costs that follow (:func:`engine_costs`), ns."""
    threads: tuple
    """T of each table row."""
    single_s: tuple
    """Model, single IPIs, seconds for 10,000,000 calls."""
    many_s: tuple
    """Model, cpumask + IPI-many, seconds for 10,000,000 calls."""
    seed_single_s: tuple = SEED_SINGLE_S
    """The single-IPI table fitted."""
    seed_many_s: tuple = SEED_MANY_S
    """The IPI-many table fitted."""

    @property
    def residuals_s(self) -> np.ndarray:
        """Model minus seed, seconds: the single table's seven, then the IPI-many table's."""
        return np.r_[np.subtract(self.single_s, self.seed_single_s),
                     np.subtract(self.many_s, self.seed_many_s)]

    @property
    def rms_s(self) -> float:
        """Root mean square of the residuals, seconds."""
        return float(np.sqrt(np.mean(self.residuals_s ** 2)))

    def table(self) -> pd.DataFrame:
        """Model and seed side by side, one row per T."""
        r = self.residuals_s
        n = len(self.threads)
        return pd.DataFrame({"T": self.threads, "seed_single_s": self.seed_single_s,
                             "model_single_s": self.single_s, "single_resid_s": r[:n],
                             "seed_many_s": self.seed_many_s, "model_many_s": self.many_s,
                             "many_resid_s": r[n:]})


def _model_tables(costs: Mapping[str, int], per_socket: int) -> np.ndarray:
    """Steady-state seconds per 10,000,000 calls, single then IPI-many, without ticks."""
    out = []
    for mode in ("single", "many"):
        for t in SEED_THREADS:
            # Without ticks every call takes the same time: a few calls suffice.
            r = run_membarrier(t, 4, mode, costs, hz=0, per_socket=per_socket)
            out.append(r["per_call_ns"] * SEED_CALLS / 1e9)
    return np.array(out)


@functools.lru_cache(maxsize=None)
def calibrate(profile: str = "xeon-e5405-8cpu", xsocket: bool = True,
              tables: tuple = (SEED_SINGLE_S, SEED_MANY_S)) -> MembarrierFit:
    """Fit :data:`FITTED` on seed 002's single and IPI-many tables by least squares.

    The model is run without ticks, where every call takes the same time,
    linear in the fitted costs up to rounding to whole ns; Gauss-Newton steps
    with slopes from 1 ns differences converge in a few iterations. Costs are
    kept >= 0.

    Parameters
    ----------
    profile : str
        Profile whose estimated costs (:data:`_ESTIMATED`) are held fixed.
    xsocket : bool
        Fit the extra cost of a single IPI to the other socket; False fixes it
        at 0, to compare how much of the data it explains.
    tables : tuple of two tuples
        Seconds for 10,000,000 calls at T = 1..7: single IPIs, then cpumask +
        IPI-many; default seed 002's.

    Returns
    -------
    MembarrierFit
    """
    base = membarrier_costs(profile)
    estimates = {k: base[k] for k in _ESTIMATED + ("tick_ns",)}
    per_socket = cpus_per_socket(profile)
    seed = np.r_[tables[0], tables[1]]
    names = [n for n in FITTED if xsocket or n != "ipi_xsocket_ns"]
    # Start from the tables' own slopes and intercepts.
    x = {"syscall_ns": 200.0, "ipi_rtt_ns": 1300.0, "ipi_xsocket_ns": 0.0,
         "cpumask_alloc_ns": 300.0, "cfd_setup_ns": 300.0, "cfd_line_ns": 150.0}

    def model(p):
        return _model_tables(engine_costs(p, estimates), per_socket)

    for _ in range(50):
        y = model(x)
        jac = np.column_stack([(model({**x, n: round(x[n]) + 1}) - model({**x, n: round(x[n])}))
                               for n in names])
        step = np.linalg.lstsq(jac, seed - y, rcond=None)[0]
        # No cost is negative: a step past 0 stops there.
        new = {**x, **{n: max(0.0, x[n] + s) for n, s in zip(names, step)}}
        if all(round(new[n]) == round(x[n]) for n in names):
            break
        x = new
    fitted = {n: round(x[n]) for n in FITTED}
    costs = engine_costs(fitted, estimates)
    y = _model_tables(costs, per_socket)
    n = len(SEED_THREADS)
    return MembarrierFit(fitted=fitted, costs=costs, threads=SEED_THREADS,
                         single_s=tuple(y[:n].tolist()), many_s=tuple(y[n:].tolist()),
                         seed_single_s=tuple(tables[0]), seed_many_s=tuple(tables[1]))
