"""Bytes of a plan summary that replaces 10,000 (and 100,000) player blocks (issue 13, target
≤ 4 KB), and what counting the replaced blocks by source costs at prepare.

The journal core's real build_prepare (planner compiled in-process) over a real SQLite journal
that holds one observed player event per replaced block; the world answers "stone" on the
layer y=64 (an in-process stand-in for the world host: region reads are not what is measured).
Times: wall clock and this process's CPU time (the CPU figure is steadier on a shared machine).
The summary is rendered the way the bridge renders it for MCP (render.plan_summary, compact
JSON); the refused build_apply's error the way the bridge's error boundary renders it.

    uv run python bench/plan_summary_bytes.py            # 10,000 and 99,856 player blocks
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from mcb.journal.v1 import journal_pb2 as jpb
from mcb.world.v1 import world_pb2
from mcb_bridge import render
from mcb_bridge.errors import error_payload
from mcb_common.errors import McbError
from mcb_journal import planstore
from mcb_journal.blobs import BlobStore
from mcb_journal.core import JournalCore
from mcb_journal.db import Database
from mcb_journal.history import pack_operation
from mcb_journal.projects import Caller
from mcb_planner.servicer import compile_request

AIR, STONE = "minecraft:air", "minecraft:stone"
CALLER = Caller("agent", "p", "alice")


class LayerWorld:
    async def world_info(self):
        return world_pb2.WorldInfo(world_uuid="w-1", epoch=1, minecraft_version="1.21.11")

    async def call(self, method, params, result_type):
        if method == "region_read":
            lo, hi = params.min, params.max
            layer = (hi.x - lo.x + 1) * (hi.z - lo.z + 1)
            idx = b"".join((b"\x01\x00" if y == 64 else b"\x00\x00") * layer for y in range(lo.y, hi.y + 1))
            return world_pb2.RegionReadResult(palette=[AIR, STONE], indices=idx)
        ys = params.xyz[1::3]
        return world_pb2.BlocksGetResult(palette=[AIR, STONE], state=[1 if y == 64 else 0 for y in ys])

    async def call_json(self, method, params):  # the journal's observer: no block event arrives
        assert method == "events_since"
        return {"nextCursor": params.cursor or "h:0", "complete": True}


class Planner:
    async def compile(self, req):
        return compile_request(req)


class Queue:
    """The progress stream's interface (the apply work is queued in SQLite)."""

    async def progress(self, event):
        pass


def run(side: int, tmp: Path, who: str = "player") -> dict:
    core = JournalCore(
        db=Database(tmp / f"j{side}{who}.sqlite"),
        blobs=BlobStore(tmp / f"b{side}{who}"),
        world=LayerWorld(),
        planner=Planner(),
        queue=Queue(),
    )
    core.projects.load(
        [
            {
                "project_id": "p",
                "owner_player_id": "alice",
                "area": {"min": {"x": -400, "y": -64, "z": -400}, "max": {"x": 400, "y": 319, "z": 400}},
            }
        ]
    )
    layer = [(x, z) for x in range(side) for z in range(side)]
    with core.db.tx() as c:  # who placed every block of the layer ("unknown": nobody recorded, terrain)
        if who == "player":
            c.executemany(
                "INSERT INTO observed(kind, host_instance, host_seq, x, y, z, before, after, source,"
                " player_id, op_id, at_ms) VALUES ('event','h',?,?,64,?,?,?,'player','p-1','',0)",
                [(i, x, z, AIR, STONE) for i, (x, z) in enumerate(layer)],
            )
        elif who == "ours":  # one finished operation of ours wrote them; packed as the journal does
            c.execute(
                "INSERT INTO operations(op_id, project_id, plan_id, plan_hash, idempotency_key, state,"
                " created_ms, updated_ms) VALUES ('op_b','p','pl_b','h','k0','applied',0,0)"
            )
            c.executemany(
                "INSERT INTO written(op_id, x, y, z, before, after, uncertain, at_ms) VALUES ('op_b',?,64,?,?,?,0,0)",
                [(x, z, AIR, STONE) for x, z in layer],
            )
            c.executemany(
                "INSERT INTO observed(kind, host_instance, host_seq, x, y, z, before, after, source,"
                " player_id, op_id, at_ms) VALUES ('event','h',?,?,64,?,?,?,'ours','','op_b',0)",
                [(i, x, z, AIR, STONE) for i, (x, z) in enumerate(layer)],
            )
    if who == "ours":
        pack_operation(core.db, "op_b")
    recipe = json.dumps(
        {
            "version": 1,
            "operations": [
                {
                    "type": "box",
                    "min": {"x": 0, "y": 64, "z": 0},
                    "max": {"x": side - 1, "y": 64, "z": side - 1},
                    "block": "minecraft:glass",
                }
            ],
        }
    )
    t0, c0 = time.perf_counter(), time.process_time()
    summary = asyncio.run(core.prepare.build_prepare(CALLER, jpb.BuildPrepareRequest(recipe_json=recipe)))
    prepare_s, prepare_cpu = time.perf_counter() - t0, time.process_time() - c0
    plan = core.load_plan(summary.plan_id)
    t0, c0 = time.perf_counter(), time.process_time()
    asyncio.run(planstore.replaced_blocks(core.ctx, plan))
    count_s, count_cpu = time.perf_counter() - t0, time.process_time() - c0
    text = render.dumps(render.plan_summary(summary))
    refusal = ""
    try:
        asyncio.run(
            core.build_apply(
                CALLER, jpb.BuildApplyRequest(plan_id=summary.plan_id, plan_hash=summary.plan_hash, idempotency_key="k")
            )
        )
        if who == "player":
            raise SystemExit("build_apply was not refused")
    except McbError as err:
        refusal = render.dumps(error_payload(err))
    assert (summary.replaced.by_source[0].source, summary.replaced.by_source[0].count) == (who, side * side)
    return {
        "replaced": side * side,
        "source": {
            "player": "player",
            "ours": "ours (one packed operation)",
            "unknown": "unknown (terrain, no events)",
        }[who],
        "summary_bytes": len(text.encode()),
        "summary_proto_bytes": len(summary.SerializeToString()),
        "refusal_bytes": len(refusal.encode()),
        "prepare_s": round(prepare_s, 3),
        "prepare_cpu_s": round(prepare_cpu, 3),
        "count_by_source_s": round(count_s, 3),
        "count_by_source_cpu_s": round(count_cpu, 3),
    }


def main() -> int:
    sides = [int(a) for a in sys.argv[1:]] or [100, 316]
    with tempfile.TemporaryDirectory() as tmp:
        rows = [run(s, Path(tmp), who) for s in sides for who in ("player", "ours", "unknown")]
    for r in rows:
        print(json.dumps(r))
    out = Path(__file__).parent / "out"
    out.mkdir(exist_ok=True)
    (out / "plan_summary_bytes.json").write_text(json.dumps(rows, indent=1) + "\n")
    ok = all(r["summary_bytes"] <= 4096 for r in rows)
    print("target (summary ≤ 4096 bytes):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
