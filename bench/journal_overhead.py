"""The journal's own cost per batch, fsync'd: before issue 14 an intent commit and a separate
completion commit (+ 512 written rows) per batch (``separate``); since then one group commit per
batch holding batch k's completion, its written rows, the operation's counters and batch k+1's
intent (``group``, what executor.py does).

    uv run python bench/journal_overhead.py [--batches 200]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path

from mcb_journal.db import Database, now_ms


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=200)
    n = ap.parse_args().batches
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "j.sqlite")
        entries = [[x, 64, z, "minecraft:air", "minecraft:stone_bricks"] for x in range(32) for z in range(16)]
        intent, done = [], []
        for seq in range(n):
            payload = json.dumps(entries, separators=(",", ":")).encode()
            t0 = time.perf_counter()
            with db.tx() as c:
                c.execute(
                    "INSERT INTO batches(op_id, seq, batch_id, state, entries, entries_sha256, intent_ms)"
                    " VALUES (?,?,?,?,?,?,?)",
                    (
                        "op",
                        seq,
                        f"op.{seq}",
                        "intent",
                        zlib.compress(payload),
                        hashlib.sha256(payload).hexdigest(),
                        now_ms(),
                    ),
                )
            t1 = time.perf_counter()
            with db.tx() as c:
                c.execute(
                    "UPDATE batches SET state='done', result_json='{}', done_ms=? WHERE op_id='op' AND seq=?",
                    (now_ms(), seq),
                )
                c.executemany(
                    "INSERT INTO written(op_id, x, y, z, before, after, at_ms) VALUES (?,?,?,?,?,?,?)",
                    [("op", e[0], e[1], e[2], e[3], e[4], 0) for e in entries],
                )
            t2 = time.perf_counter()
            intent.append((t1 - t0) * 1000)
            done.append((t2 - t1) * 1000)
        db.close()
        db = Database(Path(tmp) / "g.sqlite")  # a fresh journal, as the separate run had
        group = []
        t = now_ms()
        db.conn.execute(
            "INSERT INTO operations(op_id, project_id, plan_id, plan_hash, idempotency_key, state,"
            " created_ms, updated_ms) VALUES ('g','p','pl','h','k','applying',?,?)",
            (t, t),
        )
        for seq in range(n):
            payload = json.dumps(entries, separators=(",", ":")).encode()
            t0 = time.perf_counter()
            with db.tx() as c:
                if seq:
                    c.execute(
                        "UPDATE batches SET state='done', result_json='{}', done_ms=? WHERE op_id='g' AND seq=?",
                        (now_ms(), seq - 1),
                    )
                    c.executemany(
                        "INSERT INTO written(op_id, x, y, z, before, after, at_ms) VALUES (?,?,?,?,?,?,?)",
                        [("g", e[0], e[1], e[2], e[3], e[4], 0) for e in entries],
                    )
                    c.execute(
                        "UPDATE operations SET written=?, batches_done=?, written_samples_json=?, updated_ms=?"
                        " WHERE op_id='g'",
                        (512 * seq, seq, "[]", now_ms()),
                    )
                c.execute(
                    "INSERT INTO batches(op_id, seq, batch_id, state, entries, entries_sha256, intent_ms)"
                    " VALUES (?,?,?,?,?,?,?)",
                    (
                        "g",
                        seq,
                        f"g.{seq}",
                        "intent",
                        zlib.compress(payload, 1),
                        hashlib.sha256(payload).hexdigest(),
                        now_ms(),
                    ),
                )
            group.append((time.perf_counter() - t0) * 1000)
        db.close()
    print(
        json.dumps(
            {
                "batches": n,
                "entries_per_batch": len(entries),
                "separate": {
                    "intent_commit_ms": {"median": round(statistics.median(intent), 2), "max": round(max(intent), 2)},
                    "completion_commit_ms": {"median": round(statistics.median(done), 2), "max": round(max(done), 2)},
                    "total_median_ms": round(statistics.median(a + b for a, b in zip(intent, done, strict=True)), 2),
                },
                "group": {"commit_ms": {"median": round(statistics.median(group), 2), "max": round(max(group), 2)}},
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
