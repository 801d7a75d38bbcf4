"""Every kfree_rcu() generation as rcuscale prints it and as the input asks for it: the line is
the release's, and what the model or the release's test lacks is refused, in a scenario and
on a kvm.sh line. (The generations in the engine: tests/engine/test_kvfree_rcu.py.)"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rcusim.engine.rcuscale import rcuscale_line
from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario
from rcusim.results.run import run_variant

from tests.engine.conftest import flood, spec_of

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("release, footprint", [("5.5", False), ("5.6", False), ("5.7", True), ("6.3", True)])
def test_the_line_is_the_release_s(release, footprint):
    metrics = run_variant("x", spec_of(flood(release, loops=8)), 0).metrics
    line = rcuscale_line(metrics)
    assert line.startswith("Total time taken by all kfree'ers: ")
    assert ("memory footprint" in line) == footprint == (metrics["memory_footprint_mb"] is not None)


@pytest.mark.parametrize("kernel, workload, key, allowed", [
    ({"release": "5.7"}, {"kfree_mult": 2}, "workloads[0].kfree_mult", "1, or kernel.release 5.8 or later"),
    ({"release": "5.12"}, {"kfree_rcu_test_single": True}, "workloads[0].kfree_rcu_test_single",
     "false, or kernel.release 5.13 or later"),
    ({"release": "6.1"}, {"kfree_by_call_rcu": True}, "workloads[0].kfree_by_call_rcu",
     "false, or kernel.release 6.2 or later"),
    ({"release": "2.6.39", "CONFIG_RCU_NOCB_CPU": False, "CONFIG_RCU_NOCB_CPU_DEFAULT_ALL": False}, {},
     "workloads[0].kind", "kernel.release 3.0 or later"),
    ({"release": "6.6", "CONFIG_RCU_LAZY": True, "CONFIG_RCU_NOCB_CPU_DEFAULT_ALL": False,
      "bootargs": "rcu_nocbs=0-3"}, {"kfree_by_call_rcu": True}, "workloads[0].kfree_by_call_rcu",
     "every CPU offloaded"),
    ({"release": "6.9", "CONFIG_RCU_LAZY": True, "bootargs": "rcutree.enable_rcu_lazy=0"},
     {"kfree_by_call_rcu": True}, "workloads[0].kfree_by_call_rcu", "lazy RCU on at boot"),
    ({"release": "5.8", "bootargs": "rcutree.rcu_min_cached_objs=3"}, {}, "kernel.bootargs",
     "release 5.9 or later"),
])
def test_a_generation_asked_on_the_wrong_release_is_refused(tmp_path, kernel, workload, key, allowed):
    import yaml

    data = flood("6.6", loops=4, **workload)
    data["kernel"].update(kernel)
    with pytest.raises(ScenarioError):
        load_scenario(data)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"name": "s", **data}))
    out = tmp_path / "out"
    proc = _cli("run", str(path), "--out", str(out))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and proc.stdout == "" and not out.exists()
    assert len(lines) == 1 and key in lines[0] and allowed in lines[0], proc.stderr


@pytest.mark.parametrize("release, args, named, allowed", [
    ("5.8", ["--bootargs", "rcuscale.kfree_rcu_test=1"], "rcuscale.kfree_rcu_test", "rcuperf.kfree_rcu_test"),
    ("6.2", ["--bootargs", "rcuperf.kfree_rcu_test=1"], "rcuperf.kfree_rcu_test", "rcuscale.kfree_rcu_test"),
    ("5.5", ["--bootargs", "rcuperf.kfree_rcu_test=1"], "rcuperf.kfree_rcu_test", "release 5.6 or later"),
    ("5.7", ["--bootargs", "rcuperf.kfree_rcu_test=1 rcuperf.kfree_mult=2"], "rcuperf.kfree_mult",
     "release 5.8 or later"),
    ("6.2", ["--torture", "rcuperf", "--bootargs", "rcuscale.kfree_rcu_test=1"], "--torture", "--torture rcuscale"),
    ("5.8", ["--bootargs", "rcuperf.nwriters=1"], "rcuperf", "rcuperf.kfree_rcu_test=1"),
    ("6.6", ["--bootargs", "rcuscale.kfree_rcu_test=1 rcuscale.gp_exp=1"], "gp_exp", "rcuscale.gp_exp=0"),
])
def test_a_kvm_line_for_another_release_is_refused(tmp_path, release, args, named, allowed):
    proc = _cli("rcuscale", "--release", release, "--kconfig", "CONFIG_NR_CPUS=4", *args,
                "--out", str(tmp_path / "out"))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and proc.stdout == "" and not (tmp_path / "out").exists()
    assert len(lines) == 1 and named in lines[0] and allowed in lines[0], proc.stderr


def test_an_rcuperf_kvm_line_runs_on_its_release():
    proc = _cli("rcuscale", "--release", "5.6", "--torture", "rcuperf", "--kconfig", "CONFIG_NR_CPUS=4",
                "--bootargs", "rcuperf.kfree_rcu_test=1 rcuperf.kfree_nthreads=2 rcuperf.kfree_loops=8")
    assert proc.returncode == 0, proc.stderr
    line, = proc.stdout.splitlines()
    assert line.startswith("Total time taken by all kfree'ers: ") and ", loops: 8, batches: " in line
    assert "memory footprint" not in line  # v5.7 added it


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "rcusim", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)
