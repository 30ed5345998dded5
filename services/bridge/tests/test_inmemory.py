"""The bridge's tools over the MCP SDK's in-process client, against the FakeJournal.

Two in-process paths of the SDK are exercised: ``Client(server)`` in its default mode (the
2026-07-28 direct dispatcher) and ``mode="legacy"`` (the initialize handshake over
``InMemoryTransport`` with JSON-RPC framing).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from bridge_testkit import PLAYER, PROJECT, SEED_RECIPE, TOKEN, FakeEnv, arun
from mcb_bridge import render
from mcb_bridge.server import Bridge, build_server
from mcb_common.errors import RETRYABLE, ErrorCode
from mcp import Client

TOOLS = {
    "project_context": {"include_old_worlds"},
    "region_inspect": {"min", "max", "detail", "cursor", "step"},
    "build_prepare": {"recipe", "dependencies", "part_id", "regenerate_part_id"},
    "build_apply": {"plan_id", "plan_hash", "idempotency_key", "replace_player_blocks"},
    "operation_status": {"operation_id"},
    "operation_cancel": {"operation_id"},
    "operation_undo_prepare": {"operation_id"},
    "part_define": {"name", "operation_id"},
    "part_get": {"part_id"},
    "region_changes": {"region", "since_cursor", "limit", "source", "max_bytes"},
    "region_history": {"region", "cursor", "player", "cause", "since_millis"},  # issue 32 item 3
    "rollback_prepare": {"region", "player", "cause", "since_millis"},  # issue 32 item 4
    "camera_list": set(),
    "camera_capture": {
        "camera_id",
        "pose",
        "region",
        "view",
        "after_operation_id",
        "capture_id",
        "width",
        "height",
        "format",
        "plan_id",
        "compare",
    },  # plan_id/compare: issue 32 item 1
    "camera_save": {"camera_id", "name", "pose"},
    "asset_list": {"query", "cursor"},
    "schematic_export": {"name", "min", "max", "origin"},
    "schematic_import_prepare": {"asset_id", "target", "rotation", "allow_drop_block_entities"},
}
REQUIRED = {
    "project_context": set(),
    "region_inspect": {"min", "max", "detail"},
    "build_prepare": {"recipe"},
    "build_apply": {"plan_id", "plan_hash", "idempotency_key"},
    "operation_status": {"operation_id"},
    "operation_cancel": {"operation_id"},
    "operation_undo_prepare": {"operation_id"},
    "part_define": {"name", "operation_id"},
    "part_get": {"part_id"},
    "region_changes": {"region"},
    "region_history": {"region"},
    "rollback_prepare": {"region", "since_millis"},
    "camera_list": set(),
    "camera_capture": set(),
    "camera_save": {"camera_id", "pose"},
    "asset_list": set(),
    "schematic_export": {"name", "min", "max"},
    "schematic_import_prepare": {"asset_id", "target"},
}
MODES = ["auto", "legacy"]


async def with_client(env: FakeEnv, body: Any, mode: str = "auto", **cfg: Any) -> Any:
    bridge = Bridge(env.config(**cfg))
    try:
        async with Client(build_server(bridge), mode=mode) as client:
            return await body(client)
    finally:
        await bridge.journal.close()


def payload(result: Any) -> dict[str, Any]:
    """The JSON text content, checked to equal structuredContent."""
    assert len(result.content) == 1 and result.content[0].type == "text"
    text = result.content[0].text
    assert len(text.encode()) <= render.MAX_TEXT_BYTES
    data = json.loads(text)
    assert result.structured_content == data
    return data


def ok(result: Any) -> dict[str, Any]:
    data = payload(result)
    assert result.is_error is False, data
    return data


def err(result: Any) -> dict[str, Any]:
    data = payload(result)
    assert result.is_error is True, data
    assert set(data) == {"error"}
    return data["error"]


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        out = set(node)
        for v in node.values():
            out |= _keys(v)
        return out
    if isinstance(node, list):
        return set().union(*map(_keys, node)) if node else set()
    return set()


@pytest.mark.parametrize("mode", MODES)
def test_list_tools_is_the_contract(fresh_fake: FakeEnv, mode: str) -> None:
    async def body(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == set(TOOLS)
        for name, tool in tools.items():
            schema = tool.input_schema
            assert schema["type"] == "object"
            assert set(schema["properties"]) == TOOLS[name], name
            assert set(schema.get("required", [])) == REQUIRED[name], name
            assert schema["additionalProperties"] is False
            # the trusted ids never appear anywhere in a schema
            assert not {"project_id", "player_id", "world", "world_id"} & _keys(schema["properties"]), name
            assert tool.description and len(tool.description) > 100, name
        # the error shape is said once (project_context), not repeated per tool
        assert "error" in tools["project_context"].description
        ri = tools["region_inspect"].input_schema["properties"]
        assert ri["detail"]["enum"] == ["summary", "blocks", "heightmap"]
        for corner in ("min", "max"):
            assert ri[corner]["$ref"] == "#/$defs/vec3"
        assert set(tools["region_inspect"].input_schema["$defs"]["vec3"]["required"]) == {"x", "y", "z"}
        assert tools["project_context"].annotations.read_only_hint is True
        assert not tools["build_apply"].annotations.read_only_hint

    arun(with_client(fresh_fake, body, mode))


@pytest.mark.parametrize("mode", MODES)
def test_round_trip_every_tool(fresh_fake: FakeEnv, mode: str) -> None:
    fake = fresh_fake.fake

    async def body(client: Client) -> None:
        ctx = ok(await client.call_tool("project_context", {}))
        assert ctx["project"]["project_id"] == PROJECT
        assert ctx["project"]["area"] == {"min": {"x": -64, "y": -64, "z": -64}, "max": {"x": 63, "y": 319, "z": 63}}
        assert ctx["world"]["min_y"] == -64 and ctx["world"]["max_y"] == 319
        assert "host_instance" not in ctx["world"]
        assert ctx["limits"]["max_examined_positions"] == 2_000_000  # uint64 -> JSON number
        assert "recipe_operations" in ctx and "conventions" in ctx

        summary = ok(
            await client.call_tool(
                "region_inspect",
                {"min": {"x": 0, "y": 62, "z": 0}, "max": {"x": 3, "y": 65, "z": 3}, "detail": "summary"},
            )
        )
        assert summary["positions"] == 64 and summary["non_air"] == 32
        assert {p["state"]: p["count"] for p in summary["palette"]} == {
            "minecraft:air": 32,
            "minecraft:stone": 16,
            "minecraft:grass_block[snowy=false]": 16,
        }

        recipe = {
            "version": 1,
            "operations": [
                {
                    "type": "box",
                    "min": {"x": 10, "y": 64, "z": 10},
                    "max": {"x": 11, "y": 65, "z": 10},
                    "block": "minecraft:stone_bricks",
                }
            ],
        }
        plan = ok(
            await client.call_tool(
                "build_prepare",
                {
                    "recipe": recipe,
                    "dependencies": [
                        {"x": 10, "y": 63, "z": 10},
                        {"pos": {"x": 11, "y": 63, "z": 10}, "state": "minecraft:grass_block"},
                    ],
                    "part_id": "walls",
                },
            )
        )
        assert plan["changed_blocks"] == 4 and plan["plan_id"].startswith("plan-")
        assert plan["region"] == {"min": {"x": 10, "y": 64, "z": 10}, "max": {"x": 11, "y": 65, "z": 10}}
        assert "next" in plan

        key = f"k-{mode}"
        op = ok(
            await client.call_tool(
                "build_apply", {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": key}
            )
        )
        assert op["state"] == "applied" and op["written"] + op["already"] == 4
        assert op["replayed"] is False and op["conflicts"] == 0  # zeros are shown
        again = ok(
            await client.call_tool(
                "build_apply", {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": key}
            )
        )
        assert again["operation_id"] == op["operation_id"] and again["replayed"] is True

        st = ok(await client.call_tool("operation_status", {"operation_id": op["operation_id"]}))
        assert st["state"] == "applied" and st["operation_id"] == op["operation_id"]

        blocks = ok(
            await client.call_tool(
                "region_inspect",
                {"min": {"x": 10, "y": 64, "z": 10}, "max": {"x": 11, "y": 65, "z": 11}, "detail": "blocks"},
            )
        )
        sym = {v: k for k, v in blocks["legend"].items()}
        s, a = sym["minecraft:stone_bricks"], sym["minecraft:air"]
        assert a == "."
        assert blocks["layers"] == [
            {"y": 64, "z_from": 10, "rows": [s + s, a + a]},
            {"y": 65, "z_from": 10, "rows": [s + s, a + a]},
        ]
        assert blocks["page"] == {"first_position": 0, "count": 8, "non_air": 4}
        assert blocks["truncated"] is False and "next_cursor" not in blocks
        assert "orientation" in blocks

    arun(with_client(fresh_fake, body, mode))
    methods = [c[0] for c in fake.calls]
    # project_context reads the build area's heightmaps (top-down slabs) for its ground height
    ground_reads = next(
        i for i, c in enumerate(fake.calls[1:]) if c[0] != "RegionInspect" or c[2].detail != "heightmap"
    )
    assert 1 <= ground_reads <= 8
    del methods[1 : 1 + ground_reads]
    assert methods == [
        "ProjectContext",
        "RegionInspect",
        "BuildPrepare",
        "BuildApply",
        "BuildApply",
        "OperationStatus",
        "RegionInspect",
    ]
    # every call carried the trusted identity and the agent token, and nothing else decides them
    for _, md, _ in fake.calls:
        assert md["authorization"] == f"Bearer {TOKEN}"
        assert md["x-mcb-project-id"] == PROJECT and md["x-mcb-player-id"] == PLAYER
    prep = next(req for m, _, req in fake.calls if m == "BuildPrepare")
    assert prep.part_id == "walls"
    assert [(d.pos.x, d.pos.y, d.pos.z, d.state) for d in prep.dependencies] == [
        (10, 63, 10, ""),
        (11, 63, 10, "minecraft:grass_block"),
    ]


def test_seed_recipe_passes_the_schema(fresh_fake: FakeEnv) -> None:
    async def body(client: Client) -> None:
        plan = ok(await client.call_tool("build_prepare", {"recipe": SEED_RECIPE}))
        assert plan["plan_id"]
        sent = json.loads(next(r for m, _, r in fresh_fake.fake.calls if m == "BuildPrepare").recipe_json)
        assert sent == SEED_RECIPE

    arun(with_client(fresh_fake, body))


def test_wrong_identity_is_refused_by_the_journal(fresh_fake: FakeEnv) -> None:
    """The fake asserts the metadata: another project or token is refused, not silently served."""

    async def body(client: Client) -> None:
        return err(await client.call_tool("project_context", {}))

    e = arun(with_client(fresh_fake, body, project_id="someone-else"))
    assert e["code"] == "permission_denied" and e["retryable"] is False
    e = arun(with_client(fresh_fake, body, agent_token="not-the-token"))
    assert e["code"] == "unauthenticated"
    assert fresh_fake.fake.calls[0][1]["x-mcb-project-id"] == "someone-else"


BAD_ARGS = [
    (
        "region_inspect",
        {"min": {"x": 0, "y": 0, "z": 0}, "max": {"x": 1, "y": 1, "z": 1}, "detail": "everything"},
        "detail",
    ),
    ("region_inspect", {"min": {"x": 0, "y": 0}, "max": {"x": 1, "y": 1, "z": 1}, "detail": "summary"}, "min"),
    (
        "region_inspect",
        {"min": {"x": 0.5, "y": 0, "z": 0}, "max": {"x": 1, "y": 1, "z": 1}, "detail": "summary"},
        "min.x",
    ),
    (
        "region_inspect",
        {"min": {"x": 0, "y": 0, "z": 0}, "max": {"x": 1, "y": 1, "z": 1}, "detail": "summary", "project_id": "other"},
        "project_id",
    ),
    ("project_context", {"player_id": "someone"}, "player_id"),
    ("build_prepare", {}, "recipe"),
    (
        "build_prepare",
        {"recipe": {"version": 1, "operations": [{"type": "box", "min": {"x": 0, "y": 0, "z": 0}}]}},
        "recipe.operations[0]",
    ),
    ("build_prepare", {"recipe": {"version": 1, "operations": []}}, "recipe.operations"),
    ("build_prepare", {"recipe": SEED_RECIPE, "dependencies": [{"x": 1}]}, "dependencies[0]"),
    ("build_apply", {"plan_id": "p", "plan_hash": "h"}, "idempotency_key"),
    ("build_apply", {"plan_id": "p", "plan_hash": "h", "idempotency_key": ""}, "idempotency_key"),
    ("operation_status", {"operation_id": 7}, "operation_id"),
]


@pytest.mark.parametrize("tool,args,mentions", BAD_ARGS, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(BAD_ARGS)])
def test_schema_violations_are_structured_invalid_request(
    fresh_fake: FakeEnv, tool: str, args: dict, mentions: str
) -> None:
    async def body(client: Client) -> dict:
        return err(await client.call_tool(tool, args))

    e = arun(with_client(fresh_fake, body))
    assert e["code"] == "invalid_request" and e["retryable"] is False
    assert mentions in e["message"], e
    assert e["details"]["problems"] and all({"path", "message"} <= set(p) for p in e["details"]["problems"])
    assert e["hint"]
    assert fresh_fake.fake.calls == []  # nothing reached the journal


def test_heightmap_and_region_checks(fresh_fake: FakeEnv) -> None:
    async def body(client: Client) -> list[dict]:
        out = []
        base = {"min": {"x": 0, "y": 0, "z": 0}, "max": {"x": 1, "y": 1, "z": 1}}
        out.append(
            err(
                await client.call_tool(
                    "region_inspect",
                    {"min": {"x": 5, "y": 0, "z": 0}, "max": {"x": 1, "y": 1, "z": 1}, "detail": "summary"},
                )
            )
        )
        out.append(err(await client.call_tool("region_inspect", {**base, "detail": "blocks", "cursor": "garbage"})))
        out.append(err(await client.call_tool("region_inspect", {**base, "detail": "summary", "cursor": "x"})))
        return out

    order, cursor, summary_cursor = arun(with_client(fresh_fake, body))
    assert order["code"] == "invalid_request" and "min.x" in order["message"]
    # the cursor is the journal's, passed through as is: the journal refuses one it did not issue
    assert cursor["code"] == "invalid_request" and "cursor" in cursor["message"]
    assert summary_cursor["code"] == "invalid_request"
    assert [c[0] for c in fresh_fake.fake.calls] == ["RegionInspect"]


def test_heightmap_reaches_the_journal_and_renders_rows(fresh_fake: FakeEnv) -> None:
    async def body(client: Client) -> dict:
        return ok(
            await client.call_tool(
                "region_inspect",
                {"min": {"x": 0, "y": 60, "z": 0}, "max": {"x": 3, "y": 70, "z": 5}, "detail": "heightmap", "step": 2},
            )
        )

    hm = arun(with_client(fresh_fake, body))
    assert hm["detail"] == "heightmap"
    grid = hm["heightmap"]
    assert grid["step"] == 2 and len(grid["rows"]) == 3 and all(len(r) == 2 for r in grid["rows"])
    assert all(v is None or isinstance(v, int) for r in grid["rows"] for v in r)
    assert [c[0] for c in fresh_fake.fake.calls] == ["RegionInspect"]


def _collect(pages: list[dict]) -> dict[tuple[int, int, int], str]:
    out: dict[tuple[int, int, int], str] = {}
    for page in pages:
        legend = page["legend"]
        w = page["symbol_width"]
        x0 = page["region"]["min"]["x"]
        for layer in page["layers"]:
            for j, row in enumerate(layer["rows"]):
                for i in range(0, len(row), w):
                    sym = row[i : i + w]
                    if sym == " " * w:
                        continue
                    pos = (x0 + i // w, layer["y"], layer["z_from"] + j)
                    assert pos not in out, f"position {pos} rendered twice"
                    out[pos] = legend[sym]
    return out


@pytest.mark.parametrize("wide", [False, True], ids=["few-states", "4096-distinct-long-states"])
def test_blocks_pages_cover_the_region_once_and_stay_bounded(fresh_fake: FakeEnv, wide: bool) -> None:
    """A 16x20x16 region (5120 positions: a full 4096 page and a partial one), read by cursor."""
    from bridge_fake_journal import WIDE_X, state_at

    x0 = WIDE_X if wide else 0
    mn, mx = {"x": x0, "y": 54, "z": 0}, {"x": x0 + 15, "y": 73, "z": 15}

    async def body(client: Client) -> list[dict]:
        pages, cursor = [], None
        for _ in range(50):
            args = {"min": mn, "max": mx, "detail": "blocks"}
            if cursor:
                args["cursor"] = cursor
            page = ok(await client.call_tool("region_inspect", args))
            pages.append(page)
            cursor = page.get("next_cursor")
            if not cursor:
                assert page["truncated"] is False
                return pages
            assert page["truncated"] is True
        raise AssertionError("cursor never ended")

    pages = arun(with_client(fresh_fake, body), timeout=120)
    got = _collect(pages)
    want = {
        (x, y, z): state_at(fresh_fake.fake.world, x, y, z)
        for x in range(mn["x"], mx["x"] + 1)
        for y in range(54, 74)
        for z in range(16)
    }
    assert got == want
    for page in pages:
        assert len(render.dumps(page).encode()) <= render.MAX_TEXT_BYTES
    if wide:
        # 4096 distinct ~90-character states cannot fit in one answer: the bridge cuts the page
        assert len(pages) > 2
        assert pages[0]["symbol_width"] == 2 or len(pages[0]["legend"]) <= 92
    else:
        assert len(pages) == 2 and pages[0]["page"]["count"] == 4096
        assert len(render.dumps(pages[0]).encode()) < 16 * 1024  # ~a few thousand tokens


def test_cursor_is_bound_to_its_region(fresh_fake: FakeEnv) -> None:
    async def body(client: Client) -> dict:
        mn, mx = {"x": 0, "y": 50, "z": 0}, {"x": 15, "y": 69, "z": 15}
        first = ok(await client.call_tool("region_inspect", {"min": mn, "max": mx, "detail": "blocks"}))
        other = dict(mx, x=14)
        return err(
            await client.call_tool(
                "region_inspect", {"min": mn, "max": other, "detail": "blocks", "cursor": first["next_cursor"]}
            )
        )

    e = arun(with_client(fresh_fake, body))
    assert e["code"] == "invalid_request" and "region" in e["message"]


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_error_code_maps_to_a_tool_error(fresh_fake: FakeEnv, code: ErrorCode) -> None:
    async def body(client: Client) -> dict:
        return err(await client.call_tool("operation_status", {"operation_id": f"fail:{code}"}))

    e = arun(with_client(fresh_fake, body))
    assert e["code"] == str(code)
    assert e["retryable"] is RETRYABLE[code]
    assert e["message"] == f"injected {code}"
    assert e["details"] == {"injected": str(code)}
    assert e["hint"]


def test_long_lists_are_sampled_with_counts(fresh_fake: FakeEnv) -> None:
    async def body(client: Client) -> dict:
        return ok(await client.call_tool("operation_status", {"operation_id": "many-conflicts"}))

    st = arun(with_client(fresh_fake, body))
    assert len(st["conflict_samples"]) == render.SAMPLE_LIMITS["conflict_samples"]
    assert st["conflict_samples_omitted"] == 500 - render.SAMPLE_LIMITS["conflict_samples"]
    assert st["truncated"] is True and st["conflicts"] == 500
    assert st["conflict_samples"][0]["pos"] == {"x": 0, "y": 64, "z": 0}  # zero coords kept


def test_unsupported_block_from_the_journal_keeps_details(fresh_fake: FakeEnv) -> None:
    recipe = {
        "version": 1,
        "operations": [
            {
                "type": "box",
                "min": {"x": 0, "y": 64, "z": 0},
                "max": {"x": 0, "y": 64, "z": 0},
                "block": "minecraft:lava",
            }
        ],
    }

    async def body(client: Client) -> dict:
        return err(await client.call_tool("build_prepare", {"recipe": recipe}))

    e = arun(with_client(fresh_fake, body))
    assert e["code"] == "unsupported_block" and e["details"] == {"block": "minecraft:lava"}


def test_unexpected_exceptions_become_internal_without_leaking(
    fresh_fake: FakeEnv, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(resp: Any, *rest: Any) -> dict:
        raise RuntimeError("secret-internal-detail /home/x/.runtime/secrets/agent.token")

    monkeypatch.setattr(render, "project_context", boom)

    async def body(client: Client) -> dict:
        return err(await client.call_tool("project_context", {}))

    e = arun(with_client(fresh_fake, body))
    assert e["code"] == "internal" and e["retryable"] is False
    assert "secret-internal-detail" not in json.dumps(e) and "Traceback" not in json.dumps(e)
    assert "reference" in e["message"]
    assert "secret-internal-detail" in caplog.text  # it is in the server log instead


def test_journal_crash_and_journal_down(fresh_fake: FakeEnv) -> None:
    from harness import free_port

    async def crash(client: Client) -> dict:
        return err(await client.call_tool("operation_status", {"operation_id": "crash"}))

    e = arun(with_client(fresh_fake, crash))
    assert e["code"] == "internal"

    async def down(client: Client) -> list[dict]:
        a = err(await client.call_tool("project_context", {}))
        b = err(await client.call_tool("build_apply", {"plan_id": "p", "plan_hash": "h", "idempotency_key": "k"}))
        return [a, b]

    a, b = arun(with_client(fresh_fake, down, journal_addr=f"127.0.0.1:{free_port()}", deadline_scale=0.2))
    assert a["code"] == "unavailable" and a["retryable"] is True
    assert b["code"] == "unavailable" and "same" in b["message"] and "idempotency_key" in b["message"]


def test_unknown_tool_is_a_protocol_error(fresh_fake: FakeEnv) -> None:
    from mcp import MCPError

    async def body(client: Client) -> None:
        with pytest.raises(MCPError) as info:
            await client.call_tool("teleport_player", {})
        assert "unknown tool" in str(info.value)

    arun(with_client(fresh_fake, body))


def test_a_call_still_working_after_a_second_sends_progress_each_second(fake_env: FakeEnv) -> None:
    """Issue 31 item 10: any tool that takes over a second reports progress (seconds, no total)
    while the client listens with a progress token; none without one, none for a quick call."""
    import asyncio

    bridge = Bridge(fake_env.config())
    original = bridge._handlers["build_prepare"]

    async def slow(args: dict[str, Any]) -> Any:
        await asyncio.sleep(2.4)
        return await original(args)

    bridge._handlers["build_prepare"] = slow

    async def body() -> list:
        seen: list = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        try:
            async with Client(build_server(bridge), mode="legacy") as client:
                ok(await client.call_tool("build_prepare", {"recipe": SEED_RECIPE}, progress_callback=on_progress))
                quiet = len(seen)
                ok(await client.call_tool("build_prepare", {"recipe": SEED_RECIPE}))  # no token: nothing
                ok(await client.call_tool("project_context", {}, progress_callback=on_progress))  # quick: nothing
                assert len(seen) == quiet
        finally:
            await bridge.journal.close()
        return seen

    seen = arun(body())
    assert [(p, t) for p, t, _ in seen] == [(1, None), (2, None)], seen
    assert seen[0][2] == "build_prepare: working (1 s)", seen
