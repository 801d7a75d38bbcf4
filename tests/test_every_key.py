"""Every key a scenario accepts changes the engine's input, or the tables below say why not.

The walk goes over every field of every model a scenario reaches (hardware, kernel with
every boot parameter, each workload kind, run) and the scenario's own top-level keys. For
each key it builds a base scenario in which the key can matter (CONDITIONS), changes the key
from its value there to another allowed value (from the field's type and bounds, or
OTHER_VALUE), and compares the engine inputs of the two (rcusim.engine.engine_input) field by
field. The key must change one of them, unless:

* it takes effect only together with another setting: TOGETHER changes that one too;
* its effect lies outside the engine's input, or it has none by design (docs/scenarios.md):
  ELSEWHERE says which, and the change must then leave the engine's input as it was;
* a scenario refuses it: REFUSED says why, and building the scenario must fail.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import re
import types
from fnmatch import fnmatchcase
from typing import Annotated, Literal, Union, get_args, get_origin

import numpy as np
import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from rcusim.engine.engine_input import engine_input
from rcusim.errors import ScenarioError
from rcusim.input.bootargs import PARAMETERS
from rcusim.input.variant import VariantInput
from rcusim.input.workloads import WORKLOAD_KINDS
from rcusim.input.cpulist import CPULIST_ALLOWED
from rcusim.input.scenario import TOP_KEYS, load_scenario

BOOTARGS = "kernel.bootargs."

NOISE_STREAM = {"rate_hz": 1000.0, "median_us": 2.0, "p99_us": 10.0}
TIMER_DELAY = {"quantiles_us": [float(k) for k in range(1001)]}
CALL_RCU_LOAD = {"kind": "call_rcu_load", "work_us": 10.0, "call_rcu_per_op": 1.0,
                 "nonpreempt": [{"us": 5.0, "per_op": 0.1}]}
BASE = {
    "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4, "memory_mb": 2048},
    "workloads": [
        {"kind": "sync_loop", "tasks": 4, "loops": 2},
        {"kind": "readers", "length_us": 5.0, "rate_per_s": 1000.0},
        {"kind": "kfree_rcu_flood"},
        {"kind": "rcuscale_writer", "nreaders": 0},
        {"kind": "rt_latency_probe", "samples": 10},
        CALL_RCU_LOAD,
        {"kind": "noise", "irq": NOISE_STREAM, "kthread": NOISE_STREAM,
         "timer": {"all_busy": TIMER_DELAY, "some_idle": TIMER_DELAY}, "host": {"rate_hz": 10.0, **TIMER_DELAY}},
    ],
}
"""One workload of every RCU kind, on a small machine with the default kernel."""

NOCB = {"kernel.CONFIG_RCU_NOCB_CPU": True}
LAZY = {**NOCB, "kernel.CONFIG_RCU_LAZY": True}
CLASSIC = {"kernel.release": "2.6.20", "hardware.nr_cpus": 1,
           # kfree_rcu() came with v3.0
           "workloads": [w for w in BASE["workloads"] if w["kind"] != "kfree_rcu_flood"]}
TREE = {"hardware.nr_cpus": 64}
EXP_KTHREAD = {BOOTARGS + "rcutree.kthread_prio": "1"}

#: Base settings under which a key can take effect (key pattern: settings, why).
CONDITIONS = {
    "hardware.costs.wakeup_idle_*": ({"hardware.profile": "xeon-e5405-8cpu"},
                                     "they price an idle wake-up on a profile without idle states"),
    "hardware.idle_states.*": ({"hardware.idle_states": [
        {"name": "C1", "exit_latency_us": 2, "target_residency_us": 2},
        {"name": "C6", "exit_latency_us": 100, "target_residency_us": 400}]},
        "a state is changed in a table the scenario gives"),
    "hardware.topology.*": ({"hardware.topology": {"sockets": 1, "llcs_per_socket": 1, "cores_per_llc": 2,
                                                   "smt": 2}}, "a shape is changed where the scenario gives one"),
    "hardware.halt_poll_ns": ({"hardware.profile": "amd-threadripper-3970x-kvm"}, "a KVM guest's host parameter"),
    "kernel.CONFIG_RCU_FANOUT": (TREE, "the tree has interior nodes only above one leaf's CPUs"),
    "kernel.CONFIG_RCU_FANOUT_LEAF": (TREE, "the CPUs are balanced over the leaves: their number changes "
                                            "only above one leaf's CPUs"),
    BOOTARGS + "rcutree.rcu_fanout_leaf": (TREE, "the compiled tree must hold the CPUs in the smaller leaves"),
    BOOTARGS + "rcutree.rcu_fanout_exact": ({"hardware.nr_cpus": 40}, "exact and balanced leaves differ when "
                                            "the leaf fanout does not divide the CPUs"),
    "kernel.CONFIG_NR_CPUS": (EXP_KTHREAD, "it sets CONFIG_RCU_EXP_KTHREAD's default, which needs kthread_prio > 0"),
    "kernel.CONFIG_RCU_EXP_KTHREAD": (EXP_KTHREAD, "SCHED_FIFO workers need kthread_prio > 0"),
    "kernel.CONFIG_RCU_NOCB_CPU_DEFAULT_ALL": (NOCB, "depends on CONFIG_RCU_NOCB_CPU"),
    "kernel.CONFIG_RCU_LAZY": (NOCB, "depends on CONFIG_RCU_NOCB_CPU"),
    "kernel.CONFIG_RCU_LAZY_DEFAULT_OFF": (LAZY, "depends on CONFIG_RCU_LAZY"),
    "kernel.CONFIG_RCU_NOCB_CPU_CB_BOOST": ({**NOCB, "kernel.CONFIG_RCU_BOOST": True},
                                           "depends on CONFIG_RCU_NOCB_CPU and CONFIG_RCU_BOOST"),
    "kernel.CONFIG_RCU*BOOST": ({"workloads.readers.preemptible": False},
                                "boosting preempted readers is not modelled: refused beside preemptible readers"),
    "kernel.CONFIG_PREEMPTION": ({"kernel.CONFIG_PREEMPT_RCU": False}, "CONFIG_PREEMPT_RCU depends on it"),
    "kernel.patches": ({"kernel.release": "6.6"}, "a release from before the patch"),
    BOOTARGS + "rcu_nocb*": (NOCB, "NOCB parameters need CONFIG_RCU_NOCB_CPU"),
    BOOTARGS + "nohz_full": (NOCB, "CONFIG_NO_HZ_FULL selects CONFIG_RCU_NOCB_CPU"),
    BOOTARGS + "rcutree.rcu_nocb_gp_stride": ({**NOCB, BOOTARGS + "rcu_nocbs": "all"},
                                              "it groups the offloaded CPUs"),
    BOOTARGS + "rcutree.enable_rcu_lazy": ({**LAZY, "kernel.CONFIG_RCU_LAZY_DEFAULT_OFF": True},
                                           "it turns on lazy RCU built in but off"),
    BOOTARGS + "preempt": ({"kernel.CONFIG_PREEMPT_DYNAMIC": True}, "a CONFIG_PREEMPT_DYNAMIC kernel's parameter"),
    BOOTARGS + "trace_event": ({"hardware.profile": "qemu-tcg", "kernel.release": "6.12"},
                               "a traced event's price is a guest profile's, its sites 6.12's"),
    BOOTARGS + "rcupdate.rcu_normal*": ({"workloads.sync_loop.primitive": "synchronize_rcu_expedited"},
                                        "it turns expedited calls into normal ones"),
    BOOTARGS + "rcupdate.rcumaxbatch": (CLASSIC, "a 2004 patch for classic RCU, modelled on one CPU"),
    BOOTARGS + "rcupdate.rcuplugticks": (CLASSIC, "a 2004 patch for classic RCU, modelled on one CPU"),
    BOOTARGS + "rcupdate.bhlimit": (CLASSIC, "a 2004 patch for classic RCU, modelled on one CPU"),
    "workloads.sync_loop.start_cpus": ({"workloads.sync_loop.pinned": False}, "for unpinned tasks only"),
    "workloads.sync_loop.until_all_done": ({"workloads.sync_loop.rt": True}, "rcu_scale_writer()'s SCHED_FIFO loop"),
    "workloads.sync_loop.async_max": ({"workloads.sync_loop.primitive": "call_rcu_hurry"},
                                      "the rcu_barrier() threshold of call_rcu_hurry callers"),
    "workloads.rcuscale_writer.gp_async_max": ({"workloads.rcuscale_writer.gp_async": True},
                                               "the rcu_barrier() threshold of gp_async writers"),
    "workloads.call_rcu_load.hurry": (LAZY, "call_rcu() and call_rcu_hurry() differ where callbacks may be lazy"),
    "workloads.kfree_rcu_flood.kfree_by_call_rcu": ({**LAZY, BOOTARGS + "rcu_nocbs": "all"},
                                                    "without CONFIG_RCU_LAZY rcuscale falls back to kfree_rcu(), "
                                                    "and its laziness self-test needs every CPU offloaded"),
    "workloads.noise.preset": ({"workloads.noise.kthread": None}, "the preset gives what the workload does not"),
    "workloads.membarrier_loop.*": ({"workloads": [{"kind": "membarrier_loop", "threads": [1]}]},
                                    "without RCU workloads beside it"),
    "run.duration_s": ({"workloads": [CALL_RCU_LOAD], "run.duration_s": 1.0},
                       "only for workloads that never finish"),
}

#: The other value where the field's type does not give one (key pattern: value).
OTHER_VALUE = {
    "name": "other", "description": "other", "seed": 1, "variants": {"default": {}, "other": {}},
    "hardware.profile": "amd-threadripper-3970x",
    "hardware.idle_states.*.name": "C1E",
    "hardware.topology.cores_per_llc": 4,
    "hardware.topology.smt": 1,
    "kernel.release": "6.6",
    "kernel.CONFIG_NR_CPUS": 64,
    "kernel.CONFIG_RCU_FANOUT": 2,
    "kernel.CONFIG_RCU_FANOUT_LEAF": 8,
    "kernel.CONFIG_RCU_EXP_KTHREAD": False,
    "kernel.patches": ["rcu-gp-kthread-cpu-qs-early"],
    BOOTARGS + "rcutree.use_softirq": "0",
    BOOTARGS + "rcutree.jiffies_till_*_fqs": "5",
    BOOTARGS + "rcutree.rcu_fanout_leaf": "8",
    BOOTARGS + "rcutree.rcu_normal_wake_from_gp": "0",
    BOOTARGS + "cpuidle.governor": "teo",
    BOOTARGS + "preempt": "none",
    BOOTARGS + "trace_event": "sched:sched_switch",
    "workloads.*.name": "other",
    "workloads.readers.preemptible": False,
    "workloads.kfree_rcu_flood.kfree_nthreads": -2,
    "workloads.rcuscale_writer.nwriters": 2,
    "workloads.noise.preset": "quiet_server",
    "workloads.noise.timer.*.quantiles_us": [float(2 * k) for k in range(1001)],
    "workloads.noise.timer.*.tail_us": [999.0] * 100 + [1000.0],  # BASE's last interval, steep
    "workloads.noise.host.quantiles_us": [float(2 * k) for k in range(1001)],
    "workloads.noise.host.tail_us": [999.0] * 100 + [1000.0],
    "workloads.membarrier_loop.threads": [2],
}

#: Keys that take effect only together with another setting, changed with the key (key pattern: settings, why).
TOGETHER = {
    "kernel.CONFIG_RCU_NOCB_CPU": ({BOOTARGS + "rcu_nocbs": "all"},
                                   "it offloads the CPUs named by rcu_nocbs=, nohz_full= or "
                                   "CONFIG_RCU_NOCB_CPU_DEFAULT_ALL, which need it"),
    "kernel.CONFIG_PREEMPT_DYNAMIC": ({BOOTARGS + "preempt": "none"},
                                      "its build is preemptible, preempt= chooses the model at boot"),
    "hardware.topology.sockets": ({"hardware.topology.cores_per_llc": 1}, "the shape must multiply to nr_cpus"),
    "hardware.topology.llcs_per_socket": ({"hardware.topology.cores_per_llc": 1},
                                          "the shape must multiply to nr_cpus"),
    "hardware.topology.cores_per_llc": ({"hardware.topology.smt": 1}, "the shape must multiply to nr_cpus"),
    "hardware.topology.smt": ({"hardware.topology.cores_per_llc": 4}, "the shape must multiply to nr_cpus"),
}

#: Keys whose effect is not on the engine's input, or none by design (key pattern: why).
ELSEWHERE = {
    "name": "names the scenario and its results directory",
    "description": "free text",
    "seed": "seeds the engine's random streams (rcusim.engine.simulate.build_engine)",
    "variants": "each variant overrides the keys walked here",
    "hardware.idle_states.*.name": "names the state",
    "workloads.*.name": "names the workload in the results",
    "workloads.membarrier_loop.*": "sys_membarrier() runs in its own engine (rcusim.engine.membarrier)",
    "workloads.kfree_rcu_flood.holdoff": "by design: it delays rcuscale's GP-writer test, and the kfree "
                                         "threads start at once",
    BOOTARGS + "torture.disable_onoff_at_boot": "by design: accepted so that kvm.sh command lines run; "
                                                "rcusim models no CPU hotplug",
    "run.max_sim_time_s": "the time at which the engine's run stops (rcusim.engine.simulate.run_engine)",
    "run.duration_s": "the time at which the engine's run stops (rcusim.engine.simulate.run_engine)",
}

#: Keys and values a scenario refuses (key pattern: why).
REFUSED = {
    BOOTARGS + "rcuscale.*": "parameters of the rcuscale module, read by 'python -m rcusim rcuscale'",
    BOOTARGS + "rcutree.qovld": "callback overload is not modelled",
    BOOTARGS + "rcu_nocb_poll": "polling NOCB kthreads are not modelled",
    BOOTARGS + "cpuidle.governor": "menu, every release's default, is the one governor modelled",
}


def _strip(annotation, metadata=()):
    """The type inside Annotated and Optional, and the bounds in `metadata` and met on the way."""
    bounds: dict = {}
    while True:
        for m in metadata:
            bounds.update({k: getattr(m, k) for k in ("ge", "gt", "le", "lt") if hasattr(m, k)})
        metadata = []
        if get_origin(annotation) is Annotated:
            annotation, *extras = get_args(annotation)
            for extra in extras:
                metadata += extra.metadata if isinstance(extra, FieldInfo) else [extra]
        elif get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(annotation):
            annotation, = (a for a in get_args(annotation) if a is not type(None))
        else:
            return annotation, bounds


def _is_model(core) -> bool:
    return isinstance(core, type) and issubclass(core, BaseModel)


def walk(model: type[BaseModel], prefix: str = ""):
    """(key, FieldInfo) of every leaf field below `model`; boot parameters come without one."""
    for name, info in model.model_fields.items():
        key = prefix + name
        core, _ = _strip(info.annotation)
        item = _strip(get_args(core)[0])[0] if get_origin(core) is list else None
        if key == "kernel.bootargs":
            yield from ((BOOTARGS + param, None) for param in PARAMETERS)
        elif key == "workloads":
            for kind, workload in WORKLOAD_KINDS.items():
                # `kind` selects the model whose keys are walked.
                yield from ((k, i) for k, i in walk(workload, f"workloads.{kind}.") if not k.endswith(".kind"))
        elif _is_model(core):
            yield from walk(core, key + ".")
        elif _is_model(item):
            yield from walk(item, key + ".0.")
        else:
            yield key, info


FIELDS = {key: None for key in TOP_KEYS if key not in VariantInput.model_fields} | dict(walk(VariantInput))
KEYS = list(FIELDS)


def _first(table: dict, key: str):
    return next((value for pattern, value in table.items() if fnmatchcase(key, pattern)), None)


def _node(doc: dict, parts: list[str]):
    for part in parts:
        if isinstance(doc, list):
            doc = doc[int(part)] if part.isdigit() else next(w for w in doc if w["kind"] == part)
        else:
            doc = doc.setdefault(part, {})
    return doc


def get_key(doc: dict, key: str):
    *parents, last = key.split(".")
    return _node(doc, parents).get(last)


def set_key(doc: dict, key: str, value) -> None:
    """Set `key`; a boot parameter is appended to the command line (None: the bare name)."""
    if key.startswith(BOOTARGS):
        name = key.removeprefix(BOOTARGS)
        kernel = doc.setdefault("kernel", {})
        kernel["bootargs"] = f"{kernel.get('bootargs', '')} {name if value is None else f'{name}={value}'}".strip()
        return
    *parents, last = key.split(".")
    _node(doc, parents)[last] = value


def other_value(key: str, base):
    """Another allowed value of `key`, whose value in the base scenario is `base`."""
    if (value := _first(OTHER_VALUE, key)) is not None:
        return value
    if key.startswith(BOOTARGS):
        param = PARAMETERS[key.removeprefix(BOOTARGS)]
        if param.kind == "flag":
            return None
        if param.kind in ("bool", "cpulist", "optional_cpulist"):
            return "1"
        return str(max(param.lo, 1) if param.lo is not None else 1)
    info = FIELDS[key]
    core, bounds = _strip(info.annotation, info.metadata)
    if (info.json_schema_extra or {}).get("allowed") == CPULIST_ALLOWED:
        return "1"
    if core is bool and base is not None:
        return not base
    if get_origin(core) is Literal:
        return next(v for v in get_args(core) if v != base)
    if core is int:
        lo = bounds.get("ge", bounds.get("gt", -1) + 1)
        if base is None:
            return lo + 1
        return base + 1 if base + 1 <= bounds.get("le", base + 1) else base - 1
    if core is float:
        value = 2 * base if base else 1.0
        return value if value <= bounds.get("le", value) else base / 2
    raise LookupError(f"no other value for {key}: give one in OTHER_VALUE")


def scenarios(key: str) -> tuple[dict, dict]:
    """The base scenario in which `key` can matter, and the same with `key` changed."""
    base = copy.deepcopy(BASE)
    for pattern, (settings, _) in CONDITIONS.items():
        if fnmatchcase(key, pattern):
            for k, v in settings.items():
                set_key(base, k, copy.deepcopy(v))
    changed = copy.deepcopy(base)
    info = FIELDS[key]
    value = None if info is None else get_key(changed, key)
    if value is None and info is not None:
        value = info.get_default()
    set_key(changed, key, other_value(key, value))
    together, _ = _first(TOGETHER, key) or ({}, "")
    for k, v in together.items():
        set_key(changed, k, v)
    return base, changed


@functools.lru_cache(maxsize=None)
def _engine_input(doc_json: str):
    return engine_input(load_scenario(json.loads(doc_json)).variants["default"])[0]


def build(doc: dict):
    return _engine_input(json.dumps(doc, sort_keys=True))


def differences(a, b) -> list[str]:
    """The engine-input fields, as section.field, that differ between `a` and `b`."""
    out = []
    for section in dataclasses.fields(a):
        x, y = getattr(a, section.name), getattr(b, section.name)
        for f in dataclasses.fields(x):
            u, v = getattr(x, f.name), getattr(y, f.name)
            if not (np.array_equal(u, v) if isinstance(u, np.ndarray) else u == v):
                out.append(f"{section.name}.{f.name}")
    return out


@pytest.mark.parametrize("key", KEYS)
def test_every_key_changes_the_engine_input_or_says_why(key):
    base, changed = scenarios(key)
    before = build(base)
    if _first(REFUSED, key):
        with pytest.raises(ScenarioError, match=key.removeprefix(BOOTARGS).split(".")[-1]):
            build(changed)
        return
    diff = differences(before, build(changed))
    if why := _first(ELSEWHERE, key):
        assert diff == [], f"{key} changes {diff}, yet ELSEWHERE says: {why}"
    else:
        assert diff, (f"{key}: accepted and without effect on the engine's input; refuse it, or list it in "
                      "ELSEWHERE (documented in docs/scenarios.md) or CONDITIONS with the reason")


def misspellings(name: str) -> list[str]:
    """How a key gets mistyped: its case changed, a letter left out (or doubled in a short name)."""
    return [name.swapcase(), name[:-1] if len(name) > 3 else name + name[-1]]


@pytest.mark.parametrize("key", [k for k in KEYS if not k.startswith(BOOTARGS)])
def test_every_misspelt_key_gets_a_suggestion(key):
    """At every level, written in the base and in a variant (boot parameters: test_bootargs.py)."""
    base, _ = scenarios(key)
    *parents, name = key.split(".")
    for wrong in misspellings(name):
        doc = copy.deepcopy(base)
        parent = _node(doc, parents)
        parent[wrong] = parent.pop(name, 1)
        docs = [doc] + ([{**base, "variants": {"v": {parents[0]: doc[parents[0]]}}}] if parents else [])
        for d in docs:
            with pytest.raises(ScenarioError, match=re.escape(f"unknown key (did you mean {name!r}?)")) as exc:
                load_scenario(d)
            assert exc.value.key.endswith(wrong), exc.value.key


def test_a_misspelt_workload_kind_gets_a_suggestion():
    for workload, problem in (({"Kind": "sync_loop", "tasks": 1, "loops": 1}, "unknown key (did you mean 'kind'?)"),
                              ({"kind": "sync_lop"}, "unknown kind 'sync_lop' (did you mean 'sync_loop'?)")):
        with pytest.raises(ScenarioError, match=re.escape(problem)):
            load_scenario({**BASE, "workloads": [workload]})


def test_every_table_entry_names_a_key():
    for table in (CONDITIONS, OTHER_VALUE, TOGETHER, ELSEWHERE, REFUSED):
        assert [p for p in table if not any(fnmatchcase(k, p) for k in KEYS)] == []


def test_the_walk_reaches_every_kind_of_key():
    for key in ("name", "hardware.costs.kfree_bulk_ns", "hardware.idle_states.0.wake_ns",
                "hardware.topology.smt", "kernel.CONFIG_RCU_LAZY", BOOTARGS + "rcutree.blimit",
                "workloads.call_rcu_load.nonpreempt.0.per_op", "workloads.noise.kthread.p99_us",
                "workloads.membarrier_loop.caller_cpu", "run.sample_fraction"):
        assert key in FIELDS, key
