"""Golden figures: hashes of every bundled scenario's results at reduced size.

A restructuring of rcusim must not change a single result. This script runs,
each through the command line as a user would:

- every bundled scenario (``scenarios/*.yaml``) at ``bench --quick`` size, and
  keeps its ``summary.json`` figures as they are (each variant's, so that a
  re-record's diff names the figure that moved), a hash of the rest of it (the
  provenance, without ``wall_clock`` and ``invocation``), hashes of its Parquet
  tables (their columns, types and values, so that a pyarrow upgrade does not count
  as a change) and of ``report.txt`` (without the wall-time and events/s lines); the
  variants' figures include the engine's event count;
- a small traced run (Chrome JSON and ftrace text);
- the rcuscale command's kfree line;
- the SimPy reference model's request records on the bench's reference configuration.

    python tests/golden/golden.py            # compare with tests/golden/golden.json
    python tests/golden/golden.py --record   # write tests/golden/golden.json anew

``tests/test_golden.py`` runs the comparison.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden.json"

#: report.txt lines that hold wall-clock figures, left out of the hash.
_WALL_LINES = ("wall time", "events/s")

#: A small traced run: both trace writers over every record kind of a normal and an expedited GP.
TRACE_RUN = ("scenarios/sync_rcu_10k_pinned.yaml", "--variant", "wake_from_gp", "--set", "hardware.nr_cpus=8",
             "--set", "workloads.0.tasks=16", "--set", "workloads.0.loops=3")

RCUSCALE_RUN = ("--kconfig", "CONFIG_NR_CPUS=8", "--kconfig", "CONFIG_RCU_NOCB_CPU=y",
                "--bootargs", "rcuscale.kfree_rcu_test=1 rcuscale.kfree_nthreads=4 rcuscale.kfree_loops=20")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _rcusim(*args: str) -> str:
    """Run ``python -m rcusim ARGS`` from the repository root; its stdout."""
    done = subprocess.run([sys.executable, "-m", "rcusim", *args], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"rcusim {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def _parquet_hash(path: Path) -> str:
    """Hash of a table's Arrow schema and values (not of the file's bytes, which name the writer)."""
    table = pq.read_table(path)
    h = hashlib.sha256(json.dumps([[f.name, str(f.type)] for f in table.schema]).encode())
    for column in table.columns:
        column = column.combine_chunks()
        if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
            h.update(column.to_numpy().tobytes())
        else:  # strings, dictionaries, booleans: by value
            h.update(json.dumps(column.to_pylist(), default=str).encode())
    return h.hexdigest()


def _results_figures(out: Path) -> dict:
    summary = json.loads((out / "summary.json").read_text())
    summary.pop("wall_clock", None)
    summary.pop("invocation", None)  # the command line and source revision
    variants = summary.pop("variants")
    report = "".join(line for line in (out / "report.txt").read_text().splitlines(keepends=True)
                     if not line.startswith(_WALL_LINES))
    figures = {"summary.json": {"variants": variants, "rest": _sha(json.dumps(summary, sort_keys=True).encode())},
               "report.txt": _sha(report.encode())}
    figures.update({p.name: _parquet_hash(p) for p in sorted(out.glob("*.parquet"))})
    return figures


def _quick_sets(path: Path) -> list[str]:
    from rcusim.commands.bench import _quick_overrides
    from rcusim.input.scenario import load_scenario

    sets = []
    for key, value in sorted(_quick_overrides(load_scenario(path)).items()):
        sets += ["--set", f"{key}={value}"]
    return sets


def _reference_hash() -> str:
    from rcusim.commands.bench import REFERENCE_CONFIG
    from rcusim.engine.reference.compare import run_both
    from rcusim.input.scenario import load_scenario

    core, ref = run_both(load_scenario(REFERENCE_CONFIG).variants["default"], 0)
    records = {k: list(map(int, v)) for k, v in ref["requests"].items()}
    return _sha(json.dumps(records, sort_keys=True).encode())


def figures() -> dict:
    out = {}
    # Every run is a process of its own: run them side by side, one per core.
    with tempfile.TemporaryDirectory(prefix="rcusim-golden-") as tmp, \
            ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        tmp = Path(tmp)
        runs = {path.stem: pool.submit(_rcusim, "run", str(path.relative_to(ROOT)), "--out", str(tmp / path.stem),
                                       "--no-progress", *_quick_sets(path))
                for path in sorted((ROOT / "scenarios").glob("*.yaml"))}
        trace = pool.submit(_rcusim, "run", *TRACE_RUN, "--out", str(tmp / "trace"), "--no-progress",
                            "--trace", str(tmp / "trace.json"), "--ftrace", str(tmp / "trace.txt"))
        rcuscale = pool.submit(_rcusim, "rcuscale", *RCUSCALE_RUN)
        for stem, run in runs.items():
            run.result()
            out[stem] = _results_figures(tmp / stem)
        trace.result()
        out["trace"] = {"chrome": _sha((tmp / "trace.json").read_bytes()),
                        "ftrace": _sha((tmp / "trace.txt").read_bytes())}
        out["rcuscale"] = rcuscale.result().strip()
    out["reference_requests"] = _reference_hash()
    return out


def differences(recorded: dict, now: dict, path: str = "") -> list[str]:
    """One line per figure that differs, named by its path (``sync_rcu_10k/summary.json/
    variants/default/metrics/latency_us/p99``)."""
    lines = []
    for key in sorted(set(recorded) | set(now)):
        a, b, name = recorded.get(key), now.get(key), f"{path}{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            lines += differences(a, b, f"{name}/")
        elif a != b:
            lines.append(f"{name}: recorded {a!r}, now {b!r}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true", help="write golden.json anew")
    args = parser.parse_args()
    now = figures()
    if args.record:
        GOLDEN.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(now)} golden figures in {GOLDEN}")
        return 0
    diff = differences(json.loads(GOLDEN.read_text()), now)
    print("\n".join(diff) if diff else f"all {len(now)} golden figures identical")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
