"""Issue 12 item 6, component by component on a real full tmpfs (skipped where none mounts):
the embedded world host's region/batch-log writes, the camera worker's store and capture files,
and the journal's verdict on a disk too full to record it. Each refusal is ``unavailable`` with
"disk full", never ``internal``, and leaves nothing half-written."""

from __future__ import annotations

import json
import re
import sqlite3
from types import SimpleNamespace

import pytest
from hardening.diskfull import fill, free, tmpfs
from mcb.camera.v1 import camera_pb2
from mcb.world.v1 import world_pb2
from mcb_camera.jobs import CaptureQueue
from mcb_camera.store import CameraStore
from mcb_common.errors import ErrorCode, McbError
from mcb_common.registry import Registry
from mcb_journal.blobs import BlobStore
from mcb_journal.core import JournalCore
from mcb_journal.db import Database
from mcb_journal.states import OpState
from mcb_world_host.host import Host
from mcb_world_host.world import World

DISK_FULL = re.compile(r"disk (is )?full")


def assert_disk_full(err: McbError) -> None:
    assert err.code == ErrorCode.UNAVAILABLE and DISK_FULL.search(err.message), err


def spread_batch(bid: str, block: str, before: str = "minecraft:air") -> world_pb2.BatchApplyParams:
    """512 blocks over 64 chunks (8 x 8), so a batch needs many region writes."""
    entries = [
        world_pb2.BatchEntry(
            x=cx * 16 + i % 8, y=70 + i // 64, z=cz * 16 + (i // 8) % 8, expected=before, desired=block
        )
        for cx in range(-4, 4)
        for cz in range(-4, 4)
        for i in range(8)
    ]
    return world_pb2.BatchApplyParams(batch_id=bid, world_epoch=1, entries=entries)


def blocks(world: World, p: world_pb2.BatchApplyParams) -> set[str]:
    return {world.get_block(e.x, e.y, e.z) for e in p.entries}


def test_world_host_full_disk_refuses_whole_batches(tmp_path):
    registry = Registry.load()
    outcomes = []
    with tmpfs(tmp_path / "fs", "3m") as fs:
        world = World.create_flat(fs / "w", registry, pregen=(-64, -64, 63, 63))
        host = Host(world)
        # from no room at all to some: the batch log (SQLite) or a region write runs out
        for n, leave in enumerate((0, 4096, 16384, 65536, 131072, 262144)):
            p = spread_batch(f"b{n}", f"minecraft:{['stone', 'dirt', 'glass', 'oak_planks', 'sand', 'clay'][n]}")
            before = {e.x * 1_000_000 + e.y * 1000 + e.z: world.get_block(e.x, e.y, e.z) for e in p.entries}
            for e in p.entries:
                e.expected = before[e.x * 1_000_000 + e.y * 1000 + e.z]
            fill(fs, leave)
            try:
                res = host.batch_apply(p)
                assert res.status == "applied" and blocks(world, p) == {p.entries[0].desired}
                outcomes.append("applied")
            except McbError as err:
                assert_disk_full(err)
                outcomes.append("refused")
                if world.write_blocked:  # not even the rollback fit: refused until a restart rolls it back
                    outcomes[-1] = "refused, rolled back at restart"
                    with pytest.raises(McbError) as again:
                        host.batch_apply(spread_batch("later", "minecraft:stone"))
                    assert_disk_full(again.value)
                    free(fs)
                    world.close()
                    world = World(fs / "w", registry)
                    assert world.recovered == [p.batch_id]
                    host = Host(world)
                # all or nothing: every block as before
                assert all(world.get_block(e.x, e.y, e.z) == e.expected for e in p.entries), err.message
            free(fs)
        world.close()
        reopened = World(fs / "w", registry)
        assert reopened.host_state.pending() == []
        reopened.close()
    print("world host outcomes by free space:", outcomes)
    assert any(o.startswith("refused") for o in outcomes)


def test_camera_store_and_capture_files_on_a_full_disk(tmp_path):
    with tmpfs(tmp_path / "fs", "1m") as fs:
        store = CameraStore(fs / "camera")
        pose = camera_pb2.Pose(x=1, y=80, z=1, fov=70, width=64, height=64)
        store.save("p", camera_pb2.CameraInfo(camera_id="first", pose=pose))
        fill(fs)
        with pytest.raises(McbError) as exc:
            store.save("p", camera_pb2.CameraInfo(camera_id="second", name="x" * 4000, pose=pose))
        assert_disk_full(exc.value)
        assert [c.camera_id for c in store.list("p")] == ["first"]  # the previous file is whole
        queue = SimpleNamespace(dir=fs / "camera" / "captures")
        with pytest.raises(McbError) as exc:
            CaptureQueue._write(queue, "cap-1", b"\x89PNG" + b"x" * 100_000, {"capture_id": "cap-1"})
        assert_disk_full(exc.value)
        free(fs)
        leftovers = sorted(p.name for p in (fs / "camera").rglob("*") if p.is_file())
        assert leftovers == ["cameras.json"], leftovers  # no tmp files, no image without metadata


def test_journal_verdict_on_a_disk_too_full_to_record_it(tmp_path):
    with tmpfs(tmp_path / "fs", "2m") as fs:
        db = Database(fs / "j.sqlite")
        core = JournalCore(db=db, blobs=BlobStore(fs / "blobs"), world=None, planner=None, queue=None)
        with db.tx() as c:
            c.execute(
                "INSERT INTO operations(op_id, project_id, plan_id, plan_hash, idempotency_key, state,"
                " created_ms, updated_ms) VALUES ('op1','p','pl','h','k','applying',0,0)"
            )
        fill(fs)
        # use up what SQLite still has in hand (WAL pages) until a write really fails
        with pytest.raises(McbError) as exc:
            for i in range(10_000):
                with db.tx() as c:
                    c.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (f"pad{i}", "x" * 2000))
        assert_disk_full(exc.value)
        from mcb_common.diskfull import disk_full_error

        err = disk_full_error("the journal", "the apply stopped")
        assert core.ctx.record_verdict("op1", OpState.RECOVERY_REQUIRED, err.message, err) is False
        rep = core.report("op1")  # told at once, though not yet on disk
        assert rep.state == "recovery_required" and rep.error.code == "unavailable"
        assert "op1" in core.pending_recovery()  # new applies are refused meanwhile
        assert db.one("SELECT state FROM operations WHERE op_id='op1'")["state"] == "applying"
        free(fs)
        core.ctx.flush_unrecorded()
        assert core.ctx.unrecorded == {}
        row = db.one("SELECT state, error_json FROM operations WHERE op_id='op1'")
        assert row["state"] == "recovery_required" and json.loads(row["error_json"])["code"] == "unavailable"
        db.close()
        conn = sqlite3.connect(fs / "j.sqlite")
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()
