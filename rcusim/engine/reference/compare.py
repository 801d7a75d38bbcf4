"""Run the compiled engine and the reference model side by side and compare them.

Used by tests/test_reference.py and by the agreement table of docs/validation.md.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from rcusim import _core
from rcusim.engine.reference.model import run_reference_spec
from rcusim.engine.simulate import EVENT_CHUNK, build_engine
from rcusim.input.scenario import Scenario, load_scenario


def run_engine(spec, seed: int) -> dict:
    """Run the compiled engine on one variant; records as :func:`run_reference` returns them."""
    engine, _info = build_engine(spec, seed)
    until_ns = round(spec.run.max_sim_time_s * 1e9)
    t0 = time.perf_counter()
    while engine.run(until_ns, EVENT_CHUNK) == _core.EXIT_MAX_EVENTS:
        pass
    wall = time.perf_counter() - t0
    return {"requests": engine.requests(), "grace_periods": engine.grace_periods(),
            "counters": engine.counters(), "finished": engine.tasks_remaining == 0, "wall_s": wall}


def run_both(spec, seed: int) -> tuple[dict, dict]:
    """(engine, reference) results for one variant, each with its wall time in ``wall_s``."""
    core = run_engine(spec, seed)
    t0 = time.perf_counter()
    ref = run_reference_spec(spec, seed)
    ref["wall_s"] = time.perf_counter() - t0
    return core, ref


def latencies_ns(result: dict) -> np.ndarray:
    req = result["requests"]
    return req["t_end_ns"] - req["t_start_ns"]


def covered_by_full_gp(result: dict) -> np.ndarray:
    """For each request, whether some grace period lies entirely inside [t_start, t_end]."""
    gps, req = result["grace_periods"], result["requests"]
    order = np.argsort(gps["t_start_ns"], kind="stable")
    starts, ends = gps["t_start_ns"][order], gps["t_end_ns"][order]
    if not len(starts):
        return np.zeros(len(req["t_start_ns"]), dtype=bool)
    # Earliest end among the GPs that start at or after each request's start.
    min_end_from = np.minimum.accumulate(ends[::-1])[::-1]
    idx = np.searchsorted(starts, req["t_start_ns"], side="left")
    inside = idx < len(starts)
    earliest_end = np.where(inside, min_end_from[np.minimum(idx, len(starts) - 1)], np.iinfo(np.int64).max)
    return earliest_end <= req["t_end_ns"]


def agreement_table(configs, seed: int = 0) -> pd.DataFrame:
    """Run both models on every variant of each scenario and tabulate how they agree.

    Parameters
    ----------
    configs : iterable
        Scenarios: anything ``rcusim.input.scenario.load_scenario`` accepts (a path
        or a mapping), or ``Scenario`` objects.  No CPU may be offloaded.
    seed : int
        The seed both models draw from.

    Returns
    -------
    pandas.DataFrame
        One row per scenario variant: grace periods (all, and expedited),
        expedited IPIs, mean and p99 synchronize_rcu*() latency (µs) of each model, the two-sample KS
        p-value of the latencies, whether the request records are identical,
        and each model's wall time.
    """
    from scipy.stats import ks_2samp  # imported here: scipy is slow to import, the CLI loads this module

    rows = []
    for source in configs:
        scenario = source if isinstance(source, Scenario) else load_scenario(source)
        for name, spec in scenario.variants.items():
            core, ref = run_both(spec, seed)
            lat_c, lat_r = latencies_ns(core) / 1e3, latencies_ns(ref) / 1e3
            rows.append({
                "config": f"{scenario.name}/{name}",
                "requests": len(lat_c),
                "gps_core": len(core["grace_periods"]["gp_seq"]),
                "gps_ref": len(ref["grace_periods"]["gp_seq"]),
                "exp_gps_core": int(core["grace_periods"]["expedited"].sum()),
                "exp_gps_ref": int(ref["grace_periods"]["expedited"].sum()),
                "exp_ipis_core": core["counters"]["exp_ipis"],
                "exp_ipis_ref": ref["counters"]["exp_ipis"],
                "mean_us_core": lat_c.mean(),
                "mean_us_ref": lat_r.mean(),
                "p99_us_core": np.percentile(lat_c, 99),
                "p99_us_ref": np.percentile(lat_r, 99),
                "ks_pvalue": float(ks_2samp(lat_c, lat_r).pvalue),
                "identical": same_requests(core, ref),
                "wall_s_core": core["wall_s"],
                "wall_s_ref": ref["wall_s"],
            })
    return pd.DataFrame(rows)


def first_difference(core: dict, ref: dict) -> str | None:
    """The first request record that differs, per task in call order; None if all agree."""
    a, b = core["requests"], ref["requests"]
    if len(a["task"]) != len(b["task"]):
        return f"engine completed {len(a['task'])} requests, reference {len(b['task'])}"
    ka = np.lexsort((a["t_start_ns"], a["task"]))
    kb = np.lexsort((b["t_start_ns"], b["task"]))
    differs = np.zeros(len(ka), dtype=bool)
    for k in b:
        differs |= a[k][ka] != b[k][kb]
    if not differs.any():
        return None
    i = int(np.argmax(differs))
    return (f"first differing request: engine {({k: int(a[k][ka[i]]) for k in b})}, "
            f"reference {({k: int(b[k][kb[i]]) for k in b})}")


def same_requests(core: dict, ref: dict) -> bool:
    """Whether both produced the same request records."""
    return first_difference(core, ref) is None
