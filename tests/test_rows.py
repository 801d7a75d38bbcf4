"""rcusim.results.rows: request rows streamed out of the engine into a file a chunk at a time
give the same result as rows kept in memory, and the file lives exactly as long as its result."""

import gc
import pickle
import shutil
import tempfile
from collections import namedtuple

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from rcusim import _core
from rcusim.engine.simulate import build_engine
from rcusim.errors import ScenarioError
from rcusim.input.scenario import load_scenario
from rcusim.results import rows as rows_module
from rcusim.results.run import run_scenario

from tests.engine.test_records import SCENARIO, SMALL

#: 300 tasks x 20 loops = 6,000 rows a variant: six chunks of 997 and a tail of 18.
CHUNK = 997


@pytest.fixture
def spill_dir(tmp_path, monkeypatch):
    """The files of this test's runs go into a folder of their own."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def small(**extra):
    return load_scenario(SCENARIO, overrides=dict(SMALL, **extra))


def test_streamed_rows_are_the_rows_kept_in_memory(spill_dir, tmp_path):
    scenario = small()
    streamed = run_scenario(scenario, progress=False, row_chunk=CHUNK)
    kept = run_scenario(scenario, progress=False)
    assert len(list(spill_dir.iterdir())) == len(scenario.variants)  # one file a variant, none for `kept`
    for name, v in streamed.variants.items():
        assert v.rows._path is not None and kept.variants[name].rows._path is None
        pd.testing.assert_frame_equal(v.requests, kept.variants[name].requests)
        np.testing.assert_array_equal(v.rows.latency_ns(), kept.variants[name].rows.latency_ns())
        sizes = [len(b) for b in v.rows.batches()]
        assert sizes[:-1] == [CHUNK] * (len(sizes) - 1) and 0 < sizes[-1] <= CHUNK
    assert streamed.summary()["variants"] == kept.summary()["variants"]
    assert streamed.report_text() == kept.report_text()
    streamed.write(tmp_path / "streamed")
    kept.write(tmp_path / "kept")
    a = pq.read_table(tmp_path / "streamed" / "latencies.parquet")
    b = pq.read_table(tmp_path / "kept" / "latencies.parquet")
    assert a.num_rows == 2 * 6000 and a.equals(b)


def test_the_file_goes_with_its_result_and_a_copy_carries_the_rows(spill_dir):
    result = run_scenario(small(), variants=["default"], progress=False, row_chunk=CHUNK)
    rows = result.variants["default"].rows
    frame = rows.frame()
    copy = pickle.loads(pickle.dumps(rows))
    del result, rows
    gc.collect()
    assert list(spill_dir.iterdir()) == []
    pd.testing.assert_frame_equal(copy.frame(), frame)


def test_a_run_that_fails_leaves_no_file(spill_dir):
    with pytest.raises(ScenarioError, match="trace records"):
        run_scenario(small(), variants=["default"], progress=False, row_chunk=CHUNK, trace_limit=10)
    gc.collect()
    assert list(spill_dir.iterdir()) == []


def test_rows_that_would_not_fit_in_the_temporary_folder_are_refused(spill_dir, monkeypatch):
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 2**20, 2**20))
    scenario = small(**{"workloads.0.tasks": 10_000, "workloads.0.loops": 1000})
    with pytest.raises(ScenarioError) as err:
        run_scenario(scenario, progress=False)
    assert err.value.key == "run.records" and str(spill_dir) in str(err.value)
    rows_module.check_spill_room(small())  # a run whose rows fit in one chunk needs no room


def test_the_engine_streams_only_from_before_its_run():
    engine, _ = build_engine(small().variants["default"], 0)
    with pytest.raises(ValueError, match="chunk of at least 1 row"):
        engine.stream_rows(lambda columns, n: None, 0)
    taken = []
    engine.stream_rows(lambda columns, n: taken.append(columns["t_end_ns"][:n].copy()), 1000)
    while engine.run(10**12, 10**6) == _core.EXIT_MAX_EVENTS:
        pass
    # A full chunk is handed over when the next row comes: the last stays with the engine.
    assert [len(t) for t in taken] == [1000] * 5
    assert len(engine.requests()["task"]) == 1000
    whole, _ = build_engine(small().variants["default"], 0)
    while whole.run(10**12, 10**6) == _core.EXIT_MAX_EVENTS:
        pass
    np.testing.assert_array_equal(np.concatenate(taken + [engine.requests()["t_end_ns"]]),
                                  whole.requests()["t_end_ns"])
    with pytest.raises(ValueError, match="before the run"):
        engine.stream_rows(lambda columns, n: None, 10)


def test_the_spill_times_its_writing_apart_from_the_engine(spill_dir):
    spill = rows_module.RowSpill()
    columns = {"task": np.arange(5, dtype=np.int32), "cpu": np.zeros(5, np.int32),
               "primitive": np.zeros(5, np.int8), "t_start_ns": np.arange(5, dtype=np.int64),
               "t_end_ns": np.arange(5, dtype=np.int64) + 7}
    assert spill.write_s == 0.0
    spill(columns, 3)
    assert spill.write_s > 0
    rows = spill.rows({c: a[3:] for c, a in columns.items()})
    assert len(rows) == 5 and rows.latency_ns().tolist() == [7] * 5
