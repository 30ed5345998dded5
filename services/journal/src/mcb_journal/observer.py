"""The journal's copy of what the world host observed: block events and gaps.

A task pulls ``events_since`` from the host and appends every event to the ``observed``
table in order. When the host answers ``resync_required`` (it restarted, or trimmed its
memory) a ``gap`` row is written: history before it is incomplete, and everything that
reasons about "no later write touched this block" (undo, the change feed) must say so.
``sync()`` drains the host up to now; callers that decide on history call it first.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, NamedTuple

from google.protobuf import json_format
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError

from .db import Database, now_ms
from .history import last_oid, next_oids, record_batch_events, take_oids
from .ports import WorldPort

log = logging.getLogger("mcb.journal.observer")

PAGES_PER_COMMIT = 5  # events_since pages (the host's page: 1,000 events; 100 on older hosts) per transaction


class Page(NamedTuple):
    """An ``EventsSinceResult``; each event as the ``observed`` row's values after the host
    instance: (seq, x, y, z, before, after, source, player_id, operation_id, at_millis, player_name,
    cause); the last two are "" from hosts before issue 32."""

    events: list[tuple[int, int, int, int, str, str, str, str, str, int, str, str]]
    next_cursor: str
    resync_required: bool
    complete: bool
    reason: str


_INT32 = range(-(2**31), 2**31)
_UINT64 = range(2**64)


_PAGE_KEYS = frozenset({"events", "nextCursor", "resyncRequired", "complete", "reason"})
_EVENT_KEYS = frozenset(
    {"seq", "x", "y", "z", "before", "after", "source", "playerId", "atMillis", "operationId", "playerName", "cause"}
)


def read_page(data: dict[str, Any]) -> Page:
    """An events_since answer read from its JSON form directly: a page holds up to 1,000 events,
    and building a message for each cost more than the rest of the sync. Checked as strictly as
    the message parser: a value of the wrong type or range is an error, never a row. A page with
    any other key (proto3 JSON also allows the fields' own snake_case names; a newer host may add
    fields) is read by the message parser instead, which takes both names and ignores unknown
    fields, as every other answer is read."""
    try:
        if not data.keys() <= _PAGE_KEYS or not all(
            type(e) is dict and e.keys() <= _EVENT_KEYS for e in data.get("events", ())
        ):
            return _read_page_message(data)
        events = []
        for e in data.get("events", ()):
            x, y, z = e.get("x", 0), e.get("y", 0), e.get("z", 0)
            seq, at = _u64(e.get("seq", 0)), _u64(e.get("atMillis", 0))
            text = (
                e.get("before", ""),
                e.get("after", ""),
                e.get("source", ""),
                e.get("playerId", ""),
                e.get("operationId", ""),
            )
            who = (e.get("playerName", ""), e.get("cause", ""))
            if not (
                type(x) is int
                and type(y) is int
                and type(z) is int
                and x in _INT32
                and y in _INT32
                and z in _INT32
                and all(type(t) is str for t in text + who)
            ):
                raise ValueError(f"event {e!r:.200}")
            events.append((seq, x, y, z, *text, at, *who))
        page = Page(
            events,
            data.get("nextCursor", ""),
            data.get("resyncRequired", False),
            data.get("complete", False),
            data.get("reason", ""),
        )
        if not (
            type(page.next_cursor) is str
            and type(page.resync_required) is bool
            and type(page.complete) is bool
            and type(page.reason) is str
        ):
            raise ValueError("page fields")
    except (AttributeError, TypeError, ValueError) as exc:
        raise McbError(ErrorCode.INTERNAL, f"the world host sent a malformed events_since page ({exc})") from None
    return page


def _read_page_message(data: dict[str, Any]) -> Page:
    events = data.get("events", [])
    if not (type(events) is list and all(type(e) is dict for e in events)):  # ParseDict would take ["x"] as [{}]
        raise ValueError("events must be a list of objects")
    try:
        m = json_format.ParseDict(data, world_pb2.EventsSinceResult(), ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        raise ValueError(str(exc)[:200]) from None
    return Page(
        [
            (
                e.seq,
                e.x,
                e.y,
                e.z,
                e.before,
                e.after,
                e.source,
                e.player_id,
                e.operation_id,
                e.at_millis,
                e.player_name,
                e.cause,
            )
            for e in m.events
        ],
        m.next_cursor,
        m.resync_required,
        m.complete,
        m.reason,
    )


def _u64(v: Any) -> int:
    """A uint64 in proto3 JSON: a decimal string, or a JSON number."""
    n = int(v) if type(v) is str and v.isdigit() else v
    if type(n) is not int or n not in _UINT64:
        raise ValueError(f"{v!r:.40} is not a uint64")
    return n


class Observer:
    def __init__(self, db: Database, world: WorldPort):
        self.db = db
        # Pages are recorded in a thread on their own connection: a group of 5,000 rows and its
        # fsync would otherwise hold the event loop (and with it the executor's next batch).
        self._rdb = db.sibling()
        self.world = world
        self._lock = asyncio.Lock()
        self.healthy = False

    @property
    def cursor(self) -> str:
        return self.db.get_meta("observer_cursor", "")

    def last_oid(self) -> int:
        return last_oid(self.db)

    async def sync(self) -> None:
        """Pull every event the host has until it says the page is complete. Pages are recorded
        (events and the cursor after them, one transaction) every ``PAGES_PER_COMMIT`` pages, at a
        gap and at the end: a 100,000-block apply's echoes are 100 requests and ~20 fsyncs. A failure
        between two commits loses nothing: the stored cursor still points before those pages."""
        async with self._lock:
            cursor = self.cursor
            pages: list[tuple[str, Page]] = []
            for _ in range(10_000):
                res = read_page(await self.world.call_json("events_since", world_pb2.EventsSinceParams(cursor=cursor)))
                pages.append((cursor, res))
                cursor = res.next_cursor
                if res.complete or res.resync_required or len(pages) >= PAGES_PER_COMMIT:
                    await self._store(pages)
                    pages = []
                if res.complete:
                    break
            if pages:
                await self._store(pages)
        if self.db.get_meta("rollback_check", ""):
            await self._note_rollback()

    async def _store(self, pages: list[tuple[str, Page]]) -> None:
        """Record a group of pages in a thread. A caller cancelled meanwhile (a gRPC handler whose
        client went away) still waits for the thread before it releases the lock: the next sync
        must start from the cursor this group stores, or it would record the same pages again."""
        job = asyncio.ensure_future(asyncio.to_thread(self._record, pages))
        cancelled = False
        while not job.done():
            try:
                await asyncio.shield(job)
            except asyncio.CancelledError:
                cancelled = True
        if cancelled:
            raise asyncio.CancelledError
        job.result()

    def _record(self, pages: list[tuple[str, Page]]) -> None:
        restarted_instance = ""
        with self._rdb.tx() as c:
            if self._rdb.get_meta("observer_cursor", "") != pages[0][0]:  # c is this connection
                log.warning("observer: a group of pages from cursor %r was recorded already; skipped", pages[0][0])
                return
            # Rows are numbered here, in the order the host reported them, from observed's
            # AUTOINCREMENT sequence: the echoes of our own writes become one packed record per
            # operation (history.record_batch_events), the rest rows, and the numbering is what
            # inserting every one as a row would have given.
            oid = next_oids(c)
            ours: dict[str, list[tuple]] = {}
            for cursor, res in pages:
                instance = res.next_cursor.rpartition(":")[0]
                if res.resync_required and cursor:
                    restarted_instance = instance
                if res.resync_required or not cursor:
                    c.execute(
                        "INSERT INTO observed(oid, kind, host_instance, at_ms, reason) VALUES (?, 'gap', ?, ?, ?)",
                        (oid, instance, now_ms(), res.reason or "observation started"),
                    )
                    oid += 1
                rows = []
                for e in res.events:
                    seq, x, y, z, before, after, source, player_id, op_id, at, player_name, cause = e
                    if source == "ours" and op_id and not player_name and not cause:
                        ours.setdefault(op_id, []).append((oid, seq, x, y, z, at, instance, before, after, player_id))
                    else:
                        rows.append((oid, instance, *e))
                    oid += 1
                c.executemany(
                    "INSERT INTO observed(oid, kind, host_instance, host_seq, x, y, z, before, after, source,"
                    " player_id, op_id, at_ms, player_name, cause) VALUES (?,'event',?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    rows,
                )
            for op_id, echoes in ours.items():
                record_batch_events(c, op_id, echoes)
            take_oids(c, oid - 1)
            self._rdb.set_meta("observer_cursor", pages[-1][1].next_cursor)
        self.healthy = True
        if restarted_instance:
            self._rdb.set_meta("rollback_check", restarted_instance)

    async def _note_rollback(self) -> None:
        """After a host restart: when its world rolled back past some of our writes (a game server
        that crashed keeps only what it had saved), tell each affected operation's status so the
        agent and the person are never left believing a rolled-back `applied`. The host checks its
        unsaved writes after it starts (``writes_checked``): until then this asks again at each sync."""
        info = await self.world.world_info()
        r = info.last_restart
        if r.previous_stop == "unclean" and not r.writes_checked:
            return  # not final yet
        self.db.set_meta("rollback_check", "")
        if r.previous_stop != "unclean" or not r.affected_operation_ids or not r.lost_writes:
            return
        text = (
            f"the world host stopped uncleanly and its world rolled back to its last save: {r.lost_writes} of "
            "our block writes made after that save were lost, and this operation wrote after it, so some of its "
            "blocks may be missing. Check with region_inspect, or apply the same plan again (build_apply with a "
            "new idempotency_key) to restore them; blocks changed since are reported as conflicts."
        )
        at = now_ms()
        with self.db.tx() as c:
            for op_id in r.affected_operation_ids:
                if c.execute("SELECT 1 FROM operations WHERE op_id=?", (op_id,)).fetchone():
                    c.execute(
                        "INSERT OR IGNORE INTO op_notices(op_id, at_ms, kind, text) VALUES (?,?,?,?)",
                        (op_id, at, "rolled_back", text),
                    )
        log.warning(
            "world host restarted after an unclean stop: %d lost writes; operations %s",
            r.lost_writes,
            ", ".join(r.affected_operation_ids),
        )

    async def run_forever(self, stopping: asyncio.Event, interval: float = 0.25) -> None:
        while not stopping.is_set():
            try:
                await self.sync()
            except McbError as err:
                self.healthy = False
                log.debug("observer: %s", err.message)
            except Exception:  # noqa: BLE001 - keep observing; report in /health
                self.healthy = False
                log.exception("observer failed")
            try:
                await asyncio.wait_for(stopping.wait(), timeout=interval)
            except TimeoutError:
                pass
