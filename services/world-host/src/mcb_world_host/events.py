"""Observed block events, in memory, behind a cursor that names this host instance.

Cursor text: ``<host_instance>:<seq>``. A cursor from another instance (the host restarted,
so events in between were never observed) or older than the oldest retained event answers
``resync_required`` with a reason and a fresh cursor. Sources: ``player`` (a person placed or
broke a block), ``environment``, ``external`` (never recorded: an external write is by
definition unobserved), ``ours`` (a batch the host applied, with its operation id). A player's
event carries the player's name, an environment event its cause (mcb_common.causes).
"""

from __future__ import annotations

import bisect
import itertools
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from mcb_common.errors import invalid
from mcb_common.eventrun import EventRun

MAX_PAGE = 1000  # events per events_since page (a 100,000-block apply's echoes: 100 pages)
RETAIN = 200_000


class Event(NamedTuple):  # one event of an events_since page in its `events` form
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


Run = EventRun  # what record_many was given, kept as one run (a batch's 512 echoes: one object)


def run_events(r: Run) -> list[Event]:
    """A run's events in their ``events`` form."""
    common = (r.source, r.player_id, r.at_millis, r.operation_id, r.player_name, r.cause)
    return [
        Event(r.first + i, x, y, z, b, a, *common)
        for i, (x, y, z, b, a) in enumerate(zip(r.x, r.y, r.z, r.before, r.after, strict=True))
    ]


@dataclass
class Page:
    events: list[Event]
    next_cursor: str
    resync_required: bool
    complete: bool
    reason: str
    runs: list[Run] = field(default_factory=list)  # instead of events when asked for runs


class EventLog:
    def __init__(self, instance: str, retain: int = RETAIN):
        self.instance = instance
        self._runs: deque[Run] = deque()
        self._firsts: deque[int] = deque()  # each run's first seq (bisected by since)
        self._count = 0  # events held (at most retain)
        self._retain = retain
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
        """Several changes (x, y, z, before, after) of one writer, at one time: a batch's echoes,
        numbered in order, kept as one run."""
        cols = [list(c) for c in zip(*changes, strict=True)]
        if not cols:
            return
        xs, ys, zs, befores, afters = cols
        with self._lock:
            at = int(time.time() * 1000)
            run = Run(
                self._seq + 1, source, player_id, at, operation_id, player_name, cause, xs, ys, zs, befores, afters
            )
            self._seq += len(xs)
            self._runs.append(run)
            self._firsts.append(run.first)
            self._count += len(xs)
            self._trim()

    def _trim(self) -> None:
        """Keep the last ``retain`` events: whole runs go first, then the head of the oldest."""
        while self._count > self._retain:
            oldest = self._runs[0]
            extra = self._count - self._retain
            if len(oldest.x) <= extra:
                self._runs.popleft()
                self._firsts.popleft()
                self._count -= len(oldest.x)
            else:
                self._runs[0] = oldest.part(extra, len(oldest.x))
                self._firsts[0] = self._runs[0].first
                self._count -= extra

    def cursor_now(self) -> str:
        with self._lock:
            return f"{self.instance}:{self._seq}"

    def since(
        self,
        cursor: str,
        limit: int = MAX_PAGE,
        region: tuple[tuple[int, int, int], tuple[int, int, int]] | None = None,
        runs: bool = False,
    ) -> Page:
        """The events after ``cursor`` (at most ``limit``, inside ``region`` when given), as
        ``events`` or, with ``runs``, as ``runs``: the same events either way."""
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
            oldest = self._firsts[0] if self._runs else self._seq + 1
            if self._runs and seq < oldest - 1:
                return Page(
                    [],
                    fresh,
                    True,
                    True,
                    f"events before #{oldest} were trimmed from memory; re-read the region and continue "
                    "from the new cursor.",
                )
            out: list[Run] = []
            taken = 0
            last = seq
            complete = True
            # the run holding the first event after the cursor, then on
            k = max(0, bisect.bisect_right(self._firsts, seq + 1) - 1)
            for r in itertools.islice(self._runs, k, None):
                i = max(0, seq + 1 - r.first)
                n = len(r.x)
                if region is None:
                    take = min(n - i, limit - taken)
                    if take < n - i:
                        complete = False
                    if take > 0:
                        out.append(r.part(i, i + take) if (i, take) != (0, n) else r)
                        taken += take
                        last = r.first + i + take - 1
                    if not complete:
                        break
                    continue
                (x0, y0, z0), (x1, y1, z1) = region
                i0 = j = i  # events i0..j-1 are inside, not yet taken
                while j < n:
                    if x0 <= r.x[j] <= x1 and y0 <= r.y[j] <= y1 and z0 <= r.z[j] <= z1:
                        if taken + (j - i0) >= limit:  # the page is full: this event is the next page's first
                            complete = False
                            break
                        j += 1
                        continue
                    if j > i0:
                        out.append(r.part(i0, j))
                        taken += j - i0
                    last = r.first + j  # outside: skipped, and the cursor passes it
                    j += 1
                    i0 = j
                if j > i0:
                    out.append(r.part(i0, j))
                    taken += j - i0
                    last = r.first + j - 1
                if not complete:
                    break
        if runs:
            return Page([], f"{self.instance}:{last}", False, complete, "", out)
        return Page([e for r in out for e in run_events(r)], f"{self.instance}:{last}", False, complete, "")


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
        "runs": [run_json(r) for r in page.runs],
    }


def run_json(r: Run) -> dict[str, Any]:
    """An ``EventRun`` in its JSON form: the states it names once each, the events' before and after
    as indices into them."""
    index: dict[str, int] = {}
    for s in r.before:
        index.setdefault(s, len(index))
    for s in r.after:
        index.setdefault(s, len(index))
    return {
        "firstSeq": str(r.first),
        "source": r.source,
        "playerId": r.player_id,
        "atMillis": str(r.at_millis),
        "operationId": r.operation_id,
        "playerName": r.player_name,
        "cause": r.cause,
        "states": list(index),
        "x": r.x,
        "y": r.y,
        "z": r.z,
        "before": [index[s] for s in r.before],
        "after": [index[s] for s in r.after],
    }
