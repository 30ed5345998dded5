"""The journal's copy of what the world host observed: block events and gaps.

A task pulls ``events_since`` from the host and appends every event to the ``observed``
table in order. When the host answers ``resync_required`` (it restarted, or trimmed its
memory) a ``gap`` row is written: history before it is incomplete, and everything that
reasons about "no later write touched this block" (undo, the change feed) must say so.
``sync()`` drains the host up to now; callers that decide on history call it first.
A host listing ``events_since.runs`` is asked for runs (issue 29): a batch's echoes arrive as one
object of columns and go into the operation's ``batch_events`` record as they are.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, NamedTuple

from google.protobuf import json_format
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_common.eventrun import EventRun

from .db import Database, now_ms
from .history import Echoes, last_oid, next_oids, record_batch_events, take_oids
from .ports import WorldPort

log = logging.getLogger("mcb.journal.observer")

PAGES_PER_COMMIT = 5  # events_since pages (the host's page: 1,000 events; 100 on older hosts) per transaction


Run = EventRun  # an ``EventRun`` read from a page (before and after looked up in its states)


def run_events(r: Run) -> list[tuple[int, int, int, int, str, str, str, str, str, int, str, str]]:
    """A run's events as a page's event tuples."""
    return [
        (r.first + i, x, y, z, b, a, r.source, r.player_id, r.operation_id, r.at_millis, r.player_name, r.cause)
        for i, (x, y, z, b, a) in enumerate(zip(r.x, r.y, r.z, r.before, r.after, strict=True))
    ]


class Page(NamedTuple):
    """An ``EventsSinceResult``; each event as the ``observed`` row's values after the host
    instance: (seq, x, y, z, before, after, source, player_id, operation_id, at_millis, player_name,
    cause); the last two are "" from hosts before issue 32. A host that answers in runs (issue 29)
    fills ``runs`` instead of ``events``."""

    events: list[tuple[int, int, int, int, str, str, str, str, str, int, str, str]]
    next_cursor: str
    resync_required: bool
    complete: bool
    reason: str
    runs: list[Run] = []  # noqa: RUF012 - a NamedTuple default, never mutated


_INT32 = range(-(2**31), 2**31)
_UINT64 = range(2**64)


_PAGE_KEYS = frozenset({"events", "nextCursor", "resyncRequired", "complete", "reason", "runs"})
_EVENT_KEYS = frozenset(
    {"seq", "x", "y", "z", "before", "after", "source", "playerId", "atMillis", "operationId", "playerName", "cause"}
)
_RUN_KEYS = frozenset(
    {
        "firstSeq",
        "source",
        "playerId",
        "atMillis",
        "operationId",
        "playerName",
        "cause",
        "states",
        "x",
        "y",
        "z",
        "before",
        "after",
    }
)


def read_page(data: dict[str, Any]) -> Page:
    """An events_since answer read from its JSON form directly: a page holds up to 1,000 events,
    and building a message for each cost more than the rest of the sync. Checked as strictly as
    the message parser: a value of the wrong type or range is an error, never a row. A page with
    any other key (proto3 JSON also allows the fields' own snake_case names; a newer host may add
    fields) is read by the message parser instead, which takes both names and ignores unknown
    fields, as every other answer is read."""
    try:
        if (
            not data.keys() <= _PAGE_KEYS
            or not all(type(e) is dict and e.keys() <= _EVENT_KEYS for e in data.get("events", ()))
            or not all(type(r) is dict and r.keys() <= _RUN_KEYS for r in data.get("runs", ()))
        ):
            return _read_page_message(data)
        runs = [_read_run(r) for r in data.get("runs", ())]
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
            runs,
        )
        if not (
            type(page.next_cursor) is str
            and type(page.resync_required) is bool
            and type(page.complete) is bool
            and type(page.reason) is str
        ):
            raise ValueError("page fields")
        if page.events and page.runs:
            raise ValueError("a page holds events or runs, not both")
    except (AttributeError, TypeError, ValueError) as exc:
        raise McbError(ErrorCode.INTERNAL, f"the world host sent a malformed events_since page ({exc})") from None
    return page


def _ints(v: Any, lo: int, hi: int, what: str) -> list[int]:
    """A JSON array of integers in lo..hi-1 (no bool, no float), checked without a Python step per
    element where the C built-ins can do it."""
    if type(v) is not list or not set(map(type, v)) <= {int} or (v and (min(v) < lo or max(v) >= hi)):
        raise ValueError(f"run {what} must be an array of integers in {lo}..{hi - 1}")
    return v


def _read_run(r: dict[str, Any]) -> Run:
    """An ``EventRun`` from its JSON form, as strictly as an event: every column of one length (at
    least one event), coordinates int32, before and after indices into its states."""
    states = r.get("states", [])
    if type(states) is not list or not all(type(s) is str for s in states):
        raise ValueError("run states must be an array of strings")
    x = _ints(r.get("x", []), -(2**31), 2**31, "x")
    n = len(x)
    y, z = _ints(r.get("y", []), -(2**31), 2**31, "y"), _ints(r.get("z", []), -(2**31), 2**31, "z")
    before = _ints(r.get("before", []), 0, len(states), "before")
    after = _ints(r.get("after", []), 0, len(states), "after")
    if n == 0 or not len(y) == len(z) == len(before) == len(after) == n:
        raise ValueError(f"run columns of lengths {[len(c) for c in (x, y, z, before, after)]}")
    first, at = _u64(r.get("firstSeq", 0)), _u64(r.get("atMillis", 0))
    if first + n - 1 not in _UINT64:
        raise ValueError("run seqs beyond uint64")
    text = tuple(r.get(k, "") for k in ("source", "playerId", "operationId", "playerName", "cause"))
    if not all(type(t) is str for t in text):
        raise ValueError(f"run {r!r:.200}")
    source, player, op, name, cause = text
    return Run(
        first, source, player, at, op, name, cause, x, y, z, [states[i] for i in before], [states[i] for i in after]
    )


def _read_page_message(data: dict[str, Any]) -> Page:
    events = data.get("events", [])
    if not (type(events) is list and all(type(e) is dict for e in events)):  # ParseDict would take ["x"] as [{}]
        raise ValueError("events must be a list of objects")
    runs = data.get("runs", [])
    if not (type(runs) is list and all(type(r) is dict for r in runs)):
        raise ValueError("runs must be a list of objects")
    try:
        m = json_format.ParseDict(data, world_pb2.EventsSinceResult(), ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        raise ValueError(str(exc)[:200]) from None
    page = Page(
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
        [_run_of(r) for r in m.runs],
    )
    if page.events and page.runs:
        raise ValueError("a page holds events or runs, not both")
    return page


def _run_of(r: world_pb2.EventRun) -> Run:
    n = len(r.x)
    if n == 0 or not len(r.y) == len(r.z) == len(r.before) == len(r.after) == n:
        raise ValueError("run columns of different lengths")
    if any(i >= len(r.states) for i in (*r.before, *r.after)):
        raise ValueError("run index beyond its states")
    if r.first_seq + n - 1 not in _UINT64:
        raise ValueError("run seqs beyond uint64")
    st = list(r.states)
    return Run(
        r.first_seq,
        r.source,
        r.player_id,
        r.at_millis,
        r.operation_id,
        r.player_name,
        r.cause,
        list(r.x),
        list(r.y),
        list(r.z),
        [st[i] for i in r.before],
        [st[i] for i in r.after],
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
        # whether the host lists events_since.runs (asked once; again after a restart or an error:
        # a host of another version may stand behind the same address)
        self._runs: bool | None = None

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
            if self._runs is None:
                self._runs = "events_since.runs" in (await self.world.world_info()).capabilities
            for _ in range(10_000):
                try:
                    params = world_pb2.EventsSinceParams(cursor=cursor, runs=self._runs)
                    res = read_page(await self.world.call_json("events_since", params))
                except McbError:
                    self._runs = None
                    raise
                if res.resync_required:
                    self._runs = None
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
            ours: dict[str, Echoes] = {}
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
                        ours.setdefault(op_id, Echoes()).add(oid, seq, x, y, z, at, instance, before, after, player_id)
                    else:
                        rows.append((oid, instance, *e))
                    oid += 1
                for r in res.runs:  # a batch's echoes as one run: its columns go to the record as they are
                    if r.source == "ours" and r.operation_id and not r.player_name and not r.cause:
                        ours.setdefault(r.operation_id, Echoes()).add_run(oid, r, instance)
                    else:
                        rows += [(oid + i, instance, *e) for i, e in enumerate(run_events(r))]
                    oid += len(r.x)
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
