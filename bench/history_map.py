"""The dashboard's history map (issue 32 item 3) at its bound, a 256 x 256-column area: the journal's
query (histmap.build over a real SQLite journal), the answer's protobuf size, and the dashboard's
PNG (histmap.png) — in process, no gRPC/HTTP hop.

    uv run --frozen python bench/history_map.py [--changes-per-column 3]

Every column of a 256 x 256 box gets ``--changes-per-column`` changes at different heights, from
50 players, the environment's causes and 20 operations; timed: the map now and as of the middle
of the history (median of 5 each).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from mcb_common.causes import CAUSES
from mcb_common.geometry import Box, Vec3
from mcb_dashboard import histmap as dmap
from mcb_journal import histmap, messages
from mcb_journal.db import Database
from mcb_journal.projects import Caller

SIDE = 256


def fill(db: Database, per_column: int) -> int:
    rows = []
    t = 0
    for k in range(per_column):
        for x in range(SIDE):
            for z in range(SIDE):
                t += 1
                i = (x * 7 + z * 13 + k) % 3
                src = ("player", "environment", "ours")[i]
                rows.append(
                    (
                        "event",
                        "h",
                        0,
                        x,
                        64 + k,
                        z,
                        "minecraft:air",
                        "minecraft:stone",
                        src,
                        f"uuid-{(x + z) % 50}" if i == 0 else "",
                        f"op_{(x // 13) % 20}" if i == 2 else "",
                        t,
                        f"P{(x + z) % 50}" if i == 0 else "",
                        CAUSES[(x + k) % len(CAUSES)] if i == 1 else "",
                    )
                )
    with db.tx() as c:
        c.executemany(
            "INSERT INTO observed(kind, host_instance, host_seq, x, y, z, before, after, source, player_id,"
            " op_id, at_ms, player_name, cause) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        for n in range(20):
            c.execute(
                "INSERT INTO operations(op_id, project_id, plan_id, plan_hash, idempotency_key, state, created_ms,"
                " updated_ms) VALUES (?,?,?,?,?,?,?,?)",
                (f"op_{n}", "p1", "pl", "h", f"op_{n}", "applied", 0, 0),
            )
    return t


def timed(fn, n: int = 5) -> tuple[float, object]:
    out, times = None, []
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--changes-per-column", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "journal.sqlite")
        total = fill(db, args.changes_per_column)
        area = Box(Vec3(0, -64, 0), Vec3(SIDE - 1, 319, SIDE - 1))
        me = Caller("admin", "p1", "owner")
        result = {"columns": SIDE * SIDE, "observed_rows": total}
        for name, until in (("now", 0), ("middle", total // 2)):
            ms, doc = timed(lambda until=until: histmap.build(db, me, area, area, until, total))
            assert isinstance(doc, dict)
            pb = messages.history_map(doc).SerializeToString()
            win = dmap.window({"min": {"x": 0, "y": -64, "z": 0}, "max": {"x": SIDE - 1, "y": 319, "z": SIDE - 1}})
            png_ms, png = timed(lambda doc=doc, win=win: dmap.png(win, doc))
            assert isinstance(png, bytes)
            result[name] = {
                "query_ms": round(ms, 1),
                "changed_columns": len(doc["x"]),
                "legend": len(doc["legend"]),
                "answer_bytes": len(pb),
                "png_ms": round(png_ms, 1),
                "png_bytes": len(png),
                "png_pixels": f"{win.width * win.scale}x{win.depth * win.scale}",
            }
        db.close()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
