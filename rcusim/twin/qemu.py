"""One boot of the guest under QEMU (TCG: KVM does not nest on these machines).

The guest gets a 9p share (mount tag ``out``) holding ``plan.sh``; its /init runs it and
leaves there what the plan writes, ``plan.log`` and ``dmesg.txt``, then powers off.

Clocks (``--clock``):

* ``real``: multi-threaded TCG; the guest's time is the host's, each vCPU a host thread
  (so at most as many vCPUs as host cores, and a quiet host);
* ``icount``: ``-icount shift=0,sleep=off``: guest time advances 1 ns per instruction
  and all vCPUs take turns on one host thread, so the host's load does not reach the
  guest's clock, but k busy vCPUs each run at 1/k of the clock's rate.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from rcusim.errors import ScenarioError

__all__ = ["CLOCKS", "ATTEMPTS", "BootResult", "BootsExhausted", "qemu_command", "boot", "boot_plan", "find_qemu"]

CLOCKS = ("real", "icount")

#: Guest memory, MiB: room for rcuscale's kfree floods.
MEMORY_MB = 2048

#: The guest's own command line before the scenario's: the serial console, few messages,
#: no reboot on panic (QEMU exits with -no-reboot), no KASLR-dependent surprises kept.
BASE_CMDLINE = ("console=ttyS0", "quiet", "loglevel=4", "panic=-1")


def find_qemu() -> str:
    path = shutil.which("qemu-system-x86_64")
    if path is None:
        raise ScenarioError("qemu-system-x86_64 is not installed", key="kernel",
                            allowed="apt-get install qemu-system-x86")
    return path


@dataclass(frozen=True)
class BootResult:
    """What one boot left: its folder (the share), the console, the exit and the wall time."""

    share: Path
    console: str
    returncode: int
    wall_time_s: float
    argv: tuple[str, ...]
    #: QEMU's threads on the host while the plan ran (host_share()); None if unmarked.
    host: dict | None = None


def qemu_command(qemu: str, bzimage: Path, initramfs: Path, share: Path, nr_cpus: int, clock: str,
                 cmdline: tuple[str, ...]) -> list[str]:
    """QEMU's command line for one boot."""
    # debug-threads names the vCPU threads ("CPU 0/TCG"), whose host run-queue waits boot() reads
    argv = [qemu, "-name", "rcusim,debug-threads=on",
            "-cpu", "qemu64", "-smp", str(nr_cpus), "-m", str(MEMORY_MB), "-nographic", "-no-reboot",
            "-net", "none", "-kernel", str(bzimage), "-initrd", str(initramfs),
            "-append", " ".join(BASE_CMDLINE + tuple(cmdline)),
            "-virtfs", f"local,path={share},mount_tag=out,security_model=none"]
    if clock == "icount":
        argv += ["-icount", "shift=0,sleep=off"]
    else:
        argv += ["-accel", "tcg,thread=multi"]
    return argv


def boot(argv: list[str], share: Path, timeout_s: float) -> BootResult:
    """Run QEMU until the guest powers off (or `timeout_s` passes: the run is then refused),
    noting how long its threads waited for the host's CPUs while the plan ran."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    console, marks = [], {}

    def read_console():
        for raw in proc.stdout:
            line = raw.decode(errors="replace")
            for mark in (PLAN_START, PLAN_END):
                if mark in line:
                    marks[mark] = (time.monotonic(), thread_waits(proc.pid), host_steal_s())
            console.append(line)

    errors = []
    readers = [threading.Thread(target=read_console, daemon=True),
               threading.Thread(target=lambda: errors.append(proc.stderr.read()), daemon=True)]
    for reader in readers:
        reader.start()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        for reader in readers:
            reader.join()
        tail = " | ".join("".join(console).strip().splitlines()[-3:])
        raise ScenarioError(f"the guest did not finish in {timeout_s:.0f} s (console: {tail[-200:]})",
                            key="--timeout", allowed="a longer --timeout, or a shorter workload") from None
    for reader in readers:
        reader.join()
    text = "".join(console) + b"".join(errors).decode(errors="replace")
    return BootResult(share=share, console=text, returncode=proc.returncode,
                      wall_time_s=time.monotonic() - started, argv=tuple(argv),
                      host=host_share(marks.get(PLAN_START), marks.get(PLAN_END)))


def thread_waits(pid: int) -> dict[str, tuple[str, int, int]]:
    """Each thread of process `pid`: its name, and the ns it has run and waited on a run
    queue (/proc/<pid>/task/<tid>/schedstat, the scheduler's own account)."""
    waits = {}
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            run_ns, wait_ns = (int(x) for x in (task / "schedstat").read_text().split()[:2])
            waits[task.name] = ((task / "comm").read_text().strip(), run_ns, wait_ns)
        except (OSError, ValueError):
            pass  # a thread that has just exited
    return waits


def host_steal_s() -> float:
    """CPU time the host's own hypervisor gave to others, all CPUs (/proc/stat's steal)."""
    with open("/proc/stat") as f:
        return int(f.readline().split()[8]) / os.sysconf("SC_CLK_TCK")


def host_share(start, end) -> dict | None:
    """What QEMU's vCPU threads (``CPU <n>/TCG``) and its other threads ran and waited for
    the host's CPUs between the plan's start and end marks, as fractions of that span, and the
    host's own steal time per host CPU (a share the host's scheduler does not see)."""
    if start is None or end is None or not end[1]:
        return None
    span_ns = (end[0] - start[0]) * 1e9
    sums = {"vcpu_run": 0, "vcpu_wait": 0, "other_run": 0, "other_wait": 0}
    for tid, (name, run_ns, wait_ns) in end[1].items():
        run0, wait0 = start[1].get(tid, (name, 0, 0))[1:]
        kind = "vcpu" if name.startswith("CPU ") else "other"
        sums[f"{kind}_run"] += run_ns - run0
        sums[f"{kind}_wait"] += wait_ns - wait0
    steal = (end[2] - start[2]) * 1e9 / (os.cpu_count() or 1)
    return {"plan_s": round(span_ns / 1e9, 3), **{k: round(v / span_ns, 4) for k, v in sums.items()},
            "steal": round(steal / span_ns, 4)}


#: Boots tried for one run: now and then a guest takes an unexpected int3 while a static key is
#: rewritten (text_poke_bp() under multi-threaded TCG, at boot or when tracepoints are enabled)
#: and oopses, or stops before its console starts (the firmware's lines and nothing after them),
#: or runs on a busy host (HOST_WAIT_LIMIT); such a boot measured nothing of this guest's own
#: and is booted again.
ATTEMPTS = 4


class BootsExhausted(ScenarioError):
    """Every attempt of one boot met the host or the emulator (an oops, a stop before the
    console, a busy host), not the scenario: the boots before it stand."""

#: On the real clock each vCPU is a host thread, and a vCPU thread waiting for a host CPU is a
#: vCPU stopped while the guest's clock runs on: its ticks and wake-ups come late, and with
#: readers spinning the guest's GPs take 4 ms where they take 2 (rcuscale's writers with
#: readers, 27 Nov: one other process spinning on the 2-core host put every boot there). The
#: host's CPU time the guest did not get over the plan, in CPUs: the vCPU threads' run-queue
#: waits, summed, and the time the host's own hypervisor stole (per host CPU, times the host's
#: CPUs), each as a share of the plan's span. The waits are 0.05-0.17 on the quiet host (the
#: twin's callers and rcuscale tests, 28 Nov), 0.59-0.73 beside one spinning process (8
#: boots); the steal 0-0.06 a CPU in most boots, 0.30-0.34 in some (lazy kfree floods of
#: 310-400 ms where a boot without steal took 192). A boot losing more than this ran on a
#: busy host.
HOST_WAIT_LIMIT = 0.3

#: Seconds waited before booting again after a busy host, times the attempt: the steal of
#: 28 Nov came in stretches that outlasted one 15-s boot.
BUSY_HOST_PAUSE_S = 10.0
_BUSY = "a busy host"

_OOPS = re.compile(r"Oops: .*|Kernel panic - not syncing: .*")
_KERNEL_PRINTED = re.compile(r"^\S*\[\s*\d+\.\d+\]", re.MULTILINE)  # a printk line: "[    5.824493] ..."
_PLAN_DONE = "rcusim-plan-exit 0"
#: The guest's /init prints these on the console around the plan.
PLAN_START, PLAN_END = "rcusim-plan-start", "rcusim-plan-end"


def boot_plan(argv: list[str], share: Path, script: str, timeout_s: float, what: str, *,
              any_host: bool = False) -> tuple[BootResult, list[str]]:
    """Boot until the guest runs `script` (``share/plan.sh``) to its end; the console goes to
    ``share/console.txt``. A boot whose guest oopsed, or stopped before its console started, or
    whose vCPUs waited for a busy host (real clock; kept with `any_host`), is booted again, up
    to :data:`ATTEMPTS` times; returns the last boot and one line per such boot.

    Raises
    ------
    ScenarioError
        For a plan that fails otherwise, or fails so at every attempt.
    """
    failures = []  # why each attempt before this one was booted again
    for attempt in range(ATTEMPTS):
        for old in share.iterdir():
            if not old.name.startswith("console-attempt-"):  # an earlier attempt's, kept
                old.unlink()
        (share / "plan.sh").write_text(script, encoding="utf-8")
        booted = boot(argv, share, timeout_s)
        (share / "console.txt").write_text(booted.console, encoding="utf-8")
        log = (share / "plan.log").read_text(errors="replace") if (share / "plan.log").is_file() else ""
        if _PLAN_DONE in log:
            failure = None if any_host else _busy_host(booted)
            if failure is None:
                return booted, [f"{what}, attempt {k + 1}: {why}" for k, why in enumerate(failures)]
        else:
            oops = _OOPS.search(booted.console)
            failure = oops[0].strip() if oops else None
            if failure is None and not log and not _KERNEL_PRINTED.search(booted.console):
                failure = "the guest stopped before its console started"
        if failure is None:
            tail = " | ".join((log or booted.console).strip().splitlines()[-3:])
            raise ScenarioError(f"{what}: the guest's plan failed ({tail[-240:]})", key="kernel",
                                allowed="a scenario the image can run")
        (share / f"console-attempt-{attempt + 1}.txt").write_text(booted.console, encoding="utf-8")
        if attempt == ATTEMPTS - 1:
            each = "; ".join(f"{k + 1}: {line[:48]}" for k, line in enumerate(failures + [failure]))
            kept = Path(tempfile.mkdtemp(prefix="rcusim-failed-boot-"))
            for console in share.glob("console-attempt-*.txt"):
                shutil.copy(console, kept)
            raise BootsExhausted(f"{what}: the guest failed at each of its {ATTEMPTS} boots, their consoles in {kept} "
                                f"({each})", key="kernel", allowed="a scenario the image can run, on a quiet host")
        failures.append(failure)
        if failure.startswith(_BUSY):
            time.sleep(BUSY_HOST_PAUSE_S * (attempt + 1))  # let the host's load pass first
    raise AssertionError("unreachable")


def _busy_host(booted: BootResult) -> str | None:
    """Why a boot on the real clock ran on a busy host (HOST_WAIT_LIMIT), or None."""
    if "-icount" in booted.argv or booted.host is None:
        return None  # under icount the guest's clock counts instructions: a wait stops it too
    wait, steal = booted.host["vcpu_wait"], booted.host["steal"]
    if wait + steal * (os.cpu_count() or 1) <= HOST_WAIT_LIMIT:
        return None
    return f"{_BUSY}: the vCPU threads waited {wait:.2f} of the plan's span, {steal:.2f} of each CPU stolen"


def command_line(argv) -> str:
    return shlex.join(argv)
