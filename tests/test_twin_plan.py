"""The real-kernel twin's mapping of a scenario onto an image, without booting anything:
finding the image (rcusim.twin.image), aligning the scenario's Kconfig with it
(plan.image_overrides), refusing what the guest cannot run (plan.plan_variant), and the
script the guest runs. Each refusal must be one ScenarioError line naming the key.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario
from rcusim.twin.image import MODULES, find_image
from rcusim.twin.plan import TRACE_EVENTS, check_probes, image_overrides, plan_variant, written_keys
from rcusim.twin.run import align_scenario, boot_order

ROOT = Path(__file__).resolve().parents[1]
SHARED_KERNEL = ROOT.parent / "shared" / "kernel"
TWIN = ROOT / "rcusim" / "twin"

# A PREEMPT_DYNAMIC image with a built-in voluntary model, 8 CPUs at most, HZ=1000.
FAKE_CONFIG = """\
#
# Automatically generated file; DO NOT EDIT.
# Linux/x86 6.12.117 Kernel Configuration
#
CONFIG_NR_CPUS=8
CONFIG_RCU_FANOUT=64
CONFIG_RCU_FANOUT_LEAF=16
CONFIG_RCU_NOCB_CPU=y
CONFIG_RCU_LAZY=y
CONFIG_PREEMPT_RCU=y
CONFIG_PREEMPTION=y
CONFIG_PREEMPT_DYNAMIC=y
CONFIG_PREEMPT_VOLUNTARY=y
# CONFIG_PREEMPT is not set
# CONFIG_RCU_BOOST is not set
CONFIG_HZ_1000=y
CONFIG_HZ=1000
"""


def make_image(folder: Path, config: str = FAKE_CONFIG, modules=MODULES) -> Path:
    """A fake image folder: the config text, an empty bzImage and empty modules."""
    (folder / "modules").mkdir(parents=True)
    (folder / "config").write_text(config)
    (folder / "bzImage").write_bytes(b"")
    for m in modules:
        (folder / "modules" / m).write_bytes(b"")
    return folder


@pytest.fixture
def image(tmp_path):
    return find_image(make_image(tmp_path / "linux-6.12-hz1000"), 1000)


def scenario(workloads=None, hardware=None, kernel=None) -> dict:
    return {"name": "twin_plan",
            "hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2, **(hardware or {})},
            "kernel": {"release": "6.12", "HZ": 1000, **(kernel or {})},
            "workloads": workloads or [{"kind": "sync_loop", "start": "barrier", "tasks": 1, "loops": 3, "cpus": "0-1"}]}


def plan(image, data: dict, **kw):
    s = load_scenario(data)
    kw.setdefault("any_profile", True)
    return plan_variant("default", s.variants["default"], image, raw=s.asdict(), **kw)


def refusal(image, data: dict, **kw) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        plan(image, data, **kw)
    err = info.value
    assert "\n" not in str(err), str(err)
    return err


# ------------------------------------------------------------------ images

def test_find_image_in_shared_kernel_folder():
    """The shared cache is a folder of images: HZ picks one, and its config tells the
    version and the built-in preemption model (breaks if the config parsing changes)."""
    if not (SHARED_KERNEL / "linux-6.12-hz1000" / "bzImage").is_file():
        pytest.skip(f"no prebuilt image at {SHARED_KERNEL}")
    img = find_image(SHARED_KERNEL, 1000)
    assert img.path.name == "linux-6.12-hz1000"
    assert (img.version, img.release, img.hz) == ("6.12.117", "6.12", 1000)
    assert img.enabled("CONFIG_PREEMPT_DYNAMIC") and img.preempt_default == "voluntary"
    assert img.config["CONFIG_NR_CPUS"] == "64" and img.config["CONFIG_DEBUG_INFO_NONE"] == "y"
    if (SHARED_KERNEL / "linux-6.12-hz250").is_dir():
        assert find_image(SHARED_KERNEL, 250).path.name == "linux-6.12-hz250"


def test_find_image_fake_folder_and_folder_of_images(tmp_path):
    """An image folder is found as itself and inside a parent folder, by its HZ."""
    img = make_image(tmp_path / "k" / "a")
    assert find_image(img, 1000).path == img
    assert find_image(tmp_path / "k", 1000).path == img
    found = find_image(img, 1000)
    assert found.version == "6.12.117" and found.config["CONFIG_PREEMPT"] == "n"


def test_find_image_refusals(tmp_path):
    """No image, another HZ, or a missing module are refused with the key to change."""
    with pytest.raises(ScenarioError, match=r"^--kernel: no kernel image at"):
        find_image(tmp_path, 1000)
    make_image(tmp_path / "a")
    with pytest.raises(ScenarioError, match=r"^kernel\.HZ: no image built with HZ=250"):
        find_image(tmp_path, 250)
    make_image(tmp_path / "b" / "x", modules=("torture.ko",))
    with pytest.raises(ScenarioError, match=r"^kernel\.HZ: .*rcuscale\.ko"):
        find_image(tmp_path / "b", 1000)


def test_fragment_options_are_those_of_the_shared_images():
    """Every line of rcusim.config holds in the prebuilt images' .config (built by
    KERNEL-TWIN.md's recipe): the fragment asks for nothing the recipe's images lack."""
    configs = sorted(SHARED_KERNEL.glob("*/config"))
    if not configs:
        pytest.skip(f"no prebuilt image at {SHARED_KERNEL}")
    wanted = [ln for ln in (TWIN / "rcusim.config").read_text().splitlines()
              if re.match(r"^CONFIG_\w+=|^# CONFIG_\w+ is not set$", ln)]
    assert len(wanted) > 20 and not any(ln.startswith("CONFIG_HZ") for ln in wanted)
    for config in configs:
        have = set(config.read_text().splitlines())
        for line in wanted:
            if line.startswith("#"):
                assert f"{line.split()[1]}=y" not in have, (config, line)
            else:
                assert line in have, (config, line)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_build_script_refuses_bad_input_before_building(tmp_path):
    """Usage errors exit 2, a missing tree exits 1, each with one "error:" line first."""
    script = TWIN / "build-kernel-image.sh"

    def run(*args):
        return subprocess.run(["bash", str(script), *map(str, args)], capture_output=True, text=True, timeout=30)
    done = run("--help")
    assert done.returncode == 0 and "--config-only" in done.stdout
    for args, status, fragment in ((("only-one",), 2, "expected KERNEL_TREE and OUT_DIR"),
                                   ((tmp_path, tmp_path / "o", "--hz", "500"), 2, "--hz 500"),
                                   ((tmp_path, tmp_path / "o", "--jobs", "0"), 2, "--jobs 0"),
                                   ((tmp_path / "none", tmp_path / "o"), 1, "no kernel tree"),
                                   ((tmp_path, tmp_path / "o"), 1, "not a Linux source tree")):
        done = run(*args)
        assert done.returncode == status, (args, done.stderr)
        assert done.stderr.startswith("build-kernel-image.sh: error: ") and fragment in done.stderr.splitlines()[0]
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------------ Kconfig alignment

def test_image_overrides_refuses_another_release(image):
    """A 6.6 scenario cannot run on a 6.12 image."""
    s = load_scenario(scenario(kernel={"release": "6.6"}))
    with pytest.raises(ScenarioError) as info:
        image_overrides(s.variants["default"].kernel, image, set())
    assert info.value.key == "kernel.release" and "6.12.117" in str(info.value)


def test_image_overrides_refuses_a_written_value_that_differs(image):
    """A Kconfig value the scenario writes is kept, so one that differs from the image's
    refuses the run instead of being silently replaced."""
    data = scenario(kernel={"CONFIG_NR_CPUS": 16})
    s = load_scenario(data)
    written = written_keys(s.asdict(), "default", "kernel")
    assert "CONFIG_NR_CPUS" in written
    with pytest.raises(ScenarioError) as info:
        image_overrides(s.variants["default"].kernel, image, written)
    assert info.value.key == "kernel.CONFIG_NR_CPUS"
    assert "CONFIG_NR_CPUS=8" in str(info.value) and "\n" not in str(info.value)


def test_image_overrides_aligns_unset_values_and_adds_preempt(image):
    """Unset options take the image's values and the built-in preemption model is written
    out; applying the overrides leaves nothing to align (align_scenario relies on it)."""
    data = scenario(kernel={"CONFIG_RCU_FANOUT_LEAF": 16})
    s = load_scenario(data)
    written = written_keys(s.asdict(), "default", "kernel")
    over = image_overrides(s.variants["default"].kernel, image, written)
    for expected in ("kernel.CONFIG_NR_CPUS=8", "kernel.CONFIG_RCU_NOCB_CPU=true", "kernel.CONFIG_RCU_LAZY=true",
                     "kernel.CONFIG_PREEMPT_DYNAMIC=true", "kernel.bootargs=preempt=voluntary"):
        assert expected in over, over
    assert not any(o.startswith("kernel.CONFIG_RCU_FANOUT") for o in over), over
    aligned = load_scenario(data, overrides=over).variants["default"].kernel
    assert aligned.CONFIG_NR_CPUS == 8 and aligned.CONFIG_RCU_NOCB_CPU and "preempt=voluntary" in aligned.bootargs
    assert image_overrides(aligned, image, written) == []


def test_image_overrides_gives_the_patches_its_stable_release_carries(image):
    """A 6.12.117 image carries 6.12.31's backport of the 0.70 ms base slice and 6.12.78's of
    the idle loop's tick rule; a patch it does not carry is refused."""
    s = load_scenario(scenario())
    over = image_overrides(s.variants["default"].kernel, image, set())
    assert "kernel.patches=[sched-base-slice-700us, sched-newidle-proportional, sched-idle-consolidate-special-cases]" in over, over
    aligned = load_scenario(scenario(), overrides=over).variants["default"].kernel
    assert aligned.switches.idle_stop_tick_after_tick and aligned.switches.base_slice_700us
    s = load_scenario(scenario(kernel={"patches": ["rcu-gp-kthread-cpu-qs-early"]}))
    with pytest.raises(ScenarioError) as info:
        image_overrides(s.variants["default"].kernel, image, {"patches"})
    assert info.value.key == "kernel.patches" and "does not carry" in str(info.value)


def test_image_overrides_keeps_a_chosen_preemption_model(image):
    """preempt= on the scenario's command line is the scenario's choice: not overridden."""
    s = load_scenario(scenario(kernel={"bootargs": "preempt=full", "CONFIG_PREEMPT_DYNAMIC": True}))
    over = image_overrides(s.variants["default"].kernel, image, set())
    assert not any(o.startswith("kernel.bootargs") for o in over), over


# ------------------------------------------------------------------ extra probes
PLACE = "p:kprobes/pv place_entity+0x16 V=%ax:s64 vlag=+0x78(%bx):s64"


def test_extra_tracepoints_and_kprobes_are_enabled_beside_the_plans_own(image):
    script = plan(image, scenario(), events=["irq_vectors/local_timer_entry"],
                  kprobes=[PLACE, "r:kprobes/rq requeue_delayed_entity"]).script.splitlines()
    define = [i for i, line in enumerate(script) if "kprobe_events" in line]
    assert script[define[0]] == f"echo {shlex.quote(PLACE)} >> /sys/kernel/tracing/kprobe_events"
    assert len(define) == 2 and max(define) < script.index("echo 1 > tracing_on")
    enabled = [line for line in script if line.endswith("/enable")]
    assert enabled == [f"echo 1 > events/{e}/enable" for e in TRACE_EVENTS + (
        "irq_vectors/local_timer_entry", "kprobes/pv", "kprobes/rq")]
    assert "kprobe_events" not in plan(image, scenario()).script


@pytest.mark.parametrize("events, kprobes, key", [
    (["sched/sched_switch"], [], "--trace-event"),            # traced already
    (["irq_vectors"], [], "--trace-event"),                   # no NAME
    (["irq/x; reboot"], [], "--trace-event"),
    ([], ["place_entity"], "--kprobe"),                       # no p:kprobes/NAME
    ([], ["p:kprobes/a place_entity", "p:kprobes/a pick_eevdf"], "--kprobe"),  # one NAME twice
    ([], ["p:kprobes/a place_entity\necho x"], "--kprobe"),
    ([], ["p:kprobes/a place_entity\n"], "--kprobe"),
])
def test_a_probe_the_plan_cannot_take_is_refused(events, kprobes, key):
    with pytest.raises(ScenarioError) as info:
        check_probes(events, kprobes)
    assert info.value.key == key and "\n" not in str(info.value)


def test_probes_are_refused_with_sim_only(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps(scenario()))
    done = subprocess.run([sys.executable, "-m", "rcusim", "kernel", str(path), "--sim-only", "--kprobe", PLACE,
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--sim-only" in done.stderr, done.stderr
    assert not (tmp_path / "out-sim").exists()


# ------------------------------------------------------------------ refusals

def test_refuses_a_profile_other_than_the_guest_without_any_profile(image):
    err = refusal(image, scenario(), any_profile=False)
    assert err.key == "variants.default.hardware.profile" and "--any-profile" in str(err)


def test_the_guests_own_profile_needs_no_any_profile(image):
    """A scenario on the guest's profile (qemu-tcg) plans without --any-profile."""
    assert plan(image, scenario(hardware={"profile": "qemu-tcg"}), any_profile=False).nr_cpus == 2


def test_refuses_written_hardware_costs(image):
    err = refusal(image, scenario(hardware={"costs": {"ctxsw_ns": 1500}}))
    assert err.key == "variants.default.hardware.costs"


def test_refuses_one_cpu(image):
    err = refusal(image, scenario(hardware={"nr_cpus": 1}, workloads=[{"kind": "sync_loop", "start": "barrier", "tasks": 1, "loops": 2}]))
    assert err.key == "variants.default.hardware.nr_cpus" and "one CPU" in str(err)


def test_refuses_more_vcpus_than_host_cores_on_the_real_clock(image, monkeypatch):
    """On the real clock each vCPU needs a host core; icount takes them."""
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    data = scenario(hardware={"nr_cpus": 4}, workloads=[{"kind": "sync_loop", "start": "barrier", "tasks": 1, "loops": 2}])
    err = refusal(image, data, clock="real")
    assert err.key == "variants.default.hardware.nr_cpus" and "--clock icount" in str(err)
    assert plan(image, data, clock="icount").nr_cpus == 4


def test_refuses_expedited_sync_loop(image):
    err = refusal(image, scenario(workloads=[{"kind": "sync_loop", "start": "barrier", "tasks": 1, "loops": 2, "cpus": "0-1",
                                              "primitive": "synchronize_rcu_expedited"}]))
    assert err.key == "variants.default.workloads[0].primitive"


def test_refuses_vfree_after_the_call(image):
    err = refusal(image, scenario(workloads=[{"kind": "sync_loop", "start": "barrier", "tasks": 1, "loops": 2, "cpus": "0-1",
                                              "work_after": "vfree"}]))
    assert err.key == "variants.default.workloads[0].work_after"


def test_refuses_a_readers_workload(image):
    err = refusal(image, scenario(workloads=[{"kind": "sync_loop", "start": "barrier", "tasks": 1, "loops": 2, "cpus": "0-1"},
                                             {"kind": "readers", "length_us": 10, "rate_per_s": 100}]))
    assert err.key == "variants.default.workloads[1].kind" and "readers" in str(err)


def test_the_guests_own_noise_runs_nothing_and_other_noise_is_refused(image):
    """A noise workload of the guest's measured preset (qemu_tcg) is what the guest does anyway:
    nothing runs for it. Other noise has no counterpart in the real run."""
    calls = {"kind": "sync_loop", "start": "barrier", "tasks": 1, "loops": 2, "cpus": "0-1"}
    p = plan(image, scenario(workloads=[calls, {"kind": "noise", "preset": "qemu_tcg"}]))
    assert any("the guest's own noise" in note for note in p.notes)
    assert "noise" not in p.script
    for other in ({"kind": "noise", "preset": "quiet_server"}, {"kind": "noise", "preset": "qemu_tcg", "cpus": "1"}):
        err = refusal(image, scenario(workloads=[calls, other]))
        assert err.key == "variants.default.workloads[1]" and "qemu_tcg" in str(err)


def test_refuses_nohz_full_with_a_sync_loop(image):
    """membarrier(MEMBARRIER_CMD_GLOBAL) returns -EINVAL under nohz_full."""
    err = refusal(image, scenario(kernel={"bootargs": "nohz_full=1"}))
    assert err.key.endswith("kernel.bootargs") and "nohz_full" in str(err)


# ------------------------------------------------------------------ the guest's script

def test_sync_loop_helper_command_line(image):
    """Pinned, nice and think time reach the load helper as -p, -n and -T (ns)."""
    p = plan(image, scenario(workloads=[{"kind": "sync_loop", "start": "barrier", "tasks": 3, "loops": 7, "cpus": "0-1",
                                         "pinned": True, "nice": 5, "think_us": 250, "work_after": "none"}]))
    (run,) = p.sync_loops
    argv = list(run.argv)
    assert argv[0] == "/bin/rcusim_load"
    assert argv[argv.index("-t") + 1] == "3" and argv[argv.index("-l") + 1] == "7"
    assert argv[argv.index("-c") + 1] == "0,1" and argv[argv.index("-o") + 1] == "/out/calls-0.txt"
    assert "-p" in argv and argv[argv.index("-n") + 1] == "5" and argv[argv.index("-T") + 1] == "250000"
    assert "-f" not in argv
    assert shlex.join(run.argv) + " &" in p.script.splitlines()
    assert p.script.index("echo 1 > tracing_on") < p.script.index("/bin/rcusim_load") < p.script.index("wait")
    assert p.script.rstrip().endswith("/trace > /out/trace.txt")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler to build the load helper (apt-get install gcc)")
def test_load_helper_starts_its_calls_once_settled(tmp_path):
    """The load helper, run here, makes its first call SETTLE_US after it starts, then
    ARRIVE_US after its threads have all counted themselves in at the barrier, its main
    thread arriving last."""
    from rcusim.twin.initramfs import GUEST_DIR, build_helper

    source = (GUEST_DIR / "rcusim_load.c").read_text()
    settle_us, arrive_us = (int(re.search(rf"#define {name} (\d+)", source).group(1)) for name in ("SETTLE_US", "ARRIVE_US"))
    out = tmp_path / "calls.txt"
    t = time.monotonic_ns()  # CLOCK_MONOTONIC, the helper's clock
    done = subprocess.run([str(build_helper("rcusim_load")), "-t", "2", "-l", "1", "-c", "0", "-o", str(out)],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0 and "membarrier" in done.stderr:
        pytest.skip(f"this machine refuses membarrier(): {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    starts = [int(line.split()[2]) for line in out.read_text().splitlines()]
    assert len(starts) == 2 and min(starts) - t >= (settle_us + arrive_us) * 1000
    assert settle_us >= 100_000  # some 25 idle GPs of this guest (4 ms each): its start-up's callbacks done


def test_sync_loop_rt_and_plain_helper_command_lines(image):
    """An rt task gets SCHED_FIFO at sched_set_fifo_low()'s priority (-f 1) and no nice; an
    unpinned nice-0 task without think time gets none of -p, -n, -T, -f."""
    p = plan(image, scenario(workloads=[{"kind": "sync_loop", "start": "barrier", "tasks": 1, "loops": 2, "cpus": "1",
                                         "pinned": True, "rt": True, "work_after": "none"}]))
    argv = list(p.sync_loops[0].argv)
    assert argv[argv.index("-f") + 1] == "1" and argv[argv.index("-c") + 1] == "1" and "-p" in argv
    assert "-n" not in argv
    p = plan(image, scenario(workloads=[{"kind": "sync_loop", "start": "barrier", "tasks": 2, "loops": 2, "cpus": "0-1",
                                         "pinned": False, "work_after": "none"}], hardware={"profile": "qemu-tcg"}))
    assert not {"-p", "-n", "-T", "-f"} & set(p.sync_loops[0].argv)


def test_kfree_test_insmod_line(image):
    """The kfree test loads torture.ko, then rcuscale.ko with the workload's parameters and
    waits for its result line; it does not unload it (callbacks into the module may still be
    queued: kfree_scale_cleanup() waits for none)."""
    p = plan(image, scenario(workloads=[{"kind": "kfree_rcu_flood", "kfree_nthreads": 2, "kfree_loops": 4,
                                         "kfree_alloc_num": 1000}]))
    assert p.sync_loops == () and p.rcuscale["kfree_rcu_test"] == 1
    lines = p.script.splitlines()
    insmod = next(ln for ln in lines if ln.startswith("insmod /lib/modules/rcuscale.ko "))
    params = dict(word.split("=") for word in insmod.split()[2:])
    assert params["kfree_rcu_test"] == "1" and params["kfree_nthreads"] == "2"
    assert params["kfree_loops"] == "4" and params["kfree_alloc_num"] == "1000" and params["kfree_mult"] == "1"
    assert lines.index("insmod /lib/modules/torture.ko") < lines.index(insmod)
    # One blocking read of the kernel's log, started before the test, waits for its line:
    # nothing forks or polls while the threads run.
    wait = lines.index("grep -q -F \"Total time taken by all kfree'ers\" /dev/kmsg &")
    assert wait < lines.index("insmod /lib/modules/torture.ko")
    assert lines.index(insmod) < lines.index("wait $done")
    assert "dmesg" not in p.script and "sleep" not in p.script and "rmmod" not in p.script


def test_rcuscale_writer_insmod_line(image):
    """The writer test passes nwriters, nreaders and holdoff, waits for "Test complete" and
    unloads the module, whose cleanup prints the writers' durations."""
    p = plan(image, scenario(workloads=[{"kind": "rcuscale_writer", "nwriters": 1, "nreaders": 0, "holdoff": 1}]))
    insmod = next(ln for ln in p.script.splitlines() if ln.startswith("insmod /lib/modules/rcuscale.ko "))
    params = dict(word.split("=") for word in insmod.split()[2:])
    assert "kfree_rcu_test" not in params
    assert (params["nwriters"], params["nreaders"], params["holdoff"], params["gp_exp"]) == ("1", "0", "1", "0")
    lines = p.script.splitlines()
    assert 'grep -q -F "Test complete" /dev/kmsg &' in lines
    assert lines.index("wait $done") < lines.index("rmmod rcuscale")


def test_the_guest_gets_each_parameter_once_at_the_value_the_simulation_reads(image):
    """A variant's bootargs follow the scenario's: preempt=voluntary then preempt=full. The
    simulation reads the last (a preemptible kernel); the guest's command line carries that
    preempt= alone."""
    data = scenario(kernel={"bootargs": "preempt=voluntary rcutree.blimit=5", "CONFIG_PREEMPT_DYNAMIC": True})
    data["variants"] = {"full": {"kernel.bootargs": "preempt=full rcutree.blimit=7"}}
    s = load_scenario(data)
    spec = s.variants["full"]
    assert spec.kernel.bootargs.split().count("preempt=voluntary") == 1 and spec.params.preemption
    p = plan_variant("full", spec, image, raw=s.asdict(), any_profile=True)
    assert p.cmdline == ("preempt=full", "rcutree.blimit=7")
    alone = scenario(kernel={"bootargs": " ".join(p.cmdline), "CONFIG_PREEMPT_DYNAMIC": True})
    assert load_scenario(alone).variants["default"].params == spec.params


def test_refuses_a_sync_loop_measuring_until_all_are_done(image):
    err = refusal(image, scenario(workloads=[{"kind": "sync_loop", "start": "barrier", "tasks": 2, "loops": 3, "rt": True,
                                              "until_all_done": True}]))
    assert err.key == "variants.default.workloads[0].until_all_done"


# ------------------------------------------------------------------ the command line

def test_cli_refusal_is_one_line_exit_2(tmp_path):
    """`rcusim kernel` on a scenario the guest cannot run stops before booting: exit 2, one
    stderr line naming the key, no traceback, no results directory."""
    img = make_image(tmp_path / "img")
    path = tmp_path / "readers.yaml"
    path.write_text(
        'name: twin_refused\n'
        'hardware: {profile: x86-64-server-2023, nr_cpus: 2}\n'
        'kernel: {release: "6.12", HZ: 1000}\n'
        'workloads:\n'
        '  - {kind: sync_loop, tasks: 1, loops: 2, cpus: "0-1", start: barrier}\n'
        '  - {kind: readers, length_us: 10, rate_per_s: 100}\n')
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "rcusim", "kernel", str(path), "--kernel", str(img),
                           "--any-profile", "--boots", "1", "--out", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("rcusim: error: "), proc.stderr
    assert "workloads[1].kind" in proc.stderr, proc.stderr
    assert not out.exists()


# ------------------------------------------------------------------ the bundled scenarios

def _mapped(path: Path, kernel: Path, clock: str = "real") -> list[str]:
    """The variants of a bundled scenario the guest runs (ScenarioError if refused)."""
    sc, _, images, names = align_scenario(path, [], None, None, kernel)
    for n in names:
        plan_variant(n, sc.variants[n], images[n], raw=sc.asdict(), clock=clock, any_profile=clock == "icount")
    return names


@pytest.mark.skipif(not (SHARED_KERNEL / "linux-6.12-hz1000" / "config").is_file(),
                    reason="no shared image (../shared/kernel/linux-6.12-hz1000)")
@pytest.mark.parametrize("path", sorted((ROOT / "scenarios").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_bundled_scenario_is_refused_in_one_line_naming_its_release(path):
    """The bundled scenarios model other releases than the image's 6.12: each is refused on
    its kernel.release, in one line, before any boot."""
    with pytest.raises(ScenarioError) as exc:
        _mapped(path, SHARED_KERNEL)
    message = str(exc.value)
    assert "\n" not in message and ".kernel.release: " in message and "6.12" in message


@pytest.mark.skipif(not (SHARED_KERNEL / "linux-6.12-hz1000" / "config").is_file(),
                    reason="no shared image (../shared/kernel/linux-6.12-hz1000)")
@pytest.mark.parametrize("name, clock", [("sync_callers_2cpu", "real"), ("rcuscale_2cpu", "real"),
                                         ("idle_caller_8cpu", "icount")])
def test_the_twin_scenarios_map_onto_the_shared_image(name, clock, monkeypatch):
    """scenarios/twin/ maps whole onto the shared image, every variant (8 vCPUs under icount)."""
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert _mapped(ROOT / "scenarios" / "twin" / f"{name}.yaml", SHARED_KERNEL, clock)


FIRMWARE_ONLY = "\x1b[2JSeaBIOS (version 1.16.2-debian-1.16.2-1)\nBooting from ROM..\n\x1b[2J"
POWER_DOWN = "\x1b[2JSeaBIOS (version 1.16.2-debian-1.16.2-1)\nBooting from ROM..\n\x1b[2J[    5.824493] reboot: Power down\n"


@pytest.mark.parametrize("console, boots", [(FIRMWARE_ONLY, 2), (POWER_DOWN, 1)], ids=["firmware only", "kernel printed"])
def test_a_guest_that_stops_before_its_console_is_booted_again(tmp_path, monkeypatch, console, boots):
    """A boot that printed the firmware's lines and nothing of the kernel's is booted again, as
    after an oops; one whose kernel printed and whose plan failed is refused at once."""
    from rcusim.twin import qemu
    consoles = [console, POWER_DOWN]
    calls = []

    def fake_boot(argv, share, timeout_s):
        calls.append(share)
        text = consoles[len(calls) - 1]
        if text is POWER_DOWN and len(calls) > 1:
            (share / "plan.log").write_text("rcusim-plan-exit 0\n")
        return qemu.BootResult(share=share, console=text, returncode=0, wall_time_s=0.0, argv=tuple(argv))

    monkeypatch.setattr(qemu, "boot", fake_boot)
    if boots == 1:
        with pytest.raises(ScenarioError, match="plan failed"):
            qemu.boot_plan(["qemu"], tmp_path, "true\n", 10.0, "variant x, boot 0")
    else:
        _, retried = qemu.boot_plan(["qemu"], tmp_path, "true\n", 10.0, "variant x, boot 0")
        assert retried == ["variant x, boot 0, attempt 1: the guest stopped before its console started"]
    assert len(calls) == boots


def test_a_guest_that_oopses_at_every_attempt_is_refused_naming_each_oops(tmp_path, monkeypatch):
    """After ATTEMPTS boots that all oopsed, the refusal names every attempt's oops, not only
    the last console lines (a panic's tail hides why the earlier attempts failed)."""
    from rcusim.twin import qemu
    calls = []

    def fake_boot(argv, share, timeout_s):
        calls.append(share)
        text = (f"[    9.1] Oops: int3: 0000 [#{len(calls)}] PREEMPT SMP NOPTI\n"
                "[    9.2] Kernel panic - not syncing: Fatal exception in interrupt\n")
        return qemu.BootResult(share=share, console=text, returncode=0, wall_time_s=0.0, argv=tuple(argv))

    monkeypatch.setattr(qemu, "boot", fake_boot)
    with pytest.raises(ScenarioError) as refused:
        qemu.boot_plan(["qemu"], tmp_path, "true\n", 10.0, "variant x, boot 4")
    assert len(calls) == qemu.ATTEMPTS
    message = str(refused.value)
    assert f"each of its {qemu.ATTEMPTS} boots" in message
    assert all(f"[#{k}]" in message for k in range(1, qemu.ATTEMPTS + 1))
    kept = Path(message.split("consoles in ")[1].split()[0])  # kept for a post-mortem
    assert sorted(p.name for p in kept.iterdir()) == [f"console-attempt-{k}.txt" for k in range(1, qemu.ATTEMPTS + 1)]
    assert "[#4]" in (kept / "console-attempt-4.txt").read_text()
    shutil.rmtree(kept)


def _done_boot(qemu, vcpu_wait, icount=False):
    """A fake boot whose plan ran to its end, its vCPU threads having waited `vcpu_wait`."""
    def fake_boot(argv, share, timeout_s):
        (share / "plan.log").write_text("rcusim-plan-exit 0\n")
        wait, steal = vcpu_wait.pop(0)
        host = {"plan_s": 2.0, "vcpu_run": 1.5, "vcpu_wait": wait, "other_run": 0.1, "other_wait": 0.1, "steal": steal}
        return qemu.BootResult(share=share, console=POWER_DOWN, returncode=0, wall_time_s=0.0,
                               argv=tuple(argv) + (("-icount",) if icount else ()), host=host)
    return fake_boot


def test_a_boot_on_a_busy_host_is_booted_again(tmp_path, monkeypatch):
    """A real-clock boot whose vCPU threads waited for the host's CPUs, or whose host had its
    CPUs stolen, beyond HOST_WAIT_LIMIT together is booted again after a pause, and named; one
    under the limit is kept."""
    from rcusim.twin import qemu
    cpus = os.cpu_count()
    waits = [(qemu.HOST_WAIT_LIMIT + 0.4, 0.0), (0.0, (qemu.HOST_WAIT_LIMIT + 0.1) / cpus),
             (qemu.HOST_WAIT_LIMIT - 0.2, 0.1 / cpus)]
    monkeypatch.setattr(qemu, "boot", _done_boot(qemu, waits))
    pauses = []
    monkeypatch.setattr(qemu.time, "sleep", pauses.append)
    booted, again = qemu.boot_plan(["qemu"], tmp_path, "true\n", 10.0, "variant x, boot 1")
    assert pauses == [qemu.BUSY_HOST_PAUSE_S, 2 * qemu.BUSY_HOST_PAUSE_S]  # the load given time to pass
    assert booted.host["vcpu_wait"] == pytest.approx(qemu.HOST_WAIT_LIMIT - 0.2)
    assert len(again) == 2 and all("a busy host" in line for line in again)
    assert f"waited {qemu.HOST_WAIT_LIMIT + 0.4:.2f}" in again[0]
    assert f"{(qemu.HOST_WAIT_LIMIT + 0.1) / cpus:.2f} of each CPU stolen" in again[1]


def test_a_busy_host_at_every_attempt_is_refused_and_icount_is_not_judged(tmp_path, monkeypatch):
    """Busy at every attempt: refused, asking for a quiet host. Under icount the guest's clock
    stops with its vCPUs, so the same waits are kept."""
    from rcusim.twin import qemu
    monkeypatch.setattr(qemu, "boot", _done_boot(qemu, [(0.9, 0.0)] * qemu.ATTEMPTS))
    monkeypatch.setattr(qemu.time, "sleep", lambda s: None)
    with pytest.raises(ScenarioError, match="quiet host"):
        qemu.boot_plan(["qemu"], tmp_path, "true\n", 10.0, "variant x, boot 1")
    monkeypatch.setattr(qemu, "boot", _done_boot(qemu, [(0.9, 0.5)], icount=True))
    _, again = qemu.boot_plan(["qemu"], tmp_path, "true\n", 10.0, "variant x, boot 1")
    assert again == []


def test_host_share_sums_the_vcpu_threads_waits_over_the_plan():
    """host_share(): each thread's run and wait between the marks, vCPU threads ("CPU n/TCG")
    apart from the others, as shares of the span; a thread born after the start counts whole;
    the host's steal per host CPU."""
    from rcusim.twin.qemu import host_share
    start = (10.0, {"1": ("qemu-system-x86", 5_000, 1_000), "2": ("CPU 0/TCG", 100, 50)}, 100.0)
    end = (12.0, {"1": ("qemu-system-x86", 5_000 + 200_000_000, 1_000 + 100_000_000),
                  "2": ("CPU 0/TCG", 100 + 1_500_000_000, 50 + 300_000_000),
                  "3": ("CPU 1/TCG", 1_000_000_000, 100_000_000)}, 100.0 + 0.2 * (os.cpu_count() or 1))
    share = host_share(start, end)
    assert share == {"plan_s": 2.0, "vcpu_run": 1.25, "vcpu_wait": 0.2, "other_run": 0.1, "other_wait": 0.05,
                     "steal": 0.1}
    assert host_share(None, end) is None


def test_thread_waits_reads_this_process_own_threads():
    """thread_waits() on this very process: its main thread has run, and a thread started
    here appears by its name."""
    import threading
    from rcusim.twin.qemu import thread_waits
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, name="rcusim-probe")
    worker.start()
    try:
        waits = thread_waits(os.getpid())
    finally:
        stop.set()
        worker.join()
    assert waits[str(os.getpid())][1] > 0
    assert len(waits) >= 2


def test_refuses_tasks_started_together(image):
    """The load helper's threads wait in a pthread barrier that its main thread releases: a
    sync_loop started together (each task at start_us) has no counterpart in the guest."""
    err = refusal(image, scenario(workloads=[{"kind": "sync_loop", "tasks": 2, "loops": 2, "cpus": "0-1"}]))
    assert err.key == "variants.default.workloads[0].start" and "barrier" in str(err)


def test_variants_take_turns_boot_by_boot():
    """Each variant's boots are spread over the whole run, one boot of each in turn, so the
    host's slower and faster stretches weigh on every variant alike: no variant has two boots
    in a row while another is still to boot."""
    order = boot_order(["idle_1", "unpinned_10", "unpinned_100"], 3)
    assert len(order) == 9 and sorted(order) == sorted(set(order))
    assert [name for _, name in order[:3]] == ["idle_1", "unpinned_10", "unpinned_100"]
    assert all(a[1] != b[1] for a, b in zip(order, order[1:]))
    for name in ("idle_1", "unpinned_10", "unpinned_100"):
        assert [k for k, n in order if n == name] == [0, 1, 2]
    assert boot_order(["default"], 2) == [(0, "default"), (1, "default")]
