"""Issue 12 item 7: packing finished operations (`mcb journal compact`) changes no answer.

Real processes (tests/e2e/components.py: Redis, the embedded world host, planner, journal,
bridge) with automatic packing off, so the test decides when rows are packed. Before and after
`mcb journal compact`: the undo plans of two overlapping operations (one block edited by a
player and changed back — ABA — and blocks written later by the other operation) have the same
plan hash (the same entries) and the same conflicts; the change feed from an old cursor pages
through the same events; `part_get` answers the same. Then the undo is applied over the packed
journal and the world holds exactly the previous states.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from e2e.components import run, start_components
from e2e.mcpclient import apply_and_wait, call

REGION = {"min": {"x": 30, "y": 64, "z": 30}, "max": {"x": 37, "y": 68, "z": 37}}


def box(x0, y0, z0, x1, y1, z1, block):
    return {
        "version": 1,
        "operations": [
            {"type": "box", "min": {"x": x0, "y": y0, "z": z0}, "max": {"x": x1, "y": y1, "z": z1}, "block": block}
        ],
    }


@pytest.fixture
def comp(tmp_path, monkeypatch):
    monkeypatch.setenv("MCB_JOURNAL_PACK_AFTER_S", "-1")  # no automatic packing: the test packs
    c = start_components(tmp_path / "rt")
    yield c
    c.stop_all()


def admin(comp, *args: str) -> dict:
    env = dict(comp.env) | {"MCB_SECRETS_DIR": str(comp.runtime / "secrets")}
    out = subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def automation(comp, actor, blocks):
    comp.world_rpc(
        "automation_set_blocks",
        {
            "actor": actor,
            "playerId": "player-1",
            "blocks": [{"x": x, "y": y, "z": z, "state": s} for x, y, z, s in blocks],
        },
        principal="automation",
    )


def states(comp, positions):
    got = comp.world_rpc("blocks_get", {"xyz": [c for p in positions for c in p]})
    return [got["palette"][i] for i in got["state"]]


async def answers(client, ops: dict, cursor: str) -> dict:
    out: dict = {}
    for name in ("a", "b"):
        up = await call(client, "operation_undo_prepare", {"operation_id": ops[name]})
        out[f"undo_{name}"] = {
            "plan_hash": up["plan_hash"],
            "changed": up["changed_blocks"],
            "conflicts": sorted(json.dumps(c, sort_keys=True) for c in up.get("conflicts", [])),
            "warnings": up.get("warnings", []),
        }
        out[f"plan_{name}"] = up
    events, cur = [], cursor
    for _ in range(50):
        page = await call(client, "region_changes", {"region": REGION, "since_cursor": cur, "limit": 7})
        events.append({k: page[k] for k in ("changes", "by_source", "events", "complete", "affected_parts")})
        cur = page["next_cursor"]
        if page["complete"]:
            break
    out["feed"] = events
    part = await call(client, "part_get", {"part_id": ops["part"]})
    out["part"] = part
    return out


def test_compaction_keeps_undo_feed_and_parts_exact(comp):
    ops: dict = {}
    got: dict = {}

    async def scenario(client):
        fresh = await call(client, "region_changes", {"region": REGION, "since_cursor": ""})
        a = await apply_and_wait(
            client, await call(client, "build_prepare", {"recipe": box(30, 64, 30, 35, 66, 35, "minecraft:stone")})
        )
        b = await apply_and_wait(
            client, await call(client, "build_prepare", {"recipe": box(33, 66, 30, 37, 68, 37, "minecraft:bricks")})
        )
        assert a["state"] == b["state"] == "applied"
        ops.update(a=a["operation_id"], b=b["operation_id"])
        ops["part"] = (await call(client, "part_define", {"name": "shell", "operation_id": ops["b"]}))["part_id"]
        automation(comp, "player", [(30, 64, 30, "minecraft:glass")])
        automation(comp, "player", [(30, 64, 30, "minecraft:stone")])  # changed back: ABA
        automation(comp, "environment", [(31, 64, 30, "minecraft:water")])
        automation(comp, "player", [(36, 67, 36, "minecraft:glass")])  # inside part b
        got["before"] = await answers(client, ops, fresh["next_cursor"])
        st = admin(comp, "journal", "stats")
        assert st["packable"]["operations"] >= 2 and st["live"]["write_rows"] > 0, st
        got["compact"] = admin(comp, "journal", "compact")
        got["stats"] = admin(comp, "journal", "stats")
        got["after"] = await answers(client, ops, fresh["next_cursor"])
        # the undo of a, planned over the packed journal, applied
        st = await apply_and_wait(client, got["after"]["plan_a"])
        got["undone"] = st

    run(comp, scenario)
    before, after = got["before"], got["after"]
    assert got["compact"]["packed_operations"] >= 2 and got["compact"]["rows"]["writes"] >= 108 + 120
    assert got["stats"]["packable"]["operations"] == 0 and got["stats"]["live"]["write_rows"] == 0
    assert got["stats"]["packed"]["write_rows"] >= 108 + 120
    assert got["compact"]["bytes_after"]["total"] < got["compact"]["bytes_before"]["total"]
    for k in ("undo_a", "undo_b", "feed", "part"):
        assert after[k] == before[k], k
    # the checks really looked at history: later writes of b, the ABA block and the water are conflicts
    conflicts = [json.loads(c) for c in before["undo_a"]["conflicts"]]
    sources = {(c["pos"]["x"], c["pos"]["y"], c["pos"]["z"]): c["source"] for c in conflicts}
    assert sources[(30, 64, 30)] == "player" and sources[(31, 64, 30)] == "environment"
    assert sum(1 for s in sources.values() if s == "ours") == 3 * 6  # y=66, x 33..35, z 30..35
    assert sum(len(p["events"]) for p in before["feed"]) == 108 + 120 + 4
    assert before["part"]["external_changes_since"]["count"] == 1

    assert got["undone"]["state"] == "applied" and got["undone"]["written"] == before["undo_a"]["changed"]
    kept = {(30, 64, 30), (31, 64, 30)} | {(x, 66, z) for x in range(33, 36) for z in range(30, 36)}
    undone = [(x, y, z) for x in range(30, 36) for y in range(64, 67) for z in range(30, 36) if (x, y, z) not in kept]
    assert set(states(comp, undone)) == {"minecraft:air"}
    stone, water, bricks = states(comp, [(30, 64, 30), (31, 64, 30), (33, 66, 30)])
    assert (stone, bricks) == ("minecraft:stone", "minecraft:bricks") and water.startswith("minecraft:water")
