"""Who placed the blocks a plan would replace, and the consent rule (issue 13 item 1).

Every prepare path (recipes, schematic imports, part regeneration, undo) ends in
``store_plan`` (planstore.py), which counts each non-air block the plan replaces by source:

* ``player``      — a person placed it (the world host observed a player event);
* ``environment`` — the game placed it (growth, spread, flow, ...);
* ``ours``        — one of our operations wrote it (an observed echo, or the journal's own
  ``written`` record when the echo was not observed);
* ``unknown``     — no record: terrain, blocks placed before the journal observed the world
  (or while observation was interrupted), changes that emit no event.

The rule (``placed_by``) reads a position's history newest first and follows its current
block id back to the event that put it there: events that only change the block's state
(a crop's age, a fence's connections, snowy grass) do not change who placed it. If the
history breaks (the newest event with this block id is missing, or something unobserved
changed it) the journal's own last write decides (``ours`` when it wrote this block id),
else ``unknown``. Nothing is ever guessed to be a player or not a player from the block
itself.

``build_apply`` refuses a plan with ``player`` blocks unless the call carries
``replace_player_blocks: true`` (``player_blocks_would_be_replaced``, listing them). A player
block placed *after* prepare is not in the summary: the plan's base state no longer matches,
so compare-and-set stops the write as a conflict (never overwritten).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mcb_common.errors import ErrorCode, McbError

from .db import Database
from .history import History

Pos = tuple[int, int, int]
SOURCES = ("player", "environment", "ours", "unknown")
POSITIONS_LISTED = 20


def block_id(state: str) -> str:
    return state.partition("[")[0]


def placed_by(base: str, events: Sequence[tuple[Any, ...]], last_write_after: str | None) -> str:
    """The source of the block ``base`` at one position.

    ``events``: the position's observed events, oldest first, as tuples ending in
    ``(source, before, after)``. ``last_write_after``: the state our last write there left
    (None: we never wrote there).
    """
    want = block_id(base)
    for e in reversed(events):
        source, before, after = e[-3], e[-2], e[-1]
        if block_id(after) != want:
            break  # changed since without an event: the events no longer explain this block
        if block_id(before) != want:
            return source if source in ("player", "environment", "ours") else "unknown"
        # a state change of the same block (age, connections, ...): keep looking further back
    if last_write_after is not None and block_id(last_write_after) == want:
        return "ours"
    return "unknown"


def count_sources(
    replaced: Iterable[tuple[Pos, str]], sources: dict[Pos, str], listed: int = POSITIONS_LISTED
) -> dict[str, Any]:
    """``{"total", "by_source": {source: {"count", "positions"}}}`` (positions lowest (y, z, x)
    first, at most ``listed``; sources in SOURCES order, only those with blocks). A position
    missing from ``sources`` is ``unknown``."""
    groups: dict[str, list[Pos]] = {s: [] for s in SOURCES}
    total = 0
    for p, _ in replaced:
        groups[sources.get(p, "unknown")].append(p)
        total += 1
    out: dict[str, Any] = {"total": total, "by_source": {}}
    for s in SOURCES:
        ps = groups[s]
        if ps:
            first = heapq.nsmallest(listed, ps, key=lambda p: (p[1], p[2], p[0]))
            out["by_source"][s] = {"count": len(ps), "positions": [list(p) for p in first]}
    return out


def classify(db: Database, replaced: Sequence[tuple[Pos, str]]) -> dict[Pos, str]:
    """The source of the replaced ``(position, base state)`` pairs that have one in the journal's
    records (observed events and our own writes, live and packed: a packed echo of ours says
    nothing its packed write does not), read once over their bounds; positions left out are
    ``unknown``."""
    if not replaced:
        return {}
    xs, ys, zs = zip(*(p for p, _ in replaced), strict=True)
    b6 = (min(xs), min(ys), min(zs), max(xs), max(ys), max(zs))
    history = History(db, b6)
    rows = history.live_event_tuples_in(b6)
    writes = history.last_writes_in(b6)
    if not rows and not writes:  # terrain: nothing was ever recorded here
        return {}
    base_of = dict(replaced)
    events: dict[Pos, list[tuple[Any, ...]]] = {}  # rows (oid, x, y, z, source, before, after)
    for row in rows:
        p = row[1:4]
        if p in base_of:
            got = events.get(p)
            if got is None:
                events[p] = [row]
            else:
                got.append(row)
    out: dict[Pos, str] = {}
    for p in events.keys() | (writes.keys() & base_of.keys()):
        evs = events.get(p, ())
        if len(evs) > 1:
            evs.sort()  # by oid
        src = placed_by(base_of[p], evs, writes.get(p))
        if src != "unknown":
            out[p] = src
    return out


def refusal(replaced: Mapping[str, Any] | None) -> McbError | None:
    """The ``player_blocks_would_be_replaced`` error for a plan's stored ``replaced`` record
    (``PlanMeta.replaced``, planstore.py), None when it replaces no player block."""
    replaced = replaced or {}
    player = replaced.get("by_source", {}).get("player")
    if not player:
        return None
    n = player["count"]
    shown = player["positions"]
    return McbError(
        ErrorCode.PLAYER_BLOCKS_WOULD_BE_REPLACED,
        f"this plan replaces {n} block(s) a player placed, e.g. at {shown[0]}; ask the player, and only with "
        "their consent repeat build_apply with replace_player_blocks: true — or prepare a plan that leaves them",
        details={
            "player_blocks": n,
            "replaced_total": replaced["total"],
            "positions": [{"x": x, "y": y, "z": z} for x, y, z in shown],
            "positions_omitted": max(0, n - len(shown)),
        },
    )
