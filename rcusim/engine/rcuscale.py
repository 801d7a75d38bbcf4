"""rcuscale's kfree test and GP-writer test: the workloads' low-level values and
rcuscale's output, with kvm-recheck-rcuscale.sh's summary of the writer test.

``kernel/rcu/rcuscale.c`` (``kfree_scale_thread()``; ``rcuperf.c``'s ``kfree_perf_thread()``
from v5.6 to v5.9) starts kfree_nthreads kthreads; each loops kfree_loops times over
kfree_alloc_num ``kmalloc()`` + ``kfree_rcu()`` calls. The last thread to finish prints::

    Total time taken by all kfree'ers: N ns, loops: N, batches: N, memory footprint: NMB

(without the memory footprint before v5.7)

* time: its own end minus its own start (queueing time, not reclaim time);
* batches: ``rcu_seq_diff()`` of ``rcu_state.gp_seq`` read by the last thread to
  start and by the last to finish (grace periods elapsed, plus one);
* memory footprint: ``(mem_begin - mem_during) >> (20 - PAGE_SHIFT)``, where
  ``mem_during`` is a running two-point average of ``si_mem_available()``
  taken at the loops where ``loop % (kfree_loops / 4) == 0``.

The engine runs the threads and the kvfree_rcu() machinery (``rcusim._core``,
``cython_core/kvfree_rcu.pxi``, ``kfree_scale.pxi``); this module converts the workload for it and
computes the line from what it records, as rcuscale computes it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from rcusim.input.workloads import WRITER_NAME, SyncLoop
from rcusim.input.rcuscale_params import MAX_MEAS, MIN_MEAS, compute_real
from rcusim.kernel.seq import rcu_seq_diff

__all__ = ["kfree_metrics", "rcuscale_line", "kvfree_bulk_max_entr",
           "kmalloc_size", "compute_real", "MIN_MEAS", "MAX_MEAS", "writer_durations", "writer_lines", "writer_tasks",
           "rcuscale_writer_lines", "recheck_lines"]

PAGE_SHIFT = 12

#: sizeof(struct kfree_obj): char[8] + struct rcu_head (two pointers).
KFREE_OBJ_BYTES = 24

#: kmalloc() size classes of SLUB up to KMALLOC_SHIFT_HIGH = PAGE_SHIFT + 1.
KMALLOC_SIZES = (8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192)

#: Memory-over-time sampling period (simulated ns).
MEMORY_SAMPLE_NS = 1_000_000

KFREE_LINE = "Total time taken by all kfree'ers: {total_time_ns} ns, loops: {loops}, batches: {batches}"
#: What the line ends with from v5.7 (kfree_test_footprint).
KFREE_FOOTPRINT = ", memory footprint: {memory_footprint_mb}MB"


def kmalloc_size(nbytes: int) -> int:
    """The kmalloc size class serving an allocation of `nbytes`."""
    return next(size for size in KMALLOC_SIZES if size >= nbytes)


def kvfree_bulk_max_entr(switches) -> int:
    """KVFREE_BULK_MAX_ENTR (KFREE_BULK_MAX_ENTR before v5.9): pointers in one 4 KiB page
    beside the header.

    v5.7: nr_records, next and head_free_debug share the page: 24 B -> 509;
    v5.9: {nr_records, next} = 16 B -> 510; with a list_head (v6.2) 24 B -> 509;
    with the polled reclaim's unsigned long gp_snap = 32 B -> 508; with gp_snap a struct
    rcu_gp_oldstate (v6.5: rgos_norm and rgos_exp) = 40 B -> 507.
    """
    header = 24 if switches.kvfree_bulk_list_head or not switches.kvfree_page_cache else 16
    if switches.kvfree_gp_snap_full:
        header += 16
    elif switches.kvfree_polled:
        header += 8
    return ((1 << PAGE_SHIFT) - header) // 8


def kfree_metrics(kv: dict, loops: int, switches) -> dict:
    """rcuscale's printed figures from the engine's kvfree record (None if not finished, and
    the footprint None for a release whose test does not print it)."""
    if not kv["finished"]:
        return {"total_time_ns": None, "loops": loops, "batches": None, "memory_footprint_mb": None}
    return {
        "total_time_ns": int(kv["end_time_ns"] - kv["start_time_ns"]),
        "loops": loops,
        "batches": rcu_seq_diff(kv["gp_seq_finished"], kv["gp_seq_started"]),
        # (mem_begin - mem_during) >> (20 - PAGE_SHIFT), on long long values.
        "memory_footprint_mb": (int(kv["mem_begin_pages"] - kv["mem_during_pages"]) >> (20 - PAGE_SHIFT)
                                if switches.kfree_test_footprint else None),
    }


def memory_frame(kv: dict) -> pd.DataFrame:
    """Bytes allocated by kvfree_rcu() users and not yet freed, over simulated time."""
    return pd.DataFrame({"t_ns": np.asarray(kv["mem_t_ns"], dtype=np.int64),
                         "bytes": np.asarray(kv["mem_bytes"], dtype=np.int64)})


def rcuscale_line(metrics: dict) -> str:
    """rcuscale's pr_alert() line for one run: without the footprint before v5.7."""
    line = KFREE_LINE.format(**metrics)
    if metrics["memory_footprint_mb"] is not None:
        line += KFREE_FOOTPRINT.format(**metrics)
    return line


# --------------------------------------------------------------------------
# The GP-writer test (rcu_scale_writer(), rcu_scale_cleanup())
# --------------------------------------------------------------------------
SCALE_FLAG = "-scale:"


def gp_seq_at(gps: pd.DataFrame, t_ns: int, expedited: bool) -> int:
    """rcu_state.gp_seq (or expedited_sequence) as a task reads it at `t_ns`: the sequence
    number of the last grace period started by then, with its state bits while it runs."""
    rows = gps[gps["expedited"] == expedited]
    started = rows[rows["t_start_ns"] <= t_ns]
    if started.empty:
        return int(rows["gp_seq"].min()) - 1 if len(rows) else 0
    last = started.iloc[-1]
    seq = int(last["gp_seq"])
    return seq if int(last["t_end_ns"]) > t_ns else (seq | 3) + 1


def writer_durations(calls_ns: np.ndarray) -> np.ndarray:
    """What a writer's array of MAX_MEAS durations holds after these calls: past its
    last slot, each call overwrites that slot."""
    return np.append(calls_ns[:MAX_MEAS - 1], calls_ns[MAX_MEAS - 1:][-1:])


def writer_tasks(spec) -> range:
    """The engine's entity numbers of an rcuscale_writer's writers: sync_loop tasks are
    numbered in workload order, and its writers are the sync_loop of its name."""
    name = spec.rcuscale_writer.name or WRITER_NAME
    first = 0
    for wl in spec.workloads:
        if isinstance(wl, SyncLoop):
            if wl.name == name:
                return range(first, first + wl.tasks)
            first += wl.tasks
    raise LookupError(f"no sync_loop {name!r}: the variant runs no rcuscale_writer")


def rcuscale_writer_lines(spec, requests: pd.DataFrame, gps: pd.DataFrame) -> list[str]:
    """rcu_scale_cleanup()'s lines for a variant's rcuscale_writer workload."""
    tasks = writer_tasks(spec)
    mine = requests[(requests["task"] >= tasks.start) & (requests["task"] < tasks.stop)]
    w = spec.rcuscale_writer
    return writer_lines(mine, gps, gp_exp=w.gp_exp, gp_async=w.gp_async)


def writer_lines(requests: pd.DataFrame, gps: pd.DataFrame, gp_exp: bool, gp_async: bool = False,
                 scale_type: str = "rcu") -> list[str]:
    """rcu_scale_cleanup()'s lines: its complaint about gp_exp with gp_async, each writer's
    count, the start/end/gps/batches line, then every writer-duration. Writer i is the i-th
    task; its durations are its calls in order, as its array of MAX_MEAS keeps them (past the
    last slot, each call overwrites it). With gp_exp, "batches" counts expedited GPs even
    when gp_async makes the writers call call_rcu_hurry(), as rcuscale reads them."""
    lines = [f"{scale_type}{SCALE_FLAG}!!! No expedited async GPs, so went with async!"] if gp_exp and gp_async else []
    by_task = [writer_durations((grp["t_end_ns"] - grp["t_start_ns"]).to_numpy())
               for _, grp in requests.sort_values(["task", "t_start_ns"]).groupby("task")]
    ngps = 0
    for i, d in enumerate(by_task):
        lines.append(f"{scale_type}{SCALE_FLAG} writer {i} gps: {len(d)}")
        ngps += len(d)
    t_started = int(requests.groupby("task")["t_start_ns"].min().max())
    # t_rcu_scale_writer_finished: the return of the last writer to be done, its last call;
    # the writers done before it return later, from the call in which they find it done.
    t_finished = int(requests.groupby("task")["t_end_ns"].max().min())
    b_started, b_finished = (gp_seq_at(gps, t, gp_exp) for t in (t_started, t_finished))
    if gp_exp:
        b_started, b_finished = b_started // 2, b_finished // 2  # exp_completed() / 2
    batches = rcu_seq_diff(b_finished, b_started) if not gp_exp else b_finished - b_started
    lines.append(f"{scale_type}{SCALE_FLAG} start: {t_started} end: {t_finished} duration: "
                 f"{t_finished - t_started} gps: {ngps} batches: {batches}")
    for i, d in enumerate(by_task):
        for j, ns in enumerate(d):
            lines.append(f"{scale_type}{SCALE_FLAG} {i:4d} writer-duration: {j:5d} {int(ns)}")
    return lines


def _awk_num(x: float) -> str:
    """awk's print of a number: integers as such, others with OFMT %.6g."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e16 else f"{x:.6g}"


def recheck_lines(lines: list[str]) -> list[str]:
    """kvm-recheck-rcuscale.sh's summary of rcuscale's console lines (its awk program)."""
    gptimes, total, ngps, nbatches = [], 0.0, 0, 0
    for line in lines:
        f = line.split()
        if SCALE_FLAG in line and " gps: " in line and " batches:" in line and len(f) >= 9:
            ngps, nbatches = int(f[8]), 1
        elif SCALE_FLAG in line and "writer-duration" in line:
            gptimes.append(int(f[4]) / 1000.0)
            total += int(f[4]) / 1000.0
    n = len(gptimes)
    if n == 0:
        return ["No rcuscale records found???"]
    gptimes.sort()
    pct = {q: max(int(n * q / 100), 1) for q in (50, 90, 99)}
    div = 10 ** int(math.log(gptimes[pct[90] - 1]) / math.log(10) + .5) / 100
    out = [f"Histogram bucket size: {_awk_num(div)}"]
    last, count = gptimes[0] - 10, 0
    for g in gptimes:
        current = div * int(g / div)
        if last == current:
            count += 1
        else:
            if count > 0:
                out.append(f"{_awk_num(last)} {count}")
            count, last = 1, current
    if count > 0:
        out.append(f"{_awk_num(last)} {count}")
    out += [f"Average grace-period duration: {_awk_num(total / n)} microseconds",
            f"Minimum grace-period duration: {_awk_num(gptimes[0])}",
            f"50th percentile grace-period duration: {_awk_num(gptimes[pct[50] - 1])}",
            f"90th percentile grace-period duration: {_awk_num(gptimes[pct[90] - 1])}",
            f"99th percentile grace-period duration: {_awk_num(gptimes[pct[99] - 1])}",
            f"Maximum grace-period duration: {_awk_num(gptimes[-1])}",
            f"Grace periods: {ngps} Batches: {nbatches} Ratio: {_awk_num(ngps / nbatches)}",
            "Computed from rcuscale printk output."]
    return out
