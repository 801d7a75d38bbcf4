"""What produced a result: the installed rcusim version and the git revision of its source."""

from __future__ import annotations

import importlib.metadata
import subprocess
from pathlib import Path


def source_revision() -> str | None:
    """The git revision of rcusim's source tree ("<sha>" or "<sha>-dirty"), or None
    when the package does not run from a git checkout."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return sha + ("-dirty" if dirty else "")


def installed_version() -> str:
    """Version of the installed rcusim distribution, "0.1.0" if not installed."""
    try:
        return importlib.metadata.version("rcusim")
    except importlib.metadata.PackageNotFoundError:
        return "0.1.0"
