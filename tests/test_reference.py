"""The SimPy reference model (rcusim.engine.reference) against the compiled engine.

Both run the same scenario variant from the same low-level inputs and the
same seed.  They implement the same mechanisms but are free to order events
that fall on the same nanosecond differently, and such a difference can move
a synchronize_rcu() call to the next grace period; so the contract is
statistical, with bands set from how far that can move the results:

* Grace periods: counts of each flavour (normal, expedited) within 10% (at
  least 1).  A call moved to the next GP can add one GP at the end of a run,
  or let two requests share one.  Expedited IPIs, callbacks invoked and
  rcu_core() passes: within 10% too, for the same reason.
* Mean latency within 5%.  A call waits one to three GPs, and a GP is a
  third to a half of the mean latency here: moving a tenth of the calls by
  one GP moves the mean by about 5%.
* Latency distributions: two-sample Kolmogorov-Smirnov p >= 0.001
  (msprime's threshold; over the 8 variants here the family-wise false
  alarm rate stays under 1%).

The bands catch broken mechanisms: twice the FQS delay in the reference alone
moves the mean latency by 30-105% on the variants whose GPs end on FQS scans
(test_checks_reject_a_doubled_fqs_delay).

On these configurations the two models also happen to order every event
alike and produce identical records; test_records_are_identical holds the
engine to that, the way msprime holds its C code to its Python twin.  If an
engine change reorders same-instant events only, that test fails while the
statistical ones pass: align the reference, or explain the new order.

They agree record for record at scale too (SCALE_CONFIGS): 64 CPUs with
10,000 pinned synchronize_rcu() callers woken from the GP kthread, and the
4096-CPU expedited storm.  Reduced versions run by default; the full sizes are
marked slow (``python -m pytest -m slow``).

The expedited configurations (EXP_CONFIGS) cover synchronize_rcu_expedited()
on v6.x kernels: the exp_wq funnel, exp_mutex, per-leaf workers, IPIs to busy
CPUs, alone and next to synchronize_rcu() callers.  A snapshot that waits only
for the GP in progress, instead of a full GP after the call, is caught
(test_checks_reject_a_partial_expedited_gp_snapshot).

All configurations keep every CPU's callbacks local (no rcu_nocbs=): NOCB
is outside the reference's scope, and so are readers.
"""

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import ks_2samp

from rcusim.engine.engine_input import engine_input
from rcusim.engine.reference import run_reference, run_reference_spec
from rcusim.engine.reference.compare import (agreement_table, covered_by_full_gp, first_difference, latencies_ns,
                                             run_both, run_engine)
from rcusim.engine.reference.model import Model
from rcusim.engine.reference.sched import SLEEP, Entity
from rcusim.input.scenario import load_scenario

SEED = 0
GP_TOL = 0.10
MEAN_TOL = 0.05
P_THRESHOLD = 0.001

VARIANTS = """
variants:
  default: {}
  wake_from_gp: {"kernel.bootargs": "rcutree.rcu_normal_wake_from_gp=1"}
"""

CONFIGS = {
    # All CPUs busy: GPs end on ticks, callbacks run in RCU_SOFTIRQ.
    "cpu4_hz1000": """
name: cpu4_hz1000
hardware: {profile: x86-64-server-2023, nr_cpus: 4}
kernel: {release: "6.6", HZ: 1000, patches: [rcu-sr-normal-wake-from-gp]}
workloads:
  - {kind: sync_loop, tasks: 16, loops: 20, think_us: 300, work_after: kfree}
""",
    # Half the CPUs idle: GPs end on FQS scans; HZ=250 jiffies.
    "cpu16_hz250": """
name: cpu16_hz250
hardware: {profile: x86-64-server-2023, nr_cpus: 16}
kernel: {release: "6.6", HZ: 250, patches: [rcu-sr-normal-wake-from-gp]}
workloads:
  - {kind: sync_loop, tasks: 64, loops: 5, think_us: 1500, cpus: "0-7", work_after: kfree}
""",
    # 200 callers at once: batches of callbacks, blimit and ksoftirqd.
    "cpu16_200tasks": """
name: cpu16_200tasks
hardware: {profile: x86-64-server-2023, nr_cpus: 16}
kernel: {release: "6.6", HZ: 1000, patches: [rcu-sr-normal-wake-from-gp]}
workloads:
  - {kind: sync_loop, tasks: 200, loops: 2, think_us: 100, work_after: kfree}
""",
    # SCHED_FIFO callers preempting SCHED_OTHER ones, !PREEMPT_RCU quiescent states.
    "cpu4_rt_nopreempt_rcu": """
name: cpu4_rt_nopreempt_rcu
hardware: {profile: x86-64-server-2023, nr_cpus: 4}
kernel: {release: "6.6", HZ: 250, CONFIG_PREEMPT_RCU: false, patches: [rcu-sr-normal-wake-from-gp]}
workloads:
  - {kind: sync_loop, tasks: 12, loops: 20, think_us: 250, work_after: kfree}
  - {kind: sync_loop, tasks: 4, loops: 20, think_us: 700, rt: true, start_us: 130}
""",
    # Mostly idle CPUs in the profile's idle states: the menu governor keeps the
    # callers' ticks while their callbacks wait, the timer-migration hierarchy
    # expires the FQS timer (v6.19).
    "cpu8_idle_v6_19": """
name: cpu8_idle_v6_19
hardware: {profile: x86-64-server-2023, nr_cpus: 8}
kernel: {release: "6.19", HZ: 250}
workloads:
  - {kind: sync_loop, tasks: 3, loops: 30, think_us: 700, cpus: "2,5,6", work_after: kfree}
""",
    # Tasks released from a pthread barrier by their parent on CPU 0, one wake-up after another.
    "cpu4_barrier": """
name: cpu4_barrier
hardware: {profile: x86-64-server-2023, nr_cpus: 4}
kernel: {release: "6.6", HZ: 1000, patches: [rcu-sr-normal-wake-from-gp]}
workloads:
  - {kind: sync_loop, tasks: 16, loops: 20, think_us: 300, work_after: kfree, start: barrier}
""",
    # No cpuidle driver (the QEMU guest): each CPU going idle keeps its tick to the
    # next jiffy and stops it there (f4c31b07b136, in 6.12 from 6.12.78).
    "cpu8_nodriver_6_12_78": """
name: cpu8_nodriver_6_12_78
hardware: {profile: qemu-tcg, nr_cpus: 8}
kernel: {release: "6.12", HZ: 1000, patches: [sched-idle-consolidate-special-cases]}
workloads:
  - {kind: sync_loop, tasks: 3, loops: 30, think_us: 700, cpus: "2,5,6", work_after: kfree}
""",
}


ROOT = Path(__file__).resolve().parents[1]

# 64 CPUs, pinned synchronize_rcu(); kfree() callers spread round-robin, woken
# from the GP kthread (the reference keeps every task on its CPU: the pinned
# form of sync_rcu_10k_pinned.yaml, without NOCB).
SYNC_CPU64 = """
name: sync_cpu64_wake_from_gp
hardware: {{profile: x86-64-server-2023, nr_cpus: 64}}
kernel: {{release: "6.6", HZ: 1000, patches: [rcu-sr-normal-wake-from-gp], bootargs: "rcutree.rcu_normal_wake_from_gp=1"}}
workloads:
  - {{kind: sync_loop, tasks: {tasks}, loops: {loops}, primitive: synchronize_rcu, work_after: kfree, cpus: all}}
"""

# name: (reduced, full) sizes as (tasks, loops); None keeps the bundled scenario's.
SCALE_CONFIGS = {
    "sync_cpu64_wake_from_gp": ((2000, 5), (10000, 10)),
    # scenarios/expedited_storm_4096.yaml, its first variant (leaf16_mutex): 4096
    # SCHED_FIFO synchronize_rcu_expedited() callers, one per CPU, 1 + 4 + 256 rcu_nodes.
    "expedited_storm_4096": ((None, 2), (None, None)),
}


def scale_spec(name: str, tasks: int | None, loops: int | None):
    if name == "sync_cpu64_wake_from_gp":
        doc = yaml.safe_load(SYNC_CPU64.format(tasks=tasks, loops=loops))
    else:
        doc = yaml.safe_load((ROOT / "scenarios" / f"{name}.yaml").read_text())
        doc["variants"] = dict(list(doc["variants"].items())[:1])
        for key, value in (("tasks", tasks), ("loops", loops)):
            if value is not None:
                doc["workloads"][0][key] = value
    (spec,) = load_scenario(doc).variants.values()
    return spec


def record_differences(core: dict, ref: dict) -> list[str]:
    """Every table the reference records, compared exactly with the engine's."""
    problems = [d for d in [first_difference(core, ref)] if d is not None]
    for table in ("requests", "grace_periods"):
        for k, v in ref[table].items():
            if not np.array_equal(v, core[table][k]):
                problems.append(f"{table}[{k!r}] differ")
    problems += [f"counters[{k!r}]: engine {core['counters'][k]}, reference {v}"
                 for k, v in ref["counters"].items() if core["counters"][k] != v]
    return problems


EXP_VARIANTS = """
variants:
  default: {}
  rt_kthreads: {"kernel.bootargs": "rcutree.kthread_prio=1"}
"""

EXP_CONFIGS = {
    # One leaf: the kworker selects every CPU itself; callers busy in user mode get IPIs.
    "exp_cpu4": """
name: exp_cpu4
hardware: {profile: x86-64-server-2023, nr_cpus: 4}
kernel: {release: "6.17", HZ: 1000}
workloads:
  - {kind: sync_loop, tasks: 16, loops: 20, think_us: 300, primitive: synchronize_rcu_expedited, work_after: kfree}
""",
    # Four leaves: three per-leaf workers select in parallel; normal GPs alongside.
    "exp_cpu16_leaf4": """
name: exp_cpu16_leaf4
hardware: {profile: x86-64-server-2023, nr_cpus: 16}
kernel: {release: "6.17", HZ: 250, CONFIG_RCU_FANOUT_LEAF: 4}
workloads:
  - {kind: sync_loop, tasks: 24, loops: 10, think_us: 200, primitive: synchronize_rcu_expedited, cpus: "0-11", work_after: kfree}
  - {kind: sync_loop, tasks: 8, loops: 10, think_us: 1000, cpus: "4-15", work_after: kfree}
""",
    # A three-level tree (fanout 2, leaf 2): the funnel climbs; SCHED_FIFO synchronize_rcu() callers.
    "exp_cpu8_deep": """
name: exp_cpu8_deep
hardware: {profile: x86-64-server-2023, nr_cpus: 8}
kernel: {release: "6.6", HZ: 1000, CONFIG_RCU_FANOUT: 2, CONFIG_RCU_FANOUT_LEAF: 2}
workloads:
  - {kind: sync_loop, tasks: 32, loops: 10, think_us: 50, primitive: synchronize_rcu_expedited, work_after: none}
  - {kind: sync_loop, tasks: 8, loops: 10, think_us: 500, rt: true, work_after: kfree}
""",
    # rcu_scale_writer()'s loop: SCHED_FIFO writers, done ones SCHED_NORMAL and measuring on
    # until every writer is done, beside nice-0 callers on their CPUs.
    "exp_rcuscale_writers": """
name: exp_rcuscale_writers
hardware: {profile: x86-64-server-2023, nr_cpus: 4}
kernel: {release: "6.12", HZ: 1000}
run: {max_sim_time_s: 2}
workloads:
  - {kind: sync_loop, tasks: 3, loops: 30, rt: true, until_all_done: true, min_runtime_s: 0,
     primitive: synchronize_rcu_expedited, work_after: none}
  - {kind: sync_loop, tasks: 8, loops: 15, think_us: 300, work_after: kfree}
""",
    # The same without preemption in the kernel: a writer the kworker wakes waits for the
    # kworker's cond_resched() after its work, which leaves it runnable for the next work.
    "exp_rcuscale_writers_voluntary": """
name: exp_rcuscale_writers_voluntary
hardware: {profile: x86-64-server-2023, nr_cpus: 4}
kernel: {release: "6.12", HZ: 1000, CONFIG_PREEMPT_DYNAMIC: true, bootargs: "preempt=voluntary"}
run: {max_sim_time_s: 2}
workloads:
  - {kind: sync_loop, tasks: 3, loops: 30, rt: true, until_all_done: true, min_runtime_s: 0,
     primitive: synchronize_rcu_expedited, work_after: none}
  - {kind: sync_loop, tasks: 8, loops: 15, think_us: 300, work_after: kfree}
""",
}


def load(name: str):
    if name in EXP_CONFIGS:
        return load_scenario(yaml.safe_load(EXP_CONFIGS[name] + EXP_VARIANTS))
    return load_scenario(yaml.safe_load(CONFIGS[name] + VARIANTS))


KEYS = ([(c, v) for c in CONFIGS for v in ("default", "wake_from_gp")]
        + [(c, v) for c in EXP_CONFIGS for v in ("default", "rt_kthreads")])


@pytest.fixture(scope="module")
def runs():
    out = {}
    for cfg in [*CONFIGS, *EXP_CONFIGS]:
        for variant, spec in load(cfg).variants.items():
            out[cfg, variant] = run_both(spec, SEED)
    return out


def disagreements(core: dict, ref: dict) -> list[str]:
    """The agreement checks; an empty list when the two models agree."""
    n_c, n_r = len(core["requests"]["task"]), len(ref["requests"]["task"])
    if n_c != n_r or not n_c:
        return [f"completed requests: engine {n_c}, reference {n_r}"]
    problems = []
    for flavour in ("normal", "expedited"):
        gps_c = int((core["grace_periods"]["expedited"] == (flavour == "expedited")).sum())
        gps_r = int((ref["grace_periods"]["expedited"] == (flavour == "expedited")).sum())
        if abs(gps_r - gps_c) > max(1, GP_TOL * gps_c):
            problems.append(f"{flavour} grace periods: engine {gps_c}, reference {gps_r}")
    for counter in ("exp_ipis", "callbacks_invoked", "rcu_core_passes"):
        n_c, n_r = core["counters"][counter], ref["counters"][counter]
        if abs(n_r - n_c) > max(1, GP_TOL * n_c):
            problems.append(f"{counter}: engine {n_c}, reference {n_r}")
    lat_c, lat_r = latencies_ns(core), latencies_ns(ref)
    if abs(lat_r.mean() - lat_c.mean()) > MEAN_TOL * lat_c.mean():
        problems.append(f"mean latency: engine {lat_c.mean() / 1e3:.1f} us, reference {lat_r.mean() / 1e3:.1f} us")
    p = ks_2samp(lat_c, lat_r).pvalue
    if p < P_THRESHOLD:
        problems.append(f"latency distributions differ: KS p = {p:.2g}")
    return problems


@pytest.mark.parametrize("key", KEYS, ids=["/".join(k) for k in KEYS])
def test_reference_agrees_with_engine(runs, key):
    assert disagreements(*runs[key]) == []


@pytest.mark.parametrize("key", KEYS, ids=["/".join(k) for k in KEYS])
def test_records_are_identical(runs, key):
    core, ref = runs[key]
    assert record_differences(core, ref) == []


@pytest.mark.parametrize("key", KEYS, ids=["/".join(k) for k in KEYS])
def test_every_call_waits_for_a_full_grace_period(runs, key):
    # synchronize_rcu() returns only after a whole GP that began after the call.
    for result in runs[key]:
        assert result["finished"]
        assert len(result["requests"]["task"]) > 0
        assert covered_by_full_gp(result).all()


@pytest.mark.parametrize("name", list(SCALE_CONFIGS))
def test_records_are_identical_at_reduced_scale(name):
    core, ref = run_both(scale_spec(name, *SCALE_CONFIGS[name][0]), SEED)
    assert core["finished"] and ref["finished"]
    assert record_differences(core, ref) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SCALE_CONFIGS))
def test_records_are_identical_at_full_scale(name):
    spec = scale_spec(name, *SCALE_CONFIGS[name][1])
    core, ref = run_both(spec, SEED)
    print(f"\n{name}: {len(core['requests']['task']):,} requests, {len(core['grace_periods']['gp_seq'])} GPs; "
          f"wall time engine {core['wall_s']:.3f} s, reference {ref['wall_s']:.2f} s")
    assert core["finished"] and ref["finished"]
    workload = spec.workloads[0]
    assert len(core["requests"]["task"]) == workload.tasks * workload.loops
    assert record_differences(core, ref) == []


@pytest.mark.parametrize("variant", ["default", "wake_from_gp"])
def test_checks_reject_a_doubled_fqs_delay(variant):
    # The checks have power: twice jiffies_till_first/next_fqs in the
    # reference alone, on the configuration whose GPs end on FQS scans.
    spec = load("cpu16_hz250").variants[variant]
    core = run_engine(spec, SEED)
    inp, _ = engine_input(spec)
    gp = dataclasses.replace(inp.tree_gp, jiffies_till_first_fqs=2 * inp.tree_gp.jiffies_till_first_fqs,
                             jiffies_till_next_fqs=2 * inp.tree_gp.jiffies_till_next_fqs)
    ref = run_reference(dataclasses.replace(inp, tree_gp=gp), SEED, round(spec.run.max_sim_time_s * 1e9))
    assert disagreements(core, ref)


@pytest.mark.parametrize("cfg", ["exp_cpu4", "exp_cpu16_leaf4", "exp_cpu8_deep"])
def test_checks_reject_a_partial_expedited_gp_snapshot(cfg, monkeypatch):
    # (Not on exp_rcuscale_writers: its SCHED_FIFO writers, returning at once, call on
    # without blocking until the time limit.)
    # The checks have power on the expedited path: a snapshot of
    # expedited_sequence that only waits for the GP in progress to end
    # ((s + 4) & ~3 instead of rcu_seq_snap()'s (s + 7) & ~3) lets callers
    # return before a full GP that began after the call.
    spec = load(cfg).variants["default"]
    core = run_engine(spec, SEED)
    monkeypatch.setattr("rcusim.engine.reference.tree_exp.rcu_seq_snap", lambda s: (s + 4) & ~3)
    ref = run_reference_spec(spec, SEED)
    # On exp_cpu4 the early returns shift the mean and distribution too little
    # for the statistical checks; the record-for-record check sees them.
    assert disagreements(core, ref) or first_difference(core, ref) is not None
    assert not covered_by_full_gp(ref).all()


def test_expedited_configs_exercise_the_machinery(runs):
    # The funnel's wait queues, exp_mutex waits, IPIs and per-leaf workers all run.
    counters = {k: sum(runs[c, "default"][1]["counters"][k] for c in EXP_CONFIGS)
                for k in ("exp_funnel_waits", "exp_mutex_waits", "exp_ipis")}
    assert all(v > 0 for v in counters.values()), counters
    gps = runs["exp_cpu16_leaf4", "default"][1]["grace_periods"]
    assert gps["expedited"].any() and not gps["expedited"].all()


def test_a_6_12_config_exercises_delayed_dequeue(runs):
    # EEVDF's DELAY_DEQUEUE (v6.12): the writers' and callers' sleeps past V stay queued,
    # in the engine and the reference alike (test_records_are_identical compares them).
    assert runs["exp_rcuscale_writers", "default"][1]["counters"]["delayed_dequeues"] > 0


def test_old_expedited_machinery_is_out_of_scope():
    doc = yaml.safe_load(EXP_CONFIGS["exp_cpu4"])
    doc["kernel"]["release"] = "4.8"
    with pytest.raises(NotImplementedError, match="v4.17"):
        run_reference_spec(load_scenario(doc).variants["default"], SEED)


@pytest.mark.parametrize("change", ["release 4.14", "POLL only", "long tick"])
def test_records_are_identical_for_other_idle_regimes(change):
    # Before v4.17 the tick stops ahead of menu_select(), which then never keeps
    # it; with POLL as the only state the governor keeps every idle CPU's tick; a
    # tick handler that outlasts the GP kthread's wake-up holds the idle CPU out of
    # its extended QS when the FQS scan looks (a second scan reports it).
    doc = yaml.safe_load(CONFIGS["cpu8_idle_v6_19"])
    if change == "release 4.14":
        doc["kernel"] = {"release": "4.14", "HZ": 1000}
    elif change == "POLL only":
        doc["hardware"]["idle_states"] = [{"name": "POLL", "exit_latency_us": 0, "target_residency_us": 0,
                                           "polling": True}]
    else:
        doc["hardware"]["costs"] = {**doc["hardware"].get("costs", {}), "tick_ns": 300_000}
    core, ref = run_both(load_scenario(doc).variants["default"], SEED)
    assert first_difference(core, ref) is None, first_difference(core, ref)
    assert core["counters"]["ticks"] == ref["counters"]["ticks"]
    if change == "long tick":
        assert (core["grace_periods"]["fqs_scans"] == 2).any()


LOST_REQUEST = """
name: callers_on_the_gp_kthread_cpu
hardware: {profile: x86-64-server-2023, nr_cpus: 2}
kernel: {release: "6.6", HZ: 1000, patches: [rcu-sr-normal-wake-from-gp]}
workloads:
  - {kind: sync_loop, tasks: 2, loops: 10, think_us: 500, cpus: "0"}
run: {max_sim_time_s: 1}
"""


def test_a_gp_requested_during_cleanup_is_not_lost():
    # Callers only on CPU 0, where the GP kthread runs: their callbacks are
    # accelerated by __note_gp_changes() inside rcu_gp_cleanup()'s walk, while
    # rcu_state.gp_seq has not ended, so rcu_start_this_gp() only records the
    # request in gp_seq_needed; rcu_future_gp_cleanup() on the same node must
    # see it (kernel/rcu/tree.c, rcu_gp_cleanup()).  Otherwise no GP ever
    # starts again and the callers hang.
    ref = run_reference_spec(load_scenario(yaml.safe_load(LOST_REQUEST)).variants["default"], SEED)
    assert ref["finished"]
    assert len(ref["requests"]["task"]) == 20
    assert covered_by_full_gp(ref).all()


def test_a_tick_restarted_on_leaving_idle_comes_before_a_burst_ending_on_its_jiffy():
    # do_idle() restarts the stopped tick in tick_nohz_idle_exit() before
    # schedule_idle() runs the woken entity (kernel/sched/idle.c), and the
    # engine's cpu_pick() queues that tick before the entity's first burst: a
    # burst that ends on the next jiffy boundary is interrupted by the tick and
    # ends tick_ns later.  (expedited_storm_4096 has one such instant.)
    inp, _ = engine_input(load_scenario(yaml.safe_load(LOST_REQUEST)).variants["default"])
    sim = Model(inp, SEED)
    cpu, jiffy = sim.cpus[1], inp.sched.jiffy_ns
    seen = {}

    def body():
        t0 = yield SLEEP
        seen["boundary"] = (t0 // jiffy + 1) * jiffy
        seen["end"] = yield seen["boundary"] - t0

    probe = Entity(sim, 1, True, "probe")
    probe.start(body())

    def wake(_event):
        seen["tick_on"] = cpu.tick_on
        cpu.activate(probe)

    sim.env.timeout(jiffy // 2).callbacks.append(wake)
    sim.env.run(until=2 * jiffy)
    assert seen["tick_on"] is False
    assert seen["end"] >= seen["boundary"] + inp.sched.tick_ns


def test_engine_does_not_lose_a_gp_requested_during_cleanup():
    core = run_engine(load_scenario(yaml.safe_load(LOST_REQUEST)).variants["default"], SEED)
    assert core["finished"]


def test_records_have_the_engine_layout(runs):
    core, ref = runs["cpu4_hz1000", "default"]
    for table in ("requests", "grace_periods"):
        assert ref[table].keys() <= core[table].keys()
        for k, v in ref[table].items():
            assert v.dtype == core[table][k].dtype, (table, k)
    assert ref["counters"].keys() <= core["counters"].keys()


def test_offloaded_cpus_are_out_of_scope():
    doc = yaml.safe_load(CONFIGS["cpu4_hz1000"])
    doc["kernel"].update(CONFIG_RCU_NOCB_CPU=True, bootargs="rcu_nocbs=0-1")
    spec = load_scenario(doc).variants["default"]
    with pytest.raises(NotImplementedError, match="NOCB"):
        run_reference_spec(spec, SEED)


def test_agreement_table():
    table = agreement_table([yaml.safe_load(CONFIGS["cpu4_hz1000"] + VARIANTS)])
    assert list(table["config"]) == ["cpu4_hz1000/default", "cpu4_hz1000/wake_from_gp"]
    assert isinstance(table, pd.DataFrame)
    assert (table["ks_pvalue"] >= P_THRESHOLD).all()
