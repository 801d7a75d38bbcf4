"""Load scenario files into validated, resolved :class:`Scenario` objects.

A scenario file is YAML with these top-level keys::

    name: sync_rcu_10k                # default: the file's stem
    description: "..."                # optional
    seed: 0                           # default 0
    hardware: {profile: x86-64-server-2023, nr_cpus: 64}
    kernel:   {release: "6.6", HZ: 1000, bootargs: "rcu_nocbs=all"}
    workloads:
      - {kind: sync_loop, tasks: 10000, loops: 1000}
    run: {max_sim_time_s: 3600}       # optional
    variants:                         # optional; absent means one variant "default"
      default: {}
      wake_from_gp: {"kernel.bootargs": "rcutree.rcu_normal_wake_from_gp=1"}

Each variant is the base (everything but ``name``, ``description``, ``seed``
and ``variants``) with the variant's overrides deep-merged over it. Override
keys may be dotted: ``"kernel.HZ": 1000`` is ``{kernel: {HZ: 1000}}``. Two
rules differ from a plain merge:

* ``kernel.bootargs`` is *appended* to the earlier command line, not replaced:
  the kernel reads its command line left to right and a later token wins, so
  a variant adds or overrides single parameters and keeps the others;
* ``workloads`` replaces the whole list.

Overrides given to :func:`load_scenario` (the command line's
``--set dotted.key=value``) apply to the file before the variants are merged;
``--set variants.NAME.key=value`` changes one variant. Their values are read as
YAML scalars (``1000`` is a number, ``true`` a boolean), except for keys that
hold strings (``release``, ``bootargs``, ``cpus``, ``profile``, ``name``,
``description``), whose values are kept as written. The same append rule holds
for ``kernel.bootargs``.

Every problem raises :class:`~rcusim.errors.ScenarioError` with a one-line
message that names the key and, for files, the line. Hostile YAML is refused:
files over 1 MiB, nesting deeper than 50 levels, and more than 100,000 nodes
after alias expansion.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from rcusim.errors import ScenarioError, did_you_mean, format_path, show_value
from rcusim.input.resolve import build_variant
from rcusim.input.variant import VariantSpec

__all__ = ["Scenario", "load_scenario", "read_text_file", "is_file_name", "NAME_ALLOWED", "MAX_FILE_BYTES",
           "SUMMARY_MAX_BYTES", "MAX_DEPTH", "MAX_NODES"]

MAX_FILE_BYTES = 1 << 20
#: The largest results summary.json read back (run --from, compare, kernel --sim-only).
SUMMARY_MAX_BYTES = 64 << 20
"""Largest scenario file accepted (1 MiB)."""
MAX_DEPTH = 50
"""Deepest nesting of YAML collections accepted."""
MAX_NODES = 100_000
"""Most YAML nodes accepted, counted after alias expansion (refuses 'billion laughs')."""

TOP_KEYS = ("name", "description", "seed", "hardware", "kernel", "workloads", "run",
            "variants")
_BASE_KEYS = ("hardware", "kernel", "workloads", "run")
_BOOTARGS = ("kernel", "bootargs")
# --set values for these keys are strings, kept as written.
_STRING_KEYS = {"release", "bootargs", "cpus", "profile", "name", "description"}
_VARIANT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_+-]*$")
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _did_you_mean(key) -> str:
    """" (did you mean 'kernel'?)" for a misspelt top-level key, else ""."""
    return did_you_mean(key, TOP_KEYS)


#: What a scenario's name may be: it names the results directory (results/<name>).
NAME_MAX = 100
NAME_ALLOWED = (f"a file name of 1 to {NAME_MAX} characters: no '/' or '\\', not '.' or '..', "
                "no control characters")


def is_file_name(name) -> bool:
    """Whether `name` can name a results directory (see NAME_ALLOWED)."""
    return (isinstance(name, str) and 0 < len(name) <= NAME_MAX and name.strip() == name
            and name not in (".", "..") and not any(c in "/\\" or ord(c) < 32 or ord(c) == 127 for c in name))


@dataclass(frozen=True)
class Scenario:
    """A loaded scenario: metadata and its resolved variants.

    Attributes
    ----------
    name : str
        Scenario name (the file's stem unless the file sets ``name``).
    description : str
        Free text from the file.
    seed : int
        Seed of the run's random streams.
    variants : dict of str to VariantSpec
        The variants resolved (all, or those asked for), in file order.
    source_path : pathlib.Path or None
        The file loaded, or None for a mapping.
    notes : tuple of str
        What was accepted but has no effect, one line each (a patch the release already has).
    """

    name: str
    description: str
    seed: int
    variants: dict[str, VariantSpec]
    source_path: Path | None = None
    notes: tuple[str, ...] = ()
    _raw: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def variant_names(self) -> tuple[str, ...]:
        """Names of the variants, in file order."""
        return tuple(self.variants)

    def selected(self, variants=None) -> list[str]:
        """The names of `variants` (all resolved, in file order, when None), each checked to
        be one of the resolved variants (a --variant that is not is a ScenarioError)."""
        return _chosen(self.variants, variants)

    def asdict(self) -> dict:
        """Return the merged input mapping (file plus overrides), for provenance.

        Returns
        -------
        dict
            A deep copy: top-level keys as in the file, with ``name``,
            ``description`` and ``seed`` resolved, overrides applied and
            variant keys expanded from their dotted form.
        """
        return copy.deepcopy(self._raw)


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------

def load_scenario(source, overrides=None, seed=None, variants=None) -> Scenario:
    """Load, validate and resolve a scenario.

    Parameters
    ----------
    source : str, os.PathLike or mapping
        A YAML file, or a mapping with the same structure.
    overrides : mapping, str or list of str, optional
        Changes applied before the variants are merged: ``"kernel.HZ=1000"``
        strings (values read as YAML scalars) or a mapping of dotted keys to
        values. ``variants.NAME.key`` addresses one variant.
    seed : int, optional
        Replaces the scenario's seed.
    variants : list of str, optional
        The variants to resolve (default: all): the others are neither validated nor
        in the result's ``variants``.

    Returns
    -------
    Scenario

    Raises
    ------
    ScenarioError
        For any problem, with a one-line message naming the key and, for
        files, the line.
    """
    ctx = _Context()
    root_line = None
    if isinstance(source, Mapping):
        doc = copy.deepcopy(dict(source))
        default_name = "scenario"
        source_path = None
    elif isinstance(source, (str, os.PathLike)):
        source_path = Path(source)
        ctx.origin = os.fspath(source)
        text = _read_file(source_path, ctx.origin)
        doc, lines = _parse_yaml(text, ctx.origin)
        if doc is None:
            raise ScenarioError(f"scenario file is empty: {ctx.origin}")
        root_line = lines.pop((), None)
        ctx.locs = {path: f"{ctx.origin} line {line}" for path, line in lines.items()}
        default_name = source_path.stem
    else:
        raise ScenarioError(f"cannot load a scenario from a {type(source).__name__}",
                            allowed="a path to a YAML file, or a mapping")
    if not isinstance(doc, dict):
        raise ScenarioError(f"the scenario must be a mapping of keys, not {_kind(doc)}",
                            allowed="a mapping with keys " + ", ".join(TOP_KEYS),
                            where=f"{ctx.origin} line {root_line}" if ctx.origin else None)
    for key in doc:
        if key not in TOP_KEYS:
            raise ScenarioError("unknown key" + _did_you_mean(key), key=str(key), allowed=", ".join(TOP_KEYS),
                                where=ctx.where((key,)))
    _prepare_variants(doc, ctx)
    ctx.note_bootargs(doc, None)
    for path, value, origin in _parse_overrides(overrides):
        _apply_override(doc, path, value, origin, ctx)

    name = doc.get("name", default_name)
    if not is_file_name(name):
        raise ScenarioError(f"{show_value(name)} is not a scenario name", key="name", allowed=NAME_ALLOWED,
                            where=ctx.where(("name",)))
    description = doc.get("description") or ""
    if not isinstance(description, str):
        raise ScenarioError(f"{show_value(description)} is not valid", key="description",
                            allowed="a string", where=ctx.where(("description",)))
    # The file's seed is checked even when the argument replaces it: a bad value is never ignored.
    for value, seed_where in ((doc.get("seed", 0), ctx.where(("seed",))), (seed, "the seed argument")):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**64):
            raise ScenarioError(f"{show_value(value)} is not a valid seed", key="seed",
                                allowed=f"an integer from 0 to {2**64 - 1}", where=seed_where)
    seed = doc.get("seed", 0) if seed is None else seed

    base = {key: doc[key] for key in _BASE_KEYS if key in doc}
    specs: dict[str, VariantSpec] = {}
    for vname in _chosen(doc["variants"], variants):
        merged = _merge(copy.deepcopy(base), copy.deepcopy(doc["variants"][vname]), ())
        try:
            specs[vname] = build_variant(vname, merged)
        except ScenarioError as exc:
            # Name the variant when the base alone is fine: the failure is its own.
            specific = len(doc["variants"]) > 1 and _valid(base)
            raise ctx.locate(exc, vname, specific) from None

    raw = copy.deepcopy(doc)
    raw.update(name=name, description=description, seed=seed)
    notes = tuple(dict.fromkeys(note for spec in specs.values() for note in spec.kernel.patch_notes))
    return Scenario(name=name, description=description, seed=seed, variants=specs,
                    source_path=source_path, notes=notes, _raw=raw)


def _chosen(written: dict, variants) -> list[str]:
    """The names of `variants` (all written, in file order, when None), each checked to be
    one of the `written` variants (a --variant that is not is a ScenarioError)."""
    names = list(written) if variants is None else list(variants)
    for n in names:
        if n not in written:
            raise ScenarioError(f"--variant: {show_value(n)} is not a variant of the scenario",
                                allowed=", ".join(written))
    return names


def _valid(base: dict) -> bool:
    """Return True if the base, without any variant's overrides, is a valid variant."""
    try:
        build_variant("base", copy.deepcopy(base))
    except ScenarioError:
        return False
    return True


# --------------------------------------------------------------------------
# Locations
# --------------------------------------------------------------------------

class _Context:
    """Where each key was written, to put lines into error messages."""

    def __init__(self):
        self.origin: str | None = None      # file name as given, or None for a mapping
        self.locs: dict[tuple, str] = {}    # key path -> "file line N" or "--set ..."
        # Command-line pieces per scope (None: the base, else a variant name),
        # to find which one holds a bad token.
        self.bootargs: dict[str | None, list[tuple[str, str | None]]] = {}

    def where(self, path) -> str | None:
        """Return the location of `path` or of its nearest written parent."""
        path = tuple(path)
        for n in range(len(path), -1, -1):
            if path[:n] in self.locs:
                return self.locs[path[:n]]
        return self.origin

    def note_bootargs(self, tree, scope):
        """Record the command line written in `tree` (the base or a variant)."""
        kernel = tree.get("kernel")
        if isinstance(kernel, dict) and isinstance(kernel.get("bootargs"), str):
            prefix = () if scope is None else ("variants", scope)
            self.bootargs.setdefault(scope, []).append(
                (kernel["bootargs"], self.where(prefix + _BOOTARGS)))

    def locate(self, exc: ScenarioError, vname: str, specific: bool) -> ScenarioError:
        """Add the key path prefix and the location to an error of variant `vname`.

        When the value at fault was written in the base but the failure is
        `specific` to this variant, the message names the variant.
        """
        if exc.path:
            path = tuple(exc.path)
        else:
            path = tuple(exc.key.split(".")) if exc.key else ()
        from_variant, where = False, None
        if exc.token and path == _BOOTARGS:
            for scope in (None, vname):
                for text, loc in self.bootargs.get(scope, []):
                    if exc.token in text.split():
                        from_variant, where = scope is not None, loc
                        break
                if where is not None:
                    break
        if where is None:
            for n in range(len(path), -1, -1):
                if ("variants", vname) + path[:n] in self.locs:
                    from_variant, where = True, self.locs[("variants", vname) + path[:n]]
                    break
                if n and path[:n] in self.locs:
                    where = self.locs[path[:n]]
                    break
        if where is None:
            where = self.origin
        problem = exc.problem
        if from_variant:
            path = ("variants", vname) + path
        elif specific:
            problem += f" (in variant {vname!r})"
        return ScenarioError(problem, path=path or None, allowed=exc.allowed,
                             where=exc.where or where, token=exc.token)


# --------------------------------------------------------------------------
# Reading YAML safely, with the line of every key
# --------------------------------------------------------------------------

def _read_file(path: Path, shown: str) -> str:
    return read_text_file(path, shown, "scenario file", "a UTF-8 YAML file")


def read_text_file(path, shown: str, what: str, allowed: str, max_bytes: int = MAX_FILE_BYTES) -> str:
    """Read `path` as UTF-8 text, refusing in one line what is not a small text file: a
    missing file, a directory, a FIFO or a device (never opened), one over `max_bytes`."""
    path = Path(path)
    try:
        exists, is_file = path.exists(), path.is_file()
        size = path.stat().st_size if is_file else 0
        with open(path, "rb") if is_file and size <= max_bytes else open(os.devnull, "rb") as f:
            data = f.read(max_bytes + 1)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        reason = getattr(exc, "strerror", None) or exc
        raise ScenarioError(f"cannot read {what} {shown!r}: {reason}") from None
    if not exists:
        raise ScenarioError(f"{what} not found: {shown}")
    if not is_file:
        raise ScenarioError(f"not a regular file: {shown}", allowed=allowed)
    if size > max_bytes or len(data) > max_bytes:
        raise ScenarioError(f"{what} is too large ({max(size, len(data))} bytes): {shown}",
                            allowed=f"{allowed} of at most {max_bytes >> 20} MiB")
    if not data.strip():
        raise ScenarioError(f"{what} is empty: {shown}")
    if b"\x00" in data:
        raise ScenarioError(f"{what} is not text (binary data): {shown}", allowed=allowed)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{what} is not UTF-8 text (bad byte at offset {exc.start}): {shown}",
                            allowed=allowed) from None


class _TooDeep(Exception):
    """Raised while composing when collections nest deeper than MAX_DEPTH."""

    def __init__(self, line: int):
        super().__init__(line)
        self.line = line


class _TooMany(_TooDeep):
    """Raised while composing when there are more than MAX_NODES nodes."""


class _Loader(yaml.SafeLoader):
    """SafeLoader that stops deep nesting and huge documents while composing.

    The composer recurses once per nesting level, and builds every node
    before anything is checked; both are cut short here.
    """

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent, index):
        self._depth += 1
        self._nodes += 1
        try:
            if self._depth > MAX_DEPTH + 1:
                raise _TooDeep(self.peek_event().start_mark.line + 1)
            if self._nodes > MAX_NODES:
                raise _TooMany(self.peek_event().start_mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _parse_yaml(text: str, origin: str | None):
    """Parse YAML text into plain values and the line of every key.

    Returns
    -------
    tuple
        ``(data, lines)``: the value (None for an empty document) and a dict
        from key path to 1-based line number.
    """
    def where(line):
        return f"{origin} line {line}" if origin else f"line {line}"

    try:
        loader = _Loader(text)
    except yaml.reader.ReaderError as exc:  # the reader checks every character up front
        line = text.count("\n", 0, max(exc.position, 0)) + 1
        raise ScenarioError(f"malformed YAML: {exc.reason} (character #x{exc.character:04x})",
                            allowed="printable characters", where=where(line)) from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        builder = _Builder(loader, where)
        data = builder.build(node, (), 0)
        builder.lines[()] = node.start_mark.line + 1  # the document's own line
        return data, builder.lines
    except _TooMany as exc:
        raise ScenarioError(f"YAML too large: more than {MAX_NODES} nodes",
                            allowed="a plain scenario file", where=where(exc.line)) from None
    except _TooDeep as exc:
        raise ScenarioError(f"YAML nesting deeper than {MAX_DEPTH} levels",
                            where=where(exc.line)) from None
    except RecursionError:
        raise ScenarioError(f"YAML nesting deeper than {MAX_DEPTH} levels",
                            where=origin) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "cannot parse"
        raise ScenarioError(f"malformed YAML: {problem}",
                            where=where(mark.line + 1) if mark else origin) from None
    except yaml.YAMLError as exc:
        raise ScenarioError(f"malformed YAML: {exc}", where=origin) from None
    finally:
        loader.dispose()


class _Builder:
    """Turn a composed YAML node graph into plain values, within limits."""

    def __init__(self, loader: yaml.SafeLoader, where):
        self.loader = loader
        self.where = where
        self.lines: dict[tuple, int] = {}
        self.count = 0

    def build(self, node, path: tuple, depth: int, record: bool = True):
        """Build the value of `node` found at key path `path`."""
        self.count += 1
        line = node.start_mark.line + 1
        if self.count > MAX_NODES:
            raise ScenarioError(f"YAML too large: more than {MAX_NODES} nodes after "
                                "alias expansion", allowed="a plain scenario file",
                                where=self.where(line))
        if depth > MAX_DEPTH:
            raise ScenarioError(f"YAML nesting deeper than {MAX_DEPTH} levels",
                                where=self.where(line))
        if isinstance(node, ScalarNode):
            return self._scalar(node, path)
        if isinstance(node, SequenceNode):
            if node.tag != _SEQ_TAG:
                raise ScenarioError(f"unsupported YAML tag {node.tag!r}",
                                    key=format_path(path) or None, where=self.where(line))
            items = []
            for i, child in enumerate(node.value):
                if record:
                    self.lines[path + (i,)] = child.start_mark.line + 1
                items.append(self.build(child, path + (i,), depth + 1, record))
            return items
        if isinstance(node, MappingNode):
            if node.tag != _MAP_TAG:
                raise ScenarioError(f"unsupported YAML tag {node.tag!r}",
                                    key=format_path(path) or None, where=self.where(line))
            return self._mapping(node, path, depth, record)
        raise ScenarioError("unsupported YAML node", where=self.where(line))

    def _scalar(self, node: ScalarNode, path: tuple):
        """Build a scalar; one YAML resolves but Python cannot build is an error.

        int() refuses more than 4300 digits, and dates such as 2001-13-45 do not exist.
        """
        try:
            return self.loader.construct_object(node)
        except (ValueError, OverflowError):
            kind = node.tag.rsplit(":", 1)[-1]
            raise ScenarioError(f"{show_value(node.value)} is not a valid {kind}",
                                key=format_path(path) or None,
                                where=self.where(node.start_mark.line + 1)) from None

    def _mapping(self, node: MappingNode, path: tuple, depth: int, record: bool) -> dict:
        result: dict = {}
        merges = []
        for key_node, value_node in node.value:
            key_line = key_node.start_mark.line + 1
            if key_node.tag == _MERGE_TAG:
                merges.append((value_node, key_line))
                continue
            if not isinstance(key_node, ScalarNode):
                raise ScenarioError("a mapping key must be a plain string",
                                    key=format_path(path) or None, where=self.where(key_line))
            key = self._scalar(key_node, path)
            if not isinstance(key, str):
                raise ScenarioError(f"key {show_value(key)} is not a string",
                                    key=format_path(path) or None,
                                    allowed="write the key in quotes", where=self.where(key_line))
            if key in result:
                raise ScenarioError("duplicate key", key=format_path(path + (key,)),
                                    where=self.where(key_line))
            if record:
                self.lines[path + (key,)] = key_line
            result[key] = self.build(value_node, path + (key,), depth + 1, record)
        # YAML merge keys ("<<: *base"): keys written here win, then earlier sources.
        for value_node, key_line in merges:
            sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
            for source in sources:
                value = self.build(source, path, depth + 1, record=False)
                if not isinstance(value, dict):
                    raise ScenarioError("a merge key '<<' needs a mapping",
                                        key=format_path(path) or None,
                                        where=self.where(key_line))
                for key, item in value.items():
                    if key not in result:
                        result[key] = item
                        if record:
                            self.lines[path + (key,)] = key_line
        return result


# --------------------------------------------------------------------------
# Variants, overrides and merging
# --------------------------------------------------------------------------

def _prepare_variants(doc: dict, ctx: _Context) -> None:
    """Check the variants mapping and expand dotted keys in each variant."""
    variants = doc.get("variants")
    if variants is None:
        doc["variants"] = {"default": {}}
        return
    if not isinstance(variants, dict) or not variants:
        problem = "no variant given" if variants == {} else f"{show_value(variants)} is not valid"
        raise ScenarioError(problem, key="variants",
                            allowed="a non-empty mapping of variant name to overrides",
                            where=ctx.where(("variants",)))
    prepared = {}
    for name, over in variants.items():
        path = ("variants", name)
        if not isinstance(name, str) or not _VARIANT_NAME.match(name):
            raise ScenarioError(f"{show_value(name)} is not a valid variant name", key="variants",
                                allowed="letters, digits, '_', '+' and '-' (no dots or spaces)",
                                where=ctx.where(path))
        if over is None:
            over = {}
        if not isinstance(over, dict):
            raise ScenarioError(f"{show_value(over)} is not valid", path=path,
                                allowed="a mapping of overrides, e.g. {\"kernel.HZ\": 1000}",
                                where=ctx.where(path))
        prepared[name] = _expand_dotted(over, path, ctx)
        ctx.note_bootargs(prepared[name], name)
    doc["variants"] = prepared


def _expand_dotted(tree: dict, path: tuple, ctx: _Context) -> dict:
    """Turn dotted keys into nested mappings, moving the recorded lines along."""
    result: dict = {}
    for key, value in tree.items():
        old = path + (key,)
        parts = tuple(key.split(".")) if isinstance(key, str) else (key,)
        if any(part == "" for part in parts):
            raise ScenarioError(f"bad key {key!r}", path=path,
                                allowed="names separated by single dots", where=ctx.where(old))
        new = path + parts
        if new != old:
            for loc_path in [p for p in ctx.locs if p[:len(old)] == old]:
                ctx.locs[new + loc_path[len(old):]] = ctx.locs.pop(loc_path)
        if isinstance(value, dict):
            value = _expand_dotted(value, new, ctx)
        node = result
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ScenarioError("set twice, as a value and as a mapping",
                                    path=new, where=ctx.where(new))
        last = parts[-1]
        if last in node:
            if isinstance(node[last], dict) and isinstance(value, dict):
                value = _merge_strict(node[last], value, new, ctx)
            else:
                raise ScenarioError("set twice", path=new, where=ctx.where(new))
        node[last] = value
    return result


def _merge_strict(old: dict, new: dict, path: tuple, ctx: _Context) -> dict:
    """Merge two mappings written in one variant; a key set in both is an error."""
    for key, value in new.items():
        if key in old:
            if isinstance(old[key], dict) and isinstance(value, dict):
                value = _merge_strict(old[key], value, path + (key,), ctx)
            else:
                raise ScenarioError("set twice", path=path + (key,),
                                    where=ctx.where(path + (key,)))
        old[key] = value
    return old


def _merge(old, new, path: tuple):
    """Merge `new` over `old` at key path `path` (relative to a scope's root).

    Mappings merge key by key; ``kernel.bootargs`` strings are joined (later
    tokens win in the kernel); anything else, lists included, is replaced.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        merged = dict(old)
        for key, value in new.items():
            merged[key] = _merge(old[key], value, path + (key,)) if key in old else value
        return merged
    if path == _BOOTARGS and isinstance(old, str) and isinstance(new, str):
        return " ".join(part for part in (old.strip(), new.strip()) if part)
    return new


def _parse_overrides(overrides) -> list[tuple[tuple, object, str]]:
    """Return (key path, value, origin) for each override."""
    if overrides is None:
        return []
    items = []
    if isinstance(overrides, Mapping):
        for key, value in overrides.items():
            items.append((_parse_key(key, f"override {key!r}"), copy.deepcopy(value),
                          f"override {key}"))
        return items
    if isinstance(overrides, str):
        overrides = [overrides]
    for item in overrides:
        if not isinstance(item, str) or "=" not in item:
            raise ScenarioError(f"--set {show_value(item)}: expected KEY=VALUE",
                                allowed="KEY=VALUE with a dotted key, e.g. kernel.HZ=1000")
        if not item.isascii():
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:  # bytes the locale could not decode (surrogates)
                raise ScenarioError(f"--set {show_value(item)}: not UTF-8 text",
                                    allowed="KEY=VALUE in UTF-8") from None
        key, _, text = item.partition("=")
        origin = f"--set {item}"
        path = _parse_key(key.strip(), origin)
        if path[-1] in _STRING_KEYS:
            value = text
        else:
            try:
                value, _ = _parse_yaml(text, None)
            except ScenarioError:
                value = text  # not YAML: take it as the string written
        items.append((path, value, origin))
    return items


def _parse_key(key, origin: str) -> tuple:
    """Split ``a.b[0].c`` into ``("a", "b", 0, "c")``."""
    if not isinstance(key, str) or not key:
        raise ScenarioError(f"bad override key {show_value(key)}", where=origin,
                            allowed="a dotted key such as kernel.HZ or workloads[0].tasks")
    path: list = []
    for part in key.split("."):
        m = re.fullmatch(r"([^\[\]]+)((?:\[\d+\])*)", part)
        if m is None:
            raise ScenarioError(f"bad override key {key!r}", where=origin,
                                allowed="a dotted key such as kernel.HZ or workloads[0].tasks")
        # A bare number is a list index (workloads.0.tasks), as [0] is.
        path.append(int(m[1]) if m[1].isdigit() else m[1])
        path.extend(int(i) for i in re.findall(r"\[(\d+)\]", m[2]))
    return tuple(path)


def _apply_override(doc: dict, path: tuple, value, origin: str, ctx: _Context) -> None:
    """Apply one override to the document."""
    if path[0] not in TOP_KEYS:
        raise ScenarioError("unknown key" + _did_you_mean(path[0]), key=str(path[0]), allowed=", ".join(TOP_KEYS),
                            where=origin)
    if path[0] == "variants":
        variants = doc["variants"]
        if len(path) < 3:
            raise ScenarioError("an override must name a key inside a variant",
                                key=format_path(path), where=origin,
                                allowed="variants.NAME.KEY=VALUE, e.g. variants.default.kernel.HZ=1000")
        name = str(path[1])
        if name not in variants:
            raise ScenarioError(f"no variant named {show_value(name)}", key=format_path(path[:2]),
                                allowed="one of: " + ", ".join(variants), where=origin)
        root, rel, scope = variants[name], path[2:], name
    else:
        root, rel, scope = doc, path, None
    if isinstance(value, dict):
        value = _expand_dotted(value, path, _Context())
    _set_in(root, rel, value, path, origin)
    if rel == _BOOTARGS and isinstance(value, str):
        # Appended, not replaced: remember this piece for error locations.
        ctx.bootargs.setdefault(scope, []).append((value, origin))
        return
    if scope is not None:
        path = ("variants", scope) + rel
    for loc_path in [p for p in ctx.locs if p[:len(path)] == path]:
        del ctx.locs[loc_path]
    ctx.locs[path] = origin


def _set_in(root, rel: tuple, value, full: tuple, origin: str) -> None:
    """Merge `value` in at key path `rel` below `root` (creating mappings)."""
    node = root
    for i, part in enumerate(rel):
        last = i == len(rel) - 1
        if isinstance(node, list):
            index = part
            if not isinstance(index, int) or not 0 <= index < len(node):
                raise ScenarioError(f"no item {show_value(part)} in this list",
                                    key=format_path(full[:len(full) - len(rel) + i]),
                                    allowed=f"an index from 0 to {len(node) - 1}", where=origin)
            if last:
                node[index] = _merge(node[index], value, rel)
            else:
                node = node[index]
        elif isinstance(node, dict):
            part = str(part)  # a number names a key here, not an index
            if last:
                node[part] = _merge(node[part], value, rel) if part in node else value
            else:
                node = node.setdefault(part, {})
        else:
            raise ScenarioError(f"cannot set {format_path(full)}: "
                                f"{format_path(full[:len(full) - len(rel) + i])} is {_kind(node)}",
                                key=format_path(full), where=origin)


def _kind(value) -> str:
    """Name the kind of a value for messages."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "empty"
    return f"a {type(value).__name__} ({show_value(value)})"
