"""The write-ahead log's crash matrix: a real host process is killed (SIGKILL, no cleanup) at
each crash point, the world is opened again (which replays the log onto the region files), and
every answered batch must be there, whole, while a batch whose answer never came is either
whole or absent. The region files are then read by anvil-parser2 and amulet-core (independent
readers) and must match what was answered.

Crash points: during a log append (inside the commit), a torn log tail (the last commit's
frames cut short, as a power loss mid-write leaves them), during a checkpoint (before any
region is written, and with one region written and the other not), after a checkpoint before
the log cut, and inside the cut (redo cleared, SQLite's WAL file not yet truncated).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anvil_check as indie
import pytest
from mcb_world_host.world import World

REPO = Path(__file__).resolve().parents[3]
AMULET_PY = REPO / "bench" / ".venv-amulet" / "bin" / "python"
AIR, BASE = "minecraft:air", "minecraft:grass_block[snowy=false]"
BLOCKS = ("minecraft:stone", "minecraft:glass", "minecraft:oak_planks", "minecraft:red_wool", "minecraft:andesite")

# The child: 4 answered batches over two region files (x -12..11: chunks -1 and 0, regions -1
# and 0), each printed once its answer is back; then the crash point.
CHILD = r"""
import os, signal, sys, json
from pathlib import Path
from mcb.world.v1 import world_pb2
from mcb_common.registry import Registry
from mcb_world_host.host import Host
from mcb_world_host.world import World

path, point = Path(sys.argv[1]), sys.argv[2]
blocks = json.loads(sys.argv[3])
w = World(path, Registry.load())
host = Host(w)

def batch(n):
    entries = [world_pb2.BatchEntry(x=x, y=70 + n, z=z, expected="minecraft:air", desired=blocks[n])
               for x in range(-12, 12) for z in range(-3, 3)]
    return world_pb2.BatchApplyParams(batch_id=f"b{n}", world_epoch=w.meta.epoch, operation_id="op", entries=entries)

def kill(p):
    if p == point:
        os.kill(os.getpid(), signal.SIGKILL)

for n in range(4):
    assert host.batch_apply(batch(n)).status == "applied"
    print(f"ack b{n}", flush=True)
    if n == 1 and point.startswith("checkpoint") or point == "before_wal_truncate" and n == 1:
        w.crash_hook = kill
        w.host_state.crash_hook = kill
        w.checkpoint()  # killed inside it
wal = path / "mcb" / "host.sqlite-wal"
print(f"wal {wal.stat().st_size}", flush=True)
if point == "torn_tail":
    host.batch_apply(batch(4))  # committed and fsynced, never answered: the kill comes first
    print(f"wal {wal.stat().st_size}", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
w.host_state.crash_hook = kill
w.crash_hook = kill
host.batch_apply(batch(4))  # log_append: killed inside its commit
print("ack b4", flush=True)
"""


@pytest.fixture
def world_dir(tmp_path, registry):
    w = World.create_flat(tmp_path / "w", registry, pregen=(-16, -16, 15, 15))
    w.close()
    return tmp_path / "w"


def positions(n: int):
    return [(x, 70 + n, z) for x in range(-12, 12) for z in range(-3, 3)]


def run_child(world_dir: Path, point: str) -> tuple[list[str], list[int]]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(world_dir), point, json.dumps(BLOCKS)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert out.returncode == -9, f"the child was not killed at {point}: rc {out.returncode}\n{out.stderr[-3000:]}"
    lines = out.stdout.split()
    acked = [lines[i + 1] for i, w in enumerate(lines) if w == "ack"]
    wal = [int(lines[i + 1]) for i, w in enumerate(lines) if w == "wal"]
    return acked, wal


def check_on_disk(world_dir: Path, expect: dict[tuple[int, int, int], str]) -> None:
    """anvil-parser2 and (where installed) amulet-core read the region files."""
    regions: dict[tuple[int, int], object] = {}
    for (x, y, z), state in expect.items():
        cx, cz = x >> 4, z >> 4
        key = (cx >> 5, cz >> 5)
        if key not in regions:
            regions[key] = indie.open_region(world_dir / "region" / f"r.{key[0]}.{key[1]}.mca")
        assert indie.get(indie.chunk(regions[key], cx, cz), x, y, z) == state, (x, y, z)
    if not AMULET_PY.exists():
        return  # the amulet cross-check needs bench/.venv-amulet (scripts/test_deps.sh)
    sample = sorted(expect)[:: max(1, len(expect) // 60)]
    out = subprocess.run(
        [
            str(AMULET_PY),
            str(Path(__file__).with_name("amulet_read_block_entities.py")),
            str(world_dir),
            json.dumps(sample),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = [r["block"] for r in json.loads(out.stdout)]
    assert got == [expect[p].split("[", 1)[0] for p in sample]


@pytest.mark.parametrize(
    "point",
    ["log_append", "torn_tail", "checkpoint_start", "checkpoint_mid", "checkpoint_before_cut", "before_wal_truncate"],
)
def test_kill9_at_each_crash_point_keeps_every_answered_batch(world_dir, registry, point):
    acked, wal = run_child(world_dir, point)
    if point == "torn_tail":
        before, after = wal[-2], wal[-1]
        assert after > before, "the unanswered batch's commit reached the log file"
        with open(world_dir / "mcb" / "host.sqlite-wal", "r+b") as f:
            f.truncate(before + (after - before) // 2)  # its frames cut short: a torn tail
    in_checkpoint = point.startswith("checkpoint") or point == "before_wal_truncate"
    answered = 2 if in_checkpoint else 4  # the checkpoint crash comes after the second batch
    assert acked == [f"b{n}" for n in range(answered)]
    w = World(world_dir, registry)
    try:
        if point.startswith("checkpoint"):
            assert w.replayed >= 1, "the log was replayed onto the region files"
        elif point == "before_wal_truncate":
            assert w.replayed == 0, "redo was cleared (committed) before the kill: nothing to replay"
        expect: dict[tuple[int, int, int], str] = {}
        for n in range(answered):
            for p in positions(n):
                assert w.get_block(*p) == BLOCKS[n], (point, n, p)
                expect[p] = BLOCKS[n]
            row = w.host_state.get(f"b{n}")
            assert row is not None and row.state == "complete" and row.result["status"] == "applied"
        # the unanswered batch: absent (its commit never completed), never partly there
        for n in range(answered, 5):
            got = {w.get_block(*p) for p in positions(n)}
            assert got == {AIR}, (point, n, got)
            assert w.host_state.get(f"b{n}") is None
            for p in positions(n)[:20]:
                expect[p] = AIR
        for x, z in ((-12, -3), (11, 2)):
            expect[(x, 63, z)] = BASE  # the flat world around the writes is intact
        assert w.host_state.redo_rows() == []  # start-up checkpointed and cut the log
    finally:
        w.close()
    check_on_disk(world_dir, expect)


def test_a_clean_stop_leaves_a_complete_save_and_an_empty_log(world_dir, registry):
    from mcb.world.v1 import world_pb2
    from mcb_world_host.host import Host

    w = World(world_dir, registry)
    host = Host(w)
    entries = [world_pb2.BatchEntry(x=x, y=80, z=0, expected=AIR, desired=BLOCKS[0]) for x in range(-12, 12)]
    assert (
        host.batch_apply(world_pb2.BatchApplyParams(batch_id="s", world_epoch=1, entries=entries)).status == "applied"
    )
    assert w.host_state.redo_rows() != []  # answered from the log; no region written yet
    w.close()
    wal = world_dir / "mcb" / "host.sqlite-wal"
    assert not wal.exists() or wal.stat().st_size == 0  # the log was cut
    check_on_disk(world_dir, {(x, 80, 0): BLOCKS[0] for x in range(-12, 12)})
    w2 = World(world_dir, registry)
    assert w2.replayed == 0
    w2.close()


def test_batches_arriving_together_share_one_fsync(world_dir, registry):
    """Eight threads send batches at once to a log whose fsync takes 30 ms (a slow disk; this
    machine's is faster than the validation of a batch, which would hide the grouping): the
    batches queued during one commit go into the next together — fewer commits than batches —
    and every answer's blocks are there after a restart."""
    import threading
    import time

    from mcb.world.v1 import world_pb2
    from mcb_world_host.host import Host

    w = World(world_dir, registry)
    host = Host(w)
    start = threading.Barrier(8)
    results: dict[int, str] = {}

    def send(i: int) -> None:
        entries = [
            world_pb2.BatchEntry(x=x, y=90 + i, z=z, expected=AIR, desired=BLOCKS[i % 5])
            for x in range(-8, 8)
            for z in range(-8, 8)
        ]
        start.wait()
        for k in range(4):
            p = world_pb2.BatchApplyParams(
                batch_id=f"t{i}-{k}", world_epoch=1, entries=[e for j, e in enumerate(entries) if j % 4 == k]
            )
            results[i * 4 + k] = host.batch_apply(p).status

    w.host_state.crash_hook = lambda point: time.sleep(0.03) if point == "log_append" else None
    before = w.host_state.commits
    threads = [threading.Thread(target=send, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert set(results.values()) == {"applied"} and len(results) == 32
    commits = w.host_state.commits - before
    print(f"32 batches from 8 threads: {commits} log commits")
    assert commits <= 24
    w.close()
    w2 = World(world_dir, registry)
    assert all(
        w2.get_block(x, 90 + i, z) == BLOCKS[i % 5] for i in range(8) for x in range(-8, 8) for z in range(-8, 8)
    )
    w2.close()
    assert os.path.exists(world_dir / "region" / "r.-1.-1.mca")
