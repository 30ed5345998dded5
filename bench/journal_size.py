"""Benchmark: journal bytes per written block (issue 12 item 7).

Applies N operations of a realistic mix — solid boxes, hollow boxes, `replace` over earlier
work, and an undo now and then — through the real services (`mcb up`, started like
bench/apply_throughput.py; the journal's gRPC API with the agent token, as the bridge calls
it → planner → world host), then reports the journal's size on disk
(SQLite file + WAL + blobs) per written block, split by table, before and after
`mcb journal compact` (when the build has it).

    uv run python bench/journal_size.py [--ops 40]     # writes bench/out/journal_size.json
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import grpc  # noqa: E402
from e2e.conftest import start_stack  # noqa: E402
from google.protobuf import json_format  # noqa: E402
from mcb.journal.v1 import journal_pb2 as jpb  # noqa: E402
from mcb.journal.v1 import journal_pb2_grpc  # noqa: E402
from mcb_rpc.auth import call_metadata  # noqa: E402

BLOCKS = [
    "stone",
    "oak_planks",
    "cobblestone",
    "spruce_planks",
    "bricks",
    "sandstone",
    "glass",
    "oak_stairs[facing=east,half=bottom]",
    "white_wool",
    "andesite",
]


def v(x: int, y: int, z: int) -> dict:
    return {"x": x, "y": y, "z": z}


def recipe_for(i: int) -> dict:
    """Operation i of the mix: a 16-wide cell of the project area per i, three kinds in turn."""
    cx, cz = -64 + 16 * (i % 8), -64 + 16 * ((i // 8) % 8)
    y0 = 64 + 24 * (i // 64)
    block = BLOCKS[i % len(BLOCKS)]
    kind = i % 3
    if kind == 0:  # solid box 14 × 12 × 14
        ops = [{"type": "box", "min": v(cx, y0, cz), "max": v(cx + 13, y0 + 11, cz + 13), "block": block}]
    elif kind == 1:  # hollow box 16 × 20 × 16 (a house shell) with a floor of another block
        ops = [
            {"type": "box", "min": v(cx, y0, cz), "max": v(cx + 15, y0 + 19, cz + 15), "block": block, "hollow": True},
            {"type": "box", "min": v(cx + 1, y0, cz + 1), "max": v(cx + 14, y0, cz + 14), "block": "oak_planks"},
        ]
    else:  # replace over the cell the previous operation built
        px, pz = -64 + 16 * ((i - 1) % 8), -64 + 16 * (((i - 1) // 8) % 8)
        ops = [
            {
                "type": "replace",
                "min": v(px, y0, pz),
                "max": v(px + 15, y0 + 19, pz + 15),
                "from": "*",
                "to": BLOCKS[(i + 3) % len(BLOCKS)],
            }
        ]
    return {"version": 1, "operations": ops}


def journal_bytes(runtime: Path) -> dict:
    jdir = runtime / "journal"
    db = jdir / "journal.sqlite"
    out = {"sqlite": db.stat().st_size if db.exists() else 0}
    wal = db.with_name(db.name + "-wal")
    out["wal"] = wal.stat().st_size if wal.exists() else 0
    out["blobs"] = sum(p.stat().st_size for p in (jdir / "blobs").rglob("*") if p.is_file())
    out["total"] = out["sqlite"] + out["wal"] + out["blobs"]
    return out


def table_bytes(runtime: Path) -> dict:
    """Bytes per table and index (SQLite's dbstat), read from a copy so the live file is untouched."""
    db = runtime / "journal" / "journal.sqlite"
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        rows = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
        conn.close()
    except sqlite3.Error as exc:
        return {"error": str(exc)}
    return {name: size for name, size in rows}


class Agent:
    """The journal's agent API over gRPC, as the bridge calls it (agent token, project header)."""

    def __init__(self, stack):
        cfg = stack.config()["projects"][0]
        self.md = call_metadata(stack.token("agent"), cfg["project_id"], cfg["owner_player_id"])
        self.ch = grpc.aio.insecure_channel(f"127.0.0.1:{stack.ports['journal_grpc']}")
        self.stub = journal_pb2_grpc.JournalStub(self.ch)

    async def apply(self, plan: jpb.PlanSummary) -> dict:
        op = await self.stub.BuildApply(
            jpb.BuildApplyRequest(plan_id=plan.plan_id, plan_hash=plan.plan_hash, idempotency_key=uuid.uuid4().hex),
            metadata=self.md,
        )
        for _ in range(6000):
            st = await self.stub.OperationStatus(jpb.OperationRef(operation_id=op.operation_id), metadata=self.md)
            if st.state not in ("prepared", "queued", "applying"):
                return json_format.MessageToDict(
                    st, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
                )
            await anyio.sleep(0.05)
        raise TimeoutError(op.operation_id)

    async def build(self, recipe: dict) -> dict:
        plan = await self.stub.BuildPrepare(jpb.BuildPrepareRequest(recipe_json=json.dumps(recipe)), metadata=self.md)
        return await self.apply(plan)

    async def undo(self, op_id: str) -> dict:
        return await self.apply(
            await self.stub.OperationUndoPrepare(jpb.OperationRef(operation_id=op_id), metadata=self.md)
        )


def mcb(stack, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", *args],
        env=stack.env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=40)
    ap.add_argument("--undo-every", type=int, default=10, help="undo the previous operation every N (0: never)")
    args = ap.parse_args()
    out: dict = {"ops": args.ops, "cpu_count": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        runtime = Path(tmp) / "runtime"
        stack = start_stack(runtime)
        try:

            async def run() -> dict:
                written = applied = undone = 0
                t0 = time.perf_counter()
                agent = Agent(stack)
                last = None
                for i in range(args.ops):
                    st = await agent.build(recipe_for(i))
                    assert st["state"] == "applied", st
                    written += int(st["written"])
                    applied += 1
                    if args.undo_every and i % args.undo_every == args.undo_every - 1 and last:
                        ust = await agent.undo(last)
                        assert ust["state"] == "applied", ust
                        written += int(ust["written"])
                        undone += 1
                    last = st["operation_id"]
                await agent.ch.close()
                return {
                    "operations": applied + undone,
                    "undos": undone,
                    "written_blocks": written,
                    "apply_s": round(time.perf_counter() - t0, 1),
                }

            out.update(anyio.run(run))
            time.sleep(1.0)  # let the observer drain the host's last events
            out["before_compact"] = journal_bytes(runtime)
            out["before_compact"]["tables"] = table_bytes(runtime)
            out["before_compact"]["bytes_per_block"] = round(out["before_compact"]["total"] / out["written_blocks"], 1)
            stats = mcb(stack, "journal", "stats")
            if stats.returncode == 0:
                out["stats"] = json.loads(stats.stdout)
                comp = mcb(stack, "journal", "compact")
                out["compact"] = json.loads(comp.stdout) if comp.returncode == 0 else {"error": comp.stderr[-2000:]}
                out["after_compact"] = journal_bytes(runtime)
                out["after_compact"]["tables"] = table_bytes(runtime)
                out["after_compact"]["bytes_per_block"] = round(
                    out["after_compact"]["total"] / out["written_blocks"], 1
                )
            else:
                out["stats"] = {"skipped": (stats.stderr or stats.stdout)[-500:]}
        finally:
            stack.stop()
    dest = ROOT / "bench" / "out"
    dest.mkdir(exist_ok=True)
    (dest / "journal_size.json").write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
