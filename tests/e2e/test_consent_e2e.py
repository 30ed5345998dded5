"""Issue 13 items 1 and 5 over MCP, on each world host (embedded and java-core), with player
and environment edits made through the host's automation principal:

1. consent before replacing a person's work: the plan summary counts every non-air block it
   would replace by source with positions; build_apply refuses a plan that replaces player
   blocks unless it carries replace_player_blocks: true — for recipes, schematic imports and
   part regeneration; a player block placed after prepare is a conflict (compare-and-set).
5. the change feed: totals by source over the whole range, player edits first, a source filter,
   pages of at most 4 KB of JSON.
"""

from __future__ import annotations

import json
import uuid

import pytest
from e2e.components import run
from e2e.mcpclient import ToolError, apply_and_wait, call, wait_terminal
from e2e.test_safe_writes import automation, box, state_at

STONE, GLASS, PLANKS = "minecraft:stone", "minecraft:glass", "minecraft:oak_planks"


def by_source(plan: dict) -> dict[str, tuple[int, list[tuple[int, int, int]]]]:
    return {
        s["source"]: (s["count"], [(p["x"], p["y"], p["z"]) for p in s.get("positions", [])])
        for s in plan["replaced"].get("by_source", [])
    }


async def apply(client, plan, consent: bool | None = None) -> dict:
    args = {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())}
    if consent is not None:
        args["replace_player_blocks"] = consent
    op = await call(client, "build_apply", args)
    return await wait_terminal(client, op["operation_id"])


def test_recipe_over_player_blocks_needs_consent(comp):
    async def scenario(client):
        ours = await apply_and_wait(
            client, await call(client, "build_prepare", {"recipe": box(0, 70, 0, 1, 70, 0, STONE)})
        )
        assert ours["state"] == "applied"
        automation(comp, "player", [(2, 70, 0, STONE), (3, 70, 0, STONE)])
        automation(comp, "environment", [(4, 70, 0, STONE)])
        automation(comp, "external", [(5, 70, 0, STONE)])  # no event: never called a player
        plan = await call(client, "build_prepare", {"recipe": box(0, 70, 0, 6, 70, 0, GLASS)})
        assert plan["replaced"]["total"] == 6 and plan["changed_blocks"] == 7
        assert by_source(plan) == {
            "player": (2, [(2, 70, 0), (3, 70, 0)]),
            "environment": (1, [(4, 70, 0)]),
            "ours": (2, [(0, 70, 0), (1, 70, 0)]),
            "unknown": (1, [(5, 70, 0)]),
        }
        assert [s["source"] for s in plan["replaced"]["by_source"]][0] == "player"  # people first
        assert any("placed by a player" in w for w in plan["warnings"])
        for consent in (None, False):
            with pytest.raises(ToolError) as exc:
                await apply(client, plan, consent)
            err = exc.value.error
            assert err["code"] == "player_blocks_would_be_replaced" and err["retryable"] is False
            assert err["details"]["player_blocks"] == 2 and err["details"]["replaced_total"] == 6
            assert err["details"]["positions"] == [{"x": 2, "y": 70, "z": 0}, {"x": 3, "y": 70, "z": 0}]
            assert "replace_player_blocks" in err["hint"]
        assert state_at(comp, 2, 70, 0) == STONE and state_at(comp, 0, 70, 0) == STONE  # nothing written
        done = await apply(client, plan, True)
        assert done["state"] == "applied" and done["written"] == 7
        assert state_at(comp, 2, 70, 0) == GLASS
        # the blocks are ours now: a new plan over them needs no consent
        again = await call(client, "build_prepare", {"recipe": box(0, 70, 0, 6, 70, 0, STONE)})
        assert set(by_source(again)) == {"ours"}
        assert (await apply(client, again))["state"] == "applied"

    run(comp, scenario)


def test_player_block_placed_after_prepare_is_a_conflict_not_a_consent_question(comp):
    async def scenario(client):
        plan = await call(client, "build_prepare", {"recipe": box(10, 70, 0, 12, 70, 0, GLASS)})
        assert plan["replaced"] == {"total": 0}
        automation(comp, "player", [(11, 70, 0, STONE)])  # after prepare: the plan expected air there
        st = await apply(client, plan)  # no consent asked: compare-and-set protects it
        assert st["state"] == "conflict" and st["written"] == 0
        assert st["conflict_samples"][0]["source"] == "player"
        assert state_at(comp, 11, 70, 0) == STONE

    run(comp, scenario)


def test_schematic_import_over_player_blocks_needs_consent(comp):
    async def scenario(client):
        built = await apply_and_wait(
            client, await call(client, "build_prepare", {"recipe": box(20, 70, 0, 21, 71, 1, PLANKS)})
        )
        assert built["state"] == "applied"
        name = f"consent_{uuid.uuid4().hex[:6]}"
        await call(
            client,
            "schematic_export",
            {"name": name, "min": {"x": 20, "y": 70, "z": 0}, "max": {"x": 21, "y": 71, "z": 1}},
        )
        automation(comp, "player", [(30, 71, 1, GLASS)])
        plan = await call(client, "schematic_import_prepare", {"asset_id": name, "target": {"x": 30, "y": 70, "z": 0}})
        assert by_source(plan) == {"player": (1, [(30, 71, 1)])}
        with pytest.raises(ToolError) as exc:
            await apply(client, plan)
        assert exc.value.error["code"] == "player_blocks_would_be_replaced"
        assert state_at(comp, 30, 71, 1) == GLASS and state_at(comp, 30, 70, 0) == "minecraft:air"
        assert (await apply(client, plan, True))["state"] == "applied"
        assert state_at(comp, 30, 71, 1) == PLANKS

    run(comp, scenario)


def test_part_regeneration_over_a_player_block_needs_consent(comp):
    def tower(top: int) -> dict:
        return box(40, 70, 0, 42, top, 2, STONE, hollow=True)

    async def scenario(client):
        st = await apply_and_wait(client, await call(client, "build_prepare", {"recipe": tower(72)}))
        part = await call(client, "part_define", {"name": "consent-tower", "operation_id": st["operation_id"]})
        automation(comp, "player", [(40, 71, 1, GLASS)])  # a window: the design keeps it (manual edit survives)
        automation(comp, "player", [(40, 73, 1, PLANKS)])  # where the taller design adds a wall block
        plan = await call(client, "build_prepare", {"recipe": tower(74), "regenerate_part_id": part["part_id"]})
        assert by_source(plan).get("player") == (1, [(40, 73, 1)])
        with pytest.raises(ToolError) as exc:
            await apply(client, plan)
        assert exc.value.error["code"] == "player_blocks_would_be_replaced"
        assert (await apply(client, plan, True))["state"] == "applied"
        assert state_at(comp, 40, 73, 1) == STONE and state_at(comp, 40, 71, 1) == GLASS

    run(comp, scenario)


def page_bytes(page: dict) -> int:
    """The JSON text the agent receives (mcpclient.payload checks text == structuredContent)."""
    return len(json.dumps(page, ensure_ascii=False, separators=(",", ":")).encode())


def test_change_feed_puts_people_first_with_range_totals_and_small_pages(comp):
    region = {"min": {"x": -40, "y": 64, "z": -40}, "max": {"x": -20, "y": 80, "z": -20}}

    async def scenario(client):
        fresh = await call(client, "region_changes", {"region": region, "since_cursor": ""})
        automation(comp, "player", [(-30, 70, -30, GLASS)])
        # our own writes after the player's edit: 6 x 6 x 6 = 216 events
        ours = await apply_and_wait(
            client, await call(client, "build_prepare", {"recipe": box(-38, 70, -38, -33, 75, -33, STONE)})
        )
        assert ours["state"] == "applied"
        automation(comp, "environment", [(-25, 70, -25, STONE)])
        automation(comp, "player", [(-24, 70, -24, GLASS), (-23, 70, -23, GLASS)])
        first = await call(client, "region_changes", {"region": region, "since_cursor": fresh["next_cursor"]})
        # totals over the whole range, not the page
        assert first["changes"] == 220
        assert first["by_source"] == {"player": 3, "environment": 1, "ours": 216}
        assert first["bounding_box"] == {"min": {"x": -38, "y": 70, "z": -38}, "max": {"x": -23, "y": 75, "z": -23}}
        # people first: every player edit leads the first page, then the environment, then ours
        sources = [e["source"] for e in first["events"]]
        assert sources[:4] == ["player", "player", "player", "environment"] and set(sources[4:]) == {"ours"}
        assert [e["pos"] for e in first["events"][:3]] == [
            {"x": -30, "y": 70, "z": -30},
            {"x": -24, "y": 70, "z": -24},
            {"x": -23, "y": 70, "z": -23},
        ]
        assert page_bytes(first) <= 4096 and not first["complete"]
        # page through the range: same totals on every page, each page <= 4 KB, every event once
        seen, page, pages = [*first["events"]], first, 1
        while not page["complete"]:
            page = await call(client, "region_changes", {"region": region, "since_cursor": page["next_cursor"]})
            assert page["changes"] == 220 and page["by_source"] == first["by_source"]
            assert page_bytes(page) <= 4096
            seen += page["events"]
            pages += 1
            assert page["remaining"] == 220 - len(seen)
        assert (
            len(seen) == 220
            and len({json.dumps(e["pos"], sort_keys=True) for e in seen if e["source"] == "ours"}) == 216
        )
        assert pages >= 220 * 100 // 4096  # ~150 bytes an event: the byte limit, not the count, cut the pages
        print(
            f"\nregion_changes: 220 events in {pages} pages; first page {len(first['events'])} events, "
            f"{page_bytes(first)} bytes"
        )
        # a larger page on request
        big = await call(
            client, "region_changes", {"region": region, "since_cursor": fresh["next_cursor"], "max_bytes": 32768}
        )
        assert 4096 < page_bytes(big) <= 32768 and len(big["events"]) > len(first["events"])
        # the source filter: only people (foreign) or only players; totals still cover every source
        foreign = await call(
            client, "region_changes", {"region": region, "since_cursor": fresh["next_cursor"], "source": "foreign"}
        )
        assert foreign["changes"] == 4 and foreign["complete"] and len(foreign["events"]) == 4
        assert foreign["by_source"] == first["by_source"]
        player = await call(
            client, "region_changes", {"region": region, "since_cursor": fresh["next_cursor"], "source": "player"}
        )
        assert [e["source"] for e in player["events"]] == ["player"] * 3 and player["changes"] == 3
        assert player["bounding_box"] == {"min": {"x": -30, "y": 70, "z": -30}, "max": {"x": -23, "y": 70, "z": -23}}
        # an open cursor is read with any filter; a next-page cursor only with its own (and region)
        with pytest.raises(ToolError) as exc:
            await call(
                client, "region_changes", {"region": region, "since_cursor": first["next_cursor"], "source": "player"}
            )
        assert exc.value.error["code"] == "invalid_request"
        other = {"min": region["min"], "max": {"x": -21, "y": 80, "z": -20}}
        with pytest.raises(ToolError) as exc:
            await call(client, "region_changes", {"region": other, "since_cursor": player["next_cursor"]})
        assert exc.value.error["code"] == "invalid_request"
        # the last page's cursor is open again: only what happens next
        automation(comp, "player", [(-22, 70, -22, GLASS)])
        nxt = await call(client, "region_changes", {"region": region, "since_cursor": page["next_cursor"]})
        assert nxt["changes"] == 1 and nxt["by_source"] == {"player": 1} and nxt["complete"]

    run(comp, scenario)
