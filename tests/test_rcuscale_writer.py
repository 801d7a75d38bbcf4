"""rcuscale's GP-writer test through `python -m rcusim rcuscale` and as the `rcuscale_writer`
workload kind, its gp_async writers with rcu_barrier(), and kvm-recheck-rcuscale.sh's summary
computed as its awk program computes it."""

from __future__ import annotations

import argparse
import dataclasses
import re

import numpy as np
import pytest

from rcusim import _core, run
from rcusim.commands.cli import main
from rcusim.engine.engine_input import engine_input
from rcusim.engine.rcuscale import MAX_MEAS, MIN_MEAS, recheck_lines, writer_durations
from rcusim.engine.simulate import build_engine
from rcusim.errors import ScenarioError
from rcusim.input.workloads import CallRcuLoad, SyncLoop
from rcusim.input.kvmcmd import scenario_from_kvm
from rcusim.input.scenario import load_scenario
from rcusim.results.run import run_scenario

BOOT = "rcuscale.nwriters=4 rcuscale.nreaders=0 rcuscale.holdoff=1"
ASYNC = BOOT + " rcuscale.gp_async=1 rcuscale.gp_async_max=100"


def writer_data(boot: str, release: str = "7.0", nr_cpus: int = 8) -> dict:
    """The scenario of a kvm.sh rcuscale command line."""
    args = argparse.Namespace(torture="rcuscale", kconfig=[f"CONFIG_NR_CPUS={nr_cpus}"], bootargs=[boot], ignored=[])
    return scenario_from_kvm(args, release=release)[0]


def writer_spec(boot: str, release: str = "7.0"):
    """The resolved variant of a kvm.sh rcuscale command line."""
    return load_scenario(writer_data(boot, release)).variants["default"]


def test_recheck_follows_the_awk_program():
    durations_ns = [3_000_123, 4_000_000, 3_500_000, 12_345_678]
    lines = ["rcu-scale: start: 1 end: 2 duration: 1 gps: 4 batches: 7"]
    lines += [f"rcu-scale:    0 writer-duration: {j:5d} {ns}" for j, ns in enumerate(durations_ns)]
    out = recheck_lines(lines)
    # pct90 = int(4 * 90 / 100) = 3: the third smallest, 4000 us; bucket 10**int(log10(4000) + .5) / 100.
    assert out[0] == "Histogram bucket size: 100"
    assert out[1:5] == ["3000 1", "3500 1", "4000 1", "12300 1"]
    assert "Average grace-period duration: 5711.45 microseconds" in out
    assert "Minimum grace-period duration: 3000.12" in out
    assert "50th percentile grace-period duration: 3500" in out  # int(4 * 50 / 100) = 2
    assert "99th percentile grace-period duration: 4000" in out  # int(4 * 99 / 100) = 3
    assert "Maximum grace-period duration: 12345.7" in out
    assert "Grace periods: 4 Batches: 1 Ratio: 4" in out  # the script's nbatches is 1


def rcuscale(capsys, boot: str, *extra) -> list[str]:
    assert main(["rcuscale", "--kconfig", "CONFIG_NR_CPUS=8", "--bootargs", boot, *extra]) == 0
    return capsys.readouterr().out.splitlines()


def durations_us(lines):
    return np.array([int(ln.split()[-1]) / 1000 for ln in lines if "writer-duration" in ln])


def test_writer_test_prints_rcuscale_and_recheck_lines(capsys):
    lines = rcuscale(capsys, BOOT)
    d = durations_us(lines)
    counts = [int(ln.split()[-1]) for ln in lines if re.fullmatch(r"rcu-scale: writer \d gps: \d+", ln)]
    # Each writer done at MIN_MEAS + 1 measures on until all are: the last one done has those.
    assert len(counts) == 4 and min(counts) == MIN_MEAS + 1 and sum(counts) == len(d)
    assert f"Grace periods: {len(d)} Batches: 1 Ratio: {len(d)}" in lines
    avg = next(ln for ln in lines if ln.startswith("Average grace-period duration:"))
    assert float(avg.split()[3]) == pytest.approx(d.mean(), rel=1e-5)
    # A synchronize_rcu() waits for at least one whole normal GP: at HZ=250 (the
    # Kconfig default) jiffies_till_first_fqs is one jiffy, the wait at least 4 ms.
    assert d.min() >= 4000


def test_gp_exp_measures_expedited_grace_periods(capsys):
    normal = durations_us(rcuscale(capsys, BOOT))
    expedited = durations_us(rcuscale(capsys, BOOT + " rcuscale.gp_exp=1"))
    assert np.median(expedited) < np.median(normal) / 4


def test_readers_keep_the_cpus_busy():
    """rcu_scale_reader() kthreads, one per CPU by default, at nice 19: no CPU idles, so each
    expedited GP sends rcu_exp_handler() IPIs to every CPU but the one selecting, where
    without readers the idle CPUs are in an extended quiescent state and need none."""
    readers = [w for w in writer_spec("rcuscale.nwriters=4").workloads if isinstance(w, CallRcuLoad)]
    assert [(w.cpus, w.tasks_per_cpu, w.nice, w.call_rcu_per_op) for w in readers] == [("all", 1, 19, 0)]
    readers = [w for w in writer_spec("rcuscale.nwriters=4 rcuscale.nreaders=11").workloads
               if isinstance(w, CallRcuLoad)]
    assert [(w.cpus, w.tasks_per_cpu) for w in readers] == [("all", 1), ("0-2", 1)]
    idle, busy = (run(writer_data(boot)).variants["default"]
                  for boot in (BOOT + " rcuscale.gp_exp=1", "rcuscale.nwriters=4 rcuscale.holdoff=1 rcuscale.gp_exp=1"))
    ipis_per_gp = [v.counters["exp_ipis"] / v.metrics["expedited_grace_periods"] for v in (idle, busy)]
    assert ipis_per_gp[0] < 0.1 and ipis_per_gp[1] == pytest.approx(8 - 1, abs=0.2)


@pytest.mark.parametrize("boot, fragment", [
    ("rcuscale.nwriters=4", "CONFIG_PREEMPTION=n"),
    (BOOT + " rcuscale.gp_async=1 rcuscale.gp_async_max=0", "rcuscale.gp_async_max: 0 with gp_async"),
    ("rcuscale.nwriters=0 rcuscale.nreaders=0", "rcuscale.nwriters: no writers"),
])
def test_what_is_not_modelled_is_refused(boot, fragment, capsys):
    kconfig = ["--kconfig", "CONFIG_PREEMPT_NONE=y CONFIG_PREEMPT=n"] if fragment == "CONFIG_PREEMPTION=n" else []
    assert main(["rcuscale", "--kconfig", "CONFIG_NR_CPUS=8", *kconfig, "--bootargs", boot]) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1


def test_kvm_preemption_and_tick_choices():
    from types import SimpleNamespace

    from rcusim.input.kvmcmd import scenario_from_kvm
    from rcusim.input.scenario import load_scenario

    def kernel(*kconfig):
        args = SimpleNamespace(torture="rcuscale", kconfig=list(kconfig), bootargs=[BOOT], ignored=[])
        data, _ = scenario_from_kvm(args)
        return load_scenario(data).variants["default"].kernel

    k = kernel("CONFIG_PREEMPT_NONE=y CONFIG_PREEMPT_VOLUNTARY=n CONFIG_PREEMPT=n", "CONFIG_NO_HZ_IDLE=y")
    assert (k.CONFIG_PREEMPTION, k.CONFIG_PREEMPT_RCU) == (False, False)
    k = kernel("CONFIG_PREEMPT=y", "CONFIG_NO_HZ_FULL=y")
    assert (k.CONFIG_PREEMPTION, k.CONFIG_PREEMPT_RCU) == (True, True)
    assert kernel("CONFIG_HZ_PERIODIC=y CONFIG_NO_HZ_IDLE=n").CONFIG_HZ_PERIODIC

    def params(*kconfig, boot=""):
        args = SimpleNamespace(torture="rcuscale", kconfig=list(kconfig), bootargs=[BOOT + boot], ignored=[])
        data, _ = scenario_from_kvm(args)
        return load_scenario(data).variants["default"].params
    # A dynamic build is preemptible; its Kconfig choice is preempt='s default, the command line wins.
    p = params("CONFIG_PREEMPT_VOLUNTARY=y CONFIG_PREEMPT_DYNAMIC=y")
    assert (p.preemption, p.preempt_rcu) == (False, True)
    p = params("CONFIG_PREEMPT_VOLUNTARY=y CONFIG_PREEMPT_DYNAMIC=y", boot=" preempt=full")
    assert (p.preemption, p.preempt_rcu) == (True, True)


def test_no_hz_full_selects_callback_offloading():
    # kernel/time/Kconfig: NO_HZ_FULL selects RCU_NOCB_CPU, so nohz_full= needs nothing more.
    args = argparse.Namespace(torture="rcuscale", kconfig=["CONFIG_NR_CPUS=8 CONFIG_NO_HZ_FULL=y"],
                              bootargs=[BOOT + " nohz_full=1-7"], ignored=[])
    data, _ = scenario_from_kvm(args)
    (spec,) = load_scenario(data).variants.values()
    assert spec.params.nohz_full_cpus == spec.params.nocb_cpus == tuple(range(1, 8))


JIFFY_NS = 4_000_000  # HZ=250, the Kconfig default


def writer_calls(boot: str, release: str = "7.0"):
    """Each writer's calls (task, t_start_ns, t_end_ns rows, in order) of an rcuscale run."""
    args = argparse.Namespace(torture="rcuscale", kconfig=["CONFIG_NR_CPUS=8"], bootargs=[boot], ignored=[])
    data, _ = scenario_from_kvm(args, release=release)
    requests = run(data).variants["default"].requests  # a safety-checker violation would raise
    return [grp for _, grp in requests.sort_values(["task", "t_start_ns"]).groupby("task")]


def test_writer_holdoff_jiffies_sleeps_1_to_n_jiffies_before_each_gp(capsys):
    n = 5
    for calls in writer_calls(BOOT + f" rcuscale.writer_holdoff_jiffies={n}"):
        gaps = (calls["t_start_ns"].to_numpy()[1:] - calls["t_end_ns"].to_numpy()[:-1]) / JIFFY_NS
        # schedule_timeout_idle(j) on the timer wheel sleeps j to j + 1 jiffies (the expiry is
        # rounded up to the next tick); the wake-up and the call's entry add microseconds.
        assert gaps.min() >= 1 and gaps.max() < n + 1 + 0.01, (gaps.min(), gaps.max())
        # torture_random() % n + 1: every length of sleep comes up.
        assert set(np.floor(gaps).astype(int)) == set(range(1, n + 1))
    lines = rcuscale(capsys, BOOT + f" rcuscale.writer_holdoff_jiffies={n}")
    assert rcuscale(capsys, BOOT + f" rcuscale.writer_holdoff_jiffies={n}") == lines
    assert rcuscale(capsys, BOOT + f" rcuscale.writer_holdoff_jiffies={n}", "--seed", "1") != lines


def test_done_writers_measure_on_until_every_writer_is_done(capsys):
    """rcu_scale_writer(): a writer done at its MIN_MEAS + 1-th measurement goes on measuring
    until every writer is done (alldone), and leaves after the call in which it finds them
    so; the last one to be done leaves at once, and its return is the test's end."""
    boot = BOOT + " rcuscale.gp_exp=1"  # expedited GPs: each writer its own, at its own pace
    calls = writer_calls(boot)
    done = []
    for c in calls:
        # Done at the first return with i >= MIN_MEAS once a jiffy has begun since the start.
        ends = c["t_end_ns"].to_numpy()
        jdone_ns = (c["t_start_ns"].iloc[0] // JIFFY_NS + 1) * JIFFY_NS
        done.append(int(ends[MIN_MEAS:][ends[MIN_MEAS:] >= jdone_ns][0]))
    t_all = max(done)
    last = done.index(t_all)
    assert calls[last]["t_end_ns"].iloc[-1] == t_all
    for k, c in enumerate(calls):
        if k == last:
            continue
        ends = c["t_end_ns"].to_numpy()
        assert len(c) > MIN_MEAS + 1 and ends[-1] >= t_all > ends[-2], k
    line = start_line(rcuscale(capsys, boot))
    assert line["end"] == t_all and line["gps"] == sum(len(c) for c in calls)


def test_minruntime_keeps_every_writer_measuring_until_it_has_passed(capsys):
    minruntime_ns = 2 * 10**9  # about 250 grace periods a writer: more than twice MIN_MEAS + 1
    writers = writer_calls(BOOT + " rcuscale.minruntime=2")
    done = []
    for calls in writers:
        ends = calls["t_end_ns"].to_numpy()
        jdone_ns = (calls["t_start_ns"].iloc[0] // JIFFY_NS) * JIFFY_NS + minruntime_ns
        # Done at the first return with time_after(jiffies, jdone), far past MIN_MEAS + 1 calls.
        k = int(np.argmax(ends >= jdone_ns + JIFFY_NS))
        assert ends[k] >= jdone_ns + JIFFY_NS and k > MIN_MEAS
        done.append(ends[k])
    # Each leaves at the first return from which every writer is done.
    for calls in writers:
        ends = calls["t_end_ns"].to_numpy()
        assert ends[-1] >= max(done) and (len(ends) < 2 or ends[-2] < max(done))
    gps = [ln for ln in rcuscale(capsys, BOOT + " rcuscale.minruntime=2") if re.fullmatch(r"rcu-scale: writer \d gps: \d+", ln)]
    assert all(MIN_MEAS + 1 < int(ln.split()[-1]) <= MAX_MEAS for ln in gps)


def test_a_writer_keeps_max_meas_durations():
    calls = np.arange(MAX_MEAS + 5)
    kept = writer_durations(calls)
    # The array's last slot holds the latest call: writer_n_durations is MAX_MEAS.
    assert len(kept) == MAX_MEAS and kept[-2] == MAX_MEAS - 2 and kept[-1] == calls[-1]
    assert list(writer_durations(calls[:3])) == [0, 1, 2]


@pytest.mark.parametrize("param", ["writer_holdoff_jiffies=3", "minruntime=5"])
def test_writer_parameters_exist_from_v6_6(param, capsys):
    assert main(["rcuscale", "--release", "6.5", "--kconfig", "CONFIG_NR_CPUS=8",
                 "--bootargs", f"{BOOT} rcuscale.{param}"]) == 2
    err = capsys.readouterr().err
    assert f"rcuscale.{param.split('=')[0]}" in err and "v6.6" in err and err.count("\n") == 1
    (writers,) = [w for w in writer_spec(f"{BOOT} rcuscale.{param}", release="6.6").workloads
                  if isinstance(w, SyncLoop)]
    assert writers.sleep_jiffies_max == 3 or writers.min_runtime_s == 5


# --------------------------------------------------------------------------
# gp_async: call_rcu_hurry() and rcu_barrier()
# --------------------------------------------------------------------------

def start_line(lines) -> dict:
    """rcu_scale_cleanup()'s "start: T end: T duration: D gps: N batches: B" line, by field."""
    f = next(ln for ln in lines if " start: " in ln).split()
    return {f[i].rstrip(":"): int(f[i + 1]) for i in range(1, len(f), 2)}


def test_gp_async_writers_report_the_engines_calls_and_grace_periods(capsys):
    lines = rcuscale(capsys, ASYNC)
    result = run(writer_data(ASYNC)).variants["default"]
    line = start_line(lines)
    counts = [int(ln.split()[-1]) for ln in lines if re.fullmatch(r"rcu-scale: writer \d gps: \d+", ln)]
    assert line["gps"] == sum(counts) == len(result.requests)
    # "batches" is rcu_seq_diff() of gp_seq over the test: the normal GPs that overlapped it, or
    # one more (rcu_seq_diff() counts K + 1 from idle to idle).
    gps = result.gps[~result.gps["expedited"]]
    overlapping = int(((gps["t_end_ns"] > line["start"]) & (gps["t_start_ns"] <= line["end"])).sum())
    assert 1 <= overlapping <= line["batches"] <= overlapping + 1
    # Every writer queues 100 callbacks (call_rcu_ns each), then calls rcu_barrier(): one grace
    # period serves them all. An rcu_barrier() iteration is no measurement, unless it is the
    # writer's last (it finds every writer done): then it fills the last slot.
    assert line["gps"] >= 100 * line["batches"]
    d = durations_us(lines)
    assert (d < 1).sum() >= 4 * 100 and (d > 1).sum() == (d > 4000).sum() <= 4
    assert f"Grace periods: {line['gps']} Batches: 1 Ratio: {line['gps']}" in lines


def in_flight(data: dict) -> tuple[dict, dict]:
    """The most rcu_scale_async_cb() callbacks each writer, and each CPU, had queued and not yet
    invoked, from the trace: call_rcu() by the writer, invocation of the callback it queued."""
    v = run_scenario(load_scenario(data), progress=False, trace_limit=2_000_000).variants["default"]
    rec = v.trace["records"]
    mine = rec[np.isin(rec["kind"], [_core.TRACE_KINDS["callback"], _core.TRACE_KINDS["cb_invoke"]])
               & (rec["arg"] == _core.CALLBACK_KINDS["rcu_scale_async_cb"])]
    # In time order, an invocation before a call at the same instant.
    mine = mine[np.lexsort((mine["kind"] == _core.TRACE_KINDS["callback"], mine["t"]))]
    queued_by, now, most = {}, {}, {}
    for r in mine:
        if r["kind"] == _core.TRACE_KINDS["callback"]:
            who = (int(r["ent"]), int(r["cpu"]))
            queued_by[int(r["arg2"])] = who
            keys = [("task", who[0]), ("cpu", who[1])]
            for k in keys:
                now[k] = now.get(k, 0) + 1
                most[k] = max(most.get(k, 0), now[k])
        else:
            ent, cpu = queued_by.pop(int(r["arg2"]))
            now[("task", ent)] -= 1
            now[("cpu", cpu)] -= 1
    return ({k[1]: n for k, n in most.items() if k[0] == "task"},
            {k[1]: n for k, n in most.items() if k[0] == "cpu"})


def test_in_flight_callbacks_stop_at_gp_async_max_per_writer_from_v6_12_per_cpu_before():
    """Two writers on one CPU: from v6.12 each counts its own callbacks, so together they have
    twice gp_async_max in flight; before, they share their CPU's count."""
    boot = "rcuscale.nwriters=2 rcuscale.nreaders=0 rcuscale.holdoff=1 rcuscale.gp_async=1 rcuscale.gp_async_max=10"
    per_task, per_cpu = in_flight(writer_data(boot, "7.0", nr_cpus=1))
    assert per_task == {0: 10, 1: 10} and per_cpu == {0: 20}
    per_task, per_cpu = in_flight(writer_data(boot, "6.6", nr_cpus=1))
    assert per_cpu == {0: 10} and sum(per_task.values()) >= 10


def test_before_v6_12_the_barrier_is_inside_the_measured_call(capsys):
    """rcuscale before v6.12 retries the call after rcu_barrier(), in the same measurement, and
    kmalloc()s each rcu_head; from v6.12 the iteration that calls rcu_barrier() instead is no
    measurement."""
    boot = ASYNC + " rcuscale.minruntime=1"
    old, new = durations_us(rcuscale(capsys, boot, "--release", "6.6")), durations_us(rcuscale(capsys, boot))
    # Over a second every writer calls rcu_barrier() dozens of times.
    assert (old > 1000).sum() > 4 * 20
    assert (new > 1000).sum() <= 4  # at most each writer's last slot
    assert np.median(old) > np.median(new)  # kmalloc() of the rcu_head


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


YAML_WRITER = """\
hardware: {profile: x86-64-server-2023, nr_cpus: 8}
kernel: {release: "7.0"}
workloads:
  - {kind: rcuscale_writer, nwriters: 4, nreaders: 0, holdoff: 1, gp_async: true, gp_async_max: 100}
"""


def test_the_rcuscale_writer_kind_is_the_kvm_command(tmp_path, capsys):
    path = tmp_path / "w.yaml"
    path.write_text(YAML_WRITER)
    a, _ = engine_input(load_scenario(path).variants["default"])
    b, _ = engine_input(writer_spec(ASYNC))
    for section in dataclasses.fields(a):
        x, y = getattr(a, section.name), getattr(b, section.name)
        for f in dataclasses.fields(x):
            u, v = getattr(x, f.name), getattr(y, f.name)
            assert np.array_equal(u, v) if isinstance(u, np.ndarray) else u == v, f"{section.name}.{f.name}"
    kvm = rcuscale(capsys, ASYNC)
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out.splitlines()
    summary = [ln for ln in kvm if " start: " in ln] + recheck_lines(kvm)
    assert [ln.removeprefix("default: ") for ln in out if ln.startswith("default: ")] == summary


@pytest.mark.parametrize("workload, key", [
    ({"kind": "rcuscale_writer", "gp_async": True, "gp_async_max": 0}, "workloads[0].gp_async_max"),
    ({"kind": "rcuscale_writer", "gp_async": True}, "workloads[0].gp_async"),  # release 4.12
    ({"kind": "sync_loop", "tasks": 1, "loops": 1, "primitive": "call_rcu_hurry"}, "workloads[0].primitive"),
    ({"kind": "sync_loop", "tasks": 1, "loops": 1, "async_max": 5}, "workloads[0].async_max"),
    ({"kind": "sync_loop", "tasks": 1, "loops": 1, "primitive": "call_rcu_hurry", "work_after": "vfree"},
     "workloads[0].work_after"),
])
def test_what_rcuscale_or_the_kernel_lacks_is_refused(workload, key):
    data = {"hardware": {"profile": "x86-64-server-2023", "nr_cpus": 4}, "kernel": {"release": "7.0"},
            "workloads": [workload]}
    if key.endswith((".gp_async", ".primitive")):
        data["kernel"]["release"] = "4.12"
    with pytest.raises(ScenarioError, match=re.escape(key)):
        load_scenario(data)


def test_one_rcuscale_writer_whose_workloads_keep_unique_names(tmp_path, capsys):
    two = YAML_WRITER + "  - {kind: rcuscale_writer}\n"
    clash = YAML_WRITER + "  - {kind: sync_loop, name: rcu_scale_writer, tasks: 1, loops: 1}\n"
    for text, key in ((two, "workloads[1].kind"), (clash, "workloads[0].name")):
        path = tmp_path / "bad.yaml"
        path.write_text(text)
        assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert key in err and err.count("\n") == 1
        assert not (tmp_path / "out").exists()


def test_gp_async_exists_from_v4_13(capsys):
    """rcuperf (the module's name before v5.10) took gp_async from v4.13."""
    rcuperf = ASYNC.replace("rcuscale.", "rcuperf.")
    assert main(["rcuscale", "--release", "4.12", "--kconfig", "CONFIG_NR_CPUS=8", "--bootargs", rcuperf]) == 2
    err = capsys.readouterr().err
    assert "rcuperf.gp_async" in err and "v4.13" in err and err.count("\n") == 1
