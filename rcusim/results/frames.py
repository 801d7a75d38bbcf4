"""The per-request and per-GP tables of a run: their columns, how they are built from the
engine's NumPy columns, and how the frames of several variants or runs are stacked into one."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rcusim import _core

#: Value of the ``primitive`` column for each ``synchronize_rcu*()`` kind.
PRIMITIVE_NAMES = {code: name for name, code in _core.PRIMITIVES.items()}

#: Columns every ``requests`` frame must have: what the engine records of each request.
#: Its latency is derived (:func:`latency_ns`), not kept: 8 bytes more a row.
REQUEST_COLUMNS = ("task", "cpu", "primitive", "t_start_ns", "t_end_ns")

#: Columns every ``gps`` frame must have.
GP_COLUMNS = ("gp_seq", "t_start_ns", "t_end_ns", "expedited", "fqs_scans", "last_qs")

#: Whose report emptied the root's qsmask (the ``last_qs`` column; -1: not recorded).
LAST_QS_NAMES = {code: name for name, code in _core.LAST_QS_KINDS.items()}


def make_requests_frame(task, cpu, primitive, t_start_ns, t_end_ns) -> pd.DataFrame:
    """Build a ``requests`` frame from NumPy columns, with the documented dtypes.

    Parameters
    ----------
    task, cpu : array_like of int
        Task id and CPU of the caller.
    primitive : array_like of int
        0 for ``synchronize_rcu()``, 1 for ``synchronize_rcu_expedited()``.
    t_start_ns, t_end_ns : array_like of int
        Simulated time of the call and of the return.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`REQUEST_COLUMNS`.
    """
    # The engine's arrays become the columns as they are: no copy of millions of rows.
    return pd.DataFrame(
        {
            "task": np.asarray(task, dtype=np.int32),
            "cpu": np.asarray(cpu, dtype=np.int32),
            "primitive": np.asarray(primitive, dtype=np.int8),
            "t_start_ns": np.asarray(t_start_ns, dtype=np.int64),
            "t_end_ns": np.asarray(t_end_ns, dtype=np.int64),
        },
        copy=False,
    )


def latency_ns(requests: pd.DataFrame) -> np.ndarray:
    """Each request's latency, ``t_end_ns - t_start_ns``, as a new int64 array (the
    caller's to reorder or overwrite)."""
    return requests["t_end_ns"].to_numpy() - requests["t_start_ns"].to_numpy()


def make_gps_frame(gp_seq, t_start_ns, t_end_ns, expedited, fqs_scans=None, last_qs=None) -> pd.DataFrame:
    """Build a ``gps`` frame from NumPy columns, with the documented dtypes.

    Parameters
    ----------
    gp_seq : array_like of int
        Grace-period sequence number.
    t_start_ns, t_end_ns : array_like of int
        Simulated start and end time of the grace period.
    expedited : array_like of bool
        True for an expedited grace period.
    fqs_scans : array_like of int, optional
        Force-quiescent-state scans the GP took (0 where not recorded).
    last_qs : array_like of int, optional
        Whose report emptied the root (:data:`LAST_QS_NAMES`; -1 where not recorded).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`GP_COLUMNS`.
    """
    n = len(gp_seq)
    return pd.DataFrame(
        {
            "gp_seq": np.asarray(gp_seq, dtype=np.int64),
            "t_start_ns": np.asarray(t_start_ns, dtype=np.int64),
            "t_end_ns": np.asarray(t_end_ns, dtype=np.int64),
            "expedited": np.asarray(expedited, dtype=bool),
            "fqs_scans": np.zeros(n, np.int64) if fqs_scans is None else np.asarray(fqs_scans, dtype=np.int64),
            "last_qs": np.full(n, -1, np.int8) if last_qs is None else np.asarray(last_qs, dtype=np.int8),
        }
    )


def check_columns(frame: pd.DataFrame, required: tuple[str, ...], what: str) -> None:
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} frame lacks column(s) {', '.join(missing)}")


def stack_runs(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The rows of independent runs (a kernel's boots, a simulation's seeds) one after another,
    each tagged with its run's number in ``boot``."""
    return pd.concat([f.assign(boot=np.int16(k)) for k, f in enumerate(frames)], ignore_index=True)


def stack(frames: dict[str, pd.DataFrame], what: str) -> pd.DataFrame:
    """Stack per-variant frames column by column under a ``variant`` column.

    Built from NumPy columns rather than ``pd.concat`` so that each column
    keeps its dtype even when some variant has no rows, and so that a
    variant whose columns differ is an error instead of a column of NaN.
    """
    names = list(frames)
    if not names:
        return pd.DataFrame({"variant": pd.Categorical([], categories=[])})
    columns = list(frames[names[0]].columns)
    for name in names[1:]:
        if list(frames[name].columns) != columns:
            raise ValueError(f"{what} of variant {name!r} has columns {list(frames[name].columns)}, expected {columns}")
    lengths = [len(frames[name]) for name in names]
    codes = np.repeat(np.arange(len(names), dtype=np.int32), lengths)
    data = {"variant": pd.Categorical.from_codes(codes, categories=names)}
    for col in columns:
        data[col] = np.concatenate([frames[name][col].to_numpy() for name in names])
    return pd.DataFrame(data)
