import sqlite3

import pytest
from mcb_common.errors import McbError
from mcb_journal.db import SCHEMA_VERSION, Database, is_disk_full


def test_corrupt_database_is_backed_up_and_refused(tmp_path):
    path = tmp_path / "journal.sqlite"
    db = Database(path)
    with db.tx() as c:
        for i in range(200):
            c.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (f"k{i}", "x" * 500))
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    raw = bytearray(path.read_bytes())
    for i in range(4096 * 2, min(len(raw), 4096 * 6)):
        raw[i] = 0xA5
    path.write_bytes(bytes(raw))
    with pytest.raises(SystemExit) as exc:
        Database(path)
    assert "integrity" in str(exc.value)
    assert list(tmp_path.glob("journal.sqlite.corrupt-*"))


def test_disk_full_rolls_back_with_a_clear_error(tmp_path):
    db = Database(tmp_path / "j.sqlite")
    with pytest.raises(McbError) as exc:
        with db.tx() as c:
            c.execute("INSERT INTO meta(key, value) VALUES ('a', '1')")
            raise sqlite3.OperationalError("database or disk is full")
    assert exc.value.code == "unavailable" and "disk is full" in exc.value.message
    assert db.one("SELECT * FROM meta WHERE key='a'") is None  # nothing half-written
    assert is_disk_full(OSError(28, "No space left on device"))


def test_v1_database_upgrades_in_place(tmp_path):
    path = tmp_path / "j.sqlite"
    Database(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value='1' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    db = Database(path)
    assert db.one("SELECT value FROM meta WHERE key='schema_version'")["value"] == str(SCHEMA_VERSION)


def test_row_is_for_queries_that_always_have_one(tmp_path):
    db = Database(tmp_path / "j.sqlite")
    assert db.row("SELECT COUNT(*) AS n FROM operations")["n"] == 0
    assert db.one("SELECT op_id FROM operations WHERE op_id=?", "nope") is None
    with pytest.raises(LookupError, match="no row"):  # a broken invariant is loud, never a None indexed later
        db.row("SELECT op_id FROM operations WHERE op_id=?", "nope")
    db.close()
