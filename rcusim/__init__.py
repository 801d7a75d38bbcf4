"""rcusim: a discrete-event simulator of Linux kernel Tree RCU on many-core hardware.

Typical use from Python or Jupyter::

    import rcusim
    r = rcusim.run("scenarios/sync_rcu_10k.yaml", overrides=["workloads.0.loops=20"])
    r.latencies          # one row per synchronize_rcu() call, with a 'variant' column
    print(r.table())     # the variants side by side
"""

from rcusim.result import installed_version

__version__ = installed_version()


def run(source, overrides=None, seed=None, variants=None, progress=None, check=False):
    """Run a scenario file or mapping; see :func:`rcusim.simulate.run`."""
    from rcusim.simulate import run as _run

    return _run(source, overrides=overrides, seed=seed, variants=variants, progress=progress, check=check)


def load_scenario(source, overrides=None, seed=None):
    """Load and validate a scenario; see :func:`rcusim.scenario.load_scenario`."""
    from rcusim.scenario import load_scenario as _load

    return _load(source, overrides=overrides, seed=seed)


__all__ = ["run", "load_scenario", "__version__"]
