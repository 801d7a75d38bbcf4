"""A JSON Schema of scenario files, from the pydantic models, for editors that
complete and check keys (``python -m rcusim schema > rcusim-scenario.schema.json``),
and the key reference of docs/scenarios.md written from that schema
(``python -m rcusim schema --markdown --write docs/scenarios.md``)."""

from __future__ import annotations

import json
import re

from rcusim.errors import ScenarioError
from rcusim.input.variant import VariantInput

__all__ = ["scenario_json_schema", "key_reference", "with_key_reference", "KEY_REFERENCE_BEGIN",
           "KEY_REFERENCE_END"]

# The begin marker is found by its start, so that a page with an older command is rewritten.
_BEGIN = "<!-- BEGIN GENERATED KEY REFERENCE"
KEY_REFERENCE_BEGIN = f"{_BEGIN}: regenerate with python -m rcusim schema --markdown --write docs/scenarios.md -->"
KEY_REFERENCE_END = "<!-- END GENERATED KEY REFERENCE -->"


def scenario_json_schema() -> dict:
    """The scenario file's schema: a variant's keys (hardware, kernel, workloads, run) plus
    name, description, seed and variants (overrides, nested or dotted, checked on load)."""
    schema = VariantInput.model_json_schema()
    schema["title"] = "rcusim scenario"
    schema["properties"] = {
        "name": {"type": "string", "description": "Scenario name; the default results directory."},
        "description": {"type": "string", "description": "What the scenario asks."},
        "seed": {"type": "integer", "minimum": 0, "description": "Random seed (default 0)."},
        **schema["properties"],
        "variants": {"type": "object", "description": "Variants by name: overrides of the keys above, "
                     "nested or as dotted keys (kernel.bootargs is appended).",
                     "additionalProperties": {"type": "object"}},
    }
    schema["additionalProperties"] = False
    return schema


# --------------------------------------------------------------------------
# The key reference: one markdown table per key group and per workload kind
# --------------------------------------------------------------------------

_INTRO = """\
## Key reference

Every key the input models (`rcusim/input/`) accept, written from the JSON Schema that
`python -m rcusim schema` prints: one table per key group and per workload kind (a kind's table
lists the keys that kind accepts), keys in the order the models declare them, `[]` marking a
list's items. A `null` default leaves the key unset: its meaning says what applies then. The
rules between keys are in the sections above; the boot parameters of `kernel.bootargs` are
listed by `python -m rcusim bootargs` and described in [`bootargs`](#bootargs)."""

_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean",
          "array": "list", "object": "mapping", "null": "null"}
# A sentence ends at a full stop before a capital, not at the one of "e.g." or "i.e.".
_SENTENCE_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.!?])\s+(?=[A-Z])")


def key_reference(schema: dict | None = None) -> str:
    """The generated section of docs/scenarios.md, between its marker comments.

    Parameters
    ----------
    schema : dict, optional
        A scenario JSON Schema; default :func:`scenario_json_schema`.

    Returns
    -------
    str
        Markdown ending in a newline: an introduction, then a table of every model's keys
        (dotted path, type, default, allowed values, the first sentence of its docstring),
        each model's nested models' tables after it.
    """
    schema = scenario_json_schema() if schema is None else schema
    defs = schema["$defs"]
    parts = [KEY_REFERENCE_BEGIN, _INTRO]
    for name, prop in schema["properties"].items():
        parts += _tables(defs, name, prop, None)
    parts.append(KEY_REFERENCE_END)
    return "\n\n".join(parts) + "\n"


def with_key_reference(text: str, section: str | None = None) -> str:
    """`text` (a markdown page) with its generated section replaced, or appended if it has none."""
    section = key_reference() if section is None else section
    begin = text.find(_BEGIN)
    if begin < 0:
        return text.rstrip("\n") + "\n\n" + section
    end = text.find(KEY_REFERENCE_END, begin)
    if end < 0:
        raise ScenarioError("the key reference has a begin marker and no end marker",
                            allowed=f"the line {KEY_REFERENCE_END} after it")
    return text[:begin] + section + text[end + len(KEY_REFERENCE_END):].lstrip("\n")


def _nested(defs: dict, prop: dict) -> tuple[str, list[tuple[str | None, str]]]:
    """The models below a property: the path suffix ("" or "[]" for list items) and
    (kind, model name) pairs, kind set for the members of a union told apart by `kind`."""
    prop = _not_null(prop)
    suffix = ""
    if prop.get("type") == "array":
        prop, suffix = prop["items"], "[]"
    if "$ref" in prop:
        return suffix, [(None, _ref(prop))]
    if "discriminator" in prop:
        return suffix, [(defs[_ref(m)]["properties"]["kind"]["const"], _ref(m)) for m in prop["oneOf"]]
    return suffix, []


def _tables(defs: dict, path: str, prop: dict, kind: str | None) -> list[str]:
    """The tables of the models below `prop` at `path`, depth first."""
    suffix, models = _nested(defs, prop)
    tables = []
    for member_kind, name in models:
        tables += _model_tables(defs, path + suffix, defs[name], member_kind or kind, member_kind is not None)
    return tables


def _model_tables(defs: dict, path: str, model: dict, kind: str | None, kind_table: bool) -> list[str]:
    """One model's table at `path`, then its nested models' tables."""
    heading = f"### `{path}` keys"
    if kind is not None:
        heading += f", `kind: {kind}`" if kind_table else f" (`kind: {kind}`)"
    rows = [heading, "", "| key | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    required = set(model.get("required", ()))
    for key, prop in model["properties"].items():
        default = "required" if key in required else _default(defs, prop)
        rows.append(f"| `{path}.{key}` | {_type(prop)} | {default} | {_cell(_allowed(prop))} | "
                    f"{_cell(_first_sentence(prop.get('description', '')))} |")
    tables = ["\n".join(rows)]
    for key, prop in model["properties"].items():
        tables += _tables(defs, f"{path}.{key}", prop, kind)
    return tables


def _ref(prop: dict) -> str:
    return prop["$ref"].rsplit("/", 1)[-1]


def _members(prop: dict) -> list[dict]:
    """The alternatives of a property: its anyOf members, or itself."""
    return prop.get("anyOf", [prop])


def _not_null(prop: dict) -> dict:
    """A property's one alternative that is not null (Optional[X] is X or null)."""
    members = [m for m in _members(prop) if m.get("type") != "null"]
    return members[0] if len(members) == 1 else prop


def _type(prop: dict) -> str:
    names = ["mapping" if "$ref" in m else _TYPES[m["type"]] for m in _members(prop)]
    return " or ".join(names)


def _allowed(prop: dict) -> str:
    """The values allowed, in the words of rcusim's error messages."""
    if "allowed" in prop:
        return prop["allowed"]
    return " or ".join(_allowed_one(m) for m in _members(prop) if m.get("type") != "null")


def _allowed_one(prop: dict) -> str:
    if "$ref" in prop:
        return "a mapping (keys below)"
    if "const" in prop:
        return str(prop["const"])
    if "enum" in prop:
        return "one of: " + ", ".join(str(v) for v in prop["enum"])
    kind = prop["type"]
    if kind == "boolean":
        return "true or false"
    if kind == "string":
        return "a string"
    if kind in ("integer", "number"):
        return _range(prop)
    if kind == "array":
        least, most = prop.get("minItems"), prop.get("maxItems")
        if least is not None and most is not None:
            count = f"{least} to {most} items"
        elif least is not None:
            count = f"at least {least} items"
        else:
            count = "a list"
        items = prop["items"]
        return f"{count}, each {'a mapping (keys below)' if '$ref' in items else _allowed(items)}"
    return _TYPES[kind]


def _range(prop: dict) -> str:
    what = "an integer" if prop["type"] == "integer" else "a number"
    if prop["type"] == "integer" and "minimum" in prop and "maximum" in prop:
        return f"{what} from {_number(prop['minimum'])} to {_number(prop['maximum'])}"
    bounds = [f"{sign} {_number(prop[key])}" for key, sign in (
        ("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")) if key in prop]
    return " ".join([what, " and ".join(bounds)]) if bounds else what


def _number(value) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _default(defs: dict, prop: dict) -> str:
    value = prop["default"]
    model = _not_null(prop)
    if isinstance(value, dict) and "$ref" in model:
        # A nested model left at its own defaults is written as an empty mapping.
        fields = defs[_ref(model)]["properties"]
        if all(fields[key].get("default") == v for key, v in value.items()):
            value = {}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"`{_number(value)}`"
    return f"`{json.dumps(value)}`"


def _first_sentence(text: str) -> str:
    text = " ".join(text.split()).replace("``", "`")
    return _SENTENCE_END.split(text, maxsplit=1)[0]


def _cell(text: str) -> str:
    """Text for a table cell: a '|' would end the cell."""
    return text.replace("|", "\\|")
