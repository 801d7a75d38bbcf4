"""A scenario variant mapped onto a real kernel: the image's Kconfig, the guest's command
line and the script the guest runs. Whatever has no faithful counterpart is refused with
one line (a :class:`~rcusim.errors.ScenarioError` naming the key), never approximated.

What maps:

* ``kernel``: the release must be the image's, HZ picks the image; each Kconfig option
  the scenario sets must be the image's (those it leaves unset take the image's value, in
  the simulation too: :func:`image_overrides`); ``kernel.bootargs`` goes onto the guest's
  command line, each parameter once at its last value (the one the simulation reads); a
  PREEMPT_DYNAMIC image's built-in preemption model is written out as ``preempt=`` when
  the scenario does not choose one;
* ``hardware``: ``nr_cpus`` vCPUs of the ``qemu-tcg`` profile (others only with
  ``--any-profile``), without cost, idle-state or topology overrides;
* ``sync_loop`` with ``synchronize_rcu``: rcusim's load helper (guest/rcusim_load.c),
  ``membarrier(MEMBARRIER_CMD_GLOBAL)`` per call, which is synchronize_rcu() seen from user
  space (kernel/sched/membarrier.c, membarrier_global_expedited() aside: CMD_GLOBAL is
  the synchronize_rcu() one);
* ``rcuscale_writer``: rcuscale.ko's writer test with the same parameters;
* ``kfree_rcu_flood``: rcuscale.ko's kfree test with the same parameters.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from rcusim.errors import ScenarioError
from rcusim.input.bootargs import last_tokens, parse_bootargs
from rcusim.input.workloads import WRITER_NAME, KfreeRcuFlood, SyncLoop
from rcusim.input.cpulist import parse_cpulist
from rcusim.input.releases import stable_patches
from rcusim.twin.image import KernelImage

__all__ = ["GuestPlan", "SyncLoopRun", "plan_variant", "check_probes", "image_overrides", "KCONFIG_OPTIONS",
           "SIM_TRACE_EVENT",
           "GUEST_PROFILES", "GUEST_NOISE", "TRACE_EVENTS"]

#: The hardware profile that describes the guest itself, by clock (rcusim.twin.qemu.CLOCKS).
GUEST_PROFILES = {"real": "qemu-tcg", "icount": "qemu-tcg-icount"}

#: The noise preset measured in the guest itself (measure-guest --noise), by clock: a noise
#: workload with it describes what the guest does anyway, so nothing runs for it.
GUEST_NOISE = {"real": "qemu_tcg"}

#: The scenario's Kconfig keys and how the image's .config spells them (a number, or a bool).
KCONFIG_OPTIONS = {
    "CONFIG_NR_CPUS": int, "CONFIG_RCU_FANOUT": int, "CONFIG_RCU_FANOUT_LEAF": int,
    "CONFIG_RCU_NOCB_CPU": bool, "CONFIG_RCU_NOCB_CPU_DEFAULT_ALL": bool, "CONFIG_RCU_LAZY": bool,
    "CONFIG_RCU_LAZY_DEFAULT_OFF": bool, "CONFIG_PREEMPT_RCU": bool, "CONFIG_PREEMPTION": bool,
    "CONFIG_RCU_BOOST": bool, "CONFIG_RCU_NOCB_CPU_CB_BOOST": bool, "CONFIG_HZ_PERIODIC": bool,
    "CONFIG_PREEMPT_DYNAMIC": bool, "CONFIG_RCU_EXP_KTHREAD": bool,
}

#: Tracepoints the guest enables (events/<group>/<name>): each GP's phases and reports, the
#: FQS scans' finds, the scheduler's switches and wake-ups for the time breakdown, and the
#: kernel's messages (rcuscale's lines on the trace's clock).
TRACE_EVENTS = ("rcu/rcu_grace_period", "rcu/rcu_quiescent_state_report", "rcu/rcu_fqs",
                "rcu/rcu_exp_grace_period", "sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup",
                "printk/console")

#: What the simulation beside a boot adds to its command line: the guest's tracepoints that
#: rcusim prices (trace_event=), each event at the guest profile's measured cost, as the traced
#: guest pays it. printk's console lines fall outside the measured span (rcuscale prints its
#: results after it, the load harness prints nothing).
SIM_TRACE_EVENT = "trace_event=" + ",".join(e.replace("/", ":") for e in TRACE_EVENTS if e != "printk/console")

#: The guest's trace instance.
TRACE_DIR = "/sys/kernel/tracing/instances/rcusim"

#: An extra tracepoint (``--trace-event``): events/<group>/<name>.
_EVENT_RE = re.compile(r"[a-z0-9_]+/[a-z0-9_]+")
#: A kprobe event (``--kprobe``), as written to kprobe_events: "p:kprobes/NAME SYMBOL[+OFFS] [FETCHARGS]"
#: ("r:" for a return probe); the guest's kernel parses the fetch arguments.
_KPROBE_RE = re.compile(r"[pr]:kprobes/([A-Za-z_][A-Za-z0-9_]*) [A-Za-z_][A-Za-z0-9_.]*(\+(0x[0-9a-fA-F]+|[0-9]+))?"
                        r"( [ -~]*)?")

#: Per-CPU trace buffer, KiB: room for a few hundred thousand events.
TRACE_BUFFER_KB = 16384

#: What rcuscale prints when its writer test and its kfree test are done.
WRITER_DONE = "Test complete"
KFREE_DONE = "Total time taken by all kfree'ers"

#: sched_set_fifo_low()'s priority, that of rcuscale's writers and of rt sync_loop tasks here.
FIFO_LOW_PRIO = 1


@dataclass(frozen=True)
class SyncLoopRun:
    """One sync_loop workload as the load helper's command line."""

    name: str
    tasks: int
    output: str
    argv: tuple[str, ...]


@dataclass(frozen=True)
class GuestPlan:
    """What one boot of the guest does for a variant."""

    nr_cpus: int
    """vCPUs (-smp)."""
    cmdline: tuple[str, ...]
    """The scenario's boot parameters, as the guest's command line gets them."""
    script: str
    """/out/plan.sh: tracing set-up, the workload, the trace copied out."""
    sync_loops: tuple[SyncLoopRun, ...] = ()
    """The load helper's runs, one per sync_loop workload."""
    rcuscale: dict = field(default_factory=dict)
    """rcuscale.ko's parameters, when the variant runs rcuscale's writer or kfree test."""
    notes: tuple[str, ...] = ()
    """What the mapping says of itself (shown and kept in provenance)."""


def _kconfig_value(image: KernelImage, option: str):
    raw = image.config.get(option, "n")
    if KCONFIG_OPTIONS[option] is int:
        return int(raw)
    return raw in ("y", "m")


def written_keys(raw: dict, variant: str, section: str) -> set[str]:
    """The keys of `section` (kernel, hardware) a scenario's input (:meth:`Scenario.asdict`)
    writes for `variant`: the base's and the variant's own, nested or dotted."""
    keys = set((raw.get(section) or {}).keys())
    over = ((raw.get("variants") or {}).get(variant)) or {}
    for key, value in over.items():
        if key == section and isinstance(value, dict):
            keys |= set(value)
        elif str(key).startswith(section + "."):
            keys.add(str(key).split(".")[1])
    return keys


def image_overrides(spec_kernel, image: KernelImage, written: set[str], path: tuple = ("kernel",)) -> list[str]:
    """``--set`` overrides that make a scenario's kernel the image's.

    Each Kconfig option the scenario sets (is in `written`) must have the image's value;
    one it leaves to rcusim's default gets the image's. The changes a stable release carries
    beyond its MAJOR.MINOR (:func:`~rcusim.input.releases.stable_patches`) are its patches. A PREEMPT_DYNAMIC image's boot-time preemption
    model is written out (preempt=) unless the command line chooses it.

    Raises
    ------
    ScenarioError
        For a release, a Kconfig value, a lock type or a patch the image does not have.
    """
    if spec_kernel.release != image.release:
        raise ScenarioError(f"{spec_kernel.release} is not the image's release ({image.version})",
                            path=path + ("release",), allowed=f'"{image.release}", or --kernel with an image of it')
    carried = stable_patches(image.version)
    for name in spec_kernel.patches:
        if name not in carried:
            raise ScenarioError(f"{name}: the image ({image.version}) does not carry it", path=path + ("patches",),
                                allowed=f"the patches its stable release carries: {', '.join(carried) or 'none'}")
    if spec_kernel.exp_mutex != "mutex":
        raise ScenarioError("rcu_state.exp_mutex is a mutex in the image", path=path + ("exp_mutex",),
                            allowed="mutex")
    overrides = []
    for option in KCONFIG_OPTIONS:
        want = _kconfig_value(image, option)
        have = getattr(spec_kernel, option)
        if option in written:
            if have != want:
                raise ScenarioError(f"{have} differs from the image's {option}={image.config.get(option, 'n')}",
                                    path=path + (option,), allowed=f"{want} (the image's), or another --kernel")
        elif have != want:
            overrides.append(f"kernel.{option}={str(want).lower() if isinstance(want, bool) else want}")
    if set(carried) - set(spec_kernel.patches):
        overrides.append(f"kernel.patches=[{', '.join(carried)}]")
    if image.enabled("CONFIG_PREEMPT_DYNAMIC") and "preempt" not in parse_bootargs(spec_kernel.bootargs):
        overrides.append(f"kernel.bootargs=preempt={image.preempt_default}")
    return overrides


def _refuse(path: tuple, problem: str, allowed: str):
    raise ScenarioError(problem, path=path, allowed=allowed)


def _check_hardware(hardware, written: set[str], image: KernelImage, any_profile: bool, clock: str,
                    variant: str) -> None:
    hw = hardware
    path = ("variants", variant, "hardware")
    if hw.profile != GUEST_PROFILES[clock] and not any_profile:
        _refuse(path + ("profile",), f"{hw.profile!r} is not the guest on the {clock} clock: in the real run the "
                "machine is QEMU's", f"{GUEST_PROFILES[clock]}, or --any-profile")
    for key in ("costs", "idle_states", "topology", "halt_poll_ns"):
        if key in written:
            _refuse(path + (key,), "a real guest's costs and shape are its own, not a scenario's",
                    f"no hardware.{key} with 'rcusim kernel'")
    limit = int(image.config.get("CONFIG_NR_CPUS", "1"))
    if hw.nr_cpus > limit:
        _refuse(path + ("nr_cpus",), f"{hw.nr_cpus} CPUs exceed the image's CONFIG_NR_CPUS={limit}",
                f"an integer from 2 to {limit}")
    if hw.nr_cpus < 2:
        _refuse(path + ("nr_cpus",), "with one CPU online, membarrier() and RCU's tests return at once",
                f"an integer from 2 to {limit}")
    if clock == "real" and hw.nr_cpus > (os.cpu_count() or 1):
        _refuse(path + ("nr_cpus",), f"{hw.nr_cpus} vCPUs on the real clock need as many host cores "
                f"({os.cpu_count()} here): more would share them and stretch every figure",
                f"at most {os.cpu_count()}, or --clock icount")


def _sync_loop_run(wl: SyncLoop, index: int, nr_cpus: int, path: tuple) -> SyncLoopRun:
    if wl.primitive != "synchronize_rcu":
        _refuse(path + ("primitive",), f"{wl.primitive} has no system call: membarrier() calls synchronize_rcu()",
                "synchronize_rcu, or an rcuscale_writer workload (gp_exp, gp_async)")
    if wl.work_after == "vfree":
        _refuse(path + ("work_after",), "vmalloc()/vfree() around the call cannot be made from user space",
                "none or kfree")
    for key, unset in (("sleep_jiffies_max", 0), ("min_runtime_s", None), ("start_cpus", None),
                       ("until_all_done", False)):
        if getattr(wl, key) != unset:
            _refuse(path + (key,), "the load helper does not do this", f"no {key} with 'rcusim kernel'")
    if wl.start != "barrier":
        _refuse(path + ("start",), "the load helper's threads wait in a pthread barrier, which its main thread "
                "releases from the first CPU of `cpus`", "barrier")
    name = wl.name or f"sync_loop{index}"
    cpus = ",".join(map(str, parse_cpulist(wl.cpus, nr_cpus)))
    output = f"/out/calls-{index}.txt"
    argv = ["/bin/rcusim_load", "-t", str(wl.tasks), "-l", str(wl.loops), "-c", cpus, "-o", output]
    if wl.pinned:
        argv.append("-p")
    if wl.rt:
        argv += ["-f", str(FIFO_LOW_PRIO)]
    elif wl.nice:
        argv += ["-n", str(wl.nice)]
    if wl.think_us:
        argv += ["-T", str(round(wl.think_us * 1000))]
    return SyncLoopRun(name=name, tasks=wl.tasks, output=output, argv=tuple(argv))


def _rcuscale_params(spec) -> dict:
    """rcuscale.ko's parameters for the variant's writer or kfree test."""
    if spec.rcuscale_writer is not None:
        w = spec.rcuscale_writer
        params = {"nwriters": w.nwriters, "nreaders": w.nreaders, "gp_exp": int(w.gp_exp),
                  "gp_async": int(w.gp_async), "gp_async_max": w.gp_async_max, "holdoff": w.holdoff,
                  "minruntime": w.minruntime, "writer_holdoff": w.writer_holdoff,
                  "writer_holdoff_jiffies": w.writer_holdoff_jiffies}
        return params
    (flood,) = [w for w in spec.workloads if isinstance(w, KfreeRcuFlood)]
    return {"kfree_rcu_test": 1, "kfree_nthreads": flood.kfree_nthreads, "kfree_alloc_num": flood.kfree_alloc_num,
            "kfree_loops": flood.kfree_loops, "kfree_mult": flood.kfree_mult,
            "kfree_rcu_test_single": int(flood.kfree_rcu_test_single),
            "kfree_rcu_test_double": int(flood.kfree_rcu_test_double),
            "kfree_by_call_rcu": int(flood.kfree_by_call_rcu), "holdoff": flood.holdoff}


def _writer_workload_names(spec) -> set[str]:
    """The names of the workloads an rcuscale_writer resolved to (writers and readers)."""
    if spec.rcuscale_writer is None:
        return set()
    return {spec.rcuscale_writer.name or WRITER_NAME, "rcu_scale_reader", "rcu_scale_reader_extra"}


def check_probes(events: Sequence[str], kprobes: Sequence[str]) -> list[str]:
    """The extra tracepoints to enable (events/GROUP/NAME): `events`, then each kprobe event's
    kprobes/NAME; refuses one that the guest's plan cannot take."""
    for event in events:
        if not _EVENT_RE.fullmatch(event) or event in TRACE_EVENTS:
            raise ScenarioError(f"{event!r}", key="--trace-event",
                                allowed="GROUP/NAME of a tracepoint (events/GROUP/NAME), not one traced already: "
                                        + ", ".join(TRACE_EVENTS))
    names = []
    for spec in kprobes:
        m = _KPROBE_RE.fullmatch(spec)
        if not m or m.group(1) in names:
            raise ScenarioError(f"{spec!r}", key="--kprobe",
                                allowed="'p:kprobes/NAME SYMBOL[+OFFSET] [FETCHARGS]' (or 'r:' for a return probe), "
                                        "printable ASCII, each NAME once")
        names.append(m.group(1))
    return list(events) + [f"kprobes/{name}" for name in names]


def plan_variant(name: str, spec, image: KernelImage, *, raw: dict, clock: str = "real",
                 any_profile: bool = False, events: Sequence[str] = (), kprobes: Sequence[str] = ()) -> GuestPlan:
    """The guest's plan for variant `name` (a resolved VariantSpec already aligned with the
    image by :func:`image_overrides`); `raw` is the scenario's input (:meth:`Scenario.asdict`).
    `events` and `kprobes` are traced beside the plan's own tracepoints (refused as
    :func:`check_probes` says).

    Raises
    ------
    ScenarioError
        For what the real kernel cannot run as the scenario says.
    """
    extra_events = check_probes(events, kprobes)
    _check_hardware(spec.hardware, written_keys(raw, name, "hardware"), image, any_profile, clock, name)
    bootargs = parse_bootargs(spec.kernel.bootargs)
    nr = spec.hardware.nr_cpus
    path = ("variants", name, "workloads")
    writer_names = _writer_workload_names(spec)
    sync_loops, rcuscale, notes = [], {}, []
    for i, wl in enumerate(spec.workloads):
        kind = wl.kind
        if getattr(wl, "name", None) in writer_names:
            continue
        if kind == "sync_loop":
            if "nohz_full" in bootargs:
                _refuse(("variants", name, "kernel", "bootargs"), "membarrier() refuses MEMBARRIER_CMD_GLOBAL with nohz_full",
                        "no nohz_full= with a sync_loop workload")
            sync_loops.append(_sync_loop_run(wl, i, nr, path + (i,)))
            if wl.work_after == "kfree":
                notes.append(f"{sync_loops[-1].name}: work_after kfree is not done in user space "
                             "(the simulation charges kfree_ns after each call)")
        elif kind == "kfree_rcu_flood":
            rcuscale = _rcuscale_params(spec)
        elif kind == "noise" and GUEST_NOISE.get(clock) is not None and wl.preset == GUEST_NOISE[clock] \
                and wl.irq is None and wl.kthread is None and wl.cpus == "all":
            notes.append(f"{wl.name or 'noise'}: the guest's own noise, measured (preset {wl.preset}): "
                         "nothing runs for it")
        elif kind == "noise":
            _refuse(path + (i,), "noise other than the guest's own has no counterpart in the real run",
                    f"preset {GUEST_NOISE.get(clock, '(none measured for this clock)')} on all CPUs, without "
                    "irq or kthread")
        else:
            _refuse(path + (i, "kind"), f"{kind} has no counterpart in the real run",
                    "sync_loop (synchronize_rcu), rcuscale_writer or kfree_rcu_flood")
    if spec.rcuscale_writer is not None:
        rcuscale = _rcuscale_params(spec)
    if rcuscale and sync_loops:
        _refuse(path, "rcuscale's test and the load helper in one boot", "either sync_loop workloads or one "
                "rcuscale_writer or kfree_rcu_flood workload")
    script = _script(sync_loops, rcuscale, extra_events, kprobes)
    # Each parameter once, at the value the simulation reads (a variant's bootargs follow the
    # scenario's): the guest's kernel applies every preempt= it is given, a later one winning.
    return GuestPlan(nr_cpus=nr, cmdline=last_tokens(spec.kernel.bootargs), script=script,
                     sync_loops=tuple(sync_loops), rcuscale=rcuscale, notes=tuple(notes))


def _script(sync_loops: list[SyncLoopRun], rcuscale: dict, extra_events: list[str], kprobes: Sequence[str]) -> str:
    """/out/plan.sh: trace set-up (the kprobe events defined, TRACE_EVENTS and `extra_events`
    enabled), the workload, the trace and the log copied out."""
    # A trace instance of its own: rcuscale's writer test ends with rcu_ftrace_dump(), which
    # turns off and dumps (consumes) the top-level buffer only.
    lines = ["set -e"]
    lines += [f"echo {shlex.quote(k)} >> /sys/kernel/tracing/kprobe_events" for k in kprobes]
    lines += [f"mkdir {TRACE_DIR}", f"cd {TRACE_DIR}",
              "echo mono > trace_clock  # CLOCK_MONOTONIC, the load helper's clock",
              f"echo {TRACE_BUFFER_KB} > buffer_size_kb"]
    lines += [f"echo 1 > events/{event}/enable" for event in TRACE_EVENTS + tuple(extra_events)]
    lines += ["echo 1 > tracing_on", "cd /"]
    # The guest's cpuidle driver, governor and states: what its idle CPUs do with the tick.
    lines += ["grep . /sys/devices/system/cpu/cpuidle/current_* "
              "/sys/devices/system/cpu/cpu0/cpuidle/state*/* > /out/cpuidle.txt 2>/dev/null || true"]
    if sync_loops:
        # All helpers start together; each one's exit status is waited for (a bare wait is 0).
        for i, run in enumerate(sync_loops):
            lines += [shlex.join(run.argv) + " &", f"pid{i}=$!"]
        lines += [f"wait $pid{i}" for i in range(len(sync_loops))]
    else:
        args = " ".join(f"{k}={v}" for k, v in rcuscale.items())
        # The writer test prints "Test complete" when done, and its writers' lines at rmmod
        # (rcu_scale_cleanup()); the kfree test prints its one line when its threads end.
        # One grep blocked reading /dev/kmsg (one record per read) waits for that line: a
        # `dmesg | grep` every second would fork and exec inside the measured run (holdoff
        # starts it a second after insmod, just as the second poll comes). It starts, and
        # reads the log so far, before the test does (the kfree threads start at insmod).
        # The kfree test stays loaded: 6.12's kfree_scale_cleanup() stops the threads but
        # waits for no callback, and with kfree_by_call_rcu an rcuop kthread invoked the
        # module's kfree_call_rcu() after rmmod in a third of the boots (lazy callbacks wait
        # up to 10 s): "Oops: 0010" at a module address, in rcu_do_batch().
        kfree = bool(rcuscale.get("kfree_rcu_test"))
        lines += [f"grep -q -F \"{KFREE_DONE if kfree else WRITER_DONE}\" /dev/kmsg &", "done=$!",
                  "insmod /lib/modules/torture.ko",
                  f"insmod /lib/modules/rcuscale.ko {args}",
                  "wait $done"]
        if not kfree:
            lines.append("rmmod rcuscale")
    lines += [f"echo 0 > {TRACE_DIR}/tracing_on",
              f"cat {TRACE_DIR}/per_cpu/cpu*/stats > /out/trace-stats.txt",
              f"cat {TRACE_DIR}/trace > /out/trace.txt"]
    return "\n".join(lines) + "\n"
