"""The notebooks run from top to bottom with the public API (so they cannot rot), through the README's
command, and are stored without outputs."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def readme_command(notebook: Path, output: Path) -> list[str]:
    """The README's command that runs a notebook, for `notebook`, its executed copy written to `output`
    (the same path without .ipynb)."""
    line = next(line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
                if line.startswith("jupyter "))
    program, command, _, option = shlex.split(line.partition("#")[0])
    assert (program, command, option.partition("=")[0]) == ("jupyter", "execute", "--output"), line
    # The jupyter installed beside this Python (the [test] extra's), whatever PATH holds.
    return [str(Path(sys.executable).with_name(program)), command, str(notebook), f"--output={output}"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")
    assert all("rcusim._core" not in c.source and "build_engine" not in c.source for c in nb.cells)
    proc = subprocess.run(readme_command(path, tmp_path / path.stem), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ran = nbformat.read(tmp_path / path.name, as_version=4)
    figures = [o for c in ran.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert figures


def test_there_are_notebooks():
    assert {p.stem for p in NOTEBOOKS} >= {"tour_sync_rcu_10k", "expedited_storm", "kfree_memory"}
