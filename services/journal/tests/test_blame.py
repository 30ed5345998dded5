"""Issue 32 item 3: block history (blame.py) over a real journal database: who or what changed each
position (player name, environment cause, our operation and who asked), newest first, paged within
the byte budget, filtered, the caller's project only, packed echoes included, older rows readable."""

from __future__ import annotations

import sqlite3

import pytest
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3
from mcb_journal import blame
from mcb_journal.db import Database
from mcb_journal.history import EVENT_INTS, EVENT_STRS, pack_rows
from mcb_journal.projects import Caller

AREA = Box(Vec3(-100, -64, -100), Vec3(100, 319, 100))
BOX = Box(Vec3(0, 60, 0), Vec3(9, 70, 9))
ME = Caller("agent", "p1", "owner")


@pytest.fixture
def db(tmp_path):
    d = Database(tmp_path / "journal.sqlite")
    yield d
    d.close()


def event(db, x, source, *, pid="", name="", cause="", op="", at=1000, after="minecraft:stone"):
    with db.tx() as c:
        return c.execute(
            "INSERT INTO observed(kind, host_instance, host_seq, x, y, z, before, after, source, player_id,"
            " op_id, at_ms, player_name, cause) VALUES ('event','h',0,?,64,0,'minecraft:air',?,?,?,?,?,?,?)",
            (x, after, source, pid, op, at, name, cause),
        ).lastrowid


def operation(db, op, project, asked_by):
    with db.tx() as c:
        c.execute(
            "INSERT INTO operations(op_id, project_id, plan_id, plan_hash, idempotency_key, state, created_ms,"
            " updated_ms) VALUES (?,?,?,?,?,?,?,?)",
            (op, project, "pl", "h", op, "applied", 0, 0),
        )
        c.execute("INSERT INTO op_extra(op_id, player_id) VALUES (?,?)", (op, asked_by))


def all_pages(db, q, latest=1 << 40):
    out, cursor = [], ""
    while True:
        doc = blame.page(db, ME, AREA, blame.Query(**(q | {"cursor": cursor})), latest)
        out.append(doc)
        if doc["complete"]:
            return out
        cursor = doc["next_cursor"]


def test_each_change_is_attributed_newest_first(db):
    operation(db, "op_mine", "p1", "alice-uuid")
    operation(db, "op_other", "p2", "bob-uuid")
    event(db, 1, "player", pid="alice-uuid", name="Alice")
    event(db, 2, "environment", cause="explosion")
    event(db, 3, "ours", op="op_mine")
    event(db, 4, "environment")  # a host before issue 32: no cause
    event(db, 5, "ours", op="op_other")
    event(db, 50, "player", pid="x", name="Outside")  # outside the box
    doc = blame.page(db, ME, AREA, blame.Query(BOX), 1 << 40)
    assert doc["complete"] and doc["next_cursor"] == ""
    got = [
        (e["pos"]["x"], e["source"], e.get("player_name"), e.get("cause"), e.get("operation_id"), e.get("asked_by"))
        for e in doc["entries"]
    ]
    assert got == [
        (5, "ours", None, None, None, None),  # another project's operation: no id
        (4, "environment", None, "other", None, None),
        (3, "ours", None, None, "op_mine", "alice-uuid"),
        (2, "environment", None, "explosion", None, None),
        (1, "player", "Alice", None, None, None),
    ]
    assert doc["entries"][-1]["player_id"] == "alice-uuid" and doc["entries"][-1]["at_millis"] == 1000


def test_pages_cover_every_change_once_within_the_byte_budget(db):
    for i in range(300):
        event(db, i % 10, "player", pid="u", name="Griefer", after=f"minecraft:oak_sign[rotation={i % 16}]")
    got = all_pages(db, {"box": BOX})
    seen = [e for p in got for e in p["entries"]]
    assert len(seen) == 300 and len(got) > 300 // blame.PAGE_ENTRIES  # the bytes cut the pages
    for p in got:
        assert len(blame.dumps(p).encode()) <= blame.PAGE_BYTES
    assert [e["after"] for e in seen] == [f"minecraft:oak_sign[rotation={i % 16}]" for i in reversed(range(300))]
    small = all_pages(db, {"box": BOX, "limit": 7, "max_bytes": 32768})
    assert [len(p["entries"]) for p in small[:2]] == [7, 7]


def test_filters_by_player_name_or_id_cause_and_time(db):
    event(db, 1, "player", pid="alice-uuid", name="Alice", at=100)
    event(db, 2, "player", pid="bob-uuid", name="Bob", at=200)
    event(db, 3, "environment", cause="fire", at=300)
    event(db, 4, "environment", at=400)
    event(db, 5, "environment", cause="other", at=500)

    def xs(**q):
        return [e["pos"]["x"] for p in all_pages(db, {"box": BOX} | q) for e in p["entries"]]

    assert xs(player="alice") == [1] and xs(player="bob-uuid") == [2]
    assert xs(cause="fire") == [3] and xs(cause="other") == [5, 4]
    assert xs(since_ms=300) == [5, 4, 3]


def test_packed_echoes_of_our_operations_are_listed(db):
    operation(db, "op_packed", "p1", "")
    rows = [
        {
            "oid": 10 + i,
            "host_seq": i,
            "x": i,
            "y": 64,
            "z": 0,
            "at_ms": 5000,
            "host_instance": "h",
            "before": "minecraft:air",
            "after": "minecraft:glass",
            "player_id": "",
            "reason": "",
        }
        for i in range(3)
    ]
    data, sha = pack_rows(rows, EVENT_INTS, EVENT_STRS)
    with db.tx() as c:
        c.execute(
            "INSERT INTO packed_events(op_id, n, lo, hi, x0, y0, z0, x1, y1, z1, data, sha256, packed_ms)"
            " VALUES ('op_packed', 3, 10, 12, 0, 64, 0, 2, 64, 0, ?, ?, 0)",
            (data, sha),
        )
    event(db, 7, "player", pid="u", name="Alice")  # oid 1: older than the packed echoes
    doc = blame.page(db, ME, AREA, blame.Query(BOX), 1 << 40)
    assert [(e["pos"]["x"], e["source"], e.get("operation_id")) for e in doc["entries"]] == [
        (2, "ours", "op_packed"),
        (1, "ours", "op_packed"),
        (0, "ours", "op_packed"),
        (7, "player", None),
    ]


def test_refusals_name_what_to_change(db):
    cases = [
        ({"box": Box(Vec3(0, 0, 0), Vec3(200, 1, 1))}, ErrorCode.OUT_OF_BOUNDS, "outside the project area"),
        ({"box": BOX, "cause": "lightning"}, ErrorCode.INVALID_REQUEST, "explosion, fire"),
        ({"box": BOX, "player": "a", "cause": "fire"}, ErrorCode.INVALID_REQUEST, "not both"),
        ({"box": BOX, "limit": 101}, ErrorCode.INVALID_REQUEST, "at most 100"),
        ({"box": BOX, "max_bytes": 10}, ErrorCode.INVALID_REQUEST, "1024..32768"),
        ({"box": BOX, "cursor": "nonsense"}, ErrorCode.INVALID_REQUEST, "start with an empty one"),
        (
            {"box": BOX, "player": "a", "cursor": f"rh1.{blame.Query(BOX).key()}.5"},
            ErrorCode.INVALID_REQUEST,
            "other filters",
        ),
    ]
    for q, code, text in cases:
        with pytest.raises(McbError) as exc:
            blame.page(db, ME, AREA, blame.Query(**q), 1 << 40)
        assert exc.value.code == code and text in exc.value.message, q


def test_a_gap_in_what_a_page_covers_is_said(db):
    event(db, 1, "player", pid="u", name="A")
    with db.tx() as c:
        c.execute("INSERT INTO observed(kind, host_instance, at_ms, reason) VALUES ('gap','h2',0,'host restarted')")
    event(db, 2, "player", pid="u", name="A")
    assert "host restarted" in blame.page(db, ME, AREA, blame.Query(BOX), 1 << 40)["note"]
    newest_only = blame.page(db, ME, AREA, blame.Query(BOX, limit=1), 1 << 40)
    assert "note" not in newest_only  # the gap is older than the one change listed


def test_a_journal_from_before_names_and_causes_gets_the_columns(tmp_path):
    path = tmp_path / "old.sqlite"
    c = sqlite3.connect(path)
    c.executescript("""CREATE TABLE observed (oid INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,
      host_instance TEXT NOT NULL, host_seq INTEGER NOT NULL DEFAULT 0, x INTEGER, y INTEGER, z INTEGER,
      before TEXT, after TEXT, source TEXT, player_id TEXT, op_id TEXT, at_ms INTEGER NOT NULL,
      reason TEXT NOT NULL DEFAULT '');
      INSERT INTO observed(kind, host_instance, x, y, z, before, after, source, player_id, op_id, at_ms)
        VALUES ('event', 'h', 1, 64, 1, 'minecraft:air', 'minecraft:dirt', 'environment', '', '', 9);""")
    c.commit()
    c.close()
    db = Database(path)
    try:
        doc = blame.page(db, ME, AREA, blame.Query(BOX), 1 << 40)
        assert [(e["source"], e["cause"], e["after"]) for e in doc["entries"]] == [
            ("environment", "other", "minecraft:dirt")
        ]
    finally:
        db.close()
