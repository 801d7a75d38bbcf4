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

import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from rcusim.errors import ScenarioError

__all__ = ["CLOCKS", "ATTEMPTS", "BootResult", "qemu_command", "boot", "boot_plan", "find_qemu"]

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


def qemu_command(qemu: str, bzimage: Path, initramfs: Path, share: Path, nr_cpus: int, clock: str,
                 cmdline: tuple[str, ...]) -> list[str]:
    """QEMU's command line for one boot."""
    argv = [qemu, "-cpu", "qemu64", "-smp", str(nr_cpus), "-m", str(MEMORY_MB), "-nographic", "-no-reboot",
            "-net", "none", "-kernel", str(bzimage), "-initrd", str(initramfs),
            "-append", " ".join(BASE_CMDLINE + tuple(cmdline)),
            "-virtfs", f"local,path={share},mount_tag=out,security_model=none"]
    if clock == "icount":
        argv += ["-icount", "shift=0,sleep=off"]
    else:
        argv += ["-accel", "tcg,thread=multi"]
    return argv


def boot(argv: list[str], share: Path, timeout_s: float) -> BootResult:
    """Run QEMU until the guest powers off (or `timeout_s` passes: the run is then refused)."""
    started = time.monotonic()
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        console = (exc.stdout or b"").decode(errors="replace")
        tail = " | ".join(console.strip().splitlines()[-3:])
        raise ScenarioError(f"the guest did not finish in {timeout_s:.0f} s (console: {tail[-200:]})",
                            key="--timeout", allowed="a longer --timeout, or a shorter workload") from None
    console = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    return BootResult(share=share, console=console, returncode=done.returncode,
                      wall_time_s=time.monotonic() - started, argv=tuple(argv))


#: Boots tried for one run: now and then a guest takes an unexpected int3 while a static key is
#: rewritten (text_poke_bp() under multi-threaded TCG, at boot or when tracepoints are enabled)
#: and oopses, or stops before its console starts (the firmware's lines and nothing after them);
#: such a boot measured nothing and is booted again.
ATTEMPTS = 4

_OOPS = re.compile(r"Oops: .*|Kernel panic - not syncing: .*")
_KERNEL_PRINTED = re.compile(r"^\S*\[\s*\d+\.\d+\]", re.MULTILINE)  # a printk line: "[    5.824493] ..."
_PLAN_DONE = "rcusim-plan-exit 0"


def boot_plan(argv: list[str], share: Path, script: str, timeout_s: float, what: str) -> tuple[BootResult, list[str]]:
    """Boot until the guest runs `script` (``share/plan.sh``) to its end; the console goes to
    ``share/console.txt``. A boot whose guest oopsed, or stopped before its console started, is
    booted again, up to :data:`ATTEMPTS` times; returns the last boot and one line per such boot.

    Raises
    ------
    ScenarioError
        For a plan that fails otherwise, or fails so at every attempt.
    """
    oopses, failures = [], []
    for attempt in range(ATTEMPTS):
        for old in share.iterdir():
            old.unlink()
        (share / "plan.sh").write_text(script, encoding="utf-8")
        booted = boot(argv, share, timeout_s)
        (share / "console.txt").write_text(booted.console, encoding="utf-8")
        log = (share / "plan.log").read_text(errors="replace") if (share / "plan.log").is_file() else ""
        if _PLAN_DONE in log:
            return booted, oopses
        oops = _OOPS.search(booted.console)
        failure = oops[0].strip() if oops else None
        if failure is None and not log and not _KERNEL_PRINTED.search(booted.console):
            failure = "the guest stopped before its console started"
        if failure is None:
            tail = " | ".join((log or booted.console).strip().splitlines()[-3:])
            raise ScenarioError(f"{what}: the guest's plan failed ({tail[-240:]})", key="kernel",
                                allowed="a scenario the image can run")
        if attempt == ATTEMPTS - 1:
            each = "; ".join(f"{k + 1}: {line[:48]}" for k, line in enumerate(failures + [failure]))
            raise ScenarioError(f"{what}: the guest failed at each of its {ATTEMPTS} boots ({each})", key="kernel",
                                allowed="a scenario the image can run")
        failures.append(failure)
        oopses.append(f"{what}, attempt {attempt + 1}: {failure}")
    raise AssertionError("unreachable")


def command_line(argv) -> str:
    return shlex.join(argv)
