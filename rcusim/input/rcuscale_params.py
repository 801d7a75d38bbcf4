"""rcuscale's module-parameter arithmetic (kernel/rcu/rcuscale.c), shared by the
command that reads a kvm.sh line and the engine's rcuscale workloads."""

from __future__ import annotations

__all__ = ["MIN_MEAS", "MAX_MEAS", "compute_real"]

MIN_MEAS = 100
"""rcu_scale_writer(): a writer is done once it has this many measurements (and
minruntime has passed)."""

MAX_MEAS = 10000
"""rcu_scale_writer(): measurements kept per writer; past them, each new one
overwrites the last."""


def compute_real(n: int, online: int) -> int:
    """rcuscale's compute_real(): n if n >= 0, else online + 1 + n, at least 1."""
    if n >= 0:
        return n
    return max(online + 1 + n, 1)
