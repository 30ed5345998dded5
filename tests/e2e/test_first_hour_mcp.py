"""Issue 19 over MCP with the whole stack (`mcb up`): the guides and prompts an agent reads, the
size of tools/list, snake_case keys in the output of EVERY tool, project_context's capabilities /
loaded_area / ground, capture size and format for every kind of capture, saved cameras (the
`camera_save` tool and `mcb camera save`), and the entrance view of a house facing its door."""

from __future__ import annotations

import base64
import io
import json
import re
import struct
import subprocess
import sys
import uuid
from typing import Any

import anyio
import httpx
import pytest
from e2e.mcpclient import ToolError, call, http_client, payload, wait_terminal
from harness import ROOT

BUDGET = 20 * 1024  # bytes of the tools/list answer (services/bridge/tests/test_guides.py has the same)
SNAKE = re.compile(r"[a-z][a-z0-9_]*")
EXAMPLE = re.compile(r"<!-- example: (\w+) -->\n```json\n(.*?)\n```", re.S)
HOUSE = {"min": {"x": 0, "y": 64, "z": 20}, "max": {"x": 8, "y": 67, "z": 26}}  # examples.md house: door z=26


def keys_not_snake(value: Any, path: str = "") -> list[str]:
    """Every object key (outside `legend`, whose keys are symbols) that is not snake_case."""
    bad: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if not SNAKE.fullmatch(str(k)):
                bad.append(f"{path}.{k}")
            if k != "legend":
                bad += keys_not_snake(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            bad += keys_not_snake(v, f"{path}[{i}]")
    return bad


def image_of(result: Any) -> tuple[str, bytes, tuple[int, int]]:
    """(mime type, bytes, (width, height)) of a completed capture's image content."""
    [img] = [c for c in result.content if c.type == "image"]
    data = base64.b64decode(img.data)
    if data.startswith(b"\x89PNG"):
        size = struct.unpack(">II", data[16:24])
    else:
        from PIL import Image

        assert data.startswith(b"\xff\xd8"), data[:4]
        size = Image.open(io.BytesIO(data)).size
    return img.mime_type, data, size


async def capture(client: Any, args: dict) -> tuple[dict, Any]:
    with anyio.fail_after(90):
        result = await client.call_tool("camera_capture", args)
        while True:
            meta = payload(result)
            assert not result.is_error, meta
            if meta["status"] == "completed":
                return meta, result
            await anyio.sleep(0.2)
            result = await client.call_tool("camera_capture", {"capture_id": meta["capture_id"]})


def test_tools_list_size_and_every_guide_and_prompt(stack) -> None:
    headers = {"Authorization": f"Bearer {stack.token('agent')}", "Accept": "application/json, text/event-stream"}
    with httpx.Client(headers=headers, timeout=20) as http:
        init = http.post(
            stack.mcp_url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "e2e", "version": "0"},
                },
            },
        )
        sid = init.headers.get("mcp-session-id")
        h = {"mcp-session-id": sid} if sid else {}
        http.post(stack.mcp_url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h)
        r = http.post(stack.mcp_url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=h)
    body = r.text
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        body = "".join(line[6:] for line in body.splitlines() if line.startswith("data: "))
    assert len(body.encode()) <= BUDGET, f"tools/list is {len(body.encode())} bytes (budget {BUDGET})"
    assert len(json.loads(body)["result"]["tools"]) >= 16

    async def scenario() -> None:
        async with http_client(stack.mcp_url, stack.token("agent")) as client:
            uris = [str(res.uri) for res in (await client.list_resources()).resources]
            assert "mcb://project/context" in uris and "mcb://guides/examples" in uris
            texts = {u: (await client.read_resource(u)).contents[0].text for u in uris}
            ctx = json.loads(texts["mcb://project/context"])
            assert ctx["project"]["area"]["min"]["x"] == -64
            for p in (await client.list_prompts()).prompts:
                args = {a.name: "0,64,0" for a in p.arguments or [] if a.required}
                if p.name == "undo_safely":
                    args = {"operation_id": "op-x"}
                got = await client.get_prompt(p.name, args)
                assert "mcb://" in got.messages[0].content.text or p.name == "undo_safely"
            # every worked example compiles on this world (prepared, not applied)
            examples = dict(EXAMPLE.findall(texts["mcb://guides/examples"]))
            assert set(examples) == {"house", "roof", "windows", "arches"}
            for name, text in examples.items():
                plan = await call(client, "build_prepare", {"recipe": json.loads(text)})
                assert plan["changed_blocks"] > 0, (name, plan)
            # an unknown operation type names the valid ones
            with pytest.raises(ToolError) as ei:
                await call(client, "build_prepare", {"recipe": {"version": 1, "operations": [{"type": "pyramidz"}]}})
            assert "valid types: box, line" in ei.value.error["message"]

    anyio.run(scenario)


def test_every_tool_answers_in_snake_case_and_cameras(stack, tmp_path) -> None:
    outputs: dict[str, list[Any]] = {}

    async def record(client: Any, name: str, args: dict | None = None) -> dict:
        result = await client.call_tool(name, args or {})
        data = payload(result)
        assert not result.is_error, (name, data)
        outputs.setdefault(name, []).append(data)
        return data

    async def scenario() -> set[str]:
        async with http_client(stack.mcp_url, stack.token("agent")) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            ctx = await record(client, "project_context")
            assert listed <= set(ctx["capabilities"])  # every tool
            la = ctx["world"].get("loaded_area")
            if la:  # block coordinates: whole chunks
                assert la["min"]["x"] % 16 == 0 and la["max"]["x"] % 16 == 15, la
            ground = ctx["project"]["ground"]
            assert "note" in ground
            if stack.host == "embedded":  # the flat world: grass at y = 63
                assert ground["typical_y"] == 63 and ground["build_from_y"] == 64, ground
            for detail in ("summary", "blocks", "heightmap"):
                await record(
                    client,
                    "region_inspect",
                    {"min": {"x": 0, "y": 62, "z": 0}, "max": {"x": 3, "y": 65, "z": 3}, "detail": detail},
                )
            ex = dict(EXAMPLE.findall((await client.read_resource("mcb://guides/examples")).contents[0].text))
            plan = await record(client, "build_prepare", {"recipe": json.loads(ex["house"])})
            op = await record(
                client,
                "build_apply",
                {
                    "plan_id": plan["plan_id"],
                    "plan_hash": plan["plan_hash"],
                    "idempotency_key": f"house-{uuid.uuid4().hex[:8]}",
                },
            )
            done = await wait_terminal(client, op["operation_id"])
            assert done["state"] == "applied", done
            st = await record(client, "operation_status", {"operation_id": op["operation_id"]})
            assert "visual_check" not in st  # never set: no status that claims a picture
            await record(client, "operation_cancel", {"operation_id": op["operation_id"]})
            part = await record(client, "part_define", {"name": "house", "operation_id": op["operation_id"]})
            await record(client, "part_get", {"part_id": part["part_id"]})
            await record(client, "region_changes", {"region": HOUSE})
            hist = await record(client, "region_history", {"region": HOUSE})  # issue 32: our build, newest first
            assert hist["entries"] and hist["entries"][0]["operation_id"] == op["operation_id"], hist
            await record(client, "rollback_prepare", {"region": HOUSE, "cause": "explosion", "since_millis": 1})
            await record(client, "operation_undo_prepare", {"operation_id": op["operation_id"]})
            await record(
                client,
                "schematic_export",
                {
                    "name": f"fh_{stack.host.replace('-', '_')}",
                    "min": {"x": 0, "y": 64, "z": 20},
                    "max": {"x": 2, "y": 65, "z": 21},
                },
            )
            assets = await record(client, "asset_list", {})
            asset_id = assets["assets"][0]["asset_id"]
            await record(
                client, "schematic_import_prepare", {"asset_id": asset_id, "target": {"x": 30, "y": 64, "z": 30}}
            )
            await record(client, "camera_list")

            # the entrance view looks at the door's wall from outside (door in the south wall,
            # facing=north as placed from outside): camera south of the house, looking north
            meta, result = await capture(client, {"region": HOUSE, "view": "entrance", "width": 320, "height": 180})
            outputs.setdefault("camera_capture", []).append(meta)
            pose = meta["pose"]
            assert pose["z"] > HOUSE["max"]["z"] + 1, pose
            assert abs(((pose["yaw"] - 180) + 180) % 360 - 180) < 30, pose  # yaw 180 = north
            assert image_of(result)[2] == (320, 180)

            # size and format for every kind of capture
            mime, data, size = image_of(
                (
                    await capture(
                        client,
                        {
                            "pose": {"x": 4.5, "y": 66, "z": 40.5, "yaw": 180, "pitch": 10},
                            "region": HOUSE,
                            "width": 200,
                            "height": 120,
                            "format": "jpeg",
                        },
                    )
                )[1]
            )
            assert (mime, size) == ("image/jpeg", (200, 120)) and data.startswith(b"\xff\xd8")
            mime, data, size = image_of(
                (await capture(client, {"region": HOUSE, "view": "top", "width": 128, "height": 96, "format": "png"}))[
                    1
                ]
            )
            assert (mime, size) == ("image/png", (128, 96))
            saved = await record(
                client,
                "camera_save",
                {"camera_id": "front", "name": "Front door", "pose": {**pose, "width": 240, "height": 135}},
            )
            assert saved["pose"]["width"] == 240
            assert "front" in [c["camera_id"] for c in (await record(client, "camera_list"))["cameras"]]
            assert image_of((await capture(client, {"camera_id": "front"}))[1])[2] == (240, 135)
            mime, _, size = image_of(
                (await capture(client, {"camera_id": "front", "width": 160, "height": 90, "format": "jpeg"}))[1]
            )
            assert (mime, size) == ("image/jpeg", (160, 90))
            return listed

    listed = anyio.run(scenario)
    assert set(outputs) == listed, f"tools without a checked output: {sorted(listed - set(outputs))}"
    bad = {name: keys_not_snake(out) for name, outs in outputs.items() for out in outs if keys_not_snake(out)}
    assert not bad, bad

    # `mcb camera save` (admin) saves the same kind of camera, from a region's entrance view
    env = dict(stack.env)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcb_cli.main",
            "camera",
            "save",
            "cli-front",
            "--region",
            "0,64,20,8,67,26",
            "--view",
            "entrance",
            "--width",
            "320",
            "--height",
            "180",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    cam = json.loads(out.stdout)
    assert cam["camera_id"] == "cli-front" and cam["pose"]["z"] > HOUSE["max"]["z"] + 1 and cam["pose"]["width"] == 320

    async def listed_cameras() -> list[str]:
        async with http_client(stack.mcp_url, stack.token("agent")) as client:
            return [c["camera_id"] for c in (await call(client, "camera_list"))["cameras"]]

    assert "cli-front" in anyio.run(listed_cameras)
