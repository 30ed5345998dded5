"""Block history (``region_history``, issue 32): who or what changed each position of a box, and when.

The answer comes from the journal's copy of the world host's observed events (observer.py): a
player's edit with the player's id and name, an environment change with its cause
(mcb_common.causes), and our own writes as the host echoed them (source ``ours``, live or packed
— history.py) with their operation and the player whose request started it. What the journal did
not observe (a silent external write, an observation gap) is not in it; a page says so in
``note`` when a gap falls in what it covers.

Rules:

* **Newest first**, one entry per observed change; a position changed three times has three.
* **The caller's project only**: the box must lie inside the project's area, and another
  project's operation is shown as ``ours`` without its id.
* **Pages**: at most ``limit`` entries (default 50, at most 100) and ``max_bytes`` of JSON as
  the agent receives it (default 3072: the MCP result stays within its 4 KB budget), at least
  one entry. ``next_cursor`` (``rh1.<key>.<oid>``) continues below the page's oldest entry; the
  key binds it to the box and the filters.
* **Filters**: ``since_millis`` (changes at or after), ``player`` (a name, any case, or an id),
  ``cause`` (an environment cause; older environment events without one count as ``other``).

Transport-free (STYLE habit 1): the servicer validates the message and calls ``region_history``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from mcb_common.causes import CAUSES
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box

from . import policy
from .db import Database
from .history import EVENT_INTS, EVENT_RECORDS, EVENT_STRS, last_oid, unpack_rows
from .projects import Caller

PAGE_ENTRIES, PAGE_ENTRIES_MAX = 50, 100
PAGE_BYTES = 3072
PAGE_BYTES_MIN, PAGE_BYTES_MAX = 1024, 32768
_COLS = "oid, x, y, z, before, after, source, player_id, player_name, cause, op_id, at_ms"


@dataclass(frozen=True)
class Query:
    box: Box
    cursor: str = ""
    limit: int = 0
    max_bytes: int = 0
    since_ms: int = 0
    player: str = ""
    cause: str = ""

    def key(self) -> str:
        doc = {"box": self.box.as_dict(), "since": self.since_ms, "player": self.player.lower(), "cause": self.cause}
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:12]


def dumps(doc: Any) -> str:
    """The JSON text the agent receives (the bridge renders the same document)."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def entry_doc(r: dict[str, Any]) -> dict[str, Any]:
    """One change as the agent reads it: empty fields left out."""
    out: dict[str, Any] = {
        "pos": {"x": r["x"], "y": r["y"], "z": r["z"]},
        "at_millis": r["at_ms"],
        "source": r["source"],
    }
    for k in ("player_name", "player_id", "cause", "operation_id", "asked_by", "prompt"):
        if r.get(k):
            out[k] = r[k]
    out["before"], out["after"] = r["before"], r["after"]
    return out


def check_query(q: Query, area: Box) -> tuple[int, int, int]:
    """(limit, max_bytes, before oid) of a valid query, else an error a person can act on."""
    refused = policy.box_refusal(
        area, q.box, f"region_history: the box is outside the project area {area.as_dict()}; ask about a box inside it"
    )
    if refused is not None:
        raise refused
    if q.limit > PAGE_ENTRIES_MAX:
        raise McbError(ErrorCode.INVALID_REQUEST, f"limit is at most {PAGE_ENTRIES_MAX} (default {PAGE_ENTRIES})")
    max_bytes = q.max_bytes or PAGE_BYTES
    if not PAGE_BYTES_MIN <= max_bytes <= PAGE_BYTES_MAX:
        raise McbError(
            ErrorCode.INVALID_REQUEST, f"max_bytes is {PAGE_BYTES_MIN}..{PAGE_BYTES_MAX} (default {PAGE_BYTES})"
        )
    if q.cause and q.cause not in CAUSES:
        raise McbError(ErrorCode.INVALID_REQUEST, f"cause {q.cause[:40]!r} is unknown; use one of {', '.join(CAUSES)}")
    if q.player and q.cause:
        raise McbError(ErrorCode.INVALID_REQUEST, "give player or cause, not both (a change has one or the other)")
    if len(q.player) > 64:
        raise McbError(ErrorCode.INVALID_REQUEST, "player is a player's name or id (at most 64 characters)")
    before = 1 << 62
    if q.cursor:
        parts = q.cursor.split(".")
        if len(parts) != 3 or parts[0] != "rh1" or not parts[2].isdigit():
            raise McbError(
                ErrorCode.INVALID_REQUEST, "cursor is not one region_history issued; start with an empty one"
            )
        if parts[1] != q.key():
            raise McbError(
                ErrorCode.INVALID_REQUEST,
                "cursor belongs to another box or other filters; repeat the "
                "call with the same region, since_millis, player and cause",
            )
        before = int(parts[2])
    return q.limit or PAGE_ENTRIES, max_bytes, before


def _filters(q: Query) -> tuple[str, list[Any]]:
    if q.player:
        return " AND source='player' AND (player_id=? OR lower(player_name)=lower(?))", [q.player, q.player]
    if q.cause:
        other = " OR cause=''" if q.cause == "other" else ""
        return f" AND source='environment' AND (cause=?{other})", [q.cause]
    return "", []


def changes_before(db: Database, q: Query, before: int, n: int) -> list[dict[str, Any]]:
    """The ``n`` newest observed changes in ``q.box`` with oid < ``before`` that match the filters,
    newest first: live rows (every foreign event, our echoes not packed yet) ∪ packed echoes."""
    b = q.box
    extra, args = _filters(q)
    rows = {
        r["oid"]: dict(r)
        for r in db.all(
            f"SELECT {_COLS} FROM observed WHERE kind='event' AND oid<? AND at_ms>=? AND x BETWEEN ? AND ?"
            f" AND y BETWEEN ? AND ? AND z BETWEEN ? AND ?{extra} ORDER BY oid DESC LIMIT ?",
            before,
            q.since_ms,
            b.min.x,
            b.max.x,
            b.min.y,
            b.max.y,
            b.min.z,
            b.max.z,
            *args,
            n,
        )
    }
    if not (q.player or q.cause):  # packed rows are only our echoes
        for pk in db.all(
            f"SELECT op_id, data, sha256 FROM {EVENT_RECORDS} WHERE lo<? AND x0<=? AND x1>=? AND y0<=?"
            " AND y1>=? AND z0<=? AND z1>=?",
            before,
            b.max.x,
            b.min.x,
            b.max.y,
            b.min.y,
            b.max.z,
            b.min.z,
        ):
            for r in unpack_rows(pk["data"], pk["sha256"], EVENT_INTS, EVENT_STRS, f"packed_events/{pk['op_id']}"):
                if (
                    r["oid"] < before
                    and r["at_ms"] >= q.since_ms
                    and r["oid"] not in rows
                    and b.min.x <= r["x"] <= b.max.x
                    and b.min.y <= r["y"] <= b.max.y
                    and b.min.z <= r["z"] <= b.max.z
                ):
                    rows[r["oid"]] = r | {"source": "ours", "player_name": "", "cause": "", "op_id": pk["op_id"]}
    return sorted(rows.values(), key=lambda r: -r["oid"])[:n]


def _attribute(db: Database, project_id: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row with its operation's details (ours) or its cause (environment: ``other`` when the
    host sent none)."""
    ops = {r["op_id"] for r in rows if r["source"] == "ours" and r["op_id"]}
    known: dict[str, tuple[str, str, str]] = {}
    for op in ops:
        row = db.one(
            "SELECT o.project_id, COALESCE(e.player_id, '') AS asked_by, COALESCE(e.prompt, '') AS prompt"
            " FROM operations o LEFT JOIN op_extra e ON e.op_id=o.op_id WHERE o.op_id=?",
            op,
        )
        if row is not None:
            known[op] = (row["project_id"], row["asked_by"], row["prompt"])
    out = []
    for r in rows:
        d = dict(r)
        if d["source"] == "ours":
            project, asked, prompt = known.get(d["op_id"], ("", "", ""))
            mine = project == project_id
            d["operation_id"], d["asked_by"], d["prompt"] = (d["op_id"], asked, prompt) if mine else ("", "", "")
            d["player_id"] = d["player_name"] = ""
        elif d["source"] == "environment":
            d["cause"] = d["cause"] or "other"
        out.append(d)
    return out


def _gap_note(db: Database, oldest: int, newest: int) -> str:
    gap = db.one(
        "SELECT at_ms, reason FROM observed WHERE kind='gap' AND oid>? AND oid<? ORDER BY oid DESC LIMIT 1",
        oldest,
        newest,
    )
    if gap is None:
        return ""
    return (
        f"observation was interrupted ({gap['reason'][:160]}); changes made while it was (and silent "
        "external writes) are not listed — region_inspect shows the blocks as they are"
    )


def page(db: Database, caller: Caller, area: Box, q: Query, latest_oid: int) -> dict[str, Any]:
    """One page of the box's history (module docstring)."""
    limit, max_bytes, before = check_query(q, area)
    rows = _attribute(db, caller.project_id, changes_before(db, q, before, limit + 1))
    more = len(rows) > limit
    rows = rows[:limit]
    entries: list[dict[str, Any]] = []
    doc: dict[str, Any] = {}
    for i, r in enumerate(rows):
        entries.append(entry_doc(r))
        last = i == len(rows) - 1 and not more
        trial = {"entries": entries, "next_cursor": "" if last else f"rh1.{q.key()}.{r['oid']}", "complete": last}
        if i and len(dumps(trial).encode()) > max_bytes:
            entries.pop()  # doc: the page before this entry, with its cursor
            break
        doc = trial
    if not rows:
        doc = {"entries": [], "next_cursor": "", "complete": True}
    oldest = rows[len(doc["entries"]) - 1]["oid"] if doc["entries"] else 0
    note = _gap_note(db, oldest, min(before, latest_oid + 1))
    if note:
        doc["note"] = note
    return doc


async def region_history(core: Any, caller: Caller, q: Query) -> dict[str, Any]:
    """The RPC: the caller's project, the host's latest events pulled first (a failure to pull
    them is said in ``note``, the stored history is still answered), then a page in a read snapshot."""
    area = core.projects.project_for(caller).area
    unread = ""
    if core.observer is not None:
        try:
            await core.observer.sync()
        except McbError as err:
            unread = f"the world host's latest events could not be read ({err.message[:120]}); the newest changes may be missing"
    latest = last_oid(core.db)
    doc = await core.reads.run(lambda db: page(db, caller, area, q, latest))
    if unread:
        doc["note"] = "; ".join(n for n in (unread, doc.get("note", "")) if n)
    return doc
