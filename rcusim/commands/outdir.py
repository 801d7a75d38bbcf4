"""The results directory of a command: the checks made before a run (--seed, --out), the
claim on it while the run lasts and the atomic write after it, shared by ``run``, ``sweep``,
``kernel`` and ``rcuscale``.

While ``run`` or ``sweep`` works on a directory it holds an flock on ``.<name>.lock``
beside it (the kernel releases it if the process dies): a second rcusim process on the
same directory is refused at once. The temporary files and directories that processes no
longer running left in that place (``.<name>.tmp-<pid>``, see rcusim.results.atomic) are
removed first, with a note on stderr.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sys
import tempfile
from pathlib import Path

from rcusim.errors import ScenarioError
from rcusim.plots import save_result_figures
from rcusim.results.atomic import TEMPORARY, interruptions_deferred

__all__ = ["check_seed", "check_writable", "claim", "writing", "write_result"]


def check_seed(seed: int | None) -> None:
    if seed is not None and seed < 0:
        raise ScenarioError(f"--seed: {seed} is negative; allowed: an integer >= 0")


def _check_new(out: Path, force: bool) -> None:
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
        with interruptions_deferred():  # the probe is removed whenever it was made
            os.rmdir(tempfile.mkdtemp(prefix=".rcusim-out-check-", dir=ancestor))
    except OSError as exc:
        raise ScenarioError(f"{option}: cannot write results under {str(ancestor)!r}: {exc.strerror or exc}",
                            allowed="a directory in a writable place") from None


@contextlib.contextmanager
def claim(out: Path, force: bool, inside: tuple = ()):
    """Hold `out` for this process while the block runs.

    Refused in one line: an `out` that cannot be written, one that another rcusim
    process holds, or one that exists, unless `force`. Once held, its `inside` folders
    (where the command writes files one by one) are made, and what processes no longer
    running left beside `out` and in those folders is removed.
    """
    check_writable(out, "--out")
    # An absolute path without "." or "..": the names beside it are its own.
    where = Path(os.path.abspath(out))
    lock = where.with_name(f".{where.name}.lock")
    fd = None
    try:
        # A signal waits until fd is set: the lock file made is then removed below.
        with interruptions_deferred(), writing(out):
            where.parent.mkdir(parents=True, exist_ok=True)
            fd = _lock(lock, out)
        _check_new(out, force)
        with writing(out):
            for folder in inside:
                (where / folder).mkdir(parents=True, exist_ok=True)
        _remove_stale(where, inside)
        yield
    finally:
        if fd is not None:
            with interruptions_deferred():
                # Removed while still locked: see _lock() for a process that opened it meanwhile.
                lock.unlink(missing_ok=True)
                os.close(fd)


def _lock(path: Path, out: Path) -> int:
    """Open and flock the lock file `path` without waiting: its descriptor, or a
    ScenarioError naming the process that holds it."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 20).decode(errors="replace").strip()
            os.close(fd)
            raise ScenarioError(f"--out: {str(out)!r} is in use by another rcusim process"
                                + (f" (pid {holder})" if holder.isdigit() else ""),
                                allowed="another --out, or this one once that process has ended") from None
        # The holder before us removes the file before unlocking it: if it did so after
        # our open, the file locked is no longer the one at `path`; lock that one instead.
        try:
            current = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            current = False
        if current:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            return fd
        os.close(fd)


def _remove_stale(where: Path, inside: tuple) -> None:
    """Remove the temporary files and directories of processes no longer running: beside
    `where` those of its name, in its `inside` folders all; one note on stderr names them."""
    found = [p for p in sorted(where.parent.iterdir()) if _left_behind(p, where.name)]
    for folder in inside:
        found += [p for p in sorted((where / folder).iterdir()) if _left_behind(p)]
    for path in found:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    if found:
        print(f"rcusim: note: removed {', '.join(str(p) for p in found)}, left behind by rcusim processes "
              "no longer running", file=sys.stderr)


def _left_behind(path: Path, name: str | None = None) -> bool:
    """Whether `path` is a temporary file or directory (of `name`) whose process no longer runs."""
    m = TEMPORARY.fullmatch(path.name)
    return m is not None and name in (None, m["name"]) and not _running(int(m["pid"]))


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return False  # a killed process's that had our pid: we have written nothing yet
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        pass  # another user's
    return True


@contextlib.contextmanager
def writing(out: Path):
    """An OS error in the block is reported in one line as an --out `out` that cannot be written."""
    try:
        yield
    except OSError as exc:
        raise ScenarioError(f"--out: cannot write results to {str(out)!r}: {exc.strerror or exc}") from None


def write_result(result, out: Path, log2: bool | None = None, extra=None) -> Path:
    """Write the results directory with its figures (and what `extra(directory)` adds); an OS
    error is reported as bad --out."""

    def figures(r, directory):
        save_result_figures(r, directory, log2=log2)
        if extra is not None:
            extra(directory)
    with writing(out):
        return result.write(out, figures=figures)
