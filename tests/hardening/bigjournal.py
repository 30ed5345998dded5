"""A journal holding one finished operation of a million blocks, for the packing measurements
(test_journal_pack_latency.py, bench/hostile_health.py)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from mcb_journal.db import Database


def seed_finished_operation(path: Path, op_id: str, blocks: int, project_id: str = "default") -> None:
    """One ``applied`` operation of ``blocks`` written blocks and their observed echoes, written
    straight into the journal's SQLite file (the journal not running), not due for packing until
    ``make_due``."""
    db = Database(path)
    db.close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous=OFF")
    now = int(time.time() * 1000)
    side = 100
    states = ["minecraft:stone", "minecraft:oak_planks", "minecraft:glass", "minecraft:stone_bricks"]

    def pos(i: int) -> tuple[int, int, int]:
        return i % side, 64 + (i // (side * side)) % 256, (i // side) % side

    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO operations(op_id, project_id, plan_id, plan_hash, idempotency_key, state, planned,"
        " written, created_ms, updated_ms) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (op_id, project_id, "plan_big", "0" * 64, "big-" + op_id, "applied", blocks, blocks, now, now + 86_400_000),
    )  # due only after make_due
    conn.executemany(
        "INSERT INTO written(op_id, x, y, z, before, after, uncertain, at_ms) VALUES (?,?,?,?,?,?,0,?)",
        ((op_id, *pos(i), "minecraft:air", states[i % 4], now + i // 512) for i in range(blocks)),
    )
    conn.executemany(
        "INSERT INTO observed(kind, host_instance, host_seq, x, y, z, before, after, source, player_id,"
        " op_id, at_ms) VALUES ('event','host-1',?,?,?,?,?,?,'ours','',?,?)",
        ((i + 1, *pos(i), "minecraft:air", states[i % 4], op_id, now + i // 512) for i in range(blocks)),
    )
    conn.execute("COMMIT")
    conn.close()


def make_due(path: Path, op_id: str) -> None:
    """Make the operation due for the journal's next automatic packing pass."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.execute("UPDATE operations SET updated_ms=0 WHERE op_id=?", (op_id,))
    conn.close()


def live_rows(path: Path, op_id: str) -> tuple[int, bool]:
    """(live written rows of the operation, whether it has a packed record), read-only."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        n = conn.execute("SELECT COUNT(*) FROM written WHERE op_id=?", (op_id,)).fetchone()[0]
        packed = conn.execute("SELECT COUNT(*) FROM packed_writes WHERE op_id=?", (op_id,)).fetchone()[0] == 1
        return n, packed
    finally:
        conn.close()
