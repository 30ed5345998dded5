"""The bridge's ONI tools over the MCP SDK's in-process client, against the simulator over HTTP:
listed only with an ONI endpoint (MCB_ONI_URL or config.json "oni"), structured errors with the
mod's error type, pages, analysis, and a blueprint applied step by step until done."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from mcb_bridge.config import BridgeConfig
from mcb_bridge.server import Bridge, build_server
from mcp import Client

ONI_TOOLS = {"oni_state", "oni_action", "oni_blueprint"}


@pytest.fixture(autouse=True)
def no_runtime_config(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MCB_CONFIG", str(tmp_path / "config.json"))  # absent: no "oni" section
    monkeypatch.delenv("MCB_ONI_URL", raising=False)


def bridge() -> Bridge:
    return Bridge(
        BridgeConfig(
            project_id="p",
            player_id="u",
            journal_addr="127.0.0.1:9",
            bind_host="127.0.0.1",
            port=0,
            agent_token="t" * 32,
        )
    )


def run(body: Any) -> Any:
    async def main() -> Any:
        b = bridge()
        try:
            async with Client(build_server(b)) as client:
                return await body(client)
        finally:
            await b.journal.close()

    return asyncio.run(asyncio.wait_for(main(), 60))


def data(result: Any) -> dict[str, Any]:
    out = json.loads(result.content[0].text)
    assert result.structured_content == out
    return out


def ok(result: Any) -> dict[str, Any]:
    out = data(result)
    assert result.is_error is False, out
    return out


def err(result: Any) -> dict[str, Any]:
    out = data(result)
    assert result.is_error is True, out
    return out["error"]


def test_not_listed_without_an_oni_endpoint() -> None:
    async def body(c: Client) -> None:
        names = {t.name for t in (await c.list_tools()).tools}
        assert names and not names & ONI_TOOLS

    run(body)


def test_listed_from_config_json(tmp_path, monkeypatch, sim) -> None:
    (tmp_path / "config.json").write_text(
        json.dumps({"projects": [], "oni": {"modHost": "127.0.0.1", "modPort": sim.port, "timeout": 5}})
    )

    async def body(c: Client) -> None:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert ONI_TOOLS <= set(tools)
        size = len(json.dumps([tools[n].model_dump(mode="json", exclude_none=True) for n in ONI_TOOLS]))
        # the ONI share of tools/list (the whole list, ONI included, stays <= 20 KiB:
        # services/bridge/tests/test_guides.py); the long texts are the resource mcb://guides/oni
        assert size < 2560, size
        assert ok(await c.call_tool("oni_state", {"what": "game"}))["game"]["cycle"] >= 0

    run(body)


def test_state_actions_errors_and_blueprint(monkeypatch, sim) -> None:
    monkeypatch.setenv("MCB_ONI_URL", f"http://127.0.0.1:{sim.port}")

    async def body(c: Client) -> None:
        game = ok(await c.call_tool("oni_state", {"what": "game"}))["game"]
        assert game["cycle"] >= 0 and game["duplicantCount" if "duplicantCount" in game else "duplicant_count"] == 3
        page = ok(await c.call_tool("oni_state", {"what": "resources", "limit": 2}))
        assert len(page["resources"]) == 2 and page["next_offset"] == 2 and page["total"] > 2
        m = ok(await c.call_tool("oni_state", {"what": "map", "x": 0, "y": 0, "width": 4, "height": 2}))
        assert m["rows"][0] == "NNNN"
        rep = ok(await c.call_tool("oni_state", {"what": "analysis"}))
        assert {f["area"] for f in rep["findings"]} >= {"oxygen", "food", "power", "temperature", "water"}
        q = ok(await c.call_tool("oni_action", {"action": "dig", "x": 10, "y": 5, "width": 8, "height": 6}))
        assert q["result"] == "dig_queued"

        e = err(await c.call_tool("oni_action", {"action": "build", "building_id": "NoSuchBuilding", "x": 1, "y": 1}))
        assert e["code"] == "invalid_request" and e["details"]["oni_error"] == "unknown_building" and e["hint"]
        e = err(await c.call_tool("oni_action", {"action": "research", "tech_id": "Teleportation"}))
        assert e["code"] == "invalid_request" and e["details"]["oni_error"] == "unknown_tech"
        e = err(await c.call_tool("oni_action", {"action": "dig", "x": 60, "y": 1, "width": 8, "height": 2}))
        assert e["code"] == "invalid_request" and "outside the map" in e["message"]
        e = err(await c.call_tool("oni_action", {"action": "build", "building_id": "Tile", "x": 1}))
        assert e["code"] == "invalid_request" and "needs y" in e["message"]
        e = err(await c.call_tool("oni_action", {"action": "dig", "x": "a", "y": 1, "width": 1, "height": 1}))
        assert e["code"] == "invalid_request"  # the schema, before any HTTP
        e = err(await c.call_tool("oni_state", {"what": "game", "x": 1}))
        assert e["code"] == "invalid_request" and "does not take x" in e["message"]

        assert {b["name"] for b in ok(await c.call_tool("oni_blueprint", {"action": "list"}))["blueprints"]} >= {
            "spom",
            "toilets",
            "ranch",
            "farm",
            "cooling",
            "bedroom",
            "power",
        }
        p = ok(await c.call_tool("oni_blueprint", {"action": "plan", "name": "bedroom", "x": 6, "y": 30}))
        assert p["ok"] and p["actions"][0]["action"] == "dig"
        phases = []
        end = time.monotonic() + 20
        while time.monotonic() < end:
            step = ok(await c.call_tool("oni_blueprint", {"action": "apply", "name": "bedroom", "x": 6, "y": 30}))
            phases.append(step["phase"])
            if step["phase"] == "done":
                break
            await asyncio.sleep(0.05)
        assert phases[0] == "digging" and "building" in phases and phases[-1] == "done", phases
        refused = ok(await c.call_tool("oni_blueprint", {"action": "apply", "name": "spom", "x": 20, "y": 36}))
        assert refused["phase"] == "refused" and any(x["kind"] == "needs_research" for x in refused["problems"])

    run(body)


def test_unreachable_mod_is_unavailable(monkeypatch) -> None:
    monkeypatch.setenv("MCB_ONI_URL", "http://127.0.0.1:9")

    async def body(c: Client) -> None:
        e = err(await c.call_tool("oni_state", {"what": "game"}))
        assert e["code"] == "unavailable" and e["retryable"] is True and "MCB_ONI_URL" in e["message"]

    run(body)


def test_oni_action_takes_every_order(monkeypatch, sim) -> None:
    """oni_action exposes utility paths, speed, cancel, named schedules, planting, mop, sweep, harvest,
    priority and world_id; each refusal is a structured error naming what to fix."""
    monkeypatch.setenv("MCB_ONI_URL", f"http://127.0.0.1:{sim.port}")
    blocks = ["work"] * 20 + ["sleep"] * 4

    async def body(c: Client) -> None:
        async def act(args: dict[str, Any]) -> dict[str, Any]:
            return ok(await c.call_tool("oni_action", args))

        q = await act({"action": "utility", "kind": "wire", "path": [[24, 24], [25, 24]], "priority": 3, "world_id": 0})
        assert (q["result"], q["cells"], q["priority"], q["world_id"]) == ("utility_queued", 2, 3, 0) and q[
            "action_id"
        ] >= 1
        assert (await act({"action": "speed", "paused": True, "speed": 3}))["result"] == "speed_queued"
        assert (await act({"action": "cancel", "x": 24, "y": 24, "width": 2}))["result"] == "cancel_queued"
        assert (await act({"action": "schedule", "schedule": "Night", "blocks": blocks}))["result"] == "schedule_queued"
        assert (await act({"action": "schedule", "duplicant": "Ada", "schedule": "Night"}))["schedule"] == "Night"
        p = await act({"action": "plant", "x": 24, "y": 24, "seed": "BasicSingleHarvestPlantSeed", "priority": 8})
        assert (p["result"], p["seed"], p["priority"]) == ("plant_queued", "BasicSingleHarvestPlantSeed", 8)
        for order in ("mop", "sweep", "harvest"):
            r = await act({"action": order, "x": 24, "y": 24, "width": 3, "height": 2, "priority": 2})
            assert (r["result"], r["width"], r["priority"]) == (f"{order}_queued", 3, 2)
        assert (await act({"action": "prioritize", "x": 24, "y": 24, "priority": 9}))["priority"] == 9
        b = await act({"action": "build", "building_id": "Door", "x": 25, "y": 26, "rotation": 90})
        assert b["orientation"] == "R90"
        game = ok(await c.call_tool("oni_state", {"what": "game", "world_id": 0}))["game"]
        assert game["world_id"] == 0 and game["worlds"][0]["active"] is True
        assert ok(await c.call_tool("oni_state", {"what": "schedules"}))["total"] == 2

        e = err(await c.call_tool("oni_action", {"action": "speed"}))
        assert e["code"] == "invalid_request" and "paused" in e["message"]
        e = err(
            await c.call_tool(
                "oni_action", {"action": "schedule", "duplicant": "Ada", "schedule": "Night", "blocks": blocks}
            )
        )
        assert e["code"] == "invalid_request" and "assign" in e["message"]
        e = err(await c.call_tool("oni_action", {"action": "plant", "x": 24, "y": 24}))
        assert e["code"] == "invalid_request" and "needs seed" in e["message"]
        e = err(await c.call_tool("oni_action", {"action": "cancel", "x": 24, "y": 24, "priority": 3}))
        assert "does not take priority" in e["message"]
        e = err(await c.call_tool("oni_action", {"action": "utility", "kind": "wire", "path": [[1, 1], [3, 1]]}))
        assert e["details"]["oni_error"] == "invalid_request" and e["details"]["field"] == "path"
        e = err(
            await c.call_tool("oni_action", {"action": "build", "building_id": "Door", "x": 25, "y": 26, "flip": True})
        )
        assert e["details"]["field"] == "flip" and "R90" in e["message"]
        e = err(await c.call_tool("oni_action", {"action": "mop", "x": 1, "y": 1, "world_id": 4}))
        assert e["code"] == "invalid_request" and e["details"]["oni_error"] == "unknown_world"
        e = err(await c.call_tool("oni_state", {"what": "buildings", "world_id": 4}))
        assert e["details"]["oni_error"] == "unknown_world" and e["details"]["field"] == "world_id"
        e = err(await c.call_tool("oni_action", {"action": "speed", "speed": 4}))
        assert e["code"] == "invalid_request"  # the schema, before any HTTP

    run(body)
