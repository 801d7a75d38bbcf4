"""cython_core/sched.pxi: the scheduler's run queues, wake-ups and their cost, and its accounting.
Remote wake-ups by the machine's topology: ttwu_queue_cond()'s choice between a direct enqueue,
the polling flag of an idle CPU and an IPI; the waker's cost of each; wakers spinning on a
run queue's lock."""

from __future__ import annotations

import numpy as np

from rcusim.input.profiles import load_profile, profile_ttwu_reuse
from rcusim.input.scenario import load_scenario
from rcusim.results.run import run_scenario
from rcusim.results.trace import trace_frame

from tests.engine.conftest import two_hogs


def wake_storm(topology: dict | None = None, profile: str = "x86-64-server-2023", busy: bool = False) -> dict:
    """rcu_normal_wake_from_gp: one worker wakes callers on every CPU; `busy`: a nice-19 hog
    on every CPU keeps each target running when its caller is woken."""
    hw = {"profile": profile, "nr_cpus": 8 if profile == "xeon-e5405-8cpu" else 64}
    if topology:
        hw["topology"] = topology
    data = {"name": "wakes", "hardware": hw,
            "kernel": {"release": "6.6", "HZ": 1000, "bootargs": "rcutree.rcu_normal_wake_from_gp=1",
                       "patches": ["rcu-sr-normal-wake-from-gp"]},
            "workloads": [{"kind": "sync_loop", "tasks": 4 * hw["nr_cpus"], "loops": 5, "think_us": 2000}]}
    if busy:
        data["workloads"].append({"kind": "call_rcu_load", "work_us": 1000, "call_rcu_per_op": 0, "nice": 19,
                                  "cpus": "all", "tasks_per_cpu": 1})
    if profile == "xeon-e5405-8cpu":
        data["kernel"].update(release="2.6.33", bootargs="", patches=[])
    (v,) = run_scenario(load_scenario(data), progress=False).variants.values()
    return v.counters


def test_without_a_topology_every_remote_wakeup_is_an_ipi():
    c = wake_storm(profile="xeon-e5405-8cpu")
    assert c["wakeups_remote_enqueue"] == c["wakeups_polling"] == 0
    assert c["wakeups_ipi"] > 0 and c["wakeups_local"] + c["wakeups_ipi"] == c["wakeups"]


def test_wakeups_across_llcs_take_ipis_within_one_llc_none_but_to_unknown_wakers():
    eight = {"sockets": 1, "llcs_per_socket": 8, "cores_per_llc": 4, "smt": 2}
    one_llc, eight_llcs = wake_storm(), wake_storm(eight)
    busy_one_llc, busy_eight_llcs = wake_storm(busy=True), wake_storm(eight, busy=True)
    for c in (one_llc, eight_llcs, busy_one_llc, busy_eight_llcs):
        assert sum(c[k] for k in ("wakeups_local", "wakeups_remote_enqueue", "wakeups_polling",
                                   "wakeups_ipi")) == c["wakeups"]
    # Idle CPUs in MWAIT states are woken by their polling flag wherever they are.
    assert one_llc["wakeups_polling"] > one_llc["wakeups"] / 2
    assert eight_llcs["wakeups_polling"] > eight_llcs["wakeups"] / 2
    # Busy targets: a direct enqueue in the waker's LLC, an IPI outside it.
    assert busy_one_llc["wakeups_polling"] == busy_one_llc["wakeups_ipi"] == 0
    assert busy_one_llc["wakeups_remote_enqueue"] > busy_one_llc["wakeups"] / 2
    assert busy_eight_llcs["wakeups_ipi"] > busy_eight_llcs["wakeups"] / 2


def callers(costs: dict | None = None, tasks: int = 16, loops: int = 20, pinned: bool = True,
            wake_from_gp: bool = False) -> dict:
    """synchronize_rcu() callers on the Threadripper's 64 CPUs, offloaded (rcu_nocbs=all);
    returns the run's metrics."""
    hw = {"profile": "amd-threadripper-3970x", "nr_cpus": 64}
    if costs:
        hw["costs"] = costs
    data = {"name": "wakers", "hardware": hw,
            "kernel": {"release": "6.6", "HZ": 1000, "CONFIG_RCU_NOCB_CPU": True,
                       "patches": ["rcu-sr-normal-wake-from-gp"],
                       "bootargs": "rcu_nocbs=all" + (" rcutree.rcu_normal_wake_from_gp=1" if wake_from_gp else "")},
            "workloads": [{"kind": "sync_loop", "tasks": tasks, "loops": loops, "think_us": 50, "pinned": pinned}]}
    (v,) = run_scenario(load_scenario(data), progress=False).variants.values()
    return v.metrics


def test_one_waker_pays_each_wake_up_it_sends():
    """rcu_normal_wake_from_gp: one worker wakes every waiter in turn, and each remote
    wake-up by IPI (to a CPU in acpi_idle's C2, which does not poll) costs it the IPI's
    sending: a dearer IPI delays the later waiters."""
    cheap = callers(wake_from_gp=True)
    dear = callers({"ipi_send_ns": 5000}, wake_from_gp=True)
    assert dear["sched"]["wakeups"]["ipi"] > 0
    assert dear["normal_time_us"]["callback"] > cheap["normal_time_us"]["callback"] + 2.0


def test_wakers_hitting_one_run_queue_spin_on_its_lock():
    """Unpinned callers: several rcuop kthreads wake callers onto the same busy CPUs at a
    GP's end and wait for each other's enqueue under its rq lock; pinned callers are
    each woken by the one rcuop that holds their CPU's callbacks."""
    unpinned = callers(tasks=1000, loops=10, pinned=False)["sched"]
    pinned = callers(tasks=1000, loops=10)["sched"]
    assert unpinned["wakeups"]["remote_enqueue"] > 0
    assert unpinned["rq_lock_wait_ms"] > pinned["rq_lock_wait_ms"]


def test_a_cpu_wakes_a_task_for_less_the_sooner_after_its_last_wake_up():
    """ttwu_reuse (the qemu-tcg profile): each wakeme_after_rcu() of a batch costs the
    callback around its wake-up plus the wake-up priced by the time since its CPU last
    woke a task, so the first of a batch after a quiet costs more than the rest."""
    reuse = profile_ttwu_reuse("qemu-tcg")
    costs = load_profile("qemu-tcg")
    data = {"name": "batch", "hardware": {"profile": "qemu-tcg", "nr_cpus": 2},
            "kernel": {"release": "6.12", "HZ": 1000},
            "workloads": [{"kind": "sync_loop", "tasks": 6, "loops": 4, "think_us": 3000, "cpus": "1"}]}
    (v,) = run_scenario(load_scenario(data), progress=False, trace_limit=100_000).variants.values()
    tr = trace_frame(v)
    around = costs["cb_wakeme_ns"] - reuse["in_cb_wakeme_ns"]
    since = np.array(reuse["since_ns"])
    gaps = []
    last_wake = None
    for _, batch in tr[tr.event.isin(["cb_batch_start", "cb_invoke", "cb_batch_end", "wake"])].groupby(
            (tr.event == "cb_batch_start").cumsum()):
        t = batch[batch.event.isin(["cb_invoke", "cb_batch_end"])].t_ns.to_numpy()
        for a, b in zip(t, t[1:]):
            dt = np.inf if last_wake is None else a - last_wake
            price = costs["ttwu_ns"] + reuse["delta_ns"][np.searchsorted(since, dt, side="left")]
            gaps.append((b - a, around + price))
            last_wake = a
    gaps = np.array(gaps)
    assert len(gaps) > 20
    assert np.array_equal(gaps[:, 0], gaps[:, 1])
    assert gaps[:, 0].min() < costs["cb_wakeme_ns"] < gaps[:, 0].max()


# --- the run queues' accounting (sched_stats()) in the results --------------------------
def test_sched_figures_of_two_hogs():
    from rcusim.results.run import run_scenario
    data = two_hogs("6.6", nice_b=0)
    for wl in data["workloads"]:
        wl["think_us"] = 50_000.0  # 50 ms of work, then one synchronize_rcu()
    (v,) = run_scenario(load_scenario(data), progress=False).variants.values()
    s = v.metrics["sched"]
    # CPU 0 runs the two tasks back to back; CPU 1 only RCU's kthreads.
    assert s["utilisation"]["max"] > 0.9 * 100e-3 / (v.sim_time_ns / 1e9)
    assert s["utilisation"]["min"] < 0.05
    # Two runnable tasks on one CPU for most of CPU 0's time, none on CPU 1:
    # over both CPUs' time the median length is 0 or 2, the 99th percentile 2.
    assert s["rq_length"]["p99"] == 2
    assert sum(s["wakeups"].values()) == v.counters["wakeups"]
