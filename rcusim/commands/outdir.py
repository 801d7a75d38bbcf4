"""The results directory of a command: the checks made before a run (--seed, --out) and the
atomic write after it, shared by ``run``, ``kernel`` and ``rcuscale``."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from rcusim.errors import ScenarioError
from rcusim.plots import save_result_figures

__all__ = ["check_seed", "check_out", "check_writable", "write_result"]


def check_seed(seed: int | None) -> None:
    if seed is not None and seed < 0:
        raise ScenarioError(f"--seed: {seed} is negative; allowed: an integer >= 0")


def check_out(out: Path, force: bool) -> None:
    """Refuse, before the run, an --out that exists (unless --force) or cannot be written."""
    check_writable(out, "--out")
    if out.exists() and not force:
        raise ScenarioError(f"--out: {str(out)!r} exists and would be replaced",
                            allowed="--force to replace it, or another --out")


def check_writable(out: Path, option: str) -> None:
    """Refuse, before the run, a results directory path (`option`) that is no path, is a file,
    or lies where nothing can be written."""
    try:
        out.exists()
        os.fspath(out).encode()
        if "\x00" in os.fspath(out):
            raise ValueError("a NUL byte in the path")
    except (OSError, ValueError, UnicodeError) as exc:  # a name too long, a NUL, a lone surrogate
        raise ScenarioError(f"{option}: {str(out)!r} cannot be a path: {getattr(exc, 'strerror', None) or exc}",
                            allowed="a directory path of names of at most 255 bytes") from None
    if out.exists() and not out.is_dir():
        raise ScenarioError(f"{option}: {str(out)!r} exists and is not a directory",
                            allowed="a directory to create, or an existing one with --force")
    # The results are written beside it and renamed into place: try that folder now.
    ancestor = out.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    try:
        probe = tempfile.mkdtemp(prefix=".rcusim-out-check-", dir=ancestor)
    except OSError as exc:
        raise ScenarioError(f"{option}: cannot write results under {str(ancestor)!r}: {exc.strerror or exc}",
                            allowed="a directory in a writable place") from None
    os.rmdir(probe)


def write_result(result, out: Path, log2: bool | None = None, extra=None) -> Path:
    """Write the results directory with its figures (and what `extra(directory)` adds); an OS
    error is reported as bad --out."""

    def figures(r, directory):
        save_result_figures(r, directory, log2=log2)
        if extra is not None:
            extra(directory)
    try:
        return result.write(out, figures=figures)
    except OSError as exc:
        raise ScenarioError(f"--out: cannot write results to {str(out)!r}: "
                            f"{exc.strerror or exc}") from None
