"""The history map (``HistoryMap``, issue 32 item 3): the last change of each column (x, z) of a box
up to a time — what the dashboard colours by who made it.

The same observed changes as ``region_history`` (blame.py: live rows and packed echoes), reduced to
the newest one per column with ``at_ms <= until``; any y of the box counts. Rules:

* **Bounded**: at most ``MAX_SIDE`` x ``MAX_SIDE`` columns (a 256 x 256 area is one map).
* **The caller's project only**: the box lies inside the project's area; another project's
  operation is ``ours`` without its id (as in blame.py).
* **Legend**: one entry per player (id, else name), environment cause (``other`` when the host sent
  none) or operation, with the number of columns it last changed; columns point into it.
* ``first_millis`` / ``last_millis``: the box's oldest and newest change at any time (a time
  slider's ends), so the map before the first change is empty.

Transport-free (STYLE habit 1): the servicer validates the message and calls ``history_map``.
"""

from __future__ import annotations

from typing import Any

from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box

from . import policy
from .blame import _gap_note
from .db import Database
from .history import EVENT_INTS, EVENT_RECORDS, EVENT_STRS, last_oid, unpack_rows
from .projects import Caller

MAX_SIDE = 256
_FAR = 1 << 62


def check(box: Box, area: Box) -> None:
    refused = policy.box_refusal(
        area, box, f"history map: the box is outside the project area {area.as_dict()}; ask about a box inside it"
    )
    if refused is not None:
        raise refused
    w, d = box.max.x - box.min.x + 1, box.max.z - box.min.z + 1
    if w > MAX_SIDE or d > MAX_SIDE:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"history map: the box is {w} x {d} columns; at most {MAX_SIDE} x {MAX_SIDE} — ask for a part of it",
            details={"max_side": MAX_SIDE},
        )


def last_per_column(db: Database, box: Box, until_ms: int) -> dict[tuple[int, int], dict[str, Any]]:
    """(x, z) -> the newest change of that column at or before ``until_ms`` (live rows ∪ packed echoes)."""
    b = box
    out: dict[tuple[int, int], dict[str, Any]] = {}
    # SQLite: with MAX() the bare columns come from the row that holds the maximum
    for row in db.all(
        "SELECT MAX(oid) AS oid, x, z, source, player_id, player_name, cause, op_id, at_ms FROM observed"
        " WHERE kind='event' AND at_ms<=? AND x BETWEEN ? AND ? AND z BETWEEN ? AND ? AND y BETWEEN ? AND ?"
        " GROUP BY x, z",
        until_ms,
        b.min.x,
        b.max.x,
        b.min.z,
        b.max.z,
        b.min.y,
        b.max.y,
    ):
        out[(row["x"], row["z"])] = dict(row)
    for pk in db.all(
        f"SELECT op_id, data, sha256 FROM {EVENT_RECORDS} WHERE x0<=? AND x1>=? AND y0<=? AND y1>=? AND z0<=? AND z1>=?",
        b.max.x,
        b.min.x,
        b.max.y,
        b.min.y,
        b.max.z,
        b.min.z,
    ):
        for p in unpack_rows(pk["data"], pk["sha256"], EVENT_INTS, EVENT_STRS, f"packed_events/{pk['op_id']}"):
            if p["at_ms"] > until_ms or not (
                b.min.x <= p["x"] <= b.max.x and b.min.y <= p["y"] <= b.max.y and b.min.z <= p["z"] <= b.max.z
            ):
                continue
            have = out.get((p["x"], p["z"]))
            if have is None or have["oid"] < p["oid"]:
                out[(p["x"], p["z"])] = {
                    "oid": p["oid"],
                    "x": p["x"],
                    "z": p["z"],
                    "source": "ours",
                    "player_id": "",
                    "player_name": "",
                    "cause": "",
                    "op_id": pk["op_id"],
                    "at_ms": p["at_ms"],
                }
    return out


def time_range(db: Database, box: Box) -> tuple[int, int]:
    """The box's oldest and newest change (0, 0 when none)."""
    b = box
    lo, hi = _FAR, 0
    r = db.row(
        "SELECT MIN(at_ms) AS lo, MAX(at_ms) AS hi FROM observed WHERE kind='event' AND x BETWEEN ? AND ?"
        " AND z BETWEEN ? AND ? AND y BETWEEN ? AND ?",
        b.min.x,
        b.max.x,
        b.min.z,
        b.max.z,
        b.min.y,
        b.max.y,
    )
    if r["hi"] is not None:
        lo, hi = r["lo"], r["hi"]
    for pk in db.all(
        f"SELECT data, sha256, op_id FROM {EVENT_RECORDS} WHERE x0<=? AND x1>=? AND y0<=? AND y1>=? AND z0<=? AND z1>=?",
        b.max.x,
        b.min.x,
        b.max.y,
        b.min.y,
        b.max.z,
        b.min.z,
    ):
        for e in unpack_rows(pk["data"], pk["sha256"], EVENT_INTS, EVENT_STRS, f"packed_events/{pk['op_id']}"):
            if b.min.x <= e["x"] <= b.max.x and b.min.y <= e["y"] <= b.max.y and b.min.z <= e["z"] <= b.max.z:
                lo, hi = min(lo, e["at_ms"]), max(hi, e["at_ms"])
    return (0, 0) if hi == 0 else (lo, hi)


def _mine(db: Database, project_id: str, ops: set[str]) -> set[str]:
    mine = set()
    for op in ops:
        row = db.one("SELECT project_id FROM operations WHERE op_id=?", op)
        if row is not None and row["project_id"] == project_id:
            mine.add(op)
    return mine


def who_of(r: dict[str, Any], mine: set[str]) -> dict[str, str]:
    """The legend entry a column's last change belongs to."""
    if r["source"] == "player":
        return {"source": "player", "player_id": r["player_id"] or "", "player_name": r["player_name"] or ""}
    if r["source"] == "environment":
        return {"source": "environment", "cause": r["cause"] or "other"}
    return {"source": "ours", "operation_id": r["op_id"] if r["op_id"] in mine else ""}


def build(db: Database, caller: Caller, area: Box, box: Box, until_ms: int, latest_oid: int) -> dict[str, Any]:
    """The map document (module docstring): columns as parallel lists, the legend, the time range."""
    check(box, area)
    until = until_ms or _FAR
    cols = last_per_column(db, box, until)
    mine = _mine(db, caller.project_id, {r["op_id"] for r in cols.values() if r["source"] == "ours" and r["op_id"]})
    legend: list[dict[str, Any]] = []
    index: dict[tuple[str, ...], int] = {}
    doc: dict[str, Any] = {"x": [], "z": [], "who": [], "at_millis": []}
    for (x, z), r in sorted(cols.items()):
        w = who_of(r, mine)
        # a player is one entry whatever name the host sent with each change (id first)
        key = (
            w["source"],
            w.get("player_id") or w.get("player_name", ""),
            w.get("cause", ""),
            w.get("operation_id", ""),
        )
        i = index.get(key)
        if i is None:
            i = index[key] = len(legend)
            legend.append(w | {"columns": 0})
        legend[i]["columns"] += 1
        if w.get("player_name") and not legend[i].get("player_name"):
            legend[i]["player_name"] = w["player_name"]  # a name, where a column's change carried one
        doc["x"].append(x)
        doc["z"].append(z)
        doc["who"].append(i)
        doc["at_millis"].append(r["at_ms"])
    doc["legend"] = legend
    doc["first_millis"], doc["last_millis"] = time_range(db, box)
    # as blame.page: a gap after the oldest change shown may hide changes (one before it, e.g. the
    # journal's first "observation started", hides nothing the map shows)
    note = _gap_note(db, min(r["oid"] for r in cols.values()), latest_oid + 1) if cols else ""
    if note:
        doc["note"] = note
    return doc


async def history_map(core: Any, caller: Caller, box: Box, until_ms: int) -> dict[str, Any]:
    """The RPC: the host's latest events pulled first (as blame.region_history), then the map in a
    read snapshot."""
    area = core.projects.project_for(caller).area
    unread = ""
    if core.observer is not None:
        try:
            await core.observer.sync()
        except McbError as err:
            unread = f"the world host's latest events could not be read ({err.message[:120]}); the newest changes may be missing"
    latest = last_oid(core.db)
    doc = await core.reads.run(lambda db: build(db, caller, area, box, until_ms, latest))
    if unread:
        doc["note"] = "; ".join(n for n in (unread, doc.get("note", "")) if n)
    return doc
