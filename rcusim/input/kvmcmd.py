"""``python -m rcusim rcuscale ...``: a kvm.sh rcuscale command line as input.

A kernel developer pastes the options of ``tools/testing/selftests/rcutorture/bin/kvm.sh``::

    python -m rcusim rcuscale --torture rcuscale --allcpus --duration 1 \\
        --kconfig CONFIG_NR_CPUS=64 --kconfig CONFIG_RCU_NOCB_CPU=y \\
        --bootargs "rcuscale.kfree_rcu_test=1 rcuscale.kfree_nthreads=16 torture.disable_onoff_at_boot"

and rcusim builds the scenario: ``--kconfig`` options become ``kernel`` keys
(``CONFIG_HZ_1000=y`` or ``CONFIG_HZ=1000`` sets HZ), ``rcuscale.*`` boot
parameters (``rcuperf.*`` and ``--torture rcuperf`` before v5.10) become a
``kfree_rcu_flood`` or an ``rcuscale_writer`` workload, the other boot parameters
stay on the kernel command line, and CONFIG_NR_CPUS sets the CPU count (kvm.sh
gives the guest that many vCPUs), ``--memory`` the guest's memory (kvm.sh's
default 512M). Options of kvm.sh that do not concern the simulation
(``--trust-make``, ``--duration``, ...) are accepted and ignored with a note.
Anything unknown is an error.
"""

from __future__ import annotations

import re

from rcusim.errors import ScenarioError
from rcusim.input.bootargs import parse_bootargs
from rcusim.input.kernel import Kernel
from rcusim.input.releases import check_module_param, parse_release, release_switches

__all__ = ["scenario_from_kvm", "add_kvm_arguments", "kvm_error", "IGNORED_WITH_VALUE", "IGNORED_FLAGS"]

#: kvm.sh options taking a value that do not change what rcusim simulates.
IGNORED_WITH_VALUE = ("--duration", "--configs", "--cpus", "--datestamp", "--jitter",
                      "--kmake-arg", "--qemu-args", "--qemu-cmd", "--results", "--defconfig")
#: kvm.sh flags that do not change what rcusim simulates.
IGNORED_FLAGS = ("--allcpus", "--trust-make", "--dryrun", "--kasan", "--kcsan", "--no-gdb")

_HZ_VALUES = (100, 250, 300, 1000)
#: kvm.sh's TORTURE_QEMU_MEM when --memory is not given (QEMU's -m, in MB).
KVM_DEFAULT_MEMORY_MB = 512
_MEMORY_UNITS = {"": 1, "M": 1, "G": 1024}

#: The preemption-model choice as kvm.sh configs write it: the option set to y decides
#: CONFIG_PREEMPTION and CONFIG_PREEMPT_RCU (which defaults to the model's preemptibility).
#: NONE and VOLUNTARY are the same to rcusim: a task switches only when it blocks or
#: at cond_resched().
_PREEMPT_MODELS = {"CONFIG_PREEMPT_NONE": False, "CONFIG_PREEMPT_VOLUNTARY": False, "CONFIG_PREEMPT": True}
#: With CONFIG_PREEMPT_DYNAMIC the build is preemptible and the choice is preempt='s default.
_DYNAMIC_MODE = {"CONFIG_PREEMPT_NONE": "none", "CONFIG_PREEMPT_VOLUNTARY": "voluntary", "CONFIG_PREEMPT": "full"}
#: The timer-tick choice: NO_HZ_IDLE is rcusim's default; NO_HZ_FULL selects RCU_NOCB_CPU and
#: takes its CPUs from nohz_full= (and offloads them); HZ_PERIODIC keeps every tick (kernel.CONFIG_HZ_PERIODIC).
_TICK_MODELS = ("CONFIG_NO_HZ_IDLE", "CONFIG_NO_HZ_FULL")
_KCONFIG_BOOL = {name for name, f in Kernel.model_fields.items()
                 if name.startswith("CONFIG_") and f.annotation in (bool,)}
_KCONFIG_INT = ("CONFIG_NR_CPUS", "CONFIG_RCU_FANOUT", "CONFIG_RCU_FANOUT_LEAF")
_Y = {"y": True, "n": False}

#: The kfree_rcu_flood keys set from rcuscale.* boot parameters.
_WORKLOAD_PARAMS = ("kfree_nthreads", "kfree_alloc_num", "kfree_loops", "kfree_mult",
                    "kfree_rcu_test_single", "kfree_rcu_test_double", "kfree_by_call_rcu", "holdoff")
#: The rcuscale_writer keys set from rcuscale.* boot parameters.
_WRITER_PARAMS = ("nwriters", "nreaders", "gp_exp", "gp_async", "gp_async_max", "holdoff", "minruntime",
                  "writer_holdoff", "writer_holdoff_jiffies")


def _memory_mb(size: str | None) -> int:
    """kvm.sh's --memory (QEMU's -m: a number of MB, or with an M or G suffix, as kvm.sh's
    check '^[0-9]\\+[MG]\\?$' allows) in MB."""
    if size is None:
        return KVM_DEFAULT_MEMORY_MB
    match = re.fullmatch(r"(\d+)([MG]?)", size.strip().upper())
    number, unit = match.groups() if match else ("0", "")
    if not match or int(number) * _MEMORY_UNITS[unit] < 64:
        raise ScenarioError(f"{size!r} is not a memory size rcusim takes", key="--memory",
                            allowed="a whole number of MB from 64, or with an M or G suffix (e.g. 10G)")
    return int(number) * _MEMORY_UNITS[unit]


def _kconfig(kernel: dict, item: str) -> None:
    """Apply one ``--kconfig`` value (possibly several, space separated, as kvm.sh allows)."""
    for token in item.split():
        name, sep, value = token.partition("=")
        where = f"--kconfig {token}"
        if not sep:
            raise ScenarioError(f"{where}: expected CONFIG_NAME=value", allowed="e.g. CONFIG_NR_CPUS=64")
        if name.startswith("CONFIG_HZ_") and name[10:].isdigit():
            if int(name[10:]) not in _HZ_VALUES or value not in ("y", "n"):
                raise ScenarioError(f"{where}: not a HZ choice",
                                    allowed="CONFIG_HZ_100, _250, _300 or _1000 =y")
            if value == "y":
                kernel["HZ"] = int(name[10:])
        elif name == "CONFIG_HZ":
            if not value.isdigit() or int(value) not in _HZ_VALUES:
                raise ScenarioError(f"{where}: {value!r} is not a HZ value", allowed="100, 250, 300 or 1000")
            kernel["HZ"] = int(value)
        elif name in _PREEMPT_MODELS or name in _TICK_MODELS or name in ("CONFIG_HZ_PERIODIC",
                                                                         "CONFIG_PREEMPT_DYNAMIC"):
            if value not in _Y:
                raise ScenarioError(f"{where}: {value!r} is not a choice value", allowed="y or n")
            if value == "n":
                continue  # the other options of a choice, written out as kvm.sh configs do
            if name == "CONFIG_PREEMPT_DYNAMIC":
                kernel["CONFIG_PREEMPT_DYNAMIC"] = True
            if name == "CONFIG_HZ_PERIODIC":
                kernel["CONFIG_HZ_PERIODIC"] = True
            if name in _PREEMPT_MODELS:
                kernel["CONFIG_PREEMPTION"] = kernel["CONFIG_PREEMPT_RCU"] = _PREEMPT_MODELS[name]
                kernel["preempt="] = _DYNAMIC_MODE[name]
        elif name in _KCONFIG_BOOL:
            if value not in _Y:
                raise ScenarioError(f"{where}: {value!r} is not a bool option value", allowed="y or n")
            kernel[name] = _Y[value]
        elif name in _KCONFIG_INT:
            if not value.isdigit():
                raise ScenarioError(f"{where}: {value!r} is not an integer", allowed="a decimal integer")
            kernel[name] = int(value)
        else:
            known = sorted(_KCONFIG_BOOL | set(_KCONFIG_INT) | set(_PREEMPT_MODELS) | set(_TICK_MODELS)) + [
                "CONFIG_HZ", "CONFIG_HZ_<100|250|300|1000>"]
            raise ScenarioError(f"{where}: unknown Kconfig option {name!r}", allowed=", ".join(known))


def add_kvm_arguments(parser) -> None:
    """Add kvm.sh's options, and rcusim's own, to the ``rcuscale`` subcommand's parser."""
    import argparse

    class Ignore(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            shown = f"{option_string} {values}" if values not in (None, []) else option_string
            namespace.ignored.append(f"{shown}: kvm.sh option with no effect on the simulation, ignored")

    parser.set_defaults(ignored=[])
    parser.add_argument("--torture", help="torture type: rcuscale (rcuperf before v5.10), the default")
    parser.add_argument("--kconfig", action="append", default=[], metavar="CONFIG_X=v",
                        help="Kconfig option(s), as kvm.sh takes them (repeatable)")
    parser.add_argument("--bootargs", action="append", default=[], metavar="ARGS",
                        help="kernel boot parameters, rcuscale.* included (repeatable)")
    parser.add_argument("--memory", metavar="SIZE", help="the guest's memory, as QEMU's -m takes it "
                        f"(e.g. 10G; kvm.sh's default {KVM_DEFAULT_MEMORY_MB}M)")
    for option in IGNORED_WITH_VALUE:
        parser.add_argument(option, action=Ignore, nargs=None, metavar="V", help=argparse.SUPPRESS)
    for option in IGNORED_FLAGS:
        parser.add_argument(option, action=Ignore, nargs=0, help=argparse.SUPPRESS)
    parser.add_argument("--release", default="7.0", help='kernel release to model (rcusim; default "7.0")')
    parser.add_argument("--profile", default="x86-64-server-2023", help="rcusim hardware profile")
    parser.add_argument("--seed", type=int, default=0, help="random seed (rcusim)")
    parser.add_argument("--out", help="also write the results directory here (rcusim)")


def scenario_from_kvm(args, profile: str = "x86-64-server-2023", release: str = "7.0",
                      seed: int = 0) -> tuple[dict, list[str]]:
    """Build a scenario mapping from parsed kvm.sh options.

    Parameters
    ----------
    args : argparse.Namespace
        With ``torture``, ``kconfig`` (list of str), ``bootargs`` (list of str)
        and ``ignored`` (list of notes about options accepted without effect).
    profile, release : str
        rcusim's hardware profile and the kernel release to model.
    seed : int
        Random seed.

    Returns
    -------
    (dict, list of str)
        The scenario mapping (for :func:`rcusim.input.scenario.load_scenario`) and
        the notes to print.

    Raises
    ------
    ScenarioError
        For a torture type other than rcuscale, an unknown Kconfig option, an
        unknown or malformed boot parameter, or an rcuscale test rcusim does not model.
    """
    notes = list(args.ignored)
    try:
        switches = release_switches(parse_release(release))
    except ScenarioError as exc:
        raise exc.with_context(key="--release") from None
    module = "rcuscale" if switches.rcuscale_name else "rcuperf"
    if args.torture not in (None, module):
        renamed = " (rcuperf was renamed rcuscale in v5.10)" if args.torture in ("rcuscale", "rcuperf") else ""
        raise ScenarioError(f"--torture {args.torture}: not the scalability test of release {release}{renamed}",
                            allowed=f"--torture {module}")
    kernel: dict = {"release": release}
    for item in args.kconfig:
        _kconfig(kernel, item)
    if "CONFIG_NO_HZ_FULL=y" in " ".join(args.kconfig).split():
        kernel["CONFIG_RCU_NOCB_CPU"] = True  # NO_HZ_FULL selects RCU_NOCB_CPU (kernel/time/Kconfig)
    mode = kernel.pop("preempt=", "full")
    bootargs, written = _module_params(" ".join(args.bootargs), module, release)
    if kernel.get("CONFIG_PREEMPT_DYNAMIC"):
        # A preemptible build; the Kconfig choice is the boot default, a later preempt= wins.
        kernel["CONFIG_PREEMPTION"] = kernel["CONFIG_PREEMPT_RCU"] = True
        bootargs = f"preempt={mode} {bootargs}".strip()
    try:
        values = parse_bootargs(bootargs)
    except ScenarioError as exc:
        raise exc.with_context(key="--bootargs") from None
    for name in values:
        try:
            check_module_param(name, release, written=written.get(name))
        except ScenarioError as exc:
            raise exc.with_context(key="--bootargs") from None
    nr_cpus = kernel.get("CONFIG_NR_CPUS", 64)
    memory_mb = _memory_mb(getattr(args, "memory", None))
    if values.get("rcuscale.kfree_rcu_test", 0) != 1:
        if module != "rcuscale":
            # rcuperf's lines carry "-perf:" and, before v5.12, one writer-duration more.
            raise ScenarioError(f"rcuperf's GP-writer test (release {release}): rcusim prints the writer test's "
                                "lines as rcuscale (v5.10 on) prints them", key="--bootargs",
                                allowed="rcuperf.kfree_rcu_test=1, or --release 5.10 or later")
        workloads = [_writer_test(values, notes)]
    else:
        workloads = [_kfree_test(values, notes, module)]
    kernel["bootargs"] = " ".join(t for t in bootargs.split() if not t.startswith("rcuscale."))
    if "CONFIG_NR_CPUS" not in kernel:
        notes.append("no CONFIG_NR_CPUS given: 64 CPUs")
    scenario = {
        "name": "rcuscale",
        "seed": seed,
        "hardware": {"profile": profile, "nr_cpus": nr_cpus, "memory_mb": memory_mb},
        "kernel": kernel,
        "workloads": workloads,
    }
    return scenario, notes


def _module_params(bootargs: str, module: str, release: str) -> tuple[str, dict]:
    """The command line with the test module's parameters under the names rcusim knows
    (rcuscale.*), and the names they were written as. The module was rcuperf before v5.10:
    a parameter of the other name is refused."""
    other = "rcuperf" if module == "rcuscale" else "rcuscale"
    tokens, written = [], {}
    for token in bootargs.split():
        name = token.partition("=")[0]
        if name.startswith(other + "."):
            raise ScenarioError(f"{name}: the scalability test module of release {release} is {module} "
                                "(rcuperf was renamed rcuscale in v5.10)", key="--bootargs",
                                allowed=f"{module}.{name.partition('.')[2]}")
        if name.startswith(module + "."):
            known = "rcuscale." + name.partition(".")[2]
            written[known] = name
            token = known + token[len(name):]
        tokens.append(token)
    return " ".join(tokens), written


def _writer_test(values: dict, notes: list) -> dict:
    """rcuscale's GP-writer test as an rcuscale_writer workload, keyed by rcuscale's parameter names."""
    workload: dict = {"kind": "rcuscale_writer"}
    for name in _WRITER_PARAMS:
        if f"rcuscale.{name}" in values:
            workload[name] = values[f"rcuscale.{name}"]
    for name in [n for n in _WORKLOAD_PARAMS if n != "holdoff"] + ["shutdown", "verbose"]:
        if f"rcuscale.{name}" in values:
            notes.append(f"rcuscale.{name} concerns the kfree test or the power-off: no effect here")
    return workload


def kvm_error(exc: ScenarioError) -> ScenarioError:
    """A scenario's error about the rcuscale workload it built, named by the boot parameter."""
    if exc.path and exc.path[:2] == ("workloads", 0) and len(exc.path) == 3 and exc.path[2] != "kind":
        return ScenarioError(exc.problem, key=f"--bootargs rcuscale.{exc.path[2]}", allowed=exc.allowed)
    return exc


def _kfree_test(values: dict, notes: list, module: str) -> dict:
    """rcuscale's kfree test as a kfree_rcu_flood workload."""
    workload: dict = {"kind": "kfree_rcu_flood"}
    for name in _WORKLOAD_PARAMS:
        if f"rcuscale.{name}" in values:
            value = values[f"rcuscale.{name}"]
            workload[name] = bool(value) if name == "kfree_by_call_rcu" else value
    if values.get("rcuscale.gp_exp", False):
        # kfree_scale_thread() then reads exp_completed() / 2 for its batches.
        raise ScenarioError(f"{module}.gp_exp: the kfree test would count expedited grace periods as its "
                            "batches, which rcusim does not report for it", key="--bootargs",
                            allowed=f"{module}.gp_exp=0 with {module}.kfree_rcu_test=1")
    for name in ("gp_async", "gp_async_max", "nreaders", "nwriters", "shutdown", "minruntime",
                 "writer_holdoff", "writer_holdoff_jiffies", "verbose"):
        if f"rcuscale.{name}" in values:
            notes.append(f"{module}.{name} concerns the GP-writer test or the power-off: no effect here")
    return workload
