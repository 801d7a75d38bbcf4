"""The typed boundary between a resolved scenario and the engine (rcusim.engine.engine_input)."""

import ast
import dataclasses
import re
import types
import typing
from pathlib import Path

import numpy as np
import pytest

from rcusim import _core
from rcusim.engine.engine_input import EngineInput, TreeGp, engine_input
from rcusim.input.scenario import load_scenario
from rcusim.results.trace import _ENTITY_NAMES


SCENARIO = {
    "name": "boundary",
    "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4},
    "kernel": {"release": "6.6", "HZ": 1000},
    "workloads": [{"kind": "sync_loop", "tasks": 4, "loops": 2}],
}


def section_misplacements(sections: dict[str, list[str]], files: dict[str, str]) -> list[str]:
    """What breaks "one engine-input section per engine file, read only by that file": a
    section without a same-named file of the engine (_core.pyx's own: run_end), a field its
    file does not read, or a section _core.pyx hands to a function of another file."""
    home = {}
    for name, text in files.items():
        for fn in re.findall(r"^cdef\s+(?:inline\s+)?[\w\s*]*?\b(\w+)\s*\(", text, re.M):
            home.setdefault(fn, name)
    found = []
    for section, fields in sections.items():
        own = "_core.pyx" if section == "run_end" else f"{section}.pxi"
        if own not in files:
            found.append(f"{section}: no engine file {own}")
            continue
        found += [f"{section}.{field}: not read in {own}" for field in fields
                  if not re.search(rf"\.{field}\b", files[own])]
        for fn in re.findall(rf"\b(\w+)\((?:self, )?inp\.{section}\b", files["_core.pyx"]):
            if home.get(fn) != own:
                found.append(f"{section}: handed to {fn}() of {home.get(fn)}")
    return found


def test_each_section_is_its_engine_files_and_read_there():
    sections = {name: [f.name for f in dataclasses.fields(cls)]
                for name, cls in typing.get_type_hints(EngineInput).items()}
    files = {p.name: p.read_text() for p in (Path(__file__).parents[1] / "cython_core").glob("*.p*x*")}
    assert section_misplacements(sections, files) == []


def test_section_misplacements_finds_each_kind():
    files = {"_core.pyx": "fair_init(self, inp.fair)\nsched_init(self, inp.timer)\n",
             "fair.pxi": "cdef void fair_init(Engine self, s) except *:\n    self.policy = s.fair_policy\n",
             "sched.pxi": "cdef void sched_init(Engine self, s) except *:\n    self.hz = s.hz\n",
             "timer.pxi": "cdef void timer_init(Engine self, s) except *:\n    self.lvl = s.lvl\n"}
    sections = {"fair": ["fair_policy", "base_slice_ns"], "timer": ["lvl"], "kvm": ["halt_poll"]}
    assert section_misplacements(sections, files) == [
        "fair.base_slice_ns: not read in fair.pxi", "timer: handed to sched_init() of sched.pxi",
        "kvm: no engine file kvm.pxi"]


def test_a_section_refuses_unknown_and_missing_fields():
    values = {f.name: 1 for f in dataclasses.fields(TreeGp)}
    TreeGp(**values)
    with pytest.raises(TypeError):
        TreeGp(**values, jiffies_till_frist_fqs=3)
    del values["jiffies_resched"]
    with pytest.raises(TypeError):
        TreeGp(**values)


def test_the_engine_refuses_an_input_without_a_section():
    inp, _ = engine_input(load_scenario(SCENARIO).variants["default"])
    _core.Engine(inp, np.random.PCG64(0))
    partial = types.SimpleNamespace(**{f.name: getattr(inp, f.name) for f in dataclasses.fields(inp)
                                       if f.name != "tree_exp"})
    with pytest.raises(AttributeError, match="tree_exp"):
        _core.Engine(partial, np.random.PCG64(0))


def test_the_engine_exports_its_codes_and_the_trace_names_every_entity_kind():
    assert set(_core.PRIMITIVES) == {"synchronize_rcu", "synchronize_rcu_expedited", "call_rcu_hurry"}
    assert len(set(_core.ENTITY_KINDS.values())) == len(_core.ENTITY_KINDS)
    assert set(_ENTITY_NAMES) | {_core.ENTITY_KINDS["gp"]} == set(_core.ENTITY_KINDS.values())


#: What resolution decides once (rcusim.input.resolve): the engine's input only converts units.
_DECIDED_ELSEWHERE = ("rcusim.input.releases", "rcusim.input.cpulist", "rcusim.input.bootargs")


def undecided(source: str) -> list[str]:
    """What `source` does that resolution should have done: an import of the release table,
    the CPU-list or boot-parameter parser, or a read of the kernel as written (spec.kernel)."""
    found = [f"imports {node.module}" for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.ImportFrom) and node.module in _DECIDED_ELSEWHERE]
    found += [f"reads {m[0]}" for m in re.finditer(r"\bspec\.kernel\.\w+", source)]
    return found


def test_the_engine_input_decides_nothing_resolution_decides():
    source = (Path(__file__).parents[1] / "rcusim" / "engine" / "engine_input.py").read_text()
    assert undecided(source) == []


def test_undecided_finds_a_release_question_and_a_cpu_list():
    source = ("from rcusim.input.cpulist import parse_cpulist\nfrom rcusim.input.releases import SWITCHES\n"
              "def f(spec):\n    return spec.kernel.CONFIG_HZ_PERIODIC\n")
    assert undecided(source) == ["imports rcusim.input.cpulist", "imports rcusim.input.releases",
                                 "reads spec.kernel.CONFIG_HZ_PERIODIC"]
