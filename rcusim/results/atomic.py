"""Files and directories that appear whole: written under a hidden temporary name beside
their place (``.<name>.tmp-<pid>``, on the same file system) and renamed into it when
complete, the temporary copy removed on any error, Ctrl-C or SIGTERM.

:data:`TEMPORARY` matches these names, so that what a killed process left can be
recognised (``rcusim.commands.outdir`` removes it).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import threading
from pathlib import Path

__all__ = ["INTERRUPTIONS", "TEMPORARY", "atomic_directory", "atomic_file", "interruptions_deferred",
           "interruptions_kept"]

TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?:tmp|old)-(?P<pid>[0-9]+)")
"""Name of a temporary copy (``tmp``) or of an old one being replaced (``old``), with the
name it stands for and the writing process's pid (to be matched whole)."""


def _beside(path: Path, kind: str) -> Path:
    return path.with_name(f".{path.name}.{kind}-{os.getpid()}")


#: Ctrl-C and kill's default.
INTERRUPTIONS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _interruptions(at_once: bool):
    """SIGINT and SIGTERM that arrive in the block act after it; with `at_once` they act
    at once as well, and again after it only if the block ended anyway (signal handlers
    belong to the main thread: elsewhere nothing is done)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived = []

    def note(signum, frame):
        arrived.append(signum)
        if at_once:
            _act(previous[signum], signum, frame)

    # The handlers to come back to are known before `note` can run, and are restored even
    # if a signal acts while the second one is being installed.
    previous = {sig: signal.getsignal(sig) for sig in INTERRUPTIONS}
    ended = False
    try:
        for sig in INTERRUPTIONS:
            signal.signal(sig, note)
        yield
        ended = True
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if ended or not at_once:
            for sig in arrived:
                signal.raise_signal(sig)


def _act(handler, signum, frame) -> None:
    """What the process does on `signum` with `handler` installed."""
    if callable(handler):
        handler(signum, frame)
    elif handler == signal.SIG_DFL:
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)


def interruptions_deferred():
    """SIGINT and SIGTERM that arrive during the block take effect after it, as they would
    have."""
    return _interruptions(at_once=False)


def interruptions_kept():
    """SIGINT and SIGTERM act at once, and act again after the block if it ended anyway:
    library code may swallow the exception (numpy's dtype comparison, which pandas makes,
    clears whatever error arrives while it runs)."""
    return _interruptions(at_once=True)


@contextlib.contextmanager
def atomic_file(path: Path):
    """Yield the temporary path to write `path` through; it is renamed to `path` when the
    block ends without error, else removed."""
    tmp = _beside(Path(path), "tmp")
    try:
        with interruptions_kept():
            yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_directory(outdir: Path, merge: bool = False):
    """Yield a new empty directory beside `outdir` to write into; when the block ends
    without error it replaces `outdir` as a whole, else it is removed.

    An existing `outdir` is renamed aside first (``.<name>.old-<pid>``) and removed once
    the new one is in place, so that `outdir` is at any moment absent, the old complete
    directory or the new one, never a mixture. With `merge`, what the old `outdir` holds
    and the new one does not is moved into the new one first (a sweep keeps its finished
    points). Ctrl-C or SIGTERM during the renaming takes effect once it is done.
    """
    # An absolute path without "." or "..", so that the name beside it is its own.
    outdir = Path(os.path.abspath(outdir))
    outdir.parent.mkdir(parents=True, exist_ok=True)
    tmp, old = _beside(outdir, "tmp"), _beside(outdir, "old")
    # Directories of these names can only be left over from a killed process that
    # had our pid; they are garbage.
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)
    try:
        tmp.mkdir()
        with interruptions_kept():
            yield tmp
        with interruptions_deferred():
            if outdir.exists():
                os.replace(outdir, old)
                moved = []
                try:
                    if merge:
                        for entry in sorted(set(os.listdir(old)) - set(os.listdir(tmp))):
                            os.replace(old / entry, tmp / entry)
                            moved.append(entry)
                    os.replace(tmp, outdir)
                except BaseException:
                    for entry in moved:
                        os.replace(tmp / entry, old / entry)
                    os.replace(old, outdir)
                    raise
                shutil.rmtree(old)
            else:
                os.replace(tmp, outdir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
