"""cython_core/checker.pxi: the always-on safety checker. A grace period must wait for every
reader that began before it, no caller or callback may finish before a whole GP, and
rcu_barrier() may return only after every callback queued before it; each rule broken on
purpose (rcusim.engine.faults) must be reported, and the sound model must not be."""

from __future__ import annotations

import pytest

from rcusim.engine.simulate import build_engine

from tests.engine.conftest import ASYNC, GENERATIONS, exp_spec_of, flood, spec_of, writer_spec


@pytest.mark.parametrize("fault, prim, flavour, length, loops", [
    ("exp-ipi-ignores-readers", "synchronize_rcu_expedited", "expedited", 200, 30),
    # GPs take ms: 60 calls a task, for a reader a tick catches inside a section
    ("qs-without-qs", "synchronize_rcu", "normal", 20000, 60),
])
def test_the_checker_catches_a_broken_model(fault, prim, flavour, length, loops):
    spec = exp_spec_of(prim=prim, length=length, rate=1e6 / (2 * length), loops=loops)
    engine, _ = build_engine(spec, seed=5, fault=fault)
    engine.run(10**12, 10**8)
    found = engine.safety()
    assert found["violations"] > 0
    message = found["messages"][0]
    assert "reader on CPU" in message and f"whole {flavour} grace period gp_seq" in message
    sound, _ = build_engine(spec, seed=5)
    sound.run(10**12, 10**8)
    assert sound.safety()["violations"] == 0 and sound.safety()["readers_checked"] > 100


@pytest.mark.parametrize("release", GENERATIONS)
def test_the_checker_catches_frees_without_a_gp_in_each_generation(release):
    engine, _ = build_engine(spec_of(flood(release)), 0, fault="kvfree-no-gp")
    while engine.run(10**12, 10**6) == 1:  # EXIT_MAX_EVENTS
        pass
    assert engine.safety()["violations"] > 0


@pytest.mark.parametrize("release", ["6.6", "7.0"])
def test_the_checker_sees_rcu_barrier_return_before_an_earlier_callback(release):
    """rcu_barrier()'s guarantee: when it returns, every callback queued before it began has
    been invoked. Entrained ahead of them, its callback lets it return too soon."""
    spec = writer_spec(ASYNC, release)

    def safety(fault):
        engine, _ = build_engine(spec, 0, fault=fault)
        engine.run(round(spec.run.max_sim_time_s * 1e9), 10**9)
        return engine.safety(), engine.counters()

    fine, counters = safety(None)
    assert fine["violations"] == 0 and counters["rcu_barriers"] > 0
    broken, _ = safety("barrier-entrain-at-head")
    assert broken["violations"] > 0 and broken["messages"][0].startswith("rcu_barrier() by task")
