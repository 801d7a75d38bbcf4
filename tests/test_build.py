"""setup.py: an install with the engine up to date compiles nothing and asks pip for neither
Cython nor numpy; a change to the engine's files asks for both, to compile."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = ("_core", "_membarrier", "_seq")
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")


def checkout(tmp_path: Path) -> Path:
    """What setup.py reads, copied, with the engine's files older than the C and the C older
    than the modules built in rcusim/."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(ROOT / "cython_core", tree / "cython_core", ignore=shutil.ignore_patterns("*.c"))
    shutil.copytree(ROOT / "rcusim", tree / "rcusim", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    for path in [tree / "setup.py", *(tree / "cython_core").iterdir()]:
        os.utime(path, (1_000_000_000, 1_000_000_000))
    for name in MODULES:
        (tree / "cython_core" / f"{name}.c").write_text("/* the C */\n")
        os.utime(tree / "cython_core" / f"{name}.c", (1_000_000_100, 1_000_000_100))
        shutil.copy(ROOT / "rcusim" / f"{name}{SUFFIX}", tree / "rcusim" / f"{name}{SUFFIX}")
        os.utime(tree / "rcusim" / f"{name}{SUFFIX}", (1_000_000_200, 1_000_000_200))
    return tree


def build_requires(tree: Path) -> list[str]:
    """What the build backend asks pip to install before an editable build, beyond pyproject.toml's."""
    code = ("import json; from setuptools import build_meta; "
            "print(json.dumps(build_meta.get_requires_for_build_editable()))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_an_up_to_date_engine_is_copied_not_compiled(tmp_path):
    tree = checkout(tmp_path)
    assert [r for r in build_requires(tree) if r.startswith(("Cython", "numpy"))] == []
    proc = subprocess.run([sys.executable, "setup.py", "build_ext", "--build-lib", "lib", "--build-temp", "tmp"],
                          cwd=tree, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "building '" not in proc.stdout + proc.stderr
    for name in MODULES:
        built = tree / "lib" / "rcusim" / f"{name}{SUFFIX}"
        assert built.read_bytes() == (ROOT / "rcusim" / f"{name}{SUFFIX}").read_bytes()


def test_a_changed_engine_file_asks_for_cython_and_numpy(tmp_path):
    tree = checkout(tmp_path)
    (tree / "cython_core" / "tree_gp.pxi").touch()
    assert {r.split(">")[0] for r in build_requires(tree)} >= {"Cython", "numpy"}
