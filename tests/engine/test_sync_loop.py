"""cython_core/sync_loop.pxi: the sync_loop task, synchronize_rcu*() in a loop, and rcuscale's
writers: rcu_scale_writer() measuring until every writer is done, its writer_holdoff_jiffies
sleeps, and its gp_async form (call_rcu_hurry(), rcu_barrier() when gp_async_max are in flight).

The synchronize_rcu() A/B of seed 000 runs scaled down: the bundled scenario with 1000 tasks x 20
loops, same machine, kernel and paths, a tenth of the callers. Every band below is derived from
how the mechanisms work, not read off a run; each says why.
"""

import argparse
import re

import numpy as np
import pytest

import rcusim
from rcusim import _core, run
from rcusim.engine.engine_input import engine_input
from rcusim.engine.rcuscale import MAX_MEAS, MIN_MEAS
from rcusim.input.kvmcmd import scenario_from_kvm
from rcusim.errors import ScenarioError
from rcusim.input.profiles import profile_thread_start
from rcusim.input.scenario import load_scenario
from rcusim.input.workloads import HELPER_ARRIVE_US
from rcusim.results.frames import latency_ns
from rcusim.results.result import calls_spans, within_calls
from rcusim.results.run import run_scenario

from tests.engine.conftest import (ASYNC, BOOT, SYNC_RCU_10K as SCENARIO, durations_us, engine_trace, rcuscale,
                                   sync_rcu_dict as scenario_dict, writer_data)


def served_by_a_full_gp(requests, gps):
    """For each request, whether some grace period lies entirely inside [t_start, t_end]."""
    starts = gps["t_start_ns"].to_numpy()
    ends = gps["t_end_ns"].to_numpy()
    order = np.argsort(starts)
    starts, ends = starts[order], ends[order]
    # Earliest end among GPs that start at or after each request's start.
    min_end_from = np.minimum.accumulate(ends[::-1])[::-1]
    idx = np.searchsorted(starts, requests["t_start_ns"].to_numpy(), side="left")
    ok = idx < len(starts)
    earliest_end = np.where(ok, min_end_from[np.minimum(idx, len(starts) - 1)], np.iinfo(np.int64).max)
    return earliest_end <= requests["t_end_ns"].to_numpy()


@pytest.mark.parametrize("variant", ["default", "wake_from_gp"])
def test_every_call_waits_for_a_full_grace_period(small_result, variant):
    # RCU's guarantee: synchronize_rcu() returns only after a whole GP that
    # started after the call.  This fails if either path wakes a waiter early.
    v = small_result.variants[variant]
    assert served_by_a_full_gp(v.requests, v.gps).all()


@pytest.mark.parametrize("variant", ["default", "wake_from_gp"])
def test_all_requests_complete(small_result, variant):
    v = small_result.variants[variant]
    assert len(v.requests) == 1000 * 20
    assert v.metrics["finished"] is True
    assert (latency_ns(v.requests) > 0).all()


@pytest.mark.parametrize("variant", ["default", "wake_from_gp"])
def test_each_call_spans_one_to_four_grace_period_ends(small_result, variant):
    # rcu_seq_snap(): a call made while a GP runs needs that GP to end and one more
    # full GP. Its callback reaches a GP later when rcuog flushes it from the NOCB
    # bypass only after the next GP started (accelerated to the one after), and one
    # later still when the flush misses that GP's start too; no call waits longer.
    v = small_result.variants[variant]
    ends = np.sort(v.gps["t_end_ns"].to_numpy())
    spanned = (np.searchsorted(ends, v.requests["t_end_ns"].to_numpy())
               - np.searchsorted(ends, v.requests["t_start_ns"].to_numpy()))
    assert spanned.min() >= 1 and spanned.max() <= 4
    gp_ns = np.median(np.diff(ends))
    assert latency_ns(v.requests).mean() >= gp_ns


@pytest.mark.parametrize("variant", ["default", "wake_from_gp"])
def test_batching_shares_each_grace_period_among_many_callers(small_result, variant):
    # GPs run back to back, and a call spans mean_latency / GP-length of them:
    # each GP serves about N * GP-length / mean_latency requests, N the mean number
    # of tasks inside a call (Little's law: total latency over the run's length;
    # about the 1000 tasks, fewer while the last loops drain unevenly).
    v = small_result.variants[variant]
    gp_ns = np.median((v.gps["t_end_ns"] - v.gps["t_start_ns"]).to_numpy())
    lat = latency_ns(v.requests)
    in_calls = lat.sum() / (v.requests["t_end_ns"].max() - v.requests["t_start_ns"].min())
    assert in_calls >= 1000 / 2
    expected = in_calls * gp_ns / lat.mean()
    assert expected / 1.25 <= v.metrics["batching"] <= expected * 1.25
    assert 1000 / 4 <= v.metrics["batching"] <= 1000


def test_same_seed_same_records():
    a = rcusim.run(SCENARIO, overrides=["workloads.0.tasks=300", "workloads.0.loops=5"], seed=7)
    b = rcusim.run(SCENARIO, overrides=["workloads.0.tasks=300", "workloads.0.loops=5"], seed=7)
    for name in a.variants:
        assert a.variants[name].requests.equals(b.variants[name].requests)
        assert a.variants[name].gps.equals(b.variants[name].gps)


@pytest.mark.parametrize(
    "kernel",
    [
        {"CONFIG_RCU_NOCB_CPU": False, "bootargs": ""},
        {"CONFIG_RCU_NOCB_CPU": False, "bootargs": "rcutree.use_softirq=0"},
        {"CONFIG_PREEMPT_RCU": False, "CONFIG_PREEMPTION": False},
        {"HZ": 250},
    ],
    ids=["softirq", "rcuc", "non-preemptible", "hz250"],
)
def test_other_kernel_configurations_complete_and_keep_the_guarantee(kernel):
    r = rcusim.run(scenario_dict(**kernel), check=True)
    for v in r.variants.values():
        assert len(v.requests) == 1000 * 20
        assert served_by_a_full_gp(v.requests, v.gps).all()


# --- rcuscale's writers (kvm.sh rcuscale command lines) -------------------------------
JIFFY_NS = 4_000_000  # HZ=250, the Kconfig default


def writer_calls(boot: str, release: str = "7.0"):
    """Each writer's calls (task, t_start_ns, t_end_ns rows, in order) of an rcuscale run."""
    args = argparse.Namespace(torture="rcuscale", kconfig=["CONFIG_NR_CPUS=8"], bootargs=[boot], ignored=[])
    data, _ = scenario_from_kvm(args, release=release)
    requests = run(data).variants["default"].requests  # a safety-checker violation would raise
    return [grp for _, grp in requests.sort_values(["task", "t_start_ns"]).groupby("task")]


def test_writer_holdoff_jiffies_sleeps_1_to_n_jiffies_before_each_gp(capsys):
    n = 5
    for calls in writer_calls(BOOT + f" rcuscale.writer_holdoff_jiffies={n}"):
        gaps = (calls["t_start_ns"].to_numpy()[1:] - calls["t_end_ns"].to_numpy()[:-1]) / JIFFY_NS
        # schedule_timeout_idle(j) on the timer wheel sleeps j to j + 1 jiffies (the expiry is
        # rounded up to the next tick); the wake-up and the call's entry add microseconds.
        assert gaps.min() >= 1 and gaps.max() < n + 1 + 0.01, (gaps.min(), gaps.max())
        # torture_random() % n + 1: every length of sleep comes up.
        assert set(np.floor(gaps).astype(int)) == set(range(1, n + 1))
    lines = rcuscale(capsys, BOOT + f" rcuscale.writer_holdoff_jiffies={n}")
    assert rcuscale(capsys, BOOT + f" rcuscale.writer_holdoff_jiffies={n}") == lines
    assert rcuscale(capsys, BOOT + f" rcuscale.writer_holdoff_jiffies={n}", "--seed", "1") != lines


def test_done_writers_measure_on_until_every_writer_is_done(capsys):
    """rcu_scale_writer(): a writer done at its MIN_MEAS + 1-th measurement goes on measuring
    until every writer is done (alldone), and leaves after the call in which it finds them
    so; the last one to be done leaves at once, and its return is the test's end."""
    boot = BOOT + " rcuscale.gp_exp=1"  # expedited GPs: each writer its own, at its own pace
    calls = writer_calls(boot)
    done = []
    for c in calls:
        # Done at the first return with i >= MIN_MEAS once a jiffy has begun since the start.
        ends = c["t_end_ns"].to_numpy()
        jdone_ns = (c["t_start_ns"].iloc[0] // JIFFY_NS + 1) * JIFFY_NS
        done.append(int(ends[MIN_MEAS:][ends[MIN_MEAS:] >= jdone_ns][0]))
    t_all = max(done)
    last = done.index(t_all)
    assert calls[last]["t_end_ns"].iloc[-1] == t_all
    for k, c in enumerate(calls):
        if k == last:
            continue
        ends = c["t_end_ns"].to_numpy()
        assert len(c) > MIN_MEAS + 1 and ends[-1] >= t_all > ends[-2], k
    line = start_line(rcuscale(capsys, boot))
    assert line["end"] == t_all and line["gps"] == sum(len(c) for c in calls)


def test_minruntime_keeps_every_writer_measuring_until_it_has_passed(capsys):
    minruntime_ns = 2 * 10**9  # about 250 grace periods a writer: more than twice MIN_MEAS + 1
    writers = writer_calls(BOOT + " rcuscale.minruntime=2")
    done = []
    for calls in writers:
        ends = calls["t_end_ns"].to_numpy()
        jdone_ns = (calls["t_start_ns"].iloc[0] // JIFFY_NS) * JIFFY_NS + minruntime_ns
        # Done at the first return with time_after(jiffies, jdone), far past MIN_MEAS + 1 calls.
        k = int(np.argmax(ends >= jdone_ns + JIFFY_NS))
        assert ends[k] >= jdone_ns + JIFFY_NS and k > MIN_MEAS
        done.append(ends[k])
    # Each leaves at the first return from which every writer is done.
    for calls in writers:
        ends = calls["t_end_ns"].to_numpy()
        assert ends[-1] >= max(done) and (len(ends) < 2 or ends[-2] < max(done))
    gps = [ln for ln in rcuscale(capsys, BOOT + " rcuscale.minruntime=2") if re.fullmatch(r"rcu-scale: writer \d gps: \d+", ln)]
    assert all(MIN_MEAS + 1 < int(ln.split()[-1]) <= MAX_MEAS for ln in gps)


def start_line(lines) -> dict:
    """rcu_scale_cleanup()'s "start: T end: T duration: D gps: N batches: B" line, by field."""
    f = next(ln for ln in lines if " start: " in ln).split()
    return {f[i].rstrip(":"): int(f[i + 1]) for i in range(1, len(f), 2)}


def test_gp_async_writers_report_the_engines_calls_and_grace_periods(capsys):
    lines = rcuscale(capsys, ASYNC)
    result = run(writer_data(ASYNC)).variants["default"]
    line = start_line(lines)
    counts = [int(ln.split()[-1]) for ln in lines if re.fullmatch(r"rcu-scale: writer \d gps: \d+", ln)]
    assert line["gps"] == sum(counts) == len(result.requests)
    # "batches" is rcu_seq_diff() of gp_seq over the test: the normal GPs that overlapped it, or
    # one more (rcu_seq_diff() counts K + 1 from idle to idle).
    gps = result.gps[~result.gps["expedited"]]
    overlapping = int(((gps["t_end_ns"] > line["start"]) & (gps["t_start_ns"] <= line["end"])).sum())
    assert 1 <= overlapping <= line["batches"] <= overlapping + 1
    # Every writer queues 100 callbacks (call_rcu_ns each), then calls rcu_barrier(): one grace
    # period serves them all. An rcu_barrier() iteration is no measurement, unless it is the
    # writer's last (it finds every writer done): then it fills the last slot.
    assert line["gps"] >= 100 * line["batches"]
    d = durations_us(lines)
    assert (d < 1).sum() >= 4 * 100 and (d > 1).sum() == (d > 4000).sum() <= 4
    assert f"Grace periods: {line['gps']} Batches: 1 Ratio: {line['gps']}" in lines


def in_flight(data: dict) -> tuple[dict, dict]:
    """The most rcu_scale_async_cb() callbacks each writer, and each CPU, had queued and not yet
    invoked, from the trace: call_rcu() by the writer, invocation of the callback it queued."""
    v = run_scenario(load_scenario(data), progress=False, trace_limit=2_000_000).variants["default"]
    rec = v.trace["records"]
    mine = rec[np.isin(rec["kind"], [_core.TRACE_KINDS["callback"], _core.TRACE_KINDS["cb_invoke"]])
               & (rec["arg"] == _core.CALLBACK_KINDS["rcu_scale_async_cb"])]
    # In time order, an invocation before a call at the same instant.
    mine = mine[np.lexsort((mine["kind"] == _core.TRACE_KINDS["callback"], mine["t"]))]
    queued_by, now, most = {}, {}, {}
    for r in mine:
        if r["kind"] == _core.TRACE_KINDS["callback"]:
            who = (int(r["ent"]), int(r["cpu"]))
            queued_by[int(r["arg2"])] = who
            keys = [("task", who[0]), ("cpu", who[1])]
            for k in keys:
                now[k] = now.get(k, 0) + 1
                most[k] = max(most.get(k, 0), now[k])
        else:
            ent, cpu = queued_by.pop(int(r["arg2"]))
            now[("task", ent)] -= 1
            now[("cpu", cpu)] -= 1
    return ({k[1]: n for k, n in most.items() if k[0] == "task"},
            {k[1]: n for k, n in most.items() if k[0] == "cpu"})


def test_in_flight_callbacks_stop_at_gp_async_max_per_writer_from_v6_12_per_cpu_before():
    """Two writers on one CPU: from v6.12 each counts its own callbacks, so together they have
    twice gp_async_max in flight; before, they share their CPU's count."""
    boot = "rcuscale.nwriters=2 rcuscale.nreaders=0 rcuscale.holdoff=1 rcuscale.gp_async=1 rcuscale.gp_async_max=10"
    per_task, per_cpu = in_flight(writer_data(boot, "7.0", nr_cpus=1))
    assert per_task == {0: 10, 1: 10} and per_cpu == {0: 20}
    per_task, per_cpu = in_flight(writer_data(boot, "6.6", nr_cpus=1))
    assert per_cpu == {0: 10} and sum(per_task.values()) >= 10


def test_before_v6_12_the_barrier_is_inside_the_measured_call(capsys):
    """rcuscale before v6.12 retries the call after rcu_barrier(), in the same measurement, and
    kmalloc()s each rcu_head; from v6.12 the iteration that calls rcu_barrier() instead is no
    measurement."""
    boot = ASYNC + " rcuscale.minruntime=1"
    old, new = durations_us(rcuscale(capsys, boot, "--release", "6.6")), durations_us(rcuscale(capsys, boot))
    # Over a second every writer calls rcu_barrier() dozens of times.
    assert (old > 1000).sum() > 4 * 20
    assert (new > 1000).sum() <= 4  # at most each writer's last slot
    assert np.median(old) > np.median(new)  # kmalloc() of the rcu_head


BARRIER = {"name": "barrier", "hardware": {"profile": "qemu-tcg", "nr_cpus": 2},
           "kernel": {"release": "6.12", "HZ": 1000},
           "workloads": [{"kind": "sync_loop", "tasks": 40, "loops": 2, "cpus": "0-1", "pinned": False,
                          "work_after": "none", "start": "barrier"}]}


def release_wakes(records, n_tasks: int) -> dict:
    """Each task's wake-up that releases it (the last before its first call): index among the
    records (the order the wake-ups were made) and the record."""
    calls = records[records["kind"] == _core.TRACE_KINDS["task_wait"]]
    out = {}
    for i, r in enumerate(records):
        e = int(r["ent"])
        if r["kind"] == _core.TRACE_KINDS["wake"] and e < n_tasks and r["t"] <= calls["t"][calls["ent"] == e].min():
            out[e] = (i, r)
    return dict(sorted(out.items()))


def test_a_barrier_parent_creates_its_unpinned_tasks_then_releases_them_one_at_a_time():
    """start: barrier, unpinned: the parent, bound to the first CPU of `cpus`, creates the tasks
    one by one, each with its share of the stack mmap()s' call_rcu()s (the profile's
    thread_start); only the parent wakes a task before the release (from its start lock);
    once every task sleeps in the barrier, it sleeps ARRIVE_US and wakes them in their
    creation order, one try_to_wake_up() after the other, select_task_rq_fair() placing them
    on both CPUs; each task's first call follows its release."""
    engine, records = engine_trace(BARRIER)
    wakes = release_wakes(records, 40)
    assert sorted(wakes) == list(range(40))
    assert [int(r["arg"]) for _, r in wakes.values()] == [0] * 40  # from the parent's CPU
    assert [i for i, _ in wakes.values()] == sorted(i for i, _ in wakes.values())  # in creation order
    t_release = min(int(r["t"]) for _, r in wakes.values())
    before = records[:min(i for i, _ in wakes.values())]  # what the engine did before the first release
    tasks = (before["ent"] >= 0) & (before["ent"] < 40)
    early = before[tasks & (before["kind"] == _core.TRACE_KINDS["wake"])]
    assert set(early["arg"].tolist()) <= {0}  # only the parent, unlocking a task's start lock
    last_sleep = before[tasks & (before["kind"] == _core.TRACE_KINDS["switch"])]["t"].max()
    assert t_release - last_sleep >= HELPER_ARRIVE_US * 1000  # usleep(ARRIVE_US), all asleep
    # The stacks' maple-tree nodes: the measured call_rcu()s per 1,000 threads, spread evenly.
    mt = before[(before["kind"] == _core.TRACE_KINDS["callback"]) & (before["arg"] == _core.CALLBACK_KINDS["mt_free_rcu"])]
    assert len(mt) == 40 * profile_thread_start("qemu-tcg")["call_rcu_per_1000"] // 1000
    # One waker: the last release is at least 39 of its cheapest wake-ups after the first.
    sched = engine_input(load_scenario(BARRIER).variants["default"])[0].sched
    cheapest = sched.ttwu_ns + min(sched.ttwu_reuse_delta_ns)
    assert max(int(r["t"]) for _, r in wakes.values()) - t_release >= 39 * cheapest
    assert {int(r["cpu"]) for _, r in wakes.values()} == {0, 1}


def test_a_barrier_of_unpinned_tasks_needs_the_profiles_thread_creation():
    """Without the profile's thread_start the parent's thread creation has no time: refused."""
    data = {**BARRIER, "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2}}
    with pytest.raises(ScenarioError) as info:
        load_scenario(data)
    assert info.value.key.endswith("start") and "thread_start" in str(info.value)
    load_scenario({**data, "workloads": [{**BARRIER["workloads"][0], "pinned": True}]})  # pinned: no creation


def test_tasks_started_together_have_no_parent_to_release_them():
    """start: together (the default): each task starts at its start time as a new task,
    woken by no one (no try_to_wake_up() before its first call); no parent entity exists,
    where a barrier's has one."""
    data = {**BARRIER, "workloads": [{**BARRIER["workloads"][0], "start": "together"}]}
    engine, records = engine_trace(data)
    calls = records[records["kind"] == _core.TRACE_KINDS["task_wait"]]
    wakes = records[(records["kind"] == _core.TRACE_KINDS["wake"]) & (records["ent"] < 40)]
    for e in range(40):
        assert not (wakes["t"][wakes["ent"] == e] <= calls["t"][calls["ent"] == e].min()).any()
    releaser = _core.ENTITY_KINDS["releaser"]
    assert releaser not in engine.entity_kinds()["kind"]
    assert releaser in engine_trace(BARRIER)[0].entity_kinds()["kind"]


def test_the_twins_runs_keep_the_gps_of_their_calls_span():
    """Each run's GPs that start within its calls' span, as a real boot keeps its own: the
    parent's thread creation runs GPs before the calls (its stacks' call_rcu()s), which are not
    the workload's."""
    v = run_scenario(load_scenario(BARRIER), progress=False, runs=2).variants["default"]
    kept, spans = within_calls(v), calls_spans(v)
    assert len(spans) == 2
    for b, (t0, t1) in enumerate(spans):
        run = v.gps[v.gps["boot"] == b]
        assert (run["t_start_ns"] < t0).any()  # the creation's
        within = run[run["t_start_ns"].between(t0, t1)]
        assert kept.gps[kept.gps["boot"] == b]["gp_seq"].tolist() == within["gp_seq"].tolist() != []
    assert kept.metrics["grace_periods"] < v.metrics["grace_periods"]


@pytest.mark.parametrize("kthread", [False, True])
def test_a_user_tasks_call_ends_at_its_system_calls_exit(kthread):
    """A user task's call is a system call (the twin's membarrier()): when it returns,
    exit_to_user_mode() switches the task out, still runnable, if need_resched was set
    meanwhile (the guest traces about 80 such switches a boot with 1,000 callers); a kernel
    thread's loop has no such exit, and under voluntary preemption it only leaves its CPU
    when it blocks in its next call."""
    data = {"name": "crowd", "hardware": {"profile": "qemu-tcg", "nr_cpus": 2},
            "kernel": {"release": "6.12", "HZ": 1000, "CONFIG_PREEMPT_DYNAMIC": True, "bootargs": "preempt=voluntary"},
            "workloads": [{"kind": "sync_loop", "tasks": 300, "loops": 3, "cpus": "0-1", "pinned": False,
                           "work_after": "none", "kthread": kthread}]}
    _engine, records = engine_trace(data)
    runnable_returns = 0
    for e in range(300):
        mine = records[(records["ent"] == e) & np.isin(records["kind"], [_core.TRACE_KINDS["switch"],
                                                                         _core.TRACE_KINDS["wake"]])]
        kinds = mine["kind"].tolist()
        # A switch-in that follows another with no wake-up between: switched out runnable.
        runnable_returns += sum(1 for a, b in zip(kinds, kinds[1:])
                                if a == b == _core.TRACE_KINDS["switch"])
    assert (runnable_returns > 0) != kthread
