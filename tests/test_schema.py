"""The JSON Schema of scenario files (python -m rcusim schema) and the key reference of
docs/scenarios.md written from it (python -m rcusim schema --markdown) stay in step with the
models, and python -m rcusim bootargs lists every boot parameter."""

from __future__ import annotations

import json
import re
import types
from pathlib import Path
from typing import Annotated, Union, get_args, get_origin

import jsonschema
import pytest
import yaml
from pydantic import BaseModel, Field, create_model

from rcusim.commands.cli import main
from rcusim.input.bootargs import PARAMETERS
from rcusim.input.variant import VariantInput
from rcusim.input.workloads import KfreeRcuFlood, SyncLoop
from rcusim.input.schema import (KEY_REFERENCE_BEGIN, KEY_REFERENCE_END, key_reference, scenario_json_schema,
                                 with_key_reference)

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))
SCENARIOS_DOC = ROOT / "docs" / "scenarios.md"
REGENERATE = "python -m rcusim schema --markdown --write docs/scenarios.md"


@pytest.fixture(scope="module")
def schema():
    return scenario_json_schema()


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_bundled_scenario_validates(schema, path):
    jsonschema.validate(yaml.safe_load(path.read_text()), schema)


def test_the_schema_refuses_what_load_refuses(schema):
    doc = yaml.safe_load(SCENARIOS[0].read_text())
    doc["hardware"]["nr_cpu"] = 4
    with pytest.raises(jsonschema.ValidationError, match="nr_cpu"):
        jsonschema.validate(doc, schema)
    doc = yaml.safe_load(SCENARIOS[0].read_text())
    doc["kernel"]["HZ"] = 999
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


def test_schema_and_bootargs_commands(capsys):
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == scenario_json_schema()
    assert main(["bootargs"]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines()}
    assert listed == set(PARAMETERS)


# --------------------------------------------------------------------------
# The key reference of docs/scenarios.md
# --------------------------------------------------------------------------

def _models_in(annotation) -> list[type[BaseModel]]:
    """Pydantic models inside a type: Annotated, Optional, unions, lists, dicts."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Annotated:
        return _models_in(args[0])
    found = []
    if origin in (Union, types.UnionType, list, tuple, dict, set, frozenset) or args:
        for arg in args:
            found += _models_in(arg)
    return found


def model_keys(model: type[BaseModel] = VariantInput, prefix: str = "", kind: str | None = None) -> set:
    """Every key below `model` as (workload kind or None, dotted path without list marks),
    walked in the Python types, apart from the JSON Schema the reference is written from."""
    keys = set()
    for name, info in model.model_fields.items():
        path = prefix + name
        if prefix:
            keys.add((kind, path))
        for sub in _models_in(info.annotation):
            sub_kind = get_args(sub.model_fields["kind"].annotation)[0] if "kind" in sub.model_fields else kind
            keys |= model_keys(sub, path + ".", sub_kind)
    return keys


def reference_keys(markdown: str) -> set:
    """The keys of a key reference's tables as (workload kind of the table or None, path)."""
    keys = set()
    kind = None
    for line in markdown.splitlines():
        if line.startswith("### "):
            m = re.search(r"`kind: (\w+)`", line)
            kind = m.group(1) if m else None
        m = re.match(r"\| `([^`]+)` \|", line)
        if m:
            keys.add((kind, m.group(1).replace("[]", "")))
    return keys


def differences(markdown: str, model: type[BaseModel] = VariantInput) -> tuple[set, set]:
    """(keys of the models missing from the reference, keys listed that the models lack)."""
    want, found = model_keys(model), reference_keys(markdown)
    return want - found, found - want


def test_model_keys_walk_every_model():
    keys = model_keys()
    assert ("sync_loop", "workloads.tasks") in keys and ("readers", "workloads.length_us") in keys
    assert ("call_rcu_load", "workloads.nonpreempt.per_op") in keys
    assert ("noise", "workloads.kthread.p99_us") in keys and ("membarrier_loop", "workloads.threads") in keys
    assert (None, "hardware.costs.kfree_bulk_ns") in keys and (None, "hardware.idle_states.wake_ns") in keys
    assert (None, "kernel.HZ") in keys and (None, "run.records") in keys
    assert ("readers", "workloads.tasks") not in keys


def test_reference_lists_every_key_in_its_kind_table():
    assert differences(key_reference()) == (set(), set())


def test_reference_check_can_fail():
    reference = key_reference()
    row = next(line for line in reference.splitlines() if line.startswith("| `workloads[].kfree_mult` |"))
    assert differences(reference.replace(row + "\n", "")) == ({("kfree_rcu_flood", "workloads.kfree_mult")}, set())
    # The row under another kind's table: listed for a kind that does not accept it.
    moved = reference.replace(row + "\n", "").replace("| `workloads[].tasks` |", row + "\n| `workloads[].tasks` |")
    assert differences(moved) == ({("kfree_rcu_flood", "workloads.kfree_mult")},
                                  {("sync_loop", "workloads.kfree_mult")})


def test_a_key_new_in_the_models_reaches_the_reference_and_fails_the_doc():
    class Flood(KfreeRcuFlood):
        kfree_extra: int = 3
        """A key only this test's model has."""

    workload = Annotated[Union[SyncLoop, Flood], Field(discriminator="kind")]
    variant = create_model("VariantInput", __base__=VariantInput,
                           workloads=(Annotated[list[workload], Field(min_length=1)], ...))
    reference = key_reference(variant.model_json_schema())
    assert "| `workloads[].kfree_extra` | integer | `3` | an integer | A key only this test's model has. |" \
        in reference
    assert differences(reference, variant) == (set(), set())
    doc = SCENARIOS_DOC.read_text()
    assert with_key_reference(doc, reference) != doc


def test_scenarios_doc_has_the_current_reference():
    doc = SCENARIOS_DOC.read_text()
    assert doc.count(KEY_REFERENCE_BEGIN) == 1 and doc.rstrip("\n").endswith(KEY_REFERENCE_END)
    assert with_key_reference(doc) == doc, \
        f"docs/scenarios.md's key reference differs from the models: run {REGENERATE}"


def test_rewriting_keeps_the_prose_and_replaces_the_section():
    old = f"# Page\n\nProse.\n\n{KEY_REFERENCE_BEGIN}\n\nstale table\n\n{KEY_REFERENCE_END}\n"
    new = with_key_reference(old)
    assert new == "# Page\n\nProse.\n\n" + key_reference()
    assert with_key_reference("# Page\n\nProse.\n") == new
    assert with_key_reference(new) == new


def test_first_sentence_and_allowed_values():
    reference = key_reference()
    # run.records's docstring goes on after its first sentence; "e.g." ends none.
    assert "keeps: `all`; `sample`, a fraction of them" in reference and "In every case" not in reference
    assert "Last-level-cache domains per socket (e.g. CCXs). |" in reference
    assert "| `kernel.HZ` | integer | `250` | one of: 100, 250, 300, 1000 |" in reference
    assert "| `run.sample_fraction` | number | `0.01` | a number > 0 and < 1 |" in reference
    assert "| `hardware.costs` | mapping | `{}` |" in reference
    assert "rcuscale's loop % (kfree_loops / 4) divides by zero" in reference


def test_schema_markdown_command(capsys, tmp_path):
    assert main(["schema", "--markdown"]) == 0
    assert capsys.readouterr().out == key_reference()
    page = tmp_path / "page.md"
    page.write_text(f"Prose.\n\n{KEY_REFERENCE_BEGIN}\nstale\n{KEY_REFERENCE_END}\n")
    assert main(["schema", "--markdown", "--write", str(page)]) == 0
    assert page.read_text() == "Prose.\n\n" + key_reference()
    assert main(["schema", "--write", str(page)]) == 2
    page.write_text(f"Prose.\n\n{KEY_REFERENCE_BEGIN}\nno end\n")
    assert main(["schema", "--markdown", "--write", str(page)]) == 2
    assert "no end marker" in capsys.readouterr().err
