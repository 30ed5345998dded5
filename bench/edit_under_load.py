"""A 100,000-block apply while a scripted player edits a random target block every 50 ms.

    uv run python bench/edit_under_load.py

Reports: total time until the operation stopped, blocks written, player edits made, whether
every edited block still holds the player's state (none overwritten), whether the change
feed reported every edit, and the conflict that stopped the operation.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from e2e.components import start_components  # noqa: E402
from e2e.mcpclient import call, http_client  # noqa: E402

BOX = (-25, 64, -25, 24, 103, 24)  # 50 x 40 x 50 = 100,000


def main() -> int:
    rng = random.Random(42)
    with tempfile.TemporaryDirectory() as tmp:
        comp = start_components(Path(tmp) / "rt")
        try:
            x0, y0, z0, x1, y1, z1 = BOX
            region = {"min": {"x": x0, "y": y0, "z": z0}, "max": {"x": x1, "y": y1, "z": z1}}
            recipe = {
                "version": 1,
                "operations": [{"type": "box", "min": region["min"], "max": region["max"], "block": "minecraft:stone"}],
            }
            edits: dict[tuple[int, int, int], str] = {}
            stop = threading.Event()

            def player():
                while not stop.is_set():
                    p = (rng.randint(x0, x1), rng.randint(y0, y1), rng.randint(z0, z1))
                    state = rng.choice(["minecraft:glass", "minecraft:gold_block", "minecraft:oak_planks"])
                    comp.world_rpc(
                        "automation_set_blocks",
                        {
                            "actor": "player",
                            "playerId": "bench-player",
                            "blocks": [{"x": p[0], "y": p[1], "z": p[2], "state": state}],
                        },
                        principal="automation",
                    )
                    edits[p] = state
                    stop.wait(0.05)

            out: dict = {}

            async def run():
                async with http_client(comp.mcp_url, comp.token("agent")) as c:
                    fresh = await call(c, "region_changes", {"region": region, "since_cursor": ""})
                    plan = await call(c, "build_prepare", {"recipe": recipe})
                    t0 = time.perf_counter()
                    op = await call(
                        c,
                        "build_apply",
                        {
                            "plan_id": plan["plan_id"],
                            "plan_hash": plan["plan_hash"],
                            "idempotency_key": str(uuid.uuid4()),
                        },
                    )
                    th = threading.Thread(target=player, daemon=True)
                    th.start()
                    while True:
                        st = await call(c, "operation_status", {"operation_id": op["operation_id"]})
                        if st["state"] not in ("prepared", "queued", "applying"):
                            break
                        await anyio.sleep(0.05)
                    out["seconds"] = time.perf_counter() - t0
                    stop.set()
                    th.join()
                    out["status"] = st
                    reported = 0
                    cursor = fresh["next_cursor"]
                    while True:
                        page = await call(c, "region_changes", {"region": region, "since_cursor": cursor})
                        reported = page["by_source"].get("player", 0)  # the whole range's total, on every page
                        cursor = page["next_cursor"]
                        if page["complete"]:
                            break
                    out["reported_player_changes"] = reported

            anyio.run(run)
            overwritten = 0
            for (x, y, z), state in edits.items():
                res = comp.world_rpc("blocks_get", {"xyz": [x, y, z]})
                if res["palette"][res["state"][0]] != state:
                    overwritten += 1
            st = out["status"]
            print(
                json.dumps(
                    {
                        "total_s": round(out["seconds"], 2),
                        "state": st["state"],
                        "written": st["written"],
                        "player_edits": len(edits),
                        "edited_blocks_overwritten": overwritten,
                        "player_changes_reported_by_region_changes": out["reported_player_changes"],
                        "stopping_conflict": (st.get("conflict_samples") or [None])[0],
                    },
                    indent=2,
                )
            )
        finally:
            comp.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
