"""Issue 13 item 1: who placed the blocks a plan replaces, and consent before replacing a
player's (consent.py). The pure rule, the counting, and the journal core's real
build_prepare / build_apply over a real SQLite file with observed events in it."""

from __future__ import annotations

import asyncio
import json

import pytest
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_journal.blobs import BlobStore
from mcb_journal.consent import classify, count_sources, placed_by, refusal
from mcb_journal.core import JournalCore
from mcb_journal.db import Database
from mcb_journal.projects import Caller

from services.journal.tests.test_plan_summary_size import EventsJson, InProcessPlanner

CALLER = Caller("agent", "p", "alice")
STONE, GLASS, AIR = "minecraft:stone", "minecraft:glass", "minecraft:air"


# ---------------------------------------------------------------- the pure rule
@pytest.mark.parametrize(
    "base, events, write, want",
    [
        (STONE, [], None, "unknown"),  # terrain: no record
        (STONE, [("player", AIR, STONE)], None, "player"),
        (STONE, [("environment", AIR, STONE)], None, "environment"),
        (STONE, [("ours", AIR, STONE)], None, "ours"),
        (STONE, [], STONE, "ours"),  # our write, echo not observed
        (STONE, [("player", AIR, STONE), ("ours", STONE, STONE)], None, "player"),  # same block again: still theirs
        (STONE, [("ours", AIR, STONE), ("player", STONE, AIR), ("player", AIR, STONE)], None, "player"),
        (STONE, [("player", AIR, STONE), ("ours", STONE, GLASS)], None, "unknown"),  # changed back with no event
        (STONE, [("player", AIR, GLASS)], STONE, "ours"),  # our later write, echo lost
        (STONE, [("player", AIR, GLASS)], None, "unknown"),
        # state-only changes (a crop's age, a fence's connections) do not change who placed it
        (
            "minecraft:wheat[age=5]",
            [
                ("player", AIR, "minecraft:wheat[age=0]"),
                ("environment", "minecraft:wheat[age=0]", "minecraft:wheat[age=5]"),
            ],
            None,
            "player",
        ),
        ("minecraft:oak_fence[east=true]", [("player", AIR, "minecraft:oak_fence[east=false]")], None, "player"),
        # a player's sapling the game turned into a log: the game placed the log
        (
            "minecraft:oak_log[axis=y]",
            [
                ("player", AIR, "minecraft:oak_sapling[stage=0]"),
                ("environment", "minecraft:oak_sapling[stage=1]", "minecraft:oak_log[axis=y]"),
            ],
            None,
            "environment",
        ),
        (STONE, [("external", AIR, STONE)], None, "unknown"),  # never guessed to be a player
    ],
)
def test_placed_by(base, events, write, want):
    assert placed_by(base, events, write) == want


def test_count_sources_lists_at_most_20_positions_per_source_lowest_first():
    replaced = [((x, 64 + (x % 3), 0), STONE) for x in range(50)] + [((0, 70, 0), STONE)]
    sources = {p: "player" for p, _ in replaced[:30]} | {(0, 70, 0): "ours"}
    got = count_sources(replaced, sources)
    assert got["total"] == 51
    assert list(got["by_source"]) == ["player", "ours", "unknown"]  # player first, empty sources left out
    assert [got["by_source"][s]["count"] for s in ("player", "ours", "unknown")] == [30, 1, 20]
    player = got["by_source"]["player"]["positions"]
    assert len(player) == 20 and player == sorted(player, key=lambda p: (p[1], p[2], p[0]))
    assert player[0] == [0, 64, 0]


def test_refusal_lists_positions_and_totals():
    assert refusal({"total": 3, "by_source": {"ours": {"count": 3, "positions": [[0, 0, 0]]}}}) is None
    assert refusal({}) is None
    err = refusal({"total": 40, "by_source": {"player": {"count": 25, "positions": [[i, 64, 0] for i in range(20)]}}})
    assert err.code == ErrorCode.PLAYER_BLOCKS_WOULD_BE_REPLACED and not err.retryable
    assert err.details["player_blocks"] == 25 and err.details["replaced_total"] == 40
    assert err.details["positions"][0] == {"x": 0, "y": 64, "z": 0} and err.details["positions_omitted"] == 5


# ---------------------------------------------------------------- through the journal core
class StoneWorld(EventsJson):
    """y 64 is stone, everything else air."""

    async def world_info(self):
        return world_pb2.WorldInfo(world_uuid="w-1", epoch=1, minecraft_version="1.21.11")

    async def call(self, method, params, result_type):
        if method == "region_read":
            lo, hi = params.min, params.max
            pal, idx = [AIR, STONE], bytearray()
            for y in range(lo.y, hi.y + 1):
                for _z in range(lo.z, hi.z + 1):
                    for _x in range(lo.x, hi.x + 1):
                        idx += (1 if y == 64 else 0).to_bytes(2, "little")
            return world_pb2.RegionReadResult(palette=pal, indices=bytes(idx))
        if method == "events_since":  # host instance "h", where nobody changes a block: an empty, complete page
            return world_pb2.EventsSinceResult(next_cursor=params.cursor or "h:0", complete=True)
        assert method == "blocks_get"
        ys = params.xyz[1::3]
        return world_pb2.BlocksGetResult(palette=[AIR, STONE], state=[1 if y == 64 else 0 for y in ys])


class Queue:
    """The progress stream's interface (the apply work itself is queued in SQLite)."""

    def __init__(self):
        self.events = []

    async def progress(self, event):
        self.events.append(event)


def observe(db: Database, source: str, events: list[tuple[int, int, int, str, str]], op_id: str = "") -> None:
    with db.tx() as c:
        for x, y, z, before, after in events:
            c.execute(
                "INSERT INTO observed(kind, host_instance, host_seq, x, y, z, before, after, source, player_id,"
                " op_id, at_ms) VALUES ('event','h',0,?,?,?,?,?,?,?,?,0)",
                (x, y, z, before, after, source, "p-1" if source == "player" else "", op_id),
            )


@pytest.fixture
def core(tmp_path):
    c = JournalCore(
        db=Database(tmp_path / "j.sqlite"),
        blobs=BlobStore(tmp_path / "blobs"),
        world=StoneWorld(),
        planner=InProcessPlanner(),
        queue=Queue(),
    )
    c.projects.load(
        [
            {
                "project_id": "p",
                "owner_player_id": "alice",
                "area": {"min": {"x": -200, "y": -64, "z": -200}, "max": {"x": 200, "y": 319, "z": 200}},
            }
        ]
    )
    return c


def glass_row(x0: int, x1: int) -> str:
    return json.dumps(
        {
            "version": 1,
            "operations": [
                {"type": "box", "min": {"x": x0, "y": 64, "z": 0}, "max": {"x": x1, "y": 64, "z": 0}, "block": GLASS}
            ],
        }
    )


def test_prepare_counts_by_source_and_apply_needs_consent(core):
    observe(core.db, "player", [(x, 64, 0, AIR, STONE) for x in (2, 3, 4)])
    observe(core.db, "environment", [(5, 64, 0, AIR, STONE)])
    observe(core.db, "ours", [(6, 64, 0, AIR, STONE)], op_id="op_x")
    observe(core.db, "player", [(9, 64, 0, AIR, STONE)])  # outside the plan
    summary = asyncio.run(core.prepare.build_prepare(CALLER, jpb.BuildPrepareRequest(recipe_json=glass_row(0, 7))))
    r = summary.replaced
    assert r.total == 8
    got = {s.source: (s.count, [(p.x, p.y, p.z) for p in s.positions]) for s in r.by_source}
    assert [s.source for s in r.by_source] == ["player", "environment", "ours", "unknown"]
    assert got["player"] == (3, [(2, 64, 0), (3, 64, 0), (4, 64, 0)])
    assert got["environment"] == (1, [(5, 64, 0)]) and got["ours"] == (1, [(6, 64, 0)])
    assert got["unknown"] == (3, [(0, 64, 0), (1, 64, 0), (7, 64, 0)])
    assert any("3 were placed by a player" in w for w in summary.warnings)
    req = jpb.BuildApplyRequest(plan_id=summary.plan_id, plan_hash=summary.plan_hash, idempotency_key="k1")
    with pytest.raises(McbError) as exc:
        asyncio.run(core.build_apply(CALLER, req))
    assert exc.value.code == ErrorCode.PLAYER_BLOCKS_WOULD_BE_REPLACED
    assert exc.value.details["positions"] == [{"x": x, "y": 64, "z": 0} for x in (2, 3, 4)]
    assert core.ctx.runnable() == [] and not core.ctx.wake.is_set()  # nothing created, nothing queued
    req.replace_player_blocks = True
    rep = asyncio.run(core.build_apply(CALLER, req))
    # committed `queued` in SQLite (the executor's only queue) and the executor woken
    assert rep.state == "queued" and core.ctx.runnable() == [rep.operation_id] and core.ctx.wake.is_set()
    # a retry of that apply (answer lost) with the same key is the same operation, consent or not
    req.replace_player_blocks = False
    again = asyncio.run(core.build_apply(CALLER, req))
    assert again.replayed and again.operation_id == rep.operation_id and core.ctx.runnable() == [rep.operation_id]


def test_plan_without_player_blocks_applies_without_consent(core):
    observe(core.db, "player", [(0, 64, 0, AIR, STONE)])
    summary = asyncio.run(core.prepare.build_prepare(CALLER, jpb.BuildPrepareRequest(recipe_json=glass_row(1, 3))))
    assert [(s.source, s.count) for s in summary.replaced.by_source] == [("unknown", 3)]
    rep = asyncio.run(
        core.build_apply(
            CALLER, jpb.BuildApplyRequest(plan_id=summary.plan_id, plan_hash=summary.plan_hash, idempotency_key="k2")
        )
    )
    assert rep.state == "queued"


def test_classify_reads_our_own_writes_when_no_echo_was_observed(core):
    with core.db.tx() as c:
        c.execute(
            "INSERT INTO written(op_id, x, y, z, before, after, uncertain, at_ms) VALUES ('op_a',1,64,0,?,?,0,0)",
            (AIR, STONE),
        )
        c.execute(
            "INSERT INTO written(op_id, x, y, z, before, after, uncertain, at_ms) VALUES ('op_a',2,64,0,?,?,1,0)",
            (AIR, STONE),
        )  # uncertain (a crash mid-batch): not counted as ours
    got = classify(core.db, [((1, 64, 0), STONE), ((2, 64, 0), STONE), ((3, 64, 0), STONE)])
    assert got == {(1, 64, 0): "ours"}  # the others are unknown (left out)
