"""The plan a chat turn prepared and left for the player to decide, and its in-game preview
(issue 32 item 2; docs/chat.md, *Previews*).

A turn whose agent called ``build_prepare`` (or ``schematic_import_prepare``) and ended without
applying that plan — because the player asked to see it first, or because ``build_apply`` was
refused with ``player_blocks_would_be_replaced`` — leaves it *pending* for the player who asked.
The bridge reads the plan's entries from the journal (``PlanEntries``, agent token, the player's
project: the journal refuses another project's plan) and hands them to the world host
(``chat_preview``, admin token, as the chat lease holder); a Paper host shows them to that player
alone as client-side blocks. Nothing is written: the only writer stays the journal's executor,
through ``build_apply``. ``/ai apply`` applies the pending plan (the player's consent, also to
replacing players' blocks the offer named), ``/ai reject`` drops it; either clears the preview, as
does the agent applying the plan in a later turn. A host without previews (the embedded one) still
offers ``/ai apply`` and ``/ai reject``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from mcb.journal.v1 import journal_pb2
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError

log = logging.getLogger("mcb.chat")

PREPARE_TOOLS = ("build_prepare", "schematic_import_prepare")
MAX_PREVIEW_BLOCKS = 32_768  # the host's limit (Previews.MAX_BLOCKS, world.proto ChatPreviewParams)


@dataclass(frozen=True)
class PendingPlan:
    project: str
    player: str
    plan_id: str
    plan_hash: str
    changed: int
    player_blocks: int  # blocks placed by players the plan replaces (the consent question)
    expires_at: str


def player_blocks(summary: dict[str, Any]) -> int:
    """How many blocks placed by players a plan summary (the prepare tool's result) replaces."""
    replaced = summary.get("replaced") or {}
    for s in replaced.get("by_source") or []:
        if isinstance(s, dict) and s.get("source") == "player":
            return int(s.get("count") or 0)
    return 0


def pending_from(project: str, player: str, summary: dict[str, Any]) -> PendingPlan | None:
    """The pending plan a prepare tool's result describes (None without a plan or a change)."""
    plan_id, plan_hash = summary.get("plan_id"), summary.get("plan_hash")
    changed = int(summary.get("changed_blocks") or 0)
    if not plan_id or not plan_hash or changed <= 0:
        return None
    return PendingPlan(
        project,
        player,
        str(plan_id),
        str(plan_hash),
        changed,
        player_blocks(summary),
        str(summary.get("expires_at") or ""),
    )


def offer_text(plan: PendingPlan, shown: str) -> str:
    """What the player is told about a pending plan; ``shown`` says whether and how they see it."""
    consent = (
        f" It replaces {plan.player_blocks} block(s) placed by players: /ai apply agrees to that."
        if plan.player_blocks
        else ""
    )
    return (
        f"plan {plan.plan_id}: {plan.changed} blocks to change, not built yet. {shown} "
        f"/ai apply builds it, /ai reject drops it.{consent}"
    )


class PlanPreviews:
    """Pending plans per player and their previews on the host (one pending plan per player: a
    newer one replaces the older)."""

    def __init__(self, host: Any, client_id: str, journal: Any):
        self.host, self.client_id, self.journal = host, client_id, journal
        self.pending: dict[str, PendingPlan] = {}

    async def offer(self, plan: PendingPlan) -> str:
        """Keep ``plan`` as the player's pending plan and show it in game where the host can;
        returns the line for the player."""
        self.pending[plan.player] = plan
        try:
            resp: journal_pb2.PlanEntriesResponse = await self.journal(plan.project, plan.player, plan.plan_id)
            if len(resp.desired) > MAX_PREVIEW_BLOCKS:
                return offer_text(
                    plan, f"It is too large to show in game ({len(resp.desired)} blocks, at most {MAX_PREVIEW_BLOCKS})."
                )
            res = await self.host.chat_preview(
                world_pb2.ChatPreviewParams(
                    client_id=self.client_id,
                    player_id=plan.player,
                    plan_id=plan.plan_id,
                    palette=list(resp.palette),
                    xyz=list(resp.xyz),
                    desired=list(resp.desired),
                    show=True,
                    expires_at_millis=_millis(resp.expires_at),
                )
            )
        except McbError as exc:
            if (exc.details or {}).get("reason") == "no_previews":
                return offer_text(plan, "(This world host cannot show it in game.)")
            log.warning("cannot show plan %s to %s: %s", plan.plan_id, plan.player, exc.code)
            return offer_text(plan, f"(It cannot be shown in game: {exc.message})")
        shown = (
            "You see it in game now; only you do (/ai preview hides or shows it)."
            if res.shown
            else "/ai preview shows it in game (only to you)."
        )
        return offer_text(plan, shown)

    async def toggle(self, player: str) -> str:
        """`/ai preview` when it reaches the bridge (a line the host queued rather than answered)."""
        plan = self.pending.get(player)
        if plan is None:
            return "no plan of yours is waiting: ask /ai for a build first"
        try:
            res = await self.host.chat_preview(
                world_pb2.ChatPreviewParams(
                    client_id=self.client_id, player_id=player, plan_id=plan.plan_id, toggle=True
                )
            )
        except McbError as exc:
            if (exc.details or {}).get("reason") != "no_previews":
                raise
            return (
                f"this world host cannot show plans in game; plan {plan.plan_id} waits: "
                "/ai apply builds it, /ai reject drops it"
            )
        if not res.blocks:
            return f"plan {plan.plan_id} has no preview any more (expired?); /ai apply or /ai reject decide"
        if res.shown:
            return (
                f"showing plan {plan.plan_id} ({res.blocks} blocks, only you see them); "
                "/ai apply builds it, /ai reject drops it"
            )
        return f"plan {plan.plan_id} hidden: you see the real blocks; /ai preview shows it again"

    async def clear(self, player: str, plan_id: str = "") -> PendingPlan | None:
        """Forget the player's pending plan (``plan_id``, or any) and restore their view."""
        plan = self.pending.get(player)
        if plan is None or (plan_id and plan.plan_id != plan_id):
            return None
        del self.pending[player]
        try:
            await self.host.chat_preview(
                world_pb2.ChatPreviewParams(
                    client_id=self.client_id, player_id=player, plan_id=plan.plan_id, clear=True
                )
            )
        except McbError as exc:
            if (exc.details or {}).get("reason") != "no_previews":
                log.warning("cannot clear the preview of %s for %s: %s", plan.plan_id, player, exc.code)
        return plan

    @staticmethod
    def gone(exc: McbError) -> bool:
        """Whether an apply refusal means the plan can never be applied (so it is dropped)."""
        return exc.code in (ErrorCode.NOT_FOUND, ErrorCode.STALE_SNAPSHOT, ErrorCode.WORLD_CHANGED)


def _millis(rfc3339: str) -> int:
    from datetime import datetime

    if not rfc3339:
        return 0
    try:
        return int(datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0
