"""Observed block events, in memory, behind a cursor that names this host instance.

Cursor text: ``<host_instance>:<seq>``. A cursor from another instance (the host restarted,
so events in between were never observed) or older than the oldest retained event answers
``resync_required`` with a reason and a fresh cursor. Sources: ``player`` (a person placed or
broke a block), ``environment``, ``external`` (never recorded: an external write is by
definition unobserved), ``ours`` (a batch the host applied, with its operation id). A player's
event carries the player's name, an environment event its cause (mcb_common.causes).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from mcb_common.errors import invalid

MAX_PAGE = 1000  # events per events_since page (a 100,000-block apply's echoes: 100 pages)
RETAIN = 200_000


class Event(NamedTuple):  # a tuple: 100,000 of them per 100,000-block apply
    seq: int
    x: int
    y: int
    z: int
    before: str
    after: str
    source: str
    player_id: str
    at_millis: int
    operation_id: str
    player_name: str = ""
    cause: str = ""


@dataclass
class Page:
    events: list[Event]
    next_cursor: str
    resync_required: bool
    complete: bool
    reason: str


class EventLog:
    def __init__(self, instance: str, retain: int = RETAIN):
        self.instance = instance
        self._events: deque[Event] = deque(maxlen=retain)
        self._seq = 0
        self._lock = threading.Lock()

    def record_many(
        self,
        changes: Iterable[tuple[int, int, int, str, str]],
        source: str,
        player_id: str = "",
        operation_id: str = "",
        player_name: str = "",
        cause: str = "",
    ) -> None:
        """Several changes (x, y, z, before, after) of one writer, at one time: a batch's echoes."""
        with self._lock:
            at, seq = int(time.time() * 1000), self._seq
            for x, y, z, before, after in changes:
                seq += 1
                self._events.append(
                    Event(seq, x, y, z, before, after, source, player_id, at, operation_id, player_name, cause)
                )
            self._seq = seq

    def cursor_now(self) -> str:
        with self._lock:
            return f"{self.instance}:{self._seq}"

    def since(
        self,
        cursor: str,
        limit: int = MAX_PAGE,
        region: tuple[tuple[int, int, int], tuple[int, int, int]] | None = None,
    ) -> Page:
        limit = MAX_PAGE if limit <= 0 else min(limit, MAX_PAGE)
        if not cursor:
            return Page([], self.cursor_now(), False, True, "")
        inst, sep, seq_text = cursor.rpartition(":")
        if not sep or not inst or not seq_text.isdigit():
            raise invalid(f'cursor {cursor[:80]!r} is not a cursor of this host; pass "" to start from now')
        fresh = self.cursor_now()
        if inst != self.instance:
            return Page(
                [],
                fresh,
                True,
                True,
                "the world host restarted since this cursor was issued; block events in between were not "
                "observed. Re-read the region and continue from the new cursor.",
            )
        seq = int(seq_text)
        with self._lock:
            if seq > self._seq:
                raise invalid(f"cursor {cursor!r} is ahead of this host (latest event {self._seq})")
            oldest = self._events[0].seq if self._events else self._seq + 1
            if self._events and seq < oldest - 1:
                return Page(
                    [],
                    fresh,
                    True,
                    True,
                    f"events before #{oldest} were trimmed from memory; re-read the region and continue "
                    "from the new cursor.",
                )
            out: list[Event] = []
            last = seq
            complete = True
            # events are sorted by seq; skip to the first after the cursor
            start = max(0, seq - oldest + 1) if self._events else 0
            for i in range(start, len(self._events)):
                ev = self._events[i]
                if region is not None:
                    (x0, y0, z0), (x1, y1, z1) = region
                    if not (x0 <= ev.x <= x1 and y0 <= ev.y <= y1 and z0 <= ev.z <= z1):
                        last = ev.seq
                        continue
                if len(out) >= limit:
                    complete = False
                    break
                out.append(ev)
                last = ev.seq
        return Page(out, f"{self.instance}:{last}", False, complete, "")


def page_json(page: Page) -> dict[str, Any]:
    """The page as the world protocol's ``EventsSinceResult`` JSON (every field printed, 64-bit
    integers as strings: what ``mcb_rpc.pbjson.to_json`` gives for the message; tested), built
    from the events directly: a 1,000-event page as messages, then JSON, cost ~10 ms."""
    return {
        "events": [
            {
                "seq": str(e.seq),
                "x": e.x,
                "y": e.y,
                "z": e.z,
                "before": e.before,
                "after": e.after,
                "source": e.source,
                "playerId": e.player_id,
                "atMillis": str(e.at_millis),
                "operationId": e.operation_id,
                "playerName": e.player_name,
                "cause": e.cause,
            }
            for e in page.events
        ],
        "nextCursor": page.next_cursor,
        "resyncRequired": page.resync_required,
        "complete": page.complete,
        "reason": page.reason,
    }
