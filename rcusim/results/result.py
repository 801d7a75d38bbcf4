"""What a simulation run returns: per-variant tables, metrics and files.

A scenario runs one or more *variants* (for example the default kernel and
the same kernel with ``rcutree.rcu_normal_wake_from_gp=1``) from the same
seed. Each variant yields a :class:`VariantResult`: one row per completed
``synchronize_rcu*()`` request, one row per completed grace period, the
engine's raw counters and the run's cost. A :class:`Result` gathers the
variants of one scenario and turns them into

* DataFrames for notebooks (:attr:`Result.latencies`,
  :attr:`Result.grace_periods`),
* a summary dict (:meth:`Result.summary`) that is identical, byte for byte
  once dumped as JSON, for every run of the same scenario and seed: the
  wall-clock figures, which are not, live in their own ``wall_clock`` block,
* a side-by-side text table (:meth:`Result.table`) and a text report with
  latency histograms in bcc ``funclatency -u`` form
  (:meth:`Result.report_text`),
* a results directory written atomically (:meth:`Result.write`).

The tables' columns and builders are in :mod:`rcusim.results.frames`, the figures in
:mod:`rcusim.results.metrics`, the text layout in :mod:`rcusim.results.text` and what
produced a result in :mod:`rcusim.results.provenance`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from rcusim.engine.rcuscale import rcuscale_line
from rcusim.results.atomic import atomic_directory
from rcusim.results.digest import FINE_RELATIVE_ERROR, digest_of
from rcusim.results.frames import (GP_COLUMNS, LAST_QS_NAMES, PRIMITIVE_NAMES, REQUEST_COLUMNS,
                                   check_columns, latency_ns, stack, stack_runs)
from rcusim.results.histogram import format_log2_counts
from rcusim.results.metrics import (GP_LENGTH_PERCENTILES, HALT_ENDS, LATENCY_PERCENTILES, MIGRATION_KINDS,
                                    RATIO_DECIMALS, RQ_LENGTH_PERCENTILES, S_DECIMALS, WALL_DECIMALS,
                                    digest_stats_us, latency_stats_and_cdf_us, mean_tree, normal_gp_stats, numeric_leaves,
                                    round_or_none, to_builtin)
from rcusim.results.provenance import source_revision
from rcusim.results.rows import RequestRows
from rcusim.results.text import LABEL_WIDTH, LINE_WIDTH, fmt, items, metric_lines, text_table


@dataclass(eq=False)
class VariantResult:
    """Outcome of one variant of a scenario.

    ``eq=False`` because DataFrames have no single truth value; compare the
    frames themselves instead.
    """

    name: str
    """Variant name, as written in the scenario."""

    rows: RequestRows
    """One row per completed request (or per kept one, see :attr:`records`): columns
    :data:`~rcusim.results.frames.REQUEST_COLUMNS` (``task`` int32, ``cpu`` int32, ``primitive`` int8,
    times int64 ns), in memory or in the file the run streamed them into
    (:mod:`rcusim.results.rows`); :attr:`requests` is them as one frame."""

    gps: pd.DataFrame
    """One row per completed grace period: columns :data:`~rcusim.results.frames.GP_COLUMNS`."""

    counters: dict = field(default_factory=dict)
    """Raw engine counters (events, ipis_sent, callbacks_invoked, ...),
    passed through unchanged."""

    events: int = 0
    """Number of events the engine processed."""

    wall_time_s: float = 0.0
    """Host wall-clock time the run took; differs from run to run."""

    cpu_time_s: float = 0.0
    """Host CPU time the engine's thread took, less its writing of rows out: ``wall_time_s``
    less what the host gave to other work (``bench --scaling`` fits its exponents to it)."""

    build_time_s: float = 0.0
    """Host wall-clock time building the engine took; differs from run to run."""

    mean_pending: float = 0.0
    """Mean number of events queued when the engine took one (for ``bench``)."""

    sim_time_ns: int = 0
    """Simulated time at the end of the run."""

    completion_time_ns: int = 0
    """Simulated time at which the last task finished its work."""

    extra_metrics: dict = field(default_factory=dict)
    """Mechanism-specific metrics, added to :attr:`metrics` under their own keys."""

    tables: dict = field(default_factory=dict)
    """Mechanism-specific tables by name (``membarrier``: one row per run;
    ``kvfree_memory``: bytes allocated by kvfree_rcu() floods and not yet freed,
    ``t_ns`` and ``bytes``; ``sched_latency``: an rt_latency_probe's scheduling
    latency, wake-up to running, one ``latency_ns`` row per sample),
    each written to ``<name>.parquet`` with the other variants' rows."""

    records: str = "all"
    """Which requests have a row in :attr:`requests` (``run.records``): ``all``, a
    ``sample`` of them or ``none``."""

    latency_digest: dict | None = None
    """Every request's latency digest by primitive code (see :mod:`rcusim.results.digest`);
    None to compute it from :attr:`requests`, which then must hold every request."""

    table_metrics: tuple = ()
    """Keys of :attr:`extra_metrics` that :meth:`Result.table` shows, nested
    values as dotted rows (``membarrier_s.7``)."""

    rcu: bool = True
    """The variant ran the RCU engine; False for a model without grace periods
    (sys_membarrier()), whose metrics are its :attr:`extra_metrics` alone."""

    runs: int = 1
    """Independent runs pooled into this variant (a real kernel's boots): the rows and the
    latency figures are the pooled samples', the GP counts and the completion time a run's mean."""

    trace: dict | None = None
    """Engine trace of a traced run (``records``: structured array of
    ``rcusim._core.TRACE_DTYPE``; ``entities``: kind, CPU and index of each
    entity), or None; see :mod:`rcusim.results.trace`."""

    def __post_init__(self):
        check_columns(self.rows, REQUEST_COLUMNS, f"variant {self.name!r}: requests")
        check_columns(self.gps, GP_COLUMNS, f"variant {self.name!r}: gps")
        if self.records != "all" and self.latency_digest is None:
            raise ValueError(f"variant {self.name!r}: records {self.records!r} needs a latency digest")

    def __setattr__(self, name, value):
        # metrics and digest are computed once; replacing a field computes them anew.
        super().__setattr__(name, value)
        self.__dict__.pop("metrics", None)
        self.__dict__.pop("digest", None)

    @property
    def requests(self) -> pd.DataFrame:
        """:attr:`rows` as one frame (rows a run streamed into a file are read into memory
        at each access)."""
        return self.rows.frame()

    @cached_property
    def digest(self) -> dict:
        """Every request's latency digest by primitive code: :attr:`latency_digest`, or
        computed once from :attr:`requests`."""
        if self.latency_digest is not None:
            return self.latency_digest
        frame = self.requests  # rows in a file are read anew at each access: once here
        return digest_of(frame["primitive"].to_numpy(), latency_ns(frame))

    @property
    def request_count(self) -> int:
        """Completed requests, whether or not :attr:`requests` keeps their rows."""
        return sum(d["count"] for d in self.digest.values())

    @property
    def events_per_s(self) -> float | None:
        """Engine speed: events per second of wall-clock time (None if no time was measured)."""
        if not self.wall_time_s > 0:
            return None
        return self.events / self.wall_time_s

    @property
    def batching(self) -> float | None:
        """Requests served per grace period.

        The number of requests divided by the number of completed grace
        periods of the kind those requests wait for: normal grace periods
        for ``synchronize_rcu()`` requests, expedited ones for
        ``synchronize_rcu_expedited()`` requests (both kinds counted when
        both primitives were called). A value of 1 means every request had a
        grace period of its own; a value of 100 means each grace period
        released 100 waiters on average. None when there are no requests or
        no such grace periods.

        A kernel booted with ``rcupdate.rcu_normal=1`` (or
        ``rcu_expedited=1``) serves one primitive with the other kind of
        grace period; this ratio keys on the primitive called, not on the
        kind that served it.
        """
        if self.request_count == 0:
            return None
        expedited = self.gps["expedited"].to_numpy(dtype=bool)
        n_gps = 0
        if 0 in self.digest:
            n_gps += int(np.count_nonzero(~expedited))
        if 1 in self.digest:
            n_gps += int(np.count_nonzero(expedited))
        if n_gps == 0:
            return None
        return self.request_count / n_gps

    def _per_run(self, count) -> int | float:
        """A count of the pooled rows as one run's: itself for a single run, else the mean."""
        return int(count) if self.runs == 1 else round(int(count) / self.runs, RATIO_DECIMALS)

    @cached_property
    def latency_cdf(self) -> tuple[dict, np.ndarray, np.ndarray]:
        """From one read of every row (records ``all``): the latency statistics
        (``metrics["latency_us"]``) and the CDF's order statistics, ``(stats, ranks, µs at
        those ranks)`` (:func:`~rcusim.results.metrics.latency_stats_and_cdf_us`)."""
        return latency_stats_and_cdf_us(self.rows.latency_ns())

    @cached_property
    def metrics(self) -> dict:
        """Headline numbers of this variant, ready for JSON, computed once.

        Returns
        -------
        dict
            ``completion_time_s`` (float), ``latency_us`` (see
            :func:`~rcusim.results.metrics.latency_stats_and_cdf_us`), ``grace_periods`` (completed normal
            grace periods), ``expedited_grace_periods``, ``batching`` (see
            :attr:`batching`), then the entries of :attr:`extra_metrics`.

        Raises
        ------
        ValueError
            If an extra metric reuses the name of a built-in one.
        """
        if not self.rcu:
            return to_builtin(dict(self.extra_metrics))
        expedited = self.gps["expedited"].to_numpy(dtype=bool)
        finished = self.extra_metrics.get("finished", True)
        metrics = {
            # An incomplete run (stopped by run.max_sim_time_s) has no completion time.
            "completion_time_s": round_or_none(self.completion_time_ns / 1e9, S_DECIMALS) if finished else None,
            "latency_us": self.latency_cdf[0] if self.records == "all" else digest_stats_us(self.digest),
            "grace_periods": self._per_run(np.count_nonzero(~expedited)),
            "expedited_grace_periods": self._per_run(np.count_nonzero(expedited)),
            "batching": round_or_none(self.batching, RATIO_DECIMALS),
        }
        gp = normal_gp_stats(self.gps)
        if gp is not None:
            metrics["normal_gp"] = gp
        # Refuse to let an extra metric silently replace a built-in one: a
        # reader of summary.json must be able to trust what each key means.
        clash = sorted(set(metrics) & set(self.extra_metrics))
        if clash:
            raise ValueError(f"variant {self.name!r}: extra_metrics reuse built-in name(s) {', '.join(clash)}")
        metrics.update(to_builtin(dict(self.extra_metrics)))
        return metrics



def _run_of(frame: pd.DataFrame) -> np.ndarray:
    """Each row's run: its ``boot`` column in pooled runs (pool_runs()), 0 in a single run."""
    return frame["boot"].to_numpy() if "boot" in frame.columns else np.zeros(len(frame), dtype=np.int16)


def calls_spans(v: VariantResult) -> list[tuple[int, int]]:
    """Each run's calls' span, (first call's start, last return) in ns, in run order; none
    without calls."""
    req = v.requests
    if not len(req):
        return []
    run, start, end = _run_of(req), req["t_start_ns"].to_numpy(), req["t_end_ns"].to_numpy()
    return [(int(start[run == b].min()), int(end[run == b].max())) for b in np.unique(run)]


def within_calls(v: VariantResult) -> VariantResult:
    """The variant with each run's GPs that start within its calls' span only, as the real
    kernel's boots keep theirs (rcusim.twin.collect): what runs before the calls (the twin's
    load helper creating its threads) is not the workload's."""
    spans = calls_spans(v)
    if not spans:
        return v
    gps = v.gps
    run, start = _run_of(gps), gps["t_start_ns"].to_numpy()
    keep = np.zeros(len(gps), dtype=bool)
    for b, (t0, t1) in enumerate(spans):
        keep |= (run == b) & (start >= t0) & (start <= t1)
    return replace(v, gps=gps[keep].reset_index(drop=True))


#: The rcuscale kfree figures that pooled runs (a kernel's boots, a simulation's seeds) keep
#: one per run, in ``per_boot``: what ``compare --figures`` draws again for their spread.
PER_BOOT_METRICS = ("total_time_ns", "batches", "memory_footprint_mb")


def pool_runs(runs: list[VariantResult]) -> VariantResult:
    """Independent runs of one variant (a simulation's seeds) pooled as a real kernel's boots
    are: the rows and GPs stacked with the run's number in ``boot``, the GP counts and the
    completion time a run's mean (:attr:`VariantResult.runs`), the mechanism metrics their
    mean over the runs (rcuscale's kfree figures also run by run, in ``per_boot``, as a
    kernel's boots keep them), the counters, events and times their sums; the tables and the
    trace are the first run's."""
    if len(runs) == 1:
        return runs[0]
    if any(r.records != "all" for r in runs):
        raise ValueError("pooling runs needs every request's row (run.records: all)")
    first = runs[0]
    extra = mean_tree([r.extra_metrics for r in runs])
    per_boot = {key: [r.extra_metrics.get(key) for r in runs] for key in PER_BOOT_METRICS if key in first.extra_metrics}
    if per_boot:
        extra["per_boot"] = per_boot
    return VariantResult(
        name=first.name,
        rows=RequestRows(stack_runs([r.requests for r in runs])), gps=stack_runs([r.gps for r in runs]),
        counters={key: sum(r.counters.get(key, 0) for r in runs) for key in first.counters},
        events=sum(r.events for r in runs), wall_time_s=sum(r.wall_time_s for r in runs),
        cpu_time_s=sum(r.cpu_time_s for r in runs), build_time_s=sum(r.build_time_s for r in runs),
        mean_pending=float(np.mean([r.mean_pending for r in runs])),
        sim_time_ns=sum(r.sim_time_ns for r in runs),
        completion_time_ns=int(round(float(np.mean([r.completion_time_ns for r in runs])))),
        extra_metrics=extra,
        tables=first.tables, trace=first.trace, table_metrics=first.table_metrics, rcu=first.rcu,
        runs=len(runs))



@dataclass(eq=False)
class Result:
    """All variants of one scenario run with one seed."""

    scenario_name: str
    """Name of the scenario."""

    seed: int
    """Seed every variant was run with."""

    rcusim_version: str
    """Version of rcusim that produced the result (see :func:`~rcusim.results.provenance.installed_version`)."""

    variants: dict[str, VariantResult]
    """Variant results by name, in scenario order; the first is the baseline
    of :meth:`table`'s ratio columns."""

    provenance: dict = field(default_factory=dict)
    """How the result was made: ``scenario``, the input mapping with overrides applied
    (enough to run it again), and ``variants``, each variant's resolved configuration."""

    invocation: dict = field(default_factory=lambda: {"command": None, "source_revision": source_revision()})
    """The command line that made the result (None from Python) and rcusim's source
    revision when it runs from a git checkout; like ``wall_clock``, it may differ
    between runs that give identical results."""

    @property
    def latencies(self) -> pd.DataFrame:
        """All requests of all variants, with a categorical ``variant`` column first and
        each one's ``latency_ns`` (``t_end_ns - t_start_ns``) last."""
        frame = stack({n: v.requests for n, v in self.variants.items()}, "requests")
        return frame.assign(latency_ns=latency_ns(frame)) if len(frame.columns) > 1 else frame

    @property
    def grace_periods(self) -> pd.DataFrame:
        """All grace periods of all variants, with a categorical ``variant`` column first."""
        return stack({n: v.gps for n, v in self.variants.items()}, "gps")

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The variants' mechanism-specific tables, stacked by name under a ``variant`` column."""
        names = dict.fromkeys(t for v in self.variants.values() for t in v.tables)
        return {t: stack({n: v.tables[t] for n, v in self.variants.items() if t in v.tables}, t)
                for t in names}

    def summary(self) -> dict:
        """Metrics of every variant, as a JSON-ready dict.

        Returns
        -------
        dict
            ``{"scenario", "seed", "rcusim_version", "variants": {name:
            {"metrics", "events", "sim_time_ns"}}, "provenance": {"scenario",
            "variants"}, "invocation": {"command", "source_revision"},
            "wall_clock": {name: {"wall_time_s", "events_per_s"}}}``.
            Everything outside ``invocation`` and ``wall_clock`` depends only
            on the scenario, the seed and the rcusim version, so two runs dump
            it to identical JSON; ``provenance.scenario`` with ``seed`` runs
            it again (``python -m rcusim run --from summary.json``).
        """
        variants = {}
        wall_clock = {}
        for name, v in self.variants.items():
            variants[name] = {
                "metrics": v.metrics,
                "events": int(v.events),
                "sim_time_ns": int(v.sim_time_ns),
            }
            wall_clock[name] = {
                "wall_time_s": round_or_none(v.wall_time_s, WALL_DECIMALS),
                "events_per_s": round_or_none(v.events_per_s, 1),
            }
        return to_builtin(
            {
                "scenario": self.scenario_name,
                "seed": self.seed,
                "rcusim_version": self.rcusim_version,
                "variants": variants,
                "provenance": self.provenance,
                "invocation": self.invocation,
                "wall_clock": wall_clock,
            }
        )

    def table(self) -> str:
        """Side-by-side plain-text table of the variants.

        One column per variant and, with two or more variants, one ratio
        column per further variant (``other/first``: its value divided by
        the first variant's). A table wider than :data:`~rcusim.results.text.LINE_WIDTH` is cut
        into blocks of variants, one under the other, each with the metric
        names, the first variant and as many further variants with their
        ratios as fit.

        Returns
        -------
        str
            The table, without a trailing newline.
        """
        names = list(self.variants)
        rows = []
        if any(v.rcu for v in self.variants.values()):
            rows.append(("completion time (s)", lambda v, m: m.get("completion_time_s")))
        if any(v.rcu and v.request_count for v in self.variants.values()):
            rows.append(("latency count", lambda v, m: m.get("latency_us", {}).get("count")))
            for key in ["min", "mean"] + [f"p{q}" for q in LATENCY_PERCENTILES] + ["max"]:
                rows.append((f"latency {key} (µs)", lambda v, m, key=key: m.get("latency_us", {}).get(key)))
        if any(v.rcu for v in self.variants.values()):
            rows += [
                ("grace periods", lambda v, m: m.get("grace_periods")),
                ("expedited grace periods", lambda v, m: m.get("expedited_grace_periods")),
                ("batching (requests/GP)", lambda v, m: m.get("batching")),
            ]
        metrics = {n: self.variants[n].metrics for n in names}
        if any("normal_gp" in m for m in metrics.values()):
            for key in [f"p{q}" for q in GP_LENGTH_PERCENTILES] + ["max"]:
                rows.append((f"GP length {key} (µs)",
                             lambda v, m, key=key: m.get("normal_gp", {}).get("length_us", {}).get(key)))
            for key in ("mean", "p99"):
                rows.append((f"FQS scans/GP {key}",
                             lambda v, m, key=key: m.get("normal_gp", {}).get("fqs_scans", {}).get(key)))
            for name in LAST_QS_NAMES.values():
                rows.append((f"last QS: {name.replace('_', ' ')}",
                             lambda v, m, name=name: m.get("normal_gp", {}).get("last_qs", {}).get(name)))
        flat = {id(v): numeric_leaves(metrics[n]) for n, v in self.variants.items()}
        leaves = {}
        for n, v in self.variants.items():
            shown = {k: metrics[n][k] for k in v.table_metrics if k in metrics[n]}
            leaves.update(dict.fromkeys(numeric_leaves(shown)))
        rows += [(key, lambda v, m, key=key: flat[id(v)].get(key)) for key in leaves]
        if any("sched" in m for m in metrics.values()):
            for key in ("min", "median", "max"):
                rows.append((f"CPU utilisation {key}",
                             lambda v, m, key=key: m.get("sched", {}).get("utilisation", {}).get(key)))
            for key in [f"p{q}" for q in RQ_LENGTH_PERCENTILES]:
                rows.append((f"run-queue length {key}",
                             lambda v, m, key=key: m.get("sched", {}).get("rq_length", {}).get(key)))
            for key in ("local", "remote_enqueue", "polling", "ipi"):
                rows.append((f"wake-ups: {key.replace('_', ' ')}",
                             lambda v, m, key=key: m.get("sched", {}).get("wakeups", {}).get(key)))
            rows.append(("wakers' rq-lock spin (ms)", lambda v, m: m.get("sched", {}).get("rq_lock_wait_ms")))
            for key in MIGRATION_KINDS:
                rows.append((f"migrations: {key}",
                             lambda v, m, key=key: m.get("sched", {}).get("migrations", {}).get(key)))
        if any("kvm_halts" in m.get("sched", {}) for m in metrics.values()):
            for key in HALT_ENDS:
                rows.append((f"vCPU halts: {key}",
                             lambda v, m, key=key: m.get("sched", {}).get("kvm_halts", {}).get(key)))
        if any("call_rcu_latency_us" in v.extra_metrics for v in self.variants.values()):
            for key in ("queued", "invoked", "pending"):
                rows.append((f"call_rcu() callbacks {key}",
                             lambda v, m, key=key: m.get("call_rcu_latency_us", {}).get(key)))
            for key in ("mean", "p50", "p99", "max"):
                rows.append((f"call_rcu() to invocation {key} (µs)",
                             lambda v, m, key=key: m.get("call_rcu_latency_us", {}).get(key)))
        if any("sched_latency_us" in v.extra_metrics for v in self.variants.values()):
            for key in ("mean", "p99", "max"):
                rows.append((f"sched latency {key} (µs)",
                             lambda v, m, key=key: m.get("sched_latency_us", {}).get(key)))
        rows += [
            ("events", lambda v, m: int(v.events)),
            ("wall time (s)", lambda v, m: v.wall_time_s),
            ("events/s", lambda v, m: None if v.events_per_s is None else round(v.events_per_s)),
        ]
        header = ["metric"] + names + [f"{n}/{names[0]}" for n in names[1:]]
        body = []
        for label, get in rows:
            values = [get(self.variants[n], metrics[n]) for n in names]
            cells = [label] + [fmt(x) for x in values]
            base = values[0] if values else None
            for x in values[1:]:
                ratio = None if (base in (None, 0) or x is None) else x / base
                cells.append(fmt(ratio))
            body.append(cells)
        # Each further variant goes with its ratio; the metric and the first variant are in every block.
        groups = [[1 + i, len(names) + i] for i in range(1, len(names))]
        return text_table(header, body, groups, width=LINE_WIDTH)

    def report_text(self) -> str:
        """Text report: per variant, funclatency-style histograms and metrics.

        Each variant gets a header, then for each primitive it called a
        ``Function = ...`` section with the latency histogram in bcc's log2
        layout, in whole microseconds as ``funclatency -u`` records them
        (``latency_ns // 1000``), followed by funclatency's closing
        ``avg = ... usecs, total: ... usecs, count: ...`` line, and finally
        the variant's metrics.

        Returns
        -------
        str
            The report, ending with a newline.
        """
        out = [f"scenario {self.scenario_name}, seed {self.seed}, rcusim {self.rcusim_version}"]
        for name, v in self.variants.items():
            m = v.metrics
            out += ["", f"==> variant {name}"]
            if not v.rcu:
                out += [""] + [f"{key + ':':<{LABEL_WIDTH}}{value}" for key, value in numeric_leaves(m).items()]
                out.append(f"{'events:':<{LABEL_WIDTH}}{int(v.events)}")
                continue
            if not v.digest:
                out += ["", "no completed requests"]
            for code, d in sorted(v.digest.items()):
                out += ["", f"Function = {PRIMITIVE_NAMES.get(code, f'primitive {code}')}"]
                # funclatency -u divides each duration by 1000 in integer
                # arithmetic before bucketing, and sums the raw nanoseconds.
                out.append(format_log2_counts(d["log2_us"], "usecs"))
                total_ns, count = d["sum_ns"], d["count"]
                out += [
                    "",
                    f"avg = {total_ns // (1000 * count)} usecs, total: {total_ns // 1000} usecs, count: {count}",
                ]
            lat = m["latency_us"]
            out += [
                "",
                f"completion time:          {fmt(m['completion_time_s'])} s",
                f"requests:                 {lat['count']}",
                *metric_lines("latency (µs):",
                               [f"{k} {fmt(lat[k])}" for k in ["min", "mean", "p50", "p90", "p99", "max"]]
                               + ([] if v.records == "all" else
                                  [f"(records: {v.records}; percentiles within {FINE_RELATIVE_ERROR:.2%})"])),
                f"grace periods:            {m['grace_periods']} normal, {m['expedited_grace_periods']} expedited",
                f"batching (requests/GP):   {fmt(m['batching'])}",
            ]
            gp = m.get("normal_gp")
            if gp is not None:
                out += [
                    *metric_lines("normal GP length (µs):", [f"{k} {fmt(x)}" for k, x in gp["length_us"].items()]),
                    f"FQS scans per GP:         mean {fmt(gp['fqs_scans']['mean'])}  p99 {fmt(gp['fqs_scans']['p99'])}",
                    *metric_lines("last QS reported by:",
                                   [f"{k.replace('_', ' ')} {x}" for k, x in gp["last_qs"].items()]),
                ]
            out += [
                f"events:                   {int(v.events)}",
            ]
            for key in v.extra_metrics:
                out += metric_lines(key + ":", items(m[key]) if isinstance(m[key], dict) else [str(m[key])])
            if m.get("total_time_ns") is not None:
                out += ["", rcuscale_line(m)]
        return "\n".join(out) + "\n"

    def _write_parquet(self, path: Path, table: str) -> None:
        """Write one frame per variant into a single Parquet file with a ``variant`` column.

        Each variant's rows are written a batch at a time (the file's batches for rows a run
        streamed into one), so a run with millions of requests per variant does not need
        them in memory.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        names = list(self.variants)
        variant_type = pa.dictionary(pa.int32(), pa.string())
        writer = None
        try:
            for name in names:
                v = self.variants[name]
                for frame in (v.rows.batches() if table == "requests" else [getattr(v, table)]):
                    columns = {c: pa.array(frame[c].to_numpy()) for c in frame.columns}
                    indices = pa.array(np.full(len(frame), names.index(name), dtype=np.int32))
                    variant = pa.DictionaryArray.from_arrays(indices, pa.array(names), )
                    batch = pa.table({"variant": variant.cast(variant_type), **columns})
                    if writer is None:
                        # Times grow from row to row: delta encoding stores each in a few bits,
                        # where a dictionary of millions of distinct values would be tried and
                        # dropped; the few-valued columns (variant, task, CPU, ...) keep theirs.
                        delta = [f.name for f in batch.schema if f.type == pa.int64()]
                        writer = pq.ParquetWriter(path, batch.schema,
                                                  use_dictionary=[c for c in batch.column_names if c not in delta],
                                                  column_encoding=dict.fromkeys(delta, "DELTA_BINARY_PACKED"))
                    writer.write_table(batch)
        finally:
            if writer is not None:
                writer.close()

    def write(self, outdir: str | os.PathLike, *, figures: Callable[["Result", Path], None] | None = None) -> Path:
        """Write the result files into *outdir*, replacing it as a whole.

        Files: ``summary.json``, ``latencies.parquet`` (the requests kept, with a
        ``variant`` column),
        ``gps.parquet``, one Parquet file per table and ``report.txt``, plus what `figures`
        writes (the command line passes :func:`rcusim.plots.save_result_figures`).

        Everything is first written into a temporary directory beside
        *outdir*, which then replaces it (:func:`rcusim.results.atomic.atomic_directory`):
        *outdir* is at any moment either absent, the old complete result or
        the new complete result, never a mixture; on any error, Ctrl-C or
        SIGTERM the temporary directory is removed.

        Parameters
        ----------
        outdir : str or path-like
            Directory to create or replace.
        figures : callable, optional
            ``figures(result, directory)`` writes the figures into the new directory.

        Returns
        -------
        pathlib.Path
            *outdir*.

        Raises
        ------
        FileExistsError
            If *outdir* exists and is not a directory.
        """
        outdir = Path(outdir)
        if outdir.exists() and not outdir.is_dir():
            raise FileExistsError(f"{outdir} exists and is not a directory")
        with atomic_directory(outdir) as tmp:
            summary = self.summary()
            (tmp / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=False) + "\n", encoding="utf-8")
            if any(v.rcu for v in self.variants.values()):
                self._write_parquet(tmp / "latencies.parquet", "requests")
                self._write_parquet(tmp / "gps.parquet", "gps")
            for table, frame in self.tables.items():
                frame.to_parquet(tmp / f"{table}.parquet", index=False)
            if figures is not None:
                figures(self, tmp)
            (tmp / "report.txt").write_text(self.report_text(), encoding="utf-8")
        return outdir
