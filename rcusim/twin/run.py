"""Run a scenario in the real kernel: each variant booted `boots` times, the boots' records
pooled into one :class:`~rcusim.results.result.VariantResult` per variant.

The scenario is first aligned with the image (:func:`rcusim.twin.plan.image_overrides`):
the Kconfig options it leaves unset take the image's values, so the result's provenance
holds the scenario that both sides run, and ``run --from real/summary.json`` simulates
exactly the kernel that was booted.
"""

from __future__ import annotations

import gzip
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario
from rcusim.progress import Stages
from rcusim.results.frames import stack_runs
from rcusim.results.ftrace_read import breakdown_us
from rcusim.results.provenance import installed_version
from rcusim.results.result import PER_BOOT_METRICS, Result, VariantResult
from rcusim.results.rows import RequestRows
from rcusim.results.run import KFREE_TABLE_METRICS, resolved_config
from rcusim.twin.collect import BootRecords, collect_boot
from rcusim.twin.image import find_image
from rcusim.twin.initramfs import build_initramfs
from rcusim.twin.plan import TRACE_EVENTS, image_overrides, plan_variant, written_keys
from rcusim.twin.qemu import CLOCKS, BootsExhausted, boot_plan, command_line, find_qemu, qemu_command

__all__ = ["KernelRun", "align_scenario", "run_kernel"]

#: The raw files kept gzip'd (the others are copied as they are).
GZIPPED = ("trace.txt",)

#: Most boots a run may ask for.
MAX_BOOTS = 100


@dataclass
class KernelRun:
    """A real-kernel result and its raw files (copied into ``raw/`` when written)."""

    result: Result | None
    raw: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    scratch: Path | None = None
    """The boots' share folders, removed by :meth:`cleanup`."""

    def cleanup(self) -> None:
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def write_raw(self, directory: Path) -> None:
        """Copy each boot's raw files under ``directory/raw/<variant>/boot-<k>/``."""
        for rel, src in self.raw.items():
            dst = directory / "raw" / rel
            dst.mkdir(parents=True, exist_ok=True)
            for f in sorted(src.iterdir()):
                if f.name in GZIPPED:
                    with open(f, "rb") as fin, gzip.open(dst / (f.name + ".gz"), "wb", compresslevel=6) as fout:
                        shutil.copyfileobj(fin, fout)
                elif f.is_file():
                    shutil.copy(f, dst / f.name)


def align_scenario(source, overrides: Sequence[str], seed, variants, kernel) -> tuple:
    """The scenario with the image's Kconfig filled in, the overrides that did it, and the
    image of each variant."""
    scenario = load_scenario(source, overrides=overrides, seed=seed, variants=variants)
    names = list(scenario.variants)
    extra: list[str] = []
    for name in names:
        spec = scenario.variants[name]
        image = find_image(kernel, spec.kernel.HZ)
        written = written_keys(scenario.asdict(), name, "kernel")
        for o in image_overrides(spec.kernel, image, written, path=("variants", name, "kernel")):
            if o not in extra:
                extra.append(o)
    aligned = load_scenario(source, overrides=list(overrides) + extra, seed=seed, variants=names) if extra else scenario
    images = {}
    for name in names:
        spec = aligned.variants[name]
        images[name] = find_image(kernel, spec.kernel.HZ)
        left = image_overrides(spec.kernel, images[name], set(), path=("variants", name, "kernel"))
        if left:
            raise ScenarioError(f"the variants need different kernels ({', '.join(left)})", key="variants",
                                allowed="variants whose Kconfig one image per HZ has")
    return aligned, extra, images, names


def _pool(name: str, boots: list[BootRecords], wall: list[float]) -> VariantResult:
    requests, gps = stack_runs([b.requests for b in boots]), stack_runs([b.gps for b in boots])
    extra: dict = {"boots": len(boots),
                   "trace": {"events": int(sum(b.stats["entries"] for b in boots)),
                             "overrun": int(sum(b.stats["overrun"] for b in boots))}}
    found = [b.breakdown for b in boots if b.breakdown is not None]
    if found:
        extra["normal_time_us"] = breakdown_us(found)
        extra["breakdown_matched"] = sum(b["matched"] for b in found)
    if any(b.kfree for b in boots):
        for key in ("total_time_ns", "loops", "batches", "memory_footprint_mb"):
            values = [b.kfree[key] for b in boots]
            extra[key] = None if None in values else int(round(float(np.mean(values))))
        extra["per_boot"] = {key: [b.kfree[key] for b in boots] for key in PER_BOOT_METRICS}
    return VariantResult(
        name=name, rows=RequestRows(requests), gps=gps, runs=len(boots),
        events=extra["trace"]["events"], wall_time_s=float(sum(wall)),
        sim_time_ns=int(sum(b.completion_ns for b in boots)),
        completion_time_ns=int(round(float(np.mean([b.completion_ns for b in boots])))),
        extra_metrics=extra,
        table_metrics=("boots",) + (KFREE_TABLE_METRICS[:-1] if any(b.kfree for b in boots) else ()),
    )


def boot_order(names: Sequence[str], boots: int) -> list[tuple[int, str]]:
    """The boots in the order they run: boot by boot, each variant in turn. On the real clock
    the host under the guest has slower and faster stretches of its own (a wake-up in the
    callers' release takes 6 µs in some boots and 11-15 µs in others, whatever the count of
    threads), so each variant's boots are spread over the same stretches rather than one
    variant's taking one of them."""
    return [(k, name) for k in range(boots) for name in names]


def run_kernel(source, overrides: Sequence[str] = (), *, seed: int | None = None,
               variants: Sequence[str] | None = None, kernel=None, clock: str = "real", boots: int = 5,
               any_profile: bool = False, any_host: bool = False, timeout_s: float = 600.0,
               progress: bool | None = None,
               events: Sequence[str] = (), kprobes: Sequence[str] = ()) -> KernelRun:
    """Boot each variant's kernel `boots` times and pool what the boots measured; `events` and
    `kprobes` are traced too (rcusim.twin.plan.plan_variant()), kept in each boot's trace.
    A boot on a busy host is booted again (rcusim.twin.qemu.boot_plan()) unless `any_host`.
    A boot that fails at every attempt for the host's or the emulator's sake ends the boots:
    the whole rounds before it are pooled (each variant the same number of boots), and the
    provenance and the notes say where it stopped and why.

    Raises
    ------
    ScenarioError
        For anything the real kernel cannot run as the scenario says (before any boot),
        for a boot whose plan fails, and for a first round that cannot boot.
    """
    if clock not in CLOCKS:
        raise ScenarioError(f"{clock!r} is not a clock", key="--clock", allowed=" or ".join(CLOCKS))
    if not 1 <= boots <= MAX_BOOTS:
        raise ScenarioError(f"{boots} boots", key="--boots", allowed=f"an integer from 1 to {MAX_BOOTS}")
    scenario, extra, images, names = align_scenario(source, overrides, seed, variants, kernel)
    plans = {n: plan_variant(n, scenario.variants[n], images[n], raw=scenario.asdict(), clock=clock,
                             any_profile=any_profile, events=events, kprobes=kprobes)
             for n in names}
    qemu = find_qemu()
    scratch = Path(tempfile.mkdtemp(prefix="rcusim-kernel-"))
    run = KernelRun(result=None, notes=[f"{n}: {note}" for n, p in plans.items() for note in p.notes],
                    scratch=scratch)
    results, described = {}, {}
    try:
        with Stages(progress) as stages:
            initramfs = {}
            for name in names:
                stages.stage(f"{name}: initramfs")
                initramfs[name] = build_initramfs(images[name])
            booted_by = {name: {"records": [], "wall": [], "retried": [], "host": []} for name in names}
            kept, stopped = boots, None
            for k, name in boot_order(names, boots):
                stages.stage(f"{name}: boot {k + 1}/{boots}")
                share = scratch / name / f"boot-{k}"
                share.mkdir(parents=True)
                argv = qemu_command(qemu, images[name].bzimage, initramfs[name], share, plans[name].nr_cpus,
                                    clock, plans[name].cmdline)
                try:
                    booted, again = boot_plan(argv, share, plans[name].script, timeout_s,
                                              f"variant {name}, boot {k + 1}", any_host=any_host)
                except BootsExhausted as exc:
                    if k == 0:
                        raise
                    kept, stopped = k, str(exc)
                    break
                got = booted_by[name]
                got["retried"].append(again)
                got["records"].append(collect_boot(plans[name], share))
                got["wall"].append(booted.wall_time_s)
                got["host"].append(booted.host)
                got["argv"] = argv
                run.raw[f"{name}/boot-{k}"] = share
            if stopped is not None:
                run.notes.append(f"the boots stopped at round {kept + 1} of {boots}; each variant's first {kept} "
                                 f"are pooled: {stopped}")
                for name in names:
                    for key in ("records", "wall", "host", "retried"):
                        del booted_by[name][key][kept:]
                run.raw = {key: path for key, path in run.raw.items() if int(key.rsplit("-", 1)[1]) < kept}
            for name in names:
                got, plan = booted_by[name], plans[name]
                results[name] = _pool(name, got["records"], got["wall"])
                described[name] = {"image": images[name].describe(), "clock": clock, "boots": kept,
                                   "boots_asked": boots, "stopped": stopped,
                                   "qemu_command": command_line(got["argv"]), "guest_cmdline": " ".join(plan.cmdline),
                                   "plan": plan.script, "trace_events": list(TRACE_EVENTS) + list(events),
                                   "kprobes": list(kprobes),
                                   "booted_again": [line for lines in got["retried"] for line in lines], "any_host": any_host,
                                   "host_during_plan": got["host"],
                                   "notes": list(plan.notes)}
        run.result = Result(
            scenario_name=scenario.name, seed=scenario.seed, rcusim_version=installed_version(), variants=results,
            provenance={"scenario": scenario.asdict(),
                        "variants": {n: resolved_config(scenario.variants[n]) for n in names},
                        "real_kernel": {"aligned_with_image": extra, "variants": described}})
    except BaseException:
        run.cleanup()
        raise
    return run
