"""pydantic's validation errors as one :class:`~rcusim.errors.ScenarioError`: the first
problem, named by its key path, with what is allowed there."""

from __future__ import annotations

import types
from typing import Annotated, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from rcusim.errors import ScenarioError, did_you_mean, show_value
from rcusim.input.workloads import WORKLOAD_KINDS


_RANGE_TYPES = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}


def scenario_error_from_validation(exc: ValidationError, data, model) -> ScenarioError:
    """Turn the first error of a pydantic `ValidationError` into a ScenarioError.

    Parameters
    ----------
    exc : pydantic.ValidationError
        The error raised by ``model.model_validate(data)``.
    data : mapping
        The validated input, used to name the key path and the allowed values.
    model : type
        The pydantic model validated against.

    Returns
    -------
    ScenarioError
        With ``path`` set to the key path of the offending value.
    """
    errors = exc.errors(include_url=False)
    # A misspelt key shows as an unknown key and as the missing one it should have been:
    # report the unknown key, whose name is what the user wrote.
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    kind = err["type"]
    ctx = err.get("ctx") or {}
    path = _clean_loc(err["loc"], data)
    inner = ctx.get("error")
    if isinstance(inner, ScenarioError):
        sub = inner.path if inner.path else (tuple(inner.key.split(".")) if inner.key else ())
        return ScenarioError(inner.problem, path=path + tuple(sub), allowed=inner.allowed,
                             token=inner.token)
    if kind == "extra_forbidden":
        found = _type_at(model, path[:-1], data)
        keys = list(found[0].model_fields) if found and _is_model(found[0]) else []
        return ScenarioError(f"unknown key{did_you_mean(path[-1], keys)}", path=path, allowed=", ".join(keys) or None)
    if kind == "union_tag_invalid":
        return ScenarioError(f"unknown kind {ctx.get('tag')!r}{did_you_mean(ctx.get('tag'), WORKLOAD_KINDS)}",
                             path=path + ("kind",), allowed="one of: " + ", ".join(WORKLOAD_KINDS))
    if kind == "union_tag_not_found":
        # A workload without `kind` may have it misspelt: name that key, as for any other.
        written = [k for k in err["input"] if did_you_mean(k, ["kind"])] if isinstance(err["input"], dict) else []
        if written:
            return ScenarioError(f"unknown key{did_you_mean(written[0], ['kind'])}", path=path + (written[0],),
                                 allowed="kind, then the keys of that kind")
        return ScenarioError("required key is missing", path=path + ("kind",),
                             allowed="one of: " + ", ".join(WORKLOAD_KINDS))
    allowed = _describe_at(model, path, data)
    value = err.get("input")
    if kind == "missing":
        problem = "required key is missing"
    elif kind in _RANGE_TYPES:
        problem = f"{show_value(value)} is out of range"
    elif kind == "finite_number":
        problem = f"{show_value(value)} is not a finite number"
    elif kind == "too_short":
        problem = "the list is empty" if not value else f"{len(value)} items are too few"
    elif kind == "literal_error":
        problem = f"{show_value(value)} is not allowed"
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            problem = f"{show_value(value)} is a string, not a number (write it without quotes)"
    elif kind in ("value_error", "assertion_error"):
        problem = err["msg"].removeprefix("Value error, ")
    else:
        problem = f"{show_value(value)} is not valid"
    return ScenarioError(problem, path=path, allowed=allowed)


def _clean_loc(loc, data) -> tuple:
    """Drop the union tags pydantic puts into error locations (workloads.0.sync_loop.x)."""
    path: list = []
    node = data
    for comp in loc:
        if (path and isinstance(path[-1], int) and isinstance(node, dict)
                and isinstance(comp, str) and node.get("kind") == comp):
            continue
        path.append(comp)
        node = _child(node, comp)
    return tuple(path)


def _child(node, comp):
    """Return node[comp] for a mapping key or list index, or None."""
    if isinstance(node, dict):
        return node.get(comp)
    if isinstance(node, list) and isinstance(comp, int) and 0 <= comp < len(node):
        return node[comp]
    return None


def _is_model(obj) -> bool:
    return isinstance(obj, type) and issubclass(obj, BaseModel)


def _unwrap(ann):
    """Strip Annotated and Optional: return (core, metadata, nullable)."""
    meta: list = []
    nullable = False
    while True:
        origin = get_origin(ann)
        if origin is Annotated:
            args = get_args(ann)
            ann = args[0]
            for extra in args[1:]:
                meta.extend(extra.metadata if isinstance(extra, FieldInfo) else [extra])
            continue
        if origin in (Union, types.UnionType):
            members = [a for a in get_args(ann) if a is not type(None)]
            nullable = nullable or len(members) < len(get_args(ann))
            if len(members) == 1:
                ann = members[0]
                continue
        return ann, meta, nullable


def _pick_member(core, node):
    """For a union of workload models, pick the member named by node["kind"]."""
    if get_origin(core) in (Union, types.UnionType) and isinstance(node, dict):
        for member in get_args(core):
            if _is_model(member) and "kind" in member.model_fields:
                if node.get("kind") in get_args(member.model_fields["kind"].annotation):
                    return member
    return core


def _type_at(model, path, data):
    """Return (core type, metadata, nullable, FieldInfo or None) at `path`, or None."""
    ann, meta, info = model, [], None
    node = data
    for comp in path:
        core, _, _ = _unwrap(ann)
        core = _pick_member(core, node)
        if _is_model(core) and isinstance(comp, str):
            info = core.model_fields.get(comp)
            if info is None:
                return None
            ann, meta = info.annotation, list(info.metadata)
        elif get_origin(core) is list and isinstance(comp, int):
            ann, meta, info = get_args(core)[0], [], None
        elif get_origin(core) is dict:
            ann, meta, info = get_args(core)[1], [], None
        else:
            return None
        node = _child(node, comp)
    core, more, nullable = _unwrap(ann)
    return _pick_member(core, node), meta + more, nullable, info


def _describe_at(model, path, data) -> str | None:
    """Describe the values allowed at `path`."""
    found = _type_at(model, path, data)
    if found is None:
        return None
    core, meta, nullable, info = found
    extra = info.json_schema_extra if info is not None else None
    if isinstance(extra, dict) and "allowed" in extra:
        text = str(extra["allowed"])
    else:
        text = _describe(core, meta)
    return text + " or null" if nullable else text


def _describe(core, meta) -> str:
    """Describe a type and its constraints in words."""
    bounds = {}
    for m in meta:
        for attr in ("ge", "gt", "le", "lt", "min_length"):
            if getattr(m, attr, None) is not None:
                bounds[attr] = getattr(m, attr)
    if get_origin(core) is Literal:
        return "one of: " + ", ".join(str(a) for a in get_args(core))
    if core is bool:
        return "true or false"
    if core is int:
        lo, hi = bounds.get("ge"), bounds.get("le")
        if lo is not None and hi is not None:
            return f"an integer from {lo} to {hi}"
        if lo is not None:
            return f"an integer >= {lo}"
        return "an integer"
    if core is float:
        parts = []
        for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            if attr in bounds:
                parts.append(f"{sign} {bounds[attr]:g}")
        return "a number" + (" " + " and ".join(parts) if parts else "")
    if core is str:
        return "a string"
    if _is_model(core):
        return "a mapping with keys: " + ", ".join(core.model_fields)
    if get_origin(core) is list:
        item, _, _ = _unwrap(get_args(core)[0])
        members = get_args(item) if get_origin(item) in (Union, types.UnionType) else (item,)
        if all(_is_model(m) and "kind" in m.model_fields for m in members):
            what = "workloads, each a mapping with a kind (" + ", ".join(WORKLOAD_KINDS) + ")"
        else:
            what = "items"
        least = bounds.get("min_length")
        if least == 1:
            return f"a non-empty list of {what}"
        return f"a list of {'at least ' + str(least) + ' ' if least else ''}{what}"
    if get_origin(core) is dict:
        return "a mapping"
    return getattr(core, "__name__", str(core))
