"""The base of rcusim's input models, and the limits they share."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


MAX_CPUS = 8192
"""Largest CPU count rcusim models (x86's CONFIG_NR_CPUS limit with MAXSMP)."""

NonNegInt = Annotated[int, Field(ge=0)]

MAX_COST_NS = 10**9
"""Largest platform cost accepted, in ns (one second; real costs are microseconds)."""
CostNs = Annotated[int, Field(ge=0, le=MAX_COST_NS)]

MAX_TIME_US = 86_400e6
"""Largest workload time accepted, in microseconds (a day, the longest run)."""



class InputModel(BaseModel):
    """Base of all configuration models: strict, frozen, no unknown keys."""

    # strict: YAML already gives typed values, and strict mode keeps a boolean
    # from passing as an integer or a number as a string.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True,
                              use_attribute_docstrings=True)
