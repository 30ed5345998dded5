"""World: flat creation, reads that never generate, atomic batches, host-log rollback."""

from __future__ import annotations

import sqlite3

import pytest
from mcb.common.v1 import common_pb2
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_world_host import region as regionmod
from mcb_world_host.host import Host
from mcb_world_host.world import Change, World


@pytest.fixture
def world(tmp_path, registry):
    w = World.create_flat(tmp_path / "w", registry, pregen=(-16, -16, 31, 15))
    yield w
    w.close()


def vec(x, y, z):
    return common_pb2.Vec3(x=x, y=y, z=z)


def test_region_read_yzx_order_and_missing_chunks(world):
    host = Host(world)
    world.write_batch([Change(1, 64, 2, "minecraft:air", "minecraft:stone")], "b0", "h")
    r = host.region_read(world_pb2.RegionReadParams(min=vec(0, 63, 0), max=vec(2, 64, 3)))
    idx = list(memoryview(r.indices).cast("H"))
    assert len(idx) == 3 * 4 * 2

    def at(x, y, z):
        return r.palette[idx[((y - 63) * 4 + z) * 3 + x]]

    assert at(1, 64, 2) == "minecraft:stone"
    assert at(0, 64, 2) == "minecraft:air"
    assert at(2, 63, 3) == "minecraft:grass_block[snowy=false]"
    with pytest.raises(McbError) as ei:
        host.region_read(world_pb2.RegionReadParams(min=vec(30, 0, 0), max=vec(40, 0, 20)))
    assert ei.value.code == ErrorCode.NOT_FOUND
    assert sorted(map(tuple, ei.value.details["missingChunks"])) == [(1, 1), (2, 0), (2, 1)]
    with pytest.raises(McbError) as ei:
        host.region_read(world_pb2.RegionReadParams(min=vec(0, 300, 0), max=vec(0, 320, 0)))
    assert ei.value.code == ErrorCode.OUT_OF_BOUNDS
    assert not (world.path / "region" / "r.1.0.mca").exists() or (2, 1) not in world.existing_chunks()


def test_heights_minus64_to_319(world):
    world.write_batch(
        [
            Change(0, -64, 0, "minecraft:bedrock", "minecraft:stone"),
            Change(0, 319, 0, "minecraft:air", "minecraft:glass"),
        ],
        "b1",
        "h",
    )
    assert world.get_block(0, -64, 0) == "minecraft:stone"
    assert world.get_block(0, 319, 0) == "minecraft:glass"
    with pytest.raises(McbError):
        world.get_block(0, -65, 0)


def test_a_begun_batch_of_an_older_host_log_is_rolled_back_on_reopen(tmp_path, registry):
    """Host logs from before the write-ahead design may hold ``begun`` rows (intent committed,
    region writes maybe done): opening rolls them back, as that host did."""
    w = World.create_flat(tmp_path / "w", registry, pregen=(-16, -16, 31, 15))
    w.write_batch(
        [Change(-1, 70, -1, "minecraft:air", "minecraft:stone"), Change(17, 70, 3, "minecraft:air", "minecraft:glass")],
        "crashy",
        "h",
    )
    w.close()  # the blocks are in the region files now
    db = sqlite3.connect(tmp_path / "w" / "mcb" / "host.sqlite")
    db.execute("UPDATE batches SET state='begun', result_json=NULL WHERE batch_id='crashy'")
    db.commit()
    db.close()
    w2 = World(tmp_path / "w", registry)
    assert w2.recovered == ["crashy"]
    assert w2.get_block(-1, 70, -1) == "minecraft:air"
    assert w2.get_block(17, 70, 3) == "minecraft:air"
    assert w2.host_state.get("crashy").state == "rolled_back"
    w2.close()
    w3 = World(tmp_path / "w", registry)
    assert w3.recovered == [] and w3.get_block(-1, 70, -1) == "minecraft:air"
    w3.close()


def test_failed_checkpoint_keeps_the_log_and_the_next_one_writes_it(tmp_path, registry, monkeypatch):
    """A region write failing mid-checkpoint (disk full) loses nothing: the batch answered from
    the log, the log is not cut, a later checkpoint (or the next start's replay) writes it."""
    w = World.create_flat(tmp_path / "w", registry, pregen=(-16, -16, 31, 15))
    real = regionmod.RegionFile.write_chunks  # the two chunks lie in two regions: two calls
    calls = {"n": 0}

    def flaky(self, chunks, **kw):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full (simulated)")
        return real(self, chunks, **kw)

    w.write_batch(
        [Change(-1, 70, -1, "minecraft:air", "minecraft:stone"), Change(17, 70, 3, "minecraft:air", "minecraft:glass")],
        "b",
        "h",
    )
    monkeypatch.setattr(regionmod.RegionFile, "write_chunks", flaky)
    with pytest.raises(OSError):
        w.checkpoint()
    assert [r.batch_id for r in w.host_state.redo_rows()] == ["b"]  # not cut
    assert w.get_block(-1, 70, -1) == "minecraft:stone" and w.get_block(17, 70, 3) == "minecraft:glass"
    monkeypatch.setattr(regionmod.RegionFile, "write_chunks", real)
    assert w.checkpoint() == 2
    assert w.host_state.redo_rows() == []
    w.close()
    w2 = World(tmp_path / "w", registry)
    assert w2.replayed == 0
    assert w2.get_block(-1, 70, -1) == "minecraft:stone" and w2.get_block(17, 70, 3) == "minecraft:glass"
    w2.close()


def test_a_log_commit_that_fails_undoes_the_batch_and_every_later_one(tmp_path, registry, monkeypatch):
    """The log refuses a commit (disk full): that batch and one validated against its writes are
    undone in memory, newest first; both answer 'nothing was changed'; later batches work."""
    w = World.create_flat(tmp_path / "w", registry, pregen=(-16, -16, 31, 15))
    host = Host(w)
    w.write_batch([Change(0, 70, 0, "minecraft:air", "minecraft:dirt")], "first", "h")
    with w.lock:  # two batches queued together; the second builds on the first
        w.apply([Change(0, 70, 0, "minecraft:dirt", "minecraft:stone")])
        t1 = w.log_batch("one", "h", "", [Change(0, 70, 0, "minecraft:dirt", "minecraft:stone")], {})
        w.apply(
            [
                Change(0, 70, 0, "minecraft:stone", "minecraft:glass"),
                Change(1, 70, 0, "minecraft:air", "minecraft:glass"),
            ]
        )
        t2 = w.log_batch(
            "two",
            "h",
            "",
            [
                Change(0, 70, 0, "minecraft:stone", "minecraft:glass"),
                Change(1, 70, 0, "minecraft:air", "minecraft:glass"),
            ],
            {},
        )

    def full(_point):
        raise OSError(28, "No space left on device")

    w.host_state.crash_hook = full
    for t in (t1, t2):
        with pytest.raises(McbError) as ei:
            w.wait_durable(t)
        assert ei.value.code == ErrorCode.UNAVAILABLE and "nothing was changed" in ei.value.message
    assert w.host_state.commits == 1  # "first" only: the failed group was one commit attempt
    w.host_state.crash_hook = None
    assert w.get_block(0, 70, 0) == "minecraft:dirt" and w.get_block(1, 70, 0) == "minecraft:air"
    assert w.host_state.get("one") is None and w.host_state.get("two") is None
    assert host.batch_apply(batch("three", [(0, 70, 0, "dirt", "stone")])).status == "applied"
    w.close()
    w2 = World(tmp_path / "w", registry)
    assert w2.get_block(0, 70, 0) == "minecraft:stone" and w2.get_block(1, 70, 0) == "minecraft:air"
    w2.close()


def batch(bid, entries, epoch=1, deps=()):
    return world_pb2.BatchApplyParams(
        batch_id=bid,
        world_epoch=epoch,
        entries=[world_pb2.BatchEntry(x=x, y=y, z=z, expected=e, desired=d) for x, y, z, e, d in entries],
        dependencies=[world_pb2.BatchEntry(x=x, y=y, z=z, expected=e) for x, y, z, e in deps],
    )


def test_pause_waits_for_the_batch_in_progress(world, monkeypatch):
    """When pause answers, nothing is being written: a batch admitted before it finishes first,
    and every batch after it answers paused."""
    import threading

    host = Host(world)
    writing, release = threading.Event(), threading.Event()
    real = World._write_states

    def held(self, items):
        writing.set()
        assert release.wait(10)
        return real(self, items)

    monkeypatch.setattr(World, "_write_states", held)
    result = {}
    t = threading.Thread(
        target=lambda: result.setdefault("r", host.batch_apply(batch("held", [(3, 64, 0, "air", "stone")])))
    )
    t.start()
    assert writing.wait(10)  # the batch is between its intent and its region write
    paused = threading.Event()
    p = threading.Thread(target=lambda: (host.pause(world_pb2.PauseParams(reason="test")), paused.set()))
    p.start()
    assert not paused.wait(0.3)  # pause waits for the batch in progress
    release.set()
    t.join(10)
    assert paused.wait(10)
    p.join(10)
    assert result["r"].status == "applied" and world.get_block(3, 64, 0) == "minecraft:stone"
    with pytest.raises(McbError) as ei:
        host.batch_apply(batch("next", [(4, 64, 0, "air", "stone")]))
    assert ei.value.code == ErrorCode.PAUSED


def test_a_pause_is_kept_across_a_reopen(tmp_path, registry):
    """The pause flag is in the batch log before pause answers; a host opened on the same world
    (a restart) starts paused with the reason, and a resume is kept the same way."""
    path = tmp_path / "w"
    w1 = World.create_flat(path, registry, pregen=(-16, -16, 15, 15))
    Host(w1).pause(world_pb2.PauseParams(reason="/ai stop by steve"))
    w1.close()
    w2 = World(path, registry)
    h2 = Host(w2)
    assert h2.health().paused is True and h2.world_info(world_pb2.Empty()).paused is True
    with pytest.raises(McbError) as ei:
        h2.batch_apply(batch("x", [(0, 64, 0, "air", "stone")]))
    assert ei.value.code == ErrorCode.PAUSED and "/ai stop by steve" in ei.value.message
    h2.resume(world_pb2.PauseParams())
    w2.close()
    w3 = World(path, registry)
    assert Host(w3).batch_apply(batch("x", [(0, 64, 0, "air", "stone")])).status == "applied"
    w3.close()


def test_batch_rules(world):
    host = Host(world)
    r = host.batch_apply(batch("a", [(0, 64, 0, "air", "stone"), (1, 64, 0, "air", "air")]))
    assert (r.status, r.written, r.already) == ("applied", 1, 1)
    again = host.batch_apply(batch("a", [(0, 64, 0, "air", "stone"), (1, 64, 0, "air", "air")]))
    assert again.replayed and again.written == 1
    with pytest.raises(McbError) as ei:
        host.batch_apply(batch("a", [(0, 64, 0, "air", "glass")]))
    assert ei.value.code == ErrorCode.INVALID_REQUEST
    c = host.batch_apply(batch("c", [(0, 64, 0, "air", "glass"), (2, 64, 0, "air", "glass")]))
    assert c.status == "conflict" and c.written == 0
    assert [(p.x, p.result, p.current) for p in c.problems] == [(0, "conflict", "minecraft:stone")]
    assert world.get_block(2, 64, 0) == "minecraft:air"  # all-or-nothing
    d = host.batch_apply(batch("d", [(2, 64, 0, "air", "glass")], deps=[(0, 64, 0, "minecraft:dirt")]))
    assert d.status == "conflict" and d.problems[0].result == "dependency_changed"
    with pytest.raises(McbError) as ei:
        host.batch_apply(batch("e", [(2, 64, 0, "air", "glass")], epoch=7))
    assert ei.value.code == ErrorCode.STALE_SNAPSHOT
    with pytest.raises(McbError) as ei:
        host.batch_apply(batch("f", [(2, 64, 0, "air", "not_a_block")]))
    assert ei.value.code == ErrorCode.UNSUPPORTED_BLOCK
    host.pause(world_pb2.PauseParams(reason="test"))
    with pytest.raises(McbError) as ei:
        host.batch_apply(batch("g", [(2, 64, 0, "air", "glass")]))
    assert ei.value.code == ErrorCode.PAUSED
    host.resume(world_pb2.PauseParams())
    assert host.batch_apply(batch("g", [(2, 64, 0, "air", "glass")])).status == "applied"
