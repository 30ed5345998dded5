"""HostState, the host's durable state (the Java core's ``HostState`` does the same job): the write-ahead
batch log and the pause that survives restarts, in ``<world>/mcb/host.sqlite`` (SQLite in WAL mode,
synchronous=FULL).

One row per batch id:

    batch_id      primary key (the caller's idempotency key for one batch)
    content_hash  sha256 of the batch's content: same id + other content -> invalid_request
    state         complete | rolled_back (| begun: only in logs of hosts before the write-ahead log)
    undo_json     [[x, y, z, before, after], ...] of every block the batch changed: enough to redo
                  (``after``) and to undo (``before``)
    result_json   the answer given (for idempotent replay)
    lsn           the order batches were logged in (redo runs in this order)
    redo          1 while the batch's blocks may be missing from the region files: logged, not yet
                  written by a checkpoint; 0 once a checkpoint wrote them

A batch is durable when its row is committed: the commit appends it to SQLite's own write-ahead
file (``host.sqlite-wal``, checksummed frames: a torn tail is discarded on open) and fsyncs it.
Rows that arrive together share one commit and so one fsync (group commit, ``submit``/``wait``).
The region files are written later by the world's checkpoint, which then clears ``redo`` and
truncates the SQLite WAL file (``cut``: the log is cut). On open, every ``redo`` row is written
again in ``lsn`` order (world.py) before anything is served.

One row per durable host setting (``host_state``): ``paused`` -> the pause reason while writes
are paused (committed before ``pause`` answers, so a crash or restart keeps writes paused: "the
host never resumes by itself"; removed by ``resume``).

Logs written before the write-ahead design may hold ``begun`` rows (intent committed, region
writes maybe half done); on open the world rolls them back from ``undo_json`` and marks them
``rolled_back``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
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
    finished_ms   INTEGER,
    lsn           INTEGER NOT NULL DEFAULT 0,
    redo          INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS batches_state ON batches(state);
CREATE INDEX IF NOT EXISTS batches_operation ON batches(operation_id);
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


@dataclass
class Ticket:
    """One row waiting for the log: a batch (``undo`` may be empty: an answer that wrote nothing)
    or a host setting (``key``). ``error`` is set when its commit failed: its blocks are still
    in memory until the world undoes them (``World.settle_failed``)."""

    lsn: int
    batch: BatchRow | None = None
    key: str = ""
    value: str | None = None
    done: bool = False
    error: BaseException | None = None
    undone: threading.Event = field(default_factory=threading.Event)


class HostState:
    def __init__(self, path: Path):
        make_dirs(path.parent)  # the batch log's folder survives a crash like the log
        self.path = path
        self._lock = threading.Lock()  # the connection
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        # the world cuts the log itself after each checkpoint (``cut``); SQLite's own 1,000-page
        # checkpoint would copy pages into host.sqlite (and fsync it) on some commit's answer path
        self._db.execute("PRAGMA wal_autocheckpoint=0")
        cols = {r[1] for r in self._db.execute("PRAGMA table_info(batches)")}
        if cols and "lsn" not in cols:  # a log of a host before the write-ahead design
            self._db.execute("ALTER TABLE batches ADD COLUMN lsn INTEGER NOT NULL DEFAULT 0")
            self._db.execute("ALTER TABLE batches ADD COLUMN redo INTEGER NOT NULL DEFAULT 0")
        self._db.executescript(SCHEMA)
        self._lsn = int(self._db.execute("SELECT COALESCE(MAX(lsn), 0) FROM batches").fetchone()[0])
        # lookups by batch id on their own connection: a WAL reader never waits for a commit
        self._rlock = threading.Lock()
        self._rdb = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        # group commit: rows submitted and not yet committed, one committer (leader) at a time
        self._qlock = threading.Lock()
        self._commit_lock = threading.Lock()
        self._queue: list[Ticket] = []
        self._inflight: dict[str, Ticket] = {}
        self._failed: list[Ticket] = []
        self._poison: BaseException | None = None
        self.logged_bytes = 0  # undo text committed since the last cut
        self.commits = 0  # fsynced commits (each may carry several batches)
        self.crash_hook: Callable[[str], None] | None = None  # tests: crash points (kill the process)

    def close(self) -> None:
        with self._lock, self._rlock:
            try:
                self._rdb.close()
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                self._db.close()

    def _row(self, r: tuple) -> BatchRow:
        return BatchRow(
            batch_id=r[0],
            content_hash=r[1],
            operation_id=r[2],
            state=r[3],
            undo=[tuple(u) for u in json.loads(r[4] or "[]")],
            result=json.loads(r[5]) if r[5] else None,
        )

    def get(self, batch_id: str) -> BatchRow | None:
        """The batch's row: committed, or submitted and on its way to the log (its answer is
        given once that commit is fsynced)."""
        with self._qlock:
            t = self._inflight.get(batch_id)
        if t is not None and t.batch is not None and t.error is None:
            return t.batch
        with self._rlock:
            r = self._rdb.execute(
                "SELECT batch_id, content_hash, operation_id, state, undo_json, result_json FROM batches WHERE batch_id=?",
                (batch_id,),
            ).fetchone()
        return self._row(r) if r else None

    def in_flight_ticket(self, batch_id: str) -> Ticket | None:
        """The ticket of the batch's row if it is submitted and not committed yet (a replay of it
        is answered once that commit is fsynced, as the first answer is)."""
        with self._qlock:
            t = self._inflight.get(batch_id)
        return t if t is not None and not t.done else None

    # -- the write-ahead path --------------------------------------------------------------------
    def submit_batch(self, batch_id: str, content_hash: str, operation_id: str, undo: Undo, result: dict) -> Ticket:
        """Queue a batch's record (what it wrote and replaced, and its answer) for the log. The
        caller holds the world lock (so rows are queued in the order their writes happened) and
        calls ``wait`` after releasing it."""
        row = BatchRow(batch_id, content_hash, operation_id, "complete", undo, result)
        return self._submit(Ticket(0, batch=row))

    def submit_setting(self, key: str, value: str | None) -> Ticket:
        return self._submit(Ticket(0, key=key, value=value))

    def _submit(self, t: Ticket) -> Ticket:
        with self._qlock:
            self._lsn += 1
            t.lsn = self._lsn
            if t.batch is not None:
                self._inflight[t.batch.batch_id] = t
            if self._poison is not None:  # a commit failed and its writes are not undone yet
                t.error = self._poison
                t.done = True
                self._failed.append(t)
            else:
                self._queue.append(t)
        return t

    def wait(self, t: Ticket) -> None:
        """Return once ``t`` is committed (fsynced), committing every row queued so far with it
        (group commit); or with ``t.error`` set when its commit failed."""
        while not t.done:
            with self._commit_lock:
                if t.done:
                    break
                self._commit_queued()

    def flush(self) -> None:
        """Commit every row queued so far (returns at once when none is)."""
        with self._commit_lock:
            self._commit_queued()

    def in_flight(self) -> bool:
        with self._qlock:
            return bool(self._queue or self._failed)

    def _commit_queued(self) -> None:
        """The leader's work (caller holds ``_commit_lock``): every queued row in ONE transaction."""
        with self._qlock:
            group, self._queue = self._queue, []
        if not group:
            return
        now = _now()
        logged = 0
        try:
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    for t in group:
                        if t.batch is None:
                            if t.value is None:
                                self._db.execute("DELETE FROM host_state WHERE key=?", (t.key,))
                            else:
                                self._db.execute(
                                    "INSERT INTO host_state(key, value) VALUES (?, ?) "
                                    "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                                    (t.key, t.value),
                                )
                            continue
                        b = t.batch
                        undo = json.dumps(b.undo, separators=(",", ":")) if b.undo else "[]"
                        logged += len(undo)
                        self._db.execute(
                            "INSERT OR REPLACE INTO batches(batch_id, content_hash, operation_id, state, undo_json, "
                            "result_json, begun_ms, finished_ms, lsn, redo) VALUES (?,?,?,?,?,?,?,?,?,?)",
                            (
                                b.batch_id,
                                b.content_hash,
                                b.operation_id,
                                "complete",
                                undo,
                                json.dumps(b.result, separators=(",", ":")),
                                now,
                                now,
                                t.lsn,
                                1 if b.undo else 0,
                            ),
                        )
                    if self.crash_hook is not None:
                        self.crash_hook("log_append")
                    self._db.execute("COMMIT")  # the fsync of the SQLite WAL file: durable from here
                except BaseException:
                    try:
                        self._db.execute("ROLLBACK")
                    except sqlite3.OperationalError:
                        pass  # SQLite already rolled back (e.g. after SQLITE_FULL): keep the first error
                    raise
        except BaseException as exc:  # noqa: BLE001 - every queued row fails with it; the world undoes them
            with self._qlock:
                self._poison = exc
                rest, self._queue = self._queue, []
                for t in group + rest:
                    t.error = exc
                    t.done = True
                self._failed.extend(group + rest)
            return
        self.commits += 1
        self.logged_bytes += logged
        with self._qlock:
            for t in group:
                t.done = True
                t.undone.set()
                if t.batch is not None and self._inflight.get(t.batch.batch_id) is t:
                    del self._inflight[t.batch.batch_id]

    def take_failed(self) -> list[Ticket]:
        """Rows whose commit failed, and every row queued after them (validated against their
        writes), newest first: the world undoes them in this order (caller holds the world lock)
        and then sets ``undone``. Clears the failure, so later rows are committed again."""
        with self._commit_lock, self._qlock:
            failed, self._failed = self._failed, []
            self._poison = None
            for t in failed:
                if t.batch is not None and self._inflight.get(t.batch.batch_id) is t:
                    del self._inflight[t.batch.batch_id]
        return sorted(failed, key=lambda t: -t.lsn)

    def has_failed(self) -> bool:
        with self._qlock:
            return bool(self._failed)

    @property
    def last_lsn(self) -> int:
        with self._qlock:
            return self._lsn

    def redo_rows(self) -> list[BatchRow]:
        """Batches logged but maybe not in the region files yet, in log order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT batch_id, content_hash, operation_id, state, undo_json, result_json FROM batches "
                "WHERE redo=1 ORDER BY lsn"
            ).fetchall()
        return [self._row(r) for r in rows]

    def cut(self, lsn: int) -> None:
        """After a checkpoint wrote every batch up to ``lsn`` into the region files: they need no
        redo, and SQLite's WAL file is copied into host.sqlite and truncated (the log is cut)."""
        with self._commit_lock, self._lock:
            self._db.execute("UPDATE batches SET redo=0 WHERE redo=1 AND lsn<=?", (lsn,))
            if self.crash_hook is not None:
                self.crash_hook("before_wal_truncate")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.logged_bytes = 0

    # -- logs of hosts before the write-ahead design ------------------------------------------------
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
        """Durably pause (``reason``) or resume (None): committed (fsynced) when this returns, in
        the same log as the batches, after every batch submitted before it."""
        t = self.submit_setting("paused", reason)
        self.wait(t)
        if t.error is not None:
            with self._commit_lock, self._qlock:  # a setting has no blocks to undo
                if t in self._failed:
                    self._failed.remove(t)
                if not self._failed:
                    self._poison = None
            raise t.error

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._db.execute("SELECT state, COUNT(*) FROM batches GROUP BY state").fetchall())


def _now() -> int:
    return int(time.time() * 1000)
