"""cython_core/rt_latency.pxi: the rt_latency_probe task (amlat), a SCHED_FIFO task woken by a
periodic timer interrupt (the RTC irq), and the scheduling latency it records, on small
hand-made loads of seed 003's machine (a uniprocessor 2.6.0 with CONFIG_PREEMPT=y).
Seed 003's scenario itself (vanilla against the 2004 patches): tests/engine/test_classic.py.
"""

import rcusim

from tests.engine.conftest import probe_latency, small


def test_without_sections_or_callbacks_latency_is_irq_plus_switch():
    stats, _ = probe_latency(small({"work_us": 30}))
    costs = rcusim.input.profiles.load_profile("pentium4-2.4ghz-up")
    floor = (costs["tick_ns"] + costs["ctxsw_ns"]) / 1e3
    # At worst the RTC interrupt lands on a tick (no callbacks: no softirq work).
    assert floor <= stats["mean"] and stats["max"] <= floor + costs["tick_ns"] / 1e3 + 1e-9


def test_same_seed_same_latencies():
    scenario = small({"work_us": 30, "call_rcu_per_op": 3.0, "burst": 64,
                      "nonpreempt": [{"us": 20, "per_op": 0.1}]}, samples=200)
    assert probe_latency(scenario)[0] == probe_latency(scenario)[0]
