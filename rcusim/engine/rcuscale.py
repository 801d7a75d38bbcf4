"""rcuscale's kfree test: the workload's low-level values and rcuscale's output line.

``kernel/rcu/rcuscale.c`` (``kfree_scale_thread()``) starts kfree_nthreads
kthreads; each loops kfree_loops times over kfree_alloc_num ``kmalloc()`` +
``kfree_rcu()`` calls. The last thread to finish prints::

    Total time taken by all kfree'ers: N ns, loops: N, batches: N, memory footprint: NMB

* time: its own end minus its own start (queueing time, not reclaim time);
* batches: ``rcu_seq_diff()`` of ``rcu_state.gp_seq`` read by the last thread to
  start and by the last to finish (grace periods elapsed, plus one);
* memory footprint: ``(mem_begin - mem_during) >> (20 - PAGE_SHIFT)``, where
  ``mem_during`` is a running two-point average of ``si_mem_available()``
  taken at the loops where ``loop % (kfree_loops / 4) == 0``.

The engine runs the threads and the kvfree_rcu() machinery (``rcusim._core``,
``cython_core/kvfree.pxi``); this module converts the workload for it and
computes the line from what it records, as rcuscale computes it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rcusim.kernel.seq import rcu_seq_diff

__all__ = ["kfree_metrics", "rcuscale_line", "kvfree_bulk_max_entr",
           "kmalloc_size", "compute_real"]

PAGE_SHIFT = 12

#: sizeof(struct kfree_obj): char[8] + struct rcu_head (two pointers).
KFREE_OBJ_BYTES = 24

#: kmalloc() size classes of SLUB up to KMALLOC_SHIFT_HIGH = PAGE_SHIFT + 1.
KMALLOC_SIZES = (8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192)

#: rcutree.rcu_min_cached_objs default: bulk pages cached per CPU.
RCU_MIN_CACHED_OBJS = 5

#: Memory-over-time sampling period (simulated ns).
MEMORY_SAMPLE_NS = 1_000_000

KFREE_LINE = ("Total time taken by all kfree'ers: {total_time_ns} ns, loops: {loops}, "
              "batches: {batches}, memory footprint: {memory_footprint_mb}MB")


def compute_real(n: int, online: int) -> int:
    """rcuscale's compute_real(): n if n >= 0, else online + 1 + n, at least 1."""
    if n >= 0:
        return n
    return max(online + 1 + n, 1)


def kmalloc_size(nbytes: int) -> int:
    """The kmalloc size class serving an allocation of `nbytes`."""
    return next(size for size in KMALLOC_SIZES if size >= nbytes)


def kvfree_bulk_max_entr(switches) -> int:
    """KVFREE_BULK_MAX_ENTR: pointers in one 4 KiB page after the header.

    v6.1: {nr_records, next} = 16 B -> 510; with a list_head = 24 B -> 509;
    with the polled reclaim's unsigned long gp_snap = 32 B -> 508.
    """
    header = 24 if switches.kvfree_bulk_list_head else 16
    if switches.kvfree_polled:
        header += 8
    return ((1 << PAGE_SHIFT) - header) // 8


def kfree_metrics(kv: dict, loops: int) -> dict:
    """rcuscale's printed figures from the engine's kvfree record (None if not finished)."""
    if not kv["finished"]:
        return {"total_time_ns": None, "loops": loops, "batches": None, "memory_footprint_mb": None}
    return {
        "total_time_ns": int(kv["end_time_ns"] - kv["start_time_ns"]),
        "loops": loops,
        "batches": rcu_seq_diff(kv["gp_seq_finished"], kv["gp_seq_started"]),
        # (mem_begin - mem_during) >> (20 - PAGE_SHIFT), on long long values.
        "memory_footprint_mb": int(kv["mem_begin_pages"] - kv["mem_during_pages"]) >> (20 - PAGE_SHIFT),
    }


def memory_frame(kv: dict) -> pd.DataFrame:
    """Bytes allocated by kvfree_rcu() users and not yet freed, over simulated time."""
    return pd.DataFrame({"t_ns": np.asarray(kv["mem_t_ns"], dtype=np.int64),
                         "bytes": np.asarray(kv["mem_bytes"], dtype=np.int64)})


def rcuscale_line(metrics: dict) -> str:
    """rcuscale's pr_alert() line for one run."""
    return KFREE_LINE.format(**metrics)
