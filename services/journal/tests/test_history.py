"""Issue 12 item 7: packing finished operations changes no answer of undo, recovery, parts,
regeneration or the change feed, and a schema-2 journal made by the previous code migrates.

``fixtures/journal_v2.sql`` is a dump of a journal written by the schema-2 code (commit
651cc3f, before packing existed) through the real services: a box, a hollow box, a replace,
a glass line and the undo of the hollow box.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path

import numpy as np
import pytest
from mcb_common.errors import ErrorCode, McbError
from mcb_journal import history
from mcb_journal.db import SCHEMA_VERSION, Database
from mcb_journal.history import (
    History,
    compact,
    journal_stats,
    last_oid,
    pack_due,
    pack_operation,
    packable,
)

FIXTURE = Path(__file__).parent / "fixtures" / "journal_v2.sql"
ALL = (-64, -64, -64, 63, 319, 63)


def v2_journal(tmp_path: Path) -> Path:
    path = tmp_path / "journal.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(FIXTURE.read_text())
    conn.close()
    return path


def add_foreign_events(path: Path) -> None:
    """A player and the environment touch blocks the operations wrote, after them (ABA and all)."""
    conn = sqlite3.connect(path)
    w = conn.execute("SELECT x, y, z, after FROM written ORDER BY wid LIMIT 3").fetchall()
    for (x, y, z, after), src in zip(w, ("player", "environment", "player"), strict=True):
        conn.execute(
            "INSERT INTO observed(kind, host_instance, host_seq, x, y, z, before, after, source, player_id,"
            " op_id, at_ms) VALUES ('event', 'h', 0, ?, ?, ?, ?, 'minecraft:dirt', ?, 'bob', '', 1)",
            (x, y, z, after, src),
        )
    conn.commit()
    conn.close()


def answers(db: Database) -> dict:
    """Every question the safety code asks of the history, over every position and operation."""
    h = History(db)
    ops = [r["op_id"] for r in db.all("SELECT op_id FROM operations ORDER BY created_ms")]
    out: dict = {"writes": {}, "certain": {}, "later": {}, "first": {}, "ours": {}, "after": {}, "feed": {}}
    positions = set()
    for op in ops:
        rows = h.writes_of(op)
        out["writes"][op] = rows
        out["certain"][op] = h.writes_of(op, certain_only=True)
        for r in rows:
            p = (r["x"], r["y"], r["z"])
            positions.add(p)
            out["later"][(op, r["wid"])] = h.later_write(p, r["wid"])
    for p in sorted(positions):
        out["first"][p] = h.first_certain_write(p)
        for op in ops:
            out["ours"][(op, p)] = h.last_ours_oid(op, p)
            for since in (0, 40, 120):
                out["after"][(op, p, since)] = h.first_event_after(p, since, op)
    for since in (0, 1, 57, 100, 169, 170, 500):
        for limit in (1, 7, 100, 1000):
            out["feed"][(since, limit)] = History(db, ALL).events_in(since, ALL, limit)
            out["feed"][(since, limit, "box")] = History(db, (0, 70, 0, 3, 72, 2)).events_in(
                since, (0, 70, 0, 3, 72, 2), limit
            )
            upto = History(db, ALL).events_in(since, ALL, limit, upto=since + 60)
            assert all(since < r["oid"] <= since + 60 for r in upto)
            out["feed"][(since, limit, "upto")] = upto
    out["oldest"] = h.oldest_oid()
    out["last"] = last_oid(db)
    return out


def test_v2_journal_migrates_and_packing_changes_no_answer(tmp_path):
    path = v2_journal(tmp_path)
    add_foreign_events(path)
    raw = sqlite3.connect(path)
    raw.row_factory = sqlite3.Row
    written_before = [dict(r) for r in raw.execute("SELECT * FROM written ORDER BY wid")]
    ours_before = [dict(r) for r in raw.execute("SELECT * FROM observed WHERE source='ours' ORDER BY oid")]
    raw.close()
    assert len(written_before) == 170 and len(ours_before) == 170

    db = Database(path)
    assert db.get_meta("schema_version") == SCHEMA_VERSION == 5
    ref = answers(db)
    assert ref["later"] and any(v is not None for v in ref["later"].values())  # the replace/undo overwrote
    assert any(v is not None and v["source"] != "ours" for v in ref["after"].values())  # foreign events seen
    assert len(ref["feed"][(0, 1000)]) == 173

    ops = packable(db)
    assert len(ops) == 5
    for op in ops:
        pack_operation(db, op)
    assert db.one("SELECT COUNT(*) AS n FROM written")["n"] == 0
    assert db.one("SELECT COUNT(*) AS n FROM observed WHERE source='ours'")["n"] == 0
    assert db.one("SELECT COUNT(*) AS n FROM observed WHERE kind='event'")["n"] == 3  # foreign events stay live
    assert db.one("SELECT COUNT(*) AS n FROM batches WHERE length(entries)>0")["n"] == 0
    assert packable(db) == []

    assert answers(db) == ref
    # Every column of every row comes back exactly.
    got = sorted((r | {"op_id": op} for op, rows in ref["writes"].items() for r in rows), key=lambda r: r["wid"])
    assert [{k: r[k] for k in history.WRITE_INTS + history.WRITE_STRS} | {"op_id": r["op_id"]} for r in got] == [
        {k: r[k] for k in history.WRITE_INTS + history.WRITE_STRS} | {"op_id": r["op_id"]} for r in written_before
    ]
    h = History(db)
    echoes = sorted((r | {"op_id": op} for op in ops for r in h._packed("packed_events", op)), key=lambda r: r["oid"])
    assert [{k: r[k] for k in (*history.EVENT_INTS, *history.EVENT_STRS, "op_id")} for r in echoes] == [
        {k: r[k] for k in (*history.EVENT_INTS, *history.EVENT_STRS, "op_id")} for r in ours_before
    ]


def test_late_echoes_merge_into_the_pack_and_numbering_continues(tmp_path):
    db = Database(v2_journal(tmp_path))
    op = packable(db)[0]
    first = History(db).writes_of(op)[0]
    top = last_oid(db)
    pack_operation(db, op)
    with db.tx() as c:  # an echo of this operation arriving after it was packed
        c.execute(
            "INSERT INTO observed(kind, host_instance, host_seq, x, y, z, before, after, source, player_id,"
            " op_id, at_ms) VALUES ('event', 'h', 999, ?, ?, ?, ?, ?, 'ours', '', ?, 5)",
            (first["x"], first["y"], first["z"], first["before"], first["after"], op),
        )
    assert op in packable(db)
    n = db.one("SELECT n FROM packed_events WHERE op_id=?", op)["n"]
    pack_operation(db, op)
    assert db.one("SELECT n FROM packed_events WHERE op_id=?", op)["n"] == n + 1
    assert History(db).last_ours_oid(op, (first["x"], first["y"], first["z"])) == top + 1
    # All observed rows of the last operations are packed: the log position does not go back.
    for o in packable(db):
        pack_operation(db, o)
    assert db.one("SELECT MAX(oid) AS m FROM observed")["m"] < top + 1 == last_oid(db)


def test_unfinished_operations_are_not_packed(tmp_path):
    db = Database(v2_journal(tmp_path))
    op = packable(db)[-1]
    with db.tx() as c:
        c.execute("UPDATE operations SET state='recovery_required' WHERE op_id=?", (op,))
        c.execute("UPDATE batches SET state='intent' WHERE op_id=?", (op,))
    assert op not in packable(db)
    with pytest.raises(McbError) as exc:
        pack_operation(db, op)
    assert exc.value.code == ErrorCode.INVALID_REQUEST
    assert db.one("SELECT COUNT(*) AS n FROM written WHERE op_id=?", op)["n"] > 0


def test_uncertain_writes_of_an_abandoned_operation_stay_later_writes_when_packed(tmp_path):
    db = Database(v2_journal(tmp_path))
    first_op = packable(db)[0]
    r = History(db).writes_of(first_op)[0]
    p = (r["x"], r["y"], r["z"])
    for o in packable(db):
        pack_operation(db, o)
    top = db.one("SELECT MAX(hi) AS m FROM packed_writes")["m"]
    with db.tx() as c:  # an abandoned operation's potential write over p (recovery_abandon)
        c.execute(
            "INSERT INTO operations(op_id, project_id, plan_id, plan_hash, idempotency_key, state, created_ms,"
            " updated_ms) VALUES ('op_x', 'default', 'pl', 'h', 'k', 'failed', 9e12, 9e12)"
        )
        c.execute(
            "INSERT INTO written(op_id, x, y, z, before, after, uncertain, at_ms) VALUES"
            " ('op_x', ?, ?, ?, 'a', 'b', 1, 1)",
            p,
        )
    assert History(db).later_write(p, top) == "op_x"
    pack_operation(db, "op_x")
    assert History(db).later_write(p, top) == "op_x"
    assert History(db).writes_of("op_x", certain_only=True) == []
    assert History(db).first_certain_write(p)["before"] == r["before"]


def test_a_damaged_pack_is_refused_never_used(tmp_path):
    db = Database(v2_journal(tmp_path))
    op = packable(db)[0]
    pack_operation(db, op)
    with db.tx() as c:
        c.execute("UPDATE packed_writes SET sha256=? WHERE op_id=?", ("0" * 64, op))
    with pytest.raises(McbError) as exc:
        History(db).writes_of(op)
    assert exc.value.code == ErrorCode.INTERNAL and "checksum" in exc.value.message


def test_stats_and_compact_report_and_shrink(tmp_path):
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    db = Database(v2_journal(tmp_path))
    st = journal_stats(db, blobs, 30.0)
    assert st["packable"]["operations"] == 5 and st["packable"]["write_rows"] == 170
    assert st["pack_after_seconds"] == 30.0
    assert st["written_blocks"] == 170 and st["live"]["write_rows"] == 170
    out = compact(db, blobs)
    assert out["packed_operations"] == 5 and out["rows"]["writes"] == 170 and out["rows"]["events"] == 170
    assert out["bytes_after"]["total"] < out["bytes_before"]["total"]
    st = journal_stats(db, blobs, 30.0)
    assert st["packable"]["operations"] == 0 and st["packed"]["write_rows"] == 170 and st["live"]["write_rows"] == 0


def test_the_packing_delay_is_the_one_given(tmp_path):
    db = Database(v2_journal(tmp_path))
    assert len(packable(db)) == 5
    assert pack_due(db, -1.0) == 0  # never automatically
    assert pack_due(db, 10**9) == 0  # none settled that long ago
    assert pack_due(db, 0.0, max_ops=2) == 2 and len(packable(db)) == 3


def test_asking_whether_packing_is_due_reads_no_players_events(tmp_path):
    """pack_is_due runs every few seconds: the players' events (live rows forever, a million on a
    busy server) are not scanned for our own echoes; an index holds only those."""
    db = Database(v2_journal(tmp_path))
    plan = db.all("EXPLAIN QUERY PLAN SELECT EXISTS (" + history._packable_sql("1", True) + ")", 0)
    scans = [r["detail"] for r in plan if r["detail"].startswith("SCAN observed")]
    assert scans == ["SCAN observed USING INDEX observed_ours"], [r["detail"] for r in plan]
    assert history.pack_is_due(db, 0.0)  # and it still finds what is due
    pack_due(db, 0.0)
    assert not history.pack_is_due(db, 0.0)


def test_a_pass_killed_between_its_pack_and_its_deletes_changes_no_answer_and_the_next_pass_finishes(
    tmp_path, monkeypatch
):
    """Issue 33 item 1: the packer writes the pack, then deletes the live copies in slices (each its
    own transaction). Killed in between, every row is both live and packed: no answer changes, and
    the next pass merges without duplicating a row."""
    path = v2_journal(tmp_path)
    add_foreign_events(path)
    db = Database(path)
    ref = answers(db)
    op = max(packable(db), key=lambda o: db.one("SELECT COUNT(*) AS n FROM written WHERE op_id=?", o)["n"])
    total = db.one("SELECT COUNT(*) AS n FROM written WHERE op_id=?", op)["n"]
    assert total > 20
    monkeypatch.setattr(history, "DELETE_SLICE", 10)
    real_tx, calls = db.tx, []

    class Killed(Exception):
        pass

    def dying_tx():
        calls.append(1)
        if len(calls) == 3:  # the pack and the first slice of deletes are committed
            raise Killed
        return real_tx()

    monkeypatch.setattr(db, "tx", dying_tx)
    with pytest.raises(Killed):
        pack_operation(db, op)
    monkeypatch.setattr(db, "tx", real_tx)
    live = db.one("SELECT COUNT(*) AS n FROM written WHERE op_id=?", op)["n"]
    assert live == total - 10 and db.one("SELECT n FROM packed_writes WHERE op_id=?", op)["n"] == total
    assert answers(db) == ref
    assert op in packable(db)
    for o in packable(db):
        pack_operation(db, o)
    assert db.one("SELECT COUNT(*) AS n FROM written")["n"] == 0
    assert db.one("SELECT n FROM packed_writes WHERE op_id=?", op)["n"] == total
    assert answers(db) == ref


def _v1_record(rows: list[dict], ints: tuple[str, ...], strs: tuple[str, ...]) -> tuple[bytes, str]:
    """A record as the mcb.pack.v1 packer wrote it (one zlib'd JSON document; history.py before
    v2): journals packed then must still read."""
    import hashlib
    import json
    import zlib

    palette: list = []
    cols: dict = {}
    for c in ints:
        prev, out = 0, []
        for r in rows:
            out.append(r[c] - prev)
            prev = r[c]
        cols[c] = out
    for c in strs:
        cols[c] = []
        for r in rows:
            if r[c] not in palette:
                palette.append(r[c])
            cols[c].append(palette.index(r[c]))
    raw = json.dumps(
        {"format": "mcb.pack.v1", "n": len(rows), "palette": palette, "cols": cols}, separators=(",", ":")
    ).encode()
    return zlib.compress(raw, 9), hashlib.sha256(raw).hexdigest()


ODD_ROWS = [  # deltas of every width, negative ones, a state with a newline, unicode, one row only
    {
        "wid": 1,
        "x": -30_000_000,
        "y": -64,
        "z": 29_999_999,
        "uncertain": 0,
        "at_ms": 1_700_000_000_000,
        "before": "minecraft:air",
        "after": "minecraft:oak_sign[rotation=4]",
    },
    {
        "wid": 2,
        "x": 29_999_999,
        "y": 319,
        "z": -30_000_000,
        "uncertain": 1,
        "at_ms": 1_700_000_000_001,
        "before": "minecraft:stone",
        "after": "minecraft:air",
    },
    {"wid": 400, "x": 0, "y": 0, "z": 0, "uncertain": 0, "at_ms": 1, "before": "a\nb", "after": "ключ"},
]


@pytest.mark.parametrize("rows", [ODD_ROWS, ODD_ROWS[:1], []], ids=["odd", "one", "none"])
def test_packed_records_round_trip_in_v2_and_v1_records_still_read(rows):
    data, sha = history.pack_rows(rows, history.WRITE_INTS, history.WRITE_STRS)
    assert zlib_head(data).startswith(b'{"format":"mcb.pack.v2"')
    assert history.unpack_rows(data, sha, history.WRITE_INTS, history.WRITE_STRS, "t") == rows
    old, old_sha = _v1_record(rows, history.WRITE_INTS, history.WRITE_STRS)
    assert history.unpack_rows(old, old_sha, history.WRITE_INTS, history.WRITE_STRS, "t") == rows


def _reference_pack(n: int, int_cols: dict, str_cols: dict) -> bytes:
    """The record's uncompressed bytes, one step a value: what pack_columns must give."""
    palette: list = []
    cols, parts = [], []
    for c, vals in int_cols.items():
        d = np.diff(np.asarray(vals, dtype=np.int64), prepend=0)
        dt = next(
            t for t in ("<i1", "<i2", "<i4", "<i8") if not n or np.iinfo(t).min <= d.min() <= d.max() <= np.iinfo(t).max
        )
        cols.append([c, dt])
        parts.append(d.astype(dt).tobytes())
    for c, vals in str_cols.items():
        for v in vals:
            if v not in palette:
                palette.append(v)
        dt = "<u1" if len(palette) <= 0xFF else "<u2"
        cols.append([c, dt])
        parts.append(np.asarray([palette.index(v) for v in vals], dtype=dt).tobytes())
    head = json.dumps({"format": "mcb.pack.v2", "n": n, "palette": palette, "cols": cols}, separators=(",", ":"))
    return b"".join([head.encode(), b"\n", *parts])


@pytest.mark.parametrize("n", [0, 1, 3, 300])
def test_columns_of_one_value_pack_as_any_other(n):
    """pack_columns takes a column holding one value without a step a row (the echoes' instance,
    player and reason): the same bytes as one step a value, in any order of the columns."""
    strs = {
        "same": ["minecraft:stone"] * n,
        "mixed": [f"s{i % 7}" for i in range(n)],
        "same_again": ["".join(["minecraft:", "stone"])] * n,  # equal, not the same object
        "new_one": ["x"] * n,
        "many": [f"m{i}" for i in range(n)],  # past 255 states: the later columns' indices are <u2
    }
    ints = {"a": list(range(5, 5 + n)), "b": [7] * n}
    data, sha = history.pack_columns(n, ints, strs)
    assert zlib.decompress(data) == _reference_pack(n, ints, strs)
    back = history.unpack_columns(data, sha, ("a", "b"), tuple(strs), "t")
    assert back == {**ints, **strs}


def zlib_head(data: bytes) -> bytes:
    import zlib

    return zlib.decompress(data)[:40]


def test_a_truncated_v2_record_with_a_matching_checksum_is_refused():
    import hashlib
    import zlib

    data, _ = history.pack_rows(ODD_ROWS, history.WRITE_INTS, history.WRITE_STRS)
    raw = zlib.decompress(data)[:-3]  # a column cut short, checksum made to match
    with pytest.raises(McbError) as exc:
        history.unpack_rows(
            zlib.compress(raw),
            hashlib.sha256(raw).hexdigest(),
            history.WRITE_INTS,
            history.WRITE_STRS,
            "packed_writes/op_t",
        )
    assert exc.value.code == ErrorCode.INTERNAL and "malformed" in exc.value.message


def test_write_count_is_exact_before_during_and_after_packing_without_decoding(tmp_path, monkeypatch):
    db = Database(v2_journal(tmp_path))
    op = packable(db)[0]
    n = len(History(db).writes_of(op))
    assert History(db).write_count(op) == n
    rows = [dict(r) for r in db.all(f"SELECT {history.WRITE_COLS} FROM written WHERE op_id=? ORDER BY wid", op)]
    data, sha = history.pack_rows(rows, history.WRITE_INTS, history.WRITE_STRS)
    with db.tx() as c:  # a pass stopped after storing the pack, before deleting the live copies
        c.execute(
            "INSERT INTO packed_writes(op_id, n, lo, hi, x0, y0, z0, x1, y1, z1, data, sha256, packed_ms)"
            " VALUES (?,?,?,?,0,0,0,0,0,0,?,?,0)",
            (op, n, rows[0]["wid"], rows[-1]["wid"], data, sha),
        )
    monkeypatch.setattr(history, "unpack_arrays", lambda *a: pytest.fail("write_count decoded the pack"))
    assert History(db).write_count(op) == n
    with db.tx() as c:
        c.execute("DELETE FROM written WHERE op_id=?", (op,))
    assert History(db).write_count(op) == n
