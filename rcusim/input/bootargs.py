"""Kernel command-line parameters that rcusim understands.

A scenario's ``kernel.bootargs`` is a kernel command line such as::

    rcutree.blimit=16 rcu_nocbs=0-63 rcutree.rcu_normal_wake_from_gp=1

:func:`parse_bootargs` turns it into a mapping from parameter name to a typed
value, the way the kernel would read it:

* tokens are separated by white space; each is ``name=value`` or a bare ``name``;
* dashes and underscores in a name are the same, as in the kernel's
  ``parameq()``; names are returned with underscores;
* integers are read as ``kstrtoint(s, 0)`` reads them: decimal, ``0x`` hex, and
  a leading ``0`` means octal (``010`` is 8);
* booleans accept 1/0, y/n, yes/no, on/off, true/false in any case, and a bare
  boolean parameter means true, as the kernel's ``param_set_bool()`` does;
* a later token overrides an earlier one for the same parameter, so a variant
  can append to a base command line.

Unknown names and unparsable values raise :class:`~rcusim.errors.ScenarioError`.
Values the kernel accepts and later clamps (``rcutree.jiffies_till_first_fqs``
above HZ, ``rcutree.kthread_prio`` above 99, ...) are accepted here and
clamped where rcusim resolves them (:mod:`rcusim.input.resolve`), because the clamp
depends on other settings such as HZ.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from rcusim.errors import ScenarioError
from rcusim.input.cpulist import CPULIST_ALLOWED, parse_cpulist

__all__ = ["Param", "PARAMETERS", "TRACEPOINTS", "parse_bootargs", "last_tokens"]

#: The tracepoints whose events rcusim prices where 6.12's code records them (trace_event=).
TRACEPOINTS = ("sched:sched_switch", "sched:sched_waking", "sched:sched_wakeup", "rcu:rcu_grace_period",
               "rcu:rcu_exp_grace_period", "rcu:rcu_quiescent_state_report", "rcu:rcu_fqs")

_INT_RANGES = {
    "int": (-(2**31), 2**31 - 1),
    "long": (-(2**63), 2**63 - 1),
    "ulong": (0, 2**64 - 1),
}
# The most CPUs rcusim models; bounds cpulists when the CPU count is not known.
_MAX_CPUS = 8192


@dataclass(frozen=True)
class Param:
    """One kernel command-line parameter.

    Attributes
    ----------
    name : str
        Full name as written on the command line, e.g. ``"rcutree.blimit"``.
    kind : str
        ``"int"``, ``"long"``, ``"ulong"`` (the kernel's C types), ``"bool"``,
        ``"flag"`` (bare only), ``"cpulist"``, ``"optional_cpulist"``
        (bare or with a list), ``"choice"`` (a word of `choices`), or
        ``"choices"`` (a comma-separated list of them, each once).
    doc : str
        What the parameter does, and how rcusim uses it.
    lo, hi : int or None
        Values outside ``[lo, hi]`` are refused (in addition to the C type's range).
    allowed : str or None
        Text for error messages when the plain type description is not enough.
    exclude : tuple of int
        Values inside ``[lo, hi]`` that are refused all the same.
    choices : tuple of str
        For ``"choice"``: the words rcusim models.
    not_modelled : tuple of str
        For ``"choice"``: words the kernel knows and rcusim refuses as not modelled.
    """

    name: str
    kind: str
    doc: str
    lo: int | None = None
    hi: int | None = None
    allowed: str | None = None
    exclude: tuple[int, ...] = ()
    choices: tuple[str, ...] = ()
    not_modelled: tuple[str, ...] = ()


_PARAMS = [
    # --- rcutree (kernel/rcu/tree.c, tree_nocb.h) -------------------------------
    Param("rcutree.blimit", "long", "Minimum callbacks per rcu_do_batch() (default 10).", lo=0),
    Param("rcutree.qhimark", "long", "Queue length above which blimit is ignored (default 10000).", lo=0),
    Param("rcutree.qlowmark", "long", "Queue length at which blimit is restored (default 100).", lo=0),
    Param("rcutree.qovld", "long",
          "Per-CPU queue length counting as overload; refused: callback overload is not modelled."),
    Param("rcutree.rcu_divisor", "int",
          "bl = max(blimit, ready >> rcu_divisor) (default 7; the kernel uses 7 for negative "
          "values and caps it at 62)."),
    Param("rcutree.rcu_resched_ns", "long",
          "Time limit of one callback batch (default 3 ms; clamped to 1 ms..1 s)."),
    Param("rcutree.jiffies_till_first_fqs", "ulong",
          "Jiffies before the first force-quiescent-state scan (clamped to HZ)."),
    Param("rcutree.jiffies_till_next_fqs", "ulong",
          "Jiffies between later force-quiescent-state scans (clamped to 1..HZ)."),
    Param("rcutree.jiffies_till_sched_qs", "ulong",
          "Jiffies before RCU asks the scheduler for a quiescent state (default: computed)."),
    Param("rcutree.rcu_fanout_leaf", "int",
          "CPUs per leaf rcu_node (the kernel ignores values outside 2..64 or too small "
          "for the compiled tree)."),
    Param("rcutree.rcu_fanout_exact", "bool", "Use the exact fanout instead of balancing (default n)."),
    Param("rcutree.rcu_normal_wake_from_gp", "int",
          "synchronize_rcu() waiters woken from the GP kthread: 1 on, 0 off, -1 auto "
          "(the release's default)."),
    Param("rcutree.use_softirq", "bool", "Invoke callbacks in RCU_SOFTIRQ (y) or rcuc kthreads (n)."),
    Param("rcutree.kthread_prio", "int", "SCHED_FIFO priority of RCU kthreads (clamped to 0..99)."),
    Param("rcutree.rcu_nocb_gp_stride", "int",
          "CPUs per rcuog group; -1 means nr_cpu_ids / int_sqrt(nr_cpu_ids).", lo=-1,
          allowed="-1 (auto) or an integer >= 1",
          # 0 would make the kernel divide by zero when it forms the groups.
          exclude=(0,)),
    Param("rcutree.enable_rcu_lazy", "bool", "Let call_rcu() queue lazy callbacks (CONFIG_RCU_LAZY)."),
    Param("rcutree.rcu_min_cached_objs", "int",
          "Bulk pages kvfree_rcu() keeps cached per CPU (from v5.9; default 2, 5 from v5.11).", lo=0, hi=1000),
    # --- NOCB and nohz_full (kernel/rcu/tree_nocb.h, kernel/sched/isolation.c) -----
    Param("rcu_nocbs", "optional_cpulist",
          "Offload callbacks of these CPUs; bare: NOCB machinery on with no CPU offloaded."),
    Param("rcu_nocb_poll", "flag",
          "rcuog/rcuop kthreads poll every jiffy instead of being woken; refused: polling is not modelled."),
    Param("nohz_full", "cpulist", "Adaptive-tick CPUs (CONFIG_NO_HZ_FULL); they are always offloaded."),
    # --- rcupdate (kernel/rcu/update.c) ------------------------------------------
    Param("rcupdate.rcu_expedited", "int", "Non-zero: synchronize_rcu() uses expedited GPs."),
    Param("rcupdate.rcu_normal", "int", "Non-zero: expedited GPs fall back to normal ones."),
    Param("rcupdate.rcu_normal_after_boot", "int", "Non-zero: rcu_normal once boot is over."),
    # 2004-era throttling patch (LKML, "[PATCH] RCU for low latency", March 2004).
    Param("rcupdate.rcumaxbatch", "int", "2004 patch: callbacks per softirq pass.", lo=1),
    Param("rcupdate.rcuplugticks", "int",
          "2004 patch: ticks to hold callbacks back after a full batch (default 4).", lo=0),
    # rcu-low-lat (LKML, "[PATCH] RCU for low latency (experimental)", 23 March 2004).
    Param("rcupdate.bhlimit", "int",
          "2004 rcu-low-lat patch: callbacks in softirq before krcud takes over (0: no krcud).", lo=0),
    # --- scheduler (kernel/sched/core.c) ------------------------------------------
    Param("preempt", "choice",
          "The preemption model of a CONFIG_PREEMPT_DYNAMIC kernel: none and voluntary preempt "
          "only at preemption points, full anywhere (sched_dynamic_mode()).",
          choices=("none", "voluntary", "full"), not_modelled=("lazy",)),
    # --- cpuidle (drivers/cpuidle/governor.c) --------------------------------------
    Param("cpuidle.governor", "choice",
          "The cpuidle governor; menu, the default of every release, is the one rcusim models.",
          choices=("menu",), not_modelled=("teo", "ladder", "haltpoll")),
    # --- tracing (kernel/trace/trace_events.c) -----------------------------------------
    Param("trace_event", "choices",
          "Tracepoints enabled from boot, as group:name (setup_trace_event()): each event they "
          "record costs its CPU the hardware profile's price of a traced event (its tracing "
          "section, measured in the guest).",
          choices=TRACEPOINTS),
    # --- torture (kernel/torture.c) ----------------------------------------------
    Param("torture.disable_onoff_at_boot", "bool", "Accepted for compatibility; no effect in rcusim."),
]

# rcuscale module parameters (kernel/rcu/rcuscale.c): `python -m rcusim rcuscale` builds
# its scenario from them (rcusim.input.kvmcmd); a scenario's kernel.bootargs refuses them.
_RCUSCALE = {
    "kfree_rcu_test": "int", "kfree_nthreads": "int", "kfree_alloc_num": "int",
    "kfree_loops": "int", "kfree_mult": "int", "kfree_rcu_test_double": "bool",
    "kfree_rcu_test_single": "bool", "kfree_by_call_rcu": "int", "holdoff": "int",
    "gp_exp": "bool", "gp_async": "bool", "gp_async_max": "int", "nreaders": "int", "nwriters": "int",
    "shutdown": "bool", "minruntime": "int", "writer_holdoff": "int", "writer_holdoff_jiffies": "int",
    "verbose": "int",
}
_PARAMS += [Param(f"rcuscale.{n}", k, f"rcuscale module parameter {n} (python -m rcusim rcuscale only).")
            for n, k in _RCUSCALE.items()]

PARAMETERS: dict[str, Param] = {p.name: p for p in _PARAMS}
"""Every parameter rcusim accepts, by name."""

_TRUE = {"1", "y", "yes", "on", "true"}
_FALSE = {"0", "n", "no", "off", "false"}
_INT_RE = re.compile(r"^[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$")


def parse_bootargs(text: str, nr_cpus: int | None = None) -> dict[str, object]:
    """Parse a kernel command line into typed values.

    Parameters
    ----------
    text : str
        The command line, e.g. ``"rcutree.blimit=16 rcu_nocbs=0-63"``.
    nr_cpus : int, optional
        Number of CPUs, to check CPU lists against. Without it CPU lists are
        checked for syntax only.

    Returns
    -------
    dict
        Parameter name (underscores, as in :data:`PARAMETERS`) to value: an
        ``int`` for integer parameters, a ``bool`` for boolean ones and flags,
        and the CPU-list string for CPU lists (``""`` for a bare ``rcu_nocbs``).
        Only parameters present on the command line appear.

    Raises
    ------
    ScenarioError
        For an unknown parameter or a value that cannot be parsed. The error's
        ``token`` is the offending token; its key path is left for the caller.
    """
    if not isinstance(text, str):
        raise ScenarioError(f"{text!r} is not a kernel command line",
                            allowed="a string of name=value tokens")
    values: dict[str, object] = {}
    for token in text.split():
        name, sep, raw = token.partition("=")
        name = _canonical_name(name)
        param = PARAMETERS.get(name)
        if param is None:
            raise ScenarioError(f"unknown parameter {token.partition('=')[0]!r}",
                                allowed=_suggest(name), token=token)
        values[name] = _parse_value(param, raw if sep else None, token, nr_cpus)
    return values


def last_tokens(text: str) -> tuple[str, ...]:
    """The command line with each parameter once: its last token, the one whose value
    :func:`parse_bootargs` keeps, in the order of those tokens."""
    tokens = text.split()
    last = {_canonical_name(t.partition("=")[0]): i for i, t in enumerate(tokens)}
    return tuple(tokens[i] for i in sorted(last.values()))


def _canonical_name(name: str) -> str:
    """Return `name` with dashes turned into underscores, as parameq() compares."""
    return name.replace("-", "_")


def _suggest(name: str) -> str:
    """Describe what is allowed instead of an unknown parameter."""
    # Compare the part after the module prefix, so that "rcutree.foo" does not
    # look like every other rcutree parameter.
    prefix, dot, rest = name.rpartition(".")
    same = {p.rpartition(".")[2]: p for p in PARAMETERS if p.rpartition(".")[0] == prefix}
    close = difflib.get_close_matches(rest if dot else name, same, n=1, cutoff=0.75)
    hint = f" (did you mean {same[close[0]]!r}?)" if close else ""
    return "a parameter listed by 'python -m rcusim bootargs'" + hint


def _parse_value(param: Param, raw: str | None, token: str, nr_cpus: int | None):
    """Parse the value of one token for `param` (`raw` is None for a bare name)."""
    kind = param.kind
    if kind == "flag":
        if raw is not None:
            # The kernel's __setup("rcu_nocb_poll") turns polling on whatever
            # follows the name; refusing a value avoids "=0" meaning "on".
            raise ScenarioError(f"{param.name} takes no value, got {token!r}",
                                allowed=f"the bare word {param.name}", token=token)
        return True
    if kind == "bool":
        if raw is None:
            return True
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise ScenarioError(f"bad value in {token!r}",
                            allowed=f"{param.name}=1/0, y/n, yes/no, on/off or true/false",
                            token=token)
    if kind == "choice":
        allowed = " or ".join(f"{param.name}={c}" for c in param.choices)
        if raw in param.not_modelled:
            raise ScenarioError(f"{raw!r} in {token!r} is not modelled", allowed=allowed, token=token)
        if raw not in param.choices:
            raise ScenarioError(f"unknown value in {token!r}", allowed=allowed, token=token)
        return raw
    if kind == "choices":
        allowed = f"{param.name}= a comma-separated list of " + ", ".join(param.choices)
        if not raw:
            raise ScenarioError(f"{param.name} needs a list, got {token!r}", allowed=allowed, token=token)
        words = raw.split(",")
        bad = [w for w in words if w not in param.choices]
        if bad or len(set(words)) < len(words):
            problem = f"{bad[0]!r} in {token!r} is not modelled" if bad else f"an event twice in {token!r}"
            raise ScenarioError(problem, allowed=allowed, token=token)
        return tuple(words)
    if kind in ("cpulist", "optional_cpulist"):
        if raw is None:
            if kind == "cpulist":
                raise ScenarioError(f"{param.name} needs a CPU list, got {token!r}",
                                    allowed=CPULIST_ALLOWED, token=token)
            return ""
        try:
            parse_cpulist(raw, nr_cpus if nr_cpus is not None else _MAX_CPUS)
        except ScenarioError as exc:
            # The kernel offloads every CPU when rcu_nocbs= has an invalid list;
            # rcusim refuses it instead, so that a typo cannot go unnoticed.
            note = " (the kernel would offload every CPU)" if param.name == "rcu_nocbs" else ""
            raise ScenarioError(f"bad CPU list in {token!r}: {exc.problem}{note}",
                                allowed=exc.allowed, token=token) from None
        return raw
    # Integer kinds.
    lo_c, hi_c = _INT_RANGES[kind]
    lo = max(lo_c, param.lo) if param.lo is not None else lo_c
    hi = min(hi_c, param.hi) if param.hi is not None else hi_c
    allowed = param.allowed or _describe_int(lo, hi)
    if raw is None:
        raise ScenarioError(f"{param.name} needs a value, got {token!r}",
                            allowed=f"{param.name}=<{allowed}>", token=token)
    if not _INT_RE.match(raw):
        raise ScenarioError(f"bad value in {token!r}", allowed=allowed, token=token)
    value = _kstrtoint(raw)
    if not lo <= value <= hi or value in param.exclude:
        raise ScenarioError(f"{value} in {token!r} is out of range", allowed=allowed,
                            token=token)
    return value


def _kstrtoint(raw: str) -> int:
    """Read an integer with base 0, as kstrtoint(s, 0, ...) does."""
    sign = -1 if raw.startswith("-") else 1
    digits = raw.lstrip("+-")
    if digits[:2] in ("0x", "0X"):
        return sign * int(digits[2:], 16)
    if len(digits) > 1 and digits.startswith("0"):
        return sign * int(digits, 8)
    return sign * int(digits, 10)


def _describe_int(lo: int, hi: int) -> str:
    """Describe an integer range for messages."""
    if lo == _INT_RANGES["long"][0] or lo == _INT_RANGES["int"][0]:
        return "an integer"
    if hi in (_INT_RANGES["long"][1], _INT_RANGES["int"][1], _INT_RANGES["ulong"][1]):
        return f"an integer >= {lo}"
    return f"an integer from {lo} to {hi}"
