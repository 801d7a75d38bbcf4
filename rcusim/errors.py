"""Errors raised for bad scenario input.

Every problem with a scenario (a missing file, malformed YAML, an unknown key,
a value out of range, a bad kernel boot parameter) is reported as one
:class:`ScenarioError` whose message is a single line of the form::

    <key.path>: <what is wrong>; allowed: <what is allowed> (<file> line <N>)

for example::

    hardware.nr_cpus: 0 is out of range; allowed: an integer from 1 to 8192 (scenarios/x.yaml line 4)

The key path and the location are left out when they are not known. The
command-line interface prints the message alone, with no traceback.
"""

from __future__ import annotations

import difflib
import re

__all__ = ["ScenarioError", "format_path", "did_you_mean", "show_value"]


def did_you_mean(key, choices) -> str:
    """" (did you mean 'HZ'?)" for a misspelt `key` among `choices`, else "": the closest by
    spelling, case ignored."""
    lower = {str(c).lower(): c for c in choices}
    close = difflib.get_close_matches(str(key).lower(), list(lower), n=1, cutoff=0.6)
    return f" (did you mean {lower[close[0]]!r}?)" if close else ""

# Control characters (newlines included) would break the one-line promise.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")
# Values quoted back to the user are cut so that junk input cannot flood the line.
_MAX_PART = 300


def _one_line(text: str | None) -> str | None:
    """Return `text` on one line, shortened if very long."""
    if text is None:
        return None
    text = _CONTROL.sub(" ", str(text))
    text = " ".join(text.split())
    if len(text) > _MAX_PART:
        text = text[: _MAX_PART - 3] + "..."
    return text


def format_path(path) -> str:
    """Format a key path for messages.

    Parameters
    ----------
    path : sequence of str or int
        Keys of nested mappings (str) and indexes into lists (int).

    Returns
    -------
    str
        Dotted form, with list indexes in brackets: ``workloads[0].tasks``.
    """
    text = ""
    for part in path:
        if isinstance(part, int) and not isinstance(part, bool):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text


class ScenarioError(ValueError):
    """A problem with scenario input, told in one line.

    Parameters
    ----------
    problem : str
        What is wrong, e.g. ``"0 is out of range"``.
    key : str, optional
        Dotted key path of the offending value, e.g. ``"hardware.nr_cpus"``.
    path : sequence of str or int, optional
        The same key path as a tuple (used to find the line in the YAML file).
        Give either `key` or `path`.
    allowed : str, optional
        What is allowed instead, e.g. ``"an integer from 1 to 8192"``.
    where : str, optional
        Where the value was written, e.g. ``"scenarios/x.yaml line 4"``.
    token : str, optional
        The kernel boot-parameter token at fault, when there is one.

    Notes
    -----
    `ScenarioError` is a `ValueError`, so pydantic validators may raise it;
    the scenario loader then fills in the key path and the line.
    """

    def __init__(self, problem, *, key=None, path=None, allowed=None, where=None,
                 token=None):
        self.problem = _one_line(problem) or "invalid input"
        self.path = tuple(path) if path is not None else None
        if key is None and self.path:
            key = format_path(self.path)
        self.key = _one_line(key)
        self.allowed = _one_line(allowed)
        self.where = _one_line(where)
        self.token = token
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The one-line message."""
        text = f"{self.key}: {self.problem}" if self.key else self.problem
        if self.allowed:
            text += f"; allowed: {self.allowed}"
        if self.where:
            text += f" ({self.where})"
        return text

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):
        # Keyword-only arguments need an explicit recipe to survive pickling
        # (sweeps send errors back from worker processes).
        return (_rebuild, (self.problem, self.key, self.path, self.allowed,
                           self.where, self.token))

    def with_context(self, *, key=None, path=None, where=None) -> "ScenarioError":
        """Return a copy with the key path and location filled in where missing.

        Parameters
        ----------
        key, path : optional
            Key path to use if this error has none.
        where : str, optional
            Location to use if this error has none.

        Returns
        -------
        ScenarioError
        """
        if self.key is not None:
            key, path = self.key, self.path
        return ScenarioError(self.problem, key=key, path=path, allowed=self.allowed,
                             where=self.where or where, token=self.token)


def _rebuild(problem, key, path, allowed, where, token):
    """Unpickle a :class:`ScenarioError`."""
    return ScenarioError(problem, key=key, path=path, allowed=allowed, where=where,
                         token=token)


def show_value(value) -> str:
    """Quote a user's value in a message, briefly."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a value of type {type(value).__name__}"
