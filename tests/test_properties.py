"""Property-based tests of the engine over random small configurations.

Each example is a scenario dict (random machine size, rcu_node geometry, HZ,
release, NOCB mask, blimit, softirq/rcuc, wake-from-GP, exp_mutex type,
normal and expedited sync_loop workloads, optional readers) loaded through
``load_scenario`` and driven chunk by chunk with ``Engine.run``, checking:

1. the safety checker stays silent;
2. every request completes (EXIT_DONE, requests_done == sum of tasks*loops);
3. simulated time never goes backwards (engine.now, request and GP records);
4. ``engine.verify()`` is clean after every chunk;
5. under light load (think time >> a GP) no queue grows: requests in flight
   and queued callbacks never exceed the number of tasks.

RCUSIM_HYPOTHESIS_EXAMPLES sets the number of examples per property.
"""

import os

import numpy as np
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from rcusim.engine.simulate import ExitReason, build_engine
from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario

EXAMPLES = int(os.environ.get("RCUSIM_HYPOTHESIS_EXAMPLES", "30"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    phases=[Phase.explicit, Phase.generate, Phase.shrink],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

#: Simulated-time limit of every run (a light run needs well under a second).
MAX_SIM_S = 20
#: Events per engine.run() call; small so the per-chunk checks see many states.
CHUNK = 5_000
#: Give up (and fail property 2) after this many events.
MAX_TOTAL_EVENTS = 4_000_000

# Task phases (cython_core/defs.pxd): inside a synchronize_rcu*() call.
ENT_TASK = 0
IN_CALL_PHASES = {1, 4, 5, 6}  # WAITING, MUTEX_WAIT, EXP_OWNER, EXP_DRIVE


def cpulist(draw, nr_cpus):
    lo = draw(st.integers(0, nr_cpus - 1))
    hi = draw(st.integers(lo, min(nr_cpus - 1, lo + 63)))
    return f"{lo}-{hi}" if hi > lo else str(lo)


@st.composite
def scenarios(draw, light=False):
    """A scenario dict; `light` draws a workload far below GP capacity."""
    if draw(st.integers(0, 11)) == 0:
        nr_cpus = draw(st.sampled_from([64, 100, 256, 1024, 4096]))
    else:
        nr_cpus = draw(st.integers(1, 32))
    big = nr_cpus > 32
    preempt_rcu = draw(st.booleans())
    preemption = preempt_rcu or draw(st.booleans())
    nocb = draw(st.booleans())
    boot = [f"rcutree.blimit={draw(st.integers(1, 20))}",
            f"rcutree.use_softirq={draw(st.integers(0, 1))}",
            f"rcutree.rcu_normal_wake_from_gp={draw(st.integers(0, 1))}",
            f"rcutree.kthread_prio={draw(st.integers(0, 1))}"]
    if nocb and draw(st.booleans()):
        boot.append(f"rcu_nocbs={cpulist(draw, nr_cpus)}")
    kernel = {
        "release": draw(st.sampled_from(["6.17", "6.6", "4.8", "4.5"])),
        "HZ": draw(st.sampled_from([100, 250, 300, 1000])),
        "CONFIG_RCU_FANOUT": draw(st.integers(2, 64)),
        "CONFIG_RCU_FANOUT_LEAF": draw(st.integers(2, 64)),
        "CONFIG_PREEMPT_RCU": preempt_rcu,
        "CONFIG_PREEMPTION": preemption,
        "CONFIG_RCU_NOCB_CPU": nocb,
        "exp_mutex": draw(st.sampled_from(["mutex", "rt_mutex"])),
        "bootargs": " ".join(draw(st.permutations(boot))),
    }
    if kernel["release"] != "6.17":
        kernel["patches"] = ["rcu-sr-normal-wake-from-gp"]  # rcu_normal_wake_from_gp before v6.9
    workloads = []
    for _ in range(draw(st.integers(1, 2))):
        if light:
            tasks, loops, think = draw(st.integers(1, 4)), draw(st.integers(1, 8)), 20_000
        elif big:
            tasks, loops = draw(st.integers(1, 32)), draw(st.integers(1, 3))
            think = draw(st.sampled_from([0, 10, 1000]))
        else:
            tasks, loops = draw(st.integers(1, 12)), draw(st.integers(1, 12))
            think = draw(st.sampled_from([0, 0, 5, 100, 2000, 20000]))
        wl = {"kind": "sync_loop", "tasks": tasks, "loops": loops,
              "primitive": draw(st.sampled_from(["synchronize_rcu", "synchronize_rcu_expedited"])),
              "rt": draw(st.booleans()), "think_us": think,
              "work_after": draw(st.sampled_from(["none", "kfree"]))}
        if draw(st.booleans()):
            wl["cpus"] = cpulist(draw, nr_cpus)
        workloads.append(wl)
    if draw(st.booleans()):
        length = draw(st.sampled_from([1, 5, 20, 100]))
        rate = draw(st.sampled_from([100, 1000, 5000]))
        rd = {"kind": "readers", "length_us": length, "rate_per_s": rate,
              "between": draw(st.sampled_from(["sleep", "busy"]))}
        if big:
            rd["cpus"] = cpulist(draw, nr_cpus)
        if preempt_rcu:
            rd["preemptible"] = draw(st.booleans())
        workloads.append(rd)
    return {"name": "prop", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": nr_cpus},
            "kernel": kernel, "workloads": workloads, "run": {"max_sim_time_s": MAX_SIM_S}}


def expected_requests(d):
    return sum(w["tasks"] * w["loops"] for w in d["workloads"] if w["kind"] == "sync_loop")


def load(d):
    try:
        return load_scenario(d).variants["default"]
    except ScenarioError:
        assume(False)  # e.g. a tree too deep for the CPU count, or an option this release lacks


def drive(d, seed, on_chunk=None):
    """Run to the end in chunks; return (engine, exit reason, engine.now after each chunk)."""
    spec = load(d)
    engine, _ = build_engine(spec, seed)
    until = MAX_SIM_S * 10**9
    times, events = [engine.now], 0
    while True:
        reason = engine.run(until, CHUNK)
        events += CHUNK
        times.append(engine.now)
        if on_chunk is not None:
            on_chunk(engine)
        if reason != ExitReason.MAX_EVENTS or events >= MAX_TOTAL_EVENTS:
            return engine, reason, times


seeds = st.integers(0, 2**32 - 1)


@SETTINGS
@given(scenarios(), seeds)
def test_safety_checker_stays_silent(d, seed):
    engine, _, _ = drive(d, seed)
    safety = engine.safety()
    assert safety["violations"] == 0, (d, seed, safety["messages"][:3])


#: A busy rcu_sched reader on each of 2 CPUs of a CONFIG_PREEMPTION=n kernel: the
#: GP kthread shares CPU 0 with one of them. Before cond_resched() was modelled in
#: the readers' loop, the reader never yielded CPU 0, the GP kthread never ran its
#: FQS scans and this single synchronize_rcu() never returned.
STALL_REPRO = {
    "name": "stall", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2},
    "kernel": {"release": "6.17", "HZ": 100, "CONFIG_PREEMPT_RCU": False, "CONFIG_PREEMPTION": False},
    "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 1, "primitive": "synchronize_rcu",
                   "work_after": "none"},
                  {"kind": "readers", "length_us": 1, "rate_per_s": 100, "between": "busy"}],
    "run": {"max_sim_time_s": MAX_SIM_S},
}


def test_busy_readers_on_a_non_preemptible_kernel_do_not_stall_gps():
    engine, reason, _ = drive(STALL_REPRO, 0)
    assert reason == ExitReason.DONE and engine.requests_done == 1


#: CONFIG_PREEMPTION=y: the SCHED_FIFO GP kthread preempts the busy SCHED_OTHER reader
#: on CPU 0 every jiffy or so. Before a preempted task's time slice was carried across
#: the preemption, the reader never ran a whole jiffy, never yielded at the tick, and
#: the SCHED_OTHER caller and the wake-from-GP kworker on CPU 0 never ran.
STARVATION_REPRO = {
    "name": "starvation", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 6},
    "kernel": {"release": "6.17", "HZ": 100, "CONFIG_RCU_FANOUT": 2, "CONFIG_RCU_FANOUT_LEAF": 3,
               "bootargs": "rcutree.use_softirq=0 rcutree.rcu_normal_wake_from_gp=1 rcutree.kthread_prio=1"},
    "workloads": [{"kind": "sync_loop", "tasks": 4, "loops": 4, "rt": True, "think_us": 0, "work_after": "none"},
                  {"kind": "sync_loop", "tasks": 2, "loops": 1, "think_us": 0, "work_after": "none"},
                  {"kind": "readers", "length_us": 1, "rate_per_s": 100, "between": "busy",
                   "preemptible": False}],
    "run": {"max_sim_time_s": MAX_SIM_S},
}


def test_sched_other_tasks_get_the_cpu_of_a_busy_reader_preempted_by_rt_kthreads():
    engine, reason, _ = drive(STARVATION_REPRO, 0)
    assert reason == ExitReason.DONE and engine.requests_done == 18


@SETTINGS
@given(scenarios(), seeds)
def test_every_request_completes(d, seed):
    engine, reason, _ = drive(d, seed)
    assert reason == ExitReason.DONE, (d, seed, reason, engine.requests_done, engine.now)
    assert engine.requests_done == expected_requests(d)
    assert engine.tasks_remaining == 0
    assert len(engine.requests()["t_end_ns"]) == expected_requests(d)


@SETTINGS
@given(scenarios(), seeds)
def test_simulated_time_never_goes_backwards(d, seed):
    engine, _, times = drive(d, seed)
    assert all(a <= b for a, b in zip(times, times[1:])), (d, seed)
    req = engine.requests()
    assert (req["t_start_ns"] >= 0).all()
    assert (req["t_end_ns"] >= req["t_start_ns"]).all(), (d, seed)
    assert (req["t_end_ns"] <= engine.now).all()
    gps = engine.grace_periods()
    t0, tq, t1 = gps["t_start_ns"], gps["t_qs_ns"], gps["t_end_ns"]
    assert (t0 <= t1).all(), (d, seed)
    assert (t0 <= tq).all(), (d, seed)
    # tq <= t1 is broken by a known engine bug; see the xfail reproducer below.
    assert (t1 <= engine.now).all()
    for flavour in (False, True):
        ends = t1[np.asarray(gps["expedited"], dtype=bool) == flavour]
        assert (np.diff(ends) >= 0).all(), (d, seed, flavour)


@SETTINGS
@given(scenarios(), seeds)
def test_verify_is_clean_after_every_chunk(d, seed):
    problems = []

    def check(engine):
        p = engine.verify()
        if p and not problems:
            problems.append((engine.now, p[:5]))

    drive(d, seed, check)
    assert not problems, (d, seed, problems)


@SETTINGS
@given(scenarios(light=True), seeds)
def test_no_queue_grows_under_light_load(d, seed):
    tasks = sum(w["tasks"] for w in d["workloads"] if w["kind"] == "sync_loop")
    worst = {"in_call": 0, "cbs": 0, "seg": 0}

    def check(engine):
        state = engine.state()
        in_call = sum(1 for kind, _, _, phase in state["ents"]
                      if kind == ENT_TASK and phase in IN_CALL_PHASES)
        cbs = sum(sum(cpu[3]) + cpu[5] for cpu in state["cpus"])
        seg = max(max(cpu[3]) for cpu in state["cpus"])
        for k, v in (("in_call", in_call), ("cbs", cbs), ("seg", seg)):
            worst[k] = max(worst[k], v)

    drive(d, seed, check)
    assert worst["in_call"] <= tasks, (d, seed, worst)
    assert worst["seg"] <= tasks, (d, seed, worst)
    assert worst["cbs"] <= tasks, (d, seed, worst)


#: Expedited GP on a v4.8 kernel (the requesting task drives the GP): the GP
#: record's all-QS time t_qs_ns is later than its end time t_end_ns.
QS_AFTER_END_REPRO = {
    "name": "qs_after_end", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 64},
    "kernel": {"release": "4.8", "HZ": 100, "CONFIG_RCU_FANOUT": 2, "CONFIG_RCU_FANOUT_LEAF": 8},
    "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 1, "primitive": "synchronize_rcu_expedited",
                   "work_after": "none"}],
    "run": {"max_sim_time_s": MAX_SIM_S},
}


def test_expedited_gp_records_qs_before_end_on_4_8():
    engine, reason, _ = drive(QS_AFTER_END_REPRO, 0)
    gps = engine.grace_periods()
    assert reason == ExitReason.DONE
    assert (gps["t_qs_ns"] <= gps["t_end_ns"]).all(), (gps["t_qs_ns"], gps["t_end_ns"])
