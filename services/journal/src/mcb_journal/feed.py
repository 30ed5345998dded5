"""The change feed (``region_changes``): what happened in a region since a cursor, for the agent.

What an agent wants from it, in this order: did a person (or the game) change something I care
about, where, and is my view still complete? So:

* **A range, then pages.** A call with an open cursor fixes the range: every event after the
  cursor up to now. ``changes``, ``by_source`` (player / environment / ours), ``bounding_box``
  and ``affected_parts`` describe that whole range, not the page, and stay the same on every
  page of it. The last page's ``next_cursor`` is open again (it starts where the range ended).
* **People first.** Pages list the range's player events, then environment events, then our
  own writes (each oldest first), so a player's edit is on the first page however many blocks
  our operations wrote meanwhile. ``source`` filters the range (``player``, ``environment``,
  ``ours``, ``foreign`` = player + environment); its totals are still reported for every source.
* **Small pages.** A page is at most ``max_bytes`` of JSON (default 4096; at least one event per
  page) and ``limit`` events (default and maximum 100); ``remaining`` counts the range's events
  after this page.
* **Never silently incomplete.** A cursor from another world/epoch, past an observation gap or
  a trimmed log is ``resync_required`` (read a fresh summary, start with an empty cursor).

Cursor ``rc2.<world>.<epoch>.<key>.<since>.<upto>.<phase>.<after oid>``: ``upto`` 0 is an
open cursor (key: the region; any filter may read from it); otherwise the page continues the
fixed range (since, upto] at source ``phase`` after ``after`` (key: region and filter). ``rc1`` cursors of earlier versions are read as open cursors.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3

from .db import Database
from .history import History, bounds_of

PAGE_EVENTS = 100
PAGE_BYTES = 4096
PAGE_BYTES_MIN, PAGE_BYTES_MAX = 1024, 32768
ORDER = ("player", "environment", "ours")
FILTERS = {
    "": ORDER,
    "player": ("player",),
    "environment": ("environment",),
    "ours": ("ours",),
    "foreign": ("player", "environment"),
}
PARTS_LISTED = 20


def dumps(doc: Any) -> str:
    """The JSON text the agent receives (the bridge passes the document through unchanged)."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def region_key(box: Box, source: str | None = None) -> str:
    """The key a cursor carries: the region's, and for a page inside a range also the filter's
    (an open cursor can be read with any filter; a page's position depends on it)."""
    doc = {"box": box.as_dict()} | ({} if source is None else {"source": source})
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:12]


def _rc1_key(box: Box) -> str:
    return hashlib.sha256(json.dumps(box.as_dict(), sort_keys=True).encode()).hexdigest()[:12]


def parse_cursor(text: str, box: Box, source: str) -> tuple[str, str, int, int, int, int]:
    """(world prefix, epoch, since, upto, phase, after) of a cursor this journal issued."""
    parts = text.split(".")
    try:
        if parts[0] == "rc1" and len(parts) == 5:
            if parts[3] != _rc1_key(box):
                raise McbError(ErrorCode.INVALID_REQUEST, "since_cursor belongs to another region")
            return parts[1], parts[2], int(parts[4]), 0, 0, 0
        if parts[0] != "rc2" or len(parts) != 8:
            raise ValueError
        since, upto, phase, after = (int(v) for v in parts[4:])
        if min(since, upto, phase, after) < 0 or phase >= len(FILTERS[source]):
            raise ValueError
    except (ValueError, IndexError):
        raise McbError(ErrorCode.INVALID_REQUEST, "since_cursor is not one this server issued") from None
    if parts[3] != region_key(box, source if upto else None):
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            "since_cursor belongs to another region or (for a next page) "
            "another source filter; repeat the call with the same region "
            "and source",
        )
    return parts[1], parts[2], since, upto, phase, after


def _event(r: dict[str, Any]) -> dict[str, Any]:
    out = {
        "pos": {"x": r["x"], "y": r["y"], "z": r["z"]},
        "before": r["before"],
        "after": r["after"],
        "source": r["source"],
    }
    if r.get("op_id"):
        out["operation_id"] = r["op_id"]
    return out


def _bounds(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not rows:
        return None
    x0, y0, z0, x1, y1, z1 = bounds_of(rows)
    return Box(Vec3(x0, y0, z0), Vec3(x1, y1, z1)).as_dict()


def page_of(
    rows: list[dict[str, Any]],
    source: str,
    phase: int,
    after: int,
    head: dict[str, Any],
    limit: int,
    max_bytes: int,
    cursor_at: Callable[[int | None, int], str],
) -> dict[str, Any]:
    """One page of ``rows`` (the range's events, oldest first) for ``source``, resuming after
    (``phase``, ``after``): people first, at most ``limit`` events and ``max_bytes`` of JSON
    (at least one event). ``head``: the range's fields; ``cursor_at(phase, oid)`` a continuation
    cursor, ``cursor_at(None, 0)`` the open cursor after the range."""
    order = FILTERS[source]
    queue = sorted((r for r in rows if r["source"] in order), key=lambda r: (order.index(r["source"]), r["oid"]))
    queue = [r for r in queue if (order.index(r["source"]), r["oid"]) > (phase, after)]
    events: list[dict[str, Any]] = []

    def build(n: int) -> dict[str, Any]:
        done = n >= len(queue)
        last = queue[n - 1] if n else None
        nxt = (
            cursor_at(None, 0)
            if done
            else (cursor_at(order.index(last["source"]), last["oid"]) if last is not None else cursor_at(phase, after))
        )
        return head | {
            "events": events[:n],
            "remaining": len(queue) - n,
            "next_cursor": nxt,
            "complete": done,
            "resync_required": False,
        }

    doc = build(0)
    for i, r in enumerate(queue[:limit]):
        events.append(_event(r))
        trial = build(i + 1)
        if i and len(dumps(trial).encode()) > max_bytes:
            events.pop()
            break
        doc = trial
    return doc


def summarise(
    db: Database,
    caller_project: str,
    part_mask: Callable[[str], set[tuple[int, int, int]]],
    rows: list[dict[str, Any]],
    source: str,
) -> dict[str, Any]:
    """The range's fields: totals by source (all sources), the filtered count, its bounding box
    and the parts it touches (at most PARTS_LISTED, with their change counts)."""
    totals = Counter(r["source"] for r in rows)
    selected = [r for r in rows if r["source"] in FILTERS[source]]
    hits: Counter = Counter()
    if selected:
        positions = Counter((r["x"], r["y"], r["z"]) for r in selected)
        for pr in db.all("SELECT part_id, name FROM parts WHERE project_id=? ORDER BY name", caller_project):
            mask = part_mask(pr["part_id"])  # a blob read and a set: once per part
            n = sum(positions[p] for p in positions.keys() & mask)
            if n:
                hits[(pr["part_id"], pr["name"])] = n
    parts = [
        {"part_id": pid, "name": name, "changes": n}
        for (pid, name), n in sorted(hits.items(), key=lambda kv: (-kv[1], kv[0][1]))
    ]
    head: dict[str, Any] = {"changes": len(selected), "by_source": {s: totals[s] for s in ORDER if totals[s]}}
    if source:
        head["source"] = source
    head["bounding_box"] = _bounds(selected)
    head["affected_parts"] = parts[:PARTS_LISTED]
    if len(parts) > PARTS_LISTED:
        head["affected_parts_omitted"] = len(parts) - PARTS_LISTED
    return head


def range_rows(db: Database, box: Box, since: int, upto: int) -> list[dict[str, Any]]:
    b6 = (box.min.x, box.min.y, box.min.z, box.max.x, box.max.y, box.max.z)
    return History(db, b6).events_in(since, b6, 1 << 62, upto)
