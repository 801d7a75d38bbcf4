"""The real-kernel twin end to end: the shared image booted under QEMU with a short
workload, its results directory checked (one boot, about 10 s).

Skipped, with the reason, where QEMU, a static busybox, a C compiler, cpio or the image
(../shared/kernel/linux-6.12-hz1000) is missing; .ci/run installs the system parts.
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rcusim.errors import ScenarioError
from rcusim.twin.image import find_image
from rcusim.twin.initramfs import find_busybox
from rcusim.twin.plan import SIM_TRACE_EVENT

ROOT = Path(__file__).resolve().parents[1]


def _missing() -> str | None:
    for tool, package in (("qemu-system-x86_64", "qemu-system-x86"), ("cpio", "cpio"), ("gcc", "gcc")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install {package})"
    try:
        find_busybox()
        find_image(None, 1000)
    except ScenarioError as exc:
        return str(exc)
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=f"the real kernel cannot boot here: {_missing()}")

SCENARIO = """
name: twin_boot
hardware: {profile: qemu-tcg, nr_cpus: 2}
kernel: {release: "6.12", HZ: 1000}
workloads:
  - {kind: sync_loop, tasks: 2, loops: 20, cpus: "0-1", pinned: false, work_after: none, start: barrier}
"""


@pytest.fixture(scope="module")
def booted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("twin")
    scenario = tmp / "twin_boot.yaml"
    scenario.write_text(SCENARIO)
    out = tmp / "real"
    # --any-host: the suite's other worker keeps the host busy; this boot checks the harness
    done = subprocess.run([sys.executable, "-m", "rcusim", "kernel", str(scenario), "--boots", "1", "--out", str(out),
                           "--twin", "--any-host"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    return done, out


def test_kernel_run_writes_run_layout(booted):
    """The real run's directory has run's files and metric names, with every call measured."""
    done, out = booted
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    metrics = summary["variants"]["default"]["metrics"]
    assert metrics["latency_us"]["count"] == 2 * 20
    assert 0 < metrics["latency_us"]["min"] <= metrics["latency_us"]["p50"] <= metrics["latency_us"]["max"]
    assert metrics["grace_periods"] > 0 and metrics["boots"] == 1
    assert metrics["normal_gp"]["length_us"]["p50"] > 0
    lat = pd.read_parquet(out / "latencies.parquet")
    assert len(lat) == 40 and set(lat["task"]) == {0, 1}
    gps = pd.read_parquet(out / "gps.parquet")
    assert (gps["t_end_ns"] > gps["t_start_ns"]).all()


def test_kernel_run_records_its_provenance_and_raw_files(booted):
    """The image, the QEMU and guest command lines and each boot's raw files are kept."""
    done, out = booted
    assert done.returncode == 0, done.stderr
    real = json.loads((out / "summary.json").read_text())["provenance"]["real_kernel"]["variants"]["default"]
    assert real["image"]["version"].startswith("6.12")
    assert "qemu-system-x86_64" in real["qemu_command"] and "preempt=voluntary" in real["guest_cmdline"]
    raw = out / "raw" / "default" / "boot-0"
    assert "rcusim-plan-exit 0" in (raw / "plan.log").read_text()
    # the host's account of the vCPU threads over the plan, read at the guest's console marks
    host = real["host_during_plan"][0]
    assert host["plan_s"] > 0 and host["vcpu_run"] > 0 and real["any_host"] is True
    assert "cpuidle/current_driver:" in (raw / "cpuidle.txt").read_text()
    with gzip.open(raw / "trace.txt.gz", "rt") as f:
        assert any("rcu_grace_period" in line for line in f)


def test_breakdown_adds_up_to_the_latency(booted):
    """The trace's time breakdown covers the calls' latency: its parts sum to within the
    return path (a few tens of µs) of the mean latency."""
    done, out = booted
    assert done.returncode == 0, done.stderr
    metrics = json.loads((out / "summary.json").read_text())["variants"]["default"]["metrics"]
    parts = metrics["normal_time_us"]
    assert metrics["breakdown_matched"] > 0
    assert all(v >= 0 for v in parts.values())
    assert 0.8 * metrics["latency_us"]["mean"] <= sum(parts.values()) <= metrics["latency_us"]["mean"]


def test_twin_simulates_the_same_kernel(booted):
    """--twin simulates the scenario aligned with the image (its CONFIG_NR_CPUS, preempt=)
    and prints the validation figures of both sides."""
    done, out = booted
    assert done.returncode == 0, done.stderr
    sim = json.loads((out.with_name("real-sim") / "summary.json").read_text())
    kernel = sim["provenance"]["variants"]["default"]["kernel"]
    assert kernel["CONFIG_NR_CPUS"] == 64 and "preempt=voluntary" in kernel["bootargs"]
    assert "| variant | figure | real | sim | sim/real | over boots (90 %) | goal |" in done.stdout
    assert "| default | latency p50 (µs) |" in done.stdout


def test_sim_only_simulates_again_beside_the_real_run(booted, tmp_path):
    """--sim-only boots nothing: it simulates the scenario, aligned as this rcusim aligns it
    (here with the stable release's patches), beside the real run in --out."""
    done, out = booted
    assert done.returncode == 0, done.stderr
    scenario = out.parent / "twin_boot.yaml"
    again = subprocess.run([sys.executable, "-m", "rcusim", "kernel", str(scenario), "--sim-only", "--out", str(out),
                            "--force"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "boot" not in again.stderr.lower()
    sim = json.loads((out.with_name("real-sim") / "summary.json").read_text())
    kernel = sim["provenance"]["variants"]["default"]["kernel"]
    assert kernel["patches"] == ["sched-base-slice-700us", "sched-newidle-proportional",
                                 "sched-idle-consolidate-special-cases"]
    assert SIM_TRACE_EVENT in kernel["bootargs"]  # traced as the guest was
    assert "| default | latency p50 (µs) |" in again.stdout
    other = subprocess.run([sys.executable, "-m", "rcusim", "kernel", str(scenario), "--sim-only", "--out", str(out),
                            "--force", "--set", "hardware.profile=x86-64-server-2023",
                            "--set", "workloads.0.pinned=true"],  # (its threads' creation is not timed there)
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert other.returncode == 0 and "runs untraced" in other.stderr, other.stderr
    missing = subprocess.run([sys.executable, "-m", "rcusim", "kernel", str(scenario), "--sim-only", "--out",
                              str(tmp_path / "none")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "--out" in missing.stderr


def test_the_load_starts_on_a_settled_guest(booted):
    """The guest's /init waits for the kernel's log to stay quiet for a second (the boot's
    deferred work: the mouse's probe, the switch to the refined TSC), then the helper lets
    its threads' creation settle for SETTLE_US: no kernel record but the helpers' own stack
    notes falls in the second before the first call, and the TSC switch comes before it."""
    done, out = booted
    assert done.returncode == 0, done.stderr
    raw = out / "raw" / "default" / "boot-0"
    t0 = json.loads((raw / "window.json").read_text())["t0_ns"] / 1e9
    stamped = [line for line in (raw / "dmesg.txt").read_text().splitlines() if line.startswith("[")]
    records = [(float(line[1:line.index("]")]), line) for line in stamped]
    before = [t for t, line in records if t < t0 and "used greatest stack depth" not in line]
    assert before and t0 - max(before) >= 1.0, (t0, max(before))
    assert any("Switched to clocksource tsc" in line and t < t0 for t, line in records)


@pytest.mark.slow  # three boots, about 35 s
def test_a_boot_the_host_keeps_failing_ends_the_run_with_the_rounds_before_it(tmp_path, monkeypatch):
    """Two variants, two rounds asked; every attempt of round 2's second variant fails for the
    emulator's sake (BootsExhausted): round 1 is pooled, one boot a variant, its raw files
    kept and round 2's not, and the note and the provenance say where it stopped. A first
    round that cannot boot is an error."""
    from rcusim.twin import run as twin_run
    from rcusim.twin.qemu import BootsExhausted

    scenario = tmp_path / "two.yaml"
    scenario.write_text(SCENARIO + "variants:\n  a: {}\n  b: {}\n")
    real_boot_plan, calls = twin_run.boot_plan, []

    def failing(argv, share, script, timeout_s, what, **kw):
        calls.append(what)
        if len(calls) == 4 or (fail_first and len(calls) == 1):
            raise BootsExhausted(f"{what}: the guest failed at each of its 4 boots", key="kernel")
        return real_boot_plan(argv, share, script, timeout_s, what, **kw)

    monkeypatch.setattr(twin_run, "boot_plan", failing)
    fail_first = False
    run = twin_run.run_kernel(scenario, boots=2, any_host=True, progress=False)
    try:
        assert calls == ["variant a, boot 1", "variant b, boot 1", "variant a, boot 2", "variant b, boot 2"]
        real = run.result.provenance["real_kernel"]["variants"]
        assert {v["boots"] for v in real.values()} == {1} and {v["boots_asked"] for v in real.values()} == {2}
        assert "variant b, boot 2" in real["a"]["stopped"]
        assert sorted(run.raw) == ["a/boot-0", "b/boot-0"]
        assert {v.metrics["boots"] for v in run.result.variants.values()} == {1}
        assert any("stopped at round 2 of 2" in note for note in run.notes)
    finally:
        run.cleanup()
    calls.clear()
    fail_first = True
    with pytest.raises(BootsExhausted):
        twin_run.run_kernel(scenario, boots=2, any_host=True, progress=False)
