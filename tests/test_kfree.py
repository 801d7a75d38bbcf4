"""rcuscale's kfree test as a command (`python -m rcusim rcuscale` with seed 001's kvm.sh line, and
its refusals) and as results (the report's rcuscale line, the written memory series)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rcusim.plots import save_result_figures

from tests.engine import test_kfree_scale

ROOT = Path(__file__).resolve().parents[1]
LINE = re.compile(r"^Total time taken by all kfree'ers: (\d+) ns, loops: (\d+), batches: (\d+), "
                  r"memory footprint: (-?\d+)MB$", re.M)
# Seed 001's command line, with fewer loops.
KVM = ["--memory", "10G", "--torture", "rcuscale", "--allcpus", "--duration", "1",
       "--kconfig", "CONFIG_NR_CPUS=64", "--kconfig", "CONFIG_RCU_NOCB_CPU=y",
       "--kconfig", "CONFIG_RCU_NOCB_CPU_DEFAULT_ALL=y", "--kconfig", "CONFIG_RCU_LAZY=n",
       "--bootargs", "rcuscale.kfree_rcu_test=1 rcuscale.kfree_nthreads=16 rcuscale.holdoff=20 "
       "rcuscale.kfree_loops=200 torture.disable_onoff_at_boot", "--trust-make"]

seed_run = test_kfree_scale.seed_run  # seed 001's run at its own size (a fixture)


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "rcusim", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)


def test_pasted_command_prints_rcuscale_line():
    proc = _cli("rcuscale", *KVM)
    assert proc.returncode == 0, proc.stderr
    (match,) = LINE.findall(proc.stdout)
    assert match[1] == "200" and int(match[0]) > 0 and int(match[2]) > 1
    assert "--memory" not in proc.stderr and "--trust-make" in proc.stderr and "ignored" in proc.stderr


def test_yaml_report_has_rcuscale_line(seed_run):
    assert len(LINE.findall(seed_run.report_text())) == 2


def test_written_results_have_memory_series(seed_run, tmp_path):
    out = seed_run.write(tmp_path / "r", figures=save_result_figures)
    assert (out / "kvfree_memory.png").stat().st_size > 0
    # No synchronize_rcu*() call and no real-time probe: no latency figures.
    assert {p.name for p in out.iterdir()} == {"summary.json", "latencies.parquet", "gps.parquet",
                                               "kvfree_memory.parquet", "kvfree_memory.png", "report.txt"}
    import pandas as pd

    memory = pd.read_parquet(out / "kvfree_memory.parquet")
    assert list(memory.columns) == ["variant", "t_ns", "bytes"]
    assert set(memory["variant"]) == set(seed_run.variants) and (memory["bytes"] >= 0).all()


@pytest.mark.parametrize("args, key", [
    (["--bootargs", "rcuscale.kfree_rcu_test=1 rcuscale.kfree_bogus=3"], "kfree_bogus"),
    (["--bootargs", "rcuscale.kfree_rcu_test=0 rcuscale.gp_async=1 rcuscale.gp_async_max=0"],
     "gp_async_max"),  # the writer test's
    (["--bootargs", "rcuscale.kfree_rcu_test=1", "--kconfig", "CONFIG_FOO=y"], "CONFIG_FOO"),
    (["--bootargs", "rcuscale.kfree_rcu_test=1 rcuscale.kfree_loops=2"], "kfree_loops"),
    (["--bootargs", "rcuscale.kfree_rcu_test=1", "--torture", "rcu"], "--torture"),
    (["--bootargs", "rcuscale.kfree_rcu_test=1", "--kconfig", "CONFIG_HZ=123"], "CONFIG_HZ"),
    (["--bootargs", "rcuscale.kfree_rcu_test=1", "--frobnicate"], "frobnicate"),
])
def test_bad_command_lines(args, key):
    proc = _cli("rcuscale", *args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rcusim: error:") and key in lines[0]
