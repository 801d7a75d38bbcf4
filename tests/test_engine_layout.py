"""The engine's layout (cython_core/): one file per mechanism, listed alike everywhere.

- _core.pyx includes every .pxi file once; its docstring's file table and docs/model.md's
  list exactly those files, in that order;
- each engine file has its tests in tests/engine/test_<file>.py;
- each module of the SimPy reference model (rcusim/engine/reference/) is named after the
  engine file whose mechanism it implements again;
- no mechanism's file calls into more than a third of the others: what dispatches to every
  mechanism (the entities' steps, the callbacks' functions, the events) is _core.pyx's.

Each check is a function of the sources' text, so that the tests can show on made-up input
that it finds what it looks for."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "cython_core"
CORE = ENGINE / "_core.pyx"
MODEL_MD = ROOT / "docs" / "model.md"

_DEF = re.compile(r"^cdef\s+(?:inline\s+)?[\w\s*]*?\b(\w+)\s*\(", re.M)


def included(core: str) -> list[str]:
    return re.findall(r'^include "([^"]+)"$', core, re.M)


def docstring_table(core: str) -> list[str]:
    """The .pxi files of the table between the docstring's first two '====' rules."""
    rules = [m.end() for m in re.finditer(r"^=+  =+$", core, re.M)][:2]
    return re.findall(r"^(\S+\.pxi)\s", core[rules[0]:rules[1]], re.M)


def model_md_table(text: str) -> list[str]:
    return re.findall(r"^  \| `(\S+\.pxi)` \|", text, re.M)


def fan_out(sources: dict[str, str]) -> dict[str, set[str]]:
    """For each file, the other files whose cdef functions it calls (comments and
    docstrings aside)."""
    home = {}
    for name, text in sources.items():
        for fn in _DEF.findall(text):
            home.setdefault(fn, name)
    out = {}
    for name, text in sources.items():
        code = re.sub(r'"""[\s\S]*?"""', "", re.sub(r"#.*", "", text))
        calls = set(re.findall(r"\b(\w+)\s*\(", code))
        out[name] = {home[fn] for fn in calls if fn in home and home[fn] != name}
    return out


def too_wide(fans: dict[str, set[str]]) -> dict[str, set[str]]:
    """The files that call into more than a third of the others."""
    limit = (len(fans) - 1) / 3
    return {name: callees for name, callees in fans.items() if len(callees) > limit}


def _mechanisms() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(ENGINE.glob("*.pxi"))}


def test_every_file_is_included_once_and_listed_alike():
    core = CORE.read_text()
    files = included(core)
    assert sorted(files) == sorted(_mechanisms()), "a .pxi file not included, or included twice"
    assert docstring_table(core) == files
    assert model_md_table(MODEL_MD.read_text()) == files


def test_the_tables_are_read_from_the_text():
    core = 'x\n=====  ====\nsched.pxi   run queues\nfair.pxi    EEVDF\n=====  ====\ninclude "sched.pxi"\n'
    assert docstring_table(core) == ["sched.pxi", "fair.pxi"] != included(core)
    assert model_md_table("  | `sched.pxi` | run queues |\n  | x |\n") == ["sched.pxi"]


def test_no_mechanism_calls_into_more_than_a_third_of_the_others():
    wide = too_wide(fan_out(_mechanisms()))
    assert not wide, {name: sorted(callees) for name, callees in wide.items()}


def test_fan_out_finds_the_calls_and_the_wide_file():
    sources = {
        "a.pxi": "cdef int f(Engine self) except -1:\n    return g(self) + h(self)  # k(self)\n",
        "b.pxi": 'cdef inline int g(Engine self) noexcept:\n    """k(self)"""\n    return 0\n',
        "c.pxi": "cdef int h(Engine self) noexcept:\n    return 1\n",
        "d.pxi": "cdef int k(Engine self) noexcept:\n    return f(self)\n",
    }
    fans = fan_out(sources)
    assert fans == {"a.pxi": {"b.pxi", "c.pxi"}, "b.pxi": set(), "c.pxi": set(), "d.pxi": {"a.pxi"}}
    assert too_wide(fans) == {"a.pxi": {"b.pxi", "c.pxi"}}


#: The reference model's own modules: its driver and the comparison with the engine.
REFERENCE_OWN = {"__init__", "model", "compare"}


def unmatched_reference_modules(modules: list[str], engine_files: list[str]) -> list[str]:
    """Reference modules (rcusim/engine/reference/) not named after an engine file."""
    stems = {Path(name).stem for name in engine_files}
    return sorted(m for m in modules if m not in REFERENCE_OWN and m not in stems)


def test_each_reference_module_is_named_after_its_engine_file():
    modules = [p.stem for p in (ROOT / "rcusim" / "engine" / "reference").glob("*.py")]
    assert unmatched_reference_modules(modules, list(_mechanisms())) == []


def test_unmatched_reference_modules_finds_a_stray_name():
    assert unmatched_reference_modules(["model", "tree_exp", "exp"], ["tree_exp.pxi"]) == ["exp"]


def untested(engine_files: list[str], test_files: list[str]) -> list[str]:
    """Engine files without a tests/engine/test_<file>.py."""
    return sorted(name for name in engine_files if f"test_{Path(name).stem}.py" not in test_files)


def test_each_engine_file_has_its_test_file():
    tests = [p.name for p in (ROOT / "tests" / "engine").glob("test_*.py")]
    assert untested(list(_mechanisms()), tests) == []


def test_untested_finds_a_file_without_tests():
    assert untested(["tick.pxi", "timer.pxi"], ["test_timer.py"]) == ["tick.pxi"]
