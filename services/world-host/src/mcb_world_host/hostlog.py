"""The host's own durable batch log: ``<world>/mcb/host.sqlite`` (WAL, synchronous=FULL).

One row per batch id:

    batch_id      primary key (the caller's idempotency key for one batch)
    content_hash  sha256 of the batch's content: same id + other content -> invalid_request
    state         begun | complete | rolled_back
    undo_json     [[x, y, z, before, after], ...] of every block the batch will change,
                  committed (fsynced) *before* any region file is touched
    result_json   the answer given (for idempotent replay), set when complete

One row per durable host setting (``host_state``): ``paused`` -> the pause reason while writes
are paused (committed before ``pause`` answers, so a crash or restart keeps writes paused: "the
host never resumes by itself"; removed by ``resume``).

On open, every ``begun`` row is a batch that was interrupted between its intent and its
completion; the world rolls it back from ``undo_json`` (the host is the only writer, so the
blocks hold either ``before`` or ``after``) and marks it ``rolled_back``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from mcb_common.files import make_dirs

SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    batch_id      TEXT PRIMARY KEY,
    content_hash  TEXT NOT NULL,
    operation_id  TEXT NOT NULL DEFAULT '',
    state         TEXT NOT NULL CHECK (state IN ('begun', 'complete', 'rolled_back')),
    undo_json     TEXT NOT NULL DEFAULT '[]',
    result_json   TEXT,
    begun_ms      INTEGER NOT NULL,
    finished_ms   INTEGER
);
CREATE INDEX IF NOT EXISTS batches_state ON batches(state);
CREATE TABLE IF NOT EXISTS host_state (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
"""

Undo = list[tuple[int, int, int, str, str]]


@dataclass
class BatchRow:
    batch_id: str
    content_hash: str
    operation_id: str
    state: str
    undo: Undo
    result: dict | None


class HostLog:
    def __init__(self, path: Path):
        make_dirs(path.parent)  # the batch log's folder survives a crash like the log
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            try:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                self._db.close()

    def _row(self, r: tuple) -> BatchRow:
        return BatchRow(
            batch_id=r[0], content_hash=r[1], operation_id=r[2], state=r[3],
            undo=[tuple(u) for u in json.loads(r[4] or "[]")],
            result=json.loads(r[5]) if r[5] else None,
        )

    def get(self, batch_id: str) -> BatchRow | None:
        with self._lock:
            r = self._db.execute(
                "SELECT batch_id, content_hash, operation_id, state, undo_json, result_json FROM batches WHERE batch_id=?",
                (batch_id,),
            ).fetchone()
        return self._row(r) if r else None

    def begin(self, batch_id: str, content_hash: str, operation_id: str, undo: Undo) -> None:
        """Durably record the intent (before/after of every block) before any write."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("DELETE FROM batches WHERE batch_id=? AND state='rolled_back'", (batch_id,))
                self._db.execute(
                    "INSERT INTO batches(batch_id, content_hash, operation_id, state, undo_json, begun_ms) VALUES (?,?,?,?,?,?)",
                    (batch_id, content_hash, operation_id, "begun", json.dumps(undo, separators=(",", ":")), _now()),
                )
                self._db.execute("COMMIT")
            except BaseException:
                try:
                    self._db.execute("ROLLBACK")
                except sqlite3.OperationalError:
                    pass  # SQLite already rolled back (e.g. after SQLITE_FULL): keep the first error
                raise

    def complete(self, batch_id: str, result: dict) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE batches SET state='complete', result_json=?, finished_ms=? WHERE batch_id=?",
                (json.dumps(result, separators=(",", ":")), _now(), batch_id),
            )

    def record_answer(self, batch_id: str, content_hash: str, operation_id: str, result: dict) -> None:
        """A batch that wrote nothing (conflict): its answer is stored for replay."""
        with self._lock:
            self._db.execute("DELETE FROM batches WHERE batch_id=? AND state='rolled_back'", (batch_id,))
            self._db.execute(
                "INSERT INTO batches(batch_id, content_hash, operation_id, state, result_json, begun_ms, finished_ms) VALUES (?,?,?,?,?,?,?)",
                (batch_id, content_hash, operation_id, "complete", json.dumps(result, separators=(",", ":")), _now(), _now()),
            )

    def mark_rolled_back(self, batch_id: str) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE batches SET state='rolled_back', finished_ms=? WHERE batch_id=? AND state='begun'",
                (_now(), batch_id),
            )

    def pending(self) -> list[BatchRow]:
        with self._lock:
            rows = self._db.execute(
                "SELECT batch_id, content_hash, operation_id, state, undo_json, result_json FROM batches WHERE state='begun' ORDER BY begun_ms"
            ).fetchall()
        return [self._row(r) for r in rows]

    def pause_reason(self) -> str | None:
        """The reason writes were paused with, or None when they are not paused."""
        with self._lock:
            r = self._db.execute("SELECT value FROM host_state WHERE key='paused'").fetchone()
        return r[0] if r else None

    def set_paused(self, reason: str | None) -> None:
        """Durably pause (``reason``) or resume (None): committed (fsynced) when this returns."""
        with self._lock:
            if reason is None:
                self._db.execute("DELETE FROM host_state WHERE key='paused'")
            else:
                self._db.execute("INSERT INTO host_state(key, value) VALUES ('paused', ?) "
                                 "ON CONFLICT(key) DO UPDATE SET value=excluded.value", (reason,))

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._db.execute("SELECT state, COUNT(*) FROM batches GROUP BY state").fetchall())


def _now() -> int:
    return int(time.time() * 1000)
