"""cython_core/page_alloc.pxi and rcusim/kernel/page_alloc.py: the page allocator's per-CPU
lists, which a kfree_rcu() flood's slabs and bulk pages go through, and the footprint
rcuscale reads from them (si_mem_available())."""

import pytest

from rcusim.engine.simulate import run_engine
from rcusim.errors import ScenarioError
from rcusim.input.profiles import profile_pcp_start_pages
from rcusim.input.releases import parse_release, release_switches
from rcusim.kernel.page_alloc import (cpu_partial_slabs, low_wmark_pages, managed_pages, min_partial, pcp_sizes,
                                      slab_order, zone_batchsize)

from tests.engine.conftest import flood, spec_of


def test_the_twins_lists_are_sized_as_its_zoneinfo_says():
    """The guest of 2048 MB: /proc/zoneinfo gives batch 63 and a low watermark of 1,909 pages for
    its 502,311 managed pages (DMA32, 28 Nov 2026); rcusim's one zone of the whole memory comes
    within 3 % of that watermark, and high_min / high_max split it and an eighth of the zone
    over the 2 CPUs."""
    sizes = pcp_sizes(2048, 2, release_switches(parse_release("6.12")))
    assert sizes.batch == 63
    assert abs(low_wmark_pages(502311) - 1909) / 1909 < 0.01
    assert abs(sizes.low_wmark - 1909) / 1909 < 0.03
    assert sizes.high_min == sizes.low_wmark // 2
    assert sizes.high_max == managed_pages(2048) // 8 // 2


def test_each_release_sizes_its_lists_its_way():
    """Before v5.14 high is 6 batches; v5.14-v6.6 the low watermark's share, fixed; from v6.7 it
    ranges up to an eighth of the zone's share."""
    old, mid, new = (pcp_sizes(10240, 64, release_switches(parse_release(r))) for r in ("5.10", "6.2", "6.12"))
    assert old.high_min == old.high_max == 6 * old.batch
    assert mid.high_min == mid.high_max == max(mid.low_wmark // 64, 4 * mid.batch)
    assert new.high_min == mid.high_min and new.high_max == managed_pages(10240) // 8 // 64


def test_batch_is_one_less_than_a_power_of_two():
    assert zone_batchsize(4096) == 0 and zone_batchsize(1 << 18) == 63 and zone_batchsize(1 << 30) == 63
    assert zone_batchsize(64 << 10) == 15


def test_slub_keeps_a_few_empty_slabs():
    """set_cpu_partial(): 120 objects of a small cache, twice that over a slab's: kmalloc-32 keeps
    2 slabs a CPU, kmalloc-256 7; set_min_partial(): ilog2(size) / 2 within 5..10."""
    assert (cpu_partial_slabs(32), cpu_partial_slabs(256), cpu_partial_slabs(2048)) == (2, 7, 24)
    assert (min_partial(32), min_partial(2048), min_partial(1 << 30)) == (5, 5, 10)


def test_slab_order_holds_the_minimum_objects():
    """calculate_order(): kmalloc-32 is order 0 even on 4,096 CPUs (56 objects wanted); kmalloc-256
    holds the 12 objects 2 CPUs want in a page, not the 20 of 8 CPUs."""
    assert slab_order(32, 4096) == 0 and slab_order(256, 2) == 0 and slab_order(256, 8) == 1


@pytest.fixture(scope="module")
def flood_runs():
    return {rel: run_engine(rel, spec_of(flood(rel, loops=20)), 0) for rel in ("6.2", "6.12")}


def test_every_page_is_accounted(flood_runs):
    """What the lists took from the zone and gave back equals what they hold plus what is
    still allocated; the CPUs' slabs took new pages only where no emptied slab was at hand on
    a partial list: at most ceil(objects / 128) a CPU."""
    for run in flood_runs.values():
        c = run.kvfree["counters"]
        pcp = run.kvfree["pcp"]
        assert c["pcp_pages_from_zone"] - c["pcp_pages_to_zone"] == (
            c["pcp_pages_on_lists"] + c["pcp_page_allocs"] - c["pcp_page_frees"])
        assert pcp["count"].sum() == c["pcp_pages_on_lists"]
        assert pcp["from_zone"].sum() == c["pcp_pages_from_zone"] and pcp["to_zone"].sum() == c["pcp_pages_to_zone"]
        slab_pages = c["pcp_page_allocs"] - c["kvfree_page_allocs"]
        assert 4 <= slab_pages <= 4 * -(-20 * 4000 // 128)


def test_emptied_slabs_are_used_again():
    """A flood long enough for its reclaim to run beside it (200 loops): the CPUs' slabs take
    emptied ones from the partial lists, fewer new pages than a slab each 128 objects."""
    c = run_engine("6.12", spec_of(flood("6.12", loops=200)), 0).kvfree["counters"]
    assert c["pcp_page_allocs"] - c["kvfree_page_allocs"] < 0.9 * 4 * -(-200 * 4000 // 128)


def test_the_footprint_is_the_pages_the_lists_took(flood_runs):
    """rcuscale's footprint reads the zone's free pages: a flood that takes more pages from the
    zone onto its lists prints more, and no more than they took."""
    taken = []
    for run in flood_runs.values():
        kv = run.kvfree
        taken.append(kv["mem_begin_pages"] - kv["mem_during_pages"])
        assert taken[-1] <= kv["counters"]["pcp_pages_from_zone"]
    assert max(taken) > 0
    assert flood_runs["6.12"].kvfree["counters"]["pcp_pages_from_zone"] != \
        flood_runs["6.2"].kvfree["counters"]["pcp_pages_from_zone"]


def test_a_flood_needs_the_machines_memory():
    data = flood("6.12")
    data["hardware"]["profile"] = "amd-threadripper-3970x"
    with pytest.raises(ScenarioError, match="hardware.memory_mb"):
        spec_of(data)
    data["hardware"]["memory_mb"] = 4096
    assert spec_of(data).hardware.memory_mb == 4096


def test_higher_order_slabs_are_refused():
    data = flood("6.12", kfree_mult=10)  # 240 B: kmalloc-256, order 1 on 64 CPUs
    data["hardware"]["nr_cpus"] = 64
    with pytest.raises(ScenarioError, match="order 1"):
        run_engine("x", spec_of(data), 0)


def test_kvm_sh_memory_sizes():
    """kvm.sh's --memory as QEMU's -m takes it: MB, or with an M or G suffix; anything else,
    an empty value included, is one clear error."""
    from rcusim.input.kvmcmd import KVM_DEFAULT_MEMORY_MB, _memory_mb
    assert (_memory_mb("10G"), _memory_mb("512M"), _memory_mb("2048"), _memory_mb(None)) == (
        10240, 512, 2048, KVM_DEFAULT_MEMORY_MB)
    for bad in ("", "10X", "G", "32", "-1G"):
        with pytest.raises(ScenarioError, match="--memory"):
            _memory_mb(bad)


def test_the_lists_start_with_what_the_profile_measured():
    """The twin's profile starts each CPU's list with the pages its guest's lists held as the
    kfree test began: the flood takes them before it refills from the zone, so it takes fewer
    pages from the zone, and every page is still accounted, those at the start included."""
    data = flood("6.12", loops=20)
    data["hardware"] = {"profile": "qemu-tcg", "nr_cpus": 2}
    spec = spec_of(data)
    start = spec.hardware.pcp_start_pages
    assert start == profile_pcp_start_pages("qemu-tcg") > 0
    assert spec_of(flood("6.12")).hardware.pcp_start_pages == 0  # a profile that does not say
    empty = spec.model_copy(update={"hardware": spec.hardware.model_copy(update={"pcp_start_pages": 0})})
    full, bare = run_engine("6.12", spec, 0).kvfree, run_engine("6.12", empty, 0).kvfree
    for kv, pages in ((full, start), (bare, 0)):
        c = kv["counters"]
        assert c["pcp_pages_from_zone"] - c["pcp_pages_to_zone"] + 2 * pages == (
            c["pcp_pages_on_lists"] + c["pcp_page_allocs"] - c["pcp_page_frees"])
    assert full["counters"]["pcp_pages_from_zone"] < bare["counters"]["pcp_pages_from_zone"]
    assert full["mem_begin_pages"] - full["mem_during_pages"] < bare["mem_begin_pages"] - bare["mem_during_pages"]
