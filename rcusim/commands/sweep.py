"""``python -m rcusim sweep FILE``: run a scenario over a grid of parameters and seeds.

A sweep file names a scenario and the values to try, with the same dotted
keys as ``--set``::

    name: expedited_fanout                     # default: the file's stem
    scenario: ../expedited_storm_4096.yaml     # a path (relative to this file) or a mapping
    set: {workloads.0.loops: 5}                # fixed overrides (optional)
    sweep:                                     # the grid: every combination is a point
      hardware.nr_cpus: [64, 256, 1024, 4096]
      kernel.CONFIG_RCU_FANOUT_LEAF: [16, 64]
    seeds: 5                                   # seeds 0..4 (or a list of seeds)
    variants: {rt_mutex: {kernel.exp_mutex: rt_mutex}}   # optional: the sweep's own variants,
                                               # or a list: a subset of the scenario's
    plot: hardware.nr_cpus                     # x axis of percentiles.png (default: the first key)

Every (point, seed) runs all variants and yields one row per variant in one
tidy table (``sweep.parquet``): the point's number, one column per swept key,
``variant``, ``seed`` and the variant's metrics under their ``summary.json``
names (``latency_us.p99``, ``batching``, ...). The summary printed at the end
gives, per point and variant, the mean over seeds and a 95 % confidence
interval (Student's t).

A point whose variants draw nothing at random (no OS noise, readers, sleeps,
...: see rcusim.engine.simulate.draws_at_random) gives the same run for every
seed: it runs once, with the first seed, and its rows stand for every seed of
the table (one line on stderr says so), whose confidence interval is then 0.

Points run on a local process pool (``--workers N``, default: the number of
CPUs) or, given ``--scheduler ADDRESS``, on a Dask cluster
(``dask.distributed``). Each finished (point, seed) is stored at once under
``points/``; a re-run skips those already done (and makes again one whose
file cannot be read). A point that fails is
reported and the others are kept (exit status 1). Every point is validated
before anything runs, so bad input ends at once with one line and status 2,
as does an --out that cannot be written or that another rcusim process is
using. ``sweep.parquet`` and ``percentiles.png`` appear together: the results
directory is written beside its place and renamed into it, the finished
points moved along.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rcusim.commands.compare import flatten_metrics
from rcusim.commands.outdir import claim, writing
from rcusim.engine.simulate import RANDOM_DRAWS, draws_at_random
from rcusim.errors import ScenarioError, did_you_mean, show_value
from rcusim.input.scenario import NAME_ALLOWED, is_file_name, load_scenario, read_text_file
from rcusim.plots import save_percentiles
from rcusim.results.atomic import INTERRUPTIONS, atomic_directory, atomic_file
from rcusim.results.provenance import installed_version
from rcusim.results.run import run_scenario
from rcusim.results.stats import mean_ci

__all__ = ["Sweep", "load_sweep", "run_sweep", "summarize", "mean_ci", "add_parser", "cmd_sweep"]

SWEEP_KEYS = ("name", "scenario", "set", "sweep", "seeds", "variants", "plot")
MAX_POINTS = 100_000
"""Most (point, seed) runs one sweep may ask for."""

@dataclass(frozen=True)
class Sweep:
    """A loaded, validated sweep."""

    name: str
    """Name of the sweep (results go to ``results/sweeps/<name>/``)."""
    scenario: dict
    """The scenario as a mapping, with the fixed ``set`` overrides applied."""
    params: dict
    """Swept dotted keys and their values, in file order."""
    seeds: tuple
    """Seeds each point runs with."""
    variants: tuple | None = None
    """Variants to run (None: all of the scenario's, or the sweep's own in :attr:`scenario`)."""
    plot_x: str | None = None
    """Swept key on the x axis of the percentile plot."""
    seedless: frozenset = frozenset()
    """Indices of the points whose variants draw nothing at random: each runs once, its
    rows standing for every seed."""
    source: Path | None = field(default=None, compare=False)

    def points(self) -> list[dict]:
        """Every combination of the swept values, in file order (last key fastest)."""
        keys = list(self.params)
        return [dict(zip(keys, combo)) for combo in itertools.product(*(self.params[k] for k in keys))]


def load_sweep(path) -> Sweep:
    """Read and validate a sweep file; every point's scenario is loaded once.

    Raises
    ------
    ScenarioError
        For any problem, naming the key (``sweep.<key>``) and the file.
    """
    import yaml

    path = Path(path)
    where = str(path)
    text = read_text_file(path, where, "sweep file", "a UTF-8 YAML sweep file")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ScenarioError(f"sweep file is not valid YAML: {str(exc).splitlines()[0]}", where=where) from None
    if not isinstance(doc, dict):
        raise ScenarioError("a sweep file must be a mapping", allowed="keys " + ", ".join(SWEEP_KEYS), where=where)
    for key in doc:
        if key not in SWEEP_KEYS:
            raise ScenarioError("unknown key" + did_you_mean(key, SWEEP_KEYS), key=f"sweep.{key}",
                                allowed=", ".join(SWEEP_KEYS), where=where)
    source = doc.get("scenario")
    if isinstance(source, str):
        scenario_path = (path.parent / source)
        base = load_scenario(scenario_path)
    elif isinstance(source, dict):
        base = load_scenario(source)
    else:
        raise ScenarioError(f"{show_value(source)} is not a scenario", key="sweep.scenario",
                            allowed="a scenario file path (relative to the sweep file) or a mapping", where=where)
    fixed = doc.get("set") or {}
    if not isinstance(fixed, dict):
        raise ScenarioError("must be a mapping of dotted keys to values", key="sweep.set", where=where)
    scenario = load_scenario(base.asdict(), overrides=fixed).asdict() if fixed else base.asdict()
    params = doc.get("sweep")
    if not isinstance(params, dict) or not params:
        raise ScenarioError("must name at least one key", key="sweep.sweep", where=where,
                            allowed="a mapping of dotted keys to lists of values, e.g. hardware.nr_cpus: [64, 256]")
    for key, values in params.items():
        if not isinstance(values, list) or not values:
            raise ScenarioError(f"{show_value(values)} is not a list of values", key=f"sweep.sweep.{key}",
                                allowed="a non-empty list", where=where)
    seeds = doc.get("seeds", 1)
    if isinstance(seeds, int) and not isinstance(seeds, bool) and 1 <= seeds <= 10_000:
        seeds = tuple(range(base.seed, base.seed + seeds))
    elif (isinstance(seeds, list) and seeds
          and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**64 for s in seeds)):
        seeds = tuple(seeds)
    else:
        raise ScenarioError(f"{show_value(seeds)} is not valid", key="sweep.seeds", where=where,
                            allowed="a count from 1 to 10000, or a list of seeds >= 0")
    variants = doc.get("variants")
    if isinstance(variants, dict):
        # The sweep's own variants, named for what they fix, in place of the scenario's.
        scenario["variants"] = variants
        variants = None
    if variants is not None:
        if isinstance(variants, str):
            variants = [variants]
        if not isinstance(variants, list) or not all(v in base.variants for v in variants):
            raise ScenarioError(f"{show_value(variants)} names unknown variants", key="sweep.variants", where=where,
                                allowed=f"a list of: {', '.join(base.variants)}; or a mapping of names to overrides")
        variants = tuple(variants)
    plot_x = doc.get("plot", next(iter(params)))
    if plot_x not in params:
        raise ScenarioError(f"{show_value(plot_x)} is not a swept key", key="sweep.plot", where=where,
                            allowed="one of: " + ", ".join(params))
    name = doc.get("name", path.stem)
    if not is_file_name(name):  # it names the results directory, results/sweeps/<name>
        raise ScenarioError(f"{show_value(name)} is not a sweep name", key="sweep.name", allowed=NAME_ALLOWED,
                            where=where)
    sweep = Sweep(name=name, scenario=scenario, params=dict(params), seeds=seeds, variants=variants,
                  plot_x=plot_x, source=path)
    n_runs = len(sweep.points()) * len(seeds)
    if n_runs > MAX_POINTS:
        raise ScenarioError(f"{n_runs:,} runs (points x seeds)", key="sweep.sweep", where=where,
                            allowed=f"at most {MAX_POINTS:,}")
    seedless = set()
    for i, point in enumerate(sweep.points()):
        try:
            loaded = load_scenario(scenario, overrides=point)
        except ScenarioError as exc:
            raise ScenarioError(f"{exc.message} in sweep point {_point_text(point)} of {where}") from None
        if not any(draws_at_random(loaded.variants[name]) for name in loaded.selected(variants)):
            seedless.add(i)
    return dataclasses.replace(sweep, seedless=frozenset(seedless))


def _point_text(point: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items())


def _task_key(sweep: Sweep, point: dict, seed: int | None) -> str:
    """Stable name of one (point, seed) run: changes with the scenario, the point, the seed
    (None for a point that draws nothing at random) and the version."""
    text = json.dumps({"scenario": sweep.scenario, "point": point, "seed": seed,
                       "variants": sweep.variants, "version": installed_version()},
                      sort_keys=True, default=str)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def run_point(scenario: dict, point: dict, seed: int, variants) -> dict:
    """Run every variant of one (point, seed); never raises.

    Returns ``{"rows": [...]}`` (one dict of metrics per variant) or
    ``{"error": "one line"}``. Runs in a worker process or on a Dask worker.
    """
    try:
        loaded = load_scenario(scenario, overrides=point, seed=seed)
        result = run_scenario(loaded, variants=list(variants) if variants else None, progress=False)
        summary = result.summary()
        return {"rows": [{"variant": name, **flatten_metrics(v)} for name, v in summary["variants"].items()]}
    except Exception as exc:  # reported by the caller; the other points go on
        return {"error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}


def run_sweep(sweep: Sweep, *, out=None, workers: int | None = None, scheduler: str | None = None,
              progress: bool | None = None, log=None) -> tuple[pd.DataFrame, list[str]]:
    """Run the points of `sweep` not already done under `out`, and gather the table.

    Parameters
    ----------
    sweep : Sweep
    out : path-like, optional
        Results directory; finished runs are kept in ``out/points/`` and
        skipped next time. None: nothing is stored.
    workers : int, optional
        Size of the local process pool (default: the number of CPUs; 1 runs
        in this process). Ignored with `scheduler`.
    scheduler : str, optional
        Address of a Dask scheduler (``tcp://host:8786``) to run the points on.
    progress : bool, optional
        One progress bar for the whole sweep (default: when stderr is a terminal).
    log : callable, optional
        Called with a line for each failed run (default: print to stderr).

    Returns
    -------
    (pandas.DataFrame, list of str)
        The table (one row per point, variant and seed, in point, seed and
        variant order) and the failures, one line each.
    """
    log = log or (lambda line: print(line, file=sys.stderr))
    store = Path(out) / "points" if out is not None else None
    if store is not None:
        store.mkdir(parents=True, exist_ok=True)
    tasks, frames = [], {}
    for i, point in enumerate(sweep.points()):
        seedless = i in sweep.seedless
        for seed in sweep.seeds[:1] if seedless else sweep.seeds:
            key = _task_key(sweep, point, None if seedless else seed)
            done = _stored(store / f"{key}.parquet") if store is not None else None
            if done is not None:
                _keep_frame(sweep, frames, i, seed, done)
            else:
                tasks.append((i, point, seed, key))
    failures = []

    def finish(task, outcome):
        i, point, seed, key = task
        if "error" in outcome:
            seeds = "every seed" if i in sweep.seedless else f"seed {seed}"
            line = f"rcusim: sweep point {i} ({_point_text(point)}, {seeds}) failed: {outcome['error']}"
            failures.append(line)
            log(line)
            return
        frame = _rows_frame(sweep, i, point, seed, outcome["rows"])
        _keep_frame(sweep, frames, i, seed, frame)
        if store is not None:
            with writing(out), atomic_file(store / f"{key}.parquet") as tmp:
                frame.to_parquet(tmp, index=False)

    if progress is None:
        progress = sys.stderr.isatty()
    from tqdm import tqdm

    with tqdm(total=len(tasks), desc=sweep.name, unit="run", file=sys.stderr, disable=not progress) as bar:
        for task, outcome in _execute(sweep, tasks, workers, scheduler):
            finish(task, outcome)
            bar.update(1)
    table = pd.concat([frames[k] for k in sorted(frames)], ignore_index=True) if frames else pd.DataFrame()
    return table, failures


def _execute(sweep: Sweep, tasks: list, workers: int | None, scheduler: str | None):
    """Yield (task, outcome) as runs finish, on Dask, a process pool or in this process."""
    args = [(sweep.scenario, point, seed, sweep.variants) for _, point, seed, _ in tasks]
    for k, outcome in run_parallel(run_point, args, workers, scheduler):
        yield tasks[k], outcome


def run_parallel(fn, args: list[tuple], workers: int | None, scheduler: str | None):
    """Yield (k, fn(*args[k])) as calls finish: on the Dask scheduler at `scheduler`, on
    a local pool of `workers` processes (default: the CPUs), or in this process."""
    if not args:
        return
    if scheduler:
        from distributed import Client, as_completed

        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise ScenarioError(f"cannot connect to {scheduler!r}: {exc}", key="--scheduler",
                                allowed="the address of a running dask scheduler, e.g. tcp://host:8786") from None
        with client:
            futures = [client.submit(fn, *a, pure=False) for a in args]
            index = {f.key: k for k, f in enumerate(futures)}
            for fut in as_completed(futures):
                yield index[fut.key], fut.result()
        return
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(args) == 1:
        for k, a in enumerate(args):
            yield k, fn(*a)
        return
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    # A process pool that notices a worker dying (a crash in the engine) instead of
    # waiting forever for its result. Its workers are spawned (in submit()) with the
    # interruptions blocked, so that none stops this process while one is half started
    # (which would die on its own with a traceback); they arrive when all are running.
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTIONS)
    pool = ProcessPoolExecutor(min(workers, len(args)), mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_signals)
    try:
        pending = {pool.submit(fn, *a): k for k, a in enumerate(args)}
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                k = pending.pop(fut)
                try:
                    result = fut.result()
                except BrokenProcessPool:
                    raise WorkerDied(sorted([k, *pending.values()])) from None
                yield k, result
    except BaseException:
        # An interruption (Ctrl-C, SIGTERM) stops the runs in progress at once:
        # what finished is kept by the caller.
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        if hasattr(pool, "terminate_workers"):  # Python >= 3.14
            pool.terminate_workers()
        else:
            for proc in list(pool._processes.values()):
                proc.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()


def _worker_signals() -> None:
    """A worker leaves Ctrl-C to the sweep, which stops it (SIGTERM), and takes the
    interruptions its start held back."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTIONS)


class WorkerDied(RuntimeError):
    """A worker process died before returning; `unfinished` are the indices of the
    calls without a result, one of which killed it."""

    def __init__(self, unfinished: list[int]):
        super().__init__(f"a worker process died (a crash in the engine) during one of {len(unfinished)} runs")
        self.unfinished = unfinished




def _stored(path: Path) -> pd.DataFrame | None:
    """The rows of a finished run kept at `path`, or None: none kept, or a file that cannot be
    read (the run is made again and the file replaced)."""
    if not path.is_file():
        return None
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError):  # pyarrow's ArrowInvalid is a ValueError
        return None


def _rows_frame(sweep: Sweep, i: int, point: dict, seed: int, rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    lead = {"point": np.full(len(frame), i, dtype=np.int64)}
    for key, value in point.items():
        lead[key] = [value] * len(frame)
    lead["seed"] = _seed_column(len(frame), seed)
    return pd.concat([pd.DataFrame(lead), frame], axis=1)


def _seed_column(n: int, seed: int) -> np.ndarray:
    return np.full(n, seed, dtype=np.uint64 if seed >= 2**63 else np.int64)


def _keep_frame(sweep: Sweep, frames: dict, i: int, seed: int, frame: pd.DataFrame) -> None:
    """Keep the rows of the run of point `i` with `seed`; those of a point that draws nothing
    at random stand for every seed."""
    if i not in sweep.seedless:
        frames[(i, seed)] = frame
        return
    for each in sweep.seeds:
        frames[(i, each)] = frame.assign(seed=_seed_column(len(frame), each))


SUMMARY_METRICS = [("latency_us.mean", "mean (µs)"), ("latency_us.p50", "p50 (µs)"),
                   ("latency_us.p99", "p99 (µs)"), ("batching", "batching")]


def summarize(table: pd.DataFrame, params) -> str:
    """Per point and variant: seeds run and each headline metric's mean ± 95 % CI half-width."""
    if table.empty:
        return "no results"
    keys = ["point", *params, "variant"]
    header = [*params, "variant", "seeds"] + [label for _, label in SUMMARY_METRICS]
    body = []
    for key, g in table.groupby(keys, sort=False):
        cells = [str(k) for k in key[1:]] + [str(len(g))]
        for col, _ in SUMMARY_METRICS:
            if col not in g:
                cells.append("-")
                continue
            m, h = mean_ci(g[col].to_numpy(dtype=float))
            cells.append("-" if math.isnan(m) else (f"{m:.1f}" if math.isnan(h) else f"{m:.1f} ± {h:.1f}"))
        body.append(cells)
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(header, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in body]
    return "\n".join(lines)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "sweep", help="run a scenario over a grid of parameters and seeds",
        description="Run a scenario over a grid of parameters and seeds. Each finished (point, seed) is kept "
                    "in OUT/points/ and reused by a re-run; OUT/sweep.parquet and OUT/percentiles.png appear "
                    f"together at the end. A point whose variants draw nothing at random (no {RANDOM_DRAWS}) "
                    "gives the same run for every seed: it runs once and its rows stand for every seed.")
    p.add_argument("file", help="sweep YAML file")
    p.add_argument("--out", help="results directory (default: results/sweeps/<name>)")
    p.add_argument("--workers", type=int, help="local worker processes (default: the number of CPUs)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run on this Dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_sweep)


def cmd_sweep(args) -> int:
    if args.workers is not None and not 1 <= args.workers <= 4096:
        raise ScenarioError(f"{args.workers} workers", key="--workers", allowed="an integer from 1 to 4096")
    sweep = load_sweep(args.file)
    out = Path(args.out) if args.out else Path("results") / "sweeps" / sweep.name
    n = len(sweep.points())
    # Held for the whole sweep; an earlier sweep's directory is carried on (its finished points reused).
    with claim(out, force=True, inside=("points",)):
        print(f"sweep {sweep.name}: {n} points x {len(sweep.seeds)} seeds, "
              f"on {'dask ' + args.scheduler if args.scheduler else 'a local pool'}")
        if sweep.seedless and len(sweep.seeds) > 1:
            print(f"rcusim: note: {len(sweep.seedless)} of {n} points draw nothing at random (no {RANDOM_DRAWS}): "
                  f"each runs once, its rows standing for all {len(sweep.seeds)} seeds", file=sys.stderr)
        table, failures = run_sweep(sweep, out=out, workers=args.workers, scheduler=args.scheduler,
                                    progress=False if args.no_progress else None)
        params = list(sweep.params)
        print(summarize(table, params))
        if not table.empty:
            with writing(out), atomic_directory(out, merge=True) as tmp:
                table.to_parquet(tmp / "sweep.parquet", index=False)
                save_percentiles(table, sweep.plot_x, tmp / "percentiles.png", params=params,
                                 title=f"{sweep.name}: latency percentiles over {len(sweep.seeds)} seed(s)")
            print(f"\ntable written to {out / 'sweep.parquet'}, plot to {out / 'percentiles.png'}")
    if failures:
        print(f"{len(failures)} run(s) failed; re-run the sweep to retry them", file=sys.stderr)
        return 1
    return 0
