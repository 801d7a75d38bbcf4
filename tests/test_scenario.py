"""Tests for rcusim.input.scenario and the input models (rcusim.input.hardware, kernel, workloads, variant,
resolve): loading, merging and resolving scenarios.

Expected values come from the kernel (KERNEL-FACTS tables, kernel/rcu/tree.c),
not from the code under test.
"""

import dataclasses
import pickle
from pathlib import Path

import pytest

from rcusim.errors import ScenarioError
from rcusim.input.hardware import Costs
from rcusim.input.variant import RcuParams, VariantSpec
from rcusim.input import profiles
from rcusim.input.releases import NEWEST
from rcusim.input.profiles import (COST_NAMES, IDLE_WAKE_COSTS, PROFILES, load_profile, profile_halt_poll,
                                   profile_idle_states, profile_idle_states_source, profile_sources, profile_ttwu_reuse)
from rcusim.input.scenario import Scenario, load_scenario

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "scenarios" / "sync_rcu_10k.yaml"


def scenario_dict(nr_cpus=64, **kernel):
    """A minimal valid scenario mapping."""
    return {
        "hardware": {"profile": "x86-64-server-2023", "nr_cpus": nr_cpus},
        "kernel": dict(kernel),
        "workloads": [{"kind": "sync_loop", "tasks": 4, "loops": 2}],
    }


def params(nr_cpus=64, **kernel) -> RcuParams:
    """Resolve the single variant of a minimal scenario."""
    return load_scenario(scenario_dict(nr_cpus, **kernel)).variants["default"].params


# ---------------------------------------------------------------- the bundled scenario

@pytest.fixture(scope="module")
def bundled():
    return load_scenario(BUNDLED)


def test_bundled_scenario_structure(bundled):
    assert isinstance(bundled, Scenario)
    assert bundled.name == "sync_rcu_10k"
    assert bundled.seed == 0
    assert bundled.variant_names == ("default", "wake_from_gp")
    assert bundled.source_path == BUNDLED
    for spec in bundled.variants.values():
        assert isinstance(spec, VariantSpec)
        assert isinstance(spec.hardware.costs, Costs)
        assert spec.hardware.nr_cpus == 64
        assert spec.kernel.release == "6.6"
        (work,) = spec.workloads
        assert (work.kind, work.tasks, work.loops, work.work_after, work.cpus) == (
            "sync_loop", 10000, 1000, "vfree", "all")


def test_bundled_scenario_resolves_like_the_kernel(bundled):
    p = bundled.variants["default"].params
    assert p.hz == 1000
    assert p.nr_cpu_ids == 64
    # KERNEL-FACTS section 3: HZ=1000, 64 CPUs -> 3 jiffies, jiffies_to_sched_qs 100.
    assert (p.jiffies_till_first_fqs, p.jiffies_till_next_fqs) == (3, 3)
    assert p.jiffies_to_sched_qs == 100
    # Section 5: 64 CPUs -> rcuog stride 8; every CPU offloaded.
    assert p.nocb_gp_stride == 8
    assert p.nocb_cpus == tuple(range(64))
    assert p.nocb_is_setup
    assert not p.lazy
    assert (p.fanout, p.fanout_leaf) == (64, 16)
    assert (p.blimit, p.qhimark, p.qlowmark, p.qovld) == (10, 10000, 100, 20000)


def test_bundled_variant_appends_bootargs(bundled):
    default = bundled.variants["default"]
    wake = bundled.variants["wake_from_gp"]
    assert wake.kernel.bootargs == default.kernel.bootargs + " rcutree.rcu_normal_wake_from_gp=1"
    # Linux 6.6 on 64 CPUs: classic path unless asked for.
    assert default.params.rcu_normal_wake_from_gp is False
    assert wake.params.rcu_normal_wake_from_gp is True
    # The base's rcu_nocbs= is still in force in the variant.
    assert wake.params.nocb_cpus == default.params.nocb_cpus


def test_bundled_costs_come_from_the_profile(bundled):
    spec = bundled.variants["default"]
    assert spec.hardware.profile == "amd-threadripper-3970x"
    assert spec.hardware.costs.model_dump(exclude_none=True) == load_profile("amd-threadripper-3970x")
    assert spec.hardware.idle_states == profile_idle_states("amd-threadripper-3970x")
    assert spec.hardware.cost_sources == profile_sources("amd-threadripper-3970x")


# ---------------------------------------------------------------- kernel arithmetic

# KERNEL-FACTS section 3, "Computed defaults": (HZ, nr_cpu_ids, FQS jiffies, sched_qs jiffies).
FQS_TABLE = [
    (1000, 16, 3, 100), (1000, 64, 3, 100), (1000, 256, 4, 101), (1000, 1024, 7, 104),
    (1000, 4096, 19, 116),
    (250, 16, 1, 25), (250, 64, 1, 25), (250, 256, 2, 26), (250, 1024, 5, 29),
    (250, 4096, 17, 51),
    (100, 16, 1, 10), (100, 64, 1, 10), (100, 256, 2, 11), (100, 1024, 5, 15),
    (100, 4096, 17, 51),
    (300, 16, 2, 30), (300, 64, 2, 30), (300, 256, 3, 31), (300, 1024, 6, 34),
    (300, 4096, 18, 54),
]


@pytest.mark.parametrize("hz, nr_cpus, fqs, sched_qs", FQS_TABLE)
def test_fqs_defaults_match_the_kernel_table(hz, nr_cpus, fqs, sched_qs):
    p = params(nr_cpus, HZ=hz)
    assert p.jiffies_till_first_fqs == fqs
    assert p.jiffies_till_next_fqs == fqs
    assert p.jiffies_to_sched_qs == sched_qs


# KERNEL-FACTS section 5: rcu_nocb_gp_stride = nr_cpu_ids / int_sqrt(nr_cpu_ids).
@pytest.mark.parametrize("nr_cpus, stride", [(4096, 64), (1024, 32), (256, 16), (64, 8),
                                             (54, 7), (16, 4), (1, 1)])
def test_nocb_gp_stride_default(nr_cpus, stride):
    assert params(nr_cpus).nocb_gp_stride == stride


def test_nocb_gp_stride_explicit():
    p = params(64, CONFIG_RCU_NOCB_CPU=True, bootargs="rcutree.rcu_nocb_gp_stride=4")
    assert p.nocb_gp_stride == 4


def test_fqs_boot_parameters_are_clamped_like_the_setters():
    # param_set_first_fqs_jiffies(): min(j, HZ); param_set_next_fqs_jiffies(): 1..HZ.
    p = params(64, HZ=250, bootargs="rcutree.jiffies_till_first_fqs=100000 "
                                     "rcutree.jiffies_till_next_fqs=0")
    assert (p.jiffies_till_first_fqs, p.jiffies_till_next_fqs) == (250, 1)
    # adjust_jiffies_till_sched_qs(): max(first + 2*next, HZ/10 + nr/256).
    assert p.jiffies_to_sched_qs == 252
    p = params(64, HZ=1000, bootargs="rcutree.jiffies_till_first_fqs=0")
    assert (p.jiffies_till_first_fqs, p.jiffies_till_next_fqs) == (0, 3)
    assert params(64, bootargs="rcutree.jiffies_till_sched_qs=7").jiffies_to_sched_qs == 7


def test_batch_parameters_are_clamped_as_rcu_do_batch_reads_them():
    p = params(bootargs="rcutree.rcu_resched_ns=1 rcutree.rcu_divisor=-3")
    assert (p.rcu_resched_ns, p.rcu_divisor) == (1_000_000, 7)
    p = params(bootargs="rcutree.rcu_resched_ns=5000000000 rcutree.rcu_divisor=100")
    assert (p.rcu_resched_ns, p.rcu_divisor) == (1_000_000_000, 62)
    p = params(bootargs="rcutree.qhimark=500 rcutree.blimit=16")
    assert (p.qhimark, p.qovld, p.blimit) == (500, 20000, 16)


@pytest.mark.parametrize("bootargs", ["rcutree.qovld=-1", "rcu_nocb_poll"])
def test_parameters_of_mechanisms_not_modelled_are_refused(bootargs):
    with pytest.raises(ScenarioError, match=f"kernel.bootargs: {bootargs.partition('=')[0]}: rcusim does not "
                                            "model .*; allowed: drop"):
        params(CONFIG_RCU_NOCB_CPU=True, bootargs=bootargs)


def test_boosting_preempted_readers_is_refused():
    data = scenario_dict(4, CONFIG_RCU_BOOST=True)
    data["workloads"].append({"kind": "readers", "length_us": 5.0, "rate_per_s": 1000.0})
    with pytest.raises(ScenarioError, match="kernel.CONFIG_RCU_BOOST: CONFIG_RCU_BOOST boosts readers preempted "
                                            ".*; allowed: false, or readers with preemptible: false"):
        load_scenario(data)
    data["workloads"][-1]["preemptible"] = False
    assert load_scenario(data).variants["default"].params.kthread_prio == 1


@pytest.mark.parametrize("boost, given, expected", [
    (False, None, 0), (True, None, 1), (False, "150", 99), (False, "-5", 0),
    (True, "0", 1), (False, "2", 2),
])
def test_kthread_prio_sanitized(boost, given, expected):
    bootargs = f"rcutree.kthread_prio={given}" if given is not None else ""
    p = params(CONFIG_RCU_BOOST=boost, bootargs=bootargs)
    assert p.kthread_prio == expected


@pytest.mark.parametrize("nr_cpus, kernel, leaf", [
    (4096, {"bootargs": "rcutree.rcu_fanout_leaf=64"}, 64),
    (4096, {"bootargs": "rcutree.rcu_fanout_leaf=1"}, 16),   # below 2: ignored
    (4096, {"bootargs": "rcutree.rcu_fanout_leaf=65"}, 16),  # above 64: ignored
    # NR_CPUS=16 builds a 1-level tree: 16 CPUs do not fit 8-CPU leaves.
    (16, {"bootargs": "rcutree.rcu_fanout_leaf=8"}, 16),
    # NR_CPUS=64 builds 2 levels: capacity 8 * 64 is enough.
    (16, {"bootargs": "rcutree.rcu_fanout_leaf=8", "CONFIG_NR_CPUS": 64}, 8),
    (64, {"CONFIG_RCU_FANOUT_LEAF": 32}, 32),
])
def test_fanout_leaf_as_rcu_init_geometry(nr_cpus, kernel, leaf):
    assert params(nr_cpus, **kernel).fanout_leaf == leaf


def test_config_nr_cpus_defaults_to_the_cpu_count():
    spec = load_scenario(scenario_dict(100)).variants["default"]
    assert spec.kernel.CONFIG_NR_CPUS == 100
    assert spec.params.nr_cpus_config == 100
    assert params(100, CONFIG_NR_CPUS=8192).nr_cpus_config == 8192


# ---------------------------------------------------------------- NOCB and laziness

def test_nocb_off_by_default():
    p = params()
    assert p.nocb_cpus == () and not p.nocb_is_setup


def test_nocb_default_all():
    p = params(16, CONFIG_RCU_NOCB_CPU=True, CONFIG_RCU_NOCB_CPU_DEFAULT_ALL=True)
    assert p.nocb_cpus == tuple(range(16))


def test_rcu_nocbs_takes_precedence_over_default_all():
    p = params(16, CONFIG_RCU_NOCB_CPU=True, CONFIG_RCU_NOCB_CPU_DEFAULT_ALL=True,
               bootargs="rcu_nocbs=2-3")
    assert p.nocb_cpus == (2, 3)


def test_bare_rcu_nocbs_sets_up_nocb_without_cpus():
    p = params(16, CONFIG_RCU_NOCB_CPU=True, bootargs="rcu_nocbs")
    assert p.nocb_is_setup and p.nocb_cpus == ()


def test_nohz_full_cpus_are_offloaded():
    p = params(16, CONFIG_RCU_NOCB_CPU=True, bootargs="rcu_nocbs=0-1 nohz_full=8-N")
    assert p.nohz_full_cpus == tuple(range(8, 16))
    assert p.nocb_cpus == (0, 1) + tuple(range(8, 16))


def test_nohz_full_keeps_a_housekeeping_cpu():
    p = params(4, CONFIG_RCU_NOCB_CPU=True, bootargs="nohz_full=all")
    assert p.nohz_full_cpus == (1, 2, 3)


def test_nocb_parameters_need_the_config():
    with pytest.raises(ScenarioError, match="needs CONFIG_RCU_NOCB_CPU=y"):
        params(16, bootargs="rcu_nocbs=0-3")


@pytest.mark.parametrize("kernel, lazy", [
    ({}, False),
    ({"CONFIG_RCU_NOCB_CPU": True, "CONFIG_RCU_LAZY": True}, True),
    ({"CONFIG_RCU_NOCB_CPU": True, "CONFIG_RCU_LAZY": True,
      "CONFIG_RCU_LAZY_DEFAULT_OFF": True}, False),
    ({"CONFIG_RCU_NOCB_CPU": True, "CONFIG_RCU_LAZY": True,
      "CONFIG_RCU_LAZY_DEFAULT_OFF": True, "bootargs": "rcutree.enable_rcu_lazy=1"}, True),
    ({"CONFIG_RCU_NOCB_CPU": True, "CONFIG_RCU_LAZY": True,
      "bootargs": "rcutree.enable_rcu_lazy=0"}, False),
])
def test_lazy_resolution(kernel, lazy):
    assert params(**kernel).lazy is lazy


# ---------------------------------------------------------------- release switches

@pytest.mark.parametrize("release, nr_cpus, bootargs, expected", [
    ("6.6", 64, "", False),
    ("6.6", 16, "", False),   # auto-enable came with v6.17
    ("6.17", 16, "", True),   # num_possible_cpus() <= 16
    ("6.17", 17, "", False),
    ("6.17", 64, "", False),
    ("6.17", 16, "rcutree.rcu_normal_wake_from_gp=0", False),
    ("6.9", 64, "rcutree.rcu_normal_wake_from_gp=1", True),
    ("6.17", 64, "rcutree.rcu_normal_wake_from_gp=-1", False),
])
def test_wake_from_gp_release_switch(release, nr_cpus, bootargs, expected):
    p = params(nr_cpus, release=release, bootargs=bootargs)
    assert p.rcu_normal_wake_from_gp is expected


def test_wake_from_gp_before_v6_9_needs_the_patch():
    """rcutree.rcu_normal_wake_from_gp came with v6.9; the series measured on 6.6 is a backport."""
    with pytest.raises(ScenarioError, match="added in v6.9") as exc:
        params(64, release="6.6", bootargs="rcutree.rcu_normal_wake_from_gp=1")
    assert "rcu-sr-normal-wake-from-gp" in exc.value.allowed
    p = params(64, release="6.6", bootargs="rcutree.rcu_normal_wake_from_gp=1",
               patches=["rcu-sr-normal-wake-from-gp"])
    assert p.rcu_normal_wake_from_gp is True


def test_a_patch_the_release_has_is_taken_with_a_note():
    scenario = load_scenario(scenario_dict(64, release="6.9", patches=["rcu-sr-normal-wake-from-gp"],
                                           bootargs="rcutree.rcu_normal_wake_from_gp=1"))
    assert scenario.variants["default"].params.rcu_normal_wake_from_gp is True
    assert scenario.notes == ("kernel.patches: rcu-sr-normal-wake-from-gp is already in release 6.9 (since v6.9): "
                              "nothing to backport",)
    assert load_scenario(scenario_dict(64, release="6.6", patches=["rcu-sr-normal-wake-from-gp"])).notes == ()


@pytest.mark.parametrize("release, hz, drain, polled", [
    ("6.0", 1000, 20, False),    # HZ/50
    ("6.1", 1000, 5000, False),  # 5*HZ
    ("6.2", 250, 1250, False),
    ("6.3", 250, 1250, True),
    ("2.6", 1000, 20, False),
    ("2.6.4", 100, 2, False),
])
def test_kfree_release_switches(release, hz, drain, polled):
    p = params(1, release=release, HZ=hz)  # one CPU: classic RCU is modelled on one
    assert p.kfree_drain_jiffies == drain
    assert p.kvfree_polled is polled


def test_release_is_parsed():
    assert params(release="6.17").release == (6, 17)
    assert params(1, release="2.6.4").release == (2, 6, 4)
    assert params().release == NEWEST  # rcusim's default release: the newest it models


def test_rcupdate_switches():
    p = params(bootargs="rcupdate.rcu_expedited=1")
    assert p.rcu_expedited and not p.rcu_normal
    assert params(bootargs="rcupdate.rcu_normal_after_boot=1").rcu_normal
    assert params(bootargs="rcupdate.rcu_normal=1 rcupdate.rcu_expedited=1").rcu_normal


def test_2004_throttle_parameters():
    p = params(1, release="2.6", HZ=1000)
    assert (p.rcumaxbatch, p.rcuplugticks) == (None, 4)
    p = params(1, release="2.6", bootargs="rcupdate.rcumaxbatch=16 rcupdate.rcuplugticks=0")
    assert (p.rcumaxbatch, p.rcuplugticks) == (16, 0)


def test_rcuscale_parameters_are_refused_in_a_scenario():
    # They are read by `python -m rcusim rcuscale` only: in a scenario they would be ignored.
    with pytest.raises(ScenarioError) as info:
        params(bootargs="rcutree.blimit=16 rcuscale.gp_async=1")
    assert str(info.value).startswith("kernel.bootargs: rcuscale.gp_async is a parameter of the rcuscale module")
    assert "allowed: 'python -m rcusim rcuscale --bootargs ...'" in str(info.value)
    assert info.value.token == "rcuscale.gp_async=1"


# ---------------------------------------------------------------- overrides and variants

def test_set_overrides_from_strings():
    s = load_scenario(BUNDLED, overrides=["kernel.HZ=250", "hardware.nr_cpus=4096",
                                          "workloads.0.loops=20"])
    for spec in s.variants.values():
        assert spec.kernel.HZ == 250
        assert spec.params.jiffies_till_first_fqs == 17
        assert spec.params.nocb_gp_stride == 64
        assert spec.workloads[0].loops == 20


def test_fqs_for_4096_cpus_at_hz_1000():
    s = load_scenario(BUNDLED, overrides=["hardware.nr_cpus=4096"])
    p = s.variants["default"].params
    assert (p.jiffies_till_first_fqs, p.jiffies_till_next_fqs, p.jiffies_to_sched_qs) == (19, 19, 116)


def test_set_values_are_yaml_scalars_but_strings_stay_strings():
    s = load_scenario(BUNDLED, overrides=["kernel.CONFIG_RCU_BOOST=true",
                                          "kernel.release=6.10", "kernel.patches=[]", "workloads[0].cpus=3"])
    spec = s.variants["default"]
    assert spec.kernel.CONFIG_RCU_BOOST is True
    assert spec.kernel.release == "6.10"   # not the number 6.1
    assert spec.params.release == (6, 10)
    assert spec.workloads[0].cpus == "3"


def test_set_bootargs_appends():
    s = load_scenario(BUNDLED, overrides=["kernel.bootargs=rcutree.blimit=16"])
    assert s.variants["default"].kernel.bootargs == "rcu_nocbs=all rcutree.blimit=16"
    wake = s.variants["wake_from_gp"]
    assert wake.kernel.bootargs == ("rcu_nocbs=all rcutree.blimit=16 "
                                    "rcutree.rcu_normal_wake_from_gp=1")
    assert wake.params.blimit == 16


def test_set_one_variant():
    s = load_scenario(BUNDLED, overrides=["variants.wake_from_gp.kernel.HZ=250"])
    assert s.variants["default"].kernel.HZ == 1000
    assert s.variants["wake_from_gp"].kernel.HZ == 250
    # The variant's own bootargs are kept.
    assert s.variants["wake_from_gp"].params.rcu_normal_wake_from_gp


def test_set_on_a_variant_overrides_its_value():
    s = load_scenario(BUNDLED, overrides=[
        "variants.wake_from_gp.kernel.bootargs=rcutree.rcu_normal_wake_from_gp=0"])
    assert not s.variants["wake_from_gp"].params.rcu_normal_wake_from_gp


def test_mapping_overrides_with_dotted_and_nested_keys():
    s = load_scenario(BUNDLED, overrides={"kernel.HZ": 300, "hardware": {"nr_cpus": 256}})
    p = s.variants["default"].params
    assert (p.hz, p.nr_cpu_ids, p.jiffies_till_first_fqs, p.jiffies_to_sched_qs) == (300, 256, 3, 31)


def test_dotted_variant_keys_equal_nested_ones():
    base = scenario_dict(16)
    dotted = dict(base, variants={"v": {"kernel.HZ": 1000, "kernel.bootargs": "rcutree.blimit=5"}})
    nested = dict(base, variants={"v": {"kernel": {"HZ": 1000, "bootargs": "rcutree.blimit=5"}}})
    a = load_scenario(dotted).variants["v"]
    b = load_scenario(nested).variants["v"]
    assert a == b
    assert a.params.hz == 1000 and a.params.blimit == 5


def test_variant_workloads_replace_the_list():
    doc = scenario_dict(8)
    doc["workloads"].append({"kind": "sync_loop", "tasks": 1, "loops": 1, "name": "second"})
    doc["variants"] = {"one": {"workloads": [{"kind": "sync_loop", "tasks": 9, "loops": 3}]},
                       "base": {}}
    s = load_scenario(doc)
    assert [w.tasks for w in s.variants["one"].workloads] == [9]
    assert len(s.variants["base"].workloads) == 2


def test_variants_keep_file_order(tmp_path):
    path = tmp_path / "order.yaml"
    path.write_text(
        "hardware: {profile: x86-64-server-2023, nr_cpus: 4}\n"
        "workloads: [{kind: sync_loop, tasks: 1, loops: 1}]\n"
        "variants:\n  zeta: {}\n  alpha: {}\n  mid: {\"kernel.HZ\": 100}\n")
    s = load_scenario(path)
    assert s.variant_names == ("zeta", "alpha", "mid")
    assert s.name == "order"  # default name: the file's stem


def test_yaml_anchors_and_merge_keys(tmp_path):
    path = tmp_path / "merge.yaml"
    path.write_text(
        "hardware: {profile: x86-64-server-2023, nr_cpus: 4}\n"
        "workloads: [{kind: sync_loop, tasks: 1, loops: 1}]\n"
        "variants:\n"
        "  a: &common {\"kernel.HZ\": 1000, \"kernel.bootargs\": \"rcutree.blimit=7\"}\n"
        "  b:\n    <<: *common\n    \"kernel.HZ\": 100\n")
    s = load_scenario(path)
    assert s.variants["a"].params.hz == 1000
    assert s.variants["b"].params.hz == 100
    assert s.variants["b"].params.blimit == 7


def test_cost_overrides():
    doc = scenario_dict(8)
    doc["hardware"]["costs"] = {"ipi_latency_ns": 2000}
    spec = load_scenario(doc).variants["default"]
    assert spec.hardware.costs.ipi_latency_ns == 2000
    assert spec.hardware.costs.ctxsw_ns == load_profile("x86-64-server-2023")["ctxsw_ns"]
    assert "override" in spec.hardware.cost_sources["ipi_latency_ns"]


def test_seed_argument_and_metadata():
    s = load_scenario(BUNDLED, seed=42)
    assert s.seed == 42
    assert load_scenario(scenario_dict()).name == "scenario"
    raw = s.asdict()
    assert raw["seed"] == 42 and raw["name"] == "sync_rcu_10k"
    assert raw["variants"]["wake_from_gp"] == {
        "kernel": {"bootargs": "rcutree.rcu_normal_wake_from_gp=1"}}
    raw["hardware"]["nr_cpus"] = 1  # a copy: the scenario is not changed
    assert s.asdict()["hardware"]["nr_cpus"] == 64


def test_asdict_records_overrides():
    raw = load_scenario(BUNDLED, overrides=["kernel.HZ=250"]).asdict()
    assert raw["kernel"]["HZ"] == 250


def test_scenario_is_frozen_and_picklable(bundled):
    with pytest.raises(dataclasses.FrozenInstanceError):
        bundled.seed = 3
    with pytest.raises(Exception):
        bundled.variants["default"].params.hz = 100
    again = pickle.loads(pickle.dumps(bundled))
    assert again.variants == bundled.variants
    assert again.asdict() == bundled.asdict()


def test_loading_a_mapping_equals_loading_the_file(bundled):
    s = load_scenario(bundled.asdict())
    assert s.variants == bundled.variants


# ---------------------------------------------------------------- profiles

def test_profiles_are_complete_and_sourced():
    assert {"x86-64-server-2023", "pentium4-2.4ghz-up", "xeon-e5405-8cpu"} <= set(PROFILES)
    for name in PROFILES:
        costs = load_profile(name)
        sources = profile_sources(name)
        states = profile_idle_states(name)
        guest = profile_halt_poll(name) is not None
        # Idle states, a KVM guest's halt polling, or one measured idle wake-up latency.
        assert not (states and guest)
        expected = tuple(c for c in COST_NAMES if not ((states or guest) and c in IDLE_WAKE_COSTS))
        assert tuple(costs) == expected
        assert all(isinstance(v, int) and v >= 0 for v in costs.values())
        assert all(len(text) > 10 for text in sources.values())
        Costs(**costs)
        if states:
            assert len(profile_idle_states_source(name)) > 10
            # cpuidle tables deepen: each state exits and pays off no sooner than the last.
            for a, b in zip(states, states[1:]):
                assert a["exit_latency_us"] <= b["exit_latency_us"]
                assert a["target_residency_us"] <= b["target_residency_us"]


def test_xeon_ipi_costs_are_fitted_on_seed_002():
    sources = profile_sources("xeon-e5405-8cpu")
    for cost in ("ipi_send_ns", "ipi_latency_ns", "ipi_handler_ns"):
        assert "seed 002" in sources[cost]
        assert "TO BE CALIBRATED" not in sources[cost]


def test_calibration_values_used_for_x86():
    costs = load_profile("x86-64-server-2023")
    # CALIBRATION.md: IPI one-way 1.24-1.45 us; intel_idle's spr_cstates: C6 290/800 us.
    assert 1240 <= costs["ipi_latency_ns"] <= 1450
    assert costs["cb_generic_ns"] == 2000
    c6 = profile_idle_states("x86-64-server-2023")[-1]
    assert (c6["name"], c6["exit_latency_us"], c6["target_residency_us"]) == ("C6", 290, 800)


def test_idle_wake_costs_are_refused_on_a_profile_with_idle_states():
    data = {"hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4,
                         "costs": {"wakeup_idle_median_ns": 5000}},
            "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 1}]}
    with pytest.raises(ScenarioError, match="wakeup_idle_median_ns"):
        load_scenario(data)


def test_uniprocessor_profile_has_no_ipis():
    costs = load_profile("pentium4-2.4ghz-up")
    assert costs["ipi_send_ns"] == costs["ipi_latency_ns"] == 0


@pytest.mark.parametrize("data, fragments", [
    ({"hardware": {"profile": "x86-64-server-2023", "nr_cpu": 4}}, ["hardware.nr_cpu", "unknown key",
                                                                    "did you mean 'nr_cpus'"]),
    ({"hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4}, "kernal": {"HZ": 1000}},
     ["kernal", "did you mean 'kernel'"]),
])
def test_a_misspelt_key_is_unknown_with_a_suggestion(data, fragments):
    data = dict(data, workloads=[{"kind": "sync_loop", "tasks": 1, "loops": 1}])
    with pytest.raises(ScenarioError) as err:
        load_scenario(data)
    for fragment in fragments:
        assert fragment in str(err.value)
    assert "missing" not in str(err.value)


def test_a_quoted_number_is_named_a_string():
    data = {"hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4}, "kernel": {"HZ": "1000"},
            "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 1}]}
    with pytest.raises(ScenarioError, match="is a string, not a number"):
        load_scenario(data)


@pytest.mark.parametrize("kernel, fragment", [
    ({"release": "5.10", "CONFIG_PREEMPT_DYNAMIC": True}, "CONFIG_PREEMPT_DYNAMIC does not exist"),
    ({"CONFIG_PREEMPT_DYNAMIC": True, "CONFIG_PREEMPTION": False, "CONFIG_PREEMPT_RCU": False}, "preemptible"),
    ({"bootargs": "preempt=none"}, "needs CONFIG_PREEMPT_DYNAMIC"),
    ({"CONFIG_PREEMPT_DYNAMIC": True, "bootargs": "preempt=lazy"}, "not modelled"),
])
def test_preempt_dynamic_is_refused_where_the_kernel_has_no_such_build(kernel, fragment):
    with pytest.raises(ScenarioError, match=fragment):
        params(**kernel)


@pytest.mark.parametrize("boot, preemption", [("", True), ("preempt=none", False), ("preempt=voluntary", False),
                                              ("preempt=full", True)])
def test_preempt_chooses_the_model_of_a_dynamic_build(boot, preemption):
    p = params(CONFIG_PREEMPT_DYNAMIC=True, bootargs=boot)
    assert p.preemption is preemption and p.preempt_rcu


@pytest.mark.parametrize("table", [
    {"source": "x", "since_ns": [20000, 10000], "ttwu_ns": [1, 2, 3], "in_cb_wakeme_ns": {"value": 1, "source": "y"}},
    {"source": "x", "since_ns": [20000], "ttwu_ns": [1], "in_cb_wakeme_ns": {"value": 1, "source": "y"}},
    {"source": "x", "since_ns": [20000], "ttwu_ns": [1, 2], "in_cb_wakeme_ns": 1},
    {"source": " ", "since_ns": [20000], "ttwu_ns": [1, 2], "in_cb_wakeme_ns": {"value": 1, "source": "y"}},
])
def test_a_malformed_ttwu_reuse_table_is_refused(table):
    with pytest.raises(ValueError, match="ttwu_reuse must be"):
        profiles._check_ttwu_reuse("p", table)
    good = dict(table, source="x", since_ns=[10000, 20000], ttwu_ns=[1, 2, 3],
                in_cb_wakeme_ns={"value": 1, "source": "y"})
    profiles._check_ttwu_reuse("p", good)


@pytest.mark.parametrize("table", [
    {"source": "x", "quantiles_ns": [1] * 100, "tail_ns": [1] * 11},
    {"source": "x", "quantiles_ns": [2] + [1] * 100, "tail_ns": [1] * 11},
    {"source": "x", "quantiles_ns": [1] * 101, "tail_ns": [1.5] * 11},
    {"source": " ", "quantiles_ns": [1] * 101, "tail_ns": [1] * 11},
    {"source": "x", "quantiles_ns": [1] * 101},
    {"source": "x", "quantiles_ns": list(range(101)), "tail_ns": list(range(11))},  # the tail apart from the table
], ids=["short", "falling", "not integers", "no source", "no tail", "tail apart"])
def test_a_malformed_wakeup_idle_table_is_refused(table):
    with pytest.raises(ValueError, match="wakeup_idle must be"):
        profiles._check_wakeup_idle("p", table)


def test_a_wakeup_idle_table_is_accepted():
    profiles._check_wakeup_idle("p", {"source": "x", "quantiles_ns": list(range(101)),
                                      "tail_ns": [99 + k // 10 for k in range(11)]})


def test_only_a_profile_with_a_measured_idle_wakeup_says_so_in_the_resolved_hardware():
    for name, has in (("qemu-tcg", True), ("qemu-tcg-icount", True), ("xeon-e5405-8cpu", False),
                      ("x86-64-server-2023", False)):
        data = {"name": "t", "hardware": {"profile": name, "nr_cpus": 2}, "kernel": {"release": "6.12", "HZ": 1000},
                "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 1}]}
        (v,) = load_scenario(data).variants.values()
        assert ("wakeup_idle" in v.resolved()["hardware"]) == has
        assert (v.hardware.wakeup_idle is not None) == has


def test_only_a_profile_with_a_ttwu_reuse_table_says_so_in_the_resolved_hardware():
    for name, has in (("qemu-tcg", True), ("x86-64-server-2023", False)):
        data = {"name": "t", "hardware": {"profile": name, "nr_cpus": 2}, "kernel": {"release": "6.12", "HZ": 1000},
                "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 1}]}
        (v,) = load_scenario(data).variants.values()
        assert ("ttwu_reuse" in v.resolved()["hardware"]) == has
        assert (v.hardware.ttwu_reuse == profile_ttwu_reuse(name)) and (v.hardware.ttwu_reuse is not None) == has


@pytest.mark.parametrize("key, value", [("kthread", True), ("start_us", 100.0), ("start_cpus", "1")])
def test_a_barrier_start_refuses_what_belongs_to_tasks_started_together(key, value):
    """start: barrier's tasks are a user process's threads, created by their parent on the
    first CPU of `cpus` and released at time 0: a kthread, a start time or creation CPUs of
    their own are refused, naming the key."""
    data = {"hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4},
            "workloads": [{"kind": "sync_loop", "tasks": 4, "loops": 2, "pinned": False, "start": "barrier",
                           key: value}]}
    with pytest.raises(ScenarioError) as info:
        load_scenario(data)
    assert info.value.key.endswith(key) and "start: barrier" in str(info.value)
    data["workloads"][0]["start"] = "together"
    load_scenario(data)
