"""The progress display of a run: one line on stderr naming the stage a run is in.

A variant goes through ``build`` (its engine input and engine), ``engine`` (a bar in
requests finished, or in simulated seconds for a variant without
``synchronize_rcu*()`` calls) and ``results`` (its records read back); the command
line adds ``write`` for the results directory.
"""

from __future__ import annotations

import sys

from tqdm import tqdm

#: The line of a stage by what its progress is counted in: nothing (its name only),
#: requests, or simulated seconds. The latter count against a limit that a run may end
#: well before (run.max_sim_time_s), so they show no time remaining.
BAR_FORMATS = {
    None: "{desc}",
    "req": "{l_bar}{bar}| {n_fmt}/{total_fmt} requests [{elapsed}<{remaining}]",
    "s": "{l_bar}{bar}| {n:.3f}/{total:g} s simulated [{elapsed}]",
}


class Stages:
    """The stage line of a run on stderr; each stage replaces the line of the one before.

    Parameters
    ----------
    enabled : bool or None
        Show the line; None shows it when stderr is a terminal.
    """

    def __init__(self, enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._bar = None

    def stage(self, desc: str, total: float | None = None, unit: str | None = None) -> None:
        """Start the stage `desc`, with a bar up to `total` counted in `unit` ("req" or "s") if given."""
        self.close()
        if self.enabled:
            self._bar = tqdm(desc=desc, total=total, bar_format=BAR_FORMATS[unit], file=sys.stderr, leave=False)

    def advance(self, done: float) -> None:
        """Move the stage's bar to `done`."""
        if self._bar is not None:
            self._bar.update(done - self._bar.n)

    def close(self) -> None:
        """Clear the line."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Stages":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
