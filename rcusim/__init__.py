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

from rcusim.input.scenario import load_scenario
from rcusim.results.result import Result, installed_version
from rcusim.results.run import run

__version__ = installed_version()

__all__ = ["run", "load_scenario", "Result", "__version__"]
