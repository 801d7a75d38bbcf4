"""rcusim: a discrete-event simulator of Linux kernel Tree RCU on many-core hardware.

Typical use from Python or Jupyter::

    import rcusim
    r = rcusim.run("scenarios/sync_rcu_10k.yaml", overrides=["workloads.0.loops=20"])
    r.latencies          # one row per synchronize_rcu() call, with a 'variant' column
    print(r.table())     # the variants side by side

The package is laid out in stages whose imports go one way:
``input`` (scenarios, configuration, kernel command line, profiles, releases)
→ ``kernel`` (rcu_seq and rcu_node arithmetic) → ``engine`` (the engine's
input, the engines, the SimPy reference) → ``results`` (Result, metrics,
report, traces) → ``plots`` → ``commands`` (command line, compare, sweep, bench).
"""

from importlib import import_module

#: The package's names and the modules that define them, imported when first used, so that
#: ``python -m rcusim`` sets up its handling of interruptions before the engine and pandas load.
_EXPORTS = {"run": "rcusim.results.run", "load_scenario": "rcusim.input.scenario",
            "Result": "rcusim.results.result", "installed_version": "rcusim.results.provenance"}

__all__ = ["run", "load_scenario", "Result", "__version__"]


def __getattr__(name: str):
    if name == "__version__":
        return __getattr__("installed_version")()
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'rcusim' has no attribute {name!r}")
