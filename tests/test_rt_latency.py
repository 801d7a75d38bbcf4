"""The real-time probe's results (seed 003: the summary, the written latencies) and its input's
refusals. (The probe, classic RCU and the callback load in the engine: tests/engine/.)"""

import pandas as pd
import pytest

import rcusim
from rcusim.errors import ScenarioError
from rcusim.plots import save_result_figures

from tests.engine import test_classic
from tests.engine.conftest import small
from tests.engine.test_classic import lat

seed_run = test_classic.seed_run  # seed 003's run, scaled down (a fixture)


def test_summary_reports_sched_latency(seed_run):
    summary = seed_run.summary()
    for name in ("vanilla", "throttle", "kthread"):
        stats = summary["variants"][name]["metrics"]["sched_latency_us"]
        assert set(stats) == {"max", "p99", "mean", "samples"}
        assert stats["samples"] == 3072
        assert stats["mean"] <= stats["p99"] <= stats["max"]


def test_written_results_keep_the_probe_latencies(seed_run, tmp_path):
    out = seed_run.write(tmp_path / "r", figures=save_result_figures)
    # No synchronize_rcu*() call: no request-latency figure, but cyclictest's histogram of the probe.
    assert {p.name for p in out.iterdir()} == {"summary.json", "latencies.parquet", "gps.parquet", "report.txt",
                                               "sched_latency.parquet", "sched_latency.png"}
    table = pd.read_parquet(out / "sched_latency.parquet")
    assert list(table.columns) == ["variant", "latency_ns"]
    assert table.groupby("variant", observed=True).size().to_dict() == dict.fromkeys(seed_run.variants, 3072)
    for name, rows in table.groupby("variant", observed=True):
        assert rows["latency_ns"].max() / 1e3 == lat(seed_run, name)["max"]


@pytest.mark.parametrize("change, words", [
    ({"workloads.1.nonpreempt": [{"us": 5, "per_op": 0.7}, {"us": 50, "per_op": 0.5}]},
     "workloads.1.nonpreempt"),
    ({"kernel.release": "6.6", "kernel.bootargs": "rcupdate.bhlimit=256"}, "rcupdate.bhlimit"),
    ({"kernel.bootargs": "rcupdate.rcumaxbatch=16 rcupdate.bhlimit=256"}, "rcupdate.bhlimit"),
    ({"workloads.0.run_us": 2000}, "workloads.0.run_us"),
])
def test_bad_input_names_the_key(change, words):
    with pytest.raises(ScenarioError) as err:
        rcusim.run(small({"work_us": 30}), overrides=change)
    assert words in str(err.value)
