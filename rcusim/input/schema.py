"""A JSON Schema of scenario files, from the pydantic models, for editors that
complete and check keys (``python -m rcusim schema > rcusim-scenario.schema.json``)."""

from __future__ import annotations

from rcusim.input.config import VariantInput

__all__ = ["scenario_json_schema"]


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
