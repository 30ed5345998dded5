"""Integer columns as bytes: each column the deltas of its values (the first value, then each
value minus the one before) in the narrowest little-endian type that holds them (``<i1``,
``<i2``, ``<i4``, else ``<i8``), the columns one after the other. Positions sorted by (y, z, x)
and palette indices make small deltas, so most columns take a byte a value before compression.

Two formats store them: the packed history records (history.py, ``mcb.pack.v2``) and the plan
blobs (plans.py, ``mcb.plan.v2``); each keeps its own header (JSON) before the columns.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

import numpy as np

_INT_RANGES = tuple((dt, int(np.iinfo(dt).min), int(np.iinfo(dt).max)) for dt in ("<i1", "<i2", "<i4"))


def int_dtype(lo: int, hi: int) -> str:
    """The narrowest of ``<i1``, ``<i2``, ``<i4``, ``<i8`` that holds ``lo``..``hi``."""
    for dt, dmin, dmax in _INT_RANGES:
        if dmin <= lo and hi <= dmax:
            return dt
    return "<i8"


def deltas(vals: Any) -> np.ndarray:
    """``np.diff(vals, prepend=0)`` as int64, without np.diff's general machinery."""
    a = np.asarray(vals, dtype=np.int64)
    out = np.empty_like(a)
    if len(a):
        out[0] = a[0]
        np.subtract(a[1:], a[:-1], out=out[1:])
    return out


def delta_column(vals: Any) -> tuple[str, bytes]:
    """A column of integers (a sequence or a numpy array) -> (its dtype, its delta bytes)."""
    d = deltas(vals)
    dt = int_dtype(int(d.min()), int(d.max())) if len(d) else "<i1"
    return dt, d.astype(dt).tobytes()


def read_columns(body: bytes, cols: list[list[str]], n: int, summed: Container[str]) -> dict[str, np.ndarray]:
    """``[[name, dtype], ...]`` of ``n`` values each, read from ``body`` in order as int64: the
    columns named in ``summed`` summed back from their deltas, the others as they are (a packed
    record's palette indices). ValueError when ``body`` holds fewer or more bytes than they take."""
    out: dict[str, np.ndarray] = {}
    off = 0
    for c, dt in cols:
        arr = np.frombuffer(body, dtype=dt, count=n, offset=off)
        off += arr.nbytes
        out[c] = np.cumsum(arr, dtype=np.int64) if c in summed else arr.astype(np.int64)
    if off != len(body):
        raise ValueError(f"{len(body) - off} bytes left over")
    return out
