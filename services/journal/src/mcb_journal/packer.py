"""Packing and compaction in a child process, never on the journal's event loop.

Packing a large finished operation is seconds of CPU in single calls that hold Python's GIL
(``json.dumps`` / ``json.loads`` of millions of numbers), so a thread would still stall the
event loop; a child process (spawned: no fork of a process with grpc threads) with its own
SQLite connection does not; it runs at a lower priority (nice 10). One job at a time: the automatic pass (``pack_due``) and
``compact`` share a lock. The automatic pass first asks, on a worker thread over the packer's own
read connection, whether anything is due (``history.pack_is_due``, one read): starting the child
(a Python interpreter importing numpy and the journal, ≈ 0.8 s of CPU) only when something is. The child gets SIGKILL when the journal dies, and ``stop`` ends it:
every step of a pass is its own transaction, so an interrupted pass leaves live ∪ packed
complete and the next pass finishes it (history.py).
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import multiprocessing
import os
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from mcb_common.errors import ErrorCode, McbError

from .db import Database
from .history import compact, pack_due, pack_is_due

log = logging.getLogger("mcb.journal.packer")


def _pack_due(db: Database, blobs_root: Path, pack_after_s: float) -> int:
    return pack_due(db, pack_after_s)


def _compact(db: Database, blobs_root: Path, pack_after_s: float) -> dict[str, Any]:
    return compact(db, blobs_root)


def _child(out: Connection, job: Callable[..., Any], db_path: Path, blobs_root: Path, pack_after_s: float) -> None:
    try:  # die with the journal, even one killed with SIGKILL (PR_SET_PDEATHSIG)
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL))
    except (OSError, AttributeError):
        pass
    os.nice(10)  # housekeeping: the journal's own process comes first on a busy machine
    db = Database.attach(db_path)
    # No fsync per commit (WAL, synchronous=NORMAL): a pass's commits are ordered in the WAL, so a
    # power loss can only undo its last deletes of rows that are already packed (live ∪ packed
    # stays complete); the journal's own commits stay FULL, and their fsync takes these along.
    db.conn.execute("PRAGMA synchronous=NORMAL")
    try:
        out.send(("ok", job(db, blobs_root, pack_after_s)))
    except McbError as err:
        out.send(("error", str(err.code), err.message))
    except Exception as exc:  # noqa: BLE001 - reported to the journal, which logs it
        out.send(("error", str(ErrorCode.INTERNAL), f"{exc.__class__.__name__}: {exc}"))
    finally:
        db.close()
        out.close()


class Packer:
    def __init__(self, db_path: Path, blobs_root: Path):
        self.db_path = db_path
        self.blobs_root = blobs_root
        self._lock = asyncio.Lock()
        self._proc: multiprocessing.process.BaseProcess | None = None
        self._reader: Database | None = None  # pack_is_due's connection, used under the lock only

    async def pack_due(self, pack_after_s: float) -> int:
        """history.pack_due in the child: the number of operations packed. No child when nothing is
        due (``due``)."""
        if not await self.due(pack_after_s):
            return 0
        return int(await self._run(_pack_due, pack_after_s))

    async def due(self, pack_after_s: float) -> bool:
        """history.pack_is_due, on a worker thread (SQLite releases the GIL while it reads)."""
        async with self._lock:
            return await asyncio.to_thread(self._is_due, pack_after_s)

    def _is_due(self, pack_after_s: float) -> bool:
        if self._reader is None:
            self._reader = Database.attach(self.db_path)
        return pack_is_due(self._reader, pack_after_s)

    async def compact(self) -> dict[str, Any]:
        """history.compact in the child."""
        return dict(await self._run(_compact, 0.0))

    async def _run(self, job: Callable[..., Any], pack_after_s: float) -> Any:
        async with self._lock:
            ctx = multiprocessing.get_context("spawn")
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(
                target=_child,
                args=(send, job, self.db_path, self.blobs_root, pack_after_s),
                name="journal-packer",
                daemon=True,
            )
            self._proc = proc
            try:
                proc.start()
                send.close()
                try:
                    answer = await asyncio.to_thread(recv.recv)  # the thread waits in recv, without the GIL
                except EOFError:
                    raise McbError(
                        ErrorCode.INTERNAL, f"the packer process ended without an answer (exit code {proc.exitcode})"
                    ) from None
            finally:
                if proc.is_alive():  # cancelled (the journal is stopping): every step is its own transaction
                    proc.terminate()
                await asyncio.to_thread(proc.join, 5)
                self._proc = None
            if answer[0] != "ok":
                raise McbError(ErrorCode(answer[1]), answer[2])
            return answer[1]

    def stop(self) -> None:
        """End a job in flight (the journal is stopping) and close the read connection when no
        check is using it."""
        if self._proc is not None and self._proc.is_alive():
            self._proc.terminate()
        if self._reader is not None and not self._lock.locked():
            self._reader.close()
            self._reader = None
