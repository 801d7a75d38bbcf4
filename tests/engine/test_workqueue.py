"""cython_core/workqueue.pxi: the unbound workqueue's worker pool that runs kvfree_rcu()'s
monitor and kfree_rcu_work from v6.12 (rcu_reclaim_wq): its kworkers serve every CPU's krcp and
run wherever select_task_rq_fair() puts them."""

import collections

import pytest

from rcusim import _core
from rcusim.engine.simulate import build_engine, run_engine
from rcusim.results.trace import TR

from tests.engine.conftest import flood, spec_of

ENT_KWORKER = _core.ENTITY_KINDS["kworker"]


def kworker_cpus(release: str) -> tuple[dict, list]:
    """Each kworker entity's CPUs in a traced 8-CPU flood, and every kworker entity, in order."""
    eng, _ = build_engine(spec_of(flood(release, loops=12)), 0)
    eng.trace_enable(5_000_000)
    while eng.run(10**11, 10**7) == _core.EXIT_MAX_EVENTS:
        pass
    rec = eng.trace_records()
    kinds = eng.entity_kinds()
    cpus = collections.defaultdict(set)
    for r in rec[rec["kind"] == TR["switch"]]:
        e = int(r["ent"])
        if e >= 0 and kinds["kind"][e] == ENT_KWORKER:
            cpus[e].add(int(r["cpu"]))
    return cpus, [e for e, k in enumerate(kinds["kind"]) if k == ENT_KWORKER]


def test_the_krcps_share_the_unbound_pools_workers():
    """4 kfree threads on CPUs 0-3 of 8: before v6.12 each krcp's kworkers run on its CPU only
    (system_wq is bound: 4 CPUs, each kworker on one); from v6.12, besides page_cache_work's
    kworker of each CPU, fewer pool workers than krcps do all the monitor and kfree_rcu_work runs,
    and on CPUs the wake-ups choose, not the krcps'."""
    bound, _ = kworker_cpus("6.6")
    assert all(len(c) == 1 for c in bound.values()) and set().union(*bound.values()) == {0, 1, 2, 3}
    unbound, kworkers = kworker_cpus("6.12")
    page_cache = kworkers[:4]  # one bound kworker per kfree thread's CPU, made first
    assert [unbound[e] for e in page_cache if e in unbound] == [{c} for c in range(4) if kworkers[c] in unbound]
    pool = {e: c for e, c in unbound.items() if e not in page_cache}
    assert 1 <= len(pool) < 4
    assert set().union(*pool.values()) - {0, 1, 2, 3}


@pytest.mark.parametrize("release", ["6.12", "6.6"])
def test_no_object_is_freed_before_its_grace_period(release):
    """The checker sees every page and rcu_head list freed after a GP that began after it,
    with the pool's workers running works of any krcp side by side."""
    run = run_engine(release, spec_of(flood(release, loops=12)), 0, check=True)
    workers = run.kvfree["counters"]["unbound_pool_workers"]
    assert (workers >= 1) if release == "6.12" else (workers == 0)
