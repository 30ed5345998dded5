"""Rollback by who and when (issue 32 item 4): a box back to how it was before one player's (or one
environment cause's) changes since a time, as an ordinary plan.

``rollback_rule`` is the rule, pure: for each position, the observed changes since the time
(oldest first, every source), the target's ones marked. The position returns to the state before
the **last run** of the target's changes there — the target's changes after which nobody else
touched it — and only when the world still holds what the target left (compare-and-set does the
rest at apply time). A position where someone else (a player, the environment, an operation of
ours) changed the block after the target is left alone and listed as a conflict with that source;
so is one whose state differs from what the target left with no event to say why (``external``).
Earlier changes by others between two of the target's stay undone by the target's later ones only
as far as the target's last run reaches back (their edit is what the target then broke).

``rollback_prepare`` gathers the facts (blame.changes_before: live and packed events; the world's
current states) and stores the plan with the usual summary — its consent list names the target's
player blocks the rollback would replace, so ``build_apply`` asks for ``replace_player_blocks``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.errors import ErrorCode, McbError

from . import blame
from .history import Pos, box_around
from .pbconv import box_pb, vec
from .plans import Plan, PlanOrigin, RollbackOf
from .planstore import store_plan
from .projects import Caller
from .worldread import read_states

if TYPE_CHECKING:
    from .context import JournalContext

MAX_EVENTS = 200_000  # observed changes considered per rollback


@dataclass(frozen=True)
class Conflict:
    pos: Pos
    expected: str  # what the target left
    current: str
    desired: str  # what the rollback would restore
    source: str  # who changed it after the target: player / environment / ours / external


def target_of(player: str, cause: str) -> Callable[[dict[str, Any]], bool]:
    """Whether an observed change is the target's: a player (name in any case, or id) or an environment cause
    (older events without a cause count as ``other``)."""
    if player:
        low = player.lower()
        return lambda r: (
            r["source"] == "player" and (r["player_id"] == player or (r["player_name"] or "").lower() == low)
        )
    return lambda r: r["source"] == "environment" and (r["cause"] or "other") == cause


def rollback_rule(
    events: Iterable[dict[str, Any]], is_target: Callable[[dict[str, Any]], bool], current: dict[Pos, str]
) -> tuple[list[tuple[Pos, str, str]], list[Conflict]]:
    """(keep, conflicts) from ``events`` (oldest first) and the world's ``current`` state per position:
    ``keep`` as plan entries (pos, current, restore), top-down; ``conflicts`` by position."""
    by_pos: dict[Pos, list[dict[str, Any]]] = {}
    for r in events:
        by_pos.setdefault((r["x"], r["y"], r["z"]), []).append(r)
    keep: list[tuple[Pos, str, str]] = []
    conflicts: list[Conflict] = []
    for p, rows in by_pos.items():
        marks = [is_target(r) for r in rows]
        if not any(marks):
            continue
        last = max(i for i, m in enumerate(marks) if m)
        first = last
        while first > 0 and marks[first - 1]:
            first -= 1
        restore, left = rows[first]["before"], rows[last]["after"]
        cur = current[p]
        if last + 1 < len(rows):
            conflicts.append(Conflict(p, left, cur, restore, rows[last + 1]["source"]))
        elif cur != left:
            conflicts.append(Conflict(p, left, cur, restore, "external"))
        elif cur != restore:
            keep.append((p, cur, restore))
    keep.sort(key=lambda k: (-k[0][1], k[0][2], k[0][0]))  # top-down, as undo: upper blocks removed first
    conflicts.sort(key=lambda c: (c.pos[1], c.pos[2], c.pos[0]))
    return keep, conflicts


def _events(db: Any, q: blame.Query) -> list[dict[str, Any]]:
    rows = blame.changes_before(db, q, 1 << 62, MAX_EVENTS + 1)
    if len(rows) > MAX_EVENTS:
        raise McbError(
            ErrorCode.BUDGET_EXCEEDED,
            f"more than {MAX_EVENTS:,} observed changes in this box since then; "
            "roll back a smaller box or a shorter time",
        )
    return list(reversed(rows))  # oldest first


async def rollback_prepare(
    core: JournalContext, caller: Caller, box: Any, player: str, cause: str, since_ms: int
) -> jpb.PlanSummary:
    project = core.projects.project_for(caller)
    if bool(player) == bool(cause):
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            "rollback needs exactly one of player (a name or id) or cause "
            "(an environment cause such as explosion or fire)",
        )
    q = blame.Query(box, since_ms=since_ms, cause=cause, player=player)
    blame.check_query(q, project.area)  # the same box, cause and player rules as region_history
    if since_ms <= 0:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            "since_millis is required: roll back changes made since when "
            "(Unix milliseconds; region_history shows the times)",
        )
    try:
        await core.observer.sync()
        observed_ok = True
    except McbError:
        observed_ok = False
    events = await core.reads.run(lambda db: _events(db, blame.Query(box, since_ms=since_ms)))
    is_target = target_of(player, cause)
    positions = sorted({(r["x"], r["y"], r["z"]) for r in events if is_target(r)})
    xyz = [c for p in positions for c in p]
    states = await read_states(core.world, xyz) if positions else []
    current = dict(zip(positions, states, strict=True))
    keep, found = rollback_rule((r for r in events if (r["x"], r["y"], r["z"]) in current), is_target, current)
    who = f"player {player}" if player else f"cause {cause}"
    conflicts = [
        jpb.Conflict(pos=vec(c.pos), expected=c.expected, current=c.current, desired=c.desired, source=c.source)
        for c in found
    ]
    warnings = [
        f"rollback of {who} since {since_ms}: {len(keep)} blocks return to how they were before; "
        f"{len(conflicts)} changed since by others stay as they are (listed as conflicts)"
    ]
    gaps = core.db.row("SELECT COUNT(*) AS n FROM observed WHERE kind='gap' AND at_ms>=?", since_ms)["n"]
    if gaps or not observed_ok:
        warnings.append(
            "block events were not observed for part of that time (world host restart or link loss): "
            "changes then are not rolled back"
        )
    info = await core.world.world_info()
    plan = Plan.from_entries(keep, info.world_uuid, info.epoch, f"rollback:{who}:{since_ms}")
    bounds = box_pb(box_around([k[0] for k in keep])) if keep else common_pb2.Box()
    return await store_plan(
        core,
        project,
        plan,
        bounds,
        warnings,
        conflicts,
        PlanOrigin(rollback_of=RollbackOf(player=player, cause=cause, since_millis=since_ms)),
    )
