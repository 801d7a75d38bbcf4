"""The phone: the google-gs101 profile (an 8-CPU arm64 big.LITTLE handset) and the
phone_launch_8cpu scenario (seed 000's Android case: rcupdate.rcu_expedited=1
rcupdate.rcu_normal=1 rcu_nocbs=0-7, default against rcu_normal_wake_from_gp=1),
run at reduced size."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from rcusim import load_scenario, run
from rcusim.input.profiles import (load_profile, profile_idle_states, profile_idle_states_source, profile_sources,
                                   profile_topology, profile_topology_sources)
from rcusim.kernel.cpus import cpu_topology
from rcusim.kernel.sched_domains import sched_domains

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "phone_launch_8cpu.yaml"
PROFILE = "google-gs101"
LOOPS = 20
REDUCED = [f"workloads.0.loops={LOOPS}"]


@pytest.fixture(scope="module")
def phone():
    return run(str(SCENARIO), overrides=REDUCED)


def test_the_profile_gives_every_figure_with_its_source():
    costs, sources = load_profile(PROFILE), profile_sources(PROFILE)
    assert set(sources) == set(costs)
    topo = profile_topology_sources(PROFILE)
    assert set(topo) == {"shape", "line_ns.smt", "line_ns.llc", "line_ns.socket", "line_ns.remote"}
    for text in [*sources.values(), *topo.values(), profile_idle_states_source(PROFILE)]:
        assert len(text.split()) >= 3
    # Where no measurement was found the source says so.
    estimates = [name for name, text in sources.items() if "Estimate" in text]
    assert "ctxsw_ns" in estimates and "cb_kfree_ns" not in estimates


def test_the_profile_is_one_dynamiq_cluster_of_eight_cpus():
    """One LLC (the DSU's L3) over all 8 CPUs and no SMT: the one scheduling domain is MC."""
    nr_cpus = load_scenario(str(SCENARIO)).variants["default"].hardware.nr_cpus
    topo = profile_topology(PROFILE)
    assert topo["smt"] * topo["cores_per_llc"] * topo["llcs_per_socket"] == nr_cpus == 8
    sd = sched_domains(*cpu_topology(nr_cpus, topo["smt"], topo["cores_per_llc"], topo["llcs_per_socket"]))
    assert sd.names == ("MC",)
    assert sorted(sd.domain_cpus.tolist()) == list(range(nr_cpus))
    # cpuidle-psci: WFI first, which does not poll (an idle CPU is woken by IPI).
    states = profile_idle_states(PROFILE)
    assert states[0]["name"] == "WFI" and not any(s["polling"] or s["mwait"] for s in states)


def test_androids_command_line_is_resolved_as_the_kernel_does():
    variants = load_scenario(str(SCENARIO)).variants
    for name, spec in variants.items():
        p = spec.params
        assert p.rcu_expedited and p.rcu_normal
        assert p.nocb_cpus == tuple(range(8))
        assert p.hz == 250 and p.release == (6, 1)
        assert p.kthread_prio == 1  # CONFIG_RCU_BOOST: SCHED_FIFO RCU kthreads
        assert p.rcu_normal_wake_from_gp == (name == "wake_from_gp")


def test_rcu_normal_turns_the_expedited_calls_into_normal_grace_periods(phone):
    for v in phone.variants.values():
        assert v.metrics["expedited_grace_periods"] == 0 and not v.gps.expedited.any()
        assert v.metrics["grace_periods"] > 0
    # Without rcu_normal, rcu_expedited=1 makes every synchronize_rcu() expedited.
    expedited = run(str(SCENARIO), overrides=REDUCED + ["kernel.bootargs=rcupdate.rcu_normal=0"])
    for v in expedited.variants.values():
        assert v.metrics["expedited_grace_periods"] > 0
        assert v.metrics["latency_us"]["p50"] < min(w.metrics["latency_us"]["min"] for w in phone.variants.values())


def test_both_variants_complete_and_every_call_waits_a_whole_grace_period(phone):
    for name, v in phone.variants.items():
        m = v.metrics
        assert m["finished"] and m["latency_us"]["count"] == 4 * LOOPS
        assert m["safety"]["violations"] == 0
        lat = phone.latencies[phone.latencies.variant == name]
        gps = v.gps
        for start, end in zip(lat.t_start_ns, lat.t_end_ns):
            assert ((gps.t_start_ns >= start) & (gps.t_end_ns <= end)).any()
        # The app exits' callbacks are all invoked, each a whole grace period after its call_rcu().
        cb = m["call_rcu_latency_us"]
        assert cb["queued"] > 0 and cb["queued"] == cb["invoked"] + cb["pending"]
        assert cb["min"] >= (gps.t_end_ns - gps.t_start_ns).min() / 1e3


def test_wake_from_gp_skips_the_callback_path(phone):
    """Default: the GP's end reaches the caller through rcuog, rcuop and wakeme_after_rcu();
    with wake_from_gp the GP kthread wakes it from rcu_gp_cleanup() (at most 5 waiters)."""
    default, direct = (phone.variants[n].metrics for n in ("default", "wake_from_gp"))
    cb_wakeme_us = load_profile(PROFILE)["cb_wakeme_ns"] / 1e3
    assert direct["normal_time_us"]["callback"] <= 5 * cb_wakeme_us
    assert default["normal_time_us"]["callback"] > direct["normal_time_us"]["callback"]
    assert direct["latency_us"]["p50"] < default["latency_us"]["p50"]


_BUCKET = re.compile(r"^\s+(\d+) -> (\d+)\s+: (\d+)\s+\|([* ]{40})\|$")


def test_the_report_has_bccs_funclatency_histograms(phone):
    """Per variant: 'Function = synchronize_rcu', funclatency -u's header, log2 buckets that
    hold every call's latency in whole microseconds, and the closing avg/total/count line."""
    sections = phone.report_text().split("==> variant ")[1:]
    assert [s.split("\n", 1)[0] for s in sections] == list(phone.variants)
    for section in sections:
        name = section.split("\n", 1)[0]
        lines = section.splitlines()
        i = lines.index("Function = synchronize_rcu")
        assert lines[i + 1] == "     usecs               : count     distribution"
        buckets = []
        for line in lines[i + 2:]:
            m = _BUCKET.match(line)
            if not m:
                break
            buckets.append((int(m[1]), int(m[2]), int(m[3])))
        us = phone.latencies[phone.latencies.variant == name].latency_ns.to_numpy() // 1000
        for k, (low, high, count) in enumerate(buckets):
            assert (low, high) == ((0, 1) if k == 0 else (2 ** k, 2 ** (k + 1) - 1))
            assert count == np.count_nonzero((us >= low) & (us <= high))
        assert sum(c for _, _, c in buckets) == len(us)
        total = phone.latencies[phone.latencies.variant == name].latency_ns.sum()
        assert f"avg = {total // (1000 * len(us))} usecs, total: {total // 1000} usecs, count: {len(us)}" in lines
