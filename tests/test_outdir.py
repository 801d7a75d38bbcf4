"""The results directory of ``run`` and ``sweep`` (rcusim/commands/outdir.py): whole or
absent whenever a signal ends the process, one process at a time, and what killed
processes left beside it removed by the next one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from rcusim.commands.cli import main
from rcusim.commands.outdir import claim
from rcusim.results.atomic import atomic_directory, atomic_file

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "scenarios" / "sync_rcu_10k.yaml"
RUN = ["--variant", "default", "--set", "workloads.0.tasks=200", "--set", "workloads.0.loops=5", "--no-progress"]
RESULT_FILES = {"summary.json", "latencies.parquet", "gps.parquet", "latency_hist.png", "report.txt"}
SWEEP_FILES = {"sweep.parquet", "percentiles.png"}


def write_sweep(folder: Path) -> Path:
    """Three points of a small scenario, one seed."""
    doc = {"name": "small", "scenario": str(BUNDLED), "variants": ["default"],
           "set": {"workloads.0.tasks": 200, "workloads.0.loops": 5},
           "sweep": {"hardware.nr_cpus": [4, 8, 16]}}
    path = folder / "small.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def command(kind: str, folder: Path, out: Path) -> list[str]:
    if kind == "run":
        return ["run", str(BUNDLED), *RUN, "--out", str(out)]
    return ["sweep", str(write_sweep(folder)), "--out", str(out), "--workers", "1", "--no-progress"]


def hidden(folder: Path) -> list[str]:
    return [str(p.relative_to(folder)) for p in folder.rglob(".*")]


def lock_of(out: Path) -> Path:
    return out.with_name(f".{out.name}.lock")


def writing(out: Path) -> bool:
    return any(out.parent.glob(f".{out.name}.tmp-*"))


# (command, signal, the moment it is sent at, whether that moment has come)
MOMENTS = [
    ("run", signal.SIGINT, "while it writes the results", writing),
    ("sweep", signal.SIGTERM, "once its first point is stored", lambda out: any(out.glob("points/*.parquet"))),
    ("sweep", signal.SIGINT, "while it writes the table and the plot", writing),
]


def signal_in_moment(proc, sig, ready, out) -> bool | None:
    """Send `sig` while the moment holds: the process is stopped, the moment checked again,
    signalled and continued, so that a loaded machine cannot let it pass in between. True
    once sent, False if the moment passed unsignalled, None while it has not come."""
    if not ready(out):
        return False if proc.poll() is not None else None
    proc.send_signal(signal.SIGSTOP)
    held = ready(out)
    if held:
        proc.send_signal(sig)
    proc.send_signal(signal.SIGCONT)
    return held


def test_a_signal_at_any_moment_leaves_the_whole_result_or_none_and_nothing_hidden(tmp_path):
    # The processes run side by side, each signalled when its moment comes; a moment
    # that passed unsignalled (the process outran the check) is tried again.
    outcomes = {}
    for attempt in range(3):
        cases = {}
        for k, (kind, sig, moment, ready) in enumerate(MOMENTS):
            if k in outcomes:
                continue
            folder = tmp_path / f"{k}-{attempt}"
            folder.mkdir()
            out = folder / "out"
            proc = subprocess.Popen([sys.executable, "-m", "rcusim", *command(kind, folder, out)], cwd=folder,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            cases[k] = (proc, folder, out)
        waiting = set(cases)
        deadline = time.monotonic() + 120
        while waiting and time.monotonic() < deadline:
            for k in list(waiting):
                proc, _, out = cases[k]
                sent = signal_in_moment(proc, MOMENTS[k][1], MOMENTS[k][3], out)
                if sent is not None:
                    waiting.discard(k)
                    if sent:
                        outcomes[k] = cases[k]
            time.sleep(0.005)
        for k, (proc, folder, out) in cases.items():
            err = proc.communicate(timeout=120)[1]
            if k in outcomes:
                outcomes[k] = (proc, folder, out, err)
        if len(outcomes) == len(MOMENTS):
            break
    assert sorted(outcomes) == list(range(len(MOMENTS))), f"a moment passed unsignalled three times: {[MOMENTS[k][2] for k in range(len(MOMENTS)) if k not in outcomes]}"
    for k, (kind, sig, moment, _) in enumerate(MOMENTS):
        proc, folder, out, err = outcomes[k]
        assert proc.returncode == 128 + sig, f"{kind} {moment}: exit {proc.returncode}: {err}"
        assert "Traceback" not in err
        assert hidden(folder) == [], f"{kind} {moment}"
        names = {p.name for p in out.iterdir()} if out.exists() else set()
        if kind == "run":
            assert names in (set(), RESULT_FILES), f"{kind} {moment}: {names}"
        else:
            # The finished points stay for the next sweep; the table and plot come together.
            assert names & SWEEP_FILES in (set(), SWEEP_FILES), f"{kind} {moment}: {names}"
            for point in out.glob("points/*"):
                pd.read_parquet(point)


def test_a_second_run_on_the_same_out_is_refused_at_once_and_the_first_completes(tmp_path, capsys):
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, "-m", "rcusim", "run", str(BUNDLED), *RUN, "--out", str(out)],
                             cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while not lock_of(out).exists():
        assert first.poll() is None, first.communicate()[1]
        time.sleep(0.005)
    assert main(["run", str(BUNDLED), *RUN, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert first.poll() is None, "the second run waited for the first"
    assert err == (f"rcusim: error: --out: {str(out)!r} is in use by another rcusim process (pid {first.pid}); "
                   "allowed: another --out, or this one once that process has ended\n")
    assert first.wait(timeout=120) == 0, first.communicate()[1]
    assert {p.name for p in out.iterdir()} == RESULT_FILES
    assert (out / "summary.json").stat().st_size > 0 and list(tmp_path.iterdir()) == [out]


def test_a_second_sweep_on_the_same_out_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    with claim(out, force=True):  # as another process's sweep would hold it
        assert main(command("sweep", tmp_path, out)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rcusim: error: --out: ")
    assert f"is in use by another rcusim process (pid {os.getpid()})" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.yaml"]


@pytest.mark.parametrize("argv", [
    ["kernel", str(ROOT / "scenarios/twin/sync_callers_2cpu.yaml"), "--sim-only", "--out", "{real}"],
    ["rcuscale", "--kconfig", "CONFIG_NR_CPUS=4", "--bootargs", "rcuscale.kfree_rcu_test=1 rcuscale.kfree_loops=4",
     "--out", "{out}"],
])
def test_kernel_and_rcuscale_refuse_an_out_another_process_holds(argv, tmp_path, capsys):
    real, out = tmp_path / "real", tmp_path / "out"
    held = real.with_name(real.name + "-sim") if "kernel" in argv else out
    argv = [a.format(real=real, out=out) for a in argv]
    with claim(held, force=True):  # as another rcusim process would hold it
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"is in use by another rcusim process (pid {os.getpid()})" in err


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_what_dead_processes_left_beside_a_run_is_removed_with_a_note(tmp_path, capsys):
    dead, out = dead_pid(), tmp_path / "out"
    left = [tmp_path / f".out.tmp-{dead}", tmp_path / f".out.old-{dead}"]
    # A running process's, and another directory's.
    kept = [tmp_path / f".out.tmp-{os.getppid()}", tmp_path / f".other.tmp-{dead}"]
    for folder in left + kept:
        folder.mkdir()
        (folder / "summary.json").write_text("{}")
    lock_of(out).write_text(f"{dead}\n")  # its lock went with it: the file is taken over
    assert main(["run", str(BUNDLED), *RUN, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rcusim: note: removed "), err
    assert all(str(p) in err for p in left) and not any(str(p) in err for p in kept)
    assert sorted(tmp_path.iterdir()) == sorted([out, *kept])


def test_what_dead_processes_left_in_and_beside_a_sweep_is_removed_with_a_note(tmp_path, capsys):
    dead, out = dead_pid(), tmp_path / "out"
    left = [out / "points" / f".0123456789abcdef.parquet.tmp-{dead}", tmp_path / f".out.tmp-{dead}"]
    left[0].parent.mkdir(parents=True)
    left[0].write_bytes(b"PAR1 half written")
    left[1].mkdir()
    assert main(command("sweep", tmp_path, out)) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rcusim: note: removed "), err
    assert all(str(p) in err for p in left)
    assert hidden(tmp_path) == []
    assert {p.name for p in out.iterdir()} == SWEEP_FILES | {"points"} and len(list(out.glob("points/*"))) == 3


@pytest.mark.parametrize("kind", ["directory", "file"])
def test_an_interruption_that_library_code_swallows_still_leaves_nothing(kind, tmp_path):
    # numpy's dtype comparison, which pandas makes while writing a table, clears any
    # exception raised while it runs, the KeyboardInterrupt of a Ctrl-C included.
    out = tmp_path / "out"
    writer = atomic_directory(out) if kind == "directory" else atomic_file(out)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's, as the CLI has it
    try:
        with pytest.raises(KeyboardInterrupt):
            with writer as tmp:
                (tmp / "table" if kind == "directory" else tmp).write_text("rows")
                try:
                    signal.raise_signal(signal.SIGINT)
                except KeyboardInterrupt:
                    pass
    finally:
        signal.signal(signal.SIGINT, previous)
    assert list(tmp_path.iterdir()) == []
