"""Stop latency: from `operation_cancel` (or the world host's `pause`) to the stop.

    uv run python bench/stop_latency.py [--runs 5]

A 51,200-block apply is started through MCP; after a short random delay the stop is
requested. Reported per kind of stop:
* ``median_ms``/``max_ms``: request → the operation reported stopped (``operation_status``,
  polled every 10 ms): what the person or agent sees;
* ``last_write_ms``: request → the world host finished writing the operation's last batch
  (its batch log's ``finished_ms``; 0 when that was before the request);
* ``max_batches_after_stop``: batches the host began writing after the stop was in effect (the
  cancel call answered: its flag is stored; the host's pause answered) — ≤ 1 for cancel (the one
  the journal had sent before it read the flag), 0 for pause (the embedded host answers pause
  after a batch in progress finished; before, a batch admitted just before the flag was set could
  log its begin after the answer: 1 in one run of 5). Batches can begin between the request and
  its answer (a batch takes ~7 ms at the host; the request crosses the bridge).
Also the host's write time per batch (batch log ``begun_ms`` → ``finished_ms``). The journal's
own records are not used for timing: with the pipeline a batch's completion is committed with a
later batch's intent, so ``done_ms`` is when it was recorded, not when it was written.
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
                recipe = {
                    "version": 1,
                    "operations": [
                        {
                            "type": "box",
                            "min": {"x": x0, "y": y0, "z": -64},
                            "max": {"x": x0 + 39, "y": y0 + 9, "z": 63},
                            "block": "minecraft:stone",
                        }
                    ],
                }
                out: dict = {}

                async def run():
                    async with http_client(comp.mcp_url, comp.token("agent")) as c:
                        plan = await call(c, "build_prepare", {"recipe": recipe})
                        op = await call(
                            c,
                            "build_apply",
                            {
                                "plan_id": plan["plan_id"],
                                "plan_hash": plan["plan_hash"],
                                "idempotency_key": str(uuid.uuid4()),
                            },
                        )
                        # the stop lands while it writes: the apply takes ~0.5 s on a quiet machine since
                        # the host's and journal's batch paths got cheaper (issue 29; ~1 s before), so a
                        # later stop would often find it done ("applied" in the states)
                        await anyio.sleep(rng.uniform(0.05, 0.3))
                        out["t_stop_ms"] = time.time() * 1000
                        if mode == "cancel":
                            await call(c, "operation_cancel", {"operation_id": op["operation_id"]})
                        else:
                            comp.world_rpc("pause", {"reason": "bench"})
                        out["t_ack_ms"] = time.time() * 1000  # the stop is in effect (flag stored / host paused)
                        while True:
                            st = await call(c, "operation_status", {"operation_id": op["operation_id"]})
                            if st["state"] not in ("prepared", "queued", "applying"):
                                break
                            await anyio.sleep(0.01)
                        out["t_seen_ms"] = time.time() * 1000
                        out["op"] = op["operation_id"]
                        out["state"] = st["state"]

                anyio.run(run)
                if mode == "pause":
                    comp.world_rpc("resume", {"reason": "bench"})
                host_db = sqlite3.connect(Path(tmp) / "rt" / "world" / "mcb" / "host.sqlite")
                rows = host_db.execute(
                    "SELECT begun_ms, finished_ms FROM batches WHERE operation_id=? AND"
                    " state='complete' AND undo_json != '[]'",
                    (out["op"],),
                ).fetchall()
                host_db.close()
                last_write = max((r[1] for r in rows), default=out["t_stop_ms"])
                results[mode].append(
                    {
                        "latency_ms": out["t_seen_ms"] - out["t_stop_ms"],
                        "last_write_ms": max(0.0, last_write - out["t_stop_ms"]),
                        "batches_after_stop": sum(1 for r in rows if r[0] >= out["t_ack_ms"]),
                        "state": out["state"],
                    }
                )
            host_db = sqlite3.connect(Path(tmp) / "rt" / "world" / "mcb" / "host.sqlite")
            per_batch = [
                r[1] - r[0]
                for r in host_db.execute(
                    "SELECT begun_ms, finished_ms FROM batches WHERE state='complete' AND finished_ms IS NOT NULL"
                    " AND undo_json != '[]'"
                )
            ]
        finally:
            comp.stop_all()
    report = {}
    for mode, rs in results.items():
        lat = [r["latency_ms"] for r in rs]
        report[mode] = {
            "runs": len(rs),
            "median_ms": round(statistics.median(lat)),
            "max_ms": round(max(lat)),
            "last_write_ms": {
                "median": round(statistics.median(r["last_write_ms"] for r in rs)),
                "max": round(max(r["last_write_ms"] for r in rs)),
            },
            "max_batches_after_stop": max(r["batches_after_stop"] for r in rs),
            "states": sorted({r["state"] for r in rs}),
        }
    report["host_batch_write_ms"] = {
        "median": statistics.median(per_batch),
        "max": max(per_batch),
        "batches": len(per_batch),
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
