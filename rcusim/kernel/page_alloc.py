"""The page allocator's per-CPU page lists, sized as Linux 6.12 sizes them (mm/page_alloc.c).

Order-0 pages reach kmalloc()'s slabs and kvfree_rcu()'s bulk pages through a per-CPU list
(``struct per_cpu_pages``): an allocation on an empty list takes a batch from the zone
(``rmqueue_bulk()``), a free stays on the freeing CPU's list until the list reaches ``high``.
``si_mem_available()`` counts the zone's free pages, so pages parked on those lists count as
used. The engine's side is cython_core/page_alloc.pxi; this module gives its sizes.

rcusim models one zone holding all of the machine's memory. Its managed pages are the memory's
pages less the ``struct page`` array that describes them (64 bytes a page, mm/mm_init.c's
memmap); the kernel image and firmware reservations are not taken off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PAGE_SIZE = 4096
STRUCT_PAGE_BYTES = 64
"""sizeof(struct page) on x86_64 without debug options: the memmap's share of each page."""
PCP_BATCH_SCALE_MAX = 5
"""CONFIG_PCP_BATCH_SCALE_MAX (mm/Kconfig default 5; the twin's image has 5)."""
MIN_PERCPU_PAGELIST_HIGH_FRACTION = 8
"""mm/page_alloc.c: pcp->high_max is the zone's managed pages over this, split over the CPUs."""
WATERMARK_SCALE_FACTOR = 10
"""vm.watermark_scale_factor's default (in 1/10,000 of the zone)."""
SLUB_MAX_ORDER = 3
"""PAGE_ALLOC_COSTLY_ORDER: slub_max_order's default (mm/slub.c)."""


@dataclass(frozen=True)
class PcpSizes:
    """One zone's per-CPU list sizes (``zone_set_pageset_high_and_batch()``)."""

    managed_pages: int
    low_wmark: int
    batch: int
    high_min: int
    high_max: int


def managed_pages(memory_mb: int) -> int:
    """The zone's managed pages: the memory's pages less their struct pages."""
    pages = memory_mb * (1 << 20) // PAGE_SIZE
    return pages - pages * STRUCT_PAGE_BYTES // PAGE_SIZE


def low_wmark_pages(managed: int) -> int:
    """The zone's low watermark: calculate_min_free_kbytes() (int_sqrt(lowmem_kbytes * 16),
    clamped to 128..262144 kB) as the min watermark of the only zone, plus
    __setup_per_zone_wmarks()' max(min / 4, managed * watermark_scale_factor / 10000)."""
    min_free_kbytes = min(max(math.isqrt(managed * (PAGE_SIZE >> 10) * 16), 128), 262144)
    wmark_min = min_free_kbytes >> 2
    return wmark_min + max(wmark_min >> 2, managed * WATERMARK_SCALE_FACTOR // 10000)


def zone_batchsize(managed: int) -> int:
    """zone_batchsize(): about a quarter of a 1 MB worth of pages, one less than a power of two."""
    batch = max(min(managed >> 10, (1 << 20) // PAGE_SIZE) // 4, 1)
    return (1 << ((batch + batch // 2).bit_length() - 1)) - 1


def zone_highsize(total_pages: int, batch: int, nr_cpus: int) -> int:
    """zone_highsize() after boot (cpu_online 0): total_pages split over the zone's CPUs, at
    least 4 batches."""
    return max(total_pages // nr_cpus, batch << 2)


def pcp_sizes(memory_mb: int, nr_cpus: int, switches) -> PcpSizes:
    """batch, high_min and high_max of each CPU's list in the release of `switches`: from v6.7
    (pcp_high_auto) high moves between the low watermark's share and an eighth of the zone's;
    v5.14-v6.6 (pcp_free_factor) it is the low watermark's share; before, 6 batches."""
    managed = managed_pages(memory_mb)
    low = low_wmark_pages(managed)
    batch = max(1, zone_batchsize(managed))
    high_min = zone_highsize(low, batch, nr_cpus) if switches.pcp_free_factor else 6 * batch
    high_max = (zone_highsize(managed // MIN_PERCPU_PAGELIST_HIGH_FRACTION, batch, nr_cpus)
                if switches.pcp_high_auto else high_min)
    return PcpSizes(managed_pages=managed, low_wmark=low, batch=batch, high_min=high_min, high_max=high_max)


def min_partial(size: int) -> int:
    """SLUB's s->min_partial: ilog2(size) / 2, within MIN_PARTIAL 5 and MAX_PARTIAL 10
    (calculate_sizes() -> set_min_partial())."""
    return min(max((size.bit_length() - 1) // 2, 5), 10)


def cpu_partial_slabs(size: int) -> int:
    """SLUB's s->cpu_partial_slabs for an order-0 cache of size-byte objects: twice the
    cpu_partial objects of set_cpu_partial() (120 below 256 bytes, 52 below 1024, 24 below a
    page, 6 beyond) over the objects of a slab, rounded up (slub_set_cpu_partial())."""
    objects = 120 if size < 256 else 52 if size < 1024 else 24 if size < PAGE_SIZE else 6
    return -(-objects * 2 // (PAGE_SIZE // size))


def slab_order(size: int, nr_cpus: int) -> int:
    """calculate_order() of SLUB for a power-of-two kmalloc cache: the smallest order whose slab
    holds 4 * (fls(nr_cpu_ids) + 1) objects (slub_min_objects' default), at most slub_max_order."""
    min_objects = 4 * (nr_cpus.bit_length() + 1)
    max_objects = (PAGE_SIZE << SLUB_MAX_ORDER) // size
    min_objects = min(min_objects, max_objects)
    order = 0
    while (PAGE_SIZE << order) // size < min_objects:
        order += 1
    return order
