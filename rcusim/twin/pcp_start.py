"""What each CPU's unmovable order-0 page list holds as rcuscale's kfree test begins.

rcusim's page allocator (cython_core/page_alloc.pxi) starts each CPU's list with the profile's
``pcp_start_pages``. The list's length is not exported by the kernel (/proc/zoneinfo's
``count`` sums every migratetype), so it is read from the kfree test's own page events,
booted with ``rcusim kernel ... --trace-event kmem/mm_page_alloc --trace-event
kmem/mm_page_free --trace-event kmem/mm_page_alloc_zone_locked --trace-event
kmem/mm_page_pcpu_drain``:

* from the flood's start (the run's window) each CPU's order-0 unmovable allocations and the
  pages it gives back to the zone (``mm_page_pcpu_drain``: ``free_pcppages_bulk()`` at the high
  mark or in vmstat's decay) take pages off its list, and its order-0 frees put pages on it;
* the first refill from the zone (``mm_page_alloc_zone_locked`` with ``percpu_refill=1``,
  ``rmqueue_bulk()``) comes when the list is empty, so the allocations less the frees up to it
  are what the list held at the start;
* a CPU whose list never empties in the run gives only a lower bound (the most its list was
  drawn down): a right-censored sample.

The value is the Kaplan-Meier median over every CPU of every boot (scipy.stats.ecdf), which
takes the censored samples for what they are. Frees of movable pages would count as frees to
the unmovable list: the flood's own frees are unmovable, so the error is small and makes the
estimate low.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass

import numpy as np

from rcusim.errors import ScenarioError
from rcusim.results.ftrace_read import read_ftrace
from rcusim.twin.collect import kept_boots

__all__ = ["PcpStart", "list_drawdown", "pcp_start_pages"]

_REFILL = "order=0 migratetype=0 percpu_refill=1"


@dataclass(frozen=True)
class PcpStart:
    """The estimate and its samples: drawn down until the first refill (emptied) or until the
    run's end (censored)."""

    value: int
    emptied: tuple[int, ...]
    censored: tuple[int, ...]

    def source(self, command: str) -> str:
        return (f"Kaplan-Meier median of what each CPU's unmovable order-0 list held as rcuscale's kfree "
                f"test began: the flood's order-0 unmovable mm_page_alloc and mm_page_pcpu_drain less its "
                f"order-0 mm_page_free on that CPU up to its first percpu_refill (the list empty then; {len(self.emptied)} "
                f"CPUs: {', '.join(map(str, self.emptied))} pages), or the most drawn down where the "
                f"list never emptied ({len(self.censored)} CPUs, right-censored: "
                f"{', '.join(map(str, self.censored))}) [rcusim.twin.pcp_start, on {command}]")


def list_drawdown(lines, t0_ns: int, t1_ns: int) -> dict[int, tuple[int, bool]]:
    """Per CPU, from t0_ns: pages taken off its unmovable list up to its first refill (True), or
    the most ever taken off by t1_ns if there was none (False)."""
    ev = read_ftrace(lines)
    ev = ev[(ev["t_ns"] >= t0_ns) & (ev["t_ns"] <= t1_ns)]
    out = {}
    for cpu, e in ev.groupby("cpu", sort=True):
        alloc = ((e["event"] == "mm_page_alloc") & e["payload"].str.contains("order=0 migratetype=0 ",
                                                                           regex=False)).to_numpy()
        free = ((e["event"] == "mm_page_free") & e["payload"].str.contains("order=0", regex=False)).to_numpy()
        # free_pcppages_bulk() giving pages back to the zone (at the high mark, or vmstat's decay)
        drain = ((e["event"] == "mm_page_pcpu_drain")
                 & e["payload"].str.contains("order=0 migratetype=0", regex=False)).to_numpy()
        refill = ((e["event"] == "mm_page_alloc_zone_locked")
                  & e["payload"].str.contains(_REFILL, regex=False)).to_numpy()
        drawn = np.cumsum(alloc.astype(np.int64) + drain.astype(np.int64) - free.astype(np.int64))
        first = np.flatnonzero(refill)
        if len(first):
            out[int(cpu)] = (int(drawn[first[0]]), True)
        else:
            out[int(cpu)] = (int(max(drawn.max(initial=0), 0)), False)
    return out


def pcp_start_pages(run_dirs, variant: str) -> PcpStart:
    """The estimate from every boot of `variant` in one or more ``rcusim kernel`` run directories."""
    boots = kept_boots(run_dirs, variant)
    emptied, censored = [], []
    for boot, window in boots:
        with gzip.open(boot / "trace.txt.gz", "rt") as f:
            for pages, empty in list_drawdown(f, window["t0_ns"], window["t1_ns"]).values():
                (emptied if empty else censored).append(pages)
    if not emptied:
        raise ScenarioError(f"no CPU's list emptied in {len(boots)} boots of {variant!r}: no refill traced", key="--pcp-from",
                            allowed="boots of rcuscale's kfree test traced with kmem/mm_page_alloc, "
                                    "mm_page_free and mm_page_alloc_zone_locked")
    from scipy import stats  # only here: its import takes a second

    data = stats.CensoredData(uncensored=emptied, right=censored)
    km = stats.ecdf(data).sf
    # The median: the least drawdown at which the estimated survival falls to 1/2 or below.
    below = np.flatnonzero(km.probabilities <= 0.5)
    if not len(below):
        raise ScenarioError(f"fewer than half of the {len(emptied) + len(censored)} lists emptied in {len(boots)} "
                            f"boots of {variant!r}: the median is past every sample", key="--pcp-from",
                            allowed="boots of a flood long enough to empty most lists")
    value = int(km.quantiles[below[0]])
    return PcpStart(value=value, emptied=tuple(sorted(emptied)), censored=tuple(sorted(censored)))
