"""Tests for rcusim.input.bootargs and rcusim.input.cpulist: kernel command lines and CPU lists."""

import pytest

from rcusim.errors import ScenarioError
from rcusim.input.bootargs import PARAMETERS, parse_bootargs
from rcusim.input.cpulist import format_cpulist, parse_cpulist

# ---------------------------------------------------------------- cpulist

@pytest.mark.parametrize("text, nr_cpus, expected", [
    ("0-3,8,10-15", 16, (0, 1, 2, 3, 8, 10, 11, 12, 13, 14, 15)),
    ("5", 8, (5,)),
    ("", 8, ()),
    ("all", 4, (0, 1, 2, 3)),
    ("ALL", 2, (0, 1)),
    ("N", 64, (63,)),
    ("1-N", 4, (1, 2, 3)),
    # In each group of 4 starting at 0, the first 2 (bitmap_parselist).
    ("0-15:2/4", 16, (0, 1, 4, 5, 8, 9, 12, 13)),
    ("all:1/2", 8, (0, 2, 4, 6)),
    # Documentation/admin-guide/kernel-parameters.rst example, cut to 200 CPUs.
    ("100-199:2/25", 200, (100, 101, 125, 126, 150, 151, 175, 176)),
    ("3,1,3,2", 4, (1, 2, 3)),
])
def test_parse_cpulist(text, nr_cpus, expected):
    assert parse_cpulist(text, nr_cpus) == expected


@pytest.mark.parametrize("text", ["0-x", "0-15:2", "3:1/2", "5-2", "0-7:3/2", "0-7:1/0",
                                  "-1", "0x3", "a", "1--2"])
def test_parse_cpulist_junk(text):
    with pytest.raises(ScenarioError, match="not a valid CPU list"):
        parse_cpulist(text, 16)


def test_parse_cpulist_out_of_range():
    with pytest.raises(ScenarioError) as info:
        parse_cpulist("0-64", 64)
    assert "CPU 64" in str(info.value)
    assert "CPUs 0 to 63" in str(info.value)


def test_format_cpulist_round_trip():
    cpus = (0, 1, 2, 3, 8, 10, 11, 12)
    assert format_cpulist(cpus) == "0-3,8,10-12"
    assert parse_cpulist(format_cpulist(cpus), 16) == cpus
    assert format_cpulist(()) == ""


# ---------------------------------------------------------------- bootargs

def test_parse_example_command_line():
    args = parse_bootargs("rcutree.blimit=16 rcu_nocbs=0-63 "
                          "rcutree.rcu_normal_wake_from_gp=1 torture.disable_onoff_at_boot",
                          nr_cpus=64)
    assert args == {
        "rcutree.blimit": 16,
        "rcu_nocbs": "0-63",
        "rcutree.rcu_normal_wake_from_gp": 1,
        "torture.disable_onoff_at_boot": True,
    }


def test_empty_command_line():
    assert parse_bootargs("") == {}
    assert parse_bootargs("   \t ") == {}


def test_later_tokens_win():
    args = parse_bootargs("rcutree.blimit=16 rcutree.qhimark=5 rcutree.blimit=32")
    assert args["rcutree.blimit"] == 32
    assert args["rcutree.qhimark"] == 5


@pytest.mark.parametrize("raw, expected", [
    ("1", True), ("0", False), ("y", True), ("N", False), ("Y", True), ("n", False),
    ("on", True), ("off", False), ("true", True), ("False", False), ("yes", True),
])
def test_kernel_style_booleans(raw, expected):
    assert parse_bootargs(f"rcutree.use_softirq={raw}")["rcutree.use_softirq"] is expected


def test_bare_boolean_is_true():
    assert parse_bootargs("rcutree.rcu_fanout_exact")["rcutree.rcu_fanout_exact"] is True


def test_integers_read_like_kstrtoint():
    args = parse_bootargs("rcutree.blimit=0x10 rcutree.qhimark=010 rcutree.kthread_prio=-5")
    assert args["rcutree.blimit"] == 16
    assert args["rcutree.qhimark"] == 8  # base 0: a leading 0 is octal
    assert args["rcutree.kthread_prio"] == -5


def test_dashes_equal_underscores():
    args = parse_bootargs("rcutree.rcu-normal-wake-from-gp=1")
    assert args == {"rcutree.rcu_normal_wake_from_gp": 1}


def test_bare_rcu_nocbs_is_empty_mask():
    assert parse_bootargs("rcu_nocbs")["rcu_nocbs"] == ""
    assert parse_bootargs("rcu_nocb_poll")["rcu_nocb_poll"] is True


def test_rcuscale_parameters_are_kept_by_name():
    args = parse_bootargs("rcuscale.kfree_rcu_test=1 rcuscale.kfree_nthreads=16 "
                          "rcuscale.kfree_loops=10000 rcuscale.gp_exp=y")
    assert args["rcuscale.kfree_rcu_test"] == 1
    assert args["rcuscale.kfree_nthreads"] == 16
    assert args["rcuscale.kfree_loops"] == 10000
    assert args["rcuscale.gp_exp"] is True


def test_clamped_values_are_accepted():
    # The kernel clamps these where it uses them; rcusim clamps when resolving.
    args = parse_bootargs("rcutree.jiffies_till_first_fqs=100000 rcutree.kthread_prio=150 "
                          "rcutree.rcu_resched_ns=1 rcutree.rcu_divisor=-3")
    assert args["rcutree.jiffies_till_first_fqs"] == 100000
    assert args["rcutree.kthread_prio"] == 150


@pytest.mark.parametrize("text, fragment", [
    ("rcutree.foo=1", "unknown parameter 'rcutree.foo'"),
    ("nosuchparam", "unknown parameter 'nosuchparam'"),
    ("rcutree.blimit=abc", "bad value in 'rcutree.blimit=abc'"),
    ("rcutree.blimit=-1", "out of range"),
    ("rcutree.blimit", "needs a value"),
    ("rcu_nocbs=0-x", "bad CPU list in 'rcu_nocbs=0-x'"),
    ("nohz_full", "needs a CPU list"),
    ("rcutree.use_softirq=maybe", "bad value"),
    ("rcu_nocb_poll=0", "takes no value"),
    ("rcutree.rcu_nocb_gp_stride=0", "out of range"),
    ("rcupdate.rcumaxbatch=0", "out of range"),
    ("rcutree.jiffies_till_first_fqs=-1", "out of range"),
    ("rcutree.rcu_divisor=99999999999", "out of range"),
])
def test_bad_tokens(text, fragment):
    with pytest.raises(ScenarioError) as info:
        parse_bootargs(text)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message
    assert info.value.token == text


def test_unknown_parameter_suggests_close_name():
    with pytest.raises(ScenarioError, match="did you mean 'rcutree.blimit'"):
        parse_bootargs("rcutree.blimt=3")


def test_cpulist_checked_against_nr_cpus():
    parse_bootargs("rcu_nocbs=0-63")  # syntax only without nr_cpus
    with pytest.raises(ScenarioError, match="out of range"):
        parse_bootargs("rcu_nocbs=0-63", nr_cpus=32)


def test_every_parameter_has_a_known_kind():
    kinds = {"int", "long", "ulong", "bool", "flag", "cpulist", "optional_cpulist", "choice", "choices"}
    assert {p.kind for p in PARAMETERS.values()} <= kinds
    for name in ("rcutree.blimit", "rcutree.qhimark", "rcutree.qlowmark", "rcutree.qovld",
                 "rcutree.rcu_divisor", "rcutree.rcu_resched_ns",
                 "rcutree.jiffies_till_first_fqs", "rcutree.jiffies_till_next_fqs",
                 "rcutree.jiffies_till_sched_qs", "rcutree.rcu_fanout_leaf",
                 "rcutree.rcu_fanout_exact", "rcutree.rcu_normal_wake_from_gp",
                 "rcutree.use_softirq", "rcutree.kthread_prio", "rcutree.rcu_nocb_gp_stride",
                 "rcutree.enable_rcu_lazy", "rcu_nocbs", "rcu_nocb_poll", "nohz_full",
                 "rcupdate.rcu_expedited", "rcupdate.rcu_normal",
                 "rcupdate.rcu_normal_after_boot", "rcupdate.rcumaxbatch",
                 "rcupdate.rcuplugticks", "torture.disable_onoff_at_boot"):
        assert name in PARAMETERS
