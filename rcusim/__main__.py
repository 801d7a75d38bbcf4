"""``python -m rcusim``: see rcusim.commands.cli."""

import os
import signal
import sys


def _interrupted_at_start(signum, frame):
    """Ctrl-C while the command line is still loading (SIGTERM's default ends it as quietly):
    nothing is written yet."""
    sys.stderr.write("rcusim: interrupted\n")
    os._exit(130)


signal.signal(signal.SIGINT, _interrupted_at_start)

from rcusim.commands.cli import main  # noqa: E402 (after the handler)

signal.signal(signal.SIGINT, signal.default_int_handler)
raise SystemExit(main())
