"""chat/plans.py: a prepared plan left for the player, its offer line (with the consent question) and its
preview on the host. The summary is rendered by the bridge's own plan_summary (what the agent's tool
result carries); the host is a recording fake of chat_preview with the world protocol's messages."""

from __future__ import annotations

import asyncio

from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2
from mcb.world.v1 import world_pb2
from mcb_bridge.chat.plans import PlanPreviews, pending_from
from mcb_bridge.render import plan_summary
from mcb_common.errors import ErrorCode, McbError


def summary(player_blocks: int = 0, changed: int = 42) -> dict:
    by_source = (
        [
            journal_pb2.ReplacedBySource(
                source="player", count=player_blocks, positions=[common_pb2.Vec3(x=1, y=64, z=2)]
            )
        ]
        if player_blocks
        else []
    )
    return plan_summary(
        journal_pb2.PlanSummary(
            plan_id="pl_1",
            plan_hash="h1",
            changed_blocks=changed,
            expires_at="2026-12-02T15:00:00Z",
            replaced=journal_pb2.ReplacedBlocks(total=player_blocks, by_source=by_source),
        )
    )


class Host:
    def __init__(self, refuse: McbError | None = None):
        self.calls: list[world_pb2.ChatPreviewParams] = []
        self.refuse = refuse

    async def chat_preview(self, p: world_pb2.ChatPreviewParams) -> world_pb2.ChatPreviewResult:
        self.calls.append(p)
        if self.refuse is not None:
            raise self.refuse
        return world_pb2.ChatPreviewResult(online=True, shown=p.show or p.toggle, blocks=len(p.desired) or 2)


async def entries(project: str, player: str, plan_id: str) -> journal_pb2.PlanEntriesResponse:
    assert (project, player, plan_id) == ("p1", "alice", "pl_1")
    return journal_pb2.PlanEntriesResponse(
        plan_id=plan_id,
        palette=["minecraft:stone_bricks"],
        xyz=[1, 64, 2, 2, 64, 2],
        desired=[0, 0],
        expires_at="2026-12-02T15:00:00Z",
    )


def test_a_left_plan_is_offered_shown_and_cleared() -> None:
    plan = pending_from("p1", "alice", summary())
    assert plan is not None and (plan.plan_id, plan.plan_hash, plan.changed, plan.player_blocks) == (
        "pl_1",
        "h1",
        42,
        0,
    )
    assert pending_from("p1", "alice", summary(changed=0)) is None, "nothing to decide"
    host = Host()
    previews = PlanPreviews(host, "bridge-1", entries)

    async def go() -> None:
        line = await previews.offer(plan)
        assert line.startswith("plan pl_1: 42 blocks to change, not built yet. You see it in game now; only you do")
        assert "players" not in line
        sent = host.calls[-1]
        assert (sent.client_id, sent.player_id, sent.plan_id, sent.show) == ("bridge-1", "alice", "pl_1", True)
        assert list(sent.xyz) == [1, 64, 2, 2, 64, 2] and list(sent.palette) == ["minecraft:stone_bricks"]
        assert sent.expires_at_millis == 1796223600000  # 2026-12-02T15:00:00Z
        assert (await previews.toggle("alice")).startswith("showing plan pl_1 (2 blocks")
        assert await previews.clear("alice", "pl_other") is None, "another plan id leaves it"
        assert await previews.clear("alice") == plan
        assert host.calls[-1].clear and host.calls[-1].plan_id == "pl_1"
        assert "alice" not in previews.pending
        assert (await previews.toggle("alice")).startswith("no plan of yours is waiting")

    asyncio.run(go())


def test_the_offer_asks_about_players_blocks_and_works_without_previews() -> None:
    plan = pending_from("p1", "alice", summary(player_blocks=3))
    assert plan is not None and plan.player_blocks == 3
    host = Host(McbError(ErrorCode.INVALID_REQUEST, "no players", details={"reason": "no_previews"}))
    previews = PlanPreviews(host, "bridge-1", entries)

    async def go() -> None:
        line = await previews.offer(plan)
        assert "(This world host cannot show it in game.)" in line
        assert line.endswith("It replaces 3 block(s) placed by players: /ai apply agrees to that."), line
        assert previews.pending["alice"] == plan, "still the player's to decide"
        assert "cannot show plans in game" in await previews.toggle("alice")
        assert await previews.clear("alice") == plan  # the host's refusal to clear is not an error

    asyncio.run(go())


def test_a_plan_too_large_to_show_is_still_offered() -> None:
    plan = pending_from("p1", "alice", summary())
    assert plan is not None
    host = Host()

    async def big(project: str, player: str, plan_id: str) -> journal_pb2.PlanEntriesResponse:
        return journal_pb2.PlanEntriesResponse(
            plan_id=plan_id, palette=["minecraft:stone"], xyz=[0, 64, 0] * 40_000, desired=[0] * 40_000
        )

    previews = PlanPreviews(host, "bridge-1", big)
    line = asyncio.run(previews.offer(plan))
    assert "too large to show in game (40000 blocks, at most 32768)" in line and not host.calls
    assert PlanPreviews.gone(McbError(ErrorCode.STALE_SNAPSHOT, "expired"))
    assert not PlanPreviews.gone(McbError(ErrorCode.BUSY, "later"))
