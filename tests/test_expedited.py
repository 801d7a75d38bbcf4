"""Expedited grace periods' input: a leaf fanout the kernel refuses is one line and exit 2.
(The expedited machinery itself: tests/engine/test_tree_exp.py.)"""

from tests.engine.conftest import SCENARIOS


def test_a_leaf_fanout_the_kernel_refuses_is_one_line_and_exit_2(tmp_path, capsys):
    from rcusim.commands.cli import main

    out = tmp_path / "r"
    code = main(["run", str(SCENARIOS / "expedited_storm_4096.yaml"),
                 "--set", "kernel.CONFIG_RCU_FANOUT_LEAF=65", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "CONFIG_RCU_FANOUT_LEAF" in err and "2 to 64" in err
    assert not out.exists()
