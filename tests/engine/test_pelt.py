"""cython_core/pelt.pxi and rcusim/kernel/pelt.py: each CPU's PELT utilisation, which SIS_UTIL
reads to decide how far select_idle_cpu() may look for an idle CPU."""

from rcusim.engine.simulate import run_engine
from rcusim.kernel.pelt import LOAD_AVG_PERIOD, load_avg_max, runnable_avg_yn_inv

from tests.engine.conftest import spec_of


def test_the_constants_are_the_kernels():
    """kernel/sched/sched-pelt.h, as Documentation/scheduler/sched-pelt.c generates it: a few
    entries of runnable_avg_yN_inv[] and LOAD_AVG_MAX."""
    table = runnable_avg_yn_inv()
    assert len(table) == LOAD_AVG_PERIOD == 32
    assert (table[0], table[1], table[16], table[25], table[31]) == (
        0xffffffff, 0xfa83b2da, 0xb504f333, 0x94f4efa8, 0x82cd8698)
    assert load_avg_max() == 47742


def _run(busy_s: float):
    """A reader that never sleeps on CPU 0 for the whole run; CPU 1 only ticks."""
    data = {"hardware": {"profile": "x86-64-server-2023", "nr_cpus": 2},
            "kernel": {"release": "6.12", "HZ": 1000},
            "workloads": [{"kind": "readers", "cpus": "0", "length_us": 5, "rate_per_s": 1000, "between": "busy"}],
            "run": {"duration_s": busy_s}}
    return run_engine("pelt", spec_of(data), 0).sched


def test_a_cpu_running_throughout_nears_its_capacity_and_an_idle_one_stays_at_zero():
    """After 0.3 s busy (about 290 periods, y^290 ~ 0.002) CPU 0's utilisation is within a
    thousandth of 1024 and never above; CPU 1, which ran no fair task, has none. After 20 ms
    only 1 - y^19.5 of it: about a third."""
    long, short = _run(0.3), _run(0.02)
    assert 1020 <= long["util_avg"][0] <= 1024 and long["util_avg"][1] == 0
    assert 0.30 * 1024 <= short["util_avg"][0] <= 0.40 * 1024
