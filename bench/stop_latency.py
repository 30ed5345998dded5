"""Stop latency: from `operation_cancel` (or the world host's `pause`) to the last batch.

    uv run python bench/stop_latency.py [--runs 5]

A 100,000-block apply is started through MCP; after a short random delay the stop is
requested; the latency is the time from the request to the completion of the last batch
that was written (journal `batches.done_ms`), and the batches written after the request.
Also measures the journal's overhead per batch (intent + completion commits with fsync).
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from e2e.components import start_components  # noqa: E402
from e2e.mcpclient import call, http_client  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    rng = random.Random(7)
    results: dict[str, list] = {"cancel": [], "pause": []}
    with tempfile.TemporaryDirectory() as tmp:
        comp = start_components(Path(tmp) / "rt")
        try:
            for i in range(args.runs * 2):
                mode = "cancel" if i % 2 == 0 else "pause"
                y0 = 64 + (i % 4) * 12
                x0 = -64 + (i // 4) * 40
                recipe = {"version": 1, "operations": [{"type": "box", "min": {"x": x0, "y": y0, "z": -64},
                                                        "max": {"x": x0 + 39, "y": y0 + 9, "z": 63},
                                                        "block": "minecraft:stone"}]}
                out: dict = {}

                async def run():
                    async with http_client(comp.mcp_url, comp.token("agent")) as c:
                        plan = await call(c, "build_prepare", {"recipe": recipe})
                        op = await call(c, "build_apply", {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"],
                                                           "idempotency_key": str(uuid.uuid4())})
                        await anyio.sleep(rng.uniform(0.5, 1.5))
                        out["t_stop_ms"] = time.time() * 1000
                        if mode == "cancel":
                            await call(c, "operation_cancel", {"operation_id": op["operation_id"]})
                        else:
                            comp.world_rpc("pause", {"reason": "bench"})
                        while True:
                            st = await call(c, "operation_status", {"operation_id": op["operation_id"]})
                            if st["state"] not in ("prepared", "queued", "applying"):
                                break
                            await anyio.sleep(0.02)
                        out["op"] = op["operation_id"]
                        out["state"] = st["state"]

                anyio.run(run)
                if mode == "pause":
                    comp.world_rpc("resume", {"reason": "bench"})
                db = sqlite3.connect(Path(tmp) / "rt" / "journal" / "journal.sqlite")
                rows = db.execute("SELECT seq, state, intent_ms, done_ms FROM batches WHERE op_id=? ORDER BY seq",
                                  (out["op"],)).fetchall()
                written_after = [r for r in rows if r[1] == "done" and r[2] >= out["t_stop_ms"]]
                last_done = max((r[3] for r in rows if r[1] == "done"), default=out["t_stop_ms"])
                results[mode].append({"latency_ms": max(0.0, last_done - out["t_stop_ms"]),
                                      "batches_after_stop": len(written_after), "state": out["state"]})
            db = sqlite3.connect(Path(tmp) / "rt" / "journal" / "journal.sqlite")
            per_batch = [r[1] - r[0] for r in db.execute(
                "SELECT intent_ms, done_ms FROM batches WHERE state='done' AND done_ms IS NOT NULL")]
        finally:
            comp.stop_all()
    report = {}
    for mode, rs in results.items():
        lat = [r["latency_ms"] for r in rs]
        report[mode] = {"runs": len(rs), "median_ms": statistics.median(lat), "max_ms": max(lat),
                        "max_batches_after_stop": max(r["batches_after_stop"] for r in rs),
                        "states": sorted({r["state"] for r in rs})}
    report["batch_intent_to_completion_ms"] = {"median": statistics.median(per_batch), "max": max(per_batch),
                                               "batches": len(per_batch)}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
