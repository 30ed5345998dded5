"""What our operations wrote and what the world host saw them write: per-batch records, live rows and packed operations.

While an operation runs, each completed batch's writes are ONE ``batch_writes`` record, written
in the batch's completion transaction (``record_batch_writes``; the wids a row per block would
have got, from ``written``'s sequence), and the world host's echoes of its own writes (``observed``
events with ``source='ours'``) are one ``batch_events`` record per observer transaction
(``record_batch_events``; the observer numbers them among the other events). ``written`` rows
remain for recovery's uncertain writes and for journals from before schema 5 (docs/journal-format.md
§6). Once the operation is terminal (applied, conflict, cancelled, failed) all of it never
changes again, so it is **packed**: one ``packed_writes`` and one ``packed_events`` row per
operation holding every column of every row, losslessly — zlib of column-wise, delta-encoded
integers and palette-indexed strings, with the position bounds and id range so a reader decodes
only the records that can matter; its per-batch records are merged in and dropped. The intent
copies of its settled batches are dropped (the plan blob holds the same entries; recovery reads
only unsettled intents). docs/journal-format.md §5 is the rule.

:class:`History` is the only reader: every question undo, recovery, parts, regeneration and
the change feed ask of ``written`` / ours-``observed`` is answered over live rows ∪ per-batch
records ∪ packed operations, so neither form changes an answer. Foreign events (players,
environment) and gaps always stay live rows.

Packing and compaction run in a child process (packer.py), never on the journal's event loop,
and hold the write lock only briefly: the packed record is written first, while the live copies
stay, and the live copies are then deleted in slices. So every row is in live ∪ packed at every
moment (a reader may see a row twice, never not at all), and :class:`History` drops the
duplicates by ``wid`` / ``oid``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from mcb_common.errors import ErrorCode, McbError
from mcb_common.eventrun import EventRun
from mcb_common.geometry import Box, Vec3

from .columns import delta_column, read_columns
from .db import AUTO_VACUUM_INCREMENTAL, Database, is_disk_full, now_ms
from .states import TERMINAL

log = logging.getLogger("mcb.journal.history")

Pos = tuple[int, int, int]
Box6 = tuple[int, int, int, int, int, int]  # x0, y0, z0, x1, y1, z1 (inclusive)

PACK_FORMAT = "mcb.pack.v2"
PACK_FORMAT_V1 = "mcb.pack.v1"  # read, never written (journals packed before v2)
WRITE_INTS = ("wid", "x", "y", "z", "uncertain", "at_ms")
WRITE_STRS = ("before", "after")
EVENT_INTS = ("oid", "host_seq", "x", "y", "z", "at_ms")
EVENT_STRS = ("host_instance", "before", "after", "player_id", "reason")
WRITE_COLS = ", ".join(WRITE_INTS + WRITE_STRS)
EVENT_COLS = ", ".join(EVENT_INTS + EVENT_STRS)
OURS = "kind='event' AND source='ours'"
# Every packed record of our echoes, per operation and per observer transaction, read in one
# statement (one snapshot): ``FROM {EVENT_RECORDS} WHERE ...`` (blame.py, histmap.py).
EVENT_RECORDS = (
    "(SELECT op_id, lo, hi, x0, y0, z0, x1, y1, z1, data, sha256 FROM packed_events"
    " UNION ALL SELECT op_id, lo, hi, x0, y0, z0, x1, y1, z1, data, sha256 FROM batch_events)"
)


# ---------------------------------------------------------------------------- the packed format
def pack_rows(rows: list[dict[str, Any]], ints: tuple[str, ...], strs: tuple[str, ...]) -> tuple[bytes, str]:
    """``zlib`` of a ``mcb.pack.v2`` record: one JSON header line (format, n, palette, the
    columns with their dtypes), then the columns as little-endian arrays, integers as deltas in
    the narrowest type that holds them, strings as palette indices. Returns the compressed bytes
    and the sha256 of the uncompressed record. Decoding is array work (numpy) and zlib, which
    releases the GIL: no long pure-Python or JSON step (see ``unpack_arrays``)."""
    int_cols: dict[str, list[int]] = {}
    for c in ints:
        vals = [r[c] for r in rows]
        bad = next((v for v in vals if not isinstance(v, int)), None)
        if bad is not None:
            raise ValueError(f"column {c} holds {bad!r}, not an integer")
        int_cols[c] = vals
    return pack_columns(len(rows), int_cols, {c: [r[c] for r in rows] for c in strs})


def pack_columns(n: int, int_cols: dict[str, Any], str_cols: dict[str, list[Any]]) -> tuple[bytes, str]:
    """``pack_rows`` of columns given as sequences (integer columns may be numpy arrays), in the
    order given: the same ``mcb.pack.v2`` record. The executor packs a batch's writes with it in
    the batch's completion transaction (``record_batch_writes``)."""
    palette: list[Any] = []
    index: dict[Any, int] = {}
    head_cols: list[list[str]] = []
    parts: list[bytes] = []
    for c, vals in int_cols.items():
        dt, data = delta_column(vals if n else ())
        head_cols.append([c, dt])
        parts.append(data)
    for c, svals in str_cols.items():
        one = n > 0 and svals.count(svals[0]) == n  # one value (an instance, a player, a reason): no step a row
        for s in (svals[0],) if one else dict.fromkeys(svals):  # this column's values in the order they first appear
            if s not in index:
                index[s] = len(palette)
                palette.append(s)
        dt = "<u1" if len(palette) <= 0xFF else "<u2" if len(palette) <= 0xFFFF else "<u4"
        head_cols.append([c, dt])
        if one:
            parts.append(np.full(n, index[svals[0]], dtype=dt).tobytes())
        else:
            parts.append(np.asarray(list(map(index.__getitem__, svals)), dtype=dt).tobytes())
    head = json.dumps(
        {"format": PACK_FORMAT, "n": n, "palette": palette, "cols": head_cols}, separators=(",", ":")
    ).encode()
    raw = b"".join([head, b"\n", *parts])
    return zlib.compress(raw, 6), hashlib.sha256(raw).hexdigest()


def next_wids(c: sqlite3.Connection, n: int) -> int:
    """Take ``n`` wids from ``written``'s AUTOINCREMENT sequence inside the caller's write
    transaction, as ``n`` inserted rows would: -> the first. A later row (recovery's uncertain
    rows) or batch numbers after them, so wid order across operations is unchanged."""
    seq = c.execute("SELECT seq FROM sqlite_sequence WHERE name='written'").fetchone()
    top = c.execute("SELECT MAX(wid) FROM written").fetchone()[0]
    first = max(int(seq[0]) if seq is not None else 0, int(top or 0)) + 1
    if seq is None:
        c.execute("INSERT INTO sqlite_sequence(name, seq) VALUES ('written', ?)", (first + n - 1,))
    else:
        c.execute("UPDATE sqlite_sequence SET seq=? WHERE name='written'", (first + n - 1,))
    return first


def record_batch_writes(
    c: sqlite3.Connection, op_id: str, seq: int, rows: list[tuple[int, int, int, str, str]], at_ms: int
) -> None:
    """What batch ``seq`` of ``op_id`` wrote (``(x, y, z, before, after)`` in order), as ONE packed
    ``batch_writes`` record inside the caller's transaction (the batch's completion): the same
    columns and wids that ``len(rows)`` ``written`` rows would hold (certain, ``at_ms``)."""
    if not rows:
        return
    n = len(rows)
    first = next_wids(c, n)
    xs, ys, zs, befores, afters = zip(*rows, strict=True)
    x, y, z = np.asarray(xs, dtype=np.int64), np.asarray(ys, dtype=np.int64), np.asarray(zs, dtype=np.int64)
    data, sha = pack_columns(
        n,
        {
            "wid": np.arange(first, first + n, dtype=np.int64),
            "x": x,
            "y": y,
            "z": z,
            "uncertain": np.zeros(n, dtype=np.int64),
            "at_ms": np.full(n, at_ms, dtype=np.int64),
        },
        {"before": list(befores), "after": list(afters)},
    )
    c.execute(
        "INSERT INTO batch_writes(op_id, seq, n, lo, hi, x0, y0, z0, x1, y1, z1, data, sha256)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            op_id,
            seq,
            n,
            first,
            first + n - 1,
            int(x.min()),
            int(y.min()),
            int(z.min()),
            int(x.max()),
            int(y.max()),
            int(z.max()),
            data,
            sha,
        ),
    )


def next_oids(c: sqlite3.Connection) -> int:
    """The next oid of ``observed``'s AUTOINCREMENT sequence (the caller numbers its rows from it
    and then calls ``take_oids``)."""
    seq = c.execute("SELECT seq FROM sqlite_sequence WHERE name='observed'").fetchone()
    top = c.execute("SELECT MAX(oid) FROM observed").fetchone()[0]
    return max(int(seq[0]) if seq is not None else 0, int(top or 0)) + 1


def take_oids(c: sqlite3.Connection, last: int) -> None:
    """Record ``last`` as the largest oid given (the rows and records numbered by the caller)."""
    if c.execute("UPDATE sqlite_sequence SET seq=max(seq, ?) WHERE name='observed'", (last,)).rowcount == 0:
        c.execute("INSERT INTO sqlite_sequence(name, seq) VALUES ('observed', ?)", (last,))


class Echoes:
    """The world host's echoes of one operation's writes gathered by one observer transaction, as
    the columns of its ``batch_events`` record: one event at a time (``add``) or a run at once
    (``add_run``: list extends, no step per event)."""

    def __init__(self) -> None:
        self.oid: list[int] = []
        self.seq: list[int] = []
        self.x: list[int] = []
        self.y: list[int] = []
        self.z: list[int] = []
        self.at: list[int] = []
        self.instance: list[str] = []
        self.before: list[str] = []
        self.after: list[str] = []
        self.player: list[str] = []

    def add(
        self, oid: int, seq: int, x: int, y: int, z: int, at: int, instance: str, before: str, after: str, player: str
    ) -> None:
        self.oid.append(oid)
        self.seq.append(seq)
        self.x.append(x)
        self.y.append(y)
        self.z.append(z)
        self.at.append(at)
        self.instance.append(instance)
        self.before.append(before)
        self.after.append(after)
        self.player.append(player)

    def add_run(self, oid: int, run: EventRun, instance: str) -> None:
        """``run``'s events numbered from ``oid``."""
        n = len(run.x)
        self.oid += range(oid, oid + n)
        self.seq += range(run.first, run.first + n)
        self.x += run.x
        self.y += run.y
        self.z += run.z
        self.at += [run.at_millis] * n
        self.instance += [instance] * n
        self.before += run.before
        self.after += run.after
        self.player += [run.player_id] * n


def record_batch_events(c: sqlite3.Connection, op_id: str, echoes: Echoes) -> None:
    """The world host's echoes of ``op_id``'s own writes recorded by one observer transaction, in
    order, with the oids the caller gave them, as ONE packed ``batch_events`` record (``reason`` is
    "", as on every event row) instead of an ``observed`` row each."""
    n = len(echoes.oid)
    if not n:
        return
    x, y, z = echoes.x, echoes.y, echoes.z
    data, sha = pack_columns(
        n,
        {"oid": echoes.oid, "host_seq": echoes.seq, "x": x, "y": y, "z": z, "at_ms": echoes.at},
        {
            "host_instance": echoes.instance,
            "before": echoes.before,
            "after": echoes.after,
            "player_id": echoes.player,
            "reason": [""] * n,
        },
    )
    c.execute(
        "INSERT INTO batch_events(op_id, n, lo, hi, x0, y0, z0, x1, y1, z1, data, sha256)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (op_id, n, echoes.oid[0], echoes.oid[-1], min(x), min(y), min(z), max(x), max(y), max(z), data, sha),
    )


def insert_write_rows(
    c: sqlite3.Connection, op_id: str, rows: list[tuple[int, int, int, str, str]], at_ms: int, uncertain: int = 0
) -> None:
    """The same writes as one ``written`` row each (recovery's uncertain writes; the equivalence
    test's reference)."""
    c.executemany(
        "INSERT INTO written(op_id, x, y, z, before, after, uncertain, at_ms) VALUES (?,?,?,?,?,?,?,?)",
        [(op_id, x, y, z, b, a, uncertain, at_ms) for x, y, z, b, a in rows],
    )


def _decoded(data: bytes, sha: str, what: str) -> bytes:
    try:
        raw = zlib.decompress(data)
    except zlib.error as exc:
        raise McbError(ErrorCode.INTERNAL, f"the packed record {what} is corrupt ({exc}); restore a backup") from exc
    if hashlib.sha256(raw).hexdigest() != sha:
        raise McbError(
            ErrorCode.INTERNAL,
            f"the packed record {what} fails its checksum; the journal database is damaged — restore a backup",
        )
    return raw


def unpack_arrays(
    data: bytes, sha: str, ints: tuple[str, ...], strs: tuple[str, ...], what: str
) -> tuple[dict[str, np.ndarray], list[Any]]:
    """A packed record's columns as numpy arrays: integers (int64, summed back) and strings as
    palette indices, with the palette. Reads both formats: ``mcb.pack.v2`` (``pack_rows``) and
    the ``mcb.pack.v1`` records of journals packed before it (one JSON document; its decode is
    a single JSON parse that holds the GIL — docs/journal-format.md §5)."""
    raw = _decoded(data, sha, what)
    head_raw, _, body = raw.partition(b"\n")
    try:
        doc = json.loads(head_raw)
        fmt = doc.get("format")
        n, pal = int(doc["n"]), doc["palette"]
        out: dict[str, np.ndarray] = {}
        if fmt == PACK_FORMAT:
            out = read_columns(body, doc["cols"], n, ints)
        elif fmt == PACK_FORMAT_V1:
            cols = doc["cols"]
            for c in ints:
                out[c] = np.cumsum(np.asarray(cols[c], dtype=np.int64), dtype=np.int64)
            for c in strs:
                out[c] = np.asarray(cols[c], dtype=np.int64)
        else:
            raise McbError(ErrorCode.INTERNAL, f"the packed record {what} has unknown format {fmt!r}")
        if (
            set(out) != set(ints + strs)
            or any(len(v) != n for v in out.values())
            or any(len(out[c]) and (out[c].min() < 0 or out[c].max() >= len(pal)) for c in strs)
        ):
            raise ValueError("columns missing, of unequal length or out of the palette")
    except (ValueError, KeyError, TypeError) as exc:
        raise McbError(ErrorCode.INTERNAL, f"the packed record {what} is malformed ({exc}); restore a backup") from exc
    return out, pal


def unpack_columns(
    data: bytes, sha: str, ints: tuple[str, ...], strs: tuple[str, ...], what: str
) -> dict[str, list[Any]]:
    """A packed record's rows column by column (integers summed back, strings resolved)."""
    arrays, pal = unpack_arrays(data, sha, ints, strs, what)
    objects = np.empty(len(pal), dtype=object)
    objects[:] = pal
    return {c: arrays[c].tolist() for c in ints} | {c: objects[arrays[c]].tolist() for c in strs}


def unpack_rows(data: bytes, sha: str, ints: tuple[str, ...], strs: tuple[str, ...], what: str) -> list[dict[str, Any]]:
    cols = unpack_columns(data, sha, ints, strs, what)
    names = ints + strs
    return [dict(zip(names, vals, strict=True)) for vals in zip(*(cols[c] for c in names), strict=True)]


def bounds_of(rows: Iterable[dict[str, Any]]) -> Box6:
    xs, ys, zs = [], [], []
    for r in rows:
        xs.append(r["x"])
        ys.append(r["y"])
        zs.append(r["z"])
    return min(xs), min(ys), min(zs), max(xs), max(ys), max(zs)


def box6_around(positions: list[Pos]) -> Box6:
    """The smallest box holding ``positions`` (not empty), as a Box6."""
    xs, ys, zs = zip(*positions, strict=True)
    return min(xs), min(ys), min(zs), max(xs), max(ys), max(zs)


def box_around(positions: list[Pos]) -> Box:
    """The smallest box holding ``positions`` (not empty)."""
    x0, y0, z0, x1, y1, z1 = box6_around(positions)
    return Box(Vec3(x0, y0, z0), Vec3(x1, y1, z1))


def _inside(p: Pos, b: Box6) -> bool:
    return b[0] <= p[0] <= b[3] and b[1] <= p[1] <= b[4] and b[2] <= p[2] <= b[5]


@dataclass
class _Pack:
    table: str  # packed_writes / packed_events (one per operation) or batch_writes (one per batch)
    op_id: str
    seq: int  # the batch (batch_writes); -1 for a record of a whole operation
    lo: int  # smallest wid / oid
    hi: int  # largest wid / oid
    box: Box6


_COLS_OF = {
    "packed_writes": (WRITE_INTS, WRITE_STRS),
    "batch_writes": (WRITE_INTS, WRITE_STRS),
    "packed_events": (EVENT_INTS, EVENT_STRS),
    "batch_events": (EVENT_INTS, EVENT_STRS),
}
_MERGED_INTO = {"batch_writes": "packed_writes", "batch_events": "packed_events"}
# the column that names one record of a per-batch table (a batch; an observer transaction's first oid)
_RECORD_KEY = {"batch_writes": "seq", "batch_events": "lo"}


def _what(pk: _Pack) -> str:
    return f"{pk.table}/{pk.op_id}" + (f"/{pk.seq}" if pk.seq >= 0 else "")


# ---------------------------------------------------------------------------- the reader
class History:
    """Live rows ∪ per-batch packed writes ∪ packed operations. Make one per question. Packing
    may commit between two of its reads: a row is then seen in two forms, never in none (module
    docstring), so answers keep one copy per ``wid`` / ``oid`` (the minimum or maximum ones need
    no care)."""

    def __init__(self, db: Database, region: Box6 | None = None):
        self.db = db
        self.region = region
        self._rows: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
        self._meta: dict[str, list[_Pack]] = {}
        self._by_pos: dict[tuple[str, str, int], dict[Pos, list[dict[str, Any]]]] = {}

    # -- packed records
    def _record(self, pk: _Pack) -> sqlite3.Row | None:
        """A record's data. A batch record listed earlier may have been merged into its
        operation's pack and dropped since (packing commits the pack first): its rows are then
        the pack's rows in the batch's wid range, read from there (``_rows_of``)."""
        if pk.table in _RECORD_KEY:
            key = _RECORD_KEY[pk.table]
            return self.db.one(f"SELECT data, sha256 FROM {pk.table} WHERE op_id=? AND {key}=?", pk.op_id, pk.seq)
        return self.db.one(f"SELECT data, sha256 FROM {pk.table} WHERE op_id=?", pk.op_id)

    def _rows_of(self, pk: _Pack) -> list[dict[str, Any]]:
        key = (pk.table, pk.op_id, pk.seq)
        if key not in self._rows:
            row = self._record(pk)
            ints, strs = _COLS_OF[pk.table]
            if row is None and pk.table in _MERGED_INTO:
                merged = _Pack(_MERGED_INTO[pk.table], pk.op_id, -1, 0, 0, pk.box)
                whole = self._record(merged)
                rows = [] if whole is None else unpack_rows(whole["data"], whole["sha256"], ints, strs, _what(merged))
                id_col = ints[0]  # wid / oid: a per-batch record's range holds only its own rows of its operation
                self._rows[key] = [r for r in rows if pk.lo <= r[id_col] <= pk.hi]
            else:
                self._rows[key] = [] if row is None else unpack_rows(row["data"], row["sha256"], ints, strs, _what(pk))
        return self._rows[key]

    def _packed(self, table: str, op_id: str) -> list[dict[str, Any]]:
        """The rows of ``op_id``'s per-operation record in ``table``."""
        return self._rows_of(_Pack(table, op_id, -1, 0, 0, (0, 0, 0, 0, 0, 0)))

    def _packs(self, table: str) -> list[_Pack]:
        """Records of ``table`` overlapping ``region`` (all when no region)."""
        if table not in self._meta:
            seq = f"{_RECORD_KEY[table]} AS seq" if table in _RECORD_KEY else "-1 AS seq"
            sql = f"SELECT op_id, {seq}, lo, hi, x0, y0, z0, x1, y1, z1 FROM {table}"
            args: tuple = ()
            if self.region is not None:
                x0, y0, z0, x1, y1, z1 = self.region
                sql += " WHERE x0<=? AND x1>=? AND y0<=? AND y1>=? AND z0<=? AND z1>=?"
                args = (x1, x0, y1, y0, z1, z0)
            self._meta[table] = [
                _Pack(
                    table,
                    r["op_id"],
                    r["seq"],
                    r["lo"],
                    r["hi"],
                    (r["x0"], r["y0"], r["z0"], r["x1"], r["y1"], r["z1"]),
                )
                for r in self.db.all(sql, *args)
            ]
        return self._meta[table]

    def _write_packs(self) -> list[_Pack]:
        """Every packed record of writes: per batch, then per operation (listed in the order that
        packing drops them: a batch record gone from the first list is in the second)."""
        batches = self._packs("batch_writes")
        return self._packs("packed_writes") + batches

    def _at(self, pk: _Pack, p: Pos) -> list[dict[str, Any]]:
        key = (pk.table, pk.op_id, pk.seq)
        if key not in self._by_pos:
            idx: dict[Pos, list[dict[str, Any]]] = {}
            for r in self._rows_of(pk):
                idx.setdefault((r["x"], r["y"], r["z"]), []).append(r)
            self._by_pos[key] = idx
        return self._by_pos[key].get(p, [])

    def _event_packs(self) -> list[_Pack]:
        """Every packed record of our echoes: per observer transaction, then per operation."""
        batches = self._packs("batch_events")
        return self._packs("packed_events") + batches

    def _batch_packs_of(self, op_id: str, table: str = "batch_writes") -> list[_Pack]:
        key = _RECORD_KEY[table]
        return [
            _Pack(table, op_id, r["k"], r["lo"], r["hi"], (r["x0"], r["y0"], r["z0"], r["x1"], r["y1"], r["z1"]))
            for r in self.db.all(
                f"SELECT {key} AS k, lo, hi, x0, y0, z0, x1, y1, z1 FROM {table} WHERE op_id=? ORDER BY lo", op_id
            )
        ]

    # -- written
    def writes_of(self, op_id: str, certain_only: bool = False) -> list[dict[str, Any]]:
        """Every write of ``op_id`` (``wid, x, y, z, before, after, uncertain, at_ms``) in wid order."""
        # Oldest form first (live rows, batch records, the operation's pack): packing writes the
        # newer form before it drops the older one, so every row is seen at least once.
        by_wid = {r["wid"]: dict(r) for r in self.db.all(f"SELECT {WRITE_COLS} FROM written WHERE op_id=?", op_id)}
        for pk in self._batch_packs_of(op_id):
            by_wid.update((r["wid"], r) for r in self._rows_of(pk))
        by_wid.update((r["wid"], r) for r in self._packed("packed_writes", op_id))
        rows = sorted(by_wid.values(), key=lambda r: r["wid"])
        return [r for r in rows if not (certain_only and r["uncertain"])]

    def write_count(self, op_id: str) -> int:
        """How many writes ``op_id`` has (certain and uncertain), without decoding a record: the
        packed count, plus the per-batch records and live rows outside the pack's wid range
        (those inside it are copies a packing pass has not deleted yet). A batch's wid range
        is contiguous and taken whole, so a batch record is either inside the pack or not."""
        pk = self.db.one("SELECT n, lo, hi FROM packed_writes WHERE op_id=?", op_id)
        lo, hi, n = (1, 0, 0) if pk is None else (pk["lo"], pk["hi"], int(pk["n"]))
        batches = self.db.row(
            "SELECT COALESCE(SUM(n), 0) AS n FROM batch_writes WHERE op_id=? AND NOT (lo>=? AND hi<=?)", op_id, lo, hi
        )["n"]
        live = self.db.row(
            "SELECT COUNT(*) AS n FROM written WHERE op_id=? AND NOT (wid BETWEEN ? AND ?)", op_id, lo, hi
        )["n"]
        return n + int(batches) + int(live)

    def later_write(self, p: Pos, wid: int) -> str | None:
        """The operation of the first write at ``p`` after write ``wid`` (uncertain ones count)."""
        best: tuple[int, str] | None = None
        row = self.db.one(
            "SELECT wid, op_id FROM written WHERE x=? AND y=? AND z=? AND wid>? ORDER BY wid LIMIT 1", *p, wid
        )
        if row is not None:
            best = (row["wid"], row["op_id"])
        for pk in self._write_packs():
            if pk.hi <= wid or not _inside(p, pk.box) or (best is not None and pk.lo > best[0]):
                continue
            for r in self._at(pk, p):
                if r["wid"] > wid and (best is None or r["wid"] < best[0]):
                    best = (r["wid"], pk.op_id)
        return None if best is None else best[1]

    def first_certain_write(self, p: Pos) -> dict[str, Any] | None:
        """``{wid, before}`` of the earliest certain write at ``p`` (the state before we built there)."""
        row = self.db.one(
            "SELECT wid, before FROM written WHERE x=? AND y=? AND z=? AND uncertain=0 ORDER BY wid LIMIT 1", *p
        )
        best = dict(row) if row is not None else None
        for pk in self._write_packs():
            if not _inside(p, pk.box) or (best is not None and pk.lo > best["wid"]):
                continue
            for r in self._at(pk, p):
                if not r["uncertain"] and (best is None or r["wid"] < best["wid"]):
                    best = {"wid": r["wid"], "before": r["before"]}
        return best

    # -- our observed echoes
    def last_ours_oid(self, op_id: str, p: Pos) -> int | None:
        """The last observed echo of ``op_id``'s own write at ``p``."""
        row = self.db.one(
            f"SELECT MAX(oid) AS m FROM observed WHERE {OURS} AND op_id=? AND x=? AND y=? AND z=?", op_id, *p
        )
        best = row["m"] if row is not None else None
        records = [pk for pk in self._batch_packs_of(op_id, "batch_events") if _inside(p, pk.box)]
        for pk in [*records, _Pack("packed_events", op_id, -1, 0, 0, (0, 0, 0, 0, 0, 0))]:
            for r in self._at(pk, p):
                best = r["oid"] if best is None else max(best, r["oid"])
        return best

    def first_event_after(self, p: Pos, since: int, not_op: str) -> dict[str, Any] | None:
        """The first observed event at ``p`` after ``since`` that is not ``not_op``'s own echo."""
        row = self.db.one(
            "SELECT source, oid FROM observed WHERE kind='event' AND x=? AND y=? AND z=? AND oid>?"
            " AND NOT (source='ours' AND op_id=?) ORDER BY oid LIMIT 1",
            *p,
            since,
            not_op,
        )
        best = dict(row) if row is not None else None
        for pk in self._event_packs():
            if (
                pk.op_id == not_op
                or pk.hi <= since
                or not _inside(p, pk.box)
                or (best is not None and pk.lo > best["oid"])
            ):
                continue
            for r in self._at(pk, p):
                if r["oid"] > since and (best is None or r["oid"] < best["oid"]):
                    best = {"source": "ours", "oid": r["oid"]}
        return best

    def events_in(self, since: int, box: Box6, limit: int, upto: int = 1 << 62) -> list[dict[str, Any]]:
        """Events (all sources) with ``since`` < oid <= ``upto`` inside ``box``, oldest first, at
        most ``limit``."""
        x0, y0, z0, x1, y1, z1 = box
        rows = [
            dict(r)
            for r in self.db.all(
                "SELECT oid, x, y, z, before, after, source, player_id, op_id FROM observed WHERE kind='event' AND oid>?"
                " AND oid<=? AND x BETWEEN ? AND ? AND y BETWEEN ? AND ? AND z BETWEEN ? AND ? ORDER BY oid LIMIT ?",
                since,
                upto,
                x0,
                x1,
                y0,
                y1,
                z0,
                z1,
                limit,
            )
        ]
        seen = {r["oid"] for r in rows}  # a row may be in two forms while it is being packed: once
        for pk in self._event_packs():
            if pk.hi <= since or pk.lo > upto:
                continue
            for r in self._rows_of(pk):
                if since < r["oid"] <= upto and r["oid"] not in seen and _inside((r["x"], r["y"], r["z"]), box):
                    seen.add(r["oid"])
                    rows.append(
                        {
                            "oid": r["oid"],
                            "x": r["x"],
                            "y": r["y"],
                            "z": r["z"],
                            "before": r["before"],
                            "after": r["after"],
                            "source": "ours",
                            "player_id": r["player_id"],
                            "op_id": pk.op_id,
                        }
                    )
        rows.sort(key=lambda r: r["oid"])
        return rows[:limit]

    def live_event_tuples_in(self, box: Box6) -> list[tuple[int, int, int, int, str, str, str]]:
        """The events inside ``box`` not packed with their operation, as ``(oid, x, y, z, source,
        before, after)``, unordered (consent.py, for many positions): the live rows and the echoes
        in per-transaction records (``batch_events``: what were live rows before schema 5).
        Foreign events are always live; per-operation packed events are only our echoes of
        writes that ``last_writes_in`` reads from the packed writes."""
        x0, y0, z0, x1, y1, z1 = box
        cur = self.db.conn.cursor()
        cur.row_factory = None  # plain tuples: many rows
        out = cur.execute(
            "SELECT oid, x, y, z, source, before, after FROM observed WHERE kind='event' AND x BETWEEN ? AND ?"
            " AND y BETWEEN ? AND ? AND z BETWEEN ? AND ?",
            (x0, x1, y0, y1, z0, z1),
        ).fetchall()
        for pk in self._packs("batch_events"):
            b = pk.box
            if not (b[0] <= x1 and b[3] >= x0 and b[1] <= y1 and b[4] >= y0 and b[2] <= z1 and b[5] >= z0):
                continue
            rec = self._record(pk)
            if rec is None:  # packed with its operation since: no longer live
                continue
            c, pal = unpack_arrays(rec["data"], rec["sha256"], EVENT_INTS, EVENT_STRS, _what(pk))
            x, y, z = c["x"], c["y"], c["z"]
            hit = np.flatnonzero((x >= x0) & (x <= x1) & (y >= y0) & (y <= y1) & (z >= z0) & (z <= z1))
            for oid, px, py, pz, before, after in zip(
                c["oid"][hit].tolist(),
                x[hit].tolist(),
                y[hit].tolist(),
                z[hit].tolist(),
                c["before"][hit].tolist(),
                c["after"][hit].tolist(),
                strict=True,
            ):
                out.append((oid, px, py, pz, "ours", pal[before], pal[after]))
        return out

    def last_writes_in(self, box: Box6) -> dict[Pos, str]:
        """The state our last certain write left at each position inside ``box`` (consent.py)."""
        x0, y0, z0, x1, y1, z1 = box
        best: dict[Pos, tuple[int, str]] = {}
        rows = [
            dict(r)
            for r in self.db.all(
                "SELECT wid, x, y, z, after FROM written WHERE uncertain=0 AND x BETWEEN ? AND ? AND y BETWEEN ? AND ?"
                " AND z BETWEEN ? AND ?",
                x0,
                x1,
                y0,
                y1,
                z0,
                z1,
            )
        ]
        for r in rows:
            p = (r["x"], r["y"], r["z"])
            if p not in best or r["wid"] > best[p][0]:
                best[p] = (r["wid"], r["after"])
        for pk in self._write_packs():  # as arrays: only the rows inside the box become objects
            if not (
                pk.box[0] <= x1
                and pk.box[3] >= x0
                and pk.box[1] <= y1
                and pk.box[4] >= y0
                and pk.box[2] <= z1
                and pk.box[5] >= z0
            ):
                continue
            rec = self._record(pk)
            if rec is None:  # merged into its operation's pack and dropped since: read there
                rec = self._record(_Pack("packed_writes", pk.op_id, -1, 0, 0, pk.box))
                if rec is None:
                    continue
            c, pal = unpack_arrays(rec["data"], rec["sha256"], WRITE_INTS, WRITE_STRS, _what(pk))
            x, y, z = c["x"], c["y"], c["z"]
            hit = np.flatnonzero(
                (c["uncertain"] == 0) & (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1) & (z >= z0) & (z <= z1)
            )
            for wid, px, py, pz, after in zip(
                c["wid"][hit].tolist(),
                x[hit].tolist(),
                y[hit].tolist(),
                z[hit].tolist(),
                c["after"][hit].tolist(),
                strict=True,
            ):
                p = (px, py, pz)
                if p not in best or wid > best[p][0]:
                    best[p] = (wid, pal[after])
        return {p: a for p, (_, a) in best.items()}

    def oldest_oid(self) -> int | None:
        a = self.db.row("SELECT MIN(oid) AS m FROM observed")["m"]
        b = self.db.row("SELECT MIN(lo) AS m FROM packed_events")["m"]
        c = self.db.row("SELECT MIN(lo) AS m FROM batch_events")["m"]
        vals = [v for v in (a, b, c) if v is not None]
        return min(vals) if vals else None


def last_oid(db: Database) -> int:
    """The largest oid ever given to an observed row (packing deletes rows, never this number)."""
    row = db.one("SELECT seq FROM sqlite_sequence WHERE name='observed'")
    live = db.row("SELECT MAX(oid) AS m FROM observed")["m"]
    return max(int(row["seq"]) if row is not None else 0, int(live or 0))


# ---------------------------------------------------------------------------- packing
DELETE_SLICE = 5000  # live copies deleted per transaction once their pack is written
BATCH_DELETE_SLICE = 50  # batch records (≤ 512 writes each) dropped per transaction once merged


def _merged(
    live: list[dict[str, Any]],
    old: sqlite3.Row | None,
    key: str,
    ints: tuple[str, ...],
    strs: tuple[str, ...],
    what: str,
) -> tuple[Any, ...]:
    """The packed record of ``live`` ∪ the rows of the ``old`` record, one row per ``key``
    (an interrupted pass leaves rows both live and packed): n, lo, hi, bounds, data, sha256."""
    rows = {r[key]: r for r in ([] if old is None else unpack_rows(old["data"], old["sha256"], ints, strs, what))}
    rows.update((r[key], r) for r in live)
    ordered = [rows[k] for k in sorted(rows)]
    data, sha = pack_rows(ordered, ints, strs)
    return (len(ordered), ordered[0][key], ordered[-1][key], *bounds_of(ordered), data, sha)


def _store(c: sqlite3.Connection, table: str, op_id: str, old_sha: str | None, record: tuple[Any, ...]) -> None:
    now = c.execute(f"SELECT sha256 FROM {table} WHERE op_id=?", (op_id,)).fetchone()
    if (None if now is None else now["sha256"]) != old_sha:  # one packer at a time (packer.py): a bug
        raise McbError(ErrorCode.INTERNAL, f"{table}/{op_id} changed while it was being packed; not packed")
    c.execute(
        f"INSERT INTO {table}(op_id, n, lo, hi, x0, y0, z0, x1, y1, z1, data, sha256, packed_ms)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(op_id) DO UPDATE SET n=excluded.n, lo=excluded.lo,"
        " hi=excluded.hi, x0=excluded.x0, y0=excluded.y0, z0=excluded.z0, x1=excluded.x1, y1=excluded.y1,"
        " z1=excluded.z1, data=excluded.data, sha256=excluded.sha256, packed_ms=excluded.packed_ms",
        (op_id, *record, now_ms()),
    )


def pack_operation(db: Database, op_id: str) -> dict[str, int]:
    """Pack one terminal operation's live rows into its packed records (merging with earlier
    packs). The rows are read and packed in one read snapshot (no lock held), the records are
    written in one short transaction, then exactly the packed live rows are deleted,
    ``DELETE_SLICE`` per transaction: no step holds the write lock for long, and every row is in
    live ∪ packed throughout (module docstring). Refuses an operation that is not terminal."""
    c = db.conn
    c.execute("BEGIN")  # deferred: one read snapshot for the rows and the earlier records
    try:
        op = c.execute("SELECT state FROM operations WHERE op_id=?", (op_id,)).fetchone()
        if op is None:
            raise McbError(ErrorCode.NOT_FOUND, f"operation {op_id} not found")
        if op["state"] not in TERMINAL:
            raise McbError(
                ErrorCode.INVALID_REQUEST, f"operation {op_id} is {op['state']}; only a finished operation is packed"
            )
        live_writes = [dict(r) for r in c.execute(f"SELECT {WRITE_COLS} FROM written WHERE op_id=?", (op_id,))]
        writes = list(live_writes)
        batch_seqs = []
        for b in c.execute("SELECT seq, data, sha256 FROM batch_writes WHERE op_id=? ORDER BY seq", (op_id,)):
            batch_seqs.append(b["seq"])
            writes += unpack_rows(b["data"], b["sha256"], WRITE_INTS, WRITE_STRS, f"batch_writes/{op_id}/{b['seq']}")
        live_events = [
            dict(r) for r in c.execute(f"SELECT {EVENT_COLS} FROM observed WHERE {OURS} AND op_id=?", (op_id,))
        ]
        events = list(live_events)
        event_los = []
        for b in c.execute("SELECT lo, data, sha256 FROM batch_events WHERE op_id=? ORDER BY lo", (op_id,)):
            event_los.append(b["lo"])
            events += unpack_rows(b["data"], b["sha256"], EVENT_INTS, EVENT_STRS, f"batch_events/{op_id}/{b['lo']}")
        records = []
        for table, live, key, ints, strs in (
            ("packed_writes", writes, "wid", WRITE_INTS, WRITE_STRS),
            ("packed_events", events, "oid", EVENT_INTS, EVENT_STRS),
        ):
            if live:
                old = c.execute(f"SELECT data, sha256 FROM {table} WHERE op_id=?", (op_id,)).fetchone()
                records.append(
                    (
                        table,
                        None if old is None else old["sha256"],
                        _merged(live, old, key, ints, strs, f"{table}/{op_id}"),
                    )
                )
    finally:
        c.execute("COMMIT")
    if records:
        with db.tx() as w:
            for table, old_sha, record in records:
                _store(w, table, op_id, old_sha, record)
    # The batch records' rows are in the pack now: drop them (a few hundred records at most).
    for sql, keys in (
        ("DELETE FROM batch_writes WHERE op_id=? AND seq=?", batch_seqs),
        ("DELETE FROM batch_events WHERE op_id=? AND lo=?", event_los),
    ):
        for i in range(0, len(keys), BATCH_DELETE_SLICE):
            with db.tx() as w:
                w.executemany(sql, ((op_id, k) for k in keys[i : i + BATCH_DELETE_SLICE]))
    for sql, ids in (
        ("DELETE FROM written WHERE wid=?", [r["wid"] for r in live_writes]),
        ("DELETE FROM observed WHERE oid=?", [r["oid"] for r in live_events]),
    ):
        for i in range(0, len(ids), DELETE_SLICE):
            with db.tx() as w:
                w.executemany(sql, ((v,) for v in ids[i : i + DELETE_SLICE]))
    with db.tx() as w:
        dropped = w.execute(
            "UPDATE batches SET entries=X'' WHERE op_id=? AND state!='intent' AND length(entries)>0", (op_id,)
        ).rowcount
    return {"writes": len(writes), "events": len(events), "batch_intents": dropped}


def _packable_sql(cols: str, settled_before: bool) -> str:
    """The terminal operations that still have live rows or settled intent copies (``cols`` of
    each; settled before a ``?`` ms when ``settled_before``): ``packable`` and ``pack_is_due``."""
    terminal = ",".join(f"'{s}'" for s in sorted(TERMINAL))
    return (
        f"SELECT {cols} FROM operations WHERE state IN ({terminal})"
        + (" AND updated_ms<=?" if settled_before else "")
        + " AND (op_id IN (SELECT op_id FROM written)"
        " OR op_id IN (SELECT op_id FROM batch_writes)"
        " OR op_id IN (SELECT op_id FROM batch_events)"
        f" OR op_id IN (SELECT op_id FROM observed WHERE {OURS})"
        " OR op_id IN (SELECT op_id FROM batches WHERE state!='intent' AND length(entries)>0))"
    )


def packable(db: Database, settled_before_ms: int | None = None) -> list[str]:
    """Terminal operations that still have live rows or settled intent copies, oldest first."""
    sql = _packable_sql("op_id", settled_before_ms is not None) + " ORDER BY created_ms"
    args = (settled_before_ms,) if settled_before_ms is not None else ()
    return [r["op_id"] for r in db.all(sql, *args)]


def pack_is_due(db: Database, pack_after_s: float) -> bool:
    """Whether ``pack_due(db, pack_after_s)`` now would find an operation to pack (``packable``'s
    question, stopping at the first one): one read, asked before a packing pass starts its child
    process (packer.py), so a journal with nothing due starts none."""
    if pack_after_s < 0:
        return False
    sql = f"SELECT EXISTS ({_packable_sql('1', True)}) AS due"
    return bool(db.row(sql, now_ms() - int(pack_after_s * 1000))["due"])


def pack_due(db: Database, pack_after_s: float, max_ops: int = 8) -> int:
    """The automatic pass: pack up to ``max_ops`` operations settled ≥ ``pack_after_s`` ago
    (settings.JournalSettings; negative: never)."""
    if pack_after_s < 0:
        return 0
    done = 0
    for op_id in packable(db, now_ms() - int(pack_after_s * 1000))[:max_ops]:
        try:
            pack_operation(db, op_id)
            done += 1
        except McbError as err:  # e.g. a damaged earlier pack: leave the live rows, say why
            log.warning("not packing %s: %s", op_id, err.message)
    return done


# ---------------------------------------------------------------------------- stats and compaction
def _file_bytes(db: Database, blobs_root: Path) -> dict[str, int]:
    wal = db.path.with_name(db.path.name + "-wal")
    out = {
        "sqlite": db.path.stat().st_size if db.path.exists() else 0,
        "wal": wal.stat().st_size if wal.exists() else 0,
        "blobs": sum(p.stat().st_size for p in blobs_root.rglob("*") if p.is_file()),
    }
    out["total"] = sum(out.values())
    return out


def _table_bytes(db: Database) -> dict[str, int]:
    """Bytes per table and index (SQLite's dbstat); empty where SQLite was built without it."""
    try:
        return {r[0]: int(r[1]) for r in db.all("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")}
    except sqlite3.Error:
        return {}


def journal_stats(db: Database, blobs_root: Path, pack_after_s: float) -> dict[str, Any]:
    files = _file_bytes(db, blobs_root)
    written_blocks = int(db.row("SELECT COALESCE(SUM(written), 0) AS n FROM operations")["n"])
    states = {r["state"]: r["n"] for r in db.all("SELECT state, COUNT(*) AS n FROM operations GROUP BY state")}
    live_w = int(db.row("SELECT COUNT(*) AS n FROM written")["n"])
    live_e = int(db.row(f"SELECT COUNT(*) AS n FROM observed WHERE {OURS}")["n"])
    other_e = int(db.row(f"SELECT COUNT(*) AS n FROM observed WHERE NOT ({OURS})")["n"])
    todo = packable(db)
    marks = ",".join("?" * len(todo))
    due_w = due_e = due_bw = due_be = due_bytes = 0
    if todo:
        due_w = int(db.row(f"SELECT COUNT(*) AS n FROM written WHERE op_id IN ({marks})", *todo)["n"])
        due_e = int(db.row(f"SELECT COUNT(*) AS n FROM observed WHERE {OURS} AND op_id IN ({marks})", *todo)["n"])
        for table in ("batch_writes", "batch_events"):
            r = db.row(
                f"SELECT COALESCE(SUM(n), 0) AS n, COALESCE(SUM(length(data)), 0) AS b FROM {table}"
                f" WHERE op_id IN ({marks})",
                *todo,
            )
            due_bytes += int(r["b"])
            if table == "batch_writes":
                due_bw = int(r["n"])
            else:
                due_be = int(r["n"])
    tables = _table_bytes(db)
    page = int(db.row("PRAGMA page_size")[0])
    free = int(db.row("PRAGMA freelist_count")[0]) * page
    # Packing frees the packed rows' share of their tables and indexes (an estimate: rows are
    # of similar size), less the packed records it adds (a few bytes per row, measured below).
    w_bytes = sum(tables.get(t, 0) for t in ("written", "written_pos", "written_op"))
    e_bytes = sum(tables.get(t, 0) for t in ("observed", "observed_pos"))
    est = (w_bytes * due_w // live_w if live_w else 0) + (e_bytes * due_e // (live_e + other_e) if live_e else 0)
    est += due_bytes  # per-batch records (§6): their bytes, less the one record per operation they become
    packed = db.row(
        "SELECT COUNT(*) AS ops, COALESCE(SUM(n), 0) AS n, COALESCE(SUM(length(data)), 0) AS b FROM packed_writes"
    )
    packed_e = db.row(
        "SELECT COUNT(*) AS ops, COALESCE(SUM(n), 0) AS n, COALESCE(SUM(length(data)), 0) AS b FROM packed_events"
    )
    batch = db.row(
        "SELECT COUNT(*) AS records, COALESCE(SUM(n), 0) AS n, COALESCE(SUM(length(data)), 0) AS b FROM batch_writes"
    )
    batch_e = db.row(
        "SELECT COUNT(*) AS records, COALESCE(SUM(n), 0) AS n, COALESCE(SUM(length(data)), 0) AS b FROM batch_events"
    )
    return {
        "bytes": files,
        "operations": states,
        "written_blocks": written_blocks,
        "bytes_per_written_block": round(files["total"] / written_blocks, 1) if written_blocks else None,
        # not packed with their operation yet: rows, and the rows in per-batch records (§6)
        "live": {
            "write_rows": live_w + int(batch["n"]),
            "our_event_rows": live_e + int(batch_e["n"]),
            "other_observed_rows": other_e,
        },
        # of those, the rows in per-batch records (not carried by the JournalStats RPC)
        "batch_records": {
            "records": int(batch["records"]) + int(batch_e["records"]),
            "write_rows": int(batch["n"]),
            "event_rows": int(batch_e["n"]),
            "bytes": int(batch["b"]) + int(batch_e["b"]),
        },
        "packed": {
            "operations": int(packed["ops"]),
            "write_rows": int(packed["n"]),
            "event_rows": int(packed_e["n"]),
            "bytes": int(packed["b"]) + int(packed_e["b"]),
        },
        "packable": {
            "operations": len(todo),
            "write_rows": due_w + due_bw,
            "event_rows": due_e + due_be,
            "estimated_bytes_freed": est,
            "free_pages_bytes": free,
        },
        "pack_after_seconds": pack_after_s,
        "tables": tables,
    }


VACUUM_SLICE_PAGES = 1024  # pages returned to the file system per transaction (4 MiB at 4 KiB pages)


def compact(db: Database, blobs_root: Path) -> dict[str, Any]:
    """Pack every finished operation now (no delay) and return the freed pages to the file
    system so the file shrinks. Runs in the packer's child process (packer.py). On a journal in
    incremental auto-vacuum (every journal since issue 33; db.py switches older ones at start)
    the pages are returned ``VACUUM_SLICE_PAGES`` per transaction, so the journal's own writes
    never wait for more than one slice; only a journal that could not be switched (its disk was
    too full at start) still runs one full VACUUM, during which the journal's writes wait."""
    before = _file_bytes(db, blobs_root)
    totals = {"writes": 0, "events": 0, "batch_intents": 0}
    ops = 0
    for op_id in packable(db):
        for k, v in pack_operation(db, op_id).items():
            totals[k] += v
        ops += 1
    try:
        if int(db.row("PRAGMA auto_vacuum")[0]) == AUTO_VACUUM_INCREMENTAL:
            _return_free_pages(db)
        else:
            db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.conn.execute("VACUUM")  # rewrites the file: needs about its size in free space
            db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.OperationalError as exc:
        if not is_disk_full(exc):
            raise
        raise McbError(
            ErrorCode.UNAVAILABLE,
            f"packed {ops} operation(s), but the journal's disk is too full to "
            "shrink the file (VACUUM needs about its size free); free space "
            "and run compact again",
        ) from exc
    return {
        "packed_operations": ops,
        "rows": totals,
        "bytes_before": before,
        "bytes_after": _file_bytes(db, blobs_root),
    }


def _return_free_pages(db: Database) -> None:
    """Free pages back to the file system, one short write transaction per slice, then a
    checkpoint that lets the database file shrink. The final checkpoint cuts the WAL only when
    it can at once: a TRUNCATE checkpoint blocks the journal's writers while it waits for
    readers, so it gets 50 ms and otherwise leaves the WAL to the next checkpoint."""
    slices = -(-int(db.row("PRAGMA freelist_count")[0]) // VACUUM_SLICE_PAGES)
    for _ in range(slices):  # pages the journal frees meanwhile wait for the next compact
        # Its own write transaction, taken at BEGIN (the busy timeout applies there; a read
        # upgraded to a write would fail at once after another commit); executescript steps the
        # pragma to its end (execute would return after its first page).
        try:
            db.conn.executescript(f"BEGIN IMMEDIATE; PRAGMA incremental_vacuum({VACUUM_SLICE_PAGES}); COMMIT;")
        finally:
            if db.conn.in_transaction:
                db.conn.execute("ROLLBACK")
        db.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    db.conn.execute("PRAGMA busy_timeout=50")
    try:
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.OperationalError as exc:  # busy: the next checkpoint cuts it (journal_size_limit)
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise
    finally:
        db.conn.execute("PRAGMA busy_timeout=5000")
