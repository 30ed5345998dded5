"""What changed in the world, and who changed it: the change feed (``region_changes``) and the
source of a change at given positions (``classify``: conflicts of an apply or a regeneration).

Both read the observed events (observer.py keeps them current; history.py answers from live
and packed rows). feed.py holds the feed's pure rules (ranges, people first, page size, cursor
format); this module checks the cursor against the world and the log and calls them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box

from . import feed, worldid
from .context import JournalContext
from .db import Database
from .history import History, Pos
from .observer import Observer
from .projects import Caller


async def classify(db: Database, observer: Observer, positions: list[Pos], since_oid: int) -> dict[Pos, str]:
    """Who changed each position since ``since_oid``: player / environment / external.

    ``external`` means no observed event explains the change (a plugin, an editor, a
    path that emits no event) — never guessed to be a player.
    """
    try:
        await observer.sync()
    except McbError:
        pass
    out: dict[Pos, str] = {}
    for p in positions:
        row = db.one(
            "SELECT source FROM observed WHERE kind='event' AND x=? AND y=? AND z=? AND oid>? AND source!='ours'"
            " ORDER BY oid DESC LIMIT 1",
            p[0],
            p[1],
            p[2],
            since_oid,
        )
        out[p] = row["source"] if row is not None else "external"
    return out


class Changes:
    def __init__(self, ctx: JournalContext, part_mask: Callable[[str], set[Pos]]):
        self.ctx = ctx
        self.db = ctx.db
        self.observer = ctx.observer
        self.part_mask = part_mask  # parts.Parts.part_mask: which part a changed block belongs to

    async def region_changes(
        self, caller: Caller, box: Box, since_cursor: str, limit: int, source: str = "", max_bytes: int = 0
    ) -> dict[str, Any]:
        """The change feed; feed.py has the rules (ranges, people first, page size)."""
        self.ctx.projects.project_for(caller)
        if source not in feed.FILTERS:
            raise McbError(
                ErrorCode.INVALID_REQUEST,
                f"source {source!r} is unknown; use player, environment, ours, "
                "foreign (player + environment) or leave it empty for all",
            )
        limit = feed.PAGE_EVENTS if limit <= 0 else min(limit, feed.PAGE_EVENTS)
        max_bytes = max_bytes or feed.PAGE_BYTES
        if not feed.PAGE_BYTES_MIN <= max_bytes <= feed.PAGE_BYTES_MAX:
            raise McbError(
                ErrorCode.INVALID_REQUEST,
                f"max_bytes is {feed.PAGE_BYTES_MIN}..{feed.PAGE_BYTES_MAX} (default {feed.PAGE_BYTES})",
            )
        info = await self.ctx.world.world_info()
        try:
            await self.observer.sync()
        except McbError as err:
            raise McbError(ErrorCode.UNAVAILABLE, f"cannot read the world host's events: {err.message}") from err
        latest = self.observer.last_oid()

        def cursor(since: int, upto: int = 0, phase: int = 0, after: int = 0) -> str:
            key = feed.region_key(box, source if upto else None)
            return f"rc2.{info.world_uuid[:8]}.{info.epoch}.{key}.{since}.{upto}.{phase}.{after}"

        if not since_cursor:
            return {
                "changes": 0,
                "by_source": {},
                "events": [],
                "remaining": 0,
                "next_cursor": cursor(latest),
                "complete": True,
                "resync_required": False,
                "note": "fresh cursor: changes after this moment will be reported",
            }
        wid, epoch, since, upto, phase, after = feed.parse_cursor(since_cursor, box, source)
        upto = upto or latest  # an open cursor: this call fixes the range (since, upto]
        reason = ""
        worldid.check("this change cursor", wid, info.world_uuid)
        if wid != info.world_uuid[:8] or epoch != str(info.epoch):
            reason = "the world or its epoch changed since this cursor"
        elif since > latest or upto > latest or since > upto:
            reason = "the cursor is ahead of this journal's log (was the journal reset?)"
        else:
            gap = self.db.one(
                "SELECT reason FROM observed WHERE kind='gap' AND oid>? AND oid<=? ORDER BY oid LIMIT 1", since, upto
            )
            if gap is not None:
                reason = f"observation was interrupted: {gap['reason']}"
            oldest = History(self.db).oldest_oid()
            if oldest is not None and since < oldest - 1:
                reason = "the change log was trimmed past this cursor"
        if reason:
            raise McbError(
                ErrorCode.RESYNC_REQUIRED,
                f"{reason}; read a fresh region_inspect summary, then call region_changes with an "
                "empty since_cursor to start again",
                details={"next_cursor": cursor(latest)},
            )
        rows = await self.ctx.reads.run(lambda db: feed.range_rows(db, box, since, upto))
        head = feed.summarise(self.db, caller.project_id, self.part_mask, rows, source)
        return feed.page_of(
            rows,
            source,
            phase,
            after,
            head,
            limit,
            max_bytes,
            lambda ph, oid: cursor(upto) if ph is None else cursor(since, upto, ph, oid),
        )
