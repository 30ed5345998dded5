"""Schematics end to end on the running stack (`mcb up`, on each world host), through MCP only (plus the world
host's protocol to read the result back): build → schematic_export → asset_list →
schematic_import_prepare rotated elsewhere → build_apply → the rotated states are in the world.
Also: a bad file never breaks asset_list; block entities the model cannot carry (a jigsaw) are
refused, or left out and listed with the opt-in; an export over entities (from the world's entity region file) is refused
with their list (embedded: the only host that stores entities); a host that reports no entities
gets an export that says so.
"""

from __future__ import annotations

import base64
import shutil
import uuid
from array import array
from pathlib import Path

import anyio
import pytest
from e2e.mcpclient import ToolError, call, http_client, wait_terminal
from mcb_common.registry import Registry
from mcb_common.transforms import rotate

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
TIMEOUT = 60
STAIRS = "minecraft:oak_stairs[facing=north,half=bottom,shape=straight,waterlogged=false]"
LOG = "minecraft:oak_log[axis=x]"
DOOR = "minecraft:oak_door[facing=east,half=lower,hinge=left,open=false,powered=false]"
DOOR_TOP = "minecraft:oak_door[facing=east,half=upper,hinge=left,open=false,powered=false]"
FENCE = "minecraft:oak_fence[east=false,north=true,south=false,waterlogged=false,west=false]"
SLAB = "minecraft:stone_slab[type=top,waterlogged=false]"
MIN = {"x": 20, "y": 64, "z": 20}
MAX = {"x": 23, "y": 66, "z": 22}
RECIPE = {
    "version": 1,
    "operations": [
        {
            "type": "box",
            "min": {"x": 20, "y": 64, "z": 20},
            "max": {"x": 23, "y": 64, "z": 22},
            "block": "minecraft:stone",
        },
        {"type": "box", "min": {"x": 20, "y": 65, "z": 20}, "max": {"x": 20, "y": 65, "z": 20}, "block": STAIRS},
        {"type": "box", "min": {"x": 21, "y": 65, "z": 20}, "max": {"x": 22, "y": 65, "z": 20}, "block": LOG},
        {"type": "box", "min": {"x": 23, "y": 65, "z": 21}, "max": {"x": 23, "y": 65, "z": 21}, "block": DOOR},
        {"type": "box", "min": {"x": 23, "y": 66, "z": 21}, "max": {"x": 23, "y": 66, "z": 21}, "block": DOOR_TOP},
        {"type": "box", "min": {"x": 20, "y": 65, "z": 22}, "max": {"x": 20, "y": 65, "z": 22}, "block": FENCE},
        {"type": "box", "min": {"x": 21, "y": 66, "z": 22}, "max": {"x": 21, "y": 66, "z": 22}, "block": SLAB},
    ],
}


async def apply(client, plan: dict) -> dict:
    op = await call(
        client,
        "build_apply",
        {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": f"e2e-schem-{uuid.uuid4()}"},
    )
    return await wait_terminal(client, op["operation_id"])


def read_world(stack, lo: dict, hi: dict) -> dict[tuple[int, int, int], str]:
    res = stack.world_rpc("region_read", {"min": lo, "max": hi})
    idx = array("H")
    idx.frombytes(base64.b64decode(res["indices"]))
    pal = res["palette"]
    out = {}
    i = 0
    for y in range(lo["y"], hi["y"] + 1):
        for z in range(lo["z"], hi["z"] + 1):
            for x in range(lo["x"], hi["x"] + 1):
                out[(x, y, z)] = pal[idx[i]]
                i += 1
    return out


def test_export_list_import_rotated(stack):
    registry = Registry.load()

    async def scenario():
        async with http_client(stack.mcp_url, stack.token("agent")) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert {"asset_list", "schematic_export", "schematic_import_prepare"} <= tools
            ctx = await call(client, "project_context")
            assert "schematic_import_prepare" in ctx["capabilities"]

            built = await apply(client, await call(client, "build_prepare", {"recipe": RECIPE}))
            assert built["state"] == "applied", built
            source = read_world(stack, MIN, MAX)

            meta = await call(client, "schematic_export", {"name": "e2e_house", "min": MIN, "max": MAX, "origin": MIN})
            assert (meta["asset_id"], meta["width"], meta["height"], meta["length"]) == ("e2e_house", 4, 3, 3)
            assert meta["block_count"] == sum(1 for s in source.values() if s != "minecraft:air")
            assert meta["offset"] == {"x": 0, "y": 0, "z": 0} and len(meta["sha256"]) == 64
            assert (stack.runtime / "assets" / "e2e_house.schem").stat().st_size == meta["bytes"]
            with pytest.raises(ToolError) as ei:
                await call(client, "schematic_export", {"name": "e2e_house", "min": MIN, "max": MAX})
            assert "already exists" in ei.value.error["message"]
            with pytest.raises(ToolError):
                await call(client, "schematic_export", {"name": "../evil", "min": MIN, "max": MAX})

            listing = await call(client, "asset_list", {"query": "E2E"})
            assert [a["asset_id"] for a in listing["assets"]] == ["e2e_house"]
            assert listing["assets"][0]["sha256"] == meta["sha256"]

            target = {"x": -30, "y": 70, "z": -30}
            plan = await call(
                client, "schematic_import_prepare", {"asset_id": "e2e_house", "target": target, "rotation": 90}
            )
            assert plan["total_positions"] == 4 * 3 * 3
            assert any("air" in w for w in plan.get("warnings", []))
            done = await apply(client, plan)
            assert done["state"] == "applied", done

            # expected: (dx, dz) -> (-dz, dx) around target, states turned one quarter clockwise
            expected = {}
            for (x, y, z), st in source.items():
                dx, dz = x - MIN["x"], z - MIN["z"]
                expected[(target["x"] - dz, target["y"] + y - MIN["y"], target["z"] + dx)] = rotate(st, 1, registry)
            xs, ys, zs = zip(*expected, strict=False)
            got = read_world(
                stack, {"x": min(xs), "y": min(ys), "z": min(zs)}, {"x": max(xs), "y": max(ys), "z": max(zs)}
            )
            assert {p: got[p] for p in expected} == expected
            assert got[(target["x"], target["y"] + 1, target["z"])].startswith("minecraft:oak_stairs[facing=east"), (
                "stairs facing north turn to face east"
            )

            # re-importing the same plan target again: everything is already there
            again = await call(
                client, "schematic_import_prepare", {"asset_id": "e2e_house", "target": target, "rotation": 90}
            )
            assert again["changed_blocks"] == 0 and again["already_blocks"] == 36

    anyio.run(scenario)


def test_bad_files_and_block_entities(stack):
    if not FIXTURES.is_dir():
        pytest.skip(f"third-party fixtures not present at {FIXTURES} (CI provides ../shared/fixtures)")
    assets = stack.runtime / "assets"
    assets.mkdir(exist_ok=True)
    (assets / "broken.schem").write_bytes(b"\x1f\x8b\x08\x00junk")
    (assets / "huge.schem").write_bytes(b"\x1f\x8b" + bytes(1024 * 1024))  # one byte over 1 MiB
    shutil.copyfile(FIXTURES / "schem" / "nucleation_new_chest_test_v2.schem", assets / "chests.schem")
    shutil.copyfile(FIXTURES / "structure" / "fabric_test_structure.nbt", assets / "statue.nbt")
    shutil.copyfile(FIXTURES / "structure" / "fabric_cactus_farm.nbt", assets / "farm.nbt")

    async def scenario():
        async with http_client(stack.mcp_url, stack.token("agent")) as client:
            listing = await call(client, "asset_list", {})
            by_id = {a["asset_id"]: a for a in listing["assets"]}
            assert not by_id["broken"]["valid"] and by_id["broken"]["reason"]
            assert by_id["chests"]["valid"] and by_id["chests"]["block_entities"] == 6
            assert by_id["statue.nbt"]["read_only"]
            assert not by_id["huge"]["valid"] and "limit" in by_id["huge"]["reason"]
            with pytest.raises(ToolError) as ei:
                await call(
                    client, "schematic_import_prepare", {"asset_id": "huge", "target": {"x": 40, "y": 70, "z": 40}}
                )
            assert ei.value.error["code"] == "budget_exceeded"
            with pytest.raises(ToolError) as ei:
                await call(
                    client,
                    "schematic_import_prepare",
                    {"asset_id": "../secrets/agent", "target": {"x": 40, "y": 70, "z": 40}},
                )
            assert ei.value.error["code"] == "invalid_request"
            # a jigsaw block is refused (with its position and reason) unless the opt-in leaves it out
            with pytest.raises(ToolError) as ei:
                await call(
                    client, "schematic_import_prepare", {"asset_id": "farm.nbt", "target": {"x": 40, "y": 70, "z": 40}}
                )
            assert ei.value.error["code"] == "unsupported_block" and "jigsaw" in ei.value.error["message"]
            assert ei.value.error["details"]["block_entities"][0]["pos"] == [0, 0, 4]
            with pytest.raises(ToolError) as ei:
                await call(
                    client,
                    "schematic_import_prepare",
                    {"asset_id": "statue.nbt", "target": {"x": 40, "y": 70, "z": 40}},
                )
            assert "entities" in ei.value.error["message"]
            with pytest.raises(ToolError) as ei:
                await call(
                    client, "schematic_import_prepare", {"asset_id": "broken", "target": {"x": 40, "y": 70, "z": 40}}
                )
            assert ei.value.error["code"] == "invalid_request"
            plan = await call(
                client,
                "schematic_import_prepare",  # on the ground: its sand needs support
                {"asset_id": "farm.nbt", "target": {"x": 40, "y": 64, "z": 40}, "allow_drop_block_entities": True},
            )
            assert plan["left_out"] == [{"pos": {"x": 40, "y": 64, "z": 44}, "id": "minecraft:jigsaw"}]
            # chests and shulker boxes with items import with their contents (test_schematic_furniture_e2e.py)
            plan = await call(
                client, "schematic_import_prepare", {"asset_id": "chests", "target": {"x": 40, "y": 70, "z": 40}}
            )
            assert not plan.get("left_out") and plan["total_positions"] == 7 * 5 * 12

    anyio.run(scenario)


def test_export_refuses_entities(stack):
    """An armor stand and an item frame stored in the world's entity region file (1.17+
    layout, written here with our NBT codec while the host runs: it only ever reads them)
    make schematic_export refuse with the list; the box beside them exports."""
    if stack.host != "embedded":
        pytest.skip(
            f"{stack.host} reports no entities (no 'region_read.entities' capability: java-core's in-memory "
            "world has no entity storage, the Paper plugin lists none) and this test writes them into the "
            "embedded host's region files; test_export_says_when_the_host_reports_no_entities covers it"
        )
    from mcb_common import nbt
    from mcb_world_host.region import RegionFile, region_name

    def ent(eid, pos):
        return nbt.Compound(
            id=nbt.String(eid),
            Pos=nbt.List(nbt.DOUBLE, [nbt.Double(v) for v in pos]),
            UUID=nbt.IntArray([1, 2, 3, len(eid)]),
        )

    root = nbt.Compound(
        DataVersion=nbt.Int(4671),
        Position=nbt.IntArray([0, -1]),
        Entities=nbt.List(
            nbt.COMPOUND,
            [ent("minecraft:armor_stand", (1.5, 64.0, -10.5)), ent("minecraft:item_frame", (2.5, 65.5, -9.03125))],
        ),
    )
    r = RegionFile(stack.runtime / "world" / "entities" / region_name(0, -1), create=True)
    try:
        r.write_chunk(0, -1, nbt.write(root))
    finally:
        r.close()
    lo, hi = {"x": 0, "y": 64, "z": -12}, {"x": 3, "y": 66, "z": -9}
    res = stack.world_rpc("region_read", {"min": lo, "max": hi})
    assert [e["id"] for e in res["entities"]] == ["minecraft:armor_stand", "minecraft:item_frame"]
    assert "region_read.entities" in stack.world_rpc("world_info", {})["capabilities"]

    async def scenario():
        async with http_client(stack.mcp_url, stack.token("agent")) as client:
            with pytest.raises(ToolError) as ei:
                await call(client, "schematic_export", {"name": "e2e_with_stand", "min": lo, "max": hi})
            err = ei.value.error
            assert err["code"] == "unsupported_block" and "2 entities" in err["message"], err
            assert [e["id"] for e in err["details"]["entities"]] == ["minecraft:armor_stand", "minecraft:item_frame"]
            assert err["details"]["entities_count"] == 2
            assert not (stack.runtime / "assets" / "e2e_with_stand.schem").exists()
            meta = await call(
                client,
                "schematic_export",
                {"name": "e2e_beside_stand", "min": {"x": 4, "y": 64, "z": -12}, "max": {"x": 6, "y": 66, "z": -9}},
            )
            assert meta["asset_id"] == "e2e_beside_stand" and "players are never exported" in meta["warnings"]

    anyio.run(scenario)


def test_export_says_when_the_host_reports_no_entities(stack):
    """Where region_read reports no entities (the Java core, so far the Paper adapter too), an
    export cannot refuse armor stands or item frames: it must say they were not checked."""
    sees_entities = "region_read.entities" in stack.world_rpc("world_info", {})["capabilities"]

    async def scenario():
        async with http_client(stack.mcp_url, stack.token("agent")) as client:
            meta = await call(
                client,
                "schematic_export",
                {
                    "name": f"e2e_{stack.host.replace('-', '_')}_caps",
                    "min": {"x": 8, "y": 64, "z": -12},
                    "max": {"x": 9, "y": 65, "z": -11},
                },
            )
            unchecked = [w for w in meta["warnings"] if "does not report entities" in w]
            assert bool(unchecked) == (not sees_entities), meta["warnings"]
            assert "players are never exported" in meta["warnings"]

    anyio.run(scenario)
