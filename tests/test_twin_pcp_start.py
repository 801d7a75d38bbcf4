"""rcusim/twin/pcp_start.py: what each CPU's unmovable page list held as the kfree test began,
read from the test's page events."""

import gzip
import json

import pytest

from rcusim.errors import ScenarioError
from rcusim.twin.pcp_start import list_drawdown, pcp_start_pages


def _line(cpu: int, t_us: int, event: str, payload: str) -> str:
    return f"   kfree_scale_thr-83      [{cpu:03d}] d..3.  5.{t_us:06d}: {event}: {payload}\n"


ALLOC = "page=(____ptrval____) pfn=0x18b1 order=0 migratetype=0 gfp_flags=GFP_KERNEL"
MOVABLE = "page=(____ptrval____) pfn=0x18b1 order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE"
FREE = "page=(____ptrval____) pfn=0x4e2b order=0"
REFILL = "page=(____ptrval____) pfn=0x46ca order=0 migratetype=0 percpu_refill=1"
DRAIN = "page=(____ptrval____) pfn=0x4e2b order=0 migratetype=0"


def _boot(cpu0_allocs: int, cpu0_frees: int, refill: bool) -> list[str]:
    """CPU 0 takes cpu0_allocs pages and gets cpu0_frees back, then refills if `refill`; CPU 1
    draws its list down by 3 and never refills. An allocation before the window and a movable
    one inside do not count."""
    lines = [_line(0, 10, "mm_page_alloc", ALLOC)]
    t = 100
    for k in range(cpu0_allocs):
        lines.append(_line(0, t, "mm_page_alloc", ALLOC)); t += 1
        if k < cpu0_frees:
            lines.append(_line(0, t, "mm_page_free", FREE)); t += 1
    lines.append(_line(0, t, "mm_page_alloc", MOVABLE)); t += 1
    if refill:
        lines.append(_line(0, t, "mm_page_alloc_zone_locked", REFILL)); t += 1
        lines.append(_line(0, t, "mm_page_alloc", ALLOC)); t += 1
    for k in range(5):
        lines.append(_line(1, t, "mm_page_alloc", ALLOC)); t += 1
    lines += [_line(1, t, "mm_page_free", FREE), _line(1, t + 1, "mm_page_free", FREE)]
    return lines


def test_a_list_emptied_gives_its_start_and_one_never_emptied_a_lower_bound():
    got = list_drawdown(_boot(7, 2, refill=True), 5_000_050_000, 5_999_999_000)
    assert got == {0: (5, True), 1: (5, False)}
    assert list_drawdown(_boot(7, 2, refill=False), 5_000_050_000, 5_999_999_000)[0] == (5, False)


def test_pages_given_back_to_the_zone_left_the_list_too():
    """Two pages drained (free_pcppages_bulk()) before the refill: the list held two more."""
    lines = _boot(7, 2, refill=True)
    lines.insert(3, _line(0, 99, "mm_page_pcpu_drain", DRAIN))
    lines.insert(3, _line(0, 99, "mm_page_pcpu_drain", DRAIN))
    assert list_drawdown(lines, 5_000_050_000, 5_999_999_000)[0] == (7, True)


def _run(tmp_path, boots):
    for k, lines in enumerate(boots):
        d = tmp_path / "raw" / "kfree" / f"boot-{k}"
        d.mkdir(parents=True)
        (d / "window.json").write_text(json.dumps({"t0_ns": 5_000_050_000, "t1_ns": 5_999_999_000}))
        with gzip.open(d / "trace.txt.gz", "wt") as f:
            f.writelines(lines)
    return tmp_path


def test_the_estimate_is_the_kaplan_meier_median(tmp_path):
    """Emptied lists at 3, 4 and 13 pages, and three censored at 5 (CPU 1 of each boot): the
    survival falls 1 -> 5/6 at 3 and -> 4/6 at 4; the censored ones leave at 5, so it stays above
    1/2 until 13, the median. The emptied ones alone would give 4, all six taken as exact 5."""
    run = _run(tmp_path, [_boot(n + 2, 2, refill=True) for n in (3, 4, 13)])
    est = pcp_start_pages(run, "kfree")
    assert est.emptied == (3, 4, 13) and est.censored == (5, 5, 5)
    assert est.value == 13


def test_a_median_past_every_sample_is_refused(tmp_path):
    """One list of four emptied (after 3 pages), three never did: the survival stays at 3/4."""
    run = _run(tmp_path, [_boot(5, 2, refill=True), _boot(4, 0, refill=False)])
    with pytest.raises(ScenarioError, match="fewer than half"):
        pcp_start_pages(run, "kfree")


def test_boots_without_a_refill_are_refused(tmp_path):
    run = _run(tmp_path, [_boot(4, 0, refill=False)])
    with pytest.raises(ScenarioError, match="--pcp-from"):
        pcp_start_pages(run, "kfree")
