"""Bad scenario input through the Python API: one clear line naming the key and line.

Each case writes a scenario file and checks that load_scenario() raises
ScenarioError whose message is a single line, names the offending key (when
there is one) and the line it was written on.
"""

import pickle
import re

import pytest

from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario

TEMPLATE = """\
name: bad
hardware:
  profile: x86-64-server-2023
  nr_cpus: {nr_cpus}
kernel:
  HZ: {hz}
  CONFIG_RCU_FANOUT: {fanout}
  CONFIG_RCU_FANOUT_LEAF: {leaf}
  bootargs: "{bootargs}"
workloads:
  - kind: sync_loop
    tasks: 4
    loops: 2
"""
# Lines of the template's keys.
LINE = {"nr_cpus": 4, "HZ": 6, "CONFIG_RCU_FANOUT": 7, "CONFIG_RCU_FANOUT_LEAF": 8,
        "bootargs": 9}


def scenario_text(**changes) -> str:
    values = {"nr_cpus": 8, "hz": 250, "fanout": 64, "leaf": 16, "bootargs": ""}
    values.update(changes)
    return TEMPLATE.format(**values)


def load_text(tmp_path, content, name="bad.yaml"):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert "\n" not in message and "\r" not in message
    assert "Traceback" not in message
    return message, path


def test_template_is_valid(tmp_path):
    path = tmp_path / "good.yaml"
    path.write_text(scenario_text())
    assert load_scenario(path).variants["default"].hardware.nr_cpus == 8


# (template changes, key named, line, fragment of the problem, fragment of what is allowed)
FIELD_CASES = [
    ({"nr_cpus": 0}, "hardware.nr_cpus", LINE["nr_cpus"], "0 is out of range",
     "an integer from 1 to 8192"),
    ({"nr_cpus": 9000}, "hardware.nr_cpus", LINE["nr_cpus"], "9000 is out of range",
     "an integer from 1 to 8192"),
    ({"nr_cpus": '"lots"'}, "hardware.nr_cpus", LINE["nr_cpus"], "'lots' is not valid",
     "an integer"),
    ({"nr_cpus": "true"}, "hardware.nr_cpus", LINE["nr_cpus"], "true is not valid",
     "an integer"),
    ({"fanout": 1}, "kernel.CONFIG_RCU_FANOUT", LINE["CONFIG_RCU_FANOUT"], "out of range",
     "from 2 to 64"),
    ({"fanout": 65}, "kernel.CONFIG_RCU_FANOUT", LINE["CONFIG_RCU_FANOUT"], "out of range",
     "from 2 to 64"),
    ({"leaf": 1}, "kernel.CONFIG_RCU_FANOUT_LEAF", LINE["CONFIG_RCU_FANOUT_LEAF"],
     "out of range", "from 2 to 64"),
    ({"hz": 123}, "kernel.HZ", LINE["HZ"], "123 is not allowed", "100, 250, 300, 1000"),
    ({"bootargs": "rcutree.foo=1"}, "kernel.bootargs", LINE["bootargs"],
     "unknown parameter 'rcutree.foo'", "python -m rcusim bootargs"),
    ({"bootargs": "rcutree.blimit=abc"}, "kernel.bootargs", LINE["bootargs"],
     "bad value in 'rcutree.blimit=abc'", "an integer"),
    ({"bootargs": "rcu_nocbs=0-x"}, "kernel.bootargs", LINE["bootargs"],
     "bad CPU list in 'rcu_nocbs=0-x'", "CPU numbers"),
    ({"bootargs": "rcu_nocbs=0-7"}, "kernel.bootargs", LINE["bootargs"],
     "needs CONFIG_RCU_NOCB_CPU=y", "CONFIG_RCU_NOCB_CPU: true"),
    # 2 * 2**3 = 16 < 4096: more than 4 levels; leaf 2 needs fanout 13 (2 * 13**3 = 4394).
    ({"nr_cpus": 4096, "fanout": 2, "leaf": 2}, "kernel.CONFIG_RCU_FANOUT",
     LINE["CONFIG_RCU_FANOUT"], "kernel build fails", "CONFIG_RCU_FANOUT >= 13"),
]


@pytest.mark.parametrize("changes, key, line, problem, allowed", FIELD_CASES)
def test_bad_field_values(tmp_path, changes, key, line, problem, allowed):
    message, path = load_text(tmp_path, scenario_text(**changes))
    assert message.startswith(key + ": ")
    assert problem in message
    assert "allowed: " in message and allowed in message
    assert message.endswith(f"({path} line {line})")


@pytest.mark.parametrize("text, key, line", [
    (scenario_text() + "frobnicate: 3\n", "frobnicate", 14),
    (scenario_text().replace("  HZ: 250\n", "  HZ: 250\n  CONFIG_FOO: y\n"),
     "kernel.CONFIG_FOO", 7),
    (scenario_text().replace("    loops: 2\n", "    loops: 2\n    speed: 3\n"),
     "workloads[0].speed", 14),
    (scenario_text().replace("  nr_cpus: 8\n", "  nr_cpus: 8\n  costs: {tea_ns: 5}\n"),
     "hardware.costs.tea_ns", 5),
])
def test_unknown_keys(tmp_path, text, key, line):
    message, path = load_text(tmp_path, text)
    assert re.match(rf"{re.escape(key)}: unknown key( \(did you mean '[^']+'\?\))?; allowed: ", message), message
    assert message.endswith(f"({path} line {line})")


def test_unknown_key_lists_the_allowed_ones(tmp_path):
    text = scenario_text().replace("  HZ: 250\n", "  HZ: 250\n  CONFIG_FOO: y\n")
    message, _ = load_text(tmp_path, text)
    for name in ("CONFIG_NR_CPUS", "CONFIG_RCU_FANOUT_LEAF", "HZ", "bootargs", "release"):
        assert name in message


def test_missing_required_key(tmp_path):
    text = scenario_text().replace("    loops: 2\n", "")
    message, path = load_text(tmp_path, text)
    assert message.startswith("workloads[0].loops: required key is missing")
    assert "an integer from 1 to 10000000" in message


def test_unknown_workload_kind(tmp_path):
    message, path = load_text(tmp_path, scenario_text().replace("sync_loop", "sync_lop"))
    assert message.startswith("workloads[0].kind: unknown kind 'sync_lop' (did you mean 'sync_loop'?); "
                              "allowed: one of: sync_loop")
    assert message.endswith(f"({path} line 11)")


def test_release_written_as_a_number(tmp_path):
    text = scenario_text().replace("  HZ: 250\n", "  HZ: 250\n  release: 6.10\n")
    message, _ = load_text(tmp_path, text)
    assert message.startswith("kernel.release: 6.1 is a number")
    assert "quoted string" in message


def test_variant_error_names_the_variant_and_its_line(tmp_path):
    text = scenario_text() + 'variants:\n  ok: {}\n  broken:\n    "kernel.HZ": 99\n'
    message, path = load_text(tmp_path, text)
    assert message.startswith("variants.broken.kernel.HZ: 99 is not allowed")
    assert message.endswith(f"({path} line 17)")


def test_variant_bootargs_error_points_at_the_variant(tmp_path):
    text = scenario_text(bootargs="rcutree.blimit=3") + \
        'variants:\n  a: {}\n  b:\n    "kernel.bootargs": "rcutree.bogus=1"\n'
    message, path = load_text(tmp_path, text)
    assert message.startswith("variants.b.kernel.bootargs: unknown parameter 'rcutree.bogus'")
    assert message.endswith(f"({path} line 17)")


def test_base_value_failing_in_one_variant_names_the_variant(tmp_path):
    text = scenario_text(bootargs="rcu_nocbs=0-7").replace(
        "  HZ: 250\n", "  HZ: 250\n  CONFIG_RCU_NOCB_CPU: true\n")
    text += 'variants:\n  full: {}\n  small:\n    "hardware.nr_cpus": 4\n'
    message, path = load_text(tmp_path, text)
    assert message.startswith("kernel.bootargs: bad CPU list in 'rcu_nocbs=0-7'")
    assert "(in variant 'small')" in message
    assert message.endswith(f"({path} line 10)")


def test_nohz_full_without_offloading_names_no_hz_full(tmp_path):
    message, path = load_text(tmp_path, scenario_text(bootargs="nohz_full=1-7"))
    assert message.startswith("kernel.bootargs: nohz_full needs CONFIG_NO_HZ_FULL=y, which selects "
                              "CONFIG_RCU_NOCB_CPU"), message
    assert "; allowed: set kernel.CONFIG_RCU_NOCB_CPU: true" in message and "or drop nohz_full" in message
    assert message.endswith(f"({path} line {LINE['bootargs']})")


def test_rcuscale_parameter_in_a_scenario_is_refused(tmp_path):
    # Only `python -m rcusim rcuscale` reads them; a scenario would ignore them.
    message, path = load_text(tmp_path, scenario_text(bootargs="rcutree.blimit=16 rcuscale.gp_async=1"))
    assert message.startswith("kernel.bootargs: rcuscale.gp_async is a parameter of the rcuscale module"), message
    assert "; allowed: 'python -m rcusim rcuscale --bootargs ...'" in message and "kfree_rcu_flood" in message
    assert message.endswith(f"({path} line {LINE['bootargs']})")


# ---------------------------------------------------------------- hostile or broken files

def test_malformed_yaml(tmp_path):
    message, path = load_text(tmp_path, "hardware: [1, 2\n  nr_cpus: 3\n")
    assert message.startswith("malformed YAML: ")
    assert message.endswith(f"({path} line 2)")


def test_tab_indentation_is_malformed(tmp_path):
    message, path = load_text(tmp_path, "hardware:\n\tnr_cpus: 3\n")
    assert message.startswith("malformed YAML: ")
    assert f"({path} line 2)" in message


@pytest.mark.parametrize("content", ["", "   \n\n", "# only a comment\n"])
def test_empty_file(tmp_path, content):
    message, path = load_text(tmp_path, content)
    assert message == f"scenario file is empty: {path}"


def test_binary_junk(tmp_path):
    message, path = load_text(tmp_path, bytes(range(256)) * 4)
    assert message == f"scenario file is not text (binary data): {path}; allowed: a UTF-8 YAML file"


def test_non_utf8_text(tmp_path):
    message, path = load_text(tmp_path, b"name: caf\xe9\n")
    assert message.startswith("scenario file is not UTF-8 text")


def test_alias_bomb(tmp_path):
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 10) + "]")
    message, path = load_text(tmp_path, "\n".join(lines) + "\n")
    assert "more than 100000 nodes after alias expansion" in message
    assert f"({path} line " in message


def test_too_many_plain_nodes(tmp_path):
    message, path = load_text(tmp_path, "a: [" + ",".join(["1"] * 110_000) + "]\n")
    assert message.startswith("YAML too large: more than 100000 nodes")
    assert message.endswith(f"({path} line 1)")


def test_recursive_alias(tmp_path):
    message, _ = load_text(tmp_path, "a: &x [*x]\n")
    assert "nesting deeper than 50 levels" in message


def test_too_deep_nesting(tmp_path):
    message, path = load_text(tmp_path, "a: " + "[" * 60 + "]" * 60 + "\n")
    assert message == f"YAML nesting deeper than 50 levels ({path} line 1)"


def test_too_deep_nesting_blocks(tmp_path):
    text = "".join("  " * i + f"k{i}:\n" for i in range(60)) + "  " * 60 + "v: 1\n"
    message, _ = load_text(tmp_path, text)
    assert "nesting deeper than 50 levels" in message


def test_file_too_large(tmp_path):
    message, path = load_text(tmp_path, "# padding\n" * 120_000)
    assert message.startswith("scenario file is too large")
    assert "at most 1 MiB" in message


def test_duplicate_key(tmp_path):
    text = scenario_text().replace("  nr_cpus: 8\n", "  nr_cpus: 8\n  nr_cpus: 9\n")
    message, path = load_text(tmp_path, text)
    assert message == f"hardware.nr_cpus: duplicate key ({path} line 5)"


@pytest.mark.parametrize("text, start", [
    ("name: !!python/object/apply:os.system ['true']\n",
     "name: unsupported YAML tag 'tag:yaml.org,2002:python/object/apply:os.system'"),
    ("name: !!python/name:os.system ''\n", "malformed YAML: "),
    ("name: !!set {a, b}\n", "name: unsupported YAML tag"),
])
def test_unsafe_tags_are_refused(tmp_path, text, start):
    message, path = load_text(tmp_path, text)
    assert message.startswith(start)
    assert message.endswith(f"({path} line 1)")


def test_top_level_not_a_mapping(tmp_path):
    message, path = load_text(tmp_path, "- 1\n- 2\n")
    assert message.startswith("the scenario must be a mapping of keys, not a list")
    assert message.endswith(f"({path} line 1)")


def test_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == f"scenario file not found: {path}"


def test_directory_instead_of_file(tmp_path):
    with pytest.raises(ScenarioError, match="not a regular file"):
        load_scenario(tmp_path)


# ---------------------------------------------------------------- API arguments

def test_bad_overrides(tmp_path):
    path = tmp_path / "good.yaml"
    path.write_text(scenario_text())
    cases = [
        (["kernel.HZ=123"], "kernel.HZ: 123 is not allowed", "(--set kernel.HZ=123)"),
        (["frobnicate=1"], "frobnicate: unknown key", "(--set frobnicate=1)"),
        (["kernel.HZ"], "expected KEY=VALUE", None),
        (["variants.nope.kernel.HZ=100"], "variants.nope: no variant named 'nope'", None),
        (["workloads.5.tasks=1"], "no item 5 in this list", None),
        (["hardware.nr_cpus=0"], "hardware.nr_cpus: 0 is out of range", "(--set hardware.nr_cpus=0)"),
        ({"hardware.nr_cpus": "many"}, "hardware.nr_cpus: 'many' is not valid", None),
    ]
    for overrides, fragment, tail in cases:
        with pytest.raises(ScenarioError) as info:
            load_scenario(path, overrides=overrides)
        message = str(info.value)
        assert fragment in message, (overrides, message)
        assert "\n" not in message
        if tail:
            assert message.endswith(tail), message


@pytest.mark.parametrize("seed", [-1, "abc", 1.5, True])
def test_bad_seed(seed):
    doc = {"hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2},
           "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 1}]}
    with pytest.raises(ScenarioError, match="seed: .* is not a valid seed"):
        load_scenario(doc, seed=seed)


def test_mapping_errors_have_no_line():
    doc = {"hardware": {"profile": "nosuch", "nr_cpus": 2},
           "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 1}]}
    with pytest.raises(ScenarioError) as info:
        load_scenario(doc)
    assert str(info.value) == ("hardware.profile: unknown profile 'nosuch'; allowed: one of: "
                               "amd-threadripper-3970x, amd-threadripper-3970x-kvm, google-gs101, "
                               "pentium4-2.4ghz-up, qemu-tcg, qemu-tcg-icount, x86-64-server-2023, xeon-e5405-8cpu")


def test_bad_variant_name():
    doc = {"hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2},
           "workloads": [{"kind": "sync_loop", "tasks": 1, "loops": 1}],
           "variants": {"has space": {}}}
    with pytest.raises(ScenarioError, match="'has space' is not a valid variant name"):
        load_scenario(doc)


def test_wrong_source_type():
    with pytest.raises(ScenarioError, match="cannot load a scenario from a int"):
        load_scenario(42)


def test_scenario_error_is_a_value_error_and_pickles():
    err = ScenarioError("0 is out of range", key="hardware.nr_cpus",
                        allowed="an integer from 1 to 8192", where="x.yaml line 4")
    assert isinstance(err, ValueError)
    assert str(err) == ("hardware.nr_cpus: 0 is out of range; allowed: an integer from 1 to "
                        "8192 (x.yaml line 4)")
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err) and again.key == err.key


def test_scenario_error_stays_on_one_line():
    err = ScenarioError("bad\nvalue\r\n\tthere", key="a.b", allowed="x\ny")
    assert str(err) == "a.b: bad value there; allowed: x y"


BASE = {"hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4}, "kernel": {"release": "6.6"},
        "workloads": [{"kind": "sync_loop", "tasks": 2, "loops": 2}]}


@pytest.mark.parametrize("name", ["../../evil", "/abs/path", "a/b", "a\\b", ".", "..", "bad\x00name", "tab\there",
                                  "x" * 101, "", " padded ", 7])
def test_a_name_that_is_not_a_file_name_is_refused(name):
    """The name names the results directory (results/<name>): it cannot climb out of it."""
    with pytest.raises(ScenarioError) as info:
        load_scenario({"name": name, **BASE})
    assert info.value.key == "name" and "\n" not in str(info.value)


@pytest.mark.parametrize("name", ["sync_rcu_10k", "v6.19-phone", "x" * 100, "é_ü"])
def test_a_file_name_is_a_name(name):
    assert load_scenario({"name": name, **BASE}).name == name


@pytest.mark.parametrize("section, wrong, right", [("kernel", "Hz", "HZ"), ("hardware", "nr_cpu", "nr_cpus"),
                                                   ("kernel", "config_rcu_lazy", "CONFIG_RCU_LAZY")])
def test_a_misspelt_key_gets_a_did_you_mean_whatever_its_case(section, wrong, right):
    data = {"name": "x", **BASE, section: {**BASE[section], wrong: 1}}
    with pytest.raises(ScenarioError) as info:
        load_scenario(data)
    assert f"did you mean {right!r}?" in str(info.value)
