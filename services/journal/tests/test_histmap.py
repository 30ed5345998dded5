"""Issue 32 item 3 (the dashboard's map): histmap.py over a real journal database — the newest
change of each column up to a time (any y of the box), one legend entry per player / cause /
operation, packed echoes included, another project's operation without its id, bounds refused."""

from __future__ import annotations

import pytest
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3
from mcb_journal import histmap
from mcb_journal.db import Database
from mcb_journal.history import EVENT_INTS, EVENT_STRS, pack_rows
from mcb_journal.projects import Caller

AREA = Box(Vec3(-300, -64, -300), Vec3(300, 319, 300))
BOX = Box(Vec3(0, 60, 0), Vec3(9, 70, 9))
ME = Caller("agent", "p1", "owner")


@pytest.fixture
def db(tmp_path):
    d = Database(tmp_path / "journal.sqlite")
    yield d
    d.close()


def ev(db, x, y, z, source, at, *, pid="", name="", cause="", op=""):
    with db.tx() as c:
        return c.execute(
            "INSERT INTO observed(kind, host_instance, host_seq, x, y, z, before, after, source, player_id,"
            " op_id, at_ms, player_name, cause) VALUES ('event','h',0,?,?,?,'minecraft:air','minecraft:stone',"
            "?,?,?,?,?,?)",
            (x, y, z, source, pid, op, at, name, cause),
        ).lastrowid


def operation(db, op, project):
    with db.tx() as c:
        c.execute(
            "INSERT INTO operations(op_id, project_id, plan_id, plan_hash, idempotency_key, state, created_ms,"
            " updated_ms) VALUES (?,?,?,?,?,?,?,?)",
            (op, project, "pl", "h", op, "applied", 0, 0),
        )


def cols(doc):
    legend = doc["legend"]
    out = {}
    for x, z, w, at in zip(doc["x"], doc["z"], doc["who"], doc["at_millis"], strict=True):
        entry = legend[w]
        out[(x, z)] = (entry["source"], entry.get("player_name") or entry.get("cause") or entry.get("operation_id"), at)
    return out


def test_each_column_shows_its_newest_change_up_to_the_time(db):
    operation(db, "op_a", "p1")
    ev(db, 1, 64, 1, "player", 100, pid="u-1", name="Alex")
    ev(db, 1, 70, 1, "environment", 200, cause="explosion")  # same column, higher up, later
    ev(db, 2, 64, 2, "ours", 300, op="op_a")
    ev(db, 3, 64, 3, "environment", 150)  # no cause from an older host: other
    ev(db, 4, 59, 4, "player", 150, pid="u-2", name="Below")  # below the box: not on the map
    ev(db, 20, 64, 1, "player", 150, pid="u-3", name="Out")  # outside the box
    doc = histmap.build(db, ME, AREA, BOX, 0, 1 << 40)
    assert cols(doc) == {
        (1, 1): ("environment", "explosion", 200),
        (2, 2): ("ours", "op_a", 300),
        (3, 3): ("environment", "other", 150),
    }
    assert (doc["first_millis"], doc["last_millis"]) == (100, 300)
    # as of 250: the operation is not there yet; as of 199 the explosion neither
    assert cols(histmap.build(db, ME, AREA, BOX, 250, 1 << 40))[(1, 1)] == ("environment", "explosion", 200)
    assert (2, 2) not in cols(histmap.build(db, ME, AREA, BOX, 250, 1 << 40))
    early = histmap.build(db, ME, AREA, BOX, 199, 1 << 40)
    assert cols(early) == {(1, 1): ("player", "Alex", 100), (3, 3): ("environment", "other", 150)}
    assert [e["source"] for e in early["legend"]] == ["player", "environment"]
    assert histmap.build(db, ME, AREA, BOX, 99, 1 << 40)["x"] == []


def test_one_legend_entry_per_player_cause_and_operation_with_its_column_count(db):
    operation(db, "op_a", "p1")
    for x in range(3):
        ev(db, x, 64, 0, "player", 10 + x, pid="u-1", name="Alex")
    ev(db, 5, 64, 5, "player", 20, pid="u-1", name="")  # the same player, no name this time
    ev(db, 6, 64, 6, "player", 20, pid="u-9", name="Sam")
    ev(db, 7, 64, 7, "ours", 30, op="op_a")
    ev(db, 8, 64, 8, "ours", 30, op="op_a")
    legend = histmap.build(db, ME, AREA, BOX, 0, 1 << 40)["legend"]
    got = sorted((e["source"], e.get("player_name") or e.get("operation_id"), e["columns"]) for e in legend)
    assert got == [("ours", "op_a", 2), ("player", "Alex", 4), ("player", "Sam", 1)]


def test_packed_echoes_count_and_another_projects_operation_has_no_id(db):
    operation(db, "op_mine", "p1")
    operation(db, "op_theirs", "p2")
    ev(db, 1, 64, 1, "player", 10, pid="u", name="A")
    rows = [
        {
            "oid": 50,
            "host_seq": 0,
            "x": 1,
            "y": 65,
            "z": 1,
            "at_ms": 40,
            "host_instance": "h",
            "before": "minecraft:air",
            "after": "minecraft:dirt",
            "player_id": "",
            "reason": "",
        }
    ]
    data, sha = pack_rows(rows, EVENT_INTS, EVENT_STRS)
    with db.tx() as c:
        c.execute(
            "INSERT INTO packed_events(op_id, n, lo, hi, x0, y0, z0, x1, y1, z1, data, sha256, packed_ms)"
            " VALUES ('op_mine',1,50,50,1,65,1,1,65,1,?,?,0)",
            (data, sha),
        )
    ev(db, 2, 64, 2, "ours", 60, op="op_theirs")
    doc = histmap.build(db, ME, AREA, BOX, 0, 1 << 40)
    assert cols(doc) == {(1, 1): ("ours", "op_mine", 40), (2, 2): ("ours", "", 60)}
    assert (doc["first_millis"], doc["last_millis"]) == (10, 60)
    assert cols(histmap.build(db, ME, AREA, BOX, 39, 1 << 40))[(1, 1)] == ("player", "A", 10)


def test_outside_the_area_or_larger_than_256_columns_is_refused(db):
    for box, code, text in [
        (Box(Vec3(0, 60, 0), Vec3(400, 60, 0)), ErrorCode.OUT_OF_BOUNDS, "outside the project area"),
        (Box(Vec3(0, 60, 0), Vec3(256, 60, 3)), ErrorCode.INVALID_REQUEST, "at most 256 x 256"),
    ]:
        with pytest.raises(McbError) as exc:
            histmap.build(db, ME, AREA, box, 0, 1 << 40)
        assert exc.value.code == code and text in exc.value.message
    assert histmap.build(db, ME, AREA, Box(Vec3(0, 60, 0), Vec3(255, 60, 255)), 0, 1 << 40)["x"] == []


def test_a_gap_after_the_oldest_change_shown_is_said(db):
    def gap(reason):
        with db.tx() as c:
            c.execute("INSERT INTO observed(kind, host_instance, at_ms, reason) VALUES ('gap','h2',0,?)", (reason,))

    gap("observation started")
    ev(db, 1, 64, 1, "player", 10, pid="u", name="A")
    assert "note" not in histmap.build(db, ME, AREA, BOX, 0, 1 << 40)
    gap("host restarted")
    ev(db, 2, 64, 2, "player", 20, pid="u", name="A")
    assert "host restarted" in histmap.build(db, ME, AREA, BOX, 0, 1 << 40)["note"]
