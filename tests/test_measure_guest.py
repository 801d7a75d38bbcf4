"""measure-guest: the qemu-tcg profile is what its committed trace gives, and the derivation's
arithmetic on a synthetic trace whose every interval is known."""

import gzip
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from rcusim.commands.cli import main
from rcusim.errors import ScenarioError
from rcusim.input.profiles import (COST_NAMES, THREAD_START_COSTS, load_profile, profile_topology, profile_tracing,
                                   profile_ttwu_reuse)
from rcusim.results.ftrace_read import EVENT_COLUMNS
from rcusim.twin.thread_start import boot_samples
from rcusim.twin.ttwu_reuse import boot_samples as ttwu_boot_samples
from rcusim.twin.measure import (PHASES, REUSE_EDGES_NS, REUSE_MIN, derive_costs, estimate_costs, guest_script,
                                 ns_trace, read_trace, tsc_khz, write_trace)

TRACE = Path(__file__).parent / "fixtures" / "twin" / "measure-trace.txt.gz"
PROFILE = Path(__file__).parents[1] / "rcusim" / "profiles" / "qemu-tcg.yaml"


def test_the_profile_is_what_the_committed_trace_gives():
    events, header = read_trace(TRACE)
    costs = derive_costs(events, 2)
    assert {name: costs[name][0] for name in COST_NAMES} == load_profile("qemu-tcg")
    # The wake-up inside wakeme_after_rcu() is this trace's; the table by the time since the
    # CPU's last wake-up comes from the callers' boots (--ttwu-reuse-from), a hundred times the
    # samples, priced against this trace's ttwu_ns.
    reuse = estimate_costs(events, 2)["ttwu_reuse"]
    table = profile_ttwu_reuse("qemu-tcg")
    assert table["in_cb_wakeme_ns"] == reuse.in_cb_wakeme.value
    source = yaml.safe_load(PROFILE.read_text())["ttwu_reuse"]["source"]
    assert "--ttwu-reuse-from" in source and len(table["since_ns"]) + 1 == len(table["delta_ns"])
    assert set(table["since_ns"]) <= set(REUSE_EDGES_NS)
    counts = [int(n) for n in re.search(r"next: ([\d, ]+) samples", " ".join(source.split())).group(1).split(", ")]
    assert len(counts) == len(table["delta_ns"]) and min(counts) >= REUSE_MIN
    assert f"{sum(counts)} local wake-ups" in " ".join(source.split())
    assert set(profile_topology("qemu-tcg")["line_ns"].values()) == {costs["line_ns"][0]}
    assert events["boot"].nunique() == 5 and any(line.startswith("command: ") for line in header)


def test_the_icount_profile_is_what_its_committed_trace_gives():
    # Under icount a cache line costs no guest time: line_ns and rnp_lock_ns are 0 by rule,
    # which only the icount clock applies.
    events, header = read_trace(TRACE.with_name("measure-trace-icount.txt.gz"))
    assert "clock: icount" in header and events["boot"].nunique() == 3
    costs = {name: value for name, (value, _) in derive_costs(events, 2, "icount").items()}
    assert {name: costs[name] for name in COST_NAMES} == load_profile("qemu-tcg-icount")
    assert costs["line_ns"] == costs["rnp_lock_ns"] == 0
    assert set(profile_topology("qemu-tcg-icount")["line_ns"].values()) == {0}
    real = read_trace(TRACE)[0]
    assert derive_costs(real, 2)["line_ns"][0] > 0 == derive_costs(real, 2, "icount")["line_ns"][0]


def profile_wakeup_idle_of(path):
    return yaml.safe_load(path.read_text())["wakeup_idle"]


def costs_of(path):
    return {k: v["value"] for k, v in yaml.safe_load(path.read_text())["costs"].items()}


def test_from_trace_prints_every_cost(tmp_path, capsys):
    profile = tmp_path / "qemu-tcg.yaml"
    assert main(["measure-guest", "--from-trace", str(TRACE), "--write-profile", str(profile)]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in COST_NAMES + ("ttwu_reuse",))
    text = profile.read_text()
    # Every cost, the topology's four distances, the ttwu_reuse table and its in_cb_wakeme_ns,
    # a traced event's two prices, the idle wake-up's quantiles.
    assert "name: qemu-tcg" in text and text.count("--from-trace") == len(COST_NAMES) + 4 + 2 + 2 + 1
    # ... the same samples as wakeup_idle_median_ns: its median the middle quantile.
    assert profile_wakeup_idle_of(profile)["quantiles_ns"][50] == costs_of(profile)["wakeup_idle_median_ns"]


# ---------------------------------------------------------------- a synthetic trace
G, GI, GL = 1000, 800, 500  # one event's cost: elsewhere, in an interrupt, in rcuscale's loops


class Guest:
    """Events written CPU by CPU at chosen gaps: the truth the derivation must find."""

    def __init__(self):
        self.rows, self.t = [], {0: 0, 1: 0}

    def at(self, cpu, gap, event, payload="", comm="sh", pid=50, flags="....."):
        self.t[cpu] += gap
        self.rows.append((comm, pid, cpu, flags, self.t[cpu], event, payload))

    def frame(self):
        return pd.DataFrame(self.rows, columns=list(EVENT_COLUMNS))


WORK = dict(tick=60000, softirq_pass=9000, ttwu=18000, remote=24000, cb_wakeme=25000, cb_generic=700,
            call_rcu=120, kmalloc=210, loop=530, kfree=160, bulk=90, page_alloc=4000, page_free=300,
            sync_a=3000, sync_b=4000, ctxsw_a=9000, ctxsw_b=7000, ipi_send=3500, ipi_latency=6000,
            handler_a=400, handler_b=350, wake_handler=15000, hlt=70000, after_enqueue=5000,
            ttwu_near=3000, ttwu_far=33000)
REUSE_NEAR, REUSE_FAR = 5000, 3_000_000  # ns from a wake-up's end to the next's start


def synthetic(hlt=(70000,)) -> pd.DataFrame:
    w, g = WORK, Guest()
    wake = "comm=rcusim_load pid=11 prio=120 target_cpu=000"
    # 'sync': a caller's synchronize_rcu() up to its switch to the other caller; the callback,
    # a mixed one, a quiescent-state report.
    g.at(0, 100, "rcu_sr_normal", "rcu_preempt rhp=0x1 event=request", "rcusim_load", 10)
    g.at(0, G + w["sync_a"], "rcu_callback", "rcu_preempt rhp=0x1 func=wakeme_after_rcu 1", "rcusim_load", 10)
    g.at(0, G, "rcu_segcb_stats", "SegCBQueued seglen: (DONE=0)", "rcusim_load", 10)
    g.at(0, G + w["sync_b"], "rcu_utilization", "Start context switch", "rcusim_load", 10)
    g.at(0, G + 300, "rcu_utilization", "End context switch", "rcusim_load", 10)
    g.at(0, G + w["ctxsw_a"] - 300, "sched_switch", "prev_comm=rcusim_load prev_pid=10 prev_prio=120 prev_state=D "
         "==> next_comm=rcusim_load next_pid=11 next_prio=120", "rcusim_load", 10)
    g.at(0, G + w["ctxsw_b"], "rcu_sr_normal", "rcu_preempt rhp=0x2 event=complete", "rcusim_load", 11)
    g.at(0, 100, "rcu_batch_start", "rcu_preempt CBs=2 bl=10", "<idle>", 0, "..s..")
    g.at(0, 100, "rcu_invoke_callback", "rcu_preempt rhp=0x1 func=wakeme_after_rcu", "<idle>", 0, "..s..")
    g.at(0, G + 3000, "sched_waking", wake, "<idle>", 0, "d.s..")
    g.at(0, G + w["ttwu"], "sched_wakeup", wake, "<idle>", 0, "d.s..")
    g.at(0, G + w["cb_wakeme"] - 3000 - w["ttwu"], "rcu_invoke_callback",
         "rcu_preempt rhp=0x3 func=put_cred_rcu", "<idle>", 0, "..s..")
    g.at(0, GL + w["cb_generic"], "rcu_batch_end", "rcu_preempt CBs-invoked=2", "<idle>", 0, "..s..")
    g.at(0, 100, "softirq_entry", "vec=9 [action=RCU]", "<idle>", 0, "..s..")
    g.at(0, G + 1000, "rcu_utilization", "Start RCU core", "<idle>", 0, "..s..")
    g.at(0, G + 5000, "rcu_quiescent_state_report", "rcu_preempt -3 1>2 0 0 1 0", "<idle>", 0, "d.s..")
    g.at(0, G + 2000, "rcu_utilization", "End RCU core", "<idle>", 0, "..s..")
    g.at(0, G + w["softirq_pass"] - 8000, "softirq_exit", "vec=9 [action=RCU]", "<idle>", 0, "..s..")
    # 'tick' on CPU 1, running a task.
    g.at(1, 100, "sched_switch", "prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sh "
         "next_pid=20 next_prio=120", "<idle>", 0)
    g.at(1, 100, "local_timer_entry", "vector=236", "sh", 20, "d.h..")
    g.at(1, GI + 20000, "rcu_utilization", "Start scheduler-tick", "sh", 20, "d.h..")
    g.at(1, GI + 10000, "rcu_utilization", "End scheduler-tick", "sh", 20, "d.h..")
    g.at(1, GI + w["tick"] - 30000, "local_timer_exit", "vector=236", "sh", 20, "d.h..")
    # 'ipi': on_each_cpu() from CPU 0 to CPU 1, busy.
    g.t[1] = g.t[0] = max(g.t.values())
    g.at(0, 100, "ipi_send_cpu", "cpu=1 callsite=on_each_cpu_cond_mask+0x1f/0x40 callback=x")
    send = g.t[0]
    g.at(0, G + w["ipi_send"], "csd_function_entry", "func=do_sync_core, csd=0000000000000000", flags="d..1.")
    g.at(0, 2 * G, "csd_function_exit", "func=do_sync_core, csd=0000000000000000", flags="d..1.")
    g.t[1] = send
    g.at(1, G + w["ipi_send"] + w["ipi_latency"], "call_function_single_entry", "vector=251", "sh", 20, "d.h1.")
    g.at(1, GI + w["handler_a"], "csd_function_entry", "func=do_sync_core, csd=(____ptrval____)", "sh", 20, "d.h1.")
    g.at(1, GI, "csd_function_exit", "func=do_sync_core, csd=(____ptrval____)", "sh", 20, "d.h1.")
    g.at(1, GI + w["handler_b"], "call_function_single_exit", "vector=251", "sh", 20, "d.h1.")
    # 'wake-busy' and 'wake-local': the waker enqueues the wakee itself.
    g.at(0, 100, "sched_waking", "comm=cat pid=40 prio=120 target_cpu=001")
    g.at(0, G + w["remote"], "sched_wakeup", "comm=cat pid=40 prio=120 target_cpu=001")
    g.at(0, 100, "sched_waking", "comm=cat pid=41 prio=120 target_cpu=000")
    g.at(0, G + w["ttwu"], "sched_wakeup", "comm=cat pid=41 prio=120 target_cpu=000")
    # 'wake-idle': CPU 1 idles, then a wake-up by IPI for each HLT exit of `hlt`.
    g.at(1, 100, "sched_switch", "prev_comm=sh prev_pid=20 prev_prio=120 prev_state=S ==> next_comm=swapper/1 "
         "next_pid=0 next_prio=120", "sh", 20)
    for h in hlt:
        g.t[1] = g.t[0] = max(g.t.values())
        g.at(0, 100, "sched_waking", "comm=cat pid=40 prio=120 target_cpu=001")
        g.at(0, G + 2000, "ipi_send_cpu", "cpu=1 callsite=ttwu_queue_wakelist+0xd3/0xf0 callback=x")
        g.t[1] = g.t[0]
        g.at(1, G + w["ipi_send"] + w["ipi_latency"] + h, "call_function_single_entry", "vector=251", "<idle>", 0,
             "d.h1.")
        g.at(1, GI + w["wake_handler"], "sched_wakeup", "comm=cat pid=40 prio=120 target_cpu=001", "<idle>", 0,
             "d.h1.")
        g.at(1, GI + w["after_enqueue"] // 2, "call_function_single_exit", "vector=251", "<idle>", 0, "d.h1.")
        g.at(1, GI + w["after_enqueue"] // 2, "rcu_utilization", "Start context switch", "<idle>", 0)
        g.at(1, G, "sched_switch", "prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=cat "
             "next_pid=40 next_prio=120", "<idle>", 0)
        g.at(1, 100, "sched_switch", "prev_comm=cat prev_pid=40 prev_prio=120 prev_state=S ==> next_comm=swapper/1 "
             "next_pid=0 next_prio=120", "cat", 40)
    # 'bulk': kfree_rcu_work() frees two pages; fill_page_cache_func() and a page-freeing loop.
    g.at(0, 100, "rcu_invoke_kfree_bulk_callback", "rcu_preempt bulk=0x1 nr_records=500", "kworker/u8:0", 12)
    g.at(0, GL + 500 * w["bulk"], "rcu_invoke_kfree_bulk_callback", "rcu_preempt bulk=0x2 nr_records=500",
         "kworker/u8:0", 12)
    for gap in (100, GL + w["page_alloc"]):
        g.at(0, gap, "mm_page_alloc", "page=x pfn=0x1 order=0 migratetype=0 gfp_flags=GFP_KERNEL", "kworker/0:1H", 13)
    for gap in (100, GL + w["page_free"]):
        g.at(0, gap, "mm_page_free", "page=x pfn=0x1 order=0", "kworker/u8:0", 12)
    # 'kmalloc' and 'call_rcu': rcuscale's floods.
    flood = dict(comm="kfree_scale_thr", pid=60)
    g.at(0, 100, "kmalloc", "call_site=x ptr=x bytes_req=24 bytes_alloc=32", **flood)
    g.at(0, GL + w["loop"], "kmalloc", "call_site=x ptr=x bytes_req=24 bytes_alloc=32", **flood)
    g.at(0, GL + w["call_rcu"], "rcu_callback", "rcu_preempt rhp=0x9 func=kfree_call_rcu 1", **flood)
    g.at(0, GL, "rcu_segcb_stats", "SegCBQueued seglen: (DONE=0)", **flood)
    g.at(0, GL + w["kmalloc"], "kmalloc", "call_site=x ptr=x bytes_req=24 bytes_alloc=32", **flood)
    g.at(0, 100, "rcu_invoke_callback", "rcu_preempt rhp=0x9 func=kfree_call_rcu", "<idle>", 0, "..s..")
    g.at(0, GL + 100, "kfree", "call_site=kfree_call_rcu+0x9 ptr=x", "<idle>", 0, "..s..")
    g.at(0, GL + w["kfree"], "rcu_batch_end", "rcu_preempt CBs-invoked=1", "<idle>", 0, "..s..")
    # Local wake-ups in a row, then far apart: as dear below and above ttwu as each other.
    for gap, cost in [(REUSE_NEAR, w["ttwu_near"])] * 25 + [(REUSE_FAR, w["ttwu_far"])] * 25:
        g.at(0, gap, "sched_waking", "comm=cat pid=41 prio=120 target_cpu=000")
        g.at(0, G + cost, "sched_wakeup", "comm=cat pid=41 prio=120 target_cpu=000")
    return g.frame()


def test_every_cost_is_the_work_between_its_tracepoints():
    w = WORK
    costs = {name: value for name, (value, how) in derive_costs(synthetic(), 2).items()}
    line = (w["remote"] - w["ttwu"]) // 2
    assert costs == {
        "trace_overhead_loop_ns": GL, "trace_overhead_irq_ns": GI, "trace_overhead_ns": G,
        "tick_ns": w["tick"], "cb_wakeme_ns": w["cb_wakeme"], "cb_kfree_ns": 100 + w["kfree"],
        "cb_generic_ns": w["cb_generic"], "call_rcu_ns": w["call_rcu"], "kmalloc_ns": w["kmalloc"],
        "kvfree_call_rcu_ns": w["loop"] - w["kmalloc"], "kfree_ns": w["kfree"], "kfree_bulk_ns": w["bulk"],
        "page_alloc_ns": w["page_alloc"] + w["page_free"],
        "sync_entry_ns": w["sync_a"] + w["sync_b"] - w["call_rcu"], "ctxsw_ns": w["ctxsw_a"] + w["ctxsw_b"],
        "ttwu_ns": w["ttwu"], "line_ns": line, "rnp_lock_ns": line, "softirq_ns": w["softirq_pass"] - line,
        "ipi_send_ns": w["ipi_send"], "ipi_latency_ns": w["ipi_latency"],
        "ipi_handler_ns": w["handler_a"] + w["handler_b"],
        "wakeup_busy_ns": w["ipi_latency"] + w["wake_handler"],
        "wakeup_idle_median_ns": w["hlt"] + w["after_enqueue"], "wakeup_idle_p99_ns": w["hlt"] + w["after_enqueue"],
    }


def test_wake_ups_are_priced_by_the_time_since_their_cpu_last_woke_a_task():
    w = WORK
    est = estimate_costs(synthetic(), 2)
    table = est["ttwu_reuse"]
    # The near ones fall in the 1-2-5 bin above their gap, the far ones beyond the last bin
    # that holds 20 of them; the other local wake-ups join those bins without moving a median.
    assert table.since_ns == [10_000] and table.values_ns == [w["ttwu_near"], w["ttwu_far"]]
    assert est["ttwu_ns"].value == w["ttwu"]
    assert table.in_cb_wakeme.value == w["ttwu"]  # the one inside the 'sync' batch's wakeme_after_rcu()


def test_the_committed_trace_prices_a_wake_up_less_the_sooner_it_follows_another():
    real = estimate_costs(read_trace(TRACE)[0], 2)
    values = real["ttwu_reuse"].values_ns
    assert values[0] < real["ttwu_ns"].value / 2 and values[-1] > real["ttwu_ns"].value * 3 / 2
    # Under icount guest time is instructions: no cache to warm, the table is flat.
    icount = estimate_costs(read_trace(TRACE.with_name("measure-trace-icount.txt.gz"))[0], 2, "icount")
    assert all(abs(v - icount["ttwu_ns"].value) < icount["ttwu_ns"].value / 2 for v in icount["ttwu_reuse"].values_ns)


def _line(t_us, event, payload, cpu=0):
    return f"{'rcusim_load':>16}-80      [{cpu:03d}] d..2.  {t_us / 1e6:.6f}: {event}: {payload}"


def _wakeups_trace(gaps_us, costs_us):
    """One CPU's local wake-ups, each `gap` after the previous sched_waking, its sched_wakeup
    `cost` after; a remote one (target 1) at the start."""
    lines, t = [_line(1_000_000, "sched_waking", "comm=x pid=90 prio=120 target_cpu=001")], 1_000_000
    for gap, cost in zip(gaps_us, costs_us):
        t += gap
        lines.append(_line(t, "sched_waking", "comm=x pid=91 prio=120 target_cpu=000"))
        lines.append(_line(t + cost, "sched_wakeup", "comm=x pid=91 prio=120 target_cpu=000"))
    return lines


def test_wake_ups_in_the_twins_boots_are_priced_by_the_time_since_their_cpu_last_woke_a_task():
    """Each local wake-up of a boot's trace: the time since its CPU's previous sched_waking (a
    remote one counts), its sched_waking to sched_wakeup less one tracepoint; the first, after
    the remote one, is 5 us after it."""
    since, cost = ttwu_boot_samples(_wakeups_trace([5, 12, 40], [8, 9, 30]), event_ns=2_000)
    assert since == [5_000, 12_000, 40_000]
    assert cost == [8_000 - 2_000, 9_000 - 2_000, 30_000 - 2_000]


def test_a_wake_up_with_an_event_between_or_another_tasks_wakeup_is_no_sample():
    """As measure-guest's: a pair with another event between on its CPU is dropped, and so is a
    sched_wakeup of another task or onto another CPU (the waking went to a wakelist)."""
    lines = _wakeups_trace([5], [8])
    lines.insert(2, _line(1_000_006, "rcu_callback", "rcu_preempt rhp=0 func=f 1"))
    lines += [_line(1_000_020, "sched_waking", "comm=x pid=92 prio=120 target_cpu=000"),
              _line(1_000_025, "sched_wakeup", "comm=x pid=93 prio=120 target_cpu=000"),
              _line(1_000_030, "sched_waking", "comm=x pid=94 prio=120 target_cpu=000"),
              _line(1_000_035, "sched_wakeup", "comm=x pid=94 prio=120 target_cpu=001")]
    assert ttwu_boot_samples(lines, event_ns=2_000) == ([], [])


def test_ttwu_reuse_from_pools_every_variants_boots(tmp_path, capsys):
    """The table from the boots of every variant kept: 25 wake-ups 8 us apart at 9 us and 25 a
    millisecond apart at 30 us, in two variants' boots."""
    for variant, gaps, costs in (("a", [8] * 25, [9] * 25), ("b", [1000] * 25, [30] * 25)):
        boot = tmp_path / "raw" / variant / "boot-0"
        boot.mkdir(parents=True)
        (boot / "window.json").write_text('{"t0_ns": 0, "t1_ns": 1}')
        with gzip.open(boot / "trace.txt.gz", "wt") as f:
            f.write("\n".join(_wakeups_trace(gaps, costs)) + "\n")
    assert main(["measure-guest", "--ttwu-reuse-from", str(tmp_path)]) == 0
    out = yaml.safe_load(capsys.readouterr().out)["ttwu_reuse"]
    event_ns = profile_tracing("qemu-tcg")["event_ns"]
    assert out["since_ns"] == [10_000] and out["ttwu_ns"] == [9_000 - event_ns, 30_000 - event_ns]
    assert "50 local wake-ups" in out["source"] and "2 boots" in out["source"]


def test_ttwu_reuse_from_a_directory_without_boots_is_one_clear_error(tmp_path, capsys):
    assert main(["measure-guest", "--ttwu-reuse-from", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--ttwu-reuse-from" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_too_few_wake_ups_after_another_are_refused():
    events = synthetic()
    events = events[~events["payload"].str.contains("pid=41 ")]
    with pytest.raises(ScenarioError, match="local wake-ups after another"):
        estimate_costs(events, 2)


def test_idle_wakeups_give_median_and_p99():
    hlt = [10000 * k for k in range(1, 101)]
    costs = derive_costs(synthetic(hlt=hlt), 2)
    x = np.array(hlt) + WORK["after_enqueue"]
    assert costs["wakeup_idle_median_ns"][0] == round(np.median(x))
    assert costs["wakeup_idle_p99_ns"][0] == round(np.percentile(x, 99))


def test_a_tick_with_a_wakeup_inside_is_not_a_tick_sample():
    events = synthetic()
    tick = events.index[events["payload"] == "Start scheduler-tick"][0]
    woken = pd.DataFrame([("sh", 20, 1, "d.h..", events.at[tick, "t_ns"] + 1, "sched_waking",
                           "comm=x pid=99 prio=120 target_cpu=001")], columns=list(EVENT_COLUMNS))
    with pytest.raises(ScenarioError, match="no tick on a busy CPU"):
        derive_costs(pd.concat([events, woken], ignore_index=True), 2)


def test_a_difference_below_zero_is_refused():
    events = synthetic()
    remote = events.index[events["payload"] == "comm=cat pid=40 prio=120 target_cpu=001"][1]
    events.loc[remote, "t_ns"] -= WORK["remote"]  # a remote wake-up quicker than a local one
    with pytest.raises(ScenarioError, match="line_ns comes out negative"):
        derive_costs(events, 2)


def test_boots_are_pooled_each_less_its_own_tracing(tmp_path):
    one = synthetic()
    two = synthetic().assign(t_ns=lambda f: f["t_ns"] * 2)  # every gap, tracing too, twice as long
    both = pd.concat([one.assign(boot=0), two.assign(boot=1)], ignore_index=True)
    costs = derive_costs(both, 2)
    assert costs["trace_overhead_ns"][0] == round(np.median([G, 2 * G]))
    assert costs["tick_ns"][0] == round(np.median([WORK["tick"], 2 * WORK["tick"]]))


def test_a_trace_file_round_trip(tmp_path):
    raw = ("# tracer: nop\n"
           "              sh-73      [000] .....  2445434000: tracing_mark_write: phase=sync\n"
           "     rcu_preempt-17      [001] d..2.  4890868000: sched_switch: prev_comm=rcu_preempt prev_pid=17\n")
    khz = tsc_khz("[    0.0] tsc: Detected 2445.425 MHz processor\n[    3.6] tsc: Refined TSC clocksource "
                  "calibration: 2445.434 MHz\n")
    assert khz == 2445434
    lines = ns_trace(raw, khz)
    assert [line.split()[3] for line in lines] == ["1.000000000:", "2.000000000:"]
    path = tmp_path / "trace.txt.gz"
    write_trace(path, ["command: x"], [(khz, lines), (khz, lines)])
    events, header = read_trace(path)
    assert header == ["command: x"]
    assert events["boot"].tolist() == [0, 0, 1, 1] and events["t_ns"].tolist() == [10**9, 2 * 10**9] * 2


def test_the_guest_script_runs_every_phase_and_copies_the_trace_out():
    script = guest_script()
    assert script.startswith("set -e\n") and script.endswith("cat $T/trace > /out/trace.txt\n")
    assert [line.split("=")[1].split()[0] for line in script.splitlines() if "phase=" in line] == \
        [p.name for p in PHASES]


def test_write_profile_keeps_what_the_trace_does_not_measure(tmp_path):
    """The guest's memory and its page lists' start are not in the plan's trace: a profile
    written over keeps them as they were, sources included."""
    profile = tmp_path / "qemu-tcg.yaml"
    thread_start = {"source": "timed in the guest.", **{k: {"value": 10 + i, "source": f"{k}, measured."}
                                                       for i, k in enumerate(THREAD_START_COSTS)}}
    profile.write_text("memory_mb:\n  value: 2048\n  source: QEMU's -m 2048.\n"
                       "pcp_start_pages:\n  value: 17\n  source: seventeen pages, measured.\n"
                       + yaml.safe_dump({"thread_start": thread_start}, sort_keys=False))
    assert main(["measure-guest", "--from-trace", str(TRACE), "--write-profile", str(profile)]) == 0
    data = yaml.safe_load(profile.read_text())
    assert data["memory_mb"] == {"value": 2048, "source": "QEMU's -m 2048."}
    assert data["pcp_start_pages"] == {"value": 17, "source": "seventeen pages, measured."}
    assert data["thread_start"] == thread_start
    assert "costs" in data


def test_pcp_from_a_directory_without_boots_is_one_clear_error(tmp_path, capsys):
    assert main(["measure-guest", "--pcp-from", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--pcp-from" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def _creation_trace() -> list[str]:
    """The load helper's main thread (pid 80, CPU 0) creating threads 81-83 (µs): 81 runs before
    its unlock, sleeps on its start lock and is woken onto CPU 1; 82 and 83 run after theirs,
    straight to the barrier; three call_rcu()s between the first creation and the last."""
    ev = [(1000, 0, 80, "sched_wakeup_new", "comm=rcusim_load pid=81 prio=120 target_cpu=000"),
          (1010, 0, 80, "rcu_callback", "rcu_preempt rhp=0000000000000001 func=mt_free_rcu 1"),
          (1020, 0, 80, "sched_switch", "prev_comm=rcusim_load prev_pid=80 prev_prio=120 prev_state=R+ ==> "
                                        "next_comm=rcusim_load next_pid=81 next_prio=120"),
          (1040, 0, 81, "sched_switch", "prev_comm=rcusim_load prev_pid=81 prev_prio=120 prev_state=S ==> "
                                        "next_comm=rcusim_load next_pid=80 next_prio=120"),
          (1100, 0, 80, "sched_waking", "comm=rcusim_load pid=81 prio=120 target_cpu=001"),
          (1200, 1, 0, "sched_switch", "prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> "
                                       "next_comm=rcusim_load next_pid=81 next_prio=120"),
          (1260, 1, 81, "sched_switch", "prev_comm=rcusim_load prev_pid=81 prev_prio=120 prev_state=S ==> "
                                        "next_comm=swapper/1 next_pid=0 next_prio=120"),
          (1400, 0, 80, "rcu_callback", "rcu_preempt rhp=0000000000000002 func=mt_free_rcu 2"),
          (1500, 0, 80, "sched_wakeup_new", "comm=rcusim_load pid=82 prio=120 target_cpu=000"),
          (1900, 0, 80, "rcu_callback", "rcu_preempt rhp=0000000000000003 func=mt_free_rcu 3"),
          (2000, 0, 80, "sched_wakeup_new", "comm=rcusim_load pid=83 prio=120 target_cpu=000"),
          (2100, 0, 80, "sched_switch", "prev_comm=rcusim_load prev_pid=80 prev_prio=120 prev_state=S ==> "
                                        "next_comm=rcusim_load next_pid=82 next_prio=120"),
          (2140, 0, 82, "sched_switch", "prev_comm=rcusim_load prev_pid=82 prev_prio=120 prev_state=S ==> "
                                        "next_comm=rcusim_load next_pid=83 next_prio=120"),
          (2170, 0, 83, "sched_switch", "prev_comm=rcusim_load prev_pid=83 prev_prio=120 prev_state=S ==> "
                                        "next_comm=swapper/0 next_pid=0 next_prio=120"),
          (900, 0, 80, "sched_switch", "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
                                       "next_comm=rcusim_load next_pid=80 next_prio=120")]
    comm = {80: "rcusim_load", 81: "rcusim_load", 82: "rcusim_load", 83: "rcusim_load", 0: "<idle>"}
    return [f"{comm[pid]:>16}-{pid:<7} [{cpu:03d}] d..2.  {t / 1e6:.6f}: {name}: {payload}"
            for t, cpu, pid, name, payload in sorted(ev)]


def test_thread_creation_is_timed_from_its_trace():
    """Each step of the helper's thread creation, its tracing taken out: the parent's
    pthread_create() from its wake-up of a thread to the next clone(), its unlock up to the
    wake-up, a thread's first run (to the lock, or to the barrier) and its run once woken; the
    call_rcu()s per 1,000 threads."""
    samples = boot_samples(_creation_trace(), t0_ns=5_000_000, event_ns=2_000)
    us = 1000
    # 1100 -> 1500 on CPU 0, its call_rcu() inside; then the wake-up's own event
    assert samples["pthread_create_ns"] == [400 * us - 2 * 2_000]
    # 1000 -> 1100 less 81's run (1020 -> 1040): 80 us; the callback, its switch-out, the wake-up
    assert samples["pthread_start_ns"] == [80 * us - 3 * 2_000]
    assert samples["lock_run_ns"] == [20 * us - 2_000] and samples["woken_run_ns"] == [60 * us - 2_000]
    assert sorted(samples["barrier_run_ns"]) == [30 * us - 2_000, 40 * us - 2_000]
    assert samples["call_rcu_per_1000"] == [round(1000 * 3 / 2)]  # three, over two creations


def test_thread_start_from_a_directory_without_boots_is_one_clear_error(tmp_path, capsys):
    assert main(["measure-guest", "--thread-start-from", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--thread-start-from" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
