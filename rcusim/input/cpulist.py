"""CPU lists in the kernel's syntax (``rcu_nocbs=``, ``nohz_full=``, workload CPUs).

The syntax is the one ``bitmap_parselist()`` (lib/bitmap-str.c) accepts:

* regions separated by commas (the kernel also accepts white space);
* a region is a CPU number ``8``, a range ``0-15``, or the keyword ``all``
  (any case), meaning every CPU;
* a range or ``all`` may carry a pattern ``:used/group``: in each group of
  ``group`` CPUs starting at the range start, the first ``used`` are taken.
  ``0-15:2/4`` is 0,1,4,5,8,9,12,13;
* ``N`` stands for the last CPU (``nr_cpus - 1``) wherever a number may stand.

The kernel has no stride-only form: ``0-15:2`` is refused, as the kernel
refuses it.
"""

from __future__ import annotations

import re

from rcusim.errors import ScenarioError

__all__ = ["parse_cpulist", "format_cpulist", "CPULIST_ALLOWED"]

CPULIST_ALLOWED = ("CPU numbers and ranges separated by commas such as 0-3,8,10-15; "
                   "a range pattern a-b:used/group such as 0-15:2/4; 'all'; "
                   "and 'N' for the last CPU")

_NUM = r"(?:N|\d+)"
_REGION = re.compile(
    rf"^(?:(?P<all>[aA][lL][lL])|(?P<start>{_NUM})(?:-(?P<end>{_NUM}))?)"
    rf"(?::(?P<used>{_NUM})/(?P<group>{_NUM}))?$"
)


def parse_cpulist(text: str, nr_cpus: int) -> tuple[int, ...]:
    """Parse a kernel CPU list.

    Parameters
    ----------
    text : str
        The list, e.g. ``"0-3,8,10-15"``, ``"0-15:2/4"``, ``"all"``, ``"1-N"``.
        The empty string is the empty list, as in the kernel.
    nr_cpus : int
        Number of CPUs; every CPU must be below it, and ``N`` means
        ``nr_cpus - 1``.

    Returns
    -------
    tuple of int
        The CPUs, sorted, without duplicates.

    Raises
    ------
    ScenarioError
        If the text is not a CPU list or names a CPU >= `nr_cpus`. The error
        carries no key path; the caller adds it.
    """
    if not isinstance(text, str):
        raise ScenarioError(f"{text!r} is not a CPU list", allowed=CPULIST_ALLOWED)
    if nr_cpus < 1:
        raise ValueError(f"nr_cpus must be at least 1, not {nr_cpus}")
    last = nr_cpus - 1
    cpus: set[int] = set()
    for region in re.split(r"[\s,]+", text.strip()):
        if not region:
            continue
        start, end, used, group = _parse_region(region, text, last)
        # bitmap_check_region(): an empty range or a bad pattern is invalid,
        # a range past the last bit is out of range.
        if start > end or group == 0 or used > group:
            raise ScenarioError(f"{text!r} is not a valid CPU list: bad region {region!r}",
                                allowed=CPULIST_ALLOWED)
        if end > last:
            raise ScenarioError(f"CPU {end} in {text!r} is out of range",
                                allowed=f"CPUs 0 to {last}")
        for first in range(start, end + 1, group):
            cpus.update(range(first, min(end + 1, first + used)))
    return tuple(sorted(cpus))


def _parse_region(region: str, text: str, last: int) -> tuple[int, int, int, int]:
    """Split one region into (start, end, used, group)."""
    m = _REGION.match(region)
    if m is None:
        raise ScenarioError(f"{text!r} is not a valid CPU list: bad region {region!r}",
                            allowed=CPULIST_ALLOWED)

    def num(s: str) -> int:
        return last if s == "N" else int(s)

    if m["all"]:
        start, end = 0, last
    else:
        start = num(m["start"])
        if m["end"] is None:
            if m["used"] is not None:
                # The kernel takes a pattern only after a range or "all".
                raise ScenarioError(
                    f"{text!r} is not a valid CPU list: a pattern needs a range, "
                    f"as in 0-15:2/4", allowed=CPULIST_ALLOWED)
            return start, start, start + 1, start + 1
        end = num(m["end"])
    if m["used"] is None:
        return start, end, end + 1, end + 1
    return start, end, num(m["used"]), num(m["group"])


def format_cpulist(cpus) -> str:
    """Format CPUs as a compact kernel CPU list.

    Parameters
    ----------
    cpus : iterable of int
        CPU numbers.

    Returns
    -------
    str
        E.g. ``"0-3,8,10-15"``; the empty string for no CPUs.
    """
    ordered = sorted(set(cpus))
    parts = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)
