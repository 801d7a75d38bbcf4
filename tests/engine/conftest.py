"""What several of the engine's test files share: scenarios, the runs built from them
(fixtures) and the helpers that read them. Each file in tests/engine/ tests one file of
cython_core/ (test_<stem>.py for <stem>.pxi); tests elsewhere import these by name
(`from tests.engine.conftest import ...`)."""

from __future__ import annotations

import argparse
import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

import rcusim
from rcusim import _core, run
from rcusim.commands.cli import main
from rcusim.engine.engine_input import engine_input
from rcusim.engine.simulate import build_engine, run_engine
from rcusim.input.kvmcmd import scenario_from_kvm
from rcusim.input.profiles import profile_idle_states
from rcusim.input.scenario import load_scenario
from rcusim.kernel.cpus import cpu_topology
from rcusim.kernel.sched_domains import sched_domains
from rcusim.results import trace
from rcusim.results.run import run_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"


# --- one engine, traced ------------------------------------------------------------------
def engine_trace(data: dict, seconds: float = 1000.0, seed: int = 0, fault: str | None = None):
    """The engine of `data`'s default variant (with a deliberate model fault of
    rcusim.engine.faults, if named) after running `seconds` or to its end, and its trace."""
    engine, _ = build_engine(load_scenario(data).variants["default"], seed, fault=fault)
    engine.trace_enable(10**7)
    engine.run(round(seconds * 1e9), 10**9)
    return engine, engine.trace_records()


def callback_lifetimes(records, kind: str | None = None) -> np.ndarray:
    """Every callback call_rcu() queued (TR_CALLBACK), in the order queued: the CPU it was
    queued on, when, and when it was invoked (TR_CB_INVOKE; -1 if not yet) and in which
    position among all invocations (-1 if not yet). A callback's id (its slot in the pool)
    is taken again only after its invocation, so the two records pair up by id."""
    kinds = [_core.TRACE_KINDS["callback"], _core.TRACE_KINDS["cb_invoke"]]
    rec = records[np.isin(records["kind"], kinds)]
    if kind is not None:
        rec = rec[rec["arg"] == _core.CALLBACK_KINDS[kind]]
    out = np.zeros(int((rec["kind"] == kinds[0]).sum()),
                   dtype=[("cpu", np.int32), ("t_queued", np.int64), ("t_invoked", np.int64), ("order", np.int64)])
    out["t_invoked"] = out["order"] = -1
    queued, n, invoked = {}, 0, 0
    for r in rec:
        if r["kind"] == kinds[0]:
            out["cpu"][n], out["t_queued"][n] = r["cpu"], r["t"]
            queued[int(r["arg2"])] = n
            n += 1
        elif int(r["arg2"]) in queued:  # (one queued before the trace began is not followed)
            i = queued.pop(int(r["arg2"]))
            out["t_invoked"][i], out["order"][i] = r["t"], invoked
            invoked += 1
    return out


def task_sleeps(release: str, max_jiffies: int, seconds: float = 20.0, seed: int = 0):
    """A call_rcu_load task alone on CPU 0 (HZ=1000) that sleeps in schedule_timeout_idle() for
    1 to `max_jiffies` jiffies (torture_random()) after each 10 us of work, for `seconds`: the
    jiffy of each sleep's start (when its timer was armed) and the time its timer woke it."""
    data = {"name": "sleeps", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2},
            "kernel": {"release": release, "HZ": 1000},
            "workloads": [{"kind": "call_rcu_load", "cpus": "0", "work_us": 10, "call_rcu_per_op": 0,
                           "sleep_jiffies_max": max_jiffies}],
            "run": {"duration_s": seconds}}
    eng, records = engine_trace(data, seconds, seed)
    task = int(np.flatnonzero(eng.entity_kinds()["kind"] == _core.ENTITY_KINDS["bg"])[0])
    switches = records[(records["kind"] == _core.TRACE_KINDS["switch"]) & (records["cpu"] == 0)]
    ran = np.flatnonzero(switches["ent"] == task)
    slept = switches["t"][ran[ran + 1 < len(switches)] + 1]  # the switch away from it
    woken = records[(records["kind"] == _core.TRACE_KINDS["wake"]) & (records["ent"] == task)]["t"]
    n = min(len(slept), len(woken))
    assert n > 100 and (woken[:n] > slept[:n]).all()
    return slept[:n] // 1_000_000, woken[:n]


# --- synchronize_rcu() at scale: seed 000's scenario, scaled down ---------------------
SYNC_RCU_10K = SCENARIOS / "sync_rcu_10k.yaml"
SYNC_RCU_SMALL = ["workloads.0.tasks=1000", "workloads.0.loops=20"]


@pytest.fixture(scope="module")
def small_result():
    return rcusim.run(SYNC_RCU_10K, overrides=SYNC_RCU_SMALL, check=True)


def sync_rcu_dict(**kernel):
    """The bundled scenario, scaled down, with kernel keys replaced (not appended)."""
    d = yaml.safe_load(SYNC_RCU_10K.read_text())
    d["workloads"][0].update(tasks=1000, loops=20)
    d["kernel"].update(kernel)
    return d


# --- one synchronize_rcu() caller on an idle machine (the grace-period floor) ---------
LAST_QS = _core.LAST_QS_KINDS
GP_CPU = 0  # rcusim's housekeeping CPU, where the GP kthread runs
DEEPEST_EXIT_NS = profile_idle_states("x86-64-server-2023")[-1]["exit_latency_us"] * 1000


def lone_caller(release: str, hz: int = 1000, loops: int = 20, **kernel) -> dict:
    """One synchronize_rcu() caller on CPU 5 of an idle 64-CPU server."""
    return {"name": f"floor_{release}", "seed": 0,
            "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 64},
            "kernel": {"release": release, "HZ": hz, **kernel},
            "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": loops, "primitive": "synchronize_rcu",
                           "cpus": "5"}]}


def traced(data):
    return run_scenario(load_scenario(data), progress=False, trace_limit=trace.MAX_TRACE_RECORDS)


def only_variant(result):
    (v,) = result.variants.values()
    return v


# --- expedited grace periods ---------------------------------------------------------
def metrics(result, variant):
    return result.variants[variant].metrics


@pytest.fixture(scope="module")
def storm32():
    return rcusim.run(SCENARIOS / "expedited_storm_32cpu.yaml", overrides=["workloads.0.loops=40"])


EXP_BASE = """
name: t
hardware: {profile: x86-64-server-2023, nr_cpus: %(cpus)d}
kernel: {release: "%(release)s", HZ: 1000, bootargs: "%(bootargs)s"}
workloads:
  - {kind: sync_loop, tasks: %(tasks)d, loops: %(loops)d, primitive: %(prim)s, rt: true, work_after: none}
  - {kind: readers, length_us: %(length)g, rate_per_s: %(rate)g, between: busy}
"""


def exp_spec_of(**kw):
    args = dict(cpus=8, release="6.17", bootargs="", tasks=16, loops=30, prim="synchronize_rcu_expedited",
                length=20, rate=20000)
    args.update(kw)
    return load_scenario(yaml.safe_load(EXP_BASE % args)).variants["default"]


# --- lazy RCU: a caller and a call_rcu() load on offloaded CPUs -----------------------
HZ = 1000
LAZY_FLUSH_S = 10  # LAZY_FLUSH_JIFFIES = 10 * HZ

LAZY_BASE = {
    "name": "lazy",
    "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 8},
    "kernel": {"release": "6.6", "HZ": HZ, "CONFIG_RCU_NOCB_CPU": True, "CONFIG_RCU_LAZY": True,
               "bootargs": "rcu_nocbs=all"},
    # The caller ends the run; the call_rcu() load runs beside it, 1,000 callbacks a second per CPU.
    "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 1500, "think_us": 10000, "cpus": "0"},
                  {"kind": "call_rcu_load", "cpus": "1-7", "work_us": 1000, "call_rcu_per_op": 1}],
}


def lazy_metrics(change=None) -> dict:
    data = copy.deepcopy(LAZY_BASE)
    if change:
        change(data)
    result = run(data)
    return result.variants["default"].metrics


# --- the fair class ------------------------------------------------------------------
def two_hogs(release: str, nice_b: int = 19) -> dict:
    """Two CPU-bound SCHED_NORMAL tasks on CPU 0: nice 0 and `nice_b`."""
    hog = {"kind": "sync_loop", "tasks": 1, "loops": 1, "cpus": "0", "think_us": 100e6}
    return {"name": "hogs", "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2},
            "kernel": {"release": release, "HZ": 1000},
            "workloads": [dict(hog), dict(hog, nice=nice_b)]}


# --- unpinned tasks: placement and load balancing -------------------------------------
TR = "amd-threadripper-3970x"


def scenario(profile=TR, nr_cpus=64, bootargs="", **sync_loop) -> dict:
    work = {"kind": "sync_loop", "tasks": 64, "loops": 1, "cpus": "all", "pinned": False}
    work.update(sync_loop)
    data = {"name": "placement", "hardware": {"profile": profile, "nr_cpus": nr_cpus},
            "kernel": {"release": "6.6", "HZ": 1000, "bootargs": bootargs}, "workloads": [work]}
    if "rcu_normal_wake_from_gp" in bootargs:
        data["kernel"]["patches"] = ["rcu-sr-normal-wake-from-gp"]  # the v6.9 change on 6.6
    return data


def traced_run(data: dict, seconds: float, seed: int = 0):
    """The engine after running `seconds`, its trace, and why it stopped (_core.EXIT_*)."""
    inp, _ = engine_input(load_scenario(data).variants["default"])
    eng = _core.Engine(inp, np.random.PCG64(seed))
    eng.trace_enable(10**7)
    reason = eng.run(round(seconds * 1e9), 10**9)
    return eng, eng.trace_records(), reason


def task_switches(trace, n_tasks: int):
    """(cpu, task) of every switch to a workload task."""
    sw = trace[(trace["kind"] == _core.TRACE_KINDS["switch"]) & (trace["ent"] >= 0) & (trace["ent"] < n_tasks)]
    return sw["cpu"].astype(int), sw["ent"].astype(int), sw["t"].astype(np.int64)


def domains(profile: str, nr_cpus: int):
    topo = load_scenario(scenario(profile, nr_cpus)).variants["default"].hardware.topology
    return sched_domains(*cpu_topology(nr_cpus, topo["smt"], topo["cores_per_llc"], topo["llcs_per_socket"]))


# --- the real-time probe beside a callback load (seed 003's machine) -----------------
def small(load, bootargs="", samples=400):
    """One CPU of the seed's machine, a probe and one call_rcu_load workload."""
    return {
        "name": "rt_small",
        "seed": 1,
        "hardware": {"profile": "pentium4-2.4ghz-up", "nr_cpus": 1},
        "kernel": {"release": "2.6", "HZ": 1000, "CONFIG_PREEMPT_RCU": False,
                   "bootargs": bootargs},
        "workloads": [{"kind": "rt_latency_probe", "samples": samples},
                      {"kind": "call_rcu_load", "cpus": "0", "tasks_per_cpu": 4, **load}],
    }


def probe_latency(scenario):
    result = rcusim.run(scenario)
    (variant,) = result.variants.values()
    return variant.metrics["sched_latency_us"], variant


# --- kfree_rcu(): rcuscale's kfree flood ----------------------------------------------
#: One release of each generation, and what its kfree_rcu() does.
GENERATIONS = {
    "5.5": "call_rcu() per object",
    "5.6": "krcp->head lists, two batches",
    "5.7": "bulk pages, one cached page, GFP_NOWAIT in the call",
    "5.9": "rcu_min_cached_objs pages cached from boot",
    "5.11": "page_cache_work, the rcu_head list without a page",
    "6.1": "5*HZ drain, 1 jiffy when a CPU's batch is full",
    "6.3": "per-page GP snapshots: the monitor frees the ready pages, queue_rcu_work() the rest",
}

NOCB_ALL = {"CONFIG_RCU_NOCB_CPU": True, "CONFIG_RCU_NOCB_CPU_DEFAULT_ALL": True}


def flood(release: str, loops: int = 100, kernel: dict | None = None, **workload) -> dict:
    """8 CPUs, all offloaded, 4 threads of 4000 calls a loop: long enough (> HZ/50) for
    batches to be freed while the threads run."""
    return {"hardware": {"profile": "x86-64-server-2023", "nr_cpus": 8},
            "kernel": {"release": release, "HZ": 1000, **NOCB_ALL, **(kernel or {})},
            "workloads": [{"kind": "kfree_rcu_flood", "kfree_nthreads": 4, "kfree_alloc_num": 4000,
                           "kfree_loops": loops, **workload}]}


def spec_of(data: dict):
    return load_scenario(data).variants["default"]


@pytest.fixture(scope="module")
def runs():
    """Each generation's run (the engine's records) with the checker on."""
    return {rel: run_engine(rel, spec_of(flood(rel)), 0, check=True) for rel in GENERATIONS}


def small_flood(polled: bool):
    data = {
        "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 8},
        "kernel": {"release": "6.3" if polled else "6.2", "HZ": 1000, "CONFIG_RCU_NOCB_CPU": True,
                   "CONFIG_RCU_NOCB_CPU_DEFAULT_ALL": True},
        "workloads": [{"kind": "kfree_rcu_flood", "kfree_nthreads": 4, "kfree_alloc_num": 4000,
                       "kfree_loops": 12}],
    }
    return load_scenario(data).variants["default"]


# --- rcuscale's GP writers (kvm.sh rcuscale command lines) ---------------------------
BOOT = "rcuscale.nwriters=4 rcuscale.nreaders=0 rcuscale.holdoff=1"
ASYNC = BOOT + " rcuscale.gp_async=1 rcuscale.gp_async_max=100"


def writer_data(boot: str, release: str = "7.0", nr_cpus: int = 8) -> dict:
    """The scenario of a kvm.sh rcuscale command line."""
    args = argparse.Namespace(torture="rcuscale", kconfig=[f"CONFIG_NR_CPUS={nr_cpus}"], bootargs=[boot], ignored=[])
    return scenario_from_kvm(args, release=release)[0]


def writer_spec(boot: str, release: str = "7.0"):
    """The resolved variant of a kvm.sh rcuscale command line."""
    return load_scenario(writer_data(boot, release)).variants["default"]


def rcuscale(capsys, boot: str, *extra) -> list[str]:
    assert main(["rcuscale", "--kconfig", "CONFIG_NR_CPUS=8", "--bootargs", boot, *extra]) == 0
    return capsys.readouterr().out.splitlines()


def durations_us(lines):
    return np.array([int(ln.split()[-1]) / 1000 for ln in lines if "writer-duration" in ln])
