"""The JSON Schema of scenario files (python -m rcusim schema) stays in step with the
models, and python -m rcusim bootargs lists every boot parameter."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from rcusim.commands.cli import main
from rcusim.input.bootargs import PARAMETERS
from rcusim.input.schema import scenario_json_schema

SCENARIOS = sorted((Path(__file__).resolve().parent.parent / "scenarios").glob("*.yaml"))


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
