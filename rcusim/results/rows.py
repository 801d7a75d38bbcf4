"""A variant's request rows: in memory, or streamed by the engine into a file as it ran.

Ten million calls make 250 MB of rows. The engine hands them over a chunk at a time
(``Engine.stream_rows()``); :class:`RowSpill` writes each chunk as an Arrow IPC record
batch into a temporary file, so the run holds one chunk of rows, not all of them. The
summary, ``latencies.parquet`` and the figures then read the rows back a batch at a time
(:meth:`RequestRows.batches`, :meth:`RequestRows.latency_ns`). A run whose rows fit in
one chunk never writes a file.

The file is made where :mod:`tempfile` puts its files (``TMPDIR``) and removed when its
:class:`RequestRows` is garbage-collected or the process exits.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import weakref
from typing import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa

from rcusim.engine.simulate import kept_rows
from rcusim.errors import ScenarioError
from rcusim.results.frames import REQUEST_COLUMNS, latency_ns, make_requests_frame

#: Rows the engine keeps before handing them over: pyarrow's Parquet row group, so that the
#: batches read back become ``latencies.parquet``'s row groups as a whole frame's would.
ROW_CHUNK = 1 << 20


#: Bytes a row takes in the file: its columns' 25, and room for the batches' framing.
SPILL_BYTES_PER_ROW = 26


def check_spill_room(scenario) -> None:
    """Refuse a scenario whose variants' rows would not fit in the temporary directory
    (every variant's file lives until its result is dropped)."""
    need = sum(kept_rows(spec) for spec in scenario.variants.values()) * SPILL_BYTES_PER_ROW
    if need <= ROW_CHUNK * SPILL_BYTES_PER_ROW:
        return
    where = tempfile.gettempdir()
    free = shutil.disk_usage(where).free
    if need > free:
        raise ScenarioError(f"the request rows need about {need / 2**30:.1f} GiB in {where}, more than the "
                            f"{free / 2**30:.1f} GiB free there", key="run.records",
                            allowed="sample or none, fewer tasks or loops, or TMPDIR set to a directory with room")


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _frame(batch: pa.RecordBatch) -> pd.DataFrame:
    return make_requests_frame(*(batch.column(c).to_numpy() for c in REQUEST_COLUMNS))


class RequestRows:
    """The rows of a variant's kept requests (columns
    :data:`~rcusim.results.frames.REQUEST_COLUMNS`): a frame in memory, or the record
    batches of an Arrow IPC file (:meth:`in_file`)."""

    def __init__(self, frame: pd.DataFrame):
        self._frame = frame
        self._path = None
        self._n = len(frame)

    @classmethod
    def in_file(cls, path: str, n: int) -> "RequestRows":
        """The `n` rows of the Arrow IPC file at `path`, which this object now owns: it is
        removed with the object."""
        self = cls.__new__(cls)
        self._frame, self._path, self._n = None, path, n
        weakref.finalize(self, _remove, path)
        return self

    def __len__(self) -> int:
        return self._n

    @property
    def columns(self) -> list[str]:
        return list(REQUEST_COLUMNS) if self._frame is None else list(self._frame.columns)

    def batches(self) -> Iterator[pd.DataFrame]:
        """The rows in order as frames: the whole frame, or the file's batches one at a time."""
        if self._frame is not None:
            yield self._frame
            return
        with pa.OSFile(self._path, "rb") as f:
            reader = pa.ipc.open_file(f)
            for i in range(reader.num_record_batches):
                yield _frame(reader.get_batch(i))

    def frame(self) -> pd.DataFrame:
        """Every row at once (for a file: read into memory, one new frame each call)."""
        if self._frame is not None:
            return self._frame
        out, at = {}, 0
        for batch in self.batches():
            for c in REQUEST_COLUMNS:
                column = batch[c].to_numpy()
                if c not in out:
                    out[c] = np.empty(self._n, dtype=column.dtype)
                out[c][at:at + len(batch)] = column
            at += len(batch)
        return make_requests_frame(*(out[c] for c in REQUEST_COLUMNS))

    def latency_ns(self) -> np.ndarray:
        """Each row's ``t_end_ns - t_start_ns``, as a new int64 array (the caller's to reorder
        or overwrite), made a batch at a time."""
        if self._frame is not None:
            return latency_ns(self._frame)
        out = np.empty(self._n, dtype=np.int64)
        at = 0
        for batch in self.batches():
            np.subtract(batch["t_end_ns"].to_numpy(), batch["t_start_ns"].to_numpy(), out=out[at:at + len(batch)])
            at += len(batch)
        return out

    def __reduce__(self):
        # A copy in another process carries the rows, not the name of a file this one removes.
        return RequestRows, (self.frame(),)


class RowSpill:
    """The engine's row sink (``Engine.stream_rows()``): each chunk of rows it hands over
    becomes a record batch of a temporary Arrow IPC file."""

    def __init__(self):
        self._path = None
        self._file = None
        self._writer = None
        self._removal = None
        self._n = 0
        self.write_s = 0.0
        """Wall-clock time spent writing batches (inside the engine's run)."""
        self.write_cpu_s = 0.0
        """The same writing's CPU time, on the engine's thread."""

    def __call__(self, columns: dict, n: int) -> None:
        t0 = time.perf_counter()
        cpu0 = time.thread_time()
        batch = pa.record_batch([pa.array(columns[c][:n]) for c in REQUEST_COLUMNS], names=list(REQUEST_COLUMNS))
        if self._writer is None:
            fd, self._path = tempfile.mkstemp(prefix="rcusim-rows-", suffix=".arrow")
            os.close(fd)
            # Removed with this object unless rows() hands it on: a run that fails leaves none.
            self._removal = weakref.finalize(self, _remove, self._path)
            self._file = pa.OSFile(self._path, "wb")
            self._writer = pa.ipc.new_file(self._file, batch.schema)
        self._writer.write_batch(batch)
        self._n += n
        self.write_s += time.perf_counter() - t0
        self.write_cpu_s += time.thread_time() - cpu0

    def rows(self, tail: dict) -> RequestRows:
        """The run's rows, given those the engine kept after its last hand-over: all in memory
        if it handed none over, else the file with the tail appended."""
        n = len(tail[REQUEST_COLUMNS[0]])
        if self._writer is None:
            return RequestRows(make_requests_frame(*(tail[c] for c in REQUEST_COLUMNS)))
        if n:
            self(tail, n)
        self._writer.close()
        self._file.close()
        self._writer = None
        self._removal.detach()
        return RequestRows.in_file(self._path, self._n)
