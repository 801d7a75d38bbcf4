"""The torture command: random configurations with the safety checker on, its
faults caught, its reproducers runnable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rcusim.commands.torture import torture
from rcusim.engine.faults import FAULTS
from rcusim.input.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]

#: Configurations within which each catalogued fault must be caught.
FAULT_BUDGET = 300
#: Faults that fewer drawn configurations can reach: no-wait-for-krwp-work needs two-argument
#: kfree_rcu() calls without a cached page (v5.11 on) while a batch's grace period is pending.
FAULT_BUDGETS = {"no-wait-for-krwp-work": 700}


def quiet(*_):
    pass


def test_a_bounded_torture_is_clean_and_sees_every_kind_of_check(tmp_path):
    total = torture(seed=0, max_configs=40, workers=1, out=tmp_path, echo=quiet)
    assert total["configurations"] >= 40
    assert total["gps"] > 0 and total["exp_gps"] > 0
    assert total["callbacks"] > 0 and total["readers"] > 0 and total["barriers"] > 0
    assert sum(total["pipe_normal"]) == total["readers"]
    assert total["violations"] == 0 and total["reproducer"] is None
    assert not any(tmp_path.iterdir())


def test_same_seed_same_draws():
    a = torture(seed=3, max_configs=8, workers=1, echo=quiet)
    b = torture(seed=3, max_configs=8, workers=1, echo=quiet)
    for key in ("configurations", "refused", "gps", "exp_gps", "callbacks", "readers", "pipe_normal"):
        assert a[key] == b[key]


@pytest.mark.parametrize("fault", [pytest.param(f, marks=pytest.mark.slow) if f in FAULT_BUDGETS else f
                                   for f in FAULTS])
def test_each_fault_is_caught_and_reproducible(fault, tmp_path):
    """Each fault is caught within its budget; a fault that needs a larger budget than
    FAULT_BUDGET (minutes of torture) runs with -m slow."""
    budget = FAULT_BUDGETS.get(fault, FAULT_BUDGET)
    total = torture(seed=0, max_configs=budget, workers=2, fault=fault, out=tmp_path, echo=quiet)
    assert total["violations"] > 0
    assert total["configurations"] <= budget
    reproducer = Path(total["reproducer"])
    assert reproducer.parent == tmp_path
    load_scenario(reproducer)  # a scenario file `python -m rcusim run` accepts


def test_command_line(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "rcusim", "torture", "--duration", "2", "--workers", "1",
                         "--out", str(tmp_path / "f")], cwd=tmp_path, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "rcusim-torture: violations: 0" in ok.stdout
    assert ok.stdout.rstrip().endswith("End of test: SUCCESS")
    bad = subprocess.run([sys.executable, "-m", "rcusim", "torture"], cwd=tmp_path, capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "--duration" in bad.stderr
