"""Hostile-input fuzz tests of the command line, run in-process through ``rcusim.commands.cli.main``.

The hostile invocations of ``run`` and ``sweep`` (over 600: input paths that are missing,
directories, devices, a FIFO, too long or not paths at all; results directories and trace files
that cannot be written; scenario and sweep names; --from files; bad keys and values in --set and in
sweep files; huge numbers, NUL bytes) must each be refused: exit status 2, one stderr line, no
traceback, nothing written.

Then scenario files and command lines are derived from the bundled scenario by a
seeded ``random.Random``. Every case must end in one of two ways:

* exit status 0: a valid run, whose results directory is complete, with nothing on
  stderr but notes (``rcusim: note: ``, e.g. a patch the release already has); or
* exit status 2 with exactly one stderr line starting ``rcusim: error: ``;

never an uncaught exception, never a traceback, and never a leftover results
directory or temporary directory (``.<name>.tmp-*``) after a failure.

The number of cases comes from ``RCUSIM_FUZZ_N`` (default 150, which keeps this
file well under a minute on a small machine); larger counts such as
``RCUSIM_FUZZ_N=1500`` are meant for local runs. ``RCUSIM_FUZZ_SEED`` changes
the seed; each case is reproducible from the seed and its index alone.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import random
import re
import shutil
import signal
import stat
from collections import Counter
from pathlib import Path

import pytest
import yaml

from rcusim.commands.cli import main

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "scenarios" / "sync_rcu_10k.yaml"

# Larger counts (e.g. RCUSIM_FUZZ_N=1500) are for local runs; 150 keeps CI fast.
N_CASES = int(os.environ.get("RCUSIM_FUZZ_N", "150"))
FUZZ_SEED = int(os.environ.get("RCUSIM_FUZZ_SEED", "20240109"))

# No single case may take longer than this (seconds of wall-clock time).
CASE_LIMIT_S = 30
# Given on every command line, after the file and before the mutated --set
# arguments, so that no valid mutation simulates for long (the mutated values
# that may still replace it are small).
TIME_GUARD = "run.max_sim_time_s=0.5"
RESULT_FILES = {"summary.json", "latencies.parquet", "gps.parquet", "latency_hist.png",
                "report.txt"}


def small_bundled_text() -> str:
    """The bundled scenario, comments and all, with a tiny workload."""
    text = BUNDLED.read_text(encoding="utf-8")
    small, n = re.subn(r"(?m)^(\s+tasks:\s*)10000\b", r"\g<1>24", text)
    small, m = re.subn(r"(?m)^(\s+loops:\s*)1000\b", r"\g<1>3", small)
    assert n == 1 and m == 1, "the bundled scenario no longer has 'tasks: 10000' / 'loops: 1000'"
    return small


BASE_TEXT = small_bundled_text()
BASE_DOC = yaml.safe_load(BASE_TEXT)

# ------------------------------------------------------------------ value pools

# Values that replace a scenario value. Valid-looking numbers are kept small
# (at most 64) so that a mutation that happens to be valid still runs quickly.
HOSTILE_VALUES = [
    None, True, False, 0, 1, 2, 3, 7, 64, -1, -3, -(10**30), 10**30, 2**31, 2**31 - 1,
    2**63, 2**63 - 1, 2**64, 2**64 - 1, 10**6 + 1, 10**7 + 1, 8193,
    0.0, -0.0, 0.5, 1.5, 2.0, 3.0, -0.5, -1e-9, 1e-300, 1e30, -1e30, 1e308,
    float("inf"), float("-inf"), float("nan"),
    "", " ", "abc", "1000", "0x10", "010", "1e3", "6.6", "6.10", "99.99", "1.2.3.4",
    "all", "N", "0-N", "true", "null", "~", "x" * 5000, "é", "\u202e\u0000", "\t\n",
    [], [1, 2], [[]], {}, {"a": 1}, {"kind": "sync_loop"},
]

BAD_CPULISTS = [
    "", " ", ",", ",,", "0-", "-1", "5-3", "0-15:2", "0-15:0/0", "0-15:3/2", "0-15:1/0",
    "N-0", "all:3/2", "all:0/0", "99999", "64", "0-64", "0-99999999999999999999", "1e3",
    "0x10", "a-b", "0--1", "0-3:1/2/3", "ALL", "all,all", "0-N:1/2", "3", "0,0,0",
    "N", "1-N", "0-63:1/64", "00-07",
]
BAD_TOKENS = [
    "rcutree.blimit=abc", "rcutree.blimit=", "rcutree.blimit", "=5", "=", "==",
    "rcutree.foo=1", "rcutree.blimit=-1", "rcutree.blimit=99999999999999999999999",
    "rcutree.blimit=9223372036854775807", "rcutree.blimit=2147483648",
    "rcutree.qhimark=9223372036854775807", "rcutree.qlowmark=9223372036854775807",
    "rcutree.jiffies_till_sched_qs=18446744073709551614",
    "rcutree.jiffies_till_sched_qs=9223372036854775808",
    "rcutree.jiffies_till_sched_qs=18446744073709551615",
    "rcutree.jiffies_till_first_fqs=4294967295", "rcutree.jiffies_till_next_fqs=0",
    "rcutree.rcu_resched_ns=9223372036854775807", "rcutree.rcu_divisor=-9223372036854775808",
    "rcutree.kthread_prio=-1", "rcutree.kthread_prio=1000", "rcutree.use_softirq=maybe",
    "rcutree.use_softirq", "rcu_nocb_poll=1", "rcu_nocbs", "rcu_nocbs=", "rcu_nocbs=0-9999",
    "rcu_nocbs=0-15:2", "nohz_full=all", "nohz_full=0", "nohz_full=1-N", "rcu_nocbs=all",
    "rcutree.rcu_fanout_leaf=1", "rcutree.rcu_fanout_leaf=65", "rcutree.rcu_fanout_leaf=2",
    "rcutree.rcu_fanout_exact=1", "rcutree.rcu_nocb_gp_stride=0",
    "rcutree.rcu_nocb_gp_stride=-2", "rcutree.rcu_nocb_gp_stride=1",
    "rcutree.rcu_normal_wake_from_gp=1", "rcutree.rcu_normal_wake_from_gp=-1",
    "rcupdate.rcu_expedited=1", "rcupdate.rcu_normal=1", "rcupdate.rcumaxbatch=0",
    "rcupdate.rcuplugticks=-1", "rcutree.enable_rcu_lazy=1", "rcutree.blimit=0x10",
    "rcutree.blimit=010", "rcutree.blimit=08", "rcutree.blimit=1", "rcutree.qovld=-1",
    "rcuscale.nreaders=4", "rcuscale.bogus=1", "a=b=c", '"rcutree.blimit=1"',
    "rcutree..blimit=1", ".=1", "rcutree.blimit=1\u00e9", "\u00e9=1", "x" * 3000,
]
VALID_TWEAKS = [
    ("hardware.nr_cpus", [1, 2, 3, 7, 16, 17, 63, 130, 300]),
    ("hardware.profile", ["pentium4-2.4ghz-up", "xeon-e5405-8cpu", "x86-64-server-2023"]),
    ("kernel.HZ", [100, 250, 300, 1000]),
    ("kernel.release", ["2.6", "4.19", "6.1", "6.9", "6.10", "6.17"]),
    ("kernel.CONFIG_RCU_FANOUT", [2, 3, 16, 64]),
    ("kernel.CONFIG_RCU_FANOUT_LEAF", [2, 3, 16, 64]),
    ("kernel.CONFIG_RCU_NOCB_CPU", [True, False]),
    ("kernel.CONFIG_PREEMPT_RCU", [True, False]),
    ("kernel.CONFIG_PREEMPTION", [True, False]),
    ("kernel.CONFIG_RCU_LAZY", [True, False]),
    ("kernel.CONFIG_RCU_BOOST", [True, False]),
    ("kernel.bootargs", ["", "rcu_nocbs=0-N:1/2", "rcu_nocbs=all",
                         "rcutree.use_softirq=0", "rcutree.blimit=1", "nohz_full=1-N",
                         "rcutree.rcu_normal_wake_from_gp=1", "rcutree.kthread_prio=50",
                         "rcupdate.rcu_normal=1", "rcutree.jiffies_till_first_fqs=0"]),
    ("workloads.0.rt", [True, False]),
    ("workloads.0.cpus", ["all", "0", "0-3", "N", "0-N:1/2", "1"]),
    ("workloads.0.think_us", [0, 0.5, 10.0, 250]),
    ("workloads.0.start_us", [0, 1.5, 1000]),
    ("workloads.0.work_after", ["none", "kfree"]),
    ("workloads.0.primitive", ["synchronize_rcu", "synchronize_rcu_expedited"]),
    ("workloads.0.tasks", [1, 2, 5, 40]),
    ("workloads.0.loops", [1, 2, 4]),
    ("hardware.costs.ctxsw_ns", [0, 1, 5000]),
    ("hardware.costs.wakeup_idle_median_ns", [0, 1, 100000]),
    ("hardware.costs.wakeup_idle_p99_ns", [0, 1, 10]),
    ("run.max_sim_time_s", [0.001, 0.5, 1.0]),
]
OVERRIDE_KEYS = [
    "hardware.nr_cpus", "hardware.profile", "hardware.costs.tick_ns", "hardware.costs.bogus",
    "hardware", "kernel", "kernel.HZ", "kernel.release", "kernel.bootargs",
    "kernel.CONFIG_RCU_FANOUT", "kernel.CONFIG_RCU_FANOUT_LEAF", "kernel.CONFIG_NR_CPUS",
    "kernel.CONFIG_RCU_NOCB_CPU", "workloads", "workloads.0", "workloads.0.tasks",
    "workloads.0.loops", "workloads[0].cpus", "workloads.0.kind", "workloads.0.think_us",
    "workloads.0.start_us", "workloads.1.tasks", "workloads[7]", "run", "run.max_sim_time_s",
    "run.bogus", "seed", "name", "description", "variants", "variants.default",
    "variants.default.kernel.HZ", "variants.wake_from_gp.kernel.bootargs",
    "variants.nope.kernel.HZ", "variants.default.bogus", "bogus", "bogus.deeper",
    "", ".", "..", "kernel..HZ", "kernel.HZ.", ".kernel", "workloads[x].tasks",
    "workloads[-1].tasks", "workloads[99999999999999999999].tasks", "a b", "kernel[0]",
    "\u00e9", "x" * 400, "workloads.0.tasks[0]", "hardware.nr_cpus.x",
]
OVERRIDE_VALUES = [
    "", "0", "1", "2", "-1", "3", "64", "1000", "abc", "1e3", "1.0e+30", "-1.0e+30", ".inf",
    ".nan", "-.inf", "null", "~", "true", "no", "0x10", "0o10", "[]", "[1, 2]", "{}",
    "{a: 1}", "{kind: sync_loop, tasks: 1, loops: 1}", "[{kind: sync_loop, tasks: 2, loops: 1}]",
    "[", "]", "{", "}", "&a [*a]", "*a", "!!python/object/apply:os.system ['true']",
    "!!binary aGVsbG8=", "!!set {a, b}", "2001-12-14", "'quoted'", '"dq', "a: b: c",
    "- x", "|", ">", "%YAML 1.2", "---", "...", "\t", "x" * 10000, "\u00e9", "\x00",
    "\udcff", "18446744073709551616", "99999999999999999999999999999999",
    "6.6", "6.10", "rcutree.blimit=abc", "rcu_nocbs=0-9999", "0-N:1/2", "N-0",
]


# ------------------------------------------------------------------ mutations

def walk(node, path=()):
    """Yield (path, value) for every node of a parsed document."""
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from walk(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, path + (i,))


def get_parent(doc, path):
    node = doc
    for part in path[:-1]:
        node = node[part]
    return node


def set_path(doc, dotted: str, value) -> None:
    """Set a dotted key (numbers index lists), creating mappings on the way."""
    node = doc
    parts = [int(p) if p.isdigit() else p for p in dotted.split(".")]
    for part in parts[:-1]:
        if isinstance(node, list):
            node = node[part]
        else:
            node = node.setdefault(part, {})
    node[parts[-1]] = value


def dump(doc) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10**6)


def random_path(rng, doc, want=None):
    paths = [p for p, v in walk(doc) if p and (want is None or want(v))]
    return rng.choice(paths) if paths else None


def mut_delete_key(rng, doc):
    path = random_path(rng, doc)
    del get_parent(doc, path)[path[-1]]
    return f"delete {path}", dump(doc)


def mut_replace_value(rng, doc):
    path = random_path(rng, doc)
    value = copy.deepcopy(rng.choice(HOSTILE_VALUES))
    get_parent(doc, path)[path[-1]] = value
    return f"replace {path} with {value!r:.60}", dump(doc)


def mut_swap_values(rng, doc):
    parents = [(p, v) for p, v in walk(doc) if isinstance(v, dict) and len(v) >= 2]
    path, node = rng.choice(parents)
    a, b = rng.sample(list(node), 2)
    node[a], node[b] = node[b], node[a]
    return f"swap {path}: {a} <-> {b}", dump(doc)


def mut_rename_key(rng, doc):
    parents = [(p, v) for p, v in walk(doc) if isinstance(v, dict) and v]
    path, node = rng.choice(parents)
    old = rng.choice(list(node))
    new = rng.choice(["bogus", "Tasks", "HZ", "hardware", "kind", "tasks ", "", "x" * 300,
                      "kernel.HZ", "nr_cpus", "1", "\u00e9"])
    items = [(new if k == old else k, v) for k, v in node.items()]
    node.clear()
    node.update(items)
    return f"rename {path + (old,)} to {new!r:.40}", dump(doc)


def mut_unknown_key(rng, doc):
    parents = [(p, v) for p, v in walk(doc) if isinstance(v, dict)]
    path, node = rng.choice(parents)
    key = rng.choice(["bogus", "CONFIG_RCU_FOO", "nr_cpu", "task", "extra", "variants"])
    node[key] = copy.deepcopy(rng.choice(HOSTILE_VALUES))
    return f"unknown key {path + (key,)}", dump(doc)


def mut_duplicate_line(rng, doc):
    lines = BASE_TEXT.splitlines(keepends=True)
    keyed = [i for i, line in enumerate(lines) if re.match(r'^\s*[\w"-][^#]*:', line)]
    i = rng.choice(keyed)
    lines.insert(i + 1, lines[i])
    return f"duplicate line {i + 1}", "".join(lines)


def mut_swap_lines(rng, doc):
    lines = BASE_TEXT.splitlines(keepends=True)
    i, j = rng.sample(range(len(lines)), 2)
    lines[i], lines[j] = lines[j], lines[i]
    return f"swap lines {i + 1} and {j + 1}", "".join(lines)


def mut_truncate(rng, doc):
    cut = rng.randrange(len(BASE_TEXT))
    return f"truncate at {cut}", BASE_TEXT[:cut]


def mut_huge_number(rng, doc):
    # Written into the text: a number too long for int() (over 4300 digits) cannot be dumped.
    numbers = list(re.finditer(r"(?m)^(\s*[\w\"-]+:\s*)(\d+)\s*(?:#.*)?$", BASE_TEXT))
    m = rng.choice(numbers)
    value = rng.choice(["1" + "0" * 30, "-1" + "0" * 30, str(2**63), str(2**64), "9" * 5000,
                        "1.0e+308", "-1.0e+308", "1.0e+400", "0x" + "f" * 40, "0b" + "1" * 100,
                        "1_000_000_000_000", "190:20:30"])
    text = BASE_TEXT[:m.start(2)] + value + BASE_TEXT[m.end(2):]
    return f"huge number {value:.20} for {m[1].strip()}", text


def mut_negative_time(rng, doc):
    key = rng.choice(["workloads.0.start_us", "workloads.0.think_us", "run.max_sim_time_s",
                      "hardware.costs.tick_ns", "hardware.costs.ctxsw_ns"])
    value = rng.choice([-1, -0.5, -1e-9, -(10**30), float("-inf")])
    set_path(doc, key, value)
    return f"negative time {key}={value}", dump(doc)


def mut_float_for_int(rng, doc):
    key = rng.choice(["hardware.nr_cpus", "workloads.0.tasks", "workloads.0.loops", "seed",
                      "kernel.HZ", "kernel.CONFIG_RCU_FANOUT", "hardware.costs.ipi_send_ns"])
    value = rng.choice([2.0, 8.5, 0.1, 1e3, float("nan")])
    set_path(doc, key, value)
    return f"float for int {key}={value}", dump(doc)


def mut_bad_cpulist(rng, doc):
    cpus = rng.choice(BAD_CPULISTS)
    if rng.random() < 0.5:
        set_path(doc, "workloads.0.cpus", cpus)
        return f"cpus {cpus!r}", dump(doc)
    name = rng.choice(["rcu_nocbs", "nohz_full"])
    doc["kernel"]["bootargs"] = f"{name}={cpus}"
    return f"bootargs {name}={cpus!r}", dump(doc)


def mut_bad_bootargs(rng, doc):
    tokens = " ".join(rng.choice(BAD_TOKENS) for _ in range(rng.randint(1, 3)))
    if rng.random() < 0.3:
        doc["variants"]["wake_from_gp"]["kernel.bootargs"] = tokens
    else:
        doc["kernel"]["bootargs"] = tokens
    return f"bootargs {tokens:.80}", dump(doc)


def mut_valid_tweaks(rng, doc):
    # Mostly valid changes, to drive unusual but legal configurations through the engine.
    done = []
    for key, values in rng.sample(VALID_TWEAKS, rng.randint(1, 5)):
        value = rng.choice(values)
        set_path(doc, key, value)
        done.append(f"{key}={value}")
    return "tweaks " + ", ".join(done), dump(doc)


def mut_deep_nesting(rng, doc):
    depth = rng.choice([60, 200, 5000])
    form = rng.randrange(4)
    if form == 0:
        text = "[" * depth + "]" * depth + "\n"
    elif form == 1:
        text = "name: " + "{a: " * depth + "1" + "}" * depth + "\n"
    elif form == 2:
        text = "".join("  " * i + "a:\n" for i in range(depth)) + "  " * depth + "1\n"
    else:
        text = BASE_TEXT + "run: " + "[" * depth + "]" * depth + "\n"
    return f"deep nesting {depth} form {form}", text


def mut_empty(rng, doc):
    text = rng.choice(["", " ", "\n\n", "# only a comment\n", "---\n", "...\n", "~\n",
                       "null\n", "\ufeff", "--- \n...\n"])
    return f"empty {text!r}", text


def mut_junk(rng, doc):
    size = rng.choice([1, 16, 512, 4096])
    data = rng.randbytes(size)
    if rng.random() < 0.5:
        data = data.replace(b"\x00", b"")
    return f"junk {size} bytes", data


def mut_alias_bomb(rng, doc):
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    where = rng.choice(["top", "workloads", "merge"])
    if where == "top":
        text = "\n".join(lines) + "\n"
    elif where == "workloads":
        text = BASE_TEXT.replace("\nworkloads:\n", "\nx: &x\n  " + "\n  ".join(lines)
                                 + "\nworkloads_unused: *x\nworkloads:\n", 1)
    else:
        text = ("base: &base\n  " + "\n  ".join(lines) + "\n" + "hardware:\n  <<: *base\n")
    return f"alias bomb ({where})", text


def mut_long_string(rng, doc):
    size = rng.choice([10_000, 200_000, 1_100_000])
    where = rng.choice(["name", "description", "bootargs", "key", "cpus"])
    if where == "key":
        doc["x" * size] = 1
    elif where == "bootargs":
        doc["kernel"]["bootargs"] = ("rcutree.blimit=1 " * (size // 17)).strip()
    elif where == "cpus":
        set_path(doc, "workloads.0.cpus", ",".join(["0"] * (size // 2)))
    else:
        doc[where] = "x" * size
    return f"long string {where} {size}", dump(doc)


def mut_non_utf8(rng, doc):
    data = BASE_TEXT.encode("utf-8")
    bad = rng.choice([b"\xff", b"\xfe\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe9", b"\x80\x80"])
    form = rng.randrange(3)
    if form == 0:
        pos = rng.randrange(len(data))
        data = data[:pos] + bad + data[pos:]
    elif form == 1:
        data = data.replace(b"name: sync_rcu_10k", b"name: sync_rcu_" + bad, 1)
    else:
        data = BASE_TEXT.encode(rng.choice(["utf-16", "utf-32", "latin-1"]))
    return f"non-UTF-8 {bad!r} form {form}", data


def mut_yaml_oddities(rng, doc):
    text = rng.choice([
        BASE_TEXT + "---\nname: second\n",
        "- 1\n- 2\n", "just a string\n", "42\n", "!!python/object/apply:os.system ['true']\n",
        BASE_TEXT.replace("nr_cpus: 64", "nr_cpus: !!str 64"),
        BASE_TEXT.replace("nr_cpus: 64", "nr_cpus: !!binary aGVsbG8="),
        BASE_TEXT.replace("nr_cpus: 64", "nr_cpus: !custom 64"),
        BASE_TEXT.replace("hardware:", "hardware: !!omap", 1),
        BASE_TEXT.replace("hardware:", "? [a, b]\n: 1\nhardware:", 1),
        BASE_TEXT.replace("hardware:", "{a: 1}: 2\nhardware:", 1),
        BASE_TEXT.replace("hardware:", "1: 2\nhardware:", 1),
        BASE_TEXT.replace("hardware:", "null: 2\nhardware:", 1),
        BASE_TEXT.replace("  nr_cpus: 64", "\tnr_cpus: 64"),
        BASE_TEXT.replace("variants:", "variants: &v", 1) + "extra: *v\n",
        BASE_TEXT + "variants2: *undefined\n",
        BASE_TEXT.replace("  default: {}", "  default: {}\n  'bad name': {}"),
        BASE_TEXT.replace("  default: {}", "  default: []"),
        BASE_TEXT.replace("  default: {}", "  default: {kernel.HZ: 100, kernel: {HZ: 250}}"),
        BASE_TEXT.replace("  default: {}", "  default: {'kernel..HZ': 100}"),
        BASE_TEXT.replace("  default: {}", "  default: {kernel: 3, kernel.HZ: 100}"),
        "hardware: &h {profile: x86-64-server-2023, nr_cpus: 4}\n"
        "workloads: [{kind: sync_loop, tasks: 2, loops: 1}]\n"
        "variants: {a: {hardware: {<<: *h, nr_cpus: 2}}, b: {<<: [*h, 3]}}\n",
        "hardware: {profile: x86-64-server-2023, nr_cpus: 4, <<: 5}\n"
        "workloads: [{kind: sync_loop, tasks: 2, loops: 1}]\n",
        "hardware: {profile: x86-64-server-2023, nr_cpus: 2}\n"
        "workloads: [{kind: sync_loop, tasks: 2, loops: 1},"
        " {kind: sync_loop, name: w, tasks: 1, loops: 2, cpus: '1'},"
        " {kind: sync_loop, name: w, tasks: 1, loops: 1}]\n",
        "hardware: {profile: x86-64-server-2023, nr_cpus: 2}\n"
        "workloads: [{kind: readers, tasks: 2, loops: 1}]\n",
        "hardware: {profile: x86-64-server-2023, nr_cpus: 2}\nworkloads: []\n",
        "hardware: {profile: x86-64-server-2023, nr_cpus: 2}\nworkloads: [{tasks: 1, loops: 1}]\n",
        "hardware: {profile: x86-64-server-2023, nr_cpus: 2}\nworkloads: [3]\n",
        "hardware: {profile: x86-64-server-2023, nr_cpus: 8192}\n"
        "kernel: {CONFIG_RCU_FANOUT: 2, CONFIG_RCU_FANOUT_LEAF: 2}\n"
        "workloads: [{kind: sync_loop, tasks: 2, loops: 1}]\n",
        "hardware: {profile: x86-64-server-2023, nr_cpus: 8192}\n"
        "workloads: [{kind: sync_loop, tasks: 2, loops: 1}]\n",
    ])
    return "yaml oddity", text


MUTATIONS = [
    mut_delete_key, mut_replace_value, mut_replace_value, mut_swap_values, mut_rename_key,
    mut_unknown_key, mut_duplicate_line, mut_swap_lines, mut_truncate, mut_huge_number,
    mut_negative_time, mut_float_for_int, mut_bad_cpulist, mut_bad_bootargs,
    mut_deep_nesting, mut_empty, mut_junk, mut_alias_bomb, mut_long_string, mut_non_utf8,
    mut_yaml_oddities,
] + [mut_valid_tweaks] * 4  # weighted: valid runs must be common enough to exercise the engine


def valid_set_arg(rng) -> str:
    key, values = rng.choice(VALID_TWEAKS)
    value = rng.choice(values)
    return f"{key}={'true' if value is True else 'false' if value is False else value}"


def random_set_args(rng) -> list[str]:
    """Mutated --set arguments (sometimes none, sometimes only valid ones)."""
    args = []
    benign = rng.random() < 0.35
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        form = 1 if benign else rng.randrange(10)
        if form == 0:
            item = rng.choice(["noequals", "", "=", "==", "=1", "kernel.HZ", "x" * 500])
        elif form == 1:
            item = valid_set_arg(rng)
        elif form == 2:
            item = "kernel.bootargs=" + rng.choice(BAD_TOKENS)
        elif form == 3:
            item = "workloads.0.cpus=" + rng.choice(BAD_CPULISTS)
        else:
            item = f"{rng.choice(OVERRIDE_KEYS)}={rng.choice(OVERRIDE_VALUES)}"
        args += ["--set", item]
    return args


def random_extra_args(rng) -> list[str]:
    """Other mutated options: --seed, --variant, --check, stray arguments."""
    args = []
    if rng.random() < 0.2:
        args += ["--seed", rng.choice(["0", "1", "7", "18446744073709551615", "-1", "abc",
                                       "18446744073709551616", "", "1e3", "0x10"])]
    if rng.random() < 0.15:
        args += ["--variant", rng.choice(["default", "wake_from_gp", "default", "nope", "",
                                          "DEFAULT", "\udcff", "default.x"])]
    if rng.random() < 0.15:
        args.append("--check")
    if rng.random() < 0.05:
        args.append(rng.choice(["--bogus", "extra-positional", "--seed", "--set", "-"]))
    return args


def make_case(index: int):
    """Build case `index`: (description, file content, argv after the scenario path)."""
    rng = random.Random(f"{FUZZ_SEED}-{index}")
    if rng.random() < 0.8:
        mutate = rng.choice(MUTATIONS)
        what, content = mutate(rng, copy.deepcopy(BASE_DOC))
        set_args = random_set_args(rng)
    else:
        # The file as bundled (but small); only the command line is mutated.
        what, content = "command line only", BASE_TEXT
        set_args = random_set_args(rng) or ["--set", valid_set_arg(rng)]
    return what, content, ["--set", TIME_GUARD] + set_args + random_extra_args(rng)


# ------------------------------------------------------------------ running a case

class CaseTimeout(BaseException):
    """Raised by the alarm when one case runs too long (not an Exception: nothing may catch it)."""


def _on_alarm(signum, frame):
    raise CaseTimeout()


def run_main(argv) -> tuple[object, str, str]:
    """Run main(argv) with stdout and stderr captured as the interpreter sets them up.

    stderr uses the "backslashreplace" error handler, as Python's own stderr
    does, so an undecodable command-line byte quoted back in a message is
    shown, not a crash of the capture.
    """
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace",
                           write_through=True)
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_LIMIT_S)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:  # main must return, not exit
                status = f"SystemExit({exc.code!r})"
            except Exception as exc:  # noqa: BLE001 - reported as the failure it is
                status = f"uncaught {type(exc).__name__}: {exc}"[:500]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return status, out.buffer.getvalue().decode("utf-8"), err.buffer.getvalue().decode("utf-8")


def check_case(index: int, base: Path) -> tuple[str, str | None]:
    """Run case `index` in its own directory; return (outcome, problem or None)."""
    what, content, args = make_case(index)
    case_dir = base / f"case{index}"
    case_dir.mkdir()
    scenario = case_dir / "scenario.yaml"
    if isinstance(content, bytes):
        scenario.write_bytes(content)
    else:
        scenario.write_text(content, encoding="utf-8", errors="surrogatepass")
    out = case_dir / "out"
    argv = ["run", str(scenario), "--out", str(out), "--no-progress"] + args
    try:
        status, stdout, stderr = run_main(argv)
    except CaseTimeout:
        return "timeout", f"took more than {CASE_LIMIT_S} s"
    if status in (0, 3):  # a run that did its work may add notes
        stderr = re.sub(r"(?m)^rcusim: note: .*\n", "", stderr)
    leftovers = sorted(p.name for p in case_dir.iterdir()
                       if p.name.startswith(".out.") or p.name not in ("scenario.yaml", "out"))
    problem = None
    if status == 0:
        if "Traceback" in stderr or stderr:
            problem = f"exit 0 with stderr {stderr[:300]!r}"
        elif not out.is_dir() or not RESULT_FILES - {"latency_hist.png"} <= {p.name for p in out.iterdir()} \
                <= RESULT_FILES:
            problem = "exit 0 without a complete results directory"
        elif leftovers:
            problem = f"leftover files {leftovers}"
        outcome = "exit 0"
    elif status == 3:
        # Stopped by run.max_sim_time_s: results written and marked, one stderr line per variant.
        lines = stderr.rstrip("\n").split("\n")
        if not all(re.fullmatch(r"rcusim: variant \S+ is incomplete: .*finished: false", x) for x in lines):
            problem = f"exit 3 with stderr {stderr[:300]!r}"
        elif not out.is_dir() or not RESULT_FILES - {"latency_hist.png"} <= {p.name for p in out.iterdir()} \
                <= RESULT_FILES:  # no latency plot when no call finished
            problem = "exit 3 without a complete results directory"
        elif leftovers:
            problem = f"leftover files {leftovers}"
        outcome = "exit 3"
    elif status == 2:
        lines = stderr.split("\n")
        if len(lines) != 2 or lines[1] != "" or not lines[0].startswith("rcusim: error: "):
            problem = f"stderr is not one 'rcusim: error: ' line: {stderr[:500]!r}"
        elif "Traceback" in stderr:
            problem = f"traceback in stderr: {stderr[:300]!r}"
        elif out.exists():
            problem = "results directory left after a failure"
        elif leftovers:
            problem = f"leftover files after a failure: {leftovers}"
        outcome = "exit 2"
    else:
        problem = f"status {status} (stderr {stderr[-500:]!r})"
        outcome = "crash"
    if problem is not None:
        problem = f"case {index} [{what}] argv={args!r:.400}: {problem}"
    return outcome, problem


def test_cases_are_reproducible():
    # A failing case must be reproducible from its index alone.
    assert make_case(3) == make_case(3)
    assert make_case(3) != make_case(4)


def test_fuzz_cli(tmp_path):
    outcomes: Counter = Counter()
    problems = []
    for index in range(N_CASES):
        outcome, problem = check_case(index, tmp_path)
        outcomes[outcome] += 1
        if problem:
            problems.append(problem)
    print(f"\nfuzz: {N_CASES} cases (seed {FUZZ_SEED}): " +
          ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())))
    assert not problems, f"{len(problems)} of {N_CASES} cases failed:\n" + "\n".join(problems[:20])
    # Both outcomes must occur, or the fuzzer is not exercising what it should.
    assert outcomes["exit 0"] > 0 and outcomes["exit 2"] > 0


# ------------------------------------------------------------------ hostile invocations of run and sweep

# Every invocation below carries one hostile input among valid ones, and must be refused before
# anything runs or is written: exit status 2, one stderr line, no traceback, no file anywhere in
# the working directory (each runs in the same prepared directory, whose listing must not change).
TINY = {"hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2},
        "workloads": [{"kind": "sync_loop", "tasks": 2, "loops": 1}], "run": {"max_sim_time_s": 0.5}}
TINY_SWEEP = {"scenario": "tiny.yaml", "sweep": {"hardware.nr_cpus": [2]}}
LONG_PATH = "/".join(["d" * 250] * 20) + "/x"
# Input paths: missing, not files, devices, a FIFO (never to be opened), a symbolic-link loop, not
# text, empty, too large, names that cannot be paths.
HOSTILE_INPUTS = ["missing.yaml", "no/such/dir/x.yaml", "dir", ".", "/", "/dev/zero", "/dev/null", "/dev/urandom",
                  "fifo", "loop", "empty", "junk", "huge", "not_yaml", "list.yaml", "file/below", "", "a\x00b",
                  "x" * 300, LONG_PATH, "\udcff.yaml", "a\nb", "-", "/proc/self", "dir/../missing"]
# Results directories that exist and are no directory, lie under a file, cannot be paths or written.
# "null" and "zero" are device nodes of the test's own (see prepare()), never the system's.
HOSTILE_OUTS = ["file", "fifo", "null", "zero", "null/below", "file/below", "a\x00b", "x" * 300, LONG_PATH,
                "/proc/rcusim", "/proc/self/rcusim", "\udcff"]
# Output files for --trace and --ftrace.
HOSTILE_FILES = ["dir", ".", "fifo", "null", "zero", "a\x00b", "x" * 300, LONG_PATH,
                 "no/such/dir/t.json", "file/below", "/proc/rcusim.json"]
# Scenario and sweep names: results/<name> must stay a directory of its own.
HOSTILE_NAMES = ["", ".", "..", "a/b", "../x", "/abs", "x" * 101, "a\x00b", "a\nb", " lead", "a\\b", "\udcff"]
# --set overrides (and sweep points) that no scenario accepts: unknown or misspelt keys, values
# out of range, too large for any integer, not numbers, bad syntax.
HOSTILE_SETS = [
    "bogus=1", "kernel.Hz=250", "hardware.nr_cpu=2", "kernel.HZ=1e400", "kernel.HZ=99999999999999999999999",
    "kernel.HZ=7", "hardware.nr_cpus=0", "hardware.nr_cpus=-1", "hardware.nr_cpus=8193", "hardware.nr_cpus=1e9",
    "hardware.nr_cpus=" + "9" * 5000, "seed=-1", "seed=18446744073709551616", "kernel.release=99.99",
    "kernel.bootargs=rcutree.blimit=abc", "kernel.bootargs=rcutree.bogus=1", "workloads.0.tasks=0",
    "workloads.0.tasks=-5", "workloads.0.cpus=0-99999", "workloads[9].tasks=1", "=", "noequals", "kernel..HZ=1",
    "a\x00b=1", "kernel.HZ=\x00", "\udcff=1", "x" * 1000 + "=1", "variants.nope.kernel.HZ=1",
    "run.max_sim_time_s=-1", "run.max_sim_time_s=.nan", "workloads.0.kind=bogus", "hardware.profile=../../etc/passwd",
    "hardware.profile=/dev/zero", "kernel.CONFIG_RCU_FANOUT=1", "hardware.costs.tick_ns=-1", "run.Records=none",
    "workloads=[]", "workloads=3", "hardware=null", "kernel.patches=[bogus]", "workloads.0.loops=1e30",
]
HOSTILE_SEEDS = ["-1", "18446744073709551616", "abc", "", "1e3", "0x10", "nan", "9" * 5000]
HOSTILE_VARIANTS = ["nope", "", "a\x00b", "DEFAULT", "\udcff", "default.x"]
HOSTILE_WORKERS = ["0", "-1", "4097", "abc", "", "1e3"]
# Whole sweep files (over TINY_SWEEP's keys) that load_sweep must refuse.
HOSTILE_SWEEPS = [
    {"sweeps": {}}, {"Seeds": 2}, {"sweep": {}}, {"sweep": None}, {"sweep": {"hardware.nr_cpus": []}},
    {"sweep": {"hardware.nr_cpus": 2}}, {"sweep": {"hardware.nr_cpus": [0]}}, {"sweep": {"hardware.nr_cpus": ["x"]}},
    {"sweep": {"bogus": [1]}}, {"seeds": 0}, {"seeds": -1}, {"seeds": 10**9}, {"seeds": "x"}, {"seeds": [-1]},
    {"seeds": [2**64]}, {"seeds": []}, {"seeds": 1.5}, {"plot": "kernel.HZ"}, {"variants": ["nope"]}, {"variants": 3},
    {"set": 3}, {"set": {"bogus": 1}}, {"set": {"hardware.nr_cpus": 0}}, {"scenario": 3}, {"scenario": None},
    {"scenario": {"bogus": 1}}, {"scenario": {}}, {"scenario": [1]},
    {"sweep": {"hardware.nr_cpus": list(range(1, 1001)), "kernel.HZ": [100] * 101}},
]


def prepare(directory: Path) -> None:
    """The files the hostile invocations name, and valid inputs to go with them."""
    (directory / "tiny.yaml").write_text(yaml.safe_dump({"name": "tiny", **TINY}))
    (directory / "sweep.yaml").write_text(yaml.safe_dump(TINY_SWEEP))
    (directory / "summary.json").write_text(json.dumps({"seed": 0, "provenance": {
        "scenario": {"name": "tiny", **TINY}, "variants": {"default": {}}}}))
    (directory / "dir").mkdir()
    os.mkfifo(directory / "fifo")
    # Devices to name as outputs, made here: a writer that replaced one would not replace the
    # system's /dev/null. Making them needs root; elsewhere FIFOs stand in.
    for name, minor in (("null", 3), ("zero", 5)):
        try:
            os.mknod(directory / name, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
        except PermissionError:
            os.mkfifo(directory / name)
    os.symlink("loop", directory / "loop")
    (directory / "empty").write_text("")
    (directory / "file").write_text("x\n")
    (directory / "junk").write_bytes(bytes(range(256)) * 4)
    with open(directory / "huge", "wb") as f:
        f.truncate(2 << 20)  # sparse: larger than any input rcusim reads
    (directory / "not_yaml").write_text("a: [b\n")
    (directory / "list.yaml").write_text("- 1\n- 2\n")
    for name, text in (("from_not_json", "{oops"), ("from_no_provenance", '{"seed": 0}'),
                       ("from_bad_scenario", json.dumps({"seed": 0, "provenance": {
                           "scenario": {"bogus": 1, **TINY}, "variants": {"default": {}}}})),
                       ("from_bad_seed", json.dumps({"seed": -1, "provenance": {
                           "scenario": TINY, "variants": {"default": {}}}})),
                       ("from_list", "[1, 2]")):
        (directory / name).write_text(text)


def sweep_file(directory: Path, index: int, doc) -> str:
    """`doc` written as the sweep file of invocation `index`; its name."""
    name = f"sweep_{index}.yaml"
    (directory / name).write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, allow_unicode=True))
    return name


def hostile_invocations(directory: Path) -> list[list[str]]:
    """Every hostile invocation of run and sweep, as argv; sweep files are written into `directory`."""
    run = ["run", "tiny.yaml", "--out", "out", "--no-progress"]
    sweep = ["sweep", "sweep.yaml", "--out", "out", "--no-progress"]
    argvs = []
    # Relative names, and the same names made absolute.
    inputs = HOSTILE_INPUTS + [str(directory / p) for p in HOSTILE_INPUTS if p and not p.startswith("/")]
    for path in inputs:
        argvs += [["run", path, "--out", "out", "--no-progress"], ["run", "--from", path, "--out", "out"],
                  ["sweep", path, "--out", "out", "--workers", "1"]]
        if "\udcff" not in path:  # a sweep file is UTF-8
            argvs.append(["sweep", sweep_file(directory, len(argvs), {**TINY_SWEEP, "scenario": path}), "--out", "out"])
    for path in ("from_not_json", "from_no_provenance", "from_bad_scenario", "from_bad_seed", "from_list",
                 "tiny.yaml", "sweep.yaml"):
        argvs += [["run", "--from", path, "--out", "out"], ["run", "--from", path, "--out", "out", "--variant", "nope"]]
    for path in HOSTILE_OUTS + [str(directory / p) for p in HOSTILE_OUTS if not p.startswith("/")]:
        argvs += [["run", "tiny.yaml", "--out", path, "--no-progress"], ["run", "tiny.yaml", "--out", path, "--force"],
                  ["sweep", "sweep.yaml", "--out", path, "--workers", "1"]]
    for path in ("dir", "."):  # existing directories: run replaces one only with --force
        argvs.append(["run", "tiny.yaml", "--out", path])
    for path in HOSTILE_FILES:
        argvs += [run + ["--trace", path], run + ["--ftrace", path]]
    for name in HOSTILE_NAMES:
        argvs += [["run", "tiny.yaml", "--set", f"name={name}"],
                  ["run", "tiny.yaml", "--set", f"name={name}", "--force"]]
        if "\udcff" not in name:
            argvs += [["run", sweep_file(directory, len(argvs), {"name": name, **TINY}), "--no-progress"],
                      ["sweep", sweep_file(directory, len(argvs), {"name": name, **TINY_SWEEP}), "--workers", "1"]]
    for item in HOSTILE_SETS:
        argvs += [run + ["--set", item], run + ["--set", "kernel.HZ=250", "--set", item],
                  ["run", "--from", "summary.json", "--out", "out", "--set", item],
                  run + ["--set", f"variants.default.{item}"]]  # in a variant's overrides
        key, _, value = item.partition("=")
        if "\udcff" not in item and "\x00" not in item:
            argvs.append(["sweep", sweep_file(directory, len(argvs), {**TINY_SWEEP, "set": {key: value}}),
                          "--out", "out"])
            argvs.append(["sweep", sweep_file(directory, len(argvs), {**TINY_SWEEP, "sweep": {key: [value]}}),
                          "--out", "out"])
    for seed in HOSTILE_SEEDS:
        argvs += [run + ["--seed", seed], ["run", "--from", "summary.json", "--out", "out", "--seed", seed]]
    for variant in HOSTILE_VARIANTS:
        argvs += [run + ["--variant", variant], ["run", "--from", "summary.json", "--out", "out", "--variant", variant]]
    for workers in HOSTILE_WORKERS:
        argvs.append(sweep + ["--workers", workers])
    for changes in HOSTILE_SWEEPS:
        argvs.append(["sweep", sweep_file(directory, len(argvs), {**TINY_SWEEP, **changes}), "--out", "out"])
    for text in ("", "---\n", "- 1\n", "a: [b\n", "42\n", "sweep: *x\n", "\t- x: 1\n"):
        argvs.append(["sweep", sweep_file(directory, len(argvs), text), "--out", "out"])
    for stray in ("--bogus", "extra", "--out", "--workers"):
        argvs += [run + [stray], sweep + [stray]]
    return argvs


def listing(directory: Path) -> set[str]:
    """Every path below `directory`, hidden ones too, without following links."""
    return {os.path.join(root, name) for root, dirs, files in os.walk(directory) for name in dirs + files}


def test_hostile_invocations_are_refused_and_write_nothing(tmp_path, monkeypatch):
    prepare(tmp_path)
    argvs = hostile_invocations(tmp_path)
    assert len(argvs) >= 600, len(argvs)
    monkeypatch.chdir(tmp_path)
    before = listing(tmp_path)
    problems = []
    for argv in argvs:
        status, stdout, stderr = run_main(argv)
        lines = stderr.split("\n")
        written = sorted(listing(tmp_path) - before)
        if status != 2 or len(lines) != 2 or lines[1] or not lines[0].startswith("rcusim: error: ") or written:
            problems.append(f"{argv!r:.300}: status {status}, stderr {stderr[-300:]!r}, wrote {written[:5]}")
        for path in written:  # the next invocations start from the prepared directory
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            elif os.path.lexists(path):
                os.unlink(path)
    print(f"\nhostile invocations: {len(argvs)}, refused as they should be: {len(argvs) - len(problems)}")
    assert not problems, f"{len(problems)} of {len(argvs)} invocations:\n" + "\n".join(problems[:30])


def test_memory_guard_refuses_huge_run(tmp_path):
    out = tmp_path / "out"
    argv = ["run", str(BUNDLED), "--out", str(out), "--no-progress",
            "--set", "workloads.0.tasks=1000000", "--set", "workloads.0.loops=10000000"]
    status, stdout, stderr = run_main(argv)
    assert status == 2
    assert stderr.count("\n") == 1 and stderr.startswith("rcusim: error: ")
    assert "GiB" in stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []
