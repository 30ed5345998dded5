"""The journal's SQLite database (docs/journal-format.md describes it before this code).

WAL mode with ``synchronous=FULL``: a committed transaction is on disk before ``commit``
returns, which is what "persist the intent before writing the world" relies on.
The journal is the single writer; besides the event loop's connection, two threads have their
own (``Database.sibling``): the executor's writer and the observer's page recorder.
"""

from __future__ import annotations

import errno
import json
import logging
import shutil
import sqlite3
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from mcb_common.errors import ErrorCode, McbError

log = logging.getLogger("mcb.journal.db")

SCHEMA_VERSION = 5
AUTO_VACUUM_INCREMENTAL = 2  # PRAGMA auto_vacuum: 0 none, 1 full, 2 incremental

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS projects (
  project_id TEXT PRIMARY KEY, name TEXT NOT NULL, owner_player_id TEXT NOT NULL,
  area_json TEXT NOT NULL, world_uuid TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS plans (
  plan_id TEXT PRIMARY KEY, project_id TEXT NOT NULL, plan_hash TEXT NOT NULL,
  blob_sha256 TEXT NOT NULL, world_uuid TEXT NOT NULL, world_epoch INTEGER NOT NULL,
  created_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL,
  changed INTEGER NOT NULL, already INTEGER NOT NULL, total INTEGER NOT NULL,
  summary_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS plan_origins (
  plan_id TEXT PRIMARY KEY REFERENCES plans(plan_id),
  undo_of TEXT, regenerates TEXT, design_sha TEXT, rollback_of_json TEXT
);
CREATE TABLE IF NOT EXISTS operations (
  op_id TEXT PRIMARY KEY, project_id TEXT NOT NULL, plan_id TEXT NOT NULL,
  plan_hash TEXT NOT NULL, idempotency_key TEXT NOT NULL, state TEXT NOT NULL,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  planned INTEGER NOT NULL DEFAULT 0, written INTEGER NOT NULL DEFAULT 0,
  already INTEGER NOT NULL DEFAULT 0, conflicts INTEGER NOT NULL DEFAULT 0,
  batches_total INTEGER NOT NULL DEFAULT 0, batches_done INTEGER NOT NULL DEFAULT 0,
  message TEXT NOT NULL DEFAULT '', error_json TEXT NOT NULL DEFAULT '',
  conflict_samples_json TEXT NOT NULL DEFAULT '[]',
  written_samples_json TEXT NOT NULL DEFAULT '[]',
  created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS operations_idempotency
  ON operations (project_id, idempotency_key);
CREATE TABLE IF NOT EXISTS batches (
  op_id TEXT NOT NULL, seq INTEGER NOT NULL, batch_id TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL,               -- intent | done | conflict | aborted
  entries BLOB NOT NULL,             -- zlib(JSON [[x,y,z,expected,desired], ...])
  entries_sha256 TEXT NOT NULL,
  result_json TEXT NOT NULL DEFAULT '',
  intent_ms INTEGER NOT NULL, done_ms INTEGER,
  PRIMARY KEY (op_id, seq)
);
-- v2: what we actually wrote (undo, parts, recovery masks), what the world host observed,
-- parts, admin decisions.
CREATE TABLE IF NOT EXISTS written (
  wid INTEGER PRIMARY KEY AUTOINCREMENT, op_id TEXT NOT NULL,
  x INTEGER NOT NULL, y INTEGER NOT NULL, z INTEGER NOT NULL,
  before TEXT NOT NULL, after TEXT NOT NULL,
  uncertain INTEGER NOT NULL DEFAULT 0,   -- 1: potential write of an abandoned batch
  at_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS written_pos ON written (x, z, y);
CREATE INDEX IF NOT EXISTS written_op ON written (op_id);
CREATE TABLE IF NOT EXISTS observed (
  oid INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,                      -- event | gap
  host_instance TEXT NOT NULL, host_seq INTEGER NOT NULL DEFAULT 0,
  x INTEGER, y INTEGER, z INTEGER, before TEXT, after TEXT,
  source TEXT, player_id TEXT, op_id TEXT, at_ms INTEGER NOT NULL, reason TEXT NOT NULL DEFAULT '',
  player_name TEXT NOT NULL DEFAULT '', cause TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS observed_pos ON observed (x, z, y);
-- the gaps alone (a few rows): the executor looks up the latest before every batch
CREATE INDEX IF NOT EXISTS observed_gaps ON observed (oid) WHERE kind = 'gap';
-- our own echoes as rows (journals from before schema 5; none since): packing asks which
-- operations have any every few seconds, without scanning the players' events
CREATE INDEX IF NOT EXISTS observed_ours ON observed (op_id) WHERE kind='event' AND source='ours';
CREATE TABLE IF NOT EXISTS op_extra (
  op_id TEXT PRIMARY KEY, player_id TEXT NOT NULL DEFAULT '', observed_at_start INTEGER NOT NULL DEFAULT 0,
  undo_forbidden INTEGER NOT NULL DEFAULT 0,
  prompt TEXT NOT NULL DEFAULT ''  -- the chat request that started it (issue 32), else ''
);
CREATE TABLE IF NOT EXISTS op_captures (
  op_id TEXT PRIMARY KEY, before_capture_id TEXT NOT NULL, at_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS op_notices (
  op_id TEXT NOT NULL, at_ms INTEGER NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL,
  PRIMARY KEY (op_id, kind)
);
CREATE TABLE IF NOT EXISTS parts (
  part_id TEXT PRIMARY KEY, project_id TEXT NOT NULL, name TEXT NOT NULL, op_id TEXT NOT NULL,
  protected INTEGER NOT NULL DEFAULT 0, bounds_json TEXT NOT NULL, count INTEGER NOT NULL,
  mask_sha256 TEXT NOT NULL, observed_at_define INTEGER NOT NULL, created_ms INTEGER NOT NULL,
  UNIQUE (project_id, name)
);
CREATE TABLE IF NOT EXISTS decisions (
  op_id TEXT PRIMARY KEY, decision TEXT NOT NULL, digest TEXT NOT NULL, decided_ms INTEGER NOT NULL,
  principal TEXT NOT NULL
);
-- v3: terminal operations' written rows and our observed echoes, packed per operation
-- (history.py; docs/journal-format.md §5). lo/hi: the wid (oid) range; x0..z1: the bounds.
CREATE TABLE IF NOT EXISTS packed_writes (
  op_id TEXT PRIMARY KEY, n INTEGER NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL,
  x0 INTEGER NOT NULL, y0 INTEGER NOT NULL, z0 INTEGER NOT NULL,
  x1 INTEGER NOT NULL, y1 INTEGER NOT NULL, z1 INTEGER NOT NULL,
  data BLOB NOT NULL, sha256 TEXT NOT NULL, packed_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS packed_events (
  op_id TEXT PRIMARY KEY, n INTEGER NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL,
  x0 INTEGER NOT NULL, y0 INTEGER NOT NULL, z0 INTEGER NOT NULL,
  x1 INTEGER NOT NULL, y1 INTEGER NOT NULL, z1 INTEGER NOT NULL,
  data BLOB NOT NULL, sha256 TEXT NOT NULL, packed_ms INTEGER NOT NULL
);
-- v5: the writes of one completed batch, packed in the batch's completion transaction (one
-- record instead of a ``written`` row per block; history.py, docs/journal-format.md §6). lo..hi:
-- the batch's wid range, taken from written's AUTOINCREMENT sequence; x0..z1: the bounds.
-- Packing the finished operation merges them into its packed_writes record and drops them.
CREATE TABLE IF NOT EXISTS batch_writes (
  op_id TEXT NOT NULL, seq INTEGER NOT NULL, n INTEGER NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL,
  x0 INTEGER NOT NULL, y0 INTEGER NOT NULL, z0 INTEGER NOT NULL,
  x1 INTEGER NOT NULL, y1 INTEGER NOT NULL, z1 INTEGER NOT NULL,
  data BLOB NOT NULL, sha256 TEXT NOT NULL,
  PRIMARY KEY (op_id, seq)
);
-- v5: the world host's echoes of one operation's own writes (source 'ours', no player name or
-- cause) recorded by one observer transaction, packed as one record instead of an observed row
-- each; lo..hi: their oids (other rows of the transaction are numbered in between).
CREATE TABLE IF NOT EXISTS batch_events (
  op_id TEXT NOT NULL, n INTEGER NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL,
  x0 INTEGER NOT NULL, y0 INTEGER NOT NULL, z0 INTEGER NOT NULL,
  x1 INTEGER NOT NULL, y1 INTEGER NOT NULL, z1 INTEGER NOT NULL,
  data BLOB NOT NULL, sha256 TEXT NOT NULL,
  PRIMARY KEY (op_id, lo)
);
"""


def _settings(conn: sqlite3.Connection) -> None:
    """Per-connection settings (WAL itself is a property of the file)."""
    conn.execute("PRAGMA synchronous=FULL")
    # After a checkpoint the WAL file is cut back to 1 MiB instead of keeping its peak size.
    conn.execute("PRAGMA journal_size_limit=1048576")
    conn.execute("PRAGMA foreign_keys=ON")


ORIGIN_KEYS = ("undo_of", "regenerates", "design_sha", "rollback_of")


def _move_plan_origins(c: sqlite3.Connection) -> None:
    """Schema v3 -> v4: the keys undo.py, parts.py and rollback.py added to ``plans.summary_json`` after the
    plan's insert become the plan's ``plan_origins`` row, and leave the summary."""
    for r in c.execute("SELECT plan_id, summary_json FROM plans").fetchall():  # once, at the upgrade
        doc = json.loads(r["summary_json"] or "{}")
        origin = {k: doc.pop(k, None) for k in ORIGIN_KEYS}
        if not any(origin.values()):
            continue
        rollback_of = json.dumps(origin["rollback_of"]) if origin["rollback_of"] else None
        c.execute(
            "INSERT OR IGNORE INTO plan_origins(plan_id, undo_of, regenerates, design_sha, rollback_of_json)"
            " VALUES (?,?,?,?,?)",
            (r["plan_id"], origin["undo_of"], origin["regenerates"], origin["design_sha"], rollback_of),
        )
        c.execute("UPDATE plans SET summary_json=? WHERE plan_id=?", (json.dumps(doc), r["plan_id"]))


def now_ms() -> int:
    return int(time.time() * 1000)


class Database:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        try:
            check = self.conn.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.DatabaseError as err:  # a malformed header or page
            check = str(err)
        if check != "ok":
            self.conn.close()
            backup = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
            shutil.copy2(path, backup)
            raise SystemExit(
                f"journal database {path} failed its integrity check ({check}); a copy is at {backup}. "
                "Restore a backup or move the file away to start a new journal (operations in it are lost)."
            )
        new = self.conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0
        if new:  # before the first table: freed pages can then be returned in slices (history.compact)
            self.conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        self.conn.execute("PRAGMA journal_mode=WAL")
        _settings(self.conn)
        if not new and self.conn.execute("PRAGMA auto_vacuum").fetchone()[0] != AUTO_VACUUM_INCREMENTAL:
            self._convert_to_incremental()
        self.conn.executescript(SCHEMA)
        self._add_columns()
        row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            self.conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        elif int(row["value"]) in (1, 2, 3, 4):
            # v1 -> v2 -> v3 only add tables (created above by IF NOT EXISTS); a v2 journal's
            # live rows of finished operations are packed by the executor's first pass.
            # v3 -> v4: what undo and regeneration wrote into a plan's summary_json after its insert
            # moves to plan_origins (the summary keeps what prepare wrote).
            # v4 -> v5 adds batch_writes and batch_events only: a v4 journal's live rows stay valid and
            # are read with the per-batch records (history.History).
            with self.tx() as c:
                if int(row["value"]) < 4:
                    _move_plan_origins(c)
                c.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
        elif int(row["value"]) != SCHEMA_VERSION:
            raise SystemExit(f"journal database {path} has schema {row['value']}, this build expects {SCHEMA_VERSION}")

    def _add_columns(self) -> None:
        """Columns added to existing tables since v3 (issue 32: who and what changed a block); a
        journal made before them gets them empty, so its older events read as before."""
        have = {r["name"] for r in self.conn.execute("PRAGMA table_info(observed)")}
        for col in ("player_name", "cause"):
            if col not in have:
                self.conn.execute(f"ALTER TABLE observed ADD COLUMN {col} TEXT NOT NULL DEFAULT ''")
        if "prompt" not in {r["name"] for r in self.conn.execute("PRAGMA table_info(op_extra)")}:
            self.conn.execute("ALTER TABLE op_extra ADD COLUMN prompt TEXT NOT NULL DEFAULT ''")

    def _convert_to_incremental(self) -> None:
        """A journal made before incremental compaction: one VACUUM at start-up (before anything
        is served) switches it, so that ``compact`` never needs a VACUUM while the journal runs.
        On a disk too full for the copy it stays as it is (compact then runs a full VACUUM)."""
        size = self.path.stat().st_size
        log.info("journal %s: switching to incremental compaction (one VACUUM of %d bytes, once)", self.path, size)
        try:
            self.conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
            self.conn.execute("VACUUM")
        except sqlite3.OperationalError as exc:
            if not is_disk_full(exc):
                raise
            log.warning(
                "journal %s: not switched to incremental compaction: the disk is too full for a VACUUM "
                "(needs about %d bytes free); compact will run a full VACUUM",
                self.path,
                size,
            )

    def sibling(self) -> Database:
        """A second connection to the same journal, for one thread's transactions (the executor's
        writer commits while the event loop goes on). WAL: its reads never wait, and its writes
        queue behind this connection's (``BEGIN IMMEDIATE`` waits up to 5 s for the lock)."""
        return Database.attach(self.path)

    @classmethod
    def attach(cls, path: Path) -> Database:
        """A connection to an existing journal without the checks and schema set-up of
        ``Database(path)`` (the opening process did them): ``sibling``, and the packer's child
        process (packer.py)."""
        other = object.__new__(cls)
        other.path = path
        other.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        other.conn.row_factory = sqlite3.Row
        _settings(other.conn)
        return other

    def close(self) -> None:
        self.conn.close()

    def tx(self) -> _Tx:
        return _Tx(self.conn)

    def one(self, sql: str, *args: Any) -> sqlite3.Row | None:
        return self.conn.execute(sql, args).fetchone()

    def all(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        return self.conn.execute(sql, args).fetchall()

    def row(self, sql: str, *args: Any) -> sqlite3.Row:
        """The row of a query that always has one: an aggregate, or a row known to exist."""
        row = self.conn.execute(sql, args).fetchone()
        if row is None:
            raise LookupError(f"journal database: no row for {sql!r} {args!r}")
        return row

    # -- small helpers ---------------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, json.dumps(value)),
        )

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self.one("SELECT value FROM meta WHERE key=?", key)
        return default if row is None else json.loads(row["value"])


class _Tx:
    """``with db.tx():`` — BEGIN IMMEDIATE … COMMIT (durable on return) or ROLLBACK."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            try:
                self.conn.execute("COMMIT")
                return
            except sqlite3.OperationalError as err:
                exc = err
        try:
            self.conn.execute("ROLLBACK")
        except sqlite3.OperationalError:
            pass  # SQLite already rolled back (e.g. after SQLITE_FULL)
        if is_disk_full(exc):
            # Nothing of this transaction is on disk: no half-record, no write to the world.
            raise McbError(
                ErrorCode.UNAVAILABLE,
                "the journal's disk is full; nothing was recorded or written. Free space and retry.",
            ) from exc


def is_disk_full(exc: BaseException | None) -> bool:
    if isinstance(exc, sqlite3.OperationalError) and "full" in str(exc).lower():
        return True
    return isinstance(exc, OSError) and exc.errno == errno.ENOSPC
