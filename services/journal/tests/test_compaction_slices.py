"""Issue 33 item 1: compaction returns freed pages in slices, never with a VACUUM that holds the
journal's writes (a VACUUM rewrites the whole file under SQLite's write lock; the journal's own
writes then wait up to their 5 s busy timeout and fail after it)."""

from __future__ import annotations

import sqlite3
import threading
import time

from mcb_journal import history
from mcb_journal.db import AUTO_VACUUM_INCREMENTAL, Database
from mcb_journal.history import compact, pack_operation

ROWS = 60_000


def _journal_with_a_finished_operation(tmp_path) -> Database:
    db = Database(tmp_path / "journal.sqlite")
    with db.tx() as c:
        c.execute(
            "INSERT INTO operations(op_id, project_id, plan_id, plan_hash, idempotency_key, state, created_ms,"
            " updated_ms) VALUES ('op_1', 'default', 'pl', 'h', 'k', 'applied', 1, 1)"
        )
        c.executemany(
            "INSERT INTO written(op_id, x, y, z, before, after, uncertain, at_ms) VALUES"
            " ('op_1', ?, ?, ?, 'minecraft:air', ?, 0, 1)",
            ((i % 100, i // 10_000, (i // 100) % 100, f"minecraft:stone_{i % 7}") for i in range(ROWS)),
        )
    return db


def test_a_new_journal_is_incremental_and_compact_never_vacuums(tmp_path):
    db = _journal_with_a_finished_operation(tmp_path)
    assert db.row("PRAGMA auto_vacuum")[0] == AUTO_VACUUM_INCREMENTAL
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    before = db.path.stat().st_size
    out = compact(db, tmp_path)
    db.conn.set_trace_callback(None)
    assert out["packed_operations"] == 1 and out["rows"]["writes"] == ROWS
    assert not [s for s in statements if s.strip().upper().startswith("VACUUM")], statements
    slices = [s for s in statements if "incremental_vacuum" in s]
    assert len(slices) >= 2, slices  # more free pages than one slice: returned in several transactions
    assert db.row("PRAGMA freelist_count")[0] == 0
    assert db.path.stat().st_size < before / 2, (before, db.path.stat().st_size)


def test_writes_go_on_while_a_compaction_returns_pages(tmp_path, monkeypatch):
    db = _journal_with_a_finished_operation(tmp_path)
    pack_operation(db, "op_1")
    monkeypatch.setattr(history, "VACUUM_SLICE_PAGES", 16)  # many slices: the writer gets between them
    other = Database.attach(db.path)
    worst = 0.0
    writes = 0
    done = threading.Event()

    def compaction() -> None:
        try:
            compact(other, tmp_path)
        finally:
            done.set()

    t = threading.Thread(target=compaction)
    t.start()
    while not done.is_set():
        t0 = time.perf_counter()
        with db.tx() as c:
            c.execute(
                "INSERT INTO meta(key, value) VALUES ('probe', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                (str(writes),),
            )
        worst = max(worst, time.perf_counter() - t0)
        writes += 1
        time.sleep(0.005)  # a busy journal, not a writer that never lets go of the lock
    t.join()
    other.close()
    print(f"\n{writes} writes during the compaction, the slowest {worst * 1000:.1f} ms")
    assert writes >= 3 and worst < 1.0
    assert db.row("PRAGMA freelist_count")[0] == 0


def test_an_older_journal_is_switched_at_open(tmp_path):
    path = tmp_path / "journal.sqlite"
    conn = sqlite3.connect(path)  # made before incremental compaction: auto_vacuum none
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.commit()
    conn.close()
    db = Database(path)
    assert db.row("PRAGMA auto_vacuum")[0] == AUTO_VACUUM_INCREMENTAL
