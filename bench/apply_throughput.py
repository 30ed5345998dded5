"""Benchmark: build_apply → applied through the whole stack (MCP over HTTP → bridge →
journal → world host), for the seed example and a 100,000-block box, and the same box
written by amulet-core (set + save, no safety) in its own venv, as a ratio; and the same box sent
straight to a world host alone (512-block batches over HTTP, no journal): the floor of the stack's
apply with this host, as a ratio to amulet-core too.

    uv run python bench/apply_throughput.py            # writes bench/out/apply_throughput.json
    uv run python bench/apply_throughput.py --million  # also 1,000,000 blocks as ten 100k applies

The box's entry also gives the CPU seconds each process of the stack spent during its apply
(``cpu_s_by_process``, from /proc): unlike the wall time, it barely depends on what else runs.

amulet-core lives in bench/.venv-amulet (it pins numpy < 2):
    uv venv -p python3.11 bench/.venv-amulet && uv pip install --python bench/.venv-amulet/bin/python amulet-core
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from e2e.conftest import start_stack  # noqa: E402
from e2e.mcpclient import call, http_client  # noqa: E402
from e2e.test_build_e2e import SEED_RECIPE  # noqa: E402
from journal_size import journal_bytes  # noqa: E402
from world_host_batches import apply_box, serve_world  # noqa: E402

BOX = (-25, 64, -25, 24, 103, 24)  # 50 × 40 × 50 = 100,000 blocks
# batches per request of the world host alone: the journal's default (MCB_JOURNAL_BATCHES_PER_REQUEST)
PER_REQUEST = 8
TICK = os.sysconf("SC_CLK_TCK")


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
    return out


def cpu_by_process(root_pid: int) -> dict[str, float]:
    """CPU seconds (user + system) so far of every process of the stack, by its module or program:
    what the apply costs whatever else the machine is doing (its wall time is not)."""
    out: dict[str, float] = {}
    for pid in _descendants(root_pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        words = [a.decode(errors="replace") for a in argv if a]
        name = (
            words[words.index("-m") + 1]
            if "-m" in words[:-1]
            else Path(words[0].split()[0]).name
            if words
            else str(pid)
        )
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / TICK
    return out


async def ten_boxes(client, root_pid: int, one: dict, runtime: Path) -> dict:
    """1,000,000 blocks as ten 100,000-block applies one after the other (a plan holds at most
    100,000 changed blocks): two columns of five 50 × 40 × 50 boxes above the first box. Also the
    journal's bytes on disk per block written (the 100k box too) right after the last apply and
    once its automatic packing ran (MCB_JOURNAL_PACK_AFTER_S, 30 s), never a manual compact."""
    before = cpu_by_process(root_pid)
    t0 = time.perf_counter()
    applies = []
    for i in range(10):
        x0, y0 = (-64, 14)[i % 2], 104 + 40 * (i // 2)
        recipe = {
            "version": 1,
            "operations": [
                {
                    "type": "box",
                    "min": {"x": x0, "y": y0, "z": -25},
                    "max": {"x": x0 + 49, "y": y0 + 39, "z": 24},
                    "block": "minecraft:stone",
                }
            ],
        }
        applies.append(await timed_apply(client, recipe))
    wall = time.perf_counter() - t0
    after = cpu_by_process(root_pid)
    one_s = one["prepare_s"] + one["apply_s"]
    blocks = sum(a["changed_blocks"] for a in applies) + one["changed_blocks"]
    at_end = journal_bytes(runtime)
    await anyio.sleep(40)
    packed = journal_bytes(runtime)
    return {
        "journal_bytes_per_block_at_end": round(at_end["total"] / blocks, 1),
        "journal_bytes_per_block_after_40_s": round(packed["total"] / blocks, 1),
        "journal_bytes_after_40_s": packed,
        "blocks": sum(a["changed_blocks"] for a in applies),
        "wall_s": round(wall, 3),
        "apply_s_each": [a["apply_s"] for a in applies],
        "ratio_to_one_100k_prepare_and_apply": round(wall / one_s, 2),
        "cpu_s_by_process": {
            k: round(v - before.get(k, 0.0), 2) for k, v in sorted(after.items()) if v - before.get(k, 0.0) >= 0.05
        },
    }


class EndWatch:
    """When the stack announced each operation's end: the journal's progress stream (``mcb:progress``,
    the events the chat and the dashboard follow), read with a blocking XREAD, so the end is seen
    when it is published at no polling cost. The status poll below answers only to 100 ms, and
    polling finer measured the bench's own load."""

    def __init__(self, redis_url: str):
        import redis.asyncio as aioredis

        self.redis = aioredis.from_url(redis_url, decode_responses=True)
        self.ends: dict[str, float] = {}
        self.last = "$"

    async def run(self) -> None:
        while True:
            resp = await self.redis.xread({"mcb:progress": self.last}, block=1000, count=500)
            now = time.perf_counter()
            for _stream, entries in resp or []:
                for entry_id, fields in entries:
                    self.last = entry_id
                    ev = json.loads(fields.get("event", "{}"))
                    if ev.get("state") not in ("prepared", "queued", "applying", "waiting_for_resume"):
                        self.ends.setdefault(str(ev.get("operation_id")), now)


async def timed_apply(client, recipe, ends: EndWatch | None = None) -> dict:
    t0 = time.perf_counter()
    plan = await call(client, "build_prepare", {"recipe": recipe})
    t1 = time.perf_counter()
    op = await call(
        client,
        "build_apply",
        {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
    )
    while True:
        st = await call(client, "operation_status", {"operation_id": op["operation_id"]})
        if st["state"] not in ("prepared", "queued", "applying"):
            break
        # 10 polls a second: finer polling (it was 20 ms) measured the bench's own load — each poll
        # crosses the bridge and the journal, ~1.5 s of CPU per 100k apply on the same 2 cores
        await anyio.sleep(0.1)
    t2 = time.perf_counter()
    assert st["state"] == "applied", st
    out = {
        "changed_blocks": plan["changed_blocks"],
        "prepare_s": round(t1 - t0, 3),
        "apply_s": round(t2 - t1, 3),
        "blocks_per_s": round(plan["changed_blocks"] / (t2 - t1)),
        "batches": st["batches_total"],
    }
    end = ends.ends.get(op["operation_id"]) if ends is not None else None
    if end is not None:
        # from build_apply's call to the journal's "applied" event (no poll resolution in it)
        out["apply_to_event_s"] = round(end - t1, 3)
    return out


def host_alone(tmp: Path, pristine_world: Path, per_request: int = 1) -> dict:
    """The same box sent straight to a world host on a copy of ``pristine_world`` in 512-block
    batches, one request after the other (no journal, bridge or observer): what the stack's apply
    would take if everything but the world host cost nothing — its floor with this host.
    ``per_request``: batches a request (``batch_apply_many`` above 1, as the journal sends them)."""
    shutil.copytree(pristine_world, tmp / "world")
    proc, url, token = serve_world(tmp, tmp / "world")
    try:
        secs = apply_box(url, token, BOX, "minecraft:stone", per_request)
        # the region files complete: the embedded host's checkpoint (POST /v1/save), what
        # amulet-core's save does; a host before the write-ahead log wrote them before each answer
        t0 = time.perf_counter()
        r = httpx.post(f"{url}/v1/save", headers={"Authorization": f"Bearer {token}"}, timeout=600)
        save_s = time.perf_counter() - t0 if r.status_code == 200 else 0.0
    finally:
        proc.stop()
    return {
        "blocks": 100_000,
        "apply_s": round(secs, 3),
        "save_s": round(save_s, 3),
        "apply_save_s": round(secs + save_s, 3),
        "batches": -(-100_000 // 512),
        "batches_per_request": per_request,
        "save": "POST /v1/save" if save_s else "none (regions written before each answer)",
    }


def main() -> int:
    million = "--million" in sys.argv[1:]
    out: dict = {
        "machine": {
            "python": platform.python_version(),
            "cpu_count": __import__("os").cpu_count(),
            "platform": platform.platform(),
        }
    }
    with tempfile.TemporaryDirectory() as tmp:
        runtime = Path(tmp) / "runtime"
        stack = start_stack(runtime)
        try:
            x0, y0, z0, x1, y1, z1 = BOX
            box = {
                "version": 1,
                "operations": [
                    {
                        "type": "box",
                        "min": {"x": x0, "y": y0, "z": z0},
                        "max": {"x": x1, "y": y1, "z": z1},
                        "block": "minecraft:stone",
                    }
                ],
            }

            async def run():
                ends = EndWatch(f"redis://127.0.0.1:{stack.ports['redis']}/0")
                async with http_client(stack.mcp_url, stack.token("agent")) as client, anyio.create_task_group() as tg:
                    tg.start_soon(ends.run)
                    await anyio.sleep(0.2)  # the watch reads from now on
                    out["seed_example"] = await timed_apply(client, SEED_RECIPE, ends)
                    before = cpu_by_process(stack.popen.pid)
                    out["box_100k"] = await timed_apply(client, box, ends)
                    after = cpu_by_process(stack.popen.pid)
                    out["box_100k"]["cpu_s_by_process"] = {
                        k: round(v - before.get(k, 0.0), 2)
                        for k, v in sorted(after.items())
                        if v - before.get(k, 0.0) >= 0.05
                    }
                    if million:
                        out["million"] = await ten_boxes(client, stack.popen.pid, out["box_100k"], runtime)
                    tg.cancel_scope.cancel()
                await ends.redis.aclose()

            anyio.run(run)
        finally:
            stack.stop()
        # amulet-core and the world host alone, each on a pristine copy of the same kind of world
        # (a fresh flat world)
        fresh = Path(tmp) / "fresh"
        stack2 = start_stack(fresh)
        stack2.stop()
        amulet_py = ROOT / "bench" / ".venv-amulet" / "bin" / "python"
        if amulet_py.exists():
            world = Path(tmp) / "amulet-world"
            shutil.copytree(fresh / "world", world)
            r = subprocess.run(
                [str(amulet_py), str(ROOT / "bench" / "amulet_write.py"), str(world), *map(str, BOX)],
                capture_output=True,
                text=True,
                timeout=1800,
            )
            if r.returncode == 0:
                am = json.loads(r.stdout.strip().splitlines()[-1])
                out["amulet_core_100k"] = am
                out["ratio_ours_apply_over_amulet_set_save"] = round(out["box_100k"]["apply_s"] / am["set_save_s"], 2)
                if "apply_to_event_s" in out["box_100k"]:
                    out["ratio_ours_apply_to_event_over_amulet_set_save"] = round(
                        out["box_100k"]["apply_to_event_s"] / am["set_save_s"], 2
                    )
            else:
                out["amulet_core_100k"] = {"error": r.stderr[-2000:]}
        else:
            out["amulet_core_100k"] = {"skipped": "bench/.venv-amulet not installed (see the module docstring)"}
        out["world_host_alone_100k"] = host_alone(Path(tmp) / "host-alone", fresh / "world", PER_REQUEST)
        out["world_host_alone_100k_one_batch_a_request"] = host_alone(Path(tmp) / "host-alone-1", fresh / "world")
        am = out["amulet_core_100k"]
        if "set_save_s" in am:
            out["ratio_world_host_alone_over_amulet_set_save"] = round(
                out["world_host_alone_100k"]["apply_s"] / am["set_save_s"], 2
            )
            out["ratio_world_host_alone_with_save_over_amulet_set_save"] = round(
                out["world_host_alone_100k"]["apply_save_s"] / am["set_save_s"], 2
            )
    dest = ROOT / "bench" / "out"
    dest.mkdir(exist_ok=True)
    (dest / "apply_throughput.json").write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
