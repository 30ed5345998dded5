"""History reads off the event loop.

A question about a finished operation may decode its packed record (history.py) and walk every
position of it: hundreds of milliseconds for a 100k-block operation, seconds for a 1M-block one.
Asked on the event loop, that would hold up every other caller and ``/health``. ``Reads.run``
answers such a question on one of two worker threads, each with its own SQLite connection
(WAL: its reads never wait for a writer, and no writer waits for them), inside one read
transaction, so the question sees one snapshot of live ∪ packed rows even while the packer's
child process moves rows between them. The decode is zlib (which releases the GIL) and numpy;
the per-row Python that follows is ordinary bytecode, so the event loop keeps its turns.

Only reads run here: the answer goes back to the event loop, which does any writing itself.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from .db import Database

T = TypeVar("T")
WORKERS = 2  # one long question (an undo over a large operation) leaves a thread for the short ones


class Reads:
    def __init__(self, db_path: Path):
        self.db_path = db_path
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="journal-reads")
        self._local = threading.local()
        self._opened: list[Database] = []
        self._lock = threading.Lock()

    async def run(self, question: Callable[[Database], T]) -> T:
        """``question(db)`` on a worker thread, in one read snapshot; its result or its error."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._in_snapshot, question)

    def _in_snapshot(self, question: Callable[[Database], T]) -> T:
        db: Database | None = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = Database.attach(self.db_path)
            with self._lock:
                self._opened.append(db)
        db.conn.execute("BEGIN")  # deferred: the snapshot starts at the first read and holds to the end
        try:
            return question(db)
        finally:
            db.conn.execute("ROLLBACK")  # read-only: nothing to keep

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        with self._lock:
            for db in self._opened:
                db.close()
            self._opened.clear()
