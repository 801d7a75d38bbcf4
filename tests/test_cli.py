"""The command line: a small successful run, and bad input through the real process.

Bad input must end with exactly one stderr line ``rcusim: error: ...`` that
names the key (and, for files, the line), exit status 2, no traceback, and no
results directory.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from rcusim.commands.cli import main

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "scenarios" / "sync_rcu_10k.yaml"
SMALL = ["--set", "workloads.0.tasks=200", "--set", "workloads.0.loops=5"]
TINY = ["--set", "workloads.0.tasks=8", "--set", "workloads.0.loops=2"]
RESULT_FILES = {"summary.json", "latencies.parquet", "gps.parquet", "latency_hist.png",
                "report.txt"}
FUNCLATENCY_HEADER = "usecs               : count     distribution"


def bundled_text() -> str:
    return BUNDLED.read_text(encoding="utf-8")


def line_of(text: str, fragment: str) -> int:
    """1-based line of the first line containing `fragment`."""
    for number, line in enumerate(text.splitlines(), 1):
        if fragment in line:
            return number
    raise AssertionError(f"{fragment!r} not in the text")


# ------------------------------------------------------------------ a successful run

@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "results"
    status = main(["run", str(BUNDLED), "--out", str(out), "--no-progress"] + SMALL)
    return status, out


def test_run_writes_all_result_files(small_run):
    status, out = small_run
    assert status == 0
    assert {p.name for p in out.iterdir()} == RESULT_FILES
    for name in RESULT_FILES:
        assert (out / name).stat().st_size > 0, name
    # Nothing left beside the results directory (temporary or old copies).
    assert [p.name for p in out.parent.iterdir()] == [out.name]


def test_summary_json_layout(small_run):
    _, out = small_run
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["scenario"] == "sync_rcu_10k"
    assert summary["seed"] == 0
    assert isinstance(summary["rcusim_version"], str) and summary["rcusim_version"]
    assert list(summary["variants"]) == ["default", "wake_from_gp"]
    for name, variant in summary["variants"].items():
        metrics = variant["metrics"]
        assert metrics["completion_time_s"] > 0, name
        latency = metrics["latency_us"]
        assert set(latency) == {"count", "min", "mean", "p50", "p90", "p99", "max"}
        assert latency["count"] == 200 * 5, name
        assert 0 < latency["min"] <= latency["p50"] <= latency["p90"] <= latency["p99"] \
            <= latency["max"], name
        assert latency["min"] <= latency["mean"] <= latency["max"], name
        assert isinstance(metrics["grace_periods"], int) and metrics["grace_periods"] > 0
        # Every request waits for a grace period; no grace period serves more than all of them.
        assert 1 <= metrics["batching"] <= latency["count"]


def test_report_has_funclatency_histograms(small_run):
    _, out = small_run
    report = (out / "report.txt").read_text(encoding="utf-8")
    assert report.count(FUNCLATENCY_HEADER) == 2  # one per variant
    assert "==> variant default" in report and "==> variant wake_from_gp" in report
    assert "Function = synchronize_rcu" in report


def test_run_prints_table_and_location(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["run", str(BUNDLED), "--out", str(out), "--no-progress",
                 "--variant", "default"] + TINY) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "completion time (s)" in captured.out
    assert f"results written to {out}/" in captured.out
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert list(summary["variants"]) == ["default"]


# ------------------------------------------------------------------ bad input, real process

def run_cli(args, cwd):
    """Run ``python -m rcusim`` with `args`; return (returncode, stderr)."""
    proc = subprocess.run([sys.executable, "-m", "rcusim"] + args, cwd=cwd,
                          capture_output=True, timeout=120)
    return proc.returncode, proc.stderr.decode("utf-8", "backslashreplace")


def assert_one_error_line(returncode, stderr, *fragments):
    assert returncode == 2, stderr
    assert "Traceback" not in stderr, stderr
    assert stderr.endswith("\n") and stderr.count("\n") == 1, stderr
    assert stderr.startswith("rcusim: error: "), stderr
    for fragment in fragments:
        assert fragment in stderr, (fragment, stderr)


def write(tmp_path, text, name="scenario.yaml"):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _fanout_text(value):
    text = bundled_text().replace("  HZ: 1000\n", f"  HZ: 1000\n  CONFIG_RCU_FANOUT: {value}\n", 1)
    return text, ["kernel.CONFIG_RCU_FANOUT", f"line {line_of(text, 'CONFIG_RCU_FANOUT:')}",
                  "from 2 to 64"]


def _case_missing_file(tmp_path):
    return ["run", str(tmp_path / "missing.yaml")], ["missing.yaml", "not found"]


def _case_malformed_yaml(tmp_path):
    path = write(tmp_path, "name: x\nhardware: {profile: x86-64-server-2023, nr_cpus: 4\n"
                           "workloads: []\n")
    # The unclosed "{" of line 2 is found when line 3 begins.
    return ["run", str(path)], ["malformed YAML", f"{path} line 3)"]


def _case_unknown_key(tmp_path):
    text = bundled_text() + "bogus_key: 1\n"
    path = write(tmp_path, text)
    return ["run", str(path)], ["bogus_key", "unknown key", f"line {line_of(text, 'bogus_key')}"]


def _case_nr_cpus_zero(tmp_path):
    text = bundled_text().replace("  nr_cpus: 64", "  nr_cpus: 0", 1)
    path = write(tmp_path, text)
    return ["run", str(path)], ["hardware.nr_cpus", "0 is out of range",
                                f"line {line_of(text, 'nr_cpus: 0')}"]


def _case_fanout_1(tmp_path):
    text, fragments = _fanout_text(1)
    return ["run", str(write(tmp_path, text))], fragments


def _case_fanout_65(tmp_path):
    text, fragments = _fanout_text(65)
    return ["run", str(write(tmp_path, text))], fragments


def _noise_text(stream):
    return bundled_text().replace("\nvariants:", f"  - kind: noise\n    irq: {stream}\n\nvariants:", 1)


def _case_nohz_full_without_offloading(tmp_path):
    text = bundled_text().replace("CONFIG_RCU_NOCB_CPU: true", "CONFIG_RCU_NOCB_CPU: false", 1).replace(
        'bootargs: "rcu_nocbs=all"', 'bootargs: "nohz_full=1-63"', 1)
    return ["run", str(write(tmp_path, text))], ["kernel.bootargs", "nohz_full needs CONFIG_NO_HZ_FULL=y",
                                                 "allowed: set kernel.CONFIG_RCU_NOCB_CPU: true",
                                                 f"line {line_of(text, 'nohz_full=')}"]


def _case_rcuscale_parameter_in_a_scenario(tmp_path):
    return (["run", str(BUNDLED), *TINY, "--set", "kernel.bootargs=rcuscale.gp_async=1"],
            ["kernel.bootargs", "rcuscale.gp_async is a parameter of the rcuscale module",
             "allowed: 'python -m rcusim rcuscale --bootargs ...'"])


def _case_records_not_an_option(tmp_path):
    return ["run", str(BUNDLED), "--set", "run.records=few"], ["run.records", "'few'", "all", "sample", "none"]


def _case_negative_noise_rate(tmp_path):
    text = _noise_text("{rate_hz: -5, median_us: 5, p99_us: 40}")
    return ["run", str(write(tmp_path, text))], ["workloads[1].irq.rate_hz", "-5",
                                                 f"line {line_of(text, 'irq:')}"]


def _case_noise_over_a_cpu(tmp_path):
    text = _noise_text("{rate_hz: 20000, median_us: 60, p99_us: 60}")
    return ["run", str(write(tmp_path, text))], ["workloads[1].irq", "occupy", f"line {line_of(text, 'irq:')}"]


def _case_idle_states_out_of_order(tmp_path):
    table = ("  idle_states: [{name: POLL, exit_latency_us: 0, target_residency_us: 0, polling: true},"
             " {name: C6, exit_latency_us: 290, target_residency_us: 800},"
             " {name: C1, exit_latency_us: 1, target_residency_us: 1}]\n")
    text = bundled_text().replace("\nkernel:", "\n" + table + "\nkernel:", 1)
    return ["run", str(write(tmp_path, text))], ["hardware.idle_states", "ordered by depth"]


def _case_topology_not_adding_up(tmp_path):
    return (["run", str(BUNDLED), *TINY, "--set", "hardware.topology.sockets=2",
             "--set", "hardware.topology.llcs_per_socket=8", "--set", "hardware.topology.cores_per_llc=4",
             "--set", "hardware.topology.smt=2"],
            ["hardware.topology", "not nr_cpus = 64"])


def _case_governor_not_modelled(tmp_path):
    return (["run", str(BUNDLED), *TINY, "--set", "kernel.bootargs=cpuidle.governor=teo"],
            ["cpuidle.governor=teo", "not modelled", "cpuidle.governor=menu"])


def _case_out_exists(tmp_path):
    (tmp_path / "old").mkdir()
    return ["run", str(BUNDLED), *TINY, "--out", str(tmp_path / "old")], ["--out", "exists", "--force"]


def _case_out_unwritable(tmp_path):
    # Found before the run, not after it: /proc takes no new directories.
    return ["run", str(BUNDLED), *SMALL, "--out", "/proc/rcusim-results/x"], ["--out", "cannot write", "/proc"]


def _case_bad_bootargs_token(tmp_path):
    return (["run", str(BUNDLED), "--set", "kernel.bootargs=rcutree.blimit=abc"],
            ["kernel.bootargs", "rcutree.blimit=abc"])


def _case_set_without_equals(tmp_path):
    return ["run", str(BUNDLED), "--set", "hardware.nr_cpus"], ["--set", "hardware.nr_cpus",
                                                                 "KEY=VALUE"]


def _case_unknown_variant(tmp_path):
    return ["run", str(BUNDLED), "--variant", "nope"], ["variant", "nope", "wake_from_gp"]


def _case_negative_seed(tmp_path):
    return ["run", str(BUNDLED), "--seed", "-1"], ["--seed", "-1"]


def _case_unknown_subcommand(tmp_path):
    return ["frobnicate", str(BUNDLED)], ["frobnicate", "command"]


def _case_out_is_a_file(tmp_path):
    existing = tmp_path / "a_file"
    existing.write_text("keep me\n")
    return ["run", str(BUNDLED), "--out", str(existing)] + TINY, ["--out", "a_file"]


def _case_control_character(tmp_path):
    text = bundled_text().replace("name: sync_rcu_10k", "name: sync\x07rcu", 1)
    path = write(tmp_path, text)
    return ["run", str(path)], ["malformed YAML", f"line {line_of(text, 'name: sync')}"]


def _case_non_utf8_set(tmp_path):
    return ["run", str(BUNDLED), "--set", b"name=\xff"], ["--set", "not UTF-8"]


BAD_CASES = {
    "missing file": _case_missing_file,
    "malformed YAML": _case_malformed_yaml,
    "unknown key": _case_unknown_key,
    "nr_cpus 0": _case_nr_cpus_zero,
    "CONFIG_RCU_FANOUT 1": _case_fanout_1,
    "CONFIG_RCU_FANOUT 65": _case_fanout_65,
    "bad bootargs token": _case_bad_bootargs_token,
    "--set without =": _case_set_without_equals,
    "unknown --variant": _case_unknown_variant,
    "negative --seed": _case_negative_seed,
    "unknown subcommand": _case_unknown_subcommand,
    "--out is a file": _case_out_is_a_file,
    "control character in file": _case_control_character,
    "non-UTF-8 --set": _case_non_utf8_set,
    "--out exists": _case_out_exists,
    "--out unwritable": _case_out_unwritable,
    "records not an option": _case_records_not_an_option,
    "negative noise rate": _case_negative_noise_rate,
    "noise over a CPU": _case_noise_over_a_cpu,
    "idle states out of order": _case_idle_states_out_of_order,
    "governor not modelled": _case_governor_not_modelled,
    "topology not adding up": _case_topology_not_adding_up,
    "nohz_full without offloading": _case_nohz_full_without_offloading,
    "rcuscale parameter in a scenario": _case_rcuscale_parameter_in_a_scenario,
}


@pytest.mark.parametrize("case", list(BAD_CASES))
def test_bad_input_through_the_process(case, tmp_path):
    args, fragments = BAD_CASES[case](tmp_path)
    out = tmp_path / "out"
    if "--out" not in args:
        args = args + ["--out", str(out)]
    before = sorted(p.name for p in tmp_path.iterdir())
    returncode, stderr = run_cli(args + ["--no-progress"], cwd=tmp_path)
    assert_one_error_line(returncode, stderr, *fragments)
    assert not out.exists()
    # Nothing new: no results directory, no temporary directory, no results/ default.
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    if case == "--out is a file":
        assert (tmp_path / "a_file").read_text() == "keep me\n"


# ------------------------------------------------------------------ regressions, in-process

@pytest.mark.parametrize("text_change, fragments", [
    (("loops: 1000", "loops: " + "9" * 5000), ["workloads[0].loops", "not a valid int"]),
    (("seed: 0", "seed: 2001-13-45"), ["seed", "not a valid timestamp"]),
], ids=["5000-digit number", "impossible date"])
def test_unbuildable_yaml_scalars(text_change, fragments, tmp_path, capsys):
    text = bundled_text().replace(*text_change, 1)
    path = write(tmp_path, text)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    line = line_of(text, text_change[1][:12])
    assert_one_error_line(2, err, *fragments, f"line {line}")
    assert not out.exists()


@pytest.mark.parametrize("override, fragments", [
    ("hardware.costs.tick_ns=99999999999999999999", ["hardware.costs.tick_ns", "out of range"]),
    ("workloads.0.think_us=1.0e+30", ["workloads[0].think_us", "out of range"]),
    ("workloads.0.start_us=1.0e+30", ["workloads[0].start_us", "out of range"]),
])
def test_values_too_large_for_the_engine_are_refused(override, fragments, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(BUNDLED), "--out", str(out), "--no-progress",
                 "--set", override] + TINY) == 2
    assert_one_error_line(2, capsys.readouterr().err, *fragments)
    assert not out.exists()


def test_boot_parameters_beyond_the_engines_c_types_run(tmp_path, capsys):
    # The kernel accepts any long / ulong for these; a value that large means "no limit".
    out = tmp_path / "out"
    bootargs = "rcutree.blimit=9223372036854775807 rcutree.jiffies_till_sched_qs=18446744073709551614"
    assert main(["run", str(BUNDLED), "--out", str(out), "--no-progress",
                 "--set", f"kernel.bootargs={bootargs}"] + TINY) == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["variants"]["default"]["metrics"]["latency_us"]["count"] == 8 * 2


def test_out_under_a_file_is_refused_after_the_run(tmp_path, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    out = blocker / "results"
    assert main(["run", str(BUNDLED), "--out", str(out), "--no-progress"] + TINY) == 2
    assert_one_error_line(2, capsys.readouterr().err, "--out", "cannot write results")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker"]


def test_error_message_format_is_one_line_with_key_and_line(tmp_path):
    # The documented form: "<key.path>: <problem>; allowed: <allowed> (<file> line <N>)".
    text = bundled_text().replace("  HZ: 1000", "  HZ: 123", 1)
    path = write(tmp_path, text)
    returncode, stderr = run_cli(["run", str(path), "--out", str(tmp_path / "out")], tmp_path)
    assert_one_error_line(returncode, stderr)
    pattern = (r"^rcusim: error: kernel\.HZ: 123 is not allowed; allowed: one of: "
               r"100, 250, 300, 1000 \((?P<file>.+) line (?P<line>\d+)\)\n$")
    m = re.match(pattern, stderr)
    assert m, stderr
    assert m["file"] == str(path) and int(m["line"]) == line_of(text, "HZ: 123")


def test_force_replaces_an_existing_results_directory(tmp_path):
    out = tmp_path / "out"
    (out / "stale").mkdir(parents=True)
    assert main(["run", str(BUNDLED), "--out", str(out), "--no-progress", *TINY]) == 2
    assert (out / "stale").exists()
    assert main(["run", str(BUNDLED), "--out", str(out), "--no-progress", "--force", *TINY]) == 0
    assert not (out / "stale").exists() and (out / "summary.json").exists()


# ------------------------------------------------------------------ provenance
def test_summary_records_the_resolved_configuration_and_the_command(tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(BUNDLED), "--out", str(out), "--no-progress", *TINY,
                 "--set", "kernel.HZ=250", "--variant", "wake_from_gp"]) == 0
    s = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    resolved = s["provenance"]["variants"]["wake_from_gp"]
    assert list(s["provenance"]["variants"]) == ["wake_from_gp"]
    assert resolved["params"]["hz"] == 250 and resolved["params"]["jiffies_till_first_fqs"] == 1
    assert resolved["params"]["rcu_normal_wake_from_gp"] == 1
    assert resolved["hardware"]["costs"]["ctxsw_ns"] > 0 and resolved["hardware"]["cost_sources"]
    # rcu_init_geometry() for 64 CPUs, leaf 16, fanout 64: a root over 4 leaves of 16 CPUs.
    assert resolved["rcu_node_tree"] == {"rcu_num_lvls": 2, "num_rcu_lvl": [1, 4], "levelspread": [4, 16],
                                         "rcu_num_nodes": 5}
    assert s["provenance"]["scenario"]["kernel"]["HZ"] == 250  # the --set applied
    assert "--set kernel.HZ=250" in s["invocation"]["command"]


def test_run_from_a_summary_gives_the_same_results(tmp_path):
    first, again = tmp_path / "first", tmp_path / "again"
    assert main(["run", str(BUNDLED), "--out", str(first), "--no-progress", *TINY, "--seed", "3",
                 "--variant", "default"]) == 0
    assert main(["run", "--from", str(first / "summary.json"), "--out", str(again), "--no-progress"]) == 0
    a, b = (json.loads((d / "summary.json").read_text(encoding="utf-8")) for d in (first, again))
    for s in (a, b):
        del s["wall_clock"], s["invocation"]
    assert a == b and a["seed"] == 3
    # --set seed=... changes the recorded seed as it would a file's, and a bad one is refused.
    other = tmp_path / "other"
    assert main(["run", "--from", str(first / "summary.json"), "--out", str(other), "--no-progress",
                 "--set", "seed=4"]) == 0
    assert json.loads((other / "summary.json").read_text(encoding="utf-8"))["seed"] == 4
    assert main(["run", "--from", str(first / "summary.json"), "--out", str(tmp_path / "bad"), "--set", "seed=-1",
                 "--seed", "5"]) == 2


def test_show_config_prints_the_resolved_configuration(capsys):
    assert main(["show-config", str(BUNDLED), "--set", "kernel.HZ=250", "--variant", "default"]) == 0
    shown = yaml.safe_load(capsys.readouterr().out)
    v = shown["variants"]["default"]
    assert v["params"]["hz"] == 250 and v["params"]["jiffies_till_first_fqs"] == 1
    assert v["workloads"][0]["tasks"] == 10000 and v["memory_estimate_mib"] > 0


def test_show_config_gives_the_rcu_node_tree(capsys):
    assert main(["show-config", str(ROOT / "scenarios" / "expedited_storm_4096.yaml"),
                 "--variant", "leaf16_mutex", "--variant", "leaf64_mutex"]) == 0
    shown = yaml.safe_load(capsys.readouterr().out)["variants"]
    # 4096 CPUs, fanout 64: leaves of 16 CPUs need 256 leaves under 4 interior nodes;
    # leaves of 64 CPUs, 64 leaves under the root.
    assert shown["leaf16_mutex"]["rcu_node_tree"] == {"rcu_num_lvls": 3, "num_rcu_lvl": [1, 4, 256],
                                                      "levelspread": [4, 64, 16], "rcu_num_nodes": 261}
    assert shown["leaf64_mutex"]["rcu_node_tree"] == {"rcu_num_lvls": 2, "num_rcu_lvl": [1, 64],
                                                      "levelspread": [64, 64], "rcu_num_nodes": 65}


def test_show_config_gives_no_rcu_node_tree_for_classic_rcu(capsys):
    assert main(["show-config", str(ROOT / "scenarios" / "rt_latency_up.yaml")]) == 0
    for name, v in yaml.safe_load(capsys.readouterr().out)["variants"].items():
        assert "rcu_node_tree" in v and v["rcu_node_tree"] is None, name


@pytest.mark.parametrize("args, fragment", [
    (["run", "--from", "no/such/summary.json"], "not found"),
    (["run", "--from", "/dev/zero"], "not a regular file"),
    (["run", str(BUNDLED), "--from", "x.json"], "not both"),
    (["run"], "not both"),
])
def test_bad_run_from(args, fragment, tmp_path):
    returncode, stderr = run_cli(args + ["--no-progress"], cwd=tmp_path)
    assert_one_error_line(returncode, stderr, fragment)


def test_a_patch_the_release_has_runs_with_a_one_line_note(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(BUNDLED), "--set", "kernel.release=7.0", "--variant", "wake_from_gp", *TINY,
                 "--out", str(out), "--no-progress"]) == 0
    assert capsys.readouterr().err == ("rcusim: note: kernel.patches: rcu-sr-normal-wake-from-gp is already in "
                                       "release 7.0 (since v6.9): nothing to backport\n")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["provenance"]["variants"]["wake_from_gp"]["params"]["rcu_normal_wake_from_gp"] is True


def test_only_the_variants_run_are_validated(tmp_path, capsys):
    broken = ["--set", "variants.wake_from_gp.kernel.HZ=7"]
    assert main(["show-config", str(BUNDLED), *broken]) == 2
    assert "variants.wake_from_gp.kernel.HZ: 7 is not allowed" in capsys.readouterr().err
    assert main(["show-config", str(BUNDLED), *broken, "--variant", "default"]) == 0
    assert list(yaml.safe_load(capsys.readouterr().out)["variants"]) == ["default"]
    out = tmp_path / "out"
    assert main(["run", str(BUNDLED), *broken, *TINY, "--variant", "default", "--out", str(out), "--no-progress"]) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert list(summary["variants"]) == ["default"]
    assert main(["run", str(BUNDLED), *TINY, "--variant", "nope", "--out", str(tmp_path / "x"), "--no-progress"]) == 2
    assert "--variant: 'nope' is not a variant of the scenario" in capsys.readouterr().err


def test_a_run_stopped_by_its_time_limit_says_so_and_exits_3(tmp_path):
    out = tmp_path / "out"
    returncode, stderr = run_cli(["run", str(ROOT / "scenarios" / "gp_floor_64cpu.yaml"), "--variant", "v6_8",
                                  "--set", "run.max_sim_time_s=0.5", "--out", str(out), "--no-progress"], cwd=tmp_path)
    assert returncode == 3, stderr
    assert "v6_8 is incomplete" in stderr and "of 1,000 calls finished" in stderr and "Traceback" not in stderr
    m = json.loads((out / "summary.json").read_text(encoding="utf-8"))["variants"]["v6_8"]["metrics"]
    assert m["finished"] is False and m["completion_time_s"] is None


def test_version(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "rcusim", "--version"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and re.match(r"rcusim \d+\.\d+", proc.stdout), proc.stdout


def table_columns(text: str) -> dict[str, dict[str, str]]:
    """Per column header of a printed table, its cells by metric, over all blocks."""
    columns, header = {}, None
    for line in text.splitlines():
        if line.startswith("metric "):
            header = line.split()[1:]
        elif not line.strip():
            header = None
        elif header and not line.startswith("-"):
            cells = re.split(r"\s{2,}", line.strip())
            for name, cell in zip(header, cells[1:], strict=True):
                columns.setdefault(name, {})[cells[0]] = cell
    return columns


def test_wide_table_and_report_fit_a_terminal(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["run", str(ROOT / "scenarios" / "gp_floor_64cpu.yaml"), "--set", "workloads.0.loops=3",
                 "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    report = (out / "report.txt").read_text(encoding="utf-8")
    for text in (printed, report):
        assert max(len(line) for line in text.splitlines()) <= 100
    variants = json.loads((out / "summary.json").read_text(encoding="utf-8"))["variants"]
    assert len(variants) == 8
    columns = table_columns(printed)
    first = next(iter(variants))
    for name, v in variants.items():
        assert columns[name]["latency mean (µs)"] == f"{v['metrics']['latency_us']['mean']:.3f}"
        assert columns[name]["events"] == str(v["events"])
        assert f"==> variant {name}" in report
        assert f"wakeups.ipi {v['metrics']['sched']['wakeups']['ipi']}" in report
        if name != first:
            ratio = v["metrics"]["grace_periods"] / variants[first]["metrics"]["grace_periods"]
            assert columns[f"{name}/{first}"]["grace periods"] == f"{ratio:.3f}"

# ------------------------------------------------------------------ SIGTERM during a run

def _catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler for SIGTERM (rcusim's main() installs one)."""
    status = Path(f"/proc/{pid}/status").read_text()
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    return bool(caught & 1 << (signal.SIGTERM - 1))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_sigterm_during_a_run_leaves_nothing_and_exits_143(tmp_path):
    # Both variants of 10,000 callers x 300 loops: several seconds of engine and writing, and
    # 3 million rows a variant, which stream into a file in TMPDIR.
    spill = tmp_path / "spill"
    spill.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "rcusim", "run", str(BUNDLED), "--set", "workloads.0.loops=300",
                             "--out", str(tmp_path / "out"), "--no-progress"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(spill)})
    # Until main() handles SIGTERM, the signal's default action would end the process.
    while proc.poll() is None and not _catches_sigterm(proc.pid):
        time.sleep(0.05)
    # Into the run: its first chunk of rows is in the file.
    deadline = time.monotonic() + 120
    while proc.poll() is None and not any(spill.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None and any(spill.iterdir()), "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert err == "rcusim: terminated\n"
    # No results directory, partial or whole, no temporary directory and no file of rows.
    assert list(tmp_path.iterdir()) == [spill] and list(spill.iterdir()) == []


def _replace_results(tmp_path, monkeypatch, target: str, when=lambda *args: True):
    """Run with --force over an earlier result, `target` (a dotted name) sending this process
    SIGTERM when called with arguments for which `when` holds; (status, the earlier summary.json)."""
    out = tmp_path / "out"
    assert main(["run", str(BUNDLED), "--out", str(out), "--no-progress", *TINY, "--variant", "default"]) == 0
    before = (out / "summary.json").read_bytes()
    module, _, name = target.rpartition(".")
    real = getattr(__import__(module, fromlist=[name]), name)

    def terminating(*args, **kwargs):
        if when(*args):
            os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(target, terminating)
    return main(["run", str(BUNDLED), "--out", str(out), "--no-progress", *TINY, "--seed", "1", "--force"]), before


def test_sigterm_while_writing_keeps_the_old_results_and_leaves_no_temporary_directory(tmp_path, monkeypatch):
    status, before = _replace_results(tmp_path, monkeypatch, "rcusim.commands.outdir.save_result_figures")
    assert status == 143
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert (tmp_path / "out" / "summary.json").read_bytes() == before


def test_sigterm_while_removing_the_old_results_leaves_no_temporary_directory(tmp_path, monkeypatch):
    status, _ = _replace_results(tmp_path, monkeypatch, "shutil.rmtree",
                                 when=lambda path, *rest: ".old-" in str(path) and Path(path).exists())
    assert status == 143
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["seed"] == 1 and list(summary["variants"]) == ["default", "wake_from_gp"]
